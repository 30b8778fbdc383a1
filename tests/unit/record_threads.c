/* record_threads.c - the recorder under concurrency (also built with
 * ThreadSanitizer): eight threads record a million regions each and every
 * one is read back, per thread, under the thread's own name; and when the
 * buffers are too small, what is not recorded is counted as dropped,
 * exactly, while steps and their memory samples are never dropped; and
 * threads that exit leave their events and names in the profile but no
 * state behind them. */
#include <pthread.h>

#include "criterion_tsan.h"
#include "record/runtime.h"
#include "record_util.h"

#define THREADS 8
#define REGIONS 1000000u

static void setup(void)
{
    clean_env();
}

static void teardown(void)
{
    prof_stop();
    test_dir_remove();
}

TestSuite(record_threads, .init = setup, .fini = teardown, .timeout = 300);

typedef struct counts {
    uint64_t regions[64];
    uint64_t outer[64];
    char names[64][32];
    uint64_t other;
} counts;

static void count_event(const prof_event *ev, void *ctx)
{
    counts *c = ctx;
    if (ev->type == PROF_EV_THREAD && ev->thread < 64)
        snprintf(c->names[ev->thread], sizeof c->names[0], "%s", ev->name);
    else if (ev->type == PROF_EV_REGION && ev->thread < 64 && ev->depth == 1)
        c->regions[ev->thread]++;
    else if (ev->type == PROF_EV_REGION && ev->thread < 64 && ev->depth == 0)
        c->outer[ev->thread]++;
    else if (ev->type != PROF_EV_STEP && ev->type != PROF_EV_MEMORY)
        c->other++;
}

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "worker-%d", i);
    prof_thread_name(name);
    prof_name inner = prof_intern("inner");
    /* half by id, half by name, inside outer regions of 1000 */
    for (unsigned k = 0; k < REGIONS / 1000; k++) {
        prof_region_begin("outer");
        for (unsigned j = 0; j < 1000; j += 2) {
            prof_region_begin_id(inner, PROF_KIND_COMPUTE);
            prof_region_end();
            prof_region_begin_kind("inner", PROF_KIND_COMPUTE);
            prof_region_end();
        }
        prof_region_end();
    }
    return NULL;
}

