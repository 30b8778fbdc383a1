/* planted.h - the one rule for a symbolic link that another user may have
 * planted where an output is to be written, shared by libprof (which
 * creates its profile with O_NOFOLLOW semantics) and the tool's -o
 * (outfile.c, which follows a link by realpath and rename, both beyond
 * the kernel's fs.protected_symlinks). */
#ifndef PROF_UTIL_PLANTED_H
#define PROF_UTIL_PLANTED_H

/* Whether path is a symbolic link another user owns in a sticky
 * world-writable directory (/tmp) that is not theirs either: the links
 * fs.protected_symlinks does not follow. 1 too when that cannot be told
 * (a parent path too long, its directory unreadable): refuse. */
int path_planted_link(const char *path);

#endif
