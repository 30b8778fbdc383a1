/* analysis_stats.c - the statistics under the rules (formats/rules.md §2):
 * least squares against closed-form sums and t-table values, the robust fit
 * ignoring an extreme point and the agreement test, Welch's t-test against
 * hand-computed values and a t-table quantile, quantiles, MAD, warm-up and
 * the sort under them. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/report.h"
#include "analysis/stats.h"
#include "leak_battery.h"

#define T975_DF10 2.228138851986 /* t-table: two-sided 5% at 10 and 18 degrees of freedom */
#define T975_DF18 2.100922040241

static void near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: %.10g, want %.10g (tol %g)", what, got, want, tol);
}

Test(analysis_stats, exact_line_has_zero_p_and_interval)
{
    double x[8], y[8];
    for (int i = 0; i < 8; i++) {
        x[i] = i;
        y[i] = 3.0 + 2.0 * i;
    }
    stats_fit f;
    cr_assert_eq(stats_linear_fit(x, y, 8, &f), 0);
    near(f.slope, 2.0, 1e-12, "slope");
    near(f.intercept, 3.0, 1e-12, "intercept");
    near(f.r2, 1.0, 1e-12, "r2");
    near(f.p_value, 0.0, 1e-12, "p");
    near(f.ci95, 0.0, 1e-9, "ci95");
}

Test(analysis_stats, noisy_line_matches_closed_form_and_t_table)
{
    static const double noise[20] = { 0.5, -0.3, 0.2, -0.1, 0.4, -0.6, 0.3, 0.0, -0.2, 0.1,
                                      0.5, -0.3, 0.2, -0.1, 0.4, -0.6, 0.3, 0.0, -0.2, 0.1 };
    double x[20], y[20], mx = 0, my = 0;
    for (int i = 0; i < 20; i++) {
        x[i] = i;
        y[i] = 3.0 + 2.0 * i + noise[i];
        mx += x[i] / 20;
        my += y[i] / 20;
    }
    double sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < 20; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    double b = sxy / sxx, a = my - b * mx, sse = 0;
    for (int i = 0; i < 20; i++)
        sse += (y[i] - a - b * x[i]) * (y[i] - a - b * x[i]);
    double se = sqrt(sse / 18 / sxx);
    stats_fit f;
    cr_assert_eq(stats_linear_fit(x, y, 20, &f), 0);
    near(f.slope, b, 1e-10, "slope");
    near(f.intercept, a, 1e-9, "intercept");
    near(f.se_slope, se, 1e-10, "se");
    near(f.ci95, T975_DF18 * se, 1e-8, "ci95");
    near(f.r2, 1.0 - sse / syy, 1e-12, "r2");
    cr_assert_lt(f.p_value, 1e-20, "a clear trend is significant: p = %g", f.p_value);
    cr_assert_eq(f.n, 20);
}

Test(analysis_stats, flat_noise_is_not_significant)
{
    static const double y[12] = { 5, 7, 4, 6, 5, 7, 4, 6, 5, 7, 4, 6 };
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    stats_fit f;
    cr_assert_eq(stats_linear_fit(x, y, 12, &f), 0);
    cr_assert_gt(f.p_value, 0.5, "p = %g", f.p_value);
    cr_assert_lt(f.r2, 0.1);
}

Test(analysis_stats, degenerate_inputs_are_refused)
{
    double x[3] = { 1, 1, 1 }, y[3] = { 1, 2, 3 }, s, i;
    stats_fit f;
    cr_assert_eq(stats_linear_fit(x, y, 2, &f), -1);
    cr_assert_eq(stats_linear_fit(x, y, 3, &f), -1, "every x the same");
    cr_assert_eq(stats_robust_fit(x, y, 3, &s, &i), -1);
}

