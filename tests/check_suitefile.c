/* check_suitefile.c — the custom-suite parser (cases_file.c): good files expand to the right
 * cases, every kind of bad line is MMP_STATUS_PARSE "FILE:LINE: message" naming the problem,
 * edge values on both sides of each limit, and files that cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"

static const mmp_kernel_desc *const *kernels(size_t *nk) { return mmp_registry_kernels(nk, MMP_REGISTRY_DEFAULT); }

static mmp_status parse(mmp_case **c, size_t *n, const char *text)
{
    size_t nk;
    const mmp_kernel_desc *const *k = kernels(&nk);
    return mmp_suitefile_parse_text(c, n, text, strlen(text), "s.txt", k, nk, NULL, 42);
}

START_TEST(test_good_file)
{
    mmp_case *c;
    size_t n;
    const char *text = "# a custom suite\n"
                       "\n"
                       "   # indented comment\n"
                       "shape=64x48x128 dist=uniform,normal seed=1,2 kernel=host_f32   # trailing comment\r\n"
                       "shape=129x64x64 ld=136.72.72 layout=row.col.row dist=exact alpha=2 beta=0.5 kernel=host_f64\n"
                       "\tshape=1x1x1 kernel=host_i8_i32";   /* no final newline; default dist and seed */
    ck_assert_int_eq(parse(&c, &n, text), MMP_STATUS_OK);
    ck_assert_uint_eq(n, 2 * 2 + 1 + 1);
    ck_assert_str_eq(c[0].id, "host_f32/f32.f32.f32/64x48x128/uniform/s1");
    ck_assert_str_eq(c[1].id, "host_f32/f32.f32.f32/64x48x128/uniform/s2");
    ck_assert_str_eq(c[2].id, "host_f32/f32.f32.f32/64x48x128/normal/s1");
    ck_assert_str_eq(c[4].id, "host_f64/f64.f64.f64/129x64x64/ld136.72.72/row.col.row/ab2,0.5/exact/s42");
    ck_assert_int_eq(c[4].lb, MMP_LAYOUT_COL);
    ck_assert(c[4].alpha == 2 && c[4].beta == 0.5);
    ck_assert_int_eq(c[4].ldb, 72);
    ck_assert_str_eq(c[5].id, "host_i8_i32/int8.int8.int32/1x1x1/uniform/s42");
    ck_assert_str_eq(c[5].suite, "custom");
    mmp_cases_free(c);
}
END_TEST

START_TEST(test_filter_and_globs)
{
    size_t nk;
    const mmp_kernel_desc *const *k = kernels(&nk);
    mmp_case *c;
    size_t n;
    const char *text = "shape=8x8x8 kernel=host_tc_* dist=exact,onehot\n";
    ck_assert_int_eq(mmp_suitefile_parse_text(&c, &n, text, strlen(text), "g", k, nk, "*onehot*", 1), MMP_STATUS_OK);
    ck_assert_uint_eq(n, 2);   /* two host_tc kernels x onehot */
    for (size_t i = 0; i < n; i++) ck_assert_ptr_nonnull(strstr(c[i].id, "/onehot/s1"));
    mmp_cases_free(c);
    /* a filter matching nothing is not a parse error: zero cases */
    ck_assert_int_eq(mmp_suitefile_parse_text(&c, &n, text, strlen(text), "g", k, nk, "nothing", 1), MMP_STATUS_OK);
    ck_assert_uint_eq(n, 0);
    mmp_cases_free(c);
}
END_TEST

/* Each bad input: the line the error must name and a part of the message. */
typedef struct {
    const char *text;
    int line;
    const char *says;
} bad_case;

