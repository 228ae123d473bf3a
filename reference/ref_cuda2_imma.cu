/* ref_cuda2_imma.cu — the int8 route of the device reference, version 2 (ref_cuda2.cu's stages
 * 4 and 5 when the plan says int8): the Ozaki slices as int8 on integer tensor cores. Why each
 * step is exact is ref_plan.h's "Routes"; the per-element work is ref_v2.h's, which the host
 * model (ref_v2_host.c) runs on the CPU with the same layout, jobs and batches.
 *
 * Build: part of libmmp in CUDA builds, with -fmad=false (reference/CMakeLists.txt: ref_acc's
 *        TwoSums round every operation).
 * Run:   build/bench_reference --gpu (both routes: MMP_REF_IMMA=0|1, mmp_ref_options.imma).
 *
 *   slice    v2_slice8_kernel: each entry's slices (ref_split, the host's function) into int8
 *            planes, zero-padded: A row-major m4 x (sa kp), B column-major (sb kp) x n4 with its
 *            slices in reverse order, so that a level's pairs are one GEMM (ref_imma_job).
 *   GEMMs    cublasGemmEx int8 x int8 -> int32 (CUBLAS_COMPUTE_32I), "TN" as the integer
 *            tensor cores want it: row-major P (m4 x n4) = column-major P^T = Qb^T Qa^T; every
 *            leading dimension and offset is a multiple of 16 bytes.
 *   residues  with pl->crt the square's products go by residues instead (ref_cuda2_crt.cu: its
 *            slicing through ref_cuda2_imma_slice, its GEMMs and state through ref_cuda2.cu).
 *   accumulate  v2_accumulate8_kernel per REF_IMMA_BATCH planes: each level's int32 sums added
 *            in int64, scaled by 2^(E_i + F_j - 8 L) and ref_acc'ed into (h, l, err).
 * Memory at 8192^3 (S slices per operand): the int8 planes S x 64 MiB each, the int32 planes at
 * most REF_IMMA_BATCH x 256 MiB.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "ref_v2.h"

/* The int8 slices of `rows` contiguous vectors of length len into rows of ld entries. */
__global__ void v2_slice8_kernel(int8_t *q, const double *x, const int *e, int64_t rows, int64_t len, int64_t ld,
                                 int beta, int S, int64_t kp, int reversed, int *bad)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * len) return;
    int64_t r = i / len;
    if (!ref_v2_slice8_one(q + r * ld, x[i], e[r], beta, S, kp, reversed, i % len)) atomicOr(bad, 1);
}

/* Steps 4 and 6 for one batch of int32 planes (ref_v2_accumulate_imma_one). */
__global__ void v2_accumulate8_kernel(double *h, double *l, double *err, ref_imma_batch b, const int *ea,
                                      const int *fb, int64_t m, int64_t n)
{
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < m * n) ref_v2_accumulate_imma_one(h, l, err, &b, ea, fb, n, x);
}

static unsigned blocks(int64_t count) { return (unsigned)((count + 255) / 256); }

static mmp_status timed_sync(double *acc, double t0)
{
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    *acc += mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}

extern "C" void ref_cuda2_imma_free(ref_imma_dev *d)
{
    ref_cuda2_dfree(d->qa); ref_cuda2_dfree(d->qb); ref_cuda2_dfree(d->planes); ref_cuda2_dfree(d->bad);
    ref_cuda2_dfree(d->res);
    memset(d, 0, sizeof *d);
}

