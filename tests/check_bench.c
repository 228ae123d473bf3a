/* check_bench.c — `mmaprobe bench` driven as a program (MMP_BINARY), on the CPU: a host kernel
 * that passes validation is timed (the JSON document has its median, the table its row); a
 * broken host mutant is refused with its FAIL reason and exit 1, even next to a kernel that is
 * timed; a kernel that passes its suite but leaves output unwritten at the bench shape is a
 * timing error (exit 1); bad input is a one-line error and exit 2; without a device a device kernel is skipped
 * with the reason and the exit is 3 (a skip is never a pass). No timing is asserted beyond
 * "measured and positive". */
#include "tests/check_main.h"
#include "tests/lib/bench_drive.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static void setup(void)
{
    drive_tmpdir_make("check_bench");
    bench_find_binary();
}
static void teardown(void) { drive_tmpdir_remove(); }

START_TEST(host_kernel_timed)
{
    int rc = run("bench --filter host_f32 --shape 24x16x8 --warmup 1 --iters 3 --json @/b.json");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err_text);
    const mmp_json *r = row_of(read_doc("b.json"), "host_f32");
    ck_assert_str_eq(field(r, "state"), "timed");
    ck_assert_str_eq(field(r, "shape"), "24x16x8");
    ck_assert_str_eq(field(mmp_json_get(r, "validation"), "verdict"), "PASS");
    const mmp_json *t = mmp_json_get(r, "timing");
    ck_assert_ptr_nonnull(t);
    ck_assert(number(t, "median_ms") > 0);
    ck_assert(number(t, "min_ms") <= number(t, "median_ms"));
    ck_assert(number(t, "median_ms") <= number(t, "max_ms"));
    ck_assert(number(t, "tflops") > 0);
    ck_assert_int_eq((int)number(t, "iters"), 3);
    ck_assert_int_ge((int)number(t, "sets"), 2);
    ck_assert_str_eq(field(r, "baseline_kernel"), "host_blas_f32");   /* the CBLAS kernel of its precision */
    ck_assert_msg(table_has("host_f32", "24x16x8", "timed"), "no table row:\n%s", out_text);
    ck_assert_msg(table_has("host_f32", "PASS", "f32.f32.f32"), "no verdict in the row:\n%s", out_text);
}
END_TEST

START_TEST(mutant_refused)
{
    /* a mutant that drops the last K tile next to a correct kernel: the mutant is not timed, the
     * correct one is, and the exit says a kernel failed */
    int rc = run("bench --mutants --filter mut_host_drop_k_tile,host_f32 --shape 16x16x16 --iters 2 --json @/m.json");
    ck_assert_msg(rc == 1, "exit %d (want 1): %s", rc, out_text);
    const mmp_json *d = read_doc("m.json");
    const mmp_json *m = row_of(d, "mut_host_drop_k_tile");
    ck_assert_str_eq(field(m, "state"), "refused");
    const mmp_json *v = mmp_json_get(m, "validation");
    ck_assert_str_eq(field(v, "verdict"), "FAIL");
    ck_assert_msg(strstr(field(v, "why"), "exact-mismatch"), "reason: %s", field(v, "why"));
    ck_assert_msg(mmp_json_get(mmp_json_get(m, "timing"), "done")->type == MMP_JSON_FALSE, "a refused kernel was timed");
    ck_assert_str_eq(field(row_of(d, "host_f32"), "state"), "timed");
    ck_assert_msg(table_has("mut_host_drop_k_tile", "FAIL", "refused"), "no refused row:\n%s", out_text);
    ck_assert_msg(strstr(out_text, "exact-mismatch"), "the FAIL reason is not printed:\n%s", out_text);
    ck_assert_msg(strstr(out_text, "mmaprobe validate --case 'mut_host_drop_k_tile/") && strstr(out_text, "' --mutants"),
                  "no re-run line for the failing case:\n%s", out_text);
    ck_assert_msg(strstr(field(v, "failed_case"), "mut_host_drop_k_tile/"), "failed_case: %s", field(v, "failed_case"));
}
END_TEST

