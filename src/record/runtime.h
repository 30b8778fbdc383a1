/* runtime.h - what the files of the recording runtime share: the raw
 * record, chunks and their pool, per-thread state, the one global runtime
 * object, and the internal calls between api, thread, writer, crash and
 * the rest. Nothing here is exported from libprof.so (hidden visibility,
 * and the version script keeps only prof_*).
 *
 * The moving parts: a recording thread stamps the clock and appends a
 * fixed-size rt_rec to the chunk it owns, publishing each record with a
 * release store of the chunk's committed count. Full chunks go onto a
 * lock-free stack; the writer thread pops them, encodes them into blocks,
 * writes them and returns the chunks to the free list. On a periodic or
 * requested flush the writer also encodes the committed prefix of every
 * live chunk, remembering in the chunk how far it got. The crash path does
 * the same with fixed buffers, holding the io lock the writer takes around
 * every piece of file work.
 */
#ifndef PROF_RECORD_RUNTIME_H
#define PROF_RECORD_RUNTIME_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "prof.h"
#include "record/clock.h"
#include "record/config.h"
#include "util/hash.h"

#pragma GCC visibility push(hidden)

#define RT_CHUNK_RECS 2048u   /* records per chunk: 64 KiB, one block each   */
#define RT_MIN_CHUNKS 4u      /* a tiny buffer_bytes still gets this many     */
#define RT_SPARE_CHUNKS 16u   /* beyond buffer_bytes, for step boundaries     */
#define RT_MAX_DEPTH 255u     /* open regions recorded per thread             */
#define RT_CACHE_BITS 8u      /* by-name lookup: 2^8 slots in each cache      */
#define RT_PTR_CACHE (1u << RT_CACHE_BITS) /* slots keyed by pointer          */
#define RT_STR_CACHE (1u << RT_CACHE_BITS) /* slots keyed by content hash     */
#define RT_THREAD_NAME_MAX 128u
#define RT_ATTR_MAX (1u << 16)   /* class changes kept per process; past it,
                                    prof_name_class does nothing           */

/* ---- raw records ------------------------------------------------------ */

enum rt_type { RT_REGION = 1, RT_STEP, RT_MEMORY, RT_COUNTER, RT_MARK };

/* One event as the hot path stores it: raw clock ticks, converted to ns by
 * whoever encodes it. 32 bytes, so a record never straddles a cache line
 * pair and two stores of 16 bytes fill it. */
typedef struct rt_rec {
    uint64_t t0;      /* region/step: start; others: time                   */
    uint64_t v;       /* region/step: end ticks; memory: bytes;
                         counter: the double's bits                          */
    uint64_t x;       /* step: number                                        */
    uint32_t name;    /* string id; step: flags                              */
    uint8_t type, kind, depth, pad;
} rt_rec;

/* ---- chunks ----------------------------------------------------------- */

struct rt_tinfo;

typedef struct rt_chunk {
    rt_rec *recs;                   /* RT_CHUNK_RECS records in the pool     */
    _Atomic uint32_t committed;     /* complete records (owner, release)     */
    uint32_t done;                  /* records already written (io lock)     */
    uint32_t seq;                   /* owner's chunk number, for ordering    */
    struct rt_tinfo *owner;         /* set by the owner before publishing    */
    struct rt_chunk *_Atomic next;  /* link in the full stack / writer list  */
    _Atomic uint32_t free_next;     /* free list link: index + 1, 0 = end    */
} rt_chunk;

/* Bounded by buffer_bytes, plus RT_SPARE_CHUNKS spare chunks that only
 * the records of step boundaries (the step, its memory samples) may take:
 * when the buffer is full, other events are dropped and counted, steps
 * never. A thread keeps its spare for the step boundaries that follow
 * until a plain chunk is free again, so one spare holds a thousand of
 * them. Records are in one mmap'ed area, so chunks never handed out cost
 * no memory; chunk headers are a separate array so that the free lists
 * do not touch record pages. */
typedef struct rt_pool {
    rt_chunk *chunks;
    uint32_t n;                     /* chunks in all                          */
    uint32_t nplain;                /* [0, nplain) plain, the rest spare      */
    rt_rec *mem;
    size_t mem_bytes;
    _Atomic uint64_t free_head;     /* (tag << 32) | (index + 1): ABA-safe    */
    _Atomic uint64_t spare_head;    /* the spare chunks' free list, the same  */
    _Atomic uint32_t fresh;         /* chunks [fresh, nplain) never handed out */
    rt_chunk *_Atomic full;         /* full chunks, newest first              */
} rt_pool;

