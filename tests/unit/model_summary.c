/* model_summary.c - profile_summary_read, the census behind `prof info`:
 * on testdata/demo.prof its counts, span, threads and status agree with an
 * independent pass of the reader and with what make_demo wrote; a cut copy
 * is summarised up to its last intact block; damage in a clean file and
 * unreadable paths are errors with messages. Run from the repository root. */
#include "format/format.h"
#include "format_util.h"
#include "model/summary.h"
#include "synth.h"

#define DEMO "testdata/demo.prof"

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_summary, .fini = teardown);

/* What the summary should say, computed from the event list. */
typedef struct census {
    uint64_t counts[PROF_EV_THREAD + 1];
    uint64_t events, first, last, gpu;
} census;

static census census_of(const fu_list *l)
{
    census c = { .first = UINT64_MAX };
    for (size_t i = 0; i < l->n; i++) {
        const prof_event *ev = &l->v[i].ev;
        if (ev->type == PROF_EV_THREAD)
            continue;
        c.counts[ev->type]++;
        c.events++;
        if (ev->start_ns < c.first)
            c.first = ev->start_ns;
        if (ev->start_ns + ev->dur_ns > c.last)
            c.last = ev->start_ns + ev->dur_ns;
        if (ev->thread == PROF_THREAD_GPU)
            c.gpu++;
    }
    if (c.first == UINT64_MAX)
        c.first = 0;
    return c;
}

static uint64_t thread_events(const fu_list *l, uint32_t thread)
{
    uint64_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].ev.type != PROF_EV_THREAD && l->v[i].ev.thread == thread;
    return n;
}

static void check_against_reader(const profile_summary *s, const fu_list *l)
{
    census c = census_of(l);
    for (int t = 0; t <= PROF_EV_THREAD; t++)
        cr_assert_eq(s->counts[t], c.counts[t], "count of %s: %llu, want %llu",
                     prof_event_type_name((prof_event_type)t),
                     (unsigned long long)s->counts[t], (unsigned long long)c.counts[t]);
    cr_assert_eq(s->events, c.events);
    cr_assert_eq(s->first_ns, c.first);
    cr_assert_eq(s->last_ns, c.last);
    cr_assert_eq(s->gpu_events, c.gpu);
    cr_assert_eq(s->status.events, l->st.events);
    cr_assert_eq(s->status.blocks, l->st.blocks);
    cr_assert_eq(s->status.clean, l->st.clean);
    cr_assert_eq(s->status.truncated, l->st.truncated);
    cr_assert_eq(s->status.bytes_lost, l->st.bytes_lost);
    cr_assert_str_eq(s->status.detail, l->st.detail);
    uint64_t sum = s->gpu_events;
    for (uint32_t i = 0; i < s->nthreads; i++) {
        cr_assert_eq(s->threads[i].events, thread_events(l, s->threads[i].index),
                     "events of thread %u", s->threads[i].index);
        sum += s->threads[i].events;
    }
    cr_assert_eq(sum, s->events, "threads and GPU account for every event");
}

Test(model_summary, demo_profile)
{
    profile_summary s;
    fu_list l;
    prof_error err = { 0 };
    prof_err e = profile_summary_read(DEMO, NULL, &s, &err);
    cr_assert_eq(e, PROF_OK, "%s: %s (run from the repository root)", DEMO, err.message);
    cr_assert_eq(fu_read_path(DEMO, &l, &err), PROF_OK);
    check_against_reader(&s, &l);

    /* What make_demo wrote: 300 steps on thread 0, a loss counter per
     * step, one checkpoint mark, two memory series sampled 301 times, two
     * named threads, no GPU activity, nothing dropped, a clean close. */
    cr_assert_eq(s.major, 1u);
    cr_assert_eq(s.minor, 0u);
    cr_assert_eq(s.counts[PROF_EV_STEP], 300u);
    cr_assert_eq(s.counts[PROF_EV_COUNTER], 300u);
    cr_assert_eq(s.counts[PROF_EV_MARK], 1u);
    cr_assert_eq(s.counts[PROF_EV_MEMORY], 602u);
    cr_assert_eq(s.counts[PROF_EV_THREAD], 0u, "thread definitions are not counted");
    cr_assert_eq(s.counts[PROF_EV_GPU_KERNEL], 0u);
    cr_assert_eq(s.gpu_events, 0u);
    /* Per step on thread 0: data (2), forward (embedding, 4 layers of 3,
     * loss, forward: 15), backward (1), optimizer (3): 21, and a loss.item
     * sync region every tenth step; 4 on the loader thread. */
    cr_assert_eq(s.counts[PROF_EV_REGION], 300u * (21 + 4) + 30u);
    cr_assert_eq(s.nthreads, 2u);
    cr_assert_eq(s.threads[0].index, 0u);
    cr_assert_str_eq(s.threads[0].name, "train");
    cr_assert_eq(s.threads[0].os_tid, 4242u);
    cr_assert_eq(s.threads[1].index, 1u);
    cr_assert_str_eq(s.threads[1].name, "dataloader");
    cr_assert_eq(s.threads[1].os_tid, 4251u);
    cr_assert_eq(s.threads[1].events, 1200u);
    cr_assert(s.status.clean);
    cr_assert_eq(s.status.truncated, 0);
    cr_assert_eq(s.status.dropped_events, 0u);
    cr_assert_eq(s.first_ns, 5000000u, "the first memory sample, at 5 ms");
    cr_assert_gt(s.last_ns, 300u * 80000000u, "300 steps of at least 80 ms");
    cr_assert_str_eq(s.metadata, l.meta);
    cr_assert(strstr(s.metadata, "\"demo-host\"") != NULL);

    size_t size;
    free(fu_load(DEMO, &size));
    cr_assert_eq(s.status.file_size, (uint64_t)size);
    cr_assert_eq(s.status.bytes_read, (uint64_t)size);
    profile_summary_free(&s);
    cr_assert_null(s.threads, "free leaves an empty summary");
    profile_summary_free(&s); /* and freeing it again is harmless */
    fu_free(&l);
}

