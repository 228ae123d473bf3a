/* check_memory_cupti.c — the CUPTI counter path of `probe --memory`, on the host (no GPU):
 *   - the trust check accepts counters that reproduce every calibration row and rejects one
 *     disagreeing row (or missing counters, or a wrong launch count) with the documented message;
 *   - `--counters cupti|clock` on a machine where they cannot measure exits 3 with one line on
 *     stderr and prints no measurement; a bad --counters value is a usage error (2);
 *   - the dlopen loader reports a missing library (MMP_CUPTI_LIB) and a library without CUPTI's
 *     symbols cleanly, and resolves every symbol from the installed libcupti when there is one.
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/memory.h"
#include "probes/memory_internal.h"
#include "tests/check_main.h"

/* Counters that reproduce the model: 256 loads per calibration launch, wf wavefronts each. */
static void exact_counters(mmp_memory_counters *k, size_t *n)
{
    const mmp_memory_calib *c = mmp_memory_calibs(n);
    for (size_t i = 0; i < *n; i++) {
        mmp_warp_access a;
        mmp_smem_cost cost;
        mmp_memory_calib_access(&a, &c[i]);
        mmp_memory_smem_cost(&cost, &a);
        memset(&k[i], 0, sizeof k[i]);
        snprintf(k[i].kernel, sizeof k[i].kernel, "mmp_calib_%s", c[i].name);
        int ldsm = c[i].kind == MMP_ACCESS_LDSM;
        int wf = ldsm ? MMP_MEMORY_M_WF_LDSM : MMP_MEMORY_M_WF_LD;
        int inst = ldsm ? MMP_MEMORY_M_INST_LDSM : MMP_MEMORY_M_INST_LD;
        for (int m = 0; m < MMP_MEMORY_N_METRICS; m++) k[i].have[m] = 1;
        k[i].v[wf] = 256.0 * cost.wavefronts;
        k[i].v[inst] = 256;
        k[i].v[MMP_MEMORY_M_WF_ST] = 128; /* the zeroing stores: another counter */
    }
}

static int calib_index(const char *name)
{
    size_t n;
    const mmp_memory_calib *c = mmp_memory_calibs(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) return (int)i;
    return -1;
}

START_TEST(accepts_exact_calibration_answers)
{
    mmp_memory_counters k[64];
    size_t n;
    exact_counters(k, &n);
    ck_assert_uint_le(n, 64);
    ck_assert_msg(mmp_memory_counters_accept(k, (int)n, "CUPTI") == MMP_STATUS_OK, "rejected: %s", mmp_error_last());
}
END_TEST

START_TEST(rejects_one_disagreeing_row)
{
    mmp_memory_counters k[64];
    size_t n;
    exact_counters(k, &n);
    int i = calib_index("lds32_stride8");          /* model: 2-way, 2 wavefronts */
    ck_assert_int_ge(i, 0);
    k[i].v[MMP_MEMORY_M_WF_LD] = 256;              /* measured: 1 per load */
    ck_assert_int_eq(mmp_memory_counters_accept(k, (int)n, "CUPTI"), MMP_STATUS_INVALID);
    ck_assert_str_eq(mmp_error_last(), "CUPTI counters disagree with calibration lds32_stride8: measured 1, model 2");

    exact_counters(k, &n);
    i = calib_index("ldsm_x4_row128");             /* model: 32 wavefronts */
    ck_assert_int_ge(i, 0);
    k[i].v[MMP_MEMORY_M_WF_LDSM] = 256.0 * 8;      /* 8: a model of the wrong phase split */
    ck_assert_int_eq(mmp_memory_counters_accept(k, (int)n, "CUPTI"), MMP_STATUS_INVALID);
    ck_assert_str_eq(mmp_error_last(), "CUPTI counters disagree with calibration ldsm_x4_row128: measured 8, model 32");
}
END_TEST

START_TEST(rejects_missing_counters_and_wrong_launch_count)
{
    mmp_memory_counters k[64];
    size_t n;
    exact_counters(k, &n);
    int i = calib_index("lds128_stride16");
    k[i].have[MMP_MEMORY_M_WF_LD] = 0;             /* CUPTI refused the wavefront metrics */
    k[i].have[MMP_MEMORY_M_WF_LDSM] = 0;
    ck_assert_int_eq(mmp_memory_counters_accept(k, (int)n, "CUPTI"), MMP_STATUS_INVALID);
    ck_assert_msg(strstr(mmp_error_last(), "calibration lds128_stride16: measured nothing") != NULL, "%s",
                  mmp_error_last());
    exact_counters(k, &n);
    ck_assert_int_eq(mmp_memory_counters_accept(k, (int)n - 1, "CUPTI"), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "not the"));
    ck_assert_int_eq(mmp_memory_counters_accept(NULL, 0, "CUPTI"), MMP_STATUS_INVALID);
}
END_TEST

