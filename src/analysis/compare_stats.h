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
    CMP_WITHIN_RUN,        /* one run a side: batch means of each run             */
    CMP_SPEED_ADJUSTED     /* several runs on a side: an operation's per-run means
                              against its runs' speeds                            */
} cmp_method;

typedef struct cmp_result {
    cmp_method method;
    size_t runs_before, runs_after; /* runs that have the quantity                */
    double before, after;  /* the side's estimate: mean of its runs' steady means */
    double relative;       /* (after - before) / before; NaN when before is 0     */
    double estimate;       /* the change the test is of: relative, or against the
                              runs' speeds (CMP_SPEED_ADJUSTED)                    */
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

/* The batch means a test reads of a run (more add little: the interval
 * narrows as their square root, and the tests stay bounded). */
#define CMP_MAX_BATCHES 64

/* What the test reads of a steady object, held compactly: the operations
 * of large comparisons keep this instead of the report's objects. */
typedef struct cmp_steady {
    double mean;           /* the steady mean; NaN where the run lacks one        */
    const double *batch;   /* its finite batch means, at most CMP_MAX_BATCHES      */
    size_t nbatch;
} cmp_steady;

/* cmp_test of steady objects in their compact form. */
cmp_result cmp_test_steady(const cmp_steady *steady_b, size_t nb, const cmp_steady *steady_a,
                           size_t na, const compare_options *o);

/* Each run's speed (rules.md §6.3): how much faster or slower than usual
 * the run ran everything, the median over the reference operations (those
 * with a steady mean in every run of both sides) of their log steady mean
 * in the run less its mean over all runs. An operation's own change moves
 * the median little when it is one of many, where it would move a step
 * time or a mean. */
typedef struct cmp_speeds {
    size_t nruns, nref;
    double *value;         /* nref x nruns: centered log means, by operation    */
    double *sorted;        /* nruns x nref: the same, each run's sorted          */
} cmp_speeds;

/* logs: nref x nruns, the log steady mean of reference operation k in run
 * r at logs[k * nruns + r] (the runs of both sides, before first). 0, or
 * -1 out of memory. */
int cmp_speeds_init(cmp_speeds *s, const double *logs, size_t nref, size_t nruns);
void cmp_speeds_free(cmp_speeds *s);

/* Whether an operation can be adjusted: enough reference operations
 * besides itself (ref: its index among them, or SIZE_MAX when it is none). */
int cmp_speeds_usable(const cmp_speeds *s, size_t ref);

/* Run run's log speed for an operation, leaving the operation itself out
 * when it is reference operation ref (SIZE_MAX: none). */
double cmp_speed_of(const cmp_speeds *s, size_t run, size_t ref);

/* The test of an operation whose run r has the log steady mean less its
 * run's log speed in yb[r] / ya[r] (rules.md §6.3): the difference of the
 * sides' means, with Student's pooled variance when the sides have as many
 * runs and Welch's otherwise, beyond the noise floor on the log scale.
 * before / after: the sides' mean steady means, shown as they are. */
cmp_result cmp_test_adjusted(const double *yb, size_t nb, const double *ya, size_t na,
                             double before, double after, const compare_options *o);

/* Whether r is a regression past limit (a fraction): significant and, with
 * several runs a side, slower by more than limit; with one run a side,
 * slower by more than limit over the whole interval (rules.md §6.4; there
 * only the step time is judged, which the caller decides). */
int cmp_regressed_past(const cmp_result *r, double limit);

/* The level m tests are held to so that, among those found significant,
 * the expected share found by chance stays under alpha (the false
 * discovery rate; weighted Benjamini-Hochberg, rules.md §6.3): test i is
 * held to level * w[i], level = alpha * R / m, R the largest k with the
 * k-th smallest p[i] / w[i] below alpha * k / m (1 when there is none).
 * The weights are positive with mean 1 (NULL: all 1). A test is
 * significant when its p is below its level, and exactly then its 1 -
 * level interval lies beyond the floor. alpha when m is 0 or 1; NaN out
 * of memory. p and w are not changed. */
double cmp_level_each(const double *p, const double *w, size_t m, double alpha);

const char *cmp_method_name(cmp_method m);

#endif
