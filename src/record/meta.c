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
    cJSON *argv = cJSON_AddArrayToObject(meta, "argv");
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
    cJSON *c = cJSON_AddObjectToObject(meta, "clock");
    return c && cJSON_AddStringToObject(c, "source", clk->tsc ? "tsc" : "monotonic") &&
           add_u64(c, "origin_epoch_ns", clk->origin_epoch_ns) &&
           add_u64(c, "origin_monotonic_ns", clk->origin_mono_ns) &&
           (!clk->tsc || cJSON_AddNumberToObject(c, "tsc_hz", clk->hz));
}

static int add_schedule(cJSON *o, const rt_config *c)
{
    if (!c->active)
        return cJSON_AddNullToObject(o, "schedule") != NULL;
    cJSON *s = cJSON_AddObjectToObject(o, "schedule");
    return s && cJSON_AddNumberToObject(s, "wait", c->wait) &&
           cJSON_AddNumberToObject(s, "warmup", c->warmup) &&
           cJSON_AddNumberToObject(s, "active", c->active) &&
           cJSON_AddNumberToObject(s, "repeat", c->repeat);
}

static int add_config(cJSON *meta, const rt_config *c)
{
    cJSON *o = cJSON_AddObjectToObject(meta, "config");
    return o && cJSON_AddStringToObject(o, "output", c->output) &&
           cJSON_AddNumberToObject(o, "sample_rate", c->sample_rate) && add_schedule(o, c) &&
           cJSON_AddNumberToObject(o, "memory_interval_ms", c->memory_interval_ms) &&
           add_u64(o, "buffer_bytes", c->buffer_bytes) &&
           cJSON_AddNumberToObject(o, "flush_interval_ms", c->flush_interval_ms) &&
           cJSON_AddNumberToObject(o, "cuda", c->cuda);
}

static int add_tags(cJSON *meta, const rt_config *c)
{
    cJSON *o = cJSON_AddObjectToObject(meta, "tags");
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
    return cJSON_AddStringToObject(meta, "host", host) &&
           cJSON_AddNumberToObject(meta, "pid", (double)getpid()) && add_argv(meta) &&
           cJSON_AddNumberToObject(meta, "rank", (double)c->rank) &&
           cJSON_AddNumberToObject(meta, "world_size", (double)c->world_size) &&
           cJSON_AddNumberToObject(meta, "local_rank", (double)c->local_rank) &&
           (pages <= 0 || page <= 0 ||
            add_u64(meta, "host_memory_bytes", (uint64_t)pages * (uint64_t)page));
}

char *rt_metadata(const rt_config *c, const rt_clock *clk)
{
    cJSON *meta = cJSON_CreateObject();
    char *text = NULL;
    if (meta && cJSON_AddStringToObject(meta, "format", "prof") &&
        cJSON_AddStringToObject(meta, "libprof_version", PROF_VERSION_STRING) &&
        add_clock(meta, clk) && add_u64(meta, "start_epoch_ns", clk->origin_epoch_ns) &&
        add_process(meta, c) && add_config(meta, c) &&
        cJSON_AddArrayToObject(meta, "devices") && add_tags(meta, c)) {
        rt_gpu_metadata(c, meta);
        text = cJSON_PrintUnformatted(meta);
    }
    cJSON_Delete(meta);
    return text;
}
