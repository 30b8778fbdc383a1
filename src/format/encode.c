/* encode.c - the block encoder: records to tag + varint bytes, with times
 * as zigzag deltas from the end of the previous record of the same block
 * (regions are recorded at their end, so a parent's start precedes its
 * children's and the delta goes negative). Uses no lock and, for fixed blocks, no
 * allocation, so the crash path can call it from a signal handler. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "format/varint.h"

void pf_block_init(pf_block *b, uint8_t kind, uint32_t thread)
{
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->thread = thread;
    b->first_ns = UINT64_MAX;
}

void pf_block_init_fixed(pf_block *b, uint8_t kind, uint32_t thread, void *mem, size_t cap)
{
    pf_block_init(b, kind, thread);
    b->buf = mem;
    b->cap = cap;
    b->fixed = 1;
}

void pf_block_reset(pf_block *b, uint8_t kind, uint32_t thread)
{
    uint8_t *buf = b->buf;
    size_t cap = b->cap;
    int fixed = b->fixed;
    pf_block_init(b, kind, thread);
    b->buf = buf;
    b->cap = cap;
    b->fixed = fixed;
}

void pf_block_free(pf_block *b)
{
    if (!b->fixed)
        free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

/* Makes room for `need` more bytes. */
static prof_err block_reserve(pf_block *b, size_t need)
{
    if (b->cap - b->len >= need)
        return PROF_OK;
    if (b->fixed)
        return PROF_ERR_LIMIT;
    if (need > PF_BLOCK_RAW_MAX || b->len > PF_BLOCK_RAW_MAX - need)
        return PROF_ERR_LIMIT;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < need)
        cap *= 2;
    uint8_t *buf = realloc(b->buf, cap);
    if (!buf)
        return PROF_ERR_NOMEM;
    b->buf = buf;
    b->cap = cap;
    return PROF_OK;
}

/* Record building: reserve the worst case, then write without checks. */
typedef struct rec {
    pf_block *b;
    uint8_t *p;
} rec;

static prof_err rec_begin(rec *r, pf_block *b, uint8_t tag, size_t extra)
{
    prof_err e = block_reserve(b, PF_RECORD_MAX + extra);
    if (e)
        return e;
    r->b = b;
    r->p = b->buf + b->len;
    *r->p++ = tag;
    return PROF_OK;
}

static void rec_u(rec *r, uint64_t v)
{
    r->p += pf_varint_put(r->p, v);
}

/* Times are coded against the end of the previous record: siblings in a
 * loop then cost only the gap between them, and a parent (recorded after
 * its children) costs about its own duration, never the sum of both. */
static void rec_time(rec *r, uint64_t t, uint64_t dur)
{
    pf_block *b = r->b;
    rec_u(r, pf_zigzag((int64_t)(t - b->cursor)));
    b->cursor = t + dur;
    if (t < b->first_ns)
        b->first_ns = t;
    uint64_t end = t + dur < t ? UINT64_MAX : t + dur;
    if (end > b->last_ns)
        b->last_ns = end;
}

static prof_err rec_end(rec *r, int is_event)
{
    r->b->len = (size_t)(r->p - r->b->buf);
    r->b->count++;
    if (is_event)
        r->b->events++;
    return PROF_OK;
}

prof_err pf_put_string(pf_block *b, uint32_t id, const char *s, size_t len)
{
    rec r;
    if (len > PF_STRING_MAX)
        len = PF_STRING_MAX;
    prof_err e = rec_begin(&r, b, PF_TAG_STRING, len);
    if (e)
        return e;
    rec_u(&r, id);
    rec_u(&r, len);
    memcpy(r.p, s, len);
    r.p += len;
    return rec_end(&r, 0);
}

prof_err pf_put_thread(pf_block *b, uint32_t thread, uint64_t os_tid, const char *name)
{
    rec r;
    size_t len = name ? strlen(name) : 0;
    if (len > PF_STRING_MAX)
        len = PF_STRING_MAX;
    prof_err e = rec_begin(&r, b, PF_TAG_THREAD, len);
    if (e)
        return e;
    rec_u(&r, thread);
    rec_u(&r, os_tid);
    rec_u(&r, len);
    if (len)
        memcpy(r.p, name, len);
    r.p += len;
    return rec_end(&r, 0);
}

