/* model_runset.c - the runs of a side of `prof compare` (formats/rules.md
 * §6.1) over real files: a profile is one run; a directory's profiles are
 * runs, the ranks of one job form one run (rank 0 first), profiles of
 * another world size or started far apart do not, files that are not
 * profiles and hidden files are skipped, and a directory with no profile
 * is an error. Also the time batches operations are folded into. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fixtures.h"
#include "model/runset.h"
#include "model/timebatch.h"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(model_runset, .fini = teardown);

/* A small profile at dir/name with rank, world size and start time. */
static void write_member(const char *dir, const char *name, int rank, int world, double start_s)
{
    char path[512], meta[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int n = snprintf(meta, sizeof meta,
                     "{\"format\":\"prof\",\"argv\":[\"train\"],\"rank\":%d,\"world_size\":%d,"
                     "\"start_epoch_ns\":\"%.0f\"}",
                     rank, world, start_s * 1e9 + 1.7e18);
    cr_assert(n > 0 && (size_t)n < sizeof meta);
    cr_assert_eq(fx_write_loop(path, meta, 3, NULL, NULL, NULL), 0, "writing %s", path);
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *make_dir(const char *name)
{
    const char *dir = fx_path(name);
    cr_assert_eq(mkdir(dir, 0700), 0);
    return dir;
}

Test(model_runset, a_file_is_one_run_left_for_the_caller_to_open)
{
    runset rs;
    prof_error err = { 0 };
    cr_assert_eq(runset_find(fx_path("missing.prof"), NULL, &rs, &err), PROF_OK);
    cr_assert_eq(rs.nruns, 1);
    cr_assert_eq(rs.runs[0].npaths, 1);
    cr_assert_not(rs.is_dir);
    runset_free(&rs);
}

Test(model_runset, ranks_of_one_job_form_one_run_rank_0_first)
{
    const char *dir = make_dir("runs");
    write_member(dir, "a-rank1.prof", 1, 2, 0.0);
    write_member(dir, "b-rank0.prof", 0, 2, 1.5);
    write_member(dir, "c-rank0.prof", 0, 2, 600.0);   /* a later repetition of the job */
    write_member(dir, "d-rank1.prof", 1, 2, 601.0);
    write_member(dir, "e-single.prof", 0, 1, 5.0);
    write_member(dir, "f-world4.prof", 2, 4, 1.0);     /* another job's rank */
    FILE *f = fopen(fx_path("runs/notes.txt"), "w");
    cr_assert_not_null(f);
    fputs("not a profile\n", f);
    fclose(f);
    write_member(dir, ".hidden.prof", 0, 1, 0.0);
    runset rs;
    prof_error err = { 0 };
    cr_assert_eq(runset_find(dir, NULL, &rs, &err), PROF_OK, "%s", err.message);
    cr_assert(rs.is_dir);
    cr_assert_eq(rs.skipped, 1);
    cr_assert_eq(rs.nruns, 4);
    cr_assert_eq(rs.runs[0].npaths, 2);
    cr_assert_str_eq(base(rs.runs[0].paths[0]), "b-rank0.prof");
    cr_assert_str_eq(base(rs.runs[0].paths[1]), "a-rank1.prof");
    cr_assert_eq(rs.runs[1].npaths, 2);
    cr_assert_str_eq(base(rs.runs[1].paths[0]), "c-rank0.prof");
    cr_assert_str_eq(base(rs.runs[1].paths[1]), "d-rank1.prof");
    cr_assert_eq(rs.runs[2].npaths, 1);
    cr_assert_str_eq(base(rs.runs[2].paths[0]), "e-single.prof");
    cr_assert_eq(rs.runs[3].npaths, 1);
    cr_assert_str_eq(base(rs.runs[3].paths[0]), "f-world4.prof");
    runset_free(&rs);
}

Test(model_runset, a_rank_twice_starts_another_run)
{
    const char *dir = make_dir("twice");
    write_member(dir, "a.prof", 0, 2, 0.0);
    write_member(dir, "b.prof", 0, 2, 1.0);
    runset rs;
    prof_error err = { 0 };
    cr_assert_eq(runset_find(dir, NULL, &rs, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(rs.nruns, 2);
    runset_free(&rs);
}

Test(model_runset, a_directory_without_profiles_is_an_error)
{
    const char *dir = make_dir("empty");
    runset rs;
    prof_error err = { 0 };
    cr_assert_eq(runset_find(dir, NULL, &rs, &err), PROF_ERR_EMPTY);
    cr_assert_not_null(strstr(err.message, "no profiles in directory"), "%s", err.message);
    cr_assert_eq(rs.nruns, 0);
}

Test(model_runset, a_damaged_profile_in_a_directory_is_an_error)
{
    const char *dir = make_dir("damaged");
    write_member(dir, "a.prof", 0, 1, 0.0);
    FILE *f = fopen(fx_path("damaged/b.prof"), "w");
    cr_assert_not_null(f);
    fwrite("\x89PROF\r\n\x1a\x01", 1, 9, f); /* the magic, then nothing */
    fclose(f);
    runset rs;
    prof_error err = { 0 };
    cr_assert_neq(runset_find(dir, NULL, &rs, &err), PROF_OK);
    cr_assert_not_null(strstr(err.message, "b.prof"), "%s", err.message);
}

Test(model_runset, time_batches_fold_and_keep_every_call)
{
    time_batches b;
    memset(&b, 0, sizeof b);
    uint64_t w = (uint64_t)1 << TIMEBATCH_FIRST_SHIFT, calls = 0;
    for (uint64_t i = 0; i < 1000; i++) { /* one call a batch width for 1000 widths */
        time_batches_add(&b, 5000 + i * w, 10);
        calls++;
    }
    time_batches_add(&b, 0, 10); /* before the first call: batch 0 */
    calls++;
    uint64_t sum = 0, ns = 0;
    for (uint32_t i = 0; i < TIMEBATCH_MAX; i++) {
        sum += b.at[i].calls;
        ns += b.at[i].ns;
    }
    cr_assert_eq(sum, calls);
    cr_assert_eq(ns, 10 * calls);
    cr_assert_eq(time_batches_width(&b), w << 5, "1000 widths fit 32 batches of 32 widths");
    uint32_t used = time_batches_used(&b);
    cr_assert_geq(used, TIMEBATCH_MAX / 2);
    cr_assert_leq(used, TIMEBATCH_MAX);
    cr_assert_eq(b.at[0].calls, 33);
    cr_assert_eq(b.at[used - 1].calls, 1000 - 32 * (used - 1));
}

Test(model_runset, ranks_out_of_range_are_runs_of_their_own)
{
    const char *dir = make_dir("odd");
    char meta[] = "{\"format\":\"prof\",\"rank\":1e300,\"world_size\":-1e300}";
    cr_assert_eq(fx_write_loop(fx_path("odd/a.prof"), meta, 3, NULL, NULL, NULL), 0);
    cr_assert_eq(fx_write_loop(fx_path("odd/b.prof"), meta, 3, NULL, NULL, NULL), 0);
    runset rs;
    prof_error err = { 0 };
    cr_assert_eq(runset_find(dir, NULL, &rs, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(rs.nruns, 2);
    runset_free(&rs);
}
