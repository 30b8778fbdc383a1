/* model_overlap.c - the time other threads worked under a thread's
 * outermost regions (src/model/overlap.c, rules.md §4.1): the union of the
 * other threads' busy time, exact against figures worked out by hand; the
 * thread that worked most; only regions shorter than the call count (a
 * wait covers the work it waits for, and is no work to lay under it);
 * regions that arrive out of order; and the
 * limits: calls under 100 us are not laid, and past 65,536 busy intervals
 * and calls time is thinned in windows, the share kept close to the
 * whole's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "analysis/analysis.h" /* op_waits_for_others */
#include "analysis_util.h"
#include "import/import.h"
#include "prof.h"
#include "synth.h"

#define US 1000ull

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(model_overlap, .fini = teardown);

static const model_op *op_named(const profile_model *m, const char *name)
{
    for (size_t i = 0; i < m->nops; i++)
        if (strcmp(m->ops[i].name, name) == 0)
            return &m->ops[i];
    cr_assert_fail("no operation %s", name);
    return NULL;
}

/* 20 steps: on thread 0, forward (50 ms) then backward (100 ms). Under each
 * backward, thread 1 runs 400 ops of 200 us every 250 us and thread 2 runs
 * 200 ops of 100 us, 150 us into each of the first 200 slots: together they
 * cover the first 50 ms whole and 80% of the last 50 ms, 90 ms of 100.
 * Thread 2's regions are written last first; it also runs a 99 us op in
 * each forward. */
static const char *write_waiting(const char *name)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 10, "main");
    synth_thread(s, 1, 11, "autograd");
    synth_thread(s, 2, 12, "helper");
    uint64_t t = FX_MS;
    for (int i = 0; i < 20; i++) {
        uint64_t b = t + 50 * FX_MS;
        synth_region(s, 2, "tiny_op", PROF_KIND_COMPUTE, 0, t + FX_MS, 99 * US);
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 50 * FX_MS);
        for (uint64_t k = 0; k < 400; k++)
            synth_region(s, 1, "autograd_op", PROF_KIND_COMPUTE, 0, b + k * 250 * US, 200 * US);
        for (uint64_t k = 200; k-- > 0;)
            synth_region(s, 2, "helper_op", PROF_KIND_COMPUTE, 0, b + k * 250 * US + 150 * US,
                         100 * US);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, b, 100 * FX_MS);
        synth_step(s, 0, (uint64_t)i, PROF_STEP_SAMPLED, t, 150 * FX_MS);
        t += 150 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(model_overlap, the_union_of_the_other_threads_lies_under_a_waiting_region)
{
    profile_model m;
    au_load(write_waiting("waiting.prof"), &m);
    cr_assert_eq(m.overlap_unknown, 0);
    const model_op *bw = op_named(&m, "backward"), *fw = op_named(&m, "forward");
    cr_assert_eq(bw->outer_long_ns, 20 * 100 * FX_MS);
    cr_assert_eq(bw->others_ns, 20 * 90 * FX_MS, "%llu", (unsigned long long)bw->others_ns);
    cr_assert_eq(bw->others_thread, 1, "thread 1 worked 80 ms of each, thread 2 20 ms");
    cr_assert_eq(fw->outer_long_ns, 20 * 50 * FX_MS);
    cr_assert_eq(fw->others_ns, 20 * 99 * US, "the 99 us op counts as busy time");
    cr_assert_eq(fw->others_thread, 2);
    const model_op *op = op_named(&m, "autograd_op");
    cr_assert_eq(op->outer_long_ns, 20 * 400 * 200 * US, "200 us calls are kept");
    cr_assert_eq(op->others_ns, 20 * 200 * 50 * US, "thread 0's backward covers them, but is "
                 "longer: a wait, no work to lay under them; thread 2's shorter ops cover 50 us "
                 "of 200 of them");
    op = op_named(&m, "helper_op");
    cr_assert_eq(op->outer_long_ns, 20 * 200 * 100 * US, "100 us, the limit, is kept");
    cr_assert_eq(op->others_ns, 0, "what covers them is longer than they are");
    op = op_named(&m, "tiny_op");
    cr_assert_eq(op->outer_long_ns, 0, "a call of 99 us is not laid");
    cr_assert_eq(op->others_ns, 0);
    profile_model_free(&m);
}

