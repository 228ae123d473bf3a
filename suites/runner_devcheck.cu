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
 * record is merged with its neighbours' in a fixed tree (first positions: the smallest column;
 * the worst element: the largest ratio, then the smallest column), so every count, maximum and
 * position is the host's and a run's sums are the same on every run. A first kernel finds the
 * largest finite |exact| that scales the norms, as metrics.c does.
 */
#include <cfloat>
#include <cuda_runtime.h>

#include "mmaprobe/cuda_check.h"
#include "runner_devcheck.h"

#define TPR 64

namespace {

__global__ void scale_kernel(unsigned long long *best, const double *d64, int64_t mn)
{
    double s = 0;
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < mn; x += (int64_t)gridDim.x * blockDim.x)
        if (isfinite(d64[x]) && fabs(d64[x]) > s) s = fabs(d64[x]);
    if (s > 0) atomicMax(best, (unsigned long long)__double_as_longlong(s));   /* s >= 0: bits order as values */
}

__device__ double ulp_of(double x, const mmp_devcheck_in &in)
{
    const mmp_format_hd &f = in.df;
    if (!f.is_float) return 1.0;
    if (!isfinite(x)) return in.ulp_nonfinite;
    int e = f.emin;
    if (x != 0.0) frexp(fabs(x), &e);
    if (e < f.emin) e = f.emin;
    return ldexp(1.0, e - f.precision);
}

__device__ double bound_of(const mmp_devcheck_in &in, double gamma, double s, double w, double sub)
{
    double b = gamma * s + (sub > 0 ? in.gamma_sub * sub : 0.0) + in.abs_term;
    if (in.u_mul > 0) b += (2 * in.u_mul + in.u_mul * in.u_mul) * s;
    if (in.u_out > 0) b += in.u_out * (w + b);
    return b;
}

__device__ void row_init(mmp_devcheck_row *q)
{
    memset(q, 0, sizeof *q);
    q->un_j = q->nd_j = q->first_bad_j = q->worst_j = q->nan_j = q->exact_j = q->flush_j = -1;
    q->worst_ratio = -1;
}

__device__ __forceinline__ int64_t first_of(int64_t a, int64_t b) { return a < 0 ? b : b < 0 ? a : (a < b ? a : b); }

/* q += o (o's columns and q's interleave: first positions are minima of the column) */
__device__ void row_merge(mmp_devcheck_row *q, const mmp_devcheck_row *o)
{
    q->n_un += o->n_un; q->un_j = first_of(q->un_j, o->un_j);
    q->n_nd += o->n_nd; q->nd_j = first_of(q->nd_j, o->nd_j);
    q->count += o->count; q->nan_mismatch += o->nan_mismatch; q->inf_mismatch += o->inf_mismatch;
    q->above_det += o->above_det; q->above_prob += o->above_prob;
    q->above_tol += o->above_tol; q->first_bad_j = first_of(q->first_bad_j, o->first_bad_j);
    q->max_abs_err = fmax(q->max_abs_err, o->max_abs_err);
    q->max_rel_err = fmax(q->max_rel_err, o->max_rel_err);
    q->max_ulp = fmax(q->max_ulp, o->max_ulp);
    q->max_det = fmax(q->max_det, o->max_det);
    q->max_prob = fmax(q->max_prob, o->max_prob);
    q->nan_det |= o->nan_det; q->nan_prob |= o->nan_prob; q->overflow |= o->overflow;
    if (o->worst_ratio > q->worst_ratio || (o->worst_ratio == q->worst_ratio && o->worst_j >= 0 && o->worst_j < q->worst_j)) {
        q->worst_ratio = o->worst_ratio; q->worst_j = o->worst_j; q->worst_got = o->worst_got; q->worst_want = o->worst_want;
    }
    q->sum_err2 += o->sum_err2; q->sum_ref2 += o->sum_ref2;
    if (o->nan_j >= 0 && (q->nan_j < 0 || o->nan_j < q->nan_j)) { q->nan_j = o->nan_j; q->nan_got = o->nan_got; q->nan_want = o->nan_want; }
    q->n_exact_bad += o->n_exact_bad;
    if (o->exact_j >= 0 && (q->exact_j < 0 || o->exact_j < q->exact_j)) {
        q->exact_j = o->exact_j; q->exact_got = o->exact_got; q->exact_want = o->exact_want;
    }
    q->n_flush += o->n_flush;
    if (o->flush_j >= 0 && (q->flush_j < 0 || o->flush_j < q->flush_j)) { q->flush_j = o->flush_j; q->flush_want = o->flush_want; }
    for (int t = 0; t < 5; t++) q->rq[t] += o->rq[t];
    q->n_finite_bad += o->n_finite_bad;
}

