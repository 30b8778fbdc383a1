/* import_nsys.c - Nsight Systems SQLite exports imported through
 * import_trace() and read back through the real reader and model: the
 * fixture export of tests/support/nsys_fixture.c (exact counts, names,
 * region depths and kinds, GPU busy time per device, syncs on the thread
 * that waited, devices and their capacity, the run's metadata), its
 * variants (older columns, a newer device map, two processes, optional
 * tables absent), a database cut short at every page, a database that is
 * not an export, a file that is not one, and, when ../shared/traces/ is
 * there, the real export against figures computed by SQL on it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "format/format.h"
#include "import/import.h"
#include "model/profile.h"
#include "model_util.h"
#include "nsys_fixture.h"
#include "prof.h"

#define MS 1000000ull
#define REAL_EXPORT "../shared/traces/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(import_nsys, .fini = teardown);

/* Imports trace into out; the error code, with *counts and *err. */
static prof_err import(const char *trace, const char *out, import_counts *counts,
                       prof_error *err)
{
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    memset(counts, 0, sizeof *counts);
    *err = (prof_error){ PROF_OK, "" };
    return import_trace(trace, fd, NULL, counts, err);
}

/* Writes the fixture variant, imports it and loads the profile. */
static void import_fixture(unsigned flags, import_counts *c, profile_model *m)
{
    const char *trace = fx_path("run.sqlite"), *out = fx_path("run.prof");
    cr_assert_eq(nsys_fixture_write(trace, flags), 0);
    prof_error err;
    cr_assert_eq(import(trace, out, c, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(profile_model_load(out, NULL, m, NULL, NULL, &err), PROF_OK, "%s", err.message);
}




/* ---- the fixture export ---------------------------------------------------------------- */

Test(import_nsys, counts_what_the_export_holds)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    cr_expect_eq(c.kernels, NSYS_FX_KERNELS);
    cr_expect_eq(c.copies, NSYS_FX_COPIES);
    cr_expect_eq(c.memsets, NSYS_FX_MEMSETS);
    cr_expect_eq(c.api_calls, NSYS_FX_API_CALLS);
    cr_expect_eq(c.syncs, NSYS_FX_SYNCS);
    cr_expect_eq(c.regions, NSYS_FX_REGIONS);
    cr_expect_eq(c.marks, NSYS_FX_MARKS);
    cr_expect_eq(c.skipped, NSYS_FX_BACKTRACES + NSYS_FX_UNENDED);
    cr_expect_eq(c.unknown, NSYS_FX_UNKNOWN);
    cr_expect_eq(c.unplaced, 0);
    cr_expect_eq(c.clamped, 0);
    cr_expect_eq(c.reordered, 0);
    cr_expect_eq(c.damaged, 0);
    cr_expect_eq(m.region_events, NSYS_FX_REGIONS);
    cr_expect_eq(m.sync_records, NSYS_FX_SYNCS);
    cr_expect(m.status.clean);
    profile_model_free(&m);
}

Test(import_nsys, gpu_activity_per_device)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    cr_assert_eq(m.ngpus, 2);
    const model_gpu_device *g0 = mu_gpu(&m, 0), *g1 = mu_gpu(&m, 1);
    cr_expect_eq(g0->kernels, 3);
    cr_expect_eq(g1->kernels, 1);
    cr_expect_eq(g0->busy_ns, NSYS_FX_BUSY0_NS, "%llu", (unsigned long long)g0->busy_ns);
    cr_expect_eq(g1->busy_ns, NSYS_FX_BUSY1_NS, "%llu", (unsigned long long)g1->busy_ns);
    cr_expect_eq(g0->memcpy_count, 2);
    cr_expect_eq(g0->memcpy_bytes, 80ull << 20);
    cr_expect_eq(g1->memcpy_bytes, 8ull << 20);
    cr_expect_eq(g0->memset_count, 1);
    /* kernels by their demangled name */
    const model_op *gemm = mu_op(&m, NSYS_FX_GEMM), *relu = mu_op(&m, NSYS_FX_RELU);
    cr_expect_eq(gemm->kind, MODEL_KIND_GPU);
    cr_expect_eq(gemm->calls, 3);
    cr_expect_eq(gemm->incl_ns, 28 * MS);
    cr_expect_eq(relu->calls, 1);
    profile_model_free(&m);
}

