/* output_export.c - export_profile and the JSON escaper: the Chrome trace of
 * testdata/demo.prof parsed with cJSON (event counts per type equal the
 * reader's, every complete event placed and timed, slices nested per
 * thread, counters numeric), names with quotes, backslashes, newlines,
 * control bytes and invalid UTF-8 surviving in every format, GPU tracks
 * and flow arrows, JSON lines, folded stacks against self times computed
 * here from the fixture's layout, cut-short input, and write failures.
 * Run from the repository root. */
#include <cjson/cJSON.h>
#include <math.h>

#include "format_util.h"
#include "output/export.h"
#include "synth.h"
#include "util/jsonesc.h"

#define DEMO "testdata/demo.prof"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(output_export, .fini = teardown);

/* ---- helpers -------------------------------------------------------------- */

/* Exports path in format f into a string; *res gets the result. */
static char *export_to_string(const char *path, export_format f, unsigned options,
                              export_result *res)
{
    prof_reader *r = NULL;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s: %s", path, err.message);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    prof_err e = export_profile(r, f, options, out, res, &err);
    cr_assert_eq(e, PROF_OK, "export failed: %s", err.message);
    cr_assert_eq(fclose(out), 0);
    prof_reader_close(r);
    cr_assert_eq(strlen(text), len, "a NUL byte in the output");
    return text;
}

/* Event counts by type as the reader hands them out (no definitions). */
static void reader_counts(const char *path, uint64_t counts[PROF_EV_THREAD + 1])
{
    fu_list l;
    prof_error err;
    memset(counts, 0, sizeof(uint64_t) * (PROF_EV_THREAD + 1));
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK);
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].ev.type != PROF_EV_THREAD)
            counts[l.v[i].ev.type]++;
    fu_free(&l);
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int has_number(const cJSON *o, const char *key)
{
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, key));
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "no number '%s'", key);
    return v->valuedouble;
}

/* Parses a Chrome trace and returns its traceEvents array's owner. */
static cJSON *parse_trace(const char *text, const cJSON **events)
{
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the Chrome trace is not JSON near: %.80s", cJSON_GetErrorPtr());
    *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    cr_assert(cJSON_IsArray(*events));
    cr_assert_str_eq(str_of(root, "displayTimeUnit"), "ns");
    cr_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "otherData")));
    return root;
}

/* The categories of data events, by event type (as the exporter names them). */
static int type_of_cat(const char *cat)
{
    for (int t = PROF_EV_REGION; t < PROF_EV_THREAD; t++)
        if (strcmp(cat, prof_event_type_name((prof_event_type)t)) == 0)
            return t;
    return 0;
}

typedef struct slice {
    double pid, tid, ts, dur;
} slice;

static int by_track_then_time(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur; /* parents first */
}

/* Complete events of one track must nest: each starts after the end of,
 * or lies within, the slices open before it. Times are microseconds with
 * three decimals, so a tolerance of half a nanosecond. */
static void assert_nested(slice *s, size_t n)
{
    qsort(s, n, sizeof *s, by_track_then_time);
    double end[256];
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid))
            depth = 0;
        while (depth && s[i].ts >= end[depth - 1] - 0.0005)
            depth--;
        if (depth)
            cr_assert_leq(s[i].ts + s[i].dur, end[depth - 1] + 0.0005,
                          "slice at %.3f (+%.3f) on pid %.0f tid %.0f overlaps its parent ending "
                          "%.3f",
                          s[i].ts, s[i].dur, s[i].pid, s[i].tid, end[depth - 1]);
        cr_assert_lt(depth, (size_t)256);
        end[depth++] = s[i].ts + s[i].dur;
    }
}

