/* jsonout.c - the small helpers every report section and rule uses: JSON
 * members whose allocation failures are remembered in ctx->ok instead of
 * checked at each call, findings, severities and human-readable numbers for
 * titles and recommendations. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

static cJSON *attach(analysis_ctx *c, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        c->ok = 0;
        return NULL;
    }
    return item;
}

cJSON *jnum(analysis_ctx *c, cJSON *o, const char *key, double v)
{
    return attach(c, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

cJSON *jstr(analysis_ctx *c, cJSON *o, const char *key, const char *v)
{
    return attach(c, o, key, cJSON_CreateString(v ? v : ""));
}

cJSON *jbool(analysis_ctx *c, cJSON *o, const char *key, int v)
{
    return attach(c, o, key, cJSON_CreateBool(v != 0));
}

cJSON *jnull(analysis_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateNull());
}

cJSON *jobj(analysis_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateObject());
}

cJSON *jarr(analysis_ctx *c, cJSON *o, const char *key)
{
    return attach(c, o, key, cJSON_CreateArray());
}

cJSON *jpush_obj(analysis_ctx *c, cJSON *arr)
{
    cJSON *item = cJSON_CreateObject();
    if (!item || !arr || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        c->ok = 0;
        return NULL;
    }
    return item;
}

void jpush_num(analysis_ctx *c, cJSON *arr, double v)
{
    cJSON *item = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    if (!item || !arr || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        c->ok = 0;
    }
}

void *xcalloc(analysis_ctx *c, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        c->ok = 0;
    return p;
}

cJSON *finding_add(analysis_ctx *c, const char *rule, const char *severity,
                   const char *subject, double impact, const char *title,
                   const char *recommendation)
{
    cJSON *f = jpush_obj(c, c->bottlenecks);
    jstr(c, f, RK_RULE, rule);
    jstr(c, f, RK_SEVERITY, severity);
    jstr(c, f, RK_TITLE, title);
    jstr(c, f, RK_SUBJECT, subject);
    jnum(c, f, RK_IMPACT_SHARE, isfinite(impact) ? fmin(1.0, fmax(0.0, impact)) : 0.0);
    cJSON *e = jobj(c, f, RK_EVIDENCE);
    jstr(c, f, RK_RECOMMENDATION, recommendation);
    return e;
}

const char *fmt_text(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return buf;
}

const char *severity_by(double v, double high, double medium)
{
    return v >= high ? "high" : v >= medium ? "medium" : "low";
}

const char *op_kind_name(uint32_t kind)
{
    return kind == MODEL_KIND_GPU ? "gpu" : prof_kind_name(kind);
}

const char *fmt_pct(char *buf, size_t size, double share)
{
    return fmt_text(buf, size, "%.1f%%", 100.0 * share);
}
