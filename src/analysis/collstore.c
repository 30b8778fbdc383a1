/* collstore.c - where the ranks' collectives wait for the cross-rank
 * match (ranks.h). A rank's collectives are the one part of its summary
 * that grows with the run (a few per step, up to MODEL_COLLECTIVES_MAX of
 * each kind): a thousand ranks of them would make memory grow with the
 * ranks again. They go to an unlinked temporary file instead, written once
 * per rank (from any thread) and read back in order, a chunk per rank, as
 * straggler.c matches the n-th of every rank; or, where the models are in
 * memory anyway (report_build of loaded ranks), to memory. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ranks.h"
#include "util/error.h"
#include "util/vec.h"

struct collective_store {
    int fd;                    /* the temporary file; -1: in memory       */
    atomic_uint_least64_t end; /* records written or reserved             */
    pthread_mutex_t lock;      /* memory: guards mem and cap              */
    model_collective *mem;
    size_t cap;
    atomic_int error;          /* the errno of the first failed I/O, or 0 */
};

collective_store *collective_store_open(int fd)
{
    collective_store *s = calloc(1, sizeof *s);
    if (!s) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    s->fd = fd;
    atomic_init(&s->end, 0);
    atomic_init(&s->error, 0);
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void collective_store_close(collective_store *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    pthread_mutex_destroy(&s->lock);
    free(s->mem);
    free(s);
}

int collective_store_error(const collective_store *s)
{
    return atomic_load(&((collective_store *)s)->error);
}

static int fail(collective_store *s, int e)
{
    int none = 0;
    atomic_compare_exchange_strong(&s->error, &none, e ? e : EIO);
    return -1;
}

static int store_write(collective_store *s, uint64_t at, const model_collective *v, size_t n)
{
    if (s->fd < 0) {
        pthread_mutex_lock(&s->lock);
        int rc = vec_grow(&s->mem, &s->cap, (size_t)(at + n), sizeof *v);
        if (rc == 0 && n)
            memcpy(&s->mem[at], v, n * sizeof *v);
        pthread_mutex_unlock(&s->lock);
        return rc == 0 ? 0 : fail(s, ENOMEM);
    }
    const char *p = (const char *)v;
    size_t left = n * sizeof *v;
    off_t off = (off_t)(at * sizeof *v);
    while (left) {
        ssize_t w = pwrite(s->fd, p, left, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return fail(s, w < 0 ? errno : ENOSPC);
        p += w;
        off += w;
        left -= (size_t)w;
    }
    return 0;
}

static int store_read(const collective_store *cs, uint64_t at, model_collective *v, size_t n)
{
    collective_store *s = (collective_store *)cs;
    if (s->fd < 0) {
        memcpy(v, &s->mem[at], n * sizeof *v);
        return 0;
    }
    char *p = (char *)v;
    size_t left = n * sizeof *v;
    off_t off = (off_t)(at * sizeof *v);
    while (left) {
        ssize_t r = pread(s->fd, p, left, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return fail(s, r < 0 ? errno : EIO);
        p += r;
        off += r;
        left -= (size_t)r;
    }
    return 0;
}

static int run_cmp(const void *pa, const void *pb)
{
    const collective_run *a = pa, *b = pb;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* The runs of one device and stream of v (sorted by device, stream,
 * start), ordered by their first start. */
static int list_runs(collective_list *l, const model_collective *v, size_t n)
{
    size_t cap = 0;
    l->runs = NULL;
    l->nruns = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && v[i].device == v[i - 1].device && v[i].stream == v[i - 1].stream) {
            l->runs[l->nruns - 1].n++;
            continue;
        }
        if (vec_grow_small(&l->runs, &cap, l->nruns, sizeof *l->runs) < 0)
            return -1;
        l->runs[l->nruns++] = (collective_run){ i, 1, v[i].start_ns };
    }
    if (l->nruns > 1)
        qsort(l->runs, l->nruns, sizeof *l->runs, run_cmp);
    return 0;
}

prof_err collective_list_store(collective_store *s, const model_collective *v, size_t n,
                               collective_list *out, prof_error *err)
{
    memset(out, 0, sizeof *out);
    if (list_runs(out, v, n) != 0)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    out->n = n;
    out->at = atomic_fetch_add(&s->end, (uint_least64_t)n);
    if (store_write(s, out->at, v, n) != 0) {
        int e = collective_store_error(s);
        collective_list_free(out);
        if (e == ENOMEM)
            return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
        return prof_error_set(err, PROF_ERR_IO, "cannot write the collectives to a temporary "
                              "file: %s", strerror(e));
    }
    return PROF_OK;
}

void collective_list_free(collective_list *l)
{
    free(l->runs);
    memset(l, 0, sizeof *l);
}

void collective_cursor_init(collective_cursor *c, const collective_store *s, uint64_t first,
                            size_t count)
{
    c->store = s;
    c->next = first;
    c->left = count;
    c->at = c->n = 0;
}

const model_collective *collective_cursor_next(collective_cursor *c)
{
    if (c->at == c->n) {
        size_t want = c->left < COLLECTIVE_CHUNK ? c->left : COLLECTIVE_CHUNK;
        if (want == 0 || store_read(c->store, c->next, c->buf, want) != 0)
            return NULL;
        c->next += want;
        c->left -= want;
        c->at = 0;
        c->n = want;
    }
    return &c->buf[c->at++];
}
