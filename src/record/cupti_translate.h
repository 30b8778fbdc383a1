/* cupti_translate.h - CUPTI activity records turned into profile events,
 * without CUPTI: cupti.c copies the fields prof uses out of CUPTI's
 * structures into an rt_cu_rec, and everything after that (the clock
 * conversion, the mapping of copy and sync kinds, finding the CPU thread of
 * a synchronisation, pairing NVTX range starts and ends into regions,
 * encoding) is here, compiled in every build and tested on records built
 * in memory (tests/unit/record_cupti.c). */
#ifndef PROF_RECORD_CUPTI_TRANSLATE_H
#define PROF_RECORD_CUPTI_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "prof_reader.h"

#pragma GCC visibility push(hidden)

/* The activity kinds prof translates. */
typedef enum {
    RT_CU_KERNEL = 1,
    RT_CU_MEMCPY,
    RT_CU_MEMSET,
    RT_CU_SYNC,     /* CUPTI synchronization record                      */
    RT_CU_API,      /* CUDA runtime API call                             */
    RT_CU_MARKER,   /* NVTX: a range start or end, or an instant mark    */
    RT_CU_CONTEXT   /* a context and its device                          */
} rt_cu_kind;

/* CUPTI's own numbers (frozen in its ABI) for the fields copied verbatim. */
enum {
    RT_CU_COPY_HTOD = 1, RT_CU_COPY_DTOH = 2, RT_CU_COPY_HTOA = 3, RT_CU_COPY_ATOH = 4,
    RT_CU_COPY_ATOA = 5, RT_CU_COPY_ATOD = 6, RT_CU_COPY_DTOA = 7, RT_CU_COPY_DTOD = 8,
    RT_CU_COPY_HTOH = 9, RT_CU_COPY_PTOP = 10
};
enum {
    RT_CU_SYNC_EVENT = 1, RT_CU_SYNC_STREAM_WAIT = 2, RT_CU_SYNC_STREAM = 3,
    RT_CU_SYNC_CONTEXT = 4
};
enum { RT_CU_MARKER_INSTANT = 1, RT_CU_MARKER_START = 2, RT_CU_MARKER_END = 4 };

/* One CUPTI activity record: the fields prof uses. Times are CUPTI
 * timestamps (ns on CUPTI's clock). */
typedef struct rt_cu_rec {
    rt_cu_kind kind;
    const char *name;      /* kernel; API function (a "_vNNNN" suffix is cut);
                              marker start or instant                          */
    uint64_t start, end;   /* marker: its timestamp in start                   */
    uint32_t device, context, stream, correlation;
    uint64_t bytes;        /* memcpy, memset                                   */
    uint32_t copy_kind;    /* memcpy: CUPTI's memcpy kind                      */
    uint32_t sync_type;    /* sync: CUPTI's synchronization type               */
    uint32_t flags;        /* marker: RT_CU_MARKER_*                           */
    uint32_t id;           /* marker: range id                                 */
    uint64_t tid;          /* API, marker: OS thread id                        */
} rt_cu_rec;

/* A profile event made from a record: the reader's event (type, times in
 * profile ns, name id, fields), and where it goes: the GPU timeline, or the
 * CPU thread with OS id tid (0: unknown). */
typedef struct rt_cu_event {
    prof_event ev;
    int gpu;
    uint64_t tid;
} rt_cu_event;

/* Recent API calls remembered by correlation id, for the thread of their
 * syncs. One activity buffer of 1 MiB holds some 20,000 API records, and
 * a sync's record can come a buffer later: 4096 lost a third of a real
 * PyTorch run's syncs to the unknown thread. */
#define RT_CU_CORR 65536u
#define RT_CU_OPEN 1024u     /* NVTX ranges open at once                     */
#define RT_CU_CONTEXTS 64u   /* contexts mapped to their devices             */
#define RT_CU_MAX_EVENTS 2   /* events one record can make                   */
#define RT_CU_KNAMES 1024u   /* kernel names remembered with their ids       */
#define RT_CU_PARKED 256u    /* syncs waiting for their API call's record    */

typedef struct rt_cu_corr {
    uint32_t correlation;    /* 0: empty                                     */
    uint64_t tid;            /* the API call's thread                        */
} rt_cu_corr;

/* A kernel name as CUPTI handed it (its pointer, and the hash of its text:
 * a module unloaded can leave its names' memory to another's) and the id
 * of the name kept for it. */
