/* hash.h - the hash functions every table uses: FNV-1a over bytes (names,
 * thread keys of traces), a faster one for names looked up per event, and
 * a multiplicative mixer for integers. One
 * definition each, so that a value written to a profile from a hash (the
 * thread key of a trace's string tid) is the same wherever it is made. */
#ifndef PROF_UTIL_HASH_H
#define PROF_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_FNV1A_BASIS UINT64_C(0xcbf29ce484222325)
#define HASH_FNV1A_PRIME UINT64_C(0x100000001b3)

/* 2^64 / golden ratio, odd: multiplying by it is a bijection of uint64_t. */
#define HASH_GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* FNV-1a (64 bits) of n bytes, continuing from h (HASH_FNV1A_BASIS to
 * start): cheap for the short names of profiles, and what a C caller and a
 * script can both compute. */
static inline uint64_t hash_fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * HASH_FNV1A_PRIME;
    return h;
}

static inline uint64_t hash_fnv1a(const void *p, size_t n)
{
    return hash_fnv1a_more(HASH_FNV1A_BASIS, p, n);
}

/* FNV-1a of a NUL-terminated string, its length in *len when len is not
 * NULL: one pass where strlen and hashing would take two. */
static inline uint64_t hash_fnv1a_str(const char *s, size_t *len)
{
    uint64_t h = HASH_FNV1A_BASIS;
    const unsigned char *p = (const unsigned char *)s;
    while (*p)
        h = (h ^ *p++) * HASH_FNV1A_PRIME;
    if (len)
        *len = (size_t)(p - (const unsigned char *)s);
    return h;
}

/* A hash of n bytes for tables that live in memory only (never written
 * anywhere, so it may differ between machines): eight bytes a step, a
 * few times FNV-1a's speed on names of tens of bytes, which matters
 * where every event of a trace looks its name up. */
static inline uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = HASH_FNV1A_BASIS ^ ((uint64_t)n * HASH_GOLDEN), w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * HASH_GOLDEN;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * HASH_GOLDEN;
    return h ^ (h >> 32);
}

/* Fibonacci hashing: x times HASH_GOLDEN, of which a table takes the TOP
 * bits (hash_top): they depend on every bit of x, where the low ones only
 * on the low bits of x. So keys that differ only in their upper half (a
 * parent << 32 | child pair, pointers a page apart) still spread. */
static inline uint64_t hash_mix(uint64_t x)
{
    return x * HASH_GOLDEN;
}

/* The top `bits` bits (1 to 63) of hash_mix(x): a slot in a table of
 * 2^bits. */
static inline size_t hash_top(uint64_t x, unsigned bits)
{
    return (size_t)(hash_mix(x) >> (64 - bits));
}

#endif
