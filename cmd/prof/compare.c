/* compare.c - `prof compare BEFORE AFTER`: each side a profile or a
 * directory of profiles of repeated runs (src/model/runset.c says which
 * profiles are ranks of one run). Loads each run, builds its analyze report
 * with every operation kept and trims it to what compare reads, compares
 * the two sides (src/analysis/compare.c) and renders the comparison as
 * text, JSON or CSV, its operations' rows built one at a time.
 * Exit 1 when --fail-on-regression finds a significant slowdown. */
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "cmd.h"
#include "model/profile.h"
#include "model/runset.h"
#include "output/compare_csv.h"
#include "output/compare_json.h"
#include "output/compare_text.h"

#define CMD "compare"

static const char usage[] =
    "usage: prof compare BEFORE AFTER [-o FILE] [--format text|json|csv]\n"
    "                    [--fail-on-regression PCT [--ops-within-run]] [--noise PCT]\n"
    "                    " CMD_ANALYSIS_USAGE
    "                    [--no-color] [--wide]\n"
    "\n"
    "Shows whether a change made a training run faster or slower. BEFORE and\n"
    "AFTER are each a profile or a directory of profiles of repeated runs of one\n"
    "program (the profiles of the ranks of one job in it form one run). Shows\n"
    "the summary metrics side by side with their change (steps, profiled time,\n"
    "mean step time after warm-up, p50 / p95 step time, peak memory, memory\n"
    "slope and leak verdict per series, speedup), every operation's calls, total\n"
    "and mean per call with the change of the mean and its test, the operations\n"
    "found on one side only, and the bottlenecks fixed, new and persisting.\n"
    "\n"
    "A change is significant when it is larger than the noise floor with 99%\n"
    "confidence (its whole interval lies beyond the floor; p is that of the change\n"
    "being within it).\n"
    "With two or more runs on a side, p comes from the variation between runs\n"
    "(Welch's t-test on per-run means). With one run a side it comes from the\n"
    "variation within each run (batch means, allowing for correlated steps), and\n"
    "run-to-run variation is unknown: repeat the runs to measure it. Side values\n"
    "are means over runs; a leak or bottleneck belongs to a side when at least\n"
    "half of its runs have it.\n"
    "\n"
    "  -o, --output FILE            write to FILE (whole or not at all) instead of\n"
    "                               standard output\n"
    "      --format FORMAT          text (default), json (formats/compare.schema.json)\n"
    "                               or csv (one table, columns in prof-compare(1))\n"
    "      --fail-on-regression PCT exit with status 1 when the mean step time, or an\n"
    "                               operation taking at least 5% of the time on\n"
    "                               either side, is significantly slower by more\n"
    "                               than PCT percent; with one run a side, only the\n"
    "                               step time, when its whole 99% interval is past PCT\n"
    "      --ops-within-run         with one run a side, an operation whose whole\n"
    "                               within-run interval is past PCT fails the check\n"
    "                               too (one process may simply have run slower:\n"
    "                               repeat the runs to know)\n"
    "      --noise PCT              changes of PCT percent or less are noise, never\n"
    "                               significant (default 5)\n"
    CMD_ANALYSIS_HELP
    "      --no-color               no colour, even on a terminal\n"
    "      --wide                   whole names in the text tables (long kernel\n"
    "                               and template names are shortened to fit)\n"
    "  -h, --help                   show this help\n"
    "\n"
    "Text output uses colour only on a terminal, and no colour when NO_COLOR is\n"
    "set. Loading a large profile shows a progress bar on standard error when it\n"
    "is a terminal.\n"
    "\n"
    "Exit status: 0 success, 1 a regression past --fail-on-regression, 2 usage\n"
    "error (also profiles in a run that are not ranks of one job), 3 unreadable\n"
    "or corrupt input (also a directory without profiles), 4 output error,\n"
    "5 out of memory.\n";

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV } out_format;

typedef struct compare_args {
    const char *output;    /* NULL: standard output */
    out_format format;
    int no_color;
    int wide;
    compare_options opts;
    analysis_options analysis;
} compare_args;

