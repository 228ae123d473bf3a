/* metrics_sub_cuda.cu — the subnormal-factor excess Shat - S (metrics.h) of operands that are
 * already on the device, as four DGEMMs of non-negative matrices instead of metrics_sub.c's
 * (#subnormals x m) loop (a case of wide data at 8192^3 holds millions of subnormals), or,
 * for the elements where it can matter at all, one sum per element.
 *
 * With x^ = max(|x|, min_normal) for x != 0 (0 for zero or non-finite x), the excess of one
 * product with a subnormal factor is a^ b^ - |a||b| = (a^ - |a|) b^ + |a| (b^ - |b|), both terms
 * >= 0 and zero unless a (first) or b (second) is subnormal. So, with
 *   Ad = a^ - |a| (non-zero only for subnormal a),  Bd = b^ - |b|  (subnormal b),
 *   excess  = |alpha| (Ad B^ + |A| Bd)
 *   sub_abs = |alpha| (As |B| + An Bs)     (As, Bs: |x| of subnormal x; An: |a| of normal a)
 * every DGEMM sums non-negative terms: no cancellation, a relative error of at most ~K 2^-53
 * against metrics_sub.c's sums (the bound uses them as an additive allowance). The subnormals
 * are counted first; with none there is no excess and nothing else runs.
 *
 * With a skip (the elements' |A||B| sums and exact values): per row of A and column of B the
 * subnormal count and largest magnitude give each element a cap of its excess
 * (ref_excess_cap); where the cap cannot change the bound (ref_excess_negligible: on wide data
 * the excess is ~2^-170 of |A||B|) the element gets 0, the others are listed and, when at most
 * 1/64 of the elements, summed one warp per element; more, and the DGEMMs run as without skip.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/hd.h"
#include "mmaprobe/metrics.h"
#include "ref_internal.h"

namespace {

struct operand {
    const void *p;
    mmp_format_hd f;
    int layout;
    int64_t ld, rows, cols;
    double min_normal;
};

/* |x| of a finite non-zero element (else 0), and whether it is subnormal */
__device__ __forceinline__ double abs_at(const operand &o, int64_t r, int64_t c, int *sub)
{
    double v = mmp_format_hd_load(o.p, ref_index(o.layout, o.ld, r, c), &o.f);
    v = v == 0 || !isfinite(v) ? 0.0 : fabs(v);
    *sub = v != 0 && v < o.min_normal;
    return v;
}

/* the subnormals of o, in its storage order (grid x along a stored line, grid y over lines: no
 * division per element) */
__global__ void count_kernel(unsigned long long *n, operand o)
{
    int row = o.layout == MMP_LAYOUT_ROW;
    int64_t lines = row ? o.rows : o.cols, len = row ? o.cols : o.rows;
    unsigned long long mine = 0;
    for (int64_t l = blockIdx.y; l < lines; l += gridDim.y)
        for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < len; t += (int64_t)gridDim.x * blockDim.x) {
            int sub;
            abs_at(o, row ? l : t, row ? t : l, &sub);
            mine += (unsigned long long)sub;
        }
    for (int off = 16; off > 0; off /= 2) mine += __shfl_down_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(n, mine);
}

dim3 count_grid(const operand &o)
{
    int row = o.layout == MMP_LAYOUT_ROW;
    int64_t lines = row ? o.rows : o.cols, len = row ? o.cols : o.rows;
    int64_t gx = (len + 255) / 256;
    gx = gx < 64 ? (gx ? gx : 1) : 64;
    int64_t gy = (8192 + gx - 1) / gx;   /* about 8192 blocks in all */
    if (gy > lines) gy = lines ? lines : 1;
    if (gy > 65535) gy = 65535;
    return dim3((unsigned)gx, (unsigned)gy);
}

/* dst (row-major rows x cols) = one of the matrices above: 0 x^ - |x| (Ad, Bd), 1 x^ (B^),
 * 2 |x| (|A|, |B|), 3 |x| of subnormals (As, Bs), 4 |x| of normals (An) */
__global__ void build_kernel(double *dst, operand o, int what)
{
    int64_t total = o.rows * o.cols;
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < total; x += (int64_t)gridDim.x * blockDim.x) {
        int sub;
        double v = abs_at(o, x / o.cols, x % o.cols, &sub), w;
        switch (what) {
        case 0: w = sub ? o.min_normal - v : 0.0; break;
        case 1: w = sub ? o.min_normal : v; break;
        case 2: w = v; break;
        case 3: w = sub ? v : 0.0; break;
        default: w = sub ? 0.0 : v; break;
        }
        dst[x] = w;
    }
}

