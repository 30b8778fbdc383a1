/* overlap.c - how much of a thread's outermost regions other threads spent
 * working: a region whose thread only waits (PyTorch's main thread in
 * `## backward ##` while the autograd thread runs the backward) has all its
 * time as self time, which is waiting, not work (formats/rules.md §4.1).
 *
 * Each thread keeps the union of its outermost regions (its busy time:
 * back-to-back regions make one interval, which notes the longest of them)
 * and the intervals of its outermost calls of MB_OVERLAP_CALL_NS or more.
 * At the end, each call is laid over the union of every other thread's
 * busy time in regions shorter than the call: work waited for lies in
 * regions shorter than the wait, and the wait, which covers that work, is
 * no work to lay under it. model_op.others_ns sums what lies under the
 * calls, of outer_long_ns, their time; others_thread is the thread with the
 * most time under the call that had the most.
 *
 * Within bounded memory, and flat in the length of the run: past
 * MODEL_KEEP intervals and calls over all threads (1.5 MiB; b->keep,
 * which PROF_MODEL_KEEP lowers for tests), time is thinned in windows of
 * 2^MB_OVERLAP_WINDOW_SHIFT ns (about 1 ms), as series.c thins steps: a
 * window is kept at level k when the top k bits of its number's hash are
 * zero, and what touches no kept window is dropped, the level rising by
 * one each time the bound is reached. The calls are then laid over the others'
 * busy time in the kept windows only, and an operation's others_ns is
 * the share of its calls' time in those windows that others worked,
 * times outer_long_ns, which stays exact. A pseudo-random sample of the
 * run's time, the same on every read; exact while nothing is thinned.
 * Past MB_THIN_MAX levels (a hostile file) everything is dropped and the
 * model says overlap_unknown. Past MB_OVERLAP_THREADS threads nothing is
 * laid. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

static int interval_cmp(const void *pa, const void *pb)
{
    const mb_busy_iv *a = pa, *b = pb;
    return (a->start > b->start) - (a->start < b->start);
}

/* Sorts u (when a region came out of order) and joins what touches. */
static void busy_join(mb_busy *u)
{
    if (u->unsorted)
        mb_sort(u->v, u->n, sizeof *u->v, interval_cmp);
    u->unsorted = 0;
    size_t k = 0;
    for (size_t i = 1; i < u->n; i++) {
        mb_busy_iv *last = &u->v[k];
        if (u->v[i].start <= last->end) {
            if (u->v[i].end > last->end)
                last->end = u->v[i].end;
            if (u->v[i].longest > last->longest)
                last->longest = u->v[i].longest;
        } else {
            u->v[++k] = u->v[i];
        }
    }
    if (u->n)
        u->n = k + 1;
}

static void overlap_drop(model_builder *b)
{
    for (size_t t = 0; t < b->m->nthreads; t++) {
        mb_busy *u = &b->threads[t].busy;
        free(u->v);
        free(u->calls);
        memset(u, 0, sizeof *u);
    }
    b->m->overlap_unknown = 1;
}

static int window_kept(unsigned level, uint64_t w)
{
    return mb_thin_keeps(mb_thin_hash(w), level);
}

/* Whether [s, e) touches a window kept at the model's level: what does not
 * can be dropped. A thread's spans come mostly in time order, and short
 * ones dozens to a window: the windows are looked at from where its last
 * span's look ended, up to the first kept one, so each is hashed about
 * once, and a long span stops at its first kept window. */
static int span_kept(model_builder *b, mb_busy *u, uint64_t s, uint64_t e)
{
    unsigned level = b->m->overlap_thinning;
    if (level == 0)
        return 1;
    uint64_t w = s >> MB_OVERLAP_WINDOW_SHIFT;
    uint64_t last = (e > s ? e - 1 : s) >> MB_OVERLAP_WINDOW_SHIFT;
    if (last - w >= MB_OVERLAP_LOOK)
        return 1; /* 68 s or more: few, kept without looking */
    mb_scanned *c = &u->scanned;
    if (c->level != level || w < c->from || w > c->upto || c->kept < w)
        *c = (mb_scanned){ w, w, UINT64_MAX, level };
    while (c->kept == UINT64_MAX && c->upto <= last) {
        if (window_kept(level, c->upto))
            c->kept = c->upto;
        c->upto++;
    }
    return c->kept <= last;
}

/* The time of [s, e) in the windows kept at level; over more than
 * MB_OVERLAP_LOOK windows, its time times the share kept of that many
 * spread evenly over it. */
