/* format_spec_example.c - the worked example of formats/prof-format.md §11
 * is what the codec writes and reads, read out of the spec itself so that
 * the two cannot drift apart: the xxd dump is rebuilt byte for byte through
 * the real writer (with the metadata the dump holds), every byte its tables
 * annotate is checked against the file (the footer's against its
 * decompressed payload), and what the closing paragraph says of cut and
 * damaged copies is what the reader does, at the offsets the file has.
 * Run from the repository root. */
#include <zstd.h>

#include "format/format.h"
#include "format_util.h"
#include "synth.h"

#define SPEC "formats/prof-format.md"
#define SPEC_MAX (256u << 10)
#define EXAMPLE_MAX 1024

/* The spec as text, and its §11. */
typedef struct spec {
    char *text;
    const char *example;
} spec;

static void spec_load(spec *sp)
{
    size_t n;
    sp->text = (char *)fu_load(SPEC, &n);
    sp->text[n] = '\0';
    sp->example = strstr(sp->text, "\n11. Worked example\n---"); /* the heading */
    cr_assert_not_null(sp->example, SPEC " has no section 11");
}

/* The bytes of the dump after "`xxd tiny.prof`:", into out; their count. */
static size_t spec_dump(const spec *sp, uint8_t *out, size_t cap)
{
    const char *line = strstr(sp->example, "`xxd tiny.prof`:");
    size_t n = 0;
    cr_assert_not_null(line, "no xxd dump in section 11");
    while ((line = strchr(line, '\n')) != NULL) {
        line++;
        if (*line == '\n' && n == 0)
            continue;
        if (strncmp(line, "    0000", 8) != 0)
            break;
        const char *p = line + 14; /* after "    OFFSET: " */
        for (int g = 0; g < 8 && p[0] != ' ' && p[0] != '\n'; g++, p += 5)
            for (int k = 0; k < 4 && p[k] != ' '; k += 2) {
                unsigned v;
                cr_assert_eq(sscanf(p + k, "%2x", &v), 1, "bad dump line: %.60s", line);
                cr_assert_lt(n, cap);
                out[n++] = (uint8_t)v;
            }
    }
    cr_assert_gt(n, (size_t)PF_FILE_HEADER_LEN, "the dump is too short");
    return n;
}

/* Writes the example as the spec's code says, with the dump's metadata. */
static uint8_t *write_example(const uint8_t *dump, size_t *size)
{
    pf_file_header fh;
    pf_file_header_load(dump, &fh);
    char *meta = strndup((const char *)dump + PF_FILE_HEADER_LEN, fh.meta_len);
    cr_assert_not_null(meta);
    const char *path = fu_path("tiny.prof");
    synth *s = synth_open(path, meta);
    cr_assert_not_null(s);
    synth_thread(s, 0, 100, "main");
    synth_region(s, 0, "fwd", PROF_KIND_COMPUTE, 0, 1000, 500);
    synth_region(s, 0, "fwd", PROF_KIND_COMPUTE, 0, 1600, 400);
    synth_memory(s, 0, "host.rss", 2000, 1048576);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, 900, 1200);
    cr_assert_eq(synth_close(s, NULL), 0);
    free(meta);
    return fu_load(path, size);
}

/* The footer's payload, decompressed (or as stored); its length in *n. */
static uint8_t *footer_payload(const uint8_t *f, size_t size, size_t *n)
{
    pf_trailer tr;
    pf_block_header h;
    cr_assert_eq(pf_trailer_load(f + size - PF_TRAILER_LEN, &tr), 0, "no trailer");
    pf_block_header_load(f + tr.footer_offset, &h);
    const uint8_t *p = f + tr.footer_offset + PF_BLOCK_HEADER_LEN;
    uint8_t *out = malloc(h.raw_len + 1);
    cr_assert_not_null(out);
    if (h.flags & PF_BLOCK_FLAG_ZSTD)
        cr_assert_eq(ZSTD_decompress(out, h.raw_len, p, h.stored_len), (size_t)h.raw_len);
    else
        memcpy(out, p, h.raw_len);
    *n = h.raw_len;
    return out;
}

