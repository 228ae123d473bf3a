/* suites/check_kernint_maps.c — host checks of the int8_ptx / int4_ptx address functions and maps.
 *
 * The kernels, their memory maps and these tests share kernels/int_ptx_addr.h. Per kernel row:
 *  - shared memory: every (stage, warp, operand, row, K byte) has its own byte inside the kernel's
 *    allocation (a bijection onto the tiles, no overlap), the cp.async chunks of one stage cover the
 *    warp's tile exactly once, and cp.async / ldmatrix addresses are 16-byte aligned;
 *  - global memory: in one K step each byte of the warp's A and B tiles is loaded exactly once, and
 *    nothing outside them;
 *  - fragments: the map's copies and fragment reads are emulated (cp.async, ld.global + st.shared,
 *    ldmatrix[.trans] and ld.shared per the PTX ISA), the registers are decoded with the ISA's
 *    "Matrix Fragments for mma.m16n8k16/k32/k64" formulas (written here independently of the
 *    kernel's helpers), the m16n8 products are computed from them and compared with a plain loop
 *    over the global matrices; a deliberately wrong register order must fail the same check;
 *  - sector efficiency: the transposed-B loader uses 2 of every 32 bytes it fetches,
 *    the non-transposed k64 loaders all 32, the K-step-16 loaders 16.
 * Run: ctest -R check_kernint_maps (seeded: MMP_SEED=<n>).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/int_ptx_addr.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/memmap.h"
#include "mmaprobe/registry.h"
#include "tests/check_main.h"

typedef struct row {
    const char *name;
    mmp_intk_cfg c;
} row;
#define ROW(name, bits, bkb, s, ald, bld, bt, cg, text) {#name, {bits, bkb, s, ald, bld, bt, cg}},
static const row rows[] = {MMP_INT8_PTX_ROWS(ROW) MMP_INT4_PTX_ROWS(ROW)};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static const mmp_kernel_memmap *find_map(const char *name)
{
    size_t n8, n4;
    const mmp_kernel_memmap *m8 = mmp_memmaps_int8_ptx(&n8), *m4 = mmp_memmaps_int4_ptx(&n4);
    for (size_t i = 0; i < n8; i++) if (!strcmp(m8[i].kernel, name)) return &m8[i];
    for (size_t i = 0; i < n4; i++) if (!strcmp(m4[i].kernel, name)) return &m4[i];
    return NULL;
}

/* A problem of 2 CTA tiles each way and 3 K steps, with padded leading dimensions (in elements). */
static mmp_memmap_shape shape_for(mmp_intk_cfg c, int64_t pad_bytes)
{
    int64_t kel = 3 * (int64_t)c.bkb * 8 / c.bits;
    int64_t ld = kel + pad_bytes * 8 / c.bits;
    mmp_memmap_shape s = {2 * MMP_INTK_TILE_M, 2 * MMP_INTK_TILE_N, kel, ld, ld, c.bits, c.bits};
    return s;
}

