/* sketch_table.c - writes, as C, the tables behind sketch_bucket
 * (src/model/sketch.h), made from its definition, sketch_bucket_by_log:
 * the bucket of each value below SKETCH_SMALL, and for each 64th of every
 * binade above, the bucket of its first value and the last value of that
 * bucket inside it (found by bisection: the definition never decreases).
 * Run by the build: `sketch_table > build/gen/sketch_table.c`. Fails
 * (status 1) if a 64th held two bucket boundaries, which the bucket's
 * width rules out. */
#include <stdio.h>
#include <stdlib.h>

#include "model/sketch.h"

/* The last value of [lo, hi] in the bucket of lo. */
static uint64_t last_of_first_bucket(uint64_t lo, uint64_t hi)
{
    int32_t b = sketch_bucket_by_log(lo);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2 + 1;
        if (sketch_bucket_by_log(mid) == b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int main(void)
{
    printf("/* Made by tools/sketch_table.c at build time; see src/model/sketch.h. */\n"
           "#include \"model/sketch.h\"\n\n"
           "const int16_t sketch_small_bucket[SKETCH_SMALL] = {\n    0,");
    for (uint64_t v = 1; v < SKETCH_SMALL; v++)
        printf("%s%d,", v % 16 ? " " : "\n    ", (int)sketch_bucket_by_log(v));
    printf("\n};\n\n");
    static int16_t first[SKETCH_SUB_BINADES * 64];
    static uint64_t last[SKETCH_SUB_BINADES * 64];
    for (unsigned e = 7; e <= 63; e++)
        for (uint64_t s = 0; s < 64; s++) {
            uint64_t lo = (64 + s) << (e - 6), hi = lo + ((UINT64_C(1) << (e - 6)) - 1);
            size_t i = (size_t)(e - 7) * 64 + s;
            int32_t b = sketch_bucket_by_log(lo);
            if (sketch_bucket_by_log(hi) - b > 1) {
                fprintf(stderr, "sketch_table: two bucket boundaries in [%llu, %llu]\n",
                        (unsigned long long)lo, (unsigned long long)hi);
                return 1;
            }
            first[i] = (int16_t)b;
            last[i] = last_of_first_bucket(lo, hi);
        }
    printf("const int16_t sketch_sub_bucket[SKETCH_SUB_BINADES * 64] = {");
    for (size_t i = 0; i < SKETCH_SUB_BINADES * 64; i++)
        printf("%s%d,", i % 16 ? " " : "\n    ", first[i]);
    printf("\n};\n\nconst uint64_t sketch_sub_last[SKETCH_SUB_BINADES * 64] = {");
    for (size_t i = 0; i < SKETCH_SUB_BINADES * 64; i++)
        printf("%sUINT64_C(%llu),", i % 4 ? " " : "\n    ", (unsigned long long)last[i]);
    printf("\n};\n");
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("sketch_table");
        return 1;
    }
    return 0;
}
