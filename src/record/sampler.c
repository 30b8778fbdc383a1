/* sampler.c - host memory: the resident set size from /proc/self/statm
 * (resident pages × page size). The file stays open for the session so a
 * sample is one pread, cheap enough for every step boundary. */
#include <stdlib.h>
#include <unistd.h>

#include "record/runtime.h"

int rt_rss_open(void)
{
    return rt_open_read("/proc/self/statm");
}

uint64_t rt_rss_read(int fd)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p;
    strtoull(buf, &p, 10); /* total program size: skipped */
    unsigned long long resident = strtoull(p, NULL, 10);
    long page = sysconf(_SC_PAGESIZE);
    return (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096);
}
