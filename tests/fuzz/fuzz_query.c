/* fuzz_query.c - libFuzzer target over the tables of `prof query`
 * (src/query/) on a profile from the input (as given and with its
 * checksums repaired, through a memfd): statements that scan every event
 * table with the columns that need the most (self time, steps, GPU work's
 * launch), that push down steps (the search of steps.c), times and
 * correlation ids (a join of kernels to their calls), and
 * that read the rows tables and the analysis. A statement may fail (a
 * damaged block is the table's error, kept by the connection); none may
 * crash, hang or leak, and a failure that names no table error must be
 * SQLite's own. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "query/query.h"
#include "fuzz_util.h"

static const char *const statements[] = {
    "SELECT COUNT(*), SUM(self_ns), MAX(step), MIN(thread_name) FROM regions",
    "SELECT name, SUM(dur_ns) FROM regions WHERE step = 2 GROUP BY name",
    "SELECT COUNT(*), SUM(self_ns) FROM regions WHERE step BETWEEN 1 AND 3",
    "SELECT COUNT(*) FROM regions WHERE start_ns BETWEEN 1000 AND 5000000 AND end_ns >= 2000",
    "SELECT COUNT(*), MAX(op), MAX(api), MAX(launch_thread), MAX(step) FROM kernels",
    "SELECT COUNT(*), MAX(op), MAX(kind) FROM copies WHERE step >= 1",
    "SELECT COUNT(*), MAX(op) FROM memsets",
    "SELECT COUNT(*), MAX(name) FROM api_calls WHERE step < 4",
    "SELECT COUNT(*), MAX(kind) FROM syncs",
    "SELECT COUNT(*), MAX(a.thread_name), MAX(a.step), MAX(k.op) FROM kernels k JOIN api_calls a USING (rank, correlation)",
    "SELECT COUNT(*) FROM copies WHERE correlation = 1",
    "SELECT series, COUNT(*), MAX(step) FROM memory GROUP BY series",
    "SELECT COUNT(*), SUM(value), MAX(step) FROM counters",
    "SELECT COUNT(*), MAX(name) FROM marks WHERE time_ns > 10",
    "SELECT COUNT(*), SUM(dur_ns) FROM steps",
    "SELECT * FROM threads",
    "SELECT * FROM ranks",
    "SELECT COUNT(*) FROM metadata",
    "SELECT COUNT(*), SUM(self_ns) FROM operations",
    "SELECT COUNT(*) FROM bottlenecks",
    "SELECT COUNT(*) FROM memory_fits",
};

static void run(query_db *q, const char *sql)
{
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(query_sqlite(q), sql, -1, &st, NULL) == SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        for (int c = 0; c < sqlite3_column_count(st); c++)
            (void)sqlite3_column_text(st, c);
    /* a failure is a table's (the file's) or memory's */
    CHECK(rc == SQLITE_DONE || query_table_error(q)->code != PROF_OK || rc == SQLITE_NOMEM);
    sqlite3_finalize(st);
}

static void consume(const uint8_t *data, size_t size)
{
    const char *path = fuzz_as_file(data, size);
    query_input in = { path, "fuzz.prof" };
    prof_tuning one = { .threads = 1 };
    query_db *q;
    prof_error err;
    if (query_open(&in, 1, NULL, &one, &q, &err) != PROF_OK)
        return;
    for (size_t i = 0; i < sizeof statements / sizeof statements[0]; i++)
        run(q, statements[i]);
    query_close(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_as_given_and_repaired(data, size, consume);
    return 0;
}
