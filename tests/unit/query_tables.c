/* query_tables.c - the tables of src/query/ on profiles written by the
 * test writer with small blocks, so that windows skip blocks: a filter
 * pushed down to the reader gives the rows a full scan gives (the same
 * statement with the column hidden from the planner by "+ 0"), self time
 * is the duration less the children's past the merging of long levels,
 * GPU work names the innermost region around its launch, ranks are
 * chosen by a constraint on rank, and damage is a table error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "file_util.h"
#include "format_util.h"
#include "model_util.h"
#include "query/query.h"
#include "synth.h"

#define MS 1000000ull

/* The inputs of the last connection opened, for qt_same's fresh one. */
static const char *qt_paths[8];
static size_t qt_n;

static query_db *qt_open_n(const char *const *paths, size_t n)
{
    query_input in[8];
    cr_assert_leq(n, 8u);
    memmove(qt_paths, paths, n * sizeof *paths);
    qt_n = n;
    for (size_t i = 0; i < n; i++)
        in[i] = (query_input){ paths[i], paths[i] };
    query_db *q;
    prof_error err = { 0 };
    cr_assert_eq(query_open(in, n, NULL, NULL, &q, &err), PROF_OK, "%s", err.message);
    return q;
}

static query_db *qt_open(const char *path)
{
    return qt_open_n(&path, 1);
}

/* The rows of sql as text: values joined by '|', rows by '\n'. */
static char *qt_rows(query_db *q, const char *sql)
{
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(query_sqlite(q), sql, -1, &st, NULL), SQLITE_OK, "%s: %s",
                 sql, sqlite3_errmsg(query_sqlite(q)));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    buf[0] = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *v = sqlite3_column_text(st, c);
            size_t len = strlen(v ? (const char *)v : "NULL") + 2;
            while (n + len + 1 > cap)
                cr_assert_not_null(buf = realloc(buf, cap *= 2));
            n += (size_t)sprintf(buf + n, "%s%s", c ? "|" : "", v ? (const char *)v : "NULL");
        }
        while (n + 2 > cap)
            cr_assert_not_null(buf = realloc(buf, cap *= 2));
        buf[n++] = '\n';
        buf[n] = 0;
    }
    cr_assert_eq(rc, SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(query_sqlite(q)));
    sqlite3_finalize(st);
    return buf;
}

static long long qt_int(query_db *q, const char *sql)
{
    char *rows = qt_rows(q, sql);
    long long v = strtoll(rows, NULL, 10);
    free(rows);
    return v;
}

/* The rows of a statement with a pushed-down filter, and of the same
 * statement with the filter's column hidden: equal, and the first read
 * fewer events when skip says it should. */
static void qt_same(query_db *q, const char *pushed, const char *scanned, int skip)
{
    /* on a fresh connection, where steps are searched for (steps.c), and
     * on q, whose ranks a scan may have indexed */
    query_db *fresh = qt_open_n(qt_paths, qt_n);
    char *a = qt_rows(fresh, pushed);
    unsigned long long read_pushed = query_events_read(fresh);
    query_close(fresh);
    fresh = qt_open_n(qt_paths, qt_n);
    char *b = qt_rows(fresh, scanned);
    unsigned long long read_scanned = query_events_read(fresh);
    query_close(fresh);
    char *a2 = qt_rows(q, pushed);
    char *b2 = qt_rows(q, scanned);
    cr_assert_str_eq(b, b2);
    free(b2);
    cr_assert_str_eq(a, b, "%s\ngave\n%.2000s\nwhile %s gave\n%.2000s", pushed, a, scanned, b);
    cr_assert_str_eq(a2, b, "%s (indexed)\ngave\n%.2000s\nwhile %s gave\n%.2000s", pushed, a2,
                     scanned, b);
    if (skip)
        cr_assert_lt(read_pushed, read_scanned, "%s read %llu events, the scan %llu", pushed,
                     read_pushed, read_scanned);
    free(a);
    free(a2);
    free(b);
}

/* Steps of a training loop on thread 0 (forward with layers, backward),
 * a loader on thread 1, an outermost "run" region around every step (its
 * children outgrow a waiting level past 2,048 steps), and a region that
 * spans two steps: small blocks, so a step is a few. */
