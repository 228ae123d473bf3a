/* format.c — number formats: the table of formats, rounding from binary64, encode/decode.
 *
 * Every float format is described by its precision p (significand bits including the implicit
 * one) and MPFR-style exponent range [emin, emax] (value 0.1b...b * 2^e). Rounding works on the
 * exact binary64 input: with quantum q = 2^(max(e, emin) - p), x / q is exact in binary64, so
 * rounding to an integer multiple of q with the requested mode is exact integer arithmetic on
 * doubles below 2^53. Overflow is decided after rounding with an unbounded exponent, as IEEE 754
 * says. E4M3 (OCP "FN") has no infinity: its top binade stops at 1.110 * 2^8 = 448 and
 * S.1111.111 is NaN, so a non-saturating overflow gives NaN.
 * Integers: rounded to an integer by the mode; NaN gives 0 and +-Inf saturates (as PTX cvt);
 * a finite value out of range wraps modulo 2^bits, or saturates with satfinite.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "mmaprobe/format.h"

typedef struct {
    mmp_format_info info;
    int exp_bits, man_bits;   /* stored exponent and fraction field widths (floats) */
    int bias;
    int int_bits;             /* integers: value bits */
} format_row;

#define FLOAT_ROW(f, nm, sb, p, lo, hi, inf, eb, mb, bi, maxv, minn, mins, u)                  \
    [f] = {{f, nm, sb, 1, 1, p, lo, hi, inf, 1, maxv, minn, mins, -(maxv), u}, eb, mb, bi, 0}
#define INT_ROW(f, nm, sb, sgn, maxv, lowv)                                                    \
    [f] = {{f, nm, sb, 0, sgn, 0, 0, 0, 0, 0, maxv, 1.0, 1.0, lowv, 0.0}, 0, 0, 0, sb}

static const format_row rows[MMP_FORMAT_COUNT_] = {
    FLOAT_ROW(MMP_FORMAT_FP64, "fp64", 64, 53, -1021, 1024, 1, 11, 52, 1023, 0x1.fffffffffffffp+1023,
              0x1p-1022, 0x1p-1074, 0x1p-53),
    FLOAT_ROW(MMP_FORMAT_FP32, "fp32", 32, 24, -125, 128, 1, 8, 23, 127, 0x1.fffffep+127, 0x1p-126,
              0x1p-149, 0x1p-24),
    FLOAT_ROW(MMP_FORMAT_TF32, "tf32", 32, 11, -125, 128, 1, 8, 10, 127, 0x1.ffcp+127, 0x1p-126,
              0x1p-136, 0x1p-11),
    FLOAT_ROW(MMP_FORMAT_FP16, "fp16", 16, 11, -13, 16, 1, 5, 10, 15, 65504.0, 0x1p-14, 0x1p-24, 0x1p-11),
    FLOAT_ROW(MMP_FORMAT_BF16, "bf16", 16, 8, -125, 128, 1, 8, 7, 127, 0x1.fep+127, 0x1p-126, 0x1p-133,
              0x1p-8),
    FLOAT_ROW(MMP_FORMAT_E4M3, "e4m3", 8, 4, -5, 9, 0, 4, 3, 7, 448.0, 0x1p-6, 0x1p-9, 0x1p-4),
    FLOAT_ROW(MMP_FORMAT_E5M2, "e5m2", 8, 3, -13, 16, 1, 5, 2, 15, 57344.0, 0x1p-14, 0x1p-16, 0x1p-3),
    INT_ROW(MMP_FORMAT_INT32, "int32", 32, 1, 2147483647.0, -2147483648.0),
    INT_ROW(MMP_FORMAT_INT8, "int8", 8, 1, 127.0, -128.0),
    INT_ROW(MMP_FORMAT_UINT8, "uint8", 8, 0, 255.0, 0.0),
    INT_ROW(MMP_FORMAT_INT4, "int4", 4, 1, 7.0, -8.0),
    INT_ROW(MMP_FORMAT_UINT4, "uint4", 4, 0, 15.0, 0.0),
};

