/* hmap.h - the hash map: open addressing with linear probing in a table of
 * a power-of-two size kept at most half full, so that a lookup is a probe
 * or two whatever an untrusted input holds; one or two allocations for the
 * table, none per entry. Values are 32 bits: the index of the key's element
 * in the caller's array (what every map of prof holds), or a small number.
 *
 * A map is of one of two kinds, as the tables it replaced were:
 * - integer maps (hmap_find, hmap_slot): any 64-bit key, kept in the table
 *   beside its value (a call-tree node by parent << 32 | op, a thread by
 *   key, a sync by correlation): 12 bytes an entry, a probe reads keys;
 * - index maps (hmap_find_by, hmap_slot_by): the key is in the caller's
 *   element (a name in its array of names), so the table holds the index
 *   alone, 4 bytes an entry; a lookup gives the key's hash (one whose low
 *   bits vary: FNV-1a, util/hash.h) and eq(ctx, val) to compare the
 *   element at val with the key sought, and growing the table asks
 *   hash(ctx, val) where each element's key now goes. No key is stored
 *   twice, and a table of a million names stays small enough for the
 *   caches (12-byte entries made such an import a fifth slower).
 * Lookups are inline, so constant eq and hash functions are inlined too. A
 * pointer to a value stays valid until the next insertion, removal or
 * clear. A zeroed hmap is an empty map of either kind. */
#ifndef PROF_UTIL_HMAP_H
#define PROF_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

#define HMAP_FREE UINT64_MAX /* integer maps: the key of a free entry (see aside) */
#define HMAP_NONE UINT32_MAX /* index maps: the value of a free entry, never a value */

/* Keys and values in two arrays: a probe reads keys alone, and values stay
 * 4 bytes. Both count: a table of a million call-tree nodes is read at
 * random, and 8-byte values made that lookup a quarter slower. */
typedef struct hmap {
    uint64_t *key;      /* integer maps: cap keys; index maps: NULL        */
    uint32_t *val;      /* cap values                                      */
    size_t cap;         /* 0 or a power of two, 2^bits                     */
    size_t n;           /* entries in the table                            */
    unsigned bits;
    int aside;          /* integer maps: the key HMAP_FREE, which cannot be
                           in key[], is in the map with the value aside_val */
    uint32_t aside_val;
} hmap;

/* Index maps: whether the key of the caller's element val is the one
 * sought (ctx says which), and the hash of that key. */
typedef int (*hmap_eq)(const void *ctx, uint32_t val);
typedef uint64_t (*hmap_hash)(const void *ctx, uint32_t val);

/* Double the table (16 entries first): an integer map, and an index map
 * (the hash of each element asked of hash). 0, or -1 out of memory, the
 * map unchanged. Lookups that insert call them. */
int hmap_grow(hmap *m);
int hmap_grow_by(hmap *m, hmap_hash hash, const void *ctx);
void hmap_free(hmap *m);
/* Empties m. A table of more than 64 entries is freed rather than wiped,
 * so that a map emptied often costs what it holds, not what it once held. */
void hmap_clear(hmap *m);
/* Remove the entry whose value is at val, a pointer that a lookup of m
 * returned with no insertion or removal since: of an integer map, of an
 * index map. */
void hmap_remove(hmap *m, uint32_t *val);
void hmap_remove_by(hmap *m, uint32_t *val, hmap_hash hash, const void *ctx);

/* ---- integer maps ------------------------------------------------------------ */

/* The entry of key, or the free entry where it would go. m->cap is not 0
 * and key is not HMAP_FREE. */
static inline size_t hmap_probe_(const hmap *m, uint64_t key)
{
    size_t mask = m->cap - 1, k = hash_top(key, m->bits);
    while (m->key[k] != key && m->key[k] != HMAP_FREE)
        k = (k + 1) & mask;
    return k;
}

/* The value of key, or NULL when it is not in m. */
static inline uint32_t *hmap_find(const hmap *m, uint64_t key)
{
    if (key == HMAP_FREE)
        return m->aside ? (uint32_t *)&m->aside_val : NULL;
    if (!m->cap)
        return NULL;
    size_t k = hmap_probe_(m, key);
    return m->key[k] == HMAP_FREE ? NULL : &m->val[k];
}

/* The value of key, inserted as 0 when absent (*added then 1, else 0), or
 * NULL out of memory. */
static inline uint32_t *hmap_slot(hmap *m, uint64_t key, int *added)
{
    size_t k = 0;
    *added = 0;
    if (key == HMAP_FREE) {
        *added = !m->aside;
        if (!m->aside)
            m->aside_val = 0;
        m->aside = 1;
        return &m->aside_val;
    }
    if (m->cap) {
        k = hmap_probe_(m, key);
        if (m->key[k] != HMAP_FREE)
            return &m->val[k];
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (hmap_grow(m) < 0)
            return NULL;
        k = hmap_probe_(m, key);
    }
    m->key[k] = key;
    m->val[k] = 0;
    m->n++;
    *added = 1;
    return &m->val[k];
}

/* ---- index maps -------------------------------------------------------------- */

/* The home entry of a key of an index map. Its hash is a hash already
 * (FNV-1a of a name), so its low bits are the slot, as the tables of names
 * took them; an integer key is mixed first (hash_top). */
static inline size_t hmap_home_by_(uint64_t hash, size_t mask)
{
    return (size_t)hash & mask;
}

/* The entry of the key eq accepts, or the free entry where it would go.
 * m->cap is not 0. */
static inline size_t hmap_probe_by_(const hmap *m, uint64_t hash, hmap_eq eq, const void *ctx)
{
    size_t mask = m->cap - 1, k = hmap_home_by_(hash, mask);
    while (m->val[k] != HMAP_NONE && !eq(ctx, m->val[k]))
        k = (k + 1) & mask;
    return k;
}

/* The value whose element has the key of that hash that eq accepts, or
 * NULL. */
static inline uint32_t *hmap_find_by(const hmap *m, uint64_t hash, hmap_eq eq, const void *ctx)
{
    if (!m->cap)
        return NULL;
    size_t k = hmap_probe_by_(m, hash, eq, ctx);
    return m->val[k] == HMAP_NONE ? NULL : &m->val[k];
}

/* The same, inserting the key when absent, as hmap_slot (hash gives the
 * hashes of the elements already in when the table grows). The caller
 * then sets the value, below HMAP_NONE, to the index of the key's element
 * before the next lookup, or removes it. */
static inline uint32_t *hmap_slot_by(hmap *m, uint64_t hash, hmap_eq eq, hmap_hash rehash,
                                     const void *ctx, int *added)
{
    size_t k = 0;
    *added = 0;
    if (m->cap) {
        k = hmap_probe_by_(m, hash, eq, ctx);
        if (m->val[k] != HMAP_NONE)
            return &m->val[k];
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (hmap_grow_by(m, rehash, ctx) < 0)
            return NULL;
        k = hmap_probe_by_(m, hash, eq, ctx);
    }
    m->val[k] = 0;
    m->n++;
    *added = 1;
    return &m->val[k];
}

#endif
