/* analysis_gpu.c - the rules on GPU data (formats/rules.md §3, §4.3, §4.5,
 * §4.9, §4.10) on fixture profiles with known answers: a GPU idle between
 * steps, idle time inside steps exact when records come out of order or
 * outnumber the stretches the model keeps, syncs on a busy and on an idle
 * GPU, kernels by GPU time, overlapped and exposed NCCL kernels, and the
 * straggler among two and four ranks (and none), on one host and on two,
 * and from COMM regions without GPU data. Run from the repository root. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis_util.h"
#include "output/report_text.h"

#define SCHEMA "formats/report.schema.json"
#define NCCL "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_gpu, .fini = teardown);

static const cJSON *device0(const cJSON *r)
{
    const cJSON *d = cJSON_GetArrayItem(au_get(au_get(r, "summary"), "gpu"), 0);
    cr_assert_not_null(d);
    return d;
}

/* ---- gpu_idle ------------------------------------------------------------------ */

/* 40 steps of 40 ms: the GPU runs 30 ms of kernels from 5 ms into each step
 * (two streams, the second inside the first), idle 10 ms around each step
 * boundary while the host loads the next batch. */
static const char *write_idle(const char *name, int steps)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 40; i++) {
        synth_gpu_kernel(s, "gemm", 0, 7, i, t + 5 * FX_MS, 20 * FX_MS);
        synth_gpu_kernel(s, "softmax", 0, 8, 100 + i, t + 10 * FX_MS, 5 * FX_MS);
        synth_gpu_kernel(s, "relu", 0, 7, 200 + i, t + 25 * FX_MS, 10 * FX_MS);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 40 * FX_MS);
        if (steps)
            synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 40 * FX_MS);
        t += 40 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_gpu, idle_gpu_between_steps)
{
    cJSON *r = au_report(write_idle("idle.prof", 1), NULL);
    au_assert_valid(r, SCHEMA, "report");
    const cJSON *d = device0(r);
    cr_assert_str_eq(au_str(d, "basis"), "steps");
    au_near(au_num(d, "step_ns"), 40 * 40e6, 1e-12, "step time");
    au_near(au_num(d, "idle_share"), 0.25, 1e-12, "10 ms of every 40");
    cr_assert_eq(au_num(d, "idle_gaps"), 39, "one gap between each two steps");
    au_near(au_num(d, "idle_gap_ns"), 39 * 10e6, 1e-12, "gap time");
    const cJSON *gaps = au_get(d, "longest_gaps");
    cr_assert_eq(cJSON_GetArraySize(gaps), 3);
    au_near(au_num(cJSON_GetArrayItem(gaps, 0), "dur_ns"), 10e6, 1e-12, "longest gap");
    const cJSON *f = au_finding(r, "gpu_idle", "gpu 0");
    cr_assert_not_null(f, "25%% idle is flagged");
    cr_assert_str_eq(au_str(f, "severity"), "medium");
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_str_eq(au_str(ev, "basis"), "steps");
    au_near(au_num(ev, "idle_ns"), 40 * 10e6, 1e-12, "idle in steps");
    cr_assert(strstr(au_str(f, "title"), "of step time") != NULL, "%s", au_str(f, "title"));
    cJSON_Delete(r);

    /* without steps: the share is of the device's active span, the first
     * 5 ms and the last 5 ms of the run not counted */
    r = au_report(write_idle("idle_nosteps.prof", 0), NULL);
    d = device0(r);
    cr_assert_str_eq(au_str(d, "basis"), "span");
    au_near(au_num(d, "idle_share"), 39 * 10.0 / (39 * 40 + 30), 1e-12, "gaps over the span");
    cr_assert_not_null(au_finding(r, "gpu_idle", "gpu 0"));
    cJSON_Delete(r);
}

/* Busy inside the steps when there are more stretches than the model keeps
 * (MB_GPU_SPANS) and records come out of order within a batch: 200 steps of
 * 10 ms, each with 60 kernels of 100 us and 50 us gaps, then a 1 ms gap. */
