/* compare.c - the comparison of two analyze reports (compare.h). It reads
 * nothing but the two report objects, so whatever the analysis computes is
 * compared the same way the user saw it in `prof analyze`. JSON failures
 * (out of memory) are sticky in ctx->ok so the building code reads straight
 * through; the result is dropped at the end when any failed. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/stats.h"
#include "util/error.h"

typedef struct cmp_ctx {
    const cJSON *before, *after;
    compare_options o;
    int ok;
} cmp_ctx;

void compare_options_default(compare_options *o)
{
    o->noise_pct = 5.0;
    o->alpha = 0.01;
    o->regression_pct = -1.0;
    o->min_share = 0.05;
}

/* ---- reading the reports ------------------------------------------------ */

static const cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* 1 and *v when o.key is a number. */
static int get_num(const cJSON *o, const char *key, double *v)
{
    const cJSON *n = get(o, key);
    if (!cJSON_IsNumber(n))
        return 0;
    *v = n->valuedouble;
    return 1;
}

static double num_or(const cJSON *o, const char *key, double fallback)
{
    double v;
    return get_num(o, key, &v) ? v : fallback;
}

static const char *str_or(const cJSON *o, const char *key, const char *fallback)
{
    const cJSON *s = get(o, key);
    return cJSON_IsString(s) && s->valuestring ? s->valuestring : fallback;
}

static const cJSON *first_profile(const cJSON *report)
{
    return cJSON_GetArrayItem(get(report, "profiles"), 0);
}

static const cJSON *find_named(const cJSON *arr, const char *key, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
        if (strcmp(str_or(it, key, ""), name) == 0)
            return it;
    return NULL;
}

/* Step count behind the step-time statistics (rules.md §1: complete steps). */
static double stat_steps(const cJSON *report)
{
    const cJSON *s = get(report, "summary");
    double n;
    return get_num(s, "complete_steps", &n) ? n : num_or(s, "steps", 0);
}

/* ---- writing the comparison (sticky failures) ------------------------------ */

static cJSON *attach(cmp_ctx *c, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !(key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item))) {
        cJSON_Delete(item);
        c->ok = 0;
        return NULL;
    }
    return item;
}

static void put_num(cmp_ctx *c, cJSON *o, const char *key, double v)
{
    attach(c, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* A number when have, else null. */
static void put_opt(cmp_ctx *c, cJSON *o, const char *key, int have, double v)
{
    put_num(c, o, key, have ? v : NAN);
}

static void put_str(cmp_ctx *c, cJSON *o, const char *key, const char *v)
{
    attach(c, o, key, cJSON_CreateString(v));
}

static void put_bool(cmp_ctx *c, cJSON *o, const char *key, int v)
{
    attach(c, o, key, cJSON_CreateBool(v));
}

static cJSON *put_obj(cmp_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateObject());
}

static cJSON *put_arr(cmp_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateArray());
}

static void note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    attach(c, notes, NULL, cJSON_CreateString(buf));
}

/* (after - before) / before, or NaN when before is 0. */
static double relative(double before, double after)
{
    return before != 0 ? (after - before) / before : NAN;
}

/* ---- the two runs ------------------------------------------------------------ */

