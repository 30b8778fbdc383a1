/* report_json.c - the analyze report as JSON text (see report_json.h).
 * cJSON's own printer indents with tabs, writes a line per member even for
 * a three-number point, and passes invalid UTF-8 from region names straight
 * through; this one keeps the output short, stable and always valid
 * (strings through util/jsonesc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_json.h"
#include "util/jsonesc.h"

const char *report_number(char buf[REPORT_NUM_BUF], double v)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return buf;
    }
    /* Integral values (every double from 2^53 on is one) print exactly in
     * at most 20 digits below 1e19: nanosecond epochs stay readable. */
    if (v == floor(v) && fabs(v) < 1e19) {
        snprintf(buf, REPORT_NUM_BUF, "%.0f", v == 0.0 ? 0.0 : v); /* no "-0" */
        return buf;
    }
    snprintf(buf, REPORT_NUM_BUF, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, REPORT_NUM_BUF, "%.17g", v);
    return buf;
}

static int is_container(const cJSON *item)
{
    return cJSON_IsArray(item) || cJSON_IsObject(item);
}

/* Containers with no container inside go on one line. */
static int is_flat(const cJSON *item)
{
    for (const cJSON *c = item->child; c; c = c->next)
        if (is_container(c))
            return 0;
    return 1;
}

static void put_indent(FILE *out, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

static void put_value(FILE *out, const cJSON *item, int depth)
{
    char num[REPORT_NUM_BUF];
    if (cJSON_IsNumber(item)) {
        report_number(num, item->valuedouble);
        fputs(num[0] ? num : "null", out);
    } else if (cJSON_IsString(item)) {
        jsonesc_fputs(item->valuestring ? item->valuestring : "", out);
    } else if (cJSON_IsTrue(item)) {
        fputs("true", out);
    } else if (cJSON_IsFalse(item)) {
        fputs("false", out);
    } else if (is_container(item)) {
        int object = cJSON_IsObject(item);
        fputc(object ? '{' : '[', out);
        int flat = is_flat(item);
        for (const cJSON *c = item->child; c; c = c->next) {
            if (flat) {
                if (c != item->child)
                    fputs(", ", out);
            } else {
                fputs(c == item->child ? "\n" : ",\n", out);
                put_indent(out, depth + 1);
            }
            if (object) {
                jsonesc_fputs(c->string ? c->string : "", out);
                fputs(": ", out);
            }
            put_value(out, c, depth + 1);
        }
        if (!flat) {
            fputc('\n', out);
            put_indent(out, depth);
        }
        fputc(object ? '}' : ']', out);
    } else {
        fputs("null", out); /* cJSON_NULL, and anything raw or invalid */
    }
}

prof_err report_render_json(FILE *out, const cJSON *report)
{
    put_value(out, report, 0);
    fputc('\n', out);
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
