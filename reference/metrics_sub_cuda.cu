/* metrics_sub_cuda.cu — the subnormal-factor excess Shat - S (metrics.h) of operands that are
 * already on the device, as four DGEMMs of non-negative matrices instead of metrics_sub.c's
 * (#subnormals x m) loop (a case of wide data at 8192^3 holds millions of subnormals).
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

__global__ void count_kernel(unsigned long long *n, operand o)
{
    int64_t total = o.rows * o.cols;
    unsigned long long mine = 0;
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < total; x += (int64_t)gridDim.x * blockDim.x) {
        int sub;
        abs_at(o, x / o.cols, x % o.cols, &sub);
        mine += (unsigned long long)sub;
    }
    if (mine) atomicAdd(n, mine);
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

unsigned grid_of(int64_t n)
{
    int64_t g = (n + 255) / 256;
    return (unsigned)(g < 8192 ? (g ? g : 1) : 8192);
}

}  // namespace

extern "C" mmp_status mmp_metrics_subnormal_excess_device(double *excess, double *sub_abs, int *none, const void *a,
                                                         mmp_format fa, mmp_layout la, int64_t lda, const void *b,
                                                         mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m,
                                                         int64_t n, int64_t k, double alpha, int device,
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
        count_kernel<<<grid_of(m * k), 256>>>(cnt, A);
        count_kernel<<<grid_of(k * n), 256>>>(cnt + 1, B);
        e = cudaMemcpy(nsub, cnt, sizeof nsub, cudaMemcpyDeviceToHost);
    }
    cudaFree(cnt);
    MMP_CUDA_CHECK(e);
    if (nsub[0] + nsub[1] == 0) return MMP_STATUS_OK;
    *none = 0;
    if (!excess) return MMP_STATUS_OK;   /* the count alone */
    double *da = nullptr, *db = nullptr, *de = nullptr, *ds = nullptr;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    cublasHandle_t h = nullptr;
    mmp_status st = MMP_STATUS_OK;
    const double one = 1.0, s = fabs(alpha), zero = 0.0;
    /* (A side, B side, accumulate into de (0) or ds (1), beta) per DGEMM */
    static const int plan[4][4] = {{0, 1, 0, 0}, {2, 0, 0, 1}, {3, 2, 1, 0}, {4, 3, 1, 1}};
    if (out_on_device) { de = excess; ds = sub_abs; }
    if (cudaMalloc(&da, mk * 8) != cudaSuccess || cudaMalloc(&db, kn * 8) != cudaSuccess ||
        (!out_on_device && (cudaMalloc(&de, mn * 8) != cudaSuccess || (sub_abs && cudaMalloc(&ds, mn * 8) != cudaSuccess)))) {
        cudaGetLastError();
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "subnormal excess (device): cannot allocate %zu MB",
                     (mk + kn + 2 * mn) * 8 >> 20);
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
    if (out_on_device ? cudaDeviceSynchronize() != cudaSuccess
                      : (cudaMemcpy(excess, de, mn * 8, cudaMemcpyDeviceToHost) != cudaSuccess ||
                         (sub_abs && cudaMemcpy(sub_abs, ds, mn * 8, cudaMemcpyDeviceToHost) != cudaSuccess)))
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
