/* leak.c - memory series as per-step series, their regression and the
 * memory_leak rule (formats/rules.md §4.2): a leak is growth that is steady
 * (significant, confirmed by a robust fit), still going at the end, and
 * lifts the floor of the series - not a sawtooth, a spike or a warm-up. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

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
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(meta, "devices");
    const cJSON *d, *chosen = NULL;
    cJSON_ArrayForEach(d, devs) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(d, "index");
        if (!chosen && device < 0)
            chosen = d;
        if (device >= 0 && cJSON_IsNumber(idx) && idx->valuedouble == (double)device)
            chosen = d;
    }
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(chosen, "memory_bytes");
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
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(meta, "host_memory_bytes");
        return cJSON_IsNumber(h) && h->valuedouble > 0 ? h->valuedouble : 0.0;
    }
    return 0.0;
}

/* One point per step: the last sample that falls in it. Without steps,
 * every sample with x = -1. */
static int collect_points(const profile_model *m, const model_series *s, leak_series *l)
{
    size_t cap = s->nsamples ? s->nsamples : 1;
    l->x = malloc(cap * sizeof *l->x);
    l->t = malloc(cap * sizeof *l->t);
    l->y = malloc(cap * sizeof *l->y);
    if (!l->x || !l->t || !l->y)
        return -1;
    for (size_t i = 0; i < s->nsamples; i++) {
        const model_sample *p = &s->samples[i];
        if (m->nsteps > 0) {
            if (p->step == MODEL_NONE || p->step >= m->nsteps)
                continue;
            if (i + 1 < s->nsamples && s->samples[i + 1].step == p->step)
                continue; /* not the last of its step */
            l->x[l->npoints] = (double)m->steps[p->step].number;
        } else {
            l->x[l->npoints] = -1.0;
        }
        l->t[l->npoints] = (double)p->t_ns;
        l->y[l->npoints++] = p->value;
    }
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
    l->floor_need = 0.5 * l->fit.slope * (x[n - half] - x[0]);
}

static void project(const analysis_ctx *c, leak_series *l)
{
    if (l->capacity <= 0 || l->fit.slope <= 0)
        return;
    double s = (l->capacity - l->fit.intercept) / l->fit.slope;
    if (s < l->last_step)
        s = l->last_step;
    l->has_projection = 1;
    l->oom_step = ceil(s);
    l->oom_t_ns = l->t[l->npoints - 1] + (s - l->last_step) * c->steps.mean;
}

int leak_analyze(analysis_ctx *c, const model_series *s, leak_series *l)
{
    *l = (leak_series){ .s = s };
    if (collect_points(c->m, s, l) != 0)
        return -1;
    l->capacity = leak_capacity(c->meta, s->name, c->o.capacity_bytes);
    if (c->m->nsteps == 0)
        return 0;
    l->warmup = stats_warmup(l->npoints);
    size_t n = l->npoints - l->warmup;
    const double *x = l->x + l->warmup, *y = l->y + l->warmup;
    if (n < MIN_FIT_POINTS || stats_linear_fit(x, y, n, &l->fit) != 0)
        return 0;
    l->has_fit = 1;
    l->first_step = x[0];
    l->last_step = x[n - 1];
    window_checks(l, x, y, n);
    int candidate = l->fit.slope >= c->o.leak_threshold_mb * MIB && l->fit.p_value < 0.01;
    if (candidate) { /* the robust fit is costly: only to confirm a candidate */
        double icpt;
        l->robust_ok = stats_robust_fit(x, y, n, &l->robust_slope, &icpt) == 0;
    }
    l->leak = candidate && l->robust_ok && stats_fits_agree(&l->fit, l->robust_slope) &&
              l->late_slope >= 0.5 * l->fit.slope && l->floor_rise >= l->floor_need;
    if (l->leak)
        project(c, l);
    return 0;
}

void leak_series_free(leak_series *l)
{
    free(l->x);
    free(l->t);
    free(l->y);
    *l = (leak_series){ 0 };
}

static void leak_finding(analysis_ctx *c, const leak_series *l)
{
    double slope_mb = l->fit.slope / MIB, window = l->last_step - l->first_step + 1;
    double growth = l->fit.slope * (l->last_step - l->first_step);
    double base = l->capacity > 0 ? l->capacity : l->s->final;
    int soon = l->has_projection && l->oom_step - l->last_step <= 10.0 * window;
    char title[200], rec[800], when[160], a[32];
    fmt_text(title, sizeof title, "%s grows %.1f MB/step", l->s->name, slope_mb);
    if (l->has_projection)
        fmt_text(when, sizeof when, "at this rate it reaches its capacity (%.0f MB) at step "
                 "%.0f, in about %s", l->capacity / MIB, l->oom_step,
                 fmt_ns(a, sizeof a, fmax(0.0, l->oom_t_ns - l->t[l->npoints - 1])));
    else
        fmt_text(when, sizeof when, "its capacity is unknown (pass --capacity to project "
                 "when it runs out)");
    fmt_text(rec, sizeof rec,
             "%s grows %.1f MB/step (95%% CI +/- %.2g MB) after warm-up; %s. Look for tensors kept alive "
             "across steps: losses or outputs accumulated without .detach()/.item(), growing "
             "lists or caches, hooks holding references; compare memory snapshots of two "
             "steps.", l->s->name, slope_mb, l->fit.ci95 / MIB, when);
    cJSON *e = finding_add(c, "memory_leak", soon ? "high" : "medium", l->s->name,
                           base > 0 ? fmin(1.0, fmax(0.0, growth / base)) : 0.0, title, rec);
    jnum(c, e, "slope_bytes_per_step", l->fit.slope);
    jnum(c, e, "ci95_bytes_per_step", l->fit.ci95);
    jnum(c, e, "robust_slope_bytes_per_step", l->robust_slope);
    jnum(c, e, "late_slope_bytes_per_step", l->late_slope);
    jnum(c, e, "r2", l->fit.r2);
    jnum(c, e, "p_value", l->fit.p_value);
    jnum(c, e, "growth_bytes", growth);
    jnum(c, e, "warmup_steps", (double)l->warmup);
    jnum(c, e, "first_step", l->first_step);
    jnum(c, e, "last_step", l->last_step);
    if (l->capacity > 0)
        jnum(c, e, "capacity_bytes", l->capacity);
    else
        jnull(c, e, "capacity_bytes");
    if (l->has_projection) {
        jnum(c, e, "projected_oom_step", l->oom_step);
        jnum(c, e, "projected_oom_t_ns", l->oom_t_ns);
    } else {
        jnull(c, e, "projected_oom_step");
        jnull(c, e, "projected_oom_t_ns");
    }
}

void rule_memory_leak(analysis_ctx *c)
{
    for (size_t i = 0; i < c->nleaks; i++)
        if (c->leaks[i].leak)
            leak_finding(c, &c->leaks[i]);
}
