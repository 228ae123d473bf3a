/* check_ref_crt.c — the int8 route's square of slices by residues (ref_crt.h; the device's
 * ref_cuda2_crt.cu), through its functions and the host model (ref_v2_host.c: the device's
 * residue layout, one GEMM per modulus as an exact int64 sum that must fit int32):
 *   - the table: pairwise coprime moduli whose product M reaches 2^(8 (Sa + Sb) + ceil(log2 kp)),
 *     M / m_t, the inverses, M / 2 and the powers of 256, for every square of the route;
 *   - the integer steps: x mod m for every x < 2^21, the GEMMs' int32 sums reduced, residues of
 *     integers up to 2^40 at every power of two the route reaches;
 *   - each entry's a' (one rounding, ref_crt_value_direct) is the integer of its first S digits
 *     (ref_split's, in 128-bit arithmetic) and its residues are a' mod m_t, for values of 8 to 26
 *     significant bits over 300 binades, zeros, NaN and Inf, any S;
 *   - the reconstruction gives back every X of (-M/2, M/2) for a three-modulus table (all of
 *     them) and random and extreme 126-bit X for larger tables;
 *   - every element bit for bit as pure MPFR with every square by residues on rows scaled far
 *     below 1, and on wide data with the route chosen by cost (fewer GEMMs than the pairs of
 *     the triangle taken without it); check_ref_imma runs the host model with every square by
 *     residues on every kind of data and format (model_every_kind_residues);
 *   - the mode: mmp_ref_options.crt before MMP_REF_CRT, weighed by cost by default.
 *
 *   build/tests/check_ref_crt            (ctest -L cpu; MMP_SEED=n to reproduce)
 */
#include "tests/check_main.h"

#include <math.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/reference.h"
#include "reference/ref_v2.h"
#include "tests/lib/ref_testgen.h"

typedef __int128 i128;

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* Limbs -> the position of the highest set bit + 1 (0 for zero). */
static int limbs_bits(const uint32_t *x)
{
    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--)
        if (x[l]) {
            int b = 32;
            while (!(x[l] >> (b - 1))) b--;
            return 32 * l + b;
        }
    return 0;
}

static int ceil_log2(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

/* Every square's table is what ref_crt.h says it is. */
START_TEST(table_is_consistent)
{
    static const int64_t kps[] = {16, 512, 8192, REF_IMMA_KMAX};
    for (int kx = 0; kx < 4; kx++)
        for (int sa = 1; sa <= REF_SMAX; sa++)
            for (int sb = 1; sb <= REF_SMAX; sb++) {
                ref_crt_table t;
                ck_assert_msg(ref_crt_table_init(&t, sa, sb, kps[kx]), "no table for %dx%d at kp %lld", sa, sb,
                              (long long)kps[kx]);
                ck_assert_int_eq(t.n, ref_crt_count(sa, sb, kps[kx]));
                /* M >= 2^need: its highest bit at need or above; one modulus fewer would not do */
                int need = 8 * (sa + sb) + ceil_log2(kps[kx]);
                ck_assert_msg(limbs_bits(t.big) - 1 >= need, "%dx%d kp %lld: M has %d bits, needs 2^%d", sa, sb,
                              (long long)kps[kx], limbs_bits(t.big), need);
                double fewer = 0;
                for (int q = 0; q + 1 < t.n; q++) fewer += log2((double)t.m[q]);
                ck_assert_msg(fewer < need, "%dx%d: %d moduli, %d would do", sa, sb, t.n, t.n - 1);
                for (int q = 0; q < t.n; q++) {
                    int m = t.m[q];
                    ck_assert(m >= 2 && m <= 256 && t.c16[q] == (1 << 16) % m && t.c20[q] == (1 << 20) % m);
                    ck_assert((uint64_t)t.magic[q] * (uint64_t)m >= 0x100000000ull &&
                              (uint64_t)(t.magic[q] - 1) * (uint64_t)m < 0x100000000ull);
                    for (int u = 0; u < q; u++) ck_assert_int_eq(gcd(m, t.m[u]), 1);
                    /* gf m = P_g; gt P_g = M, limb by limb; (M / m) mod m = (gt mod m) gf, times y, is 1 */
                    int g = q / REF_CRT_GROUP;
                    uint64_t pg = 1;
                    for (int u = g * REF_CRT_GROUP; u < t.n && u < (g + 1) * REF_CRT_GROUP; u++) pg *= (uint64_t)t.m[u];
                    ck_assert(pg < (1u << 24) && (uint64_t)t.gf[q] * (uint64_t)m == pg);
                    uint64_t c = 0;
                    for (int l = 0; l < REF_CRT_LIMBS; l++) {
                        uint64_t v = (uint64_t)t.gt[g][l] * pg + c;
                        ck_assert_uint_eq((uint32_t)v, t.big[l]);
                        c = v >> 32;
                    }
                    ck_assert_uint_eq(c, 0);
                    uint64_t r = 0;
                    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--) r = ((r << 32) | t.gt[g][l]) % (uint64_t)m;
                    r = r * t.gf[q] % (uint64_t)m;
                    ck_assert_int_eq((int)(r * (uint64_t)t.y[q] % (uint64_t)m), 1 % m);
                    int p = 1 % m;
                    for (int e = 0; e <= REF_SMAX; e++) { ck_assert_int_eq(t.w[q][e], p); p = p * 256 % m; }
                }
                uint64_t c = 0;   /* 2 half = M */
                for (int l = 0; l < REF_CRT_LIMBS; l++) {
                    uint64_t v = 2 * (uint64_t)t.half[l] + c;
                    ck_assert_uint_eq((uint32_t)v, t.big[l]);
                    c = v >> 32;
                }
                ck_assert(t.big[0] % 2 == 0 && t.big_d > 0);
            }
    ck_assert_int_eq(ref_crt_count(REF_SMAX + 2, REF_SMAX + 2, REF_IMMA_KMAX), 0);
}
END_TEST

