/* series.c - steps, memory series and counters: collected as they come,
 * then steps put in number order and samples in time order, each sample
 * mapped to the step whose interval holds its time.
 *
 * A long run has more steps and samples than the model keeps (MODEL_KEEP):
 * then it keeps those whose hash (of the step's end; of the sample's time)
 * starts with k zero bits, k growing by one each time the limit is reached.
 * That is a pseudo-random subset spread over the whole run, the same on
 * every read, and free of the aliasing an every-2^k-th choice would have
 * with what recurs every N steps (checkpoints, evaluation). Counts,
 * moments, extremes and the sketch of step times, and a series' peak, last
 * and lowest values, are taken from everything before it is thinned. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

size_t mb_keep_limit(const prof_tuning *t)
{
    size_t n = t ? t->model_keep : 0;
    return n < 16 || n > (1u << 30) ? MODEL_KEEP : n;
}

/* A step by its end, a sample by its time: the sample the recorder takes
 * as it closes a step (record/api.c step_close) has the step's end for
 * time, so the two are kept or dropped together and the per-step points of
 * the leak rule (rules.md §4.2) survive thinning as a sample of steps. */
static uint64_t step_hash(const model_step *st)
{
    return mb_thin_hash(st->start_ns + st->dur_ns);
}

static uint64_t sample_hash(const model_sample *x)
{
    return mb_thin_hash(x->t_ns);
}

static int long_less(const model_long_step *a, const model_long_step *b)
{
    if (a->dur_ns != b->dur_ns)
        return a->dur_ns < b->dur_ns;
    return a->number > b->number; /* of equal ones, the later step goes first */
}

