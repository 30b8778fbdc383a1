/* record_api.c - every call of prof.h round-trips through a real file read
 * back with the public reader: regions (nested, kinds, depth, by id, by
 * name, PROF_SCOPE, an id never interned, many names), steps and their flags, memory,
 * counters, marks, thread names, classes of names, sampling and the
 * schedule, configuration from the environment, start/stop/flush
 * semantics and errors. */
#include <errno.h>
#include <math.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "record_util.h"

static void setup(void)
{
    clean_env();
}

static void teardown(void)
{
    prof_stop();
    test_dir_remove();
}

TestSuite(record_api, .init = setup, .fini = teardown);

static prof_config cfg_for(const char *name)
{
    prof_config c = { 0 };
    c.output = test_path(name);
    return c;
}

static void start_ok(const prof_config *c)
{
    int e = prof_start(c);
    cr_assert_eq(e, 0, "prof_start: %d (%s)", e, strerror(-e));
}

static cJSON *meta_of(const readback *rb)
{
    cJSON *m = cJSON_Parse(rb->meta);
    cr_assert_not_null(m);
    return m;
}

Test(record_api, nested_regions_kinds_depth)
{
    prof_config c = cfg_for("nested.prof");
    start_ok(&c);
    prof_region_begin("outer");
    prof_region_begin_kind("load", PROF_KIND_DATA);
    prof_region_end();
    prof_region_begin_kind("sync", PROF_KIND_SYNC);
    prof_region_begin_kind("io", PROF_KIND_IO);
    prof_region_end();
    prof_region_end();
    prof_region_end();
    prof_region_end(); /* an end without a begin: ignored */
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    cr_assert(rb.st.clean);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), 4);
    const rb_event *outer = rb_find(&rb, PROF_EV_REGION, "outer", 0);
    const rb_event *load = rb_find(&rb, PROF_EV_REGION, "load", 0);
    const rb_event *sync = rb_find(&rb, PROF_EV_REGION, "sync", 0);
    const rb_event *io = rb_find(&rb, PROF_EV_REGION, "io", 0);
    cr_assert(outer && load && sync && io);
    cr_assert_eq(outer->ev.depth, 0);
    cr_assert_eq(outer->ev.kind, PROF_KIND_COMPUTE);
    cr_assert_eq(load->ev.depth, 1);
    cr_assert_eq(load->ev.kind, PROF_KIND_DATA);
    cr_assert_eq(sync->ev.kind, PROF_KIND_SYNC);
    cr_assert_eq(io->ev.depth, 2);
    cr_assert_eq(io->ev.kind, PROF_KIND_IO);
    /* children lie within their parents */
    cr_assert_geq(load->ev.start_ns, outer->ev.start_ns);
    cr_assert_leq(load->ev.start_ns + load->ev.dur_ns, outer->ev.start_ns + outer->ev.dur_ns);
    cr_assert_geq(io->ev.start_ns, sync->ev.start_ns);
    cr_assert_leq(io->ev.start_ns + io->ev.dur_ns, sync->ev.start_ns + sync->ev.dur_ns);
    cr_assert_geq(sync->ev.start_ns, load->ev.start_ns + load->ev.dur_ns);
    readback_free(&rb);
}

Test(record_api, steps_and_host_memory)
{
    prof_config c = cfg_for("steps.prof");
    start_ok(&c);
    for (int i = 0; i < 3; i++) {
        prof_region_begin("work");
        prof_region_end();
        prof_step();
    }
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 4);
    uint64_t prev_end = 0;
    for (size_t i = 0; i < 4; i++) {
        const rb_event *s = rb_find(&rb, PROF_EV_STEP, NULL, i);
        cr_assert_eq(s->ev.value, i);
        uint32_t want = PROF_STEP_SAMPLED | (i == 3 ? PROF_STEP_INCOMPLETE : 0);
        cr_assert_eq(s->ev.flags, want, "step %zu flags %u", i, s->ev.flags);
        cr_assert_eq(s->ev.start_ns, prev_end, "steps are back to back");
        prev_end = s->ev.start_ns + s->ev.dur_ns;
    }
    cr_assert_eq(rb_find(&rb, PROF_EV_STEP, NULL, 0)->ev.start_ns, 0, "first step at start");
    cr_assert_eq(rb_count(&rb, PROF_EV_MEMORY, "host.rss"), 4);
    cr_assert_gt(rb_find(&rb, PROF_EV_MEMORY, "host.rss", 0)->ev.value, 100000);
    readback_free(&rb);
}

