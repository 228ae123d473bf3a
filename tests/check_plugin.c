/* check_plugin.c — loading kernels from plugin libraries (plugin.c) with the fixture libraries
 * of suites/plugin_fixtures/fixture.c: the good one loads and PASSes smoke; every bad one is
 * refused with MMP_STATUS_INVALID (exit 2) and a one-line message naming the problem; crashing
 * and hanging plugins take down only the vetting child. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/runner.h"
#include "tests/check_main.h"

#ifndef MMP_PLUGIN_FIXTURES
#error "MMP_PLUGIN_FIXTURES (directory of the fixture plugins) must be defined by CMake"
#endif

static void fixture(char *path, size_t size, const char *variant)
{
    snprintf(path, size, "%s/fix_%s.so", MMP_PLUGIN_FIXTURES, variant);
}

typedef struct {
    const char *variant;
    const char *says;
    const char *or_says;   /* alternative wording (e.g. under ASan, a crash is an exit) */
} bad_plugin;

static const bad_plugin bad[] = {
    {"no_symbol", "no symbol mmp_plugin_kernels", NULL},
    {"abi", "ABI version 99, this mmaprobe speaks 1.3", NULL},
    {"desc_abi", "descriptor ABI version 2, this mmaprobe speaks 1.3", NULL},
    {"null_table", "NULL kernel table", NULL},
    {"zero_count", "kernel count must be 1..1024", NULL},
    {"null_entry", "NULL entry point (run)", NULL},
    {"null_name", "kernel name must be 1-63 of [a-z0-9_]", NULL},
    {"bad_name", "kernel name must be 1-63 of [a-z0-9_]", NULL},
    {"bad_format", "a_format 99 out of range", NULL},
    {"bad_layout", "layouts_a = 0x4 is not MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL or MMP_LAYOUTS_ANY", NULL},
    {"layout_value", "layouts_b = 1 is a layout value (MMP_LAYOUT_COL), not a mask: use MMP_LAYOUTS_ROW", NULL},
    {"bad_multiple", "shape multiples must be in 1..4096", NULL},
    {"int8_fp16", "int32 accumulation with fp16 output is not supported", NULL},
    {"bad_align", "ld_align_bytes 24 must be 0 or a power of two up to 4096", NULL},
    {"crash_ctor", "crashed while loading (signal 11", "loading process failed"},
    {"crash_kernels", "crashed while loading (signal 11", "loading process failed"},
    {"hang_ctor", "still loading after 1 s", NULL},
    {"does_not_exist", "cannot load", NULL},
};

START_TEST(test_bad_plugin)
{
    const bad_plugin *b = &bad[_i];
    char path[4096];
    fixture(path, sizeof path, b->variant);
    setenv("MMP_PLUGIN_LOAD_TIMEOUT", "1", 1);
    const mmp_kernel_desc *k = (const mmp_kernel_desc *)1;
    size_t n = 7;
    mmp_status st = mmp_plugin_load(&k, &n, path);
    const char *msg = mmp_error_last();
    printf("%-14s -> %s\n", b->variant, msg);
    ck_assert_int_eq(st, MMP_STATUS_INVALID);
    ck_assert_int_eq(mmp_status_exit_code(st), MMP_EXIT_USAGE);
    ck_assert_ptr_null(k);
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(strstr(msg, b->says) || (b->or_says && strstr(msg, b->or_says)), "'%s' should say '%s'", msg, b->says);
    ck_assert_msg(strstr(msg, path), "'%s' should name the library", msg);
    ck_assert(!strchr(msg, '\n'));
}
END_TEST

START_TEST(test_not_a_library)
{
    char path[] = "/tmp/check_plugin.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "not ELF\n", 8), 8);
    close(fd);
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_int_eq(mmp_plugin_load(&k, &n, path), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "cannot load"));
    unlink(path);
}
END_TEST

/* A plugin built against ABI 1.0 (shorter rows, version 1) still loads; the fields 1.1 appended
 * read 0 (nearest output rounding, subnormals kept). */