Test(record_threads, eight_threads_exact_counts)
{
    prof_config c = { 0 };
    c.output = test_path("threads.prof");
    c.buffer_bytes = (size_t)1 << 30; /* nothing may drop */
    c.flush_interval_ms = 50;
    cr_assert_eq(prof_start(&c), 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(prof_stop(), 0);

    counts *n = calloc(1, sizeof *n);
    prof_read_status st;
    cr_assert_eq(readback_scan(c.output, count_event, n, &st, NULL), 0);
    cr_assert(st.clean);
    cr_assert_eq(st.dropped_events, 0);
    int seen[THREADS] = { 0 };
    for (int t = 0; t < 64; t++) {
        int w;
        if (sscanf(n->names[t], "worker-%d", &w) != 1)
            continue;
        cr_assert(w >= 0 && w < THREADS);
        seen[w]++;
        cr_assert_eq(n->regions[t], REGIONS, "%s: %llu regions", n->names[t],
                     (unsigned long long)n->regions[t]);
        cr_assert_eq(n->outer[t], REGIONS / 1000);
    }
    for (int w = 0; w < THREADS; w++)
        cr_assert_eq(seen[w], 1, "worker-%d named once", w);
    cr_assert_eq(n->other, 0);
    free(n);
}

/* Threads that hold a chunk each, partly filled, until released. */
typedef struct holder {
    pthread_barrier_t *ready, *release;
} holder;

static void *hold_chunk(void *arg)
{
    holder *h = arg;
    prof_region_begin("held");
    prof_region_end();
    pthread_barrier_wait(h->ready);
    pthread_barrier_wait(h->release);
    return NULL;
}

/* Per profile thread: its name, its "flood" and "held" regions, and its
 * dropped-events count. */
typedef struct steps {
    uint64_t n, rss, bad_order;
    uint32_t last_flags;
} steps;

typedef struct tally {
    char names[64][32];
    uint64_t flood[64], held[64], dropped[64];
    steps *extra; /* steps and host memory samples, when not NULL */
} tally;

static void tally_steps(steps *s, const prof_event *ev)
{
    if (ev->type == PROF_EV_STEP) {
        s->bad_order += ev->value != s->n;
        s->n++;
        s->last_flags = ev->flags;
    } else if (ev->type == PROF_EV_MEMORY && strcmp(ev->name, "host.rss") == 0) {
        s->rss++;
    }
}

static void tally_event(const prof_event *ev, void *ctx)
{
    tally *t = ctx;
    if (t->extra)
        tally_steps(t->extra, ev);
    if (ev->thread >= 64)
        return;
    if (ev->type == PROF_EV_THREAD)
        snprintf(t->names[ev->thread], sizeof t->names[0], "%s", ev->name);
    else if (ev->type == PROF_EV_DROPPED)
        t->dropped[ev->thread] += ev->value;
    else if (ev->type == PROF_EV_REGION && strcmp(ev->name, "flood") == 0)
        t->flood[ev->thread]++;
    else if (ev->type == PROF_EV_REGION && strcmp(ev->name, "held") == 0)
        t->held[ev->thread]++;
}

typedef struct flood_arg {
    unsigned n, index;
} flood_arg;

static void *flood(void *arg)
{
    flood_arg *a = arg;
    char name[32];
    snprintf(name, sizeof name, "flooder-%u", a->index);
    prof_thread_name(name);
    for (unsigned i = 0; i < a->n; i++) {
        prof_region_begin("flood");
        prof_region_end();
    }
    return NULL;
}

/* Sums over the threads named flooder-*: recorded and dropped. */
static void flooders(const tally *t, uint64_t *recorded, uint64_t *dropped, int *threads)
{
    *recorded = *dropped = 0;
    *threads = 0;
    for (int i = 0; i < 64; i++) {
        if (strncmp(t->names[i], "flooder-", 8) != 0)
            continue;
        (*threads)++;
        *recorded += t->flood[i];
        *dropped += t->dropped[i];
    }
}

Test(record_threads, every_event_dropped_when_no_chunk_is_free)
{
    prof_config c = { 0 };
    c.output = test_path("nochunk.prof");
    c.buffer_bytes = 1; /* the minimum: four chunks */
    cr_assert_eq(prof_start(&c), 0);
    pthread_barrier_t ready, release;
    pthread_barrier_init(&ready, NULL, 5);
    pthread_barrier_init(&release, NULL, 5);
    holder h = { &ready, &release };
    pthread_t th[4], f;
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hold_chunk, &h), 0);
    pthread_barrier_wait(&ready);
    flood_arg a = { 5000, 0 };
    cr_assert_eq(pthread_create(&f, NULL, flood, &a), 0);
    pthread_join(f, NULL);
    prof_flush();
    pthread_barrier_wait(&release);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(prof_stop(), 0);

    tally *t = calloc(1, sizeof *t);
    prof_read_status st;
    cr_assert_eq(readback_scan(c.output, tally_event, t, &st, NULL), 0);
    uint64_t recorded, dropped, held = 0;
    int n;
    flooders(t, &recorded, &dropped, &n);
    for (int i = 0; i < 64; i++)
        held += t->held[i];
    cr_assert_eq(n, 1);
    cr_assert_eq(held, 4);
    cr_assert_eq(recorded, 0);
    cr_assert_eq(dropped, 5000);
    cr_assert_geq(st.dropped_events, 5000);
    pthread_barrier_destroy(&ready);
    pthread_barrier_destroy(&release);
    free(t);
}

/* Steps (with their memory samples) are never dropped: with every chunk
 * of the buffer held, the steps of a thread that has none, and the last
 * one that prof_stop closes, are still recorded; other events drop. */
Test(record_threads, steps_kept_when_buffers_are_full)
{
    prof_config c = { 0 };
    c.output = test_path("fullsteps.prof");
    c.buffer_bytes = 1; /* the minimum: four chunks */
    cr_assert_eq(prof_start(&c), 0);
    pthread_barrier_t ready, release;
    pthread_barrier_init(&ready, NULL, 5);
    pthread_barrier_init(&release, NULL, 5);
    holder h = { &ready, &release };
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hold_chunk, &h), 0);
    pthread_barrier_wait(&ready);
    prof_thread_name("stepper");
    for (int i = 0; i < 3000; i++) { /* more than a chunk of step records */
        prof_region_begin("flood");
        prof_region_end();
        prof_step();
    }
    cr_assert_eq(prof_stop(), 0); /* the holders still hold every chunk */
    pthread_barrier_wait(&release);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);

    tally *t = calloc(1, sizeof *t);
    steps *s = calloc(1, sizeof *s);
    prof_read_status st;
    t->extra = s;
    cr_assert_eq(readback_scan(c.output, tally_event, t, &st, NULL), 0);
    cr_assert(st.clean, "%s", st.detail);
    cr_assert_eq(s->n, 3001, "%llu steps", (unsigned long long)s->n);
    cr_assert_eq(s->bad_order, 0, "steps in order");
    cr_assert_eq(s->last_flags & PROF_STEP_INCOMPLETE, PROF_STEP_INCOMPLETE);
    cr_assert_eq(s->rss, 3001, "a memory sample per step boundary");
    uint64_t flood = 0, dropped = 0;
    for (int i = 0; i < 64; i++)
        flood += t->flood[i], dropped += t->dropped[i];
    cr_assert_eq(flood, 0);
    cr_assert_eq(dropped, 3000);
    pthread_barrier_destroy(&ready);
    pthread_barrier_destroy(&release);
    free(s);
    free(t);
}

