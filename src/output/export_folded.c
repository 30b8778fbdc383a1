/* export_folded.c - the folded-stacks export ("a;b;c SELF_NS" per line, one
 * line per distinct stack, sorted), which flamegraph.pl, speedscope and
 * inferno read.
 *
 * Regions arrive in the order they END, per thread: children before their
 * parent, each with its depth. A region's ancestors are therefore unknown
 * when it arrives, so its stack is kept relative ("b;c" below a parent yet
 * to come) and completed when the parent arrives, which prefixes its own
 * frame. Relative stacks are interned as nodes (frame, node below), so that
 * prefixing is one hash lookup and the pending self times of each depth are
 * a map from node to nanoseconds: memory grows with the number of distinct
 * stacks, never with the number of events, even below a region that spans
 * the whole run.
 *
 * Self time is a region's duration less its direct children's. Regions left
 * without a parent (a file cut short, regions still open at the end, a gap
 * in depths) are kept as stacks rooted at their outermost known frame, so
 * that the lines always add up to the regions' self times. Frames are the
 * names with ';' replaced by ':', control characters by spaces and bytes
 * that are not UTF-8 by U+FFFD; the empty name is "[unnamed]". With
 * EXPORT_OPT_THREAD_FRAMES each stack starts with its thread's name. */
#include <stdlib.h>
#include <string.h>

#include "output/export.h"
#include "output/export_out.h"
#include "util/error.h"
#include "util/hmap.h"
#include "util/jsonesc.h"
#include "util/vec.h"

#define NODE_MAX (1u << 31)

/* Self nanoseconds by stack node, in order of first sight: an index over
 * an array, which merging and writing walk. A zeroed sums is empty. */
typedef struct sum {
    uint64_t ns;
    uint32_t node;
} sum;

typedef struct sums {
    hmap index;       /* node -> position in v */
    sum *v;
    size_t n, cap;
} sums;

typedef struct level {
    uint32_t depth;
    uint64_t dur_sum; /* of the regions completed at this depth  */
    sums selfs;       /* relative stack node -> self ns          */
} level;

typedef struct thread_stacks {
    uint32_t thread;
    level *levels; /* pending, by increasing depth; levels[n..cap) are spare */
    size_t n, cap;
    sums done;     /* stacks with no parent to come: node -> self ns         */
} thread_stacks;

typedef struct node {
    uint32_t frame, below;
} node;

typedef struct folded {
    hmap frame_ids;    /* name pointer (stable until the reader closes) -> frame */
    char **frames;     /* frame -> display text                                  */
    uint32_t nframes;
    size_t frames_cap;
    hmap node_ids;     /* frame << 32 | below -> node (nodes start at 1)         */
    node *nodes;
    uint32_t nnodes;
    size_t nodes_cap;
    hmap thread_ids;   /* profile thread -> index into threads                   */
    thread_stacks *threads;
    uint32_t nthreads;
    size_t threads_cap;
    sums scratch;      /* reused while a level is rewritten                      */
    hmap unnamed_threads; /* profile thread -> its "thread N" frame              */
} folded;

static prof_err nomem(export_ctx *x)
{
    return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
}

/* Adds a frame of the given text (taken over; NULL when out of memory).
 * @return the frame, 0 when out of memory (frames start at 1). */
static uint32_t new_frame(folded *f, char *text)
{
    if (!text || f->nframes + 1 >= NODE_MAX ||
        vec_grow(&f->frames, &f->frames_cap, f->nframes + 1, sizeof *f->frames) < 0) {
        free(text);
        return 0;
    }
    if (f->nframes == 0)
        f->frames[f->nframes++] = NULL; /* frame 0: none */
    f->frames[f->nframes] = text;
    return f->nframes++;
}

/* The frame of a name, added on first sight; 0 when out of memory. */
static uint32_t frame_of(folded *f, const char *name)
{
    int added;
    uint32_t *id = hmap_slot(&f->frame_ids, (uint64_t)(uintptr_t)name, &added);
    if (id && added && !(*id = new_frame(f, eo_frame_text(name))))
        return 0;
    return id ? *id : 0;
}

/* The node of the stack `frame;<below>`. 0 when out of memory or past the
 * limit (nodes start at 1; 0 is the empty stack). */
static uint32_t node_of(folded *f, uint32_t frame, uint32_t below)
{
    int added;
    uint32_t *id = hmap_slot(&f->node_ids, (uint64_t)frame << 32 | below, &added);
    if (!id)
        return 0;
    if (!added)
        return *id;
    if (f->nnodes + 1 >= NODE_MAX ||
        vec_grow(&f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof *f->nodes) < 0)
        return 0;
    if (f->nnodes == 0)
        f->nodes[f->nnodes++] = (node){ 0, 0 };
    f->nodes[f->nnodes] = (node){ frame, below };
    *id = f->nnodes++;
    return *id;
}

