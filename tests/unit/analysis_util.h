/* analysis_util.h - helpers of the analysis tests: load a fixture into a
 * model, build its report, find findings and members. Header-only so each
 * test stays one program. */
#ifndef PROF_TESTS_ANALYSIS_UTIL_H
#define PROF_TESTS_ANALYSIS_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "analysis/report.h"
#include "fixtures.h"
#include "model/profile.h"
#include "schema_check.h"

/* doc matches the JSON Schema at schema_path; what names doc in the
 * failure ("report", "comparison"). */
static inline void au_assert_valid(const cJSON *doc, const char *schema_path, const char *what)
{
    cJSON *schema = schema_load(schema_path);
    cr_assert_not_null(schema, "cannot read %s", schema_path);
    char why[600];
    int ok = schema_check(schema, schema, doc, why, sizeof why);
    cJSON_Delete(schema);
    cr_assert(ok, "%s does not match its schema: %s", what, why);
}

/* path loaded as t says (NULL: the default tuning). */
static inline void au_load_tuned(const char *path, const prof_tuning *t, profile_model *m)
{
    prof_error err = { 0 };
    prof_err rc = profile_model_load(path, t, m, NULL, NULL, &err);
    cr_assert_eq(rc, PROF_OK, "loading %s: %s", path, err.message);
}

static inline void au_load(const char *path, profile_model *m)
{
    au_load_tuned(path, NULL, m);
}

/* The report of one file with options o (NULL: defaults), loaded with
 * o's tuning. */
static inline cJSON *au_report(const char *path, const analysis_options *o)
{
    profile_model m;
    au_load_tuned(path, o ? o->tuning : NULL, &m);
    const profile_model *one[1] = { &m };
    prof_error err = { 0 };
    cJSON *r = report_build(one, 1, o, &err);
    cr_assert_not_null(r, "report of %s: %s", path, err.message);
    profile_model_free(&m);
    return r;
}

static inline const cJSON *au_get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert_not_null(v, "member '%s' missing", key);
    return v;
}

static inline double au_num(const cJSON *o, const char *key)
{
    const cJSON *v = au_get(o, key);
    cr_assert(cJSON_IsNumber(v), "member '%s' is not a number", key);
    return v->valuedouble;
}

static inline const char *au_str(const cJSON *o, const char *key)
{
    const cJSON *v = au_get(o, key);
    cr_assert(cJSON_IsString(v), "member '%s' is not a string", key);
    return v->valuestring;
}

/* The finding of rule about subject (any subject when NULL), or NULL. */
static inline const cJSON *au_finding(const cJSON *report, const char *rule,
                                      const char *subject)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, au_get(report, "bottlenecks")) {
        if (strcmp(au_str(f, "rule"), rule) == 0 &&
            (!subject || strcmp(au_str(f, "subject"), subject) == 0))
            return f;
    }
    return NULL;
}

static inline int au_count(const cJSON *report, const char *rule)
{
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, au_get(report, "bottlenecks")) n += strcmp(au_str(f, "rule"), rule) == 0;
    return n;
}

/* The first string of doc's array member key that contains text, or NULL. */
static inline const char *au_listed(const cJSON *doc, const char *key, const char *text)
{
    const cJSON *n;
    cJSON_ArrayForEach(n, au_get(doc, key))
        if (cJSON_IsString(n) && strstr(n->valuestring, text))
            return n->valuestring;
    return NULL;
}

/* The first of the notes of a report or a comparison that contains text,
 * or NULL. */
static inline const char *au_note(const cJSON *doc, const char *text)
{
    return au_listed(doc, "notes", text);
}

/* The element of array arr whose member key is the string name. */
static inline const cJSON *au_named(const cJSON *arr, const char *key, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
        if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
            return e;
    }
    return NULL;
}

static inline void au_near(double got, double want, double rel, const char *what)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "%s: %.6g, want %.6g (within %g%%)", what,
              got, want, rel * 100);
}

#endif
