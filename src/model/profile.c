/* profile.c - profile_model_load: one pass over the reader's events into
 * operations and threads, handing regions to calltree.c (self time, the
 * call tree, sync sites), GPU records to gpu.c, collectives (communication
 * kernels, COMM regions) to collective.c and steps and samples to series.c,
 * then the finishing passes each of them needs. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "format/meta_keys.h"
#include "model/build.h"
#include "prof.h"
#include "util/error.h"

#define PROGRESS_BLOCKS 64    /* report progress about this often              */
#define PROGRESS_EVENTS 1024u /* and look at the reader's block count this often */

void mb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/* ---- name id caches ------------------------------------------------------ */

int mb_idmap_set(mb_idmap *map, const prof_event *ev, uint32_t index)
{
    if (vec_grow_zero(&map->v, &map->n, ev->name_id, sizeof *map->v) < 0)
        return -1;
    map->v[ev->name_id] = (mb_name_slot){ ev->name, index };
    return 0;
}

/* ---- operations ------------------------------------------------------------ */

uint64_t mb_op_hash(const char *name, int gpu)
{
    return hash_fnv1a_str(name, NULL) ^ (uint64_t)gpu;
}

int mb_op_is(const void *ctx, uint32_t i)
{
    const mb_op_key *k = ctx;
    const model_op *op = &k->ops[i];
    return (op->kind == MODEL_KIND_GPU) == (k->gpu != 0) && strcmp(op->name, k->name) == 0;
}

uint64_t mb_op_rehash(const void *ctx, uint32_t i)
{
    const model_op *op = &((const mb_op_key *)ctx)->ops[i];
    return mb_op_hash(op->name, op->kind == MODEL_KIND_GPU);
}

/* A new operation at the end of ops. 0, or -1 out of memory. */
static int op_new(model_builder *b, const char *name, uint32_t kind, int gpu)
{
    profile_model *m = b->m;
    if (m->nops >= MODEL_NONE - 1 || vec_grow(&m->ops, &b->cap_ops, m->nops, sizeof *m->ops) < 0)
        return -1;
    model_op *op = &m->ops[m->nops];
    mb_op_init(op);
    if (!(op->name = strdup(name)))
        return -1;
    op->kind = gpu ? MODEL_KIND_GPU : kind;
    op->comm = gpu && model_kernel_is_comm(name);
    m->nops++;
    return 0;
}

/* The operation named name (a kernel when gpu), created on first sight
 * with the kind of that first region. */
static int op_find_or_add(model_builder *b, const char *name, uint32_t kind, int gpu,
                          uint32_t *out)
{
    mb_op_key key = { b->m->ops, name, gpu };
    int added;
    uint32_t *i = hmap_slot_by(&b->op_index, mb_op_hash(name, gpu), mb_op_is, mb_op_rehash, &key,
                               &added);
    if (!i)
        return -1;
    if (added) {
        if (op_new(b, name, kind, gpu) < 0) {
            key.ops = b->m->ops; /* op_new may have moved them */
            hmap_remove_by(&b->op_index, i, mb_op_rehash, &key);
            return -1;
        }
        *i = (uint32_t)b->m->nops - 1;
    }
    *out = *i;
    return 0;
}

/* A name id not cached yet: its op, found or made, and cached. */
static int op_of_new_id(model_builder *b, mb_idmap *map, const prof_event *ev, int gpu,
                        uint32_t *out)
{
    if (op_find_or_add(b, ev->name, ev->kind, gpu, out) < 0)
        return -1;
    return mb_idmap_set(map, ev, *out);
}

/* Inline: every region and kernel asks, and nearly every answer is cached. */
static inline __attribute__((always_inline)) int op_of_event(model_builder *b,
                                                             const prof_event *ev, int gpu,
                                                             uint32_t *out)
{
    mb_idmap *map = gpu ? &b->kernel_ops : &b->region_ops;
    if (mb_idmap_get(map, ev, out))
        return 0;
    return op_of_new_id(b, map, ev, gpu, out);
}

void mb_op_init(model_op *op)
{
    memset(op, 0, sizeof *op);
    sketch_init(&op->dur);
    op->others_thread = MODEL_NONE;
}

/* One call of op lasting dur: its moments, before its time batch counts
 * it (its count and total are the batches', its duration sketch is
 * sketch_add's). */
static inline __attribute__((always_inline)) void op_moments(model_op *op, uint64_t dur)
{
    /* Sums of deviations from the first duration ("shifted data"): as
     * stable as Welford's update while the shift is a typical duration,
     * which the first one is, and free of its division per call. */
    if (time_batches_empty(&op->batches))
        op->shift = (double)dur;
    double d = (double)dur - op->shift;
    op->sum_dev += d;
    op->sum_dev2 += d * d;
}

