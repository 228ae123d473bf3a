/* check_fused_layout.c — the int4_fused kernels' address arithmetic (kernels/int4_fused_layout.h)
 * and their tile schedule, on the CPU. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/int4_fused_layout.h"
#include "mmaprobe/fused.h"
#include "tests/check_main.h"


/* ---- the shared-memory layout: regions disjoint, aligned, inside `end` ---- */
START_TEST(test_layout_regions)
{
    for (int bars = 0; bars < 2; bars++)
        for (int S = 1; S <= MMP_FUSEDK_MAX_STAGES; S++) {
            mmp_fusedk_layout L;
            mmp_fusedk_layout_make(&L, S, bars);
            const uint32_t off[] = {L.off_xq, L.off_wq, L.off_x, L.off_a, L.off_sx, L.off_sw, L.stage_bytes};
            const uint32_t len[] = {MMP_FUSEDK_BM * MMP_FUSEDK_Q_ROW, MMP_FUSEDK_BN * MMP_FUSEDK_Q_ROW,
                                    MMP_FUSEDK_BM * MMP_FUSEDK_X_ROW, MMP_FUSEDK_BK * MMP_FUSEDK_A_ROW,
                                    MMP_FUSEDK_BM * 2, MMP_FUSEDK_BN * 2};
            for (int r = 0; r < 6; r++) {
                ck_assert_uint_eq(off[r] % 128, 0);
                ck_assert(off[r] + len[r] <= off[r + 1]);
            }
            ck_assert_uint_eq(L.stage_bytes % 128, 0);
            ck_assert_uint_eq(L.off_bt, (uint32_t)S * L.stage_bytes);
            ck_assert_int_eq(L.bt_buffers, bars ? 2 : 1);
            ck_assert(L.off_bt + (uint32_t)L.bt_buffers * MMP_FUSEDK_RANK * MMP_FUSEDK_BT_ROW <= L.off_t);
            ck_assert(L.off_t + MMP_FUSEDK_BM * MMP_FUSEDK_T_ROW <= L.off_bar);
            ck_assert(L.off_bar + (bars ? (2u * S + 4) * 8 : 0) <= L.end);
            ck_assert_uint_eq(L.off_bar % 8, 0);
            ck_assert_uint_eq(L.main_bytes + L.scale_bytes + L.residual_bytes + L.sync_bytes + L.padding_bytes, L.end);
        }
}
END_TEST

/* ---- stage copies: every useful byte of each tile once, 16-B aligned, rows inside the padding ---- */
static void cover(uint8_t *map, uint32_t size, uint32_t off, uint32_t len)
{
    ck_assert(off + len <= size);
    ck_assert_uint_eq(off % 16, 0);
    for (uint32_t b = off; b < off + len; b++) {
        ck_assert_msg(map[b] == 0, "shared byte %u written twice", b);
        map[b] = 1;
    }
}

