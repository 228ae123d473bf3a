/* reference/quant.c — int4 quantisation with per-group scales (fused.h), the host operands of the
 * fused int4 operator and the quantise/dequantise round trip with its SNR.
 *
 * Quantiser: symmetric absmax per group of g consecutive K elements of a row:
 *   s = RN_fmt(max|v| / 7) (fmt = fp16 or bf16; s = 1 for an all-zero group, s = min normal of fmt
 *   if the quotient underflows), q = clamp(RN(v / s), -8, 7).
 * Dequantisation q * s is exact in binary64 and in fp32 (an int4 has 4 significant bits, an fp16
 * scale 11 and a bf16 scale 8: <= 15 bits <= 24, exponents well inside fp32's range).
 * Round-trip error: |v - q s| <= s/2 whenever |v / s| <= 7.5, i.e. always here since s >= max|v|/7
 * up to one rounding of s (relative 2^-11 for fp16, 2^-8 for bf16): max|v|/s <= 7 (1 + 2^-8) < 7.5.
 * (RN(v/s) in binary64 adds at most one ulp of v/s, hence the tests' factor (1 + 2^-50).)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/fused.h"
#include "mmaprobe/core.h"

mmp_status mmp_fused_problem_check(const mmp_fused_problem *p)
{
    if (!p) return MMP_ERR(MMP_STATUS_INVALID, "fused problem is NULL");
    if (p->m <= 0 || p->n <= 0 || p->k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "fused problem: M, N, K must be positive (got %lld x %lld x %lld)",
                       (long long)p->m, (long long)p->n, (long long)p->k);
    if (p->group <= 0 || p->k % p->group)
        return MMP_ERR(MMP_STATUS_INVALID, "fused problem: group size %d must be positive and divide K = %lld",
                       p->group, (long long)p->k);
    if (p->rank <= 0 || p->rank > 4096)
        return MMP_ERR(MMP_STATUS_INVALID, "fused problem: rank %d outside 1..4096", p->rank);
    if (p->scale_format != MMP_FORMAT_FP16 && p->scale_format != MMP_FORMAT_BF16)
        return MMP_ERR(MMP_STATUS_INVALID, "fused problem: scale format must be fp16 or bf16 (got %s)",
                       mmp_format_name(p->scale_format));
    if (p->m > (1 << 24) || p->n > (1 << 24) || p->k > (1 << 24))
        return MMP_ERR(MMP_STATUS_INVALID, "fused problem: dimensions above 2^24 are not supported");
    return MMP_STATUS_OK;
}

int mmp_fused_int4(const uint8_t *q, int64_t idx)
{
    int v = (q[idx / 2] >> (4 * (idx % 2))) & 15;
    return v >= 8 ? v - 16 : v;
}

double mmp_fused_scale(const uint16_t *s, int64_t idx, mmp_format scale_format)
{
    return mmp_format_decode(s[idx], scale_format);
}

mmp_status mmp_fused_quantize(uint8_t *q, uint16_t *scales, const double *v, int64_t rows, int64_t k,
                              int32_t group, mmp_format scale_format)
{
    if (group <= 0 || k % group)
        return MMP_ERR(MMP_STATUS_INVALID, "quantize: group %d does not divide K = %lld", group, (long long)k);
    if (scale_format != MMP_FORMAT_FP16 && scale_format != MMP_FORMAT_BF16)
        return MMP_ERR(MMP_STATUS_INVALID, "quantize: scale format must be fp16 or bf16");
    const mmp_format_info *fi = mmp_format_get_info(scale_format);
    const int64_t ng = k / group;
    memset(q, 0, (size_t)((rows * k + 1) / 2));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t G = 0; G < ng; G++) {
            const double *vg = v + i * k + G * group;
            double amax = 0;
            for (int32_t e = 0; e < group; e++) {
                if (!isfinite(vg[e]))
                    return MMP_ERR(MMP_STATUS_INVALID, "quantize: non-finite value at row %lld, column %lld",
                                   (long long)i, (long long)(G * group + e));
                amax = fmax(amax, fabs(vg[e]));
            }
            double s = amax > 0 ? mmp_format_round(amax / 7.0, scale_format, MMP_ROUND_NEAREST_EVEN, 1) : 1.0;
            if (s < fi->min_normal) s = fi->min_normal;
            uint64_t bits;
            MMP_TRY(mmp_format_encode(&bits, NULL, s, scale_format, MMP_ROUND_NEAREST_EVEN, 1));
            scales[i * ng + G] = (uint16_t)bits;
            for (int32_t e = 0; e < group; e++) {
                double r = nearbyint(vg[e] / s);   /* default rounding mode: nearest even */
                int qi = r > 7 ? 7 : r < -8 ? -8 : (int)r;
                int64_t idx = i * k + G * group + e;
                q[idx / 2] |= (uint8_t)((qi & 15) << (4 * (idx % 2)));
            }
        }
    return MMP_STATUS_OK;
}

void mmp_fused_dequantize(double *out, const uint8_t *q, const uint16_t *scales, int64_t rows, int64_t k,
                          int32_t group, mmp_format scale_format)
{
    const int64_t ng = k / group;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t kk = 0; kk < k; kk++)
            out[i * k + kk] = mmp_fused_int4(q, i * k + kk) * mmp_fused_scale(scales, i * ng + kk / group, scale_format);
}

