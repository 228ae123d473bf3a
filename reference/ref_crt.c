/* ref_crt.c — the residue route's tables (ref_crt.h says what they are and why the route is
 * exact): the moduli a square needs, M and M / P_g (a group's product) in limbs, the inverses
 * and the powers of 256. */
#include <math.h>
#include <string.h>

#include "ref_crt.h"

/* Pairwise coprime, largest first: 2^8, 3 5 17, 11 23, 13 19, 7 31 and primes. */
static const int moduli[REF_CRT_MAX] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197,
                                        193, 191, 181, 179, 173, 167, 163, 157, 151, 149, 139, 137, 131, 127, 113};

static int ceil_log2(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

int ref_crt_count(int sa, int sb, int64_t kp)
{
    /* M >= 2^need; log2 of each modulus from below (a relative 2^-40 off the double's), so
     * the sum is a lower bound of log2 M */
    double need = 8.0 * (sa + sb) + ceil_log2(kp < 1 ? 1 : kp), have = 0.0;
    for (int t = 0; t < REF_CRT_MAX; t++) {
        have += log2((double)moduli[t]) * (1.0 - 0x1p-40);
        if (have >= need) return t + 1;
    }
    return 0;
}

/* x *= f (f < 2^31), limbs of 32 bits */
static void limbs_mul(uint32_t *x, uint32_t f)
{
    uint64_t c = 0;
    for (int l = 0; l < REF_CRT_LIMBS; l++) {
        uint64_t v = (uint64_t)x[l] * f + c;
        x[l] = (uint32_t)v;
        c = v >> 32;
    }
}

/* q = x / f, returns x mod f */
static uint32_t limbs_div(uint32_t *q, const uint32_t *x, uint32_t f)
{
    uint64_t r = 0;
    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--) {
        uint64_t v = (r << 32) | x[l];
        q[l] = (uint32_t)(v / f);
        r = v % f;
    }
    return (uint32_t)r;
}

int ref_crt_table_init(ref_crt_table *t, int sa, int sb, int64_t kp)
{
    memset(t, 0, sizeof *t);
    int n = ref_crt_count(sa, sb, kp);
    if (n == 0 || sa < 1 || sb < 1 || sa > REF_SMAX || sb > REF_SMAX) return 0;
    t->n = n; t->sa = sa; t->sb = sb;
    t->big[0] = 1;
    for (int q = 0; q < n; q++) {
        t->m[q] = moduli[q];
        t->magic[q] = (uint32_t)((0x100000000ull + (uint64_t)moduli[q] - 1) / (uint64_t)moduli[q]);
        t->c16[q] = (int)((1u << 16) % (uint32_t)moduli[q]);
        t->c20[q] = (int)((1u << 20) % (uint32_t)moduli[q]);
        limbs_mul(t->big, (uint32_t)moduli[q]);
    }
    t->big_d = 0.0;
    for (int l = REF_CRT_LIMBS - 1; l >= 0; l--) t->big_d = t->big_d * 0x1p32 + t->big[l];
    limbs_div(t->half, t->big, 2);
    for (int g = 0; g * REF_CRT_GROUP < n; g++) {   /* P_g, P_g / m_t, M / P_g */
        uint32_t pg = 1;
        for (int q = g * REF_CRT_GROUP; q < n && q < (g + 1) * REF_CRT_GROUP; q++) pg *= (uint32_t)t->m[q];
        for (int q = g * REF_CRT_GROUP; q < n && q < (g + 1) * REF_CRT_GROUP; q++) t->gf[q] = pg / (uint32_t)t->m[q];
        limbs_div(t->gt[g], t->big, pg);
    }
    for (int q = 0; q < n; q++) {
        int m = t->m[q];
        uint32_t mt[REF_CRT_LIMBS], rest[REF_CRT_LIMBS];
        limbs_div(mt, t->big, (uint32_t)m);
        int r = (int)limbs_div(rest, mt, (uint32_t)m);   /* (M / m) mod m: prime to m */
        for (int y = 1; y < m; y++)
            if (r * y % m == 1) { t->y[q] = y; break; }
        int p = 1 % m;
        for (int e = 0; e <= REF_SMAX; e++) { t->w[q][e] = p; p = p * 256 % m; }
    }
    return 1;
}
