/* gpurules.c - what the report says of GPU activity: the per-device
 * summary, the kernels by GPU time, and the rules that read them, gpu_idle,
 * launch_bound and exposed_comm (formats/rules.md §3, §4.5, §4.10, §4.11). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"
#include "analysis/sections.h"

/* ---- per device ------------------------------------------------------------- */

/* What a device's shares are of (rules.md §4.5): the steps that kept their
 * events when there are such steps, else the time between the device's
 * first and last activity. */
typedef struct device_time {
    const char *basis;     /* "steps" or "span"                               */
    double base_ns;        /* the time the shares divide                      */
    double busy_ns, idle_ns, comm_ns, overlap_ns, exposed_ns;
} device_time;

static device_time device_time_of(const model_gpu_device *g)
{
    device_time t;
    if (g->step_ns > 0) {
        t.basis = "steps";
        t.base_ns = (double)g->step_ns;
        t.busy_ns = (double)g->step_busy_ns;
        t.comm_ns = (double)g->step_comm_ns;
        t.overlap_ns = (double)g->step_overlap_ns;
    } else {
        t.basis = "span";
        t.base_ns = g->last_ns > g->first_ns ? (double)(g->last_ns - g->first_ns) : 0.0;
        t.busy_ns = (double)g->busy_ns;
        t.comm_ns = (double)g->comm_ns;
        t.overlap_ns = (double)g->comm_overlap_ns;
    }
    if (t.busy_ns > t.base_ns) /* rounding of interpolated stretches */
        t.busy_ns = t.base_ns;
    t.idle_ns = t.base_ns - t.busy_ns;
    t.exposed_ns = t.comm_ns > t.overlap_ns ? t.comm_ns - t.overlap_ns : 0.0;
    return t;
}

static double share_of(double part, double whole)
{
    return whole > 0 ? part / whole : 0.0;
}

static void gaps_list(analysis_ctx *c, cJSON *o, const model_gpu_device *g)
{
    cJSON *arr = jarr(c, o, RK_LONGEST_GAPS);
    for (int i = 0; i < MODEL_GPU_GAPS && g->longest[i].dur_ns; i++) {
        cJSON *q = jpush_obj(c, arr);
        jnum(c, q, RK_START_NS, (double)g->longest[i].start_ns);
        jnum(c, q, RK_DUR_NS, (double)g->longest[i].dur_ns);
    }
}

/* HTA's kernel types, by the bits of model_gpu_window.class_ns, in the
 * order and with the names HTA gives them. */
static const struct {
    unsigned mask;
    const char *name;
} hta_types[] = {
    { 1, "computation" },
    { 2, "communication" },
    { 4, "memory" },
    { 3, "computation overlapping communication" },
    { 5, "computation overlapping memory" },
    { 6, "communication overlapping memory" },
    { 7, "computation overlapping communication overlapping memory" },
};

/* Time with any of the classes of `bits` running. */
static double window_time(const model_gpu_window *w, unsigned bits)
{
    double t = 0;
    for (unsigned mask = 1; mask < 8; mask++)
        if (mask & bits)
            t += (double)w->class_ns[mask];
    return t;
}

/* A device's time as Holistic Trace Analysis counts it (rules.md §3.1):
 * its temporal breakdown, its kernel-type breakdown and the overlap of
 * communication with computation. */
static void hta_device(analysis_ctx *c, cJSON *o, const model_gpu_window *w)
{
    double window = (double)(w->last_ns - w->first_ns), busy = window_time(w, 7);
    double compute = window_time(w, 1), comm = window_time(w, 2);
    double overlap = (double)(w->class_ns[3] + w->class_ns[7]);
    jnum(c, o, RK_FIRST_NS, (double)w->first_ns);
    jnum(c, o, RK_LAST_NS, (double)w->last_ns);
    jnum(c, o, RK_WINDOW_NS, window);
    jnum(c, o, RK_BUSY_NS, busy);
    jnum(c, o, RK_IDLE_NS, window - busy);
    jnum(c, o, RK_IDLE_SHARE, share_of(window - busy, window));
    jnum(c, o, RK_COMPUTE_NS, compute);
    jnum(c, o, RK_COMPUTE_SHARE, share_of(compute, window));
    jnum(c, o, RK_NON_COMPUTE_NS, busy - compute);
    jnum(c, o, RK_NON_COMPUTE_SHARE, share_of(busy - compute, window));
    cJSON *types = jarr(c, o, RK_KERNEL_TYPES);
    for (size_t i = 0; i < sizeof hta_types / sizeof hta_types[0]; i++) {
        cJSON *t = jpush_obj(c, types);
        double ns = (double)w->class_ns[hta_types[i].mask];
        jstr(c, t, RK_TYPE, hta_types[i].name);
        jnum(c, t, RK_NS, ns);
        jnum(c, t, RK_SHARE, share_of(ns, busy));
    }
    jnum(c, o, RK_COMM_NS, comm);
    jnum(c, o, RK_COMM_OVERLAP_NS, overlap);
    jnum(c, o, RK_COMM_OVERLAP_SHARE, share_of(overlap, comm));
    jbool(c, o, RK_FINAL_STEP_LEFT_OUT, w->final_step_out);
    jbool(c, o, RK_FINAL_STEP_UNKNOWN, w->final_step_unknown);
    jnum(c, o, RK_LEFT_OUT, (double)w->left_out);
}

