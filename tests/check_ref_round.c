/* check_ref_round.c — reference/ref_round.h (the __host__ __device__ format functions the device
 * reference decides with) against format.c and against the original host-only decision code
 * (kept below as the oracle), on every format, every rounding mode, with and without
 * satfinite, over random values, subnormals, midpoints, the overflow threshold and specials.
 *
 * The host model of the device path's version 2 (ref_v2_host.c: its per-element functions,
 * plan, lists and bounds on the CPU) agrees bit for bit with pure MPFR on random, wide,
 * cancelling, special-value and far-entry problems, every output format, alpha and beta C.
 * Also: problems with entries far below their row/column maximum (prob_far) drive the certified
 * CPU path into both remainder modes (bound and exact lists), and it agrees with pure MPFR there.
 *
 *   build/suites/check_ref_round            (ctest -L cpu; MMP_SEED=n to reproduce)
 */
#include "tests/check_main.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/reference.h"
#include "reference/ref_round.h"
#include "reference/ref_v2.h"
#include "tests/lib/ref_testgen.h"

/* ---- the oracle: an independent host-only implementation of the decision (format.c rounding) ---- */

static double old_round_ne(double x, mmp_format f)
{
    if (f == MMP_FORMAT_FP64) return x;
    if (f == MMP_FORMAT_FP32) return (double)(float)x;
    return mmp_format_round(x, f, MMP_ROUND_NEAREST_EVEN, 0);
}

static int old_same(double x, double y) { return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)); }

static int old_is_boundary(double a, mmp_format f, const mmp_format_info *fi)
{
    if (a > fi->max_finite) {
        double pred = mmp_format_round(nextafter(fi->max_finite, 0.0), f, MMP_ROUND_DOWN, 1);
        return a == fi->max_finite + (fi->max_finite - pred) / 2;
    }
    double lo = mmp_format_round(a, f, MMP_ROUND_DOWN, 1), hi = mmp_format_round(a, f, MMP_ROUND_UP, 1);
    if (lo == hi) return 0;
    return a - lo == hi - a;
}

static double old_round_out(double d64, int ternary, mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (ternary == 0 || !isfinite(d64) || f == MMP_FORMAT_FP64 || !fi->is_float) return old_round_ne(d64, f);
    double nb = nextafter(d64, ternary > 0 ? -INFINITY : INFINITY);
    double r0 = old_round_ne(d64, f), r1 = old_round_ne(nb, f);
    if (old_same(r0, r1)) return r0;
    return old_is_boundary(fabs(d64), f, fi) ? r1 : r0;
}

static int old_decide(double *d64, double *dout, double sh, double sl, double E, mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (!fi || !(E >= 0.0) || isinf(E)) return 0;
    double a = fabs(sh);
    if (!(a >= 0x1p-960 && a <= DBL_MAX)) return 0;
    if (E == 0.0 && fi->is_float) {
        *d64 = sh;
        *dout = old_round_out(sh, sl > 0 ? -1 : (sl < 0 ? 1 : 0), f);
        return 1;
    }
    double W = E == 0.0 ? fabs(sl) : (fabs(sl) + E) * (1.0 + 0x1p-50);
    double hu_up = (nextafter(sh, INFINITY) - sh) * 0.5, hu_dn = (sh - nextafter(sh, -INFINITY)) * 0.5;
    if (!(W < hu_up && W < hu_dn)) return 0;
    if (f == MMP_FORMAT_FP64) {   /* X strictly within half an ulp of sh on both sides */
        *d64 = *dout = sh;
        return 1;
    }
    double lo = W == 0.0 ? sh : nextafter(sh - W, -INFINITY), hi = W == 0.0 ? sh : nextafter(sh + W, INFINITY);
    if (fi->is_float) {
        double r0 = old_round_ne(lo, f), r1 = old_round_ne(hi, f);
        if (!old_same(r0, r1)) return 0;
        *d64 = sh; *dout = r0;
        return 1;
    }
    double n0 = nearbyint(lo), n1 = nearbyint(hi);
    if (n0 != n1) return 0;
    *d64 = sh;
    *dout = mmp_format_round(n0, f, MMP_ROUND_NEAREST_EVEN, 0);
    return 1;
}

/* ---- interesting doubles for format f ---- */

/* A value near f's range: random magnitudes across (and a little beyond) its exponents,
 * values of f and their midpoints (+- one double), max, the overflow threshold, specials. */
