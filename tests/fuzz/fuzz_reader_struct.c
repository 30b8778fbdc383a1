/* fuzz_reader_struct.c - a structure-aware libFuzzer target for the reader
 * and the model. The input is not a profile but a recipe: a sequence of
 * operations that build one through the real encoder and writer
 * (src/format/), so every block is valid (checksums, zstd, record syntax)
 * and the fuzzing effort goes into what the blocks hold: long strings and
 * names over the limit, redefinitions, huge counts, many devices, threads,
 * streams and names (an operation can repeat the next one thousands of
 * times), deep depths, extreme times. The file is then read back by the
 * reader (one event at a time and through a window) and loaded by the model
 * (profile_model_load), whose report is built and rendered.
 *
 * Invariants: nothing crashes or hangs (libFuzzer's -timeout), memory stays
 * bounded (-rss_limit_mb; the format's limits keep the reader within one
 * block's payload and 256 MiB of definition text); errors are clean (a
 * known code and a message); and a file the recipe kept within the
 * format's rules reads back without error, with exactly the events written
 * (their count and an order-free sum of their hashes), and loads into a
 * model that counts as many. Only what the encoder refuses to write (a name
 * over 65,536 bytes) is laid out by hand. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/report.h"
#include "format/format.h"
#include "format/varint.h"
#include "model/profile.h"
#include "output/report_json.h"
#include "prof.h"
#include "prof_reader.h"
#include "fuzz_util.h"

#define SLOTS 6                   /* events blocks being filled at once        */
#define BUDGET (48u << 20)        /* bytes of records and names per input      */
#define REPEAT_MAX 20000u         /* times one operation may be repeated       */
#define LONG_NAME_MAX (8u << 20)  /* the longest name laid out by hand         */

/* ---- the recipe ------------------------------------------------------------------ */

typedef struct recipe {
    const uint8_t *p, *end;
} recipe;

static uint8_t r8(recipe *r)
{
    return r->p < r->end ? *r->p++ : 0;
}

static uint32_t r32(recipe *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)r8(r) << (8 * i);
    return v;
}

static uint64_t r64(recipe *r)
{
    return (uint64_t)r32(r) | (uint64_t)r32(r) << 32;
}

/* A time: small, ordinary, or at the ends of the u64 range. */
static uint64_t pick_time(recipe *r)
{
    switch (r8(r) % 6) {
    case 0: return (uint64_t)r8(r) * 1000;
    case 1: return r32(r);
    case 2: return UINT64_MAX - r8(r);
    case 3: return (1ull << 63) + r8(r) - 128;
    case 4: return r64(r);
    default: return 0;
    }
}

/* A string id: mostly few and small (so they collide and are reused), at
 * times the last valid one, one past it, or 0. */
static uint32_t pick_id(recipe *r)
{
    switch (r8(r) % 8) {
    case 0: return 0;
    case 1: return PF_STRING_IDS - 1;
    case 2: return PF_STRING_IDS + r8(r);
    case 3: return 1u + r32(r) % 70000u;
    default: return 1u + r8(r) % 16u;
    }
}

/* A 32-bit field (depth, device, stream, kind): small, or at the edges. */
static uint32_t pick_u32(recipe *r)
{
    switch (r8(r) % 6) {
    case 0: return UINT32_MAX;
    case 1: return UINT32_MAX - 1;
    case 2: return r32(r);
    case 3: return 1000u + r8(r) * 64u;
    default: return r8(r) % 8u;
    }
}

/* A thread: a few ordinary ones, the GPU's, or past the format's limit. */
static uint32_t pick_thread(recipe *r)
{
    switch (r8(r) % 8) {
    case 0: return PF_THREAD_GPU;
    case 1: return PF_THREADS - 1;
    case 2: return PF_THREADS + r8(r);
    case 3: return PF_THREAD_NONE - 2;
    default: return r8(r) % 4u;
    }
}

/* A name's length: short, long, at the limit, past it. */
static size_t pick_len(recipe *r)
{
    switch (r8(r) % 8) {
    case 0: return 0;
    case 1: return PF_STRING_MAX;
    case 2: return PF_STRING_MAX + 1;
    case 3: return (size_t)r8(r) << 12;
    case 4: return (size_t)(1u + r8(r) % 8u) << 20; /* megabytes */
    default: return r8(r) % 32u;
    }
}

