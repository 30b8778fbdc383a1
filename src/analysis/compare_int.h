/* compare_int.h - the parts of `prof compare` (compare.h) shared between
 * its files, private to them:
 *
 *   compare.c       the comparison: runs, warnings, summary, memory,
 *                   bottlenecks, regression, and the whole
 *   compare_ops.c   the operations and their tests, and a test's fields
 *   compare_runs.c  a run's operations, held compactly
 *   compare_json.c  reading the reports and writing the comparison (JSON
 *                   failures sticky in ctx->ok)
 */
#ifndef PROF_ANALYSIS_COMPARE_INT_H
#define PROF_ANALYSIS_COMPARE_INT_H

#include <math.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/compare_stats.h"
#include "util/jbuild.h"

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

/* An operation of either side, by name. */
typedef struct op_pair {
    const char *name;      /* in a run's text                      */
    double weight;         /* the larger mean total, for the order */
} op_pair;

/* A field of cmp_op, by its offset. */
#define OPF(field) offsetof(cmp_op, field)

/* The operations' rows, kept as their tests and built one at a time: a
 * row as JSON takes some 3 KB, a million of them more than the runs. */
struct compare_ops {
    cmp_ctx c;
    op_pair *v;            /* the operations, largest first                   */
    cmp_result *r;         /* each one's test                                 */
    double *level;         /* and the level it was held to                    */
    size_t n;
};

/* ---- compare_json.c ---- */
const cJSON *cmp_get(const cJSON *o, const char *key);
int cmp_get_num(const cJSON *o, const char *key, double *v);
double cmp_num_or(const cJSON *o, const char *key, double fallback);
const char *cmp_str_or(const cJSON *o, const char *key, const char *fallback);
const cJSON *cmp_get_path(const cJSON *o, const char *a, const char *b, const char *c);
const cJSON *cmp_first_profile(const cJSON *report);
const cJSON *cmp_find_named(const cJSON *arr, const char *key, const char *name);
double cmp_stat_steps(const cJSON *report);
/* The comparison's JSON through the sticky builder (util/jbuild.h), whose
 * flag is c->ok; cmp_put_opt: a number when have, else null. */
static inline void cmp_put_num(cmp_ctx *c, cJSON *o, const char *key, double v)
{
    jb_num(&c->ok, o, key, v);
}
static inline void cmp_put_opt(cmp_ctx *c, cJSON *o, const char *key, int have, double v)
{
    jb_num(&c->ok, o, key, have ? v : NAN);
}
static inline void cmp_put_str(cmp_ctx *c, cJSON *o, const char *key, const char *v)
{
    jb_str(&c->ok, o, key, v);
}
static inline void cmp_put_bool(cmp_ctx *c, cJSON *o, const char *key, int v)
{
    jb_bool(&c->ok, o, key, v);
}
static inline cJSON *cmp_put_obj(cmp_ctx *c, cJSON *o, const char *key)
{
    return jb_obj(&c->ok, o, key);
}
static inline cJSON *cmp_put_arr(cmp_ctx *c, cJSON *o, const char *key)
{
    return jb_arr(&c->ok, o, key);
}
void cmp_note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
double cmp_relative(double before, double after);
const char *cmp_side_name(int i);
const cJSON *cmp_run_of(const cmp_side *s, size_t i);
int cmp_most_runs(size_t count, size_t runs);

/* ---- compare_runs.c ---- */
const cmp_op *cmp_side_op(const cmp_side *s, size_t run, const char *name);
compare_run *cmp_run_view(const cJSON *report);

/* ---- compare_ops.c ---- */
void cmp_put_test(cmp_ctx *c, cJSON *o, const cmp_result *r);
double cmp_op_side_mean(const cmp_side *s, const char *name, size_t field, size_t *runs);
cJSON *cmp_op_row(cmp_ctx *c, const op_pair *p, const cmp_result *r, double level);
void cmp_add_operations(cmp_ctx *c, cJSON *cmp, compare_ops *ops);
void cmp_op_runs(const cmp_ctx *c, const char *name, size_t *rb, size_t *ra);
const char *cmp_op_status(const cmp_result *r, int hb, int ha);
int cmp_gpu_change(const cmp_ctx *c, const char *name, double *v);

#endif
