/* query.c - `prof query INPUT... SQL`: a SQL statement over a profile's
 * tables (src/query/, formats/query.md), its rows as a table, CSV or JSON. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "output/query_out.h"
#include "query/query.h"

static const char usage[] =
    "usage: prof query INPUT... SQL [--format table|csv|json] [-o FILE]\n"
    "                    [--limit N] [--wide] [--no-color]\n"
    "                    " CMD_ANALYSIS_USAGE
    "\n"
    "Runs SQL (SQLite's) over the tables of a profile, a trace prof imports,\n"
    "or the ranks of one job (profiles, or a directory of them), and writes\n"
    "the rows of its last statement. Tables (formats/query.md): regions, steps,\n"
    "kernels, copies, memsets, api_calls, syncs, memory, counters, marks,\n"
    "threads, ranks, metadata, and the analysis's operations, bottlenecks and\n"
    "memory_fits. Times are nanoseconds since the profile's clock origin.\n"
    "A filter on rank, step or start_ns reads only the blocks it needs.\n"
    "\n"
    "  -f, --format FORMAT  table (default), csv or json (an array of objects)\n"
    "  -o, --output FILE    write FILE (whole or not at all); '-' or none: stdout\n"
    "  -n, --limit N        rows written at most; 0: all (default 100 for the\n"
    "                       table, all for csv and json)\n"
    "      --wide           whole values in the table, however long\n"
    "      --no-color       (accepted for symmetry; the table has no colour)\n"
    CMD_ANALYSIS_HELP
    "  -h, --help           show this help\n"
    "\n"
    "Several statements separated by ';' run in order; the rows of the last\n"
    "are written (the others may create views or temporary tables).\n"
    "\n"
    "Examples:\n"
    "  prof query run.prof \"SELECT name, COUNT(*), SUM(dur_ns) FROM regions\n"
    "                       GROUP BY name ORDER BY 3 DESC\"\n"
    "  prof query ranks/ \"SELECT rank, AVG(dur_ns) FROM steps GROUP BY rank\"\n"
    "\n"
    "Exit status: 0 success, 2 usage error or SQL error (one line with the\n"
    "position SQLite reports), 3 unreadable or corrupt input, 4 output error,\n"
    "5 out of memory.\n";

#define CMD "query"
#define TABLE_LIMIT 100

typedef struct query_args {
    const char *output, *format_name;
    query_format format;
    long long limit;             /* -1: the format's default */
    int wide;
    analysis_options analysis;
} query_args;

enum { OPT_WIDE = CMD_FIRST_LONG, OPT_NO_COLOR };

static const struct option long_options[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "limit", required_argument, NULL, 'n' },
    { "wide", no_argument, NULL, OPT_WIDE },
    { "no-color", no_argument, NULL, OPT_NO_COLOR },
    CMD_ANALYSIS_OPTIONS,
    { 0, 0, 0, 0 }
};

static void init_args(void *args)
{
    query_args *a = args;
    a->limit = -1;
    analysis_options_default(&a->analysis);
}

static int parse_option(void *args, int c, const char *arg)
{
    query_args *a = args;
    switch (c) {
    case 'f':
        a->format_name = arg;
        if (query_format_parse(arg, &a->format) < 0)
            return cmd_usage_error(CMD, "unknown format '%s' (table, csv or json)", arg);
        return EXIT_OK;
    case 'o': a->output = arg; return EXIT_OK;
    case 'n': {
        char *end;
        long long v = strtoll(arg, &end, 10);
        if (end == arg || *end || v < 0)
            return cmd_usage_error(CMD, "--limit takes a count of rows, not '%s'", arg);
        a->limit = v;
        return EXIT_OK;
    }
    case OPT_WIDE: a->wide = 1; return EXIT_OK;
    case OPT_NO_COLOR: return EXIT_OK;
    }
    int status = cmd_analysis_option(CMD, c, arg, &a->analysis);
    return status < 0 ? EXIT_USAGE : status;
}

/* ---- progress: a line on a terminal once a statement has run a second ---- */

typedef struct query_progress {
    int tty;
    struct timespec began;
    double last;
    int shown;
} query_progress;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(void *arg, unsigned long long done, unsigned long long total)
{
    query_progress *p = arg;
    double s = since(&p->began);
    if (!p->tty || s < 1.0 || s - p->last < 0.1)
        return;
    p->last = s;
    if (total >= done)
        fprintf(stderr, "\rquery: %.1fM events read (files hold %.1fM), %.0f s", (double)done / 1e6,
                (double)total / 1e6, s);
    else
        fprintf(stderr, "\rquery: %.1fM events read, %.0f s", (double)done / 1e6, s);
    fflush(stderr);
    p->shown = 1;
}

