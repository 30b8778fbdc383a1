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
#include <stdlib.h>
#include <sys/stat.h>

#include "import/import.h"
#include "import/nsys_int.h"
#include "util/error.h"
#include "util/jsonesc.h"

/* ---- what the export says of the run ---------------------------------------------- */

static prof_err set_epoch(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    if (sqlite3_column_type(st, 0) != SQLITE_NULL)
        sink_set_epoch(d->s, nsys_col_i64(st, 0));
    return PROF_OK;
}

static prof_err set_version(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    const char *v = nsys_col_text(st, 0);
    char *json = v ? jsonesc_quote(v) : NULL;
    if (v && !json)
        return nsys_nomem(d);
    prof_err e = json ? sink_set_fact(d->s, "nsys_version", json) : PROF_OK;
    free(json);
    return e ? nsys_sink_failed(d, e) : PROF_OK;
}

static prof_err set_host(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    const char *host = nsys_col_text(st, 0);
    if (host && *host)
        sink_set_host(d->s, host);
    return PROF_OK;
}

static prof_err set_backtrace(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    d->backtrace = nsys_col_i64(st, 0);
    return PROF_OK;
}

/* Session start (the epoch of trace time 0), the exporter's version, the
 * target's host name, and which runtime rows are backtraces. */
static prof_err read_run(nsys_db *d)
{
    prof_err e = PROF_OK;
    if (nsys_has_table(d, T_SESSION) && nsys_has_col(d, T_SESSION, "utcEpochNs"))
        e = nsys_each_row(d, table_names[T_SESSION],
                          "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", NULL,
                          set_epoch, NULL);
    if (!e && nsys_has_table(d, T_META) && nsys_has_col(d, T_META, "name") &&
        nsys_has_col(d, T_META, "value"))
        e = nsys_each_row(d, table_names[T_META],
                          "SELECT value FROM EXPORT_META_DATA "
                          "WHERE name = 'EXPORT_PRODUCT_VERSION' LIMIT 1",
                          NULL, set_version, NULL);
    if (!e && nsys_has_table(d, T_SYSTEM_ENV) && nsys_has_col(d, T_SYSTEM_ENV, "name") &&
        nsys_has_col(d, T_SYSTEM_ENV, "value"))
        e = nsys_each_row(d, table_names[T_SYSTEM_ENV],
                          "SELECT value FROM TARGET_INFO_SYSTEM_ENV "
                          "WHERE name = 'Hostname' LIMIT 1",
                          NULL, set_host, NULL);
    if (!e && nsys_has_table(d, T_EVENT_CLASS) && nsys_has_col(d, T_EVENT_CLASS, "id") &&
        nsys_has_col(d, T_EVENT_CLASS, "name"))
        e = nsys_each_row(d, table_names[T_EVENT_CLASS],
                          "SELECT id FROM ENUM_NSYS_EVENT_CLASS "
                          "WHERE name = 'TRACE_PROCESS_EVENT_CUDABACKTRACE' LIMIT 1",
                          NULL, set_backtrace, NULL);
    return e;
}

static prof_err add_device(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    int *added = arg;
    int64_t index = nsys_col_i64(st, 0);
    if (index < 0 || index > (int64_t)UINT32_MAX)
        return PROF_OK;
    int64_t mem = nsys_col_i64(st, 2);
    prof_err e = sink_add_device(d->s, (uint32_t)index, nsys_col_text(st, 1),
                                 mem > 0 ? (uint64_t)mem : 0);
    *added = 1;
    return e ? nsys_sink_failed(d, e) : PROF_OK;
}

/* The GPUs, indexed as the activity's deviceId: newer exports map each
 * process's CUDA device (cudaId) to a GPU of TARGET_INFO_GPU (gpuId);
 * without that map, TARGET_INFO_GPU's id is the index. */
static prof_err read_devices(nsys_db *d, uint64_t pid)
{
    if (!nsys_has_table(d, T_GPU) || !nsys_has_col(d, T_GPU, "id"))
        return PROF_OK;
    sqlbuf sql = { .n = 0 };
    int added = 0;
    int64_t p = (int64_t)pid;
    const char *mem = nsys_has_col(d, T_GPU, "totalMemory") ? "g.totalMemory" : "0";
    const char *name = nsys_has_col(d, T_GPU, "name") ? "g.name" : "NULL";
    prof_err e = PROF_OK;
    if (nsys_has_table(d, T_CUDA_DEVICE) && nsys_has_col(d, T_CUDA_DEVICE, "cudaId") &&
        nsys_has_col(d, T_CUDA_DEVICE, "gpuId") && nsys_has_col(d, T_CUDA_DEVICE, "pid")) {
        nsys_sql_add(&sql, "SELECT c.cudaId, %s, %s FROM TARGET_INFO_CUDA_DEVICE AS c "
                           "JOIN TARGET_INFO_GPU AS g ON g.id = c.gpuId WHERE c.pid = ?1 "
                           "ORDER BY c.cudaId", name, mem);
        e = nsys_each_row(d, table_names[T_CUDA_DEVICE], sql.s, &p, add_device, &added);
    }
    if (e || added)
        return e;
    sql.n = 0;
    nsys_sql_add(&sql, "SELECT g.id, %s, %s FROM TARGET_INFO_GPU AS g ORDER BY g.id", name, mem);
    return nsys_each_row(d, table_names[T_GPU], sql.s, NULL, add_device, &added);
}

