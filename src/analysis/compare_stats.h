/* compare_stats.h - the test behind every verdict of `prof compare`
 * (formats/rules.md §6.3): one quantity (the mean step time, an
 * operation's mean per call) on two sides of one or more runs each, given
 * as each run's "steady" object of the analyze report (its mean after the
 * warm-up and its batch means). Internal to src/analysis/. */
#ifndef PROF_ANALYSIS_COMPARE_STATS_H
#define PROF_ANALYSIS_COMPARE_STATS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"

typedef enum {
    CMP_NO_TEST = 0,       /* too little data on a side                         */
    CMP_BETWEEN_RUNS,      /* several runs on a side: per-run means              */
    CMP_WITHIN_RUN         /* one run a side: batch means of each run             */
} cmp_method;

typedef struct cmp_result {
    cmp_method method;
    size_t runs_before, runs_after; /* runs that have the quantity                */
    double before, after;  /* the side's estimate: mean of its runs' steady means */
    double relative;       /* (after - before) / before; NaN when before is 0     */
    double rel_low, rel_high; /* its 1 - alpha interval; NaN without a test       */
    double t, df;          /* of the difference                                    */
    double p;              /* of "the change is within the noise floor"; 1 without a
                              test                                                  */
    int significant;       /* p < alpha: the whole interval is beyond the floor    */
} cmp_result;

/* The result of no test: nothing known, p = 1. */
cmp_result cmp_no_test(void);

/* steady_b[i] / steady_a[i]: the quantity's steady object in run i of each
 * side, NULL where that run lacks it. */
cmp_result cmp_test(const cJSON *const *steady_b, size_t nb, const cJSON *const *steady_a,
                    size_t na, const compare_options *o);

/* Whether r is a regression past limit (a fraction): significant and, with
 * several runs a side, slower by more than limit; with one run a side,
 * slower by more than limit over the whole interval (rules.md §6.4; there
 * only the step time is judged, which the caller decides). */
int cmp_regressed_past(const cmp_result *r, double limit);

/* The level each of m tests is held to so that, among those found
 * significant, the expected share found by chance stays under alpha (the
 * false discovery rate; Benjamini-Hochberg, rules.md §6.3): alpha * R / m,
 * R the largest k with the k-th smallest p below alpha * k / m, and
 * alpha / m when there is no such k. A test is significant when its p is
 * below the level, and exactly then its 1 - level interval lies beyond the
 * floor. alpha when m is 0 or 1. p is not changed. */
double cmp_level_each(const double *p, size_t m, double alpha);

const char *cmp_method_name(cmp_method m);

#endif
