/* cmd_util.c - what several commands do the same way (see cmd.h): their
 * one-line messages and exit statuses, names and numbers from arguments,
 * the tuning of the environment, loading a profile with a progress bar,
 * choosing the text style for the terminal, and writing an output whole or
 * not at all. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd.h"
#include "import/import.h"
#include "util/error.h"
#include "util/progress.h"

/* ---- reporting ---------------------------------------------------------- */

/* "prof: CMD: " what, the message, and tail, as one line on stderr. */
static void say(const char *cmd, const char *what, const char *tail, const char *fmt, va_list ap)
{
    fprintf(stderr, "prof: %s: %s", cmd, what);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", tail);
}

int cmd_error(const char *cmd, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "", "", fmt, ap);
    va_end(ap);
    return status;
}

void cmd_warning(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "warning: ", "", fmt, ap);
    va_end(ap);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    char tail[128];
    snprintf(tail, sizeof tail, " (see 'prof %s --help')", cmd);
    va_list ap;
    va_start(ap, fmt);
    say(cmd, "", tail, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

int cmd_finish_stdout(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return cmd_error(cmd, EXIT_OUTPUT, "cannot write to standard output: %s",
                         strerror(errno ? errno : EIO));
    return EXIT_OK;
}

int cmd_input_status(prof_err e)
{
    switch (e) {
    case PROF_OK: return EXIT_OK;
    case PROF_ERR_NOMEM: return EXIT_NOMEM;
    case PROF_ERR_INVALID: return EXIT_USAGE;
    default: return EXIT_INPUT;
    }
}

int cmd_exe_dir(char *dir)
{
    ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* ---- arguments ----------------------------------------------------------- */

int cmd_name_index(const char *const *names, const char *arg)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

int cmd_parse_amount(const char *arg, double max, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !isfinite(v) || v < 0 || (max > 0 && v > max))
        return -1;
    *out = v;
    return 0;
}

struct sigaction cmd_file_limit_fails(int *set)
{
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    memset(&old, 0, sizeof old);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    *set = sigaction(SIGXFSZ, &ign, &old) == 0;
    return old;
}

void cmd_file_limit_restore(const struct sigaction *old, int set)
{
    if (set)
        sigaction(SIGXFSZ, old, NULL);
}

int cmd_import_status(prof_err e, int output_failed)
{
    return e == PROF_ERR_NOMEM ? EXIT_NOMEM : output_failed ? EXIT_OUTPUT : cmd_input_status(e);
}

const char *cmd_import_hint(prof_err e, int output_failed)
{
    return e != PROF_ERR_NOMEM && output_failed
               ? " (the import writes a temporary profile under $TMPDIR, or /tmp: point TMPDIR "
                 "at a writable directory with room)"
               : "";
}

/* cmd_trace_open without printing: the message into msg. */
static int trace_open_quiet(const prof_tuning *tuning, const char *input, cmd_trace *t,
                            const char **readable, char *msg, size_t size)
{
    t->fd = -1;
    *readable = input;
    prof_error err = { PROF_OK, "" };
    int output_failed;
    import_options o = { .tuning = tuning };
    prof_err e = import_to_temp(input, &o, &t->fd, t->path, sizeof t->path, &output_failed,
                                &err);
    if (e != PROF_OK) {
        char shown[PROF_SUBJECT_MAX];
        t->fd = -1;
        snprintf(msg, size, "cannot import '%s': %s%s", prof_error_subject(shown, input),
                 err.message, cmd_import_hint(e, output_failed));
        return cmd_import_status(e, output_failed);
    }
    if (t->fd >= 0)
        *readable = t->path;
    return EXIT_OK;
}

int cmd_trace_open(const char *cmd, const prof_tuning *tuning, const char *input, cmd_trace *t,
                   const char **readable)
{
    char msg[CMD_MESSAGE_MAX];
    int limit_set;
    struct sigaction limit = cmd_file_limit_fails(&limit_set);
    int status = trace_open_quiet(tuning, input, t, readable, msg, sizeof msg);
    cmd_file_limit_restore(&limit, limit_set);
    return status == EXIT_OK ? status : cmd_error(cmd, status, "%s", msg);
}

void cmd_trace_release(cmd_trace *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

int cmd_load_quiet(const char *path, const prof_tuning *tuning, profile_model *m,
                   model_progress_fn on_progress, void *arg, char *msg, size_t size)
{
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    const char *readable;
    int status = trace_open_quiet(tuning, path, &t, &readable, msg, size);
    if (status != EXIT_OK)
        return status;
    prof_err e = profile_model_load(readable, tuning, m, on_progress, arg, &err);
    cmd_trace_release(&t);
    if (e != PROF_OK) {
        snprintf(msg, size, "cannot read '%s': %s", path, err.message);
        return cmd_input_status(e);
    }
    if (readable != path) { /* reports name the trace, not its temporary profile */
        char *name = strdup(path);
        if (!name) {
            snprintf(msg, size, "out of memory");
            return EXIT_NOMEM;
        }
        free(m->path);
        m->path = name;
    }
    return EXIT_OK;
}

int cmd_load_profile(const char *cmd, const prof_tuning *t, const char *path, profile_model *m)
{
    progress bar;
    char msg[CMD_MESSAGE_MAX];
    int limit_set;
    struct sigaction limit = cmd_file_limit_fails(&limit_set);
    progress_init(&bar, stderr, isatty(STDERR_FILENO), path);
    int status = cmd_load_quiet(path, t, m, progress_update, &bar, msg, sizeof msg);
    progress_done(&bar);
    cmd_file_limit_restore(&limit, limit_set);
    return status == EXIT_OK ? status : cmd_error(cmd, status, "%s", msg);
}

static int utf8_locale(void)
{
    static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcasestr(v, "utf-8") != NULL || strcasestr(v, "utf8") != NULL;
    }
    return 0;
}

report_style cmd_text_style(const char *output, int no_color)
{
    report_style st = { 0, 0, 0, 0 };
    int to_stdout = !output || strcmp(output, "-") == 0;
    if (!to_stdout || !isatty(STDOUT_FILENO))
        return st;
    const char *env_no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    st.color = !no_color && !(env_no_color && *env_no_color) &&
               !(term && strcmp(term, "dumb") == 0);
    st.unicode = utf8_locale();
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
        st.width = ws.ws_col;
    return st;
}

/* The temporary file of the output being written, for the signal handler
 * to remove. A handler can reach nothing but globals, so this is the one
 * piece of mutable global state of the commands; they write one output at
 * a time. pending says whether the name is set. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending;
/* What each signal did before cmd_output_open, where it changed it. */
static struct sigaction saved_actions[NSIG];
static unsigned char installed[NSIG];
static struct sigaction saved_xfsz;
static int xfsz_ignored;

/* Every signal whose default action ends the process and that a handler
 * can catch: the ones a user or a tool sends (SIGINT to SIGTERM, the
 * limits' SIGXCPU, the real-time ones) and the ones a crash raises. Not
 * SIGXFSZ, which is ignored instead so that a file size limit is a write
 * that fails (EFBIG). */
static int ends_process(int sig)
{
    switch (sig) {
    case SIGHUP: case SIGINT: case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT:
    case SIGBUS: case SIGFPE: case SIGUSR1: case SIGSEGV: case SIGUSR2: case SIGPIPE:
    case SIGALRM: case SIGTERM: case SIGXCPU: case SIGVTALRM: case SIGPROF: case SIGIO:
    case SIGSYS:
#ifdef SIGSTKFLT
    case SIGSTKFLT:
#endif
#ifdef SIGPWR
    case SIGPWR:
#endif
        return 1;
    default:
        return sig >= SIGRTMIN && sig <= SIGRTMAX;
    }
}

/* Async-signal-safe: unlinks the temporary, puts back the signal's default
 * action, and has it act again. A fault (SIGSEGV, SIGBUS, SIGILL or SIGFPE
 * that the kernel raised for an instruction) comes back by itself when the
 * instruction runs again, with its own details (and a core dump where
 * one is due); any other is raised again, and arrives when this handler
 * returns (it stays blocked in here): the process dies by it. */
static void remove_pending(int sig, siginfo_t *si, void *context)
{
    (void)context;
    if (pending)
        unlink(pending_tmp);
    sigaction(sig, &saved_actions[sig], NULL);
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
    if (!fault || si->si_code <= 0) /* <= 0: sent by kill, tgkill or sigqueue */
        raise(sig);
}

static void cleanup_set(sigset_t *set)
{
    sigemptyset(set);
    for (int sig = 1; sig < NSIG; sig++)
        if (ends_process(sig))
            sigaddset(set, sig);
}

/* While the temporary exists, remove_pending handles every signal that
 * would end the process by its default action: not one that was ignored
 * (nohup) or that something else handles (a sanitizer's SIGSEGV, a
 * profiler's SIGPROF), which may not end it. */
static void install_cleanup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = remove_pending;
    sa.sa_flags = SA_SIGINFO;
    cleanup_set(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        installed[sig] = 0;
        if (!ends_process(sig) || sigaction(sig, NULL, &saved_actions[sig]) != 0 ||
            (saved_actions[sig].sa_flags & SA_SIGINFO) ||
            saved_actions[sig].sa_handler != SIG_DFL)
            continue;
        installed[sig] = sigaction(sig, &sa, NULL) == 0;
    }
}

