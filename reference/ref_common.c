/* ref_common.c — the reference GEMM's entry point, data loading, threads, the rounding
 * decisions shared by every path, and the |A||B| bound. See include/mmaprobe/reference.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "mmaprobe/core.h"
#include "mmaprobe/format.h"
#include "ref_internal.h"
#include "ref_round.h"

#ifdef MMP_HAVE_OPENBLAS
/* OpenBLAS's own controls (declared here: a netlib cblas.h may come first on the path). */
void openblas_set_num_threads(int threads);
char *openblas_get_corename(void);
#endif

const char *mmp_ref_blas_name(void)
{
#ifdef MMP_HAVE_OPENBLAS
    static char name[64];
    snprintf(name, sizeof name, "OpenBLAS (%s)", openblas_get_corename());
    return name;
#else
    return "reference CBLAS (not OpenBLAS: slow, no thread control)";
#endif
}

/* ---- loading into binary64, column-major ---- */

typedef struct {
    const void *src;
    mmp_format f;
    mmp_layout l;
    int64_t ld, rows;
    double *dst;   /* column-major rows x cols, or row-major when row_major */
    int row_major;
    int64_t cols;
} load_job;

/* [b, e) of the outer dimension: rows when row_major, else columns. */
static void load_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    load_job *j = ctx;
    int64_t inner = j->row_major ? j->cols : j->rows;
    int native = j->f == MMP_FORMAT_FP32 || j->f == MMP_FORMAT_FP64;   /* a C conversion */
    for (int64_t o = b; o < e; o++)
        for (int64_t t = 0; t < inner; t++) {
            int64_t r = j->row_major ? o : t, col = j->row_major ? t : o;
            size_t at = mmp_gemm_index(j->l, j->ld, r, col);
            double v = !native ? mmp_format_load(j->src, at, j->f)
                       : j->f == MMP_FORMAT_FP32 ? (double)((const float *)j->src)[at]
                                                 : ((const double *)j->src)[at];
            j->dst[o * inner + t] = v;
        }
}

static mmp_status load_matrix(double **out, const void *src, mmp_format f, mmp_layout l, int64_t ld,
                              int64_t rows, int64_t cols, int row_major, int threads)
{
    double *p = malloc((size_t)rows * (size_t)cols * sizeof(double));
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate %lld x %lld doubles",
                           (long long)rows, (long long)cols);
    load_job j = {src, f, l, ld, rows, p, row_major, cols};
    mmp_parallel_for(threads, row_major ? rows : cols, 16, load_part, &j);
    *out = p;
    return MMP_STATUS_OK;
}

void ref_data_free(ref_data *d)
{
    free(d->a64); free(d->b64); free(d->c64);
    d->a64 = d->b64 = d->c64 = NULL;
}

mmp_status ref_data_load(ref_data *d, const void *a, const void *b, const void *c, const mmp_gemm *g,
                         int threads)
{
    memset(d, 0, sizeof *d);
    d->g = g; d->m = g->m; d->n = g->n; d->k = g->k; d->threads = threads;
    mmp_status st = load_matrix(&d->a64, a, g->a, g->la, g->lda, g->m, g->k, 1, threads);
    if (st == MMP_STATUS_OK) st = load_matrix(&d->b64, b, g->b, g->lb, g->ldb, g->k, g->n, 0, threads);
    if (st == MMP_STATUS_OK && g->beta != 0.0)
        st = load_matrix(&d->c64, c, g->c, g->lc, g->ldc, g->m, g->n, 1, threads);
    if (st != MMP_STATUS_OK) ref_data_free(d);
    return st;
}

/* ---- results ---- */

void mmp_ref_options_init(mmp_ref_options *o)
{
    memset(o, 0, sizeof *o);
    o->path = MMP_REF_PATH_CERTIFIED;
}

void mmp_ref_result_init(mmp_ref_result *r) { memset(r, 0, sizeof *r); }

void mmp_ref_result_clear(mmp_ref_result *r)
{
    ref_big_free(r->d64); ref_big_free(r->dout); ref_big_free(r->absbound); ref_big_free(r->i64);
    mmp_ref_result_init(r);
}

mmp_status ref_result_alloc(mmp_ref_result *r, int64_t m, int64_t n, int want_abs, int want_i64)
{
    size_t cnt = (size_t)m * (size_t)n;
    mmp_ref_result_clear(r);
    r->m = m; r->n = n;
    r->d64 = ref_big_alloc(cnt * sizeof(double), 0);
    r->dout = ref_big_alloc(cnt * sizeof(double), 0);
    if (want_abs) r->absbound = ref_big_alloc(cnt * sizeof(double), 0);
    if (want_i64) r->i64 = ref_big_alloc(cnt * sizeof(int64_t), 0);
    if (!r->d64 || !r->dout || (want_abs && !r->absbound) || (want_i64 && !r->i64)) {
        mmp_ref_result_clear(r);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the %lld x %lld result",
                       (long long)m, (long long)n);
    }
    return MMP_STATUS_OK;
}

