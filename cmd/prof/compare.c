/* compare.c - `prof compare BEFORE.prof AFTER.prof`: loads both profiles,
 * builds each one's analyze report with every operation kept, compares the
 * two (src/analysis/compare.c) and renders the comparison as text, JSON or
 * CSV. Exit 1 when --fail-on-regression finds a significant slowdown. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "cmd.h"
#include "model/profile.h"
#include "output/compare_csv.h"
#include "output/compare_text.h"
#include "output/report_json.h"

#define CMD "compare"

static const char usage[] =
    "usage: prof compare BEFORE.prof AFTER.prof [-o FILE] [--format text|json|csv]\n"
    "                    [--fail-on-regression PCT] [--noise PCT] [--no-color]\n"
    "\n"
    "Shows whether a change made a training run faster or slower: the summary\n"
    "metrics of both runs side by side with their change (steps, profiled time,\n"
    "mean / p50 / p95 step time, peak memory per series, leak verdicts, speedup),\n"
    "every operation's calls, total and mean per call in each run with the change\n"
    "of the mean and Welch's t-test on it, the operations that appear in only one\n"
    "run, and the bottlenecks fixed, new and persisting. A change is significant\n"
    "when p < 0.01 and it is larger than the noise floor. The runs may come from\n"
    "different programs: operations are matched by name, and the output says when\n"
    "step counts or sampling differ.\n"
    "\n"
    "  -o, --output FILE            write to FILE (whole or not at all) instead of\n"
    "                               standard output\n"
    "      --format FORMAT          text (default), json (formats/compare.schema.json)\n"
    "                               or csv (one table, columns in prof-compare(1))\n"
    "      --fail-on-regression PCT exit with status 1 when the mean step time, or an\n"
    "                               operation taking at least 5% of the time in\n"
    "                               either run, is significantly slower by more\n"
    "                               than PCT percent\n"
    "      --noise PCT              changes of PCT percent or less are noise, never\n"
    "                               significant (default 5)\n"
    "      --no-color               no colour, even on a terminal\n"
    "  -h, --help                   show this help\n"
    "\n"
    "Text output uses colour only on a terminal, and no colour when NO_COLOR is\n"
    "set. Loading a large profile shows a progress bar on standard error when it\n"
    "is a terminal.\n"
    "\n"
    "Exit status: 0 success, 1 a regression past --fail-on-regression, 2 usage\n"
    "error, 3 unreadable or corrupt input, 4 output error.\n";

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV } out_format;

typedef struct compare_args {
    const char *output;    /* NULL: standard output */
    out_format format;
    int no_color;
    compare_options opts;
} compare_args;

enum { OPT_FORMAT = 256, OPT_FAIL, OPT_NOISE, OPT_NO_COLOR };

static const char *const formats[] = { "text", "json", "csv", NULL };

/* One option's value into a; EXIT_OK or a usage error. */
static int parse_option(int c, const char *arg, void *args)
{
    compare_args *a = args;
    int f;
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
    case OPT_NO_COLOR:
        a->no_color = 1;
        return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* Parses argv; the two profiles start at *first. EXIT_OK, EXIT_USAGE, or -1
 * when --help was answered (with its status in *status). */
static int parse_args(int argc, char **argv, compare_args *a, int *first, int *status)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "format", required_argument, NULL, OPT_FORMAT },
        { "fail-on-regression", required_argument, NULL, OPT_FAIL },
        { "noise", required_argument, NULL, OPT_NOISE },
        { "no-color", no_argument, NULL, OPT_NO_COLOR },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 }
    };
    static const cmd_options o = { CMD, usage, ":ho:", opts, parse_option };
    memset(a, 0, sizeof *a);
    compare_options_default(&a->opts);
    int rc = cmd_parse_options(&o, argc, argv, a, status);
    if (rc != EXIT_OK)
        return rc;
    if (argc - optind != 2)
        return cmd_usage_error(CMD, argc - optind < 2 ? "needs two profiles, BEFORE and AFTER"
                                                      : "takes exactly two profiles");
    *first = optind;
    return EXIT_OK;
}

/* ---- loading and analysis ---------------------------------------------------- */

/* The analyze report of one profile with every operation, into *out. */
static int analyze(const char *path, const profile_model *m, cJSON **out)
{
    analysis_options o;
    prof_error err = { PROF_OK, "" };
    analysis_options_default(&o);
    o.top = 0;
    *out = report_build(&m, 1, &o, &err);
    if (!*out) {
        cmd_error(CMD, "cannot analyze '%s': %s", path, err.message);
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

/* ---- output ---------------------------------------------------------------------- */

static prof_err render(FILE *out, const cJSON *cmp, const void *args)
{
    const compare_args *a = args;
    switch (a->format) {
    case FORMAT_JSON: return report_render_json(out, cmp);
    case FORMAT_CSV: return compare_render_csv(out, cmp);
    case FORMAT_TEXT: break;
    }
    report_style st = cmd_text_style(a->output, a->no_color);
    return compare_render_text(out, cmp, &st);
}

static int compare(char **paths, const compare_args *a)
{
    profile_model m[2];
    cJSON *reports[2] = { NULL, NULL }, *cmp = NULL;
    prof_error err = { PROF_OK, "" };
    memset(m, 0, sizeof m);
    int status = EXIT_OK;
    for (int i = 0; i < 2 && status == EXIT_OK; i++) {
        status = cmd_load_profile(CMD, paths[i], &m[i]);
        if (status == EXIT_OK)
            status = analyze(paths[i], &m[i], &reports[i]);
    }
    if (status != EXIT_OK)
        goto out;
    cmp = compare_build(reports[0], reports[1], &a->opts, &err);
    if (!cmp) {
        cmd_error(CMD, "cannot compare: %s", err.message);
        status = EXIT_INPUT;
        goto out;
    }
    status = cmd_write_output(CMD, a->output, "the comparison", render, cmp, a);
    if (status == EXIT_OK && compare_regressed(cmp))
        status = EXIT_FINDINGS;
out:
    cJSON_Delete(cmp);
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(reports[i]);
        profile_model_free(&m[i]);
    }
    return status;
}

int cmd_compare(int argc, char **argv)
{
    compare_args a;
    int first = 0, status = EXIT_OK;
    int rc = parse_args(argc, argv, &a, &first, &status);
    if (rc != EXIT_OK)
        return rc < 0 ? status : rc;
    return compare(argv + first, &a);
}
