/* events.c - the event tables (regions, kernels, api_calls, ...): an
 * eponymous virtual table that streams its rows from the reader, rank by
 * rank, in file order, so that a statement holds one block of events and
 * not the profile.
 *
 * Pushdown: constraints on rank choose the files read; on step, start_ns
 * (time_ns) and end_ns they become the reader's time window
 * (prof_reader_set_window), so a query of one step reads that step's
 * blocks and skips the others unread. SQLite checks every constraint again
 * on the rows handed to it; the window only has to hold them all. An
 * equality on correlation (the inner side of a join of GPU work to its
 * calls) is answered from the rank's events of the table kept by id
 * (index.c), read once, not from the file once per outer row: SQLite
 * builds no index of its own on a virtual table.
 *
 * Self time: a thread's regions come in end order, children first
 * (calltree.c), so each region's self time is its duration less that of
 * the regions waiting one level below it that it adopts: those that ended
 * at or after its start (one that ended before it began is an orphan whose
 * parent was not recorded, as calltree.c tells them). A window holds every
 * child of a region that starts in it when it reaches to the end of the
 * latest event starting in it (the index's reach), which is the window a
 * query of self_ns is given. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"
#include "util/vec.h"

/* ---- self time ---- */

#define WAIT_MERGE 4096 /* waiting regions of one level before the oldest half merge */
#define SELF_DEPTH 1024u /* deeper regions count at the deepest level kept, as the call
                            tree has them (calltree.c, MB_MAX_DEPTH) */

typedef struct q_wait {
    uint64_t start, end, dur;
} q_wait;

typedef struct q_level {
    q_wait *w;
    size_t n, cap;
} q_level;

typedef struct q_selfs {
    hmap at;               /* thread -> threads[]                                */
    struct q_tlevels {
        q_level *levels;
        size_t nlevels;
    } *threads;
    size_t nthreads, cap;
} q_selfs;

static void selfs_free(q_selfs *s)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        for (size_t d = 0; d < s->threads[i].nlevels; d++)
            free(s->threads[i].levels[d].w);
        free(s->threads[i].levels);
    }
    free(s->threads);
    hmap_free(&s->at);
    memset(s, 0, sizeof *s);
}

/* Merges the older half of a long level pairwise: the waiting regions of
 * an outermost region wrapping a whole run stay bounded, at the price of
 * taking a pair whole when one of it is an orphan. */
static void level_merge(q_level *l)
{
    size_t half = l->n / 2, k = 0;
    for (size_t i = 0; i + 1 < half; i += 2) {
        q_wait a = l->w[i], b = l->w[i + 1];
        l->w[k++] = (q_wait){ a.start < b.start ? a.start : b.start, a.end > b.end ? a.end : b.end,
                              a.dur + b.dur };
    }
    memmove(l->w + k, l->w + (half & ~(size_t)1), (l->n - (half & ~(size_t)1)) * sizeof *l->w);
    l->n -= (half & ~(size_t)1) - k;
}

/* The self time of region ev; -1 out of memory. */
static int self_of(q_selfs *s, const prof_event *ev, uint64_t *self)
{
    int added;
    uint32_t *slot = hmap_slot(&s->at, ev->thread, &added);
    if (!slot)
        return -1;
    if (added) {
        if (vec_grow(&s->threads, &s->cap, s->nthreads, sizeof *s->threads) < 0) {
            hmap_remove(&s->at, slot);
            return -1;
        }
        memset(&s->threads[s->nthreads], 0, sizeof *s->threads);
        *slot = (uint32_t)s->nthreads++;
    }
    struct q_tlevels *t = &s->threads[*slot];
    size_t d = ev->depth < SELF_DEPTH ? ev->depth : SELF_DEPTH - 1;
    if (d + 2 > t->nlevels) {
        q_level *grown = realloc(t->levels, (d + 2) * sizeof *grown);
        if (!grown)
            return -1;
        memset(grown + t->nlevels, 0, (d + 2 - t->nlevels) * sizeof *grown);
        t->levels = grown;
        t->nlevels = d + 2;
    }
    uint64_t children = 0;
    for (size_t k = d + 1; k < t->nlevels; k++) { /* deeper than children: orphans */
        q_level *l = &t->levels[k];
        if (k == d + 1)
            for (size_t i = 0; i < l->n; i++)
                if (l->w[i].end >= ev->start_ns)
                    children += l->w[i].dur;
        l->n = 0;
    }
    *self = children < ev->dur_ns ? ev->dur_ns - children : 0;
    q_level *own = &t->levels[d];
    if (own->n >= WAIT_MERGE)
        level_merge(own);
    if (vec_grow(&own->w, &own->cap, own->n, sizeof *own->w) < 0)
        return -1;
    uint64_t end = ev->start_ns + ev->dur_ns < ev->start_ns ? UINT64_MAX : ev->start_ns + ev->dur_ns;
    own->w[own->n++] = (q_wait){ ev->start_ns, end, ev->dur_ns };
    return 0;
}

