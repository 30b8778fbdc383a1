/* kineto.c - torch.profiler (Kineto) Chrome-trace JSON, plain or gzip, read
 * as a stream and handed to a sink (sink.h). The document is never held:
 * zlib inflates it in chunks, YAJL calls back per token, and each event is
 * gathered into one fixed struct (the fields and args prof uses; the rest,
 * Input Dims and the like, is skipped unread) and dispatched when its
 * object closes. Top-level keys (deviceProperties, distributedInfo,
 * baseTimeNanoseconds) are taken wherever they are, before or after
 * traceEvents. The mapping, era by era, is formats/kineto-import.md. A cut
 * or damaged document keeps what came before the damage. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "format/format.h"
#include "import/import.h"
#include "import/jscan.h"
#include "import/sink.h"
#include "util/hash.h"

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

typedef struct kin_parser {
    import_sink *s;           /* read by both threads (kin_queue)      */
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
    struct kin_helper *into;  /* a helper's: where its events are packed */
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

/* ---- numbers ------------------------------------------------------------------ */

/* A JSON number's text as a double through strtod (text is not
 * NUL-terminated). 0 when it does not fit the local copy. */
static int num_double(const char *t, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, t, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + n || errno == ERANGE)
        return 0;
    *out = d;
    return 1;
}

/* A JSON number as an integer: exact for integer text, through strtod for
 * fractions and exponents. 0 when it is out of int64_t's range. */
static int num_int(const char *t, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = n > 0 && t[0] == '-';
    i += (size_t)neg;
    uint64_t v = 0;
    if (n - i <= 18) /* cannot pass INT64_MAX: no test a digit */
        for (; i < n && t[i] >= '0' && t[i] <= '9'; i++)
            v = v * 10 + (unsigned)(t[i] - '0');
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (v > (UINT64_C(9223372036854775808) - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (i == n && n > (size_t)neg) {
        if (!neg && v > INT64_MAX)
            return 0;
        *out = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 1;
    }
    double d;
    if (!num_double(t, n, &d) || !(d > -9.2e18 && d < 9.2e18))
        return 0;
    *out = (int64_t)d;
    return 1;
}

/* Microseconds (Kineto's ts and dur) as integer nanoseconds, exactly for
 * decimal text with up to three decimals (more are rounded), through
 * strtod for exponent forms. 0 when out of range. */
static int num_us_to_ns(const char *t, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = n > 0 && t[0] == '-';
    i += (size_t)neg;
    uint64_t us = 0;
    size_t digits = 0;
    if (n - i <= 16) { /* epoch microseconds: no test a digit, one after */
        for (; i < n && t[i] >= '0' && t[i] <= '9'; i++, digits++)
            us = us * 10 + (unsigned)(t[i] - '0');
        if (us / 10 > UINT64_C(9223372036854775) / 10) /* as the loop below */
            return 0;
    }
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++, digits++) {
        if (us > UINT64_C(9223372036854775) / 10) /* ns would not fit */
            return 0;
        us = us * 10 + (unsigned)(t[i] - '0');
    }
    uint64_t frac = 0;
    if (digits > 0 && i < n && t[i] == '.') {
        unsigned place = 0;
        int round = 0;
        for (i++; i < n && t[i] >= '0' && t[i] <= '9'; i++, place++) {
            if (place < 3)
                frac = frac * 10 + (unsigned)(t[i] - '0');
            else if (place == 3)
                round = t[i] >= '5';
        }
        for (; place < 3; place++)
            frac *= 10;
        frac += (uint64_t)round;
    }
    if (digits > 0 && i == n) {
        uint64_t ns = us * 1000 + frac;
        if (ns > (uint64_t)INT64_MAX)
            return 0;
        *out = neg ? -(int64_t)ns : (int64_t)ns;
        return 1;
    }
    double d;
    if (!num_double(t, n, &d) || !(d > -9.2e15 && d < 9.2e15))
        return 0;
    double ns = d * 1000.0;
    *out = (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
    return 1;
}

/* ---- strings -------------------------------------------------------------------- */

/* Copies a string into a buffer of cap bytes (NUL included), cut at a
 * UTF-8 character boundary when it does not fit; counts the cut. */
static size_t copy_str(kin_parser *p, char *dst, size_t cap, const unsigned char *src, size_t n)
{
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && (src[n] & 0xC0) == 0x80)
            n--;
        p->cut++;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

static inline int str_is(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit); /* of a literal: folded */
    return n == l && memcmp(s, lit, l) == 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* An integer written as a string ("456", "stream 7" with the prefix). */
static int str_int(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 20)
        return 0;
    for (size_t i = (s[0] == '-'); i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return num_int(s, n, out);
}

/* ---- the sink, and how a failure of it stops the parse ----------------------------- */

static int sink_ok(kin_parser *p, prof_err e)
{
    if (e != PROF_OK && p->fail == PROF_OK)
        p->fail = e;
    return e == PROF_OK;
}

static void kin_sync(kin_parser *p);

static void malformed(kin_parser *p)
{
    sink_note_unknown(p->s, "malformed");
}

/* The thread key of an event: an integer tid as itself (signed, cast); a
 * string holding an integer likewise (2021 wrote some tids as "456"); any
 * other string as a hash of its bytes, and the thread is named after it
 * the first time. 0 when the event has no tid. */
static int thread_key(kin_parser *p, const kin_id *tid, uint64_t *key)
{
    int64_t v;
    if (tid->kind == 1) {
        *key = (uint64_t)tid->v;
        return 1;
    }
    if (tid->kind != 2)
        return 0;
    if (str_int(tid->s, tid->len, &v)) {
        *key = (uint64_t)v;
        return 1;
    }
    *key = hash_fnv1a(tid->s, tid->len) | (UINT64_C(1) << 63);
    for (uint32_t i = 0; i < p->nstr_threads; i++)
        if (p->str_thread[i] == *key)
            return 1;
    if (p->nstr_threads < KIN_STR_THREADS) {
        p->str_thread[p->nstr_threads++] = *key;
        if (tid->len > 0)
            return sink_ok(p, sink_thread_name(p->s, *key, tid->s));
    }
    return 1;
}

static void note_cpu_pid(kin_parser *p)
{
    if (!p->has_cpu_pid && p->out->pid.kind == 1) {
        p->has_cpu_pid = 1;
        p->cpu_pid = p->out->pid.v;
    }
}

/* ---- CPU regions and steps --------------------------------------------------------- */

/* "ProfilerStep#N": 1 and N. */
static int step_number(const kin_event *e, uint64_t *n)
{
    static const char prefix[] = "ProfilerStep#";
    size_t l = sizeof prefix - 1;
    int64_t v;
    if (e->name_len <= l || memcmp(e->name, prefix, l) != 0)
        return 0;
    if (!str_int(e->name + l, e->name_len - l, &v) || v < 0)
        return 0;
    *n = (uint64_t)v;
    return 1;
}

static int64_t event_dur(const kin_event *e)
{
    return e->has_dur && e->dur > 0 ? e->dur : 0;
}

static int region(kin_parser *p)
{
    kin_event *e = p->out;
    uint64_t key, n;
    if (!e->has_name || !e->has_ts || !thread_key(p, &e->tid, &key)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    note_cpu_pid(p);
    if (step_number(e, &n))
        return sink_ok(p, sink_step(p->s, key, n, e->ts, event_dur(e)));
    return sink_ok(p, sink_region(p->s, key, e->name, e->name_len, SINK_KIND_INFER, e->ts,
                                  event_dur(e)));
}

/* ---- CUDA activity ------------------------------------------------------------------- */

static int arg(const kin_event *e, int which, int64_t *v)
{
    if (!(e->has & (1u << which)))
        return 0;
    *v = e->num[which];
    return 1;
}

static uint32_t arg_u32(const kin_event *e, int which, uint32_t dflt)
{
    int64_t v;
    return arg(e, which, &v) && v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : dflt;
}

/* The trace times of an X event as CUDA record times: start and end, both
 * non-negative. */
static int cuda_span(const kin_event *e, rt_cu_rec *r)
{
    int64_t dur = event_dur(e);
    if (!e->has_ts || e->ts < 0 || dur > INT64_MAX - e->ts)
        return 0;
    r->start = (uint64_t)e->ts;
    r->end = (uint64_t)(e->ts + dur);
    return 1;
}

/* Announces a (context, device) pair the first time a record names it, so
 * that the translation finds the device of a synchronization. */
static int announce_context(kin_parser *p, uint32_t context, uint32_t device)
{
    for (uint32_t i = 0; i < p->nctx; i++)
        if (p->ctx_id[i] == context && p->ctx_dev[i] == device)
            return 1;
    if (p->nctx == KIN_CONTEXTS)
        return 1;
    p->ctx_id[p->nctx] = context;
    p->ctx_dev[p->nctx++] = device;
    rt_cu_rec r = { .kind = RT_CU_CONTEXT, .context = context, .device = device };
    return sink_ok(p, sink_cuda(p->s, &r));
}

/* The device of a GPU event: args.device (args.inDevice for peer copies
 * of 2021), else its pid, which Kineto sets to the device. */
static int gpu_device(const kin_event *e, uint32_t *device)
{
    int64_t v;
    if (!arg(e, N_DEVICE, &v) && !arg(e, N_IN_DEVICE, &v)) {
        if (e->pid.kind != 1)
            return 0;
        v = e->pid.v;
    }
    if (v < 0 || v > (int64_t)UINT32_MAX)
        return 0;
    *device = (uint32_t)v;
    return 1;
}

/* The stream: args.stream, else the tid (an integer, or "stream 7"). */
static uint32_t gpu_stream(const kin_event *e)
{
    int64_t v = 0;
    if (!arg(e, N_STREAM, &v)) {
        if (e->tid.kind == 1)
            v = e->tid.v;
        else if (e->tid.kind != 2 || e->tid.len <= 7 || memcmp(e->tid.s, "stream ", 7) != 0 ||
                 !str_int(e->tid.s + 7, e->tid.len - 7, &v))
            v = 0;
    }
    return v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : 0;
}

/* CUPTI's copy kind from a copy's name: "Memcpy HtoD (Pageable -> Device)"
 * (CUDA), "CopyHostToDevice" (ROCm). 0 when the name does not say. */
static uint32_t copy_kind(const char *name)
{
    static const struct { const char *tag; uint32_t kind; } kinds[] = {
        { "HtoD", RT_CU_COPY_HTOD }, { "DtoH", RT_CU_COPY_DTOH }, { "HtoA", RT_CU_COPY_HTOA },
        { "AtoH", RT_CU_COPY_ATOH }, { "AtoA", RT_CU_COPY_ATOA }, { "AtoD", RT_CU_COPY_ATOD },
        { "DtoA", RT_CU_COPY_DTOA }, { "DtoD", RT_CU_COPY_DTOD }, { "HtoH", RT_CU_COPY_HTOH },
        { "PtoP", RT_CU_COPY_PTOP },
        { "CopyHostToDevice", RT_CU_COPY_HTOD }, { "CopyDeviceToHost", RT_CU_COPY_DTOH },
        { "CopyDeviceToDevice", RT_CU_COPY_DTOD }, { "CopyHostToHost", RT_CU_COPY_HTOH },
        { "CopyPeerToPeer", RT_CU_COPY_PTOP }, { "CopyDeviceToPeer", RT_CU_COPY_PTOP },
    };
    const char *t = starts_with(name, "Memcpy ") ? name + 7 : name;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t l = strlen(kinds[i].tag);
        if (strncmp(t, kinds[i].tag, l) == 0 && (t[l] == '\0' || t[l] == ' '))
            return kinds[i].kind;
    }
    return 0;
}

/* A kernel, copy or memset on the GPU's timeline. */
static int gpu_activity(kin_parser *p, rt_cu_kind kind)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = kind };
    int64_t bytes;
    if (!cuda_span(e, &r) || !gpu_device(e, &r.device) || (kind == RT_CU_KERNEL && !e->has_name)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    r.stream = gpu_stream(e);
    r.context = arg_u32(e, N_CONTEXT, 0);
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    if (arg(e, N_BYTES, &bytes) && bytes > 0)
        r.bytes = (uint64_t)bytes;
    if (kind == RT_CU_KERNEL)
        r.name = e->name;
    if (kind == RT_CU_MEMCPY)
        r.copy_kind = copy_kind(e->has_name ? e->name : "");
    return announce_context(p, r.context, r.device) && sink_ok(p, sink_cuda(p->s, &r));
}

/* CUPTI's sync type from Kineto's cuda_sync_kind (or the event's name). */
static uint32_t sync_type(const char *kind)
{
    if (strcmp(kind, "Stream Sync") == 0)
        return RT_CU_SYNC_STREAM;
    if (strcmp(kind, "Context Sync") == 0)
        return RT_CU_SYNC_CONTEXT;
    if (strcmp(kind, "Event Sync") == 0)
        return RT_CU_SYNC_EVENT;
    if (strcmp(kind, "Stream Wait Event") == 0)
        return RT_CU_SYNC_STREAM_WAIT;
    return 0;
}

/* The sync type of a runtime or driver call that waits for the GPU
 * (cudaDeviceSynchronize, hipStreamSynchronize, cuCtxSynchronize, ...),
 * or 0 for any other call. */
static uint32_t call_sync_type(const char *name, size_t n)
{
    static const struct { const char *name; uint32_t type; } calls[] = {
        { "cudaDeviceSynchronize", RT_CU_SYNC_CONTEXT }, { "hipDeviceSynchronize", RT_CU_SYNC_CONTEXT },
        { "cuCtxSynchronize", RT_CU_SYNC_CONTEXT },
        { "cudaStreamSynchronize", RT_CU_SYNC_STREAM }, { "hipStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cuStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cudaEventSynchronize", RT_CU_SYNC_EVENT }, { "hipEventSynchronize", RT_CU_SYNC_EVENT },
        { "cuEventSynchronize", RT_CU_SYNC_EVENT },
    };
    if (n < 16 || memcmp(name + n - 11, "Synchronize", 11) != 0) /* the common case */
        return 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (str_is(name, n, calls[i].name))
            return calls[i].type;
    return 0;
}

/* Hands a held-back synchronize call to the sink as a sync record. */
static int pending_flush_one(kin_parser *p)
{
    kin_pending *q = &p->pending[p->pend_head];
    p->pend_head = (p->pend_head + 1) % KIN_PENDING;
    p->npending--;
    rt_cu_rec r = { .kind = RT_CU_SYNC, .start = q->start, .end = q->end,
                    .correlation = q->correlation, .sync_type = q->sync_type };
    p->syncs_from_calls++;
    return sink_ok(p, sink_cuda(p->s, &r));
}

/* Traces without CUPTI sync activity (before 2023, ROCm) show a wait for
 * the GPU only as the call that waited: such a call becomes a sync record
 * too. Traces with cuda_sync have a record of their own for it, which may
 * come a little before or after the call: calls are held back until
 * KIN_PENDING API calls later, and dropped when a cuda_sync comes first. */
static int pending_push(kin_parser *p, const rt_cu_rec *api, uint32_t type)
{
    if (p->npending == KIN_PENDING && !pending_flush_one(p))
        return 0;
    kin_pending *q = &p->pending[(p->pend_head + p->npending) % KIN_PENDING];
    q->start = api->start;
    q->end = api->end;
    q->correlation = api->correlation;
    q->sync_type = type;
    q->api_seq = p->api_seq;
    p->npending++;
    return 1;
}

static int pending_age(kin_parser *p)
{
    while (p->npending > 0 && p->api_seq - p->pending[p->pend_head].api_seq >= KIN_PENDING)
        if (!pending_flush_one(p))
            return 0;
    return 1;
}

/* A CUDA runtime or driver call (HIP in ROCm traces) on a CPU thread. */
static int api_call(kin_parser *p)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = RT_CU_API };
    if (!e->has_name || !cuda_span(e, &r) || !thread_key(p, &e->tid, &r.tid)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    note_cpu_pid(p);
    r.name = e->name;
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    p->api_seq++;
    if (!sink_ok(p, sink_cuda(p->s, &r)) || !pending_age(p))
        return 0;
    uint32_t type = call_sync_type(e->name, e->name_len);
    if (type && r.correlation && !p->saw_cuda_sync)
        return pending_push(p, &r, type);
    return 1;
}

