/* format_limits.c - the reader against files that are valid block by block
 * but hostile in what they hold, and against hostile surroundings: a FIFO
 * or a device given as a profile is refused at once; a name over 65,536
 * bytes, a string id defined again with other text and definitions past
 * the format's 256 MiB of text are errors (formats/prof-format.md §6.3,
 * §9), with memory bounded meanwhile; memory that runs out while reading is
 * PROF_ERR_NOMEM in any file, never damage or a quiet cut; and the
 * messages give counts in decimal. */
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "format/format.h"
#include "format/varint.h"
#include "format_util.h"
#include "prof.h"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_limits, .fini = teardown);

static const char meta[] = "{\"format\":\"prof\"}";

static pf_writer *open_writer(const char *path)
{
    pf_writer *w;
    prof_error err = { 0 };
    cr_assert_eq(pf_writer_open(&w, path, meta, 3, &err), PROF_OK, "%s", err.message);
    return w;
}

static void close_writer(pf_writer *w, int clean)
{
    prof_error err = { 0 };
    if (clean)
        cr_assert_eq(pf_writer_close(w, &err), PROF_OK, "%s", err.message);
    else
        pf_writer_abandon(w);
}

/* One block of records laid out by hand (what the encoder would refuse to
 * write): count records in len bytes of mem. */
static void write_raw(pf_writer *w, uint8_t kind, uint32_t thread, uint8_t *mem, size_t len,
                      uint32_t count)
{
    pf_block b;
    prof_error err = { 0 };
    pf_block_init_fixed(&b, kind, thread, mem, len);
    b.len = len;
    b.count = count;
    cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK, "%s", err.message);
}

/* A string record of len bytes of c for id into p; returns its size. */
static size_t raw_string(uint8_t *p, uint8_t tag, uint64_t id, char c, size_t len)
{
    uint8_t *q = p;
    *q++ = tag;
    q += pf_varint_put(q, id);
    if (tag == PF_TAG_THREAD)
        q += pf_varint_put(q, 7); /* os tid */
    q += pf_varint_put(q, len);
    memset(q, c, len);
    return (size_t)(q - p) + len;
}

/* A region named by id 1, so that a reader resolves it. */
static void use_id1(pf_writer *w)
{
    pf_block b;
    prof_error err = { 0 };
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    cr_assert_eq(pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 10, 5), PROF_OK);
    cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK);
    pf_block_free(&b);
}

/* Reads path to its end; the list keeps the outcome. */
static void read_all(const char *path, fu_list *l)
{
    prof_error err = { 0 };
    prof_err e = fu_read_path(path, l, &err);
    cr_assert_eq(e, PROF_OK, "open: %s", err.message);
}

static void assert_error(const fu_list *l, prof_err code, const char *part)
{
    cr_assert_eq(l->rc, -1, "read to the end without an error");
    cr_assert_eq(l->err.code, code, "error %d (%s), want %d", l->err.code, l->err.message, code);
    cr_assert(strstr(l->err.message, part) != NULL, "'%s' lacks '%s'", l->err.message, part);
}

/* ---- inputs that are not regular files ------------------------------------------------ */

/* A FIFO that nobody writes to: refused at once, not waited on (the test
 * would hit its timeout). */
Test(format_limits, a_fifo_is_refused_at_once, .timeout = 10)
{
    const char *fifo = fu_path("in.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    prof_reader *r = (prof_reader *)1;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open(fifo, &r, &err), PROF_ERR_IO);
    cr_assert_null(r);
    cr_assert_str_eq(err.message, "cannot read: not a regular file (a FIFO)");
    struct stat sb;
    cr_assert(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO is left as it was");
}

/* A device that never ends, and one that is empty. */
Test(format_limits, devices_are_refused, .timeout = 10)
{
    prof_reader *r;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open("/dev/zero", &r, &err), PROF_ERR_IO);
    cr_assert_str_eq(err.message, "cannot read: not a regular file (a character device)");
    cr_assert_eq(prof_reader_open("/dev/null", &r, &err), PROF_ERR_IO);
}

/* A regular file is read with a blocking descriptor, as before. */
Test(format_limits, a_regular_file_reads_as_before)
{
    const char *path = fu_path("plain.prof");
    pf_writer *w = open_writer(path);
    cr_assert_eq(pf_writer_define_string(w, 1, "op", 2), PROF_OK);
    use_id1(w);
    close_writer(w, 1);
    fu_list l;
    read_all(path, &l);
    cr_assert_eq(l.rc, 0, "%s", l.err.message);
    cr_assert_eq(l.n, 1u);
    cr_assert_str_eq(l.v[0].name, "op");
    fu_free(&l);
}

/* ---- names and their definitions ------------------------------------------------------ */

/* 65,536 bytes is a name; one more is a malformed record, in any file. */
Test(format_limits, names_over_65536_bytes_are_malformed)
{
    static uint8_t mem[PF_STRING_MAX + 64];
    for (int clean = 0; clean <= 1; clean++) {
        for (size_t extra = 0; extra <= 1; extra++) {
            const char *path = fu_path("long.prof");
            pf_writer *w = open_writer(path);
            write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem,
                      raw_string(mem, PF_TAG_STRING, 1, 'n', PF_STRING_MAX + extra), 1);
            use_id1(w);
            close_writer(w, clean);
            fu_list l;
            read_all(path, &l);
            if (extra) {
                assert_error(&l, PROF_ERR_CORRUPT,
                             "string 1 of 65537 bytes, over the 65536-byte limit");
            } else {
                cr_assert_eq(l.rc, 0, "%s", l.err.message);
                cr_assert_eq(strlen(l.v[0].name), (size_t)PF_STRING_MAX);
            }
            fu_free(&l);
        }
    }
}