static void summary_device(analysis_ctx *c, cJSON *o, const model_gpu_device *d)
{
    double span = d->last_ns > d->first_ns ? (double)(d->last_ns - d->first_ns) : 0.0;
    device_time t = device_time_of(d);
    jnum(c, o, RK_DEVICE, d->device);
    jnum(c, o, RK_KERNELS, (double)d->kernels);
    jnum(c, o, RK_KERNEL_NS, (double)d->kernel_ns);
    jnum(c, o, RK_BUSY_NS, (double)d->busy_ns);
    jnum(c, o, RK_BUSY_SHARE, span > 0 ? (double)d->busy_ns / span : 0.0);
    jnum(c, o, RK_MEMCPY_BYTES, (double)d->memcpy_bytes);
    jnum(c, o, RK_MEMCPY_COUNT, (double)d->memcpy_count);
    jnum(c, o, RK_MEMCPY_NS, (double)d->memcpy_ns);
    jnum(c, o, RK_MEMSET_COUNT, (double)d->memset_count);
    jnum(c, o, RK_IDLE_GAPS, (double)d->idle_gaps);
    jnum(c, o, RK_IDLE_GAP_NS, (double)d->idle_gap_ns);
    gaps_list(c, o, d);
    jnum(c, o, RK_FIRST_NS, d->first_ns <= d->last_ns ? (double)d->first_ns : 0.0);
    jnum(c, o, RK_LAST_NS, (double)d->last_ns);
    jstr(c, o, RK_BASIS, t.basis);
    jnum(c, o, RK_BASIS_NS, t.base_ns);
    jnum(c, o, RK_STEP_NS, (double)d->step_ns);
    jnum(c, o, RK_IDLE_NS, t.idle_ns);
    jnum(c, o, RK_IDLE_SHARE, share_of(t.idle_ns, t.base_ns));
    jbool(c, o, RK_INTERPOLATED, d->step_interpolated && d->step_ns > 0);
    jnum(c, o, RK_COMM_KERNELS, (double)d->comm_kernels);
    jnum(c, o, RK_COMM_NS, (double)d->comm_ns);
    jnum(c, o, RK_COMM_OVERLAP_NS, (double)d->comm_overlap_ns);
    jnum(c, o, RK_COMM_OVERLAP_SHARE, share_of((double)d->comm_overlap_ns, (double)d->comm_ns));
    jnum(c, o, RK_COMM_EXPOSED_NS, t.exposed_ns);
    jnum(c, o, RK_COMM_EXPOSED_SHARE, share_of(t.exposed_ns, t.base_ns));
    hta_device(c, jobj(c, o, RK_HTA), &d->hta);
}

void rank_gpu_fields(analysis_ctx *c, cJSON *o, const profile_model *m)
{
    double base = 0, busy = 0, exposed = 0;
    for (size_t i = 0; i < m->ngpus; i++) {
        device_time t = device_time_of(&m->gpus[i]);
        base += t.base_ns;
        busy += t.busy_ns;
        exposed += t.exposed_ns;
    }
    if (base <= 0)
        return;
    jnum(c, o, RK_GPU_BUSY_SHARE, busy / base);
    jnum(c, o, RK_GPU_IDLE_SHARE, (base - busy) / base);
    jnum(c, o, RK_COMM_EXPOSED_SHARE, exposed / base);
}

static double device_busy(const void *gpus, size_t i)
{
    return (double)((const model_gpu_device *)gpus)[i].busy_ns;
}

void summary_gpu(analysis_ctx *c, cJSON *s)
{
    cJSON *g = jarr(c, s, RK_GPU);
    size_t cut;
    unsigned char *listed = report_listed(c, c->m->gpus, c->m->ngpus, device_busy, &cut);
    for (size_t i = 0; i < c->m->ngpus; i++)
        if (!listed || listed[i])
            summary_device(c, jpush_obj(c, g), &c->m->gpus[i]);
    free(listed);
    if (cut)
        jnum(c, s, RK_GPU_TOTAL, (double)c->m->ngpus);
}

