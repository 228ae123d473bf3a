/* reference/fused_exact.c — the fused operator's exact reference (mmp_fused_ref_compute) in the
 * long accumulator of ref_longacc.h, on every core: no MPFR, the same results as the MPFR oracle
 * (fused_mpfr.c) bit for bit (tests/check_fused.c).
 *
 *   1. T*_it = sum_k x_ik a_kt exactly (products of two bf16 are exact binary64 numbers), kept as
 *      a short expansion: t_1 = RN64(T*), t_2 = RN64(T* - t_1), ... until nothing is left. Each
 *      step removes at least 53 bits and T* lies on the grid 2^-266 below 2^(256 + 31), so there
 *      are at most MAX_PIECES pieces (more is reported as MMP_STATUS_INTERNAL, never truncated).
 *   2. Element (i, j): the exact sum of the Q terms acc_G sx sw (exact binary64 numbers, see
 *      fused_ref.c), of every piece times b_tj (the accumulator adds the 106-bit product exactly)
 *      and of beta_j; rounded once to binary64 (with the ternary value) and from there, without
 *      double rounding, to fp32 (mmp_ref_round_out).
 * A zero result is -0 only when every term is -0, as mpfr_sum gives; the zero terms' signs are
 * followed through T* (a zero T* keeps the sign its products give it).
 * Non-finite operands (never made by mmp_fused_host_fill) go to the MPFR oracle.
 * Cost: O(M r K + M N (K/g + r pieces)) accumulator additions: tens of milliseconds where MPFR
 * takes tens of seconds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fused_internal.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "ref_longacc.h"

enum { MAX_PIECES = 12, FAILED = 255 };   /* ceil((287 + 266) / 53) = 11, plus one */

typedef struct fx_job {
    const mmp_fused_host *h;
    mmp_fused_ref *r;
    const ref_fused_consts *c;
    const int8_t *xq8, *wq8;  /* unpacked int4 */
    const double *x64, *at64, *b64, *sx64, *sw64;   /* decoded: x (M x K), a^T (r x K), b, scales */
    double *piece;            /* MAX_PIECES per (i, t) */
    unsigned char *npiece;    /* pieces of (i, t); 0: T* = 0; FAILED: more than MAX_PIECES */
    unsigned char *tneg;      /* T*'s sign (of -0 too) */
    double *stt;              /* S_T(i, t), enlarged */
} fx_job;

/* (d64, fp32) of the accumulator; a zero is -0 when every term was -0 */
static void fx_round(double *d64, float *d32, ref_lacc *a, int all_neg_zero)
{
    int t, zero;
    double v = ref_lacc_value(a, &t, &zero);
    if (zero) { v = all_neg_zero ? -0.0 : 0.0; t = 0; }
    *d64 = v;
    *d32 = (float)mmp_ref_round_out(v, t, MMP_FORMAT_FP32);
}

/* mmp_parallel_fn: T* of rows [i0, i1) as expansions, and S_T */
static void t_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    fx_job *J = ctx;
    const mmp_fused_host *h = J->h;
    const int64_t k = h->p.k, rk = h->p.rank;
    ref_lacc a;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t t = 0; t < rk; t++) {
            const int64_t it = i * rk + t;
            ref_lacc_clear(&a);
            double s = 0;
            int all_neg_zero = k > 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double prod = J->x64[i * k + kk] * J->at64[t * k + kk];   /* exact */
                if (prod != 0.0 || !signbit(prod)) all_neg_zero = 0;
                ref_lacc_add_double(&a, prod);
                s += fabs(prod);
            }
            J->stt[it] = ref_fused_enlarge(s, (double)k);
            double *pc = J->piece + it * MAX_PIECES;
            int np = 0, tern, zero;
            for (;;) {
                double v = ref_lacc_value(&a, &tern, &zero);
                if (zero) break;
                if (np == MAX_PIECES) { np = FAILED; break; }
                pc[np++] = v;
                ref_lacc_add_double(&a, -v);
            }
            J->npiece[it] = (unsigned char)np;
            J->tneg[it] = (unsigned char)(np ? signbit(pc[0]) != 0 : all_neg_zero);
        }
}

