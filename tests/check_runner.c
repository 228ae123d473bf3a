/* check_runner.c — the runner on correct host kernels: Philox known answers, stable case IDs,
 * every host kernel PASSes (or SKIPs with a reason) smoke and edge, the truncating
 * (tensor-core-like) kernel PASSes the default bound up to K = 8192, shards partition. */
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"
#include "suites/runner_internal.h"

/* The normal draws use hd.h's own logarithm and cosine (so that the device draws the same
 * bits): they agree with libm's Box-Muller to a few ulps, and the draws look N(0, 1). */
START_TEST(test_normal_matches_libm)
{
    double sum = 0, sum2 = 0, worst = 0;
    int n = 200000;
    for (int t = 0; t < n; t++) {
        double x = mmp_rng_normal(mmp_check_seed, 99, (uint64_t)t, 5);
        uint32_t w[4];
        mmp_rng_philox(w, mmp_check_seed, 99, (uint64_t)t, 5);
        double u1 = ((double)((((uint64_t)w[0] << 32) | w[1]) >> 11) + 1.0) * 0x1p-53;
        double u2 = (double)((((uint64_t)w[2] << 32) | w[3]) >> 11) * 0x1p-53;
        double want = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        double err = fabs(x - want);
        if (err > worst) worst = err;
        ck_assert_msg(err <= 1e-13 * (1 + fabs(want)) + 1e-14, "draw %d: %.17g, libm %.17g", t, x, want);
        sum += x;
        sum2 += x * x;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    ck_assert_msg(fabs(mean) < 0.01 && fabs(var - 1) < 0.01, "mean %g variance %g", mean, var);
    printf("normal draws: largest difference from libm's %.3g over %d draws\n", worst, n);
}
END_TEST

START_TEST(test_philox_known_answers)
{
    /* Random123's kat_vectors for philox4x32_10 */
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                       {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                       {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    static const uint32_t key[3][2] = {{0, 0}, {0xffffffffu, 0xffffffffu}, {0xa4093822u, 0x299f31d0u}};
    static const uint32_t want[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                        {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                        {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        mmp_rng_philox_raw(out, ctr[t], key[t]);
        for (int i = 0; i < 4; i++) ck_assert_uint_eq(out[i], want[t][i]);
    }
}
END_TEST

START_TEST(test_case_ids)
{
    const mmp_kernel_desc *k = mmp_registry_find("host_bf16_f32", MMP_REGISTRY_ALL);
    mmp_case c;
    mmp_case_init(&c, k, 256, 256, 4096, MMP_DIST_UNIFORM, 42);
    ck_assert_str_eq(c.id, "host_bf16_f32/bf16.bf16.f32/256x256x4096/uniform/s42");
    c.lda = 4104; c.ldb = 264; c.ldd = 264;
    mmp_case_finish(&c);
    ck_assert_str_eq(c.id, "host_bf16_f32/bf16.bf16.f32/256x256x4096/ld4104.264.264/uniform/s42");
    /* same data key -> same inputs for every kernel of a precision; another seed -> others */
    mmp_case d;
    mmp_case_init(&d, mmp_registry_find("host_tc_bf16_f32", MMP_REGISTRY_ALL), 256, 256, 4096, MMP_DIST_UNIFORM, 42);
    mmp_case_init(&c, k, 256, 256, 4096, MMP_DIST_UNIFORM, 42);
    ck_assert_uint_eq(mmp_case_stream(&c), mmp_case_stream(&d));
    mmp_dist_ctx x, y;
    mmp_dist_ctx_init(&x, &c);
    mmp_dist_ctx_init(&y, &d);
    ck_assert(mmp_dist_value(&x, MMP_MAT_A, 3, 7) == mmp_dist_value(&y, MMP_MAT_A, 3, 7));
    d.seed = 43;
    mmp_dist_ctx_init(&y, &d);
    ck_assert(mmp_dist_value(&x, MMP_MAT_A, 3, 7) != mmp_dist_value(&y, MMP_MAT_A, 3, 7));
}
END_TEST

static void run_suite_all_pass(const char *suite)
{
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_DEFAULT);
    mmp_case *cases;
    size_t n;
    ck_assert_int_eq(mmp_cases_build(&cases, &n, suite, k, nk, "host_*", mmp_check_seed), MMP_STATUS_OK);
    ck_assert_uint_gt(n, 20);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result *r = calloc(n, sizeof *r);
    ck_assert_int_eq(mmp_runner_run(r, cases, n, &o, NULL, NULL), MMP_STATUS_OK);
    size_t pass = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS || r[i].verdict == MMP_VERDICT_SKIP, "%s: %s %s", r[i].id,
                      mmp_verdict_name(r[i].verdict), r[i].message);
        if (r[i].verdict == MMP_VERDICT_SKIP) ck_assert_msg(r[i].message[0], "%s: SKIP without a reason", r[i].id);
        pass += r[i].verdict == MMP_VERDICT_PASS;
    }
    ck_assert_uint_gt(pass, n / 2);
    mmp_runner_print_table(stdout, r, n);
    free(r);
    mmp_cases_free(cases);
}

START_TEST(test_smoke_host_pass) { run_suite_all_pass("smoke"); }
END_TEST
START_TEST(test_edge_host_pass) { run_suite_all_pass("edge"); }
END_TEST

/* Tensor cores truncate: a correct truncating kernel must PASS the default bound up to K = 8192. */
START_TEST(test_truncation_never_fails)
{
    const char *names[] = {"host_tc_f16_f32", "host_tc_bf16_f32"};
    const int64_t ks[] = {1024, 4096, 8192};
    const mmp_dist dists[] = {MMP_DIST_UNIFORM, MMP_DIST_NORMAL, MMP_DIST_CANCEL, MMP_DIST_WIDE};
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    for (int kn = 0; kn < 2; kn++)
        for (int ki = 0; ki < 3; ki++)
            for (int di = 0; di < 4; di++) {
                mmp_case c;
                mmp_case_init(&c, mmp_registry_find(names[kn], MMP_REGISTRY_ALL), 6, 5, ks[ki], dists[di],
                              mmp_check_seed + (uint64_t)ki);
                mmp_case_result r;
                ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
                printf("%-52s %s worst err/bound %.3g %s\n", r.id, mmp_verdict_name(r.verdict), r.metrics.max_ratio_det, r.message);
                fflush(stdout);
                ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: %s", r.id, r.message);
                /* it did round (not vacuous); cancel/wide sums of fp16 products can be exact */
                if (di < 2) ck_assert(r.metrics.max_ratio_det > 0);
            }
}
END_TEST

/* --acc-model: the bound takes the fitted model's accumulator for the instruction (named in the
 * result's tolerance field); an unknown GPU keeps the declared format's bound. */
START_TEST(test_acc_model_bound)
{
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.acc_model = "H200";
    mmp_case c;
    mmp_case_init(&c, mmp_registry_find("host_tc_f16_f32", MMP_REGISTRY_ALL), 8, 8, 512, MMP_DIST_UNIFORM,
                  mmp_check_seed);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
    ck_assert_msg(!strncmp(r.tolerance, "model:mma.f16.f32", 17), "tolerance '%s'", r.tolerance);
    ck_assert(r.metrics.u_acc > 0 && r.metrics.u_acc <= 0x1p-23);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_PASS);
    o.acc_model = "no-such-gpu";
    ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
    ck_assert_str_eq(r.tolerance, "bound");
}
END_TEST

/* wide reaches the smallest subnormal of every input format, products and partial sums
 * underflow the accumulator, and every correct host kernel still PASSes (the bound's absolute
 * underflow term); the inputs really hold subnormals (the test is not vacuous). */
START_TEST(test_wide_subnormals_pass)
{
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_DEFAULT);
    static const int64_t shapes[][3] = {{7, 5, 33}, {16, 16, 257}, {3, 4, 1024}, {1, 1, 1}};
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    int ran = 0;
    for (size_t ki = 0; ki < nk; ki++) {
        if (k[ki]->where != MMP_KERNEL_HOST) continue;
        const mmp_format_info *fa = mmp_format_get_info((mmp_format)k[ki]->a_format);
        if (!fa->is_float) continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            mmp_case c;
            mmp_case_init(&c, k[ki], shapes[s][0], shapes[s][1], shapes[s][2], MMP_DIST_WIDE, mmp_check_seed + s);
            mmp_dist_ctx x;
            mmp_dist_ctx_init(&x, &c);
            int e;
            frexp(fa->min_subnormal, &e);
            ck_assert_int_eq(x.wide_lo[MMP_MAT_A], e - 1);
            int64_t subnormal = 0;
            for (int64_t i = 0; i < c.m; i++)
                for (int64_t j = 0; j < c.k; j++) {
                    double v = mmp_format_round(mmp_dist_value(&x, MMP_MAT_A, i, j), fa->format, MMP_ROUND_NEAREST_EVEN, 0);
                    subnormal += v != 0 && fabs(v) < fa->min_normal;
                }
            mmp_case_result r;
            ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
            printf("%-52s %s subnormal inputs in A: %lld, worst err/bound %.3g %s\n", r.id, mmp_verdict_name(r.verdict),
                   (long long)subnormal, r.metrics.max_ratio_det, r.message);
            ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: %s", r.id, r.message);
            if (shapes[s][2] >= 257) ck_assert_msg(subnormal > 0, "%s: no subnormal input drawn", r.id);
            ran++;
        }
    }
    ck_assert_int_ge(ran, 20);
}
END_TEST