Test(import_nsys, ranges_nest_with_their_kinds)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    static const struct {
        const char *name;
        uint32_t kind;
        uint64_t incl_ms, self_ms;
    } want[] = {
        { "step", PROF_KIND_COMPUTE, 50, 5 },       { "forward", PROF_KIND_COMPUTE, 28, 20 },
        { "loss", PROF_KIND_COMPUTE, 8, 8 },        { "backward", PROF_KIND_COMPUTE, 17, 13 },
        { NSYS_FX_MPI, PROF_KIND_COMM, 4, 4 },      { NSYS_FX_DATALOADER, PROF_KIND_DATA, 30, 16 },
        { "decode", PROF_KIND_COMPUTE, 14, 14 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const model_op *o = mu_op(&m, want[i].name);
        cr_expect_eq(o->calls, 1, "%s", want[i].name);
        cr_expect_eq(o->kind, want[i].kind, "%s kind %u", want[i].name, o->kind);
        cr_expect_eq(o->incl_ns, want[i].incl_ms * MS, "%s incl", want[i].name);
        cr_expect_eq(o->self_ns, want[i].self_ms * MS, "%s self", want[i].name);
    }
    cr_expect_null(mu_find_op(&m, "tail"), "a range never ended is left out");
    profile_model_free(&m);
}

/* Each region's depth, each sync's thread and kind, as the reader gives them. */
Test(import_nsys, depths_and_syncs_on_their_threads)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    profile_model_free(&m);
    prof_reader *r;
    prof_error err;
    cr_assert_eq(prof_reader_open(fx_path("run.prof"), &r, &err), PROF_OK, "%s", err.message);
    static const struct { const char *name; uint32_t depth; } depth[] = {
        { "step", 0 }, { "forward", 1 }, { "loss", 2 }, { "backward", 1 }, { NSYS_FX_MPI, 2 },
        { NSYS_FX_DATALOADER, 0 }, { "decode", 1 },
    };
    int seen = 0, syncs_main = 0, syncs_worker = 0, by_kind[6] = { 0 }, marks = 0, apis = 0;
    prof_event ev;
    while (prof_reader_next(r, &ev) > 0) {
        const char *t = ev.thread == PROF_THREAD_GPU ? "" : prof_reader_thread_name(r, ev.thread);
        if (ev.type == PROF_EV_REGION)
            for (size_t i = 0; i < sizeof depth / sizeof depth[0]; i++)
                if (strcmp(ev.name, depth[i].name) == 0) {
                    cr_expect_eq(ev.depth, depth[i].depth, "%s depth %u", ev.name, ev.depth);
                    seen++;
                }
        if (ev.type == PROF_EV_SYNC) {
            syncs_main += strcmp(t, NSYS_FX_MAIN) == 0;
            syncs_worker += strcmp(t, NSYS_FX_WORKER) == 0;
            if (ev.subkind < 6)
                by_kind[ev.subkind]++;
        }
        if (ev.type == PROF_EV_MARK) {
            cr_expect_str_eq(ev.name, "checkpoint");
            cr_expect_str_eq(t, NSYS_FX_MAIN);
            marks++;
        }
        if (ev.type == PROF_EV_API) {
            cr_expect_null(strstr(ev.name, "_v"), "version suffix kept: %s", ev.name);
            apis++;
        }
    }
    prof_reader_close(r);
    cr_expect_eq(seen, 7);
    cr_expect_eq(marks, NSYS_FX_MARKS);
    cr_expect_eq(apis, NSYS_FX_API_CALLS);
    cr_expect_eq(syncs_main, 3, "cudaDeviceSynchronize and two cudaMemcpy");
    cr_expect_eq(syncs_worker, 1, "cudaStreamSynchronize");
    cr_expect_eq(by_kind[PROF_SYNC_DEVICE], 1);
    cr_expect_eq(by_kind[PROF_SYNC_STREAM], 1);
    cr_expect_eq(by_kind[PROF_SYNC_MEMCPY], 2);
}

