/* leak_battery.c - the memory_leak rule (formats/rules.md §4.2) over the
 * generated classes of tests/support/leak_battery.h, many seeds each: per
 * class, how many cases it flags, its misses and false alarms, and for the
 * leaks it finds, how far the fitted slope is from the true one. Then the
 * calibration of its growth test (§2.6): how often it calls series without
 * growth - AR(1) noise, random walks - significant at 1%, against plain
 * least squares. Last, how the robust fit's reweighting converges on
 * series counted in whole chunks (§2.2): how many have not converged
 * after 100 iterations (GSL's default), after STATS_ROBUST_ITER and after
 * CONVERGENCE_FAR, and how far the slope after 100 and STATS_ROBUST_ITER
 * lies from the slope after CONVERGENCE_FAR.
 * usage: leak_battery [SEEDS [CLASS]]   (default 200 per class; CLASS: the
 * classes whose name starts with it, alone, without the calibration) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "analysis/stats.h"
#include "analysis/trend.h"
#include "leak_battery_eval.h"
#include "synth.h"

#define CALIBRATION_RUNS 2000
#define CONVERGENCE_RUNS 20000
#define CONVERGENCE_FAR 10000
#define CHUNKED_MAX_STEPS 210

/* Series of n without growth: AR(1) noise with coefficient phi, or (phi 1)
 * a random walk. */
static void no_growth(synth_rng *r, double phi, double *y, size_t n)
{
    double e = synth_gauss(r);
    for (size_t i = 0; i < n; i++) {
        e = phi < 1.0 ? phi * e + sqrt(1.0 - phi * phi) * synth_gauss(r) : e + synth_gauss(r);
        y[i] = e;
    }
}

static void calibration(void)
{
    static const struct { size_t n; double phi; } cases[] = {
        { 50, 0.7 }, { 100, 0.5 }, { 100, 0.9 }, { 400, 0.8 }, { 400, 0.95 }, { 400, 0.99 },
        { 2000, 0.99 }, { 1000, 0.999 }, { 12000, 0.99 }, { 400, 1.0 }, { 2000, 1.0 } };
    printf("\ngrowth test over %d series without growth each: called significant at p < 0.01\n\n",
           CALIBRATION_RUNS);
    printf("%-24s %15s %10s\n", "series", "least squares", "trend_fit");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n;
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        int plain = 0, trend = 0;
        for (size_t i = 0; i < n && x; i++)
            x[i] = (double)i;
        for (int s = 0; x && y && s < CALIBRATION_RUNS; s++) {
            synth_rng r = { (uint64_t)s * 7919u + c };
            no_growth(&r, cases[c].phi, y, n);
            stats_fit f;
            trend_line t;
            plain += stats_linear_fit(x, y, n, &f) == 0 && f.p_value < 0.01;
            trend += trend_fit(x, y, n, &t) == 0 && t.fit.p_value < 0.01;
        }
        char what[32];
        if (cases[c].phi < 1.0)
            snprintf(what, sizeof what, "AR(1) %.3g, n %zu", cases[c].phi, n);
        else
            snprintf(what, sizeof what, "random walk, n %zu", n);
        printf("%-24s %14.1f%% %9.2f%%\n", what, 100.0 * plain / CALIBRATION_RUNS,
               100.0 * trend / CALIBRATION_RUNS);
        free(x);
        free(y);
    }
}

/* A leak in whole chunks of 1-4 MiB: 10-210 steps of 1-21 MiB, noise of up
 * to half a step, and one step in twenty up to five steps' worth more. */
static size_t chunked_leak(synth_rng *r, double *y)
{
    size_t n = 10 + (size_t)(synth_uniform(r) * (CHUNKED_MAX_STEPS - 9));
    double slope = 1 + 20 * synth_uniform(r), chunk = (double)(1 + (int)(synth_uniform(r) * 4));
    double sd = 0.5 * slope * synth_uniform(r), v = 300;
    for (size_t i = 0; i < n; i++) {
        v += slope + sd * synth_gauss(r);
        if (synth_uniform(r) < 0.05)
            v += 5 * slope * synth_uniform(r);
        y[i] = chunk * round(v / chunk) * 1048576.0;
    }
    return n;
}

