/* kineto_queue.c - Kineto events packed into blocks by the reader and
 * handled, in the same order, on a thread of their own. */
#include <pthread.h>
#include <stdlib.h>

#include "import/kineto_int.h"

/* ---- events handled on a thread of their own --------------------------------------------- */

/* Reading an event and handling it (the sink: nesting, names, encoding)
 * take about as long as each other, so with two cores they overlap: the
 * reader packs each event it closes into blocks, and a thread unpacks and
 * handles them in the same order. Everything else that reaches the sink
 * from the reader (devices, rank, epoch, damage, malformed events) first
 * waits for the thread to catch up (kin_sync), so that the sink sees
 * exactly the calls it would on one thread. A tuning of one thread
 * (PROF_THREADS=1) keeps it on one: the reference the tests compare with. */
#define KIN_QBLOCKS 8u

typedef struct kin_queue {
    pool_job thread;
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a block to handle, or the end     */
    pthread_cond_t freed; /* a block handled                   */
    unsigned char *block[KIN_QBLOCKS];
    size_t used[KIN_QBLOCKS];
    unsigned head, count; /* handed over: head .. head+count-1 */
    int closing, stopped; /* stopped: the sink failed          */
    /* the reader's, on a line of its own (see kin_parser) */
    _Alignas(64) unsigned fill; /* the block the reader packs into */
    size_t fill_used;
    _Alignas(64) kin_event ev; /* the thread's unpacked event  */
} kin_queue;

/* An event as packed: this header, the integer args it has (in the order
 * of their bits in has), then its strings without NULs. */
typedef struct kin_packed {
    int64_t ts, dur, pid, tid;
    uint32_t has, name_len, cat_len;
    uint16_t pid_len, tid_len;
    uint8_t sync_len, meta_len, labels_len; /* under KIN_SHORT */
    uint8_t flags, ph, pid_kind, tid_kind;
} kin_packed;

enum { PK_NAME = 1, PK_CAT = 2, PK_TS = 4, PK_DUR = 8, PK_BAD_TIME = 16 };

/* Bits set in x: __builtin_popcount is a call into libgcc on a build
 * for any x86-64, and this is counted for every event twice. */
