/* cupti.c - CUDA capture through CUPTI's Activity API, built when CUPTI's
 * headers were found (-DPROF_HAVE_CUPTI); gpu.c stands in otherwise.
 *
 * Nothing here links against CUDA: the driver (libcuda.so.1) and CUPTI
 * (open_cupti) are loaded with dlopen when capture is asked for, so the
 * same libprof.so runs on machines without CUDA, and any failure turns
 * capture off with one warning (rt_report) while recording goes on.
 *
 * Flow: prof_start writes the metadata first (rt_gpu_metadata: load the
 * libraries, check CUPTI's version, list the devices, calibrate CUPTI's
 * clock against the profile clock), then rt_gpu_start enables the activity
 * kinds. CUPTI hands full buffers to buffer_completed on its own thread;
 * the records are translated there (cupti_translate.c) into blocks, one for
 * the GPU timeline and one per CPU thread, which the writer thread writes
 * on its next pass (rt_gpu_write). CUPTI flushes every flush_interval_ms,
 * and prof_stop forces a flush before the footer. Device memory is sampled
 * at every step boundary ("gpu.N.used") through the primary context of
 * each device that the program has already initialised.
 *
 * Also the two entry points CUDA and NVTX look for in an injection
 * library: InitializeInjection (CUDA_INJECTION64_PATH=libprof.so profiles
 * an unmodified CUDA program) and InitializeInjectionNvtx2 (NVTX ranges
 * reach CUPTI through libprof, which keeps the name-thread calls away from
 * CUPTI: they crash inside CUPTI 13.0, NVIDIA/NVTX#125). */
#ifdef PROF_HAVE_CUPTI

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <cupti.h>

#include "format/meta_keys.h"
#include "record/cupti_translate.h"
#include "record/runtime.h"

#ifndef PROF_CUPTI_LIB
#define PROF_CUPTI_LIB "libcupti.so"
#endif

#define CU_BUFFER_BYTES ((size_t)1 << 20)
#define CU_MAX_THREADS 64u         /* CPU threads with CUDA records            */
#define CU_BLOCK_CAP ((size_t)32 << 20) /* past it a pending block drops       */
#define CU_STEP_LOG 4096u          /* step boundaries kept for sampling        */

typedef struct cu_thread {
    uint64_t tid;
    uint32_t index;
    int defined;                   /* its thread definition is in the file     */
    pf_block b;
} cu_thread;

typedef struct cu_step {
    uint64_t t_ns;                 /* a step began here                        */
    int sampled;
} cu_step;

/* The driver and CUPTI entry points used, from dlsym. */
typedef struct cu_api {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
    CUresult (*cuDevicePrimaryCtxGetState)(CUdevice, unsigned *, int *);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxPushCurrent)(CUcontext);
    CUresult (*cuCtxPopCurrent)(CUcontext *);
    CUresult (*cuMemGetInfo)(size_t *, size_t *);
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityFlushPeriod)(uint32_t);              /* optional */
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    int (*InitNvtx)(const void *(*)(uint32_t));                /* optional */
} cu_api;

#define CU_MAX_DEVICES 16

