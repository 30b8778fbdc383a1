/* analysis_rules.c - the time rules of formats/rules.md on fixture profiles
 * with known answers: hot_operation on self time (49.7% HIGH, a wrapper not
 * flagged), cpu_gpu_sync at 15% of profiled time with its site,
 * step_slowdown, step_outliers, dropped_events, gpu_idle, and the
 * operations table. */
#include "analysis_util.h"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_rules, .fini = teardown);

/* 50 steps of 100 ms: train_step wraps forward 49.7 ms, backward 30 ms and
 * optimizer 20.3 ms (children written first, as the recorder does). */
static const char *write_hot(void)
{
    const char *path = fx_path("hot.prof");
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 50; i++) {
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, t, 49700000);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 1, t + 49700000, 30 * FX_MS);
        synth_region(s, 0, "optimizer", PROF_KIND_COMPUTE, 1, t + 79700000, 20300000);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_rules, hot_operation_on_self_time)
{
    cJSON *r = au_report(write_hot(), NULL);
    const cJSON *f = au_finding(r, "hot_operation", "forward");
    cr_assert_not_null(f, "forward is hot");
    cr_assert_str_eq(au_str(f, "severity"), "high");
    const cJSON *e = au_get(f, "evidence");
    cr_assert(fabs(au_num(e, "self_share") - 0.497) < 1e-9, "share %g", au_num(e, "self_share"));
    cr_assert(fabs(au_num(e, "incl_share") - 0.497) < 1e-9);
    cr_assert_eq(au_num(e, "calls"), 50);
    cr_assert(fabs(au_num(f, "impact_share") - 0.497) < 1e-9);
    cr_assert(strstr(au_str(f, "recommendation"), "forward") != NULL);
    cr_assert_str_eq(au_str(au_finding(r, "hot_operation", "backward"), "severity"), "high",
                     "30%% is high");
    cr_assert_str_eq(au_str(au_finding(r, "hot_operation", "optimizer"), "severity"),
                     "medium");
    cr_assert_null(au_finding(r, "hot_operation", "train_step"),
                   "a parent that only wraps its children is not hot");
    /* ordered by severity then impact */
    const cJSON *first = cJSON_GetArrayItem(au_get(r, "bottlenecks"), 0);
    cr_assert_str_eq(au_str(first, "subject"), "forward");

    const cJSON *ops = au_get(r, "operations");
    cr_assert_eq(cJSON_GetArraySize(ops), 4);
    cr_assert_eq(au_num(r, "operations_total"), 4);
    cr_assert_str_eq(au_str(cJSON_GetArrayItem(ops, 0), "name"), "forward", "by self time");
    const cJSON *wrap = au_named(ops, "name", "train_step");
    cr_assert_eq(au_num(wrap, "self_ns"), 0);
    cr_assert(fabs(au_num(wrap, "incl_share") - 1.0) < 1e-9);
    const cJSON *fw = au_named(ops, "name", "forward");
    au_near(au_num(fw, "p50_ns"), 49700000, 0.01, "p50 within the sketch bound");
    cr_assert_eq(au_num(fw, "min_ns"), 49700000);
    cr_assert_str_eq(au_str(fw, "kind"), "compute");
    cJSON_Delete(r);
}

Test(analysis_rules, hot_threshold_and_top_are_options)
{
    analysis_options o;
    analysis_options_default(&o);
    o.hot_threshold_pct = 40;
    o.top = 2;
    cJSON *r = au_report(write_hot(), &o);
    cr_assert_eq(au_count(r, "hot_operation"), 1, "only forward is over 40%%");
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "operations")), 2);
    cr_assert_eq(au_num(r, "operations_total"), 4);
    cJSON_Delete(r);
}

/* 40 steps: train_step (100 ms) holds forward 50 ms, a SYNC region
 * loss.item of 15 ms (every step, or every tenth when rare) and backward. */
