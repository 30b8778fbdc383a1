/* record.c - `prof record`: runs a command with libprof.so preloaded and
 * the recording configuration in its environment, so that an unmodified
 * program (or one that never calls prof_start) writes a profile. prof
 * forwards the signals a job scheduler or a user sends it, waits, and
 * exits as the command did. The profile is written by the command's own
 * process (the preload constructor), so %p and %r in -o are expanded
 * there, and a crash of the command is handled by libprof's crash path. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"

#define EXIT_RECORD_FAILED 125 /* prof record itself failed, as env(1) */
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

static const char usage_text[] =
    "usage: prof record [-o RUN.prof] [--sample-rate R] [--schedule W:WU:A:R] [--cuda]\n"
    "                   [--] COMMAND [ARGS]\n"
    "\n"
    "Runs COMMAND with libprof preloaded, so that it writes a profile without being\n"
    "changed: steps and regions it records through libprof, host memory, and CUDA\n"
    "activity with --cuda.\n"
    "\n"
    "  -o, --output PATH     profile to write (default $PROF_OUTPUT, else run.prof);\n"
    "                        %p is replaced by the pid of the process that records,\n"
    "                        %r by its rank (PROF_RANK or RANK), %% by %\n"
    "      --sample-rate R   fraction of steps whose region and GPU events are kept\n"
    "      --schedule W:WU:A:R  step schedule: wait, warmup, active, repeat\n"
    "      --cuda            capture CUDA activity through CUPTI\n"
    "  -h, --help            show this help\n"
    "\n"
    "libprof.so is looked up in $PROF_LIBRARY, next to the prof binary, then in\n"
    "../libprof.so and ../lib/libprof.so.0 relative to it. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1\n"
    "and SIGUSR2 sent to prof are passed on to COMMAND. The exit status is\n"
    "COMMAND's, 128 + N when a signal N killed it; 125 when prof record failed,\n"
    "126 when COMMAND could not be run, 127 when it was not found, 2 for a usage\n"
    "error.\n";

typedef struct record_opts {
    const char *output;
    const char *sample_rate;
    const char *schedule;
    int cuda;
} record_opts;

/* ---- options ------------------------------------------------------------ */

static int valid_rate(const char *s)
{
    char *end;
    errno = 0;
    double r = strtod(s, &end);
    return !errno && end != s && !*end && r > 0 && r <= 1;
}

/* Four whole numbers separated by ':', as libprof's PROF_SCHEDULE. */
static int valid_schedule(const char *s)
{
    for (int i = 0; i < 4; i++) {
        size_t n = strspn(s, "0123456789");
        if (n == 0 || n > 9)
            return 0;
        s += n;
        if (i < 3 && *s++ != ':')
            return 0;
    }
    return *s == '\0';
}

/* Returns -1 when the options are good (optind at COMMAND), else the exit status. */
static int parse_options(int argc, char **argv, record_opts *o)
{
    enum { OPT_RATE = 256, OPT_SCHEDULE, OPT_CUDA };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "sample-rate", required_argument, NULL, OPT_RATE },
        { "schedule", required_argument, NULL, OPT_SCHEDULE },
        { "cuda", no_argument, NULL, OPT_CUDA },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case OPT_RATE: o->sample_rate = optarg; break;
        case OPT_SCHEDULE: o->schedule = optarg; break;
        case OPT_CUDA: o->cuda = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            return cmd_finish_stdout("record");
        case ':': return cmd_usage_error("record", "option '%s' needs a value", argv[optind - 1]);
        default: return cmd_usage_error("record", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (o->output && !*o->output)
        return cmd_usage_error("record", "empty output path");
    if (o->sample_rate && !valid_rate(o->sample_rate))
        return cmd_usage_error("record", "bad sample rate '%s': want 0 < R <= 1", o->sample_rate);
    if (o->schedule && !valid_schedule(o->schedule))
        return cmd_usage_error("record", "bad schedule '%s': want W:WU:A:R", o->schedule);
    if (optind >= argc)
        return cmd_usage_error("record", "no command to run");
    return -1;
}

/* ---- finding libprof.so ------------------------------------------------- */

static int readable_at(char *buf, size_t cap, const char *dir, const char *rel)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
        return 0;
    if (access(path, R_OK) != 0 || !realpath(path, buf))
        return 0;
    return strlen(buf) < cap;
}

