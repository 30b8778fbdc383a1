/* reader_block.c - fetching one block (format §5, §8 step 4): its header
 * and its checks, in the spec's order, then the payload, its checksum and
 * zstd. A time window skips an events block on its header alone. Runs on
 * the producer's side: it reads only the source and what opening learned
 * of the file (pf_file), and writes only the block_buf and the stage it is
 * given. */
#include <stdlib.h>
#include <string.h>

#include "format/reader_int.h"
#include "util/error.h"

/* An events block none of whose timed records can meet the window: its
 * header's first and last bound every record's start and end (§5.1). */
static int window_excludes(const fetch_window *w, const pf_block_header *h)
{
    return w->on && (h->last < w->from || h->first > w->to);
}

/* Reads the header of the block at offset, avail bytes before the end of
 * the file, into h and checks it up to its payload: from peek when the
 * last payload read brought it. */
static prof_err header_check(const pf_file *f, const pf_peek *peek, uint64_t offset,
                             block_buf *b, pf_block_header *h)
{
    uint64_t avail = f->size - offset;
    const uint8_t *hp;
    if (avail < PF_BLOCK_HEADER_LEN)
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "header cut short (%llu of %d bytes)",
                              (unsigned long long)avail, PF_BLOCK_HEADER_LEN);
    prof_err e = PROF_OK;
    if (peek && peek->at == offset)
        hp = peek->bytes;
    else
        e = pf_source_read(f, offset, PF_BLOCK_HEADER_LEN, &hp, &b->stored, &b->err,
                           "out of memory for a block");
    if (e != PROF_OK)
        return e;
    if (!pf_block_header_magic_ok(hp))
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "bad block magic");
    pf_block_header_load(hp, h);
    if (pf_block_header_crc(hp) != h->crc)
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "header checksum mismatch");
    if (h->stored_len > avail - PF_BLOCK_HEADER_LEN)
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "payload cut short (%llu of %u bytes)",
                              (unsigned long long)(avail - PF_BLOCK_HEADER_LEN), h->stored_len);
    if (h->raw_len > PF_BLOCK_RAW_MAX)
        return prof_error_set(&b->err, PROF_ERR_LIMIT,
                              "payload of %u bytes over the %u-byte limit", h->raw_len,
                              PF_BLOCK_RAW_MAX);
    if ((!(h->flags & PF_BLOCK_FLAG_ZSTD) && h->raw_len != h->stored_len) ||
        h->kind < PF_BLOCK_EVENTS || h->kind > PF_BLOCK_FOOTER ||
        (h->flags & ~PF_BLOCK_FLAG_ZSTD))
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "malformed block header");
    return PROF_OK;
}

/* Decompresses the stored payload sp, through stage when there is one
 * (see pf_block_fetch) and the block is no larger than a slot keeps: a
 * rare large block goes straight into the slot, so that reading ahead
 * holds one copy of it, not two. The payload is left in the stage when
 * in_stage, else it is in b->raw; b->payload says where. */
static prof_err payload_unpack(ZSTD_DCtx *dctx, pf_buf *stage, int in_stage,
                               const pf_block_header *h, const uint8_t *sp, block_buf *b)
{
    uint32_t rawlen = h->raw_len;
    if (rawlen > PF_SLOT_KEEP)
        stage = NULL;
    in_stage = in_stage && stage;
    pf_buf *out = stage ? stage : &b->raw;
    if ((!in_stage && pf_buf_reserve(&b->raw, rawlen) < 0) || pf_buf_reserve(out, rawlen) < 0)
        return prof_error_set(&b->err, PROF_ERR_NOMEM, "out of memory for a block of %u bytes",
                              rawlen);
    size_t n = ZSTD_decompressDCtx(dctx, out->data, rawlen, sp, h->stored_len);
    if (ZSTD_isError(n) || n != rawlen)
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "bad zstd frame: %s",
                              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
    if (stage && !in_stage)
        memcpy(b->raw.data, stage->data, rawlen);
    b->payload = in_stage ? stage->data : b->raw.data;
    return PROF_OK;
}

/* Reads the payload of the block whose header h is at offset, checks its
 * checksum and decompresses it: b->payload holds h->raw_len bytes. The
 * next block's header, when the file has its bytes, comes in the same
 * read, into stage->peek. */
