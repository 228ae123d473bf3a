/* ref_cuda2_crt.cu — the residue route of the device reference's int8 route (ref_crt.h: why it
 * is exact; ref_plan.h: when the plan takes it): the square of int8 slices as one int8 GEMM per
 * modulus instead of one per slice pair. The per-entry and per-element work is ref_crt.h's, which
 * the host model (ref_v2_host.c, model_crt) runs on the CPU with the same layout.
 *
 * Build: part of libmmp in CUDA builds, with -fmad=false (reference/CMakeLists.txt: ref_acc's
 *        TwoSums round every operation).
 * Run:   MMP_REF_CRT=1 build/bench_reference --gpu (or mmp_ref_options.crt).
 *
 *   residues  v2_crt_operand_kernel: each entry's N residues into its row of N kp int8 (A
 *             row-major m4 x N kp, B column-major N kp x n4, modulus t at t kp), zero-padded.
 *   GEMMs     cublasGemmEx int8 x int8 -> int32 per modulus, "TN" as the pairs' GEMMs,
 *             REF_CRT_BATCH int32 planes at a time, each then reduced to its byte plane
 *             (v2_crt_reduce_kernel: d_t = (C_t mod m_t) y_t mod m_t).
 *             The residue and int32 planes are then freed, before the state is allocated.
 *   state     v2_crt_accumulate_kernel: X from each element's N bytes, written into (h, l, err).
 * Memory at 8192^3 with N moduli: the residue planes 2 N x 64 MiB, the byte planes N x 64 MiB
 * and REF_CRT_BATCH int32 planes of 256 MiB; then the byte planes and the state (3 x 512 MiB).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "ref_v2.h"

enum { REF_CRT_BATCH = 4, CRT_THREADS = 256, CRT_VEC = 4 };

/* The residues of `rows` contiguous vectors of length len (scale e per vector) into rows of ld
 * int8 entries: a thread takes CRT_VEC consecutive entries of a vector (one 4-byte store per
 * modulus when the vector's length allows), grid x over the entries of a vector, grid y over the
 * vectors, each block over several of them (its copy of the table serves them all). The table
 * comes as a parameter (read at constant indices), its powers of 256 (read at each entry's own
 * index) from shared memory. */
__global__ void __launch_bounds__(CRT_THREADS) v2_crt_operand_kernel(int8_t *q, const double *x, const int *e,
                                                                     int64_t rows, int64_t len, int64_t ld, int S,
                                                                     int64_t kp, const ref_crt_table t, int *bad)
{
    __shared__ int w[REF_CRT_MAX][REF_SMAX + 1];
    for (int i = threadIdx.x; i < t.n * (REF_SMAX + 1); i += blockDim.x)
        w[i / (REF_SMAX + 1)][i % (REF_SMAX + 1)] = t.w[i / (REF_SMAX + 1)][i % (REF_SMAX + 1)];
    __syncthreads();
    int64_t k0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * CRT_VEC;
    if (k0 >= len) return;
    /* 4-byte stores need every row and modulus column aligned: kp and ld multiples of 4 */
    int vec = k0 + CRT_VEC <= len && kp % CRT_VEC == 0 && ld % CRT_VEC == 0;
    int ok = 1;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        int8_t *row = q + r * ld;
        const double *xr = x + r * len;
        if (!vec) {
            for (int64_t kk = k0; kk < len && kk < k0 + CRT_VEC; kk++)
                ok &= ref_crt_operand_one(row, xr[kk], e[r], S, kp, &t, w, kk);
            continue;
        }
        int64_t Q[CRT_VEC];
        int p2[CRT_VEC];
#pragma unroll
        for (int v = 0; v < CRT_VEC; v++) {
            ok &= ref_crt_value_direct(&Q[v], &p2[v], xr[k0 + v], e[r], S) && p2[v] < 8 * (REF_SMAX + 1);
            if (!ok) Q[v] = 0;
        }
#pragma unroll
        for (int m = 0; m < REF_CRT_MAX; m++) {   /* constant indices into t */
            if (m >= t.n) break;
            uint32_t word = 0;
#pragma unroll
            for (int v = 0; v < CRT_VEC; v++)
                word |= (uint32_t)(uint8_t)(int8_t)(Q[v] ? ref_crt_residue_direct(Q[v], p2[v], &t, w, m) : 0) << (8 * v);
            *(uint32_t *)(row + m * kp + k0) = word;
        }
    }
    if (!ok) atomicOr(bad, 1);
}