/* The integer steps: ref_crt_mod for every x < 2^21 and every modulus; ref_crt_reduce on int32
 * values of every size, both ends included; ref_crt_residue on every |V| < 2^40 size and shift. */
START_TEST(integer_steps)
{
    ref_crt_table t;
    ck_assert(ref_crt_table_init(&t, REF_SMAX, REF_SMAX, REF_IMMA_KMAX));
    int bad = 0;
    for (int q = 0; q < t.n; q++) {
        uint32_t m = (uint32_t)t.m[q];
        for (uint32_t x = 0; x < (1u << 21); x++) bad += ref_crt_mod(x, m, t.magic[q]) != x % m;
    }
    ck_assert_msg(bad == 0, "ref_crt_mod: %d wrong", bad);
    rs = mmp_check_seed * 3935559000370003845ull + 3;
    for (int i = 0; i < 300000; i++) {
        int q = (int)(rnd64() % (uint64_t)t.n);
        int64_t m = t.m[q];
        int32_t c = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : (int32_t)((int64_t)(rnd64() >> 33) >> (rnd64() % 31)) *
                                                                   ((rnd64() & 1) ? -1 : 1);
        int64_t want = ((int64_t)c % m + m) % m * t.y[q] % m;
        if (ref_crt_reduce(c, (uint32_t)m, t.magic[q], (uint32_t)t.c16[q], (uint32_t)t.y[q]) != want && !bad++)
            ck_abort_msg("ref_crt_reduce(%d) modulus %d: %d, want %lld", c, (int)m,
                         ref_crt_reduce(c, (uint32_t)m, t.magic[q], (uint32_t)t.c16[q], (uint32_t)t.y[q]), (long long)want);
        int p2 = (int)(rnd64() % (8 * (REF_SMAX + 1)));
        int64_t V = (int64_t)(rnd64() >> 24) >> (rnd64() % 40);   /* below 2^40 */
        if (rnd64() & 1) V = -V;
        int64_t r = (V % m + m) % m;   /* V 2^p2 mod m with % */
        for (int p = 0; p < p2; p++) r = r * 2 % m;
        int sym = (int)(2 * r >= m ? r - m : r);
        if (ref_crt_residue_direct(V, p2, &t, t.w, q) != sym && !bad++)
            ck_abort_msg("ref_crt_residue_direct(%lld, 2^%d) modulus %d: %d, want %d", (long long)V, p2, (int)m,
                         ref_crt_residue_direct(V, p2, &t, t.w, q), sym);
    }
}
END_TEST

