/* report.h - the analysis of one or more loaded profiles as one JSON report
 * (shape in formats/report.schema.json, rules in formats/rules.md). Every
 * view - text, CSV, HTML, the viewer - renders this same object. */
#ifndef PROF_ANALYSIS_REPORT_H
#define PROF_ANALYSIS_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "model/profile.h"
#include "prof_reader.h"
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

void analysis_options_default(analysis_options *o);

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
