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
 * event's bytes are args prof does not use. */
#ifndef PROF_IMPORT_JSCAN_H
#define PROF_IMPORT_JSCAN_H

#include <stddef.h>

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

#endif
