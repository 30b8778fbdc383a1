/* model_launch.c - GPU work joined to its launches (src/model/launch.c,
 * formats/rules.md §3.2) on profiles with known answers: nested regions on
 * several threads, launches in every region and between them, their
 * records written in the orders real files have (calls and records long
 * after the regions, records before their calls, all shuffled), graph
 * launches, records with no call, and sizes past the model's bounds. Each
 * operation's GPU self and total time and kernels are checked against a
 * brute-force join of the same launches. */
#include <stdlib.h>
#include <string.h>

#include "format_util.h"
#include "model/profile.h"
#include "synth.h"
#include "model_util.h"

#define US 1000ull
#define NOPS 6

static const char *const op_names[NOPS] = { "step", "forward", "backward", "linear", "relu",
                                            "optimizer" };

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_launch, .fini = teardown);

typedef struct jreg {
    uint32_t thread, depth;
    int op;
    uint64_t s, e;
} jreg;

typedef struct jlaunch {
    uint32_t thread;
    uint64_t corr, t, call_dur, gpu_start, gpu_dur;
    int records;  /* GPU records of the call: 1, or several for a graph launch */
    int kernel;   /* kernels, else memsets                                     */
    int hta;      /* cudaLaunchKernel, else cudaGraphLaunch                      */
} jlaunch;

typedef struct jcase {
    jreg *r;
    size_t nr;
    jlaunch *l;
    size_t nl;
} jcase;

static void reg_add(jcase *c, uint32_t thread, uint32_t depth, int op, uint64_t s, uint64_t e)
{
    c->r = realloc(c->r, (c->nr + 1) * sizeof *c->r);
    cr_assert_not_null(c->r);
    c->r[c->nr++] = (jreg){ thread, depth, op, s, e };
}

static uint64_t next_corr = 1;

static void launch_add(jcase *c, synth_rng *g, uint32_t thread, uint64_t t)
{
    c->l = realloc(c->l, (c->nl + 1) * sizeof *c->l);
    cr_assert_not_null(c->l);
    int graph = synth_rand(g) % 16 == 0;
    uint64_t call = 3 * US + synth_rand(g) % (5 * US);
    c->l[c->nl++] = (jlaunch){ thread, next_corr++, t, call, t + call + synth_rand(g) % (40 * US),
                               1 * US + synth_rand(g) % (30 * US), graph ? 3 : 1,
                               synth_rand(g) % 8 != 0, !graph };
}

/* A few launches at random points of [s, e), outside the children that
 * the caller places in the gaps it leaves. */
static void launches_in(jcase *c, synth_rng *g, uint32_t thread, uint64_t s, uint64_t e, int n)
{
    for (int i = 0; i < n && e > s + 20 * US; i++)
        launch_add(c, g, thread, s + synth_rand(g) % (e - s - 10 * US));
}

