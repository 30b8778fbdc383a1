/* model_threads.c - a model built while the reader's second thread fetches,
 * decompresses and decodes blocks ahead, numbers the regions' operations
 * and hands the regions over slim (src/model/opcalls.c) is the model built
 * on one thread
 * (a tuning of one thread, PROF_THREADS=1), field for field and bit for bit: on testdata/demo.prof,
 * on a large synthesized run of several threads with GPU activity, syncs,
 * samples and small blocks (so the ring of batches fills), on the same run
 * crashed and cut at many offsets, and on every file of the analyze fuzz
 * corpus (damaged files: the same error); with the loading thread
 * fetching blocks for the reader's; with the reader's thread from a pool;
 * and on runs whose sync records
 * arrive after their regions, which must then be found among the recent
 * regions however long the run of regions handed over slim before them
 * (a run notes only its last MB_RECENT as recent). Built also under ThreadSanitizer
 * (TSAN_UNITS), which checks the hand-over while the model consumes it.
 * Run from the repository root. */
#include "criterion_tsan.h"
#include "model_compare.h"

#define DEMO "testdata/demo.prof"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_threads, .fini = teardown);

/* Builds path on one thread and on two: the same outcome. */
static int assert_same_build(const char *path)
{
    return mc_assert_same_build(path, &mc_one_thread, NULL, 1);
}

/* Steps of one outermost region over `leaves` leaves of seven operations,
 * each leaf overlapping the next by half its length. Each step is followed
 * by sync records written late, after the step: for each `back` drawn
 * around MB_RECENT, one inside the leaf that arrived `back` leaves before
 * the last (every other one where it overlaps the leaf after it, so that
 * the order of the recent regions decides between the two). A leaf among
 * the recent regions takes the record; past them the record waits, and
 * is then outside every region. Last, one record outside every region.
 * Blocks hold 4096 records, so a run of slim regions is a whole step. */
static void write_late_syncs(const char *path, uint32_t leaves)
{
    static const uint32_t backs[] = { 0, 1, 7, 62, 63, 64, 65, 100, 300 };
    synth *s = synth_open(path, "{}");
    cr_assert_not_null(s);
    synth_block_records(s, 4096);
    uint64_t t0 = 1000000;
    for (uint64_t step = 0; step < 12; step++, t0 += 1000 * (uint64_t)leaves + 100000) {
        char name[16];
        for (uint32_t i = 0; i < leaves; i++) {
            snprintf(name, sizeof name, "op%u", (i + (uint32_t)step) % 7);
            synth_region(s, 0, name, PROF_KIND_COMPUTE, 1, t0 + 1000 * i, 1500);
        }
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, t0, 1000 * (uint64_t)leaves);
        for (size_t k = 0; k < sizeof backs / sizeof backs[0]; k++)
            if (backs[k] < leaves) {
                uint64_t leaf = leaves - 1 - backs[k];
                synth_sync(s, 0, 1, 0, 7, step, t0 + 1000 * leaf + 100 + 1000 * (k % 2),
                           50 + k);
            }
        synth_sync(s, 0, 1, 0, 7, step, t0 + 1000 * (uint64_t)leaves + 500, 40);
        synth_step(s, 0, step, 0, t0, 1000 * (uint64_t)leaves);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "writing %s: %s", path, err.message);
}

/* ---- tests ------------------------------------------------------------------------- */

Test(model_threads, demo)
{
    cr_assert(assert_same_build(DEMO), DEMO " did not load");
}

Test(model_threads, large_run)
{
    const char *path = fu_path("run.prof");
    mc_write_run(path, 0);
    cr_assert(assert_same_build(path));
}

/* The loading thread fetching blocks for the reader's thread before it
 * takes each one (format.h, TUNING_HELP_ALWAYS): the same model. */
Test(model_threads, the_caller_fetching_for_the_reader_changes_nothing)
{
    const char *path = fu_path("run.prof");
    mc_write_run(path, 0);
    cr_assert(mc_assert_same_build(path, &mc_one_thread, &mc_help_always, 1));
    mc_assert_same_cuts(&mc_one_thread, &mc_help_always, 1);
}

Test(model_threads, crashed_run)
{
    const char *path = fu_path("crashed.prof");
    mc_write_run(path, 1);
    cr_assert(assert_same_build(path));
}

Test(model_threads, late_sync_records_find_their_recent_region)
{
    static const uint32_t leaves[] = { 1, 5, 40, 62, 63, 64, 65, 200, 1000 };
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "late%u.prof", leaves[i]);
        const char *path = fu_path(name);
        write_late_syncs(path, leaves[i]);
        cr_assert(assert_same_build(path), "%s did not load", path);
    }
}

Test(model_threads, cut_files)
{
    mc_assert_same_cuts(&mc_one_thread, NULL, 1);
}

/* The reader's thread taken from a pool (util/pool.h), reused from file
 * to file: the same models. */
Test(model_threads, pooled_threads)
{
    const char *path = fu_path("run.prof");
    mc_write_run(path, 0);
    cr_assert(mc_assert_same_build(path, &mc_one_thread, mc_pooled(), 1));
    cr_assert(mc_assert_same_build(DEMO, &mc_one_thread, mc_pooled(), 1));
    mc_assert_same_cuts(&mc_one_thread, mc_pooled(), 1);
}

Test(model_threads, fuzz_corpus)
{
    mc_assert_same_corpus(&mc_one_thread, NULL, 1);
}
