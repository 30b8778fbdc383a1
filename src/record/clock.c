/* clock.c - chooses the recorder's clock and calibrates the TSC against
 * CLOCK_MONOTONIC. The TSC is used only when CPUID says it is invariant
 * (constant rate, runs in every power state, synchronised across cores);
 * otherwise the monotonic clock is read directly. */
#include <stdint.h>
#include <time.h>

#include "record/clock.h"

#if RT_HAVE_TSC
#include <cpuid.h>
#endif

int rt_clock_use_tsc;

/* The frequency is a property of the machine: calibrated once. */
static double calibrated_hz;
static int calibrated;

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if RT_HAVE_TSC
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1u;
}

/* A TSC reading bracketed by two monotonic reads; the tightest of a few
 * tries, so that a preemption between the reads does not skew it. */
static void tsc_pair(uint64_t *tsc, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t m0 = rt_clock_mono_ns();
        uint64_t t = __rdtsc();
        uint64_t m1 = rt_clock_mono_ns();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *tsc = t;
            *mono = m0 + (m1 - m0) / 2;
        }
    }
}

/* 10 ms against CLOCK_MONOTONIC: a few ns of error on each end give a
 * frequency within 1e-6, far below what a profile needs. */
static double tsc_calibrate(void)
{
    uint64_t t0, m0, t1, m1;
    struct timespec nap = { 0, 10 * 1000 * 1000 };
    tsc_pair(&t0, &m0);
    while (nanosleep(&nap, &nap) != 0)
        ;
    tsc_pair(&t1, &m1);
    if (m1 <= m0 || t1 <= t0)
        return 0;
    double hz = (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
    return hz > 1e8 && hz < 1e11 ? hz : 0; /* implausible: do not trust it */
}
#endif

static void choose_source(void)
{
    calibrated = 1;
#if RT_HAVE_TSC
    if (tsc_invariant())
        calibrated_hz = tsc_calibrate();
#endif
    rt_clock_use_tsc = calibrated_hz > 0;
}

void rt_clock_init(rt_clock *c)
{
    if (!calibrated)
        choose_source();
    c->tsc = rt_clock_use_tsc;
    c->hz = calibrated_hz;
    c->mult = c->tsc ? (uint64_t)(1e9 / calibrated_hz * 4294967296.0) : 1;
    c->origin_epoch_ns = realtime_ns();
#if RT_HAVE_TSC
    if (c->tsc) {
        uint64_t t, m;
        tsc_pair(&t, &m);
        c->origin = t;
        c->origin_mono_ns = m;
        c->origin_epoch_ns = realtime_ns();
        return;
    }
#endif
    c->origin = rt_clock_mono_ns();
    c->origin_mono_ns = c->origin;
}
