/* kineto_parse.c - JSON to Kineto events: YAJL's callbacks, which fill
 * one event at a time (the fields and args prof uses; the rest is
 * skipped), and the event reader, which makes the same calls for the
 * common event without YAJL or jscan_value's general descent. */
#include <limits.h>

#include "import/kineto_int.h"

/* ---- top-level objects ------------------------------------------------------------------- */

static int device_done(kin_parser *p)
{
    kin_device *d = &p->dev;
    if (!d->has_id || d->id < 0 || d->id > (int64_t)UINT32_MAX)
        return 1;
    return kin_sink_ok(p, sink_add_device(p->s, (uint32_t)d->id, d->name[0] ? d->name : NULL,
                                          d->mem > 0 ? (uint64_t)d->mem : 0));
}

static void dist_done(kin_parser *p)
{
    int rank = p->has_rank && p->rank >= 0 && p->rank <= INT_MAX ? (int)p->rank : -1;
    int world = p->has_world && p->world > 0 && p->world <= INT_MAX ? (int)p->world : -1;
    if (rank >= 0 || world > 0)
        sink_set_rank(p->s, rank, world);
}

/* ---- YAJL callbacks ----------------------------------------------------------------------- */

/* Stops YAJL where the fast path takes over: the callback returns 0, and
 * yield tells the stream that it is no damage. */
static int hand_over(kin_parser *p)
{
    p->yield = 1;
    return 0;
}

/* An event's key (n > 0). */
static inline kin_field event_key(const char *k, size_t n)
{
    switch (n) {
    case 2:
        if (memcmp(k, "ph", 2) == 0) return F_PH;
        if (memcmp(k, "ts", 2) == 0) return F_TS;
        return F_NONE;
    case 3:
        if (memcmp(k, "cat", 3) == 0) return F_CAT;
        if (memcmp(k, "pid", 3) == 0) return F_PID;
        if (memcmp(k, "tid", 3) == 0) return F_TID;
        if (memcmp(k, "dur", 3) == 0) return F_DUR;
        return F_NONE;
    case 4:
        if (memcmp(k, "name", 4) == 0) return F_NAME;
        if (memcmp(k, "args", 4) == 0) return F_ARGS;
        return F_NONE;
    default: return F_NONE;
    }
}

/* A key of an event's args (n > 0). */
static inline kin_field args_key(const char *k, size_t n)
{
    switch (k[0]) {
    case 'd': if (kin_str_is(k, n, "device")) return A_DEVICE; break;
    case 'i': if (kin_str_is(k, n, "inDevice")) return A_IN_DEVICE; break;
    case 's': if (kin_str_is(k, n, "stream")) return A_STREAM; break;
    case 'c':
        if (kin_str_is(k, n, "correlation")) return A_CORRELATION;
        if (kin_str_is(k, n, "context")) return A_CONTEXT;
        if (kin_str_is(k, n, "cuda_sync_kind")) return A_SYNC_KIND;
        break;
    case 'b': if (kin_str_is(k, n, "bytes")) return A_BYTES; break;
    case 'n': if (kin_str_is(k, n, "name")) return A_META_NAME; break;
    case 'l': if (kin_str_is(k, n, "labels")) return A_LABELS; break;
    case 'D':
        if (kin_str_is(k, n, "Device Type")) return A_DEV_TYPE;
        if (kin_str_is(k, n, "Device Id")) return A_DEV_ID;
        break;
    case 'T':
        if (kin_str_is(k, n, "Total Allocated")) return A_TOTAL_ALLOC;
        if (kin_str_is(k, n, "Total Reserved")) return A_TOTAL_RESERVED;
        break;
    case 'B': if (kin_str_is(k, n, "Bytes")) return A_MEM_BYTES; break;
    default: break;
    }
    return F_NONE;
}