/* ---- what the file holds, as far as the reader can tell ----------------------------- */

typedef struct def {
    uint32_t id;   /* 0: free */
    uint32_t len;
    uint64_t hash;
} def;

typedef struct slot {
    pf_block b;
    int used;
    uint64_t events, hash;  /* of the records in b, for the expected sums */
} slot;

typedef struct gen {
    pf_writer *w;
    slot slots[SLOTS];
    def *defs;              /* open addressing on id                       */
    size_t ndefs, cap;
    uint64_t budget;        /* bytes the recipe may still make            */
    uint64_t text;          /* definition text, as the reader counts it   */
    int valid;              /* every rule of the format kept so far       */
    int failed;             /* the writer refused: the file is not whole  */
    uint64_t events, hash;  /* of the events in blocks written            */
    uint8_t *raw;           /* hand-laid records                          */
    size_t raw_cap;
} gen;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

static uint64_t text_hash(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = mix(h, (unsigned char)s[i]);
    return h;
}

/* What an event is, as far as the check goes. */
static uint64_t event_hash(uint32_t type, uint64_t start, uint64_t dur, uint64_t name)
{
    return mix(mix(mix(mix(0, type), start), dur), name);
}

static def *def_find(gen *g, uint32_t id)
{
    if (!g->cap)
        return NULL;
    for (size_t k = (id * 2654435761u) & (g->cap - 1);; k = (k + 1) & (g->cap - 1))
        if (g->defs[k].id == id || g->defs[k].id == 0)
            return &g->defs[k];
}

static void def_add(gen *g, uint32_t id, uint32_t len, uint64_t hash)
{
    if (2 * (g->ndefs + 1) > g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        def *old = g->defs;
        size_t oldcap = g->cap;
        CHECK((g->defs = calloc(cap, sizeof *g->defs)) != NULL);
        g->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].id)
                *def_find(g, old[i].id) = old[i];
        free(old);
    }
    def *d = def_find(g, id);
    if (d->id == 0)
        g->ndefs++;
    *d = (def){ id, len, hash };
}

/* The hash of the text of id as the reader will resolve it, or 0 with the
 * file marked invalid when the id is undefined. Id 0 is the empty name. */
static uint64_t name_of(gen *g, uint32_t id)
{
    if (id == 0)
        return text_hash("", 0);
    def *d = def_find(g, id);
    if (!d || d->id != id) {
        g->valid = 0;
        return 0;
    }
    return d->hash;
}

static void take_text(gen *g, uint64_t len)
{
    g->text += len;
    if (g->text > PF_TEXT_MAX)
        g->valid = 0;
}

static void check_writer(gen *g, prof_err e)
{
    if (e != PROF_OK)
        g->failed = 1;
}

/* ---- building ------------------------------------------------------------------------ */

static void slot_write(gen *g, slot *s)
{
    if (!s->used)
        return;
    if (s->b.count) {
        check_writer(g, pf_writer_write_block(g->w, &s->b, NULL));
        g->events += s->events;
        g->hash += s->hash;
    }
    pf_block_free(&s->b);
    s->used = 0;
}

/* The block being filled for thread, flushing the oldest when all are in use. */
static slot *slot_for(gen *g, uint32_t thread, size_t room)
{
    slot *free_slot = NULL;
    for (size_t i = 0; i < SLOTS; i++) {
        slot *s = &g->slots[i];
        if (s->used && s->b.thread == thread) {
            if (s->b.len + room + PF_RECORD_MAX > PF_BLOCK_RAW_MAX)
                slot_write(g, s);
            else
                return s;
        }
        if (!s->used && !free_slot)
            free_slot = s;
    }
    if (!free_slot) {
        free_slot = &g->slots[g->slots[0].b.len % SLOTS];
        slot_write(g, free_slot);
    }
    pf_block_init(&free_slot->b, PF_BLOCK_EVENTS, thread);
    free_slot->used = 1;
    free_slot->events = free_slot->hash = 0;
    return free_slot;
}

static void count_event(slot *s, uint64_t h)
{
    s->events++;
    s->hash += h;
}

/* A name of len bytes of c. Within the limit through the writer's pending
 * definitions; past it laid out by hand in a block of its own. */
