/* format_roundtrip.c - every record kind written through pf_block and
 * pf_writer comes back unchanged through the public reader, from a file
 * and from memory: extreme values, times that go backwards, long and
 * binary names, thread (re)definitions, extension records, many blocks and
 * threads, the crash path's raw blocks. Also the codec's small pieces:
 * varints and zigzag at their edges, the CRC-32C check value, prof_strerror
 * and the name helpers. */
#include <fcntl.h>
#include <float.h>
#include <math.h>

#include "format/format.h"
#include "format/varint.h"
#include "format_util.h"
#include "synth.h"
#include "util/crc32c.h"

/* The reader refuses string ids from 1 << 22 and thread indexes from
 * 1 << 20 as corrupt (reader.c); the largest accepted ones must pass. */
#define READER_STRING_ID_MAX ((1u << 22) - 1)
#define READER_THREAD_MAX ((1u << 20) - 1)

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(format_roundtrip, .fini = teardown);

static const char meta_text[] =
    "{\"format\":\"prof\",\"host\":\"h\\u00e9\\t\",\"pid\":7,"
    "\"argv\":[\"a b\",\"\\\"q\\\"\"],\"tags\":{\"k\":\"v\"},\"n\":1.5e300}";

/* The expected event sequence, built alongside the writes. */
typedef struct expect {
    fu_list l;
} expect;

static void want(expect *x, prof_event ev, const char *name)
{
    fu_push(&x->l, &ev, name);
}

#define PUT_OK(call) cr_assert_eq((call), PROF_OK, "%s failed", #call)

static pf_writer *open_writer(const char *path, const char *meta)
{
    pf_writer *w = NULL;
    prof_error err = { 0 };
    prof_err e = pf_writer_open(&w, path, meta, 3, &err);
    cr_assert_eq(e, PROF_OK, "pf_writer_open: %s", err.message);
    cr_assert_not_null(w);
    return w;
}

static void write_block(pf_writer *w, pf_block *b)
{
    prof_error err = { 0 };
    prof_err e = pf_writer_write_block(w, b, &err);
    cr_assert_eq(e, PROF_OK, "pf_writer_write_block: %s", err.message);
    cr_assert_eq(b->count, 0u, "block not reset after writing");
}

static void close_writer(pf_writer *w)
{
    prof_error err = { 0 };
    prof_err e = pf_writer_close(w, &err);
    cr_assert_eq(e, PROF_OK, "pf_writer_close: %s", err.message);
}

static void define_string(pf_writer *w, uint32_t id, const char *s)
{
    PUT_OK(pf_writer_define_string(w, id, s, strlen(s)));
}

static void define_thread(pf_writer *w, expect *x, uint32_t thread, uint64_t tid,
                          const char *name)
{
    PUT_OK(pf_writer_define_thread(w, thread, tid, name));
    want(x, (prof_event){ .type = PROF_EV_THREAD, .thread = thread, .value = tid }, name);
}

/* Reads path and (again) its bytes from memory; both must give x. */
static void check_file(const char *path, const expect *x, const char *meta, int clean)
{
    fu_list got, mem;
    prof_error err = { 0 };
    prof_err e = fu_read_path(path, &got, &err);
    cr_assert_eq(e, PROF_OK, "open %s: %s", path, err.message);
    cr_assert_eq(got.rc, 0, "read %s: %s", path, got.err.message);
    fu_assert_same(&got, &x->l, "from file");
    cr_assert_str_eq(got.meta, meta, "metadata not returned exactly");
    cr_assert_eq(got.major, 1u);
    cr_assert_eq(got.minor, (unsigned)PF_VERSION_MINOR);
    cr_assert_eq(got.st.clean, clean, "clean %d, want %d", got.st.clean, clean);
    cr_assert_eq(got.st.truncated, 0, "truncated: %s", got.st.detail);
    cr_assert_str_eq(got.st.detail, "");
    cr_assert_eq(got.st.bytes_lost, 0u);
    size_t n_threads = 0;
    for (size_t i = 0; i < x->l.n; i++)
        n_threads += x->l.v[i].ev.type == PROF_EV_THREAD;
    cr_assert_eq(got.st.events, x->l.n - n_threads, "status counts %llu events, want %zu",
                 (unsigned long long)got.st.events, x->l.n - n_threads);

    size_t size;
    uint8_t *bytes = fu_load(path, &size);
    cr_assert_eq(got.st.file_size, (uint64_t)size);
    if (clean)
        cr_assert_eq(got.st.bytes_read, (uint64_t)size);
    e = fu_read_mem(bytes, size, &mem, &err);
    cr_assert_eq(e, PROF_OK, "open_memory: %s", err.message);
    cr_assert_eq(mem.rc, 0, "read from memory: %s", mem.err.message);
    fu_assert_same(&mem, &x->l, "from memory");
    cr_assert_str_eq(mem.meta, meta);
    cr_assert_eq(memcmp(&mem.st, &got.st, sizeof mem.st), 0,
                 "status from memory differs from status from the file");
    free(bytes);
    fu_free(&mem);
    fu_free(&got);
}

