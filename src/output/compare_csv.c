/* compare_csv.c - the comparison as one CSV table (see compare_csv.h).
 * Every section shares the columns, so a spreadsheet filter on "section"
 * gives each table; cells that make no sense for a section stay empty. */
#include <string.h>

#include "output/compare_csv.h"
#include "output/csvout.h"

typedef struct csv_row {
    const char *section, *name, *kind, *status, *unit;
    const cJSON *before, *after, *change, *relative;
    const cJSON *before_calls, *after_calls, *before_total, *after_total;
    const cJSON *p_value, *significant;
} csv_row;

static const char header[] = "section,name,kind,status,unit,before,after,change,relative,"
                             "before_calls,after_calls,before_total_ns,after_total_ns,"
                             "p_value,significant\r\n";

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
                             r->p_value, r->significant };
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        fputc(',', out);
        csvout_value(out, cells[i]);
    }
    fputs("\r\n", out);
}

static void summary_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *m, *test = get(cmp, "step_time_test"), *speedup = get(cmp, "speedup");
    cJSON_ArrayForEach(m, get(cmp, "summary")) {
        int mean = strcmp(str(m, "metric"), "step_mean_ns") == 0;
        csv_row r = { .section = "summary", .name = str(m, "metric"), .unit = str(m, "unit"),
                      .before = get(m, "before"), .after = get(m, "after"),
                      .change = get(m, "change"), .relative = get(m, "relative"),
                      .p_value = mean ? get(test, "p_value") : NULL,
                      .significant = mean ? get(test, "significant") : NULL };
        put_row(out, &r);
    }
    if (cJSON_IsObject(speedup)) {
        csv_row r = { .section = "summary", .name = "speedup", .status = str(speedup, "basis"),
                      .unit = "ratio", .after = get(speedup, "value") };
        put_row(out, &r);
    }
}

static void memory_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, get(cmp, "memory")) {
        csv_row r = { .section = "memory", .name = str(m, "series"), .status = str(m, "leak"),
                      .unit = "bytes", .before = get(m, "before_peak_bytes"),
                      .after = get(m, "after_peak_bytes"), .change = get(m, "change_bytes"),
                      .relative = get(m, "relative") };
        put_row(out, &r);
    }
}

static void operation_rows(FILE *out, const cJSON *cmp)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, get(cmp, "operations")) {
        const cJSON *b = get(op, "before"), *a = get(op, "after");
        csv_row r = { .section = "operation", .name = str(op, "name"), .kind = str(op, "kind"),
                      .status = str(op, "status"), .unit = "ns",
                      .before = get(b, "mean_ns"), .after = get(a, "mean_ns"),
                      .change = get(op, "mean_change_ns"), .relative = get(op, "relative"),
                      .before_calls = get(b, "calls"), .after_calls = get(a, "calls"),
                      .before_total = get(b, "total_ns"), .after_total = get(a, "total_ns"),
                      .p_value = get(op, "p_value"), .significant = get(op, "significant") };
        put_row(out, &r);
    }
}

/* Bottleneck rows: name the subject, kind the rule, before/after the
 * severity in each run (empty where the finding is absent). */
static void bottleneck_rows(FILE *out, const cJSON *cmp)
{
    static const char *const groups[] = { "fixed", "new", "persisting" };
    for (size_t g = 0; g < 3; g++) {
        const cJSON *f;
        cJSON_ArrayForEach(f, get(get(cmp, "bottlenecks"), groups[g])) {
            const cJSON *sev = get(f, "severity");
            csv_row r = { .section = "bottleneck", .name = str(f, "subject"),
                          .kind = str(f, "rule"), .status = groups[g], .unit = "severity",
                          .before = g == 0 ? sev : g == 2 ? get(f, "severity_before") : NULL,
                          .after = g == 0 ? NULL : sev };
            put_row(out, &r);
        }
    }
}

prof_err compare_render_csv(FILE *out, const cJSON *cmp)
{
    fputs(header, out);
    summary_rows(out, cmp);
    memory_rows(out, cmp);
    operation_rows(out, cmp);
    bottleneck_rows(out, cmp);
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
