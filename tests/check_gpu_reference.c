/* check_gpu_reference.c — the device reference path (MMP_REF_PATH_CUDA), versions 2 (everything
 * on the device, ref_cuda2.cu) and 1 (host prepare/finish, ref_cuda.cu), agrees bit for bit with
 * the certified CPU path (itself checked against pure MPFR by check_reference) on random,
 * wide-exponent, cancelling and special-value problems, with layouts, padded leading
 * dimensions and alpha/beta; on entries far below their row/column maximum (both remainder
 * modes: exact lists and the bound), every output format (C in it too), and a known answer
 * that needs the remainder cross term; plus the |A||B| bound, and version 2's plan (slices,
 * remainder mode) equals the CPU path's on the DGEMM route; version 2 on the int8 route (int8
 * slices on integer tensor cores, ref_cuda2_imma.cu) on every problem whose formats allow it,
 * and there with every square's products by residues (ref_cuda2_crt.cu, one GEMM per modulus);
 * version 2 also reading the caller's device copies of the operands (mmp_ref_options.dev_*)
 * instead of uploading, and deciding its open elements from rows and columns gathered there
 * while the host copies are stale. Each Check test runs in a forked child, so CUDA is
 * initialised there, never in this process. Without a device: prints why, exits 77.
 *
 *   build/suites/check_gpu_reference            (ctest -L gpu; MMP_SEED=n to reproduce)
 */
#define MMP_CHECK_GPU
#include "tests/check_main.h"

#include "mmaprobe/reference.h"
#include "reference/ref_internal.h"
#include "reference/ref_plan.h"
#include "tests/lib/ref_testgen.h"

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

/* Version 5's stale host operands: garbage until host_operands copies the problem in. */
typedef struct {
    const prob *p;
    void *a, *b, *c;
    int calls;
} stale_ops;

static size_t span_bytes(mmp_format f, mmp_layout l, int64_t ld, int64_t rows, int64_t cols)
{
    return mmp_format_bytes(f, (size_t)(l == MMP_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows));
}

static mmp_status stale_restore(void *ctx)
{
    stale_ops *s = ctx;
    const mmp_gemm *g = &s->p->g;
    s->calls++;
    memcpy(s->a, s->p->a, span_bytes(g->a, g->la, g->lda, g->m, g->k));
    memcpy(s->b, s->p->b, span_bytes(g->b, g->lb, g->ldb, g->k, g->n));
    if (g->beta != 0.0) memcpy(s->c, s->p->c, span_bytes(g->c, g->lc, g->ldc, g->m, g->n));
    return MMP_STATUS_OK;
}

static void *garbage(size_t bytes)
{
    void *q = malloc(bytes);
    ck_assert(q);
    memset(q, 0x7f, bytes);   /* NaN or huge in every float format, 127 in int8 */
    return q;
}

/* versions here: 1; 2 on the DGEMM route; 3: version 2 reading device copies of the operands
 * (mmp_ref_options.dev_*), route chosen by the plan; 4: version 2 on the int8 route where the
 * formats allow it (ref_plan_route); 5: as 3 with stale host operands (host_operands restores
 * them; version 5's callers set MMP_REF_GATHER and MMP_REF_DOT); 6: as 4 with the residue route
 * for every square (mmp_ref_options.crt = 3) */
