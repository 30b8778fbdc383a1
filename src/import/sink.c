/* sink.c - activity of an imported trace written as a .prof file (sink.h).
 *
 * The reader's model takes a thread's regions in END order with their
 * depth, as the recorder writes them (calltree.c). A trace lists regions
 * by start, mostly in order, sometimes not (Kineto writes some runtime
 * calls and annotations late). Each thread therefore keeps a window of
 * pending items ordered by start in a binary heap: once the window is full
 * the earliest item leaves it and meets the thread's stack of open
 * regions: regions that ended before it began are closed (written, the
 * innermost first: end order), and it opens at the stack's depth. A
 * region that outlives its parent is cut at the parent's end. Points (API
 * calls, syncs, marks) are written when they leave the window, inside the
 * regions still open, which is before their parents end. Memory per thread
 * is the window and the stack, whatever the trace's length. Most items
 * come in order: those that sort after the last one that did wait in a
 * queue (a sorted run), the others in the heap, and the earlier of the
 * two heads leaves first. Items that tie on start, kind and end leave in
 * the order they came.
 *
 * Everything else goes straight to its block: GPU activity to the GPU
 * block (the model orders it), steps and memory samples to a thread's
 * block (the model sorts them). Blocks are written when they pass
 * SINK_BLOCK_BYTES. The metadata is written at open as blanks and
 * replaced at close, when the trace has said what it knows of the run
 * (sink_meta.c). */
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "import/sink.h"
#include "import/sink_int.h"
#include "prof.h"
#include "util/error.h"
#include "util/vec.h"

/* ---- errors ---------------------------------------------------------------------- */

/* The sink reads nothing: an I/O error here is the profile's write that
 * failed, which the command reports as an output error, not the trace's. */
prof_err sink_fail(import_sink *s, prof_err code, const char *what)
{
    if (!s->failed) {
        s->failed = code;
        s->counts.output_failed = code == PROF_ERR_IO;
        prof_error_set(&s->error, code, "%s", what);
    }
    return s->failed;
}

prof_err sink_fail_nomem(import_sink *s)
{
    return sink_fail(s, PROF_ERR_NOMEM, "out of memory");
}

/* ---- the format's limits --------------------------------------------------------------
 * A profile holds at most PF_STRING_IDS - 1 names, PF_THREADS threads and
 * PF_TEXT_MAX bytes of definition text (format §9), and prof's reader
 * refuses a file past them: an import stops at the first definition that
 * would not fit, so it never writes a profile prof cannot read, and what
 * it keeps of names stays within the same bounds. */

/* "more than LIMIT WHAT, the most a profile holds": a trace past a limit
 * is input prof cannot take, not a failure to write. */
static prof_err fail_limit(import_sink *s, unsigned limit, const char *what)
{
    if (!s->failed) {
        s->failed = PROF_ERR_LIMIT;
        prof_error_set(&s->error, PROF_ERR_LIMIT,
                       "more than %u %s, the most a profile holds (formats/prof-format.md, "
                       "section 9)",
                       limit, what);
    }
    return s->failed;
}

/* Takes len bytes of definition text (a name, a thread's name). */
static prof_err text_take(import_sink *s, size_t len)
{
    if (len > PF_TEXT_MAX - s->text)
        return fail_limit(s, PF_TEXT_MAX, "bytes of names (256 MiB)");
    s->text += len;
    return PROF_OK;
}

/* Writes the pending definitions once they are many (len: the bytes of the
 * one just made): a trace may name far more than its blocks of events
 * carry, as these are written only every SINK_BLOCK_BYTES, and a block of
 * definitions must stay within PF_BLOCK_RAW_MAX. */
static prof_err defs_out(import_sink *s, size_t len)
{
    s->defs_pending += len + PF_RECORD_MAX;
    if (s->defs_pending < SINK_DEFS_BYTES)
        return PROF_OK;
    s->defs_pending = 0;
    prof_error e = { PROF_OK, "" };
    prof_err rc = pf_writer_write_block(s->w, &s->defs_only, &e);
    return rc ? sink_fail(s, rc, e.message) : PROF_OK;
}

