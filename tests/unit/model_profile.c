/* model_profile.c - profile_model_load over real files written by the test
 * writer: self time of nested and recursive regions, call-tree paths per
 * thread, orphans and regions cut off by a crash, steps and the step of
 * each sample, sync sites (the GPU side: model_gpu.c),
 * metadata, progress, errors, testdata/demo.prof against an independent
 * pass of the reader, and memory that follows distinct paths, not events.
 * Run from the repository root. */
#include <math.h>
#include <string.h>

#include "format/format.h"
#include "format_util.h"
#include "model/profile.h"
#include "synth.h"
#include "model_util.h"

#define DEMO "testdata/demo.prof"
#define MS 1000000ull

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_profile, .fini = teardown);

static const model_thread *thread_by_index(const profile_model *m, uint32_t index)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].index == index)
            return &m->threads[i];
    return NULL;
}

/* The node at a path of operation names ("a/b/c") below a thread's root. */
static const model_node *node_at(const profile_model *m, uint32_t thread, const char *path)
{
    const model_thread *t = thread_by_index(m, thread);
    cr_assert_not_null(t, "no thread %u", thread);
    uint32_t n = t->root;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *name = strtok_r(buf, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        uint32_t c = m->nodes[n].first_child;
        while (c != MODEL_NONE && strcmp(m->ops[m->nodes[c].op].name, name) != 0)
            c = m->nodes[c].next_sibling;
        if (c == MODEL_NONE)
            return NULL;
        cr_assert_eq(m->nodes[c].parent, n, "parent link of %s", name);
        n = c;
    }
    return &m->nodes[n];
}

static size_t children_of(const profile_model *m, const model_node *n)
{
    size_t k = 0;
    for (uint32_t c = n->first_child; c != MODEL_NONE; c = m->nodes[c].next_sibling)
        k++;
    return k;
}

static const model_op *op(const profile_model *m, const char *name)
{
    const model_op *o = mu_find_op(m, name);
    cr_assert_not_null(o, "no operation %s", name);
    return o;
}

static uint32_t op_index(const profile_model *m, const char *name)
{
    return (uint32_t)(op(m, name) - m->ops);
}

/* parent 100 with children 30 + 20: self 50; a region nested in itself
 * three times: a node per path, every call counted. */
