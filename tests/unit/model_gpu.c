/* model_gpu.c - the GPU side of profile_model_load (src/model/gpu.c,
 * gpu_window.c) over real files written by the test writer: busy time as
 * a union over streams, exact in any order of the records against an
 * independent union, HTA's per-window shares with steps before and after
 * the records, communication kernels by name, and any number of devices.
 * Run from the repository root. */
#include <stdlib.h>
#include <string.h>

#include "format_util.h"
#include "model/profile.h"
#include "model_util.h"
#include "synth.h"

#define MS 1000000ull

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_gpu, .fini = teardown);

/* Busy time of a device is the union over its streams; gaps of 1 ms or
 * more are idle; kernels are operations of their own kind. */
Test(model_gpu, gpu_busy_union)
{
    const char *path = fu_path("gpu.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    synth_gpu_kernel(s, "gemm", 0, 1, 1, 1000, 100);     /* [1000, 1100)            */
    synth_gpu_kernel(s, "relu", 0, 2, 2, 1050, 100);     /* overlaps: [1000, 1150)   */
    synth_gpu_memcpy(s, PROF_COPY_HTOD, 0, 3, 3, 4096, 1140, 60); /* [1000, 1200)   */
    synth_gpu_kernel(s, "gemm", 0, 1, 4, 1300, 100);     /* gap of 100: not idle      */
    synth_gpu_memset(s, 0, 1, 5, 64, 3 * MS, 1000);      /* gap ~3 ms: idle           */
    synth_gpu_kernel(s, "gemm", 1, 7, 6, 500, 10);       /* another device            */
    synth_region(s, 0, "gemm", PROF_KIND_COMPUTE, 0, 0, 5000); /* a region of that name */
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.has_gpu, 1);
    cr_assert_eq(m.ngpus, 2u);
    const model_gpu_device *d = &m.gpus[0];
    cr_assert_eq(d->device, 0u);
    cr_assert_eq(d->kernels, 3u);
    cr_assert_eq(d->kernel_ns, 300u);
    cr_assert_eq(d->memcpy_count, 1u);
    cr_assert_eq(d->memcpy_bytes, 4096u);
    cr_assert_eq(d->memcpy_ns, 60u);
    cr_assert_eq(d->memset_count, 1u);
    cr_assert_eq(d->memset_ns, 1000u);
    cr_assert_eq(d->busy_ns, 200u + 100u + 1000u);
    cr_assert_eq(d->first_ns, 1000u);
    cr_assert_eq(d->last_ns, 3 * MS + 1000);
    cr_assert_eq(d->idle_gaps, 1u);
    cr_assert_eq(d->idle_gap_ns, 3 * MS - 1400);
    cr_assert_eq(m.gpus[1].device, 1u);
    cr_assert_eq(m.gpus[1].busy_ns, 10u);
    cr_assert_eq(m.gpus[1].idle_gaps, 0u);

    const model_op *k = NULL, *r = NULL;
    for (size_t i = 0; i < m.nops; i++)
        if (strcmp(m.ops[i].name, "gemm") == 0)
            *(m.ops[i].kind == MODEL_KIND_GPU ? &k : &r) = &m.ops[i];
    cr_assert(k && r, "a kernel and a region of one name are two operations");
    cr_assert_eq(k->calls, 3u);
    cr_assert_eq(k->incl_ns, 210u);
    cr_assert_eq(k->self_ns, 210u);
    cr_assert_eq(r->calls, 1u);
    cr_assert_eq(mu_op(&m, "relu")->kind, MODEL_KIND_GPU);
    cr_assert_eq(m.profiled_ns, 5000u, "kernels are not CPU time");
    profile_model_free(&m);
}

/* One GPU record of the tests of GPU time: class 0 computation, 1
 * communication, 2 copy, 3 memset. */
typedef struct gpu_rec {
    uint64_t start, dur;
    uint32_t stream, cls;
    uint64_t launch, correlation; /* its launch call's start and id, when it has one */
} gpu_rec;

