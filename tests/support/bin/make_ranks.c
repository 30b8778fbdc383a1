/* make_ranks.c - the ranks of one data-parallel job, for the many-ranks
 * benchmark and tests: RANKS profiles DIR/rankK.prof of about EVENTS events
 * each, one host, world size RANKS. Each step: a data region, a forward of
 * LAYERS layers and a backward of as many, each layer with a kernel on the
 * rank's device, then an all-reduce (a NCCL kernel and a COMM region) and
 * an optimizer step; gpu.allocated sampled every step. Rank 1 computes 15%
 * longer than the others (a straggler: the others wait for it in every
 * all-reduce, which ends on every rank at once, so that all step times
 * are alike), and every layer's time jitters a little. Seeded by the rank:
 * the same arguments give the same bytes. With HOSTS, the ranks are spread
 * over that many hosts in turn (rank r on host r mod HOSTS, named nodeH),
 * each host's clock H x 1.5 s + H x 37 us ahead of host 0's. With ODD, rank
 * ODD stands out: its kernels take half their time (its GPU idles more)
 * and it holds 6 GiB instead of about 4.
 * usage: make_ranks DIR RANKS EVENTS [HOSTS [ODD]] */
#include <stdio.h>
#include <stdlib.h>

#include "synth.h"

#define US 1000ull
#define LAYERS 8
#define STEP_EVENTS (2ul + 2 * 2 * LAYERS + 3 + 1) /* regions, kernels, comm, memory */
/* from a step's start to the all-reduce's end, the same on every rank */
#define STEP_SPAN_US (300 + (uint64_t)(2 * LAYERS * 200 * 1.15 * 1.25) + 400)

static const char metadata_fmt[] =
    "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1767225600000000000},"
    "\"host\":\"node%d\",\"pid\":%d,\"argv\":[\"train\"],\"rank\":%d,\"world_size\":%d}";

static const char *const layer_names[LAYERS] = { "layer0", "layer1", "layer2", "layer3",
                                                 "layer4", "layer5", "layer6", "layer7" };

static int write_rank(const char *dir, int rank, int world, unsigned long events, int hosts,
                      int odd)
{
    char path[4096], metadata[512];
    int host = rank % hosts;
    snprintf(path, sizeof path, "%s/rank%d.prof", dir, rank);
    snprintf(metadata, sizeof metadata, metadata_fmt, host, 5000 + rank, rank, world);
    synth *s = synth_open(path, metadata);
    if (!s)
        return -1;
    synth_thread(s, 0, 5000u + (uint64_t)rank, "train");
    synth_rng rng = { 0x9e3779b97f4a7c15ull ^ (uint64_t)(unsigned)rank };
    double slow = rank == 1 ? 1.15 : 1.0;
    uint64_t memory = rank == odd ? 6ull << 30 : (4ull << 30) + ((uint64_t)rank << 20);
    uint32_t device = (uint32_t)rank % 8;
    uint64_t skew = (unsigned long long)(unsigned)host * 1500037ull * US;
    uint64_t t = 1000 * US + skew, corr = 1;
    uint64_t steps = events / STEP_EVENTS;
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t start = t;
        synth_region(s, 0, "next_batch", PROF_KIND_DATA, 0, t, synth_jitter(&rng, 300 * US, 0.05));
        t += 300 * US;
        for (int pass = 0; pass < 2; pass++) {
            uint64_t begin = t;
            for (int l = 0; l < LAYERS; l++) {
                uint64_t dur = (uint64_t)((double)synth_jitter(&rng, 200 * US, 0.05) * slow);
                synth_region(s, 0, layer_names[l], PROF_KIND_COMPUTE, 1, t, dur);
                synth_gpu_kernel(s, pass ? "gemm_bwd" : "gemm_fwd", device, 7, corr++,
                                 t + 20 * US, rank == odd ? dur / 2 : dur - 40 * US);
                t += dur;
            }
            synth_region(s, 0, pass ? "backward" : "forward", PROF_KIND_COMPUTE, 0, begin,
                         t - begin);
        }
        /* the all-reduce ends on every rank at once: after the slowest rank's
         * latest arrival (its layers at most 25% over their mean) and 400 us */
        uint64_t arrive = t, end = start + STEP_SPAN_US * US;
        synth_gpu_kernel(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", device, 9, corr++, arrive,
                         end - arrive);
        synth_region(s, 0, "allreduce", PROF_KIND_COMM, 0, arrive, end - arrive);
        t = end;
        synth_region(s, 0, "optimizer.step", PROF_KIND_COMPUTE, 0, t, 250 * US);
        t += 250 * US;
        synth_memory(s, 0, "gpu.allocated", t, memory);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, start, t - start);
    }
    prof_error err;
    if (synth_close(s, &err) < 0) {
        fprintf(stderr, "make_ranks: cannot write '%s': %s\n", path, err.message);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 6) {
        fputs("usage: make_ranks DIR RANKS EVENTS [HOSTS [ODD]]\n", stderr);
        return 2;
    }
    int ranks = atoi(argv[2]), hosts = argc >= 5 ? atoi(argv[4]) : 1;
    int odd = argc == 6 ? atoi(argv[5]) : -1;
    unsigned long events = strtoul(argv[3], NULL, 10);
    if (ranks < 1 || events < STEP_EVENTS || hosts < 1) {
        fputs("make_ranks: RANKS >= 1, HOSTS >= 1 and EVENTS of a step at least\n", stderr);
        return 2;
    }
    for (int r = 0; r < ranks; r++)
        if (write_rank(argv[1], r, ranks, events, hosts, odd) != 0)
            return 1;
    return 0;
}
