/* hmap.h - the hash map: open addressing with linear probing in a table of
 * a power-of-two size kept at most half full, so that a lookup is a probe
 * or two whatever an untrusted input holds; two allocations for the table,
 * none per entry. Values are 32 bits: the index of the key's element in
 * the caller's array (what every map of prof holds), or a small number.
 *
 * A map holds one of two kinds of key:
 * - integer keys (hmap_find, hmap_slot): any 64-bit value, compared as is;
 * - keys the caller keeps itself, a string in its own array (hmap_find_by,
 *   hmap_slot_by): the map holds a 64-bit hash of the key (util/hash.h)
 *   beside the value, and an equality test eq(ctx, value) the caller gives
 *   tells apart keys of equal hash, so no key is stored twice.
 * Lookups are inline, so a constant eq is inlined too. A pointer to a value
 * stays valid until the next insertion, removal or clear. A zeroed hmap is
 * an empty map. */
#ifndef PROF_UTIL_HMAP_H
#define PROF_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"

#define HMAP_FREE UINT64_MAX /* the key of a free entry; see hmap.aside */

/* Keys and values in two arrays: a probe reads keys alone, and values stay
 * 4 bytes. Both count: a table of a million call-tree nodes is read at
 * random, and 8-byte values made that lookup a quarter slower. */
typedef struct hmap {
    uint64_t *key;      /* cap keys, HMAP_FREE in free entries             */
    uint32_t *val;      /* cap values                                      */
    size_t cap;         /* 0 or a power of two, 2^bits                     */
    size_t n;           /* entries of key in use                           */
    unsigned bits;
    int aside;          /* integer maps: the key HMAP_FREE, which cannot be
                           in key[], is in the map with the value aside_val */
    uint32_t aside_val;
} hmap;

/* Tells whether the caller's key of value val is the one looked up (ctx
 * says which). */
typedef int (*hmap_eq)(const void *ctx, uint32_t val);

/* Doubles the table (16 entries first). 0, or -1 out of memory, the map
 * unchanged. */
int hmap_grow(hmap *m);
void hmap_free(hmap *m);
/* Empties m. A table of more than 64 entries is freed rather than wiped,
 * so that a map emptied often costs what it holds, not what it once held. */
void hmap_clear(hmap *m);
/* Removes the entry whose value is at val, a pointer that a lookup of m
 * returned (with no insertion or removal since). */
void hmap_remove(hmap *m, uint32_t *val);
/* Iteration, in no particular order: with *it = 0 first, each call gives
 * an entry's key (the hash, for the _by kind) and value and returns 1, then
 * 0 once all were given. The map must not change meanwhile. */
int hmap_next(const hmap *m, size_t *it, uint64_t *key, uint32_t *val);
/* The number of entries. */
size_t hmap_count(const hmap *m);

/* ---- inline lookups ------------------------------------------------------ */

/* The entry of key, accepted by eq when eq is not NULL, or the free entry
 * where it would go. m->cap is not 0 and key is not HMAP_FREE. */
static inline size_t hmap_probe_(const hmap *m, uint64_t key, hmap_eq eq, const void *ctx)
{
    size_t mask = m->cap - 1;
    for (size_t k = hash_top(key, m->bits);; k = (k + 1) & mask) {
        if (m->key[k] == key) {
            if (!eq || eq(ctx, m->val[k]))
                return k;
        } else if (m->key[k] == HMAP_FREE) {
            return k;
        }
    }
}

static inline uint32_t *hmap_find_(const hmap *m, uint64_t key, hmap_eq eq, const void *ctx)
{
    if (!m->cap)
        return NULL;
    size_t k = hmap_probe_(m, key, eq, ctx);
    return m->key[k] == HMAP_FREE ? NULL : &m->val[k];
}

static inline uint32_t *hmap_slot_(hmap *m, uint64_t key, hmap_eq eq, const void *ctx, int *added)
{
    size_t k = 0;
    *added = 0;
    if (m->cap) {
        k = hmap_probe_(m, key, eq, ctx);
        if (m->key[k] != HMAP_FREE)
            return &m->val[k];
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (hmap_grow(m) < 0)
            return NULL;
        k = hmap_probe_(m, key, eq, ctx);
    }
    m->key[k] = key;
    m->val[k] = 0;
    m->n++;
    *added = 1;
    return &m->val[k];
}

/* The hash of a caller-kept key as the table holds it: HMAP_FREE marks
 * free entries, so that one hash is moved next to it (eq tells keys of
 * equal hash apart anyway). */
static inline uint64_t hmap_hash_key_(uint64_t hash)
{
    return hash - (hash == HMAP_FREE);
}

/* ---- integer keys ---------------------------------------------------------- */

/* The value of key, or NULL when it is not in m. */
static inline uint32_t *hmap_find(const hmap *m, uint64_t key)
{
    if (key == HMAP_FREE)
        return m->aside ? (uint32_t *)&m->aside_val : NULL;
    return hmap_find_(m, key, NULL, NULL);
}

/* The value of key, inserted as 0 when absent (*added then 1, else 0), or
 * NULL out of memory. */
static inline uint32_t *hmap_slot(hmap *m, uint64_t key, int *added)
{
    if (key == HMAP_FREE) {
        *added = !m->aside;
        if (!m->aside)
            m->aside_val = 0;
        m->aside = 1;
        return &m->aside_val;
    }
    return hmap_slot_(m, key, NULL, NULL, added);
}

/* ---- keys the caller keeps, by hash ------------------------------------------ */

/* The value of the key of that hash that eq(ctx, value) accepts, or NULL. */
static inline uint32_t *hmap_find_by(const hmap *m, uint64_t hash, hmap_eq eq, const void *ctx)
{
    return hmap_find_(m, hmap_hash_key_(hash), eq, ctx);
}

/* The same, inserting the key when absent, as hmap_slot: the caller then
 * sets the value to what eq recognises (the key's index) before the next
 * lookup. */
static inline uint32_t *hmap_slot_by(hmap *m, uint64_t hash, hmap_eq eq, const void *ctx,
                                     int *added)
{
    return hmap_slot_(m, hmap_hash_key_(hash), eq, ctx, added);
}

#endif
