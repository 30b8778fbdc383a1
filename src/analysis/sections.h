/* sections.h - the report's sections, each added to the report object by
 * its own function. Internal to src/analysis/. */
#ifndef PROF_ANALYSIS_SECTIONS_H
#define PROF_ANALYSIS_SECTIONS_H

#include "analysis/analysis.h"

void section_call_tree(analysis_ctx *c, cJSON *report);
void section_counters(analysis_ctx *c, cJSON *report);
void section_kernels(analysis_ctx *c, cJSON *report); /* gpurules.c */

#endif
