/* outfile.h - output files that appear whole or not at all: a regular file
 * (or a new one) is written to a temporary name beside the target and
 * renamed over it on success, so a failed command never leaves a
 * half-written report or export. "-" or NULL means standard output, which
 * is flushed and checked instead.
 *
 * What an existing target decides:
 *   - a regular file keeps its permission bits and, where the process may,
 *     its owner and group: the replacement is never readable by more people
 *     than the file it replaces. A read-only file (no write bit, or not
 *     writable by this process) is refused rather than replaced.
 *   - a symbolic link to a regular file is followed: the file it points to
 *     is replaced, the link stays; except a link that another user owns in
 *     a sticky world-writable directory (/tmp) whose owner is not theirs
 *     either, which is refused, as fs.protected_symlinks refuses it to
 *     open().
 *   - anything else that is not a directory (a character or block device
 *     such as /dev/null, a FIFO) is opened and written through, as the
 *     shell's '>' does: no temporary, no rename. Opening a FIFO waits until
 *     a reader opens it.
 *   - a directory is an error. */
#ifndef PROF_UTIL_OUTFILE_H
#define PROF_UTIL_OUTFILE_H

#include <stdio.h>

#include "prof_reader.h"

typedef struct outfile {
    FILE *fp;          /* write here                                          */
    char *path;        /* target, NULL for standard output                    */
    char *tmp;         /* temporary name (absolute or relative as path is);
                          NULL for standard output and targets written through */
} outfile;

/* The longest file name (not path) a temporary gets: NAME_MAX on Linux
 * file systems. The name is ".NAME.tmp.XXXXXX" with NAME cut to fit. */
#define OUTFILE_NAME_MAX 255

/* Opens the temporary file, the target itself when it is written through,
 * or takes stdout. PROF_ERR_IO with err set ("cannot create 'x': ..."). */
prof_err outfile_open(outfile *o, const char *path, prof_error *err);
/* outfile_open in two steps, for a caller that holds signals off while the
 * temporary file is created but must not hold them off while it waits:
 * outfile_prepare does all but open a target that is written through, and
 * never waits for another process; it leaves o->fp NULL for such a target.
 * outfile_open_through then opens it (nothing to do when o->fp is set): a
 * FIFO waits there until a reader opens it, as '>' does, and a signal that
 * interrupts the wait fails it (EINTR) or ends the process. Either step
 * discards o when it fails. */
prof_err outfile_prepare(outfile *o, const char *path, prof_error *err);
prof_err outfile_open_through(outfile *o, prof_error *err);
/* Flushes, checks every write, syncs and renames into place. On failure the
 * temporary file is removed and err says what failed. Closes in every case. */
prof_err outfile_commit(outfile *o, prof_error *err);
/* Discards the output (removes the temporary file). */
void outfile_abort(outfile *o);

#endif
