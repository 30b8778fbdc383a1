/* compare_fixtures.c - the profiles of the compare tests (see
 * compare_fixtures.h). Regions are written when they end, children before
 * their parent, as the recorder does. */
#include <stdio.h>
#include <string.h>

#include "compare_fixtures.h"
#include "synth.h"

#define MS 1000000.0
#define MB (1024.0 * 1024.0)

const cf_op cf_base_ops[5] = {
    { "data_loading", 6.0, 0.10 },
    { "forward", 20.0, 0.08 },
    { "backward", 40.0, 0.08 },
    { "optimizer_step", 8.0, 0.10 },
    { "log_metrics", 0.5, 0.10 },
};

cf_spec cf_base(uint64_t seed)
{
    cf_spec s = { .steps = 300, .sample_every = 1, .seed = seed, .ops = cf_base_ops,
                  .nops = CF_BASE_NOPS };
    return s;
}

static int metadata_of(const cf_spec *spec, char *buf, size_t size)
{
    unsigned every = spec->sample_every > 1 ? spec->sample_every : 1;
    char devices[160] = "", tags[96] = "";
    if (spec->gpu)
        snprintf(devices, sizeof devices, "{\"index\":0,\"name\":\"%s\"}", spec->gpu);
    if (spec->batch_size)
        snprintf(tags, sizeof tags, "\"batch_size\":\"%s\"", spec->batch_size);
    int n = snprintf(buf, size,
                     "{\"format\":\"prof\",\"libprof_version\":\"%s\","
                     "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1767225600000000000},"
                     "\"host\":\"fixture\",\"pid\":7,\"argv\":[\"%s\"],\"rank\":0,"
                     "\"world_size\":%u,\"local_rank\":0,"
                     "\"config\":{\"sample_rate\":%.6g,\"schedule\":%s},"
                     "\"devices\":[%s],\"tags\":{%s}}",
                     PROF_VERSION_STRING, spec->command ? spec->command : "train.py",
                     spec->world_size ? spec->world_size : 1, 1.0 / every,
                     spec->schedule ? spec->schedule : "null", devices, tags);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* One step starting at t0: its regions when sampled, the step record and
 * the memory sample at its end. Returns the end. */
static uint64_t write_step(synth *s, synth_rng *rng, const cf_spec *spec, unsigned step,
                           uint64_t t0)
{
    int sampled = spec->sample_every <= 1 || step % spec->sample_every == 0;
    uint64_t t = t0 + 100000;
    for (size_t i = 0; i < spec->nops; i++) {
        uint64_t dur = synth_jitter(rng, (uint64_t)(spec->ops[i].ms * MS), spec->ops[i].rel_sd);
        if (sampled)
            synth_region(s, 0, spec->ops[i].name, PROF_KIND_COMPUTE, 1, t, dur);
        t += dur;
    }
    if (sampled)
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t0 + 50000, t - t0 - 50000);
    t += 200000;
    synth_step(s, 0, step, sampled ? PROF_STEP_SAMPLED : 0, t0, t - t0);
    double bytes = 4096.0 * MB + spec->leak_mb * MB * step + 0.5 * MB * synth_gauss(rng);
    synth_memory(s, 0, "gpu.allocated", t, (uint64_t)bytes);
    return t;
}

int cf_write(const char *path, const cf_spec *spec, prof_error *err)
{
    char meta[1024];
    if (metadata_of(spec, meta, sizeof meta) < 0) {
        if (err)
            snprintf(err->message, sizeof err->message, "metadata too long");
        return -1;
    }
    synth *s = synth_open(path, meta);
    if (!s) {
        if (err)
            snprintf(err->message, sizeof err->message, "cannot create '%s'", path);
        return -1;
    }
    synth_rng rng = { spec->seed };
    synth_thread(s, 0, 7, "train");
    uint64_t t = 1000000;
    synth_memory(s, 0, "gpu.allocated", t, (uint64_t)(4096.0 * MB));
    for (unsigned step = 0; step < spec->steps; step++)
        t = write_step(s, &rng, spec, step, t);
    return synth_close(s, err) == 0 ? 0 : -1;
}

int cf_write_scaled(const char *path, uint64_t seed, unsigned steps, const char *name,
                    double factor, prof_error *err)
{
    cf_op ops[CF_BASE_NOPS];
    memcpy(ops, cf_base_ops, sizeof ops);
    for (size_t i = 0; i < CF_BASE_NOPS; i++)
        if (name && strcmp(ops[i].name, name) == 0)
            ops[i].ms *= factor;
    cf_spec spec = cf_base(seed);
    spec.steps = steps;
    spec.ops = ops;
    return cf_write(path, &spec, err);
}
