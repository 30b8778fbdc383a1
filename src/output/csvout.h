/* csvout.h - the RFC 4180 cells of the report and comparison tables
 * (report_csv.c, compare_csv.c): a field is quoted when it holds a comma,
 * a quote, CR or LF, with quotes doubled. */
#ifndef PROF_OUTPUT_CSVOUT_H
#define PROF_OUTPUT_CSVOUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* s as one field, quoted when it must be; NULL: an empty field. */
void csvout_text(FILE *out, const char *s);

/* A JSON value as one field: a number as report_number(), a string as
 * csvout_text(), a boolean as "true"/"false"; anything else (missing,
 * null, a container) an empty field. */
void csvout_value(FILE *out, const cJSON *v);

#endif