Test(analysis_gpu, idle_inside_steps_with_many_kernels)
{
    const char *path = fx_path("many.prof");
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    synth_block_records(s, 500);
    uint64_t t = FX_MS, busy = 0;
    for (uint64_t i = 0; i < 200; i++) {
        for (uint64_t k = 0; k < 60; k++) { /* pairs written swapped */
            uint64_t j = k ^ 1u;
            synth_gpu_kernel(s, j % 3 ? "gemm" : "add", 0, 7, i * 100 + j,
                             t + 200000 + j * 150000, 100000);
        }
        busy += 60 * 100000;
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 10 * FX_MS);
        t += 10 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *d = device0(r);
    au_near(au_num(d, "busy_ns"), (double)busy, 1e-12, "busy over the run");
    cr_assert(cJSON_IsTrue(au_get(d, "interpolated")), "12,000 stretches were merged");
    au_near(au_num(d, "idle_share"), 1.0 - (double)busy / (200 * 10e6), 1e-3,
            "idle share within 0.1%%");
    cJSON_Delete(r);
}

/* ---- cpu_gpu_sync --------------------------------------------------------------- */

/* 30 steps of 40 ms with kernels_ms of kernels each and a 2 ms device sync
 * inside log_metrics (and a stream's wait on an event, which is no sync). */
static const char *write_sync(const char *name, uint64_t kernels_ms)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 30; i++) {
        synth_gpu_kernel(s, "gemm", 0, 7, i, t + FX_MS, kernels_ms * FX_MS);
        synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 1000 + i, t + 37 * FX_MS, 2 * FX_MS);
        /* a stream waiting on an event: the GPU waits, not the CPU */
        synth_sync(s, 0, PROF_SYNC_STREAM_WAIT, 0, 40, 2000 + i, t + 38 * FX_MS, 10000);
        synth_region(s, 0, "log_metrics", PROF_KIND_COMPUTE, 1, t + 36 * FX_MS, 4 * FX_MS);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 40 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 40 * FX_MS);
        t += 40 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_gpu, syncs_on_a_busy_and_on_an_idle_gpu)
{
    /* busy GPU: 2 ms of waiting per 38 ms of GPU work is 5.3%: not flagged */
    cJSON *r = au_report(write_sync("busy.prof", 38), NULL);
    const cJSON *sync = au_get(au_get(r, "summary"), "sync");
    cr_assert_str_eq(au_str(sync, "basis"), "gpu_busy");
    au_near(au_num(sync, "share"), 2.0 / 38.0, 1e-12, "share of GPU busy time");
    cr_assert_null(au_finding(r, "cpu_gpu_sync", NULL));
    cr_assert_null(au_finding(r, "gpu_idle", NULL), "5%% idle");
    cJSON_Delete(r);

    /* idle GPU: the same waits per 5 ms of GPU work are 40%: high, at its site */
    r = au_report(write_sync("idle.prof", 5), NULL);
    const cJSON *f = au_finding(r, "cpu_gpu_sync", NULL);
    cr_assert_not_null(f);
    cr_assert_str_eq(au_str(f, "severity"), "high");
    const cJSON *ev = au_get(f, "evidence");
    au_near(au_num(ev, "share"), 0.4, 1e-12, "2 of 5 ms");
    /* the title gives the share of GPU busy time and, as the impact bar shows
       it, of profiled time */
    char want[160];
    snprintf(want, sizeof want, "the CPU waits for the GPU 40.0%% of GPU busy time (%.1f%% of "
             "profiled time), mostly in log_metrics", 100.0 * au_num(f, "impact_share"));
    cr_assert_str_eq(au_str(f, "title"), want);
    cr_assert_eq(au_num(ev, "count"), 30, "stream waits are not counted");
    au_near(au_num(ev, "per_step"), 1.0, 1e-12, "one per step");
    const cJSON *site = cJSON_GetArrayItem(au_get(ev, "sites"), 0);
    cr_assert_str_eq(au_str(site, "name"), "log_metrics");
    au_near(au_num(site, "blocked_ns"), 30 * 2e6, 1e-12, "its blocked time");
    cr_assert_not_null(au_finding(r, "gpu_idle", "gpu 0"), "and the GPU is idle");
    cJSON_Delete(r);
}

/* ---- kernels and exposed_comm -------------------------------------------------------- */

/* 20 steps of 50 ms on one device: gemm 20 ms and add 5 ms on stream 7,
 * an all-reduce of 10 ms on stream 40, either during gemm (overlapped) or
 * after add (exposed). */
