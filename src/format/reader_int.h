/* reader_int.h - what the files of the .prof reader share, and no one else:
 * its state and the functions each file gives the others.
 *
 * The reader (include/prof_reader.h) is split by job:
 *   reader_source.c    the bytes: a regular file read with pread, or memory
 *   reader_header.c    the file header, the metadata and the trailer
 *   reader_block.c     fetching a block: header, checksums, zstd, windows
 *   reader_decode.c    decoding records into events; the string table
 *   reader_prefetch.c  fetching blocks, on a thread ahead of the caller
 *                      (file sources) or on demand
 *   reader.c           the public API: opening, decoding and handing
 *                      events out, the status, the footer check, closing
 *
 * Reading is split in two: a producer fetches blocks (reads them, checks
 * their checksums, decompresses them); the caller's side takes them in
 * order, decodes their records into batches of events with its own string
 * table, and keeps what the API shows (status, thread names, errors). The
 * producer depends only on the file's bytes (pf_file, fixed once opened),
 * so for files it runs on a second thread, up to PF_RING blocks ahead;
 * damage it meets is handed over as a value and acted on when the caller
 * reaches it, so events, status and errors are exactly those of reading on
 * one thread (what memory sources do). What crosses between the threads
 * is a block's decompressed bytes, about 8 bytes an event, not its decoded
 * events (88 bytes each): on machines whose cores share little cache,
 * moving the events cost more than decoding them. For the same reason a
 * batch function (prof_reader_set_batch_fn) runs on the producing thread
 * over events that thread decodes for it, with a string table of its own.
 * A slim function (pf_reader_set_slim_fn) goes further: the producer
 * decodes each block, on whichever thread it runs, into regions of 24
 * bytes and whole events for the rest (pf_slim_block), which the caller's
 * side hands out without decoding; moving a third as much as an event
 * costs less than decoding a region again, and the caller's decoder and
 * its string table then go unused. The tags the function gave regions are
 * kept by name and kind (pf_tag_cache), so that most regions are decoded
 * into their 24 bytes directly, with no event made and no call.
 *
 * Errors take one path. A fault is written with prof_error_set() into the
 * prof_error of the stage that finds it: the caller's err while opening,
 * the fetched block's (block_buf.err), the decoder's (decoder.err). The
 * producer hands it over by value in the item (pf_item.blk.err), and the
 * caller's side gives it its place, "block N at offset O: ", in one
 * function, reader_stop() in reader.c, which makes it the reader's error or,
 * for damage to a file that promised no footer, the status's detail of what
 * was cut. Functions that can fail return the prof_err they set, or, where
 * the result says more (a fetch outcome, a decoded record), a value that
 * says a fault is in their stage's prof_error.
 */
#ifndef PROF_FORMAT_READER_INT_H
#define PROF_FORMAT_READER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include <zstd.h>

#include "format/format.h"

/* The reader's own memory, not limits of the format. */
#define ARENA_CHUNK (64u << 10) /* strings and thread names are kept in these */
#define BATCH_EVENTS 2048u      /* events decoded per batch                   */
/* Blocks in flight, the caller's included. A waiting side is woken when
 * half the ring is ready for it, so the ring sets how often the threads
 * sleep and wake. A slot keeps its buffers for the next block unless they
 * grew past PF_SLOT_KEEP (freed as the caller gives the slot back); and
 * past the first block ahead, the producer waits while the blocks ahead
 * hold PF_AHEAD_BYTES: large blocks are rare (the recorder writes tens of
 * kilobytes), and reading ahead must not hold PF_RING of the largest a
 * file may have. Read slim, a block's decoded events are held too, in
 * parts of at most PF_SLIM_PART (pf_slim_block). */
#define PF_RING 8
#define PF_SLOT_KEEP (1u << 20)
#define PF_AHEAD_BYTES (8u << 20)

/* What opening learned of the file, fixed from then on: all of the reader
 * that the producing thread reads besides its own state. */
typedef struct pf_file {
    int fd;                 /* -1 for memory sources                      */
    const uint8_t *mem;     /* memory sources: the bytes                  */
    uint64_t size;
    uint64_t first_block;   /* the header length: where blocks begin      */
    int has_trailer;        /* a trailer promised a footer ...            */
    uint64_t footer_offset; /* ... at this offset                         */
} pf_file;

/* A buffer that grows to the largest read and is reused. */
typedef struct pf_buf {
    uint8_t *data;
    size_t cap;
} pf_buf;

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
} arena_chunk;

