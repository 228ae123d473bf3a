/* reference/fused_mpfr.c — the fused operator's exact reference by MPFR: every sum an exact
 * mpfr_sum (its ternary value is checked to be 0, else MMP_STATUS_INTERNAL), rounded once to
 * binary64 and to fp32. Slow (an MPFR sum per element); the oracle that fused_exact.c must agree
 * with bit for bit (tests/check_fused.c). EXACT_PREC = 1200 bits exceeds the span of every sum
 * (bf16^3 products lie within 2^-399 .. 2^384, plus 24 + log2(terms) bits); the code does not rely
 * on it. Why each sum is exact: fused_ref.c.
 */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "fused_internal.h"

enum { EXACT_PREC = 1200 };

/* the exact int32 sum over group G of row i of xq times row j of wq, from the packed nibbles
 * (independent of the unpacked ones fused_exact.c uses) */
static int64_t group_dot(const mmp_fused_host *h, int64_t i, int64_t j, int64_t G)
{
    const int64_t k = h->p.k, g = h->p.group;
    int64_t s = 0;
    for (int64_t e = G * g; e < (G + 1) * g; e++) s += mmp_fused_int4(h->xq, i * k + e) * mmp_fused_int4(h->wq, j * k + e);
    return s;
}

/* exact-sum workspace */
typedef struct sumws {
    mpfr_t *t;
    mpfr_ptr *tp;
    size_t cap;
    mpfr_t out;
} sumws;

static mmp_status sumws_init(sumws *w, size_t cap)
{
    w->cap = cap;
    w->t = malloc(sizeof *w->t * cap);
    w->tp = malloc(sizeof *w->tp * cap);
    if (!w->t || !w->tp) {
        free(w->t); free(w->tp);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of memory for %zu MPFR terms", cap);
    }
    for (size_t i = 0; i < cap; i++) {
        mpfr_init2(w->t[i], EXACT_PREC + 16);
        w->tp[i] = w->t[i];
    }
    mpfr_init2(w->out, EXACT_PREC);
    return MMP_STATUS_OK;
}
static void sumws_clear(sumws *w)
{
    for (size_t i = 0; i < w->cap; i++) mpfr_clear(w->t[i]);
    mpfr_clear(w->out);
    free(w->t); free(w->tp);
}
/* w->out = exact sum of the first n terms; INTERNAL if it was not exact */
static mmp_status sumws_sum(sumws *w, size_t n)
{
    if (mpfr_sum(w->out, w->tp, (unsigned long)n, MPFR_RNDN) != 0)
        return MMP_ERR(MMP_STATUS_INTERNAL, "fused reference: an exact sum of %zu terms needed more than %d bits",
                       n, EXACT_PREC);
    return MMP_STATUS_OK;
}

/* T* exact (mpfr, M x r) and S_T */
static mmp_status exact_t(mpfr_t *tx, double *st, const mmp_fused_host *h, sumws *w)
{
    const int64_t m = h->p.m, k = h->p.k, r = h->p.rank;
    for (int64_t i = 0; i < m; i++)
        for (int64_t t = 0; t < r; t++) {
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double prod = ref_fused_bf16(h->x[i * k + kk]) * ref_fused_bf16(h->a[kk * r + t]);   /* exact */
                mpfr_set_d(w->t[kk], prod, MPFR_RNDN);
                s += fabs(prod);
            }
            MMP_TRY(sumws_sum(w, (size_t)k));
            mpfr_set(tx[i * r + t], w->out, MPFR_RNDN);   /* same precision: exact */
            st[i * r + t] = ref_fused_enlarge(s, (double)k);
        }
    return MMP_STATUS_OK;
}

mmp_status ref_fused_compute_mpfr(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t m = p->m, n = p->n, k = p->k, rk = p->rank;
    const mmp_format sf = p->scale_format;
    int done;
    MMP_TRY(ref_fused_begin(r, h, part, &done));
    if (done) return MMP_STATUS_OK;
    ref_fused_consts c;
    ref_fused_consts_make(&c, p);
    const int64_t ng = c.groups;
    size_t cap = (size_t)(k > ng + rk + 2 ? k : ng + rk + 2);
    sumws w;
    MMP_TRY(sumws_init(&w, cap));
    mmp_status st = MMP_STATUS_OK;
    mpfr_t *tx = NULL;
    double *stt = NULL;
    const int need_t = part == MMP_FUSED_PART_DOWN || part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED;
    if (need_t) {
        tx = malloc(sizeof *tx * (size_t)(m * rk));
        stt = malloc(sizeof *stt * (size_t)(m * rk));
        if (!tx || !stt) { free(tx); free(stt); sumws_clear(&w); return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of memory for T"); }
        for (int64_t i = 0; i < m * rk; i++) mpfr_init2(tx[i], EXACT_PREC);
        if ((st = exact_t(tx, stt, h, &w)) != MMP_STATUS_OK) goto done;
    }
    for (int64_t i = 0; i < r->rows; i++)
        for (int64_t j = 0; j < r->cols; j++) {
            const int64_t e = i * r->cols + j;
            size_t nt = 0;
            double sq = 0, sr = 0, b = 0, s_t = 0;
            if (part == MMP_FUSED_PART_DOWN) {
                mpfr_set(w.t[nt++], tx[i * rk + j], MPFR_RNDN);
                s_t = stt[i * rk + j];
            }
            if (part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_FUSED)
                for (int64_t G = 0; G < ng; G++) {
                    double term = (double)group_dot(h, i, j, G) * mmp_fused_scale(h->sx, i * ng + G, sf) *
                                  mmp_fused_scale(h->sw, j * ng + G, sf);   /* exact, see fused_ref.c */
                    mpfr_set_d(w.t[nt++], term, MPFR_RNDN);
                    sq += fabs(term);
                }
            if (part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED)
                for (int64_t t = 0; t < rk; t++) {
                    double bv = ref_fused_bf16(h->b[t * n + j]);
                    if (mpfr_mul_d(w.t[nt++], tx[i * rk + t], bv, MPFR_RNDN) != 0) {   /* exact: prec + 16 bits */
                        st = MMP_ERR(MMP_STATUS_INTERNAL, "fused reference: T*B product not exact");
                        goto done;
                    }
                    sr += stt[i * rk + t] * fabs(bv);
                }
            if (part == MMP_FUSED_PART_AFFINE) mpfr_set_flt(w.t[nt++], h->z[i * n + j], MPFR_RNDN);
            if (part == MMP_FUSED_PART_AFFINE || part == MMP_FUSED_PART_FUSED) {
                b = h->beta[j];
                mpfr_set_flt(w.t[nt++], h->beta[j], MPFR_RNDN);
            }
            if ((st = sumws_sum(&w, nt)) != MMP_STATUS_OK) goto done;
            r->want64[e] = mpfr_get_d(w.out, MPFR_RNDN);
            r->want32[e] = mpfr_get_flt(w.out, MPFR_RNDN);
            ref_fused_budget(r, e, &c, sq, sr, b, s_t);
        }
done:
    if (tx) {
        for (int64_t i = 0; i < m * rk; i++) mpfr_clear(tx[i]);
        free(tx);
    }
    free(stt);
    sumws_clear(&w);
    return st;
}
