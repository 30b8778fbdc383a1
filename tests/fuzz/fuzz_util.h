/* fuzz_util.h - what the libFuzzer targets over profile bytes share: a
 * CHECK that aborts (so libFuzzer keeps the input), the checksum repair
 * that lets mutations get past the CRCs to the decoders, and a memfd path
 * for the few readers that take a file name. */
#ifndef PROF_TESTS_FUZZ_UTIL_H
#define PROF_TESTS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/format.h"
#include "util/crc32c.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Recomputes the header checksum and those of every block whose header
 * and payload lie within the input. */
static inline void fuzz_fix_checksums(uint8_t *f, size_t size)
{
    if (size < PF_FILE_HEADER_LEN)
        return;
    pf_file_header fh;
    pf_file_header_load(f, &fh);
    uint64_t mlen = fh.meta_len;
    if (PF_FILE_HEADER_LEN + mlen > size)
        return;
    pf_store_u32(f + PF_FH_CRC, pf_file_header_crc(f, f + PF_FILE_HEADER_LEN, (size_t)mlen));
    uint64_t off = fh.header_len;
    /* Only the two checksums are rewritten: pf_block_header_store would
     * also reset the reserved bytes that mutations reach. */
    while (off + PF_BLOCK_HEADER_LEN <= size && pf_block_header_magic_ok(f + off)) {
        uint8_t *h = f + off;
        pf_block_header bh;
        pf_block_header_load(h, &bh);
        uint64_t stored = bh.stored_len;
        if (off + PF_BLOCK_HEADER_LEN + stored > size)
            stored = size - off - PF_BLOCK_HEADER_LEN; /* still fix the header */
        else
            pf_store_u32(h + PF_BH_PAYLOAD_CRC,
                         crc32c_update(0, h + PF_BLOCK_HEADER_LEN, (size_t)stored));
        pf_block_header_seal(h);
        off += PF_BLOCK_HEADER_LEN + stored;
    }
}

/* Runs consume on the input as given and, when repairing its checksums
 * changes it, once more on the repaired copy, so that mutations reach the
 * decoders behind the CRCs as well as the checks themselves. */
static inline void fuzz_as_given_and_repaired(const uint8_t *data, size_t size,
                                              void (*consume)(const uint8_t *, size_t))
{
    consume(data, size);
    if (size < PF_FILE_HEADER_LEN)
        return;
    uint8_t *copy = malloc(size);
    CHECK(copy != NULL);
    memcpy(copy, data, size);
    fuzz_fix_checksums(copy, size);
    if (memcmp(copy, data, size) != 0)
        consume(copy, size);
    free(copy);
}

/* The input as a file: one memfd per process, rewritten for each input,
 * named by its /proc/self/fd path. Nothing touches the disk. */
static inline const char *fuzz_as_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz", 0);
        CHECK(fd >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    return path;
}

/* /dev/null, opened once: output whose bytes are not checked. */
static inline FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink)
        CHECK((sink = fopen("/dev/null", "w")) != NULL);
    return sink;
}

#endif
