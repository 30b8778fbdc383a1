/* analysis_report.c - the report as a whole: the report of
 * testdata/demo.prof matches formats/report.schema.json and says what the
 * demo was made to show (the gpu.allocated leak, flat host memory, data
 * loading on the training thread, 300 steps); several files must be ranks of
 * one job, and a slow rank is a straggler. Run from the repository root. */
#include "analysis_util.h"
#include "schema_check.h"

#define DEMO "testdata/demo.prof"
#define SCHEMA "formats/report.schema.json"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_report, .fini = teardown);

Test(analysis_report, demo_report_matches_its_schema)
{
    cJSON *r = au_report(DEMO, NULL);
    au_assert_valid(r, SCHEMA, "report");
    cr_assert_str_eq(au_str(r, "schema"), "prof-report");
    cr_assert_eq(au_num(r, "version"), 1);
    const cJSON *p = cJSON_GetArrayItem(au_get(r, "profiles"), 0);
    cr_assert_str_eq(au_str(p, "path"), DEMO);
    cr_assert_str_eq(au_str(p, "format_version"), "1.0");
    cr_assert(cJSON_IsTrue(au_get(p, "clean")));
    cr_assert_str_eq(au_str(au_get(p, "metadata"), "host"), "demo-host");
    cJSON_Delete(r);
}

Test(analysis_report, schema_check_rejects_a_broken_report)
{
    cJSON *r = au_report(DEMO, NULL);
    cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "summary");
    cJSON_DeleteItemFromObjectCaseSensitive(s, "profiled_ns");
    cJSON *schema = schema_load(SCHEMA);
    char why[600];
    cr_assert_not(schema_check(schema, schema, r, why, sizeof why));
    cr_assert(strstr(why, "profiled_ns") != NULL, "%s", why);
    cJSON_Delete(schema);
    cJSON_Delete(r);
}

Test(analysis_report, demo_report_says_what_the_demo_shows)
{
    cJSON *r = au_report(DEMO, NULL);
    const cJSON *sum = au_get(r, "summary");
    cr_assert_eq(au_num(sum, "steps"), 300);
    cr_assert_eq(au_num(sum, "sampled_steps"), 300);
    cr_assert_eq(au_num(sum, "threads"), 2);
    cr_assert(cJSON_IsFalse(au_get(sum, "has_gpu")));
    const cJSON *st = au_get(sum, "step_time");
    cr_assert(au_num(st, "p50_ns") > 80e6 && au_num(st, "p50_ns") < 120e6, "about 100 ms");
    cr_assert_eq(cJSON_GetArraySize(au_get(r, "steps")), 300);

    const cJSON *leak = au_finding(r, "memory_leak", "gpu.allocated");
    cr_assert_not_null(leak, "the demo leaks 12 MiB/step");
    au_near(au_num(au_get(leak, "evidence"), "slope_bytes_per_step"), 12.0 * FX_MB, 0.05,
            "demo slope");
    cr_assert_eq(au_num(au_get(leak, "evidence"), "capacity_bytes"), 17179869184.0);
    cr_assert_str_eq(au_str(leak, "severity"), "high");
    cr_assert_null(au_finding(r, "memory_leak", "host.rss"), "flat host memory");
    cr_assert_not_null(au_finding(r, "hot_operation", "backward"));
    cr_assert_null(au_finding(r, "hot_operation", "forward"), "forward wraps its layers");
    const cJSON *data = au_finding(r, "data_loading", NULL);
    cr_assert_not_null(data, "the training thread waits on data");
    cr_assert_str_eq(au_str(au_get(data, "evidence"), "thread_name"), "train");
    cr_assert_null(au_finding(r, "cpu_gpu_sync", NULL), "a sync every tenth step is cheap");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(r, "ranks"), "one file: no ranks");

    const cJSON *loss = au_named(au_get(r, "counters"), "name", "loss");
    cr_assert_not_null(loss);
    cr_assert_eq(cJSON_GetArraySize(au_get(loss, "points")), 300);
    const cJSON *tree = au_get(r, "call_tree");
    cr_assert_str_eq(au_str(tree, "name"), "<root>");
    const cJSON *train = au_named(au_get(tree, "children"), "name", "train");
    cr_assert_not_null(train, "a root per thread, named by the thread");
    cr_assert_not_null(au_named(au_get(train, "children"), "name", "forward"));
    cr_assert(au_note(r, "no GPU"));
    cJSON_Delete(r);
}

