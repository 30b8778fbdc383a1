/* make_view.c - writes the profiles that the dashboard's tests open:
 * DIR/xss.prof, whose names (regions, thread, memory series, counter, mark)
 * are HTML and script fragments that must show as text and never run, with
 * GPU kernels on two streams for the timeline's GPU lanes, closed as
 * prof_stop closes a run (an incomplete last step); DIR/cut.prof,
 * a run that stopped without closing its file, for the warning banner; and
 * DIR/nosteps.prof, a run without steps whose memory was sampled on a timer,
 * which the memory chart draws over time with its fit.
 * usage: make_view DIR */
#include <stdio.h>

#include "synth.h"

#define MS 1000000ull
#define XSS "<img src=x onerror=alert(1)>"

static const char metadata[] =
    "{\"format\":\"prof\",\"host\":\"<b>host</b>\",\"pid\":7,"
    "\"argv\":[\"python3\",\"</script><script>alert(5)</script>\"],\"rank\":0,\"world_size\":1,"
    "\"devices\":[{\"index\":0,\"name\":\"Test GPU\",\"memory_bytes\":8589934592}],"
    "\"tags\":{\"note\":\"<svg onload=alert(6)>\"}}";

static void steps(synth *s, int n, int xss)
{
    uint64_t t = 1 * MS;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = t;
        synth_region(s, 0, "load", PROF_KIND_DATA, 0, t, 2 * MS);
        synth_region(s, 0, xss ? XSS : "compute", PROF_KIND_COMPUTE, 1, t + 3 * MS, 4 * MS);
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t + 2 * MS, 6 * MS + (uint64_t)i * 10000);
        if (xss) {
            synth_gpu_kernel(s, "gemm<float>", 0, 7, (uint64_t)i, t + 3 * MS, 2 * MS);
            synth_gpu_kernel(s, "softmax</script>", 0, 8, (uint64_t)i, t + 5 * MS, MS);
        }
        t += 9 * MS + (uint64_t)i * 10000;
        synth_step(s, 0, (uint64_t)i, PROF_STEP_SAMPLED, t0, t - t0);
        synth_memory(s, 0, xss ? "gpu.allocated\"</script><script>alert(3)</script>" : "host.rss", t,
                     (uint64_t)(1u << 30) + (uint64_t)i * (8u << 20));
        synth_counter(s, 0, xss ? "loss\xe2\x80\xa8<i>x</i>" : "loss", t, 1.0 / (1 + i));
    }
    if (xss) {
        synth_mark(s, 0, "<script>alert(4)</script>", 20 * MS);
        /* as prof_stop ends a run: the part after the last step, incomplete */
        synth_step(s, 0, (uint64_t)n, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, t, 2 * MS);
    }
}

static int write_profile(const char *dir, const char *name, int xss)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    synth *s = synth_open(path, metadata);
    if (!s) {
        fprintf(stderr, "make_view: cannot create '%s'\n", path);
        return 1;
    }
    synth_thread(s, 0, 100, xss ? "<script>alert(2)</script>" : "main");
    steps(s, 40, xss);
    prof_error err;
    int rc = xss ? synth_close(s, &err) : synth_abandon(s, &err);
    if (rc < 0) {
        fprintf(stderr, "make_view: cannot write '%s': %s\n", path, err.message);
        return 1;
    }
    return 0;
}

/* 2 s of regions without a step, host.rss every 5 ms growing 100 KiB a ms. */
static int write_nosteps(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/nosteps.prof", dir);
    synth *s = synth_open(path, metadata);
    if (!s)
        return 1;
    synth_thread(s, 0, 100, "main");
    for (uint64_t t = 1 * MS; t < 2000 * MS; t += 5 * MS) {
        if (t % (10 * MS) == 1 * MS)
            synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 8 * MS);
        synth_memory(s, 0, "host.rss", t, (1ull << 30) + (t / MS) * (100ull << 10));
    }
    prof_error err;
    if (synth_close(s, &err) < 0) {
        fprintf(stderr, "make_view: cannot write '%s': %s\n", path, err.message);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: make_view DIR\n", stderr);
        return 2;
    }
    return write_profile(argv[1], "xss.prof", 1) || write_profile(argv[1], "cut.prof", 0) ||
           write_nosteps(argv[1]);
}
