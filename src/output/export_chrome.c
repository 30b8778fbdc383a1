/* export_chrome.c - the Chrome trace export: the Trace Event Format in its
 * JSON object form, which Perfetto UI, chrome://tracing and speedscope open.
 *
 * Tracks: the recorded process (pid from the metadata) has one thread per
 * profile thread (tid = profile thread index) carrying its regions, API
 * calls, syncs and marks, and a "steps" thread (STEPS_TID); its memory
 * series and counters are counter tracks. Each GPU is a process of its own
 * (GPU_PID_BASE + device) with one thread per stream. Flow arrows join a
 * runtime API call to the GPU work it launched through their correlation
 * id. Times are microseconds with three decimals, so nanoseconds survive.
 * Events are written in file order; viewers sort them. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/report_keys.h"
#include "output/export_out.h"
#include "util/error.h"
#include "util/hmap.h"

#define STEPS_TID 2000000u         /* beyond the reader's profile thread indexes */
#define GPU_PID_BASE 10000000ull   /* beyond Linux's largest pid (2^22)           */
#define DEFAULT_PID 1ull

typedef struct chrome {
    uint64_t pid;          /* of the recorded process                        */
    cJSON *meta;           /* the parsed metadata, for names of devices      */
    hmap devices;          /* GPU devices named so far (values unused)        */
    hmap streams;          /* (device, stream) pairs named so far            */
    uint64_t written;      /* trace events written, for the separators       */
} chrome;

/* The start of an event: separator, phase, category and name. */
static void head(export_ctx *x, const char *ph, const char *cat, const char *name)
{
    chrome *c = x->state;
    export_out *o = x->out;
    if (c->written++)
        eo_char(o, ',');
    eo_lit(o, "\n{\"ph\":\"");
    eo_str(o, ph);
    eo_lit(o, "\",\"cat\":\"");
    eo_str(o, cat);
    eo_lit(o, "\",\"name\":");
    eo_json(o, name);
}

static void where(export_out *o, uint64_t pid, uint64_t tid)
{
    eo_lit(o, ",\"pid\":");
    eo_u64(o, pid);
    eo_lit(o, ",\"tid\":");
    eo_u64(o, tid);
}

static void at(export_out *o, uint64_t ts_ns)
{
    eo_lit(o, ",\"ts\":");
    eo_us(o, ts_ns);
}

static void span(export_out *o, const prof_event *ev)
{
    at(o, ev->start_ns);
    eo_lit(o, ",\"dur\":");
    eo_us(o, ev->dur_ns);
}

static void arg_u64(export_out *o, const char *key, uint64_t v, int first)
{
    eo_str(o, first ? ",\"args\":{\"" : ",\"");
    eo_str(o, key);
    eo_lit(o, "\":");
    eo_u64(o, v);
}

/* A metadata event naming a process or thread (what is "process_name",
 * "thread_name", "process_sort_index" or "thread_sort_index"). */
static void meta_event(export_ctx *x, const char *what, uint64_t pid, uint64_t tid,
                       const char *name, long sort_index)
{
    head(x, "M", "__metadata", what);
    where(x->out, pid, tid);
    if (name) {
        eo_lit(x->out, ",\"args\":{\"name\":");
        eo_json(x->out, name);
    } else {
        eo_lit(x->out, ",\"args\":{\"sort_index\":");
        if (sort_index < 0)
            eo_char(x->out, '-');
        eo_u64(x->out, (uint64_t)(sort_index < 0 ? -sort_index : sort_index));
    }
    eo_lit(x->out, "}}");
}

/* "python3 train.py --epochs 1", from the metadata's argv. */
static char *process_name(const cJSON *meta)
{
    const cJSON *argv = cJSON_GetObjectItemCaseSensitive(meta, MK_ARGV), *a;
    size_t len = 0;
    cJSON_ArrayForEach(a, argv)
        if (cJSON_IsString(a))
            len += strlen(a->valuestring) + 1;
    if (len == 0)
        return strdup("process");
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    cJSON_ArrayForEach(a, argv)
        if (cJSON_IsString(a)) {
            size_t n = strlen(a->valuestring);
            if (p != s)
                *p++ = ' ';
            memcpy(p, a->valuestring, n);
            p += n;
        }
    *p = '\0';
    return s;
}

static prof_err chrome_begin(export_ctx *x)
{
    chrome *c = calloc(1, sizeof *c);
    if (!c)
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    x->state = c;
    c->meta = cJSON_Parse(prof_reader_metadata(x->reader));
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(c->meta, MK_PID);
    c->pid = cJSON_IsNumber(pid) && pid->valuedouble >= 1 && pid->valuedouble < 1e7
                 ? (uint64_t)pid->valuedouble
                 : DEFAULT_PID;
    char *name = process_name(c->meta);
    if (!name)
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    eo_lit(x->out, "{\"traceEvents\":[");
    meta_event(x, "process_name", c->pid, 0, name, 0);
    free(name);
    meta_event(x, "thread_name", c->pid, STEPS_TID, "steps", 0);
    meta_event(x, "thread_sort_index", c->pid, STEPS_TID, NULL, -1);
    return PROF_OK;
}

