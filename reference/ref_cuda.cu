/* ref_cuda.cu — the certified reference with cuBLAS: the CPU path's scheme (ref_certified.c,
 * whose header comment is the proof) with the slice products on the device.
 *
 * Build: part of libmmp in CUDA builds (MMP_ENABLE_CUDA=ON); no CUDA header in reference.h.
 * Run:   build/bench_reference --gpu --sizes 8192 --sample 10000   (scripts/device/20-reference.sh)
 *
 * Version 2 (ref_cuda2.cu, the default) keeps every O(n^2) stage on the device; this file stays
 * as the fallback and for comparison (mmp_ref_options.device_version = 1, MMP_REF_DEVICE_VERSION=1).
 * Version 1 (this file): the host loads A, B into binary64 and splits them (ref_cert_prepare:
 * scale exponents, slice counts, the exact sparse remainder lists or the bound); the device
 *   1. receives A (row-major), B (column-major) and the scale exponents, and slices them with
 *      the same ref_split the host uses (ref_internal.h, __host__ __device__);
 *   2. runs one cublasDgemm per slice pair (exact: integer slices, see step 3 of the proof),
 *      largest weights first, each followed by a kernel adding the exact terms
 *      P 2^(E_i + F_j - beta (s + t)) into the (h, l, err) state (ref_acc);
 *   3. optionally forms fl(|A||B|) with one more DGEMM for the metrics' bound;
 * then the state comes back and the host adds the remainder terms, alpha/beta, decides each
 * rounding (ref_cert_finish) and sends the undecided elements to MPFR.
 * Inputs are HOST pointers (the runner keeps host copies of its operands). Device memory, at
 * 8192^3 with 2 + 2 slices: A, B in binary64 (1 GB) + slices (2 GB) + one product (0.5 GB)
 * while slicing and forming |A||B|; then A, B are freed and the 3 state arrays (1.5 GB) come:
 * peak about 4 GB, all freed on return.
 * CUDA is first touched here: call it only in a process that does not fork afterwards.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "ref_internal.h"

/* ---- kernels ---- */

/* Slices of A (row-major M x K): one thread per element; qa planes of M K doubles. */
__global__ void slice_a_kernel(double *qa, const double *a, const int *ea, int64_t m, int64_t k, int beta, int s)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= m * k) return;
    double last;
    ref_split(a[x], ea[x / k], beta, s, qa + x, (size_t)(m * k), &last);
}

/* Slices of B (column-major K x N). */
__global__ void slice_b_kernel(double *qb, const double *b, const int *fb, int64_t k, int64_t n, int beta, int s)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= k * n) return;
    double last;
    ref_split(b[x], fb[x / k], beta, s, qb + x, (size_t)(k * n), &last);
}

/* State += P 2^(E_i + F_j - pair_exp), row-major M x N (same test as the CPU path). */
__global__ void accumulate_kernel(double *h, double *l, double *err, const double *p, const int *ea,
                                  const int *fb, int64_t m, int64_t n, int pair_exp)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= m * n) return;
    double hh = h[x], ll = l[x], ee = err[x];
    ref_acc_scaled(&hh, &ll, &ee, p[x], ea[x / n] + fb[x % n] - pair_exp);
    h[x] = hh; l[x] = ll; err[x] = ee;
}

__global__ void abs_kernel(double *x, int64_t count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) x[i] = fabs(x[i]);
}

static unsigned blocks(int64_t count) { return (unsigned)((count + 255) / 256); }

/* ---- host side ---- */

typedef struct {
    double *a, *b, *qa, *qb, *p, *h, *l, *err;
    int *ea, *fb;
    cublasHandle_t blas;
    size_t free0, free_min;   /* device memory free before the first allocation, and its least */
} dev_bufs;

/* Samples free device memory (the peak in use is free0 - free_min). */
static void mem_sample(dev_bufs *g)
{
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) return;
    if (!g->free0) g->free0 = g->free_min = fr;
    if (fr < g->free_min) g->free_min = fr;
}

static void dev_free(dev_bufs *g)
{
    cudaFree(g->a); cudaFree(g->b); cudaFree(g->qa); cudaFree(g->qb); cudaFree(g->p);
    cudaFree(g->h); cudaFree(g->l); cudaFree(g->err); cudaFree(g->ea); cudaFree(g->fb);
    if (g->blas) cublasDestroy(g->blas);
    size_t f0 = g->free0, fm = g->free_min;
    memset(g, 0, sizeof *g);
    g->free0 = f0;
    g->free_min = fm;
}

static mmp_status sync_time(double *acc, double t0)
{
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    *acc += mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}