static const char *write_loop(const char *name, int steps, long rank)
{
    const char *path = fu_path(name);
    char meta[256];
    snprintf(meta, sizeof meta,
             "{\"format\":\"prof\",\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":0},"
             "\"rank\":%ld,\"world_size\":2,\"tags\":{},\"devices\":[]}",
             rank);
    synth *s = synth_open(path, meta);
    cr_assert_not_null(s);
    synth_block_records(s, 64);
    synth_thread(s, 0, 100, "train");
    synth_thread(s, 1, 101, "loader");
    uint64_t t = 1000;
    for (int k = 0; k < steps; k++) {
        uint64_t step_start = t;
        for (int l = 0; l < 4; l++) {
            synth_region(s, 0, "matmul", PROF_KIND_COMPUTE, 3, t + 10, 300 + (uint64_t)l);
            synth_region(s, 0, "layer", PROF_KIND_COMPUTE, 2, t, 500);
            t += 600;
        }
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 1, step_start, t - step_start);
        synth_region(s, 1, "load", PROF_KIND_DATA, 0, step_start + 5, 900);
        synth_memory(s, 0, "host.rss", t, 1000000u + (uint64_t)k * 4096u);
        synth_counter(s, 0, "loss", t, 1.0 / (k + 1));
        if (k % 7 == 3) /* begins in this step, ends in the next */
            synth_region(s, 1, "prefetch", PROF_KIND_IO, 0, t - 100, 1500);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 1, t, 1000);
        t += 1000;
        synth_step(s, 0, (uint64_t)k, PROF_STEP_SAMPLED, step_start, t - step_start);
        /* sampled as the step closes: the step's, not the next one's */
        synth_memory(s, 0, "gpu.allocated", t, 5000000u + (uint64_t)k);
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 999, t - 999 + 1);
    synth_mark(s, 0, "done", t);
    mu_close(s);
    return path;
}

Test(query_tables, step_filters_read_a_few_blocks_and_agree_with_a_scan)
{
    const char *path = write_loop("loop.prof", 300, 0);
    query_db *q = qt_open(path);
    cr_assert_eq(qt_int(q, "SELECT COUNT(*) FROM steps"), 300);
    const int probe[] = { 0, 1, 3, 150, 298, 299, 300, 1000 };
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
        char a[512], b[512];
        const char *cols = "name, thread, thread_name, depth, step, start_ns, end_ns, dur_ns, self_ns";
        snprintf(a, sizeof a, "SELECT %s FROM regions WHERE step = %d ORDER BY start_ns, name",
                 cols, probe[i]);
        snprintf(b, sizeof b,
                 "SELECT %s FROM regions WHERE step + 0 = %d ORDER BY start_ns, name", cols,
                 probe[i]);
        qt_same(q, a, b, probe[i] > 0 && probe[i] < 299);
    }
    qt_same(q, "SELECT step, name, self_ns FROM regions WHERE step BETWEEN 10 AND 12 ORDER BY 1, 2",
            "SELECT step, name, self_ns FROM regions WHERE step + 0 BETWEEN 10 AND 12 ORDER BY 1, 2",
            1);
    qt_same(q, "SELECT COUNT(*) FROM regions WHERE step > 297.5",
            "SELECT COUNT(*) FROM regions WHERE step + 0 > 297.5", 1);
    qt_same(q, "SELECT COUNT(*) FROM regions WHERE step = 2.5",
            "SELECT COUNT(*) FROM regions WHERE step + 0 = 2.5", 0);
    qt_same(q, "SELECT COUNT(*) FROM regions WHERE step = NULL",
            "SELECT COUNT(*) FROM regions WHERE step + 0 = NULL", 0);
    qt_same(q, "SELECT COUNT(*) FROM regions WHERE step < -1",
            "SELECT COUNT(*) FROM regions WHERE step + 0 < -1", 0);
    /* the other event tables */
    qt_same(q, "SELECT series, step, time_ns, bytes FROM memory WHERE step = 77",
            "SELECT series, step, time_ns, bytes FROM memory WHERE step + 0 = 77", 1);
    cr_assert_eq(qt_int(q, "SELECT COUNT(*) FROM memory WHERE step = 77"), 2);
    cr_assert_eq(qt_int(q, "SELECT COUNT(*) FROM memory m JOIN steps s ON m.time_ns = s.end_ns "
                           "WHERE m.step <> s.step"),
                 0);
    qt_same(q, "SELECT name, value FROM counters WHERE step IN (5, 6)",
            "SELECT name, value FROM counters WHERE step + 0 IN (5, 6)", 0);
    query_close(q);
}