static thread_stacks *thread_of(folded *f, uint32_t thread)
{
    int added;
    uint32_t *i = hmap_slot(&f->thread_ids, thread, &added);
    if (!i)
        return NULL;
    if (added) {
        if (vec_grow(&f->threads, &f->threads_cap, f->nthreads, sizeof *f->threads) < 0)
            return NULL;
        memset(&f->threads[f->nthreads], 0, sizeof *f->threads);
        f->threads[f->nthreads].thread = thread;
        *i = f->nthreads++;
    }
    return &f->threads[*i];
}

static int add(sums *s, uint32_t stack, uint64_t ns)
{
    int added;
    uint32_t *i = hmap_slot(&s->index, stack, &added);
    if (!i)
        return -1;
    if (added) {
        if (vec_grow(&s->v, &s->cap, s->n, sizeof *s->v) < 0) {
            hmap_remove(&s->index, i);
            return -1;
        }
        s->v[s->n] = (sum){ 0, stack };
        *i = (uint32_t)s->n++;
    }
    s->v[*i].ns += ns;
    return 0;
}

/* Empties s; what a big level held is let go, as hmap_clear does. */
static void sums_clear(sums *s)
{
    hmap_clear(&s->index);
    s->n = 0;
    if (s->cap > 64) {
        free(s->v);
        s->v = NULL;
        s->cap = 0;
    }
}

