/* check_gpu_plugin.c — CUDA plugins on the device: a plugin whose launch fails in its own CUDA
 * runtime (tests/fixtures/plugin_cuda.cu, variant bad_launch: 2048 threads per block) must be
 * ERROR launch with CUDA's message, heard through its launch_status hook (without the hook it
 * would read FAIL unwritten); its twin, the example plugin examples/plugin_cuda (libmyplugin.so),
 * must PASS every smoke case.
 *
 * The plugins are loaded here (no CUDA context: loading registers code, it creates none) and run
 * through mmp_runner_run, which forks a child per kernel, so this process never initialises CUDA.
 * Without a CUDA device the program prints why and exits 77.
 *
 *   build/tests/check_gpu_plugin            (ctest -L gpu)
 */
#define MMP_CHECK_GPU
#include "tests/check_main.h"

#include <stdlib.h>
#include <string.h>

#include "mmaprobe/runner.h"

#ifndef MMP_PLUGIN_FIXTURES
#error "MMP_PLUGIN_FIXTURES (directory of the fixture plugins) must be defined by CMake"
#endif

/* Load lib (in the fixture directory) and run its kernels' cases of suite. */
static void run_suite(mmp_case_result **res, size_t *count, mmp_case **cases, const char *lib, const char *suite)
{
    /* $MMP_PLUGIN_FIXTURES where the build was carried elsewhere (the device), else the build's */
    const char *dir = getenv("MMP_PLUGIN_FIXTURES");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : MMP_PLUGIN_FIXTURES, lib);
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    const mmp_kernel_desc *list[1] = {&k[0]};
    ck_assert_int_eq(mmp_cases_build(cases, count, suite, list, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    ck_assert_uint_gt(*count, 0);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    *res = calloc(*count, sizeof **res);
    ck_assert_int_eq(mmp_runner_run(*res, *cases, *count, &o, NULL, NULL), MMP_STATUS_OK);
}

START_TEST(test_failed_launch_is_error_launch)
{
    mmp_case_result *r;
    mmp_case *c;
    size_t n;
    run_suite(&r, &n, &c, "fixcu_bad_launch.so", "smoke");
    size_t launched = 0;
    for (size_t i = 0; i < n; i++) {
        printf("%s: %s %s\n", r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
        if (r[i].verdict == MMP_VERDICT_SKIP) continue;   /* an empty shape: nothing launched */
        launched++;
        ck_assert_msg(r[i].verdict == MMP_VERDICT_ERROR && (r[i].reasons & MMP_REASON_LAUNCH), "%s: %s %s", r[i].id,
                      mmp_verdict_name(r[i].verdict), r[i].message);
        ck_assert_msg(strstr(r[i].message, "launch: cudaError"), "%s: %s", r[i].id, r[i].message);
        ck_assert(!(r[i].reasons & MMP_REASON_UNWRITTEN));
    }
    ck_assert_uint_gt(launched, 0);
    free(r);
    mmp_cases_free(c);
}
END_TEST

START_TEST(test_example_plugin_passes)
{
    mmp_case_result *r;
    mmp_case *c;
    size_t n;
    run_suite(&r, &n, &c, "libmyplugin.so", "smoke");
    for (size_t i = 0; i < n; i++) {
        printf("%s: %s %s\n", r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
        ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS, "%s: %s %s", r[i].id, mmp_verdict_name(r[i].verdict),
                      r[i].message);
    }
    free(r);
    mmp_cases_free(c);
}
END_TEST

static Suite *gpu_plugin_suite(void)
{
    Suite *s = suite_create("gpu_plugin");
    TCase *tc = tcase_create("gpu_plugin");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_failed_launch_is_error_launch);
    tcase_add_test(tc, test_example_plugin_passes);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(gpu_plugin_suite)
