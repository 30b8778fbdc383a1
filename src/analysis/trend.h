/* trend.h - trends of memory series (formats/rules.md §2.6, §2.7): growth
 * tested as noise about a line or as a sum of increments, as a unit-root
 * test decides, allowing for correlated noise; and the onset of growth in a
 * series that was flat before it. */
#ifndef PROF_ANALYSIS_TREND_H
#define PROF_ANALYSIS_TREND_H

#include <stddef.h>

#include "analysis/stats.h"

/* The Dickey-Fuller 5% critical value with constant and trend (MacKinnon,
 * asymptotic): a statistic below it rejects a unit root. */
#define TREND_DF_CRITICAL (-3.41)

/* The largest AR(1) coefficient the noise about a line is given: noise
 * that reaches it cannot be told from a unit root, and the series is tested
 * as increments (a random walk under measurement noise makes Dickey-Fuller
 * reject the unit root it has). */
#define TREND_PHI_MAX 0.999

typedef struct trend_line {
    stats_fit fit;         /* the growth line and its test: about the line, the
                              least-squares line with se_slope, t, p_value and ci95
                              for AR(1) noise; as increments, the mean increment    */
    int increments;        /* 1: tested as a sum of increments (unit root kept)    */
    double df_tau;         /* the Dickey-Fuller statistic                           */
    double r1;             /* lag-1 autocorrelation of the noise the test used     */
    double n_eff;          /* effective points: n when r1 <= 0                        */
} trend_line;

/* The growth of y over x (n points, x ascending, §2.6): a Dickey-Fuller
 * test with constant and trend decides whether y is noise about a line
 * (then the least-squares line, tested for AR(1) noise about the series'
 * course) or a sum of increments (then their mean per unit x, tested for
 * correlated increments; also when the noise about the line reaches
 * TREND_PHI_MAX). Under 6 points, or on a perfect line, the plain
 * least-squares test of stats_linear_fit.
 * @return 0, -1 when n < 3 or every x is the same, -2 out of memory. */
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
