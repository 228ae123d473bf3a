/* check_mutants_host.c — every host mutant is caught with the RIGHT reason, and the correct
 * kernel passes the very same case (so the catch is the bug's, not the case's); the built-in
 * smoke + edge suites catch the mutants planted for their case classes, and the mutants' twin
 * without a bug passes all of them. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"

typedef struct {
    const char *mutant;
    int64_t m, n, k, ld_extra;
    mmp_dist dist;
    mmp_verdict verdict;
    uint32_t reason;
} mutant_case;

static const mutant_case table[] = {
    {"mut_host_drop_k_tile", 32, 32, 70, 0, MMP_DIST_EXACT, MMP_VERDICT_FAIL, MMP_REASON_EXACT_MISMATCH},
    {"mut_host_edge_tile", 37, 24, 32, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_UNWRITTEN},
    /* exact, not onehot: onehot outputs are mostly zero, and swapping two zeros changes nothing */
    {"mut_host_swap_fragment", 32, 32, 16, 0, MMP_DIST_EXACT, MMP_VERDICT_FAIL, MMP_REASON_EXACT_MISMATCH},
    {"mut_host_write_past", 24, 24, 16, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_GUARD},
    {"mut_host_write_past", 24, 24, 16, 8, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_GUARD},
    /* fp16 accumulation: exact inputs at large K (partial sums beyond 2^11) and uniform at
     * K = 512. (On mean-zero data the deterministic bound, ~K^2 u, outgrows fp16's random-walk
     * error for K >~ 2000: there the exact distribution is the one that catches it.) */
    {"mut_host_fp16_acc", 8, 8, 4096, 0, MMP_DIST_EXACT, MMP_VERDICT_FAIL, MMP_REASON_EXACT_MISMATCH},
    {"mut_host_fp16_acc", 16, 16, 512, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_BOUND_EXCEEDED},
    {"mut_host_nan_clamp", 16, 16, 32, 0, MMP_DIST_SPECIAL, MMP_VERDICT_FAIL, MMP_REASON_NAN_MISMATCH},
    {"mut_host_wrong_ld", 24, 24, 32, 8, MMP_DIST_EXACT, MMP_VERDICT_FAIL, MMP_REASON_EXACT_MISMATCH},
    {"mut_host_scribble", 16, 16, 16, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_INPUT_MODIFIED},
    {"mut_host_hang", 8, 8, 8, 0, MMP_DIST_UNIFORM, MMP_VERDICT_ERROR, MMP_REASON_TIMEOUT},
    {"mut_host_crash", 8, 8, 8, 0, MMP_DIST_UNIFORM, MMP_VERDICT_ERROR, MMP_REASON_CRASH},
    {"mut_host_nondet", 16, 16, 16, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_NONDETERMINISTIC},
    {"mut_host_write_before", 16, 16, 16, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_GUARD},
    {"mut_host_wild_write", 16, 16, 16, 0, MMP_DIST_UNIFORM, MMP_VERDICT_ERROR, MMP_REASON_CRASH},
    /* the tolerance mutants, each against its tensor-core-model control (kernels/host_tcm.c) */
    {"mut_host_rz_out", 64, 64, 128, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_BIASED_ROUNDING},
    {"mut_host_flush_sub", 32, 32, 1, 0, MMP_DIST_WIDE, MMP_VERDICT_FAIL, MMP_REASON_FLUSHED_SUBNORMAL},
    {"mut_host_narrow_low", 64, 64, 128, 0, MMP_DIST_UNIFORM, MMP_VERDICT_FAIL, MMP_REASON_BOUND_EXCEEDED},
};
#define N_TABLE (sizeof table / sizeof table[0])

/* The correct kernel of a mutant's shape: the tolerance mutants run the tensor-core model
 * (kernels/host_tcm.c) and are compared with its faithful run; the others with host_f16_f32. */
static const char *control_of(const char *mutant)
{
    if (!strcmp(mutant, "mut_host_rz_out")) return "host_tcm_f16_f32_h";
    if (!strcmp(mutant, "mut_host_flush_sub")) return "host_tcm_bf16_f32";
    if (!strcmp(mutant, "mut_host_narrow_low")) return "host_tcm_f16_f16";
    return "host_f16_f32";
}

static volatile int *stop_flag;
static void on_alarm(int sig)
{
    (void)sig;
    *stop_flag = 1;
}

static void make_case(mmp_case *c, const mmp_kernel_desc *k, const mutant_case *t)
{
    mmp_case_init(c, k, t->m, t->n, t->k, t->dist, mmp_check_seed);
    if (t->ld_extra) {
        c->lda = t->k + t->ld_extra;
        c->ldb = t->n + t->ld_extra;
        c->ldd = t->n + t->ld_extra;
    }
    mmp_case_finish(c);
}