Test(query_tables, time_filters_agree_with_a_scan)
{
    const char *path = write_loop("time.prof", 200, 0);
    query_db *q = qt_open(path);
    long long end = qt_int(q, "SELECT MAX(end_ns) FROM steps");
    for (long long from = 0; from < end; from += end / 9) {
        char a[512], b[512];
        const char *cols = "name, thread, start_ns, dur_ns, self_ns, step";
        snprintf(a, sizeof a,
                 "SELECT %s FROM regions WHERE start_ns >= %lld AND start_ns < %lld ORDER BY 3, 1",
                 cols, from, from + end / 50);
        snprintf(b, sizeof b,
                 "SELECT %s FROM regions WHERE start_ns + 0 >= %lld AND start_ns + 0 < %lld "
                 "ORDER BY 3, 1",
                 cols, from, from + end / 50);
        qt_same(q, a, b, from > 0); /* "run" starts in the first: its window is the run's */
        snprintf(a, sizeof a,
                 "SELECT name, start_ns, dur_ns FROM regions WHERE end_ns >= %lld AND "
                 "start_ns <= %lld ORDER BY 2, 1",
                 from, from + 2000);
        snprintf(b, sizeof b,
                 "SELECT name, start_ns, dur_ns FROM regions WHERE end_ns + 0 >= %lld AND "
                 "start_ns + 0 <= %lld ORDER BY 2, 1",
                 from, from + 2000);
        qt_same(q, a, b, from > end / 2);
    }
    qt_same(q, "SELECT name, time_ns FROM marks WHERE time_ns > 1000",
            "SELECT name, time_ns FROM marks WHERE time_ns + 0 > 1000", 0);
    query_close(q);
}

/* Self time is the duration less the direct children's, as the model's
 * call tree has it: the sums by name equal the operations' self time,
 * also for the outermost region whose thousands of children outgrow the
 * waiting level (merged pairwise) and a region whose parent was not
 * recorded. */
Test(query_tables, self_time_is_the_model_s)
{
    const char *path = write_loop("self.prof", 2500, 0);
    query_db *q = qt_open(path);
    cr_assert_gt(qt_int(q, "SELECT COUNT(*) FROM regions WHERE depth = 1"), 4096);
    char *by_name = qt_rows(q, "SELECT name, SUM(self_ns), COUNT(*) FROM regions GROUP BY name "
                               "ORDER BY name");
    char *ops = qt_rows(q, "SELECT name, self_ns, calls FROM operations ORDER BY name");
    cr_assert_str_eq(by_name, ops);
    free(by_name);
    free(ops);
    long long run_self = qt_int(q, "SELECT self_ns FROM regions WHERE name = 'run'");
    long long expect = qt_int(q, "SELECT (SELECT dur_ns FROM regions WHERE name = 'run') - "
                                 "(SELECT SUM(dur_ns) FROM regions WHERE thread = 0 AND depth = 1)");
    cr_assert_eq(run_self, expect);
    cr_assert_eq(qt_int(q, "SELECT COUNT(*) FROM regions WHERE name = 'forward' AND "
                           "self_ns <> dur_ns - 4 * 500"),
                 0);
    query_close(q);

    /* an orphan: children whose parent was not recorded are nobody's */
    const char *orphan = fu_path("orphan.prof");
    synth *s = synth_open(orphan, NULL);
    cr_assert_not_null(s);
    synth_region(s, 0, "lost.child", PROF_KIND_COMPUTE, 1, 100, 50);
    synth_region(s, 0, "later", PROF_KIND_COMPUTE, 0, 1000, 400);
    synth_region(s, 0, "kid", PROF_KIND_COMPUTE, 1, 2000, 100);
    synth_region(s, 0, "parent", PROF_KIND_COMPUTE, 0, 1990, 300);
    mu_close(s);
    q = qt_open(orphan);
    char *rows = qt_rows(q, "SELECT name, self_ns FROM regions ORDER BY start_ns");
    cr_assert_str_eq(rows, "lost.child|50\nlater|400\nparent|200\nkid|100\n");
    free(rows);
    rows = qt_rows(q, "SELECT name, self_ns FROM operations ORDER BY name");
    cr_assert_str_eq(rows, "kid|100\nlater|400\nlost.child|50\nparent|200\n");
    free(rows);
    query_close(q);
}

