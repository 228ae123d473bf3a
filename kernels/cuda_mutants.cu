/* cuda_mutants.cu — family `cuda_mutants`: a correct tiled shared-memory GEMM and deliberately
 * broken copies of it. The harness must catch every mutant, with the right reason
 * (suites/check_gpu_mutants.c holds the expected reason of each; the device script checks them
 * on the H200). Never in the default kernel list: `mmaprobe validate --mutants`.
 *
 * Build: part of libmmp. Run:
 *   build/mmaprobe validate --mutants --suite kernels/cuda_mutants.suite --timeout 10
 *
 * All share one descriptor shape: fp16 A, B (row-major), fp32 C, D (row-major), fp32
 * accumulator, alpha/beta, any M, N, K, any leading dimensions, deterministic.
 *
 * Version 1 is cuda_mut_base: 16 x 16 tiles of A and B staged in shared memory, a barrier after
 *   the loads and after the products, fp32 fma accumulation (fp16 products are exact in fp32),
 *   bounds-checked loads and stores. It must PASS: it is the control.
 * The mutants, each one change to version 1 (template parameter MUT):
 *   drop_k_tile      the K loop stops one tile early (the last K tile is never added)
 *   edge_unwritten   the grid is M/16 x N/16 rounded down: partial edge tiles never written
 *   swap             in tile (0, 0), elements (0, 1) and (1, 0) trade places on the store
 *   no_sync          both __syncthreads() removed: warps read shared tiles others still write
 *   past_tile        the thread of D(M-1, N-1) also writes D(M-1, N): one past the row's end
 *   fp16_acc         accumulates in fp16 (__hfma) behind the declared fp32 accumulator
 *   nan_clamp        the epilogue clamps to [-FLT_MAX, FLT_MAX] with fmaxf/fminf: NaN -> finite
 *   wrong_ld         indexes A with K as its leading dimension instead of lda
 *   scribble         after its products, thread (0, 0) flips the last bit of A[0]
 *   hang             thread (0, 0) spins on a volatile flag nobody sets (the runner's timeout)
 *   illegal_address  thread (0, 0) stores through a NULL pointer (sticky CUDA error)
 *   m_residue        when M % 64 == 37, row M-1 is computed from row M-2 of A (a remainder
 *                    path wrong for one residue class: edge's residue sweep catches it)
 *   ldb_is_ldd       B indexed with ldd instead of ldb (equal when tight or padded alike:
 *                    edge's cases that pad B or D alone catch it)
 *   edge_nan         rows past the last multiple of 16 store 0 for NaN (edge's special case
 *                    with partial tiles catches it; smoke's tile-aligned one does not)
 * cuda_mut_base_cd is version 1 taking row- and column-major C and D (C's index follows its
 * layout and ldc): the control of the same shape for
 *   c_col_packed     column-major C read as packed row-major (edge's alpha/beta case with
 *                    column-major C catches it)
 * The tolerance mutants and their controls (rows after the others):
 *   base_h / rz_out        version 1 with an fp16 output: converted by __float2half_rn (the
 *                          control) / __float2half_rz where nearest is declared (biased-rounding)
 *   base_f16acc / narrow_low  version 1 accumulating in fp16 (__hfma) with a DECLARED fp16
 *                          accumulator and output (the control) / the same with the 4 low
 *                          fraction bits of the accumulator cleared after every product
 *                          (bound-exceeded against the tensor-core model)
 *   base_bf16 / flush_sub  a one-thread-per-output bf16 -> fp32 fmaf loop (the control) / the
 *                          same flushing subnormal results to zero, undeclared (flushed-subnormal)
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/registry.h"

enum {
    MUT_NONE, MUT_DROP_K_TILE, MUT_EDGE_UNWRITTEN, MUT_SWAP, MUT_NO_SYNC, MUT_PAST_TILE,
    MUT_FP16_ACC, MUT_NAN_CLAMP, MUT_WRONG_LD, MUT_SCRIBBLE, MUT_HANG, MUT_ILLEGAL_ADDRESS,
    MUT_M_RESIDUE, MUT_LDB_IS_LDD, MUT_EDGE_NAN, MUT_BASE_CD, MUT_C_COL_PACKED,
    MUT_BASE_H, MUT_RZ_OUT, MUT_BASE_F16ACC, MUT_NARROW_LOW
};
/* fp16 output (d is __half): the rounding pair and the narrow-accumulator pair */
#define MUT_HALF_OUT(m) ((m) == MUT_BASE_H || (m) == MUT_RZ_OUT || (m) == MUT_BASE_F16ACC || (m) == MUT_NARROW_LOW)
#define MUT_HALF_ACC(m) ((m) == MUT_FP16_ACC || (m) == MUT_BASE_F16ACC || (m) == MUT_NARROW_LOW)