static prof_err payload_fetch(const pf_file *f, ZSTD_DCtx *dctx, const pf_stage *stage,
                              uint64_t offset, const pf_block_header *h, block_buf *b)
{
    const uint8_t *sp;
    uint64_t next = offset + PF_BLOCK_HEADER_LEN + (uint64_t)h->stored_len;
    size_t more = stage->peek && f->size - next >= PF_BLOCK_HEADER_LEN ? PF_BLOCK_HEADER_LEN : 0;
    size_t extra;
    prof_err e = pf_source_read_ahead(f, offset + PF_BLOCK_HEADER_LEN, h->stored_len, more, &sp,
                                      &extra, &b->stored, &b->err, "out of memory for a block");
    if (e != PROF_OK)
        return e;
    if (extra == PF_BLOCK_HEADER_LEN) {
        memcpy(stage->peek->bytes, sp + h->stored_len, PF_BLOCK_HEADER_LEN);
        stage->peek->at = next;
    }
    if (crc32c_update(0, sp, h->stored_len) != h->payload_crc)
        return prof_error_set(&b->err, PROF_ERR_CORRUPT, "payload checksum mismatch");
    b->payload = sp;
    /* the footer's payload is read on the caller's side */
    if ((h->flags & PF_BLOCK_FLAG_ZSTD) &&
        (e = payload_unpack(dctx, stage->buf, stage->decoded_here && h->kind != PF_BLOCK_FOOTER,
                            h, sp, b)) != PROF_OK)
        return e;
    b->rawlen = h->raw_len;
    b->next = next;
    return PROF_OK;
}

/* The block at offset, as block_fetch gives it, but one: an excluded
 * events block is FETCH_SKIP with its stored_len. */
static fetch_outcome fetch_one(const pf_file *f, ZSTD_DCtx *dctx, const pf_stage *stage,
                               const fetch_window *win, uint64_t offset, block_buf *b)
{
    pf_block_header h = { 0 };
    if (f->has_trailer && offset > f->footer_offset) {
        prof_error_set(&b->err, PROF_ERR_CORRUPT, "blocks overlap the footer");
        return FETCH_CUT;
    }
    if (f->size - offset == 0)
        return FETCH_END; /* cut exactly between blocks: nothing lost but the footer */
    if (header_check(f, stage->peek, offset, b, &h) != PROF_OK)
        return FETCH_CUT;
    b->stored_len = h.stored_len;
    if (h.kind == PF_BLOCK_EVENTS && window_excludes(win, &h))
        return FETCH_SKIP;
    if (payload_fetch(f, dctx, stage, offset, &h, b) != PROF_OK)
        return FETCH_CUT;
    if (h.kind == PF_BLOCK_FOOTER) {
        if (!f->has_trailer)
            return FETCH_END; /* a footer whose trailer was cut off: all blocks are here */
        if (offset != f->footer_offset || b->next != f->size - PF_TRAILER_LEN) {
            prof_error_set(&b->err, PROF_ERR_CORRUPT, "footer not where the trailer says");
            return FETCH_CUT;
        }
        return FETCH_FOOTER;
    }
    b->records = h.count;
    b->thread = h.thread;
    return FETCH_BLOCK;
}

fetch_outcome pf_block_fetch(const pf_file *f, ZSTD_DCtx *dctx, const pf_stage *stage,
                             const fetch_window *win, uint64_t offset, block_buf *b)
{
    fetch_outcome o;
    b->skipped = b->skipped_bytes = 0;
    while ((o = fetch_one(f, dctx, stage, win, offset, b)) == FETCH_SKIP) {
        b->skipped++;
        b->skipped_bytes += b->stored_len;
        offset += PF_BLOCK_HEADER_LEN + (uint64_t)b->stored_len;
    }
    return o;
}

uint64_t pf_block_after(const pf_file *f, const pf_peek *peek, uint64_t offset, block_buf *b)
{
    pf_block_header h = { 0 }; /* set when header_check succeeds; gcc -O3 cannot tell */
    if (offset >= f->size || header_check(f, peek, offset, b, &h) != PROF_OK)
        return 0;
    return offset + PF_BLOCK_HEADER_LEN + (uint64_t)h.stored_len;
}

void pf_block_buf_free(block_buf *b)
{
    free(b->stored.data);
    free(b->raw.data);
    b->stored = b->raw = (pf_buf){ NULL, 0 };
}
