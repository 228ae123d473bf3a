/* suites/check_gpu_fused.c — GPU tests of the int4_fused operator (exit 77 without a device).
 * Every op of mmp_fused_ops() (components and fused, simple and persistent) against the exact
 * reference and its budget, bit for bit against the host emulation where the order is known, with
 * guards, poison, determinism and the smem budget vs cudaFuncGetAttributes (suites/fused_gpu.c);
 * persistent grids capped so one CTA walks several tiles; unsupported shapes are SKIPs. Run: build/suites/check_gpu_fused (CK_FORK=no to debug).
 */
#define MMP_CHECK_GPU 1
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/fused.h"
#include "mmaprobe/kernel.h"
#include "tests/check_main.h"


typedef struct vcase { int64_t m, n, k; int g; mmp_format sf; int grid_cap; } vcase;
static const vcase vcases[] = {
    {256, 192, 512, 128, MMP_FORMAT_FP16, 0},   /* 6 tiles, one per CTA */
    {256, 128, 384, 64, MMP_FORMAT_BF16, 1},    /* one CTA walks 4 tiles: phases wrap across tiles */
    {384, 192, 256, 64, MMP_FORMAT_FP16, 5},    /* 18 tiles over 5 CTAs, uneven */
    {128, 64, 64, 64, MMP_FORMAT_FP16, 0},      /* one tile, one K step, one group */
};

START_TEST(test_validate_all_ops)
{
    const vcase *c = &vcases[_i];
    mmp_fused_problem p = {c->m, c->n, c->k, c->g, 32, c->sf};
    int n_fail = -1;
    mmp_status st = mmp_fused_gpu_validate(stdout, &p, mmp_check_seed, c->grid_cap, 1, &n_fail);
    fflush(stdout);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(n_fail == 0, "%d ops failed (see the lines above)", n_fail);
}
END_TEST

START_TEST(test_unsupported_is_skip)
{
    const mmp_fused_problem bad[] = {{100, 64, 128, 64, 32, MMP_FORMAT_FP16},   /* M not a multiple of 128 */
                                     {128, 64, 128, 32, 32, MMP_FORMAT_FP16},   /* g < 64 */
                                     {128, 64, 128, 64, 16, MMP_FORMAT_FP16}};  /* rank 16 */
    static char dummy[1 << 16] __attribute__((aligned(16)));
    mmp_fused_operands o = {dummy, dummy, dummy, dummy, dummy, dummy, dummy, (float *)dummy, (float *)dummy, dummy};
    size_t n = 0;
    const mmp_fused_op *ops = mmp_fused_ops(&n);
    ck_assert_uint_gt(n, 0);
    for (size_t b = 0; b < 3; b++)
        for (size_t i = 0; i < n; i++) {
            mmp_fused_part part = ops[i].part;
            if (part == MMP_FUSED_PART_DECODE || part == MMP_FUSED_PART_DEQUANT || part == MMP_FUSED_PART_AFFINE) continue;
            ck_assert_int_eq(ops[i].run(&o, &bad[b], NULL, NULL, 1), MMP_KERNEL_UNSUPPORTED);
        }
}
END_TEST

static Suite *gpu_fused_suite(void)
{
    Suite *s = suite_create("gpu_fused");
    TCase *t = tcase_create("ops");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, test_validate_all_ops, 0, (int)(sizeof vcases / sizeof vcases[0]));
    tcase_add_test(t, test_unsupported_is_skip);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(gpu_fused_suite)