/* The output is closed: the old handlers and SIGXFSZ's old action back. */
static void release_pending(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        if (installed[sig])
            sigaction(sig, &saved_actions[sig], NULL);
        installed[sig] = 0;
    }
    pending = 0;
    if (xfsz_ignored)
        sigaction(SIGXFSZ, &saved_xfsz, NULL);
    xfsz_ignored = 0;
}

prof_err cmd_output_open(outfile *o, const char *path, prof_error *err)
{
    /* A write past a file size limit (ulimit -f) fails with EFBIG and is
     * reported as any failed write, instead of killing prof. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    xfsz_ignored = sigaction(SIGXFSZ, &ign, &saved_xfsz) == 0;
    /* Blocked from before the temporary exists until the handler knows
     * it; creating it never waits for another process. */
    sigset_t set, old;
    cleanup_set(&set);
    sigprocmask(SIG_BLOCK, &set, &old);
    prof_err e = outfile_prepare(o, path, err);
    if (e == PROF_OK && o->tmp && strlen(o->tmp) < sizeof pending_tmp) {
        memcpy(pending_tmp, o->tmp, strlen(o->tmp) + 1);
        pending = 1;
        install_cleanup();
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    /* A FIFO is opened with the signals as they were: its reader may never
     * come, and Ctrl-C or SIGTERM must end the wait (there is no temporary
     * to remove). */
    if (e == PROF_OK)
        e = outfile_open_through(o, err);
    if (e != PROF_OK)
        release_pending();
    return e;
}

prof_err cmd_output_commit(outfile *o, prof_error *err)
{
    /* A signal after the rename finds no temporary to unlink: harmless. */
    prof_err e = outfile_commit(o, err);
    release_pending();
    return e;
}

void cmd_output_abort(outfile *o)
{
    outfile_abort(o);
    release_pending();
}

int cmd_write_output(const char *cmd, const char *path, const char *what, cmd_render_fn render,
                     const cJSON *doc, const void *args)
{
    outfile of;
    prof_error err = { PROF_OK, "" };
    if (cmd_output_open(&of, path, &err) != PROF_OK)
        return cmd_error(cmd, EXIT_OUTPUT, "%s", err.message);
    if (render(of.fp, doc, args) == PROF_ERR_NOMEM) {
        cmd_output_abort(&of);
        return cmd_error(cmd, EXIT_NOMEM, "cannot write %s: out of memory", what);
    }
    /* A failed write is caught again here, with its message. */
    if (cmd_output_commit(&of, &err) != PROF_OK)
        return cmd_error(cmd, EXIT_OUTPUT, "%s", err.message);
    return EXIT_OK;
}

/* "16G", "512M", "1.5GiB", "1048576": bytes, suffixes in powers of 1024. */
static int parse_capacity(const char *arg, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || !isfinite(v) || v <= 0)
        return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (u) {
        v *= pow(1024.0, (double)(u - units + 1));
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int cmd_analysis_option(const char *cmd, int c, const char *arg, analysis_options *o)
{
    double v;
    switch (c) {
    case CMD_OPT_HOT:
    case CMD_OPT_SYNC:
        if (cmd_parse_amount(arg, 100, &v) != 0)
            return cmd_usage_error(cmd, "--%s-threshold takes a percentage (0 to 100), not '%s'",
                                   c == CMD_OPT_HOT ? "hot" : "sync", arg);
        *(c == CMD_OPT_HOT ? &o->hot_threshold_pct : &o->sync_threshold_pct) = v;
        return EXIT_OK;
    case CMD_OPT_LEAK:
        if (cmd_parse_amount(arg, 0, &v) != 0)
            return cmd_usage_error(cmd, "--leak-threshold takes MiB per step, not '%s'", arg);
        o->leak_threshold_mb = v;
        return EXIT_OK;
    case CMD_OPT_HORIZON:
        if (cmd_parse_amount(arg, 0, &v) != 0 || v <= 0)
            return cmd_usage_error(cmd, "--leak-horizon takes a number of run lengths above "
                                   "0, not '%s'", arg);
        o->leak_horizon = v;
        return EXIT_OK;
    case CMD_OPT_CAPACITY:
        if (parse_capacity(arg, &o->capacity_bytes) != 0)
            return cmd_usage_error(cmd, "--capacity takes a size such as 16G, not '%s'", arg);
        return EXIT_OK;
    }
    return -1;
}

/* ---- the tuning of the environment ------------------------------------------------------ */

/* A whole number from lo to hi in the variable name, or 0 (unset, or a
 * warning given). */
static unsigned long long env_count(const char *cmd, const char *name, unsigned long long lo,
                                    unsigned long long hi)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return 0;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || errno || !isdigit((unsigned char)*v) || n < lo || n > hi) {
        cmd_warning(cmd, "%s='%.40s' is not a number from %llu to %llu: left at its default",
                    name, v, lo, hi);
        return 0;
    }
    return n;
}

