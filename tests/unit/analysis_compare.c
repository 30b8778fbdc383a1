/* analysis_compare.c - compare_build over real profiles: each fixture is
 * written with compare_fixtures.h, loaded, analyzed with every operation
 * kept and compared, as `prof compare` does. Identical runs show no
 * significant change; an operation 30% slower (with per-call noise) is
 * flagged and fails --fail-on-regression 10; 2% slower is not significant
 * even when the t-test alone would say so; small operations never fail a
 * run; operations and leaks that come and go are listed; differing step
 * counts, sampling and commands are noted. Every comparison matches
 * formats/compare.schema.json. Run from the repository root. */
#include <stdio.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis_util.h"
#include "compare_fixtures.h"
#include "output/compare_csv.h"
#include "output/compare_text.h"

#define SCHEMA "formats/compare.schema.json"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_compare, .fini = teardown);

/* ---- helpers ------------------------------------------------------------- */

static const char *write_spec(const char *name, const cf_spec *spec)
{
    const char *path = fx_path(name);
    prof_error err = { 0 };
    cr_assert_eq(cf_write(path, spec, &err), 0, "writing %s: %s", name, err.message);
    return path;
}

static const char *write_base(const char *name, uint64_t seed)
{
    cf_spec spec = cf_base(seed);
    return write_spec(name, &spec);
}

static const char *write_scaled(const char *name, unsigned steps, const char *op, double factor)
{
    const char *path = fx_path(name);
    prof_error err = { 0 };
    cr_assert_eq(cf_write_scaled(path, 99, steps, op, factor, &err), 0, "writing %s: %s", name,
                 err.message);
    return path;
}

/* The comparison of two files as prof compare builds it with options o. */
static cJSON *compare_files_with(const char *before, const char *after, const compare_options *o)
{
    analysis_options ao;
    analysis_options_default(&ao);
    ao.top = 0;
    cJSON *rb = au_report(before, &ao), *ra = au_report(after, &ao);
    prof_error err = { 0 };
    cJSON *cmp = compare_build(rb, ra, o, &err);
    cr_assert_not_null(cmp, "compare: %s", err.message);
    cJSON_Delete(rb);
    cJSON_Delete(ra);
    au_assert_valid(cmp, SCHEMA, "comparison");
    return cmp;
}

/* The same with the default options but regression_pct (negative when not
 * asked for) and noise_pct (negative for the default). */
static cJSON *compare_files(const char *before, const char *after, double regression_pct,
                            double noise_pct)
{
    compare_options o;
    compare_options_default(&o);
    o.regression_pct = regression_pct;
    if (noise_pct >= 0)
        o.noise_pct = noise_pct;
    return compare_files_with(before, after, &o);
}

static const cJSON *op_named(const cJSON *cmp, const char *name)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, au_get(cmp, "operations"))
        if (strcmp(au_str(op, "name"), name) == 0)
            return op;
    cr_assert_fail("operation '%s' missing from the comparison", name);
    return NULL;
}

static int significant(const cJSON *o)
{
    return cJSON_IsTrue(au_get(o, "significant"));
}

static int count_significant(const cJSON *cmp)
{
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, au_get(cmp, "operations"))
        n += significant(op);
    return n;
}

static const cJSON *regression(const cJSON *cmp)
{
    return au_get(cmp, "regression");
}

static int regressed(const cJSON *cmp)
{
    int r = cJSON_IsTrue(au_get(regression(cmp), "regressed"));
    cr_assert_eq(r, compare_regressed(cmp));
    return r;
}

static int has_reason(const cJSON *cmp, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, au_get(regression(cmp), "reasons"))
        if (strcmp(au_str(r, "name"), name) == 0)
            return 1;
    return 0;
}

static const cJSON *finding_in(const cJSON *cmp, const char *group, const char *rule,
                               const char *subject)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, au_get(au_get(cmp, "bottlenecks"), group))
        if (strcmp(au_str(f, "rule"), rule) == 0 && strcmp(au_str(f, "subject"), subject) == 0)
            return f;
    return NULL;
}

/* One run a side: the only note says that run-to-run variation is
 * unknown. */
static void assert_only_method_note(const cJSON *cmp)
{
    const cJSON *notes = au_get(cmp, "notes");
    cr_assert_eq(cJSON_GetArraySize(notes), 1);
    cr_assert_str_eq(au_str(cmp, "method"), "within_run");
    cr_assert_not_null(strstr(cJSON_GetArrayItem(notes, 0)->valuestring,
                              "run-to-run variation is unknown"));
}

/* ---- the same run --------------------------------------------------------- */

