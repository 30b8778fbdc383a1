/* leak_battery.c - the generated memory series of leak_battery.h: per class,
 * a shape with its parameters drawn from the seed, plus AR(1) noise, written
 * as steps and memory samples the way the runtime records them (a sample
 * when recording starts and one as each step closes, and with a timer,
 * samples in between). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixtures.h"
#include "leak_battery.h"
#include "util/vec.h"

#define GIB (1024.0 * FX_MB)

static const char *const names[LB_CLASSES] = {
    "steady", "late onset", "slow 0.2 MiB/step", "doubling 2 MiB/step", "timer, no steps",
    "timer with steps", "timer, 4 epochs", "timer, rate wanders", "warm-up",
    "sawtooth, few teeth", "sawtooth, many teeth", "one-off spike", "one-off jump", "noise",
    "timer noise", "random walk", "decline", "grow, then release", "chunked, short",
    "chunked, flat", "timer, irregular", "timer, bursts", "timer, descheduled",
    "timer, descheduled, flat",
};

const double lb_torch_leak_rss[LB_TORCH_LEAK_STEPS] = {
    273747968, 290852864, 299487232, 314171392, 328851456, 341438464, 354021376,
    368705536, 383385600, 398065664, 412749824, 427433984, 446308352, 456794112,
    471474176, 486154240, 500838400, 515518464, 530202624, 544882688, 544882688,
};

const char *lb_name(lb_class c)
{
    return c < LB_CLASSES ? names[c] : "?";
}

int lb_is_leak(lb_class c)
{
    return c <= LB_TIMER_WANDER || c == LB_CHUNKED || c == LB_TIMER_IRREGULAR ||
           c == LB_TIMER_BURSTY || c == LB_TIMER_DESCHEDULED;
}

/* A case: its steps and its samples, in time order, and how it was drawn. */
typedef struct lb_case {
    lb_class c;
    synth_rng rng;
    uint64_t *start, *dur;
    size_t nsteps;
    uint64_t *t;
    double *y;
    size_t n, cap_t, cap_y;
    double noise, phi, sd;       /* AR(1) state, coefficient, marginal sd       */
    double level, rate, amp, at, width, period; /* the shape's parameters      */
    double chunk;                /* values are whole chunks of this, or 0       */
    int kind;
} lb_case;

static double unif(lb_case *k, double a, double b)
{
    return a + (b - a) * synth_uniform(&k->rng);
}

static size_t unif_n(lb_case *k, size_t a, size_t b)
{
    return a + (size_t)(synth_uniform(&k->rng) * (double)(b - a + 1));
}

static double noise(lb_case *k)
{
    k->noise = k->phi * k->noise + sqrt(1.0 - k->phi * k->phi) * k->sd * synth_gauss(&k->rng);
    return k->noise;
}

static int add_sample(lb_case *k, uint64_t t, double y)
{
    if (vec_grow(&k->t, &k->cap_t, k->n, sizeof *k->t) < 0 ||
        vec_grow(&k->y, &k->cap_y, k->n, sizeof *k->y) < 0)
        return -1;
    k->t[k->n] = t;
    k->y[k->n++] = y < 0 ? 0 : y;
    return 0;
}

/* n steps of about step_ns each, one after the other from 1 ms. */
static int make_steps(lb_case *k, size_t n, uint64_t step_ns)
{
    k->start = malloc(n * sizeof *k->start);
    k->dur = malloc(n * sizeof *k->dur);
    if (!k->start || !k->dur)
        return -1;
    uint64_t t = FX_MS;
    for (size_t i = 0; i < n; i++) {
        k->start[i] = t;
        k->dur[i] = synth_jitter(&k->rng, step_ns, 0.05);
        t += k->dur[i];
    }
    k->nsteps = n;
    return 0;
}

/* ---- shapes: the value after step i of n ------------------------------------ */

static double saw(double i, double period)
{
    return fmod(i, period);
}

