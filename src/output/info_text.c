/* info_text.c - the text of `prof info`: where a profile came from, how
 * complete it is, and how many events of each type it holds. Every string
 * from the profile is user data: control characters are shown escaped so a
 * crafted name cannot drive the terminal. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "analysis/report_keys.h"
#include "output/info_text.h"
#include "util/fmt.h"

/* Prints s with bytes below 0x20 and DEL escaped as \xNN. */
static void put_safe(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double json_num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void render_origin(FILE *out, const cJSON *m)
{
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(m, MK_CLOCK);
    double epoch = json_num(clock, MK_ORIGIN_EPOCH_NS, 0);
    const char *host = json_str(m, MK_HOST);
    fputs("recorded   ", out);
    char when[64];
    struct tm tm;
    /* Metadata is user data: past year 9999 the conversion to time_t can
     * overflow (undefined) and gmtime_r fail, leaving tm unset. A time
     * before 2000 is a trace's base time never read (a cut trace whose
     * times are relative to it), not a date. */
    int known = epoch >= 946684800e9 && epoch < 253402300800e9;
    if (known) {
        time_t secs = (time_t)(epoch / 1e9);
        known = gmtime_r(&secs, &tm) &&
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0;
    }
    if (known) {
        fprintf(out, "%s", when);
    } else {
        fputs("at an unknown time", out);
    }
    if (host && *host) {
        fputs(" on ", out);
        put_safe(out, host);
    }
    fprintf(out, ", pid %.0f, rank %.0f of %.0f\n", json_num(m, MK_PID, 0), json_num(m, MK_RANK, 0),
            json_num(m, MK_WORLD_SIZE, 1));
    const cJSON *argv = cJSON_GetObjectItemCaseSensitive(m, MK_ARGV), *a;
    if (cJSON_IsArray(argv) && cJSON_GetArraySize(argv) > 0) {
        fputs("command   ", out);
        cJSON_ArrayForEach(a, argv) {
            if (!cJSON_IsString(a))
                continue;
            fputc(' ', out);
            put_safe(out, a->valuestring);
        }
        fputc('\n', out);
    }
    const char *ver = json_str(m, MK_LIBPROF_VERSION), *src = json_str(clock, MK_SOURCE);
    if (ver) {
        fputs("libprof    ", out);
        put_safe(out, ver);
        fputc('\n', out);
    }
    if (src) {
        fputs("clock      ", out);
        put_safe(out, src);
        fputc('\n', out);
    }
}

/* "kind 3, other 1" from an object of counts. */
static void put_counted(FILE *out, const cJSON *o)
{
    const cJSON *c;
    int first = 1;
    cJSON_ArrayForEach(c, o) {
        if (!cJSON_IsNumber(c) || !c->string)
            continue;
        fputs(first ? "" : ", ", out);
        put_safe(out, c->string);
        fprintf(out, " %.0f", c->valuedouble);
        first = 0;
    }
}

/* A profile imported from another tool's trace (formats/kineto-import.md):
 * from what, and what it left out. */
static void render_import(FILE *out, const cJSON *m)
{
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(m, MK_IMPORT);
    const char *source = json_str(imp, MK_SOURCE), *file = json_str(imp, MK_FILE);
    if (!source)
        return;
    fputs("imported   from a ", out);
    put_safe(out, source);
    fputs(" trace", out);
    if (file) {
        fputs(", ", out);
        put_safe(out, file);
    }
    fputc('\n', out);
    static const char *const lists[][2] = { { MK_SKIPPED_CATEGORIES, "left out " },
                                            { MK_UNKNOWN_CATEGORIES, "unknown    " } };
    for (size_t i = 0; i < 2; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(imp, lists[i][0]);
        if (cJSON_GetArraySize(o) == 0)
            continue;
        fprintf(out, "  %s ", lists[i][1]);
        put_counted(out, o);
        fputc('\n', out);
    }
    const char *damaged = json_str(imp, MK_DAMAGED);
    if (damaged) {
        fputs("  damaged    ", out);
        put_safe(out, damaged);
        fputs(": read up to it\n", out);
    }
}

static void render_completeness(FILE *out, const profile_summary *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const prof_read_status *st = &s->status;
    fprintf(out, "format     %u.%u, ", s->major, s->minor);
    if (st->clean)
        fputs("closed cleanly\n", out);
    else if (st->truncated)
        fprintf(out, "not closed cleanly: cut after %s blocks, last %s unreadable (%s)\n",
                fmt_count(b1, st->blocks), fmt_bytes(b2, st->bytes_lost), st->detail);
    else
        fprintf(out, "not closed cleanly (no footer): all %s blocks intact\n",
                fmt_count(b1, st->blocks));
}

static void render_threads(FILE *out, const profile_summary *s)
{
    char b[FMT_BUF];
    fprintf(out, "threads    %u\n", s->nthreads);
    for (uint32_t i = 0; i < s->nthreads; i++) {
        const summary_thread *t = &s->threads[i];
        fprintf(out, "  %-8u ", t->index);
        put_safe(out, t->name && *t->name ? t->name : "(unnamed)");
        if (t->os_tid)
            fprintf(out, " (tid %llu)", (unsigned long long)t->os_tid);
        fprintf(out, ", %s events\n", fmt_count(b, t->events));
    }
    if (s->gpu_events)
        fprintf(out, "  gpu      %s events\n", fmt_count(b, s->gpu_events));
}

static void render_counts(FILE *out, const profile_summary *s)
{
    char b[FMT_BUF];
    fprintf(out, "events     %s\n", fmt_count(b, s->events));
    for (int t = PROF_EV_REGION; t < PROF_EV_THREAD; t++)
        if (s->counts[t])
            fprintf(out, "  %-12s %s\n", prof_event_type_name((prof_event_type)t),
                    fmt_count(b, s->counts[t]));
    fprintf(out, "dropped    %s events\n", fmt_count(b, s->status.dropped_events));
    if (s->counts[PROF_EV_ATTR]) /* definitions, not events */
        fprintf(out, "attributes %s (classes of names)\n", fmt_count(b, s->counts[PROF_EV_ATTR]));
}

static void render_tags(FILE *out, const cJSON *m)
{
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(m, MK_TAGS), *t;
    if (!cJSON_IsObject(tags) || !tags->child)
        return;
    fputs("tags      ", out);
    cJSON_ArrayForEach(t, tags) {
        if (!cJSON_IsString(t))
            continue;
        fputc(' ', out);
        put_safe(out, t->string);
        fputc('=', out);
        put_safe(out, t->valuestring);
    }
    fputc('\n', out);
}

prof_err info_render_text(FILE *out, const char *path, const profile_summary *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    cJSON *m = cJSON_Parse(s->metadata);
    fputs("file       ", out);
    put_safe(out, path);
    fprintf(out, " (%s)\n", fmt_bytes(b1, s->status.file_size));
    render_completeness(out, s);
    if (m) {
        render_origin(out, m);
        render_import(out, m);
    }
    fprintf(out, "span       %s, blocks %s\n", fmt_duration(b1, (double)(s->last_ns - s->first_ns)),
            fmt_count(b2, s->status.blocks));
    render_threads(out, s);
    render_counts(out, s);
    if (m)
        render_tags(out, m);
    cJSON_Delete(m);
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