/* a' mod m for an i128 a', in [-m/2, m/2) */
static int sym_mod(i128 a, int m)
{
    int r = (int)(a % m);
    if (r < 0) r += m;
    return 2 * r >= m ? r - m : r;
}

/* Each entry's residues are a' mod m_t for the integer a' of its first S int8 digits. */
START_TEST(residues_match_digits)
{
    rs = mmp_check_seed * 6364136223846793005ull + 101;
    int long_windows = 0, bad = 0;
    for (int t = 0; t < 40000; t++) {
        static const int bits[] = {8, 11, 24, 26};
        int p = bits[rnd64() % 4], kind = (int)(rnd64() % 40);
        double v = ldexp(floor(ldexp(0.5 + 0.5 * urand(), p)), -p);   /* p significant bits */
        v = ldexp(v, 40 - (int)(rnd64() % 300)) * ((rnd64() & 1) ? -1 : 1);
        if (kind == 0) v = 0.0;
        if (kind == 1) v = NAN;
        if (kind == 2) v = -INFINITY;
        if (kind == 3) v = 127.5 / 128 * ldexp(1.0, 40);   /* the first digit rounds up */
        int e = 40 + 2 + (int)(rnd64() % 3), S = 1 + (int)(rnd64() % REF_SMAX);
        double q[REF_SMAX], last;
        ref_split(v, e, REF_IMMA_BETA, S, q, 1, &last);
        i128 a = 0;
        int first = 0, lastnz = 0;
        for (int s = 1; s <= S; s++) {
            a = a * 256 + (i128)q[s - 1];
            if (q[s - 1] != 0.0) { lastnz = s; if (!first) first = s; }
        }
        long_windows += first && lastnz - first >= 3;
        ref_crt_table tb;
        ck_assert(ref_crt_table_init(&tb, S, REF_SMAX, 8192));
        enum { KP = 3 };
        int8_t row[REF_CRT_MAX * KP];
        memset(row, 0x5a, sizeof row);
        int ok = ref_crt_operand_one(row, v, e, S, KP, &tb, tb.w, 2);
        for (int m = 0; m < tb.n; m++) ok &= row[m * KP + 2] == sym_mod(a, tb.m[m]);
        for (int x = 0; x < REF_CRT_MAX * KP; x++)   /* nothing else written */
            if (x % KP != 2 || x / KP >= tb.n) ok &= row[x] == 0x5a;
        if (!ok && !bad++)
            for (int m = 0; m < tb.n; m++)
                ck_assert_msg(row[m * KP + 2] == sym_mod(a, tb.m[m]), "v %a E %d S %d modulus %d: %d, want %d", v, e,
                              S, tb.m[m], row[m * KP + 2], sym_mod(a, tb.m[m]));
        ck_assert_msg(!bad, "v %a E %d S %d: not int8 digits, or a slot written that is not its own", v, e, S);
        /* the one-rounding integer is the digits' integer */
        int64_t Q;
        int p2;
        ck_assert(ref_crt_value_direct(&Q, &p2, v, e, S));
        i128 x = (i128)Q;
        for (int p = 0; p < p2; p++) x *= 2;
        ck_assert_msg(x == a, "v %a E %d S %d: a' direct %lld 2^%d, not the digits' integer", v, e, S, (long long)Q, p2);
    }
    ck_assert_msg(long_windows > 0, "no value spanned four digits: the test misses long windows");
}
END_TEST

/* X back from the bytes d_t of its residues (as the GEMMs give them: C_t = X mod m_t here).
 * Plain comparisons: Check records every passing assertion, and this runs 2^24 times. */