/* The index in values (NULL-terminated; the first is the default, as
 * when unset) of the variable name's value; 0 for another, warned of. */
static int env_choice(const char *cmd, const char *name, const char *const *values,
                      const char *listed)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    int i = cmd_name_index(values, v);
    if (i >= 0)
        return i;
    cmd_warning(cmd, "%s='%.40s' is not %s: left at its default", name, v, listed);
    return 0;
}

void cmd_tuning_init(const char *cmd, prof_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->threads = (unsigned)env_count(cmd, "PROF_THREADS", 1, 1024);
    t->model_keep = (size_t)env_count(cmd, "PROF_MODEL_KEEP", 16, 1u << 30);
    static const char *const on_off[] = { "1", "0", NULL };
    static const char *const help[] = { "1", "0", "always", NULL }; /* as tuning_help */
    t->no_repeat = env_choice(cmd, "PROF_MODEL_REPEAT", on_off, "0 or 1");
    t->no_join = env_choice(cmd, "PROF_MODEL_JOIN", on_off, "0 or 1");
    t->reader_help = (tuning_help)env_choice(cmd, "PROF_READER_HELP", help, "0, 1 or always");
    t->tmpdir = getenv("TMPDIR");
    /* a helper (a reader's read-ahead, the importer's event thread) mostly
     * waits for the thread it serves: room for two per core kept busy */
    if (tuning_helpers(t))
        t->pool = pool_new(2 * tuning_threads(t));
}

void cmd_tuning_free(prof_tuning *t)
{
    pool_free(t->pool);
    t->pool = NULL;
}
