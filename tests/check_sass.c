/* check_sass.c — the SASS reader (probes/arith_sass.c) on a stored `cuobjdump -sass` excerpt.
 *
 * tests/data/sass-sample-sm90.txt is hand-written in the listing's layout (address comments,
 * predicates, two-line encodings, labels, "code for sm_NN" sections, internal routines both
 * inside a function's text and as Function sections of their own). Each test names a function
 * by the key the capture kernels use and checks the opcodes and the native/emulated verdict:
 * a 4-bit integer mma that calls __cuda_sm_9x_mma_sub_byte_* or runs on an s8 IMMA shape or on
 * IMAD/IDP is emulated; FP8 run on an f16 HMMA is emulated; QGMMA e4m3, HMMA .BF16 are native.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/probe.h"
#include "tests/check_main.h"

static char *sample;

static void load(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/sass-sample-sm90.txt", MMP_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    sample = buf;
}

static mmp_sass_summary summ(const char *key, int sm, mmp_format in, mmp_status want)
{
    mmp_sass_summary s;
    ck_assert_int_eq(mmp_sass_summarise(&s, sample, key, sm, in), want);
    return s;
}

START_TEST(test_native_hmma)
{
    mmp_sass_summary s = summ("13arith_k_16816ILi0ELi0EE", 90, MMP_FORMAT_FP16, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "HMMA.16816.F32");
    ck_assert_int_eq(s.native, 1);
    ck_assert_int_eq(s.n_tensor, 1);
    s = summ("13arith_k_16816ILi1ELi0EE", 90, MMP_FORMAT_BF16, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "HMMA.16816.F32.BF16");
    ck_assert_int_eq(s.native, 1);
    /* the bf16 opcode is not an fp16 path */
    s = summ("13arith_k_16816ILi1ELi0EE", 90, MMP_FORMAT_FP16, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 0);
}
END_TEST

START_TEST(test_fp8_on_hmma_is_emulated)
{
    mmp_sass_summary s = summ("16arith_k_16832_f8ILi0EE", 90, MMP_FORMAT_E4M3, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "HMMA.16816.F32");
    ck_assert_int_eq(s.n_tensor, 2);
    ck_assert_int_eq(s.n_convert, 3);
    ck_assert_int_eq(s.native, 0);
    ck_assert_msg(strstr(s.note, "f16 HMMA") != NULL, "%s", s.note);
}
END_TEST

START_TEST(test_int8_native)
{
    mmp_sass_summary s = summ("16arith_k_16832_i8ILi0ELi0EE", 90, MMP_FORMAT_INT8, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "IMMA.16832.S8.S8");
    ck_assert_int_eq(s.native, 1);
}
END_TEST

START_TEST(test_int4_emulated_inline_routine)
{
    /* sm_90: CALL into a routine listed as a label inside the kernel's text */
    mmp_sass_summary s = summ("16arith_k_16864_s4ILi0EE", 90, MMP_FORMAT_INT4, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 0);
    ck_assert_str_eq(s.opcodes, "IMMA.16832.S8.S8");
    ck_assert_int_eq(s.n_tensor, 3);
    ck_assert_msg(strstr(s.note, "__cuda_sm_9x_mma_sub_byte_internal_m16n8k64_s4_s4") != NULL, "%s", s.note);
    /* the same key in the sm_80 section: a real s4 IMMA */
    s = summ("16arith_k_16864_s4ILi0EE", 80, MMP_FORMAT_INT4, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 1);
    ck_assert_str_eq(s.opcodes, "IMMA.16864.S4.S4");
    ck_assert_int_eq(s.n_tensor, 2);
}
END_TEST

START_TEST(test_int4_emulated_separate_routine)
{
    /* a predicated CALL into a routine that is a Function section of its own: its IMMAs count */
    mmp_sass_summary s = summ("16arith_k_16864_s4ILi1EE", 90, MMP_FORMAT_INT4, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 0);
    ck_assert_int_eq(s.n_tensor, 2);
    ck_assert_str_eq(s.opcodes, "IMMA.16832.S8.S8.SAT");
    ck_assert_msg(strstr(s.note, "satfinite") != NULL, "%s", s.note);
}
END_TEST

