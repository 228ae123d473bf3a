/* mmaprobe/gemm.h — matrices and the GEMM problem shared by reference, kernels and runner.
 *
 * D = alpha * A * B + beta * C, A is M x K, B is K x N, C and D are M x N.
 * Layouts are per matrix (row- or column-major) with a leading dimension in elements:
 *   row-major:  element (i, j) at index i * ld + j   (ld >= cols)
 *   col-major:  element (i, j) at index j * ld + i   (ld >= rows)
 * int4/uint4 matrices need an even ld (every row/column starts on a byte).
 *
 * Usage:
 *   mmp_gemm g;
 *   mmp_gemm_init(&g, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 256, 256, 4096);
 *   g.lb = MMP_LAYOUT_COL; g.ldb = g.k;        // change what you need, then
 *   if (mmp_gemm_check(&g) != MMP_STATUS_OK) puts(mmp_error_last());
 *   size_t idx = mmp_gemm_index(g.la, g.lda, i, j);
 */
#ifndef MMAPROBE_GEMM_H
#define MMAPROBE_GEMM_H

#include <stddef.h>
#include <stdint.h>
#include "mmaprobe/format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_layout { MMP_LAYOUT_ROW = 0, MMP_LAYOUT_COL = 1 } mmp_layout;

typedef struct mmp_gemm {
    int64_t m, n, k;
    mmp_format a, b, c, d;         /* storage formats of the operands */
    mmp_layout la, lb, lc, ld;
    int64_t lda, ldb, ldc, ldd;    /* leading dimensions, in elements */
    double alpha, beta;            /* beta == 0: C is not read (may be NULL) */
} mmp_gemm;

/* Row-major everywhere, tight leading dimensions, alpha = 1, beta = 0, C format = D format. */
void mmp_gemm_init(mmp_gemm *g, mmp_format a, mmp_format b, mmp_format c, mmp_format d,
                   int64_t m, int64_t n, int64_t k);
/* Validates sizes (> 0), leading dims (>= rows/cols, even for 4-bit), formats. */
mmp_status mmp_gemm_check(const mmp_gemm *g);

/* The index of element (i, j); device code may call it too (nvcc: __host__ __device__). */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline size_t mmp_gemm_index(mmp_layout l, int64_t ld, int64_t i, int64_t j)
{
    return l == MMP_LAYOUT_ROW ? (size_t)(i * ld + j) : (size_t)(j * ld + i);
}
/* Number of elements a buffer of rows x cols with this layout and ld spans. */
size_t mmp_gemm_span(mmp_layout l, int64_t ld, int64_t rows, int64_t cols);
const char *mmp_layout_name(mmp_layout l);   /* "row" / "col" */

#ifdef __cplusplus
}
#endif
#endif
