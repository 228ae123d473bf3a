/* kernels/kern16_addr.h — the address arithmetic of the fp16_wmma, fp16_ptx and bf16_mma
 * families, shared by the CUDA kernels, their memory maps (kernels/kern16_memmaps.c) and the
 * host test (suites/check_kern16_maps.c). Plain C that nvcc also compiles as
 * __host__ __device__ C++: the kernels call exactly these functions, so the maps cannot drift
 * from what the kernels do.
 *
 * Usage (kernel side, C is a constexpr mmp_k16_cfg):
 *   int off = mmp_k16_smem_off(C.smem_layout, mmp_k16_a_row_bytes(C), row, chunk);
 *   mmp_k16_copy cp = mmp_k16_copy_a(C, tid, i);          // the i-th 16-byte chunk of thread tid
 *   mmp_k16_rc rc = mmp_k16_ldsm_a(C, lane, wm_off, mi, ks);  // ldmatrix row address of a lane
 *
 * Shared-memory picture of one stage of the mma.sync families (byte offsets from the stage):
 *   [ A: bm rows of bk*elem bytes (64) (+16 if padded) ][ B tile ]
 *   B tile, b_kmajor = 1 (B column-major in global, "TN"): bn rows of 64 bytes, like A;
 *   B tile, b_kmajor = 0 (B row-major in global): bk rows of bn*elem bytes (256) (+16 if padded),
 *   read with ldmatrix .trans.
 * A 16-byte chunk c of row r sits at mmp_k16_smem_off(layout, row_bytes, r, c):
 *   plain:   r*row_bytes + 16c
 *   padded:  r*(row_bytes+16) + 16c
 *   swizzle: r*row_bytes + 16*(c ^ x(r)), x(r) = (r >> 1) & 3 for 64-byte rows (CUTLASS
 *            Swizzle<2,3,3>), r & 7 for rows of 128 bytes or more.
 * Stage s starts at s * mmp_k16_stage_bytes(C); the B tile at + mmp_k16_a_stage_bytes(C).
 */
#ifndef MMAPROBE_KERN16_ADDR_H
#define MMAPROBE_KERN16_ADDR_H

#ifdef __CUDACC__
#define MMP_K16_HD __host__ __device__ constexpr __forceinline__
#define MMP_K16_CONST constexpr
#else
#define MMP_K16_HD static inline
#define MMP_K16_CONST const __attribute__((unused))
#endif

enum { MMP_K16_PLAIN = 0, MMP_K16_PAD = 1, MMP_K16_SWZ = 2 };
enum { MMP_K16_LDSM = 0, MMP_K16_MANUAL = 1 };
enum { MMP_K16_ACC_F32 = 0, MMP_K16_ACC_F16 = 1 };
enum { MMP_K16_E_FP16 = 0, MMP_K16_E_BF16 = 1, MMP_K16_E_E4M3 = 2 };

/* One mma.sync GEMM configuration (a row of the fp16_ptx / bf16_mma tables). */
typedef struct mmp_k16_cfg {
    const char *name;
    int elem;          /* MMP_K16_E_* */
    int elem_bytes;    /* 2 or 1 */
    int acc;           /* MMP_K16_ACC_* */
    int bm, bn, bk;    /* CTA tile; bk in elements (64 or 128 bytes of K per row) */
    int wm, wn;        /* warp tile */
    int stages;        /* cp.async pipeline depth */
    int smem_layout;   /* MMP_K16_PLAIN / PAD / SWZ, for both operand tiles */
    int b_kmajor;      /* 1: B column-major (smem [n][k]); 0: row-major (smem [k][n], .trans) */
    int loader;        /* MMP_K16_LDSM or MMP_K16_MANUAL (32-bit ld.shared + packing) */
    int mma_k;         /* 8 (m16n8k8), 16 (m16n8k16), 32 (m16n8k32, 8-bit inputs) */
    int promote_k;     /* 0, or promote the fragment into an FP32 master every promote_k of K */
    int ctas_per_sm;   /* occupancy the design expects on sm_80+ (228 KB/SM on sm_90) */
    int pipe;          /* 0: the plain loop (barrier, prefetch, then each K step loads its own
                        * fragments); 1: fragments double-buffered in registers, the next K
                        * step's (and the next slice's first) ldmatrix issued before this
                        * step's mma (kernels/kern16_mma.cuh) */
} mmp_k16_cfg;