#define TILE 16

/* Never written by anyone: the hang mutant waits for it. */
__device__ int mutant_never_set;

struct mut_params {
    const __half *a, *b;
    const float *c;
    float *d;
    int64_t m, n, k, lda, ldb, ldc, ldd;
    float alpha, beta;
    int c_col, d_col;             /* 1: C / D column-major (the _cd rows only) */
    float *null_ptr;              /* NULL, opaque to the compiler (illegal_address) */
};

/* ------------------------------------------------------------------------------------------ */
/* Version 1 and its mutants.                                                                   */

template <int MUT>
__global__ void tiled_gemm(mut_params p)
{
    __shared__ __half as[TILE][TILE];
    __shared__ __half bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = (int64_t)blockIdx.y * TILE + ty;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    const int64_t lda = MUT == MUT_WRONG_LD ? p.k : p.lda;
    const int64_t ldb = MUT == MUT_LDB_IS_LDD ? p.ldd : p.ldb;
    const int64_t arow = MUT == MUT_M_RESIDUE && p.m % 64 == 37 && row == p.m - 1 ? row - 1 : row;
    int64_t tiles = (p.k + TILE - 1) / TILE;
    if (MUT == MUT_DROP_K_TILE) tiles -= 1;

    float acc = 0.0f;
    __half hacc = __float2half(0.0f);
    for (int64_t t = 0; t < tiles; t++) {
        int64_t ka = t * TILE + tx, kb = t * TILE + ty;
        as[ty][tx] = row < p.m && ka < p.k ? p.a[arow * lda + ka] : __float2half(0.0f);
        bs[ty][tx] = kb < p.k && col < p.n ? p.b[kb * ldb + col] : __float2half(0.0f);
        if (MUT != MUT_NO_SYNC) __syncthreads();
        for (int kk = 0; kk < TILE; kk++) {
            if (MUT == MUT_NARROW_LOW) hacc = __ushort_as_half((unsigned short)(__half_as_ushort(hacc) & 0xFFF0u));
            if (MUT_HALF_ACC(MUT)) hacc = __hfma(as[ty][kk], bs[kk][tx], hacc);
            else acc = fmaf(__half2float(as[ty][kk]), __half2float(bs[kk][tx]), acc);
        }
        if (MUT != MUT_NO_SYNC) __syncthreads();
    }
    if (MUT_HALF_ACC(MUT)) acc = __half2float(hacc);
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && tx == 0 && ty == 0;
    if (MUT == MUT_HANG && first)
        while (*(volatile int *)&mutant_never_set == 0) { }
    if (MUT == MUT_ILLEGAL_ADDRESS && first) *(volatile float *)p.null_ptr = acc;
    if (MUT == MUT_SCRIBBLE && first) {
        unsigned short *a0 = (unsigned short *)(uintptr_t)p.a;
        a0[0] ^= 1u;
    }
    if (row >= p.m || col >= p.n) return;

    float r = p.alpha * acc;
    if (p.beta != 0.0f) {
        float cv;
        if (MUT == MUT_BASE_F16ACC || MUT == MUT_NARROW_LOW) {
            cv = __half2float(((const __half *)(const void *)p.c)[row * p.ldc + col]);
        } else {
            int64_t ci = p.c_col ? col * p.ldc + row : row * p.ldc + col;
            if (MUT == MUT_C_COL_PACKED && p.c_col) ci = row * p.n + col;
            cv = p.c[ci];
        }
        r = fmaf(p.beta, cv, r);
    }
    if (MUT == MUT_NAN_CLAMP) r = fminf(fmaxf(r, -FLT_MAX), FLT_MAX);
    if (MUT == MUT_EDGE_NAN && row >= p.m / TILE * TILE && isnan(r)) r = 0.0f;
    int64_t wr = row, wc = col;
    if (MUT == MUT_SWAP && blockIdx.x == 0 && blockIdx.y == 0 && p.m >= 2 && p.n >= 2) {
        if (ty == 0 && tx == 1) { wr = 1; wc = 0; }
        if (ty == 1 && tx == 0) { wr = 0; wc = 1; }
    }
    if (MUT_HALF_OUT(MUT)) {
        __half *dh = (__half *)(void *)p.d;
        dh[wr * p.ldd + wc] = MUT == MUT_RZ_OUT ? __float2half_rz(r) : __float2half_rn(r);
        return;
    }
    p.d[p.d_col ? wc * p.ldd + wr : wr * p.ldd + wc] = r;
    if (MUT == MUT_PAST_TILE && row == p.m - 1 && col == p.n - 1) p.d[wr * p.ldd + wc + 1] = r;
}