Test(model_profile, self_time_and_recursion)
{
    const char *path = fu_path("nested.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    /* written in END order, as the recorder does: children first */
    synth_region(s, 0, "a", PROF_KIND_COMPUTE, 1, 10, 30);
    synth_region(s, 0, "b", PROF_KIND_DATA, 1, 50, 20);
    synth_region(s, 0, "parent", PROF_KIND_COMPUTE, 0, 0, 100);
    synth_region(s, 0, "r", PROF_KIND_COMPUTE, 2, 220, 20);
    synth_region(s, 0, "r", PROF_KIND_COMPUTE, 1, 210, 80);
    synth_region(s, 0, "r", PROF_KIND_COMPUTE, 0, 200, 100);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    const model_op *p = op(&m, "parent"), *a = op(&m, "a"), *b = op(&m, "b"), *r = op(&m, "r");
    cr_assert_eq(p->calls, 1u);
    cr_assert_eq(p->incl_ns, 100u);
    cr_assert_eq(p->self_ns, 50u);
    cr_assert_eq(a->self_ns, 30u);
    cr_assert_eq(b->self_ns, 20u);
    cr_assert_eq(b->kind, (uint32_t)PROF_KIND_DATA);
    cr_assert_eq(r->calls, 3u);
    cr_assert_eq(r->incl_ns, 200u, "nested calls of itself each count");
    cr_assert_eq(r->self_ns, 20u + 60u + 20u);
    cr_assert_eq(r->min_ns, 20u);
    cr_assert_eq(r->max_ns, 100u);
    cr_assert_float_eq(r->mean_ns, 200.0 / 3, 1e-9);
    double var = ((20 - 200.0 / 3) * (20 - 200.0 / 3) + (80 - 200.0 / 3) * (80 - 200.0 / 3) +
                  (100 - 200.0 / 3) * (100 - 200.0 / 3)) / 2;
    cr_assert_float_eq(model_op_variance(r), var, 1e-6);
    cr_assert_eq(model_op_variance(p), 0.0, "one call: no variance");
    cr_assert_eq(r->dur.count, 3u);
    cr_assert_leq(fabs(sketch_quantile(&r->dur, 0.5) - 80), 0.8, "median of 20, 80, 100");

    const model_node *n1 = node_at(&m, 0, "r"), *n2 = node_at(&m, 0, "r/r"),
                     *n3 = node_at(&m, 0, "r/r/r");
    cr_assert(n1 && n2 && n3, "a node per recursion level");
    cr_assert_null(node_at(&m, 0, "r/r/r/r"));
    cr_assert_eq(n1->incl_ns, 100u);
    cr_assert_eq(n1->self_ns, 20u);
    cr_assert_eq(n2->incl_ns, 80u);
    cr_assert_eq(n2->self_ns, 60u);
    cr_assert_eq(n3->self_ns, 20u);
    const model_node *pa = node_at(&m, 0, "parent/a");
    cr_assert_not_null(pa);
    cr_assert_eq(pa->calls, 1u);
    cr_assert_eq(node_at(&m, 0, "parent")->self_ns, 50u);
    cr_assert_eq(children_of(&m, node_at(&m, 0, "parent")), 2u);
    cr_assert_str_eq(m.ops[m.nodes[node_at(&m, 0, "parent")->first_child].op].name, "a",
                     "children in first-seen order");

    cr_assert_eq(m.profiled_ns, 200u, "two outermost regions of 100");
    cr_assert_eq(m.threads[0].busy_ns, 200u);
    cr_assert_eq(m.threads[0].regions, 6u);
    cr_assert_eq(m.region_events, 6u);
    cr_assert_eq(m.kind_ns[PROF_KIND_COMPUTE], 50u + 30u + 100u);
    cr_assert_eq(m.kind_ns[PROF_KIND_DATA], 20u);
    cr_assert_eq(m.nodes[m.threads[0].root].incl_ns, 200u);
    cr_assert_eq(m.nodes[m.threads[0].root].op, MODEL_NONE);
    cr_assert_eq(m.first_ns, 0u);
    cr_assert_eq(m.last_ns, 300u);
    cr_assert_eq(m.sync_count, 0u);
    cr_assert_eq(m.has_gpu, 0);
    profile_model_free(&m);
    cr_assert_null(m.ops);
    profile_model_free(&m); /* harmless twice */
}

/* Long calls that barely vary: the mean and the variance come out exact
 * where a naive sum of squares would lose every digit (1e24 against a
 * spread of 10). */
Test(model_profile, mean_and_variance_of_long_steady_calls_are_exact)
{
    const char *path = fu_path("steady.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    const uint64_t base = UINT64_C(1000000000000); /* 1000 s */
    for (uint64_t i = 0; i < 100000; i++)
        synth_region(s, 0, "long", PROF_KIND_COMPUTE, 0, i * 2 * base, base + i % 10);
    mu_close(s);
    profile_model m;
    mu_load(path, &m);
    const model_op *o = op(&m, "long");
    cr_assert_eq(o->calls, 100000u);
    cr_assert_eq(o->mean_ns, (double)base + 4.5, "mean %.6f", o->mean_ns);
    /* ten values 0..9 equally often: population variance 8.25 */
    double want = 8.25 * 100000.0 / 99999.0;
    cr_assert_float_eq(model_op_variance(o), want, 1e-9, "variance %.12f", model_op_variance(o));
    profile_model_free(&m);
}

/* A parent with far more distinct children than a floating list is
 * searched for (300 per step, each called three times, each with a child
 * of its own): the tree holds each path once with every call and time. */
Test(model_profile, wide_parent_keeps_one_node_per_path)
{
    enum { STEPS = 5, KIDS = 300, ROUNDS = 3 };
    const char *path = fu_path("wide.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    char name[32];
    uint64_t t = 0;
    for (int step = 0; step < STEPS; step++) {
        uint64_t t0 = t;
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < KIDS; k++) {
                snprintf(name, sizeof name, "op.%d", k);
                synth_region(s, 0, "inner", PROF_KIND_COMPUTE, 2, t + 3, 4);
                synth_region(s, 0, name, PROF_KIND_COMPUTE, 1, t, 10);
                t += 10;
            }
        synth_region(s, 0, "body", PROF_KIND_COMPUTE, 0, t0, t - t0 + 7);
        t += 7;
    }
    mu_close(s);
    profile_model m;
    mu_load(path, &m);
    const model_node *body = node_at(&m, 0, "body");
    cr_assert_not_null(body);
    cr_assert_eq(body->calls, (uint64_t)STEPS);
    cr_assert_eq(body->self_ns, (uint64_t)STEPS * 7);
    size_t children = 0;
    for (uint32_t c = body->first_child; c != MODEL_NONE; c = m.nodes[c].next_sibling)
        children++;
    cr_assert_eq(children, (size_t)KIDS, "one node per child path, not one per list");
    for (int k = 0; k < KIDS; k += 37) {
        char p2[64], p3[64];
        snprintf(p2, sizeof p2, "body/op.%d", k);
        snprintf(p3, sizeof p3, "body/op.%d/inner", k);
        const model_node *n = node_at(&m, 0, p2), *in = node_at(&m, 0, p3);
        cr_assert(n && in, "%s", p3);
        cr_assert_eq(n->calls, (uint64_t)STEPS * ROUNDS, "%s", p2);
        cr_assert_eq(n->incl_ns, (uint64_t)STEPS * ROUNDS * 10);
        cr_assert_eq(n->self_ns, (uint64_t)STEPS * ROUNDS * 6);
        cr_assert_eq(in->calls, (uint64_t)STEPS * ROUNDS);
        cr_assert_eq(in->incl_ns, (uint64_t)STEPS * ROUNDS * 4);
    }
    cr_assert_eq(op(&m, "inner")->calls, (uint64_t)STEPS * ROUNDS * KIDS);
    profile_model_free(&m);
}

/* The same operation under different parents is a different node; two
 * threads have two trees; repeated calls at one path merge. */
Test(model_profile, call_tree_two_threads)
{
    const char *path = fu_path("tree.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 100, "main");
    synth_thread(s, 3, 103, "worker");
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t t = i * 1000;
        /* thread 0: main { f { g } g } */
        synth_region(s, 0, "g", PROF_KIND_COMPUTE, 2, t + 10, 5);
        synth_region(s, 0, "f", PROF_KIND_COMPUTE, 1, t + 5, 20);
        synth_region(s, 0, "g", PROF_KIND_COMPUTE, 1, t + 30, 7);
        synth_region(s, 0, "main", PROF_KIND_COMPUTE, 0, t, 100);
        /* thread 3: g { f } */
        synth_region(s, 3, "f", PROF_KIND_IO, 1, t + 1, 40);
        synth_region(s, 3, "g", PROF_KIND_COMPUTE, 0, t, 50);
    }
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.nthreads, 2u);
    cr_assert_eq(m.threads[0].index, 0u);
    cr_assert_str_eq(m.threads[0].name, "main");
    cr_assert_eq(m.threads[0].os_tid, 100u);
    cr_assert_eq(m.threads[1].index, 3u);
    cr_assert_str_eq(m.threads[1].name, "worker");
    cr_assert_eq(m.nops, 3u);
    cr_assert_eq(m.nnodes, 2u + 4u + 2u, "two roots, main/f/g/g, g/f");

    const model_node *mfg = node_at(&m, 0, "main/f/g"), *mg = node_at(&m, 0, "main/g"),
                     *gf = node_at(&m, 3, "g/f");
    cr_assert(mfg && mg && gf);
    cr_assert_eq(mfg->calls, 3u);
    cr_assert_eq(mfg->incl_ns, 15u);
    cr_assert_eq(mg->incl_ns, 21u);
    cr_assert_eq(node_at(&m, 0, "main/f")->self_ns, 3u * 15u);
    cr_assert_eq(node_at(&m, 0, "main")->self_ns, 3u * (100u - 20u - 7u));
    cr_assert_eq(gf->calls, 3u);
    cr_assert_eq(node_at(&m, 3, "g")->self_ns, 30u);
    cr_assert_null(node_at(&m, 3, "main"));
    cr_assert_null(node_at(&m, 0, "g"), "g is never outermost on thread 0");

    cr_assert_eq(op(&m, "g")->calls, 9u);
    cr_assert_eq(op(&m, "g")->self_ns, 3u * (5u + 7u + 10u));
    cr_assert_eq(op(&m, "f")->kind, (uint32_t)PROF_KIND_COMPUTE, "kind of the first region");
    cr_assert_eq(m.threads[0].busy_ns, 300u);
    cr_assert_eq(m.threads[1].busy_ns, 150u);
    cr_assert_eq(m.profiled_ns, 450u);
    cr_assert_eq(m.kind_ns[PROF_KIND_IO], 120u, "kind by region, not by operation");
    uint64_t self = 0, kinds = 0;
    for (size_t i = 0; i < m.nops; i++)
        self += m.ops[i].self_ns;
    for (size_t k = 0; k < 5; k++)
        kinds += m.kind_ns[k];
    cr_assert_eq(self, m.profiled_ns, "self times add up to the profiled time");
    cr_assert_eq(kinds, m.profiled_ns);
    profile_model_free(&m);
}

/* A parent that was not recorded (begun in a skipped step) leaves orphans:
 * they go to the root, and do not take self time from a later region at
 * their parent's depth. Regions still open when a run crashed are kept. */
Test(model_profile, orphans_and_crash)
{
    const char *path = fu_path("orphans.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_region(s, 0, "c0", PROF_KIND_COMPUTE, 1, 0, 10); /* its parent was not kept */
    synth_region(s, 0, "d", PROF_KIND_COMPUTE, 2, 20, 5);  /* nor this one's           */
    synth_region(s, 0, "c", PROF_KIND_COMPUTE, 1, 110, 10);
    synth_region(s, 0, "p", PROF_KIND_COMPUTE, 0, 100, 100);
    /* the run crashes inside "open" at depth 0 and "inner" at depth 1 */
    synth_region(s, 0, "x", PROF_KIND_COMPUTE, 2, 300, 10);
    synth_region(s, 0, "x", PROF_KIND_COMPUTE, 2, 320, 10);
    synth_region(s, 0, "y", PROF_KIND_COMPUTE, 1, 340, 10);
    prof_error err = { 0 };
    cr_assert_eq(synth_abandon(s, &err), 0, "%s", err.message);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.status.clean, 0);
    cr_assert_eq(op(&m, "p")->self_ns, 90u, "only its own child is subtracted");
    cr_assert_eq(node_at(&m, 0, "p/c")->calls, 1u);
    cr_assert_eq(node_at(&m, 0, "c0")->calls, 1u, "the orphan hangs at the root");
    cr_assert_eq(node_at(&m, 0, "d")->calls, 1u);
    cr_assert_eq(node_at(&m, 0, "x")->calls, 2u, "cut off by the crash: at the root");
    cr_assert_eq(node_at(&m, 0, "x")->incl_ns, 20u);
    cr_assert_eq(node_at(&m, 0, "y")->calls, 1u);
    cr_assert_eq(m.profiled_ns, 100u, "only ended outermost regions count");
    cr_assert_eq(m.nodes[m.threads[0].root].incl_ns, 100u + 10u + 5u + 20u + 10u);
    cr_assert_eq(m.peak_pending_nodes, 2u, "c0 and d, then c0 and c");
    profile_model_free(&m);
}

/* Steps come out in number order; every sample gets the step its time
 * falls in, a sample at a boundary the step that ends there. */
Test(model_profile, steps_and_samples)
{
    const char *path = fu_path("steps.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_memory(s, 0, "host.rss", 0, 1000);         /* at the first step's start */
    synth_memory(s, 0, "host.rss", 50, 1100);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 0, 100);
    synth_memory(s, 0, "host.rss", 100, 1200);       /* at the step boundary      */
    synth_step(s, 0, 1, 0, 100, 100);
    synth_memory(s, 0, "host.rss", 200, 900);
    synth_step(s, 0, 2, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, 200, 100);
    synth_memory(s, 0, "host.rss", 300, 950);        /* at the last step's end    */
    synth_memory(s, 0, "host.rss", 350, 970);        /* after every step          */
    synth_counter(s, 1, "loss", 150, 2.5);           /* another thread, earlier   */
    synth_counter(s, 1, "loss", 120, 3.5);           /* out of time order         */
    synth_memory(s, 1, "host.rss", 150, 1300);       /* between two of thread 0's */
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.nsteps, 3u);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(m.steps[i].number, i);
        cr_assert_eq(m.steps[i].start_ns, 100 * i);
        cr_assert_eq(m.steps[i].dur_ns, 100u);
    }
    cr_assert_eq(m.steps[1].flags, 0u);
    cr_assert_eq(m.steps[2].flags, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE);

    const model_series *rss = mu_find_series(&m, "host.rss");
    cr_assert_not_null(rss);
    cr_assert_eq(rss->is_memory, 1);
    static const uint64_t t[] = { 0, 50, 100, 150, 200, 300, 350 };
    static const uint32_t step[] = { 0, 0, 0, 1, 1, 2, MODEL_NONE };
    static const double v[] = { 1000, 1100, 1200, 1300, 900, 950, 970 };
    cr_assert_eq(rss->nsamples, 7u);
    for (size_t i = 0; i < 7; i++) {
        cr_assert_eq(rss->samples[i].t_ns, t[i], "sample %zu", i);
        cr_assert_eq(rss->samples[i].step, step[i], "sample %zu at %llu: step %u", i,
                     (unsigned long long)t[i], rss->samples[i].step);
        cr_assert_eq(rss->samples[i].value, v[i]);
    }
    cr_assert_eq(rss->peak, 1300.0);
    cr_assert_eq(rss->peak_t_ns, 150u);
    cr_assert_eq(rss->final, 970.0);

    const model_series *loss = mu_find_series(&m, "loss");
    cr_assert_not_null(loss);
    cr_assert_eq(loss->is_memory, 0);
    cr_assert_eq(loss->nsamples, 2u);
    cr_assert_eq(loss->samples[0].value, 3.5, "sorted by time");
    cr_assert_eq(loss->samples[0].step, 1u);
    cr_assert_eq(loss->final, 2.5);
    cr_assert_null(mu_find_series(&m, "nope"));
    cr_assert_null(mu_find_op(&m, "nope"));
    cr_assert_eq(m.nthreads, 2u, "threads with samples only count too");
    profile_model_free(&m);
}