static uint64_t kept_ns(unsigned level, uint64_t s, uint64_t e)
{
    if (level == 0 || e <= s)
        return e > s ? e - s : 0;
    uint64_t first = s >> MB_OVERLAP_WINDOW_SHIFT;
    uint64_t wins = ((e - 1) >> MB_OVERLAP_WINDOW_SHIFT) - first;
    if (wins >= MB_OVERLAP_LOOK) {
        uint64_t kept = 0, every = wins / MB_OVERLAP_LOOK;
        for (uint64_t i = 0; i < MB_OVERLAP_LOOK; i++)
            kept += (uint64_t)window_kept(level, first + i * every);
        return (uint64_t)((double)(e - s) * ((double)kept / MB_OVERLAP_LOOK));
    }
    uint64_t ns = 0;
    for (uint64_t w = s >> MB_OVERLAP_WINDOW_SHIFT; w <= (e - 1) >> MB_OVERLAP_WINDOW_SHIFT; w++) {
        uint64_t from = w << MB_OVERLAP_WINDOW_SHIFT, width = 1ull << MB_OVERLAP_WINDOW_SHIFT;
        uint64_t to = from > UINT64_MAX - width ? UINT64_MAX : from + width;
        if (window_kept(level, w))
            ns += (e < to ? e : to) - (s > from ? s : from);
    }
    return ns;
}

/* One level more, until what is kept is well under the bound. */
static void overlap_thin(model_builder *b)
{
    profile_model *m = b->m;
    do {
        if (m->overlap_thinning == MB_THIN_MAX) {
            overlap_drop(b);
            return;
        }
        m->overlap_thinning++;
        b->busy_total = 0;
        for (size_t t = 0; t < m->nthreads; t++) {
            mb_busy *u = &b->threads[t].busy;
            size_t k = 0;
            for (size_t i = 0; i < u->n; i++)
                if (span_kept(b, u, u->v[i].start, u->v[i].end))
                    u->v[k++] = u->v[i];
            u->n = k;
            k = 0;
            for (size_t i = 0; i < u->ncalls; i++)
                if (span_kept(b, u, u->calls[i].start, u->calls[i].end))
                    u->calls[k++] = u->calls[i];
            u->ncalls = k;
            b->busy_total += u->n + u->ncalls;
        }
    } while (b->busy_total >= b->keep / 4 * 3);
}

/* Whether [s, e) of thread u is to be kept: it touches a kept window,
 * with room for it made (which may thin, and then drop it after all). */
static int busy_keeps(model_builder *b, mb_busy *u, uint64_t s, uint64_t e)
{
    if (!span_kept(b, u, s, e))
        return 0;
    if (b->busy_total < b->keep)
        return 1;
    overlap_thin(b);
    return !b->m->overlap_unknown && span_kept(b, u, s, e);
}

/* 0 kept (or dropped by thinning), -1 out of memory. */
static int busy_add(model_builder *b, mb_busy *u, uint64_t s, uint64_t e)
{
    if (u->n) {
        mb_busy_iv *last = &u->v[u->n - 1];
        if (s >= last->start && s <= last->end) {
            if (e > last->end)
                last->end = e;
            if (e - s > last->longest)
                last->longest = e - s;
            return 0;
        }
    }
    if (!busy_keeps(b, u, s, e))
        return 0;
    if (u->n)
        u->unsorted |= s < u->v[u->n - 1].start;
    if (vec_grow(&u->v, &u->cap, u->n, sizeof *u->v) < 0)
        return -1;
    u->v[u->n++] = (mb_busy_iv){ s, e, e - s };
    b->busy_total++;
    return 0;
}

void mb_overlap_region(model_builder *b, uint32_t tpos, uint64_t start, uint64_t dur, uint32_t op)
{
    mb_busy *u = &b->threads[tpos].busy;
    uint64_t end = start + dur < start ? UINT64_MAX : start + dur;
    if (dur == 0 || b->overlap_failed || b->m->overlap_unknown)
        return;
    if (busy_add(b, u, start, end) < 0) {
        b->overlap_failed = 1;
        return;
    }
    if (b->m->overlap_unknown || dur < MB_OVERLAP_CALL_NS)
        return;
    b->m->ops[op].outer_long_ns += end - start; /* every call, kept or not */
    if (!busy_keeps(b, u, start, end))
        return;
    if (vec_grow(&u->calls, &u->cap_calls, u->ncalls, sizeof *u->calls) < 0) {
        b->overlap_failed = 1;
        return;
    }
    u->calls[u->ncalls++] = (mb_call){ start, end, op };
    b->busy_total++;
}

/* The pieces of [s, e) under u's intervals of regions shorter than it,
 * appended to out. */