static const char *write_sync(const char *name, int rare)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 40; i++) {
        int sync = !rare || i % 10 == 9;
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, t, 50 * FX_MS);
        if (sync)
            synth_region(s, 0, "loss.item", PROF_KIND_SYNC, 1, t + 50 * FX_MS, 15 * FX_MS);
        uint64_t b = sync ? 65 : 50;
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 1, t + b * FX_MS, (100 - b) * FX_MS);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_rules, sync_at_fifteen_percent_is_flagged_with_its_site)
{
    cJSON *r = au_report(write_sync("sync.prof", 0), NULL);
    const cJSON *f = au_finding(r, "cpu_gpu_sync", NULL);
    cr_assert_not_null(f);
    cr_assert_str_eq(au_str(f, "severity"), "medium");
    cr_assert_str_eq(au_str(f, "subject"), "train_step", "the enclosing region");
    const cJSON *e = au_get(f, "evidence");
    cr_assert(fabs(au_num(e, "share") - 0.15) < 1e-9, "share %g", au_num(e, "share"));
    cr_assert_str_eq(au_str(e, "basis"), "profiled", "no GPU data");
    cr_assert_eq(au_num(e, "count"), 40);
    cr_assert(fabs(au_num(e, "per_step") - 1.0) < 1e-9);
    const cJSON *site = cJSON_GetArrayItem(au_get(e, "sites"), 0);
    cr_assert_str_eq(au_str(site, "name"), "train_step");
    cr_assert_eq(au_num(site, "count"), 40);
    cr_assert(strstr(au_str(f, "recommendation"), "train_step") != NULL);
    const cJSON *sum = au_get(au_get(r, "summary"), "sync");
    cr_assert(fabs(au_num(sum, "share") - 0.15) < 1e-9);
    cr_assert_eq(au_num(sum, "blocked_ns"), 40 * 15 * FX_MS);
    cJSON_Delete(r);
}

Test(analysis_rules, rare_sync_is_not_flagged)
{
    cJSON *r = au_report(write_sync("rare.prof", 1), NULL);
    cr_assert_null(au_finding(r, "cpu_gpu_sync", NULL), "1.5%% of the time");
    cJSON_Delete(r);
}

/* As an 8-rank DLRM trace looked: 40 steps of 100 ms, each with ten
 * aten::item calls on values already on the host (SYNC regions of 600 ns,
 * each around an aten::_local_scalar_dense of 400 ns, one wait), and a
 * cudaDeviceSynchronize record in "log": 60 ms every fourth step, 200 us in
 * the others. 400 calls of aten::item: past the sketch's exact values. */
static const char *write_item_syncs(const char *name)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 40; i++) {
        for (uint64_t k = 0; k < 10; k++) {
            uint64_t at = t + (1 + k) * FX_MS;
            synth_region(s, 0, "aten::_local_scalar_dense", PROF_KIND_SYNC, 2, at + 100, 400);
            synth_region(s, 0, "aten::item", PROF_KIND_SYNC, 1, at, 600);
        }
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, t + 12 * FX_MS, 18 * FX_MS);
        uint64_t wait = i % 4 == 3 ? 60 * FX_MS : 200000;
        synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 1000 + i, t + 30 * FX_MS, wait);
        synth_region(s, 0, "log", PROF_KIND_COMPUTE, 1, t + 30 * FX_MS, wait + 1000);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static uint64_t band(const cJSON *o, int k)
{
    return (uint64_t)au_num(cJSON_GetArrayItem(au_get(o, "waits"), k), "count");
}

