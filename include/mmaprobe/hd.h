/* mmaprobe/hd.h — functions that compile for the host AND the device, one source for both:
 * number formats (decode, round, encode: format.c's arithmetic) and the Philox generator with
 * its uniform and normal draws (rng.c). Device code that generates a case's inputs or decodes
 * them uses these, so the device's bytes are the host's bytes.
 *
 * Usage (host, then pass the struct by value to a kernel):
 *   mmp_format_hd f; mmp_format_hd_init(&f, MMP_FORMAT_BF16);
 *   double y = mmp_format_hd_round(x, &f, MMP_ROUND_NEAREST_EVEN, 0);   // == mmp_format_round
 *   uint64_t b = mmp_format_hd_encode(x, &f, MMP_ROUND_NEAREST_EVEN, 0); // == mmp_format_encode
 *   double v = mmp_format_hd_load(buf, idx, &f);                         // == mmp_format_load
 *   double u = mmp_rng_hd_uniform(seed, stream, ctr0, ctr1);             // == mmp_rng_uniform
 * Only exactly rounded operations are used (+ - * / sqrt, frexp, ldexp, floor, fmod), and the
 * normal draw's logarithm and cosine are polynomials here rather than libm's (whose last bits
 * differ between glibc and CUDA). Device code must be compiled without FMA contraction
 * (-fmad=false) so that a * b + c rounds twice, as on the host.
 */
#ifndef MMAPROBE_HD_H
#define MMAPROBE_HD_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "mmaprobe/format.h"

#ifdef __CUDACC__
#define MMP_HD __host__ __device__ __forceinline__
#else
#define MMP_HD static inline
#endif

/* ---- formats ---- */
typedef struct mmp_format_hd {
    int id;            /* mmp_format */
    int is_float, is_signed;
    int precision, emin, has_inf;   /* floats, as mmp_format_info */
    int storage_bits, man_bits, exp_bits, bias, shift;   /* encoding (shift: tf32's 13 bits) */
    double max_finite, lowest, min_subnormal;
} mmp_format_hd;

/* Host only. Returns 0 (and leaves f zeroed) for an unknown format. */
static inline int mmp_format_hd_init(mmp_format_hd *f, mmp_format id)
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
    f->min_subnormal = fi->min_subnormal;
    return 1;
}

