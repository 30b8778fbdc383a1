/* rows.c - the tables whose rows are few (steps, threads, ranks, metadata)
 * or are the analysis's results (operations, bottlenecks, memory_fits): an
 * eponymous virtual table over a JSON array built for each rank when a
 * statement reads it. The analysis tables are the report's own sections
 * (formats/report.schema.json), built as `prof analyze` builds them with
 * every operation kept, so that the figures are the same as the report's;
 * a constraint on rank chooses which ranks are loaded. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/report_keys.h"
#include "format/meta_keys.h"
#include "query/query_int.h"

/* ---- row sources ---- */

static cJSON *add_number(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v);
}

prof_err q_rows_steps(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    prof_err e = q_rank_index(q, r, err);
    if (e != PROF_OK)
        return e;
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < r->steps.n; i++) {
        const q_step *s = &r->steps.s[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !add_number(o, "step", (double)s->number) ||
            !add_number(o, "start_ns", (double)s->start_ns) ||
            !add_number(o, "end_ns", (double)(s->start_ns + s->dur_ns)) ||
            !add_number(o, "dur_ns", (double)s->dur_ns) ||
            !cJSON_AddBoolToObject(o, "sampled", (s->flags & PROF_STEP_SAMPLED) != 0) ||
            !cJSON_AddBoolToObject(o, "incomplete", (s->flags & PROF_STEP_INCOMPLETE) != 0)) {
            cJSON_Delete(a);
            a = NULL;
        }
    }
    *out = a;
    return a ? PROF_OK : q_nomem(err);
}

prof_err q_rows_threads(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    prof_err e = q_rank_index(q, r, err);
    if (e != PROF_OK)
        return e;
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < r->nthreads; i++) {
        const q_thread *t = &r->threads[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !add_number(o, "thread", t->thread) ||
            !(t->thread == PROF_THREAD_GPU ? cJSON_AddStringToObject(o, "name", "GPU")
              : t->name                    ? cJSON_AddStringToObject(o, "name", t->name)
                                           : cJSON_AddNullToObject(o, "name")) ||
            !(t->thread == PROF_THREAD_GPU ? cJSON_AddNullToObject(o, "os_tid")
                                           : add_number(o, "os_tid", (double)t->os_tid)) ||
            !add_number(o, "events", (double)t->events)) {
            cJSON_Delete(a);
            a = NULL;
        }
    }
    *out = a;
    return a ? PROF_OK : q_nomem(err);
}

static const cJSON *meta_item(const q_rank *r, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(r->meta, key);
}

prof_err q_rows_ranks(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    prof_err e = q_rank_index(q, r, err);
    if (e != PROF_OK)
        return e;
    cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
    const cJSON *clock = meta_item(r, MK_CLOCK);
    const char *keys[] = { MK_WORLD_SIZE, MK_HOST, MK_PID };
    int ok = a && o && cJSON_AddItemToArray(a, o) && cJSON_AddStringToObject(o, "path", r->label);
    for (size_t i = 0; ok && i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = meta_item(r, keys[i]);
        if (v && (cJSON_IsNumber(v) || cJSON_IsString(v)))
            ok = cJSON_AddItemToObject(o, keys[i], cJSON_Duplicate(v, 0)) != 0;
    }
    if (ok) {
        const cJSON *origin = cJSON_GetObjectItemCaseSensitive(clock, MK_ORIGIN_EPOCH_NS);
        if (cJSON_IsNumber(origin))
            ok = add_number(o, "origin_epoch_ns", origin->valuedouble) != NULL;
    }
    prof_reader *rd;
    e = ok ? q_reader_open(q, r, &rd, err) : q_nomem(err);
    if (e == PROF_OK) {
        unsigned major, minor;
        char version[32];
        prof_reader_version(rd, &major, &minor);
        prof_reader_close(rd);
        snprintf(version, sizeof version, "%u.%u", major, minor);
        if (!cJSON_AddStringToObject(o, "format_version", version))
            e = q_nomem(err);
    }
    if (e == PROF_OK &&
        (!cJSON_AddBoolToObject(o, "clean", r->clean) ||
         !cJSON_AddStringToObject(o, "detail", r->detail) ||
         !add_number(o, "events", (double)r->events) || !add_number(o, "steps", (double)r->steps.n)))
        e = q_nomem(err);
    if (e != PROF_OK) {
        cJSON_Delete(a ? a : o);
        return e;
    }
    *out = a;
    return PROF_OK;
}