/* Checks every event of a parsed trace and counts them by event type. */
static void check_trace(const cJSON *events, uint64_t counts[PROF_EV_THREAD + 1], size_t *flows)
{
    size_t n = (size_t)cJSON_GetArraySize(events), ns = 0;
    slice *s = calloc(n ? n : 1, sizeof *s);
    cr_assert_not_null(s);
    memset(counts, 0, sizeof(uint64_t) * (PROF_EV_THREAD + 1));
    *flows = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const char *ph = str_of(e, "ph"), *cat = str_of(e, "cat"), *name = str_of(e, "name");
        cr_assert(ph && cat && name, "an event without ph, cat or name");
        cr_assert(has_number(e, "pid") && has_number(e, "tid"), "%s without pid/tid", name);
        if (strcmp(ph, "M") == 0)
            continue;
        cr_assert(has_number(e, "ts"), "%s without ts", name);
        if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
            cr_assert(has_number(e, "id"));
            (*flows)++;
            continue;
        }
        int t = type_of_cat(cat);
        cr_assert(t, "unknown category '%s'", cat);
        counts[t]++;
        if (strcmp(ph, "X") == 0) {
            cr_assert(has_number(e, "dur"), "%s without dur", name);
            s[ns++] = (slice){ num_of(e, "pid"), num_of(e, "tid"), num_of(e, "ts"),
                               num_of(e, "dur") };
        } else if (strcmp(ph, "C") == 0) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args"), *a;
            cr_assert(cJSON_IsObject(args) && cJSON_GetArraySize(args) > 0);
            cJSON_ArrayForEach(a, args)
                cr_assert(cJSON_IsNumber(a), "counter %s is not numeric", name);
        } else
            cr_assert_str_eq(ph, "i", "unexpected phase %s", ph);
    }
    assert_nested(s, ns);
    free(s);
}

/* ---- the escaper ---------------------------------------------------------- */

static void assert_escapes(const char *in, size_t n, const char *want)
{
    char out[256];
    size_t used;
    size_t len = jsonesc_chunk(out, sizeof out, in, n, &used);
    cr_assert_eq(used, n);
    out[len] = '\0';
    cr_assert_str_eq(out, want);
}

Test(output_export, jsonesc_escapes_everything_a_name_may_hold)
{
    assert_escapes("plain", 5, "plain");
    assert_escapes("a\"b\\c", 5, "a\\\"b\\\\c");
    assert_escapes("l1\nl2\r\t\b\f", 9, "l1\\nl2\\r\\t\\b\\f");
    assert_escapes("\x01\x1f\x7f", 3, "\\u0001\\u001f\\u007f");
    assert_escapes("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 11,
                   "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    assert_escapes("\xff", 1, "\\ufffd");
    assert_escapes("\xc0\x80", 2, "\\ufffd\\ufffd");          /* overlong NUL     */
    assert_escapes("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"); /* a surrogate     */
    assert_escapes("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* > 10FFFF */
    assert_escapes("a\xe2\x82", 3, "a\\ufffd\\ufffd");        /* cut short        */
    assert_escapes("\x80x", 2, "\\ufffdx");                   /* stray continuation */
    assert_escapes("\xe2\x80\xa8", 3, "\\u2028");
    assert_escapes("a\0b", 3, "a\\u0000b");
}

Test(output_export, jsonesc_chunks_make_progress_and_quote)
{
    const char *s = "\x01\xf0\x9f\x98\x80\"x";
    char out[8];
    size_t used, done = 0, n = strlen(s);
    char all[64] = "";
    while (done < n) {
        size_t len = jsonesc_chunk(out, JSONESC_MAX_PER_BYTE, s + done, n - done, &used);
        cr_assert_gt(used, 0u, "no progress at %zu", done);
        strncat(all, out, len);
        done += used;
    }
    cr_assert_str_eq(all, "\\u0001\xf0\x9f\x98\x80\\\"x");
    char *q = jsonesc_quote("a\nb");
    cr_assert_str_eq(q, "\"a\\nb\"");
    free(q);
    char *c = jsonesc_clean_json("{\"k\\\"\":\"a\x01\xff\",\"n\": [1.5e3, 18446744073709551615]}");
    cr_assert_str_eq(c, "{\"k\\\"\":\"a\\u0001\\ufffd\",\"n\": [1.5e3, 18446744073709551615]}");
    free(c);
}

/* ---- Chrome trace --------------------------------------------------------- */

Test(output_export, chrome_trace_of_demo)
{
    export_result res;
    char *text = export_to_string(DEMO, EXPORT_CHROME_TRACE, 0, &res);
    const cJSON *events;
    cJSON *root = parse_trace(text, &events);
    uint64_t want[PROF_EV_THREAD + 1], got[PROF_EV_THREAD + 1];
    size_t flows;
    reader_counts(DEMO, want);
    check_trace(events, got, &flows);
    for (int t = PROF_EV_REGION; t < PROF_EV_THREAD; t++)
        cr_assert_eq(got[t], want[t], "%s: %llu events in the trace, %llu in the profile",
                     prof_event_type_name((prof_event_type)t), (unsigned long long)got[t],
                     (unsigned long long)want[t]);
    cr_assert_eq(res.status.events, 8733u);
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    cr_assert_str_eq(str_of(other, "host"), "demo-host");
    const cJSON *epoch = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(other, "clock"), "origin_epoch_ns");
    cr_assert(cJSON_IsNumber(epoch));
    cr_assert(strstr(text, "\"origin_epoch_ns\":1767225600000000000"), "epoch digits lost");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(other, "prof_export");
    cr_assert_eq(num_of(ex, "events"), 8733.0);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ex, "clean")));
    /* nanoseconds kept: the demo's first region starts at 5.2 ms */
    cr_assert(strstr(text, "\"name\":\"collate\",\"ts\":5200.000,\"dur\":2918.196,"));
    cJSON_Delete(root);
    free(text);
}