Test(analysis_stats, robust_fit_ignores_extreme_points)
{
    double x[30], y[30];
    for (int i = 0; i < 30; i++) {
        x[i] = i;
        y[i] = 1.0 + 0.5 * i + ((i * 7) % 5 - 2) * 0.05;
    }
    stats_fit f;
    double rs, ri;
    cr_assert_eq(stats_linear_fit(x, y, 30, &f), 0);
    cr_assert_eq(stats_robust_fit(x, y, 30, &rs, &ri), 0);
    cr_assert(stats_fits_agree(&f, rs), "clean data: %g vs %g", f.slope, rs);
    /* one spike: least squares is dragged but not significant; the robust
     * fit does not move */
    y[27] += 1000.0;
    cr_assert_eq(stats_linear_fit(x, y, 30, &f), 0);
    cr_assert_eq(stats_robust_fit(x, y, 30, &rs, &ri), 0);
    near(rs, 0.5, 0.01, "robust slope");
    near(ri, 1.0, 0.1, "robust intercept");
    cr_assert_gt(f.slope, 2.0, "the spike drags least squares: %g", f.slope);
    cr_assert_gt(f.p_value, 0.01, "p = %g", f.p_value);
    /* a jump over the last few points: significant, but the robust fit
     * keeps the bulk's slope and disagrees */
    y[27] -= 1000.0;
    for (int i = 25; i < 30; i++)
        y[i] += 50.0;
    cr_assert_eq(stats_linear_fit(x, y, 30, &f), 0);
    cr_assert_eq(stats_robust_fit(x, y, 30, &rs, &ri), 0);
    cr_assert_lt(f.p_value, 0.01, "p = %g", f.p_value);
    near(rs, 0.5, 0.05, "robust slope past a jump");
    cr_assert_not(stats_fits_agree(&f, rs), "ols %g ci %g robust %g", f.slope, f.ci95, rs);
}

/* The recorded series of leak_battery.h from its fourth step on, as the
 * leak rule fits it after warm-up: the reweighting creeps to its solution
 * in 245 iterations. */
Test(analysis_stats, robust_fit_that_converges_slowly_keeps_its_estimate)
{
    enum { W = 3, N = LB_TORCH_LEAK_STEPS - W };
    const double *rss = lb_torch_leak_rss + W;
    double x[N], rs, ri;
    for (int i = 0; i < N; i++)
        x[i] = W + i;
    stats_fit f;
    cr_assert_eq(stats_linear_fit(x, rss, N, &f), 0);
    cr_assert_eq(stats_robust_fit(x, rss, N, &rs, &ri), 0);
    near(rs / 1048576.0, 13.9, 0.1, "robust slope, MiB");
    cr_assert(stats_fits_agree(&f, rs), "ols %g robust %g", f.slope, rs);

    /* as the report runs it: GSL's handler off, which would abort here */
    gsl_error_handler_t *h = gsl_set_error_handler_off();
    int converged = 1;
    double at100;
    cr_assert_eq(stats_robust_fit_limited(x, rss, N, 100, &at100, &ri, &converged), 0);
    cr_assert_not(converged, "GSL's default of 100 iterations is too few here");
    near(at100 / rs, 1.0, 0.001, "the estimate after 100 iterations");
    cr_assert_eq(stats_robust_fit_limited(x, rss, N, STATS_ROBUST_ITER, &rs, &ri, &converged),
                 0);
    cr_assert(converged);
    gsl_set_error_handler(h);
}

Test(analysis_stats, agreement_needs_same_sign_and_closeness)
{
    stats_fit f = { .slope = 100.0, .ci95 = 5.0 };
    cr_assert(stats_fits_agree(&f, 80.0), "within a quarter");
    cr_assert_not(stats_fits_agree(&f, 70.0));
    cr_assert_not(stats_fits_agree(&f, -1.0));
    cr_assert_not(stats_fits_agree(&f, NAN));
    f.ci95 = 40.0;
    cr_assert(stats_fits_agree(&f, 65.0), "within the interval");
}

Test(analysis_stats, welch_matches_hand_computation)
{
    /* v1 = 4/10, v2 = 9/12: t = 2 / sqrt(1.15); df = 1.15^2 / (0.4^2/9 + 0.75^2/11) */
    stats_welch_result r = stats_welch(10, 20.0, 4.0, 12, 22.0, 9.0);
    near(r.t, 2.0 / sqrt(1.15), 1e-12, "t");
    near(r.df, 1.15 * 1.15 / (0.16 / 9 + 0.5625 / 11), 1e-9, "df");
    cr_assert(r.p > 0.05 && r.p < 0.1, "p = %g", r.p);
    stats_welch_result back = stats_welch(12, 22.0, 9.0, 10, 20.0, 4.0);
    near(back.t, -r.t, 1e-12, "antisymmetric");
    near(back.p, r.p, 1e-12, "same p");
}