/* Mean and sum of squared deviations from the mean, from the shifted sums. */
static void op_finish(model_op *op)
{
    /* The sketch counts every call, and its extremes are exact: they are
     * not kept twice per call. */
    op->min_ns = op->dur.min;
    op->max_ns = op->dur.max;
    op->calls = op->incl_ns = 0; /* every call is in one batch */
    for (uint32_t i = 0; i < TIMEBATCH_MAX; i++) {
        op->calls += op->batches.at[i].calls;
        op->incl_ns += op->batches.at[i].ns;
    }
    if (!op->calls)
        return;
    double n = (double)op->calls;
    op->mean_ns = op->shift + op->sum_dev / n;
    op->m2 = op->sum_dev2 - op->sum_dev * op->sum_dev / n;
    if (op->m2 < 0) /* rounding, when every call lasted the same */
        op->m2 = 0;
}

/* ---- classes (format §6.5) ------------------------------------------------- */

/* Keeps a class attribute until the ops exist; other keys are ignored, as
 * the format asks. */
static int class_add(model_builder *b, const prof_event *ev)
{
    if (ev->subkind != PROF_ATTR_CLASS)
        return 0;
    if (vec_grow(&b->classes, &b->cap_classes, b->nclasses, sizeof *b->classes) < 0)
        return -1;
    mb_class *c = &b->classes[b->nclasses];
    c->name = strdup(ev->name);
    c->cls = strdup(prof_event_attr_value(ev));
    if (!c->name || !c->cls) {
        free(c->name);
        free(c->cls);
        return -1;
    }
    b->nclasses++;
    return 0;
}

/* The op of that name on the CPU (gpu 0) or the GPU, or NULL. */
static model_op *op_lookup(model_builder *b, const char *name, int gpu)
{
    mb_op_key key = { b->m->ops, name, gpu };
    const uint32_t *i = hmap_find_by(&b->op_index, mb_op_hash(name, gpu), mb_op_is, &key);
    return i ? &b->m->ops[*i] : NULL;
}

/* In file order, so that a later attribute of a name replaces an earlier
 * one. A class of a name that never ran names no op. */
static int classes_apply(model_builder *b)
{
    for (size_t i = 0; i < b->nclasses; i++)
        for (int gpu = 0; gpu < 2; gpu++) {
            model_op *op = op_lookup(b, b->classes[i].name, gpu);
            if (!op)
                continue;
            char *cls = strdup(b->classes[i].cls);
            if (!cls)
                return -1;
            free(op->cls);
            op->cls = cls;
        }
    return 0;
}

/* ---- threads ----------------------------------------------------------------- */

/* The position of thread index, the thread made on first sight. */
static int thread_find(model_builder *b, uint32_t index, uint32_t *pos)
{
    profile_model *m = b->m;
    size_t i = 0;
    if (index < MB_THREAD_DIRECT) {
        if (vec_grow_zero(&b->thread_pos, &b->nthread_pos, index, sizeof *b->thread_pos) < 0)
            return -1;
        i = b->thread_pos[index] ? b->thread_pos[index] - 1 : m->nthreads;
    } else { /* an index outside the format's range: rare, searched */
        while (i < m->nthreads && m->threads[i].index != index)
            i++;
    }
    if (i == m->nthreads) {
        if (vec_grow(&m->threads, &b->cap_threads, i, sizeof *m->threads) < 0 ||
            vec_grow(&b->threads, &b->cap_bthreads, i, sizeof *b->threads) < 0)
            return -1;
        uint32_t root = mb_node_root(b);
        if (root == MODEL_NONE)
            return -1;
        memset(&m->threads[i], 0, sizeof m->threads[i]);
        memset(&b->threads[i], 0, sizeof b->threads[i]);
        mb_rep_init(&b->threads[i].rep);
        m->threads[i].index = index;
        m->threads[i].root = root;
        m->nthreads++;
        if (index < MB_THREAD_DIRECT)
            b->thread_pos[index] = (uint32_t)m->nthreads;
    }
    b->last_thread_index = index;
    *pos = b->last_thread_pos = (uint32_t)i;
    return 0;
}

/* Inline: every event asks, mostly for the thread of the one before. */
static inline __attribute__((always_inline)) int thread_of(model_builder *b, uint32_t index,
                                                           uint32_t *pos)
{
    if (b->m->nthreads && b->last_thread_index == index) {
        *pos = b->last_thread_pos;
        return 0;
    }
    return thread_find(b, index, pos);
}

