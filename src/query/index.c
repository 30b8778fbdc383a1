/* index.c - what a query must know of a rank before it streams its events,
 * learnt in one pass over the file when a statement first needs it: the
 * steps (a row's step, and a filter on steps turned into a time window),
 * the threads, and how far the events that start in each stretch of time
 * reach (a window widened to the end of every region that starts in it,
 * so that the region's children, and so its self time, are read too). A
 * second pass, only for a query of GPU work's launching operation, joins
 * each runtime call that has a correlation id to the innermost region
 * around it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"
#include "util/vec.h"

/* ---- the index pass ---- */

static q_thread *thread_of(q_rank *r, uint32_t thread)
{
    int added;
    uint32_t *slot = hmap_slot(&r->thread_at, thread, &added);
    if (!slot)
        return NULL;
    if (added) {
        if (vec_grow(&r->threads, &r->threads_cap, r->nthreads, sizeof *r->threads) < 0) {
            hmap_remove(&r->thread_at, slot);
            return NULL;
        }
        memset(&r->threads[r->nthreads], 0, sizeof *r->threads);
        r->threads[r->nthreads].thread = thread;
        *slot = (uint32_t)r->nthreads++;
    }
    return &r->threads[*slot];
}

/* Widens the buckets until t's fits: each doubling merges pairs. */
static void bucket_fit(q_rank *r, uint64_t t)
{
    while (t / r->width >= Q_BUCKETS) {
        for (size_t i = 0; i < Q_BUCKETS / 2; i++) {
            uint64_t a = r->max_end[2 * i], b = r->max_end[2 * i + 1];
            r->max_end[i] = a > b ? a : b;
        }
        memset(r->max_end + Q_BUCKETS / 2, 0, Q_BUCKETS / 2 * sizeof *r->max_end);
        r->width *= 2;
    }
}

static void bucket_note(q_rank *r, uint64_t start, uint64_t end)
{
    if (start / r->width >= Q_BUCKETS)
        bucket_fit(r, start);
    uint64_t *m = &r->max_end[start / r->width];
    if (end > *m)
        *m = end;
}

static int index_event(void *arg, const prof_event *ev)
{
    q_rank *r = arg;
    if (ev->type == PROF_EV_THREAD) {
        q_thread *t = thread_of(r, ev->thread);
        if (!t)
            return -1;
        char *name = strdup(ev->name);
        if (!name)
            return -1;
        free(t->name);
        t->name = name;
        t->os_tid = ev->value;
        return 0;
    }
    if (ev->type == PROF_EV_ATTR)
        return 0;
    q_thread *t = thread_of(r, ev->thread);
    if (!t)
        return -1;
    t->events++;
    r->events++;
    uint64_t end = ev->start_ns + ev->dur_ns < ev->start_ns ? UINT64_MAX : ev->start_ns + ev->dur_ns;
    bucket_note(r, ev->start_ns, end);
    if (ev->type == PROF_EV_STEP) {
        if (vec_grow(&r->steps.s, &r->steps.cap, r->steps.n, sizeof *r->steps.s) < 0)
            return -1;
        r->steps.s[r->steps.n++] = (q_step){ ev->value, ev->start_ns, ev->dur_ns, ev->flags };
    }
    return 0;
}

