/* check_ref_zero.c — the sign of exact zero sums in version 2 of the device reference (ref_v2.h:
 * ref_v2_zero_neg, the zero and sign masks), through its host model (ref_v2_host.c):
 *   - hand-built signed zeros: rows of A all +-0 in patterns and rows of +-1, columns of B of
 *     +-1, of -0, of alternating signed zeros; K = 1, 3, 63, 64, 65, 130 (words and their
 *     tails); alpha negative, beta C = +-0 and nonzero. Every element bit for bit (the sign of
 *     zero included) as pure MPFR, the certified CPU path and an IEEE double oracle, and the
 *     dot stage never used, by the host model or the CPU path (their finish signs every exact
 *     zero);
 *   - onehot data (one nonzero per row of A and column of B, the other entries +-0 at random)
 *     and special-value data, several formats, both routes (DGEMM, int8): every element as
 *     MPFR and the CPU path; onehot sends nothing to the dot stage on either (but for fp64);
 *   - fp64 products that underflow to 0: their tiny exact sum, not the masks, signs the result.
 *
 *   build/tests/check_ref_zero            (ctest -L cpu; MMP_SEED=n to reproduce)
 */
#include "tests/check_main.h"

#include <math.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/reference.h"
#include "reference/ref_v2.h"
#include "tests/lib/ref_testgen.h"

/* Slice levels forced on the host model and the CPU path (mmp_ref_options.levels; 0: the plan's). */
static int force_levels;

/* Elements the CPU path's last three_agree left past its finish (dot stage, exact evaluator, MPFR). */
static int64_t cpu_open;

/* Host model, CPU certified path and MPFR on one problem; every element of the three equal bit
 * for bit. Returns the host model's result in *rv (the caller clears it). */
static void three_agree(mmp_ref_result *rv, const void *a, const void *b, const void *c, const mmp_gemm *g, int imma,
                        const char *what)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = imma;
    o.levels = force_levels;
    mmp_ref_result rc, rm;
    mmp_ref_result_init(rv); mmp_ref_result_init(&rc); mmp_ref_result_init(&rm);
    ck_assert_msg(ref_v2_host_run(rv, a, b, c, g, &o, 1) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert(mmp_ref_gemm(&rc, a, b, c, g, &o) == MMP_STATUS_OK);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, a, b, c, g, &o) == MMP_STATUS_OK);
    for (int64_t x = 0; x < g->m * g->n; x++)
        ck_assert_msg(same_bits(rv->d64[x], rm.d64[x]) && same_bits(rv->dout[x], rm.dout[x]) &&
                          same_bits(rc.d64[x], rm.d64[x]) && same_bits(rc.dout[x], rm.dout[x]),
                      "%s %s->%s %lldx%lldx%lld alpha %g beta %g imma %d (%lld,%lld): v2 %a/%a cpu %a/%a mpfr %a/%a",
                      what, mmp_format_name(g->a), mmp_format_name(g->d), (long long)g->m, (long long)g->n,
                      (long long)g->k, g->alpha, g->beta, rv->imma, (long long)(x / g->n), (long long)(x % g->n),
                      rv->d64[x], rv->dout[x], rc.d64[x], rc.dout[x], rm.d64[x], rm.dout[x]);
    cpu_open = rc.split.n_dot + rc.n_exact + rc.n_mpfr;
    mmp_ref_result_clear(&rc); mmp_ref_result_clear(&rm);
}

/* Rows 0-7 of A: +-0, the sign of a_ik bit (k % 3) of i; rows 8, 9: +1, and +-1 alternating.
 * Columns 0-7 of B: +-1, the sign bit (k % 3) of j; column 8: -0; column 9: -0 for even k,
 * +0 for odd k. So D(i, 7 - i), D(0, 8), D(8, 8) (+1 times -0), D(9, 9) and some of column 9
 * are -0 sums: the Z_B term matters for row 8 and the sign term everywhere. */
enum { ZM = 10, ZN = 10, ZKMAX = 130 };

static void hand_fill(float *a, float *b, int K)
{
    for (int i = 0; i < ZM; i++)
        for (int k = 0; k < K; k++)
            a[i * K + k] = i < 8 ? ((i >> (k % 3)) & 1 ? -0.0f : 0.0f) : (i == 8 || k % 2 == 0 ? 1.0f : -1.0f);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < ZN; j++)
            b[k * ZN + j] = j < 8 ? ((j >> (k % 3)) & 1 ? -1.0f : 1.0f) : (j == 8 || k % 2 == 0 ? -0.0f : 0.0f);
}