/* The recorded command line, arguments joined by spaces, into buf. */
static const char *command_of(const cJSON *report, char *buf, size_t size)
{
    const cJSON *argv = get(get(first_profile(report), "metadata"), "argv"), *a;
    size_t len = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(a, argv) {
        if (!cJSON_IsString(a) || !a->valuestring)
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
    return get(get(get(first_profile(report), "metadata"), "config"), key);
}

static void add_run(cmp_ctx *c, cJSON *cmp, const char *key, const cJSON *report)
{
    char cmd[512];
    const cJSON *p = first_profile(report), *s = get(report, "summary");
    cJSON *r = put_obj(c, cmp, key);
    double rate;
    put_str(c, r, "path", str_or(p, "path", ""));
    put_str(c, r, "command", command_of(report, cmd, sizeof cmd));
    put_num(c, r, "steps", num_or(s, "steps", 0));
    put_num(c, r, "sampled_steps", num_or(s, "sampled_steps", 0));
    const cJSON *sr = config_of(report, "sample_rate");
    rate = cJSON_IsNumber(sr) ? sr->valuedouble : NAN;
    put_num(c, r, "sample_rate", rate);
    put_bool(c, r, "clean", !cJSON_IsFalse(get(p, "clean")));
}

/* Share of steps that kept their events, or the configured rate. */
static double sampled_fraction(const cJSON *report)
{
    const cJSON *s = get(report, "summary");
    double steps = num_or(s, "steps", 0);
    if (steps > 0)
        return num_or(s, "sampled_steps", steps) / steps;
    const cJSON *sr = config_of(report, "sample_rate");
    return cJSON_IsNumber(sr) && sr->valuedouble > 0 ? sr->valuedouble : 1.0;
}

static void add_notes(cmp_ctx *c, cJSON *notes)
{
    const cJSON *b = c->before, *a = c->after;
    double sb = num_or(get(b, "summary"), "steps", 0), sa = num_or(get(a, "summary"), "steps", 0);
    if (sb != sa)
        note(c, notes, "step counts differ: %.0f before, %.0f after; totals are not comparable, "
                       "compare the per-step and per-call figures", sb, sa);
    if (sb == 0 || sa == 0)
        note(c, notes, "no steps in the %s: step-time metrics are missing",
             sb == 0 && sa == 0 ? "before and after profiles"
             : sb == 0          ? "before profile"
                                : "after profile");
    double fb = sampled_fraction(b), fa = sampled_fraction(a);
    const cJSON *schb = config_of(b, "schedule"), *scha = config_of(a, "schedule");
    if (fabs(fb - fa) > 0.005 || !cJSON_Compare(schb, scha, 1))
        note(c, notes, "sampling differs: %.0f%% of steps kept their events before, %.0f%% after; "
                       "calls and totals scale with sampling, compare means",
             fb * 100, fa * 100);
    char cb[512], ca[512];
    command_of(b, cb, sizeof cb);
    command_of(a, ca, sizeof ca);
    if (strcmp(cb, ca) != 0)
        note(c, notes, "the runs come from different commands ('%s' before, '%s' after); "
                       "operations are matched by name", cb, ca);
    const cJSON *reports[2] = { b, a };
    for (int i = 0; i < 2; i++) {
        const cJSON *p = first_profile(reports[i]);
        if (cJSON_IsFalse(get(p, "clean")))
            note(c, notes, "the %s profile was not closed cleanly: it covers what was recorded "
                           "before it stopped", i ? "after" : "before");
        double total = num_or(reports[i], "operations_total", 0);
        double kept = (double)cJSON_GetArraySize(get(reports[i], "operations"));
        if (total > kept)
            note(c, notes, "the %s report holds %.0f of %.0f operations; the rest are not "
                           "compared", i ? "after" : "before", kept, total);
    }
}

/* ---- summary metrics ------------------------------------------------------------ */

static const struct metric {
    const char *name, *unit, *section, *key;
} metrics[] = {
    { "steps", "count", NULL, "steps" },
    { "sampled_steps", "count", NULL, "sampled_steps" },
    { "wall_ns", "ns", NULL, "wall_ns" },
    { "profiled_ns", "ns", NULL, "profiled_ns" },
    { "step_mean_ns", "ns", "step_time", "mean_ns" },
    { "step_p50_ns", "ns", "step_time", "p50_ns" },
    { "step_p95_ns", "ns", "step_time", "p95_ns" },
};

/* Step-time metrics of a profile without steps are missing, not zero. */
static int metric_value(const cJSON *report, const struct metric *m, double *v)
{
    const cJSON *s = get(report, "summary");
    if (m->section && stat_steps(report) <= 0)
        return 0;
    return get_num(m->section ? get(s, m->section) : s, m->key, v);
}

static void add_change(cmp_ctx *c, cJSON *row, const char *change_key, int hb, double b, int ha,
                       double a)
{
    put_opt(c, row, change_key, hb && ha, a - b);
    put_opt(c, row, "relative", hb && ha, relative(b, a));
}

static void add_summary(cmp_ctx *c, cJSON *cmp)
{
    cJSON *arr = put_arr(c, cmp, "summary");
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
        double b = 0, a = 0;
        int hb = metric_value(c->before, &metrics[i], &b);
        int ha = metric_value(c->after, &metrics[i], &a);
        cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
        put_str(c, row, "metric", metrics[i].name);
        put_str(c, row, "unit", metrics[i].unit);
        put_opt(c, row, "before", hb, b);
        put_opt(c, row, "after", ha, a);
        add_change(c, row, "change", hb, b, ha, a);
    }
}

static double step_mean(const cJSON *report)
{
    return stat_steps(report) > 0 ? num_or(get(get(report, "summary"), "step_time"), "mean_ns", 0)
                                  : 0;
}

