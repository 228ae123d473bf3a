/* check_reference.c — the reference GEMM: the pure MPFR path and the certified path agree bit
 * for bit (binary64 and output format) on random, wide-exponent, cancelling and special-value
 * inputs, with row/col layouts, padded leading dimensions and alpha/beta; hand-made cases with
 * known answers (exact zero, output-format ties, the double-rounding trap, overflow edges);
 * integer exactness and overflow facts; bad input. Run: ctest -R check_reference (MMP_SEED=n). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>
#include <mpfr.h>

#include "mmaprobe/reference.h"
#include "tests/check_main.h"
#include "tests/lib/ref_testgen.h"

static void run_path(mmp_ref_result *r, const prob *p, mmp_ref_path path, int force)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.path = path; o.force_mpfr = force; o.threads = 2;
    mmp_ref_result_init(r);
    mmp_status st = mmp_ref_gemm(r, p->a, p->b, p->c, &p->g, &o);
    ck_assert_msg(st == MMP_STATUS_OK, "mmp_ref_gemm: %s", mmp_error_last());
}

/* The two paths (and the forced-MPFR certified path) agree bit for bit. */
static void agree(const prob *p, const char *what)
{
    mmp_ref_result rm, rc;
    run_path(&rm, p, MMP_REF_PATH_MPFR, 0);
    run_path(&rc, p, MMP_REF_PATH_CERTIFIED, 0);
    int64_t cnt = p->g.m * p->g.n;
    for (int64_t x = 0; x < cnt; x++) {
        ck_assert_msg(same_bits(rm.d64[x], rc.d64[x]), "%s: d64 differs at (%lld,%lld): mpfr %a certified %a",
                      what, (long long)(x / p->g.n), (long long)(x % p->g.n), rm.d64[x], rc.d64[x]);
        ck_assert_msg(same_bits(rm.dout[x], rc.dout[x]), "%s: dout differs at (%lld,%lld): mpfr %a certified %a",
                      what, (long long)(x / p->g.n), (long long)(x % p->g.n), rm.dout[x], rc.dout[x]);
        if (rm.i64) ck_assert_msg(rm.i64[x] == rc.i64[x], "%s: i64 differs at %lld", what, (long long)x);
    }
    ck_assert_int_eq(rm.n_int32_overflow, rc.n_int32_overflow);
    ck_assert_int_eq(rm.n_mpfr, cnt);
    /* a few elements through the single-element entry point */
    for (int t = 0; t < 3; t++) {
        int64_t x = (int64_t)(rnd64() % (uint64_t)cnt);
        double d64, dout;
        ck_assert_int_eq(mmp_ref_element(&d64, &dout, p->a, p->b, p->c, &p->g, x / p->g.n, x % p->g.n),
                         MMP_STATUS_OK);
        ck_assert(same_bits(d64, rm.d64[x]) && same_bits(dout, rm.dout[x]));
    }
    mmp_ref_result_clear(&rm);
    mmp_ref_result_clear(&rc);
}

static const struct {
    mmp_format a, b, c, d;
} combos[] = {
    {MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP16},
    {MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_BF16},
    {MMP_FORMAT_E4M3, MMP_FORMAT_E5M2, MMP_FORMAT_FP16, MMP_FORMAT_E4M3},
    {MMP_FORMAT_TF32, MMP_FORMAT_TF32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64},
    {MMP_FORMAT_FP64, MMP_FORMAT_FP32, MMP_FORMAT_FP64, MMP_FORMAT_E5M2},
    {MMP_FORMAT_INT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32},
    {MMP_FORMAT_UINT4, MMP_FORMAT_INT4, MMP_FORMAT_INT32, MMP_FORMAT_INT8},
    {MMP_FORMAT_INT8, MMP_FORMAT_UINT8, MMP_FORMAT_FP32, MMP_FORMAT_FP16},
};
enum { N_COMBOS = sizeof combos / sizeof combos[0] };

