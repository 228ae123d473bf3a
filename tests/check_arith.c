/* check_arith.c — the arithmetic-probe analysis recovers known model parameters.
 *
 * 1. Synthetic captures generated here: for every parameter-table row of V100/A100/Ada/H200
 *    (known parameters), design the probe vectors, compute outputs with the model, analyse,
 *    and require the fitted block size, extra bits, output rounding and c use to equal the
 *    row's, with 0 mismatches on every vector.
 * 2. The stored captures in tests/data/captures/arith/synthetic-*.txt (the exact capture format the GPU
 *    step writes) read back and analyse to their origin's parameters.
 * 3. A capture with one output changed must be reported as a mismatch (the test can fail).
 * 4. Integer probes (s8/u8/s4, +-satfinite): wrap and clamp recovered from synthetic captures; a
 *    device whose .satfinite wraps is flagged against the PTX ISA; a clamp after every addition
 *    is told apart from a clamp of the exact sum.
 * 5. Real H200 captures (results/h200/captures/arith/h200-*.txt.xz, one per instruction, all required)
 *    replay with 0 mismatches through the fitted model and through the H200 table row.
 * 6. The H200 run's fp16-output NaN mismatches, regenerated from the seed, are explained: the
 *    fp16 accumulator overflowing on upload meets an opposite infinite product.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/probe.h"
#include "probes/arith_internal.h"
#include "tests/check_main.h"

static const char *gpus[] = {"V100", "A100", "Ada", "H200"};

static void expect_recovered(const mmp_arith_report *r, const mmp_model_params *want, const char *what)
{
    ck_assert_msg(r->fitted.block_size == want->block_size || want->block_size >= 32,
                  "%s: block %d, expected %d", what, r->fitted.block_size, want->block_size);
    ck_assert_msg(r->fitted.extra_align_bits == want->extra_align_bits, "%s: extra bits %d, expected %d",
                  what, r->fitted.extra_align_bits, want->extra_align_bits);
    ck_assert_msg(r->fitted.out_round == want->out_round, "%s: output rounding differs", what);
    ck_assert_msg(r->fitted.c_unused == want->c_unused, "%s: c use differs", what);
    ck_assert_msg(r->fitted.emulate_f16 == want->emulate_f16 && r->fitted.interleave == want->interleave &&
                  r->fitted.c_fadd == want->c_fadd, "%s: FP8 mma structure (emulated/native) differs", what);
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
        snprintf(path, sizeof path, "%s/tests/data/captures/arith/synthetic-h200-%s.txt", MMP_SOURCE_DIR, ins[i].id);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        fclose(f);
        mmp_capture cap;
        ck_assert_msg(mmp_capture_read(&cap, path) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_str_eq(cap.instruction, ins[i].id);
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        if (mmp_arith_is_integer(cap.in_format)) {
            ck_assert_int_eq(rep.int_saturates, ins[i].satfinite);
            ck_assert_msg(rep.total_mismatches == 0, "%s: %s", path, rep.mismatch_example);
        } else {
            const mmp_model_preset *row = mmp_model_preset_find("H200", ins[i].id);
            ck_assert_msg(row != NULL, "%s: no H200 row for %s", path, ins[i].id);
            expect_recovered(&rep, &row->params, path);
        }
        /* write and read back: the format round-trips */
        char tmp[] = "/tmp/mmp-check-arith-XXXXXX";
        int fd = mkstemp(tmp);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(mmp_capture_write(tmp, &cap), MMP_STATUS_OK);
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

/* Real captures from the H200 (results/h200/captures/arith/h200-<instruction>.txt.xz: every designed
 * vector plus 500 of the 10^5 random ones, from scripts/device/30-probe.sh): the model fitted
 * from each capture and the H200 row of the parameter table must both replay every vector. */
static size_t preset_mismatches(const mmp_capture *cap, const mmp_model_params *p, char *first, size_t size)
{
    double a[256], b[256];
    size_t bad = 0;
    for (size_t i = 0; i < cap->count; i++) {
        const mmp_capture_vec *v = &cap->v[i];
        for (int j = 0; j < cap->k; j++) {
            a[j] = mmp_probe_value(v->a[j]);
            b[j] = mmp_probe_value(v->b[j]);
        }
        double d = 0.0;
        ck_assert_int_eq(mmp_model_dot(&d, a, b, mmp_probe_value(v->c), cap->k, p), MMP_STATUS_OK);
        uint32_t m = mmp_model_fp32_bits(d);
        if (!mmp_model_fp32_same(m, v->d) && !bad++)
            snprintf(first, size, "vector %zu (%s): model %08x, hardware %08x", i, v->probe, m, v->d);
    }
    return bad;
}

