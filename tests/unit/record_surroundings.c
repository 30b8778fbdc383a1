/* record_surroundings.c - the recorder in hostile surroundings: a program
 * that closed its standard descriptors before recording (libprof's files
 * must never take 0, 1 or 2, or the program's own output would land in
 * the profile), and outputs that are not regular files (a FIFO with no
 * reader or with one that never reads, a socket, a device), which must be
 * refused at once instead of blocking the program. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
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

/* The timeout is only a safety net: a blocking open would hang forever. */
TestSuite(record_surroundings, .init = setup, .fini = teardown, .timeout = 60);

/* ---- closed standard descriptors ----------------------------------------- */

#define FD_MASK(fd) (1u << (fd))

/* In a child: closes the descriptors of mask, records, writes to each
 * closed descriptor as the program would, stops. The exit status says
 * what went wrong: 0 all good, 20 + fd when libprof holds a standard
 * descriptor. */
static void closed_child(unsigned mask, const char *path)
{
    static const char text[] = "the program's own output\n";
    for (int fd = 0; fd < 3; fd++)
        if (mask & FD_MASK(fd))
            close(fd);
    prof_config c = { 0 };
    c.output = path;
    c.memory_interval_ms = 1; /* the sampler's descriptor is open too */
    if (prof_start(&c) != 0)
        _exit(10);
    for (int fd = 0; fd < 3; fd++)
        if ((mask & FD_MASK(fd)) && fcntl(fd, F_GETFD) != -1)
            _exit(20 + fd);
    prof_region_begin("while-closed");
    prof_region_end();
    prof_step();
    for (int fd = 0; fd < 3; fd++) {
        if (mask & FD_MASK(fd)) {
            ssize_t w = write(fd, text, sizeof text - 1);
            (void)w; /* EBADF, as without libprof */
        }
    }
    _exit(prof_stop() == 0 ? 0 : 11);
}

static void record_with_closed(unsigned mask, const char *name)
{
    const char *path = test_path(name);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        closed_child(mask, path);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "status %x", st);
    cr_assert_eq(WEXITSTATUS(st), 0, "child exit %d (20 + fd: libprof holds fd)",
                 WEXITSTATUS(st));
    readback rb;
    readback_load(path, &rb);
    cr_assert(rb.st.clean, "%s", rb.st.detail);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "while-closed"), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 2);
    readback_free(&rb);
}

Test(record_surroundings, closed_stdout_stays_the_programs)
{
    record_with_closed(FD_MASK(1), "stdout.prof");
}

Test(record_surroundings, closed_stdin_stdout_stderr_stay_the_programs)
{
    record_with_closed(FD_MASK(0) | FD_MASK(1) | FD_MASK(2), "all.prof");
}

Test(record_surroundings, closed_stderr_stays_the_programs)
{
    record_with_closed(FD_MASK(2), "stderr.prof");
}

/* ---- outputs that are not regular files ----------------------------------- */

static void expect_refused(const char *path)
{
    prof_config c = { 0 };
    c.output = path;
    int e = prof_start(&c);
    cr_assert_eq(e, -ENOTSUP, "prof_start('%s'): %d (%s)", path, e, strerror(-e));
    prof_region_begin("x"); /* not recording: nothing happens */
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
}

Test(record_surroundings, fifo_without_reader_is_refused_at_once)
{
    const char *path = test_path("noreader.fifo");
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_refused(path);
    setenv("PROF_OUTPUT", path, 1); /* the same through the environment */
    cr_assert_eq(prof_start(NULL), -ENOTSUP);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO is left as it was");
}

Test(record_surroundings, fifo_with_idle_reader_is_refused)
{
    const char *path = test_path("idle.fifo");
    cr_assert_eq(mkfifo(path, 0600), 0);
    int rd = open(path, O_RDONLY | O_NONBLOCK); /* a reader that never reads */
    cr_assert_geq(rd, 0);
    expect_refused(path);
    char buf[16];
    ssize_t n = read(rd, buf, sizeof buf);
    cr_assert(n == 0 || (n < 0 && errno == EAGAIN), "nothing was written (%zd)", n);
    close(rd);
}

Test(record_surroundings, socket_and_device_are_refused)
{
    const char *path = test_path("sock");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(s, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    expect_refused(path);
    close(s);
    expect_refused("/dev/null");
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));
}

/* A regular file behind a symbolic link is still a regular file. */
Test(record_surroundings, symlink_to_regular_file_records)
{
    const char *real = test_path("real.prof");
    const char *link = test_path("link.prof");
    FILE *f = fopen(real, "w");
    cr_assert_not_null(f);
    fputs("old contents, longer than nothing", f);
    fclose(f);
    cr_assert_eq(symlink(real, link), 0);
    prof_config c = { 0 };
    c.output = link;
    cr_assert_eq(prof_start(&c), 0);
    prof_region_begin("linked");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(real, &rb);
    cr_assert(rb.st.clean, "%s: the old contents are gone", rb.st.detail);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "linked"), 1);
    readback_free(&rb);
}
