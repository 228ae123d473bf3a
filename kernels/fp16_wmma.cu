/* kernels/fp16_wmma.cu — family fp16_wmma: WMMA GEMMs from naive to double-buffered (FP16 in,
 * FP32 accumulate and output), the same-precision baseline of the fp16_ptx family.
 *
 * D (row-major, M x N, fp32) = A (row-major, M x K, fp16) * B (row-major, K x N, fp16).
 *
 *   version 1 is fp16_wmma_naive: one warp per 16 x 16 tile of D, wmma::load_matrix_sync
 *     straight from global memory along K (4 warps per CTA). M, N, K multiples of 16.
 *   version 2 is fp16_wmma_shared: 128 x 64 CTA tile, 8 warps of 32 x 32 (2 x 2 fragments),
 *     BK 64 staged in padded shared memory by 16-byte ld.global + st.shared.
 *   version 3 is fp16_wmma_cp_async: as 2 with BK 32 and two shared-memory buffers filled by
 *     cp.async.cg 16 (double buffering; 29.7 KB of shared memory per CTA).
 * Versions 2 and 3 need M % 128, N % 64 and K % BK == 0 (the runner SKIPs other shapes).
 * Leading dimensions: multiples of 8 (16-byte chunks, WMMA's ldm rule); D's of 8 (32-byte
 * aligned fragment stores).
 *
 * The staging copies use kernels/kern16_addr.h (mmp_k16_wmma_copy_*), which the memory maps
 * in kernels/kern16_memmaps.c share. The WMMA fragment loads themselves have an unspecified
 * lane mapping (CUDA Programming Guide), so the maps list the copies only.
 *
 * Build: part of libmmp. Run: mmaprobe validate --kernels 'fp16_wmma_*'; time:
 * build/bench_kernels --filter 'fp16_wmma_*'. Measured timings: results/h200/kernels/kernels.md.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>

#include "kern16_addr.h"
#include "mma_ptx.cuh"
#include "mmaprobe/gemm.h"
#include "mmaprobe/registry.h"

using namespace nvcuda;

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_c;

/* ---------------------------------------------------------------------------------------- */
/* version 1: naive */
__global__ void __launch_bounds__(128)
fp16_wmma_naive(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ D, int M, int N,
                int K, long long lda, long long ldb, long long ldd)
{
    const long long tile = (long long)blockIdx.x * 4 + (threadIdx.x >> 5);
    const long long tiles_n = N / 16;
    const long long tm = tile / tiles_n, tn = tile % tiles_n;
    if (tm >= M / 16) return;
    frag_a a;
    frag_b b;
    frag_c c;
    wmma::fill_fragment(c, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + tm * 16 * lda + k, (unsigned)lda);
        wmma::load_matrix_sync(b, B + (long long)k * ldb + tn * 16, (unsigned)ldb);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(D + tm * 16 * ldd + tn * 16, c, (unsigned)ldd, wmma::mem_row_major);
}

/* ---------------------------------------------------------------------------------------- */
/* versions 2 and 3 share the warp tile: warp w owns rows 32*(w/2), columns 32*(w%2). */
__device__ __forceinline__ void wmma_tile_step(frag_c c[2][2], const half *sa, const half *sb, int a_pitch,
                                               int b_pitch, int wm, int wn, int kk)
{
    frag_a a[2];
    frag_b b[2];
#pragma unroll
    for (int i = 0; i < 2; i++) wmma::load_matrix_sync(a[i], sa + (wm + i * 16) * a_pitch + kk, a_pitch);
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::load_matrix_sync(b[j], sb + kk * b_pitch + wn + j * 16, b_pitch);
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::mma_sync(c[i][j], a[i], b[j], c[i][j]);
}

__device__ __forceinline__ void wmma_tile_store(float *D, long long ldd, long long m0, long long n0, frag_c c[2][2],
                                                int wm, int wn)
{
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(D + (m0 + wm + i * 16) * ldd + n0 + wn + j * 16, c[i][j], (unsigned)ldd,
                                    wmma::mem_row_major);
}