static void define_string(gen *g, uint32_t id, size_t len, char c)
{
    if (len > g->budget)
        len = (size_t)g->budget;
    g->budget -= len;
    char *text = malloc(len + 1);
    CHECK(text != NULL);
    memset(text, c, len);
    uint64_t h = text_hash(text, len);
    def *d = def_find(g, id);
    int again = d && d->id == id;
    if (id == 0 || id >= PF_STRING_IDS || len > PF_STRING_MAX ||
        (again && (d->len != len || d->hash != h)))
        g->valid = 0;
    else if (!again)
        take_text(g, len);
    if (len <= PF_STRING_MAX) {
        check_writer(g, pf_writer_define_string(g->w, id, text, len));
    } else {
        size_t need = len + 32;
        if (need > g->raw_cap) {
            CHECK((g->raw = realloc(g->raw, need)) != NULL);
            g->raw_cap = need;
        }
        pf_block b;
        pf_block_init_fixed(&b, PF_BLOCK_DEFS, PF_THREAD_NONE, g->raw, g->raw_cap);
        uint8_t *p = g->raw;
        *p++ = PF_TAG_STRING;
        p += pf_varint_put(p, id);
        p += pf_varint_put(p, len);
        memcpy(p, text, len);
        b.len = (size_t)(p - g->raw) + len;
        b.count = 1;
        check_writer(g, pf_writer_write_block(g->w, &b, NULL));
    }
    if (!again && id > 0 && id < PF_STRING_IDS && len <= PF_STRING_MAX)
        def_add(g, id, (uint32_t)len, h);
    free(text);
}

static void define_thread(gen *g, uint32_t thread, size_t len)
{
    if (len > PF_STRING_MAX)
        len = PF_STRING_MAX; /* the encoder cuts at the limit */
    if (len > g->budget)
        len = (size_t)g->budget;
    g->budget -= len;
    char *name = malloc(len + 1);
    CHECK(name != NULL);
    memset(name, 't', len);
    name[len] = '\0';
    if (thread >= PF_THREADS)
        g->valid = 0;
    take_text(g, len);
    check_writer(g, pf_writer_define_thread(g->w, thread, thread, name));
    free(name);
}

static void define_attr(gen *g, uint32_t name, uint32_t value)
{
    def *a = def_find(g, name), *v = def_find(g, value);
    if (name == 0 || value == 0 || !a || a->id != name || !v || v->id != value)
        g->valid = 0;
    else
        take_text(g, (uint64_t)a->len + v->len);
    check_writer(g, pf_writer_define_attr(g->w, PF_ATTR_CLASS, name, value));
}

/* One timed record of the recipe's choosing on thread t, the i-th of a
 * repetition (so that repeated records differ: many devices, streams,
 * names, threads). */
static void put_event(gen *g, recipe *r, uint32_t i)
{
    uint8_t op = r8(r) % 11;
    uint32_t t = pick_thread(r), id = pick_id(r), a = pick_u32(r), b = pick_u32(r);
    uint64_t start = pick_time(r) + i, dur = pick_time(r) % 5 ? (uint64_t)r8(r) : pick_time(r);
    uint64_t v = r8(r) % 2 ? r64(r) : i;
    if (r8(r) % 2) { /* vary with the repetition */
        a += i;
        id = id ? id + i : 0;
    }
    if (op >= 2 && op <= 5) /* no duration in these records */
        dur = 0;
    slot *s = slot_for(g, op >= 6 && op <= 8 ? PF_THREAD_GPU : t, 0);
    uint64_t name = op == 1 || op == 5 || op == 8 || op == 7 || op == 10 ? text_hash("", 0)
                                                                            : name_of(g, id);
    prof_err e = PROF_OK;
    uint32_t type = 0;
    switch (op) {
    case 0:
        type = PROF_EV_REGION; /* kinds past io: the encoder refuses them */
        e = pf_put_region(&s->b, id, a % 8, b, start, dur);
        break;
    case 1: type = PROF_EV_STEP; e = pf_put_step(&s->b, v, a & 3, start, dur); break;
    case 2: type = PROF_EV_MEMORY; e = pf_put_memory(&s->b, id, start, v); break;
    case 3: {
        double f;
        memcpy(&f, &v, sizeof f); /* NaN and infinities too */
        type = PROF_EV_COUNTER;
        e = pf_put_counter(&s->b, id, start, f);
        break;
    }
    case 4: type = PROF_EV_MARK; e = pf_put_mark(&s->b, id, start); break;
    case 5: type = PROF_EV_DROPPED; e = pf_put_dropped(&s->b, v, start); break;
    case 6:
        type = PROF_EV_GPU_KERNEL;
        e = pf_put_gpu_kernel(&s->b, id, a, b, v, start, dur);
        break;
    case 7:
        type = PROF_EV_GPU_MEMCPY;
        e = pf_put_gpu_memcpy(&s->b, a % 8, b, a, v, v, start, dur);
        break;
    case 8: type = PROF_EV_GPU_MEMSET; e = pf_put_gpu_memset(&s->b, a, b, v, v, start, dur); break;
    case 9: type = PROF_EV_API; e = pf_put_api(&s->b, id, v, start, dur); break;
    default: type = PROF_EV_SYNC; e = pf_put_sync(&s->b, a % 8, a, b, v, start, dur); break;
    }
    if (e == PROF_OK)
        count_event(s, event_hash(type, start, dur, name));
    else if (e == PROF_ERR_LIMIT) /* the block is full: a new one next time */
        slot_write(g, s);
    else if (e != PROF_ERR_INVALID) /* refused by the encoder: not in the file */
        g->failed = 1;
    g->budget = g->budget > 24 ? g->budget - 24 : 0;
}

