/* nsys.c - Nsight Systems SQLite exports (`nsys export --type sqlite`) read
 * into a profile through a sink (sink.h). The mapping, table by table and
 * column by column, is specified in formats/nsys-import.md.
 *
 * CUDA rows carry CUPTI's own fields (copyKind, syncType, correlationId),
 * so they are handed over as the rt_cu_rec records the recorder makes and
 * mapped by the recorder's translation. Every table is streamed through a
 * prepared statement ordered by start, and the tables are merged by start
 * on the fly, so the sink gets the trace in time order (a runtime call
 * before the synchronization it waits in, a thread's ranges in the order
 * they began) while memory stays bounded by the trace's distinct threads,
 * processes and names, whatever its number of rows. The sorted statements
 * carry StringIds ids, never the strings: names are looked up after the
 * sort (string_of), so SQLite's sorter holds integers however long a name
 * is and however many rows share it. Exports differ across Nsight
 * versions: which tables and columns exist is asked, never assumed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "format/format.h"
#include "import/import.h"
#include "prof.h"
#include "util/error.h"
#include "util/hmap.h"
#include "util/jsonesc.h"
#include "util/vec.h"

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

/* ---- errors -------------------------------------------------------------------------- */

static prof_err nomem(nsys_db *d)
{
    return prof_error_set(d->err, PROF_ERR_NOMEM, "out of memory");
}

/* A sink call failed: writing the profile, or a trace past the format's
 * limits, which the sink's message names. */
static prof_err sink_failed(nsys_db *d, prof_err e)
{
    const prof_error *why = sink_error(d->s);
    if (e == PROF_ERR_LIMIT && why && why->code == PROF_ERR_LIMIT)
        return prof_error_set(d->err, e, "%s", why->message);
    return prof_error_set(d->err, e, "cannot write the profile: %s", prof_strerror(e));
}

/* SQLite said rc while reading what: out of memory stops the import, any
 * other failure (a damaged page, a cut file, an I/O error) is damage: what
 * was read is kept and the profile says where reading stopped. */
static prof_err db_damage(nsys_db *d, const char *what, int rc)
{
    if ((rc & 0xff) == SQLITE_NOMEM)
        return nomem(d);
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, sqlite3_errmsg(d->db));
    sink_note_damage(d->s, msg);
    return PROF_OK;
}

/* ---- small queries ------------------------------------------------------------------- */

static int has_table(const nsys_db *d, int t)
{
    return (d->tables >> t) & 1u;
}

/* Prepares sql; NULL when it cannot be (damage noted, or *e set). */
static sqlite3_stmt *prepare(nsys_db *d, const char *what, const char *sql, prof_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        *e = db_damage(d, what, rc);
        return NULL;
    }
    return st;
}

typedef prof_err (*row_fn)(nsys_db *d, sqlite3_stmt *st, void *arg);

/* Runs sql (one optional integer parameter) and hands each row to fn. */
static prof_err each_row(nsys_db *d, const char *what, const char *sql, const int64_t *param,
                         row_fn fn, void *arg)
{
    prof_err e = PROF_OK;
    sqlite3_stmt *st = prepare(d, what, sql, &e);
    if (!st)
        return e;
    if (param)
        sqlite3_bind_int64(st, 1, *param);
    int rc;
    while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW)
        e = fn(d, st, arg);
    if (!e && rc != SQLITE_DONE)
        e = db_damage(d, what, rc);
    sqlite3_finalize(st);
    return e;
}

static int has_col(nsys_db *d, int table, const char *col)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table_names[table], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

static int64_t col_i64(sqlite3_stmt *st, int i)
{
    return sqlite3_column_int64(st, i);
}

/* A non-negative value (a time, a byte count), as rt_cu_rec takes it. */
static uint64_t col_u64(sqlite3_stmt *st, int i)
{
    int64_t v = sqlite3_column_int64(st, i);
    return v > 0 ? (uint64_t)v : 0;
}