/* stats_robust_fit's slope after at most maxiter reweightings; *converged
 * says whether it stopped before the limit. */
static double bisquare_slope(const double *x, const double *y, size_t n, size_t maxiter,
                             int *converged)
{
    double slope, icpt;
    *converged = 0;
    return stats_robust_fit_limited(x, y, n, maxiter, &slope, &icpt, converged) == 0 ? slope
                                                                                   : NAN;
}

static double distance(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

static void convergence(void)
{
    unsigned open[3] = { 0 };
    double worst[2] = { 0 }, x[CHUNKED_MAX_STEPS], y[CHUNKED_MAX_STEPS];
    for (size_t i = 0; i < CHUNKED_MAX_STEPS; i++)
        x[i] = (double)i;
    gsl_error_handler_t *h = gsl_set_error_handler_off();
    for (int s = 0; s < CONVERGENCE_RUNS; s++) {
        synth_rng r = { (uint64_t)s * 104729u + 17u };
        size_t n = chunked_leak(&r, y);
        int done;
        double at100 = bisquare_slope(x, y, n, 100, &done);
        if (done)
            continue;
        open[0]++;
        double at_limit = bisquare_slope(x, y, n, STATS_ROBUST_ITER, &done);
        open[1] += !done;
        double far = bisquare_slope(x, y, n, CONVERGENCE_FAR, &done);
        open[2] += !done;
        worst[0] = fmax(worst[0], distance(at100, far));
        worst[1] = fmax(worst[1], distance(at_limit, far));
    }
    gsl_set_error_handler(h);
    printf("\nrobust fit over %d leaks of 10-210 steps in whole chunks (stats_robust_fit "
           "stops at %d)\n\n", CONVERGENCE_RUNS, STATS_ROBUST_ITER);
    printf("%-12s %14s %33s\n", "iterations", "not converged", "slope's largest distance");
    printf("%-12d %14u %33.3f%%\n", 100, open[0], 100 * worst[0]);
    printf("%-12d %14u %33.3f%%\n", STATS_ROBUST_ITER, open[1], 100 * worst[1]);
    printf("%-12d %14u %34s\n", CONVERGENCE_FAR, open[2], "(the reference)");
}

int main(int argc, char **argv)
{
    unsigned seeds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
    char dir[] = "/tmp/prof-leak-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return perror("leak_battery: mkdtemp"), 1;
    snprintf(path, sizeof path, "%s/case.prof", dir);
    printf("memory_leak over %u seeds per class (slope error: of the flagged leaks)\n\n", seeds);
    printf("%-24s %-5s %8s %7s %12s %15s %10s %6s\n", "class", "leak", "flagged", "misses",
           "false alarms", "slope off > lim", "max error", "limit");
    int bad = 0;
    const char *only = argc > 2 ? argv[2] : NULL;
    for (int c = 0; c < LB_CLASSES; c++) {
        if (only && strncmp(lb_name((lb_class)c), only, strlen(only)) != 0)
            continue;
        lb_tally t = lb_run((lb_class)c, seeds, path);
        int leak = lb_is_leak((lb_class)c);
        printf("%-24s %-5s %8u %7u %12u %15u %9.2f%% %5.0f%%\n", lb_name((lb_class)c),
               leak ? "yes" : "no", t.flagged, t.misses, t.false_alarms, t.slope_bad,
               100 * t.max_slope_err, 100 * t.tolerance);
        bad |= t.errors > 0;
    }
    unlink(path);
    rmdir(dir);
    if (!only) {
        calibration();
        convergence();
    }
    return bad;
}
