/* analyze.c - `prof analyze RUN.prof [RUN2.prof ...]`: loads the profiles
 * (several are the ranks of one job), builds the report and renders it as
 * text, JSON or CSV. Options, exit statuses and messages follow DESIGN §5;
 * the analysis itself is src/analysis/, the views src/output/. */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/report.h"
#include "cmd.h"
#include "model/profile.h"
#include "output/html.h"
#include "output/report_csv.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "util/outfile.h"
#include "util/progress.h"

#define CMD "analyze"

static const char usage[] =
    "usage: prof analyze RUN.prof [RUN2.prof ...] [-o FILE]\n"
    "                    [--format text|json|csv|html] [--top N]\n"
    "                    [--hot-threshold PCT] [--leak-threshold MB]\n"
    "                    [--sync-threshold PCT] [--capacity BYTES]\n"
    "                    [--table TABLE] [--fail-on high|medium|low] [--no-color]\n"
    "\n"
    "Tells where a training run's time goes, what is wrong and what to do about it:\n"
    "a summary of steps, time and memory, the operations with the most self time,\n"
    "and the bottlenecks found by the rules of formats/rules.md, most severe first,\n"
    "each with a recommendation. Several profiles are the ranks of one job (each a\n"
    "different rank of the same world size); the report then compares the ranks.\n"
    "A profile that was cut short is analyzed up to its last intact block.\n"
    "\n"
    "  -o, --output FILE        write the report to FILE (whole or not at all)\n"
    "                           instead of standard output\n"
    "      --format FORMAT      text (default), json (the report of\n"
    "                           formats/report.schema.json), csv, or html (one\n"
    "                           self-contained page, as prof view --html)\n"
    "      --top N              operations to list, by self time (default 20;\n"
    "                           0 lists all)\n"
    "      --hot-threshold PCT  self-time share that makes an operation hot\n"
    "                           (default 10)\n"
    "      --leak-threshold MB  memory growth per step, in MiB, that counts as a\n"
    "                           leak (default 10)\n"
    "      --sync-threshold PCT share of time blocked on the GPU that is flagged\n"
    "                           (default 10)\n"
    "      --capacity BYTES     memory capacity for the out-of-memory projection,\n"
    "                           with an optional K, M, G or T suffix (powers of\n"
    "                           1024); default: from the profile's metadata\n"
    "      --table TABLE        the CSV table: ops (default), steps, memory or\n"
    "                           bottlenecks\n"
    "      --fail-on SEVERITY   exit with status 1 when a bottleneck of this\n"
    "                           severity or higher is found (high, medium, low)\n"
    "      --no-color           no colour, even on a terminal\n"
    "  -h, --help               show this help\n"
    "\n"
    "Text output uses colour and Unicode bars only on a terminal, and no colour\n"
    "when NO_COLOR is set. Loading a large profile shows a progress bar on\n"
    "standard error when it is a terminal.\n"
    "\n"
    "Exit status: 0 success (also for a cut-short profile), 1 a bottleneck at or\n"
    "above --fail-on, 2 usage error (also profiles that are not ranks of one\n"
    "job), 3 unreadable or corrupt input, 4 output error.\n";

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_HTML } out_format;

typedef struct analyze_args {
    const char *output;        /* NULL: standard output */
    out_format format;
    report_table table;
    int table_given;
    int fail_on;               /* 0 high, 1 medium, 2 low; -1 off */
    int no_color;
    analysis_options opts;
} analyze_args;

enum {
    OPT_FORMAT = 256, OPT_TOP, OPT_HOT, OPT_LEAK, OPT_SYNC, OPT_CAPACITY, OPT_TABLE,
    OPT_FAIL_ON, OPT_NO_COLOR
};

static const char *const severities[] = { "high", "medium", "low" };

static int severity_rank(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, severities[i]) == 0)
            return i;
    return -1;
}

/* A finite number ≥ 0 (≤ max when max > 0); -1 when arg is not one. */
static int parse_amount(const char *arg, double max, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !isfinite(v) || v < 0 || (max > 0 && v > max))
        return -1;
    *out = v;
    return 0;
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

static int parse_format(const char *arg, out_format *f)
{
    if (strcmp(arg, "text") == 0)
        *f = FORMAT_TEXT;
    else if (strcmp(arg, "json") == 0)
        *f = FORMAT_JSON;
    else if (strcmp(arg, "csv") == 0)
        *f = FORMAT_CSV;
    else if (strcmp(arg, "html") == 0)
        *f = FORMAT_HTML;
    else
        return -1;
    return 0;
}

