/* launch.c - GPU work joined to the code that launched it (rules.md §3.2):
 * each kernel, copy and memset to the runtime call with its correlation
 * id, that call to the innermost region around it on its thread, and
 * from there, through the call tree, to every region above; with the
 * kernel launch statistics of Holistic Trace Analysis on the way.
 *
 * Records come in any order. A GPU record and its call meet in two rings
 * (MB_JOIN_KEPT each), indexed by correlation id: calls that launch GPU
 * work wait there for their first record (graph launches, which may have
 * many records of one id, for as long as the ring keeps them), GPU records
 * whose call has not come wait for it. What leaves the GPU ring still
 * waiting is counted as not joined.
 *
 * A joined launch is GPU time at a point of its thread's timeline (the
 * call's start). It goes to the region whose self time holds that point:
 * the innermost region around it. Regions come in end order, children
 * first, so when a region comes, the launches in it that its children did
 * not take are its own; and they are all known when it comes if the
 * regions wait for them. So a thread's regions (and its sync records, to
 * stay in order with them) are held until every launch in them has come:
 * until a runtime call of the thread that ends after the region has come
 * (calls of a thread come in end order) and no launch call of the thread
 * that began before the region ended still waits for its GPU work. The
 * region then takes its launches and goes on to the call tree, which
 * carries its GPU time as it carries its self time (calltree.c). A thread
 * holds at most MB_JOIN_HOLD regions: past it the oldest goes on with
 * what it has, and a launch that comes after a region around it went on
 * is late (counted, and taken by an enclosing region that comes later, or
 * counted outside every region). Launches wait for their region in a list
 * of at most MB_JOIN_PENDING, past which the older half merges two by two,
 * a merged pair taken only by a region around both. Profiles
 * with no CUDA activity hold nothing. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "format/meta_keys.h"
#include "model/build.h"
#include "prof.h"

#define HOLD_SYNC (PF_SLIM_WHOLE - 1) /* a held sync record's tag; its subkind in depth_kind */

/* ---- which calls launch -------------------------------------------------------- */

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* MB_LAUNCH_* of a runtime (or driver) call's name. */
static uint32_t launch_flags_of(const char *name)
{
    static const char *const work[] = {
        "cudaLaunch",  "cuLaunch",   "cudaMemcpy",        "cudaMemset", "cuMemcpy",
        "cuMemset",    "cudaGraphLaunch", "cuGraphLaunch", "hipLaunch", "hipModuleLaunch",
        "hipExtModuleLaunch", "hipExtLaunch", "hipMemcpy", "hipMemset", "hipGraphLaunch",
    };
    static const char *const hta[] = { "cudaLaunchKernel", "cudaLaunchKernelExC",
                                       "cudaMemcpyAsync", "cudaMemsetAsync" };
    static const char *const queue[] = { "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
                                         "hipExtModuleLaunchKernel", "hipMemsetAsync",
                                         "hipMemcpyAsync", "hipMemcpyWithStream" };
    uint32_t f = 0;
    for (size_t i = 0; i < sizeof work / sizeof *work; i++)
        if (has_prefix(name, work[i]))
            f |= MB_LAUNCH_WORK;
    for (size_t i = 0; i < sizeof hta / sizeof *hta; i++)
        if (strcmp(name, hta[i]) == 0)
            f |= MB_LAUNCH_HTA;
    for (size_t i = 0; i < sizeof queue / sizeof *queue; i++)
        if (strcmp(name, queue[i]) == 0)
            f |= MB_LAUNCH_QUEUE;
    if (f & MB_LAUNCH_HTA)
        f |= MB_LAUNCH_QUEUE;
    if (strstr(name, "GraphLaunch") || strstr(name, "MultiDevice"))
        f |= MB_LAUNCH_MANY;
    return f;
}

