/* sketch.h - a mergeable quantile sketch for durations with a relative error
 * bound: logarithmic buckets (gamma = (1 + a) / (1 - a), a = SKETCH_ALPHA), so
 * any reported quantile q_hat of the recorded values satisfies
 * |q_hat - q| <= SKETCH_ALPHA * q, where q is the exact value of that rank.
 * Memory grows with log(max/min) of the values seen, not with their number.
 *
 * The bound, precisely: bucket i holds the values v with
 * gamma^(i-1) < v <= gamma^i and reports each as 2 gamma^i / (gamma + 1),
 * which is within a factor (1 ± a) of every value in the bucket. The value
 * at quantile q is the one of 0-based rank floor(q * (count - 1)) in sorted
 * order (the "lower" quantile); the sketch finds the bucket holding that
 * rank exactly, so only the bucket's width contributes error. Zeros are
 * counted apart and reported exactly. Values are integers (nanoseconds), so
 * at most about 2,200 buckets exist for the whole uint64 range (17 KiB);
 * typical durations spanning three decades need about 350. Merging two
 * sketches gives exactly the sketch of the union of their values. */
#ifndef PROF_MODEL_SKETCH_H
#define PROF_MODEL_SKETCH_H

#include <stdint.h>

#define SKETCH_ALPHA 0.01

typedef struct quantile_sketch {
    uint64_t *bins;        /* counts for bucket indexes [lo, lo + nbins)  */
    int32_t lo;
    uint32_t nbins;
    uint64_t zeros;        /* values equal to 0                           */
    uint64_t count;
} quantile_sketch;

void sketch_init(quantile_sketch *s);
int sketch_add(quantile_sketch *s, uint64_t value);     /* 0, or -1 out of memory */
int sketch_merge(quantile_sketch *into, const quantile_sketch *from);
/* The value at quantile q in [0, 1] (0 for an empty sketch). */
double sketch_quantile(const quantile_sketch *s, double q);
void sketch_free(quantile_sketch *s);

/* The bucket index of a value > 0 and the value a bucket reports, exposed
 * for tests of the bound. */
int32_t sketch_bucket(uint64_t value);
double sketch_bucket_value(int32_t index);

#endif