/* With sync records, and without (the calls that waited stand for them). */
Test(import_nsys, syncs_sited_in_their_ranges)
{
    const unsigned variants[] = { 0, NSYS_FX_NO_SYNC };
    const char *sites[] = { "loss", "forward", "backward", "decode" };
    for (size_t v = 0; v < 2; v++) {
        import_counts c;
        profile_model m;
        import_fixture(variants[v], &c, &m);
        cr_expect_eq(m.nsync_sites, 4);
        for (size_t i = 0; i < 4; i++) {
            const model_op *o = mu_op(&m, sites[i]);
            int found = 0;
            for (size_t k = 0; k < m.nsync_sites; k++)
                if (m.sync_sites[k].op != MODEL_NONE && &m.ops[m.sync_sites[k].op] == o) {
                    cr_expect_eq(m.sync_sites[k].count, 1, "%s", sites[i]);
                    found = 1;
                }
            cr_expect(found, "variant %u: no sync in %s", variants[v], sites[i]);
        }
        profile_model_free(&m);
    }
}

Test(import_nsys, threads_with_activity_by_their_names)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    cr_expect_eq(m.nthreads, 2, "the named thread without activity is not made");
    cr_expect_not_null(mu_thread_named(&m, NSYS_FX_MAIN));
    cr_expect_not_null(mu_thread_named(&m, NSYS_FX_WORKER), "the last of two names");
    cr_expect_null(mu_thread_named(&m, NSYS_FX_IDLE));
    profile_model_free(&m);
}

static cJSON *metadata(const profile_model *m)
{
    cJSON *meta = cJSON_Parse(m->metadata);
    cr_assert_not_null(meta);
    return meta;
}

static void expect_device(const cJSON *devices, int i, const char *name, uint64_t bytes)
{
    const cJSON *d = cJSON_GetArrayItem(devices, i);
    cr_assert_not_null(d);
    cr_expect_eq(cJSON_GetObjectItem(d, "index")->valuedouble, i);
    cr_expect_str_eq(cJSON_GetObjectItem(d, "name")->valuestring, name);
    cr_expect_eq((uint64_t)cJSON_GetObjectItem(d, "memory_bytes")->valuedouble, bytes);
}

Test(import_nsys, the_run_in_the_metadata)
{
    import_counts c;
    profile_model m;
    import_fixture(0, &c, &m);
    cJSON *meta = metadata(&m);
    const cJSON *devices = cJSON_GetObjectItem(meta, "devices");
    cr_assert_eq(cJSON_GetArraySize(devices), 2);
    expect_device(devices, 0, NSYS_FX_GPU0, NSYS_FX_GPU0_BYTES);
    expect_device(devices, 1, NSYS_FX_GPU1, NSYS_FX_GPU1_BYTES);
    cr_expect_str_eq(cJSON_GetObjectItem(meta, "host")->valuestring, NSYS_FX_HOST);
    cr_expect_eq(cJSON_GetObjectItem(meta, "pid")->valuedouble, NSYS_FX_PID);
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "argv"), 0)->valuestring,
                     NSYS_FX_PROCESS);
    const cJSON *imp = cJSON_GetObjectItem(meta, "import");
    cr_expect_str_eq(cJSON_GetObjectItem(imp, "source")->valuestring, "nsys");
    const cJSON *facts = cJSON_GetObjectItem(imp, "facts");
    cr_expect_str_eq(cJSON_GetObjectItem(facts, "nsys_version")->valuestring, NSYS_FX_VERSION);
    cr_expect_null(cJSON_GetObjectItem(facts, "processes"), "one process");
    cr_expect_null(cJSON_GetObjectItem(imp, "damaged"));
    /* the wall clock: session start plus trace time */
    double epoch = cJSON_GetObjectItem(meta, "start_epoch_ns")->valuedouble;
    cr_expect_eq((int64_t)epoch + (int64_t)(mu_gpu(&m, 0)->first_ns),
                 NSYS_FX_EPOCH_NS + 11200000ll, "the memset begins 11.2 ms into the session");
    cJSON_Delete(meta);
    profile_model_free(&m);
}

