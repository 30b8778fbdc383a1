/* model_series.c - a long run read in bounded memory (src/model/series.c,
 * rules.md §1 "Long runs"): past the limit the model keeps a pseudo-random
 * subset of steps and samples, the same on every read, with each step's
 * closing sample; what must stay exact (counts, moments, extremes, the
 * outliers, a series' peak and last value) does; and the report of the
 * thinned model agrees with the report of the whole one. The limit is
 * lowered with the tuning's model_keep (PROF_MODEL_KEEP) so that the runs
 * stay small. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "analysis_util.h"
#include "prof.h"
#include "synth.h"
#include "model_util.h"

#define SCHEMA "formats/report.schema.json"
#define KEEP 512
#define STEPS 6000u
#define STEP_NS (10 * FX_MS)
#define EVERY 250u     /* a checkpoint step: 8x the others      */
#define LEAK 40960.0   /* bytes a step                           */

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(model_series, .fini = teardown);

typedef struct long_run {
    const char *path;
    uint64_t dur[STEPS], end[STEPS];
    double rss[STEPS], loss[STEPS];
} long_run;

/* STEPS steps with jitter, a checkpoint every EVERY steps, the runtime's
 * host.rss sample at each step's end (leaking LEAK a step), a loss counter
 * mid-step, and an incomplete tail. */
static void long_run_write(long_run *r)
{
    r->path = fx_path("long.prof");
    synth *s = synth_open(r->path, NULL);
    cr_assert_not_null(s);
    synth_rng rng = { 7 };
    uint64_t t = FX_MS;
    for (uint32_t i = 0; i < STEPS; i++) {
        uint64_t d = synth_jitter(&rng, STEP_NS, 0.05);
        if (i % EVERY == EVERY - 1)
            d *= 8;
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, d);
        r->loss[i] = 2.0 + synth_gauss(&rng);
        synth_counter(s, 0, "loss", t + d / 2, r->loss[i]);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, d);
        r->rss[i] = 1e8 + LEAK * i + 1e5 * synth_gauss(&rng);
        synth_memory(s, 0, "host.rss", t + d, (uint64_t)r->rss[i]);
        r->rss[i] = (double)(uint64_t)r->rss[i];
        r->dur[i] = d;
        r->end[i] = t + d;
        t += d;
    }
    synth_step(s, 0, STEPS, PROF_STEP_INCOMPLETE, t, FX_MS);
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

/* Loads path keeping keep steps and samples (0: MODEL_KEEP). */
static void load_keeping(const char *path, size_t keep, profile_model *m)
{
    prof_tuning t = { .model_keep = keep };
    au_load_tuned(path, &t, m);
}

/* The report of path read keeping keep steps and samples (0: MODEL_KEEP). */
static cJSON *report_keeping(const char *path, size_t keep)
{
    prof_tuning t = { .model_keep = keep };
    analysis_options o;
    analysis_options_default(&o);
    o.tuning = &t;
    return au_report(path, &o);
}

/* n steps of STEP_NS with jitter, every fifth 8 times as long (fewer than
 * a quarter: outliers, not a second mode of the run, rules.md §4.7). */
static const char *write_fifths(const char *name, uint32_t n, uint64_t seed)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_rng rng = { seed };
    uint64_t t = FX_MS;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t d = synth_jitter(&rng, STEP_NS, 0.02) * (i % 5 == 4 ? 8 : 1);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, d);
        t += d;
    }
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    return path;
}

