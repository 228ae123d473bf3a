/* kernels/int_ptx_addr.h — address arithmetic of the INT8/INT4 mma.sync kernels (int8_ptx, int4_ptx),
 * shared by the CUDA kernels (kernels/int_ptx.cuh), their memory maps (kernels/int_ptx_maps.c) and
 * the host test (tests/check_kernint_maps.c). Plain C11; under nvcc every helper is
 * `constexpr __host__ __device__`, so the kernel, the map and the test run the very same code.
 *
 * Design: a CTA of 8 warps as 2 (M) x 4 (N); each warp owns a 16 x 16 tile of D and its
 * own private shared-memory tiles of A (16 rows x BKB bytes) and B (16 columns x BKB bytes), so a warp
 * only needs __syncwarp. BKB is the bytes of K one step (= one mma.sync) consumes: 32 (int8 k32 /
 * int4 k64) or 16 (int8 k16 / int4 k32). In bytes, s8 m16n8k32 and s4 m16n8k64 have the same
 * fragment layout, as do s8 m16n8k16 and s4 m16n8k32, so one set of helpers serves both widths.
 *
 * Usage:
 *   mmp_intk_cfg c = {8, 32, 2, 4, 2, 0, 0};                 // int8, k32, 2 stages, A x4, B x2
 *   uint64_t off = mmp_intk_smem_a(c, stage, warp, row, kbyte); // shared byte offset
 *   int row, kb; mmp_intk_copy_chunk(c, it, lane, &row, &kb);   // which 16 B this lane copies
 *
 * Register numbering: A has NA = BKB/8 registers, A reg q holds rows (q&1)*8 + groupID and K bytes
 * (q>>1)*16 + 4*threadID_in_group .. +3 (PTX ISA "Matrix Fragments for mma.m16n8k32/k64" and
 * k16/k32). B has, per n8 half h, NB = BKB/16 registers; B reg (h, c) holds column h*8 + groupID and
 * K bytes c*16 + 4*threadID_in_group .. +3. ldmatrix matrix j fills A reg j, or B reg (j/NB, j%NB).
 */
#ifndef MMAPROBE_KERNELS_INT_PTX_ADDR_H
#define MMAPROBE_KERNELS_INT_PTX_ADDR_H

#include <stdint.h>

#ifdef __CUDACC__
#define MMP_INTK_HD static constexpr __host__ __device__ inline
#elif defined(__cplusplus)
#define MMP_INTK_HD static constexpr inline
#else
#define MMP_INTK_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MMP_INTK_WARPS = 8, MMP_INTK_WARPS_M = 2, MMP_INTK_WARPS_N = 4,
    MMP_INTK_WTILE = 16,                                    /* warp tile: 16 x 16 of D */
    MMP_INTK_TILE_M = MMP_INTK_WARPS_M * MMP_INTK_WTILE,   /* CTA tile: 32 x 64 */
    MMP_INTK_TILE_N = MMP_INTK_WARPS_N * MMP_INTK_WTILE,
    MMP_INTK_THREADS = 32 * MMP_INTK_WARPS,
    MMP_INTK_PAD = 16,             /* bytes after a 32-byte row: stride 48 makes ldmatrix conflict-free */
    MMP_INTK_BT_ROW = 2 * MMP_INTK_WTILE + MMP_INTK_PAD,    /* transposed B: one K b16 row of 16 n */
    MMP_INTK_WMMA_SCRATCH = 16 * 16 * 4                     /* per warp, WMMA epilogue */
};

typedef struct mmp_intk_cfg {
    int bits;     /* 8 (s8) or 4 (s4) */
    int bkb;      /* K bytes per step and per mma.sync: 32 or 16 */
    int stages;   /* cp.async pipeline depth: 2 or 3 */
    int a_ldsm;   /* matrices per A ldmatrix (4, 2, 1); 0 = per-lane ld.shared.b32 gathers */
    int b_ldsm;   /* matrices per B ldmatrix (2, 1);    0 = per-lane ld.shared.b32 gathers */
    int b_trans;  /* 1: the transposed-B loader: 1-byte ld.global across N, st.shared.b16 into a
                     [K/2][N] b16 tile, ldmatrix.trans (B is still N x K in global memory) */
    int cg;       /* 1: cp.async.cg (L2 only) instead of cp.async.ca */
} mmp_intk_cfg;

