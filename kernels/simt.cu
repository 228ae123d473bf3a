/* simt.cu — family `simt`: one plain CUDA-core GEMM per precision, the baseline every
 * tensor-core kernel is compared with. No tensor cores, no shared memory: each thread computes
 * one element of D = alpha * A * B + beta * C with a fused multiply-add per k, in k order.
 *
 * Build: part of libmmp (cmake --build build). Run:
 *   build/mmaprobe validate --filter 'simt_*' --suite smoke   (then --suite edge)
 *
 * Version 1 is the only version: one thread per output element, 16 x 16 threads per block,
 * any M, N, K, any layout of A, B, C, D, any leading dimensions, alpha/beta honoured (C is not
 * read when beta == 0, as in BLAS). Accumulation is in the declared accumulator format:
 *   fp64 x fp64 -> fp64 (acc fp64), fp32 x fp32 -> fp32 (acc fp32),
 *   fp16 / bf16 / e4m3 -> fp32 (acc fp32: every product is exact in fp32, so one rounding per k),
 *   int8 x int8 -> int32 (acc int32, wrapping modulo 2^32 like IMMA).
 * The epilogue runs in the accumulator format (fp32: alpha*acc then fma(beta, c, .)); the int8
 * kernel applies alpha and beta in binary64 and rounds to nearest (exact for integer alpha/beta
 * below 2^53), then wraps to int32.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/registry.h"

/* ------------------------------------------------------------------------------------------ */
/* Element loads: storage format -> the accumulator's type (exact for every format here).      */

template <int F> struct fmt;
template <> struct fmt<MMP_FORMAT_FP64> {
    __device__ static double load(const void *p, size_t i) { return ((const double *)p)[i]; }
};
template <> struct fmt<MMP_FORMAT_FP32> {
    __device__ static float load(const void *p, size_t i) { return ((const float *)p)[i]; }
};
template <> struct fmt<MMP_FORMAT_FP16> {
    __device__ static float load(const void *p, size_t i) { return __half2float(((const __half *)p)[i]); }
};
template <> struct fmt<MMP_FORMAT_BF16> {
    __device__ static float load(const void *p, size_t i)
    {
        return __uint_as_float((uint32_t)((const uint16_t *)p)[i] << 16);
    }
};
template <> struct fmt<MMP_FORMAT_E4M3> {
    /* OCP e4m3 ("FN"): bias 7, no infinities, S.1111.111 is NaN. */
    __device__ static float load(const void *p, size_t i)
    {
        uint32_t v = ((const uint8_t *)p)[i];
        uint32_t s = v >> 7, e = (v >> 3) & 15u, m = v & 7u;
        float x;
        if (e == 15u && m == 7u) x = __int_as_float(0x7fc00000);
        else if (e == 0u) x = ldexpf((float)m, -9);
        else x = ldexpf((float)(8u + m), (int)e - 10);
        return s ? -x : x;
    }
};
template <> struct fmt<MMP_FORMAT_INT8> {
    __device__ static int32_t load(const void *p, size_t i) { return ((const int8_t *)p)[i]; }
};
template <> struct fmt<MMP_FORMAT_INT32> {
    __device__ static int32_t load(const void *p, size_t i) { return ((const int32_t *)p)[i]; }
};

__device__ static inline size_t at(int layout, int64_t ld, int64_t i, int64_t j)
{
    return layout == MMP_LAYOUT_ROW ? (size_t)(i * ld + j) : (size_t)(j * ld + i);
}

/* Multiply-accumulate and epilogue in the accumulator's type. */
__device__ static inline double mac(double acc, double a, double b) { return fma(a, b, acc); }
__device__ static inline float mac(float acc, float a, float b) { return fmaf(a, b, acc); }
__device__ static inline int32_t mac(int32_t acc, int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(a * b)); /* wraps like the hardware */
}

__device__ static inline double epilogue(double acc, double alpha, double beta, const void *c, size_t ic)
{
    double r = alpha * acc;
    return beta != 0.0 ? fma(beta, ((const double *)c)[ic], r) : r;
}
__device__ static inline float epilogue(float acc, double alpha, double beta, const void *c, size_t ic)
{
    float r = (float)alpha * acc;
    return beta != 0.0 ? fmaf((float)beta, ((const float *)c)[ic], r) : r;
}
__device__ static inline int32_t epilogue(int32_t acc, double alpha, double beta, const void *c, size_t ic)
{
    double r = alpha * (double)acc;
    if (beta != 0.0) r = fma(beta, (double)((const int32_t *)c)[ic], r);
    return (int32_t)(uint32_t)(uint64_t)llrint(r);
}

struct simt_params {
    const void *a, *b, *c;
    void *d;
    int64_t m, n, k, lda, ldb, ldc, ldd;
    int la, lb, lc, ld;
    double alpha, beta;
};

