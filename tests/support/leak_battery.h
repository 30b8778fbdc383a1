/* leak_battery.h - generated memory series for the memory_leak rule
 * (formats/rules.md §4.2): classes of leaks the rule must find and of
 * shapes it must leave alone, each case drawn from a seed, so that a
 * battery can count misses and false alarms per class over many cases.
 * The evaluation, which needs the analysis, is leak_battery_eval.h. */
#ifndef PROF_TESTS_LEAK_BATTERY_H
#define PROF_TESTS_LEAK_BATTERY_H

#include <stdint.h>

typedef enum {
    /* leaks */
    LB_STEADY,        /* 4-40 MiB/step from the start                         */
    LB_LATE,          /* flat for 30-70% of the run, then 1-10 MiB/step        */
    LB_SLOW,          /* host.rss, ~0.2 MiB/step on ~500 MiB, 300-800 steps    */
    LB_DOUBLING,      /* 2 MiB/step over 2000 steps from 4 GiB                 */
    LB_TIMER,         /* no steps; sampled every 10-100 ms; bytes/s            */
    LB_TIMER_STEPS,   /* steps and a timer inside them; activations come and go */
    LB_TIMER_EPOCHS,  /* four long steps sampled on a timer: fitted over time  */
    LB_TIMER_WANDER,  /* no steps; a sum of increments whose rate wanders      */
    /* not leaks */
    LB_WARMUP,        /* a ramp (linear or saturating) over 5-25%, then flat   */
    LB_SAW_FEW,       /* 2-4 long teeth                                         */
    LB_SAW_MANY,      /* teeth of 4-50 steps                                    */
    LB_SPIKE,         /* flat with one spike of 0.5-20 GiB, 1-3 steps wide      */
    LB_JUMP,          /* flat, one step up of 0.1-4 GiB that stays              */
    LB_NOISE,         /* flat with AR(1) noise of 0.5-5% of the level           */
    LB_TIMER_NOISE,   /* no steps, dense samples of strongly correlated noise   */
    LB_WALK,          /* a random walk per step: wanders, but does not grow     */
    LB_DECLINE,       /* falls 1-10 MiB/step                                    */
    LB_RELEASE,       /* grows all run, released to its base in the last 1-10%  */
    /* added later, after the rest so that the others keep their seeds */
    LB_CHUNKED,       /* leak: host.rss of a short run, 20-80 steps of 4-20
                         MiB, counted in whole 2 or 4 MiB chunks               */
    LB_CHUNKED_FLAT,  /* not a leak: as LB_CHUNKED without growth              */
    /* samples on a timer, unevenly spaced (no steps) */
    LB_TIMER_IRREGULAR, /* leak: gaps between samples from 1 ms to seconds     */
    LB_TIMER_BURSTY,  /* leak: bursts of samples ms apart, seconds between    */
    LB_TIMER_DESCHEDULED, /* leak: runs of samples, then the process is off
                         the CPU for seconds: no samples and no growth        */
    LB_TIMER_DESCHEDULED_FLAT, /* not a leak: as LB_TIMER_DESCHEDULED, flat
                         with correlated noise                                */
    LB_CLASSES
} lb_class;

/* A true leak's fitted slope must be within this share of the real one,
 * unless its class says otherwise (lb_truth.tolerance). */
#define LB_SLOPE_TOLERANCE 0.05

typedef struct lb_truth {
    const char *series;    /* the memory series the case is about              */
    int leak;              /* 1: the rule must flag it                         */
    int per_s;             /* its slope is per second (fitted over time)       */
    double slope;          /* bytes per step, or per second; 0 for no leak     */
    double tolerance;      /* the share the fitted slope may be off by          */
} lb_truth;

const char *lb_name(lb_class c);
int lb_is_leak(lb_class c);

/* A recorded series beside the generated ones: host.rss of
 * tests/python/train.py leak over 20 steps (a sample as each step closes,
 * the last step closed by stop()). Each step keeps its graph, about 14 MiB,
 * in whole pages; a chunk lands a step late once, and the last step adds
 * nothing. Its robust fit needs 245 reweightings, more than GSL's default
 * of 100 (formats/rules.md §2.2). */
#define LB_TORCH_LEAK_STEPS 21
extern const double lb_torch_leak_rss[LB_TORCH_LEAK_STEPS];

/* Writes case `seed` of class c to path and says what it is.
 * @return 0, or -1 when the file could not be written. */
int lb_write(const char *path, lb_class c, uint64_t seed, lb_truth *truth);

#endif
