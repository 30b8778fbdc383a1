/* format.h - the .prof codec shared by the recorder and the reader: the
 * file's layout (every magic, offset, tag and limit, with load and store
 * helpers for each fixed structure), the block encoder and the file writer.
 * The fields of each record are described once, in format/records.h.
 *
 * Every number in this file is part of the file format specified in
 * formats/prof-format.md. They are frozen: never renumber or reuse one,
 * only add. Change this file and the spec together. Nothing else spells an
 * offset: code that reads or writes a header goes through these helpers.
 */
#ifndef PROF_FORMAT_H
#define PROF_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/records.h"
#include "prof_reader.h"
#include "util/crc32c.h"
#include "util/tuning.h"

/* ---- little-endian integers ------------------------------------------ */

static inline void pf_store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void pf_store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void pf_store_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t pf_load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t pf_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t pf_load_u64(const uint8_t *p)
{
    return (uint64_t)pf_load_u32(p) | (uint64_t)pf_load_u32(p + 4) << 32;
}

/* ---- file header (format §3) --------------------------------------------- */

#define PF_MAGIC "\x89PROF\r\n\x1a" /* 8 bytes, no NUL stored              */
#define PF_MAGIC_LEN 8
/* Whether the first n bytes of a file are a rank summary's
 * (formats/rank-summary.md, src/analysis/ranks.c): JSON, but not a trace
 * to import. It starts {"schema": "prof-rank-summary", with any JSON
 * whitespace between the tokens. */
static inline int pf_rank_summary_head(const char *b, size_t n)
{
    static const char *const tokens[] = { "{", "\"schema\"", ":", "\"prof-rank-summary\"" };
    size_t at = 0;
    for (size_t t = 0; t < 4; t++) {
        while (at < n && (b[at] == ' ' || b[at] == '\t' || b[at] == '\n' || b[at] == '\r'))
            at++;
        size_t len = strlen(tokens[t]);
        if (n - at < len || memcmp(b + at, tokens[t], len) != 0)
            return 0;
        at += len;
    }
    return 1;
}
#define PF_VERSION_MAJOR 1
#define PF_VERSION_MINOR 1 /* 1.1: the name attribute record         */

/* Offsets of its fields; the magic is at 0. */
#define PF_FH_MAJOR 8       /* u16                                          */
#define PF_FH_MINOR 10      /* u16                                          */
#define PF_FH_HEADER_LEN 12 /* u32: 24 + metadata length, where blocks begin */
#define PF_FH_META_LEN 16   /* u32: bytes of JSON after the header          */
#define PF_FH_CRC 20        /* u32: CRC-32C of bytes 0..19, then metadata   */
#define PF_FILE_HEADER_LEN 24

#define PF_METADATA_MAX (16u << 20) /* readers refuse larger metadata       */

typedef struct pf_file_header {
    uint16_t major, minor;
    uint32_t header_len;
    uint32_t meta_len;
    uint32_t crc;
} pf_file_header;

/* The fields after the magic, which the caller compares first (a file too
 * short for the rest is still told apart from one that is no prof file). */
static inline void pf_file_header_load(const uint8_t *p, pf_file_header *h)
{
    h->major = pf_load_u16(p + PF_FH_MAJOR);
    h->minor = pf_load_u16(p + PF_FH_MINOR);
    h->header_len = pf_load_u32(p + PF_FH_HEADER_LEN);
    h->meta_len = pf_load_u32(p + PF_FH_META_LEN);
    h->crc = pf_load_u32(p + PF_FH_CRC);
}

/* The checksum of a header whose other fields are in place, over the
 * metadata that follows it. */
static inline uint32_t pf_file_header_crc(const uint8_t *p, const void *meta, size_t len)
{
    return crc32c_update(crc32c_update(0, p, PF_FH_CRC), meta, len);
}

/* Writes the magic and h; the checksum is computed over meta, not taken
 * from h. */
static inline void pf_file_header_store(uint8_t *p, const pf_file_header *h, const void *meta)
{
    memcpy(p, PF_MAGIC, PF_MAGIC_LEN);
    pf_store_u16(p + PF_FH_MAJOR, h->major);
    pf_store_u16(p + PF_FH_MINOR, h->minor);
    pf_store_u32(p + PF_FH_HEADER_LEN, h->header_len);
    pf_store_u32(p + PF_FH_META_LEN, h->meta_len);
    pf_store_u32(p + PF_FH_CRC, pf_file_header_crc(p, meta, h->meta_len));
}

