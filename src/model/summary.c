/* summary.c - the census behind `prof info`: one pass over the event
 * stream, memory bounded by the number of threads. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "model/summary.h"
#include "util/error.h"
#include "util/vec.h"

static summary_thread *thread_slot(profile_summary *s, uint32_t index)
{
    for (uint32_t i = 0; i < s->nthreads; i++)
        if (s->threads[i].index == index)
            return &s->threads[i];
    if (vec_grow(&s->threads, &s->cap_threads, s->nthreads, sizeof *s->threads) < 0)
        return NULL;
    summary_thread *t = &s->threads[s->nthreads++];
    memset(t, 0, sizeof *t);
    t->index = index;
    return t;
}

static prof_err summary_add(profile_summary *s, const prof_event *ev)
{
    if (ev->type == PROF_EV_THREAD) {
        summary_thread *t = thread_slot(s, ev->thread);
        char *name = strdup(ev->name);
        if (!t || !name) {
            free(name);
            return PROF_ERR_NOMEM;
        }
        free(t->name);
        t->name = name;
        t->os_tid = ev->value;
        return PROF_OK;
    }
    if (ev->type == PROF_EV_ATTR) { /* a definition, not an event */
        s->counts[ev->type]++;
        return PROF_OK;
    }
    if ((size_t)ev->type >= sizeof s->counts / sizeof s->counts[0])
        return PROF_OK; /* a type this build does not know */
    s->counts[ev->type]++;
    s->events++;
    if (ev->type == PROF_EV_STEP && (ev->flags & PROF_STEP_INCOMPLETE))
        s->incomplete_steps++;
    if (ev->start_ns < s->first_ns)
        s->first_ns = ev->start_ns;
    if (ev->start_ns + ev->dur_ns > s->last_ns)
        s->last_ns = ev->start_ns + ev->dur_ns;
    if (ev->thread == PROF_THREAD_GPU) {
        s->gpu_events++;
        return PROF_OK;
    }
    summary_thread *t = thread_slot(s, ev->thread);
    if (!t)
        return PROF_ERR_NOMEM;
    t->events++;
    return PROF_OK;
}

prof_err profile_summary_read(const char *path, const prof_tuning *t, profile_summary *out,
                              prof_error *err)
{
    prof_reader *r;
    prof_event ev;
    int rc;
    memset(out, 0, sizeof *out);
    out->first_ns = UINT64_MAX;
    prof_err e = prof_reader_open(path, &r, err);
    if (e)
        return e;
    pf_reader_tune(r, t);
    prof_reader_version(r, &out->major, &out->minor);
    if (!(out->metadata = strdup(prof_reader_metadata(r)))) {
        prof_reader_close(r);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    while ((rc = prof_reader_next(r, &ev)) == 1)
        if ((e = summary_add(out, &ev)) != PROF_OK) {
            prof_reader_close(r);
            return prof_error_set(err, e, "out of memory");
        }
    if (rc < 0) {
        if (err)
            *err = *prof_reader_error(r);
        e = prof_reader_error(r)->code;
    }
    prof_reader_status(r, &out->status);
    if (out->first_ns == UINT64_MAX)
        out->first_ns = 0;
    prof_reader_close(r);
    return e;
}

void profile_summary_free(profile_summary *s)
{
    for (uint32_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].name);
    free(s->threads);
    free(s->metadata);
    memset(s, 0, sizeof *s);
}
