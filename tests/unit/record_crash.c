/* record_crash.c - the recorder in processes that die or fork, end to end:
 * a child process records and then is killed (SIGKILL once the periodic
 * flush has written its events, SIGSEGV, SIGTERM), runs into RLIMIT_FSIZE,
 * or forks; the test reads what it left behind with the public reader.
 * Nothing here waits on a clock: children say when they are ready, and
 * the parent watches the file for what it needs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "record_util.h"

static void setup(void)
{
    clean_env();
}

static void teardown(void)
{
    prof_stop();
    test_dir_remove();
}

TestSuite(record_crash, .init = setup, .fini = teardown, .timeout = 60);

typedef struct child_arg {
    const char *path;
    int ready_fd;       /* the child writes one byte here when ready */
    unsigned flush_ms;
} child_arg;

typedef void (*child_fn)(child_arg *a);

/* Runs fn in a forked child; the child never returns into Criterion. */
static pid_t spawn(child_fn fn, child_arg *a, int *ready_read)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(p[0]);
        a->ready_fd = p[1];
        fn(a);
        _exit(0);
    }
    close(p[1]);
    *ready_read = p[0];
    return pid;
}

static void wait_ready(int fd)
{
    char c;
    cr_assert_eq(read(fd, &c, 1), 1, "the child did not get ready");
    close(fd);
}

static void tell_ready(child_arg *a)
{
    char c = 'r';
    if (write(a->ready_fd, &c, 1) != 1)
        _exit(5);
}

static int wait_child(pid_t pid)
{
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

static void child_start(child_arg *a)
{
    prof_config c = { 0 };
    c.output = a->path;
    c.flush_interval_ms = a->flush_ms;
    if (prof_start(&c) != 0)
        _exit(4);
}

static void record_regions(const char *name, int n)
{
    for (int i = 0; i < n; i++) {
        prof_region_begin(name);
        prof_region_end();
    }
}

/* The file must read to its end without error, as a crashed run. */
static void check_crashed(const char *path, const char *name, size_t want)
{
    readback rb;
    readback_load(path, &rb);
    cr_assert(!rb.st.clean, "a killed run has no footer");
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, name), want, "%zu %s regions",
                 rb_count(&rb, PROF_EV_REGION, name), name);
    readback_free(&rb);
}

static void killed_child(child_arg *a)
{
    child_start(a);
    record_regions("before-kill", 1000);
    tell_ready(a);
    for (;;) /* the writer keeps writing while the parent reads */
        record_regions("spinning", 100), usleep(1000);
}

/* Regions called name that path holds so far, read while another process
 * appends to it: reading stops at a block still being written. */
static size_t regions_so_far(const char *path, const char *name)
{
    prof_reader *r;
    prof_error err;
    prof_event ev;
    size_t n = 0;
    if (prof_reader_open(path, &r, &err) != PROF_OK)
        return 0;
    while (prof_reader_next(r, &ev) == 1)
        n += ev.type == PROF_EV_REGION && strcmp(ev.name, name) == 0;
    prof_reader_close(r);
    return n;
}

/* Waits until the periodic flush alone has put want regions called name
 * into path; the deadline is only a safety net for a stuck writer. */
static void wait_written(const char *path, const char *name, size_t want)
{
    for (int i = 0; regions_so_far(path, name) < want; i++) {
        cr_assert_lt(i, 30000, "the periodic flush never wrote %zu %s regions", want, name);
        usleep(2000);
    }
}

/* What the periodic flush wrote survives a SIGKILL, which no handler sees:
 * a crash loses at most the last flush interval. */
Test(record_crash, sigkill_loses_at_most_a_flush_interval)
{
    child_arg a = { test_path("kill.prof"), -1, 50 };
    int rd;
    pid_t pid = spawn(killed_child, &a, &rd);
    wait_ready(rd);
    wait_written(a.path, "before-kill", 1000);
    kill(pid, SIGKILL);
    int st = wait_child(pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    check_crashed(a.path, "before-kill", 1000);
}

static void segv_child(child_arg *a)
{
    /* the default action (sanitizers install their own handler) */
    signal(SIGSEGV, SIG_DFL);
    child_start(a);
    record_regions("pre-crash", 500);
    prof_region_begin("open-at-crash");
    /* a real fault, on a page that cannot be written */
    volatile int *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bad == MAP_FAILED)
        _exit(16);
    *bad = 1;
    _exit(6);
}

Test(record_crash, sigsegv_flushes_and_dies_of_it)
{
    child_arg a = { test_path("segv.prof"), -1, 60000 };
    int rd;
    pid_t pid = spawn(segv_child, &a, &rd);
    close(rd);
    int st = wait_child(pid);
    cr_assert(WIFSIGNALED(st), "status %x", st);
    cr_assert_eq(WTERMSIG(st), SIGSEGV);
    check_crashed(a.path, "pre-crash", 500);
}

static void term_child(child_arg *a)
{
    child_start(a);
    prof_thread_name("terminated");
    record_regions("pre-term", 700);
    prof_step();
    tell_ready(a);
    for (;;)
        pause();
}