static int api_flags(model_builder *b, const prof_event *ev, uint32_t *flags)
{
    uint32_t v;
    if (mb_idmap_get(&b->api_names, ev, &v)) {
        *flags = v;
        return 0;
    }
    *flags = launch_flags_of(ev->name ? ev->name : "");
    return mb_idmap_set(&b->api_names, ev, *flags);
}

/* ---- launch statistics --------------------------------------------------------- */

static void stats_init(model_launch_stats *s, uint32_t device, uint32_t stream)
{
    memset(s, 0, sizeof *s);
    s->device = device;
    s->stream = stream;
    sketch_init(&s->cpu);
    sketch_init(&s->gpu);
    sketch_init(&s->delay);
    sketch_init(&s->queue);
}

static int stats_add(model_launch_stats *s, uint64_t cpu, uint64_t gpu, uint64_t delay)
{
    s->launches++;
    s->cpu_ns += cpu;
    s->gpu_ns += gpu;
    s->delay_ns += delay;
    s->cpu_over += cpu > MODEL_LAUNCH_CPU_CUTOFF_NS;
    s->delay_over += delay > MODEL_LAUNCH_DELAY_CUTOFF_NS;
    return sketch_add(&s->cpu, cpu) < 0 || sketch_add(&s->gpu, gpu) < 0 ||
                   sketch_add(&s->delay, delay) < 0
               ? -1 : 0;
}

static model_launch_stats *stream_stats(model_builder *b, uint32_t device, uint32_t stream)
{
    profile_model *m = b->m;
    int added;
    uint32_t *v = hmap_slot(&b->join.stream_index, (uint64_t)device << 32 | stream, &added);
    if (!v)
        return NULL;
    if (added) {
        if (m->nlaunch >= MB_JOIN_STREAMS) { /* a hostile profile's: counted in the whole */
            hmap_remove(&b->join.stream_index, v);
            return NULL;
        }
        if (vec_grow(&m->launch, &b->join.cap_launch, m->nlaunch, sizeof *m->launch) < 0 ||
            vec_grow(&b->join.queue, &b->join.cap_queue, m->nlaunch, sizeof *b->join.queue) <
                0) {
            hmap_remove(&b->join.stream_index, v);
            return NULL;
        }
        memset(&b->join.queue[m->nlaunch], 0, sizeof *b->join.queue);
        *v = (uint32_t)m->nlaunch;
        stats_init(&m->launch[m->nlaunch++], device, stream);
    }
    return &m->launch[*v];
}

void model_launch_stats_free(model_launch_stats *s)
{
    sketch_free(&s->cpu);
    sketch_free(&s->gpu);
    sketch_free(&s->delay);
    sketch_free(&s->queue);
}

/* ---- launch queues ------------------------------------------------------------------- */

/* An event of the stream's queue counted, in time order: the length
 * before it lasted from the last event to this one (HTA: each row's
 * duration is the next row's time minus its own). */
static int queue_count(model_launch_stats *s, mb_queue *q, mb_qev e)
{
    if (q->counted) {
        uint64_t dur = e.t - q->last_t;
        if (q->len >= 0 && (uint64_t)q->len == s->queue_max)
            s->queue_at_max_ns += dur;
        if (q->len >= (int64_t)MODEL_QUEUE_FULL)
            s->queue_full_ns += dur;
    }
    q->counted = 1;
    q->last_t = e.t;
    q->len += e.d;
    uint64_t v = q->len > 0 ? (uint64_t)q->len : 0;
    if (v > s->queue_max || s->queue_events == 0) {
        s->queue_max = v;
        s->queue_at_max_ns = 0;
    }
    s->queue_events++;
    s->queue_sum += (double)v;
    s->queue_sum2 += (double)v * (double)v;
    return sketch_add(&s->queue, v);
}

static int qev_before(mb_qev a, mb_qev b)
{
    return a.t < b.t || (a.t == b.t && a.d > b.d); /* a launch before a start at once */
}

