/* gpu.c - per-device GPU activity: kernel, copy and memset counts and
 * times; busy time as the union of their intervals over all streams, with
 * the idle gaps between them; communication kernels' time and how much of
 * it other kernels overlap; and all of that inside the steps.
 *
 * GPU records arrive in no set order: a Kineto trace lists them stream by
 * stream, and activity buffers are flushed per stream as they fill, so a
 * record can reach back a second and more before those read before it.
 * The unions are exact whatever the order. Records are collected in
 * batches of MB_GPU_BATCH; each batch is sorted and becomes, per class
 * (computation kernels, communication kernels, copies and memsets), a run
 * of disjoint intervals. A run that starts after the last one ends joins
 * it (records of one stream come in order, so an ordered trace keeps one
 * run); otherwise runs are merged two by two while the newer is at least
 * half as long as the one before, as a binary counter carries, so that
 * each interval is merged O(log n) times and at most MB_GPU_RUNS runs
 * exist. Time is counted once everything is read: one sweep over the three
 * classes' unions tells of each stretch of time whether it is busy, runs
 * communication, and runs it with computation at once. Memory: 16 bytes
 * per disjoint interval of a class (overlapping records join), the newer
 * run's once more while two runs merge (runs_merge_last), and the batch.
 *
 * HTA's figures are taken over the records launched before the final step
 * (gpu_window.c): the union of everything up to the final step's start,
 * then the held records launched before it.
 *
 * Steps may come before or after the GPU records of their time, so the
 * counted stretches are kept (at most MB_GPU_SPANS per device, merged
 * across their smallest gaps when there are more) and shared out to the
 * steps once everything is read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/build.h"

/* What a communication kernel's name holds, in any case (rules.md §4.10):
 * the libraries' names, then the collectives' own, which PyTorch's
 * symmetric memory (multimem_all_reduce_kernel, one_shot_all_reduce), and
 * custom all-reduce kernels (vLLM's cross_device_reduce_1stage, TensorRT-
 * LLM's oneShotAllReduceKernel) are named after. */
static const char *const comm_words[] = {
    "nccl",          "rccl",       "nvshmem",  "mscclpp",    "multimem",
    "all_reduce",    "allreduce",  "all_gather", "allgather", "reduce_scatter",
    "reducescatter", "all_to_all", "alltoall", "cross_device_reduce",
};

int model_kernel_is_comm(const char *name)
{
    for (const char *p = name; *p; p++)
        for (size_t i = 0; i < sizeof comm_words / sizeof comm_words[0]; i++)
            if ((*p | 0x20) == comm_words[i][0] &&
                strncasecmp(p, comm_words[i], strlen(comm_words[i])) == 0)
                return 1;
    return 0;
}

static int device_of(model_builder *b, uint32_t device, size_t *pos)
{
    profile_model *m = b->m;
    int added;
    uint32_t *i = hmap_slot(&b->gpu_index, device, &added);
    if (!i)
        return -1;
    if (added) {
        size_t n = m->ngpus;
        if (n >= UINT32_MAX - 1 || vec_grow(&m->gpus, &b->cap_gpus, n, sizeof *m->gpus) < 0 ||
            vec_grow(&b->gpu, &b->cap_bgpus, n, sizeof *b->gpu) < 0) {
            hmap_remove(&b->gpu_index, i);
            return -1;
        }
        memset(&m->gpus[n], 0, sizeof m->gpus[n]);
        memset(&b->gpu[n], 0, sizeof b->gpu[n]);
        m->gpus[n].device = device;
        m->gpus[n].first_ns = UINT64_MAX;
        *i = (uint32_t)m->ngpus++;
    }
    *pos = *i;
    return 0;
}

