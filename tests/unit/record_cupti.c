/* record_cupti.c - the translation of CUPTI activity records into profile
 * events, on records built in memory (no GPU, no CUPTI): each record kind,
 * copy and sync kinds, the timestamp conversion, the thread of a
 * synchronisation found through its API call, synchronous copies, NVTX
 * ranges paired into nested regions, and dropped counts; then the events
 * encoded, written to a real file and read back with the public reader. */
#include <dlfcn.h>

#include "format/format.h"
#include "record/cupti_translate.h"
#include "record/runtime.h"
#include "record_util.h"

static rt_cu_state st;

static void setup(void)
{
    memset(&st, 0, sizeof st);
}

static void teardown(void)
{
    test_dir_remove();
}

TestSuite(record_cupti, .init = setup, .fini = teardown);

static const char *name_of(uint32_t id)
{
    uint32_t len;
    return id ? rt_intern_get(id, &len) : "";
}

static int one(const rt_cu_rec *r, rt_cu_event *out)
{
    rt_cu_note(&st, r);
    return rt_cu_translate(&st, r, out);
}

Test(record_cupti, timestamp_conversion)
{
    /* CUPTI read 1000 ns apart around a profile clock read of 5000 ns */
    rt_cu_calibrate(&st, 1000000000u, 5000u, 1000001000u);
    cr_expect_eq(st.offset, 1000000500 - 5000);
    cr_expect_eq(rt_cu_time(&st, 1000000500u), 5000u);
    cr_expect_eq(rt_cu_time(&st, 1000000500u + 123456u), 5000u + 123456u);
    cr_expect_eq(rt_cu_time(&st, 1000000500u - 5000u), 0u, "the origin");
    cr_expect_eq(rt_cu_time(&st, 1000u), 0u, "before the origin clamps to 0");
    /* a CUPTI clock behind the profile clock: negative offset */
    rt_cu_calibrate(&st, 100u, 10000u, 100u);
    cr_expect_eq(rt_cu_time(&st, 200u), 10100u);
}

/* CUPTI found at run time must be of the CUDA major version built with:
 * its API versions count 1, 2, ... up to CUDA 12 (cupti_version.h), then
 * major * 10000 + minor * 100 + update. A check that divided every
 * version by 10000 took any CUPTI up to CUDA 12 for any other. */