typedef struct rt_cu_kname {
    const char *given;       /* NULL: empty                                  */
    uint64_t hash;
    uint32_t id;
} rt_cu_kname;

typedef struct rt_cu_open {
    uint32_t id;             /* 0: empty                                     */
    uint32_t name;
    uint32_t depth;
    uint64_t tid, start;
} rt_cu_open;

/* Translation state: the clock conversion, what earlier records told, and
 * the NVTX ranges still open. Zeroed, it converts with offset 0. */
typedef struct rt_cu_state {
    int64_t offset;          /* CUPTI timestamp − profile ns, at calibration */
    rt_cu_corr corr[RT_CU_CORR];
    rt_cu_open open[RT_CU_OPEN];
    uint32_t ctx_id[RT_CU_CONTEXTS], ctx_device[RT_CU_CONTEXTS];
    uint32_t nctx;
    uint64_t lost;           /* records that could not be translated         */
    /* Gives a name its id. NULL: the recorder's string table (rt_intern);
     * an importer (src/import/sink.c) sets its own. */
    uint32_t (*intern)(void *ctx, const char *s, size_t n);
    void *intern_ctx;
    /* __cxa_demangle, when the process has it: CUPTI names C++ kernels by
     * their mangled symbol ("_Z12scale_kernelPffi"), torch.profiler, Nsight
     * and HTA by the demangled one ("scale_kernel(float*, float, int)"),
     * which prof keeps too. NULL: names are kept as given. Set, kernel
     * names are also remembered by pointer and hash (knames): CUPTI keeps
     * one string per kernel, so each is demangled once. */
    char *(*demangle)(const char *mangled, char *buf, size_t *len, int *status);
    rt_cu_kname knames[RT_CU_KNAMES];
    /* Set: a sync whose API call (its thread) is not known yet waits here
     * for it (rt_cu_unpark), up to RT_CU_PARKED at once. CUPTI hands sync
     * records in the context's buffers and API records in others, in no
     * set order: a real PyTorch run had half its syncs come first. Unset,
     * such a sync goes to the unknown thread at once. */
    int park;
    uint32_t nparked;
    uint32_t park_lo, park_hi; /* the range of their correlation ids   */
    rt_cu_event parked[RT_CU_PARKED];
} rt_cu_state;

/* Sets the offset from a CUPTI timestamp read before and one read after
 * the profile clock read prof_ns: the midpoint is taken as simultaneous. */
void rt_cu_calibrate(rt_cu_state *s, uint64_t cupti_before, uint64_t prof_ns,
                     uint64_t cupti_after);

/* A CUPTI timestamp on the profile clock; times before the origin give 0. */
uint64_t rt_cu_time(const rt_cu_state *s, uint64_t cupti_ts);

/* The CUDA major version of a CUPTI API version (CUPTI_API_VERSION,
 * cuptiGetVersion): numbered 1, 2, ... up to CUDA 12, major * 10000 +
 * minor * 100 + update from CUDA 13 on. 0 for CUPTI older than CUDA 10. */
unsigned rt_cu_cuda_major(uint32_t cupti_api_version);

uint32_t rt_cu_copy_kind(uint32_t cupti_copy_kind);   /* PROF_COPY_*  */
uint32_t rt_cu_sync_kind(uint32_t cupti_sync_type);   /* PROF_SYNC_*  */
/* Whether a runtime API function blocks the CPU until its copy is done. */
int rt_cu_api_blocks_copy(const char *api_name);

/* First pass over a buffer: remembers what later records of the same or a
 * later buffer need (the thread of each API call, context devices), and
 * gives a parked sync the thread of its API call. */
void rt_cu_note(rt_cu_state *s, const rt_cu_rec *r);

/* Second pass: the events of r (0, 1 or 2) in out. Interns names. A
 * marker range start makes nothing until its end. */
int rt_cu_translate(rt_cu_state *s, const rt_cu_rec *r, rt_cu_event out[RT_CU_MAX_EVENTS]);

/* Moves to out (up to max) the parked syncs whose API call is now known,
 * with its thread; all: every one, the rest on the unknown thread (tid 0),
 * for the end of a session. Returns how many. */
uint32_t rt_cu_unpark(rt_cu_state *s, int all, rt_cu_event *out, uint32_t max);

/* Appends e to b. */
prof_err rt_cu_put(pf_block *b, const prof_event *e);

#pragma GCC visibility pop

#endif /* PROF_RECORD_CUPTI_TRANSLATE_H */