/* ---- rounding decisions ---- */

int ref_format_bits(mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (!fi) return 53;
    if (fi->is_float) return fi->precision;
    return fi->storage_bits;   /* int4: 4, int8: 8, int32: 32 (magnitude bits <= these) */
}

/* The decisions live in ref_round.h (__host__ __device__: the device path decides with the
 * same code); these are the host entry points. */
double mmp_ref_round_out(double d64, int ternary, mmp_format f)
{
    ref_fmt ff;
    if (!ref_fmt_init(&ff, f)) return NAN;
    return ref_round_out_hd(d64, ternary, &ff);
}

int ref_decide(double *d64, double *dout, double sh, double sl, double E, mmp_format f)
{
    ref_fmt ff;
    if (!ref_fmt_init(&ff, f)) return 0;
    return ref_decide_hd(d64, dout, sh, sl, E, &ff);
}

/* ---- |alpha| |A||B| + |beta| |C| ---- */

typedef struct {
    mmp_ref_result *r;
    const ref_data *d;
    const double *ab;   /* row-major fl(|A||B|) */
} abs_job;

static void abs_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    abs_job *j = ctx;
    const ref_data *d = j->d;
    double K = (double)d->k;
    double aa = fabs(d->g->alpha), bb = d->c64 ? fabs(d->g->beta) : 0.0;
    for (int64_t i = b; i < e; i++)
        for (int64_t jj = 0; jj < d->n; jj++) {
            j->r->absbound[i * d->n + jj] =
                ref_absbound_one(j->ab[i * d->n + jj], K, aa, bb, d->c64 ? fabs(d->c64[i * d->n + jj]) : 0.0);
        }
}

mmp_status ref_absbound_cpu(mmp_ref_result *r, const ref_data *d)
{
    size_t na = (size_t)d->m * d->k, nb = (size_t)d->k * d->n, nc = (size_t)d->m * d->n;
    double *aa = malloc(na * sizeof(double)), *ab = malloc(nb * sizeof(double));
    double *cc = malloc(nc * sizeof(double));
    if (!aa || !ab || !cc) {
        free(aa); free(ab); free(cc);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the |A||B| bound");
    }
    for (size_t i = 0; i < na; i++) aa[i] = fabs(d->a64[i]);
    for (size_t i = 0; i < nb; i++) ab[i] = fabs(d->b64[i]);
    /* row-major |A||B| = column-major (|B|^T |A|^T) */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)d->n, (int)d->m, (int)d->k, 1.0, ab,
                (int)d->k, aa, (int)d->k, 0.0, cc, (int)d->n);
    ref_absbound_finish(r, d, cc);
    free(aa); free(ab); free(cc);
    return MMP_STATUS_OK;
}

void ref_absbound_finish(mmp_ref_result *r, const ref_data *d, const double *ab)
{
    abs_job j = {r, d, ab};
    mmp_parallel_for(d->threads, d->m, 8, abs_rows, &j);
}

/* ---- entry points ---- */

/* Which device path: 2, 1, 0 (not the device path) or -1 (version 2 forced but not possible).
 * Version 2 takes every float or integer format; it leaves to version 1 (or the host) what
 * the host handles anyway: exact integer GEMMs, force_mpfr and non-finite alpha/beta. */
static int device_version(const mmp_ref_options *o, const mmp_gemm *g, int integer)
{
    if (o->path != MMP_REF_PATH_CUDA) return 0;
    int want = o->device_version;
    const char *e = getenv("MMP_REF_DEVICE_VERSION");
    if (want == 0 && e && (*e == '1' || *e == '2')) want = *e - '0';
    if (want == 1) return 1;
    int fits = !integer && !o->force_mpfr && isfinite(g->alpha) && isfinite(g->beta);
    if (want == 2 && !fits) return -1;
    return fits ? 2 : 1;
}

mmp_status mmp_ref_gemm(mmp_ref_result *r, const void *a, const void *b, const void *c,
                        const mmp_gemm *g, const mmp_ref_options *o)
{
    if (!r) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL result");
    mmp_ref_options def;
    if (!o) { mmp_ref_options_init(&def); o = &def; }
    MMP_TRY(mmp_gemm_check(g));
    if (!a || !b) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL %s matrix", !a ? "A" : "B");
    if (g->beta != 0.0 && !c) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL C with beta != 0");
    if (o->path != MMP_REF_PATH_CERTIFIED && o->path != MMP_REF_PATH_MPFR && o->path != MMP_REF_PATH_CUDA)
        return MMP_ERR(MMP_STATUS_INVALID, "reference: unknown path %d", (int)o->path);
    if ((uint64_t)g->m * (uint64_t)g->n > ((uint64_t)1 << 40) || g->m > INT32_MAX || g->n > INT32_MAX ||
        g->k > INT32_MAX)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: %lldx%lldx%lld is too large",
                       (long long)g->m, (long long)g->n, (long long)g->k);
    double t0 = mmp_clock_now();
    int threads = mmp_parallel_threads(o->threads);
