/* util_hmap.c - the hash map against a plain reference: integer keys of
 * every kind (0, HMAP_FREE, pairs), index maps over the caller's names
 * told apart by eq when their hashes collide, removal in the middle of
 * probe runs and across the table's end, iteration, clearing, and a table
 * that stays at most half full. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

/* What the tests read of an integer map through its fields: its entries,
 * in no particular order (with *it = 0 first, 1 for each, then 0), and
 * their number. */
static int hmap_next(const hmap *m, size_t *it, uint64_t *key, uint32_t *val)
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

static size_t hmap_count(const hmap *m)
{
    return m->n + (m->aside != 0);
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

Test(util_hmap, empty_map)
{
    hmap m = { 0 };
    size_t it = 0;
    uint64_t k;
    uint32_t v;
    cr_assert_null(hmap_find(&m, 0));
    cr_assert_null(hmap_find(&m, HMAP_FREE));
    cr_assert_eq(hmap_next(&m, &it, &k, &v), 0);
    cr_assert_eq(hmap_count(&m), 0);
    hmap_clear(&m);
    hmap_free(&m);
}

Test(util_hmap, integer_keys_insert_find)
{
    hmap m = { 0 };
    int added;
    for (uint64_t i = 0; i < 50000; i++) {
        uint64_t key = i << 32 | (i * 7 % 13); /* parent << 32 | op */
        uint32_t *v = hmap_slot(&m, key, &added);
        cr_assert_not_null(v);
        cr_assert_eq(added, 1);
        cr_assert_eq(*v, 0u);
        *v = (uint32_t)i;
        cr_assert_leq(2 * m.n, m.cap, "at most half full");
    }
    cr_assert_eq(hmap_count(&m), 50000u);
    for (uint64_t i = 0; i < 50000; i++) {
        uint64_t key = i << 32 | (i * 7 % 13);
        uint32_t *v = hmap_find(&m, key);
        cr_assert_not_null(v);
        cr_assert_eq(*v, i);
        cr_assert_eq(hmap_slot(&m, key, &added), v);
        cr_assert_eq(added, 0);
        cr_assert_null(hmap_find(&m, key ^ (UINT64_C(1) << 63)));
    }
    hmap_free(&m);
    cr_assert_eq(m.cap, 0);
}

/* The one key a free entry is marked with is a key like the others. */
Test(util_hmap, every_key_value_storable)
{
    hmap m = { 0 };
    int added;
    uint64_t keys[] = { 0, 1, HMAP_FREE, HMAP_FREE - 1, UINT64_C(1) << 63 };
    for (size_t i = 0; i < 5; i++) {
        uint32_t *v = hmap_slot(&m, keys[i], &added);
        cr_assert(v && added);
        *v = UINT32_MAX - (uint32_t)i;
    }
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(*hmap_find(&m, keys[i]), UINT32_MAX - i);
        cr_assert_eq(*hmap_slot(&m, keys[i], &added), UINT32_MAX - i);
        cr_assert_eq(added, 0);
    }
    cr_assert_eq(hmap_count(&m), 5);
    size_t it = 0, seen = 0;
    uint64_t k;
    uint32_t v;
    while (hmap_next(&m, &it, &k, &v)) {
        size_t i = 0;
        while (i < 5 && keys[i] != k)
            i++;
        cr_assert_lt(i, 5u);
        cr_assert_eq(v, UINT32_MAX - i);
        seen++;
    }
    cr_assert_eq(seen, 5);
    hmap_remove(&m, hmap_find(&m, HMAP_FREE));
    cr_assert_null(hmap_find(&m, HMAP_FREE));
    cr_assert_eq(hmap_count(&m), 4);
    hmap_clear(&m);
    cr_assert_eq(hmap_count(&m), 0);
    cr_assert_null(hmap_find(&m, 0));
    hmap_free(&m);
}

/* Random inserts and removals over a small key range (long probe runs,
 * removals inside them and across the end of the table) against an array
 * indexed by key. */
