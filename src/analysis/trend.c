/* trend.c - the trend statistics of memory series (formats/rules.md §2.6,
 * §2.7): a least-squares line tested with the effective sample size of
 * autocorrelated residuals, and the onset of growth found by a hinge
 * (flat, then linear) fitted at every candidate in one pass. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "analysis/trend.h"

/* Lag-1 autocorrelation of the residuals of fit, in x order. OLS residuals
 * with an intercept have mean zero, so no mean is subtracted. */
static double residual_lag1(const double *x, const double *y, size_t n, const stats_fit *f)
{
    double num = 0.0, den = 0.0, prev = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (f->intercept + f->slope * x[i]);
        den += e * e;
        if (i)
            num += prev * e;
        prev = e;
    }
    return den > 0 ? num / den : 0.0;
}

/* The test of §2.1 again with n_eff points: a wider standard error and
 * fewer degrees of freedom. */
static void retest(stats_fit *f, double n, double n_eff)
{
    double df = n_eff - 2.0;
    f->se_slope *= sqrt((n - 2.0) / df);
    f->t = f->slope / f->se_slope;
    double p = 2.0 * gsl_cdf_tdist_Q(fabs(f->t), df);
    f->p_value = p > 1.0 ? 1.0 : p;
    f->ci95 = gsl_cdf_tdist_Qinv(0.025, df) * f->se_slope;
}

int trend_fit(const double *x, const double *y, size_t n, trend_line *out)
{
    *out = (trend_line){ .n_eff = (double)n };
    if (stats_linear_fit(x, y, n, &out->fit) != 0)
        return -1;
    out->r1 = residual_lag1(x, y, n, &out->fit);
    if (out->r1 <= 0 || out->fit.se_slope <= 0) /* alternating, or a perfect line */
        return 0;
    double n_eff = (double)n * (1.0 - out->r1) / (1.0 + out->r1);
    out->n_eff = n_eff < 3.0 ? 3.0 : n_eff;
    retest(&out->fit, (double)n, out->n_eff);
    return 0;
}

/* The points before the onset are flat next to the growth after it: the
 * spread between their 10th and 90th percentiles is under half the growth.
 * A sawtooth's earlier teeth span as much as its last one. 1, 0, or -1 out
 * of memory. */
static int flat_before(const double *y, size_t k, double growth)
{
    double *v = malloc(k * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < k; i++)
        v[i] = y[i];
    stats_sort(v, k);
    double spread = stats_quantile_sorted(v, k, 0.90) - stats_quantile_sorted(v, k, 0.10);
    free(v);
    return spread < 0.5 * growth;
}

/* BIC of the hinge against the line: one parameter (the onset) more. */
static int hinge_preferred(double sse_hinge, double sse_line, size_t n)
{
    if (sse_line <= 0)
        return 0;
    if (sse_hinge <= 0)
        return 1;
    return (double)n * log(sse_line / sse_hinge) > log((double)n);
}

/* One pass from the end: with sums over the points at or after candidate k
 * (x shifted to start at 0, y centred), the hinge's regressor h = x - x[k]
 * there and 0 before has sum X1 - c t, sum of squares X2 - 2 t X1 + c t^2
 * and cross product XY - t Y1 (t = x[k], c = n - k); with sum(y) = 0 its
 * slope is Shy / (Shh - Sh^2 / n) and its error Syy - slope * Shy. Long
 * double keeps the differences of large sums exact enough. */
static void hinge_search(const double *x, const double *y, size_t n, size_t min_after,
                         trend_onset_result *out)
{
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += y[i] / (double)n;
    long double syy = 0, x1 = 0, x2 = 0, xy = 0, y1 = 0, best = INFINITY;
    for (size_t i = 0; i < n; i++)
        syy += (long double)(y[i] - mean) * (long double)(y[i] - mean);
    for (size_t i = n; i-- > 0;) {
        long double xi = (long double)(x[i] - x[0]), yi = (long double)(y[i] - mean);
        long double c = (long double)(n - i);
        x1 += xi;
        x2 += xi * xi;
        xy += xi * yi;
        y1 += yi;
        if (n - i < min_after)
            continue;
        long double sh = x1 - c * xi, shy = xy - xi * y1;
        long double sxx = x2 - 2 * xi * x1 + c * xi * xi - sh * sh / (long double)n;
        if (sxx <= 0)
            continue;
        long double b = shy / sxx, sse = syy - b * shy;
        if (sse < 0)
            sse = 0;
        if (i == 0)
            out->sse_line = (double)sse;
        if (sse <= best) { /* a tie goes to the earlier onset */
            best = sse;
            out->best = i;
            out->slope = (double)b;
            out->sse_hinge = (double)sse;
        }
    }
}

int trend_onset(const double *x, const double *y, size_t n, size_t min_after,
                trend_onset_result *out)
{
    *out = (trend_onset_result){ 0 };
    if (min_after < 3)
        min_after = 3;
    if (n < min_after)
        return 0;
    hinge_search(x, y, n, min_after, out);
    size_t k = out->best;
    if (k == 0 || out->slope <= 0 || !hinge_preferred(out->sse_hinge, out->sse_line, n))
        return 0;
    int flat = flat_before(y, k, out->slope * (x[n - 1] - x[k]));
    if (flat < 0)
        return -1;
    out->k = flat ? k : 0;
    return 0;
}
