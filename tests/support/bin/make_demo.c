/* make_demo.c - generates testdata/demo.prof, the profile `make demo` shows:
 * 300 steps of a small transformer's training loop on two threads, with
 * nested regions (data_loading, forward with layers, backward,
 * optimizer_step), a slow leak on "gpu.allocated", flat host memory, a
 * decreasing loss counter, a sync region every tenth step and a
 * checkpoint mark. Seeded, so that regenerating it gives the same bytes:
 * `make testdata/demo.prof && git diff --exit-code testdata/demo.prof`. */
#include <math.h>
#include <stdio.h>

#include "synth.h"

#define MS 1000000ull
#define MB (1024.0 * 1024.0)
#define STEPS 300
#define LAYERS 4

static const char metadata[] =
    "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1767225600000000000},"
    "\"start_epoch_ns\":1767225600000000000,"
    "\"host\":\"demo-host\",\"pid\":4242,\"argv\":[\"python3\",\"train.py\",\"--epochs\",\"1\"],"
    "\"rank\":0,\"world_size\":1,\"local_rank\":0,"
    "\"config\":{\"output\":\"demo.prof\",\"sample_rate\":1,\"schedule\":null,"
    "\"memory_interval_ms\":0,\"buffer_bytes\":67108864,\"flush_interval_ms\":1000,\"cuda\":1},"
    "\"devices\":[{\"index\":0,\"name\":\"Demo GPU 16GB\",\"memory_bytes\":17179869184}],"
    "\"host_memory_bytes\":68719476736,"
    "\"tags\":{\"model\":\"tiny-transformer\",\"batch_size\":\"32\"}}";

typedef struct demo {
    synth *s;
    synth_rng rng;
} demo;

/* A region of about `ms` milliseconds starting at t; returns its end. */
static uint64_t leaf(demo *d, uint32_t thread, const char *name, prof_kind kind,
                     uint32_t depth, uint64_t t, double ms)
{
    uint64_t dur = synth_jitter(&d->rng, (uint64_t)(ms * (double)MS), 0.05);
    synth_region(d->s, thread, name, kind, depth, t, dur);
    return t + dur;
}

static uint64_t forward(demo *d, uint64_t t0)
{
    static const char *const layer_names[LAYERS] = { "layer.0", "layer.1", "layer.2",
                                                     "layer.3" };
    uint64_t t = leaf(d, 0, "embedding", PROF_KIND_COMPUTE, 1, t0, 2.0);
    for (int i = 0; i < LAYERS; i++) {
        uint64_t l0 = t;
        t = leaf(d, 0, "attention", PROF_KIND_COMPUTE, 2, t, 3.5);
        t = leaf(d, 0, "mlp", PROF_KIND_COMPUTE, 2, t, 2.0);
        t += synth_jitter(&d->rng, 300000, 0.1);
        synth_region(d->s, 0, layer_names[i], PROF_KIND_COMPUTE, 1, l0, t - l0);
    }
    t = leaf(d, 0, "loss", PROF_KIND_COMPUTE, 1, t, 1.0);
    synth_region(d->s, 0, "forward", PROF_KIND_COMPUTE, 0, t0, t - t0);
    return t;
}

static uint64_t train_step(demo *d, int step, uint64_t t0)
{
    uint64_t t = t0, d0 = t0;
    t = leaf(d, 0, "collate", PROF_KIND_DATA, 1, t + 200000, 3.0);
    t += synth_jitter(&d->rng, 9 * MS, 0.1); /* waiting on the loader thread */
    synth_region(d->s, 0, "data_loading", PROF_KIND_DATA, 0, d0, t - d0);
    t = forward(d, t);
    t = leaf(d, 0, "backward", PROF_KIND_COMPUTE, 0, t, 55.0);
    if (step % 10 == 9)
        t = leaf(d, 0, "loss.item", PROF_KIND_SYNC, 0, t, 6.0);
    uint64_t o0 = t;
    t = leaf(d, 0, "zero_grad", PROF_KIND_COMPUTE, 1, t, 0.5);
    t = leaf(d, 0, "adam.update", PROF_KIND_COMPUTE, 1, t, 7.0);
    synth_region(d->s, 0, "optimizer_step", PROF_KIND_COMPUTE, 0, o0, t - o0);
    return t + synth_jitter(&d->rng, 400000, 0.2);
}

static void loader_step(demo *d, uint64_t t0)
{
    uint64_t t = leaf(d, 1, "read_shard", PROF_KIND_IO, 1, t0, 2.5);
    t = leaf(d, 1, "decode", PROF_KIND_DATA, 1, t, 5.0);
    t = leaf(d, 1, "augment", PROF_KIND_DATA, 1, t, 2.0);
    synth_region(d->s, 1, "fetch_batch", PROF_KIND_DATA, 0, t0, t - t0);
}

static void memory(demo *d, int step, uint64_t t)
{
    double gpu = 4096.0 * MB + 12.0 * MB * step + 2.0 * MB * synth_gauss(&d->rng);
    double rss = 2150.0 * MB + 4.0 * MB * synth_gauss(&d->rng);
    synth_memory(d->s, 0, "gpu.allocated", t, (uint64_t)gpu);
    synth_memory(d->s, 0, "host.rss", t, (uint64_t)rss);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "testdata/demo.prof";
    demo d = { synth_open(path, metadata), { 20260101 } };
    if (!d.s) {
        fprintf(stderr, "make_demo: cannot create '%s'\n", path);
        return 1;
    }
    synth_thread(d.s, 0, 4242, "train");
    synth_thread(d.s, 1, 4251, "dataloader");
    uint64_t t = 5 * MS;
    memory(&d, 0, t);
    for (int step = 0; step < STEPS; step++) {
        uint64_t start = t;
        loader_step(&d, start + 1 * MS);
        t = train_step(&d, step, start);
        double loss = 0.3 + 2.5 * exp(-step / 100.0) + 0.02 * synth_gauss(&d.rng);
        synth_counter(d.s, 0, "loss", t, loss);
        if (step == 150)
            synth_mark(d.s, 0, "checkpoint", t);
        synth_step(d.s, 0, (uint64_t)step, PROF_STEP_SAMPLED, start, t - start);
        memory(&d, step + 1, t);
    }
    prof_error err;
    if (synth_close(d.s, &err) < 0) {
        fprintf(stderr, "make_demo: cannot write '%s': %s\n", path, err.message);
        return 1;
    }
    return 0;
}
