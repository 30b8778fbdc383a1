/* format_slim.c - pf_reader_set_slim_fn and pf_reader_next_slim: a reader
 * handing regions over slim gives, region for region, the events that
 * reading event by event gives, with the same status and errors, on the
 * reader's thread (files) and without one (memory, a tuning of one
 * thread); the regions its function tags come slim and everything else whole; a slim
 * reader refuses to be read event by event; it cannot be set once reading
 * has begun; abandoning it stops its function; a reader's thread ahead of
 * its caller shows the seen function the blocks whose batches say so, and
 * no other; the caller fetching blocks for the reader's thread (pf_help)
 * changes nothing. format_damage.c reads every
 * cut and flipped file slim too. Built also under ThreadSanitizer
 * (TSAN_UNITS): the function runs on the producing thread. */
#include <time.h>

#include "criterion_tsan.h"
#include "format/format.h"
#include "format/varint.h"
#include "format_util.h"
#include "synth.h"

#define THREADS 3
#define STEPS 300

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_slim, .fini = teardown);

/* Regions of several names, kinds and depths (one past what goes slim), on
 * THREADS threads, with steps, kernels, memory samples and thread
 * definitions between them, in blocks of 61 records. */
static void write_profile(const char *path, int crashed)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 61);
    synth_workers(s, THREADS);
    synth_class(s, "forward", "torch.nn.Module");
    static const char *const names[] = { "data", "forward", "backward", "optimizer",
                                         "all_reduce" };
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t t0 = step * 10000;
        for (uint32_t t = 0; t < THREADS; t++) {
            for (uint32_t i = 0; i < 7; i++)
                synth_region(s, t, names[i % 5], i == 4 ? PROF_KIND_COMM : PROF_KIND_COMPUTE,
                             1 + i % 3, t0 + 100 * i + t, 90);
            if (step % 50 == 7)
                synth_region(s, t, "deep", PROF_KIND_COMPUTE, PF_SLIM_DEPTH_MAX + 1, t0, 5);
            /* one name, two kinds: the tag of one is not the other's */
            synth_region(s, t, "mixed", step % 3 ? PROF_KIND_COMPUTE : PROF_KIND_COMM, 2,
                         t0 + 800, 20);
            synth_region(s, t, "step_body", PROF_KIND_COMPUTE, 0, t0, 9000);
        }
        synth_gpu_kernel(s, "gemm", 0, 7, step, t0 + 50, 700);
        synth_memory(s, 0, "host.rss", t0 + 9500, 1000000 + 64 * step);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t0, 9900);
    }
    prof_error err;
    int rc = crashed ? synth_abandon(s, &err) : synth_close(s, &err);
    cr_assert_eq(rc, 0, "writing %s: %s", path, err.message);
}

/* How the slim readers of a test read (each test runs in a process of
 * its own): the default, one thread, or the caller's help as set. */
static prof_tuning tuning;

/* The file at path opened to be read slim with fu_slim_tag and
 * fu_slim_seen over names, from its bytes in memory when from_memory
 * (*data, freed by the caller after closing; NULL otherwise). */
static prof_reader *open_slim(const char *path, int from_memory, uint8_t **data,
                              fu_slim_names *names)
{
    prof_reader *r = NULL;
    prof_error err;
    size_t size = 0;
    *data = NULL;
    if (from_memory) {
        *data = fu_load(path, &size);
        cr_assert_eq(prof_reader_open_memory(*data, size, &r, &err), PROF_OK, "%s", err.message);
    } else {
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        pf_reader_tune(r, &tuning);
    }
    cr_assert_eq(pf_reader_set_slim_fn(r, fu_slim_tag, fu_slim_seen, names), 0);
    return r;
}

/* Blocks the reader's thread took from the caller, over the reads of
 * this test's process (each test runs in one of its own). */
static uint64_t helped;

