/* runner_devcheck.cu — a device case's comparison on the device (runner_devcheck.h): per
 * element, in one pass over the two outputs and the resident reference,
 *   - unwritten (poison in either run; integers: both sentinels) and nondeterministic elements,
 *     unwritten ones replaced in run 1's output by the reference (runner_stages.c's scan);
 *   - the metrics and the tolerance in force (metrics.c's metric_blocks, element by element the
 *     same arithmetic: compiled without FMA contraction);
 *   - the first NaN/Inf class mismatch, the exact comparison, an integer output's overflow,
 *     flushed subnormals and the biased-rounding sums (runner_check.c, runner_verdict.c);
 *   - under a declared input rounding (fp32 inputs on tf32 multipliers), a NaN/Inf output where
 *     the classes differ is excused when either rounding of that element's row and column gives
 *     it (runner_alt_hd.h, the host's function: K steps, only for such elements).
 * One block of TPR threads per output row; thread t takes columns t, t + TPR, ...; its partial
 * record is merged with its warp's by shuffles and the warps' in order, a fixed tree (first
 * positions: the smallest column; the worst element: the largest ratio, then the smallest
 * column), so every count, maximum and position is the host's and a run's sums are the same on
 * every run. Rare findings go straight to the block's counters, histogram bins and heat cells
 * take one shared atomic per warp: a thread holds few registers and many warps fit an SM. A
 * first kernel finds the largest finite |exact| that scales the norms, as metrics.c does (the
 * norms' terms are scaled by its reciprocal: they are rounded in another order anyway).
 */
#include <cfloat>
#include <climits>
#include <cuda_runtime.h>

#include "mmaprobe/cuda_check.h"
#include "runner_devcheck.h"

#define TPR 128
#define WARPS (TPR / 32)
#define FULL 0xffffffffu
static_assert(MMP_DEVCHECK_MAX_N + TPR <= INT32_MAX, "a thread's column stays an int");

namespace {

__global__ void scale_kernel(unsigned long long *best, const double *d64, int64_t mn)
{
    double s = 0;
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < mn; x += (int64_t)gridDim.x * blockDim.x)
        if (isfinite(d64[x]) && fabs(d64[x]) > s) s = fabs(d64[x]);
    if (s > 0) atomicMax(best, (unsigned long long)__double_as_longlong(s));   /* s >= 0: bits order as values */
}

/* 2^k (ldexp(1, k) without its cost where 2^k is normal) */
__device__ __forceinline__ double pow2i(int k)
{
    return k >= -1022 && k <= 1023 ? __longlong_as_double((long long)(k + 1023) << 52) : ldexp(1.0, k);
}

/* frexp's exponent of a finite non-zero x */
__device__ __forceinline__ int exponent_of(double x)
{
    long long b = __double_as_longlong(x);
    int e = (int)((b >> 52) & 0x7ff);
    if (e != 0) return e - 1022;
    return (63 - __clzll(b & 0xfffffffffffffll)) - 1074 + 1;   /* subnormal: its top bit */
}

/* 1 when finite x is a power of two (frexp(|x|) == 0.5) */
__device__ __forceinline__ int is_pow2(double x)
{
    long long b = __double_as_longlong(x), m = b & 0xfffffffffffffll;
    if ((b >> 52 & 0x7ff) != 0) return m == 0;
    return m != 0 && (m & (m - 1)) == 0;   /* subnormal: one bit */
}

/* x / u for u > 0: a product by 1 / u where u is a normal power of two whose reciprocal is one
 * too (the same correctly rounded value of the same real number), else the division */
__device__ __forceinline__ double div_by(double x, double u)
{
    long long b = __double_as_longlong(u);
    long long e = b >> 52 & 0x7ff;
    if ((b & 0xfffffffffffffll) == 0 && e >= 1 && e <= 2045 && b > 0) return x * __longlong_as_double((2046 - e) << 52);
    return x / u;
}

__device__ double ulp_of(double x, const mmp_devcheck_in &in)
{
    const mmp_format_hd &f = in.df;
    if (!f.is_float) return 1.0;
    if (!isfinite(x)) return in.ulp_nonfinite;
    int e = x != 0.0 ? exponent_of(x) : f.emin;
    if (e < f.emin) e = f.emin;
    return pow2i(e - f.precision);
}

