/* suites/check_wgmma_maps.c — host checks of the wgmma element-load kernels' address functions
 * (kernels/wgmma_addr.h) and memory maps (kernels/wgmma_maps.c).
 *  - the 128-byte swizzle, written here independently: chunk c of row r at c ^ (r % 8);
 *  - one K step: the 4 warps' st.shared write every byte of the A and B tiles exactly once, at
 *    the swizzled offset of the element's (row, K) position; their ld.global read every byte of
 *    the A rows 0..63 and B rows 0..127 of that K slice exactly once, nothing else;
 *  - edges: rows and K beyond the matrix are stored (zeros) but not read;
 *  - the analysis of the maps: conflict-free stores, fully used sectors;
 *  - bad shapes: a map refuses an operand width that is not its own.
 * Run: ctest -R check_wgmma_maps.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/wgmma_addr.h"
#include "mmaprobe/memmap.h"
#include "mmaprobe/memory.h"
#include "mmaprobe/registry.h"
#include "tests/check_main.h"

static const struct {
    const char *name;
    int elem;
} rows[] = {{"wgmma_bf16_simple", 2}, {"wgmma_e4m3", 1}, {"wgmma_e4m3_promote128", 1}};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static const mmp_kernel_memmap *find_map(const char *name)
{
    size_t n;
    const mmp_kernel_memmap *m = mmp_memmaps_wgmma(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(m[i].kernel, name)) return &m[i];
    return NULL;
}

START_TEST(test_swizzle)
{
    for (uint32_t r = 0; r < 64; r++)
        for (uint32_t b = 0; b < 128; b++) {
            uint32_t chunk = b / 16, want = r * 128 + 16 * (chunk ^ (r % 8)) + b % 16;
            ck_assert_uint_eq(mmp_wg_swz128(r, b), want);
        }
}
END_TEST

/* One K step of map m on an M x N x K problem: byte counts of the shared tiles and of A, B. */
static void run_step(const mmp_kernel_memmap *m, int elem, int64_t M, int64_t N, int64_t K, int kstep,
                     unsigned char *smem, unsigned char *ga, unsigned char *gb)
{
    mmp_memmap_shape s = {M, N, K, K, K, 8 * elem, 8 * elem};
    static mmp_warp_access acc[MMP_MEMORY_MAX_ACCESSES];
    for (int w = 0; w < m->warps_per_cta; w++) {
        int n = m->enumerate(acc, MMP_MEMORY_MAX_ACCESSES, &s, w, kstep);
        ck_assert_int_gt(n, 0);
        for (int i = 0; i < n; i++) {
            const mmp_warp_access *a = &acc[i];
            ck_assert_int_eq(a->bytes, elem);
            for (int l = 0; l < 32; l++) {
                if (!(a->active >> l & 1)) continue;
                for (int b = 0; b < elem; b++) {
                    if (a->kind == MMP_ACCESS_STS) {
                        ck_assert_uint_lt(a->addr[l] + b, (uint64_t)m->smem_bytes_per_stage);
                        smem[a->addr[l] + b]++;
                    } else {
                        ck_assert_int_eq(a->kind, MMP_ACCESS_LDG);
                        uint64_t g = a->addr[l] + b;
                        ck_assert_uint_lt(g, (uint64_t)(a->operand ? N : M) * K * elem);
                        (a->operand ? gb : ga)[g]++;
                    }
                }
            }
        }
    }
}

