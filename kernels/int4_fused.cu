/* kernels/int4_fused.cu — the fused INT4 group-scaled GEMM with a low-rank residual on the GPU:
 * Y = GEMM(Xq, Wq, Sx, Sw) + X A B + beta
 * (fused.h has the mathematics, the operands and the error budgets).
 *
 * Build: part of libmmp (cmake --build build). Run: build/suites/check_gpu_fused (validation of
 * every component and of the fused operator), build/bench_fused (timing); scripts/device/50-fused.sh.
 * Requires sm_80 (cp.async, mbarrier, mma.sync m16n8k64.s4 / m16n8k16.bf16); on sm_90 ptxas emulates
 * the s4 mma (Hopper has no INT4 tensor-core path; FP4 needs Blackwell). Older targets compile to a trap.
 * Shapes: M % 128 == 0, N % 64 == 0, g % 64 == 0, K % g == 0, rank 32, 16-byte aligned operands;
 * anything else returns MMP_KERNEL_UNSUPPORTED (a SKIP).
 *
 * Arithmetic order (the host emulation in reference/fused_ref.c follows it exactly):
 *   Q: per scale group, s4 mma.sync accumulates exact int32 sums acc_G; then
 *      y = fmaf((float)acc_G, sx * sw, y) over the groups in K order (sx * sw is exact in fp32).
 *   T = X A: bf16 mma.sync m16n8k16, fp32 accumulation over K (tensor-core order).
 *   R = T B: rr = fmaf(T_it, B_tj, rr) over t = 0..31 (T through shared memory, fp32).
 *   Y = (y + rr) + beta (fk_affine).
 *
 * version 1 is int4_fused_simple: one CTA per 128 x 64 tile of Y, 8 warps that all load (cp.async,
 *   one stage, __syncthreads) and all compute: the single-CTA template of the seed.
 * version 2 is int4_fused_persistent: persistent CTAs (grid = SMs x CTAs per SM) walk the tiles;
 *   warp 0 is the producer (cp.async of the xq, wq, x, a tiles and the scales into S stages,
 *   completion signalled by cp.async.mbarrier.arrive.noinc on full[s]; the rank-up B tile on its
 *   own double-buffered res_full/res_empty pipeline, so tile i+1's B tile never waits for tile i's
 *   epilogue), warps 1-8 consume (s4 mma + scale fold, bf16 mma for T,
 *   then the residual and affine epilogue) and release stages through empty[s]. S is the most
 *   stages whose layout fits the shared memory of one CTA per SM (mmp_fused_pick_stages).
 * version 3 is int4_fused_persistent_qgemm: version 2 without the residual and affine (headroom).
 * Component kernels: *_down (T alone), *_lowrank (R alone), *_qgemm (Q alone), and elementwise
 *   int4_fused_decode, int4_fused_dequant, int4_fused_affine using the very device helpers of the
 *   fused kernels (fk_nibble, fk_scale, fk_affine).
 * GEMM ABI: nothing fits (nine operands; int4 inputs with an fp32 output is an impossible descriptor
 *   for the runner), so mmp_kernels_int4_fused is empty on purpose; use mmp_fused_ops() (fused.h).
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "int4_fused_layout.h"
#include "mmaprobe/fused.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/registry.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define FK_NO_SM80 1
#endif

enum { FK_SIMPLE_THREADS = 32 * MMP_FUSEDK_WARPS, FK_PERSIST_THREADS = 32 * (MMP_FUSEDK_WARPS + 1) };

/* ------------------------------------------------------------------------------------------------ */
/* PTX wrappers */