/* Names a profile may hold, and what a JSON parser must read back. */
static const struct {
    const char *raw, *decoded;
} nasty[] = {
    { "say \"hi\"", "say \"hi\"" },
    { "C:\\path\\to", "C:\\path\\to" },
    { "two\nlines\r\n", "two\nlines\r\n" },
    { "bell\x07 esc\x1b[31m del\x7f", "bell\x07 esc\x1b[31m del\x7f" },
    { "bad \xff\xfe utf8 \xc3", "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd" },
    { "comma, and ; semi", "comma, and ; semi" },
    { "caf\xc3\xa9 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xf0\x9f\x94\xa5" },
};
#define NNASTY (sizeof nasty / sizeof nasty[0])

/* One region per nasty name on thread 0, plus one of everything else: a
 * step, memory, a counter, a mark, a GPU kernel, copy and memset launched
 * by API calls (correlations 1-3), a sync, a dropped count. */
static void write_nasty(const char *path)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 100, "main \"thread\"\n\xff");
    uint64_t t = 1000;
    for (size_t i = 0; i < NNASTY; i++, t += 1000)
        synth_region(s, 0, nasty[i].raw, PROF_KIND_COMPUTE, 0, t, 500);
    synth_api(s, 0, "cudaLaunchKernel", 1, t, 100);
    synth_api(s, 0, "cudaMemcpyAsync", 2, t + 200, 100);
    synth_api(s, 0, "cudaMemsetAsync", 3, t + 400, 100);
    synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 0, t + 600, 900);
    synth_gpu_kernel(s, "gemm<\"f\\32\">", 0, 7, 1, t + 150, 300);
    synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 8, 2, 4096, t + 300, 200);
    synth_gpu_memset(s, 1, 9, 3, 512, t + 500, 50);
    synth_memory(s, 0, "gpu.allocated", t, 1u << 30);
    synth_counter(s, 0, "loss\t1", t, 0.25);
    synth_counter(s, 0, "nan", t, NAN);
    synth_mark(s, 0, "mark\x01", t);
    synth_dropped(s, 0, 17, t);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, 0, t + 2000);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

Test(output_export, chrome_trace_names_gpu_tracks_and_flows)
{
    const char *path = fu_path("nasty.prof");
    write_nasty(path);
    export_result res;
    char *text = export_to_string(path, EXPORT_CHROME_TRACE, 0, &res);
    const cJSON *events;
    cJSON *root = parse_trace(text, &events);
    uint64_t want[PROF_EV_THREAD + 1], got[PROF_EV_THREAD + 1];
    size_t flows;
    reader_counts(path, want);
    /* The NaN counter is written as null, which check_trace refuses: drop it. */
    for (int i = cJSON_GetArraySize(events) - 1; i >= 0; i--) {
        const cJSON *e = cJSON_GetArrayItem(events, i);
        if (str_of(e, "name") && strcmp(str_of(e, "name"), "nan") == 0) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(e, "args"), "value");
            cr_assert(cJSON_IsNull(v), "NaN not written as null");
            cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(root, "traceEvents"), i);
            want[PROF_EV_COUNTER]--;
        }
    }
    check_trace(events, got, &flows);
    for (int t = PROF_EV_REGION; t < PROF_EV_THREAD; t++)
        cr_assert_eq(got[t], want[t], "%s", prof_event_type_name((prof_event_type)t));
    cr_assert_eq(flows, 6u, "three API calls, three launches: %zu flow events", flows);
    size_t found = 0, gpu_names = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const char *name = str_of(e, "name"), *ph = str_of(e, "ph");
        for (size_t i = 0; i < NNASTY; i++)
            if (strcmp(name, nasty[i].decoded) == 0 && strcmp(ph, "X") == 0)
                found++;
        if (strcmp(ph, "f") == 0) {
            cr_assert_str_eq(str_of(e, "bp"), "e");
            cr_assert_geq(num_of(e, "pid"), 10000000.0, "flow ends on the GPU's process");
        }
        if (strcmp(str_of(e, "cat"), "gpu_kernel") == 0) {
            cr_assert_str_eq(name, "gemm<\"f\\32\">");
            cr_assert_eq(num_of(e, "pid"), 10000000.0);
            cr_assert_eq(num_of(e, "tid"), 7.0);
        }
        if (strcmp(ph, "M") == 0 && strcmp(name, "thread_name") == 0 &&
            num_of(e, "tid") == 0.0 && num_of(e, "pid") < 10000000.0) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
            cr_assert_str_eq(str_of(args, "name"), "main \"thread\"\n\xef\xbf\xbd");
        }
        if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0 &&
            num_of(e, "pid") >= 10000000.0)
            gpu_names++;
    }
    cr_assert_eq(found, NNASTY, "%zu of %zu names read back", found, NNASTY);
    cr_assert_eq(gpu_names, 2u, "one process per GPU (devices 0 and 1)");
    cJSON_Delete(root);
    free(text);
}

