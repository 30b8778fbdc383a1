/* writer.c - writes .prof files: header and metadata, blocks (zstd frames
 * with content checksums, or stored raw by the crash path), and on close
 * the footer with the block index and the trailer that marks a clean close.
 * The byte layout is specified in formats/prof-format.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "format/format.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/vec.h"

struct pf_writer {
    int fd;
    uint64_t offset;   /* bytes written so far: where the next block goes */
    ZSTD_CCtx *cctx;
    uint8_t *zbuf;     /* compressed payload scratch */
    size_t zcap;
    pf_block defs;     /* definitions waiting for the next block          */
    pf_index_entry *index;
    size_t nindex, cap_index;
    uint64_t events, dropped, first_ns, last_ns;
    int unindexed;     /* the crash path wrote blocks the index lacks */
    uint32_t meta_len; /* bytes of metadata in the header              */
};

/* write(2) until done; async-signal-safe. */
static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static prof_err writer_emit(pf_writer *w, const void *data, size_t len, prof_error *err)
{
    if (write_all(w->fd, data, len) < 0)
        return prof_error_set(err, PROF_ERR_IO, "write failed at offset %llu: %s",
                              (unsigned long long)w->offset, strerror(errno));
    w->offset += len;
    return PROF_OK;
}

/* Definitions carry no time: their blocks say 0 for first and last. */
static uint64_t block_first(const pf_block *b)
{
    return b->first_ns == UINT64_MAX ? 0 : b->first_ns;
}

static void header_build(uint8_t *h, const pf_block *b, uint8_t flags, uint32_t stored,
                         const uint8_t *payload)
{
    pf_block_header bh = {
        .kind = b->kind,
        .flags = flags,
        .thread = b->thread,
        .count = b->count,
        .first = block_first(b),
        .last = b->last_ns,
        .stored_len = stored,
        .raw_len = (uint32_t)b->len,
        .payload_crc = crc32c_update(0, payload, stored),
    };
    pf_block_header_store(h, &bh);
}

static void writer_account(pf_writer *w, const pf_block *b)
{
    w->events += b->events;
    w->dropped += b->dropped;
    if (b->first_ns < w->first_ns)
        w->first_ns = b->first_ns;
    if (b->last_ns > w->last_ns)
        w->last_ns = b->last_ns;
}

static prof_err index_add(pf_writer *w, const pf_block *b, prof_error *err)
{
    if (vec_grow(&w->index, &w->cap_index, w->nindex, sizeof *w->index) < 0)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory for the block index");
    w->index[w->nindex++] = (pf_index_entry){ w->offset, block_first(b), b->last_ns, b->thread,
                                              b->count };
    return PROF_OK;
}

/* Compresses b's payload into w->zbuf; returns its size, or 0 when storing
 * it raw is no larger. */
static size_t block_compress(pf_writer *w, const pf_block *b, prof_error *err, prof_err *e)
{
    size_t bound = ZSTD_compressBound(b->len);
    *e = PROF_OK;
    if (bound > w->zcap) {
        uint8_t *z = realloc(w->zbuf, bound);
        if (!z) {
            *e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory for compression");
            return 0;
        }
        w->zbuf = z;
        w->zcap = bound;
    }
    size_t n = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, b->buf, b->len);
    if (ZSTD_isError(n)) {
        *e = prof_error_set(err, PROF_ERR_IO, "compression failed: %s", ZSTD_getErrorName(n));
        return 0;
    }
    return n < b->len ? n : 0;
}

static prof_err write_block_now(pf_writer *w, pf_block *b, prof_error *err)
{
    uint8_t h[PF_BLOCK_HEADER_LEN];
    prof_err e;
    size_t zlen = block_compress(w, b, err, &e);
    if (e)
        return e;
    const uint8_t *payload = zlen ? w->zbuf : b->buf;
    size_t stored = zlen ? zlen : b->len;
    header_build(h, b, zlen ? PF_BLOCK_FLAG_ZSTD : 0, (uint32_t)stored, payload);
    if ((e = index_add(w, b, err)) != PROF_OK)
        return e;
    if ((e = writer_emit(w, h, sizeof h, err)) != PROF_OK ||
        (e = writer_emit(w, payload, stored, err)) != PROF_OK)
        return e;
    if (b->kind != PF_BLOCK_FOOTER)
        writer_account(w, b);
    return PROF_OK;
}

