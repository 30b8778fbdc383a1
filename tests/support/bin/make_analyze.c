/* make_analyze.c - writes the small profiles tests/cli/analyze.sh needs into
 * a directory: the ranks of a two-rank job and a rank of another job; region
 * names holding a comma, a quote and a newline; three profiles whose
 * worst finding is known (a HIGH hot operation, a MEDIUM one, none) for the
 * --fail-on gate; job4/, the four ranks of a job with a GPU each, of which
 * rank 2 is the slowest; and tworuns/, two runs of one rank. Step times are
 * exact, so no step rule fires.
 * usage: make_analyze DIR */
#include <stdio.h>
#include <sys/stat.h>

#include "synth.h"

#define MS 1000000ull
#define STEPS 50

static const char metadata_fmt[] =
    "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1767225600000000000},"
    "\"host\":\"fixture\",\"pid\":%d,\"argv\":[\"train\"],\"rank\":%d,\"world_size\":%d}";

typedef struct op_spec {
    const char *name;
    double ms;   /* per step */
} op_spec;

/* Closes the profile at path: 0, or -1 with the reason on stderr. */
static int finish(synth *s, const char *path)
{
    prof_error err;
    if (synth_close(s, &err) < 0) {
        fprintf(stderr, "make_analyze: cannot write '%s': %s\n", path, err.message);
        return -1;
    }
    return 0;
}

/* STEPS steps of back-to-back outermost regions ops[0..n) on one thread. */
static int write_profile(const char *dir, const char *file, int rank, int world,
                         const op_spec *ops, size_t n)
{
    char path[4096], metadata[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(metadata, sizeof metadata, metadata_fmt, 1000 + rank, rank, world);
    synth *s = synth_open(path, metadata);
    if (!s)
        return -1;
    synth_thread(s, 0, 1000u + (uint64_t)rank, "train");
    uint64_t t = MS;
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t start = t;
        for (size_t i = 0; i < n; i++) {
            uint64_t dur = (uint64_t)(ops[i].ms * (double)MS);
            synth_region(s, 0, ops[i].name, PROF_KIND_COMPUTE, 0, t, dur);
            t += dur;
        }
        synth_step(s, 0, step, PROF_STEP_SAMPLED, start, t - start);
    }
    return finish(s, path);
}

/* Rank `rank` of a four-rank job in DIR/job4: STEPS steps of forward
 * (30 ms) and backward (60 ms; 80 ms on rank 2, which also runs
 * rank2_only), a 45 ms kernel on its own device each step, and
 * gpu.allocated at (rank + 1) GiB. */
static int write_job4_rank(const char *dir, int rank)
{
    char path[4096], metadata[512];
    snprintf(path, sizeof path, "%s/job4/rank%d.prof", dir, rank);
    snprintf(metadata, sizeof metadata, metadata_fmt, 2000 + rank, rank, 4);
    synth *s = synth_open(path, metadata);
    if (!s)
        return -1;
    synth_thread(s, 0, 2000u + (uint64_t)rank, "train");
    uint64_t t = MS, backward = (rank == 2 ? 80 : 60) * MS;
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t start = t;
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 30 * MS);
        synth_gpu_kernel(s, "gemm", (uint32_t)rank, 7, step + 1, t + MS, 45 * MS);
        synth_memory(s, 0, "gpu.allocated", t, ((uint64_t)rank + 1) << 30);
        t += 30 * MS;
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, t, backward);
        t += backward;
        if (rank == 2) {
            synth_region(s, 0, "rank2_only", PROF_KIND_COMPUTE, 0, t, 5 * MS);
            t += 5 * MS;
        }
        synth_step(s, 0, step, PROF_STEP_SAMPLED, start, t - start);
    }
    return finish(s, path);
}

/* n operations of equal time: none reaches a 10% share when n > 10. */
static int write_even(const char *dir, const char *file, size_t n, const op_spec *first)
{
    static const char *const names[] = { "op00", "op01", "op02", "op03", "op04", "op05",
                                         "op06", "op07", "op08", "op09", "op10", "op11",
                                         "op12", "op13", "op14", "op15", "op16", "op17",
                                         "op18", "op19" };
    op_spec ops[21];
    size_t k = 0;
    if (first)
        ops[k++] = *first;
    for (size_t i = 0; i < n && i < 20; i++)
        ops[k++] = (op_spec){ names[i], 5.0 };
    return write_profile(dir, file, 0, 1, ops, k);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: make_analyze DIR\n", stderr);
        return 2;
    }
    const char *dir = argv[1];
    const op_spec job[] = { { "forward", 30.0 }, { "backward", 60.0 } };
    const op_spec odd[] = { { "plain", 10.0 }, { "a,b", 10.0 }, { "say \"hi\"", 10.0 },
                            { "two\nlines", 10.0 } };
    const op_spec hot = { "hot_loop", 120.0 };   /* 120 of 170 ms: HIGH   */
    const op_spec warm = { "warm_loop", 20.0 };  /* 20 of 100 ms: MEDIUM  */
    int failed = write_profile(dir, "rank0-of-2.prof", 0, 2, job, 2) ||
                 write_profile(dir, "rank1-of-2.prof", 1, 2, job, 2) ||
                 write_profile(dir, "rank1-of-4.prof", 1, 4, job, 2) ||
                 write_profile(dir, "names.prof", 0, 1, odd, 4) ||
                 write_even(dir, "hot.prof", 10, &hot) || write_even(dir, "warm.prof", 16, &warm) ||
                 write_even(dir, "calm.prof", 20, NULL);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/job4", dir);
    failed = failed || mkdir(sub, 0755) != 0;
    for (int r = 0; r < 4 && !failed; r++)
        failed = write_job4_rank(dir, r) != 0;
    snprintf(sub, sizeof sub, "%s/tworuns", dir);
    failed = failed || mkdir(sub, 0755) != 0 ||
             write_profile(sub, "first.prof", 0, 1, job, 2) ||
             write_profile(sub, "second.prof", 0, 1, job, 2);
    return failed ? 1 : 0;
}
