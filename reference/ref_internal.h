/* reference/ref_internal.h — shared internals of the reference GEMM paths (C and CUDA).
 *
 * Canonical data: every path first loads A, B, C into binary64 (exact: every format's values
 * are binary64 numbers) in the orders below (a row of A and a column of B are contiguous):
 *   a64[i * K + k] (M x K, row-major), b64[k + j * K] (K x N, column-major: both contiguous
 *   along k), c64[i * N + j] (M x N, row-major; NULL if beta == 0).
 * Results are row-major (mmp_ref_result).
 *
 * The accumulation helpers below are used by the CPU and the device code alike: a double-double
 * (h, l) plus a running bound err on the rounding errors of l, see ref_certified.c's proof.
 *
 * Calls between the files flow one way, top to bottom (a file calls only files below it):
 *   ref_gemm.c                      entry points: checks, picks a path
 *   ref_cuda.cu, ref_cuda2.cu       device paths (ref_nocuda.c: their stubs without CUDA)
 *   ref_cuda2_imma.cu               version 2's int8 route (slices on integer tensor cores)
 *   ref_v2_host.c                   the host twin of device path version 2
 *   ref_certified.c                 the certified (Ozaki split) host path
 *   ref_sparse.c                    its slice products from lists of nonzero digits (sparse planes)
 *   ref_cert_finish.c, ref_integer.c   decisions of the certified path; exact integer GEMMs
 *   ref_plan.c                      the plan: slices, slice pairs, remainder mode (ref_plan.h)
 *   ref_mpfr_native.c               MPFR for elements of the native operands
 *   ref_exact.c                     exact elements (ref_longacc.h: the long accumulator); NaN/Inf
 *   ref_mpfr.c                      MPFR on loaded data
 *   ref_base.c, ref_absbound.c      loading, results, rounding decisions; the |A||B| bound
 *   ref_alloc.c                     large arrays
 */
#ifndef MMAPROBE_REF_INTERNAL_H
#define MMAPROBE_REF_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"

#ifdef __CUDACC__
#define REF_HD __host__ __device__ __forceinline__
#else
#define REF_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ref_data {
    const mmp_gemm *g;
    int64_t m, n, k;
    double *a64, *b64, *c64;
    int threads;
} ref_data;

/* ---- large arrays (ref_alloc.c) ----
 * 2 MiB-aligned anonymous mappings advised for huge pages (zeroed by the kernel when zero is
 * set, else contents unspecified); small ones from malloc. Free with ref_big_free only. */
void *ref_big_alloc(size_t bytes, int zero);
void ref_big_free(void *p);
/* Touch (write one byte per 4 KiB of) up to three arrays on `threads` host threads in the
 * background (NULL arrays skipped); join before using them. Returns a handle (NULL: nothing). */
void *ref_prefault_start(void *p0, size_t n0, void *p1, size_t n1, void *p2, size_t n2, int threads);
void ref_prefault_join(void *handle);

/* ---- shared pieces of every path (ref_base.c) ---- */
mmp_status ref_data_load(ref_data *d, const void *a, const void *b, const void *c,
                         const mmp_gemm *g, int threads);
void ref_data_free(ref_data *d);
mmp_status ref_result_alloc(mmp_ref_result *r, int64_t m, int64_t n, int want_abs, int want_i64);
/* Decides d64 and dout from X in [sh + sl - E, sh + sl + E] (sh = RN(sh + sl); E = 0 means
 * X = sh + sl exactly; E = NaN/Inf means "unknown"). Returns 1 when both are certified. */
int ref_decide(double *d64, double *dout, double sh, double sl, double E, mmp_format f);
int ref_format_bits(mmp_format f);   /* significand bits (floats) or value bits (ints) */
/* The dot stage (ref_v2.h): its flags for ref_v2_dot_add, and whether it runs (float outputs;
 * MMP_REF_DOT=0 turns it off, for comparisons). */
void ref_dot_flags(int *exact_products, int *int_inputs, const mmp_gemm *g);
int ref_dot_wanted(const mmp_gemm *g);

/* Ozaki parameters (ref_plan.c): bits per slice and the most slices of A and B
 * (precisions pa, pb) worth computing. forced > 0 fixes the slices. */
void ref_slicing(int *beta, int *slices_a, int *slices_b, int64_t k, int pa, int pb, int forced);
/* The same for a route of version 2 (imma: int8 slices of REF_IMMA_BETA bits, ref_plan.h). */
void ref_slicing_route(int *beta, int *slices_a, int *slices_b, int64_t k, int pa, int pb, int forced, int imma);