Test(format_roundtrip, every_kind_with_extreme_values)
{
    const char *path = fu_path("kinds.prof");
    pf_writer *w = open_writer(path, meta_text);
    expect x = { 0 };
    pf_block b;
    const uint64_t MAX = UINT64_MAX;
    const uint32_t M32 = UINT32_MAX;

    /* Names: ordinary, empty, binary (every byte but NUL), the largest id
     * the reader accepts. */
    char binary[256];
    for (int i = 1; i < 256; i++)
        binary[i - 1] = (char)i;
    binary[255] = '\0';
    define_string(w, 1, "forward");
    define_string(w, 2, "");
    define_string(w, 3, binary);
    define_string(w, READER_STRING_ID_MAX, "last id");
    define_thread(w, &x, 0, 0, "main");
    define_thread(w, &x, 3, MAX, "");
    define_thread(w, &x, READER_THREAD_MAX, 1, binary);

    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    /* Regions of every kind, children recorded before their parent, so
     * the parent's start goes backwards from the previous record's end. */
    for (uint32_t k = 0; k <= 4; k++) {
        PUT_OK(pf_put_region(&b, 1, k, 1, 1000 + 100 * k, 50));
        want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 1, .kind = k, .depth = 1,
                               .start_ns = 1000 + 100 * k, .dur_ns = 50 }, "forward");
    }
    PUT_OK(pf_put_region(&b, 1, 0, 0, 900, 2000));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 1, .start_ns = 900,
                           .dur_ns = 2000 }, "forward");
    /* A kind beyond io is refused and leaves nothing behind. */
    uint32_t count = b.count;
    cr_assert_eq(pf_put_region(&b, 1, 5, 0, 0, 0), PROF_ERR_INVALID);
    cr_assert_eq(b.count, count);
    /* Extremes: time 0, time and duration at UINT64_MAX, deepest depth,
     * the empty and the binary name, name id 0 (no name). */
    PUT_OK(pf_put_region(&b, 2, 4, M32, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 2, .kind = 4, .depth = M32 }, "");
    PUT_OK(pf_put_region(&b, 3, 2, M32 - 1, MAX, MAX));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 3, .kind = 2, .depth = M32 - 1,
                           .start_ns = MAX, .dur_ns = MAX }, binary);
    PUT_OK(pf_put_region(&b, 0, 0, 0, 1, MAX - 1));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .start_ns = 1, .dur_ns = MAX - 1 }, "");
    PUT_OK(pf_put_region(&b, READER_STRING_ID_MAX, 3, 7, MAX - 1, 1));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = READER_STRING_ID_MAX, .kind = 3,
                           .depth = 7, .start_ns = MAX - 1, .dur_ns = 1 }, "last id");
    PUT_OK(pf_put_region(&b, 1, 0, 0, (uint64_t)1 << 63, (uint64_t)1 << 63));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 1, .start_ns = (uint64_t)1 << 63,
                           .dur_ns = (uint64_t)1 << 63 }, "forward");
    /* Steps */
    PUT_OK(pf_put_step(&b, 0, 0, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_STEP }, "");
    PUT_OK(pf_put_step(&b, MAX, M32, MAX, MAX));
    want(&x, (prof_event){ .type = PROF_EV_STEP, .value = MAX, .flags = M32, .start_ns = MAX,
                           .dur_ns = MAX }, "");
    PUT_OK(pf_put_step(&b, 12, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, 5, 10));
    want(&x, (prof_event){ .type = PROF_EV_STEP, .value = 12, .flags = 3, .start_ns = 5,
                           .dur_ns = 10 }, "");
    /* Memory: zero and huge byte counts */
    PUT_OK(pf_put_memory(&b, 1, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_MEMORY, .name_id = 1 }, "forward");
    PUT_OK(pf_put_memory(&b, 3, MAX, MAX));
    want(&x, (prof_event){ .type = PROF_EV_MEMORY, .name_id = 3, .start_ns = MAX, .value = MAX },
         binary);
    PUT_OK(pf_put_memory(&b, 1, 77, (uint64_t)1 << 50));
    want(&x, (prof_event){ .type = PROF_EV_MEMORY, .name_id = 1, .start_ns = 77,
                           .value = (uint64_t)1 << 50 }, "forward");
    /* Counters: signs, infinities, NaN with a payload, subnormals, -0.0 */
    double nan_payload;
    uint64_t nan_bits = 0x7ff8dead0000beefull;
    memcpy(&nan_payload, &nan_bits, sizeof nan_payload);
    const double values[] = { 0.0, -0.0, -1.5, 1e308, -DBL_MAX, DBL_MIN / 4, INFINITY,
                              -INFINITY, NAN, -NAN, nan_payload, 3.141592653589793 };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        PUT_OK(pf_put_counter(&b, 1, 1000 - i, values[i]));
        want(&x, (prof_event){ .type = PROF_EV_COUNTER, .name_id = 1, .start_ns = 1000 - i,
                               .fvalue = values[i] }, "forward");
    }
    /* Marks and dropped counts */
    PUT_OK(pf_put_mark(&b, 3, MAX));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .name_id = 3, .start_ns = MAX }, binary);
    PUT_OK(pf_put_mark(&b, 2, 0));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .name_id = 2 }, "");
    PUT_OK(pf_put_dropped(&b, 0, 3));
    want(&x, (prof_event){ .type = PROF_EV_DROPPED, .start_ns = 3 }, "");
    PUT_OK(pf_put_dropped(&b, 1000000, 4));
    want(&x, (prof_event){ .type = PROF_EV_DROPPED, .value = 1000000, .start_ns = 4 }, "");
    /* CPU-side sync and API records */
    PUT_OK(pf_put_sync(&b, PROF_SYNC_STREAM_WAIT, M32, M32, MAX, 10, MAX));
    want(&x, (prof_event){ .type = PROF_EV_SYNC, .subkind = PROF_SYNC_STREAM_WAIT,
                           .device = M32, .stream = M32, .correlation = MAX, .start_ns = 10,
                           .dur_ns = MAX }, "");
    PUT_OK(pf_put_sync(&b, M32, 0, 0, 0, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_SYNC, .subkind = M32 }, "");
    PUT_OK(pf_put_api(&b, 1, MAX, 5, 6));
    want(&x, (prof_event){ .type = PROF_EV_API, .name_id = 1, .correlation = MAX,
                           .start_ns = 5, .dur_ns = 6 }, "forward");
    PUT_OK(pf_put_api(&b, 0, 0, MAX, 0));
    want(&x, (prof_event){ .type = PROF_EV_API, .start_ns = MAX }, "");
    cr_assert_eq(b.events, (uint64_t)b.count, "every record here is an event");
    cr_assert_eq(b.dropped, 1000000u);
    cr_assert_eq(b.first_ns, 0u);
    cr_assert_eq(b.last_ns, MAX, "a block's end saturates at UINT64_MAX");
    write_block(w, &b);
    for (size_t i = 0; i < x.l.n; i++)
        if (x.l.v[i].ev.type != PROF_EV_THREAD)
            x.l.v[i].ev.thread = 0;

    /* GPU activity on the GPU's own timeline, in a second block */
    size_t gpu_from = x.l.n;
    pf_block_reset(&b, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    PUT_OK(pf_put_gpu_kernel(&b, 1, M32, M32, MAX, MAX, MAX));
    want(&x, (prof_event){ .type = PROF_EV_GPU_KERNEL, .name_id = 1, .device = M32,
                           .stream = M32, .correlation = MAX, .start_ns = MAX, .dur_ns = MAX },
         "forward");
    PUT_OK(pf_put_gpu_kernel(&b, 3, 0, 0, 0, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_GPU_KERNEL, .name_id = 3 }, binary);
    for (uint32_t k = 0; k <= PROF_COPY_PEER; k++) {
        PUT_OK(pf_put_gpu_memcpy(&b, k, k, k + 1, k + 2, MAX - k, 100 - k, k));
        want(&x, (prof_event){ .type = PROF_EV_GPU_MEMCPY, .subkind = k, .device = k,
                               .stream = k + 1, .correlation = k + 2, .value = MAX - k,
                               .start_ns = 100 - k, .dur_ns = k }, "");
    }
    PUT_OK(pf_put_gpu_memcpy(&b, M32, M32, M32, MAX, MAX, MAX, MAX));
    want(&x, (prof_event){ .type = PROF_EV_GPU_MEMCPY, .subkind = M32, .device = M32,
                           .stream = M32, .correlation = MAX, .value = MAX, .start_ns = MAX,
                           .dur_ns = MAX }, "");
    PUT_OK(pf_put_gpu_memset(&b, M32, M32, MAX, MAX, 0, MAX));
    want(&x, (prof_event){ .type = PROF_EV_GPU_MEMSET, .device = M32, .stream = M32,
                           .correlation = MAX, .value = MAX, .dur_ns = MAX }, "");
    PUT_OK(pf_put_gpu_memset(&b, 0, 0, 0, 0, 0, 0));
    want(&x, (prof_event){ .type = PROF_EV_GPU_MEMSET }, "");
    write_block(w, &b);
    for (size_t i = gpu_from; i < x.l.n; i++)
        x.l.v[i].ev.thread = PROF_THREAD_GPU;

    /* A block of the thread with the largest index, after a renaming. */
    define_thread(w, &x, 3, 99, "renamed");
    pf_block_reset(&b, PF_BLOCK_EVENTS, M32 - 5);
    PUT_OK(pf_put_mark(&b, 1, 42));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .thread = M32 - 5, .name_id = 1,
                           .start_ns = 42 }, "forward");
    write_block(w, &b);
    pf_block_free(&b);
    close_writer(w);

    check_file(path, &x, meta_text, 1);

    /* The latest definition of a thread wins; undefined ones have none. */
    prof_reader *r;
    prof_event ev;
    cr_assert_eq(prof_reader_open(path, &r, NULL), PROF_OK);
    while (prof_reader_next(r, &ev) == 1)
        ;
    cr_assert_str_eq(prof_reader_thread_name(r, 0), "main");
    cr_assert_str_eq(prof_reader_thread_name(r, 3), "renamed");
    cr_assert_str_eq(prof_reader_thread_name(r, READER_THREAD_MAX), binary);
    cr_assert_null(prof_reader_thread_name(r, 1));
    cr_assert_null(prof_reader_thread_name(r, M32 - 5));
    cr_assert_null(prof_reader_thread_name(r, PROF_THREAD_GPU));
    prof_read_status st;
    prof_reader_status(r, &st);
    cr_assert_eq(st.dropped_events, 1000000u);
    cr_assert_eq(st.blocks, 5u, "two definitions blocks, three event blocks: %llu",
                 (unsigned long long)st.blocks);
    prof_reader_close(r);
    fu_free(&x.l);
}

