/* fmt.c - human-readable numbers (see fmt.h). */
#include <math.h>
#include <stdio.h>

#include "util/fmt.h"

const char *fmt_bytes(char buf[FMT_BUF], uint64_t bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, FMT_BUF, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, FMT_BUF, "%.1f %s", v, units[u]);
    return buf;
}

const char *fmt_duration(char buf[FMT_BUF], double ns)
{
    double a = fabs(ns);
    if (a >= 1e9)
        snprintf(buf, FMT_BUF, "%.3f s", ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, FMT_BUF, "%.2f ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, FMT_BUF, "%.2f us", ns / 1e3);
    else
        snprintf(buf, FMT_BUF, "%.0f ns", ns);
    return buf;
}

const char *fmt_count(char buf[FMT_BUF], uint64_t n)
{
    char digits[FMT_BUF];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int out = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[out++] = ',';
        buf[out++] = digits[i];
    }
    buf[out] = '\0';
    return buf;
}
