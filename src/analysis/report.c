/* report.c - builds the analysis report (formats/report.schema.json) of one
 * profile, or of the ranks of one job: checks that several files belong
 * together, computes the per-step and per-series results the sections and
 * rules share, adds every section and runs every rule of formats/rules.md. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "analysis/analysis.h"
#include "analysis/sections.h"
#include "analysis/report.h"
#include "analysis/report_keys.h"
#include "util/error.h"

/* The peak of a memory series; NAN for a counter. */
static double memory_peak(const void *series, size_t i)
{
    const model_series *s = &((const model_series *)series)[i];
    return s->is_memory ? s->peak : NAN;
}

static void section_profiles(analysis_ctx *c, cJSON *report)
{
    cJSON *arr = jarr(c, report, RK_PROFILES);
    cJSON *o = report_profile_entry(c, c->m);
    if (o && !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        c->ok = 0;
    }
}

static void summary_steps(analysis_ctx *c, cJSON *s)
{
    const step_stats *st = &c->steps;
    double steps = counted_steps(c->m);
    jnum(c, s, RK_STEPS, steps);
    jnum(c, s, RK_INCOMPLETE_STEPS, (double)c->m->step_totals.steps - steps);
    jnum(c, s, RK_SAMPLED_STEPS, sampled_steps(c->m));
    jnum(c, s, RK_COMPLETE_STEPS, (double)st->count);
    if (c->m->step_thinning)
        jnum(c, s, RK_STEPS_KEPT, (double)c->m->nsteps);
    jnum(c, s, RK_WALL_NS, c->m->last_ns > c->m->first_ns ?
                             (double)(c->m->last_ns - c->m->first_ns) : 0.0);
    jnum(c, s, RK_PROFILED_NS, (double)c->m->profiled_ns);
    cJSON *t = jobj(c, s, RK_STEP_TIME);
    jnum(c, t, RK_MEAN_NS, st->mean);
    jnum(c, t, RK_P50_NS, st->p50);
    jnum(c, t, RK_P95_NS, st->p95);
    jnum(c, t, RK_MIN_NS, st->min);
    jnum(c, t, RK_MAX_NS, st->max);
    jnum(c, t, RK_STDDEV_NS, st->sd);
    steady_steps(c, t);
}

static void summary_time(analysis_ctx *c, cJSON *s)
{
    const profile_model *m = c->m;
    double prof = (double)m->profiled_ns;
    cJSON *k = jobj(c, s, RK_TIME_BY_KIND);
    for (uint32_t i = 0; i < 5; i++) {
        cJSON *o = jobj(c, k, prof_kind_name(i));
        jnum(c, o, RK_SELF_NS, (double)m->kind_ns[i]);
        jnum(c, o, RK_SHARE, prof > 0 ? (double)m->kind_ns[i] / prof : 0.0);
    }
    const char *basis;
    double share = sync_share(c, &basis), steps = sampled_steps(m);
    cJSON *y = jobj(c, s, RK_SYNC);
    jnum(c, y, RK_COUNT, (double)m->sync_count);
    jnum(c, y, RK_BLOCKED_NS, (double)m->sync_blocked_ns);
    jnum(c, y, RK_PER_STEP, steps > 0 ? (double)m->sync_count / steps : 0.0);
    jnum(c, y, RK_SHARE, share);
    jstr(c, y, RK_BASIS, basis);
    sync_waits_json(c, y, m->sync_waits);
    summary_gpu(c, s);
    summary_launches(c, s);
}

static void section_summary(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *s = jobj(c, report, RK_SUMMARY);
    summary_steps(c, s);
    jnum(c, s, RK_EVENTS, (double)m->events);
    jnum(c, s, RK_REGION_EVENTS, (double)m->region_events);
    jnum(c, s, RK_DROPPED_EVENTS, (double)m->dropped_events);
    jnum(c, s, RK_THREADS, (double)m->nthreads);
    jbool(c, s, RK_HAS_GPU, m->has_gpu);
    cJSON *mem = jarr(c, s, RK_MEMORY);
    size_t cut;
    unsigned char *listed = report_listed(c, m->series, m->nseries, memory_peak, &cut);
    for (size_t i = 0; i < m->nseries; i++) {
        const model_series *ser = &m->series[i];
        if (!ser->is_memory || (listed && !listed[i]))
            continue;
        cJSON *o = jpush_obj(c, mem);
        jstr(c, o, RK_SERIES, ser->name);
        jnum(c, o, RK_PEAK_BYTES, ser->peak);
        jnum(c, o, RK_FINAL_BYTES, ser->final);
        jnum(c, o, RK_PEAK_T_NS, (double)ser->peak_t_ns);
    }
    free(listed);
    if (cut)
        jnum(c, s, RK_MEMORY_TOTAL, (double)(cut + c->o.max_names));
    summary_time(c, s);
}

