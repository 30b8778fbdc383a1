/* record.c - `prof record`: runs a command with libprof.so preloaded and
 * the recording configuration in its environment, so that an unmodified
 * program (or one that never calls prof_start) writes a profile; a Python
 * program also gets the binding loaded at interpreter start (a
 * sitecustomize on PYTHONPATH), which records its PyTorch steps, modules,
 * data loading, syncs and memory. Before the command runs, prof checks
 * what it can (the configuration libprof will read, the output's
 * directory) so that a job does not run for hours to write nothing; after
 * it, prof says which profiles were written, or that none was. prof
 * forwards the signals a job scheduler or a user sends it, waits, and
 * exits as the command did. The profile is written by the command's own
 * process (the preload constructor, or the binding in each rank of a
 * launcher), so %p and %r in -o are expanded there, and a crash of the
 * command is handled by libprof's crash path. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "model/summary.h"
#include "record/config.h"
#include "record/runtime.h"
#include "util/planted.h"

#define EXIT_RECORD_FAILED 125 /* prof record itself failed, as env(1) */
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

static const char usage_text[] =
    "usage: prof record [-o RUN.prof] [--sample-rate R] [--schedule W:WU:A:R] [--cuda]\n"
    "                   [--no-python | --python-hooks LIST] [--] COMMAND [ARGS]\n"
    "\n"
    "Runs COMMAND with libprof preloaded, so that it writes a profile without being\n"
    "changed: steps and regions it records through libprof, host memory, and CUDA\n"
    "activity with --cuda. A Python program also gets the prof binding loaded at\n"
    "start, which records PyTorch steps, modules, data loading, syncs and memory.\n"
    "\n"
    "  -o, --output PATH     profile to write (default $PROF_OUTPUT, else run.prof);\n"
    "                        %p is replaced by the pid of the process that records,\n"
    "                        %r by its rank (PROF_RANK or RANK), %% by %\n"
    "      --sample-rate R   fraction of steps whose region and GPU events are kept\n"
    "      --schedule W:WU:A:R  step schedule: wait, warmup, active, repeat\n"
    "      --cuda            capture CUDA activity through CUPTI\n"
    "      --no-python       do not load the Python binding (PROF_PYTHON=0)\n"
    "      --python-hooks LIST  what the binding records, a comma list of steps,\n"
    "                        modules, data, syncs, memory, or all (the default);\n"
    "                        modules=N also records N levels of submodules (a few\n"
    "                        microseconds per module per step)\n"
    "  -h, --help            show this help\n"
    "\n"
    "The binding's directory goes first on PYTHONPATH (kept after it) for every\n"
    "command, which programs other than Python ignore. libprof.so is looked up in\n"
    "$PROF_LIBRARY, next to the prof binary, then in ../libprof.so and\n"
    "../lib/libprof.so.0 relative to it. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1\n"
    "and SIGUSR2 sent to prof are passed on to COMMAND. At the end prof says on\n"
    "standard error which profiles were written. The exit status is COMMAND's,\n"
    "128 + N when a signal N killed it; 2 for a usage error or a bad PROF_*\n"
    "variable; 125 when prof record failed: the output cannot be written (COMMAND\n"
    "is not run), or COMMAND succeeded but wrote no profile; 126 when COMMAND\n"
    "could not be run, 127 when it was not found.\n";

typedef struct record_opts {
    const char *output;
    const char *sample_rate;
    const char *schedule;
    const char *python_hooks;
    int cuda;
    int no_python;
} record_opts;

/* ---- options ------------------------------------------------------------ */

/* What the binding can record (PROF_PYTHON_HOOKS), as it names them;
 * "modules=N" also records N levels of submodules below each top-level
 * module, N up to the deepest regions libprof records. */
static const char *const hook_names[] = { "steps", "modules", "data", "syncs", "memory", "all",
                                          NULL };
#define MODULES_DEPTH "modules="

enum { HOOKS_OK, HOOKS_UNKNOWN, HOOKS_BAD_DEPTH };

/* Whether s, n bytes long, is a whole number from 0 to RT_MAX_DEPTH
 * (digits only: no sign, no space). */
static int valid_depth(const char *s, size_t n)
{
    unsigned v = 0;
    if (n == 0 || n > 3)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    return v <= RT_MAX_DEPTH;
}

