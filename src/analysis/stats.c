/* stats.c - least-squares and robust lines, Welch's t-test and order
 * statistics for the analysis rules (formats/rules.md §2). GSL's default
 * error handler aborts the process; every GSL call here runs with it
 * switched off (and restored), and its status is checked instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/stats.h"

/* Two-sided p-value of t with df degrees of freedom. */
static double two_sided_p(double t, double df)
{
    if (isinf(t))
        return 0.0;
    double p = 2.0 * gsl_cdf_tdist_Q(fabs(t), df);
    return p > 1.0 ? 1.0 : p;
}

static int all_same(const double *x, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0])
            return 0;
    return 1;
}

int stats_linear_fit(const double *x, const double *y, size_t n, stats_fit *out)
{
    memset(out, 0, sizeof *out);
    if (n < 3 || all_same(x, n))
        return -1;
    double c0, c1, cov00, cov01, cov11, sumsq;
    int rc = gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    if (rc != GSL_SUCCESS)
        return -1;
    double df = (double)(n - 2);
    out->n = n;
    out->slope = c1;
    out->intercept = c0;
    out->se_slope = sqrt(cov11 > 0 ? cov11 : 0.0);
    if (out->se_slope > 0) {
        out->t = c1 / out->se_slope;
        out->p_value = two_sided_p(out->t, df);
        out->ci95 = gsl_cdf_tdist_Qinv(0.025, df) * out->se_slope;
    } else { /* a perfect line */
        out->t = c1 == 0 ? 0.0 : copysign(INFINITY, c1);
        out->p_value = c1 == 0 ? 1.0 : 0.0;
        out->ci95 = 0.0;
    }
    double mean = gsl_stats_mean(y, 1, n), sst = 0;
    for (size_t i = 0; i < n; i++)
        sst += (y[i] - mean) * (y[i] - mean);
    out->r2 = sst > 0 ? 1.0 - sumsq / sst : 1.0;
    return 0;
}

int stats_robust_fit_limited(const double *x, const double *y, size_t n, size_t maxiter,
                             double *slope, double *intercept, int *converged)
{
    if (n < 3 || all_same(x, n))
        return -1;
    int ret = -2;
    size_t k = n < STATS_ROBUST_MAX ? n : STATS_ROBUST_MAX;
    gsl_matrix *X = gsl_matrix_alloc(k, 2);
    gsl_vector *vy = gsl_vector_alloc(k), *c = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_robust_workspace *w =
        gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, k, 2);
    if (!X || !vy || !c || !cov || !w)
        goto out;
    ret = -3;
    if (gsl_multifit_robust_maxiter(maxiter, w) != GSL_SUCCESS)
        goto out;
    for (size_t i = 0; i < k; i++) {
        size_t at = k < n ? i * (n - 1) / (k - 1) : i;
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, x[at]);
        gsl_vector_set(vy, i, y[at]);
    }
    /* Values in whole pages or chunks can leave points on the bisquare's
     * cutoff: reweighting then creeps (a real run took 245 iterations) or
     * cycles between two weightings. Past the limit the estimate still
     * moves by well under 1%, so it is kept; agreement judges it. */
    int rc = gsl_multifit_robust(X, vy, c, cov, w);
    if (rc != GSL_SUCCESS && rc != GSL_EMAXITER)
        goto out;
    if (converged)
        *converged = rc == GSL_SUCCESS;
    *intercept = gsl_vector_get(c, 0);
    *slope = gsl_vector_get(c, 1);
    ret = isfinite(*slope) ? 0 : -3;
out:
    if (w)
        gsl_multifit_robust_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(vy);
    gsl_matrix_free(X);
    return ret;
}

int stats_robust_fit(const double *x, const double *y, size_t n, double *slope,
                     double *intercept)
{
    return stats_robust_fit_limited(x, y, n, STATS_ROBUST_ITER, slope, intercept, NULL);
}

int stats_fits_agree(const stats_fit *ols, double robust_slope)
{
    if (!isfinite(robust_slope))
        return 0;
    if ((ols->slope > 0) != (robust_slope > 0) || (ols->slope < 0) != (robust_slope < 0))
        return 0;
    double tol = fmax(ols->ci95, 0.25 * fabs(ols->slope));
    return fabs(robust_slope - ols->slope) <= tol;
}