/* alpha so large that most exact results overflow the output format (and not binary64): the
 * correctly rounded result is +-Inf, and every correct host kernel that gives it PASSes. */
START_TEST(test_overflow_to_inf_pass)
{
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_DEFAULT);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    int ran = 0;
    for (size_t ki = 0; ki < nk; ki++) {
        const mmp_format_info *fd = mmp_format_get_info((mmp_format)k[ki]->d_format);
        if (k[ki]->where != MMP_KERNEL_HOST || !fd->is_float || fd->format == MMP_FORMAT_FP64) continue;
        mmp_case c;
        mmp_case_init(&c, k[ki], 8, 8, 8, MMP_DIST_EXACT, mmp_check_seed);
        c.alpha = -0.5 * fd->max_finite;   /* representable in the kernels' float alpha */
        mmp_case_result r;
        ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
        ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s alpha %g: %s", r.id, c.alpha, r.message);
        ran++;
    }
    ck_assert_int_ge(ran, 3);
}
END_TEST

START_TEST(test_shards_partition)
{
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_DEFAULT);
    mmp_case *all, *s0, *s1, *s2;
    size_t n, n0, n1, n2;
    ck_assert_int_eq(mmp_cases_build(&all, &n, "smoke", k, nk, NULL, 1), MMP_STATUS_OK);
    mmp_cases_build(&s0, &n0, "smoke", k, nk, NULL, 1);
    mmp_cases_build(&s1, &n1, "smoke", k, nk, NULL, 1);
    mmp_cases_build(&s2, &n2, "smoke", k, nk, NULL, 1);
    mmp_cases_shard(s0, &n0, 0, 3);
    mmp_cases_shard(s1, &n1, 1, 3);
    mmp_cases_shard(s2, &n2, 2, 3);
    ck_assert_uint_eq(n0 + n1 + n2, n);
    ck_assert_str_eq(s1[0].id, all[1].id);
    ck_assert_str_eq(s2[1].id, all[5].id);
    mmp_cases_free(all); mmp_cases_free(s0); mmp_cases_free(s1); mmp_cases_free(s2);
}
END_TEST