/* GPU work names the innermost region around its launching call, the
 * first call of a correlation id when a graph launch repeats it; work
 * without a call has no operation. */
Test(query_tables, gpu_work_names_its_launch)
{
    const char *path = fu_path("gpu.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 16);
    for (uint64_t k = 0; k < 200; k++) {
        uint64_t t = 10000 * k;
        synth_api(s, 0, "cudaLaunchKernel", 3 * k + 1, t + 10, 5);
        synth_api(s, 0, "cudaMemcpyAsync", 3 * k + 2, t + 100, 5);
        synth_region(s, 0, "attention", PROF_KIND_COMPUTE, 1, t + 5, 50);
        synth_api(s, 0, "cudaGraphLaunch", 3 * k + 3, t + 200, 5);
        synth_region(s, 0, "layer", PROF_KIND_COMPUTE, 0, t, 300);
        synth_gpu_kernel(s, "gemm", 0, 7, 3 * k + 1, t + 400, 1000);
        synth_gpu_memcpy(s, PROF_COPY_DTOH, 0, 7, 3 * k + 2, 4096, t + 1500, 200);
        synth_gpu_kernel(s, "graph.a", 0, 8, 3 * k + 3, t + 2000, 300);
        synth_gpu_kernel(s, "graph.b", 0, 8, 3 * k + 3, t + 2400, 300);
        synth_gpu_memset(s, 0, 7, 999999, 64, t + 3000, 10);
    }
    mu_close(s);
    query_db *q = qt_open(path);
    char *rows = qt_rows(q, "SELECT name, op, api, launch_thread, COUNT(*), SUM(dur_ns) FROM kernels "
                            "GROUP BY 1, 2, 3 ORDER BY 1");
    cr_assert_str_eq(rows, "gemm|attention|cudaLaunchKernel|0|200|200000\n"
                           "graph.a|layer|cudaGraphLaunch|0|200|60000\n"
                           "graph.b|layer|cudaGraphLaunch|0|200|60000\n");
    free(rows);
    rows = qt_rows(q, "SELECT kind, bytes, op, api FROM copies LIMIT 1");
    cr_assert_str_eq(rows, "DtoH|4096|layer|cudaMemcpyAsync\n");
    free(rows);
    rows = qt_rows(q, "SELECT COUNT(*), COUNT(op), COUNT(api) FROM memsets");
    cr_assert_str_eq(rows, "200|0|0\n");
    free(rows);
    /* the GPU time per operation is the report's */
    rows = qt_rows(q, "SELECT op, SUM(dur_ns) FROM (SELECT op, dur_ns FROM kernels UNION ALL "
                      "SELECT op, dur_ns FROM copies) GROUP BY op ORDER BY op");
    char *ops = qt_rows(q, "SELECT name, gpu_self_ns FROM operations WHERE kind <> 'gpu' "
                           "ORDER BY name");
    cr_assert_str_eq(rows, ops);
    free(rows);
    free(ops);
    qt_same(q, "SELECT name, op FROM kernels WHERE start_ns BETWEEN 500000 AND 700000",
            "SELECT name, op FROM kernels WHERE start_ns + 0 BETWEEN 500000 AND 700000", 1);
    /* a join on correlation looks the inner side's rows up by id: the rows
     * of the inner side materialized first */
    qt_same(q, "SELECT k.name, k.step, a.name, a.thread, a.thread_name, a.start_ns, a.step, "
               "a.dur_ns FROM kernels k JOIN api_calls a ON a.correlation = k.correlation "
               "ORDER BY k.start_ns, k.name",
            "WITH a AS MATERIALIZED (SELECT * FROM api_calls) SELECT k.name, k.step, a.name, "
            "a.thread, a.thread_name, a.start_ns, a.step, a.dur_ns FROM kernels k JOIN a ON "
            "a.correlation = k.correlation ORDER BY k.start_ns, k.name",
            0);
    qt_same(q, "SELECT a.name, k.name, k.op, k.api, k.launch_thread, k.device, k.stream FROM "
               "api_calls a JOIN kernels k ON k.correlation = a.correlation ORDER BY 1, 2, "
               "k.start_ns",
            "WITH k AS MATERIALIZED (SELECT * FROM kernels) SELECT a.name, k.name, k.op, k.api, "
            "k.launch_thread, k.device, k.stream FROM api_calls a JOIN k ON k.correlation = "
            "a.correlation ORDER BY 1, 2, k.start_ns",
            0);
    const char *ids[] = { "0", "1", "2", "3", "599", "600", "999999", "-1", "2.5", "NULL", "'x'" };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "SELECT COUNT(*), SUM(start_ns) FROM memsets WHERE correlation = %s "
                              "UNION ALL SELECT COUNT(*), SUM(start_ns) FROM kernels WHERE "
                              "correlation = %s", ids[i], ids[i]);
        snprintf(b, sizeof b, "SELECT COUNT(*), SUM(start_ns) FROM memsets WHERE correlation + 0 "
                              "= %s UNION ALL SELECT COUNT(*), SUM(start_ns) FROM kernels WHERE "
                              "correlation + 0 = %s", ids[i], ids[i]);
        qt_same(q, a, b, 0);
    }
    query_close(q);
}

