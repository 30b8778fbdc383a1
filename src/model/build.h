/* build.h - the state of a profile_model while it is being built, shared by
 * the files that build it (profile.c: the event loop, operations, threads;
 * calltree.c: self time, the call tree and sync sites; repeat.c: its
 * repeat path; gpu.c: per-device activity; series.c: steps, memory series,
 * counters). Internal to src/model/. */
#ifndef PROF_MODEL_BUILD_H
#define PROF_MODEL_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "model/profile.h"
#include "util/hmap.h"
#include "util/vec.h"

#define MB_MAX_DEPTH 1024u        /* deeper regions are treated as at this depth  */
#define MB_RECENT 64u             /* recent regions kept per thread for late syncs */
#define MB_SYNC_PENDING_MAX 1024u /* unresolved sync records kept per thread       */
#define MB_SYNC_REGIONS 4096u     /* SYNC regions kept per thread for late records */
#define MB_GPU_BATCH 4096u        /* GPU intervals sorted together into a run      */
#define MB_IDLE_GAP_NS 1000000ull /* a GPU gap this long counts as idle             */
#define MB_GPU_SPANS 8192u        /* stretches of activity kept per GPU for steps  */
#define MB_WINDOW_HELD (1u << 18) /* GPU records of a device held, launch calls kept
                                      before any step (gpu_window.c)             */
#define MB_THREAD_DIRECT PF_THREADS /* the format's thread indexes: a table; others searched */

/* A call-tree node whose place is not known yet: calls of one operation
 * merged by path below a parent region that has not arrived (records come
 * when regions end, children first). */
typedef struct mb_fnode {
    uint32_t op;
    uint32_t first_child, next_sibling; /* pool indexes or MODEL_NONE */
    uint64_t gen;                       /* its children's list in the floating index, 0 none */
    uint64_t calls, incl_ns, self_ns;
    uint64_t gpu_ns, kernels;           /* GPU work launched directly in the
                                           merged calls (launch.c)     */
    uint64_t min_start, max_end;        /* span of the merged calls    */
} mb_fnode;

/* The floating index: which node of a long list of floating nodes (a
 * node's children, a level) has an operation; short lists are searched.
 * A list is named by a generation number, given when a search finds it
 * long and never reused, so the entries of lists that are gone never
 * match again and are simply dropped when the index is rebuilt from the
 * live lists. */
typedef struct mb_fslot {
    uint64_t gen;                       /* 0: empty                    */
    uint32_t op, node;
} mb_fslot;

typedef struct mb_recent {                /* a region that already arrived */
    uint64_t start, end;
    uint32_t op, kind, depth;
} mb_recent;

typedef struct mb_sync {                  /* sync records waiting for their region */
    uint64_t start, end, count, blocked_ns;
    uint64_t waits[MODEL_WAIT_BANDS];     /* count by model_wait_band                  */
} mb_sync;

typedef struct mb_level {  /* the floating nodes waiting at one depth             */
    uint32_t head;         /* list of mb_fnode waiting for a parent at depth-1, or
                              MODEL_NONE                                           */
    uint64_t ops;          /* bit op % 64 set for each op in the list               */
    uint64_t gen;          /* the list in the floating index, 0 none                */
} mb_level;

/* The repeat path (repeat.c): a region of the outermost region being
 * read, kept to be committed or replayed. */
typedef struct mb_rep_region {
    uint64_t start, dur, self;
    uint64_t gpu_ns, kernels;  /* GPU work it launched directly (launch.c) */
    uint32_t op, depth, kind;
} mb_rep_region;

/* A region of the last outermost region learned: its place in the tree,
 * and what the repeats of it committed since that place last took them
 * in (repeat.c, mb_rep_flush_sums). */
typedef struct mb_rep_path {
    uint32_t op, depth, kind, node;
    uint64_t dur, self;    /* sums over the repeats (the kept one's included)   */
    uint64_t gpu_ns, kernels; /* the same of the GPU work launched directly  */
} mb_rep_path;

