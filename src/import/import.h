/* import.h - traces written by other tools (torch.profiler's Kineto JSON,
 * Nsight Systems' SQLite export), recognised by their content and read
 * into profiles through a sink (sink.h). `prof import` writes the profile
 * to a file; the other commands read a trace in place through an unlinked
 * temporary profile that lives as long as its descriptor. */
#ifndef PROF_IMPORT_IMPORT_H
#define PROF_IMPORT_IMPORT_H

#include <stddef.h>

#include "import/sink.h"
#include "prof_reader.h"
#include "util/tuning.h"

typedef enum import_format {
    IMPORT_NONE = 0,   /* not a trace prof imports (a .prof file, or anything else) */
    IMPORT_KINETO = 1, /* JSON, plain or gzip: torch.profiler / Kineto Chrome trace  */
    IMPORT_NSYS = 2    /* SQLite: `nsys export --type sqlite`                         */
} import_format;

typedef struct import_options {
    int python_stacks; /* Kineto: keep python_function events as regions */
    const prof_tuning *tuning; /* threads, the fast path, the temporary files' directory */
} import_options;

/* The format of the file at path, from its first bytes: a gzip stream or
 * a JSON object is Kineto, an SQLite database is Nsight. IMPORT_NONE for
 * anything else and for what cannot be opened (the caller's reader then
 * reports why). Never blocks on a FIFO. */
import_format import_detect(const char *path);
const char *import_format_name(import_format f); /* "kineto", "nsys", "prof" */

/* Imports the trace at path into a profile written to out_fd (a regular
 * file at offset 0, which the import owns and closes). counts, when not
 * NULL, gets what was read. A cut or damaged trace is read up to the
 * damage and is not an error (counts->damaged, and the profile says so).
 * Errors: PROF_ERR_IO (cannot read), PROF_ERR_NOT_PROF (not a trace of a
 * known format), PROF_ERR_CORRUPT (no usable content at all),
 * PROF_ERR_NOMEM, the writer's errors; counts->output_failed then says
 * whether it was the profile's write that failed (PROF_ERR_IO: disk full,
 * a file size limit), which the caller reports as an output error. */
prof_err import_trace(const char *path, int out_fd, const import_options *o,
                      import_counts *counts, prof_error *err);

/* An unlinked temporary file in t's tmpdir (cmd/: $TMPDIR), else /tmp,
 * open for reading and writing: gone from disk when its last descriptor
 * closes. */
prof_err import_temp_file(const prof_tuning *t, int *fd, prof_error *err);

/* For reading a trace in place: when path is a trace (import_detect),
 * imports it into an unlinked temporary file (import_temp_file) and
 * sets *fd to it and profile_path to a path that opens it
 * ("/proc/self/fd/N") for as long as *fd stays open; the caller closes *fd
 * when done. Nothing is left on disk, even if prof is killed. When it is
 * not a trace (a profile, or what the reader will name), *fd is -1 and
 * nothing is done. On failure *output_failed (when not NULL) says whether
 * the temporary could not be created or written, rather than the trace
 * read. */
prof_err import_to_temp(const char *path, const import_options *o, int *fd,
                        char *profile_path, size_t cap, int *output_failed, prof_error *err);

/* The importers, called by import_trace with an open sink. */
prof_err kineto_read(const char *path, import_sink *s, const import_options *o,
                     prof_error *err);
prof_err nsys_read(const char *path, import_sink *s, const import_options *o, prof_error *err);

#endif /* PROF_IMPORT_IMPORT_H */
