/* analyze.c - `prof analyze RUN.prof [RUN2.prof ...]` or `prof analyze DIR`:
 * loads the profiles (several, or a directory's, are the ranks of one
 * job), builds the report and renders it as
 * text, JSON or CSV. Options, exit statuses and messages follow DESIGN §5;
 * the analysis itself is src/analysis/, the views src/output/. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/report_keys.h"
#include "cmd.h"
#include "model/profile.h"
#include "output/html.h"
#include "output/report_csv.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "util/error.h"

#define CMD "analyze"

static const char usage[] =
    "usage: prof analyze RUN.prof [RUN2.prof ...] [-o FILE]\n"
    "       prof analyze DIR [-o FILE]\n"
    "       prof analyze --summary RANK.prof [-o RANK.summary.json]\n"
    "       prof analyze SUMMARY.json [SUMMARY2.json ...] [-o FILE]\n"
    "                    [--format text|json|csv|html] [--top N] [--sort self|gpu]\n"
    "                    [--rank N]\n"
    "                    " CMD_ANALYSIS_USAGE
    "                    [--table TABLE] [--points N] [--fail-on high|medium|low]\n"
    "                    [--no-color] [--wide]\n"
    "\n"
    "Tells where a training run's time goes, what is wrong and what to do about it:\n"
    "a summary of steps, time and memory, the operations with the most self time,\n"
    "and the bottlenecks found by the rules of formats/rules.md, most severe first,\n"
    "each with a recommendation. Several profiles, or a directory of them (traces\n"
    "too), are the ranks of one job (each a different rank of the same world size):\n"
    "the report then has a row per rank and the cross-rank findings, and describes\n"
    "in full the rank that holds the job back (the one the others wait for most in\n"
    "collectives, else the longest mean step), or the one --rank names. Ranks are\n"
    "analysed in parallel, one at a time per core, each reduced to a small summary.\n"
    "--summary writes that summary for one rank, so that the ranks of a large job\n"
    "can be analysed where they were recorded (a Slurm array, a Dask cluster) and\n"
    "merged by giving the summary files (or their directory) to prof analyze.\n"
    "A profile that was cut short is analyzed up to its last intact block.\n"
    "\n"
    "  -o, --output FILE        write the report to FILE (whole or not at all)\n"
    "                           instead of standard output\n"
    "      --format FORMAT      text (default), json (the report of\n"
    "                           formats/report.schema.json), csv, or html (one\n"
    "                           self-contained page, as prof view --html)\n"
    "      --top N              operations to list (default 20; 0 lists all)\n"
    "      --sort KEY           order of the operations: self (self time, the\n"
    "                           default) or gpu (GPU time launched in them, from\n"
    "                           the join of kernels to their launches)\n"
    "      --summary            write the rank summary of one profile (JSON,\n"
    "                           formats/rank-summary.md) instead of a report; its\n"
    "                           report is built with the options given here\n"
    "      --rank N             of the ranks of one job, the one the report\n"
    "                           describes in full (default: the one that holds\n"
    "                           the job back)\n"
    CMD_ANALYSIS_HELP
    "      --table TABLE        the CSV table: ops (default), steps, memory,\n"
    "                           bottlenecks, kernels, gpu (one row a device,\n"
    "                           HTA's breakdowns beside) or ranks (one row a\n"
    "                           rank of one job)\n"
    "      --points N           points kept of each step, memory and counter\n"
    "                           series: a longer series keeps its first and last\n"
    "                           point and the lowest and highest of each run of\n"
    "                           points between (default 2000; 0 keeps all, the\n"
    "                           default of the CSV tables)\n"
    "      --fail-on SEVERITY   exit with status 1 when a bottleneck of this\n"
    "                           severity or higher is found (high, medium, low)\n"
    "      --no-color           no colour, even on a terminal\n"
    "      --wide               whole names in the text tables (long kernel\n"
    "                           and template names are shortened to fit)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Text output uses colour and Unicode bars only on a terminal, and no colour\n"
    "when NO_COLOR is set. Loading a large profile shows a progress bar on\n"
    "standard error when it is a terminal.\n"
    "\n"
    "Exit status: 0 success (also for a cut-short profile), 1 a bottleneck at or\n"
    "above --fail-on, 2 usage error (also profiles that are not ranks of one\n"
    "job), 3 unreadable or corrupt input, 4 output error, 5 out of memory.\n";

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_HTML } out_format;

typedef struct analyze_args {
    const char *output;        /* NULL: standard output */
    out_format format;
    report_table table;
    int table_given;
    int fail_on;               /* 0 high, 1 medium, 2 low; -1 off */
    int no_color;
    int wide;
    int points_given;
    int format_given;
    int summary;               /* --summary */
    analysis_options opts;
} analyze_args;

