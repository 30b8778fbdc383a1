/* kineto_int.h - the parts of the torch.profiler (Kineto) importer
 * shared between its files, private to them, as reader_int.h is to the
 * reader's:
 *
 *   kineto.c        the stream (gzip or plain text in a window), the fast
 *                   path's loop, the second reader, kineto_read
 *   kineto_parse.c  YAJL's callbacks and the event reader: JSON to one
 *                   event at a time (kin_event)
 *   kineto_queue.c  events packed and handled on a thread of their own
 *   kineto_map.c    what each event means for the sink: the mapping of
 *                   formats/kineto-import.md
 */
#ifndef PROF_IMPORT_KINETO_INT_H
#define PROF_IMPORT_KINETO_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "format/format.h"
#include "import/jscan.h"
#include "import/sink.h"

/* Text is inflated and parsed KIN_CHUNK bytes at a time, through a gzip
 * input buffer of KIN_GZ_BUFFER. A read at least twice that buffer makes
 * zlib inflate straight into ours, and zlib drops what one read inflated
 * when it meets corrupt data: so a corrupt gzip loses at most KIN_CHUNK of
 * text before the damage. Larger chunks are no faster. */
#define KIN_CHUNK (32u * 1024u)
#define KIN_GZ_BUFFER (16u * 1024u)
#define KIN_NAME_MAX PF_STRING_MAX  /* the format's string limit: longer names are cut */
#define KIN_SHORT 256u             /* category, thread and process names, kinds      */
#define KIN_ID_MAX 128u            /* a pid or tid written as a string               */
#define KIN_DEPTH_MAX 256          /* deeper nesting is damage, not a trace          */
/* YAJL keeps a token that spans chunks in a buffer of its own, as long as
 * the token: past this length a token is treated as damage, so that a
 * hostile file cannot make it grow without bound (kin_malloc). */
#define KIN_TOKEN_MAX (8u << 20)
#define KIN_CONTEXTS 64u           /* (context, device) pairs announced to the sink */
#define KIN_MEM_DEVICES 32u        /* devices with a running sum of [memory] Bytes   */
#define KIN_STR_THREADS 32u        /* string tids named after themselves             */
#define KIN_PROCS 16u              /* process_name / process_labels remembered       */
/* Synchronize calls held back until the trace shows whether it has CUPTI
 * sync activity of its own (cuda_sync), and for how many API calls. */
#define KIN_PENDING 256u

/* What the container being parsed is. */
typedef enum {
    C_SKIP = 0, /* a value prof does not use: everything inside is ignored */
    C_TOP,      /* the document object                                     */
    C_EVENTS,   /* traceEvents                                             */
    C_EVENT,    /* one event                                               */
    C_ARGS,     /* its args                                                */
    C_DEVICES,  /* deviceProperties                                        */
    C_DEVICE,   /* one of them                                             */
    C_DIST      /* distributedInfo                                         */
} kin_ctx;

/* Who reads: YAJL the document (until traceEvents opens, when the fast
 * path may take over), YAJL one event the fast path declined (until it
 * closes), or the fast path. */
typedef enum { TURN_DOCUMENT, TURN_EVENT, TURN_FAST } kin_yajl_turn;

/* What the value after the last key is. */
typedef enum {
    F_NONE = 0,
    T_EVENTS, T_DEVICES, T_DIST, T_BASE,                        /* top level     */
    F_NAME, F_CAT, F_PH, F_PID, F_TID, F_TS, F_DUR, F_ARGS,      /* an event      */
    A_DEVICE, A_IN_DEVICE, A_STREAM, A_CONTEXT, A_CORRELATION,   /* its args      */
    A_BYTES, A_SYNC_KIND, A_DEV_TYPE, A_DEV_ID, A_TOTAL_ALLOC, A_TOTAL_RESERVED,
    A_MEM_BYTES, A_META_NAME, A_LABELS,
    D_ID, D_NAME, D_MEM,                                         /* a device      */
    R_RANK, R_WORLD                                              /* distributed   */
} kin_field;

/* Integer args of an event, by bit in kin_event.has. */
enum { N_DEVICE, N_IN_DEVICE, N_STREAM, N_CONTEXT, N_CORRELATION, N_BYTES, N_DEV_TYPE,
       N_DEV_ID, N_TOTAL_ALLOC, N_TOTAL_RESERVED, N_MEM_BYTES, N_COUNT };

/* A pid or tid: Kineto writes integers, but also strings ("stream 7" for
 * 2021 GPU rows, "Spans", "" for its own rows). */
typedef struct kin_id {
    int kind; /* 0 absent, 1 integer (v), 2 string (s) */
    int64_t v;
    size_t len;
    char s[KIN_ID_MAX];
} kin_id;