static struct {
    pthread_mutex_t mu;            /* translation state and pending blocks     */
    int probed, ready, injected, warned, registered;
    _Atomic int enabled;           /* activity is being recorded            */
    _Atomic int in_cuinit;         /* our own cuInit call is running        */
    const char *reason;            /* why capture is off                       */
    char reason_buf[160];
    uint32_t version;              /* CUPTI's at run time                      */
    cu_api f;
    int ndevices;
    char names[CU_MAX_DEVICES][128];
    size_t memory[CU_MAX_DEVICES];
    uint32_t series[CU_MAX_DEVICES];   /* "gpu.N.used"                         */
    rt_cu_state tr;
    pf_block gpu;
    cu_thread threads[CU_MAX_THREADS];
    uint32_t nthreads;
    int filter;                    /* sampling or a schedule: drop by step     */
    pthread_mutex_t steps_mu;      /* the step log: prof_step never waits on
                                      the writer, which holds mu to write      */
    cu_step steps[CU_STEP_LOG];
    uint64_t nsteps;
} cu = { .mu = PTHREAD_MUTEX_INITIALIZER, .steps_mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- loading ------------------------------------------------------------------- */

/* Capture is off for this reason (a static string, or reason_buf). */
static void off(const char *why)
{
    cu.reason = why;
}

static void off_code(const char *what, long code)
{
    snprintf(cu.reason_buf, sizeof cu.reason_buf, "%s: error %ld", what, code);
    cu.reason = cu.reason_buf;
}

static void warn_once(void)
{
    if (cu.warned || !cu.reason)
        return;
    cu.warned = 1;
    rt_report(PROF_MSG_WARNING, "CUDA capture off: %s", cu.reason);
}

#define LOAD(lib, field, sym) (*(void **)&cu.f.field = dlsym((lib), (sym))) != NULL

static int load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        off("no CUDA driver (libcuda.so.1 not found)");
        return 0;
    }
    if (!(LOAD(h, cuInit, "cuInit") && LOAD(h, cuDeviceGetCount, "cuDeviceGetCount") &&
          LOAD(h, cuDeviceGet, "cuDeviceGet") && LOAD(h, cuDeviceGetName, "cuDeviceGetName") &&
          LOAD(h, cuDeviceTotalMem, "cuDeviceTotalMem_v2") &&
          LOAD(h, cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState") &&
          LOAD(h, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
          LOAD(h, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") &&
          LOAD(h, cuCtxPushCurrent, "cuCtxPushCurrent_v2") &&
          LOAD(h, cuCtxPopCurrent, "cuCtxPopCurrent_v2") &&
          LOAD(h, cuMemGetInfo, "cuMemGetInfo_v2"))) {
        off("the CUDA driver lacks an entry point libprof uses");
        return 0;
    }
    return 1;
}

/* Names and capacities. Not from InitializeInjection: the driver calls it
 * from inside cuInit, where calling the driver back is not allowed. */
static int list_devices(void)
{
    int n = 0;
    CUresult r;
    if (cu.injected)
        return 1;
    cu.in_cuinit = 1; /* cuInit may call InitializeInjection back */
    r = cu.f.cuInit(0);
    cu.in_cuinit = 0;
    if (r != CUDA_SUCCESS || (r = cu.f.cuDeviceGetCount(&n)) != CUDA_SUCCESS) {
        off_code("CUDA driver initialisation failed", (long)r);
        return 0;
    }
    if (n <= 0) {
        off("no CUDA device");
        return 0;
    }
    cu.ndevices = n < CU_MAX_DEVICES ? n : CU_MAX_DEVICES;
    for (int i = 0; i < cu.ndevices; i++) {
        CUdevice d;
        if (cu.f.cuDeviceGet(&d, i) != CUDA_SUCCESS ||
            cu.f.cuDeviceGetName(cu.names[i], (int)sizeof cu.names[i], d) != CUDA_SUCCESS)
            snprintf(cu.names[i], sizeof cu.names[i], "CUDA device %d", i);
        if (cu.f.cuDeviceTotalMem(&cu.memory[i], d) != CUDA_SUCCESS)
            cu.memory[i] = 0;
    }
    return 1;
}

/* CUPTI where the build found it, else by name on the loader's path: the
 * development name, then the runtime's, which is all that a CUDA runtime
 * without development files (a distribution's libcupti package, a
 * container's runtime image) installs. */
static void *open_cupti(void)
{
    char versioned[32]; /* libcupti.so.12; up to CUDA 11, libcupti.so.11.8 */
    if (CUDA_VERSION >= 12000)
        snprintf(versioned, sizeof versioned, "libcupti.so.%d", CUDA_VERSION / 1000);
    else
        snprintf(versioned, sizeof versioned, "libcupti.so.%d.%d", CUDA_VERSION / 1000,
                 CUDA_VERSION % 1000 / 10);
    const char *names[] = { PROF_CUPTI_LIB, "libcupti.so", versioned };
    size_t n = strcmp(names[0], names[1]) == 0 ? 1 : 0; /* built without a path */
    for (size_t i = n; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    snprintf(cu.reason_buf, sizeof cu.reason_buf, "CUPTI not found (%s%s%s, %s)",
             n ? "" : names[0], n ? "" : ", ", names[1], versioned);
    cu.reason = cu.reason_buf;
    return NULL;
}

/* C++ kernels are named as the other GPU tools name them (rt_cu_state's
 * demangle): with the C++ runtime's demangler, already loaded in nearly
 * every CUDA program (nvcc links it, PyTorch is C++), else loaded here.
 * Without one, names stay as CUPTI gives them. */
static void find_demangler(void)
{
    void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!f) {
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        f = h ? dlsym(h, "__cxa_demangle") : NULL;
    }
    *(void **)&cu.tr.demangle = f;
}

static int load_cupti(void)
{
    void *h = open_cupti();
    if (!h)
        return 0;
    if (!(LOAD(h, GetVersion, "cuptiGetVersion") && LOAD(h, GetTimestamp, "cuptiGetTimestamp") &&
          LOAD(h, ActivityEnable, "cuptiActivityEnable") &&
          LOAD(h, ActivityDisable, "cuptiActivityDisable") &&
          LOAD(h, ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks") &&
          LOAD(h, ActivityGetNextRecord, "cuptiActivityGetNextRecord") &&
          LOAD(h, ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords") &&
          LOAD(h, ActivityFlushAll, "cuptiActivityFlushAll") &&
          LOAD(h, GetCallbackName, "cuptiGetCallbackName") &&
          LOAD(h, SetThreadIdType, "cuptiSetThreadIdType"))) {
        off("CUPTI lacks an entry point libprof uses");
        return 0;
    }
    *(void **)&cu.f.ActivityFlushPeriod = dlsym(h, "cuptiActivityFlushPeriod");
    *(void **)&cu.f.InitNvtx = dlsym(h, "InitializeInjectionNvtx2");
    /* Record layouts change with CUPTI's major version: the one built for
     * must be the one found. */
    if (cu.f.GetVersion(&cu.version) != CUPTI_SUCCESS ||
        rt_cu_cuda_major(cu.version) != rt_cu_cuda_major(CUPTI_API_VERSION)) {
        snprintf(cu.reason_buf, sizeof cu.reason_buf,
                 "CUPTI API version %u found, libprof was built for %u", cu.version,
                 (unsigned)CUPTI_API_VERSION);
        cu.reason = cu.reason_buf;
        return 0;
    }
    find_demangler();
    return 1;
}

/* The device memory series, named as formats/rules.md maps series to
 * device capacities. */
static void intern_series(void)
{
    for (int i = 0; i < cu.ndevices; i++) {
        char s[32];
        snprintf(s, sizeof s, "gpu.%d.used", i);
        cu.series[i] = prof_intern(s);
    }
}

/* Once per process: whether capture can work here. */
static int probe(void)
{
    if (!cu.probed) {
        cu.probed = 1;
        cu.ready = load_driver() && list_devices() && load_cupti();
        if (cu.ready)
            intern_series();
    }
    return cu.ready;
}

/* ---- metadata and clock -------------------------------------------------------------- */

/* The offset between CUPTI's clock and the profile clock, from the
 * tightest of a few bracketing reads. */
static void calibrate(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a, b;
        if (cu.f.GetTimestamp(&a) != CUPTI_SUCCESS)
            return;
        uint64_t p = rt_clock_ns(&rt.clock, rt_clock_now());
        if (cu.f.GetTimestamp(&b) != CUPTI_SUCCESS)
            return;
        if (b - a < best) {
            best = b - a;
            rt_cu_calibrate(&cu.tr, a, p, b);
        }
    }
}

static void add_devices(cJSON *meta)
{
    cJSON *devs = cJSON_GetObjectItem(meta, MK_DEVICES);
    for (int i = 0; devs && i < cu.ndevices; i++) {
        cJSON *d = cJSON_CreateObject();
        if (!d || !cJSON_AddItemToArray(devs, d))
            return;
        char mem[24];
        snprintf(mem, sizeof mem, "%llu", (unsigned long long)cu.memory[i]);
        cJSON_AddNumberToObject(d, MK_INDEX, i);
        cJSON_AddStringToObject(d, MK_NAME, cu.names[i]);
        cJSON_AddRawToObject(d, MK_MEMORY_BYTES, mem);
    }
}

void rt_gpu_metadata(const rt_config *c, cJSON *meta)
{
    if (!c->cuda)
        return;
    pthread_mutex_lock(&cu.mu);
    int ok = probe();
    if (ok)
        calibrate();
    pthread_mutex_unlock(&cu.mu);
    cJSON *o = cJSON_AddObjectToObject(meta, MK_CUDA);
    if (!o)
        return;
    cJSON_AddBoolToObject(o, MK_REQUESTED, 1);
    cJSON_AddBoolToObject(o, MK_ACTIVE, ok);
    if (!ok)
        cJSON_AddStringToObject(o, MK_REASON, cu.reason ? cu.reason : "unknown");
    cJSON_AddNumberToObject(o, MK_CUPTI_BUILT_FOR, CUPTI_API_VERSION);
    if (cu.version)
        cJSON_AddNumberToObject(o, MK_CUPTI_VERSION, cu.version);
    if (ok) {
        char off_ns[24];
        snprintf(off_ns, sizeof off_ns, "%lld", (long long)cu.tr.offset);
        /* profile ns = CUPTI timestamp − cupti_clock_offset_ns */
        cJSON_AddRawToObject(o, MK_CUPTI_CLOCK_OFFSET_NS, off_ns);
        cJSON_AddBoolToObject(o, MK_NVTX, cu.f.InitNvtx != NULL);
        add_devices(meta);
    }
}

/* ---- records in ------------------------------------------------------------------------ */

static const char *api_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (cu.f.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS)
        return NULL;
    return name;
}

static int marker_rec(const CUpti_ActivityMarker2 *m, rt_cu_rec *r)
{
    r->kind = RT_CU_MARKER;
    r->name = m->name;
    r->start = m->timestamp;
    r->id = m->id;
    r->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS ? RT_CU_MARKER_INSTANT : 0u) |
               (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START ? RT_CU_MARKER_START : 0u) |
               (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END ? RT_CU_MARKER_END : 0u);
    if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
        r->tid = m->objectId.pt.threadId;
    return 1;
}

/* The fields prof uses, out of CUPTI's structure for the record's kind. */
static int to_rec(const CUpti_Activity *a, rt_cu_rec *r)
{
    memset(r, 0, sizeof *r);
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)a;
        *r = (rt_cu_rec){ .kind = RT_CU_KERNEL, .name = k->name, .start = k->start,
                          .end = k->end, .device = k->deviceId, .context = k->contextId,
                          .stream = k->streamId, .correlation = k->correlationId };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)a;
        *r = (rt_cu_rec){ .kind = RT_CU_MEMCPY, .start = m->start, .end = m->end,
                          .device = m->deviceId, .context = m->contextId,
                          .stream = m->streamId, .correlation = m->correlationId,
                          .bytes = m->bytes, .copy_kind = m->copyKind };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)a;
        *r = (rt_cu_rec){ .kind = RT_CU_MEMSET, .start = m->start, .end = m->end,
                          .device = m->deviceId, .context = m->contextId,
                          .stream = m->streamId, .correlation = m->correlationId,
                          .bytes = m->bytes };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const void *)a;
        *r = (rt_cu_rec){ .kind = RT_CU_SYNC, .start = s->start, .end = s->end,
                          .context = s->contextId, .stream = s->streamId,
                          .correlation = s->correlationId, .sync_type = (uint32_t)s->type };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: { /* driver calls the program made itself (cuBLAS's
                                          and Triton's cuLaunchKernel), not the runtime's */
        const CUpti_ActivityAPI *p = (const void *)a;
        CUpti_CallbackDomain domain = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME
                                          ? CUPTI_CB_DOMAIN_RUNTIME_API
                                          : CUPTI_CB_DOMAIN_DRIVER_API;
        *r = (rt_cu_rec){ .kind = RT_CU_API, .name = api_name(domain, p->cbid),
                          .start = p->start, .end = p->end, .correlation = p->correlationId,
                          .tid = p->threadId };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const CUpti_ActivityContext3 *c = (const void *)a;
        *r = (rt_cu_rec){ .kind = RT_CU_CONTEXT, .context = c->contextId, .device = c->deviceId };
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: return marker_rec((const void *)a, r);
    default: return 0;
    }
}

