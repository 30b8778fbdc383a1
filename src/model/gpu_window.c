/* gpu_window.c - which GPU records HTA's breakdowns count (rules.md §3.1):
 * those launched before the final step started, as Holistic Trace
 * Analysis leaves a trace's last profiler step out. A record's launch is
 * the runtime call with its correlation id, which may come before or after
 * it in the file, and the final step is known only at the end.
 *
 * Every record goes to the device's unions at once (gpu.c). Before the
 * final step's start S, the records counted are exactly all of them (work
 * never starts before its launch), so HTA's union there is the union of
 * everything, cut at S. After S, it is the union of the records launched
 * before S: those are held here, every record that ends after the latest
 * step start read so far (which S is at least), and at the end the ones
 * launched before S are handed back. Launch calls are kept from the start
 * of the step before the latest on: a record whose call is older was
 * launched before the latest step. At the end a record whose call is no
 * longer kept (or never came) is judged by its correlation id against the
 * first id called in the final step, since the runtime numbers calls in
 * order.
 *
 * Memory: the held records (40 bytes each: those that end in the latest
 * step, when steps come before their GPU work, as in Kineto traces and the
 * recorder's files) and two steps' launch calls (16 bytes each, and the
 * index), pruned when they have doubled since last time, so the work stays
 * linear. Before any step has come every record and every call is kept.
 * Either is bounded by MB_WINDOW_HELD: a device holding more records than
 * that after pruning (steps came late, or the latest step runs that many),
 * or more calls than that kept before any step, loses its window (the
 * calls: every device's), and should two steps come, HTA's figures count
 * every record and say so. */
#include <stdlib.h>

#include "model/build.h"

#define WINDOW_MIN_LIMIT 4096u

static size_t limit_after(size_t kept)
{
    return 2 * kept > WINDOW_MIN_LIMIT ? 2 * kept : WINDOW_MIN_LIMIT;
}

/* The start of a record's launch call, or UINT64_MAX when not known. */
static uint64_t launch_start(const mb_window *w, const mb_held *r)
{
    if (r->launch != UINT64_MAX || !r->correlation)
        return r->launch;
    const uint32_t *i = hmap_find(&w->launch_index, r->correlation);
    return i ? w->launch[*i].start : UINT64_MAX;
}

/* No step has come and more calls than the model keeps have: which
 * records the final step launched will not be known. */
static void launches_lose(mb_window *w)
{
    w->lost = 1;
    free(w->launch);
    w->launch = NULL;
    w->nlaunch = w->cap_launch = 0;
    hmap_free(&w->launch_index);
}

/* Drops the launch calls that started before w->before, after giving the
 * held records theirs. While no step has come, none can be dropped: the
 * final step's first call must stay known. */
static int launches_prune(model_builder *b)
{
    mb_window *w = &b->window;
    size_t held = 0, out = 0;
    if (!w->steps) {
        if (w->nlaunch >= MB_WINDOW_HELD)
            launches_lose(w);
        else
            w->launch_limit = 2 * w->nlaunch;
        return 0;
    }
    for (size_t d = 0; d < b->m->ngpus; d++) {
        mb_gpu *g = &b->gpu[d];
        for (size_t i = 0; i < g->nheld; i++)
            g->held[i].launch = launch_start(w, &g->held[i]);
        held += g->nheld;
    }
    hmap_clear(&w->launch_index);
    for (size_t i = 0; i < w->nlaunch; i++) {
        if (w->launch[i].start < w->before)
            continue;
        int added;
        uint32_t *slot = hmap_slot(&w->launch_index, w->launch[i].correlation, &added);
        if (!slot)
            return -1;
        w->launch[out] = w->launch[i];
        *slot = (uint32_t)out++;
    }
    w->nlaunch = out;
    /* at least as many new calls as there are held records before the
     * next pruning goes over them again */
    w->launch_limit = limit_after(out) > held ? limit_after(out) : held;
    return 0;
}

