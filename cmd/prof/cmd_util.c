/* cmd_util.c - what several commands do the same way (see cmd.h): names
 * and numbers from arguments, loading a profile with a progress bar,
 * choosing the text style for the terminal, and writing an output whole or
 * not at all. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd.h"
#include "import/import.h"
#include "util/error.h"
#include "util/progress.h"

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

int cmd_trace_open(const char *cmd, const char *input, cmd_trace *t, const char **readable)
{
    t->fd = -1;
    *readable = input;
    if (import_detect(input) == IMPORT_NONE)
        return EXIT_OK; /* a profile, or something the reader will name */
    prof_error err = { PROF_OK, "" };
    prof_err e = import_to_temp(input, NULL, &t->fd, t->path, sizeof t->path, &err);
    if (e != PROF_OK) {
        char shown[PROF_SUBJECT_MAX];
        t->fd = -1;
        return cmd_error(cmd, cmd_input_status(e), "cannot import '%s': %s",
                         prof_error_subject(shown, input), err.message);
    }
    *readable = t->path;
    return EXIT_OK;
}

void cmd_trace_release(cmd_trace *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

int cmd_load_profile(const char *cmd, const char *path, profile_model *m)
{
    progress bar;
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    const char *readable;
    int status = cmd_trace_open(cmd, path, &t, &readable);
    if (status != EXIT_OK)
        return status;
    progress_init(&bar, stderr, isatty(STDERR_FILENO), path);
    prof_err e = profile_model_load(readable, m, progress_update, &bar, &err);
    progress_done(&bar);
    cmd_trace_release(&t);
    if (e != PROF_OK)
        return cmd_error(cmd, cmd_input_status(e), "cannot read '%s': %s", path, err.message);
    if (readable != path) { /* reports name the trace, not its temporary profile */
        char *name = strdup(path);
        if (!name)
            return cmd_error(cmd, EXIT_NOMEM, "out of memory");
        free(m->path);
        m->path = name;
    }
    return EXIT_OK;
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
 * piece of mutable global state of the commands; they are single-threaded
 * and write one output at a time. pending says whether the name is set. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction saved_actions[N_CLEANUP_SIGNALS];
static int installed[N_CLEANUP_SIGNALS];

/* Async-signal-safe: unlink, then die by the same signal with its default
 * action (it stays blocked in here, so raise() takes effect on return). */
static void remove_pending(int sig)
{
    if (pending)
        unlink(pending_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void block_cleanup_signals(int how, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
        sigaddset(&set, cleanup_signals[i]);
    sigprocmask(how, &set, old);
}

prof_err cmd_output_open(outfile *o, const char *path, prof_error *err)
{
    /* Blocked from before the temporary exists until the handler knows it. */
    sigset_t old;
    block_cleanup_signals(SIG_BLOCK, &old);
    prof_err e = outfile_open(o, path, err);
    if (e == PROF_OK && o->tmp && strlen(o->tmp) < sizeof pending_tmp) {
        memcpy(pending_tmp, o->tmp, strlen(o->tmp) + 1);
        pending = 1;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_pending;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
            sigaddset(&sa.sa_mask, cleanup_signals[i]);
        for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
            installed[i] = 0;
            /* A signal ignored (nohup) stays ignored. */
            if (sigaction(cleanup_signals[i], NULL, &saved_actions[i]) != 0 ||
                saved_actions[i].sa_handler == SIG_IGN)
                continue;
            installed[i] = sigaction(cleanup_signals[i], &sa, NULL) == 0;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* The temporary is gone (renamed or removed): back to the old handlers. */
static void release_pending(void)
{
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        if (installed[i])
            sigaction(cleanup_signals[i], &saved_actions[i], NULL);
        installed[i] = 0;
    }
    pending = 0;
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
