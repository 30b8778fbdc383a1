/* sink_meta.c - what an imported profile's metadata says beside its
 * events: the facts the importers hand over, the notes of what was left
 * out, unknown or damaged, the counts, and the closing that writes it all
 * over the room kept for it (formats/kineto-import.md, nsys-import.md). */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "format/meta_keys.h"
#include "import/sink.h"
#include "import/sink_int.h"
#include "prof.h"
#include "util/vec.h"

/* ---- facts -------------------------------------------------------------------------- */

void sink_set_epoch(import_sink *s, int64_t epoch_ns_of_trace_zero)
{
    s->epoch = epoch_ns_of_trace_zero;
}

void sink_set_rank(import_sink *s, int rank, int world_size)
{
    s->rank = rank >= 0 ? rank : 0;
    s->world = world_size >= 1 ? world_size : 1;
}

static void replace_str(import_sink *s, char **dst, const char *src)
{
    char *c = src ? strdup(src) : NULL;
    if (src && !c) {
        sink_fail_nomem(s);
        return;
    }
    free(*dst);
    *dst = c;
}

void sink_set_process(import_sink *s, uint64_t pid, const char *name)
{
    s->pid = pid;
    if (name)
        replace_str(s, &s->process_name, name);
}

void sink_set_host(import_sink *s, const char *host)
{
    replace_str(s, &s->host, host);
}

prof_err sink_add_device(import_sink *s, uint32_t index, const char *name, uint64_t memory_bytes)
{
    size_t i = 0;
    while (i < s->ndevices && s->devices[i].index != index)
        i++;
    if (i == s->ndevices) {
        if (s->ndevices >= SINK_DEVICES) /* more than any machine has */
            return PROF_OK;
        if (vec_grow(&s->devices, &s->cap_devices, s->ndevices, sizeof *s->devices) < 0)
            return sink_fail_nomem(s);
        s->devices[s->ndevices++] = (device){ index, NULL, 0 };
    }
    char cut[128]; /* a device's name, not a document */
    snprintf(cut, sizeof cut, "%s", name ? name : "");
    replace_str(s, &s->devices[i].name, cut);
    s->devices[i].memory_bytes = memory_bytes;
    return s->failed;
}

prof_err sink_set_fact(import_sink *s, const char *key, const char *json_value)
{
    cJSON *v = cJSON_Parse(json_value);
    if (!v)
        return PROF_OK; /* not JSON: left out */
    cJSON_DeleteItemFromObjectCaseSensitive(s->facts, key);
    if (cJSON_GetArraySize(s->facts) >= 32 || !cJSON_AddItemToObject(s->facts, key, v))
        cJSON_Delete(v);
    return PROF_OK;
}

/* ---- notes --------------------------------------------------------------------------- */

static void note(import_sink *s, counted *v, const char *category)
{
    const char *name = category && *category ? category : "(none)";
    size_t i = 0;
    while (i < SINK_CATEGORIES && v[i].name && strcmp(v[i].name, name) != 0)
        i++;
    if (i == SINK_CATEGORIES) /* many distinct: the last slot counts the rest */
        i = SINK_CATEGORIES - 1;
    else if (!v[i].name && !(v[i].name = strndup(name, 64)))
        return (void)sink_fail_nomem(s);
    v[i].n++;
}

void sink_note_unknown(import_sink *s, const char *category)
{
    s->counts.unknown++;
    note(s, s->unknown, category);
}

void sink_note_skipped(import_sink *s, const char *category)
{
    s->counts.skipped++;
    note(s, s->skipped, category);
}

void sink_note_damage(import_sink *s, const char *what)
{
    s->counts.damaged = 1;
    if (!s->damage && !(s->damage = strndup(what, 200)))
        sink_fail_nomem(s);
}

const prof_error *sink_error(const import_sink *s)
{
    return s->failed ? &s->error : NULL;
}

static void describe(const counted *v, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < SINK_CATEGORIES && v[i].name && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s %llu", used ? ", " : "", v[i].name,
                         (unsigned long long)v[i].n);
        if (n < 0 || (size_t)n >= cap - used) { /* cut: end on the last whole entry */
            buf[used] = '\0';
            return;
        }
        used += (size_t)n;
    }
}

void sink_describe(const import_sink *s, import_counts *out)
{
    *out = s->counts;
    describe(s->skipped, out->skipped_kinds, sizeof out->skipped_kinds);
    describe(s->unknown, out->unknown_kinds, sizeof out->unknown_kinds);
}

/* ---- closing ------------------------------------------------------------------------- */

static cJSON *add_u64(cJSON *o, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, key, buf);
}

static int add_counted(cJSON *o, const char *key, const counted *v)
{
    cJSON *c = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; c && i < SINK_CATEGORIES && v[i].name; i++)
        if (!add_u64(c, v[i].name, v[i].n))
            return 0;
    return c != NULL;
}

static int add_counts(cJSON *imp, const import_sink *s)
{
    const import_counts *c = &s->counts;
    cJSON *o = cJSON_AddObjectToObject(imp, MK_COUNTS);
    return o && add_u64(o, MK_REGIONS, c->regions) && add_u64(o, MK_STEPS, c->steps) &&
           add_u64(o, MK_KERNELS, c->kernels) && add_u64(o, MK_COPIES, c->copies) &&
           add_u64(o, MK_MEMSETS, c->memsets) && add_u64(o, MK_SYNCS, c->syncs) &&
           add_u64(o, MK_API_CALLS, c->api_calls) &&
           add_u64(o, MK_MEMORY_SAMPLES, c->memory_samples) && add_u64(o, MK_MARKS, c->marks) &&
           add_u64(o, MK_UNKNOWN, c->unknown) && add_u64(o, MK_SKIPPED, c->skipped) &&
           add_u64(o, MK_UNPLACED, c->unplaced) && add_u64(o, MK_CLAMPED, c->clamped) &&
           add_u64(o, MK_REORDERED, c->reordered);
}