/* ---- shared memory: bijection, chunk coverage, alignment ---- */
START_TEST(test_smem_bijection)
{
    const row *r = &rows[_i];
    mmp_intk_cfg c = r->c;
    const mmp_kernel_memmap *map = find_map(r->name);
    ck_assert_msg(map != NULL, "%s: no memory map", r->name);
    ck_assert_int_eq(map->smem_bytes_total, mmp_intk_smem_total(c));
    ck_assert_int_eq(map->smem_bytes_per_stage, mmp_intk_stage_bytes(c));
    ck_assert_int_eq(map->stages, c.stages);
    ck_assert_int_eq(map->tile_k, c.bkb * 8 / c.bits);
    int total = mmp_intk_smem_total(c), used = 0;
    unsigned char *mark = calloc((size_t)total, 1);
    for (int st = 0; st < c.stages; st++)
        for (int w = 0; w < MMP_INTK_WARPS; w++) {
            for (int i = 0; i < 16; i++)
                for (int kb = 0; kb < c.bkb; kb++) {
                    uint32_t oa = mmp_intk_smem_a(c, st, w, i, kb);
                    uint32_t ob = c.b_trans ? mmp_intk_smem_bt(c, st, w, kb / 2, i) + kb % 2
                                            : mmp_intk_smem_b(c, st, w, i, kb);
                    ck_assert_msg(oa < (uint32_t)total && ob < (uint32_t)total, "%s: offset past smem", r->name);
                    ck_assert_msg(!mark[oa] && !mark[ob], "%s: overlap at st %d warp %d", r->name, st, w);
                    mark[oa] = mark[ob] = 1;
                    used += 2;
                }
            /* the cp.async chunks of this stage cover each tile byte once */
            int cover[2][16][32];
            memset(cover, 0, sizeof cover);
            for (int it = 0; it < mmp_intk_copy_iters(c); it++)
                for (int lane = 0; lane < 32; lane++) {
                    int i, kb;
                    if (!mmp_intk_copy_chunk(c, it, lane, &i, &kb)) continue;
                    ck_assert(i >= 0 && i < 16 && kb >= 0 && kb + 16 <= c.bkb);
                    ck_assert_int_eq(mmp_intk_smem_a(c, st, w, i, kb) % 16, 0);
                    for (int b = 0; b < 16; b++) cover[0][i][kb + b]++;
                    if (!c.b_trans) {
                        ck_assert_int_eq(mmp_intk_smem_b(c, st, w, i, kb) % 16, 0);
                        for (int b = 0; b < 16; b++) cover[1][i][kb + b]++;
                    }
                }
            if (c.b_trans)
                for (int it = 0; it < mmp_intk_bt_iters(c); it++)
                    for (int lane = 0; lane < 32; lane++) {
                        int kb16, n;
                        mmp_intk_bt_elem(it, lane, &kb16, &n);
                        cover[1][n][2 * kb16]++;
                        cover[1][n][2 * kb16 + 1]++;
                    }
            for (int op = 0; op < 2; op++)
                for (int i = 0; i < 16; i++)
                    for (int kb = 0; kb < c.bkb; kb++)
                        ck_assert_msg(cover[op][i][kb] == 1, "%s: %c tile byte (%d,%d) copied %d times", r->name,
                                      op ? 'B' : 'A', i, kb, cover[op][i][kb]);
        }
    ck_assert_int_eq(used, c.stages * MMP_INTK_WARPS * 2 * 16 * c.bkb);
    free(mark);
}
END_TEST

/* ---- global memory: each tile byte loaded once per K step ---- */
START_TEST(test_global_once)
{
    const row *r = &rows[_i];
    mmp_intk_cfg c = r->c;
    const mmp_kernel_memmap *map = find_map(r->name);
    mmp_memmap_shape s = shape_for(c, 32);
    int64_t ldb = s.lda * c.bits / 8;
    mmp_warp_access acc[64];
    for (int w = 0; w < MMP_INTK_WARPS; w++)
        for (int k = 0; k < 3; k++) {
            int n = map->enumerate(acc, 64, &s, w, k);
            ck_assert_msg(n > 0, "%s: enumerate gave %d", r->name, n);
            int cnt[2][16][32];
            memset(cnt, 0, sizeof cnt);
            int64_t base[2] = {mmp_intk_warp_m0(0, w), mmp_intk_warp_n0(0, w)};
            for (int a = 0; a < n; a++) {
                int isg = acc[a].kind == MMP_ACCESS_CP_ASYNC || acc[a].kind == MMP_ACCESS_LDG;
                if (!isg) continue;
                for (int lane = 0; lane < 32; lane++) {
                    if (!(acc[a].active >> lane & 1)) continue;
                    uint64_t g = acc[a].kind == MMP_ACCESS_CP_ASYNC ? acc[a].gaddr[lane] : acc[a].addr[lane];
                    for (int b = 0; b < acc[a].bytes; b++) {
                        int64_t off = (int64_t)g + b, i = off / ldb - base[acc[a].operand];
                        int64_t kb = off % ldb - (int64_t)k * c.bkb;
                        ck_assert_msg(i >= 0 && i < 16 && kb >= 0 && kb < c.bkb, "%s: load outside the tile",
                                      r->name);
                        cnt[acc[a].operand][i][kb]++;
                    }
                }
            }
            for (int op = 0; op < 2; op++)
                for (int i = 0; i < 16; i++)
                    for (int kb = 0; kb < c.bkb; kb++)
                        ck_assert_msg(cnt[op][i][kb] == 1, "%s: warp %d step %d %c byte (%d,%d) loaded %d times",
                                      r->name, w, k, op ? 'B' : 'A', i, kb, cnt[op][i][kb]);
        }
    ck_assert_int_eq(map->enumerate(acc, 64, &s, 0, 3), 0);      /* past K */
    ck_assert_int_eq(map->enumerate(acc, 1, &s, 0, 0), -1);      /* out too small */
    ck_assert_int_eq(map->enumerate(acc, 64, &s, 8, 0), -1);     /* no warp 8 */
}
END_TEST

