/* wgmma.cu — Hopper (sm_90a) warpgroup GEMMs: wgmma.mma_async from shared memory, BF16 and
 * FP8 E4M3, fp32 accumulation, D = A * B (fp32, row-major).
 *
 * Build: part of libmmp (kernels/sm90a/ is compiled with -gencode arch=compute_90a,code=sm_90a).
 * Run:   mmaprobe validate --filter 'wgmma_*'      (H100/H200 only; other GPUs: SKIP)
 *
 * Operands: A row-major M x K, B column-major K x N (that is N x K with K contiguous: both
 * operands "K-major", the layout wgmma reads without transposition for every type).
 * Shared-memory tiles are 128-byte rows (64 bf16 or 128 fp8 of K) in the 128-byte swizzle
 * (16-byte chunk c of row r stored at chunk c ^ (r % 8), 1024-byte aligned) that both TMA's
 * CU_TENSOR_MAP_SWIZZLE_128B and the wgmma descriptor's swizzle mode 1 use.
 *
 * version 1 is wgmma_bf16_simple: one warpgroup, 64x128 tile, K step 64; every thread loads
 *   elements with bounds checks (zero fill), so any M, N, K and leading dimension work.
 * version 2 is wgmma_bf16_tma: TMA loads into a 4-stage mbarrier pipeline, one producer warp
 *   and two consumer warpgroups, 128x128 tile (needs M, N multiples of 128, K of 64 and
 *   16-byte-aligned rows: lda, ldb multiples of 8).
 * version 3 is wgmma_e4m3: FP8 E4M3 m64n128k32, K step 128, accumulating in the tensor core
 *   over the whole K (the narrow Hopper FP8 accumulation: declared acc_bits 13).
 * version 4 is wgmma_e4m3_promote128: the same, but every 128 of K the tensor-core partial
 *   sum is added into fp32 registers on the CUDA cores (promotion) and restarted.
 * version 5 is wgmma_bf16_tma_256: 128x256x64 tile, m64n256k16 (128 accumulators a thread),
 *   4 TMA stages (48 KiB each), producer warpgroup lowered to 40 registers by setmaxnreg and
 *   two consumer warpgroups raised to 232, one wgmma group kept in flight (a stage is released
 *   when the next tile's group is issued), grouped tile order for L2 reuse (needs M multiple
 *   of 128, N of 256, K of 64, lda, ldb multiples of 8). Helpers: wgmma_common.cuh.
 * Measured timings: results/h200/kernels/kernels.md.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mmaprobe/kernel.h"
#include "mmaprobe/registry.h"
#include "sm90a/wgmma_common.cuh"

// ----------------------------------------------------------------------------
// shared helpers: swizzle, descriptors, wgmma wrappers (device code is sm_90a only)

#define WG_TILE_N 128

#ifdef MMP_WGMMA_DEVICE
#define DREGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "  \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "  \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/* d (64 fp32 per thread) += A(64x16 bf16) * B(16x128 bf16); scale_d = 0 overwrites d. */
__device__ static inline void wgmma_bf16_m64n128k16(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " DREGS
                 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : R8(0), R8(8), R8(16), R8(24), R8(32), R8(40), R8(48), R8(56)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* d += A(64x32 e4m3) * B(32x128 e4m3). */
__device__ static inline void wgmma_e4m3_m64n128k32(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " DREGS
                 ", %64, %65, p, 1, 1;\n}\n"
                 : R8(0), R8(8), R8(16), R8(24), R8(32), R8(40), R8(48), R8(56)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* Accumulator layout of m64nNk*: thread t of the warpgroup, register j. */
__device__ static inline void acc_rowcol(int t, int j, int *row, int *col)
{
    int warp = t >> 5, lane = t & 31;
    *row = warp * 16 + (lane >> 2) + 8 * ((j >> 1) & 1);
    *col = (j >> 2) * 8 + (lane & 3) * 2 + (j & 1);
}

__device__ static void store_tile(float *D, int64_t ldd, int64_t m, int64_t n, int64_t row0,
                                  int64_t col0, const float *d, int t)
{
    for (int j = 0; j < 64; j++) {
        int r, c;
        acc_rowcol(t, j, &r, &c);
        int64_t gi = row0 + r, gj = col0 + c;
        if (gi < m && gj < n) D[gi * ldd + gj] = d[j];
    }
}
#endif

// ----------------------------------------------------------------------------
// versions 1, 3, 4: one warpgroup, element loads with bounds checks
// ELEM = 2 (bf16) or 1 (e4m3); a tile row is 128 bytes = 128 / ELEM elements of K.

template <int ELEM, int PROMOTE>
__global__ void __launch_bounds__(128) wgmma_simple_kernel(const uint8_t *A, const uint8_t *B, float *D,
                                                           int64_t m, int64_t n, int64_t k, int64_t lda,
                                                           int64_t ldb, int64_t ldd)
{
#ifdef MMP_WGMMA_DEVICE
    constexpr int KT = WG_ROW_BYTES / ELEM; /* K per tile */
    __shared__ __align__(1024) uint8_t sa[64 * WG_ROW_BYTES];
    __shared__ __align__(1024) uint8_t sb[WG_TILE_N * WG_ROW_BYTES];
    const int t = threadIdx.x;
    const int64_t row0 = (int64_t)blockIdx.y * 64, col0 = (int64_t)blockIdx.x * WG_TILE_N;
    float d[64], master[64];
    for (int j = 0; j < 64; j++) { d[j] = 0.f; master[j] = 0.f; }
    int first = 1;
    for (int64_t k0 = 0; k0 < k; k0 += KT) {
        /* A tile: 64 rows x KT; B tile: 128 columns (rows of the K-major B) x KT */
        for (int e = t; e < 64 * KT; e += 128) { /* addressing: kernels/wgmma_addr.h */
            mmp_wg_elem x = mmp_wg_simple_elem(ELEM, e);
            int r = x.row, kk = x.kk;
            int64_t gi = row0 + r, gk = k0 + kk;
            uint16_t v = 0;
            if (gi < m && gk < k) v = ELEM == 2 ? ((const uint16_t *)A)[gi * lda + gk] : A[gi * lda + gk];
            uint32_t off = swz128((uint32_t)r, (uint32_t)(kk * ELEM));
            if (ELEM == 2) *(uint16_t *)(sa + off) = v; else sa[off] = (uint8_t)v;
        }
        for (int e = t; e < WG_TILE_N * KT; e += 128) {
            mmp_wg_elem x = mmp_wg_simple_elem(ELEM, e);
            int r = x.row, kk = x.kk;
            int64_t gj = col0 + r, gk = k0 + kk;
            uint16_t v = 0;
            if (gj < n && gk < k) v = ELEM == 2 ? ((const uint16_t *)B)[gj * ldb + gk] : B[gj * ldb + gk];
            uint32_t off = swz128((uint32_t)r, (uint32_t)(kk * ELEM));
            if (ELEM == 2) *(uint16_t *)(sb + off) = v; else sb[off] = (uint8_t)v;
        }
        fence_async_smem();
        __syncthreads();
        fence_operands<64>(d);
        wg_fence();
        for (int s = 0; s < 4; s++) { /* 4 instructions of 32 bytes of K each */
            uint64_t da = smem_desc(sa + s * 32), db = smem_desc(sb + s * 32);
            int scale = (first && s == 0) ? 0 : 1;
            if (ELEM == 2) wgmma_bf16_m64n128k16(d, da, db, scale);
            else wgmma_e4m3_m64n128k32(d, da, db, scale);
        }
        wg_commit();
        wg_wait0();
        fence_operands<64>(d);
        first = 0;
        if (PROMOTE) { /* promotion: fold the tensor-core partial sum into fp32 registers */
            for (int j = 0; j < 64; j++) master[j] += d[j];
            first = 1;
        }
        __syncthreads(); /* the tiles are overwritten next step */
    }
    if (PROMOTE) for (int j = 0; j < 64; j++) d[j] = master[j];
    store_tile(D, ldd, m, n, row0, col0, d, t);
#endif
}

// ----------------------------------------------------------------------------
// version 2: TMA + mbarrier pipeline, producer warp + two consumer warpgroups

#define TMA_STAGES 4
#define TMA_BM 128
#define TMA_TILE_BYTES (TMA_BM * WG_ROW_BYTES) /* A: 128 rows, B: 128 rows, 16 KiB each */


__global__ void __launch_bounds__(384, 1) wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a,
                                                           const __grid_constant__ CUtensorMap map_b,
                                                           float *D, int64_t m, int64_t n, int64_t k, int64_t ldd)
{
#ifdef MMP_WGMMA_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    uint8_t *sa = smem, *sb = smem + TMA_STAGES * TMA_TILE_BYTES;
    __shared__ __align__(8) uint64_t full[TMA_STAGES], empty[TMA_STAGES];
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int ktiles = (int)(k / 64);
    if (threadIdx.x == 0) {
        for (int s = 0; s < TMA_STAGES; s++) { mbar_init(&full[s], 1); mbar_init(&empty[s], 2); }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    const int col0 = blockIdx.x * WG_TILE_N, row0 = blockIdx.y * TMA_BM;
    if (wg == 0) { /* producer */
        if (t == 0) {
            for (int kt = 0; kt < ktiles; kt++) {
                int s = kt % TMA_STAGES;
                if (kt >= TMA_STAGES) mbar_wait(&empty[s], ((kt / TMA_STAGES) - 1) & 1);
                mbar_expect_tx(&full[s], 2 * TMA_TILE_BYTES);
                tma_load_2d(sa + s * TMA_TILE_BYTES, &map_a, kt * 64, row0, &full[s]);
                tma_load_2d(sb + s * TMA_TILE_BYTES, &map_b, kt * 64, col0, &full[s]);
            }
        }
        return;
    }
    const int c = wg - 1; /* consumer: rows c*64 .. c*64+63 of the tile */
    float d[64];
    for (int j = 0; j < 64; j++) d[j] = 0.f;
    for (int kt = 0; kt < ktiles; kt++) {
        int s = kt % TMA_STAGES;
        mbar_wait(&full[s], (kt / TMA_STAGES) & 1);
        uint8_t *ta = sa + s * TMA_TILE_BYTES + c * 64 * WG_ROW_BYTES, *tb = sb + s * TMA_TILE_BYTES;
        fence_operands<64>(d);
        wg_fence();
        for (int q = 0; q < 4; q++)
            wgmma_bf16_m64n128k16(d, smem_desc(ta + q * 32), smem_desc(tb + q * 32), (kt == 0 && q == 0) ? 0 : 1);
        wg_commit();
        wg_wait0();
        fence_operands<64>(d);
        if (t == 0) mbar_arrive(&empty[s]);
    }
    store_tile(D, ldd, m, n, row0 + c * 64, col0, d, t);
#endif
}

// ----------------------------------------------------------------------------
// version 5: 128x256 tile, m64n256k16, register hand-over, one wgmma group in flight

#define T256_BM 128
#define T256_BN 256
#define T256_STAGES 4
#define T256_A_BYTES (T256_BM * WG_ROW_BYTES) /* 16 KiB: 128 rows of 64 bf16 of K */
#define T256_B_BYTES (T256_BN * WG_ROW_BYTES) /* 32 KiB: 256 rows (columns of N) of 64 of K */
#define T256_SMEM (T256_STAGES * (T256_A_BYTES + T256_B_BYTES) + 1024) /* + alignment slack */
#define T256_GROUP_M 16 /* tile rows per group of the L2-friendly order */
#define T256_PRODUCER_REGS 40
#define T256_CONSUMER_REGS 232 /* 40 * 128 + 232 * 256 = 64512 <= 65536 registers per SM */

/* Grouped tile order: block b -> (tile_m, tile_n). Consecutive blocks walk down T256_GROUP_M
 * tile rows of one tile column, then the next column, so the CTAs resident at once share
 * their A rows and B columns in L2 (a wave of 132 CTAs spans about 16 x 8 tiles). */
__host__ __device__ static inline void t256_tile_of(int b, int tiles_m, int tiles_n, int *tile_m, int *tile_n)
{
    int per_group = T256_GROUP_M * tiles_n, g = b / per_group, first_m = g * T256_GROUP_M;
    int gm = tiles_m - first_m < T256_GROUP_M ? tiles_m - first_m : T256_GROUP_M;
    int in = b - g * per_group;
    *tile_m = first_m + in % gm;
    *tile_n = in / gm;
}

/* Epilogue of an m64n256 accumulator: register j of thread t is row warp*16 + lane/4 +
 * 8*((j>>1)&1), column (j>>2)*8 + (lane%4)*2 + (j&1); registers j, j+1 are adjacent columns,
 * stored as one float2 when vec (D 8-byte aligned and ldd even). */
#ifdef MMP_WGMMA_DEVICE
__device__ static inline void t256_store(float *D, int64_t ldd, int64_t row0, int64_t col0, const float *d,
                                         int t, int vec)
{
    const int warp = t >> 5, lane = t & 31;
    float *p = D + (row0 + warp * 16 + (lane >> 2)) * ldd + col0 + (lane & 3) * 2;
    if (vec) {
#pragma unroll
        for (int j = 0; j < 128; j += 4) {
            *(float2 *)(p + (j >> 2) * 8) = make_float2(d[j], d[j + 1]);
            *(float2 *)(p + 8 * ldd + (j >> 2) * 8) = make_float2(d[j + 2], d[j + 3]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < 128; j += 4) {
            p[(j >> 2) * 8] = d[j];
            p[(j >> 2) * 8 + 1] = d[j + 1];
            p[8 * ldd + (j >> 2) * 8] = d[j + 2];
            p[8 * ldd + (j >> 2) * 8 + 1] = d[j + 3];
        }
    }
}
#endif

/* Warpgroup 0: producer (after setmaxnreg.dec, thread 0 issues the TMA loads of stage s when
 * the consumers have released it through empty[s]); warpgroups 1, 2: consumers, rows
 * (wg-1)*64 .. +63 of the tile, all 256 columns. A consumer issues the 4 wgmma of tile kt,
 * commits, waits until only that group is pending (wait_group 1: tile kt-1 is read) and
 * releases tile kt-1's stage; the accumulator chain across groups is ordered by the hardware. */
__global__ void __launch_bounds__(384, 1) wgmma_bf16_tma_256_kernel(const __grid_constant__ CUtensorMap map_a,
                                                                    const __grid_constant__ CUtensorMap map_b,
                                                                    float *D, int64_t m, int64_t n, int64_t k,
                                                                    int64_t ldd, int vec)
{
#ifdef MMP_WGMMA_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    uint8_t *sa = smem, *sb = smem + T256_STAGES * T256_A_BYTES;
    __shared__ __align__(8) uint64_t full[T256_STAGES], empty[T256_STAGES];
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int ktiles = (int)(k / 64);
    int tile_m, tile_n;
    t256_tile_of((int)blockIdx.x, (int)(m / T256_BM), (int)(n / T256_BN), &tile_m, &tile_n);
    const int row0 = tile_m * T256_BM, col0 = tile_n * T256_BN;
    if (threadIdx.x == 0) {
        for (int s = 0; s < T256_STAGES; s++) { mbar_init(&full[s], 1); mbar_init(&empty[s], 2); }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) { /* producer */
        setmaxnreg_dec<T256_PRODUCER_REGS>();
        if (t == 0) {
            for (int kt = 0; kt < ktiles; kt++) {
                int s = kt % T256_STAGES;
                if (kt >= T256_STAGES) mbar_wait(&empty[s], ((kt / T256_STAGES) - 1) & 1);
                mbar_expect_tx(&full[s], T256_A_BYTES + T256_B_BYTES);
                tma_load_2d(sa + s * T256_A_BYTES, &map_a, kt * 64, row0, &full[s]);
                tma_load_2d(sb + s * T256_B_BYTES, &map_b, kt * 64, col0, &full[s]);
            }
        }
    } else { /* consumers */
        setmaxnreg_inc<T256_CONSUMER_REGS>();
        const int c = wg - 1;
        float d[128];
#pragma unroll
        for (int j = 0; j < 128; j++) d[j] = 0.f;
        for (int kt = 0; kt < ktiles; kt++) {
            const int s = kt % T256_STAGES;
            mbar_wait(&full[s], (kt / T256_STAGES) & 1);
            const uint8_t *ta = sa + s * T256_A_BYTES + c * 64 * WG_ROW_BYTES, *tb = sb + s * T256_B_BYTES;
            fence_operands<128>(d);
            wg_fence();
#pragma unroll
            for (int q = 0; q < 4; q++)
                wgmma_bf16_m64n256k16(d, smem_desc(ta + q * 32), smem_desc(tb + q * 32), (kt == 0 && q == 0) ? 0 : 1);
            wg_commit();
            wg_wait<1>();
            fence_operands<128>(d);
            if (kt > 0 && t == 0) mbar_arrive(&empty[(kt - 1) % T256_STAGES]);
        }
        wg_wait<0>();
        fence_operands<128>(d);
        t256_store(D, ldd, row0 + c * 64, col0, d, t, vec);
    }
#endif
}

// ----------------------------------------------------------------------------
// launchers: the kernel.h entry point

static int check_layouts(const mmp_kernel_args *a)
{
    return a->layout_a == 0 && a->layout_b == 1 && a->layout_d == 0; /* row, col, row */
}

template <int ELEM, int PROMOTE>
static int run_simple(const mmp_kernel_args *a)
{
    if (!check_layouts(a)) return MMP_KERNEL_UNSUPPORTED;
    dim3 grid((unsigned)((a->n + WG_TILE_N - 1) / WG_TILE_N), (unsigned)((a->m + 63) / 64));
    wgmma_simple_kernel<ELEM, PROMOTE><<<grid, 128, 0, (cudaStream_t)a->stream>>>(
        (const uint8_t *)a->a, (const uint8_t *)a->b, (float *)a->d, a->m, a->n, a->k, a->lda, a->ldb, a->ldd);
    return cudaPeekAtLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled(void)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    if (!fn) {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && q == cudaDriverEntryPointSuccess)
            fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    }
    return fn;
}

/* A 2-D K-major bf16 operand: rows x k elements, row stride ld, box 64 (K) x box_rows rows. */
static int make_map(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, uint32_t box_rows)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc = encode_tiled();
    if (!enc) return MMP_KERNEL_ERROR;
    cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)ld * 2};
    cuuint32_t box[2] = {64, box_rows}, estr[2] = {1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

static int run_tma(const mmp_kernel_args *a)
{
    if (!check_layouts(a)) return MMP_KERNEL_UNSUPPORTED;
    /* TMA needs 16-byte aligned base addresses and row strides */
    if ((a->lda % 8) || (a->ldb % 8) || ((uintptr_t)a->a % 16) || ((uintptr_t)a->b % 16))
        return MMP_KERNEL_UNSUPPORTED;
    CUtensorMap ma, mb;
    if (make_map(&ma, a->a, a->m, a->k, a->lda, TMA_BM) || make_map(&mb, a->b, a->n, a->k, a->ldb, WG_TILE_N))
        return MMP_KERNEL_ERROR;
    size_t smem = 2 * TMA_STAGES * TMA_TILE_BYTES + 1024;
    if (cudaFuncSetAttribute(wgmma_tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess)
        return MMP_KERNEL_ERROR;
    dim3 grid((unsigned)(a->n / WG_TILE_N), (unsigned)(a->m / TMA_BM));
    wgmma_tma_kernel<<<grid, 384, smem, (cudaStream_t)a->stream>>>(ma, mb, (float *)a->d, a->m, a->n, a->k, a->ldd);
    return cudaPeekAtLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

static int run_tma_256(const mmp_kernel_args *a)
{
    if (!check_layouts(a)) return MMP_KERNEL_UNSUPPORTED;
    if ((a->m % T256_BM) || (a->n % T256_BN) || (a->k % 64)) return MMP_KERNEL_UNSUPPORTED;
    if ((a->lda % 8) || (a->ldb % 8) || ((uintptr_t)a->a % 16) || ((uintptr_t)a->b % 16))
        return MMP_KERNEL_UNSUPPORTED;
    int64_t tiles = (a->m / T256_BM) * (a->n / T256_BN);
    if (tiles == 0) return MMP_KERNEL_OK; /* empty D */
    /* block index, tile origins and TMA coordinates are 32-bit */
    if (tiles > INT32_MAX || a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX) return MMP_KERNEL_UNSUPPORTED;
    CUtensorMap ma, mb;
    if (make_map(&ma, a->a, a->m, a->k, a->lda, T256_BM) || make_map(&mb, a->b, a->n, a->k, a->ldb, T256_BN))
        return MMP_KERNEL_ERROR;
    if (cudaFuncSetAttribute(wgmma_bf16_tma_256_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T256_SMEM) !=
        cudaSuccess)
        return MMP_KERNEL_ERROR;
    int vec = (a->ldd % 2) == 0 && ((uintptr_t)a->d % 8) == 0;
    wgmma_bf16_tma_256_kernel<<<(unsigned)tiles, 384, T256_SMEM, (cudaStream_t)a->stream>>>(
        ma, mb, (float *)a->d, a->m, a->n, a->k, a->ldd, vec);
    return cudaPeekAtLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

// ----------------------------------------------------------------------------
// the family table

#define WG_ROW(nm, fa, acc, accbits, mm, nn, kk, fn, desc)                                        \
    {MMP_KERNEL_ABI_VERSION, nm, "wgmma", fa, fa, MMP_FORMAT_FP32, MMP_FORMAT_FP32, acc, -1, accbits, \
     MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL, MMP_LAYOUTS_ROW, 0, mm, nn, kk, 90, 1, 1, MMP_KERNEL_DEVICE,  \
     NULL, fn, desc}

static const mmp_kernel_desc wgmma_kernels[] = {
    WG_ROW("wgmma_bf16_simple", MMP_FORMAT_BF16, MMP_FORMAT_FP32, 0, 1, 1, 1, (run_simple<2, 0>),
           "wgmma m64n128k16 bf16, one warpgroup, bounds-checked element loads into 128B-swizzled smem"),
    WG_ROW("wgmma_bf16_tma", MMP_FORMAT_BF16, MMP_FORMAT_FP32, 0, 128, 128, 64, run_tma,
           "wgmma bf16 128x128x64, TMA 128B swizzle, 4-stage mbarrier pipeline, producer + 2 consumer warpgroups"),
    WG_ROW("wgmma_bf16_tma_256", MMP_FORMAT_BF16, MMP_FORMAT_FP32, 0, T256_BM, T256_BN, 64, run_tma_256,
           "wgmma m64n256k16 bf16 128x256x64, TMA 4 stages, setmaxnreg producer + 2 consumers, 1 group in flight"),
    WG_ROW("wgmma_e4m3", MMP_FORMAT_E4M3, MMP_FORMAT_FP32, 13, 1, 1, 1, (run_simple<1, 0>),
           "wgmma m64n128k32 e4m3 accumulating in the tensor core over all K (narrow: ~13 bits kept)"),
    /* Promotion does not widen the accumulator inside a chunk: the 4 chained instructions of
     * one 128-wide K step still keep ~13 bits (measured on the H200: the first run, declared
     * fp32, failed its bound at K = 128 with the same values as wgmma_e4m3). */
    WG_ROW("wgmma_e4m3_promote128", MMP_FORMAT_E4M3, MMP_FORMAT_FP32, 13, 1, 1, 1, (run_simple<1, 1>),
           "wgmma m64n128k32 e4m3, partial sums promoted to fp32 CUDA-core registers every 128 of K"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_wgmma(size_t *count)
{
    *count = sizeof wgmma_kernels / sizeof wgmma_kernels[0];
    return wgmma_kernels;
}
