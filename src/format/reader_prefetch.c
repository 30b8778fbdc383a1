/* reader_prefetch.c - the producer: fetches blocks (read, checksums, zstd)
 * in file order into a ring of items for the caller's side to decode. For
 * file sources it runs on a thread of its own, up to PF_RING blocks ahead
 * of the caller, so that reading, checksums and zstd overlap with decoding
 * and what the caller does with the events; memory sources, and readers
 * whose thread could not start, fetch each block on demand. Either way the
 * items are the same. A batch function, on the thread, is run over each
 * block's events as the thread decodes them for it (with a decoder of its
 * own), before the block is handed over; a slim function is run wherever
 * the producer runs, over the decoding that is the block's only one, and
 * the caller, rather than wait for such a producer, fetches the block
 * after the one it is fetching for it (pf_help). */
#include <stdlib.h>
#include <string.h>

#include "format/reader_int.h"
#include "util/error.h"

/* Runs the batch function over the events of block b, decoded with the
 * producer's own decoder. The decoder meets what the caller's will (the
 * same bytes, the same checks), except memory running out, which makes the
 * item damage that ends reading, since the function missed events. Returns
 * 1 when reading ends at this block. */
static int fn_run_block(producer *pr, pf_item *it)
{
    prof_error fault = { PROF_OK, "" };
    pf_decode_block(&pr->dec, &it->blk);
    for (int end = 0; !end;) {
        uint32_t n = 0;
        end = pf_decode_batch(&pr->dec, pr->events, &n, &fault);
        if (n)
            pr->batch_fn(pr->batch_arg, pr->events, n);
    }
    if (fault.code == PROF_ERR_NOMEM) {
        it->what = FETCH_CUT;
        it->blk.err = fault;
    }
    return fault.code != PROF_OK;
}

/* ---- slim blocks -------------------------------------------------------------- */

void pf_slim_block_free(pf_slim_block *s)
{
    free(s->v);
    free(s->whole);
    s->v = NULL;
    s->whole = NULL;
    s->n = s->cap = s->nwhole = s->cap_whole = 0;
}

/* Entries decoded at a time: room for them is made first. */
#define SLIM_CHUNK 4096u

/* Room for SLIM_CHUNK more entries, BATCH_EVENTS of them whole. -1: out
 * of memory. */
static int slim_reserve(pf_slim_block *s)
{
    if (s->n + SLIM_CHUNK > s->cap) {
        size_t cap = s->cap ? s->cap : SLIM_CHUNK;
        while (cap < s->n + SLIM_CHUNK)
            cap *= 2;
        pf_slim *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    if (s->nwhole + BATCH_EVENTS > s->cap_whole) {
        size_t cap = s->cap_whole ? s->cap_whole : BATCH_EVENTS;
        while (cap < s->nwhole + BATCH_EVENTS)
            cap *= 2;
        prof_event *w = realloc(s->whole, cap * sizeof *w);
        if (!w)
            return -1;
        s->whole = w;
        s->cap_whole = cap;
    }
    return 0;
}

/* Keeps the tag the slim function gave a region for the later regions of
 * its name and kind, which pf_decode_slim then decodes without an event.
 * Without memory for it they are only decoded the longer way. */
static void tag_keep(pf_tag_cache *c, const prof_event *e, uint32_t tag)
{
    if (e->name_id >= c->n) {
        size_t n = c->n ? c->n : 64;
        while (n <= e->name_id)
            n *= 2;
        uint64_t *v = realloc(c->v, n * sizeof *v);
        if (!v)
            return;
        memset(v + c->n, 0, (n - c->n) * sizeof *v);
        c->v = v;
        c->n = n;
    }
    c->v[e->name_id] = (uint64_t)(e->kind + 1) << 32 | tag;
}

/* The n entries at v that pf_decode_slim left for the nev events it
 * decoded: the slim function tags those events, and each becomes a slim
 * region or is handed over whole. */
static void slim_resolve(producer *pr, pf_slim_block *s, pf_slim *v, uint32_t n, uint32_t nev)
{
    pr->slim_fn(pr->batch_arg, pr->events, nev, pr->tags);
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].tag != PF_SLIM_WHOLE)
            continue;
        const prof_event *e = &pr->events[v[i].start_ns];
        uint32_t tag = pr->tags[v[i].start_ns];
        if (tag != PF_SLIM_WHOLE && e->type == PROF_EV_REGION &&
            e->depth <= PF_SLIM_DEPTH_MAX && e->kind <= 0xffu) {
            v[i] = (pf_slim){ e->start_ns, e->dur_ns, tag, e->depth << 8 | e->kind };
            tag_keep(&pr->cache, e, tag);
        } else {
            v[i] = (pf_slim){ 0, 0, PF_SLIM_WHOLE, 0 };
            s->whole[s->nwhole++] = *e;
        }
    }
}

