/* export_map.h - a small open-addressing hash map from 64-bit keys to
 * 64-bit values, for the export formats' bounded bookkeeping: the GPU
 * streams already named in a Chrome trace, the stacks of folded output. */
#ifndef PROF_OUTPUT_EXPORT_MAP_H
#define PROF_OUTPUT_EXPORT_MAP_H

#include <stddef.h>
#include <stdint.h>

#define U64MAP_EMPTY UINT64_MAX /* the one key that cannot be stored */

typedef struct u64map {
    uint64_t *keys; /* U64MAP_EMPTY marks a free slot */
    uint64_t *vals;
    size_t cap;     /* a power of two, or 0 */
    size_t n;
} u64map;

/* A zeroed u64map is empty and valid. */
void u64map_free(u64map *m);
/* Empties the map (keeping a small allocation). */
void u64map_clear(u64map *m);
/* The value slot of key, inserted as 0 when absent (*added then set to 1).
 * NULL when out of memory. */
uint64_t *u64map_slot(u64map *m, uint64_t key, int *added);
/* The value slot of key, or NULL when absent. */
uint64_t *u64map_find(const u64map *m, uint64_t key);

#endif
