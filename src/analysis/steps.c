/* steps.c - step-time statistics and the rules on them (formats/rules.md
 * §2.4, §4.7, §4.9): the summary distribution, outlier steps, and work per
 * step across ranks (the straggler rule when collectives cannot be
 * matched, straggler.c). The slowdown over the run is slowdown.c's. */
#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

static int step_used(const model_step *st, int any_complete)
{
    return !any_complete || !(st->flags & PROF_STEP_INCOMPLETE);
}

static int is_outlier(const step_stats *s, double d)
{
    return d > 1.5 * s->median && d > s->median + 5.0 * s->sigma;
}

/* Median and MAD outlier test over every used step but the first, at
 * position first of s (s->n: the first step was not kept); work holds
 * s->n values and is overwritten. */
static int find_outliers(const profile_model *m, step_stats *s, double *work, size_t first)
{
    size_t k = 0;
    if (!(s->outlier = calloc(m->nsteps ? m->nsteps : 1, 1)) ||
        !(s->outliers = malloc((s->n ? s->n : 1) * sizeof *s->outliers)))
        return -1;
    for (size_t i = 0; i < s->n; i++)
        if (i != first)
            work[k++] = s->dur[i];
    /* the spread is the run's own: the MAD's, or the interquartile range's
     * where the slow steps are so many (a quarter or more) that they are a
     * second mode of the run, not outliers from it */
    s->median = stats_quantile_select(work, k, 0.5);
    double iqr = k ? stats_quantile_select(work, k, 0.75) - stats_quantile_select(work, k, 0.25)
                   : 0.0;
    s->sigma = k ? fmax(1.4826 * stats_mad(work, k, s->median, work), iqr / 1.349) : 0.0;
    for (size_t i = 0; i < s->n && k >= 3; i++) {
        const model_step *st = &m->steps[s->index[i]];
        if (i != first && is_outlier(s, s->dur[i])) {
            s->outlier[s->index[i]] = 1;
            s->outliers[s->nlisted++] = (model_long_step){ st->number, st->start_ns, st->dur_ns };
            s->excess += s->dur[i] - s->median;
        }
    }
    s->noutliers = s->nlisted;
    return 0;
}

/* The position in s of the profile's first used step, which the test
 * leaves out: the first kept one, unless the model thinned it away. */
static size_t first_step_at(const profile_model *m, const step_stats *s,
                            const model_step_durations *d)
{
    if (!m->step_thinning || s->n == 0)
        return 0;
    const model_step *st = &m->steps[s->index[0]];
    return st->number == d->first_number && st->start_ns == d->first_start ? 0 : s->n;
}

static int is_first(const model_step_durations *d, const model_long_step *x)
{
    return x->number == d->first_number && x->start_ns == d->first_start;
}

