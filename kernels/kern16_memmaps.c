/* kernels/kern16_memmaps.c — memory maps (mmaprobe/memmap.h) of the fp16_wmma, fp16_ptx and
 * bf16_mma families, for the bank-conflict and coalescing probes.
 *
 * Plain C, built in every configuration (also without CUDA, so the probes' analysis can be
 * tested on the CPU). Every address comes from kernels/kern16_addr.h, the functions the CUDA
 * kernels call themselves. One K step = one stage's slice of K (bk elements); a warp's list:
 *   cp.async (or ld.global + st.shared) of its threads' share of the A and B tiles, then the
 *   ldmatrix (or ld.shared) of its fragments, in issue order.
 * cp.async records: addr = shared byte offset, gaddr = global byte offset from the operand's
 * base, active = lanes whose chunk lies inside the matrix (the others are zero-filled: they
 * write shared memory but read nothing). ldmatrix .x1/.x2: active = the addressing lanes.
 * The WMMA kernels' load_matrix_sync has no specified lane mapping; their maps list the
 * staging copies and the ldmatrix.x4 that CUDA 13.0 lowers each fragment load to on sm_90
 * (kernel fp16_wmma_naive, which has no staging, exposes no map).
 *
 *   size_t n; const mmp_kernel_memmap *m = mmp_memmaps_bf16_mma(&n);
 *   mmp_warp_access acc[MMP_K16_MAP_MAX];
 *   int got = m[0].enumerate(acc, MMP_K16_MAP_MAX, &shape, warp, kstep);
 */
#include <string.h>

#include "kern16_addr.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/status.h"

#define MMP_K16_MAP_MAX 96   /* most accesses one warp issues per K step (manual packing: 72) */

typedef struct list {
    mmp_warp_access *out;
    int max, n, overflow;
} list;

static mmp_warp_access *push(list *l, const char *label, mmp_access_kind kind, int bytes, int matrices,
                             uint32_t active, int operand)
{
    if (l->n >= l->max) {
        l->overflow = 1;
        return NULL;
    }
    mmp_warp_access *a = &l->out[l->n++];
    memset(a, 0, sizeof *a);
    a->label = label;
    a->kind = kind;
    a->bytes = bytes;
    a->matrices = matrices;
    a->active = active;
    a->operand = operand;
    return a;
}

static int finish(const list *l, const char *kernel)
{
    if (!l->overflow) return l->n;
    MMP_ERR(MMP_STATUS_INVALID, "%s: memory map needs more than %d access records (pass %d)", kernel, l->max,
            MMP_K16_MAP_MAX);
    return -1;
}

static int check_args(const mmp_memmap_shape *s, int warp, int warps, int kstep, int bk, const char *kernel)
{
    if (!s || s->m <= 0 || s->n <= 0 || s->k <= 0 || s->lda <= 0 || s->ldb <= 0)
        MMP_ERR(MMP_STATUS_INVALID, "%s: memory map needs a positive shape and leading dimensions", kernel);
    else if (warp < 0 || warp >= warps)
        MMP_ERR(MMP_STATUS_INVALID, "%s: warp %d out of range 0..%d", kernel, warp, warps - 1);
    else if (kstep < 0 || (long long)kstep * bk >= s->k)
        MMP_ERR(MMP_STATUS_INVALID, "%s: K step %d out of range for K = %lld", kernel, kstep, (long long)s->k);
    else
        return 0;
    return -1;
}

