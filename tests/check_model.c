/* check_model.c — the tensor-core model on hand-computed cases, one feature per test.
 *
 * Values are chosen so the exact answer is known (see each comment); the random test checks
 * mmp_model_error_bound against a long-double sum of exact products.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mmaprobe/model.h"
#include "tests/check_main.h"

static mmp_model_params row(const char *gpu, const char *instr)
{
    const mmp_model_preset *r = mmp_model_preset_find(gpu, instr);
    ck_assert_msg(r != NULL, "no row %s %s", gpu, instr);
    return r->params;
}

static double dot(const double *a, const double *b, double c, int k, const mmp_model_params *p)
{
    double d;
    ck_assert_int_eq(mmp_model_dot(&d, a, b, c, k, p), MMP_STATUS_OK);
    return d;
}

START_TEST(test_exact_small)
{
    /* integers: every model is exact */
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1};
    mmp_model_params p = row("H100", "mma.f16.f32");
    ck_assert(dot(a, b, 0.5, 4, &p) == 10.5);
    p = row("V100", "mma.f16.f16");
    ck_assert(dot(a, b, 0.5, 4, &p) == 10.5);
}
END_TEST

START_TEST(test_extra_bits_and_term_rounding)
{
    /* c = 1, t = -2^-25: kept with 2 extra bits -> 1 - 2^-25, truncated to 1 - 2^-24;
     * with 0 extra bits t is truncated away -> 1 */
    double a[2] = {-ldexp(1, -12), 0}, b[2] = {ldexp(1, -13), 0};
    mmp_model_params h = row("H100", "mma.f16.f32"), v = row("V100", "mma.f16.f32");
    ck_assert(dot(a, b, 1.0, 2, &h) == 1.0 - ldexp(1, -24));
    ck_assert(dot(a, b, 1.0, 2, &v) == 1.0);
    /* t = -2^-27: beyond H100's bits -> 1 under truncation, 1 - 2^-24 when terms round down */
    b[0] = ldexp(1, -15);
    ck_assert(dot(a, b, 1.0, 2, &h) == 1.0);
    h.align_round = MMP_ROUND_DOWN;
    ck_assert(dot(a, b, 1.0, 2, &h) == 1.0 - ldexp(1, -24));
}
END_TEST

START_TEST(test_output_rounding)
{
    /* c = 1, t = 3*2^-25 = 0.75 ulp: RZ -> 1, RN -> 1 + 2^-23 */
    double a[1] = {3 * ldexp(1, -13)}, b[1] = {ldexp(1, -12)};
    mmp_model_params p = row("H100", "mma.f16.f32");
    ck_assert(dot(a, b, 1.0, 1, &p) == 1.0);
    p.out_round = MMP_ROUND_NEAREST_EVEN;
    ck_assert(dot(a, b, 1.0, 1, &p) == 1.0 + ldexp(1, -23));
    /* fp16 output: c = 1 + 2^-12 is first rounded to fp16 (-> 1) */
    mmp_model_params q = row("H100", "mma.f16.f16");
    double z[1] = {0};
    ck_assert(dot(z, z, 1.0 + ldexp(1, -12), 1, &q) == 1.0);
}
END_TEST

START_TEST(test_block_size)
{
    /* products 0..7 = 2^-26, 8 = 1, 9 = -1 (K = 16): with 8-product blocks the small terms sum
     * to 2^-23 in block 0 and survive; with one 16-product block they vanish beside the 1 */
    double a[16] = {0}, b[16] = {0};
    for (int i = 0; i < 8; i++) { a[i] = ldexp(1, -13); b[i] = ldexp(1, -13); }
    a[8] = 1; b[8] = 1; a[9] = -1; b[9] = 1;
    mmp_model_params a100 = row("A100", "mma.f16.f32"), h100 = row("H100", "mma.f16.f32");
    ck_assert(dot(a, b, 0.0, 16, &a100) == ldexp(1, -23));
    ck_assert(dot(a, b, 0.0, 16, &h100) == 0.0);
}
END_TEST

START_TEST(test_special_values)
{
    mmp_model_params p = row("H100", "mma.bf16.f32");
    double a[2] = {INFINITY, 1}, b[2] = {0, 1};
    ck_assert(isnan(dot(a, b, 0, 2, &p)));              /* Inf * 0 */
    b[0] = 1; a[1] = -INFINITY;
    ck_assert(isnan(dot(a, b, 0, 2, &p)));              /* +Inf + -Inf */
    a[1] = 5;
    ck_assert(dot(a, b, 0, 2, &p) == INFINITY);
    ck_assert(isnan(dot(a, b, NAN, 2, &p)));
    double z[2] = {0, 0};
    ck_assert(dot(z, z, -0.0, 2, &p) == 0.0 && !signbit(dot(z, z, -0.0, 2, &p)));
    ck_assert_uint_eq(mmp_model_fp32_bits(NAN), 0x7fffffffu);
    ck_assert(mmp_model_fp32_same(0x7fc00000u, 0xffffffffu));
    ck_assert(!mmp_model_fp32_same(0x00000000u, 0x80000000u));
}
END_TEST