static int rec_by_time(const void *pa, const void *pb)
{
    const gpu_rec *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

static int rec_by_stream(const void *pa, const void *pb)
{
    const gpu_rec *a = pa, *b = pb;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return rec_by_time(pa, pb);
}

/* The union of the records (by time) of the classes in mask (bits): its
 * intervals into u, which has room for n; returns how many. */
static size_t rec_union(const gpu_rec *r, size_t n, unsigned mask, uint64_t (*u)[2])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* r is by time */
        if (!((mask >> r[i].cls) & 1u))
            continue;
        uint64_t a = r[i].start, b = r[i].start + r[i].dur;
        if (k && a <= u[k - 1][1]) {
            if (b > u[k - 1][1])
                u[k - 1][1] = b;
        } else {
            u[k][0] = a, u[k][1] = b, k++;
        }
    }
    return k;
}

static uint64_t union_len(uint64_t (*u)[2], size_t k)
{
    uint64_t t = 0;
    for (size_t i = 0; i < k; i++)
        t += u[i][1] - u[i][0];
    return t;
}

/* The gaps of 1 ms or more between the intervals of a union: how many, how
 * long in all, and the three longest, longest first. */
static void union_gaps(uint64_t (*u)[2], size_t k, uint64_t *gaps, uint64_t *gap_ns,
                       uint64_t longest[3])
{
    *gaps = *gap_ns = 0;
    longest[0] = longest[1] = longest[2] = 0;
    for (size_t i = 1; i < k; i++) {
        uint64_t g = u[i][0] - u[i - 1][1];
        if (g < MS)
            continue;
        (*gaps)++;
        *gap_ns += g;
        for (int j = 0; j < 3; j++)
            if (g > longest[j]) {
                uint64_t x = longest[j];
                longest[j] = g;
                g = x;
            }
    }
}

/* Puts v's n elements of size bytes each in a random order (Fisher-Yates). */
static void shuffle(void *v, size_t n, size_t size, synth_rng *rng)
{
    unsigned char *p = v, t[64];
    cr_assert(size <= sizeof t);
    for (size_t i = 0; i + 1 < n; i++) {
        size_t j = i + (size_t)(synth_rand(rng) % (n - i));
        memcpy(t, p + i * size, size);
        memcpy(p + i * size, p + j * size, size);
        memcpy(p + j * size, t, size);
    }
}

/* Writes a record of the tests of GPU time, by its class. */
static void write_rec(synth *s, const gpu_rec *x)
{
    if (x->cls == 0)
        synth_gpu_kernel(s, "gemm", 0, x->stream, x->correlation, x->start, x->dur);
    else if (x->cls == 1)
        synth_gpu_kernel(s, "ncclDevKernel_AllGather", 0, x->stream, x->correlation, x->start,
                         x->dur);
    else if (x->cls == 2)
        synth_gpu_memcpy(s, PROF_COPY_DTOD, 0, x->stream, x->correlation, 512, x->start, x->dur);
    else
        synth_gpu_memset(s, 0, x->stream, x->correlation, 64, x->start, x->dur);
}

/* Many overlapping intervals on four streams, arriving out of order within
 * windows smaller than a batch: busy time and gaps are exact. */
