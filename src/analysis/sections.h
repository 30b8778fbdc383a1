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

/* Which of n items a per-name list shows (options max_names, report.c):
 * NULL when it shows every one; else a flag per item (caller frees), set
 * for the max_names of largest weight (ties: the first), with *cut the
 * number left out. weight: NAN for the items that are not in the list. */
unsigned char *report_listed(analysis_ctx *c, const void *items, size_t n, stats_value_fn weight,
                             size_t *cut);

/* The sum of the rows a list cut to top leaves out, into the report's
 * "others" object under key (options others, report.c). */
void report_others(analysis_ctx *c, cJSON *report, const char *key, size_t count,
                   uint64_t calls, uint64_t self_ns, uint64_t incl_ns);

#endif