/* One operation of the recipe; times > 1 repeats the one after it. */
static void step(gen *g, recipe *r, uint32_t i)
{
    switch (r8(r) % 8) {
    case 0: {
        uint32_t id = pick_id(r);
        size_t len = pick_len(r);
        if (len > LONG_NAME_MAX)
            len = LONG_NAME_MAX;
        define_string(g, id ? id + i : 0, len, (char)('a' + (r8(r) + i) % 26));
        break;
    }
    case 1: {
        uint32_t t = pick_thread(r);
        define_thread(g, t < 8 ? t + i : t, pick_len(r));
        break;
    }
    case 2: {
        uint32_t n = pick_id(r), v = pick_id(r);
        define_attr(g, n, v);
        break;
    }
    case 3: { /* write a block now */
        slot *s = &g->slots[r8(r) % SLOTS];
        slot_write(g, s);
        break;
    }
    default: put_event(g, r, i); break;
    }
}

/* Runs the recipe into fd; returns 1 when the file was closed cleanly. */
static int build(gen *g, recipe *r, int fd)
{
    prof_error err = { PROF_OK, "" };
    int clean = r8(r) % 4 != 0;
    memset(g, 0, sizeof *g);
    g->budget = BUDGET;
    g->valid = 1;
    CHECK(pf_writer_open_fd(&g->w, fd, "{\"format\":\"prof\"}", 1, &err) == PROF_OK);
    while (r->p < r->end && g->budget > 0 && !g->failed) {
        uint8_t op = r8(r);
        uint32_t times = 1;
        if (op % 8 == 7) /* repeat the next operation */
            times = 1u + (r32(r) % REPEAT_MAX);
        const uint8_t *at = r->p;
        for (uint32_t i = 0; i < times && g->budget > 0 && !g->failed; i++) {
            r->p = at; /* the same operation, the i-th time */
            step(g, r, i);
        }
    }
    for (size_t i = 0; i < SLOTS; i++)
        slot_write(g, &g->slots[i]);
    if (clean && !g->failed)
        g->failed = pf_writer_close(g->w, &err) != PROF_OK;
    else
        pf_writer_abandon(g->w);
    free(g->defs);
    free(g->raw);
    return clean;
}

/* ---- reading it back ----------------------------------------------------------------- */

static int known_error(prof_err e)
{
    return e == PROF_ERR_CORRUPT || e == PROF_ERR_LIMIT || e == PROF_ERR_NOMEM ||
           e == PROF_ERR_IO;
}

