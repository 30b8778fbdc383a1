/* sketch.c - the quantile sketch of sketch.h: the first SKETCH_EXACT
 * values as they are, then one contiguous array of counts over the bucket
 * indexes seen so far, grown at either end as values arrive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/sketch.h"
#include "util/vec.h"

/* gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA) and 1 / ln(gamma), as
 * literals; tests check them. */
#define SKETCH_GAMMA 1.02020202020202
#define SKETCH_INV_LN_GAMMA 49.99833328888678

void sketch_init(quantile_sketch *s)
{
    memset(s, 0, sizeof *s);
}

/* Whether s still holds its values (sketch.h: while count <= SKETCH_EXACT). */
static int sketch_is_exact(const quantile_sketch *s)
{
    return s->count <= SKETCH_EXACT;
}

/* The definition of the bucket index; sketch_bucket computes the same. */
static int32_t bucket_by_log(double v)
{
    return (int32_t)ceil(log(v) * SKETCH_INV_LN_GAMMA);
}

/* The index below is computed without log(): v = 2^e * m with m in [1, 2),
 * m = c_k * (1 + r) where c_k is the middle of the 64th of [1, 2) that m
 * falls in, so |r| < 1/128, and
 *   ln(v) / ln(gamma) = e * ln(2) / ln(gamma) - ln(1 / c_k) / ln(gamma) + ln(1 + r) / ln(gamma)
 * with ln(1 + r) = r - r^2/2 + r^3/3 - r^4/4 to within 6e-12. The tables
 * hold 1 / c_k (as rounded to a double) and -ln of that double over
 * ln(gamma), computed to 50 digits. */
static const double sketch_inv_c[64] = {
    0.9922480620155039, 0.9770992366412213, 0.9624060150375939, 0.9481481481481482,
    0.9343065693430657, 0.920863309352518, 0.9078014184397163, 0.8951048951048951,
    0.8827586206896552, 0.8707482993197279, 0.8590604026845637, 0.847682119205298,
    0.8366013071895425, 0.8258064516129032, 0.8152866242038217, 0.8050314465408805,
    0.7950310559006211, 0.7852760736196319, 0.7757575757575758, 0.7664670658682635,
    0.757396449704142, 0.7485380116959064, 0.7398843930635838, 0.7314285714285714,
    0.7231638418079096, 0.7150837988826816, 0.7071823204419889, 0.6994535519125683,
    0.6918918918918919, 0.6844919786096256, 0.6772486772486772, 0.6701570680628273,
    0.6632124352331606, 0.6564102564102564, 0.649746192893401, 0.6432160804020101,
    0.6368159203980099, 0.6305418719211823, 0.624390243902439, 0.6183574879227053,
    0.6124401913875598, 0.6066350710900474, 0.6009389671361502, 0.5953488372093023,
    0.5898617511520737, 0.5844748858447488, 0.579185520361991, 0.5739910313901345,
    0.5688888888888889, 0.5638766519823789, 0.5589519650655022, 0.5541125541125541,
    0.5493562231759657, 0.5446808510638298, 0.540084388185654, 0.5355648535564853,
    0.5311203319502075, 0.5267489711934157, 0.5224489795918368, 0.5182186234817814,
    0.5140562248995983, 0.5099601593625498, 0.5059288537549407, 0.5019607843137255,
};

static const double sketch_ln_c[64] = { /* -ln(sketch_inv_c[k]) / ln(gamma) */
    0.38909405152278875, 1.1583143512815557, 1.9158793486298544, 2.6621369827165458,
    3.3974198413020353, 4.122046050774038, 4.8363201025841605, 5.540533621478622,
    6.234966080374388, 6.919885466266354, 7.595548901136579, 8.262203221465759,
    8.92008551961552, 9.569423650052965, 10.21043670312215, 10.843335448827581,
    11.468322752878965, 12.08559396705216, 12.695337295745881, 13.297734140454903,
    13.892959423737516, 14.48118189412463, 15.062564413300434, 15.637264226777258,
    16.205433219190184, 16.76721815524829, 17.322760907298935, 17.872198670387636,
    18.415664165629313, 18.95328583264486, 19.48518801176113, 20.01149111662099,
    20.53231179780269, 21.047763098004776, 21.55795459931303, 22.062992563029287,
    22.56298006250843, 23.058017109418966, 23.548200773814095, 24.03362529837374,
    24.514382207153965, 24.990560409157577, 25.462246297019142, 25.929523841078275,
    26.392474679097546, 26.851178201864716, 27.305711634903744, 27.756150116505054,
    28.202566772272032, 28.645032786369026, 29.08361746964421, 29.51838832479046,
    29.94941110869758, 30.376749892139646, 30.800467116933273, 31.220623650694087,
    31.63727883931164, 32.0504905572559, 32.46031525582183, 32.86680800941285,
    33.27002255995787, 33.670011359551665, 34.066825611403075, 34.46051530917101,
};

