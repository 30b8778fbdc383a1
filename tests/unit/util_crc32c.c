/* util_crc32c.c - CRC-32C gives the standard check value, continues across
 * split buffers, and the instruction path (where the CPU has one) agrees
 * with the table on every length and alignment. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "util/crc32c.h"

Test(crc32c, check_value)
{
    cr_assert_eq(crc32c_update(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(crc32c_update_portable(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(crc32c_update(0, "", 0), 0u);
}

Test(crc32c, fast_path_agrees_with_table)
{
    static uint8_t buf[4096 + 16];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t off = 0; off < 16; off++)
        for (size_t len = 0; len + off <= sizeof buf; len += len < 64 ? 1 : 61) {
            uint32_t seed = (uint32_t)(len * 2654435761u);
            cr_assert_eq(crc32c_update(seed, buf + off, len),
                         crc32c_update_portable(seed, buf + off, len), "off %zu len %zu", off,
                         len);
        }
}

Test(crc32c, continues_across_splits)
{
    const char *s = "the quick brown fox jumps over the lazy dog, twice over";
    size_t n = strlen(s);
    uint32_t whole = crc32c_update(0, s, n);
    for (size_t k = 0; k <= n; k++)
        cr_assert_eq(crc32c_update(crc32c_update(0, s, k), s + k, n - k), whole);
}
