/* straggler.c - which rank the others wait for (formats/rules.md §4.9).
 * The collectives of every rank are matched by order - the n-th
 * communication kernel of each rank's k-th communication stream, or else
 * the n-th outermost COMM region - and in each the rank that arrives last
 * is the one the others wait for. Ranks on one host share a clock, so
 * arrivals are their starts; ranks on different hosts do not, and a
 * collective ends on every rank at about the same moment, so there a
 * rank's wait is how much longer its part lasted than the shortest part.
 * Without enough matched collectives, the rule compares work per step
 * instead (steps.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

#define MIN_COLLECTIVES 3   /* fewer matched: "most" means nothing       */
#define STRAGGLER_SHARE 0.05 /* the others' wait, as a share of step time */

/* Where the ranks ran, as far as the profiles say: 1 every rank names the
 * same host (one clock), 0 they name different ones, -1 some names none
 * (an imported trace may not say), which is treated as different hosts but
 * not called that. */
static int one_host(const analysis_ctx *c)
{
    int same = 1;
    for (size_t i = 0; i < c->nranks; i++) {
        if (!*c->ranks[i].host)
            return -1;
        same &= strcmp(c->ranks[i].host, c->ranks[0].host) == 0;
    }
    return same;
}

/* One matched collective: each rank's part in parts[r]. */
static void match_one(analysis_ctx *c, const model_collective *const *parts, int by_start)
{
    collective_match *x = &c->coll;
    size_t n = c->nranks, last = 0;
    for (size_t r = 1; r < n; r++)
        if (by_start ? parts[r]->start_ns > parts[last]->start_ns
                     : parts[r]->dur_ns < parts[last]->dur_ns)
            last = r;
    double others = 0;
    for (size_t r = 0; r < n; r++) {
        double w = by_start ? (double)(parts[last]->start_ns - parts[r]->start_ns)
                            : (double)(parts[r]->dur_ns - parts[last]->dur_ns);
        rank_waits *k = &x->ranks[r];
        k->wait_ns += w;
        others += r == last ? 0.0 : w;
        uint64_t end = parts[r]->start_ns + parts[r]->dur_ns;
        if (!k->collectives || parts[r]->start_ns < k->first_ns)
            k->first_ns = parts[r]->start_ns;
        if (end > k->last_ns)
            k->last_ns = end;
        k->collectives++;
    }
    x->ranks[last].last++;
    x->ranks[last].caused_ns += others / (double)(n - 1);
    x->matched++;
    if (x->ends && x->nends < CLOCK_SAMPLES) {
        uint64_t end0 = parts[0]->start_ns + parts[0]->dur_ns;
        for (size_t r = 0; r < n; r++) {
            uint64_t end = parts[r]->start_ns + parts[r]->dur_ns;
            x->ends[r * CLOCK_SAMPLES + x->nends] = end >= end0 ? (int64_t)(end - end0)
                                                               : -(int64_t)(end0 - end);
        }
        x->nends++;
    }
}

/* Matches the i-th record of every rank's range (first[r], count), read
 * back a chunk per rank at a time. 0, or -1 when a read failed. */
static int match_ranges(analysis_ctx *c, collective_cursor *cur, const uint64_t *first,
                        size_t count, const model_collective **parts, int by_start)
{
    size_t n = c->nranks;
    for (size_t r = 0; r < n; r++)
        collective_cursor_init(&cur[r], c->ranks[r].store, first[r], count);
    for (size_t i = 0; i < count; i++) {
        for (size_t r = 0; r < n; r++)
            if (!(parts[r] = collective_cursor_next(&cur[r])))
                return -1;
        match_one(c, parts, by_start);
    }
    return 0;
}

/* Matches the n-th kernel of each rank's k-th communication stream (its
 * runs of one device and stream, by their first kernel's start). */
