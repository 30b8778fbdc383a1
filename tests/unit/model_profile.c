/* model_profile.c - profile_model_load over real files written by the test
 * writer: self time of nested and recursive regions, call-tree paths per
 * thread, orphans and regions cut off by a crash, steps and the step of
 * each sample, GPU busy time as a union over streams, sync sites,
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

static void load(const char *path, profile_model *m)
{
    prof_error err = { 0 };
    prof_err e = profile_model_load(path, NULL, m, NULL, NULL, &err);
    cr_assert_eq(e, PROF_OK, "%s: %s", path, err.message);
}

static void close_ok(synth *s)
{
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

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
    close_ok(s);

    profile_model m;
    load(path, &m);
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
    close_ok(s);
    profile_model m;
    load(path, &m);
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
    close_ok(s);
    profile_model m;
    load(path, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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
    load(path, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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

/* Busy time of a device is the union over its streams; gaps of 1 ms or
 * more are idle; kernels are operations of their own kind. */
Test(model_profile, gpu_busy_union)
{
    const char *path = fu_path("gpu.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_gpu_kernel(s, "gemm", 0, 1, 1, 1000, 100);     /* [1000, 1100)            */
    synth_gpu_kernel(s, "relu", 0, 2, 2, 1050, 100);     /* overlaps: [1000, 1150)   */
    synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 3, 3, 4096, 1140, 60); /* [1000, 1200)   */
    synth_gpu_kernel(s, "gemm", 0, 1, 4, 1300, 100);     /* gap of 100: not idle      */
    synth_gpu_memset(s, 0, 1, 5, 64, 3 * MS, 1000);      /* gap ~3 ms: idle           */
    synth_gpu_kernel(s, "gemm", 1, 7, 6, 500, 10);       /* another device            */
    synth_region(s, 0, "gemm", PROF_KIND_COMPUTE, 0, 0, 5000); /* a region of that name */
    close_ok(s);

    profile_model m;
    load(path, &m);
    cr_assert_eq(m.has_gpu, 1);
    cr_assert_eq(m.ngpus, 2u);
    const model_gpu_device *d = &m.gpus[0];
    cr_assert_eq(d->device, 0u);
    cr_assert_eq(d->kernels, 3u);
    cr_assert_eq(d->kernel_ns, 300u);
    cr_assert_eq(d->memcpy_count, 1u);
    cr_assert_eq(d->memcpy_bytes, 4096u);
    cr_assert_eq(d->memcpy_ns, 60u);
    cr_assert_eq(d->memset_count, 1u);
    cr_assert_eq(d->memset_ns, 1000u);
    cr_assert_eq(d->busy_ns, 200u + 100u + 1000u);
    cr_assert_eq(d->first_ns, 1000u);
    cr_assert_eq(d->last_ns, 3 * MS + 1000);
    cr_assert_eq(d->idle_gaps, 1u);
    cr_assert_eq(d->idle_gap_ns, 3 * MS - 1400);
    cr_assert_eq(m.gpus[1].device, 1u);
    cr_assert_eq(m.gpus[1].busy_ns, 10u);
    cr_assert_eq(m.gpus[1].idle_gaps, 0u);

    const model_op *k = NULL, *r = NULL;
    for (size_t i = 0; i < m.nops; i++)
        if (strcmp(m.ops[i].name, "gemm") == 0)
            *(m.ops[i].kind == MODEL_KIND_GPU ? &k : &r) = &m.ops[i];
    cr_assert(k && r, "a kernel and a region of one name are two operations");
    cr_assert_eq(k->calls, 3u);
    cr_assert_eq(k->incl_ns, 210u);
    cr_assert_eq(k->self_ns, 210u);
    cr_assert_eq(r->calls, 1u);
    cr_assert_eq(op(&m, "relu")->kind, MODEL_KIND_GPU);
    cr_assert_eq(m.profiled_ns, 5000u, "kernels are not CPU time");
    profile_model_free(&m);
}

/* One GPU record of the tests of GPU time: class 0 computation, 1
 * communication, 2 copy, 3 memset. */
