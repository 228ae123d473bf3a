/* reference/ref_crt.h — the int8 route's square of slices by residues (Ozaki scheme II, as
 * GEMMul8 and ozIMMU use it): the exact products of all Sa x Sb slice pairs in N int8 GEMMs,
 * one per modulus, instead of Sa Sb GEMMs, one per pair.
 *
 * Why it is exact. With Sa int8 slices q_1..q_Sa (ref_split's balanced digits, radix 256) an
 * entry of row i of A is a = a' 2^(E_i - 8 Sa) + rem, a' = sum_s q_s 256^(Sa - s) an integer with
 * |a'| <= 128 (256^Sa - 1) / 255 < 2^(8 Sa - 1) (256/255); the same for B with F_j, Sb. The
 * square's part of (AB)_ij is X 2^(E_i + F_j - 8 (Sa + Sb)) with X = sum_k a'_ik b'_kj, and
 * |X| < kp 2^(8 (Sa + Sb) - 2) (256/255)^2 < 2^(8 (Sa + Sb) + ceil(log2 kp) - 1). For pairwise
 * coprime moduli m_1..m_N <= 256 whose product M >= 2^(8 (Sa + Sb) + ceil(log2 kp)) (ref_crt_count)
 * |X| < M / 2, so X is the one integer of (-M/2, M/2) with X = C_t mod m_t for every t, where
 *   C_t = sum_k ra_t(i,k) rb_t(k,j),  ra_t = a' mod m_t in [-m_t/2, m_t/2) (an int8), likewise rb_t,
 * is one int8 GEMM with int32 results, exact while kp 128^2 <= 2^31 - 1 (kp <= REF_IMMA_KMAX; the
 * plan takes this route only then). X comes back by the Chinese remainder theorem:
 *   d_t = (C_t mod m_t) y_t mod m_t,  y_t = (M/m_t)^-1 mod m_t,
 *   Y = sum_t d_t (M/m_t) < N M,  X = Y mod M, minus M when it is at least M/2,
 * in 32-bit limbs (exact integer arithmetic). X goes into the state (h, l, err) limb by limb
 * with ref_acc (exact; what a double-double cannot hold goes into err, as on the pairs route).
 * The rest of the plan (the remainders, exact or bounded, the finish) is the square's, unchanged.
 *
 * An entry's a' is not built from its digits: every step of ref_split is exact for the route's
 * formats, so a' is one rounding of v 2^(8 S - e) (ref_crt_value_direct), a' = Q 2^p2 with
 * |Q| < 2^27, and a' mod m_t = (Q mod m_t) (2^p2 mod m_t) mod m_t.
 *
 * Usage (host): ref_crt_table t; if (ref_crt_table_init(&t, sa, sb, kp)) ... per entry
 * ref_crt_operand_one(row, v, e, S, kp, &t, t.w, kk); per element of each GEMM
 * ref_crt_reduce(c, t.m[q], t.magic[q], t.c16[q], t.y[q]); per element ref_crt_accumulate_one.
 * Everything is 32- and 64-bit integer arithmetic after the digits: no conversions to and from
 * doubles, which the GPU runs at a sixteenth of its integer rate. The loops over the moduli run
 * to REF_CRT_MAX with constant indices, so that a kernel reads the table from its parameters.
 * The device (ref_cuda2_crt.cu) and the host model (ref_v2_host.c) run these same functions.
 */
#ifndef MMAPROBE_REF_CRT_H
#define MMAPROBE_REF_CRT_H

#include "ref_plan.h"

#define REF_CRT_MAX 30     /* moduli at most: 2^226 > 2^(8 (12 + 12) + 17), REF_SMAX slices at K' <= 2^17 */
#define REF_CRT_LIMBS 8    /* 32-bit limbs of Y < N M < 2^232 */
#define REF_CRT_GROUP 3    /* moduli per group: their product P_g < 2^24 */
#define REF_CRT_GROUPS ((REF_CRT_MAX + REF_CRT_GROUP - 1) / REF_CRT_GROUP)