Test(model_series, thinned_steps_and_samples)
{
    static long_run r;
    long_run_write(&r);
    profile_model m;
    load_keeping(r.path, KEEP, &m);

    cr_assert_gt(m.step_thinning, 0u);
    cr_assert_leq(m.nsteps, 512u);
    cr_assert_geq(m.nsteps, 128u, "about a half to all of the limit is kept: %zu", m.nsteps);
    for (size_t i = 1; i < m.nsteps; i++)
        cr_assert_lt(m.steps[i - 1].number, m.steps[i].number, "kept steps in number order");
    /* a kept step is the step that was written */
    for (size_t i = 0; i < m.nsteps; i++) {
        const model_step *st = &m.steps[i];
        if (st->number == STEPS)
            continue;
        cr_assert_eq(st->dur_ns, r.dur[st->number]);
    }

    /* exact over every step */
    const model_step_totals *t = &m.step_totals;
    cr_assert_eq(t->steps, STEPS + 1u);
    cr_assert_eq(t->complete, STEPS);
    cr_assert_eq(t->sampled, STEPS);
    double sum = 0, lo = (double)r.dur[0], hi = lo;
    for (size_t i = 0; i < STEPS; i++) {
        sum += (double)r.dur[i];
        lo = fmin(lo, (double)r.dur[i]);
        hi = fmax(hi, (double)r.dur[i]);
    }
    double mean = sum / STEPS, ss = 0;
    for (size_t i = 0; i < STEPS; i++)
        ss += ((double)r.dur[i] - mean) * ((double)r.dur[i] - mean);
    cr_assert_float_eq(t->complete_dur.mean, mean, 1e-6 * mean);
    cr_assert_float_eq(sqrt(t->complete_dur.m2 / (STEPS - 1)), sqrt(ss / (STEPS - 1)),
                       1e-6 * mean);
    cr_assert_eq((double)t->complete_dur.min, lo);
    cr_assert_eq((double)t->complete_dur.max, hi);

    /* the series: every sample counted, a subset kept, extremes exact */
    const model_series *rss = mu_find_series(&m, "host.rss");
    cr_assert_not_null(rss);
    cr_assert_eq(rss->total, STEPS);
    cr_assert_gt(rss->thinning, 0u);
    cr_assert_leq(rss->nsamples, 512u);
    double peak = r.rss[0];
    for (size_t i = 0; i < STEPS; i++)
        peak = fmax(peak, r.rss[i]);
    cr_assert_eq(rss->peak, peak);
    cr_assert_eq(rss->final, r.rss[STEPS - 1]);
    const model_series *loss = mu_find_series(&m, "loss");
    cr_assert_not_null(loss);
    double llo = r.loss[0];
    for (size_t i = 0; i < STEPS; i++)
        llo = fmin(llo, r.loss[i]);
    cr_assert_eq(loss->low, llo);

    /* each kept step keeps the sample taken as it closed, mapped to it */
    size_t k = 0;
    for (size_t i = 0; i < m.nsteps; i++) {
        const model_step *st = &m.steps[i];
        if (st->number == STEPS)
            continue;
        while (k < rss->nsamples && rss->samples[k].t_ns < r.end[st->number])
            k++;
        cr_assert_lt(k, rss->nsamples, "step %lu lost its sample", (unsigned long)st->number);
        cr_assert_eq(rss->samples[k].t_ns, r.end[st->number]);
        cr_assert_eq(rss->samples[k].step, (uint32_t)i);
    }
    profile_model_free(&m);
}

/* Steps closed by prof_stop among complete ones, not only at the end:
 * the complete steps' durations (count, moments, extremes, percentiles,
 * longest) are those of the complete steps alone, and all steps' of all. */
