/* model_sketch.c - the quantile sketch keeps its documented bound: every
 * quantile it reports is within SKETCH_ALPHA of the exact (interpolated)
 * quantile, and is exact up to SKETCH_EXACT values, on uniform, lognormal,
 * heavy-tailed, bimodal, constant and all-zero data, few samples or many,
 * over many seeds; quantiles are ordered and within [min, max]; merging
 * equals sketching the union; memory follows the value range, not the
 * number of values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "model/sketch.h"
#include "synth.h"

#define N 100000

static const double qs[] = { 0.0,  0.001, 0.01, 0.05, 0.1,  0.25,  0.5,
                             0.75, 0.9,   0.95, 0.99, 0.999, 0.9999, 1.0 };

static int u64_cmp(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Exact quantile as formats/rules.md §2.4 defines it (as
 * gsl_stats_quantile_from_sorted_data): interpolated between ranks. */
static double exact_quantile(const uint64_t *sorted, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t i = (size_t)floor(h);
    if (i + 1 >= n)
        return (double)sorted[n - 1];
    double d = h - (double)i;
    return (1 - d) * (double)sorted[i] + d * (double)sorted[i + 1];
}

/* The relative error allowed: SKETCH_ALPHA with buckets, rounding only
 * while the values are kept exactly; 1e-9 for the rounding of log() at a
 * bucket boundary. */
static double allowed(size_t n)
{
    return (n <= SKETCH_EXACT ? 1e-12 : SKETCH_ALPHA) * (1 + 1e-9);
}

/* Quantiles never decrease with q and stay within [min, max], which q = 0
 * and q = 1 report exactly. */
static void check_order(const quantile_sketch *s, const uint64_t *sorted, size_t n,
                        const char *what)
{
    double prev = sketch_quantile(s, 0.0);
    cr_assert_eq(prev, (double)sorted[0], "%s: q0 is the min", what);
    cr_assert_eq(sketch_quantile(s, 1.0), (double)sorted[n - 1], "%s: q1 is the max", what);
    for (int k = 1; k <= 200; k++) {
        double x = sketch_quantile(s, k / 200.0);
        cr_assert_geq(x, prev, "%s: q%g < q%g", what, k / 200.0, (k - 1) / 200.0);
        cr_assert_leq(x, (double)sorted[n - 1], "%s: q%g past the max", what, k / 200.0);
        prev = x;
    }
}

static uint64_t exact_below(const uint64_t *sorted, size_t n, uint64_t limit)
{
    size_t k = 0;
    while (k < n && sorted[k] < limit)
        k++;
    return k;
}

/* sketch_count_below: exact while the values are kept; from buckets, it
 * counts every value below limit / gamma and none at or above limit; and
 * exact past either end. sorted holds the values sketched. */
static void check_count_below(const quantile_sketch *s, const uint64_t *sorted, size_t n,
                              const char *what)
{
    for (size_t k = 0; k <= 40; k++) {
        if (k == 40 && sorted[n - 1] == UINT64_MAX)
            break;
        uint64_t limit = k == 40 ? sorted[n - 1] + 1 : sorted[k * (n - 1) / 39];
        uint64_t got = sketch_count_below(s, limit), exact = exact_below(sorted, n, limit);
        if (n <= SKETCH_EXACT || limit <= sorted[0] || limit > sorted[n - 1]) {
            cr_assert_eq(got, exact, "%s (n %zu): below %llu", what, n,
                         (unsigned long long)limit);
            continue;
        }
        uint64_t low = exact_below(sorted, n, (uint64_t)((double)limit / SKETCH_GAMMA));
        cr_assert(got >= low && got <= exact, "%s (n %zu): %llu below %llu, not in [%llu, %llu]",
                  what, n, (unsigned long long)got, (unsigned long long)limit,
                  (unsigned long long)low, (unsigned long long)exact);
    }
}

/* Sketches v, then checks every quantile in qs against the exact one and
 * their order, and counts below limits. Returns the largest relative
 * error seen. */
