/* import_jscan.c - the importers' fast JSON path (src/import/jscan.c)
 * against YAJL itself: for every value it reads, the callbacks it makes
 * are the ones YAJL makes, token for token, with the same text; what it
 * declines is either not JSON or outside its subset (escapes in handed-on
 * strings, \v and \f); a value cut anywhere asks for more bytes; values
 * marked ignored are checked and skipped without a callback; nesting stops
 * at the limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "import/jscan.h"

/* ---- a transcript of callbacks -------------------------------------------------------- */

typedef struct transcript {
    char text[8192];
    size_t n;
    int ignore_keys_named_skip; /* the value after a key "skip" is ignored */
    int last_key_skip;
} transcript;

static int say(transcript *t, const char *tag, const void *s, size_t n)
{
    int w = snprintf(t->text + t->n, sizeof t->text - t->n, "%s(%.*s) ", tag, (int)n,
                     (const char *)s);
    cr_assert(w > 0 && (size_t)w < sizeof t->text - t->n);
    t->n += (size_t)w;
    t->last_key_skip = 0;
    return 1;
}

static int t_null(void *c) { return say(c, "null", "", 0); }
static int t_bool(void *c, int v) { return say(c, v ? "true" : "false", "", 0); }
static int t_num(void *c, const char *s, size_t n) { return say(c, "num", s, n); }
static int t_str(void *c, const unsigned char *s, size_t n) { return say(c, "str", s, n); }
static int t_start_map(void *c) { return say(c, "{", "", 0); }
static int t_end_map(void *c) { return say(c, "}", "", 0); }
static int t_start_array(void *c) { return say(c, "[", "", 0); }
static int t_end_array(void *c) { return say(c, "]", "", 0); }
static int t_key(void *c, const unsigned char *s, size_t n)
{
    transcript *t = c;
    say(t, "key", s, n);
    t->last_key_skip = t->ignore_keys_named_skip && n == 4 && memcmp(s, "skip", 4) == 0;
    return 1;
}

static const yajl_callbacks recording = {
    .yajl_null = t_null, .yajl_boolean = t_bool, .yajl_number = t_num, .yajl_string = t_str,
    .yajl_start_map = t_start_map, .yajl_map_key = t_key, .yajl_end_map = t_end_map,
    .yajl_start_array = t_start_array, .yajl_end_array = t_end_array,
};

static int ignored(void *c)
{
    return ((transcript *)c)->last_key_skip;
}

