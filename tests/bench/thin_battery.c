/* thin_battery.c - what reading a long run in bounded memory costs the
 * verdicts (formats/rules.md §1, long runs): many generated runs, each
 * analysed whole and thinned to a subset of its steps and samples, side by
 * side. Per case: the exact figures stay exact (step outliers, mean), the
 * sketched ones close (p50, p95), the leak verdict and its slope, and prof
 * compare of two runs of one program (false alarms) and of a run against
 * one 10% slower (power), one run a side.
 *
 * The runs have STEPS steps and the thinned read keeps KEEP of them (the
 * model keeps 65,536 of a real run: far more points than here, so the
 * figures below are the worse case), with AR(1) noise on the step time, a
 * checkpoint every 500 steps, a host.rss sample at each step's end (half
 * of the cases leak, at a random rate; the others are flat or a sawtooth)
 * and a loss counter. Deterministic: fixed seeds.
 * usage: thin_battery [CASES]   (default 100) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "model/profile.h"
#include "synth.h"

#define STEPS 16000u
#define KEEP 1024
#define STEP_NS 20e6
#define PHI 0.7
#define CHECKPOINT 500u
#define MIB (1024.0 * 1024.0)

typedef struct run_shape {
    uint64_t seed;
    double slower;         /* 1.0, or 1.1 for the slower run          */
    double leak;           /* bytes a step, 0 for none                 */
    int saw;               /* a sawtooth instead of a flat series      */
} run_shape;

static int write_run(const char *path, const run_shape *r)
{
    synth *s = synth_open(path, NULL);
    if (!s)
        return -1;
    synth_rng rng = { r->seed };
    double e = 0, offset = 1.0; /* one program on a steady machine: what the within-run test assumes */
    uint64_t t = 1000000;
    for (uint32_t i = 0; i < STEPS; i++) {
        e = PHI * e + sqrt(1 - PHI * PHI) * synth_gauss(&rng);
        double d = STEP_NS * r->slower * offset * (1.0 + 0.05 * e);
        if (i % CHECKPOINT == CHECKPOINT - 1)
            d *= 6;
        uint64_t dur = (uint64_t)d;
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, dur);
        synth_counter(s, 0, "loss", t + dur / 2, 2.0 + 0.1 * synth_gauss(&rng));
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, dur);
        double mem = 2e9 + r->leak * i + 4 * MIB * synth_gauss(&rng);
        if (r->saw)
            mem += 64 * MIB * fmod((double)i, 700.0) / 700.0;
        synth_memory(s, 0, "host.rss", t + dur, (uint64_t)mem);
        t += dur;
    }
    prof_error err;
    return synth_close(s, &err);
}

/* keep: the steps and samples kept (0: MODEL_KEEP) */
static cJSON *report_of(const char *path, size_t keep)
{
    prof_tuning t = { .model_keep = keep };
    profile_model m;
    prof_error err;
    if (profile_model_load(path, &t, &m, NULL, NULL, &err) != PROF_OK)
        return NULL;
    const profile_model *one[1] = { &m };
    analysis_options o;
    analysis_options_default(&o);
    o.top = 0; /* every operation, as compare wants */
    cJSON *r = report_build(one, 1, &o, &err);
    profile_model_free(&m);
    return r;
}

static const cJSON *member(const cJSON *o, const char *path)
{
    char key[64];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

static double num(const cJSON *o, const char *path)
{
    const cJSON *v = member(o, path);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *finding(const cJSON *report, const char *rule)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, member(report, "bottlenecks"))
        if (strcmp(cJSON_GetStringValue(member(f, "rule")), rule) == 0)
            return f;
    return NULL;
}

static double leak_slope(const cJSON *report)
{
    const cJSON *m = cJSON_GetArrayItem(member(report, "memory"), 0);
    return num(m, "fit.slope_bytes_per_step");
}

/* Whether compare of a against b calls the step time significantly
 * different. */
static unsigned step_change(const cJSON *a, const cJSON *b)
{
    compare_options o;
    compare_options_default(&o);
    prof_error err;
    cJSON *cmp = compare_build(a, b, &o, &err);
    unsigned sig = cmp && cJSON_IsTrue(member(cmp, "step_time_test.significant"));
    cJSON_Delete(cmp);
    return sig;
}

typedef struct tally {
    unsigned cases, outliers_same, mean_same, p50_close, p95_close;
    unsigned leaks, leak_whole, leak_thin, leak_agree;
    double slope_err_max;
    unsigned fa_whole, fa_thin, power_whole, power_thin;
    double kept_min, kept_max;
} tally;

static double rel(double a, double b)
{
    return b != 0 ? fabs(a - b) / fabs(b) : fabs(a);
}

