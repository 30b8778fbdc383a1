/* fixtures.h - small deterministic training-loop profiles for the analysis
 * tests, written through synth.h with explicit timestamps: a private
 * temporary directory, metadata with a rank and capacities, and a loop of
 * steps with a wrapper region and one memory sample per step. */
#ifndef PROF_TESTS_FIXTURES_H
#define PROF_TESTS_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#include "synth.h"

#define FX_MS 1000000ull
#define FX_MB (1024.0 * 1024.0)

/* A path inside this process's own temporary directory (created on first
 * use); fx_remove_all() deletes the directory and what is in it. */
const char *fx_path(const char *name);
void fx_remove_all(void);

/* Metadata text with rank and world size, device 0 memory and host memory
 * (0 leaves the device list empty / the host key out). */
const char *fx_metadata(char *buf, size_t size, int rank, int world_size, double device_bytes,
                        double host_bytes);

/* A loop of n steps on thread 0 ("train"): step i starts where step i-1
 * ended and lasts step_ns[i] (or 100 ms when step_ns is NULL); an outermost
 * region "train_step" covers each whole step; when series is not NULL, the
 * sample bytes[i] of it is taken 1 ms before step i ends, so it falls inside
 * the step whatever the boundary convention. Returns synth_close's result. */
int fx_write_loop(const char *path, const char *metadata, size_t n, const uint64_t *step_ns,
                  const char *series, const double *bytes);

#endif
