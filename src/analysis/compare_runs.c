/* compare_runs.c - a run as compare holds it: its report without the
 * operation rows, and each operation in some 150 bytes and its name, so
 * that profiles of a million names compare in memory near what analyzing
 * one takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/compare_int.h"
#include "analysis/report_keys.h"
#include "util/error.h"

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
    const cJSON *st = cmp_get(op, RK_STEADY), *b;
    double m, batch[CMP_MAX_BATCHES];
    size_t nb = 0;
    cJSON_ArrayForEach(b, cmp_get(st, RK_BATCH_MEANS_NS))
        if (nb < CMP_MAX_BATCHES && cJSON_IsNumber(b) && isfinite(b->valuedouble))
            batch[nb++] = b->valuedouble;
    double *kept = nb ? carve(r, nb * sizeof *kept) : NULL;
    o->name = carve_text(r, cmp_str_or(op, RK_NAME, ""));
    o->kind = intern_kind(r, cmp_str_or(op, RK_KIND, ""));
    if (!o->name || !o->kind || (nb && !kept))
        return -1;
    if (nb)
        memcpy(kept, batch, nb * sizeof *kept);
    o->calls = cmp_num_or(op, RK_CALLS, 0);
    o->incl_ns = cmp_num_or(op, RK_INCL_NS, 0);
    o->self_ns = cmp_num_or(op, RK_SELF_NS, 0);
    o->mean_ns = cmp_num_or(op, RK_MEAN_NS, 0);
    o->stddev_ns = cmp_num_or(op, RK_STDDEV_NS, 0);
    o->incl_share = cmp_num_or(op, RK_INCL_SHARE, 0);
    o->has_gpu = cmp_get(op, RK_GPU_NS) != NULL;
    o->gpu_ns = cmp_num_or(op, RK_GPU_NS, 0);
    o->gpu_self_ns = cmp_num_or(op, RK_GPU_SELF_NS, 0);
    o->gpu_kernels = cmp_num_or(op, RK_GPU_KERNELS, 0);
    o->steady = (cmp_steady){ cmp_get_num(st, RK_MEAN_NS, &m) && isfinite(m) ? m : NAN, kept, nb };
    r->nops++;
    return 0;
}

/* The rows still in report's operations into r, then every row sorted by
 * name for lookups; -1 out of memory. */
static int read_ops(compare_run *r, const cJSON *report)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, cmp_get(report, RK_OPERATIONS))
        if (compare_run_add_op(r, op) != 0)
            return -1;
    if (r->nops > 1) /* none: r->ops may be NULL, which qsort must not get */
        qsort(r->ops, r->nops, sizeof *r->ops, by_op_name);
    return 0;
}

/* A run over a report: its operations read, the report borrowed. */
compare_run *cmp_run_view(const cJSON *report)
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
    if (!cJSON_IsObject(cmp_get(report, RK_SUMMARY)) ||
        !cJSON_IsArray(cmp_get(report, RK_OPERATIONS))) {
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

const cmp_op *cmp_side_op(const cmp_side *s, size_t run, const char *name)
{
    const compare_run *r = s->runs[run];
    return r->nops ? bsearch(name, r->ops, r->nops, sizeof *r->ops, name_vs_op) : NULL;
}