START_TEST(one_judgment_for_every_row)
{
    /* the boundary the table and the trust check share: 15 % + half a wavefront */
    ck_assert(mmp_memory_calib_agree(32, 32));
    ck_assert(mmp_memory_calib_agree(32 * 1.15 + 0.5, 32));
    ck_assert(!mmp_memory_calib_agree(32 * 1.15 + 0.6, 32));
    ck_assert(!mmp_memory_calib_agree(1, 2));
    ck_assert(!mmp_memory_calib_agree(NAN, 1));
}
END_TEST

/* Runs `probe --memory <args>` in this (forked) test process; stderr goes to a file. */
static int run_probe(char *text_out, size_t tsize, char *err_out, size_t esize, char *json_out, size_t jsize,
                     const char *a1, const char *a2)
{
    char *argv[] = {"probe", (char *)a1, (char *)a2, NULL};
    char errpath[] = "/tmp/mmp_check_cupti_XXXXXX";
    int efd = mkstemp(errpath);
    ck_assert_int_ge(efd, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(efd, 2);
    char *tbuf = NULL, *jbuf = NULL;
    size_t tlen = 0, jlen = 0;
    FILE *text = open_memstream(&tbuf, &tlen), *json = open_memstream(&jbuf, &jlen);
    mmp_memory_results res;
    memset(&res, 0, sizeof res);
    int rc = mmp_probe_memory_run(&res, text, a2 ? 3 : 2, argv);
    if (res.present) fprintf(json, "{\"method\":\"%s\"}", res.method);   /* "": no results */
    free(res.calib);
    free(res.kernels);
    fclose(text);
    fclose(json);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t r = pread(efd, err_out, esize - 1, 0);
    err_out[r > 0 ? r : 0] = '\0';
    close(efd);
    unlink(errpath);
    snprintf(text_out, tsize, "%s", tbuf ? tbuf : "");
    snprintf(json_out, jsize, "%s", jbuf ? jbuf : "");
    free(tbuf);
    free(jbuf);
    return rc;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

START_TEST(forced_cupti_without_library_exits_3_with_one_line)
{
    static char text[1 << 16], err[4096], json[1 << 16];
    setenv("MMP_CUPTI_LIB", "/nonexistent/libcupti.so.13", 1);
    int rc = run_probe(text, sizeof text, err, sizeof err, json, sizeof json, "--counters", "cupti");
    unsetenv("MMP_CUPTI_LIB");
    ck_assert_int_eq(rc, MMP_EXIT_ENVIRONMENT);
    ck_assert_msg(count_lines(err) == 1, "stderr is not one line: '%s'", err);
    ck_assert_ptr_nonnull(strstr(err, "--counters cupti: "));
#ifdef MMP_HAVE_CUDA
    ck_assert_msg(strstr(err, "MMP_CUPTI_LIB=/nonexistent/libcupti.so.13") != NULL, "%s", err);
#else
    ck_assert_msg(strstr(err, "built without CUDA") != NULL, "%s", err);
#endif
    /* never a measurement: nothing printed as measured, no JSON */
    ck_assert_ptr_null(strstr(text, "memory measurement: cupti"));
    ck_assert_ptr_null(strstr(text, "agree"));
    ck_assert_str_eq(json, "");
}
END_TEST

START_TEST(forced_method_on_this_machine_measures_or_says_why)
{
    /* With the installed libcupti: on a machine without a GPU (CI) the child cannot create a
     * context, so exit 3 with one line; on a GPU the CUPTI rows must all agree. */
    static const char *const methods[] = {"cupti", "clock"};
    for (int m = 0; m < 2; m++) {
        static char text[1 << 16], err[4096], json[1 << 16];
        int rc = run_probe(text, sizeof text, err, sizeof err, json, sizeof json, "--counters", methods[m]);
        if (rc == MMP_EXIT_PASS) {
            char want[64];
            snprintf(want, sizeof want, "memory measurement: %s", m == 0 ? "cupti" : "clock64");
            ck_assert_msg(strstr(text, want) != NULL, "%s", text);
            if (m == 0) ck_assert_msg(strstr(text, "DISAGREE") == NULL, "%s", text);
            continue;
        }
        ck_assert_msg(rc == MMP_EXIT_ENVIRONMENT, "--counters %s: exit %d (%s)", methods[m], rc, err);
        ck_assert_msg(count_lines(err) == 1, "--counters %s: stderr '%s'", methods[m], err);
        ck_assert_ptr_null(strstr(text, "memory measurement:"));
        printf("# --counters %s here: %s", methods[m], err);
    }
}
END_TEST

START_TEST(bad_counters_value_is_usage_error)
{
    static char text[4096], err[4096], json[4096];
    int rc = run_probe(text, sizeof text, err, sizeof err, json, sizeof json, "--counters", "nvprof");
    ck_assert_int_eq(rc, MMP_EXIT_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "--counters must be auto, cupti, ncu or clock (got 'nvprof')"));
}
END_TEST

START_TEST(loader_reports_missing_library)
{
    mmp_cupti_lib lib;
    setenv("MMP_CUPTI_LIB", "/nonexistent/libcupti.so", 1);
    mmp_status st = mmp_memory_cupti_open(&lib);
    unsetenv("MMP_CUPTI_LIB");
    ck_assert_int_eq(st, MMP_STATUS_NO_DEVICE);
    ck_assert_int_eq(mmp_status_exit_code(st), MMP_EXIT_ENVIRONMENT);
    ck_assert_ptr_null(lib.handle);
    const char *msg = mmp_error_last();
    ck_assert_msg(strstr(msg, "cannot load libcupti from MMP_CUPTI_LIB=/nonexistent/libcupti.so: ") == msg, "%s", msg);
    ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

START_TEST(loader_reports_library_without_cupti)
{
    mmp_cupti_lib lib;
    setenv("MMP_CUPTI_LIB", "libm.so.6", 1);       /* loads, but is not CUPTI */
    mmp_status st = mmp_memory_cupti_open(&lib);
    unsetenv("MMP_CUPTI_LIB");
    ck_assert_int_eq(st, MMP_STATUS_NO_DEVICE);
    ck_assert_ptr_null(lib.handle);
    ck_assert_msg(strstr(mmp_error_last(), "libm.so.6 has no cuptiGetResultString") != NULL, "%s", mmp_error_last());
}
END_TEST

START_TEST(loader_resolves_installed_cupti)
{
#if defined(__SANITIZE_ADDRESS__)
    /* libcupti's and libnvperf_host's own initialisers keep allocations LeakSanitizer reports as
     * leaks (in their code, not ours); the plain build runs this check. */
    printf("# AddressSanitizer build: loading the real libcupti is left to the plain build\n");
    return;
#endif
    mmp_cupti_lib lib;
    if (mmp_memory_cupti_open(&lib) != MMP_STATUS_OK) {
        printf("# no libcupti installed here (%s): the symbol check is not run\n", mmp_error_last());
        return;
    }
    for (int f = 0; f < MMP_CUPTI_N_FUNCS; f++) ck_assert_msg(lib.fn[f] != NULL, "%s", mmp_cupti_func_names[f]);
    ck_assert_ptr_nonnull(strstr(lib.path, "cupti"));
    printf("# libcupti: %s (libnvperf_host %s)\n", lib.path, lib.nvperf ? "preloaded" : "left to libcupti");
    mmp_memory_cupti_close(&lib);
    ck_assert_ptr_null(lib.handle);
}
END_TEST

static Suite *memory_cupti_suite(void)
{
    Suite *s = suite_create("memory_cupti");
    TCase *trust = tcase_create("trust");
    tcase_add_test(trust, accepts_exact_calibration_answers);
    tcase_add_test(trust, rejects_one_disagreeing_row);
    tcase_add_test(trust, rejects_missing_counters_and_wrong_launch_count);
    tcase_add_test(trust, one_judgment_for_every_row);
    suite_add_tcase(s, trust);
    TCase *sel = tcase_create("selection");
    tcase_set_timeout(sel, 120);
    tcase_add_test(sel, forced_cupti_without_library_exits_3_with_one_line);
    tcase_add_test(sel, forced_method_on_this_machine_measures_or_says_why);
    tcase_add_test(sel, bad_counters_value_is_usage_error);
    suite_add_tcase(s, sel);
    TCase *load = tcase_create("loader");
    tcase_add_test(load, loader_reports_missing_library);
    tcase_add_test(load, loader_reports_library_without_cupti);
    tcase_add_test(load, loader_resolves_installed_cupti);
    suite_add_tcase(s, load);
    return s;
}

MMP_CHECK_MAIN(memory_cupti_suite)
