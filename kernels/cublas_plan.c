/* cublas_plan.c — the column-major plan and staging sizes of the cublas family (see
 * cublas_plan.h); host C, tested on the CPU by suites/check_cublas_plan.c. */
#include "cublas_plan.h"

#include "mmaprobe/gemm.h"

void mmp_cublas_plan_make(mmp_cublas_plan *c, const mmp_kernel_args *a)
{
    c->kk = a->k;
    if (a->layout_d == MMP_LAYOUT_COL) {          /* D = A B */
        c->mm = a->m; c->nn = a->n;
        c->p = a->a; c->ldp = a->lda; c->q = a->b; c->ldq = a->ldb;
        c->op_p = a->layout_a == MMP_LAYOUT_COL ? MMP_CUBLAS_OP_N : MMP_CUBLAS_OP_T;
        c->op_q = a->layout_b == MMP_LAYOUT_COL ? MMP_CUBLAS_OP_N : MMP_CUBLAS_OP_T;
    } else {                                      /* D^T = B^T A^T */
        c->mm = a->n; c->nn = a->m;
        c->p = a->b; c->ldp = a->ldb; c->q = a->a; c->ldq = a->lda;
        c->op_p = a->layout_b == MMP_LAYOUT_ROW ? MMP_CUBLAS_OP_N : MMP_CUBLAS_OP_T;
        c->op_q = a->layout_a == MMP_LAYOUT_ROW ? MMP_CUBLAS_OP_N : MMP_CUBLAS_OP_T;
    }
    c->p_rows = c->op_p == MMP_CUBLAS_OP_N ? c->mm : c->kk;
    c->p_cols = c->op_p == MMP_CUBLAS_OP_N ? c->kk : c->mm;
    c->q_rows = c->op_q == MMP_CUBLAS_OP_N ? c->kk : c->nn;
    c->q_cols = c->op_q == MMP_CUBLAS_OP_N ? c->nn : c->kk;
}

int mmp_cublas_misaligned(const void *p, int64_t ld, size_t elem)
{
    return ((uintptr_t)p % 16) != 0 || ((size_t)ld * elem) % 16 != 0;
}

int64_t mmp_cublas_staged_ld(int64_t rows) { return (rows + 15) / 16 * 16; }

size_t mmp_cublas_stage_bytes(int64_t rows, int64_t cols, size_t elem)
{
    size_t b = (size_t)mmp_cublas_staged_ld(rows) * (size_t)cols * elem;
    return (b + 255) / 256 * 256;
}

size_t mmp_cublaslt_workspace_layout(size_t off[3], int64_t m, int64_t n, int64_t k)
{
    /* A stored r x c holds round16(r) c <= (r + 15) c elements: a region of
     * (max(M, N) + 16) x (K + 16) takes A or B in either orientation, (M + 16) x (N + 16)
     * takes D (M x N or N x M). */
    int64_t mn = m > n ? m : n;
    size_t in = mmp_cublas_stage_bytes(mn + 16, k + 16, 1);
    off[0] = MMP_CUBLASLT_WORKSPACE;
    off[1] = off[0] + in;
    off[2] = off[1] + in;
    return off[2] + mmp_cublas_stage_bytes(m + 16, n + 16, 4);
}

size_t mmp_cublaslt_workspace_bytes(int64_t m, int64_t n, int64_t k)
{
    size_t off[3];
    return mmp_cublaslt_workspace_layout(off, m, n, k);
}
