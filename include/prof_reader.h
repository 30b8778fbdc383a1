/* prof_reader.h - streaming reader of .prof files, for prof itself and for
 * people writing their own tools.
 *
 * A reader walks the file's blocks in file order and hands out one event at
 * a time; memory use is bounded by one block, a few thousand decoded events
 * and the string table, never by the number of events, and the string
 * table by the limits of the format (names of at most 65,536 bytes, each id
 * defined once, 256 MiB of definition text in all). Definitions (strings,
 * thread names) are consumed by the reader itself: events carry resolved
 * names. A file without its footer
 * (a run that crashed or was killed) is read up to its last intact block;
 * prof_reader_status() then says what was cut. Readers share nothing: use
 * one per thread.
 *
 * The byte-level format is specified in formats/prof-format.md.
 */
#ifndef PROF_READER_H
#define PROF_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libprof is built with hidden visibility: what this header declares,
 * the API, is all that libprof.so exports and libprof.a leaves global. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Error codes. The numbers are frozen: tools and scripts may depend on them. */
typedef enum prof_err {
    PROF_OK = 0,
    PROF_ERR_IO = 1,          /* a system call failed (open, read, write)          */
    PROF_ERR_NOMEM = 2,       /* out of memory                                     */
    PROF_ERR_NOT_PROF = 3,    /* not a prof file (bad magic, too short)            */
    PROF_ERR_VERSION = 4,     /* written by a newer, incompatible major version    */
    PROF_ERR_CORRUPT = 5,     /* checksum mismatch or malformed contents           */
    PROF_ERR_TRUNCATED = 6,   /* the file ends inside its header or metadata       */
    PROF_ERR_EMPTY = 7,       /* the file has no bytes                             */
    PROF_ERR_INVALID = 8,     /* an invalid argument or state                      */
    PROF_ERR_LIMIT = 9,       /* a size beyond what prof accepts                   */
    PROF_ERR_UNSUPPORTED = 10 /* a feature not built in                            */
} prof_err;

/* A short English description of a code ("corrupt data"). Never NULL. */
const char *prof_strerror(prof_err err);

/* A failure with its precise message, e.g. "block 12 at offset 40960:
 * payload checksum mismatch". The message does not repeat the file name. */
typedef struct prof_error {
    prof_err code;
    char message[256];
} prof_error;

/* Event types handed out by the reader. Values are API, not on-disk tags. */
typedef enum prof_event_type {
    PROF_EV_REGION = 1,     /* name, kind, depth, start_ns, dur_ns                     */
    PROF_EV_STEP = 2,       /* value (step number), start_ns, dur_ns, flags            */
    PROF_EV_MEMORY = 3,     /* name (series), start_ns, value (bytes)                  */
    PROF_EV_COUNTER = 4,    /* name, start_ns, fvalue                                  */
    PROF_EV_MARK = 5,       /* name, start_ns                                          */
    PROF_EV_GPU_KERNEL = 6, /* name, device, stream, correlation, start_ns, dur_ns     */
    PROF_EV_GPU_MEMCPY = 7, /* subkind (copy kind), device, stream, correlation,
                               value (bytes), start_ns, dur_ns                         */
    PROF_EV_GPU_MEMSET = 8, /* device, stream, correlation, value (bytes), start/dur   */
    PROF_EV_SYNC = 9,       /* subkind (sync kind), device, stream, correlation,
                               start_ns, dur_ns: time the CPU was blocked on the GPU   */
    PROF_EV_API = 10,       /* name, correlation, start_ns, dur_ns (runtime API call)  */
    PROF_EV_DROPPED = 11,   /* value (events lost), start_ns (when noticed)           */
    PROF_EV_THREAD = 12,    /* a thread was (re)named: thread, name, value (OS tid)    */
    PROF_EV_ATTR = 13       /* format 1.1: an attribute of a name: name and name_id (the
                               name described), subkind (PROF_ATTR_* key), value (the
                               value's string id); the value's text is
                               prof_event_attr_value(ev). Not timed, not counted as an
                               event (a definition, as PROF_EV_THREAD)                 */
} prof_event_type;

/* Keys of PROF_EV_ATTR (frozen, stored in files). Ignore keys you do not
 * know: a later minor version may add some. */
enum { PROF_ATTR_CLASS = 1 /* the class of the code the name's regions time,
                              e.g. "torch.nn.Linear" (prof_name_class)     */ };

/* Step flags */
#define PROF_STEP_SAMPLED 1u    /* region and GPU events of this step were kept  */
#define PROF_STEP_INCOMPLETE 2u /* closed by prof_stop, not by prof_step         */