Test(record_cupti, cuda_major_of_cupti_versions)
{
    const struct { uint32_t v; unsigned major; } cases[] = {
        { 11, 0 },  { 12, 10 }, { 13, 11 }, { 17, 11 },     { 18, 11 },     { 19, 12 },
        { 24, 12 }, { 28, 12 }, { 29, 12 }, { 130000, 13 }, { 130001, 13 }, { 140100, 14 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(rt_cu_cuda_major(cases[i].v), cases[i].major, "version %u: %u, want %u",
                     cases[i].v, rt_cu_cuda_major(cases[i].v), cases[i].major);
}

Test(record_cupti, kernel)
{
    rt_cu_event out[RT_CU_MAX_EVENTS];
    rt_cu_calibrate(&st, 1000u, 0u, 1000u);
    rt_cu_rec r = { .kind = RT_CU_KERNEL, .name = "_Z6matmulPfS_S_", .start = 3000,
                    .end = 4500, .device = 1, .stream = 7, .correlation = 42 };
    cr_assert_eq(one(&r, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_GPU_KERNEL);
    cr_expect(out[0].gpu);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "_Z6matmulPfS_S_");
    cr_expect_eq(out[0].ev.start_ns, 2000u);
    cr_expect_eq(out[0].ev.dur_ns, 1500u);
    cr_expect_eq(out[0].ev.device, 1u);
    cr_expect_eq(out[0].ev.stream, 7u);
    cr_expect_eq(out[0].ev.correlation, 42u);
}

/* With the C++ runtime's demangler, C++ kernels get the names that
 * torch.profiler, Nsight and HTA give them (a recording and an import of
 * the same loop then name its kernels alike); other names stay as they
 * are, and a name CUPTI hands again (same pointer) keeps its id. */
Test(record_cupti, kernel_names_demangled)
{
    void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    cr_assert(cxx, "libstdc++.so.6: %s", dlerror());
    *(void **)&st.demangle = dlsym(cxx, "__cxa_demangle");
    cr_assert(st.demangle);
    static const char *const given[][2] = {
        { "_Z12scale_kernelPffi", "scale_kernel(float*, float, int)" },
        { "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
          "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
          "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
          "at::detail::Array<char*, 1>)" },
        { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64" },
        { "_Znot a symbol", "_Znot a symbol" },
    };
    rt_cu_event out[RT_CU_MAX_EVENTS];
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
            rt_cu_rec r = { .kind = RT_CU_KERNEL, .name = given[i][0], .start = 10, .end = 20 };
            cr_assert_eq(one(&r, out), 1);
            cr_expect_str_eq(name_of(out[0].ev.name_id), given[i][1], "round %d", round);
        }
    /* the same text at another address is demangled again, to the same id */
    char copy[32];
    strcpy(copy, given[0][0]);
    rt_cu_rec a = { .kind = RT_CU_KERNEL, .name = given[0][0], .start = 10, .end = 20 };
    rt_cu_rec b = { .kind = RT_CU_KERNEL, .name = copy, .start = 10, .end = 20 };
    cr_assert_eq(one(&a, out), 1);
    uint32_t id = out[0].ev.name_id;
    cr_assert_eq(one(&b, out), 1);
    cr_expect_eq(out[0].ev.name_id, id);
    /* another kernel's name where an unloaded one's was: its own */
    strcpy(copy, "_Z12shift_kernelPfi");
    cr_assert_eq(one(&b, out), 1);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "shift_kernel(float*, int)");
    dlclose(cxx);
}

Test(record_cupti, memcpy_kinds)
{
    static const uint32_t want[][2] = {
        { RT_CU_COPY_HTOD, PROF_COPY_HTOD }, { RT_CU_COPY_DTOH, PROF_COPY_DTOH },
        { RT_CU_COPY_DTOD, PROF_COPY_DTOD }, { RT_CU_COPY_HTOH, PROF_COPY_HTOH },
        { RT_CU_COPY_PTOP, PROF_COPY_PEER }, { RT_CU_COPY_HTOA, PROF_COPY_HTOD },
        { RT_CU_COPY_ATOH, PROF_COPY_DTOH }, { RT_CU_COPY_ATOD, PROF_COPY_DTOD },
        { 0, PROF_COPY_OTHER }, { 99, PROF_COPY_OTHER },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        rt_cu_event out[RT_CU_MAX_EVENTS];
        rt_cu_rec r = { .kind = RT_CU_MEMCPY, .copy_kind = want[i][0], .bytes = 1u << 20,
                        .start = 10, .end = 20, .stream = 3, .correlation = 9 };
        cr_assert_eq(one(&r, out), 1);
        cr_expect_eq(out[0].ev.type, PROF_EV_GPU_MEMCPY);
        cr_expect(out[0].gpu);
        cr_expect_eq(out[0].ev.subkind, want[i][1], "CUPTI kind %u", want[i][0]);
        cr_expect_eq(out[0].ev.value, 1u << 20);
        cr_expect_eq(out[0].ev.dur_ns, 10u);
    }
}

Test(record_cupti, memset)
{
    rt_cu_event out[RT_CU_MAX_EVENTS];
    rt_cu_rec r = { .kind = RT_CU_MEMSET, .bytes = 4096, .start = 100, .end = 180,
                    .device = 2, .stream = 5, .correlation = 11 };
    cr_assert_eq(one(&r, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_GPU_MEMSET);
    cr_expect(out[0].gpu);
    cr_expect_eq(out[0].ev.value, 4096u);
    cr_expect_eq(out[0].ev.device, 2u);
    cr_expect_eq(out[0].ev.dur_ns, 80u);
}

Test(record_cupti, api_call_and_its_sync_on_the_same_thread)
{
    rt_cu_event out[RT_CU_MAX_EVENTS];
    rt_cu_rec ctx = { .kind = RT_CU_CONTEXT, .context = 3, .device = 1 };
    rt_cu_rec api = { .kind = RT_CU_API, .name = "cudaDeviceSynchronize_v3020",
                      .start = 1000, .end = 9000, .correlation = 77, .tid = 4242 };
    rt_cu_rec sync = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_CONTEXT, .context = 3,
                       .start = 1100, .end = 8900, .correlation = 77 };
    /* the sync comes first in the buffer: the first pass notes the API call */
    rt_cu_note(&st, &ctx);
    rt_cu_note(&st, &sync);
    rt_cu_note(&st, &api);
    cr_assert_eq(rt_cu_translate(&st, &sync, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_SYNC);
    cr_expect(!out[0].gpu);
    cr_expect_eq(out[0].tid, 4242u);
    cr_expect_eq(out[0].ev.subkind, PROF_SYNC_DEVICE);
    cr_expect_eq(out[0].ev.device, 1u, "device of the context");
    cr_expect_eq(out[0].ev.dur_ns, 7800u);
    cr_assert_eq(rt_cu_translate(&st, &api, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_API);
    cr_expect_eq(out[0].tid, 4242u);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "cudaDeviceSynchronize");
    cr_expect_eq(out[0].ev.correlation, 77u);
    cr_expect_eq(out[0].ev.start_ns, 1000u);
    cr_expect_eq(out[0].ev.dur_ns, 8000u);
}

Test(record_cupti, sync_kinds_and_unknown_thread)
{
    static const uint32_t want[][2] = {
        { RT_CU_SYNC_EVENT, PROF_SYNC_EVENT }, { RT_CU_SYNC_STREAM_WAIT, PROF_SYNC_STREAM_WAIT },
        { RT_CU_SYNC_STREAM, PROF_SYNC_STREAM }, { RT_CU_SYNC_CONTEXT, PROF_SYNC_DEVICE },
        { 0, PROF_SYNC_OTHER },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        rt_cu_event out[RT_CU_MAX_EVENTS];
        rt_cu_rec r = { .kind = RT_CU_SYNC, .sync_type = want[i][0], .correlation = 500 };
        cr_assert_eq(one(&r, out), 1);
        cr_expect_eq(out[0].ev.subkind, want[i][1]);
        cr_expect_eq(out[0].tid, 0u, "no API call seen: thread unknown");
    }
}

/* CUPTI hands a context's sync records and the API records in separate
 * buffers: a sync can come before its cudaStreamSynchronize in an earlier
 * buffer (half the syncs of a real PyTorch run did). Parked, it waits for
 * that record and goes to its thread; one whose call never comes goes to
 * the unknown thread at the end; past RT_CU_PARKED waiting, at once. */
Test(record_cupti, sync_waits_for_its_api_call)
{
    st.park = 1;
    rt_cu_event out[RT_CU_MAX_EVENTS], back[4];
    rt_cu_rec sync = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .correlation = 77,
                       .start = 100, .end = 900 };
    rt_cu_rec lost = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_CONTEXT, .correlation = 99,
                       .start = 1000, .end = 1100 };
    cr_assert_eq(one(&sync, out), 0, "parked");
    cr_assert_eq(one(&lost, out), 0, "parked");
    cr_expect_eq(rt_cu_unpark(&st, 0, back, 4), 0u, "no call seen yet");
    /* the next buffer: the call */
    rt_cu_rec call = { .kind = RT_CU_API, .name = "cudaStreamSynchronize_v3020", .correlation = 77,
                       .start = 90, .end = 910, .tid = 4242 };
    rt_cu_note(&st, &call);
    cr_assert_eq(rt_cu_unpark(&st, 0, back, 4), 1u);
    cr_expect_eq(back[0].tid, 4242u);
    cr_expect_eq(back[0].ev.type, PROF_EV_SYNC);
    cr_expect_eq(back[0].ev.subkind, PROF_SYNC_STREAM);
    cr_expect_eq(back[0].ev.start_ns, 100u);
    cr_expect_eq(back[0].ev.dur_ns, 800u);
    cr_expect_eq(st.nparked, 1u);
    /* the end of the session: what is left goes to the unknown thread */
    cr_assert_eq(rt_cu_unpark(&st, 1, back, 4), 1u);
    cr_expect_eq(back[0].tid, 0u);
    cr_expect_eq(back[0].ev.subkind, PROF_SYNC_DEVICE);
    cr_expect_eq(st.nparked, 0u);
    /* bounded */
    for (uint32_t i = 0; i < RT_CU_PARKED; i++) {
        rt_cu_rec r = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .correlation = 1000 + i };
        cr_assert_eq(one(&r, out), 0);
    }
    rt_cu_rec more = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .correlation = 5000 };
    cr_assert_eq(one(&more, out), 1, "past the bound: at once");
    cr_expect_eq(out[0].tid, 0u);
    /* a small out takes them in turns */
    uint32_t n, total = 0;
    while ((n = rt_cu_unpark(&st, 1, back, 4)) > 0)
        total += n;
    cr_expect_eq(total, RT_CU_PARKED);
}

