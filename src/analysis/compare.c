/* compare.c - the comparison of two sides of analyze reports (compare.h).
 * It reads nothing but the report objects, so whatever the analysis
 * computes is compared the same way the user saw it in `prof analyze`; the
 * tests are in compare_stats.c. A side's figure is the mean over its runs,
 * its memory slope the median, and a leak or a bottleneck belongs to a side
 * when at least half of its runs have it. JSON failures (out of memory) are
 * sticky in ctx->ok so the building code reads straight through; the result
 * is dropped at the end when any failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/compare_int.h"
#include "analysis/report_keys.h"
#include "util/error.h"
#include "util/fmt.h"

void compare_options_default(compare_options *o)
{
    o->noise_pct = 5.0;
    o->alpha = 0.01;
    o->regression_pct = -1.0;
    o->min_share = 0.05;
    o->ops_within_run = 0;
}

/* The summary metrics; the first two are also each side's step counts. */
static const struct metric {
    const char *name, *unit, *section, *key;
} metrics[] = {
    { "steps", "count", NULL, RK_STEPS },
    { "sampled_steps", "count", NULL, RK_SAMPLED_STEPS },
    { "wall_ns", "ns", NULL, RK_WALL_NS },
    { "profiled_ns", "ns", NULL, RK_PROFILED_NS },
    { "step_mean_ns", "ns", RK_STEP_TIME, RK_MEAN_NS },
    { "step_p50_ns", "ns", RK_STEP_TIME, RK_P50_NS },
    { "step_p95_ns", "ns", RK_STEP_TIME, RK_P95_NS },
};

/* Step-time metrics of a profile without steps are missing, not zero. */
static int metric_value(const cJSON *report, const struct metric *m, double *v)
{
    const cJSON *s = cmp_get(report, RK_SUMMARY);
    if (m->section && cmp_stat_steps(report) <= 0)
        return 0;
    return cmp_get_num(m->section ? cmp_get(s, m->section) : s, m->key, v);
}

/* The mean of a metric over a side's runs that have it (*have: any). */
static double cmp_metric_side(const cmp_side *s, const struct metric *m, int *have)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        double v;
        if (metric_value(cmp_run_of(s, i), m, &v)) {
            sum += v;
            n++;
        }
    }
    *have = n > 0;
    return n ? sum / (double)n : 0.0;
}

/* ---- the runs ------------------------------------------------------------------ */

/* Whether arg names the profile itself (its output path), which differs
 * between repeated runs of one command and is not part of what ran. */
static int is_output_arg(const char *arg, const cJSON *profile)
{
    const char *out =
        cmp_str_or(cmp_get_path(profile, RK_METADATA, MK_CONFIG, NULL), MK_OUTPUT, "");
    const char *path = cmp_str_or(profile, RK_PATH, ""), *base = strrchr(path, '/');
    const char *abase = strrchr(arg, '/');
    base = base ? base + 1 : path;
    abase = abase ? abase + 1 : arg;
    return (*out && strcmp(arg, out) == 0) || (*base && strcmp(abase, base) == 0);
}