/* An id of CUPTI's 32 bits; out of range reads as 0 (none). */
static uint32_t col_u32(sqlite3_stmt *st, int i)
{
    int64_t v = sqlite3_column_int64(st, i);
    return v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : 0;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* ---- composing statements -------------------------------------------------------- */

typedef struct sqlbuf {
    char s[NSYS_SQL_MAX];
    size_t n;
} sqlbuf;

static void sql_add(sqlbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sql_add(sqlbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->n += (size_t)n < sizeof b->s - b->n ? (size_t)n : sizeof b->s - b->n - 1;
}

/* ", x.col", or ", NULL" when the table has no such column. */
static void sql_col(nsys_db *d, sqlbuf *b, int table, const char *col)
{
    if (has_col(d, table, col))
        sql_add(b, ", x.\"%s\"", col);
    else
        sql_add(b, ", NULL");
}

/* A row's name columns, at the end of its select list: the text column
 * (when text_col is given), then each of cols, the StringIds ids, as they
 * are: ", NULL" for one the table lacks, or all of cols without StringIds.
 * row_name resolves them after the sort. */
static void sql_names(nsys_db *d, sqlbuf *b, int table, const char *const *cols, size_t ncols,
                      const char *text_col)
{
    if (text_col)
        sql_col(d, b, table, text_col);
    for (size_t i = 0; i < ncols; i++) {
        if (has_table(d, T_STRINGS))
            sql_col(d, b, table, cols[i]);
        else
            sql_add(b, ", NULL");
    }
}

/* ---- names ------------------------------------------------------------------------- */

/* Prepares the StringIds lookup once; without it (no table, or one SQLite
 * cannot read: damage noted) every id reads as no name. */
static prof_err lookup_prepare(nsys_db *d)
{
    prof_err e = PROF_OK;
    if (d->lookup || d->no_lookup)
        return PROF_OK;
    if (has_table(d, T_STRINGS) && !(d->slots = calloc(NSYS_NAME_SLOTS, sizeof *d->slots)))
        return nomem(d);
    if (d->slots)
        d->lookup = prepare(d, "StringIds", "SELECT value FROM StringIds WHERE id = ?1 LIMIT 1",
                            &e);
    d->no_lookup = !d->lookup;
    return e;
}

/* Keeps the value of id, read past PF_STRING_MAX bytes, cut to it. */
static prof_err long_keep(nsys_db *d, int64_t id, const char *text, const long_name **out)
{
    if (vec_grow(&d->longs, &d->cap_longs, d->nlongs, sizeof *d->longs) < 0)
        return nomem(d);
    char *copy = malloc(PF_STRING_MAX + 1);
    if (!copy)
        return nomem(d);
    int added;
    uint32_t *slot = hmap_slot(&d->long_index, (uint64_t)id, &added);
    if (!slot) {
        free(copy);
        return nomem(d);
    }
    memcpy(copy, text, PF_STRING_MAX);
    copy[PF_STRING_MAX] = '\0';
    *slot = (uint32_t)d->nlongs;
    d->longs[d->nlongs] = (long_name){ copy, PF_STRING_MAX };
    *out = &d->longs[d->nlongs++];
    return PROF_OK;
}

/* The value of StringIds id in *text (NULL: none) and its length, cut at
 * PF_STRING_MAX bytes as the format cuts names. Valid until the next
 * lookup: a row's names are looked up last, after its thread's. */
static prof_err string_of(nsys_db *d, int64_t id, const char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    prof_err e = lookup_prepare(d);
    if (e || d->no_lookup)
        return e;
    name_slot *slot = &d->slots[(uint64_t)id % NSYS_NAME_SLOTS];
    if (slot->used && slot->id == id) {
        *text = slot->found ? slot->text : NULL;
        *len = slot->len;
        return PROF_OK;
    }
    uint32_t *at = d->nlongs ? hmap_find(&d->long_index, (uint64_t)id) : NULL;
    if (at) {
        *text = d->longs[*at].text;
        *len = d->longs[*at].len;
        return PROF_OK;
    }
    sqlite3_reset(d->lookup);
    sqlite3_bind_int64(d->lookup, 1, id);
    int rc = sqlite3_step(d->lookup);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_damage(d, "StringIds", rc);
    const char *v = rc == SQLITE_ROW ? col_text(d->lookup, 0) : NULL;
    if (!v && rc == SQLITE_ROW && (sqlite3_errcode(d->db) & 0xff) == SQLITE_NOMEM)
        return nomem(d); /* NULL for want of memory to convert it */
    size_t n = v ? (size_t)sqlite3_column_bytes(d->lookup, 0) : 0;
    if (n <= NSYS_SHORT_NAME) { /* none counts too: it is asked again as often */
        *slot = (name_slot){ .id = id, .len = (uint32_t)n, .used = 1, .found = v != NULL };
        if (v)
            memcpy(slot->text, v, n);
        slot->text[n] = '\0';
        *text = v ? slot->text : NULL;
        *len = n;
        return PROF_OK;
    }
    if (n > PF_STRING_MAX) {
        const long_name *l = NULL;
        if ((e = long_keep(d, id, v, &l)) != PROF_OK)
            return e;
        v = l->text;
        n = l->len;
    }
    *text = v;
    *len = n;
    return PROF_OK;
}

/* The name of a row of st: the text at column text_col when there is one
 * (-1: none), else the first of the StringIds ids at columns first..first
 * + nids - 1 that resolves; NULL when none does. As string_of, valid until
 * the next lookup; cut at PF_STRING_MAX bytes. */
static prof_err row_name(nsys_db *d, sqlite3_stmt *st, int text_col, int first, int nids,
                         const char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    if (text_col >= 0 && (*text = col_text(st, text_col)) != NULL) {
        size_t n = (size_t)sqlite3_column_bytes(st, text_col);
        *len = n > PF_STRING_MAX ? PF_STRING_MAX : n;
        return PROF_OK;
    }
    prof_err e = PROF_OK;
    /* ids are integers: one of another type matches no INTEGER PRIMARY KEY */
    for (int i = first; !e && !*text && i < first + nids; i++)
        if (sqlite3_column_type(st, i) == SQLITE_INTEGER)
            e = string_of(d, col_i64(st, i), text, len);
    return e;
}

/* ---- threads and processes ------------------------------------------------------- */

static uint64_t global_pid(uint64_t global_tid)
{
    return global_tid >> NSYS_TID_BITS << NSYS_TID_BITS;
}

static prof_err note_process(nsys_db *d, uint64_t global_pid)
{
    if (!global_pid || (d->nprocs && d->procs[d->nprocs - 1] == global_pid))
        return PROF_OK;
    /* by a map: a trace may have as many processes as threads */
    int added;
    uint32_t *at = hmap_slot(&d->proc_index, global_pid, &added);
    if (!at || (added && vec_grow(&d->procs, &d->cap_procs, d->nprocs, sizeof *d->procs) < 0)) {
        if (at)
            hmap_remove(&d->proc_index, at);
        return nomem(d);
    }
    if (added) {
        *at = (uint32_t)d->nprocs;
        d->procs[d->nprocs++] = global_pid;
    }
    return PROF_OK;
}

static thread_name *name_of(const nsys_db *d, uint64_t key)
{
    size_t lo = 0, hi = d->nnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->names[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->nnames && d->names[lo].key == key ? &d->names[lo] : NULL;
}

/* A row on thread key is about to be handed over: its process is noted
 * and its name given first, so that only threads with activity are made
 * and each is named before its first event. */
static prof_err thread_seen(nsys_db *d, uint64_t key)
{
    if (d->has_last && key == d->last_thread)
        return PROF_OK;
    prof_err e = note_process(d, global_pid(key));
    if (!e && (!d->has_last || key != d->last_thread))
        e = sink_thread_tid(d->s, key, key & ((1ull << NSYS_TID_BITS) - 1));
    thread_name *n = e ? NULL : name_of(d, key);
    if (n && !n->given) {
        const char *text;
        size_t len;
        n->given = 1;
        if ((e = string_of(d, n->name_id, &text, &len)) != PROF_OK)
            return e;
        if (text && (e = sink_thread_name(d->s, key, text)) != PROF_OK)
            return sink_failed(d, e);
    }
    d->last_thread = key;
    d->has_last = !e;
    return e;
}

static prof_err add_thread_name(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    size_t *cap = arg;
    uint64_t key = (uint64_t)col_i64(st, 0);
    int64_t id = col_i64(st, 1);
    if (d->nnames && d->names[d->nnames - 1].key == key) { /* renamed: the last name wins */
        d->names[d->nnames - 1].name_id = id;
        return PROF_OK;
    }
    if (vec_grow(&d->names, cap, d->nnames, sizeof *d->names) < 0)
        return nomem(d);
    d->names[d->nnames++] = (thread_name){ key, id, 0 };
    return PROF_OK;
}

/* ThreadNames, by thread: the ids of the names handed to the sink at first
 * use. The join keeps only names StringIds has, as before; sorting carries
 * the ids alone. */
static prof_err read_thread_names(nsys_db *d)
{
    size_t cap = 0;
    if (!has_table(d, T_THREAD_NAMES) || !has_table(d, T_STRINGS) ||
        !has_col(d, T_THREAD_NAMES, "nameId") || !has_col(d, T_THREAD_NAMES, "globalTid"))
        return PROF_OK;
    return each_row(d, "ThreadNames",
                    "SELECT t.globalTid, s.id FROM ThreadNames AS t JOIN StringIds AS s "
                    "ON s.id = t.nameId WHERE t.globalTid IS NOT NULL "
                    "ORDER BY t.globalTid, t.rowid",
                    NULL, add_thread_name, &cap);
}

/* ---- what the export says of the run ---------------------------------------------- */

static prof_err set_epoch(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    if (sqlite3_column_type(st, 0) != SQLITE_NULL)
        sink_set_epoch(d->s, col_i64(st, 0));
    return PROF_OK;
}

static prof_err set_version(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    const char *v = col_text(st, 0);
    char *json = v ? jsonesc_quote(v) : NULL;
    if (v && !json)
        return nomem(d);
    prof_err e = json ? sink_set_fact(d->s, "nsys_version", json) : PROF_OK;
    free(json);
    return e ? sink_failed(d, e) : PROF_OK;
}

static prof_err set_host(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    const char *host = col_text(st, 0);
    if (host && *host)
        sink_set_host(d->s, host);
    return PROF_OK;
}

static prof_err set_backtrace(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    d->backtrace = col_i64(st, 0);
    return PROF_OK;
}

/* Session start (the epoch of trace time 0), the exporter's version, the
 * target's host name, and which runtime rows are backtraces. */
static prof_err read_run(nsys_db *d)
{
    prof_err e = PROF_OK;
    if (has_table(d, T_SESSION) && has_col(d, T_SESSION, "utcEpochNs"))
        e = each_row(d, table_names[T_SESSION],
                     "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", NULL,
                     set_epoch, NULL);
    if (!e && has_table(d, T_META) && has_col(d, T_META, "name") && has_col(d, T_META, "value"))
        e = each_row(d, table_names[T_META],
                     "SELECT value FROM EXPORT_META_DATA "
                     "WHERE name = 'EXPORT_PRODUCT_VERSION' LIMIT 1",
                     NULL, set_version, NULL);
    if (!e && has_table(d, T_SYSTEM_ENV) && has_col(d, T_SYSTEM_ENV, "name") &&
        has_col(d, T_SYSTEM_ENV, "value"))
        e = each_row(d, table_names[T_SYSTEM_ENV],
                     "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1",
                     NULL, set_host, NULL);
    if (!e && has_table(d, T_EVENT_CLASS) && has_col(d, T_EVENT_CLASS, "id") &&
        has_col(d, T_EVENT_CLASS, "name"))
        e = each_row(d, table_names[T_EVENT_CLASS],
                     "SELECT id FROM ENUM_NSYS_EVENT_CLASS "
                     "WHERE name = 'TRACE_PROCESS_EVENT_CUDABACKTRACE' LIMIT 1",
                     NULL, set_backtrace, NULL);
    return e;
}

static prof_err add_device(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    int *added = arg;
    int64_t index = col_i64(st, 0);
    if (index < 0 || index > (int64_t)UINT32_MAX)
        return PROF_OK;
    int64_t mem = col_i64(st, 2);
    prof_err e = sink_add_device(d->s, (uint32_t)index, col_text(st, 1),
                                 mem > 0 ? (uint64_t)mem : 0);
    *added = 1;
    return e ? sink_failed(d, e) : PROF_OK;
}

/* The GPUs, indexed as the activity's deviceId: newer exports map each
 * process's CUDA device (cudaId) to a GPU of TARGET_INFO_GPU (gpuId);
 * without that map, TARGET_INFO_GPU's id is the index. */
static prof_err read_devices(nsys_db *d, uint64_t pid)
{
    if (!has_table(d, T_GPU) || !has_col(d, T_GPU, "id"))
        return PROF_OK;
    sqlbuf sql = { .n = 0 };
    int added = 0;
    int64_t p = (int64_t)pid;
    const char *mem = has_col(d, T_GPU, "totalMemory") ? "g.totalMemory" : "0";
    const char *name = has_col(d, T_GPU, "name") ? "g.name" : "NULL";
    prof_err e = PROF_OK;
    if (has_table(d, T_CUDA_DEVICE) && has_col(d, T_CUDA_DEVICE, "cudaId") &&
        has_col(d, T_CUDA_DEVICE, "gpuId") && has_col(d, T_CUDA_DEVICE, "pid")) {
        sql_add(&sql, "SELECT c.cudaId, %s, %s FROM TARGET_INFO_CUDA_DEVICE AS c "
                      "JOIN TARGET_INFO_GPU AS g ON g.id = c.gpuId WHERE c.pid = ?1 "
                      "ORDER BY c.cudaId", name, mem);
        e = each_row(d, table_names[T_CUDA_DEVICE], sql.s, &p, add_device, &added);
    }
    if (e || added)
        return e;
    sql.n = 0;
    sql_add(&sql, "SELECT g.id, %s, %s FROM TARGET_INFO_GPU AS g ORDER BY g.id", name, mem);
    return each_row(d, table_names[T_GPU], sql.s, NULL, add_device, &added);
}

static prof_err set_process(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    int *found = arg;
    if (*found)
        return PROF_OK;
    *found = 1;
    int64_t pid = col_i64(st, 0);
    sink_set_process(d->s, pid > 0 ? (uint64_t)pid : 0, col_text(st, 1));
    return PROF_OK;
}

/* A fact of the import that is a count. */
static prof_err count_fact(nsys_db *d, const char *key, uint64_t n)
{
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)n);
    prof_err e = sink_set_fact(d->s, key, v);
    return e ? sink_failed(d, e) : PROF_OK;
}

/* The process of the first activity (PROCESSES lists every process of
 * the machine), how many had activity, and the GPUs it saw. */
static prof_err read_process(nsys_db *d)
{
    if (!d->nprocs)
        return read_devices(d, 0);
    int64_t gp = (int64_t)d->procs[0];
    uint64_t pid = (d->procs[0] >> NSYS_TID_BITS) & NSYS_PID_MASK;
    int found = 0;
    prof_err e = PROF_OK;
    if (has_table(d, T_PROCESSES) && has_col(d, T_PROCESSES, "globalPid") &&
        has_col(d, T_PROCESSES, "pid") && has_col(d, T_PROCESSES, "name"))
        e = each_row(d, table_names[T_PROCESSES],
                     "SELECT pid, name FROM PROCESSES WHERE globalPid = ?1", &gp, set_process,
                     &found);
    if (!e && !found)
        sink_set_process(d->s, pid, NULL);
    if (!e && d->nprocs > 1)
        e = count_fact(d, "processes", d->nprocs);
    return e ? e : read_devices(d, pid);
}

/* ---- CUDA activity ----------------------------------------------------------------- */

static prof_err cuda(nsys_db *d, const rt_cu_rec *r)
{
    prof_err e = sink_cuda(d->s, r);
    return e ? sink_failed(d, e) : PROF_OK;
}

static prof_err send_context(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    rt_cu_rec r = { .kind = RT_CU_CONTEXT, .context = col_u32(st, 0),
                    .device = col_u32(st, 1) };
    return cuda(d, &r);
}

/* Each context and its device, before any activity: a synchronization
 * record names its context only. */
static prof_err send_contexts(nsys_db *d)
{
    static const int tables[] = { T_KERNEL, T_MEMCPY, T_MEMSET, T_SYNC };
    sqlbuf sql = { .n = 0 };
    int parts = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int t = tables[i];
        if (!has_table(d, t) || !has_col(d, t, "contextId") || !has_col(d, t, "deviceId"))
            continue;
        sql_add(&sql, "%sSELECT contextId, deviceId FROM %s", parts++ ? " UNION " : "",
                table_names[t]);
    }
    if (!parts)
        return PROF_OK;
    return each_row(d, "contexts", sql.s, NULL, send_context, NULL);
}