static const struct {
    const char *alias;
    mmp_format f;
} aliases[] = {
    {"f64", MMP_FORMAT_FP64}, {"double", MMP_FORMAT_FP64}, {"binary64", MMP_FORMAT_FP64},
    {"f32", MMP_FORMAT_FP32}, {"float", MMP_FORMAT_FP32}, {"binary32", MMP_FORMAT_FP32},
    {"f16", MMP_FORMAT_FP16}, {"half", MMP_FORMAT_FP16}, {"binary16", MMP_FORMAT_FP16},
    {"e4m3fn", MMP_FORMAT_E4M3}, {"fp8e4m3", MMP_FORMAT_E4M3}, {"fp8_e4m3", MMP_FORMAT_E4M3},
    {"fp8e5m2", MMP_FORMAT_E5M2}, {"fp8_e5m2", MMP_FORMAT_E5M2}, {"s32", MMP_FORMAT_INT32},
    {"s8", MMP_FORMAT_INT8}, {"u8", MMP_FORMAT_UINT8}, {"s4", MMP_FORMAT_INT4}, {"u4", MMP_FORMAT_UINT4},
    {"i32", MMP_FORMAT_INT32}, {"i8", MMP_FORMAT_INT8}, {"i4", MMP_FORMAT_INT4},
};

const mmp_format_info *mmp_format_get_info(mmp_format f)
{
    return (unsigned)f < MMP_FORMAT_COUNT_ ? &rows[f].info : NULL;
}

const char *mmp_format_name(mmp_format f)
{
    return (unsigned)f < MMP_FORMAT_COUNT_ ? rows[f].info.name : "?";
}

mmp_status mmp_format_from_name(mmp_format *f, const char *name)
{
    if (!name) return MMP_ERR(MMP_STATUS_INVALID, "format name is NULL");
    for (int i = 0; i < MMP_FORMAT_COUNT_; i++)
        if (!strcasecmp(name, rows[i].info.name)) { *f = (mmp_format)i; return MMP_STATUS_OK; }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcasecmp(name, aliases[i].alias)) { *f = aliases[i].f; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID,
                   "unknown format '%s' (fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 int32 int8 uint8 int4 uint4)",
                   name);
}

size_t mmp_format_bytes(mmp_format f, size_t count)
{
    if ((unsigned)f >= MMP_FORMAT_COUNT_) return 0;
    return (count * (size_t)rows[f].info.storage_bits + 7) / 8;
}

/* Round the magnitude n + frac (n integer-valued, 0 <= frac < 1) by mode; neg: sign of value. */
static double round_int_part(double n, double frac, int neg, mmp_round rnd)
{
    switch (rnd) {
    case MMP_ROUND_NEAREST_EVEN:
        if (frac > 0.5 || (frac == 0.5 && fmod(n, 2.0) != 0.0)) n += 1.0;
        break;
    case MMP_ROUND_TOWARD_ZERO: break;
    case MMP_ROUND_UP:
        if (!neg && frac > 0.0) n += 1.0;
        break;
    case MMP_ROUND_DOWN:
        if (neg && frac > 0.0) n += 1.0;
        break;
    }
    return n;
}

static int sgn3(double a, double b) { return a > b ? 1 : (a < b ? -1 : 0); }

static double round_float(double x, const format_row *r, mmp_round rnd, int sat)
{
    const mmp_format_info *fi = &r->info;
    if (isnan(x)) return x;
    if (isinf(x)) {
        if (sat) return copysign(fi->max_finite, x);
        return fi->has_inf ? x : copysign(NAN, x);
    }
    if (x == 0.0 || fi->format == MMP_FORMAT_FP64) return x;
    int neg = signbit(x) != 0;
    double a = fabs(x);
    int e;
    frexp(a, &e); /* a = m * 2^e, 0.5 <= m < 1: MPFR's exponent */
    int qe = (e > fi->emin ? e : fi->emin) - fi->precision;
    double s = ldexp(a, -qe); /* exact: power-of-two scaling, s < 2^p */
    double n = floor(s);
    n = round_int_part(n, s - n, neg, rnd);
    double y = ldexp(n, qe);
    if (y > fi->max_finite) {
        /* Overflow after rounding with an unbounded exponent (IEEE 754 7.4). */
        int to_inf;
        switch (rnd) {
        case MMP_ROUND_NEAREST_EVEN: to_inf = 1; break;
        case MMP_ROUND_TOWARD_ZERO: to_inf = 0; break;
        case MMP_ROUND_UP: to_inf = !neg; break;
        default: to_inf = neg; break;
        }
        if (sat || !to_inf) y = fi->max_finite;
        else return fi->has_inf ? copysign(INFINITY, x) : copysign(NAN, x);
    }
    return neg ? -y : y;
}

