/* output_info.c - info_render_text, the text of `prof info`: the whole
 * output for testdata/demo.prof, the completeness lines of cut and
 * unclosed profiles, control characters from the profile shown escaped
 * (a crafted host, argv, tag or thread name must not drive the terminal),
 * absurd metadata values, and write failures reported as PROF_ERR_IO.
 * Run from the repository root. */
#include <math.h>

#include "format/format.h"
#include "format_util.h"
#include "model/summary.h"
#include "output/info_text.h"
#include "synth.h"

#define DEMO "testdata/demo.prof"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(output_info, .fini = teardown);

/* Renders the summary of path (shown as shown_path) into a string. */
static char *render(const char *path, const char *shown_path)
{
    profile_summary s;
    prof_error err = { 0 };
    prof_err e = profile_summary_read(path, NULL, &s, &err);
    cr_assert_eq(e, PROF_OK, "%s: %s", path, err.message);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(info_render_text(out, shown_path, &s), PROF_OK);
    cr_assert_eq(fclose(out), 0);
    profile_summary_free(&s);
    cr_assert_eq(strlen(text), len, "a NUL byte in the output");
    return text;
}

static void assert_has(const char *text, const char *line)
{
    cr_assert(strstr(text, line) != NULL, "missing '%s' in:\n%s", line, text);
}

Test(output_info, demo_profile)
{
    char *text = render(DEMO, DEMO);
    cr_assert_str_eq(text,
                     "file       testdata/demo.prof (50.3 KiB)\n"
                     "format     1.0, closed cleanly\n"
                     "recorded   2026-01-01 00:00:00 UTC on demo-host, pid 4242, rank 0 of 1\n"
                     "command    python3 train.py --epochs 1\n"
                     "libprof    0.1.0\n"
                     "clock      synthetic\n"
                     "span       30.519 s, blocks 4\n"
                     "threads    2\n"
                     "  0        train (tid 4242), 7,533 events\n"
                     "  1        dataloader (tid 4251), 1,200 events\n"
                     "events     8,733\n"
                     "  region       7,530\n"
                     "  step         300\n"
                     "  memory       602\n"
                     "  counter      300\n"
                     "  mark         1\n"
                     "dropped    0 events\n"
                     "tags       model=tiny-transformer batch_size=32\n",
                     "prof info output of demo.prof changed:\n%s", text);
    free(text);
}

Test(output_info, cut_and_unclosed_profiles)
{
    size_t size;
    uint8_t *bytes = fu_load(DEMO, &size);
    const char *path = fu_path("cut.prof");
    fu_store(path, bytes, size / 2);
    char *text = render(path, "cut.prof");
    assert_has(text, "format     1.0, not closed cleanly: cut after ");
    assert_has(text, " unreadable (block ");
    cr_assert(strstr(text, "closed cleanly\n") == NULL || strstr(text, "not closed"), "%s", text);
    free(text);

    /* Only the trailer gone: every block is there. */
    fu_store(path, bytes, size - PF_TRAILER_LEN);
    text = render(path, "cut.prof");
    assert_has(text, "format     1.0, not closed cleanly (no footer): all 4 blocks intact\n");
    assert_has(text, "  step         300\n");
    free(text);
    free(bytes);

    /* An empty profile with minimal metadata */
    synth *s = synth_open(path, "{}");
    cr_assert_eq(synth_close(s, NULL), 0);
    text = render(path, "e.prof");
    cr_assert_str_eq(text,
                     "file       e.prof (111 B)\n"
                     "format     1.1, closed cleanly\n"
                     "recorded   at an unknown time, pid 0, rank 0 of 1\n"
                     "span       0 ns, blocks 0\n"
                     "threads    0\n"
                     "events     0\n"
                     "dropped    0 events\n",
                     "%s", text);
    free(text);
}

/* No byte of the output may be a control character but the newlines. */
static void assert_no_controls(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        cr_assert(*p >= 0x20 && *p != 0x7f ? 1 : *p == '\n',
                  "control byte 0x%02x at %td in:\n%s", *p, (const char *)p - text, text);
}

