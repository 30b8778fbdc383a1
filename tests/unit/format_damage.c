/* format_damage.c - the reader against damaged files: a multi-block file
 * cut at every byte offset (with and without its footer), every byte of a
 * clean file with a bit flipped, a newer format version, things that are
 * not profiles at all, and a file read while it is still being written.
 * Each cut and flipped file is also read slim (pf_reader_next_slim), which
 * must give the same events, status and errors.
 * The rule under test (DESIGN §4): a cut file reads up to its last intact
 * block without error; damage in a file that promised a footer is an
 * error; nothing is ever handed out silently changed. */
#include <fcntl.h>
#include <sys/stat.h>

#include <zstd.h>

#include "format/format.h"
#include "format_util.h"
#include "synth.h"
#include "util/crc32c.h"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_damage, .fini = teardown);

/* ---- the fixture ---------------------------------------------------------- */

/* A few KB in many small blocks, most record kinds, two threads and the
 * GPU, names first used mid-file (so definition blocks are interleaved),
 * a thread renamed halfway. Small blocks stay uncompressed, larger ones
 * (second half) go through zstd: both payload paths are cut and flipped. */
static void make_fixture(const char *path, int clean)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s, "synth_open %s", path);
    synth_block_records(s, 5);
    synth_thread(s, 0, 100, "train");
    synth_thread(s, 1, 101, "loader");
    uint64_t t = 1000;
    for (int step = 0; step < 24; step++) {
        char name[32];
        if (step == 12) {
            synth_block_records(s, 40);
            synth_thread(s, 1, 101, "loader-renamed");
        }
        snprintf(name, sizeof name, "op%d", step % 7);
        synth_region(s, 1, "fetch", PROF_KIND_DATA, 0, t, 300);
        synth_region(s, 0, name, PROF_KIND_COMPUTE, 1, t + 10, 200);
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 500);
        synth_gpu_kernel(s, name, 0, 7, (uint64_t)step, t + 20, 100);
        if (step % 5 == 0)
            synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 7, 1000u + (uint64_t)step, 1u << 20, t + 5, 9);
        if (step % 6 == 0)
            synth_sync(s, 0, PROF_SYNC_STREAM, 0, 7, 2000u + (uint64_t)step, t + 400, 50);
        synth_counter(s, 0, "loss", t + 500, 1.0 / (step + 1));
        synth_memory(s, 0, "host.rss", t + 500, 1000000u + 4096u * (uint64_t)step);
        if (step == 9)
            synth_mark(s, 0, "checkpoint", t + 500);
        if (step == 17)
            synth_dropped(s, 1, 3, t + 100);
        synth_step(s, 0, (uint64_t)step, PROF_STEP_SAMPLED, t, 600);
        t += 600;
    }
    prof_error err = { 0 };
    int rc = clean ? synth_close(s, &err) : synth_abandon(s, &err);
    cr_assert_eq(rc, 0, "synth: %s", err.message);
}

/* Where the blocks of a file begin and end, found by walking headers. */
typedef struct layout {
    size_t hlen;           /* header + metadata                             */
    size_t bound[512];     /* bound[i]: end of the i-th data block; [0] hlen */
    size_t nbound;         /* data blocks + 1                               */
    size_t footer_start, footer_end; /* 0 when there is no footer           */
    size_t prefix_events[512]; /* events (thread ones too) in bound[i] bytes */
} layout;

static void layout_of(const uint8_t *f, size_t size, layout *lay)
{
    memset(lay, 0, sizeof *lay);
    lay->hlen = pf_load_u32(f + 12);
    size_t off = lay->hlen;
    lay->bound[lay->nbound++] = off;
    while (off + PF_BLOCK_HEADER_LEN <= size && pf_load_u32(f + off) == PF_BLOCK_MAGIC) {
        size_t end = off + PF_BLOCK_HEADER_LEN + pf_load_u32(f + off + 32);
        cr_assert_leq(end, size);
        if (f[off + 4] == PF_BLOCK_FOOTER) {
            lay->footer_start = off;
            lay->footer_end = end;
            break;
        }
        cr_assert_lt(lay->nbound, sizeof lay->bound / sizeof lay->bound[0]);
        lay->bound[lay->nbound++] = end;
        off = end;
    }
    /* Events available at each block boundary, read from exact prefixes. */
    for (size_t i = 0; i < lay->nbound; i++) {
        fu_list l;
        uint8_t *copy = malloc(lay->bound[i]);
        memcpy(copy, f, lay->bound[i]);
        cr_assert_eq(fu_read_mem(copy, lay->bound[i], &l, NULL), PROF_OK);
        cr_assert_eq(l.rc, 0);
        cr_assert_eq(l.st.blocks, (uint64_t)i);
        lay->prefix_events[i] = l.n;
        fu_free(&l);
        free(copy);
    }
}