/* ---- kernels ----------------------------------------------------------------------- */

static int by_gpu_time(const void *a, const void *b, void *arg)
{
    const model_op *ops = arg;
    const model_op *x = &ops[*(const uint32_t *)a], *y = &ops[*(const uint32_t *)b];
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void add_kernel(analysis_ctx *c, cJSON *arr, const model_op *op)
{
    cJSON *o = jpush_obj(c, arr);
    jstr(c, o, RK_NAME, op->name);
    jnum(c, o, RK_CALLS, (double)op->calls);
    jnum(c, o, RK_GPU_NS, (double)op->self_ns);
    jnum(c, o, RK_SHARE, share_of((double)op->self_ns, c->gpu_busy_ns));
    jnum(c, o, RK_MEAN_NS, op->mean_ns);
    jnum(c, o, RK_MIN_NS, op->calls ? (double)op->min_ns : 0.0);
    jnum(c, o, RK_MAX_NS, (double)op->max_ns);
    jnum(c, o, RK_P50_NS, sketch_quantile(&op->dur, 0.50));
    jnum(c, o, RK_P95_NS, sketch_quantile(&op->dur, 0.95));
    jbool(c, o, RK_COMM, op->comm);
}

/* GPU time by kernel (rules.md §3), apart from the CPU operations: the
 * kernels, largest GPU time first, cut to --top. */
void section_kernels(analysis_ctx *c, cJSON *report)
{
    const profile_model *m = c->m;
    cJSON *arr = jarr(c, report, RK_KERNELS);
    uint32_t *order = xcalloc(c, m->nops, sizeof *order);
    size_t n = 0;
    if (order) {
        for (uint32_t i = 0; i < m->nops; i++)
            if (m->ops[i].kind == MODEL_KIND_GPU)
                order[n++] = i;
        qsort_r(order, n, sizeof *order, by_gpu_time, m->ops);
        size_t keep = c->o.top > 0 && (size_t)c->o.top < n ? (size_t)c->o.top : n;
        for (size_t i = 0; i < keep; i++)
            add_kernel(c, arr, &m->ops[order[i]]);
        if (c->o.others && keep < n) {
            uint64_t calls = 0, gpu = 0;
            for (size_t i = keep; i < n; i++) {
                calls += m->ops[order[i]].calls;
                gpu += m->ops[order[i]].self_ns;
            }
            report_others(c, report, RK_KERNELS, n - keep, calls, gpu, gpu);
        }
        free(order);
    }
    jnum(c, report, RK_KERNELS_TOTAL, (double)n);
}

/* ---- gpu_idle --------------------------------------------------------------------- */

static const char *basis_words(const device_time *t)
{
    return strcmp(t->basis, "steps") == 0 ? "of step time"
                                          : "of the time between its first and last activity";
}

/* On a cut profile the GPU figures cover only what was read, and a Kineto
 * trace lists GPU activity after the CPU's, so the steps read can miss
 * theirs: the finding says so first (rules.md §4.5). */
static const char partial_words[] =
    "The profile is cut short: these figures cover only what was read, and the GPU work of "
    "the steps read may be missing from it. ";

static void partial_mark(analysis_ctx *c, cJSON *e)
{
    jbool(c, e, "partial", analysis_partial(c));
}

static void idle_finding(analysis_ctx *c, const model_gpu_device *g, const device_time *t,
                         double idle)
{
    char subject[32], title[200], rec[1100], a[32], b[32], gaps[160] = "";
    fmt_text(subject, sizeof subject, "gpu %u", g->device);
    fmt_text(title, sizeof title, "GPU %u is idle %s %s", g->device, fmt_pct(a, sizeof a, idle),
             basis_words(t));
    if (g->idle_gaps)
        fmt_text(gaps, sizeof gaps, "; %llu gaps of 1 ms or more take %s, the longest %s",
                 (unsigned long long)g->idle_gaps, fmt_duration(a, (double)g->idle_gap_ns),
                 fmt_duration(b, (double)g->longest[0].dur_ns));
    fmt_text(rec, sizeof rec,
             "%sGPU %u is idle %s %s%s: the host does not feed it fast enough. Long gaps are "
             "the CPU doing something else (data loading, host synchronisations, Python "
             "between steps): overlap loading and copies with compute and remove syncs; "
             "many short gaps between small kernels are launch overhead: batch them (CUDA "
             "graphs, torch.compile) or raise the batch size.",
             analysis_partial(c) ? partial_words : "", g->device, fmt_pct(a, sizeof a, idle),
             basis_words(t), gaps);
    cJSON *e = finding_add(c, "gpu_idle", severity_by(idle, 0.50, 0.20), subject, idle, title,
                           rec);
    jnum(c, e, RK_DEVICE, g->device);
    jnum(c, e, RK_IDLE_SHARE, idle);
    jstr(c, e, RK_BASIS, t->basis);
    jnum(c, e, RK_BASIS_NS, t->base_ns);
    jnum(c, e, RK_IDLE_NS, t->idle_ns);
    jnum(c, e, RK_BUSY_NS, t->busy_ns);
    jnum(c, e, RK_IDLE_GAPS, (double)g->idle_gaps);
    jnum(c, e, RK_IDLE_GAP_NS, (double)g->idle_gap_ns);
    gaps_list(c, e, g);
    jnum(c, e, "span_ns", g->last_ns > g->first_ns ? (double)(g->last_ns - g->first_ns) : 0.0);
    partial_mark(c, e);
}


/* ---- launch_bound --------------------------------------------------------------------
 * The GPU idles in short gaps between kernels that start as soon as their
 * launch call returns: it waits for the CPU to launch (rules.md §4.11). */

#define LAUNCH_BOUND_MIN_LAUNCHES 100
#define LAUNCH_BOUND_DELAY_NS 20000.0  /* median launch delay: the queue runs empty */
#define LAUNCH_BOUND_SHORT_SHARE 0.5   /* of idle time in gaps under 1 ms            */

static void launch_finding(analysis_ctx *c, const model_gpu_device *g, const device_time *t,
                           double idle, double short_ns)
{
    const model_launch_stats *l = &c->m->launch_all;
    char subject[32], title[200], rec[1400], a[32], b[32], d[32], e[32], f[32];
    double steps = (double)c->m->step_totals.steps;
    double per_step = steps > 0 ? (double)l->launches / steps : 0.0;
    double cpu_mean = (double)l->cpu_ns / (double)l->launches;
    double delay_p50 = sketch_quantile(&l->delay, 0.5);
    double gpu_p50 = sketch_quantile(&l->gpu, 0.5);
    char steps_words[64] = "";
    if (per_step > 0)
        fmt_text(steps_words, sizeof steps_words, "%.0f launches a step, ", per_step);
    fmt_text(subject, sizeof subject, "gpu %u", g->device);
    fmt_text(title, sizeof title, "GPU %u waits for kernel launches: idle %s %s, mostly in "
             "short gaps", g->device, fmt_pct(a, sizeof a, idle), basis_words(t));
    fmt_text(rec, sizeof rec,
             "%sGPU %u is idle %s %s, %s of it in gaps under 1 ms, and its kernels start a "
             "median %s after their launch call returns: the launch queue runs empty and the "
             "GPU waits for the CPU thread that launches (%s%s a launch call, kernels of %s "
             "median). Launch less often: capture the step in a CUDA graph "
             "(torch.cuda.graphs, or torch.compile(mode=\"reduce-overhead\")), fuse small "
             "operations (torch.compile), or give each kernel more work (a larger batch); "
             "the operations with the most GPU time launched (analyze --sort gpu) show where "
             "the launches come from.",
             analysis_partial(c) ? partial_words : "", g->device, fmt_pct(a, sizeof a, idle),
             basis_words(t), fmt_pct(b, sizeof b, share_of(short_ns, t->idle_ns)),
             fmt_duration(d, delay_p50), steps_words, fmt_duration(e, cpu_mean),
             fmt_duration(f, gpu_p50));
    cJSON *x = finding_add(c, "launch_bound", severity_by(idle, 0.50, 0.20), subject, idle,
                           title, rec);
    jnum(c, x, RK_DEVICE, g->device);
    jnum(c, x, RK_IDLE_SHARE, idle);
    jstr(c, x, RK_BASIS, t->basis);
    jnum(c, x, RK_IDLE_NS, t->idle_ns);
    jnum(c, x, "short_gap_ns", short_ns);
    jnum(c, x, "short_gap_share", share_of(short_ns, t->idle_ns));
    jnum(c, x, RK_LAUNCHES, (double)l->launches);
    jnum(c, x, "launches_per_step", per_step);
    jnum(c, x, "launch_cpu_mean_ns", cpu_mean);
    jnum(c, x, "launch_delay_p50_ns", delay_p50);
    jnum(c, x, "kernel_p50_ns", gpu_p50);
    partial_mark(c, x);
}

/* Whether the device is launch-bound (rules.md §4.11), and *short_ns its
 * idle time in gaps under 1 ms. */
static int launch_bound(const analysis_ctx *c, const model_gpu_device *g, const device_time *t,
                        double *short_ns)
{
    const model_launch_stats *l = &c->m->launch_all;
    double long_ns = (double)g->idle_gap_ns;
    *short_ns = t->idle_ns > long_ns ? t->idle_ns - long_ns : 0;
    return l->launches >= LAUNCH_BOUND_MIN_LAUNCHES &&
           sketch_quantile(&l->delay, 0.5) <= LAUNCH_BOUND_DELAY_NS && t->base_ns > 0 &&
           share_of(t->idle_ns, t->base_ns) >= 0.20 &&
           share_of(*short_ns, t->idle_ns) >= LAUNCH_BOUND_SHORT_SHARE;
}

void rule_launch_bound(analysis_ctx *c)
{
    for (size_t i = 0; i < c->m->ngpus; i++) {
        const model_gpu_device *g = &c->m->gpus[i];
        device_time t = device_time_of(g);
        double short_ns;
        if (launch_bound(c, g, &t, &short_ns))
            launch_finding(c, g, &t, share_of(t.idle_ns, t.base_ns), short_ns);
    }
}

/* A launch-bound device is launch_bound's: the same idle time, named by
 * its cause. */
void rule_gpu_idle(analysis_ctx *c)
{
    for (size_t i = 0; i < c->m->ngpus; i++) {
        const model_gpu_device *g = &c->m->gpus[i];
        device_time t = device_time_of(g);
        double idle = share_of(t.idle_ns, t.base_ns), short_ns;
        if (t.base_ns > 0 && idle >= 0.20 && !launch_bound(c, g, &t, &short_ns))
            idle_finding(c, g, &t, idle);
    }
}

/* ---- exposed_comm ------------------------------------------------------------------ */

static void comm_finding(analysis_ctx *c, const model_gpu_device *g, const device_time *t,
                         double share)
{
    char subject[32], title[200], rec[1400], a[32], b[32], d[32], e2[32];
    double overlapped = share_of(t->overlap_ns, t->comm_ns);
    fmt_text(subject, sizeof subject, "gpu %u", g->device);
    fmt_text(title, sizeof title, "communication on GPU %u is exposed %s %s", g->device,
             fmt_pct(a, sizeof a, share), basis_words(t));
    fmt_text(rec, sizeof rec,
             "%sCommunication kernels on GPU %u run %s, of which %s overlaps computation; the "
             "%s left exposed is %s %s, time the GPU computes nothing. Overlap communication "
             "with computation: with DDP let gradient buckets all-reduce during backward "
             "(bucket_cap_mb, gradient_as_bucket_view, no find_unused_parameters) and skip "
             "the all-reduce on accumulation steps (no_sync); with FSDP prefetch "
             "(backward_prefetch, forward_prefetch); launch your own collectives with "
             "async_op=True and wait as late as possible; or communicate less (bf16 "
             "gradients, compression hooks, larger per-GPU batches).",
             analysis_partial(c) ? partial_words : "", g->device, fmt_duration(a, t->comm_ns),
             fmt_pct(b, sizeof b, overlapped),
             fmt_duration(d, t->exposed_ns), fmt_pct(e2, sizeof e2, share), basis_words(t));
    cJSON *e = finding_add(c, "exposed_comm", severity_by(share, 0.30, 0.10), subject,
                           share > 1 ? 1.0 : share, title, rec);
    jnum(c, e, RK_DEVICE, g->device);
    jnum(c, e, "exposed_share", share);
    jstr(c, e, RK_BASIS, t->basis);
    jnum(c, e, RK_BASIS_NS, t->base_ns);
    jnum(c, e, RK_COMM_NS, t->comm_ns);
    jnum(c, e, "overlap_ns", t->overlap_ns);
    jnum(c, e, "overlap_share", overlapped);
    jnum(c, e, "exposed_ns", t->exposed_ns);
    jnum(c, e, RK_COMM_KERNELS, (double)g->comm_kernels);
    partial_mark(c, e);
}

void rule_exposed_comm(analysis_ctx *c)
{
    for (size_t i = 0; i < c->m->ngpus; i++) {
        const model_gpu_device *g = &c->m->gpus[i];
        device_time t = device_time_of(g);
        double share = share_of(t.exposed_ns, t.base_ns);
        if (g->comm_kernels && share >= 0.10)
            comm_finding(c, g, &t, share);
    }
}
