/* kineto_map.c - what each Kineto event means for the sink: CPU regions
 * and steps, CUDA kernels, copies, memsets, API calls and syncs (through
 * the recorder's CUPTI translation), [memory] instants and marks, and the
 * M events that name processes and threads. One event at a time, in the
 * order read (kin_event_done); the mapping, era by era, is
 * formats/kineto-import.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "import/kineto_int.h"
#include "util/hash.h"

/* ---- numbers ------------------------------------------------------------------ */

/* A JSON number's text as a double through strtod (text is not
 * NUL-terminated). 0 when it does not fit the local copy. */
static int num_double(const char *t, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, t, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + n || errno == ERANGE)
        return 0;
    *out = d;
    return 1;
}

/* A JSON number as an integer: exact for integer text, through strtod for
 * fractions and exponents. 0 when it is out of int64_t's range. */
int kin_num_int(const char *t, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = n > 0 && t[0] == '-';
    i += (size_t)neg;
    uint64_t v = 0;
    if (n - i <= 18) /* cannot pass INT64_MAX: no test a digit */
        for (; i < n && t[i] >= '0' && t[i] <= '9'; i++)
            v = v * 10 + (unsigned)(t[i] - '0');
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (v > (UINT64_C(9223372036854775808) - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (i == n && n > (size_t)neg) {
        if (!neg && v > INT64_MAX)
            return 0;
        *out = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 1;
    }
    double d;
    if (!num_double(t, n, &d) || !(d > -9.2e18 && d < 9.2e18))
        return 0;
    *out = (int64_t)d;
    return 1;
}

/* Microseconds (Kineto's ts and dur) as integer nanoseconds, exactly for
 * decimal text with up to three decimals (more are rounded), through
 * strtod for exponent forms. 0 when out of range. */
int kin_num_us_to_ns(const char *t, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = n > 0 && t[0] == '-';
    i += (size_t)neg;
    uint64_t us = 0;
    size_t digits = 0;
    if (n - i <= 16) { /* epoch microseconds: no test a digit, one after */
        for (; i < n && t[i] >= '0' && t[i] <= '9'; i++, digits++)
            us = us * 10 + (unsigned)(t[i] - '0');
        if (us / 10 > UINT64_C(9223372036854775) / 10) /* as the loop below */
            return 0;
    }
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++, digits++) {
        if (us > UINT64_C(9223372036854775) / 10) /* ns would not fit */
            return 0;
        us = us * 10 + (unsigned)(t[i] - '0');
    }
    uint64_t frac = 0;
    if (digits > 0 && i < n && t[i] == '.') {
        unsigned place = 0;
        int round = 0;
        for (i++; i < n && t[i] >= '0' && t[i] <= '9'; i++, place++) {
            if (place < 3)
                frac = frac * 10 + (unsigned)(t[i] - '0');
            else if (place == 3)
                round = t[i] >= '5';
        }
        for (; place < 3; place++)
            frac *= 10;
        frac += (uint64_t)round;
    }
    if (digits > 0 && i == n) {
        uint64_t ns = us * 1000 + frac;
        if (ns > (uint64_t)INT64_MAX)
            return 0;
        *out = neg ? -(int64_t)ns : (int64_t)ns;
        return 1;
    }
    double d;
    if (!num_double(t, n, &d) || !(d > -9.2e15 && d < 9.2e15))
        return 0;
    double ns = d * 1000.0;
    *out = (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
    return 1;
}

/* ---- strings -------------------------------------------------------------------- */

/* Copies a string into a buffer of cap bytes (NUL included), cut at a
 * UTF-8 character boundary when it does not fit; counts the cut. */
size_t kin_copy_str(kin_parser *p, char *dst, size_t cap, const unsigned char *src, size_t n)
{
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && (src[n] & 0xC0) == 0x80)
            n--;
        p->cut++;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* An integer written as a string ("456", "stream 7" with the prefix). */
static int str_int(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 20)
        return 0;
    for (size_t i = (s[0] == '-'); i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return kin_num_int(s, n, out);
}

/* ---- the sink, and how a failure of it stops the parse ----------------------------- */

int kin_sink_ok(kin_parser *p, prof_err e)
{
    if (e != PROF_OK && p->fail == PROF_OK)
        p->fail = e;
    return e == PROF_OK;
}

void kin_malformed(kin_parser *p)
{
    sink_note_unknown(p->s, "malformed");
}

/* The thread key of an event: an integer tid as itself (signed, cast); a
 * string holding an integer likewise (2021 wrote some tids as "456"); any
 * other string as a hash of its bytes, and the thread is named after it
 * the first time. 0 when the event has no tid. */
static int thread_key(kin_parser *p, const kin_id *tid, uint64_t *key)
{
    int64_t v;
    if (tid->kind == 1) {
        *key = (uint64_t)tid->v;
        return 1;
    }
    if (tid->kind != 2)
        return 0;
    if (str_int(tid->s, tid->len, &v)) {
        *key = (uint64_t)v;
        return 1;
    }
    *key = hash_fnv1a(tid->s, tid->len) | (UINT64_C(1) << 63);
    for (uint32_t i = 0; i < p->nstr_threads; i++)
        if (p->str_thread[i] == *key)
            return 1;
    if (p->nstr_threads < KIN_STR_THREADS) {
        p->str_thread[p->nstr_threads++] = *key;
        if (tid->len > 0)
            return kin_sink_ok(p, sink_thread_name(p->s, *key, tid->s));
    }
    return 1;
}

static void note_cpu_pid(kin_parser *p)
{
    if (!p->has_cpu_pid && p->out->pid.kind == 1) {
        p->has_cpu_pid = 1;
        p->cpu_pid = p->out->pid.v;
    }
}

/* ---- CPU regions and steps --------------------------------------------------------- */

/* "ProfilerStep#N": 1 and N. */
static int step_number(const kin_event *e, uint64_t *n)
{
    static const char prefix[] = "ProfilerStep#";
    size_t l = sizeof prefix - 1;
    int64_t v;
    if (e->name_len <= l || memcmp(e->name, prefix, l) != 0)
        return 0;
    if (!str_int(e->name + l, e->name_len - l, &v) || v < 0)
        return 0;
    *n = (uint64_t)v;
    return 1;
}

static int64_t event_dur(const kin_event *e)
{
    return e->has_dur && e->dur > 0 ? e->dur : 0;
}

static int region(kin_parser *p)
{
    kin_event *e = p->out;
    uint64_t key, n;
    if (!e->has_name || !e->has_ts || !thread_key(p, &e->tid, &key)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    note_cpu_pid(p);
    if (step_number(e, &n))
        return kin_sink_ok(p, sink_step(p->s, key, n, e->ts, event_dur(e)));
    return kin_sink_ok(p, sink_region(p->s, key, e->name, e->name_len, SINK_KIND_INFER, e->ts,
                                      event_dur(e)));
}

/* ---- CUDA activity ------------------------------------------------------------------- */

static int arg(const kin_event *e, int which, int64_t *v)
{
    if (!(e->has & (1u << which)))
        return 0;
    *v = e->num[which];
    return 1;
}

static uint32_t arg_u32(const kin_event *e, int which, uint32_t dflt)
{
    int64_t v;
    return arg(e, which, &v) && v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : dflt;
}

/* The trace times of an X event as CUDA record times: start and end, both
 * non-negative. */
static int cuda_span(const kin_event *e, rt_cu_rec *r)
{
    int64_t dur = event_dur(e);
    if (!e->has_ts || e->ts < 0 || dur > INT64_MAX - e->ts)
        return 0;
    r->start = (uint64_t)e->ts;
    r->end = (uint64_t)(e->ts + dur);
    return 1;
}

/* Announces a (context, device) pair the first time a record names it, so
 * that the translation finds the device of a synchronization. */
static int announce_context(kin_parser *p, uint32_t context, uint32_t device)
{
    for (uint32_t i = 0; i < p->nctx; i++)
        if (p->ctx_id[i] == context && p->ctx_dev[i] == device)
            return 1;
    if (p->nctx == KIN_CONTEXTS)
        return 1;
    p->ctx_id[p->nctx] = context;
    p->ctx_dev[p->nctx++] = device;
    rt_cu_rec r = { .kind = RT_CU_CONTEXT, .context = context, .device = device };
    return kin_sink_ok(p, sink_cuda(p->s, &r));
}

/* The device of a GPU event: args.device (args.inDevice for peer copies
 * of 2021), else its pid, which Kineto sets to the device. */
static int gpu_device(const kin_event *e, uint32_t *device)
{
    int64_t v;
    if (!arg(e, N_DEVICE, &v) && !arg(e, N_IN_DEVICE, &v)) {
        if (e->pid.kind != 1)
            return 0;
        v = e->pid.v;
    }
    if (v < 0 || v > (int64_t)UINT32_MAX)
        return 0;
    *device = (uint32_t)v;
    return 1;
}

/* The stream: args.stream, else the tid (an integer, or "stream 7"). */
static uint32_t gpu_stream(const kin_event *e)
{
    int64_t v = 0;
    if (!arg(e, N_STREAM, &v)) {
        if (e->tid.kind == 1)
            v = e->tid.v;
        else if (e->tid.kind != 2 || e->tid.len <= 7 || memcmp(e->tid.s, "stream ", 7) != 0 ||
                 !str_int(e->tid.s + 7, e->tid.len - 7, &v))
            v = 0;
    }
    return v >= 0 && v <= (int64_t)UINT32_MAX ? (uint32_t)v : 0;
}

/* CUPTI's copy kind from a copy's name: "Memcpy HtoD (Pageable -> Device)"
 * (CUDA), "CopyHostToDevice" (ROCm). 0 when the name does not say. */
static uint32_t copy_kind(const char *name)
{
    static const struct { const char *tag; uint32_t kind; } kinds[] = {
        { "HtoD", RT_CU_COPY_HTOD }, { "DtoH", RT_CU_COPY_DTOH }, { "HtoA", RT_CU_COPY_HTOA },
        { "AtoH", RT_CU_COPY_ATOH }, { "AtoA", RT_CU_COPY_ATOA }, { "AtoD", RT_CU_COPY_ATOD },
        { "DtoA", RT_CU_COPY_DTOA }, { "DtoD", RT_CU_COPY_DTOD }, { "HtoH", RT_CU_COPY_HTOH },
        { "PtoP", RT_CU_COPY_PTOP },
        { "CopyHostToDevice", RT_CU_COPY_HTOD }, { "CopyDeviceToHost", RT_CU_COPY_DTOH },
        { "CopyDeviceToDevice", RT_CU_COPY_DTOD }, { "CopyHostToHost", RT_CU_COPY_HTOH },
        { "CopyPeerToPeer", RT_CU_COPY_PTOP }, { "CopyDeviceToPeer", RT_CU_COPY_PTOP },
    };
    const char *t = starts_with(name, "Memcpy ") ? name + 7 : name;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t l = strlen(kinds[i].tag);
        if (strncmp(t, kinds[i].tag, l) == 0 && (t[l] == '\0' || t[l] == ' '))
            return kinds[i].kind;
    }
    return 0;
}

/* A kernel, copy or memset on the GPU's timeline. */
static int gpu_activity(kin_parser *p, rt_cu_kind kind)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = kind };
    int64_t bytes;
    if (!cuda_span(e, &r) || !gpu_device(e, &r.device) || (kind == RT_CU_KERNEL && !e->has_name)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    r.stream = gpu_stream(e);
    r.context = arg_u32(e, N_CONTEXT, 0);
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    if (arg(e, N_BYTES, &bytes) && bytes > 0)
        r.bytes = (uint64_t)bytes;
    if (kind == RT_CU_KERNEL)
        r.name = e->name;
    if (kind == RT_CU_MEMCPY)
        r.copy_kind = copy_kind(e->has_name ? e->name : "");
    return announce_context(p, r.context, r.device) && kin_sink_ok(p, sink_cuda(p->s, &r));
}

/* CUPTI's sync type from Kineto's cuda_sync_kind (or the event's name). */
static uint32_t sync_type(const char *kind)
{
    if (strcmp(kind, "Stream Sync") == 0)
        return RT_CU_SYNC_STREAM;
    if (strcmp(kind, "Context Sync") == 0)
        return RT_CU_SYNC_CONTEXT;
    if (strcmp(kind, "Event Sync") == 0)
        return RT_CU_SYNC_EVENT;
    if (strcmp(kind, "Stream Wait Event") == 0)
        return RT_CU_SYNC_STREAM_WAIT;
    return 0;
}

/* The sync type of a runtime or driver call that waits for the GPU
 * (cudaDeviceSynchronize, hipStreamSynchronize, cuCtxSynchronize, ...),
 * or 0 for any other call. */
static uint32_t call_sync_type(const char *name, size_t n)
{
    static const struct { const char *name; uint32_t type; } calls[] = {
        { "cudaDeviceSynchronize", RT_CU_SYNC_CONTEXT }, { "hipDeviceSynchronize", RT_CU_SYNC_CONTEXT },
        { "cuCtxSynchronize", RT_CU_SYNC_CONTEXT },
        { "cudaStreamSynchronize", RT_CU_SYNC_STREAM }, { "hipStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cuStreamSynchronize", RT_CU_SYNC_STREAM },
        { "cudaEventSynchronize", RT_CU_SYNC_EVENT }, { "hipEventSynchronize", RT_CU_SYNC_EVENT },
        { "cuEventSynchronize", RT_CU_SYNC_EVENT },
    };
    if (n < 16 || memcmp(name + n - 11, "Synchronize", 11) != 0) /* the common case */
        return 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (kin_str_is(name, n, calls[i].name))
            return calls[i].type;
    return 0;
}

/* Hands a held-back synchronize call to the sink as a sync record. */
int kin_pending_flush_one(kin_parser *p)
{
    kin_pending *q = &p->pending[p->pend_head];
    p->pend_head = (p->pend_head + 1) % KIN_PENDING;
    p->npending--;
    rt_cu_rec r = { .kind = RT_CU_SYNC, .start = q->start, .end = q->end,
                    .correlation = q->correlation, .sync_type = q->sync_type };
    p->syncs_from_calls++;
    return kin_sink_ok(p, sink_cuda(p->s, &r));
}

/* Traces without CUPTI sync activity (before 2023, ROCm) show a wait for
 * the GPU only as the call that waited: such a call becomes a sync record
 * too. Traces with cuda_sync have a record of their own for it, which may
 * come a little before or after the call: calls are held back until
 * KIN_PENDING API calls later, and dropped when a cuda_sync comes first. */
static int pending_push(kin_parser *p, const rt_cu_rec *api, uint32_t type)
{
    if (p->npending == KIN_PENDING && !kin_pending_flush_one(p))
        return 0;
    kin_pending *q = &p->pending[(p->pend_head + p->npending) % KIN_PENDING];
    q->start = api->start;
    q->end = api->end;
    q->correlation = api->correlation;
    q->sync_type = type;
    q->api_seq = p->api_seq;
    p->npending++;
    return 1;
}

static int pending_age(kin_parser *p)
{
    while (p->npending > 0 && p->api_seq - p->pending[p->pend_head].api_seq >= KIN_PENDING)
        if (!kin_pending_flush_one(p))
            return 0;
    return 1;
}

/* A CUDA runtime or driver call (HIP in ROCm traces) on a CPU thread. */
static int api_call(kin_parser *p)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = RT_CU_API };
    if (!e->has_name || !cuda_span(e, &r) || !thread_key(p, &e->tid, &r.tid)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    note_cpu_pid(p);
    r.name = e->name;
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    p->api_seq++;
    if (!kin_sink_ok(p, sink_cuda(p->s, &r)) || !pending_age(p))
        return 0;
    uint32_t type = call_sync_type(e->name, e->name_len);
    if (type && r.correlation && !p->saw_cuda_sync)
        return pending_push(p, &r, type);
    return 1;
}