Test(format_limits, thread_names_over_65536_bytes_are_malformed)
{
    static uint8_t mem[PF_STRING_MAX + 64];
    const char *path = fu_path("thread.prof");
    pf_writer *w = open_writer(path);
    write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem,
              raw_string(mem, PF_TAG_THREAD, 3, 't', PF_STRING_MAX + 1), 1);
    close_writer(w, 1);
    fu_list l;
    read_all(path, &l);
    assert_error(&l, PROF_ERR_CORRUPT, "name of thread 3 of 65537 bytes, over the 65536-byte");
    fu_free(&l);
}

/* The same text again changes nothing; other text is corruption (format
 * §6.3), however small, as it could only pile up beside the first. */
Test(format_limits, a_string_id_is_defined_once)
{
    uint8_t mem[64];
    const char *path = fu_path("again.prof");
    pf_writer *w = open_writer(path);
    cr_assert_eq(pf_writer_define_string(w, 1, "first", 5), PROF_OK);
    use_id1(w);
    write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem, raw_string(mem, PF_TAG_STRING, 1, 'x', 0),
              1); /* "": other text, even empty */
    close_writer(w, 1);
    fu_list l;
    read_all(path, &l);
    assert_error(&l, PROF_ERR_CORRUPT, "string 1 defined again with other text");
    cr_assert_eq(l.n, 1u, "the events before it are handed out");
    cr_assert_str_eq(l.v[0].name, "first");
    fu_free(&l);

    w = open_writer(path);
    cr_assert_eq(pf_writer_define_string(w, 1, "same", 4), PROF_OK);
    use_id1(w);
    cr_assert_eq(pf_writer_define_string(w, 1, "same", 4), PROF_OK);
    use_id1(w);
    close_writer(w, 1);
    read_all(path, &l);
    cr_assert_eq(l.rc, 0, "a repeat of the same text: %s", l.err.message);
    cr_assert_eq(l.n, 2u);
    cr_assert_str_eq(l.v[1].name, "same");
    fu_free(&l);
}

/* A 40-times redefinition of one id with 60 MiB of text (issue 15 row 3,
 * 2.5 GB before) stops at the first, over the limit, with memory of one
 * block: 60 MiB of one byte compresses to a few kilobytes. */
Test(format_limits, a_string_bomb_stops_at_once)
{
    size_t len = (size_t)60 << 20, cap = len + 32;
    uint8_t *mem = malloc(cap);
    cr_assert_not_null(mem);
    const char *path = fu_path("bomb.prof");
    pf_writer *w = open_writer(path);
    for (int i = 0; i < 3; i++)
        write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem,
                  raw_string(mem, PF_TAG_STRING, 1, 'a', len), 1);
    use_id1(w);
    close_writer(w, 1);
    free(mem);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_lt(sb.st_size, 100000, "the bomb is small on disk (%lld bytes)",
                 (long long)sb.st_size);
    fu_list l;
    read_all(path, &l);
    assert_error(&l, PROF_ERR_CORRUPT, "block 0 at offset ");
    assert_error(&l, PROF_ERR_CORRUPT, ": string 1 of 62914560 bytes, over the 65536-byte limit");
    fu_free(&l);
}

/* Name attributes copy the two strings they name: 2,049 of them with two
 * 64 KiB names pass the 256 MiB of definition text a file may hold. The
 * reader stops there (PROF_ERR_LIMIT) before holding more. */