/* ---- fragments: emulate the map, decode with the PTX ISA, compare the m16n8 products ---- */
static int elem(const uint8_t *buf, int64_t ld_b, int64_t i, int64_t k, int bits)
{
    if (bits == 8) return (int8_t)buf[i * ld_b + k];
    int v = (buf[i * ld_b + k / 2] >> (4 * (k % 2))) & 15;
    return v >= 8 ? v - 16 : v;
}
static int reg_elem(uint32_t reg, int idx, int bits)    /* element idx of a .b32 register, low first */
{
    if (bits == 8) return (int8_t)(reg >> (8 * idx));
    int v = (reg >> (4 * idx)) & 15;
    return v >= 8 ? v - 16 : v;
}

/* PTX ISA fragment formulas: element i of lane's A (16 x kel) / B (kel x 8) fragment. */
static void isa_a(int bits, int bkb, int lane, int i, int *rr, int *cc)
{
    int g = lane >> 2, t = lane % 4;
    if (bits == 8 && bkb == 32) {          /* m16n8k32 .s8 */
        *rr = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *cc = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
    } else if (bits == 8) {                /* m16n8k16 .s8 */
        *rr = i < 4 ? g : g + 8;
        *cc = t * 4 + (i & 3);
    } else if (bkb == 32) {                /* m16n8k64 .s4 */
        *rr = (i < 8 || (i >= 16 && i < 24)) ? g : g + 8;
        *cc = t * 8 + (i & 7) + (i >= 16 ? 32 : 0);
    } else {                               /* m16n8k32 .s4 */
        *rr = i < 8 ? g : g + 8;
        *cc = t * 8 + (i & 7);
    }
}
static void isa_b(int bits, int bkb, int lane, int i, int *rr, int *cc)
{
    int g = lane >> 2, t = lane % 4;
    if (bits == 8) *rr = t * 4 + (i & 3) + (bkb == 32 && i >= 4 ? 16 : 0);
    else *rr = t * 8 + (i & 7) + (bkb == 32 && i >= 8 ? 32 : 0);
    *cc = g;
}

