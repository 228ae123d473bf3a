/* model_fit.c — count model/hardware mismatches and fit model parameters to observed outputs.
 *
 * The fit searches block size x extra alignment bits x output rounding (the features random
 * vectors expose) and keeps the formats, floor and subnormal handling of the base parameters
 * (the targeted probes measure those). A candidate is dropped as soon as it has more
 * mismatches than the best so far, so a fit over 5,000 vectors takes milliseconds.
 */
#include <stdint.h>

#include "mmaprobe/model.h"

static size_t count_upto(size_t *first_bad, const double *a, const double *b, const double *c,
                         const uint32_t *d_bits, size_t n, int k, const mmp_model_params *p,
                         size_t limit)
{
    size_t bad = 0;
    if (first_bad) *first_bad = n;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (mmp_model_dot(&d, a + i * (size_t)k, b + i * (size_t)k, c[i], k, p) != MMP_STATUS_OK)
            return n + 1;
        if (!mmp_model_fp32_same(mmp_model_fp32_bits(d), d_bits[i])) {
            if (first_bad && bad == 0) *first_bad = i;
            if (++bad > limit) return bad;
        }
    }
    return bad;
}

mmp_status mmp_model_count_mismatches(size_t *mismatches, size_t *first_bad, const double *a,
                                      const double *b, const double *c, const uint32_t *d_bits,
                                      size_t n, int k, const mmp_model_params *p)
{
    if (!mismatches || !a || !b || !c || !d_bits)
        return MMP_ERR(MMP_STATUS_INVALID, "model mismatch count: NULL argument");
    if (k < 1) return MMP_ERR(MMP_STATUS_INVALID, "model mismatch count: K %d < 1", k);
    MMP_TRY(mmp_model_params_check(p));
    *mismatches = count_upto(first_bad, a, b, c, d_bits, n, k, p, SIZE_MAX - 1);
    return MMP_STATUS_OK;
}

mmp_status mmp_model_fit(mmp_model_fit_result *res, const double *a, const double *b,
                         const double *c, const uint32_t *d_bits, size_t n, int k,
                         const mmp_model_params *base)
{
    static const int blocks[] = {1, 2, 4, 8, 16, 32, 64};
    static const mmp_round out_rounds[] = {MMP_ROUND_TOWARD_ZERO, MMP_ROUND_NEAREST_EVEN};
    if (!res || !a || !b || !c || !d_bits || !base)
        return MMP_ERR(MMP_STATUS_INVALID, "model fit: NULL argument");
    if (k < 1) return MMP_ERR(MMP_STATUS_INVALID, "model fit: K %d < 1", k);
    MMP_TRY(mmp_model_params_check(base));
    int out_frac = base->out_format == MMP_FORMAT_FP16 ? 10 : 23;
    res->best = *base;
    res->mismatches = SIZE_MAX;
    res->candidates = 0;
    res->tied = 0;
    for (size_t r = 0; r < sizeof out_rounds / sizeof out_rounds[0]; r++) {
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
            /* blocks longer than K all behave as one block of K: try only the first */
            if (bi > 0 && blocks[bi - 1] >= k) break;
            for (int extra = -12; extra <= 8; extra++) {
                mmp_model_params p = *base;
                p.block_size = blocks[bi];
                p.extra_align_bits = extra;
                p.out_round = out_rounds[r];
                /* a narrow accumulator (fewer bits than fp32) also rounds its result there */
                p.result_frac_bits = extra < 0 && out_frac + extra > 0 ? out_frac + extra : 0;
                res->candidates++;
                size_t limit = res->mismatches == SIZE_MAX ? SIZE_MAX - 1 : res->mismatches;
                size_t bad = count_upto(NULL, a, b, c, d_bits, n, k, &p, limit);
                if (bad < res->mismatches) {
                    res->mismatches = bad;
                    res->best = p;
                    res->tied = 0;
                } else if (bad == res->mismatches) {
                    res->tied++;
                }
            }
        }
    }
    return MMP_STATUS_OK;
}