/* The file at path read slim (from its bytes in memory: from_memory),
 * into out; the entries that came slim in *nslim. */
static void read_slim(const char *path, int from_memory, fu_list *out, size_t *nslim)
{
    uint8_t *data;
    fu_slim_names names = { 0 };
    prof_reader *r = open_slim(path, from_memory, &data, &names);
    fu_drain_slim(r, out, &names, nslim);
    helped += names.helped;
    fu_slim_names_free(&names);
    free(data);
}

/* Slim from the file and from memory, against event by event. Returns
 * how many events the file has. */
static size_t check_file(const char *path)
{
    fu_list want;
    prof_error err;
    cr_assert_eq(fu_read_path(path, &want, &err), PROF_OK, "%s", err.message);
    size_t regions = 0, slim_names = 0;
    for (size_t i = 0; i < want.n; i++)
        if (want.v[i].ev.type == PROF_EV_REGION) {
            regions++;
            slim_names += !FU_SLIM_WHOLE(want.v[i].name) &&
                          want.v[i].ev.depth <= PF_SLIM_DEPTH_MAX;
        }
    cr_assert_gt(slim_names, 0u);
    cr_assert_lt(slim_names, regions, "no region should go whole");
    for (int mem = 0; mem < 2; mem++) {
        fu_list got;
        size_t nslim;
        read_slim(path, mem, &got, &nslim);
        fu_assert_same_read(&got, &want, mem ? "memory" : "file");
        /* tagged regions came slim, and nothing else */
        cr_assert_eq(nslim, slim_names, "%s: %zu slim, want %zu", mem ? "memory" : "file", nslim,
                     slim_names);
        fu_free(&got);
    }
    size_t n = want.n;
    fu_free(&want);
    return n;
}

Test(format_slim, gives_what_reading_event_by_event_gives)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    cr_assert_gt(check_file(path), (size_t)STEPS * THREADS * 8);
}

Test(format_slim, one_thread)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    tuning.threads = 1;
    check_file(path);
}

Test(format_slim, crashed_run)
{
    const char *path = fu_path("crashed.prof");
    write_profile(path, 1);
    check_file(path);
}

/* Copies of the file at path, which promised a footer, each with a byte
 * flipped at one of parts - 1 even places: reading fails, and read slim
 * from the reader's thread they give the events before the damage and
 * the error that reading event by event gives (format_damage reads every
 * flip from memory). */
static void check_flipped_copies(const char *path, int parts)
{
    const char *cut = fu_path("cut.prof");
    size_t size;
    uint8_t *data = fu_load(path, &size);
    for (int i = 1; i < parts; i++) {
        size_t at = size / (size_t)parts * (size_t)i;
        uint8_t *copy = malloc(size);
        cr_assert_not_null(copy);
        memcpy(copy, data, size);
        copy[at] ^= 0x5a;
        fu_store(cut, copy, size);
        free(copy);
        fu_list want, got;
        prof_error err;
        size_t nslim;
        cr_assert_eq(fu_read_path(cut, &want, &err), PROF_OK, "%s", err.message);
        cr_assert_eq(want.rc, -1, "damage at %zu went unseen", at);
        read_slim(cut, 0, &got, &nslim);
        fu_assert_same_read(&got, &want, "damaged");
        fu_free(&want);
        fu_free(&got);
    }
    free(data);
}

/* One thread's regions, marks and whole-going regions in blocks of
 * `records` records. LARGE_BLOCK is more than PF_SLIM_PART, and more bytes
 * than a slot keeps for the next block (PF_SLOT_KEEP), so that its buffers
 * are freed as the caller moves on from the first part. SLOT_BLOCK is more
 * than PF_SLIM_PART records in fewer bytes than PF_SLOT_KEEP (a record
 * here is at most 10 bytes), so that the reader's thread decodes the later
 * parts from its stage (reader_int.h, pf_stage), where zstd left them. */