static void agree_kind(int combo, gen_kind kind, const char *name)
{
    rs = mmp_check_seed * 2654435761u + (uint64_t)combo * 97 + (uint64_t)kind * 13 + 1;
    static const double alphas[] = {1.0, -0.75, 3.0, 1.0}, betas[] = {0.0, 1.0, -0.5, 0.0};
    for (int v = 0; v < 4; v++) {
        prob p;
        int64_t m = 6 + (int64_t)(rnd64() % 7) * 2, n = 4 + (int64_t)(rnd64() % 12) * 2, k = 2 + (int64_t)(rnd64() % 40) * 2;
        if (v == 3) k = 130 + (int64_t)(rnd64() % 136) * 2;   /* longer dot products */
        prob_make(&p, combos[combo].a, combos[combo].b, combos[combo].c, combos[combo].d, m, n, k,
                  (int)(rnd64() % 8), (int)(rnd64() % 2), alphas[v], betas[v], kind);
        char what[160];
        snprintf(what, sizeof what, "%s %s*%s+%s->%s %lldx%lldx%lld alpha %g beta %g", name,
                 mmp_format_name(combos[combo].a), mmp_format_name(combos[combo].b),
                 mmp_format_name(combos[combo].c), mmp_format_name(combos[combo].d), (long long)m,
                 (long long)n, (long long)k, alphas[v], betas[v]);
        agree(&p, what);
        prob_free(&p);
    }
}

START_TEST(paths_agree_random) { agree_kind(_i, GEN_RANDOM, "random"); }
END_TEST
START_TEST(paths_agree_wide) { agree_kind(_i, GEN_WIDE, "wide"); }
END_TEST
START_TEST(paths_agree_cancel) { agree_kind(_i, GEN_CANCEL, "cancel"); }
END_TEST
START_TEST(paths_agree_special) { agree_kind(_i, GEN_SPECIAL, "special"); }
END_TEST
/* the dot stage's two-lane vector path too, where the CPU has AVX2 (which the tests above take) */
START_TEST(paths_agree_wide_no_avx2) { setenv("MMP_REF_NO_AVX2", "1", 1); agree_kind(_i, GEN_WIDE, "wide sse2"); }
END_TEST
START_TEST(paths_agree_special_no_avx2) { setenv("MMP_REF_NO_AVX2", "1", 1); agree_kind(_i, GEN_SPECIAL, "special sse2"); }
END_TEST

/* ---- hand-made known answers: K = 3 dot products, fp64 inputs (A row, B = column). ---- */

static void dot3(mmp_ref_result *res, mmp_ref_path path, const double a[3], const double b[3],
                 mmp_format out, double alpha)
{
    prob p;
    mmp_gemm_init(&p.g, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, out, 1, 1, 3);
    p.g.alpha = alpha;
    p.a = (void *)a; p.b = (void *)b; p.c = NULL;
    run_path(res, &p, path, 0);
}

static void known(const double a[3], const double b[3], mmp_format out, double alpha, double want64,
                  double want_out, const char *what)
{
    for (int path = 0; path < 2; path++) {
        mmp_ref_result r;
        dot3(&r, path == 0 ? MMP_REF_PATH_MPFR : MMP_REF_PATH_CERTIFIED, a, b, out, alpha);
        ck_assert_msg(same_bits(r.d64[0], want64), "%s (%s): d64 %a, want %a", what,
                      path ? "certified" : "mpfr", r.d64[0], want64);
        ck_assert_msg(same_bits(r.dout[0], want_out), "%s (%s): dout %a, want %a", what,
                      path ? "certified" : "mpfr", r.dout[0], want_out);
        mmp_ref_result_clear(&r);
    }
}

