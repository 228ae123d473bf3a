/* tests/check_gpu_fused.c — GPU tests of the int4_fused operator (exit 77 without a device),
 * through the runner's operator cases (suites/fused_cases.c): every op of mmp_fused_ops()
 * (components and fused, simple and persistent) on several shapes, persistent grids capped so one
 * CTA walks several tiles, must PASS: guarded buffers on both sides, poison, two runs bitwise
 * equal, the exact per-component reference and budget, bitwise against the host emulation where
 * the order is known, the smem budget against cudaFuncGetAttributes. The built-in smoke cases run
 * through mmp_runner_run (a forked child per op). Planted bugs (an op wrapped to write nothing,
 * to write past the end, into an input, differently in its second run, or with wrong scales)
 * must FAIL with their reason. Unsupported shapes are SKIPs. CK_FORK=no to debug.
 */
#define MMP_CHECK_GPU 1
#include <check.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/fused.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"

typedef struct vcase { int64_t m, n, k; int g; mmp_format sf; int grid_cap; } vcase;
static const vcase vcases[] = {
    {256, 192, 512, 128, MMP_FORMAT_FP16, 0},   /* 6 tiles, one per CTA */
    {256, 128, 384, 64, MMP_FORMAT_BF16, 1},    /* one CTA walks 4 tiles: phases wrap across tiles */
    {384, 192, 256, 64, MMP_FORMAT_FP16, 5},    /* 18 tiles over 5 CTAs, uneven */
    {128, 64, 64, 64, MMP_FORMAT_FP16, 0},      /* one tile, one K step, one group */
};

static void print_result(const mmp_case_result *r)
{
    char why[160];
    printf("%-64s %-5s %s %s\n", r->id, mmp_verdict_name(r->verdict), mmp_reason_format(why, sizeof why, r->reasons),
           r->message);
    fflush(stdout);
}

START_TEST(test_validate_all_ops)
{
    const vcase *c = &vcases[_i];
    mmp_fused_problem p = {c->m, c->n, c->k, c->g, 32, c->sf};
    size_t n = 0;
    const mmp_fused_op *ops = mmp_fused_ops(&n);
    ck_assert_uint_gt(n, 0);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    int n_fail = 0;
    for (size_t i = 0; i < n; i++) {
        mmp_case cs;
        ck_assert_int_eq(mmp_case_init_fused(&cs, ops[i].name, &p, c->grid_cap, mmp_check_seed), MMP_STATUS_OK);
        mmp_case_result r;
        mmp_status st = mmp_runner_run_case(&r, &cs, &o);
        print_result(&r);
        ck_assert_msg(st == MMP_STATUS_OK, "%s: %s", cs.id, mmp_error_last());
        n_fail += r.verdict != MMP_VERDICT_PASS;
    }
    ck_assert_msg(n_fail == 0, "%d ops did not pass (see the lines above)", n_fail);
}
END_TEST

static int smoke_fail;
static void on_result(const mmp_case_result *r, size_t index, void *user)
{
    (void)index; (void)user;
    print_result(r);
    smoke_fail += r->verdict != MMP_VERDICT_PASS;
}

/* What `mmaprobe validate --suite smoke --filter 'int4_fused*'` runs, isolated per op. */
START_TEST(test_smoke_suite_isolated)
{
    mmp_case *cases = NULL;
    size_t n = 0;
    ck_assert_int_eq(mmp_cases_add_operators(&cases, &n, "smoke", "int4_fused*", mmp_check_seed), MMP_STATUS_OK);
    ck_assert_uint_gt(n, 0);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result *res = calloc(n, sizeof *res);
    ck_assert_ptr_nonnull(res);
    smoke_fail = 0;
    ck_assert_int_eq(mmp_runner_run(res, cases, n, &o, on_result, NULL), MMP_STATUS_OK);
    ck_assert_msg(smoke_fail == 0, "%d smoke cases did not pass", smoke_fail);
    free(res);
    mmp_cases_free(cases);
}
END_TEST

/* ---- planted bugs: the fused operator's hooks with run wrapped (op_arg[7] = the bug) ---- */
enum { BUG_NONE, BUG_NO_WRITE, BUG_PAST_END, BUG_INTO_INPUT, BUG_SECOND_RUN, BUG_WRONG_SCALES, BUG_COUNT };
static mmp_operator planted;
static const mmp_operator *real_op;
static int run_calls;

