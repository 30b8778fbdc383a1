/* make_corpus.c - writes small .prof files, sound and damaged, into a
 * directory: the seed corpus of tests/fuzz/ (`make_corpus tests/fuzz/corpus`)
 * and the inputs of the CLI tests that need bytes a shell cannot make
 * (a newer major version with its header checksum recomputed). Seeded and
 * deterministic: running it again gives the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "synth.h"
#include "util/crc32c.h"

static const char *dir;
static int failed;

static const char *path_of(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "make_corpus: %s failed\n", what);
        failed = 1;
    }
}

static unsigned char *load(const char *name, size_t *size)
{
    FILE *f = fopen(path_of(name), "rb");
    unsigned char *buf = NULL;
    long n;
    *size = 0;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
        check(0, name);
        if (f)
            fclose(f);
        return NULL;
    }
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
        *size = (size_t)n;
    else
        check(0, name);
    fclose(f);
    return buf;
}

static void store(const char *name, const void *data, size_t size)
{
    FILE *f = fopen(path_of(name), "wb");
    check(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, name);
}

static void finish(synth *s, int clean, const char *name)
{
    prof_error err;
    int rc = clean ? synth_close(s, &err) : synth_abandon(s, &err);
    if (rc < 0)
        fprintf(stderr, "make_corpus: %s: %s\n", name, err.message);
    check(rc == 0, name);
}

/* A few steps on two threads: the common shape of a profile. */
static void small_run(const char *name, int clean, uint32_t per_block, int steps)
{
    synth *s = synth_open(path_of(name), NULL);
    check(s != NULL, name);
    if (!s)
        return;
    synth_block_records(s, per_block);
    synth_thread(s, 0, 10, "train");
    synth_thread(s, 1, 11, "loader");
    uint64_t t = 100;
    for (int i = 0; i < steps; i++) {
        synth_region(s, 1, "fetch", PROF_KIND_DATA, 0, t, 40);
        synth_region(s, 0, "fwd", PROF_KIND_COMPUTE, 1, t + 5, 20);
        synth_region(s, 0, "step", PROF_KIND_COMPUTE, 0, t, 60);
        synth_memory(s, 0, "host.rss", t + 60, 1000u + 8u * (uint64_t)i);
        synth_step(s, 0, (uint64_t)i, PROF_STEP_SAMPLED, t, 60);
        t += 70;
    }
    finish(s, clean, name);
}

/* One record of every kind, in small (stored raw) blocks. */
static void all_kinds(const char *name)
{
    synth *s = synth_open(path_of(name), NULL);
    check(s != NULL, name);
    if (!s)
        return;
    synth_block_records(s, 4);
    synth_thread(s, 0, 1, "main");
    for (int k = 0; k <= PROF_KIND_IO; k++)
        synth_region(s, 0, "region", (prof_kind)k, (uint32_t)k, 100 + 10 * (uint64_t)k, 5);
    synth_region(s, 0, "parent", PROF_KIND_COMPUTE, 0, 50, 200);
    synth_step(s, 0, 0, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, 0, 300);
    synth_memory(s, 0, "gpu.allocated", 300, UINT64_MAX);
    synth_counter(s, 0, "loss", 301, -0.5);
    synth_mark(s, 0, "mark", 302);
    synth_dropped(s, 0, 9, 303);
    synth_gpu_kernel(s, "kernel", 1, 2, 3, 110, 20);
    synth_gpu_memcpy(s, PROF_COPY_DTOH, 1, 2, 4, 1u << 20, 130, 5);
    synth_gpu_memset(s, 1, 2, 5, 64, 140, 1);
    synth_sync(s, 0, PROF_SYNC_DEVICE, 1, 2, 6, 150, 30);
    synth_api(s, 0, "cudaMemcpy", 4, 125, 15);
    synth_thread(s, 0, 1, "main-renamed");
    synth_mark(s, 0, "after-rename", 400);
    finish(s, 1, name);
}

/* One block big and regular enough to be stored as a zstd frame. */
static void zstd_block(const char *name)
{
    synth *s = synth_open(path_of(name), NULL);
    check(s != NULL, name);
    if (!s)
        return;
    synth_thread(s, 0, 1, "main");
    for (uint64_t i = 0; i < 200; i++)
        synth_region(s, 0, i % 2 ? "odd" : "even", PROF_KIND_COMPUTE, 0, 1000 * i, 900);
    finish(s, 1, name);
}

/* A name past PF_STRING_MAX (cut on write; compresses to little). */
static void long_name(const char *name)
{
    size_t n = PF_STRING_MAX + 100;
    char *big = malloc(n + 1);
    if (!big) {
        check(0, name);
        return;
    }
    memset(big, 'n', n);
    big[n] = '\0';
    synth *s = synth_open(path_of(name), NULL);
    check(s != NULL, name);
    if (s) {
        synth_mark(s, 0, big, 1);
        finish(s, 1, name);
    }
    free(big);
}

