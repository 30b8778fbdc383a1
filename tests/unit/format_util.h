/* format_util.h - helpers shared by the codec, model and output unit tests:
 * a private temporary directory, whole-file load and store, and reading a
 * profile back into an event list (names copied, so the list outlives the
 * reader) for comparison. Header-only so that each test stays one program. */
#ifndef PROF_TESTS_FORMAT_UTIL_H
#define PROF_TESTS_FORMAT_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "format/reader_int.h" /* fu_reader_helped: the tests of the reader read its state */
#include "prof_reader.h"

static char fu_dir[64];

/* A path inside this test process's own temporary directory. */
static inline const char *fu_path(const char *name)
{
    static char buf[8][256];
    static int next;
    if (!fu_dir[0]) {
        strcpy(fu_dir, "/tmp/prof-fmt-test-XXXXXX");
        cr_assert_not_null(mkdtemp(fu_dir), "mkdtemp failed");
    }
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", fu_dir, name);
    return p;
}

/* Removes the temporary directory and the files the test left in it. */
static inline void fu_dir_remove(void)
{
    DIR *d;
    struct dirent *e;
    char p[512];
    if (!fu_dir[0] || !(d = opendir(fu_dir)))
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", fu_dir, e->d_name);
        if (rmdir(p) != 0)
            unlink(p);
    }
    closedir(d);
    rmdir(fu_dir);
    fu_dir[0] = '\0';
}

/* The whole file, malloc'd; *size its length. */
/* Where a writer's next block goes: the size of its file, as it writes
 * each block whole at the end. */
static inline uint64_t fu_writer_offset(const pf_writer *w)
{
    struct stat st;
    cr_assert_eq(fstat(pf_writer_fd(w), &st), 0);
    return (uint64_t)st.st_size;
}

static inline uint8_t *fu_load(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1); /* +1: never malloc(0) */
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n, "short read of %s", path);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static inline void fu_store(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, size, f), size);
    cr_assert_eq(fclose(f), 0);
}

/* One event as read, with its name copied out of the reader. */
typedef struct fu_event {
    prof_event ev;
    char *name;
} fu_event;

typedef struct fu_list {
    fu_event *v;
    size_t n, cap;
    int rc;                /* the last prof_reader_next() result: 0 or -1  */
    prof_read_status st;
    prof_error err;        /* the reader's error when rc is -1             */
    char *meta;
    unsigned major, minor;
} fu_list;

static inline void fu_push(fu_list *l, const prof_event *ev, const char *name)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        cr_assert_not_null(l->v);
    }
    l->v[l->n].ev = *ev;
    l->v[l->n].name = strdup(name ? name : "");
    cr_assert_not_null(l->v[l->n].name);
    l->v[l->n].ev.name = NULL; /* compare by the copy */
    l->n++;
}

static inline void fu_free(fu_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    free(l->meta);
    memset(l, 0, sizeof *l);
}

/* l, empty but for what r tells before reading. */
static inline void fu_begin(prof_reader *r, fu_list *l)
{
    memset(l, 0, sizeof *l);
    l->meta = strdup(prof_reader_metadata(r));
    prof_reader_version(r, &l->major, &l->minor);
}

/* Keeps the end of reading (rc, status, error) in l, checks they agree,
 * and closes r. again: what asking once more after the end gave. */
static inline void fu_end(prof_reader *r, fu_list *l, int rc, int again)
{
    cr_assert(rc == 0 || rc == -1, "the reader returned %d", rc);
    l->rc = rc;
    cr_assert_eq(again, rc, "second call after the end differs"); /* the end is sticky */
    prof_reader_status(r, &l->st);
    l->err = *prof_reader_error(r);
    if (rc < 0)
        cr_assert_neq(l->err.code, PROF_OK, "-1 without an error code");
    else
        cr_assert_eq(l->err.code, PROF_OK, "0 with error %d: %s", l->err.code, l->err.message);
    prof_reader_close(r);
}

/* Reads every event of an open reader into l and closes it. */
static inline void fu_drain(prof_reader *r, fu_list *l)
{
    prof_event ev;
    int rc;
    size_t guard = 0;
    fu_begin(r, l);
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        cr_assert_not_null(ev.name, "event %zu has a NULL name", l->n);
        fu_push(l, &ev, ev.name);
        cr_assert_lt(++guard, (size_t)100000000, "reader does not stop");
    }
    fu_end(r, l, rc, prof_reader_next(r, &ev));
}

