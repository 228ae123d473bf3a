/* check_gpu_bench.c — `mmaprobe bench` on a GPU (MMP_BINARY; exit 77 without a device): a device
 * kernel that passes validation is timed with CUDA events next to the cuBLAS kernel of its
 * precision (both measured, the peak attempted and said), operand sets rotated past the bytes
 * asked for; a CUDA mutant is refused. Figures are checked for being measured and consistent
 * (min <= median <= max, sets x bytes past the rotation size), never for their size. */
#define MMP_CHECK_GPU 1
#include "tests/check_main.h"
#include "tests/lib/bench_drive.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static void setup(void)
{
    drive_tmpdir_make("check_gpu_bench");
    bench_find_binary();
}
static void teardown(void) { drive_tmpdir_remove(); }

START_TEST(device_kernel_timed)
{
    int rc = run("bench --filter bf16_mma_pipe_256_bk64 --shape 1024x1024x1024 --warmup 2 --iters 5 "
                 "--rotate-bytes 50000000 --json @/g.json");
    ck_assert_msg(rc == 0, "exit %d: %s%s", rc, out_text, err_text);
    const mmp_json *r = row_of(read_doc("g.json"), "bf16_mma_pipe_256_bk64");
    ck_assert_str_eq(field(r, "state"), "timed");
    ck_assert_str_eq(field(mmp_json_get(r, "validation"), "verdict"), "PASS");
    const mmp_json *t = mmp_json_get(r, "timing");
    ck_assert(number(t, "median_ms") > 0);
    ck_assert(number(t, "min_ms") <= number(t, "median_ms") && number(t, "median_ms") <= number(t, "max_ms"));
    ck_assert_int_eq((int)number(t, "iters"), 5);
    ck_assert_msg(number(t, "sets") * number(t, "set_bytes") > 50000000, "the sets do not exceed --rotate-bytes");
    ck_assert_str_eq(field(r, "baseline_kernel"), "cublas_bf16_f32");
    const mmp_json *bl = mmp_json_get(r, "baseline");
    ck_assert_msg(mmp_json_get(bl, "done")->type == MMP_JSON_TRUE, "cuBLAS not timed: %s", field(bl, "why"));
    ck_assert(number(bl, "median_ms") > 0);
    ck_assert(number(r, "pct_of_baseline") > 0);
    ck_assert_msg(field(r, "peak_how")[0], "the peak neither measured nor said why not");
    ck_assert_ptr_nonnull(mmp_json_get(r, "clocks_before"));
    ck_assert_msg(table_has("bf16_mma_pipe_256_bk64", "1024x1024x1024", "timed"), "no table row:\n%s", out_text);
}
END_TEST

START_TEST(cuda_mutant_refused)
{
    int rc = run("bench --mutants --filter cuda_mut_drop_k_tile --shape 256x256x256 --iters 2 --json @/m.json");
    ck_assert_msg(rc == 1, "exit %d (want 1): %s", rc, out_text);
    const mmp_json *r = row_of(read_doc("m.json"), "cuda_mut_drop_k_tile");
    ck_assert_str_eq(field(r, "state"), "refused");
    ck_assert_msg(mmp_json_get(mmp_json_get(r, "timing"), "done")->type == MMP_JSON_FALSE, "a refused kernel was timed");
}
END_TEST

static Suite *gpu_bench_suite(void)
{
    Suite *s = suite_create("gpu_bench");
    TCase *tc = tcase_create("gpu");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, device_kernel_timed);
    tcase_add_test(tc, cuda_mutant_refused);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(gpu_bench_suite)