/* ---- per-thread state ---------------------------------------------------- */

typedef struct rt_open {
    uint64_t t0;
    uint32_t name;  /* 0: not recorded (unsampled step or invalid id)        */
    uint32_t kind;
} rt_open;

typedef struct rt_ptr_slot {
    const char *key;   /* the caller's pointer last seen here               */
    const char *copy;  /* the interned copy, to verify the content          */
    uint32_t id;
} rt_ptr_slot;

typedef struct rt_str_slot {
    uint64_t hash;
    const char *copy;
    uint32_t len, id;
} rt_str_slot;

/* What the writer knows of a thread: small, and kept after the thread
 * exits only until the writer has written what it left (its last chunk,
 * its name, its dropped count), then freed. A thread's big recording
 * state (rt_thread) is freed as it exits, so a program that starts many
 * short-lived threads keeps no memory for the ones that are gone. */
typedef struct rt_tinfo {
    rt_chunk *_Atomic chunk;       /* current chunk, read by the writer       */
    _Atomic uint64_t dropped;      /* events lost, not yet in the file        */
    _Atomic int dead;              /* the thread exited (release, reg_mu)     */
    uint32_t session;              /* session this thread is registered in   */
    uint32_t cseq;                 /* number of the next chunk taken (owner;
                                      final once dead)                        */
    /* Identity, set at registration, before the state is published. */
    uint32_t index;                /* profile thread index                    */
    uint64_t os_tid;
    _Atomic uint32_t name_gen;     /* bumped on every (re)naming              */
    int listed;                    /* in rt.threads (reg_mu): who frees it    */
    /* Writer side (io lock). */
    uint32_t wnext;                /* seq of the next chunk to write          */
    uint32_t wname_gen;            /* name_gen last defined in the file       */
    struct rt_thread *hot;         /* the thread's state; NULL once it exited
                                      (reg_mu)                                */
    struct rt_tinfo *_Atomic next; /* registry link                           */
    char name[RT_THREAD_NAME_MAX]; /* under rt.reg_mu                         */
} rt_tinfo;

typedef struct rt_thread {
    /* Hot, touched only by the owning thread (and by prof_stop while no
     * thread records, and by the fork child handler). */
    rt_rec *recs;                  /* current chunk's records, NULL: none     */
    uint32_t n;                    /* next slot; RT_CHUNK_RECS when no chunk  */
    uint32_t depth;                /* open regions, also past RT_MAX_DEPTH    */
    int keep;                      /* in a step boundary: spares allowed      */
    int on_spare;                  /* the current chunk is a spare            */
    uint32_t spare_n;              /* its records while parked (n is then
                                      RT_CHUNK_RECS, so other events go to
                                      the refill); RT_CHUNK_RECS in use       */
    rt_chunk *cur;                 /* current chunk (info->chunk, the owner's
                                      own copy for the hot path)              */
    rt_tinfo *info;                /* what the writer sees of this thread     */
    rt_open stack[RT_MAX_DEPTH];
    rt_ptr_slot ptr_cache[RT_PTR_CACHE];
    rt_str_slot str_cache[RT_STR_CACHE];
} rt_thread;

/* The calling thread's state. Initial-exec TLS: one %fs-relative load in
 * libprof.so instead of a __tls_get_addr call. Kept to one pointer so that
 * a dlopen'ed libprof.so (ctypes) fits in glibc's static TLS surplus. */
extern __thread rt_thread *rt_self __attribute__((tls_model("initial-exec")));

/* The pointer-keyed slot of the by-name cache: the top bits of a
 * multiplicative hash, as neighbouring string literals differ only in
 * their low bits. */
static inline rt_ptr_slot *rt_ptr_slot_of(rt_thread *t, const char *name)
{
    return &t->ptr_cache[hash_top((uintptr_t)name, RT_CACHE_BITS)];
}

/* ---- the runtime --------------------------------------------------------- */

#define RT_ON 1u       /* rt_state: recording                                */
#define RT_SAMPLED 2u  /* rt_state: the current step keeps its events        */

/* The hot flag: every public call tests it first. */
extern _Atomic unsigned rt_state;