/* ---- the plan: constraints as idxNum and idxStr ---- */

enum { NEED_STEP = 1, NEED_SELF = 2, NEED_JOIN = 4 };

typedef struct q_bounds {
    int none;                          /* a bound no row meets (NULL, lo > hi) */
    long long rank_lo, rank_hi;
    uint64_t step_lo, step_hi;
    int has_step;
    uint64_t start_lo, start_hi, end_lo;
    int has_id;
    uint64_t id;                       /* correlation = id                       */
} q_bounds;

typedef struct q_cursor {
    sqlite3_vtab_cursor base;
    q_vtab *vt;
    int need;
    q_bounds b;
    size_t ri;                         /* the rank being read                    */
    q_rank *r;
    prof_reader *rd;
    const prof_event *evs, *ev;
    size_t n, i;
    uint64_t from, to;                 /* rows' start in [from, to], end >= end_lo */
    uint64_t self;
    q_selfs selfs;
    const q_steps *steps;              /* of the rows' step column              */
    q_steps local;                     /* the steps a window pass met           */
    const q_cached *ids;               /* rows of one correlation id, not read  */
    size_t nids, idi;                  /* from the file: ids[idi..nids)         */
    int by_id;
    prof_event idev;                   /* the row of ids[idi - 1]               */
    sqlite3_int64 rowid;
    int eof;
} q_cursor;

static char field_code(q_field f)
{
    switch (f) {
    case F_RANK: return 'r';
    case F_STEP: return 's';
    case F_START: return 't';
    case F_END: return 'e';
    case F_CORRELATION: return 'c';
    default: return 0;
    }
}

static char op_code(unsigned char op)
{
    switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return '=';
    case SQLITE_INDEX_CONSTRAINT_GT: return '>';
    case SQLITE_INDEX_CONSTRAINT_GE: return 'g';
    case SQLITE_INDEX_CONSTRAINT_LT: return '<';
    case SQLITE_INDEX_CONSTRAINT_LE: return 'l';
    default: return 0;
    }
}

static int col_used(const sqlite3_index_info *info, int col)
{
    if (col < 0)
        return 0;
    return (int)(col >= 63 ? (info->colUsed >> 63) & 1 : (info->colUsed >> col) & 1);
}

static int events_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
    q_vtab *vt = (q_vtab *)base;
    const q_table *t = vt->m->t;
    char codes[2 * 64 + 1];
    int argv = 0, narrow = 0, by_rank = 0, by_id = 0;
    for (int i = 0; i < info->nConstraint && argv < 64; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (!c->usable || c->iColumn < 0)
            continue;
        char f = field_code(t->cols[c->iColumn].field), op = op_code(c->op);
        if (!f || !op || (f == 'c' && op != '='))
            continue;
        codes[2 * argv] = f;
        codes[2 * argv + 1] = op;
        info->aConstraintUsage[i].argvIndex = ++argv;
        if (f == 'r')
            by_rank |= op == '=';
        else if (f == 'c')
            by_id = 1;
        else
            narrow++;
    }
    codes[2 * argv] = 0;
    int need = 0;
    if (col_used(info, q_column_of(t, F_STEP)) || strchr(codes, 's'))
        need |= NEED_STEP;
    if (col_used(info, q_column_of(t, F_SELF)))
        need |= NEED_SELF;
    if (col_used(info, q_column_of(t, F_OP)) || col_used(info, q_column_of(t, F_API)) ||
        col_used(info, q_column_of(t, F_LAUNCH_THREAD)))
        need |= NEED_JOIN;
    info->idxNum = need;
    if (argv) {
        info->idxStr = sqlite3_mprintf("%s", codes);
        if (!info->idxStr)
            return SQLITE_NOMEM;
        info->needToFreeIdxStr = 1;
    }
    double rows = 1e7;
    if (by_rank)
        rows /= 10;
    if (narrow)
        rows /= 1000;
    if (by_id)
        rows = by_rank ? 1 : 10;
    info->estimatedRows = (sqlite3_int64)rows;
    info->estimatedCost = rows;
    return SQLITE_OK;
}

