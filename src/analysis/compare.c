/* compare.c - the comparison of two sides of analyze reports (compare.h).
 * It reads nothing but the report objects, so whatever the analysis
 * computes is compared the same way the user saw it in `prof analyze`; the
 * tests are in compare_stats.c. A side's figure is the mean over its runs,
 * its memory slope the median, and a leak or a bottleneck belongs to a side
 * when at least half of its runs have it. JSON failures (out of memory) are
 * sticky in ctx->ok so the building code reads straight through; the result
 * is dropped at the end when any failed. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/compare_stats.h"
#include "analysis/report_keys.h"
#include "analysis/stats.h"
#include "util/error.h"
#include "util/fmt.h"

/* One operation of one run: what compare reads of its report row, held
 * compactly so that profiles of a million names compare in memory near what
 * analyzing one takes (a number missing from the row reads 0, as it always
 * has). */
typedef struct cmp_op {
    const char *name, *kind; /* in the run's text                           */
    double calls, incl_ns, self_ns, mean_ns, stddev_ns, incl_share;
    double gpu_ns, gpu_self_ns, gpu_kernels;
    cmp_steady steady;     /* its batch means in the run's batch              */
    int has_gpu;           /* the row has gpu_ns (rules.md §3.2)              */
} cmp_op;

/* Blocks that names and batch means are carved from: rows arrive one at a
 * time, and what is carved never moves. */
typedef struct cmp_chunk {
    struct cmp_chunk *next;
    size_t used, cap;
    _Alignas(double) char data[];
} cmp_chunk;

#define CMP_CHUNK (256 * 1024)

struct compare_run {
    cJSON *owned;          /* the report, when taken: without its operations  */
    const cJSON *report;
    cmp_op *ops;           /* by name, once taken                             */
    size_t nops, cap;
    cmp_chunk *chunks;     /* the operations' names, kinds and batch means    */
    const char *kinds[16]; /* distinct kinds seen first, shared               */
    size_t nkinds;
};

/* A side: its runs (its own copy of the array) and the path named. */
typedef struct cmp_side {
    compare_run **runs;
    size_t nruns;
    const char *path;
} cmp_side;

typedef struct cmp_ctx {
    cmp_side side[2];      /* before, after                               */
    compare_options o;
    int ok;
} cmp_ctx;

/* The operations' rows, kept as their tests and built one at a time: a
 * row as JSON takes some 3 KB, a million of them more than the runs. */
typedef struct op_pair op_pair;
struct compare_ops {
    cmp_ctx c;
    op_pair *v;            /* the operations, largest first                   */
    cmp_result *r;         /* each one's test                                 */
    double *level;         /* and the level it was held to                    */
    size_t n;
};

void compare_options_default(compare_options *o)
{
    o->noise_pct = 5.0;
    o->alpha = 0.01;
    o->regression_pct = -1.0;
    o->min_share = 0.05;
    o->ops_within_run = 0;
}

/* ---- reading the reports ------------------------------------------------ */

static const cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* 1 and *v when o.key is a number. */
static int get_num(const cJSON *o, const char *key, double *v)
{
    const cJSON *n = get(o, key);
    if (!cJSON_IsNumber(n))
        return 0;
    *v = n->valuedouble;
    return 1;
}

static double num_or(const cJSON *o, const char *key, double fallback)
{
    double v;
    return get_num(o, key, &v) ? v : fallback;
}

static const char *str_or(const cJSON *o, const char *key, const char *fallback)
{
    const cJSON *s = get(o, key);
    return cJSON_IsString(s) && s->valuestring ? s->valuestring : fallback;
}

/* o.a.b.c, the path ending at the first NULL key. */
static const cJSON *get_path(const cJSON *o, const char *a, const char *b, const char *c)
{
    const char *keys[] = { a, b, c };
    for (size_t i = 0; i < 3 && keys[i] && o; i++)
        o = get(o, keys[i]);
    return o;
}

static const cJSON *first_profile(const cJSON *report)
{
    return cJSON_GetArrayItem(get(report, RK_PROFILES), 0);
}

static const cJSON *find_named(const cJSON *arr, const char *key, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
        if (strcmp(str_or(it, key, ""), name) == 0)
            return it;
    return NULL;
}

/* Step count behind the step-time statistics (rules.md §1: complete steps). */
static double stat_steps(const cJSON *report)
{
    const cJSON *s = get(report, RK_SUMMARY);
    double n;
    return get_num(s, RK_COMPLETE_STEPS, &n) ? n : num_or(s, RK_STEPS, 0);
}

/* ---- writing the comparison (sticky failures) ------------------------------ */

static cJSON *attach(cmp_ctx *c, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !(key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item))) {
        cJSON_Delete(item);
        c->ok = 0;
        return NULL;
    }
    return item;
}

static void put_num(cmp_ctx *c, cJSON *o, const char *key, double v)
{
    attach(c, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* A number when have, else null. */
static void put_opt(cmp_ctx *c, cJSON *o, const char *key, int have, double v)
{
    put_num(c, o, key, have ? v : NAN);
}

static void put_str(cmp_ctx *c, cJSON *o, const char *key, const char *v)
{
    attach(c, o, key, cJSON_CreateString(v));
}

static void put_bool(cmp_ctx *c, cJSON *o, const char *key, int v)
{
    attach(c, o, key, cJSON_CreateBool(v));
}

static cJSON *put_obj(cmp_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateObject());
}

static cJSON *put_arr(cmp_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateArray());
}

static void note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    attach(c, notes, NULL, cJSON_CreateString(buf));
}

/* (after - before) / before, or NaN when before is 0. */
static double relative(double before, double after)
{
    return before != 0 ? (after - before) / before : NAN;
}

/* ---- the sides ------------------------------------------------------------------ */

static const char *side_name(int i)
{
    return i ? RK_AFTER : RK_BEFORE;
}

static const cJSON *run_of(const cmp_side *s, size_t i)
{
    return s->runs[i]->report;
}

/* At least half of a side's runs: enough to say the side has a finding. */
static int most_runs(size_t count, size_t runs)
{
    return count > 0 && 2 * count >= runs;
}

/* ---- the runs' operations, compactly -------------------------------------------- */

static int by_op_name(const void *a, const void *b)
{
    return strcmp(((const cmp_op *)a)->name, ((const cmp_op *)b)->name);
}

/* size bytes from r's blocks, aligned for a double; NULL out of memory. */
static void *carve(compare_run *r, size_t size)
{
    size = (size + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    cmp_chunk *c = r->chunks;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CMP_CHUNK ? size : CMP_CHUNK;
        if (!(c = malloc(sizeof *c + cap)))
            return NULL;
        *c = (cmp_chunk){ r->chunks, 0, cap };
        r->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

static const char *carve_text(compare_run *r, const char *s)
{
    size_t len = strlen(s) + 1;
    char *t = carve(r, len);
    return t ? memcpy(t, s, len) : NULL;
}

/* kind, shared between operations among the first few distinct kinds. */
static const char *intern_kind(compare_run *r, const char *kind)
{
    for (size_t i = 0; i < r->nkinds; i++)
        if (strcmp(r->kinds[i], kind) == 0)
            return r->kinds[i];
    const char *k = carve_text(r, kind);
    if (k && r->nkinds < sizeof r->kinds / sizeof *r->kinds)
        r->kinds[r->nkinds++] = k;
    return k;
}

compare_run *compare_run_new(void)
{
    return calloc(1, sizeof(compare_run));
}

int compare_run_add_op(void *run, const cJSON *op)
{
    compare_run *r = run;
    if (r->nops == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        cmp_op *ops = realloc(r->ops, cap * sizeof *ops);
        if (!ops)
            return -1;
        r->ops = ops;
        r->cap = cap;
    }
    cmp_op *o = &r->ops[r->nops];
    const cJSON *st = get(op, RK_STEADY), *b;
    double m, batch[CMP_MAX_BATCHES];
    size_t nb = 0;
    cJSON_ArrayForEach(b, get(st, RK_BATCH_MEANS_NS))
        if (nb < CMP_MAX_BATCHES && cJSON_IsNumber(b) && isfinite(b->valuedouble))
            batch[nb++] = b->valuedouble;
    double *kept = nb ? carve(r, nb * sizeof *kept) : NULL;
    o->name = carve_text(r, str_or(op, RK_NAME, ""));
    o->kind = intern_kind(r, str_or(op, RK_KIND, ""));
    if (!o->name || !o->kind || (nb && !kept))
        return -1;
    if (nb)
        memcpy(kept, batch, nb * sizeof *kept);
    o->calls = num_or(op, RK_CALLS, 0);
    o->incl_ns = num_or(op, RK_INCL_NS, 0);
    o->self_ns = num_or(op, RK_SELF_NS, 0);
    o->mean_ns = num_or(op, RK_MEAN_NS, 0);
    o->stddev_ns = num_or(op, RK_STDDEV_NS, 0);
    o->incl_share = num_or(op, RK_INCL_SHARE, 0);
    o->has_gpu = get(op, RK_GPU_NS) != NULL;
    o->gpu_ns = num_or(op, RK_GPU_NS, 0);
    o->gpu_self_ns = num_or(op, RK_GPU_SELF_NS, 0);
    o->gpu_kernels = num_or(op, RK_GPU_KERNELS, 0);
    o->steady = (cmp_steady){ get_num(st, RK_MEAN_NS, &m) && isfinite(m) ? m : NAN, kept, nb };
    r->nops++;
    return 0;
}

/* The rows still in report's operations into r, then every row sorted by
 * name for lookups; -1 out of memory. */
static int read_ops(compare_run *r, const cJSON *report)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, get(report, RK_OPERATIONS))
        if (compare_run_add_op(r, op) != 0)
            return -1;
    if (r->nops > 1) /* none: r->ops may be NULL, which qsort must not get */
        qsort(r->ops, r->nops, sizeof *r->ops, by_op_name);
    return 0;
}

