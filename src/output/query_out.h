/* query_out.h - how `prof query` writes a statement's rows: an aligned
 * table (the default, cut at a limit), CSV (RFC 4180, a header line) or
 * JSON (an array of objects, one per row, keyed by column name). */
#ifndef PROF_OUTPUT_QUERY_OUT_H
#define PROF_OUTPUT_QUERY_OUT_H

#include <stddef.h>
#include <stdio.h>

#include <sqlite3.h>

#include "output/textout.h"
#include "prof_reader.h"

typedef enum query_format { QUERY_FORMAT_TABLE, QUERY_FORMAT_CSV, QUERY_FORMAT_JSON } query_format;

/* "table", "csv" or "json" into *out: 0, or -1 for another name. */
int query_format_parse(const char *name, query_format *out);

typedef struct query_render_opts {
    query_format format;
    size_t limit;                /* rows written at most; 0: all          */
    const report_style *style;   /* the table's; NULL: plain, 100 columns */
} query_render_opts;

typedef struct query_render_result {
    size_t rows;                 /* rows written                          */
    int more;                    /* the limit left rows out               */
} query_render_result;

/* Steps st to its end (or the limit) and writes its rows. PROF_OK;
 * PROF_ERR_INVALID for a statement that failed while it ran (err: SQLite's
 * message); PROF_ERR_IO when writing failed; PROF_ERR_NOMEM. A failed
 * statement may have written some rows (the caller's output file is
 * discarded). */
prof_err query_render(FILE *out, sqlite3_stmt *st, const query_render_opts *o,
                      query_render_result *res, prof_error *err);

#endif