/* Emulate one warp's K step from its map: fills regs a[lane][q], b[lane][j]. */
static void emulate(mmp_intk_cfg c, const mmp_warp_access *acc, int n, const uint8_t *ga, const uint8_t *gb,
                    uint8_t *smem, uint32_t a[32][4], uint32_t b[32][4])
{
    int na = 0, nb = 0;
    const uint64_t total = (uint64_t)mmp_intk_smem_total(c);
    for (int x = 0; x < n; x++) {
        const mmp_warp_access *p = &acc[x];
        const uint64_t size = p->kind == MMP_ACCESS_STS ? 2 : p->kind == MMP_ACCESS_LDS ? 4 : 16;
        for (int l = 0; l < 32; l++)   /* every shared access (ldmatrix rows: 16 B) inside the allocation */
            ck_assert_msg(p->kind == MMP_ACCESS_LDG || !(p->active >> l & 1) || p->addr[l] + size <= total,
                          "shared address past the allocation");
        if (p->kind == MMP_ACCESS_CP_ASYNC) {
            for (int l = 0; l < 32; l++)
                if (p->active >> l & 1) memcpy(smem + p->addr[l], (p->operand ? gb : ga) + p->gaddr[l], 16);
        } else if (p->kind == MMP_ACCESS_LDG) {
            ck_assert(x + 2 < n && p[1].kind == MMP_ACCESS_LDG && p[2].kind == MMP_ACCESS_STS);
            for (int l = 0; l < 32; l++) {
                smem[p[2].addr[l]] = gb[p[0].addr[l]];
                smem[p[2].addr[l] + 1] = gb[p[1].addr[l]];
            }
            x += 2;
        } else if (p->kind == MMP_ACCESS_LDSM || p->kind == MMP_ACCESS_LDSM_T) {
            for (int m = 0; m < p->matrices; m++)
                for (int l = 0; l < 32; l++) {
                    const uint64_t *ra = &p->addr[8 * m];
                    uint32_t v;
                    if (p->kind == MMP_ACCESS_LDSM) {
                        memcpy(&v, smem + ra[l / 4] + 4 * (l % 4), 4);
                    } else {   /* .trans: b16 (row 2(l%4), col l/4) and (row 2(l%4)+1, col l/4) */
                        uint16_t lo, hi;
                        memcpy(&lo, smem + ra[2 * (l % 4)] + 2 * (l / 4), 2);
                        memcpy(&hi, smem + ra[2 * (l % 4) + 1] + 2 * (l / 4), 2);
                        v = lo | (uint32_t)hi << 16;
                    }
                    if (p->operand == 0) a[l][na + m] = v;
                    else b[l][nb + m] = v;
                }
            if (p->operand == 0) na += p->matrices;
            else nb += p->matrices;
        } else if (p->kind == MMP_ACCESS_LDS) {
            for (int l = 0; l < 32; l++) memcpy(p->operand ? &b[l][nb] : &a[l][na], smem + p->addr[l], 4);
            if (p->operand == 0) na++;
            else nb++;
        }
    }
    ck_assert_int_eq(na, mmp_intk_a_regs(c));
    ck_assert_int_eq(nb, 2 * mmp_intk_b_regs(c));
}