static int thread_define(model_builder *b, const prof_event *ev)
{
    uint32_t pos;
    char *name = strdup(ev->name);
    if (!name || thread_of(b, ev->thread, &pos) < 0) {
        free(name);
        return -1;
    }
    model_thread *t = &b->m->threads[pos];
    free(t->name);
    t->name = name;
    t->os_tid = ev->value;
    return 0;
}

/* ---- one event ------------------------------------------------------------------- */

/* A call of op: its moments, time batch and duration sketch, the sketch
 * folded on the reader's thread instead for the batches it says so of
 * (opcalls.c). */
static inline __attribute__((always_inline)) int op_count(model_builder *b, uint32_t op,
                                                          uint64_t start_ns, uint64_t dur_ns)
{
    model_op *o = &b->m->ops[op];
    op_moments(o, dur_ns);
    time_batches_add(&o->batches, start_ns, dur_ns);
    return b->sketched ? 0 : sketch_add(&o->dur, dur_ns);
}

static int region_add(model_builder *b, uint32_t pos, const prof_event *ev)
{
    uint32_t op;
    if (op_of_event(b, ev, 0, &op) < 0 || op_count(b, op, ev->start_ns, ev->dur_ns) < 0)
        return -1;
    b->m->region_events++;
    if (ev->kind == PROF_KIND_COMM && mb_collective_region(b, ev) < 0)
        return -1;
    mb_reg reg = { ev->start_ns, ev->dur_ns, ev->depth, ev->kind, 0, 0 };
    return mb_join_region(b, pos, &reg, op);
}

static int kernel_add(model_builder *b, const prof_event *ev)
{
    uint32_t op;
    if (op_of_event(b, ev, 1, &op) < 0 || op_count(b, op, ev->start_ns, ev->dur_ns) < 0)
        return -1;
    model_op *o = &b->m->ops[op];
    o->self_ns += ev->dur_ns; /* a kernel has no children */
    if ((o->comm && mb_collective_kernel(b, ev) < 0) || mb_join_gpu(b, ev) < 0)
        return -1;
    return mb_gpu_event(b, ev, o->comm);
}

/* [*first, *last] widened to hold a call's span, its end saturated. */
static inline void span_widen(uint64_t *first, uint64_t *last, uint64_t start_ns, uint64_t dur_ns)
{
    uint64_t end = start_ns + dur_ns;
    if (end < start_ns)
        end = UINT64_MAX;
    if (start_ns < *first)
        *first = start_ns;
    if (end > *last)
        *last = end;
}

static void span_add(profile_model *m, uint64_t start_ns, uint64_t dur_ns)
{
    span_widen(&m->first_ns, &m->last_ns, start_ns, dur_ns);
}

static int event_add(model_builder *b, const prof_event *ev)
{
    uint32_t pos = 0;
    if (ev->type == PROF_EV_THREAD)
        return thread_define(b, ev);
    if (ev->type == PROF_EV_ATTR) /* a definition too, not an event */
        return class_add(b, ev);
    b->m->events++;
    span_add(b->m, ev->start_ns, ev->dur_ns);
    /* every thread that recorded anything but GPU activity is one of the
     * threads (whatever its index says) */
    if (ev->type != PROF_EV_GPU_KERNEL && ev->type != PROF_EV_GPU_MEMCPY &&
        ev->type != PROF_EV_GPU_MEMSET && thread_of(b, ev->thread, &pos) < 0)
        return -1;
    switch (ev->type) {
    case PROF_EV_REGION:
        return region_add(b, pos, ev);
    case PROF_EV_STEP:
        return mb_window_step(b, ev->start_ns) < 0 ? -1 : mb_step_add(b, ev);
    case PROF_EV_API:
        return mb_window_launch(b, ev) < 0 ? -1 : mb_join_api(b, pos, ev);
    case PROF_EV_MEMORY:
        return mb_sample_add(b, ev, 1);
    case PROF_EV_COUNTER:
        return mb_sample_add(b, ev, 0);
    case PROF_EV_GPU_KERNEL:
        return kernel_add(b, ev);
    case PROF_EV_GPU_MEMCPY:
    case PROF_EV_GPU_MEMSET:
        return mb_join_gpu(b, ev) < 0 ? -1 : mb_gpu_event(b, ev, 0);
    case PROF_EV_SYNC:
        return mb_join_sync(b, pos, ev);
    default: /* marks, dropped counts (taken from the status) */
        return 0;
    }
}