/* Whether the step an event began in keeps its events (steps_mu held). */
static int kept_locked(uint64_t t_ns)
{
    uint64_t lo = cu.nsteps > CU_STEP_LOG ? cu.nsteps - CU_STEP_LOG : 0, hi = cu.nsteps;
    if (hi == 0 || t_ns < cu.steps[lo % CU_STEP_LOG].t_ns)
        return 1; /* older than what is remembered */
    while (hi - lo > 1) { /* the last boundary at or before t_ns */
        uint64_t mid = lo + (hi - lo) / 2;
        if (cu.steps[mid % CU_STEP_LOG].t_ns <= t_ns)
            lo = mid;
        else
            hi = mid;
    }
    return cu.steps[lo % CU_STEP_LOG].sampled;
}

static int kept(uint64_t t_ns)
{
    if (!cu.filter)
        return 1;
    pthread_mutex_lock(&cu.steps_mu);
    int k = kept_locked(t_ns);
    pthread_mutex_unlock(&cu.steps_mu);
    return k;
}

/* The profile thread of OS thread tid: the one that records through
 * libprof when there is one, else a new index defined with the tid. */
static cu_thread *thread_of(uint64_t tid)
{
    for (uint32_t i = 0; i < cu.nthreads; i++)
        if (cu.threads[i].tid == tid)
            return &cu.threads[i];
    if (cu.nthreads == CU_MAX_THREADS)
        return NULL;
    cu_thread *t = &cu.threads[cu.nthreads++];
    t->tid = tid;
    t->defined = 0;
    pthread_mutex_lock(&rt.reg_mu);
    for (rt_tinfo *r = atomic_load_explicit(&rt.threads, memory_order_acquire); r;
         r = atomic_load_explicit(&r->next, memory_order_relaxed)) {
        if (tid && r->os_tid == tid && r->session == rt.session) {
            t->index = r->index;
            t->defined = 1; /* the writer defines its own threads */
            break;
        }
    }
    if (!t->defined)
        t->index = rt.nthreads++;
    pthread_mutex_unlock(&rt.reg_mu);
    pf_block_init(&t->b, PF_BLOCK_EVENTS, t->index);
    return t;
}

