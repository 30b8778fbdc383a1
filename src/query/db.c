/* db.c - the connection of `prof query`: an in-memory SQLite database in
 * which each table of tables.c is an eponymous virtual table over the
 * input's ranks; what its tables share (a reader of a rank, a failure
 * kept as the statement's, the progress); and the SQLite file of `prof
 * export --format sqlite`, which is those tables copied whole (so both
 * answer alike). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "model/profile.h"
#include "query/query_int.h"
#include "util/error.h"

/* ---- what the tables share: their reads, their errors, the progress ---- */

prof_err q_nomem(prof_error *err)
{
    return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
}

void q_file_error(const q_rank *r, prof_err code, const char *why, prof_error *err)
{
    char subject[PROF_SUBJECT_MAX], copy[sizeof err->message];
    snprintf(copy, sizeof copy, "%s", why);
    prof_error_set(err, code, "cannot read '%s': %.120s", prof_error_subject(subject, r->label),
                   copy);
}

prof_err q_reader_open(query_db *q, const q_rank *r, prof_reader **out, prof_error *err)
{
    prof_error own = { PROF_OK, "" };
    prof_err e = prof_reader_open(r->path, out, &own);
    if (e != PROF_OK) {
        if (err)
            q_file_error(r, e, own.message, err);
        return e;
    }
    pf_reader_tune(*out, q->tuning);
    return PROF_OK;
}

void q_reader_error(const q_rank *r, prof_reader *rd, prof_error *err)
{
    const prof_error *re = prof_reader_error(rd);
    q_file_error(r, re->code == PROF_OK ? PROF_ERR_CORRUPT : re->code, re->message, err);
}

