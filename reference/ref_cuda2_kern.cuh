/* reference/ref_cuda2_kern.cuh — the kernels of the device reference, version 2 (ref_cuda2.cu,
 * whose header says what each stage proves; ref_certified.c's header is the proof). Included by
 * ref_cuda2.cu only. The per-element work is ref_v2.h's (tested on the CPU through the host
 * model, ref_v2_host.c); the block reductions and the list compaction here compute what
 * ref_v2_stats_serial and the model's build_list do serially. Every index is int64 (8192^2
 * elements and more); grids are 1-D with at most (count + 255) / 256 blocks (count <= 2^37:
 * ref_cuda2.cu checks) or one block of 256 per row of A / column of B (<= INT32_MAX). */
#ifndef MMAPROBE_REF_CUDA2_KERN_CUH
#define MMAPROBE_REF_CUDA2_KERN_CUH

#include "ref_v2.h"

/* Native operand (format f, layout, ld) -> binary64, dense: row-major rows x cols
 * (row_major_dst) or column-major. Exact: every format's values are doubles. */
__global__ void v2_decode_kernel(double *dst, const void *src, mmp_format_hd f, int layout, int64_t ld, int64_t rows,
                                 int64_t cols, int row_major_dst, int absval)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= rows * cols) return;
    double v = ref_v2_decode_one(src, &f, layout, ld, rows, cols, row_major_dst, x);
    dst[x] = absval ? fabs(v) : v;
}

/* Per vector (a row of A in a64, a column of B in b64: contiguous, length len), one block of
 * 256 threads each: step 1's scale exponent (2^E > max finite |v|), the non-finite flag, the sum
 * of finite |v| (any order: the caller's factor 1 + 2 len u covers len nonnegative roundings),
 * and for the remainders after smax and smax - 1 slices: how many are nonzero and the largest. */
__global__ void v2_stats_kernel(const double *x, int64_t len, int beta, int smax, int *e_out, unsigned char *bad,
                                double *sum, int *cnt_full, int *cnt_last, double *max_full, double *max_last)
{
    __shared__ double sd[256], se[256];
    __shared__ int si[256], sj[256];
    const double *v = x + (int64_t)blockIdx.x * len;
    int t = threadIdx.x;
    double mx = 0, s = 0;
    int nf = 0;
    for (int64_t k = t; k < len; k += blockDim.x) {
        double a = fabs(v[k]);
        if (!isfinite(a)) nf = 1;
        else { mx = fmax(mx, a); s += a; }
    }
    sd[t] = mx; se[t] = s; si[t] = nf;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (t < w) { sd[t] = fmax(sd[t], sd[t + w]); se[t] += se[t + w]; si[t] |= si[t + w]; }
        __syncthreads();
    }
    int E = 0;
    if (sd[0] != 0.0) frexp(sd[0], &E);   /* mx = f 2^E, 1/2 <= f < 1: 2^E > mx */
    if (t == 0) { e_out[blockIdx.x] = E; bad[blockIdx.x] = (unsigned char)si[0]; sum[blockIdx.x] = se[0]; }
    __syncthreads();
    double rf = 0, rl = 0;
    int cf = 0, cl = 0;
    for (int64_t k = t; k < len; k += blockDim.x) {
        double last = 0, rem = ref_v2_rem(v[k], E, beta, smax, &last);
        cf += rem != 0.0; cl += last != 0.0;
        rf = fmax(rf, fabs(rem)); rl = fmax(rl, fabs(last));
    }
    sd[t] = rf; se[t] = rl; si[t] = cf; sj[t] = cl;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (t < w) { sd[t] = fmax(sd[t], sd[t + w]); se[t] = fmax(se[t], se[t + w]); si[t] += si[t + w]; sj[t] += sj[t + w]; }
        __syncthreads();
    }
    if (t == 0) {
        max_full[blockIdx.x] = sd[0]; max_last[blockIdx.x] = se[0];
        cnt_full[blockIdx.x] = si[0]; cnt_last[blockIdx.x] = sj[0];
    }
}

/* Step 2: S slices of each contiguous vector of length len (A rows: planes of rows * len). */
__global__ void v2_slice_kernel(double *q, const double *x, const int *e, int64_t rows, int64_t len, int beta, int S)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * len) return;
    double last;
    ref_split(x[i], e[i / len], beta, S, q + i, (size_t)(rows * len), &last);
}

/* Sparse remainders: vector r's nonzero remainders after S slices, in order of k, into
 * (lk, lv)[ptr[r] .. ptr[r + 1]) (the counts came from v2_stats_kernel). One block of 256. */
