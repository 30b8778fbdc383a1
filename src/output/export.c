/* export.c - the export driver: one pass over the reader's events, handed
 * to the chosen format's functions (export_out.h), with write errors and
 * read errors told apart for the command's exit status. */
#include <stdlib.h>
#include <string.h>

#include "output/export.h"
#include "output/export_out.h"
#include "util/error.h"

static const struct {
    const char *name;
    export_format format;
} format_names[] = {
    { "chrome-trace", EXPORT_CHROME_TRACE },
    { "csv", EXPORT_CSV },
    { "json", EXPORT_JSON },
    { "folded", EXPORT_FOLDED },
};

int export_format_parse(const char *name, export_format *f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcmp(name, format_names[i].name) == 0) {
            *f = format_names[i].format;
            return 0;
        }
    return -1;
}

static const export_ops *ops_of(export_format f)
{
    switch (f) {
    case EXPORT_CHROME_TRACE: return &export_chrome_ops;
    case EXPORT_CSV: return &export_csv_ops;
    case EXPORT_JSON: return &export_json_ops;
    case EXPORT_FOLDED: return &export_folded_ops;
    }
    return NULL;
}

/* Feeds every event to the format; stops at the first error of either side. */
static prof_err export_events(export_ctx *x, const export_ops *ops)
{
    prof_event ev;
    int rc;
    while ((rc = prof_reader_next(x->reader, &ev)) == 1) {
        prof_err e = ops->event(x, &ev);
        if (e != PROF_OK)
            return e;
        if (eo_failed(x->out))
            return PROF_ERR_IO;
    }
    if (rc < 0) {
        const prof_error *re = prof_reader_error(x->reader);
        return prof_error_set(x->err, re->code, "%s", re->message);
    }
    return PROF_OK;
}

prof_err export_profile(prof_reader *r, export_format f, unsigned options, FILE *out,
                        export_result *res, prof_error *err)
{
    memset(res, 0, sizeof *res);
    const export_ops *ops = ops_of(f);
    if (!ops)
        return prof_error_set(err, PROF_ERR_INVALID, "unknown export format %d", (int)f);
    export_out *o = malloc(sizeof *o);
    if (!o)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    eo_init(o, out);
    export_ctx x = { o, r, options, NULL, err };
    prof_err e = ops->begin(&x);
    if (e == PROF_OK && !eo_failed(o))
        e = export_events(&x, ops);
    prof_reader_status(r, &res->status);
    if (e == PROF_OK && !eo_failed(o))
        e = ops->end(&x, &res->status);
    ops->finish(&x);
    if ((e == PROF_OK || eo_failed(o)) && eo_flush(o) < 0) {
        res->output_failed = 1;
        e = prof_error_set(err, PROF_ERR_IO, "%s",
                           o->failed > 0 ? strerror(o->failed) : "write error");
    }
    free(o);
    return e;
}
