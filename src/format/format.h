/* format.h - the .prof codec shared by the recorder and the reader: on-disk
 * constants, the block encoder and the file writer.
 *
 * Every number in this file is part of the file format specified in
 * formats/prof-format.md. They are frozen: never renumber or reuse one,
 * only add. Change this file and the spec together.
 */
#ifndef PROF_FORMAT_H
#define PROF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "prof_reader.h"

/* ---- file header ---------------------------------------------------- */

#define PF_MAGIC "\x89PROF\r\n\x1a" /* 8 bytes, no NUL stored              */
#define PF_MAGIC_LEN 8
#define PF_VERSION_MAJOR 1
#define PF_VERSION_MINOR 1 /* 1.1: the name attribute record         */
#define PF_FILE_HEADER_LEN 24       /* magic, major, minor, header length,
                                       metadata length, header crc32c      */
#define PF_METADATA_MAX (16u << 20) /* readers refuse larger metadata       */

/* ---- blocks ---------------------------------------------------------- */

#define PF_BLOCK_MAGIC 0x4B4C4250u /* "PBLK" as little-endian bytes          */
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

/* ---- records --------------------------------------------------------- */

enum pf_tag {
    PF_TAG_STRING = 0x01,     /* id, length, bytes                         */
    PF_TAG_THREAD = 0x02,     /* thread, os tid, name length, bytes        */
    PF_TAG_REGION = 0x10,     /* 0x10 + kind (0..4): name, depth, dt, dur  */
    PF_TAG_REGION_LAST = 0x14,
    PF_TAG_STEP = 0x20,       /* number, flags, dt, dur                    */
    PF_TAG_MEMORY = 0x21,     /* series, dt, bytes                         */
    PF_TAG_COUNTER = 0x22,    /* name, dt, f64                             */
    PF_TAG_MARK = 0x23,       /* name, dt                                  */
    PF_TAG_DROPPED = 0x24,    /* count, dt                                 */
    PF_TAG_GPU_KERNEL = 0x30, /* name, device, stream, correlation, dt, dur */
    PF_TAG_GPU_MEMCPY = 0x31, /* copy kind, device, stream, correlation,
                                 bytes, dt, dur                            */
    PF_TAG_GPU_MEMSET = 0x32, /* device, stream, correlation, bytes, dt, dur */
    PF_TAG_SYNC = 0x33,       /* sync kind, device, stream, correlation, dt,
                                 dur                                       */
    PF_TAG_API = 0x34,        /* name, correlation, dt, dur                */
    PF_TAG_EXTENSION = 0x80,  /* 0x80..0xFF: length, bytes; skipped by
                                 readers that do not know the tag          */
    PF_TAG_ATTR = 0x80        /* 1.1: length, then key, name, value        */
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
 * hostile file can compress 64 MiB of text into a few kilobytes. */
#define PF_STRING_IDS (1u << 22)  /* string ids are 1 .. PF_STRING_IDS - 1   */
#define PF_THREADS (1u << 20)     /* thread indices are below this           */
#define PF_TEXT_MAX (256u << 20)  /* bytes of definition text in one file    */

/* ---- footer ---------------------------------------------------------- */

#define PF_TRAILER_MAGIC "\x89PROFEND" /* 8 bytes                          */
#define PF_TRAILER_LEN 16              /* footer block offset u64, magic   */
#define PF_FOOTER_FIXED 40             /* five u64 totals before the index */
#define PF_INDEX_ENTRY_LEN 32          /* offset, first, last, thread, count */

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

prof_err pf_put_string(pf_block *b, uint32_t id, const char *s, size_t len);
prof_err pf_put_thread(pf_block *b, uint32_t thread, uint64_t os_tid, const char *name);
prof_err pf_put_region(pf_block *b, uint32_t name, uint32_t kind, uint32_t depth,
                       uint64_t start, uint64_t dur);
prof_err pf_put_step(pf_block *b, uint64_t number, uint32_t flags, uint64_t start,
                     uint64_t dur);
prof_err pf_put_memory(pf_block *b, uint32_t series, uint64_t t, uint64_t bytes);
prof_err pf_put_counter(pf_block *b, uint32_t name, uint64_t t, double value);
prof_err pf_put_mark(pf_block *b, uint32_t name, uint64_t t);
prof_err pf_put_dropped(pf_block *b, uint64_t count, uint64_t t);
prof_err pf_put_gpu_kernel(pf_block *b, uint32_t name, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t start, uint64_t dur);
prof_err pf_put_gpu_memcpy(pf_block *b, uint32_t copy_kind, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t bytes, uint64_t start, uint64_t dur);
prof_err pf_put_gpu_memset(pf_block *b, uint32_t device, uint32_t stream,
                           uint64_t correlation, uint64_t bytes, uint64_t start, uint64_t dur);
prof_err pf_put_sync(pf_block *b, uint32_t sync_kind, uint32_t device, uint32_t stream,
                     uint64_t correlation, uint64_t start, uint64_t dur);
prof_err pf_put_api(pf_block *b, uint32_t name, uint64_t correlation, uint64_t start,
                    uint64_t dur);
/* A name attribute: a definition, not an event (it touches no time). */
prof_err pf_put_attr(pf_block *b, uint32_t key, uint32_t name, uint32_t value);

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
uint64_t pf_writer_offset(const pf_writer *w);

/* ---- little-endian helpers shared by the writer and reader ------------ */

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

#endif /* PROF_FORMAT_H */