static int clip_into(const mb_busy *u, uint64_t s, uint64_t e, mb_busy *out)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) { /* the first interval that ends after s */
        size_t mid = lo + (hi - lo) / 2;
        if (u->v[mid].end <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < u->n && u->v[i].start < e; i++) {
        if (u->v[i].longest >= e - s)
            continue;
        if (vec_grow(&out->v, &out->cap, out->n, sizeof *out->v) < 0)
            return -1;
        out->v[out->n++] = (mb_busy_iv){ u->v[i].start > s ? u->v[i].start : s,
                                         u->v[i].end < e ? u->v[i].end : e, 0 };
    }
    return 0;
}

/* One call of thread t: the time other threads worked under it (the union
 * of their busy time in it), and the thread that worked most, both in the
 * windows kept. */
static int call_overlap(model_builder *b, size_t t, const mb_call *c, mb_busy *pieces,
                        uint64_t *ns, uint32_t *who)
{
    unsigned level = b->m->overlap_thinning;
    uint64_t best = 0;
    pieces->n = 0;
    *who = MODEL_NONE;
    for (size_t o = 0; o < b->m->nthreads; o++) {
        if (o == t)
            continue;
        size_t before = pieces->n;
        if (clip_into(&b->threads[o].busy, c->start, c->end, pieces) < 0)
            return -1;
        uint64_t mine = 0;
        for (size_t i = before; i < pieces->n; i++)
            mine += kept_ns(level, pieces->v[i].start, pieces->v[i].end);
        if (mine > best) {
            best = mine;
            *who = b->m->threads[o].index;
        }
    }
    pieces->unsorted = 1;
    busy_join(pieces);
    *ns = 0;
    for (size_t i = 0; i < pieces->n; i++)
        *ns += kept_ns(level, pieces->v[i].start, pieces->v[i].end);
    return 0;
}

/* An operation's time under others' work: what was measured in the kept
 * windows (covered of kept), scaled to all its calls' time. */
static uint64_t others_scaled(uint64_t outer, uint64_t kept, uint64_t covered)
{
    if (kept == outer || kept == 0)
        return covered;
    double v = (double)outer * ((double)covered / (double)kept) + 0.5;
    return v >= (double)outer ? outer : (uint64_t)v;
}

/* The calls of every thread laid over the others' busy time: per
 * operation, its calls' time in the kept windows and the part of it
 * others worked (kept[], covered[]). */
static int calls_laid(model_builder *b, uint64_t *kept, uint64_t *covered, uint64_t *best)
{
    profile_model *m = b->m;
    mb_busy pieces = { 0 };
    int rc = 0;
    for (size_t t = 0; rc == 0 && t < m->nthreads; t++) {
        const mb_busy *u = &b->threads[t].busy;
        for (size_t k = 0; rc == 0 && k < u->ncalls; k++) {
            const mb_call *c = &u->calls[k];
            uint64_t ns;
            uint32_t who;
            if ((rc = call_overlap(b, t, c, &pieces, &ns, &who)) < 0 || c->op >= m->nops)
                continue;
            kept[c->op] += kept_ns(m->overlap_thinning, c->start, c->end);
            covered[c->op] += ns;
            if (ns > best[c->op]) {
                best[c->op] = ns;
                m->ops[c->op].others_thread = who;
            }
        }
    }
    free(pieces.v);
    return rc;
}

int mb_overlap_finish(model_builder *b)
{
    profile_model *m = b->m;
    if (b->overlap_failed)
        return -1;
    if (m->overlap_unknown || m->nthreads < 2 || m->nthreads > MB_OVERLAP_THREADS) {
        for (size_t i = 0; i < m->nops; i++)
            m->ops[i].outer_long_ns = 0; /* nothing laid: as without it */
        return 0;
    }
    for (size_t t = 0; t < m->nthreads; t++)
        busy_join(&b->threads[t].busy);
    size_t n = m->nops ? m->nops : 1;
    uint64_t *kept = calloc(n, sizeof *kept), *covered = calloc(n, sizeof *covered),
             *best = calloc(n, sizeof *best);
    int rc = kept && covered && best ? calls_laid(b, kept, covered, best) : -1;
    for (size_t i = 0; rc == 0 && i < m->nops; i++)
        m->ops[i].others_ns = others_scaled(m->ops[i].outer_long_ns, kept[i], covered[i]);
    free(kept);
    free(covered);
    free(best);
    return rc;
}

void mb_overlap_free(model_builder *b)
{
    for (size_t t = 0; b->threads && t < b->m->nthreads; t++) {
        free(b->threads[t].busy.v);
        free(b->threads[t].busy.calls);
    }
}
