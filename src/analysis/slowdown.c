/* slowdown.c - the step_slowdown rule (formats/rules.md §4.6): a step time
 * that grows over the run, told apart from a machine that was busier late
 * in the run. A slowdown the program causes persists, so it lifts the
 * fastest steps too, and it lives in some operations, not in all of them
 * alike. Other work on the machine adds bursts of slow steps and leaves the
 * fastest ones as they were, or slows every operation alike; then the
 * report says so in a note (report.c) instead of blaming the program. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

#define FLOOR_WINDOWS 8     /* windows of the fitted steps whose fast floor is fitted */
#define FLOOR_QUANTILE 0.10 /* a window's floor: its fastest tenth                     */
#define ALIKE_MIN_OPS 5     /* operations needed to say all of them slowed alike       */
#define GROWING_LISTED 3    /* operations named as growing most                        */

/* The number of used step i. */
static double step_number(const analysis_ctx *c, const step_stats *s, size_t i)
{
    return (double)c->m->steps[s->index[i]].number;
}

/* The fits over the used steps from w on; 1 when there is no significant
 * growth agreed by both fits, -1 out of memory. */
static int slowdown_fits(analysis_ctx *c, size_t w, stats_fit *fit, double *rslope)
{
    const step_stats *s = &c->steps;
    size_t m = s->n - w;
    double *num = xcalloc(c, m, sizeof *num), rint;
    if (!num)
        return -1;
    for (size_t i = 0; i < m; i++)
        num[i] = step_number(c, s, w + i);
    int none = stats_linear_fit(num, s->dur + w, m, fit) != 0 || fit->slope <= 0 ||
               fit->p_value >= 0.01 || s->p50 <= 0 ||
               stats_robust_fit(num, s->dur + w, m, rslope, &rint) != 0 ||
               !stats_fits_agree(fit, *rslope);
    free(num);
    return none;
}

/* How much the fast floor of the steps from w on rises over them, as a
 * share of the median: the fastest tenth of each of FLOOR_WINDOWS
 * consecutive windows, and the median of the slopes between every two
 * windows (Theil-Sen) over the fitted steps. NaN with too few steps. */
static double floor_drift(analysis_ctx *c, size_t w)
{
    const step_stats *s = &c->steps;
    size_t m = s->n - w, k = m / 5 < FLOOR_WINDOWS ? m / 5 : FLOOR_WINDOWS;
    double x[FLOOR_WINDOWS], y[FLOOR_WINDOWS], slopes[FLOOR_WINDOWS * FLOOR_WINDOWS];
    size_t ns = 0;
    if (k < 3)
        return NAN;
    double *work = xcalloc(c, m, sizeof *work);
    if (!work)
        return NAN;
    for (size_t i = 0; i < k; i++) {
        size_t a = w + i * m / k, b = w + (i + 1) * m / k;
        memcpy(work, s->dur + a, (b - a) * sizeof *work);
        y[i] = stats_quantile_select(work, b - a, FLOOR_QUANTILE);
        x[i] = (step_number(c, s, a) + step_number(c, s, b - 1)) / 2.0;
    }
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++)
            if (x[j] > x[i])
                slopes[ns++] = (y[j] - y[i]) / (x[j] - x[i]);
    double slope = ns ? stats_quantile_select(slopes, ns, 0.5) : NAN;
    free(work);
    return slope * (step_number(c, s, s->n - 1) - step_number(c, s, w)) / s->p50;
}

/* A third of the fitted steps: where it lies in time and its mean. */
typedef struct step_third {
    time_window at;
    double mean;
} step_third;

static step_third third_of(const analysis_ctx *c, size_t a, size_t b)
{
    const step_stats *s = &c->steps;
    const model_step *first = &c->m->steps[s->index[a]], *last = &c->m->steps[s->index[b - 1]];
    step_third t = { { first->start_ns, last->start_ns + last->dur_ns }, 0.0 };
    for (size_t i = a; i < b; i++)
        t.mean += s->dur[i] / (double)(b - a);
    return t;
}

static int in_windows(uint64_t t, const time_window *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t >= w[i].from && t < w[i].to)
            return 1;
    return 0;
}

/* An operation's mean call in the time batches whose middle lies in one of
 * the n windows w (inside), or in none of them (!inside); NaN without a
 * call there. */
static double op_mean_in(const model_op *op, const time_window *w, size_t n, int inside)
{
    uint64_t width = time_batches_width(&op->batches), calls = 0, ns = 0;
    uint32_t used = time_batches_used(&op->batches);
    for (uint32_t i = 0; i < used && width > 0; i++) {
        uint64_t mid = op->batches.t0 + i * width + width / 2;
        if (in_windows(mid, w, n) == inside) {
            calls += op->batches.at[i].calls;
            ns += op->batches.at[i].ns;
        }
    }
    return calls ? (double)ns / (double)calls : NAN;
}

static int by_ratio(const void *a, const void *b)
{
    double x = ((const op_growth *)a)->ratio, y = ((const op_growth *)b)->ratio;
    return (x < y) - (x > y);
}

size_t ops_growth(analysis_ctx *c, const time_window *from, size_t nfrom, const time_window *to,
                  size_t nto, op_growth **out)
{
    op_growth *g = xcalloc(c, c->m->nops ? c->m->nops : 1, sizeof *g);
    size_t n = 0;
    *out = g;
    if (!g)
        return SIZE_MAX;
    for (size_t i = 0; i < c->m->nops; i++) {
        const model_op *op = &c->m->ops[i];
        if (op->kind == MODEL_KIND_GPU || time_batches_empty(&op->batches))
            continue;
        double a = to ? op_mean_in(op, from, nfrom, 1) : op_mean_in(op, from, nfrom, 0);
        double b = to ? op_mean_in(op, to, nto, 1) : op_mean_in(op, from, nfrom, 1);
        if (a > 0 && b > 0)
            g[n++] = (op_growth){ op, b / a };
    }
    qsort(g, n, sizeof *g, by_ratio);
    return n;
}