static prof_err flush_defs(pf_writer *w, prof_error *err)
{
    if (w->defs.count == 0)
        return PROF_OK;
    prof_err e = write_block_now(w, &w->defs, err);
    pf_block_reset(&w->defs, PF_BLOCK_DEFS, PF_THREAD_NONE);
    return e;
}

static void file_header(uint8_t h[PF_FILE_HEADER_LEN], const char *metadata, size_t mlen)
{
    pf_file_header fh = {
        .major = PF_VERSION_MAJOR,
        .minor = PF_VERSION_MINOR,
        .header_len = (uint32_t)(PF_FILE_HEADER_LEN + mlen),
        .meta_len = (uint32_t)mlen,
    };
    pf_file_header_store(h, &fh, metadata);
}

static prof_err write_file_header(pf_writer *w, const char *metadata, prof_error *err)
{
    size_t mlen = strlen(metadata);
    uint8_t h[PF_FILE_HEADER_LEN];
    if (mlen > PF_METADATA_MAX)
        return prof_error_set(err, PROF_ERR_LIMIT, "metadata of %zu bytes is over the limit",
                              mlen);
    file_header(h, metadata, mlen);
    w->meta_len = (uint32_t)mlen;
    prof_err e = writer_emit(w, h, sizeof h, err);
    return e ? e : writer_emit(w, metadata, mlen, err);
}

prof_err pf_writer_replace_metadata(pf_writer *w, const char *metadata, prof_error *err)
{
    size_t mlen = strlen(metadata);
    if (mlen > w->meta_len)
        return prof_error_set(err, PROF_ERR_LIMIT,
                              "metadata of %zu bytes does not fit the %u bytes reserved", mlen,
                              (unsigned)w->meta_len);
    char *text = malloc(w->meta_len);
    if (!text)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    memcpy(text, metadata, mlen);
    memset(text + mlen, ' ', w->meta_len - mlen); /* JSON allows trailing blanks */
    uint8_t h[PF_FILE_HEADER_LEN];
    file_header(h, text, w->meta_len);
    int bad = pwrite(w->fd, h, sizeof h, 0) != (ssize_t)sizeof h ||
              pwrite(w->fd, text, w->meta_len, PF_FILE_HEADER_LEN) != (ssize_t)w->meta_len;
    free(text);
    if (bad)
        return prof_error_set(err, PROF_ERR_IO, "cannot rewrite the metadata: %s",
                              strerror(errno ? errno : EIO));
    return PROF_OK;
}

prof_err pf_writer_open_fd(pf_writer **out, int fd, const char *metadata, int level,
                           prof_error *err)
{
    pf_writer *w = calloc(1, sizeof *w);
    prof_err e;
    *out = NULL;
    if (!w || !(w->cctx = ZSTD_createCCtx())) {
        e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
        goto fail;
    }
    w->fd = fd;
    w->first_ns = UINT64_MAX;
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
    pf_block_init(&w->defs, PF_BLOCK_DEFS, PF_THREAD_NONE);
    if ((e = write_file_header(w, metadata, err)) != PROF_OK)
        goto fail;
    *out = w;
    return PROF_OK;
fail:
    if (w)
        pf_writer_abandon(w);
    else
        close(fd);
    return e;
}

prof_err pf_writer_open(pf_writer **out, const char *path, const char *metadata, int level,
                        prof_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    *out = NULL;
    if (fd < 0)
        return prof_error_set(err, PROF_ERR_IO, "cannot create: %s", strerror(errno));
    return pf_writer_open_fd(out, fd, metadata, level, err);
}

