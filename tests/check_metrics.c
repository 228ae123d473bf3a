/* check_metrics.c — error metrics and bounds: exact outputs, planted errors, NaN/Inf counted
 * first, ULPs, layouts, and the bound's two duties: a truncating fp32 accumulation never
 * exceeds it, an fp16 accumulation behind a declared fp32 accumulator always does. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/metrics.h"
#include "runner_alt_hd.h"
#include "tests/check_main.h"

static uint64_t rs;
static double urand(void) /* uniform in [-1, 1), 24 random bits */
{
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(int32_t)(rs >> 40 << 8) * 0x1p-31;
}

static void input_for(mmp_metrics_input *in, const float *got, const double *want, const double *s,
                      int64_t m, int64_t n, int64_t k)
{
    memset(in, 0, sizeof *in);
    in->got = got; in->d_format = MMP_FORMAT_FP32; in->layout = MMP_LAYOUT_ROW; in->ldd = n;
    in->want64 = want; in->want_out = NULL; in->absbound = s;
    in->m = m; in->n = n; in->k = k;
    in->u_acc = mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 0);
    in->acc_format = MMP_FORMAT_FP32;
}

START_TEST(exact_output_is_clean)
{
    float got[6] = {1, 2, 3, -4, 0, 0.5f};
    double want[6] = {1, 2, 3, -4, 0, 0.5}, s[6] = {1, 2, 3, 4, 1, 1};
    mmp_metrics_input in; input_for(&in, got, want, s, 2, 3, 8);
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m;
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_OK);
    ck_assert_int_eq(m.count, 6);
    ck_assert(m.max_abs_err == 0 && m.max_ulp == 0 && m.norm_rel_err == 0 && m.max_ratio_det == 0);
    ck_assert_int_eq(m.above_tol, 0);
    ck_assert_int_eq(m.hist[0], 6);
    ck_assert_int_eq(m.first_bad_i, -1);
}
END_TEST

START_TEST(planted_error_found_with_position)
{
    enum { M = 40, N = 70, K = 16 };
    static float got[M * N];
    static double want[M * N], s[M * N];
    for (int i = 0; i < M * N; i++) { want[i] = 1.0 + i; got[i] = (float)want[i]; s[i] = 2.0 + i; }
    got[17 * N + 33] += 1.0f;
    mmp_metrics_input in; input_for(&in, got, want, s, M, N, K);
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m; mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.above_tol, 1);
    ck_assert_int_eq(m.first_bad_i, 17); ck_assert_int_eq(m.first_bad_j, 33);
    ck_assert_int_eq(m.worst_i, 17); ck_assert_int_eq(m.worst_j, 33);
    ck_assert(m.max_abs_err == 1.0);
    ck_assert(fabs(m.max_ulp - 1.0 / mmp_metrics_ulp(want[17 * N + 33], MMP_FORMAT_FP32)) < 1e-9);
    ck_assert_int_eq(m.hist[MMP_HIST_BINS - 1], 1);
    ck_assert_int_eq(m.heat_rows, M); ck_assert_int_eq(m.heat_cols, MMP_HEAT_MAX);
    ck_assert(m.heat[17 * MMP_HEAT_MAX + 33 * MMP_HEAT_MAX / N] > 1.0f);
    /* a column-major output with padding reads the same element through ldd */
    static float gotc[(M + 3) * N];
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) gotc[j * (M + 3) + i] = got[i * N + j];
    in.got = gotc; in.layout = MMP_LAYOUT_COL; in.ldd = M + 3;
    mmp_metrics m2; mmp_metrics_compute(&m2, &in, &t);
    ck_assert_int_eq(m2.first_bad_i, 17); ck_assert_int_eq(m2.first_bad_j, 33);
}
END_TEST

/* A result whose correct rounding to the output format overflows: the infinity of that sign is
 * the right answer, the other infinity and NaN are not, and a finite result is judged by its
 * error against the binary64 value (the bound decides: here far outside it). */
