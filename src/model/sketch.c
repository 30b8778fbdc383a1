/* sketch.c - the logarithmic-bucket quantile sketch of sketch.h: one
 * contiguous array of counts over the bucket indexes seen so far, grown
 * at either end as values arrive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/sketch.h"

/* gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA) and 1 / ln(gamma), as
 * literals; tests check them. */
#define SKETCH_GAMMA 1.02020202020202
#define SKETCH_INV_LN_GAMMA 49.99833328888678

void sketch_init(quantile_sketch *s)
{
    memset(s, 0, sizeof *s);
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

int sketch_add(quantile_sketch *s, uint64_t value)
{
    if (value == 0) {
        s->zeros++;
        s->count++;
        return 0;
    }
    int32_t i = sketch_bucket(value);
    if ((i < s->lo || i >= s->lo + (int32_t)s->nbins) && sketch_reserve(s, i, i) < 0)
        return -1;
    s->bins[i - s->lo]++;
    s->count++;
    return 0;
}

int sketch_merge(quantile_sketch *into, const quantile_sketch *from)
{
    if (from->nbins) {
        /* Only the buckets that hold counts need room. */
        uint32_t a = 0, b = from->nbins;
        while (a < b && !from->bins[a])
            a++;
        while (b > a && !from->bins[b - 1])
            b--;
        if (a < b) {
            if (sketch_reserve(into, from->lo + (int32_t)a, from->lo + (int32_t)b - 1) < 0)
                return -1;
            for (uint32_t k = a; k < b; k++)
                into->bins[from->lo + (int32_t)k - into->lo] += from->bins[k];
        }
    }
    into->zeros += from->zeros;
    into->count += from->count;
    return 0;
}

double sketch_quantile(const quantile_sketch *s, double q)
{
    if (s->count == 0)
        return 0.0;
    if (!(q > 0.0)) /* also NaN */
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)floor(q * (double)(s->count - 1));
    if (rank >= s->count)
        rank = s->count - 1;
    if (rank < s->zeros)
        return 0.0;
    uint64_t seen = s->zeros;
    for (uint32_t k = 0; k < s->nbins; k++) {
        seen += s->bins[k];
        if (seen > rank)
            return sketch_bucket_value(s->lo + (int32_t)k);
    }
    return 0.0; /* unreachable while the counts add up */
}

void sketch_free(quantile_sketch *s)
{
    free(s->bins);
    memset(s, 0, sizeof *s);
}
