/* planted.c - a link planted by another user; see planted.h. No
 * allocation: libprof calls it while opening its output. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/planted.h"

int path_planted_link(const char *path)
{
    struct stat ln, dir;
    if (lstat(path, &ln) != 0 || !S_ISLNK(ln.st_mode) || ln.st_uid == geteuid())
        return 0;
    const char *slash = strrchr(path, '/');
    char parent[4096];
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == path)
        snprintf(parent, sizeof parent, "/");
    else if ((size_t)(slash - path) < sizeof parent)
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    else
        return 1; /* cannot tell: refuse */
    return stat(parent, &dir) != 0 ||
           ((dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH) && ln.st_uid != dir.st_uid);
}
