/* mmaprobe/metrics.h — error metrics of a kernel's output against the reference, and verdict
 * tolerances. Fills mmp_metrics (result.h).
 *
 * Usage:
 *   mmp_metrics_input in = {0};
 *   in.got = host_copy_of_D; in.d_format = MMP_FORMAT_FP32; in.layout = MMP_LAYOUT_ROW; in.ldd = n;
 *   in.want64 = ref.d64; in.want_out = ref.dout; in.absbound = ref.absbound;   // row-major M x N
 *   in.m = m; in.n = n; in.k = k;
 *   in.u_acc = mmp_metrics_unit_truncation(MMP_FORMAT_FP32, 0);  // tensor cores truncate
 *   mmp_tolerance tol; mmp_tolerance_init(&tol);                  // deterministic bound
 *   mmp_metrics m; mmp_metrics_compute(&m, &in, &tol);
 *   if (m.nan_mismatch || m.inf_mismatch || m.above_tol) ...FAIL
 *
 * Bounds (per element, S_ij = (|alpha| |A||B| + |beta| |C|)_ij, an upper bound from the reference):
 *   deterministic:  gamma_{Ke}(u_acc) S_ij + u_mul_term + out_term,  Ke = K + ceil(K/4) + 1
 *     gamma_n(u) = n u / (1 - n u) (Higham). u_acc is the accumulator's unit of TRUNCATION,
 *     2^(1-p), not round-to-nearest's 2^-p: tensor cores align and normalise toward zero
 *     (Fasi et al. 2021). Ke adds one truncation per block of >= 4 fused products (the block's
 *     aligned accumulator term) and one for the final conversion, so a correct block-FMA
 *     kernel can never exceed it. u_mul_term = (2 u_mul + u_mul^2) S_ij when the kernel rounds
 *     its inputs to a narrower mul_format first (e.g. tf32). out_term = 2^(1-p_out) (|D_ij| +
 *     gamma S_ij) when the output format is narrower than the accumulator (either rounding).
 *     Underflow adds an absolute term: (Ke + 1) min_normal(acc) (a product or partial sum below
 *     the accumulator's normal range may be flushed or rounded to its subnormal grid), plus one
 *     subnormal ulp of the output format when the output is narrower than the accumulator; an
 *     integer output adds 1 (alpha A B + beta C rounded to an integer, either direction).
 *     Products with a subnormal factor add gamma_Ke(u_acc) (Shat_ij - S_ij) (sub_excess, see
 *     mmp_metrics_subnormal_excess for the derivation).
 *   probabilistic: the same with gamma replaced by gamma~_Ke(lambda) = exp(lambda sqrt(Ke) u +
 *     Ke u^2 / (1 - u)) - 1 (Higham & Mary 2019), lambda = sqrt(2 ln(2 Ke / delta)),
 *     delta = 1e-6: holds with probability >= 1 - delta per element for mean-zero independent
 *     errors — NOT guaranteed for truncating hardware, whose errors are biased.
 */
#ifndef MMAPROBE_METRICS_H
#define MMAPROBE_METRICS_H

#include <math.h>
#include <stdint.h>
#include "mmaprobe/format.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_tolerance_mode {
    MMP_TOLERANCE_BOUND = 0,         /* deterministic bound (default) */
    MMP_TOLERANCE_PROBABILISTIC = 1, /* lambda sqrt(K) u */
    MMP_TOLERANCE_BITWISE = 2,       /* output == correctly rounded reference */
    MMP_TOLERANCE_ATOL_RTOL = 3,     /* |err| <= atol + rtol |want| */
    MMP_TOLERANCE_ULPS = 4           /* |err| <= ulps * ulp_out(want) */
} mmp_tolerance_mode;

typedef struct mmp_tolerance {
    mmp_tolerance_mode mode;
    double atol, rtol, ulps;
} mmp_tolerance;

void mmp_tolerance_init(mmp_tolerance *t);
const char *mmp_tolerance_name(mmp_tolerance_mode mode);   /* "bound", "probabilistic", ... */
mmp_status mmp_tolerance_from_name(mmp_tolerance_mode *mode, const char *name);