static kin_field key_field(kin_ctx c, const char *k, size_t n)
{
    switch (c) {
    case C_TOP:
        if (kin_str_is(k, n, "traceEvents")) return T_EVENTS;
        if (kin_str_is(k, n, "deviceProperties")) return T_DEVICES;
        if (kin_str_is(k, n, "distributedInfo")) return T_DIST;
        if (kin_str_is(k, n, "baseTimeNanoseconds")) return T_BASE;
        return F_NONE;
    case C_EVENT: return event_key(k, n);
    case C_ARGS: return args_key(k, n);
    case C_DEVICE:
        if (kin_str_is(k, n, "id")) return D_ID;
        if (kin_str_is(k, n, "name")) return D_NAME;
        if (kin_str_is(k, n, "totalGlobalMem")) return D_MEM;
        return F_NONE;
    case C_DIST:
        if (kin_str_is(k, n, "rank")) return R_RANK;
        if (kin_str_is(k, n, "world_size")) return R_WORLD;
        return F_NONE;
    default: return F_NONE;
    }
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
    kin_parser *p = ctx;
    if (p->muted)
        return 1;
    kin_ctx c = kin_cur(p);
    p->field = c == C_SKIP || n == 0 ? F_NONE : key_field(c, (const char *)k, n);
    return 1;
}

/* The container a value opens, from where it is. */
static kin_ctx child_ctx(const kin_parser *p, int is_map)
{
    switch (kin_cur(p)) {
    case C_TOP:
        if (!is_map && p->field == T_EVENTS) return C_EVENTS;
        if (!is_map && p->field == T_DEVICES) return C_DEVICES;
        if (is_map && p->field == T_DIST) return C_DIST;
        return C_SKIP;
    case C_EVENTS: return is_map ? C_EVENT : C_SKIP;
    case C_EVENT: return is_map && p->field == F_ARGS ? C_ARGS : C_SKIP;
    case C_DEVICES: return is_map ? C_DEVICE : C_SKIP;
    default: return C_SKIP;
    }
}

static int push(kin_parser *p, int is_map)
{
    kin_ctx c;
    if (p->depth == 0) {
        if (!is_map || p->seen_top) {
            p->not_object = !p->seen_top;
            return 0;
        }
        p->seen_top = 1;
        c = C_TOP;
    } else {
        c = child_ctx(p, is_map);
        if (kin_cur(p) == C_EVENTS && !is_map) {
            kin_sync(p);
            kin_malformed(p);
        }
    }
    if (p->depth == KIN_DEPTH_MAX) {
        p->too_deep = 1;
        return 0;
    }
    p->ctx[++p->depth] = c;
    p->field = F_NONE;
    switch (c) {
    case C_EVENTS:
        p->saw_events = 1;
        if (p->fast && p->turn == TURN_DOCUMENT)
            return hand_over(p); /* the fast path reads the events */
        break;
    case C_EVENT: kin_event_reset(&p->ev); break;
    case C_DEVICE: memset(&p->dev, 0, sizeof p->dev); break;
    case C_DIST: p->has_rank = p->has_world = 0; break;
    default: break;
    }
    return 1;
}

/* YAJL's turn as the fast path's fallback ends once the event it was
 * given is read: the fast path goes on after it. */
static int event_read(kin_parser *p)
{
    if (p->turn == TURN_EVENT && p->depth == 2 && kin_cur(p) == C_EVENTS)
        return hand_over(p);
    return 1;
}

static int pop(kin_parser *p)
{
    kin_ctx c = kin_cur(p);
    p->depth--;
    p->field = F_NONE;
    switch (c) {
    case C_EVENT: return kin_event_closed(p) && event_read(p);
    case C_DEVICE: kin_sync(p); return device_done(p);
    case C_DIST: kin_sync(p); dist_done(p); return 1;
    case C_EVENTS: p->turn = TURN_DOCUMENT; return 1; /* the array ended on YAJL's turn */
    default: return event_read(p);
    }
}

static int cb_start_map(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || push(p, 1);
}

static int cb_start_array(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || push(p, 0);
}

static int cb_end(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || pop(p);
}

/* A scalar where a value is expected: at the top (not an object), or as
 * an element of traceEvents (not an event). */
static int scalar_place(kin_parser *p)
{
    if (p->depth == 0) {
        p->not_object = !p->seen_top;
        return 0;
    }
    if (kin_cur(p) == C_EVENTS) {
        kin_sync(p);
        kin_malformed(p);
        return event_read(p);
    }
    return 1;
}

