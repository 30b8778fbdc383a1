/* synth.h - a deterministic profile writer for tests and fixtures.
 *
 * Writes .prof files through the same codec as the recorder, but with
 * explicit timestamps and threads chosen by the caller, so a fixture (and
 * testdata/demo.prof) is the same bytes on every run. Records go into one
 * pending block per thread, in the order given; names are interned on
 * first use and defined ahead of the block that uses them. Errors are
 * sticky: the first one is returned by synth_close().
 */
#ifndef PROF_TESTS_SYNTH_H
#define PROF_TESTS_SYNTH_H

#include <stdint.h>

#include "prof.h"
#include "prof_reader.h"

typedef struct synth synth;

/* metadata: a JSON object as text; NULL for a minimal fixed one. */
synth *synth_open(const char *path, const char *metadata);

/* Records per block before a thread's block is written (default 4096). */
void synth_block_records(synth *s, uint32_t n);

uint32_t synth_name(synth *s, const char *name); /* intern; 0 on failure */
void synth_thread(synth *s, uint32_t thread, uint64_t os_tid, const char *name);
/* Threads 0 .. n-1 named "worker-T", with OS tid 100 + T. */
void synth_workers(synth *s, uint32_t n);
/* The class of a name (format 1.1 name attribute), as prof_name_class. */
void synth_class(synth *s, const char *name, const char *cls);
void synth_region(synth *s, uint32_t thread, const char *name, prof_kind kind, uint32_t depth,
                  uint64_t start_ns, uint64_t dur_ns);
void synth_step(synth *s, uint32_t thread, uint64_t number, uint32_t flags, uint64_t start_ns,
                uint64_t dur_ns);
void synth_memory(synth *s, uint32_t thread, const char *series, uint64_t t_ns, uint64_t bytes);
void synth_counter(synth *s, uint32_t thread, const char *name, uint64_t t_ns, double value);
void synth_mark(synth *s, uint32_t thread, const char *name, uint64_t t_ns);
void synth_dropped(synth *s, uint32_t thread, uint64_t count, uint64_t t_ns);
void synth_gpu_kernel(synth *s, const char *name, uint32_t device, uint32_t stream,
                      uint64_t correlation, uint64_t start_ns, uint64_t dur_ns);
void synth_gpu_memcpy(synth *s, uint32_t copy_kind, uint32_t device, uint32_t stream,
                      uint64_t correlation, uint64_t bytes, uint64_t start_ns, uint64_t dur_ns);
void synth_gpu_memset(synth *s, uint32_t device, uint32_t stream, uint64_t correlation,
                      uint64_t bytes, uint64_t start_ns, uint64_t dur_ns);
void synth_sync(synth *s, uint32_t thread, uint32_t sync_kind, uint32_t device, uint32_t stream,
                uint64_t correlation, uint64_t start_ns, uint64_t dur_ns);
void synth_api(synth *s, uint32_t thread, const char *name, uint64_t correlation,
               uint64_t start_ns, uint64_t dur_ns);

/* Writes every pending block, then (close) the footer or (abandon) nothing
 * more, as a crashed recorder would leave it. Frees s. Returns 0 or the
 * first error, described in *err when not NULL. */
int synth_close(synth *s, prof_error *err);
int synth_abandon(synth *s, prof_error *err);

/* A seeded generator (splitmix64), so fixtures vary but reproduce. */
typedef struct synth_rng {
    uint64_t state;
} synth_rng;
uint64_t synth_rand(synth_rng *r);
double synth_uniform(synth_rng *r);            /* [0, 1)              */
double synth_gauss(synth_rng *r);              /* mean 0, sd 1        */
uint64_t synth_jitter(synth_rng *r, uint64_t ns, double rel_sd); /* ns × (1 + sd·N(0,1)), ≥ 1 */

#endif