/* The IEEE double oracle for a sum that is exactly 0: -0 iff every product is -0 (and K > 0),
 * then alpha S + beta c in binary64 (exact here: zeros and a power of 2). Returns 0 when S is
 * not an exact zero of zero products. */
static int hand_want(double *want, const float *a, const float *b, const float *c, int K, int i, int j, double alpha,
                     double beta)
{
    int neg = K > 0;
    for (int k = 0; k < K; k++) {
        double p = (double)a[i * K + k] * (double)b[k * ZN + j];
        if (p != 0.0) return 0;
        neg = neg && signbit(p);
    }
    double s = neg ? -0.0 : 0.0, x = alpha * s;
    if (beta != 0.0) x = x + beta * (double)c[i * ZN + j];
    *want = x;
    return 1;
}

START_TEST(hand_signed_zeros)
{
    static const int Ks[] = {1, 3, 63, 64, 65, 130};
    static const struct { double alpha, beta; float c; } v[] = {
        {1, 0, 0}, {-0.75, 0, 0}, {2, 1, -0.0f}, {1, 1, 0.0f}, {-1, -2, 0.0f}, {-3, 0.5, -0.0f}, {1, 0.5, 0.125f}};
    int K = Ks[_i];
    static float a[ZM * ZKMAX], b[ZKMAX * ZN], c[ZM * ZN];
    hand_fill(a, b, K);
    int negs = 0;
    for (int t = 0; t < (int)(sizeof v / sizeof v[0]); t++) {
        for (int x = 0; x < ZM * ZN; x++) c[x] = v[t].c;
        mmp_gemm g;
        mmp_gemm_init(&g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, ZM, ZN, K);
        g.lb = MMP_LAYOUT_ROW;
        g.alpha = v[t].alpha;
        g.beta = v[t].beta;
        for (int imma = 1; imma <= 2; imma++) {
            mmp_ref_result rv;
            three_agree(&rv, a, b, c, &g, imma, "hand");
            ck_assert_msg(rv.split.n_dot == 0 && rv.n_exact + rv.n_mpfr == 0 && cpu_open == 0,
                          "K %d variant %d: dot %lld, exact %lld, mpfr %lld; cpu path %lld", K, t,
                          (long long)rv.split.n_dot, (long long)rv.n_exact, (long long)rv.n_mpfr, (long long)cpu_open);
            for (int i = 0; i < ZM; i++)
                for (int j = 0; j < ZN; j++) {
                    double want;
                    if (!hand_want(&want, a, b, c, K, i, j, v[t].alpha, v[t].beta)) continue;
                    int x = i * ZN + j;
                    negs += want == 0.0 && signbit(want);
                    ck_assert_msg(same_bits(rv.d64[x], want) && same_bits(rv.dout[x], want),
                                  "K %d variant %d (%d,%d): v2 %a/%a want %a", K, t, i, j, rv.d64[x], rv.dout[x], want);
                }
            mmp_ref_result_clear(&rv);
        }
    }
    ck_assert_int_gt(negs, 0);
}
END_TEST

/* fp64 inputs whose products underflow to 0 in binary64: the exact sum is a tiny nonzero, so
 * its sign, not the products' zero signs, decides the zero that RN64 makes of it. Row i of A:
 * (-1)^i 2^-1060 (subnormal; below the slices of its row, so the dropped-term bound underflows
 * too), 2^-328, then 0; column j of B: 2^-75, (-1)^j 2^-851, 1. The sum's sign is row i's; the
 * masks must not sign these zeros (ref_v2_zero_mode): every element as MPFR on both routes,
 * half of them -0. */
START_TEST(fp64_underflowing_products)
{
    enum { UM = 4, UN = 4 };
    static const double ab[][2] = {{1, 0}, {-0.75, 0}, {2, 1}};
    int negs = 0;
    for (int K = 2; K <= 3; K++)
        for (int t = 0; t < 6; t++) {
            force_levels = t < 3 ? 0 : 4;   /* the plan's (remainders added exactly), a triangle (bounded) */
            double a[UM * 3], b[3 * UN], c[UM * UN];
            for (int i = 0; i < UM; i++)
                for (int k = 0; k < K; k++) a[i * K + k] = k == 0 ? (i & 1 ? -0x1p-1060 : 0x1p-1060) : k == 1 ? 0x1p-328 : 0.0;
            for (int k = 0; k < K; k++)
                for (int j = 0; j < UN; j++) b[k * UN + j] = k == 0 ? 0x1p-75 : k == 1 ? (j & 1 ? -0x1p-851 : 0x1p-851) : 1.0;
            for (int x = 0; x < UM * UN; x++) c[x] = x % 3 == 0 ? -0.0 : 0.0;
            mmp_gemm g;
            mmp_gemm_init(&g, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, UM, UN, K);
            g.lb = MMP_LAYOUT_ROW;
            g.alpha = ab[t % 3][0];
            g.beta = ab[t % 3][1];
            for (int imma = 1; imma <= 2; imma++) {
                mmp_ref_result rv;
                three_agree(&rv, a, b, c, &g, imma, "fp64 underflow");
                for (int x = 0; x < UM * UN; x++) negs += rv.dout[x] == 0.0 && signbit(rv.dout[x]);
                mmp_ref_result_clear(&rv);
            }
        }
    force_levels = 0;
    ck_assert_int_gt(negs, 0);
}
END_TEST

