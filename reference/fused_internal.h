/* reference/fused_internal.h — what the fused operator's two exact references share
 * (fused_exact.c: the long accumulator, the default; fused_mpfr.c: MPFR, the oracle of the tests):
 * the arrays of a result, the components whose result is a plain formula, unpacked int4 values
 * and every element's budget, so that both compute the same budgets from the same sums.
 *
 *   int done; MMP_TRY(ref_fused_begin(r, h, part, &done));   // allocates; DECODE/DEQUANT done
 *   ref_fused_consts c; ref_fused_consts_make(&c, &h->p);
 *   ... per element: sums sq, sr (binary64, before enlargement), beta, S_T for DOWN ...
 *   ref_fused_budget(r, e, &c, sq, sr, b, st);
 */
#ifndef MMAPROBE_FUSED_INTERNAL_H
#define MMAPROBE_FUSED_INTERNAL_H

#include "mmaprobe/fused.h"

typedef struct ref_fused_consts {
    double ke;           /* K + ceil(K/4) + 1: the truncating block FMA's steps (DOWN) */
    double g_t, g_r, g_q;   /* gamma_Ke(2^-23), gamma_r(2^-24), gamma_G(2^-24) */
    int64_t groups;      /* K / g */
} ref_fused_consts;

static inline double ref_fused_bf16(uint16_t bits) { return mmp_format_decode(bits, MMP_FORMAT_BF16); }

/* r's arrays for part (cleared first); *done = 1 when the part was computed here (DECODE,
 * DEQUANT: exact formulas). */
mmp_status ref_fused_begin(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part, int *done);
void ref_fused_consts_make(ref_fused_consts *c, const mmp_fused_problem *p);
/* *q8 = the rows x k int4 values of q, one int8 each (malloc'd; free it) */
mmp_status ref_fused_unpack(int8_t **q8, const uint8_t *q, int64_t rows, int64_t k);
/* sum_e x[e] w[e] over n unpacked values, exactly (int32 partial sums of 2^16 terms) */
static inline int64_t ref_fused_dot8(const int8_t *x, const int8_t *w, int64_t n)
{
    int64_t s = 0;
    for (int64_t e0 = 0; e0 < n; e0 += 65536) {
        const int64_t e1 = e0 + 65536 < n ? e0 + 65536 : n;
        int32_t p = 0;
        for (int64_t e = e0; e < e1; e++) p += (int32_t)x[e] * w[e];
        s += p;
    }
    return s;
}
/* S_T of (i, t) enlarged for its own rounding: sum_k |x_ik a_kt| computed in binary64 */
double ref_fused_enlarge(double s, double n);
/* budget, absq and absr of element e of r->part from the binary64 sums sq = sum_G |Q_G|,
 * sr = sum_t S_T |b_tj| (not yet enlarged), b = beta_j and st = S_T (DOWN: e is (i, t)). */
void ref_fused_budget(mmp_fused_ref *r, int64_t e, const ref_fused_consts *c, double sq, double sr, double b,
                      double st);

/* The MPFR oracle (fused_mpfr.c): the same result as mmp_fused_ref_compute, bit for bit. */
mmp_status ref_fused_compute_mpfr(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part);

#endif
