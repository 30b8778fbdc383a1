/* jsonout.c - the small helpers every report section and rule uses (the
 * JSON members themselves through util/jbuild.h, whose failures stay in
 * ctx->ok): allocations whose failure is remembered the same way,
 * findings, severities, human-readable numbers for
 * titles and recommendations, and the lists and series cut to the report's
 * limits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

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

/* ---- lists cut to the report's limits ---------------------------------------- */

int by_value_desc(const void *pa, const void *pb)
{
    const valued *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value < b->value ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

unsigned char *report_listed(analysis_ctx *c, const void *items, size_t n, stats_value_fn weight,
                             size_t *cut)
{
    size_t max = c->o.max_names, eligible = 0;
    *cut = 0;
    for (size_t i = 0; i < n; i++)
        eligible += isnan(weight(items, i)) ? 0u : 1u;
    if (max == 0 || eligible <= max)
        return NULL;
    valued *v = xcalloc(c, eligible, sizeof *v);
    unsigned char *listed = xcalloc(c, n, 1);
    if (v && listed) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            double w = weight(items, i);
            if (!isnan(w))
                v[k++] = (valued){ w, i };
        }
        qsort(v, eligible, sizeof *v, by_value_desc);
        for (size_t j = 0; j < max; j++)
            listed[v[j].index] = 1;
        *cut = eligible - max;
    }
    free(v);
    if (!c->ok) {
        free(listed);
        return NULL;
    }
    return listed;
}

size_t report_points(analysis_ctx *c, const void *series, size_t n, stats_value_fn value,
                     size_t **keep)
{
    *keep = NULL;
    if (!c->o.list_points)
        return 0;
    size_t max = c->o.max_points;
    if (max < 2 || n <= max)
        return n;
    if (!(*keep = xcalloc(c, max, sizeof **keep)))
        return 0;
    return stats_decimate(series, n, value, max, *keep);
}

void report_others(analysis_ctx *c, cJSON *report, const char *key, size_t count,
                   uint64_t calls, uint64_t self_ns, uint64_t incl_ns)
{
    cJSON *others = cJSON_GetObjectItemCaseSensitive(report, RK_OTHERS);
    cJSON *o = jobj(c, others ? others : jobj(c, report, RK_OTHERS), key);
    jnum(c, o, RK_COUNT, (double)count);
    jnum(c, o, RK_CALLS, (double)calls);
    jnum(c, o, RK_SELF_NS, (double)self_ns);
    jnum(c, o, RK_INCL_NS, (double)incl_ns);
}

/* ---- what the profile says of its own completeness ---------------------------- */

const char *analysis_import_damage(const cJSON *meta)
{
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(meta, MK_IMPORT);
    const cJSON *damaged = cJSON_GetObjectItemCaseSensitive(imp, MK_DAMAGED);
    return cJSON_IsString(damaged) ? damaged->valuestring : NULL;
}

int analysis_partial(const analysis_ctx *c)
{
    return c->m->status.truncated || analysis_import_damage(c->meta) != NULL;
}
