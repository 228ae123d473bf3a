/* check_gpu_mutants.c — every CUDA mutant (kernels/cuda_mutants.cu) is caught by the runner,
 * with the right reason, and the correct control kernel passes; the built-in smoke + edge catch
 * the mutants planted for edge's case classes, and the controls pass all of them.
 *
 * Cases and expectations come from one file, kernels/cuda_mutants.suite ("#expect KERNEL
 * VERDICT REASON|..." lines plus the runner's suite-file case lines); MMP_MUTANT_SUITE overrides
 * its path. Each mutant is one loop iteration: its cases run through mmp_runner_run, which forks
 * a child per kernel, so this process never initialises CUDA. The race mutant may slip past a
 * plain run (the race need not strike); then compute-sanitizer racecheck must name it.
 * Without a CUDA device the program prints why and exits 77.
 *
 *   build/suites/check_gpu_mutants            (ctest -L gpu)
 */
#define MMP_CHECK_GPU
#include "tests/check_main.h"

#include <fnmatch.h>
#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"

#define CASE_TIMEOUT_S 10.0   /* the hang mutant's cases end here; every other case takes < 1 s */
#define MAX_EXPECT 32

typedef struct {
    char kernel[96];
    mmp_verdict verdict;
    uint32_t reasons;         /* any of these must be present (0: none required) */
    char reasons_text[128];
} expectation;

static expectation expects[MAX_EXPECT];
static int n_expects;
static char load_error[512];

static const char *suite_path(void)
{
    const char *p = getenv("MMP_MUTANT_SUITE");
    return p && *p ? p : MMP_SOURCE_DIR "/kernels/cuda_mutants.suite";
}

/* Reads the #expect lines (in the parent, before any test: no CUDA involved). */
static void load_expectations(void)
{
    FILE *f = fopen(suite_path(), "r");
    if (!f) {
        snprintf(load_error, sizeof load_error, "cannot open %s", suite_path());
        return;
    }
    char line[512];
    int no = 0;
    while (fgets(line, sizeof line, f) && n_expects < MAX_EXPECT) {
        no++;
        if (strncmp(line, "#expect ", 8) != 0) continue;
        expectation *e = &expects[n_expects];
        char verdict[16];
        if (sscanf(line + 8, "%95s %15s %127s", e->kernel, verdict, e->reasons_text) != 3 ||
            mmp_verdict_from_name(&e->verdict, verdict) != MMP_STATUS_OK) {
            snprintf(load_error, sizeof load_error, "%s:%d: bad #expect line", suite_path(), no);
            break;
        }
        char list[128];
        snprintf(list, sizeof list, "%s", e->reasons_text);
        for (char *p = list; *p; p++)
            if (*p == '|') *p = ',';
        e->reasons = 0;
        if (strcmp(list, "-") != 0 && mmp_reason_parse(&e->reasons, list) != MMP_STATUS_OK) {
            snprintf(load_error, sizeof load_error, "%s:%d: unknown reason in '%s'", suite_path(), no, list);
            break;
        }
        n_expects++;
    }
    fclose(f);
}

/* The cases of one kernel from the suite file (*cases malloc'ed). The file names every mutant,
 * so it is parsed against the whole family and filtered on the case ID. */