/* A run over a report: its operations read, the report borrowed. */
static compare_run *run_view(const cJSON *report)
{
    compare_run *r = compare_run_new();
    if (!r)
        return NULL;
    r->report = report;
    if (read_ops(r, report) != 0) {
        compare_run_free(r);
        return NULL;
    }
    return r;
}

prof_err compare_run_take(compare_run *r, cJSON *report, prof_error *err)
{
    if (!cJSON_IsObject(get(report, RK_SUMMARY)) || !cJSON_IsArray(get(report, RK_OPERATIONS))) {
        cJSON_Delete(report);
        return prof_error_set(err, PROF_ERR_INVALID,
                              "not an analyze report (no summary or operations)");
    }
    if (read_ops(r, report) != 0) {
        cJSON_Delete(report);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory reading the report");
    }
    /* the array is what takes the memory, and all compare reads of it is
     * in r->ops now */
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(report, RK_OPERATIONS));
    r->report = r->owned = report;
    return PROF_OK;
}

void compare_run_free(compare_run *r)
{
    if (!r)
        return;
    cJSON_Delete(r->owned);
    free(r->ops);
    while (r->chunks) {
        cmp_chunk *next = r->chunks->next;
        free(r->chunks);
        r->chunks = next;
    }
    free(r);
}

static int name_vs_op(const void *key, const void *op)
{
    return strcmp(key, ((const cmp_op *)op)->name);
}

static const cmp_op *side_op(const cmp_side *s, size_t run, const char *name)
{
    const compare_run *r = s->runs[run];
    return r->nops ? bsearch(name, r->ops, r->nops, sizeof *r->ops, name_vs_op) : NULL;
}

/* The summary metrics; the first two are also each side's step counts. */
static const struct metric {
    const char *name, *unit, *section, *key;
} metrics[] = {
    { "steps", "count", NULL, RK_STEPS },
    { "sampled_steps", "count", NULL, RK_SAMPLED_STEPS },
    { "wall_ns", "ns", NULL, RK_WALL_NS },
    { "profiled_ns", "ns", NULL, RK_PROFILED_NS },
    { "step_mean_ns", "ns", RK_STEP_TIME, RK_MEAN_NS },
    { "step_p50_ns", "ns", RK_STEP_TIME, RK_P50_NS },
    { "step_p95_ns", "ns", RK_STEP_TIME, RK_P95_NS },
};

/* Step-time metrics of a profile without steps are missing, not zero. */
static int metric_value(const cJSON *report, const struct metric *m, double *v)
{
    const cJSON *s = get(report, RK_SUMMARY);
    if (m->section && stat_steps(report) <= 0)
        return 0;
    return get_num(m->section ? get(s, m->section) : s, m->key, v);
}

/* The mean of a metric over a side's runs that have it (*have: any). */
static double metric_side(const cmp_side *s, const struct metric *m, int *have)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        double v;
        if (metric_value(run_of(s, i), m, &v)) {
            sum += v;
            n++;
        }
    }
    *have = n > 0;
    return n ? sum / (double)n : 0.0;
}

/* ---- the runs ------------------------------------------------------------------ */

/* Whether arg names the profile itself (its output path), which differs
 * between repeated runs of one command and is not part of what ran. */
static int is_output_arg(const char *arg, const cJSON *profile)
{
    const char *out = str_or(get_path(profile, RK_METADATA, MK_CONFIG, NULL), MK_OUTPUT, "");
    const char *path = str_or(profile, RK_PATH, ""), *base = strrchr(path, '/');
    const char *abase = strrchr(arg, '/');
    base = base ? base + 1 : path;
    abase = abase ? abase + 1 : arg;
    return (*out && strcmp(arg, out) == 0) || (*base && strcmp(abase, base) == 0);
}

