/* kernels/int4_fused_layout.h — address arithmetic of the int4_fused kernels, shared by
 * the CUDA kernels (kernels/int4_fused.cu), the shared-memory budget (kernels/int4_fused_budget.c)
 * and the host tests (suites/check_fused.c). Plain C11; under nvcc every helper is
 * `__host__ __device__`, so the kernel and the test run the very same code.
 *
 * Tiles (both execution modes): a CTA output tile is BM x BN = 128 x 64 of Y, computed by 8 compute
 * warps as 4 (M) x 2 (N), each warp 32 x 32 = 2 m16 x 4 n8 mma tiles. One pipeline stage holds one
 * K step of BK = 64 elements (one mma.sync m16n8k64.s4 per mma tile; the group size g is a multiple
 * of BK, so a stage lies inside one scale group):
 *   xq  BM x 32 bytes (int4, two per byte)   rows padded to 48 B   (ld.shared.b32 conflict-free)
 *   wq  BN x 32 bytes                          rows padded to 48 B
 *   x   BM x 64 bf16 (the unquantised X)        rows padded to 144 B
 *   a   64 x RANK bf16 (rows of A, K x r)       rows padded to 80 B   (u16 pairs conflict-free)
 *   sx  BM scales, sw BN scales of the stage's group (fp16/bf16 bits, 2 B each)
 * Per CTA, outside the stages (the residual buffers):
 *   bt  RANK x BN bf16: the rank-up tile of B for this output tile (rows of 128 B, unpadded);
 *       two buffers in persistent mode (the residual pipeline: tile i+1's tile loads while tile i's
 *       epilogue reads the other buffer), one in the simple mode
 *   t   BM x RANK fp32: the down-projection T = X A of this tile (rows padded to RANK+1 floats)
 *   bar mbarriers (persistent mode only): full[S], empty[S], res_full[2], res_empty[2] (8 B each)
 * Each compute warp w (0..7) also computes T rows 16w..16w+15 (all RANK columns) with bf16
 * m16n8k16 mma.sync; T goes through `t` so that every warp's epilogue sees its 32 rows.
 *
 * Usage:
 *   mmp_fusedk_layout L; mmp_fusedk_layout_make(&L, stages, has_barriers);
 *   uint32_t off = L.stage_bytes * s + L.off_x + mmp_fusedk_x_off(row, kelem);
 */
#ifndef MMAPROBE_KERNELS_INT4_FUSED_LAYOUT_H
#define MMAPROBE_KERNELS_INT4_FUSED_LAYOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define MMP_FUSEDK_HD static __host__ __device__ inline
#else
#define MMP_FUSEDK_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MMP_FUSEDK_BM = 128, MMP_FUSEDK_BN = 64, MMP_FUSEDK_BK = 64, MMP_FUSEDK_RANK = 32,
    MMP_FUSEDK_WARPS = 8, MMP_FUSEDK_WARPS_M = 4, MMP_FUSEDK_WARPS_N = 2,
    MMP_FUSEDK_WM = 32, MMP_FUSEDK_WN = 32,                 /* warp tile of Y */
    MMP_FUSEDK_Q_ROW = 48,      /* xq / wq row stride: 32 B of int4 + 16 B padding */
    MMP_FUSEDK_X_ROW = 144,     /* x row stride: 128 B of bf16 + 16 B padding */
    MMP_FUSEDK_A_ROW = 80,      /* a row stride: 64 B of bf16 + 16 B padding */
    MMP_FUSEDK_BT_ROW = 2 * MMP_FUSEDK_BN,                /* 128 B, unpadded */
    MMP_FUSEDK_T_ROW = 4 * (MMP_FUSEDK_RANK + 1),          /* 132 B: T reads conflict-free */
    MMP_FUSEDK_MAX_STAGES = 8,
    MMP_FUSEDK_ALIGN = 128      /* every region starts on a 128-byte boundary */
};

typedef struct mmp_fusedk_layout {
    int stages, has_barriers, bt_buffers;
    uint32_t off_xq, off_wq, off_x, off_a, off_sx, off_sw; /* inside a stage */
    uint32_t stage_bytes;                                  /* aligned stage size */
    uint32_t off_bt, off_t, off_bar;                       /* from the dynamic smem base */
    uint32_t end;                                          /* bytes the kernel needs */
    /* bytes by purpose (padding = alignment gaps + row padding), for the budget cross-check */
    uint32_t main_bytes, scale_bytes, residual_bytes, sync_bytes, padding_bytes;
} mmp_fusedk_layout;

MMP_FUSEDK_HD uint32_t mmp_fusedk_align(uint32_t x) { return (x + MMP_FUSEDK_ALIGN - 1) / MMP_FUSEDK_ALIGN * MMP_FUSEDK_ALIGN; }