static const bad_case bad[] = {
    {"shape=8x8x8 dist=uniform\nfoo\n", 2, "expected key=value, got 'foo'"},
    {"shape=\n", 1, "empty value for 'shape'"},
    {"dist=uniform\n", 1, "missing shape=MxNxK"},
    {"shape=8x8\n", 1, "shape must be MxNxK"},
    {"shape=8x8x8x8\n", 1, "shape must be MxNxK"},
    {"shape=0x8x8\n", 1, "shape must be MxNxK"},
    {"shape=-1x8x8\n", 1, "shape must be MxNxK"},
    {"shape=8x8x2147483649\n", 1, "shape must be MxNxK"},
    {"shape=8x8x1234567890123456789\n", 1, "shape must be MxNxK"},
    {"shape=8x8x8 8x8\n", 1, "expected key=value, got '8x8'"},
    {"shape=axbxc\n", 1, "shape must be MxNxK"},
    {"shape=8x8x8 ld=8.8\n", 1, "ld must be LDA.LDB.LDD"},
    {"shape=8x8x8 ld=0.8.8\n", 1, "ld must be LDA.LDB.LDD"},
    {"shape=8x8x8 ld=4.8.8 kernel=host_f32\n", 1, "s.txt:1: "},   /* ld below the row length */
    {"shape=8x8x8 layout=row.row\n", 1, "layout must be like row.col.row"},
    {"shape=8x8x8 layout=row.col.diag\n", 1, "layout must be like row.col.row"},
    {"shape=8x8x8 dist=gaussian\n", 1, "unknown distribution 'gaussian'"},
    {"shape=8x8x8 dist=exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact,exact\n",
     1, "at most 16 distributions per line"},
    {"shape=8x8x8 seed=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n", 1, "at most 16 seeds per line"},
    {"shape=8x8x8 seed=-1\n", 1, "seed must be a non-negative integer, got '-1'"},
    {"shape=8x8x8 seed=1e3\n", 1, "seed must be a non-negative integer"},
    {"shape=8x8x8 seed=9999999999999999999\n", 1, "seed must be a non-negative integer"},
    {"shape=8x8x8 alpha=nan\n", 1, "alpha must be a finite number, got 'nan'"},
    {"shape=8x8x8 alpha=inf\n", 1, "alpha must be a finite number"},
    {"shape=8x8x8 beta=1e999\n", 1, "beta must be a finite number"},
    {"shape=8x8x8 beta=0.5x\n", 1, "beta must be a finite number"},
    {"shape=8x8x8 kernel=no_such_kernel\n", 1, "kernel pattern 'no_such_kernel' matches no kernel"},
    {"shape=8x8x8 colour=blue\n", 1, "unknown key 'colour'"},
    {"shape=8x8x8 =x\n", 1, "unknown key ''"},
    {"\n\n# ok\nshape=8x8x8\nshape=8x8x8 seed=x\n", 5, "seed must be"},
    {"", 0, "s.txt: empty suite file"},
};

START_TEST(test_bad_lines)
{
    const bad_case *b = &bad[_i];
    mmp_case *c = (mmp_case *)1;
    size_t n = 99;
    mmp_status st = parse(&c, &n, b->text);
    ck_assert_msg(st == MMP_STATUS_PARSE, "%s: status %d", b->text, st);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(n, 0);
    char want[64];
    if (b->line) snprintf(want, sizeof want, "s.txt:%d: ", b->line);
    else snprintf(want, sizeof want, "s.txt:");
    const char *msg = mmp_error_last();
    ck_assert_msg(!strncmp(msg, want, strlen(want)), "'%s' should start with '%s'", msg, want);
    ck_assert_msg(strstr(msg, b->says), "'%s' should say '%s'", msg, b->says);
    ck_assert_msg(!strchr(msg, '\n'), "message is one line");
}
END_TEST

