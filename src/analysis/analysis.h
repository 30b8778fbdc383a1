/* analysis.h - what the rules and report sections share while one report is
 * built: the profile, the options, per-step and per-series results computed
 * once, and small JSON helpers whose failures (out of memory) are sticky in
 * ctx->ok so that building code reads straight through. Internal to
 * src/analysis/. */
#ifndef PROF_ANALYSIS_ANALYSIS_H
#define PROF_ANALYSIS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "analysis/ranks.h"
#include "analysis/report.h"
#include "analysis/stats.h"
#include "analysis/trend.h"
#include "model/profile.h"
#include "prof.h"
#include "util/fmt.h"
#include "util/jbuild.h"

#define MIB (1024.0 * 1024.0)
#define MIN_FIT_POINTS 10

/* Step durations of one profile (rules.md §1: complete steps). */
typedef struct step_stats {
    size_t n;              /* steps used of those the model kept           */
    size_t count;          /* steps used in the whole profile: n, unless the
                              model thinned the steps (profile.h MODEL_KEEP) */
    double scale;          /* count / n: what a count over the kept steps
                              estimates of the whole profile, 1 unthinned   */
    double *dur;           /* their durations, in step order               */
    uint32_t *index;       /* their indexes in model->steps (numbers there) */
    double mean, sd, p50, p95, min, max;
    unsigned char *outlier; /* per model step: 1 for an outlier           */
    size_t noutliers;      /* outliers of the whole profile, or, when
                              outliers_estimated, what the kept steps'
                              outliers times scale estimate                 */
    double median, sigma, excess, total;  /* of the outlier test; excess
                              over the median (estimated likewise), total of
                              every used step                              */
    model_long_step *outliers; /* the outliers by step number: all of them,
                              or the kept ones when outliers_estimated     */
    size_t nlisted;
    model_long_step worst; /* the longest outlier, the first of equals    */
    int outliers_estimated;
} step_stats;

/* Where a memory series is fitted (rules.md §4.2): per step, on the last
 * sample of each step, or over time, on every sample. */
typedef enum { LEAK_AXIS_NONE, LEAK_AXIS_STEP, LEAK_AXIS_TIME } leak_axis;

/* One memory series: its per-step points, the points of its axis, its fits
 * and the leak verdict (rules.md §4.2). */
typedef struct leak_series {
    const model_series *s;
    size_t *at_step;       /* indexes in s->samples of the per-step points     */
    size_t nsteps;         /* how many                                          */
    leak_axis axis;
    size_t n;              /* points on the axis                                */
    double *x, *y;         /* step number or seconds, and bytes: only while
                              leak_analyze runs, NULL after it (memory per step);
                              what the report reads of them, and the times of
                              those points (ns), are kept in at                 */
    struct {
        double x_warmup, x_onset, x_last, t_warmup, t_onset, t_last;
    } at;
    size_t warmup, onset;  /* indexes of the first point after the warm-up and
                              of the onset of growth, where the fit starts      */
    int has_fit, robust_ok, leak, reaches_capacity;
    trend_line trend;
    double robust_slope, late_slope, floor_rise, floor_need;
    double horizon;        /* in steps or seconds                               */
    double level, end;     /* fitted bytes at the onset and at the last point   */
    double growth, projected; /* over the fit, and at the lower bound over the
                              horizon                                           */
    double capacity;       /* 0 = unknown                                       */
    int has_projection;
    double oom_step, oom_t_ns; /* per step, oom_t_ns is the last point's time
                              until leak_project_time adds oom_steps_after
                              mean steps                                      */
    double oom_steps_after;
} leak_series;

/* One rank in the collectives matched across ranks (rules.md §4.9). */
typedef struct rank_waits {
    size_t collectives;    /* matched collectives it took part in            */
    size_t last;           /* of which it arrived last                        */
    double wait_ns;        /* its own waiting for the last to arrive          */
    double caused_ns;      /* the others' mean wait in those it arrived last  */
    double basis_ns;       /* its complete steps' time, or without steps the
                              span of its matched collectives                 */
    uint64_t first_ns, last_ns; /* span of its matched collectives            */
    double clock_offset_ns; /* aligned by ends: its clock minus the first
                               rank's, the median over the collectives    */
} rank_waits;

