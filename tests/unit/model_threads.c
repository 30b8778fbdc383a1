/* model_threads.c - a model built while the reader's second thread fetches,
 * decompresses and decodes blocks ahead, numbers the regions' operations
 * and hands the regions over slim (src/model/opcalls.c) is the model built
 * on one thread
 * (PROF_THREADS=1), field for field and bit for bit: on testdata/demo.prof,
 * on a large synthesized run of several threads with GPU activity, syncs,
 * samples and small blocks (so the ring of batches fills), on the same run
 * crashed and cut at many offsets, and on every file of the analyze fuzz
 * corpus (damaged files: the same error). Built also under ThreadSanitizer
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
    return mc_assert_same_build(path, "PROF_THREADS", "1", 1);
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

Test(model_threads, crashed_run)
{
    const char *path = fu_path("crashed.prof");
    mc_write_run(path, 1);
    cr_assert(assert_same_build(path));
}

Test(model_threads, cut_files)
{
    mc_assert_same_cuts("PROF_THREADS", "1", 1);
}

Test(model_threads, fuzz_corpus)
{
    mc_assert_same_corpus("PROF_THREADS", "1", 1);
}