/* The per-element stages run on every core in fixed chunks: one thread and three give the same
 * results (counts, first positions in the messages, metrics) on cases spanning several chunks:
 * a fast correct kernel (inputs over 8 chunks), a mutant leaving rows unwritten (scan over 3). */
START_TEST(test_threads_same_results)
{
    const mmp_kernel_desc *blas = mmp_registry_find("host_blas_f32", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *edge = mmp_registry_find("mut_host_edge_tile", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *i8 = mmp_registry_find("host_i8_i32", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *wld = mmp_registry_find("mut_host_write_past", MMP_REGISTRY_ALL);
    ck_assert(blas && edge && i8 && wld);
    mmp_case c[4];
    mmp_case_init(&c[0], blas, 512, 512, 1024, MMP_DIST_NORMAL, mmp_check_seed);
    mmp_case_init(&c[1], edge, 300, 512, 8, MMP_DIST_UNIFORM, mmp_check_seed);
    mmp_case_init(&c[2], i8, 200, 700, 16, MMP_DIST_UNIFORM, mmp_check_seed);
    /* ld padding scribbled over a 1.5 MB output: the guard check spans two chunks */
    mmp_case_init(&c[3], wld, 600, 600, 8, MMP_DIST_EXACT, mmp_check_seed);
    c[3].ldd = 600 + 40;
    mmp_case_finish(&c[3]);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.isolate = 0;
    o.host_max_log2_work = 40;
    mmp_case_result r1[4], r3[4];
    setenv("MMP_THREADS", "1", 1);
    ck_assert_int_eq(mmp_runner_run(r1, c, 4, &o, NULL, NULL), MMP_STATUS_OK);
    setenv("MMP_THREADS", "3", 1);
    ck_assert_int_eq(mmp_runner_run(r3, c, 4, &o, NULL, NULL), MMP_STATUS_OK);
    unsetenv("MMP_THREADS");
    ck_assert_int_eq(r1[0].verdict, MMP_VERDICT_PASS);
    ck_assert_int_eq(r1[1].verdict, MMP_VERDICT_FAIL);
    ck_assert(r1[1].reasons & MMP_REASON_UNWRITTEN);
    /* the first failing position is the first unwritten element, as the message says */
    char at[64];
    snprintf(at, sizeof at, "first (%lld,%lld)", (long long)r1[1].metrics.first_bad_i, (long long)r1[1].metrics.first_bad_j);
    ck_assert_msg(r1[1].metrics.first_bad_i >= 0 && strstr(r1[1].message, at), "%s vs %s", at, r1[1].message);
    ck_assert_int_eq(r1[2].verdict, MMP_VERDICT_PASS);
    ck_assert_msg(r1[3].reasons & MMP_REASON_GUARD, "%s", r1[3].message);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(r1[i].n_guard, r3[i].n_guard);
        ck_assert_int_eq(r1[i].verdict, r3[i].verdict);
        ck_assert_uint_eq(r1[i].reasons, r3[i].reasons);
        ck_assert_int_eq(r1[i].n_unwritten, r3[i].n_unwritten);
        ck_assert_int_eq(r1[i].n_nondet, r3[i].n_nondet);
        ck_assert_str_eq(r1[i].message, r3[i].message);
        ck_assert(r1[i].metrics.max_abs_err == r3[i].metrics.max_abs_err);
        ck_assert(r1[i].metrics.norm_rel_err == r3[i].metrics.norm_rel_err);
        ck_assert_int_eq(r1[i].metrics.worst_i, r3[i].metrics.worst_i);
    }
}
END_TEST

START_TEST(test_stop_leaves_interrupted)
{
    const mmp_kernel_desc *k = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    mmp_case c[2];
    mmp_case_init(&c[0], k, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[1], k, 9, 8, 8, MMP_DIST_UNIFORM, 1);
    volatile int stop = 1;
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.stop = &stop;
    mmp_case_result r[2];
    ck_assert_int_eq(mmp_runner_run(r, c, 2, &o, NULL, NULL), MMP_STATUS_OK);
    ck_assert_int_eq(r[0].verdict, MMP_VERDICT_ERROR);
    ck_assert(r[1].reasons & MMP_REASON_INTERRUPTED);
    ck_assert_str_eq(r[1].id, c[1].id);
}
END_TEST

/* mmp_case_fill gives the bytes the runner's distribution store gives, element by element, in
 * the case's layout and ld (padding untouched); bad arguments are refused. */
START_TEST(test_case_fill_matches_dist)
{
    static const char *names[] = {"host_bf16_f32", "host_i8_i32", "host_f32"};
    for (int t = 0; t < 3; t++) {
        const mmp_kernel_desc *k = mmp_registry_find(names[t], MMP_REGISTRY_ALL);
        ck_assert_msg(k != NULL, "%s not registered", names[t]);
        for (int d = MMP_DIST_EXACT; d < MMP_DIST_COUNT_; d++) {
            mmp_case c;
            mmp_case_init(&c, k, 9, 7, 12, (mmp_dist)d, mmp_check_seed + (uint64_t)d);
            c.lda = c.la == MMP_LAYOUT_ROW ? 14 : 11;
            mmp_case_finish(&c);
            mmp_dist_ctx x;
            mmp_dist_ctx_init(&x, &c);
            int64_t lines = c.la == MMP_LAYOUT_ROW ? c.m : c.k, span = c.lda * lines;
            size_t bytes = mmp_format_bytes((mmp_format)k->a_format, (size_t)span);
            unsigned char *got = malloc(bytes), *want = malloc(bytes);
            ck_assert(got && want);
            memset(got, 0xA5, bytes);
            memset(want, 0xA5, bytes);
            ck_assert_int_eq(mmp_case_fill(got, &c, 0), MMP_STATUS_OK);
            for (int64_t i = 0; i < c.m; i++)
                for (int64_t q = 0; q < c.k; q++)
                    mmp_format_store(want, mmp_gemm_index(c.la, c.lda, i, q), mmp_dist_value(&x, MMP_MAT_A, i, q),
                                     (mmp_format)k->a_format, MMP_ROUND_NEAREST_EVEN,
                                     !mmp_format_get_info((mmp_format)k->a_format)->is_float);
            ck_assert_msg(memcmp(got, want, bytes) == 0, "%s %s: A differs", names[t], mmp_dist_name((mmp_dist)d));
            free(got);
            free(want);
        }
    }
    mmp_case c;
    mmp_case_init(&c, mmp_registry_find("host_f32", MMP_REGISTRY_ALL), 4, 4, 4, MMP_DIST_UNIFORM, 1);
    float buf[16];
    ck_assert_int_eq(mmp_case_fill(NULL, &c, 0), MMP_STATUS_INVALID);
    ck_assert_int_eq(mmp_case_fill(buf, &c, 3), MMP_STATUS_INVALID);
}
END_TEST

static Suite *runner_suite(void)
{
    Suite *s = suite_create("runner");
    TCase *tc = tcase_create("runner");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_philox_known_answers);
    tcase_add_test(tc, test_normal_matches_libm);
    tcase_add_test(tc, test_case_ids);
    tcase_add_test(tc, test_smoke_host_pass);
    tcase_add_test(tc, test_edge_host_pass);
    tcase_add_test(tc, test_truncation_never_fails);
    tcase_add_test(tc, test_wide_subnormals_pass);
    tcase_add_test(tc, test_overflow_to_inf_pass);
    tcase_add_test(tc, test_shards_partition);
    tcase_add_test(tc, test_stop_leaves_interrupted);
    tcase_add_test(tc, test_threads_same_results);
    tcase_add_test(tc, test_acc_model_bound);
    tcase_add_test(tc, test_case_fill_matches_dist);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(runner_suite)
