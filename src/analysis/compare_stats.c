/* compare_stats.c - the comparison's test (compare_stats.h). With several
 * runs on a side, each run is one observation (its steady mean) and the
 * sides are compared with Welch's t-test over runs: steps of one run are
 * not independent, and only repeated runs show how much a whole run varies.
 * With one run a side, the batch means of each run stand in for repeated
 * measurements; they are merged and their variance inflated while
 * neighbouring batches are correlated (stats_batch_means), and the result
 * says nothing about run-to-run variation, which the report says. Either
 * way the question is whether the change exceeds the noise floor, not
 * whether it differs from zero: a change is significant when its whole
 * interval lies beyond +-noise, so that many unchanged operations tested at
 * once do not turn up chance changes of a percent or two. The operations
 * are also held together (cmp_level_each): one whose time per process is a
 * coin toss between two speeds can still look changed by chance, and with
 * thirty of them some would in a few percent of comparisons. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare_stats.h"
#include "analysis/report_keys.h"
#include "analysis/stats.h"

#define CMP_MIN_BATCHES 4 /* fewer batch means a side: no within-run test */
#define CMP_MIN_REFERENCE 3 /* fewer other reference operations: no adjustment */

static const cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* A run's steady object in the compact form the tests read: its mean
 * when finite, and its first CMP_MAX_BATCHES finite batch means into
 * batch (room for that many). */
static cmp_steady steady_of(const cJSON *steady, double *batch)
{
    const cJSON *m = get(steady, RK_MEAN_NS), *b;
    cmp_steady s = { NAN, batch, 0 };
    if (cJSON_IsNumber(m) && isfinite(m->valuedouble))
        s.mean = m->valuedouble;
    cJSON_ArrayForEach(b, get(steady, RK_BATCH_MEANS_NS))
        if (s.nbatch < CMP_MAX_BATCHES && cJSON_IsNumber(b) && isfinite(b->valuedouble))
            batch[s.nbatch++] = b->valuedouble;
    return s;
}

/* The steady means of the runs that have one, into v (room for n). */
static size_t run_means(const cmp_steady *steady, size_t n, double *v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(steady[i].mean))
            v[k++] = steady[i].mean;
    return k;
}

/* The first run that has a mean (the only run, within). */
static const cmp_steady *only_run(const cmp_steady *steady, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(steady[i].mean))
            return &steady[i];
    return NULL;
}

static void within_run(const cmp_steady *sb, const cmp_steady *sa, const compare_options *o,
                       cmp_result *r)
{
    double vb[CMP_MAX_BATCHES], va[CMP_MAX_BATCHES]; /* stats_batch_means overwrites */
    if (!sb || !sa || sb->nbatch < CMP_MIN_BATCHES || sa->nbatch < CMP_MIN_BATCHES)
        return;
    size_t nb = sb->nbatch < CMP_MAX_BATCHES ? sb->nbatch : CMP_MAX_BATCHES;
    size_t na = sa->nbatch < CMP_MAX_BATCHES ? sa->nbatch : CMP_MAX_BATCHES;
    memcpy(vb, sb->batch, nb * sizeof *vb);
    memcpy(va, sa->batch, na * sizeof *va);
    stats_sample b = stats_batch_means(vb, nb), a = stats_batch_means(va, na);
    stats_diff d = stats_diff_test(b, a, o->alpha);
    r->method = CMP_WITHIN_RUN;
    r->t = d.t;
    r->df = d.df;
    r->p = stats_p_beyond(&d, o->noise_pct / 100.0 * r->before);
    /* the displayed means are the steady means; the interval is the test's */
    r->rel_low = (r->after - r->before - d.half) / r->before;
    r->rel_high = (r->after - r->before + d.half) / r->before;
}

static void between_runs(const double *vb, size_t nb, const double *va, size_t na,
                         const compare_options *o, cmp_result *r)
{
    stats_diff d = stats_diff_test(stats_sample_of(vb, nb), stats_sample_of(va, na), o->alpha);
    r->method = CMP_BETWEEN_RUNS;
    r->t = d.t;
    r->df = d.df;
    r->p = stats_p_beyond(&d, o->noise_pct / 100.0 * r->before);
    r->rel_low = (d.diff - d.half) / r->before;
    r->rel_high = (d.diff + d.half) / r->before;
}

cmp_result cmp_no_test(void)
{
    return (cmp_result){ CMP_NO_TEST, 0, 0, NAN, NAN, NAN, NAN, NAN, NAN, 0.0, 0.0, 1.0, 0 };
}

cmp_result cmp_test_steady(const cmp_steady *steady_b, size_t nb, const cmp_steady *steady_a,
                           size_t na, const compare_options *o)
{
    cmp_result r = cmp_no_test();
    double *vb = malloc((nb ? nb : 1) * sizeof *vb), *va = malloc((na ? na : 1) * sizeof *va);
    if (vb && va) {
        r.runs_before = run_means(steady_b, nb, vb);
        r.runs_after = run_means(steady_a, na, va);
    }
    if (r.runs_before && r.runs_after) {
        r.before = stats_sample_of(vb, r.runs_before).mean;
        r.after = stats_sample_of(va, r.runs_after).mean;
        r.relative = r.before > 0 ? (r.after - r.before) / r.before : NAN;
    }
    if (isfinite(r.relative)) {
        if (r.runs_before >= 2 || r.runs_after >= 2)
            between_runs(vb, r.runs_before, va, r.runs_after, o, &r);
        else
            within_run(only_run(steady_b, nb), only_run(steady_a, na), o, &r);
    }
    free(vb);
    free(va);
    r.estimate = r.relative;
    if (r.method == CMP_NO_TEST) {
        r.t = r.df = 0.0;
        r.p = 1.0;
    }
    r.significant = r.method != CMP_NO_TEST && r.p < o->alpha;
    return r;
}

