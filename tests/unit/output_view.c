/* output_view.c - the dashboard's parts below the command: the report data
 * escaped for its <script> element, the static HTML page (self-contained,
 * with a CSP, and its data reading back as the same report), the event
 * windows of the timeline (overlap, the longest kept past the limit, thread
 * and GPU filters, GPU streams as lanes in order, a window of a profile of
 * many blocks) on profiles written
 * by synth, and the server's start
 * (a free port, a port in use, an address that is not numeric). Requests
 * over HTTP are tested end to end by tests/cli/view.sh. */
#include <cjson/cJSON.h>

#include "format_util.h"
#include "output/html.h"
#include "output/server.h"
#include "output/timeline.h"
#include "synth.h"

#define MS 1000000ull

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(output_view, .fini = teardown);

static char *script_json(const char *json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cr_assert_eq(html_write_script_json(f, json), 0);
    cr_assert_eq(fclose(f), 0);
    return text;
}

Test(output_view, script_json_escapes_markup_and_line_separators)
{
    char *t = script_json("{\"n\":\"</script><!--&\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9\"}");
    cr_assert_str_eq(t, "{\"n\":\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029\xc3\xa9\"}");
    cJSON *back = cJSON_Parse(t);
    cr_assert_not_null(back, "escaped text is not JSON");
    cr_assert_str_eq(cJSON_GetObjectItem(back, "n")->valuestring,
                     "</script><!--&\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9");
    cJSON_Delete(back);
    free(t);
}

static const char report_text[] =
    "{\"schema\":\"prof-report\",\"version\":1,"
    "\"profiles\":[{\"path\":\"</script><script>alert(1)</script>\",\"clean\":true}],"
    "\"summary\":{\"steps\":3,\"wall_ns\":123456789012},"
    "\"operations\":[{\"name\":\"<img src=x onerror=alert(1)>\",\"self_ns\":5}]}";

static char *render_html(const cJSON *report)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    prof_error err = { 0 };
    cr_assert_eq(report_render_html(f, report, NULL, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(fclose(f), 0);
    char *copy = strdup(text); /* not the stream's buffer, for gcc's -Wdangling-pointer */
    free(text);
    cr_assert_not_null(copy);
    return copy;
}

Test(output_view, static_page_is_self_contained_and_carries_the_report)
{
    cJSON *report = cJSON_Parse(report_text);
    cr_assert_not_null(report);
    char *html = render_html(report);
    cr_assert(strstr(html, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"));
    cr_assert_null(strstr(html, "<script src="), "the script is not inlined");
    cr_assert_null(strstr(html, "<link rel=\"stylesheet\""), "the stylesheet is not inlined");
    cr_assert_null(strstr(html, "alert(1)</script>"), "a name ends the data block");
    cr_assert_null(strstr(html, "<img"), "a name became markup");

    const char *open = "<script type=\"application/json\" id=\"prof-data\">";
    char *data = strstr(html, open);
    cr_assert_not_null(data);
    data += strlen(open);
    char *end = strstr(data, "</script>");
    cr_assert_not_null(end);
    *end = '\0';
    cJSON *doc = cJSON_Parse(data);
    cr_assert_not_null(doc, "the data block is not JSON");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(doc, "compare")));
    cJSON *back = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "reports"), 0);
    cr_assert(cJSON_Compare(back, report, 1), "the page's report differs from the report");
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "summary"), "wall_ns")->valuedouble,
                 123456789012.0);
    cJSON_Delete(doc);
    cJSON_Delete(report);
    free(html);
}

Test(output_view, write_failure_is_an_io_error)
{
    cJSON *report = cJSON_Parse(report_text);
    FILE *f = fopen("/dev/full", "w");
    cr_assert_not_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    prof_error err = { 0 };
    cr_assert_eq(report_render_html(f, report, NULL, &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "cannot write") != NULL, "%s", err.message);
    fclose(f);
    cJSON_Delete(report);
}

/* Thread 0: ten regions of 1..10 ms one after another from t = 0, each with
 * a nested one; two GPU kernels; a step and a mark. */