Test(analysis_compare, a_profile_against_itself_shows_no_change)
{
    const char *p = write_base("base.prof", 1);
    cJSON *cmp = compare_files(p, p, 10, -1);
    cr_assert_str_eq(au_str(cmp, "schema"), "prof-compare");
    cr_assert_eq(count_significant(cmp), 0);
    const cJSON *op;
    cJSON_ArrayForEach(op, au_get(cmp, "operations")) {
        cr_assert_str_eq(au_str(op, "status"), "unchanged", "%s", au_str(op, "name"));
        cr_assert_eq(au_num(op, "relative"), 0);
        cr_assert_eq(au_num(op, "p_value"), 1);
    }
    cr_assert_eq(cJSON_GetArraySize(au_get(cmp, "operations")), CF_BASE_NOPS + 1);
    cr_assert_not(significant(au_get(cmp, "step_time_test")));
    cr_assert_eq(au_num(au_get(cmp, "speedup"), "value"), 1);
    assert_only_method_note(cmp);
    const cJSON *b = au_get(cmp, "bottlenecks");
    cr_assert_eq(cJSON_GetArraySize(au_get(b, "fixed")), 0);
    cr_assert_eq(cJSON_GetArraySize(au_get(b, "new")), 0);
    cr_assert_gt(cJSON_GetArraySize(au_get(b, "persisting")), 0);
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

Test(analysis_compare, a_rerun_of_the_same_program_shows_no_significant_change)
{
    cJSON *cmp = compare_files(write_base("a.prof", 1), write_base("b.prof", 2), 10, -1);
    cr_assert_eq(count_significant(cmp), 0);
    cr_assert_not(significant(au_get(cmp, "step_time_test")));
    cr_assert_not(regressed(cmp));
    assert_only_method_note(cmp);
    cJSON_Delete(cmp);
}

/* ---- slower and faster ------------------------------------------------------ */

Test(analysis_compare, an_operation_30_percent_slower_is_significant_and_a_regression)
{
    const char *base = write_base("base.prof", 1);
    const char *slow = write_scaled("slow.prof", 300, "backward", 1.30);
    cJSON *cmp = compare_files(base, slow, 10, -1);
    const cJSON *op = op_named(cmp, "backward");
    cr_assert_str_eq(au_str(op, "status"), "slower");
    cr_assert(significant(op));
    cr_assert_lt(au_num(op, "p_value"), 1e-6);
    cr_assert_float_eq(au_num(op, "relative"), 0.30, 0.03, "relative %g", au_num(op, "relative"));
    cr_assert_eq(au_num(au_get(op, "before"), "calls"), 300);
    cr_assert_eq(au_num(au_get(op, "after"), "calls"), 300);
    static const char *const unchanged[] = { "forward", "optimizer_step", "data_loading",
                                             "log_metrics" };
    for (size_t i = 0; i < 4; i++)
        cr_assert_not(significant(op_named(cmp, unchanged[i])), "%s", unchanged[i]);
    cr_assert(significant(au_get(cmp, "step_time_test")));
    cr_assert_lt(au_num(au_get(cmp, "speedup"), "value"), 0.9);
    cr_assert(regressed(cmp));
    cr_assert(has_reason(cmp, "mean step time"));
    cr_assert_not(has_reason(cmp, "backward"), "one run a side: only the step time fails");
    cr_assert_not(has_reason(cmp, "forward"));
    cJSON_Delete(cmp);
}

Test(analysis_compare, a_threshold_above_the_slowdown_passes)
{
    const char *base = write_base("base.prof", 1);
    const char *slow = write_scaled("slow.prof", 300, "backward", 1.30);
    cJSON *cmp = compare_files(base, slow, 40, -1);
    cr_assert(significant(op_named(cmp, "backward")));
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
    cmp = compare_files(base, slow, -1, -1);
    cr_assert_not(regressed(cmp), "no threshold, no regression");
    cr_assert(cJSON_IsNull(au_get(regression(cmp), "threshold_pct")));
    cJSON_Delete(cmp);
}

Test(analysis_compare, the_reverse_is_faster_and_no_regression)
{
    const char *base = write_base("base.prof", 1);
    const char *slow = write_scaled("slow.prof", 300, "backward", 1.30);
    cJSON *cmp = compare_files(slow, base, 10, -1);
    const cJSON *op = op_named(cmp, "backward");
    cr_assert_str_eq(au_str(op, "status"), "faster");
    cr_assert(significant(op));
    cr_assert_float_eq(au_num(op, "relative"), 1 / 1.3 - 1, 0.03);
    cr_assert_gt(au_num(au_get(cmp, "speedup"), "value"), 1.1);
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

/* 1,000 calls a side make even 2% statistically clear against zero; the
 * test is against the noise floor, so it is not reported: p is that of the
 * change being within the floor (rules.md §6.3). */
Test(analysis_compare, two_percent_slower_is_below_the_noise_floor)
{
    cf_spec spec = cf_base(5);
    spec.steps = 1000;
    const char *base = write_spec("base.prof", &spec);
    const char *slow = write_scaled("slow.prof", 1000, "backward", 1.02);
    cJSON *cmp = compare_files(base, slow, 1, -1);
    const cJSON *op = op_named(cmp, "backward");
    cr_assert_float_eq(au_num(op, "relative"), 0.02, 0.01, "relative %g", au_num(op, "relative"));
    cr_assert_eq(au_num(op, "p_value"), 1, "within the floor: p %g", au_num(op, "p_value"));
    cr_assert_gt(au_num(op, "relative_low"), 0, "the interval excludes no change");
    cr_assert_not(significant(op));
    cr_assert_str_eq(au_str(op, "status"), "unchanged");
    cr_assert_not(regressed(cmp), "nothing significant, so nothing fails even at 1%%");
    cJSON_Delete(cmp);
    cmp = compare_files(base, slow, -1, 1);
    cr_assert(significant(op_named(cmp, "backward")), "--noise 1 lets it through");
    cJSON_Delete(cmp);
}

Test(analysis_compare, a_small_operation_slower_is_reported_but_never_fails_the_run)
{
    const char *base = write_base("base.prof", 1);
    const char *slow = write_scaled("slow.prof", 300, "log_metrics", 1.50);
    cJSON *cmp = compare_files(base, slow, 10, -1);
    const cJSON *op = op_named(cmp, "log_metrics");
    cr_assert(significant(op));
    cr_assert_lt(au_num(au_get(op, "after"), "share"), 0.05);
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

/* ---- what differs between the runs ---------------------------------------------- */

Test(analysis_compare, operations_that_appear_or_disappear_are_listed)
{
    cf_op ops[CF_BASE_NOPS];
    memcpy(ops, cf_base_ops, sizeof ops);
    ops[3].name = "fused_optimizer";
    cf_spec spec = cf_base(2);
    spec.ops = ops;
    cJSON *cmp = compare_files(write_base("base.prof", 1), write_spec("renamed.prof", &spec), 10,
                               -1);
    const cJSON *gone = op_named(cmp, "optimizer_step"), *added = op_named(cmp, "fused_optimizer");
    cr_assert_str_eq(au_str(gone, "status"), "removed");
    cr_assert(cJSON_IsNull(au_get(gone, "after")));
    cr_assert_eq(au_num(au_get(gone, "before"), "calls"), 300);
    cr_assert_str_eq(au_str(added, "status"), "added");
    cr_assert(cJSON_IsNull(au_get(added, "before")));
    cr_assert_eq(au_num(au_get(added, "after"), "calls"), 300);
    cr_assert(cJSON_IsNull(au_get(added, "p_value")));
    cr_assert_not(significant(added));
    cr_assert_not_null(finding_in(cmp, "fixed", "hot_operation", "optimizer_step"));
    cr_assert_not_null(finding_in(cmp, "new", "hot_operation", "fused_optimizer"));
    cr_assert_not_null(finding_in(cmp, "persisting", "hot_operation", "backward"));
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

Test(analysis_compare, different_step_counts_are_noted_and_means_still_compare)
{
    cf_spec half = cf_base(2);
    half.steps = 150;
    cJSON *cmp = compare_files(write_base("base.prof", 1), write_spec("half.prof", &half), 10, -1);
    cr_assert(au_note(cmp, "step counts differ: 300 before, 150 after"));
    const cJSON *steps = cJSON_GetArrayItem(au_get(cmp, "summary"), 0);
    cr_assert_str_eq(au_str(steps, "metric"), "steps");
    cr_assert_eq(au_num(steps, "change"), -150);
    cr_assert_float_eq(au_num(steps, "relative"), -0.5, 1e-12);
    cr_assert_eq(count_significant(cmp), 0);
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

Test(analysis_compare, different_sampling_and_commands_are_noted)
{
    cf_spec sampled = cf_base(2), other = cf_base(3);
    sampled.sample_every = 4;
    other.command = "bench.py";
    const char *base = write_base("base.prof", 1);
    cJSON *cmp = compare_files(base, write_spec("sampled.prof", &sampled), -1, -1);
    cr_assert(au_note(cmp, "sampling differs: 100% of steps kept their events before, 25% after"));
    cr_assert_eq(au_num(au_get(cmp, "after"), "sampled_steps"), 75);
    cr_assert_eq(au_num(au_get(cmp, "after"), "sample_rate"), 0.25);
    cr_assert_eq(count_significant(cmp), 0);
    cJSON_Delete(cmp);
    /* another schedule that keeps every step's events: nothing to say */
    cf_spec scheduled = cf_base(4);
    scheduled.schedule = "{\"wait\":0,\"warmup\":0,\"active\":1,\"repeat\":0}";
    cmp = compare_files(base, write_spec("scheduled.prof", &scheduled), -1, -1);
    cr_assert_not(au_note(cmp, "sampling differs"));
    cJSON_Delete(cmp);
    cmp = compare_files(base, write_spec("other.prof", &other), -1, -1);
    cr_assert(au_note(cmp, "different commands ('train.py' before, 'bench.py' after)"));
    cr_assert_str_eq(au_str(au_get(cmp, "after"), "command"), "bench.py");
    cJSON_Delete(cmp);
}

/* Sides of different GPUs, world sizes or batch sizes get a warning each,
 * in the JSON and first in the text; the same sides get none. */
Test(analysis_compare, sides_that_do_not_compare_are_warned_of)
{
    cf_spec a100 = cf_base(2), v100 = cf_base(3);
    a100.gpu = "NVIDIA A100-SXM4-40GB";
    a100.world_size = 8;
    a100.batch_size = "32";
    v100.gpu = "Tesla V100-SXM2-16GB";
    v100.world_size = 4;
    v100.batch_size = "64";
    const char *pa = write_spec("a100.prof", &a100), *pv = write_spec("v100.prof", &v100);
    cJSON *cmp = compare_files(pa, pv, -1, -1);
    cr_assert_eq(cJSON_GetArraySize(au_get(cmp, "warnings")), 3);
    cr_assert(au_listed(cmp, "warnings", "different GPUs: NVIDIA A100-SXM4-40GB before, Tesla "
                               "V100-SXM2-16GB after"));
    cr_assert(au_listed(cmp, "warnings", "different world sizes: 8 ranks before, 4 after"));
    cr_assert(au_listed(cmp, "warnings", "different batch sizes (tag batch_size): 32 before, 64 after"));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_style style = { 0 };
    cr_assert_eq(compare_render_text(f, cmp, &style), PROF_OK);
    fclose(f);
    char *warn = strstr(text, "Warnings"), *notes = strstr(text, "Notes");
    cr_assert(warn && (!notes || warn < notes), "%s", text);
    free(text);
    f = open_memstream(&text, &len);
    cr_assert_eq(compare_render_csv(f, cmp), PROF_OK);
    fclose(f);
    cr_assert(strstr(text, "\r\nwarning,\"different GPUs: NVIDIA A100-SXM4-40GB before") != NULL,
              "%s", text);
    free(text);
    cJSON_Delete(cmp);
    cf_spec same = cf_base(4);
    same.gpu = a100.gpu;
    same.world_size = 8;
    same.batch_size = "32";
    cmp = compare_files(pa, write_spec("a100b.prof", &same), -1, -1);
    cr_assert_eq(cJSON_GetArraySize(au_get(cmp, "warnings")), 0);
    cJSON_Delete(cmp);
}

/* With one run a side an operation slower past the threshold inside the
 * runs does not fail the check, which says so; asked, it fails it. */
Test(analysis_compare, one_run_a_side_operations_fail_only_when_asked)
{
    const char *base = write_base("base.prof", 1), *slow = write_scaled("slow.prof", 300,
                                                                       "backward", 1.3);
    cJSON *cmp = compare_files(base, slow, 10, -1);
    const cJSON *r = au_get(cmp, "regression");
    cr_assert(!has_reason(cmp, "backward"));
    cr_assert_eq(au_num(r, "within_run_uncounted"), 2, "backward and train_step around it: %g",
                 au_num(r, "within_run_uncounted"));
    cJSON_Delete(cmp);
    compare_options o;
    compare_options_default(&o);
    o.regression_pct = 10;
    o.ops_within_run = 1;
    cmp = compare_files_with(base, slow, &o);
    cr_assert(has_reason(cmp, "backward"));
    cr_assert(regressed(cmp));
    cr_assert_eq(au_num(au_get(cmp, "regression"), "within_run_uncounted"), 0);
    cJSON_Delete(cmp);
}

Test(analysis_compare, leaks_fixed_and_new_by_series)
{
    cf_spec leaky = cf_base(2);
    leaky.leak_mb = 20.0;
    const char *base = write_base("base.prof", 1), *leak = write_spec("leaky.prof", &leaky);
    cJSON *cmp = compare_files(leak, base, -1, -1);
    const cJSON *m = cJSON_GetArrayItem(au_get(cmp, "memory"), 0);
    cr_assert_str_eq(au_str(m, "series"), "gpu.allocated");
    cr_assert_str_eq(au_str(m, "leak"), "fixed");
    cr_assert(cJSON_IsTrue(au_get(m, "leak_before")));
    cr_assert_lt(au_num(m, "change_bytes"), -1e9, "the peak drops by 20 MiB x 300 steps");
    cr_assert_not_null(finding_in(cmp, "fixed", "memory_leak", "gpu.allocated"));
    cJSON_Delete(cmp);
    cmp = compare_files(base, leak, -1, -1);
    m = cJSON_GetArrayItem(au_get(cmp, "memory"), 0);
    cr_assert_str_eq(au_str(m, "leak"), "new");
    cr_assert_not_null(finding_in(cmp, "new", "memory_leak", "gpu.allocated"));
    cJSON_Delete(cmp);
}

Test(analysis_compare, a_profile_without_steps_leaves_step_metrics_empty)
{
    cf_spec none = cf_base(2);
    none.steps = 0;
    cJSON *cmp = compare_files(write_base("base.prof", 1), write_spec("none.prof", &none), 10,
                               -1);
    cr_assert(au_note(cmp, "no steps in the after profile"));
    const cJSON *m;
    cJSON_ArrayForEach(m, au_get(cmp, "summary"))
        if (strncmp(au_str(m, "metric"), "step_", 5) == 0)
            cr_assert(cJSON_IsNull(au_get(m, "after")), "%s", au_str(m, "metric"));
    cr_assert(cJSON_IsNull(au_get(cmp, "speedup")), "nothing profiled after: no speedup");
    cr_assert_not(significant(au_get(cmp, "step_time_test")));
    cr_assert_str_eq(au_str(op_named(cmp, "backward"), "status"), "removed");
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

/* ---- bad input ------------------------------------------------------------------ */

Test(analysis_compare, something_that_is_not_a_report_is_refused)
{
    cJSON *junk = cJSON_Parse("{\"schema\":\"prof-report\"}");
    cJSON *r = au_report(write_base("base.prof", 1), NULL);
    prof_error err = { 0 };
    cr_assert_null(compare_build(junk, r, NULL, &err));
    cr_assert_eq(err.code, PROF_ERR_INVALID);
    cr_assert(strstr(err.message, "not an analyze report") != NULL, "%s", err.message);
    cJSON_Delete(junk);
    cJSON_Delete(r);
}

/* ---- sides of repeated runs (rules.md §6.3) ------------------------------------------ */

#define RUNS 3

/* The comparison of RUNS reports a side, as prof compare builds it, checked
 * against the schema; the reports are freed. */
static cJSON *compare_reports(cJSON **b, cJSON **a, double regression_pct)
{
    compare_options o;
    compare_options_default(&o);
    o.regression_pct = regression_pct;
    compare_side sb = { (const cJSON *const *)b, RUNS, "before" };
    compare_side sa = { (const cJSON *const *)a, RUNS, "after" };
    prof_error err = { 0 };
    cJSON *cmp = compare_build_sides(&sb, &sa, &o, &err);
    cr_assert_not_null(cmp, "compare: %s", err.message);
    for (int i = 0; i < RUNS; i++) {
        cJSON_Delete(b[i]);
        cJSON_Delete(a[i]);
    }
    au_assert_valid(cmp, SCHEMA, "comparison");
    return cmp;
}

/* The comparison of RUNS runs a side: before the base loop (seeds 1..),
 * after its first `scaled` runs with `op` scaled by factor, the rest the
 * base loop again (seeds 11..). */
static cJSON *compare_runs_scaled(const char *op, double factor, int scaled,
                                  double regression_pct)
{
    analysis_options ao;
    analysis_options_default(&ao);
    ao.top = 0;
    cJSON *b[RUNS], *a[RUNS];
    for (int i = 0; i < RUNS; i++) {
        char nb[32], na[32];
        snprintf(nb, sizeof nb, "before%d.prof", i);
        snprintf(na, sizeof na, "after%d.prof", i);
        b[i] = au_report(write_base(nb, 1 + (uint64_t)i), &ao);
        a[i] = au_report(i < scaled ? write_scaled(na, 300, op, factor)
                                    : write_base(na, 11 + (uint64_t)i),
                         &ao);
    }
    return compare_reports(b, a, regression_pct);
}

/* RUNS runs a side; every after run with op `factor` times as long (NULL:
 * none). */
static cJSON *compare_runs(const char *op, double factor, double regression_pct)
{
    return compare_runs_scaled(op, factor, op ? RUNS : 0, regression_pct);
}

/* Each verdict says what its interval rules out against the 5% floor. */
static void assert_verdict_fits(const cJSON *test, const char *what)
{
    const char *v = au_str(test, "verdict");
    const cJSON *lo = au_get(test, "relative_low"), *hi = au_get(test, "relative_high");
    if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi)) {
        cr_assert_str_eq(v, "untested", "%s", what);
        return;
    }
    double l = lo->valuedouble, h = hi->valuedouble;
    if (cJSON_IsTrue(au_get(test, "significant")))
        cr_assert(strcmp(v, "slower") == 0 || strcmp(v, "faster") == 0, "%s: %s", what, v);
    else if (l >= -0.05 && h <= 0.05)
        cr_assert_str_eq(v, "no_change", "%s [%g, %g]", what, l, h);
    else
        cr_assert_str_eq(v, "inconclusive", "%s [%g, %g]", what, l, h);
    if (strcmp(v, "inconclusive") != 0)
        cr_assert(cJSON_IsNull(au_get(test, "runs_needed")), "%s", what);
}

static void assert_verdicts_fit(const cJSON *cmp)
{
    const cJSON *op;
    assert_verdict_fits(au_get(cmp, "step_time_test"), "step time");
    cJSON_ArrayForEach(op, au_get(cmp, "operations"))
        assert_verdict_fits(op, au_str(op, "name"));
}

/* "no change" only where the interval rules a change beyond the floor
 * out; a change it cannot tell is inconclusive, with the runs a side that
 * would likely settle it. */
Test(analysis_compare, verdicts_say_what_the_interval_rules_out)
{
    cJSON *cmp = compare_runs(NULL, 1.0, -1);
    assert_verdicts_fit(cmp);
    cr_assert_str_eq(au_str(au_get(cmp, "step_time_test"), "verdict"), "no_change");
    cJSON_Delete(cmp);
    cmp = compare_runs("forward", 1.3, -1);
    assert_verdicts_fit(cmp);
    cr_assert_str_eq(au_str(op_named(cmp, "forward"), "verdict"), "slower");
    cJSON_Delete(cmp);
    /* one after run of three with forward half again as long: a change of
     * about 17% whose interval the runs cannot narrow past the floor */
    cmp = compare_runs_scaled("forward", 1.5, 1, -1);
    assert_verdicts_fit(cmp);
    const cJSON *fw = op_named(cmp, "forward");
    cr_assert_str_eq(au_str(fw, "verdict"), "inconclusive");
    double need = au_num(fw, "runs_needed");
    cr_assert(need > RUNS && need <= 1000, "runs needed %g", need);
    cJSON_Delete(cmp);
}

Test(analysis_compare, repeated_runs_of_the_same_program_are_tested_between_runs_and_quiet)
{
    cJSON *cmp = compare_runs(NULL, 1.0, 10);
    cr_assert_str_eq(au_str(cmp, "method"), "between_runs");
    cr_assert_eq(au_num(au_get(cmp, "before"), "runs"), RUNS);
    cr_assert_eq(cJSON_GetArraySize(au_get(au_get(cmp, "after"), "run_paths")), RUNS);
    /* each run's steady step time, what the step-time test compares */
    const cJSON *m;
    cJSON_ArrayForEach(m, au_get(au_get(cmp, "before"), "run_step_means_ns"))
        cr_assert(cJSON_IsNumber(m) && m->valuedouble > 0);
    cr_assert_eq(cJSON_GetArraySize(au_get(au_get(cmp, "before"), "run_step_means_ns")), RUNS);
    const cJSON *test = au_get(cmp, "step_time_test");
    cr_assert_str_eq(au_str(test, "method"), "between_runs");
    cr_assert_eq(au_num(test, "runs_before"), RUNS);
    cr_assert_not(significant(test));
    cr_assert_eq(count_significant(cmp), 0);
    cr_assert_not(regressed(cmp));
    cr_assert_not_null(strstr(cJSON_GetArrayItem(au_get(cmp, "notes"), 0)->valuestring,
                              "between runs"));
    const cJSON *op;
    cJSON_ArrayForEach(op, au_get(cmp, "operations")) { /* each against its runs' speed */
        cr_assert_str_eq(au_str(op, "method"), "speed_adjusted", "%s", au_str(op, "name"));
        cr_assert_geq(au_num(op, "p_value"), 0.01, "%s", au_str(op, "name"));
    }
    const cJSON *tests = au_get(cmp, "operation_tests");
    cr_assert_eq(au_num(tests, "speed_adjusted"), au_num(tests, "tested"));
    cr_assert_eq(au_num(tests, "reference_operations"), cJSON_GetArraySize(au_get(cmp, "operations")));
    cr_assert_lt(fabs(au_num(tests, "speed_change")), 0.05);
    cr_assert_null(au_note(cmp, "moved alike"));
    cJSON_Delete(cmp);
}

Test(analysis_compare, repeated_runs_of_the_same_program_have_no_spread_note)
{
    cJSON *cmp = compare_runs(NULL, 1.0, 10);
    cr_assert_null(au_note(cmp, "vary widely"), "%s", au_note(cmp, "vary widely"));
    cJSON_Delete(cmp);
}

/* A machine of two speeds: one run of the after side 1.5 times as slow as
 * the rest (its backward twice as long). The note says which side spread,
 * by how much, and asks for more runs. */
Test(analysis_compare, a_side_whose_runs_spread_widely_is_noted)
{
    cJSON *cmp = compare_runs_scaled("backward", 2.0, 1, -1);
    const char *n = au_note(cmp, "vary widely");
    cr_assert_not_null(n);
    cr_assert_null(strstr(n, "before"), "%s", n);
    cr_assert_not_null(strstr(n, "after "), "%s", n);
    cr_assert_not_null(strstr(n, "1.5"), "%s", n);
    cr_assert_not_null(strstr(n, "Record 5 or more runs a side"), "%s", n);
    /* the per-run step times it is read from: one 1.5 times the others */
    const cJSON *m = au_get(au_get(cmp, "after"), "run_step_means_ns");
    double slow = cJSON_GetArrayItem(m, 0)->valuedouble;
    for (int i = 1; i < RUNS; i++)
        cr_assert_float_eq(slow / cJSON_GetArrayItem(m, i)->valuedouble, 1.54, 0.05);
    cJSON_Delete(cmp);
}

Test(analysis_compare, repeated_runs_with_a_slower_operation_fail_the_regression_check)
{
    cJSON *cmp = compare_runs("backward", 1.3, 10);
    const cJSON *op = op_named(cmp, "backward");
    cr_assert_str_eq(au_str(op, "status"), "slower");
    cr_assert_str_eq(au_str(op, "method"), "speed_adjusted");
    cr_assert_float_eq(au_num(op, "relative"), 0.3, 0.05);
    /* one operation of several changed: its change against the runs' speed is its own */
    double tested = au_num(op, "relative_to_run");
    cr_assert_float_eq(tested, 0.3, 0.05);
    cr_assert_lt(au_num(op, "relative_low"), tested);
    cr_assert_gt(au_num(op, "relative_high"), tested);
    cr_assert_gt(au_num(op, "alpha"), 0);
    cr_assert(regressed(cmp));
    const cJSON *why = NULL, *w;
    cJSON_ArrayForEach(w, au_get(au_get(cmp, "regression"), "reasons"))
        if (strcmp(au_str(w, "name"), "backward") == 0)
            why = w;
    cr_assert_not_null(why);
    cr_assert_str_eq(au_str(why, "method"), "speed_adjusted");
    cr_assert_float_eq(au_num(why, "relative"), tested, 1e-12);
    cJSON_Delete(cmp);
}

Test(analysis_compare, one_run_a_side_fails_only_when_the_whole_interval_is_past_the_threshold)
{
    const char *base = write_base("base.prof", 1);
    const char *slow = write_scaled("slow.prof", 300, "backward", 1.3);
    cJSON *cmp = compare_files(base, slow, 10, -1);
    const cJSON *st = au_get(cmp, "step_time_test");
    cr_assert_str_eq(au_str(st, "method"), "within_run");
    double rel = au_num(st, "relative"), low = au_num(st, "relative_low");
    cr_assert_gt(low, 0.10);
    cr_assert_lt(low, rel);
    cr_assert(regressed(cmp));
    cJSON_Delete(cmp);
    /* a threshold between the interval's low end and the change: slower
       than the threshold, significant, yet not surely past it */
    cmp = compare_files(base, slow, 100.0 * (low + rel) / 2.0, -1);
    cr_assert(significant(au_get(cmp, "step_time_test")));
    cr_assert_not(regressed(cmp));
    cJSON_Delete(cmp);
}

/* ---- many operations at once (rules.md §6.3) --------------------------------------- */

#define MANY 20

static const char *const many_names[MANY] = {
    "op00", "op01", "op02", "op03", "op04", "op05", "op06", "op07", "op08", "op09",
    "op10", "op11", "op12", "op13", "op14", "op15", "op16", "op17", "op18", "op19",
};

/* RUNS runs a side of MANY operations of 1 ms a call, each scale[i] times
 * as long after; in the runs of a side each operation is 1% apart (0.99,
 * 1.00, 1.01 times, in an order of its own, so that no speed common to the
 * run explains it), so a 10% change has p near 0.004 over three runs a
 * side, and a 50% change far less. speed[i]: run i's speed, every
 * operation alike. */
static cJSON *compare_many_at(const double *scale_after, const double *speed)
{
    analysis_options ao;
    analysis_options_default(&ao);
    ao.top = 0;
    cJSON *b[RUNS], *a[RUNS];
    for (int i = 0; i < RUNS; i++) {
        cf_op ob[MANY], oa[MANY];
        for (size_t k = 0; k < MANY; k++) {
            double run = 1.0 + 0.01 * (double)((i + (int)k) % RUNS - 1);
            ob[k] = (cf_op){ many_names[k], run * speed[i], 0.02 };
            oa[k] = (cf_op){ many_names[k], run * speed[RUNS + i] * scale_after[k], 0.02 };
        }
        cf_spec sb = { .steps = 300, .sample_every = 1, .seed = 21 + (uint64_t)i, .ops = ob,
                       .nops = MANY };
        cf_spec sa = { .steps = 300, .sample_every = 1, .seed = 31 + (uint64_t)i, .ops = oa,
                       .nops = MANY };
        char nb[32], na[32];
        snprintf(nb, sizeof nb, "many-before%d.prof", i);
        snprintf(na, sizeof na, "many-after%d.prof", i);
        b[i] = au_report(write_spec(nb, &sb), &ao);
        a[i] = au_report(write_spec(na, &sa), &ao);
    }
    return compare_reports(b, a, 10);
}

static cJSON *compare_many(const double *scale_after)
{
    double speed[2 * RUNS];
    for (int i = 0; i < 2 * RUNS; i++)
        speed[i] = 1.0;
    return compare_many_at(scale_after, speed);
}

static int count_tested(const cJSON *cmp)
{
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, au_get(cmp, "operations"))
        n += strcmp(au_str(op, "method"), "none") != 0;
    return n;
}

/* One operation 50% slower and one 10% slower whose p (about 0.004) would
 * pass alpha alone: held together with the other 18, only the first is
 * flagged, and the second's interval, at the stricter level, reaches into
 * the noise floor. */
Test(analysis_compare, of_many_operations_one_chance_looking_change_is_not_flagged)
{
    double scale[MANY];
    for (size_t k = 0; k < MANY; k++)
        scale[k] = 1.0;
    scale[3] = 1.5;
    scale[7] = 1.1;
    cJSON *cmp = compare_many(scale);
    const cJSON *tests = au_get(cmp, "operation_tests");
    int tested = count_tested(cmp);
    cr_assert_geq(tested, MANY);
    cr_assert_eq(au_num(tests, "tested"), tested);
    cr_assert_eq(au_num(tests, "flagged"), 1);
    cr_assert_float_eq(au_num(tests, "alpha_each"), 0.01 / tested, 1e-15);
    cr_assert_eq(count_significant(cmp), 1);
    const cJSON *big = op_named(cmp, "op03"), *small = op_named(cmp, "op07");
    cr_assert_str_eq(au_str(big, "status"), "slower");
    cr_assert_str_eq(au_str(small, "status"), "unchanged");
    cr_assert_lt(au_num(small, "p_value"), 0.01, "%g", au_num(small, "p_value"));
    cr_assert_gt(au_num(small, "p_value"), au_num(tests, "alpha_each"));
    cr_assert_lt(au_num(small, "relative_low"), 0.05);
    cr_assert_gt(au_num(big, "relative_low"), 0.05);
    cr_assert(regressed(cmp));
    cr_assert(has_reason(cmp, "op03"));
    cr_assert_not(has_reason(cmp, "op07"));
    cJSON_Delete(cmp);
}

/* Every operation 10% slower: what moved every operation of the after
 * runs alike is their speed, which the operations are tested against, so
 * none is flagged; the step time shows the change, and a note says what
 * it may be. */
Test(analysis_compare, every_operation_slower_alike_shows_in_the_step_time)
{
    double scale[MANY];
    for (size_t k = 0; k < MANY; k++)
        scale[k] = 1.1;
    cJSON *cmp = compare_many(scale);
    const cJSON *tests = au_get(cmp, "operation_tests");
    cr_assert_float_eq(au_num(tests, "speed_change"), 0.1, 0.01);
    cr_assert_eq(au_num(tests, "flagged"), 0);
    for (size_t k = 0; k < MANY; k++) {
        const cJSON *op = op_named(cmp, many_names[k]);
        cr_assert_float_eq(au_num(op, "relative"), 0.1, 0.02, "%s", many_names[k]);
        cr_assert_lt(fabs(au_num(op, "relative_to_run")), 0.02, "%s", many_names[k]);
    }
    cr_assert_str_eq(au_str(au_get(cmp, "step_time_test"), "verdict"), "slower");
    const char *n = au_note(cmp, "moved alike by +10.");
    cr_assert_not_null(n);
    cr_assert_not_null(strstr(n, "a change to the whole program, or a machine"), "%s", n);
    cJSON_Delete(cmp);
}

/* The after side's runs ran at 1.5 and 2 times the time, as on a busy
 * machine, and one operation of twenty 30% slower: the machine's speed
 * is taken out, so that operation is found at its size and the others
 * are not. Tested as they are, every operation would be 75% slower, with
 * a spread between runs that hides everything. */
Test(analysis_compare, a_slower_machine_neither_hides_nor_fakes_one_operations_change)
{
    double scale[MANY], speed[2 * RUNS] = { 1.0, 1.0, 1.0, 1.5, 2.0, 1.75 };
    for (size_t k = 0; k < MANY; k++)
        scale[k] = 1.0;
    scale[5] = 1.3;
    cJSON *cmp = compare_many_at(scale, speed);
    const cJSON *op = op_named(cmp, "op05");
    cr_assert_str_eq(au_str(op, "status"), "slower");
    cr_assert_float_eq(au_num(op, "relative_to_run"), 0.3, 0.02);
    cr_assert_gt(au_num(op, "relative"), 1.0);
    cr_assert_eq(au_num(au_get(cmp, "operation_tests"), "flagged"), 1);
    cr_assert(regressed(cmp));
    cr_assert(has_reason(cmp, "op05"));
    cr_assert_not_null(au_note(cmp, "moved alike by +7"));
    cJSON_Delete(cmp);
}
