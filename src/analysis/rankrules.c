/* rankrules.c - the findings that set ranks beside one another (formats/
 * rules.md §4.12, §4.13): the slowest rank against the fastest, with the
 * operations it spends its extra time in, and the ranks whose figures stand
 * out from the rest. Both read the ranks' summaries only (ranks.h), so
 * they hold for summaries merged from other machines as for profiles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "analysis/report_keys.h"
#include "analysis/stats.h"

#define SPREAD_RATIO 1.10   /* slowest over fastest work per step, to say so   */
#define SPREAD_SHOWN 3      /* differences named in the finding                */
#define SPREAD_PART 0.05    /* of the gap in work, for a difference to count   */
#define OUTLIER_RANKS 4     /* ranks with a figure, for a median to mean much  */
#define OUTLIER_Z 3.5       /* robust z-score: deviations over 1.4826 MAD       */
#define OUTLIER_LISTED 16   /* ranks listed in a finding's evidence            */

/* ---- rank_spread -------------------------------------------------------------------- */

/* When no operation kept in the summaries accounts for the gap: spread
 * over many, or in time outside every region. */
#define NO_GAP "; no one of its heaviest operations accounts for the difference"

/* One operation's time per step on the slowest rank against the fastest. */
typedef struct op_gap {
    const char *name;
    int gpu, at_least;
    double slow_ns, fast_ns;
} op_gap;

/* The time per step on a summary's list of name (kernels when gpu); when it
 * is not there, 0 if the list holds every one of that class it could, else
 * at most the list's smallest of that class (*bound set). */
static double op_time(const rank_summary *s, const char *name, int gpu, int *bound)
{
    double least = INFINITY;
    size_t count = 0;
    *bound = 0;
    for (size_t i = 0; i < s->nops; i++) {
        const rank_op *o = &s->ops[i];
        if (o->gpu != gpu)
            continue;
        if (strcmp(o->name, name) == 0)
            return o->ns_per_step;
        least = o->ns_per_step < least ? o->ns_per_step : least;
        count++;
    }
    *bound = count == RANK_OPS;
    return *bound ? least : 0.0;
}

static int by_gap_desc(const void *a, const void *b)
{
    const op_gap *x = a, *y = b;
    double dx = x->slow_ns - x->fast_ns, dy = y->slow_ns - y->fast_ns;
    if (dx != dy)
        return dx < dy ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* The operations the slow rank spends more time in per step than the fast
 * one, by at least SPREAD_PART of the gap in work per step, most first;
 * their number (at most 2 x RANK_OPS). */
static size_t op_gaps(const rank_summary *slow, const rank_summary *fast, double gap,
                      op_gap *out)
{
    size_t n = 0;
    for (size_t i = 0; i < slow->nops && n < 2 * RANK_OPS; i++) {
        const rank_op *o = &slow->ops[i];
        int bound;
        double f = op_time(fast, o->name, o->gpu, &bound);
        if (o->ns_per_step - f >= SPREAD_PART * gap)
            out[n++] = (op_gap){ o->name, o->gpu, bound, o->ns_per_step, f };
    }
    qsort(out, n, sizeof *out, by_gap_desc);
    return n;
}

/* "kernel gemm_bwd +240 us per step (1.6 ms against 1.4 ms)", the gaps shown. */
static void gaps_text(char *buf, size_t size, const op_gap *g, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < size; i++) {
        char d[32], a[32], b[32], item[400];
        fmt_text(item, sizeof item, "%s%s %s +%s%s per step (%s against %s%s)",
                 i ? "; " : "", g[i].gpu ? "kernel" : "operation", g[i].name,
                 g[i].at_least ? "at least " : "", fmt_duration(d, g[i].slow_ns - g[i].fast_ns),
                 fmt_duration(a, g[i].slow_ns), g[i].at_least ? "at most " : "",
                 fmt_duration(b, g[i].fast_ns));
        fmt_text(buf + at, size - at, "%s", item);
        at += strlen(buf + at);
    }
}

