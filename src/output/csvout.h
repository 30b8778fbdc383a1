/* csvout.h - RFC 4180 fields for every CSV prof writes (the report and
 * comparison tables, report_csv.c and compare_csv.c, and the CSV export,
 * export_csv.c): a field is quoted when it holds a comma, a quote, CR or
 * LF, with quotes doubled, and every byte that does not begin a valid UTF-8
 * character becomes U+FFFD, so that the file is always valid UTF-8.
 *
 * Text is user data (names from profiles), and a CSV is opened in
 * spreadsheets and printed on terminals: a text field that begins as a
 * formula does (=, +, -, @, tab, CR) is quoted with a ' before it, as
 * spreadsheets read text, and control characters other than tab, LF and
 * CR (ESC, which starts terminal sequences, and DEL) become U+FFFD. */
#ifndef PROF_OUTPUT_CSVOUT_H
#define PROF_OUTPUT_CSVOUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* The room that always lets csvout_escape() make progress: one UTF-8
 * character. */
#define CSVOUT_MIN_ROOM 4

/* Whether s must be quoted (it holds a comma, a quote, CR or LF, or
 * begins as a formula). */
int csvout_needs_quotes(const char *s);

/* What goes between the opening quote and s: "'" when s begins as a
 * formula, else "". */
const char *csvout_lead(const char *s);

/* A field's contents without the surrounding quotes and lead: as many
 * whole characters of src[0..n) as fit into dst[0..cap), quotes doubled,
 * invalid UTF-8 bytes and control characters replaced by U+FFFD. Sets *used to the source bytes consumed
 * and returns the bytes written; cap >= CSVOUT_MIN_ROOM always consumes
 * something. */
size_t csvout_escape(char *dst, size_t cap, const char *src, size_t n, size_t *used);

/* s as one field, quoted when it must be; NULL: an empty field. */
void csvout_text(FILE *out, const char *s);

/* A JSON value as one field: a number as report_number(), a string as
 * csvout_text(), a boolean as "true"/"false"; anything else (missing,
 * null, a container) an empty field. */
void csvout_value(FILE *out, const cJSON *v);

#endif
