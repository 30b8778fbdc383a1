/* fd.c - how libprof opens files inside the program it records.
 *
 * Never on descriptors 0, 1 or 2: a program that closed its standard
 * output (or was started with it closed) would otherwise print into the
 * profile, or read from it. Always close-on-exec. And the output only
 * when it is a regular file, opened without blocking: opening a FIFO
 * waits for a reader, writing to one waits for it to read, and a device
 * or a socket is no place for a profile, so all of them are refused with
 * ENOTSUP before anything is written.
 *
 * The output is also claimed: an exclusive lock on its open file
 * description, taken before it is made empty, held until it is closed
 * (the process dying releases it). Two recorders on one name (the
 * libprof linked into a program and the one `prof record` preloads, a
 * child calling prof_start under a recorded parent, the ranks of a
 * launcher sharing PROF_OUTPUT) would otherwise truncate and interleave
 * each other's blocks; the one that finds the name claimed writes to a
 * name of its own instead (rt_output_alt_name), and nothing is lost. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/runtime.h"
#include "util/planted.h"

#define FIRST_OWN_FD 3  /* above stdin, stdout and stderr */
#define ALT_NAME_TRIES 16 /* NAME.PID, then NAME.PID-1 ... NAME.PID-15 */

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

/* The exclusive lock on fd's open file description: 0; -EAGAIN when
 * another holds it (another description, in this process or another);
 * 0 too where the file system has no locks at all, as recording matters
 * more than the guard. An OFD lock first (a lock of the description, not
 * of the process, so two copies of libprof in one process see each
 * other), flock where the kernel has none. */
static int output_lock(int fd)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
        return 0;
    if (errno == EAGAIN || errno == EACCES)
        return -EAGAIN;
    if (errno != EINVAL)
        return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    return errno == EWOULDBLOCK ? -EAGAIN : 0;
}

/* A regular file is made empty only once it is known to be one and is
 * ours: O_TRUNC would act on whatever the path names, and on a profile
 * another recorder is writing. Then blocking mode back, which regular
 * files ignore anyway. */
static int output_prepare(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -ENOTSUP;
    int e = output_lock(fd);
    if (e)
        return e;
    if (ftruncate(fd, 0) != 0)
        return -errno;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return -errno;
    return 0;
}

/* The final component is not followed when it is a link another user
 * planted in a shared sticky directory, whatever fs.protected_symlinks
 * says: O_NOFOLLOW first, and a link is followed only once known not to
 * be one of those (in a sticky directory nobody else can replace it). */
static int output_open_one(const char *path)
{
    struct stat st;
    if (path_planted_link(path))
        return -ELOOP;
    /* What exists and is neither a file nor a directory (for which open
     * says EISDIR) is not even opened: opening a device can act on it. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return -ENOTSUP;
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
    int fd = open(path, flags | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == ELOOP) {
        if (path_planted_link(path)) /* planted since */
            return -ELOOP;
        fd = open(path, flags, 0644);
    }
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

char *rt_output_alt_name(const char *path, long pid, unsigned k)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *stem = base + strspn(base, "."); /* a leading dot is no extension */
    const char *dot = strrchr(stem, '.');
    size_t at = dot ? (size_t)(dot - path) : strlen(path);
    char tag[48];
    if (k)
        snprintf(tag, sizeof tag, ".%ld-%u", pid, k);
    else
        snprintf(tag, sizeof tag, ".%ld", pid);
    size_t len = strlen(path) + strlen(tag) + 1;
    char *alt = malloc(len);
    if (alt)
        snprintf(alt, len, "%.*s%s%s", (int)at, path, tag, path + at);
    return alt;
}

int rt_output_open(const char *path, int claimed, char **alt)
{
    *alt = NULL;
    int fd = claimed ? -EAGAIN : output_open_one(path);
    for (unsigned k = 0; fd == -EAGAIN && k < ALT_NAME_TRIES; k++) {
        char *name = rt_output_alt_name(path, (long)getpid(), k);
        if (!name)
            return -ENOMEM;
        fd = output_open_one(name);
        if (fd >= 0)
            *alt = name;
        else
            free(name);
    }
    return fd == -EAGAIN ? -EBUSY : fd;
}
