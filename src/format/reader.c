/* reader.c - the streaming .prof reader behind include/prof_reader.h.
 *
 * Walks blocks in file order, checks every header and payload checksum,
 * decompresses one block at a time into a reused buffer and decodes its
 * records lazily, one event per call. A file with a trailer promised a
 * footer, so any damage in it is an error; a file without one is a run
 * that was cut short, so reading stops quietly at the first damaged block
 * and the status says what was lost.
 *
 * Reading is split in two: a producer fetches blocks (read, checksums,
 * zstd) and decodes their records into batches of events, carrying the
 * string table; the caller's side takes the batches in order and keeps
 * what the API shows (status, thread names, errors). The producer depends
 * only on the file's bytes, so for files it runs on a second thread, up to
 * BATCH_RING batches ahead; damage it meets is handed over as a value and
 * acted on when the caller reaches it, so events, status and errors are
 * exactly those of reading on one thread (what memory sources do). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zstd.h>

#include "format/format.h"
#include "format/varint.h"
#include "util/crc32c.h"
#include "util/error.h"

#define ARENA_CHUNK (64u << 10)
#define BATCH_EVENTS 2048u /* events decoded per batch */
#define BATCH_RING 4       /* batches in flight, the caller's included */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
} arena_chunk;

typedef struct thread_info {
    const char *name;
    uint64_t os_tid;
} thread_info;

typedef enum fetch_outcome {
    FETCH_BLOCK,    /* events of a block                                   */
    FETCH_SKIP,     /* an events block outside the window: stored_len      */
    FETCH_FOOTER,   /* the footer the trailer promised                     */
    FETCH_END,      /* no more blocks, nothing lost                        */
    FETCH_CUT       /* damage at the block's offset: code, msg             */
} fetch_outcome;

/* One block as fetched from the file, with the buffers that hold it. */
typedef struct block_buf {
    prof_err code;
    char msg[128];
    uint64_t next;          /* offset of the following block header      */
    uint32_t records, thread, rawlen, stored_len;
    uint64_t skipped, skipped_bytes; /* block_fetch_window: blocks skipped
                                        before this one, their payload bytes */
    const uint8_t *payload;
    uint8_t *stored;        /* payload as stored (file sources)           */
    size_t stored_cap;
    uint8_t *raw;           /* decompressed payload                       */
    size_t raw_cap;
} block_buf;

/* The time window of prof_reader_set_window, as fetching sees it. */
typedef struct fetch_window {
    int on;
    uint64_t from, to;
} fetch_window;

/* Record decoding: the block being decoded and the string table. */
typedef struct decoder {
    const uint8_t *p, *end; /* undecoded records of the current block     */
    uint32_t left;          /* records left in it                         */
    uint32_t thread;
    uint64_t cursor;
    const char **strings;   /* by id; NULL when undefined                 */
    uint32_t *lens;         /* by id: the length of each defined string   */
    uint32_t nstrings;
    uint64_t text;          /* definition text kept, against PF_TEXT_MAX  */
    arena_chunk *arena;     /* strings and thread names, until closing    */
    prof_err bad_code;      /* damage found (or memory that ran out) and  */
    char bad_msg[128];      /* what the error will say                    */
} decoder;

/* The producer's state: where it is in the file and in the block. */
typedef struct producer {
    ZSTD_DCtx *dctx;
    block_buf blk;
    fetch_window win;
    uint64_t offset;        /* next block header to fetch                 */
    int in_block;           /* records of blk are left to decode          */
    decoder dec;
} producer;

/* What the producer hands over, in file order: the events of a block (the
 * first batch of each block says so), or the outcome of fetching one. */
typedef struct batch {
    fetch_outcome what;
    int begins;             /* FETCH_BLOCK: the first batch of its block  */
    uint64_t next;          /* begins: offset after the block             */
    uint32_t stored_len;    /* FETCH_SKIP                                 */
    uint64_t skipped, skipped_bytes; /* blocks the window skipped first   */
    prof_event *events;     /* FETCH_BLOCK, BATCH_EVENTS allocated        */
    uint32_t nevents;
    int bad;                /* FETCH_BLOCK: an error after the events     */
    prof_err code;          /* FETCH_CUT, or bad                          */
    char msg[128];
    uint8_t footer[PF_FOOTER_FIXED]; /* FETCH_FOOTER: its fixed part      */
    size_t footer_len;
} batch;

/* The producing thread and the ring it fills: ring[taken % N] is the
 * caller's, the thread fills ring[filled % N] while filled - taken < N. */
typedef struct prefetch {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t filled, taken;
    int holding;            /* the caller holds ring[taken % N]           */
    int stop;
    int producer_waits, caller_waits; /* asleep on cv: wake only then,
                                        the producer at half a ring free */
    struct prof_reader *r;
} prefetch;

struct prof_reader {
    int fd;                 /* -1 for memory sources                      */
    const uint8_t *mem;
    uint64_t size;
    char *meta;
    unsigned major, minor;

    int has_trailer;
    uint64_t footer_offset;
    int done;

    uint64_t offset;        /* next block header                          */
    uint64_t block_offset;  /* header of the block being decoded          */
    producer prod;          /* the producer's alone while pf runs         */
    batch ring[BATCH_RING]; /* ring[0] alone without pf                   */
    prefetch *pf;           /* NULL: batches are produced on demand       */
    int want_prefetch;      /* start pf at the first block (file sources) */
    batch *cur;             /* the batch being handed out                 */
    uint32_t next_event;    /* its next event                             */
    ZSTD_DCtx *dctx;

    thread_info *threads;   /* as of the events handed out                */
    uint32_t nthreads;

    int windowed;           /* prof_reader_set_window() was called        */
    uint64_t win_from, win_to;
    uint64_t skipped_blocks, skipped_bytes;

    prof_read_status st;
    prof_error err;
};

/* size bytes that live until the reader is closed, or NULL. */
static char *arena_alloc(decoder *d, size_t size)
{
    arena_chunk *c = d->arena;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = d->arena;
        c->used = 0;
        c->cap = cap;
        d->arena = c;
    }
    char *out = c->data + c->used;
    c->used += size;
    return out;
}