/* Operations by GPU time launched in them (total, then self), then by
 * self time: the kernels, which launch nothing, after every region. */
static int by_gpu_desc(const void *a, const void *b, void *arg)
{
    const model_op *ops = arg;
    const model_op *x = &ops[*(const uint32_t *)a], *y = &ops[*(const uint32_t *)b];
    int xk = x->kind == MODEL_KIND_GPU, yk = y->kind == MODEL_KIND_GPU;
    if (xk != yk)
        return xk - yk;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns < y->gpu_ns ? 1 : -1;
    if (x->gpu_self_ns != y->gpu_self_ns)
        return x->gpu_self_ns < y->gpu_self_ns ? 1 : -1;
    return ops_by_self_desc(a, b, arg);
}

static void add_operation(analysis_ctx *c, cJSON *arr, const model_op *op)
{
    double base = op->kind == MODEL_KIND_GPU ? c->gpu_busy_ns : (double)c->m->profiled_ns;
    cJSON *o = jpush_obj(c, arr);
    jstr(c, o, RK_NAME, op->name);
    jstr(c, o, RK_KIND, op_kind_name(op->kind));
    jnum(c, o, RK_CALLS, (double)op->calls);
    jnum(c, o, RK_INCL_NS, (double)op->incl_ns);
    jnum(c, o, RK_SELF_NS, (double)op->self_ns);
    jnum(c, o, RK_MEAN_NS, op->mean_ns);
    jnum(c, o, RK_STDDEV_NS, sqrt(model_op_variance(op)));
    jnum(c, o, RK_MIN_NS, op->calls ? (double)op->min_ns : 0.0);
    jnum(c, o, RK_MAX_NS, (double)op->max_ns);
    jnum(c, o, RK_P50_NS, sketch_quantile(&op->dur, 0.50));
    jnum(c, o, RK_P95_NS, sketch_quantile(&op->dur, 0.95));
    jnum(c, o, RK_P99_NS, sketch_quantile(&op->dur, 0.99));
    jnum(c, o, RK_SELF_SHARE, base > 0 ? (double)op->self_ns / base : 0.0);
    jnum(c, o, RK_INCL_SHARE, base > 0 ? (double)op->incl_ns / base : 0.0);
    if (c->m->has_gpu && op->kind != MODEL_KIND_GPU) { /* rules.md §3.2 */
        jnum(c, o, RK_GPU_NS, (double)op->gpu_ns);
        jnum(c, o, RK_GPU_SELF_NS, (double)op->gpu_self_ns);
        jnum(c, o, RK_GPU_KERNELS, (double)op->kernels);
    }
    if (op->cls) /* what the op is (format §6.5), when the profile says */
        jstr(c, o, RK_MODULE_CLASS, op->cls);
    steady_op(c, o, op);
}

static void section_operations(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, RK_OPERATIONS);
    uint32_t *order = xcalloc(c, m->nops, sizeof *order);
    if (order) {
        for (uint32_t i = 0; i < m->nops; i++)
            order[i] = i;
        qsort_r(order, m->nops, sizeof *order, c->o.sort_gpu ? by_gpu_desc : ops_by_self_desc,
                m->ops);
        size_t keep = c->o.top > 0 && (size_t)c->o.top < m->nops ? (size_t)c->o.top : m->nops;
        for (size_t i = 0; i < keep; i++) {
            add_operation(c, arr, &m->ops[order[i]]);
            if (c->o.op_row && arr && arr->child) { /* handed on, not kept */
                cJSON *row = cJSON_DetachItemFromArray(arr, 0);
                c->ok &= c->o.op_row(c->o.op_arg, row) == 0;
                cJSON_Delete(row);
            }
        }
        if (c->o.others && keep < m->nops) {
            uint64_t calls = 0, self = 0, incl = 0;
            for (size_t i = keep; i < m->nops; i++) {
                calls += m->ops[order[i]].calls;
                self += m->ops[order[i]].self_ns;
                incl += m->ops[order[i]].incl_ns;
            }
            report_others(c, report, RK_OPERATIONS, m->nops - keep, calls, self, incl);
        }
        free(order);
    }
    jnum(c, report, RK_OPERATIONS_TOTAL, (double)m->nops);
    jstr(c, report, RK_OPERATIONS_ORDER, c->o.sort_gpu ? "gpu" : "self");
}