static double check_bound(uint64_t *v, size_t n, const char *what)
{
    quantile_sketch s;
    double worst = 0;
    sketch_init(&s);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(sketch_add(&s, v[i]), 0);
    cr_assert_eq(s.count, (uint64_t)n);
    qsort(v, n, sizeof *v, u64_cmp);
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        double want = exact_quantile(v, n, qs[k]), got = sketch_quantile(&s, qs[k]);
        double err = want > 0 ? fabs(got - want) / want : fabs(got);
        cr_assert_leq(fabs(got - want), allowed(n) * want,
                      "%s (n %zu): q%g is %.17g, exact %.17g (error %.3g%%)", what, n, qs[k],
                      got, want, 100 * err);
        worst = err > worst ? err : worst;
    }
    check_order(&s, v, n, what);
    check_count_below(&s, v, n, what);
    sketch_free(&s);
    return worst;
}

Test(model_sketch, uniform)
{
    synth_rng r = { 1 };
    uint64_t *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < N; i++)
        v[i] = 1 + (uint64_t)(synth_uniform(&r) * 1e6);
    check_bound(v, N, "uniform 1..1e6");
    for (size_t i = 0; i < N; i++) /* small integers: every bucket holds one value */
        v[i] = 1 + synth_rand(&r) % 200;
    check_bound(v, N, "uniform 1..200");
    free(v);
}

Test(model_sketch, lognormal)
{
    synth_rng r = { 2 };
    uint64_t *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < N; i++) /* median ~ 1 ms, σ = 1.5 decades-ish */
        v[i] = 1 + (uint64_t)exp(log(1e6) + 1.5 * synth_gauss(&r));
    check_bound(v, N, "lognormal");
    free(v);
}

Test(model_sketch, heavy_tailed)
{
    synth_rng r = { 3 };
    uint64_t *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < N; i++) { /* Pareto, shape 1.1: rare huge values */
        double x = 1000.0 / pow(1.0 - synth_uniform(&r), 1.0 / 1.1);
        v[i] = x > 1e18 ? (uint64_t)1e18 : (uint64_t)x;
    }
    check_bound(v, N, "pareto");
    free(v);
}

Test(model_sketch, constant_zeros_and_extremes)
{
    uint64_t *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < N; i++)
        v[i] = 123456789;
    check_bound(v, N, "constant");
    for (size_t i = 0; i < N; i++)
        v[i] = 0;
    check_bound(v, N, "zeros");
    for (size_t i = 0; i < N; i++) /* zeros mixed with values, and the extremes */
        v[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : UINT64_MAX - i;
    check_bound(v, N, "mixed");
    free(v);

    quantile_sketch s;
    sketch_init(&s);
    cr_assert_eq(sketch_quantile(&s, 0.5), 0.0, "empty sketch");
    cr_assert_eq(sketch_add(&s, 0), 0);
    cr_assert_eq(sketch_quantile(&s, 0.5), 0.0);
    cr_assert_eq(sketch_add(&s, 1000), 0);
    cr_assert_eq(sketch_quantile(&s, 1.5), sketch_quantile(&s, 1.0), "q clamped to [0, 1]");
    cr_assert_eq(sketch_quantile(&s, -1), 0.0);
    cr_assert_eq(sketch_quantile(&s, NAN), 0.0);
    sketch_free(&s);
    cr_assert_null(s.bins);
    sketch_free(&s); /* harmless twice */
}

/* Durations of the shapes a profile holds, around 100 us. */
typedef enum { LOGNORMAL, PARETO, BIMODAL, RARE_SLOW, NSHAPES } shape;
static const char *const shape_names[] = { "lognormal", "pareto", "bimodal", "rare slow" };