Test(model_gpu, gpu_busy_out_of_order)
{
    enum { N = 30000, STREAMS = 4 };
    gpu_rec *r = malloc(N * sizeof *r);
    uint64_t(*u)[2] = malloc(N * sizeof *u);
    cr_assert(r && u);
    synth_rng rng = { 7 };
    uint64_t t[STREAMS] = { 0 };
    for (size_t i = 0; i < N; i++) {
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        t[st] += synth_rand(&rng) % 2000 + (synth_rand(&rng) % 100 == 0 ? 2 * MS : 0);
        r[i] = (gpu_rec){ t[st], 1 + synth_rand(&rng) % 5000, st, 0, 0, 0 };
        t[st] += r[i].dur;
    }
    qsort(r, N, sizeof *r, rec_by_time);
    for (size_t i = 0; i + 1 < N; i++) /* disorder within windows of 50 */
        if (synth_rand(&rng) % 2) {
            size_t j = i + synth_rand(&rng) % 50;
            if (j < N) {
                gpu_rec x = r[i];
                r[i] = r[j];
                r[j] = x;
            }
        }
    const char *path = fu_path("gpu-many.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    for (size_t i = 0; i < N; i++)
        synth_gpu_kernel(s, "k", 0, (uint32_t)(i % STREAMS), i, r[i].start, r[i].dur);
    mu_close(s);

    /* The exact answer, from all the intervals sorted at once. */
    qsort(r, N, sizeof *r, rec_by_time);
    size_t k = rec_union(r, N, 1u, u);
    uint64_t busy = union_len(u, k), gaps, gap_ns, longest[3];
    union_gaps(u, k, &gaps, &gap_ns, longest);
    free(r);
    free(u);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.ngpus, 1u);
    cr_assert_eq(m.gpus[0].kernels, (uint64_t)N);
    cr_assert_eq(m.gpus[0].busy_ns, busy, "busy %llu, exact %llu",
                 (unsigned long long)m.gpus[0].busy_ns, (unsigned long long)busy);
    cr_assert_gt(gaps, 10u, "the fixture has idle gaps");
    cr_assert_eq(m.gpus[0].idle_gaps, gaps);
    cr_assert_eq(m.gpus[0].idle_gap_ns, gap_ns);
    profile_model_free(&m);
}

/* A device's figures are exact whatever the order of its records, ten
 * times past the model's batch of 4,096: records of six streams
 * (computation, communication, copies, memsets) and steps over them,
 * written in time order, stream by stream (as Kineto lists them),
 * reversed and shuffled, give the figures of a union of all the records
 * taken at once, to the ns, and the same step figures every time. */