/* ---- blocks (format §5) -------------------------------------------------- */

#define PF_BLOCK_MAGIC 0x4B4C4250u /* "PBLK" as little-endian bytes          */

/* Offsets of the block header's fields; the magic (u32) is at 0. */
#define PF_BH_KIND 4         /* u8: enum pf_block_kind                     */
#define PF_BH_FLAGS 5        /* u8: PF_BLOCK_FLAG_*                        */
#define PF_BH_RESERVED 6     /* u16: 0                                     */
#define PF_BH_THREAD 8       /* u32                                        */
#define PF_BH_COUNT 12       /* u32: records (footer: index entries)       */
#define PF_BH_FIRST 16       /* u64: smallest start of its timed records   */
#define PF_BH_LAST 24        /* u64: largest end of its timed records      */
#define PF_BH_STORED_LEN 32  /* u32: payload bytes in the file             */
#define PF_BH_RAW_LEN 36     /* u32: payload bytes once decompressed       */
#define PF_BH_PAYLOAD_CRC 40 /* u32: CRC-32C of the stored payload         */
#define PF_BH_CRC 44         /* u32: CRC-32C of bytes 0..43                */
#define PF_BLOCK_HEADER_LEN 48

enum pf_block_kind {
    PF_BLOCK_EVENTS = 1,      /* records of one thread (or of the GPU)        */
    PF_BLOCK_DEFS = 2,        /* string and thread definitions                */
    PF_BLOCK_FOOTER = 3       /* block index and totals; last block of a file */
};

#define PF_BLOCK_FLAG_ZSTD 0x01u /* payload is one zstd frame               */

#define PF_THREAD_NONE 0xFFFFFFFFu /* thread field of definition and footer
                                      blocks                                 */
#define PF_THREAD_GPU PROF_THREAD_GPU /* thread field of blocks of GPU activity */

#define PF_BLOCK_RAW_MAX (64u << 20)  /* readers refuse larger payloads     */

typedef struct pf_block_header {
    uint8_t kind, flags;
    uint32_t thread, count;
    uint64_t first, last;
    uint32_t stored_len, raw_len;
    uint32_t payload_crc, crc;
} pf_block_header;

static inline int pf_block_header_magic_ok(const uint8_t *p)
{
    return pf_load_u32(p) == PF_BLOCK_MAGIC;
}

/* The header checksum its bytes 0..43 call for. */
static inline uint32_t pf_block_header_crc(const uint8_t *p)
{
    return crc32c_update(0, p, PF_BH_CRC);
}

/* Stores the header checksum of the bytes before it. */
static inline void pf_block_header_seal(uint8_t *p)
{
    pf_store_u32(p + PF_BH_CRC, pf_block_header_crc(p));
}

/* The fields after the magic, which pf_block_header_magic_ok checks. */
static inline void pf_block_header_load(const uint8_t *p, pf_block_header *h)
{
    h->kind = p[PF_BH_KIND];
    h->flags = p[PF_BH_FLAGS];
    h->thread = pf_load_u32(p + PF_BH_THREAD);
    h->count = pf_load_u32(p + PF_BH_COUNT);
    h->first = pf_load_u64(p + PF_BH_FIRST);
    h->last = pf_load_u64(p + PF_BH_LAST);
    h->stored_len = pf_load_u32(p + PF_BH_STORED_LEN);
    h->raw_len = pf_load_u32(p + PF_BH_RAW_LEN);
    h->payload_crc = pf_load_u32(p + PF_BH_PAYLOAD_CRC);
    h->crc = pf_load_u32(p + PF_BH_CRC);
}

/* Writes the magic, h and a zero reserved field, then seals the header:
 * its checksum is computed, not taken from h. */
static inline void pf_block_header_store(uint8_t *p, const pf_block_header *h)
{
    pf_store_u32(p, PF_BLOCK_MAGIC);
    p[PF_BH_KIND] = h->kind;
    p[PF_BH_FLAGS] = h->flags;
    pf_store_u16(p + PF_BH_RESERVED, 0);
    pf_store_u32(p + PF_BH_THREAD, h->thread);
    pf_store_u32(p + PF_BH_COUNT, h->count);
    pf_store_u64(p + PF_BH_FIRST, h->first);
    pf_store_u64(p + PF_BH_LAST, h->last);
    pf_store_u32(p + PF_BH_STORED_LEN, h->stored_len);
    pf_store_u32(p + PF_BH_RAW_LEN, h->raw_len);
    pf_store_u32(p + PF_BH_PAYLOAD_CRC, h->payload_crc);
    pf_block_header_seal(p);
}