#define LARGE_BLOCK (PF_SLIM_PART * 5 + 1000)
#define SLOT_BLOCK (PF_SLIM_PART + 5000)
static void write_large_blocks(const char *path, uint32_t records)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, records);
    synth_workers(s, 1);
    for (uint64_t i = 0; i < 2 * (uint64_t)records + 500; i++) {
        if (i % 7 == 3)
            synth_mark(s, 0, "tick", i * 10);
        else
            synth_region(s, 0, i % 5 == 1 ? "backward" : "forward", PROF_KIND_COMPUTE,
                         (uint32_t)(i % 4), i * 10, 8);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "writing %s: %s", path, err.message);
}

/* The batches of the file at path read slim (from memory: mem): how many,
 * and the most events in one. */
static size_t count_batches(const char *path, int mem, size_t *most)
{
    size_t batches = 0;
    uint8_t *data;
    fu_slim_names names = { 0 };
    prof_reader *r = open_slim(path, mem, &data, &names);
    pf_slim_batch b;
    int rc;
    *most = 0;
    while ((rc = pf_reader_next_slim(r, &b)) == 1) {
        batches++;
        if (b.count > *most)
            *most = b.count;
    }
    cr_assert_eq(rc, 0, "%s", prof_reader_error(r)->message);
    prof_reader_close(r);
    fu_slim_names_free(&names);
    free(data);
    return batches;
}

/* Blocks of `records` records, more than PF_SLIM_PART, written to a file
 * named name, come in batches of that many (at least min_batches in all),
 * the events and status those of reading event by event, from the
 * reader's thread and from memory; cut inside such a block, the same
 * events before the damage and the same error. */
static void check_parts(const char *name, uint32_t records, size_t min_batches)
{
    const char *path = fu_path(name);
    write_large_blocks(path, records);
    check_file(path);
    for (int mem = 0; mem < 2; mem++) {
        size_t most, batches = count_batches(path, mem, &most);
        cr_assert_eq(most, (size_t)PF_SLIM_PART, "%s", mem ? "memory" : "file");
        cr_assert_geq(batches, min_batches, "%s: %zu batches", mem ? "memory" : "file", batches);
    }
    check_flipped_copies(path, 6);
}

/* ---- varints of every length ------------------------------------------------------ */

/* v as a varint of exactly len bytes: continuation bytes past its
 * shortest form carry zeros (an overlong varint, which the reader
 * accepts as its value). v must fit len bytes. */
static size_t put_varint_len(uint8_t *p, uint64_t v, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++, v >>= 7)
        p[i] = (uint8_t)(0x80 | (v & 0x7f));
    p[len - 1] = (uint8_t)v;
    return len;
}

/* A region record of a name id, kind and depth, with its time delta
 * (zigzag-coded already: any value) and duration in dt_len and dur_len
 * bytes; its size. */
static size_t put_region_len(uint8_t *p, uint32_t name, prof_kind kind, uint32_t depth,
                             uint64_t dt, size_t dt_len, uint64_t dur, size_t dur_len)
{
    uint8_t *q = p;
    *q++ = (uint8_t)(PF_TAG_REGION + kind);
    q += pf_varint_put(q, name);
    q += pf_varint_put(q, depth);
    q += put_varint_len(q, dt, dt_len);
    q += put_varint_len(q, dur, dur_len);
    return (size_t)(q - p);
}

/* A value that fits len bytes of varint: every bit set, none, or drawn;
 * past 63 bits only the top one. */
static uint64_t value_of_len(uint64_t *rng, size_t len, size_t i)
{
    uint64_t mask = len >= 10 ? UINT64_MAX : ((uint64_t)1 << (7 * len)) - 1;
    *rng = *rng * 6364136223846793005u + 1442695040888963407u;
    return i % 3 == 0 ? mask : i % 3 == 1 ? 0 : (*rng ^ *rng >> 29) & mask;
}

#define VARINT_REGIONS 2001

