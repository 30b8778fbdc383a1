/* tree.c - the call-tree and counter sections of the report. The tree has
 * one root per thread; nodes under 0.1% of profiled time are folded into
 * one "(other)" child of their parent so that the report stays readable and
 * small whatever the depth of the program, and threads past the report's
 * limit on names into one "(other threads)" root. Counters keep the points
 * that report_points keeps of them, the report's limit of the counters. */
#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"
#include "analysis/sections.h"

typedef struct tree_walk {
    analysis_ctx *c;
    double fold_ns;        /* nodes below this inclusive time are folded */
    double fold_gpu_ns;    /* ... and at most this GPU time             */
    uint32_t thread;
} tree_walk;

static void add_node(tree_walk *w, cJSON *arr, uint32_t n);

/* GPU work launched in a node (rules.md §3.2), in profiles that have some. */
static void node_gpu(analysis_ctx *c, cJSON *o, uint64_t total, uint64_t self, uint64_t kernels)
{
    if (!c->m->has_gpu)
        return;
    jnum(c, o, RK_GPU_NS, (double)total);
    jnum(c, o, RK_GPU_SELF_NS, (double)self);
    jnum(c, o, RK_GPU_KERNELS, (double)kernels);
}

static int by_incl_desc(const void *a, const void *b, void *arg)
{
    const model_node *nodes = arg;
    uint64_t x = nodes[*(const uint32_t *)a].incl_ns, y = nodes[*(const uint32_t *)b].incl_ns;
    return (x < y) - (x > y);
}

/* The children of node n, largest first, with small ones folded. */
static void add_children(tree_walk *w, cJSON *node, uint32_t n)
{
    const profile_model *m = w->c->m;
    cJSON *arr = jarr(w->c, node, RK_CHILDREN);
    size_t count = 0;
    for (uint32_t k = m->nodes[n].first_child; k != MODEL_NONE; k = m->nodes[k].next_sibling)
        count++;
    if (!count || !arr)
        return;
    uint32_t *kids = xcalloc(w->c, count, sizeof *kids);
    if (!kids)
        return;
    size_t i = 0;
    for (uint32_t k = m->nodes[n].first_child; k != MODEL_NONE; k = m->nodes[k].next_sibling)
        kids[i++] = k;
    qsort_r(kids, count, sizeof *kids, by_incl_desc, m->nodes);
    uint64_t o_calls = 0, o_ns = 0, o_gpu = 0, o_kernels = 0;
    size_t folded = 0;
    for (i = 0; i < count; i++) {
        const model_node *k = &m->nodes[kids[i]];
        if ((double)k->incl_ns < w->fold_ns && (double)k->gpu_ns <= w->fold_gpu_ns) {
            o_calls += k->calls;
            o_ns += k->incl_ns;
            o_gpu += k->gpu_ns;
            o_kernels += k->kernels;
            folded++;
        } else {
            add_node(w, arr, kids[i]);
        }
    }
    free(kids);
    if (folded) {
        cJSON *o = jpush_obj(w->c, arr);
        jstr(w->c, o, RK_NAME, "(other)");
        jnum(w->c, o, RK_THREAD, w->thread);
        jnum(w->c, o, RK_CALLS, (double)o_calls);
        jnum(w->c, o, RK_INCL_NS, (double)o_ns);
        jnum(w->c, o, RK_SELF_NS, (double)o_ns);
        node_gpu(w->c, o, o_gpu, o_gpu, o_kernels);
        jnum(w->c, o, RK_FOLDED, (double)folded);
        jarr(w->c, o, RK_CHILDREN);
    }
}

static void add_node(tree_walk *w, cJSON *arr, uint32_t n)
{
    const profile_model *m = w->c->m;
    const model_node *node = &m->nodes[n];
    const model_op *op = node->op < m->nops ? &m->ops[node->op] : NULL;
    cJSON *o = jpush_obj(w->c, arr);
    jstr(w->c, o, RK_NAME, op ? op->name : "?");
    if (op)
        jstr(w->c, o, RK_KIND, op_kind_name(op->kind));
    jnum(w->c, o, RK_THREAD, w->thread);
    jnum(w->c, o, RK_CALLS, (double)node->calls);
    jnum(w->c, o, RK_INCL_NS, (double)node->incl_ns);
    jnum(w->c, o, RK_SELF_NS, (double)node->self_ns);
    node_gpu(w->c, o, node->gpu_ns, node->gpu_self_ns, node->kernels);
    add_children(w, o, n);
}

/* A thread's busy time; NAN for a thread without regions. */
static double thread_busy(const void *model, size_t i)
{
    const profile_model *m = model;
    return m->threads[i].root < m->nnodes ? (double)m->threads[i].busy_ns : NAN;
}

