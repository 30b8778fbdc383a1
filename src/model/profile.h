/* profile.h - the in-memory profile that analysis works on, built from the
 * reader's event stream in one pass. Memory grows with the number of distinct
 * operations and call paths, never with the number of region events: per-call
 * durations are folded into aggregates and a quantile sketch as they arrive.
 * Steps and samples are kept up to MODEL_KEEP, then thinned (series.c), so a
 * longer run does not grow it either. Reentrant: everything lives in the
 * profile_model. */
#ifndef PROF_MODEL_PROFILE_H
#define PROF_MODEL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "model/sketch.h"
#include "model/timebatch.h"
#include "prof_reader.h"
#include "util/tuning.h"

#define MODEL_NONE UINT32_MAX

/* One operation: every region with this name (CPU) or kernel with this name
 * (GPU), whatever its call path. */
typedef struct model_op {
    char *name;
    uint32_t kind;         /* prof_kind of its first region; MODEL_KIND_GPU for kernels */
    uint64_t calls;        /* set when loading ends, from batches                       */
    uint64_t incl_ns;      /* sum of durations (nested calls of itself counted once each);
                              set when loading ends, from batches                       */
    uint64_t self_ns;      /* incl minus time in child regions                          */
    uint64_t min_ns, max_ns; /* set when loading ends, from dur                      */
    double mean_ns, m2;    /* variance = m2 / (calls - 1); both set when loading ends   */
    double shift, sum_dev, sum_dev2; /* while loading: sums of (duration - shift), shift
                              being the first duration, from which mean and m2 follow   */
    quantile_sketch dur;   /* per-call durations                                        */
    char *cls;             /* what the op is (its name's class attribute, format §6.5,
                              e.g. "torch.nn.Linear"), or NULL when the profile does not say */
    time_batches batches;  /* calls and time by when they started, for compare's tests  */
    int comm;              /* a kernel that communicates (model_kernel_is_comm)          */
    /* GPU work launched in its regions (rules.md §3.2): directly (self), or
     * in them or below them (total; a call inside a call of itself counted
     * once); the kernels of it. 0 for kernel operations. */
    uint64_t gpu_self_ns, gpu_ns, kernels_self, kernels;
    /* Its outermost calls of 100 us or more (overlap.c): their time, the
     * part of it during which other threads ran regions (a thread that
     * waits for another, rules.md §4.1), and the profile thread index of the
     * thread that ran most under its most covered call (MODEL_NONE: none).
     * 0 with one thread, or with overlap_unknown. outer_long_ns is exact;
     * others_ns, once time was thinned (overlap_thinning), is its share of
     * the calls' time in the windows kept, times outer_long_ns. */
    uint64_t outer_long_ns, others_ns;
    uint32_t others_thread;
} model_op;

#define MODEL_KIND_GPU 100u /* model_op.kind of a GPU kernel operation */

/* A node of the call tree of one thread, keyed by path (parent, op): a
 * recursive call is a node below its own. Children are linked in order of
 * first appearance. A thread's root has op MODEL_NONE, no calls, and incl_ns
 * the sum of its children's (its outermost regions, plus regions whose
 * parent was never recorded or never ended, which hang at the root). */
typedef struct model_node {
    uint32_t op;           /* index into ops; MODEL_NONE for a thread's root            */
    uint32_t parent;       /* node index; MODEL_NONE for a root                         */
    uint32_t first_child, next_sibling; /* node indexes or MODEL_NONE                    */
    uint64_t calls, incl_ns, self_ns;
    /* GPU work (kernels, copies, memsets) joined to the runtime call that
     * launched it and that call to its place (rules.md §3.2): launched
     * directly in this node's regions (self), or in them or below (total);
     * and of those records, the kernels. A root's self is the work
     * launched outside every region of its thread. */
    uint64_t gpu_self_ns, gpu_ns, kernels_self, kernels;
} model_node;

typedef struct model_thread {
    uint32_t index;        /* profile thread index                                      */
    uint64_t os_tid;
    char *name;            /* latest definition, or NULL                                */
    uint32_t root;         /* node index of this thread's call-tree root                */
    uint64_t regions;      /* region events on this thread                              */
    uint64_t busy_ns;      /* time covered by its outermost regions                     */
} model_thread;

/* A model keeps at most this many steps, and this many samples of each
 * series: past it, a deterministic pseudo-random half of them, then a
 * quarter, ... (series.c), so that memory does not grow with the length of
 * the run. What must be exact is counted over every step and sample as
 * they arrive (model_step_totals, model_series). The tuning's model_keep
 * (PROF_MODEL_KEEP=N, 16 or more) sets another limit, for tests of the
 * thinning. */
