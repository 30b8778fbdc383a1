/* jscan.h - a fast, strict reader of one JSON value held whole in memory,
 * calling YAJL's callbacks. It is the Kineto importer's fast path for the
 * events of traceEvents: it accepts a strict subset of JSON and declines
 * the rest, which the caller then gives to YAJL, so that what it accepts
 * reaches the callbacks exactly as YAJL would hand it over:
 *
 *   - blanks are the four of JSON (YAJL also takes \v and \f);
 *   - a string handed to a callback (a key, a value that is used) holds no
 *     escape, so its bytes are its text; bytes below 0x20 are declined,
 *     other bytes pass unchecked, as YAJL's yajl_dont_validate_strings;
 *   - numbers follow JSON's grammar, handed over as their text;
 *   - containers nest at most `limit` deep.
 *
 * A value the caller says it ignores (jscan_ignored) is checked as JSON
 * (escapes included) and skipped without a callback: most of a Kineto
 * event's bytes are args prof does not use.
 *
 * The scans it is made of (blanks, strings, numbers, a skipped value) are
 * here too, inline: the importer's event reader (kineto_parse.c) reads the
 * common event with them and calls its callbacks directly, without the
 * indirect calls and the general descent of jscan_value. */
#ifndef PROF_IMPORT_JSCAN_H
#define PROF_IMPORT_JSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <yajl/yajl_parse.h>

typedef enum jscan_result {
    JSCAN_DONE,    /* the value was read; *pos is just past it                        */
    JSCAN_MORE,    /* the bytes end inside the value                                   */
    JSCAN_DECLINE, /* not in the subset (or not JSON): give the value to YAJL          */
    JSCAN_STOP     /* a callback returned 0                                            */
} jscan_result;

/* Whether the value about to be read (after a key, or an array element)
 * is of no use to the caller: then it is skipped, with no callback. */
typedef int (*jscan_ignored)(void *ctx);

/* Reads the value starting at buf[*pos] (no blank before it), calling cb
 * with ctx. On anything but JSCAN_DONE, *pos is left as it was and the
 * callbacks already made belong to a value that is not finished: the
 * caller undoes them. */
jscan_result jscan_value(const unsigned char *buf, size_t len, size_t *pos,
                         const yajl_callbacks *cb, jscan_ignored ignored, void *ctx, int limit);

/* ---- the scans ---------------------------------------------------------------------------- */

#define JSCAN_ONES UINT64_C(0x0101010101010101)
#define JSCAN_HIGHS UINT64_C(0x8080808080808080)
#define JSCAN_BLANKS                                                                               \
    ((UINT64_C(1) << ' ') | (UINT64_C(1) << '\n') | (UINT64_C(1) << '\r') | (UINT64_C(1) << '\t'))

/* Every byte that starts or ends a token is above ' ', so one compare
 * answers for nearly all of them. */
static inline int jscan_blank(unsigned char c)
{
    return c <= ' ' && ((UINT64_C(1) << c) & JSCAN_BLANKS) != 0;
}

/* Past the blanks at b[i]. */
static inline size_t jscan_blanks(const unsigned char *b, size_t i, size_t n)
{
    while (i < n && jscan_blank(b[i]))
        i++;
    return i;
}

/* The same after a colon or a comma, where there is most often one space
 * and then a token. */
static inline size_t jscan_blanks_after(const unsigned char *b, size_t i, size_t n)
{
    if (i < n && b[i] == ' ')
        i++;
    if (i < n && b[i] > ' ')
        return i;
    return jscan_blanks(b, i, n);
}

/* What may follow a scalar: YAJL reads a number or a literal up to the
 * first byte that cannot continue it; the subset wants that byte to be
 * one that ends a value. */
static inline int jscan_ends_value(unsigned char c)
{
    return jscan_blank(c) || c == ',' || c == '}' || c == ']';
}

/* Whether any of the eight bytes is '"', '\\' or below 0x20: the bytes
 * a string's scan has to look at. Exact as a yes or no (the borrows of
 * the subtractions only reach bytes above one that matches). */
static inline uint64_t jscan_special_bytes(uint64_t w)
{
    uint64_t q = w ^ (JSCAN_ONES * '"');
    uint64_t s = w ^ (JSCAN_ONES * '\\');
    return ((q - JSCAN_ONES) & ~q) | ((s - JSCAN_ONES) & ~s) | ((w - JSCAN_ONES * 0x20) & ~w);
}

