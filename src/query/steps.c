/* steps.c - where a rank's steps are, without reading its whole file: a
 * query of a few steps of a long run must cost what those steps cost.
 *
 * A step is a record of its thread, written as the step ends, in a block
 * whose time span holds the step's: a read through the window [t, t]
 * (prof_reader_set_window) meets the record of every step around t, and
 * the others of the few blocks it reads. Step numbers grow with time (the
 * recorder numbers them as they close; an importer in trace order), so
 * the first step numbered n or more is found by searching time: each read
 * at t brackets n between the steps it met, and the next t is interpolated
 * between them, steps being of about one length. A run with steps out of
 * order, gaps the search cannot see across, or no footer to say where time
 * ends (a cut-short file) is indexed whole instead (index.c).
 *
 * Before a window is streamed, it is read once (q_window_pass) for the
 * steps around its rows and for how far the events starting in it reach:
 * a region that starts in the window is read with all its children. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "query/query_int.h"
#include "util/vec.h"

#define PROBES_MAX 48 /* reads of one search before the file is indexed whole */

static int step_by_start(const void *a, const void *b)
{
    const q_step *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->number < y->number ? -1 : x->number > y->number;
}

static uint64_t end_of(uint64_t start, uint64_t dur)
{
    return start + dur < start ? UINT64_MAX : start + dur;
}

typedef struct window_pass {
    q_steps *steps;
    uint64_t from, to, far;
} window_pass;

static int window_event(void *arg, const prof_event *ev)
{
    window_pass *w = arg;
    if (ev->type == PROF_EV_THREAD || ev->type == PROF_EV_ATTR)
        return 0;
    uint64_t end = end_of(ev->start_ns, ev->dur_ns);
    if (ev->start_ns >= w->from && ev->start_ns <= w->to && end > w->far)
        w->far = end;
    if (ev->type != PROF_EV_STEP)
        return 0;
    q_steps *s = w->steps;
    if (vec_grow(&s->s, &s->cap, s->n, sizeof *s->s) < 0)
        return -1;
    s->s[s->n++] = (q_step){ ev->value, ev->start_ns, ev->dur_ns, ev->flags };
    return 0;
}

prof_err q_window_pass(query_db *q, q_rank *r, uint64_t from, uint64_t to, q_steps *steps,
                       uint64_t *reach, prof_error *err)
{
    window_pass w = { steps, from, to, to };
    prof_err e = q_read_all(q, r, from, to, window_event, NULL, &w, err);
    if (e != PROF_OK)
        return e;
    if (steps->n)
        qsort(steps->s, steps->n, sizeof *steps->s, step_by_start);
    size_t k = 0; /* a step met twice (two reads) is one */
    for (size_t i = 0; i < steps->n; i++)
        if (k == 0 || step_by_start(&steps->s[k - 1], &steps->s[i]) != 0)
            steps->s[k++] = steps->s[i];
    steps->n = k;
    if (reach)
        *reach = w.far;
    return PROF_OK;
}

/* Whether the numbers of the steps met grow with their time. */
static int in_order(const q_steps *seen)
{
    for (size_t i = 1; i < seen->n; i++)
        if (seen->s[i].number <= seen->s[i - 1].number)
            return 0;
    return 1;
}

