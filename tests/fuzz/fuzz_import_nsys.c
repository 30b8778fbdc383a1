/* fuzz_import_nsys.c - libFuzzer target over the Nsight Systems importer:
 * the input, written to a temporary file, is read as an export by
 * nsys_read into a sink writing a memfd, and the profile is read back
 * whole. (Not a memfd for the input: SQLite opens the target of a
 * /proc/self/fd link by its name.) Checks:
 * a refusal is one of the importer's errors with a message; an import the
 * importer accepted always finishes into a profile that opens, reads to
 * its clean end, and holds as many events as its metadata counts. Seeds
 * (tests/fuzz/corpus-import_nsys): a fixture export, and exports of
 * tests/support/bin/make_import_seeds.py: hundreds of named threads, one
 * long name on hundreds of rows out of start order beside ids StringIds
 * lacks or that are not integers; the profiles of tests/fuzz/corpus are
 * refused as not SQLite. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "import/import.h"
#include "prof_reader.h"
#include "fuzz_util.h"

static char input_path[64];

static void remove_input(void)
{
    unlink(input_path);
}

/* The input in a file of this process's own, rewritten for each input. */
static const char *as_temp_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(input_path, sizeof input_path, "%s/fuzz-nsys-XXXXXX",
                 dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
        CHECK((fd = mkstemp(input_path)) >= 0);
        atexit(remove_input);
    }
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    return input_path;
}

/* The events the metadata's import counts say the profile holds. */
static uint64_t counted(const char *metadata)
{
    static const char *const kinds[] = { "regions", "steps", "kernels", "copies", "memsets",
                                         "syncs", "api_calls", "memory_samples", "marks" };
    cJSON *meta = cJSON_Parse(metadata);
    CHECK(meta != NULL);
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), "counts");
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const cJSON *v = cJSON_GetObjectItem(c, kinds[i]);
        CHECK(cJSON_IsNumber(v));
        n += (uint64_t)v->valuedouble;
    }
    cJSON_Delete(meta);
    return n;
}

/* Reads the profile at path to its end: a clean file holding the events
 * its metadata counts. */
static void read_back(const char *path)
{
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(prof_reader_open(path, &r, &err) == PROF_OK);
    prof_event ev;
    uint64_t n = 0;
    int rc;
    while ((rc = prof_reader_next(r, &ev)) == 1) {
        CHECK(ev.name != NULL);
        n += ev.type != PROF_EV_THREAD && ev.type != PROF_EV_ATTR;
    }
    CHECK(rc == 0);
    prof_read_status st;
    prof_reader_status(r, &st);
    CHECK(st.clean);
    CHECK(n == counted(prof_reader_metadata(r)));
    prof_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *trace = as_temp_file(data, size);
    int fd = memfd_create("fuzz-prof", 0);
    CHECK(fd >= 0);
    int keep = dup(fd); /* the sink closes fd; the profile is read through keep */
    CHECK(keep >= 0);
    import_sink *s = NULL;
    prof_error err = { PROF_OK, "" };
    CHECK(sink_open(&s, fd, "nsys", "fuzz.sqlite", &err) == PROF_OK);
    import_options o = { 0 };
    prof_err e = nsys_read(trace, s, &o, &err);
    if (e != PROF_OK) {
        CHECK(e == PROF_ERR_NOT_PROF || e == PROF_ERR_CORRUPT || e == PROF_ERR_IO ||
              e == PROF_ERR_NOMEM);
        CHECK(err.code == e && err.message[0] != '\0');
        sink_abandon(s);
        close(keep);
        return 0;
    }
    CHECK(sink_close(s, &err) == PROF_OK);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", keep);
    read_back(path);
    close(keep);
    return 0;
}
