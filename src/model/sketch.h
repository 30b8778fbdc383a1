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

#include <stdint.h>

#define SKETCH_ALPHA 0.01
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
int32_t sketch_bucket(uint64_t value);

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
/* The value at quantile q in [0, 1] (0 for an empty sketch), interpolated
 * between order statistics (see above). */
double sketch_quantile(const quantile_sketch *s, double q);
void sketch_free(quantile_sketch *s);

/* The value a bucket reports (sketch_bucket above: the index of a value
 * > 0), exposed for tests of the bound. */
double sketch_bucket_value(int32_t index);

#endif
