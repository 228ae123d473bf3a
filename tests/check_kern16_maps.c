/* suites/check_kern16_maps.c — host emulation of the fp16_wmma, fp16_ptx and bf16_mma kernels'
 * addressing (kernels/kern16_addr.h, the functions the kernels call) and of their memory maps.
 *
 * Without a GPU this catches the indexing bugs a tensor-core kernel usually has:
 *   (a) one pipeline stage's shared-memory chunks are a bijection onto the tile (no overlap,
 *       no hole, inside the stage, padding untouched);
 *   (b) every element of the CTA tile's K slice is copied from global exactly once per K step,
 *       and exactly the chunks outside the matrix are zero-filled (edge shapes);
 *   (c) ldmatrix (or the manual loads) deliver to each lane and register exactly the A/B
 *       elements the PTX ISA fragment tables of mma.m16n8k8/k16/k32 give that lane: shared
 *       memory is filled with element tags through the copy functions, ldmatrix .x1/.x2/.x4
 *       (.trans) is emulated from its ISA definition, and the fragment table is written here
 *       independently of the kernel's address helpers;
 *   (d) the maps agree with the kernels' geometry, and their ldmatrix addresses show seed
 *       004's bank conflicts: 4-way on plain 64-byte rows, none padded or swizzled.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kern16_addr.h"
#include "mmaprobe/registry.h"
#include "tests/check_main.h"

#define MAP_MAX 96

/* ---- (a) stage bijection ---------------------------------------------------------------- */
static void check_operand_bijection(mmp_k16_cfg c, int op)
{
    const int rows = op ? mmp_k16_b_rows(c) : c.bm;
    const int rb = op ? mmp_k16_b_row_bytes(c) : mmp_k16_a_row_bytes(c);
    const int region = op ? mmp_k16_b_stage_bytes(c) : mmp_k16_a_stage_bytes(c);
    const int copies = op ? mmp_k16_copies_b(c) : mmp_k16_copies_a(c);
    ck_assert_int_eq(copies * mmp_k16_threads(c) * 16, rows * rb);   /* no remainder */
    unsigned char *hit = calloc((size_t)region, 1), *cell = calloc((size_t)rows * (rb / 16), 1);
    for (int tid = 0; tid < mmp_k16_threads(c); tid++)
        for (int i = 0; i < copies; i++) {
            mmp_k16_copy cp = op ? mmp_k16_copy_b(c, tid, i) : mmp_k16_copy_a(c, tid, i);
            ck_assert_msg(cp.row >= 0 && cp.row < rows && cp.chunk >= 0 && cp.chunk < rb / 16,
                          "%s op %d: copy (%d,%d) outside the tile", c.name, op, cp.row, cp.chunk);
            ck_assert_msg(cp.smem % 16 == 0 && cp.smem >= 0 && cp.smem + 16 <= region,
                          "%s op %d: smem offset %d outside the stage region", c.name, op, cp.smem);
            ck_assert_int_eq(cp.smem, mmp_k16_smem_off(c.smem_layout, rb, cp.row, cp.chunk));
            ck_assert_msg(!cell[cp.row * (rb / 16) + cp.chunk]++, "%s op %d: chunk copied twice", c.name, op);
            for (int b = 0; b < 16; b++)
                ck_assert_msg(!hit[cp.smem + b]++, "%s op %d: smem byte %d written twice", c.name, op, cp.smem + b);
        }
    int written = 0;
    for (int b = 0; b < region; b++) written += hit[b];
    ck_assert_int_eq(written, rows * rb);
    if (c.smem_layout == MMP_K16_PAD)     /* the padding bytes stay untouched */
        for (int r = 0; r < rows; r++)
            for (int b = rb; b < rb + 16; b++) ck_assert_int_eq(hit[r * (rb + 16) + b], 0);
    free(hit);
    free(cell);
}

START_TEST(test_stage_bijection)
{
    mmp_k16_cfg c = mmp_k16_cfgs[_i];
    ck_assert_int_eq(c.bm % c.wm, 0);
    ck_assert_int_eq(c.bn % c.wn, 0);
    ck_assert(mmp_k16_a_row_bytes(c) == 64 || mmp_k16_a_row_bytes(c) == 128);   /* 32- or 64-wide K slices */
    check_operand_bijection(c, 0);
    check_operand_bijection(c, 1);
    ck_assert_int_le(mmp_k16_smem_bytes(c), 227 * 1024);
    /* 16-byte ldmatrix rows need 16-byte aligned stages */
    ck_assert_int_eq(mmp_k16_stage_bytes(c) % 128, 0);
}
END_TEST

