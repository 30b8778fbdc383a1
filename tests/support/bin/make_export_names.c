/* make_export_names.c - a small profile for tests/cli/export.sh whose names
 * hold everything an exporter must escape or quote: quotes, backslashes,
 * commas, semicolons, newlines, control bytes and bytes that are not UTF-8,
 * with a GPU kernel, copy and memset launched by API calls, a sync, memory,
 * counters, a mark and a step.
 * usage: make_export_names OUT.prof */
#include <stdio.h>

#include "synth.h"

static const char *const names[] = {
    "say \"hi\"",         "C:\\path\\to",          "two\nlines\r\n", "a,b,\"c\"",
    "bell\x07 esc\x1b[0m", "bad \xff\xfe utf8 \xc3", "x;y z",          "caf\xc3\xa9",
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: make_export_names OUT.prof\n", stderr);
        return 2;
    }
    synth *s = synth_open(argv[1], NULL);
    if (!s) {
        fprintf(stderr, "make_export_names: cannot create '%s'\n", argv[1]);
        return 1;
    }
    synth_thread(s, 0, 100, "main, \"first\"");
    uint64_t t = 1000;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++, t += 1000) {
        synth_region(s, 0, "inner", PROF_KIND_COMPUTE, 1, t + 100, 200);
        synth_region(s, 0, names[i], PROF_KIND_COMPUTE, 0, t, 500);
    }
    synth_api(s, 0, "cudaLaunchKernel", 1, t, 100);
    synth_api(s, 0, "cudaMemcpyAsync", 2, t + 200, 100);
    synth_api(s, 0, "cudaMemsetAsync", 3, t + 400, 100);
    synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 0, t + 600, 900);
    synth_gpu_kernel(s, "gemm<\"f\\32\">", 0, 7, 1, t + 150, 300);
    synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 8, 2, 4096, t + 300, 200);
    synth_gpu_memset(s, 0, 7, 3, 512, t + 500, 50);
    synth_memory(s, 0, "gpu.allocated", t, 1u << 30);
    synth_counter(s, 0, "loss, \"smoothed\"", t, 0.25);
    synth_mark(s, 0, "mark\x01", t);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 0, t + 2000);
    prof_error err;
    if (synth_close(s, &err) < 0) {
        fprintf(stderr, "make_export_names: cannot write '%s': %s\n", argv[1], err.message);
        return 1;
    }
    return 0;
}