static void put(pf_block *b, const prof_event *e)
{
    if (!b || b->len > CU_BLOCK_CAP || rt_cu_put(b, e) != PROF_OK)
        cu.tr.lost++;
}

static void route(const rt_cu_event *e)
{
    if (!kept(e->ev.start_ns))
        return;
    if (e->gpu) {
        put(&cu.gpu, &e->ev);
    } else {
        cu_thread *t = thread_of(e->tid);
        put(t ? &t->b : NULL, &e->ev);
    }
}

/* The syncs that waited for their API call's record and found it (all:
 * every one left, at the end of a session). */
static void route_unparked(int all)
{
    rt_cu_event ev[16];
    uint32_t n;
    while ((n = rt_cu_unpark(&cu.tr, all, ev, 16)) > 0)
        for (uint32_t i = 0; i < n; i++)
            route(&ev[i]);
}

static void note_dropped(CUcontext ctx, uint32_t stream)
{
    size_t dropped = 0;
    if (cu.f.ActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    uint64_t lost = dropped + cu.tr.lost;
    cu.tr.lost = 0;
    if (lost) {
        prof_event e = { .type = PROF_EV_DROPPED, .value = lost,
                         .start_ns = rt_clock_ns(&rt.clock, rt_clock_now()) };
        put(&cu.gpu, &e);
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, CU_BUFFER_BYTES);
    *size = *buf ? CU_BUFFER_BYTES : 0;
    *max_records = 0;
}

/* Two passes: the first notes every API call's thread, so that a
 * synchronization record before its API call's record in the same buffer
 * finds it; one whose API call comes in a later buffer waits for it
 * (rt_cu_state's park). */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                      size_t valid)
{
    (void)size;
    pthread_mutex_lock(&cu.mu);
    if (cu.enabled) {
        for (int pass = 0; pass < 2; pass++) {
            CUpti_Activity *a = NULL;
            rt_cu_rec r;
            while (cu.f.ActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
                if (!to_rec(a, &r))
                    continue;
                if (pass == 0) {
                    rt_cu_note(&cu.tr, &r);
                    continue;
                }
                rt_cu_event ev[RT_CU_MAX_EVENTS];
                int n = rt_cu_translate(&cu.tr, &r, ev);
                for (int i = 0; i < n; i++)
                    route(&ev[i]);
            }
        }
        route_unparked(0);
        note_dropped(ctx, stream);
    }
    pthread_mutex_unlock(&cu.mu);
    free(buf);
}