static void heap_down(model_long_step *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && long_less(&h[l], &h[m]))
            m = l;
        if (r < n && long_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        model_long_step t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Keeps st among the MODEL_LONGEST longest. 0, or -1 out of memory. */
static int longest_add(model_step_durations *d, const model_step *st)
{
    model_long_step x = { st->number, st->start_ns, st->dur_ns };
    model_long_step *h = d->longest;
    if (d->nlongest == MODEL_LONGEST) {
        if (!long_less(&h[0], &x))
            return 0;
        h[0] = x;
        heap_down(h, d->nlongest, 0);
        return 0;
    }
    if (!h && !(h = d->longest = malloc(MODEL_LONGEST * sizeof *h)))
        return -1;
    size_t i = d->nlongest++;
    h[i] = x;
    while (i > 0 && long_less(&h[i], &h[(i - 1) / 2])) {
        model_long_step t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return 0;
}

static int durations_add(model_step_durations *d, const model_step *st)
{
    uint64_t dur = st->dur_ns;
    if (d->n == 0 || st->number < d->first_number ||
        (st->number == d->first_number && st->start_ns < d->first_start)) {
        d->first_number = st->number;
        d->first_start = st->start_ns;
    }
    double x = (double)dur, delta = x - d->mean;
    d->n++;
    d->mean += delta / (double)d->n;
    d->m2 += delta * (x - d->mean);
    if (d->n == 1 || dur < d->min)
        d->min = dur;
    if (dur > d->max)
        d->max = dur;
    if (sketch_add(&d->sketch, dur) < 0)
        return -1;
    return longest_add(d, st);
}

/* *into, empty, made a copy of from. */
static int durations_copy(model_step_durations *into, const model_step_durations *from)
{
    model_step_durations c = *from;
    c.longest = NULL;
    if (sketch_copy(&c.sketch, &from->sketch) < 0)
        return -1;
    if (from->longest && !(c.longest = malloc(MODEL_LONGEST * sizeof *c.longest))) {
        sketch_free(&c.sketch);
        return -1;
    }
    if (c.longest)
        memcpy(c.longest, from->longest, from->nlongest * sizeof *c.longest);
    *into = c;
    return 0;
}

/* complete_dur apart from all_dur from now on: a copy of what all_dur
 * holds, the figures of the complete steps so far. */
static int totals_apart(model_step_totals *t)
{
    if (t->complete_apart)
        return 0;
    t->complete_apart = 1;
    return durations_copy(&t->complete_dur, &t->all_dur);
}

/* Steps are nearly always complete but the last, so complete_dur is
 * not added to while it would be all_dur (model_step_totals): the
 * durations' moments, sketch and longest steps are worked out once per
 * step, not twice. */
static int totals_add(model_step_totals *t, const model_step *st)
{
    t->steps++;
    if ((st->flags & PROF_STEP_INCOMPLETE) && totals_apart(t) < 0)
        return -1;
    if (durations_add(&t->all_dur, st) < 0)
        return -1;
    if (st->flags & PROF_STEP_INCOMPLETE)
        return 0;
    t->complete++;
    if (st->flags & PROF_STEP_SAMPLED) {
        t->sampled++;
        t->sampled_ns += st->dur_ns;
    }
    return t->complete_apart ? durations_add(&t->complete_dur, st) : 0;
}

void mb_step_totals_free(model_step_totals *t)
{
    sketch_free(&t->all_dur.sketch);
    sketch_free(&t->complete_dur.sketch);
    free(t->all_dur.longest);
    free(t->complete_dur.longest);
}

/* Raises the thinning of the steps by one level, dropping about half. */
static void steps_thin(profile_model *m)
{
    size_t k = 0;
    m->step_thinning++;
    for (size_t i = 0; i < m->nsteps; i++)
        if (mb_thin_keeps(step_hash(&m->steps[i]), m->step_thinning))
            m->steps[k++] = m->steps[i];
    m->nsteps = k;
}

int mb_step_add(model_builder *b, const prof_event *ev)
{
    profile_model *m = b->m;
    model_step st = { ev->value, ev->start_ns, ev->dur_ns, 0, ev->flags };
    if (totals_add(&m->step_totals, &st) < 0)
        return -1;
    uint64_t h = step_hash(&st);
    while (mb_thin_keeps(h, m->step_thinning) && m->nsteps >= b->keep &&
           m->step_thinning < MB_THIN_MAX)
        steps_thin(m);
    if (!mb_thin_keeps(h, m->step_thinning) || m->nsteps >= b->keep)
        return 0;
    if (vec_grow(&m->steps, &b->cap_steps, m->nsteps, sizeof *m->steps) < 0)
        return -1;
    m->steps[m->nsteps++] = st;
    return 0;
}

/* A series sought in series_index: its name and kind. */
typedef struct series_key {
    const profile_model *m;
    const char *name;
    int is_memory;
} series_key;

static int series_is(const void *ctx, uint32_t i)
{
    const series_key *k = ctx;
    const model_series *s = &k->m->series[i];
    return s->is_memory == k->is_memory && strcmp(s->name, k->name) == 0;
}

static uint64_t series_hash(const char *name, int is_memory)
{
    return hash_fnv1a_str(name, NULL) ^ (uint64_t)is_memory;
}

static uint64_t series_rehash(const void *ctx, uint32_t i)
{
    const model_series *s = &((const series_key *)ctx)->m->series[i];
    return series_hash(s->name, s->is_memory);
}

/* A new series at the end of m->series. 0, or -1 out of memory. */
static int series_new(model_builder *b, const char *name, int is_memory)
{
    profile_model *m = b->m;
    size_t i = m->nseries;
    if (i >= MODEL_NONE - 1 || vec_grow(&m->series, &b->cap_series, i, sizeof *m->series) < 0 ||
        vec_grow(&b->series_state, &b->cap_series_state, i, sizeof *b->series_state) < 0)
        return -1;
    model_series *s = &m->series[i];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name)))
        return -1;
    s->is_memory = is_memory;
    b->series_state[i] = (mb_series_state){ 0, 0 };
    m->nseries++;
    return 0;
}