/* ---- (b) every global element of the tile once per K step ---------------------------------- */
static void check_global_once(mmp_k16_cfg c, int op, long long M, long long N, long long K, long long ld,
                              long long tile_mn, int kt)
{
    const long long rows = op ? (c.b_kmajor ? N : K) : M;     /* storage rows of the operand */
    const long long span = rows * ld;
    unsigned char *seen = calloc((size_t)span, 1);
    const int copies = op ? mmp_k16_copies_b(c) : mmp_k16_copies_a(c), epc = mmp_k16_elems_per_chunk(c);
    const long long mn0 = tile_mn * (op ? c.bn : c.bm), k0 = (long long)kt * c.bk;
    int invalid = 0;
    for (int tid = 0; tid < mmp_k16_threads(c); tid++)
        for (int i = 0; i < copies; i++) {
            mmp_k16_copy cp = op ? mmp_k16_copy_b(c, tid, i) : mmp_k16_copy_a(c, tid, i);
            int valid = 0;
            long long gi = op ? mmp_k16_gidx_b(c, cp, mn0, k0, N, K, ld, &valid)
                              : mmp_k16_gidx_a(c, cp, mn0, k0, M, K, ld, &valid);
            if (!valid) {
                invalid++;
                continue;
            }
            ck_assert_msg(gi >= 0 && gi + epc <= span, "%s op %d: global index %lld outside", c.name, op, gi);
            for (int e = 0; e < epc; e++) ck_assert_msg(!seen[gi + e]++, "%s op %d: element loaded twice", c.name, op);
        }
    /* exactly the elements of the tile inside the matrix were loaded */
    long long expect = 0, outside = 0;
    for (long long r = 0; r < rows; r++)
        for (long long x = 0; x < ld; x++) {
            long long mn, k;
            if (op == 0) { mn = r; k = x; }
            else if (c.b_kmajor) { mn = r; k = x; }
            else { k = r; mn = x; }
            int in_matrix = k < K && mn < (op ? N : M);
            int in_tile = mn >= mn0 && mn < mn0 + (op ? c.bn : c.bm) && k >= k0 && k < k0 + c.bk;
            if (in_matrix && in_tile) {
                ck_assert_msg(seen[r * ld + x] == 1, "%s op %d: element (%lld,%lld) not loaded", c.name, op, r, x);
                expect++;
            } else {
                ck_assert_msg(seen[r * ld + x] == 0, "%s op %d: element (%lld,%lld) loaded, outside", c.name, op, r, x);
                if (in_tile) outside++;
            }
        }
    (void)expect;
    /* zero-filled chunks = tile chunks outside the matrix */
    ck_assert_int_eq((long long)invalid * epc, (long long)(op ? c.bn : c.bm) * c.bk - expect);
    (void)outside;
    free(seen);
}

START_TEST(test_global_once)
{
    mmp_k16_cfg c = mmp_k16_cfgs[_i];
    const int epc = mmp_k16_elems_per_chunk(c);
    /* a full interior shape and an edge shape (M, N cut inside a tile; K cut inside a slice) */
    const long long shapes[2][3] = {{256, 256, 4LL * c.bk}, {200, c.b_kmajor ? 141 : 136, 2LL * c.bk + 3 * epc}};
    for (int s = 0; s < 2; s++) {
        long long M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        long long lda = K + epc, ldb = c.b_kmajor ? K : N + epc;   /* non-tight leading dims */
        for (long long t = 0; t < 2; t++)
            for (int kt = 0; kt * c.bk < K; kt++) {
                check_global_once(c, 0, M, N, K, lda, t, kt);
                check_global_once(c, 1, M, N, K, ldb, t, kt);
            }
    }
}
END_TEST

/* The pipelined kernels' incremental copies (kern16_mma.cuh, load_stage_inc) address exactly
 * what mmp_k16_copy_* and mmp_k16_gidx_* give: same tile row, chunk, shared offset, global
 * index and validity for every thread, copy, slice and CTA tile, at edge shapes too. */