/* The columns every GPU activity statement starts with. */
static void sql_gpu_head(nsys_db *d, sqlbuf *b, int t)
{
    sql_add(b, "SELECT x.start");
    sql_col(d, b, t, "end");
    sql_col(d, b, t, "deviceId");
    sql_col(d, b, t, "contextId");
    sql_col(d, b, t, "streamId");
    sql_col(d, b, t, "correlationId");
    sql_col(d, b, t, "globalPid");
}

static rt_cu_rec gpu_rec(rt_cu_kind kind, sqlite3_stmt *st)
{
    return (rt_cu_rec){ .kind = kind, .start = col_u64(st, 0), .end = col_u64(st, 1),
                        .device = col_u32(st, 2), .context = col_u32(st, 3),
                        .stream = col_u32(st, 4), .correlation = col_u32(st, 5) };
}

static prof_err emit_kernel(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_KERNEL, st);
    size_t len;
    prof_err e = note_process(d, (uint64_t)col_i64(st, 6));
    if (!e)
        e = row_name(d, st, -1, 7, 3, &r.name, &len);
    return e ? e : cuda(d, &r);
}

static prof_err emit_memcpy(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_MEMCPY, st);
    r.bytes = col_u64(st, 7);
    r.copy_kind = col_u32(st, 8);
    prof_err e = note_process(d, (uint64_t)col_i64(st, 6));
    return e ? e : cuda(d, &r);
}

