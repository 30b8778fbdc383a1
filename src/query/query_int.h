/* query_int.h - what the files of src/query/ share: the connection's
 * state (a query_db and its ranks), the tables' descriptions (tables.c),
 * each rank's index (index.c) and the two kinds of virtual table: events
 * streamed from the reader (events.c) and rows of a JSON array built once
 * (rows.c). */
#ifndef PROF_QUERY_INT_H
#define PROF_QUERY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "query/query.h"
#include "util/hmap.h"

/* ---- a rank's index: one pass over its file, made when a query needs it ---- */

typedef struct q_step {
    uint64_t number, start_ns, dur_ns;
    uint32_t flags;
} q_step;

/* Steps by start time. */
typedef struct q_steps {
    q_step *s;
    size_t n, cap;
} q_steps;

typedef struct q_thread {
    uint32_t thread;
    uint64_t os_tid;
    uint64_t events;
    char *name;            /* latest definition, or NULL */
} q_thread;

/* A runtime call with a correlation id: GPU work joins to it, and it to
 * the innermost region around its start on its thread. */
typedef struct q_launch {
    uint64_t correlation, start_ns;
    uint32_t thread;
    uint32_t api;          /* index into q_rank.names       */
    uint32_t op;           /* index into q_rank.names, or Q_NONE */
} q_launch;
#define Q_NONE UINT32_MAX

/* An event with a correlation id, kept for lookups by that id: the inner
 * side of a join on correlation reads its rows from here, not from the
 * file once per outer row. */
typedef struct q_cached {
    uint64_t correlation, start_ns, dur_ns, value;
    size_t order;          /* in the file                                        */
    uint32_t name, thread_name; /* into q_rank.names, or Q_NONE                  */
    uint32_t thread, device, stream, subkind;
} q_cached;

/* The kinds that carry correlation ids: kernels, copies, memsets, syncs,
 * runtime calls (PROF_EV_GPU_KERNEL .. PROF_EV_API). */
#define Q_CORRELATED 5
typedef struct q_corr_cache {
    int built;
    q_cached *e;           /* by correlation id, then file order */
    size_t n, cap;
} q_corr_cache;

/* How far events that start in a time bucket reach: max_end[i] is the
 * largest end of the events starting in [i * width, (i + 1) * width). A
 * window's end is widened with it, so that a region that starts in the
 * window is read with every child it has (its self time). */
#define Q_BUCKETS 65536u

typedef struct q_rank {
    char *path, *label;
    long rank;
    cJSON *meta;           /* the metadata object                               */
    /* the index (index.c) */
    int indexed;
    q_steps steps;
    q_thread *threads;
    size_t nthreads, threads_cap;
    hmap thread_at;        /* thread index -> threads[]                          */
    uint64_t events;       /* timed events                                       */
    uint64_t width;        /* of a bucket, ns (a power of two)                   */
    uint64_t *max_end;     /* Q_BUCKETS                                         */
    int clean;
    char detail[160];      /* why reading stopped early                          */
    /* the launches (index.c), when GPU work's operation is asked for */
    int joined;
    q_launch *launches;
    size_t nlaunches, launches_cap;
    hmap launch_at;        /* correlation -> launches[]                          */
    char **names;          /* API call and region names the launches use         */
    size_t nnames, names_cap;
    hmap name_at;          /* name id -> names[]                                 */
    /* events by correlation id, of each kind that has them (index.c) */
    q_corr_cache corr[Q_CORRELATED];
    /* the analysis (rows.c) */
    cJSON *report;
} q_rank;

struct query_db {
    sqlite3 *db;
    q_rank *ranks;
    size_t n;
    analysis_options opts;
    const prof_tuning *tuning;
    prof_error err;        /* the first table error of the statement            */
    query_progress_fn progress;
    void *progress_arg;
    unsigned long long done; /* events read for the statement so far             */
    struct q_module *modules;
};

/* The index of r: steps, threads, bucket ends, counts. PROF_OK or the
 * reader's error (err names the file). */
prof_err q_rank_index(query_db *q, q_rank *r, prof_error *err);
/* The launches of r joined to their operations (after q_rank_index). */
prof_err q_rank_join(query_db *q, q_rank *r, prof_error *err);
/* The step of steps holding time t (the last whose start <= t, if t is
 * before its end), or NULL. */
const q_step *q_step_at(const q_steps *steps, uint64_t t);
/* The same for a sample: one exactly at a step's end is that step's (the
 * runtime samples memory as it closes a step; rules.md §4.2). */
const q_step *q_step_closing_at(const q_steps *steps, uint64_t t);
/* The time span [*from, *to] of the steps numbered lo..hi, found with a
 * few windowed reads (steps.c) or the index; *none when there is no such
 * step. */
prof_err q_steps_span(query_db *q, q_rank *r, uint64_t lo, uint64_t hi, uint64_t *from,
                      uint64_t *to, int *none, prof_error *err);