static int compute_stale_calls;
static void compute(mmp_ref_result *r, const prob *p, mmp_ref_path path, int version)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.path = path;
    o.want_absbound = 1;
    o.device_version = version >= 3 ? 2 : version;
    o.imma = version == 2 ? 2 : version == 4 || version == 6 ? 1 : 0;
    o.crt = version == 6 ? 3 : version == 4 ? 2 : 0;   /* 4: the pairs only; 3, 5: the default */
    int want_imma = (version == 4 || version == 6) && ref_plan_route(&p->g, &o);
    void *da = NULL, *db = NULL, *dc = NULL;
    const void *ha = p->a, *hb = p->b, *hc = p->c;
    stale_ops so = {p, NULL, NULL, NULL, 0};
    if (version == 5) {
        const mmp_gemm *g = &p->g;
        so.a = garbage(span_bytes(g->a, g->la, g->lda, g->m, g->k));
        so.b = garbage(span_bytes(g->b, g->lb, g->ldb, g->k, g->n));
        so.c = g->beta != 0.0 ? garbage(span_bytes(g->c, g->lc, g->ldc, g->m, g->n)) : NULL;
        ha = so.a; hb = so.b; hc = so.c;
        o.host_operands = stale_restore;
        o.host_ctx = &so;
    }
    if (version == 3 || version == 5) {
        const mmp_gemm *g = &p->g;
        ck_assert(ref_cuda2_upload(&da, p->a, g->a, g->la, g->lda, g->m, g->k, 0) == MMP_STATUS_OK);
        ck_assert(ref_cuda2_upload(&db, p->b, g->b, g->lb, g->ldb, g->k, g->n, 0) == MMP_STATUS_OK);
        if (g->beta != 0.0) ck_assert(ref_cuda2_upload(&dc, p->c, g->c, g->lc, g->ldc, g->m, g->n, 0) == MMP_STATUS_OK);
        o.dev_a = da; o.dev_b = db; o.dev_c = dc;
    }
    mmp_ref_result_init(r);
    mmp_status st = mmp_ref_gemm(r, ha, hb, hc, &p->g, &o);
    ref_cuda2_free(da); ref_cuda2_free(db); ref_cuda2_free(dc);
    free(so.a); free(so.b); free(so.c);
    compute_stale_calls = so.calls;
    if (version == 5) version = 3;
    if (version == 3) {
        if (st == MMP_STATUS_OK && !r->is_integer)
            ck_assert_msg(r->split.upload_s == 0.0 || r->split.version != 2, "device operands were uploaded again");
    }
    if (path == MMP_REF_PATH_CUDA && version >= 2 && st == MMP_STATUS_OK && !r->is_integer)
        ck_assert_msg((version == 3 || r->imma == want_imma) &&
                          (version == 6 ? (r->crt > 0) == r->imma : version != 4 || r->crt == 0),
                      "device version %d: route %s, asked for %s; %d moduli", version, r->imma ? "int8" : "dgemm",
                      want_imma ? "int8" : "dgemm", r->crt);
    if (version >= 3) version = 2;
    ck_assert_msg(st == MMP_STATUS_OK, "mmp_ref_gemm (%s v%d): %s", path == MMP_REF_PATH_CUDA ? "cuda" : "cpu",
                  version, mmp_error_last());
    if (path == MMP_REF_PATH_CUDA && !r->is_integer)
        ck_assert_msg(r->split.version == version, "asked for device version %d, ran %d", version, r->split.version);
}

/* Both device versions against the CPU path on problem p (every element, both roundings). */
static void compare_problem(const prob *p, const char *what)
{
    int64_t m = p->g.m, n = p->g.n, k = p->g.k;
    mmp_ref_result rc;
    compute(&rc, p, MMP_REF_PATH_CERTIFIED, 0);
    static const int versions[] = {6, 4, 3, 2, 1};   /* 6: residues; 4: int8 route; 3: on device operands */
    for (int vi = 0; vi < 5; vi++) {
        int version = versions[vi];
        mmp_ref_result rg;
        compute(&rg, p, MMP_REF_PATH_CUDA, version);
        /* the same rules make the same square and mode; a triangle (bound mode) is weighed with
         * the device's and the host's costs of the dot stage, so either may take one */
        int squares = rg.slice_levels == rg.slices_a + rg.slices_b && rc.slice_levels == rc.slices_a + rc.slices_b;
        if (version >= 2 && !rc.is_integer && !rg.imma)   /* the DGEMM route: the CPU path's slicing */
            ck_assert_msg(rg.split.sparse == rc.split.sparse && (!squares || (rg.slices_a == rc.slices_a &&
                          rg.slices_b == rc.slices_b && rg.split.n_remainders == rc.split.n_remainders)),
                          "%s: plan v2 %dx%d sparse %d (%lld remainders), cpu %dx%d sparse %d (%lld)", what, rg.slices_a,
                          rg.slices_b, rg.split.sparse, (long long)rg.split.n_remainders, rc.slices_a, rc.slices_b,
                          rc.split.sparse, (long long)rc.split.n_remainders);
        for (int64_t x = 0; x < m * n; x++) {
            ck_assert_msg(same_bits(rc.d64[x], rg.d64[x]) && same_bits(rc.dout[x], rg.dout[x]),
                          "%s v%d %s*%s+%s->%s %lldx%lldx%lld alpha %g beta %g: (%lld,%lld) cpu %a/%a cuda %a/%a", what,
                          version, mmp_format_name(p->g.a), mmp_format_name(p->g.b), mmp_format_name(p->g.c),
                          mmp_format_name(p->g.d), (long long)m, (long long)n, (long long)k, p->g.alpha, p->g.beta,
                          (long long)(x / n), (long long)(x % n), rc.d64[x], rc.dout[x], rg.d64[x], rg.dout[x]);
            /* both bounds are upper bounds of the same S_ij from DGEMMs with different orders:
             * each within a relative 4 K u (+ underflow) of it, so of each other */
            double a = rc.absbound[x], b = rg.absbound[x], tol = 16.0 * (double)k * 0x1p-53 * fmax(a, b) + 0x1p-1000;
            ck_assert_msg((!isfinite(a) && !isfinite(b)) || a == b || fabs(a - b) <= tol, "%s v%d absbound %a vs %a",
                          what, version, a, b);
        }
        mmp_ref_result_clear(&rg);
    }
    mmp_ref_result_clear(&rc);
}

