/* api.c - the hot recording calls of prof.h: regions, steps, memory
 * samples, counters, marks, thread names.
 *
 * Each call first tests rt_state (one predictable branch when recording is
 * off), then works on the calling thread's state only: the stack of open
 * regions and the current chunk. An event is one 32-byte store sequence and
 * a release store of the chunk's committed count; no lock, no allocation,
 * no system call (prof_step's host-memory sample excepted: one pread). */
#include <string.h>

#include "record/runtime.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline unsigned state(void)
{
    return atomic_load_explicit(&rt_state, memory_order_acquire);
}

static inline rt_thread *self(void)
{
    rt_thread *t = rt_self;
    if (UNLIKELY(!t))
        t = rt_thread_attach();
    return t;
}

/* The next free record of t, or NULL when the event is dropped (counted
 * by the refill). */
static inline rt_rec *slot(rt_thread *t)
{
    if (UNLIKELY(t->n == RT_CHUNK_RECS) && rt_thread_refill(t) < 0)
        return NULL;
    return &t->recs[t->n];
}

/* Publishes the record just filled: the writer reads up to committed. */
static inline void commit(rt_thread *t)
{
    uint32_t n = ++t->n;
    atomic_store_explicit(&t->cur->committed, n, memory_order_release);
}

/* The next record with the fields every type has filled in; the caller
 * adds its own and commits. NULL when the record is dropped. */
static inline rt_rec *fill(rt_thread *t, uint8_t type, uint32_t name, uint64_t t0, uint64_t v)
{
    rt_rec *r = slot(t);
    if (UNLIKELY(!r))
        return NULL;
    r->t0 = t0;
    r->v = v;
    r->name = name;
    r->type = type;
    return r;
}

static inline void emit(rt_thread *t, uint8_t type, uint32_t name, uint64_t t0, uint64_t v)
{
    if (LIKELY(fill(t, type, name, t0, v) != NULL))
        commit(t);
}

static inline uint32_t name_id(rt_thread *t, const char *name)
{
    rt_ptr_slot *ps = rt_ptr_slot_of(t, name);
    if (LIKELY(ps->key == name) && LIKELY(strcmp(ps->copy, name) == 0))
        return ps->id;
    return rt_name_miss(t, name);
}

/* ---- regions ----------------------------------------------------------------- */

static inline void begin(rt_thread *t, uint32_t id, prof_kind k, unsigned s)
{
    uint32_t d = t->depth++;
    if (UNLIKELY(d >= RT_MAX_DEPTH))
        return;
    rt_open *o = &t->stack[d];
    /* A region of an unsampled step is kept on the stack (its end must
     * match) but marked not to be recorded. */
    o->name = (s & RT_SAMPLED) ? id : 0;
    o->kind = (unsigned)k <= PROF_KIND_IO ? (uint32_t)k : PROF_KIND_COMPUTE;
    o->t0 = rt_clock_now();
}

static inline void end(void)
{
    uint64_t t1 = rt_clock_now();
    rt_thread *t = rt_self;
    if (UNLIKELY(!t) || UNLIKELY(t->depth == 0))
        return; /* an end without a begin */
    uint32_t d = --t->depth;
    if (UNLIKELY(d >= RT_MAX_DEPTH))
        return;
    const rt_open *o = &t->stack[d];
    if (UNLIKELY(!o->name))
        return;
    rt_rec *r = fill(t, RT_REGION, o->name, o->t0, t1);
    if (UNLIKELY(!r))
        return;
    r->kind = (uint8_t)o->kind;
    r->depth = (uint8_t)d;
    commit(t);
}

/* An id prof_intern never returned (0, or past the ids interned so far)
 * would name a string the file never defines and make the whole profile
 * unreadable: the region is not recorded, counted as dropped, and its end
 * still matches. One load and compare, as the table only grows. */
void prof_region_begin_id(prof_name id, prof_kind k)
{
    unsigned s = state();
    if (UNLIKELY(!(s & RT_ON)))
        return;
    rt_thread *t = self();
    if (UNLIKELY(!t))
        return;
    if (UNLIKELY(id - 1u >= rt_intern_count())) {
        if (s & RT_SAMPLED)
            rt_thread_drop(t);
        id = 0;
    }
    begin(t, id, k, s);
}

void prof_region_begin_kind(const char *name, prof_kind k)
{
    unsigned s = state();
    if (UNLIKELY(!(s & RT_ON)))
        return;
    rt_thread *t = self();
    if (UNLIKELY(!t))
        return;
    /* No lookup when the region will not be recorded anyway. */
    uint32_t id = (s & RT_SAMPLED) && name ? name_id(t, name) : 0;
    begin(t, id, k, s);
}

