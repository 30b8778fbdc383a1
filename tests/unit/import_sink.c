/* import_sink.c - the sink that turns imported activity into .prof files,
 * read back through the real reader and model: regions handed over by
 * start (in order or not) come out nested with their depths in end order,
 * a region that outlives its parent is cut, steps, memory series, GPU
 * activity, syncs placed on their thread through their API call's
 * correlation whichever comes first (thousands waiting at once), metadata
 * written last (rank, devices, notes), a window far shorter than the
 * trace, and the format's limits on names and their text, reached exactly
 * (the profile reads back) and passed (the sink stops, PROF_ERR_LIMIT). */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "format/format.h"
#include "format_util.h"
#include "import/sink.h"
#include "model/profile.h"
#include "model_util.h"
#include "prof.h"

#define US 1000ll

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(import_sink, .fini = teardown);

static import_sink *open_sink(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    import_sink *s;
    prof_error err = { 0 };
    cr_assert_eq(sink_open(&s, fd, "kineto", "trace.json", &err), PROF_OK, "%s", err.message);
    return s;
}

static void close_sink(import_sink *s)
{
    prof_error err = { 0 };
    cr_assert_eq(sink_close(s, &err), PROF_OK, "%s", err.message);
}

static const model_op *op_named(const profile_model *m, const char *name)
{
    for (size_t i = 0; i < m->nops; i++)
        if (strcmp(m->ops[i].name, name) == 0)
            return &m->ops[i];
    return NULL;
}

/* The regions of a file in file order. */
static size_t read_regions(const char *path, prof_event *out, char names[][32], size_t cap)
{
    prof_reader *r;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    prof_event ev;
    size_t n = 0;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) > 0)
        if (ev.type == PROF_EV_REGION && n < cap) {
            snprintf(names[n], 32, "%s", ev.name);
            out[n++] = ev;
        }
    cr_assert_eq(rc, 0);
    prof_reader_close(r);
    return n;
}

/* step: outer [0,100) { a [10,40) { b [20,30) } c [50,90) } */
static void one_tree(import_sink *s, int64_t base, int shuffled)
{
    if (shuffled) {
        sink_region(s, 7, "c", 1, SINK_KIND_INFER, base + 50 * US, 40 * US);
        sink_region(s, 7, "b", 1, SINK_KIND_INFER, base + 20 * US, 10 * US);
        sink_region(s, 7, "outer", 5, SINK_KIND_INFER, base, 100 * US);
        sink_region(s, 7, "a", 1, SINK_KIND_INFER, base + 10 * US, 30 * US);
    } else {
        sink_region(s, 7, "outer", 5, SINK_KIND_INFER, base, 100 * US);
        sink_region(s, 7, "a", 1, SINK_KIND_INFER, base + 10 * US, 30 * US);
        sink_region(s, 7, "b", 1, SINK_KIND_INFER, base + 20 * US, 10 * US);
        sink_region(s, 7, "c", 1, SINK_KIND_INFER, base + 50 * US, 40 * US);
    }
}

static void check_tree(const char *path)
{
    prof_event ev[8];
    char names[8][32];
    cr_assert_eq(read_regions(path, ev, names, 8), 4);
    const char *order[] = { "b", "a", "c", "outer" };
    uint32_t depth[] = { 2, 1, 1, 0 };
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(names[i], order[i]);
        cr_expect_eq(ev[i].depth, depth[i], "%s depth %u", names[i], ev[i].depth);
    }
    cr_expect_eq(ev[3].dur_ns, 100000);
    cr_expect_eq(ev[0].start_ns + 10000, ev[1].start_ns + 20000);
}

Test(import_sink, regions_in_order_nest_in_end_order)
{
    const char *p = fu_path("a.prof");
    import_sink *s = open_sink(p);
    one_tree(s, 1000000 * US, 0);
    close_sink(s);
    check_tree(p);
}

Test(import_sink, regions_out_of_order_nest_the_same)
{
    const char *p = fu_path("b.prof");
    import_sink *s = open_sink(p);
    one_tree(s, 1000000 * US, 1);
    import_counts counts;
    sink_describe(s, &counts);
    cr_expect_eq(counts.regions, 4);
    close_sink(s);
    check_tree(p);
}

