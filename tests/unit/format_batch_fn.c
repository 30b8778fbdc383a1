/* format_batch_fn.c - prof_reader_set_batch_fn: the function sees, in
 * order, exactly the events the reader hands out when reading ends with
 * 0, on the reader's thread (files) or the caller's (memory, and
 * a tuning of one thread); what it saw when reading fails at damage begins with
 * what was handed out; closing halfway stops it; it cannot be set once
 * reading has begun. Built also under ThreadSanitizer (TSAN_UNITS): the
 * function runs on the producing thread and the test reads what it kept
 * after reading ends, as a tool would. */
#include "criterion_tsan.h"
#include "format/format.h"
#include "format_util.h"
#include "synth.h"

#define THREADS 3
#define STEPS 300

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_batch_fn, .fini = teardown);

/* What the batch function saw. It runs on the reader's thread: no
 * assertions there, a flag for memory that ran out. */
typedef struct seen {
    fu_event *v;
    size_t n, cap;
    int nomem;
} seen;

static void keep(void *arg, const prof_event *ev, size_t n)
{
    seen *s = arg;
    for (size_t i = 0; i < n && !s->nomem; i++) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 256;
            fu_event *v = realloc(s->v, cap * sizeof *v);
            if (!v) {
                s->nomem = 1;
                return;
            }
            s->v = v;
            s->cap = cap;
        }
        s->v[s->n].ev = ev[i];
        s->v[s->n].ev.name = NULL;
        if (!(s->v[s->n].name = strdup(ev[i].name ? ev[i].name : ""))) {
            s->nomem = 1;
            return;
        }
        s->n++;
    }
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
}

static void write_profile(const char *path, int crashed)
{
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 61);
    synth_workers(s, THREADS);
    synth_class(s, "forward", "torch.nn.Module");
    for (uint64_t step = 0; step < STEPS; step++) {
        uint64_t t0 = step * 10000;
        for (uint32_t t = 0; t < THREADS; t++) {
            for (uint32_t i = 0; i < 6; i++)
                synth_region(s, t, i % 2 ? "forward" : "backward", PROF_KIND_COMPUTE, 1,
                             t0 + 100 * i + t, 90);
            synth_region(s, t, "step_body", PROF_KIND_COMPUTE, 0, t0, 9000);
        }
        synth_gpu_kernel(s, "gemm", 0, 7, step, t0 + 50, 700);
        synth_memory(s, 0, "host.rss", t0 + 9500, 1000000 + 64 * step);
        synth_step(s, 0, step, PROF_STEP_SAMPLED, t0, 9900);
    }
    prof_error err;
    int rc = crashed ? synth_abandon(s, &err) : synth_close(s, &err);
    cr_assert_eq(rc, 0, "writing %s: %s", path, err.message);
}

/* How the readers of a test read: the default, or one thread. */
static prof_tuning tuning;

/* The events handed out, as a list, and those the function saw, from
 * the file at path (or its bytes in memory, from_memory). */
static void read_both(const char *path, int from_memory, fu_list *out, seen *saw)
{
    prof_reader *r = NULL;
    prof_error err;
    size_t size = 0;
    uint8_t *data = NULL;
    memset(saw, 0, sizeof *saw);
    if (from_memory) {
        data = fu_load(path, &size);
        cr_assert_eq(prof_reader_open_memory(data, size, &r, &err), PROF_OK, "%s", err.message);
    } else {
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        pf_reader_tune(r, &tuning);
    }
    cr_assert_eq(prof_reader_set_batch_fn(r, keep, saw), 0);
    fu_drain_batch(r, out); /* closes r */
    free(data);
    cr_assert_not(saw->nomem);
}

static void assert_saw(const seen *saw, const fu_list *out, int exactly, const char *what)
{
    fu_list as_list = { .v = saw->v, .n = saw->n };
    if (exactly)
        fu_assert_same(&as_list, out, what);
    else
        fu_assert_prefix(out, &as_list, what);
}

