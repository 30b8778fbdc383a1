/* view.c - `prof view RUN.prof [SECOND.prof]`: the dashboard in the browser,
 * served on loopback until Ctrl+C, or written as one self-contained HTML
 * file with --html. The page renders the analyze report; with two profiles
 * it also shows their comparison. */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "cmd.h"
#include "model/profile.h"
#include "output/html.h"
#include "output/report_json.h"
#include "output/server.h"
#include "util/outfile.h"

#define CMD "view"

extern char **environ;

static const char usage[] =
    "usage: prof view RUN.prof [SECOND.prof] [--port N] [--bind ADDR] [--html FILE]\n"
    "                 [--no-open]\n"
    "       prof view DIR [--rank N] [...]\n"
    "\n"
    "Shows the analysis of a profile as a dashboard in the browser: summary,\n"
    "operations, memory, steps, call graph, timeline and bottlenecks. With two\n"
    "profiles (before and after) it also shows their comparison, with a\n"
    "differential flame graph. A directory is the ranks of one job, as prof analyze\n"
    "takes it: the dashboard shows every rank's row, a rank x step heat map of step\n"
    "time, the cross-rank findings, and the rank that holds the job back (or the\n"
    "one --rank names) in full, its timeline included.\n"
    "\n"
    "The dashboard is served on http://127.0.0.1:8051/ until Ctrl+C; the page\n"
    "and its scripts are built into prof and load nothing from elsewhere.\n"
    "\n"
    "  -p, --port N       port to listen on (default 8051; 0 picks a free one)\n"
    "  -b, --bind ADDR    numeric address to listen on (default 127.0.0.1, this\n"
    "                     machine only; 0.0.0.0 exposes the profile to the network)\n"
    "      --html FILE    write the dashboard as one self-contained HTML file\n"
    "                     instead of serving it (\"-\" for standard output)\n"
    "      --rank N       of a directory's ranks, the one shown in full\n"
    "      --no-open      do not open a browser (it is opened only when standard\n"
    "                     output is a terminal and a display is available)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 success (also after Ctrl+C), 2 usage error (also an address\n"
    "that is not numeric), 3 unreadable or corrupt input, 4 output error (also\n"
    "a port that is already in use: choose another with --port; or no\n"
    "libmicrohttpd to serve with), 5 out of memory.\n";

typedef struct view_args {
    unsigned port;
    const char *bind;
    const char *html;
    int no_open;
    int rank;              /* --rank, or ANALYSIS_RANK_SLOWEST */
    const prof_tuning *tuning;
} view_args;

enum { OPT_HTML = CMD_FIRST_LONG, OPT_NO_OPEN, OPT_RANK };

static const struct option long_options[] = {
    { "port", required_argument, NULL, 'p' },
    { "bind", required_argument, NULL, 'b' },
    { "html", required_argument, NULL, OPT_HTML },
    { "no-open", no_argument, NULL, OPT_NO_OPEN },
    { "rank", required_argument, NULL, OPT_RANK },
    { 0, 0, 0, 0 }
};

static void init_args(void *args)
{
    *(view_args *)args = (view_args){ 8051, "127.0.0.1", NULL, 0, ANALYSIS_RANK_SLOWEST, NULL };
}

