/* metrics_sub.c — the subnormal-factor excess Shat - S of the default bound (metrics.h,
 * mmp_metrics_subnormal_excess: the derivation is there).
 *
 * Only products with a subnormal factor contribute: for a subnormal a_ik every j of row i, for a
 * subnormal b_kj (a_ik normal) every i; the work is the number of subnormals times m or n, rows
 * of the output on every core (fixed blocks, so the sums are the same on any thread count), after
 * a count of the subnormals from the bits (usually none: then there is no excess) and one pass
 * that decodes |A| and |B| to binary64. mmp_metrics_subnormal_excess_needed asks first whether
 * any element needs it at all (ref_excess_negligible: on bf16 and fp32 wide data none does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/hd.h"
#include "mmaprobe/metrics.h"
#include "ref_internal.h"

typedef struct {
    double *excess, *sub_abs;
    const double *aa, *bh, *bb;     /* |A| (row-major M x K); B: max(|b|, min_b) and |b| (row-major K x N),
                                       0 where the entry is 0 or not finite */
    int64_t m, n, k;
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
            double aa = J->aa[i * J->k + kk];
            if (aa == 0) continue;
            const double *bh = J->bh + kk * J->n, *bb = J->bb + kk * J->n;
            if (aa < J->min_a) {   /* every j (a zero or non-finite b adds 0 * 0) */
                double ah = J->min_a;
                for (int64_t j = 0; j < J->n; j++) row[j] += J->alpha * (ah * bh[j] - aa * bb[j]);
                if (sa) for (int64_t j = 0; j < J->n; j++) sa[j] += J->alpha * aa * bb[j];
            } else {
                for (int64_t t = J->bstart[kk]; t < J->bstart[kk + 1]; t++) {
                    int64_t j = J->bcol[t];
                    row[j] += J->alpha * aa * (J->min_b - bb[j]);
                    if (sa) sa[j] += J->alpha * aa * bb[j];
                }
            }
        }
    }
}

typedef struct {
    double *aa, *bh, *bb;
    const void *a, *b;
    mmp_format fa, fb;
    mmp_layout la, lb;
    int64_t lda, ldb, k, n;
    double min_b;
} decode_job;

static void decode_a(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    decode_job *D = ctx;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t kk = 0; kk < D->k; kk++) {
            double a = mmp_format_load(D->a, mmp_gemm_index(D->la, D->lda, i, kk), D->fa);
            D->aa[i * D->k + kk] = a == 0 || !isfinite(a) ? 0.0 : fabs(a);
        }
}