/* The recorded command line without the profile's own name, into buf. */
static const char *command_of(const cJSON *report, char *buf, size_t size)
{
    const cJSON *p = cmp_first_profile(report), *a;
    const cJSON *argv = cmp_get(cmp_get(p, RK_METADATA), MK_ARGV);
    size_t len = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(a, argv) {
        if (!cJSON_IsString(a) || !a->valuestring || (len && is_output_arg(a->valuestring, p)))
            continue;
        int n = snprintf(buf + len, size - len, "%s%s", len ? " " : "", a->valuestring);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    return buf;
}

static const cJSON *config_of(const cJSON *report, const char *key)
{
    return cmp_get_path(cmp_first_profile(report), RK_METADATA, MK_CONFIG, key);
}

/* A run's steady step time (its report's summary.step_time.steady), NULL
 * when it has no steps to judge. */
static const cJSON *steady_steps(const cJSON *run)
{
    return cmp_stat_steps(run) > 0 ? cmp_get_path(run, RK_SUMMARY, RK_STEP_TIME, RK_STEADY) : NULL;
}

/* Run i's steady mean step time; NAN without one. */
static double run_step_mean(const cmp_side *s, size_t i)
{
    const cJSON *m = cmp_get(steady_steps(cmp_run_of(s, i)), RK_MEAN_NS);
    return cJSON_IsNumber(m) ? m->valuedouble : NAN;
}

/* Each run's steady mean step time, so that a side whose runs fall into two
 * speeds (a busy machine) shows it; null for a run without one. */
static void add_run_step_means(cmp_ctx *c, cJSON *r, const cmp_side *s)
{
    cJSON *means = cmp_put_arr(c, r, RK_RUN_STEP_MEANS_NS);
    for (size_t i = 0; i < s->nruns; i++) {
        double v = run_step_mean(s, i);
        jb_num(&c->ok, means, NULL, v);
    }
}

static void add_run(cmp_ctx *c, cJSON *cmp, int which)
{
    char cmd[512];
    const cmp_side *s = &c->side[which];
    const cJSON *first = cmp_run_of(s, 0), *p = cmp_first_profile(first);
    cJSON *r = cmp_put_obj(c, cmp, cmp_side_name(which));
    int have, clean = 1;
    cmp_put_str(c, r, RK_PATH, s->path ? s->path : cmp_str_or(p, RK_PATH, ""));
    cmp_put_str(c, r, RK_COMMAND, command_of(first, cmd, sizeof cmd));
    cmp_put_num(c, r, RK_RUNS, (double)s->nruns);
    cJSON *paths = cmp_put_arr(c, r, RK_RUN_PATHS);
    for (size_t i = 0; i < s->nruns; i++) {
        const cJSON *rp = cmp_first_profile(cmp_run_of(s, i));
        jb_str(&c->ok, paths, NULL, cmp_str_or(rp, RK_PATH, ""));
        clean &= !cJSON_IsFalse(cmp_get(rp, RK_CLEAN));
    }
    add_run_step_means(c, r, s);
    cmp_put_num(c, r, RK_STEPS, cmp_metric_side(s, &metrics[0], &have));
    cmp_put_num(c, r, RK_SAMPLED_STEPS, cmp_metric_side(s, &metrics[1], &have));
    const cJSON *sr = config_of(first, MK_SAMPLE_RATE);
    cmp_put_num(c, r, RK_SAMPLE_RATE, cJSON_IsNumber(sr) ? sr->valuedouble : NAN);
    cmp_put_bool(c, r, RK_CLEAN, clean);
}

/* Share of steps that kept their events, or the configured rate. */
static double sampled_fraction(const cJSON *report)
{
    const cJSON *s = cmp_get(report, RK_SUMMARY);
    double steps = cmp_num_or(s, RK_STEPS, 0);
    if (steps > 0)
        return cmp_num_or(s, RK_SAMPLED_STEPS, steps) / steps;
    const cJSON *sr = config_of(report, MK_SAMPLE_RATE);
    return cJSON_IsNumber(sr) && sr->valuedouble > 0 ? sr->valuedouble : 1.0;
}

static void note_method(cmp_ctx *c, cJSON *notes)
{
    size_t nb = c->side[0].nruns, na = c->side[1].nruns;
    if (nb >= 2 || na >= 2) {
        cmp_note(c, notes, "%zu run%s before, %zu after: changes are tested against the variation "
                           "between runs: the mean step time with Welch's t-test on per-run means; "
                           "each operation's time per call against its run's speed (the median "
                           "change of the operations found in every run), so that a process the "
                           "machine ran slower throughout neither hides nor fakes a change in one "
                           "operation. A change that slows every operation alike shows in the step "
                           "time, not as operations slower",
                 nb, nb == 1 ? "" : "s", na);
        return;
    }
    cmp_note(c, notes, "one run a side: changes are tested against the variation within each run "
                       "(batch means); run-to-run variation is unknown, and whole runs of the "
                       "same program often differ by several percent. Repeat each run (3 or "
                       "more, into a directory a side) and compare the directories to test "
                       "against it");
}

static void note_differences(cmp_ctx *c, cJSON *notes)
{
    const cJSON *b = cmp_run_of(&c->side[0], 0), *a = cmp_run_of(&c->side[1], 0);
    int have;
    double sb = cmp_metric_side(&c->side[0], &metrics[0], &have);
    double sa = cmp_metric_side(&c->side[1], &metrics[0], &have);
    if (sb != sa)
        cmp_note(c, notes, "step counts differ: %.0f before, %.0f after; totals are not "
                           "comparable, compare the per-step and per-call figures", sb, sa);
    if (sb == 0 || sa == 0)
        cmp_note(c, notes, "no steps in the %s: step-time metrics are missing",
                 sb == 0 && sa == 0 ? "before and after profiles"
                 : sb == 0          ? "before profile"
                                    : "after profile");
    /* schedules that keep as many steps' events scale calls and totals
     * alike: only a different share is worth a note ("100% before, 100%
     * after" told the user nothing) */
    double fb = sampled_fraction(b), fa = sampled_fraction(a);
    if (fabs(fb - fa) > 0.005)
        cmp_note(c, notes, "sampling differs: %.0f%% of steps kept their events before, %.0f%% "
                           "after; calls and totals scale with sampling, compare means",
                 fb * 100, fa * 100);
    char cb[512], ca[512];
    command_of(b, cb, sizeof cb);
    command_of(a, ca, sizeof ca);
    if (strcmp(cb, ca) != 0)
        cmp_note(c, notes, "the runs come from different commands ('%s' before, '%s' after); "
                           "operations are matched by name", cb, ca);
}

/* Whole runs whose steady step times differ by this factor or more: the
 * machine's speed changed between them (rules.md section 6.3). */
#define CMP_RUN_SPREAD 1.2

/* "before 17.0 ms to 27.6 ms, 1.62x": the range of a side's steady step
 * times over its runs into text; 0 when they spread less than
 * CMP_RUN_SPREAD. */
static int run_spread(const cmp_side *s, const char *name, char *text, size_t size)
{
    double lo = INFINITY, hi = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        double v = run_step_mean(s, r);
        if (v > 0 && isfinite(v)) {
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    if (!(hi >= lo * CMP_RUN_SPREAD))
        return 0;
    char a[FMT_BUF], b[FMT_BUF];
    snprintf(text, size, "%s %s to %s, %.2fx", name, fmt_duration(a, lo), fmt_duration(b, hi),
             hi / lo);
    return 1;
}

/* Sides whose runs spread that widely: the tests over them are weak, and
 * with few runs a chance split of fast and slow runs looks like a change. */
static void note_run_spread(cmp_ctx *c, cJSON *notes)
{
    char t[2][96];
    int wide[2] = { run_spread(&c->side[0], cmp_side_name(0), t[0], sizeof t[0]),
                    run_spread(&c->side[1], cmp_side_name(1), t[1], sizeof t[1]) };
    if (!wide[0] && !wide[1])
        return;
    size_t fewest = c->side[0].nruns < c->side[1].nruns ? c->side[0].nruns
                                                                : c->side[1].nruns;
    cmp_note(c, notes, "whole runs vary widely in steady step time (%s%s%s), as where the "
                       "machine's speed changes between processes: smaller changes are hard "
                       "to show%s",
             wide[0] ? t[0] : "", wide[0] && wide[1] ? "; " : "", wide[1] ? t[1] : "",
             fewest < 5 ? ", and slow runs falling on one side by chance can look like a change. "
                          "Record 5 or more runs a side, on a quieter machine if one can be had"
                        : "");
}

static void note_runs(cmp_ctx *c, cJSON *notes)
{
    for (int i = 0; i < 2; i++) {
        const cmp_side *s = &c->side[i];
        for (size_t r = 0; r < s->nruns; r++) {
            const cJSON *rep = cmp_run_of(s, r), *p = cmp_first_profile(rep);
            if (cJSON_IsFalse(cmp_get(p, RK_CLEAN)))
                cmp_note(c, notes, "the %s profile '%s' was not closed cleanly: it covers what "
                                   "was recorded before it stopped", cmp_side_name(i),
                         cmp_str_or(p, RK_PATH, ""));
            double total = cmp_num_or(rep, RK_OPERATIONS_TOTAL, 0);
            double kept = (double)s->runs[r]->nops;
            if (total > kept)
                cmp_note(c, notes, "the %s report holds %.0f of %.0f operations; the rest are not "
                                   "compared", cmp_side_name(i), kept, total);
        }
    }
}

/* ---- sides that should not be compared ------------------------------------------ */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The GPU models a report's first profile names (its metadata's devices),
 * distinct, sorted, joined with ", "; "" when it names none. */
static void gpu_models(const cJSON *report, char *buf, size_t size)
{
    const cJSON *devs = cmp_get_path(cmp_first_profile(report), RK_METADATA, MK_DEVICES, NULL), *d;
    const char *names[64];
    size_t n = 0, len = 0;
    cJSON_ArrayForEach(d, devs) {
        const char *name = cmp_str_or(d, MK_NAME, "");
        if (*name && n < sizeof names / sizeof *names)
            names[n++] = name;
    }
    qsort(names, n, sizeof *names, by_string);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
                                    len ? ", " : "", names[i]);
}