/* Decodes the block pr->dec is in, or its next PF_SLIM_PART records, into
 * it for pf_reader_next_slim: the only decoding of them, shown to the seen
 * function when ahead (the producing thread has half a ring ready for the
 * caller: pf_slim_seen_fn). A block not decoded to its end goes on in the
 * next item, pr holding its buffers meanwhile (the caller frees a large
 * slot's). Damage found is handed over after the events before it, as the
 * caller's decoder would have met it; memory running out makes the item
 * damage that ends reading, as in fn_run_block. Returns 1 when reading
 * ends at this item. */
static int slim_run_block(producer *pr, pf_item *it, int ahead)
{
    pf_slim_block *s = &it->slim;
    prof_error fault = { PROF_OK, "" };
    s->n = s->nwhole = 0;
    s->seen = ahead && pr->slim_seen;
    int end = 0;
    while (!end && s->n < PF_SLIM_PART) {
        if (slim_reserve(s) < 0) {
            prof_error_set(&fault, PROF_ERR_NOMEM, "out of memory");
            break;
        }
        uint32_t n = 0, nev = 0;
        size_t whole = s->nwhole;
        uint32_t room = PF_SLIM_PART - (uint32_t)s->n < SLIM_CHUNK
                            ? PF_SLIM_PART - (uint32_t)s->n : SLIM_CHUNK;
        end = pf_decode_slim(&pr->dec, &pr->cache, s->v + s->n, room, &n, pr->events, &nev,
                             &fault);
        if (nev)
            slim_resolve(pr, s, s->v + s->n, n, nev);
        if (n && s->seen)
            pr->slim_seen(pr->batch_arg, s->v + s->n, n, s->whole + whole);
        s->n += n;
    }
    if (!end && fault.code == PROF_OK) { /* the rest in the next item */
        if (!pr->cont) {
            pr->held = it->blk;
            it->blk.stored = it->blk.raw = (pf_buf){ 0 };
            pr->cont = 1;
        }
        s->fault = fault;
        return 0;
    }
    if (pr->cont) {
        pf_block_buf_free(&pr->held);
        pr->cont = 0;
    }
    if (fault.code == PROF_ERR_NOMEM) {
        it->what = FETCH_CUT;
        it->blk.err = fault;
        fault = (prof_error){ PROF_OK, "" };
    }
    s->fault = fault;
    return it->what == FETCH_CUT || fault.code != PROF_OK;
}

/* A rare large block's buffers are not kept for the next block. */
static void slot_shrink(pf_item *it)
{
    block_buf *b = &it->blk;
    if (b->raw.cap > PF_SLOT_KEEP || b->stored.cap > PF_SLOT_KEEP)
        pf_block_buf_free(b);
    if (it->slim.cap * sizeof *it->slim.v > PF_SLOT_KEEP ||
        it->slim.cap_whole * sizeof *it->slim.whole > PF_SLOT_KEEP)
        pf_slim_block_free(&it->slim);
}

/* ---- the caller's help (reader_int.h, pf_help) -------------------------------- */

/* The producer, about to fetch the block at pr->offset: takes it from the
 * caller's help when the caller fetched it (the block and its buffers,
 * the caller getting the slot's and the producer's stage for its next
 * fetch), drops what the caller fetched when it is behind, and says which
 * block it fetches now. 1: b holds the block, its payload in pr->stage. */
static int help_take(pf_help *h, producer *pr, block_buf *b)
{
    int took = 0;
    if (atomic_load(&h->state) == PF_HELP_READY) {
        if (h->at == pr->offset) {
            block_buf slot = *b;
            pf_buf stage = pr->stage;
            *b = h->blk;
            h->blk = slot;
            pr->stage = h->stage;
            h->stage = stage;
            h->taken++;
            took = 1;
        }
        if (h->at <= pr->offset)
            atomic_store(&h->state, PF_HELP_IDLE); /* the caller's again */
    }
    atomic_store(&h->fetching, pr->offset);
    return took;
}

/* The caller, waiting: fetches the block after the one the producer is
 * fetching, once per such block, and hands it over when it came whole
 * into the stage. 1 when it fetched one. */
