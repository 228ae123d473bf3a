/* cublas_plan.h — (internal) mmaprobe's row/column-major GEMM in cuBLAS's column-major terms,
 * and the staging of unaligned matrices for cuBLASLt. Host-only C so that the CPU tests
 * (suites/check_cublas_plan.c) check it against the BLAS definition without a GPU.
 *
 * Usage (kernels/cublas.cu):
 *   mmp_cublas_plan p;
 *   mmp_cublas_plan_make(&p, args);      // out(mm x nn, col-major, ld = args->ldd) = op_p(P) op_q(Q)
 *   cublasGemmEx(h, p.op_p ? T : N, p.op_q ? T : N, p.mm, p.nn, p.kk, .., p.p, .., p.ldp, p.q, .., p.ldq, ..)
 *
 * Column-major D: D = op(A) op(B). Row-major D: its column-major view is D^T (N x M), so
 * D^T = op(B^T) op(A^T); a row-major X read column-major is X^T with the same ld.
 */
#ifndef MMAPROBE_KERNELS_CUBLAS_PLAN_H
#define MMAPROBE_KERNELS_CUBLAS_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "mmaprobe/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MMP_CUBLAS_OP_N = 0, MMP_CUBLAS_OP_T = 1 };

typedef struct mmp_cublas_plan {
    int op_p, op_q;                /* MMP_CUBLAS_OP_N / _T */
    int64_t mm, nn, kk;            /* out is mm x nn (column-major view of D, ld = ldd) */
    const void *p, *q;             /* first and second operand as stored */
    int64_t ldp, ldq;
    int64_t p_rows, p_cols, q_rows, q_cols; /* stored shapes (before op), column-major */
} mmp_cublas_plan;

void mmp_cublas_plan_make(mmp_cublas_plan *plan, const mmp_kernel_args *a);

/* Staging for cuBLASLt (16-byte aligned pointers and leading dimensions). */
#define MMP_CUBLASLT_WORKSPACE ((size_t)32 << 20) /* cuBLASLt's recommended size on Hopper */
/* 1 if a matrix at p with leading dimension ld (elements of elem bytes) must be staged. */
int mmp_cublas_misaligned(const void *p, int64_t ld, size_t elem);
/* The staged leading dimension of a column-major rows x cols matrix: rows rounded up to 16. */
int64_t mmp_cublas_staged_ld(int64_t rows);
/* Bytes of a staged rows x cols matrix, rounded up to 256 (offsets stay aligned). */
size_t mmp_cublas_stage_bytes(int64_t rows, int64_t cols, size_t elem);
/* The cuBLASLt kernels' workspace: cuBLASLt's own, then staging regions for the first and the
 * second operand (P, Q: A or B, 1-byte elements, either orientation) and for D (elements up
 * to 4 bytes). off[0..2] get the byte offsets of the P, Q and D regions; returns the total. */
size_t mmp_cublaslt_workspace_layout(size_t off[3], int64_t m, int64_t n, int64_t k);
size_t mmp_cublaslt_workspace_bytes(int64_t m, int64_t n, int64_t k);

#ifdef __cplusplus
}
#endif
#endif