static double shape_at_step(const lb_case *k, double i)
{
    double n = (double)k->nsteps;
    switch (k->c) {
    case LB_STEADY:
    case LB_SLOW:
    case LB_DOUBLING:
    case LB_CHUNKED: return k->level + k->rate * i;
    case LB_LATE: return k->level + k->rate * fmax(0.0, i - k->at * n);
    case LB_WARMUP:
        if (k->kind) /* saturating: caches fill ever more slowly */
            return k->level + k->amp * (1.0 - exp(-i / (k->width * n)));
        return k->level + k->amp * fmin(1.0, i / (k->width * n));
    case LB_SAW_FEW:
    case LB_SAW_MANY: return k->level + k->rate * saw(i, k->period);
    case LB_SPIKE: return k->level + (i >= k->at * n && i < k->at * n + k->width ? k->amp : 0);
    case LB_JUMP: return k->level + (i >= k->at * n ? k->amp : 0.0);
    case LB_DECLINE: return k->level - k->rate * i;
    case LB_WALK: return k->level + k->amp;
    case LB_RELEASE: return i < k->at * n ? k->level + k->rate * i : k->level;
    default: return k->level;
    }
}

/* The parameters of a per-step class. */
static void draw_step_class(lb_case *k)
{
    k->level = unif(k, 1, 8) * GIB;
    k->sd = unif(k, 0.5, 8) * FX_MB;
    k->phi = unif(k, 0, 0.7);
    switch (k->c) {
    case LB_STEADY: k->rate = unif(k, 4, 40) * FX_MB; break;
    case LB_LATE:
        k->rate = unif(k, 1, 10) * FX_MB;
        k->at = unif(k, 0.3, 0.7);
        k->sd = unif(k, 0.5, 4) * FX_MB;
        break;
    case LB_SLOW:
        k->level = unif(k, 450, 550) * FX_MB;
        k->rate = unif(k, 0.18, 0.25) * FX_MB;
        k->sd = unif(k, 0.05, 4) * FX_MB;
        break;
    case LB_DOUBLING:
        k->level = 4 * GIB;
        k->rate = unif(k, 1.9, 2.1) * FX_MB;
        k->sd = unif(k, 1, 16) * FX_MB;
        break;
    case LB_WARMUP:
        k->amp = unif(k, 0.2, 2) * GIB;
        k->width = unif(k, 0.05, 0.25);
        k->kind = synth_uniform(&k->rng) < 0.5;
        if (k->kind)
            k->width /= 3; /* the time constant: ~95% filled at three of them */
        break;
    case LB_SAW_FEW:
    case LB_SAW_MANY:
        k->rate = unif(k, 10, 100) * FX_MB;
        k->sd = unif(k, 0.5, 4) * FX_MB;
        break;
    case LB_SPIKE:
        k->amp = unif(k, 0.5, 20) * GIB;
        k->at = unif(k, 0.1, 0.99);
        k->width = (double)unif_n(k, 1, 3);
        break;
    case LB_JUMP:
        k->amp = unif(k, 0.1, 4) * GIB;
        k->at = unif(k, 0.15, 0.95);
        break;
    case LB_NOISE:
        k->sd = unif(k, 0.005, 0.05) * k->level;
        k->phi = unif(k, 0, 0.9);
        break;
    case LB_CHUNKED:
    case LB_CHUNKED_FLAT: /* a small model's process, counted in whole chunks */
        k->level = unif(k, 200, 600) * FX_MB;
        k->chunk = (synth_uniform(&k->rng) < 0.5 ? 2 : 4) * FX_MB;
        k->rate = k->c == LB_CHUNKED ? unif(k, 4, 20) * FX_MB : 0.0;
        if (synth_uniform(&k->rng) < 0.5) /* the same tensors kept every step */
            k->rate = k->chunk * fmax(1.0, round(k->rate / k->chunk));
        k->sd = unif(k, 0.05, 2) * FX_MB;
        k->phi = unif(k, 0, 0.5);
        break;
    case LB_DECLINE: k->rate = unif(k, 1, 10) * FX_MB; break;
    case LB_WALK: /* steps of 0.5-5 MiB a step, little noise on top */
        k->amp = 0.0;
        k->width = unif(k, 0.5, 5) * FX_MB;
        k->sd = unif(k, 0.1, 1) * FX_MB;
        break;
    case LB_RELEASE:
        k->rate = unif(k, 4, 40) * FX_MB;
        k->at = 1.0 - unif(k, 0.01, 0.10);
        break;
    default: break;
    }
}

static size_t steps_of(lb_case *k)
{
    switch (k->c) {
    case LB_LATE: return unif_n(k, 600, 2000);
    case LB_SLOW: return unif_n(k, 300, 800);
    case LB_DOUBLING: return unif_n(k, 1900, 2100);
    case LB_SAW_FEW: return unif_n(k, 100, 600);
    case LB_CHUNKED:
    case LB_CHUNKED_FLAT: return unif_n(k, 20, 80);
    default: return unif_n(k, 150, 1000);
    }
}