static double step_dur(const void *steps, size_t i)
{
    return (double)((const model_step *)steps)[i].dur_ns;
}

static void section_steps(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, RK_STEPS);
    size_t *keep, n = report_points(c, m->steps, m->nsteps, step_dur, &keep);
    for (size_t k = 0; k < n; k++) {
        size_t i = keep ? keep[k] : k;
        const model_step *st = &m->steps[i];
        cJSON *o = jpush_obj(c, arr);
        jnum(c, o, RK_NUMBER, (double)st->number);
        jnum(c, o, RK_START_NS, (double)st->start_ns);
        jnum(c, o, RK_DUR_NS, (double)st->dur_ns);
        jbool(c, o, RK_SAMPLED, (st->flags & PROF_STEP_SAMPLED) != 0);
        jbool(c, o, RK_OUTLIER, c->steps.outlier && c->steps.outlier[i]);
        jbool(c, o, RK_INCOMPLETE, (st->flags & PROF_STEP_INCOMPLETE) != 0);
    }
    free(keep);
}

static double sample_bytes(const void *series, size_t i)
{
    return ((const model_series *)series)->samples[i].value;
}

static double step_point_bytes(const void *leak, size_t k)
{
    const leak_series *l = leak;
    return l->s->samples[l->at_step[k]].value;
}

/* stats_decimate, with keep filled in when every point stays. */
static size_t decimate_all(const void *series, size_t n, stats_value_fn value, size_t max,
                           size_t *keep)
{
    size_t k = stats_decimate(series, n, value, max, keep);
    if (k == n && (n <= max || max < 2))
        for (size_t i = 0; i < n; i++)
            keep[i] = i;
    return k;
}

/* Two ascending index lists into one, without repeats. */
static size_t merge_points(const size_t *a, size_t na, const size_t *b, size_t nb, size_t *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        size_t v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        i += i < na && a[i] == v;
        j += j < nb && b[j] == v;
        out[n++] = v;
    }
    return n;
}

/* The samples of a memory series the report lists (indexes, ascending):
 * as report_points, except when a timer's samples come between the
 * per-step points: then half the room goes to the per-step points, so the
 * chart over steps keeps its shape, and the rest to all the samples, so
 * the chart over time keeps its. */
static size_t memory_points(analysis_ctx *c, const leak_series *l, size_t **keep)
{
    size_t n = l->s->nsamples, max = c->o.max_points, half = max / 2;
    if (!c->o.list_points || max < 4 || n <= max || l->nsteps == 0 || l->nsteps == n)
        return report_points(c, l->s, n, sample_bytes, keep);
    size_t *a = xcalloc(c, half, sizeof *a), *b = xcalloc(c, max, sizeof *b);
    size_t na = 0, nb = 0, k = 0;
    *keep = xcalloc(c, max, sizeof **keep);
    if (a && b && *keep) {
        na = decimate_all(l, l->nsteps, step_point_bytes, half, a);
        for (size_t i = 0; i < na; i++)
            a[i] = l->at_step[a[i]];
        nb = decimate_all(l->s, n, sample_bytes, max - na, b);
        k = merge_points(a, na, b, nb, *keep);
    }
    free(a);
    free(b);
    return k;
}

/* Every sample (thinned): its time, and its step number when it is the
 * series' value at that step (rules.md §4.2). */