typedef struct mmp_metrics_input {
    const void *got;               /* kernel output (host memory), d_format, layout, ldd */
    mmp_format d_format;
    mmp_layout layout;
    int64_t ldd;
    const double *want64;          /* exact result rounded to binary64, row-major M x N */
    const double *want_out;        /* exact result rounded to the output format, row-major
                                      (NULL: exactness checks use want64) */
    const double *absbound;        /* S_ij, row-major (NULL: bounds are 0 -> bitwise only) */
    int64_t m, n, k;
    double u_acc;                  /* accumulator unit (truncation): 2^(1-p_acc) */
    double u_mul;                  /* input rounding unit (0 if inputs are used as stored) */
    int32_t acc_format;            /* mmp_format of the accumulator (for the output term) */
    const double *sub_excess;      /* Shat_ij - S_ij, row-major, or NULL: products with a
                                      subnormal factor (mmp_metrics_subnormal_excess) */
    unsigned char *bad;            /* NULL, or row-major M x N: set to 1 where the element is
                                      beyond the tolerance in force (0 elsewhere) */
    /* A kernel that rounds its inputs to a narrower multiply format (mul_format, e.g. tf32)
     * may turn a tiny finite input into 0, and Inf x that 0 into NaN. special_alt(ctx, i, j, got)
     * returns 1 when got's NaN/Inf class is the exact result's under that input rounding (the
     * caller recomputes the element's class from the rounded inputs); NULL: no such rounding. */
    int (*special_alt)(void *ctx, int64_t i, int64_t j, double got);
    void *special_ctx;
} mmp_metrics_input;

/* Subnormal factors. A tensor core does not normalise a product before alignment (the probes
 * measured products_normalised = 0): a subnormal input x keeps the exponent emin of its format,
 * so the product's alignment exponent overstates its magnitude by up to (p_in - 1) bits per
 * subnormal factor, and every term of its block is truncated relative to that larger exponent.
 * Derivation of the extension (per block, truncation unit u = 2^(1-p_acc)): each aligned term
 * loses < 2^(E - p_acc + 1 - extra) <= u 2^E, E = max(floor, exponents of the terms). For a
 * product of normal factors 2^e(a)+e(b) <= |a b|; with x^ = max(|x|, min_normal(in)) for x != 0,
 * 2^(e(a)+e(b)) <= a^ b^ for ANY non-zero a, b (a subnormal's exponent is emin = log2
 * min_normal). So the argument of the deterministic bound (2^E <= largest term <= S) holds with
 * S replaced by Shat = |alpha| sum a^_ik b^_kj + |beta| |c| (the floor part is the underflow
 * term): the bound becomes gamma_Ke(u) Shat + ..., i.e. the default bound plus the absolute
 * term gamma_Ke(u) (Shat - S), one (a^ b^ - |a b|) per product with a subnormal factor. It
 * holds for every block size, extra-bit count and K (it uses only 2^E <= Shat_block).
 * Writes excess[i*n + j] = |alpha| sum_k (a^ b^ - |a b|) over products with a subnormal
 * factor (A: m x k, B: k x n, in their formats/layouts); cost: (#subnormals) x (m or n). */
/* sub_abs (NULL or M x N): |alpha| sum |a b| over those products alone. */
mmp_status mmp_metrics_subnormal_excess(double *excess, double *sub_abs, const void *a, mmp_format fa, mmp_layout la,
                                        int64_t lda, const void *b, mmp_format fb, mmp_layout lb,
                                        int64_t ldb, int64_t m, int64_t n, int64_t k, double alpha);

/* Subnormal elements of a rows x cols matrix of f in layout l (0 for integer formats). */
int64_t mmp_metrics_subnormal_count(const void *a, mmp_format f, mmp_layout l, int64_t ld, int64_t rows, int64_t cols);


