/* compare_json.c - what compare reads of the analyze reports, and the
 * comparison's notes and shared figures (its JSON through util/jbuild.h,
 * whose failures stay in ctx->ok). */
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

void cmp_note(cmp_ctx *c, cJSON *notes, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jb_str(&c->ok, notes, NULL, buf);
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
