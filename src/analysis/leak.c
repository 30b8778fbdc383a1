/* leak.c - memory series fitted per step or over time, and the memory_leak
 * rule (formats/rules.md §4.2): a leak is growth that is steady (significant,
 * confirmed by a robust fit), still going at the end, lifts the floor of the
 * series, and would matter if the run went on - it reaches capacity or adds
 * half the series' level within the horizon. Growth may start late: the fit
 * begins at its onset. Not a sawtooth, a spike, a jump or a warm-up. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

/* The device index named in a series, "gpu1.x" or "gpu.1.x"; -1 if none. */
static long series_device(const char *name)
{
    const char *p = name + 3;
    if (*p == '.')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    return strtol(p, NULL, 10);
}

static double device_capacity(const cJSON *meta, long device)
{
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(meta, MK_DEVICES);
    const cJSON *d, *chosen = NULL;
    cJSON_ArrayForEach(d, devs) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(d, MK_INDEX);
        if (!chosen && device < 0)
            chosen = d;
        if (device >= 0 && cJSON_IsNumber(idx) && idx->valuedouble == (double)device)
            chosen = d;
    }
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(chosen, MK_MEMORY_BYTES);
    return cJSON_IsNumber(mem) && mem->valuedouble > 0 ? mem->valuedouble : 0.0;
}

double leak_capacity(const cJSON *meta, const char *series, double override_bytes)
{
    if (override_bytes > 0)
        return override_bytes;
    if (!meta || !series)
        return 0.0;
    if (strncmp(series, "gpu", 3) == 0)
        return device_capacity(meta, series_device(series));
    if (strncmp(series, "host", 4) == 0) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(meta, MK_HOST_MEMORY_BYTES);
        return cJSON_IsNumber(h) && h->valuedouble > 0 ? h->valuedouble : 0.0;
    }
    return 0.0;
}

/* Projected growth under this over the whole horizon is no leak: less than
 * allocators round and cache on any machine that trains models. */
#define LEAK_NEGLIGIBLE_BYTES (64.0 * MIB)
/* The share of its level a series must add within the horizon. */
#define LEAK_GROWTH_SHARE 0.5

/* Sample i is its step's value: the last sample that falls in the step. */
static int is_step_point(const profile_model *m, const model_series *s, size_t i)
{
    uint32_t st = s->samples[i].step;
    return st != MODEL_NONE && st < m->nsteps &&
           (i + 1 == s->nsamples || s->samples[i + 1].step != st);
}

static int collect_step_points(const profile_model *m, const model_series *s, leak_series *l)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nsamples; i++)
        n += (size_t)is_step_point(m, s, i);
    if (n == 0)
        return 0;
    if (!(l->at_step = malloc(n * sizeof *l->at_step)))
        return -1;
    for (size_t i = 0; i < s->nsamples; i++)
        if (is_step_point(m, s, i))
            l->at_step[l->nsteps++] = i;
    return 0;
}

/* Per step when there are enough per-step points; over time without steps,
 * or when the samples besides the per-step points (a timer's) outnumber
 * them and are enough; else no fit. */
static leak_axis choose_axis(const profile_model *m, const leak_series *l)
{
    size_t per_step = l->nsteps, all = l->s->nsamples;
    if (m->nsteps > 0 && per_step >= stats_warmup(per_step) + MIN_FIT_POINTS)
        return LEAK_AXIS_STEP;
    if ((m->nsteps == 0 || all - per_step > per_step) &&
        all >= stats_warmup(all) + MIN_FIT_POINTS)
        return LEAK_AXIS_TIME;
    return LEAK_AXIS_NONE;
}

/* The sample of point k on the axis. */
static const model_sample *axis_sample(const leak_series *l, size_t k)
{
    return &l->s->samples[l->axis == LEAK_AXIS_STEP ? l->at_step[k] : k];
}

/* The time of point k, in ns. */
static double axis_t(const leak_series *l, size_t k)
{
    return (double)axis_sample(l, k)->t_ns;
}