/* Where in the word the first byte of m (not 0) is, in memory order:
 * on a little-endian machine the least significant match, which the
 * borrows cannot fake. On a big-endian one they can, so the bytes are
 * looked at one by one from the word's start. */
static inline size_t jscan_first_byte(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)m;
    return 0;
#else
    return (size_t)__builtin_ctzll(m) / 8;
#endif
}

static inline int jscan_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* The string whose quote is at b[at]: *close is its closing quote, so its
 * raw text is b[at + 1 .. *close). *escaped says whether it holds an
 * escape (checked for form, not decoded). Inlined wherever it is used:
 * as a call it cost 6% of an import's instructions. */
static inline __attribute__((always_inline)) jscan_result
jscan_scan_string(const unsigned char *b, size_t n, size_t at, size_t *close, int *escaped)
{
    size_t i = at + 1;
    *escaped = 0;
    for (;;) {
        while (n - i >= 8) {
            uint64_t w, m;
            memcpy(&w, b + i, 8);
            if ((m = jscan_special_bytes(w) & JSCAN_HIGHS) != 0) {
                i += jscan_first_byte(m); /* the lowest one is a true match */
                break;
            }
            i += 8;
        }
        if (i >= n)
            return JSCAN_MORE;
        unsigned char c = b[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return JSCAN_DECLINE;
        if (c != '\\') {
            i++;
            continue;
        }
        if (n - i < 2)
            return JSCAN_MORE;
        c = b[i + 1];
        if (c == 'u') {
            if (n - i < 6)
                return JSCAN_MORE;
            if (!jscan_hex(b[i + 2]) || !jscan_hex(b[i + 3]) || !jscan_hex(b[i + 4]) ||
                !jscan_hex(b[i + 5]))
                return JSCAN_DECLINE;
            i += 6;
        } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                   c == 'r' || c == 't') {
            i += 2;
        } else {
            return JSCAN_DECLINE;
        }
        *escaped = 1;
    }
    *close = i;
    return JSCAN_DONE;
}

static inline size_t jscan_digits(const unsigned char *b, size_t i, size_t n)
{
    while (i < n && b[i] >= '0' && b[i] <= '9')
        i++;
    return i;
}

/* A number at b[at] in JSON's grammar, followed by a byte that ends it:
 * *end is that byte. */
static inline jscan_result jscan_scan_number(const unsigned char *b, size_t n, size_t at,
                                             size_t *end)
{
    size_t i = at;
    if (b[i] == '-' && ++i >= n)
        return JSCAN_MORE;
    if (b[i] == '0')
        i++;
    else if (b[i] >= '1' && b[i] <= '9')
        i = jscan_digits(b, i, n);
    else
        return JSCAN_DECLINE;
    if (i < n && b[i] == '.') {
        size_t f = jscan_digits(b, ++i, n);
        if (f == n)
            return JSCAN_MORE;
        if (f == i)
            return JSCAN_DECLINE;
        i = f;
    }
    if (i < n && (b[i] == 'e' || b[i] == 'E')) {
        if (++i < n && (b[i] == '+' || b[i] == '-'))
            i++;
        size_t e = jscan_digits(b, i, n);
        if (e == n)
            return JSCAN_MORE;
        if (e == i)
            return JSCAN_DECLINE;
        i = e;
    }
    if (i >= n)
        return JSCAN_MORE;
    if (!jscan_ends_value(b[i]))
        return JSCAN_DECLINE;
    *end = i;
    return JSCAN_DONE;
}

/* Containers and literals for jscan_skip. */
jscan_result jscan_skip_value(const unsigned char *buf, size_t len, size_t *pos, int depth,
                              int limit);

/* Skips the value at buf[*pos] (no blank before it) with no callback, as
 * jscan_value skips an ignored one found `depth` containers down: a string
 * or a number scanned here, the rest by jscan_skip_value. */
static inline jscan_result jscan_skip(const unsigned char *buf, size_t len, size_t *pos,
                                      int depth, int limit)
{
    size_t end;
    int escaped;
    jscan_result r;
    if (*pos >= len)
        return JSCAN_MORE;
    unsigned char c = buf[*pos];
    if (c == '"') {
        if ((r = jscan_scan_string(buf, len, *pos, &end, &escaped)) == JSCAN_DONE)
            *pos = end + 1;
        return r;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return jscan_scan_number(buf, len, *pos, pos);
    return jscan_skip_value(buf, len, pos, depth, limit);
}

#endif