/* CUPTI synchronization activity (cuda_sync, 2023 on). */
static int sync_activity(kin_parser *p)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = RT_CU_SYNC };
    uint32_t device;
    if (!cuda_span(e, &r) || !gpu_device(e, &device)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    if (!p->saw_cuda_sync) { /* the trace has its own: held-back calls are not syncs */
        p->saw_cuda_sync = 1;
        p->npending = 0;
    }
    r.sync_type = sync_type(e->sync_kind[0] ? e->sync_kind : e->has_name ? e->name : "");
    r.context = arg_u32(e, N_CONTEXT, 0);
    r.stream = arg_u32(e, N_STREAM, 0);
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    return announce_context(p, r.context, device) && sink_ok(p, sink_cuda(p->s, &r));
}

/* ---- instants: [memory] and marks --------------------------------------------------- */

static kin_mem *mem_device(kin_parser *p, int64_t type, int64_t id)
{
    for (uint32_t i = 0; i < p->nmem; i++)
        if (p->mem[i].type == type && p->mem[i].id == id)
            return &p->mem[i];
    if (p->nmem == KIN_MEM_DEVICES)
        return NULL;
    kin_mem *m = &p->mem[p->nmem++];
    m->type = type;
    m->id = id;
    m->sum = 0;
    return m;
}

/* "prefix.what", built by hand: a trace can hold millions of these */
static int memory_sample(kin_parser *p, const char *prefix, const char *what, int64_t bytes)
{
    char series[64];
    size_t lp = strlen(prefix), lw = strlen(what);
    if (lp + 1 + lw >= sizeof series)
        return 1; /* not with the prefixes of memory_event */
    memcpy(series, prefix, lp);
    series[lp] = '.';
    memcpy(series + lp + 1, what, lw + 1);
    return sink_ok(p, sink_memory(p->s, series, p->out->ts, bytes > 0 ? (uint64_t)bytes : 0));
}

/* "gpu" and the device's number, into 32 bytes */
static void gpu_prefix(char *prefix, int64_t id)
{
    char digits[20];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + id % 10);
    while ((id /= 10) > 0);
    memcpy(prefix, "gpu", 3);
    for (size_t i = 0; i < n; i++)
        prefix[3 + i] = digits[n - 1 - i];
    prefix[3 + n] = '\0';
}

/* A [memory] instant: the caching allocator's totals after an allocation
 * or a free (2022 on), or only the bytes of it (2021), summed here. */
