/* ref_exact.c — the exact per-element evaluator: X = alpha (sum_k a_ik b_kj) + beta c_ij in a
 * fixed-point long accumulator (Kulisch), then one rounding. It decides the elements the
 * certified paths' bound leaves open, in place of MPFR, and agrees with ref_mpfr_element bit
 * for bit (tests/check_ref_exact.c); MPFR stays the oracle and takes what this cannot
 * (integer outputs, the integer path's i64).
 *
 * Why it is exact. Every binary64 value is m 2^e with an integer 0 <= m < 2^53 and
 * -1074 <= e <= 971. A term alpha a b (or a b when alpha = 1) is then an integer of at most
 * 159 bits times 2^(ea + eb + ealpha) with ea + eb + ealpha >= -3222; beta c is at most 106
 * bits times 2^(>= -2148). The accumulator holds integers times 2^REF_LACC_GRID_MIN (-3328)
 * in two's complement over REF_LACC_NLIMB 64-bit limbs (up to 2^3327): a term's top bit is below
 * 2^(3 * 971 + 159) = 2^3072, and K <= 2^31 terms add at most 32 bits, so nothing overflows and
 * every addition is exact. Rounding to binary64 (nearest even, subnormals and overflow
 * included) reads the top 53 bits, the next bit and a sticky bit; the ternary value
 * sign(d64 - X) is known from them, and mmp_ref_round_out turns (d64, ternary) into the output
 * format's nearest value, as the MPFR path does.
 * Special values follow MPFR's arithmetic: a NaN operand or 0 x Inf makes a NaN product; +Inf
 * and -Inf products make NaN; alpha and beta c combine likewise. An exact zero sum is -0 only
 * when every product is -0 (integer inputs: +0), as mpfr_sum does; the additions of alpha S
 * and beta c give +0 on cancellation.
 * Cost: a few nanoseconds per product and one pass per element: O(K), no allocation.
 * Why not more slices instead: on `wide` data an entry's exponent lies anywhere in the format's
 * range, so the products that decide an element come from entries far below their row's or
 * column's maximum; exact Ozaki slices would have to reach ~80 bits below the product of the
 * maxima, i.e. tens of slice DGEMMs, where uniform data needs one. The exact accumulator's cost
 * does not depend on the data's range; a device version of it is the way to large sizes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "ref_internal.h"
#include "ref_longacc.h"

int ref_exact_element(double *d64, double *dout, const ref_data *d, int64_t i, int64_t j)
{
    const mmp_gemm *g = d->g;
    if (!mmp_format_get_info(g->d)->is_float) return 0;
    int64_t K = d->k;
    const double *arow = d->a64 + i * K, *bcol = d->b64 + j * K;
    int int_inputs = !mmp_format_get_info(g->a)->is_float && !mmp_format_get_info(g->b)->is_float;
    double alpha = g->alpha;
    int scaled = alpha != 1.0 || g->beta != 0.0, use_alpha = alpha != 1.0 && isfinite(alpha) && alpha != 0.0;
    uint64_t ma = 0;
    int ealpha = 0;
    /* significands of at most 26 bits (every format but fp64): strip the zero low bits of the
     * binary64 significand so that a product fits one 64-bit word */
    int pa = ref_format_bits(g->a), pb = ref_format_bits(g->b);
    int narrow = mmp_format_get_info(g->a)->is_float && mmp_format_get_info(g->b)->is_float && pa <= 26 && pb <= 26;
    int sha = narrow ? 53 - pa : 0, shb = narrow ? 53 - pb : 0;
    if (use_alpha) ref_lacc_decompose(alpha, &ma, &ealpha);
    ref_lacc acc;
    ref_lacc_clear(&acc);
    int s = REF_CLS_FINITE;
    int all_neg_zero = K > 0;
    for (int64_t k = 0; k < K; k++) {
        double x = arow[k], y = bcol[k];
        int c = ref_cls_mul(x, y);
        if (c != REF_CLS_FINITE) { s = ref_cls_add(s, c); all_neg_zero = 0; continue; }
        if (x == 0.0 || y == 0.0) {
            if (int_inputs || signbit(x) == signbit(y)) all_neg_zero = 0;
            continue;
        }
        all_neg_zero = 0;
        if (s != REF_CLS_FINITE) continue;   /* the value is no longer finite: skip the arithmetic */
        uint64_t mx, my, p0, p1, p2 = 0;
        int ex, ey;
        ref_lacc_decompose(x, &mx, &ex);
        ref_lacc_decompose(y, &my, &ey);
        int neg = signbit(x) != signbit(y);
        if (narrow && !use_alpha) {
            ref_lacc_add1(&acc, neg, (mx >> sha) * (my >> shb), ex + ey + sha + shb);
        } else if (use_alpha) {
            ref_lacc_mul3(mx, my, ma, &p0, &p1, &p2);
            neg ^= signbit(alpha) != 0;
            ref_lacc_add(&acc, neg, p0, p1, p2, ex + ey + ealpha);
        } else {
            ref_lacc_mul2(mx, my, &p0, &p1);
            ref_lacc_add(&acc, neg, p0, p1, 0, ex + ey);
        }
    }
    /* Is S an exact zero (and its sign: -0 only when every product is -0, as mpfr_sum), and
     * S's sign otherwise (the accumulator holds alpha S when use_alpha). */
    int s_zero = 0, acc_neg = 0;
    if (s == REF_CLS_FINITE) {
        ref_lacc_settle(&acc);
        acc_neg = (int)(acc.w[REF_LACC_NLIMB - 1] >> 63);   /* two's complement sign (S may round to -0) */
        s_zero = 1;
        for (int l = 0; l < REF_LACC_NLIMB && s_zero; l++) s_zero = acc.w[l] == 0;
    }
    int x = s;
    int x_neg_zero = all_neg_zero;   /* X's sign when X is an exact zero */
    if (scaled) {
        x = ref_cls_scale(alpha, s, s_zero);
        int s_neg = s_zero ? all_neg_zero : (use_alpha ? acc_neg != (signbit(alpha) != 0) : acc_neg);
        if (x == REF_CLS_FINITE && isinf(alpha) && !s_zero)   /* Inf times a finite nonzero S */
            x = (signbit(alpha) != 0) == s_neg ? REF_CLS_PINF : REF_CLS_NINF;
        if (x == REF_CLS_FINITE && alpha == 0.0) ref_lacc_clear(&acc);   /* 0 S: a signed zero */
        x_neg_zero = s_neg != (signbit(alpha) != 0);   /* sign of alpha S (used when it is 0) */
        if (g->beta != 0.0) {
            double c = d->c64[i * d->n + j], beta = g->beta;
            x = ref_cls_add(x, ref_cls_mul(beta, c));
            if (x == REF_CLS_FINITE) {
                if (c == 0.0) {
                    x_neg_zero = x_neg_zero && (signbit(beta) != signbit(c));   /* +0 unless both -0 */
                } else {
                    uint64_t mb, mc, p0, p1;
                    int eb, ec;
                    ref_lacc_decompose(beta, &mb, &eb);
                    ref_lacc_decompose(c, &mc, &ec);
                    ref_lacc_mul2(mb, mc, &p0, &p1);
                    ref_lacc_add(&acc, signbit(beta) != signbit(c), p0, p1, 0, eb + ec);
                    x_neg_zero = 0;   /* a nonzero term: a sum that cancels is +0 */
                }
            }
        }
    }
    double r;
    int t = 0;
    if (x != REF_CLS_FINITE) r = x == REF_CLS_NAN ? NAN : (x == REF_CLS_PINF ? INFINITY : -INFINITY);
    else {
        int z;
        ref_lacc_settle(&acc);
        r = ref_lacc_round(&acc, &t, &z);
        if (z) r = x_neg_zero ? -0.0 : 0.0;
    }
    *d64 = r;
    *dout = mmp_ref_round_out(r, t, g->d);
    return 1;
}

