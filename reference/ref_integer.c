/* ref_integer.c — integer inputs (int8/uint8/int4/uint4/int32 A and B): the exact int64 D.
 *
 * Taken when alpha and beta are integers with |.| <= 2^31 and C is an integer format (or
 * beta = 0). S = A B exactly:
 *   - one DGEMM when K max|a| max|b| < 2^53 (proved per call: every partial sum is then an
 *     integer below 2^53, so the DGEMM is exact in any order); int8/int4 always qualify;
 *   - otherwise an exact __int128 loop (int32 inputs: products up to 2^62).
 * D = alpha S + beta C in __int128 with overflow checks. D outside int64 (or the __int128
 * computation overflowing) is counted in n_int64_overflow, i64 saturates there and the
 * element's d64/dout come from MPFR. D outside int32 is counted in n_int32_overflow: a fact
 * for the runner (an int32 accumulator wraps there), not an error.
 * d64 = RN64(D) by the int64 -> double conversion (one correct rounding); dout: integer
 * formats wrap D modulo 2^bits (format.h), float formats round D once (mmp_ref_round_out).
 */
#include <math.h>
#include <stdlib.h>

#include <cblas.h>

#include "mmaprobe/format.h"
#include "ref_internal.h"

static int is_int_format(mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    return fi && !fi->is_float;
}

static int small_integer(double x) { return x == trunc(x) && fabs(x) <= 0x1p31; }

int ref_integer_eligible(const mmp_gemm *g)
{
    return is_int_format(g->a) && is_int_format(g->b) && small_integer(g->alpha) &&
           small_integer(g->beta) && (g->beta == 0.0 || is_int_format(g->c));
}

typedef struct {
    const ref_data *d;
    const double *p;      /* exact DGEMM result (row-major) or NULL: use the loop */
    mmp_ref_result *r;
    unsigned char *over64;
    int64_t *over32;      /* per thread */
} int_job;

static void int_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    int_job *j = ctx;
    const ref_data *d = j->d;
    const mmp_gemm *g = d->g;
    __int128 alpha = (__int128)(int64_t)g->alpha, beta = (__int128)(int64_t)g->beta;
    for (int64_t i = b; i < e; i++)
        for (int64_t c = 0; c < d->n; c++) {
            size_t x = (size_t)i * d->n + c, o = x;
            __int128 s = 0;
            if (j->p) {
                s = (__int128)(int64_t)j->p[x];
            } else {
                for (int64_t k = 0; k < d->k; k++)   /* |a b| <= 2^62, K < 2^31: no overflow */
                    s += (__int128)(int64_t)d->a64[i * d->k + k] * (int64_t)d->b64[k + c * d->k];
            }
            __int128 v, t;
            int bad = __builtin_mul_overflow(alpha, s, &v);
            if (d->c64) {
                bad |= __builtin_mul_overflow(beta, (__int128)(int64_t)d->c64[x], &t);
                bad |= __builtin_add_overflow(v, t, &v);
            }
            if (bad || v > INT64_MAX || v < INT64_MIN) {
                j->over64[o] = 1;
                j->over32[tid]++;
                j->r->i64[o] = (bad ? (s >= 0) == (alpha >= 0) : v > 0) ? INT64_MAX : INT64_MIN;
                continue;
            }
            int64_t dv = (int64_t)v;
            j->r->i64[o] = dv;
            if (dv > INT32_MAX || dv < INT32_MIN) j->over32[tid]++;
            double r64 = (double)dv;   /* one rounding to nearest even */
            j->r->d64[o] = r64;
            const mmp_format_info *fi = mmp_format_get_info(g->d);
            if (fi->is_float) {
                int tern = 0;
                if (r64 >= 0x1p63) tern = 1;
                else if (r64 < -0x1p63) tern = -1;
                else {
                    int64_t back = (int64_t)r64;
                    tern = back > dv ? 1 : (back < dv ? -1 : 0);
                }
                j->r->dout[o] = mmp_ref_round_out(r64, tern, g->d);
            } else {
                /* wrap modulo 2^32 first (exact), format.h completes modulo 2^bits */
                uint64_t w = (uint64_t)dv & 0xffffffffull;
                j->r->dout[o] = mmp_format_round((double)w, g->d, MMP_ROUND_NEAREST_EVEN, 0);
            }
        }
}

mmp_status ref_integer_run(mmp_ref_result *r, int *handled, const ref_data *d, const mmp_ref_options *o)
{
    (void)o;
    *handled = 0;
    if (!r->i64) return MMP_STATUS_OK;
    size_t mk = (size_t)d->m * d->k, kn = (size_t)d->k * d->n, mn = (size_t)d->m * d->n;
    double ma = 0, mb = 0;
    for (size_t x = 0; x < mk; x++) ma = fmax(ma, fabs(d->a64[x]));
    for (size_t x = 0; x < kn; x++) mb = fmax(mb, fabs(d->b64[x]));
    double *p = NULL;
    double t0 = mmp_clock_now();
    /* (double)K * ma * mb: two roundings, so < 2^52 computed means < 2^53 exactly */
    if ((double)d->k * ma * mb < 0x1p52) {
        p = malloc(mn * sizeof(double));
        if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the integer product");
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)d->n, (int)d->m, (int)d->k, 1.0,
                    d->b64, (int)d->k, d->a64, (int)d->k, 0.0, p, (int)d->n);   /* row-major P */
        r->n_gemms = 1;
    }
    r->time.gemm_s += mmp_clock_now() - t0;
    unsigned char *over64 = calloc(mn, 1);
    int64_t over32[256] = {0};
    if (!over64) { free(p); return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory"); }
    int_job j = {d, p, r, over64, over32};
    t0 = mmp_clock_now();
    int threads = d->threads > 256 ? 256 : d->threads;
    mmp_parallel_for(threads, d->m, 8, int_rows, &j);
    r->time.combine_s += mmp_clock_now() - t0;
    for (int t = 0; t < threads; t++) r->n_int32_overflow += over32[t];
    /* elements beyond int64: d64/dout from MPFR (i64 stays saturated; MPFR's is the same) */
    size_t cnt = 0;
    for (size_t x = 0; x < mn; x++) cnt += over64[x];
    mmp_status st = MMP_STATUS_OK;
    if (cnt) {
        int64_t *idx = malloc(cnt * sizeof(int64_t));
        if (!idx) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
        else {
            size_t c = 0;
            for (size_t x = 0; x < mn; x++)
                if (over64[x]) idx[c++] = (int64_t)x;
            int64_t keep32 = r->n_int32_overflow;
            st = ref_mpfr_list(r, d, idx, (int64_t)cnt);   /* counts n_int64_overflow */
            r->n_int32_overflow = keep32;                  /* those were counted above */
            free(idx);
        }
    }
    free(p); free(over64);
    *handled = 1;
    return st;
}
