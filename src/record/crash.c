/* crash.c - what happens when the process dies or forks while recording.
 *
 * Fatal signals: a handler writes what the buffers hold, uncompressed,
 * into fixed blocks allocated at start (no malloc, no lock, only
 * async-signal-safe calls), then passes the signal on to the handler that
 * was there before, or re-raises it with the default action so the
 * process still dies of it. The writer thread is kept out through the io
 * lock: the handler waits a bounded time for the writer to finish the
 * block it is writing, and gives up if the writer itself crashed mid-write.
 *
 * Fork: the child never writes to the parent's file. It closes its copy of
 * the descriptor, forgets the session (keeping the memory reachable) and
 * starts with recording off; prof_start works there again. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/runtime.h"

/* SIGTERM and SIGINT flush only when they would kill (default action);
 * a program with its own handler for them decides what happens next. */
static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM, SIGINT };
#define NSIGS (sizeof fatal_sigs / sizeof fatal_sigs[0])

static struct sigaction prev[NSIGS]; /* the dispositions ours replaced */
static int installed[NSIGS];

#define CRASH_WAIT_TRIES 2000   /* × 0.5 ms: how long the writer may hold io */

/* ---- fixed buffers --------------------------------------------------------- */

int rt_crash_alloc(void)
{
    /* A whole chunk encoded, and the longest string definition twice. */
    rt.crash_events_cap = (size_t)RT_CHUNK_RECS * PF_RECORD_MAX + 4 * PF_RECORD_MAX;
    rt.crash_defs_cap = 2 * ((size_t)PF_STRING_MAX + 2 * PF_RECORD_MAX);
    rt.crash_mem = malloc(rt.crash_events_cap + rt.crash_defs_cap);
    return rt.crash_mem ? 0 : -ENOMEM;
}

void rt_crash_free(void)
{
    free(rt.crash_mem);
    rt.crash_mem = NULL;
}

/* ---- the flush -------------------------------------------------------------- */

typedef struct crash_ctx {
    pf_block ev, defs;
    int ok;
} crash_ctx;

static void defs_write(crash_ctx *x)
{
    if (x->ok && pf_writer_write_block_raw(rt.w, &x->defs) != PROF_OK)
        x->ok = 0;
}

/* Puts one definition, writing the block out first when it is full. */
static void defs_put_string(crash_ctx *x, uint32_t id, const char *s, uint32_t len)
{
    if (pf_put_string(&x->defs, id, s, len) == PROF_OK)
        return;
    defs_write(x);
    if (pf_put_string(&x->defs, id, s, len) != PROF_OK)
        x->ok = 0;
}

/* The class attributes not yet written (after the strings they use). */
static void crash_define_attrs(crash_ctx *x, uint32_t nattrs)
{
    for (; rt.wattrs < nattrs && x->ok; rt.wattrs++) {
        const rt_attr *a = rt_attr_get(rt.wattrs);
        if (!a || pf_put_attr(&x->defs, a->key, a->name, a->value) == PROF_OK)
            continue;
        defs_write(x);
        if (pf_put_attr(&x->defs, a->key, a->name, a->value) != PROF_OK)
            x->ok = 0;
    }
}

static void crash_define(crash_ctx *x, rt_tinfo *t)
{
    uint32_t nattrs = rt_attr_count();
    uint32_t n = rt_intern_count();
    for (uint32_t id = rt.wstrings + 1; id <= n && x->ok; id++) {
        uint32_t len;
        const char *s = rt_intern_get(id, &len);
        defs_put_string(x, id, s ? s : "", s ? len : 0);
        rt.wstrings = id;
    }
    crash_define_attrs(x, nattrs);
    uint32_t gen = atomic_load_explicit(&t->name_gen, memory_order_relaxed);
    if (gen != t->wname_gen) {
        char name[RT_THREAD_NAME_MAX];
        memcpy(name, t->name, sizeof name); /* racy read: bounded, terminated */
        name[sizeof name - 1] = '\0';
        if (pf_put_thread(&x->defs, t->index, t->os_tid, name) != PROF_OK) {
            defs_write(x);
            pf_put_thread(&x->defs, t->index, t->os_tid, name);
        }
        t->wname_gen = gen;
    }
    defs_write(x);
}

