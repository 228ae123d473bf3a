/* cublas.cu — family `cublas`: cuBLAS and cuBLASLt as kernels under test, one row per
 * precision they support (the vendor baseline every hand-written kernel is compared with).
 *
 * Build: part of libmmp (cmake --build build). Run:
 *   build/mmaprobe validate --filter 'cublas*' --suite smoke   (then --suite edge)
 *
 * Version 1 is cublasGemmEx_64 (fp64, fp32, tf32, fp16/bf16 -> fp32, fp16 -> fp16): any layout,
 *   any leading dimension, any shape.
 * Version 2 is cublasLtMatmul (int8 -> int32, fp8 e4m3/e5m2 -> fp32/bf16): the IMMA and FP8
 *   kernels need the "TN" form (in cuBLAS's column-major terms A transposed, B not), which in
 *   mmaprobe's terms is A row-major and B column-major (either D layout: see cublas_plan.h), and
 *   16-byte aligned leading dimensions; a matrix whose ld is not aligned is staged through the
 *   workspace (cudaMemcpy2DAsync), so any ld works.
 *
 * Layout mapping. cuBLAS is column-major. A row-major X (r x c, ld) read column-major is the
 * c x r matrix X^T with the same ld. With D column-major we compute D = op(A) op(B); with D
 * row-major we compute D^T = op(B^T) op(A^T) into the column-major N x M view of D.
 * C. cublasGemmEx overwrites C in place and mmaprobe's C is read-only, so when beta != 0 the
 * launcher first copies C into D (converting C's layout to D's), then runs in place on D.
 * When beta == 0 cuBLAS does not read C (BLAS convention), so D's poison cannot leak in.
 * Handles are created once per process (the runner runs each kernel in its own child process)
 * and set to the case's stream on every call. cuBLAS is bitwise reproducible run to run on one
 * GPU and toolkit unless atomics mode is enabled (it is off by default), so every row declares
 * deterministic = 1, which the runner checks on every case.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/registry.h"
#include "cublas_plan.h"

/* ------------------------------------------------------------------------------------------ */
/* Shared plumbing: handles, the C -> D copy (the column-major plan is in cublas_plan.c).       */

static cublasHandle_t blas_handle;
static cublasLtHandle_t lt_handle;

static mmp_status get_handles(void)
{
    if (!blas_handle) MMP_CUBLAS_CHECK(cublasCreate(&blas_handle));
    if (!lt_handle) MMP_CUBLAS_CHECK(cublasLtCreate(&lt_handle));
    return MMP_STATUS_OK;
}

template <typename T>
__global__ void copy_matrix(T *dst, int dl, int64_t ldd, const T *src, int sl, int64_t lds,
                            int64_t rows, int64_t cols)
{
    int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows || j >= cols) return;
    size_t d = dl == MMP_LAYOUT_ROW ? (size_t)(i * ldd + j) : (size_t)(j * ldd + i);
    size_t s = sl == MMP_LAYOUT_ROW ? (size_t)(i * lds + j) : (size_t)(j * lds + i);
    dst[d] = src[s];
}

/* dst (D's layout, ld dld) = C, element by element, raw bits (C and D share a format here). */
static mmp_status copy_c_to_d(void *dst, int64_t dld, const mmp_kernel_args *a, size_t elem)
{
    dim3 block(32, 8);
    dim3 grid((unsigned)((a->n + 31) / 32), (unsigned)((a->m + 7) / 8));
    if (grid.y > 65535u) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "cublas: M too large for the C copy");
    cudaStream_t s = (cudaStream_t)a->stream;
#define COPY_AS(T)                                                                             \
    copy_matrix<T><<<grid, block, 0, s>>>((T *)dst, a->layout_d, dld, (const T *)a->c,         \
                                          a->layout_c, a->ldc, a->m, a->n)
    switch (elem) {
    case 2: COPY_AS(uint16_t); break;
    case 4: COPY_AS(uint32_t); break;
    case 8: COPY_AS(uint64_t); break;
    default: return MMP_ERR(MMP_STATUS_INTERNAL, "cublas: no C copy for %zu-byte elements", elem);
    }
