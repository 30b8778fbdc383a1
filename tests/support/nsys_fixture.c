/* nsys_fixture.c - small Nsight Systems SQLite exports (see nsys_fixture.h).
 * The tables are declared column for column as Nsight Systems 2022.2
 * declares them in a real export (formats/nsys-import.md names the file),
 * with Nsight's types and NOT NULL constraints, so the importer meets the
 * schema it meets in the field; a row names the columns it fills and the
 * other NOT NULL ones get 0. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "nsys_fixture.h"

typedef struct coldef {
    const char *name, *decl;
    unsigned absent; /* variants without the column */
} coldef;

typedef struct tabledef {
    const char *name;
    unsigned absent; /* variants without the table  */
    unsigned only;   /* when not 0: the variants with it */
    coldef cols[44];
} tabledef;

#define NN "INTEGER   NOT NULL"
#define IN "INTEGER"
#define TX "TEXT"

enum {
    TB_STRINGS, TB_THREADS, TB_PROCESSES, TB_SESSION, TB_GPU, TB_CUDA_DEVICE, TB_ENV, TB_META,
    TB_KERNEL, TB_MEMCPY, TB_MEMSET, TB_RUNTIME, TB_SYNC, TB_NVTX, TB_COUNT
};

#define RUN_INFO NSYS_FX_NO_RUN_INFO