/* mmp_parallel_fn: elements of rows [i0, i1) */
static void elem_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    fx_job *J = ctx;
    const mmp_fused_host *h = J->h;
    mmp_fused_ref *r = J->r;
    const mmp_fused_part part = r->part;
    const int64_t n = h->p.n, k = h->p.k, g = h->p.group, rk = h->p.rank, ng = J->c->groups;
    const int q_part = part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_FUSED;
    const int r_part = part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED;
    ref_lacc a;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < r->cols; j++) {
            const int64_t e = i * r->cols + j;
            ref_lacc_clear(&a);
            int all_neg_zero = 1;
            double sq = 0, sr = 0, b = 0, s_t = 0;
            if (part == MMP_FUSED_PART_DOWN) {   /* j is t */
                const int64_t it = i * rk + j;
                for (int p = 0; p < J->npiece[it]; p++) ref_lacc_add_double(&a, J->piece[it * MAX_PIECES + p]);
                all_neg_zero = J->tneg[it];
                s_t = J->stt[it];
            }
            if (q_part)
                for (int64_t G = 0; G < ng; G++) {
                    double term = (double)ref_fused_dot8(J->xq8 + i * k + G * g, J->wq8 + j * k + G * g, g) *
                                  J->sx64[i * ng + G] * J->sw64[j * ng + G];   /* exact, see fused_ref.c */
                    if (term != 0.0 || !signbit(term)) all_neg_zero = 0;
                    ref_lacc_add_double(&a, term);
                    sq += fabs(term);
                }
            if (r_part)
                for (int64_t t = 0; t < rk; t++) {
                    const int64_t it = i * rk + t;
                    double bv = J->b64[t * n + j];
                    const int np = J->npiece[it];
                    if (np == 0 || bv == 0.0) {   /* a zero term, signed as T* times b */
                        if ((J->tneg[it] != 0) == (signbit(bv) != 0)) all_neg_zero = 0;
                    } else {
                        all_neg_zero = 0;
                        for (int p = 0; p < np; p++) ref_lacc_add_prod(&a, J->piece[it * MAX_PIECES + p], bv);
                    }
                    sr += J->stt[it] * fabs(bv);
                }
            if (part == MMP_FUSED_PART_AFFINE) {
                double z = h->z[i * n + j];
                if (z != 0.0 || !signbit(z)) all_neg_zero = 0;
                ref_lacc_add_double(&a, z);
            }
            if (part == MMP_FUSED_PART_AFFINE || part == MMP_FUSED_PART_FUSED) {
                b = h->beta[j];
                if (b != 0.0 || !signbit(b)) all_neg_zero = 0;
                ref_lacc_add_double(&a, b);
            }
            fx_round(&r->want64[e], &r->want32[e], &a, all_neg_zero);
            ref_fused_budget(r, e, J->c, sq, sr, b, s_t);
        }
}

/* every operand finite (the accumulator holds finite values only) */
static int all_finite(const mmp_fused_host *h)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t ng = p->k / p->group;
    for (int64_t t = 0; t < p->m * p->k; t++) if (!isfinite(ref_fused_bf16(h->x[t]))) return 0;
    for (int64_t t = 0; t < p->k * p->rank; t++) if (!isfinite(ref_fused_bf16(h->a[t]))) return 0;
    for (int64_t t = 0; t < p->rank * p->n; t++) if (!isfinite(ref_fused_bf16(h->b[t]))) return 0;
    for (int64_t t = 0; t < p->m * ng; t++) if (!isfinite(mmp_fused_scale(h->sx, t, p->scale_format))) return 0;
    for (int64_t t = 0; t < p->n * ng; t++) if (!isfinite(mmp_fused_scale(h->sw, t, p->scale_format))) return 0;
    for (int64_t t = 0; t < p->n; t++) if (!isfinite(h->beta[t])) return 0;
    if (h->z)
        for (int64_t t = 0; t < p->m * p->n; t++) if (!isfinite(h->z[t])) return 0;
    return 1;
}

