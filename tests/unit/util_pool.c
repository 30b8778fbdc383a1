/* util_pool.c - the tool's threads (src/util/pool.c): a job starts at once
 * or not at all, never more at a time than the pool's size, on threads
 * that are reused; a pool of size 0 starts nothing and a NULL pool starts
 * a thread of its own; a job may start and join jobs of its own on the
 * same pool; a fan-out runs its function on the caller's thread as well
 * and returns when every share is done, however many threads it got;
 * every thread blocks signals. Built also under ThreadSanitizer
 * (TSAN_UNITS). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "criterion_tsan.h"
#include "util/pool.h"

/* A job that holds its thread until released. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    atomic_int running, ran;
} gate;

static void gate_init(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
    atomic_init(&g->running, 0);
    atomic_init(&g->ran, 0);
}

static void gate_job(void *arg)
{
    gate *g = arg;
    atomic_fetch_add(&g->running, 1);
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_sub(&g->running, 1);
    atomic_fetch_add(&g->ran, 1);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_destroy(gate *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

Test(util_pool, starts_up_to_its_size_and_never_queues)
{
    prof_pool *p = pool_new(3);
    cr_assert_not_null(p);
    gate g;
    gate_init(&g);
    pool_job jobs[4];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(pool_start(p, &jobs[i], gate_job, &g), 1, "job %d", i);
    cr_assert_eq(pool_start(p, &jobs[3], gate_job, &g), 0, "a fourth job while three run");
    gate_open(&g);
    for (int i = 0; i < 3; i++)
        pool_join(&jobs[i]);
    cr_assert_eq(atomic_load(&g.ran), 3);
    /* the threads wait for more: three start again, on them */
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 3; i++)
            cr_assert_eq(pool_start(p, &jobs[i], gate_job, &g), 1, "round %d, job %d", round,
                         i);
        for (int i = 0; i < 3; i++)
            pool_join(&jobs[i]);
    }
    cr_assert_eq(atomic_load(&g.ran), 153);
    pool_free(p);
    gate_destroy(&g);
}

Test(util_pool, size_zero_starts_nothing_and_null_starts_its_own)
{
    prof_pool *p = pool_new(0);
    cr_assert_not_null(p);
    gate g;
    gate_init(&g);
    pool_job job;
    cr_assert_eq(pool_start(p, &job, gate_job, &g), 0);
    pool_free(p);
    pool_job own[8];
    for (int i = 0; i < 8; i++)
        cr_assert_eq(pool_start(NULL, &own[i], gate_job, &g), 1);
    gate_open(&g);
    for (int i = 0; i < 8; i++)
        pool_join(&own[i]);
    cr_assert_eq(atomic_load(&g.ran), 8);
    gate_destroy(&g);
}

/* A job of the pool that starts one of its own on the same pool and joins
 * it, as a rank's load starts its reader's thread. */
typedef struct nest {
    prof_pool *p;
    atomic_int inner_ran, inner_started;
} nest;

static void inner_job(void *arg)
{
    nest *n = arg;
    atomic_fetch_add(&n->inner_ran, 1);
}

static void outer_job(void *arg)
{
    nest *n = arg;
    pool_job j;
    if (pool_start(n->p, &j, inner_job, n)) {
        atomic_fetch_add(&n->inner_started, 1);
        pool_join(&j);
    } else {
        inner_job(n); /* full: the work on this thread */
    }
}

Test(util_pool, jobs_start_jobs)
{
    nest n = { .p = pool_new(3) };
    cr_assert_not_null(n.p);
    atomic_init(&n.inner_ran, 0);
    atomic_init(&n.inner_started, 0);
    for (int round = 0; round < 200; round++) {
        pool_job a, b;
        int sa = pool_start(n.p, &a, outer_job, &n), sb = pool_start(n.p, &b, outer_job, &n);
        cr_assert(sa && sb, "round %d: two of three threads", round);
        pool_join(&a);
        pool_join(&b);
    }
    cr_assert_eq(atomic_load(&n.inner_ran), 400);
    cr_assert_gt(atomic_load(&n.inner_started), 0);
    pool_free(n.p);
}

/* A fan-out's shares: each call takes items until none is left. (At most
 * width calls: a thread whose call has ended may take another's.) */
typedef struct shares {
    atomic_size_t next;
    size_t n;
    atomic_int *done;
    atomic_int calls;
} shares;

static void take_shares(void *arg)
{
    shares *s = arg;
    atomic_fetch_add(&s->calls, 1);
    for (size_t i; (i = atomic_fetch_add(&s->next, 1)) < s->n;)
        atomic_fetch_add(&s->done[i], 1);
}

static void fan_out_all(prof_pool *p, unsigned width, int expect_calls)
{
    shares s = { .n = 1000 };
    s.done = calloc(s.n, sizeof *s.done);
    cr_assert_not_null(s.done);
    atomic_init(&s.next, 0);
    atomic_init(&s.calls, 0);
    pool_fan_out(p, width, take_shares, &s);
    for (size_t i = 0; i < s.n; i++)
        cr_assert_eq(atomic_load(&s.done[i]), 1, "item %zu", i);
    if (expect_calls)
        cr_assert_eq(atomic_load(&s.calls), expect_calls, "width %u", width);
    cr_assert_leq(atomic_load(&s.calls), width ? (int)width : 1, "width %u", width);
    free(s.done);
}

Test(util_pool, fan_out_does_every_share_once)
{
    prof_pool *p = pool_new(4);
    cr_assert_not_null(p);
    fan_out_all(p, 1, 1);
    fan_out_all(p, 4, 4);
    fan_out_all(p, 5, 5);  /* the caller's and the pool's four */
    fan_out_all(p, 9, 0);  /* as many as threads come free, up to 9 */
    pool_free(p);
    prof_pool *none = pool_new(0);
    fan_out_all(none, 4, 1); /* the caller's alone */
    pool_free(none);
    fan_out_all(NULL, 3, 3); /* threads of their own */
    fan_out_all(NULL, 0, 1);
}

/* Signals go to the command's own thread: prof view waits for SIGINT and
 * SIGTERM with sigwait, and a pool thread made before it blocked them
 * would otherwise take one and end the process. */
static void read_mask(void *arg)
{
    sigset_t *mask = arg;
    pthread_sigmask(SIG_BLOCK, NULL, mask);
}

Test(util_pool, threads_block_signals)
{
    prof_pool *p = pool_new(1);
    cr_assert_not_null(p);
    sigset_t pooled, own;
    sigemptyset(&pooled);
    sigemptyset(&own);
    pool_job a, b;
    cr_assert_eq(pool_start(p, &a, read_mask, &pooled), 1);
    pool_join(&a);
    cr_assert_eq(pool_start(NULL, &b, read_mask, &own), 1);
    pool_join(&b);
    const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGCHLD };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        cr_assert(sigismember(&pooled, sigs[i]), "signal %d reaches a pool thread", sigs[i]);
        cr_assert(sigismember(&own, sigs[i]), "signal %d reaches a thread of its own", sigs[i]);
    }
    pool_free(p);
}