/* ---- the cursor ---- */

static int events_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
    q_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->vt = (q_vtab *)base;
    *out = &c->base;
    return SQLITE_OK;
}

static void cursor_reset(q_cursor *c)
{
    if (c->rd)
        prof_reader_close(c->rd);
    c->rd = NULL;
    c->n = c->i = 0;
    c->ev = NULL;
    c->by_id = 0;
    c->ids = NULL;
    c->nids = c->idi = 0;
    selfs_free(&c->selfs);
}

static int events_close(sqlite3_vtab_cursor *cur)
{
    q_cursor *c = (q_cursor *)cur;
    cursor_reset(c);
    free(c->local.s);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* A value as a bound on an integer column: lo rounds down and hi up, so the
 * window holds every row SQLite will keep. 0 when the value is NULL (no row
 * compares true with it). */
static int bound_value(sqlite3_value *v, int upper, long long *out)
{
    switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_INTEGER: *out = sqlite3_value_int64(v); return 1;
    case SQLITE_FLOAT: {
        double d = sqlite3_value_double(v);
        if (d != d)
            return 0;
        d = upper ? ceil(d) : floor(d);
        *out = d >= 9.2e18 ? LLONG_MAX : d <= -9.2e18 ? LLONG_MIN : (long long)d;
        return 1;
    }
    case SQLITE_NULL: return 0;
    default: *out = upper ? LLONG_MAX : LLONG_MIN; return 1; /* text compares above numbers */
    }
}

static uint64_t to_u64(long long v)
{
    return v < 0 ? 0 : (uint64_t)v;
}

static void bounds_parse(q_bounds *b, const char *codes, int argc, sqlite3_value **argv)
{
    *b = (q_bounds){ 0, LLONG_MIN, LLONG_MAX, 0, UINT64_MAX, 0, 0, UINT64_MAX, 0, 0, 0 };
    for (int k = 0; codes && k < argc && codes[2 * k]; k++) {
        char f = codes[2 * k], op = codes[2 * k + 1];
        int lower = op == '=' || op == '>' || op == 'g', upper = op == '=' || op == '<' || op == 'l';
        long long v;
        if (!bound_value(argv[k], !lower, &v)) {
            b->none = 1;
            return;
        }
        if (op == '>' && v < LLONG_MAX)
            v++;
        if (op == '<' && v > LLONG_MIN)
            v--;
        if (op == '=' && sqlite3_value_numeric_type(argv[k]) == SQLITE_FLOAT &&
            sqlite3_value_double(argv[k]) != (double)v) {
            b->none = 1; /* an integer column equal to 2.5 */
            return;
        }
        if (f == 'r') {
            if (lower && v > b->rank_lo)
                b->rank_lo = v;
            if (upper && v < b->rank_hi)
                b->rank_hi = v;
        } else if (f == 's') {
            b->has_step = 1;
            if (upper && v < 0) {
                b->none = 1;
                return;
            }
            if (lower && to_u64(v) > b->step_lo)
                b->step_lo = to_u64(v);
            if (upper && to_u64(v) < b->step_hi)
                b->step_hi = to_u64(v);
        } else if (f == 't') {
            if (upper && v < 0) {
                b->none = 1;
                return;
            }
            if (lower && to_u64(v) > b->start_lo)
                b->start_lo = to_u64(v);
            if (upper && to_u64(v) < b->start_hi)
                b->start_hi = to_u64(v);
        } else if (f == 'e' && lower && to_u64(v) > b->end_lo) {
            b->end_lo = to_u64(v);
        } else if (f == 'c' && v > 0) { /* 0 is no id: those rows are scanned */
            if (b->has_id && b->id != (uint64_t)v) {
                b->none = 1;
                return;
            }
            b->has_id = 1;
            b->id = (uint64_t)v;
        } else if (f == 'c' && v < 0) {
            b->none = 1;
            return;
        }
    }
    if (b->rank_lo > b->rank_hi || b->step_lo > b->step_hi || b->start_lo > b->start_hi)
        b->none = 1;
}