static mb_qev queue_pop(mb_queue *q)
{
    mb_qev top = q->heap[0], x = q->heap[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && qev_before(q->heap[c + 1], q->heap[c]))
            c++;
        if (!qev_before(q->heap[c], x))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->n)
        q->heap[i] = x;
    return top;
}

/* Counts the earliest held event. */
static int queue_drain_one(model_launch_stats *s, mb_queue *q)
{
    mb_qev e = queue_pop(q);
    if (q->counted && e.t < q->last_t) { /* came too late to be in order */
        s->queue_reordered++;
        e.t = q->last_t;
    }
    return queue_count(s, q, e);
}

static int queue_push(model_launch_stats *s, mb_queue *q, mb_qev e)
{
    if (q->n == MB_QUEUE_HELD && queue_drain_one(s, q) < 0)
        return -1;
    if (vec_grow(&q->heap, &q->cap, q->n, sizeof *q->heap) < 0)
        return -1;
    size_t i = q->n++;
    while (i > 0 && qev_before(e, q->heap[(i - 1) / 2])) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = e;
    return 0;
}

/* ---- launches waiting for their region ----------------------------------------------- */

/* The launches waiting in [s, e) that the region's children did not
 * take (they came before it): the region's own. Those that no region
 * takes are outside every region, known only at the end: a region of
 * depth 0 may still lie inside a region of another nesting (an NVTX range
 * around a region of the recorder's). */
static void pend_take(model_builder *b, uint32_t tpos, uint64_t s, uint64_t e, mb_gself *own)
{
    mb_plist_take(&b->threads[tpos].join.pend, s, e, own);
}

/* ---- holding regions ------------------------------------------------------------------ */

static uint64_t slim_end(const pf_slim *v)
{
    uint64_t e = v->start_ns + v->dur_ns;
    return e < v->start_ns ? UINT64_MAX : e;
}

/* Whether a kept call may still get GPU work: it got none yet, or it is a
 * graph launch (any number of records) and no later launch call of its
 * thread has got its own, which the graph's records precede. */
static int call_waits(const mb_jcall *c, const mb_jthread *t)
{
    return !(c->flags & MB_LAUNCH_MET) || (c->flags & MB_LAUNCH_MANY && t->met_start <= c->start);
}

/* The start of the oldest launch call of the thread still waiting for its
 * GPU work, UINT64_MAX none; calls that got it, or left the ring, go. */
static uint64_t waiting_from(const mb_join *j, mb_jthread *t)
{
    while (t->nout) {
        const mb_jout *o = &t->out[t->out_head];
        const mb_jcall *c = &j->calls[o->seq % MB_JOIN_KEPT];
        if (c->seq == o->seq && call_waits(c, t))
            return o->start;
        t->out_head++;
        t->nout--;
    }
    t->out_head = 0;
    return UINT64_MAX;
}

/* Gives up the launch calls of the thread that began before e: a region
 * after them goes on without their work. */
static void waiting_drop(mb_jthread *t, uint64_t e)
{
    while (t->nout && t->out[t->out_head].start < e) {
        t->out_head++;
        t->nout--;
    }
}

/* Hands on the held items [0, n) from hold_head: runs of regions to the
 * call tree with their own GPU work, syncs to the sync sites. */