static void set_num(kin_event *e, int which, const char *t, size_t n)
{
    if (kin_num_int(t, n, &e->num[which]))
        e->has |= 1u << which;
}

static void set_id_num(kin_id *id, const char *t, size_t n)
{
    id->kind = kin_num_int(t, n, &id->v) ? 1 : 0;
}

/* The kin_event.num slot of an integer arg, or -1. */
static int arg_slot(kin_field f)
{
    switch (f) {
    case A_DEVICE: return N_DEVICE;
    case A_IN_DEVICE: return N_IN_DEVICE;
    case A_STREAM: return N_STREAM;
    case A_CONTEXT: return N_CONTEXT;
    case A_CORRELATION: return N_CORRELATION;
    case A_BYTES: return N_BYTES;
    case A_DEV_TYPE: return N_DEV_TYPE;
    case A_DEV_ID: return N_DEV_ID;
    case A_TOTAL_ALLOC: return N_TOTAL_ALLOC;
    case A_TOTAL_RESERVED: return N_TOTAL_RESERVED;
    case A_MEM_BYTES: return N_MEM_BYTES;
    default: return -1;
    }
}

static int cb_number(void *ctx, const char *t, size_t n)
{
    kin_parser *p = ctx;
    kin_event *e = &p->ev;
    int64_t v;
    int slot;
    if (p->muted)
        return 1;
    switch (p->field) {
    case F_NONE: return scalar_place(p);
    case F_TS:
        if (kin_num_us_to_ns(t, n, &e->ts)) e->has_ts = 1; else e->bad_time = 1;
        break;
    case F_DUR:
        if (kin_num_us_to_ns(t, n, &e->dur)) e->has_dur = 1; else e->bad_time = 1;
        break;
    case F_PID: set_id_num(&e->pid, t, n); break;
    case F_TID: set_id_num(&e->tid, t, n); break;
    case T_BASE:
        if (kin_num_int(t, n, &v)) {
            kin_sync(p);
            sink_set_epoch(p->s, v);
        }
        break;
    case D_ID: p->dev.has_id = kin_num_int(t, n, &p->dev.id); break;
    case D_MEM: if (!kin_num_int(t, n, &p->dev.mem)) p->dev.mem = 0; break;
    case R_RANK: p->has_rank = kin_num_int(t, n, &p->rank); break;
    case R_WORLD: p->has_world = kin_num_int(t, n, &p->world); break;
    default:
        if ((slot = arg_slot(p->field)) >= 0)
            set_num(e, slot, t, n);
        break;
    }
    p->field = F_NONE;
    return 1;
}