Test(record_threads, recorded_plus_dropped_is_attempted)
{
    prof_config c = { 0 };
    c.output = test_path("tiny.prof");
    c.buffer_bytes = 1;
    cr_assert_eq(prof_start(&c), 0);
    pthread_t th[4];
    flood_arg a[4];
    for (unsigned i = 0; i < 4; i++) {
        a[i] = (flood_arg){ 300000, i };
        cr_assert_eq(pthread_create(&th[i], NULL, flood, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(prof_stop(), 0);

    tally *t = calloc(1, sizeof *t);
    steps s = { 0 };
    t->extra = &s;
    prof_read_status st;
    cr_assert_eq(readback_scan(c.output, tally_event, t, &st, NULL), 0);
    cr_assert(st.clean);
    cr_assert_eq(s.n, 1, "the last step, whatever was dropped");
    uint64_t recorded, dropped;
    int n;
    flooders(t, &recorded, &dropped, &n);
    cr_assert_eq(n, 4);
    cr_assert_eq(recorded + dropped, 4u * 300000, "recorded %llu + dropped %llu",
                 (unsigned long long)recorded, (unsigned long long)dropped);
    cr_assert_gt(recorded, 0);
    free(t);
}

/* ---- short-lived threads --------------------------------------------------------- */

#define SHORT_THREADS 2000
#define SHORT_AT_ONCE 8

/* Two in three record regions; the others only name themselves. */
static void *short_lived(void *arg)
{
    int i = (int)(intptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "short-%d", i);
    prof_thread_name(name);
    for (int k = 0; k < 3 && i % 3 != 0; k++) {
        prof_region_begin("short.work");
        prof_region_end();
    }
    return NULL;
}

static size_t registry_length(void)
{
    size_t n = 0;
    pthread_mutex_lock(&rt.reg_mu);
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire); t;
         t = atomic_load_explicit(&t->next, memory_order_relaxed))
        n++;
    pthread_mutex_unlock(&rt.reg_mu);
    return n;
}

typedef struct short_tally {
    int named[SHORT_THREADS];
    uint64_t regions, threads;
} short_tally;

static void short_event(const prof_event *ev, void *ctx)
{
    short_tally *t = ctx;
    int i;
    if (ev->type == PROF_EV_THREAD && sscanf(ev->name, "short-%d", &i) == 1 && i >= 0 &&
        i < SHORT_THREADS) {
        t->named[i]++;
        t->threads++;
    } else if (ev->type == PROF_EV_REGION && strcmp(ev->name, "short.work") == 0) {
        t->regions++;
    }
}

/* Once they have exited and the writer has been through, the threads are
 * off the registry (their memory freed), yet every one is in the profile
 * under its name, with its regions. */
Test(record_threads, exited_threads_leave_their_events_not_their_state)
{
    prof_config c = { 0 };
    c.output = test_path("short.prof");
    c.flush_interval_ms = 10000; /* the passes below are the ones asked for */
    cr_assert_eq(prof_start(&c), 0);
    for (int i = 0; i < SHORT_THREADS; i += SHORT_AT_ONCE) {
        pthread_t th[SHORT_AT_ONCE];
        for (int j = 0; j < SHORT_AT_ONCE; j++)
            cr_assert_eq(pthread_create(&th[j], NULL, short_lived, (void *)(intptr_t)(i + j)), 0);
        for (int j = 0; j < SHORT_AT_ONCE; j++)
            pthread_join(th[j], NULL);
    }
    prof_flush(); /* a whole pass after the last exit */
    cr_assert_leq(registry_length(), 1, "%zu thread states kept", registry_length());
    cr_assert_eq(atomic_load(&rt.dead), 0);
    cr_assert_eq(prof_stop(), 0);

    short_tally *t = calloc(1, sizeof *t);
    prof_read_status st;
    cr_assert_eq(readback_scan(c.output, short_event, t, &st, NULL), 0);
    cr_assert(st.clean, "%s", st.detail);
    cr_assert_eq(t->threads, SHORT_THREADS);
    for (int i = 0; i < SHORT_THREADS; i++)
        cr_assert_eq(t->named[i], 1, "short-%d defined %d times", i, t->named[i]);
    uint64_t recording = SHORT_THREADS - (SHORT_THREADS + 2) / 3;
    cr_assert_eq(t->regions, 3 * recording);
    free(t);
}
