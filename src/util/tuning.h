/* tuning.h - how the tool's fast paths run: its threads and the switches
 * that take a fast path out for measuring or testing. cmd/ fills one from
 * the environment (cmd_tuning, PROF_THREADS and the others that
 * prof-analyze(1) lists) and hands it down to the reader, the importers,
 * the model and the report; nothing below cmd/ reads the environment.
 *
 * Every field's zero is the default, so a NULL tuning, or a zeroed one,
 * means: as many threads as the machine has cores, each helper on a thread
 * of its own, every fast path on. Threads and the fast paths' switches
 * never change the output (tests compare them with the default, byte for
 * byte); no_join and model_keep change what is computed, for benchmarks
 * and tests. */
#ifndef PROF_UTIL_TUNING_H
#define PROF_UTIL_TUNING_H

#include <stddef.h>
#include <unistd.h>

#include "util/pool.h"

typedef enum tuning_help {
    TUNING_HELP_ON = 0, /* the reader's caller fetches for its thread when it would wait */
    TUNING_HELP_OFF,    /* PROF_READER_HELP=0: the thread fetches alone                  */
    TUNING_HELP_ALWAYS  /* PROF_READER_HELP=always: before every block (tests)            */
} tuning_help;

typedef struct prof_tuning {
    unsigned threads;    /* cores to keep busy (PROF_THREADS); 0: the machine's; 1: all
                            work on the caller's thread, no helper at all                */
    prof_pool *pool;     /* where helpers and fan-outs run; NULL: on threads of their own */
    tuning_help reader_help;
    int no_repeat;       /* PROF_MODEL_REPEAT=0: every region read the general way        */
    int no_join;         /* PROF_MODEL_JOIN=0: GPU work not joined to its launches         */
    size_t model_keep;   /* PROF_MODEL_KEEP: points kept of a long series; 0: MODEL_KEEP  */
    int yajl_only;       /* Kineto: YAJL reads every event (the fast path's reference)     */
    const char *tmpdir;  /* where temporary profiles go ($TMPDIR); NULL: /tmp             */
} prof_tuning;

/* The cores a tuning keeps busy: its threads, else the machine's. */
static inline unsigned tuning_threads(const prof_tuning *t)
{
    if (t && t->threads)
        return t->threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1u : cores > 1024 ? 1024u : (unsigned)cores;
}

/* Whether helper threads may run beside the caller's: not on one core,
 * where a helper that waits by spinning (the reader's) would take turns
 * with the thread it waits for. */
static inline int tuning_helpers(const prof_tuning *t)
{
    return tuning_threads(t) > 1;
}

static inline prof_pool *tuning_pool(const prof_tuning *t)
{
    return t ? t->pool : NULL;
}

#endif /* PROF_UTIL_TUNING_H */