static int match_kernels(analysis_ctx *c, collective_cursor *cur, uint64_t *first,
                         const model_collective **parts, int by_start)
{
    size_t n = c->nranks, streams = SIZE_MAX;
    for (size_t r = 0; r < n; r++)
        if (c->ranks[r].kernels.nruns < streams)
            streams = c->ranks[r].kernels.nruns;
    for (size_t k = 0; k < streams; k++) {
        size_t count = SIZE_MAX;
        for (size_t r = 0; r < n; r++) {
            const collective_list *l = &c->ranks[r].kernels;
            if (l->runs[k].n < count)
                count = l->runs[k].n;
            first[r] = l->at + l->runs[k].at;
        }
        if (match_ranges(c, cur, first, count, parts, by_start) != 0)
            return -1;
    }
    return 0;
}

static int match_regions(analysis_ctx *c, collective_cursor *cur, uint64_t *first,
                         const model_collective **parts, int by_start)
{
    size_t count = SIZE_MAX;
    for (size_t r = 0; r < c->nranks; r++) {
        if (c->ranks[r].regions.n < count)
            count = c->ranks[r].regions.n;
        first[r] = c->ranks[r].regions.at;
    }
    return match_ranges(c, cur, first, count, parts, by_start);
}

static void match_reset(analysis_ctx *c)
{
    memset(c->coll.ranks, 0, c->nranks * sizeof *c->coll.ranks);
    c->coll.matched = 0;
    c->coll.nends = 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place): the offset of a rank's clock
 * from the first rank's, robust to collectives whose ends straggle. */