static void check_incremental(mmp_k16_cfg c, int op, long long M, long long K, long long ld, long long t0, int kt)
{
    const int epc = mmp_k16_elems_per_chunk(c), threads = mmp_k16_threads(c);
    const int copies = op ? mmp_k16_copies_b(c) : mmp_k16_copies_a(c);
    const int rstep = op ? mmp_k16_copy_rstep_b(c) : mmp_k16_copy_rstep_a(c);
    const int sstep = op ? mmp_k16_copy_sstep_b(c) : mmp_k16_copy_sstep_a(c);
    const long long r0 = t0 * (op ? c.bn : c.bm), k0 = (long long)kt * c.bk;
    for (int tid = 0; tid < threads; tid++) {
        mmp_k16_copy c0 = op ? mmp_k16_copy_b(c, tid, 0) : mmp_k16_copy_a(c, tid, 0);
        const long long base = (r0 + c0.row) * ld + (long long)c0.chunk * epc, rows = M - r0 - c0.row;
        const int kvalid = k0 + (long long)c0.chunk * epc < K;
        for (int i = 0; i < copies; i++) {
            mmp_k16_copy ci = op ? mmp_k16_copy_b(c, tid, i) : mmp_k16_copy_a(c, tid, i);
            int valid = 0;
            long long gi = op ? mmp_k16_gidx_b(c, ci, r0, k0, M, K, ld, &valid)
                              : mmp_k16_gidx_a(c, ci, r0, k0, M, K, ld, &valid);
            ck_assert_int_eq(ci.row, c0.row + i * rstep);
            ck_assert_int_eq(ci.chunk, c0.chunk);
            ck_assert_int_eq(ci.smem, c0.smem + i * sstep);
            ck_assert_int_eq(valid, kvalid && (long long)i * rstep < rows);
            if (valid) ck_assert_int_eq(gi, base + k0 + (long long)i * rstep * ld);
        }
    }
}

START_TEST(test_incremental_copies)
{
    mmp_k16_cfg c = mmp_k16_cfgs[_i];
    if (!c.pipe) return;        /* only the pipelined loop uses the incremental form */
    ck_assert(c.b_kmajor);
    const int epc = mmp_k16_elems_per_chunk(c);
    const long long shapes[2][3] = {{256, 512, 4LL * c.bk}, {200, 141, 2LL * c.bk + 3 * epc}};
    for (int s = 0; s < 2; s++) {
        long long M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], lda = K + epc, ldb = K + 2 * epc;
        for (long long t = 0; t < 2; t++)
            for (int kt = 0; kt * c.bk < K; kt++) {
                check_incremental(c, 0, M, K, lda, t, kt);
                check_incremental(c, 1, N, K, ldb, t, kt);
            }
    }
}
END_TEST

/* ---- (c) fragments: shared memory filled with tags, ldmatrix emulated ---------------------- */
/* Each byte of a stage holds tag = (operand << 28) | (tile row << 12) | byte-in-row, written
 * through the copy functions; the fragment table below says which tags a lane must receive. */
static uint32_t tag(int op, int row, int byte) { return ((uint32_t)op << 28) | ((uint32_t)row << 12) | (uint32_t)byte; }

static uint32_t *fill_stage(mmp_k16_cfg c)
{
    uint32_t *s = calloc((size_t)mmp_k16_stage_bytes(c), sizeof *s);
    const int ab = mmp_k16_a_stage_bytes(c);
    for (int tid = 0; tid < mmp_k16_threads(c); tid++) {
        for (int i = 0; i < mmp_k16_copies_a(c); i++) {
            mmp_k16_copy cp = mmp_k16_copy_a(c, tid, i);
            for (int b = 0; b < 16; b++) s[cp.smem + b] = tag(1, cp.row, cp.chunk * 16 + b);
        }
        for (int i = 0; i < mmp_k16_copies_b(c); i++) {
            mmp_k16_copy cp = mmp_k16_copy_b(c, tid, i);
            for (int b = 0; b < 16; b++) s[ab + cp.smem + b] = tag(2, cp.row, cp.chunk * 16 + b);
        }
    }
    return s;
}

/* ldmatrix as the PTX ISA defines it: matrix q's 8 rows come from the addresses of lanes
 * 8q..8q+7; without .trans lane l receives row l/4, bytes 4(l%4)..+3; with .trans it receives
 * column l/4 of rows 2(l%4) and 2(l%4)+1 (two 16-bit elements). out[q][l][0..3] = byte tags. */