static const tabledef tables[TB_COUNT] = {
    [TB_STRINGS] = { "StringIds", 0, 0,
        { { "id", "INTEGER   NOT NULL   PRIMARY KEY", 0 }, { "value", "TEXT      NOT NULL", 0 } } },
    [TB_THREADS] = { "ThreadNames", RUN_INFO, 0,
        { { "nameId", "INTEGER   NOT NULL   REFERENCES StringIds(id)", 0 },
          { "priority", IN, 0 }, { "globalTid", IN, 0 } } },
    [TB_PROCESSES] = { "PROCESSES", RUN_INFO, 0,
        { { "globalPid", IN, 0 }, { "pid", IN, 0 }, { "name", TX, 0 } } },
    [TB_SESSION] = { "TARGET_INFO_SESSION_START_TIME", RUN_INFO, 0,
        { { "utcEpochNs", IN, 0 }, { "utcTime", TX, 0 }, { "localTime", TX, 0 } } },
    [TB_GPU] = { "TARGET_INFO_GPU", RUN_INFO, 0,
        { { "vmId", NN, 0 }, { "id", NN, 0 }, { "name", TX, 0 }, { "busLocation", TX, 0 },
          { "isDiscrete", IN, 0 }, { "l2CacheSize", IN, 0 }, { "totalMemory", IN, 0 },
          { "memoryBandwidth", IN, 0 }, { "clockRate", IN, 0 }, { "smCount", IN, 0 },
          { "pwGpuId", IN, 0 }, { "uuid", TX, 0 }, { "luid", IN, 0 }, { "chipName", TX, 0 },
          { "cuDevice", IN, 0 }, { "ctxswDevPath", TX, 0 }, { "ctrlDevPath", TX, 0 },
          { "revision", IN, 0 }, { "nodeMask", IN, 0 }, { "constantMemory", IN, 0 },
          { "maxIPC", IN, 0 }, { "maxRegistersPerBlock", IN, 0 },
          { "maxShmemPerBlock", IN, 0 }, { "maxShmemPerBlockOptin", IN, 0 },
          { "maxShmemPerSm", IN, 0 }, { "maxRegistersPerSm", IN, 0 },
          { "threadsPerWarp", IN, 0 }, { "asyncEngines", IN, 0 }, { "maxWarpsPerSm", IN, 0 },
          { "maxBlocksPerSm", IN, 0 }, { "maxThreadsPerBlock", IN, 0 },
          { "maxBlockDimX", IN, 0 }, { "maxBlockDimY", IN, 0 }, { "maxBlockDimZ", IN, 0 },
          { "maxGridDimX", IN, 0 }, { "maxGridDimY", IN, 0 }, { "maxGridDimZ", IN, 0 },
          { "computeMajor", IN, 0 }, { "computeMinor", IN, 0 }, { "smMajor", IN, 0 },
          { "smMinor", IN, 0 } } },
    /* as newer exports (2023 and later) declare it */
    [TB_CUDA_DEVICE] = { "TARGET_INFO_CUDA_DEVICE", RUN_INFO, NSYS_FX_CUDA_DEVICE_MAP,
        { { "gpuId", IN, 0 }, { "cudaId", NN, 0 }, { "pid", NN, 0 }, { "uuid", TX, 0 },
          { "numMultiprocessors", IN, 0 } } },
    [TB_ENV] = { "TARGET_INFO_SYSTEM_ENV", RUN_INFO, 0,
        { { "globalVid", NN, 0 }, { "devStateName", "TEXT      NOT NULL", 0 },
          { "name", "TEXT      NOT NULL", 0 }, { "nameEnum", NN, 0 },
          { "value", "TEXT      NOT NULL", 0 } } },
    [TB_META] = { "EXPORT_META_DATA", RUN_INFO, 0,
        { { "name", "TEXT      NOT NULL", 0 }, { "value", TX, 0 } } },
    [TB_KERNEL] = { "CUPTI_ACTIVITY_KIND_KERNEL", 0, 0,
        { { "start", NN, 0 }, { "end", NN, 0 }, { "deviceId", NN, 0 }, { "contextId", NN, 0 },
          { "streamId", NN, 0 },
          { "correlationId", "INTEGER   REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)", 0 },
          { "globalPid", IN, 0 }, { "demangledName", NN, NSYS_FX_OLD_COLUMNS },
          { "shortName", NN, 0 }, { "mangledName", IN, NSYS_FX_OLD_COLUMNS },
          { "launchType", IN, 0 }, { "cacheConfig", IN, 0 }, { "registersPerThread", NN, 0 },
          { "gridX", NN, 0 }, { "gridY", NN, 0 }, { "gridZ", NN, 0 }, { "blockX", NN, 0 },
          { "blockY", NN, 0 }, { "blockZ", NN, 0 }, { "staticSharedMemory", NN, 0 },
          { "dynamicSharedMemory", NN, 0 }, { "localMemoryPerThread", NN, 0 },
          { "localMemoryTotal", NN, 0 }, { "gridId", NN, 0 }, { "sharedMemoryExecuted", IN, 0 },
          { "graphNodeId", "INTEGER   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId)", 0 },
          { "sharedMemoryLimitConfig", IN, 0 } } },
    [TB_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY", 0, 0,
        { { "start", NN, 0 }, { "end", NN, 0 }, { "deviceId", NN, 0 }, { "contextId", NN, 0 },
          { "streamId", NN, 0 },
          { "correlationId", "INTEGER   REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)", 0 },
          { "globalPid", IN, 0 }, { "bytes", NN, 0 }, { "copyKind", NN, 0 },
          { "deprecatedSrcId", IN, 0 }, { "srcKind", IN, 0 }, { "dstKind", IN, 0 },
          { "srcDeviceId", IN, 0 }, { "srcContextId", IN, 0 }, { "dstDeviceId", IN, 0 },
          { "dstContextId", IN, 0 }, { "migrationCause", IN, 0 },
          { "graphNodeId", "INTEGER   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId)", 0 },
          { "virtualAddress", IN, 0 } } },
    [TB_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET", NSYS_FX_NO_MEMSET, 0,
        { { "start", NN, 0 }, { "end", NN, 0 }, { "deviceId", NN, 0 }, { "contextId", NN, 0 },
          { "streamId", NN, 0 },
          { "correlationId", "INTEGER   REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)", 0 },
          { "globalPid", IN, 0 }, { "value", NN, 0 }, { "bytes", NN, 0 },
          { "graphNodeId", "INTEGER   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId)", 0 },
          { "memKind", IN, 0 } } },
    [TB_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME", 0, 0,
        { { "start", NN, 0 }, { "end", NN, 0 }, { "eventClass", NN, NSYS_FX_OLD_COLUMNS },
          { "globalTid", IN, 0 }, { "correlationId", IN, 0 },
          { "nameId", "INTEGER   NOT NULL   REFERENCES StringIds(id)", 0 },
          { "returnValue", NN, 0 },
          { "callchainId", "INTEGER   REFERENCES CUDA_CALLCHAINS(id)", 0 } } },
    [TB_SYNC] = { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", NSYS_FX_NO_SYNC, 0,
        { { "start", NN, 0 }, { "end", NN, 0 }, { "deviceId", NN, 0 }, { "contextId", NN, 0 },
          { "streamId", NN, 0 }, { "correlationId", IN, 0 }, { "globalPid", IN, 0 },
          { "syncType", NN, 0 }, { "eventId", NN, 0 } } },
    [TB_NVTX] = { "NVTX_EVENTS", NSYS_FX_NO_NVTX, 0,
        { { "start", NN, 0 }, { "end", IN, 0 }, { "eventType", NN, 0 }, { "rangeId", IN, 0 },
          { "category", IN, 0 }, { "color", IN, 0 }, { "text", TX, 0 }, { "globalTid", IN, 0 },
          { "endGlobalTid", IN, 0 },
          { "textId", "INTEGER   REFERENCES StringIds(id)", NSYS_FX_OLD_COLUMNS },
          { "domainId", IN, 0 }, { "uint64Value", IN, 0 }, { "int64Value", IN, 0 },
          { "doubleValue", "REAL", 0 }, { "uint32Value", IN, 0 }, { "int32Value", IN, 0 },
          { "floatValue", "REAL", 0 }, { "jsonTextId", IN, 0 }, { "jsonText", TX, 0 } } },
};

