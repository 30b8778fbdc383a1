/* fd.c - how libprof opens files inside the program it records.
 *
 * Never on descriptors 0, 1 or 2: a program that closed its standard
 * output (or was started with it closed) would otherwise print into the
 * profile, or read from it. Always close-on-exec. And the output only
 * when it is a regular file, opened without blocking: opening a FIFO
 * waits for a reader, writing to one waits for it to read, and a device
 * or a socket is no place for a profile, so all of them are refused with
 * ENOTSUP before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/runtime.h"

#define FIRST_OWN_FD 3 /* above stdin, stdout and stderr */

int rt_fd_above_std(int fd)
{
    if (fd < 0 || fd >= FIRST_OWN_FD)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, FIRST_OWN_FD);
    int e = errno;
    close(fd);
    errno = e;
    return moved;
}

int rt_open_read(const char *path)
{
    return rt_fd_above_std(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
}

/* A regular file is made empty only once it is known to be one:
 * O_TRUNC would act on whatever the path names. Then blocking mode
 * back, which regular files ignore anyway. */
static int output_prepare(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -ENOTSUP;
    if (ftruncate(fd, 0) != 0)
        return -errno;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return -errno;
    return 0;
}

int rt_output_open(const char *path)
{
    struct stat st;
    /* What exists and is neither a file nor a directory (for which open
     * says EISDIR) is not even opened: opening a device can act on it. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return -ENOTSUP;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd < 0) /* ENXIO: a FIFO without a reader, or a socket, made since */
        return errno == ENXIO ? -ENOTSUP : -errno;
    if ((fd = rt_fd_above_std(fd)) < 0)
        return -errno;
    int e = output_prepare(fd);
    if (e) {
        close(fd);
        return e;
    }
    return fd;
}