prof_err pf_writer_define_string(pf_writer *w, uint32_t id, const char *s, size_t len)
{
    return pf_put_string(&w->defs, id, s, len);
}

prof_err pf_writer_define_thread(pf_writer *w, uint32_t thread, uint64_t os_tid,
                                 const char *name)
{
    return pf_put_thread(&w->defs, thread, os_tid, name);
}

prof_err pf_writer_define_attr(pf_writer *w, uint32_t key, uint32_t name, uint32_t value)
{
    return pf_put_attr(&w->defs, key, name, value);
}

prof_err pf_writer_write_block(pf_writer *w, pf_block *b, prof_error *err)
{
    prof_err e = flush_defs(w, err);
    if (e == PROF_OK && b->count)
        e = write_block_now(w, b, err);
    pf_block_reset(b, b->kind, b->thread);
    return e;
}

prof_err pf_writer_write_block_raw(pf_writer *w, pf_block *b)
{
    uint8_t h[PF_BLOCK_HEADER_LEN];
    if (b->count == 0)
        return PROF_OK;
    header_build(h, b, 0, (uint32_t)b->len, b->buf);
    if (write_all(w->fd, h, sizeof h) < 0 || write_all(w->fd, b->buf, b->len) < 0)
        return PROF_ERR_IO;
    w->offset += sizeof h + b->len;
    w->unindexed = 1;
    writer_account(w, b);
    pf_block_reset(b, b->kind, b->thread);
    return PROF_OK;
}

prof_err pf_writer_write_pending_raw(pf_writer *w)
{
    return pf_writer_write_block_raw(w, &w->defs);
}

/* The totals the footer gives, as of the blocks written. */
static pf_footer footer_totals(const pf_writer *w)
{
    uint64_t first = w->first_ns == UINT64_MAX ? 0 : w->first_ns;
    return (pf_footer){ w->nindex, w->events, w->dropped, w->nindex ? first : 0, w->last_ns };
}

static prof_err write_footer(pf_writer *w, prof_error *err)
{
    pf_block f;
    prof_err e;
    size_t len = PF_FOOTER_FIXED + w->nindex * PF_INDEX_ENTRY_LEN;
    pf_trailer trailer = { w->offset };
    uint8_t tb[PF_TRAILER_LEN];
    pf_block_init(&f, PF_BLOCK_FOOTER, PF_THREAD_NONE);
    if (!(f.buf = malloc(len)))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory for the footer");
    f.cap = f.len = len;
    pf_footer totals = footer_totals(w);
    pf_footer_store(f.buf, &totals);
    for (size_t i = 0; i < w->nindex; i++)
        pf_index_entry_store(f.buf + PF_FOOTER_FIXED + i * PF_INDEX_ENTRY_LEN, &w->index[i]);
    f.count = (uint32_t)w->nindex;
    f.first_ns = w->first_ns == UINT64_MAX ? 0 : w->first_ns;
    f.last_ns = w->last_ns;
    e = write_block_now(w, &f, err);
    pf_block_free(&f);
    if (e)
        return e;
    pf_trailer_store(tb, &trailer);
    return writer_emit(w, tb, sizeof tb, err);
}

prof_err pf_writer_close(pf_writer *w, prof_error *err)
{
    prof_err e = flush_defs(w, err);
    /* After the crash path the index is incomplete; a footer would then
     * contradict the blocks, so the file stays a readable crashed run. */
    if (e == PROF_OK && !w->unindexed)
        e = write_footer(w, err);
    if (e == PROF_OK && close(w->fd) < 0)
        e = prof_error_set(err, PROF_ERR_IO, "close failed: %s", strerror(errno));
    else if (e != PROF_OK)
        close(w->fd);
    w->fd = -1;
    pf_writer_abandon(w);
    return e;
}

void pf_writer_abandon(pf_writer *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    ZSTD_freeCCtx(w->cctx);
    free(w->zbuf);
    free(w->index);
    pf_block_free(&w->defs);
    free(w);
}

int pf_writer_fd(const pf_writer *w)
{
    return w->fd;
}