Test(record_api, memory_counter_mark_values)
{
    prof_config c = cfg_for("samples.prof");
    start_ok(&c);
    char name[32];
    strcpy(name, "gpu.allocated");
    prof_memory(name, 123456789);
    strcpy(name, "scratch"); /* names are copied: the buffer may change */
    prof_counter("loss", 0.125);
    prof_counter("loss", -3.5);
    prof_mark("checkpoint");
    prof_memory(NULL, 1); /* ignored */
    prof_mark(NULL);
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    const rb_event *m = rb_find(&rb, PROF_EV_MEMORY, "gpu.allocated", 0);
    cr_assert_not_null(m);
    cr_assert_eq(m->ev.value, 123456789);
    cr_assert_eq(rb_count(&rb, PROF_EV_COUNTER, "loss"), 2);
    cr_assert_eq(rb_find(&rb, PROF_EV_COUNTER, "loss", 0)->ev.fvalue, 0.125);
    cr_assert_eq(rb_find(&rb, PROF_EV_COUNTER, "loss", 1)->ev.fvalue, -3.5);
    cr_assert_eq(rb_count(&rb, PROF_EV_MARK, "checkpoint"), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_MEMORY, "scratch"), 0);
    readback_free(&rb);
}

Test(record_api, thread_name)
{
    prof_config c = cfg_for("names.prof");
    start_ok(&c);
    prof_thread_name("trainer");
    prof_region_begin("a");
    prof_region_end();
    prof_flush();
    prof_thread_name("renamed");
    prof_region_begin("b");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    const rb_event *a = rb_find(&rb, PROF_EV_REGION, "a", 0);
    cr_assert_not_null(a);
    cr_assert_eq(rb_count(&rb, PROF_EV_THREAD, "trainer"), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_THREAD, "renamed"), 1);
    cr_assert_str_eq(rb.thread_names[a->ev.thread], "renamed");
    const rb_event *t = rb_find(&rb, PROF_EV_THREAD, "trainer", 0);
    cr_assert_eq(t->ev.value, (uint64_t)gettid(), "the OS tid goes with the name");
    readback_free(&rb);
}

static void scoped(int n)
{
    PROF_SCOPE("scoped");
    if (n > 0)
        scoped(n - 1);
}

Test(record_api, id_path_and_scope)
{
    prof_name a = prof_intern("by-id");
    cr_assert_neq(a, 0);
    cr_assert_eq(prof_intern("by-id"), a, "interning is idempotent");
    cr_assert_neq(prof_intern("other"), a);
    cr_assert_eq(prof_intern(NULL), 0);
    prof_config c = cfg_for("ids.prof");
    start_ok(&c);
    prof_region_begin_id(a, PROF_KIND_COMM);
    prof_region_end();
    prof_region_begin_id(0, PROF_KIND_COMPUTE); /* invalid id: not recorded */
    prof_region_end();
    scoped(2);
    {
        PROF_SCOPE("block");
        prof_region_begin("inside");
        prof_region_end();
    }
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    const rb_event *r = rb_find(&rb, PROF_EV_REGION, "by-id", 0);
    cr_assert_not_null(r);
    cr_assert_eq(r->ev.kind, PROF_KIND_COMM);
    cr_assert_eq(r->ev.name_id, a);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "scoped"), 3);
    for (uint32_t d = 0; d < 3; d++) {
        int found = 0;
        for (size_t i = 0; i < 3; i++)
            found |= rb_find(&rb, PROF_EV_REGION, "scoped", i)->ev.depth == d;
        cr_assert(found, "a scoped region at depth %u", d);
    }
    cr_assert_eq(rb_find(&rb, PROF_EV_REGION, "inside", 0)->ev.depth, 1);
    cr_assert_eq(rb_find(&rb, PROF_EV_REGION, "block", 0)->ev.depth, 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), 6);
    readback_free(&rb);
}

