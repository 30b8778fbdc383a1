/* fuzz_export.c - libFuzzer target over the two streaming consumers of a
 * profile's events: `prof export` in its four formats (each from its own
 * reader over the input in memory) and the dashboard's time windows
 * (/api/events, which reads a path: the input goes through a memfd). The
 * input is used as given and with its checksums repaired. Checks: what the
 * JSON formats write parses (the Chrome trace as one document, JSON lines
 * line by line, each window as one document) also for a profile cut short,
 * and a window holds no more events than its limit, in start order. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "output/export.h"
#include "output/timeline.h"
#include "prof_reader.h"
#include "fuzz_util.h"

static void check_json_lines(char *text, size_t len)
{
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        CHECK(nl != NULL); /* every line ends */
        cJSON *line = cJSON_ParseWithLength(p, (size_t)(nl - p));
        CHECK(line != NULL);
        cJSON_Delete(line);
        p = nl + 1;
    }
}

/* One export of the input; the output in memory, checked when JSON. */
static void export_one(const uint8_t *data, size_t size, export_format f, unsigned options)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    if (prof_reader_open_memory(data, size, &r, &err) != PROF_OK)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(out != NULL);
    export_result res;
    prof_err e = export_profile(r, f, options, out, &res, &err);
    CHECK(fclose(out) == 0);
    prof_reader_close(r);
    if (e != PROF_OK) {
        CHECK(!res.output_failed && err.code == e && err.message[0] != '\0');
    } else if (f == EXPORT_CHROME_TRACE) {
        cJSON *doc = cJSON_ParseWithLength(text, len);
        CHECK(doc != NULL);
        cJSON_Delete(doc);
    } else if (f == EXPORT_JSON) {
        check_json_lines(text, len);
    }
    free(text);
}

/* One window; returns its parsed JSON (caller deletes) or NULL. */
static cJSON *window(const char *path, uint64_t t0, uint64_t t1, long thread, size_t limit)
{
    timeline_query q = { t0, t1, thread, limit };
    prof_error err = { PROF_OK, "" };
    char *json = timeline_window_json(path, NULL, &q, &err);
    if (!json) {
        CHECK(err.code != PROF_OK && err.message[0] != '\0');
        return NULL;
    }
    cJSON *doc = cJSON_Parse(json);
    free(json);
    CHECK(doc != NULL);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(doc, "events"), *ev;
    CHECK(cJSON_IsArray(events));
    CHECK((size_t)cJSON_GetArraySize(events) <= limit);
    double last = -1;
    cJSON_ArrayForEach(ev, events) {
        double start = cJSON_GetNumberValue(cJSON_GetArrayItem(ev, 2));
        CHECK(start >= last);
        last = start;
    }
    return doc;
}

static void windows(const uint8_t *data, size_t size)
{
    const char *path = fuzz_as_file(data, size);
    cJSON *all = window(path, 0, UINT64_MAX, TIMELINE_ALL_THREADS, 20000);
    if (!all)
        return;
    cJSON_Delete(window(path, 0, UINT64_MAX, TIMELINE_GPU_ONLY, 3));
    cJSON_Delete(window(path, 0, UINT64_MAX, 0, 0));
    /* A window around one of the events, on its lane's thread. */
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(all, "events");
    int n = cJSON_GetArraySize(events);
    if (n > 0) {
        const cJSON *ev = cJSON_GetArrayItem(events, (int)(size % (size_t)n));
        double start = cJSON_GetNumberValue(cJSON_GetArrayItem(ev, 2));
        double dur = cJSON_GetNumberValue(cJSON_GetArrayItem(ev, 3));
        uint64_t t0 = start < 1.8e19 ? (uint64_t)start : 0;
        uint64_t t1 = start + dur < 1.8e19 ? (uint64_t)(start + dur) : UINT64_MAX;
        cJSON_Delete(window(path, t0, t1 < t0 ? t0 : t1, TIMELINE_ALL_THREADS, 2));
        cJSON_Delete(window(path, t0, t0, 1, 5));
    }
    cJSON_Delete(all);
}

static void consume(const uint8_t *data, size_t size)
{
    for (int f = EXPORT_CHROME_TRACE; f <= EXPORT_FOLDED; f++)
        export_one(data, size, (export_format)f, 0);
    export_one(data, size, EXPORT_FOLDED, EXPORT_OPT_THREAD_FRAMES);
    windows(data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_as_given_and_repaired(data, size, consume);
    return 0;
}
