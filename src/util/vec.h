/* vec.h - the growable array: a pointer, a count kept by the caller and a
 * capacity, grown by doubling. One helper for every array that grows as
 * records come, so the overflow checks are written once. */
#ifndef PROF_UTIL_VEC_H
#define PROF_UTIL_VEC_H

#include <stddef.h>

/* The out-of-line part of vec_grow and vec_grow_zero (vec.c). */
int vec_grow_slow(void *arrayp, size_t *cap, size_t n, size_t size, int zero);
/* The same, a first allocation holding `first` elements rather than 8. */
int vec_grow_first(void *arrayp, size_t *cap, size_t n, size_t size, int zero, size_t first);

/* Grows the array whose pointer is at arrayp (any object pointer type;
 * elements of `size` bytes, capacity *cap) to hold at least n + 1
 * elements, so that element n can be written: capacity doubles from 8.
 * 0, or -1 when out of memory or when the size would overflow, the array
 * and *cap then unchanged. The test of the common case is inline: an
 * append costs a compare. */
static inline int vec_grow(void *arrayp, size_t *cap, size_t n, size_t size)
{
    return n < *cap ? 0 : vec_grow_slow(arrayp, cap, n, size, 0);
}

/* vec_grow for arrays that most often stay tiny and of which there are
 * very many (one per thread of a trace): the first allocation holds one
 * element, then doubles. */
static inline int vec_grow_small(void *arrayp, size_t *cap, size_t n, size_t size)
{
    return n < *cap ? 0 : vec_grow_first(arrayp, cap, n, size, 0, 1);
}

/* The same, with the elements gained set to zero bytes: for arrays
 * indexed by an id, where a slot never written must read as empty. */
static inline int vec_grow_zero(void *arrayp, size_t *cap, size_t n, size_t size)
{
    return n < *cap ? 0 : vec_grow_slow(arrayp, cap, n, size, 1);
}

#endif