static void check_file(const char *path, int exactly)
{
    for (int mem = 0; mem < 2; mem++) {
        fu_list out;
        seen saw;
        read_both(path, mem, &out, &saw);
        cr_assert_gt(out.n, 0u);
        assert_saw(&saw, &out, exactly && out.rc == 0, mem ? "memory" : "file");
        fu_free(&out);
        seen_free(&saw);
    }
}

Test(format_batch_fn, sees_what_is_handed_out)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    check_file(path, 1);
}

Test(format_batch_fn, one_thread)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    tuning.threads = 1;
    check_file(path, 1);
}

Test(format_batch_fn, crashed_run)
{
    const char *path = fu_path("crashed.prof");
    write_profile(path, 1);
    check_file(path, 1);
}

/* Cut inside the blocks of a file that promised a footer: reading fails,
 * what was handed out is what the function saw first. */
Test(format_batch_fn, damaged_file)
{
    const char *path = fu_path("whole.prof"), *cut = fu_path("cut.prof");
    write_profile(path, 0);
    size_t size;
    uint8_t *data = fu_load(path, &size);
    for (int i = 1; i < 8; i++) {
        uint8_t *copy = malloc(size);
        cr_assert_not_null(copy);
        memcpy(copy, data, size);
        copy[size / 8 * (size_t)i] ^= 0x5a; /* a payload or header byte: its checksum fails */
        fu_store(cut, copy, size);
        free(copy);
        fu_list out;
        seen saw;
        read_both(cut, 0, &out, &saw);
        cr_assert_eq(out.rc, -1, "damage at %zu went unseen", size / 8 * (size_t)i);
        assert_saw(&saw, &out, 0, "damaged");
        fu_free(&out);
        seen_free(&saw);
    }
    free(data);
}

Test(format_batch_fn, refused_once_reading_began)
{
    const char *path = fu_path("clean.prof");
    write_profile(path, 0);
    prof_reader *r = NULL;
    prof_error err;
    prof_event ev;
    seen saw = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(prof_reader_next(r, &ev), 1);
    cr_assert_eq(prof_reader_set_batch_fn(r, keep, &saw), -1);
    while (prof_reader_next(r, &ev) == 1)
        ;
    prof_reader_close(r);
    cr_assert_eq(saw.n, 0u, "a function set too late was called");
}

/* Closing before the end, wherever the caller is, stops and joins the
 * thread the function runs on; what it saw by then is the file's first
 * events. */
Test(format_batch_fn, closing_halfway_stops_the_function)
{
    const char *path = fu_path("halfway.prof");
    write_profile(path, 0);
    fu_list all;
    prof_error err;
    cr_assert_eq(fu_read_path(path, &all, &err), PROF_OK, "%s", err.message);
    for (size_t stop = 0; stop < 5000; stop = stop * 3 + 1) {
        prof_reader *r;
        prof_event ev;
        seen saw = { 0 };
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
        cr_assert_eq(prof_reader_set_batch_fn(r, keep, &saw), 0);
        size_t n = 0;
        while (n < stop && prof_reader_next(r, &ev) == 1)
            n++;
        cr_assert_eq(n, stop, "the profile ends before event %zu", stop);
        prof_reader_close(r);
        cr_assert_not(saw.nomem);
        fu_list as_list = { .v = saw.v, .n = saw.n };
        fu_assert_prefix(&as_list, &all, "closed halfway");
        seen_free(&saw);
    }
    fu_free(&all);
}

/* A tool whose own work failed halfway abandons reading: the function's
 * thread is stopped at once, the function is not called again (what it
 * writes may be freed), and reading ends with -1. */
Test(format_batch_fn, abandoning_stops_the_function)
{
    const char *path = fu_path("abandoned.prof");
    write_profile(path, 0);
    prof_reader *r;
    prof_error err;
    prof_event ev;
    seen saw = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(prof_reader_set_batch_fn(r, keep, &saw), 0);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(prof_reader_next(r, &ev), 1);
    pf_reader_abandon(r);
    size_t n = saw.n;
    cr_assert_eq(prof_reader_next(r, &ev), -1);
    cr_assert_eq(prof_reader_error(r)->code, PROF_ERR_INVALID);
    prof_reader_close(r);
    cr_assert_eq(saw.n, n, "the function was called after reading was abandoned");
    seen_free(&saw);
}
