/* runset.h - the runs one side of `prof compare` names: a profile, or a
 * directory of profiles of repeated runs. Inside a directory, the profiles
 * of the ranks of one job form one run (rules.md §6.1): profiles that carry
 * the same world size > 1, distinct ranks, and starts within
 * RUNSET_JOB_WINDOW_NS of the job's first. Reads only headers and
 * metadata; the caller loads each run's profiles. */
#ifndef PROF_MODEL_RUNSET_H
#define PROF_MODEL_RUNSET_H

#include <stddef.h>
#include <stdint.h>

#include "prof_reader.h"
#include "util/tuning.h"

#define RUNSET_JOB_WINDOW_NS (120ull * 1000000000ull) /* ranks start within 2 minutes */

typedef struct runset_run {
    char **paths;          /* its profiles, rank 0 first                       */
    size_t npaths;
} runset_run;

typedef struct runset {
    int is_dir;
    runset_run *runs;      /* in order of their first profile's name           */
    size_t nruns;
    size_t skipped;        /* files of a directory that are not profiles       */
} runset;

/* Finds the runs at path: for a directory, its regular files whose
 * content is a profile or a trace prof imports (import.h; names starting
 * with '.' are skipped), grouped into
 * runs; anything else is one run of one profile, left for the caller to
 * open (and report). The files are probed on t's threads: a directory of
 * traces is imported once each to learn their ranks. Errors: PROF_ERR_IO (an unreadable directory),
 * PROF_ERR_EMPTY (a directory without profiles), the reader's error for a
 * file that starts as a profile but cannot be opened, PROF_ERR_NOMEM. */
prof_err runset_find(const char *path, const prof_tuning *t, runset *out, prof_error *err);
void runset_free(runset *s);

/* The regular files of dir (names starting with '.' left out), sorted by
 * name, as paths "dir/name" into *paths (the caller frees each and the
 * array). PROF_ERR_IO (an unreadable directory) or PROF_ERR_NOMEM. */
prof_err runset_list_files(const char *dir, char ***paths, size_t *n, prof_error *err);

#endif