/* Welch's test on the step durations; *rel the relative change of the mean. */
static stats_welch_result step_test(const cmp_ctx *c, double *rel)
{
    const cJSON *tb = get(get(c->before, "summary"), "step_time");
    const cJSON *ta = get(get(c->after, "summary"), "step_time");
    double mb = step_mean(c->before), ma = step_mean(c->after);
    double sdb = num_or(tb, "stddev_ns", 0), sda = num_or(ta, "stddev_ns", 0);
    *rel = mb > 0 && ma > 0 ? relative(mb, ma) : NAN;
    return stats_welch((uint64_t)stat_steps(c->before), mb, sdb * sdb,
                       (uint64_t)stat_steps(c->after), ma, sda * sda);
}

static int significant(const cmp_ctx *c, double p, double rel)
{
    return isfinite(rel) && p < c->o.alpha && fabs(rel) * 100.0 > c->o.noise_pct;
}

static void add_step_test(cmp_ctx *c, cJSON *cmp)
{
    double rel;
    stats_welch_result w = step_test(c, &rel);
    cJSON *t = put_obj(c, cmp, "step_time_test");
    put_num(c, t, "t", w.t);
    put_num(c, t, "df", w.df);
    put_num(c, t, "p_value", w.p);
    put_opt(c, t, "relative", isfinite(rel), rel);
    put_bool(c, t, "significant", significant(c, w.p, rel));
}

static void add_speedup(cmp_ctx *c, cJSON *cmp)
{
    double mb = step_mean(c->before), ma = step_mean(c->after);
    const char *basis = "step_time";
    if (!(mb > 0 && ma > 0)) {
        mb = num_or(get(c->before, "summary"), "profiled_ns", 0);
        ma = num_or(get(c->after, "summary"), "profiled_ns", 0);
        basis = "profiled_time";
    }
    if (!(mb > 0 && ma > 0)) {
        attach(c, cmp, "speedup", cJSON_CreateNull());
        return;
    }
    cJSON *s = put_obj(c, cmp, "speedup");
    put_num(c, s, "value", mb / ma);
    put_str(c, s, "basis", basis);
}

/* ---- memory ------------------------------------------------------------------ */

static int has_leak(const cJSON *report, const char *series)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, get(report, "bottlenecks"))
        if (strcmp(str_or(f, "rule", ""), "memory_leak") == 0 &&
            strcmp(str_or(f, "subject", ""), series) == 0)
            return 1;
    return 0;
}

static const char *verdict(int before, int after)
{
    return before && after ? "persisting" : before ? "fixed" : after ? "new" : "none";
}

static void add_series(cmp_ctx *c, cJSON *arr, const char *name)
{
    const cJSON *sb = find_named(get(get(c->before, "summary"), "memory"), "series", name);
    const cJSON *sa = find_named(get(get(c->after, "summary"), "memory"), "series", name);
    double b = 0, a = 0;
    int hb = get_num(sb, "peak_bytes", &b), ha = get_num(sa, "peak_bytes", &a);
    int lb = has_leak(c->before, name), la = has_leak(c->after, name);
    cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, row, "series", name);
    put_opt(c, row, "before_peak_bytes", hb, b);
    put_opt(c, row, "after_peak_bytes", ha, a);
    add_change(c, row, "change_bytes", hb, b, ha, a);
    put_bool(c, row, "leak_before", lb);
    put_bool(c, row, "leak_after", la);
    put_str(c, row, "leak", verdict(lb, la));
}

static void add_memory(cmp_ctx *c, cJSON *cmp)
{
    cJSON *arr = put_arr(c, cmp, "memory");
    const cJSON *mb = get(get(c->before, "summary"), "memory");
    const cJSON *ma = get(get(c->after, "summary"), "memory"), *s;
    cJSON_ArrayForEach(s, mb)
        add_series(c, arr, str_or(s, "series", ""));
    cJSON_ArrayForEach(s, ma)
        if (!find_named(mb, "series", str_or(s, "series", "")))
            add_series(c, arr, str_or(s, "series", ""));
}

/* ---- operations ------------------------------------------------------------------ */

typedef struct op_pair {
    const char *name;
    const cJSON *b, *a;    /* the operation in each report, or NULL */
    double weight;         /* the larger total, for the order */
} op_pair;

static int by_weight(const void *x, const void *y)
{
    const op_pair *p = x, *q = y;
    if (p->weight != q->weight)
        return p->weight < q->weight ? 1 : -1;
    return strcmp(p->name, q->name);
}

static double op_weight(const op_pair *p)
{
    return fmax(num_or(p->b, "incl_ns", 0), num_or(p->a, "incl_ns", 0));
}

