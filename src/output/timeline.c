/* timeline.c - one time window of a profile's events for the dashboard's
 * timeline. The file is streamed with the reader (memory bounded by the
 * window's limit, not by the profile), which skips the events blocks that
 * end before the window or start after it, so a small window of a large
 * profile costs a few blocks, not the whole file. Everything shown (events,
 * steps, marks) is what overlaps the window, and the reader delivers all of
 * that, in file order as before. When more events overlap the window than
 * the limit allows, the longest are kept (a min-heap on duration), as the
 * short ones would be under a pixel wide at that zoom anyway. Each thread
 * and each GPU stream is a lane: threads first, then the streams by device
 * and stream, so a device's streams sit together whatever came first. */
#include "output/timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "model/profile.h"
#include "util/error.h"
#include "util/hmap.h"
#include "util/jsonesc.h"
#include "util/vec.h"

#define STEP_LIMIT 20000u
#define MARK_LIMIT 2000u
#define KIND_KERNEL 5u
#define KIND_COPY 6u
#define KIND_MEMSET 7u
#define KIND_COMM_KERNEL 8u /* a communication kernel (model_kernel_is_comm) */
#define KIND_KERNEL_BY_NAME UINT32_MAX /* to keep(): either of the two, told by the
                                         name once the kernel is kept (most are not) */

typedef struct tl_event {
    uint64_t start, dur;
    uint32_t lane, depth, name, kind;
} tl_event;

typedef struct tl_lane {
    int gpu;
    uint32_t thread, device, stream;
} tl_lane;

typedef struct tl_state {
    const timeline_query *q;
    tl_event *heap;        /* min-heap on dur, at most q->limit             */
    size_t nheap;
    uint64_t overlapping;  /* events in the window, kept or not             */
    tl_lane *lanes;
    size_t nlanes, lanes_cap;
    char **names;          /* interned, in order of first sight              */
    size_t nnames, names_cap;
    hmap name_index;       /* names: index map                              */
    uint64_t (*steps)[3];
    size_t nsteps;
    struct { uint32_t name; uint64_t t; } *marks;
    size_t nmarks;
    int nomem;
} tl_state;

/* A name sought in the index. */
typedef struct tl_name_key {
    const tl_state *st;
    const char *name;
} tl_name_key;

static int name_is(const void *ctx, uint32_t i)
{
    const tl_name_key *k = ctx;
    return strcmp(k->st->names[i], k->name) == 0;
}

static uint64_t name_rehash(const void *ctx, uint32_t i)
{
    return hash_fnv1a_str(((const tl_name_key *)ctx)->st->names[i], NULL);
}

/* The index of name in the names table, added when new. */
static uint32_t intern(tl_state *st, const char *name)
{
    tl_name_key key = { st, name };
    int added;
    uint32_t *i = hmap_slot_by(&st->name_index, hash_fnv1a_str(name, NULL), name_is, name_rehash,
                               &key, &added);
    if (i && !added)
        return *i;
    char *copy = i ? strdup(name) : NULL;
    if (copy && vec_grow(&st->names, &st->names_cap, st->nnames, sizeof *st->names) == 0) {
        st->names[st->nnames] = copy;
        *i = (uint32_t)st->nnames++;
        return *i;
    }
    free(copy);
    if (i)
        hmap_remove_by(&st->name_index, i, name_rehash, &key);
    st->nomem = 1;
    return 0;
}

static uint32_t lane_of(tl_state *st, int gpu, uint32_t thread, uint32_t device, uint32_t stream)
{
    for (size_t i = 0; i < st->nlanes; i++) {
        const tl_lane *l = &st->lanes[i];
        if (l->gpu == gpu && (gpu ? l->device == device && l->stream == stream : l->thread == thread))
            return (uint32_t)i;
    }
    if (vec_grow(&st->lanes, &st->lanes_cap, st->nlanes, sizeof *st->lanes) < 0) {
        st->nomem = 1;
        return 0;
    }
    st->lanes[st->nlanes] = (tl_lane){ gpu, thread, device, stream };
    return (uint32_t)st->nlanes++;
}

