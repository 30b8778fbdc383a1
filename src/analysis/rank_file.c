/* rank_file.c - a rank's summary as a file (formats/rank-summary.md): the
 * same fields as the summary ranks.c builds from a model, written as JSON
 * (collectives as decimal text, so that no digit of a time is lost) and
 * read back, so that ranks summarised on other machines merge into the
 * same report as the profiles analysed here. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "analysis/ranks_int.h"
#include "analysis/report_keys.h"
#include "analysis/sections.h"
#include "util/error.h"

/* ---- the summary file ---------------------------------------------------------------- */

/* Collectives as text: "device stream start_ns dur_ns" a line, decimal, so
 * that times past 2^53 ns keep every digit (JSON numbers are doubles). */
static char *collectives_text(const rank_summary *s, const collective_list *l)
{
    size_t cap = l->n * 64 + 1;
    char *t = malloc(cap), *p = t;
    if (!t)
        return NULL;
    *p = '\0';
    collective_cursor *cur = malloc(sizeof *cur);
    if (!cur) {
        free(t);
        return NULL;
    }
    collective_cursor_init(cur, s->store, l->at, l->n);
    for (size_t i = 0; i < l->n; i++) {
        const model_collective *v = collective_cursor_next(cur);
        if (!v) {
            free(cur);
            free(t);
            return NULL;
        }
        p += snprintf(p, cap - (size_t)(p - t), "%" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64
                      "\n", v->device, v->stream, v->start_ns, v->dur_ns);
    }
    free(cur);
    return t;
}

static int add_ref(cJSON *o, const char *key, cJSON *item)
{
    return !item || cJSON_AddItemReferenceToObject(o, key, item);
}

static int add_collectives(cJSON *o, const char *key, const rank_summary *s,
                           const collective_list *l)
{
    char *t = collectives_text(s, l);
    int ok = t && cJSON_AddStringToObject(o, key, t) != NULL;
    free(t);
    return ok;
}

/* Bucket size and first as decimal text: they may pass 2^53. */
static int add_buckets(cJSON *o, const rank_summary *s)
{
    char size[24], first[24];
    snprintf(size, sizeof size, "%" PRIu64, s->bucket_size);
    snprintf(first, sizeof first, "%" PRIu64, s->bucket_first);
    cJSON *b = cJSON_AddObjectToObject(o, SK_BUCKETS);
    cJSON *sum = cJSON_CreateDoubleArray(s->bucket_sum, (int)s->nbuckets);
    cJSON *count = cJSON_CreateArray();
    for (size_t i = 0; count && i < s->nbuckets; i++) {
        cJSON *v = cJSON_CreateNumber((double)s->bucket_count[i]);
        if (!v || !cJSON_AddItemToArray(count, v)) {
            cJSON_Delete(v);
            cJSON_Delete(count);
            count = NULL;
        }
    }
    int ok = b && sum && count && cJSON_AddStringToObject(b, SK_SIZE, size) &&
             cJSON_AddStringToObject(b, SK_FIRST, first) && cJSON_AddItemToObject(b, SK_SUM, sum);
    if (!ok)
        cJSON_Delete(sum);
    if (!ok || !cJSON_AddItemToObject(b, SK_COUNT, count)) {
        cJSON_Delete(count);
        return 0;
    }
    if (!s->has_gpu)
        return 1;
    cJSON *gpu = cJSON_CreateDoubleArray(s->bucket_gpu, (int)s->nbuckets);
    cJSON *busy = cJSON_CreateDoubleArray(s->bucket_busy, (int)s->nbuckets);
    ok = gpu && cJSON_AddItemToObject(b, SK_GPU_NS, gpu);
    if (!ok)
        cJSON_Delete(gpu);
    if (!ok || !cJSON_AddItemToObject(b, SK_BUSY_NS, busy)) {
        cJSON_Delete(busy);
        return 0;
    }
    return 1;
}

