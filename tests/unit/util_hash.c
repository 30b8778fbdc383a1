/* util_hash.c - FNV-1a gives the published 64-bit values, continues across
 * split input and measures a string as it hashes it; the mixer is a
 * bijection whose top bits spread keys that differ only in their upper
 * half (parent << 32 | child pairs). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "util/hash.h"

Test(util_hash, fnv1a_published_values)
{
    cr_assert_eq(hash_fnv1a("", 0), UINT64_C(0xcbf29ce484222325));
    cr_assert_eq(hash_fnv1a("a", 1), UINT64_C(0xaf63dc4c8601ec8c));
    cr_assert_eq(hash_fnv1a("foobar", 6), UINT64_C(0x85944171f73967e8));
    /* what the Kineto importer makes of a string tid, written to profiles */
    cr_assert_eq(hash_fnv1a("pt_main_thread", 14), UINT64_C(0x5ab3bddcb64d0bbc));
}

Test(util_hash, fnv1a_continues_and_measures)
{
    const char *s = "aten::convolution_backward";
    size_t n = strlen(s), len = 0;
    uint64_t whole = hash_fnv1a(s, n);
    for (size_t cut = 0; cut <= n; cut++)
        cr_assert_eq(hash_fnv1a_more(hash_fnv1a(s, cut), s + cut, n - cut), whole);
    cr_assert_eq(hash_fnv1a_str(s, &len), whole);
    cr_assert_eq(len, n);
    cr_assert_eq(hash_fnv1a_str(s, NULL), whole);
    cr_assert_eq(hash_fnv1a_str("", &len), hash_fnv1a("", 0));
    cr_assert_eq(len, 0);
    /* bytes are unsigned: a UTF-8 name hashes as its bytes */
    cr_assert_eq(hash_fnv1a_str("\xc3\xa9", NULL), hash_fnv1a("\xc3\xa9", 2));
}

Test(util_hash, mix_is_a_bijection)
{
    const uint64_t inverse = UINT64_C(0xf1de83e19937733d); /* of HASH_GOLDEN mod 2^64 */
    uint64_t x = 1;
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(hash_mix(x) * inverse, x);
        cr_assert_neq(hash_mix(x), hash_mix(x + 1));
        x = x * 6364136223846793005u + 1442695040888963407u;
    }
    cr_assert_eq(hash_mix(0), 0u);
}

/* Keys that differ only above bit 32 (the parent of a parent << 32 | op
 * pair) land in many slots, not in one. */
Test(util_hash, top_bits_spread_upper_halves)
{
    static unsigned char used[1024];
    size_t distinct = 0;
    for (uint64_t parent = 0; parent < 1024; parent++) {
        size_t k = hash_top(parent << 32 | 7u, 10);
        cr_assert_lt(k, 1024u);
        distinct += !used[k];
        used[k] = 1;
    }
    cr_assert_gt(distinct, 600u, "%zu slots of 1024", distinct);
    cr_assert_eq(hash_top(UINT64_MAX, 1) >> 1, 0u);
    cr_assert_eq(hash_top(UINT64_MAX, 63) >> 63, 0u);
}