/* A metadata value of a report's first profile as text (a tag's string or
 * number, the world size): "" when absent. */
static void meta_text(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsString(v))
        snprintf(buf, size, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, size, "%.15g", v->valuedouble);
    else
        buf[0] = '\0';
}

/* Both sides say it (neither text is empty), and differently. */
static int both_differ(char v[2][256])
{
    return *v[0] && *v[1] && strcmp(v[0], v[1]) != 0;
}

/* What differs between the sides so that their times do not compare
 * (rules.md §6.1): the GPUs, the world size, the batch size where the
 * profiles' tags say it. Each a sentence; the text shows them first. */
static void add_warnings(cmp_ctx *c, cJSON *cmp)
{
    cJSON *w = cmp_put_arr(c, cmp, RK_WARNINGS);
    const cJSON *r[2] = { cmp_run_of(&c->side[0], 0), cmp_run_of(&c->side[1], 0) };
    char v[2][256];
    for (int i = 0; i < 2; i++)
        gpu_models(r[i], v[i], sizeof v[i]);
    if (both_differ(v))
        cmp_note(c, w, "different GPUs: %s before, %s after: kernel and step times do not compare",
                 v[0], v[1]);
    for (int i = 0; i < 2; i++)
        meta_text(cmp_get_path(cmp_first_profile(r[i]), RK_METADATA, MK_WORLD_SIZE, NULL), v[i],
                  sizeof v[i]);
    if (both_differ(v))
        cmp_note(c, w, "different world sizes: %s ranks before, %s after: each rank's share of the "
                       "work differs", v[0], v[1]);
    for (int i = 0; i < 2; i++)
        meta_text(cmp_get_path(cmp_first_profile(r[i]), RK_METADATA, MK_TAGS, MK_BATCH_SIZE), v[i],
                  sizeof v[i]);
    if (both_differ(v))
        cmp_note(c, w, "different batch sizes (tag batch_size): %s before, %s after: step and "
                       "per-call times do not compare", v[0], v[1]);
}

