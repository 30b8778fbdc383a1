/* reader_decode.c - records to events (format §6): the decoder generated
 * from the record table of records.h, the string table that names resolve
 * through, and the checks of §9 on what definitions may keep. Runs on the
 * caller's side, one block at a time (and on the producing thread for a
 * batch or slim function, with a decoder of its own; pf_decode_slim
 * decodes regions straight into slim entries); it keeps names (and thread
 * names) in an arena until the reader is closed, as the API promises. */
#include <stdlib.h>
#include <string.h>

#include "format/reader_int.h"
#include "format/varint.h"
#include "util/error.h"
#include "util/vec.h"

/* size bytes that live until the reader is closed, or NULL. */
static char *arena_alloc(decoder *d, size_t size)
{
    arena_chunk *c = d->arena;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = d->arena;
        c->used = 0;
        c->cap = cap;
        d->arena = c;
    }
    char *out = c->data + c->used;
    c->used += size;
    return out;
}

static const char *arena_strdup(decoder *d, const uint8_t *s, size_t len)
{
    char *out = arena_alloc(d, len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

/* Counts len bytes of definition text against the file's budget (format
 * §9), which bounds what the string table and thread names can hold
 * however well the file compresses. */
static prof_err text_take(decoder *d, uint64_t len, const char *what, uint64_t which)
{
    if (len > PF_TEXT_MAX - d->text)
        return prof_error_set(&d->err, PROF_ERR_LIMIT,
                              "%s %llu takes the file's definitions past the %u-byte limit",
                              what, (unsigned long long)which, PF_TEXT_MAX);
    d->text += len;
    return PROF_OK;
}

/* An id is defined once (format §6.3): names handed out stay valid until
 * closing, so a second text could only pile up beside the first. The same
 * text again changes nothing and costs nothing. */
static prof_err define_string(decoder *d, uint64_t id, const uint8_t *s, uint64_t len)
{
    prof_err e;
    if (id == 0 || id >= PF_STRING_IDS)
        return prof_error_set(&d->err, PROF_ERR_CORRUPT, "string id %llu out of range (1 to %u)",
                              (unsigned long long)id, PF_STRING_IDS - 1);
    if (len > PF_STRING_MAX)
        return prof_error_set(&d->err, PROF_ERR_CORRUPT,
                              "string %llu of %llu bytes, over the %u-byte limit",
                              (unsigned long long)id, (unsigned long long)len, PF_STRING_MAX);
    if (vec_grow_zero(&d->strings, &d->cap_strings, (size_t)id, sizeof *d->strings) < 0)
        return prof_error_set(&d->err, PROF_ERR_NOMEM, "out of memory for string %llu",
                              (unsigned long long)id);
    pf_string *str = &d->strings[id];
    if (str->text) {
        if (str->len == len && memcmp(str->text, s, (size_t)len) == 0)
            return PROF_OK;
        return prof_error_set(&d->err, PROF_ERR_CORRUPT,
                              "string %llu defined again with other text",
                              (unsigned long long)id);
    }
    if ((e = text_take(d, len, "string", id)) != PROF_OK)
        return e;
    if (!(str->text = arena_strdup(d, s, (size_t)len)))
        return prof_error_set(&d->err, PROF_ERR_NOMEM, "out of memory for string %llu",
                              (unsigned long long)id);
    str->len = (uint32_t)len;
    return PROF_OK;
}

/* A thread definition is checked here; the table prof_reader_thread_name
 * reads is kept by the caller's side as it hands the definitions out. A
 * thread may be renamed: every name given counts against the budget. */
static prof_err define_thread(decoder *d, uint64_t t, const uint8_t *s, uint64_t len,
                              const char **name)
{
    prof_err e;
    if (t >= PF_THREADS)
        return prof_error_set(&d->err, PROF_ERR_CORRUPT,
                              "thread index %llu out of range (below %u)",
                              (unsigned long long)t, PF_THREADS);
    if (len > PF_STRING_MAX)
        return prof_error_set(&d->err, PROF_ERR_CORRUPT,
                              "name of thread %llu of %llu bytes, over the %u-byte limit",
                              (unsigned long long)t, (unsigned long long)len, PF_STRING_MAX);
    if ((e = text_take(d, len, "name of thread", t)) != PROF_OK)
        return e;
    if (!(*name = arena_strdup(d, s, (size_t)len)))
        return prof_error_set(&d->err, PROF_ERR_NOMEM,
                              "out of memory for the name of thread %llu", (unsigned long long)t);
    return PROF_OK;
}

/* Field decoding for one record; any failure marks the record malformed. */
typedef struct cur {
    const uint8_t *p, *end;
    int bad;
} cur;

/* Inlined: several per record, on the path of every event. */
static inline __attribute__((always_inline)) uint64_t cur_u(cur *c)
{
    uint64_t v = 0;
    if (!c->bad && pf_varint_get(&c->p, c->end, &v) < 0)
        c->bad = 1;
    return v;
}

static inline __attribute__((always_inline)) uint32_t cur_u32(cur *c)
{
    uint64_t v = cur_u(c);
    if (v > UINT32_MAX)
        c->bad = 1;
    return (uint32_t)v;
}

static const uint8_t *cur_bytes(cur *c, uint64_t len)
{
    if (c->bad || len > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *s = c->p;
    c->p += len;
    return s;
}

static inline __attribute__((always_inline)) uint64_t cur_time(cur *c, uint64_t *cursor)
{
    uint64_t dt = cur_u(c);
    *cursor += (uint64_t)pf_unzigzag(dt);
    return *cursor;
}

static double cur_f64(cur *c)
{
    const uint8_t *b = cur_bytes(c, 8);
    double v = 0;
    if (b) {
        uint64_t bits = pf_load_u64(b);
        memcpy(&v, &bits, sizeof v);
    }
    return v;
}

/* A SPAN field: the fields after it are read from within its length.
 * Returns where the record ends, past fields this reader does not know. */
static const uint8_t *cur_span(cur *c)
{
    uint64_t len = cur_u(c);
    const uint8_t *body = cur_bytes(c, len), *end = c->p;
    if (body) {
        c->p = body;
        c->end = end;
    }
    return end;
}

static const char *name_of(decoder *d, uint32_t id, cur *c)
{
    if (id == 0)
        return "";
    if (id >= d->cap_strings || !d->strings[id].text) {
        c->bad = 2;
        return "";
    }
    return d->strings[id].text;
}

/* What a record of this tag is called in messages (records.h). */
static const char *record_what(uint8_t tag)
{
    switch (tag) {
#define WHAT_CASE(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS)                                 \
    case TAG ... LAST: return WHAT;
        PF_RECORDS(WHAT_CASE)
#undef WHAT_CASE
    }
    return "extension record";
}

/* Says in d->err that the record is malformed; the record's outcome. */
static int malformed(decoder *d, uint8_t tag)
{
    prof_error_set(&d->err, PROF_ERR_CORRUPT, "malformed %s (tag 0x%02x)", record_what(tag),
                   tag);
    return -1;
}

/* ---- definitions: what the reader does with their decoded fields ----------
 * Each returns the record's outcome, as decode_record. */

static int def_string(decoder *d, prof_event *ev, uint64_t id, const uint8_t *text,
                      uint64_t text_len)
{
    (void)ev; /* kept by the reader, not handed out */
    return define_string(d, id, text, text_len) == PROF_OK ? 2 : -1;
}

static int def_thread(decoder *d, prof_event *ev, uint64_t thread, uint64_t os_tid,
                      const uint8_t *name, uint64_t name_len)
{
    if (define_thread(d, thread, name, name_len, &ev->name) != PROF_OK)
        return -1;
    ev->thread = (uint32_t)thread;
    ev->value = os_tid;
    return 1;
}

/* A name attribute (format §6.5) as a PROF_EV_ATTR event whose name is
 * the described name followed, after its NUL, by the value's text (what
 * prof_event_attr_value reads): both strings, resolved, in one arena copy,
 * as the event has a single name field. */
static int def_attr(decoder *d, prof_event *ev, uint32_t key, uint32_t name, uint32_t value)
{
    cur f = { NULL, NULL, 0 };
    if (name == 0 || value == 0)
        return malformed(d, PF_TAG_ATTR);
    const char *a = name_of(d, name, &f), *v = name_of(d, value, &f);
    if (f.bad) {
        uint32_t undefined = name >= d->cap_strings || !d->strings[name].text ? name : value;
        prof_error_set(&d->err, PROF_ERR_CORRUPT, "string %lu used before its definition",
                       (unsigned long)undefined);
        return -1;
    }
    size_t na = strlen(a), nv = strlen(v);
    if (text_take(d, na + nv, "attribute of string", name) != PROF_OK)
        return -1;
    char *both = arena_alloc(d, na + nv + 2);
    if (!both) {
        prof_error_set(&d->err, PROF_ERR_NOMEM, "out of memory for the attribute of string %lu",
                       (unsigned long)name);
        return -1;
    }
    memcpy(both, a, na + 1);
    memcpy(both + na + 1, v, nv + 1);
    ev->name = both;
    ev->name_id = name;
    ev->subkind = key;
    ev->value = value;
    return 1;
}

/* ---- the decoder, generated from records.h ----------------------------------
 * Each field is read into a variable named after it; an event then hands
 * its fields out in their prof_event members, a definition passes them to
 * its def_ function. */
#define READ(KIND, PARAM, MEMBER) READ_##KIND(PARAM)
#define READ_U32(v) uint32_t v = cur_u32(&c);
#define READ_U64(v) uint64_t v = cur_u(&c);
#define READ_DT(v) uint64_t v = cur_time(&c, &at->cursor);
#define READ_DUR(v) uint64_t v = cur_u(&c);
#define READ_F64(v) double v = cur_f64(&c);
#define READ_DROPS(v) uint64_t v = cur_u(&c);
#define READ_TEXT(v)                                                                          \
    uint64_t v##_len = cur_u(&c);                                                             \
    const uint8_t *v = cur_bytes(&c, v##_len);
#define READ_CSTR(v) READ_TEXT(v)
#define READ_KIND(v) uint32_t v = (uint32_t)(tag - first_tag);
#define READ_SPAN(v) const uint8_t *v##_end = cur_span(&c);

/* After the fields: a span's record ends past what this reader knows. */
#define SKIP(KIND, PARAM, MEMBER) SKIP_##KIND(PARAM)
#define SKIP_U32(v)
#define SKIP_U64(v)
#define SKIP_DT(v)
#define SKIP_DUR(v)
#define SKIP_F64(v)
#define SKIP_DROPS(v)
#define SKIP_TEXT(v)
#define SKIP_CSTR(v)
#define SKIP_KIND(v)
#define SKIP_SPAN(v) c.p = v##_end;

/* An event's fields into its members (events have no text fields). */
#define STORE(KIND, PARAM, MEMBER) STORE_##KIND(PARAM, MEMBER)
#define STORE_U32(v, m) ev->m = v;
#define STORE_U64(v, m) ev->m = v;
#define STORE_DT(v, m) ev->m = v;
#define STORE_DUR(v, m) ev->m = v;
#define STORE_F64(v, m) ev->m = v;
#define STORE_DROPS(v, m) ev->m = v;
#define STORE_KIND(v, m) ev->m = v;
#define STORE_SPAN(v, m)

/* A definition's fields as arguments of its def_ function. */
#define ARG(KIND, PARAM, MEMBER) ARG_##KIND(PARAM)
#define ARG_U32(v) , v
#define ARG_U64(v) , v
#define ARG_DT(v) , v
#define ARG_DUR(v) , v
#define ARG_F64(v) , v
#define ARG_DROPS(v) , v
#define ARG_TEXT(v) , v, v##_len
#define ARG_CSTR(v) , v, v##_len
#define ARG_KIND(v) , v
#define ARG_SPAN(v)

/* Case ranges (a GNU C extension, in gcc and clang) give a run of tags,
 * such as a region's five, one case. */
#define CASE_EVENT(NAME, TAG, LAST, EVENT, FIELDS)                                            \
    case TAG ... LAST: {                                                                      \
        enum { first_tag = TAG };                                                             \
        ev->type = EVENT;                                                                     \
        FIELDS(READ)                                                                          \
        FIELDS(SKIP)                                                                          \
        FIELDS(STORE)                                                                         \
        break;                                                                                \
    }
#define CASE_DEF(NAME, TAG, LAST, EVENT, FIELDS)                                              \
    case TAG ... LAST: {                                                                      \
        enum { first_tag = TAG };                                                             \
        ev->type = (prof_event_type)(EVENT);                                                  \
        FIELDS(READ)                                                                          \
        FIELDS(SKIP)                                                                          \
        if (c.bad)                                                                            \
            return malformed(d, tag);                                                         \
        at->p = c.p;                                                                          \
        return def_##NAME(d, ev FIELDS(ARG));                                                 \
    }
#define CASE(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS) CASE_##ROLE(NAME, TAG, LAST, EVENT, FIELDS)

static const prof_event zero_event; /* what decode_record starts from */

/* Where decoding is in a block: the decoder's p and cursor, held in
 * registers by pf_decode_batch while it decodes a batch. Through memory,
 * each record waited on the stores of the one before. */
typedef struct decode_at {
    const uint8_t *p;
    uint64_t cursor;
} decode_at;

/* ---- regions, the fast way ---------------------------------------------------
 * Most of a profile's records are regions. While the longest region still
 * fits before the block's end, one is decoded without checking each byte
 * against that end, from the same field list (records.h): a kind of field
 * that a region does not have yet has no FAST_ macro, so adding one to it
 * stops the build here. */
#define FAST(KIND, PARAM, MEMBER) FAST_##KIND(PARAM)
#define FAST_U32(v)                                                                           \
    uint64_t v##_wide = fast_u(&p, &bad);                                                     \
    uint32_t v = (uint32_t)v##_wide;                                                          \
    high |= v##_wide >> 32;
#define FAST_KIND(v) uint32_t v = (uint32_t)(tag - PF_TAG_REGION);
#define FAST_DT(v) uint64_t v = at->cursor + (uint64_t)pf_unzigzag(fast_u(&p, &bad));
#define FAST_DUR(v) uint64_t v = fast_u(&p, &bad);

/* The most bytes a region can take: its tag and a longest varint a field. */
#define FAST_BYTES(KIND, PARAM, MEMBER) +FAST_BYTES_##KIND
#define FAST_BYTES_U32 PF_VARINT_MAX
#define FAST_BYTES_KIND 0
#define FAST_BYTES_DT PF_VARINT_MAX
#define FAST_BYTES_DUR PF_VARINT_MAX
#define REGION_BYTES_MAX (1 PF_FIELDS_REGION(FAST_BYTES))

/* The 8 bytes at p, the first the least significant. */
static inline uint64_t load_le64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
#else
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}

/* A varint that lies whole before the block's end, with 8 bytes or more
 * from its start before it (REGION_BYTES_MAX). Sets *bad for one past 64
 * bits, as pf_varint_get refuses it. Varints of one to three bytes, nearly
 * all of a profile's (names, depths, time deltas, durations under 2 ms),
 * are taken from one load of 8 bytes, with no loop. */
static inline __attribute__((always_inline)) uint64_t fast_u(const uint8_t **pp, int *bad)
{
    const uint8_t *p = *pp;
    uint64_t w = load_le64(p);
    if (!(w & 0x80)) {
        *pp = p + 1;
        return w & 0x7f;
    }
    if (!(w & 0x8000)) {
        *pp = p + 2;
        return (w & 0x7f) | (w >> 1 & 0x3f80);
    }
    if (!(w & 0x800000)) {
        *pp = p + 3;
        return (w & 0x7f) | (w >> 1 & 0x3f80) | (w >> 2 & 0x1fc000);
    }
    uint64_t v = p[0] & 0x7f;
    unsigned shift = 7;
    uint8_t byte;
    p++;
    do {
        byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while (byte >= 0x80 && shift < 63);
    if (byte >= 0x80) {
        if ((byte = *p++) > 1)
            *bad = 1;
        v |= (uint64_t)byte << 63;
    }
    *pp = p;
    return v;
}

/* The region at at->p, at least REGION_BYTES_MAX bytes before the end.
 * Returns 1 as decode_record, or 0 for anything amiss (a field out of
 * range, a name not defined), which decode_record then decodes and reports
 * the slow way. */
static inline __attribute__((always_inline)) int decode_region_fast(decoder *d, decode_at *at,
                                                                    prof_event *ev, uint8_t tag)
{
    const uint8_t *p = at->p + 1;
    int bad = 0;
    uint64_t high = 0; /* a U32 field's bits past 32 */
    PF_FIELDS_REGION(FAST)
    const char *text = "";
    if (name && !(text = name < d->cap_strings ? d->strings[name].text : NULL))
        bad = 1;
    if (bad || high)
        return 0;
    *ev = zero_event;
    ev->type = PROF_EV_REGION;
    ev->thread = d->thread;
    PF_FIELDS_REGION(STORE)
    ev->name = text;
    at->cursor = ev->start_ns + ev->dur_ns;
    at->p = p;
    return 1;
}

/* Decodes the next record, at at->p, into ev. Returns 1 for an event, 2
 * for a record the reader consumed itself, -1 for a fault, said in d->err. */
static inline __attribute__((always_inline)) int decode_record(decoder *d, decode_at *at,
                                                               prof_event *ev)
{
    uint8_t tag = *at->p;
    if ((uint8_t)(tag - PF_TAG_REGION) <= PF_TAG_REGION_LAST - PF_TAG_REGION &&
        d->end - at->p >= REGION_BYTES_MAX) {
        int rc = decode_region_fast(d, at, ev, tag);
        if (rc)
            return rc;
    }
    cur c = { at->p + 1, d->end, 0 };
    /* A copy of a zero event, not memset: gcc makes memset of the event a
     * rep stos, whose start-up cost, paid for every event, was half of
     * decoding a region; the copy is a few vector moves. */
    *ev = zero_event;
    ev->thread = d->thread;
    switch (tag) {
        PF_RECORDS(CASE)
    default:
        if (tag >= PF_TAG_EXTENSION) { /* a newer minor version's record */
            cur_bytes(&c, cur_u(&c));
            if (c.bad)
                return malformed(d, tag);
            at->p = c.p;
            return 2;
        }
        prof_error_set(&d->err, PROF_ERR_CORRUPT, "unknown record tag 0x%02x", tag);
        return -1;
    }
    at->cursor = ev->start_ns + ev->dur_ns; /* the next time is coded from this end */
    ev->name = name_of(d, ev->name_id, &c);
    if (c.bad == 2) {
        prof_error_set(&d->err, PROF_ERR_CORRUPT, "string %lu used before its definition",
                       (unsigned long)ev->name_id);
        return -1;
    }
    if (c.bad)
        return malformed(d, tag);
    at->p = c.p;
    return 1;
}

/* ---- blocks -------------------------------------------------------------------- */

void pf_decode_block(decoder *d, const block_buf *b)
{
    d->p = b->payload;
    d->end = b->payload + b->rawlen;
    d->left = b->records;
    d->thread = b->thread;
    d->cursor = 0;
}

/* The end of the block's records, at p with left of its count to go:
 * the end of its bytes too, or damage, said in fault. Returns 1. */
static int block_end(const decoder *d, const uint8_t *p, uint32_t left, prof_error *fault)
{
    if (left)
        prof_error_set(fault, PROF_ERR_CORRUPT, "payload ends %lu records short of its count",
                       (unsigned long)left);
    else if (p != d->end)
        prof_error_set(fault, PROF_ERR_CORRUPT, "%llu bytes after the last record",
                       (unsigned long long)(d->end - p));
    return 1;
}

int pf_decode_batch(decoder *d, prof_event *events, uint32_t *n, prof_error *fault)
{
    /* Where decoding is (decode_at), the batch's count and the records
     * left are locals, kept in registers and stored once a batch. */
    decode_at at = { d->p, d->cursor };
    uint32_t count = *n, left = d->left;
    int end = 0;
    for (;;) {
        int full = count == BATCH_EVENTS;
        if (left == 0 || (!full && at.p >= d->end)) {
            end = block_end(d, at.p, left, fault);
            break;
        }
        if (full)
            break;
        left--;
        int rc = decode_record(d, &at, &events[count]);
        if (rc == 1)
            count++;
        else if (rc < 0) {
            *fault = d->err;
            end = 1;
            break;
        }
    }
    d->p = at.p;
    d->cursor = at.cursor;
    *n = count;
    d->left = left;
    return end;
}

void pf_decoder_free(decoder *d)
{
    free(d->strings);
    while (d->arena) {
        arena_chunk *next = d->arena->next;
        free(d->arena);
        d->arena = next;
    }
    d->strings = NULL;
    d->cap_strings = 0;
}

/* ---- slim ---------------------------------------------------------------------------
 * A region whose name and kind the slim function tagged before is decoded
 * straight into its slim entry, the fast way, without an event or a call
 * of the function; anything else is decoded into an event as above. */

/* A region decoded up to p, its fields in range, as the slim entry out
 * when its name and kind have a tag in tc: 1, at past it; else 0. */
static inline __attribute__((always_inline)) int slim_tagged(decode_at *at,
                                                             const pf_tag_cache *tc,
                                                             const uint8_t *p, pf_slim *out,
                                                             uint32_t name, uint32_t depth,
                                                             uint32_t kind, uint64_t start,
                                                             uint64_t dur)
{
    if (name >= tc->n || tc->v[name] >> 32 != kind + 1u)
        return 0;
    *out = (pf_slim){ start, dur, (uint32_t)tc->v[name], depth << 8 | kind };
    at->cursor = start + dur;
    at->p = p;
    return 1;
}

/* The region at at->p as a slim entry, when it lies whole before the
 * block's end (as decode_region_fast), its fields are in range and its
 * name and kind have a tag in tc. Returns 1, or 0 for decode_record. */
static inline __attribute__((always_inline)) int decode_region_slim(decode_at *at,
                                                                    const pf_tag_cache *tc,
                                                                    pf_slim *out, uint8_t tag)
{
    const uint8_t *p = at->p + 1;
    int bad = 0;
    uint64_t high = 0;
    PF_FIELDS_REGION(FAST)
    if (bad || high || depth > PF_SLIM_DEPTH_MAX)
        return 0;
    return slim_tagged(at, tc, p, out, name, depth, kind, start, dur);
}

/* decode_region_slim for a region whose name and depth take one byte each,
 * nearly every region of a profile: both read from the load that brings
 * the tag, with no test of their length or range of their own. 0 for any
 * other region, which decode_region_slim then decodes. */
static inline __attribute__((always_inline)) int decode_region_short(decode_at *at,
                                                                     const pf_tag_cache *tc,
                                                                     pf_slim *out, uint8_t tag)
{
    const uint8_t *p = at->p;
    uint64_t head = load_le64(p); /* the tag, the name, the depth... */
    if (head & 0x808000)
        return 0;
    uint32_t name = (uint32_t)(head >> 8 & 0x7f), depth = (uint32_t)(head >> 16 & 0x7f);
    uint32_t kind = (uint32_t)(tag - PF_TAG_REGION);
    int bad = 0;
    p += 3;
    uint64_t start = at->cursor + (uint64_t)pf_unzigzag(fast_u(&p, &bad));
    uint64_t dur = fast_u(&p, &bad);
    /* a one-byte depth is within PF_SLIM_DEPTH_MAX */
    return !bad && slim_tagged(at, tc, p, out, name, depth, kind, start, dur);
}

int pf_decode_slim(decoder *d, const pf_tag_cache *tc, pf_slim *out, uint32_t room,
                   uint32_t *n, prof_event *events, uint32_t *nevents, prof_error *fault)
{
    decode_at at = { d->p, d->cursor };
    uint32_t count = 0, nev = 0, left = d->left;
    int end = 0;
    /* copies, which the stores into out cannot change: they stay in
     * registers through the run below (decoding the longer way changes
     * neither) */
    const pf_tag_cache tags = *tc;
    const uint8_t *const block_end_p = d->end;
    for (;;) {
        /* A run of regions with tags, the most of a profile, with the
         * checks of each record below made once for the run: room for
         * it, and records left (the end of the block is checked as
         * decode_region_fast does). */
        uint32_t run = left < room - count ? left : room - count;
        while (run && block_end_p - at.p >= REGION_BYTES_MAX &&
               (uint8_t)(*at.p - PF_TAG_REGION) <= PF_TAG_REGION_LAST - PF_TAG_REGION &&
               (decode_region_short(&at, &tags, &out[count], *at.p) ||
                decode_region_slim(&at, &tags, &out[count], *at.p))) {
            count++;
            run--;
            left--;
        }
        int full = count == room || nev == BATCH_EVENTS;
        if (left == 0 || (!full && at.p >= d->end)) {
            end = block_end(d, at.p, left, fault);
            break;
        }
        if (full)
            break;
        /* a record the run above did not take: decoded the longer way */
        left--;
        int rc = decode_record(d, &at, &events[nev]);
        if (rc == 1) {
            out[count++] = (pf_slim){ nev++, 0, PF_SLIM_WHOLE, 0 };
        } else if (rc < 0) {
            *fault = d->err;
            end = 1;
            break;
        }
    }
    d->p = at.p;
    d->cursor = at.cursor;
    d->left = left;
    *n = count;
    *nevents = nev;
    return end;
}