static int step_order(const void *a, const void *b)
{
    const q_step *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* Forgets what a failed index pass learnt, so that another starts afresh. */
static void index_clear(q_rank *r)
{
    for (size_t i = 0; i < r->nthreads; i++)
        free(r->threads[i].name);
    r->nthreads = r->steps.n = 0;
    r->events = 0;
    hmap_clear(&r->thread_at);
    if (r->max_end)
        memset(r->max_end, 0, Q_BUCKETS * sizeof *r->max_end);
    r->width = 1;
}

/* The index's last facts, from the reader at the file's end: how reading
 * ended, and the names of threads defined after their events. */
static int index_end(void *arg, prof_reader *rd)
{
    q_rank *r = arg;
    prof_read_status st;
    prof_reader_status(rd, &st);
    r->clean = st.clean;
    snprintf(r->detail, sizeof r->detail, "%s", st.detail);
    for (size_t i = 0; i < r->nthreads; i++)
        if (!r->threads[i].name && r->threads[i].thread != PROF_THREAD_GPU) {
            const char *name = prof_reader_thread_name(rd, r->threads[i].thread);
            if (name && !(r->threads[i].name = strdup(name)))
                return -1;
        }
    return 0;
}

static prof_err index_pass(query_db *q, q_rank *r, prof_error *err)
{
    prof_err e = q_read_all(q, r, 0, UINT64_MAX, index_event, index_end, r, err);
    if (e == PROF_OK && r->steps.n) /* (qsort's array may not be NULL) */
        qsort(r->steps.s, r->steps.n, sizeof *r->steps.s, step_order);
    return e;
}

prof_err q_rank_index(query_db *q, q_rank *r, prof_error *err)
{
    if (r->indexed)
        return PROF_OK;
    if (!r->max_end && !(r->max_end = calloc(Q_BUCKETS, sizeof *r->max_end)))
        return q_nomem(err);
    index_clear(r);
    prof_err e = index_pass(q, r, err);
    if (e != PROF_OK)
        index_clear(r);
    else
        r->indexed = 1;
    return e;
}

const q_step *q_step_at(const q_steps *steps, uint64_t t)
{
    size_t lo = 0, hi = steps->n;
    while (lo < hi) { /* the first step that starts after t */
        size_t mid = lo + (hi - lo) / 2;
        if (steps->s[mid].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const q_step *s = &steps->s[lo - 1];
    return t - s->start_ns < s->dur_ns || (s->dur_ns == 0 && t == s->start_ns) ? s : NULL;
}

const q_step *q_step_closing_at(const q_steps *steps, uint64_t t)
{
    size_t lo = 0, hi = steps->n;
    while (lo < hi) { /* the first step that starts at or after t */
        size_t mid = lo + (hi - lo) / 2;
        if (steps->s[mid].start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0) {
        const q_step *s = &steps->s[lo - 1];
        if (t - s->start_ns <= s->dur_ns)
            return s;
    }
    return q_step_at(steps, t);
}

uint64_t q_reach(const q_rank *r, uint64_t from, uint64_t to)
{
    uint64_t reach = to;
    uint64_t a = from / r->width, b = to / r->width;
    if (b >= Q_BUCKETS)
        b = Q_BUCKETS - 1;
    for (uint64_t i = a; i <= b && i < Q_BUCKETS; i++)
        if (r->max_end[i] > reach)
            reach = r->max_end[i];
    return reach;
}

/* ---- launches joined to their operations ---- */

/* The index in r->names of an event's name (by its id), copied once. */
/* The index in r->names of the text s under key (a name id; a thread's
 * key is Q_THREAD_KEY | thread), copied once. */
#define Q_THREAD_KEY (1ull << 40)
static uint32_t intern(q_rank *r, uint64_t key, const char *s)
{
    int added;
    uint32_t *slot = hmap_slot(&r->name_at, key, &added);
    if (!slot)
        return Q_NONE;
    if (added) {
        char *copy = strdup(s);
        if (!copy || vec_grow(&r->names, &r->names_cap, r->nnames, sizeof *r->names) < 0) {
            free(copy);
            hmap_remove(&r->name_at, slot);
            return Q_NONE;
        }
        r->names[r->nnames] = copy;
        *slot = (uint32_t)r->nnames++;
    }
    return *slot;
}

static uint32_t name_of(q_rank *r, const prof_event *ev)
{
    return intern(r, ev->name_id, ev->name);
}

static int launch_order(const void *a, const void *b)
{
    const q_launch *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->correlation < y->correlation ? -1 : x->correlation > y->correlation;
}

static int collect_launch(void *arg, const prof_event *ev)
{
    q_rank *r = arg;
    if (ev->type != PROF_EV_API || ev->correlation == 0)
        return 0;
    uint32_t api = name_of(r, ev);
    if (api == Q_NONE || vec_grow(&r->launches, &r->launches_cap, r->nlaunches,
                                  sizeof *r->launches) < 0)
        return -1;
    r->launches[r->nlaunches++] = (q_launch){ ev->correlation, ev->start_ns, ev->thread, api,
                                              Q_NONE };
    return 0;
}

/* A region takes the launches that start inside it that no region took
 * before: regions come in end order, children first, so the first to come
 * around a launch is the innermost (as launch.c takes them). */
static int claim_launches(void *arg, const prof_event *ev)
{
    q_rank *r = arg;
    if (ev->type != PROF_EV_REGION)
        return 0;
    size_t lo = 0, hi = r->nlaunches;
    while (lo < hi) { /* the first launch of (thread, start >= region start) */
        size_t mid = lo + (hi - lo) / 2;
        const q_launch *l = &r->launches[mid];
        if (l->thread < ev->thread || (l->thread == ev->thread && l->start_ns < ev->start_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t name = Q_NONE;
    for (size_t i = lo; i < r->nlaunches; i++) {
        q_launch *l = &r->launches[i];
        if (l->thread != ev->thread || l->start_ns - ev->start_ns > ev->dur_ns)
            break;
        if (l->op != Q_NONE)
            continue;
        if (name == Q_NONE && (name = name_of(r, ev)) == Q_NONE)
            return -1;
        l->op = name;
    }
    return 0;
}

prof_err q_rank_join(query_db *q, q_rank *r, prof_error *err)
{
    if (r->joined)
        return PROF_OK;
    prof_err e = q_read_all(q, r, 0, UINT64_MAX, collect_launch, NULL, r, err);
    if (e == PROF_OK && r->nlaunches) {
        qsort(r->launches, r->nlaunches, sizeof *r->launches, launch_order);
        e = q_read_all(q, r, 0, UINT64_MAX, claim_launches, NULL, r, err);
    }
    for (size_t i = 0; e == PROF_OK && i < r->nlaunches; i++) {
        int added;
        uint32_t *slot = hmap_slot(&r->launch_at, r->launches[i].correlation, &added);
        if (!slot)
            e = q_nomem(err);
        else if (added) /* graph launches: the first call of an id */
            *slot = (uint32_t)i;
    }
    if (e == PROF_OK) {
        r->joined = 1;
    } else { /* another statement starts afresh */
        r->nlaunches = 0;
        hmap_clear(&r->launch_at);
    }
    return e;
}

/* ---- events by correlation id: the inner side of a join ---- */

static int by_correlation(const void *a, const void *b)
{
    const q_cached *x = a, *y = b;
    if (x->correlation != y->correlation)
        return x->correlation < y->correlation ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order; /* file order within one id */
}

typedef struct correlated {
    q_rank *r;
    q_corr_cache *cc;
    prof_event_type type;
} correlated;

static int keep_correlated(void *arg, const prof_event *ev)
{
    correlated *k = arg;
    q_corr_cache *cc = k->cc;
    if (ev->type != k->type || ev->correlation == 0)
        return 0;
    uint32_t name = name_of(k->r, ev);
    if (name == Q_NONE || vec_grow(&cc->e, &cc->cap, cc->n, sizeof *cc->e) < 0)
        return -1;
    cc->e[cc->n] = (q_cached){ ev->correlation, ev->start_ns, ev->dur_ns, ev->value, cc->n, name,
                               Q_NONE, ev->thread, ev->device, ev->stream, ev->subkind };
    cc->n++;
    return 0;
}

/* The threads' names as defined by the file's end. */
static int name_correlated(void *arg, prof_reader *rd)
{
    correlated *k = arg;
    for (size_t i = 0; i < k->cc->n; i++) {
        q_cached *e = &k->cc->e[i];
        const char *tn = prof_reader_thread_name(rd, e->thread);
        if (tn && (e->thread_name = intern(k->r, Q_THREAD_KEY | e->thread, tn)) == Q_NONE)
            return -1;
    }
    return 0;
}

prof_err q_rank_correlated(query_db *q, q_rank *r, prof_event_type type, prof_error *err)
{
    q_corr_cache *cc = &r->corr[type - PROF_EV_GPU_KERNEL];
    if (cc->built)
        return PROF_OK;
    cc->n = 0;
    correlated k = { r, cc, type };
    prof_err e = q_read_all(q, r, 0, UINT64_MAX, keep_correlated, name_correlated, &k, err);
    if (e != PROF_OK)
        return e;
    if (cc->n)
        qsort(cc->e, cc->n, sizeof *cc->e, by_correlation);
    cc->built = 1;
    return PROF_OK;
}

const q_cached *q_correlated(const q_rank *r, prof_event_type type, uint64_t correlation,
                             size_t *count)
{
    const q_corr_cache *cc = &r->corr[type - PROF_EV_GPU_KERNEL];
    size_t lo = 0, hi = cc->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cc->e[mid].correlation < correlation)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < cc->n && cc->e[end].correlation == correlation)
        end++;
    *count = end - lo;
    return *count ? cc->e + lo : NULL;
}

const q_launch *q_launch_of(const q_rank *r, uint64_t correlation)
{
    const uint32_t *i = r->joined ? hmap_find(&r->launch_at, correlation) : NULL;
    return i ? &r->launches[*i] : NULL;
}

void q_rank_free(q_rank *r)
{
    free(r->path);
    free(r->label);
    cJSON_Delete(r->meta);
    free(r->steps.s);
    for (size_t i = 0; i < r->nthreads; i++)
        free(r->threads[i].name);
    free(r->threads);
    hmap_free(&r->thread_at);
    free(r->max_end);
    free(r->launches);
    hmap_free(&r->launch_at);
    for (size_t i = 0; i < r->nnames; i++)
        free(r->names[i]);
    free(r->names);
    hmap_free(&r->name_at);
    cJSON_Delete(r->report);
    for (size_t i = 0; i < Q_CORRELATED; i++)
        free(r->corr[i].e);
}
