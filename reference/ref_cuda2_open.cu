/* ref_cuda2_open.cu — the elements the device path left open, decided on the host from only
 * their rows of A, columns of B and elements of C.
 *
 * Why: when the operands are the caller's device copies and its host copies are stale (the
 * runner's resident inputs, mmp_ref_options.host_operands), deciding a handful of open elements
 * (a NaN/Inf row of `special` data sends a few to the exact evaluator) would otherwise first
 * bring whole operands back to the host: about 200 ms for bf16 at 8192^2. Here the device
 * decodes just the rows and columns that the open elements read into binary64, and
 * ref_mpfr_native_list decides them as a small problem with binary64 operands holding the same
 * values: the exact result, and so d64 and dout, depend only on the values.
 *
 * Usage (ref_cuda2.cu, after the device stages): ref_cuda2_open_gathered; when it sets *done to
 * 0 (the rows and columns would be more than a quarter of the operands) the caller makes the
 * host copies and decides from them. MMP_REF_GATHER=1 always gathers, =0 never (tests).
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/hd.h"
#include "ref_v2.h"

namespace {

/* dst[v len + q] = operand entry (which[v], q) (rows = 1: rows of A) or (q, which[v])
 * (columns of B), as binary64 */
__global__ void gather_kernel(double *dst, const void *src, mmp_format_hd f, int layout, int64_t ld,
                              const int64_t *which, int64_t count, int64_t len, int rows)
{
    int64_t total = count * len;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t v = t / len, q = t % len, w = which[v];
        dst[t] = mmp_format_hd_load(src, rows ? ref_index(layout, ld, w, q) : ref_index(layout, ld, q, w), &f);
    }
}

/* dst[t] = C(i_t, j_t) as binary64, from the row-major element indices x_t = i_t n + j_t */
__global__ void gather_c_kernel(double *dst, const void *src, mmp_format_hd f, int layout, int64_t ld,
                                const int64_t *idx, int64_t count, int64_t n)
{
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t < count) dst[t] = mmp_format_hd_load(src, ref_index(layout, ld, idx[t] / n, idx[t] % n), &f);
}

int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* position of v in the sorted unique list u[0..n) */
int64_t find(const int64_t *u, int64_t n, int64_t v)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (u[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

unsigned blocks(int64_t count) { return (unsigned)((count + 255) / 256); }

struct scratch {
    int64_t *rows, *cols, *idx2;
    double *ha, *hb, *hc, *c2, *d64, *dout;
    int64_t *d_rows, *d_cols, *d_idx;
    double *da, *db, *dc;
};

void scratch_free(scratch *s)
{
    free(s->rows); free(s->cols); free(s->idx2); free(s->ha); free(s->hb); free(s->hc); free(s->c2);
    free(s->d64); free(s->dout);
    cudaFree(s->d_rows); cudaFree(s->d_cols); cudaFree(s->d_idx); cudaFree(s->da); cudaFree(s->db); cudaFree(s->dc);
}

mmp_status gathered(mmp_ref_result *r, scratch *s, const void *da, const void *db, const void *dc, const mmp_gemm *g,
                    const int64_t *und, int64_t n_und, int threads, int64_t nr, int64_t nc)
{
    int64_t k = g->k, n = g->n;
    int use_c = g->beta != 0.0;
    size_t ar = (size_t)nr * k, bc = (size_t)nc * k, rc = (size_t)nr * nc;
    s->ha = (double *)malloc(ar * sizeof(double));
    s->hb = (double *)malloc(bc * sizeof(double));
    s->idx2 = (int64_t *)malloc((size_t)n_und * sizeof(int64_t));
    s->d64 = (double *)calloc(rc, sizeof(double));
    s->dout = (double *)calloc(rc, sizeof(double));
    if (use_c) { s->hc = (double *)malloc((size_t)n_und * sizeof(double)); s->c2 = (double *)calloc(rc, sizeof(double)); }
    if (!s->ha || !s->hb || !s->idx2 || !s->d64 || !s->dout || (use_c && (!s->hc || !s->c2)))
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the open elements' rows and columns");
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->d_rows, (size_t)nr * sizeof(int64_t)));
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->d_cols, (size_t)nc * sizeof(int64_t)));
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->da, ar * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->db, bc * sizeof(double)));
    MMP_CUDA_CHECK(cudaMemcpy(s->d_rows, s->rows, (size_t)nr * sizeof(int64_t), cudaMemcpyHostToDevice));
    MMP_CUDA_CHECK(cudaMemcpy(s->d_cols, s->cols, (size_t)nc * sizeof(int64_t), cudaMemcpyHostToDevice));
    mmp_format_hd fa, fb, fc;
    mmp_format_hd_init(&fa, g->a); mmp_format_hd_init(&fb, g->b); mmp_format_hd_init(&fc, g->c);
    gather_kernel<<<blocks((int64_t)ar), 256>>>(s->da, da, fa, g->la, g->lda, s->d_rows, nr, k, 1);
    gather_kernel<<<blocks((int64_t)bc), 256>>>(s->db, db, fb, g->lb, g->ldb, s->d_cols, nc, k, 0);
    if (use_c) {
        MMP_CUDA_CHECK(cudaMalloc((void **)&s->d_idx, (size_t)n_und * sizeof(int64_t)));
        MMP_CUDA_CHECK(cudaMalloc((void **)&s->dc, (size_t)n_und * sizeof(double)));
        MMP_CUDA_CHECK(cudaMemcpy(s->d_idx, und, (size_t)n_und * sizeof(int64_t), cudaMemcpyHostToDevice));
        gather_c_kernel<<<(unsigned)((n_und + 255) / 256), 256>>>(s->dc, dc, fc, g->lc, g->ldc, s->d_idx, n_und, n);
    }
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaMemcpy(s->ha, s->da, ar * sizeof(double), cudaMemcpyDeviceToHost));
    MMP_CUDA_CHECK(cudaMemcpy(s->hb, s->db, bc * sizeof(double), cudaMemcpyDeviceToHost));
    if (use_c) MMP_CUDA_CHECK(cudaMemcpy(s->hc, s->dc, (size_t)n_und * sizeof(double), cudaMemcpyDeviceToHost));
    for (int64_t t = 0; t < n_und; t++) {
        int64_t i2 = find(s->rows, nr, und[t] / n), j2 = find(s->cols, nc, und[t] % n);
        s->idx2[t] = i2 * nc + j2;
        if (use_c) s->c2[s->idx2[t]] = s->hc[t];
    }
    /* the same values in binary64: A' rows (row-major), B' columns (column-major), C' row-major */
    mmp_gemm g2;
    mmp_gemm_init(&g2, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, g->d, nr, nc, k);
    g2.lb = MMP_LAYOUT_COL;
    g2.ldb = k;
    g2.alpha = g->alpha;
    g2.beta = g->beta;
    mmp_ref_result r2;
    mmp_ref_result_init(&r2);
    r2.d64 = s->d64;
    r2.dout = s->dout;
    mmp_status st = ref_mpfr_native_list(&r2, s->ha, s->hb, use_c ? s->c2 : NULL, &g2, s->idx2, n_und, threads);
    if (st != MMP_STATUS_OK) return st;
    for (int64_t t = 0; t < n_und; t++) {
        r->d64[und[t]] = s->d64[s->idx2[t]];
        r->dout[und[t]] = s->dout[s->idx2[t]];
    }
    r->n_exact += r2.n_exact;
    r->n_mpfr += r2.n_mpfr;
    r->time.exact_s += r2.time.exact_s;
    r->time.mpfr_s += r2.time.mpfr_s;
    return MMP_STATUS_OK;
}

}   // namespace

