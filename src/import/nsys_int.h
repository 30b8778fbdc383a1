/* nsys_int.h - the Nsight Systems importer's state, shared by its files
 * and private to them:
 *
 *   nsys.c       what the export says of the run, the merged stream of
 *                its tables, and the database
 *   nsys_rows.c  names, threads and processes, CUDA activity, NVTX
 *   nsys_sql.c   errors, small queries, composing statements
 */
#ifndef PROF_IMPORT_NSYS_INT_H
#define PROF_IMPORT_NSYS_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "format/format.h"
#include "import/import.h"
#include "prof.h"
#include "util/hmap.h"

/* The tables read, as bits of nsys_db.tables. */
enum {
    T_STRINGS, T_THREAD_NAMES, T_PROCESSES, T_SESSION, T_GPU, T_CUDA_DEVICE, T_SYSTEM_ENV,
    T_META, T_EVENT_CLASS, T_KERNEL, T_MEMCPY, T_MEMSET, T_RUNTIME, T_SYNC, T_NVTX, T_COUNT
};

static const char *const table_names[T_COUNT] = {
    [T_STRINGS] = "StringIds",
    [T_THREAD_NAMES] = "ThreadNames",
    [T_PROCESSES] = "PROCESSES",
    [T_SESSION] = "TARGET_INFO_SESSION_START_TIME",
    [T_GPU] = "TARGET_INFO_GPU",
    [T_CUDA_DEVICE] = "TARGET_INFO_CUDA_DEVICE",
    [T_SYSTEM_ENV] = "TARGET_INFO_SYSTEM_ENV",
    [T_META] = "EXPORT_META_DATA",
    [T_EVENT_CLASS] = "ENUM_NSYS_EVENT_CLASS",
    [T_KERNEL] = "CUPTI_ACTIVITY_KIND_KERNEL",
    [T_MEMCPY] = "CUPTI_ACTIVITY_KIND_MEMCPY",
    [T_MEMSET] = "CUPTI_ACTIVITY_KIND_MEMSET",
    [T_RUNTIME] = "CUPTI_ACTIVITY_KIND_RUNTIME",
    [T_SYNC] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    [T_NVTX] = "NVTX_EVENTS",
};

/* NVTX_EVENTS.eventType values (Nsight's ENUM_NSYS_EVENT_TYPE). */
enum {
    NVTX_CATEGORY = 33, NVTX_MARK = 34, NVTX_THREAD_NAME = 39, NVTX_PUSH_POP = 59,
    NVTX_START_END = 60, NVTX_DOMAIN_CREATE = 75, NVTX_DOMAIN_DESTROY = 76
};

/* CUPTI_ACTIVITY_KIND_RUNTIME.eventClass of the rows that repeat a call to
 * carry its CUDA backtrace (TRACE_PROCESS_EVENT_CUDABACKTRACE), when the
 * export has no ENUM_NSYS_EVENT_CLASS table to say so. */
#define NSYS_BACKTRACE_CLASS 67

/* A GlobalId's low 24 bits are the thread id: clearing them gives the
 * process's globalPid, bits 24..47 hold the pid. */
#define NSYS_TID_BITS 24
#define NSYS_PID_MASK 0xFFFFFFu

#define NSYS_SQL_MAX 2048
/* Short names are kept in a table of this many slots by id: asking SQLite
 * for the name of each of millions of kernels and calls made the import a
 * quarter slower than the join it replaced. At most NSYS_SHORT_NAME bytes
 * each, so the table stays small whatever the names. */
#define NSYS_NAME_SLOTS 1024
#define NSYS_SHORT_NAME 256
#define NSYS_UNNAMED "(unnamed)"

/* A thread's name by its StringIds id, looked up when the thread is first
 * used: a trace may name many threads that do nothing, or give thousands
 * one long name, and neither costs more than this. */
typedef struct thread_name {
    uint64_t key;       /* globalTid             */
    int64_t name_id;    /* StringIds             */
    int given;          /* handed to the sink    */
} thread_name;

/* A StringIds value longer than the format keeps, cut as the format cuts
 * names: reading it costs its whole length, so it is read once and kept
 * (cut, it is shorter here than in the file, so what is kept stays below
 * the file's size). */
typedef struct long_name {
    char *text;
    size_t len;
} long_name;

