/* analysis_threads.c - a report whose leak fits ran on a second thread
 * beside the step analysis and the first sections (src/analysis/report.c),
 * a thread of its own or one from a pool, is the report built on one
 * thread (a tuning of one thread, PROF_THREADS=1), byte for byte: on testdata/demo.prof, on runs
 * of one to nine memory series of different shapes (leaks, flat noise,
 * sawtooth, a late leak, a series sampled more often than steps), and on a
 * case of every class of the leak battery. Built also under
 * ThreadSanitizer (TSAN_UNITS), which checks that the fits and the sections
 * share only what both read. Run from the repository root. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis_util.h"
#include "criterion_tsan.h"
#include "leak_battery.h"

#define DEMO "testdata/demo.prof"
#define STEPS 300

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_threads, .fini = teardown);

/* How a report is built: on one thread, with threads of their own (the
 * default tuning), or with threads from a pool (the tool's). */
enum { ONE_THREAD, OWN_THREADS, POOLED };

static const prof_tuning *tuning_of(int how)
{
    static const prof_tuning one = { .threads = 1 };
    static prof_tuning pooled;
    if (how == ONE_THREAD)
        return &one;
    if (how == OWN_THREADS)
        return NULL;
    if (!pooled.pool)
        cr_assert_not_null(pooled.pool = pool_new(2));
    return &pooled;
}

/* The report of path as compact JSON, built as how says. */
static char *report_text(const char *path, int how)
{
    analysis_options o;
    analysis_options_default(&o);
    o.tuning = tuning_of(how);
    cJSON *r = au_report(path, &o);
    char *text = cJSON_PrintUnformatted(r);
    cr_assert_not_null(text, "printing the report of %s", path);
    cJSON_Delete(r);
    return text;
}

static void assert_same_both_ways(const char *path, const char *what)
{
    char *one = report_text(path, ONE_THREAD), *two = report_text(path, OWN_THREADS);
    char *pooled = report_text(path, POOLED);
    cr_assert(strcmp(one, two) == 0, "%s: the report on two threads differs from one thread's",
              what);
    cr_assert(strcmp(one, pooled) == 0, "%s: the report with a pool differs from one thread's",
              what);
    free(one);
    free(two);
    free(pooled);
}

/* Bytes of series k at step i: four shapes in turn, each at its own level. */
static double series_bytes(size_t k, uint64_t i, synth_rng *rng)
{
    double base = (double)(k + 1) * 512.0 * FX_MB, step = (double)i;
    switch (k % 4) {
    case 0: /* a leak from the start */
        return base + 12.0 * FX_MB * step + FX_MB * synth_gauss(rng);
    case 1: /* flat noise */
        return base + 4.0 * FX_MB * synth_gauss(rng);
    case 2: /* a sawtooth of 25-step teeth */
        return base + 8.0 * FX_MB * (double)(i % 25);
    default: /* flat for the first half, then a leak */
        return base + (i < STEPS / 2 ? 0.0 : 3.0 * FX_MB * (step - STEPS / 2));
    }
}

/* A run of STEPS steps with nseries memory series sampled once a step, and
 * one more ("host.rss") sampled four times a step. */
static void write_series(const char *path, size_t nseries)
{
    char meta[600];
    fx_metadata(meta, sizeof meta, 0, 1, 80.0 * 1024 * FX_MB, 64.0 * 1024 * FX_MB);
    synth *s = synth_open(path, meta);
    cr_assert_not_null(s, "cannot write %s", path);
    synth_rng rng = { 17 + nseries };
    uint64_t t = 1000;
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t dur = synth_jitter(&rng, 100 * FX_MS, 0.02);
        synth_step(s, 0, i, 0, t, dur);
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, t + 1000, dur / 3);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 1, t + 2000 + dur / 3, dur / 2);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, dur);
        for (size_t k = 0; k < nseries; k++) {
            char name[48];
            snprintf(name, sizeof name, "gpu%zu.allocated", k);
            synth_memory(s, 0, name, t + dur - FX_MS, (uint64_t)series_bytes(k, i, &rng));
        }
        for (uint64_t q = 0; q < 4; q++)
            synth_memory(s, 0, "host.rss", t + q * (dur / 4) + 10,
                         (uint64_t)(2048.0 * FX_MB + 0.5 * FX_MB * (double)(4 * i + q)));
        t += dur;
    }
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "writing %s: %s", path, err.message);
}

Test(analysis_threads, demo_is_the_same_on_two_threads)
{
    assert_same_both_ways(DEMO, DEMO);
}

Test(analysis_threads, any_number_of_memory_series_is_the_same_on_two_threads)
{
    for (size_t n = 0; n <= 8; n++) {
        char name[48], what[64];
        snprintf(name, sizeof name, "series%zu.prof", n);
        snprintf(what, sizeof what, "%zu series and host.rss", n);
        const char *path = fx_path(name);
        write_series(path, n);
        assert_same_both_ways(path, what);
    }
}

Test(analysis_threads, every_leak_battery_class_is_the_same_on_two_threads)
{
    for (int c = 0; c < LB_CLASSES; c++) {
        char name[64];
        snprintf(name, sizeof name, "battery-%d.prof", c);
        const char *path = fx_path(name);
        lb_truth truth;
        cr_assert_eq(lb_write(path, (lb_class)c, 3, &truth), 0, "writing %s", name);
        assert_same_both_ways(path, lb_name((lb_class)c));
    }
}