typedef struct ref_crt_table {
    int n, sa, sb;                             /* moduli; slices of A and B */
    int m[REF_CRT_MAX];                        /* the moduli, pairwise coprime, <= 256 */
    uint32_t magic[REF_CRT_MAX];               /* ceil(2^32 / m_t): x mod m_t for x < 2^21 (ref_crt_mod) */
    int c16[REF_CRT_MAX], c20[REF_CRT_MAX];    /* 2^16 and 2^20 mod m_t */
    int y[REF_CRT_MAX];                        /* (M / m_t)^-1 mod m_t */
    int w[REF_CRT_MAX][REF_SMAX + 1];          /* 256^p mod m_t, p = 0 .. REF_SMAX */
    uint32_t gf[REF_CRT_MAX];                  /* P_g / m_t, P_g the product of t's group g = t / 3 */
    uint32_t gt[REF_CRT_GROUPS][REF_CRT_LIMBS];   /* M / P_g, least significant limb first */
    uint32_t big[REF_CRT_LIMBS], half[REF_CRT_LIMBS];   /* M and M / 2 (M is even: 256 is a modulus) */
    double big_d;                              /* M rounded */
} ref_crt_table;

#ifdef __cplusplus
extern "C" {
#endif
/* The moduli the square sa x sb at padded length kp needs (0: more than REF_CRT_MAX). */
int ref_crt_count(int sa, int sb, int64_t kp);
/* The table for sa x sb at kp; 0 when the square needs more than REF_CRT_MAX moduli. */
int ref_crt_table_init(ref_crt_table *t, int sa, int sb, int64_t kp);
#ifdef __cplusplus
}
#endif

/* x mod m for 0 <= x < 2^21, in 32-bit integers: q = floor(x magic / 2^32) with magic =
 * ceil(2^32 / m) exceeds x / m by less than x / 2^32 < 2^-11 < 1/m, so it is floor(x / m). */
REF_HD uint32_t ref_crt_mod(uint32_t x, uint32_t m, uint32_t magic)
{
    uint32_t q = (uint32_t)(((uint64_t)x * magic) >> 32);
    return x - q * m;
}

/* a' in one rounding, without the digits: for the int8 route's formats every step of
 * ref_split is exact, so after S steps Y - a' lies in (c - 1, c] (c = 127/255, ref_digit), Y =
 * v 2^(8 S - e): a' = floor(Y) + [frac(Y) > c], the one integer there. From the double's bits:
 * Y = +-sig 2^sh (sig odd); sh >= 0: a' = +-sig 2^sh; else floor and fraction by shifts, the
 * fraction F / 2^t compared as 255 F > 127 2^t (t <= 55; beyond, |Y| < 1/4 and a' = 0).
 * a' = Q 2^*p2 (*p2 >= 0). Returns 0 when |Q| reaches 2^40 or |a'| 2^(8 S) (never for the
 * route's formats at the scale ref_scale_exp gives). */
REF_HD int ref_crt_ctz(uint64_t x)   /* x != 0 */
{
#ifdef __CUDA_ARCH__
    return __ffsll((long long)x) - 1;
#else
    return __builtin_ctzll(x);
#endif
}

REF_HD int ref_crt_bits(uint64_t x)   /* x != 0: the position of its highest set bit + 1 */
{
#ifdef __CUDA_ARCH__
    return 64 - __clzll((long long)x);
#else
    return 64 - __builtin_clzll(x);
#endif
}

REF_HD int ref_crt_value_direct(int64_t *Q, int *p2, double v, int e, int S)
{
    *Q = 0;
    *p2 = 0;
    if (!isfinite(v) || v == 0.0) return 1;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int ex = (int)((u >> 52) & 0x7ff), neg = (int)(u >> 63);
    uint64_t sig = u & 0xfffffffffffffull;
    int sh = (ex ? ex - 1075 : -1074) + 8 * S - e;
    if (ex) sig |= 1ull << 52;
    int tz = ref_crt_ctz(sig);
    sig >>= tz;
    sh += tz;
    int64_t q;
    if (sh >= 0) {
        q = (int64_t)sig;
        *p2 = sh;
        if (neg) q = -q;
    } else if (-sh > 55) {
        q = 0;
    } else {
        int t = -sh;
        uint64_t fl = sig >> t, f = sig & ((1ull << t) - 1), one = 1ull << t;
        if (!neg) {
            q = (int64_t)fl + (255 * f > 127 * one);
        } else {   /* Y = -(fl + f / 2^t): floor -(fl + [f > 0]), fraction (2^t - f) / 2^t */
            uint64_t fr = f ? one - f : 0;
            q = -(int64_t)fl - (f != 0) + (255 * fr > 127 * one);
        }
    }
    *Q = q;
    uint64_t aq = (uint64_t)(q < 0 ? -q : q);
    /* |a'| below 2^(8 S) (a sanity check of the scale e) and |Q| below 2^40 */
    return aq == 0 || (aq < (1ull << 40) && ref_crt_bits(aq) + *p2 <= 8 * S);
}

