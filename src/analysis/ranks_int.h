/* ranks_int.h - what ranks.c (a rank's summary, the cross-rank analysis)
 * and rank_file.c (the summary file, formats/rank-summary.md) share:
 * the summary's member names, which the file writes as they are, and the
 * one block a summary's operations are carved from. */
#ifndef PROF_ANALYSIS_RANKS_INT_H
#define PROF_ANALYSIS_RANKS_INT_H

#include <stddef.h>

#include "analysis/ranks.h"

#define SK_PROFILE "profile"
#define SK_HOST "host"
#define SK_STEPS "steps"
#define SK_ROW "row"
#define SK_LAUNCHES "launches"
#define SK_PEAKS "memory_peaks"
#define SK_FINDINGS "findings"
#define SK_KERNELS "collective_kernels"
#define SK_REGIONS "collective_regions"
#define SK_REPORT "report"
#define SK_N "n"
#define SK_COUNT "count"
#define SK_MEAN "mean_ns"
#define SK_P50 "p50_ns"
#define SK_COMM "comm_ns_per_step"
#define SK_BUCKETS "step_buckets"
#define SK_SIZE "size"
#define SK_FIRST "first"
#define SK_SUM "sum_ns"
#define SK_GPU_NS "gpu_ns"
#define SK_BUSY_NS "busy_ns"
#define SK_OPS "operations"
#define SK_GPU "gpu"
#define SK_NS_PER_STEP "ns_per_step"
#define SK_HIGH "high"
#define SK_MEDIUM "medium"
#define SK_LOW "low"

/* Room for n >= 1 operations and their names (len bytes with their NULs),
 * in one block (ranks.c). */
rank_op *ranks_ops_alloc(size_t n, size_t len);

#endif
