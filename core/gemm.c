/* gemm.c — the GEMM problem descriptor: defaults and validation. */
#include "mmaprobe/gemm.h"

static int is_4bit(mmp_format f) { return f == MMP_FORMAT_INT4 || f == MMP_FORMAT_UINT4; }

void mmp_gemm_init(mmp_gemm *g, mmp_format a, mmp_format b, mmp_format c, mmp_format d,
                   int64_t m, int64_t n, int64_t k)
{
    g->m = m; g->n = n; g->k = k;
    g->a = a; g->b = b; g->c = c; g->d = d;
    g->la = g->lb = g->lc = g->ld = MMP_LAYOUT_ROW;
    g->lda = k; g->ldb = n; g->ldc = n; g->ldd = n;
    g->alpha = 1.0; g->beta = 0.0;
}

static mmp_status check_matrix(const char *what, mmp_format f, mmp_layout l, int64_t ld,
                               int64_t rows, int64_t cols)
{
    if (!mmp_format_get_info(f)) return MMP_ERR(MMP_STATUS_INVALID, "%s: unknown format %d", what, (int)f);
    if (l != MMP_LAYOUT_ROW && l != MMP_LAYOUT_COL)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: unknown layout %d", what, (int)l);
    int64_t need = l == MMP_LAYOUT_ROW ? cols : rows;
    if (ld < need)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: leading dimension %lld < %s %lld", what, (long long)ld,
                       l == MMP_LAYOUT_ROW ? "columns" : "rows", (long long)need);
    if (is_4bit(f) && (ld % 2) != 0)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: 4-bit format needs an even leading dimension (got %lld)",
                       what, (long long)ld);
    return MMP_STATUS_OK;
}

mmp_status mmp_gemm_check(const mmp_gemm *g)
{
    if (!g) return MMP_ERR(MMP_STATUS_INVALID, "NULL GEMM descriptor");
    if (g->m <= 0 || g->n <= 0 || g->k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "M, N and K must be positive (got %lldx%lldx%lld)",
                       (long long)g->m, (long long)g->n, (long long)g->k);
    if (g->m > (1LL << 31) || g->n > (1LL << 31) || g->k > (1LL << 31))
        return MMP_ERR(MMP_STATUS_INVALID, "M, N, K must be at most 2^31");
    MMP_TRY(check_matrix("A", g->a, g->la, g->lda, g->m, g->k));
    MMP_TRY(check_matrix("B", g->b, g->lb, g->ldb, g->k, g->n));
    if (g->beta != 0.0) MMP_TRY(check_matrix("C", g->c, g->lc, g->ldc, g->m, g->n));
    MMP_TRY(check_matrix("D", g->d, g->ld, g->ldd, g->m, g->n));
    return MMP_STATUS_OK;
}

size_t mmp_gemm_span(mmp_layout l, int64_t ld, int64_t rows, int64_t cols)
{
    if (rows <= 0 || cols <= 0) return 0;
    return l == MMP_LAYOUT_ROW ? (size_t)((rows - 1) * ld + cols) : (size_t)((cols - 1) * ld + rows);
}

const char *mmp_layout_name(mmp_layout l) { return l == MMP_LAYOUT_COL ? "col" : "row"; }