/* Where rank r's rows are: the rows' start bounds in c->from, c->to, the
 * steps of their step column in c->steps, and the window to read in
 * *wfrom, *wto. 1, 0 when the rank has no row the bounds allow, -1 failed
 * (err). A bounded window is read once first (q_window_pass) for its steps
 * and how far its regions reach, unless the rank's index says both. */
static int rank_plan(q_cursor *c, q_rank *r, uint64_t *wfrom, uint64_t *wto, prof_error *err)
{
    query_db *q = c->vt->m->q;
    c->from = c->b.start_lo;
    c->to = c->b.start_hi;
    c->steps = &r->steps;
    if (c->b.has_step) {
        uint64_t lo, hi;
        int none;
        if (q_steps_span(q, r, c->b.step_lo, c->b.step_hi, &lo, &hi, &none, err) != PROF_OK)
            return -1;
        if (none)
            return 0;
        if (lo > c->from)
            c->from = lo;
        if (hi < c->to)
            c->to = hi;
        if (c->from > c->to)
            return 0;
    }
    *wfrom = c->from;
    *wto = c->to;
    int bounded = c->from > 0 || c->to != UINT64_MAX;
    if (bounded && (c->need & (NEED_STEP | NEED_SELF)) && !r->indexed) {
        c->local.n = 0;
        if (q_window_pass(q, r, c->from, c->to, &c->local, wto, err) != PROF_OK)
            return -1;
        c->steps = &c->local;
        if (!(c->need & NEED_SELF))
            *wto = c->to;
    } else if (bounded && (c->need & NEED_SELF)) {
        *wto = q_reach(r, c->from, c->to);
    } else if (!bounded && (c->need & NEED_STEP) && q_rank_index(q, r, err) != PROF_OK) {
        return -1;
    }
    if ((c->need & NEED_JOIN) && q_rank_join(q, r, err) != PROF_OK)
        return -1;
    if (!(c->need & NEED_SELF) && c->b.end_lo > *wfrom)
        *wfrom = c->b.end_lo;
    return 1;
}

/* The table's one event type. */
static prof_event_type table_type(const q_table *t)
{
    return (prof_event_type)__builtin_ctz(t->types);
}

/* Rank r's rows of the correlation id c->b.id, from its events kept by
 * id: 1 (rows or none), -1 failed (*rc). */
static int rank_open_by_id(q_cursor *c, q_rank *r, int *rc)
{
    query_db *q = c->vt->m->q;
    prof_error err = { PROF_OK, "" };
    prof_event_type type = table_type(c->vt->m->t);
    if (q_rank_correlated(q, r, type, &err) != PROF_OK ||
        ((c->need & NEED_STEP) && q_rank_index(q, r, &err) != PROF_OK) ||
        ((c->need & NEED_JOIN) && q_rank_join(q, r, &err) != PROF_OK)) {
        *rc = q_fail(q, &c->vt->base, &err);
        return -1;
    }
    c->steps = &r->steps;
    c->ids = q_correlated(r, type, c->b.id, &c->nids);
    c->idi = 0;
    c->by_id = 1;
    c->r = r;
    return 1;
}

/* Opens the reader of rank c->ri with its window: 1 opened, 0 the rank
 * has no row the bounds allow, -1 failed (*rc the SQLite error). */
