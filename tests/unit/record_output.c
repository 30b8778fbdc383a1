/* record_output.c - one output, several recorders: a process that finds
 * the output held by another recorder (a parent still recording, other
 * processes sharing PROF_OUTPUT) writes a whole profile under a name of its
 * own and says so once; a child of the recording process does so even when
 * the name is free; a name is free again after prof_stop; and a link that
 * another user planted in a sticky directory is not followed. Real
 * processes (fork), real files. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <sys/wait.h>

#include "record/runtime.h"
#include "record_util.h"

#define SHARERS 4
#define SHARER_REGIONS 20000

static void setup(void)
{
    clean_env();
}

static void teardown(void)
{
    prof_stop();
    prof_set_message_handler(NULL, NULL);
    test_dir_remove();
}

TestSuite(record_output, .init = setup, .fini = teardown, .timeout = 60);

/* The name a recorder in process pid takes beside path. */
static char *own_name(const char *path, pid_t pid)
{
    char *alt = rt_output_alt_name(path, (long)pid, 0);
    cr_assert_not_null(alt);
    return alt;
}

static void record_regions(const char *name, int n)
{
    for (int i = 0; i < n; i++) {
        prof_region_begin(name);
        prof_region_end();
    }
}

/* A whole profile at path, with n regions named name and nothing else. */
static void expect_profile(const char *path, const char *name, size_t n)
{
    readback rb;
    readback_load(path, &rb);
    cr_assert(rb.st.clean, "%s: %s", path, rb.st.detail);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, name), n, "%s: %zu regions '%s'", path,
                 rb_count(&rb, PROF_EV_REGION, name), name);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), n, "%s: regions of others", path);
    readback_free(&rb);
}

static int wait_ok(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

Test(record_output, own_names_go_before_the_extension)
{
    static const struct {
        const char *path, *want;
        unsigned k;
    } cases[] = {
        { "run.prof", "run.42.prof", 0 },   { "d/run.prof", "d/run.42.prof", 0 },
        { "out", "out.42", 0 },             { "a.b/out", "a.b/out.42", 0 },
        { ".hidden", ".hidden.42", 0 },     { "d/x.tar.prof", "d/x.tar.42.prof", 0 },
        { "run.prof", "run.42-3.prof", 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *alt = rt_output_alt_name(cases[i].path, 42, cases[i].k);
        cr_assert_str_eq(alt, cases[i].want);
        free(alt);
    }
}

/* A forked child that starts while its parent records: the parent's
 * profile is untouched, the child's is its own, both whole. */
Test(record_output, a_recorder_beside_a_recording_one_gets_its_own_name)
{
    prof_config c = { 0 };
    c.output = test_path("shared.prof");
    cr_assert_eq(prof_start(&c), 0);
    record_regions("parent", 100);
    prof_flush();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int ok = prof_start(&c) == 0;
        record_regions("child", 50);
        _exit(ok && prof_stop() == 0 ? 0 : 1);
    }
    cr_assert(wait_ok(pid));
    record_regions("parent", 100);
    cr_assert_eq(prof_stop(), 0);
    expect_profile(c.output, "parent", 200);
    char *alt = own_name(c.output, pid);
    expect_profile(alt, "child", 50);
    free(alt);
}

/* mpirun without %r: processes that share PROF_OUTPUT and run together
 * each write a whole profile, one of them under the name itself. Each
 * stops only once every one has started, as ranks of one job run side by
 * side: on a busy machine one could otherwise finish before another was
 * scheduled at all, and the name would be free again. */
Test(record_output, processes_sharing_one_output_each_write_a_whole_profile)
{
    const char *path = test_path("ranks.prof");
    setenv("PROF_OUTPUT", path, 1);
    int go[2], started[2], finish[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(started), 0);
    cr_assert_eq(pipe(finish), 0);
    pid_t pids[SHARERS];
    for (int i = 0; i < SHARERS; i++) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0);
        if (pids[i] == 0) {
            char b = 0, name[16];
            close(go[1]);
            close(started[0]);
            close(finish[1]);
            if (read(go[0], &b, 1) != 0) /* all at once: when the parent closes it */
                _exit(2);
            snprintf(name, sizeof name, "rank%d", i);
            int ok = prof_start(NULL) == 0;
            record_regions(name, SHARER_REGIONS);
            if (write(started[1], &b, 1) != 1 || read(finish[0], &b, 1) != 0)
                _exit(2);
            _exit(ok && prof_stop() == 0 ? 0 : 1);
        }
    }
    close(go[0]);
    close(started[1]);
    close(finish[0]);
    close(go[1]);
    for (int i = 0; i < SHARERS; i++) {
        char b;
        cr_assert_eq(read(started[0], &b, 1), 1, "a sharer did not start");
    }
    close(started[0]);
    close(finish[1]);
    for (int i = 0; i < SHARERS; i++)
        cr_assert(wait_ok(pids[i]), "sharer %d failed", i);
    int seen[SHARERS] = { 0 }, files = 0;
    for (int i = 0; i <= SHARERS; i++) {
        char *p = i < SHARERS ? own_name(path, pids[i]) : strdup(path);
        if (file_exists(p)) {
            readback rb;
            readback_load(p, &rb);
            cr_assert(rb.st.clean, "%s: %s", p, rb.st.detail);
            int who = -1;
            for (int k = 0; k < SHARERS; k++) {
                char name[16];
                snprintf(name, sizeof name, "rank%d", k);
                if (rb_count(&rb, PROF_EV_REGION, name)) {
                    cr_assert_eq(who, -1, "%s holds two ranks", p);
                    who = k;
                    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, name), SHARER_REGIONS);
                }
            }
            cr_assert_geq(who, 0, "%s holds no rank", p);
            seen[who]++;
            files++;
            readback_free(&rb);
        }
        free(p);
    }
    cr_assert_eq(files, SHARERS);
    for (int k = 0; k < SHARERS; k++)
        cr_assert_eq(seen[k], 1, "rank %d in %d files", k, seen[k]);
}

