/* reference/ref_cuda2_kern.cuh — the kernels of the device reference, version 2 (ref_cuda2.cu,
 * whose header says what each stage proves; ref_certified.c's header is the proof). Included by
 * ref_cuda2.cu only. Every index is int64 (8192^2 elements and more); grids are 1-D with at most
 * (count + 255) / 256 blocks (count <= 2^37: ref_cuda2.cu checks). */
#ifndef MMAPROBE_REF_CUDA2_KERN_CUH
#define MMAPROBE_REF_CUDA2_KERN_CUH

#include "reference/ref_internal.h"
#include "reference/ref_round.h"

/* Native operand (format f, layout, ld) -> binary64, dense: row-major rows x cols
 * (row_major_dst) or column-major. Exact: every format's values are doubles. */
__global__ void v2_decode_kernel(double *dst, const void *src, ref_fmt f, int layout, int64_t ld, int64_t rows,
                                 int64_t cols, int row_major_dst)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= rows * cols) return;
    int64_t r = row_major_dst ? x / cols : x % rows, c = row_major_dst ? x % cols : x / rows;
    dst[x] = ref_fmt_load(src, ref_index(layout, ld, r, c), &f);
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
        double q[8], last = 0, rem = ref_split(v[k], E, beta, smax, q, 1, &last);
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
        double q[8], last, rem = k < len ? ref_split(v[k], e[row], beta, S, q, 1, &last) : 0.0;
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

/* Steps 4 and 6: state += P 2^(E_i + F_j - pair_exp) (exact terms; exponent range as v1). */
__global__ void v2_accumulate_kernel(double *h, double *l, double *err, const double *p, const int *ea, const int *fb,
                                     int64_t m, int64_t n, int pair_exp)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= m * n) return;
    int ex = ea[x / n] + fb[x % n] - pair_exp;
    if (ex < -1022 || ex > 970) { err[x] = INFINITY; return; }
    double hh = h[x], ll = l[x], ee = err[x];
    ref_acc(&hh, &ll, &ee, p[x] * ref_pow2(ex));
    h[x] = hh; l[x] = ll; err[x] = ee;
}

/* What the finish kernel reads besides the state. */
typedef struct {
    const void *a, *b, *c;        /* native operands (device) */
    ref_fmt fa, fb, fc, fd;
    int la, lb, lc;
    int64_t lda, ldb, ldc, m, n, k;
    double alpha, beta;
    int sparse, beta_bits, sb;
    const int *ea, *fbx;          /* scale exponents */
    const unsigned char *rowbad, *colbad;
    const int64_t *ra_ptr, *rb_ptr;   /* sparse: lists by rows of A and by columns of B */
    const int *ra_k, *rb_k;
    const double *ra_v, *rb_v;
    const double *ra_max, *a_sum, *rb_max, *b_sum;   /* bound mode */
    int64_t *n_undecided, cap;
    int64_t *undecided;           /* the first cap undecided indices */
} v2_finish_args;

/* Steps 5-7 per element, in place: h <- d64, l <- dout, err <- 1 if undecided else 0.
 * Sparse remainders (R = rA (b - rB) + a rB, exact TwoProds: b - rB is b truncated to the
 * slices' grid, a double, and the subtraction is exact) or the bound RA_i SB_j + SA_i RB_j;
 * then alpha/beta C (ref_finish) and the decision (ref_decide_hd). */
__global__ void v2_finish_kernel(double *h, double *l, double *err, v2_finish_args f)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= f.m * f.n) return;
    int64_t i = x / f.n, j = x % f.n;
    double hh = h[x], ll = l[x], ee = err[x];
    if (f.sparse) {
        for (int64_t q = f.ra_ptr[i]; q < f.ra_ptr[i + 1]; q++) {
            int64_t k = f.ra_k[q];
            double bv = ref_fmt_load(f.b, ref_index(f.lb, f.ldb, k, j), &f.fb), qq[8], last;
            double bhi = bv - ref_split(bv, f.fbx[j], f.beta_bits, f.sb, qq, 1, &last);
            ref_acc_prod(&hh, &ll, &ee, f.ra_v[q], bhi);
        }
        for (int64_t q = f.rb_ptr[j]; q < f.rb_ptr[j + 1]; q++) {
            int64_t k = f.rb_k[q];
            double av = ref_fmt_load(f.a, ref_index(f.la, f.lda, i, k), &f.fa);
            ref_acc_prod(&hh, &ll, &ee, av, f.rb_v[q]);
        }
    }
    double E = ee == 0.0 ? 0.0 : ee * (1.0 + 0x1p-40);
    if (!f.sparse) {
        double drop = f.ra_max[i] * f.b_sum[j] + f.a_sum[i] * f.rb_max[j];
        if (drop != 0.0) E += drop * (1.0 + 0x1p-50) + 0x1p-1073;
    }
    if (f.rowbad[i] || f.colbad[j]) E = INFINITY;
    double cv = f.beta != 0.0 ? ref_fmt_load(f.c, ref_index(f.lc, f.ldc, i, j), &f.fc) : 0.0;
    ref_finish(&hh, &ll, &E, f.alpha, f.beta, cv, f.beta != 0.0);
    double d64 = 0, dout = 0;
    int ok = ref_decide_hd(&d64, &dout, hh, ll, E, &f.fd);
    h[x] = d64; l[x] = dout; err[x] = ok ? 0.0 : 1.0;
    if (!ok) {
        unsigned long long pos = atomicAdd((unsigned long long *)f.n_undecided, 1ull);
        if ((int64_t)pos < f.cap) f.undecided[pos] = x;
    }
}

/* |x| of a native operand into a dense binary64 array (for fl(|A||B|)). */
__global__ void v2_abs_decode_kernel(double *dst, const void *src, ref_fmt f, int layout, int64_t ld, int64_t rows,
                                     int64_t cols, int row_major_dst)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= rows * cols) return;
    int64_t r = row_major_dst ? x / cols : x % rows, c = row_major_dst ? x % cols : x / rows;
    dst[x] = fabs(ref_fmt_load(src, ref_index(layout, ld, r, c), &f));
}

/* ab <- ref_absbound_one(ab, ...) in place (row-major M x N). */
__global__ void v2_absbound_kernel(double *ab, v2_finish_args f)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= f.m * f.n) return;
    double cv = f.beta != 0.0 ? fabs(ref_fmt_load(f.c, ref_index(f.lc, f.ldc, x / f.n, x % f.n), &f.fc)) : 0.0;
    ab[x] = ref_absbound_one(ab[x], (double)f.k, fabs(f.alpha), f.beta != 0.0 ? fabs(f.beta) : 0.0, cv);
}

#endif