static const char *write_comm(const char *name, int overlapped)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        synth_gpu_kernel(s, "gemm", 0, 7, i, t + FX_MS, 20 * FX_MS);
        synth_gpu_kernel(s, "add", 0, 7, 100 + i, t + 21 * FX_MS, 5 * FX_MS);
        synth_gpu_kernel(s, NCCL, 0, 40, 200 + i, t + (overlapped ? 5 : 26) * FX_MS,
                         10 * FX_MS);
        synth_region(s, 0, "allreduce", PROF_KIND_COMM, 1, t + 26 * FX_MS, FX_MS);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 50 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 50 * FX_MS);
        t += 50 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_gpu, kernels_by_gpu_time)
{
    cJSON *r = au_report(write_comm("k.prof", 0), NULL);
    au_assert_valid(r, SCHEMA, "report");
    const cJSON *ks = au_get(r, "kernels");
    cr_assert_eq(au_num(r, "kernels_total"), 3);
    cr_assert_eq(cJSON_GetArraySize(ks), 3);
    const cJSON *k0 = cJSON_GetArrayItem(ks, 0), *k1 = cJSON_GetArrayItem(ks, 1);
    cr_assert_str_eq(au_str(k0, "name"), "gemm", "largest GPU time first");
    au_near(au_num(k0, "gpu_ns"), 20 * 20e6, 1e-12, "gemm time");
    au_near(au_num(k0, "share"), 20.0 / 35.0, 1e-12, "of 35 ms busy per step");
    cr_assert(cJSON_IsFalse(au_get(k0, "comm")));
    cr_assert_str_eq(au_str(k1, "name"), NCCL);
    cr_assert(cJSON_IsTrue(au_get(k1, "comm")), "an NCCL kernel communicates");
    cr_assert_not_null(au_finding(r, "hot_operation", "gemm"), "gemm is a hot kernel");
    cr_assert_null(au_finding(r, "hot_operation", NCCL), "communication is judged apart");

    analysis_options o;
    analysis_options_default(&o);
    o.top = 1;
    cJSON *one = au_report(fx_path("k.prof"), &o);
    cr_assert_eq(cJSON_GetArraySize(au_get(one, "kernels")), 1, "--top cuts kernels too");
    cr_assert_eq(au_num(one, "kernels_total"), 3);
    cJSON_Delete(one);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_style plain = { 0, 0, 0, 0 };
    cr_assert_eq(report_render_text(f, r, &plain), PROF_OK);
    fclose(f);
    const char *ops = strstr(text, "Top operations by self time");
    const char *kern = strstr(text, "Top kernels by GPU time");
    cr_assert(ops && kern && kern > ops, "%s", text);
    cr_assert(strstr(ops, "gemm") > kern, "kernels are not in the operations table:\n%s", text);
    cr_assert(strstr(text, "communication: 20 kernels") != NULL, "%s", text);
    cr_assert(strstr(text, "idle 30.0% of step time") != NULL, "%s", text);
    free(text);
    cJSON_Delete(r);
}

Test(analysis_gpu, overlapped_and_exposed_nccl)
{
    cJSON *r = au_report(write_comm("overlap.prof", 1), NULL);
    const cJSON *d = device0(r);
    cr_assert_eq(au_num(d, "comm_kernels"), 20);
    au_near(au_num(d, "comm_ns"), 20 * 10e6, 1e-12, "communication time");
    au_near(au_num(d, "comm_overlap_share"), 1.0, 1e-12, "all of it under gemm");
    cr_assert_eq(au_num(d, "comm_exposed_ns"), 0);
    cr_assert_null(au_finding(r, "exposed_comm", NULL));
    cJSON_Delete(r);

    r = au_report(write_comm("exposed.prof", 0), NULL);
    d = device0(r);
    cr_assert_eq(au_num(d, "comm_overlap_ns"), 0);
    au_near(au_num(d, "comm_exposed_share"), 10.0 / 50.0, 1e-12, "10 ms of each 50 ms step");
    const cJSON *f = au_finding(r, "exposed_comm", "gpu 0");
    cr_assert_not_null(f);
    cr_assert_str_eq(au_str(f, "severity"), "medium");
    const cJSON *ev = au_get(f, "evidence");
    au_near(au_num(ev, "exposed_ns"), 20 * 10e6, 1e-12, "exposed time");
    cr_assert_eq(au_num(ev, "overlap_share"), 0);
    cr_assert_str_eq(au_str(ev, "basis"), "steps");
    cJSON_Delete(r);
}

/* ---- straggler ------------------------------------------------------------------- */

/* One rank of a data-parallel job: 30 steps of 160 ms; forward and
 * backward take compute_ms (plus jitter_ms in step i when i % world ==
 * rank), then every rank all-reduces until 20 ms after the slowest one
 * arrives. Timestamps of a rank on another host are shifted by clock_ms. */