/* Copy kinds of PROF_EV_GPU_MEMCPY (frozen, stored in files) */
enum { PROF_COPY_OTHER = 0, PROF_COPY_HTOD = 1, PROF_COPY_DTOH = 2, PROF_COPY_DTOD = 3,
       PROF_COPY_HTOH = 4, PROF_COPY_PEER = 5 };
/* Sync kinds of PROF_EV_SYNC (frozen, stored in files) */
enum { PROF_SYNC_OTHER = 0, PROF_SYNC_DEVICE = 1, PROF_SYNC_STREAM = 2, PROF_SYNC_EVENT = 3,
       PROF_SYNC_STREAM_WAIT = 4, PROF_SYNC_MEMCPY = 5 };

/* The thread of events on a GPU's own timeline (kernels, copies, memsets). */
#define PROF_THREAD_GPU 0xFFFFFFFEu

typedef struct prof_event {
    prof_event_type type;
    uint32_t thread;      /* profile thread index (not the OS tid), or PROF_THREAD_GPU */
    uint64_t start_ns;    /* nanoseconds since the profile's clock origin             */
    uint64_t dur_ns;
    const char *name;     /* resolved name; "" when the record has none. Valid until
                             the reader is closed.                                    */
    uint32_t name_id;
    uint32_t kind;        /* prof_kind of a region                                    */
    uint32_t depth;       /* nesting depth of a region, 0 for outermost               */
    uint32_t subkind;     /* copy or sync kind                                        */
    uint32_t flags;       /* step flags                                               */
    uint32_t device, stream;
    uint64_t correlation;
    uint64_t value;       /* bytes, step number, dropped count, OS tid                */
    double fvalue;        /* counter value                                            */
} prof_event;

/* What a reader learned about the file's completeness. Final once
 * prof_reader_next() has returned 0. */
typedef struct prof_read_status {
    int clean;               /* the footer was present and intact                   */
    int truncated;           /* data after the last intact block was unreadable     */
    uint64_t blocks;         /* intact blocks read so far                           */
    uint64_t events;         /* events handed out so far                            */
    uint64_t bytes_read;     /* file bytes consumed by intact structures            */
    uint64_t bytes_lost;     /* bytes after the last intact block (truncated files) */
    uint64_t file_size;
    uint64_t dropped_events; /* sum of the file's dropped-events records            */
    char detail[160];        /* why reading stopped early, e.g. "block 813 at offset
                                4096: header cut short (12 of 48 bytes)"; ""        */
} prof_read_status;

typedef struct prof_reader prof_reader;

/* Opens a file, checks its header and parses its metadata. Anything but a
 * regular file (a directory, a FIFO, a device) is refused at once, without
 * waiting for a FIFO's writer (PROF_ERR_IO, "cannot read: not a regular
 * file (a FIFO)"). From the first
 * prof_reader_next() on, a thread of the reader's own reads, checks and
 * decompresses blocks ahead of the caller (the events, status and errors
 * are those of reading in order); prof_reader_close() ends it. Without a
 * thread (none could be created, or PROF_THREADS=1 in the environment when
 * the file is opened) the caller's does all of it.
 * @return PROF_OK and *out, or an error described in *err (may be NULL).
 * Errors: PROF_ERR_IO, PROF_ERR_EMPTY, PROF_ERR_NOT_PROF, PROF_ERR_VERSION,
 * PROF_ERR_TRUNCATED, PROF_ERR_CORRUPT, PROF_ERR_NOMEM. */
prof_err prof_reader_open(const char *path, prof_reader **out, prof_error *err);

/* Same, over bytes in memory (not copied: keep them alive until closed). */
prof_err prof_reader_open_memory(const void *data, size_t size, prof_reader **out,
                                 prof_error *err);

/* The metadata object as JSON text (NUL-terminated), valid until closed. */
const char *prof_reader_metadata(const prof_reader *r);

/* Format version of the file. */
void prof_reader_version(const prof_reader *r, unsigned *major, unsigned *minor);

/* The next event in file order.
 * @return 1 and *ev; 0 at the end of the data (also the end of the intact
 * part of a cut file: see prof_reader_status); -1 on an error, described by
 * prof_reader_error(): damage in a file that was closed cleanly (its footer
 * promised more), malformed records or a limit passed in any file
 * (PROF_ERR_CORRUPT, PROF_ERR_LIMIT), and in any file memory that ran out
 * (PROF_ERR_NOMEM) or a read that failed (PROF_ERR_IO), which say nothing
 * of the file. */
int prof_reader_next(prof_reader *r, prof_event *ev);

/* The next events in file order, as many as are decoded already (one or
 * more), without copying them: *events points into the reader and stays
 * valid until the next call on r. The events, status and errors are those
 * of as many prof_reader_next() calls, and the two can be mixed.
 * @return 1 with *events and *count; 0 at the end; -1 on an error, as
 * prof_reader_next(). */