#undef COPY_AS
    MMP_CUDA_CHECK(cudaGetLastError());
    return MMP_STATUS_OK;
}

static cublasOperation_t op_of(int op) { return op == MMP_CUBLAS_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N; }

/* Scalars in the type cuBLAS expects for the compute type. */
typedef enum { SCALE_F64, SCALE_F32, SCALE_F16, SCALE_I32 } scale_kind;
typedef union { double d; float f; __half h; int32_t i; } scalar;

static mmp_status make_scalar(scalar *s, double x, scale_kind k)
{
    switch (k) {
    case SCALE_F64: s->d = x; break;
    case SCALE_F32: s->f = (float)x; break;
    case SCALE_F16: s->h = __double2half(x); break;
    case SCALE_I32:
        if (x != nearbyint(x) || fabs(x) > 2147483647.0)
            return MMP_ERR(MMP_STATUS_UNSUPPORTED,
                           "cublas int8: alpha/beta must be int32 integers (got %g)", x);
        s->i = (int32_t)x;
        break;
    }
    return MMP_STATUS_OK;
}

/* How a table row calls cuBLAS. */
typedef struct {
    cudaDataType_t ta, tb, tcd;   /* A, B, C = D storage types */
    cublasComputeType_t compute;
    scale_kind scale;
    size_t cd_bytes;              /* bytes per C/D element */
    int use_lt;                   /* 0: cublasGemmEx_64, 1: cublasLtMatmul */
} blas_spec;

/* ------------------------------------------------------------------------------------------ */
/* Version 1: cublasGemmEx_64.                                                                  */