/* x and y of the points on the axis: step numbers, or seconds. */
static int axis_points(const profile_model *m, leak_series *l)
{
    int by_step = l->axis == LEAK_AXIS_STEP;
    size_t n = by_step ? l->nsteps : l->s->nsamples;
    l->x = malloc(n * sizeof *l->x);
    l->y = malloc(n * sizeof *l->y);
    if (!l->x || !l->y)
        return -1;
    for (size_t k = 0; k < n; k++) {
        const model_sample *p = axis_sample(l, k);
        l->x[k] = by_step ? (double)m->steps[p->step].number : (double)p->t_ns / 1e9;
        l->y[k] = p->value;
    }
    l->n = n;
    return 0;
}

static double min_of(const double *v, size_t n)
{
    double lo = v[0];
    for (size_t i = 1; i < n; i++)
        lo = fmin(lo, v[i]);
    return lo;
}

/* Late slope and floor rise over the window x[0..n). The
 * floor of a leak rises: the minimum of the last half sits about
 * slope * (x at the middle - x at the start) above the minimum of the first
 * quarter; a sawtooth that frees back to its base within the last half does
 * not lift it. */
static void window_checks(leak_series *l, const double *x, const double *y, size_t n)
{
    size_t half = n / 2 < 5 ? 5 : n / 2;
    stats_fit late;
    l->late_slope = stats_linear_fit(x + n - half, y + n - half, half, &late) == 0
                        ? late.slope : 0.0;
    size_t q = n / 4 < 3 ? 3 : n / 4;
    l->floor_rise = min_of(y + n - half, half) - min_of(y, q);
    l->floor_need = 0.5 * l->trend.fit.slope * (x[n - half] - x[0]);
}

/* Warm-up, onset, then the trend fit from the onset to the end. */
static int fit_window(leak_series *l)
{
    l->warmup = stats_warmup(l->n);
    size_t m = l->n - l->warmup, after = (m + 4) / 5;
    trend_onset_result on;
    if (trend_onset(l->x + l->warmup, l->y + l->warmup, m,
                    after < MIN_FIT_POINTS ? MIN_FIT_POINTS : after, &on) != 0)
        return -1;
    l->onset = l->warmup + on.k;
    size_t n = l->n - l->onset;
    const double *x = l->x + l->onset, *y = l->y + l->onset;
    int rc = trend_fit(x, y, n, &l->trend);
    if (rc != 0)
        return rc == -2 ? -1 : 0; /* out of memory, or no line through one x */
    l->has_fit = 1;
    window_checks(l, x, y, n);
    return 0;
}

/* Level, growth and what the lower bound of the rate adds over the
 * horizon: a multiple of the run's length on the axis. */
static void consequence(const analysis_ctx *c, leak_series *l)
{
    const stats_fit *f = &l->trend.fit;
    double first = l->x[0], onset = l->x[l->onset], last = l->x[l->n - 1];
    double run = last - first + (l->axis == LEAK_AXIS_STEP ? 1.0 : 0.0);
    l->horizon = c->o.leak_horizon * run;
    l->level = f->intercept + f->slope * onset;
    l->end = f->intercept + f->slope * last;
    l->growth = f->slope * (last - onset);
    l->projected = (f->slope - f->ci95) * l->horizon;
    l->reaches_capacity = l->capacity > 0 && l->projected >= l->capacity - l->end;
}

/* Conditions 1 and 3 to 6 of rules.md §4.2; the robust fit (2) is costly
 * and only confirms a candidate. */
static int candidate(const analysis_ctx *c, const leak_series *l)
{
    const stats_fit *f = &l->trend.fit;
    if (f->slope <= 0 || f->p_value >= 0.01)
        return 0;
    if (l->late_slope < 0.5 * f->slope || l->floor_rise < l->floor_need)
        return 0;
    if (l->projected < LEAK_NEGLIGIBLE_BYTES)
        return 0;
    if (l->axis == LEAK_AXIS_STEP && f->slope < c->o.leak_threshold_mb * MIB)
        return 0;
    return l->reaches_capacity || l->level <= 0 ||
           l->projected >= LEAK_GROWTH_SHARE * l->level;
}

