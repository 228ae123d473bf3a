/* check_cublas_plan.c — the cublas family's host logic without a GPU (kernels/cublas_plan.c):
 * the column-major plan, run through the BLAS definition of op(P) op(Q), gives mmaprobe's
 * D = A B for every layout of A, B, D with padded leading dimensions; cuBLAS's ld rules hold;
 * the TN form cuBLASLt needs is exactly A row-major, B column-major; staged matrices fit their
 * workspace regions, aligned.
 *
 *   build/suites/check_cublas_plan            (ctest -L cpu)
 */
#include "tests/check_main.h"

#include "kernels/cublas_plan.h"
#include "mmaprobe/gemm.h"

/* op(X)(i, j) of a column-major stored X, as BLAS defines it. */
static double op_at(const double *x, int op, int64_t ld, int64_t i, int64_t j)
{
    return op == MMP_CUBLAS_OP_N ? x[j * ld + i] : x[i * ld + j];
}

static int64_t tight(mmp_layout l, int64_t rows, int64_t cols) { return l == MMP_LAYOUT_ROW ? cols : rows; }

START_TEST(test_plan_matches_definition)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {5, 3, 4}, {3, 7, 1}, {16, 9, 33}, {2, 17, 5}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int lay = 0; lay < 8; lay++) {
            int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            mmp_layout la = (lay & 1) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
            mmp_layout lb = (lay & 2) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
            mmp_layout ld = (lay & 4) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
            mmp_kernel_args a = {0};
            a.m = m; a.n = n; a.k = k;
            a.layout_a = la; a.layout_b = lb; a.layout_d = a.layout_c = ld;
            a.lda = tight(la, m, k) + 2;
            a.ldb = tight(lb, k, n) + 3;
            a.ldd = tight(ld, m, n) + 1;
            size_t na = mmp_gemm_span(la, a.lda, m, k), nb = mmp_gemm_span(lb, a.ldb, k, n);
            size_t nd = mmp_gemm_span(ld, a.ldd, m, n);
            double *A = calloc(na, sizeof *A), *B = calloc(nb, sizeof *B), *D = calloc(nd, sizeof *D);
            ck_assert(A && B && D);
            for (size_t i = 0; i < na; i++) A[i] = (double)((i * 7 + s) % 11) - 5;
            for (size_t i = 0; i < nb; i++) B[i] = (double)((i * 5 + lay) % 9) - 4;
            a.a = A; a.b = B; a.d = D;

            mmp_cublas_plan p;
            mmp_cublas_plan_make(&p, &a);
            ck_assert_int_eq(p.kk, k);
            /* cuBLAS: the ld of every stored matrix covers its rows. */
            ck_assert_int_ge(p.ldp, p.p_rows);
            ck_assert_int_ge(p.ldq, p.q_rows);
            ck_assert_int_ge(a.ldd, p.mm);
            /* out(i, j) = sum_l op_p(P)(i, l) op_q(Q)(l, j), stored column-major with ld ldd. */
            for (int64_t i = 0; i < p.mm; i++)
                for (int64_t j = 0; j < p.nn; j++) {
                    double acc = 0;
                    for (int64_t l = 0; l < p.kk; l++)
                        acc += op_at(p.p, p.op_p, p.ldp, i, l) * op_at(p.q, p.op_q, p.ldq, l, j);
                    D[j * a.ldd + i] = acc;
                }
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double want = 0;
                    for (int64_t l = 0; l < k; l++)
                        want += A[mmp_gemm_index(la, a.lda, i, l)] * B[mmp_gemm_index(lb, a.ldb, l, j)];
                    ck_assert_msg(D[mmp_gemm_index(ld, a.ldd, i, j)] == want,
                                  "layouts %s.%s.%s %lldx%lldx%lld: D(%lld,%lld) wrong",
                                  mmp_layout_name(la), mmp_layout_name(lb), mmp_layout_name(ld),
                                  (long long)m, (long long)n, (long long)k, (long long)i, (long long)j);
                }
            /* cuBLASLt's TN form (first operand transposed, second not) <=> A row, B col. */
            int tn = p.op_p == MMP_CUBLAS_OP_T && p.op_q == MMP_CUBLAS_OP_N;
            ck_assert_int_eq(tn, la == MMP_LAYOUT_ROW && lb == MMP_LAYOUT_COL);
            free(A); free(B); free(D);
        }
}
END_TEST

START_TEST(test_staging_fits)
{
    static const int64_t dims[] = {1, 3, 15, 16, 17, 100, 129, 1000};
    const size_t nd = sizeof dims / sizeof dims[0];
    for (size_t x = 0; x < nd; x++)
        for (size_t y = 0; y < nd; y++)
            for (size_t z = 0; z < nd; z++) {
                int64_t m = dims[x], n = dims[y], k = dims[z];
                size_t off[3];
                size_t total = mmp_cublaslt_workspace_layout(off, m, n, k);
                ck_assert_uint_eq(total, mmp_cublaslt_workspace_bytes(m, n, k));
                ck_assert_uint_ge(off[0], MMP_CUBLASLT_WORKSPACE);
                for (int r = 0; r < 3; r++) ck_assert_uint_eq(off[r] % 256, 0);
                size_t cap_in = off[1] - off[0];
                ck_assert_uint_eq(off[2] - off[1], cap_in);
                size_t cap_d = total - off[2];
                /* Every orientation of A (M x K), B (K x N) in either input region, D (M x N). */
                const int64_t in[4][2] = {{m, k}, {k, m}, {k, n}, {n, k}};
                for (int t = 0; t < 4; t++)
                    ck_assert_uint_le((size_t)mmp_cublas_staged_ld(in[t][0]) * (size_t)in[t][1], cap_in);
                for (size_t e = 1; e <= 4; e *= 2) {
                    ck_assert_uint_le((size_t)mmp_cublas_staged_ld(m) * (size_t)n * e, cap_d);
                    ck_assert_uint_le((size_t)mmp_cublas_staged_ld(n) * (size_t)m * e, cap_d);
                    ck_assert_uint_eq(((size_t)mmp_cublas_staged_ld(m) * e) % 16, 0);
                }
            }
}
END_TEST

START_TEST(test_misaligned)
{
    char buf[64] __attribute__((aligned(16))) = {0};
    ck_assert_int_eq(mmp_cublas_misaligned(buf, 16, 1), 0);
    ck_assert_int_eq(mmp_cublas_misaligned(buf, 17, 1), 1);
    ck_assert_int_eq(mmp_cublas_misaligned(buf, 4, 4), 0);
    ck_assert_int_eq(mmp_cublas_misaligned(buf, 6, 4), 1);
    ck_assert_int_eq(mmp_cublas_misaligned(buf + 4, 16, 1), 1);
    ck_assert_int_eq(mmp_cublas_staged_ld(1), 16);
    ck_assert_int_eq(mmp_cublas_staged_ld(16), 16);
    ck_assert_int_eq(mmp_cublas_staged_ld(17), 32);
}
END_TEST

static Suite *cublas_plan_suite(void)
{
    Suite *s = suite_create("cublas_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_plan_matches_definition);
    tcase_add_test(tc, test_staging_fits);
    tcase_add_test(tc, test_misaligned);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(cublas_plan_suite)