static int hand_on(model_builder *b, uint32_t tpos, size_t n)
{
    mb_jthread *t = &b->threads[tpos].join;
    if (vec_grow(&t->gself, &t->cap_gself, n ? n - 1 : 0, sizeof *t->gself) < 0)
        return -1;
    for (size_t i = 0; i < n;) {
        t = &b->threads[tpos].join;
        pf_slim *v = t->hold + t->hold_head + i;
        if (v->tag == HOLD_SYNC) {
            prof_event ev;
            memset(&ev, 0, sizeof ev);
            ev.type = PROF_EV_SYNC;
            ev.start_ns = v->start_ns;
            ev.dur_ns = v->dur_ns;
            ev.subkind = v->depth_kind;
            if (mb_sync_record(b, tpos, &ev) < 0)
                return -1;
            i++;
            continue;
        }
        size_t k = 0;
        for (; i + k < n && v[k].tag != HOLD_SYNC; k++) {
            uint64_t e = slim_end(&v[k]);
            pend_take(b, tpos, v[k].start_ns, e, &t->gself[k]);
            if (e > t->released_end)
                t->released_end = e;
        }
        if (mb_region_run(b, tpos, v, k, b->threads[tpos].join.gself) < 0)
            return -1;
        i += k;
    }
    t = &b->threads[tpos].join;
    t->hold_head += n;
    t->nhold -= n;
    if (!t->nhold)
        t->hold_head = 0;
    return 0;
}

/* Hands on what the thread holds whose launches are all known (all of it
 * when force), and the oldest past MB_JOIN_HOLD. */
static int release(model_builder *b, uint32_t tpos, int force)
{
    mb_jthread *t = &b->threads[tpos].join;
    uint64_t from = waiting_from(&b->join, t);
    size_t n = 0;
    for (; n < t->nhold; n++) {
        const pf_slim *v = &t->hold[t->hold_head + n];
        uint64_t e = slim_end(v);
        if (!force && t->nhold - n <= MB_JOIN_HOLD && (t->api_end < e || from < e))
            break;
        if (force || t->nhold - n > MB_JOIN_HOLD)
            waiting_drop(t, e);
    }
    return n ? hand_on(b, tpos, n) : 0;
}

static int hold_push(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n)
{
    mb_jthread *t = &b->threads[tpos].join;
    if (t->hold_head && t->hold_head >= t->nhold) { /* keep it compact */
        memmove(t->hold, t->hold + t->hold_head, t->nhold * sizeof *t->hold);
        t->hold_head = 0;
    }
    if (vec_grow(&t->hold, &t->cap_hold, t->hold_head + t->nhold + n - 1, sizeof *t->hold) < 0)
        return -1;
    memcpy(t->hold + t->hold_head + t->nhold, v, n * sizeof *v);
    t->nhold += n;
    return release(b, tpos, 0);
}

int mb_join_region(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    if (!b->join.hold)
        return mb_region(b, tpos, reg, op);
    uint32_t d = reg->depth < (1u << 24) ? reg->depth : (1u << 24) - 1;
    pf_slim v = { reg->start_ns, reg->dur_ns, op, d << 8 | (reg->kind & 0xffu) };
    return hold_push(b, tpos, &v, 1);
}

int mb_join_region_run(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n)
{
    if (!b->join.hold)
        return mb_region_run(b, tpos, v, n, NULL);
    return hold_push(b, tpos, v, n);
}

int mb_join_sync(model_builder *b, uint32_t tpos, const prof_event *ev)
{
    if (!b->join.hold || !b->threads[tpos].join.nhold)
        return mb_sync_record(b, tpos, ev);
    pf_slim v = { ev->start_ns, ev->dur_ns, HOLD_SYNC, ev->subkind };
    return hold_push(b, tpos, &v, 1);
}

int mb_join_release_all(model_builder *b)
{
    for (uint32_t i = 0; i < b->m->nthreads; i++)
        if (b->threads[i].join.nhold && release(b, i, 1) < 0)
            return -1;
    return 0;
}

/* ---- the correlation join ---------------------------------------------------------------- */

/* Holding starts with the profile's first CUDA activity, or at once when
 * its metadata says it records CUDA (the recorder's config.cuda, an
 * imported trace). */
