/* synth.c - the deterministic profile writer of tests and fixtures (see
 * synth.h), built on the codec in src/format/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "synth.h"
#include "util/vec.h"

#define SYNTH_THREADS_MAX 64
#define SYNTH_GPU_SLOT SYNTH_THREADS_MAX

typedef struct name_entry {
    char *name;
    uint32_t id;
} name_entry;

struct synth {
    pf_writer *w;
    pf_block blocks[SYNTH_THREADS_MAX + 1]; /* one per thread, then the GPU's */
    int used[SYNTH_THREADS_MAX + 1];
    uint32_t per_block;
    name_entry *names;
    uint32_t nnames;
    size_t cap;
    prof_err err;
    prof_error detail;
};

static const char default_metadata[] =
    "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1700000000000000000},"
    "\"host\":\"synth\",\"pid\":1,\"argv\":[\"synth\"],\"rank\":0,\"world_size\":1,"
    "\"local_rank\":0,\"devices\":[],\"tags\":{}}";

synth *synth_open(const char *path, const char *metadata)
{
    synth *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (pf_writer_open(&s->w, path, metadata ? metadata : default_metadata, 3, &s->detail)) {
        free(s);
        return NULL;
    }
    s->per_block = 4096;
    for (uint32_t i = 0; i < SYNTH_THREADS_MAX; i++)
        pf_block_init(&s->blocks[i], PF_BLOCK_EVENTS, i);
    pf_block_init(&s->blocks[SYNTH_GPU_SLOT], PF_BLOCK_EVENTS, PF_THREAD_GPU);
    return s;
}

void synth_block_records(synth *s, uint32_t n)
{
    s->per_block = n ? n : 1;
}

static void synth_fail(synth *s, prof_err e)
{
    if (e && !s->err) {
        s->err = e;
        if (!s->detail.code) {
            s->detail.code = e;
            strcpy(s->detail.message, prof_strerror(e));
        }
    }
}

uint32_t synth_name(synth *s, const char *name)
{
    for (uint32_t i = 0; i < s->nnames; i++) /* fixtures have few names */
        if (strcmp(s->names[i].name, name) == 0)
            return s->names[i].id;
    if (vec_grow(&s->names, &s->cap, s->nnames, sizeof *s->names) < 0) {
        synth_fail(s, PROF_ERR_NOMEM);
        return 0;
    }
    char *copy = strdup(name);
    if (!copy) {
        synth_fail(s, PROF_ERR_NOMEM);
        return 0;
    }
    uint32_t id = s->nnames + 1;
    s->names[s->nnames++] = (name_entry){ copy, id };
    synth_fail(s, pf_writer_define_string(s->w, id, name, strlen(name)));
    return id;
}

/* The block for a thread; writes it first when full. */
static pf_block *slot(synth *s, uint32_t thread)
{
    uint32_t i = thread == PF_THREAD_GPU ? SYNTH_GPU_SLOT : thread;
    if (i > SYNTH_GPU_SLOT) { /* fixtures use few threads */
        synth_fail(s, PROF_ERR_INVALID);
        i = 0;
    }
    pf_block *b = &s->blocks[i];
    s->used[i] = 1;
    if (b->count >= s->per_block)
        synth_fail(s, pf_writer_write_block(s->w, b, &s->detail));
    return b;
}

void synth_thread(synth *s, uint32_t thread, uint64_t os_tid, const char *name)
{
    synth_fail(s, pf_writer_define_thread(s->w, thread, os_tid, name));
}

void synth_workers(synth *s, uint32_t n)
{
    for (uint32_t t = 0; t < n; t++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%u", t);
        synth_thread(s, t, 100 + t, name);
    }
}

void synth_class(synth *s, const char *name, const char *cls)
{
    uint32_t n = synth_name(s, name), c = synth_name(s, cls);
    synth_fail(s, pf_writer_define_attr(s->w, PF_ATTR_CLASS, n, c));
}

void synth_region(synth *s, uint32_t thread, const char *name, prof_kind kind, uint32_t depth,
                  uint64_t start_ns, uint64_t dur_ns)
{
    uint32_t id = synth_name(s, name);
    synth_fail(s, pf_put_region(slot(s, thread), id, (uint32_t)kind, depth, start_ns, dur_ns));
}

void synth_step(synth *s, uint32_t thread, uint64_t number, uint32_t flags, uint64_t start_ns,
                uint64_t dur_ns)
{
    synth_fail(s, pf_put_step(slot(s, thread), number, flags, start_ns, dur_ns));
}

