/* memory_measure.cu — GPU side of the memory probe: calibration kernels with known bank
 * conflicts (one warp, lane l at byte l * stride), timed with clock64 for the fallback that
 * needs no counters, and launched by name under a profiler (ncu / CUPTI) for counters.
 *
 * Every kernel name starts with "mmp_calib_" so a profiler can select them by regex.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/memory.h"

#define CAL_SMEM 16384
#define CAL_ITERS 256

/* One warp: ITERS dependent shared loads of BYTES per lane at lane * stride. Returns cycles per
 * load in cycles[0] (lane 0) so the fallback can time it; sink keeps the loads alive. */
template <int BYTES>
__global__ void mmp_calib_lds(uint32_t stride, int iters, long long *cycles, uint32_t *sink)
{
    __shared__ __align__(16) uint32_t smem[CAL_SMEM / 4];
    for (int i = threadIdx.x; i < CAL_SMEM / 4; i += blockDim.x) smem[i] = 0; /* zeros: offset stays */
    __syncthreads();
    uint32_t lane = threadIdx.x & 31;
    uint32_t addr = (lane * stride) % (CAL_SMEM - 16);
    uint32_t acc = 0, off = 0;
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
        uint32_t a = (addr + off) / 4 * 4;
        if (BYTES == 4) {
            uint32_t v = smem[a / 4];
            acc += v; off = v; /* v == 0: a dependent chain that keeps the address */
        } else if (BYTES == 8) {
            uint2 v = *(const uint2 *)&smem[a / 4];
            acc += v.x + v.y; off = v.x;
        } else {
            uint4 v = *(const uint4 *)&smem[a / 4];
            acc += v.x + v.y + v.z + v.w; off = v.x;
        }
    }
    long long t1 = clock64();
    if (lane == 0 && cycles) cycles[0] = (t1 - t0) / iters;
    sink[threadIdx.x] = acc;
}

/* ldmatrix.x4: lane l supplies row address l * stride. */
__global__ void mmp_calib_ldsm(uint32_t stride, int iters, long long *cycles, uint32_t *sink)
{
    __shared__ __align__(16) uint32_t smem[CAL_SMEM / 4];
    for (int i = threadIdx.x; i < CAL_SMEM / 4; i += blockDim.x) smem[i] = 0;
    __syncthreads();
    uint32_t lane = threadIdx.x & 31;
    uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    uint32_t row = base + (lane * stride) % (CAL_SMEM - 16);
    uint32_t acc = 0, off = 0;
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
        uint32_t r0, r1, r2, r3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row + off));
        acc += r0 + r1 + r2 + r3;
        off = r0; /* zero: dependent chain */
    }
    long long t1 = clock64();
    if (lane == 0 && cycles) cycles[0] = (t1 - t0) / iters;
    sink[threadIdx.x] = acc;
}

/* Launch calibration row c with one warp; *cycles_per_access from clock64 (fallback figure). */
extern "C" mmp_status mmp_memory_calib_launch(double *cycles_per_access, const mmp_memory_calib *c, int iters)
{
    long long *d_cycles = NULL, h = 0;
    uint32_t *d_sink = NULL;
    MMP_CUDA_CHECK(cudaMalloc(&d_cycles, sizeof(long long)));
    MMP_CUDA_CHECK(cudaMalloc(&d_sink, 32 * sizeof(uint32_t)));
    uint32_t stride = (uint32_t)c->stride_bytes;
    if (c->kind == MMP_ACCESS_LDSM) mmp_calib_ldsm<<<1, 32>>>(stride, iters, d_cycles, d_sink);
    else if (c->bytes == 4) mmp_calib_lds<4><<<1, 32>>>(stride, iters, d_cycles, d_sink);
    else if (c->bytes == 8) mmp_calib_lds<8><<<1, 32>>>(stride, iters, d_cycles, d_sink);
    else mmp_calib_lds<16><<<1, 32>>>(stride, iters, d_cycles, d_sink);
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaMemcpy(&h, d_cycles, sizeof h, cudaMemcpyDeviceToHost));
    cudaFree(d_cycles);
    cudaFree(d_sink);
    *cycles_per_access = (double)h;
    return MMP_STATUS_OK;
}