static double probe_value(const mmp_format_info *fi)
{
    int lo = fi->is_float ? fi->emin - fi->precision - 3 : -3, hi = fi->is_float ? fi->emax + 2 : 36;
    if (fi->format == MMP_FORMAT_FP64) { lo = -1080; hi = 1024; }
    double x;
    switch (rnd64() % 8) {
    case 0: case 1: case 2:
        x = ldexp(0.5 + 0.5 * urand(), lo + (int)(urand() * (hi - lo + 1)));
        break;
    case 3: case 4: {   /* a value of f, a midpoint, or one double beside them */
        double v = ldexp(0.5 + 0.5 * urand(), lo + (int)(urand() * (hi - lo + 1)));
        double a = mmp_format_round(v, fi->format, MMP_ROUND_DOWN, 1);
        double b = mmp_format_round(v, fi->format, MMP_ROUND_UP, 1);
        x = rnd64() % 2 ? a : a + (b - a) / 2;
        int nudge = (int)(rnd64() % 3) - 1;
        if (nudge) x = nextafter(x, nudge * INFINITY);
        break;
    }
    case 5: {   /* around max and the overflow threshold */
        double ulp = fi->is_float ? fi->max_finite - mmp_format_round(nextafter(fi->max_finite, 0), fi->format, MMP_ROUND_DOWN, 1) : 1.0;
        double pts[] = {fi->max_finite, fi->max_finite + ulp / 2, fi->max_finite + ulp, fi->max_finite - ulp / 2};
        x = pts[rnd64() % 4];
        int nudge = (int)(rnd64() % 3) - 1;
        if (nudge) x = nextafter(x, nudge * INFINITY);
        break;
    }
    case 6: {   /* around the smallest subnormal and normal */
        double pts[] = {fi->min_subnormal, fi->min_subnormal / 2, fi->min_normal, fi->min_subnormal * 1.5, 0.0};
        x = pts[rnd64() % 5];
        int nudge = (int)(rnd64() % 3) - 1;
        if (nudge) x = nextafter(x, nudge * INFINITY);
        break;
    }
    default: {
        double pts[] = {NAN, INFINITY, 0.0, 1.0, 0.5, 2.5, 3.5, 1e300, 1024.0};
        x = pts[rnd64() % 9];
        break;
    }
    }
    return rnd64() % 2 ? -x : x;
}

START_TEST(decode_matches_format)
{
    mmp_format_hd f;
    ck_assert(mmp_format_hd_init(&f, (mmp_format)_i));
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)_i);
    int64_t count = fi->storage_bits <= 16 ? (int64_t)1 << fi->storage_bits : 200000;
    for (int64_t t = 0; t < count; t++) {
        uint64_t bits = fi->storage_bits <= 16 ? (uint64_t)t : rnd64();
        if (fi->storage_bits == 32) bits &= 0xffffffffu;
        if (fi->format == MMP_FORMAT_TF32) bits &= ~0x1fffull;
        double want = mmp_format_decode(bits, (mmp_format)_i), got = mmp_format_hd_decode(bits, &f);
        ck_assert_msg(same_bits(want, got) || (isnan(want) && isnan(got)), "%s bits %llx: %a vs %a",
                      fi->name, (unsigned long long)bits, want, got);
    }
    unsigned char buf[64];
    for (size_t t = 0; t < sizeof buf; t++) buf[t] = (unsigned char)rnd64();
    size_t n = sizeof buf * 8 / (size_t)fi->storage_bits;
    for (size_t t = 0; t < n; t++)
        ck_assert(same_bits(mmp_format_load(buf, t, (mmp_format)_i), mmp_format_hd_load(buf, t, &f)));
}
END_TEST

START_TEST(round_matches_format)
{
    rs = mmp_check_seed * 6364136223846793005ull + (uint64_t)_i * 977 + 1;
    mmp_format_hd f;
    ck_assert(mmp_format_hd_init(&f, (mmp_format)_i));
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)_i);
    for (int t = 0; t < 60000; t++) {
        double x = probe_value(fi);
        for (int rnd = 0; rnd < 4; rnd++)
            for (int sat = 0; sat < 2; sat++) {
                double want = mmp_format_round(x, (mmp_format)_i, (mmp_round)rnd, sat);
                double got = mmp_format_hd_round(x, &f, rnd, sat);
                ck_assert_msg(same_bits(want, got), "%s round(%a, mode %d, sat %d): format.c %a, ref_round.h %a",
                              fi->name, x, rnd, sat, want, got);
            }
        if (fi->is_float) {   /* the fp32 shortcut equals the general rounding */
            double want = mmp_format_round(x, (mmp_format)_i, MMP_ROUND_NEAREST_EVEN, 0);
            ck_assert_msg(same_bits(want, ref_round_ne(x, &f)), "%s ne(%a)", fi->name, x);
        }
    }
}
END_TEST

/* hd.h's encode gives format.c's bits: on probe values in every mode, and on every value of a
 * format of at most 16 bits (decode then encode, NaN patterns excepted). */
START_TEST(encode_matches_format)
{
    rs = mmp_check_seed * 6364136223846793005ull + (uint64_t)_i * 131 + 7;
    mmp_format_hd f;
    ck_assert(mmp_format_hd_init(&f, (mmp_format)_i));
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)_i);
    for (int t = 0; t < 60000; t++) {
        double x = probe_value(fi);
        for (int rnd = 0; rnd < 4; rnd++)
            for (int sat = 0; sat < 2; sat++) {
                uint64_t want = 0;
                ck_assert(mmp_format_encode(&want, NULL, x, (mmp_format)_i, (mmp_round)rnd, sat) == MMP_STATUS_OK);
                uint64_t got = mmp_format_hd_encode(x, &f, rnd, sat);
                ck_assert_msg(got == want, "%s encode(%a, mode %d, sat %d): format.c %llx, hd.h %llx", fi->name, x,
                              rnd, sat, (unsigned long long)want, (unsigned long long)got);
            }
    }
    if (fi->storage_bits > 16) return;
    for (uint64_t bits = 0; bits < (1ull << fi->storage_bits); bits++) {
        double v = mmp_format_decode(bits, (mmp_format)_i);
        uint64_t want = 0;
        ck_assert(mmp_format_encode(&want, NULL, v, (mmp_format)_i, MMP_ROUND_NEAREST_EVEN, 0) == MMP_STATUS_OK);
        ck_assert_uint_eq(mmp_format_hd_encode(v, &f, MMP_ROUND_NEAREST_EVEN, 0), want);
        if (!isnan(v)) ck_assert_uint_eq(want, bits);
    }
}
END_TEST

