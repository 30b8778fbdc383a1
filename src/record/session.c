/* session.c - the life of a recording: prof_start (configuration, clock,
 * output file, buffers, writer thread, signal handlers), prof_stop (last
 * step, final drain, footer) and prof_flush. Also holds rt, the runtime's
 * one global object; what outlives a session (the string table, the
 * message handler, CUPTI's state) is kept by its own file. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/runtime.h"

_Atomic unsigned rt_state;

rt_runtime rt = {
    .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
    .reg_mu = PTHREAD_MUTEX_INITIALIZER,
    .flush_mu = PTHREAD_MUTEX_INITIALIZER,
    .flush_cv = PTHREAD_COND_INITIALIZER,
    .fd = -1,
    .statm_fd = -1,
};

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static int session_stop(int exiting);

/* A program that never calls prof_stop (or the preloaded library) still
 * gets its footer: exit runs it. */
static void at_exit(void)
{
    session_stop(1);
}

static void register_exit(void)
{
    atexit(at_exit);
}

/* Writes the header with SIGXFSZ blocked, and discards a SIGXFSZ the write
 * raised: a file size limit must fail the start, not kill the program. */
static prof_err header_write(int fd, const char *meta, int *err)
{
    sigset_t xfsz, old, pend;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    int was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ) == 1;
    errno = 0;
    prof_err e = pf_writer_open_fd(&rt.w, fd, meta, 3, NULL);
    *err = errno;
    if (!was_pending) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* Whether PROF_AUTOSTART_PID names another process: then the name in
 * PROF_OUTPUT is that process's (the one `prof record` or the preloaded
 * libprof started), and this one, its child, records under a name of its
 * own even when the parent has already finished writing. */
static int output_claimed_elsewhere(void)
{
    const char *pid = getenv("PROF_AUTOSTART_PID");
    return pid && *pid && strtol(pid, NULL, 10) != (long)getpid();
}

/* Opens (and claims) the output, then writes the header; the metadata
 * names the file actually written. from_env: the name came from
 * PROF_OUTPUT or the default, not from the caller. */
static int output_open(rt_config *c, int from_env)
{
    char *alt;
    int fd = rt_output_open(c->output, from_env && output_claimed_elsewhere(), &alt);
    if (fd < 0)
        return fd;
    if (alt) {
        rt_report(PROF_MSG_WARNING, "recording into '%s': '%s' is another recorder's", alt,
                  c->output);
        free(c->output);
        c->output = alt;
    }
    char *meta = rt_metadata(c, &rt.clock);
    if (!meta) {
        close(fd);
        return -ENOMEM;
    }
    int err;
    prof_err pe = header_write(fd, meta, &err); /* closes fd on failure */
    free(meta);
    if (pe != PROF_OK)
        return pe == PROF_ERR_NOMEM ? -ENOMEM : -(err ? err : EIO);
    rt.fd = fd;
    return 0;
}

static void session_reset_counters(void)
{
    rt.session++;
    atomic_store_explicit(&rt.step_no, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.step_t0, rt.clock.origin, memory_order_relaxed);
    atomic_store_explicit(&rt.failed, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.crashed, 0, memory_order_relaxed);
    atomic_store_explicit(&rt.io, 0, memory_order_relaxed);
    rt.err = 0;
    rt.wstrings = 0;
    rt.wattrs = 0;
    rt.wlist = NULL;
    rt.sampler_index = UINT32_MAX;
    rt.nthreads = 0;
}

/* What a stop at exit left in place, when something starts again later
 * in the exit sequence. */
static void release_leftovers(void)
{
    if (!rt.pool.mem)
        return;
    rt_threads_reset();
    rt_crash_free();
    rt_pool_free(&rt.pool);
}

static int session_open(const prof_config *cfg)
{
    rt_config c;
    int e = rt_config_resolve(cfg, &c);
    if (e)
        return e;
    release_leftovers();
    rt_clock_init(&rt.clock);
    if ((e = output_open(&c, !cfg || !cfg->output)) != 0)
        goto fail_cfg;
    if ((e = rt_pool_init(&rt.pool, c.buffer_bytes)) != 0)
        goto fail_writer;
    if ((e = rt_crash_alloc()) != 0)
        goto fail_pool;
    if (!(rt.rss_id = prof_intern("host.rss"))) {
        e = -ENOMEM;
        goto fail_crash;
    }
    rt.cfg = c;
    session_reset_counters();
    rt.statm_fd = rt_rss_open();
    if ((e = rt_writer_start()) != 0)
        goto fail_statm;
    rt_gpu_start(&rt.cfg); /* the metadata already says whether it can */
    rt_signals_install();
    rt_fork_handlers_once();
    pthread_once(&exit_once, register_exit);
    rt.running = 1;
    atomic_store_explicit(&rt.crash_armed, 1, memory_order_release);
    unsigned s = RT_ON | (rt_step_sampled(&rt.cfg, 0) ? RT_SAMPLED : 0u);
    atomic_store_explicit(&rt_state, s, memory_order_release);
    return 0;
fail_statm:
    if (rt.statm_fd >= 0)
        close(rt.statm_fd);
    rt.statm_fd = -1;
    memset(&rt.cfg, 0, sizeof rt.cfg);
fail_crash:
    rt_crash_free();
fail_pool:
    rt_pool_free(&rt.pool);
fail_writer:
    pf_writer_abandon(rt.w);
    rt.w = NULL;
    rt.fd = -1;
fail_cfg:
    rt_config_free(&c);
    return e;
}

int prof_start(const prof_config *cfg)
{
    pthread_mutex_lock(&rt.ctl_mu);
    int e = rt.running ? -EALREADY : session_open(cfg);
    pthread_mutex_unlock(&rt.ctl_mu);
    return e;
}

/* exiting: called from exit, where other threads may still be inside a
 * recording call; their buffers and states are then left in place (the
 * process is ending) instead of being freed under them. */
static int session_close(int exiting)
{
    if (atomic_load_explicit(&rt_state, memory_order_acquire) & RT_ON)
        rt_step_close_last();
    atomic_store_explicit(&rt_state, 0, memory_order_release);
    atomic_store_explicit(&rt.crash_armed, 0, memory_order_release);
    rt_signals_restore();
    rt_gpu_stop();
    int e = rt_writer_stop(); /* drains every buffer, writes the footer */
    if (!exiting) {
        rt_threads_reset();
        rt_crash_free();
        rt_pool_free(&rt.pool);
    }
    if (rt.statm_fd >= 0)
        close(rt.statm_fd);
    rt.statm_fd = -1;
    rt.fd = -1;
    rt_config_free(&rt.cfg);
    rt.running = 0;
    return e;
}

static int session_stop(int exiting)
{
    pthread_mutex_lock(&rt.ctl_mu);
    int e = rt.running ? session_close(exiting) : 0;
    pthread_mutex_unlock(&rt.ctl_mu);
    return e;
}

int prof_stop(void)
{
    return session_stop(0);
}

void prof_flush(void)
{
    if (__builtin_expect(!(atomic_load_explicit(&rt_state, memory_order_acquire) & RT_ON), 0))
        return;
    rt_writer_flush();
}
