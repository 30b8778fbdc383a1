/* sketch.c - the logarithmic-bucket quantile sketch of sketch.h: one
 * contiguous array of counts over the bucket indexes seen so far, grown
 * at either end as values arrive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/sketch.h"

/* gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA) and 1 / ln(gamma), as
 * literals so that adding a value costs one log(); tests check them. */
#define SKETCH_GAMMA 1.02020202020202
#define SKETCH_INV_LN_GAMMA 49.99833328888678

void sketch_init(quantile_sketch *s)
{
    memset(s, 0, sizeof *s);
}

int32_t sketch_bucket(uint64_t value)
{
    return (int32_t)ceil(log((double)value) * SKETCH_INV_LN_GAMMA);
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