__device__ __forceinline__ uint32_t fk_smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void fk_cp16(uint32_t s, const void *g)
{
#ifndef FK_NO_SM80
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g) : "memory");
#endif
}
__device__ __forceinline__ void fk_cp_commit_wait_all(void)
{
#ifndef FK_NO_SM80
    asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void fk_cp_wait_all(void)
{
#ifndef FK_NO_SM80
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void fk_mbar_init(uint32_t bar, uint32_t count)
{
#ifndef FK_NO_SM80
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void fk_mbar_arrive(uint32_t bar)
{
#ifndef FK_NO_SM80
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
#endif
}
/* arrive on bar once every cp.async this thread issued before has landed (count pre-included) */
__device__ __forceinline__ void fk_mbar_cp_arrive(uint32_t bar)
{
#ifndef FK_NO_SM80
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}
__device__ __forceinline__ void fk_mbar_wait(uint32_t bar, int parity)
{
#ifndef FK_NO_SM80
    uint32_t done = 0;
    do {   /* sm_90: try_wait suspends the thread for a while; sm_80/89: test_wait polls */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#else
        asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#endif
    } while (!done);
#endif
}
/* named barrier 1 among the 8 compute warps */
__device__ __forceinline__ void fk_compute_sync(int persistent)
{
    if (persistent) asm volatile("bar.sync 1, %0;\n" ::"n"(32 * MMP_FUSEDK_WARPS) : "memory");
    else __syncthreads();
}
__device__ __forceinline__ uint32_t fk_lds32(uint32_t a)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t fk_lds16(uint32_t a)
{
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ void fk_mma_s4(int32_t *d, const uint32_t *a, const uint32_t *b)
{
#ifndef FK_NO_SM80
    asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b; __trap();
#endif
}
__device__ __forceinline__ void fk_mma_bf16(float *d, const uint32_t *a, const uint32_t *b)
{
#ifndef FK_NO_SM80
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b; __trap();
#endif
}

/* ---- the numeric helpers every kernel shares (the component kernels test exactly these) ---- */
__device__ __forceinline__ int fk_nibble(const uint8_t *q, int64_t idx)
{
    int v = (q[idx >> 1] >> (4 * (int)(idx & 1))) & 15;
    return (v ^ 8) - 8;                                /* sign-extend the 4-bit two's complement */
}
__device__ __forceinline__ float fk_scale(uint32_t bits, int scale_bf16)
{
    if (scale_bf16) return __uint_as_float(bits << 16);
    return __half2float(__ushort_as_half((unsigned short)bits));
}
__device__ __forceinline__ float fk_bf16(uint32_t bits) { return __uint_as_float(bits << 16); }
__device__ __forceinline__ float fk_affine(float z, float beta) { return z + beta; }

/* ------------------------------------------------------------------------------------------------ */
/* the tile machinery shared by versions 1-3 */

struct fk_params {
    const uint8_t *xq, *wq;
    const uint16_t *sx, *sw, *x, *a, *b;
    const float *beta;
    float *y;
    int64_t m, n, k, tiles_m, tiles;
    int group, scale_bf16, stages;
};

/* Issue the copies of K step kt of tile (m0, n0) into stage base sb; threads first, first+stride, ...
 * Scales: plain 2-byte loads and stores (a column of the row-major scale matrices is strided). */
template <bool Q, bool RES>
__device__ __forceinline__ void fk_issue_stage(const fk_params &p, const mmp_fusedk_layout &L, uint8_t *sb,
                                               int64_t m0, int64_t n0, int64_t kt, int first, int stride)
{
    const uint32_t s = fk_smem(sb);
    if (Q) {
        for (int c = first; c < MMP_FUSEDK_XQ_CHUNKS; c += stride) {
            int row, kb;
            mmp_fusedk_q_chunk(c, &row, &kb);
            fk_cp16(s + L.off_xq + mmp_fusedk_q_off(row, kb), p.xq + mmp_fusedk_q_gaddr(p.k, m0, kt, row, kb));
        }
        for (int c = first; c < MMP_FUSEDK_WQ_CHUNKS; c += stride) {
            int row, kb;
            mmp_fusedk_q_chunk(c, &row, &kb);
            fk_cp16(s + L.off_wq + mmp_fusedk_q_off(row, kb), p.wq + mmp_fusedk_q_gaddr(p.k, n0, kt, row, kb));
        }
        const int64_t ng = p.k / p.group, G = kt * MMP_FUSEDK_BK / p.group;
        uint16_t *sx = (uint16_t *)(sb + L.off_sx), *sw = (uint16_t *)(sb + L.off_sw);
        for (int r = first; r < MMP_FUSEDK_BM; r += stride) sx[r] = p.sx[(m0 + r) * ng + G];
        for (int r = first; r < MMP_FUSEDK_BN; r += stride) sw[r] = p.sw[(n0 + r) * ng + G];
    }
    if (RES) {
        for (int c = first; c < MMP_FUSEDK_X_CHUNKS; c += stride) {
            int row, kk;
            mmp_fusedk_x_chunk(c, &row, &kk);
            fk_cp16(s + L.off_x + mmp_fusedk_x_off(row, kk), p.x + mmp_fusedk_x_gidx(p.k, m0, kt, row, kk));
        }
        for (int c = first; c < MMP_FUSEDK_A_CHUNKS; c += stride) {
            int kk, t;
            mmp_fusedk_a_chunk(c, &kk, &t);
            fk_cp16(s + L.off_a + mmp_fusedk_a_off(kk, t), p.a + mmp_fusedk_a_gidx(kt, kk, t));
        }
    }
}

__device__ __forceinline__ void fk_issue_bt(const fk_params &p, const mmp_fusedk_layout &L, uint8_t *smem, uint32_t off_bt,
                                            int64_t n0, int first, int stride)
{
    (void)L;
    const uint32_t s = fk_smem(smem) + off_bt;
    for (int c = first; c < MMP_FUSEDK_BT_CHUNKS; c += stride) {
        int t, nn;
        mmp_fusedk_bt_chunk(c, &t, &nn);
        fk_cp16(s + mmp_fusedk_bt_off(t, nn), p.b + mmp_fusedk_bt_gidx(p.n, n0, t, nn));
    }
}

struct fk_acc {
    int32_t q[2][4][4];   /* int32 sums of the current group, per m16 x n8 tile */
    float y[2][4][4];     /* Q so far */
    float t[4][4];        /* T rows 16w.., columns 8nt.. */
};

__device__ __forceinline__ void fk_acc_zero(fk_acc &a)
{
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) { a.q[i][j][e] = 0; a.y[i][j][e] = 0.0f; }
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) a.t[j][e] = 0.0f;
}

/* Compute warp w consumes one stage (sb); fold = this stage ends a scale group. */
template <bool Q, bool RES>
__device__ __forceinline__ void fk_consume(fk_acc &acc, const mmp_fusedk_layout &L, const uint8_t *sb, int w, int lane,
                                           bool fold, int scale_bf16)
{
    const uint32_t s = fk_smem(sb);
    if (Q) {
        uint32_t af[2][4], bf[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int row, kb;
                mmp_fusedk_s4a_reg(q, lane, &row, &kb);
                af[mt][q] = fk_lds32(s + L.off_xq + mmp_fusedk_q_off(mmp_fusedk_warp_row(w, mt) + row, kb));
            }
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int q = 0; q < 2; q++) {
                int col, kb;
                mmp_fusedk_s4b_reg(q, lane, &col, &kb);
                bf[nt][q] = fk_lds32(s + L.off_wq + mmp_fusedk_q_off(mmp_fusedk_warp_col(w, nt) + col, kb));
            }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int nt = 0; nt < 4; nt++) fk_mma_s4(acc.q[mt][nt], af[mt], bf[nt]);
        if (fold) {
            float sx[2][2], sw[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    int row, col;
                    mmp_fusedk_acc_elem(2 * h, lane, &row, &col);
                    sx[mt][h] = fk_scale(fk_lds16(s + L.off_sx + 2 * (mmp_fusedk_warp_row(w, mt) + row)), scale_bf16);
                }
#pragma unroll
            for (int nt = 0; nt < 4; nt++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    int row, col;
                    mmp_fusedk_acc_elem(c, lane, &row, &col);
                    sw[nt][c] = fk_scale(fk_lds16(s + L.off_sw + 2 * (mmp_fusedk_warp_col(w, nt) + col)), scale_bf16);
                }
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        acc.y[mt][nt][e] = fmaf((float)acc.q[mt][nt][e], sx[mt][e >> 1] * sw[nt][e & 1], acc.y[mt][nt][e]);
                        acc.q[mt][nt][e] = 0;
                    }
        }
    }
    if (RES) {
#pragma unroll
        for (int ks = 0; ks < MMP_FUSEDK_BK / 16; ks++) {
            uint32_t xa[4], bb[2];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int row, k;
                mmp_fusedk_bfa_reg(q, lane, &row, &k);
                xa[q] = fk_lds32(s + L.off_x + mmp_fusedk_x_off(16 * w + row, 16 * ks + k));
            }
#pragma unroll
            for (int nt = 0; nt < 4; nt++) {
#pragma unroll
                for (int q = 0; q < 2; q++) {
                    int k, col;
                    mmp_fusedk_bfb_reg(q, lane, &k, &col);
                    uint32_t lo = fk_lds16(s + L.off_a + mmp_fusedk_a_off(16 * ks + k, 8 * nt + col));
                    uint32_t hi = fk_lds16(s + L.off_a + mmp_fusedk_a_off(16 * ks + k + 1, 8 * nt + col));
                    bb[q] = lo | (hi << 16);
                }
                fk_mma_bf16(acc.t[nt], xa, bb);
            }
        }
    }
}