/* ---- shared-memory layout: [stage][A of warps 0..7][B of warps 0..7] ---- */
MMP_INTK_HD int mmp_intk_row_stride(mmp_intk_cfg c) { return c.bkb + (c.bkb == 32 ? MMP_INTK_PAD : 0); }
MMP_INTK_HD int mmp_intk_a_warp_bytes(mmp_intk_cfg c) { return MMP_INTK_WTILE * mmp_intk_row_stride(c); }
MMP_INTK_HD int mmp_intk_b_warp_bytes(mmp_intk_cfg c)
{
    return c.b_trans ? (c.bkb / 2) * MMP_INTK_BT_ROW : MMP_INTK_WTILE * mmp_intk_row_stride(c);
}
MMP_INTK_HD int mmp_intk_stage_bytes(mmp_intk_cfg c)
{
    return MMP_INTK_WARPS * (mmp_intk_a_warp_bytes(c) + mmp_intk_b_warp_bytes(c));
}
MMP_INTK_HD int mmp_intk_smem_total(mmp_intk_cfg c) { return c.stages * mmp_intk_stage_bytes(c); }

/* A tile of warp w: row (0..15) x K byte (0..bkb-1). */
MMP_INTK_HD uint32_t mmp_intk_smem_a(mmp_intk_cfg c, int stage, int warp, int row, int kbyte)
{
    return (uint32_t)(stage * mmp_intk_stage_bytes(c) + warp * mmp_intk_a_warp_bytes(c) +
                      row * mmp_intk_row_stride(c) + kbyte);
}
/* B tile of warp w, [n][k] (non-transposed loader): column n (0..15) x K byte. */
MMP_INTK_HD uint32_t mmp_intk_smem_b(mmp_intk_cfg c, int stage, int warp, int n, int kbyte)
{
    return (uint32_t)(stage * mmp_intk_stage_bytes(c) + MMP_INTK_WARPS * mmp_intk_a_warp_bytes(c) +
                      warp * mmp_intk_b_warp_bytes(c) + n * mmp_intk_row_stride(c) + kbyte);
}
/* B tile of warp w, [k/2 bytes... as b16][n] (transposed loader): b16 unit kb16 (K bytes 2kb16,
 * 2kb16+1) of column n. */
MMP_INTK_HD uint32_t mmp_intk_smem_bt(mmp_intk_cfg c, int stage, int warp, int kb16, int n)
{
    return (uint32_t)(stage * mmp_intk_stage_bytes(c) + MMP_INTK_WARPS * mmp_intk_a_warp_bytes(c) +
                      warp * mmp_intk_b_warp_bytes(c) + kb16 * MMP_INTK_BT_ROW + 2 * n);
}

/* ---- warp position in the CTA and in the problem ---- */
MMP_INTK_HD int mmp_intk_warp_m0(int block_y, int warp)
{
    return block_y * MMP_INTK_TILE_M + (warp / MMP_INTK_WARPS_N) * MMP_INTK_WTILE;
}
MMP_INTK_HD int mmp_intk_warp_n0(int block_x, int warp)
{
    return block_x * MMP_INTK_TILE_N + (warp % MMP_INTK_WARPS_N) * MMP_INTK_WTILE;
}

/* ---- global -> shared copies: a 16 x bkb tile is bkb chunks of 16 bytes ---- */
MMP_INTK_HD int mmp_intk_copy_iters(mmp_intk_cfg c) { return (c.bkb + 31) / 32; }
/* Chunk of iteration it for this lane: returns 0 if the lane is idle, else sets the tile row (A row
 * or B column) and the K byte. Two (bkb 32) or one (bkb 16) lanes per row: every 32-byte sector a
 * row spans is used whole (bkb 32) or half (bkb 16). */