/* ---- variants -------------------------------------------------------------------------- */

Test(import_nsys, older_columns)
{
    import_counts c;
    profile_model m;
    import_fixture(NSYS_FX_OLD_COLUMNS, &c, &m);
    cr_expect_eq(mu_op(&m, NSYS_FX_GEMM_SHORT)->calls, 3, "kernels by shortName");
    cr_expect_eq(mu_op(&m, NSYS_FX_RELU_SHORT)->calls, 1);
    cr_expect_eq(mu_op(&m, "forward")->calls, 1, "NVTX text without textId");
    cr_expect_eq(c.regions, NSYS_FX_REGIONS);
    cr_expect_eq(c.api_calls, NSYS_FX_API_CALLS);
    cr_expect_eq(c.skipped, NSYS_FX_UNENDED, "no backtraces without eventClass");
    profile_model_free(&m);
}

Test(import_nsys, devices_through_the_cuda_device_map)
{
    import_counts c;
    profile_model m;
    import_fixture(NSYS_FX_CUDA_DEVICE_MAP, &c, &m);
    cJSON *meta = metadata(&m);
    const cJSON *devices = cJSON_GetObjectItem(meta, "devices");
    cr_assert_eq(cJSON_GetArraySize(devices), 2);
    expect_device(devices, 0, NSYS_FX_GPU1, NSYS_FX_GPU1_BYTES);
    expect_device(devices, 1, NSYS_FX_GPU0, NSYS_FX_GPU0_BYTES);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

Test(import_nsys, two_processes)
{
    import_counts c;
    profile_model m;
    import_fixture(NSYS_FX_TWO_PROCESSES, &c, &m);
    cr_expect_eq(c.kernels, NSYS_FX_KERNELS + 1);
    cr_expect_eq(c.api_calls, NSYS_FX_API_CALLS + 1);
    cr_expect_eq(m.nthreads, 3);
    cJSON *meta = metadata(&m);
    cr_expect_eq(cJSON_GetObjectItem(meta, "pid")->valuedouble, NSYS_FX_PID, "the first");
    const cJSON *facts = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), "facts");
    cr_expect_eq(cJSON_GetObjectItem(facts, "processes")->valuedouble, 2);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

Test(import_nsys, optional_tables_absent)
{
    import_counts c;
    profile_model m;
    import_fixture(NSYS_FX_NO_NVTX | NSYS_FX_NO_SYNC | NSYS_FX_NO_MEMSET | NSYS_FX_NO_RUN_INFO,
                   &c, &m);
    cr_expect_eq(c.kernels, NSYS_FX_KERNELS);
    cr_expect_eq(c.copies, NSYS_FX_COPIES);
    cr_expect_eq(c.memsets, 0);
    cr_expect_eq(c.regions, 0);
    cr_expect_eq(c.syncs, NSYS_FX_SYNCS, "the copies, and the sync calls without records");
    cr_expect_eq(c.api_calls, NSYS_FX_API_CALLS);
    cr_expect_eq(m.ngpus, 2);
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, NSYS_FX_BUSY0_NS - 300000, "without the memset");
    cr_expect_null(mu_thread_named(&m, NSYS_FX_MAIN));
    cJSON *meta = metadata(&m);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(meta, "devices")), 0);
    cr_expect_eq(cJSON_GetObjectItem(meta, "pid")->valuedouble, NSYS_FX_PID, "from globalTid");
    const cJSON *facts = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), "facts");
    cr_expect_eq(cJSON_GetObjectItem(facts, "syncs_from_calls")->valuedouble,
                 NSYS_FX_SYNC_RECORDS);
    cJSON_Delete(meta);
    profile_model_free(&m);
}

