/* import_kineto_fast.c - the Kineto importer's fast path (jscan.c, and the
 * thread that handles events, kineto_queue.c) against YAJL alone on one thread:
 * every fixture, the real traces when ../shared/traces/ is there, traces
 * cut every few bytes, events of every odd form, nesting about the limit,
 * events longer than the window, read to the same status, message, counts
 * and profile, byte for byte. Also run under ThreadSanitizer. Run from the
 * repository root. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "criterion_tsan.h"
#include "file_util.h"
#include "fixtures.h"
#include "import/import.h"
#include "prof.h"

#define KDIR "testdata/kineto/"
#define REAL_ALEXNET "../shared/traces/hta_alexnet_a100_sync.json.gz"
#define REAL_NCCL "../shared/traces/hta_nccl_data_a100_rank0of2.json.gz"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(import_kineto_fast, .fini = teardown);

/* One way of reading a trace, start to end: the status, the message, the
 * counts and the profile's bytes. */
typedef struct reading {
    prof_err e;
    char message[sizeof ((prof_error *)0)->message];
    import_counts c;
    char *bytes;
    size_t n;
} reading;

static reading read_one_way(const char *trace, int yajl_only, int one_thread)
{
    const char *out = fx_path("way.prof");
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    import_sink *s;
    prof_error err = { PROF_OK, "" };
    cr_assert_eq(sink_open(&s, fd, "kineto", "trace.json", &err), PROF_OK);
    prof_tuning t = { .yajl_only = yajl_only, .threads = one_thread ? 1u : 0u };
    import_options o = { .tuning = &t };
    reading r = { .e = kineto_read(trace, s, &o, &err) };
    sink_describe(s, &r.c);
    snprintf(r.message, sizeof r.message, "%s", err.message);
    if (r.e == PROF_OK) {
        cr_assert_eq(sink_close(s, &err), PROF_OK, "%s", err.message);
        r.bytes = fu_slurp(out, &r.n);
    } else {
        sink_abandon(s);
    }
    return r;
}

/* YAJL alone, the fast path with its thread and the fast path on one
 * thread read the trace to the same status, message, counts and profile,
 * byte for byte. */
static void same_as_yajl(const char *trace, const char *what)
{
    reading ref = read_one_way(trace, 1, 1);
    for (int one_thread = 0; one_thread <= 1; one_thread++) {
        reading r = read_one_way(trace, 0, one_thread);
        const char *how = one_thread ? "one thread" : "two threads";
        cr_expect_eq(r.e, ref.e, "%s (%s): status %d, YAJL alone %d", what, how, r.e, ref.e);
        cr_expect_str_eq(r.message, ref.message, "%s (%s)", what, how);
        cr_expect(memcmp(&r.c, &ref.c, sizeof r.c) == 0, "%s (%s): counts differ", what, how);
        cr_expect(r.n == ref.n && (r.n == 0 || memcmp(r.bytes, ref.bytes, r.n) == 0),
                  "%s (%s): the profiles differ (%zu and %zu bytes)", what, how, r.n, ref.n);
        free(r.bytes);
    }
    free(ref.bytes);
}

static void same_as_yajl_text(const char *text, size_t n, const char *what)
{
    char trace[256];
    snprintf(trace, sizeof trace, "%s", fx_path("text.json"));
    fu_spill(trace, text, n);
    same_as_yajl(trace, what);
}

/* The same text gzipped: reads of whole chunks end at the same byte. */
static void same_as_yajl_gzip(const char *text, size_t n, const char *what)
{
    char trace[256];
    snprintf(trace, sizeof trace, "%s", fx_path("text.json.gz"));
    gzFile g = gzopen(trace, "wb1");
    cr_assert_not_null(g);
    cr_assert_eq(gzwrite(g, text, (unsigned)n), (int)n);
    cr_assert_eq(gzclose(g), Z_OK);
    same_as_yajl(trace, what);
}