/* The records between a sync and its API call can be many: a buffer of
 * 1 MiB holds some 20,000 API records. A parked sync takes its thread when
 * its call is noted, however many calls follow before the buffer ends; a
 * call noted 30,000 calls before its sync is still remembered. */
Test(record_cupti, sync_and_its_call_far_apart)
{
    st.park = 1;
    rt_cu_event out[RT_CU_MAX_EVENTS], back[4];
    rt_cu_rec sync = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .correlation = 591,
                       .start = 100, .end = 900 };
    cr_assert_eq(one(&sync, out), 0, "parked");
    for (uint32_t c = 500; c < 500 + 70000; c++) {
        rt_cu_rec call = { .kind = RT_CU_API, .name = "cudaLaunchKernel", .correlation = c,
                           .tid = c == 591 ? 7 : 8 };
        rt_cu_note(&st, &call);
    }
    cr_assert_eq(rt_cu_unpark(&st, 0, back, 4), 1u);
    cr_expect_eq(back[0].tid, 7u, "its own call's thread, though its slot was reused since");
    rt_cu_rec call = { .kind = RT_CU_API, .name = "cudaStreamSynchronize", .correlation = 100000, .tid = 9 };
    rt_cu_note(&st, &call);
    for (uint32_t c = 100001; c < 130001; c++) {
        rt_cu_rec other = { .kind = RT_CU_API, .name = "cudaLaunchKernel", .correlation = c, .tid = 8 };
        rt_cu_note(&st, &other);
    }
    rt_cu_rec late = { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .correlation = 100000,
                       .start = 100, .end = 900 };
    cr_assert_eq(one(&late, out), 1, "its call is known");
    cr_expect_eq(out[0].tid, 9u);
}

