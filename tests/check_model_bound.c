/* check_model_bound.c — the model's promotion and integer paths, and the runner's hook
 * mmp_model_bound_for_kernel (GPU table and probe-JSON sources).
 *
 * Hand-computed cases: an FP8 chain keeps 13 fraction bits of the running sum, a promoted chain
 * keeps fp32's 23; integer sums wrap or clamp. The JSON round trip analyses a synthetic capture,
 * writes the probe JSON as `mmaprobe probe --json` does, and reads the model back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/model.h"
#include "mmaprobe/probe.h"
#include "mmaprobe/report.h"
#include "tests/check_main.h"

static mmp_model_params row(const char *gpu, const char *instr)
{
    const mmp_model_preset *r = mmp_model_preset_find(gpu, instr);
    ck_assert_msg(r != NULL, "no row %s %s", gpu, instr);
    return r->params;
}

START_TEST(test_promotion_keeps_fp32)
{
    /* K = 128 e4m3: product 0 = 64*64 = 2^12, product 127 = 2^-4 * 2^-4 = 2^-8 = 2^12 * 2^-20.
     * Chained in the 13-fraction-bit accumulator the 2^-8 is lost (below 2^(12-13));
     * promoted, the last group's 2^-8 is added to 2^12 in fp32 (23 bits): kept. */
    double a[128] = {0}, b[128] = {0};
    a[0] = 64; b[0] = 64; a[127] = 0.0625; b[127] = 0.0625;
    mmp_model_params chain = row("H200", "wgmma.e4m3.f32.chain4"), prom = row("H200", "wgmma.e4m3.f32.promote4");
    ck_assert_int_eq(prom.promote, 32);
    double d;
    ck_assert_int_eq(mmp_model_dot(&d, a, b, 0.0, 128, &chain), MMP_STATUS_OK);
    ck_assert(d == 4096.0);
    ck_assert_int_eq(mmp_model_dot(&d, a, b, 0.0, 128, &prom), MMP_STATUS_OK);
    ck_assert(d == 4096.0 + 0.00390625);
    /* c enters the fp32 sum: c = 1, all products 0 -> 1 exactly; c = 2^24, + 1 -> RN tie -> 2^24 */
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    ck_assert_int_eq(mmp_model_dot(&d, a, b, 1.0, 128, &prom), MMP_STATUS_OK);
    ck_assert(d == 1.0);
    a[40] = 1; b[40] = 1;
    ck_assert_int_eq(mmp_model_dot(&d, a, b, 16777216.0, 128, &prom), MMP_STATUS_OK);
    ck_assert(d == 16777216.0);
    prom.promote = -1;
    ck_assert_int_eq(mmp_model_params_check(&prom), MMP_STATUS_INVALID);
}
END_TEST

START_TEST(test_integer_model)
{
    int32_t a[4] = {1, 0, 0, 0}, b[4] = {1, 0, 0, 0}, d;
    ck_assert_int_eq(mmp_model_int_dot(&d, a, b, INT32_MAX, 4, 0, 0), MMP_STATUS_OK);
    ck_assert_int_eq(d, INT32_MIN);            /* wraps */
    ck_assert_int_eq(mmp_model_int_dot(&d, a, b, INT32_MAX, 4, 1, 0), MMP_STATUS_OK);
    ck_assert_int_eq(d, INT32_MAX);            /* clamps */
    int32_t p[2] = {100, -100}, q[2] = {1, 1};
    ck_assert_int_eq(mmp_model_int_dot(&d, p, q, INT32_MAX - 10, 2, 1, 0), MMP_STATUS_OK);
    ck_assert_int_eq(d, INT32_MAX - 10);       /* exact sum in range */
    ck_assert_int_eq(mmp_model_int_dot(&d, p, q, INT32_MAX - 10, 2, 1, 1), MMP_STATUS_OK);
    ck_assert_int_eq(d, INT32_MAX - 100);      /* clamped after +100, then -100 */
    int32_t m[4] = {-128, -128, -128, -128}, n[4] = {127, 127, 127, 127};
    ck_assert_int_eq(mmp_model_int_dot(&d, m, n, INT32_MIN + 5, 4, 0, 0), MMP_STATUS_OK);
    ck_assert_int_eq(d, (int32_t)(INT32_MAX - 4 * 16256 + 6));   /* wrapped below INT32_MIN */
    ck_assert_int_eq(mmp_model_int_dot(&d, m, n, 0, 0, 0, 0), MMP_STATUS_INVALID);
}
END_TEST