Test(model_gpu, gpu_exact_in_any_order)
{
    enum { N = 10 * 4096 + 7, STREAMS = 6, STEPS = 100 };
    static const uint32_t cls_of[STREAMS] = { 0, 0, 1, 2, 3, 0 };
    gpu_rec *r = malloc(N * sizeof *r);
    uint64_t(*u)[2] = malloc(N * sizeof *u), (*v)[2] = malloc(N * sizeof *v);
    cr_assert(r && u && v);
    synth_rng rng = { 35 };
    uint64_t t[STREAMS] = { 0 }, end = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        if (i % 300 == 299) /* every stream waits: the device idles */
            for (int j = 0; j < STREAMS; j++)
                t[j] = end + MS + synth_rand(&rng) % (3 * MS);
        t[st] += 1 + synth_rand(&rng) % 20000;
        r[i] = (gpu_rec){ t[st], 1 + synth_rand(&rng) % 30000, st, cls_of[st], 0, 0 };
        t[st] += r[i].dur;
        if (t[st] > end)
            end = t[st];
    }

    /* the exact figures, from all the records sorted at once */
    qsort(r, N, sizeof *r, rec_by_time);
    size_t k = rec_union(r, N, 0xfu, u);
    uint64_t busy = union_len(u, k), gaps, gap_ns, longest[3];
    union_gaps(u, k, &gaps, &gap_ns, longest);
    uint64_t(*u_busy)[2] = malloc((k ? k : 1) * sizeof *u_busy);
    cr_assert_not_null(u_busy);
    memcpy(u_busy, u, k * sizeof *u);
    size_t kc = rec_union(r, N, 1u << 1, u), kk = rec_union(r, N, 1u << 0, v);
    uint64_t comm = union_len(u, kc), overlap = 0;
    for (size_t i = 0, j = 0; i < kc && j < kk;) { /* communication ∩ computation */
        uint64_t a = u[i][0] > v[j][0] ? u[i][0] : v[j][0];
        uint64_t b = u[i][1] < v[j][1] ? u[i][1] : v[j][1];
        overlap += b > a ? b - a : 0;
        if (u[i][1] < v[j][1])
            i++;
        else
            j++;
    }
    cr_assert_gt(gaps, 100u, "the fixture has idle gaps");
    cr_assert(comm > 0 && overlap > 0 && overlap < comm, "communication partly overlapped");

    /* each step's busy time, exactly: the union clipped to the step */
    uint64_t step_busy[STEPS] = { 0 };
    for (uint64_t n = 0; n < STEPS; n++) {
        uint64_t a = n * (end / STEPS), b = a + end / STEPS;
        for (size_t i = 0; i < k; i++) {
            uint64_t from = u_busy[i][0] > a ? u_busy[i][0] : a;
            uint64_t to = u_busy[i][1] < b ? u_busy[i][1] : b;
            step_busy[n] += to > from ? to - from : 0;
        }
    }
    model_gpu_device first = { 0 };
    uint64_t first_steps[STEPS] = { 0 };
    for (int order = 0; order < 4; order++) {
        if (order == 1)
            qsort(r, N, sizeof *r, rec_by_stream);
        else if (order == 2)
            qsort(r, N, sizeof *r, rec_by_time);
        if (order == 3)
            shuffle(r, N, sizeof *r, &rng);
        const char *path = fu_path("gpu-order.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        for (uint64_t n = 0; n < STEPS; n++)
            synth_step(s, 0, n, PROF_STEP_SAMPLED, n * (end / STEPS), end / STEPS);
        for (size_t i = 0; i < N; i++)
            write_rec(s, &r[order == 2 ? N - 1 - i : i]);
        mu_close(s);
        profile_model m;
        mu_load(path, &m);
        cr_assert_eq(m.ngpus, 1u);
        const model_gpu_device *d = &m.gpus[0];
        cr_assert_eq(d->busy_ns, busy, "order %d: busy %llu, exact %llu", order,
                     (unsigned long long)d->busy_ns, (unsigned long long)busy);
        cr_assert_eq(d->idle_gaps, gaps, "order %d", order);
        cr_assert_eq(d->idle_gap_ns, gap_ns, "order %d", order);
        for (int j = 0; j < 3; j++)
            cr_assert_eq(d->longest[j].dur_ns, longest[j], "order %d, gap %d", order, j);
        cr_assert_eq(d->comm_ns, comm, "order %d", order);
        cr_assert_eq(d->comm_overlap_ns, overlap, "order %d", order);
        cr_assert_gt(d->step_busy_ns, 0u);
        if (order == 0)
            first = *d;
        cr_assert_eq(d->step_busy_ns, first.step_busy_ns, "order %d", order);
        cr_assert_eq(d->step_comm_ns, first.step_comm_ns, "order %d", order);
        cr_assert_eq(d->step_overlap_ns, first.step_overlap_ns, "order %d", order);
        /* each step's share of it (the ranks' heat map): the same in every
         * order, summing to the device's, and each step's own busy time
         * exactly unless stretches were merged, then within a tenth of it */
        cr_assert_eq(m.nsteps, (size_t)STEPS);
        uint64_t sum = 0;
        for (size_t n = 0; n < STEPS; n++) {
            uint64_t got = m.steps[n].gpu_busy_ns, want = step_busy[m.steps[n].number];
            sum += got;
            if (order == 0)
                first_steps[n] = got;
            cr_assert_eq(got, first_steps[n], "order %d, step %zu", order, n);
            if (!d->step_interpolated)
                cr_assert_eq(got, want, "step %zu: %llu, exact %llu", n, (unsigned long long)got,
                             (unsigned long long)want);
            else
                cr_assert(got + want / 10 >= want && got <= want + want / 10,
                          "step %zu: %llu, exact %llu", n, (unsigned long long)got,
                          (unsigned long long)want);
        }
        cr_assert(sum + STEPS >= d->step_busy_ns && sum <= d->step_busy_ns + STEPS,
                  "steps %llu, device %llu", (unsigned long long)sum,
                  (unsigned long long)d->step_busy_ns);
        profile_model_free(&m);
    }
    free(r);
    free(u);
    free(u_busy);
    free(v);
}