/* ---- JSON lines and CSV ----------------------------------------------------- */

Test(output_export, json_lines_hold_every_event)
{
    const char *path = fu_path("nasty.prof");
    write_nasty(path);
    export_result res;
    char *text = export_to_string(path, EXPORT_JSON, 0, &res);
    uint64_t want[PROF_EV_THREAD + 1], got[PROF_EV_THREAD + 1] = { 0 };
    reader_counts(path, want);
    size_t lines = 0, names = 0;
    int saw_end = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        cJSON *o = cJSON_Parse(line);
        cr_assert_not_null(o, "line %zu is not JSON: %s", lines + 1, line);
        const char *type = str_of(o, "type");
        cr_assert_not_null(type);
        if (lines == 0)
            cr_assert_str_eq(type, "profile");
        else if (strcmp(type, "end") == 0) {
            saw_end = 1;
            cr_assert_eq(num_of(o, "events"), (double)res.status.events);
        } else if (strcmp(type, "thread") != 0) {
            int t = type_of_cat(type);
            cr_assert(t, "unknown type %s", type);
            got[t]++;
            const char *name = str_of(o, "name");
            for (size_t i = 0; name && i < NNASTY; i++)
                names += strcmp(name, nasty[i].decoded) == 0;
        }
        cJSON_Delete(o);
    }
    cr_assert(saw_end);
    cr_assert_eq(names, NNASTY);
    for (int t = PROF_EV_REGION; t < PROF_EV_THREAD; t++)
        cr_assert_eq(got[t], want[t], "%s", prof_event_type_name((prof_event_type)t));
    free(text);
}

Test(output_export, csv_quotes_what_needs_quoting)
{
    const char *path = fu_path("nasty.prof");
    write_nasty(path);
    export_result res;
    char *text = export_to_string(path, EXPORT_CSV, 0, &res);
    const char *header = "type,thread,thread_name,start_ns,dur_ns,name,kind,depth,device,"
                         "stream,correlation,value,flags\n";
    cr_assert(strncmp(text, header, strlen(header)) == 0, "header: %.120s", text);
    cr_assert(strstr(text, ",\"say \"\"hi\"\"\",compute,0,"), "quotes doubled:\n%s", text);
    cr_assert(strstr(text, ",\"two\nlines\r\n\",compute,0,"));
    cr_assert(strstr(text, ",\"comma, and ; semi\",compute,"));
    cr_assert(strstr(text, ",C:\\path\\to,compute,"));
    cr_assert(strstr(text, "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd,"));
    cr_assert(strstr(text, "\ngpu_memcpy,gpu,"), "GPU rows have no thread");
    cr_assert(strstr(text, ",HtoD,,0,8,2,4096,\n"));
    cr_assert(strstr(text, ",nan,,,,,,nan,\n"), "NaN counter:\n%s", text);
    cr_assert(strstr(text, ",sampled incomplete\n"));
    free(text);
}

/* ---- folded stacks ------------------------------------------------------------ */

typedef struct expect {
    const char *stack;
    uint64_t ns;
} expect;

/* Thread 0 ("main"): LOOPS x root(100) { a(30) { b(10) } c(20) }, ending
 * with x;y where y covers x entirely; then "tail", a depth-1 region whose
 * parent never ends. Thread 1 ("io"): a root with a name holding ';' and a
 * newline, 1000 children directly under it. Written in END order. */