int mb_window_launch(model_builder *b, const prof_event *ev)
{
    mb_window *w = &b->window;
    if (!ev->correlation || w->lost || (w->steps && ev->start_ns < w->before))
        return 0; /* its records are known to be launched before the latest step */
    int added;
    uint32_t *slot = hmap_slot(&w->launch_index, ev->correlation, &added);
    if (!slot)
        return -1;
    if (!added) { /* the same id twice (a runtime and a driver call): the first */
        if (ev->start_ns < w->launch[*slot].start)
            w->launch[*slot].start = ev->start_ns;
        return 0;
    }
    if (w->nlaunch >= UINT32_MAX - 1 ||
        vec_grow(&w->launch, &w->cap_launch, w->nlaunch, sizeof *w->launch) < 0) {
        hmap_remove(&w->launch_index, slot);
        return -1;
    }
    w->launch[w->nlaunch] = (mb_launch){ ev->correlation, ev->start_ns };
    *slot = (uint32_t)w->nlaunch++;
    return w->nlaunch >= (w->launch_limit ? w->launch_limit : WINDOW_MIN_LIMIT)
               ? launches_prune(b)
               : 0;
}

int mb_window_step(model_builder *b, uint64_t start)
{
    mb_window *w = &b->window;
    if (!w->steps++) {
        w->latest = w->before = start;
    } else if (start > w->latest) {
        w->before = w->latest;
        w->latest = start;
    } else if (start > w->before) {
        w->before = start;
    }
    return 0;
}

static void held_lose(mb_gpu *g)
{
    g->window_lost = 1;
    free(g->held);
    g->held = NULL;
    g->nheld = g->cap_held = 0;
}

/* Keeps the held records that end after the latest step start; more than
 * the model holds, and the device's window is lost (see the top). */
static void held_prune(const mb_window *w, mb_gpu *g)
{
    size_t out = 0;
    for (size_t i = 0; w->steps && i < g->nheld; i++)
        if (g->held[i].end > w->latest)
            g->held[out++] = g->held[i];
    if (!w->steps)
        out = g->nheld;
    if (out >= MB_WINDOW_HELD) {
        held_lose(g);
        return;
    }
    g->nheld = out;
    g->held_limit = limit_after(out);
}

int mb_window_hold(model_builder *b, mb_gpu *g, const mb_tagged *rec, uint64_t correlation)
{
    const mb_window *w = &b->window;
    if (g->window_lost || w->lost || (w->steps && rec->end <= w->latest))
        return 0;
    if (vec_grow(&g->held, &g->cap_held, g->nheld, sizeof *g->held) < 0)
        return -1;
    g->held[g->nheld++] = (mb_held){ rec->start, rec->end, correlation, UINT64_MAX, rec->cls };
    if (g->nheld >= (g->held_limit ? g->held_limit : WINDOW_MIN_LIMIT))
        held_prune(w, g);
    return 0;
}

/* The first correlation id of a launch call in the final step, or 0. */
static uint64_t first_final_id(const mb_window *w)
{
    uint64_t first = 0;
    for (size_t i = 0; i < w->nlaunch; i++)
        if (w->launch[i].start >= w->latest && (!first || w->launch[i].correlation < first))
            first = w->launch[i].correlation;
    return first;
}

/* Whether a held record was launched before the final step started at s. */
static int launched_before_final(const mb_window *w, const mb_held *r, uint64_t s,
                                 uint64_t first_final)
{
    if (r->start < s)
        return 1;
    uint64_t l = launch_start(w, r);
    if (l != UINT64_MAX)
        return l < s;
    return r->correlation && first_final && r->correlation < first_final;
}

int mb_window_final(const model_builder *b, const mb_gpu *g, uint64_t *s)
{
    *s = b->window.latest;
    return b->window.steps >= 2 && !g->window_lost && !b->window.lost;
}

int mb_window_unknown(const model_builder *b, const mb_gpu *g)
{
    return b->window.steps >= 2 && (g->window_lost || b->window.lost);
}

int mb_window_settle(model_builder *b, mb_gpu *g, uint64_t *left_out)
{
    mb_window *w = &b->window;
    uint64_t s;
    size_t out = 0;
    *left_out = 0;
    if (!mb_window_final(b, g, &s)) {
        g->nheld = 0;
        return 0;
    }
    if (!w->first_final_known) { /* once for every device */
        w->first_final = first_final_id(w);
        w->first_final_known = 1;
    }
    uint64_t first_final = w->first_final;
    for (size_t i = 0; i < g->nheld; i++) {
        mb_held r = g->held[i];
        if (r.end <= s)
            continue;
        if (launched_before_final(w, &r, s, first_final))
            g->held[out++] = r;
        else
            (*left_out)++;
    }
    g->nheld = out;
    return 0;
}

void mb_window_free(model_builder *b)
{
    free(b->window.launch);
    hmap_free(&b->window.launch_index);
    b->window = (mb_window){ 0 };
}
