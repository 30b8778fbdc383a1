/* format_window.c - the reader restricted to a time window
 * (prof_reader_set_window) on a many-block profile written by synth: every
 * event that overlaps the window is delivered, as the full reader delivers
 * it and in the same order; definitions are always read; blocks outside the
 * window are skipped, which prof_reader_skipped() counts and which a damaged
 * payload outside the window shows (the full reader fails on it, the
 * windowed one never reads it); the footer still checks out, from a file
 * and from memory; a cut file ends as it does without a window; a window
 * set once reading has begun changes nothing. */
#include "format/format.h"
#include "format_util.h"
#include "synth.h"

#define US 1000ull
#define MS (1000 * US)
#define STEPS 120
#define STEP_NS (10 * MS)
#define RUN_END (STEPS * STEP_NS)

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_window, .fini = teardown);

/* 120 steps of 10 ms in blocks of 16 records: on thread 0 a forward of
 * layers (children recorded before their parent, as the recorder does),
 * a backward, the step, memory and a counter; on thread 1 a loader, renamed
 * halfway; GPU kernels; marks and dropped counts now and then; names first
 * used mid-file; and an "epoch" region over the whole run, recorded last,
 * so its block starts at 0 and ends at the end. */
static void make_fixture(const char *path, int clean)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s, "synth_open %s", path);
    synth_block_records(s, 16);
    synth_thread(s, 0, 100, "train");
    synth_thread(s, 1, 101, "loader");
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t t0 = i * STEP_NS, t = t0;
        char name[32];
        for (uint64_t l = 0; l < 4; l++) {
            snprintf(name, sizeof name, "layer.%llu", (unsigned long long)((i / 10 + l) % 16));
            synth_region(s, 0, name, PROF_KIND_COMPUTE, 1, t, MS - 10 * US);
            t += MS;
        }
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t0, t - t0);
        synth_region(s, 0, "backward", PROF_KIND_COMPUTE, 0, t, 5 * MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t0, STEP_NS);
        synth_memory(s, 0, "host.rss", t0 + STEP_NS, 1000000 + i);
        synth_counter(s, 0, "loss", t0 + STEP_NS, 1.0 / (double)(i + 1));
        synth_region(s, 1, "next_batch", PROF_KIND_DATA, 0, t0 + MS, 3 * MS);
        snprintf(name, sizeof name, "kernel.%llu", (unsigned long long)(i % 5));
        synth_gpu_kernel(s, name, 0, (uint32_t)(i % 2), i, t0 + 2 * MS, 5 * MS);
        if (i % 10 == 3)
            synth_mark(s, 0, "checkpoint", t0 + 7 * MS);
        if (i % 50 == 49)
            synth_dropped(s, 0, 3, t0 + 9 * MS);
        if (i == STEPS / 2)
            synth_thread(s, 1, 101, "loader.renamed");
    }
    synth_region(s, 1, "epoch", PROF_KIND_COMPUTE, 0, 0, RUN_END);
    prof_error err;
    int rc = clean ? synth_close(s, &err) : synth_abandon(s, &err);
    cr_assert_eq(rc, 0, "synth: %s", err.message);
}

/* What one read gave: the events, the end, and what the window skipped. */
typedef struct wread {
    fu_list l;
    uint64_t skipped, skipped_bytes;
    char names[2][32];
} wread;

/* Reads path (or the bytes mem[0..size) when mem is set), restricted to
 * [from, to] when windowed. */
static void read_all(const char *path, const void *mem, size_t size, int windowed,
                     uint64_t from, uint64_t to, wread *w)
{
    prof_reader *r = NULL;
    prof_error err = { 0 };
    prof_event ev;
    int rc;
    memset(w, 0, sizeof *w);
    if (mem)
        cr_assert_eq(prof_reader_open_memory(mem, size, &r, &err), PROF_OK, "%s", err.message);
    else
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    if (windowed)
        prof_reader_set_window(r, from, to);
    while ((rc = prof_reader_next(r, &ev)) == 1)
        fu_push(&w->l, &ev, ev.name);
    w->l.rc = rc;
    w->l.err = *prof_reader_error(r);
    prof_reader_status(r, &w->l.st);
    prof_reader_skipped(r, &w->skipped, &w->skipped_bytes);
    for (uint32_t t = 0; t < 2; t++) {
        const char *n = prof_reader_thread_name(r, t);
        snprintf(w->names[t], sizeof w->names[t], "%s", n ? n : "(none)");
    }
    prof_reader_close(r);
}