Test(analysis_stats, welch_p_at_the_t_table_quantile_is_five_percent)
{
    /* equal n and variance: df = 2(n - 1) = 10; var 3 over n 6 gives se 1 */
    stats_welch_result r = stats_welch(6, 0.0, 3.0, 6, T975_DF10, 3.0);
    near(r.df, 10.0, 1e-9, "df");
    near(r.t, T975_DF10, 1e-9, "t");
    near(r.p, 0.05, 1e-9, "p");
}

Test(analysis_stats, welch_edge_cases)
{
    stats_welch_result r = stats_welch(1, 5.0, 0.0, 10, 9.0, 1.0);
    cr_assert(r.t == 0 && r.df == 0 && r.p == 1.0, "no test with one sample");
    r = stats_welch(5, 5.0, 0.0, 5, 5.0, 0.0);
    cr_assert(r.t == 0 && r.p == 1.0, "identical constants");
    r = stats_welch(5, 5.0, 0.0, 5, 6.0, 0.0);
    cr_assert(isinf(r.t) && r.t > 0 && r.p == 0.0, "different constants");
}

static int double_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

Test(analysis_stats, quantiles_mad_and_warmup)
{
    double v[5] = { 9, 1, 5, 3, 7 }, scratch[5];
    qsort(v, 5, sizeof *v, double_cmp);
    cr_assert(v[0] == 1 && v[4] == 9);
    near(stats_quantile_sorted(v, 5, 0.5), 5.0, 0, "median");
    near(stats_quantile_sorted(v, 5, 0.95), 8.6, 1e-12, "p95 interpolated");
    near(stats_quantile_sorted(v, 0, 0.5), 0.0, 0, "empty");
    near(stats_mad(v, 5, 5.0, scratch), 2.0, 0, "mad");
    cr_assert_eq(stats_warmup(10), 3);
    cr_assert_eq(stats_warmup(300), 30);
    cr_assert_eq(stats_warmup(31), 4);
    cr_assert_eq(stats_warmup(2), 2);
}

Test(analysis_stats, robust_fit_of_a_long_series_uses_a_subset)
{
    enum { N = 10 * STATS_ROBUST_MAX + 7 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 100.0 + 3.0 * i + ((i * 7) % 5 - 2);
    }
    for (int i = N - 300; i < N; i++)
        y[i] += 1e6; /* a jump the bulk does not share */
    double rs, ri;
    cr_assert_eq(stats_robust_fit(x, y, N, &rs, &ri), 0);
    near(rs, 3.0, 0.01, "robust slope over the subset");
    near(ri, 100.0, 5.0, "robust intercept");
}

/* Selection gives the very numbers the sorted quantile gives (qsort's
 * order), on shapes that trouble quicksorts (random, sorted, reversed, all
 * equal, few distinct values, organ pipe), at the quantiles the step
 * rules read and between. */
Test(analysis_stats, quantile_select_matches_the_sorted_quantile)
{
    static const size_t sizes[] = { 1, 2, 3, 16, 17, 100, 1001, 65537 };
    static const double qs[] = { 0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0 };
    static double a[65537], b[65537];
    uint64_t x = 88172645463325252ull;
    for (int shape = 0; shape < 6; shape++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                double r = (double)(x >> 11);
                b[i] = shape == 0 ? r : shape == 1 ? (double)i : shape == 2 ? (double)(n - i)
                     : shape == 3 ? 7.0 : shape == 4 ? (double)(x % 3) : (double)(i < n / 2 ? i : n - i);
            }
            for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
                for (size_t i = 0; i < n; i++)
                    a[i] = b[i];
                double got = stats_quantile_select(a, n, qs[qi]);
                for (size_t i = 0; i < n; i++)
                    a[i] = b[i];
                qsort(a, n, sizeof *a, double_cmp);
                cr_assert(got == stats_quantile_sorted(a, n, qs[qi]), "shape %d n %zu q %g",
                          shape, n, qs[qi]);
            }
        }
    double none[1] = { 0 };
    cr_assert(stats_quantile_select(none, 0, 0.5) == 0.0);
}

static double series_at(const void *series, size_t i)
{
    return ((const double *)series)[i];
}

