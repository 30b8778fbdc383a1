/* model_compare.h - what the tests that build one model two ways share
 * (model_threads: one thread or two; model_repeat: the repeat path of the
 * call tree or the general way): a model built with a tuning
 * (util/tuning.h), every field of two models compared bit for bit, and the
 * synthesized training run both build. Header-only so each test stays one
 * program; include it once. */
#ifndef PROF_TESTS_MODEL_COMPARE_H
#define PROF_TESTS_MODEL_COMPARE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "format_util.h"
#include "model/profile.h"
#include "synth.h"

#define MC_THREADS 3
#define MC_STEPS 1500
#define MC_CUTS 23
#define MC_CORPUS "tests/fuzz/corpus-analyze"

typedef struct built {
    prof_err rc;
    prof_error err;
    profile_model m;
} built;

/* The tunings the tests compare with the default (NULL). */
static const prof_tuning mc_one_thread = { .threads = 1 };
static const prof_tuning mc_general_way = { .no_repeat = 1 };
static const prof_tuning mc_help_always = { .reader_help = TUNING_HELP_ALWAYS };

/* Helpers on a pool of two threads, as the tool runs them (cmd_tuning_init),
 * made once per test process. */
static inline const prof_tuning *mc_pooled(void)
{
    static prof_tuning t;
    if (!t.pool)
        cr_assert_not_null(t.pool = pool_new(2));
    return &t;
}

/* Loads path into out as t says. */
static void mc_build(const char *path, const prof_tuning *t, built *out)
{
    memset(out, 0, sizeof *out);
    out->rc = profile_model_load(path, t, &out->m, NULL, NULL, &out->err);
}

