/* sink.h - the one way a trace becomes a profile. An importer (kineto.c,
 * nsys.c) reads a trace and hands its activity to a sink in the trace's own
 * time base; the sink writes a .prof file through the format writer, so
 * every command reads an imported trace through the same reader and model
 * as a recorded one, and every rule, view and export works on it unchanged.
 *
 * What the importers share lives here: names interned once, threads
 * numbered, regions nested by time and written in end order (as the
 * recorder writes them) with bounded memory, CUDA activity mapped by the
 * recorder's own translation (record/cupti_translate.c), the kind of a
 * region guessed from its name, and the metadata, written last because a
 * trace may tell its rank or time base after its events.
 *
 * Times: signed nanoseconds in the trace's own base (Kineto: its "ts" in
 * microseconds times 1000; Nsight: its session nanoseconds). The sink
 * takes the profile's time 0 shortly before the first time it is handed;
 * an earlier time later is clamped to 0 and counted. Memory: a bounded
 * window of pending regions per thread, a block per thread, and tables as
 * large as the trace's distinct names, threads and devices, which the
 * format's limits bound (formats/prof-format.md §9): the sink stops with
 * PROF_ERR_LIMIT at the first name or thread past them (sink_error), so no
 * import writes a profile that prof's reader refuses. */
#ifndef PROF_IMPORT_SINK_H
#define PROF_IMPORT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "prof_reader.h"
#include "record/cupti_translate.h"

typedef struct import_sink import_sink;

/* kind argument of sink_region: guess it from the name (sink_kind_of) */
#define SINK_KIND_INFER UINT32_MAX

/* What an import read, for the command's summary and the profile's
 * metadata ("import" object, formats/kineto-import.md). */
typedef struct import_counts {
    uint64_t regions, steps, kernels, copies, memsets, syncs, api_calls, memory_samples,
        marks;
    uint64_t unknown;      /* events of kinds the importer does not know: noted, not fatal */
    uint64_t skipped;      /* events left out on purpose (python_function by default)      */
    uint64_t unplaced;     /* events with no place: a sync whose API call never came, ...  */
    uint64_t clamped;      /* times before the profile's origin, moved to it               */
    uint64_t reordered;    /* regions that came later than the nesting window could wait  */
    int damaged;           /* the input was cut or damaged: what came before is kept       */
    int output_failed;     /* the error was writing the profile (disk full, ulimit -f)     */
    char skipped_kinds[160]; /* "gpu_user_annotation 30, python_function 2" (sink_describe) */
    char unknown_kinds[160];
} import_counts;

/* Opens a sink writing a profile to fd, which must be a regular file open
 * for writing at offset 0; the sink owns it from then on, closing it in
 * sink_close or sink_abandon. source: "kineto" or "nsys"; input: the trace's
 * name as the user gave it (recorded in the metadata as argv). */
prof_err sink_open(import_sink **out, int fd, const char *source, const char *input,
                   prof_error *err);

/* ---- what the trace says of the run (any time before sink_close) ---------------- */

/* Wall-clock time of trace time 0, ns since the Unix epoch (Kineto 2024:
 * baseTimeNanoseconds; older Kineto: 0, its times are epoch microseconds). */
void sink_set_epoch(import_sink *s, int64_t epoch_ns_of_trace_zero);
void sink_set_rank(import_sink *s, int rank, int world_size);
void sink_set_process(import_sink *s, uint64_t pid, const char *name); /* name may be NULL */
void sink_set_host(import_sink *s, const char *host);
/* A GPU: index as in the device field of its activity. Repeating an index
 * replaces what was said of it. */
prof_err sink_add_device(import_sink *s, uint32_t index, const char *name, uint64_t memory_bytes);
/* A free-form fact for the metadata's "import" object: key, and a value
 * that must be JSON text (a number, a quoted string, ...). */
prof_err sink_set_fact(import_sink *s, const char *key, const char *json_value);

/* ---- activity ------------------------------------------------------------------------ */

/* Threads are named by any 64-bit key unique within the trace (Kineto:
 * its tid; Nsight: globalTid). A thread is made on first use. */
prof_err sink_thread_name(import_sink *s, uint64_t thread, const char *name);
/* The OS thread id of a thread whose key is not one (Nsight's globalTid
 * packs the process in): shown in reports. Before naming it. */
prof_err sink_thread_tid(import_sink *s, uint64_t thread, uint64_t os_tid);

/* A CPU region on a thread: nested by time with the thread's others. kind:
 * a prof_kind, or SINK_KIND_INFER. len: bytes of name (no NUL needed). */
prof_err sink_region(import_sink *s, uint64_t thread, const char *name, size_t len,
                     uint32_t kind, int64_t ts, int64_t dur);
/* A training step (Kineto: ProfilerStep#N) on the thread that ran it. */
prof_err sink_step(import_sink *s, uint64_t thread, uint64_t number, int64_t ts, int64_t dur);
/* A sample of a memory series ("gpu0.allocated", "host.allocated"). */
prof_err sink_memory(import_sink *s, const char *series, int64_t ts, uint64_t bytes);
/* An instant on a thread. */
prof_err sink_mark(import_sink *s, uint64_t thread, const char *name, int64_t ts);
/* CUDA activity as CUPTI reports it: a kernel, copy or memset (GPU
 * timeline), a runtime API call (r->tid: its thread key) or a
 * synchronization (its thread is found through its API call's correlation
 * id, which may come before or after it). r->start and r->end are trace
 * times (non-negative). Through rt_cu_translate, as the recorder does. */
prof_err sink_cuda(import_sink *s, const rt_cu_rec *r);

/* ---- how it went ----------------------------------------------------------------------- */

/* Events of a kind the importer does not know (category: e.g. Kineto's
 * "cat"): counted by category in the metadata, never fatal. */
void sink_note_unknown(import_sink *s, const char *category);
/* Events left out on purpose, counted by category. */
void sink_note_skipped(import_sink *s, const char *category);
/* The input ends or breaks at what: what came before is kept, and the
 * profile's metadata says so (a command's report shows it as a note). Only
 * the first call's message is kept. */
void sink_note_damage(import_sink *s, const char *what);

/* The first error of s (every call after it returns its code), or NULL
 * while there is none. A trace past the format's limits on names, name
 * text or threads (formats/prof-format.md §9) stops the sink with
 * PROF_ERR_LIMIT and a message naming the limit, which the importers pass
 * on as it is: the trace is what prof cannot take. */
const prof_error *sink_error(const import_sink *s);
/* counts with the kinds left out and unknown named, as the summary of an
 * import shows them. */
void sink_describe(const import_sink *s, import_counts *out);

/* Writes what is pending, the footer and the metadata, and frees s (also on
 * failure). */
prof_err sink_close(import_sink *s, prof_error *err);
/* The same, with the final counts (sink_describe's) in *counts: syncs
 * whose API call never came are known unplaced only at the end. */
prof_err sink_finish(import_sink *s, import_counts *counts, prof_error *err);
/* Frees s without finishing the file (after an error). */
void sink_abandon(import_sink *s);

/* The kind of a region from its name: DATA for DataLoader fetches, SYNC for
 * cuda / hip *Synchronize, aten::item and aten::_local_scalar_dense, COMM
 * for NCCL, c10d, Gloo, ProcessGroup and MPI calls, COMPUTE otherwise. */
uint32_t sink_kind_of(const char *name, size_t len);

#endif /* PROF_IMPORT_SINK_H */