/* The recorded command line without the profile's own name, into buf. */
static const char *command_of(const cJSON *report, char *buf, size_t size)
{
    const cJSON *p = first_profile(report), *argv = get(get(p, RK_METADATA), MK_ARGV), *a;
    size_t len = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(a, argv) {
        if (!cJSON_IsString(a) || !a->valuestring || (len && is_output_arg(a->valuestring, p)))
            continue;
        int n = snprintf(buf + len, size - len, "%s%s", len ? " " : "", a->valuestring);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    return buf;
}

static const cJSON *config_of(const cJSON *report, const char *key)
{
    return get_path(first_profile(report), RK_METADATA, MK_CONFIG, key);
}

/* A run's steady step time (its report's summary.step_time.steady), NULL
 * when it has no steps to judge. */
static const cJSON *steady_steps(const cJSON *run)
{
    return stat_steps(run) > 0 ? get_path(run, RK_SUMMARY, RK_STEP_TIME, RK_STEADY) : NULL;
}

/* Run i's steady mean step time; NAN without one. */
static double run_step_mean(const cmp_side *s, size_t i)
{
    const cJSON *m = get(steady_steps(run_of(s, i)), RK_MEAN_NS);
    return cJSON_IsNumber(m) ? m->valuedouble : NAN;
}

/* Each run's steady mean step time, so that a side whose runs fall into two
 * speeds (a busy machine) shows it; null for a run without one. */
static void add_run_step_means(cmp_ctx *c, cJSON *r, const cmp_side *s)
{
    cJSON *means = put_arr(c, r, RK_RUN_STEP_MEANS_NS);
    for (size_t i = 0; i < s->nruns; i++) {
        double v = run_step_mean(s, i);
        attach(c, means, NULL, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
    }
}

static void add_run(cmp_ctx *c, cJSON *cmp, int which)
{
    char cmd[512];
    const cmp_side *s = &c->side[which];
    const cJSON *first = run_of(s, 0), *p = first_profile(first);
    cJSON *r = put_obj(c, cmp, side_name(which));
    int have, clean = 1;
    put_str(c, r, RK_PATH, s->path ? s->path : str_or(p, RK_PATH, ""));
    put_str(c, r, RK_COMMAND, command_of(first, cmd, sizeof cmd));
    put_num(c, r, RK_RUNS, (double)s->nruns);
    cJSON *paths = put_arr(c, r, RK_RUN_PATHS);
    for (size_t i = 0; i < s->nruns; i++) {
        const cJSON *rp = first_profile(run_of(s, i));
        attach(c, paths, NULL, cJSON_CreateString(str_or(rp, RK_PATH, "")));
        clean &= !cJSON_IsFalse(get(rp, RK_CLEAN));
    }
    add_run_step_means(c, r, s);
    put_num(c, r, RK_STEPS, metric_side(s, &metrics[0], &have));
    put_num(c, r, RK_SAMPLED_STEPS, metric_side(s, &metrics[1], &have));
    const cJSON *sr = config_of(first, MK_SAMPLE_RATE);
    put_num(c, r, RK_SAMPLE_RATE, cJSON_IsNumber(sr) ? sr->valuedouble : NAN);
    put_bool(c, r, RK_CLEAN, clean);
}

/* Share of steps that kept their events, or the configured rate. */
static double sampled_fraction(const cJSON *report)
{
    const cJSON *s = get(report, RK_SUMMARY);
    double steps = num_or(s, RK_STEPS, 0);
    if (steps > 0)
        return num_or(s, RK_SAMPLED_STEPS, steps) / steps;
    const cJSON *sr = config_of(report, MK_SAMPLE_RATE);
    return cJSON_IsNumber(sr) && sr->valuedouble > 0 ? sr->valuedouble : 1.0;
}

static void note_method(cmp_ctx *c, cJSON *notes)
{
    size_t nb = c->side[0].nruns, na = c->side[1].nruns;
    if (nb >= 2 || na >= 2) {
        note(c, notes, "%zu run%s before, %zu after: changes are tested against the variation "
                       "between runs: the mean step time with Welch's t-test on per-run means; "
                       "each operation's time per call against its run's speed (the median "
                       "change of the operations found in every run), so that a process the "
                       "machine ran slower throughout neither hides nor fakes a change in one "
                       "operation. A change that slows every operation alike shows in the step "
                       "time, not as operations slower",
             nb, nb == 1 ? "" : "s", na);
        return;
    }
    note(c, notes, "one run a side: changes are tested against the variation within each run "
                   "(batch means); run-to-run variation is unknown, and whole runs of the same "
                   "program often differ by several percent. Repeat each run (3 or more, into a "
                   "directory a side) and compare the directories to test against it");
}

static void note_differences(cmp_ctx *c, cJSON *notes)
{
    const cJSON *b = run_of(&c->side[0], 0), *a = run_of(&c->side[1], 0);
    int have;
    double sb = metric_side(&c->side[0], &metrics[0], &have);
    double sa = metric_side(&c->side[1], &metrics[0], &have);
    if (sb != sa)
        note(c, notes, "step counts differ: %.0f before, %.0f after; totals are not comparable, "
                       "compare the per-step and per-call figures", sb, sa);
    if (sb == 0 || sa == 0)
        note(c, notes, "no steps in the %s: step-time metrics are missing",
             sb == 0 && sa == 0 ? "before and after profiles"
             : sb == 0          ? "before profile"
                                : "after profile");
    /* schedules that keep as many steps' events scale calls and totals
     * alike: only a different share is worth a note ("100% before, 100%
     * after" told the user nothing) */
    double fb = sampled_fraction(b), fa = sampled_fraction(a);
    if (fabs(fb - fa) > 0.005)
        note(c, notes, "sampling differs: %.0f%% of steps kept their events before, %.0f%% after; "
                       "calls and totals scale with sampling, compare means",
             fb * 100, fa * 100);
    char cb[512], ca[512];
    command_of(b, cb, sizeof cb);
    command_of(a, ca, sizeof ca);
    if (strcmp(cb, ca) != 0)
        note(c, notes, "the runs come from different commands ('%s' before, '%s' after); "
                       "operations are matched by name", cb, ca);
}

/* Whole runs whose steady step times differ by this factor or more: the
 * machine's speed changed between them (rules.md section 6.3). */
#define CMP_RUN_SPREAD 1.2

/* "before 17.0 ms to 27.6 ms, 1.62x": the range of a side's steady step
 * times over its runs into text; 0 when they spread less than
 * CMP_RUN_SPREAD. */
static int run_spread(const cmp_side *s, const char *name, char *text, size_t size)
{
    double lo = INFINITY, hi = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        double v = run_step_mean(s, r);
        if (v > 0 && isfinite(v)) {
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    if (!(hi >= lo * CMP_RUN_SPREAD))
        return 0;
    char a[FMT_BUF], b[FMT_BUF];
    snprintf(text, size, "%s %s to %s, %.2fx", name, fmt_duration(a, lo), fmt_duration(b, hi),
             hi / lo);
    return 1;
}

/* Sides whose runs spread that widely: the tests over them are weak, and
 * with few runs a chance split of fast and slow runs looks like a change. */
static void note_run_spread(cmp_ctx *c, cJSON *notes)
{
    char t[2][96];
    int wide[2] = { run_spread(&c->side[0], side_name(0), t[0], sizeof t[0]),
                    run_spread(&c->side[1], side_name(1), t[1], sizeof t[1]) };
    if (!wide[0] && !wide[1])
        return;
    size_t fewest = c->side[0].nruns < c->side[1].nruns ? c->side[0].nruns
                                                                : c->side[1].nruns;
    note(c, notes, "whole runs vary widely in steady step time (%s%s%s), as where the "
                   "machine's speed changes between processes: smaller changes are hard to show%s",
         wide[0] ? t[0] : "", wide[0] && wide[1] ? "; " : "", wide[1] ? t[1] : "",
         fewest < 5 ? ", and slow runs falling on one side by chance can look like a change. "
                      "Record 5 or more runs a side, on a quieter machine if one can be had"
                    : "");
}

static void note_runs(cmp_ctx *c, cJSON *notes)
{
    for (int i = 0; i < 2; i++) {
        const cmp_side *s = &c->side[i];
        for (size_t r = 0; r < s->nruns; r++) {
            const cJSON *rep = run_of(s, r), *p = first_profile(rep);
            if (cJSON_IsFalse(get(p, RK_CLEAN)))
                note(c, notes, "the %s profile '%s' was not closed cleanly: it covers what was "
                               "recorded before it stopped", side_name(i), str_or(p, RK_PATH, ""));
            double total = num_or(rep, RK_OPERATIONS_TOTAL, 0);
            double kept = (double)s->runs[r]->nops;
            if (total > kept)
                note(c, notes, "the %s report holds %.0f of %.0f operations; the rest are not "
                               "compared", side_name(i), kept, total);
        }
    }
}

/* ---- sides that should not be compared ------------------------------------------ */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The GPU models a report's first profile names (its metadata's devices),
 * distinct, sorted, joined with ", "; "" when it names none. */
static void gpu_models(const cJSON *report, char *buf, size_t size)
{
    const cJSON *devs = get_path(first_profile(report), RK_METADATA, MK_DEVICES, NULL), *d;
    const char *names[64];
    size_t n = 0, len = 0;
    cJSON_ArrayForEach(d, devs) {
        const char *name = str_or(d, MK_NAME, "");
        if (*name && n < sizeof names / sizeof *names)
            names[n++] = name;
    }
    qsort(names, n, sizeof *names, by_string);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
                                    len ? ", " : "", names[i]);
}

/* A metadata value of a report's first profile as text (a tag's string or
 * number, the world size): "" when absent. */
static void meta_text(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsString(v))
        snprintf(buf, size, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, size, "%.15g", v->valuedouble);
    else
        buf[0] = '\0';
}

/* Both sides say it (neither text is empty), and differently. */
static int both_differ(char v[2][256])
{
    return *v[0] && *v[1] && strcmp(v[0], v[1]) != 0;
}

/* What differs between the sides so that their times do not compare
 * (rules.md §6.1): the GPUs, the world size, the batch size where the
 * profiles' tags say it. Each a sentence; the text shows them first. */
static void add_warnings(cmp_ctx *c, cJSON *cmp)
{
    cJSON *w = put_arr(c, cmp, RK_WARNINGS);
    const cJSON *r[2] = { run_of(&c->side[0], 0), run_of(&c->side[1], 0) };
    char v[2][256];
    for (int i = 0; i < 2; i++)
        gpu_models(r[i], v[i], sizeof v[i]);
    if (both_differ(v))
        note(c, w, "different GPUs: %s before, %s after: kernel and step times do not compare",
             v[0], v[1]);
    for (int i = 0; i < 2; i++)
        meta_text(get_path(first_profile(r[i]), RK_METADATA, MK_WORLD_SIZE, NULL), v[i],
                  sizeof v[i]);
    if (both_differ(v))
        note(c, w, "different world sizes: %s ranks before, %s after: each rank's share of the "
                   "work differs", v[0], v[1]);
    for (int i = 0; i < 2; i++)
        meta_text(get_path(first_profile(r[i]), RK_METADATA, MK_TAGS, MK_BATCH_SIZE), v[i],
                  sizeof v[i]);
    if (both_differ(v))
        note(c, w, "different batch sizes (tag batch_size): %s before, %s after: step and "
                   "per-call times do not compare", v[0], v[1]);
}

static void add_notes(cmp_ctx *c, cJSON *notes)
{
    note_method(c, notes);
    note_run_spread(c, notes);
    note_differences(c, notes);
    note_runs(c, notes);
}

/* ---- summary metrics ------------------------------------------------------------ */

static void add_change(cmp_ctx *c, cJSON *row, const char *change_key, int hb, double b, int ha,
                       double a)
{
    put_opt(c, row, change_key, hb && ha, a - b);
    put_opt(c, row, RK_RELATIVE, hb && ha, relative(b, a));
}

