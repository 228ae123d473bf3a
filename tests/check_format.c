/* check_format.c — number formats against MPFR: every 8/16-bit pattern round-trips; rounding
 * from binary64 in all four modes (and satfinite) agrees with mpfr_set_d + mpfr_subnormalize
 * using the format's precision, emin and emax, on exhaustive ties and >= 10^6 random inputs. */
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/result.h"
#include "tests/check_main.h"

static const mmp_format float_formats[] = {MMP_FORMAT_FP32, MMP_FORMAT_TF32, MMP_FORMAT_FP16,
                                           MMP_FORMAT_BF16, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2};
#define N_FLOAT (sizeof float_formats / sizeof float_formats[0])
static const mpfr_rnd_t mpfr_mode[4] = {MPFR_RNDN, MPFR_RNDZ, MPFR_RNDU, MPFR_RNDD};

/* splitmix64: the test's own reproducible stream from the printed seed. */
static uint64_t rng_state;
static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The expected rounding, computed by MPFR in the format's exponent range. */
static double mpfr_expect(double x, mmp_format f, mmp_round rnd, int sat, int *ternary)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
    int overflowed = 0;
    mpfr_t v;
    mpfr_init2(v, fi->precision);
    mpfr_set_emin(fi->emin - fi->precision + 1);
    mpfr_set_emax(fi->emax);
    mpfr_clear_flags();
    int t = mpfr_set_d(v, x, mpfr_mode[rnd]);
    t = mpfr_check_range(v, t, mpfr_mode[rnd]);
    t = mpfr_subnormalize(v, t, mpfr_mode[rnd]);
    double y = mpfr_get_d(v, MPFR_RNDN);
    overflowed = mpfr_overflow_p();
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);
    mpfr_clear(v);
    *ternary = t > 0 ? 1 : (t < 0 ? -1 : 0);
    if (isnan(x)) return x;
    int neg = signbit(x) != 0;
    int to_inf = rnd == MMP_ROUND_NEAREST_EVEN || (rnd == MMP_ROUND_UP && !neg) ||
                 (rnd == MMP_ROUND_DOWN && neg);
    if (isinf(x)) {
        if (sat) return copysign(fi->max_finite, x);
        return fi->has_inf ? x : copysign(NAN, x);
    }
    /* E4M3 has no Inf and its top binade stops at 448: beyond it is overflow. */
    if (fabs(y) > fi->max_finite || overflowed) {
        if (sat || !to_inf) return copysign(fi->max_finite, x);
        return fi->has_inf ? copysign(INFINITY, x) : copysign(NAN, x);
    }
    return y;
}

static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

static long check_one(double x, mmp_format f, mmp_round rnd, int sat)
{
    int tw, tg;
    double want = mpfr_expect(x, f, rnd, sat, &tw);
    uint64_t bits;
    mmp_format_encode(&bits, &tg, x, f, rnd, sat);
    double got = mmp_format_round(x, f, rnd, sat);
    double dec = mmp_format_decode(bits, f);
    int ok = same_value(got, want) && same_value(dec, want);
    /* the ternary value is MPFR's unless saturation or NaN changed the result */
    if (ok && !isnan(want) && !isinf(x) && fabs(want) < mmp_format_get_info(f)->max_finite && tg != tw) ok = 0;
    if (!ok)
        fprintf(stderr, "format %s rnd %d sat %d x=%a: got %a (decoded %a, t %d) want %a (t %d)\n",
                mmp_format_name(f), (int)rnd, sat, x, got, dec, tg, want, tw);
    return ok ? 0 : 1;
}