/* Regions are decoded one way while the longest region still fits before
 * the block's end, and byte by byte near it (reader_decode.c): the same
 * extreme regions, ending a block after 0 to 12 others, read back alike. */
Test(format_roundtrip, regions_alike_anywhere_in_a_block)
{
    const char *path = fu_path("tail.prof");
    pf_writer *w = open_writer(path, "{}");
    expect x = { 0 };
    pf_block b;
    const uint64_t MAX = UINT64_MAX;
    const struct { uint32_t name, kind, depth; uint64_t start, dur; } r[] = {
        { 1, 0, 0, 0, 0 },
        { READER_STRING_ID_MAX, 4, UINT32_MAX, MAX, MAX },
        { 0, 2, UINT32_MAX - 1, 1, MAX - 1 },
        { 1, 3, 200, (uint64_t)1 << 63, 1 },
        { 1, 1, 127, 5, 128 },
    };
    define_string(w, 1, "forward");
    define_string(w, READER_STRING_ID_MAX, "last id");
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    for (size_t before = 0; before <= 12; before++) {
        for (size_t i = 0; i < before + sizeof r / sizeof r[0]; i++) {
            size_t k = i % (sizeof r / sizeof r[0]);
            const char *name = r[k].name == 1 ? "forward" : r[k].name ? "last id" : "";
            PUT_OK(pf_put_region(&b, r[k].name, r[k].kind, r[k].depth, r[k].start, r[k].dur));
            want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = r[k].name,
                                   .kind = r[k].kind, .depth = r[k].depth,
                                   .start_ns = r[k].start, .dur_ns = r[k].dur }, name);
        }
        write_block(w, &b);
    }
    pf_block_free(&b);
    close_writer(w);
    check_file(path, &x, "{}", 1);
    fu_free(&x.l);
}