static int overlaps(const prof_event *e, uint64_t from, uint64_t to)
{
    uint64_t end = e->start_ns + e->dur_ns < e->start_ns ? UINT64_MAX : e->start_ns + e->dur_ns;
    return e->type != PROF_EV_THREAD && e->start_ns <= to && end >= from;
}

/* The events of in that overlap [from, to] (threads: the definitions), in order. */
static void pick(const fu_list *in, int threads, uint64_t from, uint64_t to, fu_list *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < in->n; i++) {
        const prof_event *e = &in->v[i].ev;
        if (threads ? e->type == PROF_EV_THREAD : overlaps(e, from, to))
            fu_push(out, e, in->v[i].name);
    }
}

static uint64_t count_events(const fu_list *l)
{
    uint64_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].ev.type != PROF_EV_THREAD;
    return n;
}

/* The number of events blocks in a file, from its block headers. */
static uint64_t events_blocks(const uint8_t *data, size_t size)
{
    uint64_t n = 0, off = pf_load_u32(data + 12);
    while (off + PF_BLOCK_HEADER_LEN <= size && pf_load_u32(data + off) == PF_BLOCK_MAGIC) {
        n += data[off + 4] == PF_BLOCK_EVENTS;
        off += PF_BLOCK_HEADER_LEN + pf_load_u32(data + off + 32);
    }
    return n;
}

/* The first and last of the events blocks of a file, at most max of them. */
static size_t block_ranges(const uint8_t *data, size_t size, uint64_t (*out)[2], size_t max)
{
    size_t n = 0;
    uint64_t off = pf_load_u32(data + 12);
    while (n < max && off + PF_BLOCK_HEADER_LEN <= size &&
           pf_load_u32(data + off) == PF_BLOCK_MAGIC) {
        if (data[off + 4] == PF_BLOCK_EVENTS) {
            out[n][0] = pf_load_u64(data + off + 16);
            out[n++][1] = pf_load_u64(data + off + 24);
        }
        off += PF_BLOCK_HEADER_LEN + pf_load_u32(data + off + 32);
    }
    return n;
}

/* The windowed read of [from, to] against the full one. */
static void check_window(const char *path, const wread *full, uint64_t from, uint64_t to,
                         wread *got)
{
    char what[96];
    snprintf(what, sizeof what, "window [%llu, %llu]", (unsigned long long)from,
             (unsigned long long)to);
    read_all(path, NULL, 0, 1, from, to, got);
    cr_assert_eq(got->l.rc, 0, "%s: %s", what, got->l.err.message);
    cr_assert(got->l.st.clean, "%s: the footer did not check out", what);
    cr_assert_eq(got->l.st.blocks, full->l.st.blocks, "%s: blocks", what);
    cr_assert_eq(got->l.st.bytes_read, full->l.st.bytes_read, "%s: bytes_read", what);
    cr_assert_eq(got->l.st.events, count_events(&got->l), "%s: events counts what was delivered",
                 what);
    fu_list want, have;
    pick(&full->l, 0, from, to, &want);
    pick(&got->l, 0, from, to, &have);
    fu_assert_same(&have, &want, what);
    fu_free(&want);
    fu_free(&have);
    pick(&full->l, 1, 0, 0, &want);
    pick(&got->l, 1, 0, 0, &have);
    fu_assert_same(&have, &want, "thread definitions");
    fu_free(&want);
    fu_free(&have);
    for (int t = 0; t < 2; t++)
        cr_assert_str_eq(got->names[t], full->names[t], "%s: thread %d's name", what, t);
}