/* Where the fitted line reaches capacity; per step, when is left to
 * leak_project_time, as the mean step time may not be known yet. */
static void project(leak_series *l)
{
    const stats_fit *f = &l->trend.fit;
    if (l->capacity <= 0 || f->slope <= 0)
        return;
    double last = l->x[l->n - 1], s = (l->capacity - f->intercept) / f->slope;
    if (s < last)
        s = last;
    l->has_projection = 1;
    if (l->axis == LEAK_AXIS_STEP) {
        l->oom_step = ceil(s);
        l->oom_t_ns = axis_t(l, l->n - 1);
        l->oom_steps_after = s - last;
    } else {
        l->oom_step = NAN; /* reported as null */
        l->oom_t_ns = s * 1e9;
    }
}

/* The points the report and the finding name, kept once the arrays go. */
static void keep_points(leak_series *l)
{
    size_t last = l->n - 1;
    l->at.x_warmup = l->x[l->warmup];
    l->at.x_onset = l->x[l->onset];
    l->at.x_last = l->x[last];
    l->at.t_warmup = axis_t(l, l->warmup);
    l->at.t_onset = axis_t(l, l->onset);
    l->at.t_last = axis_t(l, last);
}

static void drop_points(leak_series *l)
{
    free(l->x);
    free(l->y);
    l->x = l->y = NULL;
}

static int analyze_axis(const analysis_ctx *c, leak_series *l)
{
    if (axis_points(c->m, l) != 0 || fit_window(l) != 0)
        return -1;
    if (!l->has_fit)
        return 0;
    keep_points(l);
    consequence(c, l);
    if (candidate(c, l)) {
        double icpt;
        size_t n = l->n - l->onset;
        l->robust_ok = stats_robust_fit(l->x + l->onset, l->y + l->onset, n,
                                        &l->robust_slope, &icpt) == 0;
        l->leak = l->robust_ok && stats_fits_agree(&l->trend.fit, l->robust_slope);
    }
    if (l->leak)
        project(l);
    return 0;
}

int leak_analyze(const analysis_ctx *c, const model_series *s, leak_series *l)
{
    *l = (leak_series){ .s = s };
    if (collect_step_points(c->m, s, l) != 0)
        return -1;
    l->capacity = leak_capacity(c->meta, s->name, c->o.capacity_bytes);
    if ((l->axis = choose_axis(c->m, l)) == LEAK_AXIS_NONE)
        return 0;
    int rc = analyze_axis(c, l);
    drop_points(l);
    return rc;
}

void leak_project_time(const analysis_ctx *c, leak_series *l)
{
    if (l->has_projection && l->axis == LEAK_AXIS_STEP)
        l->oom_t_ns += l->oom_steps_after * c->steps.mean;
}

void leak_series_free(leak_series *l)
{
    free(l->at_step);
    drop_points(l);
    *l = (leak_series){ 0 };
}

int leak_point_step(const analysis_ctx *c, const leak_series *l, size_t *cursor, size_t i,
                    double *step)
{
    while (*cursor < l->nsteps && l->at_step[*cursor] < i)
        (*cursor)++;
    if (*cursor >= l->nsteps || l->at_step[*cursor] != i)
        return 0;
    *step = (double)c->m->steps[l->s->samples[i].step].number;
    return 1;
}

/* ---- the fit and the finding as JSON ----------------------------------------------- */

/* A rate's two members, per step and per second: v on the axis', null on
 * the other. */
static void put_rate(analysis_ctx *c, cJSON *o, const char *per_step, const char *per_s,
                     double v, int known, leak_axis axis)
{
    for (int u = 0; u < 2; u++) {
        const char *key = u == 0 ? per_step : per_s;
        if (known && axis == (u == 0 ? LEAK_AXIS_STEP : LEAK_AXIS_TIME))
            jnum(c, o, key, v);
        else
            jnull(c, o, key);
    }
}

static void put_step(analysis_ctx *c, cJSON *o, const char *key, const leak_series *l,
                     double v)
{
    if (l->axis == LEAK_AXIS_STEP)
        jnum(c, o, key, v);
    else
        jnull(c, o, key);
}