static int tagged_cmp(const void *pa, const void *pb)
{
    const mb_tagged *a = pa, *b = pb;
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

/* Merges a class's last two runs into one, in the older run's array grown
 * to hold both: their union is written from the end of it, taking the
 * interval that ends last of either run first (disjoint runs are in order
 * of end as of start, and the write never passes the older run's unread
 * part), then moved to the front. A merge then needs the two runs and the
 * growth, not a third array as long as both: the worst case's peak. */
static int runs_merge_last(mb_runs *r)
{
    mb_intervals *x = &r->run[r->n - 2], *y = &r->run[r->n - 1];
    size_t total = x->n + y->n;
    if (total > x->cap) {
        mb_interval *v = realloc(x->v, total * sizeof *v);
        if (!v)
            return -1;
        x->v = v;
        x->cap = total;
    }
    size_t i = x->n, j = y->n, k = total;
    while (i || j) {
        mb_interval iv = !j || (i && x->v[i - 1].end > y->v[j - 1].end) ? x->v[--i] : y->v[--j];
        if (k < total && iv.end >= x->v[k].start) {
            if (iv.start < x->v[k].start)
                x->v[k].start = iv.start;
        } else {
            x->v[--k] = iv;
        }
    }
    x->n = total - k;
    memmove(x->v, x->v + k, x->n * sizeof *x->v);
    free(y->v);
    *y = (mb_intervals){ NULL, 0, 0 };
    r->n--;
    return 0;
}

/* Adds the batch's intervals of class cls (the batch sorted) to the
 * class's runs. */
static int runs_add(mb_runs *r, const mb_tagged *batch, size_t nb, uint32_t cls)
{
    size_t first = 0;
    while (first < nb && batch[first].cls != cls)
        first++;
    if (first == nb)
        return 0;
    mb_intervals *last = r->n ? &r->run[r->n - 1] : NULL;
    if (!last || batch[first].start < last->v[last->n - 1].end) { /* a run of its own */
        if (r->n == MB_GPU_RUNS) /* cannot happen while runs halve; kept safe */
            return -1;
        last = &r->run[r->n++];
        *last = (mb_intervals){ NULL, 0, 0 };
    }
    for (size_t k = first; k < nb; k++) {
        if (batch[k].cls != cls)
            continue;
        if (vec_grow(&last->v, &last->cap, last->n, sizeof *last->v) < 0)
            return -1;
        union_push(last->v, &last->n, (mb_interval){ batch[k].start, batch[k].end });
    }
    while (r->n >= 2 && r->run[r->n - 2].n <= 2 * r->run[r->n - 1].n)
        if (runs_merge_last(r) < 0)
            return -1;
    return 0;
}

/* ---- stretches kept for the steps ------------------------------------------ */

/* A gap between two stretches, by the index of the first. */
typedef struct gap_at {
    uint64_t gap;
    size_t at;
} gap_at;

static int gap_before(const gap_at *x, const gap_at *y)
{
    return x->gap != y->gap ? x->gap < y->gap : x->at < y->at;
}

static void gap_swap(gap_at *v, size_t i, size_t j)
{
    gap_at t = v[i];
    v[i] = v[j];
    v[j] = t;
}

/* Puts the k + 1 smallest gaps (by length, then place: no two are equal)
 * in v[0..k], in no order: a quickselect, linear on average, since a full
 * sort of every stretch's gap each time the stretches are halved was most
 * of the time of a profile with millions of GPU records. */
static void gaps_select(gap_at *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gap_before(&v[mid], &v[lo]))
            gap_swap(v, lo, mid);
        if (gap_before(&v[hi], &v[lo]))
            gap_swap(v, lo, hi);
        if (gap_before(&v[hi], &v[mid]))
            gap_swap(v, mid, hi);
        gap_at pivot = v[mid];
        size_t i = lo, j = hi;
        for (;;) { /* Hoare: v[lo..j] <= pivot <= v[i..hi] */
            while (gap_before(&v[i], &pivot))
                i++;
            while (gap_before(&pivot, &v[j]))
                j--;
            if (i >= j)
                break;
            gap_swap(v, i++, j--);
        }
        if (i == j) { /* the pivot itself, in its place */
            if (k == i)
                return;
            if (k < i)
                hi = i - 1;
            else
                lo = i + 1;
        } else if (k <= j) {
            hi = j;
        } else {
            lo = j + 1;
        }
    }
}