typedef struct rt_runtime {
    pthread_mutex_t ctl_mu;        /* start, stop, fork                      */
    pthread_mutex_t reg_mu;        /* registry additions, thread names       */
    int running;                   /* between a good start and its stop     */
    uint32_t session;              /* bumped by every start                 */
    rt_config cfg;
    rt_clock clock;
    rt_pool pool;
    pf_writer *w;
    int fd;                        /* the output's descriptor (crash path)   */
    /* registry: every thread that recorded in this session, less the
     * exited ones the writer has finished with (unlinked holding both
     * reg_mu and the io lock) */
    rt_tinfo *_Atomic threads;
    uint32_t nthreads;             /* indices handed out (reg_mu)            */
    _Atomic uint32_t dead;         /* exited threads still on the registry   */
    /* steps */
    _Atomic uint64_t step_no;
    _Atomic uint64_t step_t0;
    uint32_t rss_id;               /* "host.rss"                             */
    int statm_fd;
    /* writer thread */
    pthread_t writer;
    _Atomic uint64_t writer_tid;
    sem_t wake;
    _Atomic int kicked;            /* a wake-up is already pending           */
    _Atomic int stopping;
    pthread_mutex_t flush_mu;
    pthread_cond_t flush_cv;
    uint64_t flush_req, flush_done;/* flush_mu                               */
    int writer_running;            /* flush_mu                               */
    /* writer side, io lock */
    _Atomic int io;                /* 0 free, 1 writer, 2 crash path         */
    rt_chunk *wlist;               /* full chunks popped, not yet written    */
    uint32_t wstrings;             /* string ids defined in the file         */
    uint32_t wattrs;               /* attribute log entries written          */
    pf_block sampler;              /* background memory samples              */
    uint32_t sampler_index;        /* its thread index, UINT32_MAX: none yet */
    _Atomic int failed;            /* a write failed: recording stopped      */
    int err;                       /* that failure's errno                   */
    /* crash path */
    _Atomic int crash_armed;       /* running, the crash path may flush      */
    _Atomic int crashed;           /* the crash path ran                     */
    uint8_t *crash_mem;            /* fixed blocks, allocated at start       */
    size_t crash_events_cap, crash_defs_cap;
    /* state abandoned by a fork child, kept reachable */
    void *orphans[5];
} rt_runtime;

extern rt_runtime rt;

/* ---- thread.c ------------------------------------------------------------ */

rt_thread *rt_thread_attach(void);          /* NULL when out of memory       */
/* Slow path of an append: hands the full chunk over, takes a free one
 * (a spare one too while t->keep). Returns 0 with t->recs/t->n ready, or
 * -1 (the event is dropped and counted). */
int rt_thread_refill(rt_thread *t);
/* The end of a step boundary's records: a spare chunk is parked. */
void rt_thread_keep_end(rt_thread *t);
/* Counts one event of t as dropped. */
void rt_thread_drop(rt_thread *t);
/* prof_stop: ends the last step as incomplete, from the calling thread. */
void rt_step_close_last(void);
/* Registers t in the current session if it is not yet: 0, or -1. */
int rt_thread_ensure_registered(rt_thread *t);
/* Writer, io lock held: unlinks and frees the exited threads for which
 * done says nothing is left to write. */
void rt_threads_reap(int (*done)(rt_tinfo *t));
void rt_thread_set_name(rt_thread *t, const char *name);
/* prof_stop: forget every thread (frees the exited ones). */
void rt_threads_reset(void);
/* After fork in the child: drop every state without touching it. */
void rt_threads_orphan(void);

int rt_pool_init(rt_pool *p, size_t buffer_bytes);
void rt_pool_free(rt_pool *p);
void rt_pool_recycle(rt_pool *p, rt_chunk *c);
void rt_writer_kick(void);

/* ---- intern.c ------------------------------------------------------------ */

/* The id of the len bytes at s, interned on first use (hash: their
 * hash_fnv1a); 0 when out of memory or out of ids. Takes a lock. */
uint32_t rt_intern(const char *s, size_t len, uint64_t hash);
/* The interned copy of id (NUL-terminated) and its length; lock-free. */
const char *rt_intern_get(uint32_t id, uint32_t *len);

/* Ids 1..rt_nstrings exist: published with a release store after the
 * entry is complete. Inline, as prof_region_begin_id checks every id
 * against it. */
extern _Atomic uint32_t rt_nstrings;
static inline uint32_t rt_intern_count(void)
{
    return atomic_load_explicit(&rt_nstrings, memory_order_acquire);
}
uint32_t rt_name_miss(rt_thread *t, const char *name);
void rt_intern_lock(void);                  /* fork: keep the table whole   */

