/* pool.h - the threads the tool runs its helpers on. One pool per command,
 * made by cmd/ from its tuning (tuning.h) and handed down with it, so that
 * the reader's read-ahead, the importer's threads, the report's leak fits
 * and the fan-outs over many files share one limit and reuse threads.
 *
 * A job starts at once, on an idle thread of the pool or a new one while
 * the pool is below its size, or not at all: it is never queued. Every
 * caller can do the work on its own thread, and a queued job could wait
 * for the very thread that queued it (a reader's consumer for its producer,
 * which needs the consumer to run). The pool's threads live until
 * pool_free; jobs end by returning. Every thread started here blocks the
 * signals it can, so that they go to the command's own thread. */
#ifndef PROF_UTIL_POOL_H
#define PROF_UTIL_POOL_H

#include <pthread.h>

typedef struct prof_pool prof_pool;

/* A job, in memory its starter owns until pool_join returns. */
typedef struct pool_job {
    void (*fn)(void *arg);
    void *arg;
    prof_pool *pool;       /* NULL: it runs on a thread of its own (own) */
    pthread_t own;
    int done;              /* under the pool's lock                      */
} pool_job;

/* A pool of at most size threads (0: one that starts nothing); NULL when
 * out of memory. */
prof_pool *pool_new(unsigned size);

/* Ends the pool's threads. Every job started must have been joined. */
void pool_free(prof_pool *p);

/* Starts fn(arg) on a thread of p, or, with p NULL, on a thread of its own.
 * 1: started, pool_join(job) waits for it; 0: not started (the pool is
 * busy and full, or a thread could not be made), and the caller does the
 * work itself. */
int pool_start(prof_pool *p, pool_job *job, void (*fn)(void *arg), void *arg);

/* Waits for a job pool_start started. */
void pool_join(pool_job *job);

/* Runs fn(arg) on up to width threads at once, the caller's among them:
 * fn takes its share of the work until none is left (an atomic counter of
 * its own), and returns when all have returned. */
void pool_fan_out(prof_pool *p, unsigned width, void (*fn)(void *arg), void *arg);

#endif /* PROF_UTIL_POOL_H */
