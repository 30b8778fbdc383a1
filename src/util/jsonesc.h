/* jsonesc.h - JSON string escaping of arbitrary bytes, for every renderer
 * that writes names taken from a profile (which may hold anything: quotes,
 * newlines, terminal escapes, bytes that are not UTF-8).
 *
 * The escaped text is always valid JSON and valid UTF-8: '"' and '\\' are
 * backslash-escaped, control characters (below U+0020, and U+007F) and the
 * line separators U+2028/U+2029 are written as \uXXXX (\n, \r, \t, \b, \f
 * as their short forms), and every byte that does not begin a valid UTF-8
 * sequence (stray continuation bytes, overlong forms, surrogates, code
 * points past U+10FFFF, sequences cut short) is replaced by U+FFFD, written
 * as the escape \ufffd. Valid multi-byte characters pass through as they are.
 */
#ifndef PROF_UTIL_JSONESC_H
#define PROF_UTIL_JSONESC_H

#include <stddef.h>
#include <stdio.h>

/* The most bytes one input byte can become (an escape such as \u001f). */
#define JSONESC_MAX_PER_BYTE 6

/* The length of the valid UTF-8 character at s (1 to 4), or 0 when the
 * byte at s does not begin one. n > 0 bytes are available. */
size_t jsonesc_utf8_len(const unsigned char *s, size_t n);

/* Escapes as many whole characters of src[0..n) as fit into dst[0..cap),
 * without quotes. Sets *used to the source bytes consumed and returns the
 * bytes written. A cap of at least JSONESC_MAX_PER_BYTE always makes
 * progress; a cap of JSONESC_MAX_PER_BYTE * n always takes everything. */
size_t jsonesc_chunk(char *dst, size_t cap, const char *src, size_t n, size_t *used);

/* The escaped string with its quotes, in a new NUL-terminated buffer (free
 * it), or NULL when out of memory. NULL s is written as "". */
char *jsonesc_quote(const char *s);

/* Writes the escaped string with its quotes to fp. 0, or -1 when the
 * write failed. */
int jsonesc_fputs(const char *s, FILE *fp);

/* A copy of a JSON text (one that a JSON parser accepted) in which string
 * contents are made safe as above: raw control characters escaped and
 * invalid UTF-8 replaced, while numbers, escapes already present and
 * layout are kept byte for byte. NULL when out of memory. */
char *jsonesc_clean_json(const char *json);

#endif
