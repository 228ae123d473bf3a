/* ref_mpfr.c — path 1: the pure MPFR reference, the model every other path must match bit for
 * bit. For element (i, j):
 *   1. every product a_ik b_kj exactly (128-bit MPFR numbers: binary64 x binary64 needs 106);
 *   2. their sum S exactly: mpfr_sum into a precision that spans the products' exponents
 *      (max exponent - min exponent + 128 + log2 K + 2 bits), so no rounding happens;
 *   3. X = alpha S + beta C_ij exactly (precisions add up for the product, span for the sum);
 *   4. d64 = mpfr_get_d(X, RNDN): ONE rounding to binary64, subnormals included;
 *      dout: float formats through mmp_ref_round_out (d64 and the ternary sign(d64 - X) carry
 *      enough to round X once); integer formats: mpfr_rint(X) then wrap modulo 2^32 (which
 *      format.h's modulo 2^bits then completes).
 * Special values are MPFR's: NaN products (0 * Inf, NaN) give NaN, +Inf + -Inf gives NaN.
 * Rows are spread over threads (mmp_parallel_for); each thread owns its MPFR workspace.
 * Cost: linear in the multiply-adds, the slow anchor the certified path is timed against
 * (bench/bench_reference.c; measured: results/host/bench/reference-cpu.txt).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>

#include <gmp.h>
#include <mpfr.h>

#include "mmaprobe/format.h"
#include "ref_internal.h"

#define PROD_PREC 128

struct ref_mpfr_ws {
    int64_t k;
    mpfr_t *prod;
    mpfr_ptr *ptr;
    mpfr_t s, t1, t2, x, y;
    mpz_t z;
};

ref_mpfr_ws *ref_mpfr_ws_new(int64_t k)
{
    ref_mpfr_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->k = k;
    w->prod = malloc((size_t)k * sizeof(mpfr_t));
    w->ptr = malloc((size_t)k * sizeof(mpfr_ptr));
    if (!w->prod || !w->ptr) {
        free(w->prod); free(w->ptr); free(w);
        return NULL;
    }
    for (int64_t i = 0; i < k; i++) {
        mpfr_init2(w->prod[i], PROD_PREC);
        w->ptr[i] = w->prod[i];
    }
    mpfr_inits2(PROD_PREC, w->s, w->t1, w->t2, w->x, w->y, (mpfr_ptr)0);
    mpz_init(w->z);
    return w;
}

void ref_mpfr_ws_free(ref_mpfr_ws *w)
{
    if (!w) return;
    for (int64_t i = 0; i < w->k; i++) mpfr_clear(w->prod[i]);
    mpfr_clears(w->s, w->t1, w->t2, w->x, w->y, (mpfr_ptr)0);
    mpz_clear(w->z);
    free(w->prod); free(w->ptr); free(w);
}

static int bits_for(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

/* y = a + b exactly (precision spans both). */
static void exact_add(mpfr_t y, mpfr_t a, mpfr_t b)
{
    mpfr_prec_t p;
    if (!mpfr_regular_p(a) || !mpfr_regular_p(b)) {
        p = mpfr_get_prec(a) > mpfr_get_prec(b) ? mpfr_get_prec(a) : mpfr_get_prec(b);
    } else {
        mpfr_exp_t ea = mpfr_get_exp(a), eb = mpfr_get_exp(b);
        mpfr_exp_t hi = ea > eb ? ea : eb;
        mpfr_exp_t la = ea - (mpfr_exp_t)mpfr_get_prec(a), lb = eb - (mpfr_exp_t)mpfr_get_prec(b);
        mpfr_exp_t lo = la < lb ? la : lb;
        p = (mpfr_prec_t)(hi - lo + 2);
    }
    if (p < MPFR_PREC_MIN) p = MPFR_PREC_MIN;
    mpfr_set_prec(y, p);
    mpfr_add(y, a, b, MPFR_RNDN);
}