static int launch_by_time(const void *pa, const void *pb)
{
    const jlaunch *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

/* A thread makes its calls in time order, and the runtime numbers them in
 * that order. */
static void calls_in_order(jcase *c)
{
    qsort(c->l, c->nl, sizeof *c->l, launch_by_time);
    for (size_t i = 0; i < c->nl; i++)
        c->l[i].corr = i + 1;
}

/* Steps of nested regions on each thread: step > forward/backward >
 * linear/relu > linear again inside linear (a call inside a call of
 * itself), launches at every level and between the steps. */
static void build(jcase *c, uint32_t threads, int steps, uint64_t seed)
{
    synth_rng g = { seed };
    memset(c, 0, sizeof *c);
    for (uint32_t th = 0; th < threads; th++) {
        uint64_t t = 1000 * US + th * 7 * US;
        for (int st = 0; st < steps; st++) {
            launches_in(c, &g, th, t, t + 100 * US, 2); /* outside every region */
            t += 100 * US;
            uint64_t s0 = t;
            launches_in(c, &g, th, t, t + 50 * US, 1);
            t += 50 * US;
            for (int phase = 1; phase <= 2; phase++) {
                uint64_t s1 = t;
                launches_in(c, &g, th, t, t + 40 * US, 1);
                t += 40 * US;
                for (int k = 0; k < 3; k++) {
                    int op = 3 + (int)(synth_rand(&g) % 2);
                    uint64_t s2 = t;
                    launches_in(c, &g, th, t, t + 60 * US, 2);
                    t += 60 * US;
                    if (op == 3 && synth_rand(&g) % 2) {
                        uint64_t s3 = t;
                        launches_in(c, &g, th, t, t + 80 * US, 3);
                        t += 80 * US;
                        reg_add(c, th, 3, 3, s3, t);
                    }
                    t += 10 * US;
                    reg_add(c, th, 2, op, s2, t);
                }
                t += 30 * US;
                reg_add(c, th, 1, phase, s1, t);
            }
            uint64_t s5 = t;
            launches_in(c, &g, th, t, t + 70 * US, 2);
            t += 70 * US;
            reg_add(c, th, 1, 5, s5, t);
            t += 20 * US;
            reg_add(c, th, 0, 0, s0, t);
        }
    }
    calls_in_order(c);
}

/* The expected figures, by brute force: per op self, total, kernels of the
 * total; and the time launched outside every region. */
typedef struct jexpect {
    uint64_t self[NOPS], total[NOPS], kernels[NOPS], outside, joined_ns;
} jexpect;

static uint64_t launch_ns(const jlaunch *l)
{
    return (uint64_t)l->records * l->gpu_dur;
}

static void expect(const jcase *c, jexpect *x, int (*skip)(const jlaunch *))
{
    memset(x, 0, sizeof *x);
    for (size_t i = 0; i < c->nl; i++) {
        const jlaunch *l = &c->l[i];
        if (skip && skip(l))
            continue;
        uint64_t ns = launch_ns(l);
        x->joined_ns += ns;
        const jreg *inner = NULL;
        int seen[NOPS] = { 0 };
        for (size_t k = 0; k < c->nr; k++) {
            const jreg *r = &c->r[k];
            if (r->thread != l->thread || r->s > l->t || r->e <= l->t)
                continue;
            if (!inner || r->depth > inner->depth)
                inner = r;
            if (!seen[r->op]++) {
                x->total[r->op] += ns;
                x->kernels[r->op] += l->kernel ? (uint64_t)l->records : 0;
            }
        }
        if (inner)
            x->self[inner->op] += ns;
        else
            x->outside += ns;
    }
}

/* ---- writing, in the orders files have -------------------------------------------- */

enum { ORDER_LATE, ORDER_GPU_FIRST, ORDER_INTERLEAVED, ORDER_SHUFFLED };

static void put_call(synth *s, const jlaunch *l)
{
    synth_api(s, l->thread, l->hta ? "cudaLaunchKernel" : "cudaGraphLaunch", l->corr, l->t,
              l->call_dur);
}

static void put_gpu(synth *s, const jlaunch *l)
{
    for (int k = 0; k < l->records; k++) {
        uint64_t at = l->gpu_start + (uint64_t)k * l->gpu_dur;
        if (l->kernel)
            synth_gpu_kernel(s, "gemm", 0, 7 + l->thread, l->corr, at, l->gpu_dur);
        else
            synth_gpu_memset(s, 0, 7 + l->thread, l->corr, 64, at, l->gpu_dur);
    }
}

static int reg_by_end(const void *pa, const void *pb)
{
    const jreg *a = pa, *b = pb;
    if (a->e != b->e)
        return a->e < b->e ? -1 : 1;
    return (a->depth < b->depth) - (a->depth > b->depth); /* the child first */
}

/* Regions in end order; calls and GPU records as order says: all after
 * the regions (CUPTI's buffers flushed at the end), GPU records first, in
 * batches a while after the regions they fall in, or calls and streams
 * interleaved at random (a thread's calls and a stream's records stay in
 * the order they were made, as CUPTI and the importers keep them). */
static const char *write_case(const char *name, jcase *c, int order, const char *meta)
{
    const char *path = fu_path(name);
    synth *s = synth_open(path, meta);
    synth_rng g = { 99 };
    synth_block_records(s, 64);
    qsort(c->r, c->nr, sizeof *c->r, reg_by_end);
    uint32_t threads = 0;
    for (size_t i = 0; i < c->nr; i++)
        if (c->r[i].thread + 1 > threads)
            threads = c->r[i].thread + 1;
    for (uint32_t th = 0; th < threads; th++)
        synth_thread(s, th, 100 + th, th ? "backward" : "main");
    jlaunch *l = malloc(c->nl * sizeof *l);
    cr_assert_not_null(l);
    memcpy(l, c->l, c->nl * sizeof *l);
    if (order == ORDER_GPU_FIRST)
        for (size_t i = 0; i < c->nl; i++)
            put_gpu(s, &l[i]);
    size_t next = 0; /* launches written so far (interleaved) */
    for (size_t i = 0; i < c->nr; i++) {
        const jreg *r = &c->r[i];
        synth_region(s, r->thread, op_names[r->op], PROF_KIND_COMPUTE, r->depth, r->s,
                     r->e - r->s);
        /* interleaved: the launches of up to 2 ms before now, in a batch,
         * calls and records mixed as CUPTI's buffer has them */
        while (order == ORDER_INTERLEAVED && next < c->nl && l[next].t + 2000 * US < r->e) {
            put_call(s, &l[next]);
            put_gpu(s, &l[next]);
            next++;
        }
    }
    if (order == ORDER_SHUFFLED) { /* calls, and each stream's records, in order */
        size_t at[3] = { 0, 0, 0 };
        for (size_t left = 2 * c->nl; left > 0;) {
            size_t q = synth_rand(&g) % 3;
            while (q > 0 && at[q] < c->nl && c->l[at[q]].thread != q - 1)
                at[q]++; /* the next launch of that stream's thread */
            if (at[q] >= c->nl)
                continue;
            if (q == 0)
                put_call(s, &c->l[at[0]]);
            else
                put_gpu(s, &c->l[at[q]]);
            at[q]++;
            left--;
        }
    }
    for (size_t i = order == ORDER_INTERLEAVED ? next : 0; order != ORDER_SHUFFLED && i < c->nl;
         i++) {
        put_call(s, &l[i]);
        if (order != ORDER_GPU_FIRST)
            put_gpu(s, &l[i]);
    }
    free(l);
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static void check_tuned(const char *path, const prof_tuning *t, const jexpect *x,
                        const char *what)
{
    profile_model m;
    prof_error err;
    cr_assert_eq(profile_model_load(path, t, &m, NULL, NULL, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(m.gpu_join.late, 0, "%s: %lu late", what, (unsigned long)m.gpu_join.late);
    cr_assert_eq(m.gpu_join.joined_ns, x->joined_ns, "%s: joined %lu, expected %lu", what,
                 (unsigned long)m.gpu_join.joined_ns, (unsigned long)x->joined_ns);
    for (int k = 0; k < NOPS; k++) {
        const model_op *o = mu_find_op(&m, op_names[k]);
        if (!o) {
            cr_assert_eq(x->total[k], 0, "%s: %s missing", what, op_names[k]);
            continue;
        }
        cr_assert_eq(o->gpu_self_ns, x->self[k], "%s: %s self %lu, expected %lu", what,
                     op_names[k], (unsigned long)o->gpu_self_ns, (unsigned long)x->self[k]);
        cr_assert_eq(o->gpu_ns, x->total[k], "%s: %s total %lu, expected %lu", what, op_names[k],
                     (unsigned long)o->gpu_ns, (unsigned long)x->total[k]);
        cr_assert_eq(o->kernels, x->kernels[k], "%s: %s kernels", what, op_names[k]);
    }
    cr_assert_eq(m.gpu_join.outside_ns, x->outside, "%s: outside %lu, expected %lu", what,
                 (unsigned long)m.gpu_join.outside_ns, (unsigned long)x->outside);
    cr_assert_eq(m.gpu_join.joined_ns, x->joined_ns, "%s: joined", what);
    profile_model_free(&m);
}

static void check(const char *path, const jexpect *x, const char *what)
{
    check_tuned(path, NULL, x, what);
}

static const char *const cuda_meta =
    "{\"format\":\"prof\",\"clock\":{\"source\":\"synthetic\"},\"config\":{\"cuda\":1}}";

Test(model_launch, every_order_of_regions_calls_and_records, .timeout = 60)
{
    static const char *const names[] = { "late", "gpu-first", "interleaved", "shuffled" };
    jcase c;
    jexpect x;
    next_corr = 1;
    build(&c, 2, 40, 7);
    expect(&c, &x, NULL);
    cr_assert_gt(x.outside, 0);
    for (int order = 0; order < 4; order++) {
        char file[64];
        snprintf(file, sizeof file, "join-%s.prof", names[order]);
        const char *path = write_case(file, &c, order, cuda_meta);
        check(path, &x, names[order]);
        static const prof_tuning general = { .no_repeat = 1 }; /* the general way agrees */
        check_tuned(path, &general, &x, names[order]);
    }
    free(c.r);
    free(c.l);
}

/* Without CUDA in its metadata, holding starts with the first call or
 * record: interleaved as the recorder writes, the same figures. */
Test(model_launch, holding_starts_with_the_first_cuda_record)
{
    jcase c;
    jexpect x;
    next_corr = 1;
    build(&c, 1, 30, 11);
    expect(&c, &x, NULL);
    check(write_case("join-nometa.prof", &c, ORDER_GPU_FIRST, NULL), &x, "no metadata");
    free(c.r);
    free(c.l);
}

static int odd(const jlaunch *l)
{
    return l->corr % 2 == 1;
}

/* Records whose call never came are counted, not joined, and none of the
 * calls without records holds anything back past the end. */
Test(model_launch, records_without_calls)
{
    jcase c;
    jexpect x;
    next_corr = 1;
    build(&c, 1, 10, 5);
    expect(&c, &x, odd);
    const char *path = fu_path("join-unjoined.prof");
    synth *s = synth_open(path, cuda_meta);
    qsort(c.r, c.nr, sizeof *c.r, reg_by_end);
    synth_thread(s, 0, 100, "main");
    for (size_t i = 0; i < c.nr; i++)
        synth_region(s, 0, op_names[c.r[i].op], PROF_KIND_COMPUTE, c.r[i].depth, c.r[i].s,
                     c.r[i].e - c.r[i].s);
    uint64_t records = 0, joined = 0;
    for (size_t i = 0; i < c.nl; i++) {
        if (!odd(&c.l[i])) {
            put_call(s, &c.l[i]);
            joined += (uint64_t)c.l[i].records;
        }
        put_gpu(s, &c.l[i]);
        records += (uint64_t)c.l[i].records;
    }
    synth_api(s, 0, "cudaGetDevice", 1u << 30, 5 * US, US); /* launches nothing */
    cr_assert_eq(synth_close(s, NULL), 0);
    check(path, &x, "half unjoined");
    profile_model m;
    prof_error err;
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK);
    cr_assert_eq(m.gpu_join.records, records);
    cr_assert_eq(m.gpu_join.joined, joined);
    profile_model_free(&m);
    free(c.r);
    free(c.l);
}

/* HTA's launch statistics: cudaLaunchKernel's records only, the delay
 * clipped at 0. */
Test(model_launch, launch_statistics)
{
    const char *path = fu_path("join-stats.prof");
    synth *s = synth_open(path, cuda_meta);
    synth_thread(s, 0, 100, "main");
    synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, 0, 10000 * US);
    /* call [100, 110) us, kernel at 150 us: delay 40 us; call [200, 260),
     * kernel at 250: delay 0 (clipped); a graph launch: not HTA's */
    synth_api(s, 0, "cudaLaunchKernel", 1, 100 * US, 10 * US);
    synth_gpu_kernel(s, "k", 0, 7, 1, 150 * US, 5 * US);
    synth_api(s, 0, "cudaLaunchKernel", 2, 200 * US, 60 * US);
    synth_gpu_kernel(s, "k", 0, 7, 2, 250 * US, 300 * US);
    synth_api(s, 0, "cudaGraphLaunch", 3, 600 * US, 5 * US);
    synth_gpu_kernel(s, "k", 0, 8, 3, 700 * US, 5 * US);
    cr_assert_eq(synth_close(s, NULL), 0);
    profile_model m;
    prof_error err;
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK);
    const model_launch_stats *l = &m.launch_all;
    cr_assert_eq(l->launches, 2);
    cr_assert_eq(l->cpu_ns, 70 * US);
    cr_assert_eq(l->gpu_ns, 305 * US);
    cr_assert_eq(l->delay_ns, 40 * US);
    cr_assert_eq(l->cpu_over, 1, "60 us is over HTA's 50 us");
    cr_assert_eq(l->delay_over, 0);
    cr_assert_eq(m.nlaunch, 1, "one stream had HTA's launches");
    /* its queue: 1 at 100 us, 0 at 150, 1 at 200, 0 at 250 */
    const model_launch_stats *q = &m.launch[0];
    cr_assert_eq(q->queue_events, 4);
    cr_assert_eq(q->queue_max, 1);
    cr_assert_eq(q->queue_at_max_ns, 100 * US);
    cr_assert_float_eq(q->queue_sum, 2.0, 1e-12);
    cr_assert_eq(q->queue_full_ns, 0);
    cr_assert_eq(m.gpu_join.short_kernels, 2);
    cr_assert_eq(m.gpu_join.short_kernel_ns, 10 * US);
    cr_assert_eq(mu_find_op(&m, "step")->gpu_ns, 310 * US);
    profile_model_free(&m);
}

/* Past the bounds: 100,000 launches wait for the one region around them
 * (the older half merged again and again, each pair inside it), then
 * 100,000 outside every region; and a thread that holds more regions than
 * the model keeps before their calls come: the oldest go on without their
 * launches, which come late and are said to. */
Test(model_launch, past_the_bounds, .timeout = 120)
{
    const char *path = fu_path("join-bounds.prof");
    synth *s = synth_open(path, cuda_meta);
    synth_thread(s, 0, 100, "main");
    synth_thread(s, 1, 101, "held");
    const uint64_t n = 100000, hold = 70000;
    uint64_t corr = 1;
    for (uint64_t i = 0; i < n; i++, corr++) { /* inside "run" [0, n * 10 us) */
        synth_api(s, 0, "cudaLaunchKernel", corr, i * 10 * US, 2 * US);
        synth_gpu_kernel(s, "k", 0, 7, corr, i * 10 * US + 5 * US, 1 * US);
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 0, n * 10 * US);
    for (uint64_t i = 0; i < n; i++, corr++) { /* after it: outside */
        uint64_t t = (n + i) * 10 * US;
        synth_api(s, 0, "cudaLaunchKernel", corr, t, 2 * US);
        synth_gpu_kernel(s, "k", 0, 7, corr, t + 5 * US, 1 * US);
    }
    /* thread 1: 70,000 regions, then the calls launched in each */
    uint64_t first = corr;
    for (uint64_t i = 0; i < hold; i++)
        synth_region(s, 1, "tiny", PROF_KIND_COMPUTE, 0, i * 10 * US, 5 * US);
    for (uint64_t i = 0; i < hold; i++, corr++) {
        synth_api(s, 1, "cudaLaunchKernel", corr, i * 10 * US + 1 * US, 1 * US);
        synth_gpu_kernel(s, "k", 0, 8, corr, i * 10 * US + 3 * US, 1 * US);
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    profile_model m;
    prof_error err;
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK);
    cr_assert_eq(m.gpu_join.joined, 2 * n + hold);
    cr_assert_eq(mu_find_op(&m, "run")->gpu_self_ns, n * US);
    const model_op *tiny = mu_find_op(&m, "tiny");
    uint64_t late = hold - 65536; /* regions that went on before their calls came */
    cr_assert_eq(m.gpu_join.late, late, "late %lu", (unsigned long)m.gpu_join.late);
    cr_assert_eq(tiny->gpu_self_ns, (hold - late) * US);
    cr_assert_eq(m.gpu_join.outside_ns, (n + late) * US);
    cr_assert_eq(first + hold, corr);
    profile_model_free(&m);
}