/* y in whole chunks, when the case counts in chunks. */
static double chunked(const lb_case *k, double y)
{
    return k->chunk > 0 ? k->chunk * round(y / k->chunk) : y;
}

/* A sample as recording starts and one as each step closes. */
static int per_step_case(lb_case *k)
{
    size_t n = steps_of(k);
    draw_step_class(k);
    if (k->c == LB_SAW_FEW)
        k->period = (double)n / unif(k, 2, 4);
    if (k->c == LB_SAW_MANY)
        k->period = (double)unif_n(k, 4, 50);
    if (make_steps(k, n, 100 * FX_MS) != 0 ||
        add_sample(k, FX_MS, chunked(k, k->level + noise(k))) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (k->c == LB_WALK) /* shape_at_step reads the walk; it moves here */
            k->amp += k->width * synth_gauss(&k->rng);
        double y = chunked(k, shape_at_step(k, (double)i) + noise(k));
        if (add_sample(k, k->start[i] + k->dur[i], y) != 0)
            return -1;
    }
    return 0;
}

/* ---- timer classes ------------------------------------------------------------ */

/* Samples every ~every_ns from 1 ms to end_ns, of level + rate * seconds. */
static int timer_samples(lb_case *k, uint64_t end_ns, uint64_t every_ns)
{
    for (uint64_t t = FX_MS; t <= end_ns; t += synth_jitter(&k->rng, every_ns, 0.1))
        if (add_sample(k, t, k->level + k->rate * (double)(t - FX_MS) / 1e9 + noise(k)))
            return -1;
    return 0;
}

/* No steps: a leak of 10-100% of the level over 20-120 s, or (noise) none,
 * sampled every 10-100 ms; dense samples are strongly correlated. */
static int timer_case(lb_case *k)
{
    double secs = unif(k, 20, 120);
    k->level = unif(k, 0.3, 4) * GIB;
    k->sd = unif(k, 0.2, 2) * FX_MB;
    k->phi = unif(k, 0.5, 0.95);
    if (k->c == LB_TIMER_NOISE) {
        k->sd = unif(k, 0.005, 0.03) * k->level;
        k->phi = unif(k, 0.9, 0.99);
    } else {
        k->rate = unif(k, 0.1, 1.0) * k->level / secs;
    }
    uint64_t every = (uint64_t)(unif(k, 10, 100) * (double)FX_MS);
    return timer_samples(k, (uint64_t)(secs * 1e9), every);
}

/* No steps: a leak of 10-100% of the level over 20-120 s whose rate
 * wanders by 10-50% (AR(1), 0.9-0.99 a sample), sampled every 10-100 ms:
 * the level is the sum of the increments, a random walk about any line.
 * The truth is the rate the run had where it is fitted - after the warm-up
 * of rules.md §2.5 - not the mean the wandering reverts to. */
static int wander_case(lb_case *k)
{
    double secs = unif(k, 20, 120), every = unif(k, 10, 100) * 1e-3;
    k->level = unif(k, 0.3, 4) * GIB;
    k->rate = unif(k, 0.1, 1.0) * k->level / secs;
    double swing = unif(k, 0.1, 0.5), phi = unif(k, 0.9, 0.99), dev = 0.0, y = k->level;
    size_t cap = (size_t)(secs / every * 1.2) + 16, n = 0;
    double *clean = malloc(cap * sizeof *clean);
    if (!clean)
        return -1;
    k->sd = unif(k, 0.05, 0.5) * FX_MB;
    k->phi = 0.0;
    for (uint64_t t = FX_MS; t <= (uint64_t)(secs * 1e9) && n < cap; n++) {
        if (add_sample(k, t, y + noise(k))) {
            free(clean);
            return -1;
        }
        clean[n] = y;
        uint64_t dt = synth_jitter(&k->rng, (uint64_t)(every * 1e9), 0.1);
        dev = phi * dev + sqrt(1.0 - phi * phi) * swing * synth_gauss(&k->rng);
        y += k->rate * (1.0 + dev) * (double)dt / 1e9;
        t += dt;
    }
    size_t w = (n + 9) / 10 < 3 ? 3 : (n + 9) / 10;
    k->rate = (clean[n - 1] - clean[w]) / ((double)(k->t[n - 1] - k->t[w]) / 1e9);
    free(clean);
    return 0;
}

