/* hmap.c - growing, emptying, removing from and walking the hash map of
 * hmap.h; lookups are inline there. */
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

#define HMAP_FIRST_BITS 4 /* 16 entries in a first table           */
#define HMAP_KEEP 64      /* hmap_clear wipes a table up to this size */

int hmap_grow(hmap *m)
{
    unsigned bits = m->cap ? m->bits + 1 : HMAP_FIRST_BITS;
    if (bits >= 8 * sizeof(size_t) - 4) /* cap * 8 bytes of keys must fit */
        return -1;
    size_t cap = (size_t)1 << bits;
    uint64_t *key = malloc(cap * sizeof *key);
    uint32_t *val = malloc(cap * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    memset(key, 0xFF, cap * sizeof *key); /* every key HMAP_FREE */
    /* into the first free entry: keys kept by the caller may share a hash */
    for (size_t i = 0; i < m->cap; i++) {
        if (m->key[i] == HMAP_FREE)
            continue;
        size_t k = hash_top(m->key[i], bits);
        while (key[k] != HMAP_FREE)
            k = (k + 1) & (cap - 1);
        key[k] = m->key[i];
        val[k] = m->val[i];
    }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    m->bits = bits;
    return 0;
}

void hmap_free(hmap *m)
{
    free(m->key);
    free(m->val);
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
    memset(m->key, 0xFF, m->cap * sizeof *m->key);
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
void hmap_remove(hmap *m, uint32_t *val)
{
    if (val == &m->aside_val) {
        m->aside = 0;
        return;
    }
    size_t mask = m->cap - 1, i = (size_t)(val - m->val);
    for (size_t j = (i + 1) & mask; m->key[j] != HMAP_FREE; j = (j + 1) & mask) {
        if (may_fill(hash_top(m->key[j], m->bits), i, j)) {
            m->key[i] = m->key[j];
            m->val[i] = m->val[j];
            i = j;
        }
    }
    m->key[i] = HMAP_FREE;
    m->n--;
}

int hmap_next(const hmap *m, size_t *it, uint64_t *key, uint32_t *val)
{
    for (; *it < m->cap; ++*it)
        if (m->key[*it] != HMAP_FREE) {
            *key = m->key[*it];
            *val = m->val[(*it)++];
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