mmp_status mmp_fused_roundtrip(mmp_fused_snr *out, const double *v, int64_t rows, int64_t k, int32_t group,
                               mmp_format scale_format)
{
    const int64_t ng = k / group;
    uint8_t *q = malloc((size_t)((rows * k + 1) / 2));
    uint16_t *s = malloc(sizeof *s * (size_t)(rows * (ng ? ng : 1)));
    double *d = malloc(sizeof *d * (size_t)(rows * k));
    mmp_status st = MMP_STATUS_OK;
    if (!q || !s || !d) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "roundtrip: out of host memory"); goto done; }
    if ((st = mmp_fused_quantize(q, s, v, rows, k, group, scale_format)) != MMP_STATUS_OK) goto done;
    mmp_fused_dequantize(d, q, s, rows, k, group, scale_format);
    double sig = 0, noise = 0, noise_bound = 0, worst = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t kk = 0; kk < k; kk++) {
            double e = v[i * k + kk] - d[i * k + kk];
            double half = 0.5 * mmp_fused_scale(s, i * ng + kk / group, scale_format);
            sig += v[i * k + kk] * v[i * k + kk];
            noise += e * e;
            noise_bound += half * half;
            worst = fmax(worst, fabs(e) / half);
        }
    out->snr_db = noise > 0 ? 10 * log10(sig / noise) : INFINITY;
    out->snr_bound_db = noise_bound > 0 ? 10 * log10(sig / noise_bound) : INFINITY;
    out->max_err_over_half_step = worst;
done:
    free(q);
    free(s);
    free(d);
    return st;
}

/* ---- host operands ---- */
mmp_status mmp_fused_host_init(mmp_fused_host *h, const mmp_fused_problem *p)
{
    memset(h, 0, sizeof *h);
    MMP_TRY(mmp_fused_problem_check(p));
    h->p = *p;
    const int64_t m = p->m, n = p->n, k = p->k, r = p->rank, ng = k / p->group;
    h->xq = calloc((size_t)((m * k + 1) / 2), 1);
    h->wq = calloc((size_t)((n * k + 1) / 2), 1);
    h->sx = calloc((size_t)(m * ng), 2);
    h->sw = calloc((size_t)(n * ng), 2);
    h->x = calloc((size_t)(m * k), 2);
    h->a = calloc((size_t)(k * r), 2);
    h->b = calloc((size_t)(r * n), 2);
    h->beta = calloc((size_t)n, sizeof(float));
    h->z = calloc((size_t)(m * n), sizeof(float));
    h->xf = calloc((size_t)(m * k), sizeof(double));
    h->wf = calloc((size_t)(n * k), sizeof(double));
    if (!h->xq || !h->wq || !h->sx || !h->sw || !h->x || !h->a || !h->b || !h->beta || !h->z || !h->xf || !h->wf) {
        mmp_fused_host_clear(h);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused operands: out of host memory (%lld x %lld x %lld)",
                       (long long)m, (long long)n, (long long)k);
    }
    return MMP_STATUS_OK;
}

void mmp_fused_host_clear(mmp_fused_host *h)
{
    free(h->xq); free(h->wq); free(h->sx); free(h->sw); free(h->x); free(h->a); free(h->b);
    free(h->beta); free(h->z); free(h->xf); free(h->wf);
    memset(h, 0, sizeof *h);
}

static uint16_t bf16_bits(double v)
{
    uint64_t bits = 0;
    mmp_format_encode(&bits, NULL, v, MMP_FORMAT_BF16, MMP_ROUND_NEAREST_EVEN, 1);
    return (uint16_t)bits;
}

mmp_status mmp_fused_host_fill(mmp_fused_host *h, uint64_t seed)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t m = p->m, n = p->n, k = p->k, r = p->rank;
    /* streams: 1 X, 2 W, 3 A, 4 B, 5 beta, 6 Z; element counter = linear index */
    for (int64_t i = 0; i < m * k; i++) {
        h->xf[i] = mmp_rng_normal(seed, 1, (uint64_t)i, 0);
        h->x[i] = bf16_bits(h->xf[i]);
    }
    for (int64_t i = 0; i < n * k; i++) h->wf[i] = mmp_rng_normal(seed, 2, (uint64_t)i, 0);
    MMP_TRY(mmp_fused_quantize(h->xq, h->sx, h->xf, m, k, p->group, p->scale_format));
    MMP_TRY(mmp_fused_quantize(h->wq, h->sw, h->wf, n, k, p->group, p->scale_format));
    /* A, B scaled so that X A B is of the order of one group's contribution to Q */
    const double sa = 1.0 / sqrt((double)k), sb = 1.0 / sqrt((double)r);
    for (int64_t i = 0; i < k * r; i++) h->a[i] = bf16_bits(sa * mmp_rng_normal(seed, 3, (uint64_t)i, 0));
    for (int64_t i = 0; i < r * n; i++) h->b[i] = bf16_bits(sb * mmp_rng_normal(seed, 4, (uint64_t)i, 0));
    for (int64_t j = 0; j < n; j++) h->beta[j] = (float)mmp_rng_normal(seed, 5, (uint64_t)j, 0);
    for (int64_t i = 0; i < m * n; i++) h->z[i] = (float)(8.0 * mmp_rng_normal(seed, 6, (uint64_t)i, 0));
    return MMP_STATUS_OK;
}

mmp_fused_operands mmp_fused_host_operands(const mmp_fused_host *h, void *y)
{
    mmp_fused_operands o = {h->xq, h->sx, h->wq, h->sw, h->x, h->a, h->b, h->beta, h->z, y};
    return o;
}