/* A comma list of hook_names and modules=N items: HOOKS_OK, else what is
 * wrong with the first bad item, which *bad and *bad_len point to (an
 * empty item is not one). */
static int check_hooks(const char *list, const char **bad, int *bad_len)
{
    char name[16];
    const size_t prefix = sizeof MODULES_DEPTH - 1;
    for (;;) {
        size_t n = strcspn(list, ",");
        *bad = list;
        *bad_len = n < INT_MAX ? (int)n : INT_MAX;
        if (n >= prefix && strncmp(list, MODULES_DEPTH, prefix) == 0) {
            if (!valid_depth(list + prefix, n - prefix))
                return HOOKS_BAD_DEPTH;
        } else {
            if (n == 0 || n >= sizeof name)
                return HOOKS_UNKNOWN;
            memcpy(name, list, n);
            name[n] = '\0';
            if (cmd_name_index(hook_names, name) < 0)
                return HOOKS_UNKNOWN;
        }
        if (!list[n])
            return HOOKS_OK;
        list += n + 1;
    }
}

enum { OPT_RATE = CMD_FIRST_LONG, OPT_SCHEDULE, OPT_CUDA, OPT_NO_PYTHON, OPT_HOOKS };

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "sample-rate", required_argument, NULL, OPT_RATE },
    { "schedule", required_argument, NULL, OPT_SCHEDULE },
    { "cuda", no_argument, NULL, OPT_CUDA },
    { "no-python", no_argument, NULL, OPT_NO_PYTHON },
    { "python-hooks", required_argument, NULL, OPT_HOOKS },
    { NULL, 0, NULL, 0 },
};

