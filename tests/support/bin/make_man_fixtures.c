/* make_man_fixtures.c - writes the inputs the manual pages' EXAMPLES name
 * that testdata/ does not hold, for tests/cli/man_examples.sh: the four
 * ranks of a distributed job (run.0.prof .. run.3.prof, each a profile of
 * its own rank with a comm region per step) and an Nsight Systems SQLite
 * export (report.nsys.sqlite, tests/support/nsys_fixture.c's run).
 * usage: make_man_fixtures DIR */
#include <stdio.h>

#include "nsys_fixture.h"
#include "synth.h"

#define MS 1000000ull
#define STEPS 40
#define RANKS 4

static const char metadata_fmt[] =
    "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1767225600000000000},"
    "\"host\":\"node%d\",\"pid\":%d,\"argv\":[\"python3\",\"train.py\"],\"rank\":%d,"
    "\"world_size\":%d,\"local_rank\":0}";

/* STEPS steps of forward, backward and an all-reduce that ends at once on
 * every rank: rank 3 computes longer, as a straggler would, and the others
 * wait for it in the all-reduce. */
static int write_rank(const char *dir, int rank)
{
    char path[4096], metadata[512];
    snprintf(path, sizeof path, "%s/run.%d.prof", dir, rank);
    snprintf(metadata, sizeof metadata, metadata_fmt, rank, 2000 + rank, rank, RANKS);
    synth *s = synth_open(path, metadata);
    if (!s)
        return -1;
    synth_thread(s, 0, 2000u + (uint64_t)rank, "train");
    uint64_t t = MS, work = (rank == 3 ? 70 : 60) * MS, comm = 80 * MS - work;
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t start = t;
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, work / 3);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, t + work / 3, work - work / 3);
        t += work;
        synth_region(s, 0, "all_reduce", PROF_KIND_COMM, 0, t, comm);
        t += comm;
        synth_step(s, 0, step, PROF_STEP_SAMPLED, start, t - start);
    }
    prof_error err;
    if (synth_close(s, &err) < 0) {
        fprintf(stderr, "make_man_fixtures: cannot write '%s': %s\n", path, err.message);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: make_man_fixtures DIR\n", stderr);
        return 2;
    }
    char path[4096];
    for (int rank = 0; rank < RANKS; rank++)
        if (write_rank(argv[1], rank) != 0)
            return 1;
    snprintf(path, sizeof path, "%s/report.nsys.sqlite", argv[1]);
    if (nsys_fixture_write(path, 0) != 0) {
        fprintf(stderr, "make_man_fixtures: cannot write '%s'\n", path);
        return 1;
    }
    return 0;
}