Test(format_roundtrip, long_strings_are_cut_at_the_limit)
{
    const char *path = fu_path("long.prof");
    pf_writer *w = open_writer(path, "{}");
    expect x = { 0 };
    size_t big = PF_STRING_MAX + 5000;
    char *s = malloc(big + 1);
    cr_assert_not_null(s);
    for (size_t i = 0; i < big; i++)
        s[i] = (char)('a' + i % 26);
    s[big] = '\0';
    char *cut = strndup(s, PF_STRING_MAX);
    char *exact = strndup(s, PF_STRING_MAX - 1);
    PUT_OK(pf_writer_define_string(w, 1, s, big));
    PUT_OK(pf_writer_define_string(w, 2, exact, strlen(exact)));
    define_thread(w, &x, 1, 5, cut); /* exactly at the limit: kept whole */
    PUT_OK(pf_writer_define_thread(w, 2, 6, s));
    want(&x, (prof_event){ .type = PROF_EV_THREAD, .thread = 2, .value = 6 }, cut);
    pf_block b;
    pf_block_init(&b, PF_BLOCK_EVENTS, 1);
    PUT_OK(pf_put_mark(&b, 1, 10));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .thread = 1, .name_id = 1, .start_ns = 10 },
         cut);
    PUT_OK(pf_put_mark(&b, 2, 11));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .thread = 1, .name_id = 2, .start_ns = 11 },
         exact);
    write_block(w, &b);
    pf_block_free(&b);
    close_writer(w);
    check_file(path, &x, "{}", 1);
    cr_assert_eq(strlen(x.l.v[2].name), (size_t)PF_STRING_MAX);
    free(s);
    free(cut);
    free(exact);
    fu_free(&x.l);
}

/* Definitions arrive in a block ahead of the first block that names them,
 * whatever the order of the calls; reading strings before use works across
 * many blocks and threads, with random values, from a file and memory. */
Test(format_roundtrip, many_blocks_and_threads)
{
    const char *path = fu_path("many.prof");
    pf_writer *w = open_writer(path, "{\"k\":[]}");
    expect x = { 0 };
    synth_rng rng = { 12345 };
    enum { THREADS = 40, ROUNDS = 30 };
    pf_block b;
    uint32_t next_name = 1;
    char name[64];
    char names[400][24];
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    for (int round = 0; round < ROUNDS; round++) {
        for (uint32_t t = 0; t < THREADS; t++) {
            if (round == 0 || synth_rand(&rng) % 17 == 0) {
                snprintf(name, sizeof name, "worker-%u-%d", t, round);
                define_thread(w, &x, t, 1000 + t, name);
            }
            pf_block_reset(&b, PF_BLOCK_EVENTS, t);
            uint64_t now = synth_rand(&rng) >> (synth_rand(&rng) % 64);
            unsigned n = (unsigned)(synth_rand(&rng) % 40);
            for (unsigned i = 0; i < n; i++) {
                if (next_name < 400 && synth_rand(&rng) % 4 == 0) {
                    snprintf(names[next_name], sizeof names[0], "op.%u", next_name);
                    define_string(w, next_name, names[next_name]);
                    next_name++;
                }
                uint32_t id = (uint32_t)(synth_rand(&rng) % next_name);
                const char *nm = id ? names[id] : "";
                /* Times wander in both directions, by small and huge steps. */
                uint64_t r = synth_rand(&rng);
                now += (r & 1) ? (r >> (r % 64)) : (uint64_t)0 - (r >> (1 + r % 63));
                uint64_t dur = synth_rand(&rng) >> (synth_rand(&rng) % 64);
                switch (synth_rand(&rng) % 5) {
                case 0: {
                    uint32_t kind = (uint32_t)(synth_rand(&rng) % 5);
                    uint32_t depth = (uint32_t)(synth_rand(&rng) % 64);
                    PUT_OK(pf_put_region(&b, id, kind, depth, now, dur));
                    want(&x, (prof_event){ .type = PROF_EV_REGION, .thread = t, .name_id = id,
                                           .kind = kind, .depth = depth, .start_ns = now,
                                           .dur_ns = dur }, nm);
                    break;
                }
                case 1:
                    PUT_OK(pf_put_step(&b, r, (uint32_t)r, now, dur));
                    want(&x, (prof_event){ .type = PROF_EV_STEP, .thread = t, .value = r,
                                           .flags = (uint32_t)r, .start_ns = now,
                                           .dur_ns = dur }, "");
                    break;
                case 2:
                    PUT_OK(pf_put_memory(&b, id, now, dur));
                    want(&x, (prof_event){ .type = PROF_EV_MEMORY, .thread = t, .name_id = id,
                                           .start_ns = now, .value = dur }, nm);
                    break;
                case 3: {
                    double v;
                    memcpy(&v, &r, sizeof v); /* any bit pattern, NaNs included */
                    PUT_OK(pf_put_counter(&b, id, now, v));
                    want(&x, (prof_event){ .type = PROF_EV_COUNTER, .thread = t, .name_id = id,
                                           .start_ns = now, .fvalue = v }, nm);
                    break;
                }
                default:
                    PUT_OK(pf_put_api(&b, id, r, now, dur));
                    want(&x, (prof_event){ .type = PROF_EV_API, .thread = t, .name_id = id,
                                           .correlation = r, .start_ns = now, .dur_ns = dur },
                         nm);
                }
            }
            write_block(w, &b); /* an empty block writes nothing */
        }
    }
    pf_block_free(&b);
    close_writer(w);
    cr_assert_gt(x.l.n, 10000u, "the fixture should be large: %zu events", x.l.n);
    check_file(path, &x, "{\"k\":[]}", 1);
    fu_free(&x.l);
}