static int parse_option(void *args, int c, const char *arg)
{
    record_opts *o = args;
    switch (c) {
    case 'o': o->output = arg; return EXIT_OK;
    case OPT_RATE: o->sample_rate = arg; return EXIT_OK;
    case OPT_SCHEDULE: o->schedule = arg; return EXIT_OK;
    case OPT_CUDA: o->cuda = 1; return EXIT_OK;
    case OPT_NO_PYTHON: o->no_python = 1; return EXIT_OK;
    case OPT_HOOKS: o->python_hooks = arg; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The options' values and the command to run: EXIT_OK or a usage error. */
static int check_options(const record_opts *o, int argc)
{
    double rate;
    unsigned schedule[4];
    if (o->output && !*o->output)
        return cmd_usage_error("record", "empty output path");
    if (o->sample_rate && rt_config_parse_rate(o->sample_rate, &rate) != 0)
        return cmd_usage_error("record", "bad sample rate '%s': want " RT_RATE_LIMITS,
                               o->sample_rate);
    if (o->schedule && rt_config_parse_schedule(o->schedule, schedule) != 0)
        return cmd_usage_error("record", "bad schedule '%s': want " RT_SCHEDULE_LIMITS,
                               o->schedule);
    const char *bad = NULL;
    int bad_len = 0;
    int hooks = o->python_hooks ? check_hooks(o->python_hooks, &bad, &bad_len) : HOOKS_OK;
    if (hooks == HOOKS_UNKNOWN)
        return cmd_usage_error("record", "bad Python hooks '%s': want a comma list of steps, "
                               "modules, modules=N, data, syncs, memory or all",
                               o->python_hooks);
    if (hooks == HOOKS_BAD_DEPTH)
        return cmd_usage_error("record", "bad Python hook '%.*s': the depth of modules=N is a "
                               "whole number of levels from 0 to %u", bad_len, bad,
                               RT_MAX_DEPTH);
    if (o->python_hooks && o->no_python)
        return cmd_usage_error("record", "--python-hooks and --no-python exclude each other");
    if (argc == 0)
        return cmd_usage_error("record", "no command to run");
    return EXIT_OK;
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

/* An absolute path to libprof.so in buf (PATH_MAX bytes): EXIT_OK, or
 * EXIT_RECORD_FAILED reported. */
static int find_library(char *buf)
{
    const char *env = getenv("PROF_LIBRARY");
    if (env && *env) {
        if (access(env, R_OK) != 0 || !realpath(env, buf))
            return cmd_error("record", EXIT_RECORD_FAILED, "cannot use PROF_LIBRARY '%s': %s",
                             env, strerror(errno));
        return EXIT_OK;
    }
    char exe[PATH_MAX];
    /* the build tree; its sanitized prof one level down; installed */
    if (cmd_exe_dir(exe) == 0 &&
        (readable_at(buf, PATH_MAX, exe, "libprof.so") ||
         readable_at(buf, PATH_MAX, exe, "../libprof.so") ||
         readable_at(buf, PATH_MAX, exe, "../lib/libprof.so.0")))
        return EXIT_OK;
    return cmd_error("record", EXIT_RECORD_FAILED,
                     "cannot find 'libprof.so' next to prof or in ../lib: set PROF_LIBRARY");
}

/* The directory that holds the Python package prof/ (absolute, in buf of
 * PATH_MAX bytes): $PROF_PYTHONPATH, else python/ next to the prof binary
 * (the build tree; ../python for its sanitized prof), else
 * ../lib/prof/python (installed); *found says whether there is one (none:
 * nothing to inject). EXIT_OK, or EXIT_RECORD_FAILED reported. */
static int find_python(char *buf, int *found)
{
    const char *env = getenv("PROF_PYTHONPATH");
    *found = 0;
    if (env && *env) {
        struct stat st;
        if (stat(env, &st) != 0 || !realpath(env, buf))
            return cmd_error("record", EXIT_RECORD_FAILED, "cannot use PROF_PYTHONPATH '%s': %s",
                             env, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return cmd_error("record", EXIT_RECORD_FAILED,
                             "cannot use PROF_PYTHONPATH '%s': not a directory", env);
        *found = 1;
        return EXIT_OK;
    }
    static const char *const dirs[] = { "python", "../python", "../lib/prof/python" };
    char exe[PATH_MAX], init[PATH_MAX];
    if (cmd_exe_dir(exe) != 0)
        return EXIT_OK;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !*found; i++) {
        snprintf(init, sizeof init, "%s/prof/__init__.py", dirs[i]);
        *found = readable_at(buf, PATH_MAX, exe, init) && readable_at(buf, PATH_MAX, exe, dirs[i]);
    }
    return EXIT_OK;
}

/* ---- the child's environment ---------------------------------------------- */

/* Sets name to first, then ':' and the old value when there is one (an
 * empty entry would mean the current directory to Python's path). */
static int prepend_env(const char *name, const char *first)
{
    const char *old = getenv(name);
    size_t len = strlen(first) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(len);
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(v, len, "%s%s%s", first, old && *old ? ":" : "", old ? old : "");
    int e = setenv(name, v, 1);
    free(v);
    return e;
}

/* LD_PRELOAD splits its list at spaces and colons. EXIT_OK, or
 * EXIT_RECORD_FAILED reported. */
static int set_preload(const char *lib)
{
    if (strpbrk(lib, ": "))
        return cmd_error("record", EXIT_RECORD_FAILED,
                         "cannot preload '%s': LD_PRELOAD cannot hold ':' or ' '", lib);
    if (prepend_env("LD_PRELOAD", lib) != 0)
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot set LD_PRELOAD: %s",
                         strerror(errno));
    return EXIT_OK;
}

/* D/prof/_boot (the sitecustomize that loads the binding) and D in front
 * of PYTHONPATH; or, with --no-python, PROF_PYTHON=0, which the boot also
 * honours when the user put it on the path. EXIT_OK, or EXIT_RECORD_FAILED
 * reported. */
static int set_python(const record_opts *o)
{
    char dir[PATH_MAX], entries[2 * PATH_MAX + 16];
    int found;
    if (o->no_python) {
        if (setenv("PROF_PYTHON", "0", 1) == 0)
            return EXIT_OK;
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot set PROF_PYTHON: %s",
                         strerror(errno));
    }
    int st = find_python(dir, &found);
    if (st != EXIT_OK || !found)
        return st;
    if (strchr(dir, ':'))
        return cmd_error("record", EXIT_RECORD_FAILED,
                         "cannot put '%s' on PYTHONPATH: it holds ':'", dir);
    snprintf(entries, sizeof entries, "%s/prof/_boot:%s", dir, dir);
    if (prepend_env("PYTHONPATH", entries) != 0 ||
        (o->python_hooks && setenv("PROF_PYTHON_HOOKS", o->python_hooks, 1) != 0))
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot set the Python environment: %s",
                         strerror(errno));
    return EXIT_OK;
}

/* The output pattern the command gets (PROF_OUTPUT). */
static const char *output_pattern(const record_opts *o)
{
    const char *out = o->output ? o->output : getenv("PROF_OUTPUT");
    return out && *out ? out : "run.prof";
}