/* A copy of demo.prof cut in the middle: summarised up to the last intact
 * block, with what was lost. */
Test(model_summary, cut_demo_profile)
{
    size_t size;
    uint8_t *bytes = fu_load(DEMO, &size);
    const size_t cuts[] = { size / 2, size - 1, size - PF_TRAILER_LEN, size / 3 + 7 };
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        const char *path = fu_path("cut.prof");
        fu_store(path, bytes, cuts[k]);
        profile_summary s;
        fu_list l;
        prof_error err = { 0 };
        cr_assert_eq(profile_summary_read(path, NULL, &s, &err), PROF_OK, "cut at %zu: %s", cuts[k],
                     err.message);
        cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK);
        check_against_reader(&s, &l);
        cr_assert_eq(s.status.clean, 0, "cut at %zu", cuts[k]);
        cr_assert_eq(s.status.file_size, (uint64_t)cuts[k]);
        if (cuts[k] < size - PF_TRAILER_LEN) {
            cr_assert(s.status.truncated, "cut at %zu", cuts[k]);
            cr_assert_lt(s.counts[PROF_EV_STEP], 300u, "cut at %zu kept every step", cuts[k]);
            cr_assert_gt(s.status.bytes_lost, 0u);
            cr_assert_neq(s.status.detail[0], '\0');
        } else {
            cr_assert_eq(s.status.truncated, 0, "only the trailer is gone");
            cr_assert_eq(s.counts[PROF_EV_STEP], 300u);
        }
        profile_summary_free(&s);
        fu_free(&l);
    }
    free(bytes);
}

Test(model_summary, errors)
{
    profile_summary s;
    prof_error err = { 0 };
    cr_assert_eq(profile_summary_read(fu_path("none.prof"), NULL, &s, &err), PROF_ERR_IO);
    cr_assert_str_eq(err.message, "cannot open: No such file or directory");
    cr_assert_null(s.metadata);
    profile_summary_free(&s);

    /* Damage in a block of a clean file: an error, with the reader's
     * message, and what was counted before it can still be freed. */
    size_t size;
    uint8_t *bytes = fu_load(DEMO, &size);
    bytes[size / 2] ^= 0x10;
    const char *path = fu_path("bad.prof");
    fu_store(path, bytes, size);
    free(bytes);
    cr_assert_eq(profile_summary_read(path, NULL, &s, &err), PROF_ERR_CORRUPT);
    cr_assert(strncmp(err.message, "block ", 6) == 0, "message: %s", err.message);
    cr_assert(strstr(err.message, "checksum mismatch") != NULL, "message: %s", err.message);
    profile_summary_free(&s);
    cr_assert_eq(profile_summary_read(path, NULL, &s, NULL), PROF_ERR_CORRUPT, "err may be NULL");
    profile_summary_free(&s);
}

/* GPU activity, threads that appear without a definition, renamed
 * threads, dropped events and an empty profile. */
Test(model_summary, gpu_and_threads)
{
    const char *path = fu_path("gpu.prof");
    synth *sy = synth_open(path, NULL);
    cr_assert_not_null(sy);
    synth_thread(sy, 2, 22, "first-name");
    synth_region(sy, 5, "undefined-thread", PROF_KIND_COMPUTE, 0, 100, 10);
    synth_region(sy, 2, "a", PROF_KIND_COMPUTE, 0, 50, 10);
    synth_gpu_kernel(sy, "k", 0, 1, 1, 60, 1000);
    synth_gpu_memset(sy, 0, 1, 2, 8, 10, 1);
    synth_dropped(sy, 2, 5, 70);
    synth_thread(sy, 2, 23, "second-name");
    prof_error err = { 0 };
    cr_assert_eq(synth_close(sy, &err), 0, "%s", err.message);

    profile_summary s;
    fu_list l;
    cr_assert_eq(profile_summary_read(path, NULL, &s, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK);
    check_against_reader(&s, &l);
    cr_assert_eq(s.gpu_events, 2u);
    cr_assert_eq(s.first_ns, 10u);
    cr_assert_eq(s.last_ns, 1060u);
    cr_assert_eq(s.status.dropped_events, 5u);
    cr_assert_eq(s.nthreads, 2u);
    summary_thread *t2 = s.threads[0].index == 2 ? &s.threads[0] : &s.threads[1];
    summary_thread *t5 = s.threads[0].index == 5 ? &s.threads[0] : &s.threads[1];
    cr_assert_eq(t2->index, 2u);
    cr_assert_eq(t5->index, 5u);
    cr_assert_str_eq(t2->name, "second-name", "the latest name wins");
    cr_assert_eq(t2->os_tid, 23u);
    cr_assert_eq(t2->events, 2u);
    cr_assert_null(t5->name, "a thread never defined has no name");
    cr_assert_eq(t5->events, 1u);
    profile_summary_free(&s);
    fu_free(&l);

    sy = synth_open(path, "{}");
    cr_assert_eq(synth_close(sy, &err), 0);
    cr_assert_eq(profile_summary_read(path, NULL, &s, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(s.events, 0u);
    cr_assert_eq(s.first_ns, 0u);
    cr_assert_eq(s.last_ns, 0u);
    cr_assert_eq(s.nthreads, 0u);
    cr_assert(s.status.clean);
    cr_assert_str_eq(s.metadata, "{}");
    profile_summary_free(&s);
}
