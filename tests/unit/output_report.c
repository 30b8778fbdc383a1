/* output_report.c - the renderers of `prof analyze` over real reports: the
 * text and JSON of testdata/demo.prof against testdata/golden/ (refresh
 * with tests/support/update_golden.sh), plain text off a terminal and
 * colour with Unicode bars on one, CSV quoting of names with a comma, a
 * quote and a newline, names that would drive a terminal or break JSON,
 * the GPU and sync lines of a profile with CUDA records, stable number
 * forms, write failures reported as PROF_ERR_IO, and the report without
 * the series' points that the text is rendered from.
 * Run from the repository root. */
#include <math.h>

#include "analysis/report.h"
#include "format_util.h"
#include "model/profile.h"
#include "output/csvout.h"
#include "output/report_csv.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "output/textout.h"
#include "synth.h"

#define DEMO "testdata/demo.prof"
#define MS 1000000ull

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(output_report, .fini = teardown);

/* The report of a profile with the default options. */
static cJSON *report_of(const char *path)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    prof_error err = { 0 };
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK, "%s: %s", path,
                 err.message);
    const profile_model *models[] = { &m };
    cJSON *r = report_build(models, 1, NULL, &err);
    cr_assert_not_null(r, "report_build: %s", err.message);
    profile_model_free(&m);
    return r;
}

typedef enum { AS_TEXT, AS_JSON, AS_CSV } render_as;

/* Renders r into a new string. */
static char *render(const cJSON *r, render_as as, const report_style *st, report_table t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    prof_err e = as == AS_TEXT   ? report_render_text(out, r, st)
                 : as == AS_JSON ? report_render_json(out, r)
                                 : report_render_csv(out, r, t);
    cr_assert_eq(e, PROF_OK);
    cr_assert_eq(fclose(out), 0);
    cr_assert_eq(strlen(text), len, "a NUL byte in the output");
    return text;
}

static char *load_text(const char *path)
{
    size_t size;
    char *s = (char *)fu_load(path, &size);
    s[size] = '\0';
    return s;
}

static void assert_has(const char *text, const char *part)
{
    cr_assert(strstr(text, part) != NULL, "missing '%s' in:\n%s", part, text);
}

/* A profile of one thread: STEPS steps, each the given regions back to back. */
static void write_named(const char *path, const char *const *names, size_t n)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 1, "main");
    uint64_t t = MS;
    for (uint64_t step = 0; step < 20; step++) {
        uint64_t start = t;
        for (size_t i = 0; i < n; i++, t += 2 * MS)
            synth_region(s, 0, names[i], PROF_KIND_COMPUTE, 0, t, 2 * MS);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, start, t - start);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

Test(output_report, demo_text_matches_golden)
{
    cJSON *r = report_of(DEMO);
    char *text = render(r, AS_TEXT, NULL, REPORT_TABLE_OPS);
    char *golden = load_text("testdata/golden/analyze-demo.txt");
    cr_assert_str_eq(text, golden, "text report of demo.prof changed:\n%s", text);
    free(golden);
    free(text);
    cJSON_Delete(r);
}

Test(output_report, demo_json_matches_golden_and_reads_back)
{
    cJSON *r = report_of(DEMO);
    char *json = render(r, AS_JSON, NULL, REPORT_TABLE_OPS);
    char *golden = load_text("testdata/golden/analyze-demo.json");
    cr_assert_str_eq(json, golden, "JSON report of demo.prof changed");
    cJSON *back = cJSON_Parse(json);
    cr_assert_not_null(back, "the JSON does not parse");
    cr_assert(cJSON_Compare(back, r, 1), "the JSON does not read back as the report");
    cJSON_Delete(back);
    free(golden);
    free(json);
    cJSON_Delete(r);
}

Test(output_report, plain_off_terminal_styled_on_one)
{
    cJSON *r = report_of(DEMO);
    char *plain = render(r, AS_TEXT, NULL, REPORT_TABLE_OPS);
    for (const char *p = plain; *p; p++)
        cr_assert((unsigned char)*p < 0x80 && *p != '\033', "escape or non-ASCII byte in plain text");
    report_style zero = { 0, 0, 0, 0 };
    char *same = render(r, AS_TEXT, &zero, REPORT_TABLE_OPS);
    cr_assert_str_eq(same, plain, "an all-zero style is not plain");

    report_style term = { 1, 1, 120, 0 };
    char *styled = render(r, AS_TEXT, &term, REPORT_TABLE_OPS);
    assert_has(styled, "\033[1m");
    assert_has(styled, "\xe2\x96\x88"); /* a full block of a bar */

    report_style uni = { 0, 1, 0, 0 };
    char *bars = render(r, AS_TEXT, &uni, REPORT_TABLE_OPS);
    cr_assert_null(strchr(bars, '\033'), "colour without style.color (NO_COLOR)");
    assert_has(bars, "\xe2\x96\x88");
    free(bars);
    free(styled);
    free(same);
    free(plain);
    cJSON_Delete(r);
}