/* Sync records are sited at the innermost region around them, SYNC regions
 * at their parent; a record inside a SYNC region is the same wait and is
 * counted once, as the region. */
Test(model_profile, sync_sites)
{
    const char *path = fu_path("sync.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t t = i * 10000;
        synth_sync(s, 0, PROF_SYNC_STREAM, 0, 1, i, t + 100, 50);       /* in forward      */
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, t + 10, 1000);
        synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, i, t + 1200, 300);     /* in loss.item    */
        synth_region(s, 0, "loss.item", PROF_KIND_SYNC, 1, t + 1100, 500);
        synth_region(s, 0, "wait", PROF_KIND_SYNC, 1, t + 2000, 70);    /* no record       */
        synth_sync(s, 0, PROF_SYNC_EVENT, 0, 0, i, t + 2500, 20);       /* directly in step */
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, t, 3000);
        synth_sync(s, 0, PROF_SYNC_MEMCPY, 0, 0, i, t + 5000, 40);      /* outside regions */
    }
    /* written late, after its region had arrived */
    synth_region(s, 1, "late", PROF_KIND_COMPUTE, 0, 100, 1000);
    synth_sync(s, 1, PROF_SYNC_STREAM, 0, 0, 99, 200, 30);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    /* per step: forward record, loss.item region, wait region, step record,
     * outside record; plus the late one */
    cr_assert_eq(m.sync_count, 4u * 5u + 1u);
    cr_assert_eq(m.sync_records, 4u * 3u + 1u, "the record inside loss.item is not counted");
    cr_assert_eq(m.sync_blocked_ns, 4u * (50u + 500u + 70u + 20u + 40u) + 30u);
    uint32_t fwd = op_index(&m, "forward"), step = op_index(&m, "step"),
             late = op_index(&m, "late");
    int seen = 0;
    for (size_t i = 0; i < m.nsync_sites; i++) {
        const model_sync_site *x = &m.sync_sites[i];
        if (x->op == fwd) {
            cr_assert_eq(x->count, 4u);
            cr_assert_eq(x->blocked_ns, 200u);
            seen |= 1;
        } else if (x->op == step) {
            cr_assert_eq(x->count, 12u, "loss.item, wait and the record directly in step");
            cr_assert_eq(x->blocked_ns, 4u * (500u + 70u + 20u));
            seen |= 2;
        } else if (x->op == MODEL_NONE) {
            cr_assert_eq(x->count, 4u);
            cr_assert_eq(x->blocked_ns, 160u);
            seen |= 4;
        } else if (x->op == late) {
            cr_assert_eq(x->count, 1u);
            seen |= 8;
        } else {
            cr_assert_fail("unexpected site %s", m.ops[x->op].name);
        }
        if (i)
            cr_assert_geq(m.sync_sites[i - 1].blocked_ns, x->blocked_ns, "largest first");
    }
    cr_assert_eq(seen, 15, "sites seen: %d", seen);
    cr_assert_eq(m.kind_ns[PROF_KIND_SYNC], 4u * 570u);
    profile_model_free(&m);
}