static int memory_event(kin_parser *p)
{
    kin_event *e = p->out;
    int64_t type, id = -1, total, bytes;
    if (!e->has_ts || !arg(e, N_DEV_TYPE, &type)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    (void)arg(e, N_DEV_ID, &id);
    char prefix[32] = "host";
    if (type != 0 && id >= 0 && id <= INT32_MAX)
        gpu_prefix(prefix, id);
    else if (type != 0) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    if (arg(e, N_TOTAL_ALLOC, &total)) {
        if (!memory_sample(p, prefix, "allocated", total))
            return 0;
        return !arg(e, N_TOTAL_RESERVED, &total) || memory_sample(p, prefix, "reserved", total);
    }
    kin_mem *m;
    if (!arg(e, N_MEM_BYTES, &bytes) || !(m = mem_device(p, type, id))) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    if ((bytes > 0 && m->sum > INT64_MAX - bytes) || (bytes < 0 && m->sum < INT64_MIN - bytes))
        m->sum = bytes > 0 ? INT64_MAX : INT64_MIN;
    else
        m->sum += bytes;
    return memory_sample(p, prefix, "allocated", m->sum);
}

/* The thread of a mark. Kineto's own instants ("Iteration Start: PyTorch
 * Profiler", "Record Window End") name no thread ("Trace PyTorch
 * Profiler", ""): they go on the process's main thread (tid = pid) once
 * the process is known, rather than on a thread of their own. */
static int mark_thread(kin_parser *p, const kin_id *tid, uint64_t *key)
{
    int64_t v;
    if (tid->kind == 2 && !str_int(tid->s, tid->len, &v) && p->has_cpu_pid) {
        *key = (uint64_t)p->cpu_pid;
        return 1;
    }
    return thread_key(p, tid, key);
}

static int instant(kin_parser *p)
{
    kin_event *e = p->out;
    uint64_t key;
    if (e->has_name && str_is(e->name, e->name_len, "[memory]"))
        return memory_event(p);
    if (!e->has_name || !e->has_ts || !mark_thread(p, &e->tid, &key)) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    return sink_ok(p, sink_mark(p->s, key, e->name, e->ts));
}

/* ---- M events -------------------------------------------------------------------------- */

static kin_proc *proc_of(kin_parser *p, int64_t pid)
{
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    if (p->nprocs == KIN_PROCS)
        return NULL;
    kin_proc *pr = &p->procs[p->nprocs++];
    memset(pr, 0, sizeof *pr);
    pr->pid = pid;
    return pr;
}

/* process_name and process_labels are remembered: the name of the CPU
 * process is told at the end, when its pid is known (GPU rows are
 * "processes" of the same name). thread_name names CPU threads; a GPU row's
 * ("stream 7 ") names no thread prof has. */
static int metadata_event(kin_parser *p)
{
    kin_event *e = p->out;
    kin_proc *pr;
    uint64_t key;
    if (!e->has_name)
        return 1;
    int is_name = str_is(e->name, e->name_len, "process_name");
    if (is_name || str_is(e->name, e->name_len, "process_labels")) {
        if (e->pid.kind != 1 || !(pr = proc_of(p, e->pid.v)))
            return 1;
        if (is_name && e->meta_name[0]) {
            snprintf(pr->name, sizeof pr->name, "%s", e->meta_name);
            pr->has_name = 1;
        } else if (!is_name) {
            pr->labelled_cpu = strcmp(e->labels, "CPU") == 0;
        }
        return 1;
    }
    if (!str_is(e->name, e->name_len, "thread_name") || !e->meta_name[0])
        return 1;
    int cpu = p->has_cpu_pid ? e->pid.kind == 1 && e->pid.v == p->cpu_pid
                             : !starts_with(e->meta_name, "stream ");
    if (!cpu || e->tid.kind == 0 || !thread_key(p, &e->tid, &key))
        return p->fail == PROF_OK;
    return sink_ok(p, sink_thread_name(p->s, key, e->meta_name));
}

/* ---- one event --------------------------------------------------------------------------- */

typedef enum {
    H_UNKNOWN = 0, H_REGION, H_PYTHON, H_KERNEL, H_MEMCPY, H_MEMSET, H_API, H_SYNC,
    H_SKIPPED, H_IGNORED
} kin_handler;

static kin_handler handler_of(const char *cat, size_t n)
{
#define CAT(name, h) { name, sizeof name - 1, h }
    static const struct { const char *cat; size_t len; kin_handler h; } cats[] = {
        CAT("cpu_op", H_REGION), CAT("user_annotation", H_REGION), CAT("Operator", H_REGION),
        CAT("python_function", H_PYTHON),
        CAT("kernel", H_KERNEL), CAT("Kernel", H_KERNEL),
        CAT("gpu_memcpy", H_MEMCPY), CAT("Memcpy", H_MEMCPY),
        CAT("gpu_memset", H_MEMSET), CAT("Memset", H_MEMSET),
        CAT("cuda_runtime", H_API), CAT("cuda_driver", H_API), CAT("Runtime", H_API),
        CAT("cuda_sync", H_SYNC),
        CAT("gpu_user_annotation", H_SKIPPED),
        CAT("Trace", H_IGNORED), CAT("overhead", H_IGNORED), CAT("cuda_profiler_range", H_IGNORED),
        CAT("ac2g", H_IGNORED), CAT("async_cpu_to_gpu", H_IGNORED), CAT("async", H_IGNORED),
        CAT("fwdbwd", H_IGNORED),
    };
#undef CAT
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++)
        if (n == cats[i].len && memcmp(cat, cats[i].cat, n) == 0)
            return cats[i].h;
    return H_UNKNOWN;
}

static int complete_event(kin_parser *p)
{
    kin_event *e = p->out;
    if (!e->has_cat) {
        sink_note_unknown(p->s, "(none)");
        return 1;
    }
    switch (handler_of(e->cat, e->cat_len)) {
    case H_REGION: return region(p);
    case H_PYTHON:
        if (p->python_stacks)
            return region(p);
        sink_note_skipped(p->s, "python_function");
        return 1;
    case H_KERNEL: return gpu_activity(p, RT_CU_KERNEL);
    case H_MEMCPY: return gpu_activity(p, RT_CU_MEMCPY);
    case H_MEMSET: return gpu_activity(p, RT_CU_MEMSET);
    case H_API: return api_call(p);
    case H_SYNC: return sync_activity(p);
    case H_SKIPPED: sink_note_skipped(p->s, e->cat); return 1;
    case H_IGNORED: return 1;
    case H_UNKNOWN: break;
    }
    sink_note_unknown(p->s, e->cat);
    return 1;
}

/* Dispatches the event just closed, by phase, then category. */
static int event_done(kin_parser *p)
{
    kin_event *e = p->out;
    if (e->bad_time) {
        malformed(p);
        return p->fail == PROF_OK;
    }
    switch (e->ph) {
    case 'X': return complete_event(p);
    case 'i':
    case 'I': return instant(p);
    case 'M': return metadata_event(p);
    case 's':
    case 't':
    case 'f': return 1; /* flows: every GPU record carries its correlation */
    case '\0': malformed(p); return p->fail == PROF_OK;
    default: break;
    }
    char what[16];
    snprintf(what, sizeof what, "ph %c", e->ph);
    sink_note_unknown(p->s, what);
    return 1;
}

static void event_reset(kin_event *e)
{
    e->name_len = e->cat_len = 0;
    e->has_name = e->has_cat = e->has_ts = e->has_dur = e->bad_time = 0;
    e->ph = '\0';
    e->pid.kind = e->tid.kind = 0;
    e->has = 0;
    e->sync_kind[0] = e->meta_name[0] = e->labels[0] = e->cat[0] = e->name[0] = '\0';
}

/* ---- events handled on a thread of their own --------------------------------------------- */

/* Reading an event and handling it (the sink: nesting, names, encoding)
 * take about as long as each other, so with two cores they overlap: the
 * reader packs each event it closes into blocks, and a thread unpacks and
 * handles them in the same order. Everything else that reaches the sink
 * from the reader (devices, rank, epoch, damage, malformed events) first
 * waits for the thread to catch up (kin_sync), so that the sink sees
 * exactly the calls it would on one thread. PROF_THREADS=1 keeps it on
 * one: the reference the tests compare with. */
#define KIN_QBLOCK (256u << 10)
#define KIN_QBLOCKS 8u

typedef struct kin_queue {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a block to handle, or the end     */
    pthread_cond_t freed; /* a block handled                   */
    unsigned char *block[KIN_QBLOCKS];
    size_t used[KIN_QBLOCKS];
    unsigned head, count; /* handed over: head .. head+count-1 */
    int closing, stopped; /* stopped: the sink failed          */
    /* the reader's, on a line of its own (see kin_parser) */
    _Alignas(64) unsigned fill; /* the block the reader packs into */
    size_t fill_used;
    _Alignas(64) kin_event ev; /* the thread's unpacked event  */
} kin_queue;

/* An event as packed: this header, the integer args it has (in the order
 * of their bits in has), then its strings without NULs. */
typedef struct kin_packed {
    int64_t ts, dur, pid, tid;
    uint32_t has, name_len, cat_len;
    uint16_t pid_len, tid_len;
    uint8_t sync_len, meta_len, labels_len; /* under KIN_SHORT */
    uint8_t flags, ph, pid_kind, tid_kind;
} kin_packed;

enum { PK_NAME = 1, PK_CAT = 2, PK_TS = 4, PK_DUR = 8, PK_BAD_TIME = 16 };

/* Bits set in x: __builtin_popcount is a call into libgcc on a build
 * for any x86-64, and this is counted for every event twice. */