Test(output_report, csv_quotes_comma_quote_newline)
{
    const char *path = fu_path("names.prof");
    const char *const names[] = { "plain", "a,b", "say \"hi\"", "two\nlines" };
    write_named(path, names, 4);
    cJSON *r = report_of(path);
    char *csv = render(r, AS_CSV, NULL, REPORT_TABLE_OPS);
    cr_assert(strncmp(csv, "name,kind,calls,self_ns,self_share,", 35) == 0, "header: %s", csv);
    assert_has(csv, "\r\nplain,compute,20,");
    assert_has(csv, "\r\n\"a,b\",compute,20,");
    assert_has(csv, "\r\n\"say \"\"hi\"\"\",compute,20,");
    assert_has(csv, "\r\n\"two\nlines\",compute,20,40000000,0.25,");
    /* Every record ends in CRLF; the only bare LF is inside the quoted name. */
    size_t bare = 0;
    for (const char *p = csv; *p; p++)
        bare += *p == '\n' && (p == csv || p[-1] != '\r');
    cr_assert_eq(bare, 1);
    cr_assert(strlen(csv) >= 2 && strcmp(csv + strlen(csv) - 2, "\r\n") == 0);
    free(csv);
    cJSON_Delete(r);
}

/* The one CSV escaper: quotes doubled, invalid UTF-8 as U+FFFD, valid
 * characters whole, and progress with the smallest room. */
Test(output_report, csv_escape_makes_valid_utf8)
{
    const char src[] = "a\"\xff\xc3\xa9\xe2\x82"; /* a " <bad> é <cut short> */
    size_t n = sizeof src - 1, used;
    char out[64];
    size_t w = csvout_escape(out, sizeof out, src, n, &used);
    cr_assert_eq(used, n);
    const char want[] = "a\"\"\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd";
    cr_assert_eq(w, sizeof want - 1);
    cr_assert_eq(memcmp(out, want, w), 0);
    /* Room for one character at a time: the same bytes, never a split one. */
    size_t total = 0;
    for (size_t in = 0; in < n; in += used) {
        w = csvout_escape(out + total, CSVOUT_MIN_ROOM, src + in, n - in, &used);
        cr_assert_gt(used, 0);
        total += w;
    }
    cr_assert_eq(total, sizeof want - 1);
    cr_assert_eq(memcmp(out, want, total), 0);
    cr_assert(csvout_needs_quotes("a,b") && !csvout_needs_quotes("a\xff" "b"));
}

Test(output_report, csv_tables)
{
    cJSON *r = report_of(DEMO);
    char *steps = render(r, AS_CSV, NULL, REPORT_TABLE_STEPS);
    cr_assert(strncmp(steps, "number,start_ns,dur_ns,sampled,outlier,incomplete\r\n0,", 52) == 0,
              "%.200s", steps);
    char *memory = render(r, AS_CSV, NULL, REPORT_TABLE_MEMORY);
    cr_assert(strncmp(memory, "series,step,t_ns,bytes\r\n", 24) == 0);
    assert_has(memory, "\r\ngpu.allocated,0,");
    assert_has(memory, "\r\nhost.rss,");
    char *findings = render(r, AS_CSV, NULL, REPORT_TABLE_BOTTLENECKS);
    cr_assert(strncmp(findings, "severity,rule,subject,impact_share,title,recommendation\r\n", 57) == 0);
    report_table t;
    cr_assert_eq(report_table_parse("memory", &t), 0);
    cr_assert_eq(t, REPORT_TABLE_MEMORY);
    cr_assert_eq(report_table_parse("op", &t), -1);
    free(findings);
    free(memory);
    free(steps);
    cJSON_Delete(r);
}