enum {
    OPT_FORMAT = CMD_FIRST_LONG, OPT_TOP, OPT_SORT, OPT_TABLE, OPT_FAIL_ON, OPT_NO_COLOR, OPT_WIDE,
    OPT_POINTS, OPT_RANK, OPT_SUMMARY
};

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "top", required_argument, NULL, OPT_TOP },
    { "sort", required_argument, NULL, OPT_SORT },
    { "rank", required_argument, NULL, OPT_RANK },
    { "summary", no_argument, NULL, OPT_SUMMARY },
    CMD_ANALYSIS_OPTIONS,
    { "table", required_argument, NULL, OPT_TABLE },
    { "points", required_argument, NULL, OPT_POINTS },
    { "fail-on", required_argument, NULL, OPT_FAIL_ON },
    { "no-color", no_argument, NULL, OPT_NO_COLOR },
    { "wide", no_argument, NULL, OPT_WIDE },
    { 0, 0, 0, 0 }
};

static const char *const formats[] = { "text", "json", "csv", "html", NULL };
static const char *const sort_keys[] = { "self", "gpu", NULL };
static const char *const severities[] = { "high", "medium", "low", NULL };

static void init_args(void *args)
{
    analyze_args *a = args;
    a->fail_on = -1;
    analysis_options_default(&a->opts);
    a->opts.rank = ANALYSIS_RANK_SLOWEST;
}