Test(util_hmap, removal_against_reference)
{
    enum { RANGE = 3000 };
    static uint64_t ref[RANGE]; /* value + 1, 0 absent */
    hmap m = { 0 };
    uint64_t s = 88172645463325252u;
    size_t count = 0;
    for (int step = 0; step < 400000; step++) {
        uint64_t key = next_rand(&s) % RANGE, r = next_rand(&s);
        uint32_t *v = hmap_find(&m, key);
        cr_assert_eq(v != NULL, ref[key] != 0, "step %d key %llu", step, (unsigned long long)key);
        if (v)
            cr_assert_eq(*v + UINT64_C(1), ref[key]);
        if (r % 3 == 0 && v) {
            hmap_remove(&m, v);
            ref[key] = 0;
            count--;
        } else if (!v) {
            int added;
            v = hmap_slot(&m, key, &added);
            cr_assert(v && added);
            *v = (uint32_t)r;
            ref[key] = (uint32_t)r + UINT64_C(1);
            count++;
        }
        cr_assert_eq(hmap_count(&m), count);
    }
    for (uint64_t key = 0; key < RANGE; key++) {
        uint32_t *v = hmap_find(&m, key);
        cr_assert_eq(v != NULL, ref[key] != 0);
    }
    size_t it = 0, seen = 0;
    uint64_t k;
    uint32_t v;
    while (hmap_next(&m, &it, &k, &v)) {
        cr_assert_eq(v + UINT64_C(1), ref[k]);
        seen++;
    }
    cr_assert_eq(seen, count);
    hmap_free(&m);
}

/* Keys found to land where wanted in the first table (16 entries): 14
 * (three of them) and 0. Removing the first of those at 14 and 15 moves
 * the one that probed past the end back to 15, and leaves the key of home
 * 0 where it is. */
Test(util_hmap, removal_across_the_end)
{
    uint64_t at14[3], at0 = 0, k = 1;
    for (int n = 0; n < 3; k++)
        if (hash_top(k, 4) == 14)
            at14[n++] = k;
    while (hash_top(at0, 4) != 0 || at0 == 0)
        at0++;
    hmap m = { 0 };
    int added;
    uint64_t order[4] = { at14[0], at14[1], at0, at14[2] };
    for (int i = 0; i < 4; i++)
        *hmap_slot(&m, order[i], &added) = (uint32_t)i;
    cr_assert_eq(m.cap, 16);
    cr_assert_eq(m.key[1], at14[2], "the third key of home 14 wrapped to 1");
    hmap_remove(&m, hmap_find(&m, at14[0]));
    cr_assert_eq(m.key[14], at14[1]);
    cr_assert_eq(m.key[15], at14[2]);
    cr_assert_eq(m.key[0], at0);
    cr_assert_eq(m.key[1], HMAP_FREE);
    for (int i = 1; i < 4; i++)
        cr_assert_eq(*hmap_find(&m, order[i]), (uint32_t)i);
    cr_assert_null(hmap_find(&m, at14[0]));
    hmap_free(&m);
}

/* ---- index maps: keys kept by the caller ------------------------------------------------ */

typedef struct names {
    const char **v;
    const char *want;
    uint64_t (*hash)(const char *);
} names;

static int name_eq(const void *ctx, uint32_t val)
{
    const names *n = ctx;
    return strcmp(n->v[val], n->want) == 0;
}

static uint64_t name_hash(const void *ctx, uint32_t val)
{
    const names *n = ctx;
    return n->hash(n->v[val]);
}

static uint64_t fnv(const char *s)
{
    return hash_fnv1a_str(s, NULL);
}

static uint64_t collide(const char *s)
{
    return (uint64_t)(strlen(s) % 3); /* most names share a hash */
}

static uint64_t worst(const char *s)
{
    (void)s;
    return HMAP_FREE; /* every one */
}

/* One hash, whose run crosses the end of the table: 2000 keys make a table
 * of 4096 entries, and an index map takes a slot from a hash's low bits. */
static uint64_t wraps(const char *s)
{
    (void)s;
    return UINT64_C(0xABCD) << 32 | 4090;
}