START_TEST(known_answers)
{
    const double ones[3] = {1, 1, 1};
    /* cancellation to exactly zero: +0; alpha = -1 gives -0 (MPFR: -1 * +0) */
    known((double[]){1.5, -1.5, 0}, ones, MMP_FORMAT_FP32, 1.0, 0.0, 0.0, "exact zero");
    known((double[]){1.5, -1.5, 0}, ones, MMP_FORMAT_FP32, -1.0, -0.0, -0.0, "exact -zero");
    known((double[]){0x1p60, 1.0, -0x1p60}, ones, MMP_FORMAT_FP16, 1.0, 1.0, 1.0, "big cancel");
    /* a tie in fp16: 1 + 2^-11 is half-way between 1 and 1 + 2^-10: even is 1 */
    known((double[]){1, 0x1p-11, 0}, ones, MMP_FORMAT_FP16, 1.0, 1 + 0x1p-11, 1.0, "fp16 tie down");
    /* the other tie: 1 + 3 2^-11 between 1 + 2^-10 (odd) and 1 + 2^-9 (even) */
    known((double[]){1, 0x1p-10, 0x1p-11}, ones, MMP_FORMAT_FP16, 1.0, 1 + 3 * 0x1p-11, 1 + 0x1p-9,
          "fp16 tie up");
    /* just above / below the tie, by less than binary64 can hold: the double-rounding trap
     * (RN64 gives the tie, RN16 of that would give 1) */
    known((double[]){1, 0x1p-11, 0x1p-60}, ones, MMP_FORMAT_FP16, 1.0, 1 + 0x1p-11, 1 + 0x1p-10,
          "above the fp16 tie");
    known((double[]){1, 0x1p-11, -0x1p-60}, ones, MMP_FORMAT_FP16, 1.0, 1 + 0x1p-11, 1.0,
          "below the fp16 tie");
    /* binary64 ties: 1 + 2^-53 rounds to 1; 1 + 2^-53 + 2^-80 to 1 + 2^-52 */
    known((double[]){1, 0x1p-53, 0}, ones, MMP_FORMAT_FP64, 1.0, 1.0, 1.0, "fp64 tie");
    known((double[]){1, 0x1p-53, 0x1p-80}, ones, MMP_FORMAT_FP64, 1.0, 1 + 0x1p-52, 1 + 0x1p-52,
          "above the fp64 tie");
    /* fp16 overflow threshold 65520 (a tie that goes to Inf); just below stays 65504 */
    known((double[]){65504, 16, 0}, ones, MMP_FORMAT_FP16, 1.0, 65520, INFINITY, "fp16 overflow tie");
    known((double[]){65504, 16, -0x1p-40}, ones, MMP_FORMAT_FP16, 1.0, 65520, 65504,
          "below the fp16 overflow");
    /* e4m3: 464 is the tie between 448 (even) and the missing 480: 448; above it: NaN */
    known((double[]){448, 16, 0}, ones, MMP_FORMAT_E4M3, 1.0, 464, 448, "e4m3 top tie");
    known((double[]){448, 16, 0x1p-45}, ones, MMP_FORMAT_E4M3, 1.0, 464, NAN, "e4m3 overflow");
    /* integer output: ties to even, then wraps */
    known((double[]){2, 0.5, 0}, ones, MMP_FORMAT_INT32, 1.0, 2.5, 2, "int32 tie");
    known((double[]){3, 0.5, 0x1p-70}, ones, MMP_FORMAT_INT32, 1.0, 3.5, 4, "int32 above");
    known((double[]){0x1p31, 1, 0}, ones, MMP_FORMAT_INT32, 1.0, 0x1p31 + 1, -0x1p31 + 1, "int32 wrap");
    /* alpha scales the exact sum once: 3 * (1 + 2^-60) */
    known((double[]){1, 0x1p-60, 0}, ones, MMP_FORMAT_FP32, 3.0, 3.0, 3.0, "alpha");
    /* special values */
    known((double[]){INFINITY, -INFINITY, 1}, ones, MMP_FORMAT_FP32, 1.0, NAN, NAN, "Inf - Inf");
    known((double[]){INFINITY, 0, 1}, (double[]){0, 1, 1}, MMP_FORMAT_FP32, 1.0, NAN, NAN, "Inf * 0");
    known((double[]){NAN, 0, 1}, ones, MMP_FORMAT_FP16, 1.0, NAN, NAN, "NaN in");
    known((double[]){INFINITY, 5, 1}, ones, MMP_FORMAT_FP16, 1.0, INFINITY, INFINITY, "Inf in");
    known((double[]){INFINITY, 5, 1}, ones, MMP_FORMAT_FP16, 0.0, NAN, NAN, "alpha 0 * Inf");
    /* subnormal result */
    known((double[]){0x1p-1074, 0x1p-1074, 0}, ones, MMP_FORMAT_FP32, 1.0, 0x1p-1073, 0.0, "subnormal");
}
END_TEST

/* Remainders of A and B at the same k: the certified path's rA B + A rB - rA rB must count the
 * tiny product once. The row max 1 puts x = 3 2^-60 below the first slice's grid. */
START_TEST(remainders_meet)
{
    float a[8] = {1, 0, 0, 0, 0, 0x3p-60f, 0, 0}, b[8] = {0, 1, 0, 0, 0, 0x5p-60f, 0, 0};
    prob p = {.a = a, .b = b, .c = NULL};
    mmp_gemm_init(&p.g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 1, 1, 8);
    for (int path = 0; path < 2; path++) {
        mmp_ref_result r;
        run_path(&r, &p, path ? MMP_REF_PATH_CERTIFIED : MMP_REF_PATH_MPFR, 0);
        ck_assert_msg(r.d64[0] == 0xfp-120, "%a", r.d64[0]);
        if (path) ck_assert_int_eq(r.n_mpfr, 0);
        mmp_ref_result_clear(&r);
    }
}
END_TEST