static int by_number(const void *pa, const void *pb)
{
    const model_long_step *a = pa, *b = pb;
    if (a->number != b->number)
        return a->number < b->number ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The longest steps of the profile (model_step_durations.longest) but
 * the first, into v (room for d->nlongest); their number. */
static size_t longest_but_first(const model_step_durations *d, model_long_step *v)
{
    size_t n = 0;
    int first_left = 0;
    for (size_t i = 0; i < d->nlongest; i++) {
        if (!first_left && is_first(d, &d->longest[i]))
            first_left = 1;
        else
            v[n++] = d->longest[i];
    }
    return n;
}

/* Over a thinned model the test's median and spread come from the kept
 * steps, but the outliers themselves from the longest steps of the whole
 * profile, which hold every outlier unless even the shortest of them is
 * one: then the kept steps' outliers estimate their number and excess,
 * scaled, and the worst is still the profile's longest. The first step is
 * left out, as above. */
static int outliers_of_profile(const model_step_durations *d, step_stats *s)
{
    if (s->n < 4 || d->nlongest == 0)
        return 0;
    model_long_step *v = malloc(d->nlongest * sizeof *v);
    if (!v)
        return -1;
    size_t n = longest_but_first(d, v), lowest = 0;
    for (size_t i = 1; i < d->nlongest; i++)
        if (d->longest[i].dur_ns < d->longest[lowest].dur_ns)
            lowest = i;
    qsort(v, n, sizeof *v, by_number);
    if (d->nlongest < d->n && is_outlier(s, (double)d->longest[lowest].dur_ns)) {
        s->outliers_estimated = 1;
        s->noutliers = (size_t)llround((double)s->noutliers * s->scale);
        s->excess *= s->scale;
        for (size_t i = 0; i < n; i++) /* the first of equals, in step order */
            if (i == 0 || v[i].dur_ns > s->worst.dur_ns)
                s->worst = v[i];
        free(v);
        return 0;
    }
    size_t k = 0;
    s->excess = 0;
    for (size_t i = 0; i < n; i++)
        if (is_outlier(s, (double)v[i].dur_ns)) {
            s->excess += (double)v[i].dur_ns - s->median;
            v[k++] = v[i];
        }
    free(s->outliers);
    s->outliers = v;
    s->nlisted = s->noutliers = k;
    return 0;
}

/* The worst of the listed outliers: the longest, the first of equals. */
static void worst_listed(step_stats *s)
{
    for (size_t i = 0; i < s->nlisted; i++)
        if (i == 0 || s->outliers[i].dur_ns > s->worst.dur_ns)
            s->worst = s->outliers[i];
}

/* Mean, spread and order statistics of the used steps' durations, by
 * selection on work (s->n values, overwritten) rather than a sort. */
static void duration_summary(step_stats *s, double *work)
{
    s->min = s->max = s->dur[0];
    for (size_t i = 0; i < s->n; i++) {
        work[i] = s->dur[i];
        s->mean += s->dur[i];
        s->total += s->dur[i];
        s->min = s->dur[i] < s->min ? s->dur[i] : s->min;
        s->max = s->dur[i] > s->max ? s->dur[i] : s->max;
    }
    s->mean /= (double)s->n;
    double ss = 0;
    for (size_t i = 0; i < s->n; i++)
        ss += (s->dur[i] - s->mean) * (s->dur[i] - s->mean);
    s->sd = s->n > 1 ? sqrt(ss / (double)(s->n - 1)) : 0.0;
    s->p50 = stats_quantile_select(work, s->n, 0.5);
    s->p95 = stats_quantile_select(work, s->n, 0.95);
}

/* Over a thinned model the figures that can be exact are taken from every
 * step's totals: count, mean, spread, extremes; the percentiles from the
 * sketch of every step (within SKETCH_ALPHA). The outlier test and
 * everything per step stay on the kept steps, a pseudo-random sample. */
static void duration_totals(const profile_model *m, int any_complete, step_stats *s)
{
    const model_step_durations *d =
        any_complete ? &m->step_totals.complete_dur : &m->step_totals.all_dur;
    s->count = (size_t)d->n;
    s->scale = s->n ? (double)s->count / (double)s->n : 1.0;
    s->mean = d->mean;
    s->total = d->mean * (double)d->n;
    s->sd = d->n > 1 ? sqrt(d->m2 / (double)(d->n - 1)) : 0.0;
    s->min = (double)d->min;
    s->max = (double)d->max;
    s->p50 = sketch_quantile(&d->sketch, 0.5);
    s->p95 = sketch_quantile(&d->sketch, 0.95);
}

int steps_analyze(const profile_model *m, step_stats *s)
{
    *s = (step_stats){ 0 };
    s->scale = 1.0;
    int any_complete = 0;
    for (size_t i = 0; i < m->nsteps; i++)
        any_complete |= !(m->steps[i].flags & PROF_STEP_INCOMPLETE);
    if (m->step_thinning) /* some complete step may not be kept */
        any_complete = m->step_totals.complete > 0;
    size_t cap = m->nsteps ? m->nsteps : 1;
    s->dur = malloc(cap * sizeof *s->dur);
    s->index = malloc(cap * sizeof *s->index);
    double *work = malloc(cap * sizeof *work);
    if (!s->dur || !s->index || !work)
        goto fail;
    for (size_t i = 0; i < m->nsteps; i++) {
        if (!step_used(&m->steps[i], any_complete))
            continue;
        s->dur[s->n] = (double)m->steps[i].dur_ns;
        s->index[s->n++] = (uint32_t)i; /* nsteps < MODEL_NONE (series.c) */
    }
    if (s->n)
        duration_summary(s, work);
    s->count = s->n;
    if (m->step_thinning)
        duration_totals(m, any_complete, s);
    const model_step_durations *d =
        any_complete ? &m->step_totals.complete_dur : &m->step_totals.all_dur;
    if (find_outliers(m, s, work, first_step_at(m, s, d)) < 0)
        goto fail;
    if (m->step_thinning && outliers_of_profile(d, s) < 0)
        goto fail;
    if (!s->outliers_estimated)
        worst_listed(s);
    free(work);
    return 0;
fail:
    free(work);
    step_stats_free(s);
    return -1;
}

void step_stats_free(step_stats *s)
{
    free(s->dur);
    free(s->index);
    free(s->outlier);
    free(s->outliers);
    *s = (step_stats){ 0 };
}

/* The listed outlier steps as episodes, into w (room for s->nlisted):
 * outliers at most EPISODE_GAP steps apart are one (a burst of a busy
 * machine has a step or two under the threshold in it); their number. */
#define EPISODE_GAP 3
static size_t outlier_episodes(const step_stats *s, time_window *w)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nlisted; i++) {
        const model_long_step *o = &s->outliers[i];
        uint64_t end = o->start_ns + o->dur_ns;
        if (n > 0 && o->number <= s->outliers[i - 1].number + EPISODE_GAP)
            w[n - 1].to = end > w[n - 1].to ? end : w[n - 1].to;
        else
            w[n++] = (time_window){ o->start_ns, end };
    }
    return n;
}

