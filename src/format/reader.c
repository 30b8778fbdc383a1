/* reader.c - the streaming .prof reader behind include/prof_reader.h.
 *
 * Walks blocks in file order, checks every header and payload checksum,
 * decompresses one block at a time into a reused buffer and decodes its
 * records lazily, one event per call. A file with a trailer promised a
 * footer, so any damage in it is an error; a file without one is a run
 * that was cut short, so reading stops quietly at the first damaged block
 * and the status says what was lost. */
#include <errno.h>
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

#define STRING_ID_MAX (1u << 22) /* ids beyond this are refused as corrupt */
#define THREAD_MAX (1u << 20)
#define ARENA_CHUNK (64u << 10)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
} arena_chunk;

typedef struct thread_info {
    const char *name;
    uint64_t os_tid;
} thread_info;

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
    uint8_t *stored;        /* payload as stored (file sources)           */
    size_t stored_cap;
    uint8_t *raw;           /* decompressed payload                       */
    size_t raw_cap;
    const uint8_t *p, *end; /* undecoded records of the current block     */
    uint32_t left;          /* records left in the current block          */
    uint32_t thread;
    uint64_t cursor;
    ZSTD_DCtx *dctx;

    const char **strings;   /* by id; NULL when undefined                 */
    uint32_t nstrings;
    thread_info *threads;
    uint32_t nthreads;
    arena_chunk *arena;

    prof_read_status st;
    prof_error err;
};

static const char *arena_strdup(prof_reader *r, const uint8_t *s, size_t len)
{
    arena_chunk *c = r->arena;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = r->arena;
        c->used = 0;
        c->cap = cap;
        r->arena = c;
    }
    char *out = c->data + c->used;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    c->used += len + 1;
    return out;
}

/* Reads len bytes at off; returns the bytes or NULL with errno set. For
 * memory sources nothing is copied. */
