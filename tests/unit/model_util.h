/* model_util.h - what the unit tests of the model and the importers share
 * about a profile_model: a test file that must be written and one that
 * must load, and lookups into the
 * loaded model (an operation or a series by name, an operation that must
 * be there, a GPU device that must be there, a thread by name). */
#ifndef PROF_TESTS_MODEL_UTIL_H
#define PROF_TESTS_MODEL_UTIL_H

#include <string.h>

#include <criterion/criterion.h>

#include "model/profile.h"
#include "synth.h"

/* The test writer's file closed, or the test fails. */
static inline void mu_close(synth *s)
{
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

/* path loaded with the default tuning, or the test fails. */
static inline void mu_load(const char *path, profile_model *m)
{
    prof_error err = { 0 };
    prof_err e = profile_model_load(path, NULL, m, NULL, NULL, &err);
    cr_assert_eq(e, PROF_OK, "%s: %s", path, err.message);
}

/* The operation of that name, or NULL. */
static inline const model_op *mu_find_op(const profile_model *m, const char *name)
{
    for (size_t i = 0; i < m->nops; i++)
        if (strcmp(m->ops[i].name, name) == 0)
            return &m->ops[i];
    return NULL;
}

/* The series of that name, or NULL. */
static inline const model_series *mu_find_series(const profile_model *m, const char *name)
{
    for (size_t i = 0; i < m->nseries; i++)
        if (strcmp(m->series[i].name, name) == 0)
            return &m->series[i];
    return NULL;
}

static inline const model_op *mu_op(const profile_model *m, const char *name)
{
    const model_op *o = mu_find_op(m, name);
    cr_assert_not_null(o, "no operation '%s'", name);
    return o;
}

static inline const model_gpu_device *mu_gpu(const profile_model *m, uint32_t device)
{
    for (size_t i = 0; i < m->ngpus; i++)
        if (m->gpus[i].device == device)
            return &m->gpus[i];
    cr_assert_fail("no GPU %u", device);
    return NULL;
}

/* The thread of that name, or NULL. */
static inline const model_thread *mu_thread_named(const profile_model *m, const char *name)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].name && strcmp(m->threads[i].name, name) == 0)
            return &m->threads[i];
    return NULL;
}

#endif