START_TEST(round_out_matches_oracle)
{
    rs = mmp_check_seed * 2862933555777941757ull + (uint64_t)_i * 31 + 7;
    mmp_format_hd f;
    ck_assert(mmp_format_hd_init(&f, (mmp_format)_i));
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)_i);
    for (int t = 0; t < 60000; t++) {
        double x = probe_value(fi);
        int tern = (int)(rnd64() % 3) - 1;
        double want = old_round_out(x, tern, (mmp_format)_i), got = ref_round_out_hd(x, tern, &f);
        ck_assert_msg(same_bits(want, got), "%s round_out(%a, %d): %a vs %a", fi->name, x, tern, want, got);
    }
}
END_TEST

START_TEST(decide_matches_oracle)
{
    rs = mmp_check_seed * 3935559000370003845ull + (uint64_t)_i * 131 + 5;
    mmp_format_hd f;
    ck_assert(mmp_format_hd_init(&f, (mmp_format)_i));
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)_i);
    int64_t decided = 0, undecided = 0;
    for (int t = 0; t < 100000; t++) {
        double sh = probe_value(fi);
        if (rnd64() % 8 == 0) sh = ldexp(0.5 + 0.5 * urand(), -1000 + (int)(rnd64() % 2040));
        double ulp = isfinite(sh) ? nextafter(fabs(sh), INFINITY) - fabs(sh) : 1.0;
        double sl = 0, E = 0;
        switch (rnd64() % 5) {   /* exact, inexact and certain, near the edge, unknown */
        case 0: break;
        case 1: sl = (urand() - 0.5) * ulp; break;
        case 2: sl = (urand() - 0.5) * ulp; E = urand() * ulp * 0x1p-20; break;
        case 3: sl = (urand() - 0.5) * ulp; E = urand() * ulp * 0.5; break;
        default: E = rnd64() % 2 ? INFINITY : NAN; break;
        }
        double w64 = 0, wout = 0, g64 = 0, gout = 0;
        int want = old_decide(&w64, &wout, sh, sl, E, (mmp_format)_i);
        int got = ref_decide_hd(&g64, &gout, sh, sl, E, &f);
        ck_assert_msg(want == got, "%s decide(%a, %a, %a): %d vs %d", fi->name, sh, sl, E, want, got);
        if (want) ck_assert_msg(same_bits(w64, g64) && same_bits(wout, gout), "%s decide(%a, %a, %a): %a/%a vs %a/%a",
                                fi->name, sh, sl, E, w64, wout, g64, gout);
        decided += want;
        undecided += !want;
    }
    ck_assert(decided > 10000 && undecided > 10000);   /* both outcomes exercised */
}
END_TEST

START_TEST(entry_points_agree)
{
    /* ref_decide and mmp_ref_round_out (host) are ref_round.h's functions */
    ck_assert(isnan(mmp_ref_round_out(1.0, 0, (mmp_format)99)));
    double d = 0, o = 0;
    ck_assert_int_eq(ref_decide(&d, &o, 1.0, 0.0, 0.0, (mmp_format)99), 0);
    ck_assert_int_eq(ref_decide(&d, &o, 1.0, 0x1p-60, 0.0, MMP_FORMAT_BF16), 1);
    ck_assert(d == 1.0 && o == 1.0);
    /* 1 + 2^-8 is a bf16 midpoint: just above it rounds up, at it to even (down) */
    ck_assert(mmp_ref_round_out(1.0 + 0x1p-8, -1, MMP_FORMAT_BF16) == 1.0 + 0x1p-7);
    ck_assert(mmp_ref_round_out(1.0 + 0x1p-8, 0, MMP_FORMAT_BF16) == 1.0);
    ck_assert(mmp_ref_round_out(1.0 + 0x1p-8, 1, MMP_FORMAT_BF16) == 1.0);
}
END_TEST

/* the certified CPU path in both remainder modes, against MPFR, with alpha, beta C and outputs
 * of several formats (check_gpu_reference runs the same problems on the device paths) */