Test(analysis_stats, decimation_keeps_extremes_in_order_and_bounds_the_count)
{
    enum { N = 10007, MAX = 100 };
    static double v[N];
    for (int i = 0; i < N; i++)
        v[i] = 1000.0 + (i * 37) % 11; /* noise between 1000 and 1010 */
    v[4321] = 5000.0;                  /* one spike ... */
    v[8765] = 10.0;                    /* ... and one dip */
    size_t keep[MAX];
    size_t n = stats_decimate(v, N, series_at, MAX, keep);
    cr_assert(n > MAX / 2 && n <= MAX, "kept %zu of %d", n, N);
    int spike = 0, dip = 0;
    for (size_t k = 0; k < n; k++) {
        cr_assert(keep[k] < N);
        if (k)
            cr_assert(keep[k] > keep[k - 1], "indexes ascend");
        spike |= keep[k] == 4321;
        dip |= keep[k] == 8765;
    }
    cr_assert(spike && dip, "the spike and the dip survive");
    cr_assert(keep[0] == 0 && keep[n - 1] == N - 1, "the ends survive");
    /* every run of about N / (MAX / 2) points has a representative */
    for (size_t k = 1; k < n; k++)
        cr_assert(keep[k] - keep[k - 1] < 2 * N / (MAX / 2), "gap at %zu", k);
}

Test(analysis_stats, decimation_keeps_short_series_whole)
{
    double v[5] = { 3, 1, 4, 1, 5 };
    size_t keep[4] = { 99, 99, 99, 99 };
    cr_assert_eq(stats_decimate(v, 5, series_at, 5, keep), 5);
    cr_assert_eq(stats_decimate(v, 5, series_at, 0, keep), 5, "0: no limit");
    cr_assert_eq(keep[0], 99, "keep untouched when nothing is dropped");
    size_t n = stats_decimate(v, 5, series_at, 4, keep);
    cr_assert_eq(n, 4, "the ends, and the lowest and highest between them");
    cr_assert(keep[0] == 0 && keep[1] == 1 && keep[2] == 2 && keep[3] == 4);
    cr_assert_eq(stats_decimate(v, 5, series_at, 3, keep), 2, "room for the ends only");
    cr_assert(keep[0] == 0 && keep[1] == 4);
}

/* ---- batch means and the difference test (rules.md §6.3) ---------------------------- */

static uint64_t stats_rng = 88172645463325252ull;

