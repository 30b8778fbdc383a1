/* nsys_rows.c - the rows of an Nsight Systems export that become events
 * (formats/nsys-import.md): names (StringIds, looked up after the sort),
 * threads and processes, CUDA activity handed over as the recorder's
 * rt_cu_rec records, and NVTX ranges and marks. */
#include <stdio.h>
#include <stdlib.h>

#include "import/nsys_int.h"
#include "util/vec.h"

/* ---- names ------------------------------------------------------------------------- */

/* Prepares the StringIds lookup once; without it (no table, or one SQLite
 * cannot read: damage noted) every id reads as no name. */
static prof_err lookup_prepare(nsys_db *d)
{
    prof_err e = PROF_OK;
    if (d->lookup || d->no_lookup)
        return PROF_OK;
    if (nsys_has_table(d, T_STRINGS) && !(d->slots = calloc(NSYS_NAME_SLOTS, sizeof *d->slots)))
        return nsys_nomem(d);
    if (d->slots)
        d->lookup = nsys_prepare(d, "StringIds",
                                 "SELECT value FROM StringIds WHERE id = ?1 LIMIT 1", &e);
    d->no_lookup = !d->lookup;
    return e;
}

/* Keeps the value of id, read past PF_STRING_MAX bytes, cut to it. */
static prof_err long_keep(nsys_db *d, int64_t id, const char *text, const long_name **out)
{
    if (vec_grow(&d->longs, &d->cap_longs, d->nlongs, sizeof *d->longs) < 0)
        return nsys_nomem(d);
    char *copy = malloc(PF_STRING_MAX + 1);
    if (!copy)
        return nsys_nomem(d);
    int added;
    uint32_t *slot = hmap_slot(&d->long_index, (uint64_t)id, &added);
    if (!slot) {
        free(copy);
        return nsys_nomem(d);
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
        return nsys_db_damage(d, "StringIds", rc);
    const char *v = rc == SQLITE_ROW ? nsys_col_text(d->lookup, 0) : NULL;
    if (!v && rc == SQLITE_ROW && (sqlite3_errcode(d->db) & 0xff) == SQLITE_NOMEM)
        return nsys_nomem(d); /* NULL for want of memory to convert it */
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
    if (text_col >= 0 && (*text = nsys_col_text(st, text_col)) != NULL) {
        size_t n = (size_t)sqlite3_column_bytes(st, text_col);
        *len = n > PF_STRING_MAX ? PF_STRING_MAX : n;
        return PROF_OK;
    }
    prof_err e = PROF_OK;
    /* ids are integers: one of another type matches no INTEGER PRIMARY KEY */
    for (int i = first; !e && !*text && i < first + nids; i++)
        if (sqlite3_column_type(st, i) == SQLITE_INTEGER)
            e = string_of(d, nsys_col_i64(st, i), text, len);
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
        return nsys_nomem(d);
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
            return nsys_sink_failed(d, e);
    }
    d->last_thread = key;
    d->has_last = !e;
    return e;
}

static prof_err add_thread_name(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    size_t *cap = arg;
    uint64_t key = (uint64_t)nsys_col_i64(st, 0);
    int64_t id = nsys_col_i64(st, 1);
    if (d->nnames && d->names[d->nnames - 1].key == key) { /* renamed: the last name wins */
        d->names[d->nnames - 1].name_id = id;
        return PROF_OK;
    }
    if (vec_grow(&d->names, cap, d->nnames, sizeof *d->names) < 0)
        return nsys_nomem(d);
    d->names[d->nnames++] = (thread_name){ key, id, 0 };
    return PROF_OK;
}

/* ThreadNames, by thread: the ids of the names handed to the sink at first
 * use. The join keeps only names StringIds has, as before; sorting carries
 * the ids alone. */
prof_err nsys_read_thread_names(nsys_db *d)
{
    size_t cap = 0;
    if (!nsys_has_table(d, T_THREAD_NAMES) || !nsys_has_table(d, T_STRINGS) ||
        !nsys_has_col(d, T_THREAD_NAMES, "nameId") || !nsys_has_col(d, T_THREAD_NAMES, "globalTid"))
        return PROF_OK;
    return nsys_each_row(d, "ThreadNames",
                         "SELECT t.globalTid, s.id FROM ThreadNames AS t JOIN StringIds AS s "
                         "ON s.id = t.nameId WHERE t.globalTid IS NOT NULL "
                         "ORDER BY t.globalTid, t.rowid",
                         NULL, add_thread_name, &cap);
}

/* ---- CUDA activity ----------------------------------------------------------------- */

static prof_err cuda(nsys_db *d, const rt_cu_rec *r)
{
    prof_err e = sink_cuda(d->s, r);
    return e ? nsys_sink_failed(d, e) : PROF_OK;
}

static prof_err send_context(nsys_db *d, sqlite3_stmt *st, void *arg)
{
    (void)arg;
    rt_cu_rec r = { .kind = RT_CU_CONTEXT, .context = nsys_col_u32(st, 0),
                    .device = nsys_col_u32(st, 1) };
    return cuda(d, &r);
}

/* Each context and its device, before any activity: a synchronization
 * record names its context only. */
