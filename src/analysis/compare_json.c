/* compare_json.c - what compare reads of the analyze reports, and the
 * comparison's JSON, whose allocation failures are sticky in ctx->ok so
 * that the building code reads straight through. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/compare_int.h"
#include "analysis/report_keys.h"

/* ---- reading the reports ------------------------------------------------ */

const cJSON *cmp_get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* 1 and *v when o.key is a number. */
int cmp_get_num(const cJSON *o, const char *key, double *v)
{
    const cJSON *n = cmp_get(o, key);
    if (!cJSON_IsNumber(n))
        return 0;
    *v = n->valuedouble;
    return 1;
}

double cmp_num_or(const cJSON *o, const char *key, double fallback)
{
    double v;
    return cmp_get_num(o, key, &v) ? v : fallback;
}

const char *cmp_str_or(const cJSON *o, const char *key, const char *fallback)
{
    const cJSON *s = cmp_get(o, key);
    return cJSON_IsString(s) && s->valuestring ? s->valuestring : fallback;
}

/* o.a.b.c, the path ending at the first NULL key. */
const cJSON *cmp_get_path(const cJSON *o, const char *a, const char *b, const char *c)
{
    const char *keys[] = { a, b, c };
    for (size_t i = 0; i < 3 && keys[i] && o; i++)
        o = cmp_get(o, keys[i]);
    return o;
}

const cJSON *cmp_first_profile(const cJSON *report)
{
    return cJSON_GetArrayItem(cmp_get(report, RK_PROFILES), 0);
}

const cJSON *cmp_find_named(const cJSON *arr, const char *key, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
        if (strcmp(cmp_str_or(it, key, ""), name) == 0)
            return it;
    return NULL;
}

/* Step count behind the step-time statistics (rules.md §1: complete steps). */
double cmp_stat_steps(const cJSON *report)
{
    const cJSON *s = cmp_get(report, RK_SUMMARY);
    double n;
    return cmp_get_num(s, RK_COMPLETE_STEPS, &n) ? n : cmp_num_or(s, RK_STEPS, 0);
}

/* ---- writing the comparison (sticky failures) ------------------------------ */

cJSON *cmp_attach(cmp_ctx *c, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !(key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item))) {
        cJSON_Delete(item);
        c->ok = 0;
        return NULL;
    }
    return item;
}

void cmp_put_num(cmp_ctx *c, cJSON *o, const char *key, double v)
{
    cmp_attach(c, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* A number when have, else null. */
void cmp_put_opt(cmp_ctx *c, cJSON *o, const char *key, int have, double v)
{
    cmp_put_num(c, o, key, have ? v : NAN);
}

void cmp_put_str(cmp_ctx *c, cJSON *o, const char *key, const char *v)
{
    cmp_attach(c, o, key, cJSON_CreateString(v));
}

void cmp_put_bool(cmp_ctx *c, cJSON *o, const char *key, int v)
{
    cmp_attach(c, o, key, cJSON_CreateBool(v));
}

cJSON *cmp_put_obj(cmp_ctx *c, cJSON *o, const char *key)
{
    return cmp_attach(c, o, key, cJSON_CreateObject());
}

cJSON *cmp_put_arr(cmp_ctx *c, cJSON *o, const char *key)
{
    return cmp_attach(c, o, key, cJSON_CreateArray());
}

void cmp_note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cmp_attach(c, notes, NULL, cJSON_CreateString(buf));
}

/* (after - before) / before, or NaN when before is 0. */
double cmp_relative(double before, double after)
{
    return before != 0 ? (after - before) / before : NAN;
}

/* ---- the sides ------------------------------------------------------------------ */

const char *cmp_side_name(int i)
{
    return i ? RK_AFTER : RK_BEFORE;
}

const cJSON *cmp_run_of(const cmp_side *s, size_t i)
{
    return s->runs[i]->report;
}

/* At least half of a side's runs: enough to say the side has a finding. */
int cmp_most_runs(size_t count, size_t runs)
{
    return count > 0 && 2 * count >= runs;
}
