/* jsonesc.c - JSON string escaping of arbitrary bytes; see jsonesc.h. */
#include <stdlib.h>
#include <string.h>

#include "util/jsonesc.h"

static const char hex[] = "0123456789abcdef";

size_t jsonesc_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below U+0800 */
        else if (c == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong below U+10000 */
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

/* Writes the escape \u00XX of a control byte; returns its length. */
static size_t escape_control(char *d, unsigned c)
{
    switch (c) {
    case '\n': memcpy(d, "\\n", 2); return 2;
    case '\r': memcpy(d, "\\r", 2); return 2;
    case '\t': memcpy(d, "\\t", 2); return 2;
    case '\b': memcpy(d, "\\b", 2); return 2;
    case '\f': memcpy(d, "\\f", 2); return 2;
    default:
        memcpy(d, "\\u00", 4);
        d[4] = hex[c >> 4];
        d[5] = hex[c & 15];
        return 6;
    }
}

/* Escapes the one character at s (n > 0 bytes left) into d, which has room
 * for JSONESC_MAX_PER_BYTE bytes. Sets *used; returns the bytes written. */
static size_t escape_char(char *d, const unsigned char *s, size_t n, size_t *used)
{
    unsigned c = s[0];
    *used = 1;
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
        d[0] = (char)c;
        return 1;
    }
    if (c == '"' || c == '\\') {
        d[0] = '\\';
        d[1] = (char)c;
        return 2;
    }
    if (c < 0x80)
        return escape_control(d, c);
    size_t len = jsonesc_utf8_len(s, n);
    if (len == 0) {
        memcpy(d, "\\ufffd", 6);
        return 6;
    }
    *used = len;
    if (len == 3 && c == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9)) {
        memcpy(d, s[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
        return 6;
    }
    memcpy(d, s, len);
    return len;
}

size_t jsonesc_chunk(char *dst, size_t cap, const char *src, size_t n, size_t *used)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t in = 0, out = 0;
    while (in < n) {
        const unsigned char *p = s + in;
        /* The common case: a run of plain ASCII, copied without escaping. */
        if (*p >= 0x20 && *p < 0x7F && *p != '"' && *p != '\\' && out < cap) {
            dst[out++] = (char)*p;
            in++;
            continue;
        }
        if (cap - out < JSONESC_MAX_PER_BYTE)
            break;
        size_t u;
        out += escape_char(dst + out, p, n - in, &u);
        in += u;
    }
    *used = in;
    return out;
}

char *jsonesc_quote(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > (((size_t)-1) - 3) / JSONESC_MAX_PER_BYTE)
        return NULL;
    char *d = malloc(n * JSONESC_MAX_PER_BYTE + 3);
    if (!d)
        return NULL;
    size_t used;
    size_t len = n ? jsonesc_chunk(d + 1, n * JSONESC_MAX_PER_BYTE, s, n, &used) : 0;
    d[0] = '"';
    d[len + 1] = '"';
    d[len + 2] = '\0';
    return d;
}

int jsonesc_fputs(const char *s, FILE *fp)
{
    char buf[4096];
    size_t n = s ? strlen(s) : 0, done = 0;
    if (fputc('"', fp) == EOF)
        return -1;
    while (done < n) {
        size_t used;
        size_t len = jsonesc_chunk(buf, sizeof buf, s + done, n - done, &used);
        if (fwrite(buf, 1, len, fp) != len)
            return -1;
        done += used;
    }
    return fputc('"', fp) == EOF ? -1 : 0;
}

char *jsonesc_clean_json(const char *json)
{
    size_t n = strlen(json);
    if (n > ((size_t)-1) / JSONESC_MAX_PER_BYTE - 1)
        return NULL;
    char *d = malloc(n * JSONESC_MAX_PER_BYTE + 1);
    if (!d)
        return NULL;
    const unsigned char *s = (const unsigned char *)json;
    size_t in = 0, out = 0;
    int in_string = 0;
    while (in < n) {
        unsigned c = s[in];
        if (!in_string || c == '"') {
            in_string ^= c == '"';
            d[out++] = (char)s[in++];
        } else if (c == '\\') {
            d[out++] = (char)s[in++]; /* an escape already present: kept */
            if (in < n)
                d[out++] = (char)s[in++];
        } else {
            size_t used;
            out += escape_char(d + out, s + in, n - in, &used);
            in += used;
        }
    }
    d[out] = '\0';
    return d;
}