START_TEST(test_edge_values)
{
    mmp_case *c;
    size_t n, nk;
    const mmp_kernel_desc *const *k = kernels(&nk);
    /* the largest shape (2^31) and seed (18 digits) parse; the run skips what it cannot do */
    ck_assert_int_eq(parse(&c, &n, "shape=2147483648x1x1 seed=999999999999999999 kernel=host_f64\n"), MMP_STATUS_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(c[0].m, 2147483648LL);
    ck_assert_uint_eq(c[0].seed, 999999999999999999ULL);
    mmp_cases_free(c);
    /* 16 distributions and seeds: the limit, inclusive */
    ck_assert_int_eq(parse(&c, &n, "shape=2x2x2 kernel=host_f64 seed=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 "
                                   "dist=exact,uniform,normal,wide,cancel,onehot,special,exact,uniform,normal,"
                                   "wide,cancel,onehot,special,exact,uniform\n"),
                     MMP_STATUS_OK);
    ck_assert_uint_eq(n, 7 * 16);   /* a distribution listed twice is one case (one ID) */
    mmp_cases_free(c);
    /* a line of 1023 characters is fine, 1024 is not */
    char line[1100];
    memset(line, ' ', sizeof line);
    memcpy(line, "shape=1x1x1 kernel=host_f64", 27);
    line[1023] = '\0';
    ck_assert_int_eq(parse(&c, &n, line), MMP_STATUS_OK);
    mmp_cases_free(c);
    memset(line, ' ', sizeof line);
    memcpy(line, "shape=1x1x1 kernel=host_f64", 27);
    line[1024] = '\0';
    ck_assert_int_eq(parse(&c, &n, line), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "s.txt:1: line longer than 1023 characters"));
    /* a file expanding to more than 2^18 cases is refused at the line that crosses the limit */
    {
        size_t cap = 256 * 1100;
        char *big = malloc(cap);
        size_t len = 0;
        for (int i = 0; i < 1100; i++)
            len += (size_t)snprintf(big + len, cap - len, "shape=%dx1x1 kernel=host_f64 seed=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 dist=exact,uniform,normal,wide,cancel,onehot,special,exact,uniform,normal,wide,cancel,onehot,special,exact,uniform\n", i + 1);
        ck_assert_int_eq(mmp_suitefile_parse_text(&c, &n, big, len, "s.txt", k, nk, NULL, 1), MMP_STATUS_PARSE);
        ck_assert_ptr_nonnull(strstr(mmp_error_last(), "s.txt:1025: the suite expands to more than 262144 cases"));
        free(big);
    }
    /* a NUL byte inside a line */
    static const char nul[] = "shape=1x1x1\0 kernel=x\n";
    ck_assert_int_eq(mmp_suitefile_parse_text(&c, &n, nul, sizeof nul - 1, "s.txt", k, nk, NULL, 1), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "s.txt:1: NUL byte in line"));
    /* only comments: no error, no cases */
    ck_assert_int_eq(parse(&c, &n, "# nothing\n\n"), MMP_STATUS_OK);
    ck_assert_uint_eq(n, 0);
    mmp_cases_free(c);
    /* alpha/beta accept any finite number, beta is dropped for kernels that do not read C */
    ck_assert_int_eq(parse(&c, &n, "shape=3x3x3 alpha=-1e-300 beta=-0 kernel=host_f64\n"), MMP_STATUS_OK);
    ck_assert(c[0].alpha == -1e-300);
    mmp_cases_free(c);
}
END_TEST

START_TEST(test_files)
{
    size_t nk;
    const mmp_kernel_desc *const *k = kernels(&nk);
    mmp_case *c;
    size_t n;
    char path[] = "/tmp/check_suitefile.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "shape=4x4x4 kernel=host_f32\nshape=4x4\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    ck_assert_int_eq(mmp_suitefile_parse(&c, &n, path, k, nk, NULL, 1), MMP_STATUS_PARSE);
    char want[96];
    snprintf(want, sizeof want, "%s:2: shape must be MxNxK", path);
    ck_assert_msg(strstr(mmp_error_last(), want), "%s", mmp_error_last());
    /* through mmp_cases_build: a suite name that is a file */
    ck_assert_int_eq(mmp_cases_build(&c, &n, path, k, nk, NULL, 1), MMP_STATUS_PARSE);
    unlink(path);
    /* neither a built-in suite nor a file: a usage error (exit 2) naming it */
    ck_assert_int_eq(mmp_cases_build(&c, &n, "smok", k, nk, NULL, 1), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "suite 'smok': not a built-in suite"));
    ck_assert_int_eq(mmp_status_exit_code(MMP_STATUS_INVALID), MMP_EXIT_USAGE);
    /* a directory is not a suite file */
    ck_assert_int_eq(mmp_cases_build(&c, &n, "/tmp", k, nk, NULL, 1), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "nor a regular file"));
}
END_TEST

static Suite *suitefile_suite(void)
{
    Suite *s = suite_create("suitefile");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 120);   /* the 2^18-case file takes seconds under ASan */
    tcase_add_test(tc, test_good_file);
    tcase_add_test(tc, test_filter_and_globs);
    tcase_add_loop_test(tc, test_bad_lines, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_edge_values);
    tcase_add_test(tc, test_files);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(suitefile_suite)
