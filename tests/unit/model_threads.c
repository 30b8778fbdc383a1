/* model_threads.c - a model built while the reader's second thread fetches,
 * decompresses and decodes blocks ahead and folds the operations' call
 * statistics (src/model/opcalls.c) is the model built on one thread
 * (PROF_THREADS=1), field for field and bit for bit: on testdata/demo.prof,
 * on a large synthesized run of several threads with GPU activity, syncs,
 * samples and small blocks (so the ring of batches fills), on the same run
 * crashed and cut at many offsets, and on every file of the analyze fuzz
 * corpus (damaged files: the same error). Built also under ThreadSanitizer
 * (TSAN_UNITS), which checks the hand-over while the model consumes it.
 * Run from the repository root. */
#include <dirent.h>

#include "criterion_tsan.h"
#include "model_compare.h"

#define DEMO "testdata/demo.prof"
#define CORPUS "tests/fuzz/corpus-analyze"
#define CUTS 23

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

/* Cut at offsets spread over the file, the footer's included: a crashed
 * run read up to its last intact block, or an error for a file that
 * promised a footer. */
Test(model_threads, cut_files)
{
    const char *path = fu_path("whole.prof"), *cut = fu_path("cut.prof");
    mc_write_run(path, 0);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    for (int i = 1; i <= CUTS; i++) {
        size_t len = size / CUTS * (size_t)i - (size_t)i * 13;
        fu_store(cut, data, len);
        assert_same_build(cut);
    }
    free(data);
}

Test(model_threads, fuzz_corpus)
{
    DIR *d = opendir(CORPUS);
    cr_assert_not_null(d, "run from the repository root");
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CORPUS, e->d_name);
        assert_same_build(path);
        files++;
    }
    closedir(d);
    cr_assert_gt(files, 0, "no files in " CORPUS);
}