static void gaps_evidence(analysis_ctx *c, cJSON *e, const rank_summary *fast, double fast_work,
                          const op_gap *g, size_t n)
{
    jnum(c, e, "fastest_rank", fast->rank);
    jstr(c, e, "fastest_path", fast->path);
    jnum(c, e, "fastest_work_ns_per_step", fast_work);
    cJSON *arr = jarr(c, e, "differences");
    for (size_t i = 0; i < n; i++) {
        cJSON *o = jpush_obj(c, arr);
        jstr(c, o, RK_NAME, g[i].name);
        jbool(c, o, RK_GPU, g[i].gpu);
        jnum(c, o, "ns_per_step", g[i].slow_ns);
        jnum(c, o, "fastest_ns_per_step", g[i].fast_ns);
        jbool(c, o, "at_least", g[i].at_least);
    }
}

/* The straggler finding that names rank, if any. */
static cJSON *straggler_of(const analysis_ctx *c, int rank)
{
    cJSON *f;
    cJSON_ArrayForEach(f, c->bottlenecks) {
        const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_RULE));
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(f, RK_EVIDENCE);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(ev, RK_RANK);
        if (rule && strcmp(rule, "straggler") == 0 && cJSON_IsNumber(r) && r->valueint == rank)
            return f;
    }
    return NULL;
}

/* The straggler's finding says where it differs from the fastest rank. */
static void add_to_straggler(analysis_ctx *c, cJSON *f, const rank_summary *slow,
                             const rank_summary *fast, double ratio, const char *gaps)
{
    cJSON *rec = cJSON_GetObjectItemCaseSensitive(f, RK_RECOMMENDATION);
    const char *was = cJSON_GetStringValue(rec);
    char add[1400];
    if (!was)
        return;
    fmt_text(add, sizeof add, " Against rank %d, the fastest, it does %.2fx the work per "
             "step%s%s (prof compare '%s' '%s').", fast->rank, ratio,
             gaps[0] ? "; it spends more in " : NO_GAP, gaps, slow->path, fast->path);
    size_t len = strlen(was) + strlen(add) + 1;
    char *text = malloc(len);
    cJSON *s = text ? cJSON_CreateString(strcat(strcpy(text, was), add)) : NULL;
    free(text);
    if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(f, RK_RECOMMENDATION, s)) {
        cJSON_Delete(s);
        c->ok = 0;
    }
}

void rule_rank_spread(analysis_ctx *c)
{
    size_t slow = SIZE_MAX, fast = SIZE_MAX;
    for (size_t i = 0; i < c->nranks; i++) {
        if (c->ranks[i].steps_n == 0)
            continue;
        double w = rank_work_per_step(&c->ranks[i]);
        if (slow == SIZE_MAX || w > rank_work_per_step(&c->ranks[slow]))
            slow = i;
        if (fast == SIZE_MAX || w < rank_work_per_step(&c->ranks[fast]))
            fast = i;
    }
    if (slow == fast)
        return;
    const rank_summary *s = &c->ranks[slow], *f = &c->ranks[fast];
    double ws = rank_work_per_step(s), wf = rank_work_per_step(f);
    if (!(wf > 0) || ws / wf < SPREAD_RATIO)
        return;
    double ratio = ws / wf;
    op_gap gaps[2 * RANK_OPS];
    size_t ngaps = op_gaps(s, f, ws - wf, gaps), shown = ngaps < SPREAD_SHOWN ? ngaps : SPREAD_SHOWN;
    char text[1200];
    gaps_text(text, sizeof text, gaps, shown);
    cJSON *straggler = straggler_of(c, s->rank), *e;
    if (straggler) {
        add_to_straggler(c, straggler, s, f, ratio, text);
        e = cJSON_GetObjectItemCaseSensitive(straggler, RK_EVIDENCE);
    } else {
        char title[300], rec[1800], subject[32], a[32], b[32];
        fmt_text(subject, sizeof subject, "rank %d", s->rank);
        fmt_text(title, sizeof title, "rank %d does %.2fx the work per step of rank %d%s%s",
                 s->rank, ratio, f->rank, shown ? ", most of the difference in " : "",
                 shown ? gaps[0].name : "");
        fmt_text(rec, sizeof rec,
                 "Rank %d, the slowest, does %s of work per step (mean step less communication) "
                 "against %s on rank %d, the fastest%s%s. Ranks that do unequal work make the "
                 "others wait at every collective: check their data shards (sequence lengths, "
                 "sample sizes), their hosts and GPUs, and compare them (prof compare '%s' "
                 "'%s').",
                 s->rank, fmt_duration(a, ws), fmt_duration(b, wf), f->rank,
                 shown ? "; it spends more in " : NO_GAP, text, s->path, f->path);
        e = finding_add(c, "rank_spread", severity_by(ratio, 1.5, 1.2), subject,
                        (ratio - 1.0) / ratio, title, rec);
        jnum(c, e, RK_RANK, s->rank);
        jstr(c, e, RK_PATH, s->path);
        jnum(c, e, RK_WORK_NS_PER_STEP, ws);
        jnum(c, e, "ratio", ratio);
    }
    gaps_evidence(c, e, f, wf, gaps, shown);
}