Test(record_cupti, synchronous_copy_blocks_its_thread)
{
    rt_cu_event out[RT_CU_MAX_EVENTS];
    cr_expect(rt_cu_api_blocks_copy("cudaMemcpy_v3020"));
    cr_expect(rt_cu_api_blocks_copy("cudaMemcpy2D_ptds_v7000"));
    cr_expect(rt_cu_api_blocks_copy("cudaMemcpyFromSymbol"));
    cr_expect(!rt_cu_api_blocks_copy("cudaMemcpyAsync_v3020"));
    cr_expect(!rt_cu_api_blocks_copy("cudaLaunchKernel_v7000"));
    cr_expect(!rt_cu_api_blocks_copy("cudaMemcpy_v"));
    /* ROCm's names, as imported traces carry them */
    cr_expect(rt_cu_api_blocks_copy("hipMemcpy"));
    cr_expect(rt_cu_api_blocks_copy("hipMemcpyWithStream"));
    cr_expect(rt_cu_api_blocks_copy("hipMemcpyPeer"));
    cr_expect(!rt_cu_api_blocks_copy("hipMemcpyAsync"));
    cr_expect(!rt_cu_api_blocks_copy("hipLaunchKernel"));
    cr_expect(!rt_cu_api_blocks_copy("hip"));
    rt_cu_rec r = { .kind = RT_CU_API, .name = "cudaMemcpy_v3020", .start = 50, .end = 950,
                    .correlation = 8, .tid = 99 };
    cr_assert_eq(one(&r, out), 2);
    cr_expect_eq(out[0].ev.type, PROF_EV_API);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "cudaMemcpy");
    cr_expect_eq(out[1].ev.type, PROF_EV_SYNC);
    cr_expect_eq(out[1].ev.subkind, PROF_SYNC_MEMCPY);
    cr_expect_eq(out[1].tid, 99u);
    cr_expect_eq(out[1].ev.start_ns, 50u);
    cr_expect_eq(out[1].ev.dur_ns, 900u);
    cr_expect_eq(out[1].ev.correlation, 8u);
}