/* ---- records (format §6) -------------------------------------------------- */

/* Record tags; the fields of each are in records.h. */
enum pf_tag {
    PF_TAG_STRING = 0x01,
    PF_TAG_THREAD = 0x02,
    PF_TAG_REGION = 0x10,      /* 0x10 + the region's kind (0..4)           */
    PF_TAG_REGION_LAST = 0x14,
    PF_TAG_STEP = 0x20,
    PF_TAG_MEMORY = 0x21,
    PF_TAG_COUNTER = 0x22,
    PF_TAG_MARK = 0x23,
    PF_TAG_DROPPED = 0x24,
    PF_TAG_GPU_KERNEL = 0x30,
    PF_TAG_GPU_MEMCPY = 0x31,
    PF_TAG_GPU_MEMSET = 0x32,
    PF_TAG_SYNC = 0x33,
    PF_TAG_API = 0x34,
    PF_TAG_EXTENSION = 0x80,   /* 0x80..0xFF: length, bytes; skipped by
                                  readers that do not know the tag          */
    PF_TAG_ATTR = 0x80         /* 1.1: the name attribute                   */
};

/* Keys of name attributes (PF_TAG_ATTR), as PROF_ATTR_* of prof_reader.h. */
enum pf_attr_key {
    PF_ATTR_CLASS = PROF_ATTR_CLASS /* the class of the code a name's regions time */
};

/* The largest encoding of any one record, strings excluded. */
#define PF_RECORD_MAX 96
#define PF_STRING_MAX (1u << 16) /* longer names are cut at this length;
                                    readers refuse longer ones            */

/* ---- limits a reader enforces (format §9) -------------------------------
 * They bound what a reader keeps for definitions, whatever the file: a
 * hostile file can compress 64 MiB of text into a few kilobytes. Writers
 * stay within them too (the recorder gives out no more ids or threads). */
#define PF_STRING_IDS (1u << 22)  /* string ids are 1 .. PF_STRING_IDS - 1   */
#define PF_THREADS (1u << 20)     /* thread indices are below this           */
#define PF_TEXT_MAX (256u << 20)  /* bytes of definition text in one file    */

/* ---- footer and trailer (format §7) ----------------------------------------- */

/* Offsets of the totals at the start of the footer block's payload. */
#define PF_FT_BLOCKS 0  /* u64: blocks before the footer = index entries  */
#define PF_FT_EVENTS 8  /* u64: timed records in them                     */
#define PF_FT_DROPPED 16 /* u64: sum of the dropped-events counts         */
#define PF_FT_FIRST 24  /* u64: smallest first of blocks with timed records */
#define PF_FT_LAST 32   /* u64: largest last                              */
#define PF_FOOTER_FIXED 40 /* then the index, one entry per block         */

/* Offsets within an index entry. */
#define PF_IX_OFFSET 0  /* u64: the block header's file offset            */
#define PF_IX_FIRST 8   /* u64: the header's first                        */
#define PF_IX_LAST 16   /* u64: the header's last                         */
#define PF_IX_THREAD 24 /* u32: the header's thread                       */
#define PF_IX_COUNT 28  /* u32: the header's count                        */
#define PF_INDEX_ENTRY_LEN 32

#define PF_TRAILER_MAGIC "\x89PROFEND" /* 8 bytes                          */
#define PF_TR_FOOTER_OFFSET 0          /* u64: the footer block's offset   */
#define PF_TR_MAGIC 8                  /* the end magic                    */
#define PF_TRAILER_LEN 16

typedef struct pf_footer {
    uint64_t blocks, events, dropped, first, last;
} pf_footer;

typedef struct pf_index_entry {
    uint64_t offset, first, last;
    uint32_t thread, count;
} pf_index_entry;

typedef struct pf_trailer {
    uint64_t footer_offset;
} pf_trailer;

static inline void pf_footer_load(const uint8_t *p, pf_footer *f)
{
    f->blocks = pf_load_u64(p + PF_FT_BLOCKS);
    f->events = pf_load_u64(p + PF_FT_EVENTS);
    f->dropped = pf_load_u64(p + PF_FT_DROPPED);
    f->first = pf_load_u64(p + PF_FT_FIRST);
    f->last = pf_load_u64(p + PF_FT_LAST);
}