static void interns(uint64_t (*hash)(const char *))
{
    enum { N = 2000 };
    static char text[N][16];
    static const char *v[N];
    hmap m = { 0 };
    names ctx = { v, NULL, hash };
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < N; i++) {
            snprintf(text[i], sizeof text[i], "op.%zu", i);
            ctx.want = text[i];
            int added;
            uint32_t *val = hmap_slot_by(&m, hash(text[i]), name_eq, name_hash, &ctx, &added);
            cr_assert_not_null(val);
            cr_assert_eq(added, round == 0, "%s", text[i]);
            if (added) {
                v[i] = text[i];
                *val = (uint32_t)i;
            }
            cr_assert_eq(*val, i);
        }
    for (size_t i = 0; i < N; i += 2) {
        ctx.want = text[i];
        hmap_remove_by(&m, hmap_find_by(&m, hash(text[i]), name_eq, &ctx), name_hash, &ctx);
    }
    for (size_t i = 0; i < N; i++) {
        ctx.want = text[i];
        uint32_t *val = hmap_find_by(&m, hash(text[i]), name_eq, &ctx);
        cr_assert_eq(val != NULL, i % 2 == 1, "%s", text[i]);
        if (val)
            cr_assert_eq(*val, i);
    }
    ctx.want = "absent";
    cr_assert_null(hmap_find_by(&m, hash("absent"), name_eq, &ctx));
    cr_assert_eq(hmap_count(&m), N / 2);
    hmap_free(&m);
}

Test(util_hmap, caller_keys_by_hash)
{
    interns(fnv);
}

Test(util_hmap, caller_keys_colliding_hashes)
{
    interns(collide);
}

Test(util_hmap, caller_keys_all_one_hash)
{
    interns(worst);
}

Test(util_hmap, caller_keys_run_across_the_end)
{
    interns(wraps);
}

Test(util_hmap, index_map_clear)
{
    const char *v[] = { "a", "b", "c" };
    names ctx = { v, NULL, fnv };
    hmap m = { 0 };
    int added;
    for (uint32_t i = 0; i < 3; i++) {
        ctx.want = v[i];
        cr_assert_null(hmap_find_by(&m, fnv(v[i]), name_eq, &ctx));
        *hmap_slot_by(&m, fnv(v[i]), name_eq, name_hash, &ctx, &added) = i;
    }
    cr_assert_eq(hmap_count(&m), 3);
    cr_assert_null(m.key, "an index map keeps no keys");
    hmap_clear(&m);
    cr_assert_eq(hmap_count(&m), 0);
    ctx.want = "b";
    cr_assert_null(hmap_find_by(&m, fnv("b"), name_eq, &ctx));
    *hmap_slot_by(&m, fnv("b"), name_eq, name_hash, &ctx, &added) = 1;
    cr_assert_eq(added, 1);
    cr_assert_eq(*hmap_find_by(&m, fnv("b"), name_eq, &ctx), 1u);
    hmap_free(&m);
}

/* Values far apart (not indexes of one array) grow the table as well as
 * dense ones, which it moves in their order. */
static const char *sparse_want;

static int sparse_eq(const void *ctx, uint32_t val)
{
    (void)ctx;
    return val / 100000 == (uint32_t)atoi(sparse_want);
}

static uint64_t sparse_hash(const void *ctx, uint32_t val)
{
    char buf[16];
    (void)ctx;
    snprintf(buf, sizeof buf, "%u", val / 100000);
    return hash_fnv1a_str(buf, NULL);
}

Test(util_hmap, index_map_sparse_values)
{
    hmap m = { 0 };
    char buf[16];
    int added;
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "%u", i);
        sparse_want = buf;
        uint32_t *v = hmap_slot_by(&m, hash_fnv1a_str(buf, NULL), sparse_eq, sparse_hash, NULL,
                                   &added);
        cr_assert(v && added);
        *v = i * 100000 + 7;
    }
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "%u", i);
        sparse_want = buf;
        uint32_t *v = hmap_find_by(&m, hash_fnv1a_str(buf, NULL), sparse_eq, NULL);
        cr_assert_not_null(v, "%u", i);
        cr_assert_eq(*v, i * 100000 + 7);
    }
    hmap_free(&m);
}

/* A map emptied over and over (a level of the folded export): what it
 * once held is let go. */
Test(util_hmap, clear_lets_big_tables_go)
{
    hmap m = { 0 };
    int added;
    for (uint64_t i = 0; i < 10; i++)
        *hmap_slot(&m, i, &added) = (uint32_t)i;
    size_t small = m.cap;
    hmap_clear(&m);
    cr_assert_eq(m.cap, small, "a small table is kept");
    cr_assert_null(hmap_find(&m, 3));
    for (uint64_t i = 0; i < 1000; i++)
        *hmap_slot(&m, i, &added) = (uint32_t)i;
    hmap_clear(&m);
    cr_assert_eq(m.cap, 0, "a big one is freed");
    cr_assert_eq(hmap_count(&m), 0);
    cr_assert_not_null(hmap_slot(&m, 5, &added));
    cr_assert_eq(added, 1);
    hmap_free(&m);
}