/* What the report's fit and the finding's evidence share (rules.md §4.2). */
static void put_fit(analysis_ctx *c, cJSON *o, const leak_series *l)
{
    const stats_fit *f = &l->trend.fit;
    jstr(c, o, RK_AXIS, l->axis == LEAK_AXIS_STEP ? "step" : "time");
    put_rate(c, o, RK_SLOPE_BYTES_PER_STEP, RK_SLOPE_BYTES_PER_S, f->slope, 1, l->axis);
    put_rate(c, o, RK_CI95_BYTES_PER_STEP, RK_CI95_BYTES_PER_S, f->ci95, 1, l->axis);
    put_rate(c, o, RK_ROBUST_SLOPE_BYTES_PER_STEP, RK_ROBUST_SLOPE_BYTES_PER_S, l->robust_slope,
             l->robust_ok, l->axis);
    put_rate(c, o, RK_LATE_SLOPE_BYTES_PER_STEP, RK_LATE_SLOPE_BYTES_PER_S, l->late_slope, 1,
             l->axis);
    jnum(c, o, RK_R2, f->r2);
    jnum(c, o, RK_P_VALUE, f->p_value);
    jstr(c, o, RK_NOISE_MODEL, l->trend.increments ? "increments" : "line");
    jnum(c, o, RK_UNIT_ROOT_STATISTIC, l->trend.df_tau);
    jnum(c, o, RK_AUTOCORRELATION, l->trend.r1);
    jnum(c, o, RK_EFFECTIVE_POINTS, l->trend.n_eff);
    jnum(c, o, RK_GROWTH_BYTES, l->growth);
    jnum(c, o, RK_GROWTH_SHARE, l->level > 0 ? l->growth / l->level : NAN);
    jnum(c, o, RK_PROJECTED_GROWTH_BYTES, l->projected);
    jnum(c, o, RK_HORIZON, l->horizon);
    jnum(c, o, RK_WARMUP_POINTS, (double)l->warmup);
    put_step(c, o, RK_WARMUP_STEPS, l, (double)l->warmup);
    put_step(c, o, RK_FIRST_STEP, l, l->at.x_warmup);
    put_step(c, o, RK_ONSET_STEP, l, l->at.x_onset);
    put_step(c, o, RK_LAST_STEP, l, l->at.x_last);
    jnum(c, o, RK_FIRST_T_NS, l->at.t_warmup);
    jnum(c, o, RK_ONSET_T_NS, l->at.t_onset);
    jnum(c, o, RK_LAST_T_NS, l->at.t_last);
}

void leak_report_fit(analysis_ctx *c, cJSON *series, const leak_series *l)
{
    if (!l->has_fit) {
        jnull(c, series, RK_FIT);
        return;
    }
    cJSON *f = jobj(c, series, RK_FIT);
    put_fit(c, f, l);
    jnum(c, f, RK_INTERCEPT_BYTES, l->trend.fit.intercept);
    jnum(c, f, RK_POINTS, (double)l->trend.fit.n);
    jbool(c, f, RK_LEAK, l->leak);
}

/* A rate in MiB: one decimal from 1 up, two significant digits below. */
static const char *fmt_mib(char *buf, size_t size, double bytes)
{
    double v = bytes / MIB;
    return fmt_text(buf, size, fabs(v) >= 1.0 ? "%.1f" : "%.2g", v);
}

static int late_onset(const leak_series *l)
{
    return l->onset > l->warmup;
}

/* "grows 0.37 MiB/step from step 120": the title, and the start of the
 * recommendation. */
static void leak_rate(char *buf, size_t size, const leak_series *l)
{
    char r[32];
    const char *unit = l->axis == LEAK_AXIS_STEP ? "step" : "s";
    fmt_mib(r, sizeof r, l->trend.fit.slope);
    if (l->axis == LEAK_AXIS_STEP && late_onset(l))
        fmt_text(buf, size, "%s grows %s MiB/step from step %.0f", l->s->name, r,
                 l->at.x_onset);
    else
        fmt_text(buf, size, "%s grows %s MiB/%s", l->s->name, r, unit);
}