/* Whether every operation ran slower alike in the outlier steps than
 * outside them (rules.md §4.7): then the whole process was slowed, and the
 * outliers go to a note (c->busy_outliers) instead of a finding. */
static int outliers_alike(analysis_ctx *c)
{
    const step_stats *s = &c->steps;
    time_window *w = xcalloc(c, s->nlisted ? s->nlisted : 1, sizeof *w);
    op_growth *g = NULL;
    if (!w)
        return 0;
    size_t k = outlier_episodes(s, w), n = ops_growth(c, w, k, NULL, 0, &g);
    double mean = 0;
    for (size_t i = 0; i < s->nlisted; i++)
        mean += (double)s->outliers[i].dur_ns / (double)s->nlisted;
    int alike = n != SIZE_MAX && s->median > 0 && ops_grew_alike(g, n, mean / s->median);
    if (alike) {
        c->busy_outliers.count = (double)s->noutliers;
        c->busy_outliers.episodes = (double)k;
        c->busy_outliers.step_ratio = mean / s->median;
        c->busy_outliers.ops_ratio = ops_median_growth(g, n);
    }
    free(g);
    free(w);
    return alike;
}

void rule_step_outliers(analysis_ctx *c)
{
    const step_stats *s = &c->steps;
    if (s->noutliers == 0 || s->total <= 0 || outliers_alike(c))
        return;
    const model_long_step *worst = &s->worst;
    double share = s->excess / s->total;
    const char *about = s->outliers_estimated ? "about " : "";
    char title[160], rec[600], a[32], b[32];
    fmt_text(title, sizeof title, "%s%zu step%s took over 1.5x the median step time", about,
             s->noutliers, s->noutliers == 1 ? "" : "s");
    fmt_text(rec, sizeof rec,
             "%s%zu step%s took far longer than the median %s (worst: step %.0f, %s): look at "
             "what runs only then - checkpoint saving, evaluation, garbage collection, a new "
             "data shard, recompilation on a new input shape.",
             about, s->noutliers, s->noutliers == 1 ? "" : "s", fmt_duration(a, s->median),
             (double)worst->number, fmt_duration(b, (double)worst->dur_ns));
    cJSON *e = finding_add(c, "step_outliers", severity_by(share, 0.10, 0.02), "steps",
                           fmin(1.0, share), title, rec);
    jnum(c, e, RK_COUNT, (double)s->noutliers);
    if (s->outliers_estimated)
        jbool(c, e, "estimated", 1);
    cJSON *list = jarr(c, e, RK_STEPS);
    for (size_t i = 0; i < s->nlisted && i < 20; i++)
        jpush_num(c, list, (double)s->outliers[i].number);
    jnum(c, e, RK_MAX_NS, (double)worst->dur_ns);
    jnum(c, e, "median_ns", s->median);
    jnum(c, e, "excess_ns", s->excess);
    jnum(c, e, "excess_share", share);
}