typedef struct gpu_rec {
    uint64_t start, dur;
    uint32_t stream, cls;
    uint64_t launch, correlation; /* its launch call's start and id, when it has one */
} gpu_rec;

static int rec_by_time(const void *pa, const void *pb)
{
    const gpu_rec *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

static int rec_by_stream(const void *pa, const void *pb)
{
    const gpu_rec *a = pa, *b = pb;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return rec_by_time(pa, pb);
}

/* The union of the records (by time) of the classes in mask (bits): its
 * intervals into u, which has room for n; returns how many. */
static size_t rec_union(const gpu_rec *r, size_t n, unsigned mask, uint64_t (*u)[2])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* r is by time */
        if (!((mask >> r[i].cls) & 1u))
            continue;
        uint64_t a = r[i].start, b = r[i].start + r[i].dur;
        if (k && a <= u[k - 1][1]) {
            if (b > u[k - 1][1])
                u[k - 1][1] = b;
        } else {
            u[k][0] = a, u[k][1] = b, k++;
        }
    }
    return k;
}

static uint64_t union_len(uint64_t (*u)[2], size_t k)
{
    uint64_t t = 0;
    for (size_t i = 0; i < k; i++)
        t += u[i][1] - u[i][0];
    return t;
}

/* The gaps of 1 ms or more between the intervals of a union: how many, how
 * long in all, and the three longest, longest first. */
static void union_gaps(uint64_t (*u)[2], size_t k, uint64_t *gaps, uint64_t *gap_ns,
                       uint64_t longest[3])
{
    *gaps = *gap_ns = 0;
    longest[0] = longest[1] = longest[2] = 0;
    for (size_t i = 1; i < k; i++) {
        uint64_t g = u[i][0] - u[i - 1][1];
        if (g < MS)
            continue;
        (*gaps)++;
        *gap_ns += g;
        for (int j = 0; j < 3; j++)
            if (g > longest[j]) {
                uint64_t x = longest[j];
                longest[j] = g;
                g = x;
            }
    }
}

/* Puts v's n elements of size bytes each in a random order (Fisher-Yates). */
static void shuffle(void *v, size_t n, size_t size, synth_rng *rng)
{
    unsigned char *p = v, t[64];
    cr_assert(size <= sizeof t);
    for (size_t i = 0; i + 1 < n; i++) {
        size_t j = i + (size_t)(synth_rand(rng) % (n - i));
        memcpy(t, p + i * size, size);
        memcpy(p + i * size, p + j * size, size);
        memcpy(p + j * size, t, size);
    }
}

/* Writes a record of the tests of GPU time, by its class. */
static void write_rec(synth *s, const gpu_rec *x)
{
    if (x->cls == 0)
        synth_gpu_kernel(s, "gemm", 0, x->stream, x->correlation, x->start, x->dur);
    else if (x->cls == 1)
        synth_gpu_kernel(s, "ncclDevKernel_AllGather", 0, x->stream, x->correlation, x->start,
                         x->dur);
    else if (x->cls == 2)
        synth_gpu_memcpy(s, PROF_COPY_DTOD, 0, x->stream, x->correlation, 512, x->start, x->dur);
    else
        synth_gpu_memset(s, 0, x->stream, x->correlation, 64, x->start, x->dur);
}

/* Many overlapping intervals on four streams, arriving out of order within
 * windows smaller than a batch: busy time and gaps are exact. */
