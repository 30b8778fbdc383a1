/* util_vec.c - the growable array: grows to hold the element asked for,
 * doubling; keeps its contents; zeroes what it gains when asked; refuses
 * sizes that overflow, leaving the array as it was. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/vec.h"

Test(util_vec, append_keeps_contents)
{
    uint64_t *v = NULL;
    size_t n = 0, cap = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        cr_assert_eq(vec_grow(&v, &cap, n, sizeof *v), 0);
        cr_assert_gt(cap, n);
        v[n++] = i * 3;
    }
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i], i * 3);
    cr_assert_eq(cap & (cap - 1), 0, "capacity %zu doubles from a power of two", cap);
    cr_assert_lt(cap, 2 * n);
    free(v);
}

Test(util_vec, room_already_there_changes_nothing)
{
    int *v = NULL;
    size_t cap = 0;
    cr_assert_eq(vec_grow(&v, &cap, 0, sizeof *v), 0);
    cr_assert_eq(cap, 8);
    int *before = v;
    cr_assert_eq(vec_grow(&v, &cap, 7, sizeof *v), 0);
    cr_assert_eq(v, before);
    cr_assert_eq(cap, 8);
    cr_assert_eq(vec_grow(&v, &cap, 8, sizeof *v), 0);
    cr_assert_eq(cap, 16);
    /* a jump: element 1000 at once */
    cr_assert_eq(vec_grow(&v, &cap, 1000, sizeof *v), 0);
    cr_assert_eq(cap, 1024);
    v[1000] = 1;
    free(v);
}

Test(util_vec, zeroes_what_it_gains)
{
    uint32_t *v = NULL;
    size_t cap = 0;
    cr_assert_eq(vec_grow_zero(&v, &cap, 3, sizeof *v), 0);
    for (size_t i = 0; i < cap; i++)
        cr_assert_eq(v[i], 0u);
    for (size_t i = 0; i < cap; i++)
        v[i] = 0xABCDu;
    size_t old = cap;
    cr_assert_eq(vec_grow_zero(&v, &cap, 5000, sizeof *v), 0);
    for (size_t i = 0; i < cap; i++)
        cr_assert_eq(v[i], i < old ? 0xABCDu : 0u, "element %zu", i);
    free(v);
}

Test(util_vec, overflow_is_refused_and_harmless)
{
    char *v = NULL;
    size_t cap = 0;
    cr_assert_eq(vec_grow(&v, &cap, 10, 1), 0);
    char *before = v;
    cr_assert_eq(vec_grow(&v, &cap, SIZE_MAX - 1, 1), -1);
    cr_assert_eq(v, before);
    cr_assert_eq(cap, 16);
    cr_assert_eq(vec_grow(&v, &cap, 100, SIZE_MAX / 8), -1);
    cr_assert_eq(vec_grow_zero(&v, &cap, 16, SIZE_MAX / 16), -1);
    cr_assert_eq(cap, 16);
    void *none = NULL;
    size_t zero = 0;
    cr_assert_eq(vec_grow(&none, &zero, 0, SIZE_MAX / 4), -1, "8 elements would overflow");
    cr_assert_eq(vec_grow(&none, &zero, 0, 0), -1);
    cr_assert_null(none);
    cr_assert_eq(zero, 0);
    free(v);
}

/* The arrays a trace has one of per thread start at one element, so that
 * a hundred thousand threads of one event each cost little. */
Test(util_vec, small_arrays_start_at_one_element_and_double)
{
    int *v = NULL;
    size_t cap = 0;
    cr_assert_eq(vec_grow_small(&v, &cap, 0, sizeof *v), 0);
    cr_assert_eq(cap, 1);
    v[0] = 7;
    cr_assert_eq(vec_grow_small(&v, &cap, 1, sizeof *v), 0);
    cr_assert_eq(cap, 2);
    cr_assert_eq(vec_grow_small(&v, &cap, 2, sizeof *v), 0);
    cr_assert_eq(cap, 4);
    cr_assert_eq(v[0], 7, "contents kept");
    cr_assert_eq(vec_grow_small(&v, &cap, SIZE_MAX - 1, sizeof *v), -1);
    cr_assert_eq(cap, 4);
    free(v);
}