static void device_agrees(int combo, gen_kind kind)
{
    rs = mmp_check_seed * 2654435761u + (uint64_t)combo * 101 + (uint64_t)kind * 7 + 3;
    static const double alphas[] = {1.0, -0.75, 3.0}, betas[] = {0.0, 1.0, 0.1};
    for (int v = 0; v < 3; v++) {
        int64_t m = 40 + (int64_t)(rnd64() % 60) * 2, n = 30 + (int64_t)(rnd64() % 50) * 2;
        int64_t k = v == 2 ? 1000 + (int64_t)(rnd64() % 600) * 2 : 2 + (int64_t)(rnd64() % 150) * 2;
        prob p;
        prob_make(&p, combos[combo].a, combos[combo].b, combos[combo].c, combos[combo].d, m, n, k,
                  (int)(rnd64() % 8), (int)(rnd64() % 2), alphas[v], betas[v], kind);
        compare_problem(&p, "kind");
        prob_free(&p);
    }
}

/* The elements left open after the bound (the dot stage off: every one of them) decided from
 * their rows and columns gathered from the device operands, with the host operands stale
 * (garbage that the host_operands callback would replace): the same bits as the CPU path on
 * every element, the callback never called, and elements did go that way. */
static void open_gathered(int combo, gen_kind kind)
{
    rs = mmp_check_seed * 6364136223846793005ull + (uint64_t)combo * 31 + (uint64_t)kind * 5 + 11;
    setenv("MMP_REF_GATHER", "1", 1);
    setenv("MMP_REF_DOT", "0", 1);
    int64_t open = 0;
    /* two problems, and more (up to 8) while none has left an element open: on some data the
     * finish decides everything (fp64 special: about 1 seed in 13 for two problems) */
    for (int v = 0; v < 8 && (v < 2 || open == 0); v++) {
        int64_t m = 24 + (int64_t)(rnd64() % 20) * 2, n = 20 + (int64_t)(rnd64() % 20) * 2, k = 64 + (int64_t)(rnd64() % 200);
        prob p;
        prob_make(&p, combos[combo].a, combos[combo].b, combos[combo].c, combos[combo].d, m, n, k,
                  (int)(rnd64() % 8), 0, v % 2 ? -0.75 : 1.0, v % 2 ? 0.5 : 0.0, kind);
        mmp_ref_result rc, rg;
        compute(&rc, &p, MMP_REF_PATH_CERTIFIED, 0);
        compute(&rg, &p, MMP_REF_PATH_CUDA, 5);
        if (!rg.is_integer) {
            ck_assert_msg(compute_stale_calls == 0, "the stale host operands were made (%d calls)", compute_stale_calls);
            open += rg.n_exact + rg.n_mpfr;
        }
        for (int64_t x = 0; x < m * n; x++)
            ck_assert_msg(same_bits(rc.d64[x], rg.d64[x]) && same_bits(rc.dout[x], rg.dout[x]),
                          "%s->%s %lldx%lldx%lld: (%lld,%lld) cpu %a/%a gathered %a/%a", mmp_format_name(p.g.a),
                          mmp_format_name(p.g.d), (long long)m, (long long)n, (long long)k, (long long)(x / n),
                          (long long)(x % n), rc.d64[x], rc.dout[x], rg.d64[x], rg.dout[x]);
        mmp_ref_result_clear(&rc);
        mmp_ref_result_clear(&rg);
        prob_free(&p);
    }
    ck_assert_msg(open > 0 || mmp_format_get_info(combos[combo].d)->is_float == 0,
                  "no element went to the exact evaluator: the test misses the gathered path");
}

