/* kernels/int_ptx_maps.c — memory maps (memmap.h) of the int8_ptx and int4_ptx mma.sync kernels.
 *
 * Every address comes from kernels/int_ptx_addr.h, the helpers the kernels themselves call, so a map
 * and its kernel cannot drift apart. Host C: the maps exist in host-only builds too (the bank and
 * coalescing analyses run in CI without a GPU). The WMMA and dp4a kernels have no map: WMMA's
 * fragment loads are chosen by the compiler, and dp4a is the naive no-shared-memory baseline.
 *
 * Usage:
 *   size_t n; const mmp_kernel_memmap *m = mmp_memmaps_int4_ptx(&n);
 *   mmp_warp_access acc[64]; mmp_memmap_shape s = {4096, 4096, 4096, 4096, 4096, 4, 4};
 *   int count = m[0].enumerate(acc, 64, &s, warp, kstep);
 *
 * One K step of one warp (CTA (0,0); warp w has rows 16*(w/4).., columns 16*(w%4)..) lists, in
 * issue order: the copies that fill the step's stage (cp.async 16 B for A and B, or for the
 * transposed-B loader 1-byte ld.global pairs + st.shared.b16), then the fragment reads of that stage
 * (ldmatrix, ldmatrix.trans or ld.shared.b32). Returns the count, 0 when the warp's tile or the K
 * step lies outside the shape, -1 when out is too small or the shape is invalid.
 */
#include <stddef.h>
#include <string.h>

#include "int_ptx_addr.h"
#include "mmaprobe/memmap.h"
#include "mmaprobe/registry.h"

/* CTAs per SM the design expects on sm_90: 2048 threads and 227 KiB of shared memory per SM;
 * registers are not modelled (ptxas -v: 30-80 per thread, see the kernels' table). */
enum { SM90_THREADS = 2048, SM90_SMEM = 227 * 1024 };

static int push(mmp_warp_access *out, int max, int *n, const char *label, mmp_access_kind kind, int bytes,
                int matrices, int operand)
{
    if (*n >= max) return 0;
    mmp_warp_access *a = &out[*n];
    memset(a, 0, sizeof *a);
    a->label = label;
    a->kind = kind;
    a->bytes = bytes;
    a->matrices = matrices;
    a->operand = operand;
    (*n)++;
    return 1;
}

static int enumerate_cfg(mmp_intk_cfg c, mmp_warp_access *out, int max, const mmp_memmap_shape *s,
                         int warp, int kstep)
{
    if (!out || !s || max < 0 || warp < 0 || warp >= MMP_INTK_WARPS || kstep < 0) return -1;
    if ((s->elem_bits_a && s->elem_bits_a != c.bits) || (s->elem_bits_b && s->elem_bits_b != c.bits)) return -1;
    if (s->lda * c.bits % 8 || s->ldb * c.bits % 8 || s->lda < s->k || s->ldb < s->k) return -1;
    const int m0 = mmp_intk_warp_m0(0, warp), n0 = mmp_intk_warp_n0(0, warp);
    const int64_t ksteps = s->k * c.bits / 8 / c.bkb;
    if (m0 >= s->m || n0 >= s->n || kstep >= ksteps) return 0;
    const int64_t lda_b = s->lda * c.bits / 8, ldb_b = s->ldb * c.bits / 8, kb0 = (int64_t)kstep * c.bkb;
    const int st = kstep % c.stages;
    int n = 0;

    /* copies into the stage */
    for (int it = 0; it < mmp_intk_copy_iters(c); it++)
        for (int op = 0; op < (c.b_trans ? 1 : 2); op++) {
            if (!push(out, max, &n, op ? (c.cg ? "B cp.async.cg 16B" : "B cp.async.ca 16B")
                                       : (c.cg ? "A cp.async.cg 16B" : "A cp.async.ca 16B"),
                      MMP_ACCESS_CP_ASYNC, 16, 0, op))
                return -1;
            mmp_warp_access *a = &out[n - 1];
            for (int lane = 0; lane < 32; lane++) {
                int row, kb;
                if (!mmp_intk_copy_chunk(c, it, lane, &row, &kb)) continue;
                a->active |= 1u << lane;
                a->addr[lane] = op ? mmp_intk_smem_b(c, st, warp, row, kb) : mmp_intk_smem_a(c, st, warp, row, kb);
                a->gaddr[lane] = (uint64_t)mmp_intk_gaddr(op ? ldb_b : lda_b, op ? n0 : m0, kb0, row, kb);
            }
        }
    if (c.b_trans)
        for (int it = 0; it < mmp_intk_bt_iters(c); it++) {
            static const char *const labels[3] = {"B ld.global.u8 (low byte)", "B ld.global.u8 (high byte)",
                                                  "B st.shared.b16 transposed"};
            for (int part = 0; part < 3; part++) {
                if (!push(out, max, &n, labels[part], part < 2 ? MMP_ACCESS_LDG : MMP_ACCESS_STS,
                          part < 2 ? 1 : 2, 0, 1))
                    return -1;
                mmp_warp_access *a = &out[n - 1];
                a->active = 0xffffffffu;
                for (int lane = 0; lane < 32; lane++) {
                    int kb16, col;
                    mmp_intk_bt_elem(it, lane, &kb16, &col);
                    a->addr[lane] = part < 2 ? (uint64_t)mmp_intk_gaddr(ldb_b, n0, kb0, col, 2 * kb16) + part
                                             : mmp_intk_smem_bt(c, st, warp, kb16, col);
                }
            }
        }

    /* fragment reads of the stage */
    if (c.a_ldsm)
        for (int p = 0; p < mmp_intk_a_calls(c); p++) {
            if (!push(out, max, &n, c.a_ldsm == 4 ? "A ldmatrix.x4" : c.a_ldsm == 2 ? "A ldmatrix.x2" : "A ldmatrix.x1",
                      MMP_ACCESS_LDSM, 16, c.a_ldsm, 0))
                return -1;
            mmp_warp_access *a = &out[n - 1];
            for (int lane = 0; lane < 8 * c.a_ldsm; lane++) {
                a->active |= 1u << lane;
                a->addr[lane] = mmp_intk_ldsm_a_addr(c, st, warp, p, lane);
            }
        }
    else
        for (int q = 0; q < mmp_intk_a_regs(c); q++) {
            if (!push(out, max, &n, "A ld.shared.b32 gather", MMP_ACCESS_LDS, 4, 0, 0)) return -1;
            mmp_warp_access *a = &out[n - 1];
            a->active = 0xffffffffu;
            for (int lane = 0; lane < 32; lane++) a->addr[lane] = mmp_intk_lds_a_addr(c, st, warp, q, lane);
        }
    if (c.b_ldsm)
        for (int p = 0; p < mmp_intk_b_calls(c); p++) {
            const char *label = c.b_trans ? (c.b_ldsm == 2 ? "B ldmatrix.x2.trans" : "B ldmatrix.x1.trans")
                                          : (c.b_ldsm == 2 ? "B ldmatrix.x2" : "B ldmatrix.x1");
            if (!push(out, max, &n, label, c.b_trans ? MMP_ACCESS_LDSM_T : MMP_ACCESS_LDSM, 16, c.b_ldsm, 1))
                return -1;
            mmp_warp_access *a = &out[n - 1];
            for (int lane = 0; lane < 8 * c.b_ldsm; lane++) {
                a->active |= 1u << lane;
                a->addr[lane] = mmp_intk_ldsm_b_addr(c, st, warp, p, lane);
            }
        }
    else
        for (int j = 0; j < 2 * mmp_intk_b_regs(c); j++) {
            if (!push(out, max, &n, "B ld.shared.b32 gather", MMP_ACCESS_LDS, 4, 0, 1)) return -1;
            mmp_warp_access *a = &out[n - 1];
            a->active = 0xffffffffu;
            for (int lane = 0; lane < 32; lane++)
                a->addr[lane] = mmp_intk_lds_b_addr(c, st, warp, j / mmp_intk_b_regs(c), j % mmp_intk_b_regs(c), lane);
        }
    return n;
}