/* The index of the last data block boundary at or before n. */
static size_t bound_at(const layout *lay, size_t n)
{
    size_t j = 0;
    while (j + 1 < lay->nbound && lay->bound[j + 1] <= n)
        j++;
    return j;
}

typedef struct fixture {
    uint8_t *bytes;
    size_t size;
    layout lay;
    fu_list all;
} fixture;

static void fixture_load(fixture *fx, const char *name, int clean)
{
    const char *path = fu_path(name);
    make_fixture(path, clean);
    fx->bytes = fu_load(path, &fx->size);
    layout_of(fx->bytes, fx->size, &fx->lay);
    prof_error err = { 0 };
    cr_assert_eq(fu_read_mem(fx->bytes, fx->size, &fx->all, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(fx->all.rc, 0);
    cr_assert_eq(fx->all.st.clean, clean);
    cr_assert_eq(fx->all.st.truncated, 0);
    cr_assert_eq(fx->all.n, fx->lay.prefix_events[fx->lay.nbound - 1]);
    cr_assert_eq(!!fx->lay.footer_start, clean, "footer presence");
    /* The sizes the tests below rely on: several blocks, a few KB. */
    cr_assert_geq(fx->lay.nbound, 10u, "only %zu blocks", fx->lay.nbound - 1);
    cr_assert_lt(fx->size, (size_t)12000, "fixture grew to %zu bytes", fx->size);
}

static void fixture_free(fixture *fx)
{
    free(fx->bytes);
    fu_free(&fx->all);
}

/* ---- truncation at every offset ------------------------------------------ */

/* Reading bytes slim (pf_reader_next_slim) gives what reading them event
 * by event gave: opened with e, read into l. */
static void slim_agrees(const uint8_t *bytes, size_t n, prof_err e, const fu_list *l,
                        const char *what)
{
    if (e != PROF_OK)
        return;
    fu_list slim;
    prof_error err;
    cr_assert_eq(fu_read_mem_slim(bytes, n, &slim, &err), PROF_OK, "%s", err.message);
    fu_assert_same_read(&slim, l, what);
    fu_free(&slim);
}

/* Checks the reading of the first n bytes of fx (read from an exact-size
 * copy, so that ASan sees any read past the end). */
static void check_cut(const fixture *fx, size_t n, int clean, int via_file)
{
    const layout *lay = &fx->lay;
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, fx->bytes, n);
    fu_list l;
    prof_error err = { 0 };
    prof_err e;
    if (via_file) {
        const char *p = fu_path("cut.prof");
        fu_store(p, copy, n);
        e = fu_read_path(p, &l, &err);
    } else {
        e = fu_read_mem(copy, n, &l, &err);
        slim_agrees(copy, n, e, &l, "cut file");
    }
    char msg[128];
    if (n == 0) {
        cr_assert_eq(e, PROF_ERR_EMPTY, "cut at 0: %d", e);
        cr_assert_str_eq(err.message, "empty file (0 bytes)");
    } else if (n < PF_FILE_HEADER_LEN) {
        cr_assert_eq(e, PROF_ERR_TRUNCATED, "cut at %zu: %d %s", n, e, err.message);
        snprintf(msg, sizeof msg, "file cut short inside its header (%zu of 24 bytes)", n);
        cr_assert_str_eq(err.message, msg);
    } else if (n < lay->hlen) {
        cr_assert_eq(e, PROF_ERR_TRUNCATED, "cut at %zu: %d %s", n, e, err.message);
        snprintf(msg, sizeof msg, "file cut short inside its metadata (%zu of %zu bytes)",
                 n - PF_FILE_HEADER_LEN, lay->hlen - PF_FILE_HEADER_LEN);
        cr_assert_str_eq(err.message, msg);
    } else {
        cr_assert_eq(e, PROF_OK, "cut at %zu: open failed: %s", n, err.message);
        cr_assert_eq(l.rc, 0, "cut at %zu of %zu: error instead of a quiet end: %s", n, fx->size,
                     l.err.message);
        cr_assert_eq(l.st.clean, 0, "cut at %zu reads as clean", n);
        cr_assert_eq(l.st.file_size, (uint64_t)n);
        size_t j = bound_at(lay, n);
        int past_footer = clean && n >= lay->footer_end; /* only the trailer lost */
        int truncated = !past_footer && n != lay->bound[j] &&
                        !(clean && n == lay->footer_start);
        cr_assert_eq(l.st.truncated, truncated, "cut at %zu: truncated %d, want %d (%s)", n,
                     l.st.truncated, truncated, l.st.detail);
        cr_assert_eq(l.st.blocks, (uint64_t)j, "cut at %zu: %llu blocks, want %zu", n,
                     (unsigned long long)l.st.blocks, j);
        cr_assert_eq(l.n, lay->prefix_events[j], "cut at %zu: %zu events, want %zu", n, l.n,
                     lay->prefix_events[j]);
        fu_assert_prefix(&l, &fx->all, "cut file");
        if (truncated) {
            cr_assert_eq(l.st.bytes_read, (uint64_t)lay->bound[j]);
            cr_assert_eq(l.st.bytes_lost, (uint64_t)(n - lay->bound[j]), "cut at %zu", n);
            snprintf(msg, sizeof msg, "block %zu at offset %zu: ", j, lay->bound[j]);
            cr_assert(strncmp(l.st.detail, msg, strlen(msg)) == 0, "cut at %zu: detail '%s'", n,
                      l.st.detail);
        } else {
            cr_assert_eq(l.st.bytes_lost, 0u);
            cr_assert_str_eq(l.st.detail, "");
        }
        fu_free(&l);
    }
    free(copy);
}

/* Whether n is in, or just after, the header of one of the first three
 * blocks or the last one: where a file's reader gets a block's header from
 * the read of the payload before it (reader_block.c, pf_peek), or, cut,
 * reads it alone. Those cuts and flips are also read from a file. */
static int near_header(const layout *lay, size_t n)
{
    for (size_t j = 0; j + 1 < lay->nbound; j++)
        if ((j < 3 || j + 2 == lay->nbound) && n >= lay->bound[j] &&
            n <= lay->bound[j] + PF_BLOCK_HEADER_LEN + 1)
            return 1;
    return 0;
}

Test(format_damage, every_cut_of_a_clean_file)
{
    fixture fx;
    fixture_load(&fx, "clean.prof", 1);
    for (size_t n = 0; n < fx.size; n++)
        check_cut(&fx, n, 1, n % 97 == 0 || near_header(&fx.lay, n));
    fixture_free(&fx);
}

Test(format_damage, every_cut_of_a_file_without_footer)
{
    fixture fx;
    fixture_load(&fx, "abandoned.prof", 0);
    for (size_t n = 0; n <= fx.size; n++)
        check_cut(&fx, n, 0, n % 89 == 0 || near_header(&fx.lay, n));
    fixture_free(&fx);
}

/* The messages of cuts inside a block: what was short, by how much. */
Test(format_damage, cut_messages)
{
    fixture fx;
    fixture_load(&fx, "msg.prof", 0);
    const layout *lay = &fx.lay;
    fu_list l;
    char want[160];

    size_t n = lay->bound[3] + 12;
    cr_assert_eq(fu_read_mem(fx.bytes, n, &l, NULL), PROF_OK);
    snprintf(want, sizeof want, "block 3 at offset %zu: header cut short (12 of 48 bytes)",
             lay->bound[3]);
    cr_assert_str_eq(l.st.detail, want);
    cr_assert_eq(l.st.bytes_lost, 12u);
    fu_free(&l);

    size_t stored = pf_load_u32(fx.bytes + lay->bound[4] + 32);
    n = lay->bound[4] + PF_BLOCK_HEADER_LEN + 1;
    cr_assert_eq(fu_read_mem(fx.bytes, n, &l, NULL), PROF_OK);
    snprintf(want, sizeof want, "block 4 at offset %zu: payload cut short (1 of %zu bytes)",
             lay->bound[4], stored);
    cr_assert_str_eq(l.st.detail, want);
    fu_free(&l);

    /* Magic cut short, or not a prof file at all */
    prof_reader *r = (prof_reader *)1;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open_memory("\x89PR", 3, &r, &err), PROF_ERR_TRUNCATED);
    cr_assert_null(r);
    cr_assert_eq(prof_reader_open_memory("\x89PX", 3, &r, &err), PROF_ERR_NOT_PROF);
    cr_assert_str_eq(err.message, "not a prof file (bad magic)");
    cr_assert_eq(prof_reader_open_memory(NULL, 0, &r, &err), PROF_ERR_EMPTY);
    cr_assert_eq(prof_reader_open_memory(NULL, 0, &r, NULL), PROF_ERR_EMPTY, "err may be NULL");
    fixture_free(&fx);
}