/* Q 2^p2 mod m_t as an int8 in [-m_t/2, m_t/2) (ref_crt_value_direct; p2 < 8 (REF_SMAX + 1)):
 * 2^p2 = 256^(p2 / 8) 2^(p2 mod 8), each step below 2^21. */
REF_HD int ref_crt_residue_direct(int64_t Q, int p2, const ref_crt_table *t, const int (*w)[REF_SMAX + 1], int q)
{
    uint32_t m = (uint32_t)t->m[q], mg = t->magic[q];
    uint64_t a = (uint64_t)(Q < 0 ? -Q : Q);
    uint32_t r = ref_crt_mod((uint32_t)(a >> 20), m, mg);
    r = ref_crt_mod(r * (uint32_t)t->c20[q] + (uint32_t)(a & 0xfffffu), m, mg);
    r = ref_crt_mod(r * (uint32_t)w[q][p2 >> 3], m, mg);
    r = ref_crt_mod(r << (p2 & 7), m, mg);
    if (Q < 0 && r) r = m - r;
    return 2 * r >= m ? (int)r - (int)m : (int)r;
}

/* Entry kk of a contiguous vector (value v, scale e) into its row of N kp int8 residues (modulus
 * t at t kp + kk), a' from ref_crt_value_direct (the tests compare it with the integer of
 * ref_split's digits). Returns 0 when a' is out of its range (never for the route's formats). */
REF_HD int ref_crt_operand_one(int8_t *row, double v, int e, int S, int64_t kp, const ref_crt_table *t,
                               const int (*w)[REF_SMAX + 1], int64_t kk)
{
    int64_t Q;
    int p2, ok = ref_crt_value_direct(&Q, &p2, v, e, S) && p2 < 8 * (REF_SMAX + 1);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int q = 0; q < REF_CRT_MAX; q++)   /* constant indices into t: a kernel reads it from its parameters */
        if (q < t->n) row[q * kp + kk] = (int8_t)(Q && ok ? ref_crt_residue_direct(Q, p2, t, w, q) : 0);
    return ok;
}

/* d_t = (C_t mod m_t) y_t mod m_t, a byte (m, magic, c16, y: the table's for modulus t), in
 * pieces of 16 bits. */
REF_HD uint8_t ref_crt_reduce(int32_t c, uint32_t m, uint32_t magic, uint32_t c16, uint32_t y)
{
    uint32_t a = c < 0 ? 0u - (uint32_t)c : (uint32_t)c;
    uint32_t r = ref_crt_mod(a >> 16, m, magic);
    r = ref_crt_mod(r * c16 + (a & 0xffffu), m, magic);
    if (c < 0 && r) r = m - r;
    return (uint8_t)ref_crt_mod(r * y, m, magic);
}

/* x >= y for numbers of REF_CRT_LIMBS limbs (no early exit: the loops unroll on the device). */
REF_HD int ref_crt_ge(const uint32_t *x, const uint32_t *y)
{
    int res = 1, decided = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--)
        if (!decided && x[l] != y[l]) { res = x[l] > y[l]; decided = 1; }
    return res;
}

/* x += s y over the limbs (|s| <= 2^20); the carry out of the top limb (signed, in units of
 * 2^(32 REF_CRT_LIMBS)) is added to *c. */
REF_HD void ref_crt_add(uint32_t *x, int64_t *c, const uint32_t *y, int64_t s)
{
    int64_t cc = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int l = 0; l < REF_CRT_LIMBS; l++) {
        int64_t v = (int64_t)x[l] + s * (int64_t)y[l] + cc;
        int64_t lo = v & 0xffffffffll;
        x[l] = (uint32_t)lo;
        cc = (v - lo) / 0x100000000ll;
    }
    *c += cc;
}

