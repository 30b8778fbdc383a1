/* writer.c - the writer thread: turns chunks into blocks and writes them.
 *
 * It wakes when a chunk fills up, when prof_flush asks, and every
 * flush_interval_ms; then it writes the full chunks (in the order their
 * threads handed them over), and on a flush also the committed prefix of
 * every live chunk, so that a kill -9 loses at most one flush interval.
 * Strings and threads are defined (pf_writer_define_*) right before the
 * block that could use them. Every piece of file work holds the io lock,
 * which the crash path takes instead when the process is dying.
 *
 * A failed write stops the recording: one error message (rt_report), the
 * file keeps the blocks already written, and the program goes on. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "record/runtime.h"

#define WRITER_NICE 10

static pf_block wblk; /* the writer thread's encoding buffer */
static pthread_once_t sem_once = PTHREAD_ONCE_INIT;
static int sem_ok;

int rt_io_enter(int who)
{
    int expected = 0;
    return atomic_compare_exchange_strong_explicit(&rt.io, &expected, who, memory_order_acquire,
                                                   memory_order_relaxed);
}

void rt_io_leave(void)
{
    atomic_store_explicit(&rt.io, 0, memory_order_release);
}

static uint64_t now_ns(void)
{
    return rt_clock_ns(&rt.clock, rt_clock_now());
}

/* ---- encoding ---------------------------------------------------------------- */

static prof_err encode_one(pf_block *b, const rt_rec *r)
{
    uint64_t t0 = rt_clock_ns(&rt.clock, r->t0);
    uint64_t t1;
    double value;
    switch (r->type) {
    case RT_REGION:
        t1 = rt_clock_ns(&rt.clock, r->v);
        return pf_put_region(b, r->name, r->kind, r->depth, t0, t1 > t0 ? t1 - t0 : 0);
    case RT_STEP:
        t1 = rt_clock_ns(&rt.clock, r->v);
        return pf_put_step(b, r->x, r->name, t0, t1 > t0 ? t1 - t0 : 0);
    case RT_MEMORY:
        return pf_put_memory(b, r->name, t0, r->v);
    case RT_COUNTER:
        memcpy(&value, &r->v, sizeof value);
        return pf_put_counter(b, r->name, t0, value);
    case RT_MARK:
        return pf_put_mark(b, r->name, t0);
    }
    return PROF_ERR_INVALID;
}

/* Async-signal-safe for a fixed block: the crash path uses it too. */
prof_err rt_encode(pf_block *b, const rt_rec *recs, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        prof_err e = encode_one(b, &recs[i]);
        if (e)
            return e;
    }
    return PROF_OK;
}

/* ---- failure ------------------------------------------------------------------- */

/* Said once per recording; prof_stop returns the error too. */
static void writer_fail(prof_err e, int err)
{
    if (atomic_exchange_explicit(&rt.failed, 1, memory_order_acq_rel))
        return;
    rt.err = e == PROF_ERR_NOMEM ? ENOMEM : (err ? err : EIO);
    atomic_store_explicit(&rt_state, 0, memory_order_release);
    atomic_store_explicit(&rt.crash_armed, 0, memory_order_release);
    rt_report(PROF_MSG_ERROR, "recording stopped: cannot write '%s': %s", rt.cfg.output,
              strerror(rt.err));
}

static int writer_ok(void)
{
    return !atomic_load_explicit(&rt.failed, memory_order_acquire);
}

/* ---- definitions ------------------------------------------------------------------ */

/* Every string interned so far. Called after loading the committed count
 * of the chunk about to be written: an id in it was interned (and the
 * count published) before the record was committed. Then the class
 * attributes logged before that, whose strings are then defined: their
 * count is loaded first, and they were interned before being logged. */
static prof_err define_strings(void)
{
    uint32_t nattrs = rt_attr_count();
    uint32_t n = rt_intern_count();
    for (uint32_t id = rt.wstrings + 1; id <= n; id++) {
        uint32_t len;
        const char *s = rt_intern_get(id, &len);
        prof_err e = pf_writer_define_string(rt.w, id, s, len);
        if (e)
            return e;
        rt.wstrings = id;
    }
    for (; rt.wattrs < nattrs; rt.wattrs++) {
        const rt_attr *a = rt_attr_get(rt.wattrs);
        prof_err e = pf_writer_define_attr(rt.w, a->key, a->name, a->value);
        if (e)
            return e;
    }
    return PROF_OK;
}

