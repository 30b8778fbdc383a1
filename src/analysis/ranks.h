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

#include "analysis/options.h"
#include "format/format.h"
#include "model/profile.h"

#define RANK_SUMMARY_SCHEMA "prof-rank-summary" /* format.h pf_rank_summary_head */

/* ---- the ranks' collectives, out of memory (collstore.c) ---- */

/* Where the collectives of every rank of a job are kept until they are
 * matched: an unlinked temporary file (fd, taken), or memory (fd -1).
 * Written from any thread; read once every rank is written. NULL out of
 * memory. */
typedef struct collective_store collective_store;
collective_store *collective_store_open(int fd);
void collective_store_close(collective_store *s);
/* The errno of its first failed write or read, 0 when none failed. */
int collective_store_error(const collective_store *s);

/* A rank's collectives of one kind in the store: n records from record
 * at, and their runs of one device and stream, ordered by the start of
 * their first (for regions, one run). */
typedef struct collective_run {
    size_t at, n;          /* in the list                                  */
    uint64_t first;        /* start of its first                           */
} collective_run;
typedef struct collective_list {
    uint64_t at;
    size_t n;
    collective_run *runs;
    size_t nruns;
} collective_list;
/* Writes v[0..n) (sorted by device, stream, start) as one list.
 * PROF_ERR_IO (the file) or PROF_ERR_NOMEM. */
prof_err collective_list_store(collective_store *s, const model_collective *v, size_t n,
                               collective_list *out, prof_error *err);
void collective_list_free(collective_list *l);

/* Reads count records from record first, a chunk at a time. */
#define COLLECTIVE_CHUNK 64
typedef struct collective_cursor {
    const collective_store *store;
    uint64_t next;
    size_t left, at, n;
    model_collective buf[COLLECTIVE_CHUNK];
} collective_cursor;
void collective_cursor_init(collective_cursor *c, const collective_store *s, uint64_t first,
                            size_t count);
/* The next record (valid until the next call), NULL past the last or when
 * the read failed (collective_store_error). */
const model_collective *collective_cursor_next(collective_cursor *c);

/* ---- a rank's summary (ranks.c) ---- */

#define RANK_BUCKETS 256 /* columns of the rank x step heat map */
#define RANK_OPS 10      /* operations (and kernels) a summary keeps */

/* An operation (or kernel, gpu) a rank spends its work on: its time per
 * step, for the cross-rank rules (rankrules.c). */
typedef struct rank_op {
    char *name;
    double ns_per_step;
    int gpu;
} rank_op;

typedef struct rank_summary {
    cJSON *profile;        /* its entry of the report's "profiles"              */
    cJSON *row;            /* its row of "ranks" as its model alone gives it     */
    cJSON *launches;       /* its kernel launch statistics, or NULL              */
    cJSON *peaks;          /* memory series name -> peak bytes                   */
    cJSON *findings;       /* of its own report: counts by severity and the
                              first finding, or NULL when built without one    */
    cJSON *report;         /* its own report, kept for a summary file; NULL      */
    struct rank_op *ops;   /* its RANK_OPS heaviest operations and as many
                              kernels, by time per step, outside communication,
                              heaviest first; none without steps                */
    size_t nops;
    int rank, world_size;
    const char *path;      /* in profile                                         */
    char *host;            /* from its metadata; "" when it names none           */
    size_t steps_n, steps_count;
    double step_mean, step_p50, comm_per_step;
    /* its steps' times for the job's heat map: the kept steps by number in
     * buckets of bucket_size (a power of two) numbers, bucket k holding
     * numbers [(bucket_first + k) * size, +size): at most RANK_BUCKETS */
    uint64_t bucket_size, bucket_first;
    size_t nbuckets;
    double bucket_sum[RANK_BUCKETS];
    uint64_t bucket_count[RANK_BUCKETS];
    /* with GPU activity (has_gpu), of the steps that kept their events: the
     * time of its devices in them (step time x devices) and of it busy */
    int has_gpu;
    double bucket_gpu[RANK_BUCKETS], bucket_busy[RANK_BUCKETS];
    collective_store *store;                     /* where its collectives are    */
    collective_list kernels;                     /* by device, stream, start     */
    collective_list regions;                     /* by start                     */
} rank_summary;

/* The summary of one loaded rank, its collectives written to store.
 * report: the rank's own report (from report_build of m alone), whose
 * findings the row counts, or NULL; it is taken, and kept in the summary
 * when keep_report, else freed. PROF_ERR_NOMEM or PROF_ERR_IO (the
 * store's file), with the summary left empty. */
prof_err rank_summary_build(const profile_model *m, cJSON *report, int keep_report,
                            collective_store *store, rank_summary *out, prof_error *err);

/* Moves what the summary keeps into fresh blocks, once the model it was
 * built from is freed: they land in the model's place instead of between
 * the next model's blocks, and memory stays flat over thousands of ranks.
 * PROF_ERR_NOMEM (the summary whole, partly moved). */
prof_err rank_summary_compact(rank_summary *s, prof_error *err);

/* The summary as a file holds it (formats/rank-summary.md), to be written
 * with numbers that read back exactly (report_render_json). Its members
 * refer to s's, which must outlive it; caller frees it (cJSON_Delete
 * leaves s whole). NULL out of memory or when its collectives could not
 * be read back (collective_store_error). */
cJSON *rank_summary_json(const rank_summary *s);

/* Reads a summary file's text (untrusted: every field checked). keep_report
 * 0 drops the report it holds. PROF_ERR_CORRUPT (with what is wrong) or
 * PROF_ERR_NOMEM. */
prof_err rank_summary_parse(const char *text, size_t len, int keep_report,
                            collective_store *store, rank_summary *out, prof_error *err);

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
/* The same with s[index] described instead, as --rank of its rank would
 * give it (report: that rank's own report, taken). Not reentrant on one
 * analysis: callers on several threads hold a lock. */
cJSON *ranks_report_rank(ranks_analysis *a, size_t index, cJSON *report, prof_error *err);
void ranks_analysis_free(ranks_analysis *a);

#endif