/* The step-time test of every run's steady steps. */
static cmp_result step_test(const cmp_ctx *c)
{
    size_t n[2] = { c->side[0].nruns, c->side[1].nruns };
    const cJSON **st[2];
    cmp_result r;
    st[0] = calloc(n[0], sizeof *st[0]);
    st[1] = calloc(n[1], sizeof *st[1]);
    if (!st[0] || !st[1]) {
        r = cmp_no_test();
    } else {
        for (int i = 0; i < 2; i++)
            for (size_t k = 0; k < n[i]; k++)
                st[i][k] = steady_steps(run_of(&c->side[i], k));
        r = cmp_test(st[0], n[0], st[1], n[1], &c->o);
    }
    free(st[0]);
    free(st[1]);
    return r;
}

static void add_summary(cmp_ctx *c, cJSON *cmp, const cmp_result *steps)
{
    cJSON *arr = put_arr(c, cmp, RK_SUMMARY);
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
        int hb, ha;
        double b = metric_side(&c->side[0], &metrics[i], &hb);
        double a = metric_side(&c->side[1], &metrics[i], &ha);
        if (strcmp(metrics[i].name, "step_mean_ns") == 0) { /* after warm-up: what is tested */
            hb = isfinite(steps->before);
            ha = isfinite(steps->after);
            b = steps->before;
            a = steps->after;
        }
        cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
        put_str(c, row, RK_METRIC, metrics[i].name);
        put_str(c, row, RK_UNIT, metrics[i].unit);
        put_opt(c, row, RK_BEFORE, hb, b);
        put_opt(c, row, RK_AFTER, ha, a);
        add_change(c, row, RK_CHANGE, hb, b, ha, a);
    }
}

/* The test's fields shared by the step-time test and every operation. */
/* What a test says (rules.md §6.3): slower or faster when significant;
 * no change when its interval lies within the noise floor; inconclusive
 * when it reaches past the floor but not wholly; untested without one. */
static const char *test_verdict(const cmp_ctx *c, const cmp_result *r)
{
    double f = c->o.noise_pct / 100.0;
    if (r->method == CMP_NO_TEST || !isfinite(r->rel_low) || !isfinite(r->rel_high))
        return "untested";
    if (r->significant)
        return r->estimate > 0 ? "slower" : "faster";
    return r->rel_low >= -f && r->rel_high <= f ? "no_change" : "inconclusive";
}

/* For an inconclusive test between runs: about how many runs a side would
 * settle it, the interval narrowing as the square root of the runs until
 * it clears the floor on the side the estimate lies (beyond it: a change;
 * within it: none). NaN when it cannot be told (within one run a side, or
 * an estimate on the floor itself); at most 1000. */
static double runs_needed(const cmp_ctx *c, const cmp_result *r)
{
    double f = c->o.noise_pct / 100.0, half = (r->rel_high - r->rel_low) / 2;
    double margin = fabs(fabs(r->estimate) - f);
    size_t n = r->runs_before < r->runs_after ? r->runs_before : r->runs_after;
    if (r->method == CMP_WITHIN_RUN || r->method == CMP_NO_TEST || n < 2 || !(margin > 0) ||
        !isfinite(half))
        return NAN;
    double k = ceil((double)n * (half / margin) * (half / margin));
    return k > 1000 ? 1000 : k > (double)n ? k : (double)n + 1;
}

static void put_test(cmp_ctx *c, cJSON *o, const cmp_result *r)
{
    const char *v = test_verdict(c, r);
    put_str(c, o, RK_VERDICT, v);
    put_num(c, o, RK_RUNS_NEEDED, strcmp(v, "inconclusive") == 0 ? runs_needed(c, r) : NAN);
    put_str(c, o, RK_METHOD, cmp_method_name(r->method));
    put_num(c, o, RK_RUNS_BEFORE, (double)r->runs_before);
    put_num(c, o, RK_RUNS_AFTER, (double)r->runs_after);
    put_num(c, o, RK_T, r->t);
    put_num(c, o, RK_DF, r->df);
    put_num(c, o, RK_P_VALUE, r->p);
    put_num(c, o, RK_RELATIVE_LOW, r->rel_low);
    put_num(c, o, RK_RELATIVE_HIGH, r->rel_high);
}

static void add_step_test(cmp_ctx *c, cJSON *cmp, const cmp_result *r)
{
    cJSON *t = put_obj(c, cmp, RK_STEP_TIME_TEST);
    put_test(c, t, r);
    put_num(c, t, RK_RELATIVE, r->relative);
    put_bool(c, t, RK_SIGNIFICANT, r->significant);
}

static void add_speedup(cmp_ctx *c, cJSON *cmp, const cmp_result *steps)
{
    double mb = steps->before, ma = steps->after;
    const char *basis = "step_time";
    if (!(mb > 0 && ma > 0)) {
        int hb, ha;
        mb = metric_side(&c->side[0], &metrics[3], &hb);
        ma = metric_side(&c->side[1], &metrics[3], &ha);
        basis = "profiled_time";
    }
    if (!(mb > 0 && ma > 0)) {
        attach(c, cmp, RK_SPEEDUP, cJSON_CreateNull());
        return;
    }
    cJSON *s = put_obj(c, cmp, RK_SPEEDUP);
    put_num(c, s, RK_VALUE, mb / ma);
    put_str(c, s, RK_BASIS, basis);
}

/* ---- memory ------------------------------------------------------------------ */

static const char *verdict(int before, int after)
{
    return before && after ? "persisting" : before ? "fixed" : after ? "new" : "none";
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One series on one side: mean peak, median slope, leak in most runs. */
typedef struct mem_side {
    int have, has_slope, leak;
    double peak, slope;
    const char *unit;      /* of the slope: "bytes_per_step" or "bytes_per_s" */
} mem_side;

/* The fitted slope of a report's memory series and its unit. */
static int series_slope(const cJSON *fit, double *v, const char **unit)
{
    if (get_num(fit, RK_SLOPE_BYTES_PER_STEP, v)) {
        *unit = "bytes_per_step";
        return 1;
    }
    if (get_num(fit, RK_SLOPE_BYTES_PER_S, v)) {
        *unit = "bytes_per_s";
        return 1;
    }
    return 0;
}

static mem_side memory_side(const cmp_side *s, const char *name)
{
    mem_side m = { 0, 0, 0, 0.0, NAN, "bytes_per_step" };
    size_t n = s->nruns, peaks = 0, leaks = 0, slopes = 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const cJSON *ser = find_named(get(run_of(s, i), RK_MEMORY), RK_SERIES, name);
        double peak;
        if (!ser || !get_num(ser, RK_PEAK_BYTES, &peak))
            continue;
        m.peak += peak;
        peaks++;
        if (cJSON_IsTrue(get(get(ser, RK_FIT), RK_LEAK)))
            leaks++;
        if (v && series_slope(get(ser, RK_FIT), &v[slopes], &m.unit))
            slopes++;
    }
    m.have = peaks > 0;
    m.peak = peaks ? m.peak / (double)peaks : 0.0;
    m.leak = most_runs(leaks, n);
    if (slopes) {
        qsort(v, slopes, sizeof *v, by_double);
        m.slope = slopes % 2 ? v[slopes / 2] : 0.5 * (v[slopes / 2 - 1] + v[slopes / 2]);
        m.has_slope = 1;
    }
    free(v);
    return m;
}

static void add_series(cmp_ctx *c, cJSON *arr, const char *name)
{
    mem_side b = memory_side(&c->side[0], name), a = memory_side(&c->side[1], name);
    cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, row, RK_SERIES, name);
    put_opt(c, row, RK_BEFORE_PEAK_BYTES, b.have, b.peak);
    put_opt(c, row, RK_AFTER_PEAK_BYTES, a.have, a.peak);
    add_change(c, row, RK_CHANGE_BYTES, b.have, b.peak, a.have, a.peak);
    put_str(c, row, RK_SLOPE_UNIT, b.has_slope ? b.unit : a.unit);
    put_opt(c, row, RK_BEFORE_SLOPE, b.has_slope, b.slope);
    put_opt(c, row, RK_AFTER_SLOPE, a.has_slope, a.slope);
    put_bool(c, row, RK_LEAK_BEFORE, b.leak);
    put_bool(c, row, RK_LEAK_AFTER, a.leak);
    put_str(c, row, RK_LEAK, verdict(b.leak, a.leak));
}