/* T of compute warp w into shared memory (and, for the DOWN component, into Y = T, M x 32). */
template <bool OUTT>
__device__ __forceinline__ void fk_store_t(const fk_acc &acc, const fk_params &p, const mmp_fusedk_layout &L, uint8_t *smem,
                                           int64_t m0, int w, int lane)
{
#pragma unroll
    for (int nt = 0; nt < 4; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int row, col;
            mmp_fusedk_acc_elem(e, lane, &row, &col);
            if (OUTT) p.y[(m0 + 16 * w + row) * MMP_FUSEDK_RANK + 8 * nt + col] = acc.t[nt][e];
            else *(float *)(smem + L.off_t + mmp_fusedk_t_off(16 * w + row, 8 * nt + col)) = acc.t[nt][e];
        }
}

/* Y tile of compute warp w: (Q + R) + beta, or the component's part of it. */
template <bool Q, bool RES, bool AFF>
__device__ __forceinline__ void fk_epilogue(const fk_acc &acc, const fk_params &p, const mmp_fusedk_layout &L,
                                            const uint8_t *smem, uint32_t off_bt, int64_t m0, int64_t n0, int w, int lane)
{
    const uint32_t s = fk_smem(smem);
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int e = 0; e < 4; e += 2) {
                float v[2];
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    int row, col;
                    mmp_fusedk_acc_elem(e + c, lane, &row, &col);
                    row += mmp_fusedk_warp_row(w, mt);
                    col += mmp_fusedk_warp_col(w, nt);
                    float rr = 0.0f;
                    if (RES)
#pragma unroll 8
                        for (int t = 0; t < MMP_FUSEDK_RANK; t++)
                            rr = fmaf(__uint_as_float(fk_lds32(s + L.off_t + mmp_fusedk_t_off(row, t))),
                                      fk_bf16(fk_lds16(s + off_bt + mmp_fusedk_bt_off(t, col))), rr);
                    float y = Q ? (RES ? acc.y[mt][nt][e + c] + rr : acc.y[mt][nt][e + c]) : rr;
                    if (AFF) y = fk_affine(y, __ldg(p.beta + n0 + col));
                    v[c] = y;
                }
                int row, col;
                mmp_fusedk_acc_elem(e, lane, &row, &col);
                int64_t off = (m0 + mmp_fusedk_warp_row(w, mt) + row) * p.n + n0 + mmp_fusedk_warp_col(w, nt) + col;
                *(float2 *)(p.y + off) = make_float2(v[0], v[1]);
            }
}

