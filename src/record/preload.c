/* preload.c - starts recording when libprof.so is preloaded into a program
 * that does not call the API (`prof record`, or LD_PRELOAD by hand).
 *
 * The constructor starts only when all of these hold:
 *  - PROF_OUTPUT is set (and PROF_ENABLE is not 0: prof_start checks it);
 *  - the code runs from a shared object named in LD_PRELOAD (dladdr of
 *    this very function), so a normal dependency on libprof.so never
 *    starts anything by surprise (libprof.a has no constructor at all);
 *  - PROF_AUTOSTART_PID is unset or equals this process's pid.
 * After starting it sets PROF_AUTOSTART_PID to its own pid: programs it
 * executes inherit LD_PRELOAD and PROF_OUTPUT, and must not truncate the
 * file being written (a forked child is already kept off it by the fork
 * handler). `prof record` may set PROF_AUTOSTART_PID to the pid it execs.
 * Recording stops at exit through the atexit handler prof_start installs.
 * Nobody sees prof_start's result here, so before starting it makes the
 * default message handler loud (report.c): a start that fails (a malformed
 * PROF_* variable, an output that cannot be written, is not a regular
 * file or is another user's planted link) is said in one line on stderr,
 * and so are CUDA capture that cannot be had and an output another
 * recorder holds (this one then writes its own file); PROF_ENABLE=0 is
 * not a failure. A program that sets its own handler later gets the
 * messages from then on.
 *
 * Built into libprof.so only (the Makefile's PRELOAD_SRC). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/runtime.h"
#include "util/planted.h"

static const char *base_name(const char *path, size_t len, size_t *blen)
{
    const char *b = path;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            b = path + i + 1;
    *blen = len - (size_t)(b - path);
    return b;
}

/* Whether the object holding this code is one of LD_PRELOAD's entries
 * (separated by ':' or spaces), compared by file name. */
static int preloaded(void)
{
    Dl_info info;
    const char *list = getenv("LD_PRELOAD");
    if (!list || !dladdr((void *)preloaded, &info) || !info.dli_fname)
        return 0;
    size_t self_len;
    const char *self = base_name(info.dli_fname, strlen(info.dli_fname), &self_len);
    while (*list) {
        size_t n = strcspn(list, ": ");
        size_t blen;
        const char *b = base_name(list, n, &blen);
        if (blen && blen == self_len && memcmp(b, self, blen) == 0)
            return 1;
        list += n;
        list += strspn(list, ": ");
    }
    return 0;
}

static int claimed_elsewhere(void)
{
    const char *pid = getenv("PROF_AUTOSTART_PID");
    return pid && *pid && strtol(pid, NULL, 10) != (long)getpid();
}

/* The one line for a start that failed with e: the variable that is
 * malformed, else the (expanded) output and the reason. */
static void report_failure(int e)
{
    rt_config c;
    const char *bad = NULL;
    int ce = rt_config_resolve_why(NULL, &c, &bad);
    if (ce == -ECANCELED)
        return;
    if (ce == -EINVAL && bad)
        rt_report(PROF_MSG_ERROR, "not recording: bad %s '%s' (see libprof(3))", bad, getenv(bad));
    else if (ce == 0 && e == -ENOTSUP) /* strerror's "Operation not supported" says less */
        rt_report(PROF_MSG_ERROR, "not recording: cannot write '%s': not a regular file", c.output);
    else if (ce == 0 && e == -ELOOP && path_planted_link(c.output))
        rt_report(PROF_MSG_ERROR, "not recording: cannot write '%s': a symbolic link of another "
                  "user's in a shared sticky directory; remove it or choose another name",
                  c.output);
    else if (ce == 0 && e == -EBUSY)
        rt_report(PROF_MSG_ERROR, "not recording: cannot write '%s': other recorders hold it "
                  "and every name of its own this process tried", c.output);
    else if (ce == 0 && e != -ENOMEM)
        rt_report(PROF_MSG_ERROR, "not recording: cannot write '%s': %s", c.output, strerror(-e));
    else
        rt_report(PROF_MSG_ERROR, "not recording: %s", strerror(-e));
    if (ce == 0)
        rt_config_free(&c);
}

__attribute__((constructor)) static void preload_start(void)
{
    const char *out = getenv("PROF_OUTPUT");
    if (!out || !*out || claimed_elsewhere() || !preloaded())
        return;
    rt_report_loud();
    int e = prof_start(NULL);
    if (e == 0) {
        char pid[24];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        setenv("PROF_AUTOSTART_PID", pid, 1);
    } else if (e != -ECANCELED) {
        report_failure(e);
    }
}
