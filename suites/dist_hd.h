/* suites/dist_hd.h — the value of one element of a case's operand, for the host (dist.c) AND
 * the device (runner_dev.cu): one source, so a case's inputs generated on the device are the
 * host generator's bytes. dist.c says what each distribution is; mmp_dist_ctx_init fills the
 * context on the host, which is then passed to a kernel by value.
 *
 *   mmp_dist_ctx x; mmp_dist_ctx_init(&x, &case);
 *   double v = mmp_dist_hd_value(&x, MMP_MAT_A, i, k);    // before rounding to A's format
 *   uint64_t bits = mmp_dist_hd_bits(&x, MMP_MAT_A, i, k); // stored in A's format
 */
#ifndef MMAPROBE_DIST_HD_H
#define MMAPROBE_DIST_HD_H

#include <math.h>
#include <stdint.h>
#include "mmaprobe/hd.h"
#include "mmaprobe/runner.h"

enum { MMP_MAT_A = 0, MMP_MAT_B = 1, MMP_MAT_C = 2 };

typedef struct mmp_dist_ctx {
    mmp_dist dist;
    uint64_t seed, stream;         /* stream = hash of the case's data key */
    uint64_t key;                  /* Philox key of (seed, stream) */
    int64_t k;
    mmp_format fmt[3];             /* A, B, C storage formats ... */
    mmp_format_hd fh[3];           /* ... and their descriptions (storage_bits 0: none) */
    int64_t exact_q;               /* exact: integers in [-q, q] ... */
    int64_t exact_stride;          /* ... non-zero only where (K-1-k) % stride == 0 */
    int64_t onehot_base, onehot_width; /* onehot: the non-zero of row i of A is in
                                          [base, base + width) */
    int wide_lo[3], wide_hi[3];    /* wide: binary exponents drawn in [lo, hi] */
    int special_max;               /* special: place max finite (safe in the accumulator) */
} mmp_dist_ctx;

/* Uniform draws for (mat, i, j); draw selects an independent number for the same element. */
MMP_HD double mmp_dist_hd_u(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j, int draw)
{
    return mmp_rng_hd_uniform_key(x->key, (uint64_t)i << 32 | (uint32_t)j, (uint64_t)mat << 32 | (uint32_t)draw);
}

MMP_HD int64_t mmp_dist_hd_randint(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j, int draw, int64_t lo,
                       int64_t hi)
{
    int64_t v = lo + (int64_t)floor(mmp_dist_hd_u(x, mat, i, j, draw) * (double)(hi - lo + 1));
    return v > hi ? hi : v;
}

MMP_HD double mmp_dist_hd_value_int(const mmp_dist_ctx *x, const mmp_format_hd *fi, int mat, int64_t i, int64_t j)
{
    double lo = fi->lowest, hi = fi->max_finite;
    switch (x->dist) {
    case MMP_DIST_NORMAL: {
        double v = nearbyint(mmp_rng_hd_normal_key(x->key, (uint64_t)i << 32 | (uint32_t)j,
                                            (uint64_t)mat << 32) * hi / 4);
        return v < lo ? lo : v > hi ? hi : v;
    }
    case MMP_DIST_SPECIAL:
        if (mat == MMP_MAT_A && i % 4 == 1 && j == (i * 7) % x->k) return lo;
        if (mat == MMP_MAT_A && i % 4 == 2 && j == (i * 7) % x->k) return hi;
        if (mat == MMP_MAT_B && j % 4 == 1 && i == (j * 5) % x->k) return lo;
        return (double)mmp_dist_hd_randint(x, mat, i, j, 0, (int64_t)lo, (int64_t)hi);
    case MMP_DIST_CANCEL: {
        /* a pairs equal, b(2p+1) = -b(2p) + {-1, 0, 1} within range. */
        if (mat == MMP_MAT_A) return (double)mmp_dist_hd_randint(x, mat, i, j / 2, 0, (int64_t)lo / 2, (int64_t)hi / 2);
        if (mat == MMP_MAT_B) {
            double v = (double)mmp_dist_hd_randint(x, mat, i / 2, j, 0, (int64_t)lo / 2, (int64_t)hi / 2);
            if (i % 2) v = lo < 0 ? -v + (double)mmp_dist_hd_randint(x, mat, i, j, 1, -1, 1) : hi - v;
            return v;
        }
        return 0;
    }
    default:   /* uniform, wide: the whole range */
        return (double)mmp_dist_hd_randint(x, mat, i, j, 0, (int64_t)lo, (int64_t)hi);
    }
}