/* bf16 -> fp32, one thread per output, fp32 fmaf in K order; FLUSH: subnormal results -> 0. */
template <int FLUSH>
__global__ void bf16_gemm(const __nv_bfloat16 *a, const __nv_bfloat16 *b, const float *c, float *d, int64_t m,
                          int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t ldd, float alpha,
                          float beta)
{
    const int64_t row = (int64_t)blockIdx.y * TILE + threadIdx.y, col = (int64_t)blockIdx.x * TILE + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int64_t t = 0; t < k; t++) acc = fmaf(__bfloat162float(a[row * lda + t]), __bfloat162float(b[t * ldb + col]), acc);
    float r = alpha * acc;
    if (beta != 0.0f) r = fmaf(beta, c[row * ldc + col], r);
    if (FLUSH && fabsf(r) < FLT_MIN) r = 0.0f * r;
    d[row * ldd + col] = r;
}

template <int FLUSH>
static int bf16_launch(const mmp_kernel_args *a)
{
    if (a->layout_a != MMP_LAYOUT_ROW || a->layout_b != MMP_LAYOUT_ROW || a->layout_d != MMP_LAYOUT_ROW ||
        (a->beta != 0.0 && a->layout_c != MMP_LAYOUT_ROW)) {
        MMP_ERR(MMP_STATUS_UNSUPPORTED, "cuda mutants: row-major A, B, C, D only");
        return MMP_KERNEL_UNSUPPORTED;
    }
    int64_t gx = (a->n + TILE - 1) / TILE, gy = (a->m + TILE - 1) / TILE;
    if (gy > 65535) {
        MMP_ERR(MMP_STATUS_UNSUPPORTED, "cuda mutants: M = %lld is too large", (long long)a->m);
        return MMP_KERNEL_UNSUPPORTED;
    }
    bf16_gemm<FLUSH><<<dim3((unsigned)gx, (unsigned)gy), dim3(TILE, TILE), 0, (cudaStream_t)a->stream>>>(
        (const __nv_bfloat16 *)a->a, (const __nv_bfloat16 *)a->b, (const float *)a->c, (float *)a->d, a->m, a->n,
        a->k, a->lda, a->ldb, a->ldc, a->ldd, (float)a->alpha, (float)a->beta);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        MMP_ERR(MMP_STATUS_CUDA, "cuda mutant launch: %s", cudaGetErrorString(e));
        return MMP_KERNEL_ERROR;
    }
    return MMP_KERNEL_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Launchers: one signature; the edge mutant's bug is in its grid.                              */

