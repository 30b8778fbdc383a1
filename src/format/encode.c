/* encode.c - the block encoder: records to tag + varint bytes, with times
 * as zigzag deltas from the end of the previous record of the same block
 * (regions are recorded at their end, so a parent's start precedes its
 * children's and the delta goes negative). The pf_put_* functions are
 * generated from the record table of records.h. Uses no lock and, for
 * fixed blocks, no allocation, so the crash path can call it from a signal
 * handler. */
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
    /* small at first: an importer holds a block for each thread of a trace,
     * and most of 100,000 threads hold a few records (4 KiB each was 400 MB) */
    size_t cap = b->cap ? b->cap : 256;
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
    uint8_t *span;        /* a SPAN field's length byte, or NULL             */
    int timed;            /* a DT field was written: start and dur count     */
    uint64_t start, dur;
} rec;

static prof_err rec_begin(rec *r, pf_block *b, uint8_t tag, size_t extra)
{
    prof_err e = block_reserve(b, PF_RECORD_MAX + extra);
    if (e)
        return e;
    r->b = b;
    r->p = b->buf + b->len;
    r->span = NULL;
    r->timed = 0;
    r->start = r->dur = 0;
    *r->p++ = tag;
    return PROF_OK;
}

static void rec_u(rec *r, uint64_t v)
{
    r->p += pf_varint_put(r->p, v);
}

/* Times are coded against the end of the previous record: siblings in a
 * loop then cost only the gap between them, and a parent (recorded after
 * its children) costs about its own duration, never the sum of both. The
 * cursor moves in rec_end, once the duration is known. */
static void rec_dt(rec *r, uint64_t t)
{
    rec_u(r, pf_zigzag((int64_t)(t - r->b->cursor)));
    r->timed = 1;
    r->start = t;
}

static void rec_dur(rec *r, uint64_t dur)
{
    rec_u(r, dur);
    r->dur = dur;
}

static void rec_f64(rec *r, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    pf_store_u64(r->p, bits);
    r->p += 8;
}

static void rec_text(rec *r, const char *s, size_t len)
{
    rec_u(r, len);
    if (len)
        memcpy(r->p, s, len);
    r->p += len;
}

static size_t text_cut(size_t len)
{
    return len > PF_STRING_MAX ? PF_STRING_MAX : len;
}

/* A SPAN's length takes one byte while the fields after it are shorter
 * than 128 bytes (those of format 1.1 are); rec_end moves them when not. */
static void rec_span(rec *r)
{
    r->span = r->p++;
}

static void span_close(rec *r)
{
    size_t body = (size_t)(r->p - r->span - 1);
    uint8_t len[PF_VARINT_MAX];
    size_t n = pf_varint_put(len, body);
    memmove(r->span + n, r->span + 1, body);
    memcpy(r->span, len, n);
    r->p += n - 1;
}

static prof_err rec_end(rec *r, int is_event)
{
    pf_block *b = r->b;
    if (r->span)
        span_close(r);
    if (r->timed) {
        uint64_t t = r->start, dur = r->dur;
        b->cursor = t + dur;
        if (t < b->first_ns)
            b->first_ns = t;
        uint64_t end = t + dur < t ? UINT64_MAX : t + dur;
        if (end > b->last_ns)
            b->last_ns = end;
    }
    b->len = (size_t)(r->p - b->buf);
    b->count++;
    if (is_event)
        b->events++;
    return PROF_OK;
}

/* ---- the encoders, generated from records.h --------------------------------- */

/* Before the record: names cut to the limit and their bytes reserved; a
 * region's kind checked and added to its tag. */
#define PREP(KIND, PARAM, MEMBER) PREP_##KIND(PARAM)
#define PREP_U32(v)
#define PREP_U64(v)
#define PREP_DT(v)
#define PREP_DUR(v)
#define PREP_F64(v)
#define PREP_DROPS(v)
#define PREP_TEXT(v)                                                                        \
    v##_len = text_cut(v##_len);                                                            \
    extra += v##_len;
#define PREP_CSTR(v)                                                                        \
    size_t v##_len = text_cut(v ? strlen(v) : 0);                                           \
    extra += v##_len;
#define PREP_KIND(v)                                                                        \
    if (v > (uint32_t)(last_tag - first_tag))                                               \
        return PROF_ERR_INVALID;                                                            \
    tag = (uint8_t)(first_tag + v);
#define PREP_SPAN(v)

/* The field's bytes. */
#define PUT(KIND, PARAM, MEMBER) PUT_##KIND(PARAM)
#define PUT_U32(v) rec_u(&r, v);
#define PUT_U64(v) rec_u(&r, v);
#define PUT_DT(v) rec_dt(&r, v);
#define PUT_DUR(v) rec_dur(&r, v);
#define PUT_F64(v) rec_f64(&r, v);
#define PUT_DROPS(v)                                                                        \
    rec_u(&r, v);                                                                           \
    b->dropped += v;
#define PUT_TEXT(v) rec_text(&r, v, v##_len);
#define PUT_CSTR(v) rec_text(&r, v, v##_len);
#define PUT_KIND(v)
#define PUT_SPAN(v) rec_span(&r);

#define IS_EVENT_EVENT 1
#define IS_EVENT_DEF 0

#define DEFINE_PUT(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS)                              \
    prof_err pf_put_##NAME(pf_block *b FIELDS(PF_PARAM))                                   \
    {                                                                                       \
        enum { first_tag = TAG, last_tag = LAST };                                          \
        uint8_t tag = first_tag;                                                            \
        size_t extra = 0;                                                                   \
        rec r;                                                                              \
        FIELDS(PREP)                                                                        \
        prof_err e = rec_begin(&r, b, tag, extra);                                          \
        if (e)                                                                              \
            return e;                                                                       \
        FIELDS(PUT)                                                                         \
        return rec_end(&r, IS_EVENT_##ROLE);                                                \
    }
PF_RECORDS(DEFINE_PUT)