START_TEST(device_open_gathered) { open_gathered(_i, _i % 2 ? GEN_SPECIAL : GEN_WIDE); }
END_TEST

/* entries far below their row/column maximum: bound mode (1/4 of them), exact lists (1/100) */
START_TEST(device_far)
{
    rs = mmp_check_seed * 2862933555777941757ull + (uint64_t)_i * 13 + 5;
    for (int v = 0; v < 2; v++) {
        int64_t m = 40 + (int64_t)(rnd64() % 60) * 2, n = 30 + (int64_t)(rnd64() % 50) * 2;
        int64_t k = 50 + (int64_t)(rnd64() % 700);
        prob p;
        prob_make(&p, combos[_i].a, combos[_i].b, combos[_i].c, combos[_i].d, m, n, k, (int)(rnd64() % 8),
                  (int)(rnd64() % 2), v ? 3.0 : -0.75, v ? 0.1 : 1.0, GEN_RANDOM);
        prob_far(&p, v ? 0.01 : 0.25);
        compare_problem(&p, v ? "far 1/100" : "far 1/4");
        prob_free(&p);
    }
}
END_TEST

/* every output format, C in it (integer C, packed int4), alpha and beta */
START_TEST(device_every_output)
{
    rs = mmp_check_seed * 1442695040888963407ull + (uint64_t)_i * 29 + 1;
    static const mmp_format ins[] = {MMP_FORMAT_FP32, MMP_FORMAT_BF16, MMP_FORMAT_E4M3};
    for (int v = 0; v < 3; v++) {
        int64_t m = 20 + (int64_t)(rnd64() % 30) * 2, n = 20 + (int64_t)(rnd64() % 30) * 2, k = 10 + (int64_t)(rnd64() % 300);
        prob p;
        prob_make(&p, ins[v], ins[v], (mmp_format)_i, (mmp_format)_i, m, n, k, (int)(rnd64() % 8), (int)(rnd64() % 2),
                  v == 1 ? -0.75 : 2.0, v == 0 ? 0.0 : 0.5, v == 2 ? GEN_WIDE : GEN_RANDOM);
        if (v == 1) prob_far(&p, 0.25);
        compare_problem(&p, "output");
        prob_free(&p);
    }
}
END_TEST

/* X = t u with t, u far below their row's and column's maximum: only the remainder terms,
 * the cross term rA rB included, give the exact t u (check_ref_round has the same on the CPU). */
START_TEST(device_cross_term)
{
    rs = mmp_check_seed * 9 + 1;
    enum { M = 6, N = 5, K = 3 };
    prob p;
    prob_make(&p, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, M, N, K, 0, 0, 1.0, 0.0, GEN_RANDOM);
    float *a = (float *)p.a, *b = (float *)p.b;
    cross_term_fill(a, b, M, N);
    mmp_ref_result r;
    compute(&r, &p, MMP_REF_PATH_CUDA, 2);
    ck_assert_int_eq(r.n_mpfr, 0);
    for (int x = 0; x < M * N; x++) {
        double want = (double)a[(x / N) * K + 2] * (double)b[2 * N + x % N];
        ck_assert_msg(r.d64[x] == want, "(%d,%d): %a want %a", x / N, x % N, r.d64[x], want);
    }
    mmp_ref_result_clear(&r);
    compare_problem(&p, "cross term");
    prob_free(&p);
}
END_TEST

START_TEST(device_random) { device_agrees(_i, GEN_RANDOM); }
END_TEST
START_TEST(device_wide) { device_agrees(_i, GEN_WIDE); }
END_TEST
START_TEST(device_cancel) { device_agrees(_i, GEN_CANCEL); }
END_TEST
START_TEST(device_special) { device_agrees(_i, GEN_SPECIAL); }
END_TEST

