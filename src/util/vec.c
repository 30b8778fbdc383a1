/* vec.c - growing the arrays of vec.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define VEC_FIRST 8 /* elements of a first allocation */

int vec_grow_slow(void *arrayp, size_t *cap, size_t n, size_t size, int zero)
{
    return vec_grow_first(arrayp, cap, n, size, zero, VEC_FIRST);
}

int vec_grow_first(void *arrayp, size_t *cap, size_t n, size_t size, int zero, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap : first ? first : 1;
    while (c <= n) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (size == 0 || c > SIZE_MAX / size)
        return -1;
    void *p;
    memcpy(&p, arrayp, sizeof p); /* any object pointer, without type punning */
    p = realloc(p, c * size);
    if (!p)
        return -1;
    if (zero)
        memset((char *)p + *cap * size, 0, (c - *cap) * size);
    memcpy(arrayp, &p, sizeof p);
    *cap = c;
    return 0;
}