START_TEST(test_subnormal_and_overflow)
{
    /* bf16 product 2^-140 is an fp32 subnormal: kept, or flushed when out_subnormals = 0 */
    mmp_model_params p = row("H100", "mma.bf16.f32");
    double a[1] = {ldexp(1, -70)}, b[1] = {ldexp(1, -70)};
    ck_assert(dot(a, b, 0, 1, &p) == ldexp(1, -140));
    p.out_subnormals = 0;
    ck_assert(dot(a, b, 0, 1, &p) == 0.0);
    /* fp16 output overflow: 60000 + 60000 -> +Inf */
    mmp_model_params q = row("H100", "mma.f16.f16");
    double x[2] = {60000, 60000}, y[2] = {1, 1};
    ck_assert(dot(x, y, 0, 2, &q) == INFINITY);
    /* the floor: c = 0 and a lone product 1.5*2^-140 aligned to a floor of -133 keeps
     * 25 fraction bits below 2^-133, so it survives exactly */
    double u[1] = {1.5 * ldexp(1, -70)}, w[1] = {ldexp(1, -70)};
    p.out_subnormals = 1;
    ck_assert(dot(u, w, 0, 1, &p) == 1.5 * ldexp(1, -140));
}
END_TEST

START_TEST(test_params_and_roundoff)
{
    mmp_model_params p;
    mmp_model_params_init(&p);
    ck_assert_int_eq(mmp_model_params_check(&p), MMP_STATUS_OK);
    p.block_size = 0;
    ck_assert_int_eq(mmp_model_params_check(&p), MMP_STATUS_INVALID);
    mmp_model_params_init(&p);
    p.out_format = MMP_FORMAT_E4M3;
    ck_assert_int_eq(mmp_model_params_check(&p), MMP_STATUS_INVALID);
    double d;
    mmp_model_params_init(&p);
    ck_assert_int_eq(mmp_model_dot(&d, NULL, NULL, 0, 0, &p), MMP_STATUS_INVALID);
    mmp_model_params h = row("H100", "mma.f16.f32"), w = row("H100", "wgmma.e4m3.f32.c0");
    ck_assert(mmp_model_unit_roundoff(&h) == ldexp(1, -23));
    ck_assert(mmp_model_unit_roundoff(&w) == ldexp(1, -13));
    h.out_round = MMP_ROUND_NEAREST_EVEN;
    ck_assert(mmp_model_unit_roundoff(&h) == ldexp(1, -24));
}
END_TEST

START_TEST(test_error_bound_random)
{
    /* random fp16 vectors of K = 64: |model - exact| <= mmp_model_error_bound; the exact sum
     * is a long double sum of exact products (each product has 22 bits, exponents within
     * +-16, so 64-bit long double significands hold every partial sum exactly) */
    srand((unsigned)mmp_check_seed);
    const char *rows[][2] = {{"V100", "mma.f16.f32"}, {"A100", "mma.f16.f32"}, {"H100", "mma.f16.f32"},
                             {"H100", "mma.f16.f16"}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        mmp_model_params p = row(rows[r][0], rows[r][1]);
        for (int t = 0; t < 2000; t++) {
            double a[64], b[64], s = 0;
            long double exact = 0;
            for (int i = 0; i < 64; i++) {
                a[i] = ldexp((double)(rand() % 2048) * (rand() & 1 ? 1 : -1), -10 + rand() % 8 - 4);
                b[i] = ldexp((double)(rand() % 2048), -10 + rand() % 8 - 4);
                exact += (long double)a[i] * b[i];
                s += fabs(a[i] * b[i]);
            }
            double c = p.out_format == MMP_FORMAT_FP16 ? 0.5 : 0.1f;
            exact += c;
            s += fabs(c);
            double d = dot(a, b, c, 64, &p);
            double bound = mmp_model_error_bound(&p, 64, s);
            ck_assert_msg(fabsl((long double)d - exact) <= bound, "%s %s: error %Lg > bound %g",
                          rows[r][0], rows[r][1], fabsl((long double)d - exact), bound);
        }
    }
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("features");
    tcase_add_test(tc, test_exact_small);
    tcase_add_test(tc, test_extra_bits_and_term_rounding);
    tcase_add_test(tc, test_output_rounding);
    tcase_add_test(tc, test_block_size);
    tcase_add_test(tc, test_special_values);
    tcase_add_test(tc, test_subnormal_and_overflow);
    tcase_add_test(tc, test_params_and_roundoff);
    tcase_add_test(tc, test_error_bound_random);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(model_suite)