/* ---- MPFR (ref_mpfr.c) ---- */
/* Exact X for element (i, j), rounded: d64, dout; if i64 != NULL and X is an integer that fits
 * int64, *i64 = X and *fits = 1. *int32_over = 1 when X is an integer outside int32. */
typedef struct ref_mpfr_ws ref_mpfr_ws;
ref_mpfr_ws *ref_mpfr_ws_new(int64_t k);
void ref_mpfr_ws_free(ref_mpfr_ws *w);
/* Outputs first (as mmp_ref_element), then the workspace w (one per thread), the data, (i, j). */
void ref_mpfr_element(double *d64, double *dout, int64_t *i64, int *fits, int *int32_over, ref_mpfr_ws *w,
                      const ref_data *d, int64_t i, int64_t j);
/* Recompute the listed row-major element indices into r (threads). */
mmp_status ref_mpfr_list(mmp_ref_result *r, const ref_data *d, const int64_t *idx, int64_t count);
mmp_status ref_mpfr_run(mmp_ref_result *r, const ref_data *d);
/* A fast path's first test: with force_mpfr or a non-finite alpha or beta, the whole result
 * from MPFR into r (r->path kept) and its status in *st; returns 1 then, else 0. */
int ref_mpfr_instead(mmp_status *st, mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o);

/* ---- the exact evaluator (ref_exact.c): a long accumulator, no MPFR ---- */
/* d64 = RN64(X), dout = RN_fmt(X) for element (i, j), exactly as ref_mpfr_element; returns 0
 * (nothing written) for integer output formats. */
int ref_exact_element(double *d64, double *dout, const ref_data *d, int64_t i, int64_t j);
/* Decide the listed row-major elements into r (threads); the list keeps, in *count, only
 * those it could not decide (for MPFR). n_exact and time.exact_s are updated. */
mmp_status ref_exact_list(mmp_ref_result *r, const ref_data *d, int64_t *idx, int64_t *count);
/* The NaN/Inf entries of each row of A and column of B (CSR: positions k). */
typedef struct ref_special {
    int64_t *a_ptr, *a_k;      /* row i of A: a_k[a_ptr[i] .. a_ptr[i + 1]) */
    int64_t *b_ptr, *b_k;      /* column j of B */
} ref_special;
mmp_status ref_special_lists(ref_special *sp, const ref_data *d);
void ref_special_free(ref_special *sp);
/* An element whose row or column holds a NaN or an infinity: its NaN/Inf result (with alpha,
 * beta c) from those entries alone; returns 0 if no product is non-finite (nothing written). */
int ref_special_element(double *d64, double *dout, const ref_special *sp, const ref_data *d, int64_t i,
                        int64_t j);

/* ---- certified paths (ref_certified.c: proof, split; ref_cert_finish.c: decisions) ---- */
typedef struct ref_cert {
    const ref_data *d;
    mmp_ref_result *r;
    int beta, smax_a, smax_b;  /* bits per slice; slices computed */
    int sa, sb;                /* slices used in the products */
    double *qa, *qb;           /* integer slices: qa[(s-1) M K + i K + k], qb[(t-1) K N + k + j K] */
    int *ea, *fb;              /* scale exponents: 2^ea[i] > max |a_i.|, 2^fb[j] > max |b_.j| */
    unsigned char *rowbad, *colbad;   /* NaN/Inf in the row of A / column of B */
    int sparse;                /* 1: the remainders are few and added exactly; 0: bounded */
    int64_t nnz_a, nnz_b;
    int64_t *ra_ptr, *ra_k; double *ra_v;   /* rA by rows of A (CSR): k, value */
    int64_t *rb_ptr, *rb_j; double *rb_v;   /* rB by rows k of B (CSR): j, value */
    int64_t *rc_ptr, *rc_k; double *rc_v;   /* rB by columns j of B: k, value */
    double *ra_max, *a_sum, *rb_max, *b_sum; /* bound: max |rA|, >= sum |a| per row; B per column */
    int levels;                /* slice pairs s + t <= levels (ref_plan.h) */
    struct ref_vstats *va, *vb;   /* per row of A / column of B (ref_plan.h) */
    double *a_ss, *b_rl;       /* triangles: the bound's slice sums of A, remainder maxima of B */
    double *h, *l, *err;       /* row-major M x N accumulation state (see ref_acc) */
    struct ref_sparse *lists;  /* CPU: the planes as lists (ref_sparse.c; qa, qb then NULL) */
} ref_cert;
/* Host part of the split; host_slices = 0 keeps no slice planes (the device makes its own). */
mmp_status ref_cert_prepare(ref_cert *c, mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o,
                            int host_slices);
