/* mmaprobe/plugin_cuda.h — header-only help for a CUDA plugin (include it from the plugin's .cu,
 * or from C after <cuda_runtime.h>): kernel.h, plus the launch_status hook of ABI 1.3 read from
 * the plugin's own CUDA runtime, so that a launch that failed in the plugin is ERROR launch with
 * CUDA's message instead of a FAIL unwritten:
 *
 *     .launch_status = mmp_plugin_cuda_launch_status,
 *
 * Why the plugin has to say it: mmaprobe links the CUDA runtime statically, so the plugin's
 * runtime (its own static copy, or libcudart.so) keeps its own last-error state, which
 * mmaprobe's cudaGetLastError() never sees. Errors of the kernel while it runs (an illegal
 * address) belong to the device context, which both runtimes share: mmaprobe sees those itself.
 */
#ifndef MMAPROBE_PLUGIN_CUDA_H
#define MMAPROBE_PLUGIN_CUDA_H

#if !defined(__CUDACC__) && !defined(__CUDA_RUNTIME_H__)
#error "mmaprobe/plugin_cuda.h is for CUDA plugin code: compile with nvcc, or include <cuda_runtime.h> first"
#endif
#include <cuda_runtime.h>
#include <stdio.h>

#include "mmaprobe/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when this runtime has no error pending; else the error (cleared) as "name: text" in msg. */
static inline int mmp_plugin_cuda_launch_status(char *msg, size_t size)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    snprintf(msg, size, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    return (int)e;
}

#ifdef __cplusplus
}
#endif
#endif