/* The intersection of two unions into out (room for ku + kv); returns its
 * length in intervals. */
static size_t union_and(uint64_t (*u)[2], size_t ku, uint64_t (*v)[2], size_t kv,
                        uint64_t (*out)[2])
{
    size_t k = 0;
    for (size_t i = 0, j = 0; i < ku && j < kv;) {
        uint64_t a = u[i][0] > v[j][0] ? u[i][0] : v[j][0];
        uint64_t b = u[i][1] < v[j][1] ? u[i][1] : v[j][1];
        if (b > a)
            out[k][0] = a, out[k][1] = b, k++;
        if (u[i][1] < v[j][1])
            i++;
        else
            j++;
    }
    return k;
}

/* A step written to the file now, in a block of its own (a thread's block
 * is written when full, so a step would otherwise reach the file with the
 * last of its thread's records): the mark after it pushes it out. */
static void write_step_now(synth *s, uint64_t number, uint64_t start, uint64_t dur)
{
    synth_block_records(s, 1);
    synth_step(s, 2, number, PROF_STEP_SAMPLED, start, dur);
    synth_mark(s, 2, "step written", start);
    synth_block_records(s, 4096);
}

/* HTA's breakdowns count the records launched before the final step
 * started (rules.md §3.1). Records launched up to two steps before they
 * run, launch calls, and steps are written in five orders: steps first and
 * each call before its record; records stream by stream and the calls
 * after them all; everything shuffled; records reversed, then calls, then
 * steps; calls, then records, then steps. Each gives the figures of the
 * records chosen by launch time and taken at once: the window, the time of
 * each set of classes, and the records left out, ten times past the
 * batches and limits of 4,096. */
