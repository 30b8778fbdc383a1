/* make_big.c - a large, realistic profile for the analyze benchmark: steps
 * of a transformer training loop (nested forward layers, backward,
 * optimizer, a data-loading region, a sync now and then, a checkpoint
 * saved every 500 steps) with two memory samples and a loss counter per
 * step, until about EVENTS events. With
 * TRACE, the same regions are also written as a Chrome trace JSON (complete
 * "X" events in microseconds, as trace exporters write them), so that the
 * benchmark can compare with a json + pandas script over the same run.
 * With -s STEPS, the model is made as many layers deep as it takes to
 * spread the events over about STEPS steps (the benchmark compares memory
 * at 1 and at 10 million events over the same steps). With -r, the steps
 * are a serving or RL loop's instead: a dozen short outermost regions (one
 * of them with two children) and the step, 15 events a step, a memory
 * sample every 16 steps. Seeded: the same arguments give the same bytes.
 * usage: make_big [-s STEPS | -r] EVENTS OUT.prof [TRACE.json] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define US ((uint64_t)1000)
#define LAYERS 24       /* by default */
#define STEP_EVENTS 13  /* events of a step outside its layers (a tenth has a sync) */
#define LAYER_EVENTS 6  /* forward: 4 leaves and the layer; backward: one */

typedef struct big {
    synth *s;
    synth_rng rng;
    FILE *trace;
    uint64_t events;
    int first_trace;
    int layers;
    char (*names)[24]; /* "layer.N" */
} big;

static const char *const kind_names[] = { "compute", "data", "sync", "comm", "io" };

static void region(big *b, const char *name, prof_kind kind, uint32_t depth, uint64_t t,
                   uint64_t dur)
{
    synth_region(b->s, 0, name, kind, depth, t, dur);
    b->events++;
    if (b->trace) {
        fprintf(b->trace,
                "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%" PRIu64 ".%03" PRIu64
                ",\"dur\":%" PRIu64 ".%03" PRIu64 ",\"pid\":4242,\"tid\":4242}",
                b->first_trace ? "" : ",", name, kind_names[kind], t / US, t % US, dur / US,
                dur % US);
        b->first_trace = 0;
    }
}

/* A leaf of about us microseconds at t; returns its end. */
static uint64_t leaf(big *b, const char *name, prof_kind kind, uint32_t depth, uint64_t t,
                     double us)
{
    uint64_t dur = synth_jitter(&b->rng, (uint64_t)(us * (double)US), 0.05);
    region(b, name, kind, depth, t, dur);
    return t + dur;
}

static uint64_t layer(big *b, int i, uint64_t t0)
{
    uint64_t t = leaf(b, "layer_norm", PROF_KIND_COMPUTE, 2, t0, 40);
    t = leaf(b, "attention", PROF_KIND_COMPUTE, 2, t, 350);
    t = leaf(b, "layer_norm", PROF_KIND_COMPUTE, 2, t, 40);
    t = leaf(b, "mlp", PROF_KIND_COMPUTE, 2, t, 200);
    region(b, b->names[i], PROF_KIND_COMPUTE, 1, t0, t - t0 + 5 * US);
    return t + 5 * US;
}

static uint64_t step(big *b, uint64_t number, uint64_t t0)
{
    uint64_t t = leaf(b, "next_batch", PROF_KIND_DATA, 1, t0, 900);
    region(b, "data_loading", PROF_KIND_DATA, 0, t0, t - t0);
    uint64_t f0 = t;
    t = leaf(b, "embedding", PROF_KIND_COMPUTE, 1, t, 120);
    for (int i = 0; i < b->layers; i++)
        t = layer(b, i, t);
    t = leaf(b, "loss", PROF_KIND_COMPUTE, 1, t, 60);
    region(b, "forward", PROF_KIND_COMPUTE, 0, f0, t - f0);
    uint64_t k0 = t;
    for (int i = b->layers - 1; i >= 0; i--)
        t = leaf(b, "backward_layer", PROF_KIND_COMPUTE, 1, t, 1100);
    region(b, "backward", PROF_KIND_COMPUTE, 0, k0, t - k0);
    if (number % 10 == 9)
        t = leaf(b, "loss.item", PROF_KIND_SYNC, 0, t, 800);
    uint64_t o0 = t;
    t = leaf(b, "zero_grad", PROF_KIND_COMPUTE, 1, t, 30);
    t = leaf(b, "adam.update", PROF_KIND_COMPUTE, 1, t, 700);
    region(b, "optimizer_step", PROF_KIND_COMPUTE, 0, o0, t - o0);
    if (number % 500 == 499) /* a slow step now and then */
        t = leaf(b, "save_checkpoint", PROF_KIND_IO, 0, t, 120000);
    t += 20 * US;
    synth_step(b->s, 0, number, PROF_STEP_SAMPLED, t0, t - t0);
    synth_memory(b->s, 0, "gpu.allocated", t, (uint64_t)(6e9 + 1e6 * synth_gauss(&b->rng)));
    synth_memory(b->s, 0, "host.rss", t, (uint64_t)(3e9 + 1e6 * synth_gauss(&b->rng)));
    synth_counter(b->s, 0, "loss", t, 2.0 / (1.0 + (double)number * 1e-3));
    b->events += 4;
    return t;
}