static int parse_option(void *args, int c, const char *arg)
{
    view_args *a = args;
    char *end;
    unsigned long v;
    switch (c) {
    case 'p':
        v = strtoul(arg, &end, 10);
        if (!*arg || *end || v > 65535 || arg[0] == '-')
            return cmd_usage_error(CMD, "--port takes a number from 0 to 65535, not '%s'", arg);
        a->port = (unsigned)v;
        return EXIT_OK;
    case 'b': a->bind = arg; return EXIT_OK;
    case OPT_HTML: a->html = arg; return EXIT_OK;
    case OPT_NO_OPEN: a->no_open = 1; return EXIT_OK;
    case OPT_RANK:
        v = strtoul(arg, &end, 10);
        if (!*arg || *end || v > INT_MAX || arg[0] == '-')
            return cmd_usage_error(CMD, "--rank takes a rank, a whole number from 0, not '%s'",
                                   arg);
        a->rank = (int)v;
        return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The report of each profile (a page's worth of operations, the rest
 * summed up) and, for two, their comparison. EXIT_OK, or the status with
 * the error reported. */
static int build_reports(char **paths, const char *const *readable, size_t n,
                         const prof_tuning *t, cJSON **reports, cJSON **compare)
{
    analysis_options opts;
    analysis_options_default(&opts);
    opts.tuning = t;
    opts.top = VIEW_PAGE_ROWS;
    opts.others = 1;
    for (size_t i = 0; i < n; i++) {
        profile_model m;
        memset(&m, 0, sizeof m);
        int status = cmd_load_profile(CMD, t, readable[i], &m);
        char *name = status == EXIT_OK && readable[i] != paths[i] ? strdup(paths[i]) : NULL;
        if (name) { /* the report names the trace, not its temporary profile */
            free(m.path);
            m.path = name;
        }
        if (status != EXIT_OK) {
            profile_model_free(&m);
            return status;
        }
        prof_error err = { PROF_OK, "" };
        const profile_model *one = &m;
        reports[i] = report_build(&one, 1, &opts, &err);
        profile_model_free(&m);
        if (!reports[i])
            return cmd_error(CMD, cmd_input_status(err.code), "cannot analyze '%s': %s",
                             paths[i], err.message);
    }
    if (n == 2) {
        prof_error err = { PROF_OK, "" };
        *compare = compare_build(reports[0], reports[1], NULL, &err);
        if (!*compare)
            return cmd_error(CMD, cmd_input_status(err.code), "cannot compare '%s' and '%s': %s",
                             paths[0], paths[1], err.message);
    }
    return EXIT_OK;
}

static int write_html(const char *path, cJSON *const *reports, size_t n, const cJSON *compare)
{
    outfile o;
    prof_error err = { PROF_OK, "" };
    if (cmd_output_open(&o, path, &err) != PROF_OK)
        return cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
    const cJSON *r[VIEW_MAX_PROFILES] = { reports[0], n > 1 ? reports[1] : NULL };
    prof_err e = view_render_html(o.fp, r, n, compare, &err);
    if (e != PROF_OK) {
        cmd_output_abort(&o);
        return cmd_error(CMD, e == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT,
                         "cannot write '%s': %s", path, err.message);
    }
    if (cmd_output_commit(&o, &err) != PROF_OK)
        return cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
    return EXIT_OK;
}

/* A file of the user's alone (0600) that sends the browser on to url, in
 * path: the browser is started with the file's name, not the URL, whose
 * token the command lines of xdg-open and the browser would show every
 * user of the machine (ps). 0, or -1 when it could not be written. */
static int redirect_file(const char *url, char *path, size_t size)
{
    const char *dir = getenv("XDG_RUNTIME_DIR");
    if (!dir || !*dir || access(dir, W_OK) != 0)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    if (snprintf(path, size, "%s/prof-view-XXXXXX.html", dir) >= (int)size)
        return -1;
    int fd = mkstemps(path, 5);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        return -1;
    }
    /* the URL is an address, a port and hex digits: nothing to escape */
    int bad = fprintf(f, "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=%s\">"
                         "<a href=\"%s\">the prof dashboard</a>\n", url, url) < 0;
    if ((fclose(f) != 0) | bad) {
        unlink(path);
        return -1;
    }
    return 0;
}

/* Opens the page in a browser, when someone is there to see it, through
 * a redirect file (above), written to path ("" when none), which the
 * caller removes when the server stops. */
static void open_browser(const char *url, char *path, size_t size)
{
    const char *display = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
    path[0] = '\0';
    if (!isatty(STDOUT_FILENO) || (!(display && *display) && !(wayland && *wayland)))
        return;
    if (redirect_file(url, path, size) != 0) {
        path[0] = '\0';
        return;
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return;
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *args[] = { "xdg-open", path, NULL };
    pid_t pid;
    posix_spawnp(&pid, "xdg-open", &fa, NULL, args, environ); /* best effort */
    posix_spawn_file_actions_destroy(&fa);
}

/* A report as `prof analyze --format json` writes it, in memory. */
static char *json_text(const cJSON *report)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int bad = report_render_json(f, report) != PROF_OK;
    if ((fclose(f) != 0) | bad) {
        free(text);
        return NULL;
    }
    return text;
}

/* Serves until SIGINT, SIGTERM or SIGHUP (the terminal closed). The signals
 * are blocked before the server threads start (they inherit the mask), so
 * only sigwait here sees them, and the redirect file is removed whichever
 * of them ends the server. */
static int serve(char **paths, const char *const *readable, size_t n, cJSON *const *reports,
                 const cJSON *compare, const view_job_source *job, const view_args *a)
{
    view_server_config cfg = { a->bind, a->port, n, { NULL }, { NULL }, NULL, NULL, job,
                               a->tuning };
    char *texts[VIEW_MAX_PROFILES] = { NULL, NULL };
    char *cmp_text = NULL, *doc = NULL;
    int status = EXIT_OK;
    prof_error err = { PROF_OK, "" };
    const cJSON *r[VIEW_MAX_PROFILES] = { reports[0], n > 1 ? reports[1] : NULL };
    for (size_t i = 0; i < n; i++) {
        cfg.paths[i] = readable[i];
        cfg.reports[i] = texts[i] = json_text(reports[i]);
        if (!texts[i])
            goto nomem;
    }
    if (compare && !(cfg.compare_json = cmp_text = json_text(compare)))
        goto nomem;
    if (!(cfg.view_json = doc = view_document(r, n, compare, &err)))
        goto nomem;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    view_server *s = NULL;
    prof_err e = view_server_start(&cfg, &s, &err);
    if (e != PROF_OK) {
        if (e == PROF_ERR_INVALID)
            status = cmd_usage_error(CMD, "%s", err.message);
        else if (e == PROF_ERR_NOMEM)
            status = cmd_error(CMD, EXIT_NOMEM, "cannot serve the dashboard: %s", err.message);
        else if (e == PROF_ERR_UNSUPPORTED)
            status = cmd_error(CMD, EXIT_OUTPUT, "cannot serve the dashboard: %s (install "
                               "libmicrohttpd, or write the dashboard with --html)", err.message);
        else
            status = cmd_error(CMD, EXIT_OUTPUT, "cannot serve the dashboard: %s (choose "
                               "another port with --port)", err.message);
        goto out;
    }
    if (!view_server_loopback(s))
        cmd_warning(CMD, "serving on %s, beyond this machine: whoever can reach it and learns "
                    "the URL, token included, can read the profile", a->bind);
    printf("Serving the dashboard of %s%s%s at %s (Ctrl+C stops)\n", paths[0],
           n > 1 ? " and " : "", n > 1 ? paths[1] : "", view_server_url(s));
    status = cmd_finish_stdout(CMD);
    if (status == EXIT_OK) {
        char redirect[4096] = "";
        if (!a->no_open)
            open_browser(view_server_url(s), redirect, sizeof redirect);
        int sig;
        sigwait(&stop, &sig);
        if (redirect[0])
            unlink(redirect);
    }
    view_server_stop(s);
    goto out;
nomem:
    status = cmd_error(CMD, EXIT_NOMEM, "out of memory");
out:
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
    free(cmp_text);
    free(doc);
    return status;
}

/* ---- a job's ranks ------------------------------------------------------------------- */

#define JOB_VIEWS_KEPT 8 /* views of other ranks kept for the next request */

/* A job being served: its ranks' summaries, and any rank's view and
 * profile made when first asked for, under one lock (the server answers
 * on several threads; the job's analysis is not reentrant). */
typedef struct served_job {
    cmd_job_state *state;
    const prof_tuning *tuning;
    char **paths;
    size_t n;
    pthread_mutex_t lock;
    cmd_trace *traces;       /* each rank's imported trace, when asked for  */
    const char **readable;   /* each rank's profile to read events from     */
    struct {
        size_t index;
        char *text;
    } kept[JOB_VIEWS_KEPT];  /* views made, the oldest replaced first       */
    size_t next;
} served_job;

/* The view of rank index, made or kept. Called with the lock held. */
static char *job_rank_view(served_job *j, size_t index, char *why, size_t size)
{
    for (size_t k = 0; k < JOB_VIEWS_KEPT; k++)
        if (j->kept[k].text && j->kept[k].index == index)
            return strdup(j->kept[k].text);
    char msg[CMD_MESSAGE_MAX];
    cJSON *report = NULL;
    if (cmd_job_rank_report(CMD, j->state, index, &report, msg, sizeof msg) != EXIT_OK) {
        snprintf(why, size, "%s", msg);
        return NULL;
    }
    prof_error err = { PROF_OK, "" };
    const cJSON *one = report;
    char *text = view_document(&one, 1, NULL, &err);
    cJSON_Delete(report);
    if (!text) {
        snprintf(why, size, "out of memory");
        return NULL;
    }
    size_t k = j->next++ % JOB_VIEWS_KEPT;
    free(j->kept[k].text);
    j->kept[k].index = index;
    j->kept[k].text = text;
    char *copy = strdup(text);
    if (!copy)
        snprintf(why, size, "out of memory");
    return copy;
}

static char *job_view(void *ctx, long rank, int *found, char *why, size_t size)
{
    served_job *j = ctx;
    pthread_mutex_lock(&j->lock);
    size_t index = cmd_job_rank_index(j->state, rank);
    *found = index != SIZE_MAX;
    char *text = *found ? job_rank_view(j, index, why, size) : NULL;
    pthread_mutex_unlock(&j->lock);
    return text;
}

/* A rank's profile for its timeline: a trace is imported when first asked
 * for, and kept until the server stops. */
static const char *job_path(void *ctx, long rank, int *found, char *why, size_t size)
{
    served_job *j = ctx;
    pthread_mutex_lock(&j->lock);
    size_t index = cmd_job_rank_index(j->state, rank);
    const char *path = NULL;
    *found = index != SIZE_MAX;
    if (*found && !j->readable[index] &&
        cmd_trace_open(CMD, j->tuning, j->paths[index], &j->traces[index],
                       &j->readable[index]) != EXIT_OK)
        snprintf(why, size, "cannot import rank %ld's trace", rank);
    if (*found)
        path = j->readable[index];
    pthread_mutex_unlock(&j->lock);
    return path;
}

static int served_job_init(served_job *j, cmd_job_state *state, const prof_tuning *t,
                           char **paths, size_t n)
{
    memset(j, 0, sizeof *j);
    j->state = state;
    j->tuning = t;
    j->paths = paths;
    j->n = n;
    j->traces = calloc(n, sizeof *j->traces);
    j->readable = calloc(n, sizeof *j->readable);
    if (!j->traces || !j->readable)
        return -1;
    for (size_t i = 0; i < n; i++)
        j->traces[i].fd = -1;
    pthread_mutex_init(&j->lock, NULL);
    return 0;
}

static void served_job_free(served_job *j)
{
    for (size_t i = 0; j->traces && i < j->n; i++)
        cmd_trace_release(&j->traces[i]);
    for (size_t k = 0; k < JOB_VIEWS_KEPT; k++)
        free(j->kept[k].text);
    if (j->traces && j->readable)
        pthread_mutex_destroy(&j->lock);
    free(j->traces);
    free(j->readable);
}

/* A directory of the ranks of one job: the job's report (cmd_job_report),
 * its described rank's profile behind the timeline, and any other rank's
 * view and timeline when the page asks for it (served_job). */
static int view_job(char **argv, const view_args *a)
{
    cmd_job job;
    int status = cmd_job_operands(CMD, a->tuning, 1, argv, &job);
    if (status != EXIT_OK)
        return status;
    if (job.summary_files || job.n < 2) {
        cmd_job_free(&job);
        return cmd_usage_error(CMD, "'%s' holds %s: prof view takes a directory of the "
                               "profiles of two or more ranks of one job", argv[0],
                               job.summary_files ? "rank summaries, which have no timeline "
                                                   "(prof analyze merges them)"
                                                 : "one profile");
    }
    analysis_options opts;
    analysis_options_default(&opts);
    opts.top = VIEW_PAGE_ROWS;
    opts.others = 1;
    opts.rank = a->rank;
    opts.tuning = a->tuning;
    cJSON *report = NULL;
    cmd_job_state *state = NULL;
    served_job served;
    memset(&served, 0, sizeof served);
    status = cmd_job_open(CMD, job.paths, job.n, 0, &opts, &state);
    size_t d = status == EXIT_OK ? cmd_job_described(state) : 0;
    if (status == EXIT_OK)
        status = cmd_job_rank_report(CMD, state, d, &report, NULL, 0);
    if (status == EXIT_OK && a->html) {
        status = write_html(a->html, &report, 1, NULL);
    } else if (status == EXIT_OK && served_job_init(&served, state, a->tuning, job.paths, job.n) != 0) {
        status = cmd_error(CMD, EXIT_NOMEM, "out of memory");
    } else if (status == EXIT_OK &&
               (status = cmd_trace_open(CMD, a->tuning, job.paths[d], &served.traces[d],
                                        &served.readable[d])) == EXIT_OK) {
        view_job_source src = { &served, cmd_job_rank(state, d), job_view, job_path };
        status = serve(&job.paths[d], &served.readable[d], 1, &report, NULL, &src, a);
    }
    served_job_free(&served);
    cJSON_Delete(report);
    cmd_job_close(state);
    cmd_job_free(&job);
    return status;
}

static int view_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    view_args *a = args;
    a->tuning = t;
    struct stat st;
    if (argc < 1)
        return cmd_usage_error(CMD, "no profile given");
    if (argc == 1 && stat(argv[0], &st) == 0 && S_ISDIR(st.st_mode))
        return view_job(argv, a);
    if (a->rank != ANALYSIS_RANK_SLOWEST)
        return cmd_usage_error(CMD, "--rank applies to a directory of ranks");
    if (argc > 2)
        return cmd_usage_error(CMD, "takes one profile, or two to compare");
    size_t n = (size_t)argc;
    cJSON *reports[VIEW_MAX_PROFILES] = { NULL, NULL }, *compare = NULL;
    /* traces are imported once, and their profiles kept while the server
     * reads windows of them */
    cmd_trace traces[VIEW_MAX_PROFILES] = { { -1, "" }, { -1, "" } };
    const char *readable[VIEW_MAX_PROFILES] = { NULL, NULL };
    int status = EXIT_OK;
    for (size_t i = 0; status == EXIT_OK && i < n; i++)
        status = cmd_trace_open(CMD, t, argv[i], &traces[i], &readable[i]);
    if (status == EXIT_OK)
        status = build_reports(argv, readable, n, t, reports, &compare);
    if (status == EXIT_OK)
        status = a->html ? write_html(a->html, reports, n, compare)
                         : serve(argv, readable, n, reports, compare, NULL, a);
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(reports[i]);
        cmd_trace_release(&traces[i]);
    }
    cJSON_Delete(compare);
    return status;
}

const cmd_spec cmd_view = { usage, "p:b:", long_options, sizeof(view_args), init_args,
                            parse_option, view_main };
