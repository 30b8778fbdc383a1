/* collective.c - the collectives one rank took part in, as the straggler
 * rule matches them across ranks (formats/rules.md §4.9): communication
 * kernels per device stream, and outermost regions of kind COMM (for
 * profiles without GPU data). Kept in memory, at most
 * MODEL_COLLECTIVES_MAX of each: a run has a few collectives per step,
 * not per event. */
#include <stdlib.h>

#include "model/build.h"

static int add(model_collective **v, size_t *n, size_t *cap, uint64_t *dropped,
               model_collective c)
{
    if (*n >= MODEL_COLLECTIVES_MAX) {
        (*dropped)++;
        return 0;
    }
    if (vec_grow(v, cap, *n, sizeof **v) < 0)
        return -1;
    (*v)[(*n)++] = c;
    return 0;
}

int mb_collective_kernel(model_builder *b, const prof_event *ev)
{
    profile_model *m = b->m;
    return add(&m->comm_kernels, &m->ncomm_kernels, &b->cap_comm_kernels,
               &m->collectives_dropped,
               (model_collective){ ev->start_ns, ev->dur_ns, ev->device, ev->stream });
}

int mb_collective_region(model_builder *b, const prof_event *ev)
{
    profile_model *m = b->m;
    return add(&m->comm_regions, &m->ncomm_regions, &b->cap_comm_regions,
               &m->collectives_dropped,
               (model_collective){ ev->start_ns, ev->dur_ns, MODEL_NONE, ev->thread });
}

static int by_stream_start(const void *pa, const void *pb)
{
    const model_collective *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->dur_ns < b->dur_ns) - (a->dur_ns > b->dur_ns); /* outer first */
}

static int by_start(const void *pa, const void *pb)
{
    const model_collective *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

static uint64_t end_of(const model_collective *c)
{
    uint64_t e = c->start_ns + c->dur_ns;
    return e < c->start_ns ? UINT64_MAX : e;
}

/* COMM regions nested in another of their thread (a collective's own
 * sub-steps, a wrapper around it) are part of that one collective. */
static void drop_nested(profile_model *m)
{
    size_t out = 0;
    uint64_t outer_end = 0;
    for (size_t i = 0; i < m->ncomm_regions; i++) {
        const model_collective *c = &m->comm_regions[i];
        if (out && m->comm_regions[out - 1].stream == c->stream && c->start_ns < outer_end)
            continue;
        m->comm_regions[out++] = *c;
        outer_end = end_of(c);
    }
    m->ncomm_regions = out;
}

int mb_collective_finish(model_builder *b)
{
    profile_model *m = b->m;
    mb_sort(m->comm_kernels, m->ncomm_kernels, sizeof *m->comm_kernels, by_stream_start);
    mb_sort(m->comm_regions, m->ncomm_regions, sizeof *m->comm_regions, by_stream_start);
    drop_nested(m);
    mb_sort(m->comm_regions, m->ncomm_regions, sizeof *m->comm_regions, by_start);
    return 0;
}