static prof_err emit_memset(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_MEMSET, st);
    r.bytes = col_u64(st, 7);
    prof_err e = note_process(d, (uint64_t)col_i64(st, 6));
    return e ? e : cuda(d, &r);
}

static prof_err emit_sync(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_SYNC, st);
    r.sync_type = col_u32(st, 7);
    prof_err e = note_process(d, (uint64_t)col_i64(st, 6));
    return e ? e : cuda(d, &r);
}

/* The CUPTI synchronization type of a call that waits for the GPU
 * (cudaDeviceSynchronize_v3020, cuStreamSynchronize...), 0 for others. */
static uint32_t sync_call_type(const char *name)
{
    static const struct { const char *name; uint32_t type; } calls[] = {
        { "cudaDeviceSynchronize", RT_CU_SYNC_CONTEXT },
        { "cuCtxSynchronize", RT_CU_SYNC_CONTEXT },
        { "cudaStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cuStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cudaEventSynchronize", RT_CU_SYNC_EVENT },
        { "cuEventSynchronize", RT_CU_SYNC_EVENT },
    };
    for (size_t i = 0; name && i < sizeof calls / sizeof calls[0]; i++) {
        size_t n = strlen(calls[i].name);
        if (strncmp(name, calls[i].name, n) == 0 &&
            (name[n] == '\0' || strncmp(name + n, "_v", 2) == 0 ||
             strncmp(name + n, "_pt", 3) == 0))
            return calls[i].type;
    }
    return 0;
}

