/* timebatch.h - an operation's calls folded into consecutive time batches
 * over its life, at most TIMEBATCH_MAX of them, so that `prof compare` can
 * test a change against the run's own variation with batch means
 * (formats/rules.md §6) in memory that does not grow with the calls.
 *
 * Batch i covers [t0 + i * 2^shift, t0 + (i + 1) * 2^shift) of call start
 * times, t0 being the first call's start. When a call falls past the last
 * batch, neighbouring batches are merged in pairs and the width doubles, so
 * a finished operation has between TIMEBATCH_MAX / 2 and TIMEBATCH_MAX
 * batches once its life is longer than TIMEBATCH_MAX first widths. A call
 * that starts before t0 (records arrive per thread, not in global time
 * order) counts in batch 0. */
#ifndef PROF_MODEL_TIMEBATCH_H
#define PROF_MODEL_TIMEBATCH_H

#include <stdint.h>

#define TIMEBATCH_MAX 32u
#define TIMEBATCH_FIRST_SHIFT 20u /* the first width, 2^20 ns (about 1 ms) */

typedef struct time_batches {
    uint64_t t0;            /* start of the first call seen                  */
    uint32_t shift;         /* batch width is 2^shift ns; 0 before any call   */
    uint32_t used;          /* batches [0, used) hold every call so far        */
    uint64_t calls[TIMEBATCH_MAX];
    uint64_t ns[TIMEBATCH_MAX]; /* summed durations                           */
} time_batches;

/* Counts one call that started at start_ns and lasted dur_ns. */
void time_batches_add(time_batches *b, uint64_t start_ns, uint64_t dur_ns);

/* Width of each batch in nanoseconds (0 before any call). */
uint64_t time_batches_width(const time_batches *b);

#endif