/* YAJL's transcript of the text as a whole document; 1 when it is JSON. */
static int yajl_reads(const char *text, transcript *t)
{
    memset(t, 0, sizeof *t);
    yajl_handle h = yajl_alloc(&recording, NULL, t);
    cr_assert_not_null(h);
    yajl_config(h, yajl_dont_validate_strings, 1);
    int ok = yajl_parse(h, (const unsigned char *)text, strlen(text)) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

/* The fast path's transcript of the text followed by a blank (it wants a
 * byte that ends a number at the top). */
static jscan_result jscan_reads(const char *text, transcript *t, int skip_keys, int limit)
{
    memset(t, 0, sizeof *t);
    t->ignore_keys_named_skip = skip_keys;
    char buf[4096];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s ", text), pos = 0;
    jscan_result r = jscan_value((const unsigned char *)buf, n, &pos, &recording, ignored, t,
                                 limit);
    if (r == JSCAN_DONE)
        cr_expect_eq(pos, n - 1, "%s: read %zu bytes of %zu", text, pos, n - 1);
    return r;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* Values it reads: the same callbacks as YAJL. */
Test(import_jscan, reads_as_yajl)
{
    static const char *const values[] = {
        "{}", "[]", "{\"a\": 1}", "[1, -2, 3.25, -0.5e-3, 4E+2, 0, -0]",
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 4458676522690.655, \"dur\": 1.5, "
        "\"args\": {\"External id\": 7, \"Input Dims\": [[1, 2], []], \"x\": null}}",
        "[true, false, null, \"\", \"caf\xc3\xa9\", \"\xff\"]",
        "{\"a\":{\"b\":{\"c\":[[[{}]]]}}}", "{ \"a\" :\t[ 1 ,\r\n 2 ] }",
        "\"plain text that is longer than eight bytes, and then some more\"",
        "123", "-7", "true", "null",
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        const char *v = values[i];
        transcript y, f;
        cr_assert(yajl_reads(v, &y), "%s is JSON", v);
        cr_assert_eq(jscan_reads(v, &f, 0, 64), JSCAN_DONE, "%s", v);
        cr_expect_str_eq(f.text, y.text, "%s", v);
    }
}

/* What it declines: not JSON (YAJL refuses it too), or outside the subset. */
Test(import_jscan, declines_what_is_not_its_subset)
{
    static const char *const not_json[] = {
        "{\"a\": 01}", "{\"a\": 1.}", "{\"a\": .5}", "{\"a\": -}", "{\"a\": +1}", "{\"a\": 1e}",
        "{\"a\": tru }", "{\"a\": truex}", "{\"a\": nul}", "{\"a\": 1,}", "[1,]", "[1 2]",
        "{\"a\" 1}", "{1: 2}", "{\"a\": \"\\q\"}", "{\"a\": \"\\u12g4\"}", "{\"a\": \"\x01\"}",
        "{\"a\": 'x'}", "{\"a\": 1 /* c */}", "[1}", "{\"a\": 1]",
    };
    for (size_t i = 0; i < sizeof not_json / sizeof *not_json; i++) {
        transcript y, f;
        cr_expect_not(yajl_reads(not_json[i], &y), "%s is not JSON", not_json[i]);
        cr_expect_eq(jscan_reads(not_json[i], &f, 0, 64), JSCAN_DECLINE, "%s", not_json[i]);
    }
    static const char *const outside[] = {
        "{\"a\": \"x\\\"y\"}", "{\"n\\u0061me\": 1}", "{\"a\":\v1}", "{\"a\":\f1}",
    };
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
        transcript f;
        cr_expect_eq(jscan_reads(outside[i], &f, 0, 64), JSCAN_DECLINE, "%s", outside[i]);
    }
}

/* Cut anywhere, a value asks for more; nothing is declined for lack of
 * bytes. */
Test(import_jscan, cut_values_ask_for_more)
{
    /* escapes only where the value is ignored (skip_keys 1) */
    static const char *const values[] = {
        "{\"ph\": \"X\", \"name\": \"a long enough name\", \"ts\": -12.5e+3, "
        "\"args\": {\"skip\": [\"\\u00e9\\n\", true, false, null, {\"k\": 1}]}, "
        "\"x\": [null, true]}",
        "{\"ph\": \"X\", \"name\": \"a long enough name\", \"ts\": -12.5e+3, "
        "\"args\": {\"k\": [\"e\", true, false, null, {\"k\": 1}]}, \"x\": [null, true]}",
    };
    for (int skip_keys = 0; skip_keys <= 1; skip_keys++) {
        const char *v = values[1 - skip_keys];
        size_t n = strlen(v);
        for (size_t cut = 1; cut < n; cut++) {
            transcript t = { .ignore_keys_named_skip = skip_keys };
            size_t pos = 0;
            cr_expect_eq(jscan_value((const unsigned char *)v, cut, &pos, &recording, ignored, &t,
                                     64),
                         JSCAN_MORE, "%d: cut at %zu", skip_keys, cut);
            cr_expect_eq(pos, 0);
        }
    }
}

/* An ignored value is skipped without a callback, and checked. */
Test(import_jscan, ignored_values_are_checked_not_handed_over)
{
    transcript f, y;
    const char *v = "{\"a\": 1, \"skip\": {\"x\": [1, \"s\\u00e9\\\\\", {\"y\": null}]}, \"b\": 2}";
    cr_assert_eq(jscan_reads(v, &f, 1, 64), JSCAN_DONE);
    cr_expect_str_eq(f.text, "{() key(a) num(1) key(skip) key(b) num(2) }() ");
    cr_assert(yajl_reads(v, &y));
    cr_expect_eq(jscan_reads("{\"skip\": [1, 2,]}", &f, 1, 64), JSCAN_DECLINE);
    cr_expect_eq(jscan_reads("{\"skip\": \"\\x\"}", &f, 1, 64), JSCAN_DECLINE);
    cr_expect_eq(jscan_reads("{\"skip\": {\"a\" 1}}", &f, 1, 64), JSCAN_DECLINE);
}

/* Containers nest up to the limit, ignored or not. */
Test(import_jscan, nesting_stops_at_the_limit)
{
    transcript f;
    cr_expect_eq(jscan_reads("[[[]]]", &f, 0, 3), JSCAN_DONE);
    cr_expect_eq(jscan_reads("[[[[]]]]", &f, 0, 3), JSCAN_DECLINE);
    cr_expect_eq(jscan_reads("{\"skip\": [[]]}", &f, 1, 3), JSCAN_DONE);
    cr_expect_eq(jscan_reads("{\"skip\": [[[]]]}", &f, 1, 3), JSCAN_DECLINE);
}

/* A callback that returns 0 stops the read. */
static int stop_at_key(void *c, const unsigned char *s, size_t n)
{
    (void)c, (void)s, (void)n;
    return 0;
}

Test(import_jscan, a_callback_stops_it)
{
    yajl_callbacks cb = recording;
    cb.yajl_map_key = stop_at_key;
    transcript t = { 0 };
    const char *v = "{\"a\": 1} ";
    size_t pos = 0;
    cr_expect_eq(jscan_value((const unsigned char *)v, strlen(v), &pos, &cb, ignored, &t, 8),
                 JSCAN_STOP);
    cr_expect_eq(pos, 0);
}
