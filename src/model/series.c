/* series.c - steps, memory series and counters: collected as they come,
 * then steps put in number order and samples in time order, each sample
 * mapped to the step whose interval holds its time. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

int mb_step_add(model_builder *b, const prof_event *ev)
{
    profile_model *m = b->m;
    if (vec_grow(&m->steps, &b->cap_steps, m->nsteps, sizeof *m->steps) < 0)
        return -1;
    m->steps[m->nsteps++] = (model_step){ ev->value, ev->start_ns, ev->dur_ns, ev->flags };
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
        vec_grow(&b->series_cap, &b->cap_series_cap, i, sizeof *b->series_cap) < 0)
        return -1;
    model_series *s = &m->series[i];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name)))
        return -1;
    s->is_memory = is_memory;
    b->series_cap[i] = 0;
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

int mb_sample_add(model_builder *b, const prof_event *ev, int is_memory)
{
    uint32_t i;
    if (series_of(b, ev, is_memory, &i) < 0)
        return -1;
    model_series *s = &b->m->series[i];
    if (vec_grow(&s->samples, &b->series_cap[i], s->nsamples, sizeof *s->samples) < 0)
        return -1;
    s->samples[s->nsamples++] =
        (model_sample){ ev->start_ns, MODEL_NONE, is_memory ? (double)ev->value : ev->fvalue };
    return 0;
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
        if (i == 0 || x->value > s->peak) {
            s->peak = x->value;
            s->peak_t_ns = x->t_ns;
        }
        s->final = x->value;
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
