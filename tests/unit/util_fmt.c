/* util_fmt.c - the report's numbers: one duration format for tables and
 * findings (two decimals below a second, three from it, the sign kept),
 * byte sizes and counts. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "util/fmt.h"

static const char *dur(double ns)
{
    static char buf[FMT_BUF];
    return fmt_duration(buf, ns);
}

Test(util_fmt, duration_units)
{
    cr_assert_str_eq(dur(0), "0 ns");
    cr_assert_str_eq(dur(999), "999 ns");
    cr_assert_str_eq(dur(1000), "1.00 us");
    cr_assert_str_eq(dur(500800), "500.80 us");
    cr_assert_str_eq(dur(999999), "1000.00 us"); /* the unit is chosen before rounding */
    cr_assert_str_eq(dur(1e6), "1.00 ms");
    cr_assert_str_eq(dur(101730000), "101.73 ms");
    cr_assert_str_eq(dur(1e9), "1.000 s");
    cr_assert_str_eq(dur(16411000000.0), "16.411 s");
    cr_assert_str_eq(dur(73652000000.0), "73.652 s");
}

/* Findings give fractions and differences of durations. */
Test(util_fmt, duration_fractions_and_signs)
{
    cr_assert_str_eq(dur(999.6), "1000 ns");
    cr_assert_str_eq(dur(0.4), "0 ns");
    cr_assert_str_eq(dur(-2500000), "-2.50 ms");
    cr_assert_str_eq(dur(-1.5e9), "-1.500 s");
    cr_assert_str_eq(dur(-12), "-12 ns");
}

Test(util_fmt, duration_of_the_largest_counts)
{
    cr_assert_str_eq(dur((double)UINT64_MAX), "18446744073.710 s");
}

Test(util_fmt, bytes_and_counts)
{
    char buf[FMT_BUF];
    cr_assert_str_eq(fmt_bytes(buf, 0), "0 B");
    cr_assert_str_eq(fmt_bytes(buf, 1023), "1023 B");
    cr_assert_str_eq(fmt_bytes(buf, 31948), "31.2 KiB");
    cr_assert_str_eq(fmt_bytes(buf, (uint64_t)7 << 30 | (uint64_t)1 << 29), "7.5 GiB");
    cr_assert_str_eq(fmt_count(buf, 0), "0");
    cr_assert_str_eq(fmt_count(buf, 999), "999");
    cr_assert_str_eq(fmt_count(buf, 7812), "7,812");
    cr_assert_str_eq(fmt_count(buf, 1234567), "1,234,567");
}
