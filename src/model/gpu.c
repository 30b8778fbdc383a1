/* gpu.c - per-device GPU activity: kernel, copy and memset counts and
 * times, and busy time as the union of their intervals over all streams,
 * with the idle gaps between them.
 *
 * GPU records arrive roughly, not exactly, in time order (activity buffers
 * are flushed per stream as they fill). The union is built with bounded
 * memory: intervals are collected in batches of MB_GPU_BATCH, each batch is
 * sorted and merged into a short list of disjoint intervals not counted yet,
 * and the part of that list ending before the earliest start in the newest
 * batch is counted (busy time, gaps) and dropped, since records that come
 * later are expected to start later still. A record that does come later
 * and reaches back into time already counted is clipped to begin where
 * counting stopped: busy time is then never counted twice, but it can
 * miss the clipped part if that fell in an idle gap, and such a gap keeps
 * its counted length. With records in order, or out of order by less than
 * a batch, the result is exact. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

static size_t device_slot(uint32_t device, size_t cap)
{
    return (size_t)(device * 2654435761u) & (cap - 1);
}

/* The index slot of device: where it is, or the empty slot it would take. */
static size_t index_find(const model_builder *b, uint32_t device)
{
    size_t k = device_slot(device, b->gpu_index_cap);
    while (b->gpu_index[k] && b->m->gpus[b->gpu_index[k] - 1].device != device)
        k = (k + 1) & (b->gpu_index_cap - 1);
    return k;
}

/* Keeps the index at most half full, so that a lookup is a probe or two
 * however many devices a profile names (an untrusted one may name 100,000). */
static int index_grow(model_builder *b)
{
    if ((b->m->ngpus + 1) * 2 <= b->gpu_index_cap)
        return 0;
    size_t cap = b->gpu_index_cap ? 2 * b->gpu_index_cap : 16;
    uint32_t *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    free(b->gpu_index);
    b->gpu_index = v;
    b->gpu_index_cap = cap;
    for (size_t i = 0; i < b->m->ngpus; i++)
        v[index_find(b, b->m->gpus[i].device)] = (uint32_t)i + 1;
    return 0;
}

static int device_of(model_builder *b, uint32_t device, size_t *pos)
{
    profile_model *m = b->m;
    if (m->ngpus >= UINT32_MAX - 1 || index_grow(b) < 0)
        return -1;
    size_t k = index_find(b, device), i = b->gpu_index[k] ? b->gpu_index[k] - 1u : m->ngpus;
    if (i == m->ngpus) {
        if (mb_grow(&m->gpus, &b->cap_gpus, i, sizeof *m->gpus) < 0 ||
            mb_grow(&b->gpu, &b->cap_bgpus, i, sizeof *b->gpu) < 0)
            return -1;
        memset(&m->gpus[i], 0, sizeof m->gpus[i]);
        memset(&b->gpu[i], 0, sizeof b->gpu[i]);
        m->gpus[i].device = device;
        m->gpus[i].first_ns = UINT64_MAX;
        b->gpu_index[k] = (uint32_t)i + 1;
        m->ngpus++;
    }
    *pos = i;
    return 0;
}