MMP_HD double mmp_hd_bits_to_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The value of a format's bit pattern (mmp_format_decode). */
MMP_HD double mmp_format_hd_decode(uint64_t bits, const mmp_format_hd *f)
{
    if (!f->is_float) {
        int nb = f->storage_bits;
        uint64_t mask = nb >= 64 ? ~0ull : (1ull << nb) - 1, v = bits & mask;
        if (f->is_signed && (v >> (nb - 1))) return (double)(int64_t)(v | ~mask);
        return (double)v;
    }
    if (f->id == MMP_FORMAT_FP64) return mmp_hd_bits_to_double(bits);
    if (f->id == MMP_FORMAT_FP32) {   /* the native conversion: exact, NaN stays NaN */
        uint32_t u = (uint32_t)bits;
        float v;
        memcpy(&v, &u, 4);
        return (double)v;
    }
    if (f->id == MMP_FORMAT_BF16) {   /* binary32's upper half: exact; NaN as the generic path's */
        uint32_t u = (uint32_t)(bits & 0xffffu) << 16;
        float v;
        memcpy(&v, &u, 4);
        if (v != v) return (u >> 31) ? -(double)NAN : (double)NAN;
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

/* The bits of element idx of a buffer of f (mmp_format_load_bits; 4-bit: low nibble first). */
MMP_HD uint64_t mmp_format_hd_load_bits(const void *buf, size_t idx, const mmp_format_hd *f)
{
    const unsigned char *p = (const unsigned char *)buf;
    switch (f->storage_bits) {
    case 4: return (p[idx / 2] >> ((idx % 2) * 4)) & 0xF;
    case 8: return p[idx];
    case 16: { uint16_t v; memcpy(&v, p + 2 * idx, 2); return v; }
    case 32: { uint32_t v; memcpy(&v, p + 4 * idx, 4); return v; }
    default: { uint64_t v; memcpy(&v, p + 8 * idx, 8); return v; }
    }
}

/* Element idx of a buffer of f (mmp_format_load). */
MMP_HD double mmp_format_hd_load(const void *buf, size_t idx, const mmp_format_hd *f)
{
    return mmp_format_hd_decode(mmp_format_hd_load_bits(buf, idx, f), f);
}

/* n + frac (n integral, 0 <= frac < 1) rounded by mode rnd; neg: the value's sign. */
MMP_HD double mmp_format_hd_round_int(double n, double frac, int neg, int rnd)
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
MMP_HD double mmp_format_hd_round(double x, const mmp_format_hd *f, int rnd, int sat)
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
        n = mmp_format_hd_round_int(n, s - n, neg, rnd);
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
    n = mmp_format_hd_round_int(n, a - n, neg, rnd);
    double y = neg ? -n : n;
    if (y >= f->lowest && y <= f->max_finite) return y == 0.0 ? 0.0 : y;
    if (sat) return y > 0 ? f->max_finite : f->lowest;
    double m = ldexp(1.0, f->storage_bits), w = fmod(y, m);
    if (w < 0) w += m;
    if (f->is_signed && w > f->max_finite) w -= m;
    return w == 0.0 ? 0.0 : w;
}

/* The bits of x rounded to f (mmp_format_encode: quiet NaN, e4m3's S.1111.111, tf32 in the
 * high 19 of 32 bits, integers in two's complement of storage_bits). */
MMP_HD uint64_t mmp_format_hd_encode(double x, const mmp_format_hd *f, int rnd, int sat)
{
    double y = mmp_format_hd_round(x, f, rnd, sat);
    if (!f->is_float) {
        int nb = f->storage_bits;
        return (uint64_t)(int64_t)y & (nb >= 64 ? ~0ull : (1ull << nb) - 1);
    }
    uint64_t b;
    if (f->id == MMP_FORMAT_FP64) {
        memcpy(&b, &y, 8);
        return b;
    }
    uint64_t sbit = (uint64_t)(signbit(y) ? 1 : 0) << (f->exp_bits + f->man_bits);
    uint64_t top = (1ull << f->exp_bits) - 1;
    double a = fabs(y);
    if (isnan(y)) b = sbit | (top << f->man_bits) | (f->has_inf ? 1ull << (f->man_bits - 1) : (1ull << f->man_bits) - 1);
    else if (isinf(y)) b = sbit | (top << f->man_bits);
    else if (a == 0.0) b = sbit;
    else {
        int e;
        double m = frexp(a, &e);   /* a = m 2^e, 1/2 <= m < 1 */
        if (e < f->emin) b = sbit | (uint64_t)ldexp(a, f->precision - f->emin);   /* subnormal */
        else b = sbit | ((uint64_t)(e - 1 + f->bias) << f->man_bits) |
                 ((uint64_t)ldexp(m, f->precision) - (1ull << f->man_bits));
    }
    return b << f->shift;
}

/* ---- Philox4x32-10 (Salmon et al., SC'11; Random123's philox4x32_10) ---- */
MMP_HD uint64_t mmp_rng_hd_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

MMP_HD void mmp_rng_hd_philox_raw(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    uint32_t k0 = key[0], k1 = key[1], c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)M0 * c0, p1 = (uint64_t)M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += W0;
        k1 += W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The key of (seed, stream): compute once per case, then mmp_rng_hd_philox_key per draw. */
MMP_HD uint64_t mmp_rng_hd_key(uint64_t seed, uint64_t stream) { return mmp_rng_hd_mix(seed ^ mmp_rng_hd_mix(stream)); }

MMP_HD void mmp_rng_hd_philox_key(uint32_t out[4], uint64_t key, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
    uint32_t c[4] = {(uint32_t)ctr0, (uint32_t)(ctr0 >> 32), (uint32_t)ctr1, (uint32_t)(ctr1 >> 32)};
    mmp_rng_hd_philox_raw(out, c, k);
}

/* [0, 1) with 53 random bits */
MMP_HD double mmp_rng_hd_uniform_key(uint64_t key, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t w[4];
    mmp_rng_hd_philox_key(w, key, ctr0, ctr1);
    return (double)((((uint64_t)w[0] << 32) | w[1]) >> 11) * 0x1p-53;
}

/* log(x), x positive and finite: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^23 (remainder < 2^-58 relative). */
MMP_HD double mmp_rng_hd_log(double x)
{
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752) { m *= 2; e--; }
    double s = (m - 1) / (m + 1), s2 = s * s, p = 1.0 / 23;
    for (int k = 21; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
    return (double)e * 0.69314718055994531 + 2 * s * p;
}

/* cos(2 pi t), 0 <= t < 1: the quarter turn q and the rest r = 4t - q (both exact), then sine
 * or cosine of an angle in [0, pi/4] by their series to degree 18 (remainder < 2^-60). */
MMP_HD double mmp_rng_hd_cos2pi(double t)
{
    double t4 = 4 * t, q = floor(t4), r = t4 - q;
    int swap = r > 0.5;
    double x = (swap ? 1 - r : r) * 1.5707963267948966, x2 = x * x;
    double c = 1, sn = 1;
    for (int k = 18; k >= 2; k -= 2) c = 1 - c * x2 / (double)(k * (k - 1));
    for (int k = 19; k >= 3; k -= 2) sn = 1 - sn * x2 / (double)(k * (k - 1));
    sn *= x;
    double cr = swap ? sn : c, sr = swap ? c : sn;   /* cos, sin of r pi/2 */
    int qi = (int)q;
    return qi == 0 ? cr : qi == 1 ? -sr : qi == 2 ? -cr : sr;
}

/* N(0, 1) by Box-Muller on the four words of one Philox draw. */
MMP_HD double mmp_rng_hd_normal_key(uint64_t key, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t w[4];
    mmp_rng_hd_philox_key(w, key, ctr0, ctr1);
    /* u1 in (0, 1] so the logarithm is finite */
    double u1 = ((double)((((uint64_t)w[0] << 32) | w[1]) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)((((uint64_t)w[2] << 32) | w[3]) >> 11) * 0x1p-53;
    return sqrt(-2.0 * mmp_rng_hd_log(u1)) * mmp_rng_hd_cos2pi(u2);
}

#endif