Test(import_sink, a_region_outliving_its_parent_is_cut)
{
    const char *p = fu_path("c.prof");
    import_sink *s = open_sink(p);
    sink_region(s, 1, "p", 1, SINK_KIND_INFER, 0, 100 * US);
    sink_region(s, 1, "k", 1, SINK_KIND_INFER, 90 * US, 30 * US);
    close_sink(s);
    prof_event ev[4];
    char names[4][32];
    cr_assert_eq(read_regions(p, ev, names, 4), 2);
    cr_expect_str_eq(names[0], "k");
    cr_expect_eq(ev[0].depth, 1);
    cr_expect_eq(ev[0].dur_ns, 10000);
}

Test(import_sink, a_long_trace_through_a_short_window)
{
    const char *p = fu_path("d.prof");
    import_sink *s = open_sink(p);
    for (int i = 0; i < 20000; i++)
        one_tree(s, (int64_t)i * 200 * US, i % 2);
    for (int i = 0; i < 20000; i++)
        sink_step(s, 7, (uint64_t)i + 1, (int64_t)i * 200 * US, 200 * US);
    close_sink(s);
    profile_model m;
    mu_load(p, &m);
    cr_expect_eq(m.region_events, 80000);
    cr_expect_eq(m.nsteps, 20000);
    const model_op *b = op_named(&m, "b"), *outer = op_named(&m, "outer");
    cr_assert(b && outer);
    cr_expect_eq(b->calls, 20000);
    cr_expect_eq(outer->self_ns, 20000ull * 30000, "outer self %llu",
                 (unsigned long long)outer->self_ns);
    profile_model_free(&m);
}

Test(import_sink, kinds_from_names)
{
    cr_expect_eq(sink_kind_of("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 59),
                 PROF_KIND_DATA);
    cr_expect_eq(sink_kind_of("aten::item", 10), PROF_KIND_SYNC);
    cr_expect_eq(sink_kind_of("aten::itemsize", 14), PROF_KIND_COMPUTE);
    cr_expect_eq(sink_kind_of("aten::_local_scalar_dense", 25), PROF_KIND_SYNC);
    cr_expect_eq(sink_kind_of("cudaDeviceSynchronize", 21), PROF_KIND_SYNC);
    cr_expect_eq(sink_kind_of("hipStreamSynchronize", 20), PROF_KIND_SYNC);
    cr_expect_eq(sink_kind_of("nccl:all_reduce", 15), PROF_KIND_COMM);
    cr_expect_eq(sink_kind_of("c10d::allreduce_", 16), PROF_KIND_COMM);
    cr_expect_eq(sink_kind_of("ProcessGroupNCCL::allreduce", 27), PROF_KIND_COMM);
    cr_expect_eq(sink_kind_of("aten::conv2d", 12), PROF_KIND_COMPUTE);
}

static rt_cu_rec api(const char *name, uint32_t corr, uint64_t tid, int64_t t0, int64_t t1)
{
    rt_cu_rec r = { 0 };
    r.kind = RT_CU_API;
    r.name = name;
    r.correlation = corr;
    r.tid = tid;
    r.start = (uint64_t)t0;
    r.end = (uint64_t)t1;
    return r;
}

static rt_cu_rec sync_rec(uint32_t corr, int64_t t0, int64_t t1)
{
    rt_cu_rec r = { 0 };
    r.kind = RT_CU_SYNC;
    r.sync_type = RT_CU_SYNC_STREAM;
    r.correlation = corr;
    r.context = 1;
    r.start = (uint64_t)t0;
    r.end = (uint64_t)t1;
    return r;
}

Test(import_sink, gpu_activity_and_syncs_on_their_thread)
{
    const char *p = fu_path("e.prof");
    import_sink *s = open_sink(p);
    const int64_t T = 5000000 * US;
    rt_cu_rec ctx = { 0 };
    ctx.kind = RT_CU_CONTEXT;
    ctx.context = 1;
    ctx.device = 0;
    sink_cuda(s, &ctx);
    sink_region(s, 3, "fwd", 3, SINK_KIND_INFER, T, 1000 * US);
    sink_region(s, 3, "aten::item", 10, SINK_KIND_INFER, T + 500 * US, 400 * US);
    /* the sync before its API call, then one after */
    rt_cu_rec sy = sync_rec(11, T + 600 * US, T + 800 * US);
    sink_cuda(s, &sy);
    rt_cu_rec a = api("cudaStreamSynchronize", 11, 3, T + 590 * US, T + 810 * US);
    sink_cuda(s, &a);
    rt_cu_rec a2 = api("cudaStreamSynchronize", 12, 3, T + 100 * US, T + 300 * US);
    sink_cuda(s, &a2);
    rt_cu_rec sy2 = sync_rec(12, T + 110 * US, T + 290 * US);
    sink_cuda(s, &sy2);
    rt_cu_rec orphan = sync_rec(99, T + 50 * US, T + 60 * US);
    sink_cuda(s, &orphan);
    rt_cu_rec k = { 0 };
    k.kind = RT_CU_KERNEL;
    k.name = "gemm";
    k.device = 0;
    k.stream = 7;
    k.correlation = 13;
    k.start = (uint64_t)(T + 200 * US);
    k.end = (uint64_t)(T + 700 * US);
    sink_cuda(s, &k);
    sink_add_device(s, 0, "Test GPU", 42ull << 30);
    import_counts counts;
    sink_describe(s, &counts);
    cr_expect_eq(counts.kernels, 1);
    cr_expect_eq(counts.api_calls, 2);
    close_sink(s);

    profile_model m;
    mu_load(p, &m);
    cr_expect(m.has_gpu);
    cr_assert_eq(m.ngpus, 1);
    cr_expect_eq(m.gpus[0].kernels, 1);
    cr_expect_eq(m.gpus[0].busy_ns, 500000);
    /* the sync inside aten::item is the same wait: the region counts */
    cr_expect_eq(m.sync_records, 1, "sync records %llu", (unsigned long long)m.sync_records);
    cJSON *meta = cJSON_Parse(m.metadata);
    cJSON *imp = cJSON_GetObjectItem(meta, "import");
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(imp, "counts"), "unplaced")->valuedouble,
                 1);
    cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "devices"), 0);
    cr_expect_eq(cJSON_GetObjectItem(dev, "memory_bytes")->valuedouble, (double)(42ull << 30));
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* Syncs wait by correlation, each for its own API call, however many wait
 * at once and whatever their numbers (a table indexed by a hash of the
 * correlation once lost those whose slot another held); a second sync of
 * a correlation already waiting has no place. */
