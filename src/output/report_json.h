/* report_json.h - writes the analyze report (formats/report.schema.json) as
 * JSON text, and the number and string forms the other report renderers
 * share with it, so that a value reads the same in JSON, CSV and text. */
#ifndef PROF_OUTPUT_REPORT_JSON_H
#define PROF_OUTPUT_REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "prof_reader.h"

#define REPORT_NUM_BUF 32

/* Writes report as indented JSON with a final newline. Members keep the
 * report's order; an object or array holding only scalars is written on one
 * line. Numbers as report_number() (non-finite ones as null); strings as
 * util/jsonesc.h escapes them, so the output is always valid JSON.
 * @return PROF_OK, or PROF_ERR_IO when writing failed. */
prof_err report_render_json(FILE *out, const cJSON *report);

/* A number the same way on every run and platform: an integral value below
 * 1e19 in magnitude without fraction or exponent ("30519000000"), any other
 * finite value in the shorter of %.15g and %.17g that reads back exactly.
 * Non-finite values give "". Returns buf. */
const char *report_number(char buf[REPORT_NUM_BUF], double v);

#endif