static mmp_status run_gemmex(const mmp_kernel_args *a, const blas_spec *sp)
{
    MMP_TRY(get_handles());
    MMP_CUBLAS_CHECK(cublasSetStream(blas_handle, (cudaStream_t)a->stream));
    scalar alpha, beta;
    MMP_TRY(make_scalar(&alpha, a->alpha, sp->scale));
    MMP_TRY(make_scalar(&beta, a->beta, sp->scale));
    if (a->beta != 0.0) MMP_TRY(copy_c_to_d(a->d, a->ldd, a, sp->cd_bytes));
    mmp_cublas_plan c;
    mmp_cublas_plan_make(&c, a);
    cudaDataType_t type_p = a->layout_d == MMP_LAYOUT_COL ? sp->ta : sp->tb;
    cudaDataType_t type_q = a->layout_d == MMP_LAYOUT_COL ? sp->tb : sp->ta;
    MMP_CUBLAS_CHECK(cublasGemmEx_64(blas_handle, op_of(c.op_p), op_of(c.op_q), c.mm, c.nn, c.kk, &alpha, c.p,
                                     type_p, c.ldp, c.q, type_q, c.ldq, &beta, a->d, sp->tcd,
                                     a->ldd, sp->compute, CUBLAS_GEMM_DEFAULT));
    return MMP_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Version 2: cublasLtMatmul with workspace staging for unaligned leading dimensions.          */

static mmp_status run_lt(const mmp_kernel_args *a, const blas_spec *sp)
{
    MMP_TRY(get_handles());
    cudaStream_t s = (cudaStream_t)a->stream;
    size_t off[3];
    size_t need = mmp_cublaslt_workspace_layout(off, a->m, a->n, a->k);
    if (!a->workspace || a->workspace_size < need)
        return MMP_ERR(MMP_STATUS_INVALID, "cublasLt: workspace of %zu bytes given, %zu needed",
                       a->workspace_size, need);
    scalar alpha, beta;
    MMP_TRY(make_scalar(&alpha, a->alpha, sp->scale));
    MMP_TRY(make_scalar(&beta, a->beta, sp->scale));
    mmp_cublas_plan c;
    mmp_cublas_plan_make(&c, a);
    if (c.op_p != MMP_CUBLAS_OP_T || c.op_q != MMP_CUBLAS_OP_N)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED,
                       "cublasLt int8/fp8 needs A row-major and B column-major (TN)");
    char *ws = (char *)a->workspace;
    char *stage_p = ws + off[0], *stage_q = ws + off[1], *stage_d = ws + off[2];
    size_t in_bytes = 1;          /* int8 / fp8 inputs */

    /* Stage P and Q when their ld is not 16-byte aligned. */
    const void *p = c.p, *q = c.q;
    int64_t ldp = c.ldp, ldq = c.ldq;
    if (mmp_cublas_misaligned(p, ldp, in_bytes)) {
        ldp = mmp_cublas_staged_ld(c.p_rows);
        MMP_CUDA_CHECK(cudaMemcpy2DAsync(stage_p, (size_t)ldp * in_bytes, c.p, (size_t)c.ldp * in_bytes,
                                         (size_t)c.p_rows * in_bytes, (size_t)c.p_cols,
                                         cudaMemcpyDeviceToDevice, s));
        p = stage_p;
    }
    if (mmp_cublas_misaligned(q, ldq, in_bytes)) {
        ldq = mmp_cublas_staged_ld(c.q_rows);
        MMP_CUDA_CHECK(cudaMemcpy2DAsync(stage_q, (size_t)ldq * in_bytes, c.q, (size_t)c.ldq * in_bytes,
                                         (size_t)c.q_rows * in_bytes, (size_t)c.q_cols,
                                         cudaMemcpyDeviceToDevice, s));
        q = stage_q;
    }
    /* D (column-major mm x nn view): staged when unaligned; C is copied in when beta != 0. */
    void *d = a->d;
    int64_t ldd = a->ldd;
    int staged_d = mmp_cublas_misaligned(d, ldd, sp->cd_bytes);
    if (staged_d) {
        d = stage_d;
        ldd = mmp_cublas_staged_ld(c.mm);
    }
    if (a->beta != 0.0) MMP_TRY(copy_c_to_d(d, ldd, a, sp->cd_bytes));

    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t lp = NULL, lq = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    mmp_status st = MMP_STATUS_OK;
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    cudaDataType_t scale_type = sp->scale == SCALE_I32 ? CUDA_R_32I : CUDA_R_32F;
    cublasOperation_t tp = op_of(c.op_p), tq = op_of(c.op_q);
    size_t lt_ws = MMP_CUBLASLT_WORKSPACE;
    /* the plan's first operand is B when D is row-major (D^T = B^T A^T): so is its type */
    cudaDataType_t type_p = a->layout_d == MMP_LAYOUT_COL ? sp->ta : sp->tb;
    cudaDataType_t type_q = a->layout_d == MMP_LAYOUT_COL ? sp->tb : sp->ta;
#define LT(call)                                                                              \
    do {                                                                                      \
        cublasStatus_t e_ = (call);                                                           \
        if (e_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            st = MMP_ERR(MMP_STATUS_CUDA, "%s: %s", #call, cublasGetStatusString(e_));        \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)
    LT(cublasLtMatmulDescCreate(&op, sp->compute, scale_type));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tp, sizeof tp));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tq, sizeof tq));
    /* FP8: the A/B scale pointers stay NULL (scale 1); fast accumulation stays off (default),
     * so partial sums are promoted to fp32 periodically. */
    LT(cublasLtMatrixLayoutCreate(&lp, type_p, (uint64_t)c.p_rows, (uint64_t)c.p_cols, ldp));
    LT(cublasLtMatrixLayoutCreate(&lq, type_q, (uint64_t)c.q_rows, (uint64_t)c.q_cols, ldq));
    LT(cublasLtMatrixLayoutCreate(&ld, sp->tcd, (uint64_t)c.mm, (uint64_t)c.nn, ldd));
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &lt_ws, sizeof lt_ws));
    LT(cublasLtMatmulAlgoGetHeuristic(lt_handle, op, lp, lq, ld, ld, pref, 1, &h, &found));
    if (found < 1) {
        st = MMP_ERR(MMP_STATUS_UNSUPPORTED, "cublasLt: no algorithm for %lldx%lldx%lld",
                     (long long)a->m, (long long)a->n, (long long)a->k);
        goto done;
    }
    LT(cublasLtMatmul(lt_handle, op, &alpha, p, lp, q, lq, &beta, d, ld, d, ld, &h.algo, ws,
                      lt_ws, s));
    if (staged_d) {
        cudaError_t e = cudaMemcpy2DAsync(a->d, (size_t)a->ldd * sp->cd_bytes, d,
                                          (size_t)ldd * sp->cd_bytes, (size_t)c.mm * sp->cd_bytes,
                                          (size_t)c.nn, cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess)
            st = MMP_ERR(MMP_STATUS_CUDA, "cublasLt: copying the staged D back: %s", cudaGetErrorString(e));
    }
