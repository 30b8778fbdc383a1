/* pool.c - the tool's threads (pool.h). Threads are made on demand up to
 * the pool's size and then wait for their next job: a command that opens
 * a reader per time window or per rank reuses them rather than make one
 * per reader. A job is given to one thread by name, an idle one or a new
 * one, and that thread is busy until the job has ended: a thread is free
 * again as soon as pool_join can return, and never takes work meant for
 * another. The threads block every signal they can: a command that waits
 * for SIGINT or SIGTERM with sigwait (prof view) must get it, where one of
 * these threads, started before it blocked them, would take the default
 * action and end the process. */
#include <signal.h>
#include <stdlib.h>

#include "util/pool.h"

typedef struct pool_worker {
    prof_pool *pool;
    pthread_t thread;
    pthread_cond_t go;     /* a job given, or closing                   */
    pool_job *job;         /* given and not ended; NULL: idle           */
} pool_worker;

struct prof_pool {
    pthread_mutex_t mu;
    pthread_cond_t done;   /* a job ended                               */
    pool_worker *workers;  /* [0, nworkers) started, of size            */
    unsigned size, nworkers;
    int closing;
};

static void *pool_thread(void *arg)
{
    pool_worker *w = arg;
    prof_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!w->job && !p->closing)
            pthread_cond_wait(&w->go, &p->mu);
        pool_job *j = w->job;
        if (!j)
            break;
        pthread_mutex_unlock(&p->mu);
        j->fn(j->arg);
        pthread_mutex_lock(&p->mu);
        j->done = 1;
        w->job = NULL;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* pthread_create, the thread born with every signal blocked. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
        return -1;
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

prof_pool *pool_new(unsigned size)
{
    prof_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->workers = calloc(size ? size : 1, sizeof *p->workers))) {
        free(p);
        return NULL;
    }
    p->size = size;
    if (pthread_mutex_init(&p->mu, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&p->done, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        goto fail;
    }
    return p;
fail:
    free(p->workers);
    free(p);
    return NULL;
}

void pool_free(prof_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->closing = 1;
    for (unsigned i = 0; i < p->nworkers; i++)
        pthread_cond_signal(&p->workers[i].go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nworkers; i++) {
        pthread_join(p->workers[i].thread, NULL);
        pthread_cond_destroy(&p->workers[i].go);
    }
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}

static void *own_thread(void *arg)
{
    pool_job *j = arg;
    j->fn(j->arg);
    return NULL;
}

/* Gives j to an idle thread of p, else to a new one. 0 when there is
 * neither. Called with p->mu held. */
static int give(prof_pool *p, pool_job *j)
{
    if (p->closing)
        return 0;
    for (unsigned i = 0; i < p->nworkers; i++)
        if (!p->workers[i].job) {
            p->workers[i].job = j;
            pthread_cond_signal(&p->workers[i].go);
            return 1;
        }
    if (p->nworkers >= p->size)
        return 0;
    pool_worker *w = &p->workers[p->nworkers];
    *w = (pool_worker){ .pool = p, .job = j };
    if (pthread_cond_init(&w->go, NULL) != 0)
        return 0;
    if (start_thread(&w->thread, pool_thread, w) != 0) {
        pthread_cond_destroy(&w->go);
        return 0;
    }
    p->nworkers++;
    return 1;
}

int pool_start(prof_pool *p, pool_job *job, void (*fn)(void *arg), void *arg)
{
    *job = (pool_job){ .fn = fn, .arg = arg, .pool = p };
    if (!p)
        return start_thread(&job->own, own_thread, job) == 0;
    pthread_mutex_lock(&p->mu);
    int started = give(p, job);
    pthread_mutex_unlock(&p->mu);
    return started;
}

void pool_join(pool_job *job)
{
    prof_pool *p = job->pool;
    if (!p) {
        pthread_join(job->own, NULL);
        return;
    }
    pthread_mutex_lock(&p->mu);
    while (!job->done)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void pool_fan_out(prof_pool *p, unsigned width, void (*fn)(void *arg), void *arg)
{
    pool_job *jobs = width > 1 ? calloc(width - 1, sizeof *jobs) : NULL;
    unsigned started = 0;
    for (unsigned i = 0; jobs && i + 1 < width; i++)
        started += (unsigned)pool_start(p, &jobs[started], fn, arg);
    fn(arg);
    for (unsigned i = 0; i < started; i++)
        pool_join(&jobs[i]);
    free(jobs);
}
