/* clock.h - the recorder's time base: the invariant TSC where the CPU has
 * one (a register read, no system call), else CLOCK_MONOTONIC. The hot
 * path stores raw ticks; rt_clock_ns converts them to nanoseconds since the
 * origin (the prof_start instant) when the writer encodes records. */
#ifndef PROF_RECORD_CLOCK_H
#define PROF_RECORD_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define RT_HAVE_TSC 1
#else
#define RT_HAVE_TSC 0
#endif

#pragma GCC visibility push(hidden)

typedef struct rt_clock {
    int tsc;                  /* 1: ticks are TSC cycles; 0: nanoseconds     */
    double hz;                /* calibrated TSC frequency                    */
    uint64_t mult;            /* ns per tick × 2^32                          */
    uint64_t origin;          /* ticks at the origin                         */
    uint64_t origin_mono_ns;  /* CLOCK_MONOTONIC at the origin              */
    uint64_t origin_epoch_ns; /* CLOCK_REALTIME at the origin               */
} rt_clock;

/* Which clock rt_clock_now reads. Chosen once, by the first rt_clock_init,
 * before anything records, and never changed: the branch is predictable. */
extern int rt_clock_use_tsc;

static inline uint64_t rt_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rt_clock_now(void)
{
#if RT_HAVE_TSC
    if (__builtin_expect(rt_clock_use_tsc, 1))
        return __rdtsc();
#endif
    return rt_clock_mono_ns();
}

/* Picks the source (calibrating the TSC once per process, ≤ ~20 ms) and
 * sets the origin to now. */
void rt_clock_init(rt_clock *c);

/* Ticks to ns since the origin; times before the origin give 0. Async-
 * signal-safe (arithmetic only). */
static inline uint64_t rt_clock_ns(const rt_clock *c, uint64_t ticks)
{
    if (ticks <= c->origin)
        return 0;
    uint64_t d = ticks - c->origin;
    if (!c->tsc)
        return d;
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)d * c->mult) >> 32);
#else
    return (d >> 32) * c->mult + (((d & 0xffffffffu) * c->mult) >> 32);
#endif
}

#pragma GCC visibility pop

#endif /* PROF_RECORD_CLOCK_H */