/* A rank of a job: 60 steps of 130 ms, work_ms of compute then allreduce. */
static const char *write_rank(const char *name, int rank, double work_ms)
{
    char meta[600];
    const char *path = fx_path(name);
    synth *s = synth_open(path, fx_metadata(meta, sizeof meta, rank, 2, 0, 0));
    uint64_t t = FX_MS, work = (uint64_t)(work_ms * (double)FX_MS);
    for (uint64_t i = 0; i < 60; i++) {
        synth_region(s, 0, "compute", PROF_KIND_COMPUTE, 0, t, work);
        synth_region(s, 0, "allreduce", PROF_KIND_COMM, 0, t + work, 130 * FX_MS - work);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 130 * FX_MS);
        t += 130 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static cJSON *ranks_report(const char *a, const char *b, prof_error *err)
{
    profile_model m[2];
    au_load(a, &m[0]);
    au_load(b, &m[1]);
    const profile_model *both[2] = { &m[0], &m[1] };
    cJSON *r = report_build(both, 2, NULL, err);
    profile_model_free(&m[0]);
    profile_model_free(&m[1]);
    return r;
}

static const cJSON *longest_step(const cJSON *steps, double *shortest)
{
    const cJSON *st, *best = NULL;
    *shortest = INFINITY;
    cJSON_ArrayForEach(st, steps) {
        double d = au_num(st, "dur_ns");
        if (!best || d > au_num(best, "dur_ns"))
            best = st;
        *shortest = fmin(*shortest, d);
    }
    return best;
}

Test(analysis_report, long_series_are_decimated_to_the_point_limit)
{
    analysis_options o;
    analysis_options_default(&o);
    cr_assert_eq(o.max_points, REPORT_POINTS);
    cJSON *all = au_report(DEMO, NULL);
    o.max_points = 40;
    cJSON *few = au_report(DEMO, &o);
    au_assert_valid(few, SCHEMA, "report");

    const cJSON *sa = au_get(all, "steps"), *sf = au_get(few, "steps");
    cr_assert_eq(cJSON_GetArraySize(sa), 300);
    cr_assert(cJSON_GetArraySize(sf) > 20 && cJSON_GetArraySize(sf) <= 40);
    cr_assert_eq(au_num(au_get(few, "summary"), "steps"), 300, "the count stays whole");
    double short_all, short_few;
    const cJSON *la = longest_step(sa, &short_all), *lf = longest_step(sf, &short_few);
    cr_assert_eq(au_num(lf, "number"), au_num(la, "number"), "the longest step survives");
    cr_assert_eq(short_few, short_all, "so does the shortest");
    double last = -1;
    const cJSON *st;
    cJSON_ArrayForEach(st, sf) {
        cr_assert(au_num(st, "number") > last, "steps stay in order");
        last = au_num(st, "number");
    }
    cr_assert_eq(au_num(cJSON_GetArrayItem(sf, 0), "number"),
                 au_num(cJSON_GetArrayItem(sa, 0), "number"), "the first step is kept");
    cr_assert_eq(last, au_num(cJSON_GetArrayItem(sa, 299), "number"), "so is the last");

    const cJSON *ma = cJSON_GetArrayItem(au_get(all, "memory"), 0);
    const cJSON *mf = cJSON_GetArrayItem(au_get(few, "memory"), 0);
    cr_assert_eq(au_num(ma, "points_total"), 301, "every sample: one per step and the first");
    cr_assert_eq(au_num(mf, "points_total"), 301);
    cr_assert_eq(cJSON_GetArraySize(au_get(ma, "points")), 301);
    cr_assert(cJSON_GetArraySize(au_get(mf, "points")) <= 40);
    cr_assert_eq(au_num(mf, "peak_bytes"), au_num(ma, "peak_bytes"));
    const cJSON *pf = au_get(mf, "points");
    cr_assert_eq(au_num(cJSON_GetArrayItem(pf, cJSON_GetArraySize(pf) - 1), "bytes"),
                 au_num(mf, "final_bytes"), "the series ends at its final value");
    cr_assert_eq(au_num(au_get(mf, "fit"), "slope_bytes_per_step"),
                 au_num(au_get(ma, "fit"), "slope_bytes_per_step"), "the fit uses every point");
    cr_assert_eq(au_num(au_get(mf, "fit"), "points"), au_num(au_get(ma, "fit"), "points"));
    cr_assert_eq(cJSON_GetArraySize(au_get(few, "bottlenecks")),
                 cJSON_GetArraySize(au_get(all, "bottlenecks")), "same findings");
    cJSON_Delete(all);
    cJSON_Delete(few);

    o.max_points = 0; /* no limit */
    cJSON *whole = au_report(DEMO, &o);
    cr_assert_eq(cJSON_GetArraySize(au_get(whole, "steps")), 300);
    cJSON_Delete(whole);
}

Test(analysis_report, straggler_among_two_ranks)
{
    prof_error err = { 0 };
    cJSON *r = ranks_report(write_rank("r0.prof", 0, 100), write_rank("r1.prof", 1, 128), &err);
    cr_assert_not_null(r, "%s", err.message);
    au_assert_valid(r, SCHEMA, "report");
    const cJSON *ranks = au_get(r, "ranks");
    cr_assert_eq(cJSON_GetArraySize(ranks), 2);
    const cJSON *r1 = cJSON_GetArrayItem(ranks, 1);
    cr_assert_eq(au_num(r1, "rank"), 1);
    au_near(au_num(r1, "mean_step_ns"), 130e6, 1e-9, "mean step");
    au_near(au_num(r1, "work_ns_per_step"), 128e6, 1e-6, "work per step");
    /* rank 1 enters every allreduce 28 ms after rank 0 (rules.md §4.9) */
    const cJSON *f = au_finding(r, "straggler", "rank 1");
    cr_assert_not_null(f);
    const cJSON *ev = au_get(f, "evidence");
    cr_assert_str_eq(au_str(ev, "method"), "collectives");
    cr_assert_str_eq(au_str(ev, "source"), "regions");
    cr_assert_str_eq(au_str(ev, "alignment"), "start", "one host");
    cr_assert_eq(au_num(ev, "last_arrivals"), 60);
    au_near(au_num(ev, "caused_wait_share"), 28.0 / 130.0, 1e-6, "others' wait per step time");
    cr_assert_str_eq(au_str(f, "severity"), "medium");
    cr_assert_eq(au_num(r1, "last_arrivals"), 60);
    au_near(au_num(cJSON_GetArrayItem(ranks, 0), "wait_ns"), 60 * 28e6, 1e-9, "rank 0 waits");
    cr_assert_null(au_finding(r, "straggler", "rank 0"));
    cJSON_Delete(r);

    r = ranks_report(fx_path("r0.prof"), write_rank("r1b.prof", 1, 103), &err);
    cr_assert_not_null(r);
    cr_assert_null(au_finding(r, "straggler", NULL), "3%% apart is not a straggler");
    cJSON_Delete(r);
}

Test(analysis_report, files_that_are_not_ranks_of_one_job_are_refused)
{
    prof_error err = { 0 };
    cJSON *r = ranks_report(write_rank("a.prof", 0, 100), write_rank("b.prof", 0, 100), &err);
    cr_assert_null(r);
    cr_assert_eq(err.code, PROF_ERR_INVALID);
    cr_assert(strstr(err.message, "not ranks of one job") != NULL, "%s", err.message);
    cr_assert(strstr(err.message, "both rank 0") != NULL, "%s", err.message);
}

Test(analysis_report, profile_without_steps_and_small_nodes_folded)
{
    const char *path = fx_path("nosteps.prof");
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "main");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        synth_region(s, 0, "big", PROF_KIND_COMPUTE, 1, t, 99950000);
        synth_region(s, 0, "tiny", PROF_KIND_COMPUTE, 1, t + 99950000, 50000);
        synth_region(s, 0, "work", PROF_KIND_COMPUTE, 0, t, 100 * FX_MS);
        synth_memory(s, 0, "host.rss", t, (uint64_t)(1000 + i) * 1048576);
        t += 100 * FX_MS;
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    au_assert_valid(r, SCHEMA, "report");
    cr_assert_eq(au_num(au_get(r, "summary"), "steps"), 0);
    const cJSON *mem = cJSON_GetArrayItem(au_get(r, "memory"), 0);
    cr_assert_eq(cJSON_GetArraySize(au_get(mem, "points")), 20, "every sample");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(au_get(mem, "points"), 0),
                                                    "step"));
    const cJSON *fit = au_get(mem, "fit");
    cr_assert_str_eq(au_str(fit, "axis"), "time", "no steps: fitted over time");
    au_near(au_num(fit, "slope_bytes_per_s"), 10.0 * FX_MB, 0.01, "1 MiB every 100 ms");
    cr_assert(cJSON_IsNull(au_get(fit, "slope_bytes_per_step")));
    cr_assert(cJSON_IsNull(au_get(fit, "onset_step")));
    cr_assert(au_note(r, "no steps"));

    const cJSON *main_t = cJSON_GetArrayItem(au_get(au_get(r, "call_tree"), "children"), 0);
    cr_assert_str_eq(au_str(main_t, "name"), "main");
    const cJSON *work = cJSON_GetArrayItem(au_get(main_t, "children"), 0);
    cr_assert_str_eq(au_str(work, "name"), "work");
    const cJSON *kids = au_get(work, "children");
    cr_assert_eq(cJSON_GetArraySize(kids), 2);
    cr_assert_str_eq(au_str(cJSON_GetArrayItem(kids, 0), "name"), "big");
    const cJSON *other = cJSON_GetArrayItem(kids, 1);
    cr_assert_str_eq(au_str(other, "name"), "(other)", "0.05%% of the time is folded");
    cr_assert_eq(au_num(other, "incl_ns"), 20 * 50000);
    cr_assert_eq(au_num(other, "calls"), 20);
    cJSON_Delete(r);
}
