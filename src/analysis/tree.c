/* tree.c - the call-tree and counter sections of the report. The tree has
 * one root per thread; nodes under 0.1% of profiled time are folded into
 * one "(other)" child of their parent so that the report stays readable and
 * small whatever the depth of the program. Counters keep the points that
 * report_points keeps of them. */
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/sections.h"

typedef struct tree_walk {
    analysis_ctx *c;
    double fold_ns;        /* nodes below this inclusive time are folded */
    uint32_t thread;
} tree_walk;

static void add_node(tree_walk *w, cJSON *arr, uint32_t n);

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
    cJSON *arr = jarr(w->c, node, "children");
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
    uint64_t o_calls = 0, o_ns = 0;
    size_t folded = 0;
    for (i = 0; i < count; i++) {
        const model_node *k = &m->nodes[kids[i]];
        if ((double)k->incl_ns < w->fold_ns) {
            o_calls += k->calls;
            o_ns += k->incl_ns;
            folded++;
        } else {
            add_node(w, arr, kids[i]);
        }
    }
    free(kids);
    if (folded) {
        cJSON *o = jpush_obj(w->c, arr);
        jstr(w->c, o, "name", "(other)");
        jnum(w->c, o, "thread", w->thread);
        jnum(w->c, o, "calls", (double)o_calls);
        jnum(w->c, o, "incl_ns", (double)o_ns);
        jnum(w->c, o, "self_ns", (double)o_ns);
        jnum(w->c, o, "folded", (double)folded);
        jarr(w->c, o, "children");
    }
}

static void add_node(tree_walk *w, cJSON *arr, uint32_t n)
{
    const profile_model *m = w->c->m;
    const model_node *node = &m->nodes[n];
    const model_op *op = node->op < m->nops ? &m->ops[node->op] : NULL;
    cJSON *o = jpush_obj(w->c, arr);
    jstr(w->c, o, "name", op ? op->name : "?");
    if (op)
        jstr(w->c, o, "kind", op_kind_name(op->kind));
    jnum(w->c, o, "thread", w->thread);
    jnum(w->c, o, "calls", (double)node->calls);
    jnum(w->c, o, "incl_ns", (double)node->incl_ns);
    jnum(w->c, o, "self_ns", (double)node->self_ns);
    add_children(w, o, n);
}

void section_call_tree(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *root = jobj(c, report, "call_tree");
    jstr(c, root, "name", "<root>");
    uint64_t calls = 0, incl = 0;
    cJSON *threads = cJSON_CreateArray();
    tree_walk w = { c, 0.001 * (double)m->profiled_ns, 0 };
    for (size_t i = 0; i < m->nthreads; i++) {
        const model_thread *t = &m->threads[i];
        if (t->root >= m->nnodes)
            continue;
        const model_node *r = &m->nodes[t->root];
        char name[48];
        cJSON *o = jpush_obj(c, threads);
        w.thread = t->index;
        jstr(c, o, "name", t->name ? t->name : fmt_text(name, sizeof name, "thread %u",
                                                         t->index));
        jnum(c, o, "thread", t->index);
        uint64_t t_calls = 0;
        for (uint32_t k = r->first_child; k != MODEL_NONE; k = m->nodes[k].next_sibling)
            t_calls += m->nodes[k].calls;
        jnum(c, o, "calls", (double)t_calls);
        jnum(c, o, "incl_ns", (double)t->busy_ns);
        jnum(c, o, "self_ns", 0);
        add_children(&w, o, t->root);
        calls += t_calls;
        incl += t->busy_ns;
    }
    jnum(c, root, "calls", (double)calls);
    jnum(c, root, "incl_ns", (double)incl);
    jnum(c, root, "self_ns", 0);
    if (!threads || !root || !cJSON_AddItemToObject(root, "children", threads)) {
        cJSON_Delete(threads);
        c->ok = 0;
    }
}

static double sample_value(const void *series, size_t i)
{
    return ((const model_series *)series)->samples[i].value;
}

void section_counters(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, "counters");
    for (size_t i = 0; i < m->nseries; i++) {
        const model_series *s = &m->series[i];
        if (s->is_memory || s->nsamples == 0)
            continue;
        cJSON *o = jpush_obj(c, arr);
        jstr(c, o, "name", s->name);
        cJSON *pts = jarr(c, o, "points");
        double lo = s->samples[0].value, hi = lo;
        for (size_t k = 0; k < s->nsamples; k++) {
            lo = s->samples[k].value < lo ? s->samples[k].value : lo;
            hi = s->samples[k].value > hi ? s->samples[k].value : hi;
        }
        size_t *keep, n = report_points(c, s, s->nsamples, sample_value, &keep);
        for (size_t k = 0; k < n; k++) {
            size_t at = keep ? keep[k] : k;
            cJSON *p = jpush_obj(c, pts);
            jnum(c, p, "t_ns", (double)s->samples[at].t_ns);
            jnum(c, p, "value", s->samples[at].value);
        }
        free(keep);
        jnum(c, o, "samples", (double)s->nsamples);
        jnum(c, o, "min", lo);
        jnum(c, o, "max", hi);
        jnum(c, o, "final", s->samples[s->nsamples - 1].value);
    }
}