Test(import_kineto_fast, fast_path_reads_every_fixture_as_yajl)
{
    static const char *const fixtures[] = { "2021.json", "2022.json", "2023.json", "2024.json",
                                            "2024.json.gz", "cut.json", "rocm.json",
                                            "unknown.json" };
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char path[256];
        snprintf(path, sizeof path, KDIR "%s", fixtures[i]);
        same_as_yajl(path, fixtures[i]);
    }
    if (access(REAL_ALEXNET, R_OK) == 0)
        same_as_yajl(REAL_ALEXNET, "real AlexNet trace");
    if (access(REAL_NCCL, R_OK) == 0)
        same_as_yajl(REAL_NCCL, "real NCCL trace");
}

/* Cut anywhere: the damage is found at the same byte, with the same words. */
Test(import_kineto_fast, fast_path_reads_cut_traces_as_yajl)
{
    size_t n;
    char *bytes = fu_slurp(KDIR "2023.json", &n);
    for (size_t cut = 0; cut < n; cut += 13) {
        char what[64];
        snprintf(what, sizeof what, "2023.json cut at %zu", cut);
        same_as_yajl_text(bytes, cut, what);
    }
    free(bytes);
}

/* Events the fast path declines or must check with care, each between
 * two plain events: escapes, blanks JSON does not have, numbers and
 * literals of every form, containers where values go, nesting about the
 * limit, an event longer than the fast path's window, broken syntax. */
