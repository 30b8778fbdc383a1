/* bench_record.c - what recording costs, as ratios measured in one run
 * (DESIGN §7): a region begin+end pair by id, by name and with PROF_SCOPE,
 * on one and two threads, against the two clock reads it needs and
 * against a naive recorder (fprintf under a mutex); a call while recording
 * is off; and bytes per region on disk for a realistic nested loop. Each
 * figure is the best of several rounds, so that a preemption on a shared
 * machine does not decide it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"
#include "record/clock.h"

#define PAIRS 1000000u /* per round */
#define ROUNDS 7

static volatile uint64_t sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef void (*loop_fn)(unsigned n);

/* Best ns per iteration of fn over ROUNDS rounds of PAIRS. */
static double best_ns(loop_fn fn)
{
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        fn(PAIRS);
        double ns = (now_s() - t0) * 1e9 / PAIRS;
        best = ns < best ? ns : best;
        prof_flush(); /* hand the buffers back between rounds */
    }
    return best;
}

static void loop_clock(unsigned n)
{
    uint64_t acc = 0;
    for (unsigned i = 0; i < n; i++) {
        acc += rt_clock_now();
        acc ^= rt_clock_now();
    }
    sink = acc;
}

static prof_name bench_id;

static void loop_id(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        prof_region_begin_id(bench_id, PROF_KIND_COMPUTE);
        prof_region_end();
    }
}

static void loop_name(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        prof_region_begin("forward");
        prof_region_end();
    }
}

static void loop_scope(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        PROF_SCOPE("scoped");
    }
}

/* The recorder everyone writes first. */
static pthread_mutex_t naive_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *naive_out;

static void loop_naive(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t t0 = rt_clock_now();
        uint64_t t1 = rt_clock_now();
        pthread_mutex_lock(&naive_mu);
        fprintf(naive_out, "%s %llu %llu\n", "forward", (unsigned long long)t0,
                (unsigned long long)t1);
        pthread_mutex_unlock(&naive_mu);
    }
}

typedef struct par {
    loop_fn fn;
    double ns;
} par;

static void *par_main(void *arg)
{
    par *p = arg;
    p->ns = best_ns(p->fn);
    return NULL;
}

/* ns per pair per thread with two threads running fn at once. */
static double two_threads(loop_fn fn)
{
    pthread_t t;
    par a = { fn, 0 }, b = { fn, 0 };
    if (pthread_create(&t, NULL, par_main, &a) != 0)
        return -1;
    par_main(&b);
    pthread_join(t, NULL);
    return (a.ns + b.ns) / 2;
}

static void spin_ns(uint64_t ns)
{
    uint64_t end = rt_clock_mono_ns() + ns;
    while (rt_clock_mono_ns() < end)
        ;
}

/* A training loop's shape: data loading, 12 forward and 12 backward
 * layers, an optimizer step, with a little real time in each region. */
static uint64_t realistic_loop(unsigned steps)
{
    static const char *const layers[] = { "embed", "attn.0", "mlp.0", "attn.1", "mlp.1",
                                          "attn.2", "mlp.2", "attn.3", "mlp.3", "norm",
                                          "head", "loss" };
    uint64_t regions = 0, rng = 12345;
    for (unsigned s = 0; s < steps; s++) {
        prof_region_begin_kind("data_loading", PROF_KIND_DATA);
        spin_ns(2000);
        prof_region_end();
        prof_region_begin("forward");
        for (int l = 0; l < 12; l++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            prof_region_begin(layers[l]);
            spin_ns(300 + (rng >> 54));
            prof_region_end();
        }
        prof_region_end();
        prof_region_begin("backward");
        for (int l = 11; l >= 0; l--) {
            prof_region_begin(layers[l]);
            spin_ns(600 + (rng >> 55));
            prof_region_end();
        }
        prof_region_end();
        prof_region_begin("optimizer");
        spin_ns(1000);
        prof_region_end();
        prof_step();
        regions += 28;
    }
    return regions;
}

static void verdict(const char *what, double value, double target, const char *unit)
{
    printf("  %-34s %8.2f%s  target <= %.1f%s  %s\n", what, value, unit, target, unit,
           value <= target ? "ok" : "MISS");
}

static int start(const char *path)
{
    prof_config c = { 0 };
    c.output = path;
    c.buffer_bytes = (size_t)1 << 30;
    c.flush_interval_ms = 100;
    int e = prof_start(&c);
    if (e)
        fprintf(stderr, "bench_record: cannot start recording to '%s': %s\n", path,
                strerror(-e));
    return e;
}

int main(void)
{
    char dir[] = "/tmp/prof-bench-XXXXXX", path[128], naive_path[128];
    if (!mkdtemp(dir))
        return perror("bench_record: mkdtemp"), 1;
    snprintf(path, sizeof path, "%s/bench.prof", dir);
    snprintf(naive_path, sizeof naive_path, "%s/naive.txt", dir);
    if (start(path))
        return 1;
    bench_id = prof_intern("bench");

    double clk = best_ns(loop_clock), id = best_ns(loop_id), name = best_ns(loop_name);
    double scope = best_ns(loop_scope);
    double clk2 = two_threads(loop_clock), id2 = two_threads(loop_id);
    double name2 = two_threads(loop_name);
    if (!(naive_out = fopen(naive_path, "w")))
        return perror("bench_record: naive output"), 1;
    double naive = best_ns(loop_naive), naive2 = two_threads(loop_naive);
    fclose(naive_out);
    prof_stop();
    double off = best_ns(loop_id);

    char path2[160];
    snprintf(path2, sizeof path2, "%s/loop.prof", dir);
    if (start(path2))
        return 1;
    uint64_t regions = realistic_loop(4000);
    prof_stop();
    struct stat st;
    if (stat(path2, &st) != 0)
        return perror("bench_record: stat"), 1;
    double bytes = (double)st.st_size / (double)regions;

    printf("recording cost, ns per begin+end pair (best of %d x %u)\n", ROUNDS, PAIRS);
    printf("  %-22s %8s %8s\n", "", "1 thread", "2 threads");
    printf("  %-22s %8.2f %8.2f\n", "two clock reads", clk, clk2);
    printf("  %-22s %8.2f %8.2f\n", "by id", id, id2);
    printf("  %-22s %8.2f %8.2f\n", "by name", name, name2);
    printf("  %-22s %8.2f\n", "PROF_SCOPE", scope);
    printf("  %-22s %8.2f %8.2f\n", "naive mutex+fprintf", naive, naive2);
    printf("  %-22s %8.2f\n", "recording off", off);
    printf("on disk: %llu regions in %lld bytes (clock: %s)\n", (unsigned long long)regions,
           (long long)st.st_size, rt_clock_use_tsc ? "tsc" : "monotonic");
    printf("ratios\n");
    verdict("pair by id / two clock reads", id / clk, 1.3, "x");
    verdict("pair by id / two clock reads, 2 thr", id2 / clk2, 1.3, "x");
    verdict("by name / by id", name / id, 2.0, "x");
    verdict("PROF_SCOPE / two clock reads", scope / clk, 1.3, "x");
    verdict("bytes per region event", bytes, 4.0, " B");
    printf("  %-34s %8.1fx faster than the naive recorder\n", "by id", naive / id);
    unlink(path);
    unlink(path2);
    unlink(naive_path);
    rmdir(dir);
    return 0;
}