Test(analysis_rules, syncs_are_counted_by_how_long_they_waited)
{
    cJSON *r = au_report(write_item_syncs("item_syncs.prof"), NULL);
    const cJSON *sum = au_get(au_get(r, "summary"), "sync");
    cr_assert_eq(au_num(sum, "count"), 440, "400 item calls (their nested call is one wait) "
                 "and 40 records");
    cr_assert_eq(band(sum, 0), 400, "the items found the value ready");
    cr_assert_eq(band(sum, 1), 30);
    cr_assert_eq(band(sum, 2), 10);
    cr_assert_eq(au_num(sum, "waited"), 40);
    const cJSON *w = cJSON_GetArrayItem(au_get(sum, "waits"), 1);
    cr_assert_eq(au_num(w, "min_ns"), 10000);
    cr_assert_eq(au_num(w, "max_ns"), 1000000);
    cr_assert(cJSON_IsNull(au_get(cJSON_GetArrayItem(au_get(sum, "waits"), 2), "max_ns")));
    const cJSON *f = au_finding(r, "cpu_gpu_sync", NULL);
    cr_assert_not_null(f, "10 x 60 ms + 30 x 200 us of 4 s: 15%%");
    const cJSON *e = au_get(f, "evidence");
    cr_assert_eq(au_num(e, "waited"), 40);
    const cJSON *site = cJSON_GetArrayItem(au_get(e, "sites"), 0);
    cr_assert_str_eq(au_str(site, "name"), "log");
    cr_assert_eq(au_num(site, "count"), 40);
    cr_assert_eq(au_num(site, "waited"), 40);
    site = cJSON_GetArrayItem(au_get(e, "sites"), 1);
    cr_assert_str_eq(au_str(site, "name"), "train_step");
    cr_assert_eq(au_num(site, "count"), 400);
    cr_assert_eq(au_num(site, "waited"), 0);
    const char *rec = au_str(f, "recommendation");
    cr_assert(strstr(rec, "440 syncs, of which 40 waited 10 us or more (10 over 1 ms) and 400 "
                     "found the GPU done") != NULL, "%s", rec);
    cJSON_Delete(r);
}

/* 20 steps on thread 0: forward 50 ms, backward 100 ms with nothing
 * recorded in it. Thread 1 ("autograd") runs 400 ops of op_us (200 us by
 * default) every 250 us: under each backward (waiting), or after it (not). */
static const char *write_backward_ops(const char *name, int under, uint64_t op_us)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 10, "main");
    synth_thread(s, 1, 11, "autograd");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        uint64_t b = t + 50 * FX_MS, w = under ? b : b + 100 * FX_MS;
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 50 * FX_MS);
        for (uint64_t k = 0; k < 400; k++)
            synth_region(s, 1, "autograd_op", PROF_KIND_COMPUTE, 0, w + k * 250000,
                         op_us * 1000);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, b, 100 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 150 * FX_MS);
        t += 250 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static const char *write_backward(const char *name, int under)
{
    return write_backward_ops(name, under, 200);
}

Test(analysis_rules, a_region_that_waits_for_another_thread_is_not_hot)
{
    cJSON *r = au_report(write_backward("waits.prof", 1), NULL);
    cr_assert_null(au_finding(r, "hot_operation", "backward"), "its thread waits");
    cr_assert_not_null(au_finding(r, "hot_operation", "autograd_op"), "the work is hot");
    const char *note = au_note(r, "backward (");
    cr_assert_not_null(note);
    cr_assert(strstr(note, "is not flagged as hot") && strstr(note, "during 80.0% of its time") &&
              strstr(note, "(most of it thread autograd)") && !strstr(note, "sample"), "%s",
              note);
    cJSON_Delete(r);

    /* thinned (rules.md §4.1), 92% covered: the same verdict, and the note
     * says so */
    static const prof_tuning keep300 = { .model_keep = 300 };
    analysis_options thin;
    analysis_options_default(&thin);
    thin.tuning = &keep300;
    r = au_report(write_backward_ops("waits_thinned.prof", 1, 230), &thin);
    cr_assert_null(au_finding(r, "hot_operation", "backward"), "its thread waits");
    note = au_note(r, "backward (");
    cr_assert(note && strstr(note, "measured over a sample of 1 ms windows"), "%s",
              note ? note : "no note");
    cJSON_Delete(r);

    r = au_report(write_backward("works.prof", 0), NULL);
    cr_assert_not_null(au_finding(r, "hot_operation", "backward"), "nothing runs under it");
    cr_assert_null(au_note(r, "backward ("));
    cJSON_Delete(r);
}

static cJSON *steps_report(const char *name, const uint64_t *ns, size_t n)
{
    const char *path = fx_path(name);
    cr_assert_eq(fx_write_loop(path, NULL, n, ns, NULL, NULL), 0);
    return au_report(path, NULL);
}