/* Without a synchronization table (exports of Nsight versions or captures
 * that record no sync activity), the call that waited is the only sign of
 * the wait: it becomes a sync record too, with the call's times. */
static prof_err sync_from_call(nsys_db *d, const rt_cu_rec *call)
{
    uint32_t type = has_table(d, T_SYNC) ? 0 : sync_call_type(call->name);
    if (!type || !call->correlation)
        return PROF_OK;
    rt_cu_rec r = { .kind = RT_CU_SYNC, .start = call->start, .end = call->end,
                    .correlation = call->correlation, .sync_type = type };
    d->syncs_from_calls++;
    return cuda(d, &r);
}

static prof_err emit_runtime(nsys_db *d, sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, 4) != SQLITE_NULL && col_i64(st, 4) == d->backtrace) {
        sink_note_skipped(d->s, "cuda_backtrace"); /* a repeat of a call, with its stack */
        return PROF_OK;
    }
    uint64_t key = (uint64_t)col_i64(st, 2);
    rt_cu_rec r = { .kind = RT_CU_API, .start = col_u64(st, 0), .end = col_u64(st, 1),
                    .tid = key, .correlation = col_u32(st, 3) };
    size_t len;
    prof_err e = thread_seen(d, key);
    if (!e)
        e = row_name(d, st, -1, 5, 1, &r.name, &len);
    if (!e)
        e = cuda(d, &r);
    return e ? e : sync_from_call(d, &r);
}