static prof_err define_thread(rt_tinfo *t)
{
    char name[RT_THREAD_NAME_MAX];
    if (atomic_load_explicit(&t->name_gen, memory_order_acquire) == t->wname_gen)
        return PROF_OK;
    pthread_mutex_lock(&rt.reg_mu);
    uint32_t gen = atomic_load_explicit(&t->name_gen, memory_order_relaxed);
    memcpy(name, t->name, sizeof name);
    pthread_mutex_unlock(&rt.reg_mu);
    prof_err e = pf_writer_define_thread(rt.w, t->index, t->os_tid, name);
    if (!e)
        t->wname_gen = gen;
    return e;
}

/* ---- blocks -------------------------------------------------------------------------- */

static void write_events(pf_block *b, rt_tinfo *t)
{
    prof_err e = define_strings();
    if (!e && t)
        e = define_thread(t);
    errno = 0;
    if (!e)
        e = pf_writer_write_block(rt.w, b, NULL);
    if (e)
        writer_fail(e, errno);
}

/* Records [c->done, to) of c as one block of its owner's thread. */
static void write_range(rt_chunk *c, uint32_t to)
{
    if (to > c->done && writer_ok()) {
        pf_block_reset(&wblk, PF_BLOCK_EVENTS, c->owner->index);
        prof_err e = rt_encode(&wblk, c->recs, c->done, to);
        if (e)
            writer_fail(e, 0);
        else
            write_events(&wblk, c->owner);
    }
    c->done = to;
}

static rt_chunk *pop_full(void)
{
    rt_chunk *c = atomic_exchange_explicit(&rt.pool.full, NULL, memory_order_acquire);
    rt_chunk *fifo = NULL;
    while (c) { /* the stack is newest first: reverse it to hand-over order */
        rt_chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, fifo, memory_order_relaxed);
        fifo = c;
        c = next;
    }
    return fifo;
}

/* Full chunks, one block each; bounded so that a flood of chunks cannot
 * starve the periodic work. */
static void write_full(void)
{
    for (uint32_t budget = rt.pool.n + 1; budget; budget--) {
        if (!rt_io_enter(1))
            return;
        if (!rt.wlist)
            rt.wlist = pop_full();
        rt_chunk *c = rt.wlist;
        if (!c) {
            rt_io_leave();
            return;
        }
        rt.wlist = atomic_load_explicit(&c->next, memory_order_relaxed);
        write_range(c, atomic_load_explicit(&c->committed, memory_order_acquire));
        c->owner->wnext = c->seq + 1;
        rt_pool_recycle(&rt.pool, c);
        rt_io_leave();
    }
}

/* The committed prefix of every live chunk whose predecessors are all
 * written (otherwise its thread's blocks would go out of order). */
static void write_live(void)
{
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire); t;
         t = atomic_load_explicit(&t->next, memory_order_relaxed)) {
        if (!rt_io_enter(1))
            return;
        rt_chunk *c = atomic_load_explicit(&t->chunk, memory_order_acquire);
        if (c && c->seq == t->wnext)
            write_range(c, atomic_load_explicit(&c->committed, memory_order_acquire));
        if (writer_ok()) {
            prof_err e = define_thread(t); /* named threads without events too */
            if (e)
                writer_fail(e, 0);
        }
        rt_io_leave();
    }
}

/* t's count of dropped events, as an event of its own (io lock held). */
static void write_dropped_of(rt_tinfo *t)
{
    uint64_t d = atomic_exchange_explicit(&t->dropped, 0, memory_order_relaxed);
    if (d && writer_ok()) {
        pf_block_reset(&wblk, PF_BLOCK_EVENTS, t->index);
        prof_err e = pf_put_dropped(&wblk, d, now_ns());
        if (e)
            writer_fail(e, 0);
        else
            write_events(&wblk, t);
    }
}

static void write_dropped(void)
{
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire); t;
         t = atomic_load_explicit(&t->next, memory_order_relaxed)) {
        if (!atomic_load_explicit(&t->dropped, memory_order_relaxed) || !rt_io_enter(1))
            continue;
        write_dropped_of(t);
        rt_io_leave();
    }
}

/* ---- threads that exited ---------------------------------------------------------- */

/* Whether an exited thread has nothing left to write: every chunk it took
 * is written (its count is final once it is dead), and so are its name
 * and dropped count; after a failure nothing will be written anyway. */
static int exited_done(rt_tinfo *t)
{
    if (t->wnext != t->cseq)
        return 0;
    return !writer_ok() ||
           (!atomic_load_explicit(&t->dropped, memory_order_relaxed) &&
            atomic_load_explicit(&t->name_gen, memory_order_relaxed) == t->wname_gen);
}