static void sift_down(tl_event *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].dur < h[m].dur)
            m = l;
        if (l + 1 < n && h[l + 1].dur < h[m].dur)
            m = l + 1;
        if (m == i)
            return;
        tl_event t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(tl_event *h, size_t i)
{
    while (i > 0 && h[(i - 1) / 2].dur > h[i].dur) {
        tl_event t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static int overlaps(const timeline_query *q, uint64_t start, uint64_t dur)
{
    return start <= q->t1_ns && start + dur >= q->t0_ns;
}

/* Keeps the event if it is among the limit longest so far. */
static void keep(tl_state *st, const prof_event *ev, int gpu, const char *name, uint32_t kind)
{
    st->overlapping++;
    if (st->q->limit == 0)
        return;
    if (st->nheap == st->q->limit && ev->dur_ns <= st->heap[0].dur)
        return;
    if (kind == KIND_KERNEL_BY_NAME)
        kind = model_kernel_is_comm(name) ? KIND_COMM_KERNEL : KIND_KERNEL;
    tl_event e = { ev->start_ns, ev->dur_ns,
                   lane_of(st, gpu, ev->thread, ev->device, ev->stream),
                   gpu ? 0 : ev->depth, intern(st, name), kind };
    if (st->nheap < st->q->limit) {
        st->heap[st->nheap] = e;
        sift_up(st->heap, st->nheap++);
    } else {
        st->heap[0] = e;
        sift_down(st->heap, st->nheap, 0);
    }
}

static const char *copy_name(uint32_t kind)
{
    static const char *const names[] = { "memcpy", "memcpy HtoD", "memcpy DtoH",
                                         "memcpy DtoD", "memcpy HtoH", "memcpy peer" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : names[0];
}

static void take(tl_state *st, const prof_event *ev)
{
    const timeline_query *q = st->q;
    int want_cpu = q->thread != TIMELINE_GPU_ONLY, want_gpu = q->thread < 0;
    if (!overlaps(q, ev->start_ns, ev->dur_ns))
        return;
    switch (ev->type) {
    case PROF_EV_REGION:
        if (want_cpu && (q->thread < 0 || (uint32_t)q->thread == ev->thread))
            keep(st, ev, 0, ev->name, ev->kind <= 4 ? ev->kind : 0);
        break;
    case PROF_EV_GPU_KERNEL:
        if (want_gpu)
            keep(st, ev, 1, ev->name, KIND_KERNEL_BY_NAME);
        break;
    case PROF_EV_GPU_MEMCPY:
        if (want_gpu)
            keep(st, ev, 1, copy_name(ev->subkind), KIND_COPY);
        break;
    case PROF_EV_GPU_MEMSET:
        if (want_gpu)
            keep(st, ev, 1, "memset", KIND_MEMSET);
        break;
    case PROF_EV_STEP:
        if (st->nsteps < STEP_LIMIT) {
            uint64_t *s = st->steps[st->nsteps++];
            s[0] = ev->value;
            s[1] = ev->start_ns;
            s[2] = ev->dur_ns;
        }
        break;
    case PROF_EV_MARK:
        if (st->nmarks < MARK_LIMIT) {
            st->marks[st->nmarks].name = intern(st, ev->name);
            st->marks[st->nmarks++].t = ev->start_ns;
        }
        break;
    default:
        break;
    }
}

static int by_start(const void *a, const void *b)
{
    const tl_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int lane_cmp(const void *pa, const void *pb, void *arg)
{
    const tl_lane *lanes = arg;
    const tl_lane *a = &lanes[*(const uint32_t *)pa], *b = &lanes[*(const uint32_t *)pb];
    if (a->gpu != b->gpu)
        return a->gpu - b->gpu;
    if (!a->gpu)
        return (a->thread > b->thread) - (a->thread < b->thread);
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Puts the lanes in their order (see the top) and renumbers the events'. */
static int order_lanes(tl_state *st)
{
    uint32_t *order = malloc((st->nlanes ? st->nlanes : 1) * sizeof *order);
    uint32_t *to = malloc((st->nlanes ? st->nlanes : 1) * sizeof *to);
    tl_lane *lanes = malloc((st->nlanes ? st->nlanes : 1) * sizeof *lanes);
    if (!order || !to || !lanes) {
        free(order);
        free(to);
        free(lanes);
        return 0;
    }
    for (uint32_t i = 0; i < st->nlanes; i++)
        order[i] = i;
    qsort_r(order, st->nlanes, sizeof *order, lane_cmp, st->lanes);
    for (uint32_t k = 0; k < st->nlanes; k++) {
        to[order[k]] = k;
        lanes[k] = st->lanes[order[k]];
    }
    for (size_t i = 0; i < st->nheap; i++)
        st->heap[i].lane = to[st->heap[i].lane];
    free(st->lanes);
    st->lanes = lanes;
    st->lanes_cap = st->nlanes;
    free(order);
    free(to);
    return 1;
}

static void write_lane(FILE *f, const prof_reader *r, const tl_lane *l)
{
    if (l->gpu) {
        char name[64];
        snprintf(name, sizeof name, "GPU %" PRIu32 " stream %" PRIu32, l->device, l->stream);
        fprintf(f, "{\"name\":\"%s\",\"kind\":\"gpu\",\"device\":%" PRIu32 ",\"stream\":%" PRIu32 "}",
                name, l->device, l->stream);
        return;
    }
    const char *tn = prof_reader_thread_name(r, l->thread);
    char fallback[32];
    if (!tn || !*tn) {
        snprintf(fallback, sizeof fallback, "thread %" PRIu32, l->thread);
        tn = fallback;
    }
    fputs("{\"name\":", f);
    jsonesc_fputs(tn, f);
    fprintf(f, ",\"kind\":\"thread\",\"thread\":%" PRIu32 "}", l->thread);
}

static void write_json(FILE *f, const tl_state *st, const prof_reader *r)
{
    const timeline_query *q = st->q;
    fprintf(f, "{\"t0_ns\":%" PRIu64 ",\"t1_ns\":%" PRIu64 ",\"limit\":%zu,\"count\":%zu,"
               "\"hidden\":%" PRIu64 ",\"names\":[",
            q->t0_ns, q->t1_ns, q->limit, st->nheap, st->overlapping - st->nheap);
    for (size_t i = 0; i < st->nnames; i++) {
        if (i)
            putc(',', f);
        jsonesc_fputs(st->names[i], f);
    }
    fputs("],\"lanes\":[", f);
    for (size_t i = 0; i < st->nlanes; i++) {
        if (i)
            putc(',', f);
        write_lane(f, r, &st->lanes[i]);
    }
    fputs("],\"events\":[", f);
    for (size_t i = 0; i < st->nheap; i++) {
        const tl_event *e = &st->heap[i];
        fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 "]",
                i ? "," : "", e->lane, e->depth, e->start, e->dur, e->name, e->kind);
    }
    fputs("],\"steps\":[", f);
    for (size_t i = 0; i < st->nsteps; i++)
        fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "", st->steps[i][0],
                st->steps[i][1], st->steps[i][2]);
    fputs("],\"marks\":[", f);
    for (size_t i = 0; i < st->nmarks; i++)
        fprintf(f, "%s[%" PRIu32 ",%" PRIu64 "]", i ? "," : "", st->marks[i].name, st->marks[i].t);
    fputs("]}", f);
}

static void state_free(tl_state *st)
{
    for (size_t i = 0; i < st->nnames; i++)
        free(st->names[i]);
    free(st->names);
    hmap_free(&st->name_index);
    free(st->heap);
    free(st->lanes);
    free(st->steps);
    free(st->marks);
}

char *timeline_window_json(const char *path, const prof_tuning *t, const timeline_query *q,
                           prof_error *err)
{
    tl_state st = { .q = q };
    prof_reader *r = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (prof_reader_open(path, &r, err) != PROF_OK)
        goto out;
    pf_reader_tune(r, t);
    prof_reader_set_window(r, q->t0_ns, q->t1_ns);
    st.heap = malloc((q->limit ? q->limit : 1) * sizeof *st.heap);
    st.steps = malloc(STEP_LIMIT * sizeof *st.steps);
    st.marks = malloc(MARK_LIMIT * sizeof *st.marks);
    if (!st.heap || !st.steps || !st.marks)
        goto nomem;
    prof_event ev;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1 && !st.nomem)
        take(&st, &ev);
    if (rc < 0) {
        if (err)
            *err = *prof_reader_error(r);
        goto out;
    }
    if (st.nomem || !order_lanes(&st))
        goto nomem;
    qsort(st.heap, st.nheap, sizeof *st.heap, by_start);
    f = open_memstream(&text, &len);
    if (!f)
        goto nomem;
    write_json(f, &st, r);
    if (ferror(f) | fclose(f)) {
        free(text);
        text = NULL;
        goto nomem;
    }
    goto out;
nomem:
    prof_error_set(err, PROF_ERR_NOMEM, "out of memory reading the time window");
out:
    if (r)
        prof_reader_close(r);
    state_free(&st);
    return text;
}
