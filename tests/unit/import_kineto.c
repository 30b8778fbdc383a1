/* import_kineto.c - torch.profiler (Kineto) traces imported through
 * import_trace() and read back through the real reader and model: one
 * fixture per schema era of testdata/kineto/ (exact counts, names, region
 * depths and kinds, steps, memory series, GPU busy time, syncs on the
 * thread that waited, devices, rank and world size, the wall clock),
 * python_function kept on request, gzip read as plain, categories prof
 * does not know, files cut at every point, what is not a trace, the
 * limits on names, nesting and tokens, and exact times (the real traces:
 * import_kineto_real.c). Run from the repository root. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "file_util.h"
#include "fixtures.h"
#include "import/import.h"
#include "model/profile.h"
#include "import_util.h"
#include "model_util.h"
#include "prof.h"

#define US 1000ull
#define KDIR "testdata/kineto/"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(import_kineto, .fini = teardown);

/* ---- helpers ------------------------------------------------------------------------- */

/* The samples of a series, which must be there. */
static void expect_series(const profile_model *m, const char *name, const double *want, size_t n)
{
    const model_series *s = mu_find_series(m, name);
    cr_assert_not_null(s, "no series %s", name);
    cr_assert_eq(s->nsamples, n, "%s: %zu samples", name, s->nsamples);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(s->samples[i].value, want[i], "%s[%zu] = %.0f", name, i, s->samples[i].value);
}

static void expect_steps(const profile_model *m, uint64_t first, size_t n, uint64_t dur_ns)
{
    cr_assert_eq(m->nsteps, n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(m->steps[i].number, first + i);
        cr_expect_eq(m->steps[i].dur_ns, dur_ns, "step %llu", (unsigned long long)first + i);
    }
}

typedef struct want_counts {
    uint64_t regions, steps, kernels, copies, memsets, syncs, api_calls, memory_samples, marks,
        unknown, skipped;
} want_counts;

static void expect_counts(const import_counts *c, want_counts w)
{
    cr_expect_eq(c->regions, w.regions, "regions %llu", (unsigned long long)c->regions);
    cr_expect_eq(c->steps, w.steps, "steps %llu", (unsigned long long)c->steps);
    cr_expect_eq(c->kernels, w.kernels, "kernels %llu", (unsigned long long)c->kernels);
    cr_expect_eq(c->copies, w.copies, "copies %llu", (unsigned long long)c->copies);
    cr_expect_eq(c->memsets, w.memsets, "memsets %llu", (unsigned long long)c->memsets);
    cr_expect_eq(c->syncs, w.syncs, "syncs %llu", (unsigned long long)c->syncs);
    cr_expect_eq(c->api_calls, w.api_calls, "API calls %llu", (unsigned long long)c->api_calls);
    cr_expect_eq(c->memory_samples, w.memory_samples, "memory samples %llu",
                 (unsigned long long)c->memory_samples);
    cr_expect_eq(c->marks, w.marks, "marks %llu", (unsigned long long)c->marks);
    cr_expect_eq(c->unknown, w.unknown, "unknown %llu", (unsigned long long)c->unknown);
    cr_expect_eq(c->skipped, w.skipped, "skipped %llu", (unsigned long long)c->skipped);
    cr_expect_eq(c->unplaced, 0);
    cr_expect_eq(c->clamped, 0);
}

static cJSON *metadata(const profile_model *m)
{
    cJSON *meta = cJSON_Parse(m->metadata);
    cr_assert_not_null(meta);
    return meta;
}

static const cJSON *import_obj(const cJSON *meta, const char *key)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), key);
}

/* An integer of the metadata read from its text: cJSON's doubles cannot
 * hold a wall-clock time in ns exactly. */
static uint64_t meta_u64(const profile_model *m, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(m->metadata, pat);
    cr_assert_not_null(p, "no %s in the metadata", key);
    return strtoull(p + strlen(pat), NULL, 10);
}

static void expect_device(const cJSON *devices, int i, uint32_t index, const char *name,
                          uint64_t bytes)
{
    const cJSON *d = cJSON_GetArrayItem(devices, i);
    cr_assert_not_null(d);
    cr_expect_eq(cJSON_GetObjectItem(d, "index")->valuedouble, index);
    cr_expect_str_eq(cJSON_GetObjectItem(d, "name")->valuestring, name);
    cr_expect_eq((uint64_t)cJSON_GetObjectItem(d, "memory_bytes")->valuedouble, bytes);
}

/* What the reader hands out for one profile: regions' depths by name, and
 * per type the events and those on the thread named main. */
typedef struct read_back {
    uint64_t by_type[PROF_EV_ATTR + 1], on_main[PROF_EV_ATTR + 1];
    uint64_t sync_kinds[6], copy_kinds[6];
    uint64_t streams[64];
} read_back;