/* Flattens v under key ("clock.source", "argv[0]") into rows of a. */
static int flatten(cJSON *a, const char *key, const cJSON *v)
{
    char sub[512];
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++) {
            if (cJSON_IsObject(v))
                snprintf(sub, sizeof sub, "%s%s%s", key, *key ? "." : "", c->string);
            else
                snprintf(sub, sizeof sub, "%s[%d]", key, i);
            if (flatten(a, sub, c) < 0)
                return -1;
        }
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
        cJSON_Delete(o);
        return -1;
    }
    if (!cJSON_AddStringToObject(o, "key", key))
        return -1;
    if (cJSON_IsString(v))
        return cJSON_AddStringToObject(o, "value", v->valuestring) ? 0 : -1;
    if (cJSON_IsNull(v))
        return cJSON_AddNullToObject(o, "value") ? 0 : -1;
    if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble &&
        fabs(v->valuedouble) < 9e18) { /* an epoch in ns as digits, not 1.79e+18 */
        char digits[32];
        snprintf(digits, sizeof digits, "%lld", (long long)v->valuedouble);
        return cJSON_AddStringToObject(o, "value", digits) ? 0 : -1;
    }
    char *text = cJSON_PrintUnformatted(v);
    int ok = text && cJSON_AddStringToObject(o, "value", text);
    cJSON_free(text);
    return ok ? 0 : -1;
}

prof_err q_rows_metadata(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    (void)q;
    cJSON *a = cJSON_CreateArray();
    if (!a || flatten(a, "", r->meta) < 0) {
        cJSON_Delete(a);
        return q_nomem(err);
    }
    *out = a;
    return PROF_OK;
}

/* The report of r, built once. */
static prof_err rank_report(query_db *q, q_rank *r, prof_error *err)
{
    if (r->report)
        return PROF_OK;
    profile_model m;
    prof_err e = profile_model_load(r->path, q->tuning, &m, NULL, NULL, err);
    if (e != PROF_OK) {
        q_file_error(r, e, err->message, err);
        profile_model_free(&m);
        return e;
    }
    const profile_model *one = &m;
    r->report = report_build(&one, 1, &q->opts, err);
    profile_model_free(&m);
    return r->report ? PROF_OK : err->code;
}

/* A copy of the report's array at key. */
static prof_err report_rows(query_db *q, q_rank *r, const char *key, cJSON **out,
                            prof_error *err)
{
    prof_err e = rank_report(q, r, err);
    if (e != PROF_OK)
        return e;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(r->report, key);
    *out = rows ? cJSON_Duplicate(rows, 1) : cJSON_CreateArray();
    return *out ? PROF_OK : q_nomem(err);
}

prof_err q_rows_operations(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    return report_rows(q, r, RK_OPERATIONS, out, err);
}

prof_err q_rows_bottlenecks(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    return report_rows(q, r, RK_BOTTLENECKS, out, err);
}

prof_err q_rows_memory_fits(query_db *q, q_rank *r, cJSON **out, prof_error *err)
{
    return report_rows(q, r, RK_MEMORY, out, err);
}

/* ---- the virtual table ---- */

typedef struct q_rows_cursor {
    sqlite3_vtab_cursor base;
    q_vtab *vt;
    long long rank_lo, rank_hi;
    size_t ri;
    cJSON *rows;
    const cJSON *row;
    sqlite3_int64 rowid;
    int eof;
} q_rows_cursor;

