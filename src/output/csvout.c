/* csvout.c - RFC 4180 fields in valid UTF-8 for every CSV (see csvout.h). */
#include <string.h>

#include "output/csvout.h"
#include "output/report_json.h"
#include "util/jsonesc.h"

static int begins_as_formula(const char *s)
{
    return *s && strchr("=+-@\t\r", *s) != NULL;
}

int csvout_needs_quotes(const char *s)
{
    return begins_as_formula(s) || strpbrk(s, ",\"\r\n") != NULL;
}

const char *csvout_lead(const char *s)
{
    return begins_as_formula(s) ? "'" : "";
}

/* A control character a terminal or spreadsheet would act on: C0 but tab,
 * LF and CR (a quoted field keeps those), and DEL. */
static int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

size_t csvout_escape(char *dst, size_t cap, const char *src, size_t n, size_t *used)
{
    const unsigned char *p = (const unsigned char *)src;
    size_t in = 0, out = 0;
    while (in < n) {
        size_t run = 0; /* plain ASCII is copied as one run */
        while (in + run < n && out + run < cap && p[in + run] < 0x80 && p[in + run] != '"' &&
               !is_control(p[in + run]))
            run++;
        if (run) {
            memcpy(dst + out, p + in, run);
            in += run;
            out += run;
            continue;
        }
        size_t len = jsonesc_utf8_len(p + in, n - in);
        const char *put = (const char *)p + in;
        size_t put_len = len;
        if (len == 0 || is_control(p[in])) {
            put = "\xEF\xBF\xBD"; /* U+FFFD */
            put_len = 3;
            len = 1;
        } else if (p[in] == '"') {
            put = "\"\"";
            put_len = 2;
        }
        if (cap - out < put_len)
            break;
        memcpy(dst + out, put, put_len);
        in += len;
        out += put_len;
    }
    *used = in;
    return out;
}

void csvout_text(FILE *out, const char *s)
{
    if (!s)
        return;
    int quote = csvout_needs_quotes(s);
    if (quote) {
        fputc('"', out);
        fputs(csvout_lead(s), out);
    }
    char buf[256];
    size_t n = strlen(s), used;
    while (n) {
        size_t w = csvout_escape(buf, sizeof buf, s, n, &used);
        fwrite(buf, 1, w, out);
        s += used;
        n -= used;
    }
    if (quote)
        fputc('"', out);
}

void csvout_value(FILE *out, const cJSON *v)
{
    char num[REPORT_NUM_BUF];
    if (cJSON_IsNumber(v))
        fputs(report_number(num, v->valuedouble), out);
    else if (cJSON_IsString(v))
        csvout_text(out, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "true" : "false", out);
}
