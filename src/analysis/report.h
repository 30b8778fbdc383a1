/* report.h - the analysis of one or more loaded profiles as one JSON report
 * (shape in formats/report.schema.json, rules in formats/rules.md). Every
 * view - text, CSV, HTML, the viewer - renders this same object. */
#ifndef PROF_ANALYSIS_REPORT_H
#define PROF_ANALYSIS_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "analysis/options.h"
#include "model/profile.h"
#include "prof_reader.h"

/* The batch means of a steady series (formats/rules.md §6.2): v[0..n) cut
 * into at most STEADY_BATCHES consecutive batches of ceil(n / STEADY_BATCHES)
 * values, the last n mod k left out. Writes them to means (room for
 * STEADY_BATCHES) and returns their count, 0 when fewer than 2. */
#define STEADY_BATCHES 32u
size_t steady_batch_means(const double *v, size_t n, double *means);

/* Builds the report of one or more loaded models (several = ranks of one
 * job: each must have a distinct rank below the same world size, else
 * PROF_ERR_INVALID "not ranks of one job"). opts: NULL for the defaults.
 * @return a cJSON object (caller frees with cJSON_Delete), or NULL with err
 * set (PROF_ERR_INVALID, PROF_ERR_NOMEM). */
cJSON *report_build(const profile_model *const *models, size_t n, const analysis_options *o,
                    prof_error *err);

#endif