__device__ __forceinline__ void fk_check_smem(const mmp_fusedk_layout &L)
{
    uint32_t dyn;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn));
    if (dyn < L.end) __trap();      /* the layout needs more than the launch gave: never run on */
}

/* ------------------------------------------------------------------------------------------------ */
/* version 1: one CTA per tile, every warp loads and computes, one stage */

template <bool Q, bool RES, bool AFF, bool OUTT>
__global__ void __launch_bounds__(FK_SIMPLE_THREADS, 1) fk_simple_kernel(fk_params p)
{
    extern __shared__ __align__(128) uint8_t smem[];
    mmp_fusedk_layout L;
    mmp_fusedk_layout_make(&L, 1, 0);
    if (threadIdx.x == 0) fk_check_smem(L);
    const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
    int64_t tm, tn;
    mmp_fusedk_tile(blockIdx.x, p.tiles_m, &tm, &tn);
    const int64_t m0 = tm * MMP_FUSEDK_BM, n0 = tn * MMP_FUSEDK_BN, ktiles = p.k / MMP_FUSEDK_BK;
    const int gsteps = p.group / MMP_FUSEDK_BK;
    fk_acc acc;
    fk_acc_zero(acc);
    if (RES && !OUTT) fk_issue_bt(p, L, smem, L.off_bt, n0, tid, FK_SIMPLE_THREADS);
    for (int64_t kt = 0; kt < ktiles; kt++) {
        fk_issue_stage<Q, RES>(p, L, smem, m0, n0, kt, tid, FK_SIMPLE_THREADS);
        fk_cp_commit_wait_all();
        __syncthreads();
        fk_consume<Q, RES>(acc, L, smem, w, lane, (kt + 1) % gsteps == 0, p.scale_bf16);
        __syncthreads();
    }
    if (RES) {
        fk_store_t<OUTT>(acc, p, L, smem, m0, w, lane);
        __syncthreads();
    }
    if (!OUTT) fk_epilogue<Q, RES, AFF>(acc, p, L, smem, L.off_bt, m0, n0, w, lane);
}