/* Every operation of either report, matched by name, largest first. */
static op_pair *pair_ops(cmp_ctx *c, size_t *n)
{
    const cJSON *ob = get(c->before, "operations"), *oa = get(c->after, "operations"), *op;
    size_t cap = (size_t)cJSON_GetArraySize(ob) + (size_t)cJSON_GetArraySize(oa);
    op_pair *v = calloc(cap ? cap : 1, sizeof *v);
    if (!v) {
        c->ok = 0;
        return NULL;
    }
    *n = 0;
    cJSON_ArrayForEach(op, ob) {
        const char *name = str_or(op, "name", "");
        v[(*n)++] = (op_pair){ name, op, find_named(oa, "name", name), 0 };
    }
    cJSON_ArrayForEach(op, oa) {
        const char *name = str_or(op, "name", "");
        if (!find_named(ob, "name", name))
            v[(*n)++] = (op_pair){ name, NULL, op, 0 };
    }
    for (size_t i = 0; i < *n; i++)
        v[i].weight = op_weight(&v[i]);
    qsort(v, *n, sizeof *v, by_weight);
    return v;
}

static void add_side(cmp_ctx *c, cJSON *row, const char *key, const cJSON *op)
{
    if (!op) {
        attach(c, row, key, cJSON_CreateNull());
        return;
    }
    cJSON *s = put_obj(c, row, key);
    put_num(c, s, "calls", num_or(op, "calls", 0));
    put_num(c, s, "total_ns", num_or(op, "incl_ns", 0));
    put_num(c, s, "self_ns", num_or(op, "self_ns", 0));
    put_num(c, s, "mean_ns", num_or(op, "mean_ns", 0));
    put_num(c, s, "stddev_ns", num_or(op, "stddev_ns", 0));
    put_num(c, s, "share", num_or(op, "incl_share", 0));
}

/* Welch's test of the per-call durations of an operation in both runs. */
static stats_welch_result op_test(const op_pair *p)
{
    double sdb = num_or(p->b, "stddev_ns", 0), sda = num_or(p->a, "stddev_ns", 0);
    return stats_welch((uint64_t)num_or(p->b, "calls", 0), num_or(p->b, "mean_ns", 0), sdb * sdb,
                       (uint64_t)num_or(p->a, "calls", 0), num_or(p->a, "mean_ns", 0), sda * sda);
}

static const char *op_status(int sig, double rel, const op_pair *p)
{
    if (!p->b)
        return "added";
    if (!p->a)
        return "removed";
    return !sig ? "unchanged" : rel > 0 ? "slower" : "faster";
}

static void add_op(cmp_ctx *c, cJSON *arr, const op_pair *p)
{
    int both = p->b && p->a;
    double mb = num_or(p->b, "mean_ns", 0), ma = num_or(p->a, "mean_ns", 0);
    double rel = both ? relative(mb, ma) : NAN;
    stats_welch_result w = both ? op_test(p) : (stats_welch_result){ 0, 0, 1 };
    int sig = both && significant(c, w.p, rel);
    cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, row, "name", p->name);
    put_str(c, row, "kind", str_or(p->b ? p->b : p->a, "kind", ""));
    put_str(c, row, "status", op_status(sig, rel, p));
    add_side(c, row, "before", p->b);
    add_side(c, row, "after", p->a);
    put_opt(c, row, "mean_change_ns", both, ma - mb);
    put_opt(c, row, "relative", both, rel);
    put_opt(c, row, "t", both, w.t);
    put_opt(c, row, "df", both, w.df);
    put_opt(c, row, "p_value", both, w.p);
    put_bool(c, row, "significant", sig);
}

static void add_operations(cmp_ctx *c, cJSON *cmp)
{
    size_t n = 0;
    cJSON *arr = put_arr(c, cmp, "operations");
    op_pair *v = pair_ops(c, &n);
    for (size_t i = 0; v && i < n; i++)
        add_op(c, arr, &v[i]);
    free(v);
}

/* ---- bottlenecks ------------------------------------------------------------------ */

static const cJSON *find_finding(const cJSON *report, const cJSON *f)
{
    const cJSON *g;
    const char *rule = str_or(f, "rule", ""), *subject = str_or(f, "subject", "");
    cJSON_ArrayForEach(g, get(report, "bottlenecks"))
        if (strcmp(str_or(g, "rule", ""), rule) == 0 &&
            strcmp(str_or(g, "subject", ""), subject) == 0)
            return g;
    return NULL;
}