typedef enum fetch_outcome {
    FETCH_BLOCK,    /* events of a block                                   */
    FETCH_SKIP,     /* an events block outside the window: stored_len      */
    FETCH_FOOTER,   /* the footer the trailer promised                     */
    FETCH_END,      /* no more blocks, nothing lost                        */
    FETCH_CUT       /* damage at the block's offset: err                   */
} fetch_outcome;

/* One block as fetched from the file, with the buffers that hold it. */
typedef struct block_buf {
    prof_error err;         /* FETCH_CUT: what is wrong                   */
    uint64_t next;          /* offset of the following block header      */
    uint32_t records, thread, rawlen;
    uint32_t stored_len;    /* as the header says (FETCH_SKIP: skip these) */
    uint64_t skipped, skipped_bytes; /* pf_block_fetch: blocks skipped
                                        before this one, their payload bytes */
    const uint8_t *payload;
    pf_buf stored;          /* header and payload as stored (files)       */
    pf_buf raw;             /* decompressed payload                       */
} block_buf;

/* The time window of prof_reader_set_window, as fetching sees it. */
typedef struct fetch_window {
    int on;
    uint64_t from, to;
} fetch_window;

/* A defined string: names handed out point at text. */
typedef struct pf_string {
    const char *text;
    uint32_t len;
} pf_string;

/* Record decoding: the block being decoded and the string table. */
typedef struct decoder {
    const uint8_t *p, *end; /* undecoded records of the current block     */
    uint32_t left;          /* records left in it                         */
    uint32_t thread;
    uint64_t cursor;
    pf_string *strings;     /* by id; text NULL when undefined            */
    size_t cap_strings;
    uint64_t text;          /* definition text kept, against PF_TEXT_MAX  */
    arena_chunk *arena;     /* strings and thread names, until closing    */
    prof_error err;         /* damage found, or memory that ran out       */
} decoder;

/* The slim function's tags by name id, for regions (pf_decode_slim): the
 * tag in the low 32 bits, the region kind + 1 in the high ones; 0 none. */
typedef struct pf_tag_cache {
    uint64_t *v;
    size_t n;
} pf_tag_cache;

/* The header of the block after the last payload a fetcher read from a
 * file, read with that payload: one system call a block, not two, on the
 * reading thread (reader_block.c). at is its offset; 0 none, as no block
 * starts there. */
typedef struct pf_peek {
    uint64_t at;
    uint8_t bytes[PF_BLOCK_HEADER_LEN];
} pf_peek;

/* The producer's state: where it is in the file; and, for a batch
 * function run on the producing thread, the decoder and the batch it
 * decodes into. */
typedef struct producer {
    ZSTD_DCtx *dctx;
    pf_buf stage;           /* zstd's output on the thread (pf_block_fetch),
                               at most PF_SLOT_KEEP                        */
    fetch_window win;
    uint64_t offset;        /* next block header to fetch                 */
    decoder dec;            /* the batch or slim function's: on the thread,
                               or on the caller's side without one        */
    prof_event *events;     /* its batch, BATCH_EVENTS allocated          */
    prof_batch_fn batch_fn; /* prof_reader_set_batch_fn, or NULL          */
    pf_slim_fn slim_fn;     /* pf_reader_set_slim_fn, or NULL             */
    pf_slim_seen_fn slim_seen; /* and its second function, or NULL        */
    void *batch_arg;
    uint32_t *tags;         /* slim_fn's, BATCH_EVENTS allocated          */
    pf_tag_cache cache;     /* the tags it gave regions, by name id       */
    int cont;               /* dec is in a block handed over in parts,
                               whose buffers it holds in held             */
    block_buf held;
    pf_peek peek;           /* its fetches'                               */
} producer;

/* A block decoded by the producer for pf_reader_next_slim, or a part of
 * one (PF_SLIM_PART: what is decoded ahead stays bounded as the bytes
 * are, though an event whole takes 88 bytes and its record as few as 3). */
typedef struct pf_slim_block {
    pf_slim *v;             /* every event, in file order                 */
    size_t n, cap;
    prof_event *whole;      /* those handed over whole                    */
    size_t nwhole, cap_whole;
    prof_error fault;       /* what ended the block after them, or PROF_OK */
    int seen;               /* slim_seen was shown them                   */
} pf_slim_block;

/* What the producer hands over, in file order: what fetching a block gave,
 * with the block's bytes. blk says which blocks the window skipped first
 * (skipped, skipped_bytes); FETCH_BLOCK: the block to decode; FETCH_FOOTER:
 * its payload; FETCH_CUT: the damage, in blk.err. */
