/* kernels/wgmma_maps.c — memory maps (mmaprobe/memmap.h) of the wgmma family's element-load
 * kernels (kernels/sm90a/wgmma.cu versions 1, 3, 4), from kernels/wgmma_addr.h, the functions
 * the kernels call themselves. Plain C, built in every configuration.
 *
 * Per warp and K step: for each element the thread loads (A tile 64 x kt, then B tile
 * 128 x kt; kt = 128 / elem), one elem-byte ld.global (lanes whose element lies inside the
 * matrix; the others store a zero without reading) and one st.shared into the 128B-swizzled
 * tile. A at shared offset 0, B at 64 x 128 bytes (both 1024-aligned: the bank of an offset
 * is the bank of the address). The wgmma instructions then read the tiles through matrix
 * descriptors, not through the LSU: no shared-load record.
 * The TMA kernels (wgmma_bf16_tma, _tma_256) have no map: their global reads and shared
 * writes are bulk tensor copies and their shared reads are wgmma's, none of them LSU accesses.
 *
 *   size_t n; const mmp_kernel_memmap *m = mmp_memmaps_wgmma(&n);
 */
#include <string.h>

#include "wgmma_addr.h"
#include "mmaprobe/memmap.h"
#include "mmaprobe/registry.h"

static int enumerate_simple(int elem, mmp_warp_access *out, int max, const mmp_memmap_shape *s, int warp,
                            int kstep)
{
    const int kt = MMP_WG_ROW_BYTES / elem, threads = MMP_WG_SIMPLE_THREADS;
    if (!out || !s || max < 0 || warp < 0 || warp >= threads / 32 || kstep < 0) return -1;
    if ((s->elem_bits_a && s->elem_bits_a != 8 * elem) || (s->elem_bits_b && s->elem_bits_b != 8 * elem)) return -1;
    if (s->m <= 0 || s->n <= 0 || s->k <= 0 || s->lda < s->k || s->ldb < s->k) return -1;
    if ((int64_t)kstep * kt >= s->k) return 0;
    const int64_t k0 = (int64_t)kstep * kt;
    int n = 0;
    for (int op = 0; op < 2; op++) {
        const int rows = op ? MMP_WG_SIMPLE_TILE_N : MMP_WG_SIMPLE_TILE_M;
        const int64_t lim = op ? s->n : s->m, ld = op ? s->ldb : s->lda;
        const uint32_t base = op ? MMP_WG_SIMPLE_TILE_M * MMP_WG_ROW_BYTES : 0;
        for (int i = 0; i < rows * kt / threads; i++) {
            if (n + 2 > max) return -1;
            mmp_warp_access *g = &out[n++], *st = &out[n++];
            memset(g, 0, sizeof *g);
            memset(st, 0, sizeof *st);
            g->label = op ? "B ld.global (element)" : "A ld.global (element)";
            st->label = op ? "B st.shared (element, 128B swizzle)" : "A st.shared (element, 128B swizzle)";
            g->kind = MMP_ACCESS_LDG;
            st->kind = MMP_ACCESS_STS;
            g->bytes = st->bytes = elem;
            g->operand = st->operand = op;
            st->active = 0xffffffffu;
            for (int lane = 0; lane < 32; lane++) {
                mmp_wg_elem x = mmp_wg_simple_elem(elem, warp * 32 + lane + threads * i);
                st->addr[lane] = base + mmp_wg_swz128((uint32_t)x.row, (uint32_t)(x.kk * elem));
                if (x.row < lim && k0 + x.kk < s->k) {
                    g->active |= 1u << lane;
                    g->addr[lane] = (uint64_t)(((int64_t)x.row * ld + k0 + x.kk) * elem);
                }
            }
        }
    }
    return n;
}

static int enum_bf16(mmp_warp_access *o, int m, const mmp_memmap_shape *s, int w, int k)
{
    return enumerate_simple(2, o, m, s, w, k);
}
static int enum_e4m3(mmp_warp_access *o, int m, const mmp_memmap_shape *s, int w, int k)
{
    return enumerate_simple(1, o, m, s, w, k);
}

/* One stage of A + B tiles (64 + 128 rows of 128 bytes); CTAs per SM: the 24 KiB tile and 128
 * threads allow many, the ~150 registers of the 64 (+ 64 promoted) accumulators about 3. */
#define WG_SIMPLE_SMEM ((MMP_WG_SIMPLE_TILE_M + MMP_WG_SIMPLE_TILE_N) * MMP_WG_ROW_BYTES)
#define WG_MAP(name, elem, fn)                                                                              \
    {name, MMP_WG_SIMPLE_THREADS, MMP_WG_SIMPLE_THREADS / 32, MMP_WG_SIMPLE_TILE_M, MMP_WG_SIMPLE_TILE_N,   \
     MMP_WG_ROW_BYTES / (elem), 1, WG_SIMPLE_SMEM, WG_SIMPLE_SMEM, 3, fn}
static const mmp_kernel_memmap wgmma_maps[] = {
    WG_MAP("wgmma_bf16_simple", 2, enum_bf16),
    WG_MAP("wgmma_e4m3", 1, enum_e4m3),
    WG_MAP("wgmma_e4m3_promote128", 1, enum_e4m3),
};

const mmp_kernel_memmap *mmp_memmaps_wgmma(size_t *count)
{
    *count = sizeof wgmma_maps / sizeof wgmma_maps[0];
    return wgmma_maps;
}