/* ---- flipped bits ----------------------------------------------------------- */

/* The data block that holds byte i, or nbound-1 past the last. */
static size_t block_of(const layout *lay, size_t i)
{
    size_t j = 0;
    while (j + 1 < lay->nbound && lay->bound[j + 1] <= i)
        j++;
    return j;
}

typedef struct flip_tally {
    unsigned open_failed, read_failed, unclean, clean;
} flip_tally;

/* Reads fx with byte i xor mask and checks the outcome against where i
 * is; from a file too near a block's header (near_header). */
static void check_flip(const fixture *fx, size_t i, uint8_t mask, int clean, flip_tally *tally)
{
    const layout *lay = &fx->lay;
    uint8_t *copy = malloc(fx->size);
    memcpy(copy, fx->bytes, fx->size);
    copy[i] ^= mask;
    fu_list l;
    prof_error err = { 0 };
    prof_err e;
    if (near_header(lay, i)) {
        const char *p = fu_path("flip.prof");
        fu_store(p, copy, fx->size);
        e = fu_read_path(p, &l, &err);
    } else {
        e = fu_read_mem(copy, fx->size, &l, &err);
        slim_agrees(copy, fx->size, e, &l, "flipped file");
    }
    if (i < lay->hlen) {
        /* The header and metadata: magic, version, or the header checksum */
        prof_err want = i < 8 ? PROF_ERR_NOT_PROF : i < 10 ? PROF_ERR_VERSION : PROF_ERR_CORRUPT;
        cr_assert_eq(e, want, "flip 0x%02x at %zu: open gave %d (%s), want %d", mask, i, e,
                     err.message, want);
        cr_assert_neq(err.message[0], '\0');
        tally->open_failed++;
        free(copy);
        return;
    }
    cr_assert_eq(e, PROF_OK, "flip 0x%02x at %zu: open: %s", mask, i, err.message);
    /* Whatever happens next, what was handed out is what was written. */
    fu_assert_prefix(&l, &fx->all, "flipped file");
    size_t j = block_of(lay, i);
    if (j + 1 < lay->nbound) { /* in data block j, not in the footer or trailer */
        /* Everything before the damaged block, nothing from it on. */
        cr_assert_eq(l.n, lay->prefix_events[j], "flip at %zu (block %zu): %zu events, want %zu",
                     i, j, l.n, lay->prefix_events[j]);
    } else {
        cr_assert_eq(l.n, fx->all.n, "flip in the footer at %zu lost events", i);
    }
    if (l.rc < 0) {
        cr_assert(clean, "a file without footer gave an error: %s", l.err.message);
        cr_assert_eq(l.err.code, PROF_ERR_CORRUPT, "flip at %zu: error %d: %s", i, l.err.code,
                     l.err.message);
        cr_assert(strncmp(l.err.message, "block ", 6) == 0, "message: %s", l.err.message);
        tally->read_failed++;
    } else if (l.st.clean) {
        /* Every byte is under a checksum; a flip that reads clean is a hole. */
        tally->clean++;
        cr_assert_fail("flip 0x%02x at %zu of %zu read as clean", mask, i, fx->size);
    } else {
        /* A file without footer stops quietly at the damaged block; a clean
         * file may only read as unclean when the flip hit its trailer. */
        if (clean)
            cr_assert_geq(i, fx->size - PF_TRAILER_LEN, "flip at %zu read as unclean, not "
                          "as an error", i);
        else
            cr_assert(l.st.truncated, "flip at %zu: damaged block not reported", i);
        tally->unclean++;
    }
    fu_free(&l);
    free(copy);
}