stats_welch_result stats_welch(uint64_t n1, double mean1, double var1, uint64_t n2,
                               double mean2, double var2)
{
    stats_welch_result r = { 0.0, 0.0, 1.0 };
    if (n1 < 2 || n2 < 2)
        return r;
    double v1 = (var1 > 0 ? var1 : 0) / (double)n1, v2 = (var2 > 0 ? var2 : 0) / (double)n2;
    double diff = mean2 - mean1;
    if (v1 + v2 <= 0) {
        if (diff != 0) {
            r.t = copysign(INFINITY, diff);
            r.df = (double)(n1 + n2 - 2);
            r.p = 0.0;
        }
        return r;
    }
    r.t = diff / sqrt(v1 + v2);
    r.df = (v1 + v2) * (v1 + v2) /
           (v1 * v1 / (double)(n1 - 1) + v2 * v2 / (double)(n2 - 1));
    r.p = two_sided_p(r.t, r.df);
    return r;
}

stats_sample stats_sample_of(const double *v, size_t n)
{
    stats_sample s = { n, 0.0, 0.0 };
    if (n == 0)
        return s;
    s.mean = gsl_stats_mean(v, 1, n);
    s.var = n > 1 ? gsl_stats_variance_m(v, 1, n, s.mean) : 0.0;
    return s;
}

double stats_lag1(const double *v, size_t n)
{
    if (n < 3)
        return 0.0;
    double m = gsl_stats_mean(v, 1, n), num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        den += (v[i] - m) * (v[i] - m);
        if (i + 1 < n)
            num += (v[i] - m) * (v[i + 1] - m);
    }
    return den > 0 ? num / den : 0.0;
}

/* Batches closer together than their noise repeat each other: merging
 * pairs doubles the batch and shrinks the correlation between neighbours
 * (for AR(1) noise roughly as 1 / batch length), down to 8 batches. */
stats_sample stats_batch_means(double *v, size_t n)
{
    double r1 = stats_lag1(v, n);
    while (n >= 16 && r1 > 1.645 / sqrt((double)n)) {
        for (size_t i = 0; i < n / 2; i++)
            v[i] = 0.5 * (v[2 * i] + v[2 * i + 1]);
        n /= 2;
        r1 = stats_lag1(v, n);
    }
    stats_sample s = stats_sample_of(v, n);
    if (r1 > 0)
        s.var *= (1.0 + fmin(r1, 0.9)) / (1.0 - fmin(r1, 0.9));
    return s;
}

/* The two-sided t quantile for 1 - alpha. */
static double t_quantile(double alpha, double df)
{
    return gsl_cdf_tdist_Qinv(alpha / 2.0, df);
}

/* One observation against n >= 2: the single one is assumed to vary as
 * the others do, so the standard error is s * sqrt(1/n + 1). */
static stats_diff diff_one_vs_many(stats_sample one, stats_sample many, double sign,
                                   double alpha)
{
    stats_diff d = { sign * (one.mean - many.mean), 0.0, (double)many.n - 1.0, 1.0, INFINITY,
                     INFINITY };
    double se = sqrt((many.var > 0 ? many.var : 0.0) * (1.0 + 1.0 / (double)many.n));
    d.se = se;
    if (se <= 0) {
        d.p = d.diff == 0 ? 1.0 : 0.0;
        d.t = d.diff == 0 ? 0.0 : copysign(INFINITY, d.diff);
        d.half = 0.0;
        return d;
    }
    d.t = d.diff / se;
    d.p = two_sided_p(d.t, d.df);
    d.half = t_quantile(alpha, d.df) * se;
    return d;
}

stats_diff stats_diff_test(stats_sample before, stats_sample after, double alpha)
{
    stats_diff d = { after.mean - before.mean, 0.0, 0.0, 1.0, INFINITY, INFINITY };
    if (before.n >= 2 && after.n >= 2) {
        stats_welch_result w = stats_welch(before.n, before.mean, before.var, after.n,
                                           after.mean, after.var);
        d.se = sqrt((before.var > 0 ? before.var : 0.0) / (double)before.n +
                    (after.var > 0 ? after.var : 0.0) / (double)after.n);
        d.t = w.t;
        d.df = w.df;
        d.p = w.p;
        if (isinf(w.t))
            d.half = 0.0;
        else if (w.t != 0)
            d.half = t_quantile(alpha, w.df) * fabs(d.diff / w.t);
        else
            d.half = w.df > 0 ? t_quantile(alpha, w.df) *
                                    sqrt(before.var / (double)before.n + after.var / (double)after.n)
                              : 0.0;
        return d;
    }
    if (before.n == 1 && after.n >= 2)
        return diff_one_vs_many(before, after, -1.0, alpha);
    if (after.n == 1 && before.n >= 2)
        return diff_one_vs_many(after, before, 1.0, alpha);
    return d;
}