MMP_INTK_HD int mmp_intk_copy_chunk(mmp_intk_cfg c, int it, int lane, int *row, int *kbyte)
{
    int chunk = it * 32 + lane, per_row = c.bkb / 16;
    if (chunk >= MMP_INTK_WTILE * per_row) return 0;
    *row = chunk / per_row;
    *kbyte = (chunk % per_row) * 16;
    return 1;
}
/* Byte offset in A (row-major M x K) or B (N x K, "col-major") of a tile element. */
MMP_INTK_HD int64_t mmp_intk_gaddr(int64_t ld_bytes, int64_t row0, int64_t kb0, int row, int kbyte)
{
    return (row0 + row) * ld_bytes + kb0 + kbyte;
}
/* Transposed loader: iteration it (0..bkb/4-1) of a lane covers b16 unit (kb16, n): two 1-byte
 * loads at gaddr(ldb, n0, kb0, n, 2*kb16) and +1. Lanes 0..15 take n = 0..15 of one kb16, so one
 * warp-wide 1-byte load touches 16 rows of B: 2 useful bytes per 32-byte sector. */
MMP_INTK_HD int mmp_intk_bt_iters(mmp_intk_cfg c) { return c.bkb / 4; }
MMP_INTK_HD void mmp_intk_bt_elem(int it, int lane, int *kb16, int *n)
{
    int idx = it * 32 + lane;
    *kb16 = idx / MMP_INTK_WTILE;
    *n = idx % MMP_INTK_WTILE;
}

/* ---- fragments ---- */
MMP_INTK_HD int mmp_intk_a_regs(mmp_intk_cfg c) { return c.bkb / 8; }   /* 4 or 2 */
MMP_INTK_HD int mmp_intk_b_regs(mmp_intk_cfg c) { return c.bkb / 16; }  /* per n8 half: 2 or 1 */
MMP_INTK_HD int mmp_intk_a_calls(mmp_intk_cfg c) { return mmp_intk_a_regs(c) / c.a_ldsm; }
MMP_INTK_HD int mmp_intk_b_calls(mmp_intk_cfg c) { return 2 * mmp_intk_b_regs(c) / c.b_ldsm; }
/* ldmatrix call p: the matrix whose row address lane supplies (lanes beyond 8*n repeat). */
MMP_INTK_HD int mmp_intk_ldsm_matrix(int p, int nmat, int lane) { return p * nmat + (lane % (8 * nmat)) / 8; }
/* A matrix j: rows (j&1)*8 .. +7, K bytes (j>>1)*16 .. +15; lane's row address. */
MMP_INTK_HD uint32_t mmp_intk_ldsm_a_addr(mmp_intk_cfg c, int stage, int warp, int p, int lane)
{
    int j = mmp_intk_ldsm_matrix(p, c.a_ldsm, lane);
    return mmp_intk_smem_a(c, stage, warp, (j & 1) * 8 + lane % 8, (j >> 1) * 16);
}
/* B matrix j: half h = j / NB, K chunk cc = j % NB; [n][k] tile: rows n = h*8 + r; transposed tile:
 * rows kb16 = cc*8 + r at column h*8 (read with ldmatrix.trans). */
MMP_INTK_HD uint32_t mmp_intk_ldsm_b_addr(mmp_intk_cfg c, int stage, int warp, int p, int lane)
{
    int j = mmp_intk_ldsm_matrix(p, c.b_ldsm, lane), nb = mmp_intk_b_regs(c);
    int h = j / nb, cc = j % nb, r = lane % 8;
    return c.b_trans ? mmp_intk_smem_bt(c, stage, warp, cc * 8 + r, h * 8)
                     : mmp_intk_smem_b(c, stage, warp, h * 8 + r, cc * 16);
}
/* Manual packing (no ldmatrix): the 4 bytes A reg q / B reg (h, cc) of this lane are read from. */
MMP_INTK_HD uint32_t mmp_intk_lds_a_addr(mmp_intk_cfg c, int stage, int warp, int q, int lane)
{
    return mmp_intk_smem_a(c, stage, warp, (q & 1) * 8 + lane / 4, (q >> 1) * 16 + 4 * (lane % 4));
}
MMP_INTK_HD uint32_t mmp_intk_lds_b_addr(mmp_intk_cfg c, int stage, int warp, int h, int cc, int lane)
{
    return mmp_intk_smem_b(c, stage, warp, h * 8 + lane / 4, cc * 16 + 4 * (lane % 4));
}
/* D fragment of the m16n8 half h: element e (0..3) of lane -> row, column in the warp tile. */
MMP_INTK_HD void mmp_intk_d_elem(int h, int e, int lane, int *row, int *col)
{
    *row = lane / 4 + (e >> 1) * 8;
    *col = h * 8 + 2 * (lane % 4) + (e & 1);
}