static inline void pf_footer_store(uint8_t *p, const pf_footer *f)
{
    pf_store_u64(p + PF_FT_BLOCKS, f->blocks);
    pf_store_u64(p + PF_FT_EVENTS, f->events);
    pf_store_u64(p + PF_FT_DROPPED, f->dropped);
    pf_store_u64(p + PF_FT_FIRST, f->first);
    pf_store_u64(p + PF_FT_LAST, f->last);
}

static inline void pf_index_entry_load(const uint8_t *p, pf_index_entry *e)
{
    e->offset = pf_load_u64(p + PF_IX_OFFSET);
    e->first = pf_load_u64(p + PF_IX_FIRST);
    e->last = pf_load_u64(p + PF_IX_LAST);
    e->thread = pf_load_u32(p + PF_IX_THREAD);
    e->count = pf_load_u32(p + PF_IX_COUNT);
}

static inline void pf_index_entry_store(uint8_t *p, const pf_index_entry *e)
{
    pf_store_u64(p + PF_IX_OFFSET, e->offset);
    pf_store_u64(p + PF_IX_FIRST, e->first);
    pf_store_u64(p + PF_IX_LAST, e->last);
    pf_store_u32(p + PF_IX_THREAD, e->thread);
    pf_store_u32(p + PF_IX_COUNT, e->count);
}

/* 0 when p holds the end magic (t is then filled), -1 when it does not. */
static inline int pf_trailer_load(const uint8_t *p, pf_trailer *t)
{
    if (memcmp(p + PF_TR_MAGIC, PF_TRAILER_MAGIC, PF_TRAILER_LEN - PF_TR_MAGIC) != 0)
        return -1;
    t->footer_offset = pf_load_u64(p + PF_TR_FOOTER_OFFSET);
    return 0;
}

static inline void pf_trailer_store(uint8_t *p, const pf_trailer *t)
{
    pf_store_u64(p + PF_TR_FOOTER_OFFSET, t->footer_offset);
    memcpy(p + PF_TR_MAGIC, PF_TRAILER_MAGIC, PF_TRAILER_LEN - PF_TR_MAGIC);
}

/* Each fixed structure ends with its last field. */
_Static_assert(PF_FH_CRC + 4 == PF_FILE_HEADER_LEN, "file header layout");
_Static_assert(PF_BH_CRC + 4 == PF_BLOCK_HEADER_LEN, "block header layout");
_Static_assert(PF_FT_LAST + 8 == PF_FOOTER_FIXED, "footer layout");
_Static_assert(PF_IX_COUNT + 4 == PF_INDEX_ENTRY_LEN, "index entry layout");
_Static_assert(PF_TR_MAGIC + 8 == PF_TRAILER_LEN, "trailer layout");

/* ---- block encoder ----------------------------------------------------
 * Appends records to a payload buffer and tracks what the block header
 * needs. A growable block reallocates; a fixed block (over caller memory,
 * for the crash path, where malloc is off limits) returns PROF_ERR_LIMIT
 * when a record would not fit.
 */
typedef struct pf_block {
    uint8_t kind;
    uint32_t thread;
    uint32_t count;       /* records                                         */
    uint64_t first_ns;    /* smallest record time                            */
    uint64_t last_ns;     /* largest record end (time + duration)            */
    uint64_t cursor;      /* time of the previous record, for deltas         */
    uint64_t events;      /* records other than definitions                  */
    uint64_t dropped;     /* sum of DROPPED records                          */
    uint8_t *buf;
    size_t len, cap;
    int fixed;
} pf_block;

void pf_block_init(pf_block *b, uint8_t kind, uint32_t thread);
void pf_block_init_fixed(pf_block *b, uint8_t kind, uint32_t thread, void *mem, size_t cap);
void pf_block_reset(pf_block *b, uint8_t kind, uint32_t thread); /* keeps memory */
void pf_block_free(pf_block *b);

/* The record encoders, one per row of records.h with the parameters its
 * fields call for, in their order: pf_put_string(b, id, text, text_len),
 * pf_put_thread(b, thread, os_tid, name), pf_put_region(b, name, kind,
 * depth, start, dur), ... pf_put_attr(b, key, name, value). Each appends
 * one record: PROF_ERR_LIMIT when a fixed block is full (or a growable one
 * reaches PF_BLOCK_RAW_MAX), PROF_ERR_NOMEM, PROF_ERR_INVALID for a region
 * kind past PF_TAG_REGION_LAST. Names are cut at PF_STRING_MAX bytes. */