/* Weighted by self time: what the step's time is made of. Short calls
 * are seldom the ones a busy machine interrupts, so the many small
 * operations of a step slow down less than its time does; the operations
 * that hold the time say how the step slowed. */
double ops_median_growth(const op_growth *g, size_t n)
{
    double total = 0, seen = 0;
    for (size_t i = 0; i < n; i++)
        total += (double)g[i].op->self_ns;
    if (n == 0 || !(total > 0))
        return NAN;
    for (size_t i = 0; i < n; i++) { /* largest first */
        seen += (double)g[i].op->self_ns;
        if (seen >= total / 2.0)
            return g[i].ratio;
    }
    return g[n - 1].ratio;
}

int ops_grew_alike(const op_growth *g, size_t n, double step_ratio)
{
    double ops = ops_median_growth(g, n);
    return n >= ALIKE_MIN_OPS && step_ratio > 1.0 && ops > 1.0 &&
           log(ops) >= 0.5 * log(step_ratio);
}

/* What the finding says of where the growth is: the operations that grew
 * most, and the median over all of them. */
static void growth_evidence(analysis_ctx *c, cJSON *e, const op_growth *g, size_t n,
                            double step_ratio)
{
    jnum(c, e, "step_ratio", step_ratio);
    jnum(c, e, "operations_median_ratio", ops_median_growth(g, n));
    cJSON *list = jarr(c, e, "growing");
    for (size_t i = 0; i < n && i < GROWING_LISTED && g[i].ratio > 1.0; i++) {
        cJSON *o = jpush_obj(c, list);
        jstr(c, o, RK_NAME, g[i].op->name);
        jnum(c, o, "ratio", g[i].ratio);
    }
}

static void add_finding(analysis_ctx *c, const stats_fit *fit, double rslope, double rel,
                        double floor, double first, double last, const op_growth *g, size_t n,
                        double step_ratio)
{
    char title[160], rec[700], a[32], b[32], where[200] = "";
    if (n > 0 && g[0].ratio > 1.0) {
        char r[32];
        fmt_text(where, sizeof where, " It grows most in %s (+%s from the first third of "
                 "these steps to the last).", g[0].op->name,
                 fmt_pct(r, sizeof r, g[0].ratio - 1.0));
    }
    fmt_text(title, sizeof title, "step time grows %s per step (+%s over the run)",
             fmt_duration(a, fit->slope), fmt_pct(b, sizeof b, rel));
    fmt_text(rec, sizeof rec,
             "Step time grows by %s per step (+%s from step %.0f to %.0f): something "
             "accumulates - a growing Python structure walked every step, an autograd graph "
             "kept alive, a cache or a data source that slows down.%s Compare the first and "
             "last steps with prof compare, or profile a late step.",
             fmt_duration(a, fit->slope), fmt_pct(b, sizeof b, rel), first, last, where);
    cJSON *e = finding_add(c, "step_slowdown", severity_by(rel, 0.50, 0.25), "steps",
                           fmin(1.0, rel / 2.0), title, rec);
    jnum(c, e, "slope_ns_per_step", fit->slope);
    jnum(c, e, "ci95_ns_per_step", fit->ci95);
    jnum(c, e, "robust_slope_ns_per_step", rslope);
    jnum(c, e, RK_P_VALUE, fit->p_value);
    jnum(c, e, RK_R2, fit->r2);
    jnum(c, e, "relative_drift", rel);
    jnum(c, e, "floor_drift", floor);
    jnum(c, e, RK_FIRST_STEP, first);
    jnum(c, e, RK_LAST_STEP, last);
    jnum(c, e, "median_ns", c->steps.p50);
    growth_evidence(c, e, g, n, step_ratio);
}

void rule_step_slowdown(analysis_ctx *c)
{
    const step_stats *s = &c->steps;
    size_t w = stats_warmup(s->n);
    if (s->n < w + MIN_FIT_POINTS)
        return;
    stats_fit fit;
    double rslope;
    if (slowdown_fits(c, w, &fit, &rslope) != 0)
        return;
    double first = step_number(c, s, w), last = step_number(c, s, s->n - 1);
    double rel = fit.slope * (last - first) / s->p50;
    if (rel < 0.10)
        return;
    size_t m = s->n - w, third = m / 3 ? m / 3 : 1;
    step_third early = third_of(c, w, w + third), late = third_of(c, s->n - third, s->n);
    op_growth *g = NULL;
    size_t n = ops_growth(c, &early.at, 1, &late.at, 1, &g);
    if (n == SIZE_MAX)
        return;
    double floor = floor_drift(c, w), step_ratio = late.mean / early.mean;
    double ops = ops_median_growth(g, n);
    /* persists: the fast steps rose by at least half the drift (NaN: too
     * few steps to tell, as before) */
    int persists = !(floor < rel / 2.0), alike = ops_grew_alike(g, n, step_ratio);
    if (persists && !alike) {
        add_finding(c, &fit, rslope, rel, floor, first, last, g, n, step_ratio);
    } else {
        c->busy.rel = rel;
        c->busy.floor = floor;
        c->busy.first = first;
        c->busy.last = last;
        c->busy.ops_ratio = alike ? ops : NAN;
    }
    free(g);
}