static void read_profile(const char *path, const char *main, read_back *rb,
                         const char *const *depth_names, const uint32_t *depths, size_t ndepths)
{
    memset(rb, 0, sizeof *rb);
    prof_reader *r;
    prof_error err;
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    prof_event ev;
    size_t seen = 0;
    while (prof_reader_next(r, &ev) > 0) {
        const char *t = ev.thread == PROF_THREAD_GPU ? "" : prof_reader_thread_name(r, ev.thread);
        rb->by_type[ev.type]++;
        rb->on_main[ev.type] += t && strcmp(t, main) == 0;
        if (ev.type == PROF_EV_SYNC && ev.subkind < 6)
            rb->sync_kinds[ev.subkind]++;
        if (ev.type == PROF_EV_GPU_MEMCPY && ev.subkind < 6)
            rb->copy_kinds[ev.subkind]++;
        if ((ev.type == PROF_EV_GPU_KERNEL || ev.type == PROF_EV_GPU_MEMCPY) && ev.stream < 64)
            rb->streams[ev.stream]++;
        if (ev.type == PROF_EV_REGION)
            for (size_t i = 0; i < ndepths; i++)
                if (strcmp(ev.name, depth_names[i]) == 0) {
                    cr_expect_eq(ev.depth, depths[i], "%s depth %u", ev.name, ev.depth);
                    seen++;
                }
    }
    prof_reader_close(r);
    cr_expect_geq(seen, ndepths, "regions whose depth was checked: %zu", seen);
}

/* ---- 2021 ---------------------------------------------------------------------------- */

#define DATALOADER "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
#define ADD_KERNEL                                                                       \
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "  \
    "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, "                 \
    "at::detail::Array<char*, 3>)"

Test(import_kineto, era_2021)
{
    import_counts c;
    profile_model m;
    const char *out = import_load(KDIR "2021.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 20, .steps = 2, .kernels = 4, .copies = 4,
                                     .syncs = 2, .api_calls = 10, .memory_samples = 8,
                                     .marks = 2 });
    cr_expect_eq(c.damaged, 0);
    expect_steps(&m, 1, 2, 9800 * US);
    /* only Bytes in 2021: a running sum per device, from 0 */
    expect_series(&m, "gpu0.allocated", (double[]){ 3211264, 0, 3211264, 0 }, 4);
    expect_series(&m, "host.allocated", (double[]){ 4, 0, 4, 0 }, 4);
    cr_expect_null(mu_find_series(&m, "gpu0.reserved"));
    /* GPU rows are "stream 7" strings; busy: HtoD 40 + sgemm 1000 + DtoH 5 + add 50 us */
    cr_assert_eq(m.ngpus, 1);
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, 2 * 1095 * US);
    cr_expect_eq(mu_gpu(&m, 0)->kernels, 4);
    cr_expect_eq(mu_op(&m, "volta_sgemm_128x64_tn")->calls, 2);
    cr_expect_eq(mu_op(&m, ADD_KERNEL)->kind, MODEL_KIND_GPU);
    /* CPU tids are strings of digits: one thread, named */
    cr_expect_eq(m.nthreads, 1);
    cr_expect_not_null(mu_thread_named(&m, "thread 13721 (python)"));
    cJSON *meta = metadata(&m);
    expect_device(cJSON_GetObjectItem(meta, "devices"), 0, 0, "Tesla V100-SXM2-16GB",
                  16945512448ull);
    cr_expect_eq(m.rank, 0);
    cr_expect_eq(m.world_size, 1);
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "argv"), 0)->valuestring,
                     "python");
    cr_expect_eq(cJSON_GetObjectItem(meta, "pid")->valuedouble, 13721);
    /* no baseTimeNanoseconds: ts is epoch microseconds */
    cr_expect_eq(meta_u64(&m, "start_epoch_ns") + m.steps[0].start_ns,
                 1621401187220000ull * US);
    cr_expect_eq(cJSON_GetObjectItem(import_obj(meta, "facts"), "syncs_from_calls")->valuedouble,
                 2);
    cJSON_Delete(meta);
    profile_model_free(&m);

    static const char *const names[] = { DATALOADER, "aten::to", "aten::_to_copy", "aten::copy_",
                                         "aten::linear", "aten::addmm", "aten::item",
                                         "aten::_local_scalar_dense", "Optimizer.step#SGD.step",
                                         "aten::add_" };
    static const uint32_t depths[] = { 0, 0, 1, 2, 0, 1, 0, 1, 0, 1 };
    read_back rb;
    read_profile(out, "thread 13721 (python)", &rb, names, depths, 10);
    cr_expect_eq(rb.by_type[PROF_EV_REGION], 20);
    cr_expect_eq(rb.on_main[PROF_EV_SYNC], 2, "the synchronize calls, on their thread");
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_STREAM], 2);
    cr_expect_eq(rb.on_main[PROF_EV_API], 10);
    cr_expect_eq(rb.on_main[PROF_EV_MARK], 2, "Kineto's own instants on the main thread");
    cr_expect_eq(rb.copy_kinds[PROF_COPY_HTOD], 2);
    cr_expect_eq(rb.copy_kinds[PROF_COPY_DTOH], 2);
    cr_expect_eq(rb.streams[7], 8, "stream from \"stream 7\" and args.stream");
}

/* ---- 2022 ---------------------------------------------------------------------------- */