/* ---- rank_outlier ------------------------------------------------------------------- */

/* A figure of the ranks table the rule looks at: its value on rank i (NaN
 * when the rank has none), and how far above the median a rank must be
 * before it counts at all: a share of the median (relative) or of the
 * whole (a share's points). */
typedef struct rank_figure {
    const char *key, *label;
    double floor;
    int relative;
} rank_figure;

static const rank_figure figures[] = {
    { RK_MEAN_STEP_NS, "mean step time", 0.10, 1 },
    { RK_GPU_IDLE_SHARE, "GPU idle time", 0.10, 0 },
    { RK_COMM_EXPOSED_SHARE, "exposed communication", 0.10, 0 },
    { RK_MEMORY_PEAK_BYTES, "memory peak", 0.10, 1 },
};

static double figure_value(const analysis_ctx *c, size_t i, const rank_figure *f,
                           const char *memory)
{
    const rank_summary *s = &c->ranks[i];
    if (strcmp(f->key, RK_MEAN_STEP_NS) == 0)
        return s->steps_n ? s->step_mean : NAN;
    if (strcmp(f->key, RK_MEMORY_PEAK_BYTES) == 0) {
        const cJSON *p = memory ? cJSON_GetObjectItemCaseSensitive(s->peaks, memory) : NULL;
        return cJSON_IsNumber(p) ? p->valuedouble : NAN;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->row, f->key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *figure_text(char *buf, size_t size, const rank_figure *f, double v)
{
    if (strcmp(f->key, RK_MEMORY_PEAK_BYTES) == 0)
        return fmt_bytes(buf, v > 0 ? (uint64_t)v : 0);
    if (f->relative)
        return fmt_duration(buf, v);
    return fmt_pct(buf, size, v);
}

static void outlier_finding(analysis_ctx *c, const rank_figure *f, const char *memory,
                            valued *o, size_t n, size_t have, double median, double cut)
{
    qsort(o, n, sizeof *o, by_value_desc);
    const rank_summary *top = &c->ranks[o[0].index];
    double dev = o[0].value - median;
    double share = f->relative ? (o[0].value > 0 ? dev / o[0].value : 0.0) : dev;
    char title[300], rec[1400], subject[64], a[32], b[32], list[600] = "";
    size_t at = 0;
    for (size_t i = 0; i < n && i < 8; i++) {
        fmt_text(list + at, sizeof list - at, "%s%d", i ? ", " : "", c->ranks[o[i].index].rank);
        at += strlen(list + at);
    }
    figure_text(a, sizeof a, f, o[0].value);
    figure_text(b, sizeof b, f, median);
    fmt_text(subject, sizeof subject, "%s", f->key);
    if (n == 1)
        fmt_text(title, sizeof title, "rank %d stands out in %s: %s against a median of %s "
                 "over %zu ranks", top->rank, f->label, a, b, have);
    else
        fmt_text(title, sizeof title, "%zu ranks stand out in %s: rank %d at %s against a "
                 "median of %s over %zu ranks", n, f->label, top->rank, a, b, have);
    fmt_text(rec, sizeof rec,
             "Rank%s %s%s %s well above the other ranks' %s (median %s; rank %d: %s%s%s). "
             "Ranks of one job run the same code: a rank that differs points at its data "
             "shard, its host or its device. Look at %s alone (prof analyze --rank %d), and "
             "compare it with a typical rank (prof compare).",
             n > 1 ? "s" : "", list, n > 8 ? " and more" : "", n > 1 ? "are" : "is", f->label,
             b, top->rank, a, memory && strcmp(f->key, RK_MEMORY_PEAK_BYTES) == 0 ? ", " : "",
             memory && strcmp(f->key, RK_MEMORY_PEAK_BYTES) == 0 ? memory : "",
             n > 1 ? "the first" : "it", top->rank);
    cJSON *e = finding_add(c, "rank_outlier", severity_by(dev / (cut > 0 ? cut : 1), 5.0, 2.0),
                           subject, share > 1 ? 1.0 : share < 0 ? 0.0 : share, title, rec);
    jstr(c, e, "figure", f->key);
    if (memory && strcmp(f->key, RK_MEMORY_PEAK_BYTES) == 0)
        jstr(c, e, RK_MEMORY_PEAK_SERIES, memory);
    jnum(c, e, "median", median);
    jnum(c, e, "threshold", median + cut);
    jnum(c, e, "ranks_with_figure", (double)have);
    jnum(c, e, "ranks_flagged", (double)n);
    cJSON *arr = jarr(c, e, RK_RANKS);
    for (size_t i = 0; i < n && i < OUTLIER_LISTED; i++) {
        cJSON *r = jpush_obj(c, arr);
        jnum(c, r, RK_RANK, c->ranks[o[i].index].rank);
        jstr(c, r, RK_PATH, c->ranks[o[i].index].path);
        jnum(c, r, RK_VALUE, o[i].value);
    }
}

/* Whether a finding on the ranks' time already names rank (the straggler,
 * the spread): its step time standing out says nothing more. */
static int time_named(const analysis_ctx *c, int rank)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, c->bottlenecks) {
        const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_RULE));
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(f, RK_EVIDENCE), RK_RANK);
        if (rule && (strcmp(rule, "straggler") == 0 || strcmp(rule, "rank_spread") == 0) &&
            cJSON_IsNumber(r) && r->valueint == rank)
            return 1;
    }
    return 0;
}