/* Under a recording parent (PROF_AUTOSTART_PID names it), a child's
 * prof_start(NULL) never takes PROF_OUTPUT's name, even once the parent
 * has finished with it; a name the program gives is its own to use. */
Test(record_output, a_child_of_the_recorded_process_keeps_off_its_name)
{
    const char *path = test_path("parent.prof");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("the parent's profile", f);
    fclose(f);
    setenv("PROF_OUTPUT", path, 1);
    setenv("PROF_AUTOSTART_PID", "1", 1);
    cr_assert_eq(prof_start(NULL), 0);
    record_regions("child", 10);
    cr_assert_eq(prof_stop(), 0);
    char buf[64] = "";
    f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "the parent's profile");
    char *alt = own_name(path, getpid());
    expect_profile(alt, "child", 10);
    free(alt);
    prof_config c = { 0 };
    c.output = path;
    cr_assert_eq(prof_start(&c), 0);
    record_regions("given", 5);
    cr_assert_eq(prof_stop(), 0);
    expect_profile(path, "given", 5);
}

/* The claim lasts as long as the recording: after prof_stop the next
 * recorder, here another process, takes the name itself. */
Test(record_output, the_name_is_free_again_after_stop)
{
    prof_config c = { 0 };
    c.output = test_path("again.prof");
    cr_assert_eq(prof_start(&c), 0);
    record_regions("first", 10);
    cr_assert_eq(prof_stop(), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int ok = prof_start(&c) == 0;
        record_regions("second", 20);
        _exit(ok && prof_stop() == 0 ? 0 : 1);
    }
    cr_assert(wait_ok(pid));
    expect_profile(c.output, "second", 20);
    char *alt = own_name(c.output, pid);
    cr_assert_not(file_exists(alt));
    free(alt);
}

typedef struct said {
    int n;
    prof_msg_level level;
    char msg[512];
} said;

static void keep_message(prof_msg_level level, const char *msg, void *arg)
{
    said *s = arg;
    s->n++;
    s->level = level;
    snprintf(s->msg, sizeof s->msg, "%s", msg);
}

/* The one warning: which file is written instead of which. The child is
 * forked before the parent records and starts once it does (a pipe), so
 * that it runs no code forked from a process with threads: this test is
 * about the name, a_recorder_beside_a_recording_one_gets_its_own_name
 * about the fork. */
Test(record_output, the_other_name_is_said_once)
{
    said s = { 0 };
    prof_config c = { 0 };
    c.output = test_path("said.prof");
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 1) /* the parent records */
            _exit(2);
        prof_set_message_handler(keep_message, &s);
        int ok = prof_start(&c) == 0 && prof_stop() == 0;
        char *alt = rt_output_alt_name(c.output, (long)getpid(), 0);
        char want[600];
        snprintf(want, sizeof want, "recording into '%s': '%s' is another recorder's",
                 alt ? alt : "", c.output);
        _exit(ok && s.n == 1 && s.level == PROF_MSG_WARNING && strcmp(s.msg, want) == 0 ? 0 : 1);
    }
    close(go[0]);
    int started = prof_start(&c);
    cr_assert_eq(write(go[1], "g", 1), 1);
    close(go[1]);
    cr_assert(wait_ok(pid), "the child got no such warning");
    cr_assert_eq(started, 0);
    cr_assert_eq(prof_stop(), 0);
}

/* Another user's link in a sticky world-writable directory is not
 * followed: prof_start says -ELOOP and what it points to is kept. */
Test(record_output, another_users_link_in_a_sticky_directory_is_refused)
{
    struct passwd *nobody = getpwnam("nobody");
    if (geteuid() != 0 || !nobody)
        cr_skip_test("needs root and a user nobody to give a link to another user");
    const char *dir = test_path("sticky");
    char link[300], victim[300], buf[16] = "";
    cr_assert_eq(mkdir(dir, 0777), 0);
    cr_assert_eq(chmod(dir, 01777), 0);
    snprintf(victim, sizeof victim, "%s", test_path("victim"));
    snprintf(link, sizeof link, "%s/run.prof", dir);
    FILE *f = fopen(victim, "w");
    cr_assert_not_null(f);
    fputs("keep", f);
    fclose(f);
    cr_assert_eq(symlink(victim, link), 0);
    cr_assert_eq(lchown(link, nobody->pw_uid, nobody->pw_gid), 0);
    prof_config c = { 0 };
    c.output = link;
    cr_assert_eq(prof_start(&c), -ELOOP);
    f = fopen(victim, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "keep");
    unlink(link);
    rmdir(dir);
}