static double round_integer(double x, const format_row *r, mmp_round rnd, int sat)
{
    const mmp_format_info *fi = &r->info;
    if (isnan(x)) return 0.0;
    if (isinf(x)) return x > 0 ? fi->max_finite : fi->lowest;
    int neg = x < 0;
    double a = fabs(x);
    double n = floor(a);
    n = round_int_part(n, a - n, neg, rnd);
    double y = neg ? -n : n;
    if (y >= fi->lowest && y <= fi->max_finite) return y == 0.0 ? 0.0 : y;
    if (sat) return y > 0 ? fi->max_finite : fi->lowest;
    /* wrap modulo 2^bits (two's complement for signed formats) */
    double m = ldexp(1.0, r->int_bits);
    double w = fmod(y, m);
    if (w < 0) w += m;
    if (fi->is_signed && w > fi->max_finite) w -= m;
    return w == 0.0 ? 0.0 : w;
}

double mmp_format_round(double x, mmp_format f, mmp_round rnd, int satfinite)
{
    if ((unsigned)f >= MMP_FORMAT_COUNT_) return NAN;
    const format_row *r = &rows[f];
    return r->info.is_float ? round_float(x, r, rnd, satfinite) : round_integer(x, r, rnd, satfinite);
}

/* Bits of an already-rounded, representable value y in float format r (TF32 unshifted). */
static uint64_t float_field_bits(double y, const format_row *r)
{
    const mmp_format_info *fi = &r->info;
    uint64_t sign = signbit(y) ? 1u : 0u;
    uint64_t sbit = sign << (r->exp_bits + r->man_bits);
    uint64_t emax_field = (1u << r->exp_bits) - 1;
    if (fi->format == MMP_FORMAT_FP64) {
        uint64_t b;
        memcpy(&b, &y, 8);
        return b;
    }
    if (isnan(y)) {
        if (!fi->has_inf) return sbit | (emax_field << r->man_bits) | ((1u << r->man_bits) - 1);
        return sbit | (emax_field << r->man_bits) | (1u << (r->man_bits - 1)); /* quiet NaN */
    }
    if (isinf(y)) return sbit | (emax_field << r->man_bits);
    double a = fabs(y);
    if (a == 0.0) return sbit;
    int e;
    double m = frexp(a, &e); /* a = m 2^e */
    uint64_t exp_field, man;
    if (e < fi->emin) { /* subnormal: a = man * 2^(emin - p) */
        exp_field = 0;
        man = (uint64_t)ldexp(a, fi->precision - fi->emin);
    } else {
        exp_field = (uint64_t)(e - 1 + r->bias);
        man = (uint64_t)ldexp(m, fi->precision) - (1ull << r->man_bits);
    }
    return sbit | (exp_field << r->man_bits) | man;
}

static uint64_t float_bits(double y, const format_row *r)
{
    uint64_t bits = float_field_bits(y, r);
    return r->info.format == MMP_FORMAT_TF32 ? bits << 13 : bits; /* fp32 layout, 13 zero bits */
}

mmp_status mmp_format_encode(uint64_t *bits, int *ternary, double x, mmp_format f, mmp_round rnd,
                             int satfinite)
{
    if (!bits) return MMP_ERR(MMP_STATUS_INVALID, "encode: NULL output");
    if ((unsigned)f >= MMP_FORMAT_COUNT_) return MMP_ERR(MMP_STATUS_INVALID, "encode: unknown format %d", (int)f);
    const format_row *r = &rows[f];
    double y = mmp_format_round(x, f, rnd, satfinite);
    if (ternary) *ternary = (isnan(x) || isnan(y)) ? 0 : sgn3(y, x);
    if (r->info.is_float) {
        *bits = float_bits(y, r);
    } else {
        int64_t v = (int64_t)y;
        *bits = (uint64_t)v & (r->int_bits == 64 ? ~0ull : ((1ull << r->int_bits) - 1));
    }
    return MMP_STATUS_OK;
}