void mb_join_start(model_builder *b, const cJSON *meta)
{
    stats_init(&b->m->launch_all, MODEL_NONE, MODEL_NONE);
    if (b->join.off)
        return;
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(meta, MK_CONFIG);
    const cJSON *cuda = cJSON_GetObjectItemCaseSensitive(cfg, MK_CUDA);
    b->join.hold = (cJSON_IsNumber(cuda) && cuda->valuedouble != 0) || cJSON_IsTrue(cuda) ||
                   cJSON_GetObjectItemCaseSensitive(meta, MK_IMPORT) != NULL;
}

/* GPU work of a call and one of its records met. */
static int joined(model_builder *b, const mb_jcall *c, uint64_t start, uint64_t dur,
                  uint32_t device, uint32_t stream, uint32_t type)
{
    profile_model *m = b->m;
    mb_jthread *t = &b->threads[c->tpos].join;
    m->gpu_join.joined++;
    m->gpu_join.joined_ns += dur;
    if (c->start < t->released_end) {
        m->gpu_join.late++;
        m->gpu_join.late_ns += dur;
    }
    if (!(c->flags & MB_LAUNCH_MANY) && c->start > t->met_start)
        t->met_start = c->start;
    if (mb_plist_add(&t->pend, c->start, dur, type == PROF_EV_GPU_KERNEL) < 0)
        return -1;
    if (!(c->flags & MB_LAUNCH_QUEUE))
        return 0;
    model_launch_stats *s = stream_stats(b, device, stream);
    if (!s && m->nlaunch < MB_JOIN_STREAMS)
        return -1; /* out of memory */
    mb_queue *q = s ? &b->join.queue[s - m->launch] : NULL;
    if (q && (queue_push(s, q, (mb_qev){ c->start, 1 }) < 0 ||
              queue_push(s, q, (mb_qev){ start, -1 }) < 0))
        return -1;
    if (c->flags & MB_LAUNCH_HTA) {
        uint64_t call_end = c->start + c->dur;
        uint64_t delay = start > call_end ? start - call_end : 0;
        if ((s && stats_add(s, c->dur, dur, delay) < 0) ||
            stats_add(&m->launch_all, c->dur, dur, delay) < 0)
            return -1;
    }
    return 0;
}

/* A ring of MB_JOIN_KEPT entries, whole at once: grown by doubling, it was
 * copied over and over in a large profile; untouched, its pages cost
 * nothing. */
static void *ring_alloc(size_t size)
{
    return calloc(MB_JOIN_KEPT, size);
}

/* A GPU record leaves the waiting ring (evicted or at the end). */
static void gpu_unwait(model_builder *b, mb_jgpu *g)
{
    if (!g->waiting)
        return;
    g->waiting = 0;
    uint32_t *v = hmap_find(&b->join.gpu_index, g->correlation);
    if (v && *v == g->seq % MB_JOIN_KEPT)
        hmap_remove(&b->join.gpu_index, v);
}

static int gpu_wait(model_builder *b, const prof_event *ev)
{
    mb_join *j = &b->join;
    uint64_t seq = j->next_gpu++;
    size_t slot = seq % MB_JOIN_KEPT;
    if (!j->gpu && !(j->gpu = ring_alloc(sizeof *j->gpu)))
        return -1;
    if (slot == j->ngpu) {
        j->ngpu++;
    } else {
        gpu_unwait(b, &j->gpu[slot]); /* it never met its call */
    }
    int added;
    uint32_t *v = hmap_slot(&j->gpu_index, ev->correlation, &added);
    if (!v)
        return -1;
    j->gpu[slot] = (mb_jgpu){ ev->correlation, ev->start_ns, ev->dur_ns, seq,
                              added ? UINT64_MAX : j->gpu[*v].seq, ev->device, ev->stream,
                              ev->type, 1 };
    *v = (uint32_t)slot;
    return 0;
}