#define PF_PUT_DECLARE(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS)                          \
    prof_err pf_put_##NAME(pf_block *b FIELDS(PF_PARAM));
PF_RECORDS(PF_PUT_DECLARE)
#undef PF_PUT_DECLARE

/* ---- file writer -------------------------------------------------------
 * Writes the header and metadata, then blocks, then on close the footer.
 * Definitions are collected in a pending block that is written before the
 * next block of events, which keeps every definition ahead of its uses.
 * One writer is used by one thread at a time.
 */
typedef struct pf_writer pf_writer;

/* level: zstd compression level (1..19; the recorder uses 3).
 * metadata: a JSON object as text. The file is created with O_TRUNC. */
prof_err pf_writer_open(pf_writer **out, const char *path, const char *metadata,
                        int level, prof_error *err);
/* Same over an open descriptor, which the writer then owns. */
prof_err pf_writer_open_fd(pf_writer **out, int fd, const char *metadata, int level,
                           prof_error *err);

prof_err pf_writer_define_string(pf_writer *w, uint32_t id, const char *s, size_t len);
prof_err pf_writer_define_thread(pf_writer *w, uint32_t thread, uint64_t os_tid,
                                 const char *name);
/* A name attribute; name and value must be defined already (or in the same
 * pending definitions, before it). */
prof_err pf_writer_define_attr(pf_writer *w, uint32_t key, uint32_t name, uint32_t value);

/* Writes pending definitions, then b compressed (if it has records), and
 * resets b for reuse. */
prof_err pf_writer_write_block(pf_writer *w, pf_block *b, prof_error *err);

/* The crash path: writes b uncompressed with no allocation and no lock
 * (async-signal-safe). Does not write pending definitions: the caller
 * encodes them into a fixed block of its own first. */
prof_err pf_writer_write_block_raw(pf_writer *w, pf_block *b);

/* The crash path's half of pending definitions: writes what
 * pf_writer_define_* collected, uncompressed, without allocating. */
prof_err pf_writer_write_pending_raw(pf_writer *w);

/* Replaces the metadata written at open by metadata, padded with blanks to
 * the same length (it must not be longer): for writers that learn the facts
 * of a run only at its end (the importers reserve room at open). The
 * descriptor must be seekable (pwrite). */
prof_err pf_writer_replace_metadata(pf_writer *w, const char *metadata, prof_error *err);

/* Writes pending definitions, the footer and the trailer, closes and frees.
 * Frees w even on failure. */
prof_err pf_writer_close(pf_writer *w, prof_error *err);

/* Closes the descriptor without a footer and frees (used after a fatal
 * write error, after fork in the child, and by tests of crashed files). */
void pf_writer_abandon(pf_writer *w);

/* The descriptor, for fsync or for the crash path. */
int pf_writer_fd(const pf_writer *w);

/* ---- the reader's own (reader.c) --------------------------------------- */

/* The tool's reader reads as its tuning says (util/tuning.h): with
 * helpers, ahead on a thread of t's pool; without (one core, or
 * PROF_THREADS=1), each block on demand; help as t->reader_help says.
 * Called before the first read; t is not kept. prof_reader_open alone
 * reads ahead on a thread of its own on a machine of two cores or more. */
void pf_reader_tune(prof_reader *r, const prof_tuning *t);

/* The time span of a cleanly closed file's events, as its footer's header
 * states it (the smallest first and largest last of its events blocks),
 * read without reading a block: 0 and *first, *last; -1 when the file has
 * no footer, or its header is damaged (reading will say so). */
int pf_reader_span(const prof_reader *r, uint64_t *first, uint64_t *last);

/* Whether r will read ahead on a thread (as opened and tuned). */
int pf_reader_threaded(const prof_reader *r);

/* Ends reading at once, as a failure of the caller's: the reader's thread
 * is stopped and joined and its batch function is never called again, so
 * that what the function writes may be freed (a tool whose building ran
 * out of memory halfway). Later reads return -1. */
void pf_reader_abandon(prof_reader *r);

