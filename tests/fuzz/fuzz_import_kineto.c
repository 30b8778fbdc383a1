/* fuzz_import_kineto.c - libFuzzer target over the torch.profiler (Kineto)
 * importer: the input, as a file (a memfd), is read by kineto_read into a
 * sink writing another memfd, plain or gzip as its first bytes say, with
 * python_function kept for inputs of odd length; the profile is then read
 * back whole and loaded into the model. Checks: a refusal is one of the
 * importer's errors with its message; an accepted input always finishes
 * into a profile that opens, reads to its clean end and loads, and holds,
 * type by type, the events its metadata's import counts say. The same
 * input read by YAJL alone (prof_tuning.yajl_only) must give the same
 * status, message and profile, byte for byte: the fast path (jscan.c)
 * reads exactly what YAJL reads. Seeds: the era fixtures of
 * testdata/kineto (tests/fuzz/corpus-import_kineto), and shapes broken
 * syntax alone does not reach, written by
 * tests/support/bin/make_import_seeds.py under `make fuzz`'s -max_len:
 * thousands of threads and of names, a name past PF_STRING_MAX (gzip
 * makes it fit), regions and JSON nested past their depths; the profiles
 * of tests/fuzz/corpus are refused as not JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "import/import.h"
#include "model/profile.h"
#include "prof.h"
#include "prof_reader.h"
#include "fuzz_util.h"

/* The events of one type the metadata's import counts say there are. */
static uint64_t counted(const cJSON *counts, const char *kind)
{
    const cJSON *v = cJSON_GetObjectItem(counts, kind);
    CHECK(cJSON_IsNumber(v));
    return (uint64_t)v->valuedouble;
}

/* Reads the profile at path to its end: clean, holding as many events of
 * each type as its metadata counts, and loading into the model. */
static void read_back(const char *path)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(prof_reader_open(path, &r, &err) == PROF_OK);
    prof_event ev;
    uint64_t n[PROF_EV_ATTR + 1] = { 0 };
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        CHECK(ev.name != NULL);
        CHECK(ev.type >= PROF_EV_REGION && ev.type <= PROF_EV_ATTR);
        n[ev.type]++;
        if (ev.type == PROF_EV_REGION)
            CHECK(ev.kind <= PROF_KIND_IO);
    }
    CHECK(rc == 0);
    prof_read_status st;
    prof_reader_status(r, &st);
    CHECK(st.clean);
    cJSON *meta = cJSON_Parse(prof_reader_metadata(r));
    CHECK(meta != NULL);
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), "counts");
    CHECK(n[PROF_EV_REGION] == counted(c, "regions"));
    CHECK(n[PROF_EV_STEP] == counted(c, "steps"));
    CHECK(n[PROF_EV_GPU_KERNEL] == counted(c, "kernels"));
    CHECK(n[PROF_EV_GPU_MEMCPY] == counted(c, "copies"));
    CHECK(n[PROF_EV_GPU_MEMSET] == counted(c, "memsets"));
    CHECK(n[PROF_EV_SYNC] == counted(c, "syncs"));
    CHECK(n[PROF_EV_API] == counted(c, "api_calls"));
    CHECK(n[PROF_EV_MEMORY] == counted(c, "memory_samples"));
    CHECK(n[PROF_EV_MARK] == counted(c, "marks"));
    uint64_t regions = n[PROF_EV_REGION];
    cJSON_Delete(meta);
    prof_reader_close(r);
    profile_model m;
    CHECK(profile_model_load(path, NULL, &m, NULL, NULL, &err) == PROF_OK);
    CHECK(m.region_events == regions);
    profile_model_free(&m);
}

/* Reads the trace into a fresh memfd: the status, with the profile's
 * descriptor in *keep when it is PROF_OK (the sink closes its own). */
static prof_err import_into(const char *trace, const import_options *o, int *keep,
                            prof_error *err)
{
    int fd = memfd_create("fuzz-prof", 0);
    CHECK(fd >= 0);
    *keep = dup(fd);
    CHECK(*keep >= 0);
    import_sink *s = NULL;
    *err = (prof_error){ PROF_OK, "" };
    CHECK(sink_open(&s, fd, "kineto", "fuzz.json", err) == PROF_OK);
    prof_err e = kineto_read(trace, s, o, err);
    if (e != PROF_OK) {
        sink_abandon(s);
        close(*keep);
        *keep = -1;
        return e;
    }
    CHECK(sink_close(s, err) == PROF_OK);
    return e;
}

/* Whether two descriptors hold the same bytes. */
static int same_bytes(int a, int b)
{
    off_t na = lseek(a, 0, SEEK_END), nb = lseek(b, 0, SEEK_END);
    if (na != nb)
        return 0;
    char x[4096], y[4096];
    for (off_t at = 0; at < na;) {
        ssize_t ra = pread(a, x, sizeof x, at), rb = pread(b, y, sizeof y, at);
        if (ra <= 0 || ra != rb || memcmp(x, y, (size_t)ra) != 0)
            return 0;
        at += ra;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *trace = fuzz_as_file(data, size);
    (void)import_detect(trace);
    import_options o = { .python_stacks = (int)(size & 1) };
    prof_error err, ref_err;
    int keep, ref_keep;
    prof_err e = import_into(trace, &o, &keep, &err);
    /* the fast path reads exactly as YAJL alone does */
    static const prof_tuning yajl_only = { .yajl_only = 1 };
    o.tuning = &yajl_only;
    prof_err ref = import_into(trace, &o, &ref_keep, &ref_err);
    CHECK(e == ref && strcmp(err.message, ref_err.message) == 0);
    if (e != PROF_OK) {
        CHECK(e == PROF_ERR_NOT_PROF || e == PROF_ERR_CORRUPT || e == PROF_ERR_NOMEM);
        CHECK(err.code == e && err.message[0] != '\0');
        return 0;
    }
    CHECK(same_bytes(keep, ref_keep));
    close(ref_keep);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", keep);
    read_back(path);
    close(keep);
    return 0;
}