START_TEST(overflow_of_the_rounded_result_is_right)
{
    float got[4] = {-INFINITY, INFINITY, -FLT_MAX, NAN};
    double want[4] = {-9.7e39, -9.7e39, -9.7e39, 9.7e39}, wout[4] = {-INFINITY, -INFINITY, -INFINITY, INFINITY};
    double s[4] = {9.7e39, 9.7e39, 9.7e39, 9.7e39};
    mmp_metrics_input in; input_for(&in, got, want, s, 1, 4, 8);
    in.want_out = wout;
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m;
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_OK);
    ck_assert_int_eq(m.inf_mismatch, 1);   /* +Inf for -Inf */
    ck_assert_int_eq(m.nan_mismatch, 1);   /* NaN for +Inf */
    ck_assert_int_eq(m.above_tol, 3);      /* and -FLT_MAX, 9e39 from the exact value */
    ck_assert_int_eq(m.first_bad_j, 1);
    ck_assert_int_eq(m.hist[0], 1);        /* -Inf: ratio 0 */
    /* without the rounded values (want_out NULL) the class is the binary64 value's */
    in.want_out = NULL;
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_OK);
    ck_assert_int_eq(m.inf_mismatch, 2);
    ck_assert_int_eq(m.first_bad_j, 0);
}
END_TEST

START_TEST(nan_inf_counted_first_and_apart)
{
    float got[4] = {NAN, 1.0f, INFINITY, NAN};
    double want[4] = {1.0, NAN, INFINITY, NAN}, s[4] = {1, 1, 1, 1};
    mmp_metrics_input in; input_for(&in, got, want, s, 2, 2, 4);
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m; mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.nan_mismatch, 2);
    ck_assert_int_eq(m.inf_mismatch, 0);
    ck_assert(isfinite(m.norm_rel_err) && m.norm_rel_err == 0);
    got[2] = -INFINITY;
    mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.inf_mismatch, 1);
    ck_assert_int_eq(m.above_tol, 3);
}
END_TEST

/* special_alt: a NaN where the exact result is +Inf is excused only where the callback says the
 * declared input rounding gives NaN there (element (0,0) here), never elsewhere. */
static int alt_first_only(void *ctx, int64_t i, int64_t j, double got)
{
    (void)ctx;
    return i == 0 && j == 0 && isnan(got);
}

START_TEST(nan_excused_only_by_the_input_rounding)
{
    float got[4] = {NAN, NAN, 2.0f, INFINITY};
    double want[4] = {INFINITY, INFINITY, 2.0, INFINITY}, s[4] = {1, 1, 1, 1};
    mmp_metrics_input in; input_for(&in, got, want, s, 2, 2, 4);
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m; mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.nan_mismatch, 2);
    in.special_alt = alt_first_only;
    mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.nan_mismatch, 1);   /* (0,1) is still a mismatch */
    ck_assert_int_eq(m.above_tol, 1);
}
END_TEST

/* runner_alt_hd.h, the excuse the host and device comparisons share: fp32 inputs on tf32
 * multipliers. A = [Inf, 1; FLT_MAX, 0] (row-major), B columns [2^-149, 1] and [1, 1]:
 *   (0, 0): tf32 flushes 2^-149 to 0, Inf x 0 = NaN: a NaN output is excused, +Inf is not;
 *   (0, 1): +Inf by any rounding: a NaN output is not excused;
 *   (1, 1): FLT_MAX rounds to Inf to nearest, stays finite toward zero: +Inf is excused,
 *           alpha = -1 makes it -Inf; a finite output is never excused;
 *   beta c = -Inf against a +Inf sum: NaN. */
