/* stats.h - the statistics the rules rest on (formats/rules.md §2): an
 * ordinary least-squares line with its t-test and 95% interval, a robust
 * (bisquare) line and when the two agree, Welch's t-test from summary
 * numbers, and order statistics of small arrays. Built on GSL.
 *
 * GSL reports an error (out of memory, a fit that does not converge) to a
 * handler that is global to the process and by default aborts it. These
 * functions leave the handler alone, as they run on several threads at
 * once: their caller turns it off for as long as it uses them
 * (report_build does, for a whole report), as GSL advises for threaded
 * programs. */
#ifndef PROF_ANALYSIS_STATS_H
#define PROF_ANALYSIS_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct stats_fit {
    double slope, intercept;
    double se_slope;       /* standard error of the slope                      */
    double ci95;           /* half-width of the slope's 95% confidence interval */
    double t, p_value;     /* two-sided test of slope = 0, df = n - 2           */
    double r2;
    size_t n;
} stats_fit;

/* Least squares y = intercept + slope * x over n >= 3 points.
 * @return 0, or -1 when n < 3 or every x is the same. */
int stats_linear_fit(const double *x, const double *y, size_t n, stats_fit *out);

/* Tukey-bisquare robust line over n >= 3 points. Its cost grows with n times
 * the iterations, so past STATS_ROBUST_MAX points it fits that many, evenly
 * spaced and including the first and the last. Reweighting stops after
 * STATS_ROBUST_ITER iterations, with the estimate it has then.
 * @return 0, -1 on bad input, -2 out of memory, -3 when GSL fails otherwise
 * or the slope is not finite. */
#define STATS_ROBUST_MAX 2048
#define STATS_ROBUST_ITER 1000
int stats_robust_fit(const double *x, const double *y, size_t n, double *slope,
                     double *intercept);
/* The same after at most maxiter iterations. On success, *converged (when
 * not NULL) says whether reweighting settled before the limit. */
int stats_robust_fit_limited(const double *x, const double *y, size_t n, size_t maxiter,
                             double *slope, double *intercept, int *converged);

/* rules.md §2.2: same sign and within max(ci95, a quarter of the slope). */
int stats_fits_agree(const stats_fit *ols, double robust_slope);

typedef struct stats_welch_result {
    double t;              /* (mean2 - mean1) / standard error                 */
    double df;             /* Welch-Satterthwaite degrees of freedom           */
    double p;              /* two-sided; 1 when there is no test (n < 2)        */
} stats_welch_result;

/* Welch's unequal-variance t-test from counts, means and sample variances. */
stats_welch_result stats_welch(uint64_t n1, double mean1, double var1, uint64_t n2,
                               double mean2, double var2);

/* n observations summarised: count, mean and sample variance. */
typedef struct stats_sample {
    uint64_t n;
    double mean, var;
} stats_sample;

stats_sample stats_sample_of(const double *v, size_t n);

/* Batch means (rules.md §6.3): v[0..n) are the means of consecutive
 * batches of a run, in time order. While at least 16 remain and their lag-1
 * autocorrelation is significant (r1 > 1.645 / sqrt(n)), neighbouring pairs
 * are averaged (v is overwritten); the variance of what is left is inflated
 * by (1 + r1) / (1 - r1) when r1 is still positive, so that correlated
 * batches are not taken for independent ones. */
stats_sample stats_batch_means(double *v, size_t n);

/* Lag-1 autocorrelation of n values (0 when n < 3 or they are constant). */
double stats_lag1(const double *v, size_t n);

/* A test of after.mean - before.mean = 0 with its 1 - alpha confidence
 * interval: Welch's test when both samples have n >= 2; when one has a
 * single observation, that one is taken to vary as the other does (its
 * variance, df = n - 1 of the other); no test (p = 1, half = inf)
 * otherwise. */
typedef struct stats_diff {
    double diff, t, df, p;
    double se;             /* standard error of diff (0: exact; inf: none)   */
    double half;           /* half-width of the 1 - alpha interval of diff  */
} stats_diff;

stats_diff stats_diff_test(stats_sample before, stats_sample after, double alpha);

/* The same with Student's pooled variance (df = n1 + n2 - 2) when both
 * samples have n >= 2; stats_diff_test otherwise. With as many
 * observations on each side it holds its level under unequal variances
 * about as well as Welch's test, with more degrees of freedom when they
 * are few (rules.md §6.3). */
stats_diff stats_pooled_test(stats_sample before, stats_sample after, double alpha);

/* Two-sided p of "|true diff| <= margin" against d (a minimum-effect test):
 * small only when the whole interval of d lies beyond +-margin. margin 0 is
 * the ordinary test of no difference. 1 when there is no test. */
double stats_p_beyond(const stats_diff *d, double margin);

/* Quantile q in [0, 1] of sorted values, interpolated; 0 when n = 0. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* Quantile q in [0, 1] of n values, the same number stats_quantile_sorted
 * gives for them sorted, found by selection in O(n): v is reordered. */
double stats_quantile_select(double *v, size_t n, double q);

/* Median absolute deviation from `median` of n values; uses scratch[n],
 * which may be v itself (v is then overwritten). */
double stats_mad(const double *v, size_t n, double median, double *scratch);

/* Warm-up points skipped at the start of a per-step series of n points
 * (rules.md §2.5): max(3, ceil(n / 10)), never more than n. */
size_t stats_warmup(size_t n);

/* The value of point i of a series, for stats_decimate. */
typedef double (*stats_value_fn)(const void *series, size_t i);

/* Which of a series' n points a chart of at most max points keeps (min-max
 * decimation): the first and the last point, and between them, cut into
 * (max - 2) / 2 runs of consecutive points, the lowest and the highest of
 * each run, so spikes and dips stay visible, the chart spans the whole
 * series and memory stays bounded however long the run was. Writes the
 * kept indexes, ascending, to keep (room for max) and returns their
 * count. When n <= max or max < 2 nothing is dropped: returns n and leaves
 * keep alone (the caller walks 0..n-1). */
size_t stats_decimate(const void *series, size_t n, stats_value_fn value, size_t max,
                      size_t *keep);

#endif