static int help_give(prof_reader *r, pf_help *h)
{
    uint64_t fetching = atomic_load(&h->fetching);
    if (atomic_load(&h->state) != PF_HELP_IDLE || !fetching || fetching == h->asked)
        return 0;
    h->asked = fetching;
    if (!h->dctx && !(h->dctx = ZSTD_createDCtx()))
        return 0;
    uint64_t at = pf_block_after(&r->file, &h->peek, fetching, &h->blk);
    if (!at)
        return 0;
    pf_stage stage = { &h->stage, 1, &h->peek };
    fetch_window none = { 0, 0, 0 };
    if (pf_block_fetch(&r->file, h->dctx, &stage, &none, at, &h->blk) == FETCH_BLOCK &&
        h->blk.payload == h->stage.data) {
        h->at = at;
        atomic_store(&h->state, PF_HELP_READY);
    }
    return 1;
}

static void help_free(pf_help *h)
{
    pf_block_buf_free(&h->blk);
    free(h->stage.data);
    ZSTD_freeDCtx(h->dctx);
}

/* Fetches the next block into it; on_thread: on the producing thread,
 * which runs pr's batch function over its events, and ahead: with half a
 * ring ready for the caller besides; help: the caller's, or NULL. Returns
 * 1 when nothing can follow it (the end, damage, the footer), else 0. */
static int produce(const pf_file *f, producer *pr, pf_item *it, int on_thread, int ahead,
                   pf_help *help)
{
    block_buf *b = &it->blk;
    slot_shrink(it);
    it->cont = pr->cont;
    if (pr->cont) { /* the next part of a slim block */
        it->what = FETCH_BLOCK;
        it->bytes = 0;
        b->skipped = b->skipped_bytes = 0;
        b->thread = pr->dec.thread;
        return slim_run_block(pr, it, on_thread && ahead);
    }
    pf_stage stage = { on_thread ? &pr->stage : NULL, pr->slim_fn != NULL, &pr->peek };
    fetch_outcome o = help && help_take(help, pr, b)
                          ? FETCH_BLOCK
                          : pf_block_fetch(f, pr->dctx, &stage, &pr->win, pr->offset, b);
    it->what = o;
    it->bytes = 0;
    pr->offset += b->skipped * PF_BLOCK_HEADER_LEN + b->skipped_bytes;
    switch (o) {
    case FETCH_BLOCK:
        it->bytes = (uint64_t)b->rawlen + b->stored_len;
        pr->offset = b->next;
        if (pr->slim_fn) {
            pf_decode_block(&pr->dec, b);
            return slim_run_block(pr, it, on_thread && ahead);
        }
        return on_thread && pr->batch_fn ? fn_run_block(pr, it) : 0;
    case FETCH_SKIP: /* (pf_block_fetch goes past these) */
        pr->offset += PF_BLOCK_HEADER_LEN + (uint64_t)b->stored_len;
        return 0;
    case FETCH_FOOTER:
    case FETCH_CUT:
    case FETCH_END:
        return 1;
    }
    return 1;
}

/* ---- the producing thread ------------------------------------------------------ */

/* How long a side that finds nothing to do spins before it sleeps: about
 * the time the other side takes over a block on a current core. Sleeping
 * and waking cost a system call each, far more than most waits. */
#define PF_SPINS 20000u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Whether the producer may fill the next slot: one block ahead always,
 * more while the ring and the bytes ahead allow. */
static int producer_may_go(prefetch *pf)
{
    uint64_t ahead = atomic_load(&pf->filled) - atomic_load(&pf->taken);
    return atomic_load(&pf->stop) ||
           (ahead < PF_RING && (ahead <= 1 || atomic_load(&pf->ahead) < PF_AHEAD_BYTES));
}

static int caller_may_go(prefetch *pf)
{
    return atomic_load(&pf->filled) != atomic_load(&pf->taken);
}

/* Until may_go: spinning a while, then asleep on cv, flagged in asleep.
 * The flag is set before the last look, and the other side moves its
 * counter before it looks at the flag (both sequentially consistent), so
 * a side going to sleep either sees the counter moved or is seen asleep. */
static void wait_for(prefetch *pf, int (*may_go)(prefetch *), atomic_int *asleep)
{
    for (unsigned spin = 0; spin < PF_SPINS; spin++) {
        if (may_go(pf))
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pf->mu);
    atomic_store(asleep, 1);
    while (!may_go(pf))
        pthread_cond_wait(&pf->cv, &pf->mu);
    atomic_store(asleep, 0);
    pthread_mutex_unlock(&pf->mu);
}

