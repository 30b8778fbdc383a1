/* sketch.c - the quantile sketch of sketch.h: the first SKETCH_EXACT
 * values as they are, then one contiguous array of counts over the bucket
 * indexes seen so far, grown at either end as values arrive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/sketch.h"
#include "util/vec.h"

void sketch_init(quantile_sketch *s)
{
    memset(s, 0, sizeof *s);
}

/* Whether s still holds its values (sketch.h: while count <= SKETCH_EXACT). */
static int sketch_is_exact(const quantile_sketch *s)
{
    return s->count <= SKETCH_EXACT;
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

uint64_t sketch_count_below(const quantile_sketch *s, uint64_t limit)
{
    if (s->count == 0 || limit <= s->min)
        return 0;
    if (limit > s->max)
        return s->count;
    uint64_t n = 0;
    if (sketch_is_exact(s)) {
        for (uint64_t k = 0; k < s->count; k++)
            n += s->exact[k] < limit;
        return n;
    }
    n = s->zeros;
    int32_t last = sketch_bucket(limit);
    for (uint32_t k = 0; k < s->nbins && s->lo + (int32_t)k < last; k++)
        n += s->bins[k];
    return n;
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

int sketch_copy(quantile_sketch *into, const quantile_sketch *from)
{
    quantile_sketch c = *from;
    c.exact = NULL;
    c.bins = NULL;
    if (from->exact && !(c.exact = malloc(from->exact_cap * sizeof *c.exact)))
        return -1;
    if (from->bins && !(c.bins = malloc(from->nbins * sizeof *c.bins))) {
        free(c.exact);
        return -1;
    }
    if (c.exact)
        memcpy(c.exact, from->exact, from->count * sizeof *c.exact);
    if (c.bins)
        memcpy(c.bins, from->bins, from->nbins * sizeof *c.bins);
    *into = c;
    return 0;
}

void sketch_free(quantile_sketch *s)
{
    free(s->exact);
    free(s->bins);
    memset(s, 0, sizeof *s);
}