enum { GEN_ONEHOT = GEN_SPECIAL + 1 };

/* One nonzero per row of A and per column of B; the other entries +0 or -0 at random. */
static void onehot_fill(prob *p)
{
    const mmp_gemm *g = &p->g;
    for (int64_t i = 0; i < g->m; i++) {
        int64_t hot = (int64_t)(rnd64() % (uint64_t)g->k);
        for (int64_t k = 0; k < g->k; k++)
            if (k != hot)
                mmp_format_store(p->a, mmp_gemm_index(g->la, g->lda, i, k), rnd64() % 2 ? -0.0 : 0.0, g->a,
                                 MMP_ROUND_NEAREST_EVEN, 1);
    }
    for (int64_t j = 0; j < g->n; j++) {
        int64_t hot = (int64_t)(rnd64() % (uint64_t)g->k);
        for (int64_t k = 0; k < g->k; k++)
            if (k != hot)
                mmp_format_store(p->b, mmp_gemm_index(g->lb, g->ldb, k, j), rnd64() % 2 ? -0.0 : 0.0, g->b,
                                 MMP_ROUND_NEAREST_EVEN, 1);
    }
}

static const struct { mmp_format a, c, d; } combos[] = {
    {MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32}, {MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_BF16},
    {MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP16}, {MMP_FORMAT_E4M3, MMP_FORMAT_FP16, MMP_FORMAT_FP32},
    {MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64}, {MMP_FORMAT_INT8, MMP_FORMAT_INT32, MMP_FORMAT_FP32},
};
enum { N_COMBOS = sizeof combos / sizeof combos[0] };

/* onehot (tiny K, a word, past a word) and special data, both routes, alpha and beta C */
START_TEST(onehot_and_special)
{
    rs = mmp_check_seed * 2862933555777941757ull + (uint64_t)_i * 977 + 3;
    static const int64_t Ks[] = {1, 5, 64, 97};
    static const double ab[][2] = {{1, 0}, {-0.75, 0}, {-1, 0.5}};
    for (int kind = GEN_SPECIAL; kind <= GEN_ONEHOT; kind++)
        for (int q = 0; q < 4; q++) {
            int64_t m = 9 + (int64_t)(rnd64() % 12), n = 7 + (int64_t)(rnd64() % 12), k = Ks[q];
            const double *al = ab[(q + kind) % 3];
            prob p;
            prob_make(&p, combos[_i].a, combos[_i].a, combos[_i].c, combos[_i].d, m, n, k, (int)(rnd64() % 8),
                      (int)(rnd64() % 2), al[0], al[1], kind == GEN_ONEHOT ? GEN_RANDOM : GEN_SPECIAL);
            if (kind == GEN_ONEHOT) onehot_fill(&p);
            for (int imma = 1; imma <= 2; imma++) {
                mmp_ref_result rv;
                three_agree(&rv, p.a, p.b, p.c, &p.g, imma, kind == GEN_ONEHOT ? "onehot" : "special");
                if (kind == GEN_ONEHOT && ref_v2_zero_mode(&p.g) != REF_V2_ZERO_OFF)   /* fp64: zeros go to the dot stage */
                    ck_assert_msg(rv.split.n_dot == 0 && rv.n_exact + rv.n_mpfr == 0 && cpu_open == 0,
                                  "onehot %s k %lld: dot %lld, exact %lld, mpfr %lld; cpu path %lld",
                                  mmp_format_name(combos[_i].a), (long long)k, (long long)rv.split.n_dot,
                                  (long long)rv.n_exact, (long long)rv.n_mpfr, (long long)cpu_open);
                mmp_ref_result_clear(&rv);
            }
            prob_free(&p);
        }
}
END_TEST

static Suite *ref_zero_suite(void)
{
    Suite *s = suite_create("ref_zero");
    TCase *t = tcase_create("exact_zero_sign");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, hand_signed_zeros, 0, 6);
    tcase_add_loop_test(t, onehot_and_special, 0, N_COMBOS);
    tcase_add_test(t, fp64_underflowing_products);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(ref_zero_suite)