#define LOOPS 1000
static void write_stacks(const char *path)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 97); /* stacks cross block boundaries */
    synth_thread(s, 0, 10, "main");
    synth_thread(s, 1, 11, "io");
    uint64_t t = 0;
    for (int i = 0; i < LOOPS; i++, t += 100) {
        synth_region(s, 0, "b", PROF_KIND_COMPUTE, 2, t + 5, 10);
        synth_region(s, 0, "a", PROF_KIND_COMPUTE, 1, t, 30);
        synth_region(s, 0, "c", PROF_KIND_COMPUTE, 1, t + 40, 20);
        synth_region(s, 0, "root", PROF_KIND_COMPUTE, 0, t, 100);
    }
    synth_region(s, 0, "y", PROF_KIND_COMPUTE, 1, t, 50);
    synth_region(s, 0, "x", PROF_KIND_COMPUTE, 0, t, 50);
    synth_region(s, 0, "tail", PROF_KIND_COMPUTE, 1, t + 60, 7);
    for (int i = 0; i < 1000; i++)
        synth_region(s, 1, "read", PROF_KIND_IO, 1, 10 + (uint64_t)i * 3, 2);
    synth_region(s, 1, "load;all\nof it", PROF_KIND_IO, 0, 0, 5000);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

static void assert_folded(const char *text, const expect *want, size_t n)
{
    uint64_t total = 0;
    size_t lines = 0;
    for (const char *p = text; *p; p = strchr(p, '\n') + 1, lines++)
        cr_assert_not_null(strchr(p, '\n'), "last line unterminated");
    for (size_t i = 0; i < n; i++) {
        char line[128];
        snprintf(line, sizeof line, "%s %llu\n", want[i].stack, (unsigned long long)want[i].ns);
        const char *at = strstr(text, line);
        cr_assert(at && (at == text || at[-1] == '\n'), "missing line '%s' in:\n%s",
                  want[i].stack, text);
        total += want[i].ns;
    }
    cr_assert_eq(lines, n, "%zu lines, want %zu:\n%s", lines, n, text);
    (void)total;
}

Test(output_export, folded_stacks_add_up_to_self_times)
{
    const char *path = fu_path("stacks.prof");
    write_stacks(path);
    /* Self times from the layout: root 100-30-20, a 30-10, b 10, c 20,
     * x 50-50 (no line), y 50, tail 7 (parent lost), io root 5000-1000*2. */
    const expect want[] = {
        { "root", LOOPS * 50ull },       { "root;a", LOOPS * 20ull },
        { "root;a;b", LOOPS * 10ull },   { "root;c", LOOPS * 20ull },
        { "x;y", 50 },                   { "tail", 7 },
        { "load:all of it", 3000 },      { "load:all of it;read", 2000 },
    };
    export_result res;
    char *text = export_to_string(path, EXPORT_FOLDED, 0, &res);
    assert_folded(text, want, sizeof want / sizeof want[0]);
    cr_assert(strncmp(text, "load:all of it ", 15) == 0, "lines sorted:\n%s", text);
    free(text);

    const expect threaded[] = {
        { "main;root", LOOPS * 50ull },     { "main;root;a", LOOPS * 20ull },
        { "main;root;a;b", LOOPS * 10ull }, { "main;root;c", LOOPS * 20ull },
        { "main;x;y", 50 },                 { "main;tail", 7 },
        { "io;load:all of it", 3000 },      { "io;load:all of it;read", 2000 },
    };
    text = export_to_string(path, EXPORT_FOLDED, EXPORT_OPT_THREAD_FRAMES, &res);
    assert_folded(text, threaded, sizeof threaded / sizeof threaded[0]);
    free(text);
}