Test(import_sink, many_syncs_wait_for_their_calls)
{
    enum { N = 3000 };
    static uint32_t corr[N];
    uint32_t x = 2463534242u;
    for (uint32_t i = 0; i < N; i++) { /* distinct, in no order: xorshift32 */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        corr[i] = x;
    }
    const char *p = fu_path("g.prof");
    import_sink *s = open_sink(p);
    const int64_t T = 5000000 * US;
    rt_cu_rec ctx = { 0 };
    ctx.kind = RT_CU_CONTEXT;
    ctx.context = 1;
    sink_cuda(s, &ctx);
    for (uint32_t i = 0; i < N; i++) {
        int64_t t = T + (int64_t)i * 100 * US;
        rt_cu_rec sy = sync_rec(corr[i], t + 10 * US, t + 20 * US);
        sink_cuda(s, &sy);
    }
    rt_cu_rec dup = sync_rec(corr[0], T + 5 * US, T + 6 * US);
    sink_cuda(s, &dup);
    for (uint32_t i = N; i-- > 0;) {
        int64_t t = T + (int64_t)i * 100 * US;
        rt_cu_rec a = api("cudaStreamSynchronize", corr[i], 3, t, t + 30 * US);
        sink_cuda(s, &a);
    }
    import_counts counts;
    sink_describe(s, &counts);
    cr_expect_eq(counts.syncs, N, "syncs %llu", (unsigned long long)counts.syncs);
    cr_expect_eq(counts.unplaced, 1, "unplaced %llu", (unsigned long long)counts.unplaced);
    close_sink(s);
    profile_model m;
    mu_load(p, &m);
    cr_expect_eq(m.sync_records, N, "sync records %llu", (unsigned long long)m.sync_records);
    profile_model_free(&m);
}