#undef LT
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lq) cublasLtMatrixLayoutDestroy(lq);
    if (lp) cublasLtMatrixLayoutDestroy(lp);
    if (op) cublasLtMatmulDescDestroy(op);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Launchers (one per row, the kernel ABI's signature) and the table.                          */

/* mmp_status -> the kernel ABI's return codes (the message stays in mmp_error_last()). */
static int run_spec(const mmp_kernel_args *a, const blas_spec *sp)
{
    mmp_status st = sp->use_lt ? run_lt(a, sp) : run_gemmex(a, sp);
    return st == MMP_STATUS_OK ? MMP_KERNEL_OK
         : st == MMP_STATUS_UNSUPPORTED ? MMP_KERNEL_UNSUPPORTED : MMP_KERNEL_ERROR;
}

#define SPEC(fn, ta, tb, tcd, comp, sc, bytes, lt)                                             \
    static int fn(const mmp_kernel_args *a)                                                   \
    {                                                                                         \
        static const blas_spec sp = {ta, tb, tcd, comp, sc, bytes, lt};                       \
        return run_spec(a, &sp);                                                              \
    }
SPEC(run_f64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, SCALE_F64, 8, 0)
SPEC(run_f32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 0)
SPEC(run_tf32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, SCALE_F32, 4, 0)
SPEC(run_f16_f32, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 0)
SPEC(run_bf16_f32, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 0)
SPEC(run_f16_f16, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, SCALE_F16, 2, 0)
SPEC(run_i8_i32, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, SCALE_I32, 4, 1)
SPEC(run_e4m3_f32, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 1)
SPEC(run_e4m3_bf16, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, SCALE_F32, 2, 1)
SPEC(run_e5m2_e4m3_f32, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 1)
SPEC(run_e4m3_e5m2_f32, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_32F, CUBLAS_COMPUTE_32F, SCALE_F32, 4, 1)
#undef SPEC

/* Hopper's FP8 tensor cores keep about 14 significand bits in their internal sums between
 * cuBLASLt's promotions to fp32 (DeepSeek-V3 report, sec. 3.3.2); the bound uses that. */
#define FP8_ACC_BITS 14

#define ROW(nm, fa, fb, fcd, facc, fmul, bits, lay_a, lay_b, mult, cc, ws, fn, what)            \
    ROW_C(nm, fa, fb, fcd, facc, fmul, bits, lay_a, lay_b, mult, cc, ws, fn, what, 1)
#define ROW_C(nm, fa, fb, fcd, facc, fmul, bits, lay_a, lay_b, mult, cc, ws, fn, what, rc)      \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = nm, .family = "cublas", .a_format = fa,   \
     .b_format = fb, .c_format = fcd, .d_format = fcd, .acc_format = facc, .mul_format = fmul, \
     .acc_bits = bits, .layouts_a = lay_a, .layouts_b = lay_b, .layouts_d = MMP_LAYOUTS_ANY,  \
     .reads_c = rc, .m_multiple = mult, .n_multiple = mult, .k_multiple = mult, .min_cc = cc,  \
     .arch_specific = 0, .deterministic = 1, .where = MMP_KERNEL_DEVICE,                      \
     .workspace_bytes = ws, .run = fn, .description = what}
#define ANY MMP_LAYOUTS_ANY
#define F(x) MMP_FORMAT_##x