/* Four steps of 5-15 s (epochs) and a timer every 20-100 ms. */
static int epochs_case(lb_case *k)
{
    k->level = unif(k, 0.3, 4) * GIB;
    k->sd = unif(k, 0.2, 2) * FX_MB;
    k->phi = unif(k, 0.5, 0.95);
    if (make_steps(k, 4, (uint64_t)(unif(k, 5, 15) * 1e9)) != 0)
        return -1;
    double secs = (double)(k->start[3] + k->dur[3] - FX_MS) / 1e9;
    k->rate = unif(k, 0.1, 1.0) * k->level / secs;
    return timer_samples(k, k->start[3] + k->dur[3], (uint64_t)(unif(k, 20, 100) * 1e6));
}

/* No steps, a leak of 50-200% of the level, samples spaced unevenly:
 * irregular: gaps log-normal about 20-100 ms, a factor e^1.5 either way
 *   (1 ms to seconds); the process runs throughout and grows with time;
 * bursts: 5-30 samples 1-5 ms apart, then 0.5-5 s without one.
 * The truth is the rise over the span, per second of it. */
static int uneven_case(lb_case *k)
{
    double secs = unif(k, 30, 200), every = unif(k, 20, 100) * 1e-3;
    k->level = unif(k, 0.3, 4) * GIB;
    k->sd = unif(k, 0.2, 2) * FX_MB;
    k->phi = unif(k, 0.5, 0.95);
    k->rate = unif(k, 0.5, 2.0) * k->level / secs;
    size_t burst = 0;
    for (uint64_t t = FX_MS; t <= (uint64_t)(secs * 1e9);) {
        if (add_sample(k, t, k->level + k->rate * (double)(t - FX_MS) / 1e9 + noise(k)))
            return -1;
        if (k->c == LB_TIMER_IRREGULAR) {
            t += (uint64_t)(every * exp(1.5 * synth_gauss(&k->rng)) * 1e9) + 1;
            continue;
        }
        if (burst == 0)
            burst = unif_n(k, 5, 30);
        t += (uint64_t)(--burst ? unif(k, 1, 5) * 1e6 : unif(k, 0.5, 5.0) * 1e9);
    }
    return 0;
}

/* No steps: runs of 0.2-2 s sampled every 10-50 ms, each followed by
 * 0.5-10 s off the CPU, with no sample and no growth: the level rises
 * only while the process runs, by 50-200% over the span (flat: correlated
 * noise alone). The truth is the rise over the span, per second of it. */
static int descheduled_case(lb_case *k)
{
    double secs = unif(k, 30, 200), ran = 0.0;
    k->level = unif(k, 0.3, 4) * GIB;
    k->sd = unif(k, 0.2, 2) * FX_MB;
    k->phi = unif(k, 0.5, 0.95);
    double rise = k->c == LB_TIMER_DESCHEDULED_FLAT ? 0.0 : unif(k, 0.5, 2.0) * k->level;
    /* the running time is drawn first: the growth per running second follows */
    synth_rng again = k->rng;
    for (double a = 0.0; a < secs;) {
        double b = fmin(secs, a + unif(k, 0.2, 2.0));
        ran += b - a;
        a = b + unif(k, 0.5, 10.0);
    }
    k->rng = again;
    double rate = rise / ran, before = 0.0, *ran_at = NULL;
    size_t cap = 0;
    for (double a = 0.0; a < secs;) {
        double b = fmin(secs, a + unif(k, 0.2, 2.0));
        for (double t = a; t <= b; t += unif(k, 10, 50) * 1e-3) {
            if (vec_grow(&ran_at, &cap, k->n, sizeof *ran_at) < 0 ||
                add_sample(k, FX_MS + (uint64_t)(t * 1e9),
                           k->level + rate * (before + t - a) + noise(k))) {
                free(ran_at);
                return -1;
            }
            ran_at[k->n - 1] = before + t - a;
        }
        before += b - a;
        a = b + unif(k, 0.5, 10.0);
    }
    /* the rise per second where the rule fits: after the warm-up of
     * rules.md §2.5 */
    size_t w = (k->n + 9) / 10 < 3 ? 3 : (k->n + 9) / 10;
    k->rate = rate * (ran_at[k->n - 1] - ran_at[w]) / ((double)(k->t[k->n - 1] - k->t[w]) / 1e9);
    free(ran_at);
    return 0;
}