/* A step of a serving or RL loop: 15 events (rl_phases). */
static const struct {
    const char *name;
    prof_kind kind;
    double us;
} rl_phases[] = {
    { "env.reset_if_done", PROF_KIND_DATA, 4 },  { "env.observe", PROF_KIND_DATA, 12 },
    { "obs.to_tensor", PROF_KIND_COMPUTE, 6 },   { "policy", PROF_KIND_COMPUTE, 0 },
    { "sample_action", PROF_KIND_COMPUTE, 5 },   { "env.step", PROF_KIND_DATA, 30 },
    { "reward", PROF_KIND_COMPUTE, 3 },          { "buffer.add", PROF_KIND_COMPUTE, 4 },
    { "advantage", PROF_KIND_COMPUTE, 3 },       { "value.update", PROF_KIND_COMPUTE, 6 },
    { "metrics", PROF_KIND_COMPUTE, 2 },         { "log", PROF_KIND_IO, 2 },
};

static uint64_t rl_step(big *b, uint64_t number, uint64_t t0)
{
    uint64_t t = t0;
    for (size_t i = 0; i < sizeof rl_phases / sizeof rl_phases[0]; i++) {
        uint64_t s = t;
        if (rl_phases[i].us == 0) { /* the policy: an encoder and a head */
            t = leaf(b, "policy.encoder", PROF_KIND_COMPUTE, 1, t + US / 2, 25);
            t = leaf(b, "policy.head", PROF_KIND_COMPUTE, 1, t, 8);
            region(b, rl_phases[i].name, rl_phases[i].kind, 0, s, t + US / 2 - s);
            t += US / 2;
        } else {
            t = leaf(b, rl_phases[i].name, rl_phases[i].kind, 0, t, rl_phases[i].us);
        }
        t += US / 4;
    }
    synth_step(b->s, 0, number, PROF_STEP_SAMPLED, t0, t - t0);
    b->events++;
    if (number % 16 == 15) {
        synth_memory(b->s, 0, "host.rss", t, (uint64_t)(3e9 + 1e6 * synth_gauss(&b->rng)));
        b->events++;
    }
    return t;
}

int main(int argc, char **argv)
{
    uint64_t steps = 0;
    int rl = 0;
    if (argc >= 3 && strcmp(argv[1], "-s") == 0) {
        steps = strtoull(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    } else if (argc >= 2 && strcmp(argv[1], "-r") == 0) {
        rl = 1;
        argc--;
        argv++;
    }
    if (argc < 3 || argc > 4) {
        fputs("usage: make_big [-s STEPS | -r] EVENTS OUT.prof [TRACE.json]\n", stderr);
        return 2;
    }
    uint64_t want = strtoull(argv[1], NULL, 10);
    int layers = LAYERS;
    if (steps) {
        double per_step = (double)want / (double)steps;
        layers = (int)((per_step - STEP_EVENTS) / LAYER_EVENTS + 0.5);
        layers = layers < 1 ? 1 : layers > 100000 ? 100000 : layers;
    }
    char (*names)[24] = calloc((size_t)layers, sizeof *names);
    if (!names) {
        fputs("make_big: out of memory\n", stderr);
        return 1;
    }
    for (int i = 0; i < layers; i++)
        snprintf(names[i], sizeof names[i], "layer.%d", i);
    big b = { synth_open(argv[2], NULL), { 42 }, NULL, 0, 1, layers, names };
    if (!b.s) {
        fprintf(stderr, "make_big: cannot create '%s'\n", argv[2]);
        return 1;
    }
    if (argc == 4 && !(b.trace = fopen(argv[3], "w"))) {
        fprintf(stderr, "make_big: cannot create '%s'\n", argv[3]);
        return 1;
    }
    if (b.trace)
        fputs("{\"traceEvents\":[", b.trace);
    synth_thread(b.s, 0, 4242, "train");
    uint64_t t = 1000 * US;
    for (uint64_t n = 0; b.events < want; n++)
        t = rl ? rl_step(&b, n, t) : step(&b, n, t);
    prof_error err;
    int failed = synth_close(b.s, &err) < 0;
    if (failed)
        fprintf(stderr, "make_big: cannot write '%s': %s\n", argv[2], err.message);
    if (b.trace) {
        fputs("\n],\"displayTimeUnit\":\"ms\"}\n", b.trace);
        if (fclose(b.trace) != 0) {
            fprintf(stderr, "make_big: cannot write '%s'\n", argv[3]);
            failed = 1;
        }
    }
    free(names);
    printf("%" PRIu64 "\n", b.events);
    return failed;
}