Test(output_report, hostile_names_escaped)
{
    const char *path = fu_path("hostile.prof");
    const char *const names[] = { "red\033[31m", "bad\xff\x01utf8", "caf\xc3\xa9" };
    write_named(path, names, 3);
    cJSON *r = report_of(path);
    char *text = render(r, AS_TEXT, NULL, REPORT_TABLE_OPS);
    cr_assert_null(strchr(text, '\033'), "a raw escape from a name reached the text");
    assert_has(text, "red\\x1b[31m");
    assert_has(text, "bad\\xff\\x01utf8");
    assert_has(text, "caf\xc3\xa9");
    char *json = render(r, AS_JSON, NULL, REPORT_TABLE_OPS);
    assert_has(json, "\"red\\u001b[31m\"");
    assert_has(json, "\"bad\\ufffd\\u0001utf8\"");
    cJSON *back = cJSON_Parse(json);
    cr_assert_not_null(back);
    cJSON_Delete(back);
    free(json);
    free(text);
    cJSON_Delete(r);
}

Test(output_report, gpu_and_sync_lines)
{
    const char *path = fu_path("gpu.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 1, "main");
    uint64_t t = MS;
    for (uint64_t step = 0; step < 20; step++, t += 10 * MS) {
        synth_region(s, 0, "launch", PROF_KIND_COMPUTE, 0, t, 8 * MS);
        synth_gpu_kernel(s, "gemm", 0, 7, step, t + MS, 6 * MS);
        synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, step, t + 7 * MS, MS);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t, 10 * MS);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    cJSON *r = report_of(path);
    char *text = render(r, AS_TEXT, NULL, REPORT_TABLE_OPS);
    assert_has(text, "  GPU            device 0: 20 kernels (120.00 ms), busy ");
    assert_has(text, "  CPU-GPU sync   20 syncs (1.00 per step), blocked 20.00 ms");
    free(text);
    cJSON_Delete(r);
}

/* The report of path, its series listing their points or not. */
static cJSON *report_listing(const char *path, int list_points)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    prof_error err = { 0 };
    cr_assert_eq(profile_model_load(path, NULL, &m, NULL, NULL, &err), PROF_OK, "%s: %s", path,
                 err.message);
    analysis_options o;
    analysis_options_default(&o);
    o.list_points = list_points;
    const profile_model *models[] = { &m };
    cJSON *r = report_build(models, 1, &o, &err);
    cr_assert_not_null(r, "report_build: %s", err.message);
    profile_model_free(&m);
    return r;
}

/* Empties the arrays of points in r: the top-level "steps" and each
 * memory series' and counter's "points"; returns how many it emptied
 * that held any. */
static size_t points_emptied(cJSON *r)
{
    size_t full = 0;
    cJSON *steps = cJSON_GetObjectItemCaseSensitive(r, "steps"), *it;
    cr_assert(cJSON_IsArray(steps), "no steps array");
    full += cJSON_GetArraySize(steps) > 0;
    cJSON_ReplaceItemInObjectCaseSensitive(r, "steps", cJSON_CreateArray());
    const char *lists[] = { "memory", "counters" };
    for (size_t k = 0; k < 2; k++)
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, lists[k])) {
            cJSON *pts = cJSON_GetObjectItemCaseSensitive(it, "points");
            cr_assert(cJSON_IsArray(pts), "%s without points", lists[k]);
            full += cJSON_GetArraySize(pts) > 0;
            cJSON_ReplaceItemInObjectCaseSensitive(it, "points", cJSON_CreateArray());
        }
    return full;
}

/* A run of steps with a memory series that leaks, sampled in the middle
 * of each step too (a timer's samples, which the report lists apart from
 * the per-step ones), one that does not leak, and a counter. */
static void write_series(const char *path, uint64_t steps)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 1, "main");
    uint64_t t = MS;
    for (uint64_t step = 0; step < steps; step++, t += 3 * MS) {
        synth_region(s, 0, "forward", PROF_KIND_COMPUTE, 0, t, 2 * MS);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t, 3 * MS);
        synth_memory(s, 0, "host.rss", t + MS, (1ull << 30) + step * (1ull << 20));
        synth_memory(s, 0, "host.rss", t + 3 * MS, (1ull << 30) + step * (1ull << 20));
        synth_memory(s, 0, "gpu.allocated", t + 3 * MS, (2ull << 30) + (step % 7) * 4096);
        synth_counter(s, 0, "loss", t + 3 * MS, 1.0 / (double)(step + 1));
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
}

