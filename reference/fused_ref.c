/* reference/fused_ref.c — the fused INT4 group-scaled GEMM with a low-rank residual: its parts'
 * names and shapes, every element's error budget, the host emulation of the kernels' arithmetic
 * order and the comparison (fused.h). The exact results come from fused_exact.c (a long
 * accumulator, the default) and fused_mpfr.c (MPFR, the tests' oracle); both fill the same
 * budgets from the same binary64 sums here.
 *
 * Why each reference is exact (then rounded once, to nearest even, to binary64 and to fp32):
 *   DECODE   the int4 value itself.
 *   DEQUANT  q * s: 4 + 11 (fp16) or 4 + 8 (bf16) significant bits: exact in binary64.
 *   QGEMM    acc_G = sum_{k in G} xq wq is an integer, |acc_G| <= 64 g, computed in int64; each
 *            term acc_G sx sw has <= 6 + log2 g + 22 <= 53 bits (g <= 2^25) and an exponent inside
 *            binary64's range (scales are fp16/bf16): exact binary64 terms, summed exactly.
 *   DOWN     X_ik A_kt: 8 + 8 bits, exact binary64 products, summed exactly into T*.
 *   LOWRANK  T*_it (exact) times B_tj (8 bits), summed exactly over t.
 *   AFFINE   z + beta summed exactly (two fp32 terms).
 *   FUSED    one exact sum of every Q term, every R product and beta.
 * An exact zero is -0 only when every term is -0 (IEEE 754's and mpfr_sum's rule).
 * Absolute-value sums S_* (the budgets' scale) are computed in binary64 and enlarged by
 * (1 + (n + 2) 2^-53) for n terms, which covers their own rounding (all terms >= 0).
 * Every budget also carries n 2^-150 per fp32 rounding step n, the absolute error of a rounding
 * into fp32's subnormal range (gradual underflow), so that no tiny-value case can fail falsely.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/fused.h"
#include "mmaprobe/metrics.h"
#include "fused_internal.h"

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

double ref_fused_enlarge(double s, double n) { return s * (1 + (n + 2) * 0x1p-53); }

mmp_status ref_fused_unpack(int8_t **q8, const uint8_t *q, int64_t rows, int64_t k)
{
    *q8 = malloc((size_t)(rows * k > 0 ? rows * k : 1));
    if (!*q8) return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of host memory (int4 unpack)");
    for (int64_t t = 0; t < rows * k; t++) (*q8)[t] = (int8_t)mmp_fused_int4(q, t);
    return MMP_STATUS_OK;
}

mmp_status ref_fused_begin(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part, int *done)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t n = p->n, k = p->k, g = p->group, ng = k / g;
    *done = 0;
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
    if (part != MMP_FUSED_PART_DECODE && part != MMP_FUSED_PART_DEQUANT) return MMP_STATUS_OK;
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++) {
            double v = mmp_fused_int4(h->wq, j * k + kk);
            if (part == MMP_FUSED_PART_DEQUANT) v *= mmp_fused_scale(h->sw, j * ng + kk / g, p->scale_format);
            r->want64[j * k + kk] = v;
            r->want32[j * k + kk] = (float)v;   /* exact: see the header */
        }
    *done = 1;
    return MMP_STATUS_OK;
}

void ref_fused_consts_make(ref_fused_consts *c, const mmp_fused_problem *p)
{
    c->groups = p->k / p->group;
    c->ke = (double)p->k + ceil(p->k / 4.0) + 1;
    c->g_t = mmp_metrics_gamma(c->ke, mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 0));
    c->g_r = mmp_metrics_gamma((double)p->rank, U32);
    c->g_q = mmp_metrics_gamma((double)c->groups, U32);
}

