/* report.c - libprof's one voice. Every message the library has for the
 * program goes through rt_report: to the handler the program set with
 * prof_set_message_handler, else, by default, one line on stderr for an
 * error (writing the profile failed and recording stopped: the one line
 * DESIGN §3 allows), and for a warning only where libprof started itself
 * (preloaded, or injected by CUDA), since no caller sees prof_start's
 * result there. prof_start itself never prints.
 *
 * Messages are rare (a few per process at most), so one mutex guards the
 * handler and is held while it runs: calls are serialised, and once
 * prof_set_message_handler returns, the old handler is never called
 * again. The crash path never reports: neither this nor a program's
 * handler is async-signal-safe. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "record/runtime.h"

/* Room for a path of PATH_MAX bytes and the reason after it. */
#define REPORT_MAX 4352

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static prof_message_fn handler; /* report_mu; NULL: the default          */
static void *handler_arg;       /* report_mu                             */
static int loud;                /* report_mu; the default says warnings  */

void prof_set_message_handler(prof_message_fn fn, void *arg)
{
    pthread_mutex_lock(&report_mu);
    handler = fn;
    handler_arg = arg;
    pthread_mutex_unlock(&report_mu);
}

void rt_report_loud(void)
{
    pthread_mutex_lock(&report_mu);
    loud = 1;
    pthread_mutex_unlock(&report_mu);
}

void rt_report(prof_msg_level level, const char *fmt, ...)
{
    char msg[REPORT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&report_mu);
    if (handler)
        handler(level, msg, handler_arg);
    else if (level == PROF_MSG_ERROR || loud)
        fprintf(stderr, "prof: %s\n", msg);
    pthread_mutex_unlock(&report_mu);
}

/* fork: the lock is taken across it, so the child never inherits it held
 * by a thread that is not there. */
void rt_report_lock(void)
{
    pthread_mutex_lock(&report_mu);
}

void rt_report_unlock(void)
{
    pthread_mutex_unlock(&report_mu);
}