/* The threads past the limit on names, as one root. */
static void add_other_threads(analysis_ctx *c, cJSON *threads, size_t folded, uint64_t calls,
                              uint64_t incl)
{
    cJSON *o = jpush_obj(c, threads);
    jstr(c, o, RK_NAME, "(other threads)");
    jnum(c, o, RK_CALLS, (double)calls);
    jnum(c, o, RK_INCL_NS, (double)incl);
    jnum(c, o, RK_SELF_NS, 0);
    jnum(c, o, RK_FOLDED, (double)folded);
    jarr(c, o, RK_CHILDREN);
}

void section_call_tree(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *root = jobj(c, report, RK_CALL_TREE);
    jstr(c, root, RK_NAME, "<root>");
    uint64_t calls = 0, incl = 0, o_calls = 0, o_incl = 0;
    cJSON *threads = cJSON_CreateArray();
    tree_walk w = { c, 0.001 * (double)m->profiled_ns, 0.001 * (double)m->gpu_join.joined_ns, 0 };
    size_t cut;
    unsigned char *listed = report_listed(c, m, m->nthreads, thread_busy, &cut);
    for (size_t i = 0; i < m->nthreads; i++) {
        const model_thread *t = &m->threads[i];
        if (t->root >= m->nnodes)
            continue;
        const model_node *r = &m->nodes[t->root];
        uint64_t t_calls = 0;
        for (uint32_t k = r->first_child; k != MODEL_NONE; k = m->nodes[k].next_sibling)
            t_calls += m->nodes[k].calls;
        calls += t_calls;
        incl += t->busy_ns;
        if (listed && !listed[i]) {
            o_calls += t_calls;
            o_incl += t->busy_ns;
            continue;
        }
        char name[48];
        cJSON *o = jpush_obj(c, threads);
        w.thread = t->index;
        jstr(c, o, RK_NAME, t->name ? t->name : fmt_text(name, sizeof name, "thread %u",
                                                         t->index));
        jnum(c, o, RK_THREAD, t->index);
        jnum(c, o, RK_CALLS, (double)t_calls);
        jnum(c, o, RK_INCL_NS, (double)t->busy_ns);
        jnum(c, o, RK_SELF_NS, 0);
        node_gpu(c, o, r->gpu_ns, r->gpu_self_ns, r->kernels);
        add_children(&w, o, t->root);
    }
    free(listed);
    if (cut)
        add_other_threads(c, threads, cut, o_calls, o_incl);
    jnum(c, root, RK_CALLS, (double)calls);
    jnum(c, root, RK_INCL_NS, (double)incl);
    jnum(c, root, RK_SELF_NS, 0);
    jb_attach(&c->ok, root, RK_CHILDREN, threads);
}

static double sample_value(const void *series, size_t i)
{
    return ((const model_series *)series)->samples[i].value;
}

/* A counter's number of samples; NAN for a memory series. */
static double counter_samples(const void *series, size_t i)
{
    const model_series *s = &((const model_series *)series)[i];
    return s->is_memory || s->nsamples == 0 ? NAN : (double)s->total;
}

void section_counters(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, RK_COUNTERS);
    size_t cut;
    unsigned char *listed = report_listed(c, m->series, m->nseries, counter_samples, &cut);
    for (size_t i = 0; i < m->nseries; i++) {
        const model_series *s = &m->series[i];
        if (s->is_memory || s->nsamples == 0 || (listed && !listed[i]))
            continue;
        cJSON *o = jpush_obj(c, arr);
        jstr(c, o, RK_NAME, s->name);
        cJSON *pts = jarr(c, o, RK_POINTS);
        size_t *keep, n = report_points(c, s, s->nsamples, sample_value, &keep);
        for (size_t k = 0; k < n; k++) {
            size_t at = keep ? keep[k] : k;
            cJSON *p = jpush_obj(c, pts);
            jnum(c, p, RK_T_NS, (double)s->samples[at].t_ns);
            jnum(c, p, RK_VALUE, s->samples[at].value);
        }
        free(keep);
        jnum(c, o, RK_SAMPLES, (double)s->total);
        if (s->thinning)
            jnum(c, o, RK_SAMPLES_KEPT, (double)s->nsamples);
        jnum(c, o, RK_MIN, s->low); /* of every sample (series.c) */
        jnum(c, o, RK_MAX, s->peak);
        jnum(c, o, RK_FINAL, s->final);
    }
    free(listed);
    if (cut)
        jnum(c, report, RK_COUNTERS_TOTAL, (double)(cut + c->o.max_names));
}