START_TEST(test_layout_copies_bijective)
{
    mmp_fusedk_layout L;
    mmp_fusedk_layout_make(&L, 1, 0);
    uint8_t *map = calloc(L.end, 1);
    int row, kb, kk, t, nn;
    for (int c = 0; c < MMP_FUSEDK_XQ_CHUNKS; c++) {
        mmp_fusedk_q_chunk(c, &row, &kb);
        ck_assert(row < MMP_FUSEDK_BM);
        cover(map, L.end, L.off_xq + mmp_fusedk_q_off(row, kb), 16);
    }
    for (int c = 0; c < MMP_FUSEDK_WQ_CHUNKS; c++) {
        mmp_fusedk_q_chunk(c, &row, &kb);
        ck_assert(row < MMP_FUSEDK_BN);
        cover(map, L.end, L.off_wq + mmp_fusedk_q_off(row, kb), 16);
    }
    for (int c = 0; c < MMP_FUSEDK_X_CHUNKS; c++) {
        mmp_fusedk_x_chunk(c, &row, &kk);
        ck_assert(row < MMP_FUSEDK_BM && kk < MMP_FUSEDK_BK);
        cover(map, L.end, L.off_x + mmp_fusedk_x_off(row, kk), 16);
    }
    for (int c = 0; c < MMP_FUSEDK_A_CHUNKS; c++) {
        mmp_fusedk_a_chunk(c, &kk, &t);
        ck_assert(kk < MMP_FUSEDK_BK && t < MMP_FUSEDK_RANK);
        cover(map, L.end, L.off_a + mmp_fusedk_a_off(kk, t), 16);
    }
    for (int c = 0; c < MMP_FUSEDK_BT_CHUNKS; c++) {
        mmp_fusedk_bt_chunk(c, &t, &nn);
        ck_assert(t < MMP_FUSEDK_RANK && nn < MMP_FUSEDK_BN);
        cover(map, L.end, L.off_bt + mmp_fusedk_bt_off(t, nn), 16);
    }
    /* useful bytes: tiles (rows x useful row bytes) = covered bytes */
    uint32_t covered = 0;
    for (uint32_t b = 0; b < L.end; b++) covered += map[b];
    ck_assert_uint_eq(covered, (MMP_FUSEDK_BM + MMP_FUSEDK_BN) * 32 + MMP_FUSEDK_BM * 128 + MMP_FUSEDK_BK * 64 +
                                   MMP_FUSEDK_RANK * MMP_FUSEDK_BN * 2);
    free(map);
    /* global side: distinct, in range, contiguous 16 B per chunk, for a tile in the middle */
    const int64_t K = 1024, M = 512, m0 = 256, kt = 7;
    uint8_t *g = calloc((size_t)(M * K / 2), 1);
    for (int c = 0; c < MMP_FUSEDK_XQ_CHUNKS; c++) {
        mmp_fusedk_q_chunk(c, &row, &kb);
        int64_t a = mmp_fusedk_q_gaddr(K, m0, kt, row, kb);
        ck_assert(a >= 0 && a + 16 <= M * K / 2 && a % 16 == 0);
        ck_assert_int_eq(a, (m0 + row) * (K / 2) + (kt * 64 + 2 * kb) / 2);   /* element kt*64 + 2 kb */
        for (int b = 0; b < 16; b++) { ck_assert(g[a + b] == 0); g[a + b] = 1; }
    }
    free(g);
    for (int c = 0; c < MMP_FUSEDK_X_CHUNKS; c++) {
        mmp_fusedk_x_chunk(c, &row, &kk);
        ck_assert_int_eq(mmp_fusedk_x_gidx(K, m0, kt, row, kk), (m0 + row) * K + kt * 64 + kk);
    }
}
END_TEST

/* ---- mma fragments: each register map covers its operand tile once ---- */
START_TEST(test_fragments_bijective)
{
    uint8_t a[16][32] = {{0}}, b[8][32] = {{0}}, ba[16][16] = {{0}}, bb[16][8] = {{0}}, cc[16][8] = {{0}};
    int r, c;
    for (int lane = 0; lane < 32; lane++) {
        for (int q = 0; q < 4; q++) {
            mmp_fusedk_s4a_reg(q, lane, &r, &c);
            for (int x = 0; x < 4; x++) a[r][c + x]++;
            mmp_fusedk_bfa_reg(q, lane, &r, &c);
            for (int x = 0; x < 2; x++) ba[r][c + x]++;
            mmp_fusedk_acc_elem(q, lane, &r, &c);
            cc[r][c]++;
        }
        for (int q = 0; q < 2; q++) {
            mmp_fusedk_s4b_reg(q, lane, &r, &c);
            for (int x = 0; x < 4; x++) b[r][c + x]++;
            mmp_fusedk_bfb_reg(q, lane, &r, &c);
            for (int x = 0; x < 2; x++) bb[r + x][c]++;
        }
    }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 32; j++) {
            ck_assert_int_eq(a[i][j], 1);
            if (i < 8) ck_assert_int_eq(b[i][j], 1);
            if (j < 16) ck_assert_int_eq(ba[i][j], 1);
            if (j < 8) ck_assert_int_eq(bb[i][j], 1);
            if (j < 8) ck_assert_int_eq(cc[i][j], 1);
        }
    /* warp tiles cover the CTA tile once; T slabs cover BM rows once */
    static uint8_t y[MMP_FUSEDK_BM][MMP_FUSEDK_BN];
    memset(y, 0, sizeof y);
    for (int w = 0; w < MMP_FUSEDK_WARPS; w++)
        for (int mt = 0; mt < 2; mt++)
            for (int nt = 0; nt < 4; nt++)
                for (int i = 0; i < 16; i++)
                    for (int j = 0; j < 8; j++) y[mmp_fusedk_warp_row(w, mt) + i][mmp_fusedk_warp_col(w, nt) + j]++;
    for (int i = 0; i < MMP_FUSEDK_BM; i++)
        for (int j = 0; j < MMP_FUSEDK_BN; j++) ck_assert_int_eq(y[i][j], 1);
    ck_assert_int_eq(16 * MMP_FUSEDK_WARPS, MMP_FUSEDK_BM);
}
END_TEST