static void one_case(tally *t, unsigned c, const char *dir)
{
    char pa[256], pb[256], pc[256];
    snprintf(pa, sizeof pa, "%s/a.prof", dir);
    snprintf(pb, sizeof pb, "%s/b.prof", dir);
    snprintf(pc, sizeof pc, "%s/c.prof", dir);
    synth_rng rng = { 1000 + c };
    unsigned leaks = c % 2 == 0;
    run_shape a = { 3u * c + 1, 1.0, leaks ? (2 + 30 * synth_uniform(&rng)) * 1024 : 0,
                    !leaks && c % 4 == 1 };
    run_shape b = a, slow = a;
    b.seed = 3u * c + 2;
    slow.seed = 3u * c + 3;
    slow.slower = 1.1;
    if (write_run(pa, &a) || write_run(pb, &b) || write_run(pc, &slow))
        return;
    cJSON *wa = report_of(pa, 0), *ta = report_of(pa, KEEP);
    cJSON *wb = report_of(pb, 0), *tb = report_of(pb, KEEP);
    cJSON *wc = report_of(pc, 0), *tc = report_of(pc, KEEP);
    if (wa && ta && wb && tb && wc && tc) {
        t->cases++;
        double kept = num(ta, "summary.steps_kept");
        t->kept_min = t->cases == 1 ? kept : fmin(t->kept_min, kept);
        t->kept_max = fmax(t->kept_max, kept);
        t->outliers_same += num(finding(wa, "step_outliers"), "evidence.count") ==
                            num(finding(ta, "step_outliers"), "evidence.count");
        t->mean_same += rel(num(ta, "summary.step_time.mean_ns"),
                            num(wa, "summary.step_time.mean_ns")) < 1e-9;
        t->p50_close += rel(num(ta, "summary.step_time.p50_ns"),
                            num(wa, "summary.step_time.p50_ns")) <= 0.01;
        t->p95_close += rel(num(ta, "summary.step_time.p95_ns"),
                            num(wa, "summary.step_time.p95_ns")) <= 0.01;
        unsigned lw = finding(wa, "memory_leak") != NULL;
        unsigned lt = finding(ta, "memory_leak") != NULL;
        t->leaks += leaks;
        t->leak_whole += lw;
        t->leak_thin += lt;
        t->leak_agree += lw == lt;
        if (lw && lt)
            t->slope_err_max = fmax(t->slope_err_max, rel(leak_slope(ta), leak_slope(wa)));
        t->fa_whole += step_change(wa, wb);
        t->fa_thin += step_change(ta, tb);
        t->power_whole += step_change(wa, wc);
        t->power_thin += step_change(ta, tc);
    }
    cJSON_Delete(wa);
    cJSON_Delete(ta);
    cJSON_Delete(wb);
    cJSON_Delete(tb);
    cJSON_Delete(wc);
    cJSON_Delete(tc);
}

int main(int argc, char **argv)
{
    unsigned cases = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
    char dir[] = "/tmp/prof-thin-XXXXXX";
    if (!mkdtemp(dir))
        return perror("thin_battery: mkdtemp"), 1;
    tally t = { 0 };
    for (unsigned c = 0; c < cases; c++)
        one_case(&t, c, dir);
    char p[300];
    const char *names[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s.prof", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    if (t.cases == 0) {
        fputs("thin_battery: no case could be written and read\n", stderr);
        return 1;
    }
    printf("%u runs of %u steps, each read whole and keeping %u steps and samples "
           "(kept %.0f to %.0f steps)\n\n", t.cases, STEPS, (unsigned)KEEP, t.kept_min, t.kept_max);
    printf("%-44s %8s\n", "thinned against whole", "cases");
    printf("%-44s %4u/%u\n", "step_outliers count the same", t.outliers_same, t.cases);
    printf("%-44s %4u/%u\n", "mean step time the same", t.mean_same, t.cases);
    printf("%-44s %4u/%u\n", "p50 within 1%", t.p50_close, t.cases);
    printf("%-44s %4u/%u\n", "p95 within 1%", t.p95_close, t.cases);
    printf("%-44s %4u/%u  (leaks %u, whole %u, thinned %u)\n", "memory_leak verdict the same",
           t.leak_agree, t.cases, t.leaks, t.leak_whole, t.leak_thin);
    printf("%-44s %7.2f%%\n", "leak slope, largest difference", 100 * t.slope_err_max);
    printf("%-44s %4u/%u whole, %u/%u thinned\n", "compare, same program: false alarms",
           t.fa_whole, t.cases, t.fa_thin, t.cases);
    printf("%-44s %4u/%u whole, %u/%u thinned\n", "compare, 10% slower: found", t.power_whole,
           t.cases, t.power_thin, t.cases);
    int bad = t.outliers_same != t.cases || t.mean_same != t.cases;
    return bad;
}