/* The layout the kernel carves its dynamic shared memory with (the authority). */
MMP_FUSEDK_HD void mmp_fusedk_layout_make(mmp_fusedk_layout *L, int stages, int has_barriers)
{
    const uint32_t xq = MMP_FUSEDK_BM * MMP_FUSEDK_Q_ROW, wq = MMP_FUSEDK_BN * MMP_FUSEDK_Q_ROW;
    const uint32_t x = MMP_FUSEDK_BM * MMP_FUSEDK_X_ROW, a = MMP_FUSEDK_BK * MMP_FUSEDK_A_ROW;
    const uint32_t sx = MMP_FUSEDK_BM * 2, sw = MMP_FUSEDK_BN * 2;
    const uint32_t bt = MMP_FUSEDK_RANK * MMP_FUSEDK_BT_ROW, t = MMP_FUSEDK_BM * MMP_FUSEDK_T_ROW;
    const uint32_t bar = has_barriers ? (uint32_t)(2 * stages + 4) * 8u : 0u;
    L->stages = stages;
    L->has_barriers = has_barriers;
    L->bt_buffers = has_barriers ? 2 : 1;
    L->off_xq = 0;
    L->off_wq = mmp_fusedk_align(L->off_xq + xq);
    L->off_x = mmp_fusedk_align(L->off_wq + wq);
    L->off_a = mmp_fusedk_align(L->off_x + x);
    L->off_sx = mmp_fusedk_align(L->off_a + a);
    L->off_sw = mmp_fusedk_align(L->off_sx + sx);
    L->stage_bytes = mmp_fusedk_align(L->off_sw + sw);
    L->off_bt = (uint32_t)stages * L->stage_bytes;
    L->off_t = mmp_fusedk_align(L->off_bt + (uint32_t)L->bt_buffers * bt);
    L->off_bar = mmp_fusedk_align(L->off_t + t);
    L->end = has_barriers ? mmp_fusedk_align(L->off_bar + bar) : L->off_bar;
    /* useful bytes by purpose; the rest of `end` is padding */
    L->main_bytes = (uint32_t)stages * (MMP_FUSEDK_BM + MMP_FUSEDK_BN) * (MMP_FUSEDK_BK / 2);
    L->scale_bytes = (uint32_t)stages * (sx + sw);
    L->residual_bytes = (uint32_t)stages * (MMP_FUSEDK_BM + MMP_FUSEDK_RANK) * MMP_FUSEDK_BK * 2 +
                        (uint32_t)L->bt_buffers * MMP_FUSEDK_RANK * MMP_FUSEDK_BN * 2 + MMP_FUSEDK_BM * MMP_FUSEDK_RANK * 4;
    L->sync_bytes = bar;
    L->padding_bytes = L->end - L->main_bytes - L->scale_bytes - L->residual_bytes - L->sync_bytes;
}

/* ---- byte offsets inside a stage region (add L.stage_bytes * s + L.off_*) ---- */
MMP_FUSEDK_HD uint32_t mmp_fusedk_q_off(int row, int kbyte) { return (uint32_t)(row * MMP_FUSEDK_Q_ROW + kbyte); }
MMP_FUSEDK_HD uint32_t mmp_fusedk_x_off(int row, int k) { return (uint32_t)(row * MMP_FUSEDK_X_ROW + 2 * k); }
MMP_FUSEDK_HD uint32_t mmp_fusedk_a_off(int k, int t) { return (uint32_t)(k * MMP_FUSEDK_A_ROW + 2 * t); }
MMP_FUSEDK_HD uint32_t mmp_fusedk_bt_off(int t, int n) { return (uint32_t)(t * MMP_FUSEDK_BT_ROW + 2 * n); }
MMP_FUSEDK_HD uint32_t mmp_fusedk_t_off(int row, int t) { return (uint32_t)(row * MMP_FUSEDK_T_ROW + 4 * t); }

/* ---- global -> shared 16-byte copies of one stage: chunk c of each tile ---- */
enum {
    MMP_FUSEDK_XQ_CHUNKS = MMP_FUSEDK_BM * 2,            /* 32 B per row = 2 chunks */
    MMP_FUSEDK_WQ_CHUNKS = MMP_FUSEDK_BN * 2,
    MMP_FUSEDK_X_CHUNKS = MMP_FUSEDK_BM * 8,             /* 128 B per row = 8 chunks */
    MMP_FUSEDK_A_CHUNKS = MMP_FUSEDK_BK * (MMP_FUSEDK_RANK * 2 / 16),
    MMP_FUSEDK_BT_CHUNKS = MMP_FUSEDK_RANK * (MMP_FUSEDK_BN * 2 / 16)
};
/* int4 tile (xq or wq): chunk c -> tile row and K byte; global byte offset of the chunk. */
MMP_FUSEDK_HD void mmp_fusedk_q_chunk(int c, int *row, int *kbyte) { *row = c / 2; *kbyte = (c % 2) * 16; }
MMP_FUSEDK_HD int64_t mmp_fusedk_q_gaddr(int64_t k, int64_t row0, int64_t kt, int row, int kbyte)
{
    return (row0 + row) * (k / 2) + kt * (MMP_FUSEDK_BK / 2) + kbyte;
}
/* x tile: chunk c -> row, first K element (8 bf16 per chunk); global element offset. */
MMP_FUSEDK_HD void mmp_fusedk_x_chunk(int c, int *row, int *k) { *row = c / 8; *k = (c % 8) * 8; }
MMP_FUSEDK_HD int64_t mmp_fusedk_x_gidx(int64_t k, int64_t row0, int64_t kt, int row, int kk)
{
    return (row0 + row) * k + kt * MMP_FUSEDK_BK + kk;
}
/* a tile (K x RANK, row-major): chunk c -> K row, first column; global element offset. */
MMP_FUSEDK_HD void mmp_fusedk_a_chunk(int c, int *kk, int *t) { *kk = c / 4; *t = (c % 4) * 8; }
MMP_FUSEDK_HD int64_t mmp_fusedk_a_gidx(int64_t kt, int kk, int t) { return (kt * MMP_FUSEDK_BK + kk) * MMP_FUSEDK_RANK + t; }
/* bt tile (rows t of B, r x N row-major, columns n0..n0+BN-1): chunk c -> t, first column. */
MMP_FUSEDK_HD void mmp_fusedk_bt_chunk(int c, int *t, int *n) { *t = c / 8; *n = (c % 8) * 8; }
MMP_FUSEDK_HD int64_t mmp_fusedk_bt_gidx(int64_t n, int64_t n0, int t, int nn) { return (int64_t)t * n + n0 + nn; }