/* ---- writing --------------------------------------------------------------------------- */

typedef struct fx {
    sqlite3 *db;
    unsigned flags;
    const char *strings[64]; /* StringIds, id = index + 1 */
    int nstrings;
    int failed;
} fx;

/* A column's value in a row: an integer, a text, or NULL. */
typedef struct fxval {
    const char *col;
    char type; /* 'i', 't', 'n' */
    int64_t i;
    const char *t;
} fxval;

#define I(c, v) { (c), 'i', (int64_t)(v), NULL }
#define S(c, v) { (c), 't', 0, (v) }
#define NUL(c) { (c), 'n', 0, NULL }
#define END { NULL, 0, 0, NULL }

static int has(const fx *f, const tabledef *t)
{
    return !(t->absent & f->flags) && (!t->only || (t->only & f->flags));
}

static void exec(fx *f, const char *sql)
{
    if (!f->failed && sqlite3_exec(f->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "nsys_fixture: %s: %s\n", sql, sqlite3_errmsg(f->db));
        f->failed = 1;
    }
}

static void create(fx *f, const tabledef *t)
{
    char sql[4096];
    size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s (", t->name);
    int first = 1;
    for (const coldef *c = t->cols; c->name; c++) {
        if (c->absent & f->flags)
            continue;
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s\n    %-27s %s", first ? "" : ",",
                              c->name, c->decl);
        first = 0;
    }
    snprintf(sql + n, sizeof sql - n, "\n)");
    exec(f, sql);
}

/* Inserts one row of table tb: the values given for the columns this
 * variant has, and 0 (or '') in every other NOT NULL column. */