Test(output_export, folded_stacks_merge_threads_and_odd_names)
{
    const char *path = fu_path("merge.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    for (uint32_t th = 0; th < 3; th++) {
        synth_region(s, th, "", PROF_KIND_COMPUTE, 1, 0, 4);
        synth_region(s, th, "op\xff", PROF_KIND_COMPUTE, 0, 0, 10);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    const expect want[] = { { "op\xef\xbf\xbd", 18 }, { "op\xef\xbf\xbd;[unnamed]", 12 } };
    export_result res;
    char *text = export_to_string(path, EXPORT_FOLDED, 0, &res);
    assert_folded(text, want, 2);
    free(text);
    const expect threaded[] = { { "thread 0;op\xef\xbf\xbd", 6 },
                                { "thread 0;op\xef\xbf\xbd;[unnamed]", 4 },
                                { "thread 1;op\xef\xbf\xbd", 6 },
                                { "thread 1;op\xef\xbf\xbd;[unnamed]", 4 },
                                { "thread 2;op\xef\xbf\xbd", 6 },
                                { "thread 2;op\xef\xbf\xbd;[unnamed]", 4 } };
    text = export_to_string(path, EXPORT_FOLDED, EXPORT_OPT_THREAD_FRAMES, &res);
    assert_folded(text, threaded, 6);
    free(text);
}

/* ---- damage and failures --------------------------------------------------------- */

Test(output_export, cut_short_profile_exports_what_is_intact)
{
    size_t size;
    uint8_t *bytes = fu_load(DEMO, &size);
    const char *path = fu_path("cut.prof");
    fu_store(path, bytes, size / 2);
    free(bytes);
    for (export_format f = EXPORT_CHROME_TRACE; f <= EXPORT_FOLDED; f++) {
        export_result res;
        char *text = export_to_string(path, f, 0, &res);
        cr_assert(res.status.truncated, "format %d: not reported as cut", (int)f);
        cr_assert_gt(res.status.events, 0u);
        cr_assert_lt(res.status.events, 8733u);
        if (f == EXPORT_CHROME_TRACE) {
            const cJSON *events;
            cJSON *root = parse_trace(text, &events);
            const cJSON *ex = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(root, "otherData"), "prof_export");
            cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ex, "truncated")));
            cJSON_Delete(root);
        }
        free(text);
    }
}

Test(output_export, write_failure_is_an_output_error)
{
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        cr_skip_test("no /dev/full");
    for (export_format f = EXPORT_CHROME_TRACE; f <= EXPORT_FOLDED; f++) {
        prof_reader *r = NULL;
        prof_error err = { 0 };
        cr_assert_eq(prof_reader_open(DEMO, &r, &err), PROF_OK);
        export_result res;
        prof_err e = export_profile(r, f, 0, full, &res, &err);
        cr_assert_eq(e, PROF_ERR_IO, "format %d: %d", (int)f, e);
        cr_assert(res.output_failed);
        cr_assert(strstr(err.message, "No space left on device"), "%s", err.message);
        prof_reader_close(r);
        clearerr(full);
    }
    fclose(full);
}

Test(output_export, format_names)
{
    export_format f;
    cr_assert_eq(export_format_parse("chrome-trace", &f), 0);
    cr_assert_eq(f, EXPORT_CHROME_TRACE);
    cr_assert_eq(export_format_parse("folded", &f), 0);
    cr_assert_eq(f, EXPORT_FOLDED);
    cr_assert_eq(export_format_parse("chrome", &f), -1);
    cr_assert_eq(export_format_parse("", &f), -1);
}

Test(output_export, metadata_made_valid_utf8)
{
    const char *path = fu_path("meta.prof");
    synth *s = synth_open(path, "{\"host\":\"a\xff" "b\",\"pid\":77,\"argv\":[\"x\xfe\",\"-v\"]}");
    cr_assert_not_null(s);
    synth_region(s, 0, "r", PROF_KIND_COMPUTE, 0, 0, 1);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    export_result res;
    char *text = export_to_string(path, EXPORT_CHROME_TRACE, 0, &res);
    const cJSON *events;
    cJSON *root = parse_trace(text, &events);
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    cr_assert_str_eq(str_of(other, "host"), "a\xef\xbf\xbd" "b");
    const cJSON *first = cJSON_GetArrayItem(events, 0);
    cr_assert_str_eq(str_of(first, "name"), "process_name");
    cr_assert_eq(num_of(first, "pid"), 77.0);
    cr_assert_str_eq(str_of(cJSON_GetObjectItemCaseSensitive(first, "args"), "name"),
                     "x\xef\xbf\xbd -v");
    cJSON_Delete(root);
    free(text);
    text = export_to_string(path, EXPORT_JSON, 0, &res);
    cJSON *line = cJSON_Parse(strtok(text, "\n"));
    cr_assert_not_null(line);
    cr_assert_str_eq(str_of(cJSON_GetObjectItemCaseSensitive(line, "metadata"), "host"),
                     "a\xef\xbf\xbd" "b");
    cJSON_Delete(line);
    free(text);
}