static int rank_open(q_cursor *c, int *rc)
{
    query_db *q = c->vt->m->q;
    q_rank *r = &q->ranks[c->ri];
    if (r->rank < c->b.rank_lo || r->rank > c->b.rank_hi)
        return 0;
    prof_error err = { PROF_OK, "" };
    if (c->b.has_id)
        return rank_open_by_id(c, r, rc);
    uint64_t wfrom, wto;
    int planned = rank_plan(c, r, &wfrom, &wto, &err);
    if (planned == 1 && q_reader_open(q, r, &c->rd, &err) != PROF_OK)
        planned = -1;
    if (planned < 0) {
        *rc = q_fail(q, &c->vt->base, &err);
        return -1;
    }
    if (planned == 0)
        return 0;
    if (wfrom > 0 || wto != UINT64_MAX)
        prof_reader_set_window(c->rd, wfrom, wto);
    c->r = r;
    return 1;
}

/* Opens the next rank from c->ri on that has rows, or sets eof. SQLITE_OK
 * or the error. */
static int next_rank(q_cursor *c)
{
    for (;; c->ri++) {
        if (c->ri >= c->vt->m->q->n) {
            c->eof = 1;
            return SQLITE_OK;
        }
        int rc = SQLITE_OK, opened = rank_open(c, &rc);
        if (opened == 1)
            return SQLITE_OK;
        if (opened < 0)
            return rc;
    }
}

/* The next row, or eof. SQLITE_OK or an error. */
static int cursor_advance(q_cursor *c)
{
    query_db *q = c->vt->m->q;
    unsigned types = c->vt->m->t->types;
    for (;;) {
        if (c->by_id) {
            if (c->idi < c->nids) {
                const q_cached *e = &c->ids[c->idi++];
                c->idev = (prof_event){ .type = table_type(c->vt->m->t),
                                        .thread = e->thread,
                                        .start_ns = e->start_ns,
                                        .dur_ns = e->dur_ns,
                                        .name = c->r->names[e->name],
                                        .subkind = e->subkind,
                                        .device = e->device,
                                        .stream = e->stream,
                                        .correlation = e->correlation,
                                        .value = e->value };
                c->ev = &c->idev;
                c->rowid++;
                return SQLITE_OK;
            }
            cursor_reset(c);
            c->ri++;
            int rc = next_rank(c);
            if (rc != SQLITE_OK || c->eof)
                return rc;
            continue;
        }
        while (c->i < c->n) {
            const prof_event *ev = &c->evs[c->i++];
            if (ev->type == PROF_EV_REGION && (c->need & NEED_SELF) &&
                self_of(&c->selfs, ev, &c->self) < 0) {
                prof_error err = { PROF_ERR_NOMEM, "out of memory" };
                return q_fail(q, &c->vt->base, &err);
            }
            if (!((types >> ev->type) & 1) || ev->start_ns < c->from || ev->start_ns > c->to)
                continue;
            if (c->b.end_lo && ev->start_ns + ev->dur_ns < c->b.end_lo &&
                ev->start_ns + ev->dur_ns >= ev->start_ns)
                continue;
            c->ev = ev;
            c->rowid++;
            return SQLITE_OK;
        }
        if (c->rd) {
            int got = prof_reader_next_batch(c->rd, &c->evs, &c->n);
            c->i = 0;
            if (got == 1) {
                q_progress(q, c->n);
                continue;
            }
            c->n = 0;
            if (got < 0) {
                prof_error err;
                q_reader_error(c->r, c->rd, &err);
                return q_fail(q, &c->vt->base, &err);
            }
            cursor_reset(c);
            c->ri++;
        }
        int rc = next_rank(c);
        if (rc != SQLITE_OK || c->eof)
            return rc;
    }
}

static int events_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                         sqlite3_value **argv)
{
    q_cursor *c = (q_cursor *)cur;
    cursor_reset(c);
    c->need = idxNum;
    c->ri = 0;
    c->rowid = 0;
    c->eof = 0;
    bounds_parse(&c->b, idxStr, argc, argv);
    if (c->b.none || c->vt->m->q->n == 0) {
        c->eof = 1;
        return SQLITE_OK;
    }
    int rc = next_rank(c);
    if (rc != SQLITE_OK || c->eof)
        return rc;
    return cursor_advance(c);
}

