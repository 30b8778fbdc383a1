/* outfile.h - output files that appear whole or not at all: written to a
 * temporary name beside the target and renamed over it on success, so a
 * failed command never leaves a half-written report or export. "-" or NULL
 * means standard output, which is flushed and checked instead. */
#ifndef PROF_UTIL_OUTFILE_H
#define PROF_UTIL_OUTFILE_H

#include <stdio.h>

#include "prof_reader.h"

typedef struct outfile {
    FILE *fp;          /* write here                                  */
    char *path;        /* target, NULL for standard output            */
    char *tmp;         /* temporary name, NULL for standard output    */
} outfile;

/* Opens the temporary file (or takes stdout). PROF_ERR_IO with err set. */
prof_err outfile_open(outfile *o, const char *path, prof_error *err);
/* Flushes, checks every write, syncs and renames into place. On failure the
 * temporary file is removed and err says what failed. Closes in every case. */
prof_err outfile_commit(outfile *o, prof_error *err);
/* Discards the output (removes the temporary file). */
void outfile_abort(outfile *o);

#endif
