/* sink_int.h - the sink's state, shared by its two files and private to
 * them: sink.c (names, threads, nesting, the activity, opening) and
 * sink_meta.c (the facts, notes and counts the metadata says, and
 * closing). */
#ifndef PROF_IMPORT_SINK_INT_H
#define PROF_IMPORT_SINK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "import/sink.h"
#include "util/hmap.h"

#define SINK_WINDOW 4096             /* pending items a thread holds        */
#define SINK_BLOCK_BYTES (256u << 10) /* a block is written past this size  */
#define SINK_ZSTD_LEVEL 1              /* prof-format.md, Compression         */
#define SINK_META_RESERVED (16u << 10) /* room kept for the final metadata   */
#define SINK_STACK_MAX 256            /* nesting kept; deeper is flattened   */
#define SINK_PENDING_SYNCS 32768      /* syncs waiting for their API call    */
#define SINK_CATEGORIES 64            /* distinct categories noted by name   */
#define SINK_DEVICES 1024             /* devices described in the metadata   */
#define SINK_DEVICES_BRIEF 64         /* when the metadata would not fit      */
#define SINK_ORIGIN_LEAD_NS 1000000000 /* time 0 this long before the first */
#define SINK_DEFS_BYTES (256u << 10) /* pending definitions written past this */

typedef struct item {
    int64_t start, end;  /* trace ns                                       */
    prof_event ev;       /* what is written; times set when written        */
    uint8_t region;
} item;

/* A pending item in the heap: what orders it, and where its event is
 * (moving the keys alone keeps the heap's work small). */
typedef struct heap_key {
    int64_t start, end;
    uint32_t slot;
    uint32_t seq;        /* arrival order, which breaks ties (modulo 2^32: a
                            window holds far fewer)                        */
    uint32_t region;
} heap_key;

typedef struct open_region {
    int64_t start, end;
    prof_event ev;
} open_region;

typedef struct sink_thread {
    uint64_t key, os_tid;
    uint32_t index;
    heap_key *heap;      /* pending items by start; their events stay put */
    size_t nheap, cap_heap;
    heap_key *run;       /* pending items in order, a ring: run_head first */
    size_t run_head, nrun, cap_run;
    uint32_t seq;        /* the next item's                                */
    prof_event *pending; /* the pending items' events, by slot             */
    uint32_t *free_slots;
    size_t nslots, cap_pending, nfree, cap_free;
    open_region *stack;  /* grown as deep as the thread nests: a thread costs
                            what it holds, not SINK_STACK_MAX levels (16 KiB) */
    size_t cap_stack;
    uint32_t depth;
    int64_t last_start;  /* of the last item out of the window             */
    pf_block block;
} sink_thread;

typedef struct counted {
    char *name;
    uint64_t n;
} counted;

typedef struct pending_sync {
    uint64_t correlation;
    prof_event ev;
    int64_t start, end;
} pending_sync;

typedef struct sink_name { /* a name as defined, id = position + 1 */
    char *s;
    size_t len;
} sink_name;

typedef struct device {
    uint32_t index;
    char *name;
    uint64_t memory_bytes;
} device;

struct import_sink {
    pf_writer *w;
    char *source, *input, *host, *process_name;
    uint64_t pid;
    int rank, world;
    int64_t epoch;        /* wall clock of trace time 0                    */
    int64_t origin;       /* trace time of profile time 0                  */
    int has_origin;
    sink_name *names;       /* by id - 1                                    */
    size_t nnames, cap_names;
    uint64_t text;          /* definition text written, against PF_TEXT_MAX */
    size_t defs_pending;    /* bytes of definitions not yet written         */
    pf_block defs_only;     /* always empty: writing it writes definitions  */
    hmap name_index;        /* names by FNV-1a: id                          */
    sink_thread **threads;
    size_t nthreads, cap_threads;
    hmap thread_index;      /* threads by key: position                     */
    pf_block gpu, memory;   /* memory goes to the first thread's block      */
    rt_cu_state cu;
    pending_sync *syncs;    /* at most SINK_PENDING_SYNCS, in no order      */
    size_t nsyncs, cap_syncs;
    hmap sync_index;        /* syncs by correlation: position               */
    device *devices;
    size_t ndevices, cap_devices;
    counted unknown[SINK_CATEGORIES], skipped[SINK_CATEGORIES];
    cJSON *facts;
    char *damage;
    import_counts counts;
    prof_err failed;        /* sticky: the first error                      */
    prof_error error;
};

/* ---- sink.c ---- */
prof_err sink_fail_nomem(import_sink *s);
prof_err sink_thread_drain(import_sink *s, sink_thread *t);
sink_thread *sink_thread_of(import_sink *s, uint64_t key);
prof_err sink_block_out(import_sink *s, pf_block *b, int force);
prof_err sink_fail(import_sink *s, prof_err code, const char *what);

#endif