/* A job's ranks are one set of tables with a rank column; a constraint on
 * rank reads that rank's file alone. */
Test(query_tables, ranks_are_one_table)
{
    const char *paths[2];
    paths[1] = write_loop("rank1.prof", 50, 1);
    paths[0] = write_loop("rank0.prof", 80, 0);
    query_db *q = qt_open_n(paths, 2);
    char *rows = qt_rows(q, "SELECT rank, COUNT(*) FROM steps GROUP BY rank");
    cr_assert_str_eq(rows, "0|80\n1|50\n");
    free(rows);
    rows = qt_rows(q, "SELECT rank, world_size FROM ranks");
    cr_assert_str_eq(rows, "0|2\n1|2\n");
    free(rows);
    qt_same(q, "SELECT COUNT(*) FROM regions WHERE rank = 1",
            "SELECT COUNT(*) FROM regions WHERE rank + 0 = 1", 1);
    qt_same(q, "SELECT rank, name FROM operations WHERE rank = 1 ORDER BY name",
            "SELECT rank, name FROM operations WHERE rank + 0 = 1 ORDER BY name", 0);
    cr_assert_eq(qt_int(q, "SELECT COUNT(*) FROM regions WHERE rank = 7"), 0);
    query_close(q);

    /* two files of one rank are not one job */
    paths[1] = write_loop("rank0b.prof", 5, 0);
    query_input in[2] = { { paths[0], paths[0] }, { paths[1], paths[1] } };
    prof_error err = { 0 };
    query_db *bad;
    cr_assert_eq(query_open(in, 2, NULL, NULL, &bad, &err), PROF_ERR_INVALID);
    cr_assert(strstr(err.message, "both rank 0"), "%s", err.message);
}

/* A block damaged after opening is the table's error, named with the
 * file, not SQLite's. */
Test(query_tables, damage_is_a_table_error)
{
    const char *path = write_loop("damaged.prof", 100, 0);
    query_db *q = qt_open(path);
    size_t n;
    char *bytes = fu_slurp(path, &n);
    bytes[n / 2] ^= 0x5a;
    fu_spill(path, bytes, n);
    free(bytes);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(query_sqlite(q), "SELECT COUNT(*) FROM regions", -1, &st,
                                    NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ERROR);
    sqlite3_finalize(st);
    const prof_error *e = query_table_error(q);
    cr_assert_eq(e->code, PROF_ERR_CORRUPT, "%d %s", e->code, e->message);
    cr_assert(strstr(e->message, "damaged.prof"), "%s", e->message);
    query_close(q);
}