MMP_HD double mmp_dist_hd_value(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j)
{
    const mmp_format_hd *fi = &x->fh[mat];
    if (!fi->storage_bits) return 0;
    int is_signed = fi->is_float || fi->is_signed;
    /* (row, col) -> (outer index, k): A is M x K (k = col), B is K x N (k = row). */
    int64_t kk = mat == MMP_MAT_A ? j : i, other = mat == MMP_MAT_A ? i : j;
    switch (x->dist) {
    case MMP_DIST_EXACT: {
        if (mat == MMP_MAT_A && (x->k - 1 - kk) % x->exact_stride != 0) return 0;
        int64_t q = x->exact_q;
        return (double)mmp_dist_hd_randint(x, mat, i, j, 0, is_signed ? -q : 0, q);
    }
    case MMP_DIST_ONEHOT: {
        if (mat == MMP_MAT_C) return 0;
        /* position: a seeded choice among the window's k; half of D is non-zero when the
         * window is 2 wide, and A's and B's values differ, so D(i,j) != D(j,i) */
        uint32_t w[4];
        mmp_rng_hd_philox_key(w, x->key, (uint64_t)other, (uint64_t)mat << 32 | 0xFFFFu);
        int64_t pos = x->onehot_base + (int64_t)(w[0] % (uint32_t)x->onehot_width);
        if (kk != pos) return 0;
        int64_t v = mat == MMP_MAT_A ? 1 + other % 7 : 1 + (other * 3 + 1) % 5;
        return (double)(is_signed && (w[1] & 1) ? -v : v);
    }
    default:
        break;
    }
    if (!fi->is_float) return mmp_dist_hd_value_int(x, fi, mat, i, j);
    switch (x->dist) {
    case MMP_DIST_UNIFORM:
        return 2 * mmp_dist_hd_u(x, mat, i, j, 0) - 1;
    case MMP_DIST_NORMAL:
        return mmp_rng_hd_normal_key(x->key, (uint64_t)i << 32 | (uint32_t)j, (uint64_t)mat << 32);
    case MMP_DIST_WIDE: {
        int e = (int)mmp_dist_hd_randint(x, mat, i, j, 1, x->wide_lo[mat], x->wide_hi[mat]);
        double v = ldexp(1 + mmp_dist_hd_u(x, mat, i, j, 0), e);
        return mmp_dist_hd_u(x, mat, i, j, 2) < 0.5 ? -v : v;
    }
    case MMP_DIST_CANCEL: {
        if (mat == MMP_MAT_A) return 1 + mmp_dist_hd_u(x, mat, i, j / 2, 0);
        if (mat == MMP_MAT_B) {
            double v = (1 + mmp_dist_hd_u(x, mat, i / 2, j, 0)) * (mmp_dist_hd_u(x, mat, i / 2, j, 1) < 0.5 ? -1 : 1);
            if (i % 2 == 0) return v;
            /* -v (1 + d), |d| a few units in the last place of the input format */
            double d = (2 * mmp_dist_hd_u(x, mat, i, j, 2) - 1) * ldexp(1.0, 3 - fi->precision);
            return -v * (1 + d);
        }
        return 2 * mmp_dist_hd_u(x, mat, i, j, 0) - 1;
    }
    case MMP_DIST_SPECIAL: {
        if (mat == MMP_MAT_A && j == (i * 7 + 3) % x->k) {
            switch (i % 8) {
            case 1: return NAN;
            case 2: if (fi->has_inf) return INFINITY; break;
            case 3: if (fi->has_inf) return -INFINITY; break;
            case 4: return -0.0;
            case 5: if (x->special_max) return fi->max_finite; break;
            case 6: return fi->min_subnormal;
            default: break;
            }
        }
        if (mat == MMP_MAT_B && i == (j * 5 + 1) % x->k) {
            if (j % 4 == 1 && fi->has_inf) return INFINITY;
            if (j % 4 == 2) return NAN;
        }
        double u = 2 * mmp_dist_hd_u(x, mat, i, j, 0) - 1;
        return mat == MMP_MAT_B ? u / 2 : u;
    }
    default:
        return 0;
    }
}

/* Element (i, j) of operand mat as stored: rounded to nearest (even), integers saturated. */
MMP_HD uint64_t mmp_dist_hd_bits(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j)
{
    const mmp_format_hd *f = &x->fh[mat];
    return mmp_format_hd_encode(mmp_dist_hd_value(x, mat, i, j), f, MMP_ROUND_NEAREST_EVEN, !f->is_float);
}

#endif