/* EXIT_OK, or EXIT_RECORD_FAILED reported. */
static int set_environment(const record_opts *o, const char *lib)
{
    int st = set_preload(lib);
    if (st == EXIT_OK)
        st = set_python(o);
    if (st != EXIT_OK)
        return st;
    int e = setenv("PROF_OUTPUT", output_pattern(o), 1);
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
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot set the environment: %s",
                         strerror(errno));
    return EXIT_OK;
}

/* ---- checks before the command runs ------------------------------------------ */

/* The configuration libprof will read from this environment, parsed as
 * libprof parses it: EXIT_OK; EXIT_USAGE for a malformed variable;
 * *disabled when PROF_ENABLE says off (nothing will be written). */
static int check_config(int *disabled)
{
    rt_config c;
    const char *bad = NULL;
    int e = rt_config_resolve_why(NULL, &c, &bad);
    *disabled = e == -ECANCELED;
    if (e == 0)
        rt_config_free(&c);
    if (e == 0 || e == -ECANCELED)
        return EXIT_OK;
    if (e == -EINVAL && bad)
        return cmd_error("record", EXIT_USAGE, "bad %s '%s' (see libprof(3))", bad, getenv(bad));
    return cmd_error("record", e == -EINVAL ? EXIT_USAGE : EXIT_RECORD_FAILED,
                     "cannot read the recording configuration: %s", strerror(-e));
}

static int output_error(const char *pattern, int e)
{
    return cmd_error("record", EXIT_RECORD_FAILED, "cannot write '%s': %s", pattern, strerror(e));
}

/* Whether the output can be created: its directory exists and is
 * writable, and the path itself is not a directory, a FIFO, a device nor a
 * read-only file.
 * A directory part holding %p or %r is expanded by each recording process
 * and cannot be checked here. EXIT_OK, or EXIT_RECORD_FAILED reported. */
static int check_output(const char *pattern)
{
    const char *slash = strrchr(pattern, '/');
    char dir[PATH_MAX];
    struct stat st;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == pattern)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - pattern) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - pattern), pattern);
    else
        return EXIT_OK; /* too long for here: libprof's open will say */
    if (strchr(dir, '%'))
        return EXIT_OK;
    if (stat(dir, &st) != 0)
        return output_error(pattern, errno);
    if (!S_ISDIR(st.st_mode))
        return output_error(pattern, ENOTDIR);
    if (access(dir, W_OK | X_OK) != 0)
        return output_error(pattern, errno);
    if (strchr(slash ? slash : pattern, '%') || (stat(pattern, &st) != 0 && errno != ELOOP))
        return EXIT_OK; /* a pattern, or a file to be created */
    if (path_planted_link(pattern)) /* libprof would not follow it either */
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot write '%s': a symbolic link of "
                         "another user's in a shared sticky directory; remove it or choose "
                         "another name", pattern);
    if (S_ISDIR(st.st_mode))
        return output_error(pattern, EISDIR);
    if (!S_ISREG(st.st_mode)) /* libprof writes regular files only (a FIFO could block) */
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot write '%s': not a regular file",
                         pattern);
    if (access(pattern, W_OK) != 0)
        return output_error(pattern, errno);
    return EXIT_OK;
}

/* ---- what was written ------------------------------------------------------ */

/* Where the name a second recorder on the same output takes puts its
 * ".PID": before the extension of the last component, as libprof's
 * rt_output_alt_name splits it (%p and %r expand to digits, no dots). */
static size_t alt_point(const char *pattern)
{
    const char *base = strrchr(pattern, '/');
    base = base ? base + 1 : pattern;
    const char *stem = base + strspn(base, ".");
    const char *dot = strrchr(stem, '.');
    return dot ? (size_t)(dot - pattern) : strlen(pattern);
}

/* pattern as a glob(3) pattern that also finds the names of its own that
 * other recorders took: %p and %r match any text, %% is %, a '*' goes
 * where ".PID" would, and glob's own metacharacters stand for themselves.
 * What it finds is then checked by name_matches. */