cmp_result cmp_test(const cJSON *const *steady_b, size_t nb, const cJSON *const *steady_a,
                    size_t na, const compare_options *o)
{
    size_t n = nb + na;
    cmp_steady *s = malloc((n ? n : 1) * sizeof *s);
    double *batch = malloc((n ? n : 1) * CMP_MAX_BATCHES * sizeof *batch);
    cmp_result r = cmp_no_test();
    if (s && batch) {
        for (size_t i = 0; i < n; i++)
            s[i] = steady_of(i < nb ? steady_b[i] : steady_a[i - nb], &batch[i * CMP_MAX_BATCHES]);
        r = cmp_test_steady(s, nb, &s[nb], na, o);
    }
    free(s);
    free(batch);
    return r;
}

/* ---- the runs' speeds ---------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cmp_speeds_init(cmp_speeds *s, const double *logs, size_t nref, size_t nruns)
{
    memset(s, 0, sizeof *s);
    s->nruns = nruns;
    s->nref = nref;
    if (nref == 0 || nruns == 0)
        return 0;
    s->value = malloc(nref * nruns * sizeof *s->value);
    s->sorted = malloc(nref * nruns * sizeof *s->sorted);
    if (!s->value || !s->sorted) {
        cmp_speeds_free(s);
        return -1;
    }
    for (size_t k = 0; k < nref; k++) {
        double mean = stats_sample_of(&logs[k * nruns], nruns).mean;
        for (size_t r = 0; r < nruns; r++) {
            s->value[k * nruns + r] = logs[k * nruns + r] - mean;
            s->sorted[r * nref + k] = s->value[k * nruns + r];
        }
    }
    for (size_t r = 0; r < nruns; r++)
        qsort(&s->sorted[r * nref], nref, sizeof *s->sorted, by_value);
    return 0;
}

void cmp_speeds_free(cmp_speeds *s)
{
    free(s->value);
    free(s->sorted);
    s->value = s->sorted = NULL;
}

int cmp_speeds_usable(const cmp_speeds *s, size_t ref)
{
    size_t others = ref < s->nref ? s->nref - 1 : s->nref;
    return s->sorted && others >= CMP_MIN_REFERENCE;
}

/* The i-th smallest of a run's sorted values with the one at skip left out
 * (skip SIZE_MAX: none). */
static double ranked(const double *v, size_t skip, size_t i)
{
    return v[skip != SIZE_MAX && i >= skip ? i + 1 : i];
}

double cmp_speed_of(const cmp_speeds *s, size_t run, size_t ref)
{
    const double *v = &s->sorted[run * s->nref];
    size_t skip = SIZE_MAX, n = s->nref;
    if (ref < s->nref) { /* where its value sits: any equal one leaves the same values */
        double x = s->value[ref * s->nruns + run];
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        skip = lo;
        n--;
    }
    if (n % 2)
        return ranked(v, skip, n / 2);
    return (ranked(v, skip, n / 2 - 1) + ranked(v, skip, n / 2)) / 2.0;
}

cmp_result cmp_test_adjusted(const double *yb, size_t nb, const double *ya, size_t na,
                             double before, double after, const compare_options *o)
{
    cmp_result r = cmp_no_test();
    r.runs_before = nb;
    r.runs_after = na;
    r.before = before;
    r.after = after;
    r.relative = before > 0 ? (after - before) / before : NAN;
    if (nb == 0 || na == 0 || nb + na < 3 || !isfinite(r.relative))
        return r;
    stats_sample b = stats_sample_of(yb, nb), a = stats_sample_of(ya, na);
    stats_diff d = nb == na ? stats_pooled_test(b, a, o->alpha) : stats_diff_test(b, a, o->alpha);
    double floor = o->noise_pct / 100.0;
    /* the floor on the log scale, on the side the estimate lies: significant
     * exactly when the interval, as a relative change, lies beyond +-floor */
    double margin = d.diff >= 0 ? log1p(floor) : floor < 1 ? -log1p(-floor) : INFINITY;
    r.method = CMP_SPEED_ADJUSTED;
    r.t = d.t;
    r.df = d.df;
    r.p = stats_p_beyond(&d, margin);
    r.estimate = expm1(d.diff);
    r.rel_low = expm1(d.diff - d.half);
    r.rel_high = expm1(d.diff + d.half);
    r.significant = r.p < o->alpha;
    return r;
}

int cmp_regressed_past(const cmp_result *r, double limit)
{
    if (!r->significant || !(r->estimate > limit))
        return 0;
    return r->method != CMP_WITHIN_RUN || r->rel_low > limit;
}

double cmp_level_each(const double *p, const double *w, size_t m, double alpha)
{
    if (m <= 1)
        return alpha;
    double *sorted = malloc(m * sizeof *sorted);
    size_t found = 0;
    if (!sorted)
        return NAN;
    for (size_t i = 0; i < m; i++)
        sorted[i] = !w ? p[i] : w[i] > 0 ? p[i] / w[i] : INFINITY;
    qsort(sorted, m, sizeof *sorted, by_value);
    for (size_t k = m; k > 0 && !found; k--)
        if (sorted[k - 1] < alpha * (double)k / (double)m)
            found = k;
    free(sorted);
    return alpha * (double)(found ? found : 1) / (double)m;
}

const char *cmp_method_name(cmp_method m)
{
    switch (m) {
    case CMP_BETWEEN_RUNS:
        return "between_runs";
    case CMP_WITHIN_RUN:
        return "within_run";
    case CMP_SPEED_ADJUSTED:
        return "speed_adjusted";
    case CMP_NO_TEST:
        break;
    }
    return "none";
}