static void row(fx *f, int tb, const fxval *v)
{
    const tabledef *t = &tables[tb];
    if (f->failed || !has(f, t))
        return;
    char cols[2048] = "", marks[512] = "";
    const fxval *bind[48];
    int n = 0;
    for (const coldef *c = t->cols; c->name && n < 48; c++) {
        if (c->absent & f->flags)
            continue;
        const fxval *given = NULL;
        for (const fxval *x = v; x->col && !given; x++)
            if (strcmp(x->col, c->name) == 0)
                given = x;
        if (!given && !strstr(c->decl, "NOT NULL"))
            continue;
        snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s\"%s\"", n ? ", " : "",
                 c->name);
        snprintf(marks + strlen(marks), sizeof marks - strlen(marks), "%s?", n ? ", " : "");
        bind[n++] = given;
    }
    char sql[3072];
    snprintf(sql, sizeof sql, "INSERT INTO %s (%s) VALUES (%s)", t->name, cols, marks);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(f->db, sql, -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        const fxval *x = bind[i];
        if (!x)
            rc = sqlite3_bind_int64(st, i + 1, 0);
        else if (x->type == 'i')
            rc = sqlite3_bind_int64(st, i + 1, x->i);
        else if (x->type == 't')
            rc = sqlite3_bind_text(st, i + 1, x->t, -1, SQLITE_STATIC);
        else
            rc = sqlite3_bind_null(st, i + 1);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc != SQLITE_OK) {
        fprintf(stderr, "nsys_fixture: %s: %s\n", sql, sqlite3_errmsg(f->db));
        f->failed = 1;
    }
    sqlite3_finalize(st);
}

/* The StringIds id of s, inserted on first use. */
static int64_t sid(fx *f, const char *s)
{
    for (int i = 0; i < f->nstrings; i++)
        if (strcmp(f->strings[i], s) == 0)
            return i + 1;
    if (f->nstrings == 64) {
        f->failed = 1;
        return 0;
    }
    f->strings[f->nstrings++] = s;
    row(f, TB_STRINGS, (fxval[]){ I("id", f->nstrings), S("value", s), END });
    return f->nstrings;
}

/* ---- the run ----------------------------------------------------------------------------- */

#define US 1000ll                     /* times below are in µs of trace time */
#define VM (1ll << 48)                /* the GlobalId bits of the machine    */
#define GPID(pid) (VM | ((int64_t)(pid) << 24))
#define GTID(pid, tid) (GPID(pid) | (tid))
#define MAIN GTID(NSYS_FX_PID, NSYS_FX_PID)
#define WORKER GTID(NSYS_FX_PID, NSYS_FX_PID + 1)
#define IDLE GTID(NSYS_FX_PID, NSYS_FX_PID + 8)
#define OTHER GTID(NSYS_FX_PID2, NSYS_FX_PID2)
#define MiB (1ll << 20)

static void run_info(fx *f)
{
    row(f, TB_SESSION, (fxval[]){ I("utcEpochNs", NSYS_FX_EPOCH_NS),
                                  S("utcTime", "2023-11-14T22:13:20"),
                                  S("localTime", "2023-11-14T22:13:20"), END });
    row(f, TB_META, (fxval[]){ S("name", "EXPORT_PRODUCT_NAME"),
                               S("value", "NVIDIA Nsight Systems"), END });
    row(f, TB_META, (fxval[]){ S("name", "EXPORT_PRODUCT_VERSION"), S("value", NSYS_FX_VERSION),
                               END });
    row(f, TB_META, (fxval[]){ S("name", "EXPORT_SCHEMA_VERSION"), S("value", "2.9.1"), END });
    row(f, TB_ENV, (fxval[]){ I("globalVid", VM), S("devStateName", "Local (CLI)"),
                              S("name", "CpuCores"), I("nameEnum", 1), S("value", "16"), END });
    row(f, TB_ENV, (fxval[]){ I("globalVid", VM), S("devStateName", "Local (CLI)"),
                              S("name", "Hostname"), I("nameEnum", 619),
                              S("value", NSYS_FX_HOST), END });
    /* every process of the machine, as Nsight lists them */
    row(f, TB_PROCESSES, (fxval[]){ I("globalPid", GPID(1)), I("pid", 1), S("name", "systemd"),
                                    END });
    row(f, TB_PROCESSES, (fxval[]){ I("globalPid", GPID(NSYS_FX_PID)), I("pid", NSYS_FX_PID),
                                    S("name", NSYS_FX_PROCESS), END });
    row(f, TB_PROCESSES, (fxval[]){ I("globalPid", GPID(NSYS_FX_PID2)), I("pid", NSYS_FX_PID2),
                                    S("name", "python3 eval.py"), END });
    row(f, TB_PROCESSES, (fxval[]){ I("globalPid", GPID(2)), I("pid", 2), S("name", "kthreadd"),
                                    END });
    row(f, TB_THREADS, (fxval[]){ I("nameId", sid(f, NSYS_FX_MAIN)), I("priority", 10),
                                  I("globalTid", MAIN), END });
    /* renamed: the later name is the one it keeps */
    row(f, TB_THREADS, (fxval[]){ I("nameId", sid(f, "pt_autograd_0")), I("priority", 10),
                                  I("globalTid", WORKER), END });
    row(f, TB_THREADS, (fxval[]){ I("nameId", sid(f, NSYS_FX_WORKER)), I("priority", 10),
                                  I("globalTid", WORKER), END });
    row(f, TB_THREADS, (fxval[]){ I("nameId", sid(f, NSYS_FX_IDLE)), I("priority", 10),
                                  I("globalTid", IDLE), END });
}