__device__ __forceinline__ double bound_of(const mmp_devcheck_in &in, double gamma, double s, double w, double sub)
{
    double b = gamma * s + (sub > 0 ? in.gamma_sub * sub : 0.0) + in.abs_term;
    if (in.u_mul > 0) b += (2 * in.u_mul + in.u_mul * in.u_mul) * s;
    if (in.u_out > 0) b += in.u_out * (w + b);
    return b;
}

/* One thread's share of a row's record (then its warp's, then the row's): counts and columns
 * as int (mmp_devcheck_run requires N < 2^31), first columns -1 for none. What is rare (the
 * scan's findings, NaN/Inf mismatches, exact and flush findings) goes straight into the block's
 * `rare` counters instead, so that a thread holds few registers; the values that go with a first
 * or worst column (got, want) are read again at that column once the row is done. */
struct acc {
    int above_det, above_prob, above_tol, first_bad_j, worst_j, rq_n, n_finite_bad;
    int flags;   /* 1: a deterministic ratio was NaN, 2: a probabilistic one, 4: integer overflow */
    double max_abs_err, max_rel_err, max_ulp, max_det, max_prob, worst_ratio;
    double sum_err2, sum_ref2, rq[4];
};

/* the block's rare findings: counts, and first columns (INT_MAX for none until the end) */
struct rare {
    int n_un, un_j, n_nd, nd_j, nan_mismatch, inf_mismatch, nan_j, n_exact_bad, exact_j, n_flush, flush_j;
};

__device__ void acc_init(acc &q)
{
    memset(&q, 0, sizeof q);
    q.first_bad_j = q.worst_j = -1;
    q.worst_ratio = -1;
}

/* count += the lanes that reach this point together, one atomic per warp */
__device__ __forceinline__ void rare_count(int *count)
{
    unsigned g = __activemask();
    if ((threadIdx.x & 31) == __ffs(g) - 1) atomicAdd(count, __popc(g));
}

/* an event at column j for the lanes that reach this point together: one atomic per warp for
 * the count (count: NULL for none) and one for the first column */
__device__ __forceinline__ void rare_event(int *count, int *first, int j)
{
    unsigned g = __activemask();
    int jm = __reduce_min_sync(g, j);
    if ((threadIdx.x & 31) == __ffs(g) - 1) {
        if (count) atomicAdd(count, __popc(g));
        atomicMin(first, jm);
    }
}

__device__ __forceinline__ int first_of(int a, int b) { return a < 0 ? b : b < 0 ? a : (a < b ? a : b); }

/* q += o (o's columns and q's interleave: first positions are minima of the column; the worst
 * element: the largest ratio, then the smallest column) */
__device__ __forceinline__ void acc_merge(acc &q, const acc &o)
{
    q.above_det += o.above_det; q.above_prob += o.above_prob;
    q.above_tol += o.above_tol; q.first_bad_j = first_of(q.first_bad_j, o.first_bad_j);
    q.flags |= o.flags;
    if (o.worst_ratio > q.worst_ratio || (o.worst_ratio == q.worst_ratio && o.worst_j >= 0 && o.worst_j < q.worst_j)) {
        q.worst_ratio = o.worst_ratio; q.worst_j = o.worst_j;
    }
    q.rq_n += o.rq_n; q.n_finite_bad += o.n_finite_bad;
    q.max_abs_err = fmax(q.max_abs_err, o.max_abs_err);
    q.max_rel_err = fmax(q.max_rel_err, o.max_rel_err);
    q.max_ulp = fmax(q.max_ulp, o.max_ulp);
    q.max_det = fmax(q.max_det, o.max_det);
    q.max_prob = fmax(q.max_prob, o.max_prob);
    q.sum_err2 += o.sum_err2; q.sum_ref2 += o.sum_ref2;
    for (int t = 0; t < 4; t++) q.rq[t] += o.rq[t];
}

/* o = lane (this + d)'s record, every field shuffled (the whole warp calls it) */
__device__ __forceinline__ void acc_shfl_down(acc &o, const acc &q, int d)
{
    const int *s = (const int *)&q;
    int *t = (int *)&o;
#pragma unroll
    for (int w = 0; w < (int)(sizeof q / sizeof(int)); w++) t[w] = __shfl_down_sync(FULL, s[w], d);
}