/* CUPTI synchronization activity (cuda_sync, 2023 on). */
static int sync_activity(kin_parser *p)
{
    kin_event *e = p->out;
    rt_cu_rec r = { .kind = RT_CU_SYNC };
    uint32_t device;
    if (!cuda_span(e, &r) || !gpu_device(e, &device)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    if (!p->saw_cuda_sync) { /* the trace has its own: held-back calls are not syncs */
        p->saw_cuda_sync = 1;
        p->npending = 0;
    }
    r.sync_type = sync_type(e->sync_kind[0] ? e->sync_kind : e->has_name ? e->name : "");
    r.context = arg_u32(e, N_CONTEXT, 0);
    r.stream = arg_u32(e, N_STREAM, 0);
    r.correlation = arg_u32(e, N_CORRELATION, 0);
    return announce_context(p, r.context, device) && kin_sink_ok(p, sink_cuda(p->s, &r));
}

/* ---- instants: [memory] and marks --------------------------------------------------- */

static kin_mem *mem_device(kin_parser *p, int64_t type, int64_t id)
{
    for (uint32_t i = 0; i < p->nmem; i++)
        if (p->mem[i].type == type && p->mem[i].id == id)
            return &p->mem[i];
    if (p->nmem == KIN_MEM_DEVICES)
        return NULL;
    kin_mem *m = &p->mem[p->nmem++];
    m->type = type;
    m->id = id;
    m->sum = 0;
    return m;
}

/* "prefix.what", built by hand: a trace can hold millions of these */
static int memory_sample(kin_parser *p, const char *prefix, const char *what, int64_t bytes)
{
    char series[64];
    size_t lp = strlen(prefix), lw = strlen(what);
    if (lp + 1 + lw >= sizeof series)
        return 1; /* not with the prefixes of memory_event */
    memcpy(series, prefix, lp);
    series[lp] = '.';
    memcpy(series + lp + 1, what, lw + 1);
    return kin_sink_ok(p, sink_memory(p->s, series, p->out->ts, bytes > 0 ? (uint64_t)bytes : 0));
}

/* "gpu" and the device's number, into 32 bytes */
static void gpu_prefix(char *prefix, int64_t id)
{
    char digits[20];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + id % 10);
    while ((id /= 10) > 0);
    memcpy(prefix, "gpu", 3);
    for (size_t i = 0; i < n; i++)
        prefix[3 + i] = digits[n - 1 - i];
    prefix[3 + n] = '\0';
}

