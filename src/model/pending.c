/* pending.c - the launches of a thread waiting for the region they were
 * made in (launch.c): a list sorted by time that takes launches in any
 * order and gives up those in a region's interval, both in time bounded by
 * a constant whatever the order, so that no input can make the join
 * quadratic. The list is a sorted row of chunks of at most PCHUNK
 * launches: an insertion or a removal moves entries of one chunk and, when
 * a chunk splits or empties, the row's pointers. Past MB_JOIN_PENDING
 * launches the older half merge two by two (mb_plist_add): a merged pair
 * spans both launches and only a region around both takes it. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"

#define PCHUNK 64u

struct mb_pchunk {
    uint32_t n;
    mb_jpend v[PCHUNK];
};

/* The last chunk whose first launch starts before `at` (strict) or at or
 * before it, the first chunk when none does: where a launch at `at` goes
 * (not strict), where those from `at` on may begin (strict). */
static size_t chunk_for(const mb_plist *l, uint64_t at, int strict)
{
    size_t lo = 0, hi = l->nchunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t first = l->chunk[mid]->v[0].lo;
        if (strict ? first < at : first <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

static int chunk_insert_at(mb_plist *l, size_t k, mb_pchunk *c)
{
    if (vec_grow(&l->chunk, &l->cap, l->nchunks, sizeof *l->chunk) < 0)
        return -1;
    memmove(&l->chunk[k + 1], &l->chunk[k], (l->nchunks - k) * sizeof *l->chunk);
    l->chunk[k] = c;
    l->nchunks++;
    return 0;
}

static void chunk_remove_at(mb_plist *l, size_t k)
{
    free(l->chunk[k]);
    memmove(&l->chunk[k], &l->chunk[k + 1], (l->nchunks - k - 1) * sizeof *l->chunk);
    l->nchunks--;
}

/* Chunk k, full, in two halves. */
static int chunk_split(mb_plist *l, size_t k)
{
    mb_pchunk *c = l->chunk[k], *d = malloc(sizeof *d);
    if (!d || chunk_insert_at(l, k + 1, d) < 0) {
        free(d);
        return -1;
    }
    d->n = c->n / 2;
    c->n -= d->n;
    memcpy(d->v, c->v + c->n, d->n * sizeof *d->v);
    return 0;
}

/* The older half of the launches, merged two by two, then chunks that
 * fit together joined, so that the row stays short. */
static void compact(mb_plist *l)
{
    size_t half = l->nchunks / 2;
    for (size_t k = 0; k < half; k++) {
        mb_pchunk *c = l->chunk[k];
        uint32_t w = 0;
        for (uint32_t i = 0; i < c->n; i += 2, w++) {
            mb_jpend a = c->v[i];
            if (i + 1 < c->n) {
                mb_jpend b = c->v[i + 1];
                a.hi = a.hi > b.hi ? a.hi : b.hi;
                a.gpu_ns += b.gpu_ns;
                a.kernels += b.kernels;
            }
            c->v[w] = a;
        }
        l->n -= c->n - w;
        c->n = w;
    }
    for (size_t k = 0; k + 1 < l->nchunks;) {
        mb_pchunk *c = l->chunk[k], *d = l->chunk[k + 1];
        if (c->n + d->n <= PCHUNK) {
            memcpy(c->v + c->n, d->v, d->n * sizeof *d->v);
            c->n += d->n;
            chunk_remove_at(l, k + 1);
        } else {
            k++;
        }
    }
}

int mb_plist_add(mb_plist *l, uint64_t at, uint64_t gpu_ns, uint64_t kernels)
{
    if (l->n >= MB_JOIN_PENDING)
        compact(l);
    if (!l->nchunks) {
        mb_pchunk *c = malloc(sizeof *c);
        if (!c || chunk_insert_at(l, 0, c) < 0) {
            free(c);
            return -1;
        }
        c->n = 0;
    }
    size_t k = chunk_for(l, at, 0);
    if (l->chunk[k]->n == PCHUNK) {
        if (chunk_split(l, k) < 0)
            return -1;
        if (at >= l->chunk[k + 1]->v[0].lo)
            k++;
    }
    mb_pchunk *c = l->chunk[k];
    uint32_t i = c->n;
    while (i > 0 && c->v[i - 1].lo > at)
        i--;
    memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof *c->v);
    c->v[i] = (mb_jpend){ at, at, gpu_ns, kernels };
    c->n++;
    l->n++;
    return 0;
}

/* Takes the launches from the first that starts at or after s while they
 * end before e, into *own. */
void mb_plist_take(mb_plist *l, uint64_t s, uint64_t e, mb_gself *own)
{
    *own = (mb_gself){ 0, 0 };
    size_t k = l->nchunks ? chunk_for(l, s, 1) : 0;
    while (k < l->nchunks) {
        mb_pchunk *c = l->chunk[k];
        uint32_t i = 0, j;
        while (i < c->n && c->v[i].lo < s)
            i++;
        for (j = i; j < c->n && c->v[j].hi < e; j++) {
            own->ns += c->v[j].gpu_ns;
            own->kernels += c->v[j].kernels;
        }
        int more = j == c->n; /* the run may go on in the next chunk */
        memmove(&c->v[i], &c->v[j], (c->n - j) * sizeof *c->v);
        c->n -= j - i;
        l->n -= j - i;
        if (!c->n)
            chunk_remove_at(l, k);
        else
            k++;
        if (!more)
            break;
    }
}

void mb_plist_each(const mb_plist *l, void (*fn)(void *arg, const mb_jpend *p), void *arg)
{
    for (size_t k = 0; k < l->nchunks; k++)
        for (uint32_t i = 0; i < l->chunk[k]->n; i++)
            fn(arg, &l->chunk[k]->v[i]);
}

void mb_plist_free(mb_plist *l)
{
    for (size_t k = 0; k < l->nchunks; k++)
        free(l->chunk[k]);
    free(l->chunk);
    memset(l, 0, sizeof *l);
}
