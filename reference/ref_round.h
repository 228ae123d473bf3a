/* reference/ref_round.h — number formats for code that runs on the host AND the device: decode a
 * format's bits, round a double to a format (format.c's rounding, ported), and the certified
 * rounding decision of the reference paths (ref_decide). One source for both sides, so the CPU
 * path and the device path (ref_cuda2.cu) decide with the very same arithmetic; check_ref_round
 * compares every function here with format.c and with the original host-only decision on many
 * values of every format.
 *
 * Usage (host, then pass the struct by value to a kernel):
 *   ref_fmt f; ref_fmt_init(&f, MMP_FORMAT_BF16);
 *   double y = ref_fmt_round(x, &f, MMP_ROUND_NEAREST_EVEN, 0);   // == mmp_format_round
 *   double v = ref_fmt_load(buf, idx, &f);                         // == mmp_format_load
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
#include "ref_internal.h"

typedef struct ref_fmt {
    int id;            /* mmp_format */
    int is_float, is_signed;
    int precision, emin, has_inf;   /* floats, as mmp_format_info */
    int storage_bits, man_bits, exp_bits, bias, shift;   /* encoding (shift: tf32's 13 bits) */
    double max_finite, lowest;
} ref_fmt;

/* Host only. Returns 0 (and leaves f zeroed) for an unknown format. */
static inline int ref_fmt_init(ref_fmt *f, mmp_format id)
{
    memset(f, 0, sizeof *f);
    const mmp_format_info *fi = mmp_format_get_info(id);
    if (!fi) return 0;
    f->id = (int)id;
    f->is_float = fi->is_float;
    f->is_signed = fi->is_signed;
    f->precision = fi->precision;
    f->emin = fi->emin;
    f->has_inf = fi->has_inf;
    f->storage_bits = fi->storage_bits;
    f->shift = id == MMP_FORMAT_TF32 ? 13 : 0;
    f->man_bits = fi->is_float ? fi->precision - 1 : 0;
    f->exp_bits = fi->is_float ? fi->storage_bits - f->shift - fi->precision : 0;
    f->bias = fi->is_float ? 2 - fi->emin : 0;   /* fp32: emin -125, bias 127 */
    f->max_finite = fi->max_finite;
    f->lowest = fi->lowest;
    return 1;
}

REF_HD double ref_bits_to_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The value of a format's bit pattern (mmp_format_decode). */
REF_HD double ref_fmt_decode(uint64_t bits, const ref_fmt *f)
{
    if (!f->is_float) {
        int nb = f->storage_bits;
        uint64_t mask = nb >= 64 ? ~0ull : (1ull << nb) - 1, v = bits & mask;
        if (f->is_signed && (v >> (nb - 1))) return (double)(int64_t)(v | ~mask);
        return (double)v;
    }
    if (f->id == MMP_FORMAT_FP64) return ref_bits_to_double(bits);
    if (f->id == MMP_FORMAT_FP32) {   /* the native conversion: exact, NaN stays NaN */
        uint32_t u = (uint32_t)bits;
        float v;
        memcpy(&v, &u, 4);
        return (double)v;
    }
    bits >>= f->shift;
    uint64_t man = bits & ((1ull << f->man_bits) - 1);
    uint64_t ex = (bits >> f->man_bits) & ((1ull << f->exp_bits) - 1);
    int neg = (int)((bits >> (f->man_bits + f->exp_bits)) & 1);
    uint64_t top = (1ull << f->exp_bits) - 1;
    double v;
    if (f->has_inf && ex == top) v = man ? NAN : INFINITY;
    else if (!f->has_inf && ex == top && man == (1ull << f->man_bits) - 1) v = NAN;   /* e4m3 */
    else if (ex == 0) v = ldexp((double)man, f->emin - f->precision);
    else v = ldexp((double)(man | (1ull << f->man_bits)), (int)ex - f->bias - f->man_bits);
    return neg ? -v : v;
}

/* Element idx of a buffer of f (mmp_format_load; 4-bit: low nibble first). */
REF_HD double ref_fmt_load(const void *buf, size_t idx, const ref_fmt *f)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint64_t b = 0;
    switch (f->storage_bits) {
    case 4: b = (p[idx / 2] >> ((idx % 2) * 4)) & 0xF; break;
    case 8: b = p[idx]; break;
    case 16: { uint16_t v; memcpy(&v, p + 2 * idx, 2); b = v; break; }
    case 32: { uint32_t v; memcpy(&v, p + 4 * idx, 4); b = v; break; }
    default: { uint64_t v; memcpy(&v, p + 8 * idx, 8); b = v; break; }
    }
    return ref_fmt_decode(b, f);
}

/* n + frac (n integral, 0 <= frac < 1) rounded by mode rnd; neg: the value's sign. */
REF_HD double ref_round_int_part(double n, double frac, int neg, int rnd)
{
    if (rnd == MMP_ROUND_NEAREST_EVEN) {
        if (frac > 0.5 || (frac == 0.5 && fmod(n, 2.0) != 0.0)) n += 1.0;
    } else if (rnd == MMP_ROUND_UP) {
        if (!neg && frac > 0.0) n += 1.0;
    } else if (rnd == MMP_ROUND_DOWN) {
        if (neg && frac > 0.0) n += 1.0;
    }
    return n;
}

