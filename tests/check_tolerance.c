/* check_tolerance.c — the default tolerance holds for the hardware the probes measured, and the
 * checks beyond it (narrow accumulators, biased rounding, flushed subnormals) catch what they
 * are for: the host_tcm controls (the H200 tensor-core model run as the kernel, kernels/
 * host_tcm.c) PASS wide and special data at K = 1 ... 8192 for every instruction family,
 * while wrong kernels on the same data still FAIL with their reason. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/metrics.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "reference/ref_internal.h"
#include "tests/check_main.h"
#include "suites/runner_internal.h"

static const char *const controls[] = {
    "host_tcm_bf16_f32", "host_tcm_bf16_f32_splitk", "host_tcm_f16_f32", "host_tcm_f16_f16",
    "host_tcm_f16_f32_h", "host_tcm_tf32_f32", "host_tcm_e4m3_f32", "host_tcm_e4m3_f32_wg",
};
#define N_CONTROLS (sizeof controls / sizeof controls[0])
static const int64_t ks[] = {1, 2, 3, 16, 64, 8192};
#define N_KS (sizeof ks / sizeof ks[0])

static void run_cases(mmp_case_result *r, mmp_case *c, size_t n)
{
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    ck_assert_int_eq(mmp_runner_run(r, c, n, &o, NULL, NULL), MMP_STATUS_OK);
}

static void make(mmp_case *c, const char *kernel, int64_t m, int64_t n, int64_t k, mmp_dist d, uint64_t seed)
{
    const mmp_kernel_desc *kd = mmp_registry_find(kernel, MMP_REGISTRY_ALL);
    ck_assert_msg(kd != NULL, "no kernel %s", kernel);
    mmp_case_init(c, kd, m, n, k, d, seed);
    mmp_case_finish(c);
}

/* Every control, wide and special, K = 1, 2, 3, 16, 64, 8192: PASS. */
START_TEST(test_controls_pass)
{
    const char *kn = controls[_i];
    mmp_case c[2 * N_KS];
    size_t n = 0;
    for (size_t t = 0; t < N_KS; t++) {
        int64_t mn = ks[t] > 64 ? 16 : 48;
        make(&c[n++], kn, mn, mn, ks[t], MMP_DIST_WIDE, mmp_check_seed + t);
        make(&c[n++], kn, mn, mn, ks[t], MMP_DIST_SPECIAL, mmp_check_seed + t);
    }
    mmp_case_result r[2 * N_KS];
    run_cases(r, c, n);
    for (size_t i = 0; i < n; i++) {
        printf("%-60s %s err/bound %.3g %s\n", r[i].id, mmp_verdict_name(r[i].verdict), r[i].metrics.max_ratio_det,
               r[i].message);
        ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS, "%s: %s %s", r[i].id, mmp_verdict_name(r[i].verdict),
                      r[i].message);
    }
}
END_TEST

typedef struct {
    const char *kernel;
    int64_t m, n, k;
    mmp_dist dist;
    uint32_t reason;
} wrong_case;