/* An absolute path to libprof.so in buf (PATH_MAX bytes). */
static int find_library(char *buf)
{
    const char *env = getenv("PROF_LIBRARY");
    if (env && *env) {
        if (access(env, R_OK) != 0 || !realpath(env, buf)) {
            cmd_error("record", "cannot use PROF_LIBRARY '%s': %s", env, strerror(errno));
            return -1;
        }
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* the build tree; its sanitized prof one level down; installed */
            if (readable_at(buf, PATH_MAX, exe, "libprof.so") ||
                readable_at(buf, PATH_MAX, exe, "../libprof.so") ||
                readable_at(buf, PATH_MAX, exe, "../lib/libprof.so.0"))
                return 0;
        }
    }
    cmd_error("record", "cannot find 'libprof.so' next to prof or in ../lib: set PROF_LIBRARY");
    return -1;
}

/* ---- the child's environment ---------------------------------------------- */

/* LD_PRELOAD splits its list at spaces and colons. */
static int set_preload(const char *lib)
{
    if (strpbrk(lib, ": ")) {
        cmd_error("record", "cannot preload '%s': LD_PRELOAD cannot hold ':' or ' '", lib);
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(len);
    if (!v) {
        cmd_error("record", "out of memory");
        return -1;
    }
    snprintf(v, len, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    int e = setenv("LD_PRELOAD", v, 1);
    free(v);
    return e;
}

static int set_environment(const record_opts *o, const char *lib)
{
    const char *out = o->output ? o->output : getenv("PROF_OUTPUT");
    int e = set_preload(lib);
    if (!e)
        e = setenv("PROF_OUTPUT", out && *out ? out : "run.prof", 1);
    if (!e && o->sample_rate)
        e = setenv("PROF_SAMPLE_RATE", o->sample_rate, 1);
    if (!e && o->schedule)
        e = setenv("PROF_SCHEDULE", o->schedule, 1);
    if (!e && o->cuda)
        e = setenv("PROF_CUDA", "1", 1);
    if (!e && o->cuda) /* NVTX ranges reach CUPTI through libprof (cupti.c) */
        e = setenv("NVTX_INJECTION64_PATH", lib, 0);
    if (!e)
        e = unsetenv("PROF_AUTOSTART_PID"); /* the command is the one to record */
    if (e)
        cmd_error("record", "cannot set the environment: %s", strerror(errno));
    return e;
}

/* ---- running the command ---------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* In the child: the caller's signal mask back, then the command. An exec
 * failure goes back to the parent through the close-on-exec pipe. */
static void exec_child(char **argv, const sigset_t *mask, int err_fd)
{
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    int e = errno;
    ssize_t w = write(err_fd, &e, sizeof e);
    (void)w;
    _exit(EXIT_NOT_FOUND);
}

/* 0 when the command started; else the exec error (the child is reaped). */
static int exec_error(pid_t pid, int fd)
{
    int e = 0;
    ssize_t n;
    while ((n = read(fd, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(fd);
    if (n != (ssize_t)sizeof e)
        return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return e ? e : EIO;
}

/* Waits for the child, passing on the forwarded signals. A signal the
 * terminal generated (si_code SI_KERNEL) already went to the whole
 * foreground process group, the child included: it is not sent twice. */
static int wait_forwarding(pid_t pid, const sigset_t *set)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig < 0)
            continue; /* EINTR: a signal outside the set */
        if (sig == SIGCHLD) {
            int status;
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid)
                return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
            if (r < 0 && errno != EINTR) {
                cmd_error("record", "cannot wait for the command: %s", strerror(errno));
                return EXIT_RECORD_FAILED;
            }
            continue;
        }
        if (si.si_code != SI_KERNEL)
            kill(pid, sig);
    }
}

static int run_command(char **argv)
{
    sigset_t set, old;
    int pipefd[2];
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        cmd_error("record", "cannot create a pipe: %s", strerror(errno));
        return EXIT_RECORD_FAILED;
    }
    fflush(NULL);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t pid = fork();
    if (pid == 0)
        exec_child(argv, &old, pipefd[1]);
    close(pipefd[1]);
    int status;
    if (pid < 0) {
        cmd_error("record", "cannot start '%s': %s", argv[0], strerror(errno));
        close(pipefd[0]);
        status = EXIT_RECORD_FAILED;
    } else {
        int e = exec_error(pid, pipefd[0]);
        if (e) {
            cmd_error("record", "cannot run '%s': %s", argv[0], strerror(e));
            status = e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
        } else {
            status = wait_forwarding(pid, &set);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return status;
}

int cmd_record(int argc, char **argv)
{
    record_opts o = { 0 };
    char lib[PATH_MAX];
    int st = parse_options(argc, argv, &o);
    if (st >= 0)
        return st;
    if (find_library(lib) != 0 || set_environment(&o, lib) != 0)
        return EXIT_RECORD_FAILED;
    return run_command(argv + optind);
}
