/* meta.c - the metadata object at the head of every profile: what ran
 * (host, pid, argv, rank), when (clock origin), how it was recorded (the
 * resolved configuration) and the user's tags. Layout in
 * formats/prof-format.md §4. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "format/meta_keys.h"
#include "record/runtime.h"

/* Nanosecond epochs exceed 2^53: written as exact decimal text, not
 * through a double. */
static int add_u64(cJSON *o, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, key, buf) != NULL;
}

/* /proc/self/cmdline: NUL-separated arguments. */
static int add_argv(cJSON *meta)
{
    cJSON *argv = cJSON_AddArrayToObject(meta, MK_ARGV);
    if (!argv)
        return 0;
    int fd = rt_open_read("/proc/self/cmdline");
    if (fd < 0)
        return 1; /* unknown: an empty list */
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
        cJSON *s = cJSON_CreateString(buf + i);
        if (!s || !cJSON_AddItemToArray(argv, s))
            return 0;
    }
    return 1;
}

static int add_clock(cJSON *meta, const rt_clock *clk)
{
    cJSON *c = cJSON_AddObjectToObject(meta, MK_CLOCK);
    return c && cJSON_AddStringToObject(c, MK_SOURCE, clk->tsc ? "tsc" : "monotonic") &&
           add_u64(c, MK_ORIGIN_EPOCH_NS, clk->origin_epoch_ns) &&
           add_u64(c, MK_ORIGIN_MONOTONIC_NS, clk->origin_mono_ns) &&
           (!clk->tsc || cJSON_AddNumberToObject(c, MK_TSC_HZ, clk->hz));
}

static int add_schedule(cJSON *o, const rt_config *c)
{
    if (!c->active)
        return cJSON_AddNullToObject(o, MK_SCHEDULE) != NULL;
    cJSON *s = cJSON_AddObjectToObject(o, MK_SCHEDULE);
    return s && cJSON_AddNumberToObject(s, MK_WAIT, c->wait) &&
           cJSON_AddNumberToObject(s, MK_WARMUP, c->warmup) &&
           cJSON_AddNumberToObject(s, MK_ACTIVE, c->active) &&
           cJSON_AddNumberToObject(s, MK_REPEAT, c->repeat);
}

static int add_config(cJSON *meta, const rt_config *c)
{
    cJSON *o = cJSON_AddObjectToObject(meta, MK_CONFIG);
    return o && cJSON_AddStringToObject(o, MK_OUTPUT, c->output) &&
           cJSON_AddNumberToObject(o, MK_SAMPLE_RATE, c->sample_rate) && add_schedule(o, c) &&
           cJSON_AddNumberToObject(o, MK_MEMORY_INTERVAL_MS, c->memory_interval_ms) &&
           add_u64(o, MK_BUFFER_BYTES, c->buffer_bytes) &&
           cJSON_AddNumberToObject(o, MK_FLUSH_INTERVAL_MS, c->flush_interval_ms) &&
           cJSON_AddNumberToObject(o, MK_CUDA, c->cuda);
}

static int add_tags(cJSON *meta, const rt_config *c)
{
    cJSON *o = cJSON_AddObjectToObject(meta, MK_TAGS);
    if (!o)
        return 0;
    for (size_t i = 0; i < c->ntags; i++)
        if (!cJSON_AddStringToObject(o, c->tags[i].key, c->tags[i].value))
            return 0;
    return 1;
}

static int add_process(cJSON *meta, const rt_config *c)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return cJSON_AddStringToObject(meta, MK_HOST, host) &&
           cJSON_AddNumberToObject(meta, MK_PID, (double)getpid()) && add_argv(meta) &&
           cJSON_AddNumberToObject(meta, MK_RANK, (double)c->rank) &&
           cJSON_AddNumberToObject(meta, MK_WORLD_SIZE, (double)c->world_size) &&
           cJSON_AddNumberToObject(meta, MK_LOCAL_RANK, (double)c->local_rank) &&
           (pages <= 0 || page <= 0 ||
            add_u64(meta, MK_HOST_MEMORY_BYTES, (uint64_t)pages * (uint64_t)page));
}

char *rt_metadata(const rt_config *c, const rt_clock *clk)
{
    cJSON *meta = cJSON_CreateObject();
    char *text = NULL;
    if (meta && cJSON_AddStringToObject(meta, MK_FORMAT, "prof") &&
        cJSON_AddStringToObject(meta, MK_LIBPROF_VERSION, PROF_VERSION_STRING) &&
        add_clock(meta, clk) && add_u64(meta, MK_START_EPOCH_NS, clk->origin_epoch_ns) &&
        add_process(meta, c) && add_config(meta, c) &&
        cJSON_AddArrayToObject(meta, MK_DEVICES) && add_tags(meta, c)) {
        rt_gpu_metadata(c, meta);
        text = cJSON_PrintUnformatted(meta);
    }
    cJSON_Delete(meta);
    return text;
}