/* n regions of thread 1 ("work", each dur long, one every `every`) under
 * one region of thread 0 ("wait") that spans them all; loaded into m. */
static void worker_under_wait(const char *name, uint64_t n, uint64_t every, uint64_t dur,
                              profile_model *m)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 10, "main");
    synth_thread(s, 1, 11, "worker");
    for (uint64_t k = 0; k < n; k++)
        synth_region(s, 1, "work", PROF_KIND_COMPUTE, 0, FX_MS + k * every, dur);
    synth_region(s, 0, "wait", PROF_KIND_COMPUTE, 0, FX_MS, n * every);
    cr_assert_eq(synth_close(s, NULL), 0);
    au_load(path, m);
}

/* Past MODEL_KEEP busy intervals and calls, time is thinned in 1 ms
 * windows: 70,000 calls of 100 us back to back on thread 1 under one
 * region of thread 0. Their time stays exact; the wait is still covered
 * whole, and the calls, under a longer wait, by nothing. */
Test(model_overlap, many_calls_are_thinned_not_cut)
{
    profile_model m;
    worker_under_wait("many_calls.prof", 70000, 100 * US, 100 * US, &m);
    cr_assert_eq(m.overlap_unknown, 0);
    cr_assert_geq(m.overlap_thinning, 1u);
    const model_op *work = op_named(&m, "work"), *wait = op_named(&m, "wait");
    cr_assert_eq(work->outer_long_ns, 70000 * 100 * US, "every call's time");
    cr_assert_eq(work->others_ns, 0, "under the longer wait");
    cr_assert_eq(wait->others_ns, wait->outer_long_ns);
    cr_assert_eq(wait->others_thread, 1);
    profile_model_free(&m);
}

/* Calls of 70 ms (67 windows) are thinned like short ones: 70,000 of
 * them back to back under one wait leave the model knowing, not giving
 * up at the last level. */
Test(model_overlap, long_calls_are_thinned_too)
{
    profile_model m;
    worker_under_wait("long_calls.prof", 70000, 70 * FX_MS, 70 * FX_MS, &m);
    cr_assert_eq(m.overlap_unknown, 0);
    cr_assert_geq(m.overlap_thinning, 1u);
    const model_op *work = op_named(&m, "work"), *wait = op_named(&m, "wait");
    cr_assert_eq(work->outer_long_ns, 70000 * 70 * FX_MS);
    cr_assert_eq(wait->others_ns, wait->outer_long_ns);
    profile_model_free(&m);
}

/* Past MODEL_KEEP busy intervals (530,000 regions with gaps between them)
 * the windows kept still say that the worker ran half of the wait; below
 * it, nothing is thinned and the figure is exact. */
Test(model_overlap, past_the_busy_intervals_kept_time_is_thinned)
{
    profile_model m;
    worker_under_wait("many_gaps.prof", 530000, 2 * US, US, &m);
    cr_assert_eq(m.overlap_unknown, 0);
    cr_assert_geq(m.overlap_thinning, 3u, "about 1 in 8 windows kept, or fewer");
    const model_op *wait = op_named(&m, "wait");
    cr_assert_eq(wait->outer_long_ns, 530000 * 2 * US);
    double share = (double)wait->others_ns / (double)wait->outer_long_ns;
    cr_assert(share > 0.499 && share < 0.501, "half of it: %.5f", share);
    profile_model_free(&m);

    worker_under_wait("fewer_gaps.prof", 60000, 2 * US, US, &m);
    cr_assert_eq(m.overlap_thinning, 0u);
    cr_assert_eq(op_named(&m, "wait")->others_ns, 60000 * US, "half of it, exactly");
    profile_model_free(&m);
}