/* One option's value into a; EXIT_OK or a usage error. */
static int parse_option(int c, const char *arg, analyze_args *a)
{
    double v;
    switch (c) {
    case 'o':
        a->output = arg;
        return EXIT_OK;
    case OPT_FORMAT:
        if (parse_format(arg, &a->format) != 0)
            return cmd_usage_error(CMD, "unknown format '%s': use text, json, csv or html", arg);
        return EXIT_OK;
    case OPT_TOP:
        if (parse_amount(arg, INT_MAX, &v) != 0 || v != floor(v))
            return cmd_usage_error(CMD, "--top takes a whole number of operations, not '%s'", arg);
        a->opts.top = (int)v;
        return EXIT_OK;
    case OPT_HOT:
    case OPT_SYNC:
        if (parse_amount(arg, 100, &v) != 0)
            return cmd_usage_error(CMD, "--%s-threshold takes a percentage (0 to 100), not '%s'",
                                   c == OPT_HOT ? "hot" : "sync", arg);
        *(c == OPT_HOT ? &a->opts.hot_threshold_pct : &a->opts.sync_threshold_pct) = v;
        return EXIT_OK;
    case OPT_LEAK:
        if (parse_amount(arg, 0, &v) != 0)
            return cmd_usage_error(CMD, "--leak-threshold takes MiB per step, not '%s'", arg);
        a->opts.leak_threshold_mb = v;
        return EXIT_OK;
    case OPT_CAPACITY:
        if (parse_capacity(arg, &a->opts.capacity_bytes) != 0)
            return cmd_usage_error(CMD, "--capacity takes a size such as 16G, not '%s'", arg);
        return EXIT_OK;
    case OPT_TABLE:
        if (report_table_parse(arg, &a->table) != 0)
            return cmd_usage_error(CMD, "unknown table '%s': use ops, steps, memory or bottlenecks",
                                   arg);
        a->table_given = 1;
        return EXIT_OK;
    case OPT_FAIL_ON:
        if ((a->fail_on = severity_rank(arg)) < 0)
            return cmd_usage_error(CMD, "--fail-on takes high, medium or low, not '%s'", arg);
        return EXIT_OK;
    case OPT_NO_COLOR:
        a->no_color = 1;
        return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* After getopt_long answered '?' with arg = argv[optind - 1]: a long option
 * is that argument; a short one is optopt, and arg may be the argument
 * before it when it sits inside a cluster ("-xq"). */
static int bad_option(const char *arg)
{
    int is_long = strncmp(arg, "--", 2) == 0 &&
                  (optopt == 0 || optopt >= OPT_FORMAT || strchr(arg, '=') != NULL);
    if (!is_long)
        return cmd_usage_error(CMD, "unknown option '-%c'", optopt);
    if (optopt != 0) /* a known one, given a value it does not take */
        return cmd_usage_error(CMD, "option '%s' takes no value", arg);
    return cmd_usage_error(CMD, "unknown option '%s'", arg);
}

/* Parses argv; the profiles start at *first. EXIT_OK, EXIT_USAGE, or -1
 * when --help was answered (with its status in *status). */
static int parse_args(int argc, char **argv, analyze_args *a, int *first, int *status)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "format", required_argument, NULL, OPT_FORMAT },
        { "top", required_argument, NULL, OPT_TOP },
        { "hot-threshold", required_argument, NULL, OPT_HOT },
        { "leak-threshold", required_argument, NULL, OPT_LEAK },
        { "sync-threshold", required_argument, NULL, OPT_SYNC },
        { "capacity", required_argument, NULL, OPT_CAPACITY },
        { "table", required_argument, NULL, OPT_TABLE },
        { "fail-on", required_argument, NULL, OPT_FAIL_ON },
        { "no-color", no_argument, NULL, OPT_NO_COLOR },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 }
    };
    memset(a, 0, sizeof *a);
    a->fail_on = -1;
    analysis_options_default(&a->opts);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *status = cmd_finish_stdout(CMD);
            return -1;
        }
        if (c == ':')
            return cmd_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        if (c == '?')
            return bad_option(argv[optind - 1]);
        int rc = parse_option(c, optarg, a);
        if (rc != EXIT_OK)
            return rc;
    }
    if (optind == argc)
        return cmd_usage_error(CMD, "no profile given");
    if (a->table_given && a->format != FORMAT_CSV)
        return cmd_usage_error(CMD, "--table applies to --format csv");
    *first = optind;
    return EXIT_OK;
}

/* ---- loading ---------------------------------------------------------------------- */

