/* compare_text.h - the comparison of `prof compare` (compare.h) as text:
 * the two runs and what makes them hard to compare, the summary metrics
 * side by side with their changes, the operations that changed, appeared
 * or disappeared, the bottlenecks fixed / new / persisting, and the
 * regression check. Looks like the text of `prof analyze`. */
#ifndef PROF_OUTPUT_COMPARE_TEXT_H
#define PROF_OUTPUT_COMPARE_TEXT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "output/textout.h"
#include "prof_reader.h"

/* Writes the text. style (colour, Unicode, width) is decided by the command,
 * as for report_render_text; NULL: plain ASCII. Names from the profiles are
 * printed with control characters and invalid UTF-8 escaped as \xNN.
 * @return PROF_OK, PROF_ERR_NOMEM, or PROF_ERR_IO when writing failed. */
prof_err compare_render_text(FILE *out, const cJSON *cmp, const report_style *style);

/* The same for a comparison of compare_build_runs: its operations' rows
 * from ops, each built where it is written (PROF_ERR_NOMEM when one cannot
 * be). */
prof_err compare_render_text_ops(FILE *out, const cJSON *cmp, const compare_ops *ops,
                                 const report_style *style);

#endif