typedef struct rank_spec {
    int rank, world;
    const char *host;
    double compute_ms, slowest_ms, jitter_ms, clock_ms;
} rank_spec;

static const char *write_rank(const char *name, const rank_spec *sp)
{
    char meta[600];
    snprintf(meta, sizeof meta,
             "{\"format\":\"prof\",\"clock\":{\"source\":\"synthetic\"},\"host\":\"%s\","
             "\"pid\":7,\"argv\":[\"train.py\"],\"rank\":%d,\"world_size\":%d,\"devices\":[],"
             "\"tags\":{}}",
             sp->host, sp->rank, sp->world);
    const char *path = fx_path(name);
    synth *s = synth_open(path, meta);
    synth_thread(s, 0, 1, "train");
    uint64_t t = (uint64_t)((10 + sp->clock_ms) * 1e6);
    for (uint64_t i = 0; i < 30; i++) {
        int mine = (int)(i % (uint64_t)sp->world) == sp->rank;
        double c = sp->compute_ms + (mine ? sp->jitter_ms : 0);
        uint64_t arrive = t + (uint64_t)(c * 1e6);
        uint64_t done = t + (uint64_t)((sp->slowest_ms + 20) * 1e6);
        synth_gpu_kernel(s, "gemm", 0, 7, i, t, (uint64_t)(c * 1e6));
        synth_gpu_kernel(s, NCCL, 0, 40, 100 + i, arrive, done - arrive);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 160 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 160 * FX_MS);
        t += 160 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static cJSON *ranks_report(const char *const *paths, size_t n)
{
    profile_model m[4];
    const profile_model *all[4];
    for (size_t i = 0; i < n; i++) {
        au_load(paths[i], &m[i]);
        all[i] = &m[i];
    }
    prof_error err = { 0 };
    cJSON *r = report_build(all, n, NULL, &err);
    cr_assert_not_null(r, "%s", err.message);
    for (size_t i = 0; i < n; i++)
        profile_model_free(&m[i]);
    au_assert_valid(r, SCHEMA, "report");
    return r;
}

Test(analysis_gpu, straggler_of_two_ranks)
{
    rank_spec a = { 0, 2, "node1", 100, 112, 0, 0 }, b = { 1, 2, "node1", 112, 112, 0, 0 };
    const char *p[2] = { write_rank("r0.prof", &a), write_rank("r1.prof", &b) };
    cJSON *r = ranks_report(p, 2);
    const cJSON *f = au_finding(r, "straggler", "rank 1");
    cr_assert_not_null(f, "rank 1 computes 12 ms longer");
    cr_assert_eq(au_count(r, "straggler"), 1);
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_str_eq(au_str(ev, "method"), "collectives");
    cr_assert_str_eq(au_str(ev, "source"), "kernels");
    cr_assert_str_eq(au_str(ev, "alignment"), "start");
    cr_assert_eq(au_num(ev, "collectives"), 30);
    cr_assert_eq(au_num(ev, "last_arrivals"), 30);
    au_near(au_num(ev, "caused_wait_share"), 12.0 / 160.0, 1e-9, "12 ms of each 160 ms step");
    cr_assert_str_eq(au_str(f, "severity"), "low");
    const cJSON *r0 = cJSON_GetArrayItem(au_get(r, "ranks"), 0);
    au_near(au_num(r0, "wait_ns"), 30 * 12e6, 1e-9, "rank 0 waits 12 ms each time");
    cr_assert_eq(au_num(r0, "last_arrivals"), 0);
    cJSON_Delete(r);
}

Test(analysis_gpu, straggler_of_four_ranks_and_none)
{
    const char *p[4];
    char name[32];
    for (int k = 0; k < 4; k++) { /* rank 2 computes 30 ms longer */
        rank_spec sp = { k, 4, "node1", k == 2 ? 130 : 100 + k, 130, 0, 0 };
        snprintf(name, sizeof name, "four%d.prof", k);
        p[k] = write_rank(name, &sp);
    }
    cJSON *r = ranks_report(p, 4);
    cr_assert_eq(au_count(r, "straggler"), 1);
    const cJSON *f = au_finding(r, "straggler", "rank 2");
    cr_assert_not_null(f);
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_eq(au_num(ev, "last_arrivals"), 30);
    /* the others wait 30, 29 and 27 ms: 28.67 ms of every 160 */
    au_near(au_num(ev, "caused_wait_share"), (30 + 29 + 27) / 3.0 / 160.0, 1e-9, "share");
    cr_assert_str_eq(au_str(f, "severity"), "medium");
    cJSON_Delete(r);

    /* no straggler: each rank is the slow one in turn, by 3 ms */
    for (int k = 0; k < 4; k++) {
        rank_spec sp = { k, 4, "node1", 100, 103, 3, 0 };
        snprintf(name, sizeof name, "even%d.prof", k);
        p[k] = write_rank(name, &sp);
    }
    r = ranks_report(p, 4);
    cr_assert_null(au_finding(r, "straggler", NULL), "last in a quarter of the collectives each");
    const cJSON *k;
    cJSON_ArrayForEach(k, au_get(r, "ranks")) {
        cr_assert_eq(au_num(k, "collectives"), 30);
        cr_assert(au_num(k, "last_arrivals") >= 7 && au_num(k, "last_arrivals") <= 8);
    }
    cJSON_Delete(r);
}

Test(analysis_gpu, straggler_across_two_hosts)
{
    /* rank 0 is slower by 15 ms, but rank 1's clock runs 500 ms ahead: its
     * starts look later. Waits come from the all-reduces' durations. */
    rank_spec a = { 0, 2, "node1", 115, 115, 0, 0 }, b = { 1, 2, "node2", 100, 115, 0, 500 };
    const char *p[2] = { write_rank("h0.prof", &a), write_rank("h1.prof", &b) };
    cJSON *r = ranks_report(p, 2);
    cr_assert_null(au_finding(r, "straggler", "rank 1"), "not fooled by the clock");
    const cJSON *f = au_finding(r, "straggler", "rank 0");
    cr_assert_not_null(f);
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_str_eq(au_str(ev, "alignment"), "end");
    au_near(au_num(ev, "caused_wait_share"), 15.0 / 160.0, 1e-9, "15 ms of each step");
    cr_assert(strstr(au_str(f, "recommendation"), "different hosts") != NULL);
    cJSON_Delete(r);
}

/* The same ranks with no host in their profiles (an imported trace may not
 * say): compared the same safe way, but not said to be on different hosts. */
Test(analysis_gpu, straggler_with_hosts_unknown)
{
    rank_spec a = { 0, 2, "", 115, 115, 0, 0 }, b = { 1, 2, "", 100, 115, 0, 500 };
    const char *p[2] = { write_rank("u0.prof", &a), write_rank("u1.prof", &b) };
    cJSON *r = ranks_report(p, 2);
    const cJSON *f = au_finding(r, "straggler", "rank 0");
    cr_assert_not_null(f);
    cr_assert_str_eq(au_str(au_get(f, "evidence"), "alignment"), "end");
    cr_assert_null(strstr(au_str(f, "recommendation"), "different hosts"));
    cr_assert_not_null(strstr(au_str(f, "recommendation"), "do not say which host"));
    cJSON_Delete(r);
}

/* Without GPU data the collectives are the outermost COMM regions: a COMM
 * region inside another (c10d's wrapper around its NCCL call) is the same
 * collective. Rank 1 enters each 20 ms after rank 0. */
static const char *write_comm_rank(const char *name, int rank, uint64_t late_ms)
{
    char meta[400];
    snprintf(meta, sizeof meta,
             "{\"format\":\"prof\",\"host\":\"node1\",\"rank\":%d,\"world_size\":2}", rank);
    const char *path = fx_path(name);
    synth *s = synth_open(path, meta);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        uint64_t at = t + (80 + late_ms) * FX_MS, dur = (120 - late_ms) * FX_MS;
        synth_region(s, 0, "nccl:all_reduce", PROF_KIND_COMM, 2, at + FX_MS, dur - 2 * FX_MS);
        synth_region(s, 0, "c10d::allreduce_", PROF_KIND_COMM, 1, at, dur);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 200 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 200 * FX_MS);
        t += 200 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_gpu, straggler_from_nested_comm_regions)
{
    const char *p[2] = { write_comm_rank("c0.prof", 0, 0), write_comm_rank("c1.prof", 1, 20) };
    cJSON *r = ranks_report(p, 2);
    const cJSON *f = au_finding(r, "straggler", "rank 1");
    cr_assert_not_null(f);
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_str_eq(au_str(ev, "source"), "regions");
    cr_assert_eq(au_num(ev, "collectives"), 20, "the nested region is the same collective");
    au_near(au_num(ev, "caused_wait_share"), 20.0 / 200.0, 1e-9, "20 ms of each 200 ms step");
    cJSON_Delete(r);
}