static void add_notes(cmp_ctx *c, cJSON *notes)
{
    note_method(c, notes);
    note_run_spread(c, notes);
    note_differences(c, notes);
    note_runs(c, notes);
}

/* ---- summary metrics ------------------------------------------------------------ */

static void add_change(cmp_ctx *c, cJSON *row, const char *change_key, int hb, double b, int ha,
                       double a)
{
    cmp_put_opt(c, row, change_key, hb && ha, a - b);
    cmp_put_opt(c, row, RK_RELATIVE, hb && ha, cmp_relative(b, a));
}

/* The step-time test of every run's steady steps. */
static cmp_result step_test(const cmp_ctx *c)
{
    size_t n[2] = { c->side[0].nruns, c->side[1].nruns };
    const cJSON **st[2];
    cmp_result r;
    st[0] = calloc(n[0], sizeof *st[0]);
    st[1] = calloc(n[1], sizeof *st[1]);
    if (!st[0] || !st[1]) {
        r = cmp_no_test();
    } else {
        for (int i = 0; i < 2; i++)
            for (size_t k = 0; k < n[i]; k++)
                st[i][k] = steady_steps(cmp_run_of(&c->side[i], k));
        r = cmp_test(st[0], n[0], st[1], n[1], &c->o);
    }
    free(st[0]);
    free(st[1]);
    return r;
}

static void add_summary(cmp_ctx *c, cJSON *cmp, const cmp_result *steps)
{
    cJSON *arr = cmp_put_arr(c, cmp, RK_SUMMARY);
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
        int hb, ha;
        double b = cmp_metric_side(&c->side[0], &metrics[i], &hb);
        double a = cmp_metric_side(&c->side[1], &metrics[i], &ha);
        if (strcmp(metrics[i].name, "step_mean_ns") == 0) { /* after warm-up: what is tested */
            hb = isfinite(steps->before);
            ha = isfinite(steps->after);
            b = steps->before;
            a = steps->after;
        }
        cJSON *row = jb_obj(&c->ok, arr, NULL);
        cmp_put_str(c, row, RK_METRIC, metrics[i].name);
        cmp_put_str(c, row, RK_UNIT, metrics[i].unit);
        cmp_put_opt(c, row, RK_BEFORE, hb, b);
        cmp_put_opt(c, row, RK_AFTER, ha, a);
        add_change(c, row, RK_CHANGE, hb, b, ha, a);
    }
}

static void add_step_test(cmp_ctx *c, cJSON *cmp, const cmp_result *r)
{
    cJSON *t = cmp_put_obj(c, cmp, RK_STEP_TIME_TEST);
    cmp_put_test(c, t, r);
    cmp_put_num(c, t, RK_RELATIVE, r->relative);
    cmp_put_bool(c, t, RK_SIGNIFICANT, r->significant);
}

static void add_speedup(cmp_ctx *c, cJSON *cmp, const cmp_result *steps)
{
    double mb = steps->before, ma = steps->after;
    const char *basis = "step_time";
    if (!(mb > 0 && ma > 0)) {
        int hb, ha;
        mb = cmp_metric_side(&c->side[0], &metrics[3], &hb);
        ma = cmp_metric_side(&c->side[1], &metrics[3], &ha);
        basis = "profiled_time";
    }
    if (!(mb > 0 && ma > 0)) {
        jb_null(&c->ok, cmp, RK_SPEEDUP);
        return;
    }
    cJSON *s = cmp_put_obj(c, cmp, RK_SPEEDUP);
    cmp_put_num(c, s, RK_VALUE, mb / ma);
    cmp_put_str(c, s, RK_BASIS, basis);
}

/* ---- memory ------------------------------------------------------------------ */