/* "GPU 0: NVIDIA H100", from the metadata's devices when it names them. */
static void name_device(export_ctx *x, uint32_t device)
{
    chrome *c = x->state;
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(c->meta, MK_DEVICES), *d;
    const char *model = NULL;
    cJSON_ArrayForEach(d, devs) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(d, MK_INDEX);
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(d, MK_NAME);
        if (cJSON_IsNumber(idx) && idx->valuedouble == (double)device && cJSON_IsString(nm))
            model = nm->valuestring;
    }
    char buf[160];
    snprintf(buf, sizeof buf, model ? "GPU %u: %.120s" : "GPU %u", device, model);
    meta_event(x, "process_name", GPU_PID_BASE + device, 0, buf, 0);
    meta_event(x, "process_sort_index", GPU_PID_BASE + device, 0, NULL, (long)device + 1);
}

/* Names a GPU's process and its stream's thread the first time they are
 * used. Bounded by the number of distinct streams. */
static prof_err name_gpu_track(export_ctx *x, uint32_t device, uint32_t stream)
{
    chrome *c = x->state;
    int added;
    if (!hmap_slot(&c->streams, (uint64_t)device << 32 | stream, &added))
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    if (!added)
        return PROF_OK;
    if (!hmap_slot(&c->devices, device, &added))
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    if (added)
        name_device(x, device);
    char buf[32];
    snprintf(buf, sizeof buf, "stream %u", stream);
    meta_event(x, "thread_name", GPU_PID_BASE + device, stream, buf, 0);
    return PROF_OK;
}

/* One end of a flow arrow: "s" at the launching call, "f" (bound to the
 * enclosing slice) at the GPU work. */
static void flow(export_ctx *x, const char *ph, uint64_t id, uint64_t ts_ns, uint64_t pid,
                 uint64_t tid)
{
    head(x, ph, "launch", "launch");
    if (ph[0] == 'f')
        eo_lit(x->out, ",\"bp\":\"e\"");
    eo_lit(x->out, ",\"id\":");
    eo_u64(x->out, id);
    at(x->out, ts_ns);
    where(x->out, pid, tid);
    eo_char(x->out, '}');
}

static void region(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    export_out *o = x->out;
    head(x, "X", "region", ev->name);
    span(o, ev);
    where(o, c->pid, ev->thread);
    eo_lit(o, ",\"args\":{\"kind\":\"");
    eo_str(o, prof_kind_name(ev->kind));
    eo_lit(o, "\",\"depth\":");
    eo_u64(o, ev->depth);
    eo_lit(o, "}}");
}

static void step(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    export_out *o = x->out;
    char name[32];
    snprintf(name, sizeof name, "step %llu", (unsigned long long)ev->value);
    head(x, "X", "step", name);
    span(o, ev);
    where(o, c->pid, STEPS_TID);
    arg_u64(o, "step", ev->value, 1);
    eo_str(o, ev->flags & PROF_STEP_SAMPLED ? ",\"sampled\":true" : ",\"sampled\":false");
    eo_str(o, ev->flags & PROF_STEP_INCOMPLETE ? ",\"incomplete\":true}}"
                                               : ",\"incomplete\":false}}");
}

/* Memory series and counters: counter tracks of the recorded process. */
static void counter(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    export_out *o = x->out;
    int memory = ev->type == PROF_EV_MEMORY;
    head(x, "C", memory ? "memory" : "counter", ev->name);
    at(o, ev->start_ns);
    where(o, c->pid, ev->thread);
    if (memory)
        arg_u64(o, "bytes", ev->value, 1);
    else {
        eo_lit(o, ",\"args\":{\"value\":");
        eo_double(o, ev->fvalue, "null");
    }
    eo_lit(o, "}}");
}

static void instant(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    export_out *o = x->out;
    int mark = ev->type == PROF_EV_MARK;
    head(x, "i", mark ? "mark" : "dropped", mark ? ev->name : "dropped events");
    eo_lit(o, ",\"s\":\"t\"");
    at(o, ev->start_ns);
    where(o, c->pid, ev->thread);
    if (!mark) {
        arg_u64(o, "count", ev->value, 1);
        eo_char(o, '}');
    }
    eo_char(o, '}');
}