/* The regions handed over slim at the start of v (n entries), up to the
 * first entry handed over whole or the end: their operations numbered by
 * the reader's thread (opcalls.c), what event_add does with each whole,
 * from thread_of on, without finding its operation; the per-call figures
 * in one loop, which also finds where the run ends, then the call tree in
 * another (each touches only its own). Returns how many, or 0 when memory
 * ran out or a tag is not an op. */
static size_t slim_run_add(model_builder *b, uint32_t thread, const pf_slim *v, size_t n)
{
    profile_model *m = b->m;
    uint32_t pos;
    uint64_t first = m->first_ns, last = m->last_ns;
    size_t i = 0;
    if (thread_of(b, thread, &pos) < 0)
        return 0;
    /* The reader's thread numbers operations as op_find_or_add does, and
     * hands every first call over whole, so a tag is an op or
     * PF_SLIM_WHOLE, which is past every op. */
    for (; i < n && v[i].tag < m->nops; i++) {
        if (op_count(b, v[i].tag, v[i].start_ns, v[i].dur_ns) < 0)
            return 0;
        span_widen(&first, &last, v[i].start_ns, v[i].dur_ns); /* in registers, not m */
    }
    if (i < n && v[i].tag != PF_SLIM_WHOLE)
        return 0;
    m->first_ns = first;
    m->last_ns = last;
    m->events += i;
    m->region_events += i;
    return mb_join_region_run(b, pos, v, i) < 0 ? 0 : i;
}

static int slim_batch_add(model_builder *b, const pf_slim_batch *batch)
{
    const prof_event *whole = batch->whole;
    for (size_t i = 0, run; i < batch->count; i += run) {
        if (batch->slim[i].tag == PF_SLIM_WHOLE) {
            if (event_add(b, whole++) < 0)
                return -1;
            run = 1;
        } else if (!(run = slim_run_add(b, batch->thread, batch->slim + i, batch->count - i)))
            return -1;
    }
    return 0;
}

/* ---- finishing ---------------------------------------------------------------------- */

static int thread_cmp(const void *pa, const void *pb)
{
    const model_thread *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

void model_metadata_rank(const cJSON *meta, int *rank, int *world_size)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(meta, MK_RANK);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(meta, MK_WORLD_SIZE);
    /* Absent, not a number or out of range: unknown (format §4: never fatal). */
    *rank = cJSON_IsNumber(r) && r->valuedouble >= 0 && r->valuedouble <= INT_MAX
                ? (int)r->valuedouble : -1;
    *world_size = cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble <= INT_MAX
                      ? (int)w->valuedouble : -1;
}

/* What the model takes of the metadata: rank and world size, and whether
 * the profile records CUDA (launch.c). */
static void metadata_parse(model_builder *b)
{
    cJSON *root = cJSON_Parse(b->m->metadata);
    model_metadata_rank(root, &b->m->rank, &b->m->world_size);
    mb_join_start(b, root);
    cJSON_Delete(root);
}

static void builder_free(model_builder *b)
{
    if (b->calls)
        mb_calls_abort(b->calls);
    mb_join_free(b);
    mb_overlap_free(b); /* before mb_tree_free, which frees the threads */
    mb_tree_free(b);
    mb_gpu_free(b);
    free(b->region_ops.v);
    free(b->kernel_ops.v);
    mb_series_index_free(b);
    hmap_free(&b->op_index);
    hmap_free(&b->node_index);
    free(b->guess);
    free(b->thread_pos);
    for (size_t i = 0; i < b->nclasses; i++) {
        free(b->classes[i].name);
        free(b->classes[i].cls);
    }
    free(b->classes);
}

static int model_finish(model_builder *b)
{
    profile_model *m = b->m;
    mb_calls *calls = b->calls;
    b->calls = NULL; /* finished, or failed: freed either way */
    if ((calls && mb_calls_finish(calls, m) < 0) || mb_join_release_all(b) < 0 ||
        mb_tree_finish(b) < 0 || mb_overlap_finish(b) < 0 || mb_join_finish(b) < 0 ||
        mb_gpu_finish(b) < 0 ||
        mb_collective_finish(b) < 0 ||
        mb_steps_series_finish(m) < 0)
        return -1;
    for (size_t i = 0; i < m->nops; i++)
        op_finish(&m->ops[i]);
    if (classes_apply(b) < 0)
        return -1;
    mb_sort(m->threads, m->nthreads, sizeof *m->threads, thread_cmp);
    if (m->first_ns == UINT64_MAX)
        m->first_ns = 0;
    m->dropped_events = m->status.dropped_events;
    return 0;
}