static mmp_status device_products(ref_cert *c, dev_bufs *g, const mmp_ref_options *o)
{
    const ref_data *d = c->d;
    mmp_ref_result *r = c->r;
    int64_t m = d->m, n = d->n, k = d->k;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    double t0 = mmp_clock_now();
    MMP_CUDA_CHECK(cudaSetDevice(o->device));
    MMP_CUDA_CHECK(cudaFree(0));
    mem_sample(g);
    MMP_CUBLAS_CHECK(cublasCreate(&g->blas));
    /* default math: IEEE binary64 FMAs (FP64 emulation is opt-in, FP64_EMULATED_FIXEDPOINT_MATH,
     * and stays off); exactness needs only correctly rounded operations (step 3 of the proof) */
    MMP_CUBLAS_CHECK(cublasSetMathMode(g->blas, CUBLAS_DEFAULT_MATH));
    MMP_CUDA_CHECK(cudaMalloc(&g->a, mk * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->b, kn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->ea, m * sizeof(int)));
    MMP_CUDA_CHECK(cudaMalloc(&g->fb, n * sizeof(int)));
    r->split.setup_s = mmp_clock_now() - t0;
    double tu = mmp_clock_now();
    MMP_CUDA_CHECK(cudaMemcpy(g->a, d->a64, mk * sizeof(double), cudaMemcpyHostToDevice));
    MMP_CUDA_CHECK(cudaMemcpy(g->b, d->b64, kn * sizeof(double), cudaMemcpyHostToDevice));
    MMP_CUDA_CHECK(cudaMemcpy(g->ea, c->ea, m * sizeof(int), cudaMemcpyHostToDevice));
    MMP_CUDA_CHECK(cudaMemcpy(g->fb, c->fb, n * sizeof(int), cudaMemcpyHostToDevice));
    r->split.upload_s = mmp_clock_now() - tu;
    double tsl = mmp_clock_now();
    MMP_CUDA_CHECK(cudaMalloc(&g->qa, mk * c->sa * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->qb, kn * c->sb * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->p, mn * sizeof(double)));
    mem_sample(g);
    slice_a_kernel<<<blocks(mk), 256>>>(g->qa, g->a, g->ea, m, k, c->beta, c->sa);
    slice_b_kernel<<<blocks(kn), 256>>>(g->qb, g->b, g->fb, k, n, c->beta, c->sb);
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_TRY(sync_time(&r->time.convert_s, t0));
    r->split.slice_s = mmp_clock_now() - tsl;
    const double one = 1.0, zero = 0.0;
    if (r->absbound) {   /* fl(|A||B|) for the metrics, one more DGEMM */
        double t4 = mmp_clock_now();
        abs_kernel<<<blocks(mk), 256>>>(g->a, (int64_t)mk);
        abs_kernel<<<blocks(kn), 256>>>(g->b, (int64_t)kn);
        MMP_CUDA_CHECK(cudaGetLastError());
        MMP_CUBLAS_CHECK(cublasDgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, g->b,
                                     (int)k, g->a, (int)k, &zero, g->p, (int)n));
        MMP_CUDA_CHECK(cudaDeviceSynchronize());
        mem_sample(g);
        double *ab = (double *)malloc(mn * sizeof(double));
        if (!ab) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate |A||B| on the host");
        cudaError_t e = cudaMemcpy(ab, g->p, mn * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) ref_absbound_finish(r, d, ab);
        free(ab);
        MMP_CUDA_CHECK(e);
        r->time.gemm_s += mmp_clock_now() - t4;
        r->split.absbound_s = mmp_clock_now() - t4;
    }
    /* A and B are sliced: free them before the state arrays (peak memory) */
    cudaFree(g->a); cudaFree(g->b);
    g->a = g->b = NULL;
    MMP_CUDA_CHECK(cudaMalloc(&g->h, mn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->l, mn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMalloc(&g->err, mn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMemset(g->h, 0, mn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMemset(g->l, 0, mn * sizeof(double)));
    MMP_CUDA_CHECK(cudaMemset(g->err, 0, mn * sizeof(double)));
    for (int lvl = 2; lvl <= c->levels; lvl++)
        for (int s = 1; s <= c->sa; s++) {
            int t = lvl - s;
            if (t < 1 || t > c->sb) continue;
            double t1 = mmp_clock_now();
            /* row-major P = column-major P^T = Qb^T Qa^T */
            MMP_CUBLAS_CHECK(cublasDgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                                         g->qb + (size_t)(t - 1) * kn, (int)k, g->qa + (size_t)(s - 1) * mk,
                                         (int)k, &zero, g->p, (int)n));
            r->n_gemms++;
            MMP_TRY(sync_time(&r->time.gemm_s, t1));
            mem_sample(g);
            double t2 = mmp_clock_now();
            accumulate_kernel<<<blocks(mn), 256>>>(g->h, g->l, g->err, g->p, g->ea, g->fb, m, n, c->beta * lvl);
            MMP_CUDA_CHECK(cudaGetLastError());
            MMP_TRY(sync_time(&r->time.combine_s, t2));
            r->split.accumulate_s += mmp_clock_now() - t2;
        }
    double t3 = mmp_clock_now();
    MMP_CUDA_CHECK(cudaMemcpy(c->h, g->h, mn * sizeof(double), cudaMemcpyDeviceToHost));
    MMP_CUDA_CHECK(cudaMemcpy(c->l, g->l, mn * sizeof(double), cudaMemcpyDeviceToHost));
    MMP_CUDA_CHECK(cudaMemcpy(c->err, g->err, mn * sizeof(double), cudaMemcpyDeviceToHost));
    r->time.combine_s += mmp_clock_now() - t3;
    r->split.download_s = mmp_clock_now() - t3;
    return MMP_STATUS_OK;
}

extern "C" mmp_status ref_cuda_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    mmp_status st0;
    if (ref_mpfr_instead(&st0, r, d, o)) return st0;
    if (d->m * d->k > INT32_MAX * 64LL || d->k * d->n > INT32_MAX * 64LL)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: operands too large for the device path");
    r->split.version = 1;
    ref_cert c;
    double t0 = mmp_clock_now();
    mmp_status st = ref_cert_prepare(&c, r, d, o, 0);
    r->time.combine_s += mmp_clock_now() - t0;
    r->split.prepare_s = mmp_clock_now() - t0;
    dev_bufs gb;
    memset(&gb, 0, sizeof gb);
    if (st == MMP_STATUS_OK) st = device_products(&c, &gb, o);
    dev_free(&gb);
    r->device_peak_bytes = gb.free0 > gb.free_min ? (int64_t)(gb.free0 - gb.free_min) : 0;
    double tf = mmp_clock_now(), mpfr0 = r->time.mpfr_s;
    if (st == MMP_STATUS_OK) st = ref_cert_finish(&c);
    r->split.finish_s = mmp_clock_now() - tf - (r->time.mpfr_s - mpfr0);
    ref_cert_free(&c);
    return st;
}

