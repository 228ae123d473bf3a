/* kernels/int4_ptx.cu — the INT4 kernel family, from WMMA to mma.sync m16n8k64 and its loader
 * ablations: D (int32) = A (s4) * B (s4), exact.
 *
 * Build: part of libmmp (cmake --build build). Run: mmaprobe validate --kernel 'int4_*'; time:
 * build/bench_kernels --filter 'int4_*' (measured: results/h200/kernels/kernels.md).
 * Data: int4 two per byte, low nibble first (format.h); A row-major M x K; B stored N x K
 * ("col-major", K contiguous); ld in elements (even); D row-major int32, int32 accumulation; C not
 * read. Shapes outside the declared multiples, other layouts, or lda/ldb not a multiple of 16 bytes
 * (32 elements) return MMP_KERNEL_UNSUPPORTED (SKIP).
 * Hardware: the s4 mma.sync shapes are m8n8k32 (sm_75+), m16n8k32 and m16n8k64 (sm_80+), so
 * min_cc is 80 (cp.async too). Hopper (sm_90) has no INT4 tensor-core datapath: ptxas lowers s4
 * mma.sync to an emulation there; the SASS column of the kernels table (cuobjdump) shows which.
 *
 * version 1 is int4_wmma: nvcuda::wmma::experimental::precision::s4 8x8x32, 2 x 2 fragments per
 *   warp, staged by the 2-stage cp.async loader with K step 32 (the INT4 WMMA baseline).
 * version 2 is int4_ptx_mma_k32: mma.sync m16n8k32.s4, K step 32 (ldmatrix.x2 A and B).
 * version 3 is int4_ptx_mma_k64: mma.sync m16n8k64.s4, K step 64, ldmatrix.x4 A / .x2 B per n8,
 *   non-transposed B, cp.async.ca: the baseline that versions 4-10 each change in one respect.
 * version 4 is int4_ptx_manual_pack: version 3 with per-lane ld.shared.b32 fragment gathers.
 * version 5 is int4_ptx_3stage: version 3 with a 3-stage cp.async pipeline (wait_group 1).
 * versions 6-10 are ablations of version 3: A loader x1 / x2, B loader x1, cp.async.cg,
 *   and the transposed-B loader (1-byte loads across N: ~2 useful bytes per 32-byte sector).
 * Versions 2-10 share kernels/int_ptx.cuh; their address functions (kernels/int_ptx_addr.h) are the
 * memory maps (kernels/int_ptx_maps.c) and are checked on the host by tests/check_kernint_maps.c.
 */
#include <mma.h>

#include "int_ptx.cuh"
#include "mmaprobe/registry.h"

/* ------------------------------------------------------------------------------------------------ */
/* version 1: WMMA experimental s4 8x8x32 (unpadded 16-byte rows: 256-bit aligned fragment pointers) */