static const uint8_t *source_read(prof_reader *r, uint64_t off, size_t len, uint8_t **buf,
                                  size_t *cap)
{
    if (r->mem)
        return r->mem + off;
    if (len > *cap) {
        uint8_t *b = realloc(*buf, len);
        if (!b)
            return NULL;
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
        return prof_error_set(err, PROF_ERR_IO, "read failed: %s", strerror(errno));
    memcpy(hb, h, first);
    free(tmp);
    if (memcmp(hb, PF_MAGIC, first < PF_MAGIC_LEN ? first : PF_MAGIC_LEN) != 0)
        return prof_error_set(err, PROF_ERR_NOT_PROF, "not a prof file (bad magic)");
    if (first < PF_FILE_HEADER_LEN)
        return prof_error_set(err, PROF_ERR_TRUNCATED,
                              "file cut short inside its header (%zu of %d bytes)", first,
                              PF_FILE_HEADER_LEN);
    r->major = pf_load_u16(hb + 8);
    r->minor = pf_load_u16(hb + 10);
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
        return prof_error_set(err, PROF_ERR_IO, "read failed: %s", strerror(errno));
    memcpy(hb, h, sizeof hb);
    uint32_t hlen = pf_load_u32(hb + 12), mlen = pf_load_u32(hb + 16);
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
        e = prof_error_set(err, PROF_ERR_IO, "read failed: %s", strerror(errno));
    else if (crc32c_update(crc32c_update(0, hb, 20), m, mlen) != pf_load_u32(hb + 20))
        e = prof_error_set(err, PROF_ERR_CORRUPT, "header checksum mismatch");
    else if (!(r->meta = malloc((size_t)mlen + 1)))
        e = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    else {
        memcpy(r->meta, m, mlen);
        r->meta[mlen] = '\0';
        cJSON *j = cJSON_ParseWithLength(r->meta, mlen);
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
    if (t && memcmp(t + 8, PF_TRAILER_MAGIC, 8) == 0) {
        uint64_t off = pf_load_u64(t);
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
    r->st.file_size = r->size;
    find_trailer(r);
    return PROF_OK;
}

prof_err prof_reader_open(const char *path, prof_reader **out, prof_error *err)
{
    struct stat sb;
    prof_reader *r;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return prof_error_set(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) < 0) {
        int e = errno;
        close(fd);
        return prof_error_set(err, PROF_ERR_IO, "cannot read: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return prof_error_set(err, PROF_ERR_IO, "cannot read: %s",
                              S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
    }
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
 * otherwise the intact part ends here. Returns next()'s result. */
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
    if (r->has_trailer) {
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

static int reader_corrupt(prof_reader *r, const char *what, unsigned long long v)
{
    r->done = 1;
    prof_error_set(&r->err, PROF_ERR_CORRUPT, "block %llu at offset %llu: %s%llx",
                   (unsigned long long)r->st.blocks - 1,
                   (unsigned long long)r->block_offset, what, v);
    return -1;
}

/* Checks the footer against what was read. Returns next()'s result. */
static int reader_footer(prof_reader *r, const uint8_t *p, size_t len)
{
    r->done = 1;
    if (len < PF_FOOTER_FIXED || pf_load_u64(p) != r->st.blocks ||
        (len - PF_FOOTER_FIXED) != r->st.blocks * PF_INDEX_ENTRY_LEN ||
        pf_load_u64(p + 8) != r->st.events || pf_load_u64(p + 16) != r->st.dropped_events) {
        prof_error_set(&r->err, PROF_ERR_CORRUPT,
                       "footer at offset %llu does not match the %llu blocks read",
                       (unsigned long long)r->offset, (unsigned long long)r->st.blocks);
        return -1;
    }
    r->st.clean = 1;
    r->st.bytes_read = r->size;
    return 0;
}

/* Reads, checks and unpacks the block at r->offset. Returns 1 when records
 * are ready, or next()'s result (0 end, -1 error). */
static int reader_load_block(prof_reader *r)
{
    uint8_t h[PF_BLOCK_HEADER_LEN];
    uint64_t avail = r->size - r->offset;
    if (r->has_trailer && r->offset > r->footer_offset)
        return reader_cut(r, PROF_ERR_CORRUPT, "blocks overlap the footer");
    if (avail == 0) {
        r->done = 1; /* cut exactly between blocks: nothing lost but the footer */
        return 0;
    }
    if (avail < PF_BLOCK_HEADER_LEN)
        return reader_cut(r, PROF_ERR_CORRUPT, "header cut short (%llu of %d bytes)",
                          (unsigned long long)avail, PF_BLOCK_HEADER_LEN);
    const uint8_t *hp = source_read(r, r->offset, sizeof h, &r->stored, &r->stored_cap);
    if (!hp)
        return reader_cut(r, PROF_ERR_IO, "read failed: %s", strerror(errno));
    memcpy(h, hp, sizeof h);
    if (pf_load_u32(h) != PF_BLOCK_MAGIC)
        return reader_cut(r, PROF_ERR_CORRUPT, "bad block magic");
    if (crc32c_update(0, h, 44) != pf_load_u32(h + 44))
        return reader_cut(r, PROF_ERR_CORRUPT, "header checksum mismatch");
    uint8_t kind = h[4], flags = h[5];
    uint32_t stored = pf_load_u32(h + 32), rawlen = pf_load_u32(h + 36);
    if (stored > avail - PF_BLOCK_HEADER_LEN)
        return reader_cut(r, PROF_ERR_CORRUPT, "payload cut short (%llu of %u bytes)",
                          (unsigned long long)(avail - PF_BLOCK_HEADER_LEN), stored);
    if (rawlen > PF_BLOCK_RAW_MAX)
        return reader_cut(r, PROF_ERR_LIMIT, "payload of %u bytes over the %u-byte limit", rawlen,
                          PF_BLOCK_RAW_MAX);
    if ((!(flags & PF_BLOCK_FLAG_ZSTD) && rawlen != stored) ||
        kind < PF_BLOCK_EVENTS || kind > PF_BLOCK_FOOTER || (flags & ~PF_BLOCK_FLAG_ZSTD))
        return reader_cut(r, PROF_ERR_CORRUPT, "malformed block header");
    const uint8_t *sp = source_read(r, r->offset + PF_BLOCK_HEADER_LEN, stored, &r->stored,
                                    &r->stored_cap);
    if (!sp)
        return reader_cut(r, PROF_ERR_IO, "read failed: %s", strerror(errno));
    if (crc32c_update(0, sp, stored) != pf_load_u32(h + 40))
        return reader_cut(r, PROF_ERR_CORRUPT, "payload checksum mismatch");
    const uint8_t *payload = sp;
    if (flags & PF_BLOCK_FLAG_ZSTD) {
        if (rawlen > r->raw_cap || !r->raw) { /* never NULL: payload + 0 below */
            uint8_t *b = realloc(r->raw, rawlen ? rawlen : 1);
            if (!b)
                return reader_cut(r, PROF_ERR_NOMEM, "out of memory");
            r->raw = b;
            r->raw_cap = rawlen ? rawlen : 1;
        }
        size_t n = ZSTD_decompressDCtx(r->dctx, r->raw, rawlen, sp, stored);
        if (ZSTD_isError(n) || n != rawlen)
            return reader_cut(r, PROF_ERR_CORRUPT, "bad zstd frame: %s", ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
        payload = r->raw;
    }
    if (kind == PF_BLOCK_FOOTER) {
        if (!r->has_trailer) {
            r->done = 1; /* a footer whose trailer was cut off: all blocks are here */
            return 0;
        }
        if (r->offset != r->footer_offset ||
            r->offset + PF_BLOCK_HEADER_LEN + stored != r->size - PF_TRAILER_LEN)
            return reader_cut(r, PROF_ERR_CORRUPT, "footer not where the trailer says");
        return reader_footer(r, payload, rawlen);
    }
    r->block_offset = r->offset;
    r->offset += PF_BLOCK_HEADER_LEN + (uint64_t)stored;
    r->st.bytes_read = r->offset;
    r->st.blocks++;
    r->p = payload;
    r->end = payload + rawlen;
    r->left = pf_load_u32(h + 12);
    r->thread = pf_load_u32(h + 8);
    r->cursor = 0;
    return 1;
}

static int define_string(prof_reader *r, uint64_t id, const uint8_t *s, uint64_t len)
{
    if (id == 0 || id >= STRING_ID_MAX)
        return reader_corrupt(r, "string id out of range: 0x", id);
    if (id >= r->nstrings) {
        uint32_t n = r->nstrings ? r->nstrings : 256;
        while (n <= id)
            n *= 2;
        const char **a = realloc(r->strings, n * sizeof *a);
        if (!a)
            return reader_corrupt(r, "out of memory for strings at id 0x", id);
        memset(a + r->nstrings, 0, (n - r->nstrings) * sizeof *a);
        r->strings = a;
        r->nstrings = n;
    }
    if (!(r->strings[id] = arena_strdup(r, s, (size_t)len)))
        return reader_corrupt(r, "out of memory for string 0x", id);
    return 0;
}

static int define_thread(prof_reader *r, uint64_t t, uint64_t tid, const uint8_t *s,
                         uint64_t len)
{
    if (t >= THREAD_MAX)
        return reader_corrupt(r, "thread index out of range: 0x", t);
    if (t >= r->nthreads) {
        uint32_t n = r->nthreads ? r->nthreads : 16;
        while (n <= t)
            n *= 2;
        thread_info *a = realloc(r->threads, n * sizeof *a);
        if (!a)
            return reader_corrupt(r, "out of memory for thread 0x", t);
        memset(a + r->nthreads, 0, (n - r->nthreads) * sizeof *a);
        r->threads = a;
        r->nthreads = n;
    }
    if (!(r->threads[t].name = arena_strdup(r, s, (size_t)len)))
        return reader_corrupt(r, "out of memory for thread 0x", t);
    r->threads[t].os_tid = tid;
    return 0;
}

/* Field decoding for one record; any failure marks the record malformed. */
typedef struct cur {
    const uint8_t *p, *end;
    int bad;
} cur;

static uint64_t cur_u(cur *c)
{
    uint64_t v = 0;
    if (!c->bad && pf_varint_get(&c->p, c->end, &v) < 0)
        c->bad = 1;
    return v;
}

static uint32_t cur_u32(cur *c)
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

static uint64_t cur_time(cur *c, prof_reader *r)
{
    uint64_t dt = cur_u(c);
    r->cursor += (uint64_t)pf_unzigzag(dt);
    return r->cursor;
}

static const char *name_of(prof_reader *r, uint32_t id, cur *c)
{
    if (id == 0)
        return "";
    if (id >= r->nstrings || !r->strings[id]) {
        c->bad = 2;
        return "";
    }
    return r->strings[id];
}

/* Decodes the next record into ev. Returns 1 for an event, 2 for a record
 * the reader consumed itself, -1 for malformed data. */
static int decode_record(prof_reader *r, prof_event *ev)
{
    cur c = { r->p + 1, r->end, 0 };
    uint8_t tag = *r->p;
    memset(ev, 0, sizeof *ev);
    ev->thread = r->thread;
    switch (tag) {
    case PF_TAG_STRING: {
        uint64_t id = cur_u(&c), len = cur_u(&c);
        const uint8_t *s = cur_bytes(&c, len);
        if (c.bad)
            return reader_corrupt(r, "malformed string record, tag 0x", tag);
        r->p = c.p;
        return define_string(r, id, s, len) < 0 ? -1 : 2;
    }
    case PF_TAG_THREAD: {
        uint64_t t = cur_u(&c), tid = cur_u(&c), len = cur_u(&c);
        const uint8_t *s = cur_bytes(&c, len);
        if (c.bad)
            return reader_corrupt(r, "malformed thread record, tag 0x", tag);
        r->p = c.p;
        if (define_thread(r, t, tid, s, len) < 0)
            return -1;
        ev->type = PROF_EV_THREAD;
        ev->thread = (uint32_t)t;
        ev->name = r->threads[t].name;
        ev->value = tid;
        return 1;
    }
    case PF_TAG_STEP:
        ev->type = PROF_EV_STEP;
        ev->value = cur_u(&c);
        ev->flags = cur_u32(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    case PF_TAG_MEMORY:
        ev->type = PROF_EV_MEMORY;
        ev->name_id = cur_u32(&c);
        ev->start_ns = cur_time(&c, r);
        ev->value = cur_u(&c);
        break;
    case PF_TAG_COUNTER: {
        ev->type = PROF_EV_COUNTER;
        ev->name_id = cur_u32(&c);
        ev->start_ns = cur_time(&c, r);
        const uint8_t *b = cur_bytes(&c, 8);
        if (b) {
            uint64_t bits = pf_load_u64(b);
            memcpy(&ev->fvalue, &bits, sizeof bits);
        }
        break;
    }
    case PF_TAG_MARK:
        ev->type = PROF_EV_MARK;
        ev->name_id = cur_u32(&c);
        ev->start_ns = cur_time(&c, r);
        break;
    case PF_TAG_DROPPED:
        ev->type = PROF_EV_DROPPED;
        ev->value = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        r->st.dropped_events += ev->value;
        break;
    case PF_TAG_GPU_KERNEL:
        ev->type = PROF_EV_GPU_KERNEL;
        ev->name_id = cur_u32(&c);
        ev->device = cur_u32(&c);
        ev->stream = cur_u32(&c);
        ev->correlation = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    case PF_TAG_GPU_MEMCPY:
        ev->type = PROF_EV_GPU_MEMCPY;
        ev->subkind = cur_u32(&c);
        ev->device = cur_u32(&c);
        ev->stream = cur_u32(&c);
        ev->correlation = cur_u(&c);
        ev->value = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    case PF_TAG_GPU_MEMSET:
        ev->type = PROF_EV_GPU_MEMSET;
        ev->device = cur_u32(&c);
        ev->stream = cur_u32(&c);
        ev->correlation = cur_u(&c);
        ev->value = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    case PF_TAG_SYNC:
        ev->type = PROF_EV_SYNC;
        ev->subkind = cur_u32(&c);
        ev->device = cur_u32(&c);
        ev->stream = cur_u32(&c);
        ev->correlation = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    case PF_TAG_API:
        ev->type = PROF_EV_API;
        ev->name_id = cur_u32(&c);
        ev->correlation = cur_u(&c);
        ev->start_ns = cur_time(&c, r);
        ev->dur_ns = cur_u(&c);
        break;
    default:
        if (tag >= PF_TAG_REGION && tag <= PF_TAG_REGION_LAST) {
            ev->type = PROF_EV_REGION;
            ev->kind = (uint32_t)(tag - PF_TAG_REGION);
            ev->name_id = cur_u32(&c);
            ev->depth = cur_u32(&c);
            ev->start_ns = cur_time(&c, r);
            ev->dur_ns = cur_u(&c);
            break;
        }
        if (tag >= PF_TAG_EXTENSION) { /* a newer minor version's record */
            cur_bytes(&c, cur_u(&c));
            if (c.bad)
                return reader_corrupt(r, "malformed extension record, tag 0x", tag);
            r->p = c.p;
            return 2;
        }
        return reader_corrupt(r, "unknown record tag 0x", tag);
    }
    r->cursor = ev->start_ns + ev->dur_ns; /* the next time is coded from this end */
    ev->name = name_of(r, ev->name_id, &c);
    if (c.bad == 2)
        return reader_corrupt(r, "string used before its definition: id 0x", ev->name_id);
    if (c.bad)
        return reader_corrupt(r, "malformed record, tag 0x", tag);
    r->p = c.p;
    return 1;
}

int prof_reader_next(prof_reader *r, prof_event *ev)
{
    for (;;) {
        if (r->done)
            return r->err.code ? -1 : 0;
        if (r->left == 0) {
            if (r->p != r->end)
                return reader_corrupt(r, "bytes after the last record: 0x",
                                      (unsigned long long)(r->end - r->p));
            int rc = reader_load_block(r);
            if (rc <= 0)
                return rc;
            continue;
        }
        if (r->p >= r->end)
            return reader_corrupt(r, "records missing: 0x", r->left);
        r->left--;
        int rc = decode_record(r, ev);
        if (rc == 1) {
            if (ev->type != PROF_EV_THREAD) /* definitions are not events */
                r->st.events++;
            return 1;
        }
        if (rc < 0)
            return -1;
    }
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

const char *prof_reader_thread_name(const prof_reader *r, uint32_t thread)
{
    return thread < r->nthreads ? r->threads[thread].name : NULL;
}

void prof_reader_close(prof_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0 && !r->mem)
        close(r->fd);
    ZSTD_freeDCtx(r->dctx);
    free(r->meta);
    free(r->stored);
    free(r->raw);
    free(r->strings);
    free(r->threads);
    while (r->arena) {
        arena_chunk *next = r->arena->next;
        free(r->arena);
        r->arena = next;
    }
    free(r);
}
