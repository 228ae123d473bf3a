/* metrics_sub.c — the subnormal-factor excess Shat - S of the default bound (metrics.h,
 * mmp_metrics_subnormal_excess: the derivation is there).
 *
 * Only products with a subnormal factor contribute: for a subnormal a_ik every j of row i, for a
 * subnormal b_kj (a_ik normal) every i; the work is the number of subnormals times m or n, rows
 * of the output on every core (fixed blocks, so the sums are the same on any thread count).
 */
#include <math.h>
#include <stdlib.h>

#include "mmaprobe/metrics.h"
#include "ref_internal.h"

typedef struct {
    double *excess, *sub_abs;
    const void *a, *b;
    mmp_format fa, fb;
    mmp_layout la, lb;
    int64_t lda, ldb, m, n, k;
    double alpha, min_a, min_b;
    const int64_t *bstart, *bcol;   /* subnormal columns of row k of B: bcol[bstart[k] .. bstart[k+1]) */
} sub_job;

static int is_sub(double x, double min_normal) { return x != 0 && isfinite(x) && fabs(x) < min_normal; }

static void sub_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    const sub_job *J = ctx;
    for (int64_t i = i0; i < i1; i++) {
        double *row = J->excess + i * J->n;
        double *sa = J->sub_abs ? J->sub_abs + i * J->n : NULL;
        for (int64_t j = 0; j < J->n; j++) row[j] = 0;
        if (sa) for (int64_t j = 0; j < J->n; j++) sa[j] = 0;
        for (int64_t kk = 0; kk < J->k; kk++) {
            double a = mmp_format_load(J->a, mmp_gemm_index(J->la, J->lda, i, kk), J->fa);
            if (a == 0 || !isfinite(a)) continue;
            double aa = fabs(a), ah = aa < J->min_a ? J->min_a : aa;
            if (aa < J->min_a) {
                for (int64_t j = 0; j < J->n; j++) {
                    double b = mmp_format_load(J->b, mmp_gemm_index(J->lb, J->ldb, kk, j), J->fb);
                    if (b == 0 || !isfinite(b)) continue;
                    double bb = fabs(b), bh = bb < J->min_b ? J->min_b : bb;
                    row[j] += J->alpha * (ah * bh - aa * bb);
                    if (sa) sa[j] += J->alpha * aa * bb;
                }
            } else {
                for (int64_t t = J->bstart[kk]; t < J->bstart[kk + 1]; t++) {
                    int64_t j = J->bcol[t];
                    double bb = fabs(mmp_format_load(J->b, mmp_gemm_index(J->lb, J->ldb, kk, j), J->fb));
                    row[j] += J->alpha * aa * (J->min_b - bb);
                    if (sa) sa[j] += J->alpha * aa * bb;
                }
            }
        }
    }
}

mmp_status mmp_metrics_subnormal_excess(double *excess, double *sub_abs, const void *a, mmp_format fa, mmp_layout la,
                                        int64_t lda, const void *b, mmp_format fb, mmp_layout lb,
                                        int64_t ldb, int64_t m, int64_t n, int64_t k, double alpha)
{
    if (!excess || !a || !b || m <= 0 || n <= 0 || k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "subnormal excess: bad arguments");
    const mmp_format_info *ia = mmp_format_get_info(fa), *ib = mmp_format_get_info(fb);
    if (!ia || !ib) return MMP_ERR(MMP_STATUS_INVALID, "subnormal excess: unknown format");
    sub_job J = {excess, sub_abs, a, b, fa, fb, la, lb, lda, ldb, m, n, k, fabs(alpha), ia->min_normal, ib->min_normal,
                 NULL, NULL};
    if (!ia->is_float || !ib->is_float) {
        for (int64_t t = 0; t < m * n; t++) excess[t] = 0;
        if (sub_abs) for (int64_t t = 0; t < m * n; t++) sub_abs[t] = 0;
        return MMP_STATUS_OK;
    }
    int64_t *start = calloc((size_t)k + 1, sizeof *start), cap = 64, used = 0;
    int64_t *col = malloc((size_t)cap * sizeof *col);
    if (!start || !col) { free(start); free(col); return MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess: out of memory"); }
    for (int64_t kk = 0; kk < k; kk++) {
        start[kk] = used;
        for (int64_t j = 0; j < n; j++) {
            if (!is_sub(mmp_format_load(b, mmp_gemm_index(lb, ldb, kk, j), fb), ib->min_normal)) continue;
            if (used == cap) {
                int64_t *nc = realloc(col, (size_t)(cap *= 2) * sizeof *col);
                if (!nc) { free(start); free(col); return MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess: out of memory"); }
                col = nc;
            }
            col[used++] = j;
        }
    }
    start[k] = used;
    J.bstart = start;
    J.bcol = col;
    mmp_parallel_for(mmp_parallel_threads(0), m, 16, sub_rows, &J);
    free(start);
    free(col);
    return MMP_STATUS_OK;
}
