/* analysis_leak.c - the memory_leak rule (formats/rules.md §4.2) on fixture
 * profiles of 100 steps: a 12 MB/step leak is found with its slope within
 * 5%, its capacity and projection; a sawtooth (short and long teeth), a
 * one-off spike, growth that then stays flat and noise around a flat line
 * are not flagged; the per-step series takes the last sample of each step. */
#include "analysis_util.h"

#define STEPS 100

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_leak, .fini = teardown);

static const cJSON *series_of(const cJSON *report, const char *name)
{
    const cJSON *s = au_named(au_get(report, "memory"), "series", name);
    cr_assert_not_null(s, "no memory series %s", name);
    return s;
}

/* Writes bytes[] as gpu.allocated, one sample per step, and reports it. */
static cJSON *report_of(const char *name, const double *bytes, const analysis_options *o)
{
    char meta[600];
    const char *path = fx_path(name);
    fx_metadata(meta, sizeof meta, 0, 1, 8192.0 * FX_MB, 64.0 * 1024 * FX_MB);
    cr_assert_eq(fx_write_loop(path, meta, STEPS, NULL, "gpu.allocated", bytes), 0);
    return au_report(path, o);
}

static void assert_no_leak(const cJSON *r, const char *what)
{
    const cJSON *s = series_of(r, "gpu.allocated");
    const cJSON *fit = au_get(s, "fit");
    cr_assert(cJSON_IsObject(fit), "%s: the series was fitted", what);
    cr_assert(cJSON_IsFalse(au_get(fit, "leak")), "%s: fit says leak", what);
    cr_assert_null(au_finding(r, "memory_leak", NULL), "%s flagged as a leak", what);
    cr_assert(cJSON_IsNull(au_get(s, "projected_oom_step")), "%s: projection", what);
}

Test(analysis_leak, twelve_mb_per_step_is_found_with_slope_and_projection)
{
    /* two samples per step: a mid-step one 300 MB higher (a transient) and
     * the end-of-step value the series is made of */
    char meta[600];
    const char *path = fx_path("leak.prof");
    fx_metadata(meta, sizeof meta, 0, 1, 8192.0 * FX_MB, 0);
    synth *s = synth_open(path, meta);
    synth_rng rng = { 12 };
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < STEPS; i++) {
        double y = 4096.0 * FX_MB + 12.0 * FX_MB * (double)i + 2.0 * FX_MB * synth_gauss(&rng);
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_memory(s, 0, "gpu.allocated", t + 50 * FX_MS, (uint64_t)(y + 300.0 * FX_MB));
        synth_memory(s, 0, "gpu.allocated", t + 99 * FX_MS, (uint64_t)y);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *ser = series_of(r, "gpu.allocated");
    cr_assert_eq(cJSON_GetArraySize(au_get(ser, "points")), STEPS, "one point per step");
    const cJSON *p5 = cJSON_GetArrayItem(au_get(ser, "points"), 5);
    cr_assert_eq(au_num(p5, "step"), 5);
    cr_assert_eq(au_num(p5, "t_ns"), (double)(FX_MS + 5 * 100 * FX_MS + 99 * FX_MS),
                 "the last sample of the step");

    const cJSON *f = au_finding(r, "memory_leak", "gpu.allocated");
    cr_assert_not_null(f, "the leak is flagged");
    const cJSON *e = au_get(f, "evidence");
    au_near(au_num(e, "slope_bytes_per_step"), 12.0 * FX_MB, 0.05, "slope");
    cr_assert_lt(au_num(e, "p_value"), 0.01);
    cr_assert_gt(au_num(e, "r2"), 0.99);
    au_near(au_num(e, "robust_slope_bytes_per_step"), 12.0 * FX_MB, 0.05, "robust slope");
    cr_assert_lt(au_num(e, "ci95_bytes_per_step"), 0.5 * FX_MB);
    cr_assert_eq(au_num(e, "warmup_steps"), 10);
    cr_assert_eq(au_num(e, "capacity_bytes"), 8192.0 * FX_MB, "device 0 capacity");
    /* (8192 - 4096) / 12 = 341.3 steps; 100 ms per step past the last point */
    double oom = au_num(e, "projected_oom_step");
    cr_assert(oom >= 335 && oom <= 348, "projected step %g", oom);
    double last_t = (double)(FX_MS + 99 * 100 * FX_MS + 99 * FX_MS);
    double want_t = last_t + (oom - 99) * 100.0 * FX_MS;
    au_near(au_num(e, "projected_oom_t_ns"), want_t, 0.01, "projected time");
    cr_assert_str_eq(au_str(f, "severity"), "high", "runs out within 10x the window");
    cr_assert(strstr(au_str(f, "title"), "gpu.allocated grows 12.") != NULL, "%s",
              au_str(f, "title"));
    cr_assert(strstr(au_str(f, "recommendation"), "gpu.allocated") != NULL);
    cr_assert_eq(au_num(ser, "projected_oom_step"), oom);
    cr_assert(cJSON_IsTrue(au_get(au_get(ser, "fit"), "leak")));
    cJSON_Delete(r);
}