Test(record_crash, sigterm_flushes_and_dies_of_it)
{
    child_arg a = { test_path("term.prof"), -1, 60000 };
    int rd;
    pid_t pid = spawn(term_child, &a, &rd);
    wait_ready(rd);
    kill(pid, SIGTERM);
    int st = wait_child(pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %x", st);
    check_crashed(a.path, "pre-term", 700);
    readback rb;
    readback_load(a.path, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_THREAD, "terminated"), 1);
    readback_free(&rb);
}

static void own_handler(int sig)
{
    (void)sig;
    _exit(42);
}

static void chained_child(child_arg *a)
{
    signal(SIGSEGV, own_handler);
    child_start(a);
    record_regions("before-own-handler", 300);
    raise(SIGSEGV);
    _exit(7);
}

Test(record_crash, program_handler_still_runs)
{
    child_arg a = { test_path("chain.prof"), -1, 60000 };
    int rd;
    pid_t pid = spawn(chained_child, &a, &rd);
    close(rd);
    int st = wait_child(pid);
    cr_assert(WIFEXITED(st), "status %x", st);
    cr_assert_eq(WEXITSTATUS(st), 42, "the program's own handler ran");
    check_crashed(a.path, "before-own-handler", 300);
}

static void fsize_child(child_arg *a)
{
    int err = open(test_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || dup2(err, 2) < 0)
        _exit(8);
    struct rlimit rl = { 256 << 10, 256 << 10 };
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        _exit(9);
    child_start(a);
    /* random doubles do not compress: about 9 bytes a sample on disk */
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        prof_counter("noise", v);
    }
    record_regions("after-failure", 10); /* ignored: recording stopped */
    int rc = prof_stop();
    _exit(rc == -EFBIG ? 0 : 10);
}

Test(record_crash, file_size_limit_stops_recording_not_the_program)
{
    child_arg a = { test_path("fsize.prof"), -1, 20 };
    int rd;
    pid_t pid = spawn(fsize_child, &a, &rd);
    close(rd);
    int st = wait_child(pid);
    cr_assert(WIFEXITED(st), "the program survived (status %x)", st);
    cr_assert_eq(WEXITSTATUS(st), 0, "prof_stop returned -EFBIG (exit %d)", WEXITSTATUS(st));
    char text[1024] = "";
    FILE *f = fopen(test_path("stderr.txt"), "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char want[512];
    snprintf(want, sizeof want, "prof: recording stopped: cannot write '%s': %s\n", a.path,
             strerror(EFBIG));
    cr_assert_str_eq(text, want);
    readback rb;
    readback_load(a.path, &rb);
    cr_assert(!rb.st.clean);
    cr_assert_gt(rb_count(&rb, PROF_EV_COUNTER, "noise"), 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "after-failure"), 0);
    readback_free(&rb);
}

static void forked_child(child_arg *a)
{
    /* recording is off here, and the parent's file is out of reach */
    record_regions("child-event", 100);
    prof_step();
    prof_flush();
    if (prof_stop() != 0)
        _exit(11);
    /* the child may record on its own */
    prof_config c = { 0 };
    c.output = a->path;
    if (prof_start(&c) != 0)
        _exit(12);
    record_regions("child-own", 5);
    _exit(prof_stop() == 0 ? 0 : 13);
}

/* AddressSanitizer's allocator (gcc 12, clang before 18) is not locked
 * across fork: a child forked while the writer thread is inside malloc can
 * wait forever on the allocator's lock, whatever the program does. Under
 * it, the writer is left idle at the fork; elsewhere it flushes every 10 ms
 * while the child is forked. */
#if defined(__SANITIZE_ADDRESS__)
#define FORK_FLUSH_MS 60000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_FLUSH_MS 60000
#endif
#endif
#ifndef FORK_FLUSH_MS
#define FORK_FLUSH_MS 10
#endif

Test(record_crash, fork_child_never_touches_the_parent_file)
{
    prof_config c = { 0 };
    c.output = test_path("parent.prof");
    c.flush_interval_ms = FORK_FLUSH_MS;
    cr_assert_eq(prof_start(&c), 0);
    record_regions("parent-before", 50);
    if (FORK_FLUSH_MS > 1000)
        prof_flush();
    child_arg a = { test_path("child.prof"), -1, 0 };
    int rd;
    pid_t pid = spawn(forked_child, &a, &rd);
    close(rd);
    int st = wait_child(pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %x", st);
    record_regions("parent-after", 50);
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    cr_assert(rb.st.clean);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "parent-before"), 50);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "parent-after"), 50);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "child-event"), 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "child-own"), 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 1);
    readback_free(&rb);
    readback_load(a.path, &rb);
    cr_assert(rb.st.clean);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "child-own"), 5);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "parent-before"), 0);
    readback_free(&rb);
}

static void disabled_child(child_arg *a)
{
    signal(SIGSEGV, SIG_DFL);
    setenv("PROF_OUTPUT", a->path, 1);
    setenv("PROF_ENABLE", "0", 1);
    if (prof_start(NULL) != -ECANCELED)
        _exit(14);
    record_regions("disabled", 10);
    raise(SIGSEGV);
    _exit(15);
}

Test(record_crash, disabled_mode_leaves_no_file_and_no_handlers)
{
    child_arg a = { test_path("disabled.prof"), -1, 0 };
    int rd;
    pid_t pid = spawn(disabled_child, &a, &rd);
    close(rd);
    int st = wait_child(pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %x", st);
    cr_assert(!file_exists(a.path));
}