__device__ __forceinline__ int bits_equal(uint64_t x, uint64_t y, const mmp_format_hd &f)
{
    return x == y || (f.is_float && isnan(mmp_format_hd_decode(x, &f)) && isnan(mmp_format_hd_decode(y, &f)));
}

/* an element's output (after the scan's replacement), exact value and correctly rounded value */
__device__ void values_at(double *got, double *want, double *want_out, const mmp_devcheck_in &in, int64_t i, int64_t j)
{
    size_t idx = in.layout_d == MMP_LAYOUT_ROW ? (size_t)(i * in.ldd + j) : (size_t)(j * in.ldd + i);
    size_t r = (size_t)(i * in.n + j);
    *got = mmp_format_hd_load(in.got0, idx, &in.df);
    *want = in.d64[r];
    *want_out = in.dout[r];
}

/* the largest value per heat cell over the lanes of the warp that reach it, one atomic per cell
 * (a warp's columns mostly share a cell) */
__device__ __forceinline__ void heat_max(int *cells, int cell, int v)
{
    unsigned g = __match_any_sync(__activemask(), cell);
    int best = __reduce_max_sync(g, v);
    if (best > 0 && (threadIdx.x & 31) == __ffs(g) - 1) atomicMax(&cells[cell], best);
}

/* an unwritten element of run 1's output replaced by the reference */
__device__ __forceinline__ uint64_t replace_unwritten(const mmp_devcheck_in *in, size_t idx, double want_out)
{
    uint64_t x0 = mmp_format_hd_encode(want_out, &in->df, MMP_ROUND_NEAREST_EVEN, 0);
    switch (in->df.storage_bits) {
    case 8: ((unsigned char *)in->got0)[idx] = (unsigned char)x0; break;
    case 16: ((uint16_t *)in->got0)[idx] = (uint16_t)x0; break;
    case 32: ((uint32_t *)in->got0)[idx] = (uint32_t)x0; break;
    default: ((uint64_t *)in->got0)[idx] = x0; break;
    }
    return x0;
}

/* a zero output where a non-zero exact value is due: flushed (runner_verdict.c's flush_rows) */
__device__ __forceinline__ int is_flushed(const mmp_devcheck_in *in, double want, double s, size_t r)
{
    double cancel = in->absbound ? ((double)in->k + 2) * ldexp(s, 1 - in->pacc) : INFINITY;
    int beyond = fabs(want) > in->flush_lost + cancel;
    double sa = in->sub_abs ? in->sub_abs[r] : 0.0;
    int sub_out = fabs(want) < in->out_min_normal && beyond;
    int daz = in->sub_abs && in->absbound && sa > 0 && in->no_c && s - sa <= 1e-9 * s && beyond;
    return sub_out || daz;
}