static const char *verdict(int before, int after)
{
    return before && after ? "persisting" : before ? "fixed" : after ? "new" : "none";
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One series on one side: mean peak, median slope, leak in most runs. */
typedef struct mem_side {
    int have, has_slope, leak;
    double peak, slope;
    const char *unit;      /* of the slope: "bytes_per_step" or "bytes_per_s" */
} mem_side;

/* The fitted slope of a report's memory series and its unit. */
static int series_slope(const cJSON *fit, double *v, const char **unit)
{
    if (cmp_get_num(fit, RK_SLOPE_BYTES_PER_STEP, v)) {
        *unit = "bytes_per_step";
        return 1;
    }
    if (cmp_get_num(fit, RK_SLOPE_BYTES_PER_S, v)) {
        *unit = "bytes_per_s";
        return 1;
    }
    return 0;
}

static mem_side memory_side(const cmp_side *s, const char *name)
{
    mem_side m = { 0, 0, 0, 0.0, NAN, "bytes_per_step" };
    size_t n = s->nruns, peaks = 0, leaks = 0, slopes = 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const cJSON *ser = cmp_find_named(cmp_get(cmp_run_of(s, i), RK_MEMORY), RK_SERIES, name);
        double peak;
        if (!ser || !cmp_get_num(ser, RK_PEAK_BYTES, &peak))
            continue;
        m.peak += peak;
        peaks++;
        if (cJSON_IsTrue(cmp_get(cmp_get(ser, RK_FIT), RK_LEAK)))
            leaks++;
        if (v && series_slope(cmp_get(ser, RK_FIT), &v[slopes], &m.unit))
            slopes++;
    }
    m.have = peaks > 0;
    m.peak = peaks ? m.peak / (double)peaks : 0.0;
    m.leak = cmp_most_runs(leaks, n);
    if (slopes) {
        qsort(v, slopes, sizeof *v, by_double);
        m.slope = slopes % 2 ? v[slopes / 2] : 0.5 * (v[slopes / 2 - 1] + v[slopes / 2]);
        m.has_slope = 1;
    }
    free(v);
    return m;
}

static void add_series(cmp_ctx *c, cJSON *arr, const char *name)
{
    mem_side b = memory_side(&c->side[0], name), a = memory_side(&c->side[1], name);
    cJSON *row = jb_obj(&c->ok, arr, NULL);
    cmp_put_str(c, row, RK_SERIES, name);
    cmp_put_opt(c, row, RK_BEFORE_PEAK_BYTES, b.have, b.peak);
    cmp_put_opt(c, row, RK_AFTER_PEAK_BYTES, a.have, a.peak);
    add_change(c, row, RK_CHANGE_BYTES, b.have, b.peak, a.have, a.peak);
    cmp_put_str(c, row, RK_SLOPE_UNIT, b.has_slope ? b.unit : a.unit);
    cmp_put_opt(c, row, RK_BEFORE_SLOPE, b.has_slope, b.slope);
    cmp_put_opt(c, row, RK_AFTER_SLOPE, a.has_slope, a.slope);
    cmp_put_bool(c, row, RK_LEAK_BEFORE, b.leak);
    cmp_put_bool(c, row, RK_LEAK_AFTER, a.leak);
    cmp_put_str(c, row, RK_LEAK, verdict(b.leak, a.leak));
}

/* 1 when a run of a side before run `upto` (or of an earlier side) already
 * listed this series, so each series gets one row. */
static int series_seen(const cmp_ctx *c, int side, size_t upto, const char *name)
{
    for (int i = 0; i <= side; i++)
        for (size_t r = 0; r < (i < side ? c->side[i].nruns : upto); r++)
            if (cmp_find_named(cmp_get(cmp_run_of(&c->side[i], r), RK_MEMORY), RK_SERIES, name))
                return 1;
    return 0;
}

static void add_memory(cmp_ctx *c, cJSON *cmp)
{
    cJSON *arr = cmp_put_arr(c, cmp, RK_MEMORY);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++) {
            const cJSON *s;
            cJSON_ArrayForEach(s, cmp_get(cmp_run_of(&c->side[i], r), RK_MEMORY))
                if (!series_seen(c, i, r, cmp_str_or(s, RK_SERIES, "")))
                    add_series(c, arr, cmp_str_or(s, RK_SERIES, ""));
        }
}

/* ---- bottlenecks ------------------------------------------------------------------ */

static const cJSON *find_finding(const cJSON *report, const cJSON *f)
{
    const cJSON *g;
    const char *rule = cmp_str_or(f, RK_RULE, ""), *subject = cmp_str_or(f, RK_SUBJECT, "");
    cJSON_ArrayForEach(g, cmp_get(report, RK_BOTTLENECKS))
        if (strcmp(cmp_str_or(g, RK_RULE, ""), rule) == 0 &&
            strcmp(cmp_str_or(g, RK_SUBJECT, ""), subject) == 0)
            return g;
    return NULL;
}

/* The side's finding like f (from its first run that has it) when most of
 * its runs have one, else NULL. */
