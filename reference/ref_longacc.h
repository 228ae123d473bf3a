/* reference/ref_longacc.h — the exact fixed-point long accumulator (Kulisch) of the reference's
 * exact paths: ref_exact.c (GEMM elements the certified bound leaves open) and fused_exact.c
 * (the fused INT4 operator). Static inline so that the inner loops keep it in registers.
 *
 *   ref_lacc a; ref_lacc_clear(&a);
 *   ref_lacc_add_double(&a, x);            // + x exactly (x finite)
 *   ref_lacc_add_prod(&a, x, y);           // + x y exactly (x, y finite)
 *   ref_lacc_add1(&a, neg, m, e);          // +- m 2^e, m < 2^64 (narrow significand products)
 *   int t, zero; double d = ref_lacc_value(&a, &t, &zero);   // RN64, sign(d - X), X == 0
 *
 * The value is an integer times 2^REF_LACC_GRID_MIN over REF_LACC_NLIMB 64-bit limbs (up to
 * 2^3327): every product of three binary64 values (>= 2^-3222) is on the grid and below 2^3072,
 * and 2^31 such terms cannot overflow, so every addition is exact; see ref_exact.c for the
 * derivation. Rounding reads the top 53 bits, the next bit and a sticky bit (nearest even,
 * subnormals and overflow to Inf included) and gives the ternary value sign(d - X), which
 * mmp_ref_round_out turns into any output format's nearest value without double rounding.
 */
#ifndef MMAPROBE_REF_LONGACC_H
#define MMAPROBE_REF_LONGACC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define REF_LACC_GRID_MIN (-3328)
#define REF_LACC_NLIMB 104

/* Two magnitude accumulators, one per sign, so that additions only carry (rarely far) and
 * never ripple a borrow through every limb when the running sum changes sign; w is their
 * difference in two's complement, made by ref_lacc_settle when the value is needed. */
typedef struct {
    uint64_t pos[REF_LACC_NLIMB], neg[REF_LACC_NLIMB];
    uint64_t w[REF_LACC_NLIMB];
} ref_lacc;

/* |x| = m 2^e with an integer m < 2^53 (x finite). */
static inline void ref_lacc_decompose(double x, uint64_t *m, int *e)
{
    union { double d; uint64_t u; } v = {x};
    uint64_t frac = v.u & ((1ull << 52) - 1);
    int ex = (int)((v.u >> 52) & 0x7ff);
    if (ex == 0) { *m = frac; *e = -1074; }
    else { *m = frac | (1ull << 52); *e = ex - 1075; }
}

static inline void ref_lacc_clear(ref_lacc *a) { memset(a->pos, 0, sizeof a->pos); memset(a->neg, 0, sizeof a->neg); }

/* (negative ? neg : pos) += (v2 v1 v0) 2^(e - REF_LACC_GRID_MIN), v < 2^192 */
static inline void ref_lacc_add(ref_lacc *a, int negative, uint64_t v0, uint64_t v1, uint64_t v2, int e)
{
    int off = e - REF_LACC_GRID_MIN;
    int q = off >> 6, s = off & 63;
    uint64_t t[4];
    if (s == 0) { t[0] = v0; t[1] = v1; t[2] = v2; t[3] = 0; }
    else {
        t[0] = v0 << s;
        t[1] = (v1 << s) | (v0 >> (64 - s));
        t[2] = (v2 << s) | (v1 >> (64 - s));
        t[3] = v2 >> (64 - s);
    }
    uint64_t *w = negative ? a->neg : a->pos;
    unsigned __int128 c = 0;
    int l = q;
    for (int i = 0; i < 4 && l < REF_LACC_NLIMB; i++, l++) {
        c += (unsigned __int128)w[l] + t[i];
        w[l] = (uint64_t)c;
        c >>= 64;
    }
    for (; c && l < REF_LACC_NLIMB; l++) { c += w[l]; w[l] = (uint64_t)c; c >>= 64; }
}

/* The same for one 64-bit value (products of two narrow significands): two limbs. */
static inline void ref_lacc_add1(ref_lacc *a, int negative, uint64_t v, int e)
{
    int off = e - REF_LACC_GRID_MIN;
    int q = off >> 6, s = off & 63;
    uint64_t t0 = v << s, t1 = s ? v >> (64 - s) : 0;
    uint64_t *w = negative ? a->neg : a->pos;
    uint64_t x = w[q] + t0, c = x < t0;
    w[q] = x;
    uint64_t y = w[q + 1] + t1, c2 = y < t1;
    y += c;
    c2 |= y < c;
    w[q + 1] = y;
    for (int l = q + 2; c2 && l < REF_LACC_NLIMB; l++) c2 = ++w[l] == 0;
}

