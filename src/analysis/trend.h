/* trend.h - trends of memory series (formats/rules.md §2.6, §2.7): a
 * least-squares line whose test allows for autocorrelated residuals, and
 * the onset of growth in a series that was flat before it. */
#ifndef PROF_ANALYSIS_TREND_H
#define PROF_ANALYSIS_TREND_H

#include <stddef.h>

#include "analysis/stats.h"

typedef struct trend_line {
    stats_fit fit;         /* slope, intercept, r2 as stats_linear_fit; se_slope, t,
                              p_value and ci95 corrected for autocorrelation         */
    double r1;             /* lag-1 autocorrelation of the residuals                 */
    double n_eff;          /* effective points: n when r1 <= 0                        */
} trend_line;

/* Least squares y = intercept + slope * x over n >= 3 points in x order,
 * tested with the effective sample size of AR(1) residuals (§2.6).
 * @return 0, or -1 when n < 3 or every x is the same. */
int trend_fit(const double *x, const double *y, size_t n, trend_line *out);

typedef struct trend_onset_result {
    size_t k;              /* the onset: index of the first point of the growth;
                              0 when growth starts at the first point               */
    size_t best;           /* the hinge's best candidate, accepted or not            */
    double slope;          /* the hinge's slope after its best candidate             */
    double sse_hinge, sse_line;
} trend_onset_result;

/* Where a flat series starts to grow (§2.7): the hinge y = c + b max(0, x - x[k])
 * with the least squared error over k = 0 .. n - min_after, taken as the
 * onset when the information criterion prefers it, it grows, and the points
 * before it are flat next to the growth after it. x ascending. O(n) time,
 * O(k) memory for the flatness test.
 * @return 0, or -1 out of memory (out->k is then 0). */
int trend_onset(const double *x, const double *y, size_t n, size_t min_after,
                trend_onset_result *out);

#endif
