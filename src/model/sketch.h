/* sketch.h - a mergeable quantile sketch for durations: exact while it has
 * seen few values, then logarithmic buckets with a relative error bound
 * (gamma = (1 + a) / (1 - a), a = SKETCH_ALPHA). Memory is bounded by
 * SKETCH_EXACT values, then grows with log(max/min) of the values seen,
 * never with their number.
 *
 * Quantiles are those of formats/rules.md §2.4: linear interpolation
 * between the order statistics x_i and x_(i+1), i = floor(q (count - 1)),
 * as gsl_stats_quantile_from_sorted_data computes them.
 *
 * Up to SKETCH_EXACT values are kept as they are, and quantiles are exact.
 * The value that would exceed it moves them all to buckets: bucket i holds
 * the values v with gamma^(i-1) < v <= gamma^i and reports each as
 * 2 gamma^i / (gamma + 1), within a factor (1 ± a) of every value in the
 * bucket. An order statistic is read from the bucket that holds its rank
 * and clamped to the exact min and max (the first and last ranks are min
 * and max themselves), so it is within a of the exact one;
 * the interpolation weights are positive, so any reported quantile q_hat
 * satisfies |q_hat - q| <= SKETCH_ALPHA * q, and quantiles are ordered
 * (min <= p50 <= p95 <= max). Zeros are counted apart and reported exactly.
 * Values are integers (nanoseconds), so at most about 2,200 buckets exist
 * for the whole uint64 range (17 KiB); typical durations spanning three
 * decades need about 350. Merging two sketches gives the sketch of the
 * union of their values. */
#ifndef PROF_MODEL_SKETCH_H
#define PROF_MODEL_SKETCH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define SKETCH_ALPHA 0.01
/* gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA), as a literal; tests
 * check it. */
#define SKETCH_GAMMA 1.02020202020202
/* Values kept exactly before buckets take over: 1 KiB, less than the
 * buckets of three decades, and enough that an operation called once a
 * step for a hundred steps has exact quantiles. */
#define SKETCH_EXACT 128u

typedef struct quantile_sketch {
    uint64_t *exact;       /* the values, while count <= SKETCH_EXACT and
                              no bucket exists; NULL after                */
    size_t exact_cap;
    uint64_t *bins;        /* counts for bucket indexes [lo, lo + nbins)  */
    int32_t lo;
    uint32_t nbins;
    uint64_t zeros;        /* values equal to 0 (bucket mode)             */
    uint64_t count;
    uint64_t min, max;     /* of every value; 0 while empty               */
} quantile_sketch;

void sketch_init(quantile_sketch *s);
int sketch_add_slow(quantile_sketch *s, uint64_t value); /* sketch_add, every case */

/* The bucket of a value v >= 1, by definition: ceil(ln(v) / ln(gamma)),
 * computed in double as here (1 / ln(gamma) as a literal; tests check
 * it). */
#define SKETCH_INV_LN_GAMMA 49.99833328888678
static inline int32_t sketch_bucket_by_log(uint64_t v)
{
    return (int32_t)ceil(log((double)v) * SKETCH_INV_LN_GAMMA);
}

/* The same index without log(), from tables that tools/sketch_table.c
 * makes at build time from sketch_bucket_by_log itself: each value below
 * SKETCH_SMALL has its entry; above, each 64th of a binade [2^e, 2^(e+1))
 * spans less than a bucket (1/64 < a factor gamma - 1), so it holds at
 * most one bucket boundary, and its entry is the bucket of its first
 * value and the last value of that bucket inside it. Exact for every
 * value (tests compare with the definition), and a few integer operations
 * where the formula is a chain of floating-point ones. */
#define SKETCH_SMALL 128u
#define SKETCH_SUB_BINADES 57u   /* e = 7 .. 63 */
extern const int16_t sketch_small_bucket[SKETCH_SMALL];
extern const int16_t sketch_sub_bucket[SKETCH_SUB_BINADES * 64];
extern const uint64_t sketch_sub_last[SKETCH_SUB_BINADES * 64];

static inline int32_t sketch_bucket(uint64_t value)
{
    if (value < SKETCH_SMALL)
        return sketch_small_bucket[value];
    unsigned e = 63u - (unsigned)__builtin_clzll(value);
    size_t i = (size_t)(e - 7) * 64 + ((value >> (e - 6)) & 63u);
    return sketch_sub_bucket[i] + (value > sketch_sub_last[i]);
}

/* Counts value: 0, or -1 out of memory. Inline: every call of every
 * operation is counted, nearly always in a bucket that exists already,
 * which then costs the bucket index and a few compares; the other cases
 * (values kept exactly, zeros, a bucket to make room for) are
 * sketch_add_slow's. */
static inline int sketch_add(quantile_sketch *s, uint64_t value)
{
    if (s->count > SKETCH_EXACT && value != 0) {
        int32_t i = sketch_bucket(value);
        if (i >= s->lo && i < s->lo + (int32_t)s->nbins) {
            s->bins[i - s->lo]++;
            if (value < s->min)
                s->min = value;
            if (value > s->max)
                s->max = value;
            s->count++;
            return 0;
        }
    }
    return sketch_add_slow(s, value);
}
int sketch_merge(quantile_sketch *into, const quantile_sketch *from);
/* *into, which holds nothing allocated, made a copy of from, bucket for
 * bucket; -1 out of memory (into unchanged). */
int sketch_copy(quantile_sketch *into, const quantile_sketch *from);
/* The value at quantile q in [0, 1] (0 for an empty sketch), interpolated
 * between order statistics (see above). */
double sketch_quantile(const quantile_sketch *s, double q);
void sketch_free(quantile_sketch *s);
/* How many values are below limit: exact while the values are kept;
 * from the buckets after, when the values in limit's own bucket (within a
 * factor gamma below it) count as not below. */
uint64_t sketch_count_below(const quantile_sketch *s, uint64_t limit);

/* The value a bucket reports (sketch_bucket above: the index of a value
 * > 0), exposed for tests of the bound. */
double sketch_bucket_value(int32_t index);

#endif