static uint64_t draw(synth_rng *r, shape k)
{
    double x;
    switch (k) {
    case LOGNORMAL: /* sigma 1: p99 ten times the median */
        x = exp(log(1e5) + synth_gauss(r));
        break;
    case PARETO: /* shape 1.1: the mean is dominated by rare huge calls */
        x = 2e4 / pow(1.0 - synth_uniform(r), 1.0 / 1.1);
        break;
    case BIMODAL: /* two paths of one operation, 60/40 (a cache hit and a miss) */
        x = synth_uniform(r) < 0.6 ? 1.6e5 * (1 + 0.05 * synth_gauss(r))
                                   : 4.4e5 * (1 + 0.05 * synth_gauss(r));
        break;
    default: /* 2% of calls 50x slower (a first call, a periodic flush) */
        x = synth_uniform(r) < 0.02 ? 5e6 : 1e5 * (1 + 0.1 * synth_gauss(r));
        break;
    }
    return x < 1 ? 1 : x > 1e15 ? (uint64_t)1e15 : (uint64_t)x;
}

/* Few calls: every count from 1 to 40, and the last exact count, over
 * many seeds: the quantiles are the exact interpolated ones. */
Test(model_sketch, few_samples_are_exact)
{
    static const size_t extra[] = { 64, SKETCH_EXACT - 1, SKETCH_EXACT };
    uint64_t v[SKETCH_EXACT];
    for (int seed = 1; seed <= 50; seed++)
        for (shape k = 0; k < NSHAPES; k++)
            for (size_t j = 0; j < 40 + sizeof extra / sizeof extra[0]; j++) {
                size_t n = j < 40 ? j + 1 : extra[j - 40];
                synth_rng r = { (uint64_t)seed * 7919 + k };
                for (size_t i = 0; i < n; i++)
                    v[i] = draw(&r, k);
                check_bound(v, n, shape_names[k]);
            }
}

/* Past SKETCH_EXACT: skewed and bimodal data at several counts and many
 * seeds stay within SKETCH_ALPHA. */
Test(model_sketch, skewed_and_bimodal_within_bound)
{
    static const size_t counts[] = { SKETCH_EXACT + 1, 200, 1000, 10000 };
    uint64_t *v = malloc(10000 * sizeof *v);
    cr_assert_not_null(v);
    for (int seed = 1; seed <= 50; seed++)
        for (shape k = 0; k < NSHAPES; k++)
            for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
                synth_rng r = { (uint64_t)seed * 104729 + k };
                for (size_t i = 0; i < counts[j]; i++)
                    v[i] = draw(&r, k);
                check_bound(v, counts[j], shape_names[k]);
            }
    free(v);
}

/* Two calls, 160 us and 443 us (mean 302 us): p95 and p99 lie between
 * them, near the longer one, never at the shorter. */
Test(model_sketch, two_calls_interpolate)
{
    quantile_sketch s;
    sketch_init(&s);
    cr_assert_eq(sketch_add(&s, 443400), 0);
    cr_assert_eq(sketch_add(&s, 160090), 0);
    cr_assert_float_eq(sketch_quantile(&s, 0.50), 301745.0, 1e-6);
    cr_assert_float_eq(sketch_quantile(&s, 0.95), 160090 + 0.95 * 283310, 1e-6);
    cr_assert_float_eq(sketch_quantile(&s, 0.99), 160090 + 0.99 * 283310, 1e-6);
    sketch_free(&s);
}

/* Merging across the switch to buckets: kept + kept (under and past
 * SKETCH_EXACT), kept into buckets and buckets into kept values all give
 * the quantiles of adding the union one value at a time. */
Test(model_sketch, merge_across_modes)
{
    static const size_t sizes[][2] = { { 10, 20 }, { 100, 28 }, { 100, 29 }, { 0, 50 },
                                       { 50, 0 }, { 40, 500 }, { 500, 40 }, { 300, 300 } };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        synth_rng r = { 40 + t };
        quantile_sketch a, b, all;
        sketch_init(&a);
        sketch_init(&b);
        sketch_init(&all);
        for (size_t i = 0; i < sizes[t][0] + sizes[t][1]; i++) {
            uint64_t x = i % 7 == 0 ? 0 : draw(&r, (shape)(i % NSHAPES));
            cr_assert_eq(sketch_add(i < sizes[t][0] ? &a : &b, x), 0);
            cr_assert_eq(sketch_add(&all, x), 0);
        }
        cr_assert_eq(sketch_merge(&a, &b), 0);
        cr_assert_eq(a.count, all.count);
        cr_assert_eq(a.min, all.min);
        cr_assert_eq(a.max, all.max);
        for (int k = 0; k <= 100; k++)
            cr_assert_float_eq(sketch_quantile(&a, k / 100.0), sketch_quantile(&all, k / 100.0),
                               1e-9 * sketch_quantile(&all, k / 100.0), "sizes %zu+%zu q%g",
                               sizes[t][0], sizes[t][1], k / 100.0);
        sketch_free(&a);
        sketch_free(&b);
        sketch_free(&all);
    }
}