static inline size_t bits_set(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

static size_t packed_size(const kin_packed *h)
{
    size_t n = sizeof *h + bits_set(h->has) * sizeof(int64_t) + h->name_len +
               h->cat_len + h->pid_len + h->tid_len + h->sync_len + h->meta_len + h->labels_len;
    return (n + 7) & ~(size_t)7;
}

static unsigned char *put_bytes(unsigned char *d, const void *s, size_t n)
{
    memcpy(d, s, n);
    return d + n;
}

static const unsigned char *get_string(const unsigned char *b, char *s, size_t n)
{
    memcpy(s, b, n);
    s[n] = '\0';
    return b + n;
}

static kin_packed pack_header(const kin_event *e)
{
    kin_packed h = { .ts = e->ts, .dur = e->dur, .pid = e->pid.v, .tid = e->tid.v,
                     .has = e->has, .name_len = (uint32_t)e->name_len,
                     .cat_len = (uint32_t)e->cat_len, .ph = (uint8_t)e->ph,
                     .pid_kind = (uint8_t)e->pid.kind, .tid_kind = (uint8_t)e->tid.kind };
    h.pid_len = (uint16_t)(e->pid.kind == 2 ? e->pid.len : 0);
    h.tid_len = (uint16_t)(e->tid.kind == 2 ? e->tid.len : 0);
    h.sync_len = (uint8_t)(e->sync_kind[0] ? strlen(e->sync_kind) : 0);
    h.meta_len = (uint8_t)(e->meta_name[0] ? strlen(e->meta_name) : 0);
    h.labels_len = (uint8_t)(e->labels[0] ? strlen(e->labels) : 0);
    h.flags = (uint8_t)((e->has_name ? PK_NAME : 0) | (e->has_cat ? PK_CAT : 0) |
                        (e->has_ts ? PK_TS : 0) | (e->has_dur ? PK_DUR : 0) |
                        (e->bad_time ? PK_BAD_TIME : 0));
    return h;
}

static void pack(const kin_event *e, const kin_packed *h, unsigned char *d)
{
    d = put_bytes(d, h, sizeof *h);
    for (uint32_t has = h->has; has; has &= has - 1)
        d = put_bytes(d, &e->num[__builtin_ctz(has)], sizeof *e->num);
    d = put_bytes(d, e->name, h->name_len);
    d = put_bytes(d, e->cat, h->cat_len);
    d = put_bytes(d, e->pid.s, h->pid_len);
    d = put_bytes(d, e->tid.s, h->tid_len);
    d = put_bytes(d, e->sync_kind, h->sync_len);
    d = put_bytes(d, e->meta_name, h->meta_len);
    put_bytes(d, e->labels, h->labels_len);
}

/* Unpacks the event at b into e; the size it took. */
static size_t unpack(const unsigned char *b, kin_event *e)
{
    kin_packed h;
    memcpy(&h, b, sizeof h);
    e->ts = h.ts;
    e->dur = h.dur;
    e->has = h.has;
    e->ph = (char)h.ph;
    e->has_name = !!(h.flags & PK_NAME);
    e->has_cat = !!(h.flags & PK_CAT);
    e->has_ts = !!(h.flags & PK_TS);
    e->has_dur = !!(h.flags & PK_DUR);
    e->bad_time = !!(h.flags & PK_BAD_TIME);
    e->pid.kind = h.pid_kind;
    e->pid.v = h.pid;
    e->pid.len = h.pid_len;
    e->tid.kind = h.tid_kind;
    e->tid.v = h.tid;
    e->tid.len = h.tid_len;
    e->name_len = h.name_len;
    e->cat_len = h.cat_len;
    const unsigned char *s = b + sizeof h;
    for (uint32_t has = h.has; has; has &= has - 1, s += sizeof *e->num)
        memcpy(&e->num[__builtin_ctz(has)], s, sizeof *e->num);
    s = get_string(s, e->name, h.name_len);
    s = get_string(s, e->cat, h.cat_len);
    s = get_string(s, e->pid.s, h.pid_len);
    s = get_string(s, e->tid.s, h.tid_len);
    s = get_string(s, e->sync_kind, h.sync_len);
    s = get_string(s, e->meta_name, h.meta_len);
    get_string(s, e->labels, h.labels_len);
    return packed_size(&h);
}

/* The thread: handles the blocks in order; after a failure of the sink it
 * only hands them back. */
static void kin_handle_events(void *arg)
{
    kin_parser *p = arg;
    kin_queue *q = p->q;
    int ok = 1;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->count == 0 && !q->closing)
            pthread_cond_wait(&q->ready, &q->mu);
        if (q->count == 0)
            break;
        unsigned b = q->head;
        pthread_mutex_unlock(&q->mu);
        for (size_t at = 0; ok && at < q->used[b];) {
            at += unpack(q->block[b] + at, &q->ev);
            ok = kin_event_done(p);
        }
        pthread_mutex_lock(&q->mu);
        q->head = (b + 1) % KIN_QBLOCKS;
        q->count--;
        q->stopped |= !ok;
        pthread_cond_signal(&q->freed);
    }
    pthread_mutex_unlock(&q->mu);
}

/* Hands the block being packed over (when it holds anything) and waits
 * for a free one. 0 once the sink has failed. */