/* One option's value into a; EXIT_OK or a usage error. */
static int parse_option(void *args, int c, const char *arg)
{
    analyze_args *a = args;
    double v;
    int f, rc = cmd_analysis_option(CMD, c, arg, &a->opts);
    if (rc >= 0)
        return rc;
    switch (c) {
    case 'o':
        a->output = arg;
        return EXIT_OK;
    case OPT_FORMAT:
        if ((f = cmd_name_index(formats, arg)) < 0)
            return cmd_usage_error(CMD, "unknown format '%s': use text, json, csv or html", arg);
        a->format = (out_format)f;
        a->format_given = 1;
        return EXIT_OK;
    case OPT_TOP:
        if (cmd_parse_amount(arg, INT_MAX, &v) != 0 || v != floor(v))
            return cmd_usage_error(CMD, "--top takes a whole number of operations, not '%s'", arg);
        a->opts.top = (int)v;
        return EXIT_OK;
    case OPT_SORT:
        if ((f = cmd_name_index(sort_keys, arg)) < 0)
            return cmd_usage_error(CMD, "--sort takes self or gpu, not '%s'", arg);
        a->opts.sort_gpu = f;
        return EXIT_OK;
    case OPT_RANK:
        if (cmd_parse_amount(arg, INT_MAX, &v) != 0 || v != floor(v))
            return cmd_usage_error(CMD, "--rank takes a rank, a whole number from 0, not '%s'",
                                   arg);
        a->opts.rank = (int)v;
        return EXIT_OK;
    case OPT_TABLE:
        if (report_table_parse(arg, &a->table) != 0)
            return cmd_usage_error(CMD, "unknown table '%s': use ops, steps, memory, "
                                   "bottlenecks, kernels, gpu or ranks", arg);
        a->table_given = 1;
        return EXIT_OK;
    case OPT_POINTS:
        if (cmd_parse_amount(arg, (double)INT_MAX, &v) != 0 || v != floor(v) || v == 1)
            return cmd_usage_error(CMD, "--points takes 0 (all) or a whole number of points "
                                   "from 2, not '%s'", arg);
        a->opts.max_points = (size_t)v;
        a->points_given = 1;
        return EXIT_OK;
    case OPT_FAIL_ON:
        if ((a->fail_on = cmd_name_index(severities, arg)) < 0)
            return cmd_usage_error(CMD, "--fail-on takes high, medium or low, not '%s'", arg);
        return EXIT_OK;
    case OPT_WIDE:
        a->wide = 1;
        return EXIT_OK;
    case OPT_SUMMARY:
        a->summary = 1;
        return EXIT_OK;
    case OPT_NO_COLOR:
        a->no_color = 1;
        return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* What the options say together: EXIT_OK or a usage error. */
static int check_args(analyze_args *a, int nprofiles)
{
    if (nprofiles == 0)
        return cmd_usage_error(CMD, "no profile given");
    if (a->table_given && a->format != FORMAT_CSV)
        return cmd_usage_error(CMD, "--table applies to --format csv");
    if (a->summary && (a->format_given || a->fail_on >= 0 || a->opts.rank != ANALYSIS_RANK_SLOWEST))
        return cmd_usage_error(CMD, "--summary writes a rank summary: no --format, --fail-on "
                               "or --rank");
    if (a->format == FORMAT_CSV && !a->points_given)
        a->opts.max_points = 0; /* a table is data to work on: every row */
    /* The text shows none of the series' points: building and freeing
     * them was about half of the time after loading, and most of the
     * report's memory. */
    if (a->format == FORMAT_TEXT)
        a->opts.list_points = 0;
    return EXIT_OK;
}

/* ---- loading ---------------------------------------------------------------------- */

/* A CSV table has no notes: a profile cut short is said on stderr. */
static void warn_cut_short(const cJSON *report)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(report, RK_PROFILES)) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, RK_TRUNCATED)))
            continue;
        const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, RK_PATH));
        const char *detail = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, RK_DETAIL));
        cmd_warning(CMD, "'%s' was cut short (%s); analyzed up to its last intact block",
                    path ? path : "", detail ? detail : "");
    }
}

/* ---- output ------------------------------------------------------------------------- */

static prof_err render(FILE *out, const cJSON *report, const void *args)
{
    const analyze_args *a = args;
    prof_error err = { PROF_OK, "" };
    switch (a->format) {
    case FORMAT_JSON: return report_render_json(out, report);
    case FORMAT_CSV: return report_render_csv(out, report, a->table);
    case FORMAT_HTML: return report_render_html(out, report, NULL, &err);
    case FORMAT_TEXT: break;
    }
    report_style st = cmd_text_style(a->output, a->no_color);
    st.wide = a->wide;
    return report_render_text(out, report, &st);
}

/* 1 when a bottleneck is at least as severe as --fail-on asks. */
static int fails(const cJSON *report, int fail_on)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(report, RK_BOTTLENECKS)) {
        const char *sev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_SEVERITY));
        int rank = sev ? cmd_name_index(severities, sev) : -1;
        if (rank >= 0 && rank <= fail_on)
            return 1;
    }
    return 0;
}

/* Writes the report (freed) as the options say; the exit status. */
static int emit(cJSON *report, const analyze_args *a)
{
    if (a->format == FORMAT_CSV)
        warn_cut_short(report);
    int status = cmd_write_output(CMD, a->output, "the report", render, report, a);
    if (status == EXIT_OK && a->fail_on >= 0 && fails(report, a->fail_on))
        status = EXIT_FINDINGS;
    cJSON_Delete(report);
    return status;
}