START_TEST(test_real_captures)
{
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/results/h200/captures/arith/h200-%s.txt.xz", MMP_SOURCE_DIR, ins[i].id);
        mmp_capture cap;
        ck_assert_msg(mmp_capture_read(&cap, path) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_str_eq(cap.instruction, ins[i].id);
        ck_assert_msg(strstr(cap.device, "H200") != NULL, "%s: device %s", path, cap.device);
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        mmp_arith_report_print(stdout, &rep);
        ck_assert_msg(rep.total_mismatches == 0, "%s: %zu vectors differ from the fitted model (%s)",
                      path, rep.total_mismatches, rep.mismatch_example);
        if (mmp_arith_is_integer(cap.in_format)) {
            /* wrap without .satfinite, clamp with it (PTX ISA), once after the exact sum */
            ck_assert_int_eq(rep.int_saturates, ins[i].satfinite);
            ck_assert_int_eq(rep.int_stepwise, 0);
        } else {
            const mmp_model_preset *row = mmp_model_preset_find("H200", ins[i].id);
            ck_assert_msg(row != NULL, "no H200 row for %s", ins[i].id);
            char first[160] = "";
            size_t bad = preset_mismatches(&cap, &row->params, first, sizeof first);
            printf("  H200 parameter-table row: %zu/%zu vectors differ%s%s\n", bad, cap.count,
                   bad ? "; first: " : "", first);
            ck_assert_msg(bad == 0, "%s: %zu vectors differ from the H200 row (%s)", path, bad, first);
        }
        mmp_capture_clear(&cap);
        found++;
    }
    ck_assert_int_eq(found, (int)n);
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

/* Integer probes: synthetic captures under each documented rule are recovered; a capture
 * whose satfinite outputs wrap is reported as differing from the PTX ISA. */
START_TEST(test_integer_recovery)
{
    static const char *ids[] = {"mma.s8.s32", "mma.s8.s32.satfinite", "mma.u8.s32",
                                "mma.u8.s32.satfinite", "mma.s4.s32", "mma.s4.s32.satfinite"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const mmp_arith_instr *in = mmp_arith_instr_find(ids[i]);
        ck_assert_ptr_nonnull(in);
        mmp_capture cap;
        ck_assert_int_eq(mmp_arith_design(&cap, in, 300, mmp_check_seed), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_arith_model_outputs(&cap, NULL), MMP_STATUS_OK);
        mmp_arith_report rep;
        ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
        ck_assert_int_eq(rep.integer, 1);
        ck_assert_msg(rep.int_saturates == in->satfinite, "%s: saturates %d", ids[i], rep.int_saturates);
        ck_assert_int_eq(rep.int_stepwise, 0);
        ck_assert_msg(rep.total_mismatches == 0, "%s: %s", ids[i], rep.mismatch_example);
        for (int f = 0; f < rep.nf; f++)
            ck_assert_msg(rep.f[f].ok, "%s: feature %s inconsistent: %s", ids[i], rep.f[f].name, rep.f[f].value);
        /* a device whose .satfinite wraps: recovered as wrap, flagged against the ISA */
        if (in->satfinite) {
            ck_assert_int_eq(mmp_arith_model_outputs_int(&cap, 0, 0), MMP_STATUS_OK);
            ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
            ck_assert_int_eq(rep.int_saturates, 0);
            int flagged = 0;
            for (int f = 0; f < rep.nf; f++)
                if (!strcmp(rep.f[f].name, "ptx_isa_agreement")) flagged = !rep.f[f].ok;
            ck_assert_msg(flagged, "%s: wrapping satfinite not flagged", ids[i]);
        }
        /* a device clamping after each addition is told apart (signed inputs) */
        if (in->satfinite && in->in_format != MMP_FORMAT_UINT8) {
            ck_assert_int_eq(mmp_arith_model_outputs_int(&cap, 1, 1), MMP_STATUS_OK);
            ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
            ck_assert_int_eq(rep.int_stepwise, 1);
        }
        mmp_capture_clear(&cap);
    }
}
END_TEST

/* The capture's SASS path (native yes/no + note) survives a write and a read. */
START_TEST(test_native_round_trip)
{
    const mmp_arith_instr *in = mmp_arith_instr_find("mma.s4.s32");
    mmp_capture cap, back;
    ck_assert_int_eq(mmp_arith_design(&cap, in, 10, 1), MMP_STATUS_OK);
    ck_assert_int_eq(cap.native, -1);
    cap.native = 0;
    snprintf(cap.sass, sizeof cap.sass, "IMMA.16832.S8.S8");
    snprintf(cap.path_note, sizeof cap.path_note, "emulated: calls $__internal_1_$__cuda_sm_9x_mma_sub_byte");
    char tmp[] = "/tmp/mmp-check-arith-XXXXXX";
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(mmp_capture_write(tmp, &cap), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_capture_read(&back, tmp), MMP_STATUS_OK);
    ck_assert_int_eq(back.native, 0);
    ck_assert_str_eq(back.path_note, cap.path_note);
    ck_assert_str_eq(back.sass, "IMMA.16832.S8.S8");
    ck_assert_int_eq(back.in_format, MMP_FORMAT_INT4);
    ck_assert_int_eq(back.out_format, MMP_FORMAT_INT32);
    unlink(tmp);
    mmp_capture_clear(&back);
    mmp_capture_clear(&cap);
}
END_TEST

/* fp16-accumulator NaNs. Where the accumulator c is an fp32 random pattern that fp16 cannot
 * hold (the upload makes it an infinity) and it meets an infinite product of the other sign,
 * the H200 gives NaN (7fffffff) and the H200 row of the model does too. The H200 run of this
 * random stream (results/h200/probe/probe.txt: `probe --random 100000`, seed 1) reports 0 of
 * 100,000 random vectors differing from the model for these instructions, these vectors
 * included. The random vectors are a pure function of the seed, so they are regenerated here:
 * the rule (c finite as fp32, infinite as fp16, an opposite infinite product, no NaN input)
 * must decide exactly the recorded number of them, first at the recorded index, and the model
 * must give 7fffffff at every one. */
START_TEST(test_h200_fp16_nan_explained)
{
    static const struct { const char *id; size_t count, first; } seen[] = {
        {"mma.f16.f16", 3, 63824}, {"wgmma.f16.f16", 3, 63824}, {"wgmma.e5m2.f16", 831, 51212}};
    for (size_t t = 0; t < sizeof seen / sizeof seen[0]; t++) {
        const mmp_arith_instr *in = mmp_arith_instr_find(seen[t].id);
        const mmp_model_preset *row = mmp_model_preset_find("H200", seen[t].id);
        ck_assert(in != NULL && row != NULL);
        mmp_capture cap;
        ck_assert_int_eq(mmp_arith_design(&cap, in, 100000, 1), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_arith_model_outputs(&cap, &row->params), MMP_STATUS_OK);
        ck_assert_msg(cap.v[seen[t].first].d == 0x7fffffffu, "%s: model %08x at vector %zu, hardware 7fffffff",
                      seen[t].id, cap.v[seen[t].first].d, seen[t].first);
        size_t rule = 0, first = SIZE_MAX;
        for (size_t i = 0; i < cap.count; i++) {
            const mmp_capture_vec *v = &cap.v[i];
            if (strncmp(v->probe, "rand", 4)) continue;   /* the device run's random vectors */
            double c = mmp_probe_value(v->c);
            double c16 = mmp_format_round(c, MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0);
            if (!isfinite(c) || !isinf(c16)) continue;
            int pos = 0, neg = 0, nan = 0;
            for (int j = 0; j < cap.k; j++) {
                double a = mmp_probe_value(v->a[j]), b = mmp_probe_value(v->b[j]);
                if (isnan(a) || isnan(b) || (isinf(a) && b == 0.0) || (isinf(b) && a == 0.0)) nan = 1;
                else if (isinf(a) || isinf(b)) { if ((a < 0) != (b < 0)) neg = 1; else pos = 1; }
            }
            if (nan || pos == neg || (pos && c16 > 0) || (neg && c16 < 0)) continue;
            ck_assert_msg(v->d == 0x7fffffffu, "%s vector %zu: model %08x", seen[t].id, i, v->d);
            rule++;
            if (first == SIZE_MAX) first = i;
        }
        ck_assert_msg(rule == seen[t].count && first == seen[t].first, "%s: the rule decides %zu vectors "
                      "(first %zu); recorded %zu (first %zu)", seen[t].id, rule, first,
                      seen[t].count, seen[t].first);
        mmp_capture_clear(&cap);
    }
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
    tcase_add_test(tc, test_integer_recovery);
    tcase_add_test(tc, test_native_round_trip);
    tcase_add_test(tc, test_h200_fp16_nan_explained);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(arith_suite)