static void emulate_ldsm(uint32_t out[4][32][4], const uint32_t *smem, const int addr[32], int nmat, int trans)
{
    for (int q = 0; q < nmat; q++)
        for (int l = 0; l < 32; l++)
            for (int b = 0; b < 4; b++) {
                int off = trans ? addr[8 * q + 2 * (l % 4) + b / 2] + 2 * (l / 4) + b % 2
                                : addr[8 * q + l / 4] + 4 * (l % 4) + b;
                out[q][l][b] = smem[off];
            }
}

/* Expected byte tags of register q, lane l (PTX ISA fragment tables, written in bytes: a
 * 32-bit register holds 2 16-bit or 4 8-bit consecutive K values). */
static void expect_a(uint32_t e[4], mmp_k16_cfg c, int l, int q, int row0, int kbyte0, int k8)
{
    int g = l >> 2, t = l & 3;
    int row = row0 + g + 8 * (k8 ? q : (q & 1));
    int byte = kbyte0 + 4 * t + (k8 ? 0 : 16 * (q >> 1));
    for (int b = 0; b < 4; b++) e[b] = tag(1, row, byte + b);
    (void)c;
}
static void expect_b(uint32_t e[4], mmp_k16_cfg c, int l, int q, int n0, int kbyte0)
{
    int g = l >> 2, t = l & 3;
    int kbyte = kbyte0 + 4 * t + 16 * q;           /* k = 2t + 8q (16-bit) or 4t + 16q (8-bit) */
    for (int b = 0; b < 4; b++) {
        if (c.b_kmajor) e[b] = tag(2, n0 + g, kbyte + b);
        else {                                       /* smem [k][n], 16-bit: k row, n byte */
            int k = (kbyte + (b & 2)) / 2;           /* byte b of the register: element b/2 */
            e[b] = tag(2, k, (n0 + g) * 2 + (b & 1));
        }
    }
}

static void assert_reg(const uint32_t got[4], const uint32_t want[4], const char *what, mmp_k16_cfg c, int l, int q)
{
    for (int b = 0; b < 4; b++)
        ck_assert_msg(got[b] == want[b], "%s %s lane %d reg %d byte %d: got tag %08x want %08x", c.name, what, l, q, b,
                      got[b], want[b]);
}