/* ---- mma.sync families ------------------------------------------------------------------ */
static int enumerate_mma(int id, mmp_warp_access *out, int max, const mmp_memmap_shape *s, int warp, int kstep)
{
    const mmp_k16_cfg c = mmp_k16_cfgs[id];
    if (check_args(s, warp, mmp_k16_warps(c), kstep, c.bk, c.name) < 0) return -1;
    list l = {out, max, 0, 0};
    const int stage = kstep % c.stages, sb = stage * mmp_k16_stage_bytes(c);
    const int sbb = sb + mmp_k16_a_stage_bytes(c);
    const int arb = mmp_k16_a_row_bytes(c), brb = mmp_k16_b_row_bytes(c);
    const long long k0 = (long long)kstep * c.bk;
    /* CTA tile (0, 0): the map describes the addressing pattern, the same for every tile. */
    for (int i = 0; i < mmp_k16_copies_a(c); i++) {
        mmp_warp_access *a = push(&l, "A cp.async 16B", MMP_ACCESS_CP_ASYNC, 16, 0, 0, 0);
        for (int lane = 0; a && lane < 32; lane++) {
            mmp_k16_copy cp = mmp_k16_copy_a(c, warp * 32 + lane, i);
            int valid = 0;
            long long gi = mmp_k16_gidx_a(c, cp, 0, k0, s->m, s->k, s->lda, &valid);
            a->addr[lane] = (uint64_t)(sb + cp.smem);
            a->gaddr[lane] = (uint64_t)(gi * c.elem_bytes);
            if (valid) a->active |= 1u << lane;
        }
    }
    for (int i = 0; i < mmp_k16_copies_b(c); i++) {
        mmp_warp_access *a = push(&l, "B cp.async 16B", MMP_ACCESS_CP_ASYNC, 16, 0, 0, 1);
        for (int lane = 0; a && lane < 32; lane++) {
            mmp_k16_copy cp = mmp_k16_copy_b(c, warp * 32 + lane, i);
            int valid = 0;
            long long gi = mmp_k16_gidx_b(c, cp, 0, k0, s->n, s->k, s->ldb, &valid);
            a->addr[lane] = (uint64_t)(sbb + cp.smem);
            a->gaddr[lane] = (uint64_t)(gi * c.elem_bytes);
            if (valid) a->active |= 1u << lane;
        }
    }
    const int wm = mmp_k16_wm_off(c, warp), wn = mmp_k16_wn_off(c, warp);
    const int mi_n = c.wm / 16, nj_n = c.wn / 8;
    if (c.mma_k == 8) {
        for (int kk = 0; kk < arb / 16; kk++) {
            for (int mi = 0; mi < mi_n; mi++) {
                mmp_warp_access *a = push(&l, "A ldmatrix.x2 (k8)", MMP_ACCESS_LDSM, 16, 2, 0xffffu, 0);
                for (int lane = 0; a && lane < 16; lane++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_a(c, lane, wm, mi, kk, 1);
                    a->addr[lane] = (uint64_t)(sb + mmp_k16_smem_off(c.smem_layout, arb, rc.row, rc.chunk));
                }
            }
            for (int nj = 0; nj < nj_n; nj++) {
                mmp_warp_access *a = push(&l, "B ldmatrix.x1.trans (k8)", MMP_ACCESS_LDSM_T, 16, 1, 0xffu, 1);
                for (int lane = 0; a && lane < 8; lane++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(c, lane, wn, nj, kk, 1);
                    a->addr[lane] = (uint64_t)(sbb + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk));
                }
            }
        }
        return finish(&l, c.name);
    }
    for (int ks = 0; ks < mmp_k16_ksteps(c); ks++) {
        for (int mi = 0; mi < mi_n; mi++) {
            if (c.loader == MMP_K16_MANUAL) {
                for (int q = 0; q < 4; q++) {
                    mmp_warp_access *a = push(&l, "A ld.shared.b32 (manual)", MMP_ACCESS_LDS, 4, 0, 0xffffffffu, 0);
                    for (int lane = 0; a && lane < 32; lane++)
                        a->addr[lane] = (uint64_t)(sb + mmp_k16_manual_a(c, lane, wm, mi, ks, q));
                }
            } else {
                mmp_warp_access *a = push(&l, "A ldmatrix.x4", MMP_ACCESS_LDSM, 16, 4, 0xffffffffu, 0);
                for (int lane = 0; a && lane < 32; lane++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_a(c, lane, wm, mi, ks, 0);
                    a->addr[lane] = (uint64_t)(sb + mmp_k16_smem_off(c.smem_layout, arb, rc.row, rc.chunk));
                }
            }
        }
        if (c.b_kmajor) {
            for (int j = 0; j < nj_n / 2; j++) {
                mmp_warp_access *a = push(&l, "B ldmatrix.x4", MMP_ACCESS_LDSM, 16, 4, 0xffffffffu, 1);
                for (int lane = 0; a && lane < 32; lane++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_b_kmajor(c, lane, wn, j, ks);
                    a->addr[lane] = (uint64_t)(sbb + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk));
                }
            }
            continue;
        }
        for (int nj = 0; nj < nj_n; nj++) {
            if (c.loader == MMP_K16_MANUAL) {
                for (int q = 0; q < 2; q++)
                    for (int h = 0; h < 2; h++) {
                        mmp_warp_access *a =
                            push(&l, "B ld.shared.u16 (manual)", MMP_ACCESS_LDS, 2, 0, 0xffffffffu, 1);
                        for (int lane = 0; a && lane < 32; lane++)
                            a->addr[lane] = (uint64_t)(sbb + mmp_k16_manual_b(c, lane, wn, nj, ks, q, h));
                    }
            } else {
                mmp_warp_access *a = push(&l, "B ldmatrix.x2.trans", MMP_ACCESS_LDSM_T, 16, 2, 0xffffu, 1);
                for (int lane = 0; a && lane < 16; lane++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(c, lane, wn, nj, ks, 0);
                    a->addr[lane] = (uint64_t)(sbb + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk));
                }
            }
        }
    }
    return finish(&l, c.name);
}

