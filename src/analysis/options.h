/* options.h - how an analysis is asked for: the thresholds and limits
 * the commands set (analysis_options), shared by the report of one profile
 * (report.h) and the analysis of a job's ranks (ranks.h). */
#ifndef PROF_ANALYSIS_OPTIONS_H
#define PROF_ANALYSIS_OPTIONS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/tuning.h"

/* Thresholds from the command line. */
typedef struct analysis_options {
    double hot_threshold_pct;   /* default 10                            */
    double leak_threshold_mb;   /* least leak rate, MiB (2^20 bytes) per step;
                                   default 0: none (rules.md §4.2)        */
    double leak_horizon;        /* how far a leak is projected, in lengths of
                                   the recorded run; default 10           */
    double sync_threshold_pct;  /* default 10                            */
    double capacity_bytes;      /* 0 = from metadata                     */
    int top;                    /* rows of "operations" kept, default 20; 0 = all */
    size_t max_points;          /* points kept of the step, memory and counter
                                   series, default REPORT_POINTS; 0 = all     */
    int list_points;            /* 0: those series are listed without their
                                   points ("steps", "points" empty), for
                                   readers that show none: the text report,
                                   compare; default 1                         */
    size_t max_names;           /* entries kept of the other per-name lists
                                   (memory series, counters, GPU devices,
                                   threads of the call tree), largest first,
                                   default REPORT_NAMES; 0 = all              */
    int sort_gpu;               /* 1: operations by GPU time launched in them
                                   (rules.md §3.2), not self time; default 0 */
    int others;                 /* 1: operations and kernels cut by top are
                                   summed up in the report's "others" object
                                   (the dashboard's reports); default 0      */
    int rank;                   /* of the ranks of one job, the one every
                                   section but "ranks" describes: a rank, or
                                   ANALYSIS_RANK_FIRST (the default: the first
                                   profile given, as compare matches runs by
                                   it) or ANALYSIS_RANK_SLOWEST (analyze's: the
                                   rank the others wait for most, else the
                                   longest mean step; report.c described_rank) */
    const prof_tuning *tuning;  /* its threads (the leak fits'); default NULL */
    int (*op_row)(void *arg, const cJSON *row); /* non-NULL: each row of
                                   "operations" is handed to it as it is built,
                                   not kept (compare reads a million without
                                   holding them); 0, or -1 out of memory;
                                   default NULL                               */
    void *op_arg;
} analysis_options;

#define ANALYSIS_RANK_FIRST (-1)
#define ANALYSIS_RANK_SLOWEST (-2)

/* A page's worth of names: a profile of a million distinct names (a
 * hostile one, or a program that names regions by their data) would
 * otherwise make a report, and the dashboard that embeds it, of gigabytes.
 * Lists longer than this keep their largest entries, and say so. */
#define REPORT_NAMES 1000

/* A chart's worth: series longer than this keep their first and last
 * point and the lowest and highest of each run of consecutive points
 * between (stats_decimate), so a report's size does not grow with the
 * length of the run. */
#define REPORT_POINTS 2000

void analysis_options_default(analysis_options *o); /* report_shared.c */

#endif /* PROF_ANALYSIS_OPTIONS_H */