/* 2^e for the narrow formats' exponents (-1022 <= e <= 1023): exact, as ldexp, without a call */
static double pow2i(int e)
{
    uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

double mmp_format_decode(uint64_t bits, mmp_format f)
{
    if ((unsigned)f >= MMP_FORMAT_COUNT_) return NAN;
    const format_row *r = &rows[f];
    const mmp_format_info *fi = &r->info;
    if (!fi->is_float) {
        uint64_t mask = (1ull << r->int_bits) - 1;
        uint64_t v = bits & mask;
        if (fi->is_signed && (v >> (r->int_bits - 1))) return (double)(int64_t)(v | ~mask);
        return (double)v;
    }
    if (f == MMP_FORMAT_FP64) {
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    if (f == MMP_FORMAT_TF32) bits >>= 13;
    uint64_t man = bits & ((1ull << r->man_bits) - 1);
    uint64_t ex = (bits >> r->man_bits) & ((1ull << r->exp_bits) - 1);
    int neg = (bits >> (r->man_bits + r->exp_bits)) & 1;
    uint64_t emax_field = (1ull << r->exp_bits) - 1;
    double v;
    if (fi->has_inf && ex == emax_field) {
        v = man ? NAN : INFINITY;
    } else if (!fi->has_inf && ex == emax_field && man == (1ull << r->man_bits) - 1) {
        v = NAN; /* e4m3: S.1111.111 */
    } else if (ex == 0) {
        v = (double)man * pow2i(fi->emin - fi->precision);
    } else {
        v = (double)(man | (1ull << r->man_bits)) * pow2i((int)ex - r->bias - r->man_bits);
    }
    return neg ? -v : v;
}

uint64_t mmp_format_load_bits(const void *buf, size_t idx, mmp_format f)
{
    const unsigned char *p = (const unsigned char *)buf;
    switch (mmp_format_get_info(f) ? rows[f].info.storage_bits : 0) {
    case 4: return (p[idx / 2] >> ((idx % 2) * 4)) & 0xF;
    case 8: return p[idx];
    case 16: { uint16_t v; memcpy(&v, p + 2 * idx, 2); return v; }
    case 32: { uint32_t v; memcpy(&v, p + 4 * idx, 4); return v; }
    case 64: { uint64_t v; memcpy(&v, p + 8 * idx, 8); return v; }
    default: return 0;
    }
}

void mmp_format_store_bits(void *buf, size_t idx, uint64_t bits, mmp_format f)
{
    unsigned char *p = (unsigned char *)buf;
    switch (mmp_format_get_info(f) ? rows[f].info.storage_bits : 0) {
    case 4: {
        unsigned sh = (unsigned)(idx % 2) * 4;
        p[idx / 2] = (unsigned char)((p[idx / 2] & ~(0xFu << sh)) | ((bits & 0xF) << sh));
        break;
    }
    case 8: p[idx] = (unsigned char)bits; break;
    case 16: { uint16_t v = (uint16_t)bits; memcpy(p + 2 * idx, &v, 2); break; }
    case 32: { uint32_t v = (uint32_t)bits; memcpy(p + 4 * idx, &v, 4); break; }
    case 64: memcpy(p + 8 * idx, &bits, 8); break;
    default: break;
    }
}

double mmp_format_load(const void *buf, size_t idx, mmp_format f)
{
    return mmp_format_decode(mmp_format_load_bits(buf, idx, f), f);
}

void mmp_format_store(void *buf, size_t idx, double x, mmp_format f, mmp_round rnd, int satfinite)
{
    uint64_t bits = 0;
    if (mmp_format_encode(&bits, NULL, x, f, rnd, satfinite) == MMP_STATUS_OK)
        mmp_format_store_bits(buf, idx, bits, f);
}