Test(import_nsys, no_cuda_at_all)
{
    import_counts c;
    profile_model m;
    const char *trace = fx_path("nvtx.sqlite");
    cr_assert_eq(nsys_fixture_write(trace, 0), 0);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(trace, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db,
                              "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
                              "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY;"
                              "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;"
                              "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;"
                              "DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    prof_error err;
    cr_assert_eq(import(trace, fx_path("nvtx.prof"), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.regions, NSYS_FX_REGIONS);
    cr_expect_eq(c.kernels + c.api_calls + c.syncs, 0);
    cr_assert_eq(profile_model_load(fx_path("nvtx.prof"), NULL, &m, NULL, NULL, &err), PROF_OK);
    cr_expect_eq(m.ngpus, 0);
    profile_model_free(&m);
}

/* ---- what is not an export, or not all of one ------------------------------------------ */

Test(import_nsys, an_sqlite_database_that_is_no_export)
{
    const char *trace = fx_path("runs.sqlite");
    cr_assert_eq(nsys_fixture_write_foreign(trace), 0);
    import_counts c;
    prof_error err;
    cr_expect_eq(import(trace, fx_path("runs.prof"), &c, &err), PROF_ERR_NOT_PROF);
    cr_expect(strstr(err.message, "not an Nsight Systems export"), "%s", err.message);
}

Test(import_nsys, sqlite_magic_then_garbage)
{
    const char *trace = fx_path("garbage.sqlite");
    FILE *f = fopen(trace, "wb");
    cr_assert_not_null(f);
    char page[1024] = "SQLite format 3";
    memset(page + 16, 0x5a, sizeof page - 16);
    fwrite(page, 1, sizeof page, f);
    fclose(f);
    import_counts c;
    prof_error err;
    prof_err e = import(trace, fx_path("garbage.prof"), &c, &err);
    cr_expect(e == PROF_ERR_NOT_PROF || e == PROF_ERR_CORRUPT, "%d: %s", e, err.message);
    cr_expect(err.message[0] != '\0');
}

/* Cut after every page: each cut is either read up to the damage or
 * refused with a clear error (the schema's own pages cut), and what is
 * read loads. */
Test(import_nsys, cut_short_anywhere)
{
    char trace[256], whole[256], prof[256]; /* fx_path's buffers are reused */
    snprintf(trace, sizeof trace, "%s", fx_path("cut.sqlite"));
    snprintf(whole, sizeof whole, "%s", fx_path("whole.sqlite"));
    snprintf(prof, sizeof prof, "%s", fx_path("cut.prof"));
    cr_assert_eq(nsys_fixture_write(whole, 0), 0);
    struct stat st;
    cr_assert_eq(stat(whole, &st), 0);
    FILE *in = fopen(whole, "rb");
    cr_assert_not_null(in);
    char *bytes = malloc((size_t)st.st_size);
    cr_assert_eq(fread(bytes, 1, (size_t)st.st_size, in), (size_t)st.st_size);
    fclose(in);
    int damaged = 0, refused = 0;
    uint64_t partial = 0; /* most ranges of a table read up to its damage */
    for (off_t cut = 512; cut < st.st_size; cut += 512) {
        FILE *out = fopen(trace, "wb");
        fwrite(bytes, 1, (size_t)cut, out);
        fclose(out);
        import_counts c;
        prof_error err;
        prof_err e = import(trace, prof, &c, &err);
        if (e != PROF_OK) {
            cr_expect(e == PROF_ERR_CORRUPT || e == PROF_ERR_NOT_PROF, "cut %lld: %s",
                      (long long)cut, err.message);
            refused++;
            continue;
        }
        damaged += c.damaged;
        if (c.damaged && c.regions < NSYS_FX_REGIONS && c.regions > partial)
            partial = c.regions;
        profile_model m;
        cr_expect_eq(profile_model_load(prof, NULL, &m, NULL, NULL, &err), PROF_OK,
                     "cut %lld: %s", (long long)cut, err.message);
        if (c.damaged) {
            cJSON *meta = metadata(&m);
            const cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "import"), "damaged");
            cr_expect(cJSON_IsString(d) && strlen(d->valuestring) > 0, "cut %lld", (long long)cut);
            cJSON_Delete(meta);
        }
        profile_model_free(&m);
    }
    free(bytes);
    cr_expect_gt(damaged, 0, "some cuts are read up to the damage");
    cr_expect_gt(partial, 0, "a table cut in its middle keeps its rows before the cut");
    cr_log_info("%d cuts read with damage, %d refused", damaged, refused);
}