#define MAP_ENUM(name, bits, bkb, s, ald, bld, bt, cg, text)                                            \
    static int enum_##name(mmp_warp_access *out, int max, const mmp_memmap_shape *shape, int warp, int kstep) \
    {                                                                                                  \
        const mmp_intk_cfg c = {bits, bkb, s, ald, bld, bt, cg};                                       \
        return enumerate_cfg(c, out, max, shape, warp, kstep);                                         \
    }
MMP_INT8_PTX_ROWS(MAP_ENUM)
MMP_INT4_PTX_ROWS(MAP_ENUM)

#define SMEM_TOTAL(bits, bkb, s, ald, bld, bt, cg) \
    (int64_t)(s) * MMP_INTK_WARPS * (16 * ((bkb) + ((bkb) == 32 ? MMP_INTK_PAD : 0)) + \
                                     ((bt) ? ((bkb) / 2) * MMP_INTK_BT_ROW : 16 * ((bkb) + ((bkb) == 32 ? MMP_INTK_PAD : 0))))
#define MAP_ROW(name, bits, bkb, s, ald, bld, bt, cg, text)                                             \
    {#name, MMP_INTK_THREADS, MMP_INTK_WARPS, MMP_INTK_TILE_M, MMP_INTK_TILE_N, (bkb) * 8 / (bits), (s), \
     SMEM_TOTAL(bits, bkb, s, ald, bld, bt, cg) / (s), SMEM_TOTAL(bits, bkb, s, ald, bld, bt, cg),      \
     (SM90_SMEM / SMEM_TOTAL(bits, bkb, s, ald, bld, bt, cg)) < SM90_THREADS / MMP_INTK_THREADS         \
         ? (int32_t)(SM90_SMEM / SMEM_TOTAL(bits, bkb, s, ald, bld, bt, cg))                           \
         : SM90_THREADS / MMP_INTK_THREADS,                                                            \
     enum_##name},
static const mmp_kernel_memmap int8_maps[] = {MMP_INT8_PTX_ROWS(MAP_ROW)};
static const mmp_kernel_memmap int4_maps[] = {MMP_INT4_PTX_ROWS(MAP_ROW)};

const mmp_kernel_memmap *mmp_memmaps_int8_ptx(size_t *count)
{
    *count = sizeof int8_maps / sizeof int8_maps[0];
    return int8_maps;
}

const mmp_kernel_memmap *mmp_memmaps_int4_ptx(size_t *count)
{
    *count = sizeof int4_maps / sizeof int4_maps[0];
    return int4_maps;
}
