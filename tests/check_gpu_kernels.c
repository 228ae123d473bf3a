/* check_gpu_kernels.c — the baseline kernels (families cublas and simt) through the runner:
 * every smoke case and a set of layout / leading-dimension / alpha-beta cases must PASS, or
 * SKIP with the reason in its message (shape multiples, TN-only layouts, device too old).
 *
 * Cases run through mmp_runner_run, which forks a child per kernel, so this process never
 * initialises CUDA. Without a CUDA device the program prints why and exits 77.
 *
 *   build/suites/check_gpu_kernels            (ctest -L gpu)
 */
#define MMP_CHECK_GPU
#include "tests/check_main.h"

#include <string.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"

static const char *const families[] = {"cublas", "simt"};
#define N_FAMILIES ((int)(sizeof families / sizeof families[0]))

/* Layouts, padded (odd, unaligned) leading dimensions and alpha/beta: the cuBLAS layout
 * mapping (D^T = B^T A^T), the C -> D copy and cuBLASLt's staging of unaligned matrices.
 * 64x48x32 meets the int8/fp8 multiples; lda 36 and ldb 40 bytes are not 16-byte aligned. */
static const char layout_cases[] =
    "shape=37x29x53 layout=col.col.col ld=59.57.45 dist=uniform alpha=2 beta=-1\n"
    "shape=37x29x53 layout=row.col.row ld=60.61.33 dist=normal alpha=2 beta=-1\n"
    "shape=37x29x53 layout=col.row.col dist=exact\n"
    "shape=37x29x53 layout=row.row.row dist=onehot\n"
    "shape=64x48x32 layout=row.col.row ld=36.40.52 dist=uniform\n"
    "shape=64x48x32 layout=row.col.col ld=36.40.66 dist=uniform,exact alpha=2 beta=-1\n"
    "shape=64x48x32 layout=row.col.row dist=exact,onehot\n";

/* The registered kernels of one family. */
static size_t family_kernels(const mmp_kernel_desc **out, size_t max, const char *family)
{
    size_t n, m = 0;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&n, MMP_REGISTRY_DEFAULT);
    for (size_t i = 0; i < n && m < max; i++)
        if (k[i]->family && !strcmp(k[i]->family, family)) out[m++] = k[i];
    return m;
}

/* Runs the cases; every one must PASS or SKIP with a message. */
static void run_and_judge(mmp_case *cases, size_t n, const char *what)
{
    mmp_case_result *res = calloc(n, sizeof *res);
    ck_assert(res != NULL);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_status st = mmp_runner_run(res, cases, n, &o, NULL, NULL);
    ck_assert_msg(st == MMP_STATUS_OK, "runner: %s", mmp_error_last());
    mmp_runner_print_table(stdout, res, n);
    int bad = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        const mmp_case_result *r = &res[i];
        int ok = r->verdict == MMP_VERDICT_PASS || (r->verdict == MMP_VERDICT_SKIP && r->message[0]);
        skipped += r->verdict == MMP_VERDICT_SKIP;
        if (ok && r->verdict == MMP_VERDICT_PASS) continue;
        char why[256];
        mmp_reason_format(why, sizeof why, r->reasons);
        printf("  %s %s [%s] %s\n", mmp_verdict_name(r->verdict), r->id, why, r->message);
        bad += !ok;
    }
    printf("%s: %zu cases, %d skipped (reasons above), %d not PASS\n", what, n, skipped, bad);
    fflush(stdout);
    ck_assert_msg(bad == 0, "%s: %d of %zu cases neither PASS nor an explained SKIP", what, bad, n);
    free(res);
}

START_TEST(test_smoke)
{
    const char *family = families[_i];
    const mmp_kernel_desc *k[64];
    size_t nk = family_kernels(k, 64, family);
    ck_assert_msg(nk > 0, "family %s has no kernels (built without CUDA?)", family);
    mmp_case *cases;
    size_t n;
    mmp_status st = mmp_cases_build(&cases, &n, "smoke", k, nk, NULL, mmp_check_seed);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(n >= nk, "smoke gave %zu cases for %zu kernels", n, nk);
    char what[64];
    snprintf(what, sizeof what, "%s smoke", family);
    run_and_judge(cases, n, what);
    mmp_cases_free(cases);
}
END_TEST

START_TEST(test_layouts_ld_alpha_beta)
{
    const char *family = families[_i];
    const mmp_kernel_desc *k[64];
    size_t nk = family_kernels(k, 64, family);
    ck_assert_msg(nk > 0, "family %s has no kernels", family);
    mmp_case *cases;
    size_t n;
    mmp_status st = mmp_suitefile_parse_text(&cases, &n, layout_cases, sizeof layout_cases - 1,
                                             "layout_cases", k, nk, NULL, mmp_check_seed);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(n >= nk, "layout cases gave %zu cases for %zu kernels", n, nk);
    char what[64];
    snprintf(what, sizeof what, "%s layouts", family);
    run_and_judge(cases, n, what);
    mmp_cases_free(cases);
}
END_TEST

/* Descriptors are honest about what the code needs (no device needed, but built with CUDA). */
START_TEST(test_descriptors)
{
    const mmp_kernel_desc *k[64];
    size_t nk = family_kernels(k, 64, families[_i]);
    ck_assert(nk > 0);
    for (size_t i = 0; i < nk; i++) {
        ck_assert_int_eq(k[i]->abi_version, MMP_KERNEL_ABI_VERSION);
        ck_assert_int_eq(k[i]->where, MMP_KERNEL_DEVICE);
        ck_assert_msg(k[i]->run != NULL, "%s has no entry point", k[i]->name);
        ck_assert_msg(k[i]->deterministic == 1, "%s", k[i]->name);
        ck_assert_msg(k[i]->layouts_a && k[i]->layouts_b && k[i]->layouts_d, "%s", k[i]->name);
        int fp8 = k[i]->a_format == MMP_FORMAT_E4M3 || k[i]->a_format == MMP_FORMAT_E5M2;
        if (fp8 && !strcmp(families[_i], "cublas")) ck_assert_int_ge(k[i]->min_cc, 89);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(k[i]->name, k[j]->name);
    }
}
END_TEST

static Suite *gpu_kernels_suite(void)
{
    Suite *s = suite_create("gpu_kernels");
    TCase *tc = tcase_create("baseline");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, test_descriptors, 0, N_FAMILIES);
    tcase_add_loop_test(tc, test_smoke, 0, N_FAMILIES);
    tcase_add_loop_test(tc, test_layouts_ld_alpha_beta, 0, N_FAMILIES);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(gpu_kernels_suite)