START_TEST(every_pattern_round_trips)
{
    static const mmp_format fmts[] = {MMP_FORMAT_FP16, MMP_FORMAT_BF16, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2,
                                      MMP_FORMAT_INT8, MMP_FORMAT_UINT8, MMP_FORMAT_INT4, MMP_FORMAT_UINT4};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        mmp_format f = fmts[i];
        const mmp_format_info *fi = mmp_format_get_info(f);
        uint64_t n = 1ull << fi->storage_bits;
        long bad = 0, nans = 0;
        for (uint64_t b = 0; b < n; b++) {
            double v = mmp_format_decode(b, f);
            uint64_t back;
            mmp_format_encode(&back, NULL, v, f, MMP_ROUND_NEAREST_EVEN, 0);
            if (isnan(v)) {
                nans++;
                if (!isnan(mmp_format_decode(back, f))) bad++;
                continue;
            }
            if (back != b) {
                if (bad < 5) fprintf(stderr, "%s: pattern %#llx -> %a -> %#llx\n", fi->name,
                                     (unsigned long long)b, v, (unsigned long long)back);
                bad++;
            }
            if (fi->is_float && fabs(v) > fi->max_finite && !isinf(v)) bad++;
        }
        ck_assert_msg(bad == 0, "%s: %ld patterns do not round-trip", fi->name, bad);
        if (f == MMP_FORMAT_E4M3) ck_assert_int_eq(nans, 2);          /* S.1111.111 only */
        if (f == MMP_FORMAT_E5M2) ck_assert_int_eq(nans, 2 * 3);      /* 2 signs x 3 payloads */
        if (f == MMP_FORMAT_FP16) ck_assert_int_eq(nans, 2 * 1023);
    }
}
END_TEST

START_TEST(known_values)
{
    ck_assert(mmp_format_decode(0x7e, MMP_FORMAT_E4M3) == 448.0);
    ck_assert(isnan(mmp_format_decode(0x7f, MMP_FORMAT_E4M3)));
    ck_assert(mmp_format_decode(0x01, MMP_FORMAT_E4M3) == 0x1p-9);
    ck_assert(mmp_format_decode(0x7b, MMP_FORMAT_E5M2) == 57344.0);
    ck_assert(isinf(mmp_format_decode(0x7c, MMP_FORMAT_E5M2)));
    ck_assert(mmp_format_decode(0x7bff, MMP_FORMAT_FP16) == 65504.0);
    ck_assert(mmp_format_decode(0x0001, MMP_FORMAT_FP16) == 0x1p-24);
    ck_assert(mmp_format_decode(0x3f80, MMP_FORMAT_BF16) == 1.0);
    ck_assert(mmp_format_decode(0x3f800000u, MMP_FORMAT_TF32) == 1.0);
    uint64_t b;
    mmp_format_encode(&b, NULL, 1.0 + 0x1p-11, MMP_FORMAT_TF32, MMP_ROUND_NEAREST_EVEN, 0);
    ck_assert_uint_eq(b, 0x3f800000u); /* tie to even */
    mmp_format_encode(&b, NULL, 1.0 + 0x1p-11 + 0x1p-30, MMP_FORMAT_TF32, MMP_ROUND_NEAREST_EVEN, 0);
    ck_assert_uint_eq(b, 0x3f802000u);
    ck_assert(mmp_format_round(464.0, MMP_FORMAT_E4M3, MMP_ROUND_NEAREST_EVEN, 0) == 448.0); /* tie */
    ck_assert(isnan(mmp_format_round(465.0, MMP_FORMAT_E4M3, MMP_ROUND_NEAREST_EVEN, 0)));
    ck_assert(mmp_format_round(465.0, MMP_FORMAT_E4M3, MMP_ROUND_NEAREST_EVEN, 1) == 448.0);
    ck_assert(isinf(mmp_format_round(65520.0, MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0)));
    ck_assert(mmp_format_round(65519.0, MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0) == 65504.0);
    ck_assert(mmp_format_round(1e9, MMP_FORMAT_FP16, MMP_ROUND_TOWARD_ZERO, 0) == 65504.0);
    ck_assert(mmp_format_round(-0.0, MMP_FORMAT_BF16, MMP_ROUND_UP, 0) == 0.0);
    ck_assert(signbit(mmp_format_round(-0.0, MMP_FORMAT_BF16, MMP_ROUND_UP, 0)));
    ck_assert(signbit(mmp_format_round(-1e-30, MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0)));
    ck_assert(mmp_format_round(1e-30, MMP_FORMAT_FP16, MMP_ROUND_UP, 0) == 0x1p-24);
    /* integers: rounding, wrap, saturation, NaN */
    ck_assert(mmp_format_round(2.5, MMP_FORMAT_INT8, MMP_ROUND_NEAREST_EVEN, 0) == 2.0);
    ck_assert(mmp_format_round(-2.5, MMP_FORMAT_INT8, MMP_ROUND_DOWN, 0) == -3.0);
    ck_assert(mmp_format_round(128.0, MMP_FORMAT_INT8, MMP_ROUND_NEAREST_EVEN, 0) == -128.0);
    ck_assert(mmp_format_round(128.0, MMP_FORMAT_INT8, MMP_ROUND_NEAREST_EVEN, 1) == 127.0);
    ck_assert(mmp_format_round(-1.0, MMP_FORMAT_UINT4, MMP_ROUND_NEAREST_EVEN, 0) == 15.0);
    ck_assert(mmp_format_round(-1.0, MMP_FORMAT_UINT4, MMP_ROUND_NEAREST_EVEN, 1) == 0.0);
    ck_assert(mmp_format_round(2147483648.0, MMP_FORMAT_INT32, MMP_ROUND_NEAREST_EVEN, 0) == -2147483648.0);
    ck_assert(mmp_format_round(NAN, MMP_FORMAT_INT32, MMP_ROUND_NEAREST_EVEN, 1) == 0.0);
}
END_TEST

