/* opcalls.c - the model's side of the slim hand-over (format.h,
 * pf_reader_set_slim_fn): numbering operations on the reader's thread, so
 * that the loading thread gets each region as its op, start, duration,
 * depth and kind (24 bytes) instead of an 88-byte event it would decode a
 * second time and then look up by name. Once a region's name has an op,
 * the reader decodes the later regions of that name straight into slim
 * entries with it, and only the rest reaches the tag function.
 *
 * The tag function sees the events in the loading thread's order, less
 * those, so it numbers operations as op_find_or_add does (by name and
 * whether a kernel, in order of first appearance). Each op's first call
 * is handed over whole, and the loading thread numbers the op itself
 * from it; mb_calls_finish checks that both numberings agree.
 *
 * The two threads' work is evened out with the calls' duration sketches:
 * the reader's thread folds those of the blocks it decodes while it is
 * ahead (sketch_calls: pf_slim_seen_fn), the loading thread those of the
 * others, and mb_calls_finish merges the first into the second. Which
 * thread folds a block depends on timing, but a merged sketch is the
 * sketch of all the values, whatever their order and split (sketch.h), so
 * its count, extremes and quantiles are the same; every other figure is
 * folded in file order on the loading thread. The model's figures are
 * thus bit for bit the one-thread build's. A reader without a thread
 * (PROF_THREADS=1, a single processor: pf_reader_threaded) is read event
 * by event with no tags: the one-thread build that
 * tests/unit/model_threads.c compares with. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "prof.h"

struct mb_calls {
    model_op *ops;         /* by op index: names, kinds and sketches   */
    size_t nops, cap_ops;
    hmap index;            /* ops by (name, is GPU), as op_index        */
    mb_idmap region_ops, kernel_ops; /* name id caches, as the builder's */
    prof_reader *reader;   /* whose slim function numbers them          */
    int failed;            /* out of memory: the load fails            */
};

/* The index of ev's op (a kernel when gpu) in *i, numbered on first
 * sight: 1 when numbered now, 0 when known, -1 when memory ran out. */
static int op_number(mb_calls *c, const prof_event *ev, int gpu, uint32_t *i)
{
    mb_idmap *map = gpu ? &c->kernel_ops : &c->region_ops;
    if (mb_idmap_get(map, ev, i))
        return 0;
    mb_op_key key = { c->ops, ev->name, gpu };
    int added;
    uint32_t *slot = hmap_slot_by(&c->index, mb_op_hash(ev->name, gpu), mb_op_is, mb_op_rehash,
                                  &key, &added);
    if (!slot)
        return -1;
    if (added) {
        model_op *op = NULL;
        if (c->nops < MODEL_NONE - 1 &&
            vec_grow(&c->ops, &c->cap_ops, c->nops, sizeof *c->ops) == 0) {
            op = &c->ops[c->nops];
            mb_op_init(op);
            op->name = strdup(ev->name);
            op->kind = gpu ? MODEL_KIND_GPU : 0; /* what mb_op_is compares */
        }
        if (!op || !op->name) {
            hmap_remove_by(&c->index, slot, mb_op_rehash, &key);
            return -1;
        }
        *slot = (uint32_t)c->nops++;
    }
    *i = *slot;
    return mb_idmap_set(map, ev, *i) < 0 ? -1 : added;
}

/* ev's tag for the slim hand-over: its op, or PF_SLIM_WHOLE for what the
 * loading thread needs whole. That is every event but a region: kernels,
 * whose ops it finds itself; a region's first call, with which the loading
 * thread numbers its op as this side did; and communication regions, which
 * it matches with their kernels by name. */
static uint32_t tag_one(mb_calls *c, const prof_event *ev)
{
    if (ev->type != PROF_EV_REGION && ev->type != PROF_EV_GPU_KERNEL)
        return PF_SLIM_WHOLE;
    uint32_t i;
    int rc = op_number(c, ev, ev->type == PROF_EV_GPU_KERNEL, &i);
    if (rc < 0)
        c->failed = 1; /* nothing more is numbered */
    if (rc != 0 || ev->type != PROF_EV_REGION || ev->kind == PROF_KIND_COMM)
        return PF_SLIM_WHOLE;
    return i;
}

static void tag(void *arg, const prof_event *ev, size_t n, uint32_t *tags)
{
    mb_calls *c = arg;
    for (size_t k = 0; k < n; k++)
        tags[k] = c->failed ? PF_SLIM_WHOLE : tag_one(c, &ev[k]);
}

/* The duration sketch of the call of a whole event, if it is one. */
static int sketch_whole(mb_calls *c, const prof_event *ev)
{
    if (ev->type != PROF_EV_REGION && ev->type != PROF_EV_GPU_KERNEL)
        return 0;
    uint32_t i;
    if (op_number(c, ev, ev->type == PROF_EV_GPU_KERNEL, &i) < 0) /* numbered: found */
        return -1;
    return sketch_add(&c->ops[i].dur, ev->dur_ns);
}

/* The calls' durations into their ops' sketches, for the blocks shown. */
static void sketch_calls(void *arg, const pf_slim *v, size_t n, const prof_event *whole)
{
    mb_calls *c = arg;
    for (size_t k = 0; k < n && !c->failed; k++)
        if (v[k].tag != PF_SLIM_WHOLE ? sketch_add(&c->ops[v[k].tag].dur, v[k].dur_ns) < 0
                                      : sketch_whole(c, whole++) < 0)
            c->failed = 1;
}

mb_calls *mb_calls_start(prof_reader *r)
{
    if (!pf_reader_threaded(r))
        return NULL;
    mb_calls *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->reader = r;
    if (pf_reader_set_slim_fn(r, tag, sketch_calls, c) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void calls_free(mb_calls *c)
{
    for (size_t i = 0; i < c->nops; i++) {
        free(c->ops[i].name);
        sketch_free(&c->ops[i].dur);
    }
    free(c->ops);
    hmap_free(&c->index);
    free(c->region_ops.v);
    free(c->kernel_ops.v);
    free(c);
}

int mb_calls_finish(mb_calls *c, profile_model *m)
{
    int ok = !c->failed && c->nops == m->nops;
    for (size_t i = 0; ok && i < c->nops; i++)
        ok = strcmp(c->ops[i].name, m->ops[i].name) == 0 &&
             (c->ops[i].kind == MODEL_KIND_GPU) == (m->ops[i].kind == MODEL_KIND_GPU);
    for (size_t i = 0; ok && i < c->nops; i++)
        ok = sketch_merge(&m->ops[i].dur, &c->ops[i].dur) == 0;
    calls_free(c);
    return ok ? 0 : -1;
}

/* The reader's thread may still be writing into c: it is stopped first. */
void mb_calls_abort(mb_calls *c)
{
    pf_reader_abandon(c->reader);
    calls_free(c);
}