/* Writes what exited threads left besides their chunks (which go out as
 * full chunks) and frees their states, so that a program starting many
 * short-lived threads does not keep one per thread until prof_stop. */
static void reap_exited(void)
{
    if (!atomic_load_explicit(&rt.dead, memory_order_relaxed) || !rt_io_enter(1))
        return;
    for (rt_tinfo *t = atomic_load_explicit(&rt.threads, memory_order_acquire);
         t && writer_ok(); t = atomic_load_explicit(&t->next, memory_order_relaxed)) {
        if (!atomic_load_explicit(&t->dead, memory_order_acquire) || t->wnext != t->cseq)
            continue;
        write_dropped_of(t);
        prof_err e = writer_ok() ? define_thread(t) : PROF_OK; /* named, no events */
        if (e)
            writer_fail(e, 0);
    }
    rt_threads_reap(exited_done);
    rt_io_leave();
}

/* ---- background memory samples ----------------------------------------------------- */

/* The samples the writer takes itself go to a thread of their own, so
 * that no recording thread's blocks get out of order. */
static void sample_memory(void)
{
    if (rt.statm_fd < 0 || !writer_ok() || !rt_io_enter(1))
        return;
    prof_err e = PROF_OK;
    if (rt.sampler_index == UINT32_MAX) {
        pthread_mutex_lock(&rt.reg_mu);
        rt.sampler_index = rt.nthreads++;
        pthread_mutex_unlock(&rt.reg_mu);
        pf_block_reset(&rt.sampler, PF_BLOCK_EVENTS, rt.sampler_index);
        e = pf_writer_define_thread(rt.w, rt.sampler_index,
                                    atomic_load_explicit(&rt.writer_tid, memory_order_relaxed),
                                    "prof.sampler");
    }
    if (!e)
        e = pf_put_memory(&rt.sampler, rt.rss_id, now_ns(), rt_rss_read(rt.statm_fd));
    if (e)
        writer_fail(e, 0);
    rt_io_leave();
}

static void write_sampler(void)
{
    if (!rt.sampler.count || !writer_ok() || !rt_io_enter(1))
        return;
    write_events(&rt.sampler, NULL);
    rt_io_leave();
}

/* GPU activity that cupti.c translated on CUPTI's thread. */
static void write_gpu(void)
{
    if (!writer_ok() || !rt_io_enter(1))
        return;
    rt_gpu_write();
    rt_io_leave();
}

int rt_writer_put_block(pf_block *b)
{
    write_events(b, NULL);
    return writer_ok() ? 0 : -1;
}

/* After a failure: give chunks back so that nothing stays pinned. */
static void discard_full(void)
{
    if (!rt_io_enter(1))
        return;
    for (;;) {
        if (!rt.wlist)
            rt.wlist = pop_full();
        rt_chunk *c = rt.wlist;
        if (!c)
            break;
        rt.wlist = atomic_load_explicit(&c->next, memory_order_relaxed);
        c->owner->wnext = c->seq + 1; /* as if written: an exited owner can go */
        rt_pool_recycle(&rt.pool, c);
    }
    rt_io_leave();
}

static void writer_pass(int live)
{
    if (!writer_ok()) {
        discard_full();
    } else {
        write_full();
        if (live) {
            write_live();
            write_dropped();
            write_sampler();
            write_gpu();
        }
    }
    reap_exited();
}

/* ---- the thread --------------------------------------------------------------------- */

static uint64_t flush_requested(void)
{
    pthread_mutex_lock(&rt.flush_mu);
    uint64_t req = rt.flush_req;
    pthread_mutex_unlock(&rt.flush_mu);
    return req;
}

static void flush_completed(uint64_t req, int last)
{
    pthread_mutex_lock(&rt.flush_mu);
    if (req > rt.flush_done)
        rt.flush_done = req;
    if (last) {
        rt.writer_running = 0;
        rt.flush_done = rt.flush_req;
    }
    pthread_cond_broadcast(&rt.flush_cv);
    pthread_mutex_unlock(&rt.flush_mu);
}

static void wait_until(uint64_t deadline_ns)
{
    struct timespec ts = { (time_t)(deadline_ns / 1000000000u),
                           (long)(deadline_ns % 1000000000u) };
    sem_clockwait(&rt.wake, CLOCK_MONOTONIC, &ts);
}

static void writer_close(void)
{
    if (!rt_io_enter(1))
        return; /* the crash path owns the file: the process is dying */
    if (writer_ok()) {
        errno = 0;
        prof_err e = pf_writer_close(rt.w, NULL);
        if (e)
            writer_fail(e, errno);
    } else {
        pf_writer_abandon(rt.w);
    }
    rt.w = NULL;
    rt_io_leave();
}

