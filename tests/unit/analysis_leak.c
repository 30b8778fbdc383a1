/* analysis_leak.c - the memory_leak rule (formats/rules.md §4.2): on
 * fixture profiles of 100 steps, a 12 MiB/step leak is found with its slope
 * within 5%, its capacity and projection; a sawtooth (short and long teeth),
 * a one-off spike, growth that then stays flat and noise around a flat line
 * are not flagged; the per-step series takes the last sample of each step
 * and the report lists every sample. Then the battery: every class of
 * tests/support/leak_battery.h over many seeds, with its misses, false
 * alarms and slope errors; and what the battery cannot show by counting -
 * the onset of a late leak, the slow leak of a real PyTorch run, timer
 * samples with and without steps, the options. */
#include <stdlib.h>

#include "analysis_util.h"
#include "leak_battery_eval.h"

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

Test(analysis_leak, twelve_mib_per_step_is_found_with_slope_and_projection)
{
    /* two samples per step: a mid-step one 300 MiB higher (a transient) and
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
    cr_assert_eq(cJSON_GetArraySize(au_get(ser, "points")), 2 * STEPS, "every sample");
    const cJSON *p10 = cJSON_GetArrayItem(au_get(ser, "points"), 10);
    const cJSON *p11 = cJSON_GetArrayItem(au_get(ser, "points"), 11);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(p10, "step"), "the transient: no step");
    cr_assert_eq(au_num(p11, "step"), 5, "the step's value");
    cr_assert_eq(au_num(p11, "t_ns"), (double)(FX_MS + 5 * 100 * FX_MS + 99 * FX_MS),
                 "the last sample of the step");
    cr_assert_eq(au_num(au_get(ser, "fit"), "points"), STEPS - 10, "fitted per step");

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
    cr_assert(strstr(au_str(f, "title"), "MiB/step") != NULL, "%s", au_str(f, "title"));
    cr_assert(strstr(au_str(f, "recommendation"), "gpu.allocated") != NULL);
    cr_assert(strstr(au_str(f, "recommendation"), "MB") == NULL, "MiB everywhere");
    cr_assert_str_eq(au_str(e, "axis"), "step");
    cr_assert_eq(au_num(e, "onset_step"), 10, "growth from the end of the warm-up");
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
    cr_assert_null(au_finding(r, "memory_leak", NULL), "12 MiB/step under a 20 MiB floor");
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
    cr_assert_gt(au_num(fit, "slope_bytes_per_step"), 10.0 * FX_MB, "a steep slope");
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
                 "least squares alone: over the former 10 MiB/step default");
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

/* ---- the battery -------------------------------------------------------------- */

/* Seeds per class: enough that one miss or false alarm in fifty shows;
 * `make bench` (tests/bench/leak_battery.c) runs 200 and prints the table. */
#define BATTERY_SEEDS 50

static void battery(lb_class c)
{
    lb_tally t = lb_run(c, BATTERY_SEEDS, fx_path("battery.prof"));
    cr_assert_eq(t.errors, 0, "%s: cases that could not be analysed", lb_name(c));
    cr_assert_eq(t.runs, BATTERY_SEEDS);
    if (lb_is_leak(c)) {
        cr_assert_leq(t.misses, BATTERY_SEEDS / 50, "%s: %u of %u missed", lb_name(c),
                     t.misses, t.runs);
        cr_assert_eq(t.slope_bad, 0, "%s: %u slopes off by more than %.0f%% (worst %.1f%%)",
                     lb_name(c), t.slope_bad, 100 * t.tolerance, 100 * t.max_slope_err);
    } else {
        cr_assert_eq(t.false_alarms, 0, "%s: %u of %u flagged", lb_name(c), t.false_alarms,
                     t.runs);
    }
}

Test(analysis_leak, battery_steady) { battery(LB_STEADY); }
Test(analysis_leak, battery_late_onset) { battery(LB_LATE); }
Test(analysis_leak, battery_slow) { battery(LB_SLOW); }
Test(analysis_leak, battery_doubling) { battery(LB_DOUBLING); }
Test(analysis_leak, battery_timer_without_steps) { battery(LB_TIMER); }
Test(analysis_leak, battery_timer_with_steps) { battery(LB_TIMER_STEPS); }
Test(analysis_leak, battery_timer_epochs) { battery(LB_TIMER_EPOCHS); }
Test(analysis_leak, battery_timer_rate_wanders) { battery(LB_TIMER_WANDER); }
Test(analysis_leak, battery_warmup) { battery(LB_WARMUP); }
Test(analysis_leak, battery_sawtooth_few_teeth) { battery(LB_SAW_FEW); }
Test(analysis_leak, battery_sawtooth_many_teeth) { battery(LB_SAW_MANY); }
Test(analysis_leak, battery_spike) { battery(LB_SPIKE); }
Test(analysis_leak, battery_jump) { battery(LB_JUMP); }
Test(analysis_leak, battery_noise) { battery(LB_NOISE); }
Test(analysis_leak, battery_timer_noise) { battery(LB_TIMER_NOISE); }
Test(analysis_leak, battery_random_walk) { battery(LB_WALK); }
Test(analysis_leak, battery_decline) { battery(LB_DECLINE); }
Test(analysis_leak, battery_release) { battery(LB_RELEASE); }
Test(analysis_leak, battery_chunked) { battery(LB_CHUNKED); }
Test(analysis_leak, battery_chunked_flat) { battery(LB_CHUNKED_FLAT); }
Test(analysis_leak, battery_timer_irregular) { battery(LB_TIMER_IRREGULAR); }
Test(analysis_leak, battery_timer_bursts) { battery(LB_TIMER_BURSTY); }
Test(analysis_leak, battery_timer_descheduled) { battery(LB_TIMER_DESCHEDULED); }
Test(analysis_leak, battery_timer_descheduled_flat) { battery(LB_TIMER_DESCHEDULED_FLAT); }

/* ---- what counting does not show ----------------------------------------------- */

/* n steps of gpu.allocated (or host.rss with host memory) from y(i). */
static cJSON *series_report(const char *name, const char *series, size_t n,
                            double (*y)(size_t i, size_t n), const analysis_options *o)
{
    char meta[600];
    const char *path = fx_path(name);
    double *v = malloc(n * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = y(i, n);
    fx_metadata(meta, sizeof meta, 0, 1, 80.0 * 1024 * FX_MB, 64.0 * 1024 * FX_MB);
    cr_assert_eq(fx_write_loop(path, meta, n, NULL, series, v), 0);
    free(v);
    return au_report(path, o);
}

/* 4 GiB, flat for 600 of 1000 steps, then 3 MiB/step, with a little noise:
 * over the whole run the slope is diluted and the floor of the last half
 * is where it started. */
static double late_leak(size_t i, size_t n)
{
    (void)n;
    synth_rng r = { i + 1 };
    return 4096.0 * FX_MB + 3.0 * FX_MB * (i > 600 ? (double)(i - 600) : 0.0) +
           FX_MB * synth_gauss(&r);
}

Test(analysis_leak, late_onset_is_found_at_its_step)
{
    cJSON *r = series_report("late.prof", "gpu.allocated", 1000, late_leak, NULL);
    const cJSON *f = au_finding(r, "memory_leak", "gpu.allocated");
    cr_assert_not_null(f, "the late leak is flagged");
    const cJSON *e = au_get(f, "evidence");
    double onset = au_num(e, "onset_step");
    cr_assert(onset >= 590 && onset <= 615, "onset at step %g, want about 600", onset);
    cr_assert_eq(au_num(e, "first_step"), 100, "the warm-up ends at step 100");
    au_near(au_num(e, "slope_bytes_per_step"), 3.0 * FX_MB, 0.05, "slope after the onset");
    cr_assert(strstr(au_str(f, "title"), "from step") != NULL, "%s", au_str(f, "title"));
    cr_assert(strstr(au_str(f, "recommendation"), "What changed at step") != NULL);
    const cJSON *fit = au_get(series_of(r, "gpu.allocated"), "fit");
    cr_assert_eq(au_num(fit, "onset_step"), onset);
    cr_assert(cJSON_IsTrue(au_get(fit, "leak")));
    cJSON_Delete(r);
}

/* What a Python leak did to a real run: about 0.2 MiB/step on ~500 MiB of
 * RSS, which the former 10 MiB/step default did not flag. */
static double slow_leak(size_t i, size_t n)
{
    (void)n;
    synth_rng r = { 3 * i + 7 };
    return 500.0 * FX_MB + 0.2 * FX_MB * (double)i + 0.3 * FX_MB * synth_gauss(&r);
}

Test(analysis_leak, slow_leak_is_flagged_by_consequence)
{
    cJSON *r = series_report("slow.prof", "host.rss", 400, slow_leak, NULL);
    const cJSON *f = au_finding(r, "memory_leak", "host.rss");
    cr_assert_not_null(f, "0.2 MiB/step on 500 MiB over 400 steps is a leak");
    const cJSON *e = au_get(f, "evidence");
    au_near(au_num(e, "slope_bytes_per_step"), 0.2 * FX_MB, 0.05, "slope");
    cr_assert_eq(au_num(e, "horizon"), 4000, "10 run lengths of 400 steps");
    cr_assert_gt(au_num(e, "projected_growth_bytes"), 0.5 * 500 * FX_MB, "half its level");
    cr_assert_str_eq(au_str(f, "severity"), "medium", "64 GiB of host memory is far");
    cr_assert(strstr(au_str(f, "title"), "grows 0.2 MiB/step") != NULL, "%s",
              au_str(f, "title"));
    cJSON_Delete(r);

    analysis_options o;
    analysis_options_default(&o);
    o.leak_threshold_mb = 10; /* the former default, now a floor one can set */
    r = series_report("slow10.prof", "host.rss", 400, slow_leak, &o);
    cr_assert_null(au_finding(r, "memory_leak", NULL), "under a 10 MiB/step floor");
    cJSON_Delete(r);
    analysis_options_default(&o);
    o.leak_horizon = 2; /* 800 steps: 160 MiB, under half of 500 */
    r = series_report("slow2.prof", "host.rss", 400, slow_leak, &o);
    cr_assert_null(au_finding(r, "memory_leak", NULL), "not within a shorter horizon");
    cJSON_Delete(r);
}

/* The recorded series of leak_battery.h: cut off at GSL's default of 100
 * reweightings, its robust fit counted as failed and the leak went
 * unreported. */
Test(analysis_leak, pytorch_leak_whose_robust_fit_converges_slowly_is_found)
{
    char meta[600];
    const char *path = fx_path("torch_leak.prof");
    fx_metadata(meta, sizeof meta, 0, 1, 0, 24.0 * 1024 * FX_MB);
    cr_assert_eq(fx_write_loop(path, meta, LB_TORCH_LEAK_STEPS, NULL, "host.rss",
                               lb_torch_leak_rss), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *f = au_finding(r, "memory_leak", "host.rss");
    cr_assert_not_null(f, "14 MiB a step kept alive is a leak");
    const cJSON *e = au_get(f, "evidence");
    au_near(au_num(e, "slope_bytes_per_step"), 13.5 * FX_MB, 0.05, "slope");
    au_near(au_num(e, "robust_slope_bytes_per_step"), 13.9 * FX_MB, 0.05, "robust slope");
    cJSON_Delete(r);
}

/* A steady drift of 4 KiB a step on 1 GiB: significant over 2000 steps,
 * but 80 MiB over twenty thousand, 8% of its level. */
static double drift(size_t i, size_t n)
{
    (void)n;
    synth_rng r = { i + 11 };
    return 1024.0 * FX_MB + 4096.0 * (double)i + 0.01 * FX_MB * synth_gauss(&r);
}

static double tiny_growth(size_t i, size_t n)
{
    (void)n;
    return 4.0 * FX_MB + 2048.0 * (double)i; /* doubles a tiny series: 4 MiB in 2000 steps */
}

Test(analysis_leak, negligible_drift_is_not_a_leak)
{
    cJSON *r = series_report("drift.prof", "host.rss", 2000, drift, NULL);
    const cJSON *fit = au_get(series_of(r, "host.rss"), "fit");
    cr_assert_lt(au_num(fit, "p_value"), 0.01, "significant");
    cr_assert_null(au_finding(r, "memory_leak", NULL), "but it would add 8%% of its level");
    cJSON_Delete(r);
    r = series_report("tiny.prof", "gpu.allocated", 2000, tiny_growth, NULL);
    cr_assert_lt(au_num(au_get(series_of(r, "gpu.allocated"), "fit"), "projected_growth_bytes"),
                 64.0 * FX_MB);
    cr_assert_null(au_finding(r, "memory_leak", NULL), "under 64 MiB over the horizon");
    cJSON_Delete(r);
}

/* host.rss on a timer every 50 ms for 30 s without a step: 2 MiB/s from
 * 800 MiB, on a host of 1 GiB. */
static const char *write_timer(const char *name)
{
    char meta[600];
    const char *path = fx_path(name);
    synth *s = synth_open(path, fx_metadata(meta, sizeof meta, 0, 1, 0, 1024.0 * FX_MB));
    synth_rng rng = { 5 };
    for (uint64_t t = FX_MS; t <= 30000 * FX_MS; t += 50 * FX_MS) {
        double y = 800.0 * FX_MB + 2.0 * FX_MB * (double)(t - FX_MS) / 1e9 +
                   0.2 * FX_MB * synth_gauss(&rng);
        synth_memory(s, 0, "host.rss", t, (uint64_t)y);
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

Test(analysis_leak, timer_samples_without_steps_are_fitted_over_time)
{
    cJSON *r = au_report(write_timer("timer.prof"), NULL);
    const cJSON *ser = series_of(r, "host.rss");
    cr_assert_eq(au_num(ser, "points_total"), 600, "every sample");
    cr_assert_eq(cJSON_GetArraySize(au_get(ser, "points")), 600, "drawn");
    const cJSON *fit = au_get(ser, "fit");
    cr_assert_str_eq(au_str(fit, "axis"), "time");
    au_near(au_num(fit, "slope_bytes_per_s"), 2.0 * FX_MB, 0.05, "bytes per second");
    cr_assert(cJSON_IsNull(au_get(fit, "slope_bytes_per_step")), "no steps, no per-step slope");
    cr_assert_eq(au_num(fit, "horizon"), 10 * 29.95, "10 run lengths, in seconds");
    const cJSON *f = au_finding(r, "memory_leak", "host.rss");
    cr_assert_not_null(f);
    cr_assert(strstr(au_str(f, "title"), "MiB/s") != NULL, "%s", au_str(f, "title"));
    cr_assert_str_eq(au_str(f, "severity"), "high", "1 GiB is reached within the horizon");
    /* (1024 - 800) MiB at 2 MiB/s from 1 ms: about 112 s */
    double oom = au_num(ser, "projected_oom_t_ns") / 1e9;
    cr_assert(oom > 105 && oom < 120, "runs out at %g s", oom);
    cr_assert(cJSON_IsNull(au_get(ser, "projected_oom_step")));
    cJSON_Delete(r);
}

Test(analysis_leak, timer_samples_between_steps_are_drawn_not_fitted)
{
    /* steps of 100 ms, a sample every 10 ms 500 MiB above the step's end
     * value (activations), and the end-of-step sample that grows 5 MiB/step */
    char meta[600];
    const char *path = fx_path("timersteps.prof");
    synth *s = synth_open(path, fx_metadata(meta, sizeof meta, 0, 1, 8192.0 * FX_MB, 0));
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < STEPS; i++) {
        double end = 2048.0 * FX_MB + 5.0 * FX_MB * (double)(i + 1);
        for (uint64_t k = 1; k < 10; k++)
            synth_memory(s, 0, "gpu.allocated", t + k * 10 * FX_MS,
                         (uint64_t)(end + 500.0 * FX_MB));
        synth_memory(s, 0, "gpu.allocated", t + 100 * FX_MS, (uint64_t)end);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *ser = series_of(r, "gpu.allocated"), *p;
    cr_assert_eq(cJSON_GetArraySize(au_get(ser, "points")), 10 * STEPS, "every sample");
    int with_step = 0;
    cJSON_ArrayForEach(p, au_get(ser, "points"))
        with_step += cJSON_GetObjectItemCaseSensitive(p, "step") != NULL;
    cr_assert_eq(with_step, STEPS, "one per step carries its step");
    const cJSON *fit = au_get(ser, "fit");
    cr_assert_str_eq(au_str(fit, "axis"), "step");
    au_near(au_num(fit, "slope_bytes_per_step"), 5.0 * FX_MB, 0.001, "the steps' ends");
    cr_assert_not_null(au_finding(r, "memory_leak", "gpu.allocated"));
    cJSON_Delete(r);

    analysis_options o;
    analysis_options_default(&o);
    o.max_points = 100; /* half for the steps' values, half for the rest */
    r = au_report(path, &o);
    ser = series_of(r, "gpu.allocated");
    with_step = 0;
    cJSON_ArrayForEach(p, au_get(ser, "points"))
        with_step += cJSON_GetObjectItemCaseSensitive(p, "step") != NULL;
    cr_assert_leq(cJSON_GetArraySize(au_get(ser, "points")), 100);
    cr_assert_geq(with_step, 40, "the chart over steps keeps its points: %d", with_step);
    cJSON_Delete(r);
}

/* A run that will be killed outranks one that is slow: a leak that reaches
 * the device's memory comes first, before a hot operation that takes 60%
 * of the time (rules.md §1). */
Test(analysis_leak, a_leak_that_will_kill_the_run_is_listed_first)
{
    char meta[600];
    const char *path = fx_path("fatal.prof");
    fx_metadata(meta, sizeof meta, 0, 1, 8192.0 * FX_MB, 0);
    synth *s = synth_open(path, meta);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < STEPS; i++) {
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 60 * FX_MS);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, t + 60 * FX_MS, 40 * FX_MS);
        synth_memory(s, 0, "gpu.allocated", t + 99 * FX_MS,
                     (uint64_t)(4096.0 * FX_MB + 24.0 * FX_MB * (double)i));
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 100 * FX_MS);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    const cJSON *first = cJSON_GetArrayItem(au_get(r, "bottlenecks"), 0);
    const cJSON *hot = au_finding(r, "hot_operation", "forward");
    cr_assert_not_null(hot);
    cr_assert_str_eq(au_str(hot, "severity"), "high");
    cr_assert_str_eq(au_str(first, "rule"), "memory_leak");
    cr_assert_str_eq(au_str(first, "severity"), "high");
    cr_assert_lt(au_num(first, "impact_share"), au_num(hot, "impact_share"));
    cJSON_Delete(r);
}