static void decode_b(void *ctx, int64_t k0, int64_t k1, int tid)
{
    (void)tid;
    decode_job *D = ctx;
    for (int64_t kk = k0; kk < k1; kk++)
        for (int64_t j = 0; j < D->n; j++) {
            double b = mmp_format_load(D->b, mmp_gemm_index(D->lb, D->ldb, kk, j), D->fb);
            double v = b == 0 || !isfinite(b) ? 0.0 : fabs(b);
            D->bb[kk * D->n + j] = v;
            D->bh[kk * D->n + j] = v != 0 && v < D->min_b ? D->min_b : v;
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
    size_t mn = (size_t)m * n;
    if (!ia->is_float || !ib->is_float) {
        memset(excess, 0, mn * sizeof *excess);
        if (sub_abs) memset(sub_abs, 0, mn * sizeof *sub_abs);
        return MMP_STATUS_OK;
    }
    int threads = mmp_parallel_threads(0);
    decode_job D;
    memset(&D, 0, sizeof D);
    D.a = a; D.b = b; D.fa = fa; D.fb = fb; D.la = la; D.lb = lb; D.lda = lda; D.ldb = ldb; D.k = k; D.n = n;
    /* first only count the subnormals (usually none: no excess) */
    if (mmp_metrics_subnormal_count(a, fa, la, lda, m, k) + mmp_metrics_subnormal_count(b, fb, lb, ldb, k, n) == 0) {
        memset(excess, 0, mn * sizeof *excess);
        if (sub_abs) memset(sub_abs, 0, mn * sizeof *sub_abs);
        return MMP_STATUS_OK;
    }
    D.aa = malloc((size_t)m * k * sizeof(double));
    D.bh = malloc((size_t)k * n * sizeof(double));
    D.bb = malloc((size_t)k * n * sizeof(double));
    int64_t *start = calloc((size_t)k + 1, sizeof *start), cap = 64, used = 0;
    int64_t *col = malloc((size_t)cap * sizeof *col);
    mmp_status st = MMP_STATUS_OK;
    if (!D.aa || !D.bh || !D.bb || !start || !col) {
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess: out of memory");
        goto done;
    }
    mmp_parallel_for(threads, m, 16, decode_a, &D);   /* then decode */
    D.min_b = ib->min_normal;
    mmp_parallel_for(threads, k, 16, decode_b, &D);
    for (int64_t kk = 0; kk < k; kk++) {
        start[kk] = used;
        for (int64_t j = 0; j < n; j++) {
            if (!is_sub(D.bb[kk * n + j], ib->min_normal)) continue;
            if (used == cap) {
                int64_t *nc = realloc(col, (size_t)(cap *= 2) * sizeof *col);
                if (!nc) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess: out of memory"); goto done; }
                col = nc;
            }
            col[used++] = j;
        }
    }
    start[k] = used;
    sub_job J = {excess, sub_abs, D.aa, D.bh, D.bb, m, n, k, fabs(alpha), ia->min_normal, ib->min_normal, start, col};
    mmp_parallel_for(threads, m, 16, sub_rows, &J);
done:
    free(D.aa); free(D.bh); free(D.bb);
    free(start);
    free(col);
    return st;
}

/* ---- counting: from the bits (exponent field 0, fraction not 0), by lines on every core ---- */
typedef struct {
    const void *p;
    mmp_format_hd f;
    mmp_layout l;
    int64_t ld, rows, cols;
    int64_t n[MMP_PARALLEL_MAX_THREADS];
} count_job;

static void count_lines(void *ctx, int64_t o0, int64_t o1, int tid)
{
    count_job *J = ctx;
    int row = J->l == MMP_LAYOUT_ROW;
    int64_t inner = row ? J->cols : J->rows, n = 0;
    uint64_t man = (1ull << J->f.man_bits) - 1, ex = (1ull << J->f.exp_bits) - 1;
    for (int64_t o = o0; o < o1; o++)
        for (int64_t q = 0; q < inner; q++) {
            uint64_t b = mmp_format_hd_load_bits(J->p, (size_t)(o * J->ld + q), &J->f) >> J->f.shift;
            n += ((b >> J->f.man_bits) & ex) == 0 && (b & man) != 0;
        }
    J->n[tid] += n;
}

int64_t mmp_metrics_subnormal_count(const void *a, mmp_format f, mmp_layout l, int64_t ld, int64_t rows, int64_t cols)
{
    count_job J;
    memset(&J, 0, sizeof J);
    if (!a || !mmp_format_hd_init(&J.f, f) || !J.f.is_float || rows <= 0 || cols <= 0) return 0;
    J.p = a; J.l = l; J.ld = ld; J.rows = rows; J.cols = cols;
    int64_t outer = l == MMP_LAYOUT_ROW ? rows : cols;
    mmp_parallel_for(mmp_parallel_threads(0), outer, 16, count_lines, &J);
    int64_t n = 0;
    for (int t = 0; t < MMP_PARALLEL_MAX_THREADS; t++) n += J.n[t];
    return n;
}

mmp_status mmp_metrics_subnormal_excess_needed(int *needed, const void *a, mmp_format fa, mmp_layout la, int64_t lda,
                                               const void *b, mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m,
                                               int64_t n, int64_t k, double alpha, const mmp_metrics_excess_skip *skip)
{
    const mmp_format_info *ia = mmp_format_get_info(fa), *ib = mmp_format_get_info(fb);
    if (!needed || !a || !b || !skip || !skip->s || !skip->want || !ia || !ib || m <= 0 || n <= 0 || k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "subnormal excess needed: bad arguments");
    *needed = 1;
    if (!ia->is_float || !ib->is_float) { *needed = 0; return MMP_STATUS_OK; }
    double *ca = calloc((size_t)(2 * m + 2 * n), sizeof *ca);
    if (!ca) return MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess needed: out of memory");
    double *ma = ca + m, *cb = ma + m, *mb = cb + n;   /* rows of A: count, max |a|; columns of B: count, max b^ */
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = 0; q < k; q++) {
            double x = mmp_format_load(a, mmp_gemm_index(la, lda, i, q), fa);
            if (x == 0 || !isfinite(x)) continue;
            ca[i] += is_sub(x, ia->min_normal);
            ma[i] = fmax(ma[i], fabs(x));
        }
    for (int64_t q = 0; q < k; q++)
        for (int64_t j = 0; j < n; j++) {
            double y = mmp_format_load(b, mmp_gemm_index(lb, ldb, q, j), fb);
            if (y == 0 || !isfinite(y)) continue;
            int sub = is_sub(y, ib->min_normal);
            cb[j] += sub;
            mb[j] = fmax(mb[j], sub ? ib->min_normal : fabs(y));
        }
    *needed = 0;
    for (int64_t i = 0; i < m && !*needed; i++)
        for (int64_t j = 0; j < n; j++) {
            double cap = ref_excess_cap(fabs(alpha), ca[i], ia->min_normal, ma[i], cb[j], ib->min_normal, mb[j]);
            if (!ref_excess_negligible(cap, skip->s[i * n + j], skip->want[i * n + j], skip->rel)) {
                *needed = 1;
                break;
            }
        }
    free(ca);
    return MMP_STATUS_OK;
}