Test(import_nsys, a_damaged_page_keeps_the_rest)
{
    const char *trace = fx_path("damaged.sqlite");
    cr_assert_eq(nsys_fixture_write(trace, 0), 0);
    /* the root page of the kernel table, overwritten */
    sqlite3 *db;
    sqlite3_stmt *q;
    cr_assert_eq(sqlite3_open(trace, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT rootpage FROM sqlite_master "
                                    "WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'",
                                    -1, &q, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
    long page = (long)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    FILE *f = fopen(trace, "r+b");
    cr_assert_not_null(f);
    char junk[512];
    memset(junk, 0xee, sizeof junk);
    cr_assert_eq(fseek(f, (page - 1) * 512, SEEK_SET), 0);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    import_counts c;
    prof_error err;
    cr_assert_eq(import(trace, fx_path("damaged.prof"), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.damaged, 1);
    cr_expect_eq(c.kernels, 0);
    cr_expect_eq(c.copies, NSYS_FX_COPIES, "the other tables are read");
    cr_expect_eq(c.regions, NSYS_FX_REGIONS);
}

Test(import_nsys, names_that_look_like_uri_syntax)
{
    const char *trace = fx_path("a?b#c%20d e.sqlite");
    cr_assert_eq(nsys_fixture_write(trace, 0), 0);
    import_counts c;
    prof_error err;
    cr_expect_eq(import(trace, fx_path("uri.prof"), &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.kernels, NSYS_FX_KERNELS);
}

Test(import_nsys, unreadable)
{
    import_sink *s;
    prof_error err = { PROF_OK, "" };
    int fd = open(fx_path("none.prof"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_eq(sink_open(&s, fd, "nsys", "missing.sqlite", &err), PROF_OK);
    cr_expect_eq(nsys_read(fx_path("missing.sqlite"), s, NULL, &err), PROF_ERR_IO);
    cr_expect(strstr(err.message, "cannot open"), "%s", err.message);
    sink_abandon(s);
}

/* ---- long names on many rows ----------------------------------------------------------- */

/* A VFS over the default one that counts the bytes SQLite writes to its
 * temporary files (its sorter's spills) and refuses them past a budget: a
 * sort that carried the names would write each row's copy of one. */
#define TEMP_BUDGET (8ll << 20)

typedef struct temp_file {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, just after this */
} temp_file;

static sqlite3_vfs *real_vfs;
static sqlite3_int64 temp_written;

static sqlite3_file *real_of(sqlite3_file *f)
{
    return ((temp_file *)f)->real;
}
static int t_close(sqlite3_file *f)
{
    return real_of(f)->pMethods->xClose(real_of(f));
}
static int t_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
    return real_of(f)->pMethods->xRead(real_of(f), p, n, off);
}
static int t_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    temp_written += n;
    if (temp_written > TEMP_BUDGET)
        return SQLITE_FULL;
    return real_of(f)->pMethods->xWrite(real_of(f), p, n, off);
}
static int t_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return real_of(f)->pMethods->xTruncate(real_of(f), size);
}
static int t_sync(sqlite3_file *f, int flags)
{
    return real_of(f)->pMethods->xSync(real_of(f), flags);
}
static int t_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return real_of(f)->pMethods->xFileSize(real_of(f), size);
}
static int t_lock(sqlite3_file *f, int level)
{
    return real_of(f)->pMethods->xLock(real_of(f), level);
}
static int t_unlock(sqlite3_file *f, int level)
{
    return real_of(f)->pMethods->xUnlock(real_of(f), level);
}
static int t_reserved(sqlite3_file *f, int *out)
{
    return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}
static int t_control(sqlite3_file *f, int op, void *arg)
{
    return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}
static int t_sector(sqlite3_file *f)
{
    return real_of(f)->pMethods->xSectorSize(real_of(f));
}
static int t_device(sqlite3_file *f)
{
    return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}

static const sqlite3_io_methods temp_methods = {
    1, t_close, t_read, t_write, t_truncate, t_sync, t_size, t_lock, t_unlock, t_reserved,
    t_control, t_sector, t_device, NULL, NULL, NULL, NULL, NULL, NULL,
};

/* Temporary files through temp_methods; the database itself as it was. */
static int t_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    int temp = flags & (SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TEMP_DB |
                        SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL);
    if (!temp)
        return real_vfs->xOpen(real_vfs, name, f, flags, out);
    temp_file *t = (temp_file *)f;
    t->real = (sqlite3_file *)(t + 1);
    t->base.pMethods = NULL;
    int rc = real_vfs->xOpen(real_vfs, name, t->real, flags, out);
    if (rc == SQLITE_OK)
        t->base.pMethods = &temp_methods;
    return rc;
}

static sqlite3_vfs counting_vfs;

static void count_temp_writes(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    cr_assert_not_null(real_vfs);
    counting_vfs = *real_vfs;
    counting_vfs.zName = "counting";
    counting_vfs.szOsFile = (int)sizeof(temp_file) + real_vfs->szOsFile;
    counting_vfs.xOpen = t_open;
    counting_vfs.pAppData = NULL;
    temp_written = 0;
    cr_assert_eq(sqlite3_vfs_register(&counting_vfs, 1), SQLITE_OK);
}

#define LONG_ROWS 3000
#define LONG_BYTES (1 << 20)

/* One 1 MiB name on 3,000 kernels, 3,000 ranges and the main thread:
 * sorting joined names wrote 3 GiB of temporary files (a 100 MB one, 300
 * GB); the sort carries ids and each name is read once, cut as the format
 * cuts names. */
Test(import_nsys, one_long_name_on_thousands_of_rows)
{
    const char *trace = fx_path("long.sqlite");
    cr_assert_eq(nsys_fixture_write(trace, 0), 0);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(trace, &db), SQLITE_OK);
    char sql[2048];
    snprintf(sql, sizeof sql,
             "INSERT INTO StringIds VALUES (9999, replace(hex(zeroblob(%d)), '0', 'k'));"
             "UPDATE ThreadNames SET nameId = 9999 WHERE nameId = (SELECT id FROM StringIds "
             "WHERE value = '" NSYS_FX_MAIN "');"
             "CREATE TEMP TABLE n AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
             "FROM c WHERE i < %d) SELECT i FROM c;"
             "CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;"
             "UPDATE k SET demangledName = 9999, shortName = 9999, correlationId = NULL;"
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT k.* FROM k, n;"
             "CREATE TEMP TABLE r AS SELECT * FROM NVTX_EVENTS WHERE eventType = 59 AND "
             "end IS NOT NULL LIMIT 1;"
             "UPDATE r SET text = NULL, textId = 9999, domainId = NULL;"
             "INSERT INTO NVTX_EVENTS SELECT r.* FROM r, n;"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 1000000000 + rowid * 1000, "
             "end = 1000000000 + rowid * 1000 + 500 WHERE demangledName = 9999;"
             "UPDATE NVTX_EVENTS SET start = 1000000000 + rowid * 1000, "
             "end = 1000000000 + rowid * 1000 + 500 WHERE textId = 9999;",
             LONG_BYTES / 2, LONG_ROWS);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);
    count_temp_writes();
    import_counts c;
    prof_error err;
    const char *out = fx_path("long.prof");
    cr_assert_eq(import(trace, out, &c, &err), PROF_OK, "%s", err.message);
    sqlite3_vfs_unregister(&counting_vfs);
    cr_expect_lt(temp_written, 1 << 20, "%lld bytes of temporary files", (long long)temp_written);
    cr_expect_eq(c.damaged, 0);
    cr_expect_eq(c.kernels, NSYS_FX_KERNELS + LONG_ROWS);
    cr_expect_eq(c.regions, NSYS_FX_REGIONS + LONG_ROWS);
    profile_model m;
    cr_assert_eq(profile_model_load(out, NULL, &m, NULL, NULL, &err), PROF_OK, "%s", err.message);
    char *cut = malloc(PF_STRING_MAX + 1);
    cr_assert_not_null(cut);
    memset(cut, 'k', PF_STRING_MAX);
    cut[PF_STRING_MAX] = '\0';
    int kernels = 0, ranges = 0; /* an op of each kind, by the name cut at PF_STRING_MAX */
    for (size_t i = 0; i < m.nops; i++) {
        const model_op *o = &m.ops[i];
        if (strcmp(o->name, cut) != 0 || o->calls != LONG_ROWS)
            continue;
        kernels += o->kind == MODEL_KIND_GPU;
        ranges += o->kind == PROF_KIND_COMPUTE;
    }
    cr_expect_eq(kernels, 1);
    cr_expect_eq(ranges, 1);
    cr_expect_not_null(mu_thread_named(&m, cut), "the thread's name, cut too");
    free(cut);
    profile_model_free(&m);
}

