/* error.c - descriptions of prof_err codes and the helper that fills a
 * prof_error with a precise message. */
#include <stdarg.h>
#include <stdio.h>

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