__global__ void __launch_bounds__(MMP_INTK_THREADS)
int4_wmma_kernel(const uint8_t *__restrict__ A, const uint8_t *__restrict__ B, int32_t *__restrict__ D,
                 int M, int N, int K, int64_t lda_b, int64_t ldb_b, int64_t ldd)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    namespace wx = nvcuda::wmma::experimental;
    constexpr mmp_intk_cfg c = {4, 16, 2, 2, 2, 0, 0};
    __shared__ __align__(128) uint8_t smem[mmp_intk_smem_total(c) + MMP_INTK_WARPS * MMP_INTK_WMMA_SCRATCH];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = mmp_intk_warp_m0(blockIdx.y, warp), n0 = mmp_intk_warp_n0(blockIdx.x, warp);
    if (m0 >= M || n0 >= N) return;
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem);
    const int ksteps = (int)((int64_t)K / 2 / c.bkb);
    const unsigned ldm = 2 * mmp_intk_row_stride(c);          /* in s4 elements */
    auto load_stage = [&](int kt, int stage) {
        int row, kb;
        if (!mmp_intk_copy_chunk(c, 0, lane, &row, &kb)) return;
        mmp_cp_async16<0>(sbase + mmp_intk_smem_a(c, stage, warp, row, kb),
                          A + mmp_intk_gaddr(lda_b, m0, (int64_t)kt * c.bkb, row, kb));
        mmp_cp_async16<0>(sbase + mmp_intk_smem_b(c, stage, warp, row, kb),
                          B + mmp_intk_gaddr(ldb_b, n0, (int64_t)kt * c.bkb, row, kb));
    };
    wmma::fragment<wmma::accumulator, 8, 8, 32, int> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0);
    load_stage(0, 0);
    mmp_cp_async_commit();
    for (int kt = 0; kt < ksteps; kt++) {
        mmp_cp_async_wait<0>();
        __syncwarp();
        if (kt + 1 < ksteps) load_stage(kt + 1, (kt + 1) % 2);
        mmp_cp_async_commit();
        wmma::fragment<wmma::matrix_a, 8, 8, 32, wx::precision::s4, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 8, 8, 32, wx::precision::s4, wmma::col_major> fb[2];
        for (int i = 0; i < 2; i++) {
            wmma::load_matrix_sync(fa[i], smem + mmp_intk_smem_a(c, kt % 2, warp, 8 * i, 0), ldm);
            wmma::load_matrix_sync(fb[i], smem + mmp_intk_smem_b(c, kt % 2, warp, 8 * i, 0), ldm);
        }
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    int32_t *scratch = (int32_t *)(smem + mmp_intk_smem_total(c) + warp * MMP_INTK_WMMA_SCRATCH);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(scratch + 8 * i * 16 + 8 * j, acc[i][j], 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) D[(int64_t)(m0 + e / 16) * ldd + n0 + e % 16] = scratch[e];
#else
    __trap();
#endif
}

static int run_wmma(const mmp_kernel_args *a)
{
    int st = mmp_intk_check(a, 4, 32, 1);
    if (st) return st;
    dim3 grid((unsigned)((a->n + MMP_INTK_TILE_N - 1) / MMP_INTK_TILE_N),
              (unsigned)((a->m + MMP_INTK_TILE_M - 1) / MMP_INTK_TILE_M));
    int4_wmma_kernel<<<grid, MMP_INTK_THREADS, 0, (cudaStream_t)a->stream>>>(
        (const uint8_t *)a->a, (const uint8_t *)a->b, (int32_t *)a->d, (int)a->m, (int)a->n, (int)a->k,
        a->lda / 2, a->ldb / 2, a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

/* ------------------------------------------------------------------------------------------------ */
/* versions 2-10: the templated mma.sync kernel of int_ptx.cuh, one instantiation per row */

#define INT4_RUN(name, bits, bkb, s, ald, bld, bt, cg, text) \
    static int run_##name(const mmp_kernel_args *a) { return mmp_intk_run<bits, bkb, s, ald, bld, bt, cg>(a); }
MMP_INT4_PTX_ROWS(INT4_RUN)

#define INT4_ROW(name, bits, bkb, s, ald, bld, bt, cg, text) \
    mmp_intk_desc(#name, "int4_ptx", 4, 16, 16, 2 * bkb, MMP_LAYOUTS_COL, 80, run_##name, text),
static const mmp_kernel_desc int4_table[] = {
    mmp_intk_desc("int4_wmma", "int4_ptx", 4, 16, 16, 32, MMP_LAYOUTS_COL, 80, run_wmma,
                  "WMMA experimental s4 8x8x32, 2-stage cp.async staging (INT4 WMMA baseline)"),
    MMP_INT4_PTX_ROWS(INT4_ROW)
};

extern "C" const mmp_kernel_desc *mmp_kernels_int4_ptx(size_t *count)
{
    *count = sizeof int4_table / sizeof int4_table[0];
    return int4_table;
}
