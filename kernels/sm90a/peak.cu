/* peak.cu — the tensor-core peak loops (mmaprobe/peak.h): register-only loops of mma.sync
 * m16n8k16 bf16 (fp32 accumulate) and shared-memory loops of wgmma m64n256k* for bf16, fp16,
 * e4m3 and tf32 inputs (fp32 accumulate), timed with CUDA events. Compiled for sm_90a only
 * (wgmma); operands are fixed small values, only throughput matters.
 *
 *   float ms; int st = mmp_peak_run(&ms, MMP_PEAK_MMA_SYNC, 8, 132 * 2, 100000);
 *   double flops = mmp_peak_flops(MMP_PEAK_MMA_SYNC, 8, 132 * 2, 100000);
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <stdio.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/format.h"
#include "mmaprobe/peak.h"
#include "wgmma_common.cuh"

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

#ifdef MMP_WGMMA_DEVICE
/* d (128 fp32 per thread) += A(64 x 32 bytes of K) * B(32 bytes of K x 256) in the input type of
 * KIND; every kind reads 32 bytes of K per row, so one 128-byte row holds 4 instructions' K. */
template <int KIND>
__device__ static inline void wgmma_peak_op(float *d, uint64_t da, uint64_t db)
{
    if (KIND == MMP_PEAK_WGMMA)
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " DREGS256 ", %128, %129, 1, 1, 1, 0, 0;\n"
                     : R64(0), R64(64) : "l"(da), "l"(db));
    else if (KIND == MMP_PEAK_WGMMA_F16)
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " DREGS256 ", %128, %129, 1, 1, 1, 0, 0;\n"
                     : R64(0), R64(64) : "l"(da), "l"(db));
    else if (KIND == MMP_PEAK_WGMMA_E4M3)
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " DREGS256 ", %128, %129, 1, 1, 1;\n"
                     : R64(0), R64(64) : "l"(da), "l"(db));
    else
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " DREGS256 ", %128, %129, 1, 1, 1;\n"
                     : R64(0), R64(64) : "l"(da), "l"(db));
}
#endif

#define PEAK_B_BYTES (256 * WG_ROW_BYTES) /* one 256-row B tile, 64 bf16 of K per row */
#define PEAK_A_BYTES (64 * WG_ROW_BYTES)

/* Each warpgroup: iters x 4 wgmma m64n256 (one 128-byte K tile: byte offsets q*32 into the
 * 128B-swizzled rows) on one accumulator chain, one commit group per tile kept in flight like
 * the GEMM's consumers. All warpgroups of the block read the same A and B tiles, whose bytes are
 * small finite values in every input type. */
template <int KIND, int WGS>
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
        for (int q = 0; q < 4; q++) wgmma_peak_op<KIND>(d, smem_desc(sa + q * 32), smem_desc(sb + q * 32));
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

typedef void (*peak_fn)(float *, long long);

/* The wgmma loop of kind and warpgroups per block (NULL: none). */
template <int KIND>
static peak_fn wgmma_fn(int units)
{
    return units == 1 ? wgmma_peak_kernel<KIND, 1> : units == 2 ? wgmma_peak_kernel<KIND, 2>
         : units == 3 ? wgmma_peak_kernel<KIND, 3> : (peak_fn)NULL;
}

static peak_fn kernel_of(int kind, int units)
{
    switch (kind) {
    case MMP_PEAK_MMA_SYNC: return units >= 1 && units <= 32 ? mma_sync_peak_kernel : (peak_fn)NULL;
    case MMP_PEAK_WGMMA: return wgmma_fn<MMP_PEAK_WGMMA>(units);
    case MMP_PEAK_WGMMA_F16: return wgmma_fn<MMP_PEAK_WGMMA_F16>(units);
    case MMP_PEAK_WGMMA_E4M3: return wgmma_fn<MMP_PEAK_WGMMA_E4M3>(units);
    case MMP_PEAK_WGMMA_TF32: return wgmma_fn<MMP_PEAK_WGMMA_TF32>(units);
    default: return NULL;
    }
}

extern "C" double mmp_peak_flops(int kind, int units, int blocks, long long iters)
{
    if (kind == MMP_PEAK_MMA_SYNC) return 2.0 * 16 * 8 * 16 * PEAK_CHAINS * (double)iters * units * blocks;
    const double k = kind == MMP_PEAK_WGMMA_E4M3 ? 32 : kind == MMP_PEAK_WGMMA_TF32 ? 8 : 16;
    return 2.0 * 64 * 256 * k * 4 * (double)iters * units * blocks;
}

/* Blocks of this configuration that fit on one SM (0: none, -1: a CUDA error). */
extern "C" int mmp_peak_occupancy(int kind, int units)
{
    peak_fn f = kernel_of(kind, units);
    if (!f) return 0;
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, kind == MMP_PEAK_MMA_SYNC ? units * 32 : units * 128, 0);
    return e == cudaSuccess ? n : -1;
}