static void check_back(const ref_crt_table *t, i128 x)
{
    uint8_t d[REF_CRT_MAX];
    for (int q = 0; q < t->n; q++) {
        int c = (int)(x % t->m[q]);   /* any representative: the reduction takes int32 */
        d[q] = ref_crt_reduce(c, (uint32_t)t->m[q], t->magic[q], (uint32_t)t->c16[q], (uint32_t)t->y[q]);
    }
    uint32_t mag[REF_CRT_LIMBS];
    int neg = -1, ok = ref_crt_value_limbs(mag, &neg, d, 1, t);
    i128 ax = x < 0 ? -x : x;
    for (int l = 0; l < REF_CRT_LIMBS; l++) ok &= mag[l] == (l < 4 ? (uint32_t)(ax >> (32 * l)) : 0u);
    ok &= neg == (x < 0);
    if (!ok)
        ck_abort_msg("n %d X %s0x%016llx%016llx: back %s0x%08x%08x%08x%08x", t->n, x < 0 ? "-" : "",
                     (unsigned long long)(ax >> 64), (unsigned long long)ax, neg ? "-" : "", mag[3], mag[2], mag[1],
                     mag[0]);
}

START_TEST(reconstruct_every_value)
{
    ref_crt_table t;   /* 1 x 1 slices at kp 16: 20 bits, three moduli, M = 256 255 253 */
    ck_assert(ref_crt_table_init(&t, 1, 1, 16));
    ck_assert_int_eq(t.n, 3);
    i128 half = (i128)256 * 255 * 253 / 2;
    for (i128 x = -half + 1; x < half; x++) check_back(&t, x);
    /* larger tables: random and extreme values up to 126 bits */
    rs = mmp_check_seed * 1442695040888963407ull + 5;
    ck_assert(ref_crt_table_init(&t, 8, 8, 8192));
    i128 top = ((i128)1 << 126) - 1;
    i128 fixed[] = {0, 1, -1, top, -top, (i128)1 << 64, -((i128)1 << 100), ((i128)1 << 32) - 1};
    for (int i = 0; i < 8; i++) check_back(&t, fixed[i]);
    for (int i = 0; i < 200000; i++) {
        i128 x = ((i128)rnd64() << 62) ^ (i128)rnd64();
        x >>= (int)(rnd64() % 120);
        check_back(&t, (rnd64() & 1) ? -x : x);
    }
}
END_TEST

/* Tiny rows of A and twelve slices each: the square's unit is about 2^-300 (the int8 route's
 * formats never take it below 2^-1022, where only a limb's bound would go into the state). */
START_TEST(model_tiny_scales)
{
    rs = mmp_check_seed * 2862933555777941757ull + 41;
    enum { M = 12, N = 10, K = 40 };
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, M, N, K);
    float a[M * K], b[K * N];
    for (int x = 0; x < M * K; x++) a[x] = (float)ldexp(urand() - 0.5, -100 - (int)(rnd64() % 20));
    for (int x = 0; x < K * N; x++) b[x] = (float)ldexp(urand() - 0.5, -(int)(rnd64() % 24));
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    o.crt = 3;
    o.slices = REF_SMAX;
    mmp_ref_result r, rm;
    mmp_ref_result_init(&r); mmp_ref_result_init(&rm);
    ck_assert_msg(ref_v2_host_run(&r, a, b, NULL, &g, &o, 1) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(r.crt > 0 && r.slices_a == REF_SMAX, "%d moduli, %d slices", r.crt, r.slices_a);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, a, b, NULL, &g, &o) == MMP_STATUS_OK);
    for (int x = 0; x < M * N; x++)
        ck_assert_msg(same_bits(r.d64[x], rm.d64[x]) && same_bits(r.dout[x], rm.dout[x]), "(%d,%d): %a mpfr %a", x / N,
                      x % N, r.d64[x], rm.d64[x]);
    mmp_ref_result_clear(&r); mmp_ref_result_clear(&rm);
}
END_TEST

/* Wide data, the route by cost: a square by residues, one GEMM per modulus, fewer than the
 * slice pairs of the triangle taken without it (whose GEMMs each hold a level's pairs along
 * K'); the plan may leave a few more elements to the dot stage for that (both counts printed on
 * failure), and every element is MPFR's. */