stats_diff stats_pooled_test(stats_sample before, stats_sample after, double alpha)
{
    if (before.n < 2 || after.n < 2)
        return stats_diff_test(before, after, alpha);
    double nb = (double)before.n, na = (double)after.n, df = nb + na - 2.0;
    double pooled = ((nb - 1.0) * fmax(before.var, 0.0) + (na - 1.0) * fmax(after.var, 0.0)) / df;
    stats_diff d = { after.mean - before.mean, 0.0, df, 1.0, sqrt(pooled * (1.0 / nb + 1.0 / na)),
                     0.0 };
    if (d.se <= 0) {
        d.p = d.diff == 0 ? 1.0 : 0.0;
        d.t = d.diff == 0 ? 0.0 : copysign(INFINITY, d.diff);
        return d;
    }
    d.t = d.diff / d.se;
    d.p = two_sided_p(d.t, df);
    d.half = t_quantile(alpha, df) * d.se;
    return d;
}

double stats_p_beyond(const stats_diff *d, double margin)
{
    if (isinf(d->se) || d->df <= 0)
        return d->se == 0 ? (fabs(d->diff) > margin ? 0.0 : 1.0) : 1.0;
    double excess = fabs(d->diff) - margin;
    if (excess <= 0)
        return 1.0;
    if (d->se <= 0)
        return 0.0;
    return two_sided_p(excess / d->se, d->df);
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    return gsl_stats_quantile_from_sorted_data(sorted, 1, n, q < 0 ? 0 : q > 1 ? 1 : q);
}

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && x < v[j - 1]; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* One partition step of select_kth (n > 2): the median of
 * v[0], v[n/2], v[n-1] is the pivot, and v is rearranged so that
 * [0, left) <= pivot <= [left, n), with 0 < left < n; returns left. */
static size_t partition(double *v, size_t n)
{
    size_t mid = n / 2;
    if (v[mid] < v[0])
        swap_d(&v[mid], &v[0]);
    if (v[n - 1] < v[0])
        swap_d(&v[n - 1], &v[0]);
    if (v[n - 1] < v[mid])
        swap_d(&v[n - 1], &v[mid]);
    double pivot = v[mid];
    size_t i = 0, j = n - 1;
    for (;;) { /* Hoare: v[0] <= pivot <= v[n - 1] stop both scans */
        while (v[i] < pivot)
            i++;
        while (pivot < v[j])
            j--;
        if (i >= j)
            break;
        swap_d(&v[i], &v[j]);
        i++;
        j--;
    }
    return j + 1;
}

/* Puts the k-th smallest of v[0..n) at v[k], the smaller ones before it
 * and the larger after (quickselect, median of three; past a depth of
 * 2 log2 n it sorts what is left with gsl_sort, so the worst case stays
 * n log n). */
static void select_kth(double *v, size_t n, size_t k)
{
    unsigned depth = 0;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    while (n > 16) {
        if (depth-- == 0) {
            gsl_sort(v, 1, n);
            return;
        }
        size_t left = partition(v, n);
        if (k < left) {
            n = left;
        } else {
            v += left;
            n -= left;
            k -= left;
        }
    }
    insertion_sort(v, n);
}

double stats_quantile_select(double *v, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    /* gsl_stats_quantile_from_sorted_data's interpolation, on the two order
     * statistics it reads */
    double index = (q < 0 ? 0 : q > 1 ? 1 : q) * (double)(n - 1);
    size_t lhs = (size_t)index;
    double delta = index - (double)lhs;
    select_kth(v, n, lhs);
    if (lhs == n - 1)
        return v[lhs];
    double next = v[lhs + 1];
    for (size_t i = lhs + 2; i < n; i++)
        next = v[i] < next ? v[i] : next;
    return (1 - delta) * v[lhs] + delta * next;
}

double stats_mad(const double *v, size_t n, double median, double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(v[i] - median);
    return stats_quantile_select(scratch, n, 0.5);
}

size_t stats_warmup(size_t n)
{
    size_t w = (n + 9) / 10;
    if (w < 3)
        w = 3;
    return w < n ? w : n;
}

size_t stats_decimate(const void *series, size_t n, stats_value_fn value, size_t max,
                      size_t *keep)
{
    if (max < 2 || n <= max)
        return n;
    /* the ends, and between them (max - 2) / 2 runs of at least two points */
    size_t inner = n - 2, runs = (max - 2) / 2, kept = 0;
    keep[kept++] = 0;
    for (size_t r = 0; r < runs; r++) {
        size_t a = 1 + r * inner / runs, b = 1 + (r + 1) * inner / runs, lo = a, hi = a;
        double vlo = value(series, a), vhi = vlo;
        for (size_t i = a + 1; i < b; i++) {
            double v = value(series, i);
            if (v < vlo) {
                vlo = v;
                lo = i;
            } else if (v > vhi) {
                vhi = v;
                hi = i;
            }
        }
        keep[kept++] = lo < hi ? lo : hi;
        if (lo != hi)
            keep[kept++] = lo < hi ? hi : lo;
    }
    keep[kept++] = n - 1;
    return kept;
}
