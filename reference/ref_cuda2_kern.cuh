/* reference/ref_cuda2_kern.cuh — the kernels of the device reference, version 2 (ref_cuda2.cu,
 * whose header says what each stage proves; ref_certified.c's header is the proof). Included by
 * ref_cuda2.cu only. The per-element work is ref_v2.h's (tested on the CPU through the host
 * model, ref_v2_host.c); the block reductions and the list compaction here compute what
 * ref_v2_stats_serial and the model's build_list do serially. Every index is int64 (8192^2
 * elements and more); grids are 1-D with at most (count + 255) / 256 blocks (count <= 2^37:
 * ref_cuda2.cu checks) or one block per row of A / column of B (<= INT32_MAX). */
#ifndef MMAPROBE_REF_CUDA2_KERN_CUH
#define MMAPROBE_REF_CUDA2_KERN_CUH

#include <cuda_bf16.h>

#include "ref_v2.h"

/* Native operand (format f, layout, ld) -> binary64, dense: row-major rows x cols
 * (row_major_dst) or column-major. Exact: every format's values are doubles. */
/* T float or bf16: for formats whose every value is one (ref_cuda2.cu's dot_plane), a half or a
 * quarter of the bytes for the dot stage to read; the conversions are exact for those values. */
static __device__ void v2_put(double *d, double v) { *d = v; }
static __device__ void v2_put(float *d, double v) { *d = (float)v; }
static __device__ void v2_put(__nv_bfloat16 *d, double v) { *d = __float2bfloat16_rn((float)v); }
static __device__ double v2_get(double v) { return v; }
static __device__ double v2_get(float v) { return v; }
static __device__ double v2_get(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__global__ void v2_decode_kernel(T *dst, const void *src, mmp_format_hd f, int layout, int64_t ld, int64_t rows,
                                 int64_t cols, int row_major_dst, int absval)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= rows * cols) return;
    double v = ref_v2_decode_one(src, &f, layout, ld, rows, cols, row_major_dst, x);
    v2_put(dst + x, absval ? fabs(v) : v);
}

/* Per vector (a row of A in a64, a column of B in b64: contiguous, length len), one block of
 * V2_STATS_THREADS: ref_plan.h's statistics, the same fields as ref_vstats_pass1/_pass2 entry by
 * entry (sums in any order: the plan's factor 1 + 2 len u covers len nonnegative roundings),
 * with the scale exponent and the non-finite flag also into e_out and bad.
 * Pass 2 as ref_vstats_pass2_vector: an entry's leading slices (ref_zero_slices: digit 0, the
 * entry as the remainder) only count it and raise the remainder's maximum, so it records its
 * magnitude at its count z of them (lmax, row z - 1) and the first slice after which its
 * remainder is 0 (ends); its few digits run from slice z + 1 in every lane together (on wide
 * data the lanes' z differ).
 * Each thread's fields lie in shared memory, one column per thread (indexed by the slice: in
 * registers that index would put them in local memory); the block merges the columns and
 * turns counts of endings into counts of nonzero remainders. */