/* Per line (rows of A, or columns of B: rows_are_lines 0) the subnormal count and the largest
 * |x| (hat: x^) of the finite non-zero elements. "along": a line's elements are contiguous
 * (one warp per line); "across": consecutive lines are (one thread per line and chunk of it,
 * merged by atomics into zeroed arrays; a maximum of non-negative doubles orders as its bits). */
__device__ __forceinline__ void line_elem(const operand &o, int rows_are_lines, int hat, int64_t line, int64_t t,
                                          unsigned *c, double *mx)
{
    int sub;
    double v = rows_are_lines ? abs_at(o, line, t, &sub) : abs_at(o, t, line, &sub);
    *c += (unsigned)sub;
    if (v != 0) *mx = fmax(*mx, hat && sub ? o.min_normal : v);
}

__global__ void lines_along_kernel(unsigned *cnt, double *mx, operand o, int rows_are_lines, int hat)
{
    int64_t line = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = (int)(threadIdx.x % 32);
    int64_t lines = rows_are_lines ? o.rows : o.cols, len = rows_are_lines ? o.cols : o.rows;
    if (line >= lines) return;   /* whole warps */
    unsigned c = 0;
    double m = 0;
    for (int64_t t = lane; t < len; t += 32) line_elem(o, rows_are_lines, hat, line, t, &c, &m);
    for (int off = 16; off > 0; off /= 2) {
        c += __shfl_down_sync(0xffffffffu, c, off);
        m = fmax(m, __shfl_down_sync(0xffffffffu, m, off));
    }
    if (lane == 0) { cnt[line] = c; mx[line] = m; }
}

__global__ void lines_across_kernel(unsigned *cnt, double *mx, operand o, int rows_are_lines, int hat, int64_t chunk)
{
    int64_t line = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t lines = rows_are_lines ? o.rows : o.cols, len = rows_are_lines ? o.cols : o.rows;
    if (line >= lines) return;
    int64_t t0 = (int64_t)blockIdx.y * chunk, t1 = t0 + chunk < len ? t0 + chunk : len;
    unsigned c = 0;
    double m = 0;
    for (int64_t t = t0; t < t1; t++) line_elem(o, rows_are_lines, hat, line, t, &c, &m);
    if (c) atomicAdd(&cnt[line], c);
    if (m > 0) atomicMax((unsigned long long *)&mx[line], (unsigned long long)__double_as_longlong(m));
}

/* 0 into both outputs; the elements whose cap is not negligible into list[0 .. cap) (*count:
 * how many there are, also past cap), one atomic per warp. */
__global__ void mark_kernel(double *excess, double *sub_abs, unsigned long long *count, int64_t *list, int64_t cap,
                            const unsigned *ca, const double *ma, const unsigned *cb, const double *mb, double min_a,
                            double min_b, double abs_alpha, mmp_metrics_excess_skip skip, int64_t m, int64_t n)
{
    int64_t total = m * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < total; base += stride) {
        int64_t r = base + threadIdx.x;
        int open = 0;
        if (r < total) {
            int64_t i = r / n, j = r % n;
            double u = ref_excess_cap(abs_alpha, ca[i], min_a, ma[i], cb[j], min_b, mb[j]);
            if (excess) excess[r] = 0.0;
            if (sub_abs) sub_abs[r] = 0.0;
            open = !ref_excess_negligible(u, skip.s[r], skip.want[r], skip.rel);
        }
        unsigned ballot = __ballot_sync(0xffffffffu, open);
        if (!ballot) continue;
        int lane = (int)(threadIdx.x % 32), leader = __ffs(ballot) - 1;
        unsigned long long at = 0;
        if (lane == leader) at = atomicAdd(count, (unsigned long long)__popc(ballot));
        at = __shfl_sync(0xffffffffu, at, leader);
        if (open) {
            unsigned long long x = at + (unsigned long long)__popc(ballot & ((1u << lane) - 1u));
            if (x < (unsigned long long)cap) list[x] = r;
        }
    }
}

/* The listed elements' excess and sub_abs, one warp each (the terms of metrics_sub.c's loops). */
__global__ void element_kernel(double *excess, double *sub_abs, const int64_t *list, int64_t count, operand A,
                               operand B, double abs_alpha, int64_t n, int64_t k)
{
    int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = (int)(threadIdx.x % 32);
    if (w >= count) return;
    int64_t r = list[w], i = r / n, j = r % n;
    double e = 0, s = 0;
    for (int64_t t = lane; t < k; t += 32) {
        int sa, sb;
        double a = abs_at(A, i, t, &sa), b = abs_at(B, t, j, &sb);
        if (a == 0 || b == 0 || !(sa || sb)) continue;
        double ah = sa ? A.min_normal : a, bh = sb ? B.min_normal : b;
        e += (ah - a) * bh + a * (bh - b);
        s += a * b;
    }
    for (int off = 16; off > 0; off /= 2) {
        e += __shfl_down_sync(0xffffffffu, e, off);
        s += __shfl_down_sync(0xffffffffu, s, off);
    }
    if (lane == 0) {
        excess[r] = abs_alpha * e;
        if (sub_abs) sub_abs[r] = abs_alpha * s;
    }
}