static char *glob_pattern(const char *pattern)
{
    size_t at = alt_point(pattern);
    char *g = malloc(2 * strlen(pattern) + 2), *q = g;
    if (!g)
        return NULL;
    for (const char *p = pattern;; p++) {
        if ((size_t)(p - pattern) == at)
            *q++ = '*';
        if (!*p)
            break;
        if (p[0] == '%' && (p[1] == 'p' || p[1] == 'r')) {
            *q++ = '*';
            p++;
            continue;
        }
        if (strchr("*?[\\", *p))
            *q++ = '\\';
        *q++ = *p;
        p += p[0] == '%' && p[1] == '%';
    }
    *q = '\0';
    return g;
}

static size_t digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

/* Whether name is what libprof makes of pattern: %p and %r are numbers,
 * %% is %, the rest is as written; with alt, there is also ".PID" or
 * ".PID-K" (another recorder held the name) or ".rankN" (the Python
 * binding's name for a rank) at alt_point's place. */
static int name_matches(const char *pat, const char *name, const char *alt)
{
    if (pat == alt) {
        const char *s = name;
        if (*s++ != '.')
            return 0;
        if (strncmp(s, "rank", 4) == 0 && digits(s + 4))
            return name_matches(pat, s + 4 + digits(s + 4), NULL);
        size_t n = digits(s);
        if (n && name_matches(pat, s + n, NULL))
            return 1;
        return n && s[n] == '-' && digits(s + n + 1) &&
               name_matches(pat, s + n + 1 + digits(s + n + 1), NULL);
    }
    if (!*pat)
        return !*name;
    if (pat[0] == '%' && (pat[1] == 'p' || pat[1] == 'r')) {
        for (size_t n = 1; n <= digits(name); n++)
            if (name_matches(pat + 2, name + n, alt))
                return 1;
        return 0;
    }
    size_t w = pat[0] == '%' && pat[1] == '%' ? 2 : 1;
    return *pat == *name && name_matches(pat + w, name + 1, alt);
}

/* Whether the file at path begins as every profile does. */
static int has_profile_magic(const char *path)
{
    char head[PF_MAGIC_LEN];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && memcmp(head, PF_MAGIC, sizeof head) == 0;
}

/* Whether path, which glob found, is one of the command's profiles: the
 * output as named, or a name libprof makes of the pattern that holds a
 * profile (other files the command wrote next to them are its own). */
static int is_profile(const char *pattern, const char *path)
{
    if (!strchr(pattern, '%') && strcmp(path, pattern) == 0)
        return 1;
    return (name_matches(pattern, path, NULL) ||
            name_matches(pattern, path, pattern + alt_point(pattern))) &&
           has_profile_magic(path);
}

/* "48,213" */
static void grouped(char *buf, size_t cap, uint64_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    size_t j = 0;
    for (int i = 0; i < len && j + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
}

/* "512 B", "1.2 MiB" */
static void human_size(char *buf, size_t cap, uint64_t bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* The line for one profile the run wrote: its size, events and the steps
 * the program made (not the last, which prof_stop closes). A summary pass
 * over the file, not an analysis. 1 when it could be read. */
static int report_profile(const char *path, const prof_tuning *t, uint64_t size)
{
    profile_summary sum;
    prof_error err = { PROF_OK, "" };
    if (profile_summary_read(path, t, &sum, &err) != PROF_OK) {
        profile_summary_free(&sum);
        return cmd_error("record", 0, "cannot read '%s', which the command wrote: %s", path,
                         err.message);
    }
    char sz[32], events[32], steps[32];
    uint64_t nsteps = sum.counts[PROF_EV_STEP] - sum.incomplete_steps;
    human_size(sz, sizeof sz, size);
    grouped(events, sizeof events, sum.events);
    grouped(steps, sizeof steps, nsteps);
    fprintf(stderr, "prof: record: wrote %s (%s, %s events, %s step%s%s)\n", path, sz, events,
            steps, nsteps == 1 ? "" : "s",
            sum.status.truncated ? ", cut short" : !sum.status.clean ? ", not closed cleanly" : "");
    profile_summary_free(&sum);
    return 1;
}

static int modified_since(const struct stat *st, const struct timespec *t)
{
    return st->st_mtim.tv_sec > t->tv_sec ||
           (st->st_mtim.tv_sec == t->tv_sec && st->st_mtim.tv_nsec >= t->tv_nsec);
}

/* One line for each file the pattern names (every rank's and process's,
 * for %r and %p, and those a second recorder wrote beside the output)
 * that was written since start; the number that could be read in
 * *readable. The number found, or -1 when none could be looked for
 * (reported). */
static int report_written(const char *pattern, const prof_tuning *t,
                          const struct timespec *start, int *readable)
{
    char *g = glob_pattern(pattern);
    glob_t gl;
    int found = 0;
    *readable = 0;
    if (!g)
        return cmd_error("record", -1, "out of memory");
    int rc = glob(g, 0, NULL, &gl);
    free(g);
    if (rc == GLOB_NOMATCH)
        return 0;
    if (rc != 0)
        return cmd_error("record", -1, "cannot look for '%s': %s", pattern,
                         rc == GLOB_NOSPACE ? "out of memory" : "read error");
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        struct stat st;
        if (stat(gl.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode) ||
            !modified_since(&st, start) || !is_profile(pattern, gl.gl_pathv[i]))
            continue;
        found++;
        *readable += report_profile(gl.gl_pathv[i], t, (uint64_t)st.st_size);
    }
    globfree(&gl);
    return found;
}

/* ---- running the command ---------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* In the child: the caller's signal mask and SIGPIPE action back, then
 * the command. An exec failure goes back to the parent through the
 * close-on-exec pipe. */
static void exec_child(char **argv, const sigset_t *mask, const struct sigaction *pipe_action,
                       int err_fd)
{
    sigaction(SIGPIPE, pipe_action, NULL);
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
            if (r < 0 && errno != EINTR)
                return cmd_error("record", EXIT_RECORD_FAILED, "cannot wait for the command: %s",
                                 strerror(errno));
            continue;
        }
        if (si.si_code != SI_KERNEL)
            kill(pid, sig);
    }
}