Test(format_damage, every_byte_flipped_in_a_clean_file)
{
    fixture fx;
    flip_tally tally = { 0 };
    fixture_load(&fx, "flip.prof", 1);
    for (size_t i = 0; i < fx.size; i++) {
        check_flip(&fx, i, (uint8_t)(1u << (i % 8)), 1, &tally);
        if (i % 5 == 0)
            check_flip(&fx, i, 0xFF, 1, &tally);
    }
    cr_assert_gt(tally.read_failed, 0u);
    cr_assert_gt(tally.open_failed, 0u);
    cr_assert_gt(tally.unclean, 0u, "a flipped trailer magic reads as unclean");
    cr_assert_eq(tally.clean, 0u);
    fixture_free(&fx);
}

Test(format_damage, flipped_bytes_in_a_file_without_footer)
{
    fixture fx;
    flip_tally tally = { 0 };
    fixture_load(&fx, "flip-abandoned.prof", 0);
    for (size_t i = 0; i < fx.size; i += 3)
        check_flip(&fx, i, (uint8_t)(0x80u >> (i % 8)), 0, &tally);
    cr_assert_eq(tally.read_failed, 0u);
    cr_assert_gt(tally.unclean, 0u);
    fixture_free(&fx);
}

/* ---- header fields ------------------------------------------------------------ */