/* Returns the number of D elements of the warp tile that differ from the plain loop. */
static int check_warp_step(mmp_intk_cfg c, const mmp_kernel_memmap *map, const mmp_memmap_shape *s,
                           const uint8_t *ga, const uint8_t *gb, int w, int k, int swap_a12)
{
    mmp_warp_access acc[64];
    int n = map->enumerate(acc, 64, s, w, k);
    ck_assert(n > 0);
    uint8_t *smem = malloc((size_t)mmp_intk_smem_total(c));
    memset(smem, 0xee, (size_t)mmp_intk_smem_total(c));
    uint32_t a[32][4], b[32][4];
    emulate(c, acc, n, ga, gb, smem, a, b);
    free(smem);
    if (swap_a12)
        for (int l = 0; l < 32; l++) { uint32_t t = a[l][0]; a[l][0] = a[l][1]; a[l][1] = t; }
    const int kel = c.bkb * 8 / c.bits, epr = 32 / c.bits;    /* elements per step, per register */
    const int nb = mmp_intk_b_regs(c);
    int at[16][64], bt[2][64][8], seen_a[16][64] = {{0}}, seen_b[2][64][8] = {{{0}}};
    for (int l = 0; l < 32; l++) {
        for (int i = 0; i < mmp_intk_a_regs(c) * epr; i++) {
            int rr, cc;
            isa_a(c.bits, c.bkb, l, i, &rr, &cc);
            at[rr][cc] = reg_elem(a[l][i / epr], i % epr, c.bits);
            seen_a[rr][cc]++;
        }
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < nb * epr; i++) {
                int rr, cc;
                isa_b(c.bits, c.bkb, l, i, &rr, &cc);
                bt[h][rr][cc] = reg_elem(b[l][h * nb + i / epr], i % epr, c.bits);
                seen_b[h][rr][cc]++;
            }
    }
    for (int i = 0; i < 16; i++)
        for (int kk = 0; kk < kel; kk++) ck_assert_int_eq(seen_a[i][kk], 1);
    const int64_t lda_b = s->lda * c.bits / 8, ldb_b = s->ldb * c.bits / 8;
    const int m0 = mmp_intk_warp_m0(0, w), n0 = mmp_intk_warp_n0(0, w);
    int bad = 0;
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++)
            for (int e = 0; e < 4; e++) {
                /* ISA accumulator layout: c0,c1 row g, c2,c3 row g+8; col 2t + (e&1) */
                int g = l >> 2, t = l % 4, rr = g + (e >= 2 ? 8 : 0), cc = 2 * t + (e & 1), hr, hc;
                mmp_intk_d_elem(h, e, l, &hr, &hc);
                ck_assert(hr == rr && hc == h * 8 + cc);
                int64_t frag = 0, plain = 0;
                for (int kk = 0; kk < kel; kk++) {
                    ck_assert_int_eq(seen_b[h][kk][cc], 1);
                    frag += (int64_t)at[rr][kk] * bt[h][kk][cc];
                    int64_t kg = (int64_t)k * kel + kk;
                    plain += (int64_t)elem(ga, lda_b, m0 + rr, kg, c.bits) *
                             elem(gb, ldb_b, n0 + h * 8 + cc, kg, c.bits);
                }
                bad += frag != plain;
            }
    return bad;
}

START_TEST(test_fragments)
{
    const row *r = &rows[_i];
    mmp_intk_cfg c = r->c;
    const mmp_kernel_memmap *map = find_map(r->name);
    mmp_memmap_shape s = shape_for(c, 48);
    size_t bytes_a = (size_t)(s.m * s.lda * c.bits / 8), bytes_b = (size_t)(s.n * s.ldb * c.bits / 8);
    uint8_t *ga = malloc(bytes_a), *gb = malloc(bytes_b);
    uint64_t x = mmp_check_seed * 2654435761u + (uint64_t)_i + 1;
    for (size_t i = 0; i < bytes_a; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; ga[i] = (uint8_t)(x >> 33); }
    for (size_t i = 0; i < bytes_b; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; gb[i] = (uint8_t)(x >> 33); }
    for (int w = 0; w < MMP_INTK_WARPS; w++)
        for (int k = 0; k < 3; k++)
            ck_assert_msg(check_warp_step(c, map, &s, ga, gb, w, k, 0) == 0, "%s: warp %d step %d: fragment "
                          "product differs from the plain loop", r->name, w, k);
    /* the check can fail: swapping A registers 0 and 1 (rows g and g+8) must be caught */
    ck_assert_msg(check_warp_step(c, map, &s, ga, gb, 0, 0, 1) > 0, "%s: wrong register order not caught", r->name);
    free(ga);
    free(gb);
}
END_TEST

/* ---- sector efficiency of the global loads (the transposed-B loader wastes most of each sector) ---- */
static void sectors(const mmp_warp_access *p, int64_t *used, int64_t *fetched)
{
    uint64_t seen[32 * 16];
    int ns = 0;
    for (int l = 0; l < 32; l++) {
        if (!(p->active >> l & 1)) continue;
        uint64_t g = p->kind == MMP_ACCESS_CP_ASYNC ? p->gaddr[l] : p->addr[l];
        *used += p->bytes;
        for (uint64_t s = g / 32; s <= (g + (uint64_t)p->bytes - 1) / 32; s++) {
            int dup = 0;
            for (int i = 0; i < ns; i++) dup |= seen[i] == s;
            if (!dup) seen[ns++] = s;
        }
    }
    *fetched += 32 * (int64_t)ns;
}

