/* import_util.h - what the tests of the Kineto importer share: a trace
 * imported through import_trace() into a profile of the test directory,
 * and loaded back through the real reader and model. Header-only so each
 * test stays one program. */
#ifndef PROF_TESTS_IMPORT_UTIL_H
#define PROF_TESTS_IMPORT_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fixtures.h"
#include "import/import.h"
#include "model/profile.h"

static inline prof_err import_opts(const char *trace, const char *out, int python_stacks,
                            import_counts *counts, prof_error *err)
{
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    import_options o = { .python_stacks = python_stacks };
    memset(counts, 0, sizeof *counts);
    *err = (prof_error){ PROF_OK, "" };
    return import_trace(trace, fd, &o, counts, err);
}

/* Imports a trace into NAME.prof of the test directory and loads it. */
static inline const char *import_load(const char *trace, int python_stacks, import_counts *c,
                                      profile_model *m)
{
    static char out[256];
    const char *base = strrchr(trace, '/');
    snprintf(out, sizeof out, "%s.prof", fx_path(base ? base + 1 : trace));
    prof_error err;
    cr_assert_eq(import_opts(trace, out, python_stacks, c, &err), PROF_OK, "%s: %s", trace,
                 err.message);
    cr_assert_eq(profile_model_load(out, NULL, m, NULL, NULL, &err), PROF_OK, "%s", err.message);
    return out;
}

#endif
