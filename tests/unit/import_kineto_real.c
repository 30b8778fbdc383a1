/* import_kineto_real.c - real torch.profiler traces imported and read
 * back, when ../shared/traces/ is there, against figures computed from the
 * same JSON by cJSON (regions, kernels, busy time, steps); and regions that
 * overlap past the kept depth, counted once. Run from the repository
 * root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "fixtures.h"
#include "import_util.h"
#include "model/profile.h"
#include "model_util.h"
#include "prof.h"

#define REAL_ALEXNET "../shared/traces/hta_alexnet_a100_sync.json.gz"
#define REAL_NCCL "../shared/traces/hta_nccl_data_a100_rank0of2.json.gz"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(import_kineto_real, .fini = teardown);

/* ---- the real traces, when there -------------------------------------------------------------- */

/* A gzip file, whole, NUL-terminated. */
static char *gunzip(const char *path)
{
    gzFile g = gzopen(path, "rb");
    cr_assert_not_null(g);
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    int k;
    while ((k = gzread(g, b + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)k;
        if (cap - n < 2) {
            cap *= 2;
            b = realloc(b, cap);
            cr_assert_not_null(b);
        }
    }
    gzclose(g);
    b[n] = '\0';
    return b;
}

typedef struct iv {
    double s, e;
} iv;

static int iv_cmp(const void *a, const void *b)
{
    const iv *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* What the trace itself says, from the whole document parsed by cJSON: the
 * same figures computed another way. Busy time: the union of kernel, copy
 * and memset intervals of device 0, in microseconds as doubles. */
typedef struct truth {
    uint64_t regions, steps, kernels, copies, memsets, api_calls, cuda_syncs, sync_calls;
    double busy_us;
    int rank, world;
} truth;

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static truth truth_of(const char *path)
{
    char *text = gunzip(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(doc);
    truth t = { .rank = -1, .world = -1 };
    const cJSON *di = cJSON_GetObjectItem(doc, "distributedInfo");
    if (cJSON_GetObjectItem(di, "rank"))
        t.rank = cJSON_GetObjectItem(di, "rank")->valueint;
    if (cJSON_GetObjectItem(di, "world_size"))
        t.world = cJSON_GetObjectItem(di, "world_size")->valueint;
    const cJSON *evs = cJSON_GetObjectItem(doc, "traceEvents"), *e;
    size_t niv = 0, cap = (size_t)cJSON_GetArraySize(evs);
    iv *ivs = malloc((cap + 1) * sizeof *ivs);
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *cat = cJSON_GetObjectItem(e, "cat"), *ph = cJSON_GetObjectItem(e, "ph");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
        if (!cJSON_IsString(cat) || !cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
            continue;
        const char *k = cat->valuestring;
        if (strcmp(k, "cpu_op") == 0 || strcmp(k, "user_annotation") == 0) {
            int step = name && strncmp(name, "ProfilerStep#", 13) == 0;
            t.steps += step ? 1 : 0;
            t.regions += step ? 0 : 1;
        } else if (strcmp(k, "cuda_runtime") == 0 || strcmp(k, "cuda_driver") == 0) {
            t.api_calls++;
            t.sync_calls += name && has_suffix(name, "Synchronize") ? 1 : 0;
        } else if (strcmp(k, "cuda_sync") == 0) {
            t.cuda_syncs++;
        } else if (strcmp(k, "kernel") == 0 || strcmp(k, "gpu_memcpy") == 0 ||
                   strcmp(k, "gpu_memset") == 0) {
            t.kernels += k[0] == 'k' ? 1 : 0;
            t.copies += strcmp(k, "gpu_memcpy") == 0 ? 1 : 0;
            t.memsets += strcmp(k, "gpu_memset") == 0 ? 1 : 0;
            double s = cJSON_GetObjectItem(e, "ts")->valuedouble;
            ivs[niv++] = (iv){ s, s + cJSON_GetObjectItem(e, "dur")->valuedouble };
        }
    }
    qsort(ivs, niv, sizeof *ivs, iv_cmp);
    double lo = 0, hi = -1;
    for (size_t i = 0; i < niv; i++) {
        if (ivs[i].s > hi) {
            t.busy_us += hi > lo ? hi - lo : 0;
            lo = ivs[i].s;
            hi = ivs[i].e;
        } else if (ivs[i].e > hi) {
            hi = ivs[i].e;
        }
    }
    t.busy_us += hi > lo ? hi - lo : 0;
    free(ivs);
    cJSON_Delete(doc);
    return t;
}

static void real_trace(const char *path)
{
    if (access(path, R_OK) != 0)
        cr_skip_test("%s is not there", path);
    truth t = truth_of(path);
    import_counts c;
    profile_model m;
    import_load(path, 0, &c, &m);
    cr_expect_eq(c.regions, t.regions);
    cr_expect_eq(c.steps, t.steps);
    cr_expect_eq(c.kernels, t.kernels);
    cr_expect_eq(c.copies, t.copies);
    cr_expect_eq(c.memsets, t.memsets);
    cr_expect_eq(c.api_calls, t.api_calls);
    /* CUPTI's sync records where the trace has them, else its synchronize calls */
    cr_expect_eq(c.syncs, t.cuda_syncs ? t.cuda_syncs : t.sync_calls);
    cr_expect_eq(c.unknown, 0);
    cr_expect_eq(c.damaged, 0);
    cr_expect_eq(m.nsteps, t.steps);
    cr_expect_eq(m.rank, t.rank < 0 ? 0 : t.rank);
    cr_expect_eq(m.world_size, t.world < 0 ? 1 : t.world);
    cr_assert_eq(m.ngpus, 1);
    double busy = (double)mu_gpu(&m, 0)->busy_ns / 1000.0;
    /* the trace's doubles carry about 1 ns of error per time: a microsecond is plenty */
    cr_expect(busy > t.busy_us - 1 && busy < t.busy_us + 1, "busy %.3f us, trace %.3f us", busy,
              t.busy_us);
    cr_log_info("%s: %llu kernels, busy %.3f ms, %llu syncs, %llu steps", path,
                (unsigned long long)c.kernels, busy / 1000, (unsigned long long)c.syncs,
                (unsigned long long)c.steps);
    profile_model_free(&m);
}

Test(import_kineto_real, real_alexnet_against_its_json)
{
    real_trace(REAL_ALEXNET);
}

Test(import_kineto_real, real_nccl_rank_against_its_json)
{
    real_trace(REAL_NCCL);
}

/* Regions that overlap without nesting, each starting 1 us after the one
 * before and lasting 100 ms, past the 256 levels the sink keeps: each nests
 * in the one before, cut at its end, and past the deepest level each is a
 * sibling of the last, which ends where it starts. Self times then sum to
 * the thread's busy time, never past it (they summed to 37,245 times it,
 * and every region was hot). */
Test(import_kineto_real, overlapping_regions_past_the_kept_depth_count_once)
{
    const char *trace = fx_path("overlapping.json");
    FILE *f = fopen(trace, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"traceEvents\": [\n");
    for (unsigned i = 0; i < 5000; i++)
        fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%u\", \"pid\": 1, "
                   "\"tid\": 1, \"ts\": %u, \"dur\": 100000}\n", i ? "," : "", i, i);
    fprintf(f, "]}\n");
    cr_assert_eq(fclose(f), 0);
    import_counts c;
    profile_model m;
    import_load(trace, 0, &c, &m);
    uint64_t self = 0;
    for (size_t i = 0; i < m.nops; i++) {
        cr_assert_leq(m.ops[i].self_ns, m.ops[i].incl_ns, "%s", m.ops[i].name);
        self += m.ops[i].self_ns;
    }
    cr_assert_eq(m.profiled_ns, 100000000ull, "the first region holds the rest: 100 ms");
    cr_assert_leq(self, m.profiled_ns, "self %llu of %llu", (unsigned long long)self,
                  (unsigned long long)m.profiled_ns);
    cr_assert_eq(m.kind_ns[PROF_KIND_COMPUTE], m.profiled_ns);
    profile_model_free(&m);
}
