/* fmt.h - human-readable numbers for reports: byte sizes, durations,
 * counts with thousands separators. Each writes into a caller's buffer. */
#ifndef PROF_UTIL_FMT_H
#define PROF_UTIL_FMT_H

#include <stddef.h>
#include <stdint.h>

#define FMT_BUF 32

const char *fmt_bytes(char buf[FMT_BUF], uint64_t bytes);   /* "31.2 KiB"  */
/* The one duration format of reports and findings: ns, us and ms with two
 * decimals, seconds with three (the text report's columns), negative
 * values (deltas) as their magnitude would be, signed. */
const char *fmt_duration(char buf[FMT_BUF], double ns);     /* "1.234 s"   */
const char *fmt_count(char buf[FMT_BUF], uint64_t n);       /* "7,812"     */

#endif
