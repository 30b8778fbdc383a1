/* reader_prefetch.c - the producer: fetches blocks and decodes their
 * records into batches of events, in file order, for the caller's side to
 * hand out. For file sources it runs on a thread of its own, up to
 * BATCH_RING batches ahead of the caller, so that reading, checksums and
 * zstd overlap with what the caller does with the events; memory sources,
 * and readers whose thread could not start, produce each batch on demand.
 * Either way the batches are the same. Each batch of events goes through
 * the caller's batch function, if it set one, as soon as it is decoded. */
#include <stdlib.h>
#include <string.h>

#include "format/reader_int.h"
#include "util/error.h"

/* What fetching the next block gave, into it. Returns 1 when nothing can
 * follow it (the end, damage, the footer), else 0 (more events: decode). */
static int fetch_next(const pf_file *f, producer *pr, batch *it)
{
    fetch_outcome o = pf_block_fetch(f, pr->dctx, &pr->win, pr->offset, &pr->blk);
    it->what = o;
    it->skipped = pr->blk.skipped;
    it->skipped_bytes = pr->blk.skipped_bytes;
    pr->offset += pr->blk.skipped * PF_BLOCK_HEADER_LEN + pr->blk.skipped_bytes;
    switch (o) {
    case FETCH_BLOCK:
        it->begins = 1;
        it->next = pr->blk.next;
        pr->offset = pr->blk.next;
        pr->in_block = 1;
        pf_decode_block(&pr->dec, &pr->blk);
        return 0;
    case FETCH_SKIP: /* (pf_block_fetch goes past these) */
        it->stored_len = pr->blk.stored_len;
        pr->offset += PF_BLOCK_HEADER_LEN + (uint64_t)pr->blk.stored_len;
        return 0;
    case FETCH_FOOTER:
        it->footer_len = pr->blk.rawlen;
        memcpy(it->footer, pr->blk.payload,
               pr->blk.rawlen < PF_FOOTER_FIXED ? pr->blk.rawlen : PF_FOOTER_FIXED);
        return 1;
    case FETCH_CUT:
        it->err = pr->blk.err;
        return 1;
    case FETCH_END:
        return 1;
    }
    return 1;
}

/* Fills it with what comes next: more events of the block being decoded,
 * or what fetching the next block gave. Returns 1 when nothing can follow
 * it (the end, damage, the footer). */
static int produce(const pf_file *f, producer *pr, batch *it)
{
    it->begins = 0;
    it->nevents = 0;
    it->err.code = PROF_OK;
    it->skipped = it->skipped_bytes = 0;
    if (!pr->in_block) {
        int last = fetch_next(f, pr, it);
        if (last || it->what != FETCH_BLOCK)
            return last;
    }
    it->what = FETCH_BLOCK;
    if (!it->events && !(it->events = malloc(BATCH_EVENTS * sizeof *it->events))) {
        prof_error_set(&it->err, PROF_ERR_NOMEM, "out of memory for decoded events");
        return 1;
    }
    if (pf_decode_batch(&pr->dec, it))
        pr->in_block = 0;
    if (pr->batch_fn && it->nevents)
        pr->batch_fn(pr->batch_arg, it->events, it->nevents);
    return it->err.code != PROF_OK;
}

/* ---- the producing thread ------------------------------------------------------ */

static void *prefetch_main(void *arg)
{
    prefetch *pf = arg;
    prof_reader *r = pf->r;
    for (;;) {
        pthread_mutex_lock(&pf->mu);
        while (!pf->stop && pf->filled - pf->taken == BATCH_RING) {
            pf->producer_waits = 1;
            pthread_cond_wait(&pf->cv, &pf->mu);
        }
        pf->producer_waits = 0;
        int stop = pf->stop;
        batch *it = &r->ring[pf->filled % BATCH_RING];
        pthread_mutex_unlock(&pf->mu);
        if (stop)
            break;
        int last = produce(&r->file, &r->prod, it);
        pthread_mutex_lock(&pf->mu);
        pf->filled++;
        /* waking costs a system call: let a waiting caller find half a ring */
        if (pf->caller_waits && (last || pf->filled - pf->taken >= BATCH_RING / 2))
            pthread_cond_broadcast(&pf->cv);
        pthread_mutex_unlock(&pf->mu);
        if (last)
            break;
    }
    return NULL;
}

/* Starts producing ahead; without a thread, batches are produced on
 * demand. */
static void prefetch_start(prof_reader *r)
{
    prefetch *pf = calloc(1, sizeof *pf);
    if (!pf)
        return;
    pf->r = r;
    if (pthread_mutex_init(&pf->mu, NULL) != 0) {
        free(pf);
        return;
    }
    if (pthread_cond_init(&pf->cv, NULL) != 0) {
        pthread_mutex_destroy(&pf->mu);
        free(pf);
        return;
    }
    if (pthread_create(&pf->thread, NULL, prefetch_main, pf) != 0) {
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
    pthread_mutex_lock(&pf->mu);
    pf->stop = 1;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    pthread_join(pf->thread, NULL);
    pthread_cond_destroy(&pf->cv);
    pthread_mutex_destroy(&pf->mu);
    free(pf);
    r->pf = NULL;
}

batch *pf_batch_next(prof_reader *r)
{
    if (r->want_prefetch) {
        r->want_prefetch = 0; /* now: after prof_reader_set_window */
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        prefetch_start(r);
    }
    prefetch *pf = r->pf;
    if (!pf) {
        r->prod.win = (fetch_window){ r->windowed, r->win_from, r->win_to };
        produce(&r->file, &r->prod, &r->ring[0]);
        return &r->ring[0];
    }
    pthread_mutex_lock(&pf->mu);
    if (pf->holding) {
        pf->taken++;
        /* waking costs a system call: let the producer fill half a ring */
        if (pf->producer_waits && pf->filled - pf->taken <= BATCH_RING / 2)
            pthread_cond_broadcast(&pf->cv);
    }
    while (pf->filled == pf->taken) {
        pf->caller_waits = 1;
        pthread_cond_wait(&pf->cv, &pf->mu);
    }
    pf->caller_waits = 0;
    pf->holding = 1;
    batch *it = &r->ring[pf->taken % BATCH_RING];
    pthread_mutex_unlock(&pf->mu);
    return it;
}