__device__ __forceinline__ int bits_equal(uint64_t x, uint64_t y, const mmp_format_hd &f)
{
    return x == y || (f.is_float && isnan(mmp_format_hd_decode(x, &f)) && isnan(mmp_format_hd_decode(y, &f)));
}

/* One element (i, j) into the thread's record q and the block's histogram and heat row. */
__device__ void element(mmp_devcheck_row *q, unsigned *hist, float *heat, int *mark, const mmp_devcheck_in &in,
                        double scale, int64_t i, int64_t j)
{
    const mmp_format_hd &f = in.df;
    size_t idx = in.layout_d == MMP_LAYOUT_ROW ? (size_t)(i * in.ldd + j) : (size_t)(j * in.ldd + i);
    size_t r = (size_t)(i * in.n + j);
    double want = in.d64[r], want_out = in.dout[r], s = in.absbound ? in.absbound[r] : 0.0;
    /* unwritten and nondeterministic */
    uint64_t x0 = mmp_format_hd_load_bits(in.got0, idx, &f), x1 = mmp_format_hd_load_bits(in.got1, idx, &f);
    int un = f.is_float ? (x0 == in.poison0 || x1 == in.poison1) : (x0 == in.poison0 && x1 == in.poison1);
    if (un) {
        if (!q->n_un++) q->un_j = j;
        atomicMax(&mark[j * in.hc / in.n], (int)MMP_HEAT_MARK_UNWRITTEN);
        x0 = mmp_format_hd_encode(want_out, &f, MMP_ROUND_NEAREST_EVEN, 0);
        switch (f.storage_bits) {
        case 8: ((unsigned char *)in.got0)[idx] = (unsigned char)x0; break;
        case 16: ((uint16_t *)in.got0)[idx] = (uint16_t)x0; break;
        case 32: ((uint32_t *)in.got0)[idx] = (uint32_t)x0; break;
        default: ((uint64_t *)in.got0)[idx] = x0; break;
        }
    } else if (!bits_equal(x0, x1, f) && !q->n_nd++) {
        q->nd_j = j;
    }
    double got = mmp_format_hd_decode(x0, &f);
    /* metrics (metrics.c) */
    q->count++;
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
        q->nan_mismatch++;
        atomicMax(&mark[j * in.hc / in.n], (int)MMP_HEAT_MARK_NAN);
        bad = 1;
        ratio = INFINITY;
    } else if (isnan(wc) || (isinf(got) && got == wc)) {
        ratio = 0;
    } else if (isinf(got) || isinf(want)) {
        q->inf_mismatch++;
        atomicMax(&mark[j * in.hc / in.n], (int)MMP_HEAT_MARK_NAN);
        bad = 1;
        ratio = INFINITY;
    } else {
        double err = fabs(got - want);
        q->max_abs_err = fmax(q->max_abs_err, err);
        if (want != 0 && err / fabs(want) > q->max_rel_err) q->max_rel_err = err / fabs(want);
        double ulp = err / ulp_of(want_out, in);
        if (ulp > q->max_ulp) q->max_ulp = ulp;
        q->sum_err2 += (err / scale) * (err / scale);
        q->sum_ref2 += (want / scale) * (want / scale);
        double sub = in.sub ? in.sub[r] : 0.0;
        double bdet = bound_of(in, in.gamma_det, s, fabs(want), sub);
        double bprob = bound_of(in, in.gamma_prob, s, fabs(want), sub);
        ratio = err == 0 ? 0 : (bdet > 0 ? err / bdet : INFINITY);
        double rprob = err == 0 ? 0 : (bprob > 0 ? err / bprob : INFINITY);
        if (!(bdet < INFINITY)) ratio = NAN;
        if (!(bprob < INFINITY)) rprob = NAN;
        if (isnan(ratio)) q->nan_det = 1;
        if (isnan(rprob)) q->nan_prob = 1;
        if (ratio > q->max_det) q->max_det = ratio;
        if (rprob > q->max_prob) q->max_prob = rprob;
        if (ratio > 1) q->above_det++;
        if (rprob > 1) q->above_prob++;
        switch (in.tol_mode) {
        case 0: bad = ratio > 1; break;
        case 1: bad = rprob > 1; break;
        case 2: bad = !((isnan(got) && isnan(want_out)) || got == want_out); break;
        case 3: bad = err > in.atol + in.rtol * fabs(want); break;
        default: bad = ulp > in.ulps; break;
        }
    }
    if (bad && !q->above_tol++) q->first_bad_j = j;
    int h = 0;
    while (h + 1 < MMP_HIST_BINS && ratio >= in.hist_edge[h + 1]) h++;
    atomicAdd(&hist[h], 1u);
    float cv = ratio > FLT_MAX ? FLT_MAX : (float)ratio;
    if (cv > 0) atomicMax((int *)&heat[j * in.hc / in.n], __float_as_int(cv));   /* cv > 0: bits order as values */
    if (ratio > q->worst_ratio) { q->worst_ratio = ratio; q->worst_j = j; q->worst_got = got; q->worst_want = want; }
    /* the first NaN/Inf class mismatch against the exact value (runner_check.c) */
    if (!alt && (isnan(got) != isnan(wc) || (!isnan(wc) && (isinf(got) || isinf(wc)) && got != wc)) && q->nan_j < 0) {
        q->nan_j = j; q->nan_got = got; q->nan_want = wc;
    }
    if (in.exact && !(isnan(got) || isnan(want_out) || got == want_out) && !q->n_exact_bad++) {
        q->exact_j = j; q->exact_got = got; q->exact_want = want_out;
    }
    if (!f.is_float && (fabs(want) > in.out_max || want < in.out_lowest)) q->overflow = 1;
    /* flushed subnormals (runner_verdict.c's flush_rows) */
    int flushed = 0;
    if (in.flush_on && want != 0 && isfinite(want) && got == 0) {
        double cancel = in.absbound ? ((double)in.k + 2) * ldexp(s, 1 - in.pacc) : INFINITY;
        int beyond = fabs(want) > in.flush_lost + cancel;
        double sa = in.sub_abs ? in.sub_abs[r] : 0.0;
        int sub_out = fabs(want) < in.out_min_normal && beyond;
        int daz = in.sub_abs && in.absbound && sa > 0 && in.no_c && s - sa <= 1e-9 * s && beyond;
        if (sub_out || daz) {
            flushed = 1;
            if (!q->n_flush++) { q->flush_j = j; q->flush_want = want; }
        }
    }
    /* biased rounding (runner_verdict.c's round_rows) */
    if (in.round_on && isfinite(want) && isfinite(want_out) && isfinite(got) && want_out != want &&
        fabs(want_out) <= in.round_max_out) {
        double ulp = ulp_of(want_out, in);
        int e;
        if (frexp(fabs(want_out), &e) != 0.5) {
            double lo = want_out < want ? want_out : want_out - ulp, hi = lo + ulp;
            double margin = in.round_gamma * (s + (in.sub ? in.sub[r] : 0)) + in.round_floor;
            if (!(fabs(want - (lo + hi) / 2) <= margin)) {
                double sv = (got - want) / ulp;
                sv = sv > 1 ? 1 : sv < -1 ? -1 : sv;
                double t = want < 0 ? -sv : sv;
                q->rq[0] += sv; q->rq[1] += sv * sv; q->rq[2] += t; q->rq[3] += t * t; q->rq[4] += 1;
            }
        }
    }
    if (bad && !flushed && isfinite(got) && isfinite(want)) q->n_finite_bad++;
}