START_TEST(test_fragments)
{
    mmp_k16_cfg c = mmp_k16_cfgs[_i];
    uint32_t *smem = fill_stage(c);
    const int ab = mmp_k16_a_stage_bytes(c), arb = mmp_k16_a_row_bytes(c), brb = mmp_k16_b_row_bytes(c);
    static uint32_t got[4][32][4];
    int addr[32];
    uint32_t want[4];
    for (int warp = 0; warp < mmp_k16_warps(c); warp++) {
        const int wm = mmp_k16_wm_off(c, warp), wn = mmp_k16_wn_off(c, warp);
        if (c.mma_k == 8) {
            for (int kk = 0; kk < arb / 16; kk++) {
                for (int mi = 0; mi < c.wm / 16; mi++) {
                    for (int l = 0; l < 32; l++) {
                        mmp_k16_rc rc = mmp_k16_ldsm_a(c, l, wm, mi, kk, 1);
                        addr[l] = mmp_k16_smem_off(c.smem_layout, arb, rc.row, rc.chunk);
                    }
                    emulate_ldsm(got, smem, addr, 2, 0);
                    for (int l = 0; l < 32; l++)
                        for (int q = 0; q < 2; q++) {
                            expect_a(want, c, l, q, wm + mi * 16, kk * 16, 1);
                            assert_reg(got[q][l], want, "A k8", c, l, q);
                        }
                }
                for (int nj = 0; nj < c.wn / 8; nj++) {
                    for (int l = 0; l < 32; l++) {
                        mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(c, l, wn, nj, kk, 1);
                        addr[l] = ab + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk);
                    }
                    emulate_ldsm(got, smem, addr, 1, 1);
                    for (int l = 0; l < 32; l++) {
                        expect_b(want, c, l, 0, wn + nj * 8, kk * 16);
                        assert_reg(got[0][l], want, "B k8", c, l, 0);
                    }
                }
            }
            continue;
        }
        for (int ks = 0; ks < mmp_k16_ksteps(c); ks++) {
            for (int mi = 0; mi < c.wm / 16; mi++) {
                if (c.loader == MMP_K16_MANUAL) {
                    for (int l = 0; l < 32; l++)
                        for (int q = 0; q < 4; q++) {
                            int off = mmp_k16_manual_a(c, l, wm, mi, ks, q);
                            for (int b = 0; b < 4; b++) got[q][l][b] = smem[off + b];
                        }
                } else {
                    for (int l = 0; l < 32; l++) {
                        mmp_k16_rc rc = mmp_k16_ldsm_a(c, l, wm, mi, ks, 0);
                        addr[l] = mmp_k16_smem_off(c.smem_layout, arb, rc.row, rc.chunk);
                    }
                    emulate_ldsm(got, smem, addr, 4, 0);
                }
                for (int l = 0; l < 32; l++)
                    for (int q = 0; q < 4; q++) {
                        expect_a(want, c, l, q, wm + mi * 16, ks * 32, 0);
                        assert_reg(got[q][l], want, "A", c, l, q);
                    }
            }
            if (c.b_kmajor) {
                for (int j = 0; j < c.wn / 16; j++) {
                    for (int l = 0; l < 32; l++) {
                        mmp_k16_rc rc = mmp_k16_ldsm_b_kmajor(c, l, wn, j, ks);
                        addr[l] = ab + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk);
                    }
                    emulate_ldsm(got, smem, addr, 4, 0);
                    for (int l = 0; l < 32; l++)
                        for (int r = 0; r < 4; r++) {    /* kernel: r0,r1 -> block 2j; r2,r3 -> 2j+1 */
                            expect_b(want, c, l, r & 1, wn + (2 * j + (r >> 1)) * 8, ks * 32);
                            assert_reg(got[r][l], want, "B", c, l, r);
                        }
                }
                continue;
            }
            for (int nj = 0; nj < c.wn / 8; nj++) {
                if (c.loader == MMP_K16_MANUAL) {
                    for (int l = 0; l < 32; l++)
                        for (int q = 0; q < 2; q++)
                            for (int h = 0; h < 2; h++) {
                                int off = ab + mmp_k16_manual_b(c, l, wn, nj, ks, q, h);
                                got[q][l][2 * h] = smem[off];
                                got[q][l][2 * h + 1] = smem[off + 1];
                            }
                } else {
                    for (int l = 0; l < 32; l++) {
                        mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(c, l, wn, nj, ks, 0);
                        addr[l] = ab + mmp_k16_smem_off(c.smem_layout, brb, rc.row, rc.chunk);
                    }
                    emulate_ldsm(got, smem, addr, 2, 1);
                }
                for (int l = 0; l < 32; l++)
                    for (int q = 0; q < 2; q++) {
                        expect_b(want, c, l, q, wn + nj * 8, ks * 32);
                        assert_reg(got[q][l], want, "B trans", c, l, q);
                    }
            }
        }
    }
    /* the warps together cover the CTA tile exactly once */
    static unsigned char cover[256][256];
    memset(cover, 0, sizeof cover);
    for (int w = 0; w < mmp_k16_warps(c); w++)
        for (int r = 0; r < c.wm; r++)
            for (int x = 0; x < c.wn; x++) cover[mmp_k16_wm_off(c, w) + r][mmp_k16_wn_off(c, w) + x]++;
    for (int r = 0; r < c.bm; r++)
        for (int x = 0; x < c.bn; x++) ck_assert_int_eq(cover[r][x], 1);
    free(smem);
}
END_TEST

/* ---- (d) the maps ------------------------------------------------------------------------ */
static const mmp_kernel_memmap *find_map(const char *name)
{
    size_t n;
    const mmp_kernel_memmap *const *m = mmp_registry_memmaps(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(m[i]->kernel, name)) return m[i];
    return NULL;
}

/* ldmatrix wavefronts: one 8x8 matrix (8 rows of 16 bytes) per phase; a phase takes as many
 * wavefronts as the most distinct 128-byte lines any bank is asked for. */
static int ldsm_wavefronts(const mmp_warp_access *a)
{
    int total = 0;
    for (int q = 0; q < a->matrices; q++) {
        uint64_t lines[32][8];
        int nl[32] = {0}, worst = 0;
        for (int r = 0; r < 8; r++)
            for (int w = 0; w < 4; w++) {
                uint64_t byte = a->addr[8 * q + r] + 4u * w, bank = (byte / 4) % 32, line = byte / 128;
                int dup = 0;
                for (int i = 0; i < nl[bank]; i++) dup |= lines[bank][i] == line;
                if (!dup) lines[bank][nl[bank]++] = line;
                if (nl[bank] > worst) worst = nl[bank];
            }
        total += worst;
    }
    return total;
}

