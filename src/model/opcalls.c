/* opcalls.c - what the reader's thread folds beside the loading thread:
 * the per-call statistics of operations (mb_op_stats: moments and the
 * duration sketch). A batch function of the reader
 * (prof_reader_set_batch_fn) runs it on the reader's own thread, which
 * decodes each block for it before handing the block over, so that this
 * share of building runs beside the call tree, the steps and the series
 * that the loading thread builds. The steps, series and the operations'
 * time batches are left to the loading thread: the reader's thread also
 * fetches and decompresses every block, and with them it was the slower
 * of the two.
 *
 * It sees the same events in the same order as the loading thread, so it
 * numbers operations as op_find_or_add does (by name and whether a
 * kernel, in order of first appearance) and folds each operation's calls
 * in file order: every statistic, floating-point sums included, comes out
 * bit for bit what folding on one thread gives. mb_calls_finish moves
 * them into the model, checking that both numberings of the operations
 * agree. PROF_THREADS=1, or a single processor (pf_one_thread, which also
 * keeps the reader on one thread), leaves all of it to the loading thread,
 * folded as it meets them: the one-thread build that
 * tests/unit/model_threads.c compares with. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

struct mb_calls {
    model_op *ops;         /* statistics by op index; names copied     */
    size_t nops, cap_ops;
    hmap index;            /* ops by (name, is GPU), as op_index        */
    mb_idmap region_ops, kernel_ops; /* name id caches, as the builder's */
    prof_reader *reader;   /* whose batch function folds them           */
    int failed;            /* out of memory: the load fails            */
};

/* The op of ev (a kernel when gpu), numbered on first sight. */
static model_op *op_of(mb_calls *c, const prof_event *ev, int gpu)
{
    mb_idmap *map = gpu ? &c->kernel_ops : &c->region_ops;
    uint32_t i;
    if (mb_idmap_get(map, ev, &i))
        return &c->ops[i];
    mb_op_key key = { c->ops, ev->name, gpu };
    int added;
    uint32_t *slot = hmap_slot_by(&c->index, mb_op_hash(ev->name, gpu), mb_op_is, mb_op_rehash,
                                  &key, &added);
    if (!slot)
        return NULL;
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
            return NULL;
        }
        *slot = (uint32_t)c->nops++;
    }
    i = *slot;
    return mb_idmap_set(map, ev, i) < 0 ? NULL : &c->ops[i];
}

static int fold_one(mb_calls *c, const prof_event *ev)
{
    if (ev->type != PROF_EV_REGION && ev->type != PROF_EV_GPU_KERNEL)
        return 0;
    model_op *op = op_of(c, ev, ev->type == PROF_EV_GPU_KERNEL);
    return op ? mb_op_stats(op, ev->dur_ns) : -1;
}

static void fold(void *arg, const prof_event *ev, size_t n)
{
    mb_calls *c = arg;
    for (size_t k = 0; k < n && !c->failed; k++)
        if (fold_one(c, &ev[k]) < 0)
            c->failed = 1; /* nothing more is folded */
}

mb_calls *mb_calls_start(prof_reader *r)
{
    if (pf_one_thread())
        return NULL;
    mb_calls *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->reader = r;
    if (prof_reader_set_batch_fn(r, fold, c) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

/* What was not moved into the model (after a move: the ops' names, the
 * loader's own copies). */
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
    for (size_t i = 0; ok && i < c->nops; i++) {
        mb_op_move_calls(&m->ops[i], &c->ops[i]);
        sketch_init(&c->ops[i].dur); /* moved */
    }
    calls_free(c);
    return ok ? 0 : -1;
}

/* The reader's thread may still be folding into c: it is stopped first. */
void mb_calls_abort(mb_calls *c)
{
    pf_reader_abandon(c->reader);
    calls_free(c);
}