/* Extension records (tags 0x81..0xFF, unassigned) of a newer minor
 * version are skipped; the records around them still decode. */
Test(format_roundtrip, extension_records_are_skipped)
{
    const char *path = fu_path("ext.prof");
    pf_writer *w = open_writer(path, "{}");
    expect x = { 0 };
    uint8_t mem[512];
    pf_block b;
    define_string(w, 1, "m");
    pf_block_init_fixed(&b, PF_BLOCK_EVENTS, 2, mem, sizeof mem);
    PUT_OK(pf_put_mark(&b, 1, 100));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .thread = 2, .name_id = 1, .start_ns = 100 },
         "m");
    /* tag 0x81, length 3, three bytes; tag 0xFF, length 0 */
    const uint8_t ext[] = { 0x81, 3, 0xAA, 0xBB, 0xCC, 0xFF, 0 };
    memcpy(b.buf + b.len, ext, sizeof ext);
    b.len += sizeof ext;
    b.count += 2;
    PUT_OK(pf_put_mark(&b, 1, 50));
    want(&x, (prof_event){ .type = PROF_EV_MARK, .thread = 2, .name_id = 1, .start_ns = 50 },
         "m");
    write_block(w, &b);
    close_writer(w);
    check_file(path, &x, "{}", 1);
    fu_free(&x.l);
}

/* Reads path whole; returns its events (not counting attributes). */
static size_t read_all(const char *path, prof_event *out, const char **values, size_t max,
                       prof_read_status *st)
{
    prof_reader *r;
    prof_error err = { 0 };
    cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK, "%s", err.message);
    size_t n = 0;
    prof_event ev;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        cr_assert_lt(n, max);
        values[n] = strdup(prof_event_attr_value(&ev));
        out[n] = ev;
        out[n].name = strdup(ev.name); /* the reader's copy ends with it */
        n++;
    }
    cr_assert_eq(rc, 0, "%s", prof_reader_error(r)->message);
    prof_reader_status(r, st);
    prof_reader_close(r);
    return n;
}

/* Format 1.1 name attributes: written as definitions, read back as
 * PROF_EV_ATTR with both strings; a later one replaces nothing in the
 * file (both are delivered, in order); an unknown key and fields appended
 * by a later minor version pass; none is an event in the totals, which
 * the footer check of a clean file confirms. */
Test(format_roundtrip, name_attributes)
{
    const char *path = fu_path("attr.prof");
    pf_writer *w = open_writer(path, "{}");
    define_string(w, 1, "head.1.forward");
    define_string(w, 2, "torch.nn.Linear");
    define_string(w, 3, "torch.nn.Conv2d");
    PUT_OK(pf_writer_define_attr(w, PF_ATTR_CLASS, 1, 2));
    PUT_OK(pf_writer_define_attr(w, 77, 1, 3));
    PUT_OK(pf_writer_define_attr(w, PF_ATTR_CLASS, 1, 3));
    pf_block b;
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    PUT_OK(pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 10, 5));
    /* a later minor version's attribute: two more fields inside the length */
    const uint8_t longer[] = { 0x80, 5, 1, 1, 2, 0x7F, 0x01 };
    uint8_t *at = b.buf + b.len;
    cr_assert_geq(b.cap - b.len, sizeof longer);
    memcpy(at, longer, sizeof longer);
    b.len += sizeof longer;
    b.count++;
    PUT_OK(pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 20, 5));
    write_block(w, &b);
    pf_block_free(&b);
    close_writer(w);

    prof_event ev[8];
    const char *val[8];
    prof_read_status st;
    size_t n = read_all(path, ev, val, 8, &st);
    cr_assert_eq(n, 6);
    cr_assert(st.clean, "%s", st.detail);
    cr_assert_eq(st.events, 2u, "attributes are not events");
    static const uint32_t keys[] = { PF_ATTR_CLASS, 77, PF_ATTR_CLASS };
    static const char *const values[] = { "torch.nn.Linear", "torch.nn.Conv2d",
                                          "torch.nn.Conv2d" };
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(ev[i].type, PROF_EV_ATTR);
        cr_assert_str_eq(ev[i].name, "head.1.forward");
        cr_assert_eq(ev[i].name_id, 1u);
        cr_assert_eq(ev[i].subkind, keys[i]);
        cr_assert_str_eq(val[i], values[i]);
        cr_assert_eq(ev[i].start_ns + ev[i].dur_ns, 0u, "no time");
    }
    cr_assert_eq(ev[3].type, PROF_EV_REGION);
    cr_assert_eq(ev[4].type, PROF_EV_ATTR, "the appended fields are skipped");
    cr_assert_str_eq(val[4], "torch.nn.Linear");
    cr_assert_eq(ev[5].type, PROF_EV_REGION);
    cr_assert_eq(ev[5].start_ns, 20u, "the region after it decodes");
    cr_assert_str_eq(val[3], "", "not an attribute");
    for (size_t i = 0; i < n; i++) {
        free((char *)ev[i].name);
        free((char *)val[i]);
    }
}

