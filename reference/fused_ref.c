/* reference/fused_ref.c — the exact mathematics of the fused INT4 group-scaled GEMM with a
 * low-rank residual, per component and fused,
 * its per-element error budgets, and the host emulation of the kernels' arithmetic order (fused.h).
 *
 * Why each reference is exact (then rounded once, to nearest even, to binary64 and to fp32):
 *   DECODE   the int4 value itself.
 *   DEQUANT  q * s: 4 + 11 (fp16) or 4 + 8 (bf16) significant bits: exact in binary64.
 *   QGEMM    acc_G = sum_{k in G} xq wq is an integer, |acc_G| <= 64 g, computed in int64; each
 *            term acc_G sx sw has <= 6 + log2 g + 22 <= 53 bits (g <= 2^25) and an exponent inside
 *            binary64's range (scales are fp16/bf16): exact binary64 terms, summed exactly by
 *            mpfr_sum at EXACT_PREC bits.
 *   DOWN     X_ik A_kt: 8 + 8 bits, exact binary64 products; exact mpfr_sum.
 *   LOWRANK  T*_it exact (as DOWN) times B_tj (8 bits): exact mpfr_mul at EXACT_PREC + 8 bits;
 *            exact mpfr_sum over t.
 *   AFFINE   z + beta summed exactly by mpfr_sum (two fp32 terms).
 *   FUSED    one exact mpfr_sum of every Q term, every R product and beta.
 * EXACT_PREC = 1200 bits exceeds the span of any of these sums (bf16^3 products lie within
 * 2^-399 .. 2^384, plus 24 + log2(terms) bits); the code does not rely on it: every mpfr_sum's
 * ternary value must be 0 (exact) or the reference fails with MMP_STATUS_INTERNAL.
 * Absolute-value sums S_* (the budgets' scale) are computed in binary64 and enlarged by
 * (1 + (n + 2) 2^-53) for n terms, which covers their own rounding (all terms >= 0).
 * Every budget also carries n 2^-150 per fp32 rounding step n, the absolute error of a rounding
 * into fp32's subnormal range (gradual underflow), so that no tiny-value case can fail falsely.
 */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/fused.h"
#include "mmaprobe/metrics.h"

enum { EXACT_PREC = 1200 };
static const double U32 = 0x1p-24;    /* fp32 unit roundoff (round to nearest, CUDA-core fmaf/add) */
static const double TINY = 0x1p-150;  /* absolute error of one rounding into fp32 subnormals */

static const char *part_names[MMP_FUSED_PART_COUNT_] = {"decode", "dequant", "qgemm", "down",
                                                        "lowrank", "affine", "fused"};
const char *mmp_fused_part_name(mmp_fused_part part)
{
    return (unsigned)part < MMP_FUSED_PART_COUNT_ ? part_names[part] : "?";
}

const char *mmp_fused_budget_reason(mmp_fused_part part)
{
    switch (part) {
    case MMP_FUSED_PART_DECODE: return "0 (bitwise): an int4 nibble decodes to one integer";
    case MMP_FUSED_PART_DEQUANT: return "0 (bitwise): int4 x fp16/bf16 has <= 15 significant bits, exact in fp32";
    case MMP_FUSED_PART_QGEMM:
        return "gamma_G(2^-24) sum_G |acc_G| sx sw + G 2^-150: int32 group sums exact, G = K/g fp32 fmaf roundings";
    case MMP_FUSED_PART_DOWN:
        return "gamma_Ke(2^-23) (|X||A|) + Ke 2^-150, Ke = K + ceil(K/4) + 1: bf16 mma, truncating fp32 accumulator";
    case MMP_FUSED_PART_LOWRANK:
        return "(gT + gr + gT gr)(|X||A||B|), gT = gamma_Ke(2^-23), gr = gamma_r(2^-24): T's bound, then r fp32 fmaf";
    case MMP_FUSED_PART_AFFINE: return "0 (bitwise): one fp32 addition, correctly rounded";
    case MMP_FUSED_PART_FUSED:
        return "eQ + eR + (2u + u^2)(SQ + eQ + SR + eR) + u|beta|, u = 2^-24: Q and R budgets, then two fp32 additions";
    default: return "?";
    }
}