/* ---- bank conflicts of the fragment loads (32 banks of 4 B): distinct words, distinct banks ---- */
static int conflicts(const uint32_t *addr)
{
    int worst = 1;
    for (int bank = 0; bank < 32; bank++) {
        uint32_t words[32];
        int n = 0;
        for (int l = 0; l < 32; l++) {
            if ((addr[l] / 4) % 32 != (uint32_t)bank) continue;
            int seen = 0;
            for (int x = 0; x < n; x++) seen |= words[x] == addr[l] / 4;
            if (!seen) words[n++] = addr[l] / 4;
        }
        if (n > worst) worst = n;
    }
    return worst;
}

START_TEST(test_bank_conflict_free)
{
    uint32_t ad[32];
    int r, c;
    for (int w = 0; w < MMP_FUSEDK_WARPS; w++) {
        for (int q = 0; q < 4; q++) {
            for (int l = 0; l < 32; l++) { mmp_fusedk_s4a_reg(q, l, &r, &c); ad[l] = mmp_fusedk_q_off(mmp_fusedk_warp_row(w, 1) + r, c); }
            ck_assert_int_eq(conflicts(ad), 1);
            for (int l = 0; l < 32; l++) { mmp_fusedk_bfa_reg(q, l, &r, &c); ad[l] = mmp_fusedk_x_off(16 * w + r, 16 + c); }
            ck_assert_int_eq(conflicts(ad), 1);
        }
        for (int q = 0; q < 2; q++) {
            for (int l = 0; l < 32; l++) { mmp_fusedk_s4b_reg(q, l, &r, &c); ad[l] = mmp_fusedk_q_off(mmp_fusedk_warp_col(w, 2) + r, c); }
            ck_assert_int_eq(conflicts(ad), 1);
            for (int l = 0; l < 32; l++) { mmp_fusedk_bfb_reg(q, l, &r, &c); ad[l] = mmp_fusedk_a_off(16 + r, 8 + c); }
            ck_assert_int_eq(conflicts(ad), 1);
        }
        for (int t = 0; t < MMP_FUSEDK_RANK; t++) {      /* epilogue: T[row][t] */
            for (int l = 0; l < 32; l++) { mmp_fusedk_acc_elem(0, l, &r, &c); ad[l] = mmp_fusedk_t_off(mmp_fusedk_warp_row(w, 0) + r, t); }
            ck_assert_int_eq(conflicts(ad), 1);
        }
    }
}
END_TEST

/* ---- the persistent schedule visits every tile once ---- */
START_TEST(test_schedule_covers_tiles)
{
    const int64_t tiles[] = {1, 7, 132, 1000}, grids[] = {1, 3, 132, 264};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int64_t g = grids[b] < tiles[a] ? grids[b] : tiles[a];
            uint8_t *seen = calloc((size_t)tiles[a], 1);
            for (int64_t blk = 0; blk < g; blk++)
                for (int64_t i = 0;; i++) {
                    int64_t t = mmp_fusedk_sched(blk, g, i);
                    if (t >= tiles[a]) break;
                    ck_assert_int_eq(seen[t]++, 0);
                }
            for (int64_t t = 0; t < tiles[a]; t++) ck_assert_int_eq(seen[t], 1);
            free(seen);
        }
    int64_t tm, tn;
    mmp_fusedk_tile(13, 4, &tm, &tn);
    ck_assert(tm == 1 && tn == 3);
}
END_TEST

static Suite *fused_layout_suite(void)
{
    Suite *s = suite_create("fused_layout");
    TCase *tl = tcase_create("layout");
    tcase_add_test(tl, test_layout_regions);
    tcase_add_test(tl, test_layout_copies_bijective);
    tcase_add_test(tl, test_fragments_bijective);
    tcase_add_test(tl, test_bank_conflict_free);
    tcase_add_test(tl, test_schedule_covers_tiles);
    suite_add_tcase(s, tl);
    return s;
}

MMP_CHECK_MAIN(fused_layout_suite)
