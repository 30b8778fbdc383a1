/* report_text.h - the analyze report as the text a person reads in one
 * screen: where the profile came from and how complete it is, a summary,
 * the top operations with share bars, the bottlenecks by severity with
 * what to do about them, and what the recording lacks. */
#ifndef PROF_OUTPUT_REPORT_TEXT_H
#define PROF_OUTPUT_REPORT_TEXT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "output/textout.h"
#include "prof_reader.h"

/* Writes the text report. style NULL: plain. Strings from the profile are
 * printed with control characters and invalid UTF-8 escaped as \xNN, so a
 * crafted name cannot drive the terminal.
 * @return PROF_OK, PROF_ERR_NOMEM, or PROF_ERR_IO when writing failed. */
prof_err report_render_text(FILE *out, const cJSON *report, const report_style *style);

#endif
