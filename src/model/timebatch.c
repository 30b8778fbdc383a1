/* timebatch.c - time batches of an operation's calls (timebatch.h). The
 * per-call cost is a subtraction, a shift and two additions; folding, which
 * halves the batches, happens at most 64 times in an operation's life. */
#include <string.h>

#include "model/timebatch.h"

/* Merges neighbouring batches in pairs and doubles the width. */
static void time_batches_fold(time_batches *b)
{
    for (uint32_t i = 0; i < TIMEBATCH_MAX / 2; i++) {
        b->at[i].calls = b->at[2 * i].calls + b->at[2 * i + 1].calls;
        b->at[i].ns = b->at[2 * i].ns + b->at[2 * i + 1].ns;
    }
    memset(b->at + TIMEBATCH_MAX / 2, 0, TIMEBATCH_MAX / 2 * sizeof *b->at);
    b->shift++;
}

uint64_t time_batches_slot_slow(time_batches *b, uint64_t start_ns)
{
    if (b->shift == 0) {
        b->t0 = start_ns;
        b->shift = TIMEBATCH_FIRST_SHIFT;
    }
    uint64_t i = start_ns > b->t0 ? (start_ns - b->t0) >> b->shift : 0;
    while (i >= TIMEBATCH_MAX && b->shift < 63) {
        time_batches_fold(b);
        i >>= 1;
    }
    if (i >= TIMEBATCH_MAX) /* only past 2^63 ns: cannot happen with a real clock */
        i = TIMEBATCH_MAX - 1;
    return i;
}

uint32_t time_batches_used(const time_batches *b)
{
    uint32_t n = TIMEBATCH_MAX;
    while (n > 0 && b->at[n - 1].calls == 0)
        n--;
    return n;
}

uint64_t time_batches_width(const time_batches *b)
{
    return b->shift ? (uint64_t)1 << b->shift : 0;
}
