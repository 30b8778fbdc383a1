/* hmap.c - growing, emptying, removing from and walking the hash map of
 * hmap.h; lookups are inline there. */
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

#define HMAP_FIRST_BITS 4 /* 16 entries in a first table           */
#define HMAP_KEEP 64      /* hmap_clear wipes a table up to this size */

/* The size of the next table: its bits, or 0 when it would not fit. */
static unsigned next_bits(const hmap *m)
{
    unsigned bits = m->cap ? m->bits + 1 : HMAP_FIRST_BITS;
    return bits < 8 * sizeof(size_t) - 4 ? bits : 0; /* cap * 8 bytes fit */
}

int hmap_grow(hmap *m)
{
    unsigned bits = next_bits(m);
    size_t cap = (size_t)1 << bits, mask = cap - 1;
    uint64_t *key = bits ? malloc(cap * sizeof *key) : NULL;
    uint32_t *val = bits ? malloc(cap * sizeof *val) : NULL;
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    memset(key, 0xFF, cap * sizeof *key); /* every key HMAP_FREE */
    for (size_t i = 0; i < m->cap; i++) {
        if (m->key[i] == HMAP_FREE)
            continue;
        size_t k = hash_top(m->key[i], bits);
        while (key[k] != HMAP_FREE)
            k = (k + 1) & mask;
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

/* Puts value v, whose key has hash h, into the table val of 2^bits. */
static void put_by(uint32_t *val, unsigned bits, uint64_t h, uint32_t v)
{
    size_t mask = ((size_t)1 << bits) - 1, k = hmap_home_by_(h, mask);
    while (val[k] != HMAP_NONE)
        k = (k + 1) & mask;
    val[k] = v;
}

/* Moves the values of m into val (2^bits) in increasing order, so that
 * hash reads the caller's elements in their array's order rather than at
 * random (which made growing an index of 400,000 names cost more than all
 * its lookups). 0, or -1 when the values are too sparse for a bitmap of
 * them, or it cannot be had. */
static int move_in_order(const hmap *m, uint32_t *val, unsigned bits, hmap_hash hash,
                         const void *ctx)
{
    uint32_t top = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->val[i] != HMAP_NONE && m->val[i] > top)
            top = m->val[i];
    if (top / 8 > m->cap) /* a bitmap bigger than the table */
        return -1;
    size_t words = (size_t)top / 64 + 1;
    uint64_t *seen = calloc(words, sizeof *seen);
    if (!seen)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->val[i] != HMAP_NONE)
            seen[m->val[i] / 64] |= UINT64_C(1) << (m->val[i] % 64);
    for (size_t w = 0; w < words; w++)
        for (uint64_t b = seen[w]; b; b &= b - 1) {
            uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
            put_by(val, bits, hash(ctx, v), v);
        }
    free(seen);
    return 0;
}

int hmap_grow_by(hmap *m, hmap_hash hash, const void *ctx)
{
    unsigned bits = next_bits(m);
    size_t cap = (size_t)1 << bits;
    uint32_t *val = bits ? malloc(cap * sizeof *val) : NULL;
    if (!val)
        return -1;
    memset(val, 0xFF, cap * sizeof *val); /* every value HMAP_NONE */
    if (m->n && move_in_order(m, val, bits, hash, ctx) < 0)
        for (size_t i = 0; i < m->cap; i++)
            if (m->val[i] != HMAP_NONE)
                put_by(val, bits, hash(ctx, m->val[i]), m->val[i]);
    free(m->val);
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
    if (m->key)
        memset(m->key, 0xFF, m->cap * sizeof *m->key);
    else
        memset(m->val, 0xFF, m->cap * sizeof *m->val);
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

void hmap_remove_by(hmap *m, uint32_t *val, hmap_hash hash, const void *ctx)
{
    size_t mask = m->cap - 1, i = (size_t)(val - m->val);
    for (size_t j = (i + 1) & mask; m->val[j] != HMAP_NONE; j = (j + 1) & mask) {
        if (may_fill(hmap_home_by_(hash(ctx, m->val[j]), mask), i, j)) {
            m->val[i] = m->val[j];
            i = j;
        }
    }
    m->val[i] = HMAP_NONE;
    m->n--;
}