static void gpus(fx *f)
{
    row(f, TB_GPU, (fxval[]){ I("vmId", VM), I("id", 0), S("name", NSYS_FX_GPU0),
                              S("busLocation", "0000:03:00.0"), I("isDiscrete", 1),
                              I("totalMemory", NSYS_FX_GPU0_BYTES), I("smCount", 108),
                              S("chipName", "GA100"), I("cuDevice", 0), I("computeMajor", 8),
                              I("computeMinor", 0), END });
    row(f, TB_GPU, (fxval[]){ I("vmId", VM), I("id", 1), S("name", NSYS_FX_GPU1),
                              S("busLocation", "0000:41:00.0"), I("isDiscrete", 1),
                              I("totalMemory", NSYS_FX_GPU1_BYTES), I("smCount", 108),
                              S("chipName", "GA100"), I("cuDevice", 1), I("computeMajor", 8),
                              I("computeMinor", 0), END });
    row(f, TB_CUDA_DEVICE, (fxval[]){ I("gpuId", 1), I("cudaId", 0), I("pid", NSYS_FX_PID),
                                      S("uuid", "GPU-1"), I("numMultiprocessors", 108), END });
    row(f, TB_CUDA_DEVICE, (fxval[]){ I("gpuId", 0), I("cudaId", 1), I("pid", NSYS_FX_PID),
                                      S("uuid", "GPU-0"), I("numMultiprocessors", 108), END });
}

/* A runtime (class 0), driver (1) or backtrace (67) row. */
static void api(fx *f, int64_t tid, int cls, int64_t s_us, int64_t e_us, int corr,
                const char *name)
{
    if (cls == 67 && (f->flags & NSYS_FX_OLD_COLUMNS))
        return; /* without eventClass, backtraces cannot be told apart: none */
    row(f, TB_RUNTIME, (fxval[]){ I("start", s_us * US), I("end", e_us * US),
                                  I("eventClass", cls), I("globalTid", tid),
                                  I("correlationId", corr), I("nameId", sid(f, name)),
                                  I("returnValue", 0), END });
}

static void runtime(fx *f)
{
    api(f, MAIN, 1, 5000, 5010, 1, "cuModuleGetLoadingMode");
    api(f, MAIN, 0, 11000, 11100, 9, "cudaMemset_v3020");
    api(f, MAIN, 67, 12400, 16100, 11, "cudaMemcpy");
    api(f, MAIN, 0, 12500, 16000, 11, "cudaMemcpy_v3020");
    api(f, MAIN, 0, 17000, 17100, 10, "cudaLaunchKernel_v7000");
    api(f, MAIN, 0, 18000, 18100, 12, "cudaLaunchKernel_v7000");
    api(f, MAIN, 0, 31000, 31050, 13, "cudaLaunchKernel_v7000");
    api(f, MAIN, 67, 31900, 37400, 15, "cudaDeviceSynchronize");
    api(f, MAIN, 0, 32000, 37300, 15, "cudaDeviceSynchronize_v3020");
    api(f, MAIN, 0, 42000, 45000, 14, "cudaMemcpy_v3020");
    api(f, WORKER, 0, 23000, 23100, 20, "cudaLaunchKernel_v7000");
    api(f, WORKER, 0, 24000, 24100, 21, "cudaMemcpyAsync_v3020");
    api(f, WORKER, 0, 25000, 35600, 22, "cudaStreamSynchronize_v3020");
    if (f->flags & NSYS_FX_TWO_PROCESSES)
        api(f, OTHER, 0, 50000, 50100, 30, "cudaLaunchKernel_v7000");
}

