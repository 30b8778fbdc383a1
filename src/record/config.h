/* config.h - the recording configuration as prof_start resolves it (see
 * config.c), and the parsers of its values, which `prof record` also uses
 * to refuse a bad setting before the command runs rather than after. */
#ifndef PROF_RECORD_CONFIG_H
#define PROF_RECORD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "prof.h"

#pragma GCC visibility push(hidden)

typedef struct rt_tag {
    char *key, *value;
} rt_tag;

typedef struct rt_config {
    char *output;
    double sample_rate;
    unsigned wait, warmup, active, repeat;
    unsigned memory_interval_ms;
    size_t buffer_bytes;
    unsigned flush_interval_ms;
    int cuda;
    long rank, world_size, local_rank;
    rt_tag *tags;
    size_t ntags, cap_tags;
} rt_config;

/* 0, -EINVAL or -ECANCELED (PROF_ENABLE=0); -ENOMEM. Fills *out, which
 * rt_config_free releases. */
int rt_config_resolve(const prof_config *cfg, rt_config *out);
/* The same; on -EINVAL *bad names the environment variable that is
 * malformed, or is NULL when a prof_config field is out of range. */
int rt_config_resolve_why(const prof_config *cfg, rt_config *out, const char **bad);
void rt_config_free(rt_config *c);
/* Whether step n keeps its region, mark and counter events. */
int rt_step_sampled(const rt_config *c, uint64_t n);

/* The limits of the sampling settings: one set, checked here for
 * prof_start (a prof_config's fields, PROF_SAMPLE_RATE, PROF_SCHEDULE) and
 * for `prof record`, which refuses its options before the command runs;
 * man/libprof.3 and man/prof-record.1 state them. A schedule with active 0
 * is no schedule. */
#define RT_RATE_LIMITS "0 < R <= 1"
#define RT_SCHEDULE_LIMITS "W:WU:A:R, four whole numbers up to 4294967295"

/* Whether r is a sample rate: 0 < r <= 1 (NaN is not). */
int rt_config_rate_ok(double r);
/* A sample rate as text (PROF_SAMPLE_RATE, --sample-rate). 0 or -EINVAL. */
int rt_config_parse_rate(const char *s, double *out);
/* "wait:warmup:active:repeat" (PROF_SCHEDULE, --schedule), into out[0..3].
 * 0 or -EINVAL. */
int rt_config_parse_schedule(const char *s, unsigned out[4]);

#pragma GCC visibility pop

#endif /* PROF_RECORD_CONFIG_H */