Test(model_profile, gpu_busy_out_of_order)
{
    enum { N = 30000, STREAMS = 4 };
    gpu_rec *r = malloc(N * sizeof *r);
    uint64_t(*u)[2] = malloc(N * sizeof *u);
    cr_assert(r && u);
    synth_rng rng = { 7 };
    uint64_t t[STREAMS] = { 0 };
    for (size_t i = 0; i < N; i++) {
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        t[st] += synth_rand(&rng) % 2000 + (synth_rand(&rng) % 100 == 0 ? 2 * MS : 0);
        r[i] = (gpu_rec){ t[st], 1 + synth_rand(&rng) % 5000, st, 0, 0, 0 };
        t[st] += r[i].dur;
    }
    qsort(r, N, sizeof *r, rec_by_time);
    for (size_t i = 0; i + 1 < N; i++) /* disorder within windows of 50 */
        if (synth_rand(&rng) % 2) {
            size_t j = i + synth_rand(&rng) % 50;
            if (j < N) {
                gpu_rec x = r[i];
                r[i] = r[j];
                r[j] = x;
            }
        }
    const char *path = fu_path("gpu-many.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    for (size_t i = 0; i < N; i++)
        synth_gpu_kernel(s, "k", 0, (uint32_t)(i % STREAMS), i, r[i].start, r[i].dur);
    close_ok(s);

    /* The exact answer, from all the intervals sorted at once. */
    qsort(r, N, sizeof *r, rec_by_time);
    size_t k = rec_union(r, N, 1u, u);
    uint64_t busy = union_len(u, k), gaps, gap_ns, longest[3];
    union_gaps(u, k, &gaps, &gap_ns, longest);
    free(r);
    free(u);

    profile_model m;
    load(path, &m);
    cr_assert_eq(m.ngpus, 1u);
    cr_assert_eq(m.gpus[0].kernels, (uint64_t)N);
    cr_assert_eq(m.gpus[0].busy_ns, busy, "busy %llu, exact %llu",
                 (unsigned long long)m.gpus[0].busy_ns, (unsigned long long)busy);
    cr_assert_gt(gaps, 10u, "the fixture has idle gaps");
    cr_assert_eq(m.gpus[0].idle_gaps, gaps);
    cr_assert_eq(m.gpus[0].idle_gap_ns, gap_ns);
    profile_model_free(&m);
}

/* A device's figures are exact whatever the order of its records, ten
 * times past the model's batch of 4,096: records of six streams
 * (computation, communication, copies, memsets) and steps over them,
 * written in time order, stream by stream (as Kineto lists them),
 * reversed and shuffled, give the figures of a union of all the records
 * taken at once, to the ns, and the same step figures every time. */
Test(model_profile, gpu_exact_in_any_order)
{
    enum { N = 10 * 4096 + 7, STREAMS = 6, STEPS = 100 };
    static const uint32_t cls_of[STREAMS] = { 0, 0, 1, 2, 3, 0 };
    gpu_rec *r = malloc(N * sizeof *r);
    uint64_t(*u)[2] = malloc(N * sizeof *u), (*v)[2] = malloc(N * sizeof *v);
    cr_assert(r && u && v);
    synth_rng rng = { 35 };
    uint64_t t[STREAMS] = { 0 }, end = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        if (i % 300 == 299) /* every stream waits: the device idles */
            for (int j = 0; j < STREAMS; j++)
                t[j] = end + MS + synth_rand(&rng) % (3 * MS);
        t[st] += 1 + synth_rand(&rng) % 20000;
        r[i] = (gpu_rec){ t[st], 1 + synth_rand(&rng) % 30000, st, cls_of[st], 0, 0 };
        t[st] += r[i].dur;
        if (t[st] > end)
            end = t[st];
    }

    /* the exact figures, from all the records sorted at once */
    qsort(r, N, sizeof *r, rec_by_time);
    size_t k = rec_union(r, N, 0xfu, u);
    uint64_t busy = union_len(u, k), gaps, gap_ns, longest[3];
    union_gaps(u, k, &gaps, &gap_ns, longest);
    uint64_t(*u_busy)[2] = malloc((k ? k : 1) * sizeof *u_busy);
    cr_assert_not_null(u_busy);
    memcpy(u_busy, u, k * sizeof *u);
    size_t kc = rec_union(r, N, 1u << 1, u), kk = rec_union(r, N, 1u << 0, v);
    uint64_t comm = union_len(u, kc), overlap = 0;
    for (size_t i = 0, j = 0; i < kc && j < kk;) { /* communication ∩ computation */
        uint64_t a = u[i][0] > v[j][0] ? u[i][0] : v[j][0];
        uint64_t b = u[i][1] < v[j][1] ? u[i][1] : v[j][1];
        overlap += b > a ? b - a : 0;
        if (u[i][1] < v[j][1])
            i++;
        else
            j++;
    }
    cr_assert_gt(gaps, 100u, "the fixture has idle gaps");
    cr_assert(comm > 0 && overlap > 0 && overlap < comm, "communication partly overlapped");

    /* each step's busy time, exactly: the union clipped to the step */
    uint64_t step_busy[STEPS] = { 0 };
    for (uint64_t n = 0; n < STEPS; n++) {
        uint64_t a = n * (end / STEPS), b = a + end / STEPS;
        for (size_t i = 0; i < k; i++) {
            uint64_t from = u_busy[i][0] > a ? u_busy[i][0] : a;
            uint64_t to = u_busy[i][1] < b ? u_busy[i][1] : b;
            step_busy[n] += to > from ? to - from : 0;
        }
    }
    model_gpu_device first = { 0 };
    uint64_t first_steps[STEPS] = { 0 };
    for (int order = 0; order < 4; order++) {
        if (order == 1)
            qsort(r, N, sizeof *r, rec_by_stream);
        else if (order == 2)
            qsort(r, N, sizeof *r, rec_by_time);
        if (order == 3)
            shuffle(r, N, sizeof *r, &rng);
        const char *path = fu_path("gpu-order.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        for (uint64_t n = 0; n < STEPS; n++)
            synth_step(s, 0, n, PROF_STEP_SAMPLED, n * (end / STEPS), end / STEPS);
        for (size_t i = 0; i < N; i++)
            write_rec(s, &r[order == 2 ? N - 1 - i : i]);
        close_ok(s);
        profile_model m;
        load(path, &m);
        cr_assert_eq(m.ngpus, 1u);
        const model_gpu_device *d = &m.gpus[0];
        cr_assert_eq(d->busy_ns, busy, "order %d: busy %llu, exact %llu", order,
                     (unsigned long long)d->busy_ns, (unsigned long long)busy);
        cr_assert_eq(d->idle_gaps, gaps, "order %d", order);
        cr_assert_eq(d->idle_gap_ns, gap_ns, "order %d", order);
        for (int j = 0; j < 3; j++)
            cr_assert_eq(d->longest[j].dur_ns, longest[j], "order %d, gap %d", order, j);
        cr_assert_eq(d->comm_ns, comm, "order %d", order);
        cr_assert_eq(d->comm_overlap_ns, overlap, "order %d", order);
        cr_assert_gt(d->step_busy_ns, 0u);
        if (order == 0)
            first = *d;
        cr_assert_eq(d->step_busy_ns, first.step_busy_ns, "order %d", order);
        cr_assert_eq(d->step_comm_ns, first.step_comm_ns, "order %d", order);
        cr_assert_eq(d->step_overlap_ns, first.step_overlap_ns, "order %d", order);
        /* each step's share of it (the ranks' heat map): the same in every
         * order, summing to the device's, and each step's own busy time
         * exactly unless stretches were merged, then within a tenth of it */
        cr_assert_eq(m.nsteps, (size_t)STEPS);
        uint64_t sum = 0;
        for (size_t n = 0; n < STEPS; n++) {
            uint64_t got = m.steps[n].gpu_busy_ns, want = step_busy[m.steps[n].number];
            sum += got;
            if (order == 0)
                first_steps[n] = got;
            cr_assert_eq(got, first_steps[n], "order %d, step %zu", order, n);
            if (!d->step_interpolated)
                cr_assert_eq(got, want, "step %zu: %llu, exact %llu", n, (unsigned long long)got,
                             (unsigned long long)want);
            else
                cr_assert(got + want / 10 >= want && got <= want + want / 10,
                          "step %zu: %llu, exact %llu", n, (unsigned long long)got,
                          (unsigned long long)want);
        }
        cr_assert(sum + STEPS >= d->step_busy_ns && sum <= d->step_busy_ns + STEPS,
                  "steps %llu, device %llu", (unsigned long long)sum,
                  (unsigned long long)d->step_busy_ns);
        profile_model_free(&m);
    }
    free(r);
    free(u);
    free(u_busy);
    free(v);
}

/* The intersection of two unions into out (room for ku + kv); returns its
 * length in intervals. */
static size_t union_and(uint64_t (*u)[2], size_t ku, uint64_t (*v)[2], size_t kv,
                        uint64_t (*out)[2])
{
    size_t k = 0;
    for (size_t i = 0, j = 0; i < ku && j < kv;) {
        uint64_t a = u[i][0] > v[j][0] ? u[i][0] : v[j][0];
        uint64_t b = u[i][1] < v[j][1] ? u[i][1] : v[j][1];
        if (b > a)
            out[k][0] = a, out[k][1] = b, k++;
        if (u[i][1] < v[j][1])
            i++;
        else
            j++;
    }
    return k;
}

/* A step written to the file now, in a block of its own (a thread's block
 * is written when full, so a step would otherwise reach the file with the
 * last of its thread's records): the mark after it pushes it out. */
static void write_step_now(synth *s, uint64_t number, uint64_t start, uint64_t dur)
{
    synth_block_records(s, 1);
    synth_step(s, 2, number, PROF_STEP_SAMPLED, start, dur);
    synth_mark(s, 2, "step written", start);
    synth_block_records(s, 4096);
}

/* HTA's breakdowns count the records launched before the final step
 * started (rules.md §3.1). Records launched up to two steps before they
 * run, launch calls, and steps are written in five orders: steps first and
 * each call before its record; records stream by stream and the calls
 * after them all; everything shuffled; records reversed, then calls, then
 * steps; calls, then records, then steps. Each gives the figures of the
 * records chosen by launch time and taken at once: the window, the time of
 * each set of classes, and the records left out, ten times past the
 * batches and limits of 4,096. */
Test(model_profile, gpu_hta_window_in_any_order)
{
    enum { N = 10 * 4096 + 7, STREAMS = 5, STEPS = 40 };
    static const uint32_t cls_of[STREAMS] = { 0, 0, 1, 2, 3 };
    gpu_rec *r = malloc(N * sizeof *r), *w = malloc(N * sizeof *w);
    uint64_t(*u[3])[2], (*x)[2] = malloc(N * sizeof *x), (*y)[2] = malloc(N * sizeof *y);
    for (int c = 0; c < 3; c++)
        u[c] = malloc(N * sizeof *u[c]);
    cr_assert(r && w && x && y && u[0] && u[1] && u[2]);
    synth_rng rng = { 36 };
    uint64_t launch = MS, step_len = 0;
    for (size_t i = 0; i < N; i++) { /* calls in order; each record runs up to 2.5 ms later */
        launch += 1 + synth_rand(&rng) % 4000;
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        r[i] = (gpu_rec){ launch + synth_rand(&rng) % (5 * MS / 2), 1 + synth_rand(&rng) % 9000,
                          st, cls_of[st], launch, 1000 + i };
    }
    step_len = launch / STEPS;
    uint64_t final = (STEPS - 1) * step_len;

    /* the records launched before the final step, their window and unions */
    size_t nw = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < N; i++) {
        if (r[i].launch >= final)
            continue;
        w[nw++] = r[i];
        first = r[i].start < first ? r[i].start : first;
        last = r[i].start + r[i].dur > last ? r[i].start + r[i].dur : last;
    }
    qsort(w, nw, sizeof *w, rec_by_time);
    size_t k[3] = { rec_union(w, nw, 1u, u[0]), rec_union(w, nw, 2u, u[1]),
                    rec_union(w, nw, 0xcu, u[2]) };
    uint64_t len[3] = { union_len(u[0], k[0]), union_len(u[1], k[1]), union_len(u[2], k[2]) };
    uint64_t both[3]; /* computation and communication, computation and memory, the others */
    both[0] = union_len(x, union_and(u[0], k[0], u[1], k[1], x));
    both[1] = union_len(y, union_and(u[0], k[0], u[2], k[2], y));
    both[2] = union_len(y, union_and(u[1], k[1], u[2], k[2], y));
    size_t kx = union_and(u[0], k[0], u[1], k[1], x);
    uint64_t all3 = union_len(y, union_and(x, kx, u[2], k[2], y));
    uint64_t want[8] = { 0,
                         len[0] - both[0] - both[1] + all3,
                         len[1] - both[0] - both[2] + all3,
                         both[0] - all3,
                         len[2] - both[1] - both[2] + all3,
                         both[1] - all3,
                         both[2] - all3,
                         all3 };
    cr_assert(nw < N && N - nw > 100, "the final step launched records");
    cr_assert(want[3] && want[5] && want[6] && want[7], "every overlap occurs");

    for (int order = 0; order < 5; order++) {
        /* items: 0..N-1 records, N..2N-1 calls, 2N.. steps */
        size_t nitems = 2 * N + STEPS, *item = malloc(nitems * sizeof *item);
        cr_assert_not_null(item);
        for (size_t i = 0; i < N; i++) {
            item[2 * i] = N + i, item[2 * i + 1] = i; /* each call before its record */
        }
        if (order == 1) { /* records stream by stream, then the calls */
            gpu_rec *byst = malloc(N * sizeof *byst);
            cr_assert_not_null(byst);
            memcpy(byst, r, N * sizeof *r);
            qsort(byst, N, sizeof *byst, rec_by_stream);
            for (size_t i = 0; i < N; i++)
                item[i] = (size_t)(byst[i].correlation - 1000), item[N + i] = N + i;
            free(byst);
        } else if (order == 3) { /* records reversed, calls, steps last */
            for (size_t i = 0; i < N; i++)
                item[i] = N - 1 - i, item[N + i] = N + i;
        } else if (order == 4) { /* calls, records, steps last */
            for (size_t i = 0; i < N; i++)
                item[i] = N + i, item[N + i] = i;
        }
        for (size_t i = 0; i < STEPS; i++)
            item[2 * N + i] = 2 * N + i;
        if (order == 0 || order == 1) { /* steps first */
            memmove(item + STEPS, item, 2 * N * sizeof *item);
            for (size_t i = 0; i < STEPS; i++)
                item[i] = 2 * N + i;
        }
        if (order == 2)
            shuffle(item, nitems, sizeof *item, &rng);
        const char *path = fu_path("gpu-window.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        for (size_t i = 0; i < nitems; i++) {
            size_t it = item[i];
            if (it < N)
                write_rec(s, &r[it]);
            else if (it < 2 * N)
                synth_api(s, 0, "cudaLaunchKernel", r[it - N].correlation, r[it - N].launch,
                          1000);
            else
                write_step_now(s, it - 2 * N, (it - 2 * N) * step_len, step_len);
        }
        close_ok(s);
        free(item);
        profile_model m;
        load(path, &m);
        cr_assert_eq(m.ngpus, 1u);
        const model_gpu_window *h = &m.gpus[0].hta;
        cr_assert(h->final_step_out, "order %d", order);
        cr_assert_eq(h->left_out, (uint64_t)(N - nw), "order %d: left out %llu, want %zu",
                     order, (unsigned long long)h->left_out, N - nw);
        cr_assert_eq(h->first_ns, first, "order %d", order);
        cr_assert_eq(h->last_ns, last, "order %d", order);
        for (int mask = 0; mask < 8; mask++)
            cr_assert_eq(h->class_ns[mask], want[mask], "order %d, classes %d: %llu, want %llu",
                         order, mask, (unsigned long long)h->class_ns[mask],
                         (unsigned long long)want[mask]);
        profile_model_free(&m);
    }
    for (int c = 0; c < 3; c++)
        free(u[c]);
    free(r);
    free(w);
    free(x);
    free(y);
}