/* ---- NVTX ----------------------------------------------------------------------------- */

static int is_comm_domain(const nsys_db *d, uint64_t key, sqlite3_stmt *st)
{
    if (!d->ncomm || sqlite3_column_type(st, 4) == SQLITE_NULL)
        return 0;
    int64_t id = col_i64(st, 4);
    for (size_t i = 0; i < d->ncomm; i++)
        if (d->comm[i].id == id && d->comm[i].global_pid == global_pid(key))
            return 1;
    return 0;
}

/* A domain is created: remembered when it is a communication library's. */
static prof_err nvtx_domain(nsys_db *d, sqlite3_stmt *st, uint64_t key)
{
    static const char *const comm[] = { "MPI", "NCCL", "UCX", "OpenSHMEM", "NVSHMEM" };
    const char *text;
    size_t len;
    prof_err e = row_name(d, st, 5, 6, 1, &text, &len);
    int known = 0;
    for (size_t i = 0; !e && text && i < sizeof comm / sizeof comm[0]; i++)
        known |= strcmp(text, comm[i]) == 0;
    if (e || !known || sqlite3_column_type(st, 4) == SQLITE_NULL || is_comm_domain(d, key, st))
        return e;
    if (vec_grow(&d->comm, &d->cap_comm, d->ncomm, sizeof *d->comm) < 0)
        return nomem(d);
    d->comm[d->ncomm++] = (comm_domain){ global_pid(key), col_i64(st, 4) };
    return PROF_OK;
}

static prof_err nvtx_range(nsys_db *d, sqlite3_stmt *st, uint64_t key)
{
    if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
        sink_note_skipped(d->s, "nvtx_unended"); /* still open when the capture ended */
        return PROF_OK;
    }
    const char *text = NULL;
    size_t len = 0;
    int64_t start = col_i64(st, 0), end = col_i64(st, 1);
    prof_err e = thread_seen(d, key);
    if (!e)
        e = row_name(d, st, 5, 6, 1, &text, &len);
    if (!text)
        len = strlen(NSYS_UNNAMED);
    uint32_t kind = is_comm_domain(d, key, st) ? PROF_KIND_COMM : SINK_KIND_INFER;
    if (!e && (e = sink_region(d->s, key, text ? text : NSYS_UNNAMED, len, kind, start,
                               end > start ? end - start : 0)) != PROF_OK)
        return sink_failed(d, e);
    return e;
}

static prof_err emit_nvtx(nsys_db *d, sqlite3_stmt *st)
{
    int64_t type = col_i64(st, 2);
    uint64_t key = (uint64_t)col_i64(st, 3);
    switch (type) {
    case NVTX_PUSH_POP:
    case NVTX_START_END: return nvtx_range(d, st, key);
    case NVTX_MARK: {
        const char *text = NULL;
        size_t len;
        prof_err e = thread_seen(d, key);
        if (!e)
            e = row_name(d, st, 5, 6, 1, &text, &len);
        if (!e && (e = sink_mark(d->s, key, text ? text : NSYS_UNNAMED, col_i64(st, 0))))
            return sink_failed(d, e);
        return e;
    }
    case NVTX_DOMAIN_CREATE: return nvtx_domain(d, st, key);
    case NVTX_CATEGORY:       /* names: of a category, a thread (ThreadNames has  */
    case NVTX_THREAD_NAME:    /* it); nothing happens at their time               */
    case NVTX_DOMAIN_DESTROY: return PROF_OK;
    default: {
        char cat[48];
        snprintf(cat, sizeof cat, "nvtx_event_type_%lld", (long long)type);
        sink_note_unknown(d->s, cat);
        return PROF_OK;
    }
    }
}

/* ---- the merged stream ------------------------------------------------------------- */

/* The statement of table t for its emitter: the columns it reads, NULL
 * for those this export lacks. */