/* Long dot products (K = 1500: 21-bit slices), fp64 (4 slices computed) and wide fp32. */
START_TEST(long_k)
{
    rs = mmp_check_seed + 29;
    prob p;
    prob_make(&p, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_BF16, 6, 8, 1500, 5, 1,
              1.0, 0.0, GEN_RANDOM);
    agree(&p, "fp64 random K=1500");
    prob_free(&p);
    prob_make(&p, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP16, 8, 6, 1500, 2, 0,
              -1.0, 1.0, GEN_WIDE);
    agree(&p, "fp32 wide K=1500");
    prob_free(&p);
}
END_TEST

/* mmp_ref_round_out (the one place both paths turn d64 + ternary into the output format)
 * against MPFR rounding X itself: precision p, subnormals by mpfr_subnormalize in the format's
 * exponent range, overflow past max_finite to Inf (NaN for e4m3). X = d64 -/+ a tiny amount, on
 * and near the format's midpoints, subnormal midpoints and the overflow threshold. */
static double mpfr_round_fmt(mpfr_t x, mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t y;
    mpfr_init2(y, fi->precision);
    mpfr_set_emin(fi->emin - fi->precision + 1);
    mpfr_set_emax(fi->emax + 1);   /* one binade more: overflow is judged below, after rounding */
    int t = mpfr_set(y, x, MPFR_RNDN);
    t = mpfr_check_range(y, t, MPFR_RNDN);
    mpfr_subnormalize(y, t, MPFR_RNDN);
    double r = mpfr_get_d(y, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(y);
    if (fabs(r) > fi->max_finite) r = fi->has_inf ? copysign(INFINITY, r) : NAN;
    return r;
}

START_TEST(round_out_matches_mpfr)
{
    static const mmp_format fs[] = {MMP_FORMAT_FP32, MMP_FORMAT_TF32, MMP_FORMAT_FP16, MMP_FORMAT_BF16,
                                    MMP_FORMAT_E4M3, MMP_FORMAT_E5M2};
    rs = mmp_check_seed + 31;
    mpfr_t x;
    mpfr_init2(x, 300);
    long checked = 0;
    for (size_t fi = 0; fi < sizeof fs / sizeof fs[0]; fi++) {
        mmp_format f = fs[fi];
        const mmp_format_info *inf = mmp_format_get_info(f);
        for (int t = 0; t < 20000; t++) {
            /* a random format value v and its upper neighbour: the midpoint is a double */
            double v = fabs(value_for(f, (rnd64() & 1) ? GEN_WIDE : GEN_RANDOM));
            if (rnd64() % 8 == 0) v = inf->max_finite;
            double up = mmp_format_round(nextafter(v, INFINITY), f, MMP_ROUND_UP, 0);
            if (!isfinite(up)) up = v + (v - mmp_format_round(nextafter(v, 0), f, MMP_ROUND_DOWN, 1));
            double d64 = v + (up - v) / 2;   /* midpoint or the overflow threshold */
            int kind = (int)(rnd64() % 4);
            if (kind == 3) d64 = nextafter(d64, (rnd64() & 1) ? INFINITY : 0.0);
            if (rnd64() & 1) d64 = -d64;
            for (int tern = -1; tern <= 1; tern++) {
                mpfr_set_d(x, d64, MPFR_RNDN);
                if (tern != 0 && d64 != 0) {   /* X = d64 - tern * tiny: d64 = RN64(X) */
                    mpfr_t tiny;
                    mpfr_init2(tiny, 53);
                    mpfr_set_d(tiny, fabs(d64), MPFR_RNDN);
                    mpfr_mul_2si(tiny, tiny, -80, MPFR_RNDN);
                    if (tern > 0) mpfr_sub(x, x, tiny, MPFR_RNDN); else mpfr_add(x, x, tiny, MPFR_RNDN);
                    mpfr_clear(tiny);
                }
                double want = mpfr_round_fmt(x, f);
                double got = mmp_ref_round_out(d64, d64 == 0 ? 0 : tern, f);
                ck_assert_msg(same_bits(got, want) || (isnan(got) && isnan(want)),
                              "%s: round_out(%a, %d) = %a, MPFR says %a", mmp_format_name(f), d64, tern, got, want);
                checked++;
            }
        }
    }
    mpfr_clear(x);
    ck_assert(checked > 100000);
}
END_TEST

/* ---- integers ---- */

START_TEST(integer_exact_and_overflow)
{
    /* int32 inputs 2^16: K = 2 gives 2^33 (int32 overflow), wraps to 0 in int32 */
    int32_t a[2 * 2] = {65536, 65536, 65536, 65536}, b[2 * 2] = {65536, 65536, 65536, 65536};
    prob p = {.a = a, .b = b, .c = NULL};
    mmp_gemm_init(&p.g, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_INT32, 2, 2, 2);
    for (int path = 0; path < 2; path++) {
        mmp_ref_result r;
        run_path(&r, &p, path ? MMP_REF_PATH_CERTIFIED : MMP_REF_PATH_MPFR, 0);
        ck_assert(r.is_integer && r.i64);
        ck_assert_int_eq(r.n_int32_overflow, 4);
        ck_assert_int_eq(r.n_int64_overflow, 0);
        ck_assert(r.i64[3] == ((int64_t)1 << 33) && r.d64[3] == 0x1p33 && r.dout[3] == 0.0);
        mmp_ref_result_clear(&r);
    }
    /* 2^30 * 2^30 * 4 = 2^62: beyond DGEMM exactness, the int128 loop; fits int64 */
    int32_t c4[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
    prob q = {.a = c4, .b = c4, .c = NULL};
    mmp_gemm_init(&q.g, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_FP32, 1, 1, 4);
    mmp_ref_result r;
    run_path(&r, &q, MMP_REF_PATH_CERTIFIED, 0);
    ck_assert(r.i64[0] == ((int64_t)1 << 62) && r.d64[0] == 0x1p62 && r.dout[0] == 0x1p62);
    ck_assert_int_eq(r.n_int32_overflow, 1);
    ck_assert_int_eq(r.n_gemms, 0);
    mmp_ref_result_clear(&r);
    /* 2^31-ish squared times 8: beyond int64, counted, values from MPFR */
    int32_t big[8];
    for (int t = 0; t < 8; t++) big[t] = INT32_MIN;
    prob s = {.a = big, .b = big, .c = NULL};
    mmp_gemm_init(&s.g, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_INT32, MMP_FORMAT_FP32, 1, 1, 8);
    for (int path = 0; path < 2; path++) {
        run_path(&r, &s, path ? MMP_REF_PATH_CERTIFIED : MMP_REF_PATH_MPFR, 0);
        ck_assert_int_eq(r.n_int64_overflow, 1);
        ck_assert(r.i64[0] == INT64_MAX && r.d64[0] == 0x1p65 && r.dout[0] == 0x1p65);
        mmp_ref_result_clear(&r);
    }
}
END_TEST

/* ---- the certified path's cost on plain data, and the |A||B| bound ---- */

START_TEST(certified_rarely_needs_mpfr)
{
    rs = mmp_check_seed + 7;
    prob p;
    prob_make(&p, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP16, 64, 64, 256, 0, 0,
              1.0, 0.0, GEN_RANDOM);
    mmp_ref_result r;
    run_path(&r, &p, MMP_REF_PATH_CERTIFIED, 0);
    /* half an fp16 ulp is 2^30 binary64 ulps: ties are hopeless to hit; binary64 decisions fail
     * with probability ~ (bound / half-ulp), and the bound is 0 for these inputs. */
    ck_assert_msg(r.n_mpfr <= 64 * 64 / 100, "n_mpfr %lld", (long long)r.n_mpfr);
    ck_assert_int_eq(r.slices_a, 2);   /* beta 22: 3 slices computed, 2 x 2 pairs used */
    ck_assert_int_eq(r.n_gemms, 4);
    mmp_ref_result_clear(&r);
    agree(&p, "fp32 64x64x256");
    prob_free(&p);
}
END_TEST

START_TEST(absbound_is_an_upper_bound)
{
    rs = mmp_check_seed + 11;
    prob p;
    prob_make(&p, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP32, 9, 7, 50, 3, 1,
              -2.0, 0.5, GEN_WIDE);
    mmp_ref_options o; mmp_ref_options_init(&o);
    o.want_absbound = 1;
    mmp_ref_result r; mmp_ref_result_init(&r);
    ck_assert_int_eq(mmp_ref_gemm(&r, p.a, p.b, p.c, &p.g, &o), MMP_STATUS_OK);
    /* the exact S_ij through MPFR on |A|, |B|, |C| with |alpha|, |beta| */
    prob q = p;
    q.g.alpha = 2.0; q.g.beta = 0.5;
    size_t sa = mmp_gemm_span(p.g.la, p.g.lda, 9, 50), sb = mmp_gemm_span(p.g.lb, p.g.ldb, 50, 7),
           sc = mmp_gemm_span(p.g.lc, p.g.ldc, 9, 7);
    double *aa = malloc(sa * 8), *bb = malloc(sb * 8), *cc = malloc(sc * 8);
    for (size_t t = 0; t < sa; t++) aa[t] = fabs(((double *)p.a)[t]);
    for (size_t t = 0; t < sb; t++) bb[t] = fabs(((double *)p.b)[t]);
    for (size_t t = 0; t < sc; t++) cc[t] = fabs(((double *)p.c)[t]);
    q.a = aa; q.b = bb; q.c = cc;
    mmp_ref_result e;
    run_path(&e, &q, MMP_REF_PATH_MPFR, 0);
    for (int64_t x = 0; x < 63; x++) {
        ck_assert_msg(r.absbound[x] >= e.d64[x], "absbound %a < exact %a", r.absbound[x], e.d64[x]);
        ck_assert(r.absbound[x] <= e.d64[x] * (1 + 1e-12) + 0x1p-1060);
    }
    mmp_ref_result_clear(&r); mmp_ref_result_clear(&e);
    free(aa); free(bb); free(cc);
    prob_free(&p);
}
END_TEST

/* Every bit pattern of the narrow formats through the loader (which reads them from a table
 * of decoded values when the matrix has at least as many elements as patterns): A is the M x 1
 * column of all 2^bits patterns, in both layouts with padded leading dimensions, B = 1, so D
 * is A's values exactly (binary64 out). */
START_TEST(load_every_pattern)
{
    static const mmp_format fmts[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP16, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2,
                                      MMP_FORMAT_INT8, MMP_FORMAT_UINT4, MMP_FORMAT_INT4};
    for (int q = 0; q < 7; q++)
        for (int layout = 0; layout < 2; layout++) {
            mmp_format f = fmts[q];
            int bits = mmp_format_get_info(f)->storage_bits;
            int64_t m = (int64_t)1 << bits;
            mmp_gemm g;
            mmp_gemm_init(&g, f, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, m, 1, 1);
            g.la = layout ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
            g.lda = layout ? m + 2 : 4;
            size_t bytes = ((size_t)(layout ? g.lda : m * g.lda) * (size_t)bits + 7) / 8;
            unsigned char *a = calloc(bytes + 8, 1);
            for (int64_t x = 0; x < m; x++)
                mmp_format_store_bits(a, mmp_gemm_index(g.la, g.lda, x, 0), (uint64_t)x, f);
            double one = 1.0;
            mmp_ref_result r;
            mmp_ref_options o;
            mmp_ref_options_init(&o);
            o.threads = 2;
            mmp_ref_result_init(&r);
            ck_assert_msg(mmp_ref_gemm(&r, a, &one, NULL, &g, &o) == MMP_STATUS_OK, "%s", mmp_error_last());
            for (int64_t x = 0; x < m; x++) {
                double want = mmp_format_decode((uint64_t)x, f);
                ck_assert_msg(isnan(want) ? isnan(r.d64[x]) : same_bits(want, r.d64[x]),
                              "%s pattern 0x%llx (%s): %a, want %a", mmp_format_name(f), (unsigned long long)x,
                              layout ? "col" : "row", r.d64[x], want);
            }
            mmp_ref_result_clear(&r);
            free(a);
        }
}
END_TEST

/* ---- bad input: a status and a message, never a crash ---- */

START_TEST(bad_input)
{
    float a[4] = {1, 2, 3, 4};
    mmp_ref_result r; mmp_ref_result_init(&r);
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 2, 2, 2);
    mmp_error_clear();
    ck_assert_int_eq(mmp_ref_gemm(&r, NULL, a, NULL, &g, NULL), MMP_STATUS_INVALID);
    ck_assert(strlen(mmp_error_last()) > 0 && !strchr(mmp_error_last(), '\n'));
    ck_assert_int_eq(mmp_ref_gemm(&r, a, NULL, NULL, &g, NULL), MMP_STATUS_INVALID);
    g.beta = 1.0;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &g, NULL), MMP_STATUS_INVALID);
    g.beta = 0.0;
    mmp_gemm h = g; h.k = 0;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &h, NULL), MMP_STATUS_INVALID);
    h = g; h.lda = -1;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &h, NULL), MMP_STATUS_INVALID);
    h = g; h.lb = MMP_LAYOUT_COL; h.ldb = 1;   /* ld < rows */
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &h, NULL), MMP_STATUS_INVALID);
    h = g; h.a = (mmp_format)99;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &h, NULL), MMP_STATUS_INVALID);
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, NULL, NULL), MMP_STATUS_INVALID);
    ck_assert_int_eq(mmp_ref_gemm(NULL, a, a, NULL, &g, NULL), MMP_STATUS_INVALID);
    mmp_ref_options o; mmp_ref_options_init(&o); o.path = (mmp_ref_path)7;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &g, &o), MMP_STATUS_INVALID);
    double d64, dout;
    ck_assert_int_eq(mmp_ref_element(&d64, &dout, a, a, NULL, &g, 2, 0), MMP_STATUS_INVALID);
    ck_assert(r.d64 == NULL);