Test(import_kineto, era_2022)
{
    import_counts c;
    profile_model m;
    import_load(KDIR "2022.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 24, .steps = 2, .kernels = 4, .copies = 4,
                                     .memsets = 2, .syncs = 2, .api_calls = 12,
                                     .memory_samples = 8, .marks = 2 });
    expect_steps(&m, 5, 2, 9800 * US);
    expect_series(&m, "gpu0.allocated", (double[]){ 47251456, 44040192, 47251456, 44040192 }, 4);
    expect_series(&m, "gpu0.reserved", (double[]){ 62914560, 62914560, 62914560, 62914560 }, 4);
    cr_expect_eq(mu_find_series(&m, "gpu0.allocated")->peak, 47251456);
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, 2 * 1100 * US, "the memsets too");
    cr_expect_eq(mu_gpu(&m, 0)->memset_count, 2);
    cr_expect_eq(mu_op(&m, "Optimizer.zero_grad#SGD.zero_grad")->calls, 2);
    cr_expect_eq(mu_op(&m, "aten::zero_")->calls, 2);
    cr_expect_not_null(mu_thread_named(&m, "thread 48213 (python3.8)"));
    cr_expect_eq(m.nthreads, 1, "the GPU row's name makes no thread");
    cJSON *meta = metadata(&m);
    expect_device(cJSON_GetObjectItem(meta, "devices"), 0, 0, "NVIDIA A100-SXM4-40GB",
                  42314694656ull);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* ---- 2023 ---------------------------------------------------------------------------- */

Test(import_kineto, era_2023)
{
    import_counts c;
    profile_model m;
    const char *out = import_load(KDIR "2023.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 26, .steps = 2, .kernels = 6, .copies = 4,
                                     .syncs = 3, .api_calls = 13, .memory_samples = 8,
                                     .marks = 2 });
    expect_steps(&m, 2, 2, 9800 * US);
    /* rank 1 of 4 runs on device 1 */
    cr_expect_eq(m.rank, 1);
    cr_expect_eq(m.world_size, 4);
    cr_assert_eq(m.ngpus, 1);
    cr_expect_eq(mu_gpu(&m, 1)->busy_ns, 2 * 2095 * US);
    cr_expect_eq(mu_gpu(&m, 1)->kernels, 6);
    expect_series(&m, "gpu1.allocated", (double[]){ 47251456, 44040192, 47251456, 44040192 }, 4);
    cr_expect_null(mu_find_series(&m, "gpu0.allocated"));
    cr_expect_eq(m.nthreads, 2);
    cr_expect_not_null(mu_thread_named(&m, "thread 2869224 (python3.10)"));
    cr_expect_not_null(mu_thread_named(&m, "thread 2869391 (pt_autograd_1)"));
    cJSON *meta = metadata(&m);
    const cJSON *devices = cJSON_GetObjectItem(meta, "devices");
    cr_assert_eq(cJSON_GetArraySize(devices), 4);
    for (int i = 0; i < 4; i++)
        expect_device(devices, i, (uint32_t)i, "NVIDIA A100-SXM4-80GB", 85051572224ull);
    cr_expect_null(cJSON_GetObjectItem(import_obj(meta, "facts"), "syncs_from_calls"));
    cJSON_Delete(meta);
    profile_model_free(&m);

    static const char *const names[] = { "autograd::engine::evaluate_function: AddmmBackward0",
                                         "AddmmBackward0", "aten::mm", "aten::linear",
                                         "aten::addmm" };
    static const uint32_t depths[] = { 0, 1, 2, 0, 1 };
    read_back rb;
    read_profile(out, "thread 2869224 (python3.10)", &rb, names, depths, 5);
    cr_expect_eq(rb.by_type[PROF_EV_SYNC], 3);
    cr_expect_eq(rb.on_main[PROF_EV_SYNC], 3, "found through their calls' correlation");
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_STREAM], 2);
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_DEVICE], 1);
    cr_expect_eq(rb.on_main[PROF_EV_API], 11, "two calls on the autograd thread");
    cr_expect_eq(rb.on_main[PROF_EV_MARK], 2);
}

/* ---- 2024 ---------------------------------------------------------------------------- */

#define NCCL_KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

Test(import_kineto, era_2024)
{
    import_counts c;
    profile_model m;
    const char *out = import_load(KDIR "2024.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 29, .steps = 2, .kernels = 9, .copies = 4,
                                     .syncs = 2, .api_calls = 15, .memory_samples = 8,
                                     .marks = 2, .skipped = 4 });
    expect_steps(&m, 4, 2, 9800 * US);
    cr_expect_eq(m.rank, 0);
    cr_expect_eq(m.world_size, 2);
    /* float ts relative to baseTimeNanoseconds, which comes after the events */
    cr_expect_eq(meta_u64(&m, "start_epoch_ns") + m.steps[0].start_ns,
                 1711964646000000000ull + 4458676522690655ull);
    /* collectives: regions of kind COMM, the NCCL kernel on its own stream */
    cr_expect_eq(mu_op(&m, "nccl:all_reduce")->kind, PROF_KIND_COMM);
    cr_expect_eq(mu_op(&m, "record_param_comms")->kind, PROF_KIND_COMM);
    cr_expect_eq(mu_op(&m, NCCL_KERNEL)->calls, 2);
    cr_expect_eq(mu_op(&m, NCCL_KERNEL)->kind, MODEL_KIND_GPU);
    cr_expect_eq(mu_op(&m, "triton_poi_fused_relu_0")->calls, 1, "launched by cuLaunchKernel");
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, 6210 * US);
    cr_expect_null(mu_find_op(&m, "train.py(42): train_step"));
    cJSON *meta = metadata(&m);
    const cJSON *skipped = import_obj(meta, "skipped_categories");
    cr_expect_eq(cJSON_GetObjectItem(skipped, "python_function")->valuedouble, 2);
    cr_expect_eq(cJSON_GetObjectItem(skipped, "gpu_user_annotation")->valuedouble, 2);
    cr_expect_eq(cJSON_GetObjectItem(import_obj(meta, "facts"), "syncs_from_calls")->valuedouble,
                 2, "no cuda_sync in this trace: the synchronize calls are the syncs");
    const cJSON *devices = cJSON_GetObjectItem(meta, "devices");
    cr_assert_eq(cJSON_GetArraySize(devices), 2);
    expect_device(devices, 1, 1, "NVIDIA H100 80GB HBM3", 84929347584ull);
    cJSON_Delete(meta);
    profile_model_free(&m);

    static const char *const names[] = { "DistributedDataParallel.forward", "aten::linear",
                                         "aten::addmm", "nccl:all_reduce", "record_param_comms",
                                         "CompiledFunction" };
    static const uint32_t depths[] = { 0, 1, 2, 0, 1, 0 };
    read_back rb;
    read_profile(out, "thread 2910249 (pt_main_thread)", &rb, names, depths, 6);
    cr_expect_eq(rb.streams[40], 2, "the NCCL kernels");
    cr_expect_eq(rb.on_main[PROF_EV_SYNC], 2);
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_STREAM], 2);
}

