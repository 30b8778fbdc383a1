/* ranks.h - the ranks of one job (formats/rules.md §4.9). Each rank is
 * first reduced to a summary built from its model alone - small enough to
 * keep for thousands of ranks once the model is freed, or to write to a
 * file on the machine that holds the rank and merge elsewhere
 * (formats/rank-summary.md) - and the cross-rank analysis reads summaries
 * only: the collectives matched, the straggler, the rank described, the
 * ranks table. The report of a job is the report of the rank it describes
 * with those added (ranks_report). */
#ifndef PROF_ANALYSIS_RANKS_H
#define PROF_ANALYSIS_RANKS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "analysis/report.h"
#include "format/format.h"
#include "model/profile.h"

#define RANK_SUMMARY_SCHEMA "prof-rank-summary" /* format.h pf_rank_summary_head */

typedef struct rank_summary {
    cJSON *profile;        /* its entry of the report's "profiles"              */
    cJSON *row;            /* its row of "ranks" as its model alone gives it     */
    cJSON *launches;       /* its kernel launch statistics, or NULL              */
    cJSON *peaks;          /* memory series name -> peak bytes                   */
    cJSON *findings;       /* of its own report: counts by severity and the
                              first finding, or NULL when built without one    */
    cJSON *report;         /* its own report, kept for a summary file; NULL      */
    int rank, world_size;
    const char *path;      /* in profile                                         */
    char *host;            /* from its metadata; "" when it names none           */
    size_t steps_n, steps_count;
    double step_mean, step_p50, comm_per_step;
    model_collective *kernels; size_t nkernels;  /* by device, stream, start     */
    model_collective *regions; size_t nregions;  /* by start                     */
} rank_summary;

/* The summary of one loaded rank. report: the rank's own report (from
 * report_build of m alone), whose findings the row counts, or NULL; it is
 * taken, and kept in the summary when keep_report, else freed.
 * PROF_ERR_NOMEM, with the summary left empty. */
prof_err rank_summary_build(const profile_model *m, cJSON *report, int keep_report,
                            rank_summary *out, prof_error *err);

/* The summary as a file holds it (formats/rank-summary.md), to be written
 * with numbers that read back exactly (report_render_json). Its members
 * refer to s's, which must outlive it; caller frees it (cJSON_Delete
 * leaves s whole). NULL out of memory. */
cJSON *rank_summary_json(const rank_summary *s);

/* Reads a summary file's text (untrusted: every field checked). keep_report
 * 0 drops the report it holds. PROF_ERR_CORRUPT (with what is wrong) or
 * PROF_ERR_NOMEM. */
prof_err rank_summary_parse(const char *text, size_t len, int keep_report, rank_summary *out,
                            prof_error *err);

/* Whether the first bytes of a file are a summary's. */
int rank_summary_sniff(const char *head, size_t len);

void rank_summary_free(rank_summary *s);

/* The cross-rank analysis of n >= 2 summaries: checks they are distinct
 * ranks of one world size (else PROF_ERR_INVALID "not ranks of one job")
 * and that o->rank, when a rank, is among them; matches their
 * collectives; chooses the rank described (report.h analysis_options
 * rank). NULL with err set. */
typedef struct ranks_analysis ranks_analysis;
ranks_analysis *ranks_analyze(const rank_summary *s, size_t n, const analysis_options *o,
                              prof_error *err);
/* The index in s of the rank every section but "ranks" describes. */
size_t ranks_described(const ranks_analysis *a);
/* The job's report from the described rank's own report (report_build of
 * its model alone, with the same options; taken): every rank's profile,
 * the straggler findings, the note that says which rank is described, and
 * the ranks table. NULL with err set (the report freed). */
cJSON *ranks_report(ranks_analysis *a, cJSON *report, prof_error *err);
void ranks_analysis_free(ranks_analysis *a);

#endif
