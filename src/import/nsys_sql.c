/* nsys_sql.c - what the Nsight Systems importer asks SQLite: errors as
 * damage, which tables and columns an export has (asked, never assumed),
 * row loops and columns, and statements composed to fit. */
#include <stdio.h>

#include "import/nsys_int.h"
#include "util/error.h"

/* ---- errors -------------------------------------------------------------------------- */

prof_err nsys_nomem(nsys_db *d)
{
    return prof_error_set(d->err, PROF_ERR_NOMEM, "out of memory");
}

/* A sink call failed: writing the profile, or a trace past the format's
 * limits, which the sink's message names. */
prof_err nsys_sink_failed(nsys_db *d, prof_err e)
{
    const prof_error *why = sink_error(d->s);
    if (e == PROF_ERR_LIMIT && why && why->code == PROF_ERR_LIMIT)
        return prof_error_set(d->err, e, "%s", why->message);
    return prof_error_set(d->err, e, "cannot write the profile: %s", prof_strerror(e));
}

/* SQLite said rc while reading what: out of memory stops the import, any
 * other failure (a damaged page, a cut file, an I/O error) is damage: what
 * was read is kept and the profile says where reading stopped. */
prof_err nsys_db_damage(nsys_db *d, const char *what, int rc)
{
    if ((rc & 0xff) == SQLITE_NOMEM)
        return nsys_nomem(d);
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, sqlite3_errmsg(d->db));
    sink_note_damage(d->s, msg);
    return PROF_OK;
}

/* ---- small queries ------------------------------------------------------------------- */

int nsys_has_table(const nsys_db *d, int t)
{
    return (d->tables >> t) & 1u;
}

/* Prepares sql; NULL when it cannot be (damage noted, or *e set). */
sqlite3_stmt *nsys_prepare(nsys_db *d, const char *what, const char *sql, prof_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        *e = nsys_db_damage(d, what, rc);
        return NULL;
    }
    return st;
}

/* Runs sql (one optional integer parameter) and hands each row to fn. */
prof_err nsys_each_row(nsys_db *d, const char *what, const char *sql, const int64_t *param,
                       row_fn fn, void *arg)
{
    prof_err e = PROF_OK;
    sqlite3_stmt *st = nsys_prepare(d, what, sql, &e);
    if (!st)
        return e;
    if (param)
        sqlite3_bind_int64(st, 1, *param);
    int rc;
    while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW)
        e = fn(d, st, arg);
    if (!e && rc != SQLITE_DONE)
        e = nsys_db_damage(d, what, rc);
    sqlite3_finalize(st);
    return e;
}

int nsys_has_col(nsys_db *d, int table, const char *col)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table_names[table], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

int64_t nsys_col_i64(sqlite3_stmt *st, int i)
{
    return sqlite3_column_int64(st, i);
}

/* A non-negative value (a time, a byte count), as rt_cu_rec takes it. */
uint64_t nsys_col_u64(sqlite3_stmt *st, int i)
{
    int64_t v = sqlite3_column_int64(st, i);
    return v > 0 ? (uint64_t)v : 0;
}

/* An id of CUPTI's 32 bits; out of range reads as 0 (none). */
uint32_t nsys_col_u32(sqlite3_stmt *st, int i)
{
    int64_t v = sqlite3_column_int64(st, i);
    return v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : 0;
}

const char *nsys_col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* ---- composing statements -------------------------------------------------------- */

void nsys_sql_add(sqlbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->n += (size_t)n < sizeof b->s - b->n ? (size_t)n : sizeof b->s - b->n - 1;
}

/* ", x.col", or ", NULL" when the table has no such column. */
void nsys_sql_col(nsys_db *d, sqlbuf *b, int table, const char *col)
{
    if (nsys_has_col(d, table, col))
        nsys_sql_add(b, ", x.\"%s\"", col);
    else
        nsys_sql_add(b, ", NULL");
}

/* A row's name columns, at the end of its select list: the text column
 * (when text_col is given), then each of cols, the StringIds ids, as they
 * are: ", NULL" for one the table lacks, or all of cols without StringIds.
 * row_name resolves them after the sort. */
void nsys_sql_names(nsys_db *d, sqlbuf *b, int table, const char *const *cols, size_t ncols,
                    const char *text_col)
{
    if (text_col)
        nsys_sql_col(d, b, table, text_col);
    for (size_t i = 0; i < ncols; i++) {
        if (nsys_has_table(d, T_STRINGS))
            nsys_sql_col(d, b, table, cols[i]);
        else
            nsys_sql_add(b, ", NULL");
    }
}