START_TEST(test_abi10_plugin_loads)
{
    char path[4096];
    fixture(path, sizeof path, "abi10");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(k[0].name, "fix_abi10_a");
    ck_assert_str_eq(k[1].name, "fix_abi10_b");
    ck_assert_ptr_nonnull(k[1].run);
    ck_assert_int_eq(k[1].out_round, 0);
    ck_assert_int_eq(k[1].flush_subnormals, 0);
    ck_assert_uint_eq(k[1].abi_version, MMP_KERNEL_ABI_VERSION);
    ck_assert_uint_eq(k[0].layouts_a, MMP_LAYOUTS_ROW);   /* 1.0's untagged masks, tagged */
    ck_assert_uint_eq(k[0].layouts_b, MMP_LAYOUTS_ANY);
    /* a 1.1 table (full rows, untagged masks) loads too, masks tagged */
    fixture(path, sizeof path, "abi11");
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(k[0].name, "fix_abi11_f32");
    ck_assert_uint_eq(k[0].layouts_b, MMP_LAYOUTS_ROW);
    ck_assert_uint_eq(k[0].abi_version, MMP_KERNEL_ABI_VERSION);
}
END_TEST

/* A 1.2 table (rows without the fields 1.3 appended, tagged masks) still loads; the appended
 * fields read 0: no constraints, no launch_status. */