static void figure_outliers(analysis_ctx *c, const rank_figure *f, const char *memory,
                            double *v, valued *o)
{
    size_t have = 0, n = 0;
    for (size_t i = 0; i < c->nranks; i++) {
        double x = figure_value(c, i, f, memory);
        if (isfinite(x))
            v[have++] = x;
    }
    if (have < OUTLIER_RANKS)
        return;
    double median = stats_quantile_select(v, have, 0.5);
    double mad = stats_mad(v, have, median, v);
    double floor = f->relative ? f->floor * fabs(median) : f->floor;
    double cut = fmax(OUTLIER_Z * 1.4826 * mad, floor);
    int step = strcmp(f->key, RK_MEAN_STEP_NS) == 0;
    for (size_t i = 0; i < c->nranks; i++) {
        double x = figure_value(c, i, f, memory);
        if (isfinite(x) && x - median > cut && cut > 0 &&
            !(step && time_named(c, c->ranks[i].rank)))
            o[n++] = (valued){ x, i };
    }
    if (n)
        outlier_finding(c, f, memory, o, n, have, median, cut);
}

void rule_rank_outliers(analysis_ctx *c, const char *memory_series)
{
    if (c->nranks < OUTLIER_RANKS)
        return;
    double *v = xcalloc(c, c->nranks, sizeof *v);
    valued *o = xcalloc(c, c->nranks, sizeof *o);
    for (size_t k = 0; v && o && k < sizeof figures / sizeof *figures; k++)
        figure_outliers(c, &figures[k], memory_series, v, o);
    free(v);
    free(o);
}