static const cJSON *side_finding(const cmp_side *s, const cJSON *f)
{
    const cJSON *first = NULL;
    size_t count = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cJSON *g = find_finding(cmp_run_of(s, r), f);
        if (g && !first)
            first = g;
        if (g)
            count++;
    }
    return cmp_most_runs(count, s->nruns) ? first : NULL;
}

static void add_finding(cmp_ctx *c, cJSON *arr, const cJSON *b, const cJSON *a)
{
    const cJSON *f = a ? a : b;
    cJSON *row = jb_obj(&c->ok, arr, NULL);
    cmp_put_str(c, row, RK_RULE, cmp_str_or(f, RK_RULE, ""));
    cmp_put_str(c, row, RK_SUBJECT, cmp_str_or(f, RK_SUBJECT, ""));
    cmp_put_str(c, row, RK_SEVERITY, cmp_str_or(f, RK_SEVERITY, ""));
    cmp_put_str(c, row, RK_TITLE, cmp_str_or(f, RK_TITLE, ""));
    if (b && a) {
        cmp_put_str(c, row, RK_SEVERITY_BEFORE, cmp_str_or(b, RK_SEVERITY, ""));
        cmp_put_str(c, row, RK_TITLE_BEFORE, cmp_str_or(b, RK_TITLE, ""));
    }
}

/* 1 when an earlier run of any side (before `run` of `side`) has the same
 * finding, so each finding is placed once. */
static int finding_seen(const cmp_ctx *c, int side, size_t run, const cJSON *f)
{
    for (int i = 0; i <= side; i++)
        for (size_t r = 0; r < (i < side ? c->side[i].nruns : run); r++)
            if (find_finding(cmp_run_of(&c->side[i], r), f))
                return 1;
    return 0;
}

static void add_bottlenecks(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = cmp_put_obj(c, cmp, RK_BOTTLENECKS);
    cJSON *fixed = cmp_put_arr(c, o, RK_FIXED), *added = cmp_put_arr(c, o, RK_NEW);
    cJSON *persisting = cmp_put_arr(c, o, RK_PERSISTING);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++) {
            const cJSON *f;
            cJSON_ArrayForEach(f, cmp_get(cmp_run_of(&c->side[i], r), RK_BOTTLENECKS)) {
                if (finding_seen(c, i, r, f))
                    continue;
                const cJSON *b = side_finding(&c->side[0], f), *a = side_finding(&c->side[1], f);
                if (b || a)
                    add_finding(c, b && a ? persisting : b ? fixed : added, b, a);
            }
        }
}

/* ---- regression ------------------------------------------------------------------ */

static void add_reason(cmp_ctx *c, cJSON *arr, const char *what, const char *name,
                       const cmp_result *r)
{
    cJSON *o = jb_obj(&c->ok, arr, NULL);
    cmp_put_str(c, o, RK_WHAT, what);
    cmp_put_str(c, o, RK_NAME, name);
    cmp_put_num(c, o, RK_RELATIVE, r->estimate); /* what passed the threshold */
    cmp_put_num(c, o, RK_RELATIVE_LOW, r->rel_low);
    cmp_put_num(c, o, RK_P_VALUE, r->p);
    cmp_put_str(c, o, RK_METHOD, cmp_method_name(r->method));
}

static cmp_result row_result(const cJSON *op)
{
    cmp_result r = cmp_no_test();
    const char *m = cmp_str_or(op, RK_METHOD, "none");
    r.method = strcmp(m, "between_runs") == 0     ? CMP_BETWEEN_RUNS
               : strcmp(m, "within_run") == 0     ? CMP_WITHIN_RUN
               : strcmp(m, "speed_adjusted") == 0 ? CMP_SPEED_ADJUSTED
                                                  : CMP_NO_TEST;
    r.relative = cmp_num_or(op, RK_RELATIVE, NAN);
    r.estimate = cmp_num_or(op, RK_RELATIVE_TO_RUN, r.relative);
    r.rel_low = cmp_num_or(op, RK_RELATIVE_LOW, NAN);
    r.p = cmp_num_or(op, RK_P_VALUE, 1.0);
    r.significant = cJSON_IsTrue(cmp_get(op, RK_SIGNIFICANT));
    return r;
}

/* A significant slowdown past the threshold (rules.md §6.4) of the mean
 * step time, or of an operation that takes at least min_share of the time
 * on either side. With one run a side only the step time can fail: an
 * operation's time can move between whole runs by itself (a convolution's
 * algorithm is chosen at run time), which one run cannot show, while the
 * step time is what the user pays. */
/* The larger share of the time an operation's row shows on a side. */
static double op_share(const cmp_ctx *c, const char *name)
{
    double share = 0;
    for (int i = 0; i < 2; i++) {
        size_t runs;
        double v = cmp_op_side_mean(&c->side[i], name, OPF(incl_share), &runs);
        share = fmax(share, runs && isfinite(v) ? v : 0.0);
    }
    return share;
}