Test(model_gpu, gpu_hta_window_in_any_order)
{
    enum { N = 10 * 4096 + 7, STREAMS = 5, STEPS = 40 };
    static const uint32_t cls_of[STREAMS] = { 0, 0, 1, 2, 3 };
    gpu_rec *r = malloc(N * sizeof *r), *w = malloc(N * sizeof *w);
    uint64_t(*u[3])[2], (*x)[2] = malloc(N * sizeof *x), (*y)[2] = malloc(N * sizeof *y);
    for (int c = 0; c < 3; c++)
        u[c] = malloc(N * sizeof *u[c]);
    cr_assert(r && w && x && y && u[0] && u[1] && u[2]);
    synth_rng rng = { 36 };
    uint64_t launch = MS, step_len = 0;
    for (size_t i = 0; i < N; i++) { /* calls in order; each record runs up to 2.5 ms later */
        launch += 1 + synth_rand(&rng) % 4000;
        uint32_t st = (uint32_t)(synth_rand(&rng) % STREAMS);
        r[i] = (gpu_rec){ launch + synth_rand(&rng) % (5 * MS / 2), 1 + synth_rand(&rng) % 9000,
                          st, cls_of[st], launch, 1000 + i };
    }
    step_len = launch / STEPS;
    uint64_t final = (STEPS - 1) * step_len;

    /* the records launched before the final step, their window and unions */
    size_t nw = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < N; i++) {
        if (r[i].launch >= final)
            continue;
        w[nw++] = r[i];
        first = r[i].start < first ? r[i].start : first;
        last = r[i].start + r[i].dur > last ? r[i].start + r[i].dur : last;
    }
    qsort(w, nw, sizeof *w, rec_by_time);
    size_t k[3] = { rec_union(w, nw, 1u, u[0]), rec_union(w, nw, 2u, u[1]),
                    rec_union(w, nw, 0xcu, u[2]) };
    uint64_t len[3] = { union_len(u[0], k[0]), union_len(u[1], k[1]), union_len(u[2], k[2]) };
    uint64_t both[3]; /* computation and communication, computation and memory, the others */
    both[0] = union_len(x, union_and(u[0], k[0], u[1], k[1], x));
    both[1] = union_len(y, union_and(u[0], k[0], u[2], k[2], y));
    both[2] = union_len(y, union_and(u[1], k[1], u[2], k[2], y));
    size_t kx = union_and(u[0], k[0], u[1], k[1], x);
    uint64_t all3 = union_len(y, union_and(x, kx, u[2], k[2], y));
    uint64_t want[8] = { 0,
                         len[0] - both[0] - both[1] + all3,
                         len[1] - both[0] - both[2] + all3,
                         both[0] - all3,
                         len[2] - both[1] - both[2] + all3,
                         both[1] - all3,
                         both[2] - all3,
                         all3 };
    cr_assert(nw < N && N - nw > 100, "the final step launched records");
    cr_assert(want[3] && want[5] && want[6] && want[7], "every overlap occurs");

    for (int order = 0; order < 5; order++) {
        /* items: 0..N-1 records, N..2N-1 calls, 2N.. steps */
        size_t nitems = 2 * N + STEPS, *item = malloc(nitems * sizeof *item);
        cr_assert_not_null(item);
        for (size_t i = 0; i < N; i++) {
            item[2 * i] = N + i, item[2 * i + 1] = i; /* each call before its record */
        }
        if (order == 1) { /* records stream by stream, then the calls */
            gpu_rec *byst = malloc(N * sizeof *byst);
            cr_assert_not_null(byst);
            memcpy(byst, r, N * sizeof *r);
            qsort(byst, N, sizeof *byst, rec_by_stream);
            for (size_t i = 0; i < N; i++)
                item[i] = (size_t)(byst[i].correlation - 1000), item[N + i] = N + i;
            free(byst);
        } else if (order == 3) { /* records reversed, calls, steps last */
            for (size_t i = 0; i < N; i++)
                item[i] = N - 1 - i, item[N + i] = N + i;
        } else if (order == 4) { /* calls, records, steps last */
            for (size_t i = 0; i < N; i++)
                item[i] = N + i, item[N + i] = i;
        }
        for (size_t i = 0; i < STEPS; i++)
            item[2 * N + i] = 2 * N + i;
        if (order == 0 || order == 1) { /* steps first */
            memmove(item + STEPS, item, 2 * N * sizeof *item);
            for (size_t i = 0; i < STEPS; i++)
                item[i] = 2 * N + i;
        }
        if (order == 2)
            shuffle(item, nitems, sizeof *item, &rng);
        const char *path = fu_path("gpu-window.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        for (size_t i = 0; i < nitems; i++) {
            size_t it = item[i];
            if (it < N)
                write_rec(s, &r[it]);
            else if (it < 2 * N)
                synth_api(s, 0, "cudaLaunchKernel", r[it - N].correlation, r[it - N].launch,
                          1000);
            else
                write_step_now(s, it - 2 * N, (it - 2 * N) * step_len, step_len);
        }
        mu_close(s);
        free(item);
        profile_model m;
        mu_load(path, &m);
        cr_assert_eq(m.ngpus, 1u);
        const model_gpu_window *h = &m.gpus[0].hta;
        cr_assert(h->final_step_out, "order %d", order);
        cr_assert_eq(h->left_out, (uint64_t)(N - nw), "order %d: left out %llu, want %zu",
                     order, (unsigned long long)h->left_out, N - nw);
        cr_assert_eq(h->first_ns, first, "order %d", order);
        cr_assert_eq(h->last_ns, last, "order %d", order);
        for (int mask = 0; mask < 8; mask++)
            cr_assert_eq(h->class_ns[mask], want[mask], "order %d, classes %d: %llu, want %llu",
                         order, mask, (unsigned long long)h->class_ns[mask],
                         (unsigned long long)want[mask]);
        profile_model_free(&m);
    }
    for (int c = 0; c < 3; c++)
        free(u[c]);
    free(r);
    free(w);
    free(x);
    free(y);
}

/* More GPU records than a device holds (262,144) before any step, or past
 * the latest step's start when the first step comes first: which were
 * launched in the final step is no longer known, and HTA's figures count
 * every record and say so. Fewer: the final step is left out as usual. */
