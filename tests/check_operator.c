/* tests/check_operator.c — the runner's operator-case path on the CPU: a host-executed fake
 * operator (this file's fixture, not product code), y = a + b elementwise in fp32 on exact
 * dyadic inputs (the sum is exact: bitwise expected, budget half an ulp), run by the runner with
 * guarded buffers, poison, two runs and its reference step. Planted bugs must FAIL with the
 * right reason: an element left unwritten, a write past the end, a run that differs from the
 * other, an element off by one ulp, an input overwritten; a crash is an ERROR of its case only
 * under isolation. The correct op passes. The int4_fused cases exist in the built-in suites and,
 * without a device, are SKIPs with the reason (never passes).
 */
#include <check.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/runner.h"
#include "tests/check_main.h"

enum { BUG_NONE, BUG_UNWRITTEN, BUG_PAST_END, BUG_BEFORE_START, BUG_NONDET, BUG_ULP, BUG_INPUT, BUG_CRASH, BUG_COUNT };
enum { ARG_BUG = 0 };

typedef struct fake_state { int64_t n; float *a, *b; double *exact; int calls; } fake_state;

static void fake_id(char *buf, size_t size, const mmp_case *c)
{
    snprintf(buf, size, "%s/add/%lldx%lld/bug%lld/s%llu", c->kernel->name, (long long)c->m, (long long)c->n,
             (long long)c->op_arg[ARG_BUG], (unsigned long long)c->seed);
}

static int fake_operands(mmp_operand *d, const mmp_case *c)
{
    const mmp_operand v[3] = {{"a", MMP_FORMAT_FP32, c->m, c->n, MMP_OPERAND_INPUT},
                              {"b", MMP_FORMAT_FP32, c->m, c->n, MMP_OPERAND_INPUT},
                              {"y", MMP_FORMAT_FP32, c->m, c->n, MMP_OPERAND_OUTPUT}};
    memcpy(d, v, sizeof v);
    return 3;
}

static mmp_status fake_prepare(void **state, void *const *host, const mmp_case *c)
{
    fake_state *s = calloc(1, sizeof *s);
    if (!s) return MMP_ERR(MMP_STATUS_NO_MEMORY, "fixture: out of memory");
    *state = s;
    s->n = c->m * c->n;
    s->a = host[0];
    s->b = host[1];
    for (int64_t e = 0; e < s->n; e++) {   /* dyadics with 8 significant bits: a + b is exact */
        s->a[e] = (float)((int)((e * 37 + (int64_t)c->seed) % 255) - 127) / 64.0f;
        s->b[e] = (float)((int)((e * 91 + 5) % 251) - 125) / 32.0f;
    }
    return MMP_STATUS_OK;
}

static mmp_status fake_reference(void *state, const mmp_case *c)
{
    (void)c;
    fake_state *s = state;
    s->exact = malloc((size_t)s->n * sizeof *s->exact);
    if (!s->exact) return MMP_ERR(MMP_STATUS_NO_MEMORY, "fixture: out of memory");
    for (int64_t e = 0; e < s->n; e++) s->exact[e] = (double)s->a[e] + (double)s->b[e];
    return MMP_STATUS_OK;
}

static int fake_run(void *state, void *const *ptr, const mmp_case *c, void *stream)
{
    (void)stream;
    fake_state *s = state;
    const float *a = ptr[0], *b = ptr[1];
    float *y = ptr[2];
    const int bug = (int)c->op_arg[ARG_BUG];
    const int call = s->calls++;
    for (int64_t e = 0; e < s->n; e++) {
        if (bug == BUG_UNWRITTEN && e == 7) continue;
        y[e] = a[e] + b[e];
    }
    if (bug == BUG_PAST_END) y[s->n] = 0.0f;
    if (bug == BUG_BEFORE_START) y[-1] = 0.0f;
    if (bug == BUG_NONDET && call == 1) y[3] = -y[3] + 1.0f;
    if (bug == BUG_ULP) y[5] = nextafterf(y[5], INFINITY);
    if (bug == BUG_INPUT) ((float *)ptr[0])[2] = 42.0f;
    if (bug == BUG_CRASH) raise(SIGSEGV);
    return MMP_KERNEL_OK;
}