/* A file of regions whose names, depths, time deltas and durations take
 * every length from one byte to ten, overlong ones among them, names and
 * depths past one byte whose low seven bits are those of names in use
 * (with the same kind: a name's kind comes from those bits), and values
 * with every bit of their bytes set; the last region's
 * duration bad (a tenth byte over 1: past 64 bits) when bad. The regions
 * as the format defines them (§6.2) in expect (VARINT_REGIONS). Returns
 * the number of regions. */
static size_t write_varints(const char *path, int bad, prof_event *expect)
{
    static const uint32_t names[] = { 1, 5, 127, 129, 133, 300, 16385 };
    static const uint32_t depths[] = { 0, 1, 127, 129, 20000 };
    static uint8_t mem[1 << 17];
    pf_writer *w;
    pf_block b;
    prof_error err = { 0 };
    cr_assert_eq(pf_writer_open(&w, path, "{}", 2, &err), PROF_OK, "%s", err.message);
    size_t len = 0, n = 0;
    for (size_t k = 0; k < 300 + 1; k++) {
        uint32_t id = k < 300 ? (uint32_t)k + 1 : 16385;
        char name[16];
        size_t nlen = (size_t)snprintf(name, sizeof name, "n%u", id);
        uint8_t *q = mem + len;
        *q++ = PF_TAG_STRING;
        q += pf_varint_put(q, id);
        q += pf_varint_put(q, nlen);
        memcpy(q, name, nlen);
        len = (size_t)(q - mem) + nlen;
    }
    pf_block_init_fixed(&b, PF_BLOCK_DEFS, PF_THREAD_NONE, mem, len);
    b.len = len;
    b.count = 301;
    cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK, "%s", err.message);
    uint64_t rng = 42;
    /* in blocks of 50: the reader decodes a name the short way once a
     * block before has given it a tag */
    for (size_t i = 0; i <= 2000; i += 50) {
        size_t count = 0;
        uint64_t cursor = 0; /* each block's times start from 0 */
        len = 0;
        for (size_t k = i; k < i + 50 && k <= 2000; k++, count++) {
            size_t dt_len = 1 + k % 10, dur_len = 1 + (k / 10) % 10;
            prof_event *e = &expect[k];
            *e = (prof_event){ .type = PROF_EV_REGION, .name_id = names[k % 7],
                               .kind = (prof_kind)((names[k % 7] & 0x7f) % 5),
                               .depth = depths[k / 35 % 5] };
            uint64_t dt = value_of_len(&rng, dt_len, k / 100);
            e->dur_ns = value_of_len(&rng, dur_len, k / 100 + 1);
            if (k == 2000) { /* the last: a duration of ten bytes */
                *e = (prof_event){ .type = PROF_EV_REGION, .name_id = 1, .dur_ns = UINT64_MAX };
                dt = 0;
                dt_len = 1;
                dur_len = 10;
            }
            e->start_ns = cursor + (uint64_t)pf_unzigzag(dt);
            cursor = e->start_ns + e->dur_ns;
            len += put_region_len(mem + len, e->name_id, e->kind, e->depth, dt, dt_len,
                                  e->dur_ns, dur_len);
        }
        if (i == 2000 && bad)
            mem[len - 1] = 2; /* a tenth byte over 1 */
        pf_block_init_fixed(&b, PF_BLOCK_EVENTS, 0, mem, len);
        b.len = len;
        b.count = (uint32_t)count;
        cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK, "%s", err.message);
        n += count;
    }
    cr_assert_eq(pf_writer_close(w, &err), PROF_OK, "%s", err.message);
    return n;
}

/* Fields of every length decode slim as event by event: the one-load ways
 * of decoding short fields (reader_decode.c) and the byte-by-byte ways
 * give the same regions, and the same error for a varint past 64 bits. */
