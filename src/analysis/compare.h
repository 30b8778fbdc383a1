/* compare.h - `prof compare`: the analyze reports (report_build, every
 * operation kept) of the runs of two sides, BEFORE and AFTER, as one JSON
 * comparison whose shape is formats/compare.schema.json. A side is one run
 * or several repeated runs. Summary metrics with their changes; the mean
 * step time and every operation's mean per call tested against the
 * variation between runs (several runs a side) or, with one run a side,
 * within each run from batch means (formats/rules.md §6); memory peaks,
 * slopes and leak verdicts; bottlenecks fixed / new / persisting; and
 * whether the after side regressed past a threshold. Each test says what
 * its interval rules out (slower, faster, no change, inconclusive), and
 * sides that should not be compared (other GPUs, world or batch sizes)
 * get a warning. */
#ifndef PROF_ANALYSIS_COMPARE_H
#define PROF_ANALYSIS_COMPARE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "prof_reader.h"

typedef struct compare_options {
    double noise_pct;      /* a change must exceed this to count, default 5       */
    double alpha;          /* and have p below this, default 0.01                 */
    double regression_pct; /* --fail-on-regression PCT; negative: not asked for    */
    double min_share;      /* operations below this share of the time never fail a
                              run, default 0.05                                   */
    int ops_within_run;    /* with one run a side, operations whose whole within-run
                              interval is past the threshold fail the check too
                              (--ops-within-run); default 0                        */
} compare_options;

void compare_options_default(compare_options *o);

/* One side: the reports of its runs (a run of several ranks is one report,
 * built from all of them) and the path the user named. */
typedef struct compare_side {
    const cJSON *const *runs;
    size_t nruns;          /* >= 1                                                */
    const char *path;      /* a profile or a directory; NULL: the first run's     */
} compare_side;

/* Compares two sides. Operations are matched by name, memory series by
 * series name, bottlenecks by rule and subject.
 * @return a cJSON object (caller frees with cJSON_Delete), or NULL with err
 * set: PROF_ERR_INVALID when a side has no run or a report lacks its summary
 * or operations, PROF_ERR_NOMEM. */
cJSON *compare_build_sides(const compare_side *before, const compare_side *after,
                           const compare_options *o, prof_error *err);

/* The same for one run a side. */
cJSON *compare_build(const cJSON *before, const cJSON *after, const compare_options *o,
                     prof_error *err);

/* 1 when the comparison found a regression past o->regression_pct (its
 * "regression.regressed"), else 0. */
int compare_regressed(const cJSON *cmp);

#endif