/* The crash path: raw blocks, no footer; and extension records. */
static void crash_and_extension(void)
{
    pf_writer *w;
    prof_error err;
    uint8_t mem[512];
    pf_block b;
    if (pf_writer_open(&w, path_of("crash-raw.prof"), "{\"crash\":true}", 3, &err) != PROF_OK) {
        check(0, "crash-raw.prof");
        return;
    }
    pf_writer_define_string(w, 1, "op", 2);
    pf_writer_define_thread(w, 0, 77, "t0");
    pf_writer_write_pending_raw(w);
    pf_block_init_fixed(&b, PF_BLOCK_EVENTS, 0, mem, sizeof mem);
    pf_put_region(&b, 1, 0, 0, 10, 5);
    pf_put_step(&b, 0, PROF_STEP_INCOMPLETE, 0, 20);
    /* tag 0x80 with 2 bytes, as a newer minor version might write */
    const uint8_t ext[] = { 0x80, 2, 0xAB, 0xCD };
    memcpy(b.buf + b.len, ext, sizeof ext);
    b.len += sizeof ext;
    b.count++;
    pf_put_mark(&b, 1, 30);
    check(pf_writer_write_block_raw(w, &b) == PROF_OK, "crash-raw.prof");
    pf_writer_abandon(w);
}

static void fix_header_crc(unsigned char *f)
{
    uint32_t mlen = pf_load_u32(f + PF_FH_META_LEN);
    pf_store_u32(f + PF_FH_CRC, pf_file_header_crc(f, f + PF_FILE_HEADER_LEN, mlen));
}

/* Damaged variants of a sound file: cuts, flips, versions. */
static void damaged(const char *from)
{
    size_t size;
    unsigned char *f = load(from, &size);
    if (!f)
        return;
    unsigned char *c = malloc(size);
    if (!c || size < 200) {
        free(c);
        free(f);
        check(0, "damaged variants");
        return;
    }
    size_t hlen = pf_load_u32(f + PF_FH_HEADER_LEN);
    /* the second block */
    size_t b1 = hlen + PF_BLOCK_HEADER_LEN + pf_load_u32(f + hlen + PF_BH_STORED_LEN);

    store("cut-in-header.prof", f, 13);
    store("cut-in-metadata.prof", f, hlen - 5);
    store("cut-in-block-header.prof", f, b1 + 20);
    store("cut-in-payload.prof", f, b1 + PF_BLOCK_HEADER_LEN + 3);
    store("cut-trailer.prof", f, size - PF_TRAILER_LEN);
    store("cut-half.prof", f, size / 2);

    memcpy(c, f, size);
    c[b1 + PF_BLOCK_HEADER_LEN + 1] ^= 0x04;
    store("flip-payload.prof", c, size);
    memcpy(c, f, size);
    c[b1 + PF_BH_FIRST + 1] ^= 0x80;
    store("flip-block-header.prof", c, size);
    memcpy(c, f, size);
    c[size - 3] ^= 0x01;
    store("flip-trailer-magic.prof", c, size);
    memcpy(c, f, size);
    c[size - PF_TRAILER_LEN] ^= 0x08;
    store("flip-trailer-offset.prof", c, size);
    memcpy(c, f, size);
    c[hlen - 2] ^= 0x20;
    store("flip-metadata.prof", c, size);

    memcpy(c, f, size);
    pf_store_u16(c + PF_FH_MAJOR, 2);
    pf_store_u16(c + PF_FH_MINOR, 0); /* whatever minor the writer is at */
    fix_header_crc(c);
    store("version-2.0.prof", c, size);
    memcpy(c, f, size);
    pf_store_u16(c + PF_FH_MINOR, 9);
    fix_header_crc(c);
    store("version-1.9.prof", c, size);
    memcpy(c, f, size);
    c[PF_FILE_HEADER_LEN] = '[';
    c[hlen - 1] = ']';
    fix_header_crc(c);
    store("metadata-not-object.prof", c, size);
    free(c);
    free(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR\n");
        return 2;
    }
    dir = argv[1];
    small_run("clean.prof", 1, 4096, 3);
    small_run("abandoned.prof", 0, 4096, 3);
    small_run("multi-block.prof", 1, 3, 6);
    small_run("multi-block-abandoned.prof", 0, 3, 6);
    all_kinds("all-kinds.prof");
    zstd_block("zstd-block.prof");
    long_name("long-name.prof");
    crash_and_extension();
    synth *s = synth_open(path_of("empty-profile.prof"), "{}");
    check(s != NULL, "empty-profile.prof");
    if (s)
        finish(s, 1, "empty-profile.prof");
    damaged("multi-block.prof");
    store("empty-file.prof", "", 0);
    store("not-prof.txt", "step,region,ms\n1,forward,12.5\n", 30);
    return failed;
}
