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

/* ---- comparing runs of many operations ----------------------------------
 * The same comparison in memory that does not hold the reports' operation
 * rows, nor its own: each run's report is trimmed to what compare reads as
 * it is taken (some 150 bytes and the name an operation), and the
 * comparison's operation rows are built one at a time as they are written
 * (compare_render_text_ops, compare_render_csv_ops, compare_render_json). */

/* A run's analyze report, its operations held compactly. */
typedef struct compare_run compare_run;

/* An empty run; NULL out of memory. */
compare_run *compare_run_new(void);

/* Adds one operation row of the run's report (report.h's op_row callback,
 * run a compare_run): so the report need never hold every row at once.
 * 0, or -1 out of memory. */
int compare_run_add_op(void *run, const cJSON *row);

/* Takes the run's report (every operation kept, in its "operations" or
 * handed to compare_run_add_op) into r, once, and trims it; report is
 * freed with r, or here on failure.
 * @return PROF_OK, or PROF_ERR_INVALID when the report lacks its summary
 * or operations, PROF_ERR_NOMEM, with err set. */
prof_err compare_run_take(compare_run *r, cJSON *report, prof_error *err);
void compare_run_free(compare_run *r);

typedef struct compare_run_side {
    compare_run *const *runs;
    size_t nruns;          /* >= 1                                                */
    const char *path;      /* a profile or a directory; NULL: the first run's     */
} compare_run_side;

/* The operations' rows of a comparison, to be built one at a time. */
typedef struct compare_ops compare_ops;

/* compare_build_sides of taken runs: the comparison with its "operations"
 * an empty array, their rows in *ops (free with compare_ops_free; the runs
 * must outlive it). NULL with err set as compare_build_sides. */
cJSON *compare_build_runs(const compare_run_side *before, const compare_run_side *after,
                          const compare_options *o, compare_ops **ops, prof_error *err);
void compare_ops_free(compare_ops *ops);

/* The number of operation rows (0 for NULL). */
size_t compare_ops_count(const compare_ops *ops);

/* Row i as compare_build_sides would have placed it; the caller frees it.
 * NULL out of memory. */
cJSON *compare_ops_row(const compare_ops *ops, size_t i);

/* Row i's name, status and gpu_relative (when finite) only, holding
 * references to the name: what a pass that counts or measures reads, at
 * a tenth of the row. The caller frees it; NULL out of memory. */
cJSON *compare_ops_brief(const compare_ops *ops, size_t i);

/* 1 when the comparison found a regression past o->regression_pct (its
 * "regression.regressed"), else 0. */
int compare_regressed(const cJSON *cmp);

#endif