/* The first step of seen numbered n or more. */
static size_t first_from(const q_steps *seen, uint64_t n)
{
    size_t lo = 0, hi = seen->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (seen->s[mid].number < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum { FOUND, NO_STEP, UNKNOWN };

/* Searches for the first step numbered n or more, reading around times
 * in [first, last]: FOUND with *at its index in seen (numbered n, or with
 * the step before it in seen, or the file's first), NO_STEP, or UNKNOWN
 * when the search cannot tell (the caller indexes the file). */
static int search(query_db *q, q_rank *r, q_steps *seen, uint64_t first, uint64_t last,
                  uint64_t n, size_t *at, prof_err *e, prof_error *err)
{
    /* Where to read next when no step brackets n on a side: a read that
     * met no step moves it (steps begin after a stretch without any, and
     * may end before the file's end). It steers the search only: what it
     * concludes rests on steps met. */
    uint64_t left = first, right = last;
    for (int probes = 0;; probes++) {
        if (!in_order(seen))
            return UNKNOWN;
        size_t i = first_from(seen, n);
        const q_step *hi = i < seen->n ? &seen->s[i] : NULL, *lo = i > 0 ? &seen->s[i - 1] : NULL;
        uint64_t lo_t = lo ? end_of(lo->start_ns, lo->dur_ns) : left;
        uint64_t hi_t = hi ? hi->start_ns : right;
        if (hi && (hi->number == n || (lo && lo_t >= hi_t) || (!lo && hi_t <= first))) {
            *at = i;
            return FOUND;
        }
        if (!hi && lo && lo_t >= last)
            return NO_STEP;
        if (probes == PROBES_MAX || hi_t <= lo_t)
            return UNKNOWN;
        uint64_t t = lo_t + (hi_t - lo_t) / 2;
        if (lo && hi) { /* steps of about one length: interpolated */
            double frac = ((double)(n - lo->number) - 0.5) / (double)(hi->number - lo->number);
            uint64_t guess = lo_t + (uint64_t)(frac * (double)(hi_t - lo_t));
            if (guess > lo_t && guess < hi_t)
                t = guess;
        }
        size_t before = seen->n;
        if ((*e = q_window_pass(q, r, t, t, seen, NULL, err)) != PROF_OK)
            return UNKNOWN;
        if (seen->n > before)
            continue;
        if (lo && hi) /* no step between two that bracket n: cannot tell where */
            return UNKNOWN;
        if (!lo)
            left = t + 1;
        else
            right = t;
    }
}

/* The span of the steps lo..hi from the index. */
static void span_indexed(const q_rank *r, uint64_t lo, uint64_t hi, uint64_t *from,
                         uint64_t *to, int *none)
{
    uint64_t a = UINT64_MAX, b = 0;
    for (size_t i = 0; i < r->steps.n; i++) {
        const q_step *s = &r->steps.s[i];
        if (s->number < lo || s->number > hi)
            continue;
        if (s->start_ns < a)
            a = s->start_ns;
        if (end_of(s->start_ns, s->dur_ns) > b)
            b = end_of(s->start_ns, s->dur_ns);
    }
    *none = a == UINT64_MAX;
    *from = a;
    *to = b;
}

/* The file's time span from its footer; -1 when it has none. */
static int file_span(query_db *q, q_rank *r, uint64_t *first, uint64_t *last)
{
    prof_reader *rd;
    if (q_reader_open(q, r, &rd, NULL) != PROF_OK)
        return -1;
    int got = pf_reader_span(rd, first, last);
    prof_reader_close(rd);
    return got;
}

/* The span of the steps lo..hi found by searching: FOUND, NO_STEP (none
 * of them) or UNKNOWN. */
static int span_searched(query_db *q, q_rank *r, uint64_t lo, uint64_t hi, uint64_t *from,
                         uint64_t *to, prof_err *e, prof_error *err)
{
    uint64_t first, last;
    if (file_span(q, r, &first, &last) < 0)
        return UNKNOWN;
    q_steps seen = { NULL, 0, 0 };
    size_t a, b;
    int got = search(q, r, &seen, first, last, lo, &a, e, err);
    if (got == FOUND && seen.s[a].number > hi)
        got = NO_STEP;
    if (got == FOUND) {
        *from = seen.s[a].start_ns;
        *to = UINT64_MAX;
        if (hi != UINT64_MAX) {
            int got_hi = search(q, r, &seen, first, last, hi, &b, e, err);
            if (got_hi == NO_STEP)
                *to = last; /* every step from lo on */
            else if (got_hi == FOUND && seen.s[b].number == hi)
                *to = end_of(seen.s[b].start_ns, seen.s[b].dur_ns);
            else if (got_hi == FOUND && b > 0)
                *to = end_of(seen.s[b - 1].start_ns, seen.s[b - 1].dur_ns);
            else
                got = UNKNOWN;
        }
    }
    free(seen.s);
    return *e == PROF_OK ? got : UNKNOWN;
}

prof_err q_steps_span(query_db *q, q_rank *r, uint64_t lo, uint64_t hi, uint64_t *from,
                      uint64_t *to, int *none, prof_error *err)
{
    prof_err e = PROF_OK;
    int got = r->indexed ? UNKNOWN : span_searched(q, r, lo, hi, from, to, &e, err);
    if (e != PROF_OK)
        return e;
    if (got != UNKNOWN) {
        *none = got == NO_STEP;
        return PROF_OK;
    }
    e = q_rank_index(q, r, err);
    if (e == PROF_OK)
        span_indexed(r, lo, hi, from, to, none);
    return e;
}