template <int MUT>
static int mut_launch(const mmp_kernel_args *a)
{
    const bool cd_any = MUT == MUT_BASE_CD || MUT == MUT_C_COL_PACKED;
    if (a->layout_a != MMP_LAYOUT_ROW || a->layout_b != MMP_LAYOUT_ROW ||
        (!cd_any && (a->layout_d != MMP_LAYOUT_ROW || (a->beta != 0.0 && a->layout_c != MMP_LAYOUT_ROW)))) {
        MMP_ERR(MMP_STATUS_UNSUPPORTED, "cuda mutants: row-major A, B (and C, D but for the _cd rows) only");
        return MMP_KERNEL_UNSUPPORTED;
    }
    mut_params p = {(const __half *)a->a, (const __half *)a->b, (const float *)a->c, (float *)a->d,
                    a->m, a->n, a->k, a->lda, a->ldb, a->ldc, a->ldd,
                    (float)a->alpha, (float)a->beta, a->layout_c == MMP_LAYOUT_COL,
                    a->layout_d == MMP_LAYOUT_COL, NULL};
    int64_t gx = (a->n + TILE - 1) / TILE, gy = (a->m + TILE - 1) / TILE;
    if (MUT == MUT_EDGE_UNWRITTEN) {
        gx = a->n / TILE > 0 ? a->n / TILE : 1;
        gy = a->m / TILE > 0 ? a->m / TILE : 1;
    }
    if (gy > 65535) {
        MMP_ERR(MMP_STATUS_UNSUPPORTED, "cuda mutants: M = %lld is too large", (long long)a->m);
        return MMP_KERNEL_UNSUPPORTED;
    }
    tiled_gemm<MUT><<<dim3((unsigned)gx, (unsigned)gy), dim3(TILE, TILE), 0,
                      (cudaStream_t)a->stream>>>(p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        MMP_ERR(MMP_STATUS_CUDA, "cuda mutant launch: %s", cudaGetErrorString(e));
        return MMP_KERNEL_ERROR;
    }
    return MMP_KERNEL_OK;
}

#define MUT_ROW_D(nm, mut, what, d_layouts)                                                    \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = nm, .family = "cuda_mutants",             \
     .a_format = MMP_FORMAT_FP16, .b_format = MMP_FORMAT_FP16, .c_format = MMP_FORMAT_FP32,   \
     .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,            \
     .acc_bits = 0, .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_ROW,               \
     .layouts_d = d_layouts, .reads_c = 1, .m_multiple = 1, .n_multiple = 1,                  \
     .k_multiple = 1, .min_cc = 60, .arch_specific = 0, .deterministic = 1,                   \
     .where = MMP_KERNEL_DEVICE, .workspace_bytes = NULL, .run = mut_launch<mut>,             \
     .description = what}
#define MUT_ROW(nm, mut, what) MUT_ROW_D(nm, mut, what, MMP_LAYOUTS_ROW)
/* C and D in either layout (C's follows D's in the built-in suites) */
#define MUT_ROW_CD(nm, mut, what) MUT_ROW_D(nm, mut, what, MMP_LAYOUTS_ANY)

/* a row of other formats: input, C, D, accumulator, launcher */
#define MUT_ROW_F(nm, in, cf, df, acc, launch, what)                                           \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = nm, .family = "cuda_mutants",             \
     .a_format = MMP_FORMAT_##in, .b_format = MMP_FORMAT_##in, .c_format = MMP_FORMAT_##cf,   \
     .d_format = MMP_FORMAT_##df, .acc_format = MMP_FORMAT_##acc, .mul_format = -1,           \
     .acc_bits = 0, .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_ROW,               \
     .layouts_d = MMP_LAYOUTS_ROW, .reads_c = 1, .m_multiple = 1, .n_multiple = 1,            \
     .k_multiple = 1, .min_cc = 80, .arch_specific = 0, .deterministic = 1,                   \
     .where = MMP_KERNEL_DEVICE, .workspace_bytes = NULL, .run = launch,                      \
     .description = what}