prof_err pf_put_region(pf_block *b, uint32_t name, uint32_t kind, uint32_t depth,
                       uint64_t start, uint64_t dur)
{
    rec r;
    if (kind > PF_TAG_REGION_LAST - PF_TAG_REGION)
        return PROF_ERR_INVALID;
    prof_err e = rec_begin(&r, b, (uint8_t)(PF_TAG_REGION + kind), 0);
    if (e)
        return e;
    rec_u(&r, name);
    rec_u(&r, depth);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_step(pf_block *b, uint64_t number, uint32_t flags, uint64_t start, uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_STEP, 0);
    if (e)
        return e;
    rec_u(&r, number);
    rec_u(&r, flags);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_memory(pf_block *b, uint32_t series, uint64_t t, uint64_t bytes)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_MEMORY, 0);
    if (e)
        return e;
    rec_u(&r, series);
    rec_time(&r, t, 0);
    rec_u(&r, bytes);
    return rec_end(&r, 1);
}

prof_err pf_put_counter(pf_block *b, uint32_t name, uint64_t t, double value)
{
    rec r;
    uint64_t bits;
    prof_err e = rec_begin(&r, b, PF_TAG_COUNTER, 0);
    if (e)
        return e;
    rec_u(&r, name);
    rec_time(&r, t, 0);
    memcpy(&bits, &value, sizeof bits);
    pf_store_u64(r.p, bits);
    r.p += 8;
    return rec_end(&r, 1);
}

prof_err pf_put_mark(pf_block *b, uint32_t name, uint64_t t)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_MARK, 0);
    if (e)
        return e;
    rec_u(&r, name);
    rec_time(&r, t, 0);
    return rec_end(&r, 1);
}

prof_err pf_put_dropped(pf_block *b, uint64_t count, uint64_t t)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_DROPPED, 0);
    if (e)
        return e;
    rec_u(&r, count);
    rec_time(&r, t, 0);
    b->dropped += count;
    return rec_end(&r, 1);
}

prof_err pf_put_gpu_kernel(pf_block *b, uint32_t name, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t start, uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_GPU_KERNEL, 0);
    if (e)
        return e;
    rec_u(&r, name);
    rec_u(&r, device);
    rec_u(&r, stream);
    rec_u(&r, correlation);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_gpu_memcpy(pf_block *b, uint32_t copy_kind, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t bytes, uint64_t start, uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_GPU_MEMCPY, 0);
    if (e)
        return e;
    rec_u(&r, copy_kind);
    rec_u(&r, device);
    rec_u(&r, stream);
    rec_u(&r, correlation);
    rec_u(&r, bytes);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_gpu_memset(pf_block *b, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t bytes, uint64_t start, uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_GPU_MEMSET, 0);
    if (e)
        return e;
    rec_u(&r, device);
    rec_u(&r, stream);
    rec_u(&r, correlation);
    rec_u(&r, bytes);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_sync(pf_block *b, uint32_t sync_kind, uint32_t device, uint32_t stream,
                     uint64_t correlation, uint64_t start, uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_SYNC, 0);
    if (e)
        return e;
    rec_u(&r, sync_kind);
    rec_u(&r, device);
    rec_u(&r, stream);
    rec_u(&r, correlation);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

prof_err pf_put_api(pf_block *b, uint32_t name, uint64_t correlation, uint64_t start,
                    uint64_t dur)
{
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_API, 0);
    if (e)
        return e;
    rec_u(&r, name);
    rec_u(&r, correlation);
    rec_time(&r, start, dur);
    rec_u(&r, dur);
    return rec_end(&r, 1);
}

/* The fields go after a length that covers them (format §6.5), so that a
 * later minor version can append fields a reader skips. */
prof_err pf_put_attr(pf_block *b, uint32_t key, uint32_t name, uint32_t value)
{
    uint8_t fields[3 * 5];
    size_t n = pf_varint_put(fields, key);
    n += pf_varint_put(fields + n, name);
    n += pf_varint_put(fields + n, value);
    rec r;
    prof_err e = rec_begin(&r, b, PF_TAG_ATTR, 0);
    if (e)
        return e;
    rec_u(&r, n);
    memcpy(r.p, fields, n);
    r.p += n;
    return rec_end(&r, 0);
}
