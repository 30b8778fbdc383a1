/* compare_aa.c - how often `prof compare` is wrong (formats/rules.md §6.3):
 * over many synthetic pairs of sides whose runs share one program, it
 * counts the false positives (a significant change where there is none, a
 * failed --fail-on-regression 10) and the power to see a real change.
 *
 * Each run has STEPS steps of BASE_NS with AR(1) noise (phi = 0.7, each
 * step's marginal deviation 5% of the step time) times a run-level offset
 * (standard deviation 3%: the variation between whole runs of the same
 * program on a shared machine). Some shared machines are worse: a whole
 * process runs at one of two speeds, so the two-speed cases make a third of
 * the runs SLOW_MODE times slower (as measured over 31 runs of
 * tests/python/cnn.py, rules.md section 6.3). The runs become analyze
 * reports holding what compare reads (the steady step time and its batch
 * means, computed by the analysis' own steady_batch_means), and
 * compare_build_sides judges them. Deterministic: a fixed seed.
 *
 * The second table is of the operations, tested together: each run also
 * has OPS operations whose steady means follow the run's speed, each with
 * a jitter of its own between runs as measured on 61 runs of cnn.py (0.8%
 * to 10% after the run's speed is taken out), and BIMODAL of them draw one
 * of two speeds per process, BIMODAL_MODE apart (cnn.py's ReLU: 65 or 123
 * us a call, a coin toss per process). It counts the comparisons of
 * identical sides where some operation has p < alpha (significant when
 * each operation was held to alpha, as before version 3 of the comparison)
 * and where some operation is significant (held together to a false
 * discovery rate of alpha, weighted by share of the time, each tested
 * against its runs' speed: version 4), and how often one operation made 30%
 * slower (op09, 0.5% of the time) is found either way. The operations draw from their own generator, so the
 * step-time figures of the first table do not depend on them.
 *
 * usage: compare_aa [PAIRS]   (default 2000; at least 1000 for the figures
 * of the closing note) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/stats.h"

#define STEPS 300
#define BASE_NS 20e6
#define PHI 0.7
#define STEP_SD 0.05
#define RUN_SD 0.03
#define RUNS_MAX 5
#define SLOW_MODE 1.5
#define SLOW_SHARE (1.0 / 3.0)
#define TWO_SPEEDS (-1.0) /* run_sd of the two-speed machine */

#define OPS 28
#define BIMODAL 3
#define BIMODAL_MODE 1.6
#define OP_BATCHES 32
#define OP_BATCH_SD 0.05
#define SLOW_OP 9 /* made slower in the power cases; its jitter is 5% */

/* Each operation's jitter between runs after the run's speed (cnn.py's,
 * largest first); the last BIMODAL are the two-speed ones. */
static const double op_jitter[OPS] = {
    0.009, 0.008, 0.009, 0.014, 0.008, 0.020, 0.028, 0.028, 0.055, 0.050,
    0.018, 0.072, 0.060, 0.020, 0.035, 0.045, 0.077, 0.065, 0.038, 0.087,
    0.094, 0.079, 0.053, 0.062, 0.102, 0.05,  0.05,  0.05,
};

static uint64_t rng = 0x9E3779B97F4A7C15ull, op_rng = 0xD1B54A32D192ED03ull;

static double uniform_from(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
}

static double normal_from(uint64_t *state)
{
    return sqrt(-2.0 * log(uniform_from(state))) * cos(6.283185307179586 * uniform_from(state));
}

static double uniform(void)
{
    return uniform_from(&rng);
}

static double normal(void)
{
    return normal_from(&rng);
}

/* Operation i of a run whose speed is offset, op_scale times slower:
 * what compare reads of it (a name, calls, its totals and the steady mean
 * with batch means). */