/* Wakes the other side if it sleeps and should wake: a woken side has
 * half a ring to get through (or all there is), so that sleeps stay rare
 * when one side is much the slower. */
static void wake_if(prefetch *pf, atomic_int *asleep, int should)
{
    if (should && atomic_load(asleep)) {
        pthread_mutex_lock(&pf->mu);
        pthread_cond_broadcast(&pf->cv);
        pthread_mutex_unlock(&pf->mu);
    }
}

static void prefetch_main(void *arg)
{
    prefetch *pf = arg;
    prof_reader *r = pf->r;
    for (;;) {
        wait_for(pf, producer_may_go, &pf->producer_waits);
        if (atomic_load(&pf->stop))
            break;
        uint64_t filled = atomic_load(&pf->filled);
        pf_item *it = &r->ring[filled % PF_RING];
        int last = produce(&r->file, &r->prod, it, 1,
                           filled - atomic_load(&pf->taken) >= PF_RING / 2,
                           pf->helped ? &pf->help : NULL);
        atomic_fetch_add(&pf->ahead, it->bytes);
        atomic_store(&pf->filled, filled + 1);
        wake_if(pf, &pf->caller_waits,
                last || filled + 1 - atomic_load(&pf->taken) >= PF_RING / 2 ||
                    !producer_may_go(pf));
        if (last)
            break;
    }
}

/* Starts fetching ahead; without a thread, blocks are fetched on demand
 * and a batch function runs on the caller's side. */
static void prefetch_start(prof_reader *r)
{
    prefetch *pf = calloc(1, sizeof *pf);
    if (!pf)
        return;
    pf->r = r;
    pf->helped = r->prod.slim_fn && !r->prod.win.on && r->help != TUNING_HELP_OFF;
    pf->help.always = r->help == TUNING_HELP_ALWAYS; /* tests: the most hand-overs */
    if (r->prod.batch_fn && !r->prod.events &&
        !(r->prod.events = malloc(BATCH_EVENTS * sizeof *r->prod.events))) {
        free(pf);
        return;
    }
    if (pthread_mutex_init(&pf->mu, NULL) != 0) {
        free(pf);
        return;
    }
    if (pthread_cond_init(&pf->cv, NULL) != 0) {
        pthread_mutex_destroy(&pf->mu);
        free(pf);
        return;
    }
    if (!pool_start(r->pool, &pf->job, prefetch_main, pf)) {
        pthread_cond_destroy(&pf->cv);
        pthread_mutex_destroy(&pf->mu);
        free(pf);
        return;
    }
    r->pf = pf;
}

void pf_prefetch_stop(prof_reader *r)
{
    prefetch *pf = r->pf;
    if (!pf)
        return;
    atomic_store(&pf->stop, 1);
    pthread_mutex_lock(&pf->mu);
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    pool_join(&pf->job);
    pthread_cond_destroy(&pf->cv);
    pthread_mutex_destroy(&pf->mu);
    r->helped += pf->help.taken;
    help_free(&pf->help);
    free(pf);
    r->pf = NULL;
}

pf_item *pf_item_next(prof_reader *r)
{
    if (r->want_prefetch) {
        r->want_prefetch = 0; /* now: after prof_reader_set_window */
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        prefetch_start(r);
    }
    prefetch *pf = r->pf;
    if (!pf) {
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        produce(&r->file, &r->prod, &r->ring[0], 0, 0, NULL);
        return &r->ring[0];
    }
    if (pf->holding) {
        uint64_t taken = atomic_load(&pf->taken);
        atomic_fetch_sub(&pf->ahead, r->ring[taken % PF_RING].bytes);
        slot_shrink(&r->ring[taken % PF_RING]); /* the caller's until taken moves */
        atomic_store(&pf->taken, taken + 1);
        wake_if(pf, &pf->producer_waits,
                atomic_load(&pf->filled) - (taken + 1) <= PF_RING / 2 && producer_may_go(pf));
    }
    /* rather than wait, fetch a block for the producer */
    while (pf->helped && (pf->help.always || !caller_may_go(pf)) && help_give(r, &pf->help))
        ;
    wait_for(pf, caller_may_go, &pf->caller_waits);
    pf->holding = 1;
    return &r->ring[atomic_load(&pf->taken) % PF_RING];
}