/* One int32 plane (m4 x n4, leading dimension ld) reduced to its byte plane (m x n), CRT_VEC
 * elements a thread (one 16-byte load, one 4-byte store where n allows). */
__global__ void v2_crt_reduce_kernel(uint8_t *res, const int32_t *plane, int64_t m, int64_t n, int64_t ld,
                                     uint32_t mod, uint32_t magic, uint32_t c16, uint32_t y)
{
    int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * CRT_VEC;
    if (j >= n) return;
    int vec = n % CRT_VEC == 0 && ld % CRT_VEC == 0;
    for (int64_t i = blockIdx.y; i < m; i += gridDim.y) {
        if (vec) {
            int4 c = *(const int4 *)(plane + i * ld + j);
            uint32_t word = (uint32_t)ref_crt_reduce(c.x, mod, magic, c16, y) |
                            (uint32_t)ref_crt_reduce(c.y, mod, magic, c16, y) << 8 |
                            (uint32_t)ref_crt_reduce(c.z, mod, magic, c16, y) << 16 |
                            (uint32_t)ref_crt_reduce(c.w, mod, magic, c16, y) << 24;
            *(uint32_t *)(res + i * n + j) = word;
        } else {
            for (int64_t jj = j; jj < n && jj < j + CRT_VEC; jj++)
                res[i * n + jj] = ref_crt_reduce(plane[i * ld + jj], mod, magic, c16, y);
        }
    }
}

/* Steps 4 and 6 for every element: the state from the byte planes (ref_crt_accumulate_one; the
 * table read from the parameters at constant indices). */
__global__ void __launch_bounds__(CRT_THREADS) v2_crt_accumulate_kernel(double *h, double *l, double *err,
                                                                        const uint8_t *res, const ref_crt_table t,
                                                                        const int *ea, const int *fb, int64_t m,
                                                                        int64_t n)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < m * n) ref_crt_accumulate_one(h, l, err, res, m * n, &t, ea, fb, n, x);
}

/* CRT_VEC entries a thread along a vector of len, at most `most` blocks down the vectors */
static dim3 grid2(int64_t len, int64_t rows, int64_t most)
{
    int64_t per = (int64_t)CRT_THREADS * CRT_VEC;
    return dim3((unsigned)((len + per - 1) / per), (unsigned)(rows < most ? (rows ? rows : 1) : most));
}

static mmp_status timed_sync(double *acc, double t0)
{
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    *acc += mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}

extern "C" mmp_status ref_cuda2_crt_slice(mmp_ref_result *r, ref_imma_dev *d, const double *a64, const double *b64,
                                          const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n,
                                          int64_t k)
{
    ref_crt_table t;
    if (!ref_crt_table_init(&t, pl->sa, pl->sb, pl->kp))
        return MMP_ERR(MMP_STATUS_INTERNAL, "reference: no residue table for %dx%d slices", pl->sa, pl->sb);
    int64_t kp = pl->kp, ld = t.n * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n);
    d->nplanes = t.n < REF_CRT_BATCH ? t.n : REF_CRT_BATCH;
    double t0 = mmp_clock_now();
    MMP_TRY(ref_cuda2_dalloc((void **)&d->qa, (size_t)m4 * ld));   /* the reference's pool (ref_cuda2_mem.cu) */
    MMP_TRY(ref_cuda2_dalloc((void **)&d->qb, (size_t)n4 * ld));
    MMP_TRY(ref_cuda2_dalloc((void **)&d->planes, (size_t)d->nplanes * m4 * n4 * sizeof(int32_t)));
    MMP_TRY(ref_cuda2_dalloc((void **)&d->res, (size_t)t.n * m * n));
    MMP_TRY(ref_cuda2_dalloc((void **)&d->bad, sizeof(int)));
    /* the kernels write every residue of every entry: only padding needs zeros */
    if (kp != k || m4 != m) MMP_CUDA_CHECK(cudaMemset(d->qa, 0, (size_t)m4 * ld));
    if (kp != k || n4 != n) MMP_CUDA_CHECK(cudaMemset(d->qb, 0, (size_t)n4 * ld));
    MMP_CUDA_CHECK(cudaMemset(d->bad, 0, sizeof(int)));
    v2_crt_operand_kernel<<<grid2(k, m, 1024), CRT_THREADS>>>(d->qa, a64, ea, m, k, ld, pl->sa, kp, t, d->bad);
    v2_crt_operand_kernel<<<grid2(k, n, 1024), CRT_THREADS>>>(d->qb, b64, fb, n, k, ld, pl->sb, kp, t, d->bad);
    MMP_TRY(timed_sync(&r->split.slice_s, t0));
    int bad = 0;
    MMP_CUDA_CHECK(cudaMemcpy(&bad, d->bad, sizeof bad, cudaMemcpyDeviceToHost));
    if (bad) return MMP_ERR(MMP_STATUS_INTERNAL, "reference: an int8 slice outside [-128, 127]");
    r->crt = t.n;
    return MMP_STATUS_OK;
}