#define MMA_ENUM(id) \
    static int enum_##id(mmp_warp_access *o, int m, const mmp_memmap_shape *s, int w, int k) \
    { return enumerate_mma(id, o, m, s, w, k); }
MMA_ENUM(MMP_K16_FP16_PTX_MMA) MMA_ENUM(MMP_K16_FP16_PTX_K8) MMA_ENUM(MMP_K16_FP16_PTX_FP16ACC)
MMA_ENUM(MMP_K16_FP16_PTX_3STAGE) MMA_ENUM(MMP_K16_FP16_PTX_MANUAL)
MMA_ENUM(MMP_K16_BF16_PLAIN) MMA_ENUM(MMP_K16_BF16_PADDED) MMA_ENUM(MMP_K16_BF16_SWIZZLE)
MMA_ENUM(MMP_K16_BF16_PADDED_3STAGE) MMA_ENUM(MMP_K16_BF16_SWIZZLE_3STAGE) MMA_ENUM(MMP_K16_FP16_F16ACC)
MMA_ENUM(MMP_K16_FP16_F16ACC_W64) MMA_ENUM(MMP_K16_FP8) MMA_ENUM(MMP_K16_FP8_PROMOTE)
MMA_ENUM(MMP_K16_BF16_W64_4STAGE) MMA_ENUM(MMP_K16_BF16_PIPE_256) MMA_ENUM(MMP_K16_BF16_PIPE_256_BK64)
MMA_ENUM(MMP_K16_BF16_PIPE_128)