void mmp_fused_part_shape(int64_t *rows, int64_t *cols, const mmp_fused_problem *p, mmp_fused_part part)
{
    switch (part) {
    case MMP_FUSED_PART_DECODE:
    case MMP_FUSED_PART_DEQUANT: *rows = p->n; *cols = p->k; break;
    case MMP_FUSED_PART_DOWN: *rows = p->m; *cols = p->rank; break;
    default: *rows = p->m; *cols = p->n; break;
    }
}

void mmp_fused_ref_init(mmp_fused_ref *r) { memset(r, 0, sizeof *r); }
void mmp_fused_ref_clear(mmp_fused_ref *r)
{
    free(r->want64); free(r->want32); free(r->budget); free(r->absq); free(r->absr);
    memset(r, 0, sizeof *r);
}

static double up(double s, double n) { return s * (1 + (n + 2) * 0x1p-53); }
static double bf16(uint16_t b) { return mmp_format_decode(b, MMP_FORMAT_BF16); }

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

/* exact int32 group sum of row i of xq and row j of wq over group G */
static int64_t group_dot(const mmp_fused_host *h, int64_t i, int64_t j, int64_t G)
{
    const int64_t k = h->p.k, g = h->p.group;
    int64_t s = 0;
    for (int64_t e = G * g; e < (G + 1) * g; e++) s += mmp_fused_int4(h->xq, i * k + e) * mmp_fused_int4(h->wq, j * k + e);
    return s;
}

/* T* exact (mpfr, M x r) and S_T */
static mmp_status exact_t(mpfr_t *tx, double *st, const mmp_fused_host *h, sumws *w)
{
    const int64_t m = h->p.m, k = h->p.k, r = h->p.rank;
    for (int64_t i = 0; i < m; i++)
        for (int64_t t = 0; t < r; t++) {
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double prod = bf16(h->x[i * k + kk]) * bf16(h->a[kk * r + t]);   /* exact */
                mpfr_set_d(w->t[kk], prod, MPFR_RNDN);
                s += fabs(prod);
            }
            MMP_TRY(sumws_sum(w, (size_t)k));
            mpfr_set(tx[i * r + t], w->out, MPFR_RNDN);   /* same precision: exact */
            st[i * r + t] = up(s, (double)k);
        }
    return MMP_STATUS_OK;
}