/* COMM-kind self time per sampled step: the waiting that step time hides. */
double rank_step_basis(const profile_model *m, const step_stats *s)
{
    double sampled = sampled_steps(m);
    return sampled > 0 ? sampled : (double)s->n;
}

double rank_comm_per_step(const profile_model *m, const step_stats *s)
{
    double basis = rank_step_basis(m, s);
    return basis > 0 ? (double)m->kind_ns[PROF_KIND_COMM] / basis : 0.0;
}

double rank_work_per_step(const rank_summary *s)
{
    return s->step_mean - s->comm_per_step;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The straggler rule without collectives to match (rules.md §4.9). */
void rule_straggler_work(analysis_ctx *c)
{
    const rank_summary *per_rank = c->ranks;
    size_t n = c->nranks;
    if (n < 2)
        return;
    double *others = xcalloc(c, n, sizeof *others);
    if (!others)
        return;
    for (size_t r = 0; r < n; r++) {
        if (per_rank[r].steps_n == 0)
            continue;
        size_t k = 0;
        for (size_t q = 0; q < n; q++)
            if (q != r && per_rank[q].steps_n > 0)
                others[k++] = rank_work_per_step(&per_rank[q]);
        if (k == 0)
            continue;
        qsort(others, k, sizeof *others, cmp_double);
        double med = k % 2 ? others[k / 2] : (others[k / 2 - 1] + others[k / 2]) / 2.0;
        double mine = rank_work_per_step(&per_rank[r]);
        if (med <= 0 || mine / med < 1.10)
            continue;
        double ratio = mine / med;
        int rank = per_rank[r].rank;
        char title[160], rec[600], subject[32], a[32], b[32];
        fmt_text(subject, sizeof subject, "rank %d", rank);
        fmt_text(title, sizeof title, "rank %d is a straggler: %.2fx the work per step of the "
                 "other ranks", rank, ratio);
        fmt_text(rec, sizeof rec,
                 "Rank %d does %.2fx the work per step of the other ranks (%s against %s); the "
                 "others wait for it in every collective. Check its data shard (longer "
                 "sequences, heavier samples), its host (CPU contention, thermal throttling, a "
                 "slower GPU) and its input pipeline.",
                 rank, ratio, fmt_duration(a, mine), fmt_duration(b, med));
        cJSON *e = finding_add(c, "straggler", severity_by(ratio, 1.5, 1.2), subject,
                               (ratio - 1.0) / ratio, title, rec);
        jnum(c, e, RK_RANK, rank);
        jstr(c, e, RK_PATH, per_rank[r].path);
        jstr(c, e, RK_METHOD, "work");
        jnum(c, e, RK_WORK_NS_PER_STEP, mine);
        jnum(c, e, "others_median_ns_per_step", med);
        jnum(c, e, "ratio", ratio);
        jnum(c, e, RK_MEAN_STEP_NS, per_rank[r].step_mean);
    }
    free(others);
}