static void source_sql(nsys_db *d, int t, int sorted, sqlbuf *b)
{
    static const char *const kernel_names[] = { "demangledName", "shortName", "mangledName" };
    static const char *const name_id[] = { "nameId" };
    static const char *const text_id[] = { "textId" };
    switch (t) {
    case T_KERNEL:
        sql_gpu_head(d, b, t);
        sql_names(d, b, t, kernel_names, 3, NULL);
        break;
    case T_MEMCPY:
        sql_gpu_head(d, b, t);
        sql_col(d, b, t, "bytes");
        sql_col(d, b, t, "copyKind");
        break;
    case T_MEMSET:
        sql_gpu_head(d, b, t);
        sql_col(d, b, t, "bytes");
        break;
    case T_SYNC:
        sql_gpu_head(d, b, t);
        sql_col(d, b, t, "syncType");
        break;
    case T_RUNTIME:
        sql_add(b, "SELECT x.start");
        sql_col(d, b, t, "end");
        sql_col(d, b, t, "globalTid");
        sql_col(d, b, t, "correlationId");
        sql_col(d, b, t, "eventClass");
        sql_names(d, b, t, name_id, 1, NULL);
        break;
    case T_NVTX:
        sql_add(b, "SELECT x.start");
        sql_col(d, b, t, "end");
        sql_col(d, b, t, "eventType");
        sql_col(d, b, t, "globalTid");
        sql_col(d, b, t, "domainId");
        sql_names(d, b, t, text_id, 1, "text");
        break;
    }
    sql_add(b, " FROM %s AS x%s", table_names[t], sorted ? " ORDER BY x.start" : "");
}

static prof_err source_prepare(nsys_db *d, source *src)
{
    sqlbuf sql = { .n = 0 };
    prof_err e = PROF_OK;
    source_sql(d, src->table, !src->unsorted, &sql);
    src->st = prepare(d, table_names[src->table], sql.s, &e);
    src->live = src->st != NULL;
    return e;
}

/* Reads src's next row; at its end, or at damage, src is done. */
static prof_err source_next(nsys_db *d, source *src)
{
    int rc = sqlite3_step(src->st);
    if (rc == SQLITE_ROW) {
        src->start = col_i64(src->st, 0);
        src->rows++;
        return PROF_OK;
    }
    src->live = 0;
    if (rc == SQLITE_DONE)
        return PROF_OK;
    if (!src->rows && !src->unsorted && (rc & 0xff) != SQLITE_NOMEM) {
        /* sorting reads the whole table first, so damage anywhere in it
         * stops the sorted read before its first row: read it again in its
         * own order (insertion order, which is time order in Nsight's
         * exports), up to the damage */
        sqlite3_finalize(src->st);
        src->unsorted = 1;
        prof_err e = source_prepare(d, src);
        return e || !src->live ? e : source_next(d, src);
    }
    char what[96];
    snprintf(what, sizeof what, "%s, after %llu rows", table_names[src->table],
             (unsigned long long)(src->rows));
    return db_damage(d, what, rc);
}

static prof_err source_open(nsys_db *d, source *src, int t,
                            prof_err (*emit)(nsys_db *, sqlite3_stmt *))
{
    *src = (source){ .table = t, .emit = emit };
    if (!has_table(d, t) || !has_col(d, t, "start"))
        return PROF_OK;
    if (t == T_NVTX && !has_col(d, t, "eventType"))
        return PROF_OK;
    prof_err e = source_prepare(d, src);
    return e || !src->live ? e : source_next(d, src);
}

/* Every table's rows, merged by start: at equal starts the table listed
 * first goes first (a runtime call before what it launched or waits on). */
static prof_err stream(nsys_db *d)
{
    enum { NSRC = 6 };
    static const int order[NSRC] = { T_RUNTIME, T_NVTX, T_KERNEL, T_MEMCPY, T_MEMSET, T_SYNC };
    prof_err (*const emit[NSRC])(nsys_db *, sqlite3_stmt *) = {
        emit_runtime, emit_nvtx, emit_kernel, emit_memcpy, emit_memset, emit_sync
    };
    source src[NSRC];
    prof_err e = PROF_OK;
    size_t n = 0;
    for (; n < NSRC && !e; n++)
        e = source_open(d, &src[n], order[n], emit[n]);
    while (!e) {
        source *best = NULL;
        for (size_t i = 0; i < n; i++)
            if (src[i].live && (!best || src[i].start < best->start))
                best = &src[i];
        if (!best)
            break;
        e = best->emit(d, best->st);
        if (!e)
            e = source_next(d, best);
    }
    for (size_t i = 0; i < n; i++)
        sqlite3_finalize(src[i].st);
    return e;
}

/* ---- the database ---------------------------------------------------------------------- */

/* "file:" URI of path, every byte but unreserved ones and '/' escaped, so
 * that '?', '#' and '%' in a name stay part of it; immutable: an export is
 * never written again, so SQLite takes no lock and reads no journal -
 * unless rows wait in its write-ahead log (a database in WAL mode whose
 * writer has not checkpointed, or died first): then read-only, through the
 * log, or half the rows would be missed without a word. */
static char *uri_of(const char *path, int wal)
{
    size_t n = strlen(path);
    char *u = malloc(n * 3 + 32);
    if (!u)
        return NULL;
    char *p = u + sprintf(u, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/._-~", *c))
            *p++ = (char)*c;
        else
            p += sprintf(p, "%%%02X", *c);
    }
    strcpy(p, wal ? "?mode=ro" : "?immutable=1");
    return u;
}

