/* kernels/int_ptx.cuh — inline-PTX wrappers and the templated mma.sync kernel shared by the int8_ptx
 * and int4_ptx families (CUDA C++, device code; include only from .cu files).
 *
 * Wrappers: cp.async .ca/.cg 16 B + commit/wait_group, ldmatrix .x1/.x2/.x4 (and .trans),
 * mma.sync m16n8k16/k32 .s8 and m16n8k32/k64 .s4 (int32 accumulate), dp4a.
 * All address arithmetic comes from kernels/int_ptx_addr.h, which the memory maps and the host test
 * use too. Requires sm_80 (cp.async, m16n8 integer mma); older targets compile to a trap.
 *
 * Usage (in a family file):
 *   static int run_k32(const mmp_kernel_args *a) { return mmp_intk_run<8, 32, 2, 4, 2, 0, 0>(a); }
 */
#ifndef MMAPROBE_KERNELS_INT_PTX_CUH
#define MMAPROBE_KERNELS_INT_PTX_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "int_ptx_addr.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/status.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MMP_INTK_NO_SM80 1   /* device pass for an arch without cp.async / m16n8 integer mma */
#endif

/* ---- PTX wrappers ---- */
template <int CG>
__device__ __forceinline__ void mmp_cp_async16(uint32_t smem, const void *gmem)
{
#ifndef MMP_INTK_NO_SM80
    if constexpr (CG != 0) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem) : "memory");
    else    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem) : "memory");
#else
    (void)smem; (void)gmem; __trap();
#endif
}
__device__ __forceinline__ void mmp_cp_async_commit(void)
{
#ifndef MMP_INTK_NO_SM80
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void mmp_cp_async_wait(void)
{
#ifndef MMP_INTK_NO_SM80
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* ldmatrix .m8n8 .b16 with N = 1, 2, 4 matrices; r[m] receives matrix m. */
template <int N, int TRANS>
__device__ __forceinline__ void mmp_ldsm(uint32_t *r, uint32_t addr)
{
#ifndef MMP_INTK_NO_SM80
    if constexpr (N == 4 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
    else if constexpr (N == 4)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
    else if constexpr (N == 2 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    else if constexpr (N == 2)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    else if constexpr (!TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr) : "memory");
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr) : "memory");
#else
    (void)r; (void)addr; __trap();
#endif
}

__device__ __forceinline__ uint32_t mmp_lds32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
__device__ __forceinline__ void mmp_sts16(uint32_t addr, uint16_t v)
{
    asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(v) : "memory");
}

/* D += A * B for one m16n8 tile; BITS 8/4, BKB 32/16 picks s8 k32 / k16 or s4 k64 / k32. */
template <int BITS, int BKB>
__device__ __forceinline__ void mmp_mma_int(int32_t *d, const uint32_t *a, const uint32_t *b)
{
#ifndef MMP_INTK_NO_SM80
    if constexpr (BITS == 8 && BKB == 32)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if constexpr (BITS == 8)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                     "{%0,%1,%2,%3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    else if constexpr (BKB == 32)
        asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                     "{%0,%1,%2,%3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
#else
    (void)d; (void)a; (void)b; __trap();
#endif
}

/* Stage K step kt of this warp's A and B tiles into shared stage `stage` (cp.async, or for the
 * transposed-B loader 1-byte ld.global + st.shared.b16). */