static void memory_point_list(analysis_ctx *c, cJSON *o, const leak_series *l)
{
    cJSON *pts = jarr(c, o, RK_POINTS);
    size_t *keep, n = memory_points(c, l, &keep), cursor = 0;
    for (size_t j = 0; j < n; j++) {
        size_t k = keep ? keep[j] : j;
        const model_sample *p = &l->s->samples[k];
        cJSON *q = jpush_obj(c, pts);
        double step;
        if (leak_point_step(c, l, &cursor, k, &step))
            jnum(c, q, RK_STEP, step);
        jnum(c, q, RK_T_NS, (double)p->t_ns);
        jnum(c, q, RK_BYTES, p->value);
    }
    free(keep);
    jnum(c, o, RK_POINTS_TOTAL, (double)l->s->total);
    if (l->s->thinning)
        jnum(c, o, RK_SAMPLES_KEPT, (double)l->s->nsamples);
}

static void section_memory(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, RK_MEMORY);
    size_t cut;
    unsigned char *listed = report_listed(c, m->series, m->nseries, memory_peak, &cut);
    for (size_t i = 0; i < c->nleaks; i++) {
        const leak_series *l = &c->leaks[i];
        if (listed && !listed[l->s - m->series])
            continue;
        cJSON *o = jpush_obj(c, arr);
        jstr(c, o, RK_SERIES, l->s->name);
        jstr(c, o, RK_UNIT, "bytes");
        jnum(c, o, RK_PEAK_BYTES, l->s->peak);
        jnum(c, o, RK_FINAL_BYTES, l->s->final);
        memory_point_list(c, o, l);
        leak_report_fit(c, o, l);
        if (l->capacity > 0)
            jnum(c, o, RK_CAPACITY_BYTES, l->capacity);
        else
            jnull(c, o, RK_CAPACITY_BYTES);
        jnum(c, o, RK_PROJECTED_OOM_STEP, l->has_projection ? l->oom_step : NAN);
        jnum(c, o, RK_PROJECTED_OOM_T_NS, l->has_projection ? l->oom_t_ns : NAN);
    }
    free(listed);
    if (cut)
        jnum(c, report, RK_MEMORY_TOTAL, (double)(cut + c->o.max_names));
}

static void add_note(analysis_ctx *c, cJSON *notes, const char *text)
{
    cJSON *s = cJSON_CreateString(text);
    if (!s || !notes || !cJSON_AddItemToArray(notes, s)) {
        cJSON_Delete(s);
        c->ok = 0;
    }
}

/* What an import of another tool's trace says of itself (the metadata's
 * "import" object, formats/kineto-import.md): damage, and what was left out. */
static void import_notes(analysis_ctx *c, cJSON *notes)
{
    cJSON *meta = cJSON_Parse(c->m->metadata ? c->m->metadata : "");
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(meta, MK_IMPORT);
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(imp, MK_COUNTS);
    const cJSON *damaged = cJSON_GetObjectItemCaseSensitive(imp, MK_DAMAGED);
    const cJSON *unknown = cJSON_GetObjectItemCaseSensitive(counts, MK_UNKNOWN);
    const cJSON *unplaced = cJSON_GetObjectItemCaseSensitive(counts, MK_UNPLACED);
    const cJSON *reordered = cJSON_GetObjectItemCaseSensitive(counts, MK_REORDERED);
    char buf[400];
    if (cJSON_IsString(damaged))
        add_note(c, notes, fmt_text(buf, sizeof buf, "the imported trace is cut short or "
                 "damaged (%s): analysed what came before", damaged->valuestring));
    if (cJSON_IsNumber(unknown) && unknown->valuedouble > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f events of the imported trace are "
                 "of kinds prof does not know and were left out ('prof info' lists them)",
                 unknown->valuedouble));
    if (cJSON_IsNumber(unplaced) && unplaced->valuedouble > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f synchronizations of the imported "
                 "trace have no CPU thread (their API call is not in it) and were left out",
                 unplaced->valuedouble));
    if (cJSON_IsNumber(reordered) && reordered->valuedouble > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f regions of the imported trace came "
                 "later than the import's nesting window could wait: their places in the call "
                 "tree, and the GPU time launched in them, may be wrong", reordered->valuedouble));
    cJSON_Delete(meta);
}