mmp_status mmp_fused_ref_compute(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part)
{
    int done;
    MMP_TRY(ref_fused_begin(r, h, part, &done));
    if (done) return MMP_STATUS_OK;
    if (!all_finite(h)) return ref_fused_compute_mpfr(r, h, part);
    const mmp_fused_problem *p = &h->p;
    ref_fused_consts c;
    ref_fused_consts_make(&c, p);
    fx_job J = {.h = h, .r = r, .c = &c};
    int8_t *xq8 = NULL, *wq8 = NULL;
    double *x64 = NULL, *at64 = NULL, *b64 = NULL, *sx64 = NULL, *sw64 = NULL;
    const int need_t = part == MMP_FUSED_PART_DOWN || part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED;
    const size_t nt = need_t ? (size_t)(p->m * p->rank) : 1;
    J.piece = malloc(sizeof *J.piece * nt * MAX_PIECES);
    J.npiece = calloc(nt, 1);
    J.tneg = calloc(nt, 1);
    J.stt = calloc(nt, sizeof *J.stt);
    mmp_status st = MMP_STATUS_OK;
    if (!J.piece || !J.npiece || !J.tneg || !J.stt) {
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of host memory for T");
        goto out;
    }
    const int q_part = part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_FUSED;
    if (q_part && ((st = ref_fused_unpack(&xq8, h->xq, p->m, p->k)) != MMP_STATUS_OK ||
                   (st = ref_fused_unpack(&wq8, h->wq, p->n, p->k)) != MMP_STATUS_OK))
        goto out;
    J.xq8 = xq8;
    J.wq8 = wq8;
    const int64_t m = p->m, n = p->n, k = p->k, rk = p->rank, ng = c.groups;
    if (q_part) {
        sx64 = malloc(sizeof *sx64 * (size_t)(m * ng));
        sw64 = malloc(sizeof *sw64 * (size_t)(n * ng));
        if (!sx64 || !sw64) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of host memory (scales)"); goto out; }
        for (int64_t q = 0; q < m * ng; q++) sx64[q] = mmp_fused_scale(h->sx, q, p->scale_format);
        for (int64_t q = 0; q < n * ng; q++) sw64[q] = mmp_fused_scale(h->sw, q, p->scale_format);
    }
    if (need_t) {
        x64 = malloc(sizeof *x64 * (size_t)(m * k));
        at64 = malloc(sizeof *at64 * (size_t)(k * rk));
        b64 = malloc(sizeof *b64 * (size_t)(rk * n));
        if (!x64 || !at64 || !b64) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "fused reference: out of host memory (operands)"); goto out; }
        for (int64_t q = 0; q < m * k; q++) x64[q] = ref_fused_bf16(h->x[q]);
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t t = 0; t < rk; t++) at64[t * k + kk] = ref_fused_bf16(h->a[kk * rk + t]);
        for (int64_t q = 0; q < rk * n; q++) b64[q] = ref_fused_bf16(h->b[q]);
    }
    J.sx64 = sx64; J.sw64 = sw64; J.x64 = x64; J.at64 = at64; J.b64 = b64;
    const int threads = mmp_parallel_threads(0);
    if (need_t) mmp_parallel_for(threads, p->m, 1, t_rows, &J);
    int failed = 0;
    for (size_t it = 0; need_t && it < nt; it++) failed |= J.npiece[it] == FAILED;
    if (failed) {
        st = MMP_ERR(MMP_STATUS_INTERNAL, "fused reference: an exact T* needed more than %d binary64 pieces",
                     MAX_PIECES);
        goto out;
    }
    mmp_parallel_for(threads, r->rows, 1, elem_rows, &J);
out:
    free(J.piece); free(J.npiece); free(J.tneg); free(J.stt); free(xq8); free(wq8);
    free(x64); free(at64); free(b64); free(sx64); free(sw64);
    if (st != MMP_STATUS_OK) mmp_fused_ref_clear(r);
    return st;
}
