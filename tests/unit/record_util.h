/* record_util.h - helpers shared by the recorder's unit tests: a private
 * temporary directory, a clean PROF_* environment, and reading a profile
 * back through the public reader (all events, or streamed to a callback
 * for the big ones). Header-only so that each test stays one program. */
#ifndef PROF_TESTS_RECORD_UTIL_H
#define PROF_TESTS_RECORD_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof.h"
#include "prof_reader.h"

static char rt_test_dir[64];

/* A path inside this test process's own temporary directory. */
static inline const char *test_path(const char *name)
{
    static char buf[8][256];
    static int next;
    if (!rt_test_dir[0]) {
        strcpy(rt_test_dir, "/tmp/prof-test-XXXXXX");
        cr_assert_not_null(mkdtemp(rt_test_dir));
    }
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", rt_test_dir, name);
    return p;
}

/* Removes the temporary directory and what the test left in it. */
static inline void test_dir_remove(void)
{
    DIR *d;
    struct dirent *e;
    char p[512];
    if (!rt_test_dir[0] || !(d = opendir(rt_test_dir)))
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", rt_test_dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
    rmdir(rt_test_dir);
    rt_test_dir[0] = '\0';
}

static inline void clean_env(void)
{
    static const char *const vars[] = {
        "PROF_OUTPUT", "PROF_ENABLE", "PROF_SAMPLE_RATE", "PROF_SCHEDULE",
        "PROF_MEMORY_INTERVAL_MS", "PROF_BUFFER_MB", "PROF_FLUSH_MS", "PROF_CUDA",
        "PROF_RANK", "RANK", "WORLD_SIZE", "LOCAL_RANK", "PROF_TAGS", "PROF_AUTOSTART_PID"
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static inline int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

typedef struct rb_event {
    prof_event ev;
    char name[64];
} rb_event;

typedef struct readback {
    rb_event *ev;
    size_t n, cap;
    prof_read_status st;
    char *meta;
    char thread_names[16][64];
} readback;

typedef void (*rb_fn)(const prof_event *ev, void *ctx);

/* Streams every event of path to fn. Returns the reader's last next()
 * result (0 at a clean end). */
static inline int readback_scan(const char *path, rb_fn fn, void *ctx, prof_read_status *st,
                                char **meta)
{
    prof_reader *r;
    prof_error err;
    prof_event ev;
    int rc;
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "open %s: %s", path, err.message);
    if (meta)
        *meta = strdup(prof_reader_metadata(r));
    while ((rc = prof_reader_next(r, &ev)) == 1)
        fn(&ev, ctx);
    if (st)
        prof_reader_status(r, st);
    prof_reader_close(r);
    return rc;
}

static inline void rb_keep(const prof_event *ev, void *ctx)
{
    readback *rb = ctx;
    if (rb->n == rb->cap) {
        rb->cap = rb->cap ? rb->cap * 2 : 256;
        rb->ev = realloc(rb->ev, rb->cap * sizeof *rb->ev);
        cr_assert_not_null(rb->ev);
    }
    rb_event *e = &rb->ev[rb->n++];
    e->ev = *ev;
    snprintf(e->name, sizeof e->name, "%s", ev->name ? ev->name : "");
    e->ev.name = NULL;
    if (ev->type == PROF_EV_THREAD && ev->thread < 16)
        snprintf(rb->thread_names[ev->thread], 64, "%s", ev->name);
}

static inline void readback_load(const char *path, readback *rb)
{
    memset(rb, 0, sizeof *rb);
    int rc = readback_scan(path, rb_keep, rb, &rb->st, &rb->meta);
    cr_assert_eq(rc, 0, "reading %s failed", path);
}

static inline void readback_free(readback *rb)
{
    free(rb->ev);
    free(rb->meta);
    memset(rb, 0, sizeof *rb);
}

/* Events of a type, and with a name when name is not NULL. */
static inline size_t rb_count(const readback *rb, prof_event_type type, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < rb->n; i++)
        if (rb->ev[i].ev.type == type && (!name || strcmp(rb->ev[i].name, name) == 0))
            n++;
    return n;
}

static inline const rb_event *rb_find(const readback *rb, prof_event_type type, const char *name,
                                      size_t nth)
{
    for (size_t i = 0; i < rb->n; i++)
        if (rb->ev[i].ev.type == type && (!name || strcmp(rb->ev[i].name, name) == 0) &&
            nth-- == 0)
            return &rb->ev[i];
    return NULL;
}

#endif