static int kin_publish(kin_queue *q)
{
    pthread_mutex_lock(&q->mu);
    if (q->fill_used) {
        q->used[q->fill] = q->fill_used;
        q->count++;
        pthread_cond_signal(&q->ready);
    }
    while (q->count == KIN_QBLOCKS)
        pthread_cond_wait(&q->freed, &q->mu);
    int ok = !q->stopped;
    q->fill = (q->head + q->count) % KIN_QBLOCKS;
    q->fill_used = 0;
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* Waits until every event handed over is handled: then the reader may
 * call the sink itself. */
void kin_sync(kin_parser *p)
{
    kin_queue *q = p->q;
    if (!q)
        return;
    kin_publish(q);
    pthread_mutex_lock(&q->mu);
    while (q->count > 0)
        pthread_cond_wait(&q->freed, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

/* An event read by a helper: packed into its block, or 0 when the block
 * is full (the helper stops before that event). */
static int pack_into(kin_packbuf *b, const kin_event *e)
{
    kin_packed h = pack_header(e);
    size_t need = packed_size(&h);
    if (b->packed + need > KIN_QBLOCK)
        return 0;
    pack(e, &h, b->pack + b->packed);
    b->packed += need;
    return 1;
}

/* An event closed: handled here, or packed for the thread. */
int kin_event_closed(kin_parser *p)
{
    kin_queue *q = p->q;
    if (p->into)
        return pack_into(p->into, &p->ev);
    if (!q)
        return kin_event_done(p);
    kin_packed h = pack_header(&p->ev);
    size_t need = packed_size(&h);
    if (q->fill_used + need > KIN_QBLOCK && !kin_publish(q))
        return 0;
    pack(&p->ev, &h, q->block[q->fill] + q->fill_used);
    q->fill_used += need;
    return 1;
}

/* Packed events read by a helper (kin_helper), after the reader's own:
 * its block becomes the one being filled, and it gets a free one in
 * exchange (both KIN_QBLOCK). 0 once the sink has failed. */
int kin_queue_adopt(kin_queue *q, unsigned char **packed, size_t n)
{
    if (q->fill_used && !kin_publish(q))
        return 0;
    /* the block being filled is the reader's alone until published */
    unsigned char *free_block = q->block[q->fill];
    q->block[q->fill] = *packed;
    *packed = free_block;
    q->fill_used = n;
    return 1;
}

/* Starts the thread, unless the tuning has no helpers (PROF_THREADS=1,
 * one core) or it cannot be had: then events are handled as they close. */
void kin_queue_start(kin_parser *p)
{
    if (!tuning_helpers(p->tuning))
        return;
    kin_queue *q = aligned_alloc(_Alignof(kin_queue), sizeof *q);
    if (!q)
        return;
    memset(q, 0, sizeof *q);
    unsigned made = 0;
    while (made < KIN_QBLOCKS && (q->block[made] = malloc(KIN_QBLOCK)))
        made++;
    int mu = made == KIN_QBLOCKS && pthread_mutex_init(&q->mu, NULL) == 0;
    int ready = mu && pthread_cond_init(&q->ready, NULL) == 0;
    int freed = ready && pthread_cond_init(&q->freed, NULL) == 0;
    p->q = q;
    p->out = &q->ev;
    if (freed && pool_start(tuning_pool(p->tuning), &q->thread, kin_handle_events, p))
        return;
    p->q = NULL;
    p->out = &p->ev;
    if (freed)
        pthread_cond_destroy(&q->freed);
    if (ready)
        pthread_cond_destroy(&q->ready);
    if (mu)
        pthread_mutex_destroy(&q->mu);
    while (made > 0)
        free(q->block[--made]);
    free(q);
}

/* Every event handled: the thread ends, and the reader alone goes on. */
void kin_queue_end(kin_parser *p)
{
    kin_queue *q = p->q;
    if (!q)
        return;
    kin_sync(p);
    pthread_mutex_lock(&q->mu);
    q->closing = 1;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->mu);
    pool_join(&q->thread);
    p->q = NULL;
    p->out = &p->ev;
    pthread_cond_destroy(&q->freed);
    pthread_cond_destroy(&q->ready);
    pthread_mutex_destroy(&q->mu);
    for (unsigned i = 0; i < KIN_QBLOCKS; i++)
        free(q->block[i]);
    free(q);
}