Test(record_cupti, nvtx_ranges_become_nested_regions)
{
    rt_cu_event out[RT_CU_MAX_EVENTS];
    rt_cu_rec outer = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_START, .id = 1,
                        .name = "step", .start = 100, .tid = 7 };
    rt_cu_rec inner = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_START, .id = 2,
                        .name = "forward", .start = 150, .tid = 7 };
    rt_cu_rec other = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_START, .id = 3,
                        .name = "loader", .start = 160, .tid = 8 };
    rt_cu_rec inner_end = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_END, .id = 2,
                            .start = 400 };
    rt_cu_rec outer_end = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_END, .id = 1,
                            .start = 900 };
    rt_cu_rec stray_end = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_END, .id = 55,
                            .start = 901 };
    rt_cu_rec mark = { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_INSTANT, .name = "ckpt",
                       .start = 950, .tid = 7 };
    cr_expect_eq(one(&outer, out), 0, "a start makes nothing yet");
    cr_expect_eq(one(&inner, out), 0);
    cr_expect_eq(one(&other, out), 0);
    cr_assert_eq(one(&inner_end, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_REGION);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "forward");
    cr_expect_eq(out[0].ev.depth, 1u);
    cr_expect_eq(out[0].ev.kind, (uint32_t)PROF_KIND_COMPUTE);
    cr_expect_eq(out[0].ev.start_ns, 150u);
    cr_expect_eq(out[0].ev.dur_ns, 250u);
    cr_expect_eq(out[0].tid, 7u);
    cr_expect(!out[0].gpu);
    cr_assert_eq(one(&outer_end, out), 1);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "step");
    cr_expect_eq(out[0].ev.depth, 0u, "other threads' ranges do not nest");
    cr_expect_eq(out[0].ev.dur_ns, 800u);
    cr_expect_eq(one(&stray_end, out), 0, "an end without a start");
    cr_expect_eq(st.lost, 1u);
    cr_assert_eq(one(&mark, out), 1);
    cr_expect_eq(out[0].ev.type, PROF_EV_MARK);
    cr_expect_str_eq(name_of(out[0].ev.name_id), "ckpt");
    cr_expect_eq(out[0].ev.start_ns, 950u);
}

/* Every kind encoded into blocks, written through the file writer and
 * read back: the reader sees what the translation made. */