/* Collectives whose ends estimate the ranks' clock offsets (align "end"). */
#define CLOCK_SAMPLES 1024u

typedef struct collective_match {
    const char *source;    /* "kernels", "regions", or NULL: too few matched  */
    const char *align;     /* "start" (one host) or "end"                     */
    int hosts_known;       /* every rank names its host                       */
    size_t matched;
    rank_waits *ranks;     /* per rank                                        */
    int64_t *ends;         /* align "end": per rank, CLOCK_SAMPLES differences
                              of its end from the first rank's              */
    size_t nends;          /* collectives in ends so far                      */
} collective_match;

/* A step time that grew over the run, not flagged because the machine, not
 * the program, looks to be the cause (slowdown.c, rules.md §4.6); the
 * notes say so. rel 0: none. */
typedef struct slowdown_busy {
    double rel;            /* the drift, as step_slowdown measures it            */
    double floor;          /* how much the fastest steps rose                    */
    double first, last;    /* step numbers fitted                                */
    double ops_ratio;      /* every operation alike: their median growth; NaN when
                              it was the bursts alone                              */
} slowdown_busy;

/* Outlier steps in which every operation ran slower alike, left to the
 * machine (steps.c, rules.md §4.7); count 0: none. */
typedef struct outliers_busy {
    double count, episodes;   /* outlier steps, runs of consecutive ones        */
    double step_ratio;        /* their mean over the median step                */
    double ops_ratio;         /* the operations' median growth in them          */
} outliers_busy;

typedef struct analysis_ctx {
    const profile_model *m;             /* the profile the sections describe */
    const rank_summary *ranks;          /* several ranks: every one (ranks.c) */
    size_t nranks;
    analysis_options o;
    cJSON *meta;                        /* m's metadata, parsed (or NULL)    */
    step_stats steps;
    leak_series *leaks;                 /* one per memory series             */
    size_t nleaks;
    double gpu_busy_ns;                 /* over every device                 */
    collective_match coll;              /* several ranks: their collectives  */
    slowdown_busy busy;                 /* a growth left to the machine      */
    outliers_busy busy_outliers;        /* slow steps left to the machine    */
    cJSON *bottlenecks;
    int ok;                             /* 0 once any allocation failed      */
} analysis_ctx;

/* The damage an import of another tool's trace met (metadata "import",
 * "damaged"), or NULL when it read the whole trace. */
const char *analysis_import_damage(const cJSON *meta);
/* Whether the profile analysed holds only part of its run: the file is cut
 * short, or it was imported from a trace that is. */
int analysis_partial(const analysis_ctx *c);

/* report_shared.c: the entry of "profiles" of m (NULL out of memory, c->ok
 * cleared), and the bottlenecks sorted by consequence, severity and impact
 * (rules.md §1) */
cJSON *report_profile_entry(analysis_ctx *c, const profile_model *m);
void report_sort_bottlenecks(analysis_ctx *c, cJSON *arr);

/* report_shared.c: qsort_r order of indexes into the model's ops (arg): by self
 * time, largest first, then by name. */
int ops_by_self_desc(const void *a, const void *b, void *arg);

/* The report's JSON through the sticky builder (util/jbuild.h), whose
 * flag is c->ok: on failure they clear it and return NULL; a NULL parent
 * is accepted (and fails). Non-finite numbers become null. */
static inline cJSON *jnum(analysis_ctx *c, cJSON *o, const char *key, double v)
{
    return jb_num(&c->ok, o, key, v);
}
static inline cJSON *jstr(analysis_ctx *c, cJSON *o, const char *key, const char *v)
{
    return jb_str(&c->ok, o, key, v);
}
static inline cJSON *jbool(analysis_ctx *c, cJSON *o, const char *key, int v)
{
    return jb_bool(&c->ok, o, key, v);
}
static inline cJSON *jnull(analysis_ctx *c, cJSON *o, const char *key)
{
    return jb_null(&c->ok, o, key);
}
static inline cJSON *jobj(analysis_ctx *c, cJSON *o, const char *key)
{
    return jb_obj(&c->ok, o, key);
}
static inline cJSON *jarr(analysis_ctx *c, cJSON *o, const char *key)
{
    return jb_arr(&c->ok, o, key);
}
static inline cJSON *jpush_obj(analysis_ctx *c, cJSON *arr)
{
    return jb_obj(&c->ok, arr, NULL);
}
static inline void jpush_num(analysis_ctx *c, cJSON *arr, double v)
{
    jb_num(&c->ok, arr, NULL, v);
}
void *xcalloc(analysis_ctx *c, size_t n, size_t size);