/* As fu_drain, through prof_reader_next_batch(), with a prof_reader_next()
 * after every third batch: both must hand out the same events, status
 * and errors. */
static inline void fu_drain_batch(prof_reader *r, fu_list *l)
{
    const prof_event *evs;
    prof_event ev;
    size_t n, calls = 0;
    int rc;
    fu_begin(r, l);
    for (;;) {
        if (++calls % 4 == 0) {
            if ((rc = prof_reader_next(r, &ev)) != 1)
                break;
            fu_push(l, &ev, ev.name);
            continue;
        }
        if ((rc = prof_reader_next_batch(r, &evs, &n)) != 1)
            break;
        cr_assert_gt(n, 0u, "a batch of no events");
        for (size_t i = 0; i < n; i++) {
            cr_assert_not_null(evs[i].name, "event %zu has a NULL name", l->n);
            fu_push(l, &evs[i], evs[i].name);
        }
        cr_assert_lt(calls, (size_t)100000000, "reader does not stop");
    }
    fu_end(r, l, rc, prof_reader_next_batch(r, &evs, &n));
}

/* Opens bytes in memory and reads them all, through fu_drain_batch, so
 * that every test comparing a file's events with the same bytes' from
 * memory also compares the batch and the one-event calls. Returns the
 * open result. */
static inline prof_err fu_read_mem(const void *data, size_t size, fu_list *l, prof_error *err)
{
    prof_reader *r = NULL;
    memset(l, 0, sizeof *l);
    prof_err e = prof_reader_open_memory(data, size, &r, err);
    if (e != PROF_OK) {
        cr_assert_null(r, "reader handed out on error %d", e);
        return e;
    }
    cr_assert_not_null(r);
    fu_drain_batch(r, l);
    return PROF_OK;
}

static inline prof_err fu_read_path(const char *path, fu_list *l, prof_error *err)
{
    prof_reader *r = NULL;
    memset(l, 0, sizeof *l);
    prof_err e = prof_reader_open(path, &r, err);
    if (e != PROF_OK) {
        cr_assert_null(r, "reader handed out on error %d", e);
        return e;
    }
    cr_assert_not_null(r);
    fu_drain(r, l);
    return PROF_OK;
}

/* How many blocks r's thread took from the caller (reader_prefetch.c,
 * pf_help), once reading has ended. */
static inline uint64_t fu_reader_helped(const prof_reader *r)
{
    return r->helped;
}

/* ---- the slim hand-over (pf_reader_set_slim_fn) ---------------------------- */

/* What fu_slim_tag keeps on the producing side: each name by id, copied
 * for the regions handed over slim, whose names are filled in once
 * reading has ended (the producing thread has stopped by then). */
typedef struct fu_slim_names {
    char **v;
    size_t cap;
    size_t events;  /* seen by the function */
    size_t entries; /* seen by fu_slim_seen: slim and whole */
    size_t whole;   /* of which whole, their names checked  */
    int nomem, bad; /* bad: a whole event without a name    */
    uint64_t helped; /* blocks the reader's thread took from
                        the caller (fu_reader_helped)        */
} fu_slim_names;

/* Tags regions with their name id and kind (FU_SLIM_TAG), but hands the
 * names that begin with 'b' over whole (FU_SLIM_WHOLE), and tags other events
 * too, which the reader hands over whole all the same. A tag holds for a
 * name and kind: the kind in it shows the reader keeps them apart. Asserts
 * nothing: it may run on the reader's thread. */