static int add_ops(cJSON *o, const rank_summary *s)
{
    if (!s->ops)
        return 1;
    analysis_ctx c = { .ok = 1 };
    cJSON *arr = jarr(&c, o, SK_OPS);
    for (size_t i = 0; i < s->nops; i++) {
        cJSON *x = jpush_obj(&c, arr);
        jstr(&c, x, RK_NAME, s->ops[i].name);
        jbool(&c, x, SK_GPU, s->ops[i].gpu);
        jnum(&c, x, SK_NS_PER_STEP, s->ops[i].ns_per_step);
    }
    return c.ok;
}

cJSON *rank_summary_json(const rank_summary *s)
{
    cJSON *o = cJSON_CreateObject(), *steps = cJSON_CreateObject();
    int ok = o && steps && cJSON_AddStringToObject(o, RK_SCHEMA, RANK_SUMMARY_SCHEMA) &&
             cJSON_AddNumberToObject(o, RK_VERSION, 1) && add_ref(o, SK_PROFILE, s->profile) &&
             cJSON_AddStringToObject(o, SK_HOST, s->host) &&
             cJSON_AddItemToObject(o, SK_STEPS, steps);
    if (!ok)
        cJSON_Delete(steps);
    analysis_ctx c = { .ok = ok };
    jnum(&c, steps, SK_N, (double)s->steps_n);
    jnum(&c, steps, SK_COUNT, (double)s->steps_count);
    jnum(&c, steps, SK_MEAN, s->step_mean);
    jnum(&c, steps, SK_P50, s->step_p50);
    jnum(&c, steps, SK_COMM, s->comm_per_step);
    ok = c.ok && add_buckets(o, s) && add_ref(o, SK_ROW, s->row) &&
         add_ref(o, SK_LAUNCHES, s->launches) &&
         add_ref(o, SK_PEAKS, s->peaks) && add_ref(o, SK_FINDINGS, s->findings) &&
         add_ops(o, s) &&
         add_collectives(o, SK_KERNELS, s, &s->kernels) &&
         add_collectives(o, SK_REGIONS, s, &s->regions) &&
         add_ref(o, SK_REPORT, s->report);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int rank_summary_sniff(const char *head, size_t len)
{
    return pf_rank_summary_head(head, len);
}

static prof_err corrupt(prof_error *err, const char *what)
{
    return prof_error_set(err, PROF_ERR_CORRUPT, "not a rank summary prof reads: %s", what);
}

/* A whole number in [lo, hi]. */
static int whole(const cJSON *v, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi || v->valuedouble != floor(v->valuedouble))
        return 0;
    *out = v->valuedouble;
    return 1;
}

