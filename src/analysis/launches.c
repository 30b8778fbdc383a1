/* launches.c - the report's account of GPU work joined to its launches
 * (rules.md §3.2): how much was joined, the kernel launch statistics of
 * Holistic Trace Analysis over every stream and per stream, and short
 * kernels. */
#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"
#include "analysis/sections.h"

static void distribution(analysis_ctx *c, cJSON *o, const quantile_sketch *s, uint64_t sum,
                         uint64_t n)
{
    jnum(c, o, RK_MEAN_NS, n ? (double)sum / (double)n : 0.0);
    jnum(c, o, RK_MIN_NS, (double)s->min);
    jnum(c, o, RK_P25_NS, sketch_quantile(s, 0.25));
    jnum(c, o, RK_P50_NS, sketch_quantile(s, 0.50));
    jnum(c, o, RK_P75_NS, sketch_quantile(s, 0.75));
    jnum(c, o, RK_P95_NS, sketch_quantile(s, 0.95));
    jnum(c, o, RK_MAX_NS, (double)s->max);
}

/* A quantile of queue lengths: exact while the sketch holds every value,
 * else the whole number its bucket (1% wide) stands for. */
static double queue_quantile(const quantile_sketch *q, double p)
{
    double v = sketch_quantile(q, p);
    return q->count > SKETCH_EXACT ? round(v) : v;
}

/* The stream's launch queue as HTA summarizes it (describe() of the
 * length after each event) and the time at its longest and when full. */
static void queue_summary(analysis_ctx *c, cJSON *o, const model_launch_stats *s)
{
    double n = (double)s->queue_events, mean = n > 0 ? s->queue_sum / n : 0.0;
    double var = n > 1 ? (s->queue_sum2 - n * mean * mean) / (n - 1) : 0.0;
    jnum(c, o, RK_COUNT, n);
    jnum(c, o, RK_MEAN, mean);
    jnum(c, o, RK_STDDEV, var > 0 ? sqrt(var) : 0.0);
    jnum(c, o, RK_MIN, (double)s->queue.min);
    jnum(c, o, RK_P25, queue_quantile(&s->queue, 0.25));
    jnum(c, o, RK_P50, queue_quantile(&s->queue, 0.50));
    jnum(c, o, RK_P75, queue_quantile(&s->queue, 0.75));
    jnum(c, o, RK_MAX, (double)s->queue_max);
    jnum(c, o, RK_AT_MAX_NS, (double)s->queue_at_max_ns);
    jnum(c, o, RK_FULL_NS, (double)s->queue_full_ns);
    jnum(c, o, RK_REORDERED, (double)s->queue_reordered);
}

void launch_stats(analysis_ctx *c, cJSON *o, const model_launch_stats *s)
{
    if (s->device != MODEL_NONE) {
        jnum(c, o, RK_DEVICE, s->device);
        jnum(c, o, RK_STREAM, s->stream);
    }
    jnum(c, o, RK_COUNT, (double)s->launches);
    distribution(c, jobj(c, o, RK_CPU), &s->cpu, s->cpu_ns, s->launches);
    distribution(c, jobj(c, o, RK_GPU_TIME), &s->gpu, s->gpu_ns, s->launches);
    distribution(c, jobj(c, o, RK_DELAY), &s->delay, s->delay_ns, s->launches);
    jnum(c, o, RK_CPU_OVER_CUTOFF, (double)s->cpu_over);
    jnum(c, o, RK_DELAY_OVER_CUTOFF, (double)s->delay_over);
    if (s->device != MODEL_NONE)
        queue_summary(c, jobj(c, o, RK_QUEUE), s);
}

static double stream_launches(const void *v, size_t i)
{
    return (double)((const model_launch_stats *)v)[i].launches;
}

void summary_launches(analysis_ctx *c, cJSON *s)
{
    const profile_model *m = c->m;
    const model_gpu_join *j = &m->gpu_join;
    if (!m->has_gpu)
        return;
    cJSON *o = jobj(c, s, RK_LAUNCHES);
    jnum(c, o, RK_RECORDS, (double)j->records);
    jnum(c, o, RK_NS, (double)j->ns);
    jnum(c, o, RK_JOINED, (double)j->joined);
    jnum(c, o, RK_JOINED_NS, (double)j->joined_ns);
    jnum(c, o, RK_LATE, (double)j->late);
    jnum(c, o, RK_LATE_NS, (double)j->late_ns);
    jnum(c, o, RK_OUTSIDE_NS, (double)j->outside_ns);
    jnum(c, o, RK_SHORT_KERNELS, (double)j->short_kernels);
    jnum(c, o, RK_SHORT_KERNEL_NS, (double)j->short_kernel_ns);
    launch_stats(c, jobj(c, o, RK_ALL), &m->launch_all);
    cJSON *arr = jarr(c, o, RK_STREAMS);
    size_t cut;
    unsigned char *listed = report_listed(c, m->launch, m->nlaunch, stream_launches, &cut);
    for (size_t i = 0; i < m->nlaunch; i++)
        if (!listed || listed[i])
            launch_stats(c, jpush_obj(c, arr), &m->launch[i]);
    free(listed);
}