/* ---- the session ---------------------------------------------------------------------- */

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void reset_blocks(void)
{
    pf_block_free(&cu.gpu);
    pf_block_init(&cu.gpu, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    for (uint32_t i = 0; i < cu.nthreads; i++)
        pf_block_free(&cu.threads[i].b);
    cu.nthreads = 0;
}

static int enable(const rt_config *c)
{
    if (!cu.registered) {
        if (cu.f.ActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
            off("cannot register CUPTI's buffer callbacks");
            return 0;
        }
        cu.registered = 1;
    }
    cu.f.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    for (size_t i = 0; i < NKINDS; i++) {
        CUptiResult r = cu.f.ActivityEnable(kinds[i]);
        if (r != CUPTI_SUCCESS && kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            off_code("CUPTI refused kernel activity", (long)r);
            return 0;
        }
    }
    if (cu.f.ActivityFlushPeriod)
        cu.f.ActivityFlushPeriod(c->flush_interval_ms);
    return 1;
}

int rt_gpu_start(const rt_config *c)
{
    if (!c->cuda)
        return 0;
    pthread_mutex_lock(&cu.mu);
    int ok = probe();
    if (ok) {
        reset_blocks();
        cu.tr.park = 1;
        cu.tr.nparked = 0;
        cu.filter = c->sample_rate < 1 || c->active;
        pthread_mutex_lock(&cu.steps_mu);
        cu.steps[0] = (cu_step){ 0, rt_step_sampled(c, 0) };
        cu.nsteps = 1;
        pthread_mutex_unlock(&cu.steps_mu);
        cu.enabled = ok = enable(c);
    }
    if (!ok)
        warn_once();
    pthread_mutex_unlock(&cu.mu);
    return ok ? 0 : -ENOTSUP;
}

void rt_gpu_stop(void)
{
    if (!cu.enabled)
        return;
    /* Outside the lock: the flush calls buffer_completed. */
    cu.f.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < NKINDS; i++)
        cu.f.ActivityDisable(kinds[i]);
    pthread_mutex_lock(&cu.mu);
    route_unparked(1);
    cu.enabled = 0;
    pthread_mutex_unlock(&cu.mu);
}