#define SKETCH_LN2_OVER_LN_GAMMA 34.65620375188833

/* ln(v) / ln(gamma) for v >= 1 to within 1e-9 (tests compare it with
 * log() over the whole range through sketch_bucket). */
static double log_gamma_approx(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)(bits >> 52) - 1023;
    unsigned k = (unsigned)(bits >> 46) & 63u;
    uint64_t mbits = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1023) << 52);
    double m;
    memcpy(&m, &mbits, sizeof m);
    double r = m * sketch_inv_c[k] - 1.0, r2 = r * r;
    double ln1p = (r - 0.5 * r2) + r2 * r * (1.0 / 3 - 0.25 * r);
    return ((double)e * SKETCH_LN2_OVER_LN_GAMMA + sketch_ln_c[k]) + ln1p * SKETCH_INV_LN_GAMMA;
}

/* ceil(ln(v) / ln(gamma)) from log_gamma_approx: where the value lies
 * farther than 1e-6 from an integer, its ceiling is that of the exact
 * formula. Closer than that (a few values in a million), the exact formula
 * decides. */
int32_t sketch_bucket(uint64_t value)
{
    double v = (double)value, x = log_gamma_approx(v);
    int32_t i = (int32_t)x; /* x >= 0: truncation is floor */
    double frac = x - (double)i;
    if (frac < 1e-6 || frac > 1.0 - 1e-6)
        return bucket_by_log(v);
    return i + 1;
}

double sketch_bucket_value(int32_t index)
{
    return 2.0 * pow(SKETCH_GAMMA, (double)index) / (SKETCH_GAMMA + 1.0);
}

/* Makes room for bucket indexes [a, b] (a <= b), keeping the counts. */
static int sketch_reserve(quantile_sketch *s, int32_t a, int32_t b)
{
    if (s->nbins && a >= s->lo && b < s->lo + (int32_t)s->nbins)
        return 0;
    int32_t lo = s->nbins && s->lo < a ? s->lo : a;
    int32_t hi = s->nbins && s->lo + (int32_t)s->nbins - 1 > b ? s->lo + (int32_t)s->nbins - 1 : b;
    /* Slack of a quarter on the side that grew, so a drifting range does not
     * reallocate on every new bucket. */
    int32_t slack = (hi - lo + 1) / 4 + 8;
    if (!s->nbins || a < s->lo)
        lo -= slack;
    if (!s->nbins || b >= s->lo + (int32_t)s->nbins)
        hi += slack;
    uint32_t n = (uint32_t)(hi - lo + 1);
    uint64_t *bins = calloc(n, sizeof *bins);
    if (!bins)
        return -1;
    if (s->nbins)
        memcpy(bins + (s->lo - lo), s->bins, s->nbins * sizeof *bins);
    free(s->bins);
    s->bins = bins;
    s->lo = lo;
    s->nbins = n;
    return 0;
}

/* Counts value in its bucket (or as a zero), without touching count. */
static int bucket_add(quantile_sketch *s, uint64_t value)
{
    if (value == 0) {
        s->zeros++;
        return 0;
    }
    int32_t i = sketch_bucket(value);
    if ((i < s->lo || i >= s->lo + (int32_t)s->nbins) && sketch_reserve(s, i, i) < 0)
        return -1;
    s->bins[i - s->lo]++;
    return 0;
}

/* Keeps value as it is; the array doubles up to SKETCH_EXACT, so an
 * operation called a few times holds a few values. */
static int exact_add(quantile_sketch *s, uint64_t value)
{
    if (vec_grow(&s->exact, &s->exact_cap, (size_t)s->count, sizeof *s->exact) < 0)
        return -1;
    s->exact[s->count] = value;
    return 0;
}

/* Moves the kept values into buckets, once count is about to pass
 * SKETCH_EXACT. */
static int exact_to_buckets(quantile_sketch *s)
{
    for (uint64_t k = 0; k < s->count; k++)
        if (bucket_add(s, s->exact[k]) < 0)
            return -1;
    free(s->exact);
    s->exact = NULL;
    s->exact_cap = 0;
    return 0;
}