static void sums_free(sums *s)
{
    hmap_free(&s->index);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Adds every stack of `from` to `to`, each below `frame` when it is not 0. */
static int merge(folded *f, sums *to, const sums *from, uint32_t frame)
{
    for (size_t i = 0; i < from->n; i++) {
        uint32_t n = from->v[i].node;
        if (frame && !(n = node_of(f, frame, n)))
            return -1;
        if (add(to, n, from->v[i].ns) < 0)
            return -1;
    }
    return 0;
}

/* Removes the top pending level, its stacks moved into `to` below `frame`. */
static int pop_level(folded *f, thread_stacks *t, sums *to, uint32_t frame)
{
    level *l = &t->levels[--t->n];
    int rc = merge(f, to, &l->selfs, frame);
    sums_clear(&l->selfs);
    l->dur_sum = 0;
    return rc;
}

/* A new top pending level of depth d. */
static level *push_level(thread_stacks *t, uint32_t d)
{
    if (vec_grow_zero(&t->levels, &t->cap, t->n, sizeof *t->levels) < 0)
        return NULL;
    level *l = &t->levels[t->n++];
    l->depth = d;
    l->dur_sum = 0;
    return l;
}

/* The children level (top, depth d + 1) becomes the parent's level of
 * depth d: when there is one below it, the stacks move into it below
 * `frame`; otherwise the level is rewritten in place. */
static level *adopt_children(folded *f, thread_stacks *t, uint32_t d, uint32_t frame)
{
    level *kids = &t->levels[t->n - 1];
    if (t->n >= 2 && t->levels[t->n - 2].depth == d) {
        if (pop_level(f, t, &t->levels[t->n - 2].selfs, frame) < 0)
            return NULL;
        return &t->levels[t->n - 1];
    }
    sums_clear(&f->scratch);
    if (merge(f, &f->scratch, &kids->selfs, frame) < 0)
        return NULL;
    sums tmp = kids->selfs;
    kids->selfs = f->scratch;
    f->scratch = tmp;
    kids->depth = d;
    kids->dur_sum = 0;
    return kids;
}

static prof_err region(export_ctx *x, const prof_event *ev)
{
    folded *f = x->state;
    thread_stacks *t = thread_of(f, ev->thread);
    uint32_t frame = t ? frame_of(f, ev->name) : 0;
    uint32_t own = frame ? node_of(f, frame, 0) : 0;
    if (!own)
        return nomem(x);
    uint32_t d = ev->depth;
    /* Deeper levels than the children's have lost their parents. */
    while (t->n && t->levels[t->n - 1].depth > d + 1ull)
        if (pop_level(f, t, &t->done, 0) < 0)
            return nomem(x);
    uint64_t children = 0;
    level *mine;
    if (t->n && t->levels[t->n - 1].depth == d + 1ull) {
        children = t->levels[t->n - 1].dur_sum;
        mine = adopt_children(f, t, d, frame);
    } else if (t->n && t->levels[t->n - 1].depth == d)
        mine = &t->levels[t->n - 1];
    else
        mine = push_level(t, d);
    uint64_t self = ev->dur_ns > children ? ev->dur_ns - children : 0;
    if (!mine || add(&mine->selfs, own, self) < 0)
        return nomem(x);
    mine->dur_sum += ev->dur_ns;
    if (d == 0 && pop_level(f, t, &t->done, 0) < 0)
        return nomem(x);
    return PROF_OK;
}

static prof_err folded_begin(export_ctx *x)
{
    x->state = calloc(1, sizeof(folded));
    return x->state ? PROF_OK : nomem(x);
}

static prof_err folded_event(export_ctx *x, const prof_event *ev)
{
    return ev->type == PROF_EV_REGION ? region(x, ev) : PROF_OK;
}

typedef struct line {
    char *text;
    uint64_t ns;
} line;

/* The text of a stack: its frames from the outermost, joined by ';'. */
static char *stack_text(const folded *f, uint32_t n)
{
    size_t len = 0;
    for (uint32_t i = n; i; i = f->nodes[i].below)
        len += strlen(f->frames[f->nodes[i].frame]) + 1;
    char *s = malloc(len ? len : 1), *p = s;
    if (!s)
        return NULL;
    for (uint32_t i = n; i; i = f->nodes[i].below) {
        const char *fr = f->frames[f->nodes[i].frame];
        size_t k = strlen(fr);
        if (p != s)
            *p++ = ';';
        memcpy(p, fr, k);
        p += k;
    }
    *p = '\0';
    return s;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(((const line *)a)->text, ((const line *)b)->text);
}

/* The frame naming a thread: its latest name, else "thread N". */
static uint32_t thread_frame(export_ctx *x, uint32_t thread)
{
    folded *f = x->state;
    const char *name = prof_reader_thread_name(x->reader, thread);
    if (name && *name)
        return frame_of(f, name);
    int added;
    uint32_t *id = hmap_slot(&f->unnamed_threads, thread, &added);
    if (id && added) {
        char buf[32];
        snprintf(buf, sizeof buf, "thread %u", thread);
        *id = new_frame(f, strdup(buf));
    }
    return id ? *id : 0;
}

/* Every stack with its self time, threads merged (or each below its
 * thread's frame), in `all`. */
static prof_err collect(export_ctx *x, sums *all)
{
    folded *f = x->state;
    for (uint32_t i = 0; i < f->nthreads; i++) {
        thread_stacks *t = &f->threads[i];
        while (t->n) /* regions whose parents never came */
            if (pop_level(f, t, &t->done, 0) < 0)
                return nomem(x);
        uint32_t frame = 0;
        if ((x->options & EXPORT_OPT_THREAD_FRAMES) && !(frame = thread_frame(x, t->thread)))
            return nomem(x);
        if (merge(f, all, &t->done, frame) < 0)
            return nomem(x);
    }
    return PROF_OK;
}

/* Sorted lines, those of equal text (one name defined twice) merged. */
static prof_err write_lines(export_ctx *x, const sums *all)
{
    folded *f = x->state;
    line *lines = calloc(all->n ? all->n : 1, sizeof *lines);
    size_t n = 0;
    prof_err e = lines ? PROF_OK : nomem(x);
    for (size_t i = 0; e == PROF_OK && i < all->n; i++) {
        if (all->v[i].ns == 0)
            continue;
        lines[n].ns = all->v[i].ns;
        if (!(lines[n++].text = stack_text(f, all->v[i].node)))
            e = nomem(x);
    }
    if (e == PROF_OK)
        qsort(lines, n, sizeof *lines, by_text);
    for (size_t i = 0; e == PROF_OK && i < n; i++) {
        uint64_t ns = lines[i].ns;
        while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0)
            ns += lines[++i].ns;
        eo_str(x->out, lines[i].text);
        eo_char(x->out, ' ');
        eo_u64(x->out, ns);
        eo_char(x->out, '\n');
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    return e;
}

static prof_err folded_end(export_ctx *x, const prof_read_status *st)
{
    (void)st;
    sums all = { 0 };
    prof_err e = collect(x, &all);
    if (e == PROF_OK)
        e = write_lines(x, &all);
    sums_free(&all);
    return e;
}

static void folded_finish(export_ctx *x)
{
    folded *f = x->state;
    if (!f)
        return;
    for (uint32_t i = 0; i < f->nthreads; i++) {
        thread_stacks *t = &f->threads[i];
        for (size_t j = 0; j < t->cap; j++)
            sums_free(&t->levels[j].selfs);
        free(t->levels);
        sums_free(&t->done);
    }
    free(f->threads);
    for (uint32_t i = 1; i < f->nframes; i++)
        free(f->frames[i]);
    free(f->frames);
    free(f->nodes);
    hmap_free(&f->frame_ids);
    hmap_free(&f->node_ids);
    hmap_free(&f->thread_ids);
    sums_free(&f->scratch);
    hmap_free(&f->unnamed_threads);
    free(f);
    x->state = NULL;
}

const export_ops export_folded_ops = { "folded", folded_begin, folded_event, folded_end,
                                       folded_finish };