START_TEST(test_sector_efficiency)
{
    const row *r = &rows[_i];
    mmp_intk_cfg c = r->c;
    const mmp_kernel_memmap *map = find_map(r->name);
    mmp_memmap_shape s = {4096, 4096, 4096, 4096, 4096, c.bits, c.bits};   /* large N: one warp's rows lie far apart */
    mmp_warp_access acc[64];
    int n = map->enumerate(acc, 64, &s, 5, 7);
    int64_t used[2] = {0, 0}, fetched[2] = {0, 0};
    for (int a = 0; a < n; a++)
        if (acc[a].kind == MMP_ACCESS_CP_ASYNC || acc[a].kind == MMP_ACCESS_LDG)
            sectors(&acc[a], &used[acc[a].operand], &fetched[acc[a].operand]);
    /* bytes used per 32 fetched: rows of bkb bytes use bkb of each 32-byte sector (bkb <= 32) */
    ck_assert_int_eq(used[0] * 32 / fetched[0], c.bkb);
    if (c.b_trans)   /* every 1-byte load hits 16 rows: 2 useful bytes per sector */
        ck_assert_int_eq(used[1] * 32 / fetched[1], 2);
    else
        ck_assert_int_eq(used[1] * 32 / fetched[1], c.bkb);
}
END_TEST

/* ---- registry: every row has its map and (in CUDA builds) a descriptor that agrees with it ---- */
START_TEST(test_registry)
{
    const row *r = &rows[_i];
    size_t n;
    const mmp_kernel_memmap *const *maps = mmp_registry_memmaps(&n);
    int found = 0;
    for (size_t i = 0; i < n; i++) found += !strcmp(maps[i]->kernel, r->name);
    ck_assert_msg(found == 1, "%s: %d maps in the registry", r->name, found);
#ifdef MMP_HAVE_CUDA
    const mmp_kernel_desc *d = mmp_registry_find(r->name, MMP_REGISTRY_DEFAULT);
    ck_assert_msg(d != NULL, "%s: no descriptor", r->name);
    ck_assert_int_eq(d->a_format, r->c.bits == 8 ? MMP_FORMAT_INT8 : MMP_FORMAT_INT4);
    ck_assert_int_eq(d->d_format, MMP_FORMAT_INT32);
    ck_assert_int_eq(d->acc_format, MMP_FORMAT_INT32);
    ck_assert_int_eq(d->k_multiple, r->c.bkb * 8 / r->c.bits);
    ck_assert_int_eq(d->m_multiple, MMP_INTK_WTILE);
    ck_assert_int_eq(d->n_multiple, MMP_INTK_WTILE);
    ck_assert_uint_eq(d->layouts_b, MMP_LAYOUTS_COL);
    ck_assert_int_eq(d->min_cc, 80);
    ck_assert(d->run != NULL && d->reads_c == 0);
    for (int i = 0; i < 3; i++) {
        static const char *const others[3] = {"int8_wmma", "int4_wmma", "int8_dp4a"};
        ck_assert_msg(mmp_registry_find(others[i], MMP_REGISTRY_DEFAULT) != NULL, "no %s", others[i]);
    }
#endif
}
END_TEST

static Suite *kernint_maps_suite(void)
{
    Suite *s = suite_create("kernint_maps");
    TCase *tc = tcase_create("maps");
    tcase_add_loop_test(tc, test_smem_bijection, 0, NROWS);
    tcase_add_loop_test(tc, test_global_once, 0, NROWS);
    tcase_add_loop_test(tc, test_fragments, 0, NROWS);
    tcase_add_loop_test(tc, test_sector_efficiency, 0, NROWS);
    tcase_add_loop_test(tc, test_registry, 0, NROWS);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(kernint_maps_suite)