Test(record_cupti, encoded_events_read_back)
{
    const char *path = test_path("cupti.prof");
    rt_cu_rec recs[] = {
        { .kind = RT_CU_API, .name = "cudaLaunchKernel_v7000", .start = 10, .end = 20,
          .correlation = 1, .tid = 1 },
        { .kind = RT_CU_KERNEL, .name = "k1", .start = 30, .end = 90, .correlation = 1 },
        { .kind = RT_CU_MEMCPY, .copy_kind = RT_CU_COPY_DTOH, .bytes = 64, .start = 100,
          .end = 140, .correlation = 2 },
        { .kind = RT_CU_MEMSET, .bytes = 32, .start = 150, .end = 160, .correlation = 3 },
        { .kind = RT_CU_API, .name = "cudaMemcpy_v3020", .start = 95, .end = 145,
          .correlation = 2, .tid = 1 },
        { .kind = RT_CU_SYNC, .sync_type = RT_CU_SYNC_STREAM, .start = 170, .end = 200,
          .correlation = 4 },
        { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_START, .id = 9, .name = "nvtx",
          .start = 5, .tid = 1 },
        { .kind = RT_CU_MARKER, .flags = RT_CU_MARKER_END, .id = 9, .start = 210 },
    };
    size_t n = sizeof recs / sizeof recs[0];
    pf_block gpu, cpu;
    pf_block_init(&gpu, PF_BLOCK_EVENTS, PF_THREAD_GPU);
    pf_block_init(&cpu, PF_BLOCK_EVENTS, 0);
    for (size_t i = 0; i < n; i++)
        rt_cu_note(&st, &recs[i]);
    for (size_t i = 0; i < n; i++) {
        rt_cu_event out[RT_CU_MAX_EVENTS];
        int k = rt_cu_translate(&st, &recs[i], out);
        for (int j = 0; j < k; j++)
            cr_assert_eq(rt_cu_put(out[j].gpu ? &gpu : &cpu, &out[j].ev), PROF_OK);
    }
    prof_event dropped = { .type = PROF_EV_DROPPED, .value = 17, .start_ns = 220 };
    cr_assert_eq(rt_cu_put(&gpu, &dropped), PROF_OK);

    pf_writer *w;
    cr_assert_eq(pf_writer_open(&w, path, "{\"format\":\"prof\"}", 3, NULL), PROF_OK);
    for (uint32_t id = 1; id <= rt_intern_count(); id++) {
        uint32_t len;
        const char *s = rt_intern_get(id, &len);
        cr_assert_eq(pf_writer_define_string(w, id, s, len), PROF_OK);
    }
    cr_assert_eq(pf_writer_write_block(w, &gpu, NULL), PROF_OK);
    cr_assert_eq(pf_writer_write_block(w, &cpu, NULL), PROF_OK);
    cr_assert_eq(pf_writer_close(w, NULL), PROF_OK);
    pf_block_free(&gpu);
    pf_block_free(&cpu);

    readback rb;
    readback_load(path, &rb);
    cr_expect_eq(rb_count(&rb, PROF_EV_GPU_KERNEL, "k1"), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_GPU_MEMCPY, NULL), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_GPU_MEMSET, NULL), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_API, "cudaLaunchKernel"), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_API, "cudaMemcpy"), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_SYNC, NULL), 2, "the stream sync and the copy");
    cr_expect_eq(rb_count(&rb, PROF_EV_REGION, "nvtx"), 1);
    cr_expect_eq(rb_count(&rb, PROF_EV_DROPPED, NULL), 1);
    for (size_t i = 0; i < rb.n; i++) {
        const prof_event *e = &rb.ev[i].ev;
        if (e->type == PROF_EV_GPU_MEMCPY) {
            cr_expect_eq(e->thread, PROF_THREAD_GPU);
            cr_expect_eq(e->subkind, PROF_COPY_DTOH);
            cr_expect_eq(e->value, 64u);
            cr_expect_eq(e->start_ns, 100u);
            cr_expect_eq(e->dur_ns, 40u);
        } else if (e->type == PROF_EV_DROPPED) {
            cr_expect_eq(e->value, 17u);
        } else if (e->type == PROF_EV_REGION) {
            cr_expect_eq(e->thread, 0u);
            cr_expect_eq(e->start_ns, 5u);
            cr_expect_eq(e->dur_ns, 205u);
        }
    }
    readback_free(&rb);
}