/* brief: without the lists of categories and facts, for metadata that
 * would not fit the room reserved for it. */
static int add_import(cJSON *meta, const import_sink *s, int brief)
{
    cJSON *imp = cJSON_AddObjectToObject(meta, MK_IMPORT);
    if (!imp || !cJSON_AddStringToObject(imp, MK_SOURCE, s->source) ||
        !cJSON_AddStringToObject(imp, MK_FILE, s->input) || !add_counts(imp, s))
        return 0;
    if (s->damage && !cJSON_AddStringToObject(imp, MK_DAMAGED, s->damage))
        return 0;
    if (brief)
        return 1;
    if (!add_counted(imp, MK_UNKNOWN_CATEGORIES, s->unknown) ||
        !add_counted(imp, MK_SKIPPED_CATEGORIES, s->skipped))
        return 0;
    cJSON *facts = cJSON_Duplicate(s->facts, 1);
    return facts && cJSON_AddItemToObject(imp, MK_FACTS, facts);
}

/* brief: the first SINK_DEVICES_BRIEF devices only. */
static int add_devices(cJSON *meta, const import_sink *s, int brief)
{
    cJSON *a = cJSON_AddArrayToObject(meta, MK_DEVICES);
    size_t n = brief && s->ndevices > SINK_DEVICES_BRIEF ? SINK_DEVICES_BRIEF : s->ndevices;
    for (size_t i = 0; a && i < n; i++) {
        cJSON *d = cJSON_CreateObject();
        if (!d || !cJSON_AddItemToArray(a, d) ||
            !cJSON_AddNumberToObject(d, MK_INDEX, s->devices[i].index) ||
            !cJSON_AddStringToObject(d, MK_NAME, s->devices[i].name) ||
            !add_u64(d, MK_MEMORY_BYTES, s->devices[i].memory_bytes))
            return 0;
    }
    return a != NULL;
}

static char *metadata_text(const import_sink *s, int brief)
{
    cJSON *m = cJSON_CreateObject(), *clock, *argv, *arg;
    char source[64];
    snprintf(source, sizeof source, "import:%s", s->source);
    int64_t origin_epoch = s->epoch + s->origin;
    int ok = m && cJSON_AddStringToObject(m, MK_FORMAT, "prof") &&
             cJSON_AddStringToObject(m, MK_LIBPROF_VERSION, PROF_VERSION_STRING) &&
             (clock = cJSON_AddObjectToObject(m, MK_CLOCK)) &&
             cJSON_AddStringToObject(clock, MK_SOURCE, source) &&
             add_u64(clock, MK_ORIGIN_EPOCH_NS, origin_epoch > 0 ? (uint64_t)origin_epoch : 0) &&
             add_u64(m, MK_START_EPOCH_NS, origin_epoch > 0 ? (uint64_t)origin_epoch : 0) &&
             cJSON_AddStringToObject(m, MK_HOST, s->host ? s->host : "") &&
             add_u64(m, MK_PID, s->pid) && (argv = cJSON_AddArrayToObject(m, MK_ARGV)) &&
             (arg = cJSON_CreateString(s->process_name ? s->process_name : s->input)) &&
             cJSON_AddItemToArray(argv, arg) && cJSON_AddNumberToObject(m, MK_RANK, s->rank) &&
             cJSON_AddNumberToObject(m, MK_WORLD_SIZE, s->world) &&
             cJSON_AddNumberToObject(m, MK_LOCAL_RANK, 0) && add_devices(m, s, brief) &&
             cJSON_AddObjectToObject(m, MK_TAGS) && add_import(m, s, brief);
    char *text = ok ? cJSON_PrintUnformatted(m) : NULL;
    cJSON_Delete(m);
    return text;
}

static prof_err drain_all(import_sink *s)
{
    /* syncs whose API call never came have no thread */
    s->counts.unplaced += s->nsyncs;
    s->counts.syncs -= s->nsyncs;
    s->nsyncs = 0;
    prof_err e = PROF_OK;
    for (size_t i = 0; i < s->nthreads && !e; i++)
        e = sink_thread_drain(s, s->threads[i]);
    if (!e && s->memory.count && !s->nthreads && !sink_thread_of(s, 0))
        return s->failed;
    if (!e)
        e = sink_block_out(s, &s->memory, 1);
    return e ? e : sink_block_out(s, &s->gpu, 1);
}

prof_err sink_close(import_sink *s, prof_error *err)
{
    return sink_finish(s, NULL, err);
}

prof_err sink_finish(import_sink *s, import_counts *counts, prof_error *err)
{
    prof_err e = drain_all(s);
    if (counts)
        sink_describe(s, counts);
    char *text = e ? NULL : metadata_text(s, 0);
    if (text && strlen(text) > SINK_META_RESERVED) {
        free(text);
        text = metadata_text(s, 1);
    }
    if (!e && !text)
        e = sink_fail_nomem(s);
    prof_error werr = { PROF_OK, "" };
    if (!e && (e = pf_writer_replace_metadata(s->w, text, &werr)) != PROF_OK)
        sink_fail(s, e, werr.message);
    free(text);
    if (!e) {
        pf_writer *w = s->w;
        s->w = NULL;
        if ((e = pf_writer_close(w, &werr)) != PROF_OK)
            sink_fail(s, e, werr.message);
    }
    if (e && err)
        *err = s->error;
    if (counts)
        counts->output_failed = s->counts.output_failed;
    sink_abandon(s);
    return e;
}