START_TEST(test_mutant_caught)
{
    const mutant_case *t = &table[_i];
    const mmp_kernel_desc *mut = mmp_registry_find(t->mutant, MMP_REGISTRY_ALL);
    const mmp_kernel_desc *good = mmp_registry_find(control_of(t->mutant), MMP_REGISTRY_ALL);
    ck_assert_ptr_nonnull(mut);
    ck_assert_ptr_nonnull(good);
    mmp_case c[2];
    make_case(&c[0], good, t);
    make_case(&c[1], mut, t);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.timeout_s = 1;   /* the hang */
    mmp_case_result r[2];
    ck_assert_int_eq(mmp_runner_run(r, c, 2, &o, NULL, NULL), MMP_STATUS_OK);
    char why[128];
    printf("%-24s %-50s %s %s: %s\n", t->mutant, r[1].id, mmp_verdict_name(r[1].verdict),
           mmp_reason_format(why, sizeof why, r[1].reasons), r[1].message);
    ck_assert_msg(r[0].verdict == MMP_VERDICT_PASS, "correct kernel on %s: %s (%s)", r[0].id,
                  mmp_verdict_name(r[0].verdict), r[0].message);
    ck_assert_msg(r[1].verdict == t->verdict, "%s: verdict %s, want %s (%s)", r[1].id,
                  mmp_verdict_name(r[1].verdict), mmp_verdict_name(t->verdict), r[1].message);
    ck_assert_msg(r[1].reasons & t->reason, "%s: reasons %s lack %s", r[1].id, why, mmp_reason_name(t->reason));
    /* the right reason, not noise: failures carry no unrelated FAIL reason */
    uint32_t fail_bits = MMP_REASON_UNWRITTEN | MMP_REASON_GUARD | MMP_REASON_INPUT_MODIFIED |
                         MMP_REASON_EXACT_MISMATCH | MMP_REASON_BOUND_EXCEEDED | MMP_REASON_NAN_MISMATCH |
                         MMP_REASON_NONDETERMINISTIC | MMP_REASON_BIASED_ROUNDING | MMP_REASON_FLUSHED_SUBNORMAL;
    if (t->verdict == MMP_VERDICT_FAIL && t->reason != MMP_REASON_INPUT_MODIFIED)
        ck_assert_msg((r[1].reasons & fail_bits) == t->reason, "%s: extra reasons in %s", r[1].id, why);
}
END_TEST

/* The built-in suites: smoke + edge catch each tolerance mutant with its reason (and no other
 * FAIL reason), and its control PASSes every case of both. The flush mutant needs subnormal
 * results, i.e. wide data at small K: while the edge suite has no wide case, the K = 1 wide
 * case of the table above stands in for it (said on stdout). */
/* reason: what at least one case must say; allowed: the FAIL reasons any case may carry (a
 * narrow accumulator also misses exact sums: exact-mismatch on the exact distribution) */
static const struct { const char *mutant; uint32_t reason, allowed; } suite_mutants[] = {
    {"mut_host_rz_out", MMP_REASON_BIASED_ROUNDING, MMP_REASON_BIASED_ROUNDING},
    {"mut_host_flush_sub", MMP_REASON_FLUSHED_SUBNORMAL, MMP_REASON_FLUSHED_SUBNORMAL},
    {"mut_host_narrow_low", MMP_REASON_BOUND_EXCEEDED, MMP_REASON_BOUND_EXCEEDED | MMP_REASON_EXACT_MISMATCH},
};

