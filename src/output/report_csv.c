/* report_csv.c - the analyze report's tables as RFC 4180 CSV (see
 * report_csv.h). Each table is a list of report members read from one
 * array of the report, so the columns are the schema's field names. */
#include <string.h>

#include "analysis/report_keys.h"
#include "output/csvout.h"
#include "output/report_csv.h"

static const char *const table_names[] = { "ops",     "steps", "memory", "bottlenecks",
                                           "kernels", "gpu",   "ranks" };

static const char *const ops_columns[] = { RK_NAME, RK_KIND, RK_CALLS, RK_SELF_NS,
                                           RK_SELF_SHARE, RK_INCL_NS, RK_INCL_SHARE, RK_MEAN_NS,
                                           RK_STDDEV_NS, RK_MIN_NS, RK_MAX_NS, RK_P50_NS,
                                           RK_P95_NS, RK_P99_NS, RK_GPU_NS, RK_GPU_SELF_NS,
                                           RK_GPU_KERNELS, NULL };
static const char *const steps_columns[] = { RK_NUMBER, RK_START_NS, RK_DUR_NS, RK_SAMPLED,
                                             RK_OUTLIER, RK_INCOMPLETE, NULL };
static const char *const memory_columns[] = { RK_STEP, RK_T_NS, RK_BYTES, NULL };
static const char *const kernel_columns[] = { RK_NAME, RK_CALLS, RK_GPU_NS, RK_SHARE, RK_MEAN_NS,
                                              RK_MIN_NS, RK_MAX_NS, RK_P50_NS, RK_P95_NS,
                                              RK_COMM, NULL };
/* A row per rank of one job; empty fields where a rank has no such figure
 * (no GPU, no memory series, too few collectives matched). */
static const char *const rank_columns[] = { RK_RANK, RK_PATH, RK_DESCRIBED, RK_STEPS,
                                            RK_MEAN_STEP_NS, RK_P50_STEP_NS,
                                            RK_COMM_NS_PER_STEP, RK_WORK_NS_PER_STEP,
                                            RK_GPU_BUSY_SHARE, RK_GPU_IDLE_SHARE,
                                            RK_COMM_EXPOSED_SHARE, RK_MEMORY_PEAK_SERIES,
                                            RK_MEMORY_PEAK_BYTES, RK_COLLECTIVES,
                                            RK_LAST_ARRIVALS, RK_WAIT_NS, RK_CAUSED_WAIT_NS,
                                            RK_CAUSED_WAIT_SHARE, RK_FINDINGS_HIGH,
                                            RK_FINDINGS_MEDIUM, RK_FINDINGS_LOW,
                                            RK_TOP_FINDING_RULE, RK_TOP_FINDING,
                                            RK_CLOCK_OFFSET_NS, NULL };
static const char *const bottleneck_columns[] = { RK_SEVERITY, RK_RULE, RK_SUBJECT,
                                                  RK_IMPACT_SHARE, RK_TITLE, RK_RECOMMENDATION,
                                                  NULL };

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
    put_header(out, RK_SERIES, memory_columns);
    const cJSON *series;
    cJSON_ArrayForEach(series, cJSON_GetObjectItemCaseSensitive(report, RK_MEMORY)) {
        const char *name =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(series, RK_SERIES));
        const cJSON *point;
        cJSON_ArrayForEach(point, cJSON_GetObjectItemCaseSensitive(series, RK_POINTS))
            put_row(out, name ? name : "", point, memory_columns);
    }
}

/* GPU devices: the summary's figures, then HTA's (rules.md §3.1) as
 * hta_NAME, the kernel types as hta_TYPE_ns in the report's order. */
static const char *const gpu_columns[] = { RK_DEVICE, RK_KERNELS, RK_KERNEL_NS, RK_BUSY_NS,
                                           RK_BUSY_SHARE, RK_MEMCPY_BYTES, RK_IDLE_GAPS,
                                           RK_IDLE_GAP_NS, RK_BASIS, RK_BASIS_NS, RK_IDLE_NS,
                                           RK_IDLE_SHARE, RK_COMM_KERNELS, RK_COMM_NS,
                                           RK_COMM_OVERLAP_NS, RK_COMM_OVERLAP_SHARE,
                                           RK_COMM_EXPOSED_NS, RK_COMM_EXPOSED_SHARE, NULL };
static const char *const hta_columns[] = { RK_WINDOW_NS,         RK_BUSY_NS,
                                           RK_IDLE_NS,           RK_IDLE_SHARE,
                                           RK_COMPUTE_NS,        RK_COMPUTE_SHARE,
                                           RK_NON_COMPUTE_NS,    RK_NON_COMPUTE_SHARE,
                                           RK_COMM_NS,           RK_COMM_OVERLAP_NS,
                                           RK_COMM_OVERLAP_SHARE, RK_FINAL_STEP_LEFT_OUT,
                                           RK_FINAL_STEP_UNKNOWN, RK_LEFT_OUT,
                                           NULL };
static const char *const hta_type_columns[] = {
    "computation_ns",
    "communication_ns",
    "memory_ns",
    "computation_communication_ns",
    "computation_memory_ns",
    "communication_memory_ns",
    "computation_communication_memory_ns",
    NULL,
};

static void put_gpu(FILE *out, const cJSON *report)
{
    for (size_t i = 0; gpu_columns[i]; i++)
        fprintf(out, "%s%s", i ? "," : "", gpu_columns[i]);
    for (size_t i = 0; hta_columns[i]; i++)
        fprintf(out, ",hta_%s", hta_columns[i]);
    for (size_t i = 0; hta_type_columns[i]; i++)
        fprintf(out, ",hta_%s", hta_type_columns[i]);
    fputs("\r\n", out);
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, RK_SUMMARY), *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(summary, RK_GPU)) {
        const cJSON *hta = cJSON_GetObjectItemCaseSensitive(g, RK_HTA);
        const cJSON *types = cJSON_GetObjectItemCaseSensitive(hta, RK_KERNEL_TYPES);
        for (size_t i = 0; gpu_columns[i]; i++) {
            if (i)
                fputc(',', out);
            csvout_value(out, cJSON_GetObjectItemCaseSensitive(g, gpu_columns[i]));
        }
        for (size_t i = 0; hta_columns[i]; i++) {
            fputc(',', out);
            csvout_value(out, cJSON_GetObjectItemCaseSensitive(hta, hta_columns[i]));
        }
        for (int i = 0; hta_type_columns[i]; i++) {
            fputc(',', out);
            const cJSON *type = cJSON_GetArrayItem(types, i);
            csvout_value(out, cJSON_GetObjectItemCaseSensitive(type, RK_NS));
        }
        fputs("\r\n", out);
    }
}

prof_err report_render_csv(FILE *out, const cJSON *report, report_table t)
{
    switch (t) {
    case REPORT_TABLE_OPS: put_rows(out, report, RK_OPERATIONS, ops_columns); break;
    case REPORT_TABLE_STEPS: put_rows(out, report, RK_STEPS, steps_columns); break;
    case REPORT_TABLE_MEMORY: put_memory(out, report); break;
    case REPORT_TABLE_BOTTLENECKS: put_rows(out, report, RK_BOTTLENECKS, bottleneck_columns); break;
    case REPORT_TABLE_KERNELS: put_rows(out, report, RK_KERNELS, kernel_columns); break;
    case REPORT_TABLE_GPU: put_gpu(out, report); break;
    case REPORT_TABLE_RANKS: put_rows(out, report, RK_RANKS, rank_columns); break;
    }
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
