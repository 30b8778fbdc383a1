/* error.h - internal helpers around the public prof_err codes. */
#ifndef PROF_UTIL_ERROR_H
#define PROF_UTIL_ERROR_H

#include "prof_reader.h"

/* Fills err (when not NULL) with code and a printf-style message and
 * returns code, so that callers can write `return prof_error_set(...)`. */
prof_err prof_error_set(prof_error *err, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Room for a subject shortened by prof_error_subject(), its NUL included. */
#define PROF_SUBJECT_MAX 120

/* s (a path, a name) as it fits a fixed-size message: s itself when it is
 * shorter than PROF_SUBJECT_MAX bytes, else its beginning and its end around
 * "...", cut between UTF-8 characters, written into buf. So a long path
 * never pushes the reason out of prof_error's message. Returns buf or s. */
const char *prof_error_subject(char buf[PROF_SUBJECT_MAX], const char *s);

#endif