/* Steps of ~100 ms with a timer every 7-30 ms: inside a step activations
 * rise and fall (amp * sin), and the leak grows; a sample at each step end. */
static int timer_steps_case(lb_case *k)
{
    size_t n = unif_n(k, 200, 800);
    k->level = unif(k, 2, 8) * GIB;
    k->rate = unif(k, 2, 20) * FX_MB;
    k->amp = unif(k, 100, 1000) * FX_MB;
    k->sd = unif(k, 0.5, 4) * FX_MB;
    k->phi = unif(k, 0, 0.7);
    uint64_t every = (uint64_t)(unif(k, 7, 30) * 1e6);
    if (make_steps(k, n, 100 * FX_MS) != 0 || add_sample(k, FX_MS, k->level + noise(k)) != 0)
        return -1;
    uint64_t t = FX_MS + synth_jitter(&k->rng, every, 0.1);
    for (size_t i = 0; i < n; i++) {
        uint64_t end = k->start[i] + k->dur[i];
        for (; t < end; t += synth_jitter(&k->rng, every, 0.1)) {
            double phase = (double)(t - k->start[i]) / (double)k->dur[i];
            if (add_sample(k, t, k->level + k->rate * ((double)i + phase) +
                                     k->amp * sin(M_PI * phase) + noise(k)))
                return -1;
        }
        if (add_sample(k, end, k->level + k->rate * (double)(i + 1) + noise(k)))
            return -1;
    }
    return 0;
}

/* ---- writing ---------------------------------------------------------------------- */

/* Steps (recorded as they close) and samples, merged in time order. */
static int write_case(const lb_case *k, const char *path, const char *series)
{
    char meta[600];
    synth *s = synth_open(path, fx_metadata(meta, sizeof meta, 0, 1, 80 * GIB, 64 * GIB));
    if (!s)
        return -1;
    synth_thread(s, 0, 100, "train");
    size_t j = 0;
    for (size_t i = 0; i <= k->nsteps; i++) {
        uint64_t end = i < k->nsteps ? k->start[i] + k->dur[i] : UINT64_MAX;
        for (; j < k->n && k->t[j] <= end; j++)
            synth_memory(s, 0, series, k->t[j], (uint64_t)k->y[j]);
        if (i < k->nsteps)
            synth_step(s, 0, i, PROF_STEP_SAMPLED, k->start[i], k->dur[i]);
    }
    return synth_close(s, NULL);
}

static int generate(lb_case *k)
{
    switch (k->c) {
    case LB_TIMER:
    case LB_TIMER_NOISE: return timer_case(k);
    case LB_TIMER_EPOCHS: return epochs_case(k);
    case LB_TIMER_WANDER: return wander_case(k);
    case LB_TIMER_STEPS: return timer_steps_case(k);
    case LB_TIMER_IRREGULAR:
    case LB_TIMER_BURSTY: return uneven_case(k);
    case LB_TIMER_DESCHEDULED:
    case LB_TIMER_DESCHEDULED_FLAT: return descheduled_case(k);
    default: return per_step_case(k);
    }
}

int lb_write(const char *path, lb_class c, uint64_t seed, lb_truth *truth)
{
    lb_case k = { .c = c, .rng = { seed * 0x9E3779B97F4A7C15ull + (uint64_t)c * 7919u + 1u } };
    int by_time = c == LB_TIMER || c == LB_TIMER_NOISE || c == LB_TIMER_EPOCHS ||
                  c == LB_TIMER_WANDER || c >= LB_TIMER_IRREGULAR;
    const char *series = c == LB_SLOW || c == LB_CHUNKED || c == LB_CHUNKED_FLAT || by_time
                             ? "host.rss"
                             : "gpu.allocated";
    int rc = generate(&k);
    if (rc == 0)
        rc = write_case(&k, path, series);
    /* A process that grows only while it runs has no one rate per second:
     * the rate of a window depends on how much of it the process ran, and
     * the onset of rules.md §2.7 may rightly start the fit after a long
     * spell off the CPU. Its slope is held to the rate after the warm-up
     * within half; the verdict is what the class is for. */
    double tolerance = c == LB_TIMER_DESCHEDULED ? 0.5 : LB_SLOPE_TOLERANCE;
    *truth = (lb_truth){ series, lb_is_leak(c), by_time, lb_is_leak(c) ? k.rate : 0.0, tolerance };
    free(k.start);
    free(k.dur);
    free(k.t);
    free(k.y);
    return rc;
}