START_TEST(alt_excuse_shared)
{
    const float a[4] = {INFINITY, 1.0f, FLT_MAX, 0.0f};
    const float b[4] = {0x1p-149f, 1.0f, 1.0f, 1.0f};   /* row-major 2 x 2: columns [2^-149, 1], [1, 1] */
    const float c[4] = {0.0f, -INFINITY, 0.0f, 0.0f};
    mmp_alt_in x;
    memset(&x, 0, sizeof x);
    x.a = a; x.b = b;
    mmp_format_hd_init(&x.fa, MMP_FORMAT_FP32); mmp_format_hd_init(&x.fb, MMP_FORMAT_FP32);
    mmp_format_hd_init(&x.fc, MMP_FORMAT_FP32); mmp_format_hd_init(&x.mul, MMP_FORMAT_TF32);
    x.la = x.lb = x.lc = MMP_LAYOUT_ROW;
    x.lda = x.ldb = x.ldc = 2; x.k = 2;
    x.alpha = 1.0;
    ck_assert_int_eq(mmp_alt_class(&x, 0, 0, MMP_ROUND_NEAREST_EVEN), 3);
    ck_assert_int_eq(mmp_alt_excused(&x, 0, 0, NAN), 1);
    ck_assert_int_eq(mmp_alt_excused(&x, 0, 0, INFINITY), 0);
    ck_assert_int_eq(mmp_alt_excused(&x, 0, 1, NAN), 0);
    ck_assert_int_eq(mmp_alt_class(&x, 1, 1, MMP_ROUND_NEAREST_EVEN), 1);
    ck_assert_int_eq(mmp_alt_class(&x, 1, 1, MMP_ROUND_TOWARD_ZERO), 0);
    ck_assert_int_eq(mmp_alt_excused(&x, 1, 1, INFINITY), 1);
    ck_assert_int_eq(mmp_alt_excused(&x, 1, 1, -INFINITY), 0);
    ck_assert_int_eq(mmp_alt_excused(&x, 1, 1, 5.0), 0);
    x.alpha = -1.0;
    ck_assert_int_eq(mmp_alt_excused(&x, 1, 1, -INFINITY), 1);
    x.alpha = 1.0; x.c = c; x.beta = 1.0;
    ck_assert_int_eq(mmp_alt_class(&x, 0, 1, MMP_ROUND_NEAREST_EVEN), 3);
    ck_assert_int_eq(mmp_alt_excused(&x, 0, 1, NAN), 1);
    x.beta = 0.0;   /* beta 0: C is not read */
    ck_assert_int_eq(mmp_alt_excused(&x, 0, 1, NAN), 0);
}
END_TEST

START_TEST(ulp_and_bounds_formulas)
{
    ck_assert(mmp_metrics_ulp(1.0, MMP_FORMAT_FP16) == 0x1p-10);
    ck_assert(mmp_metrics_ulp(0.75, MMP_FORMAT_FP16) == 0x1p-11);
    ck_assert(mmp_metrics_ulp(0.0, MMP_FORMAT_FP16) == 0x1p-24);
    ck_assert(mmp_metrics_ulp(1e-40, MMP_FORMAT_BF16) == 0x1p-133);
    ck_assert(mmp_metrics_ulp(5.0, MMP_FORMAT_INT32) == 1.0);
    ck_assert(mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 0) == 0x1p-23);
    ck_assert(mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 14) == 0x1p-13);
    ck_assert(mmp_metrics_unit_truncation(MMP_FORMAT_INT32, 0) == 0.0);
    ck_assert(fabs(mmp_metrics_gamma(10, 0.01) - 0.1 / 0.9) < 1e-15);
    ck_assert(isinf(mmp_metrics_gamma(100, 0.01)));
    ck_assert(mmp_metrics_gamma_prob(4096, 0x1p-23, mmp_metrics_lambda(4096)) < mmp_metrics_gamma(4096, 0x1p-23));
    mmp_tolerance_mode mode;
    ck_assert_int_eq(mmp_tolerance_from_name(&mode, "bitwise"), MMP_STATUS_OK);
    ck_assert_int_eq(mode, MMP_TOLERANCE_BITWISE);
    ck_assert_int_eq(mmp_tolerance_from_name(&mode, "loose"), MMP_STATUS_INVALID);
}
END_TEST

/* Dot products accumulated the way hardware might: fp32 with truncation after every addition
 * (a correct truncating tensor core) vs fp16 accumulation (a mutant). */
static void accumulate(float *got, double *want, double *s, int m, int n, int k, mmp_format acc)
{
    double *a = malloc(sizeof(double) * (size_t)m * k), *b = malloc(sizeof(double) * (size_t)k * n);
    for (int i = 0; i < m * k; i++) a[i] = mmp_format_round(urand(), MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0);
    for (int i = 0; i < k * n; i++) b[i] = mmp_format_round(urand(), MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double t = 0, exact = 0, abs_sum = 0;
            for (int p = 0; p < k; p++) {
                double prod = a[i * k + p] * b[p * n + j]; /* exact in binary64 */
                t = mmp_format_round(t + prod, acc, MMP_ROUND_TOWARD_ZERO, 0);
                exact += prod; /* the test's exact value: fp16 products, K <= 4096, fit 53 bits */
                abs_sum += fabs(prod);
            }
            got[i * n + j] = (float)t; want[i * n + j] = exact; s[i * n + j] = abs_sum;
        }
    free(a); free(b);
}

