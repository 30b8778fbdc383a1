/* analysis_trend.c - the trend statistics of memory series (formats/rules.md
 * §2.6, §2.7): the growth test keeps its false-positive rate near 1% on
 * autocorrelated noise and on random walks, where plain least squares does
 * not, leaves independent noise alone, and finds growth made of regular
 * increments; the onset of growth is found where a flat series starts to
 * grow, and not at the foot of a sawtooth's last tooth, in a straight line
 * or in noise. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "analysis/trend.h"
#include "synth.h"

#define N 400

static void ar1(synth_rng *r, double phi, double *y, size_t n)
{
    double e = 0.0;
    for (size_t i = 0; i < n; i++) {
        e = phi * e + sqrt(1.0 - phi * phi) * synth_gauss(r);
        y[i] = e;
    }
}

static void steps(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)i;
}

Test(analysis_trend, independent_noise_is_tested_as_before)
{
    double x[N], y[N];
    synth_rng r = { 1 };
    steps(x, N);
    for (size_t i = 0; i < N; i++)
        y[i] = 100.0 + 0.5 * (double)i + synth_gauss(&r);
    stats_fit plain;
    trend_line t;
    cr_assert_eq(stats_linear_fit(x, y, N, &plain), 0);
    cr_assert_eq(trend_fit(x, y, N, &t), 0);
    cr_assert_eq(t.fit.slope, plain.slope);
    cr_assert_eq(t.fit.intercept, plain.intercept);
    cr_assert_lt(fabs(t.r1), 0.15, "r1 %g", t.r1);
    cr_assert_geq(t.n_eff, 0.7 * N);
    cr_assert_leq(t.fit.ci95, 1.5 * plain.ci95);
}

Test(analysis_trend, autocorrelated_noise_keeps_its_false_positive_rate)
{
    double x[N], y[N];
    steps(x, N);
    int plain_hits = 0, trend_hits = 0, runs = 1000;
    for (int s = 0; s < runs; s++) {
        synth_rng r = { (uint64_t)s + 100 };
        ar1(&r, 0.8, y, N);
        stats_fit plain;
        trend_line t;
        cr_assert_eq(stats_linear_fit(x, y, N, &plain), 0);
        cr_assert_eq(trend_fit(x, y, N, &t), 0);
        plain_hits += plain.p_value < 0.01;
        trend_hits += t.fit.p_value < 0.01;
        cr_assert_gt(t.fit.ci95, plain.ci95, "correlated residuals widen the interval");
    }
    /* no trend at all: a test at 1% should say "trend" about 10 times in 1000 */
    cr_assert_gt(plain_hits, 200, "least squares alone: %d of %d", plain_hits, runs);
    cr_assert_leq(trend_hits, 30, "with the effective sample size: %d of %d", trend_hits, runs);
}

Test(analysis_trend, onset_of_growth_after_a_flat_start)
{
    double x[N], y[N];
    steps(x, N);
    for (int s = 0; s < 50; s++) {
        synth_rng r = { (uint64_t)s + 7 };
        size_t at = 120 + (size_t)(160 * synth_uniform(&r));
        for (size_t i = 0; i < N; i++)
            y[i] = 1000.0 + (i > at ? 2.0 * (double)(i - at) : 0.0) + 3.0 * synth_gauss(&r);
        trend_onset_result o;
        cr_assert_eq(trend_onset(x, y, N, 40, &o), 0);
        cr_assert(o.k + 10 >= at && o.k <= at + 10, "seed %d: onset %zu, want %zu", s, o.k, at);
        cr_assert(fabs(o.slope - 2.0) < 0.1, "hinge slope %g", o.slope);
    }
}

Test(analysis_trend, no_onset_in_a_line_noise_or_a_sawtooth)
{
    double x[N], y[N];
    steps(x, N);
    trend_onset_result o;
    for (size_t i = 0; i < N; i++)
        y[i] = 50.0 + 3.0 * (double)i;
    cr_assert_eq(trend_onset(x, y, N, 40, &o), 0);
    cr_assert_eq(o.k, 0, "a perfect line grows from its start");
    synth_rng r = { 3 };
    for (size_t i = 0; i < N; i++)
        y[i] = 50.0 + 3.0 * (double)i + 20.0 * synth_gauss(&r);
    cr_assert_eq(trend_onset(x, y, N, 40, &o), 0);
    cr_assert_eq(o.k, 0, "so does a noisy one (best candidate %zu)", o.best);
    for (size_t i = 0; i < N; i++) /* three teeth and the start of a fourth */
        y[i] = 1000.0 + 10.0 * fmod((double)i, 120.0);
    cr_assert_eq(trend_onset(x, y, N, 40, &o), 0);
    cr_assert_gt(o.best, 0, "the hinge prefers a tooth's foot");
    cr_assert_eq(o.k, 0, "but the teeth before it are not flat");
}

