/* make_hostile.c - writes the hostile profiles of tests/cli/hostile.sh:
 * files that are valid block by block (checksums, zstd, record syntax)
 * but whose contents try to make a reader or the tools behind it use
 * unbounded memory or time. Blocks go through the real writer, so only
 * what the encoder refuses to write (over-long strings) is laid out by
 * hand, in a block of caller memory.
 *
 * usage: make_hostile redefine OUT [COUNT [MIB]]  id 1 defined COUNT times
 *                                                 (default 40) with MIB MiB
 *                                                 of text (default 60)
 *        make_hostile repeat OUT [COUNT]          id 1 defined COUNT times
 *                                                 (default 1000) with
 *                                                 65,536 bytes, each
 *                                                 different from the last
 *        make_hostile names OUT N                 one region each of N
 *                                                 distinct names
 *        make_hostile devices OUT N               one kernel on each of N
 *                                                 devices
 *        make_hostile series|counters|threads OUT N  N memory series,
 *                                                 counters or named threads,
 *                                                 one event each
 *        make_hostile bigblock OUT N              one block of N regions
 *        make_hostile launches OUT N              N kernel launches made in
 *                                                 reverse time order, each on
 *                                                 its own stream, then N
 *                                                 regions before them all,
 *                                                 each with no launch: the
 *                                                 GPU join's lists at their
 *                                                 worst */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "prof.h"
#include "format/varint.h"

static const char metadata[] =
    "{\"format\":\"prof\",\"libprof_version\":\"0.1.0\","
    "\"clock\":{\"source\":\"synthetic\",\"origin_epoch_ns\":1700000000000000000},"
    "\"host\":\"hostile\",\"pid\":1,\"argv\":[\"make_hostile\"],\"rank\":0,\"world_size\":1,"
    "\"local_rank\":0,\"devices\":[],\"tags\":{}}";

static int fail(const char *what, prof_err e, const prof_error *err)
{
    fprintf(stderr, "make_hostile: %s: %s\n", what,
            err && err->message[0] ? err->message : prof_strerror(e));
    return 1;
}

/* A definitions block holding one string record of len bytes of c for id,
 * laid out by hand: the encoder would cut it at PF_STRING_MAX. */
static prof_err put_raw_string(pf_writer *w, uint8_t *mem, size_t cap, uint32_t id, char c,
                               size_t len, prof_error *err)
{
    pf_block b;
    pf_block_init_fixed(&b, PF_BLOCK_DEFS, PF_THREAD_NONE, mem, cap);
    uint8_t *p = mem;
    *p++ = PF_TAG_STRING;
    p += pf_varint_put(p, id);
    p += pf_varint_put(p, len);
    memset(p, c, len);
    b.len = (size_t)(p - mem) + len;
    b.count = 1;
    return pf_writer_write_block(w, &b, err);
}

/* Events that use id 1, so that a reader has to resolve it. */
static prof_err use_id1(pf_writer *w, prof_error *err)
{
    pf_block b;
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    prof_err e = pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 1000, 500);
    if (!e)
        e = pf_put_step(&b, 0, PROF_STEP_SAMPLED, 900, 700);
    if (!e)
        e = pf_writer_write_block(w, &b, err);
    pf_block_free(&b);
    return e;
}

static int redefine(const char *out, unsigned long count, size_t len, int vary)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    size_t cap = len + 32;
    uint8_t *mem = malloc(cap);
    if (!mem)
        return fail("redefine", PROF_ERR_NOMEM, NULL);
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e) {
        free(mem);
        return fail(out, e, &err);
    }
    for (unsigned long i = 0; !e && i < count; i++)
        e = put_raw_string(w, mem, cap, 1, vary ? (char)('a' + i % 26) : 'a', len, &err);
    if (!e)
        e = use_id1(w, &err);
    free(mem);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

/* n distinct names, each timed once, in blocks of 4096 records. */
static int names(const char *out, unsigned long n)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    pf_block b;
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e)
        return fail(out, e, &err);
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    for (unsigned long i = 0; !e && i < n; i++) {
        char name[48];
        int len = snprintf(name, sizeof name, "operation_%08lu", i);
        e = pf_writer_define_string(w, (uint32_t)(i + 1), name, (size_t)len);
        if (!e)
            e = pf_put_region(&b, (uint32_t)(i + 1), PROF_KIND_COMPUTE, 0, 1000 * (uint64_t)i,
                              500 + i % 7);
        if (!e && b.count == 4096)
            e = pf_writer_write_block(w, &b, &err);
    }
    if (!e)
        e = pf_put_step(&b, 0, PROF_STEP_SAMPLED, 0, 1000 * (uint64_t)n);
    if (!e)
        e = pf_writer_write_block(w, &b, &err);
    pf_block_free(&b);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

/* n memory series, n counters or n threads (each named, with one region),
 * one sample or region each. */
static int many(const char *out, const char *what, unsigned long n)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    pf_block b;
    int threads = strcmp(what, "threads") == 0;
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e)
        return fail(out, e, &err);
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    for (unsigned long i = 0; !e && i < n; i++) {
        char name[48];
        int len = snprintf(name, sizeof name, "%s_%08lu", what, i);
        uint64_t t = 1000 * (uint64_t)i;
        if (threads) {
            pf_block_reset(&b, PF_BLOCK_EVENTS, (uint32_t)i);
            e = pf_writer_define_thread(w, (uint32_t)i, 100 + i, name);
            if (!e)
                e = pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, t, 500);
            if (!e && i == 0)
                e = pf_writer_define_string(w, 1, "work", 4);
            if (!e)
                e = pf_writer_write_block(w, &b, &err);
            continue;
        }
        e = pf_writer_define_string(w, (uint32_t)(i + 1), name, (size_t)len);
        if (!e && strcmp(what, "series") == 0)
            e = pf_put_memory(&b, (uint32_t)(i + 1), t, 1000 + i);
        else if (!e)
            e = pf_put_counter(&b, (uint32_t)(i + 1), t, (double)i);
        if (!e && b.count == 4096)
            e = pf_writer_write_block(w, &b, &err);
    }
    if (!e && !threads)
        e = pf_writer_write_block(w, &b, &err);
    pf_block_free(&b);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