Test(format_slim, varints_of_every_length)
{
    static prof_event expect[VARINT_REGIONS];
    for (int bad = 0; bad < 2; bad++) {
        const char *path = fu_path(bad ? "varints_bad.prof" : "varints.prof");
        size_t regions = write_varints(path, bad, expect);
        fu_list want;
        prof_error err;
        cr_assert_eq(regions, VARINT_REGIONS);
        cr_assert_eq(fu_read_path(path, &want, &err), PROF_OK, "%s", err.message);
        if (bad)
            cr_assert_eq(want.rc, -1, "a varint past 64 bits is damage");
        else
            cr_assert_eq(want.n, regions, "%zu events, want %zu", want.n, regions);
        for (size_t i = 0; i < want.n; i++) { /* the bytes' values, read event by event */
            const prof_event *e = &want.v[i].ev, *x = &expect[i];
            cr_assert(e->start_ns == x->start_ns && e->dur_ns == x->dur_ns &&
                          e->name_id == x->name_id && e->kind == x->kind && e->depth == x->depth,
                      "region %zu: start %llu dur %llu name %u kind %u depth %u, want %llu %llu "
                      "%u %u %u", i, (unsigned long long)e->start_ns,
                      (unsigned long long)e->dur_ns, e->name_id, e->kind, e->depth,
                      (unsigned long long)x->start_ns, (unsigned long long)x->dur_ns,
                      x->name_id, x->kind, x->depth);
        }
        for (int mem = 0; mem < 2; mem++) {
            fu_list got;
            size_t nslim;
            read_slim(path, mem, &got, &nslim);
            fu_assert_same_read(&got, &want, mem ? "memory" : "file");
            if (!bad)
                cr_assert_eq(nslim, regions, "every region comes slim");
            fu_free(&got);
        }
        fu_free(&want);
    }
}

Test(format_slim, a_large_block_comes_in_parts)
{
    check_parts("large.prof", LARGE_BLOCK, 13);
}

/* The same for blocks a slot keeps, whose parts the reader's thread
 * decodes from its stage. */
Test(format_slim, a_block_of_many_small_records_comes_in_parts)
{
    check_parts("many.prof", SLOT_BLOCK, 5);
}

/* A caller slower than the reader's thread: the thread, ahead, shows
 * blocks to the seen function, exactly those whose batches say seen; from
 * memory, with no thread, it shows none. */
Test(format_slim, ahead_shows_the_seen_function_its_blocks)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    for (int mem = 0; mem < 2; mem++) {
        uint8_t *data;
        fu_slim_names names = { 0 };
        prof_reader *r = open_slim(path, mem, &data, &names);
        pf_slim_batch b;
        size_t batches = 0, seen_batches = 0, seen = 0;
        int rc;
        while ((rc = pf_reader_next_slim(r, &b)) == 1) {
            batches++;
            if (b.seen) {
                seen_batches++;
                seen += b.count;
            }
            nanosleep(&(struct timespec){ 0, 200000 }, NULL); /* 0.2 ms a block */
        }
        cr_assert_eq(rc, 0, "%s", prof_reader_error(r)->message);
        prof_reader_close(r); /* its thread has ended */
        cr_assert_gt(batches, (size_t)16);
        if (mem)
            cr_assert_eq(seen_batches, 0u, "from memory, with no thread");
        else
            cr_assert_gt(seen_batches, 0u, "%zu batches, none shown", batches);
        cr_assert_eq(names.entries, seen, "shown %zu, handed out %zu as seen", names.entries,
                     seen);
        fu_slim_names_free(&names);
        free(data);
    }
}

/* Damage in a file that promised a footer. */
Test(format_slim, damaged_file)
{
    const char *path = fu_path("whole.prof");
    write_profile(path, 0);
    check_flipped_copies(path, 8);
}