/* The command's exit status as a shell reports it, or prof's own failure
 * status; *ran says whether the command started. It runs with SIGPIPE's
 * action pipe_action. */
static int run_command(char **argv, const struct sigaction *pipe_action, int *ran)
{
    sigset_t set, old;
    int pipefd[2];
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot create a pipe: %s",
                         strerror(errno));
    fflush(NULL);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t pid = fork();
    if (pid == 0)
        exec_child(argv, &old, pipe_action, pipefd[1]);
    close(pipefd[1]);
    int status;
    *ran = 0;
    if (pid < 0) {
        status = cmd_error("record", EXIT_RECORD_FAILED, "cannot start '%s': %s", argv[0],
                           strerror(errno));
        close(pipefd[0]);
    } else {
        int e = exec_error(pid, pipefd[0]);
        if (e) {
            status = cmd_error("record", e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN,
                               "cannot run '%s': %s", argv[0], strerror(e));
        } else {
            *ran = 1;
            status = wait_forwarding(pid, &set);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return status;
}

static int record_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    const record_opts *o = args;
    char lib[PATH_MAX];
    int disabled, ran = 0, readable;
    /* prof's own messages must not end it where stderr is a pipe whose
     * reader has gone (2>&1 | true): a failed write of one is lost, and the
     * command's status is still what prof returns. The command gets the
     * caller's SIGPIPE action back. */
    struct sigaction ign, pipe_action;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    if (sigaction(SIGPIPE, &ign, &pipe_action) != 0)
        return cmd_error("record", EXIT_RECORD_FAILED, "cannot ignore SIGPIPE: %s",
                         strerror(errno));
    int st = check_options(o, argc);
    if (st == EXIT_OK)
        st = find_library(lib);
    if (st == EXIT_OK)
        st = set_environment(o, lib);
    if (st == EXIT_OK)
        st = check_config(&disabled);
    if (st != EXIT_OK)
        return st;
    const char *pattern = output_pattern(o);
    if (!disabled && (st = check_output(pattern)) != EXIT_OK)
        return st;
    /* the clock file times are stamped from, so that a file written at
     * once is not older than the start */
    struct timespec start;
    clock_gettime(CLOCK_REALTIME_COARSE, &start);
    st = run_command(argv, &pipe_action, &ran);
    if (!ran || disabled)
        return st;
    int found = report_written(pattern, t, &start, &readable);
    if (found == 0)
        cmd_error("record", st, "no profile written to '%s': the command never started "
                  "recording (a static or set-user-ID program ignores LD_PRELOAD)", pattern);
    return st == 0 && readable == 0 ? EXIT_RECORD_FAILED : st;
}

/* '+': the options after COMMAND are its own */
const cmd_spec cmd_record = { usage_text, "+o:", long_options, sizeof(record_opts), NULL,
                              parse_option, record_main };