#ifndef MMP_HAVE_CUDA
    o.path = MMP_REF_PATH_CUDA;
    ck_assert_int_eq(mmp_ref_gemm(&r, a, a, NULL, &g, &o), MMP_STATUS_UNSUPPORTED);
#endif
    mmp_ref_result_clear(&r);
}
END_TEST

/* The list route of the CPU path (ref_sparse.c), forced, against MPFR bit for bit, with its
 * DGEMM twin on the same operands; the route must have run (r.lists) wherever
 * it is allowed (slices of at most 25 bits: K >= 32), or the test would prove nothing. */
static void lists_agree(const prob *p, int slices, int levels, const char *what)
{
    mmp_ref_result rm, rl, rd;
    run_path(&rm, p, MMP_REF_PATH_MPFR, 0);
    for (int route = 1; route <= 2; route++) {
        mmp_ref_result *r = route == 1 ? &rl : &rd;
        mmp_ref_options o;
        mmp_ref_options_init(&o);
        o.threads = 2; o.lists = route; o.slices = slices; o.levels = levels;
        mmp_ref_result_init(r);
        ck_assert_msg(mmp_ref_gemm(r, p->a, p->b, p->c, &p->g, &o) == MMP_STATUS_OK, "%s: %s", what, mmp_error_last());
    }
    int integer = rl.is_integer || rl.i64;
    if (p->g.k >= 32 && !integer)
        ck_assert_msg(rl.lists && rl.n_gemms == 0, "%s: the list route did not run", what);
    ck_assert_msg(!rd.lists && rd.n_list_products == 0, "%s: the DGEMM route made lists", what);
    for (int64_t x = 0; x < p->g.m * p->g.n; x++) {
        ck_assert_msg(same_bits(rm.d64[x], rl.d64[x]) && same_bits(rm.dout[x], rl.dout[x]),
                      "%s: lists differ at (%lld,%lld): mpfr %a %a, lists %a %a", what, (long long)(x / p->g.n),
                      (long long)(x % p->g.n), rm.d64[x], rm.dout[x], rl.d64[x], rl.dout[x]);
        ck_assert(same_bits(rd.d64[x], rl.d64[x]) && same_bits(rd.dout[x], rl.dout[x]));
    }
    mmp_ref_result_clear(&rm); mmp_ref_result_clear(&rl); mmp_ref_result_clear(&rd);
}