/* The places learned of one outermost region's regions, in arrival order. */
typedef struct mb_rep_learned {
    mb_rep_path *v;
    size_t n, cap;
    uint64_t commits;      /* repeats committed into the sums of v              */
} mb_rep_learned;

#define MB_REP_DEPTH 32u       /* regions this deep or deeper take the general path   */
#define MB_REP_MAX 8192u       /* regions of one outermost region the path keeps      */
#define MB_REP_KINDS 32u       /* outermost regions learned, told apart by their first
                                  region (a step's phases: data, forward, backward...;
                                  a serving or RL loop's dozen short ones)            */

typedef struct mb_rep {
    mb_rep_region *cur;    /* the regions of the outermost region being read        */
    size_t ncur, cap_cur;
    mb_rep_learned *learned; /* cap_kinds of them, grown as kinds are learned up
                                to MB_REP_KINDS: a thread that learns one kind
                                costs one kind's room, not 32                  */
    uint64_t *first;       /* each learned kind's first region, op << 32 | depth,
                              UINT64_MAX when none: looked for without reaching
                              into each kind's places                          */
    uint32_t cap_kinds;
    uint32_t next_learned; /* the one a new kind replaces                           */
    uint32_t following;    /* the one cur repeats, while speculating                */
    int started;           /* cur belongs to an outermost region begun             */
    int speculating;       /* cur repeats `following` so far: in its sums, not yet
                              in the tree                                          */
    int learnable;         /* cur (read the general way) may be learned            */
    uint32_t skip, backoff; /* outermost regions left to read the general way       */
    uint32_t top;          /* levels below which children wait (as mb_thread.top)   */
    uint64_t sum[MB_REP_DEPTH];      /* durations of the children waiting at each
                                        level, 0 when none waits                       */
    uint64_t min_end[MB_REP_DEPTH];  /* the earliest end among them, UINT64_MAX when
                                        none waits (mb_rep_init)                       */
} mb_rep;

typedef struct mb_interval {
    uint64_t start, end;
} mb_interval;

/* GPU work a region launched directly, beside a run of regions handed
 * over slim (launch.c). */
typedef struct mb_gself {
    uint64_t ns, kernels;
} mb_gself;

/* launch.c: a launch waiting for the region it was made in: GPU time
 * launched at `lo` (at or after it and up to `hi` once two were merged to
 * stay within the bound). */
typedef struct mb_jpend {
    uint64_t lo, hi, gpu_ns, kernels;
} mb_jpend;

/* pending.c: a thread's launches waiting for their region, by lo. */
typedef struct mb_pchunk mb_pchunk;
typedef struct mb_plist {
    mb_pchunk **chunk;
    size_t nchunks, cap;
    size_t n;              /* launches (merged pairs count one) */
} mb_plist;

int mb_plist_add(mb_plist *l, uint64_t at, uint64_t gpu_ns, uint64_t kernels);
void mb_plist_take(mb_plist *l, uint64_t s, uint64_t e, mb_gself *own);
void mb_plist_each(const mb_plist *l, void (*fn)(void *arg, const mb_jpend *p), void *arg);
void mb_plist_free(mb_plist *l);

/* launch.c: a launch call of the thread whose GPU work has not come. */
typedef struct mb_jout {
    uint64_t seq, start;   /* the call's place in the calls kept (mb_join.calls) */
} mb_jout;

/* launch.c: what a thread's join holds (see the top of launch.c). */
typedef struct mb_jthread {
    pf_slim *hold;         /* regions and syncs held, in arrival order, from hold_head */
    size_t hold_head, nhold, cap_hold;
    mb_gself *gself;       /* scratch: the GPU work of the regions handed on at once */
    size_t cap_gself;
    mb_plist pend;         /* launches waiting for their region (pending.c)          */
    mb_jout *out;          /* launch calls waiting for their GPU work, by start      */
    size_t out_head, nout, cap_out;
    uint64_t api_end;      /* the latest end of a runtime call of the thread so far  */
    uint64_t released_end; /* the latest end of a region handed on                   */
    uint64_t met_start;    /* the latest start of a launch call (not a graph's) whose
                              GPU work came                                        */
} mb_jthread;

/* Thinning (series.c, overlap.c): what a hash names is kept at level k
 * when the hash's top k bits are zero; each level keeps about half of
 * the one before, the same on every read. */
static inline uint64_t mb_thin_hash(uint64_t x) /* splitmix64's finisher */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline int mb_thin_keeps(uint64_t h, unsigned k)
{
    return k == 0 || (h >> (64 - k)) == 0;
}

/* Thinning stops here: past it, what hashes alike (a hostile file
 * repeating one step, one window) is no longer kept. */
#define MB_THIN_MAX 48u

/* overlap.c: a thread's busy time, and its outermost calls to lay over
 * the other threads' */
#define MB_OVERLAP_WINDOW_SHIFT 20u   /* the windows time is thinned in: 2^20 ns,
                                         about 1 ms (a shift, not a division)   */
#define MB_OVERLAP_LOOK 65536u        /* windows a span is looked at in, at most:
                                         a longer one (68 s) is kept, and measured
                                         on that many spread over it             */
#define MB_OVERLAP_CALL_NS 100000u    /* calls kept: 100 us or more            */
#define MB_OVERLAP_THREADS 256u       /* threads past which nothing is laid    */

typedef struct mb_call {
    uint64_t start, end;
    uint32_t op;
} mb_call;

typedef struct mb_busy_iv {
    uint64_t start, end;
    uint64_t longest;      /* the longest region joined into it                         */
} mb_busy_iv;

/* Windows [from, upto) looked at, at a thinning level: kept, the first
 * of them kept there, or UINT64_MAX (overlap.c, span_kept). */
typedef struct mb_scanned {
    uint64_t from, upto, kept;
    unsigned level;
} mb_scanned;

typedef struct mb_busy {
    mb_busy_iv *v;         /* the union of its outermost regions                        */
    size_t n, cap;
    mb_scanned scanned;    /* the windows its latest spans were looked for in         */
    int unsorted;          /* a region came before the last interval's start            */
    mb_call *calls;        /* outermost calls of MB_OVERLAP_CALL_NS or more              */
    size_t ncalls, cap_calls;
} mb_busy;

typedef struct mb_thread {
    mb_rep rep;            /* the repeat path (repeat.c)                                */
    mb_busy busy;          /* overlap.c                                                 */
    mb_jthread join;       /* launch.c                                                  */
    mb_level *level;       /* by depth                                                  */
    size_t nlevels;        /* allocated                                                 */
    uint32_t top;          /* levels at and above top are empty                          */
    mb_recent recent[MB_RECENT];
    uint32_t nrecent, next_recent;
    mb_sync *syncs;        /* in arrival order                                           */
    size_t nsyncs, cap_syncs;
    /* The thread's last MB_SYNC_REGIONS regions of kind SYNC, a ring in
     * arrival order (allocated at the first): a CUDA record written long
     * after its region (a CUPTI buffer is flushed a second or more later,
     * thousands of regions on) is still known to be that region's wait. */
    mb_interval *sync_regions;
    uint32_t nsync_regions, next_sync_region;
    int sync_regions_sorted; /* their ends arrived in order: searched by halves   */
} mb_thread;


/* What a GPU interval is, for the busy-time sweep (gpu.c). */
enum { MB_GPU_COMPUTE, MB_GPU_COMM, MB_GPU_COPY, MB_GPU_CLASSES };

typedef struct mb_tagged {
    uint64_t start, end;
    uint32_t cls;          /* MB_GPU_* */
} mb_tagged;

typedef struct mb_intervals { /* disjoint, sorted */
    mb_interval *v;
    size_t n, cap;
} mb_intervals;

/* A stretch of counted time on a device and what filled it, kept to
 * attribute activity to steps at the end (steps may come after it). */
typedef struct mb_span {
    uint64_t start, end;
    uint64_t busy, comm, overlap; /* ns of it: any activity, communication
                                     kernels, those overlapped by others */
} mb_span;

/* A class's intervals as sorted runs of disjoint ones, each run more than
 * twice as long as the next, so that there are at most 64 (gpu.c). */
#define MB_GPU_RUNS 64u
typedef struct mb_runs {
    mb_intervals run[MB_GPU_RUNS];
    size_t n;
} mb_runs;

/* A GPU record that ends after the latest step start so far, kept to tell
 * whether it was launched before the final step (gpu_window.c). */
typedef struct mb_held {
    uint64_t start, end, correlation;
    uint64_t launch;       /* start of its launch call, UINT64_MAX not known */
    uint32_t cls;
} mb_held;

typedef struct mb_gpu {    /* busy-time union of one device, see gpu.c */
    mb_tagged *batch;      /* grows up to MB_GPU_BATCH      */
    size_t nbatch, cap_batch;
    mb_held *held;         /* records ending after the latest step start
                              (every record before a step comes), gpu_window.c */
    size_t nheld, cap_held, held_limit;
    int window_lost;       /* more than MB_WINDOW_HELD records to hold: HTA's
                              figures count every record                        */
    mb_runs merged[MB_GPU_CLASSES]; /* per class, all read so far */
    uint64_t busy_end;     /* end of the time counted as busy so far */
    int counted_any;
    mb_span *spans;        /* at most MB_GPU_SPANS           */
    size_t nspans, cap_spans;
    int spans_merged;      /* spans were merged to stay within the bound */
} mb_gpu;

/* A launch call (a runtime API record) by its correlation id. */
typedef struct mb_launch {
    uint64_t correlation, start;
} mb_launch;

/* Which GPU records were launched before the final step started, for
 * HTA's breakdowns (gpu_window.c): the latest step start so far and the
 * one before, and the launch calls since that one. */
typedef struct mb_window {
    uint64_t steps;        /* step records read                          */
    uint64_t latest, before; /* the latest step start so far, the one before */
    mb_launch *launch;     /* launch calls that started at `before` or later
                              (all of them while no step has come)          */
    size_t nlaunch, cap_launch, launch_limit;
    hmap launch_index;     /* launch by correlation id                     */
    int lost;              /* more than MB_WINDOW_HELD calls before any step  */
    uint64_t first_final;  /* the first id called in the final step, 0 none */
    int first_final_known;
} mb_window;

/* launch.c: a launch call kept for the GPU work it launched, and a GPU
 * record waiting for its call, each in a ring of MB_JOIN_KEPT by arrival. */
typedef struct mb_jcall {
    uint64_t correlation, start, dur, seq;
    uint32_t tpos, flags;  /* MB_LAUNCH_* of its name                      */
} mb_jcall;

typedef struct mb_jgpu {
    uint64_t correlation, start, dur, seq;
    uint64_t prev;         /* seq of the previous record of its id waiting, or UINT64_MAX */
    uint32_t device, stream, type; /* type: PROF_EV_GPU_*                      */
    int waiting;
} mb_jgpu;

#define MB_JOIN_KEPT (1u << 18)   /* launch calls kept, GPU records waiting (each) */
#define MB_JOIN_HOLD 65536u       /* regions a thread holds for their launches     */
#define MB_JOIN_PENDING 65536u    /* launches a thread holds for their regions     */
#define MB_JOIN_STREAMS 4096u     /* streams with their own launch statistics      */

/* launch.c: a stream's queue events, in a heap by time until they are
 * counted in time order (at most MB_QUEUE_HELD at once). */
typedef struct mb_qev {
    uint64_t t;
    int64_t d;             /* +1 a launch, -1 its record starts */
} mb_qev;

#define MB_QUEUE_HELD 4096u

typedef struct mb_queue {
    mb_qev *heap;
    size_t n, cap;
    int64_t len;           /* the queue's length after the last event counted */
    uint64_t last_t;
    int counted;           /* an event was counted                          */
} mb_queue;

typedef struct mb_join {
    int off;               /* the tuning's no_join (PROF_MODEL_JOIN=0): nothing
                              joined, for measuring what it costs (make bench) */
    int hold;              /* regions wait for their launches                     */
    mb_jcall *calls;       /* a ring: call seq is at calls[seq % MB_JOIN_KEPT]    */
    size_t ncalls;         /* slots used (all, once the ring wrapped)             */
    uint64_t next_call;
    hmap call_index;       /* correlation -> slot                                 */
    mb_jgpu *gpu;          /* the same for GPU records                           */
    size_t ngpu;
    uint64_t next_gpu;
    hmap gpu_index;        /* correlation -> slot of the newest record waiting    */
    hmap stream_index;     /* device << 32 | stream -> index into m->launch       */
    size_t cap_launch;
    mb_queue *queue;       /* parallel to m->launch                               */
    size_t cap_queue;
} mb_join;

typedef struct mb_name_slot {              /* name id -> index, checked by name pointer */
    const char *name;
    uint32_t index;
} mb_name_slot;

typedef struct mb_idmap {  /* by name id; grown with vec_grow_zero */
    mb_name_slot *v;
    size_t n;
} mb_idmap;

/* What attaching floating nodes to a node of the tree found last time
 * (calltree.c): steps bring the same children in the same order, so the
 * node found the step before is tried before the index. */
typedef struct mb_guess {
    uint32_t first;        /* the first child found below this node, or MODEL_NONE */
    uint32_t next;         /* the sibling found after this node, or MODEL_NONE     */
} mb_guess;

typedef struct mb_series_state {
    size_t cap;            /* samples allocated                               */
    uint64_t final_t;      /* time of the series' last value so far           */
} mb_series_state;

typedef struct mb_class {                 /* a name's class attribute   */
    char *name, *cls;
} mb_class;

typedef struct mb_calls mb_calls; /* opcalls.c */

typedef struct model_builder {
    profile_model *m;
    mb_calls *calls;       /* ops numbered on the reader's thread, regions
                              read slim; NULL: read event by event          */
    int sketched;          /* the batch's duration sketches are folded on
                              the reader's thread (pf_slim_batch.seen)     */
    size_t cap_ops, cap_nodes, cap_threads, cap_steps, cap_series, cap_sites, cap_gpus;
    size_t busy_total;     /* overlap.c: busy intervals and calls kept, all threads      */
    int overlap_failed;    /* overlap.c: memory ran out                                  */
    mb_thread *threads;    /* parallel to m->threads                          */
    size_t cap_bthreads;
    uint32_t last_thread_index, last_thread_pos;
    uint32_t *thread_pos;  /* profile thread index -> position + 1, 0 unknown   */
    size_t nthread_pos;    /* (indexes below MB_THREAD_DIRECT; above: a search) */
    mb_idmap region_ops, kernel_ops, memory_series, counter_series;
    hmap op_index;         /* ops by (name, is GPU): hash of both, equality on the op */
    hmap node_index;       /* nodes by parent << 32 | op                      */
    mb_guess *guess;       /* parallel to m->nodes                            */
    size_t cap_guess;
    mb_fnode *pool;        /* floating nodes; free ones linked by next_sibling */
    size_t npool, cap_pool, live;
    uint32_t free_node;
    mb_fslot *fidx;        /* the floating index, open addressing            */
    size_t fidx_cap, fidx_used;
    uint64_t next_gen;
    mb_gpu *gpu;           /* parallel to m->gpus                             */
    mb_window window;      /* GPU records launched before the final step     */
    mb_join join;          /* GPU work joined to its launches (launch.c)     */
    mb_idmap api_names;    /* MB_LAUNCH_* of a runtime call's name, + 1      */
    hmap gpu_index;        /* m->gpus by device (a profile may name any number) */
    mb_series_state *series_state; /* parallel to m->series                  */
    hmap series_index;     /* m->series by (name, is memory), as op_index: a
                              profile may name any number of them            */
    size_t cap_comm_kernels, cap_comm_regions;
    size_t cap_series_state, cap_bgpus;
    mb_class *classes;     /* class attributes in file order, applied to the ops
                              once loaded (an attribute precedes its regions)  */
    size_t nclasses, cap_classes;
    size_t keep;           /* steps, samples of a series, busy intervals and long
                              calls of all threads kept (MODEL_KEEP)           */
    int repeat;            /* the repeat path may read regions (repeat.c); not
                              with the tuning's no_repeat (PROF_MODEL_REPEAT=0),
                              the reference it must match                     */
} model_builder;

/* qsort for arrays that may be empty (and NULL) */
void mb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The index cached for ev's name id, 1, or 0 when there is none. The
 * reader hands out one stable string per name id (a redefinition gives a
 * new one), so a cached id is still valid while its pointer matches.
 * Inline: every region and sample asks. */
static inline int mb_idmap_get(const mb_idmap *map, const prof_event *ev, uint32_t *index)
{
    if (ev->name_id < map->n && map->v[ev->name_id].name == ev->name) {
        *index = map->v[ev->name_id].index;
        return 1;
    }
    return 0;
}

/* profile.c: an operation's statistics of calls, empty */
void mb_op_init(model_op *op);

/* An operation sought in an index of ops by (name, is GPU): op_index, and
 * opcalls.c's, which numbers them the same way. */
typedef struct mb_op_key {
    const model_op *ops;
    const char *name;
    int gpu;
} mb_op_key;
uint64_t mb_op_hash(const char *name, int gpu);
int mb_op_is(const void *ctx, uint32_t i);          /* ctx: an mb_op_key */
uint64_t mb_op_rehash(const void *ctx, uint32_t i);

/* opcalls.c: numbers the ops of r's regions and kernels on r's thread,
 * folding there the duration sketches of the batches that say seen
 * (model_builder.sketched), and sets r to hand regions over
 * slim (pf_reader_next_slim) with their ops as tags; NULL when r reads on
 * the caller's thread alone (pf_reader_threaded), when r has begun reading or when memory ran out: read
 * event by event. finish checks that m's ops are numbered the same and
 * merges those sketches into them (-1: they are not, or memory ran out);
 * abort ends r's reading (its thread stopped). Both free c. */
mb_calls *mb_calls_start(prof_reader *r);
int mb_calls_finish(mb_calls *c, profile_model *m);
void mb_calls_abort(mb_calls *c);

/* calltree.c: op's node below parent, made on first sight; a new thread's
 * root (MODEL_NONE: no memory) */
uint32_t mb_node_child(model_builder *b, uint32_t parent, uint32_t op);
uint32_t mb_node_root(model_builder *b);

/* profile.c */
int mb_idmap_set(mb_idmap *map, const prof_event *ev, uint32_t index);

/* series.c */
int mb_step_add(model_builder *b, const prof_event *ev);
int mb_sample_add(model_builder *b, const prof_event *ev, int is_memory);
int mb_steps_series_finish(profile_model *m);
void mb_series_index_free(model_builder *b); /* b's indexes of the series */
size_t mb_keep_limit(const prof_tuning *t); /* its model_keep, if 16 to 2^30 */
void mb_step_totals_free(model_step_totals *t);

/* What the call tree takes of a region: a region event's fields, or a
 * region handed over slim (pf_slim), by the same names. */
typedef struct mb_reg {
    uint64_t start_ns, dur_ns;
    uint32_t depth, kind;
    uint64_t gpu_ns, kernels; /* GPU work it launched directly (launch.c), 0 none */
} mb_reg;

/* A region of thread tpos, by the repeat path when it can, else the
 * general way (repeat.c). */
int mb_region(model_builder *b, uint32_t tpos, const mb_reg *ev, uint32_t op);
/* mb_region for each of n regions handed over slim, their tags their ops,
 * with no other event of the thread among them; g, when not NULL, the GPU
 * work each launched directly */
int mb_region_run(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n,
                  const mb_gself *g);
/* A new thread's repeat path, its levels empty. */
void mb_rep_init(mb_rep *r);
/* What the repeat path holds of thread tpos, into the tree; a learned
 * place's sums, into its nodes (repeat.c, for mb_tree_finish). */
int mb_rep_flush(model_builder *b, uint32_t tpos);
void mb_rep_flush_sums(profile_model *m, mb_rep_learned *l);
/* calltree.c: the general way of a region, and what the repeat path
 * shares of it (a sync region's sites, the recent regions syncs are
 * sited at) */
int mb_region_general(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op);
int mb_syncs_on_region(model_builder *b, mb_thread *t, uint64_t s, uint64_t e, uint32_t depth,
                       uint32_t op, uint32_t kind);
int mb_sync_region_push(mb_thread *t, uint64_t s, uint64_t e);
/* A region of the thread among the last MB_RECENT, where syncs are sited:
 * inline, as both ways call it for every region. */
static inline void mb_recent_push(mb_thread *t, uint64_t s, uint64_t e, uint32_t op,
                                  uint32_t kind, uint32_t depth)
{
    t->recent[t->next_recent] = (mb_recent){ s, e, op, kind, depth };
    t->next_recent = (t->next_recent + 1) % MB_RECENT;
    if (t->nrecent < MB_RECENT)
        t->nrecent++;
}
int mb_sync_record(model_builder *b, uint32_t tpos, const prof_event *ev);
int mb_tree_finish(model_builder *b);
void mb_tree_free(model_builder *b);

/* overlap.c: an outermost region of op on thread tpos (out of memory is
 * kept for mb_overlap_finish to return, so that the repeat path needs no
 * way out); after mb_tree_finish, others_ns of each operation */
void mb_overlap_region(model_builder *b, uint32_t tpos, uint64_t start, uint64_t dur, uint32_t op);
int mb_overlap_finish(model_builder *b);
void mb_overlap_free(model_builder *b);

/* gpu.c (comm: a communication kernel) */
int mb_gpu_event(model_builder *b, const prof_event *ev, int comm);
int mb_gpu_finish(model_builder *b);
/* gpu_window.c */
int mb_window_launch(model_builder *b, const prof_event *ev);
int mb_window_step(model_builder *b, uint64_t start);
int mb_window_hold(model_builder *b, mb_gpu *g, const mb_tagged *rec, uint64_t correlation);
/* Whether HTA's figures leave a final step out, and *s its start. */
int mb_window_final(const model_builder *b, const mb_gpu *g, uint64_t *s);
/* Two steps or more, but which records the final step launched is not known. */
int mb_window_unknown(const model_builder *b, const mb_gpu *g);
/* Keeps of the held records those launched before the final step that end
 * after it starts, and counts the ones launched in it. */
int mb_window_settle(model_builder *b, mb_gpu *g, uint64_t *left_out);
void mb_window_free(model_builder *b);
void mb_gpu_free(model_builder *b);

/* launch.c: the join of GPU work to the runtime calls that launched it and
 * to the regions those were made in (rules.md §3.2). Regions and syncs of
 * a thread go through mb_join_region(_run) and mb_join_sync, which hand
 * them on to mb_region(_run) and mb_sync_record once their launches are
 * known. */
enum {
    MB_LAUNCH_WORK = 1,    /* a call that launches GPU work                     */
    MB_LAUNCH_HTA = 2,     /* one of HTA's launch calls for its statistics      */
    MB_LAUNCH_MANY = 4,    /* a graph launch: any number of records             */
    MB_LAUNCH_QUEUE = 8,   /* one of HTA's calls that fill a stream's queue     */
    MB_LAUNCH_MET = 256,   /* mb_jcall.flags: its GPU work came                */
};
void mb_join_start(model_builder *b, const cJSON *metadata);
int mb_join_api(model_builder *b, uint32_t tpos, const prof_event *ev);
int mb_join_gpu(model_builder *b, const prof_event *ev);
int mb_join_region(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op);
int mb_join_region_run(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n);
int mb_join_sync(model_builder *b, uint32_t tpos, const prof_event *ev);
int mb_join_release_all(model_builder *b); /* before mb_tree_finish */
int mb_join_finish(model_builder *b);      /* after it: totals, statistics */
void mb_join_free(model_builder *b);

/* collective.c: communication kernels and COMM regions, kept for the
 * straggler rule (rules.md §4.9) */
int mb_collective_kernel(model_builder *b, const prof_event *ev);
int mb_collective_region(model_builder *b, const prof_event *ev);
int mb_collective_finish(model_builder *b);

#endif