/* The literal constants of sketch.c agree with SKETCH_ALPHA, and each
 * bucket's value is within the bound of both ends of the bucket. */
Test(model_sketch, buckets)
{
    double gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);
    cr_assert_float_eq(sketch_bucket_value(1) / sketch_bucket_value(0), gamma, 1e-12);
    cr_assert_float_eq(sketch_bucket_value(0), 2 / (gamma + 1), 1e-12);
    for (int32_t i = 0; i < 2300; i += 7) {
        double lo = pow(gamma, i - 1), hi = pow(gamma, i), x = sketch_bucket_value(i);
        cr_assert_leq(fabs(x - lo), SKETCH_ALPHA * lo * (1 + 1e-9));
        cr_assert_leq(fabs(x - hi), SKETCH_ALPHA * hi * (1 + 1e-9));
    }
    cr_assert_eq(sketch_bucket(1), 0);
    cr_assert_lt(sketch_bucket(UINT64_MAX), 2300, "the uint64 range needs < 2300 buckets");
    for (uint64_t v = 1; v < 100000; v += v / 3 + 1) {
        int32_t i = sketch_bucket(v);
        cr_assert_leq(fabs(sketch_bucket_value(i) - (double)v), SKETCH_ALPHA * (double)v * (1 + 1e-9),
                      "value %llu", (unsigned long long)v);
    }
}

/* sketch_bucket avoids log(), but its index is the defined one,
 * ceil(ln(v) / ln(gamma)), for every value: all small ones, the integers
 * around every bucket boundary, the ends of every 64th of a binade and
 * the values either side of the boundary its table entry holds, and
 * values spread over the uint64 range. */
Test(model_sketch, bucket_is_the_log_formula)
{
    const double inv_ln_gamma = SKETCH_INV_LN_GAMMA;
    double gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);
    cr_assert_float_eq(inv_ln_gamma * log(gamma), 1.0, 1e-14, "1 / ln(gamma) as a literal");
    for (unsigned e = 7; e <= 63; e++)
        for (uint64_t sub = 0; sub < 64; sub++) {
            uint64_t lo = (64 + sub) << (e - 6), hi = lo + ((UINT64_C(1) << (e - 6)) - 1);
            uint64_t last = sketch_sub_last[(e - 7) * 64 + sub];
            cr_assert(last >= lo && last <= hi, "entry of [%llu, %llu]", (unsigned long long)lo,
                      (unsigned long long)hi);
            uint64_t at[] = { lo, lo + 1, last - 1, last, last + 1, hi - 1, hi };
            for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
                if (at[k] >= lo && at[k] <= hi)
                    cr_assert_eq(sketch_bucket(at[k]), sketch_bucket_by_log(at[k]), "value %llu",
                                 (unsigned long long)at[k]);
        }
    for (uint64_t v = 1; v <= 1000000; v++)
        cr_assert_eq(sketch_bucket(v), (int32_t)ceil(log((double)v) * inv_ln_gamma),
                     "value %llu", (unsigned long long)v);
    for (int32_t i = 0; i < 2240; i++) {
        double b = pow(gamma, i);
        if (b > 1.8e19)
            break;
        uint64_t c = (uint64_t)b;
        for (uint64_t v = c > 3 ? c - 3 : 1; v <= c + 3 && v >= 1; v++)
            cr_assert_eq(sketch_bucket(v), (int32_t)ceil(log((double)v) * inv_ln_gamma),
                         "value %llu", (unsigned long long)v);
    }
    synth_rng r = { 11 };
    for (int k = 0; k < 1000000; k++) {
        uint64_t v = synth_rand(&r) >> (synth_rand(&r) % 64);
        if (v)
            cr_assert_eq(sketch_bucket(v), (int32_t)ceil(log((double)v) * inv_ln_gamma),
                         "value %llu", (unsigned long long)v);
    }
    cr_assert_eq(sketch_bucket(UINT64_MAX),
                 (int32_t)ceil(log((double)UINT64_MAX) * inv_ln_gamma));
}