Test(import_kineto_fast, fast_path_reads_odd_events_as_yajl)
{
    static const char *const odd[] = {
        "{\"ph\": \"X\", \"name\": \"a\\\"b\", \"ts\": 1, \"dur\": 1, \"tid\": 1}",
        "{\"ph\": \"X\", \"na\\u006de\": \"k\", \"ts\": 1, \"dur\": 1, \"tid\": 1}",
        "{\"ph\": \"X\", \"name\": \"\\ud83d\\ude00 \\u00e9 \\ud800\", \"ts\": 1, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"q\", \"args\": {\"s\": \"\\n\\t\\/\\\\ \\u0041\"}, \"ts\": 1}",
        "{\"ph\": \"X\", \"name\": \"bad\\q\", \"ts\": 1}",
        "{\"ph\": \"X\", \"name\": \"q\", \"args\": {\"s\": \"\\u12g4\"}, \"ts\": 1}",
        "{\"ph\": \"X\", \"name\": \"ctl\x01\", \"ts\": 1}",
        "{\"ph\": \"X\", \"name\": \"q\", \"args\": {\"s\": \"ctl\x1f\"}, \"ts\": 1}",
        "{\"ph\": \"X\",\v\"name\": \"vt\", \"ts\": 1}",
        "{\"ph\": \"X\",\f\"name\": \"ff\", \"ts\": 1, \"dur\": 2}",
        "{\"ph\":\"X\",\"name\":\"e\",\"ts\":1e3,\"dur\":1E+2,\"pid\":-0,\"tid\":0.5}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": 01, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": 1., \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": .5, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": -, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": +1, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": 1e, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": 123456789012345678901234567890, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": 5, \"dur\": 1, \"args\": {\"a\": 1.5e-3}}",
        "{\"ph\": \"X\", \"name\": true, \"cat\": null, \"ts\": false, \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": nul}",
        "{\"ph\": \"X\", \"name\": \"z\", \"ts\": truex}",
        "{\"ph\": \"X\", \"name\": \"z\", \"args\": {\"a\": [true, false, null, {}, []]}}",
        "5", "\"string\"", "[1, 2]", "null", "[[{\"ph\": \"X\"}]]", "{}",
        "{\"ph\": \"X\", \"name\": \"d\", \"ts\": 1, \"ts\": 2, \"name\": \"e\", \"dur\": 3}",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"args\": 5}",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"args\": [1, {\"device\": 2}]}",
        "{\"ph\": \"X\", \"name\": {\"x\": 1}, \"ts\": [1], \"dur\": 1}",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1,}",
        "{\"ph\": \"X\" \"name\": \"a\"}",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}{\"ph\": \"X\"}",
        "{\"ph\": \"X\", 5: \"a\"}",
        "{\"ph\" \"X\"}",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1} , ,",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1} ]",
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1} /* comment */",
        "{\"ph\": \"X\", \"name\": \"\xff\xfe bytes\", \"ts\": 1, \"dur\": 1}",
        /* used args that are not numbers or strings, and what the event
         * reader declines inside args (jscan_value reads the event again) */
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, "
        "\"args\": {\"device\": true, \"stream\": {\"x\": 1}, \"correlation\": [1]}}",
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, "
        "\"args\": {\"dev\\u0069ce\": 3, \"stream\": 7, \"correlation\": null}}",
        "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"ts\": 1, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": \"0\", \"Total Allocated\": -5, "
        "\"Bytes\": 1.5e2, \"labels\": \"a\\nb\"}}",
        "{\"\": 5, \"ph\": \"X\", \"name\": \"e\", \"ts\": 1, \"args\": {\"\": {}, \"device\": 0}}",
        "{\"ph\": \"X\", \"name\": 5, \"cat\": 6, \"ts\": \"7\", \"dur\": \"x\", \"args\": {}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"device\": 1}, \"args\": {\"device\": 2}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"args\": {\"device\": 1}, \"stream\": 2}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"device\": 1,}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"device\" 1}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"device\": 01}}",
        "{\"ph\": \"X\", \"name\": \"a\", \"args\": {\"stream\": 1 2}}",
        "{ \"ph\" : \"X\" ,\n\t\"name\"\r: \"sp\" , "
        "\"args\" : { \"device\" : 3 , \"stream\" : 4 } }",
    };
    const char *head = "{\"schemaVersion\": 1, \"traceEvents\": [\n"
                       "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"before\", \"pid\": 1, "
                       "\"tid\": 1, \"ts\": 100, \"dur\": 50, \"args\": {\"External id\": 1}},\n  ";
    const char *tail = ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"after\", \"pid\": 1, "
                       "\"tid\": 1, \"ts\": 200, \"dur\": 50}\n],\n"
                       "\"distributedInfo\": {\"rank\": 1, \"world_size\": 2}}\n";
    char doc[4096];
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        int n = snprintf(doc, sizeof doc, "%s%s%s", head, odd[i], tail);
        cr_assert(n > 0 && (size_t)n < sizeof doc);
        char what[64];
        snprintf(what, sizeof what, "odd event %zu", i);
        same_as_yajl_text(doc, (size_t)n, what);
        /* first in the array, and the array's last */
        n = snprintf(doc, sizeof doc, "{\"traceEvents\": [%s]}", odd[i]);
        same_as_yajl_text(doc, (size_t)n, what);
    }
    /* the array's own shapes */
    static const char *const shapes[] = {
        "{\"traceEvents\": []}", "{\"traceEvents\": [ ]}", "{\"traceEvents\": [,]}",
        "{\"traceEvents\": [{\"ph\": \"X\"},]}", "{\"traceEvents\": [{\"ph\": \"X\"}",
        "{\"traceEvents\": [{\"ph\": \"X\"}, ", "{\"traceEvents\": {}}",
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": \"a\"}], "
        "\"traceEvents\": [{\"ph\": \"X\", \"ts\": 2, \"name\": \"b\"}], "
        "\"baseTimeNanoseconds\": 1000}",
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": \"a\"}]} trailing",
        "[{\"ph\": \"X\"}]",
        /* a number that only the end of the text ends */
        "{\"traceEvents\": [{\"ph\": \"X\"}, 5", "{\"traceEvents\": [12",
        "{\"traceEvents\": [{\"ph\": \"X\"}, -0.5e3", "{\"traceEvents\": [{\"ph\": \"X\"}, true",
        /* notes in the order of the events: an unknown category, then an array */
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"weird\", \"name\": \"a\", \"ts\": 1, "
        "\"pid\": 1, \"tid\": 1}, [1], {\"ph\": \"X\", \"cat\": \"odd\", \"name\": \"b\", "
        "\"ts\": 2, \"pid\": 1, \"tid\": 1}]}",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char what[64];
        snprintf(what, sizeof what, "array shape %zu", i);
        same_as_yajl_text(shapes[i], strlen(shapes[i]), what);
    }
}

/* Numbers in every place the importer uses one (ts and dur in
 * microseconds, pid and tid, integer args), at the edges of the forms the
 * event reader reads in one pass and past them. */