/* What the join of GPU work to its launches (rules.md §3.2) could not do. */
static void join_notes(analysis_ctx *c, cJSON *notes)
{
    const model_gpu_join *j = &c->m->gpu_join;
    char buf[400], a[32];
    if (j->records > j->joined && j->ns > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%llu GPU records (%s of GPU time) name "
                 "no runtime call of the profile: left out of the GPU time per operation",
                 (unsigned long long)(j->records - j->joined),
                 fmt_pct(a, sizeof a, (double)(j->ns - j->joined_ns) / (double)j->ns)));
    if (j->late)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%llu GPU records came after a region "
                 "around their launch had been counted: their time is in an enclosing region, "
                 "or outside every region", (unsigned long long)j->late));
}

static const model_thread *thread_by_index(const profile_model *m, uint32_t index)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].index == index)
            return &m->threads[i];
    return NULL;
}

/* Regions whose time other threads worked, left out of hot_operation
 * (rules.md §4.1): what they wait for. */
static void waiting_notes(analysis_ctx *c, cJSON *notes)
{
    const profile_model *m = c->m;
    double threshold = c->o.hot_threshold_pct / 100.0;
    for (size_t i = 0; i < m->nops; i++) {
        const model_op *op = &m->ops[i];
        double share = m->profiled_ns ? (double)op->self_ns / (double)m->profiled_ns : 0.0;
        if (share < threshold || !op_waits_for_others(op))
            continue;
        const model_thread *t = thread_by_index(m, op->others_thread);
        char buf[700], who[160] = "", a[32], b[32];
        if (t && t->name) /* an imported thread's name says "thread TID (NAME)" */
            fmt_text(who, sizeof who, " (most of it %s%s)",
                     strncmp(t->name, "thread ", 7) == 0 ? "" : "thread ", t->name);
        else if (t)
            fmt_text(who, sizeof who, " (most of it thread %u)", t->index);
        add_note(c, notes, fmt_text(buf, sizeof buf, "%s (%s of profiled time) is not "
                 "flagged as hot: its thread records no work in it, and other threads ran "
                 "regions during %s of its time%s%s; its thread waits for theirs, as "
                 "PyTorch's main thread waits in backward while the autograd thread works: "
                 "their rows hold that time", op->name, fmt_pct(a, sizeof a, share),
                 fmt_pct(b, sizeof b, (double)op->others_ns / (double)op->outer_long_ns), who,
                 m->overlap_thinning ? " (measured over a sample of 1 ms windows of the "
                                       "run: it was too long to keep every interval)" : ""));
    }
}

/* A step time that grew over the run because the machine did, not the
 * program (slowdown.c, rules.md §4.6). */
static void busy_notes(analysis_ctx *c, cJSON *notes)
{
    const slowdown_busy *b = &c->busy;
    const outliers_busy *o = &c->busy_outliers;
    char buf[500], x[32], y[32];
    if (o->count > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f step%s took over 1.5x the median "
                 "step time (%.1fx on average, in %.0f burst%s), with every operation alike "
                 "slower in them (their median +%s): the whole process ran slower then, as "
                 "when other work on the machine takes the CPU, not the program; not flagged "
                 "as outlier steps", o->count, o->count == 1 ? "" : "s", o->step_ratio,
                 o->episodes, o->episodes == 1 ? "" : "s",
                 fmt_pct(y, sizeof y, o->ops_ratio - 1.0)));
    if (isfinite(b->ops_ratio) && b->rel > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "step time rose %s from step %.0f to "
                 "%.0f, with every operation alike (their median +%s from the first third "
                 "of those steps to the last): the whole process ran slower, as when other "
                 "work on the machine takes the CPU, not a slowdown of the program, which "
                 "is not flagged", fmt_pct(x, sizeof x, b->rel), b->first, b->last,
                 fmt_pct(y, sizeof y, b->ops_ratio - 1.0)));
    else if (b->rel > 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "step time rose %s from step %.0f to "
                 "%.0f in bursts of slow steps, while the fastest steps rose %s: other work "
                 "on the machine now and then, most likely, not a slowdown of the program, "
                 "which is not flagged", fmt_pct(x, sizeof x, b->rel), b->first, b->last,
                 fmt_pct(y, sizeof y, b->floor)));
}

/* What the limit on names (REPORT_NAMES) and the dashboard's cut of the
 * operations left out, said where every view shows it. */