START_TEST(unwritten_at_bench_shape)
{
    /* a mutant that never writes a partial tile of M passes a suite of whole tiles, then leaves
     * rows unwritten at the bench shape: the timing is refused as an error (exit 1) */
    write_file("tiles.suite", "shape=64x64x64 dist=uniform\n");
    int rc = run("bench --mutants --filter mut_host_edge_tile --suite @/tiles.suite --shape 37x16x16 --iters 2 --json @/u.json");
    ck_assert_msg(rc == 1, "exit %d (want 1): %s", rc, out_text);
    const mmp_json *r = row_of(read_doc("u.json"), "mut_host_edge_tile");
    ck_assert_str_eq(field(mmp_json_get(r, "validation"), "verdict"), "PASS");
    ck_assert_str_eq(field(r, "state"), "error");
    ck_assert_msg(strstr(field(r, "why"), "unwritten"), "why: %s", field(r, "why"));
    /* the correct kernel at the same shape: every element written, timed */
    rc = run("bench --filter host_f32 --suite @/tiles.suite --shape 37x16x16 --iters 2 --json @/w.json");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out_text);
    ck_assert_int_eq((int)number(mmp_json_get(row_of(read_doc("w.json"), "host_f32"), "timing"), "unwritten"), 0);
}
END_TEST

/* One line on stderr, exit 2, nothing run. */
static void bad(const char *args, const char *says)
{
    int rc = run(args);
    ck_assert_msg(rc == 2, "'%s': exit %d (want 2): %s", args, rc, err_text);
    size_t lines = 0;
    for (const char *p = err_text; *p; p++) lines += *p == '\n';
    ck_assert_msg(lines == 1, "'%s': %zu lines on stderr:\n%s", args, lines, err_text);
    ck_assert_msg(strstr(err_text, says), "'%s': message without '%s': %s", args, says, err_text);
    ck_assert_msg(!strstr(out_text, "timed"), "'%s' ran something:\n%s", args, out_text);
}

START_TEST(bad_input)
{
    bad("bench --filter no_such_kernel_*", "no kernel matches");
    bad("bench --filter host_f32 --iters 0", "--iters");
    bad("bench --filter host_f32 --iters=-3", "--iters");
    bad("bench --filter host_f32 --shape 12x3", "--shape");
    bad("bench --filter host_f32 --shape 0x8x8", "--shape");
    bad("bench --filter host_f32 --layouts row.row", "--layouts");
    bad("bench --filter host_f32 --dist lumpy", "--dist");
    bad("bench --filter host_f32 --frobnicate", "--frobnicate");
    bad("bench --filter host_f32 --mutants=yes", "takes no value");
    bad("bench --filter host_f32 --iters", "needs a value");
    bad("bench --filter host_f32 stray", "stray");
    bad("bench", "--filter");
    bad("bench --filter host_f32 --plugin @/missing.so", "missing.so");
    write_file("bad.suite", "shape=32x32 dist=uniform\n");
    bad("bench --filter host_f32 --suite @/bad.suite", "bad.suite:1:");
}
END_TEST

START_TEST(help)
{
    ck_assert_int_eq(run("bench --help"), 0);
    ck_assert_msg(strstr(out_text, "usage: mmaprobe bench"), "%s", out_text);
    ck_assert_int_eq(run("bench -h"), 0);
    ck_assert_int_eq(run("--help"), 0);
    ck_assert_msg(strstr(out_text, "bench"), "bench is not listed:\n%s", out_text);
}
END_TEST

START_TEST(no_device_skips)
{
    int env = run("env");
    if (env == 0) {   /* a device here: the fixture's kernel is not a real device kernel */
        printf("check_bench: a CUDA device is present; no_device_skips not applicable\n");
        return;
    }
    ck_assert_msg(env == 3, "mmaprobe env: exit %d (want 0 or 3): %s", env, err_text);
    int rc = run("bench --plugin " MMP_PLUGIN_FIXTURES "/fix_device.so --shape 64x64x64 --json @/d.json");
    ck_assert_msg(rc == 3, "exit %d (want 3: nothing could be timed): %s%s", rc, out_text, err_text);
    const mmp_json *r = row_of(read_doc("d.json"), "fix_device_f32");
    ck_assert_str_eq(field(r, "state"), "skipped");
    const char *why = field(r, "why");
    ck_assert_msg(strstr(why, "no CUDA device") || strstr(why, "built without CUDA"), "reason: %s", why);
    ck_assert_msg(table_has("fix_device_f32", "SKIP", "skipped"), "no skipped row:\n%s", out_text);
    /* with a host kernel that is timed, the skip does not make the run fail */
    rc = run("bench --plugin " MMP_PLUGIN_FIXTURES "/fix_device.so --filter fix_device_f32,host_f32 --shape 8x8x8 --iters 2");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err_text);
}
END_TEST

static Suite *bench_suite(void)
{
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, host_kernel_timed);
    tcase_add_test(tc, mutant_refused);
    tcase_add_test(tc, unwritten_at_bench_shape);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, help);
    tcase_add_test(tc, no_device_skips);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(bench_suite)
