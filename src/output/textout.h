/* textout.h - what the text views of `prof analyze` (report_text.c) and
 * `prof compare` (compare_text.c) share, so that they look alike: the
 * style the command chose, strings from a profile made safe for a terminal,
 * table cells cut to a width, words wrapped at the width, ANSI styling. */
#ifndef PROF_OUTPUT_TEXTOUT_H
#define PROF_OUTPUT_TEXTOUT_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "prof_reader.h"

/* How the text may look. The command decides (terminal, NO_COLOR,
 * --no-color, locale); the renderer never looks at the stream, so the same
 * style gives the same bytes. All zero: plain ASCII without escapes. */
typedef struct report_style {
    int color;    /* ANSI colours and bold                               */
    int unicode;  /* Unicode block bars (eighths) instead of '#'          */
    int width;    /* columns to wrap long lines at; 0 or less: 100       */
    int wide;     /* names whole in tables, however long                 */
} report_style;

/* A text view being written. */
typedef struct textout {
    FILE *out;
    report_style st;
    int width;             /* columns to wrap at                      */
    int nomem;             /* an allocation failed: output incomplete */
} textout;

/* Starts a view on out; style NULL: plain ASCII, 100 columns. */
void textout_init(textout *t, FILE *out, const report_style *style);

/* PROF_OK, PROF_ERR_NOMEM when a string could not be copied, or
 * PROF_ERR_IO when writing failed. */
prof_err textout_finish(const textout *t);

/* A JSON number as the unsigned count fmt_*() takes: 0 for negative or
 * NaN, saturated at UINT64_MAX. */
uint64_t textout_u64(double v);

/* A copy of s with control characters (C0, DEL, C1) and bytes that are not
 * valid UTF-8 written as \xNN, so a crafted name cannot drive the terminal;
 * the caller frees it. NULL when out of memory (noted in t). */
char *textout_sanitize(textout *t, const char *s);

/* Columns taken by a sanitized string: one per code point. */
int textout_cols(const char *s);

/* s sanitized. */
void textout_put_safe(textout *t, const char *s);

/* s sanitized in a cell of `width` columns, left-aligned, cut with an
 * ellipsis ('~' without Unicode). */
void textout_put_cell(textout *t, const char *s, int width);
/* s sanitized and made to fit `width` columns (see textout.c): a new
 * string, or NULL when memory ran out. */
char *textout_shorten(textout *t, const char *s, int width);

/* The names of a table's rows, as its name column of `width` columns
 * shows them: whole with the style's `wide`, else textout_shorten's form,
 * except that names whose forms would be alike show, between a short head
 * and tail, the part where they differ ("sm80_x~tn_n_tilesize128x1~cublas"
 * beside "sm80_x~nn_n_tilesize256x1~cublas"). */
typedef struct textout_names {
    char **shown;          /* by the position of the item in its array */
    size_t n;
    int width;
} textout_names;

/* The member `key` of each of items; -1 when memory ran out (nothing to
 * free then). */
int textout_names_init(textout *t, textout_names *c, const cJSON *items, const char *key, int width);
/* The cell of item i, padded to the width. */
void textout_names_put(textout *t, const textout_names *c, size_t i);
void textout_names_free(textout_names *c);

/* s sanitized, word by word from column `col`, breaking lines before the
 * width and indenting continuation lines by `indent`; ends the line. */
void textout_put_wrapped(textout *t, const char *s, int col, int indent);

/* An SGR escape ("1" bold, "0" reset, "31" red ...) when colour is on. */
void textout_sgr(textout *t, const char *code);

/* A blank line, then title in bold. */
void textout_heading(textout *t, const char *title);

/* The width of a name column: the widest member `key` of the items,
 * sanitized, at least `least` and at most `most` columns. */
int textout_name_width(textout *t, const cJSON *items, const char *key, int least, int most);

/* A section of sentences: the heading, then each string of the array a
 * wrapped item after its one-character bullet (in the SGR colour sgr, NULL
 * none); nothing when there is none. */
void textout_list(textout *t, const char *heading, const cJSON *items, const char *bullet,
                  const char *sgr);

/* The "Notes" section, a textout_list of "-" items. */
void textout_notes(textout *t, const cJSON *notes);

#endif