static void kernel(fx *f, int dev, int ctx, int stream, int corr, int64_t s_us, int64_t e_us,
                   int64_t pid, const char *name, const char *shortname)
{
    row(f, TB_KERNEL, (fxval[]){ I("start", s_us * US), I("end", e_us * US), I("deviceId", dev),
                                 I("contextId", ctx), I("streamId", stream),
                                 I("correlationId", corr), I("globalPid", GPID(pid)),
                                 I("demangledName", sid(f, name)),
                                 I("shortName", sid(f, shortname)),
                                 I("mangledName", sid(f, "_Z4gemmIfEvPKT_S2_PS0_i")),
                                 I("registersPerThread", 32), I("gridX", 80), I("gridY", 1),
                                 I("gridZ", 1), I("blockX", 256), I("blockY", 1), I("blockZ", 1),
                                 I("gridId", corr), END });
}

static void copy(fx *f, int dev, int ctx, int stream, int corr, int64_t s_us, int64_t e_us,
                 int64_t bytes, int kind)
{
    row(f, TB_MEMCPY, (fxval[]){ I("start", s_us * US), I("end", e_us * US), I("deviceId", dev),
                                 I("contextId", ctx), I("streamId", stream),
                                 I("correlationId", corr), I("globalPid", GPID(NSYS_FX_PID)),
                                 I("bytes", bytes), I("copyKind", kind),
                                 I("srcKind", kind == 1 ? 0 : 2), I("dstKind", kind == 1 ? 2 : 0),
                                 END });
}

static void gpu_activity(fx *f)
{
    kernel(f, 0, 1, 7, 10, 17200, 27200, NSYS_FX_PID, NSYS_FX_GEMM, NSYS_FX_GEMM_SHORT);
    kernel(f, 0, 1, 7, 12, 27200, 35200, NSYS_FX_PID, NSYS_FX_GEMM, NSYS_FX_GEMM_SHORT);
    kernel(f, 0, 1, 7, 13, 35200, 37200, NSYS_FX_PID, NSYS_FX_RELU, NSYS_FX_RELU_SHORT);
    kernel(f, 1, 2, 13, 20, 23500, 33500, NSYS_FX_PID, NSYS_FX_GEMM, NSYS_FX_GEMM_SHORT);
    if (f->flags & NSYS_FX_TWO_PROCESSES)
        kernel(f, 0, 3, 7, 30, 50200, 51200, NSYS_FX_PID2, NSYS_FX_GEMM, NSYS_FX_GEMM_SHORT);
    copy(f, 0, 1, 7, 11, 13000, 15500, 64 * MiB, 1);
    copy(f, 0, 1, 7, 14, 42500, 44500, 16 * MiB, 2);
    copy(f, 1, 2, 13, 21, 33500, 35500, 8 * MiB, 1);
    row(f, TB_MEMSET, (fxval[]){ I("start", 11200 * US), I("end", 11500 * US), I("deviceId", 0),
                                 I("contextId", 1), I("streamId", 7), I("correlationId", 9),
                                 I("globalPid", GPID(NSYS_FX_PID)), I("value", 0),
                                 I("bytes", MiB), I("memKind", 2), END });
    /* a context sync (4) has no stream: CUPTI's invalid value */
    row(f, TB_SYNC, (fxval[]){ I("start", 32000 * US), I("end", 37300 * US), I("deviceId", 0),
                               I("contextId", 1), I("streamId", 4294967295ll),
                               I("correlationId", 15), I("globalPid", GPID(NSYS_FX_PID)),
                               I("syncType", 4), I("eventId", 4294967295ll), END });
    row(f, TB_SYNC, (fxval[]){ I("start", 25000 * US), I("end", 35600 * US), I("deviceId", 1),
                               I("contextId", 2), I("streamId", 13), I("correlationId", 22),
                               I("globalPid", GPID(NSYS_FX_PID)), I("syncType", 3),
                               I("eventId", 4294967295ll), END });
}