/* Halves the stretches by joining each of the half with the smallest gaps
 * after it to its successor: the long gaps, where steps usually change,
 * stay exact. */
static int spans_compact(mb_gpu *g)
{
    size_t n = g->nspans;
    gap_at *gaps = malloc((n - 1) * sizeof *gaps);
    unsigned char *join = calloc(n, 1);
    if (!gaps || !join) {
        free(gaps);
        free(join);
        return -1;
    }
    for (size_t i = 0; i + 1 < n; i++)
        gaps[i] = (gap_at){ g->spans[i + 1].start - g->spans[i].end, i };
    gaps_select(gaps, n - 1, n / 2 - 1);
    for (size_t k = 0; k < n / 2; k++)
        join[gaps[k].at] = 1;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && join[i - 1]) {
            mb_span *d = &g->spans[out - 1], *s = &g->spans[i];
            d->end = s->end;
            d->busy += s->busy;
            d->comm += s->comm;
            d->overlap += s->overlap;
        } else {
            g->spans[out++] = g->spans[i];
        }
    }
    g->nspans = out;
    g->spans_merged = 1;
    free(gaps);
    free(join);
    return 0;
}

/* A counted piece [a, b) whose content is the same throughout: joined to
 * the last stretch when it continues it with the same content, so that a
 * stretch stays uniform (split between steps exactly) until merged. */
static int span_add(mb_gpu *g, uint64_t a, uint64_t b, int comm, int overlap)
{
    uint64_t len = b - a;
    mb_span *last = g->nspans ? &g->spans[g->nspans - 1] : NULL;
    if (last && last->end == a && last->busy == last->end - last->start &&
        last->comm == (comm ? last->busy : 0) && last->overlap == (overlap ? last->busy : 0)) {
        last->end = b;
        last->busy += len;
        last->comm += comm ? len : 0;
        last->overlap += overlap ? len : 0;
        return 0;
    }
    if (g->nspans == MB_GPU_SPANS && spans_compact(g) < 0)
        return -1;
    if (vec_grow(&g->spans, &g->cap_spans, g->nspans, sizeof *g->spans) < 0)
        return -1;
    g->spans[g->nspans++] = (mb_span){ a, b, len, comm ? len : 0, overlap ? len : 0 };
    return 0;
}

/* ---- counting ------------------------------------------------------------------ */

static void gap_add(model_gpu_device *d, uint64_t start, uint64_t dur)
{
    d->idle_gaps++;
    d->idle_gap_ns += dur;
    int i = MODEL_GPU_GAPS;
    while (i > 0 && d->longest[i - 1].dur_ns < dur)
        i--;
    if (i == MODEL_GPU_GAPS)
        return;
    memmove(&d->longest[i + 1], &d->longest[i],
            (MODEL_GPU_GAPS - 1 - (size_t)i) * sizeof *d->longest);
    d->longest[i] = (model_gap){ start, dur };
}

/* What a sweep does with each piece [a, b) of time, mask the classes
 * active throughout it. */
typedef int (*piece_fn)(void *ctx, uint64_t a, uint64_t b, unsigned mask);

/* The device's figures over every record, and its stretches for the steps. */
typedef struct all_ctx {
    model_gpu_device *d;
    mb_gpu *g;
} all_ctx;

static int count_piece(void *ctx, uint64_t a, uint64_t b, unsigned mask)
{
    model_gpu_device *d = ((all_ctx *)ctx)->d;
    mb_gpu *g = ((all_ctx *)ctx)->g;
    int comm = (mask >> MB_GPU_COMM) & 1u, overlap = comm && ((mask >> MB_GPU_COMPUTE) & 1u);
    if (g->counted_any && a > g->busy_end && a - g->busy_end >= MB_IDLE_GAP_NS)
        gap_add(d, g->busy_end, a - g->busy_end);
    d->busy_ns += b - a;
    if (comm)
        d->comm_ns += b - a;
    if (overlap)
        d->comm_overlap_ns += b - a;
    g->busy_end = b;
    g->counted_any = 1;
    return span_add(g, a, b, comm, overlap);
}