/* Reads the window [from, to] of r once: every step it meets into steps
 * (sorted, each once), and into *reach (when not NULL) the latest end of
 * an event starting in it, at least to. */
prof_err q_window_pass(query_db *q, q_rank *r, uint64_t from, uint64_t to, q_steps *steps,
                       uint64_t *reach, prof_error *err);
/* r's events of type (PROF_EV_GPU_KERNEL .. PROF_EV_API) by correlation
 * id, read once; q_correlated gives those of one id (*count of them). */
prof_err q_rank_correlated(query_db *q, q_rank *r, prof_event_type type, prof_error *err);
const q_cached *q_correlated(const q_rank *r, prof_event_type type, uint64_t correlation,
                             size_t *count);
/* The launch of a correlation id, or NULL. */
const q_launch *q_launch_of(const q_rank *r, uint64_t correlation);
/* The latest end of an event that starts in [from, to]. */
uint64_t q_reach(const q_rank *r, uint64_t from, uint64_t to);
void q_rank_free(q_rank *r);

/* A reader of r's file with q's tuning, err naming the file. */
prof_err q_reader_open(query_db *q, const q_rank *r, prof_reader **out, prof_error *err);
/* err: out of memory; returns PROF_ERR_NOMEM. */
prof_err q_nomem(prof_error *err);
/* err: "cannot read 'LABEL': why". */
void q_file_error(const q_rank *r, prof_err code, const char *why, prof_error *err);
/* Reads every event of r's file (through the window [from, to] unless it
 * is [0, UINT64_MAX]) into each(arg, ev); then, at the end, hands the
 * reader to end(arg, rd) when not NULL (thread names, the status). each
 * and end return 0, or -1 out of memory. PROF_OK or the error. */
prof_err q_read_all(query_db *q, q_rank *r, uint64_t from, uint64_t to,
                    int (*each)(void *arg, const prof_event *ev),
                    int (*end)(void *arg, prof_reader *rd), void *arg, prof_error *err);
/* err as the reader left it, prefixed with the file's label. */
void q_reader_error(const q_rank *r, prof_reader *rd, prof_error *err);
/* Records a table's failure in q and as the table's message: SQLITE_ERROR,
 * or SQLITE_NOMEM. */
int q_fail(query_db *q, sqlite3_vtab *vt, const prof_error *err);
/* Counts rows for the progress callback. */
void q_progress(query_db *q, unsigned long long events);

/* ---- the tables (tables.c) ---- */

typedef enum q_field {
    F_RANK, F_THREAD, F_THREAD_NAME, F_NAME, F_KIND, F_DEPTH, F_STEP, F_START, F_END, F_DUR,
    F_SELF, F_DEVICE, F_STREAM, F_CORRELATION, F_BYTES, F_COPY_KIND, F_SYNC_KIND, F_OP, F_API,
    F_LAUNCH_THREAD, F_VALUE,
    F_JSON                 /* rows tables: the member named by the column        */
} q_field;

typedef struct q_column {
    const char *name;
    const char *type;      /* INTEGER, REAL, TEXT                                 */
    q_field field;
    const char *member;    /* F_JSON: the member of the row object; "a.b" nests  */
} q_column;

typedef enum q_source { Q_EVENTS, Q_ROWS } q_source;

typedef struct q_table {
    const char *name;
    q_source source;
    unsigned types;        /* Q_EVENTS: mask of 1 << PROF_EV_*                   */
    /* Q_ROWS: the rows of one rank as a JSON array (owned by the caller) */
    prof_err (*rows)(query_db *q, q_rank *r, cJSON **out, prof_error *err);
    const q_column *cols;
    size_t ncols;
    const char *indexes;   /* export: the columns indexed, "rank,step;rank,start_ns" */
} q_table;

extern const q_table q_tables[];
extern const size_t q_ntables;

/* The modules registered for the tables (db.c). */
typedef struct q_module {
    query_db *q;
    const q_table *t;
} q_module;

/* A table as SQLite holds it, for either module. */
typedef struct q_vtab {
    sqlite3_vtab base;
    q_module *m;
} q_vtab;

/* xConnect and xDisconnect of both modules (db.c): the table's columns
 * declared from tables.c. */
int q_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
              char **errmsg);
int q_disconnect(sqlite3_vtab *vt);

extern const sqlite3_module q_events_module;
extern const sqlite3_module q_rows_module;

/* The CREATE TABLE statement that declares t's columns (sqlite3_free it). */
char *q_declare(const q_table *t);
/* The column of t with the field f, or -1. */
int q_column_of(const q_table *t, q_field f);

/* ---- the rows tables' sources (rows.c) ---- */
prof_err q_rows_steps(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_threads(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_ranks(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_metadata(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_operations(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_bottlenecks(query_db *q, q_rank *r, cJSON **out, prof_error *err);
prof_err q_rows_memory_fits(query_db *q, q_rank *r, cJSON **out, prof_error *err);

#endif
