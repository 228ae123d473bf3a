/* check_model_vectors.c — the model against the published hardware vectors.
 *
 * For every GPU x input x output set in shared/data/mma-vectors (README there), replay the 5,000
 * vectors through the parameter table's row (reference/model_presets.c) and count mismatches
 * (bitwise, any NaN equals any NaN); then fit block size, extra alignment bits and output
 * rounding from the vectors alone and print both. Reliable sets must have 0 mismatches; the
 * FP8 sets with fp16 output are unreliable (README): their counts are printed, not checked.
 * Data: $MMP_VECTORS_DIR, or ../shared/data/mma-vectors beside the source tree (the full set),
 * else tests/data/mma-vectors (the committed subset: the first 500 vectors of every file);
 * exits 77 (skip) only when none is there.
 *
 * Run: build/check_model_vectors   (MMP_VECTORS_DIR=/path/to/mma-vectors to point elsewhere)
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/model.h"
#include "mmaprobe/probe.h"

typedef struct vec_case {
    const char *gpu, *in;       /* directory names */
    mmp_format out;
    const char *instruction;    /* row of the parameter table */
    int reliable;
    int known;                  /* mismatches explained in the table's comment (B200 E5M2: 1) */
} vec_case;

static const vec_case cases[] = {
    {"V100", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"V100", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"A100", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"A100", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"A100", "bf16", MMP_FORMAT_FP32, "mma.bf16.f32", 1, 0},
    {"A100", "tf32", MMP_FORMAT_FP32, "mma.tf32.f32", 1, 0},
    {"Ada", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"Ada", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"Ada", "bf16", MMP_FORMAT_FP32, "mma.bf16.f32", 1, 0},
    {"Ada", "tf32", MMP_FORMAT_FP32, "mma.tf32.f32", 1, 0},
    {"Ada", "E4M3", MMP_FORMAT_FP32, "mma.e4m3.f32", 1, 0},
    {"Ada", "E5M2", MMP_FORMAT_FP32, "mma.e5m2.f32", 1, 0},
    {"Ada", "E4M3", MMP_FORMAT_FP16, "mma.e4m3.f32", 0, 0},
    {"Ada", "E5M2", MMP_FORMAT_FP16, "mma.e5m2.f32", 0, 0},
    {"H100", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"H100", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"H100", "bf16", MMP_FORMAT_FP32, "mma.bf16.f32", 1, 0},
    {"H100", "tf32", MMP_FORMAT_FP32, "mma.tf32.f32", 1, 0},
    {"H100", "E4M3", MMP_FORMAT_FP32, "wgmma.e4m3.f32.c0", 1, 0},
    {"H100", "E5M2", MMP_FORMAT_FP32, "wgmma.e5m2.f32.c0", 1, 0},
    {"H100", "E4M3", MMP_FORMAT_FP16, "wgmma.e4m3.f32.c0", 0, 0},
    {"H100", "E5M2", MMP_FORMAT_FP16, "wgmma.e5m2.f32.c0", 0, 0},
    {"H200", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"H200", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"H200", "bf16", MMP_FORMAT_FP32, "mma.bf16.f32", 1, 0},
    {"H200", "tf32", MMP_FORMAT_FP32, "mma.tf32.f32", 1, 0},
    {"H200", "E4M3", MMP_FORMAT_FP32, "wgmma.e4m3.f32.c0", 1, 0},
    {"H200", "E5M2", MMP_FORMAT_FP32, "wgmma.e5m2.f32.c0", 1, 0},
    {"H200", "E4M3", MMP_FORMAT_FP16, "wgmma.e4m3.f32.c0", 0, 0},
    {"H200", "E5M2", MMP_FORMAT_FP16, "wgmma.e5m2.f32.c0", 0, 0},
    {"B200", "fp16", MMP_FORMAT_FP32, "mma.f16.f32", 1, 0},
    {"B200", "fp16", MMP_FORMAT_FP16, "mma.f16.f16", 1, 0},
    {"B200", "bf16", MMP_FORMAT_FP32, "mma.bf16.f32", 1, 0},
    {"B200", "tf32", MMP_FORMAT_FP32, "mma.tf32.f32", 1, 0},
    {"B200", "E4M3", MMP_FORMAT_FP32, "mma.e4m3.f32", 1, 0},
    {"B200", "E5M2", MMP_FORMAT_FP32, "mma.e5m2.f32", 1, 1},
    {"B200", "E4M3", MMP_FORMAT_FP16, "mma.e4m3.f32", 0, 0},
    {"B200", "E5M2", MMP_FORMAT_FP16, "mma.e5m2.f32", 0, 0},
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static char data_dir[4096];

START_TEST(test_vector_set)
{
    const vec_case *vc = &cases[_i];
    const mmp_model_preset *row = mmp_model_preset_find(vc->gpu, vc->instruction);
    ck_assert_msg(row != NULL, "no parameter row for %s %s", vc->gpu, vc->instruction);
    mmp_vector_set s;
    mmp_status st = mmp_vectors_load(&s, data_dir, vc->gpu, vc->in, vc->out);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    mmp_model_params p = row->params;
    if (vc->out != p.out_format) {
        /* unreliable FP8 -> fp16 sets: the fp32 row, rounded to fp16 at the end */
        p.out_format = vc->out;
        p.out_round = MMP_ROUND_NEAREST_EVEN;
        p.result_frac_bits = 0;
    }
    size_t bad = 0, first = 0;
    ck_assert_int_eq(mmp_model_count_mismatches(&bad, &first, s.a, s.b, s.c, s.d_bits, s.count,
                                                s.k, &p), MMP_STATUS_OK);
    /* the fit of an unreliable set finds no good candidate and cannot stop early: skipped */
    mmp_model_fit_result fit = {p, bad, 0, 0};
    if (vc->reliable)
        ck_assert_int_eq(mmp_model_fit(&fit, s.a, s.b, s.c, s.d_bits, s.count, s.k, &p), MMP_STATUS_OK);
    char desc[256], fdesc[256];
    mmp_model_params_format(desc, sizeof desc, &p);
    mmp_model_params_format(fdesc, sizeof fdesc, &fit.best);
    printf("%-5s %-4s -> %-4s K=%-2d %-15s mismatches %5zu/%zu%s\n      table: %s\n"
           "      fit:   %s  (%zu mismatches, %zu ties of %zu candidates)\n",
           vc->gpu, vc->in, vc->out == MMP_FORMAT_FP16 ? "fp16" : "fp32", s.k, vc->instruction,
           bad, s.count, vc->reliable ? "" : "  [unreliable set: reported, not checked]", desc,
           fdesc, fit.mismatches, fit.tied, fit.candidates);
    if (bad && first < s.count) {
        double d;
        mmp_model_dot(&d, s.a + first * s.k, s.b + first * s.k, s.c[first], s.k, &p);
        printf("      first mismatch #%zu: model %08x hardware %08x\n", first,
               mmp_model_fp32_bits(d), s.d_bits[first]);
    }
    fflush(stdout);
    if (vc->reliable) {
        ck_assert_msg(bad <= (size_t)vc->known, "%s %s->%s: %zu of %zu vectors differ from the model",
                      vc->gpu, vc->in, vc->out == MMP_FORMAT_FP16 ? "fp16" : "fp32", bad, s.count);
        /* the fit searches from the data alone: it must do as well as the table */
        ck_assert_uint_le(fit.mismatches, bad);
    }
    mmp_vectors_clear(&s);
}
END_TEST

static Suite *model_vectors_suite(void)
{
    Suite *s = suite_create("model_vectors");
    TCase *tc = tcase_create("published");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_vector_set, 0, N_CASES);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (mmp_vectors_dir(data_dir, sizeof data_dir) != MMP_STATUS_OK) {
        printf("SKIP: %s\n", mmp_error_last());
        return 77;
    }
    printf("# model_vectors: data %s\n", data_dir);
    SRunner *sr = srunner_create(model_vectors_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