/* Enough names to grow the string index many times over: each keeps one
 * id, by name and by content, and reads back under its own name. */
Test(record_api, many_names_one_id_each)
{
    enum { N = 20000 };
    static prof_name ids[N];
    char name[32];
    prof_config c = cfg_for("names.prof");
    start_ok(&c);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        ids[i] = prof_intern(name);
        cr_assert(ids[i] != 0 && (i == 0 || ids[i] > ids[i - 1]), "a new id for %s", name);
        prof_region_begin(name); /* a copy: the by-name path must find the same id */
        prof_region_end();
    }
    for (int i = 0; i < N; i += 7) {
        snprintf(name, sizeof name, "name-%d", i);
        cr_assert_eq(prof_intern(name), ids[i], "%s keeps its id", name);
    }
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(c.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), N);
    for (int i = 0; i < N; i += 997) {
        snprintf(name, sizeof name, "name-%d", i);
        const rb_event *r = rb_find(&rb, PROF_EV_REGION, name, 0);
        cr_assert(r && r->ev.name_id == ids[i], "%s read back with its id", name);
    }
    readback_free(&rb);
}

/* An id that prof_intern never returned would name a string the file
 * never defines, and make the whole profile unreadable: it costs one
 * dropped event instead, and its end still matches. */
Test(record_api, unknown_id_is_one_dropped_event)
{
    prof_name known = prof_intern("known");
    prof_config c = cfg_for("badid.prof");
    start_ok(&c);
    prof_region_begin("outer");
    prof_region_begin_id(known + 1000000, PROF_KIND_COMPUTE);
    prof_region_begin_id(known, PROF_KIND_IO);
    prof_region_end();
    prof_region_end(); /* the unknown id's */
    prof_region_begin_id(UINT32_MAX, PROF_KIND_COMPUTE);
    prof_region_end();
    prof_region_end(); /* outer's */
    prof_region_begin("after");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    cr_assert(rb.st.clean, "%s", rb.st.detail);
    cr_assert_eq(rb.st.dropped_events, 2);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), 3);
    const rb_event *k = rb_find(&rb, PROF_EV_REGION, "known", 0);
    cr_assert_not_null(k);
    cr_assert_eq(k->ev.depth, 2, "the unknown id's region still counts for depth");
    cr_assert_eq(k->ev.kind, PROF_KIND_IO);
    cr_assert_eq(rb_find(&rb, PROF_EV_REGION, "outer", 0)->ev.depth, 0);
    cr_assert_eq(rb_find(&rb, PROF_EV_REGION, "after", 0)->ev.depth, 0, "ends still match");
    readback_free(&rb);
}

Test(record_api, depth_cap)
{
    prof_config c = cfg_for("deep.prof");
    start_ok(&c);
    for (int i = 0; i < 300; i++)
        prof_region_begin("deep");
    for (int i = 0; i < 300; i++)
        prof_region_end();
    prof_region_begin("after");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(c.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "deep"), 255);
    uint32_t max = 0;
    for (size_t i = 0; i < 255; i++) {
        uint32_t d = rb_find(&rb, PROF_EV_REGION, "deep", i)->ev.depth;
        max = d > max ? d : max;
    }
    cr_assert_eq(max, 254);
    cr_assert_eq(rb_find(&rb, PROF_EV_REGION, "after", 0)->ev.depth, 0, "ends still match");
    readback_free(&rb);
}

/* Records one region per step for n steps; returns the file read back. */
static void record_steps(const prof_config *c, int n, readback *rb)
{
    start_ok(c);
    for (int i = 0; i < n; i++) {
        prof_region_begin("step-work");
        prof_mark("tick");
        prof_counter("loss", (double)i);
        prof_region_end();
        prof_step();
    }
    cr_assert_eq(prof_stop(), 0);
    readback_load(c->output, rb);
}

/* Every step is there; exactly the sampled ones kept their events, and a
 * region/mark/counter lies in a sampled step. */