/* Wrong kernels on the data the controls pass. */
static const wrong_case wrong[] = {
    {"mut_host_drop_k_tile", 48, 48, 64, MMP_DIST_WIDE, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_drop_k_tile", 16, 16, 8192, MMP_DIST_WIDE, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_flush_sub", 48, 48, 1, MMP_DIST_WIDE, MMP_REASON_FLUSHED_SUBNORMAL},
    {"mut_host_flush_sub", 48, 48, 2, MMP_DIST_WIDE, MMP_REASON_FLUSHED_SUBNORMAL},
    {"mut_host_narrow_low", 64, 64, 128, MMP_DIST_UNIFORM, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_narrow_low", 16, 16, 8192, MMP_DIST_UNIFORM, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_narrow_low", 64, 64, 128, MMP_DIST_NORMAL, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_rz_out", 64, 64, 128, MMP_DIST_UNIFORM, MMP_REASON_BIASED_ROUNDING},
    {"mut_host_rz_out", 64, 64, 16, MMP_DIST_NORMAL, MMP_REASON_BIASED_ROUNDING},
    {"mut_host_rz_out", 64, 64, 64, MMP_DIST_WIDE, MMP_REASON_BIASED_ROUNDING},
};
#define N_WRONG (sizeof wrong / sizeof wrong[0])

START_TEST(test_wrong_kernels_fail)
{
    const wrong_case *w = &wrong[_i];
    mmp_case c;
    make(&c, w->kernel, w->m, w->n, w->k, w->dist, mmp_check_seed);
    mmp_case_result r;
    run_cases(&r, &c, 1);
    char why[128];
    printf("%-60s %s %s: %s\n", r.id, mmp_verdict_name(r.verdict), mmp_reason_format(why, sizeof why, r.reasons),
           r.message);
    ck_assert_msg(r.verdict == MMP_VERDICT_FAIL && (r.reasons & w->reason), "%s: %s %s, want %s", r.id,
                  mmp_verdict_name(r.verdict), why, mmp_reason_name(w->reason));
}
END_TEST

/* The rounding test's false positives: a round-to-nearest conversion over many seeds, shapes
 * and distributions never trips it (its threshold is for < 1e-9 per case). */
START_TEST(test_rounding_no_false_positive)
{
    static const int64_t kk[] = {1, 16, 128, 1024};
    static const mmp_dist dd[] = {MMP_DIST_UNIFORM, MMP_DIST_NORMAL, MMP_DIST_WIDE};
    mmp_case c[4 * 3 * 3];
    size_t n = 0;
    for (int s = 0; s < 3; s++)
        for (size_t t = 0; t < 4; t++)
            for (size_t d = 0; d < 3; d++)
                make(&c[n++], "host_tcm_f16_f32_h", 64, 64, kk[t], dd[d], mmp_check_seed * 7 + (uint64_t)s);
    mmp_case_result r[4 * 3 * 3];
    run_cases(r, c, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS, "%s: %s %s", r[i].id, mmp_verdict_name(r[i].verdict),
                      r[i].message);
}
END_TEST

/* An fp16 accumulator at K = 1000: gamma_Ke(2^-10) is infinite; the ratio is NaN, never 0. */
START_TEST(test_infinite_bound_is_nan)
{
    enum { M = 4, N = 4, K = 1000 };
    float got[M * N];
    double want[M * N], s[M * N];
    for (int t = 0; t < M * N; t++) { got[t] = 1.0f + 1e-3f * t; want[t] = 1.0; s[t] = 1000; }
    mmp_metrics_input in;
    memset(&in, 0, sizeof in);
    in.got = got; in.d_format = MMP_FORMAT_FP32; in.layout = MMP_LAYOUT_ROW; in.ldd = N;
    in.want64 = want; in.absbound = s; in.m = M; in.n = N; in.k = K;
    in.u_acc = mmp_metrics_unit_truncation(MMP_FORMAT_FP16, 0);
    in.acc_format = MMP_FORMAT_FP16;
    mmp_tolerance tol;
    mmp_tolerance_init(&tol);
    mmp_metrics m;
    ck_assert_int_eq(mmp_metrics_compute(&m, &in, &tol), MMP_STATUS_OK);
    ck_assert_msg(isnan(m.max_ratio_det), "ratio to an infinite bound is %g, want NaN", m.max_ratio_det);
}
END_TEST

/* The subnormal excess of one product: bf16 min subnormal 2^-133 times 2^61 counts as
 * 2^-126 * 2^61; a normal pair adds nothing. */
START_TEST(test_subnormal_excess_value)
{
    uint16_t a[2], b[2];
    mmp_format_store(a, 0, 0x1p-133, MMP_FORMAT_BF16, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_format_store(a, 1, 1.5, MMP_FORMAT_BF16, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_format_store(b, 0, 0x1p61, MMP_FORMAT_BF16, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_format_store(b, 1, 3.0, MMP_FORMAT_BF16, MMP_ROUND_NEAREST_EVEN, 0);
    double ex, sa;
    ck_assert_int_eq(mmp_metrics_subnormal_excess(&ex, &sa, a, MMP_FORMAT_BF16, MMP_LAYOUT_ROW, 2, b, MMP_FORMAT_BF16,
                                                  MMP_LAYOUT_ROW, 1, 1, 1, 2, 1.0),
                     MMP_STATUS_OK);
    ck_assert_double_eq(ex, 0x1p-65 - 0x1p-72);
    ck_assert_double_eq(sa, 0x1p-72);
}
END_TEST

/* The excess's cap and the rule that leaves it out (ref_excess_cap, ref_excess_negligible,
 * mmp_metrics_excess_rel; metrics_sub_cuda.cu runs them on the device): on wide data of each
 * float format, every element's excess and sub_abs (metrics_sub.c) are at most its cap, and
 * wherever the rule leaves the excess out, 0 in its place gives the same bound for both
 * gammas, the same rounding margin and the same flush test, bit for bit. Both kinds of element
 * must occur: excesses left out although non-zero, and excesses that count; and
 * mmp_metrics_subnormal_excess_needed says "needed" exactly when some element is open (bf16
 * and fp32 wide data: none; fp16 and e4m3: some). */
START_TEST(test_excess_cap_and_skip)
{
    static const mmp_format fmts[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_E4M3};
    int64_t skipped_total = 0, kept_total = 0;
    for (size_t t = 0; t < sizeof fmts / sizeof fmts[0]; t++) {
        mmp_format f = fmts[t];
        mmp_kernel_desc kd = *mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
        kd.a_format = kd.b_format = f;
        mmp_case c;
        mmp_case_init(&c, &kd, 37, 41, 300, MMP_DIST_WIDE, 11 + t);
        c.alpha = -1.5;
        mmp_case_finish(&c);
        int64_t m = c.m, n = c.n, k = c.k;
        size_t sa = mmp_format_bytes(f, mmp_gemm_span(c.la, c.lda, m, k));
        size_t sb = mmp_format_bytes(f, mmp_gemm_span(c.lb, c.ldb, k, n));
        void *a = calloc(1, sa), *b = calloc(1, sb);
        ck_assert(mmp_case_fill(a, &c, 0) == MMP_STATUS_OK && mmp_case_fill(b, &c, 1) == MMP_STATUS_OK);
        double *ex = malloc((size_t)(m * n) * 8), *sx = malloc((size_t)(m * n) * 8);
        ck_assert(mmp_metrics_subnormal_excess(ex, sx, a, f, c.la, c.lda, b, f, c.lb, c.ldb, m, n, k, c.alpha) ==
                  MMP_STATUS_OK);
        double min = mmp_format_get_info(f)->min_normal;
        mmp_metrics_input in;
        memset(&in, 0, sizeof in);
        in.d_format = MMP_FORMAT_FP32;
        in.acc_format = MMP_FORMAT_FP32;
        in.k = k;
        in.u_acc = 0x1p-23;
        mmp_metrics_bound bp;
        mmp_metrics_bound_init(&bp, &in);
        double rel = mmp_metrics_excess_rel(&bp);
        ck_assert(rel > 0 && rel <= 0x1p-56);
        int64_t skipped = 0, kept = 0, open = 0;
        double *sv = malloc((size_t)(m * n) * 8), *wv = malloc((size_t)(m * n) * 8);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double cnt_a = 0, max_a = 0, cnt_b = 0, max_bh = 0, ab = 0, want = 0;
                for (int64_t q = 0; q < k; q++) {
                    double x = mmp_format_load(a, mmp_gemm_index(c.la, c.lda, i, q), f);
                    double y = mmp_format_load(b, mmp_gemm_index(c.lb, c.ldb, q, j), f);
                    double ax = isfinite(x) ? fabs(x) : 0, ay = isfinite(y) ? fabs(y) : 0;
                    cnt_a += ax != 0 && ax < min;
                    cnt_b += ay != 0 && ay < min;
                    max_a = fmax(max_a, ax);
                    max_bh = fmax(max_bh, ay != 0 && ay < min ? min : ay);
                    ab += ax * ay;
                    want += x * y;
                }
                double cap = ref_excess_cap(fabs(c.alpha), cnt_a, min, max_a, cnt_b, min, max_bh);
                double e = ex[i * n + j], sab = sx[i * n + j], s = ref_absbound_one(ab, (double)k, fabs(c.alpha), 0, 0);
                want *= c.alpha;
                sv[i * n + j] = s;
                wv[i * n + j] = want;
                ck_assert_msg(e <= cap * (1 + 0x1p-40) && sab <= cap * (1 + 0x1p-40),
                              "%s (%lld, %lld): excess %a sub_abs %a above the cap %a", mmp_format_name(f),
                              (long long)i, (long long)j, e, sab, cap);
                if (!ref_excess_negligible(cap, s, want, rel)) { kept += e > 0; open++; continue; }
                skipped += e > 0;
                if (!isfinite(want)) continue;
                for (int g = 0; g < 2; g++) {
                    double gamma = g ? bp.gamma_prob : bp.gamma_det;
                    double with = gamma * s + (e > 0 ? bp.gamma_sub * e : 0.0) + bp.abs_term;
                    ck_assert_msg(with == gamma * s + bp.abs_term, "%s (%lld, %lld): the excess %a changes the bound",
                                  mmp_format_name(f), (long long)i, (long long)j, e);
                }
                ck_assert(s + e == s);
                ck_assert(!(sab > 0 && s - sab <= 1e-9 * s));
            }
        skipped_total += skipped;
        kept_total += kept;
        /* the host's question before any excess is summed: needed iff an element is open */
        mmp_metrics_excess_skip skip = {sv, wv, rel};
        int needed = -1;
        ck_assert(mmp_metrics_subnormal_excess_needed(&needed, a, f, c.la, c.lda, b, f, c.lb, c.ldb, m, n, k, c.alpha,
                                                      &skip) == MMP_STATUS_OK);
        ck_assert_msg(needed == (open > 0), "%s: needed %d with %lld open elements", mmp_format_name(f), needed,
                      (long long)open);
        if (f == MMP_FORMAT_BF16 || f == MMP_FORMAT_FP32) ck_assert_msg(!needed, "%s wide data needs its excess?",
                                                                         mmp_format_name(f));
        else ck_assert(needed);
        free(a); free(b); free(ex); free(sx); free(sv); free(wv);
    }
    ck_assert_msg(skipped_total > 1000 && kept_total > 100, "weak test: %lld excesses left out, %lld kept",
                  (long long)skipped_total, (long long)kept_total);
    mmp_metrics_bound inf = {.gamma_sub = INFINITY, .gamma_det = INFINITY, .gamma_prob = 0.1};
    ck_assert(mmp_metrics_excess_rel(&inf) == 0.0);
}
END_TEST

/* An exact 0 from a kernel whose sum cancels: fp16 output, reference -2.18e-5 (a subnormal)
 * from terms of |A||B| = 8 is within what fp16 or fp32 accumulation may round to 0: no
 * flushed-subnormal. The same value from terms of that size alone (|A||B| = 2.2e-5: nothing
 * to cancel) is a flush. */
START_TEST(test_flush_needs_more_than_cancellation)
{
    const mmp_kernel_desc *k0 = mmp_registry_find("host_f16_f16", MMP_REGISTRY_ALL);
    ck_assert(k0 != NULL);
    static const int accs[] = {MMP_FORMAT_FP16, MMP_FORMAT_FP32};
    for (int t = 0; t < 2; t++) {
        mmp_kernel_desc kd = *k0;   /* fp16 output; fp16, then fp32 accumulation */
        kd.acc_format = accs[t];
        mmp_case c;
        mmp_case_init(&c, &kd, 1, 1, 32, MMP_DIST_UNIFORM, 1);
        double exact = -0x1.6ep-16, absdot[2] = {8.0, 0x1.7p-16};
        uint16_t got = 0;   /* fp16 +0 */
        for (int v = 0; v < 2; v++) {
            mmp_ref ref;
            memset(&ref, 0, sizeof ref);
            ref.exact = &exact;
            ref.absdot = &absdot[v];
            mmp_case_result r;
            memset(&r, 0, sizeof r);
            unsigned char flushed = 0;
            int64_t n = mmp_check_flush(&r, &flushed, &c, &ref, &got, NULL);
            ck_assert_msg(n == v && flushed == v, "acc %s |A||B| %g: %lld flagged", mmp_format_name(accs[t]), absdot[v],
                          (long long)n);
        }
    }
}
END_TEST

static Suite *tolerance_suite(void)
{
    Suite *s = suite_create("tolerance");
    TCase *tc = tcase_create("tolerance");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_controls_pass, 0, N_CONTROLS);
    tcase_add_loop_test(tc, test_wrong_kernels_fail, 0, N_WRONG);
    tcase_add_test(tc, test_rounding_no_false_positive);
    tcase_add_test(tc, test_infinite_bound_is_nan);
    tcase_add_test(tc, test_subnormal_excess_value);
    tcase_add_test(tc, test_excess_cap_and_skip);
    tcase_add_test(tc, test_flush_needs_more_than_cancellation);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(tolerance_suite)