static const char *write_profile(void)
{
    const char *path = fu_path("window.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_thread(s, 0, 11, "main");
    uint64_t t = 0;
    for (uint64_t i = 1; i <= 10; i++) {
        synth_region(s, 0, "inner", PROF_KIND_DATA, 1, t, i * MS / 2);
        synth_region(s, 0, "outer", PROF_KIND_COMPUTE, 0, t, i * MS);
        t += i * MS;
    }
    synth_gpu_kernel(s, "k1", 0, 7, 1, 2 * MS, MS);
    synth_gpu_kernel(s, "k2", 0, 9, 2, 40 * MS, MS);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 0, t);
    synth_mark(s, 0, "ckpt", 3 * MS);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    return path;
}

static cJSON *window(const char *path, uint64_t t0, uint64_t t1, long thread, size_t limit)
{
    timeline_query q = { t0, t1, thread, limit };
    prof_error err = { 0 };
    char *text = timeline_window_json(path, NULL, &q, &err);
    cr_assert_not_null(text, "%s", err.message);
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "not JSON: %s", text);
    free(text);
    return j;
}

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItem(o, key)->valuedouble;
}

Test(output_view, window_keeps_overlapping_events_in_start_order)
{
    const char *path = write_profile();
    /* outer i starts at (i-1)i/2 ms: 0, 1, 3, 6, 10, ...; [2.5, 6.5] ms overlaps
     * outer 2 (1-3), outer 3 (3-6), outer 4 (6-10), inner 3 (3-4.5),
     * inner 4 (6-8), k1 (2-3) */
    cJSON *j = window(path, 5 * MS / 2, 13 * MS / 2, TIMELINE_ALL_THREADS, 100);
    cr_assert_eq(num(j, "count"), 6);
    cr_assert_eq(num(j, "hidden"), 0);
    const cJSON *ev = cJSON_GetObjectItem(j, "events"), *e;
    double last = -1;
    cJSON_ArrayForEach(e, ev) {
        double start = cJSON_GetArrayItem(e, 2)->valuedouble;
        cr_assert_geq(start, last, "not in start order");
        last = start;
    }
    const cJSON *lanes = cJSON_GetObjectItem(j, "lanes");
    cr_assert_eq(cJSON_GetArraySize(lanes), 2);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(lanes, 0), "name")->valuestring, "main");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(lanes, 1), "name")->valuestring,
                     "GPU 0 stream 7");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "steps")), 1);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "marks")), 1);
    cJSON_Delete(j);
}

/* Each GPU stream is a lane of its own, after the threads and in device and
 * stream order whatever came first; an NCCL kernel is of kind 8. */
Test(output_view, gpu_streams_are_lanes_in_order)
{
    const char *path = fu_path("streams.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_gpu_kernel(s, "late_device", 1, 3, 1, 0, MS);
    synth_gpu_kernel(s, "ncclKernel_AllReduce_RING_LL_Sum_float", 0, 40, 2, MS, MS);
    synth_gpu_kernel(s, "gemm", 0, 7, 3, 2 * MS, MS);
    synth_gpu_kernel(s, "gemm", 0, 7, 4, 3 * MS, MS);
    synth_thread(s, 2, 12, "loader");
    synth_region(s, 2, "fetch", PROF_KIND_DATA, 0, 0, 4 * MS);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    cJSON *j = window(path, 0, 10 * MS, TIMELINE_ALL_THREADS, 100);
    const cJSON *lanes = cJSON_GetObjectItem(j, "lanes");
    const char *want[] = { "loader", "GPU 0 stream 7", "GPU 0 stream 40", "GPU 1 stream 3" };
    cr_assert_eq(cJSON_GetArraySize(lanes), 4);
    for (int i = 0; i < 4; i++)
        cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(lanes, i), "name")->valuestring,
                         want[i]);
    const cJSON *names = cJSON_GetObjectItem(j, "names"), *e;
    int seen = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "events")) {
        int lane = cJSON_GetArrayItem(e, 0)->valueint, kind = cJSON_GetArrayItem(e, 5)->valueint;
        const char *name = cJSON_GetArrayItem(names, cJSON_GetArrayItem(e, 4)->valueint)->valuestring;
        if (strcmp(name, "gemm") == 0)
            cr_assert(lane == 1 && kind == 5, "gemm on GPU 0 stream 7, a kernel");
        if (strncmp(name, "nccl", 4) == 0)
            cr_assert(lane == 2 && kind == 8, "NCCL on stream 40, a communication kernel");
        if (strcmp(name, "late_device") == 0)
            cr_assert_eq(lane, 3);
        if (strcmp(name, "fetch") == 0)
            cr_assert(lane == 0 && kind == PROF_KIND_DATA);
        seen++;
    }
    cr_assert_eq(seen, 5);
    cJSON_Delete(j);
}