/* ---- time ------------------------------------------------------------------------ */

static void origin_from(import_sink *s, int64_t t)
{
    if (s->has_origin)
        return;
    s->origin = t > SINK_ORIGIN_LEAD_NS ? t - SINK_ORIGIN_LEAD_NS : 0;
    s->cu.offset = s->origin;
    s->has_origin = 1;
}

static uint64_t prof_time(import_sink *s, int64_t t)
{
    origin_from(s, t);
    if (t < s->origin) {
        s->counts.clamped++;
        return 0;
    }
    return (uint64_t)(t - s->origin);
}

/* ---- names ---------------------------------------------------------------------- */

/* A name sought in name_index: its bytes. */
typedef struct name_key {
    const import_sink *s;
    const char *p;
    size_t n;
} name_key;

static int name_is(const void *ctx, uint32_t id)
{
    const name_key *k = ctx;
    const sink_name *nm = &k->s->names[id - 1];
    return nm->len == k->n && memcmp(nm->s, k->p, k->n) == 0;
}

static uint64_t name_rehash(const void *ctx, uint32_t id)
{
    const sink_name *nm = &((const name_key *)ctx)->s->names[id - 1];
    return hash_bytes(nm->s, nm->len);
}

/* Defines the next name, copied. Its id, or 0 on failure (sticky). */
static uint32_t name_new(import_sink *s, const char *p, size_t n)
{
    if (s->nnames >= PF_STRING_IDS - 1)
        return fail_limit(s, PF_STRING_IDS - 1, "distinct names"), 0;
    if (text_take(s, n) != PROF_OK)
        return 0;
    if (vec_grow(&s->names, &s->cap_names, s->nnames, sizeof *s->names) < 0)
        return sink_fail_nomem(s), 0;
    char *copy = malloc(n + 1);
    if (!copy)
        return sink_fail_nomem(s), 0;
    memcpy(copy, p, n);
    copy[n] = '\0';
    s->names[s->nnames++] = (sink_name){ copy, n };
    uint32_t id = (uint32_t)s->nnames;
    prof_err e = pf_writer_define_string(s->w, id, copy, n);
    if (e)
        return sink_fail(s, e, "cannot define a name"), 0;
    return defs_out(s, n) == PROF_OK ? id : 0;
}

/* The id of a name, defining it on first use; 0 on failure (sticky). */
static uint32_t intern(import_sink *s, const char *p, size_t n)
{
    if (n > PF_STRING_MAX)
        n = PF_STRING_MAX;
    name_key key = { s, p, n };
    int added;
    uint32_t *id = hmap_slot_by(&s->name_index, hash_bytes(p, n), name_is, name_rehash, &key,
                                &added);
    if (!id)
        return sink_fail_nomem(s), 0;
    if (!added)
        return *id;
    uint32_t new_id = name_new(s, p, n);
    if (new_id)
        *id = new_id;
    else
        hmap_remove_by(&s->name_index, id, name_rehash, &key); /* failed: the import stops */
    return new_id;
}

static uint32_t intern_cb(void *ctx, const char *p, size_t n)
{
    return intern(ctx, p, n);
}

/* ---- threads ---------------------------------------------------------------------- */

static sink_thread *thread_new(import_sink *s, uint64_t key)
{
    if (s->nthreads >= PF_THREADS)
        return fail_limit(s, PF_THREADS, "threads"), NULL;
    sink_thread *t = calloc(1, sizeof *t);
    if (!t || vec_grow(&s->threads, &s->cap_threads, s->nthreads, sizeof *s->threads) < 0) {
        free(t);
        return sink_fail_nomem(s), NULL;
    }
    t->key = t->os_tid = key;
    t->index = (uint32_t)s->nthreads;
    t->last_start = INT64_MIN;
    pf_block_init(&t->block, PF_BLOCK_EVENTS, t->index);
    s->threads[s->nthreads++] = t;
    prof_err e = pf_writer_define_thread(s->w, t->index, key, NULL);
    if (e)
        return sink_fail(s, e, "cannot define a thread"), NULL;
    return defs_out(s, 0) == PROF_OK ? t : NULL;
}