/* ---- fragments (PTX ISA "Matrix Fragments for mma.m16n8k64" .s4 and "mma.m16n8k16" .bf16) ----
 * gid = lane / 4, tig = lane % 4.
 * s4 A (16 x 64): reg q (0..3) = row (q & 1) * 8 + gid, K bytes (q >> 1) * 16 + 4 tig .. +3.
 * s4 B (64 x 8, stored n-major): reg q (0..1) = column gid, K bytes q * 16 + 4 tig .. +3.
 * bf16 A (16 x 16): reg q = row (q & 1) * 8 + gid, K elements (q >> 1) * 8 + 2 tig, +1.
 * bf16 B (16 x 8): reg q = K elements q * 8 + 2 tig, +1 (low half first), column gid.
 * C/D (16 x 8, fp32 or s32): elem e = row (e >> 1) * 8 + gid, column 2 tig + (e & 1). */
MMP_FUSEDK_HD void mmp_fusedk_s4a_reg(int q, int lane, int *row, int *kbyte)
{
    *row = (q & 1) * 8 + lane / 4;
    *kbyte = (q >> 1) * 16 + 4 * (lane % 4);
}
MMP_FUSEDK_HD void mmp_fusedk_s4b_reg(int q, int lane, int *col, int *kbyte)
{
    *col = lane / 4;
    *kbyte = q * 16 + 4 * (lane % 4);
}
MMP_FUSEDK_HD void mmp_fusedk_bfa_reg(int q, int lane, int *row, int *k)
{
    *row = (q & 1) * 8 + lane / 4;
    *k = (q >> 1) * 8 + 2 * (lane % 4);
}
MMP_FUSEDK_HD void mmp_fusedk_bfb_reg(int q, int lane, int *k, int *col)
{
    *k = q * 8 + 2 * (lane % 4);
    *col = lane / 4;
}
MMP_FUSEDK_HD void mmp_fusedk_acc_elem(int e, int lane, int *row, int *col)
{
    *row = (e >> 1) * 8 + lane / 4;
    *col = 2 * (lane % 4) + (e & 1);
}

/* ---- warp and tile positions ---- */
/* Compute warp w's 32 x 32 tile of Y inside the CTA tile; (mt, nt) picks its m16 x n8 mma tile. */
MMP_FUSEDK_HD int mmp_fusedk_warp_row(int w, int mt) { return (w / MMP_FUSEDK_WARPS_N) * MMP_FUSEDK_WM + 16 * mt; }
MMP_FUSEDK_HD int mmp_fusedk_warp_col(int w, int nt) { return (w % MMP_FUSEDK_WARPS_N) * MMP_FUSEDK_WN + 8 * nt; }
/* Linear tile index -> (tile row, tile col): M fastest, so consecutive CTAs share the W tile in L2. */
MMP_FUSEDK_HD void mmp_fusedk_tile(int64_t tile, int64_t tiles_m, int64_t *tm, int64_t *tn)
{
    *tm = tile % tiles_m;
    *tn = tile / tiles_m;
}
/* Persistent schedule: the i-th tile of CTA b of a grid of g CTAs (tile >= tiles: done). */
MMP_FUSEDK_HD int64_t mmp_fusedk_sched(int64_t b, int64_t g, int64_t i) { return b + i * g; }
/* Pipeline position of the global K step `it` of a CTA: stage and mbarrier phase parity. */
MMP_FUSEDK_HD int mmp_fusedk_stage(int64_t it, int stages) { return (int)(it % stages); }
MMP_FUSEDK_HD int mmp_fusedk_parity(int64_t it, int stages) { return (int)((it / stages) & 1); }

#ifdef __cplusplus
}
#endif
#endif