/* One events block of n regions of one name: reading it needs one large
 * allocation, the payload (about 6 bytes a region). */
static int bigblock(const char *out, unsigned long n)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    pf_block b;
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e)
        return fail(out, e, &err);
    e = pf_writer_define_string(w, 1, "op", 2);
    pf_block_init(&b, PF_BLOCK_EVENTS, 0);
    for (unsigned long i = 0; !e && i < n; i++)
        e = pf_put_region(&b, 1, PROF_KIND_COMPUTE, 0, 100 * (uint64_t)i, 90);
    if (!e)
        e = pf_writer_write_block(w, &b, &err);
    pf_block_free(&b);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

/* One kernel on each of n devices, in one GPU block. */
static int devices(const char *out, unsigned long n)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    pf_block b;
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e)
        return fail(out, e, &err);
    e = pf_writer_define_string(w, 1, "kernel", 6);
    pf_block_init(&b, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    for (unsigned long i = 0; !e && i < n; i++)
        e = pf_put_gpu_kernel(&b, 1, (uint32_t)i, 7, i, 1000 * (uint64_t)i, 500);
    if (!e)
        e = pf_writer_write_block(w, &b, &err);
    pf_block_free(&b);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

/* The GPU join (src/model/launch.c) at its worst: launches that each go
 * to the front of their thread's list, and regions that each search it
 * and take nothing. */
static int launches(const char *out, unsigned long n)
{
    pf_writer *w;
    prof_error err = { PROF_OK, "" };
    pf_block cpu, gpu;
    prof_err e = pf_writer_open(&w, out, metadata, 3, &err);
    if (e)
        return fail(out, e, &err);
    e = pf_writer_define_string(w, 1, "cudaLaunchKernel", 16);
    if (!e)
        e = pf_writer_define_string(w, 2, "kernel", 6);
    if (!e)
        e = pf_writer_define_string(w, 3, "region", 6);
    pf_block_init(&cpu, PF_BLOCK_EVENTS, 0);
    pf_block_init(&gpu, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    uint64_t base = 1000000 * (uint64_t)n;
    for (unsigned long i = 0; !e && i < n; i++) {
        uint64_t t = base + 1000 * (uint64_t)(n - i);
        e = pf_put_api(&cpu, 1, i + 1, t, 100);
        if (!e)
            e = pf_put_gpu_kernel(&gpu, 2, 0, (uint32_t)i, i + 1, t + 200, 50);
        if (!e && cpu.count == 4096)
            e = pf_writer_write_block(w, &cpu, &err);
        if (!e && gpu.count == 4096)
            e = pf_writer_write_block(w, &gpu, &err);
    }
    for (unsigned long i = 0; !e && i < n; i++) {
        e = pf_put_region(&cpu, 3, PROF_KIND_COMPUTE, 0, 1000 * (uint64_t)i, 500);
        if (!e && cpu.count == 4096)
            e = pf_writer_write_block(w, &cpu, &err);
    }
    if (!e && cpu.count)
        e = pf_writer_write_block(w, &cpu, &err);
    if (!e && gpu.count)
        e = pf_writer_write_block(w, &gpu, &err);
    pf_block_free(&cpu);
    pf_block_free(&gpu);
    if (e) {
        pf_writer_abandon(w);
        return fail(out, e, &err);
    }
    e = pf_writer_close(w, &err);
    return e ? fail(out, e, &err) : 0;
}

static unsigned long arg(int argc, char **argv, int i, unsigned long dflt)
{
    return argc > i ? strtoul(argv[i], NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "redefine") == 0)
        return redefine(argv[2], arg(argc, argv, 3, 40), (size_t)arg(argc, argv, 4, 60) << 20, 0);
    if (argc >= 3 && strcmp(argv[1], "repeat") == 0)
        return redefine(argv[2], arg(argc, argv, 3, 1000), PF_STRING_MAX, 1);
    if (argc == 4 && strcmp(argv[1], "names") == 0)
        return names(argv[2], arg(argc, argv, 3, 0));
    if (argc == 4 && (strcmp(argv[1], "series") == 0 || strcmp(argv[1], "counters") == 0 ||
                      strcmp(argv[1], "threads") == 0))
        return many(argv[2], argv[1], arg(argc, argv, 3, 0));
    if (argc == 4 && strcmp(argv[1], "bigblock") == 0)
        return bigblock(argv[2], arg(argc, argv, 3, 0));
    if (argc == 4 && strcmp(argv[1], "devices") == 0)
        return devices(argv[2], arg(argc, argv, 3, 0));
    if (argc == 4 && strcmp(argv[1], "launches") == 0)
        return launches(argv[2], arg(argc, argv, 3, 0));
    fputs("usage: make_hostile redefine|repeat OUT [COUNT [MIB]]\n"
          "       make_hostile names|devices|series|counters|threads|bigblock|launches OUT N\n",
          stderr);
    return 2;
}