/* x rounded to f by mode rnd (mmp_format_round; satfinite: clamp to +-max). Floats: the quantum
 * q = 2^(max(e, emin) - p) makes x / q exact and below 2^p, so the rounding is integer rounding
 * on doubles; overflow is judged after rounding with an unbounded exponent (IEEE 754 7.4).
 * Integers: rounded, then wrapped modulo 2^bits (or clamped); NaN -> 0, +-Inf clamp. */
REF_HD double ref_fmt_round(double x, const ref_fmt *f, int rnd, int sat)
{
    if (f->is_float) {
        if (isnan(x)) return x;
        if (isinf(x)) {
            if (sat) return copysign(f->max_finite, x);
            return f->has_inf ? x : copysign(NAN, x);
        }
        if (x == 0.0 || f->id == MMP_FORMAT_FP64) return x;
        int neg = signbit(x) != 0, e;
        double a = fabs(x);
        frexp(a, &e);
        int qe = (e > f->emin ? e : f->emin) - f->precision;
        double s = ldexp(a, -qe), n = floor(s);
        n = ref_round_int_part(n, s - n, neg, rnd);
        double y = ldexp(n, qe);
        if (y > f->max_finite) {
            int to_inf = rnd == MMP_ROUND_NEAREST_EVEN ? 1 : rnd == MMP_ROUND_TOWARD_ZERO ? 0
                         : rnd == MMP_ROUND_UP ? !neg : neg;
            if (sat || !to_inf) y = f->max_finite;
            else return f->has_inf ? copysign(INFINITY, x) : copysign(NAN, x);
        }
        return neg ? -y : y;
    }
    if (isnan(x)) return 0.0;
    if (isinf(x)) return x > 0 ? f->max_finite : f->lowest;
    int neg = x < 0;
    double a = fabs(x), n = floor(a);
    n = ref_round_int_part(n, a - n, neg, rnd);
    double y = neg ? -n : n;
    if (y >= f->lowest && y <= f->max_finite) return y == 0.0 ? 0.0 : y;
    if (sat) return y > 0 ? f->max_finite : f->lowest;
    double m = ldexp(1.0, f->storage_bits), w = fmod(y, m);
    if (w < 0) w += m;
    if (f->is_signed && w > f->max_finite) w -= m;
    return w == 0.0 ? 0.0 : w;
}

/* Nearest-even rounding; fp64 is the identity and fp32 the native conversion (IEEE 754
 * nearest-even with subnormals and overflow, equal to the general case: check_ref_round). */
REF_HD double ref_round_ne(double x, const ref_fmt *f)
{
    if (f->id == MMP_FORMAT_FP64) return x;
    if (f->id == MMP_FORMAT_FP32) return (double)(float)x;
    return ref_fmt_round(x, f, MMP_ROUND_NEAREST_EVEN, 0);
}

REF_HD int ref_same_value(double x, double y)
{
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
}

/* Is the positive double a a point where nearest-even rounding to f changes its result (a
 * midpoint of two neighbours, or the overflow threshold max + ulp(max)/2)? */
REF_HD int ref_is_boundary(double a, const ref_fmt *f)
{
    if (a > f->max_finite) {
        double pred = ref_fmt_round(nextafter(f->max_finite, 0.0), f, MMP_ROUND_DOWN, 1);
        return a == f->max_finite + (f->max_finite - pred) / 2;
    }
    double lo = ref_fmt_round(a, f, MMP_ROUND_DOWN, 1), hi = ref_fmt_round(a, f, MMP_ROUND_UP, 1);
    if (lo == hi) return 0;
    return a - lo == hi - a;   /* both differences exact (Sterbenz, or lo = 0) */
}

/* X, known as d64 = RN64(X) and ternary = sign(d64 - X), rounded to f (mmp_ref_round_out).
 * X lies strictly between d64 and its neighbour nb on X's side: no double, hence no boundary,
 * lies strictly between them. If d64 and nb round alike, so does X; otherwise the boundary is
 * d64 (X rounds as nb) or nb (X rounds as d64). */
REF_HD double ref_round_out_hd(double d64, int ternary, const ref_fmt *f)
{
    if (ternary == 0 || !isfinite(d64) || f->id == MMP_FORMAT_FP64 || !f->is_float) return ref_round_ne(d64, f);
    double nb = nextafter(d64, ternary > 0 ? -INFINITY : INFINITY);
    double r0 = ref_round_ne(d64, f), r1 = ref_round_ne(nb, f);
    if (ref_same_value(r0, r1)) return r0;
    return ref_is_boundary(fabs(d64), f) ? r1 : r0;
}

/* Step 7 of ref_certified.c: X in [sh + sl - E, sh + sl + E] (sh = RN(sh + sl); E = 0: exact;
 * E NaN/Inf: unknown). Returns 1 with d64 = RN64(X), dout = RN_f(X) when both are certain. */
REF_HD int ref_decide_hd(double *d64, double *dout, double sh, double sl, double E, const ref_fmt *f)
{
    if (!f->storage_bits || !(E >= 0.0) || isinf(E)) return 0;
    double a = fabs(sh);
    /* exact zeros (their sign needs every term), tiny and huge values: MPFR decides. */
    if (!(a >= 0x1p-960 && a <= 0x1p1000)) return 0;
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
    *dout = ref_fmt_round(n0, f, MMP_ROUND_NEAREST_EVEN, 0);
    return 1;
}

#endif