/* An NVTX row; text through StringIds (textId) when by_id and the
 * variant has textId, else in text. end_us < 0: NULL. */
static void nvtx(fx *f, int type, int64_t tid, int64_t s_us, int64_t e_us, const char *text,
                 int by_id, int domain)
{
    int id = by_id && !(f->flags & NSYS_FX_OLD_COLUMNS);
    fxval v[] = { I("start", s_us * US), I("eventType", type), I("globalTid", tid),
                  e_us < 0 ? (fxval)NUL("end") : (fxval)I("end", e_us * US),
                  id ? (fxval)I("textId", sid(f, text)) : (fxval)S("text", text),
                  I("domainId", domain), END };
    row(f, TB_NVTX, v);
}

static void ranges(fx *f)
{
    nvtx(f, 75, MAIN, 1000, -1, "MyDomain", 0, 1);      /* domains created: no time span */
    nvtx(f, 75, MAIN, 1100, -1, "MPI", 0, 2);
    nvtx(f, 39, MAIN, 1500, -1, NSYS_FX_MAIN, 0, 0);    /* thread named                  */
    nvtx(f, 59, MAIN, 10000, 60000, "step", 0, 0);
    nvtx(f, 59, MAIN, 12000, 40000, "forward", 1, 1);
    nvtx(f, 59, MAIN, 30000, 38000, "loss", 0, 0);
    nvtx(f, 59, MAIN, 41000, 58000, "backward", 0, 0);
    nvtx(f, 59, MAIN, 46000, 50000, NSYS_FX_MPI, 1, 2);
    nvtx(f, 34, MAIN, 59000, -1, "checkpoint", 0, 0);
    nvtx(f, 59, MAIN, 70000, -1, "tail", 0, 0);         /* never popped                  */
    nvtx(f, 60, WORKER, 20000, 50000, NSYS_FX_DATALOADER, 0, 0);
    nvtx(f, 99, WORKER, 21000, -1, "what is this", 0, 0); /* a type of no known meaning  */
    nvtx(f, 59, WORKER, 22000, 36000, "decode", 1, 1);
}

int nsys_fixture_write(const char *path, unsigned flags)
{
    fx f = { .flags = flags };
    unlink(path);
    if (sqlite3_open(path, &f.db) != SQLITE_OK) {
        sqlite3_close(f.db);
        return -1;
    }
    exec(&f, "PRAGMA page_size = 512"); /* small: the fuzzer's seed is one of these */
    exec(&f, "BEGIN");
    for (int t = 0; t < TB_COUNT; t++)
        if (has(&f, &tables[t]))
            create(&f, &tables[t]);
    if (has(&f, &tables[TB_THREADS]))
        run_info(&f);
    gpus(&f);
    runtime(&f);
    gpu_activity(&f);
    ranges(&f);
    exec(&f, "COMMIT");
    int failed = f.failed;
    return sqlite3_close(f.db) == SQLITE_OK && !failed ? 0 : -1;
}

int nsys_fixture_write_foreign(const char *path)
{
    sqlite3 *db = NULL;
    unlink(path);
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT, loss REAL);"
                          "INSERT INTO runs VALUES (1, 'baseline', 0.25);",
                          NULL, NULL, NULL);
    return sqlite3_close(db) == SQLITE_OK && rc == SQLITE_OK ? 0 : -1;
}