/* Index of each configuration in mmp_k16_cfgs[] (the kernels instantiate one template each). */
enum {
    MMP_K16_FP16_PTX_MMA, MMP_K16_FP16_PTX_K8, MMP_K16_FP16_PTX_FP16ACC, MMP_K16_FP16_PTX_3STAGE,
    MMP_K16_FP16_PTX_MANUAL,
    MMP_K16_BF16_PLAIN, MMP_K16_BF16_PADDED, MMP_K16_BF16_SWIZZLE, MMP_K16_BF16_PADDED_3STAGE,
    MMP_K16_BF16_SWIZZLE_3STAGE, MMP_K16_FP16_F16ACC, MMP_K16_FP16_F16ACC_W64, MMP_K16_FP8,
    MMP_K16_FP8_PROMOTE, MMP_K16_BF16_W64_4STAGE,
    MMP_K16_BF16_PIPE_256, MMP_K16_BF16_PIPE_256_BK64, MMP_K16_BF16_PIPE_128,
    MMP_K16_COUNT
};

/*                          name                    elem            eb acc              bm   bn   bk  wm  wn st layout         kmaj loader          mk  prom ctas pipe */
static MMP_K16_CONST mmp_k16_cfg mmp_k16_cfgs[MMP_K16_COUNT] = {
    {"fp16_ptx_mma",          MMP_K16_E_FP16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_PAD,   0, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp16_ptx_k8",           MMP_K16_E_FP16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_PAD,   0, MMP_K16_LDSM,    8, 0, 2, 0},
    {"fp16_ptx_fp16acc",      MMP_K16_E_FP16, 2, MMP_K16_ACC_F16, 128, 128, 32, 64, 32, 2, MMP_K16_PAD,   0, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp16_ptx_3stage",       MMP_K16_E_FP16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 3, MMP_K16_PAD,   0, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp16_ptx_manual_pack",  MMP_K16_E_FP16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_PAD,   0, MMP_K16_MANUAL, 16, 0, 2, 0},
    {"bf16_mma_plain",        MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_PLAIN, 1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"bf16_mma_padded",       MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_PAD,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"bf16_mma_swizzle",      MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 2, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"bf16_mma_padded_3stage",MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 3, MMP_K16_PAD,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"bf16_mma_swizzle_3stage",MMP_K16_E_BF16,2, MMP_K16_ACC_F32, 128, 128, 32, 64, 32, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp16_mma_f16acc",       MMP_K16_E_FP16, 2, MMP_K16_ACC_F16, 128, 128, 32, 64, 32, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp16_mma_f16acc_w64",   MMP_K16_E_FP16, 2, MMP_K16_ACC_F16, 128, 128, 32, 64, 64, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 2, 0},
    {"fp8_mma",               MMP_K16_E_E4M3, 1, MMP_K16_ACC_F32, 128, 128, 64, 64, 32, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   32, 0, 2, 0},
    {"fp8_mma_promote64",     MMP_K16_E_E4M3, 1, MMP_K16_ACC_F32, 128, 128, 64, 64, 32, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   32, 64, 1, 0},
    {"bf16_mma_w64_4stage",   MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 256, 32, 64, 64, 4, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 1, 0},
    {"bf16_mma_pipe_256",     MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 256, 32, 64, 64, 4, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 1, 1},
    {"bf16_mma_pipe_256_bk64",MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 256, 64, 64, 64, 3, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 1, 1},
    {"bf16_mma_pipe_128",     MMP_K16_E_BF16, 2, MMP_K16_ACC_F32, 128, 128, 32, 64, 64, 4, MMP_K16_SWZ,   1, MMP_K16_LDSM,   16, 0, 2, 1},
};

/* ---- tile geometry ---------------------------------------------------------------------- */
MMP_K16_HD int mmp_k16_warps(mmp_k16_cfg c) { return (c.bm / c.wm) * (c.bn / c.wn); }
MMP_K16_HD int mmp_k16_threads(mmp_k16_cfg c) { return 32 * mmp_k16_warps(c); }
MMP_K16_HD int mmp_k16_elems_per_chunk(mmp_k16_cfg c) { return 16 / c.elem_bytes; }
MMP_K16_HD int mmp_k16_a_row_bytes(mmp_k16_cfg c) { return c.bk * c.elem_bytes; }
/* Row length of the B tile: K-major rows like A, or N-major rows of bn elements. */
MMP_K16_HD int mmp_k16_b_row_bytes(mmp_k16_cfg c)
{
    return c.b_kmajor ? c.bk * c.elem_bytes : c.bn * c.elem_bytes;
}
MMP_K16_HD int mmp_k16_b_rows(mmp_k16_cfg c) { return c.b_kmajor ? c.bn : c.bk; }
MMP_K16_HD int mmp_k16_pitch(int layout, int row_bytes)
{
    return layout == MMP_K16_PAD ? row_bytes + 16 : row_bytes;
}
MMP_K16_HD int mmp_k16_a_stage_bytes(mmp_k16_cfg c)
{
    return c.bm * mmp_k16_pitch(c.smem_layout, mmp_k16_a_row_bytes(c));
}
MMP_K16_HD int mmp_k16_b_stage_bytes(mmp_k16_cfg c)
{
    return mmp_k16_b_rows(c) * mmp_k16_pitch(c.smem_layout, mmp_k16_b_row_bytes(c));
}
MMP_K16_HD int mmp_k16_stage_bytes(mmp_k16_cfg c)
{
    return mmp_k16_a_stage_bytes(c) + mmp_k16_b_stage_bytes(c);
}
MMP_K16_HD int mmp_k16_smem_bytes(mmp_k16_cfg c) { return c.stages * mmp_k16_stage_bytes(c); }

/* Byte offset of 16-byte chunk `chunk` of tile row `row` (see the picture at the top). */
MMP_K16_HD int mmp_k16_swizzle_x(int row_bytes, int row)
{
    if (row_bytes >= 128) return row & 7;
    int rows_per_line = 128 / row_bytes;           /* 2 for 64-byte rows */
    return (row / rows_per_line) & (row_bytes / 16 - 1);
}
MMP_K16_HD int mmp_k16_smem_off(int layout, int row_bytes, int row, int chunk)
{
    if (layout == MMP_K16_PAD) return row * (row_bytes + 16) + chunk * 16;
    if (layout == MMP_K16_SWZ) return row * row_bytes + ((chunk ^ mmp_k16_swizzle_x(row_bytes, row)) << 4);
    return row * row_bytes + chunk * 16;
}

/* ---- global -> shared copies (cp.async, 16 bytes per thread per call) -------------------- */
typedef struct mmp_k16_copy {
    int row, chunk;    /* tile row and 16-byte chunk it fills */
    int smem;          /* byte offset inside the operand's stage tile */
} mmp_k16_copy;

MMP_K16_HD int mmp_k16_copies_a(mmp_k16_cfg c)   /* calls per thread per stage */
{
    return c.bm * (mmp_k16_a_row_bytes(c) / 16) / mmp_k16_threads(c);
}
MMP_K16_HD int mmp_k16_copies_b(mmp_k16_cfg c)
{
    return mmp_k16_b_rows(c) * (mmp_k16_b_row_bytes(c) / 16) / mmp_k16_threads(c);
}
MMP_K16_HD mmp_k16_copy mmp_k16_copy_a(mmp_k16_cfg c, int tid, int i)
{
    int cpr = mmp_k16_a_row_bytes(c) / 16, id = tid + i * mmp_k16_threads(c);
    mmp_k16_copy r = {0, 0, 0};
    r.row = id / cpr;
    r.chunk = id % cpr;
    r.smem = mmp_k16_smem_off(c.smem_layout, mmp_k16_a_row_bytes(c), r.row, r.chunk);
    return r;
}
MMP_K16_HD mmp_k16_copy mmp_k16_copy_b(mmp_k16_cfg c, int tid, int i)
{
    int cpr = mmp_k16_b_row_bytes(c) / 16, id = tid + i * mmp_k16_threads(c);
    mmp_k16_copy r = {0, 0, 0};
    r.row = id / cpr;
    r.chunk = id % cpr;
    r.smem = mmp_k16_smem_off(c.smem_layout, mmp_k16_b_row_bytes(c), r.row, r.chunk);
    return r;
}
/* Incremental form of the copies, for the pipelined kernels (pipe > 0), whose loop cannot
 * afford the general index arithmetic per copy: copy i of a thread is its copy 0 moved
 * i * rstep tile rows down (the thread count is a multiple of the chunks per row, so the chunk
 * stays) and i * sstep bytes on in shared memory (rstep is a multiple of the swizzle period).
 * suites/check_kern16_maps.c checks both against mmp_k16_copy_a/_b for every thread and copy. */
MMP_K16_HD int mmp_k16_copy_rstep_a(mmp_k16_cfg c) { return mmp_k16_threads(c) / (mmp_k16_a_row_bytes(c) / 16); }
MMP_K16_HD int mmp_k16_copy_rstep_b(mmp_k16_cfg c) { return mmp_k16_threads(c) / (mmp_k16_b_row_bytes(c) / 16); }
MMP_K16_HD int mmp_k16_copy_sstep_a(mmp_k16_cfg c)
{
    return mmp_k16_copy_rstep_a(c) * mmp_k16_pitch(c.smem_layout, mmp_k16_a_row_bytes(c));
}
MMP_K16_HD int mmp_k16_copy_sstep_b(mmp_k16_cfg c)
{
    return mmp_k16_copy_rstep_b(c) * mmp_k16_pitch(c.smem_layout, mmp_k16_b_row_bytes(c));
}

/* Global element index (not bytes) of the first element of a copy, for the K tile starting
 * at k0 of the CTA tile (m0, n0); *valid = 0 when the chunk lies outside the matrix (the
 * kernel then zero-fills it). A is row-major; B per c.b_kmajor (column- or row-major). */
MMP_K16_HD long long mmp_k16_gidx_a(mmp_k16_cfg c, mmp_k16_copy cp, long long m0, long long k0,
                                    long long M, long long K, long long lda, int *valid)
{
    long long row = m0 + cp.row, col = k0 + (long long)cp.chunk * mmp_k16_elems_per_chunk(c);
    *valid = row < M && col < K;
    return row * lda + col;
}
MMP_K16_HD long long mmp_k16_gidx_b(mmp_k16_cfg c, mmp_k16_copy cp, long long n0, long long k0,
                                    long long N, long long K, long long ldb, int *valid)
{
    long long e = mmp_k16_elems_per_chunk(c);
    if (c.b_kmajor) {            /* (k, n) at n * ldb + k */
        long long n = n0 + cp.row, k = k0 + cp.chunk * e;
        *valid = n < N && k < K;
        return n * ldb + k;
    }
    long long k = k0 + cp.row, n = n0 + cp.chunk * e;   /* (k, n) at k * ldb + n */
    *valid = k < K && n < N;
    return k * ldb + n;
}

/* ---- shared -> registers ------------------------------------------------------------------
 * Fragments follow the PTX ISA "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32":
 * g = lane >> 2, t = lane & 3; A register q of a 16-bit m16n8k16 fragment holds row
 * g + 8*(q & 1), columns 2t, 2t+1 (+8 if q >= 2); B register q holds k = 2t, 2t+1 (+8*q),
 * column n = g. 8-bit m16n8k32 fragments have the same byte picture (4 bytes per register).
 * In 16-byte units of a 64-byte K row, one 16-element (32-byte) K step ks uses chunks 2ks, 2ks+1.
 */
typedef struct mmp_k16_rc { int row, chunk; } mmp_k16_rc;

MMP_K16_HD int mmp_k16_wm_off(mmp_k16_cfg c, int warp) { return (warp / (c.bn / c.wn)) * c.wm; }
MMP_K16_HD int mmp_k16_wn_off(mmp_k16_cfg c, int warp) { return (warp % (c.bn / c.wn)) * c.wn; }
/* K steps of 32 bytes per stage (m16n8k16 16-bit, m16n8k32 8-bit): 2 for 64-byte rows. */
MMP_K16_HD int mmp_k16_ksteps(mmp_k16_cfg c) { return mmp_k16_a_row_bytes(c) / 32; }

/* A, ldmatrix.x4: fragment mi (16 rows) at K step ks; lanes 8q..8q+7 address matrix q =
 * register q: rows +8*(q&1), chunk +(q>>1). For mma_k == 8 the kernel issues .x2 per 16-byte
 * chunk kk (lanes 0-15: matrix 0 = rows 0-7, matrix 1 = rows 8-15); pass ks = kk, x2 = 1. */
MMP_K16_HD mmp_k16_rc mmp_k16_ldsm_a(mmp_k16_cfg c, int lane, int wm_off, int mi, int ks, int x2)
{
    mmp_k16_rc r = {0, 0};
    r.row = wm_off + mi * 16 + (lane & 15);
    r.chunk = x2 ? ks : ks * 2 + (lane >> 4);
    (void)c;
    return r;
}
/* B (b_kmajor), ldmatrix.x4 for the pair of n8 blocks 2j, 2j+1 at K step ks: registers 0, 1 ->
 * block 2j (k chunks 2ks, 2ks+1), registers 2, 3 -> block 2j+1. */
MMP_K16_HD mmp_k16_rc mmp_k16_ldsm_b_kmajor(mmp_k16_cfg c, int lane, int wn_off, int j, int ks)
{
    mmp_k16_rc r = {0, 0};
    r.row = wn_off + j * 16 + (lane & 7) + ((lane >> 4) << 3);
    r.chunk = ks * 2 + ((lane >> 3) & 1);
    (void)c;
    return r;
}
/* B (row-major, smem [k][n]), ldmatrix.x2.trans for n8 block nj at 16-wide K step ks (lanes
 * 0-7: k rows 0-7 -> register 0; lanes 8-15: k rows 8-15 -> register 1). For mma_k == 8:
 * .x1.trans per 8-wide K step kk (lanes 0-7); pass ks = kk, x1 = 1. */
MMP_K16_HD mmp_k16_rc mmp_k16_ldsm_b_nmajor(mmp_k16_cfg c, int lane, int wn_off, int nj, int ks, int x1)
{
    mmp_k16_rc r = {0, 0};
    r.row = x1 ? ks * 8 + (lane & 7) : ks * 16 + (lane & 15);
    r.chunk = (wn_off + nj * 8) * c.elem_bytes / 16;
    return r;
}
/* Manual packing (no ldmatrix): byte offset, inside the A stage tile, of the 32-bit word that
 * A register q of fragment (mi, ks) holds for this lane (ld.shared.b32). */
MMP_K16_HD int mmp_k16_manual_a(mmp_k16_cfg c, int lane, int wm_off, int mi, int ks, int q)
{
    int g = lane >> 2, t = lane & 3;
    int row = wm_off + mi * 16 + g + 8 * (q & 1);
    int byte = (ks * 16 + 2 * t + 8 * (q >> 1)) * c.elem_bytes;
    return mmp_k16_smem_off(c.smem_layout, mmp_k16_a_row_bytes(c), row, byte >> 4) + (byte & 15);
}
/* Manual packing of row-major B: byte offset, inside the B stage tile, of the 16-bit element
 * h (0 = low half, 1 = high half) of B register q of n8 block nj at K step ks (ld.shared.u16). */
MMP_K16_HD int mmp_k16_manual_b(mmp_k16_cfg c, int lane, int wn_off, int nj, int ks, int q, int h)
{
    int g = lane >> 2, t = lane & 3;
    int k = ks * 16 + 2 * t + h + 8 * q, n = wn_off + nj * 8 + g;
    int byte = n * c.elem_bytes;
    return mmp_k16_smem_off(c.smem_layout, mmp_k16_b_row_bytes(c), k, byte >> 4) + (byte & 15);
}

/* ---- the WMMA walk (fp16_wmma) ------------------------------------------------------------
 * v2 "shared": CTA 128 x 64, BK 64, 8 warps of 32 x 32 (2 x 2 fragments), A tile [128][64+8]
 * and B tile [64][64+8] halves, loaded with 16-byte ld.global + st.shared.
 * v3 "cp_async": CTA 128 x 64, BK 32, two stages of A [128][32+8] and B [32][64+8] halves.
 * Both: A row-major, B row-major, 16-byte chunks; thread tid copies chunk id = tid + 256 i. */
typedef struct mmp_k16_wmma_cfg {
    const char *name;
    int bm, bn, bk, stages, threads;
    int a_pitch, b_pitch;       /* halves per smem row (bk + 8, bn + 8) */
} mmp_k16_wmma_cfg;
static MMP_K16_CONST mmp_k16_wmma_cfg mmp_k16_wmma_shared = {"fp16_wmma_shared", 128, 64, 64, 1, 256, 72, 72};
static MMP_K16_CONST mmp_k16_wmma_cfg mmp_k16_wmma_cp_async = {"fp16_wmma_cp_async", 128, 64, 32, 2, 256, 40, 72};

MMP_K16_HD int mmp_k16_wmma_stage_bytes(mmp_k16_wmma_cfg c)
{
    return 2 * (c.bm * c.a_pitch + c.bk * c.b_pitch);
}
MMP_K16_HD int mmp_k16_wmma_copies_a(mmp_k16_wmma_cfg c) { return c.bm * c.bk / 8 / c.threads; }
MMP_K16_HD int mmp_k16_wmma_copies_b(mmp_k16_wmma_cfg c) { return c.bk * c.bn / 8 / c.threads; }
/* Copy i of thread tid: tile row/col (halves) and byte offset in the operand's stage tile. */
MMP_K16_HD mmp_k16_copy mmp_k16_wmma_copy_a(mmp_k16_wmma_cfg c, int tid, int i)
{
    int id = tid + i * c.threads, cpr = c.bk / 8;
    mmp_k16_copy r = {0, 0, 0};
    r.row = id / cpr;
    r.chunk = id % cpr;
    r.smem = 2 * (r.row * c.a_pitch + r.chunk * 8);
    return r;
}
MMP_K16_HD mmp_k16_copy mmp_k16_wmma_copy_b(mmp_k16_wmma_cfg c, int tid, int i)
{
    int id = tid + i * c.threads, cpr = c.bn / 8;
    mmp_k16_copy r = {0, 0, 0};
    r.row = id / cpr;
    r.chunk = id % cpr;
    r.smem = 2 * (r.row * c.b_pitch + r.chunk * 8);
    return r;
}

#endif
