/* check_memory.c — the bank-conflict and coalescing model: every calibration row gives its
 * known answer; hand-built cases (broadcast, inactive lanes, ldmatrix x1/x2, swizzle) and
 * global sectors (coalesced, strided, transposed-column loads). */
#include <string.h>

#include "mmaprobe/memory.h"
#include "suites/check_main.h"

START_TEST(calibrations_give_known_answers)
{
    size_t n;
    const mmp_memory_calib *c = mmp_memory_calibs(&n);
    ck_assert_uint_ge(n, 10);
    for (size_t i = 0; i < n; i++) {
        mmp_warp_access a;
        mmp_memory_calib_access(&a, &c[i]);
        mmp_smem_cost cost;
        ck_assert_int_eq(mmp_memory_smem_cost(&cost, &a), MMP_STATUS_OK);
        ck_assert_msg(cost.ways == c[i].expected_ways && cost.wavefronts == c[i].expected_wavefronts,
                      "%s: %d-way, %d wavefronts; expected %d-way, %d", c[i].name, cost.ways, cost.wavefronts,
                      c[i].expected_ways, c[i].expected_wavefronts);
    }
}
END_TEST

START_TEST(inactive_lanes_and_small_ldmatrix)
{
    mmp_warp_access a;
    memset(&a, 0, sizeof a);
    a.kind = MMP_ACCESS_LDS; a.bytes = 4; a.active = 0x1u | (1u << 16);
    a.addr[0] = 0; a.addr[16] = 128;           /* two lanes, same bank, different words */
    mmp_smem_cost c;
    mmp_memory_smem_cost(&c, &a);
    ck_assert_int_eq(c.ways, 2);
    a.active = 0x1u;                            /* lane 16 inactive: no conflict */
    mmp_memory_smem_cost(&c, &a);
    ck_assert_int_eq(c.ways, 1);
    a.kind = MMP_ACCESS_LDSM; a.matrices = 2; a.active = 0xffffffffu;
    for (int l = 0; l < 32; l++) a.addr[l] = (uint64_t)l * 64;
    mmp_memory_smem_cost(&c, &a);
    ck_assert_int_eq(c.phases, 2);
    ck_assert_int_eq(c.wavefronts, 8);
    a.matrices = 3;
    ck_assert_int_eq(mmp_memory_smem_cost(&c, &a), MMP_STATUS_INVALID);
}
END_TEST

/* An XOR swizzle of 16-byte chunks removes the 128-byte-row ldmatrix conflict. */
START_TEST(xor_swizzle_removes_conflict)
{
    mmp_warp_access a;
    memset(&a, 0, sizeof a);
    a.kind = MMP_ACCESS_LDSM; a.matrices = 4; a.bytes = 16; a.active = ~0u;
    for (int l = 0; l < 32; l++) {
        int row = l % 8 + 8 * (l / 16), chunk = (l / 8) % 2;
        a.addr[l] = (uint64_t)row * 128 + (uint64_t)((chunk ^ (row % 8)) * 16);
    }
    mmp_smem_cost c;
    mmp_memory_smem_cost(&c, &a);
    ck_assert_int_eq(c.ways, 1);
    for (int l = 0; l < 32; l++) {
        int row = l % 8 + 8 * (l / 16), chunk = (l / 8) % 2;
        a.addr[l] = (uint64_t)row * 128 + (uint64_t)(chunk * 16);
    }
    mmp_memory_smem_cost(&c, &a);
    ck_assert_int_eq(c.ways, 8);
}
END_TEST

START_TEST(global_sectors)
{
    mmp_warp_access a;
    memset(&a, 0, sizeof a);
    a.kind = MMP_ACCESS_LDG; a.bytes = 16; a.active = ~0u;
    for (int l = 0; l < 32; l++) a.addr[l] = (uint64_t)l * 16;   /* 512 contiguous bytes */
    mmp_gmem_cost g;
    mmp_memory_gmem_cost(&g, &a);
    ck_assert_int_eq(g.sectors, 16); ck_assert_int_eq(g.ideal, 16); ck_assert_int_eq(g.bytes, 512);
    a.bytes = 1;                                                  /* one byte per lane, 4096 apart: */
    for (int l = 0; l < 32; l++) a.addr[l] = (uint64_t)l * 4096;  /* a transposed column read */
    mmp_memory_gmem_cost(&g, &a);
    ck_assert_int_eq(g.sectors, 32); ck_assert_int_eq(g.ideal, 1);
    a.kind = MMP_ACCESS_CP_ASYNC; a.bytes = 16;
    for (int l = 0; l < 32; l++) { a.gaddr[l] = (uint64_t)(l / 2) * 16; a.addr[l] = (uint64_t)l * 16; }
    mmp_memory_gmem_cost(&g, &a);                                 /* pairs of lanes share 16 B */
    ck_assert_int_eq(g.bytes, 256); ck_assert_int_eq(g.sectors, 8);
}
END_TEST

static int two_warp_map(mmp_warp_access *out, int max, const mmp_memmap_shape *s, int warp, int kstep)
{
    (void)s; (void)kstep;
    if (max < 2) return -1;
    mmp_memory_calib c = {"row128", MMP_ACCESS_LDSM, 16, 128, 4, 8, 32};
    mmp_memory_calib_access(&out[0], &c);
    out[0].label = warp ? "B ldmatrix" : "A ldmatrix";
    memset(&out[1], 0, sizeof out[1]);
    out[1].label = "A ldg";
    out[1].kind = MMP_ACCESS_LDG; out[1].bytes = 4; out[1].active = ~0u;
    for (int l = 0; l < 32; l++) out[1].addr[l] = (uint64_t)l * 8;  /* half the bytes used */
    return 2;
}

START_TEST(kernel_report_totals)
{
    mmp_kernel_memmap map = {"toy", 64, 2, 64, 64, 32, 2, 8192, 16384, 2, two_warp_map};
    mmp_memmap_shape shape = {256, 256, 256, 256, 256, 16, 16};
    mmp_memory_report r;
    ck_assert_int_eq(mmp_memory_analyse(&r, &map, &shape, 1), MMP_STATUS_OK);
    ck_assert_int_eq(r.warps, 2);
    ck_assert_int_eq(r.smem_wavefronts, 64);
    ck_assert_int_eq(r.smem_ideal, 8);
    ck_assert_int_eq(r.worst_ways, 8);
    ck_assert(r.gmem_efficiency > 0.49 && r.gmem_efficiency < 0.51);
    ck_assert_int_eq(r.bank_words[0], 64);
    ck_assert_int_eq(r.bank_words[4], 0);
}
END_TEST

static Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, calibrations_give_known_answers);
    tcase_add_test(tc, inactive_lanes_and_small_ldmatrix);
    tcase_add_test(tc, xor_swizzle_removes_conflict);
    tcase_add_test(tc, global_sectors);
    tcase_add_test(tc, kernel_report_totals);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(memory_suite)