static void add_regression(cmp_ctx *c, cJSON *cmp, const cmp_result *steps,
                           const compare_ops *ops)
{
    cJSON *o = cmp_put_obj(c, cmp, RK_REGRESSION);
    int asked = c->o.regression_pct >= 0;
    cmp_put_opt(c, o, RK_THRESHOLD_PCT, asked, c->o.regression_pct);
    cJSON *reasons = jb_arr(&c->ok, o, RK_REASONS);
    if (asked) {
        double limit = c->o.regression_pct / 100.0;
        if (cmp_regressed_past(steps, limit))
            add_reason(c, reasons, "step_time", "mean step time", steps);
        size_t uncounted = 0;
        for (size_t i = 0; i < ops->n && c->ok; i++) {
            /* judged as its row reads, built only for the few large ones */
            if (op_share(c, ops->v[i].name) < c->o.min_share)
                continue;
            cJSON *op = cmp_op_row(c, &ops->v[i], &ops->r[i], ops->level[i]);
            cmp_result r = row_result(op);
            cJSON_Delete(op);
            if (!op || !cmp_regressed_past(&r, limit))
                continue;
            /* one run a side: a change inside the runs may be one process
             * slower than the other, which fails the check only when asked */
            if (r.method == CMP_BETWEEN_RUNS || r.method == CMP_SPEED_ADJUSTED ||
                (r.method == CMP_WITHIN_RUN && c->o.ops_within_run))
                add_reason(c, reasons, "operation", ops->v[i].name, &r);
            else if (r.method == CMP_WITHIN_RUN)
                uncounted++;
        }
        cmp_put_num(c, o, RK_WITHIN_RUN_UNCOUNTED, (double)uncounted);
    }
    cmp_put_bool(c, o, RK_REGRESSED, cJSON_GetArraySize(reasons) > 0);
}

int compare_regressed(const cJSON *cmp)
{
    return cJSON_IsTrue(cmp_get(cmp_get(cmp, RK_REGRESSION), RK_REGRESSED));
}

/* ---- the whole comparison ------------------------------------------------------------- */

static void add_options(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = cmp_put_obj(c, cmp, RK_OPTIONS);
    cmp_put_num(c, o, RK_NOISE_PCT, c->o.noise_pct);
    cmp_put_num(c, o, RK_ALPHA, c->o.alpha);
    cmp_put_opt(c, o, RK_FAIL_ON_REGRESSION_PCT, c->o.regression_pct >= 0, c->o.regression_pct);
    cmp_put_num(c, o, RK_MIN_SHARE, c->o.min_share);
}

static void build(cmp_ctx *c, cJSON *cmp, compare_ops *ops)
{
    cmp_result steps = step_test(c);
    cmp_put_str(c, cmp, RK_SCHEMA, "prof-compare");
    cmp_put_num(c, cmp, RK_VERSION, 4);
    add_options(c, cmp);
    add_run(c, cmp, 0);
    add_run(c, cmp, 1);
    cmp_put_str(c, cmp, RK_METHOD, c->side[0].nruns >= 2 || c->side[1].nruns >= 2
                                      ? "between_runs" : "within_run");
    add_warnings(c, cmp);
    add_notes(c, cmp_put_arr(c, cmp, RK_NOTES));
    add_summary(c, cmp, &steps);
    add_step_test(c, cmp, &steps);
    add_speedup(c, cmp, &steps);
    add_memory(c, cmp);
    cmp_add_operations(c, cmp, ops);
    add_bottlenecks(c, cmp);
    add_regression(c, cmp, &steps, ops);
}

void compare_ops_free(compare_ops *ops)
{
    if (!ops)
        return;
    free(ops->c.side[0].runs);
    free(ops->c.side[1].runs);
    free(ops->v);
    free(ops->r);
    free(ops->level);
    free(ops);
}

static int side_usable(const compare_run_side *s)
{
    if (!s || s->nruns == 0 || !s->runs)
        return 0;
    for (size_t i = 0; i < s->nruns; i++)
        if (!s->runs[i] || !cJSON_IsObject(cmp_get(s->runs[i]->report, RK_SUMMARY)))
            return 0;
    return 1;
}

static int copy_side(cmp_side *d, const compare_run_side *s)
{
    d->nruns = s->nruns;
    d->path = s->path;
    if (!(d->runs = malloc(s->nruns * sizeof *d->runs)))
        return -1;
    memcpy(d->runs, s->runs, s->nruns * sizeof *d->runs);
    return 0;
}