typedef struct pf_item {
    fetch_outcome what;
    block_buf blk;          /* its buffers are the slot's, reused         */
    pf_slim_block slim;     /* FETCH_BLOCK with a slim function: decoded  */
    int cont;               /* FETCH_BLOCK: a further part of the block
                               before (slim), of which blk says only the
                               thread; not counted again                  */
    uint64_t bytes;         /* the block's bytes, against PF_AHEAD_BYTES  */
} pf_item;

/* The caller's help with the producer's work (reader_prefetch.c). Read
 * slim, the producer decompresses and decodes every block, and the caller
 * can be left waiting for it. A waiting caller fetches (reads, checks and
 * decompresses) the block after the one the producer is fetching, into
 * blk and stage, and says it is ready; the producer, come to that block,
 * takes it instead of fetching it (swapping stages), or drops it when it
 * is past it. Decoding stays on the producer, in file order. Only a block
 * fetched whole into the stage is handed over: any other outcome
 * (damage, the footer, a block too large for the stage) the producer
 * meets again by fetching it itself, as without help. */
enum { PF_HELP_IDLE, PF_HELP_READY };

typedef struct pf_help {
    atomic_int state;       /* PF_HELP_READY: blk and at are the producer's
                               to take; else the caller's                  */
    _Atomic uint64_t fetching; /* set by the producer: the block it is
                               fetching; 0 none                           */
    uint64_t asked;         /* the caller's: the last fetching it helped   */
    uint64_t at;            /* blk's offset                                */
    block_buf blk;          /* its payload in stage                        */
    pf_buf stage;
    ZSTD_DCtx *dctx;        /* the caller's own; created at the first help */
    pf_peek peek;           /* its fetches'                                */
    int always;             /* tests: help before taking every item        */
    uint64_t taken;         /* the producer's: blocks it took              */
} pf_help;

/* The producing thread and the ring it fills: ring[taken % N] is the
 * caller's, the thread fills ring[filled % N] while filled - taken < N
 * (and the bytes ahead allow).
 * A side that finds nothing to do spins a while on the counters before it
 * sleeps on cv: when both sides take about as long, each waits on the
 * other thousands of times a read, and a sleep and a wake cost a system
 * call each (futex), far more than the wait. The store of a counter and
 * the load of the other side's flag are sequentially consistent, and so
 * are the flag's store and the counter's load, so that a side going to
 * sleep either sees the counter moved or is seen to sleep. */
typedef struct prefetch {
    pool_job job;           /* the producer's thread                      */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic uint64_t filled, taken;
    _Atomic uint64_t ahead; /* bytes of the items filled and not taken   */
    int holding;            /* the caller holds ring[taken % N]           */
    atomic_int stop;
    atomic_int producer_waits, caller_waits; /* asleep (or going to sleep) on cv */
    pf_help help;           /* read slim with no window, else unused       */
    int helped;             /* help.blk may be given: slim, no window      */
    struct prof_reader *r;
} prefetch;

typedef struct thread_info {
    const char *name;
    uint64_t os_tid;
} thread_info;

struct prof_reader {
    pf_file file;           /* read by the producer: never written after
                               opening                                   */
    char *meta;
    unsigned major, minor;
    int done;

    uint64_t offset;        /* next block header                          */
    uint64_t block_offset;  /* header of the block being decoded          */
    producer prod;          /* the producer's alone while pf runs         */
    pf_item ring[PF_RING];  /* ring[0] alone without pf                   */
    prefetch *pf;           /* NULL: blocks are fetched on demand         */
    int want_prefetch;      /* start pf at the first block (file sources) */
    prof_pool *pool;        /* pf's thread's; NULL: a thread of its own    */
    tuning_help help;       /* pf_reader_tune                             */
    int block_left;         /* the block fetched last has records left    */
    pf_item *item;          /* that block's item (slim: handed out whole)  */
    decoder dec;            /* the events handed out are this one's       */
    prof_event *events;     /* the batch being handed out, BATCH_EVENTS   */
    uint32_t nevents, next_event;
    prof_error fault;       /* what ended the block, after those events   */

    thread_info *threads;   /* by index, as of the events handed out; a
                               NULL name: not defined                    */
    size_t cap_threads;

    int windowed;           /* prof_reader_set_window() was called        */
    uint64_t win_from, win_to;
    uint64_t skipped_blocks, skipped_bytes;

    prof_read_status st;
    prof_error err;
    uint64_t helped;        /* blocks the producer took from the caller    */
};

/* ---- reader_source.c ---------------------------------------------------- */

/* Room for len bytes in buf, its data never NULL (a block's payload + 0
 * is formed): 0, or -1 when memory ran out (buf as it was). */