static void fix_header_crc(uint8_t *f)
{
    uint32_t mlen = pf_load_u32(f + 16);
    pf_store_u32(f + 20, crc32c_update(crc32c_update(0, f, 20), f + PF_FILE_HEADER_LEN, mlen));
}

static prof_err open_patched(const fixture *fx, unsigned major, unsigned minor, fu_list *l,
                             prof_error *err)
{
    uint8_t *copy = malloc(fx->size);
    memcpy(copy, fx->bytes, fx->size);
    pf_store_u16(copy + 8, (uint16_t)major);
    pf_store_u16(copy + 10, (uint16_t)minor);
    fix_header_crc(copy);
    prof_err e = fu_read_mem(copy, fx->size, l, err);
    free(copy);
    return e;
}

Test(format_damage, newer_major_version_is_refused)
{
    fixture fx;
    fu_list l;
    prof_error err = { 0 };
    fixture_load(&fx, "ver.prof", 1);
    cr_assert_eq(open_patched(&fx, 2, 0, &l, &err), PROF_ERR_VERSION);
    cr_assert_str_eq(err.message, "written in format version 2.0; this prof reads 1.x: "
                                  "upgrade prof");
    cr_assert_eq(open_patched(&fx, 65535, 3, &l, &err), PROF_ERR_VERSION);
    cr_assert(strstr(err.message, "65535.3") != NULL, "message: %s", err.message);
    /* An older major is refused too, without telling to upgrade. */
    cr_assert_eq(open_patched(&fx, 0, 9, &l, &err), PROF_ERR_VERSION);
    cr_assert(strstr(err.message, "0.9") != NULL && !strstr(err.message, "upgrade"),
              "message: %s", err.message);
    /* Any minor of the same major reads, and says which. */
    cr_assert_eq(open_patched(&fx, 1, 7, &l, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(l.major, 1u);
    cr_assert_eq(l.minor, 7u);
    cr_assert_eq(l.rc, 0);
    cr_assert(l.st.clean);
    fu_assert_same(&l, &fx.all, "minor 7");
    fu_free(&l);
    fixture_free(&fx);
}

Test(format_damage, bad_header_fields)
{
    fixture fx;
    fu_list l;
    prof_error err = { 0 };
    fixture_load(&fx, "hdr.prof", 1);
    uint8_t *copy = malloc(fx.size);
    uint32_t mlen = pf_load_u32(fx.bytes + 16);

    /* Lengths that disagree, even with a good checksum */
    memcpy(copy, fx.bytes, fx.size);
    pf_store_u32(copy + 12, pf_load_u32(copy + 12) + 1);
    fix_header_crc(copy);
    cr_assert_eq(fu_read_mem(copy, fx.size, &l, &err), PROF_ERR_CORRUPT);
    cr_assert(strstr(err.message, "bad header lengths") != NULL, "%s", err.message);

    /* Metadata over the limit */
    memcpy(copy, fx.bytes, fx.size);
    pf_store_u32(copy + 16, PF_METADATA_MAX + 1);
    pf_store_u32(copy + 12, PF_FILE_HEADER_LEN + PF_METADATA_MAX + 1);
    cr_assert_eq(fu_read_mem(copy, fx.size, &l, &err), PROF_ERR_CORRUPT);

    /* Metadata longer than the file */
    memcpy(copy, fx.bytes, fx.size);
    pf_store_u32(copy + 16, (uint32_t)fx.size);
    pf_store_u32(copy + 12, (uint32_t)fx.size + PF_FILE_HEADER_LEN);
    cr_assert_eq(fu_read_mem(copy, fx.size, &l, &err), PROF_ERR_TRUNCATED, "%s", err.message);

    /* Metadata that is not a JSON object, with a good checksum */
    memcpy(copy, fx.bytes, fx.size);
    copy[PF_FILE_HEADER_LEN] = '[';
    copy[PF_FILE_HEADER_LEN + mlen - 1] = ']';
    fix_header_crc(copy);
    cr_assert_eq(fu_read_mem(copy, fx.size, &l, &err), PROF_ERR_CORRUPT);
    cr_assert_str_eq(err.message, "metadata is not a JSON object");
    free(copy);
    fixture_free(&fx);
}

/* ---- things that are not profiles ---------------------------------------------- */

Test(format_damage, not_profiles)
{
    prof_reader *r = (prof_reader *)1;
    prof_error err = { 0 };
    const char *dir = fu_path("adir");
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(prof_reader_open(dir, &r, &err), PROF_ERR_IO);
    cr_assert_null(r);
    cr_assert_str_eq(err.message, "cannot read: is a directory");

    cr_assert_eq(prof_reader_open(fu_path("missing.prof"), &r, &err), PROF_ERR_IO);
    cr_assert_str_eq(err.message, "cannot open: No such file or directory");

    cr_assert_eq(prof_reader_open("/dev/null", &r, &err), PROF_ERR_IO);
    cr_assert_str_eq(err.message, "cannot read: not a regular file (a character device)");

    const char *empty = fu_path("empty.prof");
    fu_store(empty, "", 0);
    cr_assert_eq(prof_reader_open(empty, &r, &err), PROF_ERR_EMPTY);
    cr_assert_str_eq(err.message, "empty file (0 bytes)");

    const char *text = fu_path("text.prof");
    const char *words = "this is a text file, not a profile, and it is long enough\n";
    fu_store(text, words, strlen(words));
    cr_assert_eq(prof_reader_open(text, &r, &err), PROF_ERR_NOT_PROF);
    cr_assert_str_eq(err.message, "not a prof file (bad magic)");
    fu_store(text, "x", 1);
    cr_assert_eq(prof_reader_open(text, &r, &err), PROF_ERR_NOT_PROF);
    cr_assert_null(r);

    /* A zstd frame (what `zstd run.prof` leaves) is not a profile either. */
    fu_store(text, "\x28\xb5\x2f\xfd\x00\x00\x00\x00", 8);
    cr_assert_eq(prof_reader_open(text, &r, &err), PROF_ERR_NOT_PROF);
}

/* ---- a file still being written ------------------------------------------------ */

static size_t count_events(const char *path, prof_read_status *st)
{
    fu_list l;
    prof_error err = { 0 };
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(l.rc, 0, "%s", l.err.message);
    *st = l.st;
    size_t n = l.n;
    fu_free(&l);
    return n;
}

Test(format_damage, read_while_being_written)
{
    const char *path = fu_path("live.prof");
    pf_writer *w = NULL;
    prof_error err = { 0 };
    prof_read_status st;
    cr_assert_eq(pf_writer_open(&w, path, "{\"live\":true}", 3, &err), PROF_OK, "%s", err.message);

    /* Header only: opens, no events, not clean, nothing lost. */
    cr_assert_eq(count_events(path, &st), 0u);
    cr_assert_eq(st.clean, 0);
    cr_assert_eq(st.truncated, 0);

    /* A reader opened now sees what is there now, even as the file grows. */
    prof_reader *early;
    cr_assert_eq(prof_reader_open(path, &early, &err), PROF_OK);

    pf_block b;
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    cr_assert_eq(pf_writer_define_string(w, 1, "step", 4), PROF_OK);
    cr_assert_eq(pf_writer_define_thread(w, 0, 1, "main"), PROF_OK);
    size_t want = 1; /* the thread definition */
    for (int blk = 0; blk < 5; blk++) {
        for (int i = 0; i < 10; i++)
            cr_assert_eq(pf_put_region(&b, 1, 0, 0, (uint64_t)(blk * 100 + i), 1), PROF_OK);
        cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK, "%s", err.message);
        want += 10;
        cr_assert_eq(count_events(path, &st), want, "after block %d", blk);
        cr_assert_eq(st.clean, 0);
        cr_assert_eq(st.truncated, 0, "%s", st.detail);
        cr_assert_eq(st.bytes_read, fu_writer_offset(w));
    }
    fu_list l;
    fu_drain(early, &l);
    cr_assert_eq(l.n, 0u, "a reader saw past the size it opened at: %zu events, size %llu", l.n, (unsigned long long)l.st.file_size);
    cr_assert_eq(l.rc, 0);
    fu_free(&l);

    /* Half a block on disk (the writer is in the middle of a write). */
    uint64_t at = fu_writer_offset(w);
    const uint8_t half[20] = { 0x50, 0x42, 0x4C, 0x4B, 1, 0 };
    cr_assert_eq(pwrite(pf_writer_fd(w), half, sizeof half, (off_t)at), (ssize_t)sizeof half);
    cr_assert_eq(count_events(path, &st), want);
    cr_assert_eq(st.truncated, 1);
    cr_assert_eq(st.bytes_lost, sizeof half);
    cr_assert_eq(ftruncate(pf_writer_fd(w), (off_t)at), 0);

    cr_assert_eq(pf_writer_close(w, &err), PROF_OK, "%s", err.message);
    pf_block_free(&b);
    cr_assert_eq(count_events(path, &st), want);
    cr_assert_eq(st.clean, 1, "after close");
}

/* ---- crafted blocks ------------------------------------------------------------- */

/* A zstd block whose frame decodes to nothing (found by fuzz_reader: the
 * reader then formed NULL + 0, undefined behaviour). It holds no records,
 * so it reads as one intact, empty block. */
Test(format_damage, zstd_block_with_empty_payload)
{
    uint8_t f[256];
    const char meta[] = "{}";
    memset(f, 0, sizeof f);
    memcpy(f, PF_MAGIC, PF_MAGIC_LEN);
    pf_store_u16(f + 8, PF_VERSION_MAJOR);
    pf_store_u16(f + 10, PF_VERSION_MINOR);
    pf_store_u32(f + 12, PF_FILE_HEADER_LEN + 2);
    pf_store_u32(f + 16, 2);
    memcpy(f + PF_FILE_HEADER_LEN, meta, 2);
    fix_header_crc(f);
    uint8_t *h = f + PF_FILE_HEADER_LEN + 2;
    size_t zlen = ZSTD_compress(h + PF_BLOCK_HEADER_LEN, 64, "", 0, 1);
    cr_assert(!ZSTD_isError(zlen) && zlen > 0);
    pf_store_u32(h, PF_BLOCK_MAGIC);
    h[4] = PF_BLOCK_EVENTS;
    h[5] = PF_BLOCK_FLAG_ZSTD;
    pf_store_u32(h + 8, 0);
    pf_store_u32(h + 12, 0); /* no records */
    pf_store_u32(h + 32, (uint32_t)zlen);
    pf_store_u32(h + 36, 0); /* raw length 0 */
    pf_store_u32(h + 40, crc32c_update(0, h + PF_BLOCK_HEADER_LEN, zlen));
    pf_store_u32(h + 44, crc32c_update(0, h, 44));
    size_t size = PF_FILE_HEADER_LEN + 2 + PF_BLOCK_HEADER_LEN + zlen;
    fu_list l;
    prof_error err = { 0 };
    cr_assert_eq(fu_read_mem(f, size, &l, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(l.rc, 0, "%s", l.err.message);
    cr_assert_eq(l.n, 0u);
    cr_assert_eq(l.st.blocks, 1u);
    cr_assert_eq(l.st.truncated, 0, "%s", l.st.detail);
    fu_free(&l);
    /* The same from a file. */
    const char *path = fu_path("empty-zstd.prof");
    fu_store(path, f, size);
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(l.rc, 0, "%s", l.err.message);
    cr_assert_eq(l.st.blocks, 1u);
    fu_free(&l);
}