Test(format_window, delivers_every_overlapping_event_and_skips_the_rest)
{
    const char *path = fu_path("window.prof");
    make_fixture(path, 1);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    uint64_t nevents = events_blocks(data, size);
    free(data);
    cr_assert_gt(nevents, 60, "the fixture has only %llu events blocks",
                 (unsigned long long)nevents);
    wread full, got;
    read_all(path, NULL, 0, 0, 0, 0, &full);
    cr_assert_eq(full.l.rc, 0, "%s", full.l.err.message);
    cr_assert_eq(full.skipped, 0);

    /* small windows in the middle, on step edges, at the very start */
    static const uint64_t fixed[][2] = {
        { 60 * STEP_NS + 2 * MS, 60 * STEP_NS + 3 * MS },
        { 40 * STEP_NS, 41 * STEP_NS },
        { 77 * STEP_NS + 9 * MS, 77 * STEP_NS + 9 * MS },
        { 0, 0 },
        { 0, 5 * MS },
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_window(path, &full, fixed[i][0], fixed[i][1], &got);
        cr_assert_lt(got.l.n, full.l.n / 4, "window %zu: %zu of %zu events read", i, got.l.n,
                     full.l.n);
        cr_assert_geq(got.skipped * 4, nevents * 3, "window %zu: %llu of %llu blocks skipped", i,
                      (unsigned long long)got.skipped, (unsigned long long)nevents);
        cr_assert_gt(got.skipped_bytes, 0);
        cr_assert_lt(got.skipped_bytes, (uint64_t)size);
        fu_free(&got.l);
    }
    /* windows that just touch a block: one starting where it ends, one
     * ending where it starts (both ends of a window are included) */
    uint64_t edges[40][2];
    data = fu_load(path, &size);
    size_t nedges = block_ranges(data, size, edges, 40);
    free(data);
    for (size_t i = 0; i < nedges; i++) {
        check_window(path, &full, edges[i][1], edges[i][1], &got);
        fu_free(&got.l);
        check_window(path, &full, edges[i][0], edges[i][0], &got);
        fu_free(&got.l);
    }
    /* and windows anywhere, of any length */
    synth_rng rng = { 42 };
    for (int i = 0; i < 40; i++) {
        uint64_t from = synth_rand(&rng) % (RUN_END + 10 * MS);
        uint64_t len = i % 4 == 0 ? synth_rand(&rng) % RUN_END : synth_rand(&rng) % (3 * STEP_NS);
        check_window(path, &full, from, from + len, &got);
        fu_free(&got.l);
    }
    fu_free(&full.l);
}

Test(format_window, region_begun_before_the_window_is_delivered)
{
    const char *path = fu_path("window.prof");
    make_fixture(path, 1);
    wread full, got;
    read_all(path, NULL, 0, 0, 0, 0, &full);
    uint64_t from = 50 * STEP_NS + 3 * MS + 500 * US, to = from + 200 * US;
    check_window(path, &full, from, to, &got);
    int forward = 0, epoch = 0;
    for (size_t i = 0; i < got.l.n; i++) {
        const prof_event *e = &got.l.v[i].ev;
        if (e->start_ns == 50 * STEP_NS && strcmp(got.l.v[i].name, "forward") == 0)
            forward = 1; /* began 3.5 ms before the window, ends in it */
        if (e->start_ns == 0 && strcmp(got.l.v[i].name, "epoch") == 0)
            epoch = 1; /* began at 0, ends after it */
    }
    cr_assert(forward, "the forward region around the window is missing");
    cr_assert(epoch, "the region over the whole run is missing");
    fu_free(&got.l);
    fu_free(&full.l);
}

Test(format_window, whole_range_reads_everything_and_past_the_end_only_definitions)
{
    const char *path = fu_path("window.prof");
    make_fixture(path, 1);
    wread full, got;
    read_all(path, NULL, 0, 0, 0, 0, &full);
    read_all(path, NULL, 0, 1, 0, UINT64_MAX, &got);
    fu_assert_same(&got.l, &full.l, "window over everything");
    cr_assert_eq(got.skipped, 0);
    cr_assert_eq(got.l.st.events, full.l.st.events);
    cr_assert_eq(got.l.st.dropped_events, full.l.st.dropped_events);
    cr_assert_eq(full.l.st.dropped_events, 6);
    fu_free(&got.l);

    /* once reading has begun, a window changes nothing */
    prof_reader *r = NULL;
    prof_error err = { 0 };
    prof_event ev;
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    size_t n = 0;
    for (int rc = prof_reader_next(r, &ev); rc == 1; rc = prof_reader_next(r, &ev)) {
        if (n++ == 0)
            prof_reader_set_window(r, RUN_END + 1, UINT64_MAX);
    }
    uint64_t skipped = 1;
    prof_reader_skipped(r, &skipped, NULL);
    cr_assert_eq(skipped, 0);
    cr_assert_eq(n, full.l.n, "a late window changed what was read");
    prof_reader_close(r);

    check_window(path, &full, RUN_END + 1, UINT64_MAX, &got);
    cr_assert_eq(count_events(&got.l), 0, "%zu events past the end", got.l.n);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    cr_assert_eq(got.skipped, events_blocks(data, size), "every events block is skipped");
    cr_assert_eq(got.l.st.dropped_events, 0, "dropped counts the blocks read only");
    free(data);
    fu_free(&got.l);
    fu_free(&full.l);
}