Test(analysis_trend, onset_leaves_the_growth_its_points)
{
    double x[N], y[N];
    steps(x, N);
    for (size_t i = 0; i < N; i++) /* growth only in the last 20 points */
        y[i] = i < N - 20 ? 0.0 : (double)(i - (N - 20));
    trend_onset_result o;
    cr_assert_eq(trend_onset(x, y, N, 80, &o), 0);
    cr_assert_leq(o.best, N - 80, "at least 80 points from the onset on");
    cr_assert_eq(trend_onset(x, y, 50, 80, &o), 0, "fewer points than asked: no search");
    cr_assert_eq(o.k, 0);
}

Test(analysis_trend, random_walks_are_not_trends)
{
    double x[N], y[N];
    steps(x, N);
    int plain_hits = 0, trend_hits = 0, as_increments = 0, runs = 1000;
    for (int s = 0; s < runs; s++) {
        synth_rng r = { (uint64_t)s + 5000 };
        double level = 0.0;
        for (size_t i = 0; i < N; i++)
            y[i] = level += synth_gauss(&r);
        stats_fit plain;
        trend_line t;
        cr_assert_eq(stats_linear_fit(x, y, N, &plain), 0);
        cr_assert_eq(trend_fit(x, y, N, &t), 0);
        plain_hits += plain.p_value < 0.01;
        trend_hits += t.fit.p_value < 0.01;
        as_increments += t.increments;
    }
    /* a random walk wanders: least squares calls most of them trends */
    cr_assert_gt(plain_hits, 500, "least squares alone: %d of %d", plain_hits, runs);
    cr_assert_gt(as_increments, 900, "the unit root is kept: %d of %d", as_increments, runs);
    cr_assert_leq(trend_hits, 50, "tested as increments: %d of %d", trend_hits, runs);
}

Test(analysis_trend, growth_by_regular_increments_is_found)
{
    /* memory sampled on a timer while a leak adds about 1 a step at a rate
     * that wanders: the level strays from any line, the increments do not */
    double x[N], y[N];
    steps(x, N);
    synth_rng r = { 77 };
    double level = 1000.0, rate = 1.0;
    for (size_t i = 0; i < N; i++) {
        rate = 1.0 + 0.9 * (rate - 1.0) + 0.05 * synth_gauss(&r);
        y[i] = level += rate + 0.1 * synth_gauss(&r);
    }
    trend_line t;
    cr_assert_eq(trend_fit(x, y, N, &t), 0);
    cr_assert(t.increments, "a sum of increments (tau %g)", t.df_tau);
    cr_assert(fabs(t.fit.slope - 1.0) < 0.05, "slope %g", t.fit.slope);
    cr_assert_lt(t.fit.p_value, 1e-10);
    cr_assert_lt(t.fit.ci95, 0.1);
}

/* A sum of increments sampled unevenly: runs of samples 20 ms apart, each
 * followed by 1-8 s in which the process is off the CPU and neither samples
 * nor grows. Plain least squares of the increments on their spans lets the
 * long spans decide (they say: no growth); the increments' variance grows
 * with their span, so the slope is the rise over the span. */
Test(analysis_trend, increments_sampled_unevenly_are_weighed_by_their_span)
{
    double x[N], y[N];
    synth_rng r = { 91 };
    double t = 0.0, level = 100.0;
    for (size_t i = 0; i < N; i++) {
        x[i] = t;
        y[i] = level + 0.01 * synth_gauss(&r);
        double dx = i % 20 == 19 ? 1.0 + 7.0 * synth_uniform(&r) : 0.02;
        if (dx < 0.5)
            level += 0.5 * dx; /* 0.5 a second while running */
        t += dx;
    }
    trend_line tl;
    cr_assert_eq(trend_fit(x, y, N, &tl), 0);
    double rise = (y[N - 1] - y[0]) / (x[N - 1] - x[0]);
    cr_assert(tl.increments, "a staircase keeps its unit root (tau %g)", tl.df_tau);
    cr_assert(fabs(tl.fit.slope - rise) < 1e-9 * rise, "slope %g, rise per unit x %g",
              tl.fit.slope, rise);
    cr_assert_lt(tl.fit.p_value, 0.01, "p %g", tl.fit.p_value);

    /* evenly spaced, the same as least squares through the origin */
    double sxx = 0.0, sxy = 0.0;
    for (size_t i = 0; i < N; i++) {
        x[i] = (double)i;
        y[i] = (i ? y[i - 1] : 0.0) + 1.0 + synth_gauss(&r);
    }
    for (size_t i = 1; i < N; i++) {
        sxx += 1.0;
        sxy += y[i] - y[i - 1];
    }
    cr_assert_eq(trend_fit(x, y, N, &tl), 0);
    if (tl.increments)
        cr_assert(fabs(tl.fit.slope - sxy / sxx) < 1e-9, "slope %g, %g", tl.fit.slope,
                  sxy / sxx);
}
