/* fuzz_reader.c - libFuzzer target over the streaming reader: opens the
 * input from memory, reads every event and the status, and checks the
 * reader's promises (names never NULL, types in range, a clean file never
 * ends in an error, the status adds up). Checksums stop a mutated input at
 * the first damaged byte, so each input is read twice: as given, and with
 * its header and block checksums recomputed, which lets mutations reach
 * the record decoder. Copies that open are also summarised and rendered
 * as `prof info` would (through a memfd, since the summary reads a path). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/format.h"
#include "model/summary.h"
#include "output/info_text.h"
#include "prof.h"
#include "prof_reader.h"
#include "util/crc32c.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_reader: %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Reads everything; returns 1 when the input opened. */
static int read_all(const uint8_t *data, size_t size)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    prof_event ev;
    prof_read_status st;
    uint64_t events = 0;
    int rc;
    prof_err e = prof_reader_open_memory(data, size, &r, &err);
    if (e != PROF_OK) {
        CHECK(r == NULL);
        CHECK(err.code == e && err.message[0] != '\0');
        CHECK(prof_strerror(e) != NULL);
        return 0;
    }
    unsigned major, minor;
    prof_reader_version(r, &major, &minor);
    CHECK(major == PF_VERSION_MAJOR);
    CHECK(strlen(prof_reader_metadata(r)) <= size);
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        CHECK(ev.name != NULL);
        CHECK(ev.type >= PROF_EV_REGION && ev.type <= PROF_EV_THREAD);
        CHECK(strcmp(prof_event_type_name(ev.type), "unknown") != 0);
        (void)prof_kind_name(ev.kind);
        (void)prof_copy_kind_name(ev.subkind);
        (void)prof_sync_kind_name(ev.subkind);
        if (ev.type == PROF_EV_THREAD)
            CHECK(prof_reader_thread_name(r, ev.thread) != NULL);
        else
            events++;
        if (ev.type == PROF_EV_REGION)
            CHECK(ev.kind <= PROF_KIND_IO);
    }
    CHECK(rc == 0 || rc == -1);
    CHECK(prof_reader_next(r, &ev) == rc); /* the end is sticky */
    prof_reader_status(r, &st);
    const prof_error *re = prof_reader_error(r);
    CHECK((rc < 0) == (re->code != PROF_OK));
    CHECK(rc == 0 || re->message[0] != '\0');
    CHECK(!(st.clean && rc < 0));
    CHECK(!(st.clean && st.truncated));
    CHECK(st.events == events);
    CHECK(st.file_size == size);
    CHECK(st.bytes_read <= size);
    if (st.truncated) {
        CHECK(st.detail[0] != '\0');
        CHECK(st.bytes_read + st.bytes_lost == size);
    }
    if (st.clean)
        CHECK(st.bytes_read == size);
    prof_reader_close(r);
    return 1;
}

/* Recomputes the header checksum and those of every block whose header
 * and payload lie within the input. */
static void fix_checksums(uint8_t *f, size_t size)
{
    if (size < PF_FILE_HEADER_LEN)
        return;
    uint64_t mlen = pf_load_u32(f + 16);
    if (PF_FILE_HEADER_LEN + mlen > size)
        return;
    pf_store_u32(f + 20, crc32c_update(crc32c_update(0, f, 20), f + PF_FILE_HEADER_LEN,
                                       (size_t)mlen));
    uint64_t off = pf_load_u32(f + 12);
    while (off + PF_BLOCK_HEADER_LEN <= size && pf_load_u32(f + off) == PF_BLOCK_MAGIC) {
        uint8_t *h = f + off;
        uint64_t stored = pf_load_u32(h + 32);
        if (off + PF_BLOCK_HEADER_LEN + stored > size)
            stored = size - off - PF_BLOCK_HEADER_LEN; /* still fix the header */
        else
            pf_store_u32(h + 40, crc32c_update(0, h + PF_BLOCK_HEADER_LEN, (size_t)stored));
        pf_store_u32(h + 44, crc32c_update(0, h, 44));
        off += PF_BLOCK_HEADER_LEN + stored;
    }
}

/* The profile-level path: profile_summary_read over the same bytes, then
 * the `prof info` text. */
static void summarise(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static FILE *sink;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz_reader", 0);
        sink = fopen("/dev/null", "w");
        CHECK(fd >= 0 && sink != NULL);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    profile_summary s;
    prof_error err = { PROF_OK, "" };
    prof_err e = profile_summary_read(path, &s, &err);
    if (e == PROF_OK || s.metadata) {
        uint64_t sum = s.gpu_events;
        for (uint32_t i = 0; i < s.nthreads; i++)
            sum += s.threads[i].events;
        CHECK(sum == s.events);
        CHECK(info_render_text(sink, "fuzz.prof", &s) == PROF_OK);
    }
    profile_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_all(data, size);
    if (size >= PF_FILE_HEADER_LEN) {
        uint8_t *copy = malloc(size);
        CHECK(copy != NULL);
        memcpy(copy, data, size);
        fix_checksums(copy, size);
        if (read_all(copy, size))
            summarise(copy, size);
        free(copy);
    }
    return 0;
}