static inline size_t bits_set(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

static size_t packed_size(const kin_packed *h)
{
    size_t n = sizeof *h + bits_set(h->has) * sizeof(int64_t) + h->name_len +
               h->cat_len + h->pid_len + h->tid_len + h->sync_len + h->meta_len + h->labels_len;
    return (n + 7) & ~(size_t)7;
}

static unsigned char *put_bytes(unsigned char *d, const void *s, size_t n)
{
    memcpy(d, s, n);
    return d + n;
}

static const unsigned char *get_string(const unsigned char *b, char *s, size_t n)
{
    memcpy(s, b, n);
    s[n] = '\0';
    return b + n;
}

static kin_packed pack_header(const kin_event *e)
{
    kin_packed h = { .ts = e->ts, .dur = e->dur, .pid = e->pid.v, .tid = e->tid.v,
                     .has = e->has, .name_len = (uint32_t)e->name_len,
                     .cat_len = (uint32_t)e->cat_len, .ph = (uint8_t)e->ph,
                     .pid_kind = (uint8_t)e->pid.kind, .tid_kind = (uint8_t)e->tid.kind };
    h.pid_len = (uint16_t)(e->pid.kind == 2 ? e->pid.len : 0);
    h.tid_len = (uint16_t)(e->tid.kind == 2 ? e->tid.len : 0);
    h.sync_len = (uint8_t)(e->sync_kind[0] ? strlen(e->sync_kind) : 0);
    h.meta_len = (uint8_t)(e->meta_name[0] ? strlen(e->meta_name) : 0);
    h.labels_len = (uint8_t)(e->labels[0] ? strlen(e->labels) : 0);
    h.flags = (uint8_t)((e->has_name ? PK_NAME : 0) | (e->has_cat ? PK_CAT : 0) |
                        (e->has_ts ? PK_TS : 0) | (e->has_dur ? PK_DUR : 0) |
                        (e->bad_time ? PK_BAD_TIME : 0));
    return h;
}

static void pack(const kin_event *e, const kin_packed *h, unsigned char *d)
{
    d = put_bytes(d, h, sizeof *h);
    for (uint32_t has = h->has; has; has &= has - 1)
        d = put_bytes(d, &e->num[__builtin_ctz(has)], sizeof *e->num);
    d = put_bytes(d, e->name, h->name_len);
    d = put_bytes(d, e->cat, h->cat_len);
    d = put_bytes(d, e->pid.s, h->pid_len);
    d = put_bytes(d, e->tid.s, h->tid_len);
    d = put_bytes(d, e->sync_kind, h->sync_len);
    d = put_bytes(d, e->meta_name, h->meta_len);
    put_bytes(d, e->labels, h->labels_len);
}

/* Unpacks the event at b into e; the size it took. */
static size_t unpack(const unsigned char *b, kin_event *e)
{
    kin_packed h;
    memcpy(&h, b, sizeof h);
    e->ts = h.ts;
    e->dur = h.dur;
    e->has = h.has;
    e->ph = (char)h.ph;
    e->has_name = !!(h.flags & PK_NAME);
    e->has_cat = !!(h.flags & PK_CAT);
    e->has_ts = !!(h.flags & PK_TS);
    e->has_dur = !!(h.flags & PK_DUR);
    e->bad_time = !!(h.flags & PK_BAD_TIME);
    e->pid.kind = h.pid_kind;
    e->pid.v = h.pid;
    e->pid.len = h.pid_len;
    e->tid.kind = h.tid_kind;
    e->tid.v = h.tid;
    e->tid.len = h.tid_len;
    e->name_len = h.name_len;
    e->cat_len = h.cat_len;
    const unsigned char *s = b + sizeof h;
    for (uint32_t has = h.has; has; has &= has - 1, s += sizeof *e->num)
        memcpy(&e->num[__builtin_ctz(has)], s, sizeof *e->num);
    s = get_string(s, e->name, h.name_len);
    s = get_string(s, e->cat, h.cat_len);
    s = get_string(s, e->pid.s, h.pid_len);
    s = get_string(s, e->tid.s, h.tid_len);
    s = get_string(s, e->sync_kind, h.sync_len);
    s = get_string(s, e->meta_name, h.meta_len);
    get_string(s, e->labels, h.labels_len);
    return packed_size(&h);
}

/* The thread: handles the blocks in order; after a failure of the sink it
 * only hands them back. */
static void *kin_handle_events(void *arg)
{
    kin_parser *p = arg;
    kin_queue *q = p->q;
    int ok = 1;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->count == 0 && !q->closing)
            pthread_cond_wait(&q->ready, &q->mu);
        if (q->count == 0)
            break;
        unsigned b = q->head;
        pthread_mutex_unlock(&q->mu);
        for (size_t at = 0; ok && at < q->used[b];) {
            at += unpack(q->block[b] + at, &q->ev);
            ok = event_done(p);
        }
        pthread_mutex_lock(&q->mu);
        q->head = (b + 1) % KIN_QBLOCKS;
        q->count--;
        q->stopped |= !ok;
        pthread_cond_signal(&q->freed);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Hands the block being packed over (when it holds anything) and waits
 * for a free one. 0 once the sink has failed. */
static int kin_publish(kin_queue *q)
{
    pthread_mutex_lock(&q->mu);
    if (q->fill_used) {
        q->used[q->fill] = q->fill_used;
        q->count++;
        pthread_cond_signal(&q->ready);
    }
    while (q->count == KIN_QBLOCKS)
        pthread_cond_wait(&q->freed, &q->mu);
    int ok = !q->stopped;
    q->fill = (q->head + q->count) % KIN_QBLOCKS;
    q->fill_used = 0;
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* Waits until every event handed over is handled: then the reader may
 * call the sink itself. */
static void kin_sync(kin_parser *p)
{
    kin_queue *q = p->q;
    if (!q)
        return;
    kin_publish(q);
    pthread_mutex_lock(&q->mu);
    while (q->count > 0)
        pthread_cond_wait(&q->freed, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

/* An event closed: handled here, or packed for the thread. */
static int helper_pack(kin_parser *g);

static int event_closed(kin_parser *p)
{
    kin_queue *q = p->q;
    if (p->into)
        return helper_pack(p);
    if (!q)
        return event_done(p);
    kin_packed h = pack_header(&p->ev);
    size_t need = packed_size(&h);
    if (q->fill_used + need > KIN_QBLOCK && !kin_publish(q))
        return 0;
    pack(&p->ev, &h, q->block[q->fill] + q->fill_used);
    q->fill_used += need;
    return 1;
}

/* Packed events read by a helper (kin_helper), after the reader's own:
 * its block becomes the one being filled, and it gets a free one in
 * exchange (both KIN_QBLOCK). 0 once the sink has failed. */
static int queue_adopt(kin_queue *q, unsigned char **packed, size_t n)
{
    if (q->fill_used && !kin_publish(q))
        return 0;
    /* the block being filled is the reader's alone until published */
    unsigned char *free_block = q->block[q->fill];
    q->block[q->fill] = *packed;
    *packed = free_block;
    q->fill_used = n;
    return 1;
}

/* Starts the thread, unless PROF_THREADS=1, there is one core, or it
 * cannot be had: then events are handled as they close. */
static void kin_queue_start(kin_parser *p)
{
    if (pf_one_thread())
        return;
    kin_queue *q = aligned_alloc(_Alignof(kin_queue), sizeof *q);
    if (!q)
        return;
    memset(q, 0, sizeof *q);
    unsigned made = 0;
    while (made < KIN_QBLOCKS && (q->block[made] = malloc(KIN_QBLOCK)))
        made++;
    int mu = made == KIN_QBLOCKS && pthread_mutex_init(&q->mu, NULL) == 0;
    int ready = mu && pthread_cond_init(&q->ready, NULL) == 0;
    int freed = ready && pthread_cond_init(&q->freed, NULL) == 0;
    p->q = q;
    p->out = &q->ev;
    if (freed && pthread_create(&q->thread, NULL, kin_handle_events, p) == 0)
        return;
    p->q = NULL;
    p->out = &p->ev;
    if (freed)
        pthread_cond_destroy(&q->freed);
    if (ready)
        pthread_cond_destroy(&q->ready);
    if (mu)
        pthread_mutex_destroy(&q->mu);
    while (made > 0)
        free(q->block[--made]);
    free(q);
}

/* Every event handled: the thread ends, and the reader alone goes on. */
static void kin_queue_end(kin_parser *p)
{
    kin_queue *q = p->q;
    if (!q)
        return;
    kin_sync(p);
    pthread_mutex_lock(&q->mu);
    q->closing = 1;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    p->q = NULL;
    p->out = &p->ev;
    pthread_cond_destroy(&q->freed);
    pthread_cond_destroy(&q->ready);
    pthread_mutex_destroy(&q->mu);
    for (unsigned i = 0; i < KIN_QBLOCKS; i++)
        free(q->block[i]);
    free(q);
}

/* ---- top-level objects ------------------------------------------------------------------- */

static int device_done(kin_parser *p)
{
    kin_device *d = &p->dev;
    if (!d->has_id || d->id < 0 || d->id > (int64_t)UINT32_MAX)
        return 1;
    return sink_ok(p, sink_add_device(p->s, (uint32_t)d->id, d->name[0] ? d->name : NULL,
                                      d->mem > 0 ? (uint64_t)d->mem : 0));
}

static void dist_done(kin_parser *p)
{
    int rank = p->has_rank && p->rank >= 0 && p->rank <= INT_MAX ? (int)p->rank : -1;
    int world = p->has_world && p->world > 0 && p->world <= INT_MAX ? (int)p->world : -1;
    if (rank >= 0 || world > 0)
        sink_set_rank(p->s, rank, world);
}

/* ---- YAJL callbacks ----------------------------------------------------------------------- */

/* Stops YAJL where the fast path takes over: the callback returns 0, and
 * yield tells the stream that it is no damage. */
static int hand_over(kin_parser *p)
{
    p->yield = 1;
    return 0;
}

static kin_ctx cur(const kin_parser *p)
{
    return p->ctx[p->depth];
}

/* An event's key (n > 0). */
static inline kin_field event_key(const char *k, size_t n)
{
    switch (n) {
    case 2:
        if (memcmp(k, "ph", 2) == 0) return F_PH;
        if (memcmp(k, "ts", 2) == 0) return F_TS;
        return F_NONE;
    case 3:
        if (memcmp(k, "cat", 3) == 0) return F_CAT;
        if (memcmp(k, "pid", 3) == 0) return F_PID;
        if (memcmp(k, "tid", 3) == 0) return F_TID;
        if (memcmp(k, "dur", 3) == 0) return F_DUR;
        return F_NONE;
    case 4:
        if (memcmp(k, "name", 4) == 0) return F_NAME;
        if (memcmp(k, "args", 4) == 0) return F_ARGS;
        return F_NONE;
    default: return F_NONE;
    }
}

/* A key of an event's args (n > 0). */
static inline kin_field args_key(const char *k, size_t n)
{
    switch (k[0]) {
    case 'd': if (str_is(k, n, "device")) return A_DEVICE; break;
    case 'i': if (str_is(k, n, "inDevice")) return A_IN_DEVICE; break;
    case 's': if (str_is(k, n, "stream")) return A_STREAM; break;
    case 'c':
        if (str_is(k, n, "correlation")) return A_CORRELATION;
        if (str_is(k, n, "context")) return A_CONTEXT;
        if (str_is(k, n, "cuda_sync_kind")) return A_SYNC_KIND;
        break;
    case 'b': if (str_is(k, n, "bytes")) return A_BYTES; break;
    case 'n': if (str_is(k, n, "name")) return A_META_NAME; break;
    case 'l': if (str_is(k, n, "labels")) return A_LABELS; break;
    case 'D':
        if (str_is(k, n, "Device Type")) return A_DEV_TYPE;
        if (str_is(k, n, "Device Id")) return A_DEV_ID;
        break;
    case 'T':
        if (str_is(k, n, "Total Allocated")) return A_TOTAL_ALLOC;
        if (str_is(k, n, "Total Reserved")) return A_TOTAL_RESERVED;
        break;
    case 'B': if (str_is(k, n, "Bytes")) return A_MEM_BYTES; break;
    default: break;
    }
    return F_NONE;
}

static kin_field key_field(kin_ctx c, const char *k, size_t n)
{
    switch (c) {
    case C_TOP:
        if (str_is(k, n, "traceEvents")) return T_EVENTS;
        if (str_is(k, n, "deviceProperties")) return T_DEVICES;
        if (str_is(k, n, "distributedInfo")) return T_DIST;
        if (str_is(k, n, "baseTimeNanoseconds")) return T_BASE;
        return F_NONE;
    case C_EVENT: return event_key(k, n);
    case C_ARGS: return args_key(k, n);
    case C_DEVICE:
        if (str_is(k, n, "id")) return D_ID;
        if (str_is(k, n, "name")) return D_NAME;
        if (str_is(k, n, "totalGlobalMem")) return D_MEM;
        return F_NONE;
    case C_DIST:
        if (str_is(k, n, "rank")) return R_RANK;
        if (str_is(k, n, "world_size")) return R_WORLD;
        return F_NONE;
    default: return F_NONE;
    }
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
    kin_parser *p = ctx;
    if (p->muted)
        return 1;
    kin_ctx c = cur(p);
    p->field = c == C_SKIP || n == 0 ? F_NONE : key_field(c, (const char *)k, n);
    return 1;
}

/* The container a value opens, from where it is. */
static kin_ctx child_ctx(const kin_parser *p, int is_map)
{
    switch (cur(p)) {
    case C_TOP:
        if (!is_map && p->field == T_EVENTS) return C_EVENTS;
        if (!is_map && p->field == T_DEVICES) return C_DEVICES;
        if (is_map && p->field == T_DIST) return C_DIST;
        return C_SKIP;
    case C_EVENTS: return is_map ? C_EVENT : C_SKIP;
    case C_EVENT: return is_map && p->field == F_ARGS ? C_ARGS : C_SKIP;
    case C_DEVICES: return is_map ? C_DEVICE : C_SKIP;
    default: return C_SKIP;
    }
}

static int push(kin_parser *p, int is_map)
{
    kin_ctx c;
    if (p->depth == 0) {
        if (!is_map || p->seen_top) {
            p->not_object = !p->seen_top;
            return 0;
        }
        p->seen_top = 1;
        c = C_TOP;
    } else {
        c = child_ctx(p, is_map);
        if (cur(p) == C_EVENTS && !is_map) {
            kin_sync(p);
            malformed(p);
        }
    }
    if (p->depth == KIN_DEPTH_MAX) {
        p->too_deep = 1;
        return 0;
    }
    p->ctx[++p->depth] = c;
    p->field = F_NONE;
    switch (c) {
    case C_EVENTS:
        p->saw_events = 1;
        if (p->fast && p->turn == TURN_DOCUMENT)
            return hand_over(p); /* the fast path reads the events */
        break;
    case C_EVENT: event_reset(&p->ev); break;
    case C_DEVICE: memset(&p->dev, 0, sizeof p->dev); break;
    case C_DIST: p->has_rank = p->has_world = 0; break;
    default: break;
    }
    return 1;
}

/* YAJL's turn as the fast path's fallback ends once the event it was
 * given is read: the fast path goes on after it. */
static int event_read(kin_parser *p)
{
    if (p->turn == TURN_EVENT && p->depth == 2 && cur(p) == C_EVENTS)
        return hand_over(p);
    return 1;
}

static int pop(kin_parser *p)
{
    kin_ctx c = cur(p);
    p->depth--;
    p->field = F_NONE;
    switch (c) {
    case C_EVENT: return event_closed(p) && event_read(p);
    case C_DEVICE: kin_sync(p); return device_done(p);
    case C_DIST: kin_sync(p); dist_done(p); return 1;
    case C_EVENTS: p->turn = TURN_DOCUMENT; return 1; /* the array ended on YAJL's turn */
    default: return event_read(p);
    }
}

static int cb_start_map(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || push(p, 1);
}

static int cb_start_array(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || push(p, 0);
}

static int cb_end(void *ctx)
{
    kin_parser *p = ctx;
    return p->muted || pop(p);
}

/* A scalar where a value is expected: at the top (not an object), or as
 * an element of traceEvents (not an event). */
static int scalar_place(kin_parser *p)
{
    if (p->depth == 0) {
        p->not_object = !p->seen_top;
        return 0;
    }
    if (cur(p) == C_EVENTS) {
        kin_sync(p);
        malformed(p);
        return event_read(p);
    }
    return 1;
}

static void set_num(kin_event *e, int which, const char *t, size_t n)
{
    if (num_int(t, n, &e->num[which]))
        e->has |= 1u << which;
}

static void set_id_num(kin_id *id, const char *t, size_t n)
{
    id->kind = num_int(t, n, &id->v) ? 1 : 0;
}

/* The kin_event.num slot of an integer arg, or -1. */
static int arg_slot(kin_field f)
{
    switch (f) {
    case A_DEVICE: return N_DEVICE;
    case A_IN_DEVICE: return N_IN_DEVICE;
    case A_STREAM: return N_STREAM;
    case A_CONTEXT: return N_CONTEXT;
    case A_CORRELATION: return N_CORRELATION;
    case A_BYTES: return N_BYTES;
    case A_DEV_TYPE: return N_DEV_TYPE;
    case A_DEV_ID: return N_DEV_ID;
    case A_TOTAL_ALLOC: return N_TOTAL_ALLOC;
    case A_TOTAL_RESERVED: return N_TOTAL_RESERVED;
    case A_MEM_BYTES: return N_MEM_BYTES;
    default: return -1;
    }
}

static int cb_number(void *ctx, const char *t, size_t n)
{
    kin_parser *p = ctx;
    kin_event *e = &p->ev;
    int64_t v;
    int slot;
    if (p->muted)
        return 1;
    switch (p->field) {
    case F_NONE: return scalar_place(p);
    case F_TS:
        if (num_us_to_ns(t, n, &e->ts)) e->has_ts = 1; else e->bad_time = 1;
        break;
    case F_DUR:
        if (num_us_to_ns(t, n, &e->dur)) e->has_dur = 1; else e->bad_time = 1;
        break;
    case F_PID: set_id_num(&e->pid, t, n); break;
    case F_TID: set_id_num(&e->tid, t, n); break;
    case T_BASE:
        if (num_int(t, n, &v)) {
            kin_sync(p);
            sink_set_epoch(p->s, v);
        }
        break;
    case D_ID: p->dev.has_id = num_int(t, n, &p->dev.id); break;
    case D_MEM: if (!num_int(t, n, &p->dev.mem)) p->dev.mem = 0; break;
    case R_RANK: p->has_rank = num_int(t, n, &p->rank); break;
    case R_WORLD: p->has_world = num_int(t, n, &p->world); break;
    default:
        if ((slot = arg_slot(p->field)) >= 0)
            set_num(e, slot, t, n);
        break;
    }
    p->field = F_NONE;
    return 1;
}

static void set_id_str(kin_parser *p, kin_id *id, const unsigned char *s, size_t n)
{
    id->kind = 2;
    id->len = copy_str(p, id->s, sizeof id->s, s, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    kin_parser *p = ctx;
    kin_event *e = &p->ev;
    if (p->muted)
        return 1;
    switch (p->field) {
    case F_NONE: return scalar_place(p);
    case F_NAME:
        e->name_len = copy_str(p, e->name, sizeof e->name, s, n);
        e->has_name = 1;
        break;
    case F_CAT:
        e->cat_len = copy_str(p, e->cat, sizeof e->cat, s, n);
        e->has_cat = 1;
        break;
    case F_PH: e->ph = n > 0 ? (char)s[0] : '\0'; break;
    case F_PID: set_id_str(p, &e->pid, s, n); break;
    case F_TID: set_id_str(p, &e->tid, s, n); break;
    case A_SYNC_KIND: copy_str(p, e->sync_kind, sizeof e->sync_kind, s, n); break;
    case A_META_NAME: copy_str(p, e->meta_name, sizeof e->meta_name, s, n); break;
    case A_LABELS: copy_str(p, e->labels, sizeof e->labels, s, n); break;
    case D_NAME: copy_str(p, p->dev.name, sizeof p->dev.name, s, n); break;
    case F_TS:
    case F_DUR: e->bad_time = 1; break;
    default: break;
    }
    p->field = F_NONE;
    return 1;
}

static int cb_null(void *ctx)
{
    kin_parser *p = ctx;
    if (p->muted)
        return 1;
    if (p->field == F_NONE)
        return scalar_place(p);
    p->field = F_NONE;
    return 1;
}

static int cb_boolean(void *ctx, int v)
{
    (void)v;
    return cb_null(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* ---- the event reader ---------------------------------------------------------------------- */

/* Most events are objects of plain keys whose used values are numbers or
 * strings, with args an object of the same. The event reader reads those
 * with the scans of jscan.h and calls the callbacks directly, the calls
 * jscan_value would make, in the same order: the same key_field, the same
 * skip of what kin_ignored ignores, the same limits. It declines what it
 * is not sure of (an escape in a used string, a used value that is a
 * literal or a container other than args), and jscan_value reads that
 * event again. */

/* A used number of the usual forms read in one pass, with the effect
 * cb_number would have: an integer of up to 18 digits, or for ts and dur
 * one of up to 16 digits with a fraction. 0 (nothing done) for any other
 * text, which jscan_scan_number and cb_number then read: an exponent,
 * more digits, a fraction elsewhere, the text's end. */
static int number_at_once(kin_parser *p, const unsigned char *b, size_t n, size_t *pos)
{
    kin_field f = p->field;
    int time = f == F_TS || f == F_DUR, slot = arg_slot(f);
    if (!time && f != F_PID && f != F_TID && slot < 0)
        return 0;
    size_t i = *pos;
    int neg = b[i] == '-';
    i += (size_t)neg;
    size_t first = i, most = i + (time ? 16 : 18);
    uint64_t v = 0;
    unsigned d;
    if (most > n)
        most = n;
    if (i < n && b[i] == '0')
        i++; /* JSON's 0 stands alone */
    else
        for (; i < most && (d = (unsigned)b[i] - '0') < 10; i++)
            v = v * 10 + d;
    if (i == first || i >= n)
        return 0;
    uint64_t frac = 0;
    if (b[i] == '.') { /* as num_us_to_ns: three places, the fourth rounds */
        if (!time)
            return 0;
        size_t from = ++i;
        unsigned place = 0;
        int round = 0;
        for (; i < n && (d = (unsigned)b[i] - '0') < 10; i++, place++) {
            if (place < 3)
                frac = frac * 10 + d;
            else if (place == 3)
                round = d >= 5;
        }
        if (i == from || i >= n)
            return 0;
        for (; place < 3; place++)
            frac *= 10;
        frac += (uint64_t)round;
    }
    if (!jscan_ends_value(b[i]))
        return 0;
    kin_event *e = &p->ev;
    if (time) {
        uint64_t ns = v * 1000 + frac; /* v < 10^16: no wrap */
        int ok = ns <= (uint64_t)INT64_MAX; /* num_us_to_ns's other test implies this one */
        int64_t *to = f == F_TS ? &e->ts : &e->dur;
        if (ok)
            *to = neg ? -(int64_t)ns : (int64_t)ns;
        else
            e->bad_time = 1;
        if (ok && f == F_TS)
            e->has_ts = 1;
        else if (ok)
            e->has_dur = 1;
    } else {
        int64_t sv = neg ? (int64_t)(0 - v) : (int64_t)v; /* v < 10^18 */
        if (slot >= 0) {
            e->num[slot] = sv;
            e->has |= 1u << slot;
        } else {
            kin_id *id = f == F_PID ? &e->pid : &e->tid;
            id->kind = 1;
            id->v = sv;
        }
    }
    p->field = F_NONE;
    *pos = i;
    return 1;
}

/* A used member's value: a number or a string for the callbacks. */
static jscan_result member_scalar(kin_parser *p, const unsigned char *b, size_t n, size_t *pos)
{
    size_t i = *pos, end;
    int escaped;
    jscan_result r;
    unsigned char c = b[i];
    if (c == '"') {
        if ((r = jscan_scan_string(b, n, i, &end, &escaped)) != JSCAN_DONE)
            return r;
        if (escaped)
            return JSCAN_DECLINE;
        if (!cb_string(p, b + i + 1, end - i - 1))
            return JSCAN_STOP;
        *pos = end + 1;
        return JSCAN_DONE;
    }
    if (c != '-' && (c < '0' || c > '9'))
        return JSCAN_DECLINE;
    if (number_at_once(p, b, n, pos))
        return JSCAN_DONE;
    if ((r = jscan_scan_number(b, n, i, &end)) != JSCAN_DONE)
        return r;
    if (!cb_number(p, (const char *)b + i, end - i))
        return JSCAN_STOP;
    *pos = end;
    return JSCAN_DONE;
}

/* A member's value that nothing uses: strings and numbers scanned here,
 * containers and literals by jscan_skip. */
static inline jscan_result member_skip(const unsigned char *b, size_t n, size_t *pos, int depth,
                                       int limit)
{
    size_t end;
    int escaped;
    jscan_result r;
    unsigned char c = b[*pos];
    if (c == '"') {
        if ((r = jscan_scan_string(b, n, *pos, &end, &escaped)) == JSCAN_DONE)
            *pos = end + 1;
        return r;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return jscan_scan_number(b, n, *pos, pos);
    return jscan_skip(b, n, pos, depth, limit);
}

/* After a member's value: past the comma and blanks (*closed 0) or past
 * the closing brace (*closed 1). */
static jscan_result member_end(const unsigned char *b, size_t n, size_t *pos, int *closed)
{
    size_t i = jscan_blanks(b, *pos, n);
    if (i >= n)
        return JSCAN_MORE;
    unsigned char c = b[i++];
    if (c != ',' && c != '}')
        return JSCAN_DECLINE;
    *closed = c == '}';
    if (!*closed && (i = jscan_blanks_after(b, i, n)) >= n)
        return JSCAN_MORE;
    *pos = i;
    return JSCAN_DONE;
}

/* The object whose '{' is at b[*pos]: an event (c C_EVENT, depth 0 as
 * jscan counts) or its args (C_ARGS, 1). */
static jscan_result event_object(kin_parser *p, const unsigned char *b, size_t n, size_t *pos,
                                 kin_ctx c, int depth, int limit)
{
    size_t i, end;
    int escaped, closed;
    jscan_result r;
    if (depth >= limit)
        return JSCAN_DECLINE;
    if (!cb_start_map(p))
        return JSCAN_STOP;
    if ((i = jscan_blanks(b, *pos + 1, n)) >= n)
        return JSCAN_MORE;
    closed = b[i] == '}';
    i += (size_t)closed;
    while (!closed) {
        if (b[i] != '"')
            return JSCAN_DECLINE;
        if ((r = jscan_scan_string(b, n, i, &end, &escaped)) != JSCAN_DONE)
            return r;
        if (escaped)
            return JSCAN_DECLINE;
        const char *k = (const char *)b + i + 1;
        size_t kn = end - i - 1;
        p->field = kn == 0 ? F_NONE : c == C_EVENT ? event_key(k, kn) : args_key(k, kn);
        if ((i = jscan_blanks(b, end + 1, n)) >= n)
            return JSCAN_MORE;
        if (b[i] != ':')
            return JSCAN_DECLINE;
        if ((i = jscan_blanks_after(b, i + 1, n)) >= n)
            return JSCAN_MORE;
        if (p->field == F_NONE)
            r = member_skip(b, n, &i, depth + 1, limit);
        else if (p->field == F_ARGS && b[i] == '{')
            r = event_object(p, b, n, &i, C_ARGS, depth + 1, limit);
        else
            r = member_scalar(p, b, n, &i);
        if (r != JSCAN_DONE || (r = member_end(b, n, &i, &closed)) != JSCAN_DONE)
            return r;
    }
    if (!cb_end(p))
        return JSCAN_STOP;
    *pos = i;
    return JSCAN_DONE;
}

static int kin_ignored(void *ctx);

/* The event at b[*pos] (its '{'), read as jscan_value with the callbacks
 * would read it. */
static jscan_result read_event(kin_parser *p, const unsigned char *b, size_t n, size_t *pos,
                               int limit)
{
    if (!p->muted && cur(p) == C_EVENTS) {
        int depth = p->depth;
        uint64_t cut = p->cut;
        size_t i = *pos;
        jscan_result r = event_object(p, b, n, &i, C_EVENT, 0, limit);
        if (r == JSCAN_DONE)
            *pos = i;
        if (r != JSCAN_DECLINE)
            return r;
        p->depth = depth; /* undone, as the callers undo a value not read */
        p->cut = cut;
        p->field = F_NONE;
    }
    return jscan_value(b, n, pos, &callbacks, kin_ignored, p, limit);
}

/* ---- the stream ----------------------------------------------------------------------------- */

/* YAJL's allocations. Its buffers grow with the token they hold (one
 * that spans chunks, a string being unescaped), doubling: a request past
 * KIN_TOKEN_MAX marks the token too long, and the parse stops after the
 * chunk, so that a hostile file cannot make YAJL hold it all. */
static void *kin_malloc(void *ctx, size_t n)
{
    kin_parser *p = ctx;
    p->token_too_long |= n > KIN_TOKEN_MAX;
    return malloc(n);
}

static void *kin_realloc(void *ctx, void *ptr, size_t n)
{
    kin_parser *p = ctx;
    p->token_too_long |= n > KIN_TOKEN_MAX;
    return realloc(ptr, n);
}

static void kin_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* The text is read into a window: the fast path reads whole events in it
 * and YAJL is fed what it holds. An event longer than the window goes to
 * YAJL, which streams. Gzip text is read KIN_CHUNK at a time, for the
 * reason above. */
#define KIN_WINDOW (1u << 20)
#define KIN_READ (64u << 10)

/* Where the fast path is in traceEvents: after '[', after an event, after
 * a ','. YAJL takes over in the same state through a made-up prefix. */
typedef enum { AT_FIRST, AT_SEPARATOR, AT_EVENT } kin_at;

static const char *const yajl_prefix[] = {
    [AT_FIRST] = "{\"traceEvents\":[",
    [AT_SEPARATOR] = "{\"traceEvents\":[{}",
    [AT_EVENT] = "{\"traceEvents\":[{},",
};

typedef struct kin_stream {
    gzFile gz;
    int direct;           /* plain text                                      */
    unsigned char *buf;   /* the window                                      */
    size_t pos, len;      /* buf[pos..len) is read and not parsed yet        */
    uint64_t base;        /* text offset of buf[0]                           */
    int ended;            /* nothing more to read: the end, or a failed read */
    int read_failed, zerr, io_errno;
    char zmsg[160];
    yajl_handle h;        /* while YAJL reads, else NULL                     */
    kin_at at;            /* while the fast path reads                       */
    struct kin_helper *helper; /* a second reader of events, or NULL      */
    int no_helper;        /* none could be had                              */
    size_t chunk_size;    /* what each gzread asks for                       */
    int stopping;         /* a token too long: stop at stop_at (yajl_read)   */
    uint64_t stop_at;
    int split;            /* the helper reads from split_at on               */
    size_t split_at;
    uint64_t split_next;  /* no guess again before this text offset         */
    int bom_checked;      /* the text's first bytes were looked at (refill)   */
} kin_stream;

/* How the stream ended; END_GO while it goes on. */
typedef enum { END_GO, END_OK, END_DAMAGED, END_STOPPED, END_EMPTY, END_IO } kin_end;

/* Damage: kept for the error message, and told to the sink once events
 * were read (before them the import fails anyway). */
static kin_end damage(kin_parser *p, const char *what)
{
    kin_sync(p);
    snprintf(p->damage, sizeof p->damage, "%s", what);
    if (p->saw_events)
        sink_note_damage(p->s, what);
    return END_DAMAGED;
}

/* Why YAJL stopped, as damage with the byte offset: it was fed chunk,
 * which starts at text offset from. */
static kin_end parse_error(kin_parser *p, yajl_handle h, uint64_t from, const unsigned char *chunk,
                           size_t len)
{
    char what[200];
    uint64_t at = from + yajl_get_bytes_consumed(h);
    if (p->too_deep) {
        snprintf(what, sizeof what, "JSON nested deeper than %d levels at byte %llu",
                 KIN_DEPTH_MAX, (unsigned long long)at);
        return damage(p, what);
    }
    unsigned char *msg = yajl_get_error(h, 0, chunk, len);
    const char *m = msg ? (const char *)msg : "";
    int l = (int)strcspn(m, "\n");
    snprintf(what, sizeof what, "JSON syntax error at byte %llu: %.*s", (unsigned long long)at,
             l > 120 ? 120 : l, m);
    if (msg)
        yajl_free_error(h, msg);
    return damage(p, what);
}

static kin_end gzip_damage(kin_parser *p, uint64_t fed, const char *why)
{
    char what[200];
    const char *sep = strstr(why, ">: "); /* zlib's "<fd:3>: " before the reason */
    if (strncmp(why, "<fd:", 4) == 0 && sep)
        why = sep + 3;
    snprintf(what, sizeof what, "gzip data damaged after byte %llu: %s", (unsigned long long)fed,
             why);
    return damage(p, what);
}

static void read_failed(kin_stream *st)
{
    int e = errno;
    const char *m = gzerror(st->gz, &st->zerr);
    snprintf(st->zmsg, sizeof st->zmsg, "%s", m ? m : "");
    st->io_errno = e ? e : EIO;
    st->read_failed = 1;
}

/* Moves what is not parsed to the window's start and reads after it,
 * whole chunks of chunk_size (the window has room for one past its size):
 * so every gzread starts at a multiple of it in the text, whoever reads,
 * and a damaged gzip loses the same text.
 * Reads are small (KIN_READ), so that the text is still in the cache
 * when it is parsed: with 1 MiB reads a 205 MB import took a quarter
 * longer. */
static void split_drop(kin_stream *st);

static void refill(kin_stream *st)
{
    split_drop(st); /* the text moves: what the helper reads is no more */
    if (st->pos > 0) {
        memmove(st->buf, st->buf + st->pos, st->len - st->pos);
        st->base += st->pos;
        st->len -= st->pos;
        st->pos = 0;
    }
    /* KIN_READ more, or as much as is held when that is more: an event
     * read again after each refill then costs at most twice its length */
    size_t more = st->len > KIN_READ ? st->len : KIN_READ;
    size_t until = st->len >= KIN_WINDOW                ? st->len /* full */
                   : more < KIN_WINDOW - st->len ? st->len + more
                                                   : KIN_WINDOW;
    while (!st->ended && st->len < until) {
        errno = 0;
        int n = gzread(st->gz, st->buf + st->len, (unsigned)st->chunk_size);
        if (n <= 0) {
            if (n < 0)
                read_failed(st);
            st->ended = 1;
            break;
        }
        st->len += (size_t)n;
    }
    /* A UTF-8 byte order mark before the document: editors and Windows
     * tools write one, JSON readers in practice skip it (RFC 8259 §8.1
     * allows ignoring it), and import_detect already took such a file
     * for JSON. Passed over as read; offsets in messages still count it. */
    if (!st->bom_checked && st->base == 0 && (st->len >= 3 || st->ended)) {
        st->bom_checked = 1;
        if (st->pos == 0 && st->len >= 3 && memcmp(st->buf, "\xEF\xBB\xBF", 3) == 0)
            st->pos = 3;
    }
}

/* Everything read is parsed and nothing more can be read: a failed read
 * is damage, a gzip stream cut short too, and so is a document that is
 * not complete. */
static kin_end read_end(kin_parser *p, kin_stream *st)
{
    uint64_t fed = st->base + st->len;
    int zerr = Z_OK;
    split_drop(st);
    if (st->read_failed) {
        if (st->zerr != Z_ERRNO)
            return gzip_damage(p, fed, st->zmsg);
        return fed == 0 ? END_IO : gzip_damage(p, fed, strerror(st->io_errno));
    }
    const char *zmsg = gzerror(st->gz, &zerr);
    if (zerr != Z_OK)
        return gzip_damage(p, fed, zmsg);
    if (fed == 0)
        return END_EMPTY;
    if (st->h) {
        yajl_status ys = yajl_complete_parse(st->h);
        if (ys == yajl_status_client_canceled && p->yield)
            p->yield = 0; /* an event (a number) ended with the text: inside traceEvents */
        else if (ys == yajl_status_client_canceled)
            return END_STOPPED;
        else if (ys == yajl_status_ok)
            return END_OK;
        else if (!p->seen_top)
            return END_EMPTY; /* whitespace only */
    }
    char what[120];
    snprintf(what, sizeof what, "the file ends inside the JSON document at byte %llu",
             (unsigned long long)fed);
    return damage(p, what);
}

/* YAJL takes over: from the start of the document, or where the fast path
 * is in traceEvents (then for one event, or for the rest of the document
 * once the array ends). */
static kin_end yajl_turn(kin_parser *p, kin_stream *st, kin_yajl_turn turn, int resume)
{
    yajl_alloc_funcs afs = { kin_malloc, kin_realloc, kin_free, p };
    if (!(st->h = yajl_alloc(&callbacks, &afs, p))) {
        kin_sync(p);
        sink_ok(p, PROF_ERR_NOMEM);
        return END_STOPPED;
    }
    yajl_config(st->h, yajl_dont_validate_strings, 1);
    yajl_config(st->h, yajl_allow_trailing_garbage, 1);
    p->turn = turn;
    if (resume) {
        const char *pre = yajl_prefix[st->at];
        p->muted = 1;
        yajl_status ys = yajl_parse(st->h, (const unsigned char *)pre, strlen(pre));
        p->muted = 0;
        if (ys != yajl_status_ok) {
            kin_sync(p);
            sink_ok(p, PROF_ERR_NOMEM);
            return END_STOPPED;
        }
    }
    return END_GO;
}

/* A token past KIN_TOKEN_MAX, found after the piece that ends at `at`. */
static kin_end token_damage(kin_parser *p, uint64_t at)
{
    char what[120];
    snprintf(what, sizeof what, "a JSON token longer than %u MiB before byte %llu",
             KIN_TOKEN_MAX >> 20, (unsigned long long)at);
    return damage(p, what);
}

/* YAJL reads what the window holds, up to the next multiple of chunk_size
 * in the text: YAJL is given the same pieces whoever read the text before
 * it, so a token too long for its buffer is found at the same place. */
static kin_end yajl_read(kin_parser *p, kin_stream *st)
{
    if (st->pos == st->len) {
        refill(st);
        if (st->len == 0)
            return read_end(p, st);
    }
    const unsigned char *chunk = st->buf + st->pos;
    uint64_t from = st->base + st->pos;
    uint64_t edge = (from / st->chunk_size + 1) * st->chunk_size;
    size_t n = st->len - st->pos;
    if (from + n > edge)
        n = (size_t)(edge - from);
    yajl_status ys = yajl_parse(st->h, chunk, n);
    int yielded = ys == yajl_status_client_canceled && p->yield;
    if (ys == yajl_status_client_canceled && !yielded && !p->too_deep)
        return END_STOPPED; /* by a callback, which said why */
    if (ys != yajl_status_ok && !yielded)
        return parse_error(p, st->h, from, chunk, n);
    if (p->token_too_long && !yielded)
        return token_damage(p, from + n);
    if (p->token_too_long && !st->stopping) {
        /* YAJL alone would read the rest of this piece, then stop: so does
         * the fast path, which takes over here */
        split_drop(st);
        st->stopping = 1;
        st->stop_at = from + n;
    }
    if (!yielded) {
        st->pos += n;
        return END_GO;
    }
    p->yield = 0;
    st->pos += yajl_get_bytes_consumed(st->h);
    st->at = p->turn == TURN_DOCUMENT ? AT_FIRST : AT_SEPARATOR;
    p->turn = TURN_FAST;
    yajl_free(st->h);
    st->h = NULL;
    return END_GO;
}

/* ---- a second reader of events ------------------------------------------------------------ */

/* With the event thread there are two threads for two cores, and reading
 * is the slower one. So the reader guesses an event start ahead of it in
 * the window (a '{' after "}," and before '"'), a helper thread reads the
 * events from there while the reader reads those before, and the helper's
 * events are taken only when the reader arrives exactly there between two
 * events of traceEvents: then the helper started in the state the reader
 * would have had, and read what it would have read. Otherwise (a guess
 * inside a string, an event the reader gave to YAJL past it) they are
 * dropped and the reader reads on. The helper only reads events it takes
 * whole and the fast path accepts; the reader does the rest. */
#define KIN_SPLIT_AHEAD (1024u << 10) /* text held when the helper starts    */
#define KIN_SPLIT_MINE (576u << 10)  /* the reader's part, before the guess */

typedef struct kin_helper {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int job, quit;          /* under mu                                    */
    const unsigned char *buf;
    size_t from, len;       /* the helper's text: buf[from..len)           */
    size_t end;             /* where it stopped: after an event or a comma */
    kin_at at;              /* the state there                             */
    unsigned char *pack;    /* its events, packed (KIN_QBLOCK)             */
    size_t packed;
    kin_parser *g;          /* its state while reading an event            */
} kin_helper;

/* An event read by the helper: packed, or 0 when its buffer is full (it
 * stops before that event). */
static int helper_pack(kin_parser *g)
{
    kin_helper *w = g->into;
    kin_packed h = pack_header(&g->ev);
    size_t need = packed_size(&h);
    if (w->packed + need > KIN_QBLOCK)
        return 0;
    pack(&g->ev, &h, w->pack + w->packed);
    w->packed += need;
    return 1;
}

static int blank_byte(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The helper's job: events from w->from, stopping at anything the reader
 * must see to (the end of the text, a declined or unfinished event, the
 * array's end, a separator that is not a comma). */
static void helper_read(kin_helper *w)
{
    kin_parser *g = w->g;
    size_t i = w->from;
    w->end = i;
    w->at = AT_EVENT;
    w->packed = 0;
    g->cut = 0;
    for (;;) {
        while (i < w->len && blank_byte(w->buf[i]))
            i++;
        if (i == w->len)
            return;
        if (w->at == AT_SEPARATOR) {
            if (w->buf[i] != ',')
                return;
            w->end = ++i;
            w->at = AT_EVENT;
            continue;
        }
        if (w->buf[i] != '{')
            return;
        uint64_t cut = g->cut;
        size_t packed = w->packed;
        if (read_event(g, w->buf, w->len, &i, KIN_DEPTH_MAX - 2) != JSCAN_DONE) {
            g->depth = 2;
            g->cut = cut;
            g->field = F_NONE;
            w->packed = packed;
            return;
        }
        w->end = i;
        w->at = AT_SEPARATOR;
    }
}

static void *helper_main(void *arg)
{
    kin_helper *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job && !w->quit)
            pthread_cond_wait(&w->go, &w->mu);
        if (w->quit)
            break;
        pthread_mutex_unlock(&w->mu);
        helper_read(w);
        pthread_mutex_lock(&w->mu);
        w->job = 0;
        pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void helper_wait(kin_helper *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->job)
        pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

static void helper_free(kin_helper *w)
{
    free(w->pack);
    free(w->g);
    free(w);
}

/* The helper, made the first time it is wanted; NULL when it cannot be. */
static kin_helper *helper_get(kin_parser *p, kin_stream *st)
{
    if (st->helper || st->no_helper)
        return st->helper;
    st->no_helper = 1;
    kin_helper *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->pack = malloc(KIN_QBLOCK);
    w->g = aligned_alloc(_Alignof(kin_parser), sizeof *w->g);
    if (!w->pack || !w->g) {
        helper_free(w);
        return NULL;
    }
    memset(w->g, 0, sizeof *w->g);
    w->g->s = p->s;
    w->g->python_stacks = p->python_stacks;
    w->g->fast = 1;
    w->g->turn = TURN_FAST;
    w->g->ctx[1] = C_TOP;
    w->g->ctx[2] = C_EVENTS;
    w->g->depth = 2;
    w->g->into = w;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        helper_free(w);
        return NULL;
    }
    int go = pthread_cond_init(&w->go, NULL) == 0;
    int done = go && pthread_cond_init(&w->done, NULL) == 0;
    if (done && pthread_create(&w->thread, NULL, helper_main, w) == 0) {
        st->no_helper = 0;
        return st->helper = w;
    }
    if (done)
        pthread_cond_destroy(&w->done);
    if (go)
        pthread_cond_destroy(&w->go);
    pthread_mutex_destroy(&w->mu);
    helper_free(w);
    return NULL;
}

static void helper_end(kin_stream *st)
{
    kin_helper *w = st->helper;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_signal(&w->go);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->go);
    pthread_mutex_destroy(&w->mu);
    helper_free(w);
    st->helper = NULL;
}

/* A likely event start in buf[from..len): a '{' after "}," and before '"'
 * (blanks between). 0 when there is none. */
static size_t event_start_guess(const unsigned char *b, size_t from, size_t len)
{
    for (size_t i = from; i < len; i++) {
        const unsigned char *brace = memchr(b + i, '{', len - i);
        if (!brace)
            return 0;
        i = (size_t)(brace - b);
        size_t k = i, j = i + 1;
        while (k > from && blank_byte(b[k - 1]))
            k--;
        if (k == from || b[--k] != ',')
            continue;
        while (k > from && blank_byte(b[k - 1]))
            k--;
        if (k == from || b[k - 1] != '}')
            continue;
        while (j < len && blank_byte(b[j]))
            j++;
        if (j < len && b[j] == '"')
            return i;
    }
    return 0;
}

/* At an event start past split_next, with the event thread running and no
 * split: hands the text past a guessed event start to the helper. It may
 * move the text and read more (st->pos and st->len change, the event still
 * starts at st->pos): the caller takes both anew. Afterwards either the
 * helper reads or split_next is further on. */
static void split_start(kin_parser *p, kin_stream *st)
{
    /* refill moves what is left to the window's start, so a window read
     * nearly to its end is filled again here rather than read alone */
    while (!st->ended && st->len - st->pos < KIN_SPLIT_AHEAD) {
        size_t held = st->len - st->pos;
        refill(st);
        if (st->len - st->pos <= held)
            break;
    }
    size_t g = 0;
    if (st->len - st->pos >= KIN_SPLIT_AHEAD)
        g = event_start_guess(st->buf, st->pos + KIN_SPLIT_MINE, st->len);
    kin_helper *w = g ? helper_get(p, st) : NULL;
    if (!w) {
        st->split_next = st->base + st->pos + KIN_SPLIT_MINE; /* not at every event */
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->buf = st->buf;
    w->from = g;
    w->len = st->len;
    w->job = 1;
    pthread_cond_signal(&w->go);
    pthread_mutex_unlock(&w->mu);
    st->split = 1;
    st->split_at = g;
}

/* The reader gives up on the helper's events. */
static void split_drop(kin_stream *st)
{
    if (!st->split)
        return;
    helper_wait(st->helper);
    st->split = 0;
}

/* The reader is where the helper started, between two events: the
 * helper's events follow the reader's, and the reader goes on where the
 * helper stopped. 0 once the sink has failed. */
static int split_take(kin_parser *p, kin_stream *st)
{
    kin_helper *w = st->helper;
    helper_wait(w);
    st->split = 0;
    if (!queue_adopt(p->q, &w->pack, w->packed))
        return 0;
    p->cut += w->g->cut;
    st->pos = w->end;
    st->at = w->at;
    return 1;
}

/* Whether the fast path skips the value about to be read: YAJL's
 * callbacks would do nothing with it. */
static int kin_ignored(void *ctx)
{
    const kin_parser *p = ctx;
    kin_ctx c = cur(p);
    return c == C_SKIP || (p->field == F_NONE && (c == C_EVENT || c == C_ARGS));
}

/* The fast path reads the events in the window, until it needs more text
 * or YAJL's help. */
static kin_end fast_read(kin_parser *p, kin_stream *st)
{
    for (;;) {
        size_t i = st->pos, len = st->len;
        if (st->stopping && st->stop_at - st->base < len)
            len = (size_t)(st->stop_at - st->base); /* see yajl_read */
        while (i < len && blank_byte(st->buf[i]))
            i++;
        st->pos = i;
        if (st->split && i >= st->split_at) {
            if (i != st->split_at || st->at != AT_EVENT)
                split_drop(st);
            else if (!split_take(p, st))
                return END_STOPPED; /* the sink failed */
            continue;
        }
        if (i == len && st->stopping)
            return token_damage(p, st->stop_at);
        if (i == st->len) {
            if (st->ended)
                return read_end(p, st);
            refill(st);
            continue;
        }
        unsigned char c = st->buf[i];
        if (c == '{' && st->at != AT_SEPARATOR && !st->split && p->q && !st->no_helper &&
            !st->stopping && st->base + st->pos >= st->split_next) {
            split_start(p, st);
            continue; /* it may have moved and read the text: i and len anew */
        }
        if (st->at == AT_SEPARATOR && c == ',') {
            st->pos = i + 1;
            st->at = AT_EVENT;
            continue;
        }
        if (st->at != AT_EVENT && c == ']')
            return yajl_turn(p, st, TURN_DOCUMENT, 1);
        if (st->at == AT_SEPARATOR || c != '{')
            return yajl_turn(p, st, TURN_EVENT, 1);
        int depth = p->depth;
        uint64_t cut = p->cut;
        jscan_result r = read_event(p, st->buf, len, &i, KIN_DEPTH_MAX - depth);
        if (r == JSCAN_DONE) {
            st->pos = i;
            st->at = AT_SEPARATOR;
            continue;
        }
        if (r == JSCAN_STOP)
            return END_STOPPED; /* the sink failed */
        /* undo the event's callbacks: YAJL or the next try starts it anew */
        p->depth = depth;
        p->cut = cut;
        p->field = F_NONE;
        if (r == JSCAN_MORE && st->stopping)
            return token_damage(p, st->stop_at);
        if (r == JSCAN_DECLINE || st->ended || (st->pos == 0 && st->len >= KIN_WINDOW))
            return yajl_turn(p, st, TURN_EVENT, 1);
        refill(st);
    }
}

static kin_end run(kin_parser *p, kin_stream *st)
{
    kin_end e = yajl_turn(p, st, TURN_DOCUMENT, 0);
    while (e == END_GO)
        e = st->h ? yajl_read(p, st) : fast_read(p, st);
    return e;
}

/* ---- the end -------------------------------------------------------------------------------- */

/* A count for the metadata's import.facts, when not 0. */
static int fact(kin_parser *p, const char *key, uint64_t n)
{
    char v[24];
    if (n == 0)
        return 1;
    snprintf(v, sizeof v, "%llu", (unsigned long long)n);
    return sink_ok(p, sink_set_fact(p->s, key, v));
}

/* What is told once the events are read: held-back synchronize calls, the
 * CPU process's name, strings cut. */
static int wrap_up(kin_parser *p)
{
    while (p->npending > 0)
        if (!pending_flush_one(p))
            return 0;
    const kin_proc *cpu = NULL;
    for (uint32_t i = 0; i < p->nprocs && !cpu; i++)
        if (p->has_cpu_pid ? p->procs[i].pid == p->cpu_pid : p->procs[i].labelled_cpu)
            cpu = &p->procs[i];
    if (cpu)
        sink_set_process(p->s, (uint64_t)cpu->pid, cpu->has_name ? cpu->name : NULL);
    else if (p->has_cpu_pid)
        sink_set_process(p->s, (uint64_t)p->cpu_pid, NULL);
    return fact(p, "strings_cut", p->cut) && fact(p, "syncs_from_calls", p->syncs_from_calls);
}

static prof_err set_err(prof_error *err, prof_err code, const char *fmt, const char *detail)
{
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, fmt, detail);
    }
    return code;
}

/* The sink stopped: a trace past the format's limits says which in the
 * sink's words; anything else failed writing the profile. */
static prof_err sink_stopped(kin_parser *p, prof_error *err)
{
    const prof_error *why = sink_error(p->s);
    if (p->fail == PROF_ERR_LIMIT && why && why->code == PROF_ERR_LIMIT)
        return set_err(err, p->fail, "%s", why->message);
    return set_err(err, p->fail, "cannot write the profile: %s", prof_strerror(p->fail));
}

static prof_err conclude(kin_parser *p, const kin_stream *st, kin_end end, prof_error *err)
{
    if (p->fail != PROF_OK)
        return sink_stopped(p, err);
    if (end == END_IO)
        return set_err(err, PROF_ERR_IO, "cannot read: %s", strerror(st->io_errno));
    if (end == END_EMPTY)
        return set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: no JSON document");
    if (p->not_object)
        return set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: the JSON document is not an object");
    if (!p->seen_top)
        return set_err(err, PROF_ERR_NOT_PROF, "not JSON: %s", p->damage);
    if (!p->saw_events)
        return end == END_DAMAGED
                   ? set_err(err, PROF_ERR_CORRUPT, "damaged before any trace event: %s", p->damage)
                   : set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: no traceEvents array");
    if (!wrap_up(p))
        return sink_stopped(p, err);
    return PROF_OK;
}

prof_err kineto_read(const char *path, import_sink *s, const import_options *o, prof_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return set_err(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
    kin_stream st = { .gz = gzdopen(fd, "rb") };
    kin_parser *p = aligned_alloc(_Alignof(kin_parser), sizeof *p); /* see kin_queue */
    st.buf = malloc(KIN_WINDOW + KIN_READ); /* see refill */
    if (p)
        memset(p, 0, sizeof *p);
    prof_err rc = PROF_ERR_NOMEM;
    if (!st.gz)
        close(fd);
    if (!st.gz || !p || !st.buf || gzbuffer(st.gz, KIN_GZ_BUFFER) != 0) {
        rc = set_err(err, PROF_ERR_NOMEM, "%s", "out of memory");
        goto out;
    }
    st.direct = gzdirect(st.gz);
    st.chunk_size = st.direct ? KIN_READ : KIN_CHUNK;
    p->s = s;
    p->python_stacks = o && o->python_stacks;
    p->fast = !(o && o->yajl_only);
    p->out = &p->ev;
    sink_set_epoch(s, 0); /* epoch-microsecond ts, unless baseTimeNanoseconds says */
    kin_queue_start(p);
    kin_end end = run(p, &st);
    split_drop(&st);
    helper_end(&st);
    kin_queue_end(p);
    rc = conclude(p, &st, end, err);
out:
    helper_end(&st);
    if (st.h)
        yajl_free(st.h);
    if (st.gz)
        gzclose_r(st.gz);
    free(st.buf);
    free(p);
    return rc;
}
