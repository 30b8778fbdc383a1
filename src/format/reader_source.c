/* reader_source.c - the bytes a reader reads: a regular file, read with
 * pread so that the producing thread and the caller never share a file
 * offset, or memory the caller keeps alive, read in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/reader_int.h"
#include "util/error.h"

/* What a file that is not a regular one is, for the error message. */
static const char *file_type_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "is a directory";
    if (S_ISFIFO(mode))
        return "not a regular file (a FIFO)";
    if (S_ISCHR(mode))
        return "not a regular file (a character device)";
    if (S_ISBLK(mode))
        return "not a regular file (a block device)";
    if (S_ISSOCK(mode))
        return "not a regular file (a socket)";
    return "not a regular file";
}

/* A FIFO is opened without waiting for a writer (O_NONBLOCK), a terminal
 * never becomes the controlling one. The descriptor is blocking again on
 * return. */
int pf_source_open(const char *path, struct stat *sb, prof_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        prof_error_set(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
        return -1;
    }
    const char *why = NULL;
    int flags;
    if (fstat(fd, sb) < 0)
        why = strerror(errno);
    else if (!S_ISREG(sb->st_mode))
        why = file_type_name(sb->st_mode);
    else if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
        why = strerror(errno);
    if (why) {
        prof_error_set(err, PROF_ERR_IO, "cannot read: %s", why);
        close(fd);
        return -1;
    }
    return fd;
}

/* Memory that ran out is not I/O: the file itself may be whole. */
static prof_err read_failed(prof_error *err, int e, const char *nomem)
{
    if (e == ENOMEM)
        return prof_error_set(err, PROF_ERR_NOMEM, "%s", nomem);
    return prof_error_set(err, PROF_ERR_IO, "read failed: %s", strerror(e));
}

int pf_buf_reserve(pf_buf *buf, size_t len)
{
    if (len <= buf->cap && buf->data)
        return 0;
    uint8_t *b = realloc(buf->data, len ? len : 1);
    if (!b)
        return -1;
    buf->data = b;
    buf->cap = len ? len : 1;
    return 0;
}

prof_err pf_source_read_ahead(const pf_file *f, uint64_t off, size_t len, size_t more,
                              const uint8_t **out, size_t *extra, pf_buf *buf, prof_error *err,
                              const char *nomem)
{
    *extra = 0;
    if (f->mem) {
        *out = f->mem + off;
        return PROF_OK;
    }
    if (pf_buf_reserve(buf, len + more) < 0)
        return read_failed(err, ENOMEM, nomem);
    size_t got = 0;
    while (got < len + more) {
        ssize_t n = pread(f->fd, buf->data + got, len + more - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 && got >= len) /* the bytes after len are not needed */
            break;
        if (n <= 0) /* n == 0: the file shrank under us */
            return read_failed(err, n == 0 ? EIO : errno, nomem);
        got += (size_t)n;
    }
    *out = buf->data;
    *extra = got - len;
    return PROF_OK;
}

prof_err pf_source_read(const pf_file *f, uint64_t off, size_t len, const uint8_t **out,
                        pf_buf *buf, prof_error *err, const char *nomem)
{
    size_t extra;
    return pf_source_read_ahead(f, off, len, 0, out, &extra, buf, err, nomem);
}
