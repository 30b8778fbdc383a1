/* cupti_translate.c - CUPTI activity records (copied into rt_cu_rec by
 * cupti.c) into profile events. Kernels, copies and memsets go to the GPU
 * timeline; API calls, synchronisations and NVTX ranges to the CPU thread
 * that made them. A synchronization record names no thread: its API
 * call's record (same correlation id) does, so buffers are read twice,
 * first noting every API call's thread. A synchronous copy (cudaMemcpy and
 * friends) blocks its thread for the whole call: its API record also
 * becomes a sync record of kind "memcpy". No CUPTI header is needed here. */
#include <stdlib.h>
#include <string.h>

#include "record/cupti_translate.h"
#include "record/runtime.h"

void rt_cu_calibrate(rt_cu_state *s, uint64_t cupti_before, uint64_t prof_ns,
                     uint64_t cupti_after)
{
    uint64_t mid = cupti_before + (cupti_after - cupti_before) / 2;
    s->offset = (int64_t)(mid - prof_ns);
}

uint64_t rt_cu_time(const rt_cu_state *s, uint64_t cupti_ts)
{
    int64_t t = (int64_t)(cupti_ts - (uint64_t)s->offset);
    return t > 0 ? (uint64_t)t : 0;
}

uint32_t rt_cu_copy_kind(uint32_t k)
{
    switch (k) {
    case RT_CU_COPY_HTOD:
    case RT_CU_COPY_HTOA: return PROF_COPY_HTOD;
    case RT_CU_COPY_DTOH:
    case RT_CU_COPY_ATOH: return PROF_COPY_DTOH;
    case RT_CU_COPY_DTOD:
    case RT_CU_COPY_ATOA:
    case RT_CU_COPY_ATOD:
    case RT_CU_COPY_DTOA: return PROF_COPY_DTOD;
    case RT_CU_COPY_HTOH: return PROF_COPY_HTOH;
    case RT_CU_COPY_PTOP: return PROF_COPY_PEER;
    }
    return PROF_COPY_OTHER;
}

unsigned rt_cu_cuda_major(uint32_t v)
{
    if (v >= 10000)
        return v / 10000;
    /* cupti_version.h: v12 is CUDA 10.x, v13 to v18 11.x, v19 to v28 12.x */
    return v >= 19 ? 12 : v >= 13 ? 11 : v >= 12 ? 10 : 0;
}

uint32_t rt_cu_sync_kind(uint32_t t)
{
    switch (t) {
    case RT_CU_SYNC_EVENT: return PROF_SYNC_EVENT;
    case RT_CU_SYNC_STREAM_WAIT: return PROF_SYNC_STREAM_WAIT;
    case RT_CU_SYNC_STREAM: return PROF_SYNC_STREAM;
    case RT_CU_SYNC_CONTEXT: return PROF_SYNC_DEVICE;
    }
    return PROF_SYNC_OTHER;
}

/* The length of an API name without CUPTI's "_vNNNN" version suffix. */
static size_t api_name_len(const char *name)
{
    size_t n = strlen(name);
    size_t d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d < n && d >= 2 && name[d - 1] == 'v' && name[d - 2] == '_')
        return d - 2;
    return n;
}

int rt_cu_api_blocks_copy(const char *api_name)
{
    static const char *const blocking[] = {
        "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyPeer", "cudaMemcpy3DPeer",
        "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpyToArray",
        "cudaMemcpyFromArray", "cudaMemcpy2DToArray", "cudaMemcpy2DFromArray",
        "cudaMemcpyArrayToArray", "cudaMemcpy2DArrayToArray",
    };
    size_t n = api_name_len(api_name);
    if (n > 5 && memcmp(api_name + n - 5, "_ptds", 5) == 0) /* per-thread default stream */
        n -= 5;
    /* ROCm's HIP names the same calls hip* (imported traces) */
    size_t skip = n > 3 && memcmp(api_name, "hip", 3) == 0 ? 3 : 0;
    if (skip && n > 13 && memcmp(api_name + n - 10, "WithStream", 10) == 0)
        n -= 10; /* hipMemcpyWithStream: synchronous too */
    /* each is cudaMemcpy* (hipMemcpy*): most calls are not, found at once */
    size_t at = skip ? 3 : 4;
    if (n < at + 6 || memcmp(api_name + at, "Memcpy", 6) != 0 ||
        (!skip && memcmp(api_name, "cuda", 4) != 0))
        return 0;
    for (size_t i = 0; i < sizeof blocking / sizeof blocking[0]; i++) {
        size_t k = skip ? 4 : 0; /* "cuda" against "hip" */
        if (strlen(blocking[i]) - k == n - skip &&
            memcmp(blocking[i] + k, api_name + skip, n - skip) == 0)
            return 1;
    }
    return 0;
}

static uint32_t intern_n(const rt_cu_state *st, const char *s, size_t n)
{
    if (st->intern)
        return st->intern(st->intern_ctx, s, n);
    return rt_intern(s, n, hash_fnv1a(s, n));
}