Test(model_series, incomplete_steps_among_complete_ones)
{
    const char *path = fx_path("incomplete.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_rng rng = { 11 };
    model_step_durations want[2] = { { 0 } }; /* complete, all: Welford's by hand */
    uint64_t t = FX_MS, n = 300;
    for (uint32_t i = 0; i < n; i++) {
        int incomplete = i == 40 || i == 41 || i == 170 || i == n - 1;
        uint64_t d = synth_jitter(&rng, incomplete ? 3 * STEP_NS : STEP_NS, 0.2);
        synth_step(s, 0, i, incomplete ? PROF_STEP_INCOMPLETE : PROF_STEP_SAMPLED, t, d);
        for (int k = incomplete; k < 2; k++) {
            model_step_durations *w = &want[k];
            double x = (double)d, delta = x - w->mean;
            w->n++;
            w->mean += delta / (double)w->n;
            w->m2 += delta * (x - w->mean);
            w->min = w->n == 1 || d < w->min ? d : w->min;
            w->max = d > w->max ? d : w->max;
        }
        t += d;
    }
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    profile_model m;
    load_keeping(path, 0, &m);
    const model_step_durations *got[2] = { &m.step_totals.complete_dur,
                                           &m.step_totals.all_dur };
    cr_assert_eq(m.step_totals.complete, 296);
    for (int k = 0; k < 2; k++) {
        cr_assert(got[k]->n == want[k].n && got[k]->mean == want[k].mean &&
                      got[k]->m2 == want[k].m2 && got[k]->min == want[k].min &&
                      got[k]->max == want[k].max && got[k]->sketch.count == want[k].n,
                  "%s steps", k ? "all" : "complete");
        cr_assert_eq(got[k]->sketch.max, want[k].max);
    }
    cr_assert_gt(sketch_quantile(&got[1]->sketch, 0.99), 2 * STEP_NS, "all: the long ones");
    cr_assert_lt(sketch_quantile(&got[0]->sketch, 0.99), 2 * STEP_NS, "complete: none");
    cr_assert_gt(got[1]->longest[0].dur_ns, 0);
    for (size_t i = 0; i < got[0]->nlongest; i++)
        cr_assert_lt(got[0]->longest[i].dur_ns, 2 * STEP_NS, "no incomplete step");
    profile_model_free(&m);
}

/* The same file thins the same way on every read: the subset depends on
 * the steps and samples, not on the order of reading or on the limit's
 * history. */
Test(model_series, thinning_is_repeatable)
{
    static long_run r;
    long_run_write(&r);
    profile_model a, b;
    load_keeping(r.path, KEEP, &a);
    load_keeping(r.path, KEEP, &b);
    cr_assert_eq(a.nsteps, b.nsteps);
    for (size_t i = 0; i < a.nsteps; i++)
        cr_assert_eq(a.steps[i].number, b.steps[i].number);
    profile_model_free(&a);
    profile_model_free(&b);

    /* a lower limit keeps a subset of what a higher one keeps */
    load_keeping(r.path, 1024, &a);
    load_keeping(r.path, 64, &b);
    cr_assert_lt(b.nsteps, a.nsteps);
    size_t j = 0;
    for (size_t i = 0; i < b.nsteps; i++) {
        while (j < a.nsteps && a.steps[j].number < b.steps[i].number)
            j++;
        cr_assert(j < a.nsteps && a.steps[j].number == b.steps[i].number,
                  "step %lu kept at 64 but not at 1024", (unsigned long)b.steps[i].number);
    }
    profile_model_free(&a);
    profile_model_free(&b);
}

/* Below the limit nothing is thinned and nothing says so. */
Test(model_series, short_run_untouched)
{
    static long_run r;
    long_run_write(&r);
    profile_model m;
    load_keeping(r.path, 8192, &m);
    cr_assert_eq(m.step_thinning, 0u);
    cr_assert_eq(m.nsteps, STEPS + 1u);
    const model_series *rss = mu_find_series(&m, "host.rss");
    cr_assert_eq(rss->thinning, 0u);
    cr_assert_eq(rss->nsamples, STEPS);
    profile_model_free(&m);
    cJSON *rep = au_report(r.path, NULL);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(au_get(rep, "summary"), "steps_kept"));
    cJSON_Delete(rep);
}