static void add_op(cJSON *ops, size_t i, double offset, double op_scale)
{
    char name[16];
    double mean = 1e6 / (double)(i + 1) * offset * op_scale *
                  exp(op_jitter[i] * normal_from(&op_rng));
    if (i >= OPS - BIMODAL && uniform_from(&op_rng) < 0.5)
        mean *= BIMODAL_MODE;
    snprintf(name, sizeof name, "op%02zu", i);
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "name", name);
    cJSON_AddStringToObject(op, "kind", "compute");
    cJSON_AddNumberToObject(op, "calls", STEPS);
    cJSON_AddNumberToObject(op, "incl_ns", mean * STEPS);
    cJSON_AddNumberToObject(op, "self_ns", mean * STEPS);
    cJSON_AddNumberToObject(op, "mean_ns", mean);
    cJSON_AddNumberToObject(op, "stddev_ns", mean * OP_BATCH_SD);
    cJSON_AddNumberToObject(op, "incl_share", mean / BASE_NS);
    cJSON *st = cJSON_AddObjectToObject(op, "steady"), *bm = cJSON_AddArrayToObject(st, "batch_means_ns");
    double sum = 0;
    for (size_t b = 0; b < OP_BATCHES; b++) {
        double v = mean * (1.0 + OP_BATCH_SD * normal_from(&op_rng));
        sum += v;
        cJSON_AddItemToArray(bm, cJSON_CreateNumber(v));
    }
    cJSON_AddNumberToObject(st, "mean_ns", sum / OP_BATCHES);
    cJSON_AddItemToArray(ops, op);
}

/* A whole run's speed: 1 + run_sd * N(0, 1), on a machine of two speeds
 * SLOW_MODE times that for SLOW_SHARE of the runs (run_sd < 0). */
static double run_offset(double run_sd)
{
    if (run_sd >= 0)
        return 1.0 + run_sd * normal();
    double mode = uniform() < SLOW_SHARE ? SLOW_MODE : 1.0;
    return mode * (1.0 + RUN_SD * normal());
}

/* One run's analyze report, as far as compare reads it: summary.steps,
 * summary.step_time.steady and, with_ops, OPS operations (SLOW_OP of them
 * op_scale times slower). */
static cJSON *run_report(double scale, double run_sd, int with_ops, double op_scale)
{
    double dur[STEPS], e = normal() * STEP_SD, offset = run_offset(run_sd);
    for (size_t i = 0; i < STEPS; i++) {
        e = PHI * e + sqrt(1.0 - PHI * PHI) * STEP_SD * normal();
        dur[i] = BASE_NS * scale * offset * (1.0 + e);
    }
    size_t w = stats_warmup(STEPS), n = STEPS - w;
    double means[STEADY_BATCHES], sum = 0;
    for (size_t i = w; i < STEPS; i++)
        sum += dur[i];
    size_t nb = steady_batch_means(dur + w, n, means);
    cJSON *r = cJSON_CreateObject(), *s = cJSON_AddObjectToObject(r, "summary");
    cJSON_AddNumberToObject(s, "steps", STEPS);
    cJSON_AddNumberToObject(s, "complete_steps", STEPS);
    cJSON *t = cJSON_AddObjectToObject(s, "step_time");
    cJSON_AddNumberToObject(t, "mean_ns", sum / (double)n);
    cJSON *st = cJSON_AddObjectToObject(t, "steady");
    cJSON_AddNumberToObject(st, "mean_ns", sum / (double)n);
    cJSON *bm = cJSON_AddArrayToObject(st, "batch_means_ns");
    for (size_t i = 0; i < nb; i++)
        cJSON_AddItemToArray(bm, cJSON_CreateNumber(means[i]));
    cJSON *ops = cJSON_AddArrayToObject(r, "operations");
    for (size_t i = 0; with_ops && i < OPS; i++)
        add_op(ops, i, offset, i == SLOW_OP ? op_scale : 1.0);
    return r;
}

typedef struct outcome {
    unsigned p_below, significant, failed; /* of the pairs */
} outcome;

/* pairs comparisons of `runs` runs a side, the after side `scale` times
 * slower; counts what compare said. */
/* The comparison of two new sides of `runs` runs each, the after side
 * scale times slower and, with_ops, its SLOW_OP op_scale times. */
static cJSON *compare_pair(size_t runs, double scale, double run_sd, int with_ops,
                           double op_scale, const compare_options *opt)
{
    cJSON *b[RUNS_MAX], *a[RUNS_MAX];
    for (size_t i = 0; i < runs; i++) {
        b[i] = run_report(1.0, run_sd, with_ops, 1.0);
        a[i] = run_report(scale, run_sd, with_ops, op_scale);
    }
    compare_side sb = { (const cJSON *const *)b, runs, "before" };
    compare_side sa = { (const cJSON *const *)a, runs, "after" };
    prof_error err = { PROF_OK, "" };
    cJSON *cmp = compare_build_sides(&sb, &sa, opt, &err);
    if (!cmp) {
        fprintf(stderr, "compare_aa: %s\n", err.message);
        exit(1);
    }
    for (size_t i = 0; i < runs; i++) {
        cJSON_Delete(b[i]);
        cJSON_Delete(a[i]);
    }
    return cmp;
}