Test(import_kineto, python_stacks_on_request)
{
    import_counts c;
    profile_model m;
    import_load(KDIR "2024.json", 1, &c, &m);
    cr_expect_eq(c.regions, 31);
    cr_expect_eq(c.skipped, 2, "the GPU annotations only");
    cr_expect_eq(mu_op(&m, "train.py(42): train_step")->calls, 1);
    cr_expect_eq(mu_op(&m, "torch/nn/modules/module.py(1527): _call_impl")->calls, 1);
    profile_model_free(&m);
}

/* A hash of every event the reader hands out, in order. */
static uint64_t events_hash(const char *path, uint64_t *n)
{
    prof_reader *r;
    prof_error err;
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    prof_event ev;
    uint64_t h = 0xcbf29ce484222325ull;
    *n = 0;
    while (prof_reader_next(r, &ev) > 0) {
        const uint64_t f[] = { ev.type, ev.thread, ev.start_ns, ev.dur_ns, ev.kind, ev.depth,
                               ev.subkind, ev.device, ev.stream, ev.correlation, ev.value };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            h = (h ^ f[i]) * 0x100000001b3ull;
        for (const char *p = ev.name; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        (*n)++;
    }
    prof_reader_close(r);
    return h;
}

Test(import_kineto, gzip_reads_as_plain)
{
    import_counts c1, c2;
    profile_model m1, m2;
    char plain[256];
    snprintf(plain, sizeof plain, "%s", import_load(KDIR "2024.json", 0, &c1, &m1));
    const char *gz = import_load(KDIR "2024.json.gz", 0, &c2, &m2);
    cr_expect_eq(memcmp(&c1, &c2, sizeof c1), 0);
    uint64_t n1, n2;
    cr_expect_eq(events_hash(plain, &n1), events_hash(gz, &n2));
    cr_expect_eq(n1, n2);
    cr_expect_gt(n1, 70);
    profile_model_free(&m1);
    profile_model_free(&m2);
}

/* ---- ROCm ---------------------------------------------------------------------------- */

Test(import_kineto, rocm)
{
    import_counts c;
    profile_model m;
    const char *out = import_load(KDIR "rocm.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 22, .steps = 2, .kernels = 6, .copies = 4,
                                     .syncs = 6, .api_calls = 12, .memory_samples = 8,
                                     .marks = 1 });
    expect_steps(&m, 1, 2, 9800 * US);
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, 2 * 1099 * US);
    cr_expect_eq(m.nthreads, 1, "metadata first: the stream row is no thread");
    cr_expect_not_null(mu_thread_named(&m, "thread 61877 (python3.10)"));
    cJSON *meta = metadata(&m);
    expect_device(cJSON_GetObjectItem(meta, "devices"), 0, 0, "AMD Instinct MI250X",
                  68702699520ull);
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "argv"), 0)->valuestring,
                     "python3.10");
    cJSON_Delete(meta);
    profile_model_free(&m);
    read_back rb;
    read_profile(out, "thread 61877 (python3.10)", &rb, NULL, NULL, 0);
    /* two hipDeviceSynchronize, and four hipMemcpyWithStream that block like cudaMemcpy */
    cr_expect_eq(rb.on_main[PROF_EV_SYNC], 6);
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_DEVICE], 2);
    cr_expect_eq(rb.sync_kinds[PROF_SYNC_MEMCPY], 4);
    cr_expect_eq(rb.copy_kinds[PROF_COPY_HTOD], 2, "CopyHostToDevice");
    cr_expect_eq(rb.copy_kinds[PROF_COPY_DTOH], 2, "CopyDeviceToHost");
    cr_expect_eq(rb.on_main[PROF_EV_API], 12);
    cr_expect_eq(rb.streams[0], 10, "stream 0: 6 kernels and 4 copies");
}

/* ---- kinds, across eras ----------------------------------------------------------------- */