#define MODEL_KEEP 65536u

typedef struct model_step {
    uint64_t number;
    uint64_t start_ns, dur_ns;
    uint64_t gpu_busy_ns;  /* a kept step's (complete, sampled): the time its devices were
                              busy in it, summed over them (gpu.c; shared out in
                              proportion when step_interpolated); 0 otherwise          */
    uint32_t flags;        /* PROF_STEP_*                                               */
} model_step;

/* A step among the longest of its class. */
typedef struct model_long_step {
    uint64_t number, start_ns, dur_ns;
} model_long_step;

#define MODEL_LONGEST 4096u /* longest steps kept of each class: the outlier test
                               is exact over a thinned model while fewer steps
                               than this are outliers (rules.md §4.7)            */

/* The durations of a class of steps: running moments, extremes, a sketch
 * and the longest steps, over every step whether the model kept it or not. */
typedef struct model_step_durations {
    uint64_t n;
    double mean, m2;       /* variance = m2 / (n - 1) (Welford's update)                */
    uint64_t min, max;
    uint64_t first_number, first_start; /* the first step in step order (number, then
                              start), which the outlier test leaves out                 */
    quantile_sketch sketch;
    model_long_step *longest; /* a min-heap by duration, at most MODEL_LONGEST          */
    size_t nlongest;
} model_step_durations;

/* Every step, counted as it arrived: complete steps, and of them the
 * sampled ones (rules.md §1); durations of the complete steps and of all
 * steps (step times use those of all steps when none is complete). */
typedef struct model_step_totals {
    uint64_t steps, complete, sampled;
    uint64_t sampled_ns;   /* the sampled steps' time                                   */
    model_step_durations complete_dur, all_dur;
    int complete_apart;    /* while loading: an incomplete step came, and complete_dur
                              is kept apart; before that it would be all_dur's figures,
                              and it is made a copy of them when one comes or loading
                              ends (series.c) */
} model_step_totals;

typedef struct model_sample {
    uint64_t t_ns;
    uint32_t step;         /* index into steps of the step the sample falls in (by time),
                              or MODEL_NONE when outside every step                     */
    double value;          /* bytes for memory series, the value for counters           */
} model_sample;

typedef struct model_series {
    char *name;
    int is_memory;         /* 1 memory series (bytes), 0 counter                        */
    model_sample *samples; /* in time order; all of them unless thinning > 0              */
    size_t nsamples;
    uint64_t total;        /* samples in the profile, kept or not                        */
    unsigned thinning;     /* 0: every sample kept; k: about one in 2^k (MODEL_KEEP)      */
    double peak, final, low; /* of every sample: the largest (at its first time), the
                              last in time, the smallest                                */
    uint64_t peak_t_ns;
} model_series;

/* Where the CPU waited for the GPU: SYNC records and SYNC-kind regions,
 * grouped by the operation of the innermost enclosing non-SYNC region.
 * Sites are sorted by blocked time, largest first. A SYNC record inside a
 * SYNC region is the same wait and counts once, as the region; a SYNC
 * region inside another counts as part of the outer one. */
/* How long the waits lasted, in bands (rules.md §4.3): under
 * MODEL_WAIT_SHORT_NS a sync found the GPU done (the call's own cost,
 * nothing waited for); from it to MODEL_WAIT_LONG_NS, short waits; past it,
 * long ones. Each wait is banded by its own duration; a SYNC region's calls
 * are banded by its operation's duration sketch, in proportion where only
 * some of the operation's calls count here (the rest nested in another
 * SYNC region). */
#define MODEL_WAIT_BANDS 3
#define MODEL_WAIT_SHORT_NS 10000u   /* 10 us */
#define MODEL_WAIT_LONG_NS 1000000u  /* 1 ms  */

static inline unsigned model_wait_band(uint64_t ns)
{
    return ns < MODEL_WAIT_SHORT_NS ? 0u : ns < MODEL_WAIT_LONG_NS ? 1u : 2u;
}

typedef struct model_sync_site {
    uint32_t op;           /* enclosing operation, or MODEL_NONE (outside any region)   */
    uint64_t count, blocked_ns;
    uint64_t waits[MODEL_WAIT_BANDS]; /* count by band; they sum to count           */
} model_sync_site;

/* An idle gap on a device: no kernel, copy or memset on any stream. */
typedef struct model_gap {
    uint64_t start_ns, dur_ns;
} model_gap;

#define MODEL_GPU_GAPS 3   /* longest gaps kept per device */