static int events_next(sqlite3_vtab_cursor *cur)
{
    return cursor_advance((q_cursor *)cur);
}

static int events_eof(sqlite3_vtab_cursor *cur)
{
    return ((q_cursor *)cur)->eof;
}

static void result_text(sqlite3_context *ctx, const char *s)
{
    if (s)
        sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_result_null(ctx);
}

static void result_u64(sqlite3_context *ctx, uint64_t v)
{
    if (v > (uint64_t)INT64_MAX)
        sqlite3_result_double(ctx, (double)v);
    else
        sqlite3_result_int64(ctx, (sqlite3_int64)v);
}

static int events_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    q_cursor *c = (q_cursor *)cur;
    const prof_event *ev = c->ev;
    const q_rank *r = c->r;
    const q_launch *l;
    const q_step *s;
    switch (c->vt->m->t->cols[col].field) {
    case F_RANK: sqlite3_result_int64(ctx, r->rank); break;
    case F_THREAD: result_u64(ctx, ev->thread); break;
    case F_THREAD_NAME:
        if (c->by_id) {
            uint32_t tn = c->ids[c->idi - 1].thread_name;
            result_text(ctx, tn == Q_NONE ? NULL : r->names[tn]);
        } else {
            result_text(ctx, prof_reader_thread_name(c->rd, ev->thread));
        }
        break;
    case F_NAME: result_text(ctx, ev->name); break;
    case F_KIND: result_text(ctx, prof_kind_name(ev->kind)); break;
    case F_DEPTH: sqlite3_result_int64(ctx, ev->depth); break;
    case F_STEP:
        if (ev->type == PROF_EV_MEMORY || ev->type == PROF_EV_COUNTER)
            s = q_step_closing_at(c->steps, ev->start_ns);
        else
            s = q_step_at(c->steps, ev->start_ns);
        if (s)
            result_u64(ctx, s->number);
        break;
    case F_START: result_u64(ctx, ev->start_ns); break;
    case F_END:
        result_u64(ctx, ev->start_ns + ev->dur_ns < ev->start_ns ? UINT64_MAX
                                                                  : ev->start_ns + ev->dur_ns);
        break;
    case F_DUR: result_u64(ctx, ev->dur_ns); break;
    case F_SELF: result_u64(ctx, c->self); break;
    case F_DEVICE: sqlite3_result_int64(ctx, ev->device); break;
    case F_STREAM: sqlite3_result_int64(ctx, ev->stream); break;
    case F_CORRELATION: result_u64(ctx, ev->correlation); break;
    case F_BYTES: result_u64(ctx, ev->value); break;
    case F_COPY_KIND: result_text(ctx, prof_copy_kind_name(ev->subkind)); break;
    case F_SYNC_KIND: result_text(ctx, prof_sync_kind_name(ev->subkind)); break;
    case F_OP:
        if ((l = q_launch_of(r, ev->correlation)) && l->op != Q_NONE)
            result_text(ctx, r->names[l->op]);
        break;
    case F_API:
        if ((l = q_launch_of(r, ev->correlation)))
            result_text(ctx, r->names[l->api]);
        break;
    case F_LAUNCH_THREAD:
        if ((l = q_launch_of(r, ev->correlation)))
            sqlite3_result_int64(ctx, l->thread);
        break;
    case F_VALUE: sqlite3_result_double(ctx, ev->fvalue); break;
    case F_JSON: break;
    }
    return SQLITE_OK;
}

static int events_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((q_cursor *)cur)->rowid;
    return SQLITE_OK;
}

const sqlite3_module q_events_module = {
    .iVersion = 1,
    .xCreate = NULL, /* eponymous only: the table exists as its module's name */
    .xConnect = q_connect,
    .xBestIndex = events_best_index,
    .xDisconnect = q_disconnect,
    .xDestroy = q_disconnect,
    .xOpen = events_open,
    .xClose = events_close,
    .xFilter = events_filter,
    .xNext = events_next,
    .xEof = events_eof,
    .xColumn = events_column,
    .xRowid = events_rowid,
};
