/* export_out.c - the buffered writer and encoders of the export formats;
 * see export_out.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "output/export_out.h"
#include "util/jsonesc.h"

void eo_init(export_out *o, FILE *fp)
{
    o->fp = fp;
    o->len = 0;
    o->failed = 0;
}

void eo_drain(export_out *o)
{
    if (o->len && !o->failed) {
        errno = 0;
        if (fwrite(o->buf, 1, o->len, o->fp) != o->len)
            o->failed = errno ? errno : -1;
    }
    o->len = 0;
}

int eo_flush(export_out *o)
{
    eo_drain(o);
    if (!o->failed) {
        errno = 0;
        if (fflush(o->fp) != 0 || ferror(o->fp))
            o->failed = errno ? errno : -1;
    }
    return o->failed ? -1 : 0;
}

/* Writes the decimal digits of v ending at end; returns where they start. */
static char *digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void eo_u64(export_out *o, uint64_t v)
{
    char tmp[24];
    char *p = digits(tmp + sizeof tmp, v);
    eo_put(o, p, (size_t)(tmp + sizeof tmp - p));
}

void eo_us(export_out *o, uint64_t ns)
{
    char tmp[32];
    char *end = tmp + sizeof tmp;
    unsigned frac = (unsigned)(ns % 1000);
    end[-1] = (char)('0' + frac % 10);
    end[-2] = (char)('0' + frac / 10 % 10);
    end[-3] = (char)('0' + frac / 100);
    end[-4] = '.';
    char *p = digits(end - 4, ns / 1000);
    eo_put(o, p, (size_t)(end - p));
}

void eo_double(export_out *o, double v, const char *nonfinite)
{
    if (!isfinite(v)) {
        eo_str(o, nonfinite);
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    eo_str(o, tmp);
}

void eo_json(export_out *o, const char *s)
{
    size_t n = strlen(s);
    eo_char(o, '"');
    while (n) {
        if (EO_BUFSIZE - o->len < JSONESC_MAX_PER_BYTE)
            eo_drain(o);
        size_t used;
        o->len += jsonesc_chunk(o->buf + o->len, EO_BUFSIZE - o->len, s, n, &used);
        s += used;
        n -= used;
    }
    eo_char(o, '"');
}

char *eo_metadata(prof_reader *r)
{
    char *meta = jsonesc_clean_json(prof_reader_metadata(r));
    if (!meta)
        return NULL;
    cJSON *j = cJSON_Parse(meta);
    int object = cJSON_IsObject(j);
    cJSON_Delete(j);
    if (object)
        return meta;
    free(meta);
    return strdup("{}");
}

/* The frame text of a name: ';' would split the frame and newlines the
 * line, so they are replaced; the text is made valid UTF-8. */
char *eo_frame_text(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return strdup("[unnamed]");
    char *t = malloc(n * 3 + 1), *d = t;
    const unsigned char *s = (const unsigned char *)name;
    if (!t)
        return NULL;
    while (n) {
        size_t len = jsonesc_utf8_len(s, n);
        if (len == 0) {
            memcpy(d, "\xEF\xBF\xBD", 3);
            d += 3;
            len = 1;
        } else if (*s == ';')
            *d++ = ':';
        else if (*s < 0x20 || *s == 0x7F)
            *d++ = ' ';
        else {
            memcpy(d, s, len);
            d += len;
        }
        s += len;
        n -= len;
    }
    *d = '\0';
    return t;
}