/* A CUDA record written long after its SYNC region, thousands of regions
 * later (CUPTI flushes its buffers a second or more apart; prof.torch's
 * Tensor.item region and CUPTI's cudaStreamSynchronize inside it, as on a
 * real H200 run, where half the syncs were counted twice), is still the
 * same wait, in regions that arrive in end order or not. */
Test(model_profile, late_records_in_sync_regions_count_once)
{
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        const char *path = fu_path("late_sync.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        enum { STEPS = 3000, LEAVES = 20 };
        for (uint64_t i = 0; i < STEPS; i++) {
            uint64_t t = i * 100000;
            for (uint64_t k = 0; k < LEAVES; k++)
                synth_region(s, 0, "layer", PROF_KIND_COMPUTE, 1, t + k * 1000, 900);
            /* shuffled: each pair of item regions arrives swapped */
            uint64_t at = shuffled ? (i % 2 ? t - 100000 : t + 100000) : t;
            if (shuffled && i == STEPS - 1 && i % 2 == 0)
                at = t;
            synth_region(s, 0, "Tensor.item", PROF_KIND_SYNC, 1, at + 50000, 5000);
            synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, t, 90000);
        }
        /* the records, late: inside every item, and 7 outside any */
        for (uint64_t i = 0; i < STEPS; i++)
            synth_sync(s, 0, PROF_SYNC_STREAM, 0, 7, i, i * 100000 + 51000, 3000);
        for (uint64_t i = 0; i < 7; i++)
            synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, i, STEPS * 100000 + i * 10, 5);
        mu_close(s);
        profile_model m;
        mu_load(path, &m);
        cr_expect_eq(m.sync_count, STEPS + 7u, "shuffled %d: %llu", shuffled, (unsigned long long)m.sync_count);
        cr_expect_eq(m.sync_records, 7u, "shuffled %d", shuffled);
        cr_expect_eq(m.sync_blocked_ns, STEPS * 5000u + 35u, "shuffled %d", shuffled);
        profile_model_free(&m);
    }
    /* past the bound: records older than the last 4096 SYNC regions count
     * on their own (rules.md §4.3) */
    const char *path = fu_path("late_sync_many.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    enum { MANY = 5000 };
    for (uint64_t i = 0; i < MANY; i++) {
        synth_region(s, 0, "Tensor.item", PROF_KIND_SYNC, 1, i * 10000 + 5000, 500);
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, i * 10000, 9000);
    }
    for (uint64_t i = 0; i < MANY; i++)
        synth_sync(s, 0, PROF_SYNC_STREAM, 0, 7, i, i * 10000 + 5100, 300);
    mu_close(s);
    profile_model m;
    mu_load(path, &m);
    cr_expect_eq(m.sync_records, MANY - 4096u, "%llu", (unsigned long long)m.sync_records);
    cr_expect_eq(m.sync_count, MANY + MANY - 4096u);
    profile_model_free(&m);
}