unsigned grid_of(int64_t n)
{
    int64_t g = (n + 255) / 256;
    return (unsigned)(g < 8192 ? (g ? g : 1) : 8192);
}

/* The skip route (the file's head): *open = the elements that need their excess (-1: no memory
 * for the route). de NULL: that count alone; else, when at most 1/64 of the elements, every
 * element of de (and ds) is written (*done = 1); more, and nothing is final. */
mmp_status sparse_route(int *done, int64_t *open_out, double *de, double *ds, const operand &A, const operand &B,
                        int64_t m, int64_t n, int64_t k, double abs_alpha, const mmp_metrics_excess_skip &skip)
{
    *done = 0;
    *open_out = -1;
    int64_t mn = m * n, cap = mn / 64 + 1;
    void *mem = nullptr;
    size_t bytes = (size_t)(m + n) * (sizeof(unsigned) + sizeof(double)) + (size_t)cap * sizeof(int64_t) + 64;
    if (cudaMalloc(&mem, bytes) != cudaSuccess) {
        cudaGetLastError();
        return MMP_STATUS_OK;   /* the DGEMMs then (they report their own shortage) */
    }
    double *ma = (double *)mem, *mb = ma + m;
    int64_t *list = (int64_t *)(mb + n);
    unsigned long long *count = (unsigned long long *)(list + cap);
    unsigned *ca = (unsigned *)(count + 1), *cb = ca + m;
    unsigned long long open = 0;
    cudaError_t e = cudaMemset(mem, 0, bytes);
    const operand *ops[2] = {&A, &B};
    for (int side = 0; side < 2 && e == cudaSuccess; side++) {
        const operand &o = *ops[side];
        int rows_are_lines = side == 0;   /* rows of A, columns of B */
        int64_t lines = rows_are_lines ? o.rows : o.cols, len = rows_are_lines ? o.cols : o.rows;
        unsigned *c = side ? cb : ca;
        double *x = side ? mb : ma;
        if (rows_are_lines == (o.layout == MMP_LAYOUT_ROW)) {
            lines_along_kernel<<<(unsigned)((lines * 32 + 255) / 256), 256>>>(c, x, o, rows_are_lines, side);
        } else {
            int64_t chunk = (len + 65534) / 65535;
            if (chunk < 128) chunk = 128;
            dim3 grid((unsigned)((lines + 255) / 256), (unsigned)((len + chunk - 1) / chunk));
            lines_across_kernel<<<grid, 256>>>(c, x, o, rows_are_lines, side, chunk);
        }
    }
    if (e == cudaSuccess) {
        mark_kernel<<<grid_of(mn), 256>>>(de, ds, count, list, cap, ca, ma, cb, mb, A.min_normal, B.min_normal,
                                          abs_alpha, skip, m, n);
        e = cudaMemcpy(&open, count, sizeof open, cudaMemcpyDeviceToHost);
    }
    if (e == cudaSuccess) *open_out = (int64_t)open;
    if (e == cudaSuccess && de && open <= (unsigned long long)cap) {
        if (open) element_kernel<<<(unsigned)((open * 32 + 255) / 256), 256>>>(de, ds, list, (int64_t)open, A, B,
                                                                             abs_alpha, n, k);
        e = cudaDeviceSynchronize();
        *done = e == cudaSuccess;
    }
    cudaFree(mem);
    if (e != cudaSuccess)
        return MMP_ERR(MMP_STATUS_CUDA, "subnormal excess (device): %s", cudaGetErrorString(cudaGetLastError()));
    return MMP_STATUS_OK;
}

}  // namespace

