/* export.h - `prof export`: a profile's events streamed from the reader to
 * one of four formats (Chrome trace, CSV, JSON lines, folded stacks). Memory
 * stays flat however many events the profile holds; only folded stacks keep
 * a table, which grows with the number of distinct stacks, not events. */
#ifndef PROF_OUTPUT_EXPORT_H
#define PROF_OUTPUT_EXPORT_H

#include <stdio.h>

#include "model/profile.h"
#include "prof_reader.h"

typedef enum export_format {
    EXPORT_CHROME_TRACE = 0, /* Trace Event Format, JSON object form      */
    EXPORT_CSV = 1,          /* formats/export-csv.md                     */
    EXPORT_JSON = 2,         /* JSON lines, formats/export-json.md        */
    EXPORT_FOLDED = 3        /* collapsed stacks "a;b;c SELF_NS"          */
} export_format;

/* Options */
#define EXPORT_OPT_THREAD_FRAMES 1u /* folded: each stack starts with its thread's name */

/* The format called name ("chrome-trace", "csv", "json", "folded").
 * @return 0 and *f, or -1 for an unknown name. */
int export_format_parse(const char *name, export_format *f);

typedef struct export_result {
    prof_read_status status; /* the reader's status at the end: events, truncation */
    int output_failed;       /* the error returned was in writing, not in reading   */
} export_result;

/* Reads every remaining event of r and writes it to out in format f. A
 * profile cut short is exported up to its last intact block and PROF_OK is
 * returned; res->status.truncated says so. out is flushed, not closed.
 * @return PROF_OK; or an error described in *err: the reader's (damage in a
 * cleanly closed file), PROF_ERR_NOMEM, or PROF_ERR_IO with
 * res->output_failed set when writing failed (err says why, in the words
 * of strerror). */
prof_err export_profile(prof_reader *r, export_format f, unsigned options, FILE *out,
                        export_result *res, prof_error *err);

/* The folded stacks of the GPU time launched in each call path of a
 * loaded model (export_folded_gpu.c, rules.md §3.2); options as above.
 * Errors as export_profile's (writing, or PROF_ERR_NOMEM). */
prof_err export_folded_gpu(const profile_model *m, unsigned options, FILE *out,
                           export_result *res, prof_error *err);

#endif