static void cut_notes(analysis_ctx *c, cJSON *report, cJSON *notes)
{
    static const struct { const char *total, *what, *kept_by; } lists[] = {
        { RK_MEMORY_TOTAL, "memory series", "highest peak" },
        { RK_COUNTERS_TOTAL, "counters", "most samples" },
    };
    char buf[400];
    size_t max = c->o.max_names;
    for (size_t i = 0; max > 0 && i < sizeof lists / sizeof lists[0]; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(report, lists[i].total);
        double total = cJSON_GetNumberValue(t);
        if (total > (double)max)
            add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f %s: this report lists the %zu "
                     "with the %s (the limit of its per-name lists)", total, lists[i].what, max,
                     lists[i].kept_by));
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, RK_SUMMARY);
    double gpus = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, RK_GPU_TOTAL));
    if (max > 0 && gpus > (double)max)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f GPUs: this report lists the %zu "
                 "busiest (the limit of its per-name lists)", gpus, max));
    const cJSON *roots = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(report, RK_CALL_TREE), RK_CHILDREN);
    const cJSON *last = roots ? cJSON_GetArrayItem(roots, cJSON_GetArraySize(roots) - 1) : NULL;
    const char *last_name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, RK_NAME));
    if (last_name && strcmp(last_name, "(other threads)") == 0)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f more threads: the call tree shows "
                 "the %zu busiest, the others as one \"(other threads)\" root",
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(last, RK_FOLDED)), max));
    const cJSON *others = cJSON_GetObjectItemCaseSensitive(report, RK_OTHERS);
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(others, RK_OPERATIONS);
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(others, RK_KERNELS);
    if (ops)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f more operations are not listed "
                 "here, with %.0f calls and %.0f ns of self time in all ('prof analyze --top 0 "
                 "--format json' lists every one)",
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ops, RK_COUNT)),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ops, RK_CALLS)),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ops, RK_SELF_NS))));
    if (ks)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%.0f more kernels are not listed "
                 "here, with %.0f launches and %.0f ns of GPU time in all",
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ks, RK_COUNT)),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ks, RK_CALLS)),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ks, RK_SELF_NS))));
}

/* The thinned series with the most samples, or NULL when none was thinned. */
static const model_series *longest_thinned(const profile_model *m)
{
    const model_series *most = NULL;
    for (size_t i = 0; i < m->nseries; i++)
        if (m->series[i].thinning && (!most || m->series[i].total > most->total))
            most = &m->series[i];
    return most;
}

/* What the model kept of a long run (rules.md §1, long runs). */
static void thinning_note(analysis_ctx *c, cJSON *notes)
{
    const profile_model *m = c->m;
    const model_series *s = longest_thinned(m);
    char steps[96] = "", samples[96] = "", buf[400];
    if (!m->step_thinning && !s)
        return;
    if (m->step_thinning)
        fmt_text(steps, sizeof steps, "%.0f of %.0f steps", (double)m->nsteps,
                 (double)m->step_totals.steps);
    if (s)
        fmt_text(samples, sizeof samples, "%s%.0f of %.0f samples of the longest series",
                 steps[0] ? " and " : "", (double)s->nsamples, (double)s->total);
    add_note(c, notes, fmt_text(buf, sizeof buf, "a long run: per-step figures (steady state, "
             "slowdown, memory fits, the steps and points listed) come from %s%s, a "
             "pseudo-random subset; counts, step-time mean, spread and extremes are exact, "
             "outlier steps are found among all steps (rules.md §1)", steps, samples));
}