void ref_fused_budget(mmp_fused_ref *r, int64_t e, const ref_fused_consts *c, double sq, double sr, double b,
                      double st)
{
    const double ng = (double)c->groups, rk = (double)r->p.rank;
    if (r->part == MMP_FUSED_PART_DOWN) {
        r->budget[e] = c->g_t * st + c->ke * TINY;
        r->absr[e] = st;
        return;
    }
    sq = ref_fused_enlarge(sq, ng);
    sr = ref_fused_enlarge(sr, rk);
    double eq = c->g_q * sq + ng * TINY;
    double er = (c->g_t + c->g_r + c->g_t * c->g_r) * sr + (c->ke + rk) * TINY;
    if (r->part == MMP_FUSED_PART_QGEMM) { r->budget[e] = eq; r->absq[e] = sq; }
    if (r->part == MMP_FUSED_PART_LOWRANK) { r->budget[e] = er; r->absr[e] = sr; }
    if (r->part == MMP_FUSED_PART_FUSED) {
        r->absq[e] = sq;
        r->absr[e] = sr;
        r->budget[e] = ref_fused_enlarge(eq + er + (2 * U32 + U32 * U32) * (sq + eq + sr + er) + U32 * fabs(b), 8) +
                       2 * TINY;
    }
}

/* ---- host emulation of the kernels' order ---- */
typedef struct emul_job {
    const mmp_fused_host *h;
    mmp_fused_part part;
    const int8_t *xq8, *wq8;   /* unpacked int4 (NULL for LOWRANK) */
    const float *t;            /* T (M x r), NULL for QGEMM */
    float *out;
} emul_job;

static float emul_q(const emul_job *J, int64_t i, int64_t j)
{
    const mmp_fused_host *h = J->h;
    const int64_t k = h->p.k, g = h->p.group, ng = k / g;
    float y = 0.0f;
    for (int64_t G = 0; G < ng; G++) {
        float s = (float)mmp_fused_scale(h->sx, i * ng + G, h->p.scale_format) *
                  (float)mmp_fused_scale(h->sw, j * ng + G, h->p.scale_format);
        y = fmaf((float)ref_fused_dot8(J->xq8 + i * k + G * g, J->wq8 + j * k + G * g, g), s, y);
    }
    return y;
}

/* mmp_parallel_fn: output rows [i0, i1) of QGEMM, LOWRANK or FUSED */
static void emul_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    const emul_job *J = ctx;
    const mmp_fused_host *h = J->h;
    const int64_t n = h->p.n, rk = h->p.rank;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < n; j++) {
            float q = J->part == MMP_FUSED_PART_LOWRANK ? 0.0f : emul_q(J, i, j);
            float rr = 0.0f;
            if (J->t)
                for (int64_t c = 0; c < rk; c++) rr = fmaf(J->t[i * rk + c], (float)ref_fused_bf16(h->b[c * n + j]), rr);
            float v = J->part == MMP_FUSED_PART_QGEMM ? q : J->part == MMP_FUSED_PART_LOWRANK ? rr : q + rr;
            if (J->part == MMP_FUSED_PART_FUSED) v = v + h->beta[j];
            J->out[i * n + j] = v;
        }
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
                        acc = fmaf((float)ref_fused_bf16(h->x[i * k + kk]), (float)ref_fused_bf16(h->a[kk * rk + c]), acc);
                t[i * rk + c] = acc;
            }
    }
    if (part == MMP_FUSED_PART_DOWN) {
        memcpy(out, t, sizeof *t * (size_t)(m * rk));
        free(t);
        return MMP_STATUS_OK;
    }
    emul_job J = {h, part, NULL, NULL, t, out};
    mmp_status st = MMP_STATUS_OK;
    int8_t *xq8 = NULL, *wq8 = NULL;
    if (part != MMP_FUSED_PART_LOWRANK &&
        ((st = ref_fused_unpack(&xq8, h->xq, m, k)) != MMP_STATUS_OK || (st = ref_fused_unpack(&wq8, h->wq, n, k)) != MMP_STATUS_OK))
        goto out;
    J.xq8 = xq8;
    J.wq8 = wq8;
    mmp_parallel_for(mmp_parallel_threads(0), m, 1, emul_rows, &J);
out:
    free(xq8); free(wq8); free(t);
    return st;
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
