/* kernels/int8_ptx.cu — the INT8 kernel family, from dp4a to the 3-stage mma.sync pipeline:
 * D (int32) = A (s8) * B (s8), exact.
 *
 * Build: part of libmmp (cmake --build build). Run: mmaprobe validate --kernel 'int8_*'; time:
 * build/bench_kernels --filter 'int8_*' (measured: results/h200/kernels/kernels.md).
 * Data: A row-major M x K; B stored N x K ("col-major", K contiguous: the layout mma.sync .row.col
 * wants); D row-major M x N int32; accumulation in int32 (wraps modulo 2^32 like the hardware; the
 * runner's data keep |sum| < 2^31). C is not read (reads_c = 0). Shapes outside a kernel's declared
 * multiples, other layouts, or lda/ldb not a multiple of 16 bytes return MMP_KERNEL_UNSUPPORTED (SKIP).
 *
 * version 1 is int8_dp4a: one thread per output, dp4a over 4 bytes of K (no tensor cores); any
 *   M, N, K, A row/col, B row/col (sm_61+).
 * version 2 is int8_wmma: nvcuda::wmma s8 m16n16k16 per warp, operands staged by the same 2-stage
 *   cp.async loader as the PTX kernels, K step 16 (the double-buffered WMMA baseline).
 * version 3 is int8_ptx_mma_k16: mma.sync m16n8k16.s8, K step 16 (ldmatrix.x2 for A and B).
 * version 4 is int8_ptx_mma_k32: mma.sync m16n8k32.s8, K step 32 (ldmatrix.x4 A, .x2 B per n8).
 * version 5 is int8_ptx_manual_pack: version 4 with per-lane ld.shared.b32 fragment gathers.
 * version 6 is int8_ptx_3stage: version 4 with a 3-stage cp.async pipeline (wait_group 1).
 * Versions 3-6 share kernels/int_ptx.cuh; their address functions (kernels/int_ptx_addr.h) are the
 * memory maps (kernels/int_ptx_maps.c) and are checked on the host by tests/check_kernint_maps.c.
 */
#include <mma.h>

#include "int_ptx.cuh"
#include "mmaprobe/registry.h"

/* ------------------------------------------------------------------------------------------------ */
/* version 1: dp4a, any shape and layout */

__global__ void int8_dp4a_kernel(const int8_t *__restrict__ A, const int8_t *__restrict__ B,
                                 int32_t *__restrict__ D, int M, int N, int K, int la, int lb,
                                 int64_t lda, int64_t ldb, int64_t ldd)
{
    const int64_t i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M || j >= N) return;
    int32_t acc = 0;
    for (int k0 = 0; k0 < K; k0 += 4) {
        uint32_t pa = 0, pb = 0;                      /* 4 bytes of K packed low byte first */
        for (int u = 0; u < 4 && k0 + u < K; u++) {   /* past K: zero bytes add nothing */
            int64_t k = k0 + u;
            int8_t x = A[la == MMP_LAYOUT_ROW ? i * lda + k : k * lda + i];
            int8_t y = B[lb == MMP_LAYOUT_ROW ? k * ldb + j : j * ldb + k];
            pa |= (uint32_t)(uint8_t)x << (8 * u);
            pb |= (uint32_t)(uint8_t)y << (8 * u);
        }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
        acc = __dp4a((int)pa, (int)pb, acc);
#else
        __trap();
#endif
    }
    D[i * ldd + j] = acc;
}