mmp_status mmp_fused_ref_compute(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t m = p->m, n = p->n, k = p->k, rk = p->rank, g = p->group, ng = k / g;
    const mmp_format sf = p->scale_format;
    if ((unsigned)part >= MMP_FUSED_PART_COUNT_) return MMP_ERR(MMP_STATUS_INVALID, "fused reference: bad part %d", part);
    mmp_fused_ref_clear(r);
    r->p = *p;
    r->part = part;
    mmp_fused_part_shape(&r->rows, &r->cols, p, part);
    const size_t cnt = (size_t)(r->rows * r->cols);
    r->want64 = calloc(cnt, sizeof(double));
    r->want32 = calloc(cnt, sizeof(float));
    r->budget = calloc(cnt, sizeof(double));
    r->absq = calloc(cnt, sizeof(double));
    r->absr = calloc(cnt, sizeof(double));
    if (!r->want64 || !r->want32 || !r->budget || !r->absq || !r->absr) {
        mmp_fused_ref_clear(r);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of host memory");
    }
    if (part == MMP_FUSED_PART_DECODE || part == MMP_FUSED_PART_DEQUANT) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t kk = 0; kk < k; kk++) {
                double v = mmp_fused_int4(h->wq, j * k + kk);
                if (part == MMP_FUSED_PART_DEQUANT) v *= mmp_fused_scale(h->sw, j * ng + kk / g, sf);
                r->want64[j * k + kk] = v;
                r->want32[j * k + kk] = (float)v;   /* exact: see the header */
            }
        return MMP_STATUS_OK;
    }
    const double Ke = (double)k + ceil(k / 4.0) + 1;
    const double gT = mmp_metrics_gamma(Ke, mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 0));
    const double gr = mmp_metrics_gamma((double)rk, U32);
    const double gQ = mmp_metrics_gamma((double)ng, U32);
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
            double sq = 0, sr = 0, b = 0;
            if (part == MMP_FUSED_PART_DOWN) {
                mpfr_set(w.t[nt++], tx[i * rk + j], MPFR_RNDN);
                r->budget[e] = gT * stt[i * rk + j] + Ke * TINY;
                r->absr[e] = stt[i * rk + j];
            }
            if (part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_FUSED)
                for (int64_t G = 0; G < ng; G++) {
                    double term = (double)group_dot(h, i, j, G) * mmp_fused_scale(h->sx, i * ng + G, sf) *
                                  mmp_fused_scale(h->sw, j * ng + G, sf);   /* exact, see header */
                    mpfr_set_d(w.t[nt++], term, MPFR_RNDN);
                    sq += fabs(term);
                }
            if (part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED)
                for (int64_t t = 0; t < rk; t++) {
                    double bv = bf16(h->b[t * n + j]);
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
            sq = up(sq, (double)ng);
            sr = up(sr, (double)rk);
            double eq = gQ * sq + (double)ng * TINY;
            double er = (gT + gr + gT * gr) * sr + (Ke + rk) * TINY;
            if (part == MMP_FUSED_PART_QGEMM) { r->budget[e] = eq; r->absq[e] = sq; }
            if (part == MMP_FUSED_PART_LOWRANK) { r->budget[e] = er; r->absr[e] = sr; }
            if (part == MMP_FUSED_PART_FUSED) {
                r->absq[e] = sq;
                r->absr[e] = sr;
                r->budget[e] = up(eq + er + (2 * U32 + U32 * U32) * (sq + eq + sr + er) + U32 * fabs(b), 8) + 2 * TINY;
            }
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

/* ---- host emulation of the kernels' order ---- */
static float emul_q(const mmp_fused_host *h, int64_t i, int64_t j)
{
    const int64_t ng = h->p.k / h->p.group;
    float y = 0.0f;
    for (int64_t G = 0; G < ng; G++) {
        float s = (float)mmp_fused_scale(h->sx, i * ng + G, h->p.scale_format) *
                  (float)mmp_fused_scale(h->sw, j * ng + G, h->p.scale_format);
        y = fmaf((float)group_dot(h, i, j, G), s, y);
    }
    return y;
}

mmp_status mmp_fused_emulate(void *y, const mmp_fused_host *h, mmp_fused_part part, const float *t_gpu)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t m = p->m, n = p->n, k = p->k, rk = p->rank, g = p->group, ng = k / g;
    if (part == MMP_FUSED_PART_DECODE || part == MMP_FUSED_PART_DEQUANT) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t kk = 0; kk < k; kk++) {
                int q = mmp_fused_int4(h->wq, j * k + kk);
                if (part == MMP_FUSED_PART_DECODE) ((int8_t *)y)[j * k + kk] = (int8_t)q;
                else ((float *)y)[j * k + kk] = (float)q * (float)mmp_fused_scale(h->sw, j * ng + kk / g, p->scale_format);
            }
        return MMP_STATUS_OK;
    }
    float *out = y;
    if (part == MMP_FUSED_PART_AFFINE) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) out[i * n + j] = h->z[i * n + j] + h->beta[j];
        return MMP_STATUS_OK;
    }
    float *t = NULL;
    if (part != MMP_FUSED_PART_QGEMM) {
        t = malloc(sizeof *t * (size_t)(m * rk));
        if (!t) return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused emulation: out of host memory");
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < rk; c++) {
                float acc = 0.0f;
                if (t_gpu) acc = t_gpu[i * rk + c];
                else
                    for (int64_t kk = 0; kk < k; kk++)
                        acc = fmaf((float)bf16(h->x[i * k + kk]), (float)bf16(h->a[kk * rk + c]), acc);
                t[i * rk + c] = acc;
            }
    }
    if (part == MMP_FUSED_PART_DOWN) {
        memcpy(out, t, sizeof *t * (size_t)(m * rk));
        free(t);
        return MMP_STATUS_OK;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float q = part == MMP_FUSED_PART_LOWRANK ? 0.0f : emul_q(h, i, j);
            float rr = 0.0f;
            if (t)
                for (int64_t c = 0; c < rk; c++) rr = fmaf(t[i * rk + c], (float)bf16(h->b[c * n + j]), rr);
            float v = part == MMP_FUSED_PART_QGEMM ? q : part == MMP_FUSED_PART_LOWRANK ? rr : q + rr;
            if (part == MMP_FUSED_PART_FUSED) v = v + h->beta[j];
            out[i * n + j] = v;
        }
    free(t);
    return MMP_STATUS_OK;
}