/* What the report of the thinned model says against the whole one. */
Test(model_series, report_agrees_with_whole)
{
    static long_run r;
    long_run_write(&r);
    cJSON *whole = report_keeping(r.path, 0);
    cJSON *thin = report_keeping(r.path, KEEP);
    au_assert_valid(thin, SCHEMA, "report");

    const cJSON *sw = au_get(whole, "summary"), *st = au_get(thin, "summary");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(sw, "steps_kept"));
    cr_assert_leq(au_num(st, "steps_kept"), 512.0);
    const char *exact[] = { "steps", "incomplete_steps", "sampled_steps", "complete_steps" };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        cr_assert_eq(au_num(st, exact[i]), au_num(sw, exact[i]), "%s", exact[i]);
    const cJSON *tw = au_get(sw, "step_time"), *tt = au_get(st, "step_time");
    const char *moments[] = { "mean_ns", "stddev_ns", "min_ns", "max_ns" };
    for (size_t i = 0; i < 4; i++)
        cr_assert_float_eq(au_num(tt, moments[i]), au_num(tw, moments[i]),
                           1e-6 * au_num(tw, moments[i]), "%s", moments[i]);
    const char *quantiles[] = { "p50_ns", "p95_ns" };
    for (size_t i = 0; i < 2; i++)
        cr_assert_float_eq(au_num(tt, quantiles[i]), au_num(tw, quantiles[i]),
                           0.01 * au_num(tw, quantiles[i]), "%s", quantiles[i]);
    /* the steady mean over the kept steps: a sample of a few hundred */
    cr_assert_float_eq(au_num(au_get(tt, "steady"), "mean_ns"),
                       au_num(au_get(tw, "steady"), "mean_ns"),
                       0.05 * au_num(au_get(tw, "steady"), "mean_ns"));

    /* the outliers are the checkpoints, exactly, in both */
    const cJSON *ow = au_finding(whole, "step_outliers", NULL);
    const cJSON *ot = au_finding(thin, "step_outliers", NULL);
    cr_assert_not_null(ow);
    cr_assert_not_null(ot);
    const cJSON *ew = au_get(ow, "evidence"), *et = au_get(ot, "evidence");
    cr_assert_eq(au_num(ew, "count"), (double)(STEPS / EVERY));
    cr_assert_eq(au_num(et, "count"), au_num(ew, "count"));
    cr_assert_eq(au_num(et, "max_ns"), au_num(ew, "max_ns"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(et, "estimated"));
    char *lw = cJSON_PrintUnformatted(au_get(ew, "steps"));
    char *lt = cJSON_PrintUnformatted(au_get(et, "steps"));
    cr_assert_str_eq(lt, lw);
    free(lw);
    free(lt);
    cr_assert_float_eq(au_num(et, "excess_share"), au_num(ew, "excess_share"), 0.01);

    /* the leak, found in both, its slope per step within a few percent */
    const cJSON *lkw = au_finding(whole, "memory_leak", "host.rss");
    const cJSON *lkt = au_finding(thin, "memory_leak", "host.rss");
    cr_assert_not_null(lkw);
    cr_assert_not_null(lkt, "the thinned model misses the leak");
    const cJSON *mt = cJSON_GetArrayItem(au_get(thin, "memory"), 0);
    cr_assert_eq(au_num(mt, "points_total"), (double)STEPS);
    cr_assert_leq(au_num(mt, "samples_kept"), 512.0);
    const cJSON *fit = au_get(mt, "fit");
    cr_assert_float_eq(au_num(fit, "slope_bytes_per_step"), LEAK, 0.05 * LEAK);
    cJSON_Delete(whole);
    cJSON_Delete(thin);
}

/* A run the recorder wrote: the host.rss sample it takes as it closes a
 * step has that step's end for time, so every kept step keeps its sample
 * and the leak rule's per-step points survive thinning. */
Test(model_series, recorded_steps_keep_their_samples)
{
    const char *path = fx_path("recorded.prof");
    unsetenv("PROF_MEMORY_INTERVAL_MS"); /* samples at step ends only */
    prof_config cfg = { 0 };
    cfg.output = path;
    cr_assert_eq(prof_start(&cfg), 0);
    for (unsigned i = 0; i < 3000; i++) {
        prof_region_begin("work");
        prof_memory("gpu.allocated", 1000000u + 64u * i);
        prof_region_end();
        prof_step();
    }
    cr_assert_eq(prof_stop(), 0);

    profile_model m;
    load_keeping(path, 256, &m);
    cr_assert_gt(m.step_thinning, 0u);
    const model_series *rss = mu_find_series(&m, "host.rss");
    cr_assert_not_null(rss, "the recorder samples host.rss at every step");
    cr_assert_gt(rss->thinning, 0u);
    size_t complete = 0, with_point = 0;
    for (size_t i = 0; i < m.nsteps; i++) {
        if (m.steps[i].flags & PROF_STEP_INCOMPLETE)
            continue;
        complete++;
        for (size_t k = 0; k < rss->nsamples; k++)
            if (rss->samples[k].step == (uint32_t)i &&
                rss->samples[k].t_ns == m.steps[i].start_ns + m.steps[i].dur_ns) {
                with_point++;
                break;
            }
    }
    cr_assert_gt(complete, 100u);
    cr_assert_eq(with_point, complete, "%zu of %zu kept steps kept their sample", with_point,
                 complete);
    profile_model_free(&m);
}