Test(import_sink, metadata_told_late_and_notes)
{
    const char *p = fu_path("f.prof");
    import_sink *s = open_sink(p);
    sink_region(s, 1, "x", 1, SINK_KIND_INFER, 4000 * US, 10 * US);
    sink_memory(s, "gpu0.allocated", 4001 * US, 1 << 20);
    sink_memory(s, "gpu0.allocated", 4002 * US, 2 << 20);
    sink_note_unknown(s, "mystery");
    sink_note_unknown(s, "mystery");
    sink_note_skipped(s, "python_function");
    sink_note_damage(s, "cut at byte 123");
    sink_set_rank(s, 1, 4);
    sink_set_epoch(s, 1700000000000000000ll);
    sink_set_fact(s, "schema", "\"2024\"");
    close_sink(s);
    profile_model m;
    mu_load(p, &m);
    cr_expect_eq(m.rank, 1);
    cr_expect_eq(m.world_size, 4);
    cr_assert_eq(m.nseries, 1);
    cr_expect_eq(m.series[0].nsamples, 2);
    cJSON *meta = cJSON_Parse(m.metadata);
    cr_assert_not_null(meta);
    cJSON *imp = cJSON_GetObjectItem(meta, "import");
    cr_expect_str_eq(cJSON_GetObjectItem(imp, "damaged")->valuestring, "cut at byte 123");
    cr_expect_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(imp, "unknown_categories"), "mystery")->valuedouble,
        2);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(imp, "facts"), "schema")->valuestring,
                     "2024");
    /* time 0 is 1 s before the first event: 4 ms - 1 s is before the epoch
     * origin here, so the origin is the trace's own 0 */
    double origin = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "clock"), "origin_epoch_ns")
                        ->valuedouble;
    cr_expect_eq(origin, 1700000000000000000.0);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* ---- the format's limits ---------------------------------------------------------------- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SINK_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef SINK_TEST_UNDER_ASAN
#define SINK_TEST_UNDER_ASAN 0
#endif

/* Every event of a file through the reader: how many are of type, and
 * the reader's verdict (0, or its error with the message in err). */
static int read_all(const char *path, uint32_t type, uint64_t *count, prof_error *err)
{
    prof_reader *r;
    cr_assert_eq(prof_reader_open(path, &r, err), PROF_OK, "%s", err->message);
    prof_event ev;
    int rc;
    *count = 0;
    while ((rc = prof_reader_next(r, &ev)) > 0)
        *count += ev.type == type;
    if (rc < 0)
        *err = *prof_reader_error(r);
    prof_reader_close(r);
    return rc;
}

/* n regions on one thread, each with a distinct short name (its number in
 * hex): the first error. */
static prof_err distinct_names(import_sink *s, uint32_t n)
{
    char name[16];
    prof_err e = PROF_OK;
    for (uint32_t i = 0; i < n && !e; i++) {
        int len = snprintf(name, sizeof name, "%x", i);
        e = sink_region(s, 1, name, (size_t)len, PROF_KIND_COMPUTE, 2 * (int64_t)i, 1);
    }
    return e;
}

static void expect_limit(import_sink *s, prof_err e, const char *says)
{
    const prof_error *why = sink_error(s);
    cr_expect_eq(e, PROF_ERR_LIMIT, "%d", e);
    cr_assert_not_null(why);
    cr_expect_eq(why->code, PROF_ERR_LIMIT);
    cr_expect(strstr(why->message, says), "'%s' lacks '%s'", why->message, says);
}

/* A profile holds PF_STRING_IDS - 1 names (format §9). A trace with that
 * many imports and reads back whole; one with one name more stops at it
 * (issue 39: it was written, and every command then refused it, "string id
 * 4194304 out of range"). */