static int series_of(model_builder *b, const prof_event *ev, int is_memory, uint32_t *out)
{
    mb_idmap *map = is_memory ? &b->memory_series : &b->counter_series;
    if (mb_idmap_get(map, ev, out))
        return 0;
    series_key key = { b->m, ev->name, is_memory };
    int added;
    uint32_t *i = hmap_slot_by(&b->series_index, series_hash(ev->name, is_memory), series_is,
                               series_rehash, &key, &added);
    if (!i)
        return -1;
    if (added) {
        if (series_new(b, ev->name, is_memory) < 0) {
            hmap_remove_by(&b->series_index, i, series_rehash, &key);
            return -1;
        }
        *i = (uint32_t)b->m->nseries - 1;
    }
    *out = *i;
    return mb_idmap_set(map, ev, *out);
}

/* A series' peak (the largest value, at the first time it is reached),
 * last value in time (the later one of two at the same time) and lowest,
 * over every sample, NaN values left out of peak and lowest; series_finish sets them again from the samples when
 * all were kept, in their time order, as ever. */
static void extremes_add(model_series *s, uint64_t t, double v, uint64_t *final_t)
{
    if (s->total == 1) {
        s->peak = s->final = s->low = v;
        s->peak_t_ns = *final_t = t;
        return;
    }
    if (t >= *final_t) {
        s->final = v;
        *final_t = t;
    }
    if (isnan(v)) /* no peak, no low: a NaN is only ever a last value */
        return;
    if (isnan(s->peak) || v > s->peak || (v == s->peak && t < s->peak_t_ns)) {
        s->peak = v;
        s->peak_t_ns = t;
    }
    if (isnan(s->low) || v < s->low)
        s->low = v;
}

static void series_thin(model_series *s)
{
    size_t k = 0;
    s->thinning++;
    for (size_t i = 0; i < s->nsamples; i++)
        if (mb_thin_keeps(sample_hash(&s->samples[i]), s->thinning))
            s->samples[k++] = s->samples[i];
    s->nsamples = k;
}

int mb_sample_add(model_builder *b, const prof_event *ev, int is_memory)
{
    uint32_t i;
    if (series_of(b, ev, is_memory, &i) < 0)
        return -1;
    model_series *s = &b->m->series[i];
    double v = is_memory ? (double)ev->value : ev->fvalue;
    s->total++;
    extremes_add(s, ev->start_ns, v, &b->series_state[i].final_t);
    model_sample x = { ev->start_ns, MODEL_NONE, v };
    uint64_t h = sample_hash(&x);
    while (mb_thin_keeps(h, s->thinning) && s->nsamples >= b->keep && s->thinning < MB_THIN_MAX)
        series_thin(s);
    if (!mb_thin_keeps(h, s->thinning) || s->nsamples >= b->keep)
        return 0;
    if (vec_grow(&s->samples, &b->series_state[i].cap, s->nsamples, sizeof *s->samples) < 0)
        return -1;
    s->samples[s->nsamples++] = x;
    return 0;
}

void mb_series_index_free(model_builder *b)
{
    free(b->memory_series.v);
    free(b->counter_series.v);
    free(b->series_state);
    hmap_free(&b->series_index);
}

/* ---- finishing ------------------------------------------------------------- */

