/* compare_csv.c - the comparison as one CSV table (see compare_csv.h).
 * Every section shares the columns, so a spreadsheet filter on "section"
 * gives each table; cells that make no sense for a section stay empty. */
#include <string.h>

#include "analysis/report_keys.h"
#include "output/compare_csv.h"
#include "output/csvout.h"

typedef struct csv_row {
    const char *section, *name, *kind, *status, *unit;
    const cJSON *before, *after, *change, *relative;
    const cJSON *before_calls, *after_calls, *before_total, *after_total;
    const cJSON *p_value, *significant;
    const cJSON *before_gpu, *after_gpu, *gpu_relative;
    const cJSON *relative_to_run; /* what an operation's test is of (rules.md §6.3) */
} csv_row;

static const char header[] = "section,name,kind,status,unit,before,after,change,relative,"
                             "before_calls,after_calls,before_total_ns,after_total_ns,"
                             "p_value,significant,before_gpu_ns,after_gpu_ns,gpu_relative,"
                             "relative_to_run\r\n";

static const cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(get(o, key));
    return s ? s : "";
}

static void put_row(FILE *out, const csv_row *r)
{
    const char *text[] = { r->name, r->kind, r->status, r->unit };
    csvout_text(out, r->section);
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        fputc(',', out);
        csvout_text(out, text[i]);
    }
    const cJSON *cells[] = { r->before, r->after, r->change, r->relative,
                             r->before_calls, r->after_calls, r->before_total, r->after_total,
                             r->p_value, r->significant, r->before_gpu, r->after_gpu,
                             r->gpu_relative, r->relative_to_run };
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        fputc(',', out);
        csvout_value(out, cells[i]);
    }
    fputs("\r\n", out);
}

static void summary_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *m, *test = get(cmp, RK_STEP_TIME_TEST), *speedup = get(cmp, RK_SPEEDUP);
    cJSON_ArrayForEach(m, get(cmp, RK_SUMMARY)) {
        int mean = strcmp(str(m, RK_METRIC), "step_mean_ns") == 0;
        csv_row r = { .section = "summary", .name = str(m, RK_METRIC), .unit = str(m, RK_UNIT),
                      .before = get(m, RK_BEFORE), .after = get(m, RK_AFTER),
                      .change = get(m, RK_CHANGE), .relative = get(m, RK_RELATIVE),
                      .p_value = mean ? get(test, RK_P_VALUE) : NULL,
                      .significant = mean ? get(test, RK_SIGNIFICANT) : NULL };
        put_row(out, &r);
    }
    if (cJSON_IsObject(speedup)) {
        csv_row r = { .section = "summary", .name = "speedup", .status = str(speedup, RK_BASIS),
                      .unit = "ratio", .after = get(speedup, RK_VALUE) };
        put_row(out, &r);
    }
}

static void memory_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, get(cmp, RK_MEMORY)) {
        csv_row r = { .section = "memory", .name = str(m, RK_SERIES), .status = str(m, RK_LEAK),
                      .unit = "bytes", .before = get(m, RK_BEFORE_PEAK_BYTES),
                      .after = get(m, RK_AFTER_PEAK_BYTES), .change = get(m, RK_CHANGE_BYTES),
                      .relative = get(m, RK_RELATIVE) };
        put_row(out, &r);
    }
}

static void operation_row(FILE *out, const cJSON *op)
{
    const cJSON *b = get(op, RK_BEFORE), *a = get(op, RK_AFTER);
    csv_row r = { .section = "operation", .name = str(op, RK_NAME), .kind = str(op, RK_KIND),
                  .status = str(op, RK_STATUS), .unit = "ns",
                  .before = get(b, RK_MEAN_NS), .after = get(a, RK_MEAN_NS),
                  .change = get(op, RK_MEAN_CHANGE_NS), .relative = get(op, RK_RELATIVE),
                  .before_calls = get(b, RK_CALLS), .after_calls = get(a, RK_CALLS),
                  .before_total = get(b, RK_TOTAL_NS), .after_total = get(a, RK_TOTAL_NS),
                  .p_value = get(op, RK_P_VALUE), .significant = get(op, RK_SIGNIFICANT),
                  .before_gpu = get(b, RK_GPU_NS), .after_gpu = get(a, RK_GPU_NS),
                  .gpu_relative = get(op, RK_GPU_RELATIVE),
                  .relative_to_run = get(op, RK_RELATIVE_TO_RUN) };
    put_row(out, &r);
}

/* The operations' rows: the comparison's own, or with ops each built,
 * written and freed in turn. -1 out of memory. */
static int operation_rows(FILE *out, const cJSON *cmp, const compare_ops *ops)
{
    const cJSON *op;
    if (!ops) {
        cJSON_ArrayForEach(op, get(cmp, RK_OPERATIONS))
            operation_row(out, op);
        return 0;
    }
    for (size_t i = 0; i < compare_ops_count(ops); i++) {
        cJSON *row = compare_ops_row(ops, i);
        if (!row)
            return -1;
        operation_row(out, row);
        cJSON_Delete(row);
    }
    return 0;
}

/* Bottleneck rows: name the subject, kind the rule, before/after the
 * severity in each run (empty where the finding is absent). */
static void bottleneck_rows(FILE *out, const cJSON *cmp)
{
    static const char *const groups[] = { RK_FIXED, RK_NEW, RK_PERSISTING };
    for (size_t g = 0; g < 3; g++) {
        const cJSON *f;
        cJSON_ArrayForEach(f, get(get(cmp, RK_BOTTLENECKS), groups[g])) {
            const cJSON *sev = get(f, RK_SEVERITY);
            csv_row r = { .section = "bottleneck", .name = str(f, RK_SUBJECT),
                          .kind = str(f, RK_RULE), .status = groups[g], .unit = "severity",
                          .before = g == 0 ? sev : g == 2 ? get(f, RK_SEVERITY_BEFORE) : NULL,
                          .after = g == 0 ? NULL : sev };
            put_row(out, &r);
        }
    }
}

/* Warning rows: why the sides should not be compared, in name. */
static void warning_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, get(cmp, RK_WARNINGS)) {
        csv_row r = { .section = "warning", .name = cJSON_GetStringValue(w) };
        if (r.name)
            put_row(out, &r);
    }
}

prof_err compare_render_csv_ops(FILE *out, const cJSON *cmp, const compare_ops *ops)
{
    fputs(header, out);
    warning_rows(out, cmp);
    summary_rows(out, cmp);
    memory_rows(out, cmp);
    if (operation_rows(out, cmp, ops) != 0)
        return PROF_ERR_NOMEM;
    bottleneck_rows(out, cmp);
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}

prof_err compare_render_csv(FILE *out, const cJSON *cmp)
{
    return compare_render_csv_ops(out, cmp, NULL);
}
