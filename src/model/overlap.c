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
 * Exact, within bounded memory: past MB_BUSY_TOTAL_MAX intervals over all
 * threads everything kept is dropped and the model says overlap_unknown
 * (the rule then judges as it would without it). Calls past
 * MB_OVERLAP_CALLS_MAX on a thread are not kept (the share is of the calls
 * kept). Past MB_OVERLAP_THREADS threads nothing is laid. */
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

/* 0 kept, -1 out of memory. */
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
        u->unsorted |= s < last->start;
    }
    if (b->busy_total == MB_BUSY_TOTAL_MAX) {
        overlap_drop(b);
        return 0;
    }
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
    if (b->m->overlap_unknown || dur < MB_OVERLAP_CALL_NS || u->ncalls == MB_OVERLAP_CALLS_MAX)
        return;
    if (vec_grow(&u->calls, &u->cap_calls, u->ncalls, sizeof *u->calls) < 0) {
        b->overlap_failed = 1;
        return;
    }
    u->calls[u->ncalls++] = (mb_call){ start, end, op };
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
 * of their busy time in it), and the thread that worked most. */
static int call_overlap(model_builder *b, size_t t, const mb_call *c, mb_busy *pieces,
                        uint64_t *ns, uint32_t *who)
{
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
            mine += pieces->v[i].end - pieces->v[i].start;
        if (mine > best) {
            best = mine;
            *who = b->m->threads[o].index;
        }
    }
    pieces->unsorted = 1;
    busy_join(pieces);
    *ns = 0;
    for (size_t i = 0; i < pieces->n; i++)
        *ns += pieces->v[i].end - pieces->v[i].start;
    return 0;
}

int mb_overlap_finish(model_builder *b)
{
    profile_model *m = b->m;
    if (b->overlap_failed)
        return -1;
    if (m->overlap_unknown || m->nthreads < 2 || m->nthreads > MB_OVERLAP_THREADS)
        return 0;
    for (size_t t = 0; t < m->nthreads; t++)
        busy_join(&b->threads[t].busy);
    uint64_t *best = calloc(m->nops ? m->nops : 1, sizeof *best);
    mb_busy pieces = { 0 };
    int rc = best ? 0 : -1;
    for (size_t t = 0; rc == 0 && t < m->nthreads; t++) {
        const mb_busy *u = &b->threads[t].busy;
        for (size_t k = 0; rc == 0 && k < u->ncalls; k++) {
            const mb_call *c = &u->calls[k];
            uint64_t ns;
            uint32_t who;
            if ((rc = call_overlap(b, t, c, &pieces, &ns, &who)) < 0 || c->op >= m->nops)
                continue;
            model_op *op = &m->ops[c->op];
            op->outer_long_ns += c->end - c->start;
            op->others_ns += ns;
            if (ns > best[c->op]) {
                best[c->op] = ns;
                op->others_thread = who;
            }
        }
    }
    free(pieces.v);
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
