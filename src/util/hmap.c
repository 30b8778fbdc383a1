/* hmap.c - growing, emptying, removing from and walking the hash map of
 * hmap.h; lookups are inline there. */
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

#define HMAP_FIRST_BITS 4 /* 16 entries in a first table           */
#define HMAP_KEEP 64      /* hmap_clear wipes a table up to this size */

static hmap_entry *table_new(size_t cap)
{
    hmap_entry *e = malloc(cap * sizeof *e);
    if (e)
        memset(e, 0xFF, cap * sizeof *e); /* every key HMAP_FREE */
    return e;
}

int hmap_grow(hmap *m)
{
    unsigned bits = m->cap ? m->bits + 1 : HMAP_FIRST_BITS;
    if (bits >= 8 * sizeof(size_t) - 5) /* 16-byte entries: the size fits */
        return -1;
    size_t cap = (size_t)1 << bits;
    hmap_entry *e = table_new(cap);
    if (!e)
        return -1;
    hmap old = *m;
    m->e = e;
    m->cap = cap;
    m->bits = bits;
    /* into the first free entry: keys kept by the caller may share a hash */
    for (size_t i = 0; i < old.cap; i++) {
        if (old.e[i].key == HMAP_FREE)
            continue;
        size_t k = hash_top(old.e[i].key, bits);
        while (e[k].key != HMAP_FREE)
            k = (k + 1) & (cap - 1);
        e[k] = old.e[i];
    }
    free(old.e);
    return 0;
}

void hmap_free(hmap *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

void hmap_clear(hmap *m)
{
    m->aside = 0;
    if (m->n == 0)
        return;
    if (m->cap > HMAP_KEEP) {
        hmap_free(m);
        return;
    }
    memset(m->e, 0xFF, m->cap * sizeof *m->e);
    m->n = 0;
}

/* Whether an entry whose home is `home` may fill the hole at i, from where
 * it sits at j: when the hole lies on its probe path, cyclically in
 * [home, j). */
static int may_fill(size_t home, size_t i, size_t j)
{
    return i <= j ? home <= i || home > j : home <= i && home > j;
}

/* Backward-shift deletion: the entries after the hole that probed past it
 * move back, so that no lookup stops early and no tombstone is needed. */
void hmap_remove(hmap *m, uint64_t *val)
{
    if (val == &m->aside_val) {
        m->aside = 0;
        return;
    }
    hmap_entry *hole = (hmap_entry *)(void *)((char *)val - offsetof(hmap_entry, val));
    size_t mask = m->cap - 1, i = (size_t)(hole - m->e);
    for (size_t j = (i + 1) & mask; m->e[j].key != HMAP_FREE; j = (j + 1) & mask) {
        if (may_fill(hash_top(m->e[j].key, m->bits), i, j)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].key = HMAP_FREE;
    m->n--;
}

int hmap_next(const hmap *m, size_t *it, uint64_t *key, uint64_t *val)
{
    for (; *it < m->cap; ++*it)
        if (m->e[*it].key != HMAP_FREE) {
            *key = m->e[*it].key;
            *val = m->e[(*it)++].val;
            return 1;
        }
    if (*it == m->cap && m->aside) {
        ++*it;
        *key = HMAP_FREE;
        *val = m->aside_val;
        return 1;
    }
    return 0;
}

size_t hmap_count(const hmap *m)
{
    return m->n + (m->aside != 0);
}