START_TEST(test_bound_from_table)
{
    mmp_model_params p;
    double u;
    char id[32];
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "H200", MMP_FORMAT_FP16,
                                                MMP_FORMAT_FP32, 0), MMP_STATUS_OK);
    ck_assert_str_eq(id, "mma.f16.f32");
    ck_assert(u == ldexp(1.0, -23));           /* truncation to 23 fraction bits */
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "h200", MMP_FORMAT_E4M3,
                                                MMP_FORMAT_FP32, 1), MMP_STATUS_OK);
    ck_assert_str_eq(id, "wgmma.e4m3.f32");
    ck_assert(u == ldexp(1.0, -13));           /* the narrow FP8 accumulator */
    /* H100 has only the zero-accumulator FP8 row: the fallback names it */
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "H100", MMP_FORMAT_E4M3,
                                                MMP_FORMAT_FP32, 1), MMP_STATUS_OK);
    ck_assert_str_eq(id, "wgmma.e4m3.f32.c0");
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "H200", MMP_FORMAT_INT8,
                                                MMP_FORMAT_INT32, 0), MMP_STATUS_UNSUPPORTED);
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "Z999", MMP_FORMAT_FP16,
                                                MMP_FORMAT_FP32, 0), MMP_STATUS_UNSUPPORTED);
    /* the bound covers real errors: random e4m3 K = 128 against the exact sum, both chains */
    const char *ids[] = {"wgmma.e4m3.f32.chain4", "wgmma.e4m3.f32.promote4"};
    uint64_t s = mmp_check_seed;
    for (int which = 0; which < 2; which++) {
        mmp_model_params q = row("H200", ids[which]);
        for (int v = 0; v < 300; v++) {
            double a[128], b[128], exact = 0.0, mag = 0.0, d;
            for (int j = 0; j < 128; j++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                a[j] = ldexp(1.0 + (double)((s >> 33) & 7) / 8.0, (int)((s >> 40) % 9) - 4) * ((s >> 63) ? -1 : 1);
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                b[j] = ldexp(1.0 + (double)((s >> 33) & 7) / 8.0, (int)((s >> 40) % 9) - 4);
                exact += a[j] * b[j];      /* exact: 8-bit products, |sum| < 2^53 in units of 2^-16 */
                mag += fabs(a[j] * b[j]);
            }
            ck_assert_int_eq(mmp_model_dot(&d, a, b, 0.0, 128, &q), MMP_STATUS_OK);
            ck_assert_msg(fabs(d - exact) <= mmp_model_error_bound(&q, 128, mag),
                          "%s: |%g - %g| > bound %g", ids[which], d, exact, mmp_model_error_bound(&q, 128, mag));
        }
    }
    mmp_model_params c4 = row("H200", "wgmma.e4m3.f32.chain4"), p4 = row("H200", "wgmma.e4m3.f32.promote4");
    ck_assert(mmp_model_error_bound(&p4, 4096, 1.0) < mmp_model_error_bound(&c4, 4096, 1.0));
}
END_TEST