/* A device's time as Holistic Trace Analysis counts it (rules.md §3.1):
 * over the GPU records launched before the final step started (every
 * record when the profile has fewer than two steps). */
typedef struct model_gpu_window {
    uint64_t first_ns, last_ns; /* the first of those records' start and the
                              last one's end; both 0 when there are none       */
    uint64_t class_ns[8];  /* time by the set of classes running at once: bit 0
                              computation kernels, bit 1 communication kernels,
                              bit 2 memory (copies, memsets); [0] stays 0       */
    uint64_t left_out;     /* records launched in the final step               */
    int final_step_out;    /* two steps or more: the final one is left out     */
    int final_step_unknown; /* two steps or more, but which records the final
                              one launched is not known (gpu_window.c: they came
                              before the steps, or too many were in flight):
                              every record is counted                          */
} model_gpu_window;

typedef struct model_gpu_device {
    uint32_t device;
    uint64_t kernels, kernel_ns;
    uint64_t memcpy_count, memcpy_bytes, memcpy_ns;
    uint64_t memset_count, memset_ns;
    uint64_t busy_ns;      /* union of kernel/copy/memset intervals on any stream       */
    uint64_t first_ns, last_ns;
    uint64_t idle_gaps;    /* gaps ≥ 1 ms between busy intervals inside [first, last]    */
    uint64_t idle_gap_ns;
    model_gap longest[MODEL_GPU_GAPS]; /* the longest of those gaps, longest first;
                              dur_ns 0 past the last                                    */
    uint64_t comm_kernels; /* communication kernels (model_kernel_is_comm)              */
    uint64_t comm_ns;      /* union of their intervals                                  */
    uint64_t comm_overlap_ns; /* of comm_ns, time other kernels ran on the device too   */
    /* Inside the steps that kept their events (complete and sampled; rules.md §4.5):
     * their total time, and of it the time the device was busy, ran communication
     * kernels, and ran them overlapped by other kernels. Exact unless
     * step_interpolated: the device had more stretches of activity than the
     * model keeps, so some were merged and split between steps in proportion. */
    uint64_t step_ns, step_busy_ns, step_comm_ns, step_overlap_ns;
    int step_interpolated;
    model_gpu_window hta;
} model_gpu_device;

/* A collective as one rank saw it: a communication kernel on a device's
 * stream, or an outermost region of kind COMM on a thread (device
 * MODEL_NONE, stream the thread index). */
typedef struct model_collective {
    uint64_t start_ns, dur_ns;
    uint32_t device, stream;
} model_collective;

#define MODEL_COLLECTIVES_MAX (1u << 18) /* kept of each kind; later ones are counted */

/* Kernel launch statistics as Holistic Trace Analysis defines them
 * (rules.md §3.2): over the GPU records whose launch call is
 * cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync or
 * cudaMemsetAsync, the call's CPU duration, the record's GPU duration and
 * the launch delay (record start minus the call's end, 0 when negative). */
typedef struct model_launch_stats {
    uint32_t device, stream; /* MODEL_NONE for the summary over every stream      */
    uint64_t launches;
    uint64_t cpu_ns, gpu_ns, delay_ns;   /* sums                                   */
    uint64_t cpu_over, delay_over; /* calls over HTA's cut-offs: runtime 50 µs,
                              launch delay 100 µs                                 */
    quantile_sketch cpu, gpu, delay;
    /* The stream's launch queue as HTA counts it (per stream only): one more
     * at each launch call's start, one less at its record's start, over the
     * records of HTA's launch calls (cuLaunchKernel and cuLaunchKernelEx
     * too); the length after each such event, and the time spent at the
     * largest length and at CUDA's limit (MODEL_QUEUE_FULL) or more. */
    uint64_t queue_events;
    double queue_sum, queue_sum2;
    quantile_sketch queue;
    uint64_t queue_max, queue_at_max_ns, queue_full_ns;
    uint64_t queue_reordered; /* events that came after later ones had been counted */
} model_launch_stats;

#define MODEL_QUEUE_FULL 1024u /* CUDA's launch queue per stream (HTA's
                                  CUDA_MAX_LAUNCH_QUEUE_PER_STREAM) */

void model_launch_stats_free(model_launch_stats *s);

#define MODEL_LAUNCH_CPU_CUTOFF_NS 50000ull
#define MODEL_LAUNCH_DELAY_CUTOFF_NS 100000ull
#define MODEL_SHORT_KERNEL_NS 10000ull /* a kernel shorter than this is short */