/* Remainder terms, alpha/beta, decisions, MPFR for the undecided (host). */
mmp_status ref_cert_finish(ref_cert *c);
void ref_cert_free(ref_cert *c);
mmp_status ref_certified_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o);
/* The slice products from lists of the planes' nonzero digits (ref_sparse.c), the CPU path's
 * other route. allowed: the route can run (mode 2: never); densities: the sampled fractions of
 * nonzero digits of planes 1 .. REF_SMAX_DGEMM (c's scale exponents and beta set); wanted: 1
 * if they make the lists cheaper than the plan's DGEMMs (mode 1: always), with *jb their
 * column block; make: the lists from a64/b64 and the exact count of products; worth: that
 * count still says lists (mode as for wanted); run: every pair of the plan into c's state. */
typedef struct ref_sparse ref_sparse;
int ref_sparse_allowed(const ref_cert *c, int mode);
void ref_sparse_densities(double *da, double *db, const ref_cert *c);
int ref_sparse_wanted(const ref_cert *c, const double *da, const double *db, int *jb, int mode);
mmp_status ref_sparse_make(ref_sparse **out, const ref_cert *c, int jb);
int ref_sparse_worth(const ref_sparse *sp, const ref_cert *c, int mode);
double ref_sparse_count(const ref_sparse *sp);
mmp_status ref_sparse_run(ref_cert *c, const ref_sparse *sp);
void ref_sparse_free(ref_sparse *sp);
/* Integer inputs: returns MMP_STATUS_OK with *handled = 1 when it computed r. */
mmp_status ref_integer_run(mmp_ref_result *r, int *handled, const ref_data *d,
                           const mmp_ref_options *o);
int ref_integer_eligible(const mmp_gemm *g);
/* Upper bounds |alpha| (|A||B|)_ij + |beta| |C_ij| into r->absbound (ref_absbound.c; CPU, one DGEMM). */
mmp_status ref_absbound_cpu(mmp_ref_result *r, const ref_data *d);
/* The same from ab = fl(|A||B|) (row-major, any correctly rounded dot products). */
void ref_absbound_finish(mmp_ref_result *r, const ref_data *d, const double *ab);
/* Device path (ref_cuda.cu; ref_nocuda.c's stub in host-only builds). */
mmp_status ref_cuda_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o);
/* Device path version 2 (ref_cuda2.cu; ref_nocuda.c's stub in host-only builds): a, b, c are
 * the caller's native host operands; no ref_data is loaded unless elements need MPFR. r is allocated. */
mmp_status ref_cuda2_run(mmp_ref_result *r, const void *a, const void *b, const void *c, const mmp_gemm *g,
                         const mmp_ref_options *o, int threads);
/* A device copy of a native host operand (rows x cols in layout l, leading dimension ld) and
 * its release (ref_cuda2.cu; ref_nocuda.c's stubs return MMP_STATUS_UNSUPPORTED). */
mmp_status ref_cuda2_upload(void **dev, const void *host, mmp_format f, mmp_layout l, int64_t ld, int64_t rows,
                            int64_t cols, int device);
void ref_cuda2_free(void *dev);
/* The listed open elements decided from their rows of A, columns of B and elements of
 * C gathered from the device operands da, db, dc (ref_cuda2_open.cu): *done = 0 when that would
 * not pay (the caller then reads whole host operands). */
mmp_status ref_cuda2_open_gathered(int *done, mmp_ref_result *r, const void *da, const void *db, const void *dc,
                                   const mmp_gemm *g, const int64_t *und, int64_t n_und, int threads);
/* MPFR for the listed row-major elements from the native operands (ref_mpfr_native.c; loads
 * only their rows of A and columns of B; threads): n_mpfr and time.mpfr_s are updated. */
mmp_status ref_mpfr_native_list(mmp_ref_result *r, const void *a, const void *b, const void *c,
                                const mmp_gemm *g, const int64_t *idx, int64_t count, int threads);
/* Best of 3 cublasDgemm timings at m x n x k (benchmarks; ref_cuda.cu). */
mmp_status ref_cuda_time_dgemm(double *seconds, int64_t m, int64_t n, int64_t k, int device);