START_TEST(test_abi12_plugin_loads)
{
    char path[4096];
    fixture(path, sizeof path, "abi12");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(k[0].name, "fix_abi12_a");
    ck_assert_str_eq(k[1].name, "fix_abi12_b");
    ck_assert_uint_eq(k[1].abi_version, MMP_KERNEL_ABI_VERSION);
    ck_assert_uint_eq(k[1].layouts_b, MMP_LAYOUTS_COL);
    ck_assert_uint_eq(k[0].layouts_b, MMP_LAYOUTS_ANY);
    ck_assert_ptr_nonnull(k[1].run);
    ck_assert_int_eq(k[1].min_k, 0);
    ck_assert_int_eq(k[1].ld_align_bytes, 0);
    ck_assert_int_eq(k[1].tight_d, 0);
    ck_assert_ptr_null(k[1].launch_status);
    /* and it runs: a case of the second row PASSes */
    mmp_case c;
    mmp_case_init(&c, &k[1], 16, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: %s", mmp_verdict_name(r.verdict), r.message);
}
END_TEST

/* The constraints of ABI 1.3: a case breaking one is a SKIP naming it, and run() is not called
 * (the fixture's run() returns an error for such a case, which would be ERROR launch); a case
 * keeping them all PASSes. */
typedef struct {
    int64_t m, n, k, lda, ldb, ldd;
    const char *says;              /* NULL: PASS */
} constraint_case;
static const constraint_case constraint_cases[] = {
    {16, 16, 17, 0, 0, 0, "k=17 < min_k 64"},
    {16, 16, 63, 0, 0, 0, "k=63 < min_k 64"},
    {16, 16, 64, 0, 17, 0, "ldb 17 elements is not 16-byte aligned"},
    {16, 16, 64, 66, 0, 0, "lda 66 elements is not 16-byte aligned"},
    {16, 16, 64, 0, 0, 20, "ldd 20 is not tight (16)"},
    {16, 16, 64, 0, 0, 0, NULL},
    {16, 16, 64, 68, 20, 0, NULL},
};

START_TEST(test_constraints_skip)
{
    const constraint_case *t = &constraint_cases[_i];
    char path[4096];
    fixture(path, sizeof path, "constraints");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(k[0].min_k, 64);
    mmp_case c;
    mmp_case_init(&c, &k[0], t->m, t->n, t->k, MMP_DIST_UNIFORM, 1);
    if (t->lda) c.lda = t->lda;
    if (t->ldb) c.ldb = t->ldb;
    if (t->ldd) c.ldd = t->ldd;
    mmp_case_finish(&c);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%s: %s %s\n", r.id, mmp_verdict_name(r.verdict), r.message);
    if (!t->says) {
        ck_assert_msg(r.verdict == MMP_VERDICT_PASS, "%s: %s %s", r.id, mmp_verdict_name(r.verdict), r.message);
        return;
    }
    ck_assert_msg(r.verdict == MMP_VERDICT_SKIP, "%s: %s %s", r.id, mmp_verdict_name(r.verdict), r.message);
    ck_assert(r.reasons & MMP_REASON_UNSUPPORTED);
    ck_assert_msg(strstr(r.message, t->says), "'%s' should say '%s'", r.message, t->says);
}
END_TEST

/* A launch that failed in the plugin's own runtime: its launch_status hook says so and the case
 * is ERROR launch with the hook's message (one line). The twin without the hook is what
 * mmaprobe could see before: FAIL unwritten. */
START_TEST(test_launch_status_error)
{
    char path[4096];
    fixture(path, sizeof path, "launch_status");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_ptr_nonnull(k[0].launch_status);
    mmp_case c;
    mmp_case_init(&c, &k[0], 16, 16, 16, MMP_DIST_UNIFORM, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%s: %s %s\n", r.id, mmp_verdict_name(r.verdict), r.message);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_ERROR);
    ck_assert(r.reasons & MMP_REASON_LAUNCH);
    ck_assert(!(r.reasons & MMP_REASON_UNWRITTEN));
    ck_assert_msg(strstr(r.message, "launch: cudaErrorInvalidConfiguration: invalid configuration argument"), "%s",
                  r.message);
    ck_assert(!strchr(r.message, '\n'));

    fixture(path, sizeof path, "silent_launch");
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    mmp_case_init(&c, &k[0], 16, 16, 16, MMP_DIST_UNIFORM, 1);
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%s: %s %s\n", r.id, mmp_verdict_name(r.verdict), r.message);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_FAIL);
    ck_assert(r.reasons & MMP_REASON_UNWRITTEN);
}
END_TEST

START_TEST(test_good_plugin_passes)
{
    char path[4096];
    fixture(path, sizeof path, "good");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(k[0].name, "fix_good_f32");
    const mmp_kernel_desc *list[1] = {&k[0]};
    mmp_case *cases;
    size_t nc;
    ck_assert_int_eq(mmp_cases_build(&cases, &nc, "smoke", list, 1, NULL, mmp_check_seed), MMP_STATUS_OK);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result *r = calloc(nc, sizeof *r);
    ck_assert_int_eq(mmp_runner_run(r, cases, nc, &o, NULL, NULL), MMP_STATUS_OK);
    for (size_t i = 0; i < nc; i++)
        ck_assert_msg(r[i].verdict == MMP_VERDICT_PASS, "%s: %s %s", r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
    free(r);
    mmp_cases_free(cases);
}
END_TEST

/* A plugin kernel writing outside its buffers: the runner child dies or the guard catches it;
 * the case is ERROR crash or FAIL guard, the next case still runs. */
START_TEST(test_wild_plugin_kernel)
{
    char path[4096];
    fixture(path, sizeof path, "wild");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    mmp_case c[2];
    mmp_case_init(&c[0], &k[0], 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[1], &k[0], 9, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_case_result r[2];
    ck_assert_int_eq(mmp_runner_run(r, c, 2, &o, NULL, NULL), MMP_STATUS_OK);
    for (int i = 0; i < 2; i++) {
        printf("%s: %s %s\n", r[i].id, mmp_verdict_name(r[i].verdict), r[i].message);
        ck_assert_str_eq(r[i].id, c[i].id);
        ck_assert_msg((r[i].verdict == MMP_VERDICT_ERROR && (r[i].reasons & MMP_REASON_CRASH)) ||
                          (r[i].verdict == MMP_VERDICT_FAIL && (r[i].reasons & MMP_REASON_GUARD)),
                      "%s: %s", r[i].id, r[i].message);
    }
}
END_TEST

/* A device too old for a kernel: SKIP with the reason, never run (device_cc given, no GPU used). */
START_TEST(test_device_too_old)
{
    char path[4096];
    fixture(path, sizeof path, "device");
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(k[0].min_cc, 80);
    mmp_case c;
    mmp_case_init(&c, &k[0], 16, 16, 16, MMP_DIST_UNIFORM, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.have_device = 1;
    o.device_cc = 75;
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%s: %s %s\n", r.id, mmp_verdict_name(r.verdict), r.message);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_SKIP);
    ck_assert(r.reasons & MMP_REASON_UNSUPPORTED);
    ck_assert_str_eq(r.message, "needs sm_80, device is sm_75");
    /* no device at all: SKIP naming why */
    o.have_device = 0;
    snprintf(o.no_device_reason, sizeof o.no_device_reason, "no CUDA device (test)");
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_SKIP);
    ck_assert_str_eq(r.message, "no CUDA device (test)");
}
END_TEST

#ifdef MMP_CUDA_PLUGINS
/* A CUDA plugin with no code for the device: every case a SKIP naming the codes and the device,
 * decided on the host from the library's fat binary (device_cc given, no GPU used). Without the
 * check the runner would launch, and on this machine (or on the device) that is an ERROR. */
typedef struct {
    const char *lib;
    int cc;
    const char *says;
} code_case;
static const code_case code_cases[] = {
    {"fixcu_sm90a", 80, "plugin has code for sm_90a only; this device is sm_80"},
    {"fixcu_sm80", 90, "plugin has code for sm_80 only; this device is sm_90"},
    {"fixcu_sm90a", 100, "plugin has code for sm_90a only; this device is sm_100"},
    {"fixcu_ptx80", 75, "needs sm_80, device is sm_75"},   /* min_cc says it first */
};

START_TEST(test_no_code_for_device)
{
    const code_case *t = &code_cases[_i];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.so", MMP_PLUGIN_FIXTURES, t->lib);
    const mmp_kernel_desc *k;
    size_t n;
    ck_assert_msg(mmp_plugin_load(&k, &n, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    mmp_case c;
    mmp_case_init(&c, &k[0], 16, 16, 16, MMP_DIST_UNIFORM, 1);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.have_device = 1;
    o.device_cc = t->cc;
    mmp_case_result r;
    ck_assert_int_eq(mmp_runner_run(&r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%s on sm_%d: %s %s\n", t->lib, t->cc, mmp_verdict_name(r.verdict), r.message);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_SKIP);
    ck_assert(r.reasons & MMP_REASON_UNSUPPORTED);
    ck_assert_str_eq(r.message, t->says);
}
END_TEST
#endif

START_TEST(test_check_desc_null)
{
    ck_assert_int_eq(mmp_plugin_check_desc(NULL), MMP_STATUS_INVALID);
    ck_assert_str_eq(mmp_error_last(), "NULL descriptor");
}
END_TEST

static Suite *plugin_suite(void)
{
    Suite *s = suite_create("plugin");
    TCase *tc = tcase_create("plugin");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_bad_plugin, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_not_a_library);
    tcase_add_test(tc, test_good_plugin_passes);
    tcase_add_test(tc, test_abi10_plugin_loads);
    tcase_add_test(tc, test_abi12_plugin_loads);
    tcase_add_loop_test(tc, test_constraints_skip, 0, (int)(sizeof constraint_cases / sizeof constraint_cases[0]));
    tcase_add_test(tc, test_launch_status_error);
    tcase_add_test(tc, test_wild_plugin_kernel);
    tcase_add_test(tc, test_device_too_old);
    tcase_add_test(tc, test_check_desc_null);
#ifdef MMP_CUDA_PLUGINS
    tcase_add_loop_test(tc, test_no_code_for_device, 0, (int)(sizeof code_cases / sizeof code_cases[0]));
#endif
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(plugin_suite)