/* ---- the writer's side ---------------------------------------------------------------------- */

void rt_gpu_write(void)
{
    pthread_mutex_lock(&cu.mu);
    if (cu.gpu.count && rt_writer_put_block(&cu.gpu) == 0)
        pf_block_reset(&cu.gpu, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    for (uint32_t i = 0; i < cu.nthreads; i++) {
        cu_thread *t = &cu.threads[i];
        if (!t->b.count)
            continue;
        if (!t->defined && pf_writer_define_thread(rt.w, t->index, t->tid, "") != PROF_OK)
            break;
        t->defined = 1;
        if (rt_writer_put_block(&t->b) != 0)
            break;
        pf_block_reset(&t->b, PF_BLOCK_EVENTS, t->index);
    }
    pthread_mutex_unlock(&cu.mu);
}

/* ---- steps: device memory and the sampling log ----------------------------------------------- */

static int device_used(int i, uint64_t *used)
{
    CUdevice d;
    unsigned flags;
    int active = 0;
    CUcontext ctx, popped;
    size_t free_b, total;
    if (cu.f.cuDeviceGet(&d, i) != CUDA_SUCCESS ||
        cu.f.cuDevicePrimaryCtxGetState(d, &flags, &active) != CUDA_SUCCESS || !active)
        return 0; /* never create a context the program did not */
    if (cu.f.cuDevicePrimaryCtxRetain(&ctx, d) != CUDA_SUCCESS)
        return 0;
    int ok = cu.f.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    if (ok) {
        ok = cu.f.cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS;
        cu.f.cuCtxPopCurrent(&popped);
    }
    cu.f.cuDevicePrimaryCtxRelease(d);
    if (ok)
        *used = total > free_b ? total - free_b : 0;
    return ok;
}

int rt_gpu_step(uint64_t now_ns, int next_sampled, rt_gpu_sample *out, int max)
{
    if (!cu.enabled)
        return 0;
    pthread_mutex_lock(&cu.steps_mu);
    cu.steps[cu.nsteps % CU_STEP_LOG] = (cu_step){ now_ns, next_sampled };
    cu.nsteps++;
    pthread_mutex_unlock(&cu.steps_mu);
    if (cu.injected && !cu.ndevices) { /* cuInit has returned by now */
        pthread_mutex_lock(&cu.mu);
        if (cu.injected) {
            cu.injected = 0;
            list_devices();
            intern_series();
        }
        pthread_mutex_unlock(&cu.mu);
    }
    int n = 0;
    for (int i = 0; i < cu.ndevices && n < max; i++) {
        uint64_t used;
        if (cu.series[i] && device_used(i, &used))
            out[n++] = (rt_gpu_sample){ cu.series[i], used };
    }
    return n;
}

/* ---- injection entry points --------------------------------------------------------------------- */

/* CUDA_INJECTION64_PATH=libprof.so: called by the driver inside cuInit.
 * Starts recording with CUDA capture unless the program already did. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (cu.in_cuinit) /* from inside prof_start: it is setting capture up */
        return 1;
    pthread_mutex_lock(&rt.ctl_mu);
    int running = rt.running;
    pthread_mutex_unlock(&rt.ctl_mu);
    if (running)
        return 1;
    cu.injected = 1;
    rt_report_loud(); /* the driver started us: nobody else hears why capture is off */
    prof_config c = { 0 };
    c.cuda = 1;
    return prof_start(&c) == 0;
}