/* The step_outliers finding of a thinned read against the whole one. */
static void outliers_agree(const char *path, size_t keep)
{
    cJSON *whole = report_keeping(path, 0);
    cJSON *thin = report_keeping(path, keep);
    const cJSON *fw = au_finding(whole, "step_outliers", NULL);
    const cJSON *ft = au_finding(thin, "step_outliers", NULL);
    cr_assert_not_null(fw);
    cr_assert_not_null(ft, "the thinned read lost the outliers");
    const cJSON *ew = au_get(fw, "evidence"), *et = au_get(ft, "evidence");
    cr_assert_eq(au_num(et, "count"), au_num(ew, "count"));
    cr_assert_eq(au_num(et, "max_ns"), au_num(ew, "max_ns"));
    char *lw = cJSON_PrintUnformatted(au_get(ew, "steps"));
    char *lt = cJSON_PrintUnformatted(au_get(et, "steps"));
    cr_assert_str_eq(lt, lw);
    free(lw);
    free(lt);
    /* a kept step is flagged in the steps list exactly when the finding
     * has it (which names the first 20) */
    const cJSON *st, *n, *list = au_get(et, "steps");
    int nlist = cJSON_GetArraySize(list);
    double upto = nlist < 20 ? INFINITY : cJSON_GetArrayItem(list, 19)->valuedouble;
    cJSON_ArrayForEach(st, au_get(thin, "steps")) {
        int listed = 0;
        cJSON_ArrayForEach(n, list)
            listed |= n->valuedouble == au_num(st, "number");
        if (au_num(st, "number") <= upto)
            cr_assert_eq(cJSON_IsTrue(au_get(st, "outlier")), listed, "step %.0f",
                         au_num(st, "number"));
    }
    cJSON_Delete(whole);
    cJSON_Delete(thin);
}

/* The first step, which the test leaves out, thinned away or not: the
 * outliers are those of the whole read. */
Test(model_series, first_step_left_out_either_way)
{
    const char *path = write_fifths("fifths.prof", 3000, 11);
    outliers_agree(path, 256);
    outliers_agree(path, 100);
}

/* Two steps numbered 0: the earlier one is the first step, as in step
 * order (number, then start), thinned or not. */
Test(model_series, first_of_equal_numbers)
{
    const char *path = fx_path("twice.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_rng rng = { 5 };
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, FX_MS, 5 * FX_MS);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 6 * FX_MS, 200 * FX_MS);
    uint64_t t = 206 * FX_MS;
    for (uint32_t i = 1; i < 6000; i++) {
        uint64_t d = synth_jitter(&rng, STEP_NS, 0.02);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, d);
        t += d;
    }
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    outliers_agree(path, 16);
}

/* A NaN counter value, first in the file but late in time, is in no
 * minimum or maximum, thinned or not. */
Test(model_series, nan_counter_values)
{
    const char *path = fx_path("nan.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_counter(s, 0, "loss", 1000 * FX_MS, NAN);
    for (uint32_t i = 1; i <= 100; i++)
        synth_counter(s, 0, "loss", i * FX_MS, (double)i);
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    const size_t keep[] = { 0, 16 };
    for (int k = 0; k < 2; k++) {
        cJSON *r = report_keeping(path, keep[k]);
        const cJSON *c = cJSON_GetArrayItem(au_get(r, "counters"), 0);
        cr_assert_eq(au_num(c, "min"), 1.0, "keeping %zu (0: all)", keep[k]);
        cr_assert_eq(au_num(c, "max"), 100.0, "keeping %zu (0: all)", keep[k]);
        cJSON_Delete(r);
    }
}

/* More outliers than the longest steps kept apart: the kept steps'
 * outliers estimate their number, and say so; the worst is the run's. */
Test(model_series, many_outliers_estimated)
{
    const char *path = write_fifths("many.prof", 25000, 3);
    cJSON *whole = report_keeping(path, 0);
    cJSON *thin = report_keeping(path, 1024);
    const cJSON *ew = au_get(au_finding(whole, "step_outliers", NULL), "evidence");
    const cJSON *et = au_get(au_finding(thin, "step_outliers", NULL), "evidence");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(ew, "estimated"));
    cr_assert(cJSON_IsTrue(au_get(et, "estimated")));
    cr_assert_eq(au_num(ew, "count"), 5000.0);
    cr_assert_float_eq(au_num(et, "count"), 5000.0, 0.25 * 5000.0);
    cr_assert_eq(au_num(et, "max_ns"), au_num(ew, "max_ns"));
    cr_assert(strncmp(au_str(au_finding(thin, "step_outliers", NULL), "title"), "about ", 6) == 0);
    cJSON_Delete(whole);
    cJSON_Delete(thin);
}