Test(analysis_rules, step_slowdown_positive_and_negative)
{
    uint64_t ns[100];
    synth_rng rng = { 3 };
    for (int i = 0; i < 100; i++)
        ns[i] = synth_jitter(&rng, 100 * FX_MS + (uint64_t)i * 500000, 0.01);
    cJSON *r = steps_report("slow.prof", ns, 100);
    const cJSON *f = au_finding(r, "step_slowdown", NULL);
    cr_assert_not_null(f, "steps that slow down 0.5 ms each");
    au_near(au_num(au_get(f, "evidence"), "slope_ns_per_step"), 500000, 0.1, "slope");
    cr_assert_lt(au_num(au_get(f, "evidence"), "p_value"), 0.01);
    cJSON_Delete(r);

    for (int i = 0; i < 100; i++)
        ns[i] = synth_jitter(&rng, 100 * FX_MS, 0.03);
    r = steps_report("flat.prof", ns, 100);
    cr_assert_null(au_finding(r, "step_slowdown", NULL), "noise around a flat step time");
    cJSON_Delete(r);

    for (int i = 0; i < 100; i++)
        ns[i] = synth_jitter(&rng, 150 * FX_MS - (uint64_t)i * 500000, 0.01);
    r = steps_report("faster.prof", ns, 100);
    cr_assert_null(au_finding(r, "step_slowdown", NULL), "steps that get faster");
    cJSON_Delete(r);
}

Test(analysis_rules, step_outliers_are_marked)
{
    uint64_t ns[100];
    synth_rng rng = { 5 };
    for (int i = 0; i < 100; i++)
        ns[i] = synth_jitter(&rng, 100 * FX_MS, 0.01);
    ns[0] = 600 * FX_MS; /* set-up: not an outlier */
    ns[40] = ns[70] = 400 * FX_MS;
    cJSON *r = steps_report("outliers.prof", ns, 100);
    const cJSON *f = au_finding(r, "step_outliers", NULL);
    cr_assert_not_null(f);
    const cJSON *e = au_get(f, "evidence");
    cr_assert_eq(au_num(e, "count"), 2);
    cr_assert_eq(cJSON_GetArrayItem(au_get(e, "steps"), 0)->valuedouble, 40);
    cr_assert_eq(cJSON_GetArrayItem(au_get(e, "steps"), 1)->valuedouble, 70);
    cr_assert_eq(au_num(e, "max_ns"), 400 * FX_MS);
    const cJSON *steps = au_get(r, "steps");
    cr_assert(cJSON_IsTrue(au_get(cJSON_GetArrayItem(steps, 40), "outlier")));
    cr_assert(cJSON_IsFalse(au_get(cJSON_GetArrayItem(steps, 0), "outlier")));
    cr_assert(cJSON_IsFalse(au_get(cJSON_GetArrayItem(steps, 41), "outlier")));
    cr_assert_str_eq(au_str(f, "severity"), "medium", "excess about 6%% of step time");
    cJSON_Delete(r);

    ns[40] = ns[70] = ns[1];
    r = steps_report("jitter.prof", ns, 100);
    cr_assert_null(au_finding(r, "step_outliers", NULL), "jitter is not an outlier");
    cJSON_Delete(r);
}

Test(analysis_rules, dropped_events_are_a_finding_and_a_note)
{
    const char *path = fx_path("dropped.prof");
    synth *s = synth_open(path, NULL);
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    synth_dropped(s, 0, 500, t);
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *f = au_finding(r, "dropped_events", NULL);
    cr_assert_not_null(f);
    const cJSON *e = au_get(f, "evidence");
    cr_assert_eq(au_num(e, "dropped_events"), 500);
    double frac = au_num(e, "fraction");
    cr_assert(frac > 0.9 && frac < 1.0, "500 of about 540: %g", frac);
    cr_assert_str_eq(au_str(f, "severity"), "high");
    cr_assert_eq(au_num(au_get(r, "summary"), "dropped_events"), 500);
    cr_assert(au_note(r, "500 events"), "a note says events were dropped");
    cJSON_Delete(r);
}