extern "C" mmp_status ref_cuda2_imma_slice(mmp_ref_result *r, ref_imma_dev *d, const double *a64, const double *b64,
                                           const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n,
                                           int64_t k)
{
    if (pl->crt) return ref_cuda2_crt_slice(r, d, a64, b64, ea, fb, pl, m, n, k);
    int64_t kp = pl->kp, lda = pl->sa * kp, ldb = pl->sb * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n);
    int nj = ref_imma_jobs(NULL, 0, pl);
    d->nplanes = nj < REF_IMMA_BATCH ? nj : REF_IMMA_BATCH;
    double t0 = mmp_clock_now();
    MMP_TRY(ref_cuda2_dalloc((void **)&d->qa, (size_t)m4 * lda));   /* the reference's pool (ref_cuda2_mem.cu) */
    MMP_TRY(ref_cuda2_dalloc((void **)&d->qb, (size_t)n4 * ldb));
    MMP_TRY(ref_cuda2_dalloc((void **)&d->planes, (size_t)(d->nplanes ? d->nplanes : 1) * m4 * n4 * sizeof(int32_t)));
    MMP_TRY(ref_cuda2_dalloc((void **)&d->bad, sizeof(int)));
    /* the slice kernels write every slot of every vector: only padding (k < kp, m < m4, n < n4)
     * needs zeros */
    if (kp != k || m4 != m) MMP_CUDA_CHECK(cudaMemset(d->qa, 0, (size_t)m4 * lda));
    if (kp != k || n4 != n) MMP_CUDA_CHECK(cudaMemset(d->qb, 0, (size_t)n4 * ldb));
    MMP_CUDA_CHECK(cudaMemset(d->bad, 0, sizeof(int)));
    v2_slice8_kernel<<<blocks(m * k), 256>>>(d->qa, a64, ea, m, k, lda, pl->beta, pl->sa, kp, 0, d->bad);
    v2_slice8_kernel<<<blocks(n * k), 256>>>(d->qb, b64, fb, n, k, ldb, pl->beta, pl->sb, kp, 1, d->bad);
    MMP_TRY(timed_sync(&r->split.slice_s, t0));
    int bad = 0;
    MMP_CUDA_CHECK(cudaMemcpy(&bad, d->bad, sizeof bad, cudaMemcpyDeviceToHost));
    if (bad) return MMP_ERR(MMP_STATUS_INTERNAL, "reference: an int8 slice outside [-128, 127]");
    return MMP_STATUS_OK;
}

extern "C" mmp_status ref_cuda2_imma_products(mmp_ref_result *r, ref_imma_dev *d, double *h, double *l, double *err,
                                              const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m,
                                              int64_t n, void *blas)
{
    int64_t kp = pl->kp, lda = pl->sa * kp, ldb = pl->sb * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n);
    size_t plane = (size_t)m4 * n4;
    int nj = ref_imma_jobs(NULL, 0, pl);
    ref_imma_job *jobs = (ref_imma_job *)malloc(((size_t)nj + 1) * sizeof *jobs);
    if (!jobs) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (int8 jobs)");
    ref_imma_jobs(jobs, nj, pl);
    const int32_t one = 1, zero = 0;
    mmp_status st = MMP_STATUS_OK;
    for (int j0 = 0; st == MMP_STATUS_OK && j0 < nj; j0 += REF_IMMA_BATCH) {
        ref_imma_batch b;
        memset(&b, 0, sizeof b);
        b.beta = pl->beta;
        b.ld = n4;
        b.first = j0 == 0;   /* the state was not cleared: the first batch writes it */
        double t0 = mmp_clock_now();
        for (int q = 0; q < REF_IMMA_BATCH && j0 + q < nj; q++) {
            int64_t oa, ob, kk;
            ref_imma_job_span(&oa, &ob, &kk, &jobs[j0 + q], pl->sb, kp);
            int32_t *pq = d->planes + q * plane;
            cublasStatus_t cs = cublasGemmEx((cublasHandle_t)blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n4, (int)m4, (int)kk,
                                             &one, d->qb + ob, CUDA_R_8I, (int)ldb, d->qa + oa, CUDA_R_8I, (int)lda,
                                             &zero, pq, CUDA_R_32I, (int)n4, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
            if (cs != CUBLAS_STATUS_SUCCESS) {
                st = MMP_ERR(MMP_STATUS_CUDA, "reference: cublasGemmEx int8 %lldx%lldx%lld: status %d", (long long)n4,
                             (long long)m4, (long long)kk, (int)cs);
                break;
            }
            b.plane[q] = pq;
            b.level[q] = jobs[j0 + q].level;
            b.count++;
            r->n_gemms++;
        }
        if (st != MMP_STATUS_OK) break;
        st = timed_sync(&r->time.gemm_s, t0);
        if (st != MMP_STATUS_OK) break;
        t0 = mmp_clock_now();
        v2_accumulate8_kernel<<<blocks(m * n), 256>>>(h, l, err, b, ea, fb, m, n);
        st = timed_sync(&r->split.accumulate_s, t0);
    }
    free(jobs);
    return st;
}