static outcome trial_noise(unsigned pairs, size_t runs, double scale, double run_sd,
                           double noise_pct)
{
    outcome o = { 0, 0, 0 };
    compare_options opt;
    compare_options_default(&opt);
    if (noise_pct >= 0)
        opt.noise_pct = noise_pct;
    opt.regression_pct = 10;
    for (unsigned p = 0; p < pairs; p++) {
        cJSON *cmp = compare_pair(runs, scale, run_sd, 0, 1.0, &opt);
        const cJSON *test = cJSON_GetObjectItem(cmp, "step_time_test");
        o.p_below += cJSON_GetObjectItem(test, "p_value")->valuedouble < opt.alpha ? 1u : 0u;
        o.significant += cJSON_IsTrue(cJSON_GetObjectItem(test, "significant")) ? 1u : 0u;
        o.failed += compare_regressed(cmp) ? 1u : 0u;
        cJSON_Delete(cmp);
    }
    return o;
}

typedef struct op_outcome {
    unsigned some_p_below, some_significant; /* of the pairs: any operation        */
    unsigned slow_p_below, slow_significant; /* SLOW_OP                             */
} op_outcome;

static const cJSON *named(const cJSON *ops, const char *name)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, ops)
        if (strcmp(cJSON_GetObjectItem(op, "name")->valuestring, name) == 0)
            return op;
    return NULL;
}

/* pairs comparisons of `runs` runs a side with operations, SLOW_OP
 * op_scale times slower after; counts which operations compare flagged,
 * held to alpha each and held together. */
static op_outcome trial_ops(unsigned pairs, size_t runs, double op_scale, double run_sd)
{
    op_outcome o = { 0, 0, 0, 0 };
    compare_options opt;
    compare_options_default(&opt);
    char slow_name[16];
    snprintf(slow_name, sizeof slow_name, "op%02d", SLOW_OP);
    for (unsigned p = 0; p < pairs; p++) {
        cJSON *cmp = compare_pair(runs, 1.0, run_sd, 1, op_scale, &opt);
        const cJSON *ops = cJSON_GetObjectItem(cmp, "operations"), *op;
        unsigned below = 0, sig = 0;
        cJSON_ArrayForEach(op, ops) {
            below += cJSON_GetObjectItem(op, "p_value")->valuedouble < opt.alpha ? 1u : 0u;
            sig += cJSON_IsTrue(cJSON_GetObjectItem(op, "significant")) ? 1u : 0u;
        }
        o.some_p_below += below > 0;
        o.some_significant += sig > 0;
        const cJSON *slow = named(ops, slow_name);
        o.slow_p_below += cJSON_GetObjectItem(slow, "p_value")->valuedouble < opt.alpha ? 1u : 0u;
        o.slow_significant += cJSON_IsTrue(cJSON_GetObjectItem(slow, "significant")) ? 1u : 0u;
        cJSON_Delete(cmp);
    }
    return o;
}

static void print_ops(const char *what, unsigned pairs, op_outcome o, int power)
{
    printf("  %-50s %9.1f%% %12.1f%%\n", what,
           100.0 * (power ? o.slow_p_below : o.some_p_below) / pairs,
           100.0 * (power ? o.slow_significant : o.some_significant) / pairs);
}

static outcome trial(unsigned pairs, size_t runs, double scale, double run_sd)
{
    return trial_noise(pairs, runs, scale, run_sd, -1);
}

static void print(const char *what, unsigned pairs, outcome o)
{
    printf("  %-50s %6.1f%% %13.1f%% %14.1f%%\n", what, 100.0 * o.p_below / pairs,
           100.0 * o.significant / pairs, 100.0 * o.failed / pairs);
}