/* analyze's text and compare read no point of a series, so they build
 * their reports without them: the same report otherwise, and the same
 * text, on runs shorter and longer than the points a report keeps. */
Test(output_report, a_report_without_points_is_the_same_text)
{
    const uint64_t lengths[] = { 0, 3, 150, REPORT_POINTS + 1, 3 * REPORT_POINTS };
    for (size_t i = 0; i <= sizeof lengths / sizeof lengths[0]; i++) {
        const char *path = i ? fu_path("series.prof") : DEMO;
        if (i)
            write_series(path, lengths[i - 1]);
        cJSON *with = report_listing(path, 1), *without = report_listing(path, 0);
        char *a = render(with, AS_TEXT, NULL, REPORT_TABLE_OPS);
        char *b = render(without, AS_TEXT, NULL, REPORT_TABLE_OPS);
        cr_assert_str_eq(a, b, "%s: the text changed without points", path);
        cr_assert_eq(points_emptied(without), 0, "%s: points listed", path);
        size_t full = points_emptied(with);
        cr_assert(i == 1 || (i == 0 ? full > 0 : full == 4), "%s: %zu series with points", path,
                  full);
        cr_assert(cJSON_Compare(with, without, 1), "%s: more than the points changed", path);
        free(a);
        free(b);
        cJSON_Delete(with);
        cJSON_Delete(without);
    }
}

Test(output_report, numbers_are_stable)
{
    char b[REPORT_NUM_BUF];
    cr_assert_str_eq(report_number(b, 0.0), "0");
    cr_assert_str_eq(report_number(b, -0.0), "0");
    cr_assert_str_eq(report_number(b, 30519000000.0), "30519000000");
    cr_assert_str_eq(report_number(b, -12.0), "-12");
    cr_assert_str_eq(report_number(b, 0.25), "0.25");
    cr_assert_str_eq(report_number(b, 0.1), "0.1");
    cr_assert_str_eq(report_number(b, 1.0 / 3.0), "0.33333333333333331");
    cr_assert_str_eq(report_number(b, 1e300), "1e+300");
    cr_assert_str_eq(report_number(b, 9007199254740992.0), "9007199254740992");
    cr_assert_str_eq(report_number(b, 1767225600000000000.0), "1767225600000000000");
    cr_assert_str_eq(report_number(b, 1e19), "1e+19");
    cr_assert_str_eq(report_number(b, NAN), "");
    cr_assert_str_eq(report_number(b, INFINITY), "");
    cr_assert_eq(strtod(report_number(b, 123.456e-7), NULL), 123.456e-7);
}

Test(output_report, write_failures_are_io_errors)
{
    cJSON *r = report_of(DEMO);
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        cr_skip_test("no /dev/full");
    setvbuf(full, NULL, _IONBF, 0); /* fail at the first write, not at fclose */
    cr_assert_eq(report_render_text(full, r, NULL), PROF_ERR_IO);
    clearerr(full);
    cr_assert_eq(report_render_json(full, r), PROF_ERR_IO);
    clearerr(full);
    cr_assert_eq(report_render_csv(full, r, REPORT_TABLE_OPS), PROF_ERR_IO);
    fclose(full);
    cJSON_Delete(r);
}

/* Names wider than their column are shortened where names of one family
 * are alike (rules of textout_shorten): what tells them apart stays. */
Test(output_report, long_names_keep_what_tells_them_apart)
{
    static const struct {
        int width;
        const char *name, *want;
    } cases[] = {
        { 32, "aten::mm", "aten::mm" },
        { 32,
          "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>"
          "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
          "Kernel<cutlass_~_16x4_nn_align4>" },
        { 32,
          "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>"
          "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4::Params)",
          "Kernel<cutlass_~_16x4_nt_align4>" },
        { 32,
          "void clover::par_ranged2d_kernel<clover::update_halo_kernel_functor<3>, "
          "clover::Range2d>(clover::Range2d, int)",
          "par_ranged2d_ke~tor<3>, Range2d>" },
        { 64,
          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
          "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
          "at::detail::Array<char*, 3>)",
          "vectorized_elementwise_kernel<4, CUDAFunctor_add<~>, Array<~> >" },
        { 40, "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>"
              "(float const*, long const*, int)",
          "max_pool_backward_nchw<float, float>" },
        { 32, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
          "ncclDevKernel_A~_Sum_f32_RING_LL" },
        { 12, "((((((((((((((((", "(((((~((((((" },
        { 12, ">>>>>>>><<<<<<<<<", ">>>>>~<<<<<<" },
    };
    textout t;
    textout_init(&t, stdout, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = textout_shorten(&t, cases[i].name, cases[i].width);
        cr_assert_not_null(got);
        cr_expect_str_eq(got, cases[i].want, "%s at %d", cases[i].name, cases[i].width);
        cr_expect_leq(textout_cols(got), cases[i].width);
        free(got);
    }
    report_style utf8 = { 0, 1, 0, 0 }; /* UTF-8: the ellipsis is one column */
    textout_init(&t, stdout, &utf8);
    char *got = textout_shorten(&t, "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32", 20);
    cr_assert_not_null(got);
    cr_expect_str_eq(got, "sm80_xmma\xe2\x80\xa6" "32_tf32f32");
    cr_expect_eq(textout_cols(got), 20);
    free(got);
}