#define V2_STATS_THREADS 128
__global__ void __launch_bounds__(V2_STATS_THREADS) v2_stats_kernel(const double *x, int64_t len, int beta,
                                                                  ref_vstats *out, int *e_out, unsigned char *bad)
{
    enum { T = V2_STATS_THREADS, W = V2_STATS_THREADS / 32 };
    __shared__ double ssum[REF_SMAX][T], rmax[REF_SMAX][T], lmax[REF_SMAX][T];
    __shared__ int ends[REF_SMAX][T];
    __shared__ double wmax[W], wsum[W], col_ss[REF_SMAX], col_rm[REF_SMAX], col_lm[REF_SMAX];
    __shared__ int wbad[W], wnz[W], col_end[REF_SMAX], se;
    const double *v = x + (int64_t)blockIdx.x * len;
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    /* pass 1 (ref_vstats_pass1): maximum, non-finite count, sum */
    double mx = 0.0, sum = 0.0;
    int nbad = 0;
    for (int64_t k = t; k < len; k += T) {
        double a = fabs(v[k]);
        if (!isfinite(a)) { nbad++; continue; }
        mx = fmax(mx, a);
        sum += a;
    }
    for (int off = 16; off > 0; off /= 2) {
        mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, off));
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        nbad += __shfl_down_sync(0xffffffffu, nbad, off);
    }
    if (lane == 0) { wmax[warp] = mx; wsum[warp] = sum; wbad[warp] = nbad; }
    for (int q = 0; q < REF_SMAX; q++) { ssum[q][t] = 0.0; rmax[q][t] = 0.0; lmax[q][t] = 0.0; ends[q][t] = 0; }
    __syncthreads();
    if (t == 0) {
        for (int w = 1; w < W; w++) wmax[0] = fmax(wmax[0], wmax[w]);
        se = ref_scale_exp(wmax[0], beta);   /* ref_vstats_scale */
    }
    __syncthreads();
    const int E = se;
    int nz = 0;   /* finite nonzero entries: each has a nonzero remainder after slice 1 .. its end */
    for (int64_t k = t; k < len; k += T) {
        double r = v[k];
        if (!isfinite(r) || r == 0.0) continue;
        nz++;
        int z = ref_zero_slices(r, E, beta);
        if (z > REF_SMAX) z = REF_SMAX;
        if (z > 0) lmax[z - 1][t] = fmax(lmax[z - 1][t], fabs(r));
        int q = z + 1;
        for (; q <= REF_SMAX && r != 0.0; q++) {   /* ref_vstats_step */
            double qs = ref_digit(ref_scale(r, beta * q - E), beta);
            if (qs != 0.0) {
                double piece = ref_scale(qs, E - beta * q);
                ssum[q - 1][t] += fabs(piece);
                r -= piece;
            }
            if (r != 0.0) rmax[q - 1][t] = fmax(rmax[q - 1][t], fabs(r));
        }
        if (r == 0.0) ends[q - 2][t]++;   /* zero after slice q - 1 and every later one */
    }
    for (int off = 16; off > 0; off /= 2) nz += __shfl_down_sync(0xffffffffu, nz, off);
    if (lane == 0) wnz[warp] = nz;
    __syncthreads();
    if (t < REF_SMAX) {   /* one slice's column totals */
        double a = 0.0, b = 0.0, c = 0.0;
        int e = 0;
        for (int u = 0; u < T; u++) {
            a += ssum[t][u]; b = fmax(b, rmax[t][u]); c = fmax(c, lmax[t][u]); e += ends[t][u];
        }
        col_ss[t] = a; col_rm[t] = b; col_lm[t] = c; col_end[t] = e;
    }
    __syncthreads();
    if (t == 0) {
        ref_vstats o;
        ref_vstats_zero(&o);
        o.e = E;
        o.rmax[0] = wmax[0];
        int nzt = 0;
        for (int w = 0; w < W; w++) { o.sum += wsum[w]; o.n_bad += wbad[w]; nzt += wnz[w]; }
        double lead = 0.0;   /* the largest entry whose slices 1 .. q are all 0 */
        for (int q = REF_SMAX; q >= 1; q--) {
            lead = fmax(lead, col_lm[q - 1]);
            o.ssum[q] = col_ss[q - 1];
            o.rmax[q] = fmax(col_rm[q - 1], lead);
        }
        int ended = 0;
        for (int q = 1; q <= REF_SMAX; q++) {
            ended += col_end[q - 1];
            o.cnt[q] = nzt - ended;
        }
        out[blockIdx.x] = o;
        e_out[blockIdx.x] = E;
        bad[blockIdx.x] = (unsigned char)(o.n_bad > 0);
    }
}

/* The zero and sign masks of `rows` contiguous vectors of length len, kw words each: one warp
 * per word, each lane reading entries lane and lane + 32 of it (coalesced) and two ballots per
 * half; the bits are ref_v2_mask_word's (the host's function), entries past len give 0. */
__global__ void v2_mask_kernel(uint64_t *z, uint64_t *sg, const double *x, int64_t rows, int64_t len, int64_t kw)
{
    int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;   /* the word: one per warp */
    int lane = threadIdx.x & 31;
    if (t >= rows * kw) return;   /* the whole warp */
    const double *v = x + t / kw * len;
    int64_t k0 = t % kw * 64 + lane, k1 = k0 + 32;
    double x0 = k0 < len ? v[k0] : 1.0, x1 = k1 < len ? v[k1] : 1.0;
    unsigned z0 = __ballot_sync(0xffffffffu, x0 == 0.0), z1 = __ballot_sync(0xffffffffu, x1 == 0.0);
    unsigned s0 = __ballot_sync(0xffffffffu, signbit(x0) != 0), s1 = __ballot_sync(0xffffffffu, signbit(x1) != 0);
    if (lane == 0) {
        z[t] = z0 | (uint64_t)z1 << 32;
        sg[t] = s0 | (uint64_t)s1 << 32;
    }
}