static int rows_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
    q_vtab *vt = (q_vtab *)base;
    int argv = 0;
    for (int i = 0; i < info->nConstraint && argv < 2; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->usable && c->iColumn >= 0 && vt->m->t->cols[c->iColumn].field == F_RANK &&
            c->op == SQLITE_INDEX_CONSTRAINT_EQ && argv == 0)
            info->aConstraintUsage[i].argvIndex = ++argv;
    }
    info->idxNum = argv;
    info->estimatedRows = argv ? 100 : 1000;
    info->estimatedCost = argv ? 100.0 : 1000.0;
    return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
    q_rows_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->vt = (q_vtab *)base;
    *out = &c->base;
    return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
    q_rows_cursor *c = (q_rows_cursor *)cur;
    cJSON_Delete(c->rows);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* The next row, loading ranks as needed. */
static int rows_advance(q_rows_cursor *c)
{
    query_db *q = c->vt->m->q;
    for (;;) {
        if (c->row) {
            c->row = c->row->next;
        } else if (c->rows) {
            c->row = c->rows->child;
        }
        if (c->row) {
            c->rowid++;
            return SQLITE_OK;
        }
        if (c->rows) {
            cJSON_Delete(c->rows);
            c->rows = NULL;
            c->ri++;
        }
        while (c->ri < q->n && (q->ranks[c->ri].rank < c->rank_lo ||
                                q->ranks[c->ri].rank > c->rank_hi))
            c->ri++;
        if (c->ri >= q->n) {
            c->eof = 1;
            return SQLITE_OK;
        }
        prof_error err = { PROF_OK, "" };
        if (c->vt->m->t->rows(q, &q->ranks[c->ri], &c->rows, &err) != PROF_OK)
            return q_fail(q, &c->vt->base, &err);
    }
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                       sqlite3_value **argv)
{
    (void)idxStr;
    q_rows_cursor *c = (q_rows_cursor *)cur;
    cJSON_Delete(c->rows);
    c->rows = NULL;
    c->row = NULL;
    c->ri = 0;
    c->rowid = 0;
    c->eof = 0;
    c->rank_lo = LLONG_MIN;
    c->rank_hi = LLONG_MAX;
    if (idxNum == 1 && argc == 1) {
        if (sqlite3_value_numeric_type(argv[0]) != SQLITE_INTEGER) {
            c->eof = 1; /* a rank is an integer: 2.5, NULL or text is no rank */
            return SQLITE_OK;
        }
        c->rank_lo = c->rank_hi = sqlite3_value_int64(argv[0]);
    }
    return rows_advance(c);
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
    return rows_advance((q_rows_cursor *)cur);
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
    return ((q_rows_cursor *)cur)->eof;
}

/* The member at path ("fit.r2") of o. */
static const cJSON *member(const cJSON *o, const char *path)
{
    char key[64];
    for (;;) {
        const char *dot = strchr(path, '.');
        if (!dot)
            return cJSON_GetObjectItemCaseSensitive(o, path);
        size_t n = (size_t)(dot - path);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path = dot + 1;
    }
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    q_rows_cursor *c = (q_rows_cursor *)cur;
    const q_column *qc = &c->vt->m->t->cols[col];
    if (qc->field == F_RANK) {
        sqlite3_result_int64(ctx, c->vt->m->q->ranks[c->ri].rank);
        return SQLITE_OK;
    }
    const cJSON *v = member(c->row, qc->member);
    if (cJSON_IsString(v)) {
        sqlite3_result_text(ctx, v->valuestring, -1, SQLITE_TRANSIENT);
    } else if (cJSON_IsBool(v)) {
        sqlite3_result_int(ctx, cJSON_IsTrue(v));
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (strcmp(qc->type, "INTEGER") == 0 && d == (double)(sqlite3_int64)d && d > -9.2e18 &&
            d < 9.2e18)
            sqlite3_result_int64(ctx, (sqlite3_int64)d);
        else
            sqlite3_result_double(ctx, d);
    } else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        char *text = cJSON_PrintUnformatted(v);
        if (!text)
            return SQLITE_NOMEM;
        sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
        cJSON_free(text);
    }
    return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((q_rows_cursor *)cur)->rowid;
    return SQLITE_OK;
}

const sqlite3_module q_rows_module = {
    .iVersion = 1,
    .xCreate = NULL,
    .xConnect = q_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = q_disconnect,
    .xDestroy = q_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};