/* Class attributes become the ops' classes: the last one of a name wins,
 * a kernel gets its own, a class of a name that never ran adds no op,
 * unknown keys are ignored, and ops without one have none. */
Test(model_profile, classes_of_operations)
{
    const char *path = fu_path("classes.prof");
    synth *s = synth_open(path, NULL);
    synth_class(s, "head.forward", "torch.nn.Conv2d");
    synth_class(s, "head.forward", "torch.nn.Linear");
    synth_class(s, "never.ran", "torch.nn.ReLU");
    synth_class(s, "gemm", "cublas");
    synth_region(s, 0, "head.forward", PROF_KIND_COMPUTE, 1, 10, 5);
    synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, 0, 20);
    synth_gpu_kernel(s, "gemm", 0, 7, 1, 12, 2);
    mu_close(s);
    profile_model m;
    mu_load(path, &m);
    cr_assert_str_eq(op(&m, "head.forward")->cls, "torch.nn.Linear");
    cr_assert_null(op(&m, "forward")->cls);
    cr_assert_str_eq(op(&m, "gemm")->cls, "cublas");
    cr_assert_null(mu_find_op(&m, "never.ran"), "no op for a name that never ran");
    cr_assert_eq(m.nops, 3u);
    cr_assert_eq(m.events, 3u, "attributes are not events");
    profile_model_free(&m);
}

Test(model_profile, metadata_and_progress)
{
    const char *path = fu_path("meta.prof");
    synth *s = synth_open(path, "{\"rank\":3,\"world_size\":8,\"host\":\"h\"}");
    cr_assert_not_null(s);
    for (uint64_t i = 0; i < 200; i++)
        synth_region(s, 0, "r", PROF_KIND_COMPUTE, 0, i * 10, 5);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.rank, 3);
    cr_assert_eq(m.world_size, 8);
    cr_assert_str_eq(m.path, path);
    cr_assert(strstr(m.metadata, "\"host\":\"h\"") != NULL);
    cr_assert_eq(m.major, 1u);
    cr_assert_eq(op(&m, "r")->calls, 200u);
    profile_model_free(&m);

    s = synth_open(path, "{\"rank\":\"zero\"}");
    cr_assert_not_null(s);
    mu_close(s);
    mu_load(path, &m);
    cr_assert_eq(m.rank, -1, "not a number: unknown");
    cr_assert_eq(m.world_size, -1, "absent: unknown");
    cr_assert_eq(m.events, 0u);
    cr_assert_eq(m.nthreads, 0u);
    cr_assert_eq(m.first_ns, 0u);
    profile_model_free(&m);
}