/* One element (i, j) into the thread's record q and the block's histogram and heat row. */
__device__ __forceinline__ void element(acc &q, rare *z, unsigned *hist, float *heat, int *mark,
                                        const mmp_devcheck_in &in, double inv_scale, int64_t i, int j)
{
    const mmp_format_hd &f = in.df;
    size_t idx = in.layout_d == MMP_LAYOUT_ROW ? (size_t)(i * in.ldd + j) : (size_t)((int64_t)j * in.ldd + i);
    size_t r = (size_t)(i * in.n + j);
    double want = in.d64[r], want_out = in.dout[r], s = in.absbound ? in.absbound[r] : 0.0;
    int cell = (int)((int64_t)j * in.hc / in.n);
    /* unwritten and nondeterministic */
    uint64_t x0 = mmp_format_hd_load_bits(in.got0, idx, &f), x1 = mmp_format_hd_load_bits(in.got1, idx, &f);
    int un = f.is_float ? (x0 == in.poison0 || x1 == in.poison1) : (x0 == in.poison0 && x1 == in.poison1);
    if (un) {
        rare_event(&z->n_un, &z->un_j, j);
        atomicMax(&mark[cell], (int)MMP_HEAT_MARK_UNWRITTEN);
        x0 = replace_unwritten(&in, idx, want_out);
    } else if (!bits_equal(x0, x1, f)) {
        rare_event(&z->n_nd, &z->nd_j, j);
    }
    double got = mmp_format_hd_decode(x0, &f);
    /* metrics (metrics.c) */
    int bad = 0;
    double ratio;
    /* the class reference: an overflowing correctly rounded result is the right answer
     * (mmp_metrics_class_want, metrics.h) */
    double wc = isinf(want_out) && isfinite(want) ? want_out : want;
    /* only where the classes differ (metrics.c): the class the declared input rounding gives */
    int alt = in.alt_on && (isnan(got) || isinf(got) || isnan(wc) || isinf(wc)) &&
              (isnan(got) != isnan(wc) || (!isnan(wc) && got != wc)) && mmp_alt_excused(&in.alt, i, j, got);
    if (alt) {
        ratio = 0;
    } else if (isnan(got) != isnan(wc)) {
        rare_count(&z->nan_mismatch);
        atomicMax(&mark[cell], (int)MMP_HEAT_MARK_NAN);
        bad = 1;
        ratio = INFINITY;
    } else if (isnan(wc) || (isinf(got) && got == wc)) {
        ratio = 0;
    } else if (isinf(got) || isinf(want)) {
        rare_count(&z->inf_mismatch);
        atomicMax(&mark[cell], (int)MMP_HEAT_MARK_NAN);
        bad = 1;
        ratio = INFINITY;
    } else {
        double err = fabs(got - want);
        q.max_abs_err = fmax(q.max_abs_err, err);
        if (want != 0) {
            double rel = err / fabs(want);
            if (rel > q.max_rel_err) q.max_rel_err = rel;
        }
        double ulp = div_by(err, ulp_of(want_out, in));
        if (ulp > q.max_ulp) q.max_ulp = ulp;
        double es = err * inv_scale, ws = want * inv_scale;
        q.sum_err2 += es * es;
        q.sum_ref2 += ws * ws;
        double sub = in.sub ? in.sub[r] : 0.0;
        double bdet = bound_of(in, in.gamma_det, s, fabs(want), sub);
        double bprob = bound_of(in, in.gamma_prob, s, fabs(want), sub);
        ratio = err == 0 ? 0 : (bdet > 0 ? err / bdet : INFINITY);
        double rprob = err == 0 ? 0 : (bprob > 0 ? err / bprob : INFINITY);
        if (!(bdet < INFINITY)) ratio = NAN;
        if (!(bprob < INFINITY)) rprob = NAN;
        if (isnan(ratio)) q.flags |= 1;
        if (isnan(rprob)) q.flags |= 2;
        if (ratio > q.max_det) q.max_det = ratio;
        if (rprob > q.max_prob) q.max_prob = rprob;
        if (ratio > 1) q.above_det++;
        if (rprob > 1) q.above_prob++;
        switch (in.tol_mode) {
        case 0: bad = ratio > 1; break;
        case 1: bad = rprob > 1; break;
        case 2: bad = !((isnan(got) && isnan(want_out)) || got == want_out); break;
        case 3: bad = err > in.atol + in.rtol * fabs(want); break;
        default: bad = ulp > in.ulps; break;
        }
    }
    if (bad && !q.above_tol++) q.first_bad_j = j;
    int h = 0;   /* the last edge <= ratio (metrics.c's linear search; the edges increase) */
#pragma unroll
    for (int step = MMP_HIST_BINS / 2; step > 0; step /= 2)
        if (h + step < MMP_HIST_BINS && ratio >= in.hist_edge[h + step]) h += step;
    unsigned g = __match_any_sync(__activemask(), h);   /* one atomic per bin a warp's lanes reach */
    if ((threadIdx.x & 31) == __ffs(g) - 1) atomicAdd(&hist[h], (unsigned)__popc(g));
    float cv = ratio > FLT_MAX ? FLT_MAX : (float)ratio;
    heat_max((int *)heat, cell, cv > 0 ? __float_as_int(cv) : 0);   /* cv > 0: bits order as values */
    if (ratio > q.worst_ratio) { q.worst_ratio = ratio; q.worst_j = j; }
    /* the first NaN/Inf class mismatch against the exact value (runner_check.c) */
    if (!alt && (isnan(got) != isnan(wc) || (!isnan(wc) && (isinf(got) || isinf(wc)) && got != wc)))
        rare_event(NULL, &z->nan_j, j);
    if (in.exact && !(isnan(got) || isnan(want_out) || got == want_out)) rare_event(&z->n_exact_bad, &z->exact_j, j);
    if (!f.is_float && (fabs(want) > in.out_max || want < in.out_lowest)) q.flags |= 4;
    /* flushed subnormals (runner_verdict.c's flush_rows) */
    int flushed = 0;
    if (in.flush_on && want != 0 && isfinite(want) && got == 0 && is_flushed(&in, want, s, r)) {
        flushed = 1;
        rare_event(&z->n_flush, &z->flush_j, j);
    }
    /* biased rounding (runner_verdict.c's round_rows) */
    if (in.round_on && isfinite(want) && isfinite(want_out) && isfinite(got) && want_out != want &&
        fabs(want_out) <= in.round_max_out) {
        double ulp = ulp_of(want_out, in);
        if (!is_pow2(want_out)) {
            double lo = want_out < want ? want_out : want_out - ulp, hi = lo + ulp;
            double margin = in.round_gamma * (s + (in.sub ? in.sub[r] : 0)) + in.round_floor;
            if (!(fabs(want - (lo + hi) / 2) <= margin)) {
                double sv = div_by(got - want, ulp);
                sv = sv > 1 ? 1 : sv < -1 ? -1 : sv;
                double t = want < 0 ? -sv : sv;
                q.rq[0] += sv; q.rq[1] += sv * sv; q.rq[2] += t; q.rq[3] += t * t; q.rq_n++;
            }
        }
    }
    if (bad && !flushed && isfinite(got) && isfinite(want)) q.n_finite_bad++;
}

