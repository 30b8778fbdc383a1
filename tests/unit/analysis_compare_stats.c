/* analysis_compare_stats.c - the comparison's statistics (formats/rules.md
 * §6.3). The level that holds the operations together (cmp_level_each)
 * against Benjamini-Hochberg worked by hand: the largest k whose k-th
 * smallest p is below alpha * k / m sets the level, even when smaller ps
 * miss their own bound (step-up); a p on the bound is not below it; no such
 * k leaves alpha / m; one test or none keeps alpha; the ps are not
 * reordered; weights divide the ps. The runs' speeds (cmp_speed_of)
 * against a median computed the slow way, leaving each operation out, on
 * random values with ties; and the test against them (cmp_test_adjusted):
 * Student's t by hand, a speed common to every operation taken out
 * exactly, and one operation's change found at its size. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare_stats.h"

static void near(double got, double want)
{
    cr_assert(fabs(got - want) <= 1e-15, "%.17g, want %.17g", got, want);
}

Test(analysis_compare_stats, one_test_or_none_keeps_alpha)
{
    double p[1] = { 0.5 };
    near(cmp_level_each(p, NULL, 0, 0.01), 0.01);
    near(cmp_level_each(p, NULL, 1, 0.01), 0.01);
}

Test(analysis_compare_stats, nothing_below_its_bound_leaves_alpha_over_m)
{
    double p[4] = { 0.9, 0.02, 0.5, 0.3 }; /* bounds 0.0125 0.025 0.0375 0.05 */
    near(cmp_level_each(p, NULL, 4, 0.05), 0.0125);
}

Test(analysis_compare_stats, the_largest_k_below_its_bound_sets_the_level)
{
    double p[4] = { 0.2, 0.03, 0.01, 0.04 }; /* sorted 0.01 0.03 0.04 0.2: k = 1 */
    near(cmp_level_each(p, NULL, 4, 0.05), 0.0125);
}

Test(analysis_compare_stats, a_larger_k_below_its_bound_takes_the_smaller_ps_with_it)
{
    /* 0.02 misses 0.0125 and 0.021 misses 0.025, but 0.03 < 0.05: all four */
    double p[4] = { 0.021, 0.03, 0.02, 0.022 };
    near(cmp_level_each(p, NULL, 4, 0.05), 0.05);
    double q[5] = { 0.001, 0.5, 0.007, 0.011, 0.9 }; /* bounds by 0.01: 0.011 < 0.03 */
    near(cmp_level_each(q, NULL, 5, 0.05), 0.03);
}

Test(analysis_compare_stats, a_p_on_its_bound_is_not_below_it)
{
    double p[2] = { 0.5, 0.025 };
    near(cmp_level_each(p, NULL, 2, 0.05), 0.025); /* k = 1 fails: alpha / m, and 0.025 is not < it */
}

Test(analysis_compare_stats, the_ps_are_left_as_they_were)
{
    double p[5] = { 0.3, 0.001, 0.04, 0.002, 1.0 }, copy[5];
    memcpy(copy, p, sizeof p);
    cmp_level_each(p, NULL, 5, 0.01);
    cr_assert_arr_eq(p, copy, sizeof p);
}

Test(analysis_compare_stats, weights_divide_the_ps)
{
    /* q = p / w = 0.02 0.02 0.4 0.9 (w mean 1): bounds 0.0125 0.025: k = 2,
     * level 0.025, and test i is held to 0.025 * w[i] */
    double p[4] = { 0.04, 0.01, 0.4, 0.45 }, w[4] = { 2.0, 0.5, 1.0, 0.5 };
    near(cmp_level_each(p, w, 4, 0.05), 0.025);
    double unweighted = cmp_level_each(p, NULL, 4, 0.05); /* 0.01 < 0.0125 only */
    near(unweighted, 0.0125);
}

/* The median of v[0..n) without v[skip] (SIZE_MAX: none), the slow way. */
static double slow_median(const double *v, size_t n, size_t skip)
{
    double w[64];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip)
            w[k++] = v[i];
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && w[j] < w[j - 1]; j--) {
            double t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    return k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
}

static double uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) / 9007199254740992.0;
}

Test(analysis_compare_stats, speeds_are_the_median_leaving_each_operation_out)
{
    uint64_t seed = 7;
    for (size_t nref = 1; nref <= 31; nref++)
        for (size_t nruns = 2; nruns <= 7; nruns += 5) {
            double logs[31 * 7], col[31];
            for (size_t i = 0; i < nref * nruns; i++) /* steps of 0.25: many ties */
                logs[i] = floor(uniform(&seed) * 8) / 4 + (double)(i % nruns) * 0.1;
            cmp_speeds s;
            cr_assert_eq(cmp_speeds_init(&s, logs, nref, nruns), 0);
            for (size_t r = 0; r < nruns; r++) {
                for (size_t k = 0; k < nref; k++) {
                    double mean = 0;
                    for (size_t q = 0; q < nruns; q++)
                        mean += logs[k * nruns + q] / (double)nruns;
                    col[k] = logs[k * nruns + r] - mean;
                }
                cr_assert(fabs(cmp_speed_of(&s, r, SIZE_MAX) - slow_median(col, nref, SIZE_MAX)) <
                          1e-12);
                for (size_t k = 0; nref > 1 && k < nref; k++)
                    cr_assert(fabs(cmp_speed_of(&s, r, k) - slow_median(col, nref, k)) < 1e-12,
                              "nref %zu run %zu leaving %zu out", nref, r, k);
            }
            cr_assert_eq(cmp_speeds_usable(&s, 0), nref - 1 >= 3);
            cr_assert_eq(cmp_speeds_usable(&s, SIZE_MAX), nref >= 3);
            cmp_speeds_free(&s);
        }
}

