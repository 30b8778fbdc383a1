/* timeline.h - the events of one time window of a profile, for the
 * dashboard's timeline (/api/events): read from the file with the streaming
 * reader, so a large profile never has to fit in memory, skipping the
 * blocks outside the window, so a small window of it is quick, and bounded
 * in count, so the page stays fast at any zoom. */
#ifndef PROF_OUTPUT_TIMELINE_H
#define PROF_OUTPUT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "prof_reader.h"
#include "util/tuning.h"

#define TIMELINE_ALL_THREADS (-1)
#define TIMELINE_GPU_ONLY (-2)

typedef struct timeline_query {
    uint64_t t0_ns, t1_ns; /* the window; events overlapping it are kept        */
    long thread;           /* profile thread index, TIMELINE_ALL_THREADS or
                              TIMELINE_GPU_ONLY                                 */
    size_t limit;          /* most events returned: past it the longest are kept
                              and the rest counted as "hidden"                  */
} timeline_query;

/* The window as compact JSON text (caller frees):
 *   {"t0_ns","t1_ns","limit","count","hidden",
 *    "names":[...], "lanes":[{"name","kind":"thread"|"gpu","thread"|"device","stream"}],
 *    "events":[[lane, depth, start_ns, dur_ns, name index, kind]],
 *    "steps":[[number, start_ns, dur_ns]], "marks":[[name index, t_ns]]}
 * kind: 0-4 the region's prof_kind, 5 GPU kernel, 6 copy, 7 memset, 8
 * communication kernel (NCCL). Lanes: threads by index, then GPU streams by
 * device and stream. Events are in start order. NULL with err set when the
 * file cannot be read. The file is read as t says (its threads). */
char *timeline_window_json(const char *path, const prof_tuning *t, const timeline_query *q,
                           prof_error *err);

#endif