/* Table rows: the geometry fields come from the same configuration rows as the kernels. */
#define MMA_MAP(id, name, bm, bn, bk, stages, warps, stage_bytes, ctas)                              \
    {name, 32 * (warps), warps, bm, bn, bk, stages, stage_bytes, (long long)(stages) * (stage_bytes), ctas, \
     enum_##id}
#define MMA_MAP_ROW(id, name, bm, bn, bk, wm, wn, st, eb, pad, kmaj, ctas)                             \
    MMA_MAP(id, name, bm, bn, bk, st, ((bm) / (wm)) * ((bn) / (wn)),                                   \
            (bm) * ((bk) * (eb) + (pad)) +                                                             \
                ((kmaj) ? (bn) * ((bk) * (eb) + (pad)) : (bk) * ((bn) * (eb) + (pad))),             \
            ctas)

/* Geometry duplicated from mmp_k16_cfgs[] as constant expressions (C needs them for static
 * initialisers); suites/check_kern16_maps.c checks every field against the functions. */
static const mmp_kernel_memmap fp16_ptx_maps[] = {
    MMA_MAP_ROW(MMP_K16_FP16_PTX_MMA, "fp16_ptx_mma", 128, 128, 32, 64, 32, 2, 2, 16, 0, 2),
    MMA_MAP_ROW(MMP_K16_FP16_PTX_K8, "fp16_ptx_k8", 128, 128, 32, 64, 32, 2, 2, 16, 0, 2),
    MMA_MAP_ROW(MMP_K16_FP16_PTX_FP16ACC, "fp16_ptx_fp16acc", 128, 128, 32, 64, 32, 2, 2, 16, 0, 2),
    MMA_MAP_ROW(MMP_K16_FP16_PTX_3STAGE, "fp16_ptx_3stage", 128, 128, 32, 64, 32, 3, 2, 16, 0, 2),
    MMA_MAP_ROW(MMP_K16_FP16_PTX_MANUAL, "fp16_ptx_manual_pack", 128, 128, 32, 64, 32, 2, 2, 16, 0, 2),
};
static const mmp_kernel_memmap bf16_mma_maps[] = {
    MMA_MAP_ROW(MMP_K16_BF16_PLAIN, "bf16_mma_plain", 128, 128, 32, 64, 32, 2, 2, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_BF16_PADDED, "bf16_mma_padded", 128, 128, 32, 64, 32, 2, 2, 16, 1, 2),
    MMA_MAP_ROW(MMP_K16_BF16_SWIZZLE, "bf16_mma_swizzle", 128, 128, 32, 64, 32, 2, 2, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_BF16_PADDED_3STAGE, "bf16_mma_padded_3stage", 128, 128, 32, 64, 32, 3, 2, 16, 1, 2),
    MMA_MAP_ROW(MMP_K16_BF16_SWIZZLE_3STAGE, "bf16_mma_swizzle_3stage", 128, 128, 32, 64, 32, 3, 2, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_BF16_W64_4STAGE, "bf16_mma_w64_4stage", 128, 256, 32, 64, 64, 4, 2, 0, 1, 1),
    MMA_MAP_ROW(MMP_K16_FP16_F16ACC, "fp16_mma_f16acc", 128, 128, 32, 64, 32, 3, 2, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_FP16_F16ACC_W64, "fp16_mma_f16acc_w64", 128, 128, 32, 64, 64, 3, 2, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_FP8, "fp8_mma", 128, 128, 64, 64, 32, 3, 1, 0, 1, 2),
    MMA_MAP_ROW(MMP_K16_FP8_PROMOTE, "fp8_mma_promote64", 128, 128, 64, 64, 32, 3, 1, 0, 1, 1),
    MMA_MAP_ROW(MMP_K16_BF16_PIPE_256, "bf16_mma_pipe_256", 128, 256, 32, 64, 64, 4, 2, 0, 1, 1),
    MMA_MAP_ROW(MMP_K16_BF16_PIPE_256_BK64, "bf16_mma_pipe_256_bk64", 128, 256, 64, 64, 64, 3, 2, 0, 1, 1),
    MMA_MAP_ROW(MMP_K16_BF16_PIPE_128, "bf16_mma_pipe_128", 128, 128, 32, 64, 64, 4, 2, 0, 1, 2),
};

/* ---- WMMA walk: the staging copies --------------------------------------------------------- */
static int enumerate_wmma(mmp_k16_wmma_cfg c, int cp_async, mmp_warp_access *out, int max,
                          const mmp_memmap_shape *s, int warp, int kstep)
{
    if (check_args(s, warp, c.threads / 32, kstep, c.bk, c.name) < 0) return -1;
    list l = {out, max, 0, 0};
    const int sb = (kstep % c.stages) * mmp_k16_wmma_stage_bytes(c), sbb = sb + 2 * c.bm * c.a_pitch;
    const long long k0 = (long long)kstep * c.bk;
    for (int op = 0; op < 2; op++) {
        int n = op ? mmp_k16_wmma_copies_b(c) : mmp_k16_wmma_copies_a(c);
        for (int i = 0; i < n; i++) {
            mmp_warp_access *g = NULL, *a;
            if (cp_async) {
                a = push(&l, op ? "B cp.async 16B" : "A cp.async 16B", MMP_ACCESS_CP_ASYNC, 16, 0, 0xffffffffu, op);
            } else {
                g = push(&l, op ? "B ld.global 16B" : "A ld.global 16B", MMP_ACCESS_LDG, 16, 0, 0xffffffffu, op);
                a = push(&l, op ? "B st.shared 16B" : "A st.shared 16B", MMP_ACCESS_STS, 16, 0, 0xffffffffu, op);
            }
            for (int lane = 0; a && lane < 32; lane++) {
                int tid = warp * 32 + lane;
                mmp_k16_copy cp = op ? mmp_k16_wmma_copy_b(c, tid, i) : mmp_k16_wmma_copy_a(c, tid, i);
                long long gi = op ? (k0 + cp.row) * s->ldb + cp.chunk * 8 : cp.row * s->lda + k0 + cp.chunk * 8;
                a->addr[lane] = (uint64_t)((op ? sbb : sb) + cp.smem);
                if (cp_async) a->gaddr[lane] = (uint64_t)(2 * gi);
                else if (g) g->addr[lane] = (uint64_t)(2 * gi);
            }
        }
    }
    /* Fragment loads. load_matrix_sync has no specified lane mapping; CUDA 13.0 lowers it for
     * sm_90 to one LDSM.16.M88.4 per A fragment (row-major) and one LDSM.16.MT88.4 per B
     * fragment (row-major K x N, read transposed) (cuobjdump of the H200 build,
     * results/h200/README.md). Lane l addresses row l % 16 at column 8 (l / 16) of the 16 x 16
     * fragment; the conflict model needs only that each 8-lane phase reads 8 consecutive rows
     * at one column. A compiler that lowers it otherwise shows as a measured DISAGREE.
     * Warp w owns rows 32 (w / 2) and columns 32 (w % 2) of the CTA tile (fp16_wmma.cu). */
    const int wm = 32 * (warp / 2), wn = 32 * (warp % 2);
    for (int kk = 0; kk < c.bk; kk += 16) {
        for (int i = 0; i < 2; i++) {
            mmp_warp_access *a = push(&l, "A wmma load (ldmatrix.x4)", MMP_ACCESS_LDSM, 16, 4, 0xffffffffu, 0);
            for (int lane = 0; a && lane < 32; lane++)
                a->addr[lane] = (uint64_t)(sb + 2 * ((wm + i * 16 + lane % 16) * c.a_pitch + kk + 8 * (lane / 16)));
        }
        for (int j = 0; j < 2; j++) {
            mmp_warp_access *a = push(&l, "B wmma load (ldmatrix.x4.trans)", MMP_ACCESS_LDSM_T, 16, 4, 0xffffffffu, 1);
            for (int lane = 0; a && lane < 32; lane++)
                a->addr[lane] = (uint64_t)(sbb + 2 * ((kk + lane % 16) * c.b_pitch + wn + j * 16 + 8 * (lane / 16)));
        }
    }
    return finish(&l, c.name);
}
static int enum_wmma_shared(mmp_warp_access *o, int m, const mmp_memmap_shape *s, int w, int k)
{
    return enumerate_wmma(mmp_k16_wmma_shared, 0, o, m, s, w, k);
}
static int enum_wmma_cp_async(mmp_warp_access *o, int m, const mmp_memmap_shape *s, int w, int k)
{
    return enumerate_wmma(mmp_k16_wmma_cp_async, 1, o, m, s, w, k);
}
static const mmp_kernel_memmap fp16_wmma_maps[] = {
    {"fp16_wmma_shared", 256, 8, 128, 64, 64, 1, 2 * (128 * 72 + 64 * 72), 2 * (128 * 72 + 64 * 72), 2,
     enum_wmma_shared},
    {"fp16_wmma_cp_async", 256, 8, 128, 64, 32, 2, 2 * (128 * 40 + 32 * 72), 4 * (128 * 40 + 32 * 72), 3,
     enum_wmma_cp_async},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
const mmp_kernel_memmap *mmp_memmaps_fp16_wmma(size_t *count)
{
    *count = COUNT(fp16_wmma_maps);
    return fp16_wmma_maps;
}
const mmp_kernel_memmap *mmp_memmaps_fp16_ptx(size_t *count)
{
    *count = COUNT(fp16_ptx_maps);
    return fp16_ptx_maps;
}
const mmp_kernel_memmap *mmp_memmaps_bf16_mma(size_t *count)
{
    *count = COUNT(bf16_mma_maps);
    return bf16_mma_maps;
}