/* A figure: a number, or null (written for a figure without a value). */
static int figure(const cJSON *v, double *out)
{
    if (cJSON_IsNull(v)) {
        *out = NAN;
        return 1;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return 0;
    *out = v->valuedouble;
    return 1;
}

static int parse_u64(const char **p, uint64_t max, uint64_t *out)
{
    if (**p < '0' || **p > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(*p, &end, 10);
    if (errno || v > max)
        return 0;
    *out = v;
    *p = end;
    return 1;
}

static prof_err parse_collectives(const cJSON *item, collective_store *store,
                                  collective_list *out, prof_error *err)
{
    const char *t = cJSON_GetStringValue(item);
    if (!t)
        return corrupt(err, "no collectives");
    size_t lines = 0;
    for (const char *q = t; *q; q++)
        lines += *q == '\n';
    if (lines > MODEL_COLLECTIVES_MAX)
        return corrupt(err, "more collectives than a profile keeps");
    model_collective *v = calloc(lines ? lines : 1, sizeof *v);
    if (!v)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (; *t; n++) {
        model_collective *k = &v[n];
        uint64_t d, s;
        if (n == lines || !parse_u64(&t, UINT32_MAX, &d) || *t++ != ' ' || !parse_u64(&t, UINT32_MAX, &s) ||
            *t++ != ' ' || !parse_u64(&t, UINT64_MAX, &k->start_ns) || *t++ != ' ' ||
            !parse_u64(&t, UINT64_MAX - k->start_ns, &k->dur_ns) || *t++ != '\n') {
            free(v);
            return corrupt(err, "a collective that is not four numbers");
        }
        k->device = (uint32_t)d;
        k->stream = (uint32_t)s;
    }
    prof_err e = collective_list_store(store, v, n, out, err);
    free(v);
    return e;
}

static int parse_text_u64(const cJSON *v, uint64_t *out)
{
    const char *t = cJSON_GetStringValue(v);
    return t && parse_u64(&t, UINT64_MAX, out) && *t == '\0';
}

/* The buckets' GPU time and busy time: both or neither, as many as the
 * buckets, each a time. */
static prof_err parse_gpu_buckets(const cJSON *b, rank_summary *s, prof_error *err)
{
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(b, SK_GPU_NS);
    const cJSON *busy = cJSON_GetObjectItemCaseSensitive(b, SK_BUSY_NS);
    if (!gpu && !busy)
        return PROF_OK;
    if (!cJSON_IsArray(gpu) || !cJSON_IsArray(busy) ||
        cJSON_GetArraySize(gpu) != (int)s->nbuckets || cJSON_GetArraySize(busy) != (int)s->nbuckets)
        return corrupt(err, "step buckets that are not as written");
    const cJSON *x = gpu->child, *y = busy->child;
    for (size_t i = 0; i < s->nbuckets; i++, x = x->next, y = y->next) {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
            !cJSON_IsNumber(y) || !isfinite(y->valuedouble) || y->valuedouble < 0)
            return corrupt(err, "step buckets that are not as written");
        s->bucket_gpu[i] = x->valuedouble;
        s->bucket_busy[i] = y->valuedouble;
    }
    s->has_gpu = 1;
    return PROF_OK;
}

static prof_err parse_buckets(const cJSON *b, rank_summary *s, prof_error *err)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(b, SK_SUM);
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(b, SK_COUNT);
    int n = cJSON_GetArraySize(sum);
    if (!cJSON_IsObject(b) || !parse_text_u64(cJSON_GetObjectItemCaseSensitive(b, SK_SIZE),
                                              &s->bucket_size) ||
        !parse_text_u64(cJSON_GetObjectItemCaseSensitive(b, SK_FIRST), &s->bucket_first) ||
        !cJSON_IsArray(sum) || !cJSON_IsArray(count) || n > RANK_BUCKETS ||
        cJSON_GetArraySize(count) != n || s->bucket_size == 0 ||
        (s->bucket_size & (s->bucket_size - 1)) != 0 ||
        s->bucket_first > UINT64_MAX / s->bucket_size - (uint64_t)n)
        return corrupt(err, "step buckets that are not as written");
    s->nbuckets = (size_t)n;
    const cJSON *x = sum->child, *y = count->child;
    for (size_t i = 0; i < s->nbuckets; i++, x = x->next, y = y->next) {
        double c;
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
            !whole(y, 0, 1e15, &c))
            return corrupt(err, "step buckets that are not as written");
        s->bucket_sum[i] = x->valuedouble;
        s->bucket_count[i] = (uint64_t)c;
    }
    return parse_gpu_buckets(b, s, err);
}

/* The operations a summary keeps (summary_ops): absent, or as many as it
 * writes, each as it writes it. */
static prof_err parse_ops(const cJSON *o, rank_summary *s, prof_error *err)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(o, SK_OPS), *x;
    if (!ops)
        return PROF_OK;
    int n = cJSON_GetArraySize(ops);
    if (!cJSON_IsArray(ops) || n > 2 * RANK_OPS)
        return corrupt(err, "operations that are not as written");
    size_t len = 0;
    cJSON_ArrayForEach(x, ops) {
        const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(x, SK_GPU);
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, RK_NAME));
        double v;
        if (!name || !cJSON_IsBool(gpu) ||
            !figure(cJSON_GetObjectItemCaseSensitive(x, SK_NS_PER_STEP), &v) || !(v >= 0))
            return corrupt(err, "operations that are not as written");
        len += strlen(name) + 1;
    }
    if (n == 0)
        return PROF_OK;
    if (!(s->ops = ranks_ops_alloc((size_t)n, len)))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    char *at = s->ops[0].name;
    cJSON_ArrayForEach(x, ops) {
        rank_op *op = &s->ops[s->nops++];
        op->name = strcpy(at, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, RK_NAME)));
        at += strlen(at) + 1;
        op->gpu = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, SK_GPU));
        op->ns_per_step = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(x, SK_NS_PER_STEP));
    }
    return PROF_OK;
}

