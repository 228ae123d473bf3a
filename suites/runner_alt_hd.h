/* suites/runner_alt_hd.h — the NaN/Inf excuse under a declared input rounding (a kernel whose
 * mul_format is narrower than its inputs: fp32 on tf32 multipliers), one source for the host
 * comparison (runner_check.c, through metrics.h's special_alt) and the device one
 * (runner_devcheck.cu). Rounding an input may turn a finite value into Inf (round up past the
 * largest finite) or a tiny one into 0, and Inf x that 0 into NaN: an output NaN/Inf whose class
 * differs from the exact result's is excused when the sum of the rounded products (either
 * rounding rule) has that class. K steps per element: only for elements whose classes differ.
 *
 *   mmp_alt_in x = {...};                       // the inputs as filled, formats, layouts, alpha, beta
 *   if (mmp_alt_excused(&x, i, j, got)) ...     // host or device
 */
#ifndef MMAPROBE_RUNNER_ALT_HD_H
#define MMAPROBE_RUNNER_ALT_HD_H

#include <math.h>
#include <stdint.h>
#include "mmaprobe/gemm.h"
#include "mmaprobe/hd.h"

typedef struct mmp_alt_in {
    const void *a, *b, *c;                    /* the inputs as filled (c: NULL when beta is 0) */
    mmp_format_hd fa, fb, fc, mul;            /* their formats, the multiply format */
    mmp_layout la, lb, lc;
    int64_t lda, ldb, ldc, k;
    double alpha, beta;
} mmp_alt_in;

/* The class of alpha sum_k a'_ik b'_kj + beta c_ij, a' and b' the inputs rounded to the multiply
 * format (rule rm): 0 finite, 1 +Inf, 2 -Inf, 3 NaN. */
MMP_HD int mmp_alt_class(const mmp_alt_in *x, int64_t i, int64_t j, int rm)
{
    int pinf = 0, ninf = 0, nan = 0;
    for (int64_t t = 0; t < x->k && !nan; t++) {
        double a = mmp_format_hd_load(x->a, mmp_gemm_index(x->la, x->lda, i, t), &x->fa);
        double b = mmp_format_hd_load(x->b, mmp_gemm_index(x->lb, x->ldb, t, j), &x->fb);
        if (isfinite(a)) a = mmp_format_hd_round(a, &x->mul, rm, 0);
        if (isfinite(b)) b = mmp_format_hd_round(b, &x->mul, rm, 0);
        if (isnan(a) || isnan(b) || (isinf(a) && b == 0) || (isinf(b) && a == 0)) nan = 1;
        else if (isinf(a) || isinf(b)) { if ((a < 0) != (b < 0)) ninf = 1; else pinf = 1; }
    }
    if (nan || (pinf && ninf)) return 3;
    int s = pinf ? 1 : ninf ? 2 : 0;
    if (s && (x->alpha == 0 || isnan(x->alpha))) return 3;
    if (s && x->alpha < 0) s = 3 - s;
    if (x->beta != 0 && x->c) {
        double t = x->beta * mmp_format_hd_load(x->c, mmp_gemm_index(x->lc, x->ldc, i, j), &x->fc);
        if (isnan(t)) return 3;
        if (isinf(t)) {
            int ts = t > 0 ? 1 : 2;
            if (s && s != ts) return 3;
            s = ts;
        }
    }
    return s;
}

/* 1 when output `got` at (i, j) has the class either rounding of the inputs gives; a finite
 * output where a NaN/Inf is due is never excused. */
MMP_HD int mmp_alt_excused(const mmp_alt_in *x, int64_t i, int64_t j, double got)
{
    int g = isnan(got) ? 3 : isinf(got) ? (got > 0 ? 1 : 2) : 0;
    if (!g) return 0;
    return mmp_alt_class(x, i, j, MMP_ROUND_NEAREST_EVEN) == g || mmp_alt_class(x, i, j, MMP_ROUND_TOWARD_ZERO) == g;
}

#endif
