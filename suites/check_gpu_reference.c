/* check_gpu_reference.c — the device reference path (MMP_REF_PATH_CUDA) agrees bit for bit with
 * the certified CPU path (itself checked against pure MPFR by check_reference) on random,
 * wide-exponent, cancelling and special-value problems, with layouts, padded leading
 * dimensions and alpha/beta; plus the |A||B| bound. Each Check test runs in a forked child, so
 * CUDA is initialised there, never in this process. Without a device: prints why, exits 77.
 *
 *   build/suites/check_gpu_reference            (ctest -L gpu; MMP_SEED=n to reproduce)
 */
#define MMP_CHECK_GPU
#include "suites/check_main.h"

#include "mmaprobe/reference.h"
#include "suites/ref_testgen.h"

static const struct {
    mmp_format a, b, c, d;
} combos[] = {
    {MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP16},
    {MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_BF16},
    {MMP_FORMAT_E4M3, MMP_FORMAT_E5M2, MMP_FORMAT_FP16, MMP_FORMAT_E4M3},
    {MMP_FORMAT_TF32, MMP_FORMAT_TF32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64},
};
enum { N_COMBOS = sizeof combos / sizeof combos[0] };

static void compute(mmp_ref_result *r, const prob *p, mmp_ref_path path)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.path = path;
    o.want_absbound = 1;
    mmp_ref_result_init(r);
    mmp_status st = mmp_ref_gemm(r, p->a, p->b, p->c, &p->g, &o);
    ck_assert_msg(st == MMP_STATUS_OK, "mmp_ref_gemm (%s): %s", path == MMP_REF_PATH_CUDA ? "cuda" : "cpu",
                  mmp_error_last());
}

static void device_agrees(int combo, gen_kind kind)
{
    rs = mmp_check_seed * 2654435761u + (uint64_t)combo * 101 + (uint64_t)kind * 7 + 3;
    static const double alphas[] = {1.0, -0.75, 2.0}, betas[] = {0.0, 1.0, -0.5};
    for (int v = 0; v < 3; v++) {
        int64_t m = 40 + (int64_t)(rnd64() % 60) * 2, n = 30 + (int64_t)(rnd64() % 50) * 2;
        int64_t k = v == 2 ? 1000 + (int64_t)(rnd64() % 600) * 2 : 2 + (int64_t)(rnd64() % 150) * 2;
        prob p;
        prob_make(&p, combos[combo].a, combos[combo].b, combos[combo].c, combos[combo].d, m, n, k,
                  (int)(rnd64() % 8), (int)(rnd64() % 2), alphas[v], betas[v], kind);
        mmp_ref_result rc, rg;
        compute(&rc, &p, MMP_REF_PATH_CERTIFIED);
        compute(&rg, &p, MMP_REF_PATH_CUDA);
        for (int64_t x = 0; x < m * n; x++) {
            ck_assert_msg(same_bits(rc.d64[x], rg.d64[x]) && same_bits(rc.dout[x], rg.dout[x]),
                          "%s*%s->%s kind %d %lldx%lldx%lld alpha %g beta %g: (%lld,%lld) cpu %a/%a cuda %a/%a",
                          mmp_format_name(combos[combo].a), mmp_format_name(combos[combo].b),
                          mmp_format_name(combos[combo].d), (int)kind, (long long)m, (long long)n, (long long)k,
                          alphas[v], betas[v], (long long)(x / n), (long long)(x % n), rc.d64[x], rc.dout[x],
                          rg.d64[x], rg.dout[x]);
            /* both bounds are upper bounds of the same S_ij from DGEMMs with different orders:
             * each within a relative 4 K u (+ underflow) of it, so of each other */
            double a = rc.absbound[x], b = rg.absbound[x], tol = 16.0 * (double)k * 0x1p-53 * fmax(a, b) + 0x1p-1000;
            ck_assert_msg((!isfinite(a) && !isfinite(b)) || a == b || fabs(a - b) <= tol, "absbound %a vs %a", a, b);
        }
        mmp_ref_result_clear(&rc);
        mmp_ref_result_clear(&rg);
        prob_free(&p);
    }
}

START_TEST(device_random) { device_agrees(_i, GEN_RANDOM); }
END_TEST
START_TEST(device_wide) { device_agrees(_i, GEN_WIDE); }
END_TEST
START_TEST(device_cancel) { device_agrees(_i, GEN_CANCEL); }
END_TEST
START_TEST(device_special) { device_agrees(_i, GEN_SPECIAL); }
END_TEST

static Suite *gpu_reference_suite(void)
{
    Suite *s = suite_create("gpu_reference");
    TCase *t = tcase_create("device path agrees with the cpu path");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, device_random, 0, N_COMBOS);
    tcase_add_loop_test(t, device_wide, 0, N_COMBOS);
    tcase_add_loop_test(t, device_cancel, 0, N_COMBOS);
    tcase_add_loop_test(t, device_special, 0, N_COMBOS);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(gpu_reference_suite)