static uint32_t intern(const rt_cu_state *st, const char *s)
{
    return s ? intern_n(st, s, strlen(s)) : 0;
}

/* The id of a kernel's name, demangled when the state can (see demangle
 * in rt_cu_state). */
static uint32_t kernel_name(rt_cu_state *st, const char *given)
{
    if (!given || !st->demangle)
        return intern(st, given);
    rt_cu_kname *k = &st->knames[((uintptr_t)given >> 3) % RT_CU_KNAMES];
    uint64_t hash = hash_fnv1a(given, strlen(given));
    if (k->given == given && k->hash == hash)
        return k->id;
    int status = -1;
    char *plain = strncmp(given, "_Z", 2) == 0 ? st->demangle(given, NULL, NULL, &status) : NULL;
    uint32_t id = intern(st, status == 0 && plain ? plain : given);
    free(plain);
    if (id)
        *k = (rt_cu_kname){ given, hash, id };
    return id;
}

/* ---- what earlier records told ----------------------------------------------- */

static rt_cu_corr *corr_slot(rt_cu_state *s, uint32_t correlation)
{
    return &s->corr[correlation % RT_CU_CORR];
}

static uint64_t corr_tid(rt_cu_state *s, uint32_t correlation)
{
    rt_cu_corr *c = corr_slot(s, correlation);
    return c->correlation == correlation ? c->tid : 0;
}

static uint32_t ctx_device(const rt_cu_state *s, uint32_t context, uint32_t dflt)
{
    for (uint32_t i = 0; i < s->nctx; i++)
        if (s->ctx_id[i] == context)
            return s->ctx_device[i];
    return dflt;
}

/* A parked sync of correlation id `correlation` gets the thread tid. */
static void park_resolve(rt_cu_state *s, uint32_t correlation, uint64_t tid)
{
    if (!s->nparked || correlation < s->park_lo || correlation > s->park_hi)
        return;
    for (uint32_t i = 0; i < s->nparked; i++)
        if (s->parked[i].ev.correlation == correlation && !s->parked[i].tid)
            s->parked[i].tid = tid;
}

void rt_cu_note(rt_cu_state *s, const rt_cu_rec *r)
{
    if (r->kind == RT_CU_API && r->correlation) {
        rt_cu_corr *c = corr_slot(s, r->correlation);
        c->correlation = r->correlation;
        c->tid = r->tid;
        park_resolve(s, r->correlation, r->tid);
    } else if (r->kind == RT_CU_CONTEXT && s->nctx < RT_CU_CONTEXTS &&
               ctx_device(s, r->context, UINT32_MAX) == UINT32_MAX) {
        s->ctx_id[s->nctx] = r->context;
        s->ctx_device[s->nctx++] = r->device;
    }
}

/* ---- NVTX ranges ------------------------------------------------------------------ */

static uint32_t open_depth(const rt_cu_state *s, uint64_t tid)
{
    uint32_t d = 0;
    for (uint32_t i = 0; i < RT_CU_OPEN; i++)
        d += s->open[i].id && s->open[i].tid == tid;
    return d;
}

static void range_start(rt_cu_state *s, const rt_cu_rec *r)
{
    rt_cu_open *o = &s->open[r->id % RT_CU_OPEN];
    if (o->id) /* too many open ranges: the older one is lost */
        s->lost++;
    o->id = 0;
    o->depth = open_depth(s, r->tid);
    o->id = r->id ? r->id : 1;
    o->name = intern(s, r->name);
    o->tid = r->tid;
    o->start = r->start;
}

static int range_end(rt_cu_state *s, const rt_cu_rec *r, rt_cu_event *out)
{
    rt_cu_open *o = &s->open[r->id % RT_CU_OPEN];
    if (!o->id || o->id != (r->id ? r->id : 1)) {
        s->lost++;
        return 0;
    }
    uint64_t t0 = rt_cu_time(s, o->start), t1 = rt_cu_time(s, r->start);
    out->ev.type = PROF_EV_REGION;
    out->ev.name_id = o->name;
    out->ev.kind = PROF_KIND_COMPUTE;
    out->ev.depth = o->depth;
    out->ev.start_ns = t0;
    out->ev.dur_ns = t1 > t0 ? t1 - t0 : 0;
    out->tid = o->tid;
    o->id = 0;
    return 1;
}

static int marker(rt_cu_state *s, const rt_cu_rec *r, rt_cu_event *out)
{
    if (r->flags & RT_CU_MARKER_START) {
        range_start(s, r);
        return 0;
    }
    if (r->flags & RT_CU_MARKER_END)
        return range_end(s, r, out);
    if (r->flags & RT_CU_MARKER_INSTANT) {
        out->ev.type = PROF_EV_MARK;
        out->ev.name_id = intern(s, r->name);
        out->ev.start_ns = rt_cu_time(s, r->start);
        out->tid = r->tid;
        return 1;
    }
    return 0;
}

/* ---- the records -------------------------------------------------------------------- */