typedef struct progress_log {
    size_t calls;
    uint64_t last_done, total;
    int backwards;
} progress_log;

static void on_progress(uint64_t done, uint64_t total, void *arg)
{
    progress_log *l = arg;
    if (l->calls && done < l->last_done)
        l->backwards = 1;
    l->calls++;
    l->last_done = done;
    l->total = total;
}

Test(model_profile, progress)
{
    const char *path = fu_path("progress.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 16); /* 1250 blocks */
    for (uint64_t i = 0; i < 20000; i++)
        synth_region(s, 0, "r", PROF_KIND_COMPUTE, 0, i * 10, 5);
    mu_close(s);
    size_t size;
    free(fu_load(path, &size));

    profile_model m;
    progress_log l = { 0 };
    prof_error err;
    cr_assert_eq(profile_model_load(path, NULL, &m, on_progress, &l, &err), PROF_OK);
    cr_assert_geq(l.calls, 10u, "%zu calls for 1250 blocks", l.calls);
    cr_assert_leq(l.calls, 40u, "%zu calls for 1250 blocks", l.calls);
    cr_assert_eq(l.backwards, 0);
    cr_assert_eq(l.total, (uint64_t)size);
    cr_assert_eq(l.last_done, (uint64_t)size, "ends at the whole file");
    profile_model_free(&m);
}

/* A crashed run's file loads up to its last intact block; damage in a
 * cleanly closed file is an error; so is a missing file. */
Test(model_profile, truncated_and_errors)
{
    size_t size;
    uint8_t *bytes = fu_load(DEMO, &size);
    const char *path = fu_path("cut.prof");
    fu_store(path, bytes, size / 2);
    profile_model m;
    prof_error err = { 0 };
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK, "%s", err.message);
    cr_assert(m.status.truncated);
    cr_assert_eq(m.status.clean, 0);
    cr_assert_gt(m.status.bytes_lost, 0u);
    cr_assert_gt(m.nsteps, 0u);
    cr_assert_lt(m.nsteps, 300u);
    cr_assert_gt(m.region_events, 0u);
    profile_model_free(&m);

    bytes[size / 2] ^= 0x10;
    path = fu_path("bad.prof");
    fu_store(path, bytes, size);
    free(bytes);
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_ERR_CORRUPT);
    cr_assert(strstr(err.message, "checksum mismatch") != NULL, "message: %s", err.message);
    cr_assert_null(m.ops, "nothing left to free on failure");
    profile_model_free(&m);
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, NULL), PROF_ERR_CORRUPT);
    cr_assert_eq(profile_model_load(fu_path("none.prof"), NULL, &m, NULL, NULL, &err), PROF_ERR_IO);
    profile_model_free(&m);
}

/* Per operation: calls and total duration, from a plain pass of the reader. */
typedef struct tally {
    char name[64];
    uint64_t calls, ns;
} tally;