static compare_options options(void)
{
    compare_options o;
    compare_options_default(&o);
    return o;
}

Test(analysis_compare_stats, the_adjusted_test_is_students_t_on_the_log_scale)
{
    double yb[3] = { 0.00, 0.02, -0.01 }, ya[3] = { 0.30, 0.25, 0.28 };
    compare_options o = options();
    cmp_result r = cmp_test_adjusted(yb, 3, ya, 3, 1.0, 1.5, &o);
    double mb = 0.01 / 3, ma = 0.83 / 3, d = ma - mb, ss = 0;
    for (int i = 0; i < 3; i++)
        ss += (yb[i] - mb) * (yb[i] - mb) + (ya[i] - ma) * (ya[i] - ma);
    double se = sqrt(ss / 4 * (2.0 / 3)), half = gsl_cdf_tdist_Qinv(0.005, 4) * se;
    cr_assert_eq(r.method, CMP_SPEED_ADJUSTED);
    cr_assert(fabs(r.df - 4) < 1e-12 && fabs(r.t - d / se) < 1e-9);
    cr_assert(fabs(r.estimate - expm1(d)) < 1e-12, "%g", r.estimate);
    cr_assert(fabs(r.relative - 0.5) < 1e-12); /* the raw means, as given */
    cr_assert(fabs(r.rel_low - expm1(d - half)) < 1e-9 && fabs(r.rel_high - expm1(d + half)) < 1e-9);
    double p = 2 * gsl_cdf_tdist_Q((d - log1p(0.05)) / se, 4);
    cr_assert(fabs(r.p - p) < 1e-9, "%g want %g", r.p, p);
    cr_assert_eq(r.significant, p < 0.01);
    cr_assert_eq(r.significant, r.rel_low > 0.05); /* significant: the interval beyond the floor */
}

/* Runs whose every operation runs at the run's speed, times an operation's
 * own jitter; operation 0 is `change` slower on the after side. The
 * adjusted test of each operation over 4 runs a side. */
static void simulate(double change, uint64_t seed, cmp_result *r, size_t nops)
{
    enum { RUNS = 8 };
    double logs[16 * RUNS], y[RUNS];
    for (size_t k = 0; k < nops; k++)
        for (size_t i = 0; i < RUNS; i++) {
            double speed = log(1.0 + 0.7 * (double)(i % 3)); /* 1x, 1.7x, 2.4x */
            logs[k * RUNS + i] = (double)k + speed + 0.01 * (uniform(&seed) - 0.5) +
                                 (k == 0 && i >= RUNS / 2 ? log1p(change) : 0.0);
        }
    cmp_speeds s;
    cr_assert_eq(cmp_speeds_init(&s, logs, nops, RUNS), 0);
    compare_options o = options();
    for (size_t k = 0; k < nops; k++) {
        for (size_t i = 0; i < RUNS; i++)
            y[i] = logs[k * RUNS + i] - cmp_speed_of(&s, i, k);
        r[k] = cmp_test_adjusted(y, RUNS / 2, y + RUNS / 2, RUNS / 2, 1.0, 1.0, &o);
    }
    cmp_speeds_free(&s);
}

Test(analysis_compare_stats, a_speed_common_to_every_operation_is_taken_out)
{
    cmp_result r[12];
    for (uint64_t seed = 1; seed <= 20; seed++) {
        simulate(0.0, seed, r, 12);
        for (size_t k = 0; k < 12; k++) {
            cr_assert(!r[k].significant && fabs(r[k].estimate) < 0.02, "seed %llu op %zu: %g",
                      (unsigned long long)seed, k, r[k].estimate);
            cr_assert(r[k].rel_low > -0.05 && r[k].rel_high < 0.05); /* no change: ruled out */
        }
    }
}

Test(analysis_compare_stats, one_operation_changed_is_found_at_its_size)
{
    cmp_result r[12];
    for (uint64_t seed = 1; seed <= 20; seed++) {
        simulate(0.3, seed, r, 12);
        cr_assert(r[0].significant && fabs(r[0].estimate - 0.3) < 0.02, "seed %llu: %g",
                  (unsigned long long)seed, r[0].estimate);
        for (size_t k = 1; k < 12; k++)
            cr_assert(!r[k].significant, "seed %llu op %zu: %g", (unsigned long long)seed, k,
                      r[k].estimate);
    }
}