static void minmax_add(quantile_sketch *s, uint64_t lo, uint64_t hi)
{
    if (s->count == 0 || lo < s->min)
        s->min = lo;
    if (hi > s->max)
        s->max = hi;
}

int sketch_add_slow(quantile_sketch *s, uint64_t value)
{
    if (s->count < SKETCH_EXACT) {
        if (exact_add(s, value) < 0)
            return -1;
    } else {
        if (s->count == SKETCH_EXACT && exact_to_buckets(s) < 0)
            return -1;
        if (bucket_add(s, value) < 0)
            return -1;
    }
    minmax_add(s, value, value);
    s->count++;
    return 0;
}

/* Adds the counts of from (in bucket mode) to into (in bucket mode). */
static int bins_merge(quantile_sketch *into, const quantile_sketch *from)
{
    if (!from->nbins)
        return 0;
    /* Only the buckets that hold counts need room. */
    uint32_t a = 0, b = from->nbins;
    while (a < b && !from->bins[a])
        a++;
    while (b > a && !from->bins[b - 1])
        b--;
    if (a == b)
        return 0;
    if (sketch_reserve(into, from->lo + (int32_t)a, from->lo + (int32_t)b - 1) < 0)
        return -1;
    for (uint32_t k = a; k < b; k++)
        into->bins[from->lo + (int32_t)k - into->lo] += from->bins[k];
    return 0;
}

int sketch_merge(quantile_sketch *into, const quantile_sketch *from)
{
    if (sketch_is_exact(from)) { /* as if its values were added one by one */
        for (uint64_t k = 0; k < from->count; k++)
            if (sketch_add(into, from->exact[k]) < 0)
                return -1;
        return 0;
    }
    if (sketch_is_exact(into) && exact_to_buckets(into) < 0)
        return -1;
    if (bins_merge(into, from) < 0)
        return -1;
    minmax_add(into, from->min, from->max);
    into->zeros += from->zeros;
    into->count += from->count;
    return 0;
}

static int u64_cmp(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* The kept values of rank i and i + 1 (i + 1 < count), sorting a copy:
 * sketch_quantile is a query and leaves the sketch as it is. */
static void exact_ranks(const quantile_sketch *s, uint64_t i, double *x0, double *x1)
{
    uint64_t v[SKETCH_EXACT];
    memcpy(v, s->exact, s->count * sizeof *v);
    qsort(v, s->count, sizeof *v, u64_cmp);
    *x0 = (double)v[i];
    *x1 = (double)v[i + 1];
}

/* The value bucket index reports, clamped to the range of the values seen:
 * min and max are exact, so clamping only brings it nearer the truth. */
static double clamped(const quantile_sketch *s, int32_t index)
{
    double v = sketch_bucket_value(index), lo = (double)s->min, hi = (double)s->max;
    return v < lo ? lo : v > hi ? hi : v;
}

/* The values of rank i and i + 1 (i + 1 < count), from the buckets, but
 * for ranks 0 and count - 1, which are min and max. */
static void bucket_ranks(const quantile_sketch *s, uint64_t i, double *x0, double *x1)
{
    uint64_t seen = s->zeros;
    int got0 = i < seen;
    *x0 = *x1 = 0.0;
    for (uint32_t k = 0; k < s->nbins && seen <= i + 1; k++) {
        seen += s->bins[k];
        if (!got0 && seen > i) {
            *x0 = clamped(s, s->lo + (int32_t)k);
            got0 = 1;
        }
        if (seen > i + 1)
            *x1 = clamped(s, s->lo + (int32_t)k);
    }
    if (i == 0) /* the first and last ranks are known exactly */
        *x0 = (double)s->min;
    if (i + 2 == s->count)
        *x1 = (double)s->max;
}

double sketch_quantile(const quantile_sketch *s, double q)
{
    if (s->count == 0)
        return 0.0;
    if (!(q > 0.0)) /* also NaN */
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    if (s->count == 1)
        return (double)s->min;
    double h = q * (double)(s->count - 1);
    uint64_t i = (uint64_t)floor(h);
    if (i > s->count - 2) /* q = 1: the last rank, reached with weight 1 */
        i = s->count - 2;
    double frac = h - (double)i, x0, x1;
    if (sketch_is_exact(s))
        exact_ranks(s, i, &x0, &x1);
    else
        bucket_ranks(s, i, &x0, &x1);
    return x0 + frac * (x1 - x0);
}

void sketch_free(quantile_sketch *s)
{
    free(s->exact);
    free(s->bins);
    memset(s, 0, sizeof *s);
}