Test(output_info, control_characters_are_escaped)
{
    static const char meta[] =
        "{\"host\":\"evil\\u001b[31mhost\",\"pid\":1,\"rank\":0,\"world_size\":1,"
        "\"argv\":[\"python\\u0007\",\"--x=\\u001b]0;pwned\\u0007\",\"tab\\there\"],"
        "\"libprof_version\":\"1\\u007f\",\"clock\":{\"source\":\"s\\nrc\"},"
        "\"tags\":{\"k\\u001b\":\"v\\r\",\"ok\":\"fine\"}}";
    const char *path = fu_path("evil.prof");
    synth *s = synth_open(path, meta);
    cr_assert_not_null(s);
    synth_thread(s, 0, 5, "\x1b[2Jthread\x08\x7f");
    synth_region(s, 0, "r", PROF_KIND_COMPUTE, 0, 0, 1);
    cr_assert_eq(synth_close(s, NULL), 0);
    char *text = render(path, "dir/\x1b[1mx.prof");
    assert_no_controls(text);
    assert_has(text, "file       dir/\\x1b[1mx.prof (");
    assert_has(text, " on evil\\x1b[31mhost, pid 1");
    assert_has(text, "command    python\\x07 --x=\\x1b]0;pwned\\x07 tab\\x09here\n");
    assert_has(text, "libprof    1\\x7f\n");
    assert_has(text, "clock      s\\x0arc\n");
    assert_has(text, "  0        \\x1b[2Jthread\\x08\\x7f (tid 5), 1 events\n");
    assert_has(text, "tags       k\\x1b=v\\x0d ok=fine\n");
    free(text);
}

/* Metadata values no recorder writes must still render sanely: a clock
 * origin far beyond any date, negative and huge numbers, wrong types. */
Test(output_info, absurd_metadata_values)
{
    static const char *const metas[] = {
        "{\"clock\":{\"origin_epoch_ns\":1e300},\"host\":\"h\",\"pid\":1e300}",
        "{\"clock\":{\"origin_epoch_ns\":9.3e27},\"host\":\"h\"}",
        "{\"clock\":{\"origin_epoch_ns\":-5},\"pid\":-1,\"rank\":\"x\"}",
        "{\"clock\":\"not an object\",\"argv\":[1,null,\"\"],\"tags\":{\"n\":1}}",
        "{\"argv\":[],\"tags\":[],\"host\":5}",
    };
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        const char *path = fu_path("absurd.prof");
        synth *s = synth_open(path, metas[i]);
        cr_assert_not_null(s);
        cr_assert_eq(synth_close(s, NULL), 0);
        char *text = render(path, "a.prof");
        assert_no_controls(text);
        const char *rec = strstr(text, "recorded   ");
        cr_assert_not_null(rec, "%s", text);
        /* Either a real date or none: nothing made up from a failed
         * conversion. */
        cr_assert(strncmp(rec, "recorded   at an unknown time", 29) == 0 ||
                      (rec[11] >= '1' && rec[11] <= '9' && strstr(rec, " UTC") != NULL),
                  "metadata %s gave:\n%s", metas[i], text);
        if (i < 2)
            cr_assert(strncmp(rec, "recorded   at an unknown time", 29) == 0,
                      "an origin beyond year 9999 shows a date:\n%s", text);
        free(text);
    }
}

Test(output_info, write_errors_are_reported)
{
    profile_summary s;
    prof_error err = { 0 };
    cr_assert_eq(profile_summary_read(DEMO, NULL, &s, &err), PROF_OK, "%s", err.message);

    FILE *full = fopen("/dev/full", "w");
    cr_assert_not_null(full, "no /dev/full");
    cr_assert_eq(setvbuf(full, NULL, _IONBF, 0), 0);
    cr_assert_eq(info_render_text(full, DEMO, &s), PROF_ERR_IO, "a full device went unnoticed");
    fclose(full);

    /* A stream open for reading only refuses every write. */
    FILE *ro = fopen(DEMO, "r");
    cr_assert_not_null(ro);
    cr_assert_eq(info_render_text(ro, DEMO, &s), PROF_ERR_IO);
    fclose(ro);
    profile_summary_free(&s);
}