/* ------------------------------------------------------------------------------------------------ */
/* versions 2-3: persistent, warp-specialised (warp 0 produces, warps 1-8 consume), S stages */

template <bool Q, bool RES, bool AFF, bool OUTT>
__global__ void __launch_bounds__(FK_PERSIST_THREADS, 1) fk_persistent_kernel(fk_params p)
{
    extern __shared__ __align__(128) uint8_t smem[];
    mmp_fusedk_layout L;
    mmp_fusedk_layout_make(&L, p.stages, 1);
    const int S = p.stages, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t bar = fk_smem(smem) + L.off_bar;   /* full[S], empty[S], res_full[2], res_empty[2] */
    const uint32_t res_full = bar + 16u * S, res_empty = res_full + 16u;   /* + 8 * buffer */
    const uint32_t bt_bytes = MMP_FUSEDK_RANK * MMP_FUSEDK_BT_ROW;
    if (threadIdx.x == 0) {
        fk_check_smem(L);
        for (int s = 0; s < S; s++) {
            fk_mbar_init(bar + 8u * s, 64);                    /* 32 lanes x (arrive + cp.async arrive) */
            fk_mbar_init(bar + 8u * (S + s), MMP_FUSEDK_WARPS);  /* one arrive per consumer warp */
        }
        for (int b = 0; b < 2; b++) {
            fk_mbar_init(res_full + 8u * b, 32);                  /* 32 lanes' cp.async arrives */
            fk_mbar_init(res_empty + 8u * b, MMP_FUSEDK_WARPS);
        }
    }
    __syncthreads();
    const int64_t ktiles = p.k / MMP_FUSEDK_BK;
    const int gsteps = p.group / MMP_FUSEDK_BK;
    if (warp == 0) {                                           /* ---- producer ---- */
        int64_t it = 0;
        for (int64_t i = 0;; i++) {
            const int64_t tile = mmp_fusedk_sched(blockIdx.x, gridDim.x, i);
            if (tile >= p.tiles) break;
            int64_t tm, tn;
            mmp_fusedk_tile(tile, p.tiles_m, &tm, &tn);
            const int64_t m0 = tm * MMP_FUSEDK_BM, n0 = tn * MMP_FUSEDK_BN;
            if (RES && !OUTT) {                                /* buffer i & 1, its use i >> 1 */
                const int buf = (int)(i & 1);
                if (i >= 2) fk_mbar_wait(res_empty + 8u * buf, (int)(((i >> 1) - 1) & 1));
                fk_issue_bt(p, L, smem, L.off_bt + buf * bt_bytes, n0, lane, 32);
                fk_mbar_cp_arrive(res_full + 8u * buf);
            }
            for (int64_t kt = 0; kt < ktiles; kt++, it++) {
                const int s = mmp_fusedk_stage(it, S);
                if (it >= S) fk_mbar_wait(bar + 8u * (S + s), mmp_fusedk_parity(it - S, S));
                fk_issue_stage<Q, RES>(p, L, smem + (size_t)s * L.stage_bytes, m0, n0, kt, lane, 32);
                fk_mbar_arrive(bar + 8u * s);          /* the scales' plain stores (release) */
                fk_mbar_cp_arrive(bar + 8u * s);       /* the cp.async copies, when they land */
            }
        }
        fk_cp_wait_all();
        return;
    }
    const int w = warp - 1;                                    /* ---- consumers ---- */
    int64_t it = 0;
    for (int64_t i = 0;; i++) {
        const int64_t tile = mmp_fusedk_sched(blockIdx.x, gridDim.x, i);
        if (tile >= p.tiles) break;
        int64_t tm, tn;
        mmp_fusedk_tile(tile, p.tiles_m, &tm, &tn);
        const int64_t m0 = tm * MMP_FUSEDK_BM, n0 = tn * MMP_FUSEDK_BN;
        fk_acc acc;
        fk_acc_zero(acc);
        for (int64_t kt = 0; kt < ktiles; kt++, it++) {
            const int s = mmp_fusedk_stage(it, S);
            fk_mbar_wait(bar + 8u * s, mmp_fusedk_parity(it, S));
            fk_consume<Q, RES>(acc, L, smem + (size_t)s * L.stage_bytes, w, lane, (kt + 1) % gsteps == 0, p.scale_bf16);
            __syncwarp();
            if (lane == 0) fk_mbar_arrive(bar + 8u * (S + s));
        }
        if (RES) {
            fk_store_t<OUTT>(acc, p, L, smem, m0, w, lane);
            fk_compute_sync(1);
        }
        if (!OUTT) {
            const int buf = (int)(i & 1);
            if (RES) fk_mbar_wait(res_full + 8u * buf, (int)((i >> 1) & 1));
            fk_epilogue<Q, RES, AFF>(acc, p, L, smem, L.off_bt + buf * bt_bytes, m0, n0, w, lane);
            if (RES) {
                __syncwarp();
                if (lane == 0) fk_mbar_arrive(res_empty + 8u * buf);
            }
        }
        if (RES) fk_compute_sync(1);                            /* T is free for the next tile */
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* component kernels: decode, dequantise, affine (elementwise, the fused kernels' helpers) */

__global__ void fk_decode_kernel(int8_t *y, const uint8_t *q, int64_t count)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = (int8_t)fk_nibble(q, i);
}
__global__ void fk_dequant_kernel(float *y, const uint8_t *q, const uint16_t *s, int64_t rows, int64_t k, int group,
                                  int scale_bf16)
{
    const int64_t ng = k / group;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * k; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = (float)fk_nibble(q, i) * fk_scale(s[(i / k) * ng + (i % k) / group], scale_bf16);
}
__global__ void fk_affine_kernel(float *y, const float *z, const float *beta, int64_t m, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fk_affine(z[i], beta[i % n]);
}

#include "int4_fused_launch.cuh"