extern "C" mmp_status ref_cuda_time_dgemm(double *seconds, int64_t m, int64_t n, int64_t k, int device)
{
    dev_bufs g;
    memset(&g, 0, sizeof g);
    *seconds = 0;
    mmp_status st = MMP_STATUS_OK;
    cudaEvent_t e0 = NULL, e1 = NULL;
    const double one = 1.0, zero = 0.0;
    float best = 0;
#define TRY(x) do { st = (x); if (st != MMP_STATUS_OK) goto done; } while (0)
    TRY([&]() -> mmp_status {
        MMP_CUDA_CHECK(cudaSetDevice(device));
        MMP_CUBLAS_CHECK(cublasCreate(&g.blas));
        MMP_CUBLAS_CHECK(cublasSetMathMode(g.blas, CUBLAS_DEFAULT_MATH));
        MMP_CUDA_CHECK(cudaMalloc(&g.a, (size_t)m * k * sizeof(double)));
        MMP_CUDA_CHECK(cudaMalloc(&g.b, (size_t)k * n * sizeof(double)));
        MMP_CUDA_CHECK(cudaMalloc(&g.p, (size_t)m * n * sizeof(double)));
        MMP_CUDA_CHECK(cudaMemset(g.a, 0, (size_t)m * k * sizeof(double)));
        MMP_CUDA_CHECK(cudaMemset(g.b, 0, (size_t)k * n * sizeof(double)));
        MMP_CUDA_CHECK(cudaEventCreate(&e0));
        MMP_CUDA_CHECK(cudaEventCreate(&e1));
        for (int rep = 0; rep < 4; rep++) {   /* first one warms up */
            MMP_CUDA_CHECK(cudaEventRecord(e0));
            MMP_CUBLAS_CHECK(cublasDgemm(g.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, g.b,
                                         (int)k, g.a, (int)k, &zero, g.p, (int)n));
            MMP_CUDA_CHECK(cudaEventRecord(e1));
            MMP_CUDA_CHECK(cudaEventSynchronize(e1));
            float ms;
            MMP_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep > 0 && (best == 0 || ms < best)) best = ms;
        }
        return MMP_STATUS_OK;
    }());
    *seconds = best * 1e-3;
done:
#undef TRY
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    dev_free(&g);
    return st;
}
