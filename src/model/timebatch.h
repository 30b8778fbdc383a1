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

/* One batch: its calls and their summed durations, side by side, so that
 * counting a call touches one cache line. */
typedef struct time_batch {
    uint64_t calls, ns;
} time_batch;

typedef struct time_batches {
    uint64_t t0;            /* start of the first call seen                  */
    uint32_t shift;         /* batch width is 2^shift ns; 0 before any call   */
    time_batch at[TIMEBATCH_MAX];
} time_batches;

/* The batch of a call that started at start_ns, in the cases that
 * time_batches_add leaves out of line: the first call, and one past the
 * last batch, which folds the batches until it fits. */
uint64_t time_batches_slot_slow(time_batches *b, uint64_t start_ns);

/* Counts one call that started at start_ns and lasted dur_ns. Inline, as
 * sketch_add is: it runs for every call of every operation, and nearly
 * always finds its batch among those that exist. */
static inline void time_batches_add(time_batches *b, uint64_t start_ns, uint64_t dur_ns)
{
    uint64_t i = start_ns > b->t0 ? (start_ns - b->t0) >> b->shift : 0;
    if (b->shift == 0 || i >= TIMEBATCH_MAX)
        i = time_batches_slot_slow(b, start_ns);
    b->at[i].calls++;
    b->at[i].ns += dur_ns;
}

/* Whether no call was counted yet. */
static inline int time_batches_empty(const time_batches *b)
{
    return b->shift == 0;
}

/* The batches [0, n) that hold every call: n is one past the last batch
 * with a call (worked out when asked, not kept up call by call). */
uint32_t time_batches_used(const time_batches *b);

/* Width of each batch in nanoseconds (0 before any call). */
uint64_t time_batches_width(const time_batches *b);

#endif