START_TEST(test_maps)
{
    mmp_k16_cfg c = mmp_k16_cfgs[_i];
    const mmp_kernel_memmap *m = find_map(c.name);
    ck_assert_msg(m != NULL, "no memory map for %s", c.name);
    ck_assert_int_eq(m->warps_per_cta, mmp_k16_warps(c));
    ck_assert_int_eq(m->threads_per_cta, mmp_k16_threads(c));
    ck_assert_int_eq(m->tile_m, c.bm);
    ck_assert_int_eq(m->tile_n, c.bn);
    ck_assert_int_eq(m->tile_k, c.bk);
    ck_assert_int_eq(m->stages, c.stages);
    ck_assert_int_eq(m->smem_bytes_per_stage, mmp_k16_stage_bytes(c));
    ck_assert_int_eq(m->smem_bytes_total, mmp_k16_smem_bytes(c));
    ck_assert_int_eq(m->ctas_per_sm_expected, c.ctas_per_sm);
    mmp_memmap_shape s = {512, 512, 512, 512, 512, 8 * c.elem_bytes, 8 * c.elem_bytes};
    static mmp_warp_access acc[MAP_MAX];
    /* cp.async of all warps together = the copies of all threads (checked in (a), (b)) */
    unsigned char *hit = calloc((size_t)mmp_k16_smem_bytes(c), 1);
    int ldsm_wf = 0, ldsm_n = 0;
    for (int kstep = 0; kstep < c.stages; kstep++)
        for (int w = 0; w < m->warps_per_cta; w++) {
            int n = m->enumerate(acc, MAP_MAX, &s, w, kstep);
            ck_assert_msg(n > 0, "%s: enumerate failed", c.name);
            for (int i = 0; i < n; i++) {
                if (acc[i].kind == MMP_ACCESS_CP_ASYNC)
                    for (int l = 0; l < 32; l++) {
                        ck_assert(acc[i].addr[l] + 16 <= (uint64_t)mmp_k16_smem_bytes(c));
                        ck_assert_int_eq(acc[i].addr[l] / mmp_k16_stage_bytes(c), kstep);
                        for (int b = 0; b < 16; b++) ck_assert(!hit[acc[i].addr[l] + b]++);
                    }
                if (acc[i].kind == MMP_ACCESS_LDSM && acc[i].matrices == 4 && acc[i].operand == 0 && kstep == 0) {
                    ldsm_wf += ldsm_wavefronts(&acc[i]);
                    ldsm_n++;
                }
            }
        }
    int written = 0;
    for (int b = 0; b < mmp_k16_smem_bytes(c); b++) written += hit[b];
    ck_assert_int_eq(written, c.stages * (c.bm * mmp_k16_a_row_bytes(c) + mmp_k16_b_rows(c) * mmp_k16_b_row_bytes(c)));
    free(hit);
    /* 16 wavefronts per A ldmatrix.x4 on plain 64-byte rows (4-way bank conflict), 4 when
     * padded or swizzled (conflict-free) */
    if (ldsm_n > 0) {
        int per = ldsm_wf / ldsm_n;
        if (c.smem_layout == MMP_K16_PLAIN) ck_assert_int_eq(per, 16);
        else ck_assert_int_eq(per, 4);
    }
    /* bad arguments: a one-line error, never a crash */
    ck_assert_int_eq(m->enumerate(acc, MAP_MAX, &s, m->warps_per_cta, 0), -1);
    ck_assert_int_eq(m->enumerate(acc, 2, &s, 0, 0), -1);
}
END_TEST