/* Unit of truncation 2^(1-p) of an accumulator format; acc_bits > 0 overrides p. 0 for ints. */
double mmp_metrics_unit_truncation(mmp_format acc, int acc_bits);
double mmp_metrics_gamma(double n, double u);            /* n u / (1 - n u); inf if n u >= 1 */
double mmp_metrics_gamma_prob(double n, double u, double lambda);
double mmp_metrics_lambda(double n);                      /* sqrt(2 ln(2 n / 1e-6)) */
double mmp_metrics_ulp(double x, mmp_format f);           /* ulp of f at x (1 for ints) */
/* The value a result's NaN/Inf class is compared with: the exact value (want, binary64), except
 * where its correct rounding to the output format overflows (want_out = +-Inf, want finite):
 * then that infinity is the right answer. runner_devcheck.cu has the same rule. */
static inline double mmp_metrics_class_want(double want, double want_out)
{
    return isinf(want_out) && isfinite(want) ? want_out : want;
}

/* The per-case constants of the bounds above (Ke, the units, the underflow term, both gammas)
 * from in's formats, k and units; mmp_metrics_compute's, for code that evaluates the same
 * per-element bounds elsewhere (the runner's comparison on the device). */
typedef struct mmp_metrics_bound {
    double k_eff, u_acc, u_mul, u_out, lambda;
    double abs_term;               /* underflow allowance */
    double gamma_sub;              /* gamma_Ke(u_acc) for the subnormal-factor excess */
    double gamma_det, gamma_prob;
} mmp_metrics_bound;
void mmp_metrics_bound_init(mmp_metrics_bound *bp, const mmp_metrics_input *in);

/* Which elements' excess may be left out: those where it cannot change the bound, the rounding
 * margin or the flush test (a 0 in its place gives bit-identical verdicts and metrics). s: the
 * elements' |alpha| |A||B| + |beta| |C| sums, want: their exact values (device arrays, row-major
 * M x N), rel: mmp_metrics_excess_rel of the case's bound. */
typedef struct mmp_metrics_excess_skip {
    const double *s, *want;
    double rel;
} mmp_metrics_excess_skip;

/* rel for mmp_metrics_excess_skip: 2^-56 min(1, gamma_det / gamma_sub, gamma_prob / gamma_sub),
 * 0 (skip only elements without a subnormal factor) when a gamma is not finite and positive. */
double mmp_metrics_excess_rel(const mmp_metrics_bound *bp);

/* Whether any element needs its excess, by the rule of mmp_metrics_excess_skip (s and want
 * host arrays here): *needed = 0 when every element's excess may be left out (the bounds are
 * then those of no excess, bit for bit), 1 otherwise. One pass over A, B and the elements. */
mmp_status mmp_metrics_subnormal_excess_needed(int *needed, const void *a, mmp_format fa, mmp_layout la, int64_t lda,
                                               const void *b, mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m,
                                               int64_t n, int64_t k, double alpha, const mmp_metrics_excess_skip *skip);

/* The same for A and B on CUDA device `device` (e.g. a case's resident operands), the results
 * copied to the host arrays (out_on_device: excess and sub_abs are device arrays of M x N,
 * written there). *none = 1 (and excess, sub_abs untouched) when no element of A or B is
 * subnormal, or, with skip, when no element needs its excess (then every excess is 0 to the
 * bounds); excess NULL: only *none is computed. skip NULL: every element, as DGEMMs
 * (metrics_sub_cuda.cu). With skip, a cap of each element's excess from its row's and column's
 * subnormal counts and largest magnitudes decides which elements need it; those, when few,
 * are summed one by one and the others get 0 (else DGEMMs as without skip).
 * MMP_STATUS_UNSUPPORTED without CUDA. */
mmp_status mmp_metrics_subnormal_excess_device(double *excess, double *sub_abs, int *none, const void *a,
                                               mmp_format fa, mmp_layout la, int64_t lda, const void *b,
                                               mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m, int64_t n,
                                               int64_t k, double alpha, const mmp_metrics_excess_skip *skip,
                                               int device, int out_on_device);

/* Computes every metric, the histogram and heatmap; above_tol/first_bad use tol. */
mmp_status mmp_metrics_compute(mmp_metrics *out, const mmp_metrics_input *in, const mmp_tolerance *tol);

#ifdef __cplusplus
}
#endif
#endif