sink_thread *sink_thread_of(import_sink *s, uint64_t key)
{
    int added;
    uint32_t *i = hmap_slot(&s->thread_index, key, &added);
    if (!i)
        return sink_fail_nomem(s), NULL;
    if (!added)
        return s->threads[*i];
    size_t n = s->nthreads;
    sink_thread *t = thread_new(s, key); /* NULL on failure (sticky) */
    if (s->nthreads == n)
        hmap_remove(&s->thread_index, i); /* not added: the key is not kept */
    else
        *i = (uint32_t)n;
    return t;
}

/* Writes b when it is big enough, or always when force. */
prof_err sink_block_out(import_sink *s, pf_block *b, int force)
{
    if (s->failed)
        return s->failed;
    if (b->count == 0 || (!force && b->len < SINK_BLOCK_BYTES))
        return PROF_OK;
    prof_error e = { PROF_OK, "" };
    prof_err rc = pf_writer_write_block(s->w, b, &e);
    return rc ? sink_fail(s, rc, e.message) : PROF_OK;
}

static prof_err put(import_sink *s, pf_block *b, const prof_event *ev)
{
    prof_err e = ev->type == PROF_EV_STEP
                     ? pf_put_step(b, ev->value, ev->flags, ev->start_ns, ev->dur_ns)
                 : ev->type == PROF_EV_MEMORY
                     ? pf_put_memory(b, ev->name_id, ev->start_ns, ev->value)
                     : rt_cu_put(b, ev);
    if (e)
        return sink_fail(s, e, e == PROF_ERR_NOMEM ? "out of memory" : "cannot encode a record");
    return sink_block_out(s, b, 0);
}

/* ---- nesting ------------------------------------------------------------------------- */

static int item_before(const heap_key *a, const heap_key *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    if (a->region != b->region) /* a region opens before a point at its start */
        return a->region > b->region;
    if (a->end != b->end)
        return a->end > b->end; /* the outer of two regions first             */
    return (int32_t)(a->seq - b->seq) < 0;
}

/* The run's k-th item. */
static heap_key *run_at(const sink_thread *t, size_t k)
{
    return &t->run[(t->run_head + k) & (t->cap_run - 1)];
}

/* Room for one more item in the run: its ring doubled, in order, when
 * full (up to the window). 0 when memory ran out. */
static int run_room(sink_thread *t)
{
    if (t->nrun < t->cap_run)
        return 1;
    size_t cap = t->cap_run ? 2 * t->cap_run : 16;
    heap_key *v = malloc(cap * sizeof *v);
    if (!v)
        return 0;
    for (size_t k = 0; k < t->nrun; k++)
        v[k] = *run_at(t, k);
    free(t->run);
    t->run = v;
    t->cap_run = cap;
    t->run_head = 0;
    return 1;
}