/* The SQLite file holds the same rows as the tables. */
Test(query_tables, export_holds_the_same_rows)
{
    const char *path = write_loop("export.prof", 120, 0);
    const char *db = fu_path("export.db");
    query_db *q = qt_open(path);
    prof_error err = { 0 };
    cr_assert_eq(query_export_sqlite(q, db, &err), PROF_OK, "%s", err.message);
    sqlite3 *file;
    cr_assert_eq(sqlite3_open_v2(db, &file, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    for (const char *const *t = query_table_names; *t; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM \"%s\"", *t);
        sqlite3_stmt *st;
        cr_assert_eq(sqlite3_prepare_v2(file, sql, -1, &st, NULL), SQLITE_OK, "%s", *t);
        cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
        cr_assert_eq(sqlite3_column_int64(st, 0), qt_int(q, sql), "%s", *t);
        sqlite3_finalize(st);
    }
    sqlite3_close(file);
    /* a second export into the same connection works too */
    cr_assert_eq(query_export_sqlite(q, fu_path("again.db"), &err), PROF_OK, "%s", err.message);
    query_close(q);
}

/* The step search (steps.c) on runs it must not be fooled by: steps of
 * lengths that vary fifty-fold, a stretch of events before the first
 * step, numbers that skip, a gap between steps (as a trace's
 * ProfilerStep#N leave), and a run cut short (no footer: indexed whole).
 * Every filter on steps gives the rows of a scan. */
static const char *write_steps(const char *name, uint64_t seed, int gap, int cut)
{
    const char *path = fu_path(name);
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 32);
    synth_rng rng = { seed };
    uint64_t t = 100000, number = 3;
    for (int k = 0; k < 40; k++) /* before the first step */
        synth_region(s, 0, "warmup", PROF_KIND_COMPUTE, 0, 1000 + (uint64_t)k * 2000, 1500);
    for (int k = 0; k < 400; k++) {
        uint64_t start = t, len = 2000 + synth_rand(&rng) % 100000;
        for (uint64_t u = start; u + 1000 < start + len; u += 1500)
            synth_region(s, 0, "work", PROF_KIND_COMPUTE, 0, u, 1000);
        t += len;
        synth_step(s, 0, number, PROF_STEP_SAMPLED, start, len);
        number += synth_rand(&rng) % 10 == 0 ? 2 : 1; /* now and then a number skipped */
        if (gap && k == 200)
            t += 5000000; /* no step here */
    }
    prof_error err = { 0 };
    cr_assert_eq(cut ? synth_abandon(s, &err) : synth_close(s, &err), 0, "%s", err.message);
    return path;
}

Test(query_tables, step_search_agrees_with_a_scan)
{
    const char *names[] = { "steps-a.prof", "steps-gap.prof", "steps-cut.prof" };
    for (int v = 0; v < 3; v++) {
        const char *path = write_steps(names[v], 7 + (uint64_t)v, v == 1, v == 2);
        query_db *q = qt_open(path);
        long long max = qt_int(q, "SELECT MAX(step) FROM steps");
        synth_rng rng = { 99 };
        for (int i = 0; i < 20; i++) {
            long long k = i < 8 ? (long long[]){ -1, 0, 2, 3, 4, max - 1, max, max + 1 }[i]
                                : (long long)(synth_rand(&rng) % (uint64_t)(max + 2));
            char a[256], b[256];
            const char *forms[][2] = {
                { "step = %lld", "step + 0 = %lld" },
                { "step BETWEEN %lld AND %lld + 3", "step + 0 BETWEEN %lld AND %lld + 3" },
                { "step >= %lld", "step + 0 >= %lld" },
                { "step < %lld", "step + 0 < %lld" },
            };
            for (int f = 0; f < 4; f++) {
                char where[64], where_scan[64];
                snprintf(where, sizeof where, forms[f][0], k, k);
                snprintf(where_scan, sizeof where_scan, forms[f][1], k, k);
                snprintf(a, sizeof a, "SELECT COUNT(*), SUM(start_ns), MIN(step), MAX(step) FROM "
                                      "regions WHERE %s", where);
                snprintf(b, sizeof b, "SELECT COUNT(*), SUM(start_ns), MIN(step), MAX(step) FROM "
                                      "regions WHERE %s", where_scan);
                qt_same(q, a, b, 0);
            }
        }
        query_close(q);
    }
}
