/* export_folded_gpu.c - `prof export --format folded --gpu`: folded stacks
 * of GPU time, "a;b;c GPU_NS" a line, one line per call path that launched
 * GPU work directly, weighted by that work's time (its GPU self time,
 * rules.md §3.2), for flame graphs of where GPU time is launched. Unlike
 * the other exports, which stream the reader's events, it reads the
 * analysis model, whose join of GPU records to their launch calls and
 * regions gives the figures; its memory is the model's. Frames are written
 * as the CPU folded export writes them (eo_frame_text); work launched
 * outside every region is the frame "[outside regions]". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/export.h"
#include "output/export_out.h"
#include "util/error.h"
#include "util/vec.h"

#define OUTSIDE_FRAME "[outside regions]"

typedef struct gline {
    char *text;
    uint64_t ns;
} gline;

typedef struct gwalk {
    const profile_model *m;
    char **frames;         /* by operation, made when first needed  */
    gline *v;
    size_t n, cap;
    char *path;            /* the stack so far, ';' between frames   */
    size_t len, cap_path;
} gwalk;

/* Appends ";text" (or text at the start) to the path: its old length, or
 * SIZE_MAX when out of memory. */
static size_t path_push(gwalk *w, const char *text)
{
    size_t old = w->len, k = strlen(text), sep = w->len > 0;
    if (vec_grow(&w->path, &w->cap_path, w->len + sep + k, 1) < 0)
        return SIZE_MAX;
    if (sep)
        w->path[w->len++] = ';';
    memcpy(w->path + w->len, text, k);
    w->len += k;
    w->path[w->len] = '\0';
    return old;
}

static int line_add(gwalk *w, uint64_t ns)
{
    if (!ns)
        return 0;
    if (vec_grow(&w->v, &w->cap, w->n, sizeof *w->v) < 0 || !(w->v[w->n].text = strdup(w->path)))
        return -1;
    w->v[w->n++].ns = ns;
    return 0;
}

static const char *frame_of(gwalk *w, uint32_t op)
{
    if (!w->frames[op])
        w->frames[op] = eo_frame_text(w->m->ops[op].name);
    return w->frames[op];
}

/* The lines of node n's subtree, the path holding n's ancestors. */
static int walk(gwalk *w, uint32_t n)
{
    const model_node *node = &w->m->nodes[n];
    const char *frame = frame_of(w, node->op);
    size_t old = frame ? path_push(w, frame) : SIZE_MAX;
    if (old == SIZE_MAX || line_add(w, node->gpu_self_ns) < 0)
        return -1;
    for (uint32_t c = node->first_child; c != MODEL_NONE; c = w->m->nodes[c].next_sibling)
        if (w->m->nodes[c].gpu_ns && walk(w, c) < 0)
            return -1;
    w->len = old;
    w->path[old] = '\0';
    return 0;
}

/* A thread's lines, below its frame when thread_frames. */
static int walk_thread(gwalk *w, const model_thread *t, int thread_frames)
{
    const model_node *root = &w->m->nodes[t->root];
    w->len = 0;
    if (thread_frames) {
        char buf[32];
        if (!t->name)
            snprintf(buf, sizeof buf, "thread %u", t->index);
        char *name = eo_frame_text(t->name ? t->name : buf);
        size_t at = name ? path_push(w, name) : SIZE_MAX;
        free(name);
        if (at == SIZE_MAX)
            return -1;
    }
    size_t base = w->len;
    if (path_push(w, OUTSIDE_FRAME) == SIZE_MAX || line_add(w, root->gpu_self_ns) < 0)
        return -1;
    w->len = base;
    if (w->path)
        w->path[base] = '\0';
    for (uint32_t c = root->first_child; c != MODEL_NONE; c = w->m->nodes[c].next_sibling)
        if (w->m->nodes[c].gpu_ns && walk(w, c) < 0)
            return -1;
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(((const gline *)a)->text, ((const gline *)b)->text);
}

/* Sorted lines, those of equal text (threads merged, one name defined
 * twice) summed. */
static void write_lines(export_out *o, gline *v, size_t n)
{
    qsort(v, n, sizeof *v, by_text);
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = v[i].ns;
        while (i + 1 < n && strcmp(v[i].text, v[i + 1].text) == 0)
            ns += v[++i].ns;
        eo_str(o, v[i].text);
        eo_char(o, ' ');
        eo_u64(o, ns);
        eo_char(o, '\n');
    }
}

prof_err export_folded_gpu(const profile_model *m, unsigned options, FILE *out,
                           export_result *res, prof_error *err)
{
    gwalk w = { .m = m };
    prof_err e = PROF_OK;
    memset(res, 0, sizeof *res);
    res->status = m->status;
    export_out *o = malloc(sizeof *o);
    w.frames = calloc(m->nops ? m->nops : 1, sizeof *w.frames);
    if (!o || !w.frames)
        e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; e == PROF_OK && i < m->nthreads; i++)
        if (m->threads[i].root < m->nnodes &&
            walk_thread(&w, &m->threads[i], (options & EXPORT_OPT_THREAD_FRAMES) != 0) < 0)
            e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    if (e == PROF_OK) {
        eo_init(o, out);
        write_lines(o, w.v, w.n);
        if (eo_flush(o) < 0) {
            res->output_failed = 1;
            e = prof_error_set(err, PROF_ERR_IO, "%s",
                               o->failed > 0 ? strerror(o->failed) : "write error");
        }
    }
    for (size_t i = 0; i < w.n; i++)
        free(w.v[i].text);
    for (size_t i = 0; w.frames && i < m->nops; i++)
        free(w.frames[i]);
    free(w.frames);
    free(w.v);
    free(w.path);
    free(o);
    return e;
}
