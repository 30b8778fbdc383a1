/* make_gpu.c - a profile of many GPU records, for the GPU-time benchmark
 * (tests/bench/gpu.sh): RECORDS kernels on 8 streams, one in eight a
 * communication kernel, each with its launch call 5 to 500 us before it,
 * and 1,000 steps over them written first, as a Kineto trace lists them.
 * The records come stream by stream, as Kineto writes them:
 *   overlapping  the streams run at the same time (a busy GPU: the
 *                streams' records overlap and their unions stay small);
 *   disjoint     each stream runs after the one before, none overlaps,
 *                and they are listed last first: every record stays its
 *                own interval and no stream continues the union read so
 *                far, the model's worst case for memory.
 * Seeded: the same arguments give the same bytes.
 * usage: make_gpu RECORDS overlapping|disjoint OUT.prof */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define STREAMS 8
#define STEPS 1000
#define US 1000ull

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "overlapping") != 0 && strcmp(argv[2], "disjoint") != 0)) {
        fputs("usage: make_gpu RECORDS overlapping|disjoint OUT.prof\n", stderr);
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10) / STREAMS;
    int disjoint = strcmp(argv[2], "disjoint") == 0;
    /* each record takes 1 to 21 us and a 0.5 to 5.5 us gap: 14 us on average */
    uint64_t stream_span = n * 14 * US, span = disjoint ? STREAMS * stream_span : stream_span;
    synth *s = synth_open(argv[3], NULL);
    if (!s)
        return 1;
    synth_block_records(s, STEPS); /* the steps' block is written before the rest */
    for (uint64_t k = 0; k < STEPS; k++)
        synth_step(s, 0, k, PROF_STEP_SAMPLED, US + k * (span / STEPS), span / STEPS);
    synth_mark(s, 0, "steps written", US);
    synth_block_records(s, 4096);
    synth_rng rng = { 5 };
    uint64_t correlation = 1;
    for (unsigned k = 0; k < STREAMS; k++) {
        unsigned st = disjoint ? STREAMS - 1 - k : k;
        uint64_t t = US + (disjoint ? st * stream_span : 0);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t dur = US + synth_rand(&rng) % (20 * US);
            uint64_t lag = 5 * US + synth_rand(&rng) % (495 * US);
            synth_api(s, 1, "cudaLaunchKernel", correlation, t > lag ? t - lag : 0, 3 * US);
            synth_gpu_kernel(s, st == 3 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "gemm", 0, st,
                             correlation++, t, dur);
            t += dur + US / 2 + synth_rand(&rng) % (5 * US);
        }
    }
    prof_error err = { 0 };
    if (synth_close(s, &err) != 0) {
        fprintf(stderr, "make_gpu: %s\n", err.message);
        return 1;
    }
    return 0;
}