/* ---- lists cut to the report's limits (jsonout.c) ---- */

/* The kept points of a series of n (stats_decimate): returns their count
 * and sets *keep to the kept indexes, or to NULL when every point is
 * kept (then point k is index k). None when the options list no points. */
size_t report_points(analysis_ctx *c, const void *series, size_t n, stats_value_fn value,
                     size_t **keep);

/* An item by a value, for qsort with by_value_desc: the largest value
 * first, ties in index order. */
typedef struct valued {
    double value;
    size_t index;
} valued;

int by_value_desc(const void *a, const void *b);

/* Which of n items a per-name list shows (options max_names): NULL when
 * it shows every one; else a flag per item (caller frees), set for the
 * max_names of largest weight (ties: the first), with *cut the number
 * left out. weight: NAN for the items that are not in the list. */
unsigned char *report_listed(analysis_ctx *c, const void *items, size_t n, stats_value_fn weight,
                             size_t *cut);

/* The sum of the rows a list cut to top leaves out, into the report's
 * "others" object under key (options others). */
void report_others(analysis_ctx *c, cJSON *report, const char *key, size_t count,
                   uint64_t calls, uint64_t self_ns, uint64_t incl_ns);

/* A new finding appended to ctx->bottlenecks; returns its (empty) evidence
 * object for the rule to fill. Titles and recommendations are formatted
 * beforehand with fmt_text() into the caller's buffer. */
cJSON *finding_add(analysis_ctx *c, const char *rule, const char *severity,
                   const char *subject, double impact, const char *title,
                   const char *recommendation);