/* Plain double estimates of the sampled elements (ref_plan.h), one warp each. */
__global__ void v2_sample_kernel(ref_sample *s, int ns, const double *a64, const double *b64, int64_t k)
{
    int w = (int)((blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (w >= ns) return;
    const double *a = a64 + s[w].i * k, *b = b64 + s[w].j * k;
    double x = 0.0;
    for (int64_t q = lane; q < k; q += 32) x += a[q] * b[q];
    for (int off = 16; off > 0; off /= 2) x += __shfl_down_sync(0xffffffffu, x, off);
    if (lane == 0) s[w].x = isfinite(x) ? x : NAN;
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
 * (lk, lv)[ptr[r] .. ptr[r + 1]) (the counts came from v2_stats_kernel). S = 0: the positions
 * of its NaN/Inf entries instead (counts n_bad; e and lv unused). One block of 256. */
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
        double rem = k >= len ? 0.0 : S > 0 ? ref_v2_rem(v[k], e[row], beta, S, NULL) : !isfinite(v[k]);
        unsigned mask = __ballot_sync(0xffffffffu, rem != 0.0);
        if (lane == 0) warp_cnt[warp] = __popc(mask);
        __syncthreads();
        int before = 0, total = 0;
        for (int w = 0; w < 8; w++) { before += w < warp ? warp_cnt[w] : 0; total += warp_cnt[w]; }
        if (rem != 0.0) {
            int64_t pos = at + before + __popc(mask & ((1u << lane) - 1u));
            if (pos < end) { lk[pos] = (int)k; if (lv) lv[pos] = rem; }
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
template <int EXACT, typename T>
__global__ void v2_dot_kernel(double *h, double *l, double *err, const T *a64, const T *b64, ref_v2_args f,
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
            as[r][q] = i0 + r < f.m && q < kt ? v2_get(a64[(i0 + r) * f.k + k0 + q]) : 0.0;
            bs[r][q] = j0 + r < f.n && q < kt ? v2_get(b64[(j0 + r) * f.k + k0 + q]) : 0.0;
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

/* The dot stage for the listed open elements (und[0 .. count)), one warp each: lane q adds the
 * products of the 16-byte vectors q, q + 32, ... of its row of a64 and column of b64 (both
 * contiguous along k; when k entries are a whole number of vectors, else entry by entry), and
 * the 32 partial sums merge in a tree (ref_v2_dot_merge: exact but for the tracked error). The
 * warps read mostly columns of B from memory: narrower T, fewer bytes. For few open elements
 * scattered over D, where the tiles of v2_dot_kernel would almost all hold one. */
template <int EXACT, typename T>
__global__ void v2_dot_list_kernel(double *h, double *l, double *err, const T *a64, const T *b64,
                                   ref_v2_args f, int int_inputs, const int64_t *und, int64_t count,
                                   unsigned long long *n_dot)
{
    int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= count) return;
    int64_t x = und[w], i = x / f.n, j = x % f.n;
    const T *a = a64 + i * f.k, *b = b64 + j * f.k;
    ref_v2_dot s;
    ref_v2_dot_init(&s, f.k);
    enum { V = 16 / sizeof(T) };
    int64_t kv = f.k % V == 0 ? f.k : 0;   /* rows start on 16 bytes when k is a multiple of V */
    for (int64_t q = (int64_t)lane * V; q < kv; q += 32 * V) {
        uint4 ua = *(const uint4 *)(a + q), ub = *(const uint4 *)(b + q);
        const T *va = (const T *)&ua, *vb = (const T *)&ub;
#pragma unroll
        for (int t = 0; t < V; t++) ref_v2_dot_add(&s, v2_get(va[t]), v2_get(vb[t]), EXACT, int_inputs);
    }
    for (int64_t q = kv + lane; q < f.k; q += 32) ref_v2_dot_add(&s, v2_get(a[q]), v2_get(b[q]), EXACT, int_inputs);
    for (int off = 16; off > 0; off /= 2) {
        ref_v2_dot t;
        t.h = __shfl_down_sync(0xffffffffu, s.h, off);
        t.l = __shfl_down_sync(0xffffffffu, s.l, off);
        t.err = __shfl_down_sync(0xffffffffu, s.err, off);
        t.cls = __shfl_down_sync(0xffffffffu, s.cls, off);
        t.neg_zero = __shfl_down_sync(0xffffffffu, s.neg_zero, off);
        ref_v2_dot_merge(&s, &t);
    }
    if (lane != 0) return;
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

/* The bound's per-vector arrays from the statistics (ref_plan_vectors on the host). */
__global__ void v2_vectors_kernel(double *rmax_s, double *sum_up, double *ss, double *rl, const ref_vstats *v,
                                  int64_t count, int S, double up)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < count) ref_plan_vector_one(rmax_s, sum_up, ss, rl, v, x, S, up);
}

/* ab <- the metrics' bound, in place (row-major M x N). */
__global__ void v2_absbound_kernel(double *ab, ref_v2_args f)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < f.m * f.n) ab[x] = ref_v2_absbound_x(ab[x], &f, x);
}

#endif
