/* query_out.c - the rows of a `prof query` statement as an aligned table,
 * CSV or JSON. Values are user data (names from a profile): the table
 * shows them safe for a terminal (textout), CSV quotes them as every CSV
 * of prof does (csvout), JSON escapes them (jsonesc). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/csvout.h"
#include "output/query_out.h"
#include "output/textout.h"
#include "util/error.h"
#include "util/jsonesc.h"
#include "util/vec.h"

#define CELL_MAX 60 /* columns a table cell takes at most, unless wide */

static prof_err step_error(sqlite3_stmt *st, int rc, prof_error *err)
{
    return prof_error_set(err, rc == SQLITE_NOMEM ? PROF_ERR_NOMEM : PROF_ERR_INVALID, "%s",
                          sqlite3_errmsg(sqlite3_db_handle(st)));
}

static prof_err write_error(prof_error *err)
{
    return prof_error_set(err, PROF_ERR_IO, "write failed");
}

static prof_err out_of_memory(prof_error *err)
{
    return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
}

/* A real as the shortest text that reads back the same. */
static void real_text(double d, char *buf, size_t size)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

/* Column i of the current row as text: NULL for SQL NULL. Blobs as hex. */
static char *cell_text(sqlite3_stmt *st, int i)
{
    char buf[64];
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: return NULL;
    case SQLITE_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)sqlite3_column_int64(st, i));
        return strdup(buf);
    case SQLITE_FLOAT: real_text(sqlite3_column_double(st, i), buf, sizeof buf); return strdup(buf);
    case SQLITE_BLOB: {
        const unsigned char *b = sqlite3_column_blob(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        char *s = malloc(2 * n + 4); /* x, two quotes, the digits, the NUL */
        if (!s)
            return NULL;
        strcpy(s, "x'");
        for (size_t k = 0; k < n; k++)
            snprintf(s + 2 + 2 * k, 3, "%02x", b[k]);
        strcat(s, "'");
        return s;
    }
    default: {
        const unsigned char *t = sqlite3_column_text(st, i);
        return strdup(t ? (const char *)t : "");
    }
    }
}

/* ---- table ---- */

typedef struct q_table_rows {
    char **cells;          /* rows * ncols, NULL for SQL NULL */
    unsigned char *numeric;
    size_t rows, cap, ncols;
} q_table_rows;

static void rows_free(q_table_rows *t)
{
    for (size_t i = 0; i < t->rows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->numeric);
}

static int table_width(textout *to, const char *s)
{
    char *safe = textout_sanitize(to, s ? s : "NULL");
    int w = safe ? textout_cols(safe) : 0;
    free(safe);
    return w;
}

static void table_cell(textout *to, const char *s, int width, int right, int last)
{
    char *safe = textout_shorten(to, s ? s : "NULL", width);
    int w = safe ? textout_cols(safe) : 0;
    if (right)
        fprintf(to->out, "%*s", width - w, "");
    fputs(safe ? safe : "", to->out);
    if (!right && !last)
        fprintf(to->out, "%*s", width - w, "");
    free(safe);
}

static void table_print(textout *to, sqlite3_stmt *st, const q_table_rows *t)
{
    int *width = calloc(t->ncols, sizeof *width);
    if (!width) {
        to->nomem = 1;
        return;
    }
    int cap = to->st.wide ? 1 << 20 : CELL_MAX;
    for (size_t c = 0; c < t->ncols; c++) {
        width[c] = table_width(to, sqlite3_column_name(st, (int)c));
        for (size_t r = 0; r < t->rows; r++) {
            int w = table_width(to, t->cells[r * t->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
        if (width[c] > cap)
            width[c] = cap;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        fputs(c ? "  " : "", to->out);
        table_cell(to, sqlite3_column_name(st, (int)c), width[c], t->numeric[c],
                   c + 1 == t->ncols);
    }
    fputc('\n', to->out);
    for (size_t c = 0; c < t->ncols; c++) {
        fputs(c ? "  " : "", to->out);
        for (int k = 0; k < width[c]; k++)
            fputc('-', to->out);
    }
    fputc('\n', to->out);
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            fputs(c ? "  " : "", to->out);
            table_cell(to, t->cells[r * t->ncols + c], width[c], t->numeric[c], c + 1 == t->ncols);
        }
        fputc('\n', to->out);
    }
    free(width);
}

static prof_err render_table(FILE *out, sqlite3_stmt *st, const query_render_opts *o,
                             query_render_result *res, prof_error *err)
{
    q_table_rows t = { NULL, NULL, 0, 0, (size_t)sqlite3_column_count(st) };
    textout to;
    textout_init(&to, out, o->style);
    if (!(t.numeric = calloc(t.ncols ? t.ncols : 1, 1)))
        return out_of_memory(err);
    memset(t.numeric, 1, t.ncols);
    int rc;
    prof_err e = PROF_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->limit && res->rows >= o->limit) {
            res->more = 1;
            break;
        }
        if (vec_grow(&t.cells, &t.cap, (t.rows + 1) * t.ncols, sizeof *t.cells) < 0) {
            e = PROF_ERR_NOMEM;
            break;
        }
        for (size_t c = 0; c < t.ncols; c++) {
            int type = sqlite3_column_type(st, (int)c);
            char *s = cell_text(st, (int)c);
            if (!s && type != SQLITE_NULL)
                e = PROF_ERR_NOMEM;
            if (type == SQLITE_TEXT || type == SQLITE_BLOB)
                t.numeric[c] = 0;
            t.cells[t.rows * t.ncols + c] = s;
        }
        t.rows++;
        res->rows++;
        if (e != PROF_OK)
            break;
    }
    if (e == PROF_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        e = step_error(st, rc, err);
    else if (e == PROF_ERR_NOMEM)
        out_of_memory(err);
    if (e == PROF_OK && t.ncols) {
        table_print(&to, st, &t);
        if (res->more)
            fprintf(out, "(the first %zu rows; --limit 0 shows all)\n", res->rows);
        else
            fprintf(out, "(%zu row%s)\n", res->rows, res->rows == 1 ? "" : "s");
        e = textout_finish(&to);
        if (e == PROF_ERR_IO)
            write_error(err);
        else if (e != PROF_OK)
            out_of_memory(err);
    }
    rows_free(&t);
    return e;
}