int mb_join_gpu(model_builder *b, const prof_event *ev)
{
    profile_model *m = b->m;
    m->gpu_join.records++;
    m->gpu_join.ns += ev->dur_ns;
    if (ev->type == PROF_EV_GPU_KERNEL && ev->dur_ns < MODEL_SHORT_KERNEL_NS) {
        m->gpu_join.short_kernels++;
        m->gpu_join.short_kernel_ns += ev->dur_ns;
    }
    if (b->join.off)
        return 0;
    b->join.hold = 1;
    if (!ev->correlation)
        return 0; /* nothing names its call */
    uint32_t *v = hmap_find(&b->join.call_index, ev->correlation);
    if (!v)
        return gpu_wait(b, ev);
    mb_jcall *c = &b->join.calls[*v];
    c->flags |= MB_LAUNCH_MET; /* it got GPU work */
    if (!(c->flags & MB_LAUNCH_MANY))
        hmap_remove(&b->join.call_index, v); /* it waits no more */
    if (joined(b, c, ev->start_ns, ev->dur_ns, ev->device, ev->stream, ev->type) < 0)
        return -1;
    return release(b, c->tpos, 0);
}

/* The GPU records waiting for the call of this id, joined. */
static int gpu_meet(model_builder *b, mb_jcall *c)
{
    mb_join *j = &b->join;
    uint32_t *v = hmap_find(&j->gpu_index, c->correlation);
    if (!v)
        return 0;
    uint64_t seq = j->gpu[*v].seq;
    hmap_remove(&j->gpu_index, v);
    while (seq != UINT64_MAX) {
        mb_jgpu *g = &j->gpu[seq % MB_JOIN_KEPT];
        if (g->seq != seq || !g->waiting || g->correlation != c->correlation)
            break;
        g->waiting = 0;
        c->flags |= MB_LAUNCH_MET;
        if (joined(b, c, g->start, g->dur, g->device, g->stream, g->type) < 0)
            return -1;
        seq = g->prev;
    }
    return 0;
}

/* Keeps a call for the GPU work it will launch: returns its slot. The
 * index holds the calls waiting for it (and graph launches, which may
 * have more records to come). */
static int call_keep(model_builder *b, const mb_jcall *call, size_t *slot_out)
{
    mb_join *j = &b->join;
    uint64_t seq = j->next_call++;
    size_t slot = seq % MB_JOIN_KEPT;
    if (!j->calls && !(j->calls = ring_alloc(sizeof *j->calls)))
        return -1;
    if (slot == j->ncalls) {
        j->ncalls++;
    } else {
        uint32_t *old = hmap_find(&j->call_index, j->calls[slot].correlation);
        if (old && *old == slot)
            hmap_remove(&j->call_index, old);
    }
    int added;
    uint32_t *v = hmap_slot(&j->call_index, call->correlation, &added);
    if (!v)
        return -1;
    *v = (uint32_t)slot;
    j->calls[slot] = *call;
    j->calls[slot].seq = seq;
    *slot_out = slot;
    return 0;
}

int mb_join_api(model_builder *b, uint32_t tpos, const prof_event *ev)
{
    uint32_t flags;
    mb_jthread *t = &b->threads[tpos].join;
    uint64_t e = ev->start_ns + ev->dur_ns;
    if (b->join.off)
        return 0;
    if (e >= ev->start_ns && e > t->api_end)
        t->api_end = e;
    b->join.hold = 1;
    if (api_flags(b, ev, &flags) < 0)
        return -1;
    int records = ev->correlation && hmap_find(&b->join.gpu_index, ev->correlation);
    if (ev->correlation && (flags & MB_LAUNCH_WORK || records)) {
        mb_jcall call = { ev->correlation, ev->start_ns, ev->dur_ns, UINT64_MAX, tpos, flags };
        if (records && gpu_meet(b, &call) < 0)
            return -1;
        if (call.flags & MB_LAUNCH_MET && !(flags & MB_LAUNCH_MANY))
            return release(b, tpos, 0); /* joined: nothing more to come */
        size_t slot;
        if (call_keep(b, &call, &slot) < 0)
            return -1;
        const mb_jcall *c = &b->join.calls[slot];
        t = &b->threads[tpos].join;
        if (call_waits(c, t) && (flags & MB_LAUNCH_WORK)) {
            if (t->out_head && t->out_head + t->nout == t->cap_out) {
                memmove(t->out, t->out + t->out_head, t->nout * sizeof *t->out);
                t->out_head = 0;
            }
            if (vec_grow(&t->out, &t->cap_out, t->out_head + t->nout, sizeof *t->out) < 0)
                return -1;
            t->out[t->out_head + t->nout++] = (mb_jout){ c->seq, c->start };
        }
    }
    return release(b, tpos, 0);
}