__global__ void __launch_bounds__(TPR) row_kernel(mmp_devcheck_row *out, float *heat_g, int *mark_g, mmp_devcheck_in in,
                                                  const unsigned long long *scale_bits)
{
    __shared__ mmp_devcheck_row part[TPR];
    __shared__ unsigned hist[MMP_HIST_BINS];
    __shared__ float heat[MMP_HEAT_MAX];
    __shared__ int mark[MMP_HEAT_MAX];
    int t = threadIdx.x;
    int64_t i = blockIdx.x;
    if (t < MMP_HIST_BINS) hist[t] = 0;
    if (t < MMP_HEAT_MAX) heat[t] = 0;
    if (t < MMP_HEAT_MAX) mark[t] = 0;
    __syncthreads();
    double scale = __longlong_as_double((long long)*scale_bits);
    if (scale == 0) scale = 1;
    mmp_devcheck_row q;
    row_init(&q);
    for (int64_t j = t; j < in.n; j += TPR) element(&q, hist, heat, mark, in, scale, i, j);
    part[t] = q;
    __syncthreads();
    for (int w = TPR / 2; w > 0; w /= 2) {
        if (t < w) row_merge(&part[t], &part[t + w]);
        __syncthreads();
    }
    if (t < MMP_HIST_BINS) part[0].hist[t] = hist[t];
    __syncthreads();
    if (t == 0) out[i] = part[0];
    int hrow = (int)(i * in.hr / in.m);
    if (t < in.hc && heat[t] > 0) atomicMax((int *)&heat_g[hrow * in.hc + t], __float_as_int(heat[t]));
    if (t < in.hc && mark[t] > 0) atomicMax(&mark_g[hrow * in.hc + t], mark[t]);
}

}  // namespace

extern "C" mmp_status mmp_devcheck_run(mmp_devcheck_row *rows, float *heat, uint8_t *marks, const mmp_devcheck_in *in,
                                       void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
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
