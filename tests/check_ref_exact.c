/* check_ref_exact.c — the exact long-accumulator evaluator (reference/ref_exact.c) against pure
 * MPFR (ref_mpfr_element), bit for bit, on every kind of data that breaks a fast reference:
 * the whole binary64 and fp32 exponent ranges with subnormals, NaN/Inf/signed zeros anywhere,
 * exact cancellation to zero, results beyond the double range, and every alpha/beta kind, for
 * every float output format. A planted error (one ulp off) must be seen by the comparison. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/format.h"
#include "reference/ref_internal.h"
#include "tests/check_main.h"

enum { D_UNIFORM, D_WIDE32, D_WIDE64, D_SPECIAL, D_CANCEL, D_ZEROS, D_HUGE, D_COUNT };
static const char *const dist_name[D_COUNT] = {"uniform", "wide32", "wide64", "special", "cancel", "zeros", "huge"};

static double draw(mmp_rng_stream *r, int dist, mmp_format f)
{
    double u = mmp_rng_stream_uniform(r), sg = (mmp_rng_stream_u64(r) & 1) ? -1.0 : 1.0;
    double m = 1.0 + mmp_rng_stream_uniform(r);
    switch (dist) {
    case D_UNIFORM: return mmp_format_round(2.0 * u - 1.0, f, MMP_ROUND_NEAREST_EVEN, 0);
    case D_WIDE32: return mmp_format_round(sg * ldexp(m, -150 + (int)(u * 278)), f, MMP_ROUND_NEAREST_EVEN, 0);
    case D_WIDE64: {
        double v = sg * ldexp(m, -1076 + (int)(u * 2100));
        return isfinite(v) ? v : sg * 0x1p1000;
    }
    case D_SPECIAL: {
        static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1.fffffep127, 0x1p-149, -0x1p-149, 1.0};
        if (u < 0.06) return sp[mmp_rng_stream_u64(r) % 9];
        return mmp_format_round(sg * m, f, MMP_ROUND_NEAREST_EVEN, 0);
    }
    case D_ZEROS: return u < 0.5 ? -0.0 : (u < 0.8 ? 0.0 : mmp_format_round(sg * m, f, MMP_ROUND_NEAREST_EVEN, 0));
    case D_HUGE: return sg * ldexp(m, 1000 + (int)(u * 23));
    default: return mmp_format_round(sg * m, f, MMP_ROUND_NEAREST_EVEN, 0);
    }
}

static int same_bits(double x, double y)
{
    if (isnan(x) && isnan(y)) return 1;
    uint64_t a, b;
    memcpy(&a, &x, 8);
    memcpy(&b, &y, 8);
    return a == b;
}

/* One problem of M x N x K of distribution dist with (alpha, beta), every element compared;
 * returns the number of elements that differ. plant: the exact side's d64 moved by one ulp. */
static int64_t compare(int dist, mmp_format in, mmp_format out, int64_t M, int64_t N, int64_t K, double alpha,
                       double beta, uint64_t seed, int plant)
{
    mmp_gemm g;
    mmp_gemm_init(&g, in, in, out, out, M, N, K);
    g.alpha = alpha;
    g.beta = beta;
    ref_data d = {0};
    d.g = &g; d.m = M; d.n = N; d.k = K; d.threads = 1;
    d.a64 = malloc((size_t)(M * K) * sizeof(double));
    d.b64 = malloc((size_t)(K * N) * sizeof(double));
    d.c64 = malloc((size_t)(M * N) * sizeof(double));
    mmp_rng_stream r;
    mmp_rng_stream_init(&r, seed, (uint64_t)dist * 131 + (uint64_t)out);
    for (int64_t t = 0; t < M * K; t++) d.a64[t] = draw(&r, dist, in);
    for (int64_t t = 0; t < K * N; t++) d.b64[t] = draw(&r, dist, in);
    if (dist == D_CANCEL)   /* row i, column j: the second half of the products negates the first */
        for (int64_t i = 0; i < M; i++)
            for (int64_t k = 0; k < K / 2; k++) {
                d.a64[i * K + K / 2 + k] = -d.a64[i * K + k];
                for (int64_t j = 0; j < N; j++) d.b64[j * K + K / 2 + k] = d.b64[j * K + k];
            }
    for (int64_t t = 0; t < M * N; t++) d.c64[t] = draw(&r, dist == D_CANCEL ? D_ZEROS : dist, out);
    ref_mpfr_ws *w = ref_mpfr_ws_new(K);
    ref_special sp;
    ck_assert_int_eq(ref_special_lists(&sp, &d), MMP_STATUS_OK);
    int64_t bad = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double m64, mout, e64 = -1, eout = -1;
            int64_t i64;
            int fits, o32;
            ref_mpfr_element(&m64, &mout, &i64, &fits, &o32, w, &d, i, j);
            ck_assert_int_eq(ref_exact_element(&e64, &eout, &d, i, j), 1);
            if (plant && i == M / 2 && j == N / 2 && isfinite(e64)) e64 = nextafter(e64, INFINITY);
            if (!same_bits(m64, e64) || !same_bits(mout, eout)) {
                if (!plant && bad < 3)
                    printf("%s %s->%s alpha %a beta %a (%lld,%lld): mpfr %a %a, exact %a %a\n", dist_name[dist],
                           mmp_format_name(in), mmp_format_name(out), alpha, beta, (long long)i, (long long)j,
                           m64, mout, e64, eout);
                bad++;
            }
            /* the special-value path: every element of a row or column with a NaN/Inf */
            if (sp.a_ptr[i + 1] > sp.a_ptr[i] || sp.b_ptr[j + 1] > sp.b_ptr[j]) {
                double s64 = -1, sout = -1;
                int got = ref_special_element(&s64, &sout, &sp, &d, i, j);
                if (!got || !same_bits(m64, s64) || !same_bits(mout, sout)) {
                    if (!plant && bad < 3)
                        printf("special path %s alpha %a beta %a (%lld,%lld): mpfr %a, special %d %a\n",
                               dist_name[dist], alpha, beta, (long long)i, (long long)j, m64, got, s64);
                    bad++;
                }
            }
        }
    ref_special_free(&sp);
    ref_mpfr_ws_free(w);
    free(d.a64); free(d.b64); free(d.c64);
    return bad;
}