/* X from the bytes d_t = d[t * stride] (ref_crt_reduce): its sign (1: negative) and magnitude
 * in 32-bit limbs. Y = sum_t d_t (M / m_t) = sum_g (M / P_g) z_g with z_g = sum_{t in g} d_t
 * (P_g / m_t) < 3 P_g < 2^26, in 32-bit integers: one 32 x 32 -> 64-bit product per group and
 * limb instead of one per modulus and limb. Returns 0 if Y mod M came out of range (never: the
 * quotient's estimate is off by at most one). */
REF_HD int ref_crt_value_limbs(uint32_t *mag, int *neg, const uint8_t *d, int64_t stride, const ref_crt_table *t)
{
    uint64_t acc[REF_CRT_LIMBS];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int l = 0; l < REF_CRT_LIMBS; l++) acc[l] = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int g = 0; g < REF_CRT_GROUPS; g++) {   /* each term < 2^58, at most 10 of them per limb */
        if (g * REF_CRT_GROUP >= t->n) break;
        uint32_t z = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int u = 0; u < REF_CRT_GROUP; u++) {
            int q = g * REF_CRT_GROUP + u;
            if (q < t->n) z += (uint32_t)d[q * stride] * t->gf[q];
        }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int l = 0; l < REF_CRT_LIMBS; l++) acc[l] += (uint64_t)z * t->gt[g][l];
    }
    uint32_t x[REF_CRT_LIMBS];
    double yd = 0.0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int l = 0; l < REF_CRT_LIMBS; l++) {   /* carries: limbs of 32 bits (Y < 2^256) */
        if (l + 1 < REF_CRT_LIMBS) acc[l + 1] += acc[l] >> 32;
        x[l] = (uint32_t)acc[l];
    }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--) yd = yd * 0x1p32 + (double)x[l];
    int64_t c = 0;
    ref_crt_add(x, &c, t->big, -(int64_t)floor(yd / t->big_d));   /* Y - q M, q = Y / M within one */
    if (c < 0 || ref_crt_ge(x, t->big)) {   /* one correction: + M or - M */
        int64_t s = c < 0 ? 1 : -1;
        ref_crt_add(x, &c, t->big, s);
        if (c != 0 || ref_crt_ge(x, t->big)) return 0;   /* still out of [0, M) */
    }
    int high = ref_crt_ge(x, t->half);   /* X >= M / 2 stands for X - M < 0 */
    *neg = high;
    int64_t b = 0;
    if (high) {   /* M - x */
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int l = 0; l < REF_CRT_LIMBS; l++) { mag[l] = t->big[l]; }
        ref_crt_add(mag, &b, x, -1);
    } else {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int l = 0; l < REF_CRT_LIMBS; l++) mag[l] = x[l];
    }
    return b == 0;
}

/* One 32-bit limb v 2^ex of the square's value into the state: exact (ref_acc) when ex is in
 * [-1022, 970]; below, only its bound 2^(ex + 32) into err (it is that small); above, unknown. */
REF_HD void ref_crt_acc_limb(double *h, double *l, double *err, double v, int ex)
{
    if (v == 0.0) return;
    if (ex > 970) { *err = INFINITY; return; }
    if (ex >= -1022) { ref_acc(h, l, err, v * ref_pow2(ex)); return; }
    *err += ex + 32 >= -1022 ? ref_pow2(ex + 32) : 0x1p-1022;
}

/* Steps 4 and 6 for element x on the residue route: the state (h, l, err) written from the
 * square's value X 2^(E_i + F_j - 8 (Sa + Sb)), d: the N byte planes (plane apart), row-major
 * with leading dimension n. */
REF_HD void ref_crt_accumulate_one(double *h, double *l, double *err, const uint8_t *d, int64_t plane,
                                   const ref_crt_table *t, const int *ea, const int *fb, int64_t n, int64_t x)
{
    uint32_t mag[REF_CRT_LIMBS];
    int neg = 0;
    double hh = 0.0, ll = 0.0, ee = 0.0;
    if (!ref_crt_value_limbs(mag, &neg, d + x, plane, t)) {
        ee = INFINITY;
    } else {
        int ex = ea[x / n] + fb[x % n] - REF_INT8_BETA * (t->sa + t->sb);
        for (int q = REF_CRT_LIMBS - 1; q >= 0; q--)   /* largest first */
            ref_crt_acc_limb(&hh, &ll, &ee, neg ? -(double)mag[q] : (double)mag[q], ex + 32 * q);
    }
    h[x] = hh; l[x] = ll; err[x] = ee;
}

#endif