/* 1 when a run of a side before run `upto` (or of an earlier side) already
 * listed this series, so each series gets one row. */
static int series_seen(const cmp_ctx *c, int side, size_t upto, const char *name)
{
    for (int i = 0; i <= side; i++)
        for (size_t r = 0; r < (i < side ? c->side[i].nruns : upto); r++)
            if (find_named(get(run_of(&c->side[i], r), RK_MEMORY), RK_SERIES, name))
                return 1;
    return 0;
}

static void add_memory(cmp_ctx *c, cJSON *cmp)
{
    cJSON *arr = put_arr(c, cmp, RK_MEMORY);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++) {
            const cJSON *s;
            cJSON_ArrayForEach(s, get(run_of(&c->side[i], r), RK_MEMORY))
                if (!series_seen(c, i, r, str_or(s, RK_SERIES, "")))
                    add_series(c, arr, str_or(s, RK_SERIES, ""));
        }
}

/* ---- operations ------------------------------------------------------------------ */

struct op_pair {
    const char *name;      /* in a run's text                      */
    double weight;         /* the larger mean total, for the order */
};

static int by_weight(const void *x, const void *y)
{
    const op_pair *p = x, *q = y;
    if (p->weight != q->weight)
        return p->weight < q->weight ? 1 : -1;
    return strcmp(p->name, q->name);
}

static int by_pair_name(const void *x, const void *y)
{
    return strcmp(((const op_pair *)x)->name, ((const op_pair *)y)->name);
}

/* A field of cmp_op, by its offset. */
#define OPF(field) offsetof(cmp_op, field)

/* Mean over a side's runs of the op's field, over the runs that have it. */
static double op_side_mean(const cmp_side *s, const char *name, size_t field, size_t *runs)
{
    double sum = 0;
    *runs = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cmp_op *op = side_op(s, r, name);
        if (op) {
            double v;
            memcpy(&v, (const char *)op + field, sizeof v);
            sum += v;
            (*runs)++;
        }
    }
    return *runs ? sum / (double)*runs : 0.0;
}

/* Every operation of any run, once, largest first. */
static op_pair *pair_ops(cmp_ctx *c, size_t *n)
{
    size_t cap = 0, k = 0;
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++)
            cap += c->side[i].runs[r]->nops;
    op_pair *v = calloc(cap ? cap : 1, sizeof *v);
    if (!v) {
        c->ok = 0;
        return NULL;
    }
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++)
            for (size_t j = 0; j < c->side[i].runs[r]->nops; j++)
                v[k++].name = c->side[i].runs[r]->ops[j].name;
    qsort(v, k, sizeof *v, by_pair_name);
    *n = 0;
    for (size_t j = 0; j < k; j++)
        if (*n == 0 || strcmp(v[*n - 1].name, v[j].name) != 0)
            v[(*n)++] = v[j];
    for (size_t j = 0; j < *n; j++) {
        size_t runs;
        v[j].weight = fmax(op_side_mean(&c->side[0], v[j].name, OPF(incl_ns), &runs),
                           op_side_mean(&c->side[1], v[j].name, OPF(incl_ns), &runs));
    }
    qsort(v, *n, sizeof *v, by_weight);
    return v;
}

/* How many of the side's runs report GPU time for the operation. */
static size_t op_gpu_runs(const cmp_side *s, const char *name)
{
    size_t n = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cmp_op *op = side_op(s, r, name);
        n += op && op->has_gpu;
    }
    return n;
}

/* A side of an operation's row: means over the runs that have it. */
static void add_side(cmp_ctx *c, cJSON *row, int which, const char *name, double mean)
{
    const cmp_side *s = &c->side[which];
    size_t runs;
    double calls = op_side_mean(s, name, OPF(calls), &runs);
    if (!runs) {
        attach(c, row, side_name(which), cJSON_CreateNull());
        return;
    }
    cJSON *o = put_obj(c, row, side_name(which));
    put_num(c, o, RK_RUNS, (double)runs);
    put_num(c, o, RK_CALLS, calls);
    put_num(c, o, RK_TOTAL_NS, op_side_mean(s, name, OPF(incl_ns), &runs));
    put_num(c, o, RK_SELF_NS, op_side_mean(s, name, OPF(self_ns), &runs));
    put_num(c, o, RK_MEAN_NS, isfinite(mean) ? mean : op_side_mean(s, name, OPF(mean_ns), &runs));
    put_num(c, o, RK_STDDEV_NS, op_side_mean(s, name, OPF(stddev_ns), &runs));
    put_num(c, o, RK_SHARE, op_side_mean(s, name, OPF(incl_share), &runs));
    if (op_gpu_runs(s, name)) { /* GPU time launched in it (rules.md §3.2) */
        put_num(c, o, RK_GPU_NS, op_side_mean(s, name, OPF(gpu_ns), &runs));
        put_num(c, o, RK_GPU_SELF_NS, op_side_mean(s, name, OPF(gpu_self_ns), &runs));
        put_num(c, o, RK_GPU_KERNELS, op_side_mean(s, name, OPF(gpu_kernels), &runs));
    }
}

/* The change of an operation's GPU time per call (rules.md §6.1) into
 * *v; 0 unless both sides launched some in it. */
static int gpu_change(const cmp_ctx *c, const char *name, double *v)
{
    double per_call[2];
    for (int i = 0; i < 2; i++) {
        size_t runs;
        const cmp_side *s = &c->side[i];
        double calls = op_side_mean(s, name, OPF(calls), &runs);
        double gpu = op_side_mean(s, name, OPF(gpu_ns), &runs);
        if (!op_gpu_runs(s, name) || calls <= 0 || gpu <= 0)
            return 0;
        per_call[i] = gpu / calls;
    }
    *v = relative(per_call[0], per_call[1]);
    return 1;
}

static void add_gpu_change(cmp_ctx *c, cJSON *row, const char *name)
{
    double v;
    if (gpu_change(c, name, &v))
        put_num(c, row, RK_GPU_RELATIVE, v);
}

/* ---- testing the operations ------------------------------------------------------ */

/* An operation's share of the time that weighs its test below this counts
 * as this much (rules.md §6.3): none is left untestable, while the smallest,
 * whose time per process is most often a coin toss, are held strictest. */
#define CMP_MIN_WEIGHT_SHARE 0.001

/* What the operations' tests need: each operation's log steady mean in
 * every run of both sides (before first) and the runs' speeds. */
typedef struct op_tests {
    size_t n, nruns;       /* operations, runs of both sides                       */
    double *logs;          /* n x nruns; NaN where the run lacks a steady mean     */
    size_t *ref;           /* each operation's index among the reference ones     */
    cmp_speeds speeds;     /* empty with one run a side                           */
    cmp_result *r;
    double *level;         /* each one's level (rules.md §6.3)                     */
} op_tests;

static const cmp_op *op_in_run(const cmp_ctx *c, size_t run, const char *name)
{
    size_t nb = c->side[0].nruns;
    return run < nb ? side_op(&c->side[0], run, name) : side_op(&c->side[1], run - nb, name);
}

static double op_log_mean(const cmp_ctx *c, size_t run, const char *name)
{
    const cmp_op *op = op_in_run(c, run, name);
    double m = op ? op->steady.mean : NAN;
    return m > 0 && isfinite(m) ? log(m) : NAN;
}

/* The runs' speeds from the operations with a steady mean in every run;
 * only between runs, where a run's speed is something to take out. */
static int find_speeds(op_tests *t)
{
    size_t nref = 0;
    double *ref_logs = malloc((t->n ? t->n : 1) * t->nruns * sizeof *ref_logs);
    if (!ref_logs)
        return -1;
    for (size_t j = 0; j < t->n; j++) {
        int all = 1;
        for (size_t r = 0; r < t->nruns && all; r++)
            all = isfinite(t->logs[j * t->nruns + r]);
        t->ref[j] = all ? nref : SIZE_MAX;
        if (all)
            memcpy(&ref_logs[nref++ * t->nruns], &t->logs[j * t->nruns],
                   t->nruns * sizeof *ref_logs);
    }
    int rc = cmp_speeds_init(&t->speeds, ref_logs, nref, t->nruns);
    free(ref_logs);
    return rc;
}

static void op_tests_free(op_tests *t)
{
    free(t->logs);
    free(t->ref);
    free(t->r);
    free(t->level);
    cmp_speeds_free(&t->speeds);
}

