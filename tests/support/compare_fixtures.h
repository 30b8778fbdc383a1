/* compare_fixtures.h - pairs of profiles for `prof compare` tests, written
 * with synth.h: a training loop whose operations, per-call noise, step
 * count, sampling and memory growth the test chooses, so a "30% slower"
 * operation is exactly that on average and a t-test has real per-call
 * variance to work with. Deterministic for a given spec and seed. */
#ifndef PROF_TESTS_COMPARE_FIXTURES_H
#define PROF_TESTS_COMPARE_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#include "prof_reader.h"

/* One operation, called once per step as a region inside "train_step". */
typedef struct cf_op {
    const char *name;
    double ms;             /* mean duration of a call                         */
    double rel_sd;         /* per-call noise, as a fraction of ms             */
} cf_op;

typedef struct cf_spec {
    const char *command;   /* the recorded argv[0]; NULL: "train.py"          */
    unsigned steps;        /* complete steps                                  */
    unsigned sample_every; /* k: one step in k keeps its regions; 0 or 1: all */
    double leak_mb;        /* growth of "gpu.allocated" per step, 0: flat     */
    uint64_t seed;
    const cf_op *ops;
    size_t nops;
    const char *gpu;       /* the metadata's one device, by name; NULL: none  */
    unsigned world_size;   /* 0: 1                                            */
    const char *batch_size; /* the batch_size tag; NULL: no tag               */
    const char *schedule;  /* the config's schedule, JSON text; NULL: null     */
} cf_spec;

/* The loop of the tests: data, forward, backward, optimizer and a small
 * "log_metrics" under 1% of the time. */
extern const cf_op cf_base_ops[5];
#define CF_BASE_NOPS 5

/* spec with the base operations, 300 steps, all sampled, no leak. */
cf_spec cf_base(uint64_t seed);

/* Writes the profile of spec to path. 0, or -1 with err set. */
int cf_write(const char *path, const cf_spec *spec, prof_error *err);

/* Writes the base profile with operation `name` taking `factor` times as
 * long (1.3: 30% slower), over `steps` steps. 0, or -1 with err set. */
int cf_write_scaled(const char *path, uint64_t seed, unsigned steps, const char *name,
                    double factor, prof_error *err);

#endif