/* The record is an extension record as format 1.0 defines them (tag, a
 * length, that many bytes), so a 1.0 reader skips it whole. */
Test(format_roundtrip, name_attribute_is_a_1_0_extension)
{
    pf_block b;
    pf_block_init(&b, PF_BLOCK_DEFS, PF_THREAD_NONE);
    PUT_OK(pf_put_attr(&b, PF_ATTR_CLASS, 300, 4000000));
    cr_assert_eq(b.buf[0], 0x80);
    const uint8_t *p = b.buf + 1;
    uint64_t len;
    cr_assert_eq(pf_varint_get(&p, b.buf + b.len, &len), 0);
    cr_assert_eq((size_t)(p - b.buf) + len, b.len, "length covers the rest exactly");
    cr_assert_eq(b.count, 1u);
    cr_assert_eq(b.events, 0u, "a definition, not an event");
    cr_assert_eq(b.first_ns, UINT64_MAX, "no time");
    pf_block_free(&b);
}

/* Malformed attributes make the block's data corrupt: ids 0, an undefined
 * string, fields that run past the length. */
Test(format_roundtrip, bad_name_attributes_are_corrupt)
{
    static const uint8_t bad[][6] = { { 0x80, 3, 1, 0, 1 }, { 0x80, 3, 1, 1, 9 },
                                      { 0x80, 2, 1, 1, 1 }, { 0x80, 4, 1, 1, 0x81, 0x81 } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = fu_path("badattr.prof");
        pf_writer *w = open_writer(path, "{}");
        define_string(w, 1, "x");
        pf_block b;
        pf_block_init(&b, PF_BLOCK_EVENTS, 0);
        PUT_OK(pf_put_mark(&b, 1, 10));
        size_t len = 2 + bad[i][1];
        memcpy(b.buf + b.len, bad[i], len);
        b.len += len;
        b.count++;
        write_block(w, &b);
        pf_block_free(&b);
        close_writer(w);
        prof_reader *r;
        prof_error err = { 0 };
        cr_assert_eq(prof_reader_open(path, &r, &err), PROF_OK);
        prof_event ev;
        int rc;
        while ((rc = prof_reader_next(r, &ev)) == 1)
            ;
        cr_assert_eq(rc, -1, "case %zu read", i);
        cr_assert_eq(prof_reader_error(r)->code, PROF_ERR_CORRUPT, "case %zu", i);
        prof_reader_close(r);
    }
}

/* The crash path: fixed blocks that refuse to grow, raw (uncompressed)
 * blocks and pending definitions written without allocation; the file has
 * no footer and reads as a complete but unclean run. */
Test(format_roundtrip, crash_path_raw_blocks)
{
    const char *path = fu_path("crash.prof");
    pf_writer *w = open_writer(path, "{}");
    expect x = { 0 };
    uint8_t mem[PF_RECORD_MAX + 2]; /* room for one record, not two */
    pf_block b;
    define_string(w, 1, "crash");
    define_thread(w, &x, 0, 9, "t");
    pf_block_init_fixed(&b, PF_BLOCK_EVENTS, 0, mem, sizeof mem);
    PUT_OK(pf_put_region(&b, 1, 0, 0, 10, 5));
    want(&x, (prof_event){ .type = PROF_EV_REGION, .name_id = 1, .start_ns = 10, .dur_ns = 5 },
         "crash");
    cr_assert_eq(pf_put_region(&b, 1, 0, 0, 20, 5), PROF_ERR_LIMIT,
                 "a full fixed block must refuse, not grow");
    cr_assert_eq(b.count, 1u);
    PUT_OK(pf_writer_write_pending_raw(w));
    PUT_OK(pf_writer_write_block_raw(w, &b));
    cr_assert_eq(b.count, 0u);
    PUT_OK(pf_writer_write_block_raw(w, &b)); /* empty: nothing written */
    PUT_OK(pf_put_step(&b, 1, PROF_STEP_INCOMPLETE, 0, 100));
    want(&x, (prof_event){ .type = PROF_EV_STEP, .value = 1, .flags = PROF_STEP_INCOMPLETE,
                           .dur_ns = 100 }, "");
    PUT_OK(pf_writer_write_block_raw(w, &b));
    uint64_t end = fu_writer_offset(w);
    /* Closing after the crash path writes no footer: the index would lack
     * the raw blocks. */
    close_writer(w);
    check_file(path, &x, "{}", 0);
    size_t size;
    free(fu_load(path, &size));
    cr_assert_eq((uint64_t)size, end, "close after the crash path added bytes");
    fu_free(&x.l);
}

