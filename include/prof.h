/* prof.h - the recording API of libprof, what a training program includes.
 *
 * Every call is safe from any thread. When recording has not been started,
 * or PROF_ENABLE=0, every call returns after one predictable branch. The
 * hot calls (regions, memory samples, counters, marks) take no lock,
 * allocate nothing and make no system call: they stamp the clock and append
 * a fixed-size record to a buffer owned by the calling thread. prof_step
 * adds one pread() of /proc/self/statm for the host memory sample. A background
 * thread encodes, compresses and writes those buffers. Nothing here ever
 * terminates or blocks the program: when the file cannot be written,
 * recording stops and libprof says so once (one line on stderr, or to the
 * program's handler: prof_set_message_handler); when the buffers are full,
 * events are dropped and counted (steps never are). The files libprof
 * opens never take descriptors 0, 1 or 2, even when the program closed
 * them, and are closed on exec.
 */
#ifndef PROF_H
#define PROF_H

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

#define PROF_VERSION_MAJOR 0
#define PROF_VERSION_MINOR 1
#define PROF_VERSION_PATCH 0
#define PROF_VERSION_STRING "0.1.0"

/* What a region spends its time on; the analysis rules read it (DATA for
 * data loading, SYNC for waiting on the device). Values are frozen: they
 * are stored in profiles. */
typedef enum {
    PROF_KIND_COMPUTE = 0,
    PROF_KIND_DATA = 1,
    PROF_KIND_SYNC = 2,
    PROF_KIND_COMM = 3,
    PROF_KIND_IO = 4
} prof_kind;

typedef struct prof_config {
    const char *output;            /* NULL: $PROF_OUTPUT, else "run.prof"                   */
    double      sample_rate;       /* fraction of steps whose events are kept; 0 means 1.0  */
    unsigned    wait, warmup, active, repeat; /* step schedule as torch.profiler; active=0: off */
    unsigned    memory_interval_ms;/* background host-memory sampling; 0: at steps only     */
    size_t      buffer_bytes;      /* cap on buffered events; past it events are dropped
                                      and counted, the program is never blocked; 0: 64 MiB.
                                      Steps and their memory samples have a reserve of
                                      their own beyond it, and are never dropped           */
    unsigned    flush_interval_ms; /* writer flush period; bounds what a crash can lose;
                                      0: 1000 ms                                            */
    int         cuda;              /* capture CUDA activity through CUPTI when available    */
} prof_config;

/* Starts recording. cfg NULL: defaults, then the environment (PROF_OUTPUT,
 * PROF_SAMPLE_RATE, PROF_SCHEDULE, PROF_MEMORY_INTERVAL_MS, PROF_BUFFER_MB,
 * PROF_FLUSH_MS, PROF_CUDA, PROF_RANK, PROF_TAGS). Fields left zero in a
 * given cfg are also taken from the environment. Creates the output file
 * (a regular file only: it never opens a FIFO, socket or device, which
 * could block the program) and the writer thread. The output is locked
 * while recording: when another recorder holds it, this one writes the
 * name with ".PID" before the extension instead (run.4242.prof) and says
 * so as a PROF_MSG_WARNING; so does a process PROF_AUTOSTART_PID says is
 * a recorded one's child, when the name comes from PROF_OUTPUT.
 * @return 0, or -errno: -EALREADY when already recording, -EINVAL for a bad
 * configuration, the open(2) error for an unwritable output, -ENOTSUP when
 * the output exists and is not a regular file, -ELOOP when it is a link
 * another user planted in a shared sticky directory (/tmp), -EBUSY when
 * other recorders hold it and every name of its own tried, -ECANCELED when
 * PROF_ENABLE=0 (nothing is recorded then). Prints nothing: when CUDA
 * capture is asked for and cannot be had, recording goes on without it and
 * the reason goes to the message handler as a PROF_MSG_WARNING. */
int prof_start(const prof_config *cfg);

/* Ends the current step as incomplete, writes what is buffered and the
 * footer, and closes the file. Idempotent; safe when never started.
 * Call it while no other thread is still recording.
 * @return 0, or -errno of the first write that failed during the run. */
int prof_stop(void);

/* Hands every thread's buffered events to the writer and waits until they
 * are on disk. Costs a few system calls; not for the hot path. */
void prof_flush(void);

/* What libprof has to say, which is little: it returns errors rather than
 * printing them. Two levels (values frozen):
 *   PROF_MSG_ERROR    recording stopped during the run, as the profile
 *                     could not be written (a full disk; prof_stop() then
 *                     returns the error too), at most once per recording;
 *                     or libprof, preloaded, could not start ("not
 *                     recording: " and why).
 *   PROF_MSG_WARNING  recording goes on without something asked for:
 *                     "CUDA capture off: " and why, once per process; or
 *                     into another file than asked ("recording into
 *                     'run.4242.prof': 'run.prof' is another recorder's"). */
