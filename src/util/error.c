/* error.c - descriptions of prof_err codes and the helper that fills a
 * prof_error with a precise message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

const char *prof_strerror(prof_err err)
{
    switch (err) {
    case PROF_OK: return "success";
    case PROF_ERR_IO: return "input/output error";
    case PROF_ERR_NOMEM: return "out of memory";
    case PROF_ERR_NOT_PROF: return "not a prof file";
    case PROF_ERR_VERSION: return "unsupported format version";
    case PROF_ERR_CORRUPT: return "corrupt data";
    case PROF_ERR_TRUNCATED: return "file cut short";
    case PROF_ERR_EMPTY: return "empty file";
    case PROF_ERR_INVALID: return "invalid argument";
    case PROF_ERR_LIMIT: return "size limit exceeded";
    case PROF_ERR_UNSUPPORTED: return "not supported by this build";
    }
    return "unknown error";
}

prof_err prof_error_set(prof_error *err, prof_err code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A continuation byte of a UTF-8 sequence: never the place to cut. */
static int utf8_cont(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

const char *prof_error_subject(char buf[PROF_SUBJECT_MAX], const char *s)
{
    size_t n = strlen(s);
    if (n < PROF_SUBJECT_MAX)
        return s;
    /* head + "..." + tail + NUL fill buf; both ends are kept because the
     * start says where and the end says which file. */
    size_t head = (PROF_SUBJECT_MAX - 4) / 2, tail = PROF_SUBJECT_MAX - 4 - head;
    while (head > 0 && utf8_cont(s[head]))
        head--;
    while (tail > 0 && utf8_cont(s[n - tail]))
        tail--;
    memcpy(buf, s, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, s + n - tail, tail);
    buf[head + 3 + tail] = '\0';
    return buf;
}