#ifdef __cplusplus
}
#endif

/* ---- error-tracked double-double accumulation (host and device) ----
 * State (h, l, err): the exact value is within h + l +- err. Adding an exact double x:
 * (h, e) = TwoSum(h, x) and (l, e2) = TwoSum(l, e) are exact (Knuth; also under underflow,
 * barring overflow), so the only thing dropped is e2, and err collects |e2| (its own rounding:
 * relative 2^-53 per step, covered by the factor 1 + 2^-40 applied when err is used). When
 * every step is exact err stays 0 and the value is known exactly. */
REF_HD void ref_acc(double *h, double *l, double *err, double x)
{
    double s = *h + x;
    double bp = s - *h;
    double e = (*h - (s - bp)) + (x - bp);
    double nl = *l + e;
    double bq = nl - *l;
    double e2 = (*l - (nl - bq)) + (e - bq);
    *h = s;
    *l = nl;
    *err += fabs(e2);
}

REF_HD double ref_pow2(int e)   /* 2^e for -1022 <= e <= 1023 */
{
    union { uint64_t u; double d; } v;
    v.u = (uint64_t)(e + 1023) << 52;
    return v.d;
}

/* Steps 4 and 6 for one exact term v 2^ex (v an integer below 2^53 in magnitude): into the
 * state, or the element unknown (err = Inf) when ex leaves [-1022, 970]. */
REF_HD void ref_acc_scaled(double *h, double *l, double *err, double v, int ex)
{
    if (ex < -1022 || ex > 970) { *err = INFINITY; return; }
    ref_acc(h, l, err, v * ref_pow2(ex));
}

REF_HD double ref_scale(double x, int e)   /* x 2^e, exact unless it underflows */
{
    return (e >= -1022 && e <= 1023) ? x * ref_pow2(e) : ldexp(x, e);
}

/* The digits of int8 slices: radix 2^8, in [-128, 127] (ref_digit; ref_plan.h's int8 route). */
#define REF_INT8_BETA 8

/* One balanced digit of radix R = 2^beta (step 2 of ref_certified.c): q = floor(y) + [frac(y) >
 * cut], floor(y) and frac(y) = y - floor(y) exact.
 *   beta = REF_INT8_BETA (int8 slices): cut = c = 127/255 rounded down (frac > cut <=> frac > c: c is not
 *     dyadic). For y in (-R/2 - (1 - c), R/2 - 1 + c], q is an integer in [-128, 127] and
 *     y - q is in (c - 1, c], so the next digit's y = R (y - q) is in the same range
 *     (R c = R/2 - 1 + c): every digit is an int8.
 *   other beta (binary64 slices): ties up, cut = 1/2 rounded down. For |y| <= R/2, |q| <= R/2
 *     and y - q is in [-1/2, 1/2), so again the next |y| <= R/2.
 * A digit is at most 2^(beta-1) in magnitude either way. */
REF_HD double ref_digit(double y, int beta)
{
    double f = floor(y), cut = beta == REF_INT8_BETA ? 0x1.fdfdfdfdfdfdfp-2 : 0x1.fffffffffffffp-2;
    return y - f > cut ? f + 1.0 : f;
}

/* The scale exponent E of a vector whose largest finite |entry| is mx (0: an all-zero vector):
 * the frexp exponent plus 1, so that |v| 2^(beta - E) < 2^(beta-1) for every entry v, plus 1
 * more when mx's first digit would still round up to 2^(beta-1) (int8's range ends at 127).
 * Every entry's first digit is then in ref_digit's range, whatever its sign, and so are all
 * the later ones. */
REF_HD int ref_scale_exp(double mx, int beta)
{
    if (mx == 0.0) return 0;
    int e = 0;
    frexp(mx, &e);   /* mx = f 2^e, 1/2 <= f < 1 */
    e += 1;
    if (ref_digit(ref_scale(mx, beta - e), beta) > ref_pow2(beta - 1) - 1.0) e += 1;
    return e;
}

/* How many leading slices of v (scale E) certainly have the digit 0: while |v| 2^(beta s - E)
 * < 1/4 every digit rule gives 0 and leaves v as the remainder. |v| < 2^(ev + 1) with ev its
 * binary exponent, so s <= (E - ev - 3) / beta suffices. v finite and nonzero. */