#ifdef MMP_HAVE_OPENBLAS
    if (o->threads > 0) openblas_set_num_threads(o->threads);   /* else OpenBLAS's own default */
#endif
    int integer = ref_integer_eligible(g);
    MMP_TRY(ref_result_alloc(r, g->m, g->n, o->want_absbound, integer));
    r->is_integer = integer;
    r->path = o->path;
    int version = device_version(o, g, integer);
    if (version == 2) {   /* native operands straight to the device: no host load */
        mmp_status st = ref_cuda2_run(r, a, b, c, g, o, threads);
        if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
        r->time.total_s = mmp_clock_now() - t0;
        return MMP_STATUS_OK;
    }
    if (version < 0) {
        mmp_ref_result_clear(r);
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: device path version 2 cannot take this problem "
                       "(integer inputs with integer alpha/beta, force_mpfr or a non-finite alpha/beta)");
    }
    ref_data d;
    mmp_status st = ref_data_load(&d, a, b, c, g, threads);
    if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
    r->time.convert_s = mmp_clock_now() - t0;
    r->split.load_s = r->time.convert_s;
    int handled = 0;
    if (o->path == MMP_REF_PATH_MPFR) {
        st = ref_mpfr_run(r, &d);
        handled = 1;
    } else if (integer && !o->force_mpfr) {
        st = ref_integer_run(r, &d, o, &handled);   /* host, both certified paths */
    }
    int on_device = 0;
    if (st == MMP_STATUS_OK && !handled) {
        on_device = o->path == MMP_REF_PATH_CUDA;
        st = on_device ? ref_cuda_run(r, &d, o) : ref_certified_run(r, &d, o);
    }
    if (st == MMP_STATUS_OK && o->want_absbound && !on_device)   /* the device path does its own */
        st = ref_absbound_cpu(r, &d);
    ref_data_free(&d);
    if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
    r->time.total_s = mmp_clock_now() - t0;
    return MMP_STATUS_OK;
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
    for (int64_t k = 0; k < g->k; k++) {
        d.a64[k] = mmp_format_load(a, mmp_gemm_index(g->la, g->lda, i, k), g->a);
        d.b64[k] = mmp_format_load(b, mmp_gemm_index(g->lb, g->ldb, k, j), g->b);
    }
    if (d.c64) d.c64[0] = mmp_format_load(c, mmp_gemm_index(g->lc, g->ldc, i, j), g->c);
    ref_mpfr_ws *w = ref_mpfr_ws_new(g->k);
    if (!w) { ref_data_free(&d); return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory"); }
    int fits, over;
    ref_mpfr_element(w, &d, 0, 0, d64, dout, NULL, &fits, &over);
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
} native_job;

static void native_range(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    native_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t x = j->idx[t];
        if (mmp_ref_element(&j->r->d64[x], &j->r->dout[x], j->a, j->b, j->c, j->g, x / j->g->n, x % j->g->n) !=
            MMP_STATUS_OK)
            j->failed = 1;
    }
}

mmp_status ref_mpfr_native_list(mmp_ref_result *r, const void *a, const void *b, const void *c,
                                const mmp_gemm *g, const int64_t *idx, int64_t count, int threads)
{
    if (count <= 0) return MMP_STATUS_OK;
    double t0 = mmp_clock_now();
    native_job j = {r, a, b, c, g, idx, 0};
    mmp_parallel_for(threads, count, 4, native_range, &j);
    r->time.mpfr_s += mmp_clock_now() - t0;
    r->n_mpfr += count;
    if (j.failed) return MMP_ERR(MMP_STATUS_INTERNAL, "reference: MPFR recomputation of an element failed");
    return MMP_STATUS_OK;
}

#ifndef MMP_HAVE_CUDA
mmp_status ref_cuda2_run(mmp_ref_result *r, const void *a, const void *b, const void *c, const mmp_gemm *g,
                         const mmp_ref_options *o, int threads)
{
    (void)r; (void)a; (void)b; (void)c; (void)g; (void)o; (void)threads;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status ref_cuda_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    (void)r; (void)d; (void)o;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status ref_cuda2_upload(void **dev, const void *host, mmp_format f, mmp_layout l, int64_t ld, int64_t rows,
                            int64_t cols, int device)
{
    (void)host; (void)f; (void)l; (void)ld; (void)rows; (void)cols; (void)device;
    *dev = NULL;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

void ref_cuda2_free(void *dev) { (void)dev; }

mmp_status ref_cuda_time_dgemm(double *seconds, int64_t m, int64_t n, int64_t k, int device)
{
    (void)m; (void)n; (void)k; (void)device;
    *seconds = 0;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}
#endif
