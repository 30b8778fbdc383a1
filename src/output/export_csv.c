/* export_csv.c - the CSV export: a header row, then one row per event in
 * file order, with the column set documented in formats/export-csv.md.
 * Fields are quoted as RFC 4180 says (when they hold a comma, a quote, CR
 * or LF; quotes doubled); bytes of names that are not UTF-8, and control
 * characters, become U+FFFD so that the file is always valid UTF-8 and
 * safe to print, by csvout_escape(), the one escaper of every CSV prof
 * writes; a name that begins as a formula is quoted after a ' (csvout.h). */
#include <math.h>

#include "output/csvout.h"
#include "output/export_out.h"
#include "util/error.h"

#define HEADER                                                                         \
    "type,thread,thread_name,start_ns,dur_ns,name,kind,depth,device,stream,correlation,value," \
    "flags\n"

static prof_err csv_begin(export_ctx *x)
{
    eo_lit(x->out, HEADER);
    return PROF_OK;
}

/* A text field, quoted when it must be, in valid UTF-8 (csvout.h), escaped
 * straight into the output buffer. */
static void field(export_out *o, const char *s)
{
    int quote = csvout_needs_quotes(s);
    if (quote) {
        eo_char(o, '"');
        if (*csvout_lead(s))
            eo_char(o, '\'');
    }
    size_t n = strlen(s), used;
    while (n) {
        size_t room = n < 256 ? n * 3 + CSVOUT_MIN_ROOM : 256 * 3; /* U+FFFD: 3 per byte */
        size_t w = csvout_escape(eo_room(o, room), room, s, n, &used);
        o->len += w;
        s += used;
        n -= used;
    }
    if (quote)
        eo_char(o, '"');
}

static void num(export_out *o, uint64_t v)
{
    eo_char(o, ',');
    eo_u64(o, v);
}

static void counter_value(export_out *o, double v)
{
    if (isnan(v))
        eo_lit(o, "nan");
    else if (isinf(v))
        eo_str(o, v > 0 ? "inf" : "-inf");
    else
        eo_double(o, v, "");
}

static int has_gpu_fields(prof_event_type t)
{
    return t == PROF_EV_GPU_KERNEL || t == PROF_EV_GPU_MEMCPY || t == PROF_EV_GPU_MEMSET ||
           t == PROF_EV_SYNC;
}

/* name and kind columns */
static void name_and_kind(export_out *o, const prof_event *ev)
{
    eo_char(o, ',');
    field(o, ev->name);
    eo_char(o, ',');
    if (ev->type == PROF_EV_REGION)
        eo_str(o, prof_kind_name(ev->kind));
    else if (ev->type == PROF_EV_GPU_MEMCPY)
        eo_str(o, prof_copy_kind_name(ev->subkind));
    else if (ev->type == PROF_EV_SYNC)
        eo_str(o, prof_sync_kind_name(ev->subkind));
}

/* value and flags columns */
static void value_and_flags(export_out *o, const prof_event *ev)
{
    eo_char(o, ',');
    switch (ev->type) {
    case PROF_EV_STEP:
    case PROF_EV_MEMORY:
    case PROF_EV_GPU_MEMCPY:
    case PROF_EV_GPU_MEMSET:
    case PROF_EV_DROPPED: eo_u64(o, ev->value); break;
    case PROF_EV_COUNTER: counter_value(o, ev->fvalue); break;
    default: break;
    }
    eo_char(o, ',');
    if (ev->type == PROF_EV_STEP) {
        int sampled = (ev->flags & PROF_STEP_SAMPLED) != 0;
        if (sampled)
            eo_lit(o, "sampled");
        if (ev->flags & PROF_STEP_INCOMPLETE)
            eo_str(o, sampled ? " incomplete" : "incomplete");
    }
}

static prof_err csv_event(export_ctx *x, const prof_event *ev)
{
    export_out *o = x->out;
    if (ev->type == PROF_EV_THREAD) /* a definition: names the thread_name column */
        return PROF_OK;
    if (ev->type == PROF_EV_ATTR) /* a definition with no row of its own (json has it) */
        return PROF_OK;
    eo_str(o, prof_event_type_name(ev->type));
    eo_char(o, ',');
    if (ev->thread == PROF_THREAD_GPU)
        eo_lit(o, "gpu,");
    else {
        eo_u64(o, ev->thread);
        eo_char(o, ',');
        const char *tn = prof_reader_thread_name(x->reader, ev->thread);
        field(o, tn ? tn : "");
    }
    num(o, ev->start_ns);
    num(o, ev->dur_ns);
    name_and_kind(o, ev);
    eo_char(o, ',');
    if (ev->type == PROF_EV_REGION)
        eo_u64(o, ev->depth);
    if (has_gpu_fields(ev->type)) {
        num(o, ev->device);
        num(o, ev->stream);
    } else
        eo_lit(o, ",,");
    eo_char(o, ',');
    if (has_gpu_fields(ev->type) || ev->type == PROF_EV_API)
        eo_u64(o, ev->correlation);
    value_and_flags(o, ev);
    eo_char(o, '\n');
    return PROF_OK;
}

static prof_err csv_end(export_ctx *x, const prof_read_status *st)
{
    (void)x;
    (void)st;
    return PROF_OK;
}

static void csv_finish(export_ctx *x)
{
    (void)x;
}

const export_ops export_csv_ops = { "csv", csv_begin, csv_event, csv_end, csv_finish };