int q_fail(query_db *q, sqlite3_vtab *vt, const prof_error *err)
{
    if (q->err.code == PROF_OK)
        q->err = *err;
    sqlite3_free(vt->zErrMsg);
    vt->zErrMsg = sqlite3_mprintf("%s", err->message);
    return err->code == PROF_ERR_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

void q_progress(query_db *q, unsigned long long events)
{
    unsigned long long before = q->done;
    q->done += events;
    if (q->progress && before / 100000 != q->done / 100000) {
        unsigned long long total = 0;
        for (size_t i = 0; i < q->n; i++)
            total += q->ranks[i].events;
        q->progress(q->progress_arg, q->done, total);
    }
}

prof_err q_read_all(query_db *q, q_rank *r, uint64_t from, uint64_t to,
                    int (*each)(void *arg, const prof_event *ev),
                    int (*end)(void *arg, prof_reader *rd), void *arg, prof_error *err)
{
    prof_reader *rd;
    prof_err e = q_reader_open(q, r, &rd, err);
    if (e != PROF_OK)
        return e;
    if (from > 0 || to != UINT64_MAX)
        prof_reader_set_window(rd, from, to);
    const prof_event *evs;
    size_t n;
    int got;
    while (e == PROF_OK && (got = prof_reader_next_batch(rd, &evs, &n)) == 1) {
        for (size_t i = 0; i < n && e == PROF_OK; i++)
            if (each(arg, &evs[i]) < 0)
                e = q_nomem(err);
        q_progress(q, n);
    }
    if (e == PROF_OK && got < 0) {
        q_reader_error(r, rd, err);
        e = err->code;
    }
    if (e == PROF_OK && end && end(arg, rd) < 0)
        e = q_nomem(err);
    prof_reader_close(rd);
    return e;
}

/* ---- the connection ---- */

/* The rank and metadata of in, from its header. */
static prof_err rank_init(query_db *q, q_rank *r, const query_input *in, prof_error *err)
{
    r->path = strdup(in->path);
    r->label = strdup(in->label ? in->label : in->path);
    if (!r->path || !r->label)
        return q_nomem(err);
    prof_reader *rd;
    prof_err e = q_reader_open(q, r, &rd, err);
    if (e != PROF_OK)
        return e;
    r->meta = cJSON_Parse(prof_reader_metadata(rd));
    prof_reader_close(rd);
    if (!r->meta && !(r->meta = cJSON_CreateObject()))
        return q_nomem(err);
    int rank, world;
    model_metadata_rank(r->meta, &rank, &world);
    r->rank = rank < 0 ? 0 : rank;
    return PROF_OK;
}

static int rank_order(const void *a, const void *b)
{
    const q_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int q_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
              char **errmsg)
{
    (void)argc;
    (void)argv;
    (void)errmsg;
    q_module *m = aux;
    char *decl = q_declare(m->t);
    if (!decl)
        return SQLITE_NOMEM;
    int rc = sqlite3_declare_vtab(db, decl);
    sqlite3_free(decl);
    if (rc != SQLITE_OK)
        return rc;
    q_vtab *vt = sqlite3_malloc(sizeof *vt);
    if (!vt)
        return SQLITE_NOMEM;
    memset(vt, 0, sizeof *vt);
    vt->m = m;
    *out = &vt->base;
    return SQLITE_OK;
}

int q_disconnect(sqlite3_vtab *vt)
{
    sqlite3_free(vt);
    return SQLITE_OK;
}

static prof_err register_tables(query_db *q, prof_error *err)
{
    q->modules = calloc(q_ntables, sizeof *q->modules);
    if (!q->modules)
        return q_nomem(err);
    for (size_t i = 0; i < q_ntables; i++) {
        q->modules[i] = (q_module){ q, &q_tables[i] };
        const sqlite3_module *mod =
            q_tables[i].source == Q_EVENTS ? &q_events_module : &q_rows_module;
        if (sqlite3_create_module_v2(q->db, q_tables[i].name, mod, &q->modules[i], NULL) !=
            SQLITE_OK) {
            return prof_error_set(err, PROF_ERR_NOMEM, "cannot register table %s: %s",
                                  q_tables[i].name, sqlite3_errmsg(q->db));
        }
    }
    return PROF_OK;
}

prof_err query_open(const query_input *in, size_t n, const analysis_options *o,
                    const prof_tuning *t, query_db **out, prof_error *err)
{
    *out = NULL;
    query_db *q = calloc(1, sizeof *q);
    if (!q || !(q->ranks = calloc(n ? n : 1, sizeof *q->ranks))) {
        free(q);
        return q_nomem(err);
    }
    q->tuning = t;
    if (o)
        q->opts = *o;
    else
        analysis_options_default(&q->opts);
    q->opts.top = 0; /* every operation is a row */
    q->opts.max_names = 0;
    q->opts.tuning = t;
    prof_err e = PROF_OK;
    for (size_t i = 0; e == PROF_OK && i < n; i++, q->n++)
        e = rank_init(q, &q->ranks[i], &in[i], err);
    if (e == PROF_OK) {
        qsort(q->ranks, q->n, sizeof *q->ranks, rank_order);
        for (size_t i = 1; i < q->n; i++)
            if (q->ranks[i].rank == q->ranks[i - 1].rank) {
                char a[PROF_SUBJECT_MAX], b[PROF_SUBJECT_MAX];
                e = prof_error_set(err, PROF_ERR_INVALID,
                                   "'%s' and '%s' are both rank %ld: not the ranks of one job",
                                   prof_error_subject(a, q->ranks[i - 1].label),
                                   prof_error_subject(b, q->ranks[i].label), q->ranks[i].rank);
                break;
            }
    }
    if (e == PROF_OK && sqlite3_open_v2(":memory:", &q->db,
                                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
                            SQLITE_OK)
        e = q_nomem(err);
    if (e == PROF_OK)
        e = register_tables(q, err);
    if (e == PROF_OK) { /* the sorter of GROUP BY and ORDER BY on the tuning's cores */
        char *sql = sqlite3_mprintf("PRAGMA threads=%u;", tuning_threads(t));
        if (!sql || sqlite3_exec(q->db, sql, NULL, NULL, NULL) != SQLITE_OK)
            e = q_nomem(err);
        sqlite3_free(sql);
    }
    if (e != PROF_OK) {
        query_close(q);
        return e;
    }
    *out = q;
    return PROF_OK;
}

void query_close(query_db *q)
{
    if (!q)
        return;
    sqlite3_close_v2(q->db);
    for (size_t i = 0; i < q->n; i++)
        q_rank_free(&q->ranks[i]);
    free(q->ranks);
    free(q->modules);
    free(q);
}

sqlite3 *query_sqlite(query_db *q)
{
    return q->db;
}

const prof_error *query_table_error(const query_db *q)
{
    return &q->err;
}

void query_set_progress(query_db *q, query_progress_fn fn, void *arg)
{
    q->progress = fn;
    q->progress_arg = arg;
    q->done = 0;
}

unsigned long long query_events_read(const query_db *q)
{
    return q->done;
}

/* ---- the SQLite file ---- */

/* Runs sql; PROF_OK, or the table's error or SQLite's as err. */
static prof_err exec(query_db *q, const char *sql, prof_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return PROF_OK;
    if (q->err.code != PROF_OK) {
        *err = q->err;
    } else {
        prof_error_set(err, rc == SQLITE_NOMEM ? PROF_ERR_NOMEM : PROF_ERR_IO, "%s",
                       msg ? msg : sqlite3_errstr(rc));
    }
    sqlite3_free(msg);
    return err->code;
}

/* Creates out.NAME with t's columns, copies the rows and adds the indexes. */
static prof_err copy_table(query_db *q, const q_table *t, prof_error *err)
{
    char *decl = q_declare(t);
    if (!decl)
        return q_nomem(err);
    /* q_declare says "CREATE TABLE x(...)": the columns are after the x */
    char *sql = sqlite3_mprintf("CREATE TABLE out.\"%w\"%s; INSERT INTO out.\"%w\" SELECT * FROM "
                                "main.\"%w\";",
                                t->name, decl + strlen("CREATE TABLE x"), t->name, t->name);
    sqlite3_free(decl);
    if (!sql)
        return q_nomem(err);
    prof_err e = exec(q, sql, err);
    sqlite3_free(sql);
    for (const char *p = t->indexes; e == PROF_OK && p && *p;) {
        size_t len = strcspn(p, ";");
        char cols[128];
        snprintf(cols, sizeof cols, "%.*s", (int)len, p);
        char name[160];
        snprintf(name, sizeof name, "%s_by_%.*s", t->name, (int)len, p);
        for (char *c = name; *c; c++)
            if (*c == ',')
                *c = '_';
        sql = sqlite3_mprintf("CREATE INDEX out.\"%w\" ON \"%w\"(%s);", name, t->name, cols);
        if (!sql)
            return q_nomem(err);
        e = exec(q, sql, err);
        sqlite3_free(sql);
        p += len + (p[len] == ';');
    }
    return e;
}

prof_err query_export_sqlite(query_db *q, const char *path, prof_error *err)
{
    q->err = (prof_error){ PROF_OK, "" };
    char *attach = sqlite3_mprintf("ATTACH DATABASE '%q' AS out", path);
    if (!attach)
        return q_nomem(err);
    prof_err e = exec(q, attach, err);
    sqlite3_free(attach);
    if (e != PROF_OK)
        return e;
    e = exec(q, "PRAGMA out.journal_mode=OFF; PRAGMA out.synchronous=OFF; BEGIN;", err);
    for (size_t i = 0; e == PROF_OK && i < q_ntables; i++)
        e = copy_table(q, &q_tables[i], err);
    if (e == PROF_OK)
        e = exec(q, "COMMIT;", err);
    else
        sqlite3_exec(q->db, "ROLLBACK;", NULL, NULL, NULL);
    prof_error ignored;
    prof_err d = exec(q, "DETACH DATABASE out;", &ignored);
    if (e == PROF_OK && d != PROF_OK)
        *err = ignored, e = d;
    return e;
}