int main(int argc, char **argv)
{
    unsigned pairs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000;
    if (pairs == 0)
        pairs = 2000;
    printf("compare over %u synthetic pairs a case: %d steps a run, AR(1) phi %.1f, step noise "
           "%.0f%%, run-to-run %.0f%%, alpha 0.01, noise floor 5%%\n",
           pairs, STEPS, PHI, STEP_SD * 100, RUN_SD * 100);
    printf("  %-50s %7s %14s %15s\n", "case", "p<0.01", "significant", "--fail-on 10");
    printf("  (p: of the change being within the noise floor; --noise 0: of no change)\n");
    outcome aa3 = trial(pairs, 3, 1.0, RUN_SD);
    print("A/A, 3 runs a side (false positives)", pairs, aa3);
    print("A/A, 5 runs a side (false positives)", pairs, trial(pairs, 5, 1.0, RUN_SD));
    outcome p10 = trial(pairs, 3, 1.10, RUN_SD);
    print("10% slower, 3 runs a side (power)", pairs, p10);
    print("20% slower, 3 runs a side (power)", pairs, trial(pairs, 3, 1.20, RUN_SD));
    print("30% slower, 3 runs a side (power)", pairs, trial(pairs, 3, 1.30, RUN_SD));
    print("A/A, 3 runs a side, --noise 0", pairs, trial_noise(pairs, 3, 1.0, RUN_SD, 0));
    outcome p10z = trial_noise(pairs, 3, 1.10, RUN_SD, 0);
    print("10% slower, 3 runs a side, --noise 0 (power)", pairs, p10z);
    print("10% slower, 5 runs a side (power)", pairs, trial(pairs, 5, 1.10, RUN_SD));
    print("A/A, 1 run a side, no run-to-run variation", pairs, trial(pairs, 1, 1.0, 0.0));
    print("A/A, 1 run a side, run-to-run 3% (not measurable)", pairs, trial(pairs, 1, 1.0, RUN_SD));
    print("30% slower, 1 run a side", pairs, trial(pairs, 1, 1.30, RUN_SD));
    outcome two3 = trial(pairs, 3, 1.0, TWO_SPEEDS), two5 = trial(pairs, 5, 1.0, TWO_SPEEDS);
    print("A/A, two speeds, 3 runs a side", pairs, two3);
    print("A/A, two speeds, 5 runs a side", pairs, two5);
    print("30% slower, two speeds, 3 runs a side (power)", pairs,
          trial(pairs, 3, 1.30, TWO_SPEEDS));
    print("30% slower, two speeds, 5 runs a side (power)", pairs,
          trial(pairs, 5, 1.30, TWO_SPEEDS));
    printf("compare ratios: A/A false positives with 3 runs a side %.2f%% at the 0.01 level "
           "(goal <= 1%%); power to see 10%% with 3 runs %.1f%% (%.1f%% with --noise 0)\n",
           100.0 * aa3.significant / pairs, 100.0 * p10.significant / pairs,
           100.0 * p10z.significant / pairs);
    printf("compare ratios: on a machine of two speeds, A/A false positives %.2f%% with 3 runs "
           "a side, %.2f%% with 5\n",
           100.0 * two3.significant / pairs, 100.0 * two5.significant / pairs);

    printf("operations: %d a run, %d of them of two speeds per process (%.1fx); identical sides: "
           "some operation flagged; 30%% slower: that operation flagged\n", OPS, BIMODAL,
           BIMODAL_MODE);
    printf("  %-50s %10s %13s\n", "case", "alpha each", "together");
    op_outcome oa3 = trial_ops(pairs, 3, 1.0, RUN_SD), oa5 = trial_ops(pairs, 5, 1.0, RUN_SD);
    print_ops("A/A, 3 runs a side (false positives)", pairs, oa3, 0);
    print_ops("A/A, 5 runs a side (false positives)", pairs, oa5, 0);
    op_outcome tw5 = trial_ops(pairs, 5, 1.0, TWO_SPEEDS);
    print_ops("A/A, two speeds, 5 runs a side", pairs, tw5, 0);
    print_ops("A/A, 1 run a side (run-to-run not measurable)", pairs,
              trial_ops(pairs, 1, 1.0, RUN_SD), 0);
    op_outcome pw3 = trial_ops(pairs, 3, 1.3, RUN_SD);
    print_ops("one 30% slower, 3 runs a side (power)", pairs, pw3, 1);
    print_ops("one 30% slower, 5 runs a side (power)", pairs, trial_ops(pairs, 5, 1.3, RUN_SD), 1);
    print_ops("one 30% slower, two speeds, 5 runs a side (power)", pairs,
              trial_ops(pairs, 5, 1.3, TWO_SPEEDS), 1);
    printf("compare ratios: identical sides with some of %d operations flagged, 5 runs a side: "
           "%.2f%% held together, %.2f%% held to alpha each; one 30%% slower found with 3 runs "
           "%.1f%% (%.1f%%)\n", OPS, 100.0 * oa5.some_significant / pairs,
           100.0 * oa5.some_p_below / pairs, 100.0 * pw3.slow_significant / pairs,
           100.0 * pw3.slow_p_below / pairs);
    return 0;
}
