/* read_floor.c - what reading alone costs, for the reading benchmark
 * (tests/bench/analyze.sh): the time prof_reader takes to hand out every
 * event of a .prof file that nothing is done with, the way analyze reads
 * it event by event (a second thread fetches and decompresses blocks ahead
 * of the one decoding them), and read slim as analyze reads it (the
 * reader's thread decodes every block alone, handing regions over in 24
 * bytes: format.h, pf_reader_set_slim_fn), with a tag function that only
 * numbers regions by name, where analyze's numbers operations
 * (src/model/opcalls.c). The gap between them and analyze is what
 * building the model costs; the second figure is the least the reader's
 * thread can take for analyze. Prints one line "PLAIN_SECONDS
 * SLIM_SECONDS EVENTS", each time the least of ROUNDS passes.
 * usage: read_floor ROUNDS FILE.prof */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "format/format.h"
#include "prof_reader.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Regions tagged with their name id, the rest whole; counts what it sees. */
static void tag_by_name(void *arg, const prof_event *ev, size_t n, uint32_t *tags)
{
    *(uint64_t *)arg += n;
    for (size_t k = 0; k < n; k++)
        tags[k] = ev[k].type == PROF_EV_REGION ? ev[k].name_id : PF_SLIM_WHOLE;
}

/* One read of path, slim or event by event: its seconds, or -1 with a
 * message. *events: the events handed out. */
static double one_pass(const char *path, int slim, uint64_t *events)
{
    double t0 = now_s();
    prof_reader *r;
    prof_error err;
    if (prof_reader_open(path, &r, &err) != PROF_OK) {
        fprintf(stderr, "read_floor: %s: %s\n", path, err.message);
        return -1;
    }
    uint64_t in_fn = 0;
    if (slim && pf_reader_set_slim_fn(r, tag_by_name, NULL, &in_fn) < 0) {
        fprintf(stderr, "read_floor: the slim function was refused\n");
        prof_reader_close(r);
        return -1;
    }
    const prof_event *ev;
    size_t n;
    int rc;
    pf_slim_batch b;
    *events = 0;
    if (slim) {
        while ((rc = pf_reader_next_slim(r, &b)) == 1)
            *events += b.count;
    } else {
        while ((rc = prof_reader_next_batch(r, &ev, &n)) == 1)
            *events += n;
    }
    if (rc < 0)
        fprintf(stderr, "read_floor: %s: %s\n", path, prof_reader_error(r)->message);
    prof_reader_close(r);
    double t = now_s() - t0;
    /* it sees each name's first region and every other event, no more */
    if (rc < 0 || in_fn > *events) {
        if (rc == 0)
            fprintf(stderr, "read_floor: the slim function saw %llu of %llu events\n",
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
        for (int slim = 0; slim < 2; slim++) {
            double t = one_pass(argv[2], slim, &events);
            if (t < 0)
                return 1;
            if (t < best[slim])
                best[slim] = t;
        }
    if (printf("%.6f %.6f %llu\n", best[0], best[1], (unsigned long long)events) < 0 ||
        fflush(stdout) != 0)
        return 1;
    return 0;
}