typedef struct kin_event {
    size_t name_len, cat_len;
    int has_name, has_cat, has_ts, has_dur, bad_time;
    char ph;
    kin_id pid, tid;
    int64_t ts, dur;          /* ns */
    uint32_t has;             /* bits 1 << N_*   */
    int64_t num[N_COUNT];
    char sync_kind[KIN_SHORT];
    char meta_name[KIN_SHORT];
    char labels[KIN_SHORT];
    char cat[KIN_SHORT];
    char name[KIN_NAME_MAX + 1];
} kin_event;

typedef struct kin_device {
    int has_id;
    int64_t id, mem;
    char name[KIN_SHORT];
} kin_device;

typedef struct kin_pending {
    uint64_t start, end, api_seq;
    uint32_t correlation, sync_type;
} kin_pending;

typedef struct kin_proc {
    int64_t pid;
    int has_name, labelled_cpu;
    char name[KIN_SHORT];
} kin_proc;

typedef struct kin_mem {
    int64_t type, id, sum;
} kin_mem;

/* A helper's events (kineto.c), packed into one block of KIN_QBLOCK. */
typedef struct kin_packbuf {
    unsigned char *pack;
    size_t packed;
} kin_packbuf;

typedef struct kin_parser {
    import_sink *s;           /* read by both threads (kin_queue)      */
    const prof_tuning *tuning; /* its threads                          */
    int python_stacks;
    /* what the reader writes, on cache lines of its own: a line that both
     * threads use and one writes goes back and forth between the cores,
     * which made the reader a third slower */
    _Alignas(64) kin_ctx ctx[KIN_DEPTH_MAX + 1];
    int depth;
    kin_field field;
    /* Who reads: YAJL the whole document, or the fast path (jscan.h) the
     * events of traceEvents, with YAJL for the events it declines. */
    int fast;                 /* the fast path may read events        */
    int muted;                /* YAJL reads a made-up prefix: ignore   */
    kin_yajl_turn turn;       /* what YAJL reads now                   */
    int yield;                /* YAJL stopped to hand over, not damage */
    int token_too_long;       /* see kin_malloc                       */
    int seen_top, saw_events, not_object, too_deep;
    uint64_t cut;             /* strings cut to their buffer          */
    char damage[200];         /* what stopped the parse early, or ""  */
    kin_event ev;             /* the event being read                  */
    kin_device dev;
    int has_rank, has_world;
    int64_t rank, world;
    struct kin_queue *q;      /* events handled on a thread of their own, or NULL */
    kin_packbuf *into;        /* a helper's: where its events are packed */
    /* what handling events writes (and the reader, once the thread is done) */
    _Alignas(64) prof_err fail; /* a sink error: stops the parse        */
    kin_event *out;           /* the event being handled (kin_queue)   */
    /* the CPU process, and what M events said of processes */
    int has_cpu_pid;
    int64_t cpu_pid;
    kin_proc procs[KIN_PROCS];
    uint32_t nprocs;
    /* GPU contexts already announced */
    uint32_t ctx_id[KIN_CONTEXTS], ctx_dev[KIN_CONTEXTS];
    uint32_t nctx;
    /* 2021 [memory]: running sums of Bytes */
    kin_mem mem[KIN_MEM_DEVICES];
    uint32_t nmem;
    /* string tids named so far */
    uint64_t str_thread[KIN_STR_THREADS];
    uint32_t nstr_threads;
    /* synchronize calls held back (derived syncs) */
    int saw_cuda_sync;
    uint64_t api_seq;
    kin_pending pending[KIN_PENDING];
    uint32_t pend_head, npending;
    uint64_t syncs_from_calls;
} kin_parser;

/* Whether s[0..n) is the literal lit. */
static inline int kin_str_is(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit); /* of a literal: folded */
    return n == l && memcmp(s, lit, l) == 0;
}

/* The container being parsed. */
static inline kin_ctx kin_cur(const kin_parser *p)
{
    return p->ctx[p->depth];
}

/* The packed events' blocks: the queue's and a helper's. */
#define KIN_QBLOCK (256u << 10)

/* ---- kineto_map.c ---- */
int kin_event_done(kin_parser *p);
int kin_sink_ok(kin_parser *p, prof_err e);
void kin_malformed(kin_parser *p);
void kin_event_reset(kin_event *e);
int kin_num_int(const char *t, size_t n, int64_t *out);
int kin_num_us_to_ns(const char *t, size_t n, int64_t *out);
size_t kin_copy_str(kin_parser *p, char *dst, size_t cap, const unsigned char *src, size_t n);
int kin_pending_flush_one(kin_parser *p);

/* ---- kineto_queue.c ---- */
void kin_sync(kin_parser *p);
int kin_event_closed(kin_parser *p);
int kin_queue_adopt(struct kin_queue *q, unsigned char **packed, size_t n);
void kin_queue_start(kin_parser *p);
void kin_queue_end(kin_parser *p);

/* ---- kineto_parse.c ---- */
extern const yajl_callbacks kin_callbacks;
int kin_ignored(void *ctx);
jscan_result kin_read_event(kin_parser *p, const unsigned char *b, size_t n, size_t *pos,
                            int limit);

#endif