/* ---- the end ------------------------------------------------------------------------------- */

/* Totals of the nodes below n (post-order) and of their operations: a
 * node adds to its operation's total unless a node of the same
 * operation is above it (active[op] counts those). */
static void node_totals(profile_model *m, uint32_t n, uint32_t *active)
{
    model_node *node = &m->nodes[n];
    node->gpu_ns = node->gpu_self_ns;
    node->kernels = node->kernels_self;
    uint32_t op = node->op;
    if (op != MODEL_NONE)
        active[op]++;
    for (uint32_t c = node->first_child; c != MODEL_NONE; c = m->nodes[c].next_sibling) {
        node_totals(m, c, active);
        node->gpu_ns += m->nodes[c].gpu_ns;
        node->kernels += m->nodes[c].kernels;
    }
    if (op == MODEL_NONE)
        return;
    active[op]--;
    m->ops[op].gpu_self_ns += node->gpu_self_ns;
    m->ops[op].kernels_self += node->kernels_self;
    if (!active[op]) {
        m->ops[op].gpu_ns += node->gpu_ns;
        m->ops[op].kernels += node->kernels;
    }
}

/* A launch no region took: outside every region of its thread. */
typedef struct outside {
    profile_model *m;
    model_node *root;
} outside;

static void count_outside(void *arg, const mb_jpend *p)
{
    outside *o = arg;
    o->root->gpu_self_ns += p->gpu_ns;
    o->root->kernels_self += p->kernels;
    o->m->gpu_join.outside_ns += p->gpu_ns;
}

int mb_join_finish(model_builder *b)
{
    profile_model *m = b->m;
    mb_join *j = &b->join;
    m->gpu_join.held = j->hold;
    for (uint32_t i = 0; i < m->nthreads; i++) { /* in regions that never ended, or none */
        mb_jthread *t = &b->threads[i].join;
        model_node *root = &m->nodes[m->threads[i].root];
        outside o = { m, root };
        mb_plist_each(&t->pend, count_outside, &o);
        mb_plist_free(&t->pend);
    }
    for (size_t i = 0; i < m->nlaunch; i++) /* the queues' last events */
        while (j->queue[i].n)
            if (queue_drain_one(&m->launch[i], &j->queue[i]) < 0)
                return -1;
    uint32_t *active = calloc(m->nops ? m->nops : 1, sizeof *active);
    if (!active)
        return -1;
    for (uint32_t i = 0; i < m->nthreads; i++)
        node_totals(m, m->threads[i].root, active);
    free(active);
    return 0;
}

void mb_join_free(model_builder *b)
{
    for (size_t i = 0; b->threads && i < b->m->nthreads; i++) {
        mb_jthread *t = &b->threads[i].join;
        free(t->hold);
        free(t->gself);
        mb_plist_free(&t->pend);
        free(t->out);
    }
    for (size_t i = 0; b->join.queue && i < b->m->nlaunch; i++)
        free(b->join.queue[i].heap);
    free(b->join.queue);
    free(b->join.calls);
    free(b->join.gpu);
    hmap_free(&b->join.call_index);
    hmap_free(&b->join.gpu_index);
    hmap_free(&b->join.stream_index);
    free(b->api_names.v);
}