REF_HD int ref_zero_slices(double v, int E, int beta)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int ev = (int)((u >> 52) & 0x7ff);
    ev = ev ? ev - 1023 : ilogb(v);   /* subnormal: the exponent of its leading bit */
    int d = E - ev - 3;
    return d < 0 ? 0 : d / beta;
}

/* Slice s of ref_split for the remainder *r: its digit, with *r updated (zero: the entry's
 * ref_zero_slices, or S for a zero entry). Callers that store the digits elsewhere (int8
 * planes) take the same steps through this function. */
REF_HD double ref_split_step(double *r, int s, int zero, int E, int beta)
{
    double qs = *r != 0.0 && s > zero ? ref_digit(ref_scale(*r, beta * s - E), beta) : 0.0;
    if (qs != 0.0) *r -= ref_scale(qs, E - beta * s);
    return qs;
}

/* Step 2 of ref_certified.c for one value: balanced digits of radix 2^beta into
 * q[(s-1) qstride] (slice s is q_s 2^(E - beta s)); *rem_last gets the remainder after S - 1
 * slices, the return value the remainder after S. E comes from ref_scale_exp of the vector's
 * maximum (or any larger E). Non-finite values split as 0 (their rows/columns are flagged and
 * go to MPFR). */
REF_HD double ref_split(double v, int E, int beta, int S, double *q, size_t qstride, double *rem_last)
{
    double r = isfinite(v) ? v : 0.0;
    int zero = r != 0.0 ? ref_zero_slices(r, E, beta) : S;
    for (int s = 1; s <= S; s++) {
        if (s == S) *rem_last = r;
        q[(size_t)(s - 1) * qstride] = ref_split_step(&r, s, zero, E, beta);
    }
    return r;
}

/* alpha (h + l) + beta c, with its bound: products by TwoProd (fma). The fma's error term is
 * exact when |a b| >= 2^-968 (Boldo & Muller: the error of a product is representable unless
 * e_a + e_b < emin + p - 1); below that it is off by at most 2^-1075 (we add 2^-1073). */
REF_HD int ref_prod_err_exact(double a, double b, double p)
{
    return a == 0.0 || b == 0.0 || fabs(p) >= 0x1p-968;
}

/* x y added exactly into the state: p + e = x y (fma); e is exact unless |x y| < 2^-968 (then
 * off by at most 2^-1075: 2^-1073 goes into err). A non-finite product makes the element
 * unknown (err = Inf). */
REF_HD void ref_acc_prod(double *h, double *l, double *err, double x, double y)
{
    double p = x * y, e = fma(x, y, -p);
    if (!isfinite(p)) { *err = INFINITY; return; }
    ref_acc(h, l, err, p);
    ref_acc(h, l, err, e);
    if (!ref_prod_err_exact(x, y, p)) *err += 0x1p-1073;
}

/* The class of a sum's value under MPFR's rules for special values (host and device): a NaN
 * operand or 0 x Inf makes a NaN product; +Inf plus -Inf is NaN. */
enum { REF_CLS_FINITE, REF_CLS_PINF, REF_CLS_NINF, REF_CLS_NAN };

REF_HD int ref_cls_mul(double x, double y)   /* the class of x * y */
{
    if (isnan(x) || isnan(y)) return REF_CLS_NAN;
    if (isinf(x) || isinf(y)) {
        if (x == 0.0 || y == 0.0) return REF_CLS_NAN;
        return (signbit(x) != signbit(y)) ? REF_CLS_NINF : REF_CLS_PINF;
    }
    return REF_CLS_FINITE;
}

REF_HD int ref_cls_add(int x, int y)
{
    if (x == REF_CLS_NAN || y == REF_CLS_NAN) return REF_CLS_NAN;
    if (x == REF_CLS_FINITE) return y;
    if (y == REF_CLS_FINITE) return x;
    return x == y ? x : REF_CLS_NAN;
}

REF_HD int ref_cls_scale(double alpha, int s, int s_is_zero)   /* alpha * S */
{
    if (isnan(alpha) || s == REF_CLS_NAN) return REF_CLS_NAN;
    if (s == REF_CLS_FINITE) {
        if (!isinf(alpha)) return REF_CLS_FINITE;
        return s_is_zero ? REF_CLS_NAN : REF_CLS_FINITE;   /* finite nonzero S: its sign decides */
    }
    if (alpha == 0.0) return REF_CLS_NAN;
    return (signbit(alpha) != 0) == (s == REF_CLS_NINF) ? REF_CLS_PINF : REF_CLS_NINF;
}