Test(model_profile, demo_profile)
{
    profile_model m;
    mu_load(DEMO, &m);
    fu_list l;
    prof_error err;
    cr_assert_eq(fu_read_path(DEMO, &l, &err), PROF_OK);

    /* make_demo: 300 steps, two threads, 25 regions a step plus a
     * loss.item SYNC region every tenth step, two memory series sampled
     * 301 times, a loss counter, no GPU data. */
    cr_assert_eq(m.nsteps, 300u);
    cr_assert_eq(m.nthreads, 2u);
    cr_assert_str_eq(m.threads[0].name, "train");
    cr_assert_str_eq(m.threads[1].name, "dataloader");
    cr_assert_eq(m.region_events, 300u * 25u + 30u);
    cr_assert_eq(m.threads[1].regions, 1200u);
    cr_assert_eq(m.rank, 0);
    cr_assert_eq(m.world_size, 1);
    cr_assert_eq(m.has_gpu, 0);
    cr_assert_eq(m.ngpus, 0u);
    cr_assert(m.status.clean);
    cr_assert_eq(m.dropped_events, 0u);
    cr_assert_eq(m.events, l.st.events);
    cr_assert_eq(m.nops, 20u, "16 names on train, 4 on the loader");
    cr_assert_eq(op(&m, "attention")->calls, 1200u);
    cr_assert_eq(op(&m, "forward")->calls, 300u);
    cr_assert_eq(op(&m, "loss.item")->calls, 30u);
    cr_assert_eq(op(&m, "loss.item")->kind, (uint32_t)PROF_KIND_SYNC);
    cr_assert_eq(op(&m, "read_shard")->kind, (uint32_t)PROF_KIND_IO);

    /* Against the reader: calls and inclusive time per name; outermost time. */
    tally t[32];
    size_t nt = 0;
    uint64_t outer = 0, first = UINT64_MAX;
    for (size_t i = 0; i < l.n; i++) {
        const prof_event *ev = &l.v[i].ev;
        if (ev->type != PROF_EV_THREAD && ev->start_ns < first)
            first = ev->start_ns;
        if (ev->type != PROF_EV_REGION)
            continue;
        size_t k = 0;
        while (k < nt && strcmp(t[k].name, l.v[i].name) != 0)
            k++;
        if (k == nt) {
            cr_assert_lt(nt, 32u);
            snprintf(t[nt++].name, sizeof t[0].name, "%s", l.v[i].name);
            t[k].calls = t[k].ns = 0;
        }
        t[k].calls++;
        t[k].ns += ev->dur_ns;
        if (ev->depth == 0)
            outer += ev->dur_ns;
    }
    cr_assert_eq(nt, m.nops);
    for (size_t k = 0; k < nt; k++) {
        cr_assert_eq(op(&m, t[k].name)->calls, t[k].calls, "%s", t[k].name);
        cr_assert_eq(op(&m, t[k].name)->incl_ns, t[k].ns, "%s", t[k].name);
        cr_assert_eq(op(&m, t[k].name)->dur.count, t[k].calls, "%s", t[k].name);
    }
    cr_assert_eq(m.profiled_ns, outer);
    cr_assert_eq(m.first_ns, first);
    cr_assert_eq(m.threads[0].busy_ns + m.threads[1].busy_ns, outer);
    uint64_t self = 0, kinds = 0;
    for (size_t i = 0; i < m.nops; i++)
        self += m.ops[i].self_ns;
    for (size_t k = 0; k < 5; k++)
        kinds += m.kind_ns[k];
    cr_assert_eq(self, outer, "every nanosecond of an outermost region is someone's self time");
    cr_assert_eq(kinds, outer);

    /* forward's self time: its gaps between children, the 0.3 ms after
     * each layer's mlp is layer.N's */
    const model_op *fw = op(&m, "forward");
    uint64_t kids = op(&m, "embedding")->incl_ns + op(&m, "loss")->incl_ns;
    static const char *const layers[] = { "layer.0", "layer.1", "layer.2", "layer.3" };
    for (size_t i = 0; i < 4; i++)
        kids += op(&m, layers[i])->incl_ns;
    cr_assert_eq(fw->self_ns, fw->incl_ns - kids);
    cr_assert_eq(node_at(&m, 0, "forward/layer.2/attention")->calls, 300u);
    cr_assert_eq(node_at(&m, 1, "fetch_batch/decode")->calls, 300u);
    /* one node per path: attention and mlp under each of 4 layers */
    cr_assert_eq(m.nnodes, 2u + 20u + 2u * 3u);

    /* the loss.item SYNC regions, outermost: sited outside any region */
    cr_assert_eq(m.sync_count, 30u);
    cr_assert_eq(m.sync_records, 0u);
    cr_assert_eq(m.sync_blocked_ns, op(&m, "loss.item")->incl_ns);
    cr_assert_eq(m.nsync_sites, 1u);
    cr_assert_eq(m.sync_sites[0].op, MODEL_NONE);

    /* gpu.allocated: sampled at the start and after every step; the sample
     * taken as step k ends belongs to step k */
    const model_series *g = mu_find_series(&m, "gpu.allocated");
    cr_assert_not_null(g);
    cr_assert_eq(g->nsamples, 301u);
    cr_assert_eq(g->samples[0].step, 0u);
    for (size_t i = 1; i < 301; i++) {
        cr_assert_eq(g->samples[i].step, (uint32_t)(i - 1), "sample %zu", i);
        cr_assert_eq(g->samples[i].t_ns, m.steps[i - 1].start_ns + m.steps[i - 1].dur_ns);
    }
    double mb = 1024.0 * 1024.0;
    cr_assert_gt(g->peak, 4096 * mb + 12 * mb * 299);
    cr_assert_lt(g->peak, 4096 * mb + 12 * mb * 300 + 10 * mb);
    cr_assert_eq(g->final, g->samples[300].value);
    cr_assert_eq(mu_find_series(&m, "loss")->nsamples, 300u);
    for (size_t i = 0; i < 300; i++)
        cr_assert_eq(m.steps[i].flags, PROF_STEP_SAMPLED);
    fu_free(&l);
    profile_model_free(&m);
}

/* A million region events under one outermost region with ten names: the
 * model holds a node per path and waits with a handful of floating nodes,
 * whatever the number of events. */
/* The same with hundreds of distinct paths below one waiting parent: a
 * run-long region around steps of a model 200 layers deep. What waits
 * stays one node per path, however many steps merge into it, and the
 * tree is exact. */