static const mmp_kernel_desc cublas_table[] = {
    ROW("cublas_f64", F(FP64), F(FP64), F(FP64), F(FP64), -1, 0, ANY, ANY, 1, 75, NULL, run_f64,
        "cublasGemmEx_64, CUBLAS_COMPUTE_64F (DGEMM)"),
    ROW("cublas_f32", F(FP32), F(FP32), F(FP32), F(FP32), -1, 0, ANY, ANY, 1, 75, NULL, run_f32,
        "cublasGemmEx_64, CUBLAS_COMPUTE_32F (SGEMM, no TF32)"),
    ROW("cublas_tf32", F(FP32), F(FP32), F(FP32), F(FP32), F(TF32), 0, ANY, ANY, 1, 80, NULL, run_tf32,
        "cublasGemmEx_64, CUBLAS_COMPUTE_32F_FAST_TF32: inputs cut to tf32, fp32 accumulation"),
    ROW("cublas_f16_f32", F(FP16), F(FP16), F(FP32), F(FP32), -1, 0, ANY, ANY, 1, 75, NULL, run_f16_f32,
        "cublasGemmEx_64, fp16 inputs, CUBLAS_COMPUTE_32F, fp32 C/D"),
    ROW("cublas_bf16_f32", F(BF16), F(BF16), F(FP32), F(FP32), -1, 0, ANY, ANY, 1, 80, NULL, run_bf16_f32,
        "cublasGemmEx_64, bf16 inputs, CUBLAS_COMPUTE_32F, fp32 C/D"),
    ROW("cublas_f16_f16", F(FP16), F(FP16), F(FP16), F(FP16), -1, 0, ANY, ANY, 1, 75, NULL, run_f16_f16,
        "cublasGemmEx_64, CUBLAS_COMPUTE_16F (HGEMM, fp16 accumulation)"),
    /* IMMA takes int32 alpha/beta only, which the ABI cannot declare: tested as D = A B. */
    ROW_C("cublaslt_i8_i32", F(INT8), F(INT8), F(INT32), F(INT32), -1, 0, MMP_LAYOUTS_ROW,
          MMP_LAYOUTS_COL, 4, 75, mmp_cublaslt_workspace_bytes, run_i8_i32,
          "cublasLtMatmul IMMA, CUBLAS_COMPUTE_32I, TN only, M/N/K multiples of 4, D = A B", 0),
    ROW("cublaslt_e4m3_f32", F(E4M3), F(E4M3), F(FP32), F(FP32), -1, FP8_ACC_BITS, MMP_LAYOUTS_ROW,
        MMP_LAYOUTS_COL, 16, 89, mmp_cublaslt_workspace_bytes, run_e4m3_f32,
        "cublasLtMatmul FP8 e4m3 x e4m3 -> fp32, TN only, scales 1, no fast accumulation"),
    ROW("cublaslt_e4m3_bf16", F(E4M3), F(E4M3), F(BF16), F(FP32), -1, FP8_ACC_BITS, MMP_LAYOUTS_ROW,
        MMP_LAYOUTS_COL, 16, 89, mmp_cublaslt_workspace_bytes, run_e4m3_bf16,
        "cublasLtMatmul FP8 e4m3 x e4m3 -> bf16, TN only, scales 1, no fast accumulation"),
    ROW("cublaslt_e5m2_e4m3_f32", F(E5M2), F(E4M3), F(FP32), F(FP32), -1, FP8_ACC_BITS,
        MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL, 16, 89, mmp_cublaslt_workspace_bytes, run_e5m2_e4m3_f32,
        "cublasLtMatmul FP8 e5m2 x e4m3 -> fp32, TN only (e5m2 x e5m2 is not offered)"),
    ROW("cublaslt_e4m3_e5m2_f32", F(E4M3), F(E5M2), F(FP32), F(FP32), -1, FP8_ACC_BITS,
        MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL, 16, 89, mmp_cublaslt_workspace_bytes, run_e4m3_e5m2_f32,
        "cublasLtMatmul FP8 e4m3 x e5m2 -> fp32, TN only"),
};
#undef ROW
#undef ROW_C
#undef ANY
#undef F

extern "C" const mmp_kernel_desc *mmp_kernels_cublas(size_t *count)
{
    *count = sizeof cublas_table / sizeof cublas_table[0];
    return cublas_table;
}