START_TEST(test_suites_catch)
{
    const char *names[2] = {suite_mutants[_i].mutant, control_of(suite_mutants[_i].mutant)};
    uint32_t want = suite_mutants[_i].reason, allowed = suite_mutants[_i].allowed;
    for (int who = 0; who < 2; who++) {
        const mmp_kernel_desc *k = mmp_registry_find(names[who], MMP_REGISTRY_ALL);
        ck_assert_ptr_nonnull(k);
        const mmp_kernel_desc *list[1] = {k};
        mmp_case *sm, *ed;
        size_t ns, ne;
        ck_assert_int_eq(mmp_cases_build(&sm, &ns, "smoke", list, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_cases_build(&ed, &ne, "edge", list, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
        mmp_case *all = calloc(ns + ne, sizeof *all);
        memcpy(all, sm, ns * sizeof *all);
        memcpy(all + ns, ed, ne * sizeof *all);
        int has_wide = 0;
        for (size_t i = 0; i < ns + ne; i++) has_wide |= all[i].dist == MMP_DIST_WIDE && all[i].k <= 3;
        mmp_runner_options o;
        mmp_runner_options_init(&o);
        mmp_case_result *r = calloc(ns + ne, sizeof *r);
        ck_assert_int_eq(mmp_runner_run(r, all, ns + ne, &o, NULL, NULL), MMP_STATUS_OK);
        size_t caught = 0;
        uint32_t fail_bits = MMP_REASON_UNWRITTEN | MMP_REASON_GUARD | MMP_REASON_INPUT_MODIFIED |
                             MMP_REASON_EXACT_MISMATCH | MMP_REASON_BOUND_EXCEEDED | MMP_REASON_NAN_MISMATCH |
                             MMP_REASON_NONDETERMINISTIC | MMP_REASON_BIASED_ROUNDING | MMP_REASON_FLUSHED_SUBNORMAL;
        for (size_t i = 0; i < ns + ne; i++) {
            if (who == 1) {
                ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS || r[i].verdict == MMP_VERDICT_SKIP, "control %s: %s %s",
                              r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
                continue;
            }
            if (r[i].verdict != MMP_VERDICT_FAIL) continue;
            char why[128];
            ck_assert_msg((r[i].reasons & fail_bits & ~allowed) == 0, "%s: reasons %s beyond %s (%s)", r[i].id,
                          mmp_reason_format(why, sizeof why, r[i].reasons), mmp_reason_name(want), r[i].message);
            if (r[i].reasons & want) caught++;
        }
        if (who == 0) {
            printf("%-22s smoke+edge: %zu of %zu cases FAIL %s\n", names[0], caught, ns + ne, mmp_reason_name(want));
            if (want == MMP_REASON_FLUSHED_SUBNORMAL && !has_wide)
                printf("%-22s the edge suite has no wide case at K <= 3 yet: the table's wide K = 1 case stands in\n",
                       names[0]);
            else
                ck_assert_msg(caught > 0, "%s: smoke+edge never catch it", names[0]);
        }
        free(r);
        free(all);
        mmp_cases_free(sm);
        mmp_cases_free(ed);
    }
}
END_TEST

/* A run goes on after a crash and a hang: the next kernel's cases still PASS, with the next
 * kernel's child preforked (_i = 1, the default) or not (_i = 0); no child is left behind. */
START_TEST(test_run_continues)
{
    const mmp_kernel_desc *crash = mmp_registry_find("mut_host_crash", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *hang = mmp_registry_find("mut_host_hang", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *good = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    mmp_case c[6];
    mmp_case_init(&c[0], crash, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[1], crash, 9, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[2], good, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[3], hang, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[4], good, 9, 9, 9, MMP_DIST_EXACT, 1);
    mmp_case_init(&c[5], good, 7, 5, 3, MMP_DIST_NORMAL, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.prefork = _i;
    o.timeout_s = 1;
    mmp_case_result r[6];
    ck_assert_int_eq(mmp_runner_run(r, c, 6, &o, NULL, NULL), MMP_STATUS_OK);
    ck_assert_int_eq(r[0].verdict, MMP_VERDICT_ERROR);
    ck_assert_int_eq(r[1].verdict, MMP_VERDICT_ERROR);   /* restarted child, crashed again */
    ck_assert_int_eq(r[2].verdict, MMP_VERDICT_PASS);
    ck_assert_msg(r[3].verdict == MMP_VERDICT_ERROR && (r[3].reasons & MMP_REASON_TIMEOUT), "%s", r[3].message);
    ck_assert_int_eq(r[4].verdict, MMP_VERDICT_PASS);
    ck_assert_int_eq(r[5].verdict, MMP_VERDICT_PASS);
    for (int i = 0; i < 6; i++) ck_assert_str_eq(r[i].id, c[i].id);
    /* every child (the preforked ones included) was reaped */
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}
END_TEST

/* A stop request while the next kernel's child waits: the run ends, the waiting child is gone. */
START_TEST(test_stop_with_preforked_child)
{
    const mmp_kernel_desc *hang = mmp_registry_find("mut_host_hang", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *good = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    mmp_case c[2];
    mmp_case_init(&c[0], hang, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[1], good, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    static volatile int stop;
    stop = 0;
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.timeout_s = 30;
    o.stop = &stop;
    signal(SIGALRM, on_alarm);
    stop_flag = &stop;
    alarm(1);
    mmp_case_result r[2];
    ck_assert_int_eq(mmp_runner_run(r, c, 2, &o, NULL, NULL), MMP_STATUS_OK);
    ck_assert(r[0].reasons & MMP_REASON_INTERRUPTED);
    ck_assert(r[1].reasons & MMP_REASON_INTERRUPTED);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}
END_TEST

/* The built-in suites catch the mutants planted for their case classes: smoke + edge on each
 * gives at least one FAIL in the class that is meant to catch it (catch: a glob on the ID), and
 * every case it does not PASS is a FAIL for one of the bug's reasons. */
typedef struct {
    const char *mutant;
    const char *catch;
    uint32_t reasons;
} builtin_catch;

#define VALUE_REASONS (MMP_REASON_EXACT_MISMATCH | MMP_REASON_BOUND_EXCEEDED)
static const builtin_catch builtin_table[] = {
    {"mut_host_m_residue", "*/[2-5][0-9][0-9]x8x16/exact/*", VALUE_REASONS},   /* the residue sweep */
    {"mut_host_ldb_is_ldd", "*/ld*", VALUE_REASONS},                          /* B or D padded alone */
    {"mut_host_c_col_packed", "*/row.row.col/ab*", VALUE_REASONS},            /* alpha/beta, C col */
    {"mut_host_edge_nan", "*/special/*", MMP_REASON_NAN_MISMATCH},            /* special, partial tiles */
};
#define N_BUILTIN (sizeof builtin_table / sizeof builtin_table[0])

/* smoke + edge on one kernel: *res (n of them) malloc'ed, with the cases' IDs. */
static size_t run_builtin(mmp_case_result **res, const char *kernel)
{
    const mmp_kernel_desc *k = mmp_registry_find(kernel, MMP_REGISTRY_ALL);
    ck_assert_msg(k != NULL, "%s is not registered", kernel);
    mmp_case *smoke, *edge;
    size_t ns, ne;
    ck_assert_int_eq(mmp_cases_build(&smoke, &ns, "smoke", &k, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_cases_build(&edge, &ne, "edge", &k, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    mmp_case *all = malloc((ns + ne) * sizeof *all);
    *res = calloc(ns + ne, sizeof **res);
    ck_assert(all && *res);
    memcpy(all, smoke, ns * sizeof *all);
    memcpy(all + ns, edge, ne * sizeof *all);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    ck_assert_int_eq(mmp_runner_run(*res, all, ns + ne, &o, NULL, NULL), MMP_STATUS_OK);
    free(all);
    mmp_cases_free(smoke);
    mmp_cases_free(edge);
    return ns + ne;
}

START_TEST(test_builtin_catches)
{
    const builtin_catch *t = &builtin_table[_i];
    mmp_case_result *r;
    size_t n = run_builtin(&r, t->mutant);
    size_t caught = 0, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].verdict == MMP_VERDICT_PASS) continue;
        char why[128];
        printf("%-24s %-60s %s %s: %s\n", t->mutant, r[i].id, mmp_verdict_name(r[i].verdict),
               mmp_reason_format(why, sizeof why, r[i].reasons), r[i].message);
        int right = r[i].verdict == MMP_VERDICT_FAIL && r[i].reasons && !(r[i].reasons & ~t->reasons);
        if (!right) wrong++;
        else if (fnmatch(t->catch, r[i].id, 0) == 0) caught++;
    }
    ck_assert_msg(caught > 0, "%s: no case matching %s caught it (%zu cases)", t->mutant, t->catch, n);
    ck_assert_msg(wrong == 0, "%s: %zu cases not PASS without the bug's reason", t->mutant, wrong);
    free(r);
}
END_TEST

/* The mutants' twin without a bug passes every case of smoke + edge (no false positive). */
START_TEST(test_builtin_control_passes)
{
    mmp_case_result *r;
    size_t n = run_builtin(&r, "mut_host_control");
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].verdict != MMP_VERDICT_PASS) {
            printf("mut_host_control %s %s: %s\n", r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
            bad++;
        }
    ck_assert_msg(bad == 0, "the control failed %zu of %zu cases", bad, n);
    free(r);
}
END_TEST

static Suite *mutants_host_suite(void)
{
    Suite *s = suite_create("mutants_host");
    TCase *tc = tcase_create("caught");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_mutant_caught, 0, N_TABLE);
    tcase_add_loop_test(tc, test_suites_catch, 0, sizeof suite_mutants / sizeof suite_mutants[0]);
    tcase_add_loop_test(tc, test_run_continues, 0, 2);
    tcase_add_test(tc, test_stop_with_preforked_child);
    suite_add_tcase(s, tc);
    TCase *tb = tcase_create("builtin");
    tcase_set_timeout(tb, 300);
    tcase_add_loop_test(tb, test_builtin_catches, 0, N_BUILTIN);
    tcase_add_test(tb, test_builtin_control_passes);
    suite_add_tcase(s, tb);
    return s;
}

MMP_CHECK_MAIN(mutants_host_suite)