/* More GPU records than a device holds (262,144) before any step, or past
 * the latest step's start when the first step comes first: which were
 * launched in the final step is no longer known, and HTA's figures count
 * every record and say so. Fewer: the final step is left out as usual. */
Test(model_profile, gpu_hta_steps_after_the_records)
{
    for (int run = 0; run < 3; run++) {
        int many = run > 0, first_step_first = run == 2;
        uint64_t n = many ? 270000 : 1000, step = n * 1000 / 4;
        const char *path = fu_path("gpu-steps-last.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        if (first_step_first)
            write_step_now(s, 0, 0, step);
        for (uint64_t i = 0; i < n; i++) {
            synth_api(s, 0, "cudaLaunchKernel", 1 + i, i * 1000, 100);
            synth_gpu_kernel(s, "gemm", 0, 7, 1 + i, i * 1000 + 200, 500);
        }
        for (uint64_t k = first_step_first ? 1 : 0; k < 4; k++)
            synth_step(s, 0, k, PROF_STEP_SAMPLED, k * step, step);
        close_ok(s);
        profile_model m;
        load(path, &m);
        const model_gpu_window *h = &m.gpus[0].hta;
        cr_assert_eq(h->final_step_out, !many, "run %d", run);
        cr_assert_eq(h->final_step_unknown, many, "run %d", run);
        uint64_t counted = many ? n : 3 * n / 4;
        cr_assert_eq(h->left_out, n - counted, "left out %llu", (unsigned long long)h->left_out);
        cr_assert_eq(h->class_ns[1], counted * 500, "computation %llu, want %llu",
                     (unsigned long long)h->class_ns[1], (unsigned long long)(counted * 500));
        cr_assert_eq(m.gpus[0].busy_ns, n * 500);
        profile_model_free(&m);
    }
}

/* Communication kernels by name (rules.md §4.10): the libraries' and the
 * collectives' names in any case, not kernels that only resemble them. */
Test(model_profile, communication_kernels_by_name)
{
    static const char *const comm[] = {
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "NCCLKERNEL",
        "void multimem_all_reduce_kernel<__nv_bfloat16, 8>(...)",
        "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16>(...)",
        "void vllm::cross_device_reduce_1stage<half, 8>(...)",
        "void tensorrt_llm::kernels::oneShotAllReduceKernel<float>(...)",
        "nvshmemi_transfer_kernel",
        "mscclpp::allgather6",
        "all_to_all_single_kernel",
        "reduce_scatter_kernel",
    };
    static const char *const other[] = {
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(...)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
        "Memcpy DtoD (Device -> Device)",
        "void cub::DeviceReduceKernel<...>",
        "",
    };
    for (size_t i = 0; i < sizeof comm / sizeof comm[0]; i++)
        cr_expect(model_kernel_is_comm(comm[i]), "%s", comm[i]);
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        cr_expect(!model_kernel_is_comm(other[i]), "%s", other[i]);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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
        close_ok(s);
        profile_model m;
        load(path, &m);
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
    close_ok(s);
    profile_model m;
    load(path, &m);
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
    close_ok(s);
    profile_model m;
    load(path, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
    cr_assert_eq(m.rank, 3);
    cr_assert_eq(m.world_size, 8);
    cr_assert_str_eq(m.path, path);
    cr_assert(strstr(m.metadata, "\"host\":\"h\"") != NULL);
    cr_assert_eq(m.major, 1u);
    cr_assert_eq(op(&m, "r")->calls, 200u);
    profile_model_free(&m);

    s = synth_open(path, "{\"rank\":\"zero\"}");
    cr_assert_not_null(s);
    close_ok(s);
    load(path, &m);
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
    close_ok(s);
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
    load(DEMO, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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
    close_ok(s);

    profile_model m;
    load(path, &m);
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

/* A profile may name any number of devices (an untrusted one, 100,000):
 * each is found through an index, not a search over the others, and every
 * one keeps its own activity. */
Test(model_profile, many_devices_are_each_counted)
{
    const char *path = fu_path("devices.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    enum { NDEV = 20000 };
    for (uint32_t i = 0; i < NDEV; i++) /* device ids spread out, some sharing low bits */
        synth_gpu_kernel(s, "k", i * 65536u + (i & 7u), 0, i, 1000 + i, 10);
    synth_gpu_kernel(s, "k", 3u * 65536u + 3u, 0, NDEV, 5 * MS, 10); /* device 3 again */
    close_ok(s);

    profile_model m;
    load(path, &m);
    cr_assert_eq(m.ngpus, (size_t)NDEV);
    for (size_t i = 0; i < m.ngpus; i++) {
        cr_assert_eq(m.gpus[i].kernels, m.gpus[i].device == 3u * 65536u + 3u ? 2u : 1u,
                     "device %u", m.gpus[i].device);
        if (i)
            cr_assert_gt(m.gpus[i].device, m.gpus[i - 1].device, "sorted by device");
    }
    profile_model_free(&m);
}