/* A [memory] instant: the caching allocator's totals after an allocation
 * or a free (2022 on), or only the bytes of it (2021), summed here. */
static int memory_event(kin_parser *p)
{
    kin_event *e = p->out;
    int64_t type, id = -1, total, bytes;
    if (!e->has_ts || !arg(e, N_DEV_TYPE, &type)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    (void)arg(e, N_DEV_ID, &id);
    char prefix[32] = "host";
    if (type != 0 && id >= 0 && id <= INT32_MAX)
        gpu_prefix(prefix, id);
    else if (type != 0) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    if (arg(e, N_TOTAL_ALLOC, &total)) {
        if (!memory_sample(p, prefix, "allocated", total))
            return 0;
        return !arg(e, N_TOTAL_RESERVED, &total) || memory_sample(p, prefix, "reserved", total);
    }
    kin_mem *m;
    if (!arg(e, N_MEM_BYTES, &bytes) || !(m = mem_device(p, type, id))) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    if ((bytes > 0 && m->sum > INT64_MAX - bytes) || (bytes < 0 && m->sum < INT64_MIN - bytes))
        m->sum = bytes > 0 ? INT64_MAX : INT64_MIN;
    else
        m->sum += bytes;
    return memory_sample(p, prefix, "allocated", m->sum);
}

/* The thread of a mark. Kineto's own instants ("Iteration Start: PyTorch
 * Profiler", "Record Window End") name no thread ("Trace PyTorch
 * Profiler", ""): they go on the process's main thread (tid = pid) once
 * the process is known, rather than on a thread of their own. */
static int mark_thread(kin_parser *p, const kin_id *tid, uint64_t *key)
{
    int64_t v;
    if (tid->kind == 2 && !str_int(tid->s, tid->len, &v) && p->has_cpu_pid) {
        *key = (uint64_t)p->cpu_pid;
        return 1;
    }
    return thread_key(p, tid, key);
}

static int instant(kin_parser *p)
{
    kin_event *e = p->out;
    uint64_t key;
    if (e->has_name && kin_str_is(e->name, e->name_len, "[memory]"))
        return memory_event(p);
    if (!e->has_name || !e->has_ts || !mark_thread(p, &e->tid, &key)) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    return kin_sink_ok(p, sink_mark(p->s, key, e->name, e->ts));
}

/* ---- M events -------------------------------------------------------------------------- */

static kin_proc *proc_of(kin_parser *p, int64_t pid)
{
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    if (p->nprocs == KIN_PROCS)
        return NULL;
    kin_proc *pr = &p->procs[p->nprocs++];
    memset(pr, 0, sizeof *pr);
    pr->pid = pid;
    return pr;
}

/* process_name and process_labels are remembered: the name of the CPU
 * process is told at the end, when its pid is known (GPU rows are
 * "processes" of the same name). thread_name names CPU threads; a GPU row's
 * ("stream 7 ") names no thread prof has. */
static int metadata_event(kin_parser *p)
{
    kin_event *e = p->out;
    kin_proc *pr;
    uint64_t key;
    if (!e->has_name)
        return 1;
    int is_name = kin_str_is(e->name, e->name_len, "process_name");
    if (is_name || kin_str_is(e->name, e->name_len, "process_labels")) {
        if (e->pid.kind != 1 || !(pr = proc_of(p, e->pid.v)))
            return 1;
        if (is_name && e->meta_name[0]) {
            snprintf(pr->name, sizeof pr->name, "%s", e->meta_name);
            pr->has_name = 1;
        } else if (!is_name) {
            pr->labelled_cpu = strcmp(e->labels, "CPU") == 0;
        }
        return 1;
    }
    if (!kin_str_is(e->name, e->name_len, "thread_name") || !e->meta_name[0])
        return 1;
    int cpu = p->has_cpu_pid ? e->pid.kind == 1 && e->pid.v == p->cpu_pid
                             : !starts_with(e->meta_name, "stream ");
    if (!cpu || e->tid.kind == 0 || !thread_key(p, &e->tid, &key))
        return p->fail == PROF_OK;
    return kin_sink_ok(p, sink_thread_name(p->s, key, e->meta_name));
}

/* ---- one event --------------------------------------------------------------------------- */

typedef enum {
    H_UNKNOWN = 0, H_REGION, H_PYTHON, H_KERNEL, H_MEMCPY, H_MEMSET, H_API, H_SYNC,
    H_SKIPPED, H_IGNORED
} kin_handler;

static kin_handler handler_of(const char *cat, size_t n)
{
#define CAT(name, h) { name, sizeof name - 1, h }
    static const struct { const char *cat; size_t len; kin_handler h; } cats[] = {
        CAT("cpu_op", H_REGION), CAT("user_annotation", H_REGION), CAT("Operator", H_REGION),
        CAT("python_function", H_PYTHON),
        CAT("kernel", H_KERNEL), CAT("Kernel", H_KERNEL),
        CAT("gpu_memcpy", H_MEMCPY), CAT("Memcpy", H_MEMCPY),
        CAT("gpu_memset", H_MEMSET), CAT("Memset", H_MEMSET),
        CAT("cuda_runtime", H_API), CAT("cuda_driver", H_API), CAT("Runtime", H_API),
        CAT("cuda_sync", H_SYNC),
        CAT("gpu_user_annotation", H_SKIPPED),
        CAT("Trace", H_IGNORED), CAT("overhead", H_IGNORED), CAT("cuda_profiler_range", H_IGNORED),
        CAT("ac2g", H_IGNORED), CAT("async_cpu_to_gpu", H_IGNORED), CAT("async", H_IGNORED),
        CAT("fwdbwd", H_IGNORED),
    };
#undef CAT
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++)
        if (n == cats[i].len && memcmp(cat, cats[i].cat, n) == 0)
            return cats[i].h;
    return H_UNKNOWN;
}

