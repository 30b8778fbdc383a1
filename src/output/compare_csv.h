/* compare_csv.h - the comparison of `prof compare` as one CSV table (RFC
 * 4180: a header row, CRLF line ends, fields quoted when they hold a
 * comma, a quote, CR or LF, quotes doubled), one row per summary metric,
 * memory series, operation and bottleneck; columns in man/prof-compare.1. */
#ifndef PROF_OUTPUT_COMPARE_CSV_H
#define PROF_OUTPUT_COMPARE_CSV_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "prof_reader.h"

/* Writes the table. Numbers as report_number(); a missing or null value is
 * an empty field; booleans are "true"/"false".
 * @return PROF_OK, or PROF_ERR_IO when writing failed. */
prof_err compare_render_csv(FILE *out, const cJSON *cmp);

/* The same for a comparison of compare_build_runs, its operations' rows
 * built from ops one at a time; PROF_ERR_NOMEM when one cannot be. */
prof_err compare_render_csv_ops(FILE *out, const cJSON *cmp, const compare_ops *ops);

#endif