#define FU_SLIM_TAG(id, kind) ((id) | (uint32_t)(kind) << 24)
#define FU_SLIM_WHOLE(name) ((name) && (name)[0] == 'b')
static inline void fu_slim_tag(void *arg, const prof_event *ev, size_t n, uint32_t *tags)
{
    fu_slim_names *t = arg;
    t->events += n;
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ev[k].name_id;
        tags[k] = FU_SLIM_WHOLE(ev[k].name) || id >= 1u << 24 ? PF_SLIM_WHOLE
                                                               : FU_SLIM_TAG(id, ev[k].kind & 0x7f);
        if (t->nomem || ev[k].type != PROF_EV_REGION) /* (a thread's name has id 0) */
            continue;
        if (id >= t->cap) {
            size_t cap = (size_t)id * 2 + 16;
            char **v = realloc(t->v, cap * sizeof *v);
            if (!v) {
                t->nomem = 1;
                continue;
            }
            memset(v + t->cap, 0, (cap - t->cap) * sizeof *v);
            t->v = v;
            t->cap = cap;
        }
        if (!t->v[id] && !(t->v[id] = strdup(ev[k].name ? ev[k].name : "")))
            t->nomem = 1;
    }
}

/* The second function: counts what it is shown (pf_slim_batch.seen says
 * which batches those are). */
static inline void fu_slim_seen(void *arg, const pf_slim *v, size_t n, const prof_event *whole)
{
    fu_slim_names *t = arg;
    t->entries += n;
    for (size_t k = 0; k < n; k++)
        if (v[k].tag == PF_SLIM_WHOLE) {
            t->bad |= whole->name == NULL;
            whole++;
            t->whole++;
        }
}

static inline void fu_slim_names_free(fu_slim_names *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->v[i]);
    free(t->v);
}

/* As fu_drain, through pf_reader_next_slim, which r was set up for with
 * fu_slim_tag over names: slim regions become region events again. Also
 * counts the entries that came slim in *nslim. */
static inline void fu_drain_slim(prof_reader *r, fu_list *l, fu_slim_names *names, size_t *nslim)
{
    pf_slim_batch b;
    int rc;
    size_t calls = 0, seen = 0, seen_whole = 0; /* handed out in seen batches */
    unsigned char *slim = NULL; /* by event: came slim */
    size_t cap_slim = 0;
    *nslim = 0;
    fu_begin(r, l);
    while ((rc = pf_reader_next_slim(r, &b)) == 1) {
        cr_assert_gt(b.count, 0u, "a slim batch of no events");
        const prof_event *whole = b.whole;
        if (b.seen) {
            seen += b.count;
            for (size_t i = 0; i < b.count; i++)
                seen_whole += b.slim[i].tag == PF_SLIM_WHOLE;
        }
        for (size_t i = 0; i < b.count; i++) {
            const pf_slim *e = &b.slim[i];
            if (e->tag == PF_SLIM_WHOLE) {
                cr_assert_not_null(whole->name, "event %zu has a NULL name", l->n);
                fu_push(l, whole, whole->name);
                whole++;
            } else {
                prof_event ev = { .type = PROF_EV_REGION, .thread = b.thread,
                                  .start_ns = e->start_ns, .dur_ns = e->dur_ns,
                                  .name_id = e->tag & 0xffffffu, .kind = pf_slim_kind(e),
                                  .depth = pf_slim_depth(e) };
                cr_assert_eq(e->tag, FU_SLIM_TAG(ev.name_id, ev.kind & 0x7f),
                             "event %zu: tagged for another kind", l->n);
                fu_push(l, &ev, "");
                (*nslim)++;
            }
            if (l->n > cap_slim) {
                cap_slim = l->cap;
                slim = realloc(slim, cap_slim);
                cr_assert_not_null(slim);
            }
            slim[l->n - 1] = e->tag != PF_SLIM_WHOLE;
        }
        cr_assert_lt(++calls, (size_t)100000000, "reader does not stop");
    }
    names->helped += fu_reader_helped(r); /* reading has ended */
    fu_end(r, l, rc, pf_reader_next_slim(r, &b)); /* closes r: its thread has ended */
    cr_assert_not(names->nomem);
    cr_assert_not(names->bad, "the second function was shown a whole event without a name");
    if (rc == 0) { /* it was shown the seen batches' events, and nothing else */
        cr_assert_eq(names->entries, seen, "shown %zu, handed out %zu as seen", names->entries,
                     seen);
        cr_assert_eq(names->whole, seen_whole);
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!slim[i])
            continue;
        uint32_t id = l->v[i].ev.name_id;
        cr_assert(id < names->cap && names->v[id], "slim region %zu: name %u never seen", i, id);
        free(l->v[i].name);
        l->v[i].name = strdup(names->v[id]);
        cr_assert_not_null(l->v[i].name);
    }
    free(slim);
}