/* Whether path has a write-ahead log with something in it. */
static int has_wal(const char *path)
{
    size_t n = strlen(path);
    char *w = malloc(n + 5);
    if (!w)
        return 0;
    memcpy(w, path, n);
    memcpy(w + n, "-wal", 5);
    struct stat st;
    int yes = stat(w, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    free(w);
    return yes;
}

static prof_err db_open(nsys_db *d, const char *path)
{
    int wal = has_wal(path);
    char *uri = uri_of(path, wal);
    if (!uri)
        return nomem(d);
    int rc = sqlite3_open_v2(uri, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        prof_err e = (rc & 0xff) == SQLITE_NOMEM ? PROF_ERR_NOMEM : PROF_ERR_IO;
        int sys = d->db ? sqlite3_system_errno(d->db) : 0;
        return prof_error_set(d->err, e, "cannot open%s: %s",
                              wal ? " it with the rows of its -wal file" : "",
                              sys ? strerror(sys) : sqlite3_errstr(rc));
    }
    /* a trace is untrusted input: no schema-defined code runs, nothing is
     * written (the connection is read-only), damaged cells are caught on
     * read. A writable schema is how SQLite reads a file shorter than its
     * header says (a cut export) up to its end instead of refusing it. */
    sqlite3_db_config(d->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(d->db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, (int *)NULL);
    sqlite3_exec(d->db, "PRAGMA query_only = 1; PRAGMA cell_size_check = 1", NULL, NULL, NULL);
    /* a log is read through the -shm index beside it, which SQLite makes
     * when it is missing: a directory it cannot write stops it here */
    if (wal && sqlite3_exec(d->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) !=
                   SQLITE_OK)
        return prof_error_set(d->err, PROF_ERR_IO, "cannot read the rows waiting in its -wal "
                              "file (%s): SQLite needs its -shm file beside it; copy the "
                              "export with its -wal file to a directory you can write, or "
                              "checkpoint it (sqlite3 FILE 'PRAGMA wal_checkpoint')",
                              sqlite3_errmsg(d->db));
    return PROF_OK;
}

static prof_err note_table(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    const char *name = col_text(st, 0);
    if (!name)
        return PROF_OK;
    for (int t = 0; t < T_COUNT; t++)
        if (strcmp(name, table_names[t]) == 0)
            d->tables |= 1u << t;
    if (strcmp(name, "StringIds") == 0 || strcmp(name, "NVTX_EVENTS") == 0 ||
        strncmp(name, "CUPTI_ACTIVITY_KIND_", 20) == 0)
        d->nsight = 1;
    return PROF_OK;
}

/* Which tables the export has. The schema is the first thing read: a file
 * SQLite does not recognise is not an export at all. */
static prof_err read_tables(nsys_db *d)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, "SELECT name FROM sqlite_master WHERE type = 'table'",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            note_table(d, st, NULL);
    char msg[160];
    snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(d->db));
    sqlite3_finalize(st);
    switch (rc & 0xff) {
    case SQLITE_DONE: break;
    case SQLITE_NOMEM: return nomem(d);
    case SQLITE_NOTADB:
        return prof_error_set(d->err, PROF_ERR_NOT_PROF, "not an SQLite database: %s", msg);
    case SQLITE_CORRUPT:
        return prof_error_set(d->err, PROF_ERR_CORRUPT, "damaged SQLite database: %s", msg);
    default: return prof_error_set(d->err, PROF_ERR_IO, "cannot read: %s", msg);
    }
    if (!d->nsight)
        return prof_error_set(d->err, PROF_ERR_NOT_PROF,
                              "an SQLite database, but not an Nsight Systems export "
                              "(no StringIds, CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)");
    return PROF_OK;
}

static void db_close(nsys_db *d)
{
    sqlite3_finalize(d->lookup);
    sqlite3_close(d->db);
    free(d->names);
    for (size_t i = 0; i < d->nlongs; i++)
        free(d->longs[i].text);
    free(d->longs);
    hmap_free(&d->long_index);
    free(d->slots);
    free(d->procs);
    hmap_free(&d->proc_index);
    free(d->comm);
}

prof_err nsys_read(const char *path, import_sink *s, const import_options *o, prof_error *err)
{
    (void)o; /* no option concerns Nsight exports */
    nsys_db d = { .s = s, .err = err, .backtrace = NSYS_BACKTRACE_CLASS };
    prof_err e = db_open(&d, path);
    if (!e)
        e = read_tables(&d);
    if (!e)
        e = read_run(&d);
    if (!e)
        e = read_thread_names(&d);
    if (!e)
        e = send_contexts(&d);
    if (!e)
        e = stream(&d);
    if (!e)
        e = read_process(&d);
    if (!e && d.syncs_from_calls)
        e = count_fact(&d, "syncs_from_calls", d.syncs_from_calls);
    db_close(&d);
    return e;
}