void synth_memory(synth *s, uint32_t thread, const char *series, uint64_t t_ns, uint64_t bytes)
{
    uint32_t id = synth_name(s, series);
    synth_fail(s, pf_put_memory(slot(s, thread), id, t_ns, bytes));
}

void synth_counter(synth *s, uint32_t thread, const char *name, uint64_t t_ns, double value)
{
    uint32_t id = synth_name(s, name);
    synth_fail(s, pf_put_counter(slot(s, thread), id, t_ns, value));
}

void synth_mark(synth *s, uint32_t thread, const char *name, uint64_t t_ns)
{
    uint32_t id = synth_name(s, name);
    synth_fail(s, pf_put_mark(slot(s, thread), id, t_ns));
}

void synth_dropped(synth *s, uint32_t thread, uint64_t count, uint64_t t_ns)
{
    synth_fail(s, pf_put_dropped(slot(s, thread), count, t_ns));
}

void synth_gpu_kernel(synth *s, const char *name, uint32_t device, uint32_t stream,
                      uint64_t correlation, uint64_t start_ns, uint64_t dur_ns)
{
    uint32_t id = synth_name(s, name);
    synth_fail(s, pf_put_gpu_kernel(slot(s, PF_THREAD_GPU), id, device, stream, correlation,
                                    start_ns, dur_ns));
}

void synth_gpu_memcpy(synth *s, uint32_t copy_kind, uint32_t device, uint32_t stream,
                      uint64_t correlation, uint64_t bytes, uint64_t start_ns, uint64_t dur_ns)
{
    synth_fail(s, pf_put_gpu_memcpy(slot(s, PF_THREAD_GPU), copy_kind, device, stream,
                                    correlation, bytes, start_ns, dur_ns));
}

void synth_gpu_memset(synth *s, uint32_t device, uint32_t stream, uint64_t correlation,
                      uint64_t bytes, uint64_t start_ns, uint64_t dur_ns)
{
    synth_fail(s, pf_put_gpu_memset(slot(s, PF_THREAD_GPU), device, stream, correlation, bytes,
                                    start_ns, dur_ns));
}

void synth_sync(synth *s, uint32_t thread, uint32_t sync_kind, uint32_t device, uint32_t stream,
                uint64_t correlation, uint64_t start_ns, uint64_t dur_ns)
{
    synth_fail(s, pf_put_sync(slot(s, thread), sync_kind, device, stream, correlation, start_ns,
                              dur_ns));
}

void synth_api(synth *s, uint32_t thread, const char *name, uint64_t correlation,
               uint64_t start_ns, uint64_t dur_ns)
{
    uint32_t id = synth_name(s, name);
    synth_fail(s, pf_put_api(slot(s, thread), id, correlation, start_ns, dur_ns));
}

static int synth_finish(synth *s, int footer, prof_error *err)
{
    for (uint32_t i = 0; i <= SYNTH_THREADS_MAX; i++) {
        if (s->used[i] && !s->err)
            synth_fail(s, pf_writer_write_block(s->w, &s->blocks[i], &s->detail));
        pf_block_free(&s->blocks[i]);
    }
    if (footer && !s->err)
        synth_fail(s, pf_writer_close(s->w, &s->detail));
    else
        pf_writer_abandon(s->w);
    int rc = s->err ? -1 : 0;
    if (err)
        *err = s->detail;
    for (uint32_t i = 0; i < s->nnames; i++)
        free(s->names[i].name);
    free(s->names);
    free(s);
    return rc;
}

int synth_close(synth *s, prof_error *err)
{
    return synth_finish(s, 1, err);
}

int synth_abandon(synth *s, prof_error *err)
{
    return synth_finish(s, 0, err);
}

uint64_t synth_rand(synth_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double synth_uniform(synth_rng *r)
{
    return (double)(synth_rand(r) >> 11) * 0x1.0p-53;
}

double synth_gauss(synth_rng *r)
{
    /* Box-Muller; one value per call keeps the sequence simple to replay. */
    double u1 = synth_uniform(r), u2 = synth_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t synth_jitter(synth_rng *r, uint64_t ns, double rel_sd)
{
    double v = (double)ns * (1.0 + rel_sd * synth_gauss(r));
    return v < 1.0 ? 1 : (uint64_t)v;
}