enum { OPT_FORMAT = CMD_FIRST_LONG, OPT_FAIL, OPT_NOISE, OPT_NO_COLOR, OPT_WIDE, OPT_WITHIN };

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "fail-on-regression", required_argument, NULL, OPT_FAIL },
    { "noise", required_argument, NULL, OPT_NOISE },
    { "ops-within-run", no_argument, NULL, OPT_WITHIN },
    CMD_ANALYSIS_OPTIONS,
    { "no-color", no_argument, NULL, OPT_NO_COLOR },
    { "wide", no_argument, NULL, OPT_WIDE },
    { 0, 0, 0, 0 }
};

static const char *const formats[] = { "text", "json", "csv", NULL };

static void init_args(void *args)
{
    compare_args *a = args;
    compare_options_default(&a->opts);
    analysis_options_default(&a->analysis);
    a->analysis.top = 0;
    a->analysis.list_points = 0; /* compared: summaries and fits, never the points */
}

/* One option's value into a; EXIT_OK or a usage error. */
static int parse_option(void *args, int c, const char *arg)
{
    compare_args *a = args;
    int f, rc = cmd_analysis_option(CMD, c, arg, &a->analysis);
    if (rc >= 0)
        return rc;
    switch (c) {
    case 'o':
        a->output = arg;
        return EXIT_OK;
    case OPT_FORMAT:
        if ((f = cmd_name_index(formats, arg)) < 0)
            return cmd_usage_error(CMD, "unknown format '%s': use text, json or csv", arg);
        a->format = (out_format)f;
        return EXIT_OK;
    case OPT_FAIL:
        if (cmd_parse_amount(arg, 0, &a->opts.regression_pct) != 0)
            return cmd_usage_error(CMD, "--fail-on-regression takes a percentage, not '%s'", arg);
        return EXIT_OK;
    case OPT_NOISE:
        if (cmd_parse_amount(arg, 0, &a->opts.noise_pct) != 0)
            return cmd_usage_error(CMD, "--noise takes a percentage, not '%s'", arg);
        return EXIT_OK;
    case OPT_WITHIN:
        a->opts.ops_within_run = 1;
        return EXIT_OK;
    case OPT_WIDE:
        a->wide = 1;
        return EXIT_OK;
    case OPT_NO_COLOR:
        a->no_color = 1;
        return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* ---- loading and analysis ---------------------------------------------------- */

/* One side: its runs, trimmed. */
typedef struct side {
    const char *path;
    compare_run **runs;
    size_t n;
} side;

/* The analyze report of one run (its ranks' profiles) into *out, each
 * operation's row trimmed as it is built: the rows of every operation of
 * every run would take more than the profiles. *out is the caller's to
 * free, also on failure. */
static int analyze_run(const runset_run *run, const analysis_options *o, compare_run **out)
{
    profile_model *m = calloc(run->npaths, sizeof *m);
    const profile_model **mp = calloc(run->npaths, sizeof *mp);
    prof_error err = { PROF_OK, "" };
    int status = m && mp ? EXIT_OK : cmd_error(CMD, EXIT_NOMEM, "out of memory");
    for (size_t i = 0; status == EXIT_OK && i < run->npaths; i++) {
        status = cmd_load_profile(CMD, o->tuning, run->paths[i], &m[i]);
        mp[i] = &m[i];
    }
    cJSON *report = NULL;
    analysis_options ro = *o;
    ro.op_row = compare_run_add_op;
    if (status == EXIT_OK && !(ro.op_arg = *out = compare_run_new()))
        status = cmd_error(CMD, EXIT_NOMEM, "out of memory");
    if (status == EXIT_OK && !(report = report_build(mp, run->npaths, &ro, &err)))
        status = cmd_error(CMD, err.code == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_USAGE,
                           "cannot analyze '%s': %s", run->paths[0], err.message);
    for (size_t i = 0; m && i < run->npaths; i++)
        profile_model_free(&m[i]);
    if (report && compare_run_take(*out, report, &err) != PROF_OK)
        status = cmd_error(CMD, err.code == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_INPUT,
                           "cannot compare '%s': %s", run->paths[0], err.message);
    free(m);
    free(mp);
    return status;
}

/* Finds and analyzes the runs of a side, one run loaded at a time. */
static int load_side(const char *path, const analysis_options *o, side *s)
{
    runset rs;
    prof_error err = { PROF_OK, "" };
    s->path = path;
    prof_err e = runset_find(path, o->tuning, &rs, &err);
    if (e != PROF_OK)
        return cmd_error(CMD, cmd_input_status(e), "%s", err.message);
    int status = EXIT_OK;
    if (!(s->runs = calloc(rs.nruns, sizeof *s->runs)))
        status = cmd_error(CMD, EXIT_NOMEM, "out of memory");
    for (size_t i = 0; status == EXIT_OK && i < rs.nruns; i++) {
        status = analyze_run(&rs.runs[i], o, &s->runs[i]);
        if (status != EXIT_OK)
            compare_run_free(s->runs[i]);
        s->n += status == EXIT_OK;
    }
    runset_free(&rs);
    return status;
}

static void free_side(side *s)
{
    for (size_t i = 0; i < s->n; i++)
        compare_run_free(s->runs[i]);
    free(s->runs);
}

/* ---- output ---------------------------------------------------------------------- */

/* What rendering reads besides the comparison: its operations' rows. */
typedef struct render_args {
    const compare_args *a;
    const compare_ops *ops;
} render_args;

static prof_err render(FILE *out, const cJSON *cmp, const void *args)
{
    const render_args *r = args;
    const compare_args *a = r->a;
    switch (a->format) {
    case FORMAT_JSON: return compare_render_json(out, cmp, r->ops);
    case FORMAT_CSV: return compare_render_csv_ops(out, cmp, r->ops);
    case FORMAT_TEXT: break;
    }
    report_style st = cmd_text_style(a->output, a->no_color);
    st.wide = a->wide;
    return compare_render_text_ops(out, cmp, r->ops, &st);
}

static int compare(char **paths, const compare_args *a)
{
    side sides[2];
    cJSON *cmp = NULL;
    compare_ops *ops = NULL;
    prof_error err = { PROF_OK, "" };
    memset(sides, 0, sizeof sides);
    int status = EXIT_OK;
    for (int i = 0; i < 2 && status == EXIT_OK; i++)
        status = load_side(paths[i], &a->analysis, &sides[i]);
    if (status != EXIT_OK)
        goto out;
    compare_run_side cb = { sides[0].runs, sides[0].n, sides[0].path };
    compare_run_side ca = { sides[1].runs, sides[1].n, sides[1].path };
    cmp = compare_build_runs(&cb, &ca, &a->opts, &ops, &err);
    if (!cmp) {
        status = cmd_error(CMD, err.code == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_INPUT,
                           "cannot compare: %s", err.message);
        goto out;
    }
    render_args ra = { a, ops };
    status = cmd_write_output(CMD, a->output, "the comparison", render, cmp, &ra);
    if (status == EXIT_OK && compare_regressed(cmp))
        status = EXIT_FINDINGS;
out:
    cJSON_Delete(cmp);
    compare_ops_free(ops);
    free_side(&sides[0]);
    free_side(&sides[1]);
    return status;
}

static int compare_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    compare_args *a = args;
    a->analysis.tuning = t;
    if (argc != 2)
        return cmd_usage_error(CMD, argc < 2 ? "needs two sides, BEFORE and AFTER"
                                             : "takes exactly two sides, BEFORE and AFTER");
    if (a->opts.ops_within_run && a->opts.regression_pct < 0)
        return cmd_usage_error(CMD, "--ops-within-run applies to --fail-on-regression");
    return compare(argv, args);
}

const cmd_spec cmd_compare = { usage, "o:", long_options, sizeof(compare_args), init_args,
                               parse_option, compare_main };