static int step_cmp(const void *pa, const void *pb)
{
    const model_step *a = pa, *b = pb;
    if (a->number != b->number)
        return a->number < b->number ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* Samples sort by time; equal times keep their file order, parked in .step. */
static int sample_cmp(const void *pa, const void *pb)
{
    const model_sample *a = pa, *b = pb;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return (a->step > b->step) - (a->step < b->step);
}

/* Step indexes by start time (qsort_r: glibc's, with the steps as argument). */
static int by_start_cmp(const void *pa, const void *pb, void *arg)
{
    const model_step *s = arg;
    const model_step *a = &s[*(const uint32_t *)pa], *b = &s[*(const uint32_t *)pb];
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return a->number < b->number ? -1 : a->number > b->number;
}

static uint64_t step_end(const model_step *s)
{
    uint64_t e = s->start_ns + s->dur_ns;
    return e < s->start_ns ? UINT64_MAX : e;
}

/* The step a sample at t falls in: the one whose [start, end] holds t; a
 * sample exactly at a boundary belongs to the step that ends there, because
 * the runtime samples memory as it closes a step (record/api.c step_close),
 * so the value read at step k's end is "memory after step k". *lo is the
 * first position in by_start whose start is > t: samples come in time
 * order, so it only moves forward, and a series costs one walk of the
 * steps rather than a search per sample. */
static uint32_t step_at(const profile_model *m, const uint32_t *by_start, uint64_t t,
                        size_t *cursor)
{
    size_t lo = *cursor;
    while (lo < m->nsteps && m->steps[by_start[lo]].start_ns <= t)
        lo++;
    *cursor = lo;
    if (lo >= 2 && t <= step_end(&m->steps[by_start[lo - 2]]))
        return by_start[lo - 2];
    if (lo >= 1 && t <= step_end(&m->steps[by_start[lo - 1]]))
        return by_start[lo - 1];
    return MODEL_NONE;
}

static void series_finish(profile_model *m, model_series *s, const uint32_t *by_start)
{
    int sorted = 1;
    for (size_t i = 0; i < s->nsamples; i++) {
        s->samples[i].step = (uint32_t)i;
        if (i && s->samples[i].t_ns < s->samples[i - 1].t_ns)
            sorted = 0;
    }
    if (!sorted)
        mb_sort(s->samples, s->nsamples, sizeof *s->samples, sample_cmp);
    size_t cursor = 0;
    for (size_t i = 0; i < s->nsamples; i++) {
        model_sample *x = &s->samples[i];
        x->step = by_start ? step_at(m, by_start, x->t_ns, &cursor) : MODEL_NONE;
        if (s->thinning)
            continue;
        if (i == 0 || x->value > s->peak) {
            s->peak = x->value;
            s->peak_t_ns = x->t_ns;
        }
        s->final = x->value;
        if (i == 0 || x->value < s->low)
            s->low = x->value;
    }
}

/* Whether the steps are already in number order and, in that order, in
 * start order: they nearly always arrive so, and a sort of a sorted array
 * of a long run still costs n log n comparisons. */
static void steps_order(const profile_model *m, int *by_number, int *by_start)
{
    *by_number = *by_start = 1;
    for (size_t i = 1; i < m->nsteps && (*by_number || *by_start); i++) {
        if (step_cmp(&m->steps[i - 1], &m->steps[i]) > 0)
            *by_number = 0;
        uint32_t a = (uint32_t)(i - 1), b = (uint32_t)i;
        if (by_start_cmp(&a, &b, m->steps) > 0)
            *by_start = 0;
    }
}

int mb_steps_series_finish(profile_model *m)
{
    uint32_t *by_start = NULL;
    int number_sorted, start_sorted;
    if (totals_apart(&m->step_totals) < 0)
        return -1;
    steps_order(m, &number_sorted, &start_sorted);
    if (!number_sorted) {
        mb_sort(m->steps, m->nsteps, sizeof *m->steps, step_cmp);
        steps_order(m, &number_sorted, &start_sorted);
    }
    if (m->nsteps) {
        if (m->nsteps >= MODEL_NONE || !(by_start = malloc(m->nsteps * sizeof *by_start)))
            return -1;
        for (size_t i = 0; i < m->nsteps; i++)
            by_start[i] = (uint32_t)i;
        if (!start_sorted)
            qsort_r(by_start, m->nsteps, sizeof *by_start, by_start_cmp, m->steps);
    }
    for (size_t i = 0; i < m->nseries; i++)
        series_finish(m, &m->series[i], by_start);
    free(by_start);
    return 0;
}