START_TEST(lists_agree_kinds)
{
    static const gen_kind kinds[] = {GEN_RANDOM, GEN_WIDE, GEN_CANCEL, GEN_SPECIAL};
    static const char *const names[] = {"random", "wide", "cancel", "special"};
    static const int64_t ks[] = {34, 64, 200, 260};   /* even: the 4-bit formats pack pairs */
    for (int q = 0; q < 4; q++) {
        rs = mmp_check_seed * 2654435761u + (uint64_t)_i * 31 + (uint64_t)q * 7 + 5;
        prob p;
        int64_t m = 6 + (int64_t)(rnd64() % 10) * 2, n = 4 + (int64_t)(rnd64() % 10) * 2, k = ks[(q + _i) % 4];
        double beta = q == 2 ? 0.5 : 0.0;
        prob_make(&p, combos[_i].a, combos[_i].b, combos[_i].c, combos[_i].d, m, n, k, (int)(rnd64() % 8),
                  (int)(rnd64() % 2), q == 3 ? -1.5 : 1.0, beta, kinds[q]);
        char what[160];
        snprintf(what, sizeof what, "lists %s %s*%s->%s %lldx%lldx%lld", names[q], mmp_format_name(combos[_i].a),
                 mmp_format_name(combos[_i].b), mmp_format_name(combos[_i].d), (long long)m, (long long)n, (long long)k);
        lists_agree(&p, 0, 0, what);
        lists_agree(&p, 0, 4, what);   /* a triangle: 3 x 3 slices, pairs s + t <= 4 */
        prob_free(&p);
    }
}
END_TEST

