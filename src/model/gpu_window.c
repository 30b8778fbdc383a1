/* gpu_window.c - which GPU records HTA's breakdowns count (rules.md §3.1):
 * those launched before the final step started, as Holistic Trace
 * Analysis leaves a trace's last profiler step out. A record's launch is
 * the runtime call with its correlation id, which may come before or after
 * it in the file, and the final step is known only at the end.
 *
 * So a record goes to the device's unions at once when it was launched
 * before the latest step start read so far (or, its call not read yet,
 * started on the GPU before it: a launch precedes its work); otherwise it
 * is held until a later step start settles it, or the end does. Launch
 * calls are kept from the start of the step before the latest on: a
 * record whose call is older than that was launched before the latest
 * step, and at the end one whose call is no longer kept (or never came) is
 * judged by its correlation id, which the runtime numbers in call order,
 * against the first id called in the final step.
 *
 * Memory: the held records (32 bytes each: about one step's records when
 * steps come before their GPU work, as in Kineto traces and the
 * recorder's files; every record of a profile whose steps all come after
 * it) and the launch calls of two steps (16 bytes each, and the index).
 * Both are settled or pruned when they have doubled since last time, so
 * the work stays linear. */
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

/* Whether a record was launched before t: 1 yes, 0 no, -1 not known yet. */
static int launched_before(const mb_window *w, const mb_held *r, uint64_t t)
{
    uint64_t l = launch_start(w, r);
    if (l != UINT64_MAX)
        return l < t;
    return r->start < t ? 1 : -1;
}

/* Drops the launch calls that started before w->before (all of them while
 * no step has come), after giving the held records theirs. */
static int launches_prune(model_builder *b)
{
    mb_window *w = &b->window;
    size_t held = 0, out = 0;
    for (size_t d = 0; d < b->m->ngpus; d++) {
        mb_gpu *g = &b->gpu[d];
        for (size_t i = 0; i < g->nheld; i++)
            g->held[i].launch = launch_start(w, &g->held[i]);
        held += g->nheld;
    }
    hmap_clear(&w->launch_index);
    for (size_t i = 0; w->steps && i < w->nlaunch; i++) {
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
    if (!ev->correlation || (w->steps && ev->start_ns < w->before))
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

/* Hands the held records launched before the latest step start to the
 * unions. With `final`, a record whose launch is not known is judged by
 * its correlation id against first_final, the first id called in the
 * final step (0: none known, and the record is left out); the records
 * left are those launched in the final step. */
static int held_settle(const mb_window *w, mb_gpu *g, int final, uint64_t first_final)
{
    size_t out = 0;
    for (size_t i = 0; i < g->nheld; i++) {
        mb_held r = g->held[i];
        int before = launched_before(w, &r, w->latest);
        if (before < 0 && final)
            before = r.correlation && first_final && r.correlation < first_final;
        if (before > 0) {
            if (mb_gpu_commit(g, &r) < 0)
                return -1;
        } else {
            g->held[out++] = r;
        }
    }
    g->nheld = out;
    g->held_limit = limit_after(out);
    return 0;
}

int mb_window_admit(model_builder *b, mb_gpu *g, const mb_tagged *rec, uint64_t correlation)
{
    mb_window *w = &b->window;
    mb_held r = { rec->start, rec->end, correlation, UINT64_MAX, rec->cls };
    if (w->steps && launched_before(w, &r, w->latest) > 0)
        return mb_gpu_commit(g, &r);
    if (vec_grow(&g->held, &g->cap_held, g->nheld, sizeof *g->held) < 0)
        return -1;
    g->held[g->nheld++] = r;
    if (!w->steps || g->nheld < (g->held_limit ? g->held_limit : WINDOW_MIN_LIMIT))
        return 0;
    return held_settle(w, g, 0, 0);
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

int mb_window_settle(model_builder *b, mb_gpu *g, uint64_t *left_out)
{
    const mb_window *w = &b->window;
    *left_out = 0;
    if (w->steps < 2) { /* no final step to leave out */
        for (size_t i = 0; i < g->nheld; i++)
            if (mb_gpu_commit(g, &g->held[i]) < 0)
                return -1;
        g->nheld = 0;
        return 0;
    }
    if (held_settle(w, g, 1, first_final_id(w)) < 0)
        return -1;
    *left_out = g->nheld;
    return 0;
}

void mb_window_free(model_builder *b)
{
    free(b->window.launch);
    hmap_free(&b->window.launch_index);
    b->window = (mb_window){ 0 };
}