template <int BITS, int BKB, int S, int ALD, int BLD, int BT, int CG>
__device__ __forceinline__ void mmp_intk_load_stage(uint32_t sbase, const uint8_t *A, const uint8_t *B,
                                                    int64_t lda_b, int64_t ldb_b, int m0, int n0, int warp,
                                                    int lane, int kt, int stage)
{
    constexpr mmp_intk_cfg c = {BITS, BKB, S, ALD, BLD, BT, CG};
    const int64_t kb0 = (int64_t)kt * BKB;
#pragma unroll
    for (int it = 0; it < mmp_intk_copy_iters(c); it++) {
        int row = 0, kb = 0;
        if (!mmp_intk_copy_chunk(c, it, lane, &row, &kb)) continue;
        mmp_cp_async16<CG>(sbase + mmp_intk_smem_a(c, stage, warp, row, kb),
                           A + mmp_intk_gaddr(lda_b, m0, kb0, row, kb));
        if constexpr (BT == 0)
            mmp_cp_async16<CG>(sbase + mmp_intk_smem_b(c, stage, warp, row, kb),
                               B + mmp_intk_gaddr(ldb_b, n0, kb0, row, kb));
    }
    if constexpr (BT != 0) {
#pragma unroll
        for (int it = 0; it < mmp_intk_bt_iters(c); it++) {
            int kb16 = 0, n = 0;
            mmp_intk_bt_elem(it, lane, &kb16, &n);
            const uint8_t *p = B + mmp_intk_gaddr(ldb_b, n0, kb0, n, 2 * kb16);
            uint16_t v = (uint16_t)(p[0] | (p[1] << 8));   /* two 1-byte loads: the loader under study */
            mmp_sts16(sbase + mmp_intk_smem_bt(c, stage, warp, kb16, n), v);
        }
    }
}

/* ---- the kernel: each warp computes its 16 x 16 tile of D = A (M x K, row) * B (stored N x K) ---- */
template <int BITS, int BKB, int S, int ALD, int BLD, int BT, int CG>
__global__ void __launch_bounds__(MMP_INTK_THREADS)
mmp_intk_kernel(const uint8_t *__restrict__ A, const uint8_t *__restrict__ B, int32_t *__restrict__ D,
                int M, int N, int K, int64_t lda_b, int64_t ldb_b, int64_t ldd)
{
    constexpr mmp_intk_cfg c = {BITS, BKB, S, ALD, BLD, BT, CG};
    constexpr int NA = mmp_intk_a_regs(c), NB = mmp_intk_b_regs(c);
    __shared__ __align__(128) uint8_t smem[mmp_intk_smem_total(c)];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = mmp_intk_warp_m0(blockIdx.y, warp), n0 = mmp_intk_warp_n0(blockIdx.x, warp);
    if (m0 >= M || n0 >= N) return;                   /* no CTA-wide barrier in this design */
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(smem);
    const int ksteps = (int)((int64_t)K * BITS / 8 / BKB);


    int32_t acc[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int s = 0; s < S - 1; s++) {
        if (s < ksteps)
            mmp_intk_load_stage<BITS, BKB, S, ALD, BLD, BT, CG>(sbase, A, B, lda_b, ldb_b, m0, n0, warp, lane, s, s);
        mmp_cp_async_commit();                        /* empty groups keep the count uniform */
    }
    for (int kt = 0; kt < ksteps; kt++) {
        mmp_cp_async_wait<S - 2>();                   /* this lane's copies of step kt landed */
        __syncwarp();                                 /* ... and every lane's, and stage kt-1 is free */
        if (kt + S - 1 < ksteps)
            mmp_intk_load_stage<BITS, BKB, S, ALD, BLD, BT, CG>(sbase, A, B, lda_b, ldb_b, m0, n0, warp, lane,
                                                                kt + S - 1, (kt + S - 1) % S);
        mmp_cp_async_commit();
        const int st = kt % S;
        uint32_t a[NA], b[2 * NB];
        if constexpr (ALD != 0) {
#pragma unroll
            for (int p = 0; p < NA / ALD; p++)
                mmp_ldsm<ALD, 0>(a + p * ALD, sbase + mmp_intk_ldsm_a_addr(c, st, warp, p, lane));
        } else {
#pragma unroll
            for (int q = 0; q < NA; q++) a[q] = mmp_lds32(sbase + mmp_intk_lds_a_addr(c, st, warp, q, lane));
        }
        if constexpr (BLD != 0) {
#pragma unroll
            for (int p = 0; p < 2 * NB / BLD; p++)
                mmp_ldsm<BLD, BT>(b + p * BLD, sbase + mmp_intk_ldsm_b_addr(c, st, warp, p, lane));
        } else {
#pragma unroll
            for (int j = 0; j < 2 * NB; j++)
                b[j] = mmp_lds32(sbase + mmp_intk_lds_b_addr(c, st, warp, j / NB, j % NB, lane));
        }
#pragma unroll
        for (int h = 0; h < 2; h++) mmp_mma_int<BITS, BKB>(acc[h], a, b + h * NB);
    }
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int r, col;
            mmp_intk_d_elem(h, e, lane, &r, &col);
            D[(int64_t)(m0 + r) * ldd + n0 + col] = acc[h][e];
        }
}

