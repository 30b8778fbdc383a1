/* error.h - internal helpers around the public prof_err codes. */
#ifndef PROF_UTIL_ERROR_H
#define PROF_UTIL_ERROR_H

#include "prof_reader.h"

/* Fills err (when not NULL) with code and a printf-style message and
 * returns code, so that callers can write `return prof_error_set(...)`. */
prof_err prof_error_set(prof_error *err, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