/* ---- comparison ---- */
void mmp_fused_check_compare(mmp_fused_check *c, const void *got, const mmp_fused_ref *r)
{
    memset(c, 0, sizeof *c);
    c->n = r->rows * r->cols;
    c->first_bad = -1;
    for (int64_t e = 0; e < c->n; e++) {
        double v;
        int bad;
        if (r->part == MMP_FUSED_PART_DECODE) {
            v = ((const int8_t *)got)[e];
        } else {
            float f = ((const float *)got)[e];
            v = f;
            if (isnan(f)) c->n_nan++;
        }
        double err = fabs(v - r->want64[e]);
        if (r->budget[e] > 0) {
            bad = !(err <= r->budget[e]);
            double ratio = err / r->budget[e];
            if (ratio > c->max_ratio || isnan(ratio)) c->max_ratio = isnan(ratio) ? INFINITY : ratio;
        } else {
            bad = r->part == MMP_FUSED_PART_DECODE ? v != r->want64[e]
                                                    : memcmp(&((const float *)got)[e], &r->want32[e], 4) != 0;
        }
        if (err > c->max_err || isnan(err)) c->max_err = isnan(err) ? INFINITY : err;
        if (r->budget[e] > c->max_budget) c->max_budget = r->budget[e];
        if (bad) {
            if (c->first_bad < 0) c->first_bad = e;
            c->n_bad++;
        }
    }
}

int64_t mmp_fused_bitwise_diff(const void *a, const void *b, int64_t count, mmp_fused_part part, int64_t *first)
{
    const size_t es = part == MMP_FUSED_PART_DECODE ? 1 : 4;
    int64_t nd = 0;
    if (first) *first = -1;
    for (int64_t e = 0; e < count; e++)
        if (memcmp((const char *)a + e * es, (const char *)b + e * es, es) != 0) {
            if (first && *first < 0) *first = e;
            nd++;
        }
    return nd;
}

void mmp_fused_check_print(FILE *out, const char *label, const mmp_fused_check *c, const mmp_fused_ref *r)
{
    fprintf(out, "%-34s %-8s %s n=%lld bad=%lld nan=%lld max_err=%.3e max_budget=%.3e max_err/budget=%.3g",
            label, mmp_fused_part_name(r->part), c->n_bad ? "FAIL" : "PASS", (long long)c->n,
            (long long)c->n_bad, (long long)c->n_nan, c->max_err, c->max_budget, c->max_ratio);
    if (c->n_bad)
        fprintf(out, " first_bad=(%lld,%lld)", (long long)(c->first_bad / r->cols), (long long)(c->first_bad % r->cols));
    fprintf(out, "  budget: %s\n", mmp_fused_budget_reason(r->part));
}
