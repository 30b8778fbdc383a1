/* fuzz_reader.c - libFuzzer target over the streaming reader: opens the
 * input from memory, reads every event and the status, and checks the
 * reader's promises (names never NULL, types in range, a clean file never
 * ends in an error, the status adds up), then reads it again in batches
 * and slim (pf_reader_next_slim), which must agree. Checksums stop a mutated input at
 * the first damaged byte, so each input is read twice: as given, and with
 * its header and block checksums recomputed, which lets mutations reach
 * the record decoder. Copies that open are also summarised and rendered
 * as `prof info` would (through a memfd, since the summary reads a path). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "model/summary.h"
#include "output/info_text.h"
#include "prof.h"
#include "prof_reader.h"
#include "fuzz_util.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

/* A hash of an event's fields and name, chained: two reads that hand out
 * the same events in the same order end with the same value. */
static uint64_t event_hash(uint64_t h, const prof_event *ev)
{
    uint64_t bits;
    memcpy(&bits, &ev->fvalue, sizeof bits);
    const uint64_t f[] = { ev->type, ev->thread, ev->start_ns, ev->dur_ns, ev->name_id, ev->kind,
                           ev->depth, ev->subkind, ev->flags, ev->device, ev->stream,
                           ev->correlation, ev->value, bits };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        h = mix(h, f[i]);
    for (const char *c = ev->name; *c; c++)
        h = mix(h, (unsigned char)*c);
    return h;
}

/* Reads everything again in batches, with a single call after every third
 * batch: the same events, status and end as one event at a time (rc, st,
 * n, hash: what that read gave). */
static void read_batches(const uint8_t *data, size_t size, int rc, const prof_read_status *st,
                         uint64_t n, uint64_t hash)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(prof_reader_open_memory(data, size, &r, &err) == PROF_OK);
    const prof_event *evs;
    prof_event ev;
    size_t count, calls = 0;
    uint64_t all = 0, h = 0xcbf29ce484222325ull;
    int brc;
    for (;;) {
        if (++calls % 4 == 0) {
            if ((brc = prof_reader_next(r, &ev)) != 1)
                break;
            all++;
            h = event_hash(h, &ev);
            continue;
        }
        if ((brc = prof_reader_next_batch(r, &evs, &count)) != 1)
            break;
        CHECK(count > 0);
        all += count;
        for (size_t i = 0; i < count; i++)
            h = event_hash(h, &evs[i]);
    }
    CHECK(brc == rc);
    CHECK(all == n);
    CHECK(h == hash);
    prof_read_status bst;
    prof_reader_status(r, &bst);
    CHECK(memcmp(&bst, st, sizeof bst) == 0);
    prof_reader_close(r);
}

/* Region names by id as the slim function saw them (valid until closing). */
typedef struct slim_names {
    const char **v;
    size_t cap;
} slim_names;

/* Tags regions by name id and kind, and hands the names that begin with
 * 'b' over whole, so that both kinds of entry are met. */
static void slim_tag(void *arg, const prof_event *ev, size_t n, uint32_t *tags)
{
    slim_names *t = arg;
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ev[k].name_id;
        if (id >= t->cap) {
            size_t cap = (size_t)id * 2 + 16;
            const char **v = realloc(t->v, cap * sizeof *v);
            CHECK(v != NULL);
            memset(v + t->cap, 0, (cap - t->cap) * sizeof *v);
            t->v = v;
            t->cap = cap;
        }
        if (ev[k].type == PROF_EV_REGION && !t->v[id]) /* (a thread's name has id 0) */
            t->v[id] = ev[k].name;
        tags[k] = ev[k].name[0] == 'b' || id >= 1u << 24 ? PF_SLIM_WHOLE
                                                        : id | (ev[k].kind & 0x7fu) << 24;
    }
}

/* Reads everything again slim (pf_reader_next_slim): the same events,
 * status and end as one event at a time (rc, st, n, hash, code: what that
 * read gave). */
static void read_slim(const uint8_t *data, size_t size, int rc, const prof_read_status *st,
                      uint64_t n, uint64_t hash, prof_err code)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    slim_names names = { NULL, 0 };
    CHECK(prof_reader_open_memory(data, size, &r, &err) == PROF_OK);
    CHECK(pf_reader_set_slim_fn(r, slim_tag, NULL, &names) == 0);
    pf_slim_batch b;
    uint64_t all = 0, h = 0xcbf29ce484222325ull;
    int src;
    while ((src = pf_reader_next_slim(r, &b)) == 1) {
        CHECK(b.count > 0);
        const prof_event *whole = b.whole;
        for (size_t i = 0; i < b.count; i++) {
            const pf_slim *e = &b.slim[i];
            if (e->tag == PF_SLIM_WHOLE) {
                h = event_hash(h, whole++);
            } else {
                prof_event ev = { .type = PROF_EV_REGION, .thread = b.thread,
                                  .start_ns = e->start_ns, .dur_ns = e->dur_ns,
                                  .name_id = e->tag & 0xffffffu, .kind = pf_slim_kind(e),
                                  .depth = pf_slim_depth(e) };
                CHECK(e->tag >> 24 == (ev.kind & 0x7fu));
                CHECK(ev.name_id < names.cap && names.v[ev.name_id]);
                ev.name = names.v[ev.name_id];
                h = event_hash(h, &ev);
            }
        }
        all += b.count;
    }
    CHECK(src == rc);
    CHECK(all == n);
    CHECK(h == hash);
    CHECK(prof_reader_error(r)->code == code);
    prof_read_status sst;
    prof_reader_status(r, &sst);
    CHECK(memcmp(&sst, st, sizeof sst) == 0);
    prof_reader_close(r);
    free(names.v);
}

/* Reads everything; returns 1 when the input opened. */
static int read_all(const uint8_t *data, size_t size)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    prof_event ev;
    prof_read_status st;
    uint64_t events = 0, handed = 0, hash = 0xcbf29ce484222325ull;
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
        handed++;
        CHECK(ev.name != NULL);
        hash = event_hash(hash, &ev);
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
    prof_err code = re->code;
    prof_reader_close(r);
    read_batches(data, size, rc, &st, handed, hash);
    read_slim(data, size, rc, &st, handed, hash, code);
    return 1;
}

/* The profile-level path: profile_summary_read over the same bytes, then
 * the `prof info` text. */
static void summarise(const uint8_t *data, size_t size)
{
    const char *path = fuzz_as_file(data, size);
    profile_summary s;
    prof_error err = { PROF_OK, "" };
    prof_err e = profile_summary_read(path, NULL, &s, &err);
    if (e == PROF_OK || s.metadata) {
        uint64_t sum = s.gpu_events;
        for (uint32_t i = 0; i < s.nthreads; i++)
            sum += s.threads[i].events;
        CHECK(sum == s.events);
        CHECK(info_render_text(fuzz_sink(), "fuzz.prof", &s) == PROF_OK);
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
        fuzz_fix_checksums(copy, size);
        if (read_all(copy, size))
            summarise(copy, size);
        free(copy);
    }
    return 0;
}