Test(analysis_leak, threshold_and_capacity_come_from_the_options)
{
    double y[STEPS];
    for (int i = 0; i < STEPS; i++)
        y[i] = 1024.0 * FX_MB + 12.0 * FX_MB * i;
    analysis_options o;
    analysis_options_default(&o);
    o.leak_threshold_mb = 20;
    cJSON *r = report_of("above.prof", y, &o);
    cr_assert_null(au_finding(r, "memory_leak", NULL), "12 MB/step under a 20 MB threshold");
    cJSON_Delete(r);
    analysis_options_default(&o);
    o.capacity_bytes = 3072.0 * FX_MB;
    r = report_of("cap.prof", y, &o);
    const cJSON *e = au_get(au_finding(r, "memory_leak", "gpu.allocated"), "evidence");
    cr_assert_eq(au_num(e, "capacity_bytes"), 3072.0 * FX_MB);
    cr_assert_eq(au_num(e, "projected_oom_step"), 171, "(3072 - 1024) / 12 = 170.7, got %g",
                 au_num(e, "projected_oom_step"));
    cJSON_Delete(r);
}

Test(analysis_leak, host_series_use_host_memory)
{
    double y[STEPS];
    for (int i = 0; i < STEPS; i++)
        y[i] = 2048.0 * FX_MB + 50.0 * FX_MB * i;
    char meta[600];
    const char *path = fx_path("host.prof");
    fx_metadata(meta, sizeof meta, 0, 1, 0, 16384.0 * FX_MB);
    cr_assert_eq(fx_write_loop(path, meta, STEPS, NULL, "host.rss", y), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *s = series_of(r, "host.rss");
    cr_assert_eq(au_num(s, "capacity_bytes"), 16384.0 * FX_MB);
    cr_assert_not_null(au_finding(r, "memory_leak", "host.rss"));
    cJSON_Delete(r);
}

Test(analysis_leak, sawtooth_is_not_a_leak)
{
    double y[STEPS];
    for (int i = 0; i < STEPS; i++) /* freed every 10 steps */
        y[i] = 4096.0 * FX_MB + 50.0 * FX_MB * (i % 10);
    cJSON *r = report_of("saw.prof", y, NULL);
    assert_no_leak(r, "sawtooth");
    cJSON_Delete(r);
    for (int i = 0; i < STEPS; i++) /* two long teeth: a steep slope, but the floor stays */
        y[i] = 4096.0 * FX_MB + 80.0 * FX_MB * (i % 50);
    r = report_of("saw2.prof", y, NULL);
    const cJSON *fit = au_get(series_of(r, "gpu.allocated"), "fit");
    cr_assert_gt(au_num(fit, "slope_bytes_per_step"), 10.0 * FX_MB, "over the threshold");
    cr_assert_lt(au_num(fit, "p_value"), 0.01, "and significant");
    assert_no_leak(r, "long sawtooth");
    cJSON_Delete(r);
}

Test(analysis_leak, one_off_spike_is_not_a_leak)
{
    double y[STEPS];
    synth_rng rng = { 7 };
    for (int i = 0; i < STEPS; i++)
        y[i] = 4096.0 * FX_MB + 1.0 * FX_MB * synth_gauss(&rng);
    y[95] += 20480.0 * FX_MB;
    cJSON *r = report_of("spike.prof", y, NULL);
    const cJSON *fit = au_get(series_of(r, "gpu.allocated"), "fit");
    cr_assert_gt(au_num(fit, "slope_bytes_per_step"), 10.0 * FX_MB,
                 "least squares alone would be over the threshold");
    assert_no_leak(r, "spike");
    cJSON_Delete(r);
}

Test(analysis_leak, growth_that_stays_flat_is_not_a_leak)
{
    double y[STEPS];
    synth_rng rng = { 9 };
    for (int i = 0; i < STEPS; i++)
        y[i] = 4096.0 * FX_MB + 100.0 * FX_MB * (i < 30 ? i : 30) +
               2.0 * FX_MB * synth_gauss(&rng);
    cJSON *r = report_of("plateau.prof", y, NULL);
    const cJSON *fit = au_get(series_of(r, "gpu.allocated"), "fit");
    cr_assert_gt(au_num(fit, "slope_bytes_per_step"), 10.0 * FX_MB,
                 "least squares over the window sees growth");
    cr_assert_lt(au_num(fit, "late_slope_bytes_per_step"), 1.0 * FX_MB, "late half is flat");
    assert_no_leak(r, "growth then flat");
    cJSON_Delete(r);
}

Test(analysis_leak, noise_around_a_flat_line_is_not_a_leak)
{
    double y[STEPS];
    synth_rng rng = { 11 };
    for (int i = 0; i < STEPS; i++)
        y[i] = 4096.0 * FX_MB + 50.0 * FX_MB * synth_gauss(&rng);
    cJSON *r = report_of("noise.prof", y, NULL);
    assert_no_leak(r, "noise");
    cJSON_Delete(r);
}

Test(analysis_leak, short_series_has_no_fit)
{
    double y[12];
    for (int i = 0; i < 12; i++)
        y[i] = 1024.0 * FX_MB + 100.0 * FX_MB * i;
    char meta[600];
    const char *path = fx_path("short.prof");
    cr_assert_eq(fx_write_loop(path, fx_metadata(meta, sizeof meta, 0, 1, 0, 0), 12, NULL,
                               "gpu.allocated", y), 0);
    cJSON *r = au_report(path, NULL);
    cr_assert(cJSON_IsNull(au_get(series_of(r, "gpu.allocated"), "fit")),
              "9 points after warm-up are too few");
    cr_assert(cJSON_IsNull(au_get(series_of(r, "gpu.allocated"), "capacity_bytes")));
    cJSON_Delete(r);
}