static uint64_t fake_expected(const void *state, int64_t idx)
{
    const fake_state *s = state;
    float f = (float)s->exact[idx];
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

/* The reference step: |got - exact| <= half an ulp of the exact value. */
static mmp_status fake_check(mmp_case_result *r, void *state, const void *got, const mmp_case *c)
{
    (void)c;
    fake_state *s = state;
    const float *y = got;
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < s->n; e++) {
        double err = fabs((double)y[e] - s->exact[e]);
        double half_ulp = ldexp(1.0, ilogb(s->exact[e] != 0 ? s->exact[e] : 1.0) - 24);
        if (!(err <= half_ulp)) { if (!bad++) first = e; }
    }
    r->metrics.count = s->n;
    r->metrics.above_tol = bad;
    if (bad) {
        r->reasons |= MMP_REASON_BOUND_EXCEEDED;
        mmp_runner_say(r, "bound-exceeded: %lld elements beyond half an ulp, first %lld", (long long)bad, (long long)first);
    }
    return MMP_STATUS_OK;
}

static void fake_clear(void *state)
{
    fake_state *s = state;
    if (!s) return;
    free(s->exact);
    free(s);
}

static const mmp_operator fake_op = {fake_id, fake_operands, fake_prepare, fake_reference, fake_run,
                                     NULL, fake_expected, fake_check, fake_clear};
static const mmp_kernel_desc fake_desc = {
    .abi_version = MMP_KERNEL_ABI_VERSION, .name = "fixture_add", .family = "fixture",
    .a_format = MMP_FORMAT_FP32, .b_format = MMP_FORMAT_FP32, .c_format = MMP_FORMAT_FP32,
    .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,
    .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_ROW, .layouts_d = MMP_LAYOUTS_ROW,
    .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = 1, .where = MMP_KERNEL_HOST,
    .description = "test fixture: y = a + b"};

static void fake_case(mmp_case *c, int bug)
{
    mmp_case_init(c, &fake_desc, 33, 17, 1, MMP_DIST_EXACT, mmp_check_seed);
    c->op = &fake_op;
    c->op_arg[ARG_BUG] = bug;
    mmp_case_finish(c);
}

static const uint32_t want_reason[BUG_COUNT] = {
    [BUG_NONE] = 0, [BUG_UNWRITTEN] = MMP_REASON_UNWRITTEN, [BUG_PAST_END] = MMP_REASON_GUARD,
    [BUG_BEFORE_START] = MMP_REASON_GUARD, [BUG_NONDET] = MMP_REASON_NONDETERMINISTIC,
    [BUG_ULP] = MMP_REASON_BOUND_EXCEEDED, [BUG_INPUT] = MMP_REASON_INPUT_MODIFIED,
};

START_TEST(test_planted_bug_in_process)
{
    mmp_case c;
    fake_case(&c, _i);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run_case(&r, &c, &o), MMP_STATUS_OK);
    ck_assert_str_eq(r.id, c.id);
    if (_i == BUG_NONE) {
        ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: %s", c.id, r.message);
        ck_assert_int_eq(r.reasons, 0);
        return;
    }
    ck_assert_msg(r.verdict == MMP_VERDICT_FAIL, "%s: %s (%s)", c.id, mmp_verdict_name(r.verdict), r.message);
    /* exactly the planted reason: an unwritten element is not also a wrong value, and so on */
    ck_assert_msg(r.reasons == want_reason[_i], "%s: reasons 0x%x, want 0x%x (%s)", c.id, r.reasons, want_reason[_i],
                  r.message);
    if (_i == BUG_UNWRITTEN) { ck_assert_int_eq(r.n_unwritten, 1); ck_assert_ptr_nonnull(strstr(r.message, "(0,7)")); }
    if (_i == BUG_PAST_END) ck_assert_ptr_nonnull(strstr(r.message, "from its end"));
    if (_i == BUG_BEFORE_START) ck_assert_ptr_nonnull(strstr(r.message, "from its start"));
    if (_i == BUG_NONDET) ck_assert_int_eq(r.n_nondet, 1);
    if (_i == BUG_INPUT) ck_assert_ptr_nonnull(strstr(r.message, "of a "));
}
END_TEST