static double stats_normal(void)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        stats_rng ^= stats_rng << 13;
        stats_rng ^= stats_rng >> 7;
        stats_rng ^= stats_rng << 17;
        u[i] = ((double)(stats_rng >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

Test(analysis_stats, sample_and_lag1_of_known_values)
{
    double v[] = { 1, 2, 3, 4, 5 };
    stats_sample s = stats_sample_of(v, 5);
    cr_assert_eq(s.n, 5);
    near(s.mean, 3.0, 1e-12, "mean");
    near(s.var, 2.5, 1e-12, "variance");
    /* lag-1 autocorrelation of 1..5: sum (x_i - 3)(x_i+1 - 3) / sum (x_i - 3)^2 = 4 / 10 */
    near(stats_lag1(v, 5), 0.4, 1e-12, "lag-1");
    double alt[] = { 1, -1, 1, -1, 1, -1 };
    cr_assert_lt(stats_lag1(alt, 6), -0.8);
    double flat[] = { 7, 7, 7 };
    cr_assert_eq(stats_lag1(flat, 3), 0.0);
}

Test(analysis_stats, independent_batches_are_left_alone)
{
    double v[32], copy[32];
    for (int i = 0; i < 32; i++)
        v[i] = copy[i] = (i % 2 ? 1.0 : -1.0) * (1.0 + 0.01 * i); /* negative r1 */
    stats_sample s = stats_batch_means(v, 32);
    stats_sample plain = stats_sample_of(copy, 32);
    cr_assert_eq(s.n, 32);
    near(s.var, plain.var, 1e-12, "variance not inflated");
}

Test(analysis_stats, correlated_batches_are_merged_and_inflated)
{
    /* a slow drift: neighbours repeat each other */
    double v[32];
    for (int i = 0; i < 32; i++)
        v[i] = sin(i / 6.0);
    double copy[32];
    for (int i = 0; i < 32; i++)
        copy[i] = v[i];
    stats_sample plain = stats_sample_of(copy, 32);
    stats_sample s = stats_batch_means(v, 32);
    cr_assert_lt(s.n, 32, "merged");
    cr_assert_geq(s.n, 8);
    /* the standard error of the mean is not smaller than the naive one */
    cr_assert_geq(s.var / (double)s.n, plain.var / 32.0);
}

/* Over many AR(1) series split into two halves of batch means, a true
 * null is rejected at the 1% level about 1% of the time (not the 20% or so
 * a test of correlated steps as independent would give). */
Test(analysis_stats, batch_means_test_keeps_its_level_under_ar1_noise)
{
    int rejected = 0, trials = 2000;
    for (int t = 0; t < trials; t++) {
        double steps[2][300], means[2][32];
        stats_sample s[2];
        for (int side = 0; side < 2; side++) {
            double e = stats_normal();
            for (int i = 0; i < 300; i++) {
                e = 0.7 * e + sqrt(1 - 0.49) * stats_normal();
                steps[side][i] = 100.0 + e;
            }
            size_t nb = steady_batch_means(steps[side], 300, means[side]);
            s[side] = stats_batch_means(means[side], nb);
        }
        if (stats_diff_test(s[0], s[1], 0.01).p < 0.01)
            rejected++;
    }
    cr_assert_leq(rejected, trials * 25 / 1000, "%d of %d rejected at the 1%% level", rejected,
                  trials);
}

Test(analysis_stats, welch_difference_has_its_interval)
{
    stats_sample b = { 3, 10.0, 1.0 }, a = { 3, 13.0, 1.0 };
    stats_diff d = stats_diff_test(b, a, 0.01);
    near(d.diff, 3.0, 1e-12, "diff");
    near(d.df, 4.0, 1e-9, "df");
    /* t = 3 / sqrt(2/3); half-width = t(0.995; 4) * sqrt(2/3), t(0.995; 4) = 4.604094871 */
    near(d.t, 3.0 / sqrt(2.0 / 3.0), 1e-9, "t");
    near(d.half, 4.604094871 * sqrt(2.0 / 3.0), 1e-6, "half-width");
}

Test(analysis_stats, one_observation_against_several_borrows_their_variance)
{
    stats_sample many = { 4, 10.0, 4.0 }, one = { 1, 16.0, 0.0 };
    stats_diff d = stats_diff_test(many, one, 0.05);
    near(d.diff, 6.0, 1e-12, "diff");
    near(d.df, 3.0, 1e-12, "df");
    near(d.t, 6.0 / sqrt(4.0 * 1.25), 1e-9, "t");
    stats_diff r = stats_diff_test(one, many, 0.05);
    near(r.diff, -6.0, 1e-12, "reversed diff");
    near(r.t, -d.t, 1e-12, "reversed t");
    stats_sample single = { 1, 1.0, 0.0 };
    stats_diff none = stats_diff_test(single, single, 0.05);
    cr_assert_eq(none.p, 1.0);
    cr_assert(isinf(none.half));
}

Test(analysis_stats, pooled_difference_has_student_df_and_interval)
{
    /* variances 1 and 9: Welch's df falls to about 2.4, Student's stays 4 */
    stats_sample b = { 3, 10.0, 1.0 }, a = { 3, 13.0, 9.0 };
    stats_diff d = stats_pooled_test(b, a, 0.01), w = stats_diff_test(b, a, 0.01);
    near(d.diff, 3.0, 1e-12, "diff");
    near(d.df, 4.0, 1e-12, "df");
    near(d.se, sqrt(5.0 * (2.0 / 3.0)), 1e-12, "se: pooled variance (2 * 1 + 2 * 9) / 4");
    near(d.t, 3.0 / sqrt(10.0 / 3.0), 1e-9, "t");
    near(d.half, 4.604094871 * sqrt(10.0 / 3.0), 1e-6, "half-width");
    cr_assert_lt(w.df, 3.0, "Welch's df %g", w.df);
    /* unequal sizes weight each variance by its degrees of freedom */
    stats_sample c = { 5, 10.0, 2.0 };
    stats_diff u = stats_pooled_test(c, a, 0.05);
    near(u.df, 6.0, 1e-12, "df 5 + 3 - 2");
    near(u.se, sqrt((4.0 * 2.0 + 2.0 * 9.0) / 6.0 * (1.0 / 5 + 1.0 / 3)), 1e-12, "se");
    /* one observation on a side: as stats_diff_test */
    stats_sample one = { 1, 16.0, 0.0 };
    stats_diff o = stats_pooled_test(c, one, 0.05), p = stats_diff_test(c, one, 0.05);
    near(o.t, p.t, 0.0, "one observation");
    /* both constant: exact */
    stats_sample k1 = { 3, 1.0, 0.0 }, k2 = { 3, 2.0, 0.0 };
    stats_diff e = stats_pooled_test(k1, k2, 0.01);
    cr_assert(e.se == 0 && e.p == 0 && isinf(e.t) && e.half == 0);
}