Test(model_gpu, gpu_hta_steps_after_the_records)
{
    for (int run = 0; run < 3; run++) {
        int many = run > 0, first_step_first = run == 2;
        uint64_t n = many ? 270000 : 1000, step = n * 1000 / 4;
        const char *path = fu_path("gpu-steps-last.prof");
        synth *s = synth_open(path, NULL);
        cr_assert_not_null(s);
        if (first_step_first)
            write_step_now(s, 0, 0, step);
        for (uint64_t i = 0; i < n; i++) {
            synth_api(s, 0, "cudaLaunchKernel", 1 + i, i * 1000, 100);
            synth_gpu_kernel(s, "gemm", 0, 7, 1 + i, i * 1000 + 200, 500);
        }
        for (uint64_t k = first_step_first ? 1 : 0; k < 4; k++)
            synth_step(s, 0, k, PROF_STEP_SAMPLED, k * step, step);
        mu_close(s);
        profile_model m;
        mu_load(path, &m);
        const model_gpu_window *h = &m.gpus[0].hta;
        cr_assert_eq(h->final_step_out, !many, "run %d", run);
        cr_assert_eq(h->final_step_unknown, many, "run %d", run);
        uint64_t counted = many ? n : 3 * n / 4;
        cr_assert_eq(h->left_out, n - counted, "left out %llu", (unsigned long long)h->left_out);
        cr_assert_eq(h->class_ns[1], counted * 500, "computation %llu, want %llu",
                     (unsigned long long)h->class_ns[1], (unsigned long long)(counted * 500));
        cr_assert_eq(m.gpus[0].busy_ns, n * 500);
        profile_model_free(&m);
    }
}

/* Communication kernels by name (rules.md §4.10): the libraries' and the
 * collectives' names in any case, not kernels that only resemble them. */
Test(model_gpu, communication_kernels_by_name)
{
    static const char *const comm[] = {
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "NCCLKERNEL",
        "void multimem_all_reduce_kernel<__nv_bfloat16, 8>(...)",
        "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16>(...)",
        "void vllm::cross_device_reduce_1stage<half, 8>(...)",
        "void tensorrt_llm::kernels::oneShotAllReduceKernel<float>(...)",
        "nvshmemi_transfer_kernel",
        "mscclpp::allgather6",
        "all_to_all_single_kernel",
        "reduce_scatter_kernel",
    };
    static const char *const other[] = {
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(...)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
        "Memcpy DtoD (Device -> Device)",
        "void cub::DeviceReduceKernel<...>",
        "",
    };
    for (size_t i = 0; i < sizeof comm / sizeof comm[0]; i++)
        cr_expect(model_kernel_is_comm(comm[i]), "%s", comm[i]);
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        cr_expect(!model_kernel_is_comm(other[i]), "%s", other[i]);
}

/* A profile may name any number of devices (an untrusted one, 100,000):
 * each is found through an index, not a search over the others, and every
 * one keeps its own activity. */
Test(model_gpu, many_devices_are_each_counted)
{
    const char *path = fu_path("devices.prof");
    synth *s = synth_open(path, NULL);
    cr_assert_not_null(s);
    enum { NDEV = 20000 };
    for (uint32_t i = 0; i < NDEV; i++) /* device ids spread out, some sharing low bits */
        synth_gpu_kernel(s, "k", i * 65536u + (i & 7u), 0, i, 1000 + i, 10);
    synth_gpu_kernel(s, "k", 3u * 65536u + 3u, 0, NDEV, 5 * MS, 10); /* device 3 again */
    mu_close(s);

    profile_model m;
    mu_load(path, &m);
    cr_assert_eq(m.ngpus, (size_t)NDEV);
    for (size_t i = 0; i < m.ngpus; i++) {
        cr_assert_eq(m.gpus[i].kernels, m.gpus[i].device == 3u * 65536u + 3u ? 2u : 1u,
                     "device %u", m.gpus[i].device);
        if (i)
            cr_assert_gt(m.gpus[i].device, m.gpus[i - 1].device, "sorted by device");
    }
    profile_model_free(&m);
}