START_TEST(int4_packing_low_nibble_first)
{
    unsigned char buf[2] = {0, 0};
    mmp_format_store(buf, 0, -1.0, MMP_FORMAT_INT4, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_format_store(buf, 1, 3.0, MMP_FORMAT_INT4, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_format_store(buf, 2, 7.0, MMP_FORMAT_UINT4, MMP_ROUND_NEAREST_EVEN, 0);
    ck_assert_uint_eq(buf[0], 0x3f);
    ck_assert_uint_eq(buf[1], 0x07);
    ck_assert(mmp_format_load(buf, 0, MMP_FORMAT_INT4) == -1.0);
    ck_assert(mmp_format_load(buf, 1, MMP_FORMAT_INT4) == 3.0);
    ck_assert(mmp_format_load(buf, 0, MMP_FORMAT_UINT4) == 15.0);
    ck_assert_uint_eq(mmp_format_bytes(MMP_FORMAT_INT4, 3), 2);
}
END_TEST

START_TEST(names)
{
    mmp_format f;
    ck_assert_int_eq(mmp_format_from_name(&f, "BF16"), MMP_STATUS_OK);
    ck_assert_int_eq(f, MMP_FORMAT_BF16);
    ck_assert_int_eq(mmp_format_from_name(&f, "e4m3fn"), MMP_STATUS_OK);
    ck_assert_int_eq(f, MMP_FORMAT_E4M3);
    ck_assert_int_eq(mmp_format_from_name(&f, "fp12"), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "fp12"));
    ck_assert_int_eq(mmp_format_from_name(&f, NULL), MMP_STATUS_INVALID);
    ck_assert_ptr_null(mmp_format_get_info((mmp_format)99));
    uint64_t b;
    ck_assert_int_eq(mmp_format_encode(&b, NULL, 1.0, (mmp_format)99, MMP_ROUND_NEAREST_EVEN, 0),
                     MMP_STATUS_INVALID);
}
END_TEST

/* Every representable value's neighbourhood: the value, the midpoints to both neighbours and
 * the doubles next to those midpoints, in all modes with and without satfinite. */
START_TEST(ties_and_boundaries_exhaustive)
{
    static const mmp_format fmts[] = {MMP_FORMAT_FP16, MMP_FORMAT_BF16, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2};
    long bad = 0, n = 0;
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        mmp_format f = fmts[i];
        uint64_t count = 1ull << mmp_format_get_info(f)->storage_bits;
        for (uint64_t b = 0; b < count; b++) {
            double v = mmp_format_decode(b, f);
            if (isnan(v) || isinf(v)) continue;
            double up = mmp_format_decode(b + 1 < count ? b + 1 : b, f);
            double mid = isfinite(up) && !isnan(up) && fabs(up) > fabs(v) ? v + (up - v) / 2 : 2 * v;
            double xs[] = {v, mid, nextafter(mid, 0), nextafter(mid, INFINITY * (mid < 0 ? -1 : 1))};
            for (int k = 0; k < 4; k++)
                for (int r = 0; r < 4; r++)
                    for (int s = 0; s < 2; s++) { bad += check_one(xs[k], f, (mmp_round)r, s); n++; }
        }
    }
    ck_assert_msg(bad == 0, "%ld of %ld conversions disagree with MPFR", bad, n);
}
END_TEST