/* ---- CSV and JSON, streamed ---- */

static prof_err render_csv(FILE *out, sqlite3_stmt *st, const query_render_opts *o,
                           query_render_result *res, prof_error *err)
{
    int n = sqlite3_column_count(st);
    for (int c = 0; c < n; c++) {
        fputs(c ? "," : "", out);
        csvout_text(out, sqlite3_column_name(st, c));
    }
    if (n)
        fputc('\n', out);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->limit && res->rows >= o->limit) {
            res->more = 1;
            break;
        }
        for (int c = 0; c < n; c++) {
            fputs(c ? "," : "", out);
            int type = sqlite3_column_type(st, c);
            if (type == SQLITE_NULL)
                continue;
            char *s = cell_text(st, c);
            if (!s)
                return out_of_memory(err);
            if (type == SQLITE_TEXT)
                csvout_text(out, s);
            else
                fputs(s, out);
            free(s);
        }
        fputc('\n', out);
        res->rows++;
        if (ferror(out))
            return write_error(err);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return step_error(st, rc, err);
    return ferror(out) ? write_error(err) : PROF_OK;
}

static prof_err render_json(FILE *out, sqlite3_stmt *st, const query_render_opts *o,
                            query_render_result *res, prof_error *err)
{
    int n = sqlite3_column_count(st);
    fputc('[', out);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->limit && res->rows >= o->limit) {
            res->more = 1;
            break;
        }
        fputs(res->rows ? ",\n{" : "\n{", out);
        for (int c = 0; c < n; c++) {
            fputs(c ? ", " : "", out);
            jsonesc_fputs(sqlite3_column_name(st, c), out);
            fputs(": ", out);
            int type = sqlite3_column_type(st, c);
            char *s = type == SQLITE_NULL ? NULL : cell_text(st, c);
            if (type != SQLITE_NULL && !s)
                return out_of_memory(err);
            if (type == SQLITE_NULL)
                fputs("null", out);
            else if (type == SQLITE_INTEGER)
                fputs(s, out);
            else if (type == SQLITE_FLOAT)
                fputs(strspn(s, "-0123456789.e+") == strlen(s) ? s : "null", out); /* inf, nan */
            else
                jsonesc_fputs(s, out);
            free(s);
        }
        fputc('}', out);
        res->rows++;
        if (ferror(out))
            return write_error(err);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return step_error(st, rc, err);
    fputs(res->rows ? "\n]\n" : "]\n", out);
    return ferror(out) ? write_error(err) : PROF_OK;
}

int query_format_parse(const char *name, query_format *out)
{
    static const char *const names[] = { "table", "csv", "json" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (query_format)i;
            return 0;
        }
    return -1;
}

prof_err query_render(FILE *out, sqlite3_stmt *st, const query_render_opts *o,
                      query_render_result *res, prof_error *err)
{
    memset(res, 0, sizeof *res);
    switch (o->format) {
    case QUERY_FORMAT_CSV: return render_csv(out, st, o, res, err);
    case QUERY_FORMAT_JSON: return render_json(out, st, o, res, err);
    default: return render_table(out, st, o, res, err);
    }
}