static void heap_up(heap_key *h, size_t i)
{
    heap_key k = h[i];
    while (i > 0 && item_before(&k, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = k;
}

static void heap_down(heap_key *h, size_t n, size_t i)
{
    heap_key k = h[i];
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= n)
            break;
        if (l + 1 < n && item_before(&h[l + 1], &h[l]))
            m = l + 1;
        if (!item_before(&h[m], &k))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = k;
}

static prof_err write_timed(import_sink *s, sink_thread *t, prof_event ev, int64_t start,
                            int64_t end)
{
    ev.thread = t->index;
    ev.start_ns = prof_time(s, start);
    uint64_t e = prof_time(s, end > start ? end : start);
    ev.dur_ns = e > ev.start_ns ? e - ev.start_ns : 0;
    return put(s, &t->block, &ev);
}

static prof_err close_region(import_sink *s, sink_thread *t)
{
    open_region *o = &t->stack[--t->depth];
    o->ev.depth = t->depth;
    return write_timed(s, t, o->ev, o->start, o->end);
}

/* The earliest pending item of t: the run's head or the heap's top. */
static heap_key earliest_out(sink_thread *t)
{
    heap_key k;
    if (t->nrun && (!t->nheap || item_before(run_at(t, 0), &t->heap[0]))) {
        k = *run_at(t, 0);
        t->run_head = (t->run_head + 1) & (t->cap_run - 1);
        t->nrun--;
        return k;
    }
    k = t->heap[0];
    t->heap[0] = t->heap[--t->nheap];
    heap_down(t->heap, t->nheap, 0);
    return k;
}

/* The earliest pending item of t leaves the window. */
static prof_err item_out(import_sink *s, sink_thread *t)
{
    heap_key k = earliest_out(t);
    item it = { k.start, k.end, t->pending[k.slot], (uint8_t)k.region };
    t->free_slots[t->nfree++] = k.slot;
    if (it.start < t->last_start)
        s->counts.reordered++;
    else
        t->last_start = it.start;
    prof_err e = PROF_OK;
    while (!e && t->depth && t->stack[t->depth - 1].end <= it.start)
        e = close_region(s, t);
    if (e || !it.region)
        return e ? e : write_timed(s, t, it.ev, it.start, it.end);
    if (t->depth && it.end > t->stack[t->depth - 1].end)
        it.end = t->stack[t->depth - 1].end; /* cut at its parent's end */
    if (t->depth == SINK_STACK_MAX) { /* deeper than kept: a sibling of the deepest, */
        open_region *deepest = &t->stack[t->depth - 1]; /* which ends where it starts: */
        if (deepest->end > it.start) /* siblings that overlapped would count twice */
            deepest->end = it.start;
        e = close_region(s, t);
    }
    if (!e && vec_grow_small(&t->stack, &t->cap_stack, t->depth, sizeof *t->stack) < 0)
        e = sink_fail_nomem(s);
    if (!e)
        t->stack[t->depth++] = (open_region){ it.start, it.end, it.ev };
    return e;
}

/* A slot for a pending item's event: one freed, else a new one (at most
 * SINK_WINDOW of them). */
static int slot_take(sink_thread *t, uint32_t *slot)
{
    if (t->nfree) {
        *slot = t->free_slots[--t->nfree];
        return 1;
    }
    if (vec_grow_small(&t->pending, &t->cap_pending, t->nslots, sizeof *t->pending) < 0 ||
        vec_grow_small(&t->free_slots, &t->cap_free, t->nslots, sizeof *t->free_slots) < 0)
        return 0;
    *slot = (uint32_t)t->nslots++;
    return 1;
}

static prof_err item_in(import_sink *s, sink_thread *t, const item *it)
{
    if (s->failed)
        return s->failed;
    origin_from(s, it->start);
    if (t->nheap + t->nrun == SINK_WINDOW) {
        prof_err e = item_out(s, t);
        if (e)
            return e;
    }
    uint32_t slot;
    if (!slot_take(t, &slot))
        return sink_fail_nomem(s);
    heap_key k = { it->start, it->end, slot, t->seq++, it->region };
    if (!t->nrun || !item_before(&k, run_at(t, t->nrun - 1))) {
        if (!run_room(t))
            return sink_fail_nomem(s);
        *run_at(t, t->nrun++) = k;
    } else {
        if (vec_grow_small(&t->heap, &t->cap_heap, t->nheap, sizeof *t->heap) < 0)
            return sink_fail_nomem(s);
        t->heap[t->nheap] = k;
        heap_up(t->heap, t->nheap++);
    }
    t->pending[slot] = it->ev;
    return PROF_OK;
}

prof_err sink_thread_drain(import_sink *s, sink_thread *t)
{
    prof_err e = PROF_OK;
    while (!e && t->nheap + t->nrun)
        e = item_out(s, t);
    while (!e && t->depth)
        e = close_region(s, t);
    return e ? e : sink_block_out(s, &t->block, 1);
}

/* ---- opening ------------------------------------------------------------------------ */

prof_err sink_open(import_sink **out, int fd, const char *source, const char *input,
                   prof_error *err)
{
    import_sink *s = calloc(1, sizeof *s);
    char *blank = malloc(SINK_META_RESERVED + 1);
    *out = NULL;
    if (!s || !blank || !(s->source = strdup(source)) || !(s->input = strdup(input)) ||
        !(s->facts = cJSON_CreateObject())) {
        free(blank);
        if (s)
            sink_abandon(s);
        close(fd);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    /* a JSON object followed by blanks: replaced by the real one at close */
    memset(blank, ' ', SINK_META_RESERVED);
    memcpy(blank, "{}", 2);
    blank[SINK_META_RESERVED] = '\0';
    /* level 1: at 3 the compression was 8% of an import's CPU, much of it
     * after the last event; the profile is 7 to 13% larger */
    prof_err e = pf_writer_open_fd(&s->w, fd, blank, SINK_ZSTD_LEVEL, err);
    free(blank);
    if (e) {
        sink_abandon(s);
        return e;
    }
    s->rank = 0;
    s->world = 1;
    s->cu.intern = intern_cb;
    s->cu.intern_ctx = s;
    pf_block_init(&s->gpu, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    pf_block_init(&s->defs_only, PF_BLOCK_EVENTS, 0);
    pf_block_init(&s->memory, PF_BLOCK_EVENTS, 0);
    *out = s;
    return PROF_OK;
}

/* ---- activity ----------------------------------------------------------------------- */

prof_err sink_thread_name(import_sink *s, uint64_t thread, const char *name)
{
    sink_thread *t = sink_thread_of(s, thread);
    if (!t)
        return s->failed;
    /* every name a thread is given counts, renames too (format §9) */
    size_t len = name ? strnlen(name, PF_STRING_MAX) : 0;
    if (text_take(s, len) != PROF_OK)
        return s->failed;
    prof_err e = pf_writer_define_thread(s->w, t->index, t->os_tid, name);
    return e ? sink_fail(s, e, "cannot name a thread") : defs_out(s, len);
}

prof_err sink_thread_tid(import_sink *s, uint64_t thread, uint64_t os_tid)
{
    sink_thread *t = sink_thread_of(s, thread);
    if (!t || t->os_tid == os_tid)
        return s->failed;
    t->os_tid = os_tid;
    prof_err e = pf_writer_define_thread(s->w, t->index, os_tid, NULL);
    return e ? sink_fail(s, e, "cannot define a thread") : defs_out(s, 0);
}

/* Where a span of trace time ends: at most INT64_MAX, however long. */
static int64_t span_end(int64_t ts, int64_t dur)
{
    if (dur <= 0)
        return ts;
    return ts > INT64_MAX - dur ? INT64_MAX : ts + dur;
}

prof_err sink_region(import_sink *s, uint64_t thread, const char *name, size_t len,
                     uint32_t kind, int64_t ts, int64_t dur)
{
    sink_thread *t = sink_thread_of(s, thread);
    if (!t)
        return s->failed;
    item it = { ts, span_end(ts, dur), { 0 }, 1 };
    it.ev.type = PROF_EV_REGION;
    it.ev.kind = kind == SINK_KIND_INFER ? sink_kind_of(name, len) : kind;
    if (!(it.ev.name_id = intern(s, name, len)))
        return s->failed;
    s->counts.regions++;
    return item_in(s, t, &it);
}

prof_err sink_step(import_sink *s, uint64_t thread, uint64_t number, int64_t ts, int64_t dur)
{
    sink_thread *t = sink_thread_of(s, thread);
    if (!t)
        return s->failed;
    prof_event ev = { 0 };
    ev.type = PROF_EV_STEP;
    ev.value = number;
    ev.flags = PROF_STEP_SAMPLED; /* a trace keeps every step's events */
    s->counts.steps++;
    return write_timed(s, t, ev, ts, span_end(ts, dur));
}

prof_err sink_memory(import_sink *s, const char *series, int64_t ts, uint64_t bytes)
{
    prof_event ev = { 0 };
    ev.type = PROF_EV_MEMORY;
    ev.value = bytes;
    ev.start_ns = prof_time(s, ts);
    if (!(ev.name_id = intern(s, series, strlen(series))))
        return s->failed;
    s->counts.memory_samples++;
    prof_err e = pf_put_memory(&s->memory, ev.name_id, ev.start_ns, ev.value);
    if (e)
        return sink_fail(s, e, "cannot encode a record");
    /* the memory block belongs to the first thread: written once there is one */
    return s->nthreads ? sink_block_out(s, &s->memory, 0) : PROF_OK;
}

prof_err sink_mark(import_sink *s, uint64_t thread, const char *name, int64_t ts)
{
    sink_thread *t = sink_thread_of(s, thread);
    if (!t)
        return s->failed;
    item it = { ts, ts, { 0 }, 0 };
    it.ev.type = PROF_EV_MARK;
    if (!(it.ev.name_id = intern(s, name, strlen(name))))
        return s->failed;
    s->counts.marks++;
    return item_in(s, t, &it);
}

static void count_event(import_sink *s, const prof_event *ev)
{
    switch (ev->type) {
    case PROF_EV_GPU_KERNEL: s->counts.kernels++; break;
    case PROF_EV_GPU_MEMCPY: s->counts.copies++; break;
    case PROF_EV_GPU_MEMSET: s->counts.memsets++; break;
    case PROF_EV_SYNC: s->counts.syncs++; break;
    case PROF_EV_API: s->counts.api_calls++; break;
    case PROF_EV_MARK: s->counts.marks++; break;
    case PROF_EV_REGION: s->counts.regions++; break;
    default: break;
    }
}

/* A sync whose API call has not come: kept by correlation until it does
 * (at most SINK_PENDING_SYNCS; a second sync of one correlation is not). */
static void sync_wait(import_sink *s, const prof_event *ev, int64_t start, int64_t end)
{
    int added = 0;
    uint32_t *i = NULL;
    if (ev->correlation && s->nsyncs < SINK_PENDING_SYNCS &&
        !(i = hmap_slot(&s->sync_index, ev->correlation, &added)))
        return (void)sink_fail_nomem(s);
    if (!added) {
        s->counts.unplaced++;
        s->counts.syncs--;
        return;
    }
    if (vec_grow(&s->syncs, &s->cap_syncs, s->nsyncs, sizeof *s->syncs) < 0) {
        hmap_remove(&s->sync_index, i);
        return (void)sink_fail_nomem(s);
    }
    *i = (uint32_t)s->nsyncs;
    s->syncs[s->nsyncs++] = (pending_sync){ ev->correlation, *ev, start, end };
}

/* An API call came: the sync waiting for it goes to its thread. The last
 * pending sync takes its place in the array. */
static prof_err sync_release(import_sink *s, uint64_t correlation, sink_thread *t)
{
    uint32_t *i = s->nsyncs && correlation ? hmap_find(&s->sync_index, correlation) : NULL;
    if (!i)
        return PROF_OK;
    pending_sync p = s->syncs[*i];
    size_t at = *i;
    hmap_remove(&s->sync_index, i);
    if (at != --s->nsyncs) {
        s->syncs[at] = s->syncs[s->nsyncs];
        *hmap_find(&s->sync_index, s->syncs[at].correlation) = (uint32_t)at;
    }
    item it = { p.start, p.end, p.ev, 0 };
    return item_in(s, t, &it);
}

prof_err sink_cuda(import_sink *s, const rt_cu_rec *r)
{
    if (s->failed)
        return s->failed;
    rt_cu_event out[RT_CU_MAX_EVENTS];
    origin_from(s, (int64_t)r->start);
    rt_cu_note(&s->cu, r);
    int n = rt_cu_translate(&s->cu, r, out);
    prof_err e = PROF_OK;
    if (s->failed)
        return s->failed;
    for (int i = 0; i < n && !e; i++) {
        prof_event *ev = &out[i].ev;
        count_event(s, ev);
        if ((int64_t)r->start < s->origin)
            s->counts.clamped++;
        if (out[i].gpu) {
            e = put(s, &s->gpu, ev);
            continue;
        }
        /* back to trace times: the thread's window orders by them */
        int64_t start = (int64_t)ev->start_ns + s->origin, end = start + (int64_t)ev->dur_ns;
        if (ev->type == PROF_EV_SYNC && !out[i].tid) {
            sync_wait(s, ev, start, end);
            continue;
        }
        sink_thread *t = sink_thread_of(s, out[i].tid);
        if (!t)
            return s->failed;
        item it = { start, end, *ev, ev->type == PROF_EV_REGION };
        e = item_in(s, t, &it);
        if (!e && ev->type == PROF_EV_API)
            e = sync_release(s, ev->correlation, t);
    }
    return e ? e : s->failed;
}

/* ---- kinds ------------------------------------------------------------------------------ */

static int has(const char *name, size_t len, const char *part)
{
    size_t n = strlen(part);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(name + i, part, n) == 0)
            return 1;
    return 0;
}

static int starts(const char *name, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(name, prefix, n) == 0;
}

uint32_t sink_kind_of(const char *name, size_t len)
{
    if (has(name, len, "DataLoader") || has(name, len, "dataloader"))
        return PROF_KIND_DATA;
    if (((starts(name, len, "cuda") || starts(name, len, "hip")) &&
         has(name, len, "Synchronize")) ||
        (len == 10 && memcmp(name, "aten::item", 10) == 0) ||
        starts(name, len, "aten::_local_scalar_dense"))
        return PROF_KIND_SYNC;
    if (starts(name, len, "nccl:") || starts(name, len, "nccl") || starts(name, len, "c10d::") ||
        starts(name, len, "gloo:") || has(name, len, "ProcessGroup") ||
        starts(name, len, "record_param_comms") || starts(name, len, "rccl") ||
        starts(name, len, "symm_mem::") || starts(name, len, "MPI_"))
        return PROF_KIND_COMM;
    return PROF_KIND_COMPUTE;
}

void sink_abandon(import_sink *s)
{
    if (s->w)
        pf_writer_abandon(s->w);
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i].s);
    free(s->names);
    hmap_free(&s->name_index);
    for (size_t i = 0; i < s->nthreads; i++) {
        free(s->threads[i]->heap);
        free(s->threads[i]->run);
        free(s->threads[i]->pending);
        free(s->threads[i]->free_slots);
        free(s->threads[i]->stack);
        pf_block_free(&s->threads[i]->block);
        free(s->threads[i]);
    }
    free(s->threads);
    hmap_free(&s->thread_index);
    pf_block_free(&s->gpu);
    pf_block_free(&s->memory);
    pf_block_free(&s->defs_only);
    for (size_t i = 0; i < s->ndevices; i++)
        free(s->devices[i].name);
    free(s->devices);
    for (size_t i = 0; i < SINK_CATEGORIES; i++) {
        free(s->unknown[i].name);
        free(s->skipped[i].name);
    }
    cJSON_Delete(s->facts);
    free(s->syncs);
    hmap_free(&s->sync_index);
    free(s->damage);
    free(s->source);
    free(s->input);
    free(s->host);
    free(s->process_name);
    free(s);
}