Test(analysis_rules, idle_gpu_is_flagged_and_sync_uses_gpu_busy_time)
{
    const char *path = fx_path("gpu.prof");
    synth *s = synth_open(path, NULL);
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 30; i++) { /* 10 ms of kernels per 40 ms step */
        synth_gpu_kernel(s, "gemm", 0, 7, i, t + 5 * FX_MS, 10 * FX_MS);
        synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 1000 + i, t + 15 * FX_MS, 2 * FX_MS);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 40 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 40 * FX_MS);
        t += 40 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    cr_assert(cJSON_IsTrue(au_get(au_get(r, "summary"), "has_gpu")));
    const cJSON *f = au_finding(r, "gpu_idle", "gpu 0");
    cr_assert_not_null(f);
    double idle = au_num(au_get(f, "evidence"), "idle_share");
    cr_assert(idle > 0.7 && idle < 0.8, "30 ms idle of every 40: %g", idle);
    cr_assert_str_eq(au_str(f, "severity"), "high");
    const cJSON *sync = au_get(au_get(r, "summary"), "sync");
    cr_assert_str_eq(au_str(sync, "basis"), "gpu_busy");
    cr_assert(fabs(au_num(sync, "share") - 0.2) < 1e-9, "2 ms per 10 ms busy: %g",
              au_num(sync, "share"));
    const cJSON *gemm = au_named(au_get(r, "operations"), "name", "gemm");
    cr_assert_not_null(gemm);
    cr_assert_str_eq(au_str(gemm, "kind"), "gpu");
    cr_assert(fabs(au_num(gemm, "self_share") - 1.0) < 1e-9, "all of GPU busy time");
    cJSON_Delete(r);
}

/* ---- step_slowdown: the program or the machine (rules.md §4.6) ------------------------------- */

#define GROW_STEPS 120
#define GROW_OPS 6

static const char *const grow_names[GROW_OPS] = { "data", "forward", "backward", "optimizer",
                                                  "walk_history", "log" };

/* GROW_STEPS steps of GROW_OPS regions one after another, op k of step i
 * lasting base[k] * scale(i, k) (1% jitter), and step i `gap(i)` longer
 * than its regions (time outside every region). */
typedef double (*grow_fn)(int i, int k);

