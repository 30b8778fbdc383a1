/* report_csv.c - the analyze report's tables as RFC 4180 CSV (see
 * report_csv.h). Each table is a list of report members read from one
 * array of the report, so the columns are the schema's field names. */
#include <string.h>

#include "output/csvout.h"
#include "output/report_csv.h"

static const char *const table_names[] = { "ops", "steps", "memory", "bottlenecks", "kernels" };

static const char *const ops_columns[] = { "name", "kind", "calls", "self_ns", "self_share",
                                           "incl_ns", "incl_share", "mean_ns", "stddev_ns",
                                           "min_ns", "max_ns", "p50_ns", "p95_ns", "p99_ns",
                                           NULL };
static const char *const steps_columns[] = { "number", "start_ns", "dur_ns", "sampled",
                                             "outlier", "incomplete", NULL };
static const char *const memory_columns[] = { "step", "t_ns", "bytes", NULL };
static const char *const kernel_columns[] = { "name", "calls", "gpu_ns", "share", "mean_ns",
                                              "min_ns", "max_ns", "p50_ns", "p95_ns", "comm",
                                              NULL };
static const char *const bottleneck_columns[] = { "severity", "rule", "subject",
                                                  "impact_share", "title",
                                                  "recommendation", NULL };

int report_table_parse(const char *name, report_table *t)
{
    for (size_t i = 0; i < sizeof table_names / sizeof table_names[0]; i++) {
        if (strcmp(name, table_names[i]) == 0) {
            *t = (report_table)i;
            return 0;
        }
    }
    return -1;
}

static void put_header(FILE *out, const char *first, const char *const *columns)
{
    if (first)
        fprintf(out, "%s,", first);
    for (size_t i = 0; columns[i]; i++)
        fprintf(out, "%s%s", i ? "," : "", columns[i]);
    fputs("\r\n", out);
}

/* One row: optionally a leading text field, then the columns of row. */
static void put_row(FILE *out, const char *first, const cJSON *row, const char *const *columns)
{
    if (first) {
        csvout_text(out, first);
        fputc(',', out);
    }
    for (size_t i = 0; columns[i]; i++) {
        if (i)
            fputc(',', out);
        csvout_value(out, cJSON_GetObjectItemCaseSensitive(row, columns[i]));
    }
    fputs("\r\n", out);
}

static void put_rows(FILE *out, const cJSON *report, const char *array,
                     const char *const *columns)
{
    put_header(out, NULL, columns);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, array);
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
        put_row(out, NULL, row, columns);
}

/* Memory: the points of every series, in long form (series, step, t, bytes). */
static void put_memory(FILE *out, const cJSON *report)
{
    put_header(out, "series", memory_columns);
    const cJSON *series;
    cJSON_ArrayForEach(series, cJSON_GetObjectItemCaseSensitive(report, "memory")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(series, "series"));
        const cJSON *point;
        cJSON_ArrayForEach(point, cJSON_GetObjectItemCaseSensitive(series, "points"))
            put_row(out, name ? name : "", point, memory_columns);
    }
}

prof_err report_render_csv(FILE *out, const cJSON *report, report_table t)
{
    switch (t) {
    case REPORT_TABLE_OPS: put_rows(out, report, "operations", ops_columns); break;
    case REPORT_TABLE_STEPS: put_rows(out, report, "steps", steps_columns); break;
    case REPORT_TABLE_MEMORY: put_memory(out, report); break;
    case REPORT_TABLE_BOTTLENECKS: put_rows(out, report, "bottlenecks", bottleneck_columns); break;
    case REPORT_TABLE_KERNELS: put_rows(out, report, "kernels", kernel_columns); break;
    }
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
