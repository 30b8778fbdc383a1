/* format_prefetch.c - the reader's producing thread (reader_prefetch.c):
 * reading a file, where blocks are fetched and decoded on a second thread
 * ahead of the caller, gives exactly what reading the same bytes from
 * memory on one thread gives (events, status, errors), whatever the caller
 * does: read to the end, close halfway, set a window, meet damage. Built
 * also under ThreadSanitizer (TSAN_UNITS), which checks the hand-over. */
#include <pthread.h>

#include "criterion_tsan.h"
#include "format_util.h"
#include "synth.h"

#define THREADS 3
#define STEPS 400

/* A profile of many small blocks (so that the ring of batches fills and
 * the producer waits on the caller) from THREADS threads and the GPU,
 * closed cleanly or, with crashed, abandoned as a crashed run. */
static void write_profile(const char *path, int crashed)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 97);
    synth_workers(s, THREADS);
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t t0 = step * 10000;
        for (uint32_t t = 0; t < THREADS; t++) {
            for (uint32_t i = 0; i < 8; i++)
                synth_region(s, t, i % 2 ? "forward" : "backward", PROF_KIND_COMPUTE, 1,
                             t0 + 100 * i + t, 90);
            synth_region(s, t, "step_body", PROF_KIND_COMPUTE, 0, t0, 9000);
        }
        synth_gpu_kernel(s, "gemm", 0, 7, step, t0 + 50, 700);
        synth_memory(s, 0, "host.rss", t0 + 9500, 1000000 + 64 * step);
        if (step % 50 == 49)
            synth_dropped(s, 1, 3, t0 + 9600);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t0, 9900);
    }
    prof_error err;
    int rc = crashed ? synth_abandon(s, &err) : synth_close(s, &err);
    cr_assert_eq(rc, 0, "writing %s: %s", path, err.message);
}

/* How reading ended: the result, the status and the error. */
static void assert_same_end(const fu_list *a, const fu_list *b, const char *what)
{
    cr_assert_eq(a->rc, b->rc, "%s: reading ended with %d, not %d", what, a->rc, b->rc);
    cr_assert_eq(a->st.clean, b->st.clean, "%s: clean", what);
    cr_assert_eq(a->st.truncated, b->st.truncated, "%s: truncated", what);
    cr_assert_eq(a->st.blocks, b->st.blocks, "%s: blocks", what);
    cr_assert_eq(a->st.events, b->st.events, "%s: events", what);
    cr_assert_eq(a->st.bytes_read, b->st.bytes_read, "%s: bytes read", what);
    cr_assert_eq(a->st.bytes_lost, b->st.bytes_lost, "%s: bytes lost", what);
    cr_assert_eq(a->st.dropped_events, b->st.dropped_events, "%s: dropped", what);
    cr_assert_str_eq(a->st.detail, b->st.detail, "%s: detail", what);
    cr_assert_eq(a->err.code, b->err.code, "%s: error code", what);
    cr_assert_str_eq(a->err.message, b->err.message, "%s: error message", what);
}

/* Reads path as a file and its bytes from memory; both must agree. How
 * reading ended: 0 at the end of the blocks, 1 at damage to a crashed run
 * (bytes lost), -1 at an error. */
static int assert_file_reads_as_memory(const char *path, const char *what)
{
    size_t size;
    uint8_t *bytes = fu_load(path, &size);
    fu_list file, mem;
    prof_error err;
    cr_assert_eq(fu_read_path(path, &file, &err), PROF_OK, "%s: %s", what, err.message);
    cr_assert_eq(fu_read_mem(bytes, size, &mem, &err), PROF_OK, "%s: %s", what, err.message);
    fu_assert_same(&file, &mem, what);
    assert_same_end(&file, &mem, what);
    int end = file.rc < 0 ? -1 : file.st.truncated;
    fu_free(&file);
    fu_free(&mem);
    free(bytes);
    return end;
}

static void cleanup(void)
{
    fu_dir_remove();
}

TestSuite(format_prefetch, .fini = cleanup);

Test(format_prefetch, a_file_reads_as_its_bytes_from_memory)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    cr_assert_eq(assert_file_reads_as_memory(path, "clean"), 0);
    fu_list l;
    prof_error err;
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK);
    cr_assert(l.st.clean, "read as clean");
    cr_assert_gt(l.st.blocks, 100u, "%llu blocks: too few to fill the ring",
                 (unsigned long long)l.st.blocks);
    cr_assert_eq(l.st.dropped_events, (uint64_t)(STEPS / 50) * 3);
    fu_free(&l);
}

/* Damage is met by the producer first; the caller must see it exactly
 * where one thread would: after the same events, with the same words. */
Test(format_prefetch, damage_reaches_the_caller_in_file_order)
{
    const char *crashed = fu_path("crashed.prof"), *cut = fu_path("cut.prof"),
               *flipped = fu_path("flipped.prof");
    write_profile(crashed, 1);
    cr_assert_eq(assert_file_reads_as_memory(crashed, "crashed"), 0);

    size_t size;
    uint8_t *bytes = fu_load(crashed, &size);
    fu_store(cut, bytes, size * 2 / 3);
    cr_assert_eq(assert_file_reads_as_memory(cut, "cut"), 1);
    free(bytes);

    write_profile(flipped, 0);
    bytes = fu_load(flipped, &size);
    bytes[size / 2] ^= 0x10;
    fu_store(flipped, bytes, size);
    cr_assert_eq(assert_file_reads_as_memory(flipped, "flipped"), -1);
    free(bytes);
}