static void check_sampling(const readback *rb, int n, const int *want)
{
    cr_assert_eq(rb_count(rb, PROF_EV_STEP, NULL), (size_t)n + 1);
    cr_assert_eq(rb_count(rb, PROF_EV_MEMORY, "host.rss"), (size_t)n + 1);
    size_t kept = 0;
    for (int i = 0; i < n; i++) {
        const rb_event *s = rb_find(rb, PROF_EV_STEP, NULL, (size_t)i);
        cr_assert_eq(s->ev.value, (uint64_t)i);
        int sampled = (s->ev.flags & PROF_STEP_SAMPLED) != 0;
        cr_assert_eq(sampled, want[i], "step %d sampled %d", i, sampled);
        kept += (size_t)sampled;
        for (size_t j = 0; j < rb->n; j++) {
            const prof_event *e = &rb->ev[j].ev;
            if (e->type != PROF_EV_REGION && e->type != PROF_EV_MARK)
                continue;
            if (e->start_ns >= s->ev.start_ns && e->start_ns < s->ev.start_ns + s->ev.dur_ns)
                cr_assert(sampled, "event in unsampled step %d", i);
        }
    }
    cr_assert_eq(rb_count(rb, PROF_EV_REGION, "step-work"), kept);
    cr_assert_eq(rb_count(rb, PROF_EV_MARK, "tick"), kept);
    cr_assert_eq(rb_count(rb, PROF_EV_COUNTER, "loss"), kept);
}

Test(record_api, sample_rate_keeps_half)
{
    prof_config c = cfg_for("rate.prof");
    c.sample_rate = 0.5;
    readback rb;
    record_steps(&c, 10, &rb);
    int want[10] = { 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 };
    check_sampling(&rb, 10, want);
    readback_free(&rb);
}

Test(record_api, schedule_wait_warmup_active_repeat)
{
    prof_config c = cfg_for("sched.prof");
    c.wait = 1;
    c.warmup = 1;
    c.active = 2;
    c.repeat = 2;
    readback rb;
    record_steps(&c, 10, &rb);
    int want[10] = { 0, 0, 1, 1, 0, 0, 1, 1, 0, 0 };
    check_sampling(&rb, 10, want);
    cJSON *m = meta_of(&rb);
    cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "config"), "schedule");
    cr_assert(cJSON_IsObject(s));
    cr_assert_eq(cJSON_GetObjectItem(s, "active")->valuedouble, 2);
    cJSON_Delete(m);
    readback_free(&rb);
}

Test(record_api, schedule_from_environment)
{
    setenv("PROF_SCHEDULE", "0:1:1:0", 1);
    setenv("PROF_SAMPLE_RATE", "1", 1);
    prof_config c = cfg_for("envsched.prof");
    readback rb;
    record_steps(&c, 6, &rb);
    int want[6] = { 0, 1, 0, 1, 0, 1 };
    check_sampling(&rb, 6, want);
    readback_free(&rb);
}

/* Flushes and reads path back until it holds at least want "host.rss"
 * samples: the writer's background sampling is seen happening, whatever
 * the machine's load. The deadline is only a safety net. */
static void wait_for_rss_samples(const char *path, size_t want)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        prof_flush();
        readback rb;
        readback_load(path, &rb);
        size_t n = rb_count(&rb, PROF_EV_MEMORY, "host.rss");
        readback_free(&rb);
        if (n >= want)
            return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        cr_assert_lt(now.tv_sec - t0.tv_sec, 60, "only %zu background samples in 60 s", n);
        usleep(2000);
    }
}