static int planted_run(void *state, void *const *ptr, const mmp_case *c, void *stream)
{
    void *p[MMP_OPERATOR_MAX_OPERANDS];
    memcpy(p, ptr, sizeof p);
    /* operand order of fused_cases.c: xq sx wq sw x a b beta z y */
    switch (c->op_arg[7]) {
    case BUG_NO_WRITE: return MMP_KERNEL_OK;
    case BUG_PAST_END: p[9] = (float *)p[9] + 16; break;          /* the last 16 land in the guard */
    case BUG_INTO_INPUT: p[9] = p[8]; break;                      /* y written over z */
    case BUG_SECOND_RUN: if (run_calls++ == 1) p[7] = (float *)p[7] + 1; break;   /* beta shifted */
    case BUG_WRONG_SCALES: p[3] = p[1]; break;                    /* sx read as sw (M >= N) */
    default: break;
    }
    return real_op->run(state, p, c, stream);
}

typedef struct bugcase { const char *op; int bug; uint32_t want; } bugcase;
static const bugcase bugs[] = {
    {"int4_fused_affine", BUG_NONE, 0},
    {"int4_fused_affine", BUG_NO_WRITE, MMP_REASON_UNWRITTEN},
    {"int4_fused_affine", BUG_PAST_END, MMP_REASON_GUARD},
    {"int4_fused_affine", BUG_INTO_INPUT, MMP_REASON_INPUT_MODIFIED},
    {"int4_fused_affine", BUG_SECOND_RUN, MMP_REASON_NONDETERMINISTIC},
    {"int4_fused_simple_qgemm", BUG_WRONG_SCALES, MMP_REASON_BOUND_EXCEEDED},
    {"int4_fused_persistent", BUG_PAST_END, MMP_REASON_GUARD},
};

START_TEST(test_planted_bugs_caught)
{
    const bugcase *b = &bugs[_i];
    mmp_fused_problem p = {256, 128, 256, 64, 32, MMP_FORMAT_FP16};
    mmp_case c;
    ck_assert_int_eq(mmp_case_init_fused(&c, b->op, &p, 0, mmp_check_seed), MMP_STATUS_OK);
    real_op = c.op;
    planted = *c.op;
    planted.run = planted_run;
    c.op = &planted;
    c.op_arg[7] = b->bug;
    run_calls = 0;
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
    print_result(&r);
    if (!b->want) {
        ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: the unplanted wrapper must pass: %s", c.id, r.message);
    } else {
        ck_assert_msg(r.verdict == MMP_VERDICT_FAIL, "%s bug %d: %s, want FAIL", c.id, b->bug, mmp_verdict_name(r.verdict));
        ck_assert_msg(r.reasons & b->want, "%s bug %d: reasons 0x%x lack 0x%x (%s)", c.id, b->bug, r.reasons, b->want, r.message);
    }
}
END_TEST

START_TEST(test_unsupported_is_skip)
{
    const mmp_fused_problem bad[] = {{100, 64, 128, 64, 32, MMP_FORMAT_FP16},   /* M not a multiple of 128 */
                                     {128, 64, 128, 32, 32, MMP_FORMAT_FP16},   /* g < 64 */
                                     {128, 64, 128, 64, 16, MMP_FORMAT_FP16}};  /* rank 16 */
    size_t n = 0;
    const mmp_fused_op *ops = mmp_fused_ops(&n);
    ck_assert_uint_gt(n, 0);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    for (size_t b = 0; b < 3; b++)
        for (size_t i = 0; i < n; i++) {
            mmp_fused_part part = ops[i].part;
            if (part == MMP_FUSED_PART_DECODE || part == MMP_FUSED_PART_DEQUANT || part == MMP_FUSED_PART_AFFINE) continue;
            mmp_case c;
            ck_assert_int_eq(mmp_case_init_fused(&c, ops[i].name, &bad[b], 0, mmp_check_seed), MMP_STATUS_OK);
            mmp_case_result r;
            ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
            ck_assert_msg(r.verdict == MMP_VERDICT_SKIP && (r.reasons & MMP_REASON_UNSUPPORTED), "%s: %s %s", c.id,
                          mmp_verdict_name(r.verdict), r.message);
        }
}
END_TEST

static Suite *gpu_fused_suite(void)
{
    Suite *s = suite_create("gpu_fused");
    TCase *t = tcase_create("ops");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, test_validate_all_ops, 0, (int)(sizeof vcases / sizeof vcases[0]));
    tcase_add_test(t, test_smoke_suite_isolated);
    tcase_add_loop_test(t, test_planted_bugs_caught, 0, (int)(sizeof bugs / sizeof bugs[0]));
    tcase_add_test(t, test_unsupported_is_skip);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(gpu_fused_suite)