/* Opens bytes in memory and reads them all slim, as fu_read_mem. */
static inline prof_err fu_read_mem_slim(const void *data, size_t size, fu_list *l,
                                        prof_error *err)
{
    prof_reader *r = NULL;
    fu_slim_names names = { 0 };
    size_t nslim;
    memset(l, 0, sizeof *l);
    prof_err e = prof_reader_open_memory(data, size, &r, err);
    if (e != PROF_OK)
        return e;
    cr_assert_eq(pf_reader_set_slim_fn(r, fu_slim_tag, fu_slim_seen, &names), 0);
    fu_drain_slim(r, l, &names, &nslim);
    fu_slim_names_free(&names);
    return PROF_OK;
}

/* Field-by-field equality; counters compare by bits so NaN payloads and
 * -0.0 count. Returns 1 when equal. */
static inline int fu_event_equal(const prof_event *a, const char *an, const prof_event *b,
                                 const char *bn)
{
    return a->type == b->type && a->thread == b->thread && a->start_ns == b->start_ns &&
           a->dur_ns == b->dur_ns && a->name_id == b->name_id && a->kind == b->kind &&
           a->depth == b->depth && a->subkind == b->subkind && a->flags == b->flags &&
           a->device == b->device && a->stream == b->stream &&
           a->correlation == b->correlation && a->value == b->value &&
           memcmp(&a->fvalue, &b->fvalue, sizeof a->fvalue) == 0 && strcmp(an, bn) == 0;
}

static inline void fu_event_describe(char *buf, size_t n, const fu_event *e)
{
    snprintf(buf, n,
             "{type %d thread %u start %llu dur %llu name '%.40s' id %u kind %u depth %u "
             "sub %u flags %u dev %u stream %u corr %llu value %llu}",
             (int)e->ev.type, e->ev.thread, (unsigned long long)e->ev.start_ns,
             (unsigned long long)e->ev.dur_ns, e->name, e->ev.name_id, e->ev.kind, e->ev.depth,
             e->ev.subkind, e->ev.flags, e->ev.device, e->ev.stream,
             (unsigned long long)e->ev.correlation, (unsigned long long)e->ev.value);
}

/* Asserts that got[0..n) equals want[0..n). */
static inline void fu_assert_prefix(const fu_list *got, const fu_list *want, const char *what)
{
    cr_assert_leq(got->n, want->n, "%s: %zu events, more than the %zu of the full file", what,
                  got->n, want->n);
    for (size_t i = 0; i < got->n; i++) {
        if (!fu_event_equal(&got->v[i].ev, got->v[i].name, &want->v[i].ev, want->v[i].name)) {
            char a[320], b[320];
            fu_event_describe(a, sizeof a, &got->v[i]);
            fu_event_describe(b, sizeof b, &want->v[i]);
            cr_assert_fail("%s: event %zu differs:\n got  %s\n want %s", what, i, a, b);
        }
    }
}

static inline void fu_assert_same(const fu_list *got, const fu_list *want, const char *what)
{
    cr_assert_eq(got->n, want->n, "%s: %zu events, want %zu", what, got->n, want->n);
    fu_assert_prefix(got, want, what);
}

/* Two reads of the same bytes agree: events, end, status and error. */
static inline void fu_assert_same_read(const fu_list *got, const fu_list *want, const char *what)
{
    fu_assert_same(got, want, what);
    cr_assert_eq(got->rc, want->rc, "%s: ended with %d, want %d", what, got->rc, want->rc);
    cr_assert_eq(got->err.code, want->err.code, "%s: error %d, want %d", what, got->err.code,
                 want->err.code);
    cr_assert_str_eq(got->err.message, want->err.message, "%s", what);
    const prof_read_status *a = &got->st, *b = &want->st;
    cr_assert(a->clean == b->clean && a->truncated == b->truncated && a->blocks == b->blocks &&
                  a->events == b->events && a->bytes_read == b->bytes_read &&
                  a->bytes_lost == b->bytes_lost && a->file_size == b->file_size &&
                  a->dropped_events == b->dropped_events,
              "%s: the status differs", what);
    cr_assert_str_eq(a->detail, b->detail, "%s", what);
}

#endif