/* How GPU work was joined to its launches (launch.c). */
typedef struct model_gpu_join {
    uint64_t records, ns;          /* GPU records (kernels, copies, memsets), their time */
    uint64_t joined, joined_ns;    /* of them, joined to their runtime call            */
    uint64_t late, late_ns;        /* of those, whose call's thread had already handed
                                      on a region around the call: counted in an
                                      enclosing region that came later, or outside    */
    uint64_t outside_ns;           /* launched outside every region of its thread     */
    uint64_t short_kernels, short_kernel_ns; /* kernels under MODEL_SHORT_KERNEL_NS    */
    int held;                      /* regions waited for their launches (the profile
                                      has CUDA activity)                              */
} model_gpu_join;

typedef struct profile_model {
    char *path;
    char *metadata;        /* JSON text                                                 */
    unsigned major, minor;
    int rank, world_size;  /* from metadata; -1 when absent                             */
    prof_read_status status;

    model_op *ops;         size_t nops;
    model_node *nodes;     size_t nnodes;
    model_thread *threads; size_t nthreads;
    model_step *steps;     size_t nsteps;   /* in step order; all unless step_thinning   */
    unsigned step_thinning;       /* 0: every step kept; k: about one in 2^k (MODEL_KEEP) */
    model_step_totals step_totals; /* of every step, kept or not                        */
    model_series *series;  size_t nseries;
    model_sync_site *sync_sites; size_t nsync_sites;
    model_gpu_device *gpus; size_t ngpus;
    model_collective *comm_kernels; size_t ncomm_kernels; /* by device, stream, start */
    model_collective *comm_regions; size_t ncomm_regions; /* by start                 */
    uint64_t collectives_dropped; /* past MODEL_COLLECTIVES_MAX                          */

    uint64_t first_ns, last_ns;   /* span of all timed events                           */
    uint64_t profiled_ns;         /* time covered by outermost regions, summed over threads */
    uint64_t region_events, events;
    uint64_t sync_count, sync_blocked_ns; /* all syncs: records + SYNC regions          */
    uint64_t sync_records;        /* of which CUDA sync records                          */
    uint64_t sync_waits[MODEL_WAIT_BANDS]; /* sync_count by how long each waited         */
    int overlap_unknown;          /* the threads' busy time was past what overlap.c keeps:
                                     no model_op.others_ns                              */
    unsigned overlap_thinning;    /* 0: every busy interval kept; k: those in the 1 ms
                                     windows kept at thinning level k (overlap.c)        */
    uint64_t dropped_events;
    uint64_t kind_ns[5];          /* self time by prof_kind                              */
    int has_gpu;                  /* any GPU kernel/copy/memset record                   */
    size_t peak_pending_nodes;    /* most call-tree nodes held at once while waiting for
                                     their parent region: bounded by distinct call paths
                                     below one outermost region, never by events         */
    uint64_t repeated_regions;    /* of region_events, those placed by the call tree's
                                     repeat path (a measure of it; repeat.c)             */
    model_gpu_join gpu_join;
    model_launch_stats launch_all; /* launch statistics over every stream             */
    model_launch_stats *launch;    /* per stream, by device then stream                */
    size_t nlaunch;
    void *priv;                   /* builder state, NULL once loaded                     */
} profile_model;

/* Reads a whole file into *m. A cut-short file is loaded up to its last intact
 * block (m->status says so); any other failure returns its code with err set.
 * progress, when not NULL, is called now and then with bytes read and total.
 * On failure *m is left empty (freeing it is harmless). Memory: the model,
 * plus a builder bounded by the distinct call paths below one outermost
 * region, a few hundred KiB per GPU device at most, and the reader's block. */
typedef void (*model_progress_fn)(uint64_t done, uint64_t total, void *arg);
prof_err profile_model_load(const char *path, const prof_tuning *t, profile_model *m,
                            model_progress_fn progress, void *arg, prof_error *err);

void profile_model_free(profile_model *m);

/* Rank and world size from parsed metadata (NULL allowed); -1 for each
 * that is absent, not a number or out of range. */
void model_metadata_rank(const cJSON *meta, int *rank, int *world_size);

double model_op_variance(const model_op *op); /* sample variance, 0 when calls < 2 */

/* Whether a kernel of this name communicates: NCCL's (and RCCL's, which
 * keeps the names) contain "nccl" in some case (ncclKernel_AllReduce_...,
 * ncclDevKernel_...); NVSHMEM's, MSCCL++'s, PyTorch's symmetric memory
 * and custom all-reduce kernels are known by the collective they run.
 * rules.md §4.10 lists the words. */
int model_kernel_is_comm(const char *name);

#endif