/* The hex bytes of the backquoted spans of a table cell, up to an
 * ellipsis (a prefix); their count. */
static size_t cell_bytes(const char *cell, const char *end, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int quoted = 0;
    for (const char *p = cell; p < end; p++) {
        if (*p == '`')
            quoted = !quoted;
        else if (quoted && strncmp(p, "\xE2\x80\xA6", 3) == 0) /* "…" */
            break;
        else if (quoted && *p != ' ') {
            unsigned v;
            cr_assert_eq(sscanf(p, "%2x", &v), 1, "bad bytes in the cell: %.40s", cell);
            cr_assert_lt(n, cap);
            out[n++] = (uint8_t)v;
            p++;
        }
    }
    return n;
}

/* Every row "| 0xOFFSET | `BYTES` ... |" of the tables of §11: the bytes
 * at that offset of the file or, in the table that follows "decompressed
 * bytes:", of the footer's decompressed payload. Returns the rows checked. */
static size_t check_tables(const spec *sp, const uint8_t *file, size_t size,
                           const uint8_t *footer, size_t footer_len)
{
    const char *decompressed = strstr(sp->example, "decompressed bytes:"), *table, *table_end;
    size_t rows = 0;
    cr_assert_not_null(decompressed, "no table of the footer's decompressed bytes");
    table = strstr(decompressed, "\n|");
    cr_assert_not_null(table);
    table_end = strstr(table, "\n\n");
    cr_assert_not_null(table_end);
    for (const char *line = sp->example; (line = strstr(line, "\n| 0x")) != NULL; line++) {
        const char *cell = strchr(line + 3, '|'), *cell_end;
        cr_assert_not_null(cell);
        cell_end = strchr(cell + 1, '|');
        cr_assert_not_null(cell_end);
        unsigned long off = strtoul(line + 3, NULL, 16);
        uint8_t want[64];
        size_t n = cell_bytes(cell + 1, cell_end, want, sizeof want);
        int in_footer = line >= table && line < table_end;
        const uint8_t *base = in_footer ? footer : file;
        size_t len = in_footer ? footer_len : size;
        cr_assert_gt(n, 0u, "a row without bytes: %.40s", line + 1);
        cr_assert_leq(off + n, len, "row %#lx: past the end", off);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(base[off + i], want[i], "%s byte %#lx: the spec says %02X, it is %02X",
                         in_footer ? "footer payload" : "file", off + i, want[i],
                         base[off + i]);
        rows++;
    }
    return rows;
}

/* The spec's text with every run of blanks and newlines as one space. */
static char *squeeze(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    cr_assert_not_null(out);
    for (; *s; s++) {
        int blank = *s == ' ' || *s == '\n';
        if (!blank || (o > out && o[-1] != ' '))
            *o++ = blank ? ' ' : *s;
    }
    *o = '\0';
    return out;
}

static void assert_says(const char *text, const char *phrase)
{
    cr_assert_not_null(strstr(text, phrase), SPEC " §11 does not say: %s", phrase);
}

/* How the first size bytes of f read: -2 unreadable, -1 an error, 0 to
 * the end; st and err as the reader left them. */
static int read_prefix(const uint8_t *f, size_t size, prof_read_status *st, prof_error *err)
{
    fu_list l;
    if (fu_read_mem(f, size, &l, err) != PROF_OK)
        return -2;
    *st = l.st;
    *err = l.err;
    int rc = l.rc;
    fu_free(&l);
    return rc;
}

TestSuite(format_spec_example, .fini = fu_dir_remove);

Test(format_spec_example, the_dump_is_what_the_writer_writes)
{
    spec sp;
    uint8_t want[EXAMPLE_MAX];
    spec_load(&sp);
    size_t n = spec_dump(&sp, want, sizeof want), size;
    uint8_t *got = write_example(want, &size);
    cr_assert_eq(n, size, "the spec's dump has %zu bytes, the writer writes %zu", n, size);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "byte 0x%zx: spec 0x%02x, writer 0x%02x", i, want[i],
                     got[i]);
    char phrase[64];
    snprintf(phrase, sizeof phrase, "A complete %zu-byte file", size);
    char *text = squeeze(sp.example);
    assert_says(text, phrase);
    free(text);
    free(got);
    free(sp.text);
}