static const char *arena_strdup(decoder *d, const uint8_t *s, size_t len)
{
    char *out = arena_alloc(d, len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

/* Reads len bytes at off; returns the bytes or NULL with errno set. For
 * memory sources nothing is copied. */
static const uint8_t *source_read(const prof_reader *r, uint64_t off, size_t len, uint8_t **buf,
                                  size_t *cap)
{
    if (r->mem)
        return r->mem + off;
    if (len > *cap) {
        uint8_t *b = realloc(*buf, len);
        if (!b) {
            errno = ENOMEM;
            return NULL;
        }
        *buf = b;
        *cap = len;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(r->fd, *buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO; /* the file shrank under us */
            return NULL;
        }
        got += (size_t)n;
    }
    return *buf;
}

/* A failed source_read (its errno e) as an error: memory that ran out is
 * not I/O. Frees the read buffer. */
static prof_err read_failed(prof_error *err, int e, uint8_t *tmp)
{
    free(tmp);
    if (e == ENOMEM)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    return prof_error_set(err, PROF_ERR_IO, "read failed: %s", strerror(e));
}

static prof_err parse_header(prof_reader *r, prof_error *err)
{
    uint8_t hb[PF_FILE_HEADER_LEN];
    uint8_t *tmp = NULL;
    size_t tmpcap = 0;
    if (r->size == 0)
        return prof_error_set(err, PROF_ERR_EMPTY, "empty file (0 bytes)");
    size_t first = r->size < PF_FILE_HEADER_LEN ? (size_t)r->size : PF_FILE_HEADER_LEN;
    const uint8_t *h = source_read(r, 0, first, &tmp, &tmpcap);
    if (!h)
        return read_failed(err, errno, tmp);
    memcpy(hb, h, first);
    free(tmp);
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

static prof_err parse_metadata(prof_reader *r, prof_error *err)
{
    uint8_t hb[PF_FILE_HEADER_LEN];
    uint8_t *tmp = NULL;
    size_t tmpcap = 0;
    const uint8_t *h = source_read(r, 0, PF_FILE_HEADER_LEN, &tmp, &tmpcap);
    if (!h)
        return read_failed(err, errno, tmp);
    memcpy(hb, h, sizeof hb);
    pf_file_header fh;
    pf_file_header_load(hb, &fh);
    uint32_t hlen = fh.header_len, mlen = fh.meta_len;
    if (mlen > PF_METADATA_MAX || hlen != PF_FILE_HEADER_LEN + mlen) {
        free(tmp);
        return prof_error_set(err, PROF_ERR_CORRUPT, "bad header lengths (%u, %u)", hlen, mlen);
    }
    if (r->size < hlen) {
        free(tmp);
        return prof_error_set(err, PROF_ERR_TRUNCATED,
                              "file cut short inside its metadata (%llu of %u bytes)",
                              (unsigned long long)(r->size - PF_FILE_HEADER_LEN), mlen);
    }
    const uint8_t *m = source_read(r, PF_FILE_HEADER_LEN, mlen, &tmp, &tmpcap);
    prof_err e = PROF_OK;
    if (!m)
        e = read_failed(err, errno, NULL); /* tmp is freed below */
    else if (pf_file_header_crc(hb, m, mlen) != fh.crc)
        e = prof_error_set(err, PROF_ERR_CORRUPT, "header checksum mismatch");
    else if (!(r->meta = malloc((size_t)mlen + 1)))
        e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    else {
        memcpy(r->meta, m, mlen);
        r->meta[mlen] = '\0';
        /* the NUL included: one object and nothing after it (but space) */
        cJSON *j = cJSON_ParseWithLengthOpts(r->meta, (size_t)mlen + 1, NULL, 1);
        if (!j || !cJSON_IsObject(j))
            e = prof_error_set(err, PROF_ERR_CORRUPT, "metadata is not a JSON object");
        cJSON_Delete(j);
    }
    free(tmp);
    r->offset = hlen;
    r->st.bytes_read = hlen;
    return e;
}

/* A trailer at the very end promises a footer at the offset it names. */
static void find_trailer(prof_reader *r)
{
    uint8_t *tmp = NULL;
    size_t tmpcap = 0;
    if (r->size < r->offset + PF_BLOCK_HEADER_LEN + PF_TRAILER_LEN)
        return;
    const uint8_t *t = source_read(r, r->size - PF_TRAILER_LEN, PF_TRAILER_LEN, &tmp, &tmpcap);
    pf_trailer tr;
    if (t && pf_trailer_load(t, &tr) == 0) {
        uint64_t off = tr.footer_offset;
        if (off >= r->offset && off <= r->size - PF_TRAILER_LEN - PF_BLOCK_HEADER_LEN) {
            r->has_trailer = 1;
            r->footer_offset = off;
        }
    }
    free(tmp);
}

static prof_err reader_init(prof_reader *r, prof_error *err)
{
    prof_err e = parse_header(r, err);
    if (e == PROF_OK)
        e = parse_metadata(r, err);
    if (e != PROF_OK)
        return e;
    if (!(r->dctx = ZSTD_createDCtx()))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    r->prod.dctx = r->dctx;
    r->st.file_size = r->size;
    find_trailer(r);
    r->prod.offset = r->offset;
    return PROF_OK;
}

/* What a file that is not a regular one is, for the error message. */
static const char *file_type_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "is a directory";
    if (S_ISFIFO(mode))
        return "not a regular file (a FIFO)";
    if (S_ISCHR(mode))
        return "not a regular file (a character device)";
    if (S_ISBLK(mode))
        return "not a regular file (a block device)";
    if (S_ISSOCK(mode))
        return "not a regular file (a socket)";
    return "not a regular file";
}

/* Opens path for reading, refusing at once anything but a regular file: a
 * FIFO is opened without waiting for a writer (O_NONBLOCK), a terminal
 * never becomes the controlling one. The descriptor is blocking again on
 * return. A descriptor, or -1 with the error in err. */
static int open_regular(const char *path, struct stat *sb, prof_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        prof_error_set(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
        return -1;
    }
    const char *why = NULL;
    int flags;
    if (fstat(fd, sb) < 0)
        why = strerror(errno);
    else if (!S_ISREG(sb->st_mode))
        why = file_type_name(sb->st_mode);
    else if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
        why = strerror(errno);
    if (why) {
        prof_error_set(err, PROF_ERR_IO, "cannot read: %s", why);
        close(fd);
        return -1;
    }
    return fd;
}

prof_err prof_reader_open(const char *path, prof_reader **out, prof_error *err)
{
    struct stat sb;
    prof_reader *r;
    *out = NULL;
    int fd = open_regular(path, &sb, err);
    if (fd < 0)
        return PROF_ERR_IO;
    if (!(r = calloc(1, sizeof *r))) {
        close(fd);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    r->fd = fd;
    r->size = (uint64_t)sb.st_size;
    prof_err e = reader_init(r, err);
    if (e != PROF_OK) {
        prof_reader_close(r);
        return e;
    }
    r->want_prefetch = 1;
    *out = r;
    return PROF_OK;
}

prof_err prof_reader_open_memory(const void *data, size_t size, prof_reader **out,
                                 prof_error *err)
{
    prof_reader *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    r->fd = -1;
    r->mem = data;
    r->size = size;
    prof_err e = reader_init(r, err);
    if (e != PROF_OK) {
        prof_reader_close(r);
        return e;
    }
    *out = r;
    return PROF_OK;
}

/* Damage at r->offset. In a file that promised a footer it is an error;
 * otherwise the intact part ends here. Memory that ran out and a read that
 * failed are errors either way: the file itself may be whole. Returns
 * next()'s result. */
static int reader_cut(prof_reader *r, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reader_cut(prof_reader *r, prof_err code, const char *fmt, ...)
{
    char msg[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->done = 1;
    if (r->has_trailer || code == PROF_ERR_NOMEM || code == PROF_ERR_IO) {
        prof_error_set(&r->err, code, "block %llu at offset %llu: %s",
                       (unsigned long long)r->st.blocks, (unsigned long long)r->offset, msg);
        return -1;
    }
    r->st.truncated = 1;
    r->st.bytes_lost = r->size - r->offset;
    snprintf(r->st.detail, sizeof r->st.detail, "block %llu at offset %llu: %s",
             (unsigned long long)r->st.blocks, (unsigned long long)r->offset, msg);
    return 0;
}

/* An error in the block being decoded (damage, a limit, memory that ran
 * out): reading ends. Returns -1, next()'s result. */
static int reader_fail(prof_reader *r, prof_err code, const char *msg)
{
    r->done = 1;
    prof_error_set(&r->err, code, "block %llu at offset %llu: %s",
                   (unsigned long long)r->st.blocks - 1,
                   (unsigned long long)r->block_offset, msg);
    return -1;
}

/* Checks the footer against what was read. Returns next()'s result. */
static int reader_footer(prof_reader *r, const uint8_t *p, size_t len)
{
    r->done = 1;
    /* The records of skipped blocks were not counted: only the block count
     * can be checked then. */
    int totals = r->skipped_blocks == 0;
    pf_footer f = { 0 };
    if (len >= PF_FOOTER_FIXED)
        pf_footer_load(p, &f);
    if (len < PF_FOOTER_FIXED || f.blocks != r->st.blocks ||
        (len - PF_FOOTER_FIXED) != r->st.blocks * PF_INDEX_ENTRY_LEN ||
        (totals && (f.events != r->st.events || f.dropped != r->st.dropped_events))) {
        prof_error_set(&r->err, PROF_ERR_CORRUPT,
                       "footer at offset %llu does not match the %llu blocks read",
                       (unsigned long long)r->offset, (unsigned long long)r->st.blocks);
        return -1;
    }
    r->st.clean = 1;
    r->st.bytes_read = r->size;
    return 0;
}

/* An events block none of whose timed records can meet the window: its
 * header's first and last bound every record's start and end (§5.1). */
static int window_excludes(const fetch_window *w, const pf_block_header *h)
{
    return w->on && (h->last < w->from || h->first > w->to);
}

/* Steps over the n blocks (bytes of payload) the window skipped before the
 * one fetched, as if each had been read. */
static void skip_blocks(prof_reader *r, uint64_t n, uint64_t bytes)
{
    r->offset += n * PF_BLOCK_HEADER_LEN + bytes;
    r->st.bytes_read = r->offset;
    r->st.blocks += n;
    r->skipped_blocks += n;
    r->skipped_bytes += bytes;
}

/* Damage found while fetching: the message reader_cut will give. */
static fetch_outcome fetch_cut(block_buf *b, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static fetch_outcome fetch_cut(block_buf *b, prof_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof b->msg, fmt, ap);
    va_end(ap);
    b->code = code;
    return FETCH_CUT;
}

/* A failed source_read while fetching. */
static fetch_outcome fetch_read_failed(block_buf *b)
{
    if (errno == ENOMEM)
        return fetch_cut(b, PROF_ERR_NOMEM, "out of memory for a block");
    return fetch_cut(b, PROF_ERR_IO, "read failed: %s", strerror(errno));
}

/* Reads, checks and unpacks the block at offset into b. Uses only what
 * never changes after opening (the source, its size, the trailer) and
 * dctx, so it may run on another thread than the caller's. */
static fetch_outcome block_fetch(const prof_reader *r, ZSTD_DCtx *dctx, const fetch_window *win,
                                 uint64_t offset, block_buf *b)
{
    uint8_t h[PF_BLOCK_HEADER_LEN];
    uint64_t avail = r->size - offset;
    if (r->has_trailer && offset > r->footer_offset)
        return fetch_cut(b, PROF_ERR_CORRUPT, "blocks overlap the footer");
    if (avail == 0)
        return FETCH_END; /* cut exactly between blocks: nothing lost but the footer */
    if (avail < PF_BLOCK_HEADER_LEN)
        return fetch_cut(b, PROF_ERR_CORRUPT, "header cut short (%llu of %d bytes)",
                         (unsigned long long)avail, PF_BLOCK_HEADER_LEN);
    const uint8_t *hp = source_read(r, offset, sizeof h, &b->stored, &b->stored_cap);
    if (!hp)
        return fetch_read_failed(b);
    memcpy(h, hp, sizeof h);
    if (!pf_block_header_magic_ok(h))
        return fetch_cut(b, PROF_ERR_CORRUPT, "bad block magic");
    pf_block_header bh;
    pf_block_header_load(h, &bh);
    if (pf_block_header_crc(h) != bh.crc)
        return fetch_cut(b, PROF_ERR_CORRUPT, "header checksum mismatch");
    uint8_t kind = bh.kind, flags = bh.flags;
    uint32_t stored = bh.stored_len, rawlen = bh.raw_len;
    if (stored > avail - PF_BLOCK_HEADER_LEN)
        return fetch_cut(b, PROF_ERR_CORRUPT, "payload cut short (%llu of %u bytes)",
                         (unsigned long long)(avail - PF_BLOCK_HEADER_LEN), stored);
    if (rawlen > PF_BLOCK_RAW_MAX)
        return fetch_cut(b, PROF_ERR_LIMIT, "payload of %u bytes over the %u-byte limit", rawlen,
                         PF_BLOCK_RAW_MAX);
    if ((!(flags & PF_BLOCK_FLAG_ZSTD) && rawlen != stored) ||
        kind < PF_BLOCK_EVENTS || kind > PF_BLOCK_FOOTER || (flags & ~PF_BLOCK_FLAG_ZSTD))
        return fetch_cut(b, PROF_ERR_CORRUPT, "malformed block header");
    if (kind == PF_BLOCK_EVENTS && window_excludes(win, &bh)) {
        b->stored_len = stored;
        return FETCH_SKIP;
    }
    const uint8_t *sp = source_read(r, offset + PF_BLOCK_HEADER_LEN, stored, &b->stored,
                                    &b->stored_cap);
    if (!sp)
        return fetch_read_failed(b);
    if (crc32c_update(0, sp, stored) != bh.payload_crc)
        return fetch_cut(b, PROF_ERR_CORRUPT, "payload checksum mismatch");
    const uint8_t *payload = sp;
    if (flags & PF_BLOCK_FLAG_ZSTD) {
        if (rawlen > b->raw_cap || !b->raw) { /* never NULL: payload + 0 below */
            uint8_t *nb = realloc(b->raw, rawlen ? rawlen : 1);
            if (!nb)
                return fetch_cut(b, PROF_ERR_NOMEM, "out of memory for a block of %u bytes",
                                 rawlen);
            b->raw = nb;
            b->raw_cap = rawlen ? rawlen : 1;
        }
        size_t n = ZSTD_decompressDCtx(dctx, b->raw, rawlen, sp, stored);
        if (ZSTD_isError(n) || n != rawlen)
            return fetch_cut(b, PROF_ERR_CORRUPT, "bad zstd frame: %s",
                             ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
        payload = b->raw;
    }
    b->payload = payload;
    b->rawlen = rawlen;
    b->next = offset + PF_BLOCK_HEADER_LEN + (uint64_t)stored;
    if (kind == PF_BLOCK_FOOTER) {
        if (!r->has_trailer)
            return FETCH_END; /* a footer whose trailer was cut off: all blocks are here */
        if (offset != r->footer_offset || b->next != r->size - PF_TRAILER_LEN)
            return fetch_cut(b, PROF_ERR_CORRUPT, "footer not where the trailer says");
        return FETCH_FOOTER;
    }
    b->records = bh.count;
    b->thread = bh.thread;
    return FETCH_BLOCK;
}

/* block_fetch, going on past the blocks the window skips (counted in b),
 * so that a run of them costs one hand-over, not one each. */
static fetch_outcome block_fetch_window(const prof_reader *r, ZSTD_DCtx *dctx,
                                        const fetch_window *win, uint64_t offset, block_buf *b)
{
    fetch_outcome o;
    b->skipped = b->skipped_bytes = 0;
    while ((o = block_fetch(r, dctx, win, offset, b)) == FETCH_SKIP) {
        b->skipped++;
        b->skipped_bytes += b->stored_len;
        offset += PF_BLOCK_HEADER_LEN + (uint64_t)b->stored_len;
    }
    return o;
}

/* ---- producing batches ------------------------------------------------------ */

static int decode_record(decoder *d, prof_event *ev);

/* The batch ends with an error, said by fmt. */
static void batch_bad(batch *it, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void batch_bad(batch *it, prof_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof it->msg, fmt, ap);
    va_end(ap);
    it->code = code;
    it->bad = 1;
}

/* Decodes records of the current block into it until the batch is full or
 * the block ends. */
static void decode_batch(producer *pr, batch *it)
{
    decoder *d = &pr->dec;
    for (;;) {
        if (d->left == 0) {
            if (d->p != d->end)
                return batch_bad(it, PROF_ERR_CORRUPT, "%llu bytes after the last record",
                                 (unsigned long long)(d->end - d->p));
            pr->in_block = 0;
            return;
        }
        if (it->nevents == BATCH_EVENTS)
            return;
        if (d->p >= d->end)
            return batch_bad(it, PROF_ERR_CORRUPT, "payload ends %lu records short of its count",
                             (unsigned long)d->left);
        d->left--;
        int rc = decode_record(d, &it->events[it->nevents]);
        if (rc == 1)
            it->nevents++;
        else if (rc < 0)
            return batch_bad(it, d->bad_code, "%s", d->bad_msg);
    }
}

/* Fills it with what comes next: more events of the block being decoded,
 * or what fetching the next block gave. Returns 1 when nothing can follow
 * it (the end, damage, the footer). */
static int produce(const prof_reader *r, producer *pr, batch *it)
{
    it->begins = 0;
    it->nevents = 0;
    it->bad = 0;
    it->skipped = it->skipped_bytes = 0;
    if (!pr->in_block) {
        fetch_outcome o = block_fetch_window(r, pr->dctx, &pr->win, pr->offset, &pr->blk);
        it->what = o;
        it->skipped = pr->blk.skipped;
        it->skipped_bytes = pr->blk.skipped_bytes;
        pr->offset += pr->blk.skipped * PF_BLOCK_HEADER_LEN + pr->blk.skipped_bytes;
        switch (o) {
        case FETCH_BLOCK:
            it->begins = 1;
            it->next = pr->blk.next;
            pr->offset = pr->blk.next;
            pr->in_block = 1;
            pr->dec.p = pr->blk.payload;
            pr->dec.end = pr->blk.payload + pr->blk.rawlen;
            pr->dec.left = pr->blk.records;
            pr->dec.thread = pr->blk.thread;
            pr->dec.cursor = 0;
            break;
        case FETCH_SKIP:
            it->stored_len = pr->blk.stored_len;
            pr->offset += PF_BLOCK_HEADER_LEN + (uint64_t)pr->blk.stored_len;
            return 0;
        case FETCH_FOOTER:
            it->footer_len = pr->blk.rawlen;
            memcpy(it->footer, pr->blk.payload,
                   pr->blk.rawlen < PF_FOOTER_FIXED ? pr->blk.rawlen : PF_FOOTER_FIXED);
            return 1;
        case FETCH_CUT:
            it->code = pr->blk.code;
            memcpy(it->msg, pr->blk.msg, sizeof it->msg);
            return 1;
        case FETCH_END:
            return 1;
        }
    }
    it->what = FETCH_BLOCK;
    if (!it->events && !(it->events = malloc(BATCH_EVENTS * sizeof *it->events))) {
        batch_bad(it, PROF_ERR_NOMEM, "out of memory for decoded events");
        return 1;
    }
    decode_batch(pr, it);
    return it->bad;
}

/* ---- the producing thread ---------------------------------------------------- */

static void *prefetch_main(void *arg)
{
    prefetch *pf = arg;
    prof_reader *r = pf->r;
    for (;;) {
        pthread_mutex_lock(&pf->mu);
        while (!pf->stop && pf->filled - pf->taken == BATCH_RING) {
            pf->producer_waits = 1;
            pthread_cond_wait(&pf->cv, &pf->mu);
        }
        pf->producer_waits = 0;
        int stop = pf->stop;
        batch *it = &r->ring[pf->filled % BATCH_RING];
        pthread_mutex_unlock(&pf->mu);
        if (stop)
            break;
        int last = produce(r, &r->prod, it);
        pthread_mutex_lock(&pf->mu);
        pf->filled++;
        if (pf->caller_waits)
            pthread_cond_broadcast(&pf->cv);
        pthread_mutex_unlock(&pf->mu);
        if (last)
            break;
    }
    return NULL;
}

/* Starts producing ahead; without a thread, batches are produced on
 * demand. */
static void prefetch_start(prof_reader *r)
{
    prefetch *pf = calloc(1, sizeof *pf);
    if (!pf)
        return;
    pf->r = r;
    if (pthread_mutex_init(&pf->mu, NULL) != 0) {
        free(pf);
        return;
    }
    if (pthread_cond_init(&pf->cv, NULL) != 0) {
        pthread_mutex_destroy(&pf->mu);
        free(pf);
        return;
    }
    if (pthread_create(&pf->thread, NULL, prefetch_main, pf) != 0) {
        pthread_cond_destroy(&pf->cv);
        pthread_mutex_destroy(&pf->mu);
        free(pf);
        return;
    }
    r->pf = pf;
}

static void prefetch_stop(prof_reader *r)
{
    prefetch *pf = r->pf;
    if (!pf)
        return;
    pthread_mutex_lock(&pf->mu);
    pf->stop = 1;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    pthread_join(pf->thread, NULL);
    pthread_cond_destroy(&pf->cv);
    pthread_mutex_destroy(&pf->mu);
    free(pf);
    r->pf = NULL;
}

/* The next batch: handed over by the producing thread (the one before it
 * is given back), or produced now. */
static batch *batch_next(prof_reader *r)
{
    if (r->want_prefetch) {
        r->want_prefetch = 0; /* now: after prof_reader_set_window */
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        prefetch_start(r);
    }
    prefetch *pf = r->pf;
    if (!pf) {
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        produce(r, &r->prod, &r->ring[0]);
        return &r->ring[0];
    }
    pthread_mutex_lock(&pf->mu);
    if (pf->holding) {
        pf->taken++;
        /* waking costs a system call: let the producer fill half a ring */
        if (pf->producer_waits && pf->filled - pf->taken <= BATCH_RING / 2)
            pthread_cond_broadcast(&pf->cv);
    }
    while (pf->filled == pf->taken) {
        pf->caller_waits = 1;
        pthread_cond_wait(&pf->cv, &pf->mu);
    }
    pf->caller_waits = 0;
    pf->holding = 1;
    batch *it = &r->ring[pf->taken % BATCH_RING];
    pthread_mutex_unlock(&pf->mu);
    return it;
}

/* Moves to the next batch. Returns 1 when it is ready (its events, maybe
 * none, are to be handed out), or next()'s result (0 end, -1 error). */
static int reader_load_batch(prof_reader *r)
{
    batch *it = batch_next(r);
    r->cur = NULL;
    if (it->skipped)
        skip_blocks(r, it->skipped, it->skipped_bytes);
    switch (it->what) {
    case FETCH_END:
        r->done = 1;
        return 0;
    case FETCH_CUT:
        return reader_cut(r, it->code, "%s", it->msg);
    case FETCH_FOOTER:
        return reader_footer(r, it->footer, it->footer_len);
    case FETCH_SKIP: /* (block_fetch_window goes past these) */
        skip_blocks(r, 1, it->stored_len);
        return 1;
    case FETCH_BLOCK:
        break;
    }
    if (it->begins) {
        r->block_offset = r->offset;
        r->offset = it->next;
        r->st.bytes_read = r->offset;
        r->st.blocks++;
    }
    r->cur = it;
    r->next_event = 0;
    return 1;
}

/* Damage in a record (or a limit, or memory that ran out): what the
 * error will say. Returns -1. */
static int dec_bad(decoder *d, prof_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int dec_bad(decoder *d, prof_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->bad_msg, sizeof d->bad_msg, fmt, ap);
    va_end(ap);
    d->bad_code = code;
    return -1;
}

/* Counts len bytes of definition text against the file's budget (format
 * §9), which bounds what the string table and thread names can hold
 * however well the file compresses. */
static int text_take(decoder *d, uint64_t len, const char *what, uint64_t which)
{
    if (len > PF_TEXT_MAX - d->text)
        return dec_bad(d, PROF_ERR_LIMIT,
                       "%s %llu takes the file's definitions past the %u-byte limit", what,
                       (unsigned long long)which, PF_TEXT_MAX);
    d->text += len;
    return 0;
}

/* Makes the table hold id. */
static int strings_reserve(decoder *d, uint64_t id)
{
    if (id < d->nstrings)
        return 0;
    uint32_t n = d->nstrings ? d->nstrings : 256;
    while (n <= id)
        n *= 2;
    const char **a = realloc(d->strings, n * sizeof *a);
    if (!a)
        return dec_bad(d, PROF_ERR_NOMEM, "out of memory for string %llu",
                       (unsigned long long)id);
    d->strings = a;
    uint32_t *l = realloc(d->lens, n * sizeof *l);
    if (!l)
        return dec_bad(d, PROF_ERR_NOMEM, "out of memory for string %llu",
                       (unsigned long long)id);
    d->lens = l;
    memset(a + d->nstrings, 0, (n - d->nstrings) * sizeof *a);
    memset(l + d->nstrings, 0, (n - d->nstrings) * sizeof *l);
    d->nstrings = n;
    return 0;
}

/* An id is defined once (format §6.3): names handed out stay valid until
 * closing, so a second text could only pile up beside the first. The same
 * text again changes nothing and costs nothing. */
static int define_string(decoder *d, uint64_t id, const uint8_t *s, uint64_t len)
{
    if (id == 0 || id >= PF_STRING_IDS)
        return dec_bad(d, PROF_ERR_CORRUPT, "string id %llu out of range (1 to %u)",
                       (unsigned long long)id, PF_STRING_IDS - 1);
    if (len > PF_STRING_MAX)
        return dec_bad(d, PROF_ERR_CORRUPT, "string %llu of %llu bytes, over the %u-byte limit",
                       (unsigned long long)id, (unsigned long long)len, PF_STRING_MAX);
    if (strings_reserve(d, id) < 0)
        return -1;
    if (d->strings[id]) {
        if (d->lens[id] == len && memcmp(d->strings[id], s, (size_t)len) == 0)
            return 0;
        return dec_bad(d, PROF_ERR_CORRUPT, "string %llu defined again with other text",
                       (unsigned long long)id);
    }
    if (text_take(d, len, "string", id) < 0)
        return -1;
    if (!(d->strings[id] = arena_strdup(d, s, (size_t)len)))
        return dec_bad(d, PROF_ERR_NOMEM, "out of memory for string %llu",
                       (unsigned long long)id);
    d->lens[id] = (uint32_t)len;
    return 0;
}

/* A thread definition is checked here; the table prof_reader_thread_name
 * reads is kept by the caller's side as it hands the definitions out. A
 * thread may be renamed: every name given counts against the budget. */
static const char *define_thread(decoder *d, uint64_t t, const uint8_t *s, uint64_t len)
{
    const char *name;
    if (t >= PF_THREADS) {
        dec_bad(d, PROF_ERR_CORRUPT, "thread index %llu out of range (below %u)",
                (unsigned long long)t, PF_THREADS);
        return NULL;
    }
    if (len > PF_STRING_MAX) {
        dec_bad(d, PROF_ERR_CORRUPT, "name of thread %llu of %llu bytes, over the %u-byte limit",
                (unsigned long long)t, (unsigned long long)len, PF_STRING_MAX);
        return NULL;
    }
    if (text_take(d, len, "name of thread", t) < 0)
        return NULL;
    if (!(name = arena_strdup(d, s, (size_t)len)))
        dec_bad(d, PROF_ERR_NOMEM, "out of memory for the name of thread %llu",
                (unsigned long long)t);
    return name;
}

/* Field decoding for one record; any failure marks the record malformed. */
typedef struct cur {
    const uint8_t *p, *end;
    int bad;
} cur;

/* Inlined: several per record, on the path of every event. */
static inline __attribute__((always_inline)) uint64_t cur_u(cur *c)
{
    uint64_t v = 0;
    if (!c->bad && pf_varint_get(&c->p, c->end, &v) < 0)
        c->bad = 1;
    return v;
}

static inline __attribute__((always_inline)) uint32_t cur_u32(cur *c)
{
    uint64_t v = cur_u(c);
    if (v > UINT32_MAX)
        c->bad = 1;
    return (uint32_t)v;
}

static const uint8_t *cur_bytes(cur *c, uint64_t len)
{
    if (c->bad || len > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *s = c->p;
    c->p += len;
    return s;
}

static uint64_t cur_time(cur *c, decoder *d)
{
    uint64_t dt = cur_u(c);
    d->cursor += (uint64_t)pf_unzigzag(dt);
    return d->cursor;
}

static double cur_f64(cur *c)
{
    const uint8_t *b = cur_bytes(c, 8);
    double v = 0;
    if (b) {
        uint64_t bits = pf_load_u64(b);
        memcpy(&v, &bits, sizeof v);
    }
    return v;
}

/* A SPAN field: the fields after it are read from within its length.
 * Returns where the record ends, past fields this reader does not know. */
static const uint8_t *cur_span(cur *c)
{
    uint64_t len = cur_u(c);
    const uint8_t *body = cur_bytes(c, len), *end = c->p;
    if (body) {
        c->p = body;
        c->end = end;
    }
    return end;
}

static const char *name_of(decoder *d, uint32_t id, cur *c)
{
    if (id == 0)
        return "";
    if (id >= d->nstrings || !d->strings[id]) {
        c->bad = 2;
        return "";
    }
    return d->strings[id];
}

/* What a record of this tag is called in messages (records.h). */
static const char *record_what(uint8_t tag)
{
    switch (tag) {
#define WHAT_CASE(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS)                                 \
    case TAG ... LAST: return WHAT;
        PF_RECORDS(WHAT_CASE)
#undef WHAT_CASE
    }
    return "extension record";
}

static int malformed(decoder *d, uint8_t tag)
{
    return dec_bad(d, PROF_ERR_CORRUPT, "malformed %s (tag 0x%02x)", record_what(tag), tag);
}

/* ---- definitions: what the reader does with their decoded fields -------- */

static int def_string(decoder *d, prof_event *ev, uint64_t id, const uint8_t *text,
                      uint64_t text_len)
{
    (void)ev; /* kept by the reader, not handed out */
    return define_string(d, id, text, text_len) < 0 ? -1 : 2;
}

static int def_thread(decoder *d, prof_event *ev, uint64_t thread, uint64_t os_tid,
                      const uint8_t *name, uint64_t name_len)
{
    if (!(ev->name = define_thread(d, thread, name, name_len)))
        return -1;
    ev->thread = (uint32_t)thread;
    ev->value = os_tid;
    return 1;
}

/* A name attribute (format §6.5) as a PROF_EV_ATTR event whose name is
 * the described name followed, after its NUL, by the value's text (what
 * prof_event_attr_value reads): both strings, resolved, in one arena copy,
 * as the event has a single name field. */
static int def_attr(decoder *d, prof_event *ev, uint32_t key, uint32_t name, uint32_t value)
{
    cur f = { NULL, NULL, 0 };
    if (name == 0 || value == 0)
        return malformed(d, PF_TAG_ATTR);
    const char *a = name_of(d, name, &f), *v = name_of(d, value, &f);
    if (f.bad)
        return dec_bad(d, PROF_ERR_CORRUPT, "string %lu used before its definition",
                       (unsigned long)(name >= d->nstrings || !d->strings[name] ? name : value));
    size_t na = strlen(a), nv = strlen(v);
    if (text_take(d, na + nv, "attribute of string", name) < 0)
        return -1;
    char *both = arena_alloc(d, na + nv + 2);
    if (!both)
        return dec_bad(d, PROF_ERR_NOMEM, "out of memory for the attribute of string %lu",
                       (unsigned long)name);
    memcpy(both, a, na + 1);
    memcpy(both + na + 1, v, nv + 1);
    ev->name = both;
    ev->name_id = name;
    ev->subkind = key;
    ev->value = value;
    return 1;
}

/* ---- the decoder, generated from records.h ----------------------------------
 * Each field is read into a variable named after it; an event then hands
 * its fields out in their prof_event members, a definition passes them to
 * its def_ function. */
#define READ(KIND, PARAM, MEMBER) READ_##KIND(PARAM)
#define READ_U32(v) uint32_t v = cur_u32(&c);
#define READ_U64(v) uint64_t v = cur_u(&c);
#define READ_DT(v) uint64_t v = cur_time(&c, d);
#define READ_DUR(v) uint64_t v = cur_u(&c);
#define READ_F64(v) double v = cur_f64(&c);
#define READ_DROPS(v) uint64_t v = cur_u(&c);
#define READ_TEXT(v)                                                                          \
    uint64_t v##_len = cur_u(&c);                                                             \
    const uint8_t *v = cur_bytes(&c, v##_len);
#define READ_CSTR(v) READ_TEXT(v)
#define READ_KIND(v) uint32_t v = (uint32_t)(tag - first_tag);
#define READ_SPAN(v) const uint8_t *v##_end = cur_span(&c);

/* After the fields: a span's record ends past what this reader knows. */
#define SKIP(KIND, PARAM, MEMBER) SKIP_##KIND(PARAM)
#define SKIP_U32(v)
#define SKIP_U64(v)
#define SKIP_DT(v)
#define SKIP_DUR(v)
#define SKIP_F64(v)
#define SKIP_DROPS(v)
#define SKIP_TEXT(v)
#define SKIP_CSTR(v)
#define SKIP_KIND(v)
#define SKIP_SPAN(v) c.p = v##_end;

/* An event's fields into its members (events have no text fields). */
#define STORE(KIND, PARAM, MEMBER) STORE_##KIND(PARAM, MEMBER)
#define STORE_U32(v, m) ev->m = v;
#define STORE_U64(v, m) ev->m = v;
#define STORE_DT(v, m) ev->m = v;
#define STORE_DUR(v, m) ev->m = v;
#define STORE_F64(v, m) ev->m = v;
#define STORE_DROPS(v, m) ev->m = v;
#define STORE_KIND(v, m) ev->m = v;
#define STORE_SPAN(v, m)

/* A definition's fields as arguments of its def_ function. */
#define ARG(KIND, PARAM, MEMBER) ARG_##KIND(PARAM)
#define ARG_U32(v) , v
#define ARG_U64(v) , v
#define ARG_DT(v) , v
#define ARG_DUR(v) , v
#define ARG_F64(v) , v
#define ARG_DROPS(v) , v
#define ARG_TEXT(v) , v, v##_len
#define ARG_CSTR(v) , v, v##_len
#define ARG_KIND(v) , v
#define ARG_SPAN(v)

/* Case ranges (a GNU C extension, in gcc and clang) give a run of tags,
 * such as a region's five, one case. */
#define CASE_EVENT(NAME, TAG, LAST, EVENT, FIELDS)                                            \
    case TAG ... LAST: {                                                                      \
        enum { first_tag = TAG };                                                             \
        ev->type = EVENT;                                                                     \
        FIELDS(READ)                                                                          \
        FIELDS(SKIP)                                                                          \
        FIELDS(STORE)                                                                         \
        break;                                                                                \
    }
#define CASE_DEF(NAME, TAG, LAST, EVENT, FIELDS)                                              \
    case TAG ... LAST: {                                                                      \
        enum { first_tag = TAG };                                                             \
        ev->type = (prof_event_type)(EVENT);                                                  \
        FIELDS(READ)                                                                          \
        FIELDS(SKIP)                                                                          \
        if (c.bad)                                                                            \
            return malformed(d, tag);                                                         \
        d->p = c.p;                                                                           \
        return def_##NAME(d, ev FIELDS(ARG));                                                 \
    }
#define CASE(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS) CASE_##ROLE(NAME, TAG, LAST, EVENT, FIELDS)

/* Decodes the next record into ev. Returns 1 for an event, 2 for a record
 * the reader consumed itself, -1 for malformed data. */
static int decode_record(decoder *d, prof_event *ev)
{
    cur c = { d->p + 1, d->end, 0 };
    uint8_t tag = *d->p;
    memset(ev, 0, sizeof *ev);
    ev->thread = d->thread;
    switch (tag) {
        PF_RECORDS(CASE)
    default:
        if (tag >= PF_TAG_EXTENSION) { /* a newer minor version's record */
            cur_bytes(&c, cur_u(&c));
            if (c.bad)
                return malformed(d, tag);
            d->p = c.p;
            return 2;
        }
        return dec_bad(d, PROF_ERR_CORRUPT, "unknown record tag 0x%02x", tag);
    }
    d->cursor = ev->start_ns + ev->dur_ns; /* the next time is coded from this end */
    ev->name = name_of(d, ev->name_id, &c);
    if (c.bad == 2)
        return dec_bad(d, PROF_ERR_CORRUPT, "string %lu used before its definition",
                       (unsigned long)ev->name_id);
    if (c.bad)
        return malformed(d, tag);
    d->p = c.p;
    return 1;
}

/* The caller's side of a thread definition being handed out. */
static int thread_table_set(prof_reader *r, uint32_t t, const char *name, uint64_t tid)
{
    if (t >= r->nthreads) {
        uint32_t n = r->nthreads ? r->nthreads : 16;
        while (n <= t)
            n *= 2;
        thread_info *a = realloc(r->threads, n * sizeof *a);
        if (!a)
            return -1;
        memset(a + r->nthreads, 0, (n - r->nthreads) * sizeof *a);
        r->threads = a;
        r->nthreads = n;
    }
    r->threads[t].name = name;
    r->threads[t].os_tid = tid;
    return 0;
}

/* What handing out ev records: a thread's name, dropped and counted
 * events. -1 out of memory. */
static int event_taken(prof_reader *r, const prof_event *ev)
{
    if (ev->type == PROF_EV_THREAD) /* definitions are not events */
        return thread_table_set(r, ev->thread, ev->name, ev->value);
    if (ev->type == PROF_EV_ATTR)
        return 0;
    if (ev->type == PROF_EV_DROPPED)
        r->st.dropped_events += ev->value;
    r->st.events++;
    return 0;
}

/* Makes r->cur a batch with events left. 1, or 0 at the end or -1 on an
 * error, as prof_reader_next(). */
static int events_ready(prof_reader *r)
{
    for (;;) {
        if (r->done)
            return r->err.code ? -1 : 0;
        batch *it = r->cur;
        if (it && r->next_event < it->nevents)
            return 1;
        if (it && it->bad)
            return reader_fail(r, it->code, it->msg);
        int rc = reader_load_batch(r);
        if (rc <= 0)
            return rc;
    }
}

int prof_reader_next(prof_reader *r, prof_event *ev)
{
    int rc = events_ready(r);
    if (rc <= 0)
        return rc;
    *ev = r->cur->events[r->next_event];
    if (event_taken(r, ev) < 0)
        return reader_fail(r, PROF_ERR_NOMEM, "out of memory for thread names");
    r->next_event++;
    return 1;
}

int prof_reader_next_batch(prof_reader *r, const prof_event **events, size_t *count)
{
    int rc = events_ready(r);
    if (rc <= 0)
        return rc;
    const batch *it = r->cur;
    size_t first = r->next_event, i = first;
    for (; i < it->nevents; i++)
        if (event_taken(r, &it->events[i]) < 0) {
            if (i == first)
                return reader_fail(r, PROF_ERR_NOMEM, "out of memory for thread names");
            break; /* those before it now; the next call meets it again */
        }
    r->next_event = (uint32_t)i;
    *events = &it->events[first];
    *count = i - first;
    return 1;
}

const char *prof_reader_metadata(const prof_reader *r)
{
    return r->meta;
}

void prof_reader_version(const prof_reader *r, unsigned *major, unsigned *minor)
{
    *major = r->major;
    *minor = r->minor;
}

const prof_error *prof_reader_error(const prof_reader *r)
{
    return &r->err;
}

void prof_reader_status(const prof_reader *r, prof_read_status *st)
{
    *st = r->st;
}

void prof_reader_set_window(prof_reader *r, uint64_t from_ns, uint64_t to_ns)
{
    if (r->st.blocks || r->done)
        return; /* reading has begun: fetching may be past the next blocks */
    r->windowed = 1;
    r->win_from = from_ns;
    r->win_to = to_ns;
}

void prof_reader_skipped(const prof_reader *r, uint64_t *blocks, uint64_t *bytes)
{
    if (blocks)
        *blocks = r->skipped_blocks;
    if (bytes)
        *bytes = r->skipped_bytes;
}

const char *prof_reader_thread_name(const prof_reader *r, uint32_t thread)
{
    return thread < r->nthreads ? r->threads[thread].name : NULL;
}

const char *prof_event_attr_value(const prof_event *ev)
{
    if (!ev || ev->type != PROF_EV_ATTR || !ev->name)
        return "";
    return ev->name + strlen(ev->name) + 1; /* laid out by decode_attr */
}

void prof_reader_close(prof_reader *r)
{
    if (!r)
        return;
    prefetch_stop(r); /* before the file it reads is closed */
    if (r->fd >= 0 && !r->mem)
        close(r->fd);
    ZSTD_freeDCtx(r->dctx);
    free(r->meta);
    for (size_t i = 0; i < BATCH_RING; i++)
        free(r->ring[i].events);
    free(r->prod.blk.stored);
    free(r->prod.blk.raw);
    free(r->prod.dec.strings);
    free(r->prod.dec.lens);
    free(r->threads);
    while (r->prod.dec.arena) {
        arena_chunk *next = r->prod.dec.arena->next;
        free(r->prod.dec.arena);
        r->prod.dec.arena = next;
    }
    free(r);
}