/* mmp_gemm_index for host and device code */
REF_HD size_t ref_index(int layout, int64_t ld, int64_t i, int64_t j)
{
    return layout == MMP_LAYOUT_ROW ? (size_t)(i * ld + j) : (size_t)(j * ld + i);
}

/* The metrics' bound for one element from ab = fl(|A||B|)_ij: a floating-point dot product of
 * nonnegative terms (products rounded too) satisfies true <= computed / (1 - gamma_K), gamma_K
 * = K u / (1 - K u), u = 2^-53; for K u <= 1/4, 1 / (1 - gamma_K) <= 1 + 3 K u. Underflowed
 * products lose at most 2^-1075 each. The products and sums here add a few more roundings:
 * 4 K u covers them. absc = |C_ij| (0 when beta = 0). */
REF_HD double ref_absbound_one(double ab, double K, double abs_alpha, double abs_beta, double absc)
{
    double up = 1.0 + 4.0 * K * 0x1p-53, tiny = K * 0x1p-1074;
    double s = abs_alpha * (ab * up + tiny);
    if (abs_beta != 0.0) s += abs_beta * absc;
    return s == 0.0 ? 0.0 : s * (1.0 + 0x1p-50) + 0x1p-1074;
}

/* An upper bound of one element's subnormal-factor excess and of its sub_abs (metrics.h) from
 * its row of A and column of B: a product with a subnormal a adds (a^ - |a|) b^ <= min_a
 * max b^, one with a subnormal b adds |a| (b^ - |b|) <= max |a| min_b, and sub_abs's terms are
 * no larger (|b| <= b^). cnt_a, max_a: subnormals and largest |a| of the row; cnt_b, max_bh:
 * subnormals and largest b^ of the column (finite non-zero elements only). */
REF_HD double ref_excess_cap(double abs_alpha, double cnt_a, double min_a, double max_a, double cnt_b, double min_b,
                             double max_bh)
{
    return abs_alpha * (cnt_a * min_a * max_bh + cnt_b * min_b * max_a);
}

/* Whether an element's excess (at most cap) cannot change its bound, its rounding margin or its
 * flush test, so that 0 in its place gives bit-identical verdicts and metrics: no subnormal
 * factor (cap 0); a non-finite exact value (no bound is formed); or cap <= rel s with s the
 * element's |A||B| sum, normal and finite (mmp_metrics_excess_rel: gamma_sub cap then stays
 * below half an ulp of gamma s, and cap below half an ulp of s and below s / 2). */
REF_HD int ref_excess_negligible(double cap, double s, double want, double rel)
{
    if (cap == 0.0 || !isfinite(want)) return 1;
    return isfinite(s) && s >= 0x1p-900 && cap <= rel * s;
}

REF_HD void ref_finish(double *sh, double *sl, double *E, double alpha, double beta, double c,
                       int use_c)
{
    double h = 0, l = 0, err = 0, extra = 0;
    if (alpha != 1.0) {
        double p1 = alpha * *sh, e1 = fma(alpha, *sh, -p1);
        double p2 = alpha * *sl, e2 = fma(alpha, *sl, -p2);
        ref_acc(&h, &l, &err, p1); ref_acc(&h, &l, &err, e1);
        ref_acc(&h, &l, &err, p2); ref_acc(&h, &l, &err, e2);
        extra = *E == 0.0 ? 0.0 : fabs(alpha) * *E * (1.0 + 0x1p-50) + 0x1p-1074;
        if (!ref_prod_err_exact(alpha, *sh, p1) || !ref_prod_err_exact(alpha, *sl, p2))
            extra += 0x1p-1072;
        if (!isfinite(p1) || !isfinite(p2) || !isfinite(*E)) extra = INFINITY;
    } else {
        h = *sh; l = *sl; extra = *E;
    }
    if (use_c) {
        double p3 = beta * c, e3 = fma(beta, c, -p3);
        ref_acc(&h, &l, &err, p3); ref_acc(&h, &l, &err, e3);
        if (!ref_prod_err_exact(beta, c, p3)) extra += 0x1p-1073;
        if (!isfinite(p3)) extra = INFINITY;
    }
    double s = h + l, bp = s - h, e = (h - (s - bp)) + (l - bp);   /* TwoSum: exact */
    *sh = s; *sl = e;
    *E = err == 0.0 ? extra : extra + err * (1.0 + 0x1p-40);
}

#endif