template <int FA, int FB, typename Acc>
__global__ void simt_gemm(simt_params p)
{
    int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.m || j >= p.n) return;
    Acc acc = 0;
    for (int64_t k = 0; k < p.k; k++)
        acc = mac(acc, (Acc)fmt<FA>::load(p.a, at(p.la, p.lda, i, k)),
                  (Acc)fmt<FB>::load(p.b, at(p.lb, p.ldb, k, j)));
    ((Acc *)p.d)[at(p.ld, p.ldd, i, j)] = epilogue(acc, p.alpha, p.beta, p.c, at(p.lc, p.ldc, i, j));
}

/* ------------------------------------------------------------------------------------------ */
/* Launchers: one signature (the kernel ABI's), one per table row.                             */

template <int FA, int FB, typename Acc>
static int simt_launch(const mmp_kernel_args *a)
{
    if (a->m <= 0 || a->n <= 0 || a->k <= 0) {
        MMP_ERR(MMP_STATUS_INVALID, "simt: M, N, K must be positive");
        return MMP_STATUS_INVALID;
    }
    if (a->beta != 0.0 && !a->c) {
        MMP_ERR(MMP_STATUS_INVALID, "simt: beta != 0 but C is NULL");
        return MMP_STATUS_INVALID;
    }
    simt_params p = {a->a, a->b, a->c, a->d, a->m, a->n, a->k, a->lda, a->ldb, a->ldc, a->ldd,
                     a->layout_a, a->layout_b, a->layout_c, a->layout_d, a->alpha, a->beta};
    dim3 block(16, 16);
    dim3 grid((unsigned)((a->n + 15) / 16), (unsigned)((a->m + 15) / 16));
    if (grid.y > 65535u) {
        MMP_ERR(MMP_STATUS_UNSUPPORTED, "simt: M = %lld needs more than 65535 row blocks", (long long)a->m);
        return MMP_STATUS_UNSUPPORTED;
    }
    simt_gemm<FA, FB, Acc><<<grid, block, 0, (cudaStream_t)a->stream>>>(p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        MMP_ERR(MMP_STATUS_CUDA, "simt: launch failed: %s", cudaGetErrorString(e));
        return MMP_STATUS_CUDA;
    }
    return 0;
}

static int run_f64(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_FP64, MMP_FORMAT_FP64, double>(a); }
static int run_f32(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_FP32, MMP_FORMAT_FP32, float>(a); }
static int run_f16(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_FP16, MMP_FORMAT_FP16, float>(a); }
static int run_bf16(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_BF16, MMP_FORMAT_BF16, float>(a); }
static int run_e4m3(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_E4M3, MMP_FORMAT_E4M3, float>(a); }
static int run_i8(const mmp_kernel_args *a) { return simt_launch<MMP_FORMAT_INT8, MMP_FORMAT_INT8, int32_t>(a); }

/* ------------------------------------------------------------------------------------------ */
/* The table.                                                                                   */

#define SIMT_ROW(nm, fa, fcd, facc, fn, what)                                                  \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = nm, .family = "simt", .a_format = fa,     \
     .b_format = fa, .c_format = fcd, .d_format = fcd, .acc_format = facc, .mul_format = -1,  \
     .acc_bits = 0, .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY,               \
     .layouts_d = MMP_LAYOUTS_ANY, .reads_c = 1, .m_multiple = 1, .n_multiple = 1,            \
     .k_multiple = 1, .min_cc = 50, .arch_specific = 0, .deterministic = 1,                   \
     .where = MMP_KERNEL_DEVICE, .workspace_bytes = NULL, .run = fn, .description = what}

static const mmp_kernel_desc simt_table[] = {
    SIMT_ROW("simt_f64", MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, run_f64,
             "CUDA cores, one thread per element, fp64 fma in k order"),
    SIMT_ROW("simt_f32", MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, run_f32,
             "CUDA cores, one thread per element, fp32 fma in k order"),
    SIMT_ROW("simt_f16_f32", MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, run_f16,
             "CUDA cores, fp16 inputs, exact products, fp32 fma accumulation"),
    SIMT_ROW("simt_bf16_f32", MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, run_bf16,
             "CUDA cores, bf16 inputs, exact products, fp32 fma accumulation"),
    SIMT_ROW("simt_e4m3_f32", MMP_FORMAT_E4M3, MMP_FORMAT_FP32, MMP_FORMAT_FP32, run_e4m3,
             "CUDA cores, fp8 e4m3 inputs decoded in software, fp32 fma accumulation"),
    SIMT_ROW("simt_i8_i32", MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32, run_i8,
             "CUDA cores, int8 inputs, int32 wrapping accumulation"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_simt(size_t *count)
{
    *count = sizeof simt_table / sizeof simt_table[0];
    return simt_table;
}