Test(record_api, environment_output_and_metadata)
{
    const char *path = test_path("env.prof");
    setenv("PROF_OUTPUT", path, 1);
    setenv("PROF_TAGS", "model=gpt2,batch_size=32", 1);
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("LOCAL_RANK", "1", 1);
    setenv("PROF_BUFFER_MB", "16", 1);
    setenv("PROF_FLUSH_MS", "250", 1);
    setenv("PROF_MEMORY_INTERVAL_MS", "5", 1);
    setenv("PROF_CUDA", "1", 1);
    start_ok(NULL);
    wait_for_rss_samples(path, 2);
    cr_assert_eq(prof_stop(), 0);

    readback rb;
    readback_load(path, &rb);
    cJSON *m = meta_of(&rb);
    cr_assert_str_eq(cJSON_GetObjectItem(m, "format")->valuestring, "prof");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "libprof_version")->valuestring,
                     PROF_VERSION_STRING);
    cJSON *clock = cJSON_GetObjectItem(m, "clock");
    const char *src = cJSON_GetObjectItem(clock, "source")->valuestring;
    cr_assert(!strcmp(src, "tsc") || !strcmp(src, "monotonic"));
    cr_assert_gt(cJSON_GetObjectItem(clock, "origin_epoch_ns")->valuedouble, 1.6e18);
    cr_assert_eq(cJSON_GetObjectItem(m, "pid")->valuedouble, (double)getpid());
    cr_assert(cJSON_GetArraySize(cJSON_GetObjectItem(m, "argv")) >= 1);
    cr_assert_eq(cJSON_GetObjectItem(m, "rank")->valuedouble, 3);
    cr_assert_eq(cJSON_GetObjectItem(m, "world_size")->valuedouble, 8);
    cr_assert_eq(cJSON_GetObjectItem(m, "local_rank")->valuedouble, 1);
    cr_assert(cJSON_IsArray(cJSON_GetObjectItem(m, "devices")));
    cJSON *tags = cJSON_GetObjectItem(m, "tags");
    cr_assert_str_eq(cJSON_GetObjectItem(tags, "model")->valuestring, "gpt2");
    cr_assert_str_eq(cJSON_GetObjectItem(tags, "batch_size")->valuestring, "32");
    cJSON *conf = cJSON_GetObjectItem(m, "config");
    cr_assert_str_eq(cJSON_GetObjectItem(conf, "output")->valuestring, path);
    cr_assert_eq(cJSON_GetObjectItem(conf, "buffer_bytes")->valuedouble, 16.0 * 1048576);
    cr_assert_eq(cJSON_GetObjectItem(conf, "flush_interval_ms")->valuedouble, 250);
    cr_assert_eq(cJSON_GetObjectItem(conf, "memory_interval_ms")->valuedouble, 5);
    cr_assert_eq(cJSON_GetObjectItem(conf, "sample_rate")->valuedouble, 1);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(conf, "schedule")));
    cr_assert_eq(cJSON_GetObjectItem(conf, "cuda")->valuedouble, 1);
    cJSON *cuda = cJSON_GetObjectItem(m, "cuda");
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(cuda, "active")), "no fake GPU capture");
    cr_assert_eq(rb_count(&rb, PROF_EV_GPU_KERNEL, NULL), 0);
    /* background sampling: a few samples beyond the step boundary's one */
    cr_assert_geq(rb_count(&rb, PROF_EV_MEMORY, "host.rss"), 3);
    cJSON_Delete(m);
    readback_free(&rb);
}

Test(record_api, prof_rank_wins_over_rank)
{
    const char *path = test_path("rank.prof");
    setenv("PROF_OUTPUT", path, 1);
    setenv("RANK", "3", 1);
    setenv("PROF_RANK", "5", 1);
    start_ok(NULL);
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(path, &rb);
    cJSON *m = meta_of(&rb);
    cr_assert_eq(cJSON_GetObjectItem(m, "rank")->valuedouble, 5);
    cJSON_Delete(m);
    readback_free(&rb);
}

Test(record_api, config_fields_override_environment)
{
    setenv("PROF_OUTPUT", test_path("from-env.prof"), 1);
    setenv("PROF_SAMPLE_RATE", "0.25", 1);
    prof_config c = cfg_for("from-cfg.prof");
    c.sample_rate = 1;
    start_ok(&c);
    cr_assert_eq(prof_stop(), 0);
    cr_assert(file_exists(c.output));
    cr_assert(!file_exists(test_path("from-env.prof")));
    readback rb;
    readback_load(c.output, &rb);
    cJSON *m = meta_of(&rb);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "config"), "sample_rate")->valuedouble,
                 1);
    cJSON_Delete(m);
    readback_free(&rb);
}