static int op_tests_init(cmp_ctx *c, op_tests *t, const op_pair *v, size_t n)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->nruns = c->side[0].nruns + c->side[1].nruns;
    size_t k = n ? n : 1;
    t->logs = malloc(k * t->nruns * sizeof *t->logs);
    t->ref = malloc(k * sizeof *t->ref);
    t->r = calloc(k, sizeof *t->r);
    t->level = malloc(k * sizeof *t->level);
    if (!t->logs || !t->ref || !t->r || !t->level)
        return -1;
    for (size_t j = 0; j < n; j++) {
        t->ref[j] = SIZE_MAX;
        t->level[j] = c->o.alpha;
        for (size_t r = 0; r < t->nruns; r++)
            t->logs[j * t->nruns + r] = op_log_mean(c, r, v[j].name);
    }
    if (c->side[0].nruns < 2 && c->side[1].nruns < 2)
        return 0;
    return find_speeds(t);
}

/* The test of operation j against its runs' speeds (rules.md §6.3). */
static cmp_result adjusted_test(const cmp_ctx *c, const op_tests *t, size_t j,
                                const compare_options *o)
{
    size_t nb = c->side[0].nruns, k[2] = { 0, 0 };
    double *y = malloc(t->nruns * sizeof *y), mean[2] = { 0, 0 };
    if (!y)
        return cmp_no_test();
    for (size_t r = 0; r < t->nruns; r++) {
        double l = t->logs[j * t->nruns + r];
        int side = r >= nb;
        if (!isfinite(l))
            continue;
        mean[side] += exp(l);
        y[side ? nb + k[1] : k[0]] = l - cmp_speed_of(&t->speeds, r, t->ref[j]);
        k[side]++;
    }
    cmp_result res = cmp_test_adjusted(y, k[0], &y[nb], k[1], k[0] ? mean[0] / (double)k[0] : NAN,
                                       k[1] ? mean[1] / (double)k[1] : NAN, o);
    free(y);
    return res;
}

/* The operation's test at level alpha: against its runs' speeds where
 * there are several runs a side and enough other operations, else of its
 * steady means as they are. */
static cmp_result op_test(const cmp_ctx *c, const op_tests *t, size_t j, const char *name,
                          double alpha)
{
    compare_options o = c->o;
    o.alpha = alpha;
    if (cmp_speeds_usable(&t->speeds, t->ref[j]))
        return adjusted_test(c, t, j, &o);
    size_t n[2] = { c->side[0].nruns, c->side[1].nruns };
    cmp_steady *st[2] = { calloc(n[0], sizeof *st[0]), calloc(n[1], sizeof *st[1]) };
    cmp_result r;
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; st[i] && k < n[i]; k++) {
            const cmp_op *op = side_op(&c->side[i], k, name);
            st[i][k] = op ? op->steady : (cmp_steady){ NAN, NULL, 0 };
        }
    if (st[0] && st[1]) {
        r = cmp_test_steady(st[0], n[0], st[1], n[1], &o);
    } else {
        r = cmp_no_test();
    }
    free(st[0]);
    free(st[1]);
    return r;
}

static const char *op_status(const cmp_result *r, int hb, int ha)
{
    if (!hb)
        return "added";
    if (!ha)
        return "removed";
    return !r->significant ? "unchanged" : r->estimate > 0 ? "slower" : "faster";
}

/* How many runs of each side have the operation. */
static void op_runs(const cmp_ctx *c, const char *name, size_t *rb, size_t *ra)
{
    op_side_mean(&c->side[0], name, OPF(calls), rb);
    op_side_mean(&c->side[1], name, OPF(calls), ra);
}

/* An operation's row of the comparison; NULL (and c->ok 0) out of memory. */
static cJSON *op_row(cmp_ctx *c, const op_pair *p, const cmp_result *r, double level)
{
    size_t rb, ra;
    op_runs(c, p->name, &rb, &ra);
    int both = rb && ra && isfinite(r->relative);
    const char *kind = "";
    for (int i = 0; i < 2 && !*kind; i++)
        for (size_t k = 0; k < c->side[i].nruns && !*kind; k++) {
            const cmp_op *op = side_op(&c->side[i], k, p->name);
            kind = op ? op->kind : "";
        }
    cJSON *row = cJSON_CreateObject();
    c->ok &= row != NULL;
    put_str(c, row, RK_NAME, p->name);
    put_str(c, row, RK_KIND, kind);
    put_str(c, row, RK_STATUS, op_status(r, rb > 0, ra > 0));
    add_side(c, row, 0, p->name, r->before);
    add_side(c, row, 1, p->name, r->after);
    put_opt(c, row, RK_MEAN_CHANGE_NS, both, r->after - r->before);
    put_opt(c, row, RK_RELATIVE, both, r->relative);
    put_opt(c, row, RK_RELATIVE_TO_RUN, both && isfinite(r->estimate), r->estimate);
    cmp_result shown = *r;
    if (!rb || !ra) /* on one side only: nothing was tested */
        shown.t = shown.df = shown.p = NAN;
    put_test(c, row, &shown);
    put_opt(c, row, RK_ALPHA, r->method != CMP_NO_TEST, level);
    put_bool(c, row, RK_SIGNIFICANT, r->significant);
    add_gpu_change(c, row, p->name);
    if (!c->ok) {
        cJSON_Delete(row);
        return NULL;
    }
    return row;
}

/* An operation's weight in the false discovery rate: its mean share of the
 * time over the runs of both sides that have it (the same whichever side a
 * run is on, so it does not favour a change), at least
 * CMP_MIN_WEIGHT_SHARE. */
static double op_weight(const cmp_ctx *c, const char *name)
{
    size_t rb, ra;
    double b = op_side_mean(&c->side[0], name, OPF(incl_share), &rb);
    double a = op_side_mean(&c->side[1], name, OPF(incl_share), &ra);
    double share = rb + ra ? (b * (double)rb + a * (double)ra) / (double)(rb + ra) : 0.0;
    return fmax(isfinite(share) ? share : 0.0, CMP_MIN_WEIGHT_SHARE);
}

/* The level each tested operation is held to (rules.md §6.3): some thirty
 * operations tested at alpha each turned up a chance change in 1.6-1.8% of
 * comparisons of repeated runs of one program, so the share of chance
 * findings among all flagged is held under alpha instead, each operation's
 * part of it weighted by its share of the time: the large operations that
 * make up the step are the ones a user needs judged, and few runs a side
 * leave too few degrees of freedom to judge them at alpha over the number
 * of operations. The tests are run again at their levels for their
 * intervals. Returns the number tested, and the level of weight 1. */
static size_t level_operations(cmp_ctx *c, const op_pair *v, op_tests *t, double *level)
{
    double *p = malloc((t->n ? t->n : 1) * sizeof *p), *w = malloc((t->n ? t->n : 1) * sizeof *w);
    double sum = 0;
    size_t m = 0;
    *level = NAN;
    if (!p || !w) {
        free(p);
        free(w);
        c->ok = 0;
        return 0;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].method != CMP_NO_TEST) {
            p[m] = isnan(t->r[i].p) ? 1.0 : t->r[i].p;
            sum += w[m++] = op_weight(c, v[i].name);
        }
    for (size_t i = 0; i < m; i++)
        w[i] *= (double)m / sum;
    *level = cmp_level_each(p, w, m, c->o.alpha);
    for (size_t i = 0, k = 0; i < t->n && !isnan(*level); i++) {
        if (t->r[i].method == CMP_NO_TEST)
            continue;
        t->level[i] = m > 1 ? *level * w[k] : c->o.alpha;
        k++;
        if (t->level[i] != c->o.alpha)
            t->r[i] = op_test(c, t, i, v[i].name, t->level[i]);
    }
    free(p);
    free(w);
    if (isnan(*level))
        c->ok = 0;
    return m;
}

/* How much faster or slower the after side's runs ran everything than the
 * before side's (exp of the difference of their mean log speeds, minus 1);
 * NaN without speeds. */
static double speed_change(const cmp_ctx *c, const op_tests *t)
{
    size_t nb = c->side[0].nruns;
    double sum[2] = { 0, 0 };
    if (!cmp_speeds_usable(&t->speeds, SIZE_MAX))
        return NAN;
    for (size_t r = 0; r < t->nruns; r++)
        sum[r >= nb] += cmp_speed_of(&t->speeds, r, SIZE_MAX);
    return expm1(sum[1] / (double)(t->nruns - nb) - sum[0] / (double)nb);
}

/* When every operation moved alike past the floor, the operations' tests
 * take that out: say so, and what it may be. */