/* NVTX's injection interface (nvtx3/nvtxDetail/nvtxTypes.h), declared here
 * so that no NVTX header (with its definitions) is included. */
#define NVTX_ETID_CALLBACKS 1u
#define NVTX_CB_MODULE_CORE 1
#define NVTX_CBID_CORE_NameOsThreadA 14u
#define NVTX_CBID_CORE_NameOsThreadW 15u
typedef void (*nvtx_fn)(void);
typedef const void *(*nvtx_get_table)(uint32_t);
typedef struct nvtx_callbacks {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, nvtx_fn ***table, unsigned *size);
} nvtx_callbacks;

static pthread_mutex_t nvtx_mu = PTHREAD_MUTEX_INITIALIZER;
static nvtx_get_table nvtx_real;     /* the calling module's, during its init */
static nvtx_fn nvtx_parked[2];       /* where CUPTI's name-thread handlers go */

/* The module's table of slots, with its two name-thread slots swapped for
 * slots nobody calls: those calls stay no-ops for the program. The copy
 * lives as long as the process, as CUPTI may fill slots later. */
static int nvtx_module_table(int module, nvtx_fn ***table, unsigned *size)
{
    const nvtx_callbacks *real = nvtx_real(NVTX_ETID_CALLBACKS);
    if (!real || !real->GetModuleFunctionTable(module, table, size))
        return 0;
    if (module != NVTX_CB_MODULE_CORE || *size <= NVTX_CBID_CORE_NameOsThreadW)
        return 1;
    nvtx_fn **copy = malloc(*size * sizeof *copy);
    if (!copy)
        return 0;
    memcpy(copy, *table, *size * sizeof *copy);
    copy[NVTX_CBID_CORE_NameOsThreadA] = &nvtx_parked[0];
    copy[NVTX_CBID_CORE_NameOsThreadW] = &nvtx_parked[1];
    *table = copy;
    return 1;
}

static const nvtx_callbacks nvtx_ours = { sizeof(nvtx_callbacks), nvtx_module_table };

static const void *nvtx_get(uint32_t id)
{
    return id == NVTX_ETID_CALLBACKS ? (const void *)&nvtx_ours : nvtx_real(id);
}

static int cuda_wanted(void)
{
    const char *s = getenv("PROF_CUDA");
    return cu.enabled || (s && (!strcmp(s, "1") || !strcasecmp(s, "true") ||
                                !strcasecmp(s, "yes") || !strcasecmp(s, "on")));
}

/* NVTX's injection entry point, found through NVTX_INJECTION64_PATH (set
 * by `prof record --cuda`) or in the global scope when libprof.so is
 * preloaded: hands NVTX to CUPTI, keeping the name-thread calls away. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(nvtx_get_table get)
{
    pthread_mutex_lock(&cu.mu);
    int ok = cuda_wanted() && probe() && cu.f.InitNvtx;
    pthread_mutex_unlock(&cu.mu);
    if (!ok)
        return 0;
    pthread_mutex_lock(&nvtx_mu);
    nvtx_real = get;
    ok = cu.f.InitNvtx(nvtx_get);
    pthread_mutex_unlock(&nvtx_mu);
    return ok;
}

#endif /* PROF_HAVE_CUPTI */
