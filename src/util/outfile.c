/* outfile.c - whole-or-nothing output files; see outfile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/outfile.h"

prof_err outfile_open(outfile *o, const char *path, prof_error *err)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->fp = stdout;
        return PROF_OK;
    }
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(n + 16);
    if (!o->path || !o->tmp) {
        outfile_abort(o);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    /* Beside the target, so that rename() stays within one file system. */
    snprintf(o->tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        outfile_abort(o);
        return prof_error_set(err, PROF_ERR_IO, "cannot create '%s': %s", path, strerror(e));
    }
    /* mkstemp makes 0600; an output file should get the usual umask mode. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666u & ~mask);
    o->fp = fdopen(fd, "w");
    if (!o->fp) {
        int e = errno;
        close(fd);
        outfile_abort(o);
        return prof_error_set(err, PROF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    return PROF_OK;
}

prof_err outfile_commit(outfile *o, prof_error *err)
{
    if (!o->tmp) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            return prof_error_set(err, PROF_ERR_IO, "cannot write to standard output: %s",
                                  strerror(errno ? errno : EIO));
        return PROF_OK;
    }
    errno = 0;
    int failed = fflush(o->fp) != 0 || ferror(o->fp) || fsync(fileno(o->fp)) != 0;
    int e = errno ? errno : EIO;
    if (fclose(o->fp) != 0 && !failed) {
        failed = 1;
        e = errno ? errno : EIO;
    }
    o->fp = NULL;
    if (!failed && rename(o->tmp, o->path) != 0) {
        failed = 1;
        e = errno;
    }
    prof_err rc = PROF_OK;
    if (failed)
        rc = prof_error_set(err, PROF_ERR_IO, "cannot write '%s': %s", o->path, strerror(e));
    outfile_abort(o);
    return rc;
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