static void set_id_str(kin_parser *p, kin_id *id, const unsigned char *s, size_t n)
{
    id->kind = 2;
    id->len = kin_copy_str(p, id->s, sizeof id->s, s, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    kin_parser *p = ctx;
    kin_event *e = &p->ev;
    if (p->muted)
        return 1;
    switch (p->field) {
    case F_NONE: return scalar_place(p);
    case F_NAME:
        e->name_len = kin_copy_str(p, e->name, sizeof e->name, s, n);
        e->has_name = 1;
        break;
    case F_CAT:
        e->cat_len = kin_copy_str(p, e->cat, sizeof e->cat, s, n);
        e->has_cat = 1;
        break;
    case F_PH: e->ph = n > 0 ? (char)s[0] : '\0'; break;
    case F_PID: set_id_str(p, &e->pid, s, n); break;
    case F_TID: set_id_str(p, &e->tid, s, n); break;
    case A_SYNC_KIND: kin_copy_str(p, e->sync_kind, sizeof e->sync_kind, s, n); break;
    case A_META_NAME: kin_copy_str(p, e->meta_name, sizeof e->meta_name, s, n); break;
    case A_LABELS: kin_copy_str(p, e->labels, sizeof e->labels, s, n); break;
    case D_NAME: kin_copy_str(p, p->dev.name, sizeof p->dev.name, s, n); break;
    case F_TS:
    case F_DUR: e->bad_time = 1; break;
    default: break;
    }
    p->field = F_NONE;
    return 1;
}

static int cb_null(void *ctx)
{
    kin_parser *p = ctx;
    if (p->muted)
        return 1;
    if (p->field == F_NONE)
        return scalar_place(p);
    p->field = F_NONE;
    return 1;
}

static int cb_boolean(void *ctx, int v)
{
    (void)v;
    return cb_null(ctx);
}

const yajl_callbacks kin_callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* Whether the fast path skips the value about to be read: YAJL's
 * callbacks would do nothing with it. */
int kin_ignored(void *ctx)
{
    const kin_parser *p = ctx;
    kin_ctx c = kin_cur(p);
    return c == C_SKIP || (p->field == F_NONE && (c == C_EVENT || c == C_ARGS));
}

/* ---- the event reader ---------------------------------------------------------------------- */

/* Most events are objects of plain keys whose used values are numbers or
 * strings, with args an object of the same. The event reader reads those
 * with the scans of jscan.h and calls the callbacks directly, the calls
 * jscan_value would make, in the same order: the same key_field, the same
 * skip of what kin_ignored ignores, the same limits. It declines what it
 * is not sure of (an escape in a used string, a used value that is a
 * literal or a container other than args), and jscan_value reads that
 * event again. */

/* A used number of the usual forms read in one pass, with the effect
 * cb_number would have: an integer of up to 18 digits, or for ts and dur
 * one of up to 16 digits with a fraction. 0 (nothing done) for any other
 * text, which jscan_scan_number and cb_number then read: an exponent,
 * more digits, a fraction elsewhere, the text's end. */
static int number_at_once(kin_parser *p, const unsigned char *b, size_t n, size_t *pos)
{
    kin_field f = p->field;
    int time = f == F_TS || f == F_DUR, slot = arg_slot(f);
    if (!time && f != F_PID && f != F_TID && slot < 0)
        return 0;
    size_t i = *pos;
    int neg = b[i] == '-';
    i += (size_t)neg;
    size_t first = i, most = i + (time ? 16 : 18);
    uint64_t v = 0;
    unsigned d;
    if (most > n)
        most = n;
    if (i < n && b[i] == '0')
        i++; /* JSON's 0 stands alone */
    else
        for (; i < most && (d = (unsigned)b[i] - '0') < 10; i++)
            v = v * 10 + d;
    if (i == first || i >= n)
        return 0;
    uint64_t frac = 0;
    if (b[i] == '.') { /* as kin_num_us_to_ns: three places, the fourth rounds */
        if (!time)
            return 0;
        size_t from = ++i;
        unsigned place = 0;
        int round = 0;
        for (; i < n && (d = (unsigned)b[i] - '0') < 10; i++, place++) {
            if (place < 3)
                frac = frac * 10 + d;
            else if (place == 3)
                round = d >= 5;
        }
        if (i == from || i >= n)
            return 0;
        for (; place < 3; place++)
            frac *= 10;
        frac += (uint64_t)round;
    }
    if (!jscan_ends_value(b[i]))
        return 0;
    kin_event *e = &p->ev;
    if (time) {
        uint64_t ns = v * 1000 + frac; /* v < 10^16: no wrap */
        int ok = ns <= (uint64_t)INT64_MAX; /* kin_num_us_to_ns's other test implies this one */
        int64_t *to = f == F_TS ? &e->ts : &e->dur;
        if (ok)
            *to = neg ? -(int64_t)ns : (int64_t)ns;
        else
            e->bad_time = 1;
        if (ok && f == F_TS)
            e->has_ts = 1;
        else if (ok)
            e->has_dur = 1;
    } else {
        int64_t sv = neg ? (int64_t)(0 - v) : (int64_t)v; /* v < 10^18 */
        if (slot >= 0) {
            e->num[slot] = sv;
            e->has |= 1u << slot;
        } else {
            kin_id *id = f == F_PID ? &e->pid : &e->tid;
            id->kind = 1;
            id->v = sv;
        }
    }
    p->field = F_NONE;
    *pos = i;
    return 1;
}

/* A used member's value: a number or a string for the callbacks. */
static jscan_result member_scalar(kin_parser *p, const unsigned char *b, size_t n, size_t *pos)
{
    size_t i = *pos, end;
    int escaped;
    jscan_result r;
    unsigned char c = b[i];
    if (c == '"') {
        if ((r = jscan_scan_string(b, n, i, &end, &escaped)) != JSCAN_DONE)
            return r;
        if (escaped)
            return JSCAN_DECLINE;
        if (!cb_string(p, b + i + 1, end - i - 1))
            return JSCAN_STOP;
        *pos = end + 1;
        return JSCAN_DONE;
    }
    if (c != '-' && (c < '0' || c > '9'))
        return JSCAN_DECLINE;
    if (number_at_once(p, b, n, pos))
        return JSCAN_DONE;
    if ((r = jscan_scan_number(b, n, i, &end)) != JSCAN_DONE)
        return r;
    if (!cb_number(p, (const char *)b + i, end - i))
        return JSCAN_STOP;
    *pos = end;
    return JSCAN_DONE;
}

/* After a member's value: past the comma and blanks (*closed 0) or past
 * the closing brace (*closed 1). */
static jscan_result member_end(const unsigned char *b, size_t n, size_t *pos, int *closed)
{
    size_t i = jscan_blanks(b, *pos, n);
    if (i >= n)
        return JSCAN_MORE;
    unsigned char c = b[i++];
    if (c != ',' && c != '}')
        return JSCAN_DECLINE;
    *closed = c == '}';
    if (!*closed && (i = jscan_blanks_after(b, i, n)) >= n)
        return JSCAN_MORE;
    *pos = i;
    return JSCAN_DONE;
}

/* The object whose '{' is at b[*pos]: an event (c C_EVENT, depth 0 as
 * jscan counts) or its args (C_ARGS, 1). */
static jscan_result event_object(kin_parser *p, const unsigned char *b, size_t n, size_t *pos,
                                 kin_ctx c, int depth, int limit)
{
    size_t i, end;
    int escaped, closed;
    jscan_result r;
    if (depth >= limit)
        return JSCAN_DECLINE;
    if (!cb_start_map(p))
        return JSCAN_STOP;
    if ((i = jscan_blanks(b, *pos + 1, n)) >= n)
        return JSCAN_MORE;
    closed = b[i] == '}';
    i += (size_t)closed;
    while (!closed) {
        if (b[i] != '"')
            return JSCAN_DECLINE;
        if ((r = jscan_scan_string(b, n, i, &end, &escaped)) != JSCAN_DONE)
            return r;
        if (escaped)
            return JSCAN_DECLINE;
        const char *k = (const char *)b + i + 1;
        size_t kn = end - i - 1;
        p->field = kn == 0 ? F_NONE : c == C_EVENT ? event_key(k, kn) : args_key(k, kn);
        if ((i = jscan_blanks(b, end + 1, n)) >= n)
            return JSCAN_MORE;
        if (b[i] != ':')
            return JSCAN_DECLINE;
        if ((i = jscan_blanks_after(b, i + 1, n)) >= n)
            return JSCAN_MORE;
        if (p->field == F_NONE)
            r = jscan_skip(b, n, &i, depth + 1, limit);
        else if (p->field == F_ARGS && b[i] == '{')
            r = event_object(p, b, n, &i, C_ARGS, depth + 1, limit);
        else
            r = member_scalar(p, b, n, &i);
        if (r != JSCAN_DONE || (r = member_end(b, n, &i, &closed)) != JSCAN_DONE)
            return r;
    }
    if (!cb_end(p))
        return JSCAN_STOP;
    *pos = i;
    return JSCAN_DONE;
}

/* The event at b[*pos] (its '{'), read as jscan_value with the callbacks
 * would read it. */
jscan_result kin_read_event(kin_parser *p, const unsigned char *b, size_t n, size_t *pos,
                               int limit)
{
    if (!p->muted && kin_cur(p) == C_EVENTS) {
        int depth = p->depth;
        uint64_t cut = p->cut;
        size_t i = *pos;
        jscan_result r = event_object(p, b, n, &i, C_EVENT, 0, limit);
        if (r == JSCAN_DONE)
            *pos = i;
        if (r != JSCAN_DECLINE)
            return r;
        p->depth = depth; /* undone, as the callers undo a value not read */
        p->cut = cut;
        p->field = F_NONE;
    }
    return jscan_value(b, n, pos, &kin_callbacks, kin_ignored, p, limit);
}