static void note_speed_change(cmp_ctx *c, const cJSON *cmp, const op_tests *t, double change)
{
    if (!(fabs(change) > c->o.noise_pct / 100.0))
        return;
    note(c, cJSON_GetObjectItemCaseSensitive(cmp, RK_NOTES),
         "every operation's time per call moved alike by %+.1f%% from before to after (the "
         "runs' speed: the median change of the %zu operations found in every run), and each "
         "operation is tested against it: this is a change to the whole program, or a machine "
         "that ran one side's processes %s; the step-time test says whether it is beyond the "
         "variation between runs",
         100.0 * change, t->speeds.nref, change > 0 ? "slower" : "faster");
}

static void add_operation_tests(cmp_ctx *c, cJSON *cmp, const op_tests *t, size_t tested,
                                double level)
{
    size_t flagged = 0, adjusted = 0;
    for (size_t i = 0; i < t->n; i++) {
        flagged += t->r[i].significant ? 1u : 0u;
        adjusted += t->r[i].method == CMP_SPEED_ADJUSTED ? 1u : 0u;
    }
    cJSON *o = put_obj(c, cmp, RK_OPERATION_TESTS);
    put_num(c, o, RK_TESTED, (double)tested);
    put_num(c, o, RK_FLAGGED, (double)flagged);
    put_num(c, o, RK_ALPHA_EACH, level);
    put_num(c, o, RK_SPEED_ADJUSTED, (double)adjusted);
    put_num(c, o, RK_REFERENCE_OPERATIONS, (double)t->speeds.nref);
    double change = speed_change(c, t);
    put_opt(c, o, RK_SPEED_CHANGE, isfinite(change), change);
    note_speed_change(c, cmp, t, change);
}

/* Tests every operation into ops; the rows stay to be built, an empty
 * array holding their place. */
static void add_operations(cmp_ctx *c, cJSON *cmp, compare_ops *ops)
{
    size_t n = 0;
    op_pair *v = pair_ops(c, &n);
    op_tests t;
    if (!v || op_tests_init(c, &t, v, n) != 0) {
        c->ok = 0;
        if (v)
            op_tests_free(&t);
        free(v);
        return;
    }
    for (size_t i = 0; i < n; i++)
        t.r[i] = op_test(c, &t, i, v[i].name, c->o.alpha);
    double level;
    size_t tested = level_operations(c, v, &t, &level);
    if (c->ok) {
        add_operation_tests(c, cmp, &t, tested, level);
        put_arr(c, cmp, RK_OPERATIONS);
    }
    ops->v = v;
    ops->n = n;
    ops->r = t.r;
    ops->level = t.level;
    t.r = NULL;
    t.level = NULL;
    op_tests_free(&t);
}

/* ---- bottlenecks ------------------------------------------------------------------ */

static const cJSON *find_finding(const cJSON *report, const cJSON *f)
{
    const cJSON *g;
    const char *rule = str_or(f, RK_RULE, ""), *subject = str_or(f, RK_SUBJECT, "");
    cJSON_ArrayForEach(g, get(report, RK_BOTTLENECKS))
        if (strcmp(str_or(g, RK_RULE, ""), rule) == 0 &&
            strcmp(str_or(g, RK_SUBJECT, ""), subject) == 0)
            return g;
    return NULL;
}

/* The side's finding like f (from its first run that has it) when most of
 * its runs have one, else NULL. */
static const cJSON *side_finding(const cmp_side *s, const cJSON *f)
{
    const cJSON *first = NULL;
    size_t count = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cJSON *g = find_finding(run_of(s, r), f);
        if (g && !first)
            first = g;
        if (g)
            count++;
    }
    return most_runs(count, s->nruns) ? first : NULL;
}

static void add_finding(cmp_ctx *c, cJSON *arr, const cJSON *b, const cJSON *a)
{
    const cJSON *f = a ? a : b;
    cJSON *row = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, row, RK_RULE, str_or(f, RK_RULE, ""));
    put_str(c, row, RK_SUBJECT, str_or(f, RK_SUBJECT, ""));
    put_str(c, row, RK_SEVERITY, str_or(f, RK_SEVERITY, ""));
    put_str(c, row, RK_TITLE, str_or(f, RK_TITLE, ""));
    if (b && a) {
        put_str(c, row, RK_SEVERITY_BEFORE, str_or(b, RK_SEVERITY, ""));
        put_str(c, row, RK_TITLE_BEFORE, str_or(b, RK_TITLE, ""));
    }
}

/* 1 when an earlier run of any side (before `run` of `side`) has the same
 * finding, so each finding is placed once. */
static int finding_seen(const cmp_ctx *c, int side, size_t run, const cJSON *f)
{
    for (int i = 0; i <= side; i++)
        for (size_t r = 0; r < (i < side ? c->side[i].nruns : run); r++)
            if (find_finding(run_of(&c->side[i], r), f))
                return 1;
    return 0;
}

static void add_bottlenecks(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = put_obj(c, cmp, RK_BOTTLENECKS);
    cJSON *fixed = put_arr(c, o, RK_FIXED), *added = put_arr(c, o, RK_NEW);
    cJSON *persisting = put_arr(c, o, RK_PERSISTING);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++) {
            const cJSON *f;
            cJSON_ArrayForEach(f, get(run_of(&c->side[i], r), RK_BOTTLENECKS)) {
                if (finding_seen(c, i, r, f))
                    continue;
                const cJSON *b = side_finding(&c->side[0], f), *a = side_finding(&c->side[1], f);
                if (b || a)
                    add_finding(c, b && a ? persisting : b ? fixed : added, b, a);
            }
        }
}

/* ---- regression ------------------------------------------------------------------ */

static void add_reason(cmp_ctx *c, cJSON *arr, const char *what, const char *name,
                       const cmp_result *r)
{
    cJSON *o = attach(c, arr, NULL, cJSON_CreateObject());
    put_str(c, o, RK_WHAT, what);
    put_str(c, o, RK_NAME, name);
    put_num(c, o, RK_RELATIVE, r->estimate); /* what passed the threshold */
    put_num(c, o, RK_RELATIVE_LOW, r->rel_low);
    put_num(c, o, RK_P_VALUE, r->p);
    put_str(c, o, RK_METHOD, cmp_method_name(r->method));
}

static cmp_result row_result(const cJSON *op)
{
    cmp_result r = cmp_no_test();
    const char *m = str_or(op, RK_METHOD, "none");
    r.method = strcmp(m, "between_runs") == 0     ? CMP_BETWEEN_RUNS
               : strcmp(m, "within_run") == 0     ? CMP_WITHIN_RUN
               : strcmp(m, "speed_adjusted") == 0 ? CMP_SPEED_ADJUSTED
                                                  : CMP_NO_TEST;
    r.relative = num_or(op, RK_RELATIVE, NAN);
    r.estimate = num_or(op, RK_RELATIVE_TO_RUN, r.relative);
    r.rel_low = num_or(op, RK_RELATIVE_LOW, NAN);
    r.p = num_or(op, RK_P_VALUE, 1.0);
    r.significant = cJSON_IsTrue(get(op, RK_SIGNIFICANT));
    return r;
}

/* A significant slowdown past the threshold (rules.md §6.4) of the mean
 * step time, or of an operation that takes at least min_share of the time
 * on either side. With one run a side only the step time can fail: an
 * operation's time can move between whole runs by itself (a convolution's
 * algorithm is chosen at run time), which one run cannot show, while the
 * step time is what the user pays. */
/* The larger share of the time an operation's row shows on a side. */
static double op_share(const cmp_ctx *c, const char *name)
{
    double share = 0;
    for (int i = 0; i < 2; i++) {
        size_t runs;
        double v = op_side_mean(&c->side[i], name, OPF(incl_share), &runs);
        share = fmax(share, runs && isfinite(v) ? v : 0.0);
    }
    return share;
}

