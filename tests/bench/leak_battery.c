/* leak_battery.c - the memory_leak rule (formats/rules.md §4.2) over the
 * generated classes of tests/support/leak_battery.h, many seeds each: per
 * class, how many cases it flags, its misses and false alarms, and for the
 * leaks it finds, how far the fitted slope is from the true one.
 * usage: leak_battery [SEEDS]   (default 200 per class) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak_battery_eval.h"

int main(int argc, char **argv)
{
    unsigned seeds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
    char dir[] = "/tmp/prof-leak-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return perror("leak_battery: mkdtemp"), 1;
    snprintf(path, sizeof path, "%s/case.prof", dir);
    printf("memory_leak over %u seeds per class (slope error: flagged leaks, limit %.0f%%)\n\n",
           seeds, 100 * LB_SLOPE_TOLERANCE);
    printf("%-22s %-5s %8s %7s %12s %14s %10s\n", "class", "leak", "flagged", "misses",
           "false alarms", "slope err > 5%", "max error");
    int bad = 0;
    for (int c = 0; c < LB_CLASSES; c++) {
        lb_tally t = lb_run((lb_class)c, seeds, path);
        int leak = lb_is_leak((lb_class)c);
        printf("%-22s %-5s %8u %7u %12u %14u %9.2f%%\n", lb_name((lb_class)c),
               leak ? "yes" : "no", t.flagged, t.misses, t.false_alarms, t.slope_bad,
               100 * t.max_slope_err);
        bad |= t.errors > 0;
    }
    unlink(path);
    rmdir(dir);
    return bad;
}