/* ---- elements with a NaN or an infinity in their row of A or column of B ----
 * A non-finite a_ik makes a_ik b_kj non-finite for every j (Inf x 0 and NaN x y are NaN,
 * Inf x y is an infinity), and likewise for b_kj: such an element's sum is NaN or an infinity,
 * decided by the non-finite products alone (the finite ones cannot change it), then alpha and
 * beta c by MPFR's rules. The positions come from per-row and per-column lists, so the cost is
 * the number of non-finite entries, not K. */
mmp_status ref_special_lists(ref_special *sp, const ref_data *d)
{
    memset(sp, 0, sizeof *sp);
    int64_t M = d->m, N = d->n, K = d->k, na = 0, nb = 0;
    for (int64_t t = 0; t < M * K; t++) na += !isfinite(d->a64[t]);
    for (int64_t t = 0; t < K * N; t++) nb += !isfinite(d->b64[t]);
    sp->a_ptr = calloc((size_t)M + 1, sizeof(int64_t));
    sp->b_ptr = calloc((size_t)N + 1, sizeof(int64_t));
    sp->a_k = malloc((size_t)(na ? na : 1) * sizeof(int64_t));
    sp->b_k = malloc((size_t)(nb ? nb : 1) * sizeof(int64_t));
    if (!sp->a_ptr || !sp->b_ptr || !sp->a_k || !sp->b_k) {
        ref_special_free(sp);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (non-finite lists)");
    }
    int64_t t = 0;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t k = 0; k < K; k++)
            if (!isfinite(d->a64[i * K + k])) sp->a_k[t++] = k;
        sp->a_ptr[i + 1] = t;
    }
    t = 0;
    for (int64_t j = 0; j < N; j++) {
        for (int64_t k = 0; k < K; k++)
            if (!isfinite(d->b64[k + j * K])) sp->b_k[t++] = k;
        sp->b_ptr[j + 1] = t;
    }
    return MMP_STATUS_OK;
}