static const mmp_kernel_desc mutant_table[] = {
    MUT_ROW("cuda_mut_base", MUT_NONE, "control: correct 16x16 shared-memory tiled fp16 GEMM"),
    MUT_ROW("cuda_mut_drop_k_tile", MUT_DROP_K_TILE, "mutant: the last K tile is dropped"),
    MUT_ROW("cuda_mut_edge_unwritten", MUT_EDGE_UNWRITTEN, "mutant: partial edge tiles never written"),
    MUT_ROW("cuda_mut_swap", MUT_SWAP, "mutant: two elements of tile (0,0) swapped on the store"),
    MUT_ROW("cuda_mut_no_sync", MUT_NO_SYNC, "mutant: the __syncthreads() barriers are missing (race)"),
    MUT_ROW("cuda_mut_past_tile", MUT_PAST_TILE, "mutant: one element written past the end of D's last row"),
    MUT_ROW("cuda_mut_fp16_acc", MUT_FP16_ACC, "mutant: fp16 accumulation behind a declared fp32 accumulator"),
    MUT_ROW("cuda_mut_nan_clamp", MUT_NAN_CLAMP, "mutant: the epilogue clamp swallows NaN and Inf"),
    MUT_ROW("cuda_mut_wrong_ld", MUT_WRONG_LD, "mutant: A indexed with K instead of lda"),
    MUT_ROW("cuda_mut_scribble", MUT_SCRIBBLE, "mutant: writes to the input A"),
    MUT_ROW("cuda_mut_hang", MUT_HANG, "mutant: spins forever on a flag nobody sets"),
    MUT_ROW("cuda_mut_illegal_address", MUT_ILLEGAL_ADDRESS, "mutant: stores through a NULL pointer"),
    MUT_ROW("cuda_mut_m_residue", MUT_M_RESIDUE, "mutant: M % 64 == 37 computes the last row from the row above"),
    MUT_ROW("cuda_mut_ldb_is_ldd", MUT_LDB_IS_LDD, "mutant: B indexed with ldd instead of ldb"),
    MUT_ROW("cuda_mut_edge_nan", MUT_EDGE_NAN, "mutant: NaN stored as 0 in partial M tiles"),
    MUT_ROW_CD("cuda_mut_base_cd", MUT_BASE_CD, "control: version 1 with row- or column-major C and D"),
    MUT_ROW_CD("cuda_mut_c_col_packed", MUT_C_COL_PACKED, "mutant: column-major C read as packed row-major"),
    MUT_ROW_F("cuda_mut_base_h", FP16, FP32, FP16, FP32, mut_launch<MUT_BASE_H>,
              "control: version 1 with an fp16 output rounded to nearest"),
    MUT_ROW_F("cuda_mut_rz_out", FP16, FP32, FP16, FP32, mut_launch<MUT_RZ_OUT>,
              "mutant: fp16 output converted toward zero, nearest declared"),
    MUT_ROW_F("cuda_mut_base_f16acc", FP16, FP16, FP16, FP16, mut_launch<MUT_BASE_F16ACC>,
              "control: version 1 accumulating in fp16 (declared)"),
    MUT_ROW_F("cuda_mut_narrow_low", FP16, FP16, FP16, FP16, mut_launch<MUT_NARROW_LOW>,
              "mutant: fp16 accumulator losing its 4 low fraction bits"),
    MUT_ROW_F("cuda_mut_base_bf16", BF16, FP32, FP32, FP32, bf16_launch<0>,
              "control: bf16 -> fp32 fmaf loop, subnormals kept"),
    MUT_ROW_F("cuda_mut_flush_sub", BF16, FP32, FP32, FP32, bf16_launch<1>,
              "mutant: bf16 -> fp32 flushing subnormal results to zero (undeclared)"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_cuda_mutants(size_t *count)
{
    *count = sizeof mutant_table / sizeof mutant_table[0];
    return mutant_table;
}