/* ---- handing regions over slim (the model's loading) -------------------
 * A reader whose batch function numbers the regions it sees can hand them
 * over in 24 bytes each instead of 88, decoded once: where the reader has
 * a thread, decoding then runs there alone, where prof_reader_next_batch
 * decodes every block a second time on the caller's side (for a profile of
 * regions, a quarter of what the caller's thread does). */

#define PF_SLIM_WHOLE UINT32_MAX /* a tag: the event is handed over whole   */
#define PF_SLIM_DEPTH_MAX ((1u << 24) - 1) /* deeper regions go whole        */

/* A region, or the place of an event handed over whole. */
typedef struct pf_slim {
    uint64_t start_ns, dur_ns;
    uint32_t tag;        /* the slim function's number for the region, or
                            PF_SLIM_WHOLE: the batch's next whole event     */
    uint32_t depth_kind; /* depth << 8 | kind                                */
} pf_slim;

static inline uint32_t pf_slim_depth(const pf_slim *s)
{
    return s->depth_kind >> 8;
}

static inline uint32_t pf_slim_kind(const pf_slim *s)
{
    return s->depth_kind & 0xffu;
}

/* What pf_reader_next_slim hands over: a block's events, in file order;
 * a block of more than PF_SLIM_PART events in batches of that many, the
 * last of them fewer. */
#define PF_SLIM_PART 65536u
typedef struct pf_slim_batch {
    const pf_slim *slim;
    size_t count;
    const prof_event *whole; /* the events of the PF_SLIM_WHOLE entries   */
    uint32_t thread;         /* the profile thread of every region in it  */
    int seen;                /* the seen function was shown them          */
} pf_slim_batch;

/* A batch function that tags events: tags[i] is its number for
 * events[i], a region, which is then handed over slim with that tag, or
 * PF_SLIM_WHOLE to hand events[i] over whole (anything but a region is,
 * whatever its tag, and so are regions deeper than PF_SLIM_DEPTH_MAX).
 * A tag other than PF_SLIM_WHOLE holds for every later region of the same
 * name and kind: those are decoded straight into slim entries with it and
 * the function is not shown them, which is most of what makes slim
 * reading cheap. It is shown every other event, in file order, and now
 * and then such a region again (one near a block's end, decoded the
 * longer way), to which it must give the same tag. */
typedef void (*pf_slim_fn)(void *arg, const prof_event *events, size_t count,
                           uint32_t *tags);

/* Called after the slim function, on its thread, with what it tagged as
 * it will be handed out: count entries in file order, whole pointing to
 * the events of their PF_SLIM_WHOLE entries; in file order, but only for
 * the blocks that the reader's thread decodes while it is ahead of the
 * caller (half a ring of blocks ready), whose batches then say seen. Work
 * done there is taken off the caller's thread only while that thread is
 * the slower, so the caller does the same work for the other blocks, and
 * the two must give the same outcome (as merging sketches does). Without
 * a thread for the reader, no block is seen. */
typedef void (*pf_slim_seen_fn)(void *arg, const pf_slim *slim, size_t count,
                                const prof_event *whole);

/* Sets fn as the batch function (prof_reader_set_batch_fn's promises, for
 * seen; fn is not shown the regions above), seen (or NULL) with it, and
 * the events to be read with pf_reader_next_slim alone. The producer
 * decodes every block, on the reader's thread or, without one, on the
 * caller's when it is fetched. @return 0, or -1 when reading has begun or
 * memory ran out (nothing is set). */
int pf_reader_set_slim_fn(prof_reader *r, pf_slim_fn fn, pf_slim_seen_fn seen, void *arg);

/* The next block's events, slim (or the next PF_SLIM_PART of them). Whole
 * events' names are valid until closing; the batch until the next call.
 * Read slim from a file, the caller, when it would wait for the reader's
 * thread, fetches and decompresses the block after the one that thread is
 * fetching, and the thread takes it instead of fetching it itself
 * (reader_int.h, pf_help); decoding stays on the thread. The events are
 * the same either way. The tuning's reader_help (PROF_READER_HELP) turns
 * this off, or has the caller help before taking every block (tests).
 * Status and errors are those of prof_reader_next_batch, except memory
 * running out, for thread names or while decoding, which ends reading
 * before the batch rather than inside it.
 * @return 1 with *out (count >= 1); 0 at the end; -1 on an error. */
int pf_reader_next_slim(prof_reader *r, pf_slim_batch *out);

#endif /* PROF_FORMAT_H */