Test(format_spec_example, every_annotated_byte_is_in_the_file)
{
    spec sp;
    uint8_t dump[EXAMPLE_MAX];
    spec_load(&sp);
    spec_dump(&sp, dump, sizeof dump);
    size_t size, flen;
    uint8_t *file = write_example(dump, &size);
    uint8_t *footer = footer_payload(file, size, &flen);
    size_t rows = check_tables(&sp, file, size, footer, flen);
    cr_assert_geq(rows, 40u, "only %zu annotated rows found", rows);
    free(footer);
    free(file);
    free(sp.text);
}

/* The closing paragraph: cut copies read as crashed runs from the end of
 * the metadata on, cut at a block boundary they lose nothing, cut inside
 * the events block they lose it, cut shorter they are unreadable; a
 * changed byte in any block is an error. */
Test(format_spec_example, cut_and_damaged_copies_read_as_it_says)
{
    spec sp;
    uint8_t dump[EXAMPLE_MAX];
    spec_load(&sp);
    spec_dump(&sp, dump, sizeof dump);
    size_t size;
    uint8_t *f = write_example(dump, &size);
    pf_file_header fh;
    pf_block_header defs, events;
    pf_trailer tr;
    pf_file_header_load(f, &fh);
    uint64_t b0 = fh.header_len;
    pf_block_header_load(f + b0, &defs);
    uint64_t b1 = b0 + PF_BLOCK_HEADER_LEN + defs.stored_len;
    pf_block_header_load(f + b1, &events);
    cr_assert_eq(pf_trailer_load(f + size - PF_TRAILER_LEN, &tr), 0);
    uint64_t cut = b1 + 17;

    char *text = squeeze(sp.example), phrase[200];
    snprintf(phrase, sizeof phrase, "Cut to any length from %llu bytes on, the file reads as a "
             "crashed run", (unsigned long long)b0);
    assert_says(text, phrase);
    snprintf(phrase, sizeof phrase, "Cut exactly at a block boundary (%llu or %llu bytes)",
             (unsigned long long)b1, (unsigned long long)tr.footer_offset);
    assert_says(text, phrase);
    snprintf(phrase, sizeof phrase, "Cut inside the events block, at %llu bytes",
             (unsigned long long)cut);
    assert_says(text, phrase);
    snprintf(phrase, sizeof phrase, "Cut shorter than %llu bytes, the metadata is incomplete "
             "and the file cannot be read at all", (unsigned long long)b0);
    assert_says(text, phrase);

    prof_read_status st;
    prof_error err;
    for (size_t n = 0; n < size; n++) {
        int rc = read_prefix(f, n, &st, &err);
        if (n < b0) {
            cr_assert_eq(rc, -2, "cut at %zu: readable", n);
            continue;
        }
        cr_assert_eq(rc, 0, "cut at %zu: %s", n, err.message);
        cr_assert(!st.clean, "cut at %zu: clean", n);
        /* nothing lost: cut between blocks, or after the whole footer */
        int boundary = n == b0 || n == b1 || n == tr.footer_offset ||
                       n >= size - PF_TRAILER_LEN;
        cr_assert_eq(st.truncated, !boundary, "cut at %zu: truncated %d", n, st.truncated);
    }
    cr_assert_eq(read_prefix(f, cut, &st, &err), 0);
    cr_assert_eq(st.bytes_lost, 17u);
    snprintf(phrase, sizeof phrase, "last 17 B unreadable (%s)", st.detail);
    assert_says(text, phrase);

    cr_assert_eq(read_prefix(f, size, &st, &err), 0);
    cr_assert(st.clean);
    for (size_t i = b0; i < size - PF_TRAILER_LEN; i++) {
        f[i] ^= 0x01;
        cr_assert_eq(read_prefix(f, size, &st, &err), -1, "a change at %zu read", i);
        if (i == b1 + PF_BLOCK_HEADER_LEN) /* the events block's first payload byte */
            assert_says(text, err.message);
        f[i] ^= 0x01;
    }
    free(text);
    free(f);
    free(sp.text);
}