typedef enum { PROF_MSG_ERROR = 1, PROF_MSG_WARNING = 2 } prof_msg_level;

/* A receiver of libprof's messages: the level, the message as one line
 * without a "prof: " prefix or a newline ("recording stopped: cannot write
 * 'run.prof': No space left on device"), and the arg given along with it.
 * It may run on any thread, libprof's writer thread included, with
 * libprof's internal locks held: it must return soon and must not call
 * libprof. Calls are serialised. Never called from a signal handler. */
typedef void (*prof_message_fn)(prof_msg_level level, const char *msg, void *arg);

/* Sends libprof's messages to fn (with arg) from now on. fn NULL restores
 * the default: errors as one line on stderr ("prof: MSG"), warnings
 * dropped; where libprof started itself (preloaded with PROF_OUTPUT set, or
 * by CUDA injection), warnings on stderr too, as no caller sees the result
 * of that start. Works before prof_start and lasts for the life of the
 * process. Once it returns, the previous handler is not called again.
 * Safe from any thread but a handler. */
void prof_set_message_handler(prof_message_fn fn, void *arg);

/* Regions nest per thread: each end closes the innermost open region of
 * the calling thread. An end without a begin is ignored. Regions deeper
 * than 255 levels are not recorded (their ends still match). */
void prof_region_begin(const char *name);                   /* kind COMPUTE */
void prof_region_begin_kind(const char *name, prof_kind k);
void prof_region_end(void);

/* Ends the current training step and begins the next. Also samples host
 * memory ("host.rss"). Steps and memory samples are kept in every step,
 * also in steps that sampling or the schedule skip, and also when the
 * buffers are full (they have a reserve of their own). */
void prof_step(void);

/* A sample of a memory series, e.g. "gpu.allocated", in bytes. */
void prof_memory(const char *series, uint64_t bytes);

/* A sample of a named numeric series (loss, learning rate, queue depth). */
void prof_counter(const char *name, double value);

/* An instant event. */
void prof_mark(const char *name);

/* Names the calling thread in the profile (copied). */
void prof_thread_name(const char *name);

/* Says what the regions called name time: the class of their code, e.g.
 * "torch.nn.Linear" for a PyTorch module's "head.1.forward" and
 * "head.1.backward", so that the analysis can advise by what an operation
 * is. Both strings are copied. Works before prof_start too: classes are
 * kept for the life of the process and written into every profile
 * recorded after the call (format 1.1 name attributes). A later call for
 * the same name replaces its class. Takes a lock: call it once per name,
 * outside loops. At most 65,536 changes per process are kept. */
void prof_name_class(const char *name, const char *cls);

/* The fast path: intern a name once, record by id. Ids are valid for the
 * life of the process, also across prof_stop and a later prof_start.
 * prof_intern takes a lock; call it outside loops. Returns 0 (an invalid
 * id) when out of memory. prof_region_begin_id with an id prof_intern
 * never returned (0 included) records nothing and counts one dropped
 * event; its prof_region_end still matches it. */
typedef uint32_t prof_name;
prof_name prof_intern(const char *name);
void prof_region_begin_id(prof_name id, prof_kind k);

/* Internal helpers of PROF_SCOPE; not for direct use. */
void prof__scope_end(int *unused);
static inline void prof__scope_begin(prof_name *site, const char *name)
{
    /* acquire/release: a thread that sees the id also sees it interned */
    prof_name id = __atomic_load_n(site, __ATOMIC_ACQUIRE);
    if (__builtin_expect(id == 0, 0)) {
        id = prof_intern(name);
        __atomic_store_n(site, id, __ATOMIC_RELEASE);
    }
    prof_region_begin_id(id, PROF_KIND_COMPUTE);
}

#define PROF__CAT2(a, b) a##b
#define PROF__CAT(a, b) PROF__CAT2(a, b)

/* PROF_SCOPE(name): a region from here to the end of the enclosing block,
 * closed by the compiler's cleanup attribute on every exit path. The name
 * is interned once per call site (two threads racing on the first use both
 * intern it, which is harmless: interning is idempotent). GCC and Clang. */
#define PROF_SCOPE(name)                                                        \
    static prof_name PROF__CAT(prof__site_, __LINE__);                          \
    prof__scope_begin(&PROF__CAT(prof__site_, __LINE__), (name));               \
    int PROF__CAT(prof__scope_, __LINE__)                                       \
        __attribute__((cleanup(prof__scope_end), unused)) = 0

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PROF_H */