/* With the caller fetching blocks for the reader's thread before it takes
 * each one (TUNING_HELP_ALWAYS: most of them come too late, the
 * thread being ahead, and are dropped), the events, status and errors are
 * the same: of clean and crashed runs, of blocks decoded in parts from
 * the stage, of flipped copies. Read until the thread has taken blocks
 * from the caller, so that it is known to have. Memory sources have no
 * thread, and no help. */
Test(format_slim, the_caller_fetching_for_the_thread_changes_nothing)
{
    const char *clean = fu_path("clean.prof"), *crashed = fu_path("crashed.prof"),
               *many = fu_path("many.prof");
    write_profile(clean, 0);
    write_profile(crashed, 1);
    write_large_blocks(many, SLOT_BLOCK);
    tuning.reader_help = TUNING_HELP_ALWAYS;
    check_flipped_copies(clean, 4);
    check_file(many);
    for (int round = 0; round < 200 && helped < 20; round++) {
        check_file(clean);
        check_file(crashed);
    }
    cr_assert_geq(helped, (uint64_t)20, "the thread took %llu blocks from the caller",
                  (unsigned long long)helped);
    helped = 0;
    tuning.reader_help = TUNING_HELP_OFF;
    check_file(clean);
    cr_assert_eq(helped, 0u, "help given when turned off");
}

/* A slim reader hands out nothing event by event, and says why. */
Test(format_slim, refuses_to_be_read_event_by_event)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    for (int batch = 0; batch < 2; batch++) {
        prof_reader *r = NULL;
        prof_error err;
        fu_slim_names names = { 0 };
        prof_event ev;
        const prof_event *evs;
        size_t n;
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        cr_assert_eq(pf_reader_set_slim_fn(r, fu_slim_tag, fu_slim_seen, &names), 0);
        cr_assert_eq(batch ? prof_reader_next_batch(r, &evs, &n) : prof_reader_next(r, &ev), -1);
        cr_assert_eq(prof_reader_error(r)->code, PROF_ERR_INVALID);
        pf_slim_batch b;
        cr_assert_eq(pf_reader_next_slim(r, &b), -1, "reading went on after the misuse");
        prof_reader_close(r);
        fu_slim_names_free(&names);
    }
}

Test(format_slim, refused_once_reading_began)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    prof_reader *r = NULL;
    prof_error err;
    prof_event ev;
    fu_slim_names names = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(prof_reader_next(r, &ev), 1);
    cr_assert_eq(pf_reader_set_slim_fn(r, fu_slim_tag, fu_slim_seen, &names), -1);
    while (prof_reader_next(r, &ev) == 1)
        ;
    cr_assert_eq(prof_reader_error(r)->code, PROF_OK);
    prof_reader_close(r);
    cr_assert_eq(names.events, 0u, "a function set too late was called");
}

/* Nor is a reader that is not slim read slim. */
Test(format_slim, a_reader_not_set_slim_refuses_slim_reads)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    prof_reader *r = NULL;
    prof_error err;
    pf_slim_batch b;
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(pf_reader_next_slim(r, &b), -1);
    cr_assert_eq(prof_reader_error(r)->code, PROF_ERR_INVALID);
    prof_reader_close(r);
}

/* Abandoning stops the function's thread at once: it is not called again,
 * and reading ends with -1. */
Test(format_slim, abandoning_stops_the_function)
{
    const char *path = fu_path("abandoned.prof");
    write_profile(path, 0);
    prof_reader *r;
    prof_error err;
    pf_slim_batch b;
    fu_slim_names names = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(pf_reader_set_slim_fn(r, fu_slim_tag, fu_slim_seen, &names), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(pf_reader_next_slim(r, &b), 1);
    pf_reader_abandon(r);
    size_t seen = names.events;
    cr_assert_eq(pf_reader_next_slim(r, &b), -1);
    cr_assert_eq(prof_reader_error(r)->code, PROF_ERR_INVALID);
    prof_reader_close(r);
    cr_assert_eq(names.events, seen, "the function was called after reading was abandoned");
    fu_slim_names_free(&names);
}