/* ---- the kernels: one row each, (name, bits, bkb, stages, a_ldsm, b_ldsm, b_trans, cg, text);
 * the CUDA tables (int8_ptx.cu, int4_ptx.cu) and the memory maps (int_ptx_maps.c) expand these. ---- */
#define MMP_INT8_PTX_ROWS(X)                                                                        \
    X(int8_ptx_mma_k16, 8, 16, 2, 2, 2, 0, 0,                                                       \
      "s8 m16n8k16, K step 16: ldmatrix.x2 A / .x2 B, cp.async.ca 2-stage (half-sector rows)")      \
    X(int8_ptx_mma_k32, 8, 32, 2, 4, 2, 0, 0,                                                       \
      "s8 m16n8k32, K step 32: ldmatrix.x4 A / .x2 B per n8, cp.async.ca 2-stage")                  \
    X(int8_ptx_manual_pack, 8, 32, 2, 0, 0, 0, 0,                                                   \
      "s8 m16n8k32 with per-lane ld.shared.b32 fragment gathers (no ldmatrix), 2-stage")            \
    X(int8_ptx_3stage, 8, 32, 3, 4, 2, 0, 0,                                                        \
      "s8 m16n8k32, ldmatrix.x4/.x2, 3-stage cp.async (wait_group 1)")
#define MMP_INT4_PTX_ROWS(X)                                                                        \
    X(int4_ptx_mma_k32, 4, 16, 2, 2, 2, 0, 0,                                                       \
      "s4 m16n8k32, K step 32: ldmatrix.x2 A / .x2 B, cp.async.ca 2-stage (half-sector rows)")      \
    X(int4_ptx_mma_k64, 4, 32, 2, 4, 2, 0, 0,                                                       \
      "s4 m16n8k64, K step 64: ldmatrix.x4 A / .x2 B per n8, non-transposed B, cp.async.ca 2-stage") \
    X(int4_ptx_manual_pack, 4, 32, 2, 0, 0, 0, 0,                                                   \
      "s4 m16n8k64 with per-lane ld.shared.b32 fragment gathers (no ldmatrix), 2-stage")            \
    X(int4_ptx_3stage, 4, 32, 3, 4, 2, 0, 0,                                                        \
      "s4 m16n8k64, ldmatrix.x4/.x2, 3-stage cp.async (wait_group 1)")                              \
    X(int4_ptx_mma_k64_x1_x2nontrans_ca, 4, 32, 2, 1, 2, 0, 0,                                      \
      "k64 ablation: A as 4 ldmatrix.x1, B .x2, non-transposed B, .ca")                             \
    X(int4_ptx_mma_k64_x2_x2nontrans_ca, 4, 32, 2, 2, 2, 0, 0,                                      \
      "k64 ablation: A as 2 ldmatrix.x2, B .x2, non-transposed B, .ca")                             \
    X(int4_ptx_mma_k64_x4_x1nontrans_ca, 4, 32, 2, 4, 1, 0, 0,                                      \
      "k64 ablation: A ldmatrix.x4, B as 2 ldmatrix.x1 per n8, non-transposed B, .ca")              \
    X(int4_ptx_mma_k64_x4_x2nontrans_cg, 4, 32, 2, 4, 2, 0, 1,                                      \
      "k64 ablation: A .x4, B .x2, non-transposed B, cp.async.cg (L2 only)")                        \
    X(int4_ptx_mma_k64_x4_x2trans_ca, 4, 32, 2, 4, 2, 1, 0,                                         \
      "k64 ablation: transposed-B loader (1-byte loads across N, ldmatrix.x2.trans), .ca")

#ifdef __cplusplus
}
#endif
#endif