Test(import_kineto_fast, numbers_read_as_yajl)
{
    static const char *const nums[] = {
        "0", "-0", "7", "-7", "0.5", "-0.5", "1.0005", "1.0004", "1.00049", "1.9999", "1.99995",
        "2.1234567", "123456789012345", "1234567890123456", "9223372036854775", "9223372036854776",
        "9999999999999999", "12345678901234567", "123456789012345678", "999999999999999999",
        "1234567890123456789", "9223372036854775807", "-1234567890123456.789",
        "1669783687464181.5", "9223372036854775.807", "9223372036854775.808", "922337203685477.9995",
        "-9223372036854775.807", "-9223372036854775.808", "-9223372036854775808",
        "1.5e3", "1e2", "2E-1", "00", "01", "-01", "1.", "-", "1.e3", "4458676416431.397",
    };
    char doc[2048];
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        const char *x = nums[i];
        int n = snprintf(doc, sizeof doc,
                         "{\"traceEvents\": [\n"
                         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, "
                         "\"tid\": 1, \"ts\": 100, \"dur\": 5},\n"
                         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": %s, "
                         "\"tid\": %s, \"ts\": %s, \"dur\": %s, \"args\": {\"device\": %s, "
                         "\"stream\": %s, \"correlation\": %s, \"context\": %s}},\n"
                         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": %s, "
                         "\"tid\": %s, \"ts\": 200, \"dur\": %s}\n]}\n",
                         x, x, x, x, x, x, x, x, x, x, x);
        cr_assert(n > 0 && (size_t)n < sizeof doc);
        char what[64];
        snprintf(what, sizeof what, "number %s", x);
        same_as_yajl_text(doc, (size_t)n, what);
    }
}

/* Nesting inside an event, about the importer's limit: below it the fast
 * path reads it, at it YAJL finds the damage at the same byte. */
Test(import_kineto_fast, fast_path_nesting_about_the_limit)
{
    for (size_t depth = 248; depth <= 258; depth++) {
        char doc[2048];
        size_t n = (size_t)snprintf(doc, sizeof doc,
                                    "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", "
                                    "\"ts\": 1}, {\"ph\": \"X\", \"args\": {\"x\": ");
        for (size_t i = 0; i < depth; i++)
            doc[n++] = i % 2 ? '[' : '{', n += i % 2 ? 0 : (size_t)sprintf(doc + n, "\"k\":");
        for (size_t i = depth; i-- > 0;)
            doc[n++] = i % 2 ? ']' : '}';
        n += (size_t)snprintf(doc + n, sizeof doc - n, "}}]}");
        char what[64];
        snprintf(what, sizeof what, "nesting %zu", depth);
        same_as_yajl_text(doc, n, what);
    }
}

/* Events longer than the fast path's window, and a trace long enough to
 * refill it many times with events across every boundary. */
Test(import_kineto_fast, fast_path_long_events_and_refills)
{
    size_t cap = 6u << 20;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    size_t n = (size_t)snprintf(t, cap, "{\"traceEvents\": [");
    for (int i = 0; n < (4u << 20); i++)
        n += (size_t)snprintf(t + n, cap - n,
                              "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
                              "\"tid\": %d, \"ts\": %d.%03d, \"dur\": %d, \"args\": {\"Input Dims\": "
                              "[[%d, 3], []], \"External id\": %d}},\n",
                              i % 97, 1 + i % 3, 1000 + i * 7, i % 1000, 1 + i % 5, i, i);
    /* an args string of 1.5 MiB, longer than the window */
    n += (size_t)snprintf(t + n, cap - n, "{\"ph\": \"X\", \"name\": \"long\", \"ts\": 99999999, "
                                          "\"tid\": 1, \"dur\": 1, \"args\": {\"s\": \"");
    memset(t + n, 'y', 3u << 19);
    n += 3u << 19;
    n += (size_t)snprintf(t + n, cap - n, "\"}}]}");
    same_as_yajl_text(t, n, "4 MiB of events and a 1.5 MiB one");
    free(t);
}

/* Long traces of mixed events, so that the reader hands text to its
 * helper thread (kineto.c, kin_helper) many times: events whose strings
 * look like event starts ("},{" before a quote, which makes the guess
 * wrong), names with escapes and elements that are not objects (which the
 * helper leaves to the reader), long names (which fill the helper's
 * buffer), deep args. Read the three ways, the same. */
