/* record_report.c - libprof's messages (report.c through prof.h's
 * prof_set_message_handler): a write failure reaches the program's handler
 * as one error and nothing reaches stderr; without a handler (or after
 * setting it back to NULL) the error is one line on stderr; prof_start
 * prints nothing, even when CUDA capture is asked for and cannot be had,
 * which is one warning to the handler, once per process. Children change
 * process-wide things (stderr, RLIMIT_FSIZE) and leave what they saw in
 * files the test reads. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "record_util.h"

static void setup(void)
{
    clean_env();
    (void)test_path(""); /* the directory, made before any child forks */
}

static void teardown(void)
{
    prof_set_message_handler(NULL, NULL);
    prof_stop();
    test_dir_remove();
}

TestSuite(record_report, .init = setup, .fini = teardown, .timeout = 60);

/* What the handler received, one "LEVEL MESSAGE" line each. */
typedef struct heard {
    char text[2048];
    int calls;
} heard;

static void keep(prof_msg_level level, const char *msg, void *arg)
{
    heard *h = arg;
    size_t used = strlen(h->text);
    snprintf(h->text + used, sizeof h->text - used, "%d %s\n", (int)level, msg);
    h->calls++;
}

static void slurp(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        _exit(20);
}

static void stderr_to(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0)
        _exit(21);
    close(fd);
}

/* Records into path under a 256 KiB file size limit until writing fails.
 * Exits 0 when prof_stop returned -EFBIG. */
static void run_into_fsize(const char *path)
{
    struct rlimit rl = { 256 << 10, 256 << 10 };
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        _exit(22);
    prof_config c = { 0 };
    c.output = path;
    c.flush_interval_ms = 20;
    if (prof_start(&c) != 0)
        _exit(23);
    uint64_t x = 88172645463325252u; /* random doubles: they do not compress */
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        prof_counter("noise", v);
    }
    if (prof_stop() != -EFBIG)
        _exit(24);
}

typedef void (*child_fn)(void);

static void in_child(child_fn fn)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %x", st);
}

static void handled_failure(void)
{
    static heard h;
    stderr_to(test_path("stderr.txt"));
    prof_set_message_handler(keep, &h);
    run_into_fsize(test_path("fsize.prof"));
    spit(test_path("heard.txt"), h.text);
}

Test(record_report, a_failed_write_is_one_error_to_the_handler_and_none_on_stderr)
{
    in_child(handled_failure);
    char text[2048], want[1024];
    slurp(test_path("stderr.txt"), text, sizeof text);
    cr_assert_str_eq(text, "");
    slurp(test_path("heard.txt"), text, sizeof text);
    snprintf(want, sizeof want, "%d recording stopped: cannot write '%s': %s\n", PROF_MSG_ERROR,
             test_path("fsize.prof"), strerror(EFBIG));
    cr_assert_str_eq(text, want);
}

static void unhandled_failure(void)
{
    static heard h;
    stderr_to(test_path("stderr.txt"));
    prof_set_message_handler(keep, &h);
    prof_set_message_handler(NULL, NULL);
    run_into_fsize(test_path("fsize.prof"));
    spit(test_path("heard.txt"), h.text);
}

Test(record_report, a_null_handler_puts_the_error_back_on_stderr)
{
    in_child(unhandled_failure);
    char text[2048], want[1024];
    slurp(test_path("heard.txt"), text, sizeof text);
    cr_assert_str_eq(text, "");
    slurp(test_path("stderr.txt"), text, sizeof text);
    snprintf(want, sizeof want, "prof: recording stopped: cannot write '%s': %s\n",
             test_path("fsize.prof"), strerror(EFBIG));
    cr_assert_str_eq(text, want);
}

static void quiet_starts(void)
{
    stderr_to(test_path("stderr.txt"));
    prof_config c = { 0 };
    c.output = test_path("cuda.prof");
    c.cuda = 1; /* may be unavailable: recording goes on without it */
    if (prof_start(&c) != 0 || prof_stop() != 0)
        _exit(30);
    setenv("PROF_BUFFER_MB", "abc", 1);
    if (prof_start(&c) != -EINVAL)
        _exit(31);
    unsetenv("PROF_BUFFER_MB");
    c.output = test_path("no-such-dir/x.prof");
    if (prof_start(&c) != -ENOENT)
        _exit(32);
}

Test(record_report, prof_start_prints_nothing)
{
    in_child(quiet_starts);
    char text[2048];
    slurp(test_path("stderr.txt"), text, sizeof text);
    cr_assert_str_eq(text, "");
}

static int cuda_driver_present(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

Test(record_report, cuda_off_is_one_warning_per_process)
{
    if (cuda_driver_present())
        cr_skip_test("a CUDA driver is here: capture may well be on");
    static heard h;
    prof_set_message_handler(keep, &h);
    prof_config c = { 0 };
    c.output = test_path("cuda.prof");
    c.cuda = 1;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(prof_start(&c), 0);
        cr_assert_eq(prof_stop(), 0);
    }
    cr_assert_eq(h.calls, 1, "%s", h.text);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%d CUDA capture off: ", PROF_MSG_WARNING);
    cr_assert(strncmp(h.text, prefix, strlen(prefix)) == 0, "%s", h.text);
    readback rb;
    readback_load(c.output, &rb);
    cr_assert_not_null(strstr(rb.meta, "\"active\":false"), "%s", rb.meta);
    readback_free(&rb);
}