void ref_mpfr_element(double *d64, double *dout, int64_t *i64, int *fits, int *int32_over, ref_mpfr_ws *w,
                      const ref_data *d, int64_t i, int64_t j)
{
    const mmp_gemm *g = d->g;
    int64_t K = d->k;
    long emax = LONG_MIN, emin = LONG_MAX;
    /* integers have no signed zero: (-3) * 0 is +0 (IEEE would give -0, and a sum of such
     * products -0, where every integer path gives +0) */
    int int_inputs = !mmp_format_get_info(g->a)->is_float && !mmp_format_get_info(g->b)->is_float;
    for (int64_t k = 0; k < K; k++) {
        double a = d->a64[i * K + k], b = d->b64[k + j * K];
        mpfr_set_d(w->prod[k], a, MPFR_RNDN);
        mpfr_mul_d(w->prod[k], w->prod[k], b, MPFR_RNDN);   /* exact: 106 <= 128 bits */
        if (int_inputs && mpfr_zero_p(w->prod[k])) mpfr_set_zero(w->prod[k], 1);
        if (mpfr_regular_p(w->prod[k])) {
            long e = mpfr_get_exp(w->prod[k]);
            if (e > emax) emax = e;
            if (e < emin) emin = e;
        }
    }
    mpfr_prec_t ps = PROD_PREC;
    if (emax != LONG_MIN) ps = (mpfr_prec_t)(emax - emin) + PROD_PREC + bits_for(K) + 2;
    mpfr_set_prec(w->s, ps);
    mpfr_sum(w->s, w->ptr, (unsigned long)K, MPFR_RNDN);   /* exact at this precision */
    mpfr_ptr x = w->s;
    if (g->alpha != 1.0 || g->beta != 0.0) {
        mpfr_set_prec(w->t1, ps + 53);
        mpfr_mul_d(w->t1, w->s, g->alpha, MPFR_RNDN);        /* exact */
        x = w->t1;
        if (g->beta != 0.0) {
            mpfr_set_prec(w->t2, PROD_PREC);
            mpfr_set_d(w->t2, d->c64[i * d->n + j], MPFR_RNDN);
            mpfr_mul_d(w->t2, w->t2, g->beta, MPFR_RNDN);    /* exact */
            exact_add(w->x, w->t1, w->t2);
            x = w->x;
        }
    }
    double r = mpfr_get_d(x, MPFR_RNDN);
    *d64 = r;
    const mmp_format_info *fi = mmp_format_get_info(g->d);
    if (fi->is_float || mpfr_nan_p(x) || mpfr_inf_p(x)) {
        int t = 0;
        if (mpfr_number_p(x)) t = isinf(r) ? (r > 0 ? 1 : -1) : -mpfr_cmp_d(x, r);
        *dout = mmp_ref_round_out(r, t > 0 ? 1 : (t < 0 ? -1 : 0), g->d);
    } else {
        mpfr_set_prec(w->y, mpfr_get_prec(x) > 64 ? mpfr_get_prec(x) : 64);
        mpfr_rint(w->y, x, MPFR_RNDN);                        /* nearest even integer */
        mpfr_get_z(w->z, w->y, MPFR_RNDN);                    /* exact */
        mpz_fdiv_r_2exp(w->z, w->z, 32);                      /* in [0, 2^32) */
        *dout = mmp_format_round((double)mpz_get_ui(w->z), g->d, MMP_ROUND_NEAREST_EVEN, 0);
    }
    *fits = 0;
    *int32_over = 0;
    if (mpfr_integer_p(x)) {
        *int32_over = mpfr_cmp_si(x, INT32_MIN) < 0 || mpfr_cmp_si(x, INT32_MAX) > 0;
        if (i64 && mpfr_fits_intmax_p(x, MPFR_RNDN)) {
            *i64 = (int64_t)mpfr_get_sj(x, MPFR_RNDN);
            *fits = 1;
        } else if (i64) {
            *i64 = mpfr_sgn(x) > 0 ? INT64_MAX : INT64_MIN;
        }
    }
}

typedef struct {
    mmp_ref_result *r;
    const ref_data *d;
    const int64_t *idx;     /* row-major element indices, or NULL: all, by rows */
    ref_mpfr_ws **ws;
    int64_t *over32, *over64;   /* per thread */
} mpfr_job;

static void do_element(mpfr_job *j, int tid, int64_t e)
{
    const ref_data *d = j->d;
    int64_t i = e / d->n, jj = e % d->n;
    int fits, o32;
    int64_t v = 0;
    ref_mpfr_element(&j->r->d64[e], &j->r->dout[e], j->r->i64 ? &v : NULL, &fits, &o32, j->ws[tid], d, i,
                     jj);
    if (j->r->i64) {
        j->r->i64[e] = v;
        j->over32[tid] += o32;
        j->over64[tid] += !fits;
    }
}

static void mpfr_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    mpfr_job *j = ctx;
    for (int64_t i = b; i < e; i++)
        for (int64_t jj = 0; jj < j->d->n; jj++) do_element(j, tid, i * j->d->n + jj);
}

static void mpfr_list(void *ctx, int64_t b, int64_t e, int tid)
{
    mpfr_job *j = ctx;
    for (int64_t t = b; t < e; t++) do_element(j, tid, j->idx[t]);
}

static mmp_status run_job(mmp_ref_result *r, const ref_data *d, const int64_t *idx, int64_t count)
{
    int threads = d->threads;
    int64_t items = idx ? count : d->m;
    if (threads > items) threads = items > 0 ? (int)items : 1;
    if (threads > 256) threads = 256;
    ref_mpfr_ws *ws[256] = {0};
    int64_t over32[256] = {0}, over64[256] = {0};
    for (int t = 0; t < threads; t++)
        if (!(ws[t] = ref_mpfr_ws_new(d->k))) {
            for (int u = 0; u < t; u++) ref_mpfr_ws_free(ws[u]);
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate MPFR workspaces");
        }
    mpfr_job j = {r, d, idx, ws, over32, over64};
    double t0 = mmp_clock_now();
    if (idx) mmp_parallel_for(threads, count, 16, mpfr_list, &j);
    else mmp_parallel_for(threads, d->m, 1, mpfr_rows, &j);
    r->time.mpfr_s += mmp_clock_now() - t0;
    for (int t = 0; t < threads; t++) {
        ref_mpfr_ws_free(ws[t]);
        r->n_int32_overflow += over32[t];
        r->n_int64_overflow += over64[t];
    }
    r->n_mpfr += idx ? count : d->m * d->n;
    return MMP_STATUS_OK;
}

mmp_status ref_mpfr_list(mmp_ref_result *r, const ref_data *d, const int64_t *idx, int64_t count)
{
    if (count <= 0) return MMP_STATUS_OK;
    return run_job(r, d, idx, count);
}

mmp_status ref_mpfr_run(mmp_ref_result *r, const ref_data *d)
{
    r->path = MMP_REF_PATH_MPFR;
    return run_job(r, d, NULL, 0);
}

int ref_mpfr_instead(mmp_status *st, mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    const mmp_gemm *g = d->g;
    if (!o->force_mpfr && isfinite(g->alpha) && isfinite(g->beta)) return 0;
    mmp_ref_path keep = r->path;
    *st = ref_mpfr_run(r, d);
    r->path = keep;
    return 1;
}