/* Every busy interval in one window (65,536 of 1 ns, 1 ns apart): thinning
 * drops that window at last; nothing is known of the wait, which is then
 * judged as without it, and memory stays bounded. */
Test(model_overlap, one_window_past_the_bound_is_dropped)
{
    profile_model m;
    worker_under_wait("one_window.prof", 70000, 2, 1, &m);
    const model_op *wait = op_named(&m, "wait");
    cr_assert_eq(wait->others_ns, 0);
    cr_assert(m.overlap_unknown || m.overlap_thinning >= 1);
    profile_model_free(&m);
}

/* Thinned well below its size (PROF_MODEL_KEEP=2000, 1 window in 16 or
 * fewer kept), the waiting run of
 * write_waiting keeps about what the whole of it gives: the share of
 * backward under the others' work within two points of 90%, the same
 * thread named, the rule's verdict unchanged. */
Test(model_overlap, thinned_share_is_close_to_the_whole)
{
    const char *path = write_waiting("thinned.prof");
    profile_model whole, thin;
    au_load(path, &whole);
    static const prof_tuning keep2000 = { .model_keep = 2000 };
    au_load_tuned(path, &keep2000, &thin);
    cr_assert_eq(whole.overlap_thinning, 0u);
    cr_assert_geq(thin.overlap_thinning, 4u);
    const model_op *a = op_named(&whole, "backward"), *b = op_named(&thin, "backward");
    cr_assert_eq(a->outer_long_ns, b->outer_long_ns);
    double sa = (double)a->others_ns / (double)a->outer_long_ns;
    double sb = (double)b->others_ns / (double)b->outer_long_ns;
    cr_assert(sa > 0.899 && sa < 0.901, "whole: %.4f", sa);
    cr_assert(sb > 0.88 && sb < 0.92, "thinned: %.4f against %.4f", sb, sa);
    cr_assert_eq(a->others_thread, b->others_thread);
    cr_assert_eq(op_waits_for_others(a), op_waits_for_others(b));
    profile_model_free(&whole);
    profile_model_free(&thin);
}

/* n threads, as a Kineto trace (the synthetic writer stops at 64): thread
 * 0 waits 10 ms, each other thread works 1 ms in it (thread k from k us
 * on). Up to MB_OVERLAP_THREADS threads the wait is laid over theirs; past
 * it, nothing is. */
static void threads_case(uint32_t n, uint64_t want)
{
    char name[32], ppath[64];
    snprintf(name, sizeof name, "threads%u.json", n);
    const char *path = fx_path(name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"traceEvents\": [\n");
    for (uint32_t t = 1; t < n; t++)
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"work\", \"pid\": 1, "
                   "\"tid\": %u, \"ts\": %u, \"dur\": 1000},\n", 100 + t, 1000 + t);
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"wait\", "
               "\"pid\": 1, \"tid\": 100, \"ts\": 1000, \"dur\": 10000}\n]}\n");
    cr_assert_eq(fclose(f), 0);
    int fd;
    prof_error err = { 0 };
    cr_assert_eq(import_to_temp(path, NULL, &fd, ppath, sizeof ppath, NULL, &err), PROF_OK, "%s",
                 err.message);
    profile_model m;
    au_load(ppath, &m);
    close(fd);
    cr_assert_eq(m.nthreads, n);
    const model_op *wait = op_named(&m, "wait");
    cr_assert_eq(wait->others_ns, want, "%u threads: %llu", n, (unsigned long long)wait->others_ns);
    profile_model_free(&m);
}

Test(model_overlap, past_the_threads_laid_nothing_is)
{
    threads_case(256, FX_MS + 254 * US); /* from 1 us to 255 us + 1 ms */
    threads_case(257, 0);
}
