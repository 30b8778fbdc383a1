/* thread.c - per-thread recording state and the chunk pool: attaching a
 * thread, registering it in a session (its profile thread index), handing
 * full chunks to the writer and taking free ones, and what happens when a
 * thread exits, when recording stops and after fork.
 *
 * A thread's state is two allocations: the big one it records with
 * (rt_thread: open regions, name caches), freed as soon as it exits, and
 * the small one the writer reads (rt_tinfo), freed by the writer once what
 * the thread left is in the file (rt_threads_reap). Memory so follows the
 * threads alive, not all the threads a program ever started.
 *
 * The pool's free lists and full stack are lock-free, so a recording thread
 * never waits for the writer: when no chunk is free it drops the event and
 * counts it. Step boundaries alone may also take a spare chunk (see
 * rt_pool in runtime.h): steps are never dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "record/runtime.h"

__thread rt_thread *rt_self __attribute__((tls_model("initial-exec")));
/* Set once the thread's exit destructor ran: a later call (from another
 * TLS destructor) must not attach a new state that nobody would free. */
static __thread int rt_exited __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

/* ---- pool ------------------------------------------------------------------ */

static void list_push(rt_pool *p, _Atomic uint64_t *head, rt_chunk *c)
{
    uint32_t idx = (uint32_t)(c - p->chunks);
    uint64_t h = atomic_load_explicit(head, memory_order_relaxed);
    uint64_t nh;
    do {
        atomic_store_explicit(&c->free_next, (uint32_t)h, memory_order_relaxed);
        nh = (((h >> 32) + 1) << 32) | (idx + 1);
    } while (!atomic_compare_exchange_weak_explicit(head, &h, nh, memory_order_release,
                                                    memory_order_relaxed));
}

static rt_chunk *list_pop(rt_pool *p, _Atomic uint64_t *head)
{
    uint64_t h = atomic_load_explicit(head, memory_order_acquire);
    while ((uint32_t)h) {
        rt_chunk *c = &p->chunks[(uint32_t)h - 1];
        uint64_t next = atomic_load_explicit(&c->free_next, memory_order_relaxed);
        uint64_t nh = (((h >> 32) + 1) << 32) | next;
        if (atomic_compare_exchange_weak_explicit(head, &h, nh, memory_order_acquire,
                                                  memory_order_acquire))
            return c;
    }
    return NULL;
}

int rt_pool_init(rt_pool *p, size_t buffer_bytes)
{
    size_t chunk_bytes = RT_CHUNK_RECS * sizeof(rt_rec);
    size_t plain = buffer_bytes / chunk_bytes;
    if (plain < RT_MIN_CHUNKS)
        plain = RT_MIN_CHUNKS;
    if (plain > (1u << 24)) /* 1 TiB of buffers: past any sane configuration */
        plain = 1u << 24;
    size_t n = plain + RT_SPARE_CHUNKS;
    memset(p, 0, sizeof *p);
    /* MAP_NORESERVE: untouched chunks cost neither memory nor commit. */
    void *mem = mmap(NULL, n * chunk_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED)
        return -ENOMEM;
    p->chunks = calloc(n, sizeof *p->chunks);
    if (!p->chunks) {
        munmap(mem, n * chunk_bytes);
        return -ENOMEM;
    }
    p->mem = mem;
    p->mem_bytes = n * chunk_bytes;
    p->n = (uint32_t)n;
    p->nplain = (uint32_t)plain;
    for (size_t i = 0; i < n; i++)
        p->chunks[i].recs = p->mem + i * RT_CHUNK_RECS;
    for (size_t i = plain; i < n; i++)
        list_push(p, &p->spare_head, &p->chunks[i]);
    return 0;
}

void rt_pool_free(rt_pool *p)
{
    if (p->mem)
        munmap(p->mem, p->mem_bytes);
    free(p->chunks);
    memset(p, 0, sizeof *p);
}

static int is_spare(const rt_pool *p, const rt_chunk *c)
{
    return (uint32_t)(c - p->chunks) >= p->nplain;
}