void ref_special_free(ref_special *sp)
{
    free(sp->a_ptr); free(sp->b_ptr); free(sp->a_k); free(sp->b_k);
    memset(sp, 0, sizeof *sp);
}

int ref_special_element(double *d64, double *dout, const ref_special *sp, const ref_data *d, int64_t i,
                        int64_t j)
{
    const mmp_gemm *g = d->g;
    int64_t K = d->k;
    const double *arow = d->a64 + i * K, *bcol = d->b64 + j * K;
    int s = REF_CLS_FINITE;
    for (int64_t q = sp->a_ptr[i]; q < sp->a_ptr[i + 1]; q++) {
        int64_t k = sp->a_k[q];
        s = ref_cls_add(s, ref_cls_mul(arow[k], bcol[k]));
    }
    for (int64_t q = sp->b_ptr[j]; q < sp->b_ptr[j + 1]; q++) {
        int64_t k = sp->b_k[q];
        if (!isfinite(arow[k])) continue;   /* that product was counted with the row */
        s = ref_cls_add(s, ref_cls_mul(arow[k], bcol[k]));
    }
    if (s == REF_CLS_FINITE) return 0;
    int x = s;
    if (g->alpha != 1.0 || g->beta != 0.0) {
        x = ref_cls_scale(g->alpha, s, 0);
        if (g->beta != 0.0) x = ref_cls_add(x, ref_cls_mul(g->beta, d->c64[i * d->n + j]));
    }
    if (x == REF_CLS_FINITE) return 0;
    *d64 = x == REF_CLS_NAN ? NAN : (x == REF_CLS_PINF ? INFINITY : -INFINITY);
    *dout = mmp_ref_round_out(*d64, 0, g->d);
    return 1;
}

typedef struct {
    mmp_ref_result *r;
    const ref_data *d;
    const int64_t *idx;
    unsigned char *done;
} exact_job;

static void exact_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    exact_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t el = j->idx[t];
        j->done[t] = (unsigned char)ref_exact_element(&j->r->d64[el], &j->r->dout[el], j->d, el / j->d->n,
                                                      el % j->d->n);
    }
}

mmp_status ref_exact_list(mmp_ref_result *r, const ref_data *d, int64_t *idx, int64_t *count)
{
    if (*count <= 0) return MMP_STATUS_OK;
    if (r->i64) return MMP_STATUS_OK;   /* the integer path's exact i64: MPFR's */
    unsigned char *done = calloc((size_t)*count, 1);
    if (!done) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (exact list)");
    double t0 = mmp_clock_now();
    exact_job j = {r, d, idx, done};
    mmp_parallel_for(d->threads > 0 ? d->threads : 1, *count, 64, exact_part, &j);
    int64_t kept = 0;
    for (int64_t t = 0; t < *count; t++)
        if (!done[t]) idx[kept++] = idx[t];
    r->n_exact += *count - kept;
    r->time.exact_s += mmp_clock_now() - t0;
    *count = kept;
    free(done);
    return MMP_STATUS_OK;
}
