/* tables.c - the tables of `prof query` and `prof export --format sqlite`,
 * column by column, as formats/query.md lists them: which events each
 * event table holds and what each column is made of, and where each rows
 * table's rows come from. The names follow what users of Kineto's and
 * Nsight's tables know (kernels, api_calls, memory), and every time is in
 * nanoseconds since the profile's clock origin. */
#include <string.h>

#include "query/query_int.h"

#define T(type) (1u << (type))
#define COLS(c) c, sizeof c / sizeof c[0]
#define I "INTEGER"
#define R "REAL"
#define S "TEXT"

static const q_column regions_cols[] = {
    { "rank", I, F_RANK, 0 },          { "thread", I, F_THREAD, 0 },
    { "thread_name", S, F_THREAD_NAME, 0 }, { "name", S, F_NAME, 0 },
    { "kind", S, F_KIND, 0 },          { "depth", I, F_DEPTH, 0 },
    { "step", I, F_STEP, 0 },          { "start_ns", I, F_START, 0 },
    { "end_ns", I, F_END, 0 },         { "dur_ns", I, F_DUR, 0 },
    { "self_ns", I, F_SELF, 0 },
};

#define GPU_HEAD { "rank", I, F_RANK, 0 }, { "device", I, F_DEVICE, 0 }, { "stream", I, F_STREAM, 0 }
#define GPU_TAIL                                                                 \
    { "step", I, F_STEP, 0 }, { "start_ns", I, F_START, 0 }, { "end_ns", I, F_END, 0 }, \
        { "dur_ns", I, F_DUR, 0 }, { "correlation", I, F_CORRELATION, 0 },          \
        { "op", S, F_OP, 0 }, { "api", S, F_API, 0 },                                \
        { "launch_thread", I, F_LAUNCH_THREAD, 0 }

static const q_column kernels_cols[] = { GPU_HEAD, { "name", S, F_NAME, 0 }, GPU_TAIL };
static const q_column copies_cols[] = { GPU_HEAD, { "kind", S, F_COPY_KIND, 0 },
                                        { "bytes", I, F_BYTES, 0 }, GPU_TAIL };
static const q_column memsets_cols[] = { GPU_HEAD, { "bytes", I, F_BYTES, 0 }, GPU_TAIL };

static const q_column api_cols[] = {
    { "rank", I, F_RANK, 0 },          { "thread", I, F_THREAD, 0 },
    { "thread_name", S, F_THREAD_NAME, 0 }, { "name", S, F_NAME, 0 },
    { "step", I, F_STEP, 0 },          { "start_ns", I, F_START, 0 },
    { "end_ns", I, F_END, 0 },         { "dur_ns", I, F_DUR, 0 },
    { "correlation", I, F_CORRELATION, 0 },
};

static const q_column syncs_cols[] = {
    { "rank", I, F_RANK, 0 },          { "thread", I, F_THREAD, 0 },
    { "thread_name", S, F_THREAD_NAME, 0 }, { "kind", S, F_SYNC_KIND, 0 },
    { "device", I, F_DEVICE, 0 },      { "stream", I, F_STREAM, 0 },
    { "step", I, F_STEP, 0 },          { "start_ns", I, F_START, 0 },
    { "end_ns", I, F_END, 0 },         { "dur_ns", I, F_DUR, 0 },
    { "correlation", I, F_CORRELATION, 0 },
};

static const q_column memory_cols[] = {
    { "rank", I, F_RANK, 0 },   { "thread", I, F_THREAD, 0 }, { "series", S, F_NAME, 0 },
    { "step", I, F_STEP, 0 },   { "time_ns", I, F_START, 0 }, { "bytes", I, F_BYTES, 0 },
};

static const q_column counters_cols[] = {
    { "rank", I, F_RANK, 0 },   { "thread", I, F_THREAD, 0 }, { "name", S, F_NAME, 0 },
    { "step", I, F_STEP, 0 },   { "time_ns", I, F_START, 0 }, { "value", R, F_VALUE, 0 },
};

static const q_column marks_cols[] = {
    { "rank", I, F_RANK, 0 },  { "thread", I, F_THREAD, 0 },
    { "thread_name", S, F_THREAD_NAME, 0 }, { "name", S, F_NAME, 0 },
    { "step", I, F_STEP, 0 },  { "time_ns", I, F_START, 0 },
};

static const q_column steps_cols[] = {
    { "rank", I, F_RANK, 0 },          { "step", I, F_JSON, "step" },
    { "start_ns", I, F_JSON, "start_ns" }, { "end_ns", I, F_JSON, "end_ns" },
    { "dur_ns", I, F_JSON, "dur_ns" }, { "sampled", I, F_JSON, "sampled" },
    { "incomplete", I, F_JSON, "incomplete" },
};

static const q_column threads_cols[] = {
    { "rank", I, F_RANK, 0 },        { "thread", I, F_JSON, "thread" },
    { "name", S, F_JSON, "name" },   { "os_tid", I, F_JSON, "os_tid" },
    { "events", I, F_JSON, "events" },
};

static const q_column ranks_cols[] = {
    { "rank", I, F_RANK, 0 },            { "world_size", I, F_JSON, "world_size" },
    { "path", S, F_JSON, "path" },       { "host", S, F_JSON, "host" },
    { "pid", I, F_JSON, "pid" },         { "format_version", S, F_JSON, "format_version" },
    { "clean", I, F_JSON, "clean" },     { "detail", S, F_JSON, "detail" },
    { "events", I, F_JSON, "events" },   { "steps", I, F_JSON, "steps" },
    { "origin_epoch_ns", I, F_JSON, "origin_epoch_ns" },
};