/* The first events block that ends before t, and its payload's offset. */
static uint64_t payload_before(const uint8_t *data, size_t size, uint64_t t)
{
    uint64_t off = pf_load_u32(data + 12);
    while (off + PF_BLOCK_HEADER_LEN <= size && pf_load_u32(data + off) == PF_BLOCK_MAGIC) {
        if (data[off + 4] == PF_BLOCK_EVENTS && pf_load_u64(data + off + 24) < t &&
            pf_load_u32(data + off + 32) > 0)
            return off + PF_BLOCK_HEADER_LEN;
        off += PF_BLOCK_HEADER_LEN + pf_load_u32(data + off + 32);
    }
    cr_assert_fail("no events block ends before %llu", (unsigned long long)t);
    return 0;
}

Test(format_window, skipped_payload_is_not_read)
{
    const char *path = fu_path("window.prof"), *bad = fu_path("flipped.prof");
    make_fixture(path, 1);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    uint64_t from = 90 * STEP_NS, to = from + STEP_NS;
    data[payload_before(data, size, from) + 1] ^= 0x40;
    fu_store(bad, data, size);
    free(data);

    wread full, got, want;
    read_all(bad, NULL, 0, 0, 0, 0, &full);
    cr_assert_eq(full.l.rc, -1, "the full reader read past a damaged payload");
    cr_assert(strstr(full.l.err.message, "payload checksum mismatch"), "%s", full.l.err.message);
    read_all(path, NULL, 0, 0, 0, 0, &want);
    check_window(bad, &want, from, to, &got);
    cr_assert_gt(got.skipped, 0);
    fu_free(&got.l);
    fu_free(&want.l);
    fu_free(&full.l);
}

Test(format_window, memory_source_and_cut_files)
{
    const char *path = fu_path("window.prof"), *cut = fu_path("cut.prof");
    make_fixture(path, 1);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    uint64_t from = 30 * STEP_NS + 4 * MS, to = from + 2 * MS;
    wread file, mem;
    read_all(path, NULL, 0, 1, from, to, &file);
    read_all(NULL, data, size, 1, from, to, &mem);
    fu_assert_same(&mem.l, &file.l, "from memory");
    cr_assert(mem.l.st.clean);
    cr_assert_eq(mem.skipped, file.skipped);
    cr_assert_eq(mem.skipped_bytes, file.skipped_bytes);
    fu_free(&mem.l);
    fu_free(&file.l);
    free(data);

    /* a crashed run (no footer), and the same cut inside its last block */
    make_fixture(cut, 0);
    data = fu_load(cut, &size);
    for (int inside = 0; inside < 2; inside++) {
        if (inside)
            fu_store(cut, data, size - 7);
        wread full, got;
        read_all(cut, NULL, 0, 0, 0, 0, &full);
        read_all(cut, NULL, 0, 1, from, to, &got);
        cr_assert_eq(got.l.rc, 0, "%s", got.l.err.message);
        cr_assert_eq(full.l.rc, 0, "%s", full.l.err.message);
        cr_assert_not(got.l.st.clean);
        cr_assert_eq(got.l.st.truncated, inside);
        cr_assert_eq(got.l.st.truncated, full.l.st.truncated);
        cr_assert_eq(got.l.st.bytes_lost, full.l.st.bytes_lost);
        cr_assert_str_eq(got.l.st.detail, full.l.st.detail);
        cr_assert_gt(got.skipped, 0);
        fu_list want, have;
        pick(&full.l, 0, from, to, &want);
        pick(&got.l, 0, from, to, &have);
        fu_assert_same(&have, &want, inside ? "cut inside a block" : "no footer");
        fu_free(&want);
        fu_free(&have);
        fu_free(&got.l);
        fu_free(&full.l);
    }
    free(data);
}