START_TEST(test_imad_only)
{
    mmp_sass_summary s = summ("9emul_only", 90, MMP_FORMAT_INT4, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 0);
    ck_assert_int_eq(s.n_tensor, 0);
    ck_assert_int_eq(s.n_imad, 3);   /* IMAD x2 + IDP; IMAD.WIDE / IMAD.MOV are address moves */
    ck_assert_str_eq(s.opcodes, "none");
    ck_assert_msg(strstr(s.note, "IMAD") != NULL, "%s", s.note);
}
END_TEST

START_TEST(test_wgmma_sections)
{
    /* "code for sm_90a" counts as sm 90 */
    mmp_sass_summary s = summ("13arith_k_wgmmaILi3ELi0ELi1ELi0EE", 90, MMP_FORMAT_E4M3, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "QGMMA.64x8x32.F32.E4M3.E4M3");
    ck_assert_int_eq(s.native, 1);
    s = summ("13arith_k_wgmmaILi0ELi0ELi1ELi0EE", 90, MMP_FORMAT_FP16, MMP_STATUS_OK);
    ck_assert_str_eq(s.opcodes, "HGMMA.64x8x16.F32");
    ck_assert_int_eq(s.native, 1);
    s = summ("13arith_k_wgmmaILi2ELi0ELi1ELi0EE", 90, MMP_FORMAT_TF32, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 1);
    /* e4m3 expected but the kernel holds HGMMA f16: not native */
    s = summ("13arith_k_wgmmaILi0ELi0ELi1ELi0EE", 90, MMP_FORMAT_E4M3, MMP_STATUS_OK);
    ck_assert_int_eq(s.native, 0);
}
END_TEST

START_TEST(test_missing_and_malformed)
{
    mmp_sass_summary s = summ("13arith_k_wgmmaILi9E", 90, MMP_FORMAT_FP16, MMP_STATUS_UNSUPPORTED);
    ck_assert_str_eq(s.opcodes, "unknown");
    ck_assert_int_eq(s.native, -1);
    /* wrong architecture: the sm_90 kernels are not in an sm_89 listing */
    summ("13arith_k_16816ILi0ELi0EE", 89, MMP_FORMAT_FP16, MMP_STATUS_UNSUPPORTED);
    /* truncated text (no final newline), CRLF line ends, garbage lines */
    const char *t = "\tcode for sm_90\r\n\t\tFunction : _Z3fooPf\r\n garbage /*zz*/ HMMA\r\n"
                    "        /*0000*/                   HMMA.1688.F32.TF32 R4, R8, R12, R4 ;\r\n"
                    "        /*0010*/  HMMA.1688.F32.TF32 R6";
    ck_assert_int_eq(mmp_sass_summarise(&s, t, "3foo", 90, MMP_FORMAT_TF32), MMP_STATUS_OK);
    ck_assert_int_eq(s.n_tensor, 2);
    ck_assert_int_eq(s.native, 1);
    ck_assert_int_eq(mmp_sass_summarise(&s, "", "3foo", 90, MMP_FORMAT_TF32), MMP_STATUS_UNSUPPORTED);
    ck_assert_int_eq(mmp_sass_summarise(&s, NULL, "3foo", 90, MMP_FORMAT_TF32), MMP_STATUS_INVALID);
}
END_TEST

static Suite *sass_suite(void)
{
    Suite *s = suite_create("sass");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, load, NULL);
    tcase_add_test(tc, test_native_hmma);
    tcase_add_test(tc, test_fp8_on_hmma_is_emulated);
    tcase_add_test(tc, test_int8_native);
    tcase_add_test(tc, test_int4_emulated_inline_routine);
    tcase_add_test(tc, test_int4_emulated_separate_routine);
    tcase_add_test(tc, test_imad_only);
    tcase_add_test(tc, test_wgmma_sections);
    tcase_add_test(tc, test_missing_and_malformed);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(sass_suite)
