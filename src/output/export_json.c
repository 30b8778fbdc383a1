/* export_json.c - the JSON export: JSON lines (one object per line), so
 * that it streams in both directions: a "profile" line with the metadata,
 * one line per event and thread definition in file order, and an "end"
 * line saying how complete the export is. Specified in
 * formats/export-json.md. */
#include <stdlib.h>

#include "output/export_out.h"
#include "util/error.h"

static prof_err json_begin(export_ctx *x)
{
    export_out *o = x->out;
    unsigned major, minor;
    prof_reader_version(x->reader, &major, &minor);
    char *meta = eo_metadata(x->reader);
    if (!meta)
        return prof_error_set(x->err, PROF_ERR_NOMEM, "out of memory");
    eo_lit(o, "{\"type\":\"profile\",\"format_version\":\"");
    eo_u64(o, major);
    eo_char(o, '.');
    eo_u64(o, minor);
    eo_lit(o, "\",\"metadata\":");
    eo_str(o, meta);
    eo_lit(o, "}\n");
    free(meta);
    return PROF_OK;
}

/* ,"key":value */
static void u64_member(export_out *o, const char *key, uint64_t v)
{
    eo_lit(o, ",\"");
    eo_str(o, key);
    eo_lit(o, "\":");
    eo_u64(o, v);
}

static void str_member(export_out *o, const char *key, const char *v)
{
    eo_lit(o, ",\"");
    eo_str(o, key);
    eo_lit(o, "\":");
    eo_json(o, v);
}

static void bool_member(export_out *o, const char *key, int v)
{
    eo_lit(o, ",\"");
    eo_str(o, key);
    eo_str(o, v ? "\":true" : "\":false");
}

static void gpu_members(export_out *o, const prof_event *ev)
{
    u64_member(o, "device", ev->device);
    u64_member(o, "stream", ev->stream);
    u64_member(o, "correlation", ev->correlation);
}

/* The members after type, thread and times. */
static void members(export_out *o, const prof_event *ev)
{
    switch (ev->type) {
    case PROF_EV_REGION:
        str_member(o, "name", ev->name);
        str_member(o, "kind", prof_kind_name(ev->kind));
        u64_member(o, "depth", ev->depth);
        break;
    case PROF_EV_STEP:
        u64_member(o, "step", ev->value);
        bool_member(o, "sampled", ev->flags & PROF_STEP_SAMPLED);
        bool_member(o, "incomplete", ev->flags & PROF_STEP_INCOMPLETE);
        break;
    case PROF_EV_MEMORY:
        str_member(o, "name", ev->name);
        u64_member(o, "bytes", ev->value);
        break;
    case PROF_EV_COUNTER:
        str_member(o, "name", ev->name);
        eo_lit(o, ",\"value\":");
        eo_double(o, ev->fvalue, "null");
        break;
    case PROF_EV_MARK: str_member(o, "name", ev->name); break;
    case PROF_EV_GPU_KERNEL:
        str_member(o, "name", ev->name);
        gpu_members(o, ev);
        break;
    case PROF_EV_GPU_MEMCPY:
        str_member(o, "copy_kind", prof_copy_kind_name(ev->subkind));
        gpu_members(o, ev);
        u64_member(o, "bytes", ev->value);
        break;
    case PROF_EV_GPU_MEMSET:
        gpu_members(o, ev);
        u64_member(o, "bytes", ev->value);
        break;
    case PROF_EV_SYNC:
        str_member(o, "sync_kind", prof_sync_kind_name(ev->subkind));
        gpu_members(o, ev);
        break;
    case PROF_EV_API:
        str_member(o, "name", ev->name);
        u64_member(o, "correlation", ev->correlation);
        break;
    case PROF_EV_DROPPED: u64_member(o, "count", ev->value); break;
    case PROF_EV_THREAD:
        str_member(o, "name", ev->name);
        u64_member(o, "os_tid", ev->value);
        break;
    case PROF_EV_ATTR:
        if (ev->subkind == PROF_ATTR_CLASS)
            str_member(o, "key", "class");
        else
            u64_member(o, "key", ev->subkind);
        str_member(o, "name", ev->name);
        str_member(o, "value", prof_event_attr_value(ev));
        break;
    }
}

/* Definitions: no times; an attribute belongs to no thread either. */
static int is_definition(prof_event_type t)
{
    return t == PROF_EV_THREAD || t == PROF_EV_ATTR;
}

static int is_instant(prof_event_type t)
{
    return t == PROF_EV_MEMORY || t == PROF_EV_COUNTER || t == PROF_EV_MARK ||
           t == PROF_EV_DROPPED;
}

static prof_err json_event(export_ctx *x, const prof_event *ev)
{
    export_out *o = x->out;
    eo_lit(o, "{\"type\":\"");
    eo_str(o, prof_event_type_name(ev->type));
    eo_char(o, '"');
    if (ev->thread != PROF_THREAD_GPU && ev->type != PROF_EV_ATTR)
        u64_member(o, "thread", ev->thread);
    if (!is_definition(ev->type)) {
        u64_member(o, "start_ns", ev->start_ns);
        if (!is_instant(ev->type))
            u64_member(o, "dur_ns", ev->dur_ns);
    }
    members(o, ev);
    eo_lit(o, "}\n");
    return PROF_OK;
}

static prof_err json_end(export_ctx *x, const prof_read_status *st)
{
    export_out *o = x->out;
    eo_lit(o, "{\"type\":\"end\"");
    u64_member(o, "events", st->events);
    bool_member(o, "clean", st->clean);
    bool_member(o, "truncated", st->truncated);
    u64_member(o, "bytes_lost", st->bytes_lost);
    u64_member(o, "dropped_events", st->dropped_events);
    str_member(o, "detail", st->detail);
    eo_lit(o, "}\n");
    return PROF_OK;
}

static void json_finish(export_ctx *x)
{
    (void)x;
}

const export_ops export_json_ops = { "json", json_begin, json_event, json_end, json_finish };