Test(format_limits, definition_text_is_limited_to_256_mib)
{
    const char *path = fu_path("text.prof");
    pf_writer *w = open_writer(path);
    char *big = malloc(PF_STRING_MAX);
    cr_assert_not_null(big);
    memset(big, 'a', PF_STRING_MAX);
    cr_assert_eq(pf_writer_define_string(w, 1, big, PF_STRING_MAX), PROF_OK);
    memset(big, 'b', PF_STRING_MAX);
    cr_assert_eq(pf_writer_define_string(w, 2, big, PF_STRING_MAX), PROF_OK);
    free(big);
    uint32_t n = (uint32_t)(PF_TEXT_MAX / (2u * PF_STRING_MAX)) + 1;
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(pf_writer_define_attr(w, PF_ATTR_CLASS, 1, 2), PROF_OK);
    use_id1(w);
    close_writer(w, 1);
    fu_list l;
    read_all(path, &l);
    assert_error(&l, PROF_ERR_LIMIT, "past the 268435456-byte limit");
    fu_free(&l);
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    cr_assert_lt(ru.ru_maxrss, 700L * 1024, "peak %ld KiB", ru.ru_maxrss);
}

/* ---- messages -------------------------------------------------------------------------- */

/* Counts and ids are decimal ("records missing: 0x3" before). */
Test(format_limits, messages_count_in_decimal)
{
    uint8_t mem[64];
    const char *path = fu_path("short.prof");
    pf_writer *w = open_writer(path);
    cr_assert_eq(pf_writer_define_string(w, 1, "op", 2), PROF_OK);
    use_id1(w);
    size_t len = raw_string(mem, PF_TAG_STRING, 2, 'x', 3);
    write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem, len, 12); /* 11 records short */
    close_writer(w, 1);
    fu_list l;
    read_all(path, &l);
    assert_error(&l, PROF_ERR_CORRUPT, "payload ends 11 records short of its count");
    fu_free(&l);

    w = open_writer(path);
    len = raw_string(mem, PF_TAG_STRING, PF_STRING_IDS, 'x', 1);
    write_raw(w, PF_BLOCK_DEFS, PF_THREAD_NONE, mem, len, 1);
    close_writer(w, 1);
    read_all(path, &l);
    assert_error(&l, PROF_ERR_CORRUPT, "string id 4194304 out of range (1 to 4194303)");
    fu_free(&l);
}

/* ---- memory that runs out ---------------------------------------------------------------
 * Under an address-space limit a little above what the process uses, a
 * block whose payload takes 48 MB cannot be read. (Not under ASan, which
 * reserves terabytes of address space up front.) */
#ifndef __SANITIZE_ADDRESS__
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN

/* The process's address space now, in bytes (/proc/self/status VmSize). */
static uint64_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
            break;
    fclose(f);
    cr_assert_gt(kb, 0ull);
    return (uint64_t)kb * 1024;
}

Test(format_limits, memory_that_runs_out_is_its_own_error)
{
    for (int clean = 0; clean <= 1; clean++) {
        const char *path = fu_path("big.prof");
        pf_writer *w = open_writer(path);
        cr_assert_eq(pf_writer_define_string(w, 1, "op", 2), PROF_OK);
        pf_block b;
        prof_error err = { 0 };
        pf_block_init(&b, PF_BLOCK_EVENTS, 0);
        for (uint64_t i = 0; i < 9000000; i++)
            cr_assert_eq(pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 100 * i, 90), PROF_OK);
        cr_assert_gt(b.len, (size_t)40 << 20);
        cr_assert_eq(pf_writer_write_block(w, &b, &err), PROF_OK, "%s", err.message);
        pf_block_free(&b);
        close_writer(w, clean);

        prof_reader *r;
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        struct rlimit old, lim;
        cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
        lim = old;
        lim.rlim_cur = vm_size() + ((rlim_t)24 << 20);
        cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
        prof_event ev;
        int rc;
        while ((rc = prof_reader_next(r, &ev)) == 1)
            ;
        prof_error got = *prof_reader_error(r);
        prof_read_status st;
        prof_reader_status(r, &st);
        cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
        prof_reader_close(r);
        cr_assert_eq(rc, -1, "%s file: read to the end under the limit", clean ? "clean" : "cut");
        cr_assert_eq(got.code, PROF_ERR_NOMEM, "%s file: error %d: %s", clean ? "clean" : "cut",
                     got.code, got.message);
        cr_assert(strstr(got.message, "out of memory") != NULL, "%s", got.message);
        cr_assert_not(st.truncated, "memory that ran out is no cut");
    }
}
#endif
#endif
