/* query.h - SQL over profiles (formats/query.md): a SQLite connection in
 * which a profile's events, steps, threads and metadata, and its analysis
 * (operations, bottlenecks, memory fits), are tables. The event tables are
 * virtual tables that stream from the reader, so a query costs one read of
 * the file, not a load into a database first; a filter on rank, step or
 * time is pushed down to the reader's time window, so that a query of a
 * few steps reads a few blocks. The same tables, copied whole into a
 * SQLite file, are `prof export --format sqlite`. */
#ifndef PROF_QUERY_QUERY_H
#define PROF_QUERY_QUERY_H

#include <stddef.h>

#include <sqlite3.h>

#include "analysis/options.h"
#include "prof_reader.h"
#include "util/tuning.h"

typedef struct query_db query_db;

/* One profile of the input: `path` is what the reader opens (a trace's
 * temporary profile), `label` what the user named (messages, the ranks
 * table). Both are copied. */
typedef struct query_input {
    const char *path;
    const char *label;
} query_input;

/* Opens an in-memory SQLite connection over in[0..n) (the ranks of one
 * job, or one profile), each file's header and metadata checked at once.
 * o: the analysis tables' thresholds (NULL: the defaults); t: how reads
 * run. PROF_ERR_INVALID when two inputs claim one rank; the reader's
 * errors, naming the file; PROF_ERR_NOMEM. */
prof_err query_open(const query_input *in, size_t n, const analysis_options *o,
                    const prof_tuning *t, query_db **out, prof_error *err);
void query_close(query_db *q);

/* The connection, for preparing and stepping statements. */
sqlite3 *query_sqlite(query_db *q);

/* After a statement failed: the profile error that made a table fail (a
 * damaged block, memory), or PROF_OK when the failure was SQLite's own
 * (the statement, a constraint). */
const prof_error *query_table_error(const query_db *q);

/* Called about every 100,000 rows a table hands out, with the events read
 * so far and the events of the files the statement reads (an estimate,
 * 0 when unknown); NULL: none. */
typedef void (*query_progress_fn)(void *arg, unsigned long long done, unsigned long long total);
void query_set_progress(query_db *q, query_progress_fn fn, void *arg);

/* Events the tables have read from the files since query_set_progress (or
 * opening): what a statement cost, and what a pushed-down filter saved. */
unsigned long long query_events_read(const query_db *q);

/* The names of the tables, NULL-terminated, in the order of
 * formats/query.md. */
extern const char *const query_table_names[];

/* Writes every table into a new SQLite database at path (an existing file
 * is replaced: the caller gives a temporary name and renames it). The
 * event tables as ordinary tables, with indexes on (rank, step) and
 * (rank, start_ns). PROF_ERR_IO with err naming what failed, the table
 * errors of a read, PROF_ERR_NOMEM. */
prof_err query_export_sqlite(query_db *q, const char *path, prof_error *err);

#endif