int prof_reader_next_batch(prof_reader *r, const prof_event **events, size_t *count);

/* The last error (code PROF_OK when none). */
const prof_error *prof_reader_error(const prof_reader *r);

/* Completeness so far; final after prof_reader_next() returned 0. */
void prof_reader_status(const prof_reader *r, prof_read_status *st);

/* Restricts reading to what can overlap the time window [from_ns, to_ns]
 * (nanoseconds since the clock origin, both ends included), so that a tool
 * showing a small part of a large profile does not decode all of it.
 *
 * An events block whose header says its timed records all end before
 * from_ns (its `last` < from_ns) or all start after to_ns (its `first` >
 * to_ns) is skipped: its header is checked, its payload is neither read,
 * checksummed nor decompressed. Every other block is read as usual and ALL
 * its events are delivered, so the caller still filters. What is delivered:
 *  - every event with start_ns <= to_ns and start_ns + dur_ns >= from_ns
 *    (a region that began before the window and ends in it or after it
 *    included), in the same order as without a window;
 *  - the other events of the blocks that hold such events;
 *  - everything in definitions blocks: thread definitions (PROF_EV_THREAD)
 *    and the string table, so names and prof_reader_thread_name() are as
 *    without a window.
 * Steps, marks, memory samples and counters are events like the others:
 * those outside the window may be missing.
 *
 * Call it after opening, before the first prof_reader_next() or
 * prof_reader_next_batch(): once reading has begun it has no effect.
 * Calling it again replaces the window. Once a block was skipped,
 * prof_read_status's events and dropped_events count what was delivered
 * only, the footer's totals of those are not compared
 * (its block count still is), and damage inside a skipped payload goes
 * unnoticed. blocks and bytes_read include skipped blocks. The window
 * relies on the file keeping string and thread definitions in definitions
 * blocks, as prof's writers do (format §5.2): a name defined inside a
 * skipped events block would be missing, and its later use reported as
 * corrupt data. Cost: none per event; one header read per skipped block. */
void prof_reader_set_window(prof_reader *r, uint64_t from_ns, uint64_t to_ns);

/* Work on the events where they are decoded. fn is called with each batch
 * of events, in file order, before the batch is handed out: on the
 * reader's own thread when it has one (see prof_reader_open), which
 * decodes each block for fn (apart from the caller's decoding of it) before
 * it hands the block over, so that per-event work a tool can do there runs
 * beside the caller's; else on the caller's inside prof_reader_next().
 * Batches hold the events prof_reader_next() hands out and the definitions
 * it consumes (PROF_EV_THREAD, PROF_EV_ATTR), with their names (valid until
 * closing, though not the same pointers as the events handed out); a batch
 * decoded ahead is seen even if the caller never gets it (it stops early,
 * or reading fails before it). fn must not call the reader. Once
 * prof_reader_next() or prof_reader_next_batch() has returned 0 or -1,
 * every call of fn has returned and there is none after; so once reading
 * ended with 0, fn has seen exactly the events that were handed out.
 * Call it after opening, before reading begins. @return 0, or -1 when
 * reading has begun (fn is not set). */
typedef void (*prof_batch_fn)(void *arg, const prof_event *events, size_t count);
int prof_reader_set_batch_fn(prof_reader *r, prof_batch_fn fn, void *arg);

/* Events blocks the window let the reader skip so far, and their stored
 * payload bytes (not read). Either pointer may be NULL. Both 0 without a
 * window. (A function rather than fields of prof_read_status, whose size
 * programs built against an older header rely on.) */
void prof_reader_skipped(const prof_reader *r, uint64_t *blocks, uint64_t *bytes);

/* The name of a profile thread (from its latest definition read so far), or
 * NULL. A batch from prof_reader_next_batch() counts as read whole: a
 * definition in it applies to the events before it in the batch too (the
 * PROF_EV_THREAD events themselves carry the name they define). */
const char *prof_reader_thread_name(const prof_reader *r, uint32_t thread);

void prof_reader_close(prof_reader *r);

/* The value of a PROF_EV_ATTR event ("torch.nn.Linear"), valid as long as
 * its name; "" for any other event. */
const char *prof_event_attr_value(const prof_event *ev);

/* The name of an event type ("region"), a kind ("compute"), a copy kind
 * ("HtoD") or a sync kind ("device"). Never NULL. */
const char *prof_event_type_name(prof_event_type t);
const char *prof_kind_name(uint32_t kind);
const char *prof_copy_kind_name(uint32_t kind);
const char *prof_sync_kind_name(uint32_t kind);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PROF_READER_H */