static void span(const rt_cu_state *s, const rt_cu_rec *r, prof_event *e)
{
    e->start_ns = rt_cu_time(s, r->start);
    uint64_t end = rt_cu_time(s, r->end);
    e->dur_ns = end > e->start_ns ? end - e->start_ns : 0;
}

static int api(rt_cu_state *s, const rt_cu_rec *r, rt_cu_event *out)
{
    out[0].ev.type = PROF_EV_API;
    out[0].ev.name_id = r->name ? intern_n(s, r->name, api_name_len(r->name)) : 0;
    out[0].ev.correlation = r->correlation;
    span(s, r, &out[0].ev);
    out[0].tid = r->tid;
    if (!r->name || !rt_cu_api_blocks_copy(r->name))
        return 1;
    out[1] = out[0];
    out[1].ev.type = PROF_EV_SYNC;
    out[1].ev.name_id = 0;
    out[1].ev.subkind = PROF_SYNC_MEMCPY;
    return 2;
}

int rt_cu_translate(rt_cu_state *s, const rt_cu_rec *r, rt_cu_event out[RT_CU_MAX_EVENTS])
{
    memset(out, 0, RT_CU_MAX_EVENTS * sizeof *out);
    prof_event *e = &out[0].ev;
    e->device = r->device;
    e->stream = r->stream;
    e->correlation = r->correlation;
    switch (r->kind) {
    case RT_CU_KERNEL:
        e->type = PROF_EV_GPU_KERNEL;
        e->name_id = kernel_name(s, r->name);
        break;
    case RT_CU_MEMCPY:
        e->type = PROF_EV_GPU_MEMCPY;
        e->subkind = rt_cu_copy_kind(r->copy_kind);
        e->value = r->bytes;
        break;
    case RT_CU_MEMSET:
        e->type = PROF_EV_GPU_MEMSET;
        e->value = r->bytes;
        break;
    case RT_CU_SYNC:
        e->type = PROF_EV_SYNC;
        e->subkind = rt_cu_sync_kind(r->sync_type);
        e->device = ctx_device(s, r->context, 0);
        span(s, r, e);
        out[0].tid = corr_tid(s, r->correlation);
        if (!out[0].tid && s->park && r->correlation && s->nparked < RT_CU_PARKED) {
            if (!s->nparked || r->correlation < s->park_lo)
                s->park_lo = r->correlation;
            if (!s->nparked || r->correlation > s->park_hi)
                s->park_hi = r->correlation;
            s->parked[s->nparked++] = out[0];
            return 0;
        }
        return 1;
    case RT_CU_API: return api(s, r, out);
    case RT_CU_MARKER: return marker(s, r, out);
    default: return 0;
    }
    span(s, r, e);
    out[0].gpu = 1;
    return 1;
}

uint32_t rt_cu_unpark(rt_cu_state *s, int all, rt_cu_event *out, uint32_t max)
{
    uint32_t n = 0, kept = 0;
    s->park_lo = UINT32_MAX;
    s->park_hi = 0;
    for (uint32_t i = 0; i < s->nparked; i++) {
        rt_cu_event e = s->parked[i];
        uint32_t corr = (uint32_t)e.ev.correlation; /* CUPTI's ids are 32-bit */
        if (!e.tid)
            e.tid = corr_tid(s, corr);
        if ((e.tid || all) && n < max) {
            out[n++] = e;
            continue;
        }
        s->parked[kept++] = e;
        s->park_lo = corr < s->park_lo ? corr : s->park_lo;
        s->park_hi = corr > s->park_hi ? corr : s->park_hi;
    }
    s->nparked = kept;
    return n;
}

prof_err rt_cu_put(pf_block *b, const prof_event *e)
{
    switch (e->type) {
    case PROF_EV_GPU_KERNEL:
        return pf_put_gpu_kernel(b, e->name_id, e->device, e->stream, e->correlation,
                                 e->start_ns, e->dur_ns);
    case PROF_EV_GPU_MEMCPY:
        return pf_put_gpu_memcpy(b, e->subkind, e->device, e->stream, e->correlation, e->value,
                                 e->start_ns, e->dur_ns);
    case PROF_EV_GPU_MEMSET:
        return pf_put_gpu_memset(b, e->device, e->stream, e->correlation, e->value,
                                 e->start_ns, e->dur_ns);
    case PROF_EV_SYNC:
        return pf_put_sync(b, e->subkind, e->device, e->stream, e->correlation, e->start_ns,
                           e->dur_ns);
    case PROF_EV_API:
        return pf_put_api(b, e->name_id, e->correlation, e->start_ns, e->dur_ns);
    case PROF_EV_REGION:
        return pf_put_region(b, e->name_id, e->kind, e->depth, e->start_ns, e->dur_ns);
    case PROF_EV_MARK: return pf_put_mark(b, e->name_id, e->start_ns);
    case PROF_EV_DROPPED: return pf_put_dropped(b, e->value, e->start_ns);
    default: return PROF_ERR_INVALID;
    }
}
