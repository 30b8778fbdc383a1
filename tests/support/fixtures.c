/* fixtures.c - deterministic training-loop profiles for the analysis tests
 * (see fixtures.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"

static char fx_dir[64];

const char *fx_path(const char *name)
{
    static char buf[8][256];
    static int next;
    if (!fx_dir[0]) {
        strcpy(fx_dir, "/tmp/prof-fx-XXXXXX");
        if (!mkdtemp(fx_dir)) {
            fx_dir[0] = '\0';
            return NULL;
        }
    }
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", fx_dir, name);
    return p;
}

void fx_remove_all(void)
{
    DIR *d;
    if (!fx_dir[0] || !(d = opendir(fx_dir)))
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", fx_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(fx_dir);
    fx_dir[0] = '\0';
}

const char *fx_metadata(char *buf, size_t size, int rank, int world_size, double device_bytes,
                        double host_bytes)
{
    char devices[160] = "[]", host[64] = "";
    if (device_bytes > 0)
        snprintf(devices, sizeof devices,
                 "[{\"index\":0,\"name\":\"Fixture GPU\",\"memory_bytes\":%.0f}]", device_bytes);
    if (host_bytes > 0)
        snprintf(host, sizeof host, "\"host_memory_bytes\":%.0f,", host_bytes);
    snprintf(buf, size,
             "{\"format\":\"prof\",\"libprof_version\":\"" PROF_VERSION_STRING "\","
             "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1700000000000000000},"
             "\"host\":\"fixture\",\"pid\":7,\"argv\":[\"train.py\"],\"rank\":%d,"
             "\"world_size\":%d,\"local_rank\":%d,\"devices\":%s,%s\"tags\":{}}",
             rank, world_size, rank, devices, host);
    return buf;
}

int fx_write_loop(const char *path, const char *metadata, size_t n, const uint64_t *step_ns,
                  const char *series, const double *bytes)
{
    synth *s = synth_open(path, metadata);
    if (!s)
        return -1;
    synth_thread(s, 0, 100, "train");
    uint64_t t = 1 * FX_MS;
    for (size_t i = 0; i < n; i++) {
        uint64_t dur = step_ns ? step_ns[i] : 100 * FX_MS;
        synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, dur);
        if (series)
            synth_memory(s, 0, series, t + dur - FX_MS, (uint64_t)bytes[i]);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, dur);
        t += dur;
    }
    return synth_close(s, NULL);
}