__device__ __forceinline__ int64_t first_or_none(int j) { return j == INT_MAX ? -1 : j; }

/* the row's record from its merged share and the block's rare findings; the values at its first
 * and worst columns read again */
__device__ void row_out(mmp_devcheck_row *o, const acc &q, const rare &z, const unsigned *hist,
                        const mmp_devcheck_in &in, int64_t i)
{
    memset(o, 0, sizeof *o);
    o->n_un = z.n_un; o->un_j = first_or_none(z.un_j); o->n_nd = z.n_nd; o->nd_j = first_or_none(z.nd_j);
    o->count = in.n;
    o->nan_mismatch = z.nan_mismatch; o->inf_mismatch = z.inf_mismatch;
    o->above_det = q.above_det; o->above_prob = q.above_prob; o->above_tol = q.above_tol;
    o->first_bad_j = q.first_bad_j;
    o->max_abs_err = q.max_abs_err; o->max_rel_err = q.max_rel_err; o->max_ulp = q.max_ulp;
    o->max_det = q.max_det; o->max_prob = q.max_prob;
    o->nan_det = q.flags & 1; o->nan_prob = (q.flags >> 1) & 1; o->overflow = (q.flags >> 2) & 1;
    for (int h = 0; h < MMP_HIST_BINS; h++) o->hist[h] = hist[h];
    o->worst_ratio = q.worst_ratio; o->worst_j = q.worst_j;
    o->sum_err2 = q.sum_err2; o->sum_ref2 = q.sum_ref2;
    o->nan_j = first_or_none(z.nan_j); o->n_exact_bad = z.n_exact_bad; o->exact_j = first_or_none(z.exact_j);
    o->n_flush = z.n_flush; o->flush_j = first_or_none(z.flush_j);
    for (int t = 0; t < 4; t++) o->rq[t] = q.rq[t];
    o->rq[4] = q.rq_n;
    o->n_finite_bad = q.n_finite_bad;
    double got, want, want_out;
    if (o->worst_j >= 0) {
        values_at(&got, &want, &want_out, in, i, o->worst_j);
        o->worst_got = got; o->worst_want = want;
    }
    if (o->nan_j >= 0) {
        values_at(&got, &want, &want_out, in, i, o->nan_j);
        o->nan_got = got;
        o->nan_want = isinf(want_out) && isfinite(want) ? want_out : want;
    }
    if (o->exact_j >= 0) {
        values_at(&got, &want, &want_out, in, i, o->exact_j);
        o->exact_got = got; o->exact_want = want_out;
    }
    if (o->flush_j >= 0) {
        values_at(&got, &want, &want_out, in, i, o->flush_j);
        o->flush_want = want;
    }
}