static void crash_range(crash_ctx *x, rt_chunk *c, uint32_t to)
{
    if (!x->ok || to <= c->done)
        return;
    pf_block_reset(&x->ev, PF_BLOCK_EVENTS, c->owner->index);
    crash_define(x, c->owner);
    if (rt_encode(&x->ev, c->recs, c->done, to) != PROF_OK ||
        pf_writer_write_block_raw(rt.w, &x->ev) != PROF_OK)
        x->ok = 0;
    c->done = to;
}

/* Full chunks first (the writer's pending list, then the stack in
 * hand-over order), then live prefixes whose predecessors are written. */
static void crash_chunks(crash_ctx *x)
{
    rt_chunk *c;
    while (x->ok && (c = rt.wlist) != NULL) {
        rt.wlist = atomic_load_explicit(&c->next, memory_order_relaxed);
        crash_range(x, c, atomic_load_explicit(&c->committed, memory_order_acquire));
        c->owner->wnext = c->seq + 1;
    }
    c = atomic_exchange_explicit(&rt.pool.full, NULL, memory_order_acquire);
    rt_chunk *fifo = NULL;
    while (c) {
        rt_chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, fifo, memory_order_relaxed);
        fifo = c;
        c = next;
    }
    for (c = fifo; c && x->ok; c = atomic_load_explicit(&c->next, memory_order_relaxed)) {
        crash_range(x, c, atomic_load_explicit(&c->committed, memory_order_acquire));
        c->owner->wnext = c->seq + 1;
    }
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire); t && x->ok;
         t = atomic_load_explicit(&t->next, memory_order_relaxed)) {
        c = atomic_load_explicit(&t->chunk, memory_order_acquire);
        if (c && c->seq == t->wnext)
            crash_range(x, c, atomic_load_explicit(&c->committed, memory_order_acquire));
    }
}

static void crash_dropped(crash_ctx *x)
{
    uint64_t now = rt_clock_ns(&rt.clock, rt_clock_now());
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire); t && x->ok;
         t = atomic_load_explicit(&t->next, memory_order_relaxed)) {
        uint64_t d = atomic_exchange_explicit(&t->dropped, 0, memory_order_relaxed);
        if (!d)
            continue;
        pf_block_reset(&x->ev, PF_BLOCK_EVENTS, t->index);
        crash_define(x, t);
        if (pf_put_dropped(&x->ev, d, now) != PROF_OK ||
            pf_writer_write_block_raw(rt.w, &x->ev) != PROF_OK)
            x->ok = 0;
    }
}

static void crash_write(void)
{
    crash_ctx x = { .ok = 1 };
    pf_block_init_fixed(&x.ev, PF_BLOCK_EVENTS, 0, rt.crash_mem, rt.crash_events_cap);
    pf_block_init_fixed(&x.defs, PF_BLOCK_DEFS, PF_THREAD_NONE,
                        rt.crash_mem + rt.crash_events_cap, rt.crash_defs_cap);
    if (pf_writer_write_pending_raw(rt.w) != PROF_OK)
        return;
    crash_chunks(&x);
    crash_dropped(&x);
    if (x.ok && rt.sampler.count)
        pf_writer_write_block_raw(rt.w, &rt.sampler);
}

/* Takes the io lock from the writer, waiting at most about a second for
 * the block it is writing. Not when the writer is the crashing thread and
 * holds it: the file is mid-block then. */
static int crash_lock(void)
{
    uint64_t me = (uint64_t)gettid();
    if (me == atomic_load_explicit(&rt.writer_tid, memory_order_relaxed))
        return rt_io_enter(2);
    for (int i = 0; i < CRASH_WAIT_TRIES; i++) {
        if (rt_io_enter(2))
            return 1;
        struct timespec nap = { 0, 500 * 1000 };
        nanosleep(&nap, NULL);
    }
    return 0;
}