Test(import_kineto_fast, helper_reads_mixed_traces_as_yajl)
{
    size_t cap = 8u << 20;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    char name[3000];
    for (unsigned seed = 1; seed <= 3; seed++) {
        unsigned r = seed * 2654435761u;
        size_t n = (size_t)snprintf(t, cap, "{\"traceEvents\": [\n");
        for (int i = 0; n < (6u << 20); i++) {
            r = r * 1103515245u + 12345u;
            unsigned kind = (r >> 16) % 100;
            if (seed == 2) /* plain events and long names: the helper's buffer fills */
                kind = kind < 80 ? 0 : 90;
            else if (seed == 3) /* strings that look like event starts: wrong guesses */
                kind = kind < 20 ? 0 : 75;
            const char *sep = i ? ",\n  " : "  ";
            int ts = 1000 + i * 3;
            if (kind < 70) {
                n += (size_t)snprintf(t + n, cap - n,
                                      "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%u\", "
                                      "\"pid\": 1, \"tid\": %u, \"ts\": %d.%03u, \"dur\": 2, "
                                      "\"args\": {\"External id\": %d}}",
                                      sep, r % 50, 1 + r % 4, ts, r % 1000, i);
            } else if (kind < 80) {
                n += (size_t)snprintf(t + n, cap - n,
                                      "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"s%d\", "
                                      "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1, \"args\": "
                                      "{\"a\": \"x},{\", \"b\": \"},\\n{\\\"c\\\": 1\", "
                                      "\"c\": \"y}, {\"}}",
                                      sep, i, ts);
            } else if (kind < 85) {
                n += (size_t)snprintf(t + n, cap - n,
                                      "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                                      "\"esc\\\"aped\\u00e9%d\", \"pid\": 1, \"tid\": 2, "
                                      "\"ts\": %d, \"dur\": 1}",
                                      sep, i, ts);
            } else if (kind < 88) {
                n += (size_t)snprintf(t + n, cap - n, "%s%d", sep, i);
            } else if (kind < 95) {
                size_t len = 1000 + r % 1900;
                memset(name, 'n', len);
                name[len] = '\0';
                n += (size_t)snprintf(t + n, cap - n,
                                      "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
                                      "\"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 3, \"args\": "
                                      "{\"device\": 0, \"stream\": 7, \"correlation\": %d}}",
                                      sep, name, ts, i);
            } else {
                n += (size_t)snprintf(t + n, cap - n,
                                      "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                                      "\"deep%d\", \"pid\": 1, \"tid\": 3, \"ts\": %d, \"dur\": 9, "
                                      "\"args\": {\"d\": [[[[{\"e\": [1, {}]}]]]]}}",
                                      sep, i, ts);
            }
        }
        n += (size_t)snprintf(t + n, cap - n, "\n], \"distributedInfo\": {\"rank\": 0}}\n");
        char what[64];
        snprintf(what, sizeof what, "mixed trace, seed %u", seed);
        same_as_yajl_text(t, n, what);
        /* and cut inside its last MiB */
        snprintf(what, sizeof what, "mixed trace, seed %u, cut", seed);
        same_as_yajl_text(t, n - (r % (1u << 20)), what);
    }
    free(t);
}

/* A token past the 8 MiB limit: YAJL alone reads the rest of the piece it
 * was given, then stops; so does the fast path, whatever follows. Plain
 * and gzip. */
/* Events of 150 to 250 KB: the helper's part ends near the window's end,
 * and the reader fills the window again before the next split. With the
 * text's end in that fill, the window holds less than before: the reader
 * must read on with what it holds (a fuzzed gzip caught it reading the
 * window's old length). Plain and gzip, ending at every event count. */
