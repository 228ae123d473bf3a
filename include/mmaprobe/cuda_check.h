/* mmaprobe/cuda_check.h — the one CUDA-check macro (internal; C and CUDA sources).
 *
 * Usage (inside a function returning mmp_status):
 *   MMP_CUDA_CHECK(cudaMalloc(&p, bytes));
 *   MMP_CUBLAS_CHECK(cublasDgemm(...));
 * On failure it records "<call>: <cuda error string>" with file and line (mmp_error_where)
 * and returns MMP_STATUS_CUDA (MMP_STATUS_NO_MEMORY for allocation failures).
 */
#ifndef MMAPROBE_CUDA_CHECK_H
#define MMAPROBE_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include "mmaprobe/status.h"

#define MMP_CUDA_CHECK(call)                                                              \
    do {                                                                                  \
        cudaError_t mmp_cuda_e_ = (call);                                                 \
        if (mmp_cuda_e_ != cudaSuccess)                                                   \
            return mmp_error_set(mmp_cuda_e_ == cudaErrorMemoryAllocation                 \
                                     ? MMP_STATUS_NO_MEMORY                               \
                                     : (mmp_cuda_e_ == cudaErrorNoDevice ||               \
                                        mmp_cuda_e_ == cudaErrorInsufficientDriver)       \
                                           ? MMP_STATUS_NO_DEVICE                         \
                                           : MMP_STATUS_CUDA,                             \
                                 __FILE__, __LINE__, "%s: %s", #call,                     \
                                 cudaGetErrorString(mmp_cuda_e_));                        \
    } while (0)

#define MMP_CUBLAS_CHECK(call)                                                            \
    do {                                                                                  \
        int mmp_cublas_e_ = (int)(call);                                                  \
        if (mmp_cublas_e_ != 0)                                                           \
            return mmp_error_set(MMP_STATUS_CUDA, __FILE__, __LINE__, "%s: cuBLAS status %d", \
                                 #call, mmp_cublas_e_);                                   \
    } while (0)

#endif