static void crash_flush(void)
{
    if (!atomic_load_explicit(&rt.crash_armed, memory_order_acquire) ||
        atomic_exchange_explicit(&rt.crashed, 1, memory_order_acq_rel))
        return;
    atomic_store_explicit(&rt_state, 0, memory_order_release); /* stop appending */
    if (!crash_lock())
        return;
    if (rt.w)
        crash_write();
    rt_io_leave(); /* if a handler lets the program go on, so does the writer */
}

/* ---- handlers ----------------------------------------------------------------- */

static int slot_of(int sig)
{
    for (size_t i = 0; i < NSIGS; i++)
        if (fatal_sigs[i] == sig)
            return (int)i;
    return -1;
}

static int is_default(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

static int is_ignored(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN;
}

static void crash_handler(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    int i = slot_of(sig);
    if (i < 0)
        return;
    const struct sigaction *p = &prev[i];
    int faults = sig != SIGTERM && sig != SIGINT;
    if (faults || is_default(p))
        crash_flush();
    if (is_default(p)) {
        /* Re-raised while blocked in this handler: delivered, with the
         * default action, as soon as it returns. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        raise(sig);
    } else if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, info, uctx);
    } else if (!is_ignored(p)) {
        p->sa_handler(sig);
    }
    errno = saved;
}

static int is_ours(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == crash_handler;
}

void rt_signals_install(void)
{
    for (size_t i = 0; i < NSIGS; i++) {
        struct sigaction cur, act;
        if (sigaction(fatal_sigs[i], NULL, &cur) != 0 || is_ignored(&cur) || is_ours(&cur))
            continue; /* an ignored signal (nohup) stays ignored */
        memset(&act, 0, sizeof act);
        act.sa_sigaction = crash_handler;
        act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&act.sa_mask);
        for (size_t j = 0; j < NSIGS; j++)
            sigaddset(&act.sa_mask, fatal_sigs[j]);
        prev[i] = cur;
        if (sigaction(fatal_sigs[i], &act, NULL) == 0)
            installed[i] = 1;
    }
}

/* Puts back what was there, unless the program replaced our handler in
 * the meantime (then prev stays valid for it to chain to). */
void rt_signals_restore(void)
{
    for (size_t i = 0; i < NSIGS; i++) {
        struct sigaction cur;
        if (!installed[i])
            continue;
        installed[i] = 0;
        if (sigaction(fatal_sigs[i], NULL, &cur) == 0 && is_ours(&cur))
            sigaction(fatal_sigs[i], &prev[i], NULL);
    }
}

/* ---- fork ----------------------------------------------------------------------- */

/* Every lock the child could need is taken across fork, so that none is
 * left held by a thread that does not exist in the child. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&rt.ctl_mu);
    pthread_mutex_lock(&rt.reg_mu);
    rt_intern_lock();
    pthread_mutex_lock(&rt.flush_mu);
    rt_report_lock(); /* last: held while nothing else is taken */
}

static void fork_parent(void)
{
    rt_report_unlock();
    pthread_mutex_unlock(&rt.flush_mu);
    rt_intern_unlock();
    pthread_mutex_unlock(&rt.reg_mu);
    pthread_mutex_unlock(&rt.ctl_mu);
}

static void child_forget_session(void)
{
    if (rt.w) {
        close(pf_writer_fd(rt.w)); /* the parent's file: never written here */
        rt.orphans[1] = rt.w;      /* may be mid-update: not freed        */
        rt.w = NULL;
    }
    rt.fd = -1;
    if (rt.statm_fd >= 0)
        close(rt.statm_fd); /* it reads the parent's /proc entry */
    rt.statm_fd = -1;
    rt_signals_restore();
    rt_pool_free(&rt.pool);
    rt_crash_free();
    rt_config_free(&rt.cfg);
    rt.running = 0;
}

static void fork_child(void)
{
    atomic_store_explicit(&rt_state, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.crash_armed, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.io, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.pool.full, NULL, memory_order_relaxed);
    if (rt.running)
        child_forget_session();
    rt_threads_orphan();
    rt_writer_after_fork();
    fork_parent(); /* the same unlocks: this thread took them in prepare */
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_register(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void rt_fork_handlers_once(void)
{
    pthread_once(&fork_once, fork_register);
}