void prof_region_begin(const char *name)
{
    prof_region_begin_kind(name, PROF_KIND_COMPUTE);
}

void prof_region_end(void)
{
    if (UNLIKELY(!(state() & RT_ON)))
        return;
    end();
}

void prof__scope_end(int *unused)
{
    (void)unused;
    if (UNLIKELY(!(state() & RT_ON)))
        return;
    end();
}

/* ---- steps and samples ---------------------------------------------------------- */

/* Sets the sampled bit for the step that begins, unless recording stopped
 * meanwhile (then rt_state stays 0). */
static void set_sampled(int sampled)
{
    unsigned want = RT_ON | (sampled ? RT_SAMPLED : 0u);
    unsigned cur = atomic_load_explicit(&rt_state, memory_order_relaxed);
    while ((cur & RT_ON) && cur != want &&
           !atomic_compare_exchange_weak_explicit(&rt_state, &cur, want, memory_order_release,
                                                  memory_order_relaxed))
        ;
}

static void emit_step(rt_thread *t, uint64_t number, uint32_t flags, uint64_t t0, uint64_t t1)
{
    rt_rec *r = fill(t, RT_STEP, flags, t0, t1);
    if (UNLIKELY(!r))
        return;
    r->x = number;
    commit(t);
}

/* Device memory at the boundary after step n (CUDA capture only; a
 * function call that returns at once otherwise). */
static void gpu_step(rt_thread *t, uint64_t now, uint64_t n)
{
    rt_gpu_sample s[RT_GPU_MAX_SAMPLES];
    if (!rt.cfg.cuda)
        return;
    int k = rt_gpu_step(rt_clock_ns(&rt.clock, now), rt_step_sampled(&rt.cfg, n + 1), s,
                        RT_GPU_MAX_SAMPLES);
    for (int i = 0; i < k; i++)
        emit(t, RT_MEMORY, s[i].series, now, s[i].bytes);
}

/* Ends the current step at now with extra flags; the host-memory sample
 * that goes with every step boundary follows it. Returns its number.
 * These records may take a spare chunk when the buffer is full: steps
 * are never dropped. */
static uint64_t step_close(rt_thread *t, uint64_t now, uint32_t flags)
{
    uint64_t n = atomic_fetch_add_explicit(&rt.step_no, 1, memory_order_relaxed);
    uint64_t t0 = atomic_exchange_explicit(&rt.step_t0, now, memory_order_relaxed);
    if (rt_step_sampled(&rt.cfg, n))
        flags |= PROF_STEP_SAMPLED;
    t->keep = 1;
    emit_step(t, n, flags, t0, now);
    if (rt.statm_fd >= 0)
        emit(t, RT_MEMORY, rt.rss_id, now, rt_rss_read(rt.statm_fd));
    gpu_step(t, now, n);
    rt_thread_keep_end(t);
    return n;
}

void prof_step(void)
{
    if (UNLIKELY(!(state() & RT_ON)))
        return;
    uint64_t now = rt_clock_now();
    rt_thread *t = self();
    if (UNLIKELY(!t))
        return;
    uint64_t n = step_close(t, now, 0);
    set_sampled(rt_step_sampled(&rt.cfg, n + 1));
}

/* prof_stop's end of the last step, from the stopping thread. */
void rt_step_close_last(void)
{
    rt_thread *t = self();
    if (t)
        step_close(t, rt_clock_now(), PROF_STEP_INCOMPLETE);
}

/* A record of a named sample taken now, from the calling thread; none
 * without a thread or a name. */
static inline void emit_named(uint8_t type, const char *name, uint64_t v)
{
    uint64_t now = rt_clock_now();
    rt_thread *t = self();
    uint32_t id;
    if (LIKELY(t && name) && LIKELY((id = name_id(t, name)) != 0))
        emit(t, type, id, now, v);
}

void prof_memory(const char *series, uint64_t bytes)
{
    if (UNLIKELY(!(state() & RT_ON)))
        return;
    emit_named(RT_MEMORY, series, bytes);
}

void prof_counter(const char *name, double value)
{
    unsigned s = state();
    if (UNLIKELY(!(s & RT_ON)) || !(s & RT_SAMPLED))
        return;
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    emit_named(RT_COUNTER, name, bits);
}

void prof_mark(const char *name)
{
    unsigned s = state();
    if (UNLIKELY(!(s & RT_ON)) || !(s & RT_SAMPLED))
        return;
    emit_named(RT_MARK, name, 0);
}

void prof_thread_name(const char *name)
{
    if (UNLIKELY(!(state() & RT_ON)))
        return;
    rt_thread *t = self();
    if (!t || !name)
        return;
    rt_thread_set_name(t, name);
    /* Registering makes a named thread appear even before it records. */
    rt_thread_ensure_registered(t);
}