int pf_buf_reserve(pf_buf *buf, size_t len);

/* Opens path for reading, refusing at once anything but a regular file. A
 * descriptor with sb filled, or -1 with the error in err. */
int pf_source_open(const char *path, struct stat *sb, prof_error *err);

/* len bytes at off of f, which the caller checked are in the file: *out
 * points to them, read into buf for files, in place for memory. On a fault
 * err says nomem when memory ran out, "read failed: ..." otherwise. */
prof_err pf_source_read(const pf_file *f, uint64_t off, size_t len, const uint8_t **out,
                        pf_buf *buf, prof_error *err, const char *nomem);

/* pf_source_read, reading from a file up to more bytes after the len in
 * the same call, as many as it still has: *extra says how many came (0
 * for memory, which is read in place). */
prof_err pf_source_read_ahead(const pf_file *f, uint64_t off, size_t len, size_t more,
                              const uint8_t **out, size_t *extra, pf_buf *buf, prof_error *err,
                              const char *nomem);

/* ---- reader_header.c ---------------------------------------------------- */

/* Reads and checks the file header, the metadata and the trailer: fills
 * r->file (first_block, has_trailer, footer_offset), r->major, r->minor,
 * r->meta and the status's bytes_read. r->file's source must be set. */
prof_err pf_read_header(prof_reader *r, prof_error *err);

/* ---- reader_block.c ------------------------------------------------------ */

/* Reads, checks and unpacks the block at offset into b, going on past the
 * events blocks the window excludes (counted in b), so that a run of them
 * costs one hand-over. Uses only f, dctx and stage: it runs on the
 * producer's thread. With stage->buf (the producing thread's), zstd writes
 * there and the bytes are then copied into b: the slot's lines were last
 * read by the caller's core, and zstd's stores into them, each waiting for
 * that core to give its line up, made decompression 1.7 times as long,
 * where one copy moves them for a few percent. With stage->decoded_here
 * too (read slim: the producer decodes each block before it fetches the
 * next, and hands over only what it decoded), no copy is made: the
 * payload stays in the stage. Blocks over PF_SLOT_KEEP, and all of them
 * without a stage (on demand, on the caller's side), are written into b
 * by zstd: the stage stays within PF_SLOT_KEEP. */
typedef struct pf_stage {
    pf_buf *buf;           /* NULL: none                                   */
    int decoded_here;      /* blocks but the footer may stay in buf         */
    pf_peek *peek;         /* the fetcher's, or NULL                        */
} pf_stage;

fetch_outcome pf_block_fetch(const pf_file *f, ZSTD_DCtx *dctx, const pf_stage *stage,
                             const fetch_window *win, uint64_t offset, block_buf *b);
/* The offset of the block after the one whose header is at offset, if that
 * header is there and checks (from peek, or read into b->stored); else 0. */
uint64_t pf_block_after(const pf_file *f, const pf_peek *peek, uint64_t offset, block_buf *b);
void pf_block_buf_free(block_buf *b);

/* ---- reader_decode.c ---------------------------------------------------- */

/* Starts decoding the records of the block b holds. */
void pf_decode_block(decoder *d, const block_buf *b);

/* Decodes records of the current block into events (BATCH_EVENTS of
 * room), counted in *n, until the batch is full (0) or the block ends (1).
 * A fault ends the block too, said in fault. */
int pf_decode_batch(decoder *d, prof_event *events, uint32_t *n, prof_error *fault);

/* Decodes records of the current block into at most room slim entries, in
 * *n: a region whose name id and kind have a tag in tc as its slim entry,
 * anything else into events (BATCH_EVENTS of room, counted in *nevents)
 * with an entry of tag PF_SLIM_WHOLE whose start_ns is its index there.
 * Returns as pf_decode_batch: 0 when room or events ran out, 1 when the
 * block ended, or a fault did (in fault). */
int pf_decode_slim(decoder *d, const pf_tag_cache *tc, pf_slim *out, uint32_t room,
                   uint32_t *n, prof_event *events, uint32_t *nevents, prof_error *fault);

void pf_decoder_free(decoder *d);

/* ---- reader_prefetch.c --------------------------------------------------- */

/* The next item: handed over by the producing thread (the one before it
 * is given back), or fetched now. Starts the thread at the first call for
 * a reader that wants it. */
pf_item *pf_item_next(prof_reader *r);

/* Frees what a slot's slim block holds. */
void pf_slim_block_free(pf_slim_block *s);

/* Stops the producing thread, if one runs; before the source is closed. */
void pf_prefetch_stop(prof_reader *r);

#endif