static void *writer_main(void *arg)
{
    (void)arg;
    pid_t tid = gettid();
    atomic_store_explicit(&rt.writer_tid, (uint64_t)tid, memory_order_relaxed);
    /* Where cores are short, the training threads come first: the writer
     * has the whole buffer's worth of slack (a failure changes nothing). */
    setpriority(PRIO_PROCESS, (id_t)tid, WRITER_NICE);
    uint64_t period = (uint64_t)rt.cfg.flush_interval_ms * 1000000u;
    uint64_t every = (uint64_t)rt.cfg.memory_interval_ms * 1000000u;
    uint64_t next_flush = rt_clock_mono_ns() + period;
    uint64_t next_sample = every ? rt_clock_mono_ns() + every : UINT64_MAX;
    uint64_t served = 0;
    for (;;) {
        wait_until(next_flush < next_sample ? next_flush : next_sample);
        atomic_store_explicit(&rt.kicked, 0, memory_order_seq_cst);
        int stopping = atomic_load_explicit(&rt.stopping, memory_order_acquire);
        uint64_t req = flush_requested();
        uint64_t now = rt_clock_mono_ns();
        if (now >= next_sample) {
            sample_memory();
            next_sample = now + every;
        }
        int periodic = now >= next_flush;
        writer_pass(periodic || stopping || req > served);
        if (stopping) /* chunks handed over by threads exiting meanwhile */
            writer_pass(1);
        if (periodic)
            next_flush = now + period;
        served = req;
        flush_completed(req, 0);
        if (stopping)
            break;
    }
    writer_close();
    flush_completed(0, 1);
    pf_block_free(&wblk);
    return NULL;
}

static void sem_setup(void)
{
    sem_ok = sem_init(&rt.wake, 0, 0) == 0;
}

/* Asynchronous signals go to the program's threads, never to the writer;
 * blocking SIGXFSZ makes a write past RLIMIT_FSIZE fail with EFBIG instead
 * of killing the program. Faults stay deliverable. */
static void writer_sigmask(sigset_t *set)
{
    sigfillset(set);
    sigdelset(set, SIGSEGV);
    sigdelset(set, SIGBUS);
    sigdelset(set, SIGFPE);
    sigdelset(set, SIGILL);
    sigdelset(set, SIGABRT);
    sigdelset(set, SIGTRAP);
}

int rt_writer_start(void)
{
    sigset_t set, old;
    pthread_once(&sem_once, sem_setup);
    if (!sem_ok)
        return -ENOMEM;
    while (sem_trywait(&rt.wake) == 0) /* posts left from a past session */
        ;
    atomic_store_explicit(&rt.stopping, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.kicked, 0, memory_order_relaxed);
    pf_block_init(&wblk, PF_BLOCK_EVENTS, 0);
    pf_block_init(&rt.sampler, PF_BLOCK_EVENTS, 0);
    rt.flush_req = rt.flush_done = 0;
    rt.writer_running = 1;
    writer_sigmask(&set);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    int e = pthread_create(&rt.writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        rt.writer_running = 0;
        return -e;
    }
    return 0;
}

int rt_writer_stop(void)
{
    atomic_store_explicit(&rt.stopping, 1, memory_order_release);
    sem_post(&rt.wake);
    pthread_join(rt.writer, NULL);
    pf_block_free(&rt.sampler);
    return rt.err ? -rt.err : 0;
}

void rt_writer_flush(void)
{
    pthread_mutex_lock(&rt.flush_mu);
    if (rt.writer_running) {
        uint64_t mine = ++rt.flush_req;
        rt_writer_kick();
        while (rt.flush_done < mine && rt.writer_running)
            pthread_cond_wait(&rt.flush_cv, &rt.flush_mu);
    }
    pthread_mutex_unlock(&rt.flush_mu);
}

/* In a fork child: no writer thread exists there. Its buffers may have
 * been mid-realloc when the fork happened, so they are left as they are,
 * kept reachable. */
void rt_writer_after_fork(void)
{
    sem_destroy(&rt.wake);
    sem_ok = sem_init(&rt.wake, 0, 0) == 0;
    rt.writer_running = 0;
    rt.flush_req = rt.flush_done = 0;
    rt.wlist = NULL;
    rt.orphans[3] = wblk.buf;
    rt.orphans[4] = rt.sampler.buf;
    memset(&wblk, 0, sizeof wblk);
    memset(&rt.sampler, 0, sizeof rt.sampler);
}