/* A plain chunk, else (spare_ok) a spare one, else NULL. */
static rt_chunk *pool_take(rt_pool *p, int spare_ok)
{
    rt_chunk *c = list_pop(p, &p->free_head);
    if (c)
        return c;
    uint32_t f = atomic_load_explicit(&p->fresh, memory_order_relaxed);
    while (f < p->nplain) {
        if (atomic_compare_exchange_weak_explicit(&p->fresh, &f, f + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return &p->chunks[f];
    }
    return spare_ok ? list_pop(p, &p->spare_head) : NULL;
}

void rt_pool_recycle(rt_pool *p, rt_chunk *c)
{
    c->done = 0;
    c->owner = NULL;
    atomic_store_explicit(&c->committed, 0, memory_order_relaxed);
    list_push(p, is_spare(p, c) ? &p->spare_head : &p->free_head, c);
}

static void pool_push_full(rt_pool *p, rt_chunk *c)
{
    rt_chunk *h = atomic_load_explicit(&p->full, memory_order_relaxed);
    do
        atomic_store_explicit(&c->next, h, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&p->full, &h, c, memory_order_release,
                                                  memory_order_relaxed));
}

/* One system call at most, only when the writer sleeps and no wake-up is
 * pending: once per full chunk, never per event. */
void rt_writer_kick(void)
{
    if (!atomic_exchange_explicit(&rt.kicked, 1, memory_order_acq_rel))
        sem_post(&rt.wake);
}

/* ---- thread states ------------------------------------------------------------ */

/* Hands the chunk the thread holds to the writer. Clearing t->chunk before
 * the push matters: once the writer has popped (and maybe recycled) the
 * chunk, its live-flush scan must not find it through t->chunk. */
static void hand_over(rt_thread *t)
{
    rt_chunk *c = t->cur;
    t->recs = NULL;
    t->n = RT_CHUNK_RECS;
    t->on_spare = 0;
    t->cur = NULL;
    if (!c)
        return;
    atomic_store_explicit(&t->info->chunk, NULL, memory_order_release);
    pool_push_full(&rt.pool, c);
    rt_writer_kick();
}

/* The thread's recording state goes at once; what the writer still needs
 * stays on the registry, and the writer is woken to write it and free it. */
static void thread_exit(void *arg)
{
    rt_thread *t = arg;
    rt_tinfo *info = t->info;
    rt_exited = 1;
    rt_self = NULL;
    pthread_mutex_lock(&rt.reg_mu);
    int listed = info->listed;
    if (listed) {
        hand_over(t);
        atomic_fetch_add_explicit(&rt.dead, 1, memory_order_relaxed);
    }
    info->hot = NULL;
    atomic_store_explicit(&info->dead, 1, memory_order_release);
    pthread_mutex_unlock(&rt.reg_mu);
    free(t);
    if (listed)
        rt_writer_kick();
    else
        free(info);
}

static void key_create(void)
{
    key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

rt_thread *rt_thread_attach(void)
{
    if (rt_exited)
        return NULL;
    pthread_once(&key_once, key_create);
    rt_thread *t = calloc(1, sizeof *t);
    rt_tinfo *info = calloc(1, sizeof *info);
    if (!t || !info || (key_ok && pthread_setspecific(exit_key, t) != 0)) {
        free(t);
        free(info);
        return NULL;
    }
    t->n = RT_CHUNK_RECS;
    t->info = info;
    info->hot = t;
    info->os_tid = (uint64_t)gettid();
    char comm[17] = "";
    if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
        snprintf(info->name, sizeof info->name, "%s", comm);
    rt_self = t;
    return t;
}

/* Gives t its profile thread index in the current session and publishes
 * it to the writer. */
static int thread_register(rt_tinfo *t)
{
    int ok = 0;
    pthread_mutex_lock(&rt.reg_mu);
    if (rt.nthreads < PF_THREADS) {
        t->index = rt.nthreads++;
        t->session = rt.session;
        t->cseq = 0;
        t->wnext = 0;
        t->wname_gen = 0;
        atomic_fetch_add_explicit(&t->name_gen, 1, memory_order_relaxed);
        t->listed = 1;
        atomic_store_explicit(&t->next, atomic_load_explicit(&rt.threads, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&rt.threads, t, memory_order_release);
        ok = 1;
    }
    pthread_mutex_unlock(&rt.reg_mu);
    return ok ? 0 : -1;
}

int rt_thread_ensure_registered(rt_thread *t)
{
    return t->info->session == rt.session ? 0 : thread_register(t->info);
}

void rt_thread_drop(rt_thread *t)
{
    if (rt_thread_ensure_registered(t) == 0) /* else nowhere to count it */
        atomic_fetch_add_explicit(&t->info->dropped, 1, memory_order_relaxed);
}

static void install(rt_thread *t, rt_chunk *c)
{
    c->owner = t->info;
    c->seq = t->info->cseq++;
    t->cur = c;
    atomic_store_explicit(&t->info->chunk, c, memory_order_release);
    t->recs = c->recs;
    t->n = 0;
    t->on_spare = is_spare(&rt.pool, c);
    t->spare_n = RT_CHUNK_RECS;
}

/* A parked spare stays with its thread until a plain chunk replaces it
 * (or it fills up): handing it over at every dropped event would spend a
 * spare per step boundary. */
int rt_thread_refill(rt_thread *t)
{
    if (rt_thread_ensure_registered(t) < 0)
        return -1; /* past 2^20 threads: nowhere to count the loss */
    if (t->on_spare && t->keep && t->spare_n < RT_CHUNK_RECS) {
        t->n = t->spare_n; /* a step boundary goes on in the parked spare */
        t->spare_n = RT_CHUNK_RECS;
        return 0;
    }
    if (!t->on_spare)
        hand_over(t); /* full, or none at all */
    rt_chunk *c = pool_take(&rt.pool, t->keep);
    if (!c) {
        atomic_fetch_add_explicit(&t->info->dropped, 1, memory_order_relaxed);
        return -1;
    }
    hand_over(t); /* the spare, now replaced */
    install(t, c);
    return 0;
}

void rt_thread_keep_end(rt_thread *t)
{
    t->keep = 0;
    if (t->on_spare && t->spare_n == RT_CHUNK_RECS) {
        t->spare_n = t->n;
        t->n = RT_CHUNK_RECS;
    }
}

void rt_thread_set_name(rt_thread *t, const char *name)
{
    pthread_mutex_lock(&rt.reg_mu);
    snprintf(t->info->name, sizeof t->info->name, "%s", name);
    atomic_fetch_add_explicit(&t->info->name_gen, 1, memory_order_release);
    pthread_mutex_unlock(&rt.reg_mu);
}

static void reset_hot(rt_thread *t)
{
    t->recs = NULL;
    t->n = RT_CHUNK_RECS;
    t->keep = 0;
    t->on_spare = 0;
    t->depth = 0;
    t->cur = NULL;
    t->info->session = 0;
    atomic_store_explicit(&t->info->chunk, NULL, memory_order_relaxed);
    atomic_store_explicit(&t->info->dropped, 0, memory_order_relaxed);
}

void rt_threads_reset(void)
{
    pthread_mutex_lock(&rt.reg_mu);
    rt_tinfo *t = atomic_exchange_explicit(&rt.threads, NULL, memory_order_acq_rel);
    while (t) {
        rt_tinfo *next = atomic_load_explicit(&t->next, memory_order_relaxed);
        t->listed = 0;
        if (atomic_load_explicit(&t->dead, memory_order_acquire))
            free(t);
        else
            reset_hot(t->hot);
        t = next;
    }
    rt.nthreads = 0;
    atomic_store_explicit(&rt.dead, 0, memory_order_relaxed);
    pthread_mutex_unlock(&rt.reg_mu);
}

/* Unlinking needs both locks: reg_mu keeps registration (a push at the
 * head) and cupti.c's lookups out, the io lock the crash path, which
 * walks the list holding it alone. The writer is the only other walker. */
void rt_threads_reap(int (*done)(rt_tinfo *t))
{
    if (!atomic_load_explicit(&rt.dead, memory_order_relaxed))
        return;
    pthread_mutex_lock(&rt.reg_mu);
    rt_tinfo *_Atomic *link = &rt.threads;
    rt_tinfo *t = atomic_load_explicit(link, memory_order_relaxed);
    while (t) {
        rt_tinfo *next = atomic_load_explicit(&t->next, memory_order_relaxed);
        if (atomic_load_explicit(&t->dead, memory_order_acquire) && done(t)) {
            atomic_store_explicit(link, next, memory_order_release);
            atomic_fetch_sub_explicit(&rt.dead, 1, memory_order_relaxed);
            free(t);
        } else {
            link = &t->next;
        }
        t = next;
    }
    pthread_mutex_unlock(&rt.reg_mu);
}

/* In a fork child only the forking thread exists; the other states may be
 * half-updated by threads that are gone. They are left alone (reachable,
 * so leak checkers stay quiet), and the forking thread starts afresh. */
void rt_threads_orphan(void)
{
    rt.orphans[0] = atomic_exchange_explicit(&rt.threads, NULL, memory_order_relaxed);
    rt.nthreads = 0;
    atomic_store_explicit(&rt.dead, 0, memory_order_relaxed);
    if (rt_self) {
        reset_hot(rt_self);
        if (key_ok)
            pthread_setspecific(exit_key, NULL);
        if (!rt_self->info->listed) { /* else reachable from the orphans */
            free(rt_self->info);
            free(rt_self);
        }
        rt_self = NULL;
    }
}
