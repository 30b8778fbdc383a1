/* reader.c - the streaming .prof reader behind include/prof_reader.h: the
 * public API and the caller's side of reading.
 *
 * Walks blocks in file order, checks every header and payload checksum,
 * decompresses one block at a time into a reused buffer and decodes its
 * records lazily, one event per call. A file with a trailer promised a
 * footer, so any damage in it is an error; a file without one is a run
 * that was cut short, so reading stops quietly at the first damaged block
 * and the status says what was lost.
 *
 * The producer (reader_prefetch.c) hands over what fetching each block
 * gave; this side takes them in order, decodes the blocks' records into
 * batches of events (or hands over what the producer decoded slim: see
 * pf_reader_next_slim), keeps what the API shows (status, thread names,
 * errors), checks the footer and gives every fault its place (reader_int.h
 * says how the files share the work). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/reader_int.h"
#include "util/error.h"
#include "util/vec.h"

static prof_err reader_init(prof_reader *r, prof_error *err)
{
    prof_err e = pf_read_header(r, err);
    if (e != PROF_OK)
        return e;
    if (!(r->prod.dctx = ZSTD_createDCtx()) ||
        !(r->events = malloc(BATCH_EVENTS * sizeof *r->events)))
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    r->st.file_size = r->file.size;
    r->offset = r->prod.offset = r->file.first_block;
    return PROF_OK;
}

prof_err prof_reader_open(const char *path, prof_reader **out, prof_error *err)
{
    struct stat sb;
    prof_reader *r;
    *out = NULL;
    int fd = pf_source_open(path, &sb, err);
    if (fd < 0)
        return PROF_ERR_IO;
    if (!(r = calloc(1, sizeof *r))) {
        close(fd);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    r->file.fd = fd;
    r->file.size = (uint64_t)sb.st_size;
    prof_err e = reader_init(r, err);
    if (e != PROF_OK) {
        prof_reader_close(r);
        return e;
    }
    pf_reader_tune(r, NULL);
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
    r->file.fd = -1;
    r->file.mem = data;
    r->file.size = size;
    prof_err e = reader_init(r, err);
    if (e != PROF_OK) {
        prof_reader_close(r);
        return e;
    }
    *out = r;
    return PROF_OK;
}

/* ---- faults, the footer, skipped blocks ------------------------------------------ */

/* Reading ends at fault, which this places: while fetching, at the block
 * to be read next (r->offset); else in the block being decoded. Damage met
 * while fetching a file that promised no footer is where the intact part
 * ends; anything else, and memory that ran out or a read that failed
 * whatever the file (the file itself may be whole), is an error. Returns
 * next()'s result. */
static int reader_stop(prof_reader *r, const prof_error *fault, int fetching)
{
    uint64_t block = fetching ? r->st.blocks : r->st.blocks - 1;
    uint64_t offset = fetching ? r->offset : r->block_offset;
    prof_err code = fault->code;
    r->done = 1;
    /* The fault's own words are cut at 127 bytes, leaving its place room
     * in the status's detail. */
    if (!fetching || r->file.has_trailer || code == PROF_ERR_NOMEM || code == PROF_ERR_IO) {
        prof_error_set(&r->err, code, "block %llu at offset %llu: %.127s",
                       (unsigned long long)block, (unsigned long long)offset, fault->message);
        return -1;
    }
    r->st.truncated = 1;
    r->st.bytes_lost = r->file.size - offset;
    snprintf(r->st.detail, sizeof r->st.detail, "block %llu at offset %llu: %.127s",
             (unsigned long long)block, (unsigned long long)offset, fault->message);
    return 0;
}

/* Checks the footer against what was read (format §8): its blocks total,
 * its length, and unless the window skipped blocks (whose records were not
 * counted) its events and dropped-events totals. Returns next()'s result. */