/* One timed launch (after one untimed launch of the same shape): *ms its time. Returns 0, or
 * the cudaError_t value (its text: mmp_peak_error). */
extern "C" int mmp_peak_run(float *ms, int kind, int units, int blocks, long long iters)
{
    peak_fn f = kernel_of(kind, units);
    if (blocks < 1 || iters < 1 || !f || (kind != MMP_PEAK_MMA_SYNC && !wgs_ok(units)))
        return (int)cudaErrorInvalidValue;
    int threads = kind == MMP_PEAK_MMA_SYNC ? units * 32 : units * 128;
    float *out = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaError_t err = cudaMalloc((void **)&out, (size_t)blocks * threads * sizeof(float));
    if (err == cudaSuccess) err = cudaEventCreate(&e0);
    if (err == cudaSuccess) err = cudaEventCreate(&e1);
    for (int rep = 0; rep < 2 && err == cudaSuccess; rep++) {
        if (rep == 1) err = cudaEventRecord(e0);
        if (err == cudaSuccess) {
            f<<<blocks, threads>>>(out, iters);
            err = cudaGetLastError();
        }
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

/* ---- the peak of one precision ---- */
static mmp_status peak_cuda(int code)
{
    if (code == 0) return MMP_STATUS_OK;
    MMP_CUDA_CHECK((cudaError_t)code);
    return MMP_STATUS_OK;
}

/* The loop count that makes one launch last about target_ms (from short runs up to >= 5 ms). */
static mmp_status calibrate(long long *iters, int kind, int units, int blocks, double target_ms)
{
    long long n = 64;
    for (;;) {
        float ms = 0;
        MMP_TRY(peak_cuda(mmp_peak_run(&ms, kind, units, blocks, n)));
        if (ms >= 5.0 || n > (1LL << 40)) {
            double scaled = (double)n * target_ms / (ms > 0 ? ms : 1e-3);
            *iters = scaled < 1 ? 1 : (long long)scaled;
            return MMP_STATUS_OK;
        }
        n *= ms < 0.5 ? 16 : 4;
    }
}

extern "C" mmp_status mmp_peak_measure(double *tflops, char *how, size_t how_size, int a_format, int b_format)
{
    static const char *const names[] = {"mma.sync m16n8k16 bf16", "wgmma m64n256k16 bf16", "wgmma m64n256k16 fp16",
                                        "wgmma m64n256k32 e4m3", "wgmma m64n256k8 tf32"};
    const int fp8 = (a_format == MMP_FORMAT_E4M3 || a_format == MMP_FORMAT_E5M2) &&
                    (b_format == MMP_FORMAT_E4M3 || b_format == MMP_FORMAT_E5M2);
    int kind = a_format != b_format && !fp8 ? -1
             : a_format == MMP_FORMAT_BF16 ? MMP_PEAK_WGMMA
             : a_format == MMP_FORMAT_FP16 ? MMP_PEAK_WGMMA_F16
             : fp8 ? MMP_PEAK_WGMMA_E4M3
             : a_format == MMP_FORMAT_TF32 ? MMP_PEAK_WGMMA_TF32 : -1;
    *tflops = 0;
    if (kind < 0) {
        snprintf(how, how_size, "no peak loop for %s x %s", mmp_format_name((mmp_format)a_format),
                 mmp_format_name((mmp_format)b_format));
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s", how);
    }
    int dev = 0, major = 0, minor = 0, sms = 0;
    MMP_CUDA_CHECK(cudaGetDevice(&dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (major != 9 || minor != 0) {
        snprintf(how, how_size, "the peak loops are built for sm_90a (device sm_%d%d)", major, minor);
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s", how);
    }
    static const int configs[][2] = {{2, 1}, {3, 1}, {1, 2}};   /* warpgroups per block, blocks per SM */
    double best = 0;
    char cfg[48] = "";
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        const int units = configs[i][0], per_sm = configs[i][1];
        int fit = mmp_peak_occupancy(kind, units);
        if (fit < 0) MMP_TRY(peak_cuda((int)cudaGetLastError()));
        if (fit < per_sm) continue;
        long long iters;
        float ms = 0;
        MMP_TRY(calibrate(&iters, kind, units, sms * per_sm, 30.0));
        MMP_TRY(peak_cuda(mmp_peak_run(&ms, kind, units, sms * per_sm, iters)));
        double t = ms > 0 ? mmp_peak_flops(kind, units, sms * per_sm, iters) / (ms * 1e9) : 0;
        if (t > best) {
            best = t;
            snprintf(cfg, sizeof cfg, "%d warpgroup(s) x %d block(s) per SM", units, per_sm);
        }
    }
    if (best <= 0) {
        snprintf(how, how_size, "no configuration of the %s loop fits on an SM", names[kind]);
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s", how);
    }
    *tflops = best;
    snprintf(how, how_size, "%s loop, %s", names[kind], cfg);
    return MMP_STATUS_OK;
}