const char *fmt_text(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *severity_by(double v, double high, double medium); /* "high"/"medium"/"low" */
const char *op_kind_name(uint32_t kind);
/* "12.3%" into buf; durations: fmt_duration (util/fmt.h), as the reports */
const char *fmt_pct(char *buf, size_t size, double share);

/* steady.c: the steady state compare tests (rules.md §6.2) */
void steady_steps(analysis_ctx *c, cJSON *step_time);
void steady_op(analysis_ctx *c, cJSON *op_obj, const model_op *op);

/* steps.c */
int steps_analyze(const profile_model *m, step_stats *out); /* 0 or -1 out of memory */
void step_stats_free(step_stats *s);
/* A span of time, [from, to) in ns. */
typedef struct time_window {
    uint64_t from, to;
} time_window;

/* How an operation's mean call changed between two sets of time windows. */
typedef struct op_growth {
    const model_op *op;
    double ratio;          /* mean call in `to` over mean call in `from`          */
} op_growth;

/* Each CPU operation's growth from the windows `from` to the windows `to`
 * (to NULL: from the time outside `from` to the time inside it), by its
 * time batches whose middle lies there, largest first, into *out (the
 * caller frees it); their number, SIZE_MAX out of memory (slowdown.c). */
size_t ops_growth(analysis_ctx *c, const time_window *from, size_t nfrom, const time_window *to,
                  size_t nto, op_growth **out);
/* Their median growth, weighted by self time; NaN without any. */
double ops_median_growth(const op_growth *g, size_t n);
/* Whether the operations grew alike with the steps: at least ALIKE_MIN_OPS
 * of them, and their median growth at least half the steps' on the log
 * scale (rules.md §4.6): the whole process ran slower. */
int ops_grew_alike(const op_growth *g, size_t n, double step_ratio);

void rule_step_slowdown(analysis_ctx *c);
void rule_step_outliers(analysis_ctx *c);
void rule_straggler_work(analysis_ctx *c);
/* The steps a rank's time is divided by for its figures per step (its
 * sampled steps, else its kept steps; 0 without), its COMM self time per
 * step, and its work per step: mean step time less that (rules.md §4.9). */
double rank_step_basis(const profile_model *m, const step_stats *s);
double rank_comm_per_step(const profile_model *m, const step_stats *s);
double rank_work_per_step(const rank_summary *s);
/* rankrules.c: the slowest rank against the fastest, and the ranks that
 * stand out (rules.md §4.12, §4.13), after rule_straggler; memory_series
 * is the ranks table's (NULL without one). */
void rule_rank_spread(analysis_ctx *c);
void rule_rank_outliers(analysis_ctx *c, const char *memory_series);

/* leak.c */
double leak_capacity(const cJSON *meta, const char *series, double override_bytes);
/* Reads c only (its model, options and metadata, not its steps): report.c
 * runs it on two threads, beside steps_analyze. 0, or -1 out of memory. */
int leak_analyze(const analysis_ctx *c, const model_series *s, leak_series *out);
/* When a leak projected per step reaches capacity, from c->steps.mean: after
 * leak_analyze, which may run before steps_analyze. */
void leak_project_time(const analysis_ctx *c, leak_series *l);
void leak_series_free(leak_series *l);
/* Whether sample i of the series is its value at a step (the step's last
 * sample), with that step's number; i ascending over calls, *cursor 0 at
 * the first. */
int leak_point_step(const analysis_ctx *c, const leak_series *l, size_t *cursor, size_t i,
                    double *step);
/* The report's memory[].fit of the series (rules.md §4.2), or null. */
void leak_report_fit(analysis_ctx *c, cJSON *series, const leak_series *l);
void rule_memory_leak(analysis_ctx *c);

/* rules.c */
void rule_hot_operation(analysis_ctx *c);
/* An operation whose time is another thread's work (rules.md §4.1): its
 * own thread records nothing in it (self time OP_WAITS_OWN of its time or
 * more), its outermost calls of 100 us or more are OP_WAITS_OUTER of its
 * time or more, and other threads ran regions during OP_WAITS_COVERED of
 * those or more. Not called hot; a note says what it waits for. */
#define OP_WAITS_OWN 0.9
#define OP_WAITS_OUTER 0.8
#define OP_WAITS_COVERED 0.8
int op_waits_for_others(const model_op *op);
void rule_cpu_gpu_sync(analysis_ctx *c);
void rule_data_loading(analysis_ctx *c);
void rule_dropped_events(analysis_ctx *c);
double sync_share(const analysis_ctx *c, const char **basis);
/* The syncs that waited MODEL_WAIT_SHORT_NS or more, of waits by band. */
uint64_t sync_waited(const uint64_t waits[MODEL_WAIT_BANDS]);
/* waited and the waits by band, into o (rules.md §4.3). */
void sync_waits_json(analysis_ctx *c, cJSON *o, const uint64_t waits[MODEL_WAIT_BANDS]);
/* straggler.c: collectives matched across ranks (0, or -1 out of memory or
 * a failed read of their store: collective_store_error),
 * the straggler rule, and each rank's figures for the ranks section */
int straggler_match(analysis_ctx *c);
void rule_straggler(analysis_ctx *c);
void straggler_rank_fields(analysis_ctx *c, cJSON *o, size_t rank_index);
/* The note on clocks aligned by collective ends into buf; "" when the
 * ranks share a clock or too few collectives were matched. */
void straggler_clock_note(analysis_ctx *c, char *buf, size_t size);

/* gpurules.c */
void summary_gpu(analysis_ctx *c, cJSON *summary);
/* A rank's row of the ranks table (rules.md §4.9): the shares of its
 * devices' time, summed over them as each device's summary counts it
 * (the steps that kept their events, else the span), that they were busy,
 * idle, and ran communication no other kernel overlapped. Nothing for a
 * rank without GPU activity. */
void rank_gpu_fields(analysis_ctx *c, cJSON *o, const profile_model *m);
void rule_gpu_idle(analysis_ctx *c);
void rule_exposed_comm(analysis_ctx *c);
void rule_launch_bound(analysis_ctx *c);

/* opclass.c: the fix for what op is, by its class (rules.md §4.1), written
 * into buf; NULL when its class does not decide (none, one prof does not
 * know, or a kind the class does not change). */
const char *opclass_fix(const model_op *op, char *buf, size_t size);

/* Complete steps (rules.md §1), and those of them that kept their events. */
double counted_steps(const profile_model *m);
double sampled_steps(const profile_model *m);

#endif