/* One profile or trace. */
static int analyze_one(const char *path, const analyze_args *a)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    int status = cmd_load_profile(CMD, a->opts.tuning, path, &m);
    if (status == EXIT_OK) {
        prof_error err = { PROF_OK, "" };
        const profile_model *one = &m;
        cJSON *report = report_build(&one, 1, &a->opts, &err);
        status = report ? emit(report, a) : cmd_analysis_failed(CMD, &err);
    }
    profile_model_free(&m);
    return status;
}

/* Several profiles, traces or summaries: the ranks of one job. */
static int analyze_ranks(char **paths, size_t n, int summary_files, const analyze_args *a)
{
    cJSON *report = NULL;
    int status = cmd_job_report(CMD, paths, n, summary_files, &a->opts, &report, NULL);
    return status == EXIT_OK ? emit(report, a) : status;
}

/* One summary file: the report it holds. */
static int analyze_summary(const char *path, const analyze_args *a)
{
    cJSON *report;
    int rank = -1, status = cmd_summary_report(CMD, path, &report, &rank);
    if (status != EXIT_OK)
        return status;
    if (a->opts.rank >= 0 && rank != a->opts.rank)
        status = cmd_usage_error(CMD, "--rank %d: no profile of that rank among the 1 given",
                                 a->opts.rank);
    return status == EXIT_OK ? emit(report, a) : (cJSON_Delete(report), status);
}

/* ---- --summary ---------------------------------------------------------------------- */

static prof_err render_summary(FILE *out, const cJSON *doc, const void *args)
{
    (void)args;
    return report_render_json(out, doc);
}

/* `--summary RANK.prof`: the rank's summary, for a merge elsewhere. */
static int write_summary(const char *path, const analyze_args *a)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    int status = cmd_load_profile(CMD, a->opts.tuning, path, &m);
    if (status != EXIT_OK) {
        profile_model_free(&m);
        return status;
    }
    prof_error err = { PROF_OK, "" };
    analysis_options own = a->opts;
    own.rank = ANALYSIS_RANK_FIRST;
    own.list_points = 1; /* the merge may render it as JSON */
    const profile_model *one = &m;
    cJSON *report = report_build(&one, 1, &own, &err);
    rank_summary s;
    memset(&s, 0, sizeof s);
    cJSON *doc = NULL;
    collective_store *mem = collective_store_open(-1); /* one rank's: to print them */
    if (!mem)
        status = cmd_error(CMD, EXIT_NOMEM, "out of memory"), cJSON_Delete(report);
    else if (!report || rank_summary_build(&m, report, 1, mem, &s, &err) != PROF_OK)
        status = cmd_analysis_failed(CMD, &err);
    else if (!(doc = rank_summary_json(&s)))
        status = cmd_error(CMD, EXIT_NOMEM, "out of memory writing the summary");
    else
        status = cmd_write_output(CMD, a->output, "the summary", render_summary, doc, NULL);
    cJSON_Delete(doc);
    rank_summary_free(&s);
    collective_store_close(mem);
    profile_model_free(&m);
    return status;
}

static int analyze_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    analyze_args *a = args;
    a->opts.tuning = t;
    int status = check_args(a, argc);
    if (status != EXIT_OK)
        return status;
    if (a->summary)
        return argc == 1 ? write_summary(argv[0], a)
                         : cmd_usage_error(CMD, "--summary takes one profile, a rank's");
    cmd_job job;
    if ((status = cmd_job_operands(CMD, t, argc, argv, &job)) != EXIT_OK)
        return status;
    if (job.n == 1)
        status = job.summary_files ? analyze_summary(job.paths[0], a)
                                   : analyze_one(job.paths[0], a);
    else
        status = analyze_ranks(job.paths, job.n, job.summary_files, a);
    cmd_job_free(&job);
    return status;
}

const cmd_spec cmd_analyze = { usage, "o:", long_options, sizeof(analyze_args), init_args,
                               parse_option, analyze_main };