Test(record_api, enable_zero_records_nothing)
{
    const char *path = test_path("disabled.prof");
    setenv("PROF_OUTPUT", path, 1);
    setenv("PROF_ENABLE", "0", 1);
    cr_assert_eq(prof_start(NULL), -ECANCELED);
    prof_region_begin("x");
    prof_region_end();
    prof_step();
    prof_memory("m", 1);
    prof_counter("c", 1);
    prof_mark("k");
    prof_thread_name("t");
    prof_flush();
    cr_assert_eq(prof_stop(), 0);
    cr_assert(!file_exists(path), "no file when disabled");
    prof_config c = cfg_for("disabled2.prof");
    cr_assert_eq(prof_start(&c), -ECANCELED, "also with an explicit config");
    cr_assert(!file_exists(c.output));
}

static void expect_einval(const char *var, const char *value)
{
    clean_env();
    const char *path = test_path("bad.prof");
    setenv("PROF_OUTPUT", path, 1);
    setenv(var, value, 1);
    cr_assert_eq(prof_start(NULL), -EINVAL, "%s=%s", var, value);
    cr_assert(!file_exists(path), "%s=%s created a file", var, value);
}

Test(record_api, bad_values_are_einval)
{
    expect_einval("PROF_SCHEDULE", "1:2");
    expect_einval("PROF_SCHEDULE", "1:2:3:4:5");
    expect_einval("PROF_SCHEDULE", "a:b:c:d");
    expect_einval("PROF_SCHEDULE", "1:-1:2:0");
    expect_einval("PROF_SAMPLE_RATE", "0");
    expect_einval("PROF_SAMPLE_RATE", "1.5");
    expect_einval("PROF_SAMPLE_RATE", "half");
    expect_einval("PROF_BUFFER_MB", "lots");
    expect_einval("PROF_BUFFER_MB", "0");
    expect_einval("PROF_FLUSH_MS", "-5");
    expect_einval("PROF_MEMORY_INTERVAL_MS", "1x");
    expect_einval("PROF_ENABLE", "maybe");
    expect_einval("PROF_CUDA", "2");
    expect_einval("PROF_RANK", "first");
    expect_einval("PROF_TAGS", "=v");
    expect_einval("PROF_TAGS", "novalue");
    clean_env();
    prof_config c = cfg_for("badcfg.prof");
    c.sample_rate = 2;
    cr_assert_eq(prof_start(&c), -EINVAL);
    c.sample_rate = NAN;
    cr_assert_eq(prof_start(&c), -EINVAL);
    c.sample_rate = -0.5;
    cr_assert_eq(prof_start(&c), -EINVAL);
    cr_assert(!file_exists(c.output));
    /* after all that, a good start works */
    c.sample_rate = 0;
    start_ok(&c);
    cr_assert_eq(prof_stop(), 0);
}

Test(record_api, start_twice_stop_idempotent)
{
    cr_assert_eq(prof_stop(), 0, "stop without start");
    prof_config c = cfg_for("twice.prof");
    start_ok(&c);
    prof_config d = cfg_for("second.prof");
    cr_assert_eq(prof_start(&d), -EALREADY);
    cr_assert(!file_exists(d.output));
    prof_region_begin("r");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(c.output, &rb);
    cr_assert(rb.st.clean);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "r"), 1);
    readback_free(&rb);
}

Test(record_api, restart_keeps_ids)
{
    prof_name id = prof_intern("persistent");
    prof_config c = cfg_for("one.prof");
    start_ok(&c);
    prof_region_begin_id(id, PROF_KIND_COMPUTE);
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    prof_config d = cfg_for("two.prof");
    start_ok(&d);
    prof_region_begin_id(id, PROF_KIND_COMPUTE);
    prof_region_end();
    prof_region_begin("fresh");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(d.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "persistent"), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "fresh"), 1);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 1, "a new session restarts steps");
    cr_assert_eq(rb_find(&rb, PROF_EV_STEP, NULL, 0)->ev.value, 0);
    readback_free(&rb);
}

/* "name=value" of every class attribute of a file, in file order. */
typedef struct classes {
    char v[8][96];
    size_t n;
} classes;

