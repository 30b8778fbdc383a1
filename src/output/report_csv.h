/* report_csv.h - one table of the analyze report as CSV (RFC 4180): a
 * header row, CRLF line ends, fields quoted when they hold a comma, a
 * quote, CR or LF, quotes doubled. */
#ifndef PROF_OUTPUT_REPORT_CSV_H
#define PROF_OUTPUT_REPORT_CSV_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "prof_reader.h"

typedef enum report_table {
    REPORT_TABLE_OPS = 0,     /* the "operations" rows kept by --top               */
    REPORT_TABLE_STEPS,       /* one row per step                                   */
    REPORT_TABLE_MEMORY,      /* one row per point of every memory series           */
    REPORT_TABLE_BOTTLENECKS, /* one row per finding, most severe first             */
    REPORT_TABLE_KERNELS,     /* the "kernels" rows kept by --top                   */
    REPORT_TABLE_GPU,         /* one row per GPU device, HTA's breakdowns beside     */
    REPORT_TABLE_RANKS        /* one row per rank of one job; none for one profile  */
} report_table;

/* "ops", "steps", "memory", "bottlenecks", "kernels" to *t; -1 for anything
 * else. */
int report_table_parse(const char *name, report_table *t);

/* Writes table t of report. Numbers as report_number(); a missing or null
 * value is an empty field; booleans are "true"/"false".
 * @return PROF_OK, or PROF_ERR_IO when writing failed. */
prof_err report_render_csv(FILE *out, const cJSON *report, report_table t);

#endif