static void section_notes(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *notes = jarr(c, report, RK_NOTES);
    char buf[400];
    if (!m->has_gpu)
        add_note(c, notes, "no GPU data: the profile has no CUDA activity (record with --cuda "
                 "on a CUDA build), so GPU rules were skipped and sync shares use profiled "
                 "time");
    if (m->status.truncated)
        add_note(c, notes, fmt_text(buf, sizeof buf, "file was cut short: analysed up to its "
                 "last intact block (%s); %llu bytes lost", m->status.detail[0] ?
                 m->status.detail : "no detail", (unsigned long long)m->status.bytes_lost));
    else if (!m->status.clean)
        add_note(c, notes, "file was not closed cleanly (no footer): the run crashed or was "
                 "killed; every intact block was read");
    if (m->dropped_events)
        add_note(c, notes, fmt_text(buf, sizeof buf, "%llu events dropped by the recorder: "
                 "times and shares undercount", (unsigned long long)m->dropped_events));
    double sampled = sampled_steps(m), steps = counted_steps(m);
    if (steps > 0 && sampled < steps)
        add_note(c, notes, fmt_text(buf, sizeof buf, "region events were kept for %.0f of "
                 "%.0f steps (sampling); operation times cover those steps only", sampled,
                 steps));
    thinning_note(c, notes);
    if (steps == 0)
        add_note(c, notes, "no steps recorded, so no step times and memory is fitted over "
                 "time: call prof_step() (or prof.step()) at the end of each training step; "
                 "under prof record, PyTorch programs get a step per optimizer.step()");
    if (m->region_events == 0)
        add_note(c, notes, "no regions recorded, so no operation times: prof record "
                 "instruments PyTorch's top-level modules, optimizer steps and DataLoader; "
                 "for other code, add prof_region_begin/end or prof.region");
    import_notes(c, notes);
    join_notes(c, notes);
    busy_notes(c, notes);
    waiting_notes(c, notes);
    cut_notes(c, report, notes);
}

static void run_rules(analysis_ctx *c)
{
    rule_hot_operation(c);
    rule_memory_leak(c);
    rule_cpu_gpu_sync(c);
    rule_data_loading(c);
    rule_gpu_idle(c);
    rule_launch_bound(c);
    rule_exposed_comm(c);
    rule_step_slowdown(c);
    rule_step_outliers(c);
    rule_dropped_events(c);
    report_sort_bottlenecks(c, c->bottlenecks);
}

/* ---- leak fits, beside the first sections ------------------------------------------ */

/* The leak fits of the memory series (rules.md §4.2) are most of building a
 * report once the profile is loaded, and no section before the memory
 * section needs them. A second thread fits series while this one analyses
 * the steps and writes those sections; this one then fits what is left and
 * waits for it. Each series has its slot in c->leaks, so the report is the
 * same byte for byte whichever thread fits which series, and on one thread
 * (a tuning without helpers). While both run, the fits only read c's model, options
 * and metadata and write their own slots; this thread writes the steps,
 * the report and c->ok, which the fits do not read (the time a leak
 * reaches capacity, which needs the mean step, is added after the join). */
typedef struct leak_work {
    analysis_ctx *c;       /* NULL: nothing to fit                           */
    size_t *series;        /* per slot of c->leaks, its index in m->series    */
    atomic_size_t next;    /* the next slot to fit                           */
    atomic_int failed;     /* a fit ran out of memory                        */
    pool_job thread;
    int started;
} leak_work;

static void leak_fit_slots(leak_work *w)
{
    const analysis_ctx *c = w->c;
    for (size_t k; (k = atomic_fetch_add(&w->next, 1)) < c->nleaks;)
        if (leak_analyze(c, &c->m->series[w->series[k]], &c->leaks[k]) != 0)
            atomic_store(&w->failed, 1);
}

static void leak_thread(void *arg)
{
    leak_fit_slots(arg);
}

static int leak_start(analysis_ctx *c, leak_work *w)
{
    const profile_model *m = c->m;
    c->leaks = xcalloc(c, m->nseries, sizeof *c->leaks);
    w->series = xcalloc(c, m->nseries, sizeof *w->series);
    if (!c->leaks || !w->series)
        return -1;
    for (size_t i = 0; i < m->nseries; i++)
        if (m->series[i].is_memory)
            w->series[c->nleaks++] = i;
    w->c = c;
    /* without a thread, leak_finish fits them all */
    const prof_tuning *t = c->o.tuning;
    if (c->nleaks && tuning_helpers(t))
        w->started = pool_start(tuning_pool(t), &w->thread, leak_thread, w);
    return 0;
}

/* Fits the series no thread took, then waits for the other thread: after
 * it c->leaks is complete (or c->ok is 0). */