/* Where it started, and how much it gained while fitted. */
static void leak_course(char *buf, size_t size, const analysis_ctx *c, const leak_series *l)
{
    char ci[32], g[32], share[32] = "", span[48];
    int by_step = l->axis == LEAK_AXIS_STEP;
    double width = l->at.x_last - l->at.x_onset;
    const char *start = !by_step ? (c->m->nsteps ? "over time (too few steps to fit; every "
                                                   "sample is used)"
                                                 : "over time (the profile has no steps)")
                        : late_onset(l) ? "after a flat start"
                                        : "after warm-up";
    if (by_step)
        fmt_text(span, sizeof span, "%.0f steps", width + 1);
    else
        fmt_duration(span, width * 1e9);
    if (l->level > 0)
        fmt_pct(share, sizeof share, l->growth / l->level);
    fmt_text(buf, size, " (95%% CI +/- %s MiB) %s; it gained %s MiB%s%s%s over the %s fitted",
             fmt_mib(ci, sizeof ci, l->trend.fit.ci95), start, fmt_mib(g, sizeof g, l->growth),
             share[0] ? " (" : "", share, share[0] ? " of its level)" : "", span);
}

static void leak_when(char *buf, size_t size, const leak_series *l)
{
    char a[32], h[48];
    if (l->has_projection && l->axis == LEAK_AXIS_STEP)
        fmt_text(buf, size, "at this rate it reaches its capacity (%.0f MiB) at step %.0f, in "
                 "about %s", l->capacity / MIB, l->oom_step,
                 fmt_duration(a, fmax(0.0, l->oom_t_ns - l->at.t_last)));
    else if (l->has_projection)
        fmt_text(buf, size, "at this rate it reaches its capacity (%.0f MiB) in about %s",
                 l->capacity / MIB, fmt_duration(a, fmax(0.0, l->oom_t_ns - l->at.t_last)));
    else
        fmt_text(buf, size, "it would grow by half within %s; its capacity is unknown (pass "
                 "--capacity to project when it runs out)", l->axis == LEAK_AXIS_STEP ?
                 fmt_text(h, sizeof h, "%.0f steps", l->horizon) :
                 fmt_duration(h, l->horizon * 1e9));
}

static void leak_finding(analysis_ctx *c, const leak_series *l)
{
    double base = l->capacity > 0 ? l->capacity : l->s->final;
    char title[200], course[300], when[200], why[200] = "", rec[1200];
    leak_rate(title, sizeof title, l);
    leak_course(course, sizeof course, c, l);
    leak_when(when, sizeof when, l);
    if (l->axis == LEAK_AXIS_STEP && late_onset(l))
        fmt_text(why, sizeof why, " What changed at step %.0f: an evaluation pass, a cache "
                 "that starts filling, a new phase of the schedule?", l->at.x_onset);
    fmt_text(rec, sizeof rec, "%s%s; %s.%s Look for tensors kept alive across steps: losses or "
             "outputs accumulated without .detach()/.item(), growing lists or caches, hooks "
             "holding references; compare memory snapshots of two steps.", title, course,
             when, why);
    cJSON *e = finding_add(c, "memory_leak", l->reaches_capacity ? "high" : "medium",
                           l->s->name, base > 0 ? fmin(1.0, fmax(0.0, l->growth / base)) : 0.0,
                           title, rec);
    put_fit(c, e, l);
    if (l->capacity > 0)
        jnum(c, e, RK_CAPACITY_BYTES, l->capacity);
    else
        jnull(c, e, RK_CAPACITY_BYTES);
    jnum(c, e, RK_PROJECTED_OOM_STEP, l->has_projection ? l->oom_step : NAN);
    jnum(c, e, RK_PROJECTED_OOM_T_NS, l->has_projection ? l->oom_t_ns : NAN);
}

void rule_memory_leak(analysis_ctx *c)
{
    for (size_t i = 0; i < c->nleaks; i++)
        if (c->leaks[i].leak)
            leak_finding(c, &c->leaks[i]);
}
