/* html.h - the dashboard as one self-contained HTML file (`prof view
 * --html`, `prof analyze --format html`), and the data document the page
 * renders, which the server hands out as /api/view. */
#ifndef PROF_OUTPUT_HTML_H
#define PROF_OUTPUT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "prof_reader.h"

/* Operations and kernels the dashboard lists (prof view): the rest of a
 * profile with more distinct names is summed up in one "others" row, so
 * the page stays a page (a million names made a 300 MB one). */
#define VIEW_PAGE_ROWS 1000

/* Writes the page with its stylesheet, script and the report inlined: opens
 * in a browser with no server and no network. compare: a compare_build
 * report, or NULL. PROF_ERR_IO when a write fails, PROF_ERR_NOMEM. */
prof_err report_render_html(FILE *out, const cJSON *report, const cJSON *compare,
                            prof_error *err);

/* The same for n (1 or 2) reports: with two the page shows them side by
 * side and their difference; compare may be NULL. */
prof_err view_render_html(FILE *out, const cJSON *const *reports, size_t n, const cJSON *compare,
                          prof_error *err);

/* The page's data, {"reports":[...], "compare": ... | null}, as compact
 * JSON text (caller frees), or NULL with err set (PROF_ERR_NOMEM). */
char *view_document(const cJSON *const *reports, size_t n, const cJSON *compare, prof_error *err);

/* Writes JSON text so that it can sit inside <script type="application/json">:
 * "<", ">", "&", U+2028 and U+2029 become \u escapes (valid JSON, and no
 * "</script>" or "<!--" can end the element early). Returns 0 or EOF. */
int html_write_script_json(FILE *out, const char *json);

#endif