START_TEST(test_wmma_maps)
{
    const mmp_k16_wmma_cfg cfgs[2] = {mmp_k16_wmma_shared, mmp_k16_wmma_cp_async};
    mmp_k16_wmma_cfg c = cfgs[_i];
    const mmp_kernel_memmap *m = find_map(c.name);
    ck_assert_msg(m != NULL, "no memory map for %s", c.name);
    ck_assert_int_eq(m->smem_bytes_per_stage, mmp_k16_wmma_stage_bytes(c));
    ck_assert_int_eq(m->smem_bytes_total, c.stages * mmp_k16_wmma_stage_bytes(c));
    ck_assert_int_eq(m->tile_k, c.bk);
    mmp_memmap_shape s = {256, 256, 256, 256, 256, 16, 16};
    static mmp_warp_access acc[MAP_MAX];
    const int SB = mmp_k16_wmma_stage_bytes(c);
    unsigned char *hit = calloc((size_t)SB, 1), *rd = calloc((size_t)SB, 1);
    unsigned char *ga = calloc(256 * 256, 1), *gb = calloc(256 * 256, 1);
    for (int w = 0; w < m->warps_per_cta; w++) {
        int n = m->enumerate(acc, MAP_MAX, &s, w, 1);
        ck_assert_int_gt(n, 0);
        for (int i = 0; i < n; i++) {
            const mmp_warp_access *a = &acc[i];
            if (a->kind == MMP_ACCESS_LDG) {   /* global side of ld.global + st.shared */
                for (int l = 0; l < 32; l++)
                    for (int e = 0; e < 8; e++) ck_assert(!(a->operand ? gb : ga)[a->addr[l] / 2 + e]++);
                continue;
            }
            for (int l = 0; l < 32; l++) {
                uint64_t off = a->addr[l] - (uint64_t)((1 % c.stages) * SB);
                ck_assert(off + 16 <= (uint64_t)SB);
                if (a->kind == MMP_ACCESS_LDSM || a->kind == MMP_ACCESS_LDSM_T) {   /* fragment reads */
                    for (int b = 0; b < 16; b++) rd[off + b]++;
                    continue;
                }
                for (int b = 0; b < 16; b++) ck_assert(!hit[off + b]++);
                if (a->kind == MMP_ACCESS_CP_ASYNC)
                    for (int e = 0; e < 8; e++) ck_assert(!(a->operand ? gb : ga)[a->gaddr[l] / 2 + e]++);
            }
        }
    }
    /* Fragment reads: every staged A byte by the bn / 32 warps of its rows, every B byte by the
     * bm / 32 warps of its columns, no padding byte at all. */
    for (int off = 0; off < SB; off++) {
        int boff = 2 * c.bm * c.a_pitch, want;
        if (off < boff) want = (off % (2 * c.a_pitch)) < 2 * c.bk ? c.bn / 32 : 0;
        else want = ((off - boff) / (2 * c.b_pitch) < c.bk && (off - boff) % (2 * c.b_pitch) < 2 * c.bn) ? c.bm / 32 : 0;
        ck_assert_msg(rd[off] == want, "%s: stage byte %d read %d times by fragment loads, want %d", c.name, off,
                      rd[off], want);
    }
    /* A tile rows 0..127, K slice 1; B rows of K slice 1, columns 0..63: each element once */
    for (int r = 0; r < 256; r++)
        for (int x = 0; x < 256; x++) {
            ck_assert_int_eq(ga[r * 256 + x], r < c.bm && x >= c.bk && x < 2 * c.bk);
            ck_assert_int_eq(gb[r * 256 + x], r >= c.bk && r < 2 * c.bk && x < c.bn);
        }
    free(hit);
    free(rd);
    free(ga);
    free(gb);
}
END_TEST

/* The swizzle is CUTLASS's Swizzle<2,3,3> on BF16 element offsets of the 128 x 32 tile. */
START_TEST(test_swizzle_is_cutlass_233)
{
    for (int row = 0; row < 128; row++)
        for (int col = 0; col < 32; col++) {
            int e = row * 32 + col;
            int cutlass = e ^ ((e >> 6) & 3) << 3;     /* XOR bits [6,8) into bits [3,5) */
            int ours = mmp_k16_smem_off(MMP_K16_SWZ, 64, row, col / 8) + (col % 8) * 2;
            ck_assert_int_eq(ours, 2 * cutlass);
        }
}
END_TEST

static Suite *kern16_maps_suite(void)
{
    Suite *s = suite_create("kern16_maps");
    TCase *t = tcase_create("addressing");
    tcase_add_loop_test(t, test_stage_bijection, 0, MMP_K16_COUNT);
    tcase_add_loop_test(t, test_global_once, 0, MMP_K16_COUNT);
    tcase_add_loop_test(t, test_incremental_copies, 0, MMP_K16_COUNT);
    tcase_add_loop_test(t, test_fragments, 0, MMP_K16_COUNT);
    tcase_add_loop_test(t, test_maps, 0, MMP_K16_COUNT);
    tcase_add_loop_test(t, test_wmma_maps, 0, 2);
    tcase_add_test(t, test_swizzle_is_cutlass_233);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(kern16_maps_suite)
