/* outfile.c - whole-or-nothing output files; see outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/outfile.h"
#include "util/planted.h"

#define TMP_SUFFIX ".tmp.XXXXXX"

_Static_assert(OUTFILE_NAME_MAX <= NAME_MAX, "a temporary name must fit the file system");

/* Sets err to "WHAT 'PATH': REASON" with PATH shortened so that the reason
 * always fits, discards o, and returns PROF_ERR_IO. */
static prof_err fail(outfile *o, prof_error *err, const char *what, const char *path,
                     const char *reason)
{
    char shown[PROF_SUBJECT_MAX];
    prof_error_set(err, PROF_ERR_IO, "%s '%s': %s", what, prof_error_subject(shown, path),
                   reason);
    outfile_abort(o);
    return PROF_ERR_IO;
}

/* ".NAME.tmp.XXXXXX" in the target's directory (so that rename() stays
 * within one file system), NAME cut so that the whole file name fits
 * OUTFILE_NAME_MAX however long the target's name is. NULL: no memory. */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    size_t base = strlen(path + dir);
    size_t room = OUTFILE_NAME_MAX - 1 - (sizeof TMP_SUFFIX - 1);
    if (base > room)
        base = room;
    char *t = malloc(dir + 1 + base + sizeof TMP_SUFFIX);
    if (!t)
        return NULL;
    memcpy(t, path, dir);
    t[dir] = '.';
    memcpy(t + dir + 1, path + dir, base);
    memcpy(t + dir + 1 + base, TMP_SUFFIX, sizeof TMP_SUFFIX);
    return t;
}

/* The stream over fd, which is closed when there is none. */
static prof_err open_stream(outfile *o, int fd, const char *path, prof_error *err)
{
    o->fp = fdopen(fd, "w");
    if (!o->fp) {
        int e = errno;
        close(fd);
        return fail(o, err, "cannot write", path, strerror(e));
    }
    return PROF_OK;
}

/* A target that is not a regular file (a device, a FIFO) is opened and
 * written in place, as '>' does; there is nothing to replace atomically.
 * Here it is only named: outfile_open_through opens it. */
static prof_err name_through(outfile *o, const char *path, prof_error *err)
{
    o->path = strdup(path);
    if (!o->path)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    return PROF_OK;
}

prof_err outfile_open_through(outfile *o, prof_error *err)
{
    if (o->fp)
        return PROF_OK;
    /* A FIFO waits here for its reader; a signal ends the wait. */
    int fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return fail(o, err, "cannot write", o->path, strerror(errno));
    return open_stream(o, fd, o->path, err);
}

/* Gives the temporary fd the owner, group and permission bits of the file
 * it replaces (old, or NULL for a new file: the umask's mode). The owner
 * and group only where the process may (root, or a group it is in); the
 * bits never include set-id ones, so the replacement is never wider. */
static void take_mode(int fd, const struct stat *old)
{
    if (!old) {
        /* mkstemp makes 0600; a new output file gets the usual umask mode. */
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666u & ~mask);
        return;
    }
    if (old->st_uid != geteuid() || old->st_gid != getegid()) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0 &&
            fchown(fd, (uid_t)-1, old->st_gid) != 0) {
            /* best effort: the bits below still apply */
        }
    }
    (void)fchmod(fd, old->st_mode & 0777u);
}

prof_err outfile_open(outfile *o, const char *path, prof_error *err)
{
    prof_err e = outfile_prepare(o, path, err);
    return e == PROF_OK ? outfile_open_through(o, err) : e;
}

prof_err outfile_prepare(outfile *o, const char *path, prof_error *err)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->fp = stdout;
        return PROF_OK;
    }
    if (path_planted_link(path))
        return fail(o, err, "cannot write", path,
                    "a symbolic link of another user's in a shared sticky directory; remove it "
                    "or choose another name");
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return fail(o, err, "cannot create", path, strerror(errno));
    if (exists && S_ISDIR(st.st_mode))
        return fail(o, err, "cannot write", path, strerror(EISDIR));
    if (exists && !S_ISREG(st.st_mode))
        return name_through(o, path, err);
    if (exists && ((st.st_mode & 0222u) == 0 || access(path, W_OK) != 0))
        return fail(o, err, "cannot write", path,
                    "file is read-only; remove it or choose another name");
    /* A link to a regular file: replace the file, keep the link. */
    o->path = exists ? realpath(path, NULL) : strdup(path);
    if (!o->path) {
        if (exists && errno != ENOMEM)
            return fail(o, err, "cannot write", path, strerror(errno));
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    o->tmp = temp_name(o->path);
    if (!o->tmp) {
        outfile_abort(o);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return fail(o, err, "cannot create", path, strerror(e));
    }
    take_mode(fd, exists ? &st : NULL);
    return open_stream(o, fd, path, err);
}

prof_err outfile_commit(outfile *o, prof_error *err)
{
    if (!o->path) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            return prof_error_set(err, PROF_ERR_IO, "cannot write to standard output: %s",
                                  strerror(errno ? errno : EIO));
        return PROF_OK;
    }
    errno = 0;
    /* fsync only what is renamed into place: a device or FIFO written
     * through may not support it, and '>' does not sync either. */
    int failed = fflush(o->fp) != 0 || ferror(o->fp) ||
                 (o->tmp && fsync(fileno(o->fp)) != 0);
    int e = errno ? errno : EIO;
    if (fclose(o->fp) != 0 && !failed) {
        failed = 1;
        e = errno ? errno : EIO;
    }
    o->fp = NULL;
    if (!failed && o->tmp && rename(o->tmp, o->path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed)
        return fail(o, err, "cannot write", o->path, strerror(e));
    outfile_abort(o);
    return PROF_OK;
}

void outfile_abort(outfile *o)
{
    if (o->fp && o->fp != stdout)
        fclose(o->fp);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}