static prof_err set_process(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    int *found = arg;
    if (*found)
        return PROF_OK;
    *found = 1;
    int64_t pid = nsys_col_i64(st, 0);
    sink_set_process(d->s, pid > 0 ? (uint64_t)pid : 0, nsys_col_text(st, 1));
    return PROF_OK;
}

/* A fact of the import that is a count. */
static prof_err count_fact(nsys_db *d, const char *key, uint64_t n)
{
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)n);
    prof_err e = sink_set_fact(d->s, key, v);
    return e ? nsys_sink_failed(d, e) : PROF_OK;
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
    if (nsys_has_table(d, T_PROCESSES) && nsys_has_col(d, T_PROCESSES, "globalPid") &&
        nsys_has_col(d, T_PROCESSES, "pid") && nsys_has_col(d, T_PROCESSES, "name"))
        e = nsys_each_row(d, table_names[T_PROCESSES],
                          "SELECT pid, name FROM PROCESSES WHERE globalPid = ?1", &gp, set_process,
                          &found);
    if (!e && !found)
        sink_set_process(d->s, pid, NULL);
    if (!e && d->nprocs > 1)
        e = count_fact(d, "processes", d->nprocs);
    return e ? e : read_devices(d, pid);
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
        nsys_sql_gpu_head(d, b, t);
        nsys_sql_names(d, b, t, kernel_names, 3, NULL);
        break;
    case T_MEMCPY:
        nsys_sql_gpu_head(d, b, t);
        nsys_sql_col(d, b, t, "bytes");
        nsys_sql_col(d, b, t, "copyKind");
        break;
    case T_MEMSET:
        nsys_sql_gpu_head(d, b, t);
        nsys_sql_col(d, b, t, "bytes");
        break;
    case T_SYNC:
        nsys_sql_gpu_head(d, b, t);
        nsys_sql_col(d, b, t, "syncType");
        break;
    case T_RUNTIME:
        nsys_sql_add(b, "SELECT x.start");
        nsys_sql_col(d, b, t, "end");
        nsys_sql_col(d, b, t, "globalTid");
        nsys_sql_col(d, b, t, "correlationId");
        nsys_sql_col(d, b, t, "eventClass");
        nsys_sql_names(d, b, t, name_id, 1, NULL);
        break;
    case T_NVTX:
        nsys_sql_add(b, "SELECT x.start");
        nsys_sql_col(d, b, t, "end");
        nsys_sql_col(d, b, t, "eventType");
        nsys_sql_col(d, b, t, "globalTid");
        nsys_sql_col(d, b, t, "domainId");
        nsys_sql_names(d, b, t, text_id, 1, "text");
        break;
    }
    nsys_sql_add(b, " FROM %s AS x%s", table_names[t], sorted ? " ORDER BY x.start" : "");
}

static prof_err source_prepare(nsys_db *d, source *src)
{
    sqlbuf sql = { .n = 0 };
    prof_err e = PROF_OK;
    source_sql(d, src->table, !src->unsorted, &sql);
    src->st = nsys_prepare(d, table_names[src->table], sql.s, &e);
    src->live = src->st != NULL;
    return e;
}

/* Reads src's next row; at its end, or at damage, src is done. */
static prof_err source_next(nsys_db *d, source *src)
{
    int rc = sqlite3_step(src->st);
    if (rc == SQLITE_ROW) {
        src->start = nsys_col_i64(src->st, 0);
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
    return nsys_db_damage(d, what, rc);
}

static prof_err source_open(nsys_db *d, source *src, int t,
                            prof_err (*emit)(nsys_db *, sqlite3_stmt *))
{
    *src = (source){ .table = t, .emit = emit };
    if (!nsys_has_table(d, t) || !nsys_has_col(d, t, "start"))
        return PROF_OK;
    if (t == T_NVTX && !nsys_has_col(d, t, "eventType"))
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
        nsys_emit_runtime, nsys_emit_nvtx,   nsys_emit_kernel,
        nsys_emit_memcpy,  nsys_emit_memset, nsys_emit_sync
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
        return nsys_nomem(d);
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
    const char *name = nsys_col_text(st, 0);
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
    case SQLITE_NOMEM: return nsys_nomem(d);
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
        e = nsys_read_thread_names(&d);
    if (!e)
        e = nsys_send_contexts(&d);
    if (!e)
        e = stream(&d);
    if (!e)
        e = read_process(&d);
    if (!e && d.syncs_from_calls)
        e = count_fact(&d, "syncs_from_calls", d.syncs_from_calls);
    db_close(&d);
    return e;
}