/* The log of prof_name_class changes, in call order: entries [0, count)
 * exist (acquire) and never change; lock-free. */
typedef struct rt_attr {
    uint32_t name, key, value;              /* string ids; key PF_ATTR_*     */
} rt_attr;
uint32_t rt_attr_count(void);
const rt_attr *rt_attr_get(uint32_t i);     /* NULL past the count           */
void rt_intern_unlock(void);

/* ---- writer.c ------------------------------------------------------------- */

int rt_writer_start(void);                  /* 0 or -errno                   */
int rt_writer_stop(void);                   /* joins; 0 or -errno of failure */
void rt_writer_flush(void);
void rt_writer_after_fork(void);
/* Encodes records [from, to) of c into b (thread index set by caller). */
prof_err rt_encode(pf_block *b, const rt_rec *recs, uint32_t from, uint32_t to);
int rt_io_enter(int who);                   /* 1 when the lock is ours       */
void rt_io_leave(void);

/* ---- meta.c --------------------------------------------------------------- */

char *rt_metadata(const rt_config *c, const rt_clock *clk); /* malloc'ed JSON */

/* ---- sampler.c ------------------------------------------------------------ */

int rt_rss_open(void);
uint64_t rt_rss_read(int fd);               /* bytes, 0 when unreadable       */

/* ---- fd.c: descriptors never 0, 1 or 2 ------------------------------------ */

/* fd moved above the standard descriptors (close-on-exec), or -1 with
 * errno; fd itself when it is already above them or negative. */
int rt_fd_above_std(int fd);
int rt_open_read(const char *path);         /* a descriptor, or -1 (errno)    */
/* The output, empty, writable, locked against other recorders: a
 * descriptor, or -errno; -ENOTSUP when the path is not a regular file
 * (FIFO, socket, device); -ELOOP when it is a link another user planted
 * in a shared sticky directory. Never blocks. When another recorder
 * holds path (or claimed says that path belongs to another process), the
 * output is rt_output_alt_name's instead, returned malloc'ed in *alt
 * (else NULL); -EBUSY when every such name is held too. */
int rt_output_open(const char *path, int claimed, char **alt);
/* path with ".PID" (k > 0: ".PID-k") before its extension, as Python's
 * os.path.splitext splits it: run.prof -> run.4242.prof, out -> out.4242.
 * malloc'ed; NULL when out of memory. */
char *rt_output_alt_name(const char *path, long pid, unsigned k);

/* ---- report.c: libprof's one voice ---------------------------------------- */

/* Says a message (printf-style, one line, no "prof: ") at level: to the
 * program's handler, else by default on stderr (errors; warnings too
 * once loud). Never from the crash path: it is not async-signal-safe. */
void rt_report(prof_msg_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Where libprof starts itself (preload, CUDA injection) no caller sees
 * what prof_start returns: the default then says warnings too. */
void rt_report_loud(void);
void rt_report_lock(void);                  /* fork: held across it        */
void rt_report_unlock(void);

/* ---- crash.c --------------------------------------------------------------- */

int rt_crash_alloc(void);                   /* 0 or -ENOMEM                   */
void rt_crash_free(void);
void rt_signals_install(void);
void rt_signals_restore(void);
void rt_fork_handlers_once(void);

/* ---- gpu.c: where CUPTI capture plugs in ------------------------------------ */

struct cJSON;
int rt_gpu_start(const rt_config *c);       /* 0, or -ENOTSUP when unavailable */
void rt_gpu_stop(void);                     /* flushes CUPTI before the footer */
void rt_gpu_metadata(const rt_config *c, struct cJSON *meta);

/* At a step boundary (now_ns on the profile clock; whether the step that
 * begins keeps its events): device memory samples, at most max. */
typedef struct rt_gpu_sample {
    uint32_t series;                        /* "gpu.N.used"                  */
    uint64_t bytes;
} rt_gpu_sample;
#define RT_GPU_MAX_SAMPLES 16
int rt_gpu_step(uint64_t now_ns, int next_sampled, rt_gpu_sample *out, int max);
/* Writer thread, io lock held: writes the GPU activity translated so far. */
void rt_gpu_write(void);
/* writer.c, for rt_gpu_write: writes b after the strings it may use.
 * 0, or -1 when writing failed (reported, recording stopped). */
int rt_writer_put_block(pf_block *b);

#pragma GCC visibility pop

#endif /* PROF_RECORD_RUNTIME_H */
