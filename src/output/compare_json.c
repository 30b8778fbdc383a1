/* compare_json.c - the comparison as JSON with its operations' rows built
 * one at a time (see compare_json.h). Each member and each row is written
 * by report_render_json, so that numbers, escapes and line breaks stay its
 * own, and then indented to its depth: its strings hold no raw newline
 * (util/jsonesc escapes them), so a line break is always layout. */
#include <stdlib.h>
#include <string.h>

#include "analysis/report_keys.h"
#include "output/compare_json.h"
#include "output/report_json.h"
#include "util/jsonesc.h"

/* v as report_render_json writes it, each line after the first indented
 * by `depth` levels more, without the final newline. */
static prof_err put_at(FILE *out, const cJSON *v, int depth)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return PROF_ERR_NOMEM;
    prof_err e = report_render_json(mem, v);
    if (fclose(mem) != 0 || e != PROF_OK || !text) {
        free(text);
        return PROF_ERR_NOMEM;
    }
    if (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    for (const char *p = text, *nl; *p; p = nl + 1) {
        if (!(nl = strchr(p, '\n'))) {
            fputs(p, out);
            break;
        }
        fwrite(p, 1, (size_t)(nl - p + 1), out);
        for (int i = 0; i < depth; i++)
            fputs("  ", out);
    }
    free(text);
    return PROF_OK;
}

/* The operations' array at depth 1, as put_value lays out a container of
 * containers: each row on its own line at depth 2. */
static prof_err put_rows(FILE *out, const compare_ops *ops)
{
    size_t n = compare_ops_count(ops);
    if (n == 0) {
        fputs("[]", out);
        return PROF_OK;
    }
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        cJSON *row = compare_ops_row(ops, i);
        if (!row)
            return PROF_ERR_NOMEM;
        fputs(i == 0 ? "\n    " : ",\n    ", out);
        prof_err e = put_at(out, row, 2);
        cJSON_Delete(row);
        if (e != PROF_OK)
            return e;
    }
    fputs("\n  ]", out);
    return PROF_OK;
}

prof_err compare_render_json(FILE *out, const cJSON *cmp, const compare_ops *ops)
{
    if (!ops)
        return report_render_json(out, cmp);
    fputc('{', out);
    for (const cJSON *m = cmp ? cmp->child : NULL; m; m = m->next) {
        fputs(m == cmp->child ? "\n  " : ",\n  ", out);
        jsonesc_fputs(m->string ? m->string : "", out);
        fputs(": ", out);
        prof_err e = m->string && strcmp(m->string, RK_OPERATIONS) == 0 ? put_rows(out, ops)
                                                                         : put_at(out, m, 1);
        if (e != PROF_OK)
            return e;
    }
    fputs(cmp && cmp->child ? "\n}\n" : "}\n", out);
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
