/* reader_header.c - what a reader checks before the first block (format §3,
 * §4, §8 steps 1 to 3): the file header, the metadata, and the trailer
 * that says whether the file was closed cleanly. Any fault in the first
 * two makes the file unreadable; a damaged trailer only makes the file
 * read as a crashed run. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "format/reader_int.h"
#include "util/error.h"

/* The fixed header's checks, in the order of §8: empty, magic, cut short,
 * major version. The header's bytes are left in hb. */
static prof_err check_header(prof_reader *r, uint8_t hb[PF_FILE_HEADER_LEN], prof_error *err)
{
    pf_buf tmp = { NULL, 0 };
    const uint8_t *h;
    uint64_t size = r->file.size;
    if (size == 0)
        return prof_error_set(err, PROF_ERR_EMPTY, "empty file (0 bytes)");
    size_t first = size < PF_FILE_HEADER_LEN ? (size_t)size : PF_FILE_HEADER_LEN;
    prof_err e = pf_source_read(&r->file, 0, first, &h, &tmp, err, "out of memory");
    if (e == PROF_OK)
        memcpy(hb, h, first);
    free(tmp.data);
    if (e != PROF_OK)
        return e;
    if (memcmp(hb, PF_MAGIC, first < PF_MAGIC_LEN ? first : PF_MAGIC_LEN) != 0)
        return prof_error_set(err, PROF_ERR_NOT_PROF, "not a prof file (bad magic)");
    if (first < PF_FILE_HEADER_LEN)
        return prof_error_set(err, PROF_ERR_TRUNCATED,
                              "file cut short inside its header (%zu of %d bytes)", first,
                              PF_FILE_HEADER_LEN);
    pf_file_header fh;
    pf_file_header_load(hb, &fh);
    r->major = fh.major;
    r->minor = fh.minor;
    if (r->major != PF_VERSION_MAJOR)
        return prof_error_set(err, PROF_ERR_VERSION,
                              "written in format version %u.%u; this prof reads %d.x%s",
                              r->major, r->minor, PF_VERSION_MAJOR,
                              r->major > PF_VERSION_MAJOR ? ": upgrade prof" : "");
    return PROF_OK;
}

/* Keeps the metadata m in r->meta once the header checksum over it holds
 * and it is one JSON object. */
static prof_err keep_metadata(prof_reader *r, const uint8_t *hb, uint32_t crc, const uint8_t *m,
                              uint32_t mlen, prof_error *err)
{
    if (pf_file_header_crc(hb, m, mlen) != crc)
        return prof_error_set(err, PROF_ERR_CORRUPT, "header checksum mismatch");
    if (!(r->meta = malloc((size_t)mlen + 1)))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    if (mlen)
        memcpy(r->meta, m, mlen);
    r->meta[mlen] = '\0';
    /* the NUL included: one object and nothing after it (but space) */
    cJSON *j = cJSON_ParseWithLengthOpts(r->meta, (size_t)mlen + 1, NULL, 1);
    int object = j && cJSON_IsObject(j);
    cJSON_Delete(j);
    if (!object)
        return prof_error_set(err, PROF_ERR_CORRUPT, "metadata is not a JSON object");
    return PROF_OK;
}

/* The metadata's checks: its length, that the file holds it, then those of
 * keep_metadata. */
static prof_err check_metadata(prof_reader *r, const uint8_t hb[PF_FILE_HEADER_LEN],
                               prof_error *err)
{
    pf_file_header fh;
    pf_file_header_load(hb, &fh);
    uint32_t hlen = fh.header_len, mlen = fh.meta_len;
    if (mlen > PF_METADATA_MAX || hlen != PF_FILE_HEADER_LEN + mlen)
        return prof_error_set(err, PROF_ERR_CORRUPT, "bad header lengths (%u, %u)", hlen, mlen);
    if (r->file.size < hlen)
        return prof_error_set(err, PROF_ERR_TRUNCATED,
                              "file cut short inside its metadata (%llu of %u bytes)",
                              (unsigned long long)(r->file.size - PF_FILE_HEADER_LEN), mlen);
    pf_buf tmp = { NULL, 0 };
    const uint8_t *m;
    prof_err e = pf_source_read(&r->file, PF_FILE_HEADER_LEN, mlen, &m, &tmp, err,
                                "out of memory");
    if (e == PROF_OK)
        e = keep_metadata(r, hb, fh.crc, m, mlen, err);
    free(tmp.data);
    r->file.first_block = hlen;
    return e;
}

/* A trailer at the very end promises a footer at the offset it names, if
 * that offset can hold one. A trailer that cannot be read is none. */
static void find_trailer(pf_file *f)
{
    pf_buf tmp = { NULL, 0 };
    const uint8_t *t;
    pf_trailer tr;
    if (f->size < f->first_block + PF_BLOCK_HEADER_LEN + PF_TRAILER_LEN)
        return;
    prof_err e = pf_source_read(f, f->size - PF_TRAILER_LEN, PF_TRAILER_LEN, &t, &tmp, NULL, "");
    if (e == PROF_OK && pf_trailer_load(t, &tr) == 0 && tr.footer_offset >= f->first_block &&
        tr.footer_offset <= f->size - PF_TRAILER_LEN - PF_BLOCK_HEADER_LEN) {
        f->has_trailer = 1;
        f->footer_offset = tr.footer_offset;
    }
    free(tmp.data);
}

prof_err pf_read_header(prof_reader *r, prof_error *err)
{
    uint8_t hb[PF_FILE_HEADER_LEN];
    prof_err e = check_header(r, hb, err);
    if (e == PROF_OK)
        e = check_metadata(r, hb, err);
    if (e != PROF_OK)
        return e;
    r->st.bytes_read = r->file.first_block;
    find_trailer(&r->file);
    return PROF_OK;
}

int pf_reader_span(const prof_reader *r, uint64_t *first, uint64_t *last)
{
    const pf_file *f = &r->file;
    if (!f->has_trailer)
        return -1;
    pf_buf tmp = { NULL, 0 };
    const uint8_t *hp;
    pf_block_header h;
    int ok = pf_source_read(f, f->footer_offset, PF_BLOCK_HEADER_LEN, &hp, &tmp, NULL, "") ==
                 PROF_OK &&
             pf_block_header_magic_ok(hp);
    if (ok) {
        pf_block_header_load(hp, &h);
        ok = pf_block_header_crc(hp) == h.crc && h.kind == PF_BLOCK_FOOTER;
    }
    free(tmp.data);
    if (!ok)
        return -1;
    *first = h.first;
    *last = h.last;
    return 0;
}