/* w = pos - neg (two's complement over REF_LACC_NLIMB limbs: the magnitudes stay below 2^3200). */
static inline void ref_lacc_settle(ref_lacc *a)
{
    uint64_t borrow = 0;
    for (int l = 0; l < REF_LACC_NLIMB; l++) {
        uint64_t x = a->pos[l], y = a->neg[l];
        uint64_t d = x - y - borrow;
        borrow = (x < y) || (x - y < borrow);
        a->w[l] = d;
    }
}

/* (x y) for x, y < 2^53 into two limbs; (x y) z into three. */
static inline void ref_lacc_mul2(uint64_t x, uint64_t y, uint64_t *p0, uint64_t *p1)
{
    unsigned __int128 p = (unsigned __int128)x * y;
    *p0 = (uint64_t)p;
    *p1 = (uint64_t)(p >> 64);
}

static inline void ref_lacc_mul3(uint64_t x, uint64_t y, uint64_t z, uint64_t *p0, uint64_t *p1, uint64_t *p2)
{
    uint64_t a0, a1;
    ref_lacc_mul2(x, y, &a0, &a1);
    unsigned __int128 lo = (unsigned __int128)a0 * z, hi = (unsigned __int128)a1 * z;
    *p0 = (uint64_t)lo;
    unsigned __int128 mid = (lo >> 64) + (uint64_t)hi;
    *p1 = (uint64_t)mid;
    *p2 = (uint64_t)(hi >> 64) + (uint64_t)(mid >> 64);
}

static inline int ref_lacc_bit(const ref_lacc *a, int pos)   /* bit pos of the magnitude (0 below the grid) */
{
    if (pos < 0) return 0;
    return (int)((a->w[pos >> 6] >> (pos & 63)) & 1);
}

static inline int ref_lacc_any_below(const ref_lacc *a, int pos)   /* any bit set strictly below pos */
{
    if (pos <= 0) return 0;
    int q = pos >> 6, s = pos & 63;
    for (int l = 0; l < q; l++)
        if (a->w[l]) return 1;
    return s && (a->w[q] & ((1ull << s) - 1)) != 0;
}

/* RN64 of the accumulator's value (two's complement) and sign(d64 - X). 0 when X = 0. */
static inline double ref_lacc_round(ref_lacc *a, int *ternary, int *zero)
{
    int negative = (int)(a->w[REF_LACC_NLIMB - 1] >> 63);
    if (negative) {   /* magnitude: two's complement negation */
        unsigned __int128 c = 1;
        for (int l = 0; l < REF_LACC_NLIMB; l++) {
            c += (uint64_t)~a->w[l];
            a->w[l] = (uint64_t)c;
            c >>= 64;
        }
    }
    int top = REF_LACC_NLIMB - 1;
    while (top >= 0 && a->w[top] == 0) top--;
    *ternary = 0;
    *zero = top < 0;
    if (top < 0) return 0.0;
    int msb = top * 64 + 63 - __builtin_clzll(a->w[top]);   /* bit index of the magnitude's top */
    int e_msb = msb + REF_LACC_GRID_MIN;
    double mag;
    int up = 0, inexact;
    if (e_msb > 1023) {
        mag = INFINITY;
        inexact = 1;
        up = 1;
    } else {
        int lsb_e = e_msb - 52 > -1074 ? e_msb - 52 : -1074;
        int lsb = lsb_e - REF_LACC_GRID_MIN;
        uint64_t m = 0;
        for (int p = msb; p >= lsb; p--) m = (m << 1) | (uint64_t)ref_lacc_bit(a, p);
        int guard = ref_lacc_bit(a, lsb - 1), sticky = ref_lacc_any_below(a, lsb - 1);
        inexact = guard || sticky;
        if (guard && (sticky || (m & 1))) { m++; up = 1; }
        mag = ldexp((double)m, lsb_e);   /* exact, or +Inf past the largest double */
    }
    if (inexact) *ternary = (up ? 1 : -1) * (negative ? -1 : 1);
    return negative ? -mag : mag;
}

/* + x exactly (x finite; zeros add nothing) */
static inline void ref_lacc_add_double(ref_lacc *a, double x)
{
    if (x == 0.0) return;
    uint64_t m;
    int e;
    ref_lacc_decompose(x, &m, &e);
    ref_lacc_add(a, signbit(x) != 0, m, 0, 0, e);
}

/* + x y exactly (x, y finite) */
static inline void ref_lacc_add_prod(ref_lacc *a, double x, double y)
{
    if (x == 0.0 || y == 0.0) return;
    uint64_t mx, my, p0, p1;
    int ex, ey;
    ref_lacc_decompose(x, &mx, &ex);
    ref_lacc_decompose(y, &my, &ey);
    ref_lacc_mul2(mx, my, &p0, &p1);
    ref_lacc_add(a, signbit(x) != signbit(y), p0, p1, 0, ex + ey);
}

/* RN64 of the value, *ternary = sign(result - X), *zero = (X == 0) (then +0 is returned). */
static inline double ref_lacc_value(ref_lacc *a, int *ternary, int *zero)
{
    ref_lacc_settle(a);
    return ref_lacc_round(a, ternary, zero);
}

#endif
