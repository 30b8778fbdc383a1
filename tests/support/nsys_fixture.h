/* nsys_fixture.h - small Nsight Systems SQLite exports for the importer's
 * tests and the fuzzer's seed: the tables and columns of a real
 * `nsys export --type sqlite` (Nsight Systems 2022.2, schema 2.9.1), with
 * a run made up so that every figure is known: two threads of one process
 * with nested NVTX ranges, kernels, copies and a memset on two GPUs,
 * runtime calls including cudaDeviceSynchronize and synchronous cudaMemcpy,
 * and synchronization records. What the run holds is spelled here once, as
 * NSYS_FX_* figures, for the tests to assert. Variants leave tables out or
 * take older or newer columns. */
#ifndef PROF_TESTS_NSYS_FIXTURE_H
#define PROF_TESTS_NSYS_FIXTURE_H

#include <stdint.h>

/* Variants, or-ed. */
enum {
    NSYS_FX_NO_NVTX = 1u << 0,       /* no NVTX_EVENTS                                    */
    NSYS_FX_NO_SYNC = 1u << 1,       /* no CUPTI_ACTIVITY_KIND_SYNCHRONIZATION            */
    NSYS_FX_NO_MEMSET = 1u << 2,     /* no CUPTI_ACTIVITY_KIND_MEMSET                     */
    NSYS_FX_NO_RUN_INFO = 1u << 3,   /* no ThreadNames, PROCESSES, TARGET_INFO_*,
                                        EXPORT_META_DATA                                  */
    NSYS_FX_OLD_COLUMNS = 1u << 4,   /* NVTX text without textId, kernels named by
                                        shortName only, runtime rows without eventClass   */
    NSYS_FX_CUDA_DEVICE_MAP = 1u << 5, /* TARGET_INFO_CUDA_DEVICE (newer exports): CUDA
                                        device 0 is GPU 1 and 1 is GPU 0                  */
    NSYS_FX_TWO_PROCESSES = 1u << 6  /* a second process with one launch and its kernel  */
};

/* Writes the export at path (replacing a file there). 0, or -1. */
int nsys_fixture_write(const char *path, unsigned flags);

/* Writes an SQLite database that is no Nsight export (a table of its own). */
int nsys_fixture_write_foreign(const char *path);

/* ---- what the run holds (the default variant) ------------------------------------- */

#define NSYS_FX_EPOCH_NS 1700000000000000000ll /* utcEpochNs of session start        */
#define NSYS_FX_VERSION "2022.2.1.31"
#define NSYS_FX_HOST "gpu-node-7"
#define NSYS_FX_PID 4242
#define NSYS_FX_PROCESS "python3"
#define NSYS_FX_PID2 5151                     /* NSYS_FX_TWO_PROCESSES               */
#define NSYS_FX_GPU0 "NVIDIA A100-SXM4-40GB"
#define NSYS_FX_GPU0_BYTES 42297524224ull
#define NSYS_FX_GPU1 "NVIDIA A100-SXM4-80GB"
#define NSYS_FX_GPU1_BYTES 85899345920ull
#define NSYS_FX_MAIN "python"                 /* thread names                        */
#define NSYS_FX_WORKER "worker"
#define NSYS_FX_IDLE "[NSys]"                 /* named, but without activity         */

#define NSYS_FX_GEMM "void gemm<float>(float const*, float const*, float*, int)"
#define NSYS_FX_GEMM_SHORT "gemm"
#define NSYS_FX_RELU "relu(float*, int)"
#define NSYS_FX_RELU_SHORT "relu"

#define NSYS_FX_KERNELS 4      /* 3 on device 0 (2 gemm, 1 relu), 1 gemm on device 1    */
#define NSYS_FX_COPIES 3       /* HtoD and DtoH by cudaMemcpy on 0, async HtoD on 1     */
#define NSYS_FX_MEMSETS 1
#define NSYS_FX_API_CALLS 11   /* 8 on the main thread (1 driver call), 3 on the worker */
#define NSYS_FX_BACKTRACES 2   /* runtime rows repeating a call with its stack          */
#define NSYS_FX_SYNC_RECORDS 2 /* context sync (main), stream sync (worker)             */
#define NSYS_FX_SYNCS 4        /* the records and the 2 synchronous cudaMemcpy calls    */
#define NSYS_FX_REGIONS 7      /* main: step > forward > loss, step > backward > an
                                  MPI range; worker: a DataLoader range > decode       */
#define NSYS_FX_MARKS 1
#define NSYS_FX_UNENDED 1      /* a range still open at the end                         */
#define NSYS_FX_UNKNOWN 1      /* an NVTX event type the importer does not know         */
#define NSYS_FX_DATALOADER "DataLoader.__next__" /* of kind DATA, by its name      */
#define NSYS_FX_MPI "MPI_Allreduce"   /* in the NVTX domain "MPI": of kind COMM      */
/* GPU busy time (union of kernel, copy and memset intervals) per device */
#define NSYS_FX_BUSY0_NS 24800000ull
#define NSYS_FX_BUSY1_NS 12000000ull
#define NSYS_FX_KERNEL0_START_NS 17200000ll   /* the first kernel, trace time        */

#endif
