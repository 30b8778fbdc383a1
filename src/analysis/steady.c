/* steady.c - what `prof compare` tests, computed where the analysis has
 * the whole profile (formats/rules.md §6.2): the steady state of the step
 * time and of each operation, that is their mean after the warm-up, and
 * the means of consecutive batches of it, from which a comparison of two
 * single runs estimates the run's own variation (stats_batch_means). Memory
 * is bounded: at most STEADY_BATCHES batches each. */
#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

#define STEADY_MIN_BATCHES 5u /* fewer non-empty op batches: no warm-up to skip */

static void put_batches(analysis_ctx *c, cJSON *o, const double *means, size_t n)
{
    cJSON *arr = jarr(c, o, RK_BATCH_MEANS_NS);
    for (size_t i = 0; i < n; i++)
        jpush_num(c, arr, means[i]);
}

size_t steady_batch_means(const double *v, size_t n, double *means)
{
    size_t k = (n + STEADY_BATCHES - 1) / STEADY_BATCHES, nb = k ? n / k : 0;
    for (size_t b = 0; b < nb; b++) {
        double s = 0;
        for (size_t i = 0; i < k; i++)
            s += v[b * k + i];
        means[b] = s / (double)k;
    }
    return nb >= 2 ? nb : 0;
}

/* Complete steps after the warm-up, and their batch means. */
void steady_steps(analysis_ctx *c, cJSON *step_time)
{
    const step_stats *st = &c->steps;
    size_t w = stats_warmup(st->n), n = st->n - w;
    cJSON *o = jobj(c, step_time, RK_STEADY);
    jnum(c, o, RK_WARMUP_STEPS, (double)w);
    jnum(c, o, RK_STEPS, (double)n);
    double sum = 0, means[STEADY_BATCHES];
    for (size_t i = 0; i < n; i++)
        sum += st->dur[w + i];
    jnum(c, o, RK_MEAN_NS, n ? sum / (double)n : NAN);
    jnum(c, o, RK_BATCH_STEPS, (double)((n + STEADY_BATCHES - 1) / STEADY_BATCHES));
    put_batches(c, o, means, steady_batch_means(st->dur + w, n, means));
}

static int by_calls(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median calls of batches [0, n) of v (n >= 1). */
static double median_calls(const uint64_t *v, size_t n)
{
    uint64_t s[TIMEBATCH_MAX];
    for (size_t i = 0; i < n; i++)
        s[i] = v[i];
    qsort(s, n, sizeof *s, by_calls);
    return n % 2 ? (double)s[n / 2] : 0.5 * ((double)s[n / 2 - 1] + (double)s[n / 2]);
}

/* An operation's time batches that hold calls, without the warm-up (the
 * first tenth, when there are enough) and without a last batch holding
 * under half the typical calls (cut short by the end of the run). */
void steady_op(analysis_ctx *c, cJSON *op_obj, const model_op *op)
{
    uint64_t calls[TIMEBATCH_MAX], ns[TIMEBATCH_MAX];
    size_t n = 0;
    for (uint32_t i = 0, used = time_batches_used(&op->batches); i < used; i++)
        if (op->batches.at[i].calls) {
            calls[n] = op->batches.at[i].calls;
            ns[n++] = op->batches.at[i].ns;
        }
    size_t w = n >= STEADY_MIN_BATCHES ? (n + 9) / 10 : 0;
    if (n - w >= STEADY_MIN_BATCHES && (double)calls[n - 1] < 0.5 * median_calls(calls + w, n - w))
        n--;
    double means[TIMEBATCH_MAX], total_ns = 0, total_calls = 0;
    for (size_t i = w; i < n; i++) {
        means[i - w] = (double)ns[i] / (double)calls[i];
        total_ns += (double)ns[i];
        total_calls += (double)calls[i];
    }
    cJSON *o = jobj(c, op_obj, RK_STEADY);
    jnum(c, o, RK_WARMUP_BATCHES, (double)w);
    jnum(c, o, RK_CALLS, total_calls);
    jnum(c, o, RK_MEAN_NS, total_calls > 0 ? total_ns / total_calls : NAN);
    jnum(c, o, RK_BATCH_WIDTH_NS, (double)time_batches_width(&op->batches));
    put_batches(c, o, means, n - w >= 2 ? n - w : 0);
}