/* >= 10^6 random inputs per format: random binary64 bit patterns scaled into and around the
 * format's range (subnormals, overflow), plus specials. Mode and satfinite drawn at random. */
START_TEST(random_against_mpfr)
{
    rng_state = mmp_check_seed ^ 0x5eedf0f0ull;
    long bad = 0;
    for (size_t i = 0; i < N_FLOAT; i++) {
        mmp_format f = float_formats[i];
        const mmp_format_info *fi = mmp_format_get_info(f);
        for (long t = 0; t < 1000000; t++) {
            uint64_t r = next_u64();
            double m = 1.0 + (double)(r >> 12) * 0x1p-52;           /* random 53-bit significand */
            int span = fi->emax - fi->emin + fi->precision + 8;
            int e = fi->emin - fi->precision - 4 + (int)(next_u64() % (uint64_t)span);
            double x = ldexp(m, e - 1);
            if (r & 1) x = -x;
            if ((r & 0xff0) == 0x10) x = (r & 2) ? INFINITY : NAN;
            if ((r & 0xff0) == 0x20) x = (r & 2) ? 0.0 : -0.0;
            bad += check_one(x, f, (mmp_round)(next_u64() & 3), (int)(next_u64() & 1));
            if (bad > 20) break;
        }
    }
    ck_assert_msg(bad == 0, "%ld random conversions disagree with MPFR", bad);
}
END_TEST

/* result.h's names: every verdict and reason set round-trips; an unknown name is
 * MMP_STATUS_INVALID with a message naming it, and leaves the output untouched. */
START_TEST(verdict_and_reason_names)
{
    for (int i = 0; i < MMP_VERDICT_COUNT_; i++) {
        mmp_verdict v = (mmp_verdict)-1;
        ck_assert_int_eq(mmp_verdict_from_name(&v, mmp_verdict_name((mmp_verdict)i)), MMP_STATUS_OK);
        ck_assert_int_eq(v, i);
    }
    mmp_verdict v = MMP_VERDICT_SKIP;
    ck_assert_int_eq(mmp_verdict_from_name(&v, "fail"), MMP_STATUS_OK);
    ck_assert_int_eq(v, MMP_VERDICT_FAIL);
    ck_assert_int_eq(mmp_verdict_from_name(&v, "maybe"), MMP_STATUS_INVALID);
    ck_assert_str_eq(mmp_error_last(), "unknown verdict 'maybe'");
    ck_assert_int_eq(v, MMP_VERDICT_FAIL);
    ck_assert_int_eq(mmp_verdict_from_name(&v, NULL), MMP_STATUS_INVALID);

    char buf[512];
    uint32_t all = (1u << MMP_REASON_COUNT_) - 1, m = 0;
    ck_assert_int_eq(mmp_reason_parse(&m, mmp_reason_format(buf, sizeof buf, all)), MMP_STATUS_OK);
    ck_assert_uint_eq(m, all);
    ck_assert_int_eq(mmp_reason_parse(&m, ""), MMP_STATUS_OK);
    ck_assert_uint_eq(m, 0);
    m = 7;
    ck_assert_int_eq(mmp_reason_parse(&m, "guard,nope,timeout"), MMP_STATUS_INVALID);
    ck_assert_str_eq(mmp_error_last(), "unknown reason 'nope'");
    ck_assert_uint_eq(m, 7);
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("encode_decode");
    tcase_add_test(tc, every_pattern_round_trips);
    tcase_add_test(tc, known_values);
    tcase_add_test(tc, int4_packing_low_nibble_first);
    tcase_add_test(tc, names);
    tcase_add_test(tc, verdict_and_reason_names);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("against_mpfr");
    tcase_set_timeout(tm, 300);
    tcase_add_test(tm, ties_and_boundaries_exhaustive);
    tcase_add_test(tm, random_against_mpfr);
    suite_add_tcase(s, tm);
    return s;
}

MMP_CHECK_MAIN(format_suite)