static int interval_cmp(const void *pa, const void *pb)
{
    const mb_interval *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/* Appends iv to the disjoint sorted list out (n so far), joining it with
 * the last interval when they overlap or touch. */
static void union_push(mb_interval *out, size_t *n, mb_interval iv)
{
    if (*n && iv.start <= out[*n - 1].end) {
        if (iv.end > out[*n - 1].end)
            out[*n - 1].end = iv.end;
        return;
    }
    out[(*n)++] = iv;
}

static void count_interval(model_gpu_device *d, mb_gpu *g, mb_interval iv)
{
    if (g->counted_any) {
        uint64_t gap = iv.start - g->frontier;
        if (gap >= MB_IDLE_GAP_NS) {
            d->idle_gaps++;
            d->idle_gap_ns += gap;
        }
    }
    d->busy_ns += iv.end - iv.start;
    g->frontier = iv.end;
    g->counted_any = 1;
}

/* Merges the batch into the uncounted list and counts what no later record
 * should reach (everything when final). */
static int gpu_flush(model_gpu_device *d, mb_gpu *g, int final)
{
    size_t nb = 0, n = 0, i = 0, j = 0;
    for (size_t k = 0; k < g->nbatch; k++) { /* clip what reaches into counted time */
        mb_interval iv = g->batch[k];
        if (g->counted_any && iv.start < g->frontier)
            iv.start = g->frontier;
        if (iv.end > iv.start)
            g->batch[nb++] = iv;
    }
    mb_sort(g->batch, nb, sizeof *g->batch, interval_cmp);
    if (mb_grow(&g->scratch, &g->cap_scratch, g->nmerged + nb, sizeof *g->scratch) < 0)
        return -1;
    while (i < g->nmerged || j < nb) {
        int from_merged = j == nb || (i < g->nmerged && g->merged[i].start <= g->batch[j].start);
        union_push(g->scratch, &n, from_merged ? g->merged[i++] : g->batch[j++]);
    }
    uint64_t watermark = final || !nb ? UINT64_MAX : g->batch[0].start;
    size_t c = 0;
    while (c < n && g->scratch[c].end <= watermark)
        count_interval(d, g, g->scratch[c++]);
    if (mb_grow(&g->merged, &g->cap_merged, n - c, sizeof *g->merged) < 0)
        return -1;
    if (n > c)
        memcpy(g->merged, g->scratch + c, (n - c) * sizeof *g->merged);
    g->nmerged = n - c;
    g->nbatch = 0;
    return 0;
}

int mb_gpu_event(model_builder *b, const prof_event *ev)
{
    size_t pos;
    uint64_t start = ev->start_ns, end = start + ev->dur_ns;
    if (end < start)
        end = UINT64_MAX;
    if (device_of(b, ev->device, &pos) < 0)
        return -1;
    model_gpu_device *d = &b->m->gpus[pos];
    mb_gpu *g = &b->gpu[pos];
    b->m->has_gpu = 1;
    if (ev->type == PROF_EV_GPU_KERNEL) {
        d->kernels++;
        d->kernel_ns += ev->dur_ns;
    } else if (ev->type == PROF_EV_GPU_MEMCPY) {
        d->memcpy_count++;
        d->memcpy_bytes += ev->value;
        d->memcpy_ns += ev->dur_ns;
    } else {
        d->memset_count++;
        d->memset_ns += ev->dur_ns;
    }
    if (start < d->first_ns)
        d->first_ns = start;
    if (end > d->last_ns)
        d->last_ns = end;
    if (end == start)
        return 0; /* covers no time */
    if (mb_grow(&g->batch, &g->cap_batch, g->nbatch, sizeof *g->batch) < 0)
        return -1;
    g->batch[g->nbatch++] = (mb_interval){ start, end };
    return g->nbatch == MB_GPU_BATCH ? gpu_flush(d, g, 0) : 0;
}

static int device_cmp(const void *pa, const void *pb)
{
    const model_gpu_device *a = pa, *b = pb;
    return (a->device > b->device) - (a->device < b->device);
}

int mb_gpu_finish(model_builder *b)
{
    profile_model *m = b->m;
    for (size_t i = 0; i < m->ngpus; i++)
        if (gpu_flush(&m->gpus[i], &b->gpu[i], 1) < 0)
            return -1;
    mb_gpu_free(b);
    mb_sort(m->gpus, m->ngpus, sizeof *m->gpus, device_cmp);
    return 0;
}

void mb_gpu_free(model_builder *b)
{
    for (size_t i = 0; b->gpu && i < b->m->ngpus; i++) {
        free(b->gpu[i].batch);
        free(b->gpu[i].merged);
        free(b->gpu[i].scratch);
    }
    free(b->gpu);
    b->gpu = NULL;
    free(b->gpu_index);
    b->gpu_index = NULL;
    b->gpu_index_cap = 0;
}