/* Thin shapes: one row, one column, K at the list route's smallest (32: 25-bit slices). */
START_TEST(lists_edge_shapes)
{
    static const int64_t shapes[][3] = {{1, 1, 32}, {1, 37, 64}, {33, 1, 128}, {2, 2, 1030}};
    for (int q = 0; q < 4; q++)
        for (int kind = GEN_RANDOM; kind <= GEN_SPECIAL; kind++) {
            rs = mmp_check_seed * 977u + (uint64_t)q * 13 + (uint64_t)kind;
            prob p;
            prob_make(&p, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, shapes[q][0], shapes[q][1],
                      shapes[q][2], 0, 0, 1.0, 0.0, (gen_kind)kind);
            char what[96];
            snprintf(what, sizeof what, "lists bf16 %lldx%lldx%lld kind %d", (long long)shapes[q][0],
                     (long long)shapes[q][1], (long long)shapes[q][2], kind);
            lists_agree(&p, 0, 0, what);
            prob_free(&p);
        }
}
END_TEST

/* Dense planes through the lists, where a level's sum must be flushed inside the level:
 * binary64 entries q1 2^-23 + q2 2^-47 with q1 near 0.75 2^23 and q2 near the largest digit
 * (scale exponent 1, 24-bit slices at K = 128, every digit positive) give level 3 (pairs
 * (1,2) and (2,1)) 256 products of about 2^45.6 per element: past 2^53 unless the row is
 * flushed after 128 of them. C = -RN64(AB) with beta = 1 leaves X = AB - RN64(AB), whose
 * last bits are those level-3 bits, so a sum that rounded changes d64. */
