/* summary.h - a one-pass census of a profile: event counts by type, time
 * span, threads, completeness. What `prof info` shows. */
#ifndef PROF_MODEL_SUMMARY_H
#define PROF_MODEL_SUMMARY_H

#include <stdint.h>

#include "prof_reader.h"
#include "util/tuning.h"

typedef struct summary_thread {
    uint32_t index;
    uint64_t os_tid;
    char *name;
    uint64_t events;
} summary_thread;

typedef struct profile_summary {
    unsigned major, minor;
    char *metadata;                   /* JSON text                         */
    uint64_t counts[PROF_EV_ATTR + 1]; /* by prof_event_type               */
    uint64_t events;                  /* all events but thread definitions */
    uint64_t first_ns, last_ns;       /* span of all timed events          */
    summary_thread *threads;          /* by first appearance               */
    uint32_t nthreads;
    size_t cap_threads;
    uint64_t gpu_events;              /* events on the GPU's own timeline  */
    uint64_t incomplete_steps;        /* steps closed by prof_stop, not by
                                         prof_step: counts[PROF_EV_STEP] less
                                         these is the steps the program made */
    prof_read_status status;
} profile_summary;

/* Reads the whole file once. A cut-short file is summarised up to its last
 * intact block (status.truncated says so); damage in a file that was closed
 * cleanly is an error. */
prof_err profile_summary_read(const char *path, const prof_tuning *t, profile_summary *out,
                              prof_error *err);
void profile_summary_free(profile_summary *s);

#endif
