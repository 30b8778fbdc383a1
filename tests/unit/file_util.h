/* file_util.h - whole files read and written by the unit tests that make
 * traces byte by byte (the importers'): each step asserted. */
#ifndef PROF_TESTS_FILE_UTIL_H
#define PROF_TESTS_FILE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

/* The file's bytes (malloc'd, the caller frees) and their number in *n. */
static inline char *fu_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    struct stat st;
    cr_assert_eq(fstat(fileno(f), &st), 0);
    char *b = malloc((size_t)st.st_size + 1);
    cr_assert_not_null(b);
    cr_assert_eq(fread(b, 1, (size_t)st.st_size, f), (size_t)st.st_size);
    fclose(f);
    *n = (size_t)st.st_size;
    return b;
}

/* Writes n bytes as the whole of the file at path. */
static inline void fu_spill(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

#endif