#define SAME(f) cr_assert_eq(a->f, b->f, "%s: %s differs", what, #f)
#define SAME_STR(f)                                                                        \
    cr_assert((a->f == NULL && b->f == NULL) ||                                             \
                  (a->f != NULL && b->f != NULL && strcmp(a->f, b->f) == 0),                \
              "%s: %s differs", what, #f)
/* Doubles bit for bit: the same operations in the same order. */
#define SAME_F64(f)                                                                        \
    cr_assert(memcmp(&a->f, &b->f, sizeof(double)) == 0, "%s: %s differs (%.17g, %.17g)",   \
              what, #f, a->f, b->f)

static void same_sketch(const quantile_sketch *a, const quantile_sketch *b, const char *what)
{
    SAME(count);
    SAME(min);
    SAME(max);
    for (int i = 0; i <= 100; i++) {
        double qa = sketch_quantile(a, i / 100.0), qb = sketch_quantile(b, i / 100.0);
        cr_assert(memcmp(&qa, &qb, sizeof qa) == 0, "%s: quantile %d%% differs", what, i);
    }
}

static void same_op(const model_op *a, const model_op *b, const char *what)
{
    SAME_STR(name);
    SAME(kind);
    SAME(calls);
    SAME(incl_ns);
    SAME(self_ns);
    SAME(min_ns);
    SAME(max_ns);
    SAME_F64(mean_ns);
    SAME_F64(m2);
    SAME_F64(shift);
    SAME_F64(sum_dev);
    SAME_F64(sum_dev2);
    same_sketch(&a->dur, &b->dur, what);
    SAME_STR(cls);
    cr_assert(memcmp(&a->batches, &b->batches, sizeof a->batches) == 0, "%s: batches", what);
    SAME(comm);
}

static void same_node(const model_node *a, const model_node *b, const char *what)
{
    SAME(op);
    SAME(parent);
    SAME(first_child);
    SAME(next_sibling);
    SAME(calls);
    SAME(incl_ns);
    SAME(self_ns);
}

static void same_thread(const model_thread *a, const model_thread *b, const char *what)
{
    SAME(index);
    SAME(os_tid);
    SAME_STR(name);
    SAME(root);
    SAME(regions);
    SAME(busy_ns);
}

static void same_step(const model_step *a, const model_step *b, const char *what)
{
    SAME(number);
    SAME(start_ns);
    SAME(dur_ns);
    SAME(flags);
}

static void same_series(const model_series *a, const model_series *b, const char *what)
{
    SAME_STR(name);
    SAME(is_memory);
    SAME(nsamples);
    for (size_t i = 0; i < a->nsamples; i++) {
        cr_assert_eq(a->samples[i].t_ns, b->samples[i].t_ns, "%s: sample %zu", what, i);
        cr_assert_eq(a->samples[i].step, b->samples[i].step, "%s: sample %zu", what, i);
        cr_assert(memcmp(&a->samples[i].value, &b->samples[i].value, sizeof(double)) == 0,
                  "%s: sample %zu", what, i);
    }
    SAME_F64(peak);
    SAME_F64(final);
    SAME(peak_t_ns);
}

static void same_site(const model_sync_site *a, const model_sync_site *b, const char *what)
{
    SAME(op);
    SAME(count);
    SAME(blocked_ns);
}

static void same_gpu(const model_gpu_device *a, const model_gpu_device *b, const char *what)
{
    SAME(device);
    SAME(kernels);
    SAME(kernel_ns);
    SAME(memcpy_count);
    SAME(memcpy_bytes);
    SAME(memcpy_ns);
    SAME(memset_count);
    SAME(memset_ns);
    SAME(busy_ns);
    SAME(first_ns);
    SAME(last_ns);
    SAME(idle_gaps);
    SAME(idle_gap_ns);
    for (int i = 0; i < MODEL_GPU_GAPS; i++) {
        SAME(longest[i].start_ns);
        SAME(longest[i].dur_ns);
    }
    SAME(comm_kernels);
    SAME(comm_ns);
    SAME(comm_overlap_ns);
    SAME(step_ns);
    SAME(step_busy_ns);
    SAME(step_comm_ns);
    SAME(step_overlap_ns);
    SAME(step_interpolated);
}

static void same_collective(const model_collective *a, const model_collective *b,
                            const char *what)
{
    SAME(start_ns);
    SAME(dur_ns);
    SAME(device);
    SAME(stream);
}

static void same_status(const prof_read_status *a, const prof_read_status *b, const char *what)
{
    SAME(clean);
    SAME(truncated);
    SAME(blocks);
    SAME(events);
    SAME(bytes_read);
    SAME(bytes_lost);
    SAME(file_size);
    SAME(dropped_events);
    cr_assert_str_eq(a->detail, b->detail, "%s: detail", what);
}

/* Each element of arrays a->f and b->f, of a->n elements, with cmp. */
#define SAME_EACH(f, n, cmp)                                                               \
    do {                                                                                   \
        SAME(n);                                                                           \
        for (size_t i_ = 0; i_ < a->n; i_++) {                                             \
            char w_[512];                                                                  \
            snprintf(w_, sizeof w_, "%s: %s[%zu]", what, #f, i_);                           \
            cmp(&a->f[i_], &b->f[i_], w_);                                                 \
        }                                                                                  \
    } while (0)

/* pending: compare peak_pending_nodes too, which only the general way of
 * the call tree makes (the repeat path holds no floating nodes). */
static void same_model(const profile_model *a, const profile_model *b, const char *what,
                       int pending)
{
    SAME_STR(metadata);
    SAME(major);
    SAME(minor);
    SAME(rank);
    SAME(world_size);
    same_status(&a->status, &b->status, what);
    SAME_EACH(ops, nops, same_op);
    SAME_EACH(nodes, nnodes, same_node);
    SAME_EACH(threads, nthreads, same_thread);
    SAME_EACH(steps, nsteps, same_step);
    SAME_EACH(series, nseries, same_series);
    SAME_EACH(sync_sites, nsync_sites, same_site);
    SAME_EACH(gpus, ngpus, same_gpu);
    SAME_EACH(comm_kernels, ncomm_kernels, same_collective);
    SAME_EACH(comm_regions, ncomm_regions, same_collective);
    SAME(collectives_dropped);
    SAME(first_ns);
    SAME(last_ns);
    SAME(profiled_ns);
    SAME(region_events);
    SAME(events);
    SAME(sync_count);
    SAME(sync_blocked_ns);
    SAME(sync_records);
    SAME(dropped_events);
    for (int k = 0; k < 5; k++)
        SAME(kind_ns[k]);
    SAME(has_gpu);
    if (pending) {
        SAME(peak_pending_nodes);
        SAME(repeated_regions);
    }
}

/* Builds path as a and as b says, and asserts the same outcome: the same
 * error, or the same model. Returns whether it loaded. */
static int mc_assert_same_build(const char *path, const prof_tuning *a, const prof_tuning *b,
                                int pending)
{
    built *one = malloc(sizeof *one), *two = malloc(sizeof *two);
    cr_assert(one && two);
    mc_build(path, a, one);
    mc_build(path, b, two);
    cr_assert_eq(one->rc, two->rc, "%s: loading gave %d one way, %d the other", path, one->rc,
                 two->rc);
    cr_assert_str_eq(one->err.message, two->err.message, "%s: error", path);
    if (one->rc == PROF_OK)
        same_model(&one->m, &two->m, path, pending);
    int ok = one->rc == PROF_OK;
    profile_model_free(&one->m);
    profile_model_free(&two->m);
    free(one);
    free(two);
    return ok;
}

/* A training run: MC_THREADS threads of nested regions (with a SYNC region
 * and CUDA sync records now and then), kernels (a communication one among
 * them), copies and memsets on two devices, memory samples and a counter,
 * dropped events, class attributes; blocks of 97 records. */
static void mc_write_run(const char *path, int crashed)
{
    synth *s = synth_open(path, "{\"rank\":1,\"world_size\":2}");
    synth_rng rng = { 17 };
    cr_assert_not_null(s);
    synth_block_records(s, 97);
    synth_class(s, "linear", "torch.nn.Linear");
    synth_workers(s, MC_THREADS);
    for (uint64_t step = 0; step < MC_STEPS; step++) {
        uint64_t t0 = step * 100000;
        for (uint32_t t = 0; t < MC_THREADS; t++) {
            uint64_t c = t0 + 10 * t;
            for (uint32_t i = 0; i < 6; i++, c += 9000) {
                uint64_t d = synth_jitter(&rng, 3000, 0.2);
                synth_region(s, t, i % 2 ? "linear" : "attention", PROF_KIND_COMPUTE, 2, c, d);
                if (i == 3 && step % 7 == 0)
                    synth_sync(s, t, 1, 0, 7, step, c + d + 10, 500);
                synth_region(s, t, "layer", PROF_KIND_COMPUTE, 1, c, d + 4000);
            }
            if (step % 5 == 0)
                synth_region(s, t, "item", PROF_KIND_SYNC, 1, c, 700);
            synth_region(s, t, "load", PROF_KIND_DATA, 0, c + 800, 1000);
            synth_region(s, t, "step_body", PROF_KIND_COMPUTE, 0, t0 + 2000, 90000);
        }
        synth_gpu_kernel(s, "gemm", step % 2, 7, step, t0 + 50, synth_jitter(&rng, 7000, 0.3));
        synth_gpu_kernel(s, "ncclKernel_AllReduce", 0, 8, step, t0 + 3000, 2000);
        synth_gpu_memcpy(s, 1, 0, 7, step, 4096, t0 + 9000, 300);
        synth_gpu_memset(s, 1, 7, step, 512, t0 + 9500, 100);
        synth_memory(s, 0, "host.rss", t0 + 95000, 1000000 + 64 * step);
        synth_counter(s, 0, "loss", t0 + 95500, 2.5 / (1.0 + (double)step));
        if (step % 300 == 299)
            synth_dropped(s, 1, 3, t0 + 96000);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t0, 99000);
    }
    prof_error err;
    int rc = crashed ? synth_abandon(s, &err) : synth_close(s, &err);
    cr_assert_eq(rc, 0, "writing %s: %s", path, err.message);
}

/* The run of mc_write_run cut at offsets spread over the file, the
 * footer's included (a crashed run read up to its last intact block, or an
 * error for a file that promised a footer), built both ways. */
static void mc_assert_same_cuts(const prof_tuning *a, const prof_tuning *b, int pending)
{
    const char *path = fu_path("whole.prof"), *cut = fu_path("cut.prof");
    mc_write_run(path, 0);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    for (int i = 1; i <= MC_CUTS; i++) {
        size_t len = size / MC_CUTS * (size_t)i - (size_t)i * 13;
        fu_store(cut, data, len);
        mc_assert_same_build(cut, a, b, pending);
    }
    free(data);
}

/* Every file of the analyze fuzz corpus (damaged files: the same error),
 * built both ways. Run from the repository root. */
static void mc_assert_same_corpus(const prof_tuning *a, const prof_tuning *b, int pending)
{
    DIR *d = opendir(MC_CORPUS);
    cr_assert_not_null(d, "run from the repository root");
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", MC_CORPUS, e->d_name);
        mc_assert_same_build(path, a, b, pending);
        files++;
    }
    closedir(d);
    cr_assert_gt(files, 0, "no files in " MC_CORPUS);
}

#endif
