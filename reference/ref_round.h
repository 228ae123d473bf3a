/* reference/ref_round.h — the certified rounding decision of the reference paths (ref_decide)
 * for code that runs on the host AND the device, on top of mmaprobe/hd.h's formats (format.c's
 * rounding, ported). One source for both sides, so the CPU path and the device path
 * (ref_cuda2.cu) decide with the very same arithmetic; check_ref_round compares every function
 * here and in hd.h with format.c and with the original host-only decision on many values of
 * every format.
 *
 * Usage (host, then pass the format by value to a kernel):
 *   mmp_format_hd f; mmp_format_hd_init(&f, MMP_FORMAT_BF16);
 *   int ok = ref_decide_hd(&d64, &dout, sh, sl, E, &f);            // == ref_decide
 * Device code must be compiled without FMA contraction (-fmad=false; reference/CMakeLists.txt)
 * so that a * b + c means two roundings, as on the host: TwoProd/TwoSum depend on it.
 */
#ifndef MMAPROBE_REF_ROUND_H
#define MMAPROBE_REF_ROUND_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "mmaprobe/format.h"
#include "mmaprobe/hd.h"
#include "ref_internal.h"

/* Nearest-even rounding; fp64 is the identity and fp32 the native conversion (IEEE 754
 * nearest-even with subnormals and overflow, equal to the general case: check_ref_round). */
REF_HD double ref_round_ne(double x, const mmp_format_hd *f)
{
    if (f->id == MMP_FORMAT_FP64) return x;
    if (f->id == MMP_FORMAT_FP32) return (double)(float)x;
    return mmp_format_hd_round(x, f, MMP_ROUND_NEAREST_EVEN, 0);
}

REF_HD int ref_same_value(double x, double y)
{
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
}

/* Is the positive double a a point where nearest-even rounding to f changes its result (a
 * midpoint of two neighbours, or the overflow threshold max + ulp(max)/2)? */
REF_HD int ref_is_boundary(double a, const mmp_format_hd *f)
{
    if (a > f->max_finite) {
        double pred = mmp_format_hd_round(nextafter(f->max_finite, 0.0), f, MMP_ROUND_DOWN, 1);
        return a == f->max_finite + (f->max_finite - pred) / 2;
    }
    double lo = mmp_format_hd_round(a, f, MMP_ROUND_DOWN, 1), hi = mmp_format_hd_round(a, f, MMP_ROUND_UP, 1);
    if (lo == hi) return 0;
    return a - lo == hi - a;   /* both differences exact (Sterbenz, or lo = 0) */
}

/* X, known as d64 = RN64(X) and ternary = sign(d64 - X), rounded to f (mmp_ref_round_out).
 * X lies strictly between d64 and its neighbour nb on X's side: no double, hence no boundary,
 * lies strictly between them. If d64 and nb round alike, so does X; otherwise the boundary is
 * d64 (X rounds as nb) or nb (X rounds as d64). */
REF_HD double ref_round_out_hd(double d64, int ternary, const mmp_format_hd *f)
{
    if (ternary == 0 || !isfinite(d64) || f->id == MMP_FORMAT_FP64 || !f->is_float) return ref_round_ne(d64, f);
    double nb = nextafter(d64, ternary > 0 ? -INFINITY : INFINITY);
    double r0 = ref_round_ne(d64, f), r1 = ref_round_ne(nb, f);
    if (ref_same_value(r0, r1)) return r0;
    return ref_is_boundary(fabs(d64), f) ? r1 : r0;
}

/* Step 7 of ref_certified.c: X in [sh + sl - E, sh + sl + E] (sh = RN(sh + sl); E = 0: exact;
 * E NaN/Inf: unknown). Returns 1 with d64 = RN64(X), dout = RN_f(X) when both are certain. */
REF_HD int ref_decide_hd(double *d64, double *dout, double sh, double sl, double E, const mmp_format_hd *f)
{
    if (!f->storage_bits || !(E >= 0.0) || isinf(E)) return 0;
    double a = fabs(sh);
    /* exact zeros (their sign needs every term), tiny and huge values: MPFR decides. */
    if (!(a >= 0x1p-960 && a <= 0x1.fffffffffffffp1023)) return 0;
    if (E == 0.0 && f->is_float) {
        *d64 = sh;   /* sh = RN(sh + sl) = RN(X) */
        *dout = ref_round_out_hd(sh, sl > 0 ? -1 : (sl < 0 ? 1 : 0), f);
        return 1;
    }
    /* X in [sh - W, sh + W]; W rounded up by a relative 2^-50 (its own two roundings). */
    double W = E == 0.0 ? fabs(sl) : (fabs(sl) + E) * (1.0 + 0x1p-50);
    double hu_up = (nextafter(sh, INFINITY) - sh) * 0.5;   /* exact: ulps are powers of 2 */
    double hu_dn = (sh - nextafter(sh, -INFINITY)) * 0.5;
    if (!(W < hu_up && W < hu_dn)) return 0;
    if (f->id == MMP_FORMAT_FP64) {   /* X strictly inside sh's rounding interval: RN64(X) = sh */
        *d64 = sh; *dout = sh;
        return 1;
    }
    /* d64 = sh. For f: lo <= sh - W and hi >= sh + W (one step out covers the rounding of the
     * subtraction), and nearest rounding is monotone. */
    double lo = W == 0.0 ? sh : nextafter(sh - W, -INFINITY);
    double hi = W == 0.0 ? sh : nextafter(sh + W, INFINITY);
    if (f->is_float) {
        double r0 = ref_round_ne(lo, f), r1 = ref_round_ne(hi, f);
        if (!ref_same_value(r0, r1)) return 0;
        *d64 = sh; *dout = r0;
        return 1;
    }
    double n0 = nearbyint(lo), n1 = nearbyint(hi);   /* integer output: round, then wrap */
    if (n0 != n1) return 0;
    *d64 = sh;
    *dout = mmp_format_hd_round(n0, f, MMP_ROUND_NEAREST_EVEN, 0);
    return 1;
}

#endif