static void gpu_args(export_out *o, const prof_event *ev)
{
    arg_u64(o, "device", ev->device, 1);
    arg_u64(o, "stream", ev->stream, 0);
    arg_u64(o, "correlation", ev->correlation, 0);
}

static prof_err gpu_work(export_ctx *x, const prof_event *ev)
{
    export_out *o = x->out;
    prof_err e = name_gpu_track(x, ev->device, ev->stream);
    if (e != PROF_OK)
        return e;
    char name[48];
    const char *cat = prof_event_type_name(ev->type);
    if (ev->type == PROF_EV_GPU_KERNEL)
        head(x, "X", cat, ev->name);
    else {
        if (ev->type == PROF_EV_GPU_MEMCPY)
            snprintf(name, sizeof name, "memcpy %s", prof_copy_kind_name(ev->subkind));
        else
            snprintf(name, sizeof name, "memset");
        head(x, "X", cat, name);
    }
    span(o, ev);
    uint64_t pid = GPU_PID_BASE + ev->device;
    where(o, pid, ev->stream);
    gpu_args(o, ev);
    if (ev->type != PROF_EV_GPU_KERNEL)
        arg_u64(o, "bytes", ev->value, 0);
    eo_lit(o, "}}");
    if (ev->correlation)
        flow(x, "f", ev->correlation, ev->start_ns, pid, ev->stream);
    return PROF_OK;
}

/* Syncs and runtime API calls: slices on the calling thread. */
static void host_call(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    export_out *o = x->out;
    if (ev->type == PROF_EV_SYNC) {
        char name[48];
        snprintf(name, sizeof name, "sync %s", prof_sync_kind_name(ev->subkind));
        head(x, "X", "sync", name);
    } else
        head(x, "X", "api", ev->name);
    span(o, ev);
    where(o, c->pid, ev->thread);
    if (ev->type == PROF_EV_SYNC)
        gpu_args(o, ev);
    else
        arg_u64(o, "correlation", ev->correlation, 1);
    eo_lit(o, "}}");
    if (ev->type == PROF_EV_API && ev->correlation)
        flow(x, "s", ev->correlation, ev->start_ns, c->pid, ev->thread);
}

static prof_err chrome_event(export_ctx *x, const prof_event *ev)
{
    chrome *c = x->state;
    switch (ev->type) {
    case PROF_EV_REGION: region(x, ev); break;
    case PROF_EV_STEP: step(x, ev); break;
    case PROF_EV_MEMORY:
    case PROF_EV_COUNTER: counter(x, ev); break;
    case PROF_EV_MARK:
    case PROF_EV_DROPPED: instant(x, ev); break;
    case PROF_EV_GPU_KERNEL:
    case PROF_EV_GPU_MEMCPY:
    case PROF_EV_GPU_MEMSET: return gpu_work(x, ev);
    case PROF_EV_SYNC:
    case PROF_EV_API: host_call(x, ev); break;
    case PROF_EV_THREAD: meta_event(x, "thread_name", c->pid, ev->thread, ev->name, 0); break;
    case PROF_EV_ATTR: break; /* a name's class: the trace format has no place for it */
    }
    return PROF_OK;
}

/* otherData: the profile's metadata object with a "prof_export" member
 * added, saying how complete the export is. */
static prof_err other_data(export_ctx *x, const prof_read_status *st)
{
    export_out *o = x->out;
    char *meta = eo_metadata(x->reader);
    if (!meta)
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    char *close = strrchr(meta, '}');
    if (close) {
        char *p = close;
        while (p > meta && strchr(" \t\r\n", p[-1]))
            p--;
        eo_put(o, meta, (size_t)(close - meta));
        if (p > meta && p[-1] != '{')
            eo_char(o, ',');
    } else
        eo_char(o, '{');
    free(meta);
    eo_lit(o, "\"prof_export\":{\"events\":");
    eo_u64(o, st->events);
    eo_str(o, st->clean ? ",\"clean\":true" : ",\"clean\":false");
    eo_str(o, st->truncated ? ",\"truncated\":true" : ",\"truncated\":false");
    eo_lit(o, ",\"detail\":");
    eo_json(o, st->detail);
    eo_lit(o, "}}");
    return PROF_OK;
}

static prof_err chrome_end(export_ctx *x, const prof_read_status *st)
{
    eo_lit(x->out, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
    prof_err e = other_data(x, st);
    eo_lit(x->out, "}\n");
    return e;
}

static void chrome_finish(export_ctx *x)
{
    chrome *c = x->state;
    if (!c)
        return;
    cJSON_Delete(c->meta);
    hmap_free(&c->devices);
    hmap_free(&c->streams);
    free(c);
    x->state = NULL;
}

const export_ops export_chrome_ops = { "chrome-trace", chrome_begin, chrome_event, chrome_end,
                                       chrome_finish };