START_TEST(test_one_step)
{
    const mmp_kernel_memmap *m = find_map(rows[_i].name);
    ck_assert_msg(m != NULL, "no map for %s", rows[_i].name);
    const int elem = rows[_i].elem, kt = 128 / elem;
    ck_assert_int_eq(m->tile_k, kt);
    const int64_t M = 256, N = 256, K = 4 * kt;
    unsigned char *smem = calloc((size_t)m->smem_bytes_per_stage, 1);
    unsigned char *ga = calloc((size_t)(M * K * elem), 1), *gb = calloc((size_t)(N * K * elem), 1);
    run_step(m, elem, M, N, K, 1, smem, ga, gb);
    for (int64_t x = 0; x < m->smem_bytes_per_stage; x++) ck_assert_int_eq(smem[x], 1);
    for (int64_t r = 0; r < M; r++)
        for (int64_t b = 0; b < K * elem; b++) {
            int in_slice = b >= kt * elem && b < 2 * kt * elem;
            ck_assert_int_eq(ga[r * K * elem + b], r < 64 && in_slice);
            ck_assert_int_eq(gb[r * K * elem + b], r < 128 && in_slice);
        }
    /* the swizzled position of one element, from the map: A row 5, K offset 9 of the slice */
    mmp_memmap_shape s = {M, N, K, K, K, 8 * elem, 8 * elem};
    static mmp_warp_access acc[MMP_MEMORY_MAX_ACCESSES];
    int e = 5 * kt + 9, warp = (e % 128) / 32, lane = e % 32, inst = e / 128;
    int n = m->enumerate(acc, MMP_MEMORY_MAX_ACCESSES, &s, warp, 1);
    ck_assert_int_gt(n, 2 * inst + 1);
    ck_assert_uint_eq(acc[2 * inst].addr[lane], (uint64_t)((5 * K + kt + 9) * elem));
    ck_assert_uint_eq(acc[2 * inst + 1].addr[lane], 5 * 128 + 16 * (((9 * elem) / 16) ^ 5) + (9 * elem) % 16);
    free(smem);
    free(ga);
    free(gb);
}
END_TEST

START_TEST(test_edges)
{
    const mmp_kernel_memmap *m = find_map(rows[_i].name);
    const int elem = rows[_i].elem, kt = 128 / elem;
    const int64_t M = 40, N = 100, K = kt + kt / 2;   /* last K step half outside */
    unsigned char *smem = calloc((size_t)m->smem_bytes_per_stage, 1);
    unsigned char *ga = calloc((size_t)(M * K * elem), 1), *gb = calloc((size_t)(N * K * elem), 1);
    run_step(m, elem, M, N, K, 1, smem, ga, gb);
    for (int64_t x = 0; x < m->smem_bytes_per_stage; x++) ck_assert_int_eq(smem[x], 1);   /* zeros stored */
    for (int64_t r = 0; r < M; r++)
        for (int64_t b = 0; b < K * elem; b++) ck_assert_int_eq(ga[r * K * elem + b], b >= kt * elem);
    for (int64_t r = 0; r < N; r++)
        for (int64_t b = 0; b < K * elem; b++) ck_assert_int_eq(gb[r * K * elem + b], b >= kt * elem);
    mmp_memmap_shape s = {M, N, K, K, K, 8 * elem, 8 * elem};
    static mmp_warp_access acc[MMP_MEMORY_MAX_ACCESSES];
    ck_assert_int_eq(m->enumerate(acc, MMP_MEMORY_MAX_ACCESSES, &s, 0, 2), 0);   /* past K */
    s.elem_bits_a = elem == 2 ? 8 : 16;
    ck_assert_int_eq(m->enumerate(acc, MMP_MEMORY_MAX_ACCESSES, &s, 0, 0), -1);   /* not its width */
    free(smem);
    free(ga);
    free(gb);
}
END_TEST

START_TEST(test_analysis)
{
    const mmp_kernel_memmap *m = find_map(rows[_i].name);
    const int elem = rows[_i].elem;
    mmp_memmap_shape s = {2048, 2048, 2048, 2048, 2048, 8 * elem, 8 * elem};
    mmp_memory_report r;
    ck_assert_int_eq(mmp_memory_analyse(&r, m, &s, 1), MMP_STATUS_OK);
    /* 24 KiB of tiles: 768 sectors read, each fully used; every warp-wide store (32 lanes of
     * elem bytes in one swizzled 128-byte row) is conflict-free: one wavefront each */
    ck_assert_int_eq(r.gmem_sectors, 768);
    ck_assert_int_eq(r.gmem_ideal, 768);
    ck_assert_int_eq(r.smem_st_wavefronts, 24576 / (32 * elem));
    ck_assert_int_eq(r.smem_ld_wavefronts, 0);
}
END_TEST

static Suite *wgmma_maps_suite(void)
{
    Suite *s = suite_create("wgmma_maps");
    TCase *tc = tcase_create("maps");
    tcase_add_test(tc, test_swizzle);
    tcase_add_loop_test(tc, test_one_step, 0, NROWS);
    tcase_add_loop_test(tc, test_edges, 0, NROWS);
    tcase_add_loop_test(tc, test_analysis, 0, NROWS);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(wgmma_maps_suite)