static void end_progress(query_progress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

/* ---- running the statements ---- */

/* The exit status of a failed statement: the table's input error when a
 * table failed, else a SQL error (usage). */
static int statement_failed(query_db *q, const char *msg, int offset)
{
    const prof_error *te = query_table_error(q);
    if (te->code != PROF_OK)
        return cmd_error(CMD, cmd_input_status(te->code), "%s", te->message);
    if (offset >= 0)
        return cmd_error(CMD, EXIT_USAGE, "SQL error at character %d: %s", offset, msg);
    return cmd_error(CMD, EXIT_USAGE, "SQL error: %s", msg);
}

/* The characters (UTF-8 sequences) in the first n bytes of s: SQLite
 * says where an error is in bytes, a user counts characters. */
static int characters_before(const char *s, ptrdiff_t n)
{
    int chars = 0;
    for (ptrdiff_t i = 0; i < n && s[i]; i++)
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    return chars;
}

/* Whether sql holds no statement: blanks, semicolons and comments. */
static int sql_blank(const char *sql)
{
    for (;;) {
        sql += strspn(sql, " \t\r\n\f\v;");
        if (sql[0] == '-' && sql[1] == '-') {
            sql += strcspn(sql, "\n");
        } else if (sql[0] == '/' && sql[1] == '*') {
            const char *end = strstr(sql + 2, "*/");
            if (!end)
                return 1; /* an unclosed comment is a comment to the end */
            sql = end + 2;
        } else {
            return *sql == 0;
        }
    }
}

/* Prepares and runs each statement of sql in turn (so that one may use
 * what an earlier one created); the last one's rows into out. */
static int run_sql(query_db *q, const char *sql, FILE *out, const query_render_opts *ro)
{
    sqlite3 *db = query_sqlite(q);
    const char *rest = sql;
    while (!sql_blank(rest)) {
        sqlite3_stmt *st = NULL;
        const char *tail;
        if (sqlite3_prepare_v2(db, rest, -1, &st, &tail) != SQLITE_OK) {
            int at = sqlite3_error_offset(db);
            return statement_failed(q, sqlite3_errmsg(db),
                                    at >= 0 ? characters_before(sql, (rest - sql) + at) + 1 : -1);
        }
        rest = tail;
        if (!st)
            continue;
        if (sql_blank(rest)) { /* the last: its rows are the output */
            query_render_result res;
            prof_error err = { PROF_OK, "" };
            prof_err e = query_render(out, st, ro, &res, &err);
            sqlite3_finalize(st);
            if (e == PROF_ERR_INVALID)
                return statement_failed(q, err.message, -1);
            if (e == PROF_ERR_NOMEM)
                return cmd_error(CMD, EXIT_NOMEM, "out of memory while running the statement");
            return e == PROF_OK ? EXIT_OK : EXIT_OUTPUT;
        }
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ;
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return statement_failed(q, sqlite3_errmsg(db), -1);
    }
    return cmd_usage_error(CMD, "no SQL statement given");
}

static int query_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    query_args *a = args;
    if (argc < 2)
        return cmd_usage_error(CMD, argc == 0 ? "no profile and no SQL given" : "no SQL given");
    const char *sql = argv[argc - 1];
    cmd_query_inputs in;
    query_db *q = NULL;
    int status = cmd_query_open(CMD, t, argc - 1, argv, &a->analysis, &in, &q);
    if (status == EXIT_OK) {
        report_style style = cmd_text_style(a->output, 1);
        style.wide = a->wide;
        query_render_opts ro = { a->format,
                                 a->limit >= 0 ? (size_t)a->limit
                                 : a->format == QUERY_FORMAT_TABLE ? TABLE_LIMIT
                                                                   : 0,
                                 &style };
        query_progress p = { isatty(STDERR_FILENO), { 0, 0 }, 0, 0 };
        clock_gettime(CLOCK_MONOTONIC, &p.began);
        query_set_progress(q, show_progress, &p);
        outfile o;
        prof_error err = { PROF_OK, "" };
        if (cmd_output_open(&o, a->output, &err) != PROF_OK) {
            status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
        } else {
            status = run_sql(q, sql, o.fp, &ro);
            end_progress(&p);
            if (status == EXIT_OUTPUT || (status == EXIT_OK && ferror(o.fp))) {
                cmd_output_abort(&o);
                status = cmd_error(CMD, EXIT_OUTPUT, "cannot write '%s'",
                                   a->output ? a->output : "standard output");
            } else if (status != EXIT_OK) {
                cmd_output_abort(&o);
            } else if (cmd_output_commit(&o, &err) != PROF_OK) {
                status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
            }
        }
    }
    query_close(q);
    cmd_query_inputs_free(&in);
    return status;
}

const cmd_spec cmd_query = { usage, "f:o:n:", long_options, sizeof(query_args), init_args,
                             parse_option, query_main };