/* The device's statistics (v2_stats_kernel: leading zero slices counted per column, digits from
 * each entry's first nonzero slice) equal ref_vstats_pass1/_pass2's entry by entry: counts,
 * maxima, the scale exponent and the non-finite count bit for bit, the sums to their rounding
 * (any order: len nonnegative terms), on vectors whose entries spread over up to 1100 binades
 * below the maximum (subnormals among them), with zeros, NaN and Inf, at 8 bits and 22, of
 * lengths that leave a block's threads partial. */
START_TEST(device_vstats)
{
    rs = mmp_check_seed * 6364136223846793005ull + 31;
    enum { ROWS = 96 };
    static const int64_t lens[] = {1, 37, 700, 8192};
    for (int li = 0; li < 4; li++)
        for (int bi = 0; bi < 2; bi++) {
            int64_t len = lens[li];
            int beta = bi ? 22 : REF_IMMA_BETA;
            double *x = malloc((size_t)(ROWS * len) * sizeof(double));
            ref_vstats *dv = malloc(ROWS * sizeof *dv);
            ck_assert(x && dv);
            for (int64_t r = 0; r < ROWS; r++) {
                int span = 1 + (int)(rnd64() % 1100), zeros = (int)(rnd64() % 3) == 0;
                for (int64_t k = 0; k < len; k++) {
                    int kind = (int)(rnd64() % 60);
                    x[r * len + k] = zeros && kind < 30 ? 0.0 : kind == 0 ? 0.0 : kind == 1 && r % 4 == 0 ? NAN
                                   : kind == 2 && r % 4 == 1 ? -INFINITY
                                   : ldexp(urand(), 60 - (int)(rnd64() % (uint64_t)span)) * ((rnd64() & 1) ? -1 : 1);
                }
            }
            mmp_status st = ref_cuda2_vstats(dv, x, ROWS, len, beta);
            ck_assert_msg(st == MMP_STATUS_OK, "ref_cuda2_vstats: %s", mmp_error_last());
            int far = 0;
            for (int64_t r = 0; r < ROWS; r++) {
                const double *v = x + r * len;
                ref_vstats h;
                ref_vstats_zero(&h);
                for (int64_t k = 0; k < len; k++) ref_vstats_pass1(&h, v[k]);
                ref_vstats_scale(&h, beta);
                for (int64_t k = 0; k < len; k++) ref_vstats_pass2(&h, v[k], h.e, beta);
                const ref_vstats *d = &dv[r];
                double tol = 2.0 * (double)len * 0x1p-53;
                ck_assert_msg(d->e == h.e && d->n_bad == h.n_bad && same_bits(d->rmax[0], h.rmax[0]) &&
                                  fabs(d->sum - h.sum) <= tol * h.sum,
                              "len %lld beta %d row %lld: e %d/%d bad %d/%d max %a/%a sum %a/%a", (long long)len, beta,
                              (long long)r, d->e, h.e, d->n_bad, h.n_bad, d->rmax[0], h.rmax[0], d->sum, h.sum);
                for (int q = 1; q <= REF_SMAX; q++) {
                    ck_assert_msg(d->cnt[q] == h.cnt[q] && same_bits(d->rmax[q], h.rmax[q]) &&
                                      fabs(d->ssum[q] - h.ssum[q]) <= tol * h.ssum[q],
                                  "len %lld beta %d row %lld slice %d: cnt %d/%d rmax %a/%a ssum %a/%a", (long long)len,
                                  beta, (long long)r, q, d->cnt[q], h.cnt[q], d->rmax[q], h.rmax[q], d->ssum[q], h.ssum[q]);
                    far += q == REF_SMAX && h.cnt[q] > 0;
                }
            }
            /* the test reaches entries below every slice (the leading-zero path's cap) */
            ck_assert_msg(len < 700 || far > 0, "len %lld beta %d: no entry below slice %d", (long long)len, beta, REF_SMAX);
            free(x); free(dv);
        }
}
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
    tcase_add_loop_test(t, device_far, 0, N_COMBOS);
    tcase_add_loop_test(t, device_every_output, 0, MMP_FORMAT_COUNT_);
    tcase_add_test(t, device_cross_term);
    tcase_add_loop_test(t, device_open_gathered, 0, N_COMBOS);
    tcase_add_test(t, device_vstats);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(gpu_reference_suite)