static void add_regression(cmp_ctx *c, cJSON *cmp, const cmp_result *steps,
                           const compare_ops *ops)
{
    cJSON *o = put_obj(c, cmp, RK_REGRESSION);
    int asked = c->o.regression_pct >= 0;
    put_opt(c, o, RK_THRESHOLD_PCT, asked, c->o.regression_pct);
    cJSON *reasons = attach(c, o, RK_REASONS, cJSON_CreateArray());
    if (asked) {
        double limit = c->o.regression_pct / 100.0;
        if (cmp_regressed_past(steps, limit))
            add_reason(c, reasons, "step_time", "mean step time", steps);
        size_t uncounted = 0;
        for (size_t i = 0; i < ops->n && c->ok; i++) {
            /* judged as its row reads, built only for the few large ones */
            if (op_share(c, ops->v[i].name) < c->o.min_share)
                continue;
            cJSON *op = op_row(c, &ops->v[i], &ops->r[i], ops->level[i]);
            cmp_result r = row_result(op);
            cJSON_Delete(op);
            if (!op || !cmp_regressed_past(&r, limit))
                continue;
            /* one run a side: a change inside the runs may be one process
             * slower than the other, which fails the check only when asked */
            if (r.method == CMP_BETWEEN_RUNS || r.method == CMP_SPEED_ADJUSTED ||
                (r.method == CMP_WITHIN_RUN && c->o.ops_within_run))
                add_reason(c, reasons, "operation", ops->v[i].name, &r);
            else if (r.method == CMP_WITHIN_RUN)
                uncounted++;
        }
        put_num(c, o, RK_WITHIN_RUN_UNCOUNTED, (double)uncounted);
    }
    put_bool(c, o, RK_REGRESSED, cJSON_GetArraySize(reasons) > 0);
}

int compare_regressed(const cJSON *cmp)
{
    return cJSON_IsTrue(get(get(cmp, RK_REGRESSION), RK_REGRESSED));
}

/* ---- the whole comparison ------------------------------------------------------------- */

static void add_options(cmp_ctx *c, cJSON *cmp)
{
    cJSON *o = put_obj(c, cmp, RK_OPTIONS);
    put_num(c, o, RK_NOISE_PCT, c->o.noise_pct);
    put_num(c, o, RK_ALPHA, c->o.alpha);
    put_opt(c, o, RK_FAIL_ON_REGRESSION_PCT, c->o.regression_pct >= 0, c->o.regression_pct);
    put_num(c, o, RK_MIN_SHARE, c->o.min_share);
}

static void build(cmp_ctx *c, cJSON *cmp, compare_ops *ops)
{
    cmp_result steps = step_test(c);
    put_str(c, cmp, RK_SCHEMA, "prof-compare");
    put_num(c, cmp, RK_VERSION, 4);
    add_options(c, cmp);
    add_run(c, cmp, 0);
    add_run(c, cmp, 1);
    put_str(c, cmp, RK_METHOD, c->side[0].nruns >= 2 || c->side[1].nruns >= 2
                                  ? "between_runs" : "within_run");
    add_warnings(c, cmp);
    add_notes(c, put_arr(c, cmp, RK_NOTES));
    add_summary(c, cmp, &steps);
    add_step_test(c, cmp, &steps);
    add_speedup(c, cmp, &steps);
    add_memory(c, cmp);
    add_operations(c, cmp, ops);
    add_bottlenecks(c, cmp);
    add_regression(c, cmp, &steps, ops);
}

void compare_ops_free(compare_ops *ops)
{
    if (!ops)
        return;
    free(ops->c.side[0].runs);
    free(ops->c.side[1].runs);
    free(ops->v);
    free(ops->r);
    free(ops->level);
    free(ops);
}

static int side_usable(const compare_run_side *s)
{
    if (!s || s->nruns == 0 || !s->runs)
        return 0;
    for (size_t i = 0; i < s->nruns; i++)
        if (!s->runs[i] || !cJSON_IsObject(get(s->runs[i]->report, RK_SUMMARY)))
            return 0;
    return 1;
}

static int copy_side(cmp_side *d, const compare_run_side *s)
{
    d->nruns = s->nruns;
    d->path = s->path;
    if (!(d->runs = malloc(s->nruns * sizeof *d->runs)))
        return -1;
    memcpy(d->runs, s->runs, s->nruns * sizeof *d->runs);
    return 0;
}

cJSON *compare_build_runs(const compare_run_side *before, const compare_run_side *after,
                          const compare_options *o, compare_ops **ops, prof_error *err)
{
    *ops = NULL;
    if (!side_usable(before) || !side_usable(after)) {
        prof_error_set(err, PROF_ERR_INVALID, "not an analyze report (no summary or operations)");
        return NULL;
    }
    compare_ops *res = calloc(1, sizeof *res);
    cJSON *cmp = NULL;
    if (res) {
        cmp_ctx *c = &res->c;
        c->ok = 1;
        if (o)
            c->o = *o;
        else
            compare_options_default(&c->o);
        if (copy_side(&c->side[0], before) == 0 && copy_side(&c->side[1], after) == 0 &&
            (cmp = cJSON_CreateObject()))
            build(c, cmp, res);
        else
            c->ok = 0;
    }
    if (!res || !res->c.ok) {
        cJSON_Delete(cmp);
        compare_ops_free(res);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
        return NULL;
    }
    *ops = res;
    return cmp;
}

size_t compare_ops_count(const compare_ops *ops)
{
    return ops ? ops->n : 0;
}

cJSON *compare_ops_row(const compare_ops *ops, size_t i)
{
    if (!ops || i >= ops->n)
        return NULL;
    cmp_ctx c = ops->c;
    c.ok = 1;
    return op_row(&c, &ops->v[i], &ops->r[i], ops->level[i]);
}

cJSON *compare_ops_brief(const compare_ops *ops, size_t i)
{
    if (!ops || i >= ops->n)
        return NULL;
    const op_pair *p = &ops->v[i];
    size_t rb, ra;
    double gpu;
    op_runs(&ops->c, p->name, &rb, &ra);
    cJSON *row = cJSON_CreateObject(), *item;
    /* references and constant keys: no copies of the text */
    int ok = row && (item = cJSON_CreateStringReference(p->name)) &&
             cJSON_AddItemToObjectCS(row, RK_NAME, item);
    ok = ok && (item = cJSON_CreateStringReference(op_status(&ops->r[i], rb > 0, ra > 0))) &&
         cJSON_AddItemToObjectCS(row, RK_STATUS, item);
    if (ok && gpu_change(&ops->c, p->name, &gpu) && isfinite(gpu))
        ok = (item = cJSON_CreateNumber(gpu)) && cJSON_AddItemToObjectCS(row, RK_GPU_RELATIVE, item);
    if (!ok) {
        cJSON_Delete(row);
        return NULL;
    }
    return row;
}

cJSON *compare_build_sides(const compare_side *before, const compare_side *after,
                           const compare_options *o, prof_error *err)
{
    const compare_side *in[2] = { before, after };
    compare_run **runs[2] = { NULL, NULL };
    compare_run_side sides[2];
    compare_ops *ops = NULL;
    cJSON *cmp = NULL;
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        const compare_side *s = in[i];
        if (!s || s->nruns == 0 || !s->runs) {
            prof_error_set(err, PROF_ERR_INVALID, "not an analyze report (no summary or operations)");
            goto out;
        }
        for (size_t r = 0; r < s->nruns; r++)
            if (!cJSON_IsObject(get(s->runs[r], RK_SUMMARY)) ||
                !cJSON_IsArray(get(s->runs[r], RK_OPERATIONS))) {
                prof_error_set(err, PROF_ERR_INVALID,
                               "not an analyze report (no summary or operations)");
                goto out;
            }
    }
    for (int i = 0; i < 2 && ok; i++) {
        ok = (runs[i] = calloc(in[i]->nruns, sizeof *runs[i])) != NULL;
        for (size_t r = 0; ok && r < in[i]->nruns; r++)
            ok = (runs[i][r] = run_view(in[i]->runs[r])) != NULL;
        sides[i] = (compare_run_side){ runs[i], in[i]->nruns, in[i]->path };
    }
    if (ok)
        cmp = compare_build_runs(&sides[0], &sides[1], o, &ops, err);
    else
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
    /* every row in place, as the callers of this form read them */
    cJSON *arr = cmp ? cJSON_GetObjectItemCaseSensitive(cmp, RK_OPERATIONS) : NULL;
    for (size_t i = 0; cmp && i < ops->n; i++) {
        cJSON *row = compare_ops_row(ops, i);
        if (!row || !cJSON_AddItemToArray(arr, row)) {
            cJSON_Delete(row);
            cJSON_Delete(cmp);
            cmp = NULL;
            prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the comparison");
        }
    }
out:
    compare_ops_free(ops);
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; runs[i] && r < in[i]->nruns; r++)
            compare_run_free(runs[i][r]);
    free(runs[0]);
    free(runs[1]);
    return cmp;
}

cJSON *compare_build(const cJSON *before, const cJSON *after, const compare_options *o,
                     prof_error *err)
{
    const cJSON *b[1] = { before }, *a[1] = { after };
    compare_side sb = { b, 1, NULL }, sa = { a, 1, NULL };
    return compare_build_sides(&sb, &sa, o, err);
}
