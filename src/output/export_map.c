/* export_map.c - the open-addressing hash map of export_map.h: linear
 * probing, at most half full. */
#include <stdlib.h>
#include <string.h>

#include "output/export_map.h"

#define SMALL_CAP 16

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return (size_t)key & (cap - 1);
}

void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static int alloc_table(u64map *m, size_t cap)
{
    uint64_t *k = malloc(cap * sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    memset(k, 0xff, cap * sizeof *k);
    m->keys = k;
    m->vals = v;
    m->cap = cap;
    m->n = 0;
    return 0;
}

void u64map_clear(u64map *m)
{
    if (m->n == 0)
        return;
    /* A map that once grew large should not cost its size at every clear. */
    if (m->cap > 4 * SMALL_CAP) {
        u64map_free(m);
        return;
    }
    memset(m->keys, 0xff, m->cap * sizeof *m->keys);
    m->n = 0;
}

static int grow(u64map *m)
{
    u64map old = *m;
    if (alloc_table(m, old.cap ? old.cap * 2 : SMALL_CAP) < 0) {
        *m = old;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++) {
        if (old.keys[i] == U64MAP_EMPTY)
            continue;
        size_t j = slot_of(old.keys[i], m->cap);
        while (m->keys[j] != U64MAP_EMPTY)
            j = (j + 1) & (m->cap - 1);
        m->keys[j] = old.keys[i];
        m->vals[j] = old.vals[i];
        m->n++;
    }
    u64map_free(&old);
    return 0;
}

uint64_t *u64map_find(const u64map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t j = slot_of(key, m->cap);; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == key)
            return &m->vals[j];
        if (m->keys[j] == U64MAP_EMPTY)
            return NULL;
    }
}

uint64_t *u64map_slot(u64map *m, uint64_t key, int *added)
{
    *added = 0;
    uint64_t *v = u64map_find(m, key);
    if (v)
        return v;
    if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
        return NULL;
    size_t j = slot_of(key, m->cap);
    while (m->keys[j] != U64MAP_EMPTY)
        j = (j + 1) & (m->cap - 1);
    m->keys[j] = key;
    m->vals[j] = 0;
    m->n++;
    *added = 1;
    return &m->vals[j];
}