/* HTA's figures, over the records launched before the final step. */
static int window_piece(void *ctx, uint64_t a, uint64_t b, unsigned mask)
{
    model_gpu_window *w = ctx;
    if (!w->last_ns)
        w->first_ns = a;
    w->last_ns = b;
    w->class_ns[mask & 7u] += b - a;
    return 0;
}

/* Goes over the classes' unions: each piece between two interval bounds of
 * any class, with the classes active in it. */
static int sweep(const mb_intervals *lists, piece_fn piece, void *ctx)
{
    size_t at[MB_GPU_CLASSES] = { 0 };
    uint64_t t = UINT64_MAX;
    for (int c = 0; c < MB_GPU_CLASSES; c++)
        if (lists[c].n && lists[c].v[0].start < t)
            t = lists[c].v[0].start;
    while (t != UINT64_MAX) {
        unsigned mask = 0;
        uint64_t next = UINT64_MAX;
        for (int c = 0; c < MB_GPU_CLASSES; c++) {
            if (at[c] == lists[c].n)
                continue;
            mb_interval iv = lists[c].v[at[c]];
            if (iv.start <= t)
                mask |= 1u << c;
            uint64_t bound = iv.start > t ? iv.start : iv.end;
            if (bound < next)
                next = bound;
        }
        if (mask && piece(ctx, t, next, mask) < 0)
            return -1;
        t = next;
        for (int c = 0; c < MB_GPU_CLASSES; c++)
            while (at[c] < lists[c].n && lists[c].v[at[c]].end <= t)
                at[c]++;
    }
    return 0;
}

/* Sorts the batch and adds it to the classes' runs. */
static int gpu_flush(mb_gpu *g)
{
    mb_sort(g->batch, g->nbatch, sizeof *g->batch, tagged_cmp);
    for (uint32_t c = 0; c < MB_GPU_CLASSES; c++)
        if (runs_add(&g->merged[c], g->batch, g->nbatch, c) < 0)
            return -1;
    g->nbatch = 0;
    return 0;
}

/* Each class's runs made one union, in lists. */
static int runs_union(mb_runs *merged, mb_intervals *lists)
{
    for (int c = 0; c < MB_GPU_CLASSES; c++) {
        mb_runs *r = &merged[c];
        while (r->n >= 2)
            if (runs_merge_last(r) < 0)
                return -1;
        lists[c] = r->n ? r->run[0] : (mb_intervals){ NULL, 0, 0 };
    }
    return 0;
}

/* A sweep's pieces cut to [lo, hi) on their way to another's. */
typedef struct clip_ctx {
    piece_fn piece;
    void *ctx;
    uint64_t lo, hi;
} clip_ctx;

static int clip_piece(void *ctx, uint64_t a, uint64_t b, unsigned mask)
{
    const clip_ctx *c = ctx;
    a = a > c->lo ? a : c->lo;
    b = b < c->hi ? b : c->hi;
    return a < b ? c->piece(c->ctx, a, b, mask) : 0;
}

/* The held records launched before the final step (unordered), from its
 * start s on, as one union per class into held (freed by the caller). */
static int held_unions(const mb_gpu *g, uint64_t s, mb_intervals *held)
{
    mb_tagged *v = malloc((g->nheld ? g->nheld : 1) * sizeof *v);
    mb_runs runs[MB_GPU_CLASSES];
    memset(runs, 0, sizeof runs);
    if (!v)
        return -1;
    for (size_t i = 0; i < g->nheld; i++)
        v[i] = (mb_tagged){ g->held[i].start > s ? g->held[i].start : s, g->held[i].end,
                            g->held[i].cls };
    mb_sort(v, g->nheld, sizeof *v, tagged_cmp);
    int rc = 0;
    for (uint32_t c = 0; c < MB_GPU_CLASSES && rc == 0; c++)
        rc = runs_add(&runs[c], v, g->nheld, c);
    free(v);
    for (int c = 0; c < MB_GPU_CLASSES; c++)
        held[c] = runs[c].n ? runs[c].run[0] : (mb_intervals){ NULL, 0, 0 };
    return rc;
}