Test(import_kineto, kinds_from_names)
{
    static const char *const traces[] = { KDIR "2021.json", KDIR "2022.json", KDIR "2023.json",
                                          KDIR "2024.json", KDIR "rocm.json" };
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        import_counts c;
        profile_model m;
        import_load(traces[i], 0, &c, &m);
        cr_expect_eq(mu_op(&m, DATALOADER)->kind, PROF_KIND_DATA, "%s", traces[i]);
        cr_expect_eq(mu_op(&m, "aten::item")->kind, PROF_KIND_SYNC, "%s", traces[i]);
        cr_expect_eq(mu_op(&m, "aten::_local_scalar_dense")->kind, PROF_KIND_SYNC, "%s", traces[i]);
        cr_expect_eq(mu_op(&m, "aten::linear")->kind, PROF_KIND_COMPUTE, "%s", traces[i]);
        cr_expect_eq(mu_op(&m, DATALOADER)->calls, 2, "%s", traces[i]);
        cr_expect_null(mu_find_op(&m, "ProfilerStep#1"), "%s: steps are no regions",
                       traces[i]);
        cr_expect_null(mu_find_op(&m, "ProfilerStep#4"), "%s", traces[i]);
        profile_model_free(&m);
    }
}

/* ---- categories prof does not know --------------------------------------------------- */

Test(import_kineto, unknown_categories_counted)
{
    import_counts c;
    profile_model m;
    import_load(KDIR "unknown.json", 0, &c, &m);
    expect_counts(&c, (want_counts){ .regions = 6, .steps = 2, .marks = 1, .unknown = 9 });
    cJSON *meta = metadata(&m);
    const cJSON *u = import_obj(meta, "unknown_categories");
    static const struct { const char *cat; int n; } want[] = {
        { "privateuse1_runtime", 3 }, { "privateuse1_driver", 1 }, { "privateuse1_kernel", 1 },
        { "malformed", 2 },           { "ph C", 1 },               { "(none)", 1 },
    };
    cr_expect_eq(cJSON_GetArraySize(u), 6);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const cJSON *v = cJSON_GetObjectItem(u, want[i].cat);
        cr_expect(v && v->valuedouble == want[i].n, "%s", want[i].cat);
    }
    cr_expect_eq(mu_op(&m, "aten::mse_loss")->calls, 2);
    cr_expect_null(mu_find_op(&m, "aten::relu"), "no ts: malformed");
    cr_expect_eq(m.ngpus, 0);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* ---- damage ----------------------------------------------------------------------------- */