static void cases_of(mmp_case **cases, size_t *n, const char *kernel)
{
    ck_assert_msg(mmp_registry_find(kernel, MMP_REGISTRY_MUTANTS) != NULL,
                  "kernel %s is not registered (mutant family missing?)", kernel);
    size_t nk;
    const mmp_kernel_desc *t = mmp_kernels_cuda_mutants(&nk);
    const mmp_kernel_desc *family[MAX_EXPECT];
    for (size_t i = 0; i < nk && i < MAX_EXPECT; i++) family[i] = &t[i];
    char filter[128];
    snprintf(filter, sizeof filter, "%s/*", kernel);
    mmp_status st = mmp_suitefile_parse(cases, n, suite_path(), family, nk < MAX_EXPECT ? nk : MAX_EXPECT,
                                        filter, mmp_check_seed);
    ck_assert_msg(st == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(*n > 0, "%s has no case for %s", suite_path(), kernel);
}

static void run_cases(mmp_case_result *res, const mmp_case *cases, size_t n)
{
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.timeout_s = CASE_TIMEOUT_S;
    mmp_status st = mmp_runner_run(res, cases, n, &o, NULL, NULL);
    ck_assert_msg(st == MMP_STATUS_OK, "runner: %s", mmp_error_last());
}

static void print_result(const mmp_case_result *r)
{
    char why[256];
    mmp_reason_format(why, sizeof why, r->reasons);
    printf("  %-5s %-60s [%s] %s\n", mmp_verdict_name(r->verdict), r->id, why, r->message);
}

static int caught(const mmp_case_result *r, const expectation *e)
{
    return r->verdict == e->verdict && (e->reasons == 0 || (r->reasons & e->reasons) != 0);
}

/* mmaprobe next to the test binary's folder (build/suites/check_* -> build/mmaprobe). */
static int self_exe(char *path, size_t size)
{
    char me[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", me, sizeof me - 1);
    if (len <= 0) return 0;
    me[len] = '\0';
    char *slash = strrchr(me, '/');
    if (!slash) return 0;
    *slash = '\0';
    slash = strrchr(me, '/');
    if (!slash) return 0;
    *slash = '\0';
    snprintf(path, size, "%s/mmaprobe", me);
    return access(path, X_OK) == 0;
}

/* A race the plain run missed: compute-sanitizer racecheck, run on mmaprobe validate for that
 * one case (in-process: --no-isolate), must report hazards. 1 = caught. */
static int caught_by_racecheck(const mmp_case_result *r)
{
    char exe[PATH_MAX + 16], seed[32], out[64];
    if (!self_exe(exe, sizeof exe)) {
        printf("  racecheck: mmaprobe not found next to the test binary\n");
        return 0;
    }
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)mmp_check_seed);
    snprintf(out, sizeof out, "/tmp/mmp-racecheck-%d.json", (int)getpid());
    char *argv[] = {"timeout", "300", "compute-sanitizer", "--tool", "racecheck",
                    "--target-processes", "all", "--error-exitcode", "99", exe, "validate",
                    "--mutants", "--no-isolate", "--suite", (char *)suite_path(), "--seed", seed,
                    "--filter", (char *)r->id, "-o", out, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return 0;
    unlink(out);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* 99: racecheck reported hazards; 1: the race struck this time and validate FAILed it. */
    printf("  racecheck on %s: exit %d (%s)\n", r->id, rc,
           rc == 99 ? "hazards reported" : rc == 1 ? "validate failed the case" :
           rc == 127 ? "compute-sanitizer or timeout missing" : "not caught");
    return rc == 99 || rc == 1;
}

START_TEST(test_mutant_caught)
{
    ck_assert_msg(load_error[0] == '\0', "%s", load_error);
    const expectation *e = &expects[_i];
    mmp_case *cases;
    size_t n;
    cases_of(&cases, &n, e->kernel);
    mmp_case_result *res = calloc(n, sizeof *res);
    ck_assert(res != NULL);
    run_cases(res, cases, n);
    printf("%s: expect %s %s\n", e->kernel, mmp_verdict_name(e->verdict), e->reasons_text);
    int missed = 0;
    for (size_t i = 0; i < n; i++) {
        print_result(&res[i]);
        if (caught(&res[i], e)) continue;
        /* The race need not strike in a plain run; the sanitizer must then see it. */
        if ((e->reasons & MMP_REASON_SANITIZER) && res[i].verdict == MMP_VERDICT_PASS &&
            caught_by_racecheck(&res[i]))
            continue;
        missed++;
    }
    fflush(stdout);
    ck_assert_msg(missed == 0, "%s: %d of %zu cases not answered %s with %s", e->kernel, missed, n,
                  mmp_verdict_name(e->verdict), e->reasons_text);
    free(res);
    mmp_cases_free(cases);
}
END_TEST

/* A sticky CUDA error in one kernel's child costs that kernel only: the next kernel passes. */
START_TEST(test_run_continues_after_illegal_address)
{
    mmp_case *bad, *good;
    size_t nb, ng;
    cases_of(&bad, &nb, "cuda_mut_illegal_address");
    cases_of(&good, &ng, "cuda_mut_base");
    mmp_case *all = malloc((nb + ng) * sizeof *all);
    mmp_case_result *res = calloc(nb + ng, sizeof *res);
    ck_assert(all && res);
    memcpy(all, bad, nb * sizeof *all);
    memcpy(all + nb, good, ng * sizeof *all);
    run_cases(res, all, nb + ng);
    for (size_t i = 0; i < nb + ng; i++) print_result(&res[i]);
    fflush(stdout);
    for (size_t i = 0; i < nb; i++)
        ck_assert_msg(res[i].verdict == MMP_VERDICT_ERROR, "%s: %s", res[i].id, res[i].message);
    for (size_t i = nb; i < nb + ng; i++)
        ck_assert_msg(res[i].verdict == MMP_VERDICT_PASS, "%s after the illegal address: %s %s",
                      res[i].id, mmp_verdict_name(res[i].verdict), res[i].message);
    free(all);
    free(res);
    mmp_cases_free(bad);
    mmp_cases_free(good);
}
END_TEST

/* The built-in smoke + edge catch the mutants planted for edge's case classes: at least one
 * FAIL in the class meant to catch it (a glob on the ID), every case it does not PASS a FAIL for
 * one of the bug's reasons; the controls of the same shapes PASS every case. */
typedef struct {
    const char *kernel;
    const char *catch;        /* NULL: a control, every case must PASS */
    uint32_t reasons;
} builtin_expect;

#define VALUE_REASONS (MMP_REASON_EXACT_MISMATCH | MMP_REASON_BOUND_EXCEEDED)
static const builtin_expect builtin_table[] = {
    {"cuda_mut_base", NULL, 0},
    {"cuda_mut_base_cd", NULL, 0},
    {"cuda_mut_m_residue", "*/[2-5][0-9][0-9]x8x16/exact/*", VALUE_REASONS},   /* the residue sweep */
    {"cuda_mut_ldb_is_ldd", "*/ld*", VALUE_REASONS},                          /* B or D padded alone */
    {"cuda_mut_c_col_packed", "*/row.row.col/ab*", VALUE_REASONS},            /* alpha/beta, C col */
    {"cuda_mut_edge_nan", "*/special/*", MMP_REASON_NAN_MISMATCH},            /* special, partial tiles */
};
#define N_BUILTIN (sizeof builtin_table / sizeof builtin_table[0])

START_TEST(test_builtin_suites)
{
    const builtin_expect *t = &builtin_table[_i];
    const mmp_kernel_desc *k = mmp_registry_find(t->kernel, MMP_REGISTRY_MUTANTS);
    ck_assert_msg(k != NULL, "kernel %s is not registered", t->kernel);
    mmp_case *smoke, *edge;
    size_t ns, ne;
    ck_assert_int_eq(mmp_cases_build(&smoke, &ns, "smoke", &k, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_cases_build(&edge, &ne, "edge", &k, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    mmp_case *all = malloc((ns + ne) * sizeof *all);
    mmp_case_result *res = calloc(ns + ne, sizeof *res);
    ck_assert(all && res);
    memcpy(all, smoke, ns * sizeof *all);
    memcpy(all + ns, edge, ne * sizeof *all);
    run_cases(res, all, ns + ne);
    size_t caught = 0, wrong = 0;
    for (size_t i = 0; i < ns + ne; i++) {
        if (res[i].verdict == MMP_VERDICT_PASS) continue;
        print_result(&res[i]);
        int right = t->catch && res[i].verdict == MMP_VERDICT_FAIL && res[i].reasons &&
                    !(res[i].reasons & ~t->reasons);
        if (!right) wrong++;
        else if (fnmatch(t->catch, res[i].id, 0) == 0) caught++;
    }
    printf("%s: smoke + edge, %zu cases, %zu caught in %s, %zu wrong\n", t->kernel, ns + ne, caught,
           t->catch ? t->catch : "-", wrong);
    fflush(stdout);
    if (t->catch) ck_assert_msg(caught > 0, "%s: no case matching %s caught it", t->kernel, t->catch);
    ck_assert_msg(wrong == 0, "%s: %zu cases neither PASS nor FAIL for the bug's reason", t->kernel, wrong);
    free(all);
    free(res);
    mmp_cases_free(smoke);
    mmp_cases_free(edge);
}
END_TEST

/* Every mutant in the family has an expectation (a new mutant cannot go unchecked). */
START_TEST(test_every_mutant_expected)
{
    ck_assert_msg(load_error[0] == '\0', "%s", load_error);
    size_t n;
    const mmp_kernel_desc *t = mmp_kernels_cuda_mutants(&n);
    ck_assert_msg(n > 0, "the cuda_mutants family is empty (built without CUDA?)");
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < n_expects; j++) found |= !strcmp(expects[j].kernel, t[i].name);
        ck_assert_msg(found, "%s has no #expect line in %s", t[i].name, suite_path());
    }
}
END_TEST

static Suite *gpu_mutants_suite(void)
{
    load_expectations();
    Suite *s = suite_create("gpu_mutants");
    TCase *tc = tcase_create("caught");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_every_mutant_expected);
    tcase_add_loop_test(tc, test_mutant_caught, 0, n_expects > 0 ? n_expects : 1);
    tcase_add_test(tc, test_run_continues_after_illegal_address);
    tcase_add_loop_test(tc, test_builtin_suites, 0, N_BUILTIN);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(gpu_mutants_suite)
