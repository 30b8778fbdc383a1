/* read_floor.c - what reading alone costs, for the reading benchmark
 * (tests/bench/analyze.sh): the time prof_reader takes to hand out every
 * event of a .prof file that nothing is done with, the way analyze reads
 * it (a second thread fetches and decompresses blocks ahead of the one
 * decoding them), and the same with a batch function that does nothing,
 * for which the reader's thread decodes every block too, as it does for
 * analyze's per-call statistics (src/model/opcalls.c). The gap between
 * them and analyze is what building the model costs; the second figure is
 * the least the reader's thread can take while it decodes for a batch
 * function. Prints one line "PLAIN_SECONDS FN_SECONDS EVENTS", each time
 * the least of ROUNDS passes.
 * usage: read_floor ROUNDS FILE.prof */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "prof_reader.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void count_batch(void *arg, const prof_event *events, size_t count)
{
    (void)events;
    *(uint64_t *)arg += count;
}

/* One read of path, with the batch function or without: its seconds, or
 * -1 with a message. *events: the events handed out. */
static double one_pass(const char *path, int with_fn, uint64_t *events)
{
    double t0 = now_s();
    prof_reader *r;
    prof_error err;
    if (prof_reader_open(path, &r, &err) != PROF_OK) {
        fprintf(stderr, "read_floor: %s: %s\n", path, err.message);
        return -1;
    }
    uint64_t in_fn = 0;
    if (with_fn && prof_reader_set_batch_fn(r, count_batch, &in_fn) < 0) {
        fprintf(stderr, "read_floor: the batch function was refused\n");
        prof_reader_close(r);
        return -1;
    }
    const prof_event *ev;
    size_t n;
    int rc;
    *events = 0;
    while ((rc = prof_reader_next_batch(r, &ev, &n)) == 1)
        *events += n;
    if (rc < 0)
        fprintf(stderr, "read_floor: %s: %s\n", path, prof_reader_error(r)->message);
    prof_reader_close(r);
    double t = now_s() - t0;
    /* it sees every batch handed out, decoded on the reader's thread */
    if (rc < 0 || (with_fn && in_fn != *events)) {
        if (rc == 0)
            fprintf(stderr, "read_floor: the batch function saw %llu of %llu events\n",
                    (unsigned long long)in_fn, (unsigned long long)*events);
        return -1;
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: read_floor ROUNDS FILE.prof\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    double best[2] = { 1e300, 1e300 };
    uint64_t events = 0;
    for (int i = 0; i < rounds; i++)
        for (int fn = 0; fn < 2; fn++) {
            double t = one_pass(argv[2], fn, &events);
            if (t < 0)
                return 1;
            if (t < best[fn])
                best[fn] = t;
        }
    if (printf("%.6f %.6f %llu\n", best[0], best[1], (unsigned long long)events) < 0 ||
        fflush(stdout) != 0)
        return 1;
    return 0;
}
