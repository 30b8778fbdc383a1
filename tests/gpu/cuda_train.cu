/* cuda_train.cu - a small CUDA "training loop" for tests/gpu/run.sh, run
 * under `prof record --cuda`: every step launches a few kernels, copies a
 * result back with a synchronous cudaMemcpy (device to host), sets a
 * buffer, and waits in cudaDeviceSynchronize; NVTX ranges mark the step
 * and its phases. It knows nothing of prof, but marks its steps through
 * prof_step when libprof is loaded into it (looked up with dlsym), so that
 * the profile gets steps and device memory samples.
 *
 *   cuda_train [STEPS]    (default 50)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N (1 << 22)

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

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "cuda_train: %s: %s\n", #call, cudaGetErrorString(e_));     \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 50;
    void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "prof_step");
    float *x, *sum, host = 0;
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&sum, sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("train_step");
        nvtxRangePushA("forward");
        for (int k = 0; k < 4; k++)
            scale_kernel<<<N / 256, 256>>>(x, 0.5f, N);
        CHECK(cudaMemset(sum, 0, sizeof(float)));
        reduce_kernel<<<N / 256, 256>>>(x, sum, N);
        nvtxRangePop();
        nvtxRangePushA("loss.item");
        CHECK(cudaMemcpy(&host, sum, sizeof(float), cudaMemcpyDeviceToHost));
        nvtxRangePop();
        CHECK(cudaDeviceSynchronize());
        nvtxRangePop();
        if (step)
            step();
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(sum));
    printf("cuda_train: %d steps, last sum %g\n", steps, (double)host);
    return 0;
}
