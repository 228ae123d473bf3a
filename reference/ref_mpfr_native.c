/* ref_mpfr_native.c — single elements straight from the caller's native operands:
 * mmp_ref_element (pure MPFR, the oracle) loads only row i of A, column j of B and C_ij;
 * ref_mpfr_native_list does so for a list of elements in parallel and decides them with the
 * exact evaluator, MPFR only for what it declines (the device path version 2 and its host twin
 * send their undecided elements here). Calls ref_exact.c, ref_mpfr.c and ref_base.c below it. */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/format.h"
#include "ref_internal.h"

/* Row i of A, column j of B and C_ij of the native operands into d (1 x 1 x K, allocated). */
static void load_element(ref_data *d, const void *a, const void *b, const void *c, const mmp_gemm *g, int64_t i,
                         int64_t j)
{
    for (int64_t k = 0; k < g->k; k++) {
        d->a64[k] = mmp_format_load(a, mmp_gemm_index(g->la, g->lda, i, k), g->a);
        d->b64[k] = mmp_format_load(b, mmp_gemm_index(g->lb, g->ldb, k, j), g->b);
    }
    if (d->c64) d->c64[0] = g->beta != 0.0 ? mmp_format_load(c, mmp_gemm_index(g->lc, g->ldc, i, j), g->c) : 0.0;
}

mmp_status mmp_ref_element(double *d64, double *dout, const void *a, const void *b, const void *c,
                           const mmp_gemm *g, int64_t i, int64_t j)
{
    MMP_TRY(mmp_gemm_check(g));
    if (!a || !b || !d64 || !dout) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL argument");
    if (g->beta != 0.0 && !c) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL C with beta != 0");
    if (i < 0 || i >= g->m || j < 0 || j >= g->n)
        return MMP_ERR(MMP_STATUS_INVALID, "reference: element (%lld, %lld) outside %lldx%lld",
                       (long long)i, (long long)j, (long long)g->m, (long long)g->n);
    /* load only row i of A, column j of B and C_ij */
    mmp_gemm g1 = *g;
    g1.m = 1; g1.n = 1;
    ref_data d;
    memset(&d, 0, sizeof d);
    d.g = &g1; d.m = 1; d.n = 1; d.k = g->k; d.threads = 1;
    d.a64 = malloc((size_t)g->k * sizeof(double));
    d.b64 = malloc((size_t)g->k * sizeof(double));
    d.c64 = g->beta != 0.0 ? malloc(sizeof(double)) : NULL;
    if (!d.a64 || !d.b64 || (g->beta != 0.0 && !d.c64)) {
        ref_data_free(&d);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    }
    load_element(&d, a, b, c, g, i, j);
    ref_mpfr_ws *w = ref_mpfr_ws_new(g->k);
    if (!w) { ref_data_free(&d); return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory"); }
    int fits, over;
    ref_mpfr_element(d64, dout, NULL, &fits, &over, w, &d, 0, 0);
    ref_mpfr_ws_free(w);
    ref_data_free(&d);
    return MMP_STATUS_OK;
}

typedef struct {
    mmp_ref_result *r;
    const void *a, *b, *c;
    const mmp_gemm *g;
    const int64_t *idx;
    int failed;
    int64_t n_exact[MMP_PARALLEL_MAX_THREADS];
} native_job;

/* Row i of A, column j of B and C_ij loaded; the exact evaluator (ref_exact.c) decides the
 * element, MPFR what it declines (integer outputs). */
static void native_range(void *ctx, int64_t b, int64_t e, int tid)
{
    native_job *j = ctx;
    const mmp_gemm *g = j->g;
    mmp_gemm g1 = *g;
    g1.m = 1; g1.n = 1;
    ref_data d;
    memset(&d, 0, sizeof d);
    d.g = &g1; d.m = 1; d.n = 1; d.k = g->k; d.threads = 1;
    d.a64 = malloc((size_t)g->k * sizeof(double));
    d.b64 = malloc((size_t)g->k * sizeof(double));
    d.c64 = malloc(sizeof(double));
    if (!d.a64 || !d.b64 || !d.c64) { ref_data_free(&d); j->failed = 1; return; }
    for (int64_t t = b; t < e; t++) {
        int64_t x = j->idx[t], i = x / g->n, col = x % g->n;
        load_element(&d, j->a, j->b, j->c, g, i, col);
        if (ref_exact_element(&j->r->d64[x], &j->r->dout[x], &d, 0, 0)) { j->n_exact[tid]++; continue; }
        if (mmp_ref_element(&j->r->d64[x], &j->r->dout[x], j->a, j->b, j->c, g, i, col) != MMP_STATUS_OK)
            j->failed = 1;
    }
    ref_data_free(&d);
}

mmp_status ref_mpfr_native_list(mmp_ref_result *r, const void *a, const void *b, const void *c,
                                const mmp_gemm *g, const int64_t *idx, int64_t count, int threads)
{
    if (count <= 0) return MMP_STATUS_OK;
    double t0 = mmp_clock_now();
    native_job *j = calloc(1, sizeof *j);
    if (!j) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    *j = (native_job){.r = r, .a = a, .b = b, .c = c, .g = g, .idx = idx};
    mmp_parallel_for(threads, count, 4, native_range, j);
    int64_t exact = 0;
    for (int t = 0; t < MMP_PARALLEL_MAX_THREADS; t++) exact += j->n_exact[t];
    double dt = mmp_clock_now() - t0;
    r->n_exact += exact;
    r->n_mpfr += count - exact;
    if (exact == count) r->time.exact_s += dt;
    else r->time.mpfr_s += dt;
    int failed = j->failed;
    free(j);
    if (failed) return MMP_ERR(MMP_STATUS_INTERNAL, "reference: exact recomputation of an element failed");
    return MMP_STATUS_OK;
}