static const mmp_format outs[] = {MMP_FORMAT_FP64, MMP_FORMAT_FP32, MMP_FORMAT_TF32, MMP_FORMAT_FP16,
                                  MMP_FORMAT_BF16, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2};
static const double alphas[] = {1.0, -0.75, 3.0, 0.0, -0.0, 0x1p-900, 0x1p900, -INFINITY};
static const double betas[] = {0.0, 1.0, -1.0, 0.5, 0x1p-1000, INFINITY};

START_TEST(test_every_distribution)
{
    int dist = _i;
    mmp_format in = dist == D_WIDE64 || dist == D_HUGE ? MMP_FORMAT_FP64 : MMP_FORMAT_FP32;
    int64_t bad = 0;
    for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++)
        for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++)
            for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
                if (a && b && (a + b) % 3) continue;   /* a third of the combinations, every one of each */
                int64_t K = (int64_t)1 + (int64_t)((o * 7 + a * 5 + b * 3) % 6) * 37;
                bad += compare(dist, in, outs[o], 5, 4, K, alphas[a], betas[b], mmp_check_seed + o, 0);
            }
    ck_assert_msg(bad == 0, "%s: %lld elements differ from MPFR", dist_name[dist], (long long)bad);
}
END_TEST

START_TEST(test_long_dot_products)   /* K = 4096: carries across many limbs */
{
    for (int dist = 0; dist < D_COUNT; dist++) {
        mmp_format in = dist == D_WIDE64 || dist == D_HUGE ? MMP_FORMAT_FP64 : MMP_FORMAT_FP32;
        ck_assert_int_eq(compare(dist, in, MMP_FORMAT_FP32, 2, 3, 4096, 1.0, 0.0, mmp_check_seed, 0), 0);
        ck_assert_int_eq(compare(dist, in, MMP_FORMAT_BF16, 2, 2, 4096, -0.75, 1.0, mmp_check_seed + 1, 0), 0);
    }
}
END_TEST

START_TEST(test_comparison_sees_a_planted_ulp)
{
    ck_assert_int_eq(compare(D_UNIFORM, MMP_FORMAT_FP32, MMP_FORMAT_FP64, 4, 4, 64, 1.0, 0.0, mmp_check_seed, 1), 1);
}
END_TEST

START_TEST(test_integer_output_declined)
{
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_INT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32, 1, 1, 2);
    double a[2] = {3, -4}, b[2] = {5, 6}, d64 = 7, dout = 7;
    ref_data d = {0};
    d.g = &g; d.m = 1; d.n = 1; d.k = 2; d.a64 = a; d.b64 = b; d.threads = 1;
    ck_assert_int_eq(ref_exact_element(&d64, &dout, &d, 0, 0), 0);
    ck_assert(d64 == 7 && dout == 7);   /* nothing written */
}
END_TEST

static Suite *ref_exact_suite(void)
{
    Suite *s = suite_create("ref_exact");
    TCase *t = tcase_create("mpfr");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_every_distribution, 0, D_COUNT);
    tcase_add_test(t, test_long_dot_products);
    tcase_add_test(t, test_comparison_sees_a_planted_ulp);
    tcase_add_test(t, test_integer_output_declined);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(ref_exact_suite)