__global__ void v2_list_kernel(const double *x, int64_t len, const int *e, int beta, int S, const int64_t *ptr,
                               int *lk, double *lv)
{
    __shared__ int warp_cnt[8];
    int64_t row = blockIdx.x, at = ptr[row], end = ptr[row + 1];
    if (at == end) return;
    const double *v = x + row * len;
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (int64_t base = 0; base < len; base += 256) {
        int64_t k = base + t;
        double rem = k < len ? ref_v2_rem(v[k], e[row], beta, S, NULL) : 0.0;
        unsigned mask = __ballot_sync(0xffffffffu, rem != 0.0);
        if (lane == 0) warp_cnt[warp] = __popc(mask);
        __syncthreads();
        int before = 0, total = 0;
        for (int w = 0; w < 8; w++) { before += w < warp ? warp_cnt[w] : 0; total += warp_cnt[w]; }
        if (rem != 0.0) {
            int64_t pos = at + before + __popc(mask & ((1u << lane) - 1u));
            if (pos < end) { lk[pos] = (int)k; lv[pos] = rem; }
        }
        at += total;
        __syncthreads();
    }
}

/* Steps 4 and 6: state += P 2^(E_i + F_j - pair_exp) (exact terms). */
__global__ void v2_accumulate_kernel(double *h, double *l, double *err, const double *p, const int *ea, const int *fb,
                                     int64_t m, int64_t n, int pair_exp)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < m * n) ref_v2_accumulate_one(h, l, err, p, ea, fb, n, pair_exp, x);
}

/* Steps 5-7 per element, in place (ref_v2_finish_one); undecided indices: the first cap into
 * und, all of them counted in *n_und (err holds every flag). */
__global__ void v2_finish_kernel(double *h, double *l, double *err, ref_v2_args f, int64_t *n_und, int64_t *und,
                                 int64_t cap)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= f.m * f.n) return;
    if (!ref_v2_finish_one(h, l, err, &f, x)) {
        unsigned long long pos = atomicAdd((unsigned long long *)n_und, 1ull);
        if ((int64_t)pos < cap) und[pos] = x;
    }
}

/* The dot stage (ref_v2.h) for every open element (err != 0) of a DOT_T x DOT_T tile of D:
 * blocks of DOT_T^2 threads, one element each; a block whose tile has no open element returns
 * at once. Rows of a64 (row-major M x K) and columns of b64 (column-major K x N) pass through
 * shared memory DOT_KT entries at a time; each thread adds its products in k order. Decided
 * elements get h, l = d64, dout and err = 0. Grid: (ceil(N / DOT_T), ceil(M / DOT_T)). */
#define DOT_T 16
#define DOT_KT 32
template <int EXACT>
__global__ void v2_dot_kernel(double *h, double *l, double *err, const double *a64, const double *b64, ref_v2_args f,
                              int int_inputs, unsigned long long *n_dot)
{
    __shared__ double as[DOT_T][DOT_KT + 1], bs[DOT_T][DOT_KT + 1];
    int tx = threadIdx.x % DOT_T, ty = threadIdx.x / DOT_T;
    int64_t i0 = (int64_t)blockIdx.y * DOT_T, j0 = (int64_t)blockIdx.x * DOT_T;
    int64_t i = i0 + ty, j = j0 + tx, x = i * f.n + j;
    int open = i < f.m && j < f.n && err[x] != 0.0;
    if (!__syncthreads_or(open)) return;
    ref_v2_dot s;
    ref_v2_dot_init(&s, f.k);
    for (int64_t k0 = 0; k0 < f.k; k0 += DOT_KT) {
        int kt = f.k - k0 < DOT_KT ? (int)(f.k - k0) : DOT_KT;
        for (int t = threadIdx.x; t < DOT_T * DOT_KT; t += DOT_T * DOT_T) {
            int r = t / DOT_KT, q = t % DOT_KT;
            as[r][q] = i0 + r < f.m && q < kt ? a64[(i0 + r) * f.k + k0 + q] : 0.0;
            bs[r][q] = j0 + r < f.n && q < kt ? b64[(j0 + r) * f.k + k0 + q] : 0.0;
        }
        __syncthreads();
        for (int q = 0; q < kt; q++) ref_v2_dot_add(&s, as[ty][q], bs[tx][q], EXACT, int_inputs);
        __syncthreads();
    }
    if (!open) return;
    double cv = f.beta != 0.0 ? mmp_format_hd_load(f.c, ref_index(f.lc, f.ldc, i, j), &f.fc) : 0.0;
    double d64, dout;
    if (ref_v2_dot_decide(&d64, &dout, &s, f.alpha, f.beta, cv, &f.fd)) {
        h[x] = d64; l[x] = dout; err[x] = 0.0;
        atomicAdd(n_dot, 1ull);
    }
}

/* The open elements (err != 0) after the dot stage: the first cap into und, all counted. */
__global__ void v2_collect_kernel(const double *err, int64_t mn, int64_t *n_und, int64_t *und, int64_t cap)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < mn && err[x] != 0.0) {
        unsigned long long pos = atomicAdd((unsigned long long *)n_und, 1ull);
        if ((int64_t)pos < cap) und[pos] = x;
    }
}

/* ab <- the metrics' bound, in place (row-major M x N). */
__global__ void v2_absbound_kernel(double *ab, ref_v2_args f)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < f.m * f.n) ab[x] = ref_v2_absbound_x(ab[x], &f, x);
}

#endif