Test(output_view, past_the_limit_the_longest_are_kept)
{
    const char *path = write_profile();
    cJSON *j = window(path, 0, 100 * MS, 0, 3);
    cr_assert_eq(num(j, "count"), 3);
    cr_assert_eq(num(j, "hidden"), 17);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "events"))
        cr_assert_geq(cJSON_GetArrayItem(e, 3)->valuedouble, 8.0 * MS, "a short event kept");
    cJSON_Delete(j);
}

Test(output_view, thread_and_gpu_filters)
{
    const char *path = write_profile();
    cJSON *cpu = window(path, 0, 100 * MS, 0, 100);
    cJSON *gpu = window(path, 0, 100 * MS, TIMELINE_GPU_ONLY, 100);
    cJSON *none = window(path, 0, 100 * MS, 5, 100);
    cr_assert_eq(num(cpu, "count"), 20);
    cr_assert_eq(num(gpu, "count"), 2);
    cr_assert_eq(num(none, "count"), 0);
    cJSON_Delete(cpu);
    cJSON_Delete(gpu);
    cJSON_Delete(none);
}

/* 200 steps of 10 ms in blocks of 8 records, so that a window is read from
 * the few blocks it touches: per step an inner (0-4 ms) and outer (0-9 ms)
 * region, a kernel (5-7 ms), the step, every third step a mark at 8 ms;
 * then a region over the whole run, recorded last. */
static const char *write_blocks_profile(void)
{
    const char *path = fu_path("blocks.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 8);
    synth_thread(s, 0, 11, "main");
    for (uint64_t i = 0; i < 200; i++) {
        uint64_t t0 = i * 10 * MS;
        synth_region(s, 0, "inner", PROF_KIND_DATA, 1, t0, 4 * MS);
        synth_region(s, 0, "outer", PROF_KIND_COMPUTE, 0, t0, 9 * MS);
        synth_gpu_kernel(s, "k", 0, 1, i, t0 + 5 * MS, 2 * MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t0, 10 * MS);
        if (i % 3 == 0)
            synth_mark(s, 0, "m", t0 + 8 * MS);
    }
    synth_region(s, 0, "run", PROF_KIND_COMPUTE, 0, 0, 2000 * MS);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "%s", err.message);
    return path;
}

Test(output_view, window_of_a_many_block_profile_holds_everything_overlapping)
{
    const char *path = write_blocks_profile();
    /* [995, 1001] ms: outer 99, kernel 99, outer 100, inner 100 and the run;
     * steps 99 and 100; the mark of step 99 */
    cJSON *j = window(path, 995 * MS, 1001 * MS, TIMELINE_ALL_THREADS, 100);
    cr_assert_eq(num(j, "count"), 5);
    cr_assert_eq(num(j, "hidden"), 0);
    const cJSON *steps = cJSON_GetObjectItem(j, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), 2);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(steps, 0), 0)->valuedouble, 99);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(steps, 1), 0)->valuedouble, 100);
    const cJSON *marks = cJSON_GetObjectItem(j, "marks");
    cr_assert_eq(cJSON_GetArraySize(marks), 1);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(marks, 0), 1)->valuedouble, 998.0 * MS);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "events"), 0);
    cr_assert_eq(cJSON_GetArrayItem(first, 2)->valuedouble, 0, "the run region comes first");
    cr_assert_eq(cJSON_GetArrayItem(first, 3)->valuedouble, 2000.0 * MS);
    cJSON_Delete(j);

    j = window(path, 0, UINT64_MAX, TIMELINE_ALL_THREADS, 1000);
    cr_assert_eq(num(j, "count"), 601);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "steps")), 200);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "marks")), 67);
    cJSON_Delete(j);
}

Test(output_view, unreadable_profile_is_an_error)
{
    timeline_query q = { 0, 1, TIMELINE_ALL_THREADS, 10 };
    prof_error err = { 0 };
    cr_assert_null(timeline_window_json(fu_path("missing.prof"), NULL, &q, &err));
    cr_assert_eq(err.code, PROF_ERR_IO);
}

