/* compare.h - `prof compare`: two analyze reports (report_build, every
 * operation kept) side by side as one JSON comparison whose shape is
 * formats/compare.schema.json. Summary metrics with their changes, each
 * operation's change with Welch's t-test on its per-call durations,
 * memory peaks and leak verdicts, bottlenecks fixed / new / persisting,
 * and whether the after run regressed past a threshold. */
#ifndef PROF_ANALYSIS_COMPARE_H
#define PROF_ANALYSIS_COMPARE_H

#include <cjson/cJSON.h>

#include "prof_reader.h"

typedef struct compare_options {
    double noise_pct;      /* a change must exceed this to count, default 5       */
    double alpha;          /* and have Welch p below this, default 0.01           */
    double regression_pct; /* --fail-on-regression PCT; negative: not asked for    */
    double min_share;      /* operations below this share of the time never fail a
                              run, default 0.05                                   */
} compare_options;

void compare_options_default(compare_options *o);

/* Compares two reports built by report_build (with top = 0, so that every
 * operation is present). Operations are matched by name, memory series by
 * series name, bottlenecks by rule and subject.
 * @return a cJSON object (caller frees with cJSON_Delete), or NULL with err
 * set: PROF_ERR_INVALID when a report lacks its summary or operations,
 * PROF_ERR_NOMEM. */
cJSON *compare_build(const cJSON *before, const cJSON *after, const compare_options *o,
                     prof_error *err);

/* 1 when the comparison found a regression past o->regression_pct (its
 * "regression.regressed"), else 0. */
int compare_regressed(const cJSON *cmp);

#endif