/* Reads everything; checks the errors and, for a valid file, the events. */
static void read_back(const gen *g, const uint8_t *data, size_t size, prof_read_status *st)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(prof_reader_open_memory(data, size, &r, &err) == PROF_OK);
    prof_event ev;
    uint64_t events = 0, hash = 0;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        CHECK(ev.name != NULL);
        if (ev.type == PROF_EV_THREAD || ev.type == PROF_EV_ATTR)
            continue;
        events++;
        hash += event_hash(ev.type, ev.start_ns, ev.dur_ns, text_hash(ev.name, strlen(ev.name)));
    }
    const prof_error *e = prof_reader_error(r);
    prof_reader_status(r, st);
    if (getenv("FUZZ_STRUCT_VERBOSE")) /* for looking at a corpus */
        fprintf(stderr, "recipe: %s, %llu events written, %llu read, end %d%s%s\n",
                g->failed ? "writer failed" : g->valid ? "valid" : "outside the format",
                (unsigned long long)g->events, (unsigned long long)events, rc,
                rc ? ": " : "", rc ? e->message : "");
    CHECK(rc == 0 || rc == -1);
    CHECK(rc == 0 || (known_error(e->code) && e->message[0] != '\0'));
    if (g->valid && !g->failed) {
        if (rc != 0)
            fprintf(stderr, "a valid file read with an error: %s\n", e->message);
        CHECK(rc == 0);
        CHECK(!st->truncated);
        CHECK(events == g->events);
        CHECK(hash == g->hash); /* names containing NUL are never made */
    }
    prof_reader_close(r);
}

/* The same through a window: never more events, the same kind of end. */
static void read_window(const uint8_t *data, size_t size, uint64_t from, uint64_t to,
                        const prof_read_status *all, int valid)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(prof_reader_open_memory(data, size, &r, &err) == PROF_OK);
    prof_reader_set_window(r, from, to);
    prof_event ev;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1)
        CHECK(ev.name != NULL);
    prof_read_status st;
    prof_reader_status(r, &st);
    CHECK(st.events <= all->events || !valid);
    if (valid)
        CHECK(rc == 0);
    prof_reader_close(r);
}

/* The model and its report: no crash, a clean error, as many events as the
 * reader counted, and a report of bounded size. */
static void model_back(const char *path, const prof_read_status *st, int valid)
{
    profile_model m;
    prof_error err = { PROF_OK, "" };
    prof_err e = profile_model_load(path, NULL, &m, NULL, NULL, &err);
    if (e != PROF_OK) {
        CHECK(known_error(e) && err.message[0] != '\0');
        CHECK(!valid);
        return;
    }
    if (valid)
        CHECK(m.events == st->events);
    const profile_model *one[1] = { &m };
    cJSON *rep = report_build(one, 1, NULL, &err);
    CHECK(rep != NULL || err.code == PROF_ERR_NOMEM);
    if (rep) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(f != NULL);
        CHECK(report_render_json(f, rep) == PROF_OK);
        CHECK(fclose(f) == 0);
        /* Lists are cut to a page's worth, but a name may be 64 KiB and
         * appear in several lists and call-tree paths: a thousand threads
         * of 64 KiB names make a report of 64 MB. Bounded, if not small. */
        CHECK(len < (256u << 20));
        free(text);
        cJSON_Delete(rep);
    }
    profile_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        CHECK((fd = memfd_create("fuzz-struct", 0)) >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    CHECK(ftruncate(fd, 0) == 0);
    int wfd = dup(fd);
    CHECK(wfd >= 0);
    CHECK(lseek(wfd, 0, SEEK_SET) == 0);
    recipe r = { data, data + size };
    gen g;
    build(&g, &r, wfd);
    off_t n = lseek(fd, 0, SEEK_END);
    CHECK(n > 0);
    uint8_t *bytes = malloc((size_t)n);
    CHECK(bytes != NULL);
    CHECK(pread(fd, bytes, (size_t)n, 0) == (ssize_t)n);
    const char *save = getenv("FUZZ_STRUCT_SAVE"); /* the profile a recipe makes, to look at */
    if (save) {
        FILE *f = fopen(save, "wb");
        CHECK(f && fwrite(bytes, 1, (size_t)n, f) == (size_t)n && fclose(f) == 0);
    }
    prof_read_status st;
    read_back(&g, bytes, (size_t)n, &st);
    int valid = g.valid && !g.failed;
    uint64_t from = size > 8 ? pf_load_u64(data + size - 8) : 0;
    read_window(bytes, (size_t)n, from, from + (size ? data[0] : 0) * 1000000ull, &st, valid);
    free(bytes);
    model_back(path, &st, valid);
    return 0;
}