static view_server_config config(const char *addr, unsigned port)
{
    view_server_config c = { addr, port, 1, { "x.prof" }, { "{}" }, "{}", NULL, NULL, NULL };
    return c;
}

Test(output_view, server_takes_a_free_port_and_reports_one_in_use)
{
    view_server_config c = config(NULL, 0);
    view_server *a = NULL, *b = NULL;
    prof_error err = { 0 };
    cr_assert_eq(view_server_start(&c, &a, &err), PROF_OK, "%s", err.message);
    unsigned port = view_server_port(a);
    cr_assert_neq(port, 0);
    char want[64];
    snprintf(want, sizeof want, "http://127.0.0.1:%u/?token=", port);
    const char *url = view_server_url(a);
    cr_assert(strncmp(url, want, strlen(want)) == 0, "%s", url);
    cr_assert_eq(strspn(url + strlen(want), "0123456789abcdef"), 32, "128 bits in hex: %s", url);
    cr_assert_eq(strlen(url), strlen(want) + 32, "%s", url);
    c.port = port;
    cr_assert_eq(view_server_start(&c, &b, &err), PROF_ERR_IO);
    cr_assert_null(b);
    cr_assert(strstr(err.message, "already in use") != NULL, "%s", err.message);
    view_server_stop(a);
}

Test(output_view, server_wants_a_numeric_address)
{
    view_server_config c = config("localhost", 0);
    view_server *s = NULL;
    prof_error err = { 0 };
    cr_assert_eq(view_server_start(&c, &s, &err), PROF_ERR_INVALID);
    cr_assert(strstr(err.message, "not a numeric") != NULL, "%s", err.message);
    c.bind_addr = "::1";
    if (view_server_start(&c, &s, &err) == PROF_OK) { /* where IPv6 loopback exists */
        cr_assert(strncmp(view_server_url(s), "http://[::1]:", 13) == 0, "%s", view_server_url(s));
        view_server_stop(s);
    }
}

/* Every window the server hands out reads back, UINT64_MAX included
 * (issue: t1=18446744073709551615 was refused); one past it is not. */
Test(output_view, window_bounds_read_back_up_to_the_largest)
{
    long profile = -1;
    timeline_query q;
    cr_assert_eq(view_parse_events(NULL, "0", "18446744073709551615", NULL, 1, &profile, &q), 0);
    cr_assert_eq(q.t1_ns, UINT64_MAX);
    cr_assert_eq(view_parse_events(NULL, "18446744073709551615", "18446744073709551615", NULL, 1,
                                   &profile, &q), 0);
    cr_assert_eq(q.t0_ns, UINT64_MAX);
    cr_assert_eq(view_parse_events(NULL, "0", "18446744073709551616", NULL, 1, &profile, &q),
                 VIEW_BAD_WINDOW);
    cr_assert_eq(view_parse_events(NULL, "0", "99999999999999999999", NULL, 1, &profile, &q),
                 VIEW_BAD_WINDOW);
    cr_assert_eq(view_parse_events(NULL, "00000000000000000000001", NULL, NULL, 1, &profile, &q),
                 0, "leading zeros are the same number");
    cr_assert_eq(q.t0_ns, 1);
    cr_assert_eq(view_parse_events(NULL, "", NULL, NULL, 1, &profile, &q), VIEW_BAD_WINDOW);
    cr_assert_eq(view_parse_events(NULL, "4294967296", NULL, "4294967296", 1, &profile, &q),
                 VIEW_BAD_THREAD);
}

Test(output_view, a_rank_reads_back_up_to_the_largest_int)
{
    long rank = 0;
    cr_assert_eq(view_parse_rank(NULL, &rank), 0);
    cr_assert_eq(rank, -1, "absent: none");
    cr_assert_eq(view_parse_rank("0", &rank), 0);
    cr_assert_eq(rank, 0);
    cr_assert_eq(view_parse_rank("2147483647", &rank), 0);
    cr_assert_eq(rank, 2147483647);
    cr_assert_eq(view_parse_rank("2147483648", &rank), -1);
    cr_assert_eq(view_parse_rank("-1", &rank), -1);
    cr_assert_eq(view_parse_rank("", &rank), -1);
    cr_assert_eq(view_parse_rank("1x", &rank), -1);
    cr_assert_eq(view_parse_rank("99999999999999999999", &rank), -1);
}
