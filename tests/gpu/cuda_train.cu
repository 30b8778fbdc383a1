/* cuda_train.cu - a small CUDA "training loop" with known work, for
 * tests/gpu/device-check.sh: run under `prof record --cuda`, its profile is
 * checked against what the program says it did.
 *
 * Every step, inside the NVTX range "train_step":
 *   stream "compute": 4 scale_kernel, a 4-byte memset, 1 reduce_kernel, then
 *                     (range "loss.item") a DtoH copy of DTOH_BYTES and
 *                     cudaStreamSynchronize;
 *   stream "data":    a HtoD copy of HTOD_BYTES from pinned memory, 2
 *                     shift_kernel;
 *   cudaDeviceSynchronize, and LEAK_BYTES more device memory (cudaMalloc,
 *   never freed): the leak the analysis must find.
 * Before the loop, one memset of the whole buffer on "compute" and a
 * cudaDeviceSynchronize. The step ends with prof_step when libprof is
 * loaded (looked up with dlsym: the program knows nothing of prof
 * otherwise), so that the profile has steps and a device-memory sample at
 * each step boundary.
 *
 *   cuda_train [STEPS [TRUTH.json]]   (default 50 steps)
 *
 * TRUTH.json, when named, gets the counts the program knows. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N (1 << 22)                          /* floats in x: 16 MiB          */
#define HTOD_BYTES ((size_t)1 << 20)
#define DTOH_BYTES ((size_t)2 << 20)
#define LEAK_BYTES ((size_t)16 << 20)
#define SCALES_PER_STEP 4
#define SHIFTS_PER_STEP 2

__global__ void scale_kernel(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * a + 1.0f;
}

__global__ void reduce_kernel(const float *x, float *out, int n)
{
    __shared__ float part[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, part[0]);
}

__global__ void shift_kernel(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = y[i] + 2.0f;
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "cuda_train: %s: %s\n", #call, cudaGetErrorString(e_));     \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

static int write_truth(const char *path, int steps, unsigned long long compute_id,
                       unsigned long long data_id)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "{\"steps\": %d,\n"
            " \"streams\": {\"compute\": {\"id\": %llu, \"kernels\": %d},\n"
            "             \"data\": {\"id\": %llu, \"kernels\": %d}},\n"
            " \"kernels\": {\"scale_kernel\": %d, \"reduce_kernel\": %d, \"shift_kernel\": %d},\n"
            " \"htod\": {\"count\": %d, \"bytes\": %llu},\n"
            " \"dtoh\": {\"count\": %d, \"bytes\": %llu},\n"
            " \"memsets\": {\"count\": %d, \"bytes\": %llu},\n"
            " \"device_syncs\": %d, \"stream_syncs\": %d,\n"
            " \"leak_bytes_per_step\": %llu}\n",
            steps, compute_id, steps * (SCALES_PER_STEP + 1), data_id, steps * SHIFTS_PER_STEP,
            steps * SCALES_PER_STEP, steps, steps * SHIFTS_PER_STEP,
            steps, (unsigned long long)(steps * HTOD_BYTES),
            steps, (unsigned long long)(steps * DTOH_BYTES),
            steps + 1, (unsigned long long)(N * sizeof(float) + (size_t)steps * sizeof(float)),
            steps + 1, steps, (unsigned long long)LEAK_BYTES);
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 50;
    const char *truth = argc > 2 ? argv[2] : NULL;
    void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "prof_step");
    float *x, *sum, *in, *h_in, *h_out;
    cudaStream_t compute, data;
    unsigned long long compute_id = 0, data_id = 0;
    void **leak = (void **)calloc((size_t)(steps > 0 ? steps : 1), sizeof *leak);
    if (steps <= 0 || !leak) {
        fprintf(stderr, "usage: cuda_train [STEPS [TRUTH.json]]\n");
        return 2;
    }
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&data, cudaStreamNonBlocking));
    CHECK(cudaStreamGetId(compute, &compute_id));
    CHECK(cudaStreamGetId(data, &data_id));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&sum, sizeof(float)));
    CHECK(cudaMalloc(&in, HTOD_BYTES));
    CHECK(cudaMallocHost(&h_in, HTOD_BYTES));
    CHECK(cudaMallocHost(&h_out, DTOH_BYTES));
    for (size_t i = 0; i < HTOD_BYTES / sizeof(float); i++)
        h_in[i] = (float)i;
    CHECK(cudaMemsetAsync(x, 0, N * sizeof(float), compute));
    CHECK(cudaDeviceSynchronize());

    const int in_n = (int)(HTOD_BYTES / sizeof(float));
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("train_step");
        nvtxRangePushA("forward");
        CHECK(cudaMemcpyAsync(in, h_in, HTOD_BYTES, cudaMemcpyHostToDevice, data));
        for (int k = 0; k < SHIFTS_PER_STEP; k++)
            shift_kernel<<<in_n / 256, 256, 0, data>>>(in, in_n);
        for (int k = 0; k < SCALES_PER_STEP; k++)
            scale_kernel<<<N / 256, 256, 0, compute>>>(x, 0.5f, N);
        CHECK(cudaMemsetAsync(sum, 0, sizeof(float), compute));
        reduce_kernel<<<N / 256, 256, 0, compute>>>(x, sum, N);
        CHECK(cudaGetLastError());
        nvtxRangePop();
        nvtxRangePushA("loss.item");
        CHECK(cudaMemcpyAsync(h_out, x, DTOH_BYTES, cudaMemcpyDeviceToHost, compute));
        CHECK(cudaStreamSynchronize(compute));
        nvtxRangePop();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMalloc(&leak[s], LEAK_BYTES));
        nvtxRangePop();
        if (step)
            step();
    }
    if (truth && write_truth(truth, steps, compute_id, data_id))
        return 1;
    printf("cuda_train: %d steps, x[0] %g\n", steps, (double)h_out[0]);
    for (int s = 0; s < steps; s++)
        CHECK(cudaFree(leak[s]));
    free(leak);
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFree(in));
    CHECK(cudaFree(x));
    CHECK(cudaFree(sum));
    return 0;
}