/* Shortened alike, names of one table's column show where they differ
 * instead (textout_names): real cuBLAS kernels of an H200 run that head
 * and tail left alike, the layers of a transformer, thousands of names;
 * names that fit, equal names and the wide style are left as they are. */
static void names_of(textout *t, cJSON *items, int width, textout_names *c)
{
    cr_assert_eq(textout_names_init(t, c, items, "name", width), 0);
    cr_assert_eq(c->n, (size_t)cJSON_GetArraySize(items));
    for (size_t i = 0; i < c->n; i++)
        cr_expect_leq(t->st.wide ? 0 : textout_cols(c->shown[i]), width, "%s", c->shown[i]);
}

static void expect_apart(const textout_names *c, cJSON *items)
{
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = i + 1; j < c->n; j++) {
            const char *a = cJSON_GetArrayItem(cJSON_GetArrayItem(items, (int)i), 0)->valuestring;
            const char *b = cJSON_GetArrayItem(cJSON_GetArrayItem(items, (int)j), 0)->valuestring;
            if (strcmp(a, b) != 0)
                cr_expect_str_neq(c->shown[i], c->shown[j], "%s / %s", a, b);
            else
                cr_expect_str_eq(c->shown[i], c->shown[j]);
        }
}

static cJSON *named(const char *const *names, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", names[i]);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

Test(output_report, table_names_shortened_alike_are_told_apart)
{
    static const char *const cublas[] = {
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "aten::mm",
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas",
        "aten::mm",
    };
    textout t;
    textout_init(&t, stdout, NULL);
    textout_names c;
    cJSON *items = named(cublas, 6);
    names_of(&t, items, 32, &c);
    cr_expect_str_eq(c.shown[0], "sm80_x~tn_n_tilesize128x1~cublas");
    cr_expect_str_eq(c.shown[3], "sm80_x~tn_n_tilesize64x64~cublas");
    cr_expect_str_eq(c.shown[2], "aten::mm", "a name that fits is whole");
    expect_apart(&c, items);
    textout_names_free(&c);
    cJSON_Delete(items);

    /* the layers of a model: one family, apart in the middle */
    char layer[32][64];
    const char *layers[32];
    for (int i = 0; i < 32; i++) {
        snprintf(layer[i], sizeof layer[i], "model.layers.%d.self_attn.q_proj.forward", i);
        layers[i] = layer[i];
    }
    items = named(layers, 32);
    names_of(&t, items, 28, &c);
    expect_apart(&c, items);
    textout_names_free(&c);
    cJSON_Delete(items);

    /* a long table: sorted, not compared pairwise */
    enum { MANY = 3000 };
    cJSON *big = cJSON_CreateArray();
    for (int i = 0; i < MANY; i++) {
        char name[96];
        snprintf(name, sizeof name, "kernel_variant_%04d_with_a_long_common_suffix_here", i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddItemToArray(big, o);
    }
    names_of(&t, big, 20, &c);
    for (size_t i = 1; i < c.n; i++)
        cr_assert_str_neq(c.shown[i - 1], c.shown[i], "%zu", i);
    cr_expect_str_eq(c.shown[123], "kernel~0123_w~x_here");
    textout_names_free(&c);
    cJSON_Delete(big);

    /* wide: whole */
    report_style wide = { 0, 0, 0, 1 };
    textout_init(&t, stdout, &wide);
    items = named(cublas, 6);
    names_of(&t, items, 32, &c);
    cr_expect_str_eq(c.shown[4], cublas[4]);
    textout_names_free(&c);
    cJSON_Delete(items);
}
