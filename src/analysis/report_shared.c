/* report_shared.c - what the report of one profile (report.c) and the
 * analysis of a job's ranks (ranks.c) both build on: the options'
 * defaults, a profile's entry in "profiles", the order of operations and
 * the order of findings (rules.md §1). Kept below both, so that neither
 * calls into the other for them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

void analysis_options_default(analysis_options *o)
{
    o->hot_threshold_pct = 10.0;
    o->leak_threshold_mb = 0.0;
    o->leak_horizon = 10.0;
    o->sync_threshold_pct = 10.0;
    o->capacity_bytes = 0.0;
    o->top = 20;
    o->max_points = REPORT_POINTS;
    o->list_points = 1;
    o->max_names = REPORT_NAMES;
    o->others = 0;
    o->sort_gpu = 0;
    o->rank = ANALYSIS_RANK_FIRST;
    o->tuning = NULL;
    o->op_row = NULL;
    o->op_arg = NULL;
}

cJSON *report_profile_entry(analysis_ctx *c, const profile_model *m)
{
    char ver[32];
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        c->ok = 0;
        return NULL;
    }
    jstr(c, o, RK_PATH, m->path ? m->path : "");
    jnum(c, o, RK_RANK, m->rank);
    jnum(c, o, RK_WORLD_SIZE, m->world_size);
    jstr(c, o, RK_FORMAT_VERSION, fmt_text(ver, sizeof ver, "%u.%u", m->major, m->minor));
    jbool(c, o, RK_CLEAN, m->status.clean);
    jbool(c, o, RK_TRUNCATED, m->status.truncated);
    jnum(c, o, RK_BYTES_LOST, (double)m->status.bytes_lost);
    jstr(c, o, RK_DETAIL, m->status.detail);
    cJSON *meta = m->metadata ? cJSON_Parse(m->metadata) : NULL;
    if (!cJSON_IsObject(meta)) {
        cJSON_Delete(meta);
        meta = cJSON_CreateObject();
    }
    const char *damaged = analysis_import_damage(meta);
    jstr(c, o, RK_SOURCE_DAMAGED, damaged ? damaged : "");
    jb_attach(&c->ok, o, RK_METADATA, meta);
    return o;
}

int ops_by_self_desc(const void *a, const void *b, void *arg)
{
    const model_op *ops = arg;
    const model_op *x = &ops[*(const uint32_t *)a], *y = &ops[*(const uint32_t *)b];
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int severity_rank(const cJSON *f)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_SEVERITY));
    return !s ? 3 : strcmp(s, "high") == 0 ? 0 : strcmp(s, "medium") == 0 ? 1 : 2;
}

/* What a finding means for the run: 0 when it says the run will die (a
 * memory leak that reaches the capacity: high), 1 otherwise. A run that
 * will be killed outranks one that is slow, whatever share of its time a
 * slow part takes (rules.md §1). */
static int consequence_rank(const cJSON *f)
{
    const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_RULE));
    return rule && strcmp(rule, "memory_leak") == 0 && severity_rank(f) == 0 ? 0 : 1;
}

static double impact(const cJSON *f)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(f, RK_IMPACT_SHARE));
}

typedef struct ranked {
    cJSON *f;
    int consequence, severity, order;
    double impact;
} ranked;

static int by_severity_impact(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->consequence != b->consequence)
        return a->consequence - b->consequence;
    if (a->severity != b->severity)
        return a->severity - b->severity;
    if (a->impact != b->impact)
        return a->impact < b->impact ? 1 : -1;
    return a->order - b->order; /* stable: rule order */
}

/* Detaches every finding, sorts them by consequence, severity, then
 * impact, re-attaches. */
void report_sort_bottlenecks(analysis_ctx *c, cJSON *arr)
{
    int n = cJSON_GetArraySize(arr);
    if (n < 2)
        return;
    ranked *v = xcalloc(c, (size_t)n, sizeof *v);
    if (!v)
        return;
    for (int i = 0; i < n; i++) {
        cJSON *f = cJSON_DetachItemFromArray(arr, 0);
        v[i] = (ranked){ f, consequence_rank(f), severity_rank(f), i, impact(f) };
    }
    qsort(v, (size_t)n, sizeof *v, by_severity_impact);
    for (int i = 0; i < n; i++)
        if (!cJSON_AddItemToArray(arr, v[i].f)) {
            cJSON_Delete(v[i].f);
            c->ok = 0;
        }
    free(v);
}