Test(import_sink, distinct_names_up_to_the_format_limit, .timeout = 300)
{
    cr_assert_eq(PF_STRING_IDS - 1, 4194303u, "the limit of formats/prof-format.md §9");
    const char *p = fu_path("ids.prof");
    import_sink *s = open_sink(p);
    cr_assert_eq(distinct_names(s, PF_STRING_IDS - 1), PROF_OK);
    cr_assert_null(sink_error(s));
    close_sink(s);
    uint64_t regions;
    prof_error err = { PROF_OK, "" };
    cr_assert_eq(read_all(p, PROF_EV_REGION, &regions, &err), 0, "%s", err.message);
    cr_expect_eq(regions, PF_STRING_IDS - 1);

    s = open_sink(fu_path("ids-over.prof"));
    cr_assert_eq(distinct_names(s, PF_STRING_IDS - 1), PROF_OK);
    /* names already defined still go; the next new one does not */
    cr_assert_eq(sink_region(s, 1, "0", 1, PROF_KIND_COMPUTE, INT32_MAX, 1), PROF_OK);
    cr_assert_eq(sink_mark(s, 1, "3ffffe", INT32_MAX), PROF_OK);
    expect_limit(s, sink_mark(s, 1, "one more", INT32_MAX),
                 "more than 4194303 distinct names, the most a profile holds");
    cr_expect_eq(sink_region(s, 1, "0", 1, PROF_KIND_COMPUTE, INT32_MAX, 1), PROF_ERR_LIMIT,
                 "the sink stays stopped");
    sink_abandon(s);
    /* what the sink keeps is bounded by the limit: each name once (about
     * 240 MB here; more under ASan, whose redzones this does not measure) */
#if !defined(__SANITIZE_ADDRESS__) && !SINK_TEST_UNDER_ASAN
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    cr_expect_lt(ru.ru_maxrss, 600L * 1024, "peak %ld KiB", ru.ru_maxrss);
#endif
}

/* A profile holds PF_TEXT_MAX bytes of definition text, every name a
 * thread is given counted (format §9). 4,096 names of the longest length
 * are exactly that: they import and read back, though they are many times
 * the most one block of definitions holds (the sink writes its pending
 * definitions as they grow). A rename of a thread past it stops the sink,
 * as does a name. */
Test(import_sink, name_text_up_to_the_format_limit, .timeout = 300)
{
    cr_assert_eq(PF_TEXT_MAX, 268435456u, "the limit of formats/prof-format.md §9");
    uint32_t n = PF_TEXT_MAX / PF_STRING_MAX;
    char *big = malloc(PF_STRING_MAX + 1);
    cr_assert_not_null(big);
    memset(big, 'n', PF_STRING_MAX);
    big[PF_STRING_MAX] = '\0';
    const char *p = fu_path("text.prof");
    import_sink *s = open_sink(p);
    prof_err e = PROF_OK;
    for (uint32_t i = 0; i < n && !e; i++) {
        snprintf(big, 16, "%08x", i);
        big[8] = 'n';
        e = sink_region(s, 1, big, PF_STRING_MAX, PROF_KIND_COMPUTE, 2 * (int64_t)i, 1);
    }
    cr_assert_eq(e, PROF_OK, "%s", sink_error(s) ? sink_error(s)->message : "");
    close_sink(s);
    uint64_t regions;
    prof_error err = { PROF_OK, "" };
    cr_assert_eq(read_all(p, PROF_EV_REGION, &regions, &err), 0, "%s", err.message);
    cr_expect_eq(regions, n);

    /* n - 1 names and a thread name of the longest length: at the limit */
    s = open_sink(fu_path("text-over.prof"));
    for (uint32_t i = 0; i + 1 < n && !e; i++) {
        snprintf(big, 16, "%08x", i);
        big[8] = 'n';
        e = sink_region(s, 1, big, PF_STRING_MAX, PROF_KIND_COMPUTE, 2 * (int64_t)i, 1);
    }
    cr_assert_eq(e, PROF_OK);
    cr_assert_eq(sink_thread_name(s, 1, big), PROF_OK, "%zu bytes", strlen(big));
    cr_assert_eq(sink_region(s, 1, "", 0, PROF_KIND_COMPUTE, INT32_MAX, 1), PROF_OK,
                 "an empty name takes no text");
    expect_limit(s, sink_thread_name(s, 1, "x"),
                 "more than 268435456 bytes of names (256 MiB), the most a profile holds");
    sink_abandon(s);

    s = open_sink(fu_path("text-over2.prof"));
    for (uint32_t i = 0; i < n && !e; i++) {
        snprintf(big, 16, "%08x", i);
        big[8] = 'n';
        e = sink_region(s, 1, big, PF_STRING_MAX, PROF_KIND_COMPUTE, 2 * (int64_t)i, 1);
    }
    cr_assert_eq(e, PROF_OK);
    expect_limit(s, sink_region(s, 1, "x", 1, PROF_KIND_COMPUTE, INT32_MAX, 1),
                 "more than 268435456 bytes of names");
    sink_abandon(s);
    free(big);
}