/* Shape and layout checks shared by every integer kernel: MMP_KERNEL_UNSUPPORTED (a SKIP) when the
 * problem is outside what the descriptor promises or an operand is not 16-byte aligned. */
static inline int mmp_intk_check(const mmp_kernel_args *a, int bits, int kmul, int b_vector)
{
    int64_t lda_b = a->lda * bits / 8, ldb_b = a->ldb * bits / 8;
    if (a->layout_a != MMP_LAYOUT_ROW || a->layout_b != MMP_LAYOUT_COL || a->layout_d != MMP_LAYOUT_ROW)
        return MMP_KERNEL_UNSUPPORTED;
    if (a->alpha != 1.0 || a->beta != 0.0) return MMP_KERNEL_UNSUPPORTED;   /* D = A * B only */
    if (a->m % 16 || a->n % 16 || a->k % kmul || a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX)
        return MMP_KERNEL_UNSUPPORTED;
    if ((a->lda * bits) % 8 || (a->ldb * bits) % 8 || lda_b % 16 || ((uintptr_t)a->a & 15))
        return MMP_KERNEL_UNSUPPORTED;
    if (b_vector && (ldb_b % 16 || ((uintptr_t)a->b & 15))) return MMP_KERNEL_UNSUPPORTED;
    return 0;
}

template <int BITS, int BKB, int S, int ALD, int BLD, int BT, int CG>
static int mmp_intk_run(const mmp_kernel_args *a)
{
    int st = mmp_intk_check(a, BITS, BKB * 8 / BITS, !BT);
    if (st) return st;
    dim3 grid((unsigned)((a->n + MMP_INTK_TILE_N - 1) / MMP_INTK_TILE_N),
              (unsigned)((a->m + MMP_INTK_TILE_M - 1) / MMP_INTK_TILE_M));
    mmp_intk_kernel<BITS, BKB, S, ALD, BLD, BT, CG><<<grid, MMP_INTK_THREADS, 0, (cudaStream_t)a->stream>>>(
        (const uint8_t *)a->a, (const uint8_t *)a->b, (int32_t *)a->d, (int)a->m, (int)a->n, (int)a->k,
        a->lda * BITS / 8, a->ldb * BITS / 8, a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

/* Descriptor of an integer kernel (formats, layouts, multiples) — one line per row in the tables. */
static inline mmp_kernel_desc mmp_intk_desc(const char *name, const char *family, int bits, int mmul, int nmul,
                                            int kmul, uint32_t layouts_b, int min_cc, mmp_kernel_run_fn run,
                                            const char *text)
{
    mmp_kernel_desc d = {};
    d.abi_version = MMP_KERNEL_ABI_VERSION;
    d.name = name;
    d.family = family;
    d.a_format = d.b_format = bits == 8 ? MMP_FORMAT_INT8 : MMP_FORMAT_INT4;
    d.c_format = d.d_format = d.acc_format = MMP_FORMAT_INT32;
    d.mul_format = -1;
    d.acc_bits = 0;
    d.layouts_a = MMP_LAYOUTS_ROW;
    d.layouts_b = layouts_b;
    d.layouts_d = MMP_LAYOUTS_ROW;
    d.reads_c = 0;
    d.m_multiple = mmul;
    d.n_multiple = nmul;
    d.k_multiple = kmul;
    d.min_cc = min_cc;
    d.arch_specific = 0;
    d.deterministic = 1;
    d.where = MMP_KERNEL_DEVICE;
    d.workspace_bytes = NULL;
    d.run = run;
    d.description = text;
    return d;
}

#endif