START_TEST(far_entries_both_modes)
{
    static const mmp_format ins[] = {MMP_FORMAT_FP32, MMP_FORMAT_BF16, MMP_FORMAT_FP16};
    static const mmp_format outs[] = {MMP_FORMAT_FP32, MMP_FORMAT_BF16, MMP_FORMAT_E4M3, MMP_FORMAT_INT8};
    rs = mmp_check_seed * 7046029254386353131ull + (uint64_t)_i * 17 + 9;
    for (int v = 0; v < 2; v++) {
        mmp_format fi = ins[_i % 3], fo = outs[(_i + v) % 4];
        prob p;
        int64_t m = 20 + (int64_t)(rnd64() % 20) * 2, n = 18 + (int64_t)(rnd64() % 20) * 2, k = 40 + (int64_t)(rnd64() % 200);
        prob_make(&p, fi, fi, fo, fo, m, n, k, (int)(rnd64() % 8), (int)(rnd64() % 2), v ? 3.0 : 1.0, v ? 0.1 : 0.0,
                  GEN_RANDOM);
        prob_far(&p, v == 0 ? 0.25 : 0.01);
        mmp_ref_options o;
        mmp_ref_options_init(&o);
        mmp_ref_result rc, rm;
        mmp_ref_result_init(&rc);
        mmp_ref_result_init(&rm);
        ck_assert(mmp_ref_gemm(&rc, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
        o.path = MMP_REF_PATH_MPFR;
        ck_assert(mmp_ref_gemm(&rm, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
        if (v == 0 && fi == MMP_FORMAT_FP32)   /* a quarter of the entries keep remainders: bound */
            ck_assert_msg(!rc.split.sparse && (rc.split.n_remainders > 0 || rc.slice_levels < rc.slices_a + rc.slices_b),
                          "fp32 far 1/4: sparse %d, %lld remainders", rc.split.sparse, (long long)rc.split.n_remainders);
        if (v == 1)   /* one in a hundred: exact lists */
            ck_assert_msg(rc.split.sparse, "far 1/100: bound mode with %lld remainders", (long long)rc.split.n_remainders);
        for (int64_t x = 0; x < m * n; x++)
            ck_assert_msg(same_bits(rc.d64[x], rm.d64[x]) && same_bits(rc.dout[x], rm.dout[x]),
                          "%s->%s far v%d (%lld,%lld): certified %a/%a mpfr %a/%a", mmp_format_name(fi),
                          mmp_format_name(fo), v, (long long)(x / n), (long long)(x % n), rc.d64[x], rc.dout[x],
                          rm.d64[x], rm.dout[x]);
        mmp_ref_result_clear(&rc);
        mmp_ref_result_clear(&rm);
        prob_free(&p);
    }
}
END_TEST

/* Elements the host model's dot stage decided, and those left to the exact evaluator or MPFR,
 * over the calls of v2_model_agrees in this test. */
static int64_t v2_dot_total, v2_left_total, v2_elem_total;
/* Plans forced on both paths (mmp_ref_options.levels, .slices; 0: chosen from the data). */
static int force_levels, force_slices;

/* The host model of version 2 against pure MPFR: every element, d64 and dout; and the plan
 * (slices, mode) equal to the CPU certified path's (version 1's rules). */
static void v2_model_agrees(mmp_format fa, mmp_format fb, mmp_format fc, mmp_format fd, gen_kind kind, double far,
                            double alpha, double beta)
{
    int64_t m = 12 + (int64_t)(rnd64() % 20) * 2, n = 10 + (int64_t)(rnd64() % 20) * 2;
    int64_t k = 2 + (int64_t)(rnd64() % 150);
    prob p;
    prob_make(&p, fa, fb, fc, fd, m, n, k, (int)(rnd64() % 8), (int)(rnd64() % 2), alpha, beta, kind);
    if (far > 0) prob_far(&p, far);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.want_absbound = 1;
    o.levels = force_levels;
    o.slices = force_slices;
    mmp_ref_result rv, rm, rc;
    mmp_ref_result_init(&rv); mmp_ref_result_init(&rm); mmp_ref_result_init(&rc);
    /* the DGEMM route here (its plan is the CPU path's); the int8 route below, and in check_ref_imma */
    o.imma = 2;
    ck_assert_msg(ref_v2_host_run(&rv, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(rv.imma, 0);
    if (force_levels > 0 && !rv.is_integer)
        ck_assert_msg(rv.slice_levels == (force_levels < rv.slices_a + rv.slices_b ? force_levels : rv.slices_a + rv.slices_b),
                      "forced levels %d: the model made %d", force_levels, rv.slice_levels);
    v2_dot_total += rv.split.n_dot;
    v2_left_total += rv.n_exact + rv.n_mpfr;
    v2_elem_total += m * n;
    ck_assert(mmp_ref_gemm(&rc, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    o.path = MMP_REF_PATH_MPFR;
    o.want_absbound = 0;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    /* the int8 route where the formats allow it (ref_plan_route): every element as MPFR too */
    mmp_ref_result ri;
    mmp_ref_result_init(&ri);
    o.path = MMP_REF_PATH_CERTIFIED;
    o.imma = 1;
    ck_assert_msg(ref_v2_host_run(&ri, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    for (int64_t x = 0; x < m * n; x++)
        ck_assert_msg(same_bits(ri.d64[x], rm.d64[x]) && same_bits(ri.dout[x], rm.dout[x]),
                      "int8 route (%d) %s->%s kind %d %lldx%lldx%lld (%lld,%lld): %a/%a mpfr %a/%a", ri.imma,
                      mmp_format_name(fa), mmp_format_name(fd), (int)kind, (long long)m, (long long)n, (long long)k,
                      (long long)(x / n), (long long)(x % n), ri.d64[x], ri.dout[x], rm.d64[x], rm.dout[x]);
    mmp_ref_result_clear(&ri);
    /* the same square and mode by version 1's rules; in bound mode a triangle may be chosen by
     * either, with the device's and the host's weights (REF_DEVICE_W_DOT, REF_HOST_W_DOT) */
    int squares = rv.slice_levels == rv.slices_a + rv.slices_b && rc.slice_levels == rc.slices_a + rc.slices_b;
    if (!rc.is_integer)
        ck_assert_msg(rv.split.sparse == rc.split.sparse && (!squares || (rv.slices_a == rc.slices_a &&
                      rv.slices_b == rc.slices_b && rv.split.n_remainders == rc.split.n_remainders)),
                      "plan: v2 %dx%d/%d sparse %d (%lld) cpu %dx%d/%d sparse %d (%lld)", rv.slices_a, rv.slices_b,
                      rv.slice_levels, rv.split.sparse, (long long)rv.split.n_remainders, rc.slices_a, rc.slices_b,
                      rc.slice_levels, rc.split.sparse, (long long)rc.split.n_remainders);
    for (int64_t x = 0; x < m * n; x++) {
        ck_assert_msg(same_bits(rv.d64[x], rm.d64[x]) && same_bits(rv.dout[x], rm.dout[x]),
                      "%s*%s+%s->%s kind %d far %g alpha %g beta %g %lldx%lldx%lld (%lld,%lld): v2 model %a/%a mpfr %a/%a",
                      mmp_format_name(fa), mmp_format_name(fb), mmp_format_name(fc), mmp_format_name(fd), (int)kind, far,
                      alpha, beta, (long long)m, (long long)n, (long long)k, (long long)(x / n), (long long)(x % n),
                      rv.d64[x], rv.dout[x], rm.d64[x], rm.dout[x]);
        double a = rv.absbound[x], b = rc.absbound[x], tol = 16.0 * (double)k * 0x1p-53 * fmax(a, b) + 0x1p-1000;
        ck_assert_msg((!isfinite(a) && !isfinite(b)) || a == b || fabs(a - b) <= tol, "absbound %a vs %a", a, b);
    }
    mmp_ref_result_clear(&rv); mmp_ref_result_clear(&rm); mmp_ref_result_clear(&rc);
    prob_free(&p);
}

static const struct { mmp_format a, b, c, d; } v2_combos[] = {
    {MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP16},
    {MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_BF16},
    {MMP_FORMAT_E4M3, MMP_FORMAT_E5M2, MMP_FORMAT_FP16, MMP_FORMAT_E4M3},
    {MMP_FORMAT_TF32, MMP_FORMAT_TF32, MMP_FORMAT_FP32, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64},
    {MMP_FORMAT_INT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_FP32},   /* alpha 0.75: not integer */
    /* exact integer GEMMs, which the device path takes through version 2 when its results stay
     * on the device (the runner's device comparison) */
    {MMP_FORMAT_INT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32},
    {MMP_FORMAT_UINT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32},
};
enum { N_V2_COMBOS = sizeof v2_combos / sizeof v2_combos[0] };

START_TEST(v2_model_every_kind)
{
    rs = mmp_check_seed * 1442695040888963407ull + (uint64_t)_i * 7919 + 11;
    static const double alphas[] = {1.0, -0.75, 3.0}, betas[] = {0.0, 1.0, 0.1};
    for (int kind = GEN_RANDOM; kind <= GEN_SPECIAL; kind++) {
        v2_dot_total = v2_left_total = v2_elem_total = 0;
        for (int v = 0; v < 3; v++)
            v2_model_agrees(v2_combos[_i].a, v2_combos[_i].b, v2_combos[_i].c, v2_combos[_i].d, (gen_kind)kind, 0.0,
                            v2_combos[_i].a == MMP_FORMAT_INT8 && v2_combos[_i].d == MMP_FORMAT_FP32 ? 0.75 : alphas[v], betas[v]);
        /* what wide and special data leave open after the finish (the plan's bound, the NaN/Inf
         * classes), the dot stage decides nearly all of, or at most 1 % of the elements are left:
         * fp16 outputs overflow; fp64's wide sums reach beyond the decision's range; alpha -0.75
         * or 3 can make alpha S a binary64 midpoint that only beta c, far below its ulp, moves
         * off (RN64 then needs more than the dot stage's double-double: the exact evaluator).
         * The finish signs exact zero sums itself, so the dot stage may see nothing at all. */
        mmp_format in = v2_combos[_i].a;
        if ((kind == GEN_WIDE || kind == GEN_SPECIAL) && in != MMP_FORMAT_FP64 &&
            mmp_format_get_info(v2_combos[_i].d)->is_float)
            ck_assert_msg(v2_dot_total >= 10 * v2_left_total || 100 * v2_left_total <= v2_elem_total,
                          "%s kind %d: dot %lld, left %lld of %lld", mmp_format_name(in), kind,
                          (long long)v2_dot_total, (long long)v2_left_total, (long long)v2_elem_total);
    }
    /* and without the dot stage, everything open goes to the exact evaluator, as before */
    setenv("MMP_REF_DOT", "0", 1);
    v2_dot_total = 0;
    v2_model_agrees(v2_combos[_i].a, v2_combos[_i].b, v2_combos[_i].c, v2_combos[_i].d, GEN_WIDE, 0.0, 1.0, 0.0);
    v2_model_agrees(v2_combos[_i].a, v2_combos[_i].b, v2_combos[_i].c, v2_combos[_i].d, GEN_SPECIAL, 0.0, -0.75, 1.0);
    ck_assert_int_eq(v2_dot_total, 0);
    unsetenv("MMP_REF_DOT");
    v2_model_agrees(v2_combos[_i].a, v2_combos[_i].b, v2_combos[_i].c, v2_combos[_i].d, GEN_RANDOM, 0.25, -0.75, 1.0);
    v2_model_agrees(v2_combos[_i].a, v2_combos[_i].b, v2_combos[_i].c, v2_combos[_i].d, GEN_RANDOM, 0.01, 3.0, 0.1);
}
END_TEST

/* fp64 outputs: the bound decides RN64 of nearly every element (X within half an ulp of sh on
 * both sides is enough; no rounding of the interval's ends to fp64, which always differ), on the
 * CPU path and the host model, with every element as MPFR (v2_model_agrees); wide data up to
 * the overflow threshold included. _i: uniform, normal, wide. */
START_TEST(fp64_outputs_decided)
{
    rs = mmp_check_seed * 1442695040888963407ull + 991 + (uint64_t)_i;
    static const gen_kind kinds[] = {GEN_RANDOM, GEN_RANDOM, GEN_WIDE};
    prob p;
    prob_make(&p, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, 64, 48, _i == 2 ? 1024 : 256, 0,
              0, 1.0, 0.0, kinds[_i]);
    if (_i == 1) prob_far(&p, 0.01);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    mmp_ref_result rc, rv, rm;
    mmp_ref_result_init(&rc); mmp_ref_result_init(&rv); mmp_ref_result_init(&rm);
    ck_assert(mmp_ref_gemm(&rc, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    ck_assert(ref_v2_host_run(&rv, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    const int64_t mn = 64 * 48, allowed = _i == 2 ? mn / 4 : mn / 100;
    mmp_ref_result *r[2] = {&rc, &rv};
    for (int t = 0; t < 2; t++) {
        int64_t open = r[t]->split.n_dot + r[t]->n_exact + r[t]->n_mpfr;
        ck_assert_msg(open <= allowed, "%s, kind %d: %lld of %lld elements past the bound (%dx%d slices, %d levels)",
                      t ? "model" : "cpu", _i, (long long)open, (long long)mn, r[t]->slices_a, r[t]->slices_b,
                      r[t]->slice_levels);
        for (int64_t e = 0; e < mn; e++)
            ck_assert_msg(same_bits(r[t]->d64[e], rm.d64[e]) && same_bits(r[t]->dout[e], rm.dout[e]),
                          "%s, kind %d, element %lld: %a vs MPFR %a", t ? "model" : "cpu", _i, (long long)e,
                          r[t]->d64[e], rm.d64[e]);
    }
    mmp_ref_result_clear(&rc); mmp_ref_result_clear(&rv); mmp_ref_result_clear(&rm);
    prob_free(&p);
}
END_TEST

/* Triangles (slice pairs s + t <= L only, ref_plan.h) forced on the CPU path and the host
 * model, 2 to 9 levels, with the format's slices or L - 1 each: every element bit for bit as
 * MPFR on wide, far-entry, cancelling and special data. The bound of the dropped pairs is what
 * certifies them; one term too few and wide data give wrong roundings here. */
START_TEST(triangles_agree)
{
    rs = mmp_check_seed * 1442695040888963407ull + (uint64_t)_i * 104729 + 5;
    static const mmp_format fmt[][2] = {{MMP_FORMAT_BF16, MMP_FORMAT_FP32}, {MMP_FORMAT_FP32, MMP_FORMAT_FP32},
                                        {MMP_FORMAT_FP16, MMP_FORMAT_FP16}, {MMP_FORMAT_E4M3, MMP_FORMAT_FP32},
                                        {MMP_FORMAT_FP64, MMP_FORMAT_FP64}};
    const mmp_format *f = fmt[_i % 5];
    force_levels = 2 + _i / 5;
    for (int sl = 0; sl < 2; sl++) {
        force_slices = sl ? 3 : 0;
        v2_model_agrees(f[0], f[0], f[1], f[1], GEN_WIDE, 0.0, 1.0, 0.0);
        v2_model_agrees(f[0], f[0], f[1], f[1], GEN_WIDE, 0.0, -0.75, 0.5);
        v2_model_agrees(f[0], f[0], f[1], f[1], GEN_RANDOM, 0.25, 3.0, 0.1);
        v2_model_agrees(f[0], f[0], f[1], f[1], GEN_CANCEL, 0.0, 1.0, 0.0);
        v2_model_agrees(f[0], f[0], f[1], f[1], GEN_SPECIAL, 0.0, -0.75, 1.0);
    }
    force_levels = force_slices = 0;
}
END_TEST

/* The plan on wide data: a triangle (more slices, fewer pairs than their square) on the CPU path
 * and in the host model, and most elements decided by the bound (at most 1 in 8 left to the dot stage). */
START_TEST(wide_data_take_a_triangle)
{
    rs = mmp_check_seed * 1442695040888963407ull + 77;
    prob p;
    prob_make(&p, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 96, 80, 512, 0, 0, 1.0, 0.0,
              GEN_WIDE);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 2;   /* the DGEMM route's triangle (check_ref_imma: the int8 route's) */
    mmp_ref_result rc, rv;
    mmp_ref_result_init(&rc);
    mmp_ref_result_init(&rv);
    ck_assert(mmp_ref_gemm(&rc, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    ck_assert(ref_v2_host_run(&rv, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK);
    mmp_ref_result *r[2] = {&rc, &rv};
    for (int t = 0; t < 2; t++) {
        ck_assert_msg(!r[t]->split.sparse && r[t]->slice_levels < r[t]->slices_a + r[t]->slices_b &&
                          r[t]->slices_a > 2,
                      "%s: %dx%d slices, %d levels, sparse %d", t ? "model" : "cpu", r[t]->slices_a, r[t]->slices_b,
                      r[t]->slice_levels, r[t]->split.sparse);
        ck_assert_msg(r[t]->split.n_dot + r[t]->n_exact + r[t]->n_mpfr <= 96 * 80 / 8, "%s: %lld to the dot stage",
                      t ? "model" : "cpu", (long long)r[t]->split.n_dot);
    }
    mmp_ref_result_clear(&rc);
    mmp_ref_result_clear(&rv);
    prob_free(&p);
}
END_TEST

/* Exact integer GEMMs with exact zero results (zero rows of A, onehot-like data): version 2
 * decides them without the exact evaluator or MPFR, bit for bit as MPFR (the sign of d64
 * with negative alpha and beta C included). */
START_TEST(v2_integer_zeros_decided)
{
    rs = mmp_check_seed * 2862933555777941757ull + (uint64_t)_i * 31 + 5;
    static const double alphas[] = {1.0, -3.0, 2.0}, betas[] = {0.0, 0.0, 1.0};
    prob p;
    prob_make(&p, MMP_FORMAT_INT8, MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_INT32, 24, 18, 40, 0, 0,
              alphas[_i], betas[_i], GEN_RANDOM);
    for (int64_t i = 0; i < p.g.m; i += 3)
        for (int64_t k = 0; k < p.g.k; k++)
            mmp_format_store(p.a, mmp_gemm_index(p.g.la, p.g.lda, i, k), 0.0, p.g.a, MMP_ROUND_NEAREST_EVEN, 1);
    if (p.c)
        for (int64_t i = 0; i < p.g.m; i += 6)
            for (int64_t j = 0; j < p.g.n; j++)
                mmp_format_store(p.c, mmp_gemm_index(p.g.lc, p.g.ldc, i, j), 0.0, p.g.c, MMP_ROUND_NEAREST_EVEN, 1);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    mmp_ref_result rv, rm;
    mmp_ref_result_init(&rv); mmp_ref_result_init(&rm);
    ck_assert_msg(ref_v2_host_run(&rv, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(rv.n_exact + rv.n_mpfr == 0, "alpha %g: %lld elements left to the exact evaluator, %lld to MPFR",
                  alphas[_i], (long long)rv.n_exact, (long long)rv.n_mpfr);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    int64_t zeros = 0;
    for (int64_t x = 0; x < p.g.m * p.g.n; x++) {
        zeros += rm.d64[x] == 0.0;
        ck_assert_msg(same_bits(rv.d64[x], rm.d64[x]) && same_bits(rv.dout[x], rm.dout[x]),
                      "alpha %g beta %g (%lld,%lld): v2 %a/%a mpfr %a/%a", alphas[_i], betas[_i], (long long)(x / p.g.n),
                      (long long)(x % p.g.n), rv.d64[x], rv.dout[x], rm.d64[x], rm.dout[x]);
    }
    ck_assert_int_ge(zeros, p.g.n * (betas[_i] != 0 ? 4 : 8));
    mmp_ref_result_clear(&rv); mmp_ref_result_clear(&rm);
    prob_free(&p);
}
END_TEST

/* every output format (C in it too: integer C, packed int4), fp32 and bf16 inputs */
START_TEST(v2_model_every_output)
{
    rs = mmp_check_seed * 6364136223846793005ull + (uint64_t)_i * 104729 + 13;
    mmp_format fd = (mmp_format)_i;
    v2_model_agrees(MMP_FORMAT_FP32, MMP_FORMAT_FP32, fd, fd, GEN_RANDOM, 0.0, 2.0, 1.0);
    v2_model_agrees(MMP_FORMAT_BF16, MMP_FORMAT_BF16, fd, fd, GEN_RANDOM, 0.25, -0.75, 0.5);
    v2_model_agrees(MMP_FORMAT_FP16, MMP_FORMAT_FP16, fd, fd, GEN_WIDE, 0.0, 1.0, -1.0);
}
END_TEST

/* X = t u where t, u are far below their row's and column's maximum (whose partners are 0):
 * the slice products miss rA u + t rB - rA rB, so every remainder term, the cross term rA rB
 * included, must be right for d64 = t u (exact: 24 + 24 bits). */
START_TEST(v2_model_remainder_cross_term)
{
    rs = mmp_check_seed * 9 + 1;
    enum { M = 3, N = 4, K = 3 };
    float a[M * K], b[K * N];
    double want[M * N];
    cross_term_fill(a, b, M, N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) want[i * N + j] = (double)a[i * K + 2] * (double)b[2 * N + j];
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, M, N, K);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    for (int path = 0; path < 2; path++) {
        mmp_ref_result r;
        mmp_ref_result_init(&r);
        ck_assert(path ? ref_v2_host_run(&r, a, b, NULL, &g, &o, 1) == MMP_STATUS_OK
                       : mmp_ref_gemm(&r, a, b, NULL, &g, &o) == MMP_STATUS_OK);
        ck_assert_msg(r.split.sparse && r.split.n_remainders > 0, "path %d: sparse %d, %lld remainders", path,
                      r.split.sparse, (long long)r.split.n_remainders);
        ck_assert_int_eq(r.n_mpfr, 0);
        for (int x = 0; x < M * N; x++)
            ck_assert_msg(r.d64[x] == want[x] && r.dout[x] == (double)(float)want[x], "path %d (%d,%d): %a want %a",
                          path, x / N, x % N, r.d64[x], want[x]);
        mmp_ref_result_clear(&r);
    }
}
END_TEST

/* Exact zero sums, whose sign needs every product: a_ik = (-1)^(bit k%3 of i) 0 and b_kj =
 * (-1)^(bit k%3 of j) 1, so D(i, j) is -0 exactly when j = 7 - i (every product -0), else +0;
 * alpha < 0 flips it, beta C = -0 keeps -0 only where both are -0, C = 2^-3 gives beta C.
 * fp32 inputs: the host model of version 2 (K = 3) and the CPU path (K = 19) sign them in their
 * finish from the zero and sign masks (ref_v2_zero_neg; check_ref_zero tests them further): no
 * dot stage. fp64 inputs, which take no masks (ref_v2_zero_mode): the CPU path's dot stage
 * decides all of them, with MPFR's signs (a nonzero beta C the finish decides), K = 19 (its
 * vector blocks and its scalar tail, with and without AVX2). */
START_TEST(v2_model_dot_signed_zeros)
{
    enum { M = 8, N = 8, KMAX = 19 };
    float a[M * KMAX], b[KMAX * N], c[M * N];
    double a64[M * KMAX], b64[KMAX * N], c64[M * N];
    for (int path = 0; path < 4; path++) {
    int K = path == 0 ? 3 : KMAX, f64 = path >= 2;
    if (path == 3) setenv("MMP_REF_NO_AVX2", "1", 1);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) a64[i * K + k] = a[i * K + k] = (i >> (k % 3)) & 1 ? -0.0f : 0.0f;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) b64[k * N + j] = b[k * N + j] = (j >> (k % 3)) & 1 ? -1.0f : 1.0f;
    static const struct { double alpha, beta; float c; } v[] = {{1, 0, 0}, {-0.75, 0, 0}, {2, 1, -0.0f}, {1, 0.5, 0.125f}};
    for (int t = 0; t < 4; t++) {
        for (int x = 0; x < M * N; x++) c64[x] = c[x] = v[t].c;
        mmp_format f = f64 ? MMP_FORMAT_FP64 : MMP_FORMAT_FP32;
        const void *pa = f64 ? (const void *)a64 : a, *pb = f64 ? (const void *)b64 : b, *pc = f64 ? (const void *)c64 : c;
        mmp_gemm g;
        mmp_gemm_init(&g, f, f, f, f, M, N, K);
        g.lb = MMP_LAYOUT_ROW;
        g.alpha = v[t].alpha;
        g.beta = v[t].beta;
        mmp_ref_options o;
        mmp_ref_options_init(&o);
        mmp_ref_result r, rm;
        mmp_ref_result_init(&r);
        mmp_ref_result_init(&rm);
        ck_assert(path == 0 ? ref_v2_host_run(&r, pa, pb, pc, &g, &o, 1) == MMP_STATUS_OK
                            : mmp_ref_gemm(&r, pa, pb, pc, &g, &o) == MMP_STATUS_OK);
        o.path = MMP_REF_PATH_MPFR;
        ck_assert(mmp_ref_gemm(&rm, pa, pb, pc, &g, &o) == MMP_STATUS_OK);
        ck_assert_msg(r.split.n_dot == (v[t].c != 0 || !f64 ? 0 : M * N) && r.n_exact + r.n_mpfr == 0,
                      "path %d variant %d: dot %lld, exact %lld, mpfr %lld", path,
                      t, (long long)r.split.n_dot, (long long)r.n_exact, (long long)r.n_mpfr);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int x = i * N + j, neg = (j == 7 - i) != (v[t].alpha < 0);
                if (v[t].beta != 0) neg = neg && signbit(v[t].c);
                double want = v[t].c != 0 ? v[t].beta * v[t].c : (neg ? -0.0 : 0.0);
                ck_assert_msg(same_bits(r.d64[x], want) && same_bits(rm.d64[x], want) && same_bits(r.dout[x], want),
                              "path %d variant %d (%d,%d): got %a mpfr %a want %a", path, t, i, j, r.d64[x], rm.d64[x],
                              want);
            }
        mmp_ref_result_clear(&r);
        mmp_ref_result_clear(&rm);
    }
    }
    unsetenv("MMP_REF_NO_AVX2");
}
END_TEST

/* the device path's background first touch of its result arrays: every page written, within
 * the arrays only (ASan catches a stray byte), NULL arrays skipped */
START_TEST(prefault_touches_pages)
{
    size_t n0 = ((size_t)9 << 20) + 123, n1 = 5000, n2 = ((size_t)8 << 20) + 4096;
    char *p0 = ref_big_alloc(n0, 0), *p1 = malloc(n1), *p2 = ref_big_alloc(n2, 0);
    ck_assert(p0 && p1 && p2);
    memset(p1, 7, n1);
    for (size_t x = 0; x < n2; x += 4096) p2[x] = 7;
    void *h = ref_prefault_start(p0, n0, p1, n1, NULL, 0, 3);
    ref_prefault_join(h);
    for (size_t x = 0; x < n0; x += 4096) ck_assert_int_eq(p0[x], 0);
    ck_assert_int_eq(p1[0], 0);
    ck_assert_int_eq(p1[4096], 0);
    ck_assert_int_eq(p1[1], 7);
    ref_prefault_join(ref_prefault_start(NULL, 0, NULL, 0, p2, n2, 1));
    for (size_t x = 0; x < n2; x += 4096) ck_assert_int_eq(p2[x], 0);
    ref_big_free(p0); free(p1); ref_big_free(p2);
}
END_TEST

static Suite *ref_round_suite(void)
{
    Suite *s = suite_create("ref_round");
    TCase *t = tcase_create("ref_round.h matches format.c and the host decisions");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, decode_matches_format, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, round_matches_format, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, encode_matches_format, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, round_out_matches_oracle, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, decide_matches_oracle, 0, MMP_FORMAT_COUNT_);
    tcase_add_test(t, entry_points_agree);
    tcase_add_loop_test(t, v2_integer_zeros_decided, 0, 3);
    tcase_add_loop_test(t, far_entries_both_modes, 0, 6);
    tcase_add_loop_test(t, v2_model_every_kind, 0, N_V2_COMBOS);
    tcase_add_loop_test(t, v2_model_every_output, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, triangles_agree, 0, 40);
    tcase_add_loop_test(t, fp64_outputs_decided, 0, 3);
    tcase_add_test(t, wide_data_take_a_triangle);
    tcase_add_test(t, v2_model_remainder_cross_term);
    tcase_add_test(t, v2_model_dot_signed_zeros);
    tcase_add_test(t, prefault_touches_pages);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(ref_round_suite)
