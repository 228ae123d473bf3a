/* check_arith.c — the arithmetic-probe analysis recovers known model parameters.
 *
 * 1. Synthetic captures generated here: for every parameter-table row of V100/A100/Ada/H200
 *    (known parameters), design the probe vectors, compute outputs with the model, analyse,
 *    and require the fitted block size, extra bits, output rounding and c use to equal the
 *    row's, with 0 mismatches on every vector.
 * 2. The stored captures in probes/captures/synthetic-*.txt (the exact capture format the GPU
 *    step writes) read back and analyse to their origin's parameters.
 * 3. A capture with one output changed must be reported as a mismatch (the test can fail).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/probe.h"
#include "suites/check_main.h"

static const char *gpus[] = {"V100", "A100", "Ada", "H200"};

static void expect_recovered(const mmp_arith_report *r, const mmp_model_params *want, const char *what)
{
    ck_assert_msg(r->fitted.block_size == want->block_size || want->block_size >= 32,
                  "%s: block %d, expected %d", what, r->fitted.block_size, want->block_size);
    ck_assert_msg(r->fitted.extra_align_bits == want->extra_align_bits, "%s: extra bits %d, expected %d",
                  what, r->fitted.extra_align_bits, want->extra_align_bits);
    ck_assert_msg(r->fitted.out_round == want->out_round, "%s: output rounding differs", what);
    ck_assert_msg(r->fitted.c_unused == want->c_unused, "%s: c use differs", what);
    ck_assert_msg(r->total_mismatches == 0, "%s: %zu mismatches (%s)", what, r->total_mismatches,
                  r->mismatch_example);
}

START_TEST(test_synthetic_recovery)
{
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    int tried = 0;
    for (size_t i = 0; i < n; i++) {
        const mmp_model_preset *row = mmp_model_preset_find(gpus[_i], ins[i].id);
        if (!row) continue;
        mmp_capture cap;
        ck_assert_int_eq(mmp_arith_design(&cap, &ins[i], 400, mmp_check_seed), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_arith_model_outputs(&cap, &row->params), MMP_STATUS_OK);
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        char what[64];
        snprintf(what, sizeof what, "%s %s", gpus[_i], ins[i].id);
        expect_recovered(&rep, &row->params, what);
        mmp_capture_clear(&cap);
        tried++;
    }
    ck_assert_int_gt(tried, 0);
}
END_TEST

START_TEST(test_stored_captures)
{
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/probes/captures/synthetic-h200-%s.txt", MMP_SOURCE_DIR, ins[i].id);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        fclose(f);
        mmp_capture cap;
        ck_assert_msg(mmp_capture_read(&cap, path) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_str_eq(cap.instruction, ins[i].id);
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        expect_recovered(&rep, &mmp_model_preset_find("H200", ins[i].id)->params, path);
        /* write and read back: the format round-trips */
        char tmp[] = "/tmp/mmp-check-arith-XXXXXX";
        int fd = mkstemp(tmp);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(mmp_capture_write(&cap, tmp), MMP_STATUS_OK);
        mmp_capture back;
        ck_assert_int_eq(mmp_capture_read(&back, tmp), MMP_STATUS_OK);
        ck_assert_uint_eq(back.count, cap.count);
        ck_assert_int_eq(memcmp(back.store, cap.store, cap.count * 2 * (size_t)cap.k * 4), 0);
        unlink(tmp);
        mmp_capture_clear(&back);
        mmp_capture_clear(&cap);
        found++;
    }
    ck_assert_msg(found >= 4, "only %d stored synthetic H200 captures found", found);
}
END_TEST

/* Real captures from the H200 (probes/captures/h200-<instruction>.txt, stored by the lead from
 * scripts/device/30-probe.sh): the fitted model must replay every vector. Absent: nothing to do. */
START_TEST(test_real_captures)
{
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/probes/captures/h200-%s.txt", MMP_SOURCE_DIR, ins[i].id);
        if (access(path, R_OK) != 0) continue;
        mmp_capture cap;
        ck_assert_msg(mmp_capture_read(&cap, path) == MMP_STATUS_OK, "%s", mmp_error_last());
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        mmp_arith_report_print(stdout, &rep);
        ck_assert_msg(rep.total_mismatches == 0, "%s: %zu vectors differ from the fitted model (%s)",
                      path, rep.total_mismatches, rep.mismatch_example);
        mmp_capture_clear(&cap);
    }
}
END_TEST

START_TEST(test_mismatch_detected)
{
    const mmp_arith_instr *in = mmp_arith_instr_find("mma.f16.f32");
    mmp_capture cap;
    ck_assert_int_eq(mmp_arith_design(&cap, in, 50, mmp_check_seed), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_arith_model_outputs(&cap, &mmp_model_preset_find("H200", in->id)->params), MMP_STATUS_OK);
    size_t last = cap.count - 1;  /* the last random vector with a finite output: one ulp off */
    while ((cap.v[last].d & 0x7f800000u) == 0x7f800000u) last--;
    cap.v[last].d ^= 1;
    mmp_arith_report rep;
    ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
    ck_assert_uint_eq(rep.random_mismatches, 1);
    mmp_capture_clear(&cap);
}
END_TEST

START_TEST(test_bad_capture)
{
    char tmp[] = "/tmp/mmp-check-arith-XXXXXX";
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    const char *text = "mmaprobe-arith-capture 1\ninstruction x\nin fp16\nout fp32\nk 2\nanchor 0 0 zz\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    mmp_capture cap;
    ck_assert_int_eq(mmp_capture_read(&cap, tmp), MMP_STATUS_PARSE);
    ck_assert_int_eq(mmp_capture_read(&cap, "/nonexistent/capture.txt"), MMP_STATUS_IO);
    unlink(tmp);
}
END_TEST

static Suite *arith_suite(void)
{
    Suite *s = suite_create("arith");
    TCase *tc = tcase_create("analysis");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_synthetic_recovery, 0, (int)(sizeof gpus / sizeof gpus[0]));
    tcase_add_test(tc, test_stored_captures);
    tcase_add_test(tc, test_real_captures);
    tcase_add_test(tc, test_mismatch_detected);
    tcase_add_test(tc, test_bad_capture);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(arith_suite)