static void leak_finish(analysis_ctx *c, leak_work *w)
{
    if (w->c)
        leak_fit_slots(w);
    if (w->started)
        pool_join(&w->thread);
    w->started = 0;
    w->c = NULL;
    if (atomic_load(&w->failed))
        c->ok = 0;
    for (size_t i = 0; i < c->nleaks; i++)
        leak_project_time(c, &c->leaks[i]);
    free(w->series);
    w->series = NULL;
}

/* Per-step and per-series results, computed once for sections and rules;
 * the leak fits are started first, for leak_finish to complete. */
static int prepare(analysis_ctx *c, leak_work *leaks)
{
    const profile_model *m = c->m;
    c->meta = m->metadata ? cJSON_Parse(m->metadata) : NULL;
    if (leak_start(c, leaks) != 0)
        return -1;
    if (steps_analyze(m, &c->steps) != 0)
        return -1;
    for (size_t i = 0; i < m->ngpus; i++)
        c->gpu_busy_ns += (double)m->gpus[i].busy_ns;
    return 0;
}

static void release(analysis_ctx *c)
{
    step_stats_free(&c->steps);
    for (size_t i = 0; i < c->nleaks; i++)
        leak_series_free(&c->leaks[i]);
    free(c->leaks);
    cJSON_Delete(c->meta);
}

static cJSON *report_of_one(const profile_model *m, const analysis_options *o, prof_error *err)
{
    analysis_ctx c = { .m = m, .ok = 1 };
    leak_work leaks = { .c = NULL };
    /* GSL's handler is global: off for the whole report, not per fit, as
     * fits run on two threads (GSL's own advice for threaded programs) */
    gsl_error_handler_t *gsl_handler = gsl_set_error_handler_off();
    if (o)
        c.o = *o;
    else
        analysis_options_default(&c.o);
    cJSON *r = cJSON_CreateObject();
    if (!r || prepare(&c, &leaks) != 0)
        c.ok = 0;
    jstr(&c, r, RK_SCHEMA, "prof-report");
    jnum(&c, r, RK_VERSION, 1);
    section_profiles(&c, r);
    section_summary(&c, r);
    section_operations(&c, r);
    section_kernels(&c, r);
    section_steps(&c, r);
    leak_finish(&c, &leaks);
    section_memory(&c, r);
    section_counters(&c, r);
    section_call_tree(&c, r);
    c.bottlenecks = jarr(&c, r, RK_BOTTLENECKS);
    if (c.ok)
        run_rules(&c);
    section_notes(&c, r);
    release(&c);
    gsl_set_error_handler(gsl_handler);
    if (!c.ok) {
        cJSON_Delete(r);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the report");
        return NULL;
    }
    return r;
}

/* Several loaded ranks: each reduced to its summary, and the report of the
 * one described with the cross-rank sections added (ranks.h), as the
 * ranks of a directory are analysed one at a time. */
static cJSON *report_of_ranks(const profile_model *const *models, size_t n,
                              const analysis_options *o, prof_error *err)
{
    rank_summary *s = calloc(n, sizeof *s);
    collective_store *store = collective_store_open(-1); /* the models hold them anyway */
    cJSON *r = NULL;
    ranks_analysis *a = NULL;
    if (!s || !store) {
        free(s);
        collective_store_close(store);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the report");
        return NULL;
    }
    size_t built = 0;
    while (built < n &&
           rank_summary_build(models[built], NULL, 0, store, &s[built], err) == PROF_OK)
        built++;
    if (built == n && (a = ranks_analyze(s, n, o, err)) != NULL &&
        (r = report_of_one(models[ranks_described(a)], o, err)) != NULL)
        r = ranks_report(a, r, err);
    ranks_analysis_free(a);
    for (size_t i = 0; i < built; i++)
        rank_summary_free(&s[i]);
    free(s);
    collective_store_close(store);
    return r;
}

cJSON *report_build(const profile_model *const *models, size_t n, const analysis_options *o,
                    prof_error *err)
{
    if (!models || n == 0)
        return prof_error_set(err, PROF_ERR_INVALID, "no profile to analyse"), NULL;
    if (n > 1)
        return report_of_ranks(models, n, o, err);
    if (o && o->rank >= 0 && models[0]->rank != o->rank)
        return prof_error_set(err, PROF_ERR_INVALID, "--rank %d: no profile of that rank among "
                              "the 1 given", o->rank), NULL;
    return report_of_one(models[0], o, err);
}