static int complete_event(kin_parser *p)
{
    kin_event *e = p->out;
    if (!e->has_cat) {
        sink_note_unknown(p->s, "(none)");
        return 1;
    }
    switch (handler_of(e->cat, e->cat_len)) {
    case H_REGION: return region(p);
    case H_PYTHON:
        if (p->python_stacks)
            return region(p);
        sink_note_skipped(p->s, "python_function");
        return 1;
    case H_KERNEL: return gpu_activity(p, RT_CU_KERNEL);
    case H_MEMCPY: return gpu_activity(p, RT_CU_MEMCPY);
    case H_MEMSET: return gpu_activity(p, RT_CU_MEMSET);
    case H_API: return api_call(p);
    case H_SYNC: return sync_activity(p);
    case H_SKIPPED: sink_note_skipped(p->s, e->cat); return 1;
    case H_IGNORED: return 1;
    case H_UNKNOWN: break;
    }
    sink_note_unknown(p->s, e->cat);
    return 1;
}

/* Dispatches the event just closed, by phase, then category. */
int kin_event_done(kin_parser *p)
{
    kin_event *e = p->out;
    if (e->bad_time) {
        kin_malformed(p);
        return p->fail == PROF_OK;
    }
    switch (e->ph) {
    case 'X': return complete_event(p);
    case 'i':
    case 'I': return instant(p);
    case 'M': return metadata_event(p);
    case 's':
    case 't':
    case 'f': return 1; /* flows: every GPU record carries its correlation */
    case '\0': kin_malformed(p); return p->fail == PROF_OK;
    default: break;
    }
    char what[16];
    snprintf(what, sizeof what, "ph %c", e->ph);
    sink_note_unknown(p->s, what);
    return 1;
}

void kin_event_reset(kin_event *e)
{
    e->name_len = e->cat_len = 0;
    e->has_name = e->has_cat = e->has_ts = e->has_dur = e->bad_time = 0;
    e->ph = '\0';
    e->pid.kind = e->tid.kind = 0;
    e->has = 0;
    e->sync_kind[0] = e->meta_name[0] = e->labels[0] = e->cat[0] = e->name[0] = '\0';
}