/* An object member taken out of o (NULL when absent or not an object). */
static cJSON *take_object(cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsObject(v) ? cJSON_DetachItemViaPointer(o, v) : NULL;
}

static prof_err parse_fields(cJSON *o, int keep_report, collective_store *store,
                             rank_summary *s, prof_error *err)
{
    double v[8];
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(o, SK_STEPS);
    s->profile = take_object(o, SK_PROFILE);
    s->row = take_object(o, SK_ROW);
    s->peaks = take_object(o, SK_PEAKS);
    s->launches = take_object(o, SK_LAUNCHES);
    s->findings = take_object(o, SK_FINDINGS);
    if (keep_report)
        s->report = take_object(o, SK_REPORT);
    if (!s->profile || !s->row || !s->peaks || !cJSON_IsObject(steps))
        return corrupt(err, "a section missing");
    if (!(s->path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s->profile, RK_PATH))))
        return corrupt(err, "no path");
    if (!whole(cJSON_GetObjectItemCaseSensitive(s->profile, RK_RANK), -1, INT32_MAX, &v[0]) ||
        !whole(cJSON_GetObjectItemCaseSensitive(s->profile, RK_WORLD_SIZE), -1, INT32_MAX,
               &v[1]))
        return corrupt(err, "no rank or world size");
    s->rank = (int)v[0];
    s->world_size = (int)v[1];
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, SK_HOST));
    if (!host)
        return corrupt(err, "no host");
    if (!(s->host = strdup(host)))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    if (!whole(cJSON_GetObjectItemCaseSensitive(steps, SK_N), 0, 1e15, &v[2]) ||
        !whole(cJSON_GetObjectItemCaseSensitive(steps, SK_COUNT), 0, 1e15, &v[3]) ||
        !figure(cJSON_GetObjectItemCaseSensitive(steps, SK_MEAN), &v[4]) ||
        !figure(cJSON_GetObjectItemCaseSensitive(steps, SK_P50), &v[5]) ||
        !figure(cJSON_GetObjectItemCaseSensitive(steps, SK_COMM), &v[6]))
        return corrupt(err, "step figures that are not numbers");
    s->steps_n = (size_t)v[2];
    s->steps_count = (size_t)v[3];
    s->step_mean = v[4];
    s->step_p50 = v[5];
    s->comm_per_step = isnan(v[6]) ? 0.0 : v[6];
    const cJSON *p;
    cJSON_ArrayForEach(p, s->peaks) {
        if (!cJSON_IsNumber(p) || !p->string)
            return corrupt(err, "a memory peak that is not a number");
    }
    prof_err be = parse_buckets(cJSON_GetObjectItemCaseSensitive(o, SK_BUCKETS), s, err);
    if (be == PROF_OK)
        be = parse_ops(o, s, err);
    if (be != PROF_OK)
        return be;
    s->store = store;
    prof_err e = parse_collectives(cJSON_GetObjectItemCaseSensitive(o, SK_KERNELS), store,
                                   &s->kernels, err);
    if (e == PROF_OK)
        e = parse_collectives(cJSON_GetObjectItemCaseSensitive(o, SK_REGIONS), store,
                              &s->regions, err);
    return e;
}

prof_err rank_summary_parse(const char *text, size_t len, int keep_report,
                            collective_store *store, rank_summary *out, prof_error *err)
{
    memset(out, 0, sizeof *out);
    if (!rank_summary_sniff(text, len))
        return corrupt(err, "it does not start as one");
    cJSON *o = cJSON_ParseWithLength(text, len);
    if (!o)
        return corrupt(err, "not JSON, or cut short");
    double version;
    prof_err e = whole(cJSON_GetObjectItemCaseSensitive(o, RK_VERSION), 1, 1, &version)
                     ? parse_fields(o, keep_report, store, out, err)
                     : corrupt(err, "a version other than 1");
    cJSON_Delete(o);
    if (e != PROF_OK)
        rank_summary_free(out);
    return e;
}

