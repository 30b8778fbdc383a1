/* zstd_frames.c - the floor of the reading benchmark (DESIGN §7): the time
 * one thread takes to decompress, in memory, every zstd frame of a
 * multi-frame .zst file (tests/bench/prof_frames.py writes a .prof file's
 * frames so). The file is read first and not timed, and no output is
 * written, so the figure is decompression alone; a zstd -d process adds
 * its start, its reads and its writes. Prints one line
 * "SECONDS FRAMES BYTES_OUT", SECONDS the least of ROUNDS passes.
 * usage: zstd_frames ROUNDS FILE.zst */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <zstd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The whole file in *data; 0, or -1 with a message. */
static int slurp(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        perror(path);
        if (f)
            fclose(f);
        return -1;
    }
    long n = ftell(f);
    rewind(f);
    *size = n > 0 ? (size_t)n : 0;
    *data = malloc(*size ? *size : 1);
    int ok = *data && fread(*data, 1, *size, f) == *size;
    fclose(f);
    if (!ok)
        fprintf(stderr, "%s: cannot read\n", path);
    return ok ? 0 : -1;
}

/* One pass over every frame into out (cap bytes, the largest frame's
 * content); the frames and bytes decompressed, or -1 on a bad frame. */
static int pass(ZSTD_DCtx *dctx, const unsigned char *data, size_t size, void *out,
                size_t cap, size_t *frames, size_t *bytes)
{
    *frames = *bytes = 0;
    for (size_t off = 0; off < size;) {
        size_t len = ZSTD_findFrameCompressedSize(data + off, size - off);
        size_t got = ZSTD_isError(len) ? len : ZSTD_decompressDCtx(dctx, out, cap, data + off, len);
        if (ZSTD_isError(got)) {
            fprintf(stderr, "zstd_frames: frame %zu: %s\n", *frames, ZSTD_getErrorName(got));
            return -1;
        }
        off += len;
        *bytes += got;
        (*frames)++;
    }
    return 0;
}

/* The largest content size any frame declares (the writer always declares it). */
static size_t largest_frame(const unsigned char *data, size_t size)
{
    size_t most = 0;
    for (size_t off = 0; off < size;) {
        size_t len = ZSTD_findFrameCompressedSize(data + off, size - off);
        if (ZSTD_isError(len))
            break;
        unsigned long long c = ZSTD_getFrameContentSize(data + off, len);
        if (c != ZSTD_CONTENTSIZE_UNKNOWN && c != ZSTD_CONTENTSIZE_ERROR && c > most)
            most = (size_t)c;
        off += len;
    }
    return most;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) < 1) {
        fputs("usage: zstd_frames ROUNDS FILE.zst\n", stderr);
        return 2;
    }
    int rounds = atoi(argv[1]), status = 1;
    unsigned char *data = NULL;
    size_t size, frames = 0, bytes = 0;
    if (slurp(argv[2], &data, &size) != 0)
        goto out;
    size_t cap = largest_frame(data, size);
    void *dst = malloc(cap ? cap : 1);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    double best = -1;
    for (int r = 0; dst && dctx && r < rounds; r++) {
        double t0 = now_s();
        if (pass(dctx, data, size, dst, cap, &frames, &bytes) != 0)
            break;
        double t = now_s() - t0;
        best = best < 0 || t < best ? t : best;
    }
    if (best >= 0) {
        printf("%.6f %zu %zu\n", best, frames, bytes);
        status = 0;
    }
    ZSTD_freeDCtx(dctx);
    free(dst);
out:
    free(data);
    return status;
}