/* ---- loading ---------------------------------------------------------------------------- */

static void progress_report(prof_reader *r, model_progress_fn progress, void *arg,
                            uint64_t *last_blocks, int force)
{
    prof_read_status st;
    if (!progress)
        return;
    prof_reader_status(r, &st);
    if (force || st.blocks >= *last_blocks + PROGRESS_BLOCKS) {
        *last_blocks = st.blocks;
        progress(st.bytes_read, st.file_size, arg);
    }
}

static prof_err model_build(prof_reader *r, const prof_tuning *t, profile_model *m,
                            model_progress_fn progress, void *arg, prof_error *err)
{
    model_builder b;
    const prof_event *evs;
    size_t nevs, n = 0;
    uint64_t last_blocks = 0;
    int rc;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.free_node = MODEL_NONE;
    b.keep = mb_keep_limit(t);
    b.repeat = !(t && t->no_repeat);
    b.join.off = t && t->no_join;
    b.calls = mb_calls_start(r); /* NULL: read event by event */
    m->rank = m->world_size = -1;
    m->first_ns = UINT64_MAX;
    prof_reader_version(r, &m->major, &m->minor);
    if (!(m->metadata = strdup(prof_reader_metadata(r))))
        goto nomem;
    metadata_parse(&b);
    progress_report(r, progress, arg, &last_blocks, 1);
    for (;;) {
        if (b.calls) { /* slim: the reader's thread decodes alone */
            pf_slim_batch batch;
            if ((rc = pf_reader_next_slim(r, &batch)) != 1)
                break;
            b.sketched = batch.seen;
            if (slim_batch_add(&b, &batch) < 0)
                goto nomem;
            b.sketched = 0;
            nevs = batch.count;
        } else {
            if ((rc = prof_reader_next_batch(r, &evs, &nevs)) != 1)
                break;
            for (size_t i = 0; i < nevs; i++)
                if (event_add(&b, &evs[i]) < 0)
                    goto nomem;
        }
        if ((n += nevs) >= PROGRESS_EVENTS) {
            n = 0;
            progress_report(r, progress, arg, &last_blocks, 0);
        }
    }
    if (rc < 0) { /* damage in a file that was closed cleanly */
        if (err)
            *err = *prof_reader_error(r);
        prof_err e = prof_reader_error(r)->code;
        builder_free(&b);
        profile_model_free(m);
        return e;
    }
    prof_reader_status(r, &m->status);
    if (model_finish(&b) < 0)
        goto nomem;
    builder_free(&b);
    if (progress)
        progress(m->status.file_size, m->status.file_size, arg);
    return PROF_OK;
nomem:
    builder_free(&b);
    profile_model_free(m);
    return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
}

prof_err profile_model_load(const char *path, const prof_tuning *t, profile_model *m,
                            model_progress_fn progress, void *arg, prof_error *err)
{
    prof_reader *r;
    memset(m, 0, sizeof *m);
    prof_err e = prof_reader_open(path, &r, err);
    if (e)
        return e;
    pf_reader_tune(r, t);
    e = model_build(r, t, m, progress, arg, err);
    prof_reader_close(r);
    if (e == PROF_OK && !(m->path = strdup(path))) {
        profile_model_free(m);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    return e;
}

void profile_model_free(profile_model *m)
{
    for (size_t i = 0; i < m->nops; i++) {
        free(m->ops[i].name);
        free(m->ops[i].cls);
        sketch_free(&m->ops[i].dur);
    }
    for (size_t i = 0; i < m->nthreads; i++)
        free(m->threads[i].name);
    for (size_t i = 0; i < m->nseries; i++) {
        free(m->series[i].name);
        free(m->series[i].samples);
    }
    free(m->ops);
    free(m->nodes);
    free(m->threads);
    free(m->steps);
    mb_step_totals_free(&m->step_totals);
    free(m->series);
    free(m->sync_sites);
    free(m->gpus);
    model_launch_stats_free(&m->launch_all);
    for (size_t i = 0; i < m->nlaunch; i++)
        model_launch_stats_free(&m->launch[i]);
    free(m->launch);
    free(m->comm_kernels);
    free(m->comm_regions);
    free(m->path);
    free(m->metadata);
    memset(m, 0, sizeof *m);
}

/* ---- lookups ------------------------------------------------------------------------------ */

double model_op_variance(const model_op *op)
{
    return op->calls < 2 ? 0.0 : op->m2 / (double)(op->calls - 1);
}