static double median_offset(int64_t *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

int straggler_match(analysis_ctx *c)
{
    collective_match *x = &c->coll;
    size_t n = c->nranks;
    const model_collective **parts = xcalloc(c, n, sizeof *parts);
    collective_cursor *cur = xcalloc(c, n, sizeof *cur);
    uint64_t *first = xcalloc(c, n, sizeof *first);
    int rc = -1;
    if (!parts || !cur || !first || !(x->ranks = xcalloc(c, n, sizeof *x->ranks)))
        goto out;
    int hosts = one_host(c), by_start = hosts == 1;
    x->align = by_start ? "start" : "end";
    x->hosts_known = hosts >= 0;
    if (!by_start && !(x->ends = xcalloc(c, n, CLOCK_SAMPLES * sizeof *x->ends)))
        goto out;
    if (match_kernels(c, cur, first, parts, by_start) != 0)
        goto out;
    x->source = "kernels";
    if (x->matched < MIN_COLLECTIVES) {
        match_reset(c);
        if (match_regions(c, cur, first, parts, by_start) != 0)
            goto out;
        x->source = "regions";
    }
    if (x->matched < MIN_COLLECTIVES) {
        match_reset(c);
        x->source = NULL;
    }
    for (size_t r = 0; r < c->nranks; r++) {
        rank_waits *k = &x->ranks[r];
        double steps = (double)c->ranks[r].steps_count * c->ranks[r].step_mean;
        k->basis_ns = steps > 0 ? steps : (double)(k->last_ns - k->first_ns);
        if (x->source && x->ends)
            k->clock_offset_ns = median_offset(&x->ends[r * CLOCK_SAMPLES], x->nends);
    }
    rc = c->ok ? 0 : -1;
out:
    free(parts);
    free(cur);
    free(first);
    return rc;
}

static void collective_finding(analysis_ctx *c, size_t r)
{
    const collective_match *x = &c->coll;
    const rank_waits *k = &x->ranks[r];
    const rank_summary *st = &c->ranks[r];
    double share = k->basis_ns > 0 ? k->caused_ns / k->basis_ns : 0.0;
    size_t count = st->steps_count;
    double per_step = count ? k->caused_ns / (double)count : 0.0;
    int rank = st->rank;
    char title[200], rec[900], subject[32], a[32], b[32], d[32];
    fmt_text(subject, sizeof subject, "rank %d", rank);
    fmt_text(title, sizeof title, "rank %d is a straggler: the other ranks wait for it in %zu "
             "of %zu collectives", rank, k->last, x->matched);
    fmt_text(rec, sizeof rec,
             "Rank %d arrives last at %zu of %zu collectives; the other ranks wait for it %s "
             "in all (%s%s), %s of its %s (%s). Check its data shard (longer sequences, heavier "
             "samples), its host (CPU contention, thermal throttling, a slower GPU or link) "
             "and its input pipeline; compare its profile with a fast rank's (prof compare).",
             rank, k->last, x->matched, fmt_duration(a, k->caused_ns),
             count ? fmt_duration(b, per_step) : "",
             count ? " per step" : "no steps", fmt_pct(d, sizeof d, share),
             count ? "step time" : "time between its first and last collective",
             strcmp(x->align, "start") == 0 ? "arrivals compared on one host's clock"
             : x->hosts_known ? "ranks on different hosts: waits from how much longer each "
                                "rank's part of a collective lasts"
                              : "the profiles do not say which host each rank ran on, so their "
                                "clocks are not compared: waits from how much longer each rank's "
                                "part of a collective lasts");
    cJSON *e = finding_add(c, "straggler", severity_by(share, 0.30, 0.15), subject,
                           share > 1 ? 1.0 : share, title, rec);
    jnum(c, e, RK_RANK, rank);
    jstr(c, e, RK_PATH, st->path);
    jstr(c, e, RK_METHOD, "collectives");
    jstr(c, e, "source", x->source);
    jstr(c, e, "alignment", x->align);
    jnum(c, e, RK_COLLECTIVES, (double)x->matched);
    jnum(c, e, RK_LAST_ARRIVALS, (double)k->last);
    jnum(c, e, RK_CAUSED_WAIT_NS, k->caused_ns);
    jnum(c, e, RK_CAUSED_WAIT_SHARE, share);
    jnum(c, e, RK_BASIS_NS, k->basis_ns);
    jnum(c, e, RK_MEAN_STEP_NS, st->step_mean);
}

void rule_straggler(analysis_ctx *c)
{
    if (c->nranks < 2)
        return;
    if (!c->coll.source) {
        rule_straggler_work(c);
        return;
    }
    for (size_t r = 0; r < c->nranks; r++) {
        const rank_waits *k = &c->coll.ranks[r];
        double share = k->basis_ns > 0 ? k->caused_ns / k->basis_ns : 0.0;
        if (2 * k->last > c->coll.matched && share >= STRAGGLER_SHARE)
            collective_finding(c, r);
    }
}

void straggler_rank_fields(analysis_ctx *c, cJSON *o, size_t r)
{
    const collective_match *x = &c->coll;
    if (!x->source || !x->ranks)
        return;
    const rank_waits *k = &x->ranks[r];
    jnum(c, o, RK_COLLECTIVES, (double)k->collectives);
    jnum(c, o, RK_LAST_ARRIVALS, (double)k->last);
    jnum(c, o, RK_WAIT_NS, k->wait_ns);
    jnum(c, o, RK_CAUSED_WAIT_NS, k->caused_ns);
    jnum(c, o, RK_CAUSED_WAIT_SHARE, k->basis_ns > 0 ? k->caused_ns / k->basis_ns : 0.0);
    if (x->ends)
        jnum(c, o, RK_CLOCK_OFFSET_NS, k->clock_offset_ns);
}

/* Ranks whose clocks were aligned by the ends of their collectives: how,
 * and the largest offset found. */
void straggler_clock_note(analysis_ctx *c, char *buf, size_t size)
{
    const collective_match *x = &c->coll;
    buf[0] = '\0';
    if (!x->source || !x->ends)
        return;
    double most = 0;
    size_t at = 0;
    for (size_t r = 0; r < c->nranks; r++)
        if (fabs(x->ranks[r].clock_offset_ns) > fabs(most)) {
            most = x->ranks[r].clock_offset_ns;
            at = r;
        }
    char d[32];
    fmt_text(buf, size, "%s: their clocks were aligned by the ends of %zu collectives, which "
             "end on every rank at once; the largest offset from rank %d's clock is rank %d's, "
             "%s%s (each rank's in ranks[].clock_offset_ns)",
             x->hosts_known ? "the ranks ran on different hosts"
                            : "the profiles do not say which host each rank ran on",
             x->nends, c->ranks[0].rank, c->ranks[at].rank, most < 0 ? "-" : "",
             fmt_duration(d, fabs(most)));
}