/* One sweep over every record's unions: prof's figures, and HTA's up to
 * the final step's start (to the end when no step is left out). */
typedef struct both_ctx {
    all_ctx all;
    clip_ctx hta;
} both_ctx;

static int both_piece(void *ctx, uint64_t a, uint64_t b, unsigned mask)
{
    both_ctx *x = ctx;
    return count_piece(&x->all, a, b, mask) < 0 ? -1 : clip_piece(&x->hta, a, b, mask);
}

/* HTA's figures from the final step's start s on (gpu_window.c): the held
 * records launched before it. */
static int window_after(model_builder *b, model_gpu_device *d, mb_gpu *g, uint64_t s)
{
    mb_intervals held[MB_GPU_CLASSES] = { { NULL, 0, 0 } };
    if (mb_window_settle(b, g, &d->hta.left_out) < 0)
        return -1;
    if (!d->hta.final_step_out)
        return 0;
    int rc = held_unions(g, s, held);
    if (rc == 0)
        rc = sweep(held, window_piece, &d->hta);
    for (int c = 0; c < MB_GPU_CLASSES; c++)
        free(held[c].v);
    return rc;
}

/* Everything read: each class's runs become one union, which is counted
 * for prof's figures and HTA's. */
static int gpu_count(model_builder *b, model_gpu_device *d, mb_gpu *g)
{
    mb_intervals lists[MB_GPU_CLASSES];
    uint64_t s;
    if (gpu_flush(g) < 0 || runs_union(g->merged, lists) < 0)
        return -1;
    d->hta.final_step_out = mb_window_final(b, g, &s);
    d->hta.final_step_unknown = mb_window_unknown(b, g);
    uint64_t hta_end = d->hta.final_step_out ? s : UINT64_MAX;
    both_ctx both = { { d, g }, { window_piece, &d->hta, 0, hta_end } };
    if (sweep(lists, both_piece, &both) < 0)
        return -1;
    return window_after(b, d, g, s);
}

int mb_gpu_event(model_builder *b, const prof_event *ev, int comm)
{
    size_t pos;
    uint64_t start = ev->start_ns, end = start + ev->dur_ns;
    uint32_t cls = MB_GPU_COPY;
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
        d->comm_kernels += comm != 0;
        cls = comm ? MB_GPU_COMM : MB_GPU_COMPUTE;
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
    mb_tagged rec = { start, end, cls };
    if (mb_window_hold(b, g, &rec, ev->correlation) < 0 ||
        vec_grow(&g->batch, &g->cap_batch, g->nbatch, sizeof *g->batch) < 0)
        return -1;
    g->batch[g->nbatch++] = rec;
    return g->nbatch == MB_GPU_BATCH ? gpu_flush(g) : 0;
}

/* ---- steps ------------------------------------------------------------------------ */

/* A kept step: its interval, and where it is in the model's steps. */
typedef struct kept_step {
    uint64_t start, end;
    size_t index;
} kept_step;

static int kept_cmp(const void *pa, const void *pb)
{
    const kept_step *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* The steps whose activity was kept (rules.md §1: complete and sampled), by
 * start; *n 0 when none. */
static kept_step *kept_steps(const profile_model *m, size_t *n, uint64_t *total)
{
    kept_step *v = malloc((m->nsteps ? m->nsteps : 1) * sizeof *v);
    *n = 0;
    *total = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < m->nsteps; i++) {
        const model_step *st = &m->steps[i];
        if ((st->flags & PROF_STEP_INCOMPLETE) || !(st->flags & PROF_STEP_SAMPLED) || !st->dur_ns)
            continue;
        uint64_t end = st->start_ns + st->dur_ns;
        v[(*n)++] = (kept_step){ st->start_ns, end < st->start_ns ? UINT64_MAX : end, i };
        *total += st->dur_ns;
    }
    /* Steps mostly arrive in order already; kept_cmp orders whole values,
     * so leaving an ordered array as it is gives what the sort would. */
    for (size_t i = 1; i < *n; i++)
        if (kept_cmp(&v[i - 1], &v[i]) > 0) {
            mb_sort(v, *n, sizeof *v, kept_cmp);
            break;
        }
    return v;
}