typedef struct name_slot {
    int64_t id;
    uint32_t len;
    int used, found;
    char text[NSYS_SHORT_NAME + 1];
} name_slot;

/* An NVTX domain that a communication library's ranges live in (Nsight's
 * MPI, UCX and OpenSHMEM tracing, NCCL's own annotations): its ranges are
 * of kind COMM whatever their names. Domain ids are a process's own. */
typedef struct comm_domain {
    uint64_t global_pid;
    int64_t id;
} comm_domain;

typedef struct nsys_db {
    sqlite3 *db;
    import_sink *s;
    prof_error *err;
    unsigned tables;      /* 1 << T_*                                      */
    int nsight;           /* a table only Nsight writes was found          */
    int64_t backtrace;    /* eventClass of backtrace rows                  */
    thread_name *names;   /* by key, one per thread                        */
    size_t nnames;
    sqlite3_stmt *lookup; /* a StringIds value by id (string_of)           */
    int no_lookup;        /* StringIds could not be asked: names are NULL  */
    long_name *longs;     /* values past PF_STRING_MAX, cut, by long_index */
    size_t nlongs, cap_longs;
    hmap long_index;      /* their ids: position in longs                  */
    name_slot *slots;     /* NSYS_NAME_SLOTS short names, by id            */
    uint64_t *procs;      /* globalPids seen, first seen first             */
    size_t nprocs, cap_procs;
    hmap proc_index;      /* globalPids seen: position in procs            */
    uint64_t last_thread; /* the thread of the previous row, already seen  */
    int has_last;
    comm_domain *comm;    /* NVTX domains of communication libraries       */
    size_t ncomm, cap_comm;
    uint64_t syncs_from_calls;
} nsys_db;

/* One table's rows in start order. Column 0 of every statement is start. */
typedef struct source {
    int table;
    sqlite3_stmt *st;
    prof_err (*emit)(nsys_db *d, sqlite3_stmt *st);
    int64_t start;
    uint64_t rows;
    int live;
    int unsorted;   /* read in the table's own order, after damage */
} source;

typedef prof_err (*row_fn)(nsys_db *d, sqlite3_stmt *st, void *arg);

typedef struct sqlbuf {
    char s[NSYS_SQL_MAX];
    size_t n;
} sqlbuf;

/* ---- nsys_sql.c ---- */
int nsys_has_table(const nsys_db *d, int t);
prof_err nsys_nomem(nsys_db *d);
sqlite3_stmt *nsys_prepare(nsys_db *d, const char *what, const char *sql, prof_err *e);
prof_err nsys_db_damage(nsys_db *d, const char *what, int rc);
const char *nsys_col_text(sqlite3_stmt *st, int i);
int64_t nsys_col_i64(sqlite3_stmt *st, int i);
prof_err nsys_sink_failed(nsys_db *d, prof_err e);
int nsys_has_col(nsys_db *d, int table, const char *col);
prof_err nsys_each_row(nsys_db *d, const char *what, const char *sql, const int64_t *param,
                       row_fn fn, void *arg);
void nsys_sql_add(sqlbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t nsys_col_u32(sqlite3_stmt *st, int i);
void nsys_sql_col(nsys_db *d, sqlbuf *b, int table, const char *col);
uint64_t nsys_col_u64(sqlite3_stmt *st, int i);
void nsys_sql_names(nsys_db *d, sqlbuf *b, int table, const char *const *cols, size_t ncols,
                    const char *text_col);

/* ---- nsys_rows.c ---- */
void nsys_sql_gpu_head(nsys_db *d, sqlbuf *b, int t);
prof_err nsys_read_thread_names(nsys_db *d);
prof_err nsys_send_contexts(nsys_db *d);

/* each table's rows, as the merged stream hands them over */
prof_err nsys_emit_nvtx(nsys_db *d, sqlite3_stmt *st);
prof_err nsys_emit_runtime(nsys_db *d, sqlite3_stmt *st);
prof_err nsys_emit_sync(nsys_db *d, sqlite3_stmt *st);
prof_err nsys_emit_memset(nsys_db *d, sqlite3_stmt *st);
prof_err nsys_emit_memcpy(nsys_db *d, sqlite3_stmt *st);
prof_err nsys_emit_kernel(nsys_db *d, sqlite3_stmt *st);

#endif