extern "C" mmp_status ref_cuda2_open_gathered(int *done, mmp_ref_result *r, const void *da, const void *db,
                                              const void *dc, const mmp_gemm *g, const int64_t *und, int64_t n_und,
                                              int threads)
{
    *done = 0;
    const char *e = getenv("MMP_REF_GATHER");   /* tests: 1 always gathers, 0 never */
    int force = e && *e == '1';
    if (n_und <= 0 || !da || !db || (g->beta != 0.0 && !dc) || (e && *e == '0')) return MMP_STATUS_OK;
    scratch s;
    memset(&s, 0, sizeof s);
    s.rows = (int64_t *)malloc((size_t)n_und * sizeof(int64_t));
    s.cols = (int64_t *)malloc((size_t)n_und * sizeof(int64_t));
    if (!s.rows || !s.cols) { scratch_free(&s); return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory"); }
    int64_t nr = 0, nc = 0;
    for (int64_t t = 0; t < n_und; t++) { s.rows[t] = und[t] / g->n; s.cols[t] = und[t] % g->n; }
    qsort(s.rows, (size_t)n_und, sizeof(int64_t), cmp_i64);
    qsort(s.cols, (size_t)n_und, sizeof(int64_t), cmp_i64);
    for (int64_t t = 0; t < n_und; t++) {
        if (t == 0 || s.rows[t] != s.rows[nr - 1]) s.rows[nr++] = s.rows[t];
        if (t == 0 || s.cols[t] != s.cols[nc - 1]) s.cols[nc++] = s.cols[t];
    }
    /* worth it while the gathered rows, columns and their C' are a small part of the operands */
    double part = ((double)(nr + nc) * g->k + (double)nr * nc) * sizeof(double);
    if (!force && part > 0.25 * (double)(mmp_format_bytes(g->a, (size_t)(g->m * g->k)) + mmp_format_bytes(g->b, (size_t)(g->k * g->n)))) {
        scratch_free(&s);
        return MMP_STATUS_OK;
    }
    mmp_status st = gathered(r, &s, da, db, dc, g, und, n_und, threads, nr, nc);
    scratch_free(&s);
    if (st == MMP_STATUS_OK) *done = 1;
    return st;
}