static const q_column metadata_cols[] = {
    { "rank", I, F_RANK, 0 }, { "key", S, F_JSON, "key" }, { "value", S, F_JSON, "value" },
};

static const q_column operations_cols[] = {
    { "rank", I, F_RANK, 0 },             { "name", S, F_JSON, "name" },
    { "kind", S, F_JSON, "kind" },        { "calls", I, F_JSON, "calls" },
    { "incl_ns", I, F_JSON, "incl_ns" },  { "self_ns", I, F_JSON, "self_ns" },
    { "self_share", R, F_JSON, "self_share" }, { "incl_share", R, F_JSON, "incl_share" },
    { "mean_ns", R, F_JSON, "mean_ns" },  { "stddev_ns", R, F_JSON, "stddev_ns" },
    { "min_ns", I, F_JSON, "min_ns" },    { "max_ns", I, F_JSON, "max_ns" },
    { "p50_ns", R, F_JSON, "p50_ns" },    { "p95_ns", R, F_JSON, "p95_ns" },
    { "p99_ns", R, F_JSON, "p99_ns" },    { "gpu_ns", I, F_JSON, "gpu_ns" },
    { "gpu_self_ns", I, F_JSON, "gpu_self_ns" }, { "gpu_kernels", I, F_JSON, "gpu_kernels" },
    { "module_class", S, F_JSON, "module_class" },
};

static const q_column bottlenecks_cols[] = {
    { "rank", I, F_RANK, 0 },             { "rule", S, F_JSON, "rule" },
    { "severity", S, F_JSON, "severity" }, { "subject", S, F_JSON, "subject" },
    { "title", S, F_JSON, "title" },      { "impact_share", R, F_JSON, "impact_share" },
    { "recommendation", S, F_JSON, "recommendation" }, { "evidence", S, F_JSON, "evidence" },
};

static const q_column memory_fits_cols[] = {
    { "rank", I, F_RANK, 0 },
    { "series", S, F_JSON, "series" },
    { "peak_bytes", I, F_JSON, "peak_bytes" },
    { "final_bytes", I, F_JSON, "final_bytes" },
    { "axis", S, F_JSON, "fit.axis" },
    { "slope_bytes_per_step", R, F_JSON, "fit.slope_bytes_per_step" },
    { "slope_bytes_per_s", R, F_JSON, "fit.slope_bytes_per_s" },
    { "ci95_bytes_per_step", R, F_JSON, "fit.ci95_bytes_per_step" },
    { "r2", R, F_JSON, "fit.r2" },
    { "p_value", R, F_JSON, "fit.p_value" },
    { "growth_bytes", R, F_JSON, "fit.growth_bytes" },
    { "first_step", I, F_JSON, "fit.first_step" },
    { "last_step", I, F_JSON, "fit.last_step" },
    { "leak", I, F_JSON, "fit.leak" },
    { "capacity_bytes", I, F_JSON, "capacity_bytes" },
    { "projected_oom_step", I, F_JSON, "projected_oom_step" },
};

#define EVENTS(name, types, cols, idx) { name, Q_EVENTS, types, NULL, COLS(cols), idx }
#define ROWS(name, fn, cols) { name, Q_ROWS, 0, fn, COLS(cols), NULL }
#define BY_TIME "rank,step;rank,start_ns"

const q_table q_tables[] = {
    EVENTS("regions", T(PROF_EV_REGION), regions_cols, BY_TIME ";rank,name"),
    ROWS("steps", q_rows_steps, steps_cols),
    EVENTS("kernels", T(PROF_EV_GPU_KERNEL), kernels_cols, BY_TIME ";rank,name"),
    EVENTS("copies", T(PROF_EV_GPU_MEMCPY), copies_cols, BY_TIME),
    EVENTS("memsets", T(PROF_EV_GPU_MEMSET), memsets_cols, BY_TIME),
    EVENTS("api_calls", T(PROF_EV_API), api_cols, BY_TIME ";rank,correlation"),
    EVENTS("syncs", T(PROF_EV_SYNC), syncs_cols, BY_TIME),
    EVENTS("memory", T(PROF_EV_MEMORY), memory_cols, "rank,series,time_ns"),
    EVENTS("counters", T(PROF_EV_COUNTER), counters_cols, "rank,name,time_ns"),
    EVENTS("marks", T(PROF_EV_MARK), marks_cols, NULL),
    ROWS("threads", q_rows_threads, threads_cols),
    ROWS("ranks", q_rows_ranks, ranks_cols),
    ROWS("metadata", q_rows_metadata, metadata_cols),
    ROWS("operations", q_rows_operations, operations_cols),
    ROWS("bottlenecks", q_rows_bottlenecks, bottlenecks_cols),
    ROWS("memory_fits", q_rows_memory_fits, memory_fits_cols),
};
const size_t q_ntables = sizeof q_tables / sizeof q_tables[0];

const char *const query_table_names[] = {
    "regions", "steps", "kernels", "copies", "memsets", "api_calls", "syncs", "memory",
    "counters", "marks", "threads", "ranks", "metadata", "operations", "bottlenecks",
    "memory_fits", NULL,
};

char *q_declare(const q_table *t)
{
    char *sql = sqlite3_mprintf("CREATE TABLE x(");
    for (size_t i = 0; sql && i < t->ncols; i++) {
        char *next = sqlite3_mprintf("%s%s\"%w\" %s", sql, i ? ", " : "", t->cols[i].name,
                                     t->cols[i].type);
        sqlite3_free(sql);
        sql = next;
    }
    if (!sql)
        return NULL;
    char *done = sqlite3_mprintf("%s)", sql);
    sqlite3_free(sql);
    return done;
}

int q_column_of(const q_table *t, q_field f)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].field == f)
            return (int)i;
    return -1;
}