Test(import_kineto_fast, split_refill_at_the_text_end_as_yajl)
{
    size_t cap = 4u << 20;
    char *t = malloc(cap);
    char *name = malloc(256u << 10);
    cr_assert(t && name);
    for (int events = 4; events <= 12; events++) {
        size_t n = (size_t)snprintf(t, cap, "{\"traceEvents\": [");
        for (int i = 0; i < events; i++) {
            size_t len = 150000 + (size_t)(i * 37813 % 100000);
            memset(name, 'L', len);
            name[len] = '\0';
            n += (size_t)snprintf(t + n, cap - n,
                                  "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", "
                                  "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 5}",
                                  i ? "," : "", name, 1000 + 10 * i);
        }
        size_t whole = n;
        n += (size_t)snprintf(t + n, cap - n, "]}\n");
        char what[64];
        snprintf(what, sizeof what, "%d long events", events);
        same_as_yajl_text(t, n, what);
        snprintf(what, sizeof what, "%d long events, cut in the last", events);
        same_as_yajl_text(t, whole - 1000, what);
        snprintf(what, sizeof what, "%d long events, gzip", events);
        same_as_yajl_gzip(t, n, what);
    }
    free(name);
    free(t);
}

Test(import_kineto_fast, long_token_stops_where_yajl_stops)
{
    size_t big = (8u << 20) + 16, cap = big + 4096;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    static const char *const after[] = {
        ", {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": 9, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"odd\", \"name\": \"c\", "
        "\"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 1}]}",
        ", {\"ph\": \"X\", \"name\": \"b\", \"ts\": 9, \"tid\": 1} garbage ]}",
        ", 5, {\"ph\": \"X\", \"name\": \"b\\u0041\", \"ts\": 9, \"tid\": 1}]}",
    };
    for (size_t k = 0; k < sizeof after / sizeof *after; k++) {
        size_t n = (size_t)snprintf(t, cap, "{\"traceEvents\": [{\"ph\": \"X\", \"name\": "
                                            "\"a\", \"ts\": 5, \"tid\": 1}, {\"ph\": \"X\", "
                                            "\"tid\": 1, \"ts\": 6, \"name\": \"");
        memset(t + n, 'z', big);
        n += big;
        n += (size_t)snprintf(t + n, cap - n, "\"}%s", after[k]);
        char what[64];
        snprintf(what, sizeof what, "long token, then %zu", k);
        same_as_yajl_text(t, n, what);
        snprintf(what, sizeof what, "long token, then %zu, gzip", k);
        same_as_yajl_gzip(t, n, what);
    }
    free(t);
}

/* A gzip stream damaged in the middle of a long trace, with events longer
 * than a read: the text inflated before the damage is the same whoever
 * reads, so are the events kept and the byte named. */
Test(import_kineto_fast, damaged_gzip_as_yajl)
{
    size_t cap = 4u << 20;
    char *t = malloc(cap), *z = malloc(cap);
    cr_assert(t && z);
    size_t n = (size_t)snprintf(t, cap, "{\"traceEvents\": [");
    for (int i = 0; n < (3u << 20); i++) {
        size_t len = i % 7 == 0 ? 70000 + (size_t)i % 5000 : 20 + (size_t)i % 50;
        n += (size_t)snprintf(t + n, cap - n, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"pid\": 1, "
                                              "\"tid\": 1, \"ts\": %d, \"dur\": 1, \"name\": \"",
                              100 + i);
        memset(t + n, 'a' + i % 26, len);
        n += len;
        n += (size_t)snprintf(t + n, cap - n, "\"},\n");
    }
    n += (size_t)snprintf(t + n, cap - n, "{}]}");
    uLongf zn = compressBound((uLong)n);
    cr_assert_leq(zn, cap);
    /* a gzip stream: deflate with a gzip wrapper */
    z_stream zs = { 0 };
    cr_assert_eq(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)t;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)z;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t zlen = zs.total_out;
    deflateEnd(&zs);
    for (int hit = 1; hit <= 3; hit++) {
        size_t at = zlen * (size_t)hit / 4;
        for (size_t j = 0; j < 64; j++)
            z[at + j] = (char)(z[at + j] ^ 0x5a);
        char what[64];
        snprintf(what, sizeof what, "gzip damaged at %zu of %zu", at, zlen);
        const char *gz = fx_path("damaged.json.gz");
        fu_spill(gz, z, zlen);
        same_as_yajl(gz, what);
        for (size_t j = 0; j < 64; j++)
            z[at + j] = (char)(z[at + j] ^ 0x5a);
    }
    free(t);
    free(z);
}