Test(model_profile, memory_follows_paths_with_a_wide_parent)
{
    enum { STEPS = 200, LAYERS = 200 };
    const char *path = fu_path("wide-run.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    char name[32];
    uint64_t t = 0;
    for (int i = 0; i < STEPS; i++) {
        uint64_t s0 = t;
        for (int k = 0; k < LAYERS; k++) {
            snprintf(name, sizeof name, "layer.%d", k);
            synth_region(s, 0, "matmul", PROF_KIND_COMPUTE, 4, t + 1, 6);
            synth_region(s, 0, name, PROF_KIND_COMPUTE, 3, t, 10);
            t += 10;
        }
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 2, s0, t - s0);
        t += 3;
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 1, s0, t - s0);
        t += 3;
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 0, t);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.nnodes, 1u + 3u + 2u * LAYERS, "the root and one node per path");
    /* the paths once, and one step's subtree as it merges into them */
    cr_assert_leq(m.peak_pending_nodes, 2u * (2u + 2u * LAYERS), "waiting: %zu floating nodes",
                  m.peak_pending_nodes);
    cr_assert_eq(node_at(&m, 0, "run/step/forward")->calls, (uint64_t)STEPS);
    for (int k = 0; k < LAYERS; k += 41) {
        char p2[64];
        snprintf(p2, sizeof p2, "run/step/forward/layer.%d/matmul", k);
        const model_node *n = node_at(&m, 0, p2);
        cr_assert(n, "%s", p2);
        cr_assert_eq(n->calls, (uint64_t)STEPS);
        cr_assert_eq(n->incl_ns, (uint64_t)STEPS * 6);
    }
    cr_assert_eq(op(&m, "layer.7")->self_ns, (uint64_t)STEPS * 4);
    cr_assert_eq(op(&m, "forward")->self_ns, 0u);
    cr_assert_eq(op(&m, "step")->self_ns, (uint64_t)STEPS * 3);
    cr_assert_eq(op(&m, "run")->self_ns, (uint64_t)STEPS * 3);
    profile_model_free(&m);
}

/* Orphans taken out of a long waiting list (their parent was not kept)
 * go to the root; the rest of the list goes with its parent, and a
 * parent's long list of children still merges by operation. */
Test(model_profile, orphans_out_of_a_long_list)
{
    enum { KIDS = 20 };
    const char *path = fu_path("long-orphans.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    char name[32];
    uint64_t t = 0;
    for (int k = 0; k < KIDS; k++) { /* a parent that sampling skipped */
        snprintf(name, sizeof name, "orphan.%d", k);
        synth_region(s, 0, name, PROF_KIND_COMPUTE, 2, t, 10);
        t += 10;
    }
    for (int round = 0; round < 2; round++) { /* two calls of a recorded parent */
        uint64_t p0 = t + 100;
        t = p0;
        for (int k = KIDS - 1; k >= 0; k--) {
            snprintf(name, sizeof name, "op.%d", k);
            synth_region(s, 0, name, PROF_KIND_COMPUTE, 2, t, 10);
            t += 10;
        }
        if (round == 1) { /* a child not among the first call's */
            synth_region(s, 0, "extra", PROF_KIND_COMPUTE, 2, t, 10);
            t += 10;
        }
        synth_region(s, 0, "parent", PROF_KIND_COMPUTE, 1, p0, t - p0 + 1);
        t += 1;
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 0, t);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(op(&m, "parent")->self_ns, 2u, "only its own children are subtracted");
    cr_assert_eq(node_at(&m, 0, "run/parent")->calls, 2u);
    cr_assert_eq(node_at(&m, 0, "run/parent/extra")->calls, 1u);
    for (int k = 0; k < KIDS; k++) {
        char root[32], under[48];
        snprintf(root, sizeof root, "orphan.%d", k);
        snprintf(under, sizeof under, "run/parent/op.%d", k);
        const model_node *r = node_at(&m, 0, root), *u = node_at(&m, 0, under);
        cr_assert(r && u, "%s", root);
        cr_assert_eq(r->calls, 1u, "%s: the orphan at the root", root);
        cr_assert_eq(u->calls, 2u, "%s: both calls under the parent", under);
    }
    cr_assert_eq(m.nnodes, 1u + 2u + KIDS + 1u + KIDS, "one node per path");
    profile_model_free(&m);
}

Test(model_profile, memory_follows_paths_not_events, .timeout = 120)
{
    static const char *const leaves[] = { "l0", "l1", "l2", "l3", "l4", "l5", "l6" };
    const char *path = fu_path("million.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    uint64_t t = 0, n = 0;
    const uint64_t steps = 111111; /* 9 events each, + the outermost: 1,000,000 */
    for (uint64_t i = 0; i < steps; i++) {
        uint64_t s0 = t;
        for (size_t k = 0; k < 7; k++) {
            synth_region(s, 0, leaves[k], PROF_KIND_COMPUTE, 3, t, 10);
            t += 12;
        }
        synth_region(s, 0, "inner", PROF_KIND_COMPUTE, 2, s0, t - s0);
        t += 5;
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 1, s0, t - s0);
        t += 5;
        n += 9;
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 0, t + 5);
    n++;
    cr_assert_eq(n, 1000000u);
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.region_events, 1000000u);
    cr_assert_eq(m.nops, 10u);
    cr_assert_eq(m.nnodes, 1u + 10u, "the root and one node per path");
    /* at most the paths below "run" twice over: the calls waiting, and
     * the latest step's subtree as it merges into them */
    cr_assert_leq(m.peak_pending_nodes, 2u * 9u, "waiting: %zu floating nodes",
                  m.peak_pending_nodes);
    cr_assert_eq(node_at(&m, 0, "run/step/inner/l6")->calls, steps);
    cr_assert_eq(op(&m, "run")->self_ns, 5u + steps * 5u);
    cr_assert_eq(op(&m, "step")->self_ns, steps * 5u);
    cr_assert_eq(op(&m, "inner")->self_ns, steps * 7u * 2u);
    cr_assert_eq(op(&m, "l3")->self_ns, steps * 10u);
    cr_assert_leq(op(&m, "run")->dur.nbins, 64u);
    profile_model_free(&m);
}