static int run_dp4a(const mmp_kernel_args *a)
{
    if (a->layout_d != MMP_LAYOUT_ROW || a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX)
        return MMP_KERNEL_UNSUPPORTED;
    if (a->alpha != 1.0 || a->beta != 0.0) return MMP_KERNEL_UNSUPPORTED;   /* D = A * B only */
    dim3 block(16, 16), grid((unsigned)((a->n + 15) / 16), (unsigned)((a->m + 15) / 16));
    int8_dp4a_kernel<<<grid, block, 0, (cudaStream_t)a->stream>>>(
        (const int8_t *)a->a, (const int8_t *)a->b, (int32_t *)a->d, (int)a->m, (int)a->n, (int)a->k,
        a->layout_a, a->layout_b, a->lda, a->ldb, a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

/* ------------------------------------------------------------------------------------------------ */
/* version 2: WMMA s8 m16n16k16, same warp tiling and loader as the PTX kernels in the K-step-16
 * configuration: unpadded 16-byte rows keep every fragment pointer 256-bit aligned, as
 * load_matrix_sync requires (a 16 x 16 s8 tile per 256 bytes). */

__global__ void __launch_bounds__(MMP_INTK_THREADS)
int8_wmma_kernel(const uint8_t *__restrict__ A, const uint8_t *__restrict__ B, int32_t *__restrict__ D,
                 int M, int N, int K, int64_t lda_b, int64_t ldb_b, int64_t ldd)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    constexpr mmp_intk_cfg c = {8, 16, 2, 2, 2, 0, 0};
    __shared__ __align__(128) uint8_t smem[mmp_intk_smem_total(c) + MMP_INTK_WARPS * MMP_INTK_WMMA_SCRATCH];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = mmp_intk_warp_m0(blockIdx.y, warp), n0 = mmp_intk_warp_n0(blockIdx.x, warp);
    if (m0 >= M || n0 >= N) return;
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem);
    const int ksteps = K / c.bkb, rs = mmp_intk_row_stride(c);
    auto load_stage = [&](int kt, int stage) {
        int row, kb;
        if (!mmp_intk_copy_chunk(c, 0, lane, &row, &kb)) return;
        mmp_cp_async16<0>(sbase + mmp_intk_smem_a(c, stage, warp, row, kb),
                          A + mmp_intk_gaddr(lda_b, m0, (int64_t)kt * c.bkb, row, kb));
        mmp_cp_async16<0>(sbase + mmp_intk_smem_b(c, stage, warp, row, kb),
                          B + mmp_intk_gaddr(ldb_b, n0, (int64_t)kt * c.bkb, row, kb));
    };
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::fill_fragment(acc, 0);
    load_stage(0, 0);
    mmp_cp_async_commit();
    for (int kt = 0; kt < ksteps; kt++) {
        mmp_cp_async_wait<0>();
        __syncwarp();
        if (kt + 1 < ksteps) load_stage(kt + 1, (kt + 1) % 2);
        mmp_cp_async_commit();
        for (int kk = 0; kk < c.bkb; kk += 16) {   /* one k16 step per stage */
            wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
            wmma::load_matrix_sync(fa, (const signed char *)smem + mmp_intk_smem_a(c, kt % 2, warp, 0, kk), rs);
            wmma::load_matrix_sync(fb, (const signed char *)smem + mmp_intk_smem_b(c, kt % 2, warp, 0, kk), rs);
            wmma::mma_sync(acc, fa, fb, acc);
        }
    }
    int32_t *scratch = (int32_t *)(smem + mmp_intk_smem_total(c) + warp * MMP_INTK_WMMA_SCRATCH);
    wmma::store_matrix_sync(scratch, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) D[(int64_t)(m0 + e / 16) * ldd + n0 + e % 16] = scratch[e];
#else
    __trap();
#endif
}

static int run_wmma(const mmp_kernel_args *a)
{
    int st = mmp_intk_check(a, 8, 16, 1);
    if (st) return st;
    dim3 grid((unsigned)((a->n + MMP_INTK_TILE_N - 1) / MMP_INTK_TILE_N),
              (unsigned)((a->m + MMP_INTK_TILE_M - 1) / MMP_INTK_TILE_M));
    int8_wmma_kernel<<<grid, MMP_INTK_THREADS, 0, (cudaStream_t)a->stream>>>(
        (const uint8_t *)a->a, (const uint8_t *)a->b, (int32_t *)a->d, (int)a->m, (int)a->n, (int)a->k,
        a->lda, a->ldb, a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

/* ------------------------------------------------------------------------------------------------ */
/* versions 3-6: the templated mma.sync kernel of int_ptx.cuh, one instantiation per row */

#define INT8_RUN(name, bits, bkb, s, ald, bld, bt, cg, text) \
    static int run_##name(const mmp_kernel_args *a) { return mmp_intk_run<bits, bkb, s, ald, bld, bt, cg>(a); }
MMP_INT8_PTX_ROWS(INT8_RUN)

#define INT8_ROW(name, bits, bkb, s, ald, bld, bt, cg, text) \
    mmp_intk_desc(#name, "int8_ptx", 8, 16, 16, bkb, MMP_LAYOUTS_COL, 80, run_##name, text),
static const mmp_kernel_desc int8_table[] = {
    mmp_intk_desc("int8_dp4a", "int8_ptx", 8, 1, 1, 1, MMP_LAYOUTS_ANY, 61, run_dp4a,
                  "dp4a, one thread per output, no tensor cores; any shape, A and B row or col"),
    mmp_intk_desc("int8_wmma", "int8_ptx", 8, 16, 16, 16, MMP_LAYOUTS_COL, 80, run_wmma,
                  "WMMA s8 m16n16k16, 2-stage cp.async staging (INT8 WMMA baseline)"),
    MMP_INT8_PTX_ROWS(INT8_ROW)
};

extern "C" const mmp_kernel_desc *mmp_kernels_int8_ptx(size_t *count)
{
    *count = sizeof int8_table / sizeof int8_table[0];
    return int8_table;
}
