/* compare_json.h - the comparison of `prof compare` as JSON text
 * (formats/compare.schema.json), byte for byte as report_render_json writes
 * the whole object, for a comparison whose operations' rows are built one
 * at a time (compare_build_runs): a million rows never exist at once. */
#ifndef PROF_OUTPUT_COMPARE_JSON_H
#define PROF_OUTPUT_COMPARE_JSON_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "prof_reader.h"

/* Writes cmp with its "operations" the rows of ops (NULL: cmp as it is).
 * @return PROF_OK, PROF_ERR_IO when writing failed, PROF_ERR_NOMEM when a
 * row could not be built. */
prof_err compare_render_json(FILE *out, const cJSON *cmp, const compare_ops *ops);

#endif