START_TEST(wide_data_take_residues)
{
    static const mmp_format fmt[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP32};
    rs = mmp_check_seed * 1442695040888963407ull + 177 + (uint64_t)_i;
    prob p;
    prob_make(&p, fmt[_i], fmt[_i], MMP_FORMAT_FP32, MMP_FORMAT_FP32, 96, 80, 512, 0, 0, 1.0, 0.0, GEN_WIDE);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    o.crt = 2;
    mmp_ref_result rp, rc, rm;
    mmp_ref_result_init(&rp); mmp_ref_result_init(&rc); mmp_ref_result_init(&rm);
    ck_assert(ref_v2_host_run(&rp, p.a, p.b, NULL, &p.g, &o, 2) == MMP_STATUS_OK);
    o.crt = 1;
    ck_assert(ref_v2_host_run(&rc, p.a, p.b, NULL, &p.g, &o, 2) == MMP_STATUS_OK);
    int64_t open_p = rp.split.n_dot + rp.n_exact + rp.n_mpfr, open_c = rc.split.n_dot + rc.n_exact + rc.n_mpfr;
    int pairs = ref_plan_pairs(rp.slices_a, rp.slices_b, rp.slice_levels);
    ck_assert_msg(rp.crt == 0 && rc.crt > 0 && rc.n_gemms == rc.crt && rc.crt < pairs,
                  "%s: pairs %dx%d/%d (%d pairs) %lld open; residues %dx%d %d moduli %lld GEMMs %lld open",
                  mmp_format_name(fmt[_i]), rp.slices_a, rp.slices_b, rp.slice_levels, pairs, (long long)open_p,
                  rc.slices_a, rc.slices_b, rc.crt, (long long)rc.n_gemms, (long long)open_c);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, NULL, &p.g, &o) == MMP_STATUS_OK);
    for (int64_t x = 0; x < 96 * 80; x++) ck_assert(same_bits(rc.d64[x], rm.d64[x]) && same_bits(rc.dout[x], rm.dout[x]));
    mmp_ref_result_clear(&rp); mmp_ref_result_clear(&rc); mmp_ref_result_clear(&rm);
    prob_free(&p);
}
END_TEST

/* The mode: the option first, then MMP_REF_CRT, by cost by default; K' past one GEMM's: pairs. */
START_TEST(mode_choice)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    unsetenv("MMP_REF_CRT");
    ck_assert_int_eq(o.crt, 0);
    ck_assert_int_eq(ref_plan_crt_mode(&o), 1);
    setenv("MMP_REF_CRT", "1", 1);
    ck_assert_int_eq(ref_plan_crt_mode(&o), 1);
    setenv("MMP_REF_CRT", "3", 1);
    ck_assert_int_eq(ref_plan_crt_mode(&o), 2);
    setenv("MMP_REF_CRT", "0", 1);
    ck_assert_int_eq(ref_plan_crt_mode(&o), 0);
    o.crt = 1;
    ck_assert_int_eq(ref_plan_crt_mode(&o), 1);
    o.crt = 3;
    ck_assert_int_eq(ref_plan_crt_mode(&o), 2);
    setenv("MMP_REF_CRT", "1", 1);
    o.crt = 2;
    ck_assert_int_eq(ref_plan_crt_mode(&o), 0);
    unsetenv("MMP_REF_CRT");
    /* the K' limit below kp: the chunked pairs, not residues */
    rs = mmp_check_seed + 9;
    setenv("MMP_REF_IMMA_KMAX", "32", 1);
    prob p;
    prob_make(&p, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 8, 8, 150, 0, 0, 1.0, 0.0,
              GEN_WIDE);
    o.imma = 1;
    o.crt = 3;
    mmp_ref_result r;
    mmp_ref_result_init(&r);
    ck_assert(ref_v2_host_run(&r, p.a, p.b, NULL, &p.g, &o, 1) == MMP_STATUS_OK);
    ck_assert_int_eq(r.crt, 0);
    unsetenv("MMP_REF_IMMA_KMAX");
    mmp_ref_result_clear(&r);
    prob_free(&p);
}
END_TEST

static Suite *ref_crt_suite(void)
{
    Suite *s = suite_create("ref_crt");
    TCase *t = tcase_create("residue_route");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, table_is_consistent);
    tcase_add_test(t, integer_steps);
    tcase_add_test(t, residues_match_digits);
    tcase_add_test(t, reconstruct_every_value);
    tcase_add_test(t, model_tiny_scales);
    tcase_add_loop_test(t, wide_data_take_residues, 0, 2);
    tcase_add_test(t, mode_choice);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(ref_crt_suite)