__global__ void __launch_bounds__(TPR, 4) row_kernel(mmp_devcheck_row *out, float *heat_g, int *mark_g,
                                                  const __grid_constant__ mmp_devcheck_in in,
                                                  const unsigned long long *scale_bits)
{
    __shared__ acc part[WARPS];
    __shared__ rare z;
    __shared__ unsigned hist[MMP_HIST_BINS];
    __shared__ float heat[MMP_HEAT_MAX];
    __shared__ int mark[MMP_HEAT_MAX];
    int t = threadIdx.x;
    int64_t i = blockIdx.x;
    if (t < MMP_HIST_BINS) hist[t] = 0;
    if (t < MMP_HEAT_MAX) heat[t] = 0;
    if (t < MMP_HEAT_MAX) mark[t] = 0;
    if (t == 0) {
        memset(&z, 0, sizeof z);
        z.un_j = z.nd_j = z.nan_j = z.exact_j = z.flush_j = INT_MAX;
    }
    __syncthreads();
    double scale = __longlong_as_double((long long)*scale_bits);
    if (scale == 0) scale = 1;
    double inv_scale = 1.0 / scale;
    acc q;
    acc_init(q);
#pragma unroll 1
    for (int j = t; j < in.n; j += TPR) element(q, &z, hist, heat, mark, in, inv_scale, i, j);
    for (int d = 16; d > 0; d /= 2) {   /* the warp's shares into lane 0, in a fixed tree */
        acc o;
        acc_shfl_down(o, q, d);
        if ((t & 31) < d) acc_merge(q, o);
    }
    if ((t & 31) == 0) part[t / 32] = q;
    __syncthreads();   /* also makes the scan's replacements in got0 visible to thread 0 */
    if (t == 0) {
        for (int w = 1; w < WARPS; w++) acc_merge(part[0], part[w]);
        row_out(&out[i], part[0], z, hist, in, i);
    }
    int hrow = (int)(i * in.hr / in.m);
    if (t < in.hc && heat[t] > 0) atomicMax((int *)&heat_g[hrow * in.hc + t], __float_as_int(heat[t]));
    if (t < in.hc && mark[t] > 0) atomicMax(&mark_g[hrow * in.hc + t], mark[t]);
}

}  // namespace

extern "C" mmp_status mmp_devcheck_run(mmp_devcheck_row *rows, float *heat, uint8_t *marks, const mmp_devcheck_in *in,
                                       void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (in->n > MMP_DEVCHECK_MAX_N)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "device comparison: %lld columns (at most %lld)", (long long)in->n,
                       (long long)MMP_DEVCHECK_MAX_N);
    size_t mn = (size_t)(in->m * in->n), cells = (size_t)in->hr * in->hc;
    mmp_devcheck_row *d_rows = nullptr;
    float *d_heat = nullptr;
    int *d_mark = nullptr;
    unsigned long long *d_scale = nullptr;
    int mark[MMP_HEAT_MAX * MMP_HEAT_MAX];
    cudaError_t e = cudaMallocAsync((void **)&d_rows, (size_t)in->m * sizeof *d_rows, st);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&d_heat, cells * sizeof *d_heat, st);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&d_mark, cells * sizeof *d_mark, st);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&d_scale, sizeof *d_scale, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(d_heat, 0, cells * sizeof *d_heat, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(d_mark, 0, cells * sizeof *d_mark, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(d_scale, 0, sizeof *d_scale, st);
    if (e == cudaSuccess) {
        scale_kernel<<<1024, 256, 0, st>>>(d_scale, in->d64, (int64_t)mn);
        row_kernel<<<(unsigned)in->m, TPR, 0, st>>>(d_rows, d_heat, d_mark, *in, d_scale);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(rows, d_rows, (size_t)in->m * sizeof *rows, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(heat, d_heat, cells * sizeof *heat, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(mark, d_mark, cells * sizeof *d_mark, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    cudaFreeAsync(d_rows, st);
    cudaFreeAsync(d_heat, st);
    cudaFreeAsync(d_mark, st);
    cudaFreeAsync(d_scale, st);
    MMP_CUDA_CHECK(e);
    for (size_t x = 0; x < cells; x++) marks[x] = (uint8_t)mark[x];
    return MMP_STATUS_OK;
}