/* Shares each kept stretch out to the steps it overlaps, in proportion to
 * the overlap (exact for a uniform stretch); each step's share of busy
 * time is added to its gpu_busy_ns. */
static void device_steps(model_gpu_device *d, const mb_gpu *g, const kept_step *steps,
                         size_t nsteps, uint64_t total, model_step *all)
{
    double busy = 0, comm = 0, overlap = 0;
    size_t first = 0;
    for (size_t k = 0; k < nsteps; k++) {
        uint64_t a = steps[k].start, b = steps[k].end;
        size_t lo = first, hi = g->nspans; /* first stretch ending after a */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->spans[mid].end <= a)
                lo = mid + 1;
            else
                hi = mid;
        }
        double mine = 0;
        for (size_t i = lo; i < g->nspans && g->spans[i].start < b; i++) {
            const mb_span *s = &g->spans[i];
            uint64_t from = s->start > a ? s->start : a, to = s->end < b ? s->end : b;
            double f = (double)(to - from) / (double)(s->end - s->start);
            busy += f * (double)s->busy;
            mine += f * (double)s->busy;
            comm += f * (double)s->comm;
            overlap += f * (double)s->overlap;
        }
        all[steps[k].index].gpu_busy_ns += (uint64_t)(mine + 0.5);
        first = lo; /* steps by start: later ones begin no earlier */
    }
    d->step_ns = total;
    d->step_busy_ns = (uint64_t)(busy + 0.5);
    d->step_comm_ns = (uint64_t)(comm + 0.5);
    d->step_overlap_ns = (uint64_t)(overlap + 0.5);
    d->step_interpolated = g->spans_merged;
}

static int device_cmp(const void *pa, const void *pb)
{
    const model_gpu_device *a = pa, *b = pb;
    return (a->device > b->device) - (a->device < b->device);
}

/* Over thinned steps (series.c) the kept ones stand for all of them:
 * their times are scaled to the time of every complete sampled step. */
static void device_steps_scale(model_gpu_device *g, uint64_t all_ns, uint64_t kept_ns)
{
    if (!kept_ns || !g->step_ns)
        return;
    double f = (double)all_ns / (double)kept_ns;
    g->step_ns = all_ns;
    g->step_busy_ns = (uint64_t)llround((double)g->step_busy_ns * f);
    g->step_comm_ns = (uint64_t)llround((double)g->step_comm_ns * f);
    g->step_overlap_ns = (uint64_t)llround((double)g->step_overlap_ns * f);
}

int mb_gpu_finish(model_builder *b)
{
    profile_model *m = b->m;
    size_t nsteps;
    uint64_t total;
    if (!m->ngpus) /* the steps are wanted for the devices alone */
        return 0;
    kept_step *steps = kept_steps(m, &nsteps, &total);
    if (!steps)
        return -1;
    for (size_t i = 0; i < m->ngpus; i++) {
        if (gpu_count(b, &m->gpus[i], &b->gpu[i]) < 0) {
            free(steps);
            return -1;
        }
        device_steps(&m->gpus[i], &b->gpu[i], steps, nsteps, total, m->steps);
        if (m->step_thinning)
            device_steps_scale(&m->gpus[i], m->step_totals.sampled_ns, total);
    }
    free(steps);
    mb_gpu_free(b);
    mb_sort(m->gpus, m->ngpus, sizeof *m->gpus, device_cmp);
    return 0;
}

void mb_gpu_free(model_builder *b)
{
    for (size_t i = 0; b->gpu && i < b->m->ngpus; i++) {
        free(b->gpu[i].batch);
        for (int c = 0; c < MB_GPU_CLASSES; c++)
            for (size_t k = 0; k < b->gpu[i].merged[c].n; k++)
                free(b->gpu[i].merged[c].run[k].v);
        free(b->gpu[i].spans);
        free(b->gpu[i].held);
    }
    free(b->gpu);
    b->gpu = NULL;
    hmap_free(&b->gpu_index);
    mb_window_free(b);
}