START_TEST(bound_holds_for_truncation_and_catches_fp16_accumulation)
{
    rs = mmp_check_seed;
    enum { M = 4, N = 4, K = 4096 };
    static float got[M * N];
    static double want[M * N], s[M * N];
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics_input in; mmp_metrics m;
    accumulate(got, want, s, M, N, K, MMP_FORMAT_FP32);
    input_for(&in, got, want, s, M, N, K);
    mmp_metrics_compute(&m, &in, &t);
    ck_assert_msg(m.above_tol == 0, "truncating fp32 accumulation exceeded the bound: ratio %g", m.max_ratio_det);
    ck_assert(m.max_ratio_det > 0);
    accumulate(got, want, s, M, N, K, MMP_FORMAT_FP16);
    mmp_metrics_compute(&m, &in, &t);
    ck_assert_msg(m.above_tol > 0, "fp16 accumulation passed a declared fp32 bound (ratio %g)", m.max_ratio_det);
}
END_TEST

START_TEST(tolerance_modes)
{
    float got[2] = {1.0f + 0x1p-23f, 2.0f};
    double want[2] = {1.0, 2.0}, s[2] = {1, 2};
    mmp_metrics_input in; input_for(&in, got, want, s, 1, 2, 2);
    mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics m;
    t.mode = MMP_TOLERANCE_BITWISE; mmp_metrics_compute(&m, &in, &t); ck_assert_int_eq(m.above_tol, 1);
    t.mode = MMP_TOLERANCE_ULPS; t.ulps = 1; mmp_metrics_compute(&m, &in, &t); ck_assert_int_eq(m.above_tol, 0);
    t.ulps = 0.5; mmp_metrics_compute(&m, &in, &t); ck_assert_int_eq(m.above_tol, 1);
    t.mode = MMP_TOLERANCE_ATOL_RTOL; t.atol = 0; t.rtol = 1e-6; mmp_metrics_compute(&m, &in, &t);
    ck_assert_int_eq(m.above_tol, 0);
}
END_TEST

START_TEST(bad_input)
{
    mmp_metrics m; mmp_tolerance t; mmp_tolerance_init(&t);
    mmp_metrics_input in; memset(&in, 0, sizeof in);
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_INVALID);
    float g = 0; double w = 0;
    input_for(&in, &g, &w, NULL, 1, 1, 0);
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_INVALID);
    input_for(&in, &g, &w, NULL, 1, 4, 1);
    in.ldd = 2;
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &t), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "ldd"));
}
END_TEST

/* mmp_metrics_subnormal_count (from the bits) against decoding every element: every format,
 * both layouts with ld padding, random bit patterns (subnormals, NaN and Inf included). */
START_TEST(subnormal_count_matches_decode)
{
    mmp_format f = (mmp_format)_i;
    const mmp_format_info *fi = mmp_format_get_info(f);
    uint64_t st = 0x9E3779B9ull * (uint64_t)(_i + 1);
    for (int lay = 0; lay < 2; lay++) {
        int64_t rows = 23, cols = 41, ld = (lay ? rows : cols) + 3;
        size_t bytes = mmp_format_bytes(f, mmp_gemm_span((mmp_layout)lay, ld, rows, cols));
        unsigned char *p = malloc(bytes);
        for (size_t t = 0; t < bytes; t++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            unsigned char v = (unsigned char)(st >> 56);
            p[t] = (st >> 20) % 3 == 0 ? 0 : v;   /* many zero bytes: many subnormals */
        }
        int64_t want = 0;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                double v = mmp_format_load(p, mmp_gemm_index((mmp_layout)lay, ld, i, j), f);
                want += fi->is_float && v != 0 && isfinite(v) && fabs(v) < fi->min_normal;
            }
        ck_assert_int_eq(mmp_metrics_subnormal_count(p, f, (mmp_layout)lay, ld, rows, cols), want);
        if (fi->is_float && fi->storage_bits <= 16) ck_assert_int_gt(want, 0);
        free(p);
    }
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_output_is_clean);
    tcase_add_loop_test(tc, subnormal_count_matches_decode, 0, MMP_FORMAT_COUNT_);
    tcase_add_test(tc, planted_error_found_with_position);
    tcase_add_test(tc, nan_inf_counted_first_and_apart);
    tcase_add_test(tc, overflow_of_the_rounded_result_is_right);
    tcase_add_test(tc, nan_excused_only_by_the_input_rounding);
    tcase_add_test(tc, alt_excuse_shared);
    tcase_add_test(tc, ulp_and_bounds_formulas);
    tcase_add_test(tc, bound_holds_for_truncation_and_catches_fp16_accumulation);
    tcase_add_test(tc, tolerance_modes);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(metrics_suite)