Test(format_roundtrip, writer_errors)
{
    pf_writer *w = (pf_writer *)1;
    prof_error err = { 0 };
    prof_err e = pf_writer_open(&w, "/nonexistent-dir/x.prof", "{}", 3, &err);
    cr_assert_eq(e, PROF_ERR_IO);
    cr_assert_null(w);
    cr_assert(strstr(err.message, "cannot create") != NULL, "message: %s", err.message);

    size_t n = PF_METADATA_MAX + 1;
    char *meta = malloc(n + 1);
    cr_assert_not_null(meta);
    memset(meta, ' ', n);
    meta[0] = '{';
    meta[n - 1] = '}';
    meta[n] = '\0';
    e = pf_writer_open(&w, fu_path("big.prof"), meta, 3, &err);
    cr_assert_eq(e, PROF_ERR_LIMIT, "metadata over the limit: %d", e);
    cr_assert_null(w);
    free(meta);

    /* An empty profile: header, metadata, an empty footer. */
    w = open_writer(fu_path("empty.prof"), "{}");
    close_writer(w);
    expect x = { 0 };
    check_file(fu_path("empty.prof"), &x, "{}", 1);
}

/* A file written by synth (as fixtures are) reads back with the same
 * events as the calls made, thread definitions first. */
Test(format_roundtrip, synth_fixture)
{
    const char *path = fu_path("synth.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_block_records(s, 3);
    synth_thread(s, 0, 11, "train");
    synth_region(s, 0, "child", PROF_KIND_COMPUTE, 1, 200, 10);
    synth_region(s, 0, "parent", PROF_KIND_DATA, 0, 100, 500);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED, 0, 1000);
    synth_memory(s, 0, "host.rss", 1000, 1u << 30);
    synth_counter(s, 0, "loss", 1000, 2.5);
    synth_mark(s, 0, "ckpt", 1001);
    synth_dropped(s, 0, 7, 1002);
    synth_gpu_kernel(s, "gemm", 0, 7, 1, 300, 40);
    synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 7, 2, 4096, 350, 5);
    synth_gpu_memset(s, 0, 7, 3, 64, 360, 1);
    synth_sync(s, 0, PROF_SYNC_DEVICE, 0, 0, 4, 400, 20);
    synth_api(s, 0, "cudaLaunchKernel", 1, 290, 3);
    prof_error err = { 0 };
    cr_assert_eq(synth_close(s, &err), 0, "synth_close: %s", err.message);

    fu_list l;
    cr_assert_eq(fu_read_path(path, &l, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(l.rc, 0, "%s", l.err.message);
    cr_assert(l.st.clean);
    cr_assert_eq(l.st.events, 12u);
    cr_assert_eq(l.st.dropped_events, 7u);
    cr_assert_eq(l.n, 13u);
    cr_assert_eq(l.v[0].ev.type, PROF_EV_THREAD);
    cr_assert_str_eq(l.v[0].name, "train");
    cr_assert_eq(l.v[0].ev.value, 11u);
    int seen[PROF_EV_THREAD + 1] = { 0 };
    for (size_t i = 0; i < l.n; i++)
        seen[l.v[i].ev.type]++;
    for (int t = PROF_EV_REGION; t <= PROF_EV_THREAD; t++)
        cr_assert_geq(seen[t], 1, "no event of type %s", prof_event_type_name((prof_event_type)t));
    cr_assert_str_eq(l.v[1].name, "child");
    cr_assert_eq(l.v[2].ev.start_ns, 100u, "a parent after its child keeps its start");
    cr_assert_eq(l.v[2].ev.kind, (uint32_t)PROF_KIND_DATA);
    fu_free(&l);
}

Test(format_roundtrip, varint_and_zigzag_edges)
{
    const uint64_t values[] = { 0, 1, 127, 128, 255, 16383, 16384, (1ull << 21) - 1,
                                1ull << 21, (1ull << 35), (1ull << 56) - 1, 1ull << 63,
                                UINT64_MAX - 1, UINT64_MAX };
    const size_t lens[] = { 1, 1, 1, 2, 2, 2, 3, 3, 4, 6, 8, 10, 10, 10 };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[PF_VARINT_MAX + 4];
        memset(buf, 0xEE, sizeof buf);
        size_t n = pf_varint_put(buf, values[i]);
        cr_assert_eq(n, lens[i], "%llu takes %zu bytes, want %zu",
                     (unsigned long long)values[i], n, lens[i]);
        cr_assert_eq(buf[n], 0xEE, "wrote past the varint");
        const uint8_t *p = buf;
        uint64_t v = 1234;
        cr_assert_eq(pf_varint_get(&p, buf + n, &v), 0);
        cr_assert_eq(v, values[i]);
        cr_assert_eq(p, buf + n);
        /* With room for the longest varint before the end, the bytes are
         * read without a check each: the same value, the same cursor. */
        p = buf;
        v = 1234;
        cr_assert_eq(pf_varint_get(&p, buf + sizeof buf, &v), 0);
        cr_assert_eq(v, values[i]);
        cr_assert_eq(p, buf + n);
        /* Every shorter input is an error and leaves the cursor alone. */
        for (size_t k = 0; k < n; k++) {
            p = buf;
            cr_assert_eq(pf_varint_get(&p, buf + k, &v), -1, "%zu of %zu bytes accepted", k, n);
            cr_assert_eq(p, buf);
        }
    }
    /* Values past 64 bits: a tenth byte above 1, also when it would go on
     * to an eleventh byte. */
    uint8_t over[11] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0 };
    const uint8_t *p = over;
    uint64_t v;
    cr_assert_eq(pf_varint_get(&p, over + 10, &v), -1, "2^64 accepted");
    p = over;
    cr_assert_eq(pf_varint_get(&p, over + 11, &v), -1, "2^64 accepted with room after it");
    cr_assert_eq(p, over);
    over[9] = 0x81;
    p = over;
    cr_assert_eq(pf_varint_get(&p, over + 11, &v), -1, "11-byte varint accepted");
    over[9] = 0x01;
    p = over;
    cr_assert_eq(pf_varint_get(&p, over + 10, &v), 0);
    cr_assert_eq(v, UINT64_MAX);
    /* A non-minimal encoding of 0 still decodes. */
    const uint8_t padded[] = { 0x80, 0x80, 0x00 };
    p = padded;
    cr_assert_eq(pf_varint_get(&p, padded + 3, &v), 0);
    cr_assert_eq(v, 0u);
    cr_assert_eq(p, padded + 3);

    const int64_t z[] = { 0, -1, 1, -2, 2, INT64_MAX, INT64_MIN, INT64_MIN + 1, -1000000 };
    const uint64_t zz[] = { 0, 1, 2, 3, 4, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX - 2, 1999999 };
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
        cr_assert_eq(pf_zigzag(z[i]), zz[i], "zigzag(%lld)", (long long)z[i]);
        cr_assert_eq(pf_unzigzag(zz[i]), z[i], "unzigzag(%llu)", (unsigned long long)zz[i]);
    }
}