extern "C" mmp_status mmp_metrics_subnormal_excess_device(double *excess, double *sub_abs, int *none, const void *a,
                                                         mmp_format fa, mmp_layout la, int64_t lda, const void *b,
                                                         mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m,
                                                         int64_t n, int64_t k, double alpha,
                                                         const mmp_metrics_excess_skip *skip, int device,
                                                         int out_on_device)
{
    const mmp_format_info *ia = mmp_format_get_info(fa), *ib = mmp_format_get_info(fb);
    if (!none || !a || !b || !ia || !ib || m <= 0 || n <= 0 || k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "subnormal excess (device): bad arguments");
    *none = 1;
    if (!ia->is_float || !ib->is_float) return MMP_STATUS_OK;
    operand A = {a, {}, (int)la, lda, m, k, ia->min_normal}, B = {b, {}, (int)lb, ldb, k, n, ib->min_normal};
    mmp_format_hd_init(&A.f, fa);
    mmp_format_hd_init(&B.f, fb);
    MMP_CUDA_CHECK(cudaSetDevice(device));
    unsigned long long *cnt = nullptr, nsub[2] = {0, 0};
    MMP_CUDA_CHECK(cudaMalloc(&cnt, 2 * sizeof *cnt));
    cudaError_t e = cudaMemset(cnt, 0, 2 * sizeof *cnt);
    if (e == cudaSuccess) {
        count_kernel<<<count_grid(A), 256>>>(cnt, A);
        count_kernel<<<count_grid(B), 256>>>(cnt + 1, B);
        e = cudaMemcpy(nsub, cnt, sizeof nsub, cudaMemcpyDeviceToHost);
    }
    cudaFree(cnt);
    MMP_CUDA_CHECK(e);
    if (nsub[0] + nsub[1] == 0) return MMP_STATUS_OK;
    *none = 0;
    if (!excess) {   /* the count alone; with skip, also whether any element needs its excess */
        int done = 0;
        int64_t open = -1;
        if (skip && skip->s && skip->want)
            MMP_TRY(sparse_route(&done, &open, NULL, NULL, A, B, m, n, k, fabs(alpha), *skip));
        if (open == 0) *none = 1;
        return MMP_STATUS_OK;
    }
    double *da = nullptr, *db = nullptr, *de = nullptr, *ds = nullptr;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    cublasHandle_t h = nullptr;
    mmp_status st = MMP_STATUS_OK;
    const double one = 1.0, s = fabs(alpha), zero = 0.0;
    int done = 0;
    /* (A side, B side, accumulate into de (0) or ds (1), beta) per DGEMM */
    static const int plan[4][4] = {{0, 1, 0, 0}, {2, 0, 0, 1}, {3, 2, 1, 0}, {4, 3, 1, 1}};
    if (out_on_device) { de = excess; ds = sub_abs; }
    if (!out_on_device && (cudaMalloc(&de, mn * 8) != cudaSuccess || (sub_abs && cudaMalloc(&ds, mn * 8) != cudaSuccess))) {
        cudaGetLastError();
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess (device): cannot allocate %zu MB", 2 * mn * 8 >> 20);
        goto done;
    }
    if (skip && skip->s && skip->want) {
        int64_t open;
        st = sparse_route(&done, &open, de, ds, A, B, m, n, k, s, *skip);
        if (st != MMP_STATUS_OK || done) goto copy;
    }
    if (cudaMalloc(&da, mk * 8) != cudaSuccess || cudaMalloc(&db, kn * 8) != cudaSuccess) {
        cudaGetLastError();
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess (device): cannot allocate %zu MB", (mk + kn) * 8 >> 20);
        goto done;
    }
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        h = nullptr;
        st = MMP_ERR(MMP_STATUS_CUDA, "subnormal excess (device): cublasCreate failed");
        goto done;
    }
    for (int q = 0; q < (sub_abs ? 4 : 2); q++) {
        build_kernel<<<grid_of((int64_t)mk), 256>>>(da, A, plan[q][0]);
        build_kernel<<<grid_of((int64_t)kn), 256>>>(db, B, plan[q][1]);
        double *dst = plan[q][2] ? ds : de;
        /* row-major dst (m x n) = column-major dst^T = B^T A^T: B row-major is B^T column-major */
        if (cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &s, db, (int)n, da, (int)k,
                        plan[q][3] ? &one : &zero, dst, (int)n) != CUBLAS_STATUS_SUCCESS) {
            st = MMP_ERR(MMP_STATUS_CUDA, "subnormal excess (device): cublasDgemm failed");
            goto done;
        }
    }
copy:
    if (st == MMP_STATUS_OK && (out_on_device ? cudaDeviceSynchronize() != cudaSuccess
                      : (cudaMemcpy(excess, de, mn * 8, cudaMemcpyDeviceToHost) != cudaSuccess ||
                         (sub_abs && cudaMemcpy(sub_abs, ds, mn * 8, cudaMemcpyDeviceToHost) != cudaSuccess))))
        st = MMP_ERR(MMP_STATUS_CUDA, "subnormal excess (device): %s", cudaGetErrorString(cudaGetLastError()));
done:
    if (h) cublasDestroy(h);
    cudaFree(da);
    cudaFree(db);
    if (!out_on_device) {
        cudaFree(de);
        cudaFree(ds);
    }
    return st;
}