prof_err nsys_send_contexts(nsys_db *d)
{
    static const int tables[] = { T_KERNEL, T_MEMCPY, T_MEMSET, T_SYNC };
    sqlbuf sql = { .n = 0 };
    int parts = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int t = tables[i];
        if (!nsys_has_table(d, t) || !nsys_has_col(d, t, "contextId") ||
            !nsys_has_col(d, t, "deviceId"))
            continue;
        nsys_sql_add(&sql, "%sSELECT contextId, deviceId FROM %s", parts++ ? " UNION " : "",
                     table_names[t]);
    }
    if (!parts)
        return PROF_OK;
    return nsys_each_row(d, "contexts", sql.s, NULL, send_context, NULL);
}

/* The columns every GPU activity statement starts with. */
void nsys_sql_gpu_head(nsys_db *d, sqlbuf *b, int t)
{
    nsys_sql_add(b, "SELECT x.start");
    nsys_sql_col(d, b, t, "end");
    nsys_sql_col(d, b, t, "deviceId");
    nsys_sql_col(d, b, t, "contextId");
    nsys_sql_col(d, b, t, "streamId");
    nsys_sql_col(d, b, t, "correlationId");
    nsys_sql_col(d, b, t, "globalPid");
}

static rt_cu_rec gpu_rec(rt_cu_kind kind, sqlite3_stmt *st)
{
    return (rt_cu_rec){ .kind = kind, .start = nsys_col_u64(st, 0), .end = nsys_col_u64(st, 1),
                        .device = nsys_col_u32(st, 2), .context = nsys_col_u32(st, 3),
                        .stream = nsys_col_u32(st, 4), .correlation = nsys_col_u32(st, 5) };
}

prof_err nsys_emit_kernel(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_KERNEL, st);
    size_t len;
    prof_err e = note_process(d, (uint64_t)nsys_col_i64(st, 6));
    if (!e)
        e = row_name(d, st, -1, 7, 3, &r.name, &len);
    return e ? e : cuda(d, &r);
}

prof_err nsys_emit_memcpy(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_MEMCPY, st);
    r.bytes = nsys_col_u64(st, 7);
    r.copy_kind = nsys_col_u32(st, 8);
    prof_err e = note_process(d, (uint64_t)nsys_col_i64(st, 6));
    return e ? e : cuda(d, &r);
}

prof_err nsys_emit_memset(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_MEMSET, st);
    r.bytes = nsys_col_u64(st, 7);
    prof_err e = note_process(d, (uint64_t)nsys_col_i64(st, 6));
    return e ? e : cuda(d, &r);
}

prof_err nsys_emit_sync(nsys_db *d, sqlite3_stmt *st)
{
    rt_cu_rec r = gpu_rec(RT_CU_SYNC, st);
    r.sync_type = nsys_col_u32(st, 7);
    prof_err e = note_process(d, (uint64_t)nsys_col_i64(st, 6));
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
    uint32_t type = nsys_has_table(d, T_SYNC) ? 0 : sync_call_type(call->name);
    if (!type || !call->correlation)
        return PROF_OK;
    rt_cu_rec r = { .kind = RT_CU_SYNC, .start = call->start, .end = call->end,
                    .correlation = call->correlation, .sync_type = type };
    d->syncs_from_calls++;
    return cuda(d, &r);
}

prof_err nsys_emit_runtime(nsys_db *d, sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, 4) != SQLITE_NULL && nsys_col_i64(st, 4) == d->backtrace) {
        sink_note_skipped(d->s, "cuda_backtrace"); /* a repeat of a call, with its stack */
        return PROF_OK;
    }
    uint64_t key = (uint64_t)nsys_col_i64(st, 2);
    rt_cu_rec r = { .kind = RT_CU_API, .start = nsys_col_u64(st, 0), .end = nsys_col_u64(st, 1),
                    .tid = key, .correlation = nsys_col_u32(st, 3) };
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
    int64_t id = nsys_col_i64(st, 4);
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
        return nsys_nomem(d);
    d->comm[d->ncomm++] = (comm_domain){ global_pid(key), nsys_col_i64(st, 4) };
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
    int64_t start = nsys_col_i64(st, 0), end = nsys_col_i64(st, 1);
    prof_err e = thread_seen(d, key);
    if (!e)
        e = row_name(d, st, 5, 6, 1, &text, &len);
    if (!text)
        len = strlen(NSYS_UNNAMED);
    uint32_t kind = is_comm_domain(d, key, st) ? PROF_KIND_COMM : SINK_KIND_INFER;
    if (!e && (e = sink_region(d->s, key, text ? text : NSYS_UNNAMED, len, kind, start,
                               end > start ? end - start : 0)) != PROF_OK)
        return nsys_sink_failed(d, e);
    return e;
}

prof_err nsys_emit_nvtx(nsys_db *d, sqlite3_stmt *st)
{
    int64_t type = nsys_col_i64(st, 2);
    uint64_t key = (uint64_t)nsys_col_i64(st, 3);
    switch (type) {
    case NVTX_PUSH_POP:
    case NVTX_START_END: return nvtx_range(d, st, key);
    case NVTX_MARK: {
        const char *text = NULL;
        size_t len;
        prof_err e = thread_seen(d, key);
        if (!e)
            e = row_name(d, st, 5, 6, 1, &text, &len);
        if (!e && (e = sink_mark(d->s, key, text ? text : NSYS_UNNAMED, nsys_col_i64(st, 0))))
            return nsys_sink_failed(d, e);
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