static cJSON *grow_report(const char *name, grow_fn scale, grow_fn gap)
{
    static const double base_ms[GROW_OPS] = { 5, 30, 40, 10, 5, 2 };
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_rng rng = { 11 };
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (int i = 0; i < GROW_STEPS; i++) {
        uint64_t at = t;
        for (int k = 0; k < GROW_OPS; k++) {
            uint64_t d = synth_jitter(&rng, (uint64_t)(base_ms[k] * scale(i, k) * 1e6), 0.01);
            synth_region(s, 0, grow_names[k], PROF_KIND_COMPUTE, 0, at, d);
            at += d;
        }
        uint64_t dur = at - t + (uint64_t)(gap(i, 0) * 1e6);
        synth_step(s, 0, (uint64_t)i, PROF_STEP_SAMPLED, t, dur);
        t += dur;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return au_report(path, NULL);
}

static double no_gap(int i, int k)
{
    (void)i, (void)k;
    return 0.0;
}

/* the history walked every step grows: 5 ms to about 65 ms */
static double history_grows(int i, int k)
{
    return k == 4 ? 1.0 + 0.1 * i : 1.0;
}

/* every operation 1.6 times slower in the last half, and now and then
 * slower still: other work took the machine's CPU */
static double machine_busier(int i, int k)
{
    (void)k;
    return (i >= GROW_STEPS / 2 ? 1.6 : 1.0) * (i % 7 == 3 ? 1.3 : 1.0);
}

static double steady_ops(int i, int k)
{
    (void)i, (void)k;
    return 1.0;
}

/* bursts of 4 slow steps (70 ms outside the regions), more of them late:
 * the fastest steps stay as fast */
static double bursts_late(int i, int k)
{
    (void)k;
    int period = i < GROW_STEPS / 2 ? 24 : 8;
    return i > 12 && i % period < 4 ? 70.0 : 0.0;
}

Test(analysis_rules, a_slowdown_in_one_operation_is_the_programs_and_named)
{
    cJSON *r = grow_report("grows.prof", history_grows, no_gap);
    const cJSON *f = au_finding(r, "step_slowdown", NULL);
    cr_assert_not_null(f);
    const cJSON *e = au_get(f, "evidence");
    const cJSON *top = cJSON_GetArrayItem(au_get(e, "growing"), 0);
    cr_assert_str_eq(au_str(top, "name"), "walk_history");
    cr_assert_gt(au_num(top, "ratio"), 2.0); /* about 56 ms against 20 */
    cr_assert_lt(au_num(e, "operations_median_ratio"), 1.05); /* the rest stayed */
    cr_assert_gt(au_num(e, "floor_drift"), au_num(e, "relative_drift") / 2);
    cr_assert_not_null(strstr(au_str(f, "recommendation"), "It grows most in walk_history"));
    cr_assert_null(au_note(r, "step time rose"));
    cJSON_Delete(r);
}

Test(analysis_rules, every_operation_slower_alike_is_the_machine)
{
    cJSON *r = grow_report("busier.prof", machine_busier, no_gap);
    cr_assert_null(au_finding(r, "step_slowdown", NULL));
    const char *n = au_note(r, "step time rose");
    cr_assert_not_null(n);
    cr_assert_not_null(strstr(n, "with every operation alike (their median +6"), "%s", n);
    cr_assert_not_null(strstr(n, "not a slowdown of the program"), "%s", n);
    cJSON_Delete(r);
}

Test(analysis_rules, bursts_of_slow_steps_that_leave_the_fastest_are_not_a_slowdown)
{
    cJSON *r = grow_report("bursts.prof", steady_ops, bursts_late);
    cr_assert_null(au_finding(r, "step_slowdown", NULL));
    const char *n = au_note(r, "in bursts of slow steps");
    cr_assert_not_null(n, "notes: %s", cJSON_PrintUnformatted(au_get(r, "notes")));
    cJSON_Delete(r);
}

/* ---- step_outliers: the program or the machine (rules.md §4.7) ------------------------------- */

/* steps 40 to 59 with every operation twice as long: the machine was busy */
static double busy_burst(int i, int k)
{
    (void)k;
    return i >= 40 && i < 60 ? 2.0 : 1.0;
}

/* two checkpoints: 300 ms outside the regions in steps 50 and 100 */
static double checkpoints(int i, int k)
{
    (void)k;
    return i == 50 || i == 100 ? 300.0 : 0.0;
}

Test(analysis_rules, outlier_steps_with_every_operation_slower_are_the_machine)
{
    cJSON *r = grow_report("burst.prof", busy_burst, no_gap);
    cr_assert_null(au_finding(r, "step_outliers", NULL));
    const char *n = au_note(r, "steps took over 1.5x the median");
    cr_assert_not_null(n, "notes: %s", cJSON_PrintUnformatted(au_get(r, "notes")));
    cr_assert_not_null(strstr(n, "20 steps"), "%s", n);
    cr_assert_not_null(strstr(n, "in 1 burst)"), "%s", n);
    cr_assert_not_null(strstr(n, "with every operation alike"), "%s", n);
    cJSON_Delete(r);
}

Test(analysis_rules, outlier_steps_whose_operations_stayed_are_flagged)
{
    cJSON *r = grow_report("checkpoints.prof", steady_ops, checkpoints);
    const cJSON *f = au_finding(r, "step_outliers", NULL);
    cr_assert_not_null(f);
    cr_assert_eq(au_num(au_get(f, "evidence"), "count"), 2);
    cr_assert_null(au_note(r, "took over 1.5x the median"));
    cJSON_Delete(r);
}

/* A third of the steps twice as long, alternating in blocks: a second
 * mode of the run, judged against the run's own spread, not outliers. */
Test(analysis_rules, a_second_mode_of_step_times_is_not_outliers)
{
    uint64_t ns[120];
    synth_rng rng = { 9 };
    for (int i = 0; i < 120; i++)
        ns[i] = synth_jitter(&rng, (i / 10) % 3 == 1 ? 200 * FX_MS : 100 * FX_MS, 0.01);
    cJSON *r = steps_report("modes.prof", ns, 120);
    cr_assert_null(au_finding(r, "step_outliers", NULL));
    cJSON_Delete(r);
}