/* ---- the real export, when there ------------------------------------------------------- */

static int64_t sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Busy time of device 0 computed from the export's own rows: the union of
 * kernel, copy and memset intervals, by a sweep over them in start order. */
static uint64_t sql_busy(sqlite3 *db)
{
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                    "WHERE deviceId = 0 UNION ALL "
                                    "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                                    "WHERE deviceId = 0 UNION ALL "
                                    "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET "
                                    "WHERE deviceId = 0 ORDER BY 1",
                                    -1, &st, NULL),
                 SQLITE_OK);
    uint64_t busy = 0;
    int64_t lo = 0, hi = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (s > hi) {
            busy += hi > lo ? (uint64_t)(hi - lo) : 0;
            lo = s;
            hi = e;
        } else if (e > hi) {
            hi = e;
        }
    }
    busy += hi > lo ? (uint64_t)(hi - lo) : 0;
    sqlite3_finalize(st);
    return busy;
}

Test(import_nsys, the_real_export_against_sql)
{
    if (access(REAL_EXPORT, R_OK) != 0)
        cr_skip_test("%s is not there", REAL_EXPORT);
    import_counts c;
    prof_error err;
    const char *out = fx_path("real.prof");
    cr_assert_eq(import(REAL_EXPORT, out, &c, &err), PROF_OK, "%s", err.message);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2("file:" REAL_EXPORT "?immutable=1", &db,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL),
                 SQLITE_OK);
    cr_expect_eq((int64_t)c.kernels,
                 sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    cr_expect_eq((int64_t)c.copies, sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
    cr_expect_eq((int64_t)c.api_calls, sql_int(db, "SELECT count(*) FROM "
                                                   "CUPTI_ACTIVITY_KIND_RUNTIME "
                                                   "WHERE eventClass <> 67"));
    cr_expect_eq((int64_t)c.regions, sql_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE "
                                                 "eventType IN (59, 60) AND end IS NOT NULL"));
    /* sync records, and the runtime calls that copy synchronously */
    cr_expect_eq((int64_t)c.syncs,
                 sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") +
                     sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                 "JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass "
                                 "<> 67 AND s.value IN ('cudaMemcpy_v3020', 'cudaMemcpy')"));
    profile_model m;
    cr_assert_eq(profile_model_load(out, NULL, &m, NULL, NULL, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(mu_gpu(&m, 0)->busy_ns, sql_busy(db));
    cr_expect_eq((int64_t)mu_gpu(&m, 0)->kernels, (int64_t)c.kernels);
    profile_model_free(&m);
    sqlite3_close(db);
}

/* An export in WAL mode whose writer has not checkpointed (still running,
 * or dead first): its last rows are only in FILE-wal. Opened immutable,
 * SQLite ignores the log and half the kernels went missing without a word;
 * they are read through it. */
Test(import_nsys, rows_waiting_in_the_write_ahead_log_are_read)
{
    const char *trace = fx_path("wal.sqlite"), *out = fx_path("wal.prof");
    cr_assert_eq(nsys_fixture_write(trace, 0), 0);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(trace, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; "
                                  "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM "
                                  "CUPTI_ACTIVITY_KIND_KERNEL",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    struct stat st;
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", trace);
    cr_assert(stat(wal, &st) == 0 && st.st_size > 0, "the rows wait in the log");
    import_counts c;
    prof_error err;
    cr_assert_eq(import(trace, out, &c, &err), PROF_OK, "%s", err.message);
    cr_expect_eq(c.kernels, 2 * NSYS_FX_KERNELS);
    sqlite3_close(db);
}