cJSON *compare_build_runs(const compare_run_side *before, const compare_run_side *after,
                          const compare_options *o, compare_ops **ops, prof_error *err)
{
    *ops = NULL;
    if (!side_usable(before) || !side_usable(after)) {
        prof_error_set(err, PROF_ERR_INVALID, "not an analyze report (no summary or operations)");
        return NULL;
    }
    compare_ops *res = calloc(1, sizeof *res);
    cJSON *cmp = NULL;
    if (res) {
        cmp_ctx *c = &res->c;
        c->ok = 1;
        if (o)
            c->o = *o;
        else
            compare_options_default(&c->o);
        if (copy_side(&c->side[0], before) == 0 && copy_side(&c->side[1], after) == 0 &&
            (cmp = cJSON_CreateObject()))
            build(c, cmp, res);
        else
            c->ok = 0;
    }
    if (!res || !res->c.ok) {
        cJSON_Delete(cmp);
        compare_ops_free(res);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
        return NULL;
    }
    *ops = res;
    return cmp;
}

size_t compare_ops_count(const compare_ops *ops)
{
    return ops ? ops->n : 0;
}

cJSON *compare_ops_row(const compare_ops *ops, size_t i)
{
    if (!ops || i >= ops->n)
        return NULL;
    cmp_ctx c = ops->c;
    c.ok = 1;
    return cmp_op_row(&c, &ops->v[i], &ops->r[i], ops->level[i]);
}

cJSON *compare_ops_brief(const compare_ops *ops, size_t i)
{
    if (!ops || i >= ops->n)
        return NULL;
    const op_pair *p = &ops->v[i];
    size_t rb, ra;
    double gpu;
    cmp_op_runs(&ops->c, p->name, &rb, &ra);
    cJSON *row = cJSON_CreateObject(), *item;
    /* references and constant keys: no copies of the text */
    int ok = row && (item = cJSON_CreateStringReference(p->name)) &&
             cJSON_AddItemToObjectCS(row, RK_NAME, item);
    ok = ok && (item = cJSON_CreateStringReference(cmp_op_status(&ops->r[i], rb > 0, ra > 0))) &&
         cJSON_AddItemToObjectCS(row, RK_STATUS, item);
    if (ok && cmp_gpu_change(&ops->c, p->name, &gpu) && isfinite(gpu))
        ok = (item = cJSON_CreateNumber(gpu)) && cJSON_AddItemToObjectCS(row, RK_GPU_RELATIVE, item);
    if (!ok) {
        cJSON_Delete(row);
        return NULL;
    }
    return row;
}

cJSON *compare_build_sides(const compare_side *before, const compare_side *after,
                           const compare_options *o, prof_error *err)
{
    const compare_side *in[2] = { before, after };
    compare_run **runs[2] = { NULL, NULL };
    compare_run_side sides[2];
    compare_ops *ops = NULL;
    cJSON *cmp = NULL;
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        const compare_side *s = in[i];
        if (!s || s->nruns == 0 || !s->runs) {
            prof_error_set(err, PROF_ERR_INVALID, "not an analyze report (no summary or operations)");
            goto out;
        }
        for (size_t r = 0; r < s->nruns; r++)
            if (!cJSON_IsObject(cmp_get(s->runs[r], RK_SUMMARY)) ||
                !cJSON_IsArray(cmp_get(s->runs[r], RK_OPERATIONS))) {
                prof_error_set(err, PROF_ERR_INVALID,
                               "not an analyze report (no summary or operations)");
                goto out;
            }
    }
    for (int i = 0; i < 2 && ok; i++) {
        ok = (runs[i] = calloc(in[i]->nruns, sizeof *runs[i])) != NULL;
        for (size_t r = 0; ok && r < in[i]->nruns; r++)
            ok = (runs[i][r] = cmp_run_view(in[i]->runs[r])) != NULL;
        sides[i] = (compare_run_side){ runs[i], in[i]->nruns, in[i]->path };
    }
    if (ok)
        cmp = compare_build_runs(&sides[0], &sides[1], o, &ops, err);
    else
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
    /* every row in place, as the callers of this form read them */
    cJSON *arr = cmp ? cJSON_GetObjectItemCaseSensitive(cmp, RK_OPERATIONS) : NULL;
    for (size_t i = 0; cmp && i < ops->n; i++) {
        cJSON *row = compare_ops_row(ops, i);
        if (!row || !cJSON_AddItemToArray(arr, row)) {
            cJSON_Delete(row);
            cJSON_Delete(cmp);
            cmp = NULL;
            prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
        }
    }
out:
    compare_ops_free(ops);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; runs[i] && r < in[i]->nruns; r++)
            compare_run_free(runs[i][r]);
    free(runs[0]);
    free(runs[1]);
    return cmp;
}

cJSON *compare_build(const cJSON *before, const cJSON *after, const compare_options *o,
                     prof_error *err)
{
    const cJSON *b[1] = { before }, *a[1] = { after };
    compare_side sb = { b, 1, NULL }, sa = { a, 1, NULL };
    return compare_build_sides(&sb, &sa, o, err);
}