/* Closing while the producer is ahead (or has not started) stops and
 * joins it, wherever the caller is. */
Test(format_prefetch, closing_halfway_stops_the_producer)
{
    const char *path = fu_path("halfway.prof");
    write_profile(path, 0);
    for (size_t stop = 0; stop < 10000; stop = stop * 3 + 1) {
        prof_reader *r;
        prof_error err;
        prof_event ev;
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        size_t n = 0;
        while (n < stop && prof_reader_next(r, &ev) == 1)
            n++;
        cr_assert_eq(n, stop, "the profile ends before event %zu", stop);
        prof_reader_close(r);
    }
}

/* Reads path as a file, or else bytes from memory, through a window: the
 * events into l, and the blocks it skipped. */
static void read_window(const char *path, const uint8_t *bytes, size_t size, fu_list *l,
                        uint64_t *blocks, uint64_t *skipped)
{
    prof_reader *r;
    prof_error err;
    prof_event ev;
    int rc;
    if (path)
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    else
        cr_assert_eq(prof_reader_open_memory(bytes, size, &r, &err), PROF_OK, "%s", err.message);
    prof_reader_set_window(r, 1500000, 2500000);
    fu_begin(r, l);
    while ((rc = prof_reader_next(r, &ev)) == 1)
        fu_push(l, &ev, ev.name);
    prof_reader_skipped(r, blocks, skipped);
    fu_end(r, l, rc, prof_reader_next(r, &ev));
}

/* The window is handed to the producer when it starts: set before the
 * first read, it skips the same blocks as on one thread. */
Test(format_prefetch, a_window_skips_the_same_blocks)
{
    const char *path = fu_path("window.prof");
    write_profile(path, 0);
    size_t size;
    uint8_t *bytes = fu_load(path, &size);
    uint64_t fblocks, fbytes, mblocks, mbytes;
    fu_list file, mem;
    read_window(path, NULL, 0, &file, &fblocks, &fbytes);
    read_window(NULL, bytes, size, &mem, &mblocks, &mbytes);
    cr_assert_gt(fblocks, 0u, "the window skipped nothing");
    cr_assert_eq(fblocks, mblocks, "blocks skipped: %llu from the file, %llu from memory",
                 (unsigned long long)fblocks, (unsigned long long)mblocks);
    cr_assert_eq(fbytes, mbytes);
    fu_assert_same(&file, &mem, "window");
    assert_same_end(&file, &mem, "window");
    cr_assert(file.st.clean, "a window still reaches the footer");
    fu_free(&file);
    fu_free(&mem);
    free(bytes);
}

typedef struct reading {
    const char *path;
    fu_list got;
} reading;

static void *read_one(void *arg)
{
    reading *rd = arg;
    prof_reader *r;
    prof_error err;
    if (prof_reader_open(rd->path, &r, &err) != PROF_OK)
        return NULL;
    prof_event ev;
    fu_begin(r, &rd->got);
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1)
        fu_push(&rd->got, &ev, ev.name);
    rd->got.rc = rc;
    prof_reader_status(r, &rd->got.st);
    prof_reader_close(r);
    return rd;
}

/* Readers share nothing: several, each with its producer, on one file. */
Test(format_prefetch, readers_on_several_threads_share_nothing)
{
    const char *path = fu_path("shared.prof");
    write_profile(path, 0);
    size_t size;
    uint8_t *bytes = fu_load(path, &size);
    fu_list want;
    prof_error err;
    cr_assert_eq(fu_read_mem(bytes, size, &want, &err), PROF_OK);
    pthread_t th[4];
    reading rd[4];
    for (int i = 0; i < 4; i++) {
        rd[i].path = path;
        cr_assert_eq(pthread_create(&th[i], NULL, read_one, &rd[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *ok;
        cr_assert_eq(pthread_join(th[i], &ok), 0);
        cr_assert_not_null(ok, "reader %d could not open the file", i);
        fu_assert_same(&rd[i].got, &want, "a reader of several");
        cr_assert_eq(rd[i].got.rc, 0);
        cr_assert(rd[i].got.st.clean);
        fu_free(&rd[i].got);
    }
    fu_free(&want);
    free(bytes);
}

/* Blocks of a few MiB each: past what a slot of the ring keeps for the
 * next block (PF_SLOT_KEEP, 1 MiB), and few enough of them fill the bytes
 * the producer may hold ahead (PF_AHEAD_BYTES, 8 MiB) before the ring: the
 * producer waits on bytes, and frees and grows buffers as it goes. */
Test(format_prefetch, large_blocks_read_as_small_ones)
{
    const char *path = fu_path("large.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 300000);
    synth_thread(s, 0, 100, "main");
    for (uint64_t i = 0; i < 1500000; i++)
        synth_region(s, 0, i % 3 ? "forward" : "backward", PROF_KIND_COMPUTE, 0, i * 100, 90);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "writing: %s", err.message);
    cr_assert_eq(assert_file_reads_as_memory(path, "large blocks"), 0);
}