Test(format_roundtrip, crc32c_check_value)
{
    cr_assert_eq(crc32c_update(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(crc32c_update(0, "", 0), 0u);
    /* Incremental over any split equals one call. */
    for (size_t k = 0; k <= 9; k++)
        cr_assert_eq(crc32c_update(crc32c_update(0, "123456789", k), &"123456789"[k], 9 - k),
                     0xE3069283u, "split at %zu", k);
    uint8_t zeros[32] = { 0 };
    cr_assert_eq(crc32c_update(0, zeros, 32), 0x8A9136AAu, "32 zero bytes (RFC 3720)");
    uint8_t ones[32];
    memset(ones, 0xFF, sizeof ones);
    cr_assert_eq(crc32c_update(0, ones, 32), 0x62A8AB43u, "32 0xFF bytes (RFC 3720)");
}

Test(format_roundtrip, strerror_every_code)
{
    static const char *const want_text[] = {
        "success", "input/output error", "out of memory", "not a prof file",
        "unsupported format version", "corrupt data", "file cut short", "empty file",
        "invalid argument", "size limit exceeded", "not supported by this build"
    };
    /* The numbers are frozen (prof_reader.h). */
    cr_assert_eq(PROF_ERR_IO, 1);
    cr_assert_eq(PROF_ERR_CORRUPT, 5);
    cr_assert_eq(PROF_ERR_UNSUPPORTED, 10);
    for (int c = PROF_OK; c <= PROF_ERR_UNSUPPORTED; c++) {
        const char *s = prof_strerror((prof_err)c);
        cr_assert_not_null(s);
        cr_assert_str_eq(s, want_text[c], "code %d", c);
    }
    cr_assert_str_eq(prof_strerror((prof_err)11), "unknown error");
    cr_assert_str_eq(prof_strerror((prof_err)-1), "unknown error");
    cr_assert_str_eq(prof_strerror((prof_err)1000), "unknown error");
}

Test(format_roundtrip, name_helpers)
{
    static const char *const types[] = { "region", "step", "memory", "counter", "mark",
                                         "gpu_kernel", "gpu_memcpy", "gpu_memset", "sync",
                                         "api", "dropped", "thread", "attr" };
    for (int t = PROF_EV_REGION; t <= PROF_EV_ATTR; t++)
        cr_assert_str_eq(prof_event_type_name((prof_event_type)t), types[t - 1]);
    cr_assert_str_eq(prof_event_type_name((prof_event_type)0), "unknown");
    cr_assert_str_eq(prof_event_type_name((prof_event_type)14), "unknown");
    cr_assert_str_eq(prof_event_type_name((prof_event_type)-5), "unknown");

    static const char *const kinds[] = { "compute", "data", "sync", "comm", "io" };
    for (uint32_t k = 0; k < 5; k++)
        cr_assert_str_eq(prof_kind_name(k), kinds[k]);
    cr_assert_eq(PROF_KIND_IO, 4);
    cr_assert_str_eq(prof_kind_name(5), "unknown");
    cr_assert_str_eq(prof_kind_name(UINT32_MAX), "unknown");

    static const char *const copies[] = { "other", "HtoD", "DtoH", "DtoD", "HtoH", "peer" };
    for (uint32_t k = 0; k <= PROF_COPY_PEER; k++)
        cr_assert_str_eq(prof_copy_kind_name(k), copies[k]);
    cr_assert_str_eq(prof_copy_kind_name(6), "unknown");
    cr_assert_str_eq(prof_copy_kind_name(UINT32_MAX), "unknown");

    static const char *const syncs[] = { "other", "device", "stream", "event", "stream_wait",
                                         "memcpy" };
    for (uint32_t k = 0; k <= PROF_SYNC_MEMCPY; k++)
        cr_assert_str_eq(prof_sync_kind_name(k), syncs[k]);
    cr_assert_str_eq(prof_sync_kind_name(6), "unknown");
    cr_assert_str_eq(prof_sync_kind_name(UINT32_MAX), "unknown");
}