static mmp_case_result last[BUG_COUNT];
static void keep(const mmp_case_result *r, size_t index, void *user) { (void)user; last[index] = *r; }

/* Through mmp_runner_run with isolation: the crash is an ERROR of its case; the rest as above. */
START_TEST(test_isolated_run)
{
    mmp_case cases[BUG_COUNT];
    for (int b = 0; b < BUG_COUNT; b++) fake_case(&cases[b], b);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result res[BUG_COUNT];
    ck_assert_int_eq(mmp_runner_run(res, cases, BUG_COUNT, &o, keep, NULL), MMP_STATUS_OK);
    for (int b = 0; b < BUG_COUNT; b++) {
        ck_assert_str_eq(res[b].id, cases[b].id);
        ck_assert_str_eq(last[b].id, cases[b].id);
        if (b == BUG_CRASH) {
            ck_assert_msg(res[b].verdict == MMP_VERDICT_ERROR && (res[b].reasons & MMP_REASON_CRASH), "crash: %s %s",
                          mmp_verdict_name(res[b].verdict), res[b].message);
        } else {
            ck_assert_msg(res[b].verdict == (b == BUG_NONE ? MMP_VERDICT_PASS : MMP_VERDICT_FAIL), "%s: %s", res[b].id,
                          res[b].message);
            ck_assert_int_eq(res[b].reasons, want_reason[b]);
        }
    }
}
END_TEST

/* The fused operator's cases: in every built-in suite, unique IDs that match their own glob,
 * and SKIP with the reason when there is no device. */
START_TEST(test_fused_cases_skip_without_device)
{
    static const char *const suites[] = {"smoke", "edge", "full"};
    for (int s = 0; s < 3; s++) {
        mmp_case *cases = NULL;
        size_t n = 0;
        ck_assert_int_eq(mmp_cases_add_operators(&cases, &n, suites[s], "int4_fused*", 42), MMP_STATUS_OK);
        ck_assert_uint_ge(n, 11);   /* every component x mode */
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(fnmatch("int4_fused_*/*/*x*x*/g*/r*/*/s42", cases[i].id, 0), 0);
            for (size_t j = 0; j < i; j++) ck_assert_str_ne(cases[i].id, cases[j].id);
            mmp_case *one = NULL;
            size_t n1 = 0;
            ck_assert_int_eq(mmp_cases_add_operators(&one, &n1, suites[s], cases[i].id, 42), MMP_STATUS_OK);
            ck_assert_uint_eq(n1, 1);
            mmp_cases_free(one);
        }
        if (s == 0) {
            mmp_runner_options o;
            mmp_runner_options_init(&o);
            o.have_device = 0;
            snprintf(o.no_device_reason, sizeof o.no_device_reason, "no CUDA device (test)");
            for (size_t i = 0; i < n; i++) {
                mmp_case_result r;
                ck_assert_int_eq(mmp_runner_run_case(&r, &cases[i], &o), MMP_STATUS_OK);
                ck_assert_int_eq(r.verdict, MMP_VERDICT_SKIP);
                ck_assert_uint_ne(r.reasons & MMP_REASON_UNSUPPORTED, 0);
                ck_assert_str_eq(r.message, "no CUDA device (test)");
            }
        }
        mmp_cases_free(cases);
    }
    mmp_case *none = NULL;
    size_t nn = 0;
    ck_assert_int_eq(mmp_cases_add_operators(&none, &nn, "smoke", "host_*", 42), MMP_STATUS_OK);
    ck_assert_uint_eq(nn, 0);
    free(none);
}
END_TEST

static Suite *operator_suite(void)
{
    Suite *s = suite_create("operator");
    TCase *t = tcase_create("planted");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_planted_bug_in_process, 0, BUG_CRASH);
    tcase_add_test(t, test_isolated_run);
    tcase_add_test(t, test_fused_cases_skip_without_device);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(operator_suite)
