/* progress.h - a one-line progress bar on a terminal's stderr while a large
 * profile loads. The caller decides whether the stream is a terminal (so
 * that this code never asks and tests stay deterministic); the bar appears
 * only for inputs of at least PROGRESS_MIN_BYTES, redraws at most every
 * 100 ms, and is erased when loading ends. */
#ifndef PROF_UTIL_PROGRESS_H
#define PROF_UTIL_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

/* Below this a load takes well under a second: no bar. */
#define PROGRESS_MIN_BYTES (16u * 1024u * 1024u)

typedef struct progress {
    FILE *out;             /* NULL: disabled                                  */
    const char *label;     /* shown before the bar, e.g. the file name        */
    uint64_t last_ms;      /* monotonic time of the last redraw               */
    int shown;             /* a bar is on the line and must be erased         */
} progress;

/* enabled: out is a terminal and progress is wanted. */
void progress_init(progress *p, FILE *out, int enabled, const char *label);

/* Matches model_progress_fn: arg is the progress. */
void progress_update(uint64_t done, uint64_t total, void *arg);

/* Erases the bar, if one was drawn. */
void progress_done(progress *p);

#endif