START_TEST(lists_flush_within_a_level)
{
    rs = mmp_check_seed + 101;
    prob p;
    int64_t m = 6, n = 5, k = 128;
    prob_make(&p, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, m, n, k, 0, 0, 1.0, 1.0,
              GEN_RANDOM);
    double *a = p.a, *b = p.b, *c = p.c;
    for (int64_t x = 0; x < m * k + k * n; x++) {
        double q1 = 0x1.8p22 + (double)(rnd64() % 4096), q2 = 0x1p23 - 1.0 - (double)(rnd64() % 0x200000);
        double v = ldexp(q1, -23) + ldexp(q2, -47);
        if (x < m * k) a[x] = v; else b[x - m * k] = v;
    }
    mmp_ref_result rm;
    double beta = p.g.beta;
    p.g.beta = 0.0;
    run_path(&rm, &p, MMP_REF_PATH_MPFR, 0);
    for (int64_t x = 0; x < m * n; x++) c[x] = -rm.d64[x];
    mmp_ref_result_clear(&rm);
    p.g.beta = beta;
    lists_agree(&p, 2, 0, "lists fp64 6x5x128, 2 x 2 slices, C = -RN64(AB)");
    prob_free(&p);
}
END_TEST

static Suite *reference_suite(void)
{
    Suite *s = suite_create("reference");
    TCase *t = tcase_create("paths agree");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, paths_agree_random, 0, N_COMBOS);
    tcase_add_loop_test(t, paths_agree_wide, 0, N_COMBOS);
    tcase_add_loop_test(t, paths_agree_cancel, 0, N_COMBOS);
    tcase_add_loop_test(t, paths_agree_special, 0, N_COMBOS);
    tcase_add_loop_test(t, paths_agree_wide_no_avx2, 0, N_COMBOS);
    tcase_add_loop_test(t, paths_agree_special_no_avx2, 0, N_COMBOS);
    tcase_add_loop_test(t, lists_agree_kinds, 0, N_COMBOS);
    tcase_add_test(t, lists_flush_within_a_level);
    tcase_add_test(t, lists_edge_shapes);
    suite_add_tcase(s, t);
    TCase *k = tcase_create("known answers");
    tcase_add_test(k, known_answers);
    tcase_add_test(k, remainders_meet);
    tcase_add_test(k, round_out_matches_mpfr);
    tcase_add_test(k, long_k);
    tcase_add_test(k, integer_exact_and_overflow);
    tcase_add_test(k, certified_rarely_needs_mpfr);
    tcase_add_test(k, absbound_is_an_upper_bound);
    tcase_add_test(k, load_every_pattern);
    tcase_add_test(k, bad_input);
    suite_add_tcase(s, k);
    return s;
}

MMP_CHECK_MAIN(reference_suite)