static void warn_cut_short(const profile_model *m)
{
    if (m->status.truncated)
        cmd_error(CMD, "warning: '%s' was cut short (%s); analyzed up to its last intact block",
                  m->path ? m->path : "", m->status.detail);
}

/* Loads every profile into models[0..n). EXIT_OK or the input status, with
 * the error reported. */
static int load_profiles(char **paths, size_t n, profile_model *models)
{
    int tty = isatty(STDERR_FILENO);
    for (size_t i = 0; i < n; i++) {
        progress bar;
        prof_error err = { PROF_OK, "" };
        progress_init(&bar, stderr, tty, paths[i]);
        prof_err e = profile_model_load(paths[i], &models[i], progress_update, &bar, &err);
        progress_done(&bar);
        if (e != PROF_OK) {
            cmd_error(CMD, "cannot read '%s': %s", paths[i], err.message);
            return cmd_input_status(e);
        }
    }
    return EXIT_OK;
}

/* ---- output ------------------------------------------------------------------------- */

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

/* Colour and Unicode only when writing to a terminal (DESIGN §5). */
static report_style text_style(const analyze_args *a)
{
    report_style st = { 0, 0, 0 };
    int to_stdout = !a->output || strcmp(a->output, "-") == 0;
    if (!to_stdout || !isatty(STDOUT_FILENO))
        return st;
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    st.color = !a->no_color && !(no_color && *no_color) && !(term && strcmp(term, "dumb") == 0);
    st.unicode = utf8_locale();
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
        st.width = ws.ws_col;
    return st;
}

static prof_err render(FILE *out, const cJSON *report, const analyze_args *a)
{
    prof_error err = { PROF_OK, "" };
    switch (a->format) {
    case FORMAT_JSON: return report_render_json(out, report);
    case FORMAT_CSV: return report_render_csv(out, report, a->table);
    case FORMAT_HTML: return report_render_html(out, report, NULL, &err);
    case FORMAT_TEXT: break;
    }
    report_style st = text_style(a);
    return report_render_text(out, report, &st);
}

static int write_report(const cJSON *report, const analyze_args *a)
{
    outfile of;
    prof_error err = { PROF_OK, "" };
    if (outfile_open(&of, a->output, &err) != PROF_OK) {
        cmd_error(CMD, "%s", err.message);
        return EXIT_OUTPUT;
    }
    prof_err e = render(of.fp, report, a);
    if (e == PROF_ERR_NOMEM) {
        outfile_abort(&of);
        cmd_error(CMD, "cannot write the report: out of memory");
        return EXIT_OUTPUT;
    }
    /* A failed write is caught again here, with its message. */
    if (outfile_commit(&of, &err) != PROF_OK) {
        cmd_error(CMD, "%s", err.message);
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* 1 when a bottleneck is at least as severe as --fail-on asks. */
static int fails(const cJSON *report, int fail_on)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(report, "bottlenecks")) {
        const char *sev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "severity"));
        int rank = sev ? severity_rank(sev) : -1;
        if (rank >= 0 && rank <= fail_on)
            return 1;
    }
    return 0;
}

static int analyze(const profile_model *const *models, size_t n, const analyze_args *a)
{
    prof_error err = { PROF_OK, "" };
    cJSON *report = report_build(models, n, &a->opts, &err);
    if (!report) {
        if (err.code == PROF_ERR_INVALID)
            return cmd_usage_error(CMD, "%s", err.message);
        cmd_error(CMD, "cannot analyze: %s", err.message);
        return cmd_input_status(err.code);
    }
    if (a->format == FORMAT_CSV)
        for (size_t i = 0; i < n; i++)
            warn_cut_short(models[i]);
    int status = write_report(report, a);
    if (status == EXIT_OK && a->fail_on >= 0 && fails(report, a->fail_on))
        status = EXIT_FINDINGS;
    cJSON_Delete(report);
    return status;
}

int cmd_analyze(int argc, char **argv)
{
    analyze_args a;
    int first = 0, status = EXIT_OK;
    int rc = parse_args(argc, argv, &a, &first, &status);
    if (rc != EXIT_OK)
        return rc < 0 ? status : rc;
    size_t n = (size_t)(argc - first);
    profile_model *models = calloc(n, sizeof *models);
    const profile_model **views = calloc(n, sizeof *views);
    if (!models || !views) {
        cmd_error(CMD, "out of memory");
        status = EXIT_INPUT;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        views[i] = &models[i];
    status = load_profiles(argv + first, n, models);
    if (status == EXIT_OK)
        status = analyze(views, n, &a);
out:
    if (models)
        for (size_t i = 0; i < n; i++)
            profile_model_free(&models[i]);
    free(models);
    free(views);
    return status;
}