Test(model_sketch, merge_equals_union)
{
    synth_rng r = { 4 };
    quantile_sketch a, b, all, empty;
    sketch_init(&a);
    sketch_init(&b);
    sketch_init(&all);
    sketch_init(&empty);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = (uint64_t)exp(5 + 3 * synth_uniform(&r)), y = 1 + synth_rand(&r) % 100;
        cr_assert_eq(sketch_add(&a, x), 0);
        cr_assert_eq(sketch_add(&b, y), 0);
        cr_assert_eq(sketch_add(&all, x), 0);
        cr_assert_eq(sketch_add(&all, y), 0);
        if (i % 50 == 0) {
            cr_assert_eq(sketch_add(&b, 0), 0);
            cr_assert_eq(sketch_add(&all, 0), 0);
        }
    }
    cr_assert_eq(sketch_merge(&a, &b), 0);
    cr_assert_eq(sketch_merge(&a, &empty), 0);
    cr_assert_eq(sketch_merge(&empty, &a), 0, "into an empty sketch");
    cr_assert_eq(a.count, all.count);
    cr_assert_eq(a.zeros, all.zeros);
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        cr_assert_eq(sketch_quantile(&a, qs[k]), sketch_quantile(&all, qs[k]), "q%g", qs[k]);
        cr_assert_eq(sketch_quantile(&empty, qs[k]), sketch_quantile(&all, qs[k]), "q%g", qs[k]);
    }
    sketch_free(&a);
    sketch_free(&b);
    sketch_free(&all);
    sketch_free(&empty);
}

/* A copy holds the same values, bucket for bucket, in memory of its own:
 * empty, exact and in buckets. */
Test(model_sketch, copy_is_the_same_and_its_own)
{
    static const size_t sizes[] = { 0, 50, 5000 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        synth_rng r = { 9 + k };
        quantile_sketch a, c;
        sketch_init(&a);
        for (size_t i = 0; i < sizes[k]; i++)
            cr_assert_eq(sketch_add(&a, i % 40 ? 1 + synth_rand(&r) % 100000 : 0), 0);
        cr_assert_eq(sketch_copy(&c, &a), 0);
        cr_assert(c.count == a.count && c.zeros == a.zeros && c.min == a.min &&
                  c.max == a.max && c.lo == a.lo && c.nbins == a.nbins);
        cr_assert((c.bins == NULL) == (a.bins == NULL) && (c.exact == NULL) == (a.exact == NULL));
        cr_assert(!a.bins || (c.bins != a.bins && !memcmp(c.bins, a.bins, a.nbins * 8)));
        cr_assert(!a.exact || (c.exact != a.exact && !memcmp(c.exact, a.exact, a.count * 8)));
        for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++)
            cr_assert_eq(sketch_quantile(&c, qs[q]), sketch_quantile(&a, qs[q]));
        for (int i = 0; i < 300; i++) /* each goes on alone */
            cr_assert_eq(sketch_add(&c, 7), 0);
        cr_assert_eq(c.count, a.count + 300);
        sketch_free(&a);
        sketch_free(&c);
    }
}

/* Memory follows log(max / min): a million values within a factor of two
 * need a few dozen buckets. */
Test(model_sketch, memory_follows_range)
{
    synth_rng r = { 5 };
    quantile_sketch s;
    sketch_init(&s);
    for (int i = 0; i < 1000000; i++)
        cr_assert_eq(sketch_add(&s, 1000000 + synth_rand(&r) % 1000000), 0);
    cr_assert_leq(s.nbins, 100u, "%u buckets for values within a factor of 2", s.nbins);
    sketch_free(&s);
}