/* A probe run document holding rep (after a skipped wgmma.e4m3.f32 entry when skip). */
static mmp_status write_doc(const char *path, const mmp_arith_report *rep, int skip)
{
    mmp_run run;
    mmp_run_init(&run);
    snprintf(run.kind, sizeof run.kind, "probe");
    run.probes = malloc(sizeof *run.probes);
    if (!run.probes) return MMP_STATUS_NO_MEMORY;
    mmp_probe_results_init(run.probes);
    run.probes->arith.present = 1;
    mmp_arith_result a;
    memset(&a, 0, sizeof a);
    if (skip) {
        snprintf(a.instruction, sizeof a.instruction, "wgmma.e4m3.f32");
        a.state = MMP_PROBE_STATE_SKIPPED;
        snprintf(a.reason, sizeof a.reason, "x");
        MMP_TRY(mmp_arith_results_add(&run.probes->arith, &a));
    }
    snprintf(a.instruction, sizeof a.instruction, "%s", rep->instruction);
    a.state = MMP_PROBE_STATE_ANALYSED;
    a.reason[0] = 0;
    a.rep = *rep;
    mmp_status st = mmp_arith_results_add(&run.probes->arith, &a);
    if (st == MMP_STATUS_OK) st = mmp_report_write_json(path, &run);
    mmp_run_clear(&run);
    return st;
}

START_TEST(test_bound_from_probe_json)
{
    /* analyse a synthetic zero-accumulator FP8 capture, write the probe JSON, read it back */
    const mmp_arith_instr *in = mmp_arith_instr_find("wgmma.e4m3.f32.c0");
    ck_assert_ptr_nonnull(in);
    mmp_model_params truth = row("H200", in->id);
    mmp_capture cap;
    ck_assert_int_eq(mmp_arith_design(&cap, in, 100, mmp_check_seed), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_arith_model_outputs(&cap, &truth), MMP_STATUS_OK);
    mmp_arith_report rep;
    ck_assert_int_eq(mmp_arith_analyse(&rep, &cap), MMP_STATUS_OK);
    char path[] = "/tmp/mmp-check-bound-XXXXXX.json";
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(write_doc(path, &rep, 0), MMP_STATUS_OK);   /* the run document probe writes */
    FILE *f;
    mmp_model_params p;
    double u;
    char id[32];
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, path, MMP_FORMAT_E4M3,
                                                MMP_FORMAT_FP32, 1), MMP_STATUS_OK);
    ck_assert_str_eq(id, "wgmma.e4m3.f32.c0");
    ck_assert_int_eq(p.block_size, rep.fitted.block_size);
    ck_assert_int_eq(p.extra_align_bits, truth.extra_align_bits);
    ck_assert_int_eq(p.result_frac_bits, truth.result_frac_bits);
    ck_assert_int_eq(p.c_unused, 1);
    ck_assert(u == mmp_model_unit_roundoff(&truth));
    /* no fp16 input in that file */
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, path, MMP_FORMAT_FP16,
                                                MMP_FORMAT_FP32, 0), MMP_STATUS_UNSUPPORTED);
    /* an instruction the probe could not capture is skipped for the next candidate */
    ck_assert_int_eq(write_doc(path, &rep, 1), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, path, MMP_FORMAT_E4M3,
                                                MMP_FORMAT_FP32, 1), MMP_STATUS_OK);
    ck_assert_str_eq(id, "wgmma.e4m3.f32.c0");
    /* an entry without a model object is a parse error; a missing file an I/O error */
    f = fopen(path, "w");
    fprintf(f, "{\"arith\": [{\"instruction\": \"mma.f16.f32\", \"sass\": \"x\"}]}\n");
    fclose(f);
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, path, MMP_FORMAT_FP16,
                                                MMP_FORMAT_FP32, 0), MMP_STATUS_PARSE);
    unlink(path);
    ck_assert_int_eq(mmp_model_bound_for_kernel(&p, &u, id, sizeof id, "/nonexistent/p.json",
                                                MMP_FORMAT_FP16, MMP_FORMAT_FP32, 0), MMP_STATUS_IO);
    mmp_capture_clear(&cap);
}
END_TEST

static Suite *model_bound_suite(void)
{
    Suite *s = suite_create("model_bound");
    TCase *tc = tcase_create("bound");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_promotion_keeps_fp32);
    tcase_add_test(tc, test_integer_model);
    tcase_add_test(tc, test_bound_from_table);
    tcase_add_test(tc, test_bound_from_probe_json);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(model_bound_suite)