static void keep_class(const prof_event *ev, void *ctx)
{
    classes *c = ctx;
    if (ev->type != PROF_EV_ATTR || ev->subkind != PROF_ATTR_CLASS)
        return;
    cr_assert_lt(c->n, 8u);
    snprintf(c->v[c->n++], sizeof c->v[0], "%s=%s", ev->name, prof_event_attr_value(ev));
}

static classes classes_of(const char *path)
{
    classes c = { .n = 0 };
    prof_read_status st;
    cr_assert_eq(readback_scan(path, keep_class, &c, &st, NULL), 0);
    cr_assert(st.clean, "%s", st.detail);
    return c;
}

/* Classes set before start, during a session, repeated and changed: each
 * file carries every class known when it was recorded, a repeat adds
 * nothing, and a change comes after what it replaces. */
Test(record_api, name_classes)
{
    prof_name_class("cls.model", "torch.nn.Linear");
    prof_config c = cfg_for("cls1.prof");
    start_ok(&c);
    prof_name_class("cls.opt", "torch.optim.Adam");
    prof_name_class("cls.opt", "torch.optim.Adam");
    prof_name_class(NULL, "x");
    prof_name_class("x", NULL);
    prof_region_begin("cls.model");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    classes one = classes_of(c.output);
    cr_assert_eq(one.n, 2);
    cr_assert_str_eq(one.v[0], "cls.model=torch.nn.Linear");
    cr_assert_str_eq(one.v[1], "cls.opt=torch.optim.Adam");

    prof_config d = cfg_for("cls2.prof");
    start_ok(&d);
    prof_name_class("cls.model", "torch.nn.Conv2d");
    cr_assert_eq(prof_stop(), 0);
    classes two = classes_of(d.output);
    cr_assert_eq(two.n, 3);
    cr_assert_str_eq(two.v[0], "cls.model=torch.nn.Linear");
    cr_assert_str_eq(two.v[1], "cls.opt=torch.optim.Adam");
    cr_assert_str_eq(two.v[2], "cls.model=torch.nn.Conv2d");
}

Test(record_api, flush_makes_data_readable)
{
    prof_config c = cfg_for("flush.prof");
    c.flush_interval_ms = 60000; /* only the explicit flush writes */
    start_ok(&c);
    for (int i = 0; i < 100; i++) {
        prof_region_begin("before-flush");
        prof_region_end();
    }
    prof_flush();
    readback rb;
    readback_load(c.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "before-flush"), 100);
    cr_assert(!rb.st.clean, "no footer while recording");
    cr_assert_gt(rb.st.blocks, 0);
    readback_free(&rb);
    prof_region_begin("after-flush");
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
    readback_load(c.output, &rb);
    cr_assert(rb.st.clean);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "before-flush"), 100);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, "after-flush"), 1);
    readback_free(&rb);
}

Test(record_api, unwritable_path_is_errno)
{
    prof_config c = { 0 };
    c.output = "/nonexistent-prof-dir/x.prof";
    cr_assert_eq(prof_start(&c), -ENOENT);
    c.output = test_path(""); /* the directory itself */
    cr_assert_eq(prof_start(&c), -EISDIR);
    prof_region_begin("x"); /* not recording: nothing happens */
    prof_region_end();
    cr_assert_eq(prof_stop(), 0);
}

Test(record_api, calls_before_start_do_nothing)
{
    prof_region_begin("x");
    prof_region_begin_id(prof_intern("y"), PROF_KIND_IO);
    prof_region_end();
    prof_region_end();
    prof_step();
    prof_memory("m", 1);
    prof_counter("c", 2);
    prof_mark("k");
    prof_thread_name("t");
    prof_flush();
    {
        PROF_SCOPE("s");
    }
    /* a start afterwards sees none of it */
    prof_config c = cfg_for("late.prof");
    start_ok(&c);
    prof_region_end(); /* the stack was not touched before start */
    cr_assert_eq(prof_stop(), 0);
    readback rb;
    readback_load(c.output, &rb);
    cr_assert_eq(rb_count(&rb, PROF_EV_REGION, NULL), 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_MARK, NULL), 0);
    cr_assert_eq(rb_count(&rb, PROF_EV_STEP, NULL), 1);
    readback_free(&rb);
}
