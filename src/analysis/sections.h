/* sections.h - the report's sections, each added to the report object by
 * its own function. Internal to src/analysis/. */
#ifndef PROF_ANALYSIS_SECTIONS_H
#define PROF_ANALYSIS_SECTIONS_H

#include "analysis/analysis.h"

void section_call_tree(analysis_ctx *c, cJSON *report);
void section_counters(analysis_ctx *c, cJSON *report);
void section_kernels(analysis_ctx *c, cJSON *report); /* gpurules.c */
void summary_launches(analysis_ctx *c, cJSON *summary); /* launches.c */
/* HTA's launch statistics of s into o (launches.c) */
void launch_stats(analysis_ctx *c, cJSON *o, const model_launch_stats *s);

#endif
