/* analysis_limits.c - the report's bounds on per-name lists: a profile of
 * many distinct names (memory series, counters, threads, operations) gives
 * a report that lists the largest of each up to the limit, says what it
 * left out in its notes and *_total members, and still matches its schema;
 * the dashboard's reports (options.others) sum up the operations they cut.
 * The limit is set small here (max_names), so small fixtures cross it. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis_util.h"
#include "synth.h"

#define SCHEMA "formats/report.schema.json"
#define NAMES 25 /* of each kind in the fixture */
#define LIMIT 10 /* options.max_names in the tests */

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_limits, .fini = teardown);

/* NAMES operations, memory series, counters and threads; the weight of the
 * i-th grows with i, so the last LIMIT are the ones a report keeps. */
static const char *many_names(void)
{
    const char *path = fx_path("many.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    for (uint32_t i = 0; i < NAMES; i++) {
        char name[32];
        uint64_t t = 1000000 * (uint64_t)i;
        snprintf(name, sizeof name, "op%02u", i);
        synth_region(s, i, name, PROF_KIND_COMPUTE, 0, t, 1000 * (uint64_t)(i + 1));
        snprintf(name, sizeof name, "mem%02u", i);
        synth_memory(s, 0, name, t, 1000 * (uint64_t)(i + 1));
        snprintf(name, sizeof name, "ctr%02u", i);
        for (uint32_t k = 0; k <= i; k++)
            synth_counter(s, 0, name, t + k, (double)k);
    }
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 0, 1000000 * (uint64_t)NAMES);
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    return path;
}

/* Every name in arr (under key) ends with a number >= first. */
static void assert_largest(const cJSON *arr, const char *key, int first, const char *what)
{
    const cJSON *e;
    cr_assert_eq(cJSON_GetArraySize(arr), LIMIT, "%s: %d listed", what,
                 cJSON_GetArraySize(arr));
    cJSON_ArrayForEach(e, arr) {
        const char *name = au_str(e, key);
        int n = atoi(name + strcspn(name, "0123456789"));
        cr_assert_geq(n, first, "%s: %s listed, not one of the largest", what, name);
    }
}

Test(analysis_limits, per_name_lists_keep_the_largest_and_say_so)
{
    analysis_options o;
    analysis_options_default(&o);
    o.max_names = LIMIT;
    cJSON *r = au_report(many_names(), &o);
    au_assert_valid(r, SCHEMA, "report");
    assert_largest(au_get(r, "memory"), "series", NAMES - LIMIT, "memory");
    assert_largest(au_get(au_get(r, "summary"), "memory"), "series", NAMES - LIMIT,
                   "summary.memory");
    assert_largest(au_get(r, "counters"), "name", NAMES - LIMIT, "counters");
    cr_assert_eq(au_num(r, "memory_total"), NAMES);
    cr_assert_eq(au_num(au_get(r, "summary"), "memory_total"), NAMES);
    cr_assert_eq(au_num(r, "counters_total"), NAMES);
    const cJSON *roots = au_get(au_get(r, "call_tree"), "children");
    cr_assert_eq(cJSON_GetArraySize(roots), LIMIT + 1, "the busiest threads and one more");
    const cJSON *other = cJSON_GetArrayItem(roots, LIMIT);
    cr_assert_str_eq(au_str(other, "name"), "(other threads)");
    cr_assert_eq(au_num(other, "folded"), NAMES - LIMIT);
    double folded_ns = 0; /* threads 0..14 ran 1000 * (i + 1) ns each */
    for (int i = 0; i < NAMES - LIMIT; i++)
        folded_ns += 1000.0 * (i + 1);
    cr_assert_eq(au_num(other, "incl_ns"), folded_ns);
    cr_assert(au_note(r, "25 memory series: this report lists the 10"));
    cr_assert(au_note(r, "25 counters: this report lists the 10"));
    cr_assert(au_note(r, "15 more threads"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(r, "others"), "analyze writes no others");
    cJSON_Delete(r);
}

/* Within the limit nothing changes: no *_total member, no note. */
Test(analysis_limits, lists_within_the_limit_are_whole_and_unmarked)
{
    analysis_options o;
    analysis_options_default(&o);
    o.max_names = NAMES;
    cJSON *r = au_report(many_names(), &o);
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "memory")), NAMES);
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "counters")), NAMES);
    cr_assert_eq(cJSON_GetArraySize(au_get(au_get(r, "call_tree"), "children")), NAMES);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(r, "memory_total"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(r, "counters_total"));
    cr_assert_not(au_note(r, "limit of its per-name lists"));
    cJSON_Delete(r);
    o.max_names = 0; /* no limit */
    r = au_report(many_names(), &o);
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "memory")), NAMES);
    cJSON_Delete(r);
}

/* The dashboard's report: operations cut to top, the rest summed up. */
Test(analysis_limits, the_dashboards_report_sums_up_what_it_cuts)
{
    analysis_options o;
    analysis_options_default(&o);
    o.top = LIMIT;
    o.others = 1;
    cJSON *r = au_report(many_names(), &o);
    au_assert_valid(r, SCHEMA, "report");
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "operations")), LIMIT);
    const cJSON *rest = au_get(au_get(r, "others"), "operations");
    cr_assert_eq(au_num(rest, "count"), NAMES - LIMIT);
    cr_assert_eq(au_num(rest, "calls"), NAMES - LIMIT);
    double self = 0;
    for (int i = 0; i < NAMES - LIMIT; i++)
        self += 1000.0 * (i + 1);
    cr_assert_eq(au_num(rest, "self_ns"), self);
    cr_assert_eq(au_num(rest, "incl_ns"), self);
    cr_assert(au_note(r, "15 more operations are not listed here, with 15 calls"));
    cJSON_Delete(r);
}