static int reader_footer(prof_reader *r, const uint8_t *p, size_t len)
{
    r->done = 1;
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
    r->st.bytes_read = r->file.size;
    return 0;
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

/* ---- handing events out ----------------------------------------------------------- */

/* Moves to the next block. Returns 1 when it is ready to decode (or there
 * is none, a skipped one), or next()'s result (0 end, -1 error). */
static int reader_load_block(prof_reader *r)
{
    pf_item *it = pf_item_next(r);
    const block_buf *b = &it->blk;
    r->block_left = 0;
    if (b->skipped)
        skip_blocks(r, b->skipped, b->skipped_bytes);
    switch (it->what) {
    case FETCH_END:
        r->done = 1;
        return 0;
    case FETCH_CUT:
        return reader_stop(r, &b->err, 1);
    case FETCH_FOOTER:
        return reader_footer(r, b->payload, b->rawlen);
    case FETCH_SKIP: /* (pf_block_fetch goes past these) */
        skip_blocks(r, 1, b->stored_len);
        return 1;
    case FETCH_BLOCK:
        break;
    }
    if (it->cont) { /* a further part of the block before: counted once */
        r->block_left = 1;
        r->item = it;
        return 1;
    }
    r->block_offset = r->offset;
    r->offset = b->next;
    r->st.bytes_read = r->offset;
    r->st.blocks++;
    r->block_left = 1;
    r->item = it;
    if (!r->prod.slim_fn)
        pf_decode_block(&r->dec, b);
    return 1;
}

/* Decodes the next batch of the current block into r->events; a fault
 * ends the block, in r->fault, after the events before it. Without a
 * producing thread the batch function runs here, as the events are. */
static void reader_decode_batch(prof_reader *r)
{
    r->nevents = r->next_event = 0;
    if (pf_decode_batch(&r->dec, r->events, &r->nevents, &r->fault))
        r->block_left = 0;
    if (r->prod.batch_fn && !r->pf && r->nevents)
        r->prod.batch_fn(r->prod.batch_arg, r->events, r->nevents);
}

/* The caller's side of a thread definition being handed out. */
static int thread_table_set(prof_reader *r, uint32_t t, const char *name, uint64_t tid)
{
    if (vec_grow_zero(&r->threads, &r->cap_threads, t, sizeof *r->threads) < 0)
        return -1;
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

/* Out of memory for thread names: reading ends in the block being read. */
static int no_memory_for_names(prof_reader *r)
{
    prof_error e;
    prof_error_set(&e, PROF_ERR_NOMEM, "out of memory for thread names");
    return reader_stop(r, &e, 0);
}

/* Reading has ended with rc (0 or -1): the producing thread has nothing
 * more to do, and stopping it now keeps the promise that the batch
 * function is not called after that. */
static int reader_end(prof_reader *r, int rc)
{
    pf_prefetch_stop(r);
    return rc;
}

/* Makes r->events a batch with events left. 1, or 0 at the end or -1 on
 * an error, as prof_reader_next(). */
static int events_ready(prof_reader *r)
{
    for (;;) {
        if (r->done)
            return reader_end(r, r->err.code ? -1 : 0);
        if (r->next_event < r->nevents)
            return 1;
        if (r->fault.code != PROF_OK)
            return reader_end(r, reader_stop(r, &r->fault, 0));
        if (r->block_left) {
            reader_decode_batch(r);
            continue;
        }
        int rc = reader_load_block(r);
        if (rc <= 0)
            return reader_end(r, rc);
    }
}

/* ---- slim ------------------------------------------------------------------------ */

/* A slim reader read event by event, or the other way round: reading
 * ends with an error saying so. */
static int slim_misused(prof_reader *r)
{
    if (!r->done)
        prof_error_set(&r->err, PROF_ERR_INVALID, r->prod.slim_fn
                       ? "a reader set to hand over slim was read event by event"
                       : "a reader not set to hand over slim was read slim");
    r->done = 1;
    return reader_end(r, -1);
}

/* What handing out a slim block records: its whole events as
 * event_taken does, its regions as counted events. */
static int slim_taken(prof_reader *r, const pf_slim_block *s)
{
    for (size_t i = 0; i < s->nwhole; i++)
        if (event_taken(r, &s->whole[i]) < 0)
            return -1;
    r->st.events += s->n - s->nwhole;
    return 0;
}

void pf_reader_tune(prof_reader *r, const prof_tuning *t)
{
    r->want_prefetch = r->file.fd >= 0 && tuning_helpers(t);
    r->pool = tuning_pool(t);
    r->help = t ? t->reader_help : TUNING_HELP_ON;
}

int pf_reader_threaded(const prof_reader *r)
{
    return r->want_prefetch || r->pf;
}

int pf_reader_set_slim_fn(prof_reader *r, pf_slim_fn fn, pf_slim_seen_fn seen, void *arg)
{
    if (r->st.blocks || r->done || r->pf)
        return -1; /* reading has begun */
    if (!r->prod.events && !(r->prod.events = malloc(BATCH_EVENTS * sizeof *r->prod.events)))
        return -1;
    if (!r->prod.tags && !(r->prod.tags = malloc(BATCH_EVENTS * sizeof *r->prod.tags)))
        return -1;
    r->prod.batch_fn = NULL;
    r->prod.slim_fn = fn;
    r->prod.slim_seen = seen;
    r->prod.batch_arg = arg;
    return 0;
}

int pf_reader_next_slim(prof_reader *r, pf_slim_batch *out)
{
    if (!r->prod.slim_fn && !r->done)
        return slim_misused(r);
    for (;;) {
        if (r->done)
            return reader_end(r, r->err.code ? -1 : 0);
        if (r->fault.code != PROF_OK)
            return reader_end(r, reader_stop(r, &r->fault, 0));
        if (r->block_left) {
            const pf_slim_block *s = &r->item->slim;
            r->block_left = 0;
            r->fault = s->fault;
            if (!s->n)
                continue;
            if (slim_taken(r, s) < 0)
                return reader_end(r, no_memory_for_names(r));
            *out = (pf_slim_batch){ s->v, s->n, s->whole, r->item->blk.thread, s->seen };
            return 1;
        }
        int rc = reader_load_block(r);
        if (rc <= 0)
            return reader_end(r, rc);
    }
}

/* ---- events ----------------------------------------------------------------------- */

int prof_reader_next(prof_reader *r, prof_event *ev)
{
    if (r->prod.slim_fn)
        return slim_misused(r);
    int rc = events_ready(r);
    if (rc <= 0)
        return rc;
    *ev = r->events[r->next_event];
    if (event_taken(r, ev) < 0)
        return reader_end(r, no_memory_for_names(r));
    r->next_event++;
    return 1;
}

int prof_reader_next_batch(prof_reader *r, const prof_event **events, size_t *count)
{
    if (r->prod.slim_fn)
        return slim_misused(r);
    int rc = events_ready(r);
    if (rc <= 0)
        return rc;
    size_t first = r->next_event, i = first;
    for (; i < r->nevents; i++)
        if (event_taken(r, &r->events[i]) < 0) {
            if (i == first)
                return reader_end(r, no_memory_for_names(r));
            break; /* those before it now; the next call meets it again */
        }
    r->next_event = (uint32_t)i;
    *events = &r->events[first];
    *count = i - first;
    return 1;
}

/* ---- what the reader knows ---------------------------------------------------------- */

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

int prof_reader_set_batch_fn(prof_reader *r, prof_batch_fn fn, void *arg)
{
    if (r->st.blocks || r->done || r->pf)
        return -1; /* reading has begun: batches were produced without it */
    r->prod.batch_fn = fn;
    r->prod.batch_arg = arg;
    return 0;
}

void pf_reader_abandon(prof_reader *r)
{
    pf_prefetch_stop(r);
    r->prod.batch_fn = NULL;
    r->prod.slim_fn = NULL;
    r->prod.slim_seen = NULL;
    r->done = 1;
    if (r->err.code == PROF_OK)
        prof_error_set(&r->err, PROF_ERR_INVALID, "reading was abandoned by its caller");
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
    return thread < r->cap_threads ? r->threads[thread].name : NULL;
}

const char *prof_event_attr_value(const prof_event *ev)
{
    if (!ev || ev->type != PROF_EV_ATTR || !ev->name)
        return "";
    return ev->name + strlen(ev->name) + 1; /* laid out by def_attr */
}

void prof_reader_close(prof_reader *r)
{
    if (!r)
        return;
    pf_prefetch_stop(r); /* before the file it reads is closed */
    if (r->file.fd >= 0 && !r->file.mem)
        close(r->file.fd);
    ZSTD_freeDCtx(r->prod.dctx);
    free(r->meta);
    for (size_t i = 0; i < PF_RING; i++) {
        pf_block_buf_free(&r->ring[i].blk);
        pf_slim_block_free(&r->ring[i].slim);
    }
    free(r->prod.events);
    free(r->prod.tags);
    free(r->prod.cache.v);
    pf_block_buf_free(&r->prod.held);
    free(r->prod.stage.data);
    pf_decoder_free(&r->prod.dec);
    free(r->events);
    pf_decoder_free(&r->dec);
    free(r->threads);
    free(r);
}
