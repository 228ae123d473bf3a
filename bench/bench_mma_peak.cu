/* bench/bench_mma_peak.cu — the device half of bench_mma_peak.c: register-only loops of
 * mma.sync m16n8k16 bf16 (fp32 accumulate) and shared-memory loops of wgmma m64n256k16 bf16,
 * timed with CUDA events. Compiled for sm_90a only (wgmma); operands are fixed small values,
 * only throughput matters.
 *
 *   float ms; int st = mmp_peak_run(&ms, MMP_PEAK_MMA_SYNC, 8, 132 * 2, 100000);
 *   double flops = mmp_peak_flops(MMP_PEAK_MMA_SYNC, 8, 132 * 2, 100000);
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "bench/bench_mma_peak.h"
#include "kernels/sm90a/wgmma_common.cuh"

#define PEAK_CHAINS 8 /* independent accumulator sets per warp (mma.sync latency ~ 30 cycles) */

/* Each warp: iters x PEAK_CHAINS independent m16n8k16 bf16 MMAs on registers. */
__global__ void mma_sync_peak_kernel(float *out, long long iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t lane = threadIdx.x & 31;
    /* bf16 pairs of magnitude ~2^-10 (exponent 117): sums stay finite over any loop length */
    uint32_t a0 = 0x3A803A80u | lane, a1 = a0 ^ 0x00010000u, a2 = a0 ^ 0x2u, a3 = a0 ^ 0x00040004u;
    uint32_t b0 = 0x3A813A82u ^ lane, b1 = b0 ^ 0x00080000u;
    float acc[PEAK_CHAINS][4];
#pragma unroll
    for (int c = 0; c < PEAK_CHAINS; c++)
#pragma unroll
        for (int r = 0; r < 4; r++) acc[c][r] = 0.f;
    for (long long i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < PEAK_CHAINS; c++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                         : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < PEAK_CHAINS; c++) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

#define PEAK_B_BYTES (256 * WG_ROW_BYTES) /* one 256-row B tile, 64 bf16 of K per row */
#define PEAK_A_BYTES (64 * WG_ROW_BYTES)

/* Each warpgroup: iters x 4 wgmma m64n256k16 (one 64-wide K tile: byte offsets q*32 into the
 * 128B-swizzled rows) on one accumulator chain, one commit group per tile kept in flight like
 * the GEMM's consumers. All warpgroups of the block read the same A and B tiles. */
template <int WGS>
__global__ void __launch_bounds__(WGS * 128, 1) wgmma_peak_kernel(float *out, long long iters)
{
#ifdef MMP_WGMMA_DEVICE
    __shared__ __align__(1024) uint8_t sb[PEAK_B_BYTES];
    __shared__ __align__(1024) uint8_t sa[PEAK_A_BYTES];
    for (int i = threadIdx.x; i < PEAK_B_BYTES / 4; i += blockDim.x)
        ((uint32_t *)sb)[i] = 0x3A803A80u ^ (uint32_t)(i & 0x007F007F);
    for (int i = threadIdx.x; i < PEAK_A_BYTES / 4; i += blockDim.x)
        ((uint32_t *)sa)[i] = 0x3A803A80u ^ (uint32_t)((i * 7) & 0x007F007F);
    fence_async_smem(); /* ordinary stores read next by the tensor cores */
    __syncthreads();
    float d[128];
#pragma unroll
    for (int j = 0; j < 128; j++) d[j] = 0.f;
    for (long long i = 0; i < iters; i++) {
        fence_operands<128>(d);
        wg_fence();
#pragma unroll
        for (int q = 0; q < 4; q++) wgmma_bf16_m64n256k16(d, smem_desc(sa + q * 32), smem_desc(sb + q * 32), 1);
        wg_commit();
        wg_wait<1>();
        fence_operands<128>(d);
    }
    wg_wait<0>();
    fence_operands<128>(d);
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 128; j++) s += d[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

static int wgs_ok(int units) { return units >= 1 && units <= 3; }

extern "C" double mmp_peak_flops(int kind, int units, int blocks, long long iters)
{
    if (kind == MMP_PEAK_MMA_SYNC) return 2.0 * 16 * 8 * 16 * PEAK_CHAINS * (double)iters * units * blocks;
    return 2.0 * 64 * 256 * 16 * 4 * (double)iters * units * blocks;
}

/* Blocks of this configuration that fit on one SM (0: none, -1: a CUDA error). */
extern "C" int mmp_peak_occupancy(int kind, int units)
{
    int n = 0;
    cudaError_t e;
    if (kind == MMP_PEAK_MMA_SYNC)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, mma_sync_peak_kernel, units * 32, 0);
    else if (units == 1)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, wgmma_peak_kernel<1>, 128, 0);
    else if (units == 2)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, wgmma_peak_kernel<2>, 256, 0);
    else if (units == 3)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, wgmma_peak_kernel<3>, 384, 0);
    else
        return 0;
    return e == cudaSuccess ? n : -1;
}

/* One timed launch (after one untimed launch of the same shape): *ms its time. Returns 0, or
 * the cudaError_t value (its text: mmp_peak_error). */
extern "C" int mmp_peak_run(float *ms, int kind, int units, int blocks, long long iters)
{
    if (blocks < 1 || iters < 1 || (kind == MMP_PEAK_WGMMA && !wgs_ok(units)) ||
        (kind == MMP_PEAK_MMA_SYNC && (units < 1 || units > 32)))
        return (int)cudaErrorInvalidValue;
    int threads = kind == MMP_PEAK_MMA_SYNC ? units * 32 : units * 128;
    float *out = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaError_t err = cudaMalloc((void **)&out, (size_t)blocks * threads * sizeof(float));
    if (err == cudaSuccess) err = cudaEventCreate(&e0);
    if (err == cudaSuccess) err = cudaEventCreate(&e1);
    for (int rep = 0; rep < 2 && err == cudaSuccess; rep++) {
        if (rep == 1) cudaEventRecord(e0);
        if (kind == MMP_PEAK_MMA_SYNC) mma_sync_peak_kernel<<<blocks, threads>>>(out, iters);
        else if (units == 1) wgmma_peak_kernel<1><<<blocks, threads>>>(out, iters);
        else if (units == 2) wgmma_peak_kernel<2><<<blocks, threads>>>(out, iters);
        else wgmma_peak_kernel<3><<<blocks, threads>>>(out, iters);
        err = cudaGetLastError();
        if (rep == 1 && err == cudaSuccess) err = cudaEventRecord(e1);
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
    }
    if (err == cudaSuccess) err = cudaEventElapsedTime(ms, e0, e1);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (out) cudaFree(out);
    return (int)err;
}

extern "C" const char *mmp_peak_error(int code) { return cudaGetErrorString((cudaError_t)code); }
