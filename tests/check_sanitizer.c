/* check_sanitizer.c — the compute-sanitizer summary parser (runner_sanitize.c) on the stored
 * output samples in tests/data/sanitizer-samples/ (expected.txt: file, have_summary, errors, the
 * first error line's beginning), plus hand-made edge inputs. */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/runner.h"
#include "tests/check_main.h"

#define SAMPLES MMP_SOURCE_DIR "/tests/data/sanitizer-samples"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_samples)
{
    size_t len;
    char *exp = slurp(SAMPLES "/expected.txt", &len);
    int checked = 0;
    char *save = NULL;
    for (char *line = strtok_r(exp, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char file[128], first[256] = "";
        int have, consumed = 0;
        long long errors;
        ck_assert_int_eq(sscanf(line, "%127s %d %lld %n", file, &have, &errors, &consumed), 3);
        snprintf(first, sizeof first, "%s", line + consumed);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", SAMPLES, file);
        size_t n;
        char *text = slurp(path, &n);
        mmp_sanitizer_summary s;
        mmp_status st = mmp_sanitizer_parse(&s, text, n);
        printf("%-24s summary %d errors %lld first '%s'\n", file, s.have_summary, s.errors, s.first);
        ck_assert_int_eq(st, have ? MMP_STATUS_OK : MMP_STATUS_PARSE);
        ck_assert_int_eq(s.have_summary, have);
        ck_assert_int_eq(s.errors, errors);
        if (strcmp(first, "-")) ck_assert_msg(!strncmp(s.first, first, strlen(first)), "%s: first '%s'", file, s.first);
        else ck_assert_str_eq(s.first, "");
        free(text);
        checked++;
    }
    ck_assert_int_ge(checked, 7);
    free(exp);
}
END_TEST

START_TEST(test_edges)
{
    mmp_sanitizer_summary s;
    /* nothing, or only the banner: no summary, never "clean" */
    ck_assert_int_eq(mmp_sanitizer_parse(&s, "", 0), MMP_STATUS_PARSE);
    ck_assert_int_eq(s.errors, -1);
    const char *banner = "========= COMPUTE-SANITIZER\n";
    ck_assert_int_eq(mmp_sanitizer_parse(&s, banner, strlen(banner)), MMP_STATUS_PARSE);
    /* the application's own "ERROR SUMMARY" text without the tool prefix does not count */
    const char *fake = "ERROR SUMMARY: 0 errors\n";
    ck_assert_int_eq(mmp_sanitizer_parse(&s, fake, strlen(fake)), MMP_STATUS_PARSE);
    /* CRLF, no final newline, the last summary wins, singular "error" */
    const char *crlf = "========= Invalid __shared__ read of size 2 bytes\r\n=========     at k+0x10\r\n"
                       "========= ERROR SUMMARY: 0 errors\r\n========= ERROR SUMMARY: 1 error";
    ck_assert_int_eq(mmp_sanitizer_parse(&s, crlf, strlen(crlf)), MMP_STATUS_OK);
    ck_assert_int_eq(s.errors, 1);
    ck_assert_str_eq(s.first, "Invalid __shared__ read of size 2 bytes");
    /* a malformed count is not a summary */
    const char *bad = "========= ERROR SUMMARY: many errors\n";
    ck_assert_int_eq(mmp_sanitizer_parse(&s, bad, strlen(bad)), MMP_STATUS_PARSE);
    /* a very long first line is cut, control characters blanked */
    char longl[1200];
    memset(longl, 'x', sizeof longl);
    memcpy(longl, "========= Oops\t", 15);
    memcpy(longl + sizeof longl - 40, "\n========= ERROR SUMMARY: 7 errors\n", 35);
    ck_assert_int_eq(mmp_sanitizer_parse(&s, longl, sizeof longl - 5), MMP_STATUS_OK);
    ck_assert_int_eq(s.errors, 7);
    ck_assert_uint_eq(strlen(s.first), sizeof s.first - 1);
    ck_assert(!strchr(s.first, '\t'));
}
END_TEST

START_TEST(test_not_found)
{
    setenv("MMP_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1);
    char path[256];
    ck_assert_int_eq(mmp_sanitizer_find(path, sizeof path), MMP_STATUS_NO_DEVICE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "is not an executable file"));
    unsetenv("MMP_COMPUTE_SANITIZER");
    setenv("PATH", "/nonexistent", 1);
    setenv("CUDA_HOME", "/nonexistent", 1);
    mmp_status st = mmp_sanitizer_find(path, sizeof path);
    if (st != MMP_STATUS_OK) ck_assert_ptr_nonnull(strstr(mmp_error_last(), "compute-sanitizer not found"));
    else ck_assert_str_eq(path, "/usr/local/cuda/bin/compute-sanitizer");
}
END_TEST

static Suite *sanitizer_suite(void)
{
    Suite *s = suite_create("sanitizer");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_samples);
    tcase_add_test(tc, test_edges);
    tcase_add_test(tc, test_not_found);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(sanitizer_suite)