Test(import_kineto, cut_mid_event)
{
    import_counts c;
    profile_model m;
    import_load(KDIR "cut.json", 0, &c, &m);
    cr_expect_eq(c.damaged, 1);
    /* the complete events before the cut */
    expect_counts(&c, (want_counts){ .regions = 26, .steps = 2, .kernels = 4, .copies = 3,
                                     .syncs = 1, .api_calls = 8, .memory_samples = 8 });
    cJSON *meta = metadata(&m);
    const cJSON *d = import_obj(meta, "damaged");
    cr_assert(cJSON_IsString(d));
    cr_expect_str_eq(d->valuestring, "the file ends inside the JSON document at byte 15202");
    cr_expect_eq(m.rank, 1, "distributedInfo came before the cut");
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* Cut at every few bytes: each cut is read up to the damage (or refused
 * when the cut comes before traceEvents), never yields more than the whole,
 * and what is read loads. */
static void cut_everywhere(const char *whole_path, size_t stride)
{
    char trace[256], prof[256];
    snprintf(trace, sizeof trace, "%s", fx_path("cut-anywhere.json"));
    snprintf(prof, sizeof prof, "%s", fx_path("cut-anywhere.prof"));
    size_t n;
    char *bytes = fu_slurp(whole_path, &n);
    import_counts whole, c;
    prof_error err;
    cr_assert_eq(import_opts(whole_path, prof, 0, &whole, &err), PROF_OK, "%s", err.message);
    uint64_t last_regions = 0;
    int damaged = 0, refused = 0;
    for (size_t cut = 1; cut < n; cut += stride) {
        fu_spill(trace, bytes, cut);
        prof_err e = import_opts(trace, prof, 0, &c, &err);
        if (e != PROF_OK) {
            cr_expect(e == PROF_ERR_CORRUPT || e == PROF_ERR_NOT_PROF, "cut %zu: %d %s", cut, e,
                      err.message);
            cr_expect(err.message[0] != '\0');
            cr_expect_eq(last_regions, 0, "cut %zu refused after events were read", cut);
            refused++;
            continue;
        }
        cr_expect_eq(c.damaged, 1, "cut %zu", cut);
        cr_expect_leq(c.regions, whole.regions);
        cr_expect_leq(c.kernels, whole.kernels);
        cr_expect_leq(c.api_calls, whole.api_calls);
        cr_expect_geq(c.regions + c.steps, last_regions, "cut %zu reads less than before", cut);
        last_regions = c.regions + c.steps;
        damaged++;
        profile_model m;
        cr_expect_eq(profile_model_load(prof, NULL, &m, NULL, NULL, &err), PROF_OK, "cut %zu: %s", cut,
                     err.message);
        profile_model_free(&m);
    }
    free(bytes);
    cr_expect_gt(damaged, 0);
    cr_expect_gt(refused, 0);
    cr_log_info("%s: %d cuts read with damage, %d refused", whole_path, damaged, refused);
}

Test(import_kineto, cut_short_anywhere)
{
    cut_everywhere(KDIR "2023.json", 97);
}

Test(import_kineto, gzip_cut_short_anywhere)
{
    cut_everywhere(KDIR "2024.json.gz", 13);
}

/* A corrupt gzip stream keeps the events inflated before the damage. */
Test(import_kineto, gzip_damaged)
{
    const char *trace = fx_path("damaged.json.gz");
    gzFile g = gzopen(trace, "wb6");
    cr_assert_not_null(g);
    gzprintf(g, "{\"traceEvents\": [\n");
    for (int i = 0; i < 20000; i++)
        gzprintf(g, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %d, \"dur\": 5},\n",
                 i % 97, 1000000 + 10 * i);
    gzprintf(g, "{\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 9000000}]}\n");
    cr_assert_eq(gzclose(g), Z_OK);
    size_t n;
    char *bytes = fu_slurp(trace, &n);
    for (size_t i = n / 2; i < n / 2 + 64; i++)
        bytes[i] = (char)(bytes[i] ^ 0x5a);
    fu_spill(trace, bytes, n);
    free(bytes);
    import_counts c;
    prof_error err;
    cr_assert_eq(import_opts(trace, fx_path("damaged.prof"), 0, &c, &err), PROF_OK, "%s",
                 err.message);
    cr_expect_eq(c.damaged, 1);
    cr_expect_gt(c.regions, 5000, "%llu regions before the damage", (unsigned long long)c.regions);
    cr_expect_lt(c.regions, 20000);
    cr_expect_eq(c.marks, 0);
}

/* ---- what is not a trace ------------------------------------------------------------------- */

/* kineto_read on bytes, through a sink of its own (import_trace would
 * refuse some of them by their first bytes already). */
static prof_err read_bytes(const char *text, size_t n, import_counts *c, prof_error *err)
{
    char trace[256];
    snprintf(trace, sizeof trace, "%s", fx_path("bytes.json"));
    fu_spill(trace, text, n);
    import_sink *s;
    int fd = open(fx_path("bytes.prof"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    *err = (prof_error){ PROF_OK, "" };
    cr_assert_eq(sink_open(&s, fd, "kineto", trace, err), PROF_OK);
    prof_err e = kineto_read(trace, s, NULL, err);
    sink_describe(s, c);
    if (e == PROF_OK)
        cr_assert_eq(sink_close(s, err), PROF_OK, "%s", err->message);
    else
        sink_abandon(s);
    return e;
}

/* read_bytes of text (n bytes, freed), which must import, and the model
 * of what it made. */
static void load_bytes(char *text, size_t n, import_counts *c, profile_model *m)
{
    prof_error err;
    cr_assert_eq(read_bytes(text, n, c, &err), PROF_OK, "%s", err.message);
    free(text);
    cr_assert_eq(profile_model_load(fx_path("bytes.prof"), NULL, m, NULL, NULL, &err), PROF_OK, "%s",
                 err.message);
}

static void expect_refused(const char *text, prof_err code, const char *says)
{
    import_counts c;
    prof_error err;
    cr_expect_eq(read_bytes(text, strlen(text), &c, &err), code, "'%s': %s", text, err.message);
    cr_expect(strstr(err.message, says), "'%s': %s", text, err.message);
}

Test(import_kineto, not_traces)
{
    expect_refused("", PROF_ERR_NOT_PROF, "no JSON document");
    expect_refused(" \n\t ", PROF_ERR_NOT_PROF, "no JSON document");
    expect_refused("[{\"ph\": \"X\"}]", PROF_ERR_NOT_PROF, "not an object");
    expect_refused("42", PROF_ERR_NOT_PROF, "not an object");
    expect_refused("{\"schemaVersion\": 1, \"traceName\": \"x\"}", PROF_ERR_NOT_PROF,
                   "no traceEvents");
    expect_refused("{\"traceEvents\": {\"ph\": \"X\"}}", PROF_ERR_NOT_PROF, "no traceEvents");
    expect_refused("{\"deviceProperties\": [{\"id\": 0", PROF_ERR_CORRUPT,
                   "damaged before any trace event");
    expect_refused("{\"a\": tru", PROF_ERR_CORRUPT, "damaged before any trace event");
    expect_refused("\x7f" "ELF\x02\x01\x01", PROF_ERR_NOT_PROF, "not JSON");
}

Test(import_kineto, unreadable)
{
    import_sink *s;
    prof_error err = { PROF_OK, "" };
    int fd = open(fx_path("none.prof"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_eq(sink_open(&s, fd, "kineto", "missing.json", &err), PROF_OK);
    cr_expect_eq(kineto_read(fx_path("missing.json"), s, NULL, &err), PROF_ERR_IO);
    cr_expect(strstr(err.message, "cannot open"), "%s", err.message);
    sink_abandon(s);
}

Test(import_kineto, empty_trace_is_a_trace)
{
    import_counts c;
    prof_error err;
    const char *t = "{\"traceEvents\": []}";
    cr_expect_eq(read_bytes(t, strlen(t), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.regions + c.unknown, 0);
    cr_expect_eq(c.damaged, 0);
    t = "{\"traceEvents\": [], \"x\": 1} trailing bytes";
    cr_expect_eq(read_bytes(t, strlen(t), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.damaged, 0, "bytes after the document are not read");
}

/* A UTF-8 byte order mark before the document (Windows tools and some
 * editors write one) is passed over, plain or inside gzip, by YAJL and by
 * the fast path: the trace imports to the same events as without it. One
 * mark only, and only at the start: anything else is still not JSON. */
Test(import_kineto, byte_order_mark_is_passed_over)
{
    size_t n;
    char *json = fu_slurp(KDIR "2024.json", &n);
    char *marked = malloc(n + 3);
    cr_assert(json && marked);
    memcpy(marked, "\xEF\xBB\xBF", 3);
    memcpy(marked + 3, json, n);
    char plain[256], gz[256], out[256];
    snprintf(plain, sizeof plain, "%s", fx_path("bom.json"));
    snprintf(gz, sizeof gz, "%s", fx_path("bom.json.gz"));
    snprintf(out, sizeof out, "%s", fx_path("bom.prof"));
    fu_spill(plain, marked, n + 3);
    gzFile g = gzopen(gz, "wb6");
    cr_assert_not_null(g);
    cr_assert_eq(gzwrite(g, marked, (unsigned)(n + 3)), (int)(n + 3));
    cr_assert_eq(gzclose(g), Z_OK);
    free(marked);
    free(json);
    import_counts c0, c;
    profile_model m0;
    char ref[256];
    snprintf(ref, sizeof ref, "%s", import_load(KDIR "2024.json", 0, &c0, &m0));
    profile_model_free(&m0);
    uint64_t n0, n1, h0 = events_hash(ref, &n0);
    const char *traces[] = { plain, gz };
    for (int t = 0; t < 2; t++)
        for (int yajl_only = 0; yajl_only < 2; yajl_only++) {
            int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            cr_assert(fd >= 0);
            prof_tuning tu = { .yajl_only = yajl_only };
            import_options o = { .tuning = &tu };
            prof_error err = { PROF_OK, "" };
            cr_assert_eq(import_trace(traces[t], fd, &o, &c, &err), PROF_OK, "%s: %s",
                         traces[t], err.message);
            cr_expect_eq(c.damaged, 0, "%s", traces[t]);
            cr_expect_eq(c.regions, c0.regions, "%s", traces[t]);
            cr_expect_eq(events_hash(out, &n1), h0, "%s (yajl_only %d)",
                         traces[t], yajl_only);
            cr_expect_eq(n1, n0);
        }
    prof_error err;
    const char *t = "\xEF\xBB\xBF \n\t{\"traceEvents\": []}";
    cr_expect_eq(read_bytes(t, strlen(t), &c, &err), PROF_OK, "a mark, blanks: %s", err.message);
    expect_refused("\xEF\xBB\xBF", PROF_ERR_NOT_PROF, "no JSON document");
    expect_refused("\xEF\xBB\xBF\xEF\xBB\xBF{\"traceEvents\": []}", PROF_ERR_NOT_PROF,
                   "not JSON");
    expect_refused(" \xEF\xBB\xBF{\"traceEvents\": []}", PROF_ERR_NOT_PROF, "not JSON");
}

/* ---- limits ---------------------------------------------------------------------------------- */

#define EV_HEAD "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"pid\": 1, \"tid\": 1, "

/* A name longer than the format's limit is cut at a character boundary
 * and counted. */
Test(import_kineto, long_name_cut_at_a_character)
{
    size_t chars = 40000; /* "é": 2 bytes each, 80,000 bytes */
    size_t cap = chars * 2 + 256;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    size_t n = (size_t)snprintf(t, cap, EV_HEAD "\"ts\": 5000000, \"dur\": 7, \"name\": \"x");
    for (size_t i = 0; i < chars; i++) {
        t[n++] = (char)0xc3;
        t[n++] = (char)0xa9;
    }
    n += (size_t)snprintf(t + n, cap - n, "\"}]}");
    import_counts c;
    profile_model m;
    load_bytes(t, n, &c, &m);
    cr_expect_eq(c.regions, 1);
    cr_assert_eq(m.nops, 1);
    size_t len = strlen(m.ops[0].name);
    cr_expect_eq(len, 65535, "1 + 32767 two-byte characters: %zu", len);
    cr_expect_eq((unsigned char)m.ops[0].name[len - 1], 0xa9, "whole characters only");
    cJSON *meta = metadata(&m);
    cr_expect_eq(cJSON_GetObjectItem(import_obj(meta, "facts"), "strings_cut")->valuedouble, 1);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

Test(import_kineto, deep_nesting_is_damage)
{
    size_t depth = 100000, cap = 2 * depth + 512;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    size_t n = (size_t)snprintf(t, cap,
                                EV_HEAD "\"ts\": 5000000, \"dur\": 7, \"name\": \"a\"}, "
                                        "{\"ph\": \"X\", \"args\": {\"x\": ");
    memset(t + n, '[', depth);
    n += depth;
    memset(t + n, ']', depth);
    n += depth;
    n += (size_t)snprintf(t + n, cap - n, "}}]}");
    import_counts c;
    prof_error err;
    cr_assert_eq(read_bytes(t, n, &c, &err), PROF_OK, "%s", err.message);
    free(t);
    cr_expect_eq(c.regions, 1, "the event before the damage is kept");
    cr_expect_eq(c.damaged, 1);
}

Test(import_kineto, huge_token_is_damage)
{
    size_t big = 9u << 20, cap = big + 512;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    size_t n = (size_t)snprintf(t, cap,
                                EV_HEAD "\"ts\": 5000000, \"dur\": 7, \"name\": \"a\"}, "
                                        "{\"ph\": \"X\", \"name\": \"");
    memset(t + n, 'z', big);
    n += big;
    n += (size_t)snprintf(t + n, cap - n, "\"}]}");
    import_counts c;
    prof_error err;
    cr_assert_eq(read_bytes(t, n, &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.regions, 1);
    cr_expect_eq(c.damaged, 1, "a string past 8 MiB");
    /* the same length of digits */
    n = (size_t)snprintf(t, cap, EV_HEAD "\"ts\": 5000000, \"dur\": 7, \"name\": \"a\"}, {\"ts\": ");
    memset(t + n, '7', big);
    n += big;
    n += (size_t)snprintf(t + n, cap - n, "}]}");
    cr_assert_eq(read_bytes(t, n, &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.damaged, 1, "a number past 8 MiB");
    free(t);
}

/* ---- times ------------------------------------------------------------------------------------ */

/* Region starts as the reader gives them, by name. */
static uint64_t start_of(const char *prof, const char *name)
{
    prof_reader *r;
    prof_error err;
    cr_assert_eq(prof_reader_open(prof, &r, &err), PROF_OK, "%s", err.message);
    prof_event ev;
    uint64_t t = UINT64_MAX;
    while (prof_reader_next(r, &ev) > 0)
        if (ev.type == PROF_EV_REGION && strcmp(ev.name, name) == 0)
            t = ev.start_ns;
    prof_reader_close(r);
    cr_assert_neq(t, UINT64_MAX, "no region %s", name);
    return t;
}

Test(import_kineto, times_exact_to_the_nanosecond)
{
    const char *t =
        "{\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": 4458676522690.655, \"dur\": 0.001},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 2, "
        "\"ts\": 4458676522690.6555, \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 3, "
        "\"ts\": 4.4586765226917e12, \"dur\": -3},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"d\", \"pid\": 1, \"tid\": 4, "
        "\"ts\": 4458676522690.6551999, \"dur\": 2},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"e\", \"pid\": 1, \"tid\": 5, "
        "\"ts\": 99999999999999999999, \"dur\": 2},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"f\", \"pid\": 1, \"tid\": 6, "
        "\"ts\": \"12\", \"dur\": 2}"
        "], \"baseTimeNanoseconds\": 1711964646000000000}";
    import_counts c;
    prof_error err;
    cr_assert_eq(read_bytes(t, strlen(t), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.regions, 4);
    cr_expect_eq(c.unknown, 2, "ts too large, ts a string: malformed");
    const char *p = fx_path("bytes.prof");
    uint64_t a = start_of(p, "a");
    cr_expect_eq(start_of(p, "b") - a, 1, "a fourth decimal rounds");
    cr_expect_eq(start_of(p, "c") - a, 1045, "an exponent, through strtod");
    cr_expect_eq(start_of(p, "d") - a, 0, "further decimals are dropped");
    profile_model m;
    cr_assert_eq(profile_model_load(p, NULL, &m, NULL, NULL, &err), PROF_OK);
    cr_expect_eq(meta_u64(&m, "start_epoch_ns") + a, 1711964646000000000ull + 4458676522690655ull);
    cr_expect_eq(mu_op(&m, "c")->incl_ns, 0, "a negative dur is 0");
    cr_expect_eq(mu_op(&m, "a")->incl_ns, 1);
    profile_model_free(&m);
}

/* An operation and the one it calls often share their start and duration
 * to the microsecond (torch::distributed::reducer::mul_out and aten::mul
 * in a real DDP trace); the trace lists the caller first, and so it nests.
 * 3,000 such pairs, past the importer's window, every seventh written
 * after the pair that follows it, so that both of the window's orders
 * meet them. */
Test(import_kineto, a_call_sharing_its_callers_interval_nests_under_it)
{
    size_t cap = 3000 * 260 + 64, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    n += (size_t)snprintf(t + n, cap - n, "{\"traceEvents\": [");
    for (int i = 0; i < 3000; i++) {
        int k = i % 7 == 0 && i + 1 < 3000 ? i + 1 : i % 7 == 1 && i > 0 ? i - 1 : i;
        for (int j = 0; j < 2; j++)
            n += (size_t)snprintf(t + n, cap - n,
                                  "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", "
                                  "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 9}",
                                  i || j ? "," : "", j ? "callee" : "caller", 1000 + 20 * k);
    }
    n += (size_t)snprintf(t + n, cap - n, "]}");
    import_counts c;
    profile_model m;
    load_bytes(t, n, &c, &m);
    cr_assert_eq(c.regions, 6000);
    cr_expect_eq(mu_op(&m, "caller")->self_ns, 0, "every caller holds its callee");
    cr_expect_eq(mu_op(&m, "callee")->self_ns, mu_op(&m, "callee")->incl_ns, "a leaf");
    cr_expect_eq(mu_op(&m, "callee")->calls, 3000);
    profile_model_free(&m);
}
