/* check_npy.c — the .npy writer (core/npy.c): the bytes NumPy's format 1.0 specifies (magic,
 * version, header length, the dict, 64-byte alignment, the data after it), read back by
 * mmp_npy_parse_header; a header spelled by NumPy itself parses; bad types and shapes are
 * refused; a bad header is MMP_STATUS_PARSE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/npy.h"
#include "tests/check_main.h"

static size_t read_all(unsigned char *buf, size_t size, const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

START_TEST(test_write_read_back)
{
    char path[] = "/tmp/check_npy.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static const struct { const char *descr; int fortran, ndim; int64_t r, c; } cases[] = {
        {"<f4", 0, 2, 3, 5}, {"<f8", 1, 2, 4, 2}, {"<u2", 0, 2, 1, 7}, {"|i1", 1, 2, 6, 1}, {"<i4", 0, 1, 9, 0},
        {"|u1", 0, 2, 0, 3}, {"<f2", 0, 2, 2, 2},
    };
    unsigned char data[512], back[4096];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 7 + 1);
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        mmp_npy_array a = {"", cases[t].fortran, cases[t].ndim, {cases[t].r, cases[t].c}};
        snprintf(a.descr, sizeof a.descr, "%s", cases[t].descr);
        ck_assert_msg(mmp_npy_write(path, &a, data) == MMP_STATUS_OK, "%s", mmp_error_last());
        size_t n = read_all(back, sizeof back, path);
        ck_assert(n > 10 && !memcmp(back, "\x93NUMPY\x01\x00", 8));
        mmp_npy_array h;
        size_t off;
        ck_assert_msg(mmp_npy_parse_header(&h, &off, back, n) == MMP_STATUS_OK, "%s", mmp_error_last());
        size_t elems = (size_t)cases[t].r * (cases[t].ndim == 2 ? (size_t)cases[t].c : 1);
        printf("%s %s (%lld, %lld): header %zu bytes, %zu data bytes\n", h.descr, h.fortran_order ? "F" : "C",
               (long long)h.shape[0], (long long)h.shape[1], off, n - off);
        ck_assert_str_eq(h.descr, cases[t].descr);
        ck_assert_int_eq(h.fortran_order, cases[t].fortran);
        ck_assert_int_eq(h.ndim, cases[t].ndim);
        ck_assert_int_eq(h.shape[0], cases[t].r);
        if (cases[t].ndim == 2) ck_assert_int_eq(h.shape[1], cases[t].c);
        ck_assert_uint_eq(off % 64, 0);                          /* NumPy aligns the data */
        ck_assert_uint_eq((size_t)back[8] | (size_t)back[9] << 8, off - 10);
        ck_assert_int_eq(back[off - 1], '\n');
        ck_assert_uint_eq(n - off, elems * mmp_npy_item_bytes(cases[t].descr));
        ck_assert(!memcmp(back + off, data, n - off));
    }
    mmp_npy_array bad = {"<c8", 0, 2, {2, 2}};
    ck_assert_int_eq(mmp_npy_write(path, &bad, data), MMP_STATUS_INVALID);
    mmp_npy_array bad3 = {"<f4", 0, 3, {2, 2}};
    ck_assert_int_eq(mmp_npy_write(path, &bad3, data), MMP_STATUS_INVALID);
    mmp_npy_array neg = {"<f4", 0, 2, {-1, 2}};
    ck_assert_int_eq(mmp_npy_write(path, &neg, data), MMP_STATUS_INVALID);
    unlink(path);
}
END_TEST

/* A header as numpy.save writes it (NumPy 1.26, np.zeros((3, 4), dtype='<u2', order='F')). */
START_TEST(test_numpy_header)
{
    char file[128] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<u2', 'fortran_order': True, 'shape': (3, 4), }";
    size_t n = strlen(file + 10) + 10;
    while (n < 127) file[n++] = ' ';
    file[127] = '\n';
    mmp_npy_array h;
    size_t off;
    ck_assert_msg(mmp_npy_parse_header(&h, &off, file, 128) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert(!strcmp(h.descr, "<u2") && h.fortran_order && h.ndim == 2 && h.shape[0] == 3 && h.shape[1] == 4 && off == 128);
    file[127] = ' ';   /* not ended by a newline */
    ck_assert_int_eq(mmp_npy_parse_header(&h, &off, file, 128), MMP_STATUS_PARSE);
    ck_assert_int_eq(mmp_npy_parse_header(&h, &off, "\x93NUMPY\x02\x00", 8), MMP_STATUS_PARSE);
    ck_assert_int_eq(mmp_npy_parse_header(&h, &off, "NUMPY", 5), MMP_STATUS_PARSE);
}
END_TEST

static Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_test(tc, test_write_read_back);
    tcase_add_test(tc, test_numpy_header);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(npy_suite)