/* version 2: shared-memory tiles, synchronous staging */
__global__ void __launch_bounds__(256)
fp16_wmma_shared(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ D, int M, int N,
                 int K, long long lda, long long ldb, long long ldd)
{
    constexpr mmp_k16_wmma_cfg C = mmp_k16_wmma_shared;
    __shared__ __align__(128) uint8_t smem[mmp_k16_wmma_stage_bytes(C)];
    const half *sa = (const half *)smem, *sb = (const half *)(smem + 2 * C.bm * C.a_pitch);
    const int tid = threadIdx.x, warp = tid >> 5, wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const long long m0 = (long long)blockIdx.y * C.bm, n0 = (long long)blockIdx.x * C.bn;
    frag_c c[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(c[i][j], 0.0f);
    (void)M; (void)N;
    for (int k0 = 0; k0 < K; k0 += C.bk) {
#pragma unroll
        for (int i = 0; i < mmp_k16_wmma_copies_a(C); i++) {
            mmp_k16_copy cp = mmp_k16_wmma_copy_a(C, tid, i);
            *(uint4 *)(smem + cp.smem) = *(const uint4 *)(A + (m0 + cp.row) * lda + k0 + cp.chunk * 8);
        }
#pragma unroll
        for (int i = 0; i < mmp_k16_wmma_copies_b(C); i++) {
            mmp_k16_copy cp = mmp_k16_wmma_copy_b(C, tid, i);
            *(uint4 *)(smem + 2 * C.bm * C.a_pitch + cp.smem) =
                *(const uint4 *)(B + (long long)(k0 + cp.row) * ldb + n0 + cp.chunk * 8);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < C.bk; kk += 16) wmma_tile_step(c, sa, sb, C.a_pitch, C.b_pitch, wm, wn, kk);
        __syncthreads();
    }
    wmma_tile_store(D, ldd, m0, n0, c, wm, wn);
}

/* version 3: cp.async double buffering */
__global__ void __launch_bounds__(256)
fp16_wmma_cp_async(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ D, int M, int N,
                   int K, long long lda, long long ldb, long long ldd)
{
    constexpr mmp_k16_wmma_cfg C = mmp_k16_wmma_cp_async;
    constexpr int SB = mmp_k16_wmma_stage_bytes(C), AB = 2 * C.bm * C.a_pitch;
    __shared__ __align__(128) uint8_t smem[C.stages * SB];
    const uint32_t sbase = mmp_k16_smem_u32(smem);
    const int tid = threadIdx.x, warp = tid >> 5, wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const long long m0 = (long long)blockIdx.y * C.bm, n0 = (long long)blockIdx.x * C.bn;
    const int ktiles = K / C.bk;
    (void)M; (void)N;
    auto load_stage = [&](int stage, int kt) {
        const long long k0 = (long long)kt * C.bk;
#pragma unroll
        for (int i = 0; i < mmp_k16_wmma_copies_a(C); i++) {
            mmp_k16_copy cp = mmp_k16_wmma_copy_a(C, tid, i);
            mmp_k16_cp_async16(sbase + stage * SB + cp.smem, A + (m0 + cp.row) * lda + k0 + cp.chunk * 8, 1);
        }
#pragma unroll
        for (int i = 0; i < mmp_k16_wmma_copies_b(C); i++) {
            mmp_k16_copy cp = mmp_k16_wmma_copy_b(C, tid, i);
            mmp_k16_cp_async16(sbase + stage * SB + AB + cp.smem, B + (k0 + cp.row) * ldb + n0 + cp.chunk * 8, 1);
        }
    };
    frag_c c[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(c[i][j], 0.0f);
    load_stage(0, 0);
    mmp_k16_cp_commit();
    for (int kt = 0; kt < ktiles; kt++) {
        mmp_k16_cp_wait<0>();
        __syncthreads();              /* slice kt landed; everyone is done with slice kt-1 */
        if (kt + 1 < ktiles) load_stage((kt + 1) & 1, kt + 1);
        mmp_k16_cp_commit();
        const half *sa = (const half *)(smem + (kt & 1) * SB), *sb = (const half *)(smem + (kt & 1) * SB + AB);
#pragma unroll
        for (int kk = 0; kk < C.bk; kk += 16) wmma_tile_step(c, sa, sb, C.a_pitch, C.b_pitch, wm, wn, kk);
    }
    wmma_tile_store(D, ldd, m0, n0, c, wm, wn);
}

/* ---------------------------------------------------------------------------------------- */
/* The one launcher signature. Returns MMP_KERNEL_OK, MMP_KERNEL_UNSUPPORTED for arguments
 * outside the descriptor's contract (layouts, shape multiples, leading dimensions, alignment),
 * or MMP_KERNEL_ERROR for a launch error. */
typedef void (*wmma_kernel_fn)(const half *, const half *, float *, int, int, int, long long, long long,
                               long long);
static int wmma_launch(const mmp_kernel_args *a, wmma_kernel_fn fn, int bm, int bn, int bk, int threads)
{
    if (a->layout_a != MMP_LAYOUT_ROW || a->layout_b != MMP_LAYOUT_ROW || a->layout_d != MMP_LAYOUT_ROW) return MMP_KERNEL_UNSUPPORTED;
    if (a->m <= 0 || a->n <= 0 || a->k <= 0 || a->m > (1LL << 30) || a->n > (1LL << 30) || a->k > (1LL << 30))
        return MMP_KERNEL_UNSUPPORTED;
    if (a->m % bm || a->n % bn || a->k % bk || a->lda % 8 || a->ldb % 8 || a->ldd % 8) return MMP_KERNEL_UNSUPPORTED;
    if (((uintptr_t)a->a | (uintptr_t)a->b | (uintptr_t)a->d) & 31u) return MMP_KERNEL_UNSUPPORTED;
    dim3 grid, block((unsigned)threads);
    if (bm == 16) {            /* naive: 4 warps, one 16 x 16 tile each */
        long long tiles = (a->m / 16) * (a->n / 16);
        if ((tiles + 3) / 4 > 0x7fffffffLL) return MMP_KERNEL_UNSUPPORTED;
        grid = dim3((unsigned)((tiles + 3) / 4));
    } else {
        if (a->m / bm > 65535) return MMP_KERNEL_UNSUPPORTED;
        grid = dim3((unsigned)(a->n / bn), (unsigned)(a->m / bm));
    }
    fn<<<grid, block, 0, (cudaStream_t)a->stream>>>((const half *)a->a, (const half *)a->b, (float *)a->d,
                                                    (int)a->m, (int)a->n, (int)a->k, (long long)a->lda,
                                                    (long long)a->ldb, (long long)a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}
static int run_naive(const mmp_kernel_args *a) { return wmma_launch(a, fp16_wmma_naive, 16, 16, 16, 128); }
static int run_shared(const mmp_kernel_args *a) { return wmma_launch(a, fp16_wmma_shared, 128, 64, 64, 256); }
static int run_cp_async(const mmp_kernel_args *a) { return wmma_launch(a, fp16_wmma_cp_async, 128, 64, 32, 256); }

#define WMMA_ROW(name, mm, nm, km, fn, text)                                                          \
    {MMP_KERNEL_ABI_VERSION, name, "fp16_wmma", MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP32,     \
     MMP_FORMAT_FP32, MMP_FORMAT_FP32, -1, 0, MMP_LAYOUTS_ROW, MMP_LAYOUTS_ROW, MMP_LAYOUTS_ROW, 0, mm, nm, \
     km, 80, 0, 1, MMP_KERNEL_DEVICE, NULL, fn, text}
static const mmp_kernel_desc fp16_wmma_table[] = {
    WMMA_ROW("fp16_wmma_naive", 16, 16, 16, run_naive, "WMMA 16x16x16, one warp per 16x16 tile, operands from global"),
    WMMA_ROW("fp16_wmma_shared", 128, 64, 64, run_shared, "WMMA, 128x64 smem tile, 2x2 fragments per warp, BK 64"),
    WMMA_ROW("fp16_wmma_cp_async", 128, 64, 32, run_cp_async, "WMMA, cp.async double-buffered, BK 32 (baseline)"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_fp16_wmma(size_t *count)
{
    *count = sizeof fp16_wmma_table / sizeof fp16_wmma_table[0];
    return fp16_wmma_table;
}