static void add_finding(cmp_ctx *c, cJSON *arr, const cJSON *b, const cJSON *a)
{
    const cJSON *f = a ? a : b;
    cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, row, "rule", str_or(f, "rule", ""));
    put_str(c, row, "subject", str_or(f, "subject", ""));
    put_str(c, row, "severity", str_or(f, "severity", ""));
    put_str(c, row, "title", str_or(f, "title", ""));
    if (b && a) {
        put_str(c, row, "severity_before", str_or(b, "severity", ""));
        put_str(c, row, "title_before", str_or(b, "title", ""));
    }
}

static void add_bottlenecks(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = put_obj(c, cmp, "bottlenecks");
    cJSON *fixed = put_arr(c, o, "fixed"), *added = put_arr(c, o, "new");
    cJSON *persisting = put_arr(c, o, "persisting");
    const cJSON *f;
    cJSON_ArrayForEach(f, get(c->before, "bottlenecks")) {
        const cJSON *g = find_finding(c->after, f);
        add_finding(c, g ? persisting : fixed, f, g);
    }
    cJSON_ArrayForEach(f, get(c->after, "bottlenecks"))
        if (!find_finding(c->before, f))
            add_finding(c, added, NULL, f);
}

/* ---- regression ------------------------------------------------------------------ */

static void add_reason(cmp_ctx *c, cJSON *arr, const char *what, const char *name, double rel,
                       double p)
{
    cJSON *r = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, r, "what", what);
    put_str(c, r, "name", name);
    put_num(c, r, "relative", rel);
    put_num(c, r, "p_value", p);
}

/* A significant slowdown past the threshold of the mean step time, or of an
 * operation that takes at least min_share of the time in either run. */
static void add_regression(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = put_obj(c, cmp, "regression");
    int asked = c->o.regression_pct >= 0;
    put_opt(c, o, "threshold_pct", asked, c->o.regression_pct);
    cJSON *reasons = attach(c, o, "reasons", cJSON_CreateArray());
    if (asked) {
        double limit = c->o.regression_pct / 100.0, rel;
        stats_welch_result w = step_test(c, &rel);
        if (significant(c, w.p, rel) && rel > limit)
            add_reason(c, reasons, "step_time", "mean step time", rel, w.p);
        const cJSON *op;
        cJSON_ArrayForEach(op, get(cmp, "operations")) {
            const cJSON *b = get(op, "before"), *a = get(op, "after");
            double share = fmax(num_or(b, "share", 0), num_or(a, "share", 0));
            rel = num_or(op, "relative", 0);
            if (cJSON_IsTrue(get(op, "significant")) && rel > limit && share >= c->o.min_share)
                add_reason(c, reasons, "operation", str_or(op, "name", ""), rel,
                           num_or(op, "p_value", 1));
        }
    }
    put_bool(c, o, "regressed", cJSON_GetArraySize(reasons) > 0);
}

int compare_regressed(const cJSON *cmp)
{
    return cJSON_IsTrue(get(get(cmp, "regression"), "regressed"));
}

/* ---- the whole comparison ------------------------------------------------------------- */

static int usable(const cJSON *report)
{
    return cJSON_IsObject(get(report, "summary")) && cJSON_IsArray(get(report, "operations"));
}

static void add_options(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = put_obj(c, cmp, "options");
    put_num(c, o, "noise_pct", c->o.noise_pct);
    put_num(c, o, "alpha", c->o.alpha);
    put_opt(c, o, "fail_on_regression_pct", c->o.regression_pct >= 0, c->o.regression_pct);
    put_num(c, o, "min_share", c->o.min_share);
}

cJSON *compare_build(const cJSON *before, const cJSON *after, const compare_options *o,
                     prof_error *err)
{
    if (!usable(before) || !usable(after)) {
        prof_error_set(err, PROF_ERR_INVALID, "not an analyze report (no summary or operations)");
        return NULL;
    }
    cmp_ctx c = { .before = before, .after = after, .ok = 1 };
    if (o)
        c.o = *o;
    else
        compare_options_default(&c.o);
    cJSON *cmp = cJSON_CreateObject();
    if (!cmp)
        c.ok = 0;
    put_str(&c, cmp, "schema", "prof-compare");
    put_num(&c, cmp, "version", 1);
    add_options(&c, cmp);
    add_run(&c, cmp, "before", before);
    add_run(&c, cmp, "after", after);
    add_notes(&c, put_arr(&c, cmp, "notes"));
    add_summary(&c, cmp);
    add_step_test(&c, cmp);
    add_speedup(&c, cmp);
    add_memory(&c, cmp);
    add_operations(&c, cmp);
    add_bottlenecks(&c, cmp);
    add_regression(&c, cmp);
    if (!c.ok) {
        cJSON_Delete(cmp);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
        return NULL;
    }
    return cmp;
}