extern "C" mmp_status ref_cuda2_crt_products(mmp_ref_result *r, ref_imma_dev *d, const ref_v2_plan *pl, int64_t m,
                                             int64_t n, void *blas)
{
    ref_crt_table t;
    if (!ref_crt_table_init(&t, pl->sa, pl->sb, pl->kp))
        return MMP_ERR(MMP_STATUS_INTERNAL, "reference: no residue table for %dx%d slices", pl->sa, pl->sb);
    int64_t kp = pl->kp, ld = t.n * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n);
    size_t plane = (size_t)m4 * n4;
    const int32_t one = 1, zero = 0;
    for (int q0 = 0; q0 < t.n; q0 += d->nplanes) {
        int cnt = t.n - q0 < d->nplanes ? t.n - q0 : d->nplanes;
        double t0 = mmp_clock_now();
        for (int c = 0; c < cnt; c++) {
            int q = q0 + c;
            cublasStatus_t cs = cublasGemmEx((cublasHandle_t)blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n4, (int)m4, (int)kp,
                                             &one, d->qb + q * kp, CUDA_R_8I, (int)ld, d->qa + q * kp, CUDA_R_8I,
                                             (int)ld, &zero, d->planes + c * plane, CUDA_R_32I, (int)n4,
                                             CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
            if (cs != CUBLAS_STATUS_SUCCESS)
                return MMP_ERR(MMP_STATUS_CUDA, "reference: cublasGemmEx int8 %lldx%lldx%lld (modulus %d): status %d",
                               (long long)n4, (long long)m4, (long long)kp, t.m[q], (int)cs);
            r->n_gemms++;
        }
        MMP_TRY(timed_sync(&r->time.gemm_s, t0));
        t0 = mmp_clock_now();
        for (int c = 0; c < cnt; c++) {
            int q = q0 + c;
            v2_crt_reduce_kernel<<<grid2(n, m, 65535), CRT_THREADS>>>(d->res + (size_t)q * m * n, d->planes + c * plane, m, n,
                                                               n4, (uint32_t)t.m[q], t.magic[q], (uint32_t)t.c16[q],
                                                               (uint32_t)t.y[q]);
        }
        MMP_TRY(timed_sync(&r->split.accumulate_s, t0));
    }
    /* the residues and the int32 planes go before the state comes (the device's peak) */
    ref_cuda2_dfree(d->qa); ref_cuda2_dfree(d->qb); ref_cuda2_dfree(d->planes);
    d->qa = d->qb = NULL;
    d->planes = NULL;
    return MMP_STATUS_OK;
}

extern "C" mmp_status ref_cuda2_crt_accumulate(mmp_ref_result *r, ref_imma_dev *d, double *h, double *l, double *err,
                                               const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m,
                                               int64_t n)
{
    ref_crt_table t;
    if (!ref_crt_table_init(&t, pl->sa, pl->sb, pl->kp))
        return MMP_ERR(MMP_STATUS_INTERNAL, "reference: no residue table for %dx%d slices", pl->sa, pl->sb);
    double t0 = mmp_clock_now();
    v2_crt_accumulate_kernel<<<(unsigned)((m * n + CRT_THREADS - 1) / CRT_THREADS), CRT_THREADS>>>(h, l, err, d->res, t, ea,
                                                                                               fb, m, n);
    return timed_sync(&r->split.accumulate_s, t0);
}
