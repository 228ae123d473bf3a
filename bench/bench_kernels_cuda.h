/* bench/bench_kernels_cuda.h — the device half of bench_kernels.c, run only inside the child
 * process of one row: buffers, random operands, the launch loop timed with CUDA events, and
 * the cuBLAS / cuBLASLt launches of the cuBLAS rows. Included once, by bench_kernels.c.
 *
 *   bench_cuda_row(&res, &row, &opts);   // fills res.ms[s] (median ms) or res.why[s]
 */
#ifndef MMAPROBE_BENCH_KERNELS_CUDA_H
#define MMAPROBE_BENCH_KERNELS_CUDA_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

typedef struct dev_state {
    cudaStream_t stream;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    void *lt_ws;
    size_t lt_ws_size;
    int cc;
    char note[WHY];
} dev_state;

/* Random operand bits of magnitude 1/4..1 (finite in every format): core's Philox stream. */
static void fill_random(void *buf, size_t count, int f, mmp_rng_stream *state)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < count; i++) {
        uint64_t x = mmp_rng_stream_u64(state);
        uint32_t r = (uint32_t)(x >> 16), s = r & 1u, e = (r >> 1) & 1u, m = r >> 2;
        switch (f) {
        case MMP_FORMAT_FP16: ((uint16_t *)b)[i] = (uint16_t)(s << 15 | (13 + e) << 10 | (m & 0x3ff)); break;
        case MMP_FORMAT_BF16: ((uint16_t *)b)[i] = (uint16_t)(s << 15 | (125 + e) << 7 | (m & 0x7f)); break;
        case MMP_FORMAT_E4M3: b[i] = (unsigned char)(s << 7 | (5 + e) << 3 | (m & 7)); break;
        case MMP_FORMAT_E5M2: b[i] = (unsigned char)(s << 7 | (13 + e) << 2 | (m & 3)); break;
        case MMP_FORMAT_FP32:
        case MMP_FORMAT_TF32: ((uint32_t *)b)[i] = s << 31 | (125 + e) << 23 | (m & 0x7fe000u); break;
        case MMP_FORMAT_FP64: ((double *)b)[i] = (s ? -1.0 : 1.0) * (0.25 + (m & 0xffff) / 87381.0); break;
        case MMP_FORMAT_INT32: ((int32_t *)b)[i] = (int32_t)(m % 17) - 8; break;
        case MMP_FORMAT_INT8: b[i] = (unsigned char)(int8_t)((int)(m % 17) - 8); break;
        case MMP_FORMAT_UINT8: b[i] = (unsigned char)(m % 16); break;
        default: b[i] = (unsigned char)m; break;     /* int4/uint4: count is bytes, any nibbles */
        }
    }
}

static size_t elems_bytes(int f, long long count) { return mmp_format_bytes((mmp_format)f, (size_t)count); }

static int cublas_types(int f, cudaDataType_t *t)
{
    switch (f) {
    case MMP_FORMAT_FP16: *t = CUDA_R_16F; return 0;
    case MMP_FORMAT_BF16: *t = CUDA_R_16BF; return 0;
    case MMP_FORMAT_FP32: case MMP_FORMAT_TF32: *t = CUDA_R_32F; return 0;
    case MMP_FORMAT_FP64: *t = CUDA_R_64F; return 0;
    case MMP_FORMAT_INT8: *t = CUDA_R_8I; return 0;
    case MMP_FORMAT_INT32: *t = CUDA_R_32I; return 0;
    case MMP_FORMAT_E4M3: *t = CUDA_R_8F_E4M3; return 0;
    case MMP_FORMAT_E5M2: *t = CUDA_R_8F_E5M2; return 0;
    default: return -1;
    }
}

/* D (row-major M x N) = A (row-major) * B (column-major), as the column-major cuBLAS product
 * D^T = B^T A^T: op(B) = T (ld K), op(A) = N (ld K), D^T ld N ("TN"). */
static int cublas_launch(dev_state *ds, const row *r, const void *A, const void *B, void *D, long long N, char *why)
{
    cudaDataType_t ta, td;
    if (cublas_types(r->a, &ta) || cublas_types(r->d, &td)) {
        snprintf(why, WHY, "no cuBLAS path for %s -> %s", fmt(r->a), fmt(r->d));
        return -1;
    }
    const float one = 1.0f, zero = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    const int32_t onei = 1, zeroi = 0;
    const uint16_t oneh = 0x3c00, zeroh = 0;
    int n = (int)N;
    if (r->a == MMP_FORMAT_E4M3 || r->a == MMP_FORMAT_E5M2) {   /* FP8: cuBLASLt only */
        /* The requested output first; if cuBLASLt has no such FP8 matmul, BF16 output (same
         * FP8 inputs and FP32 accumulation; the row's note says so). */
        cudaDataType_t outs[2] = {td, CUDA_R_16BF};
        for (int t = 0; t < 2; t++) {
            cublasLtMatmulDesc_t op = NULL;
            cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
            cublasLtMatmulPreference_t pref = NULL;
            cublasLtMatmulHeuristicResult_t h;
            int found = 0, ok = 0;
            cublasOperation_t tr = CUBLAS_OP_T;
            if (cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatrixLayoutCreate(&la, ta, N, N, N) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatrixLayoutCreate(&lb, ta, N, N, N) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatrixLayoutCreate(&ld, outs[t], N, N, N) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ds->lt_ws_size,
                                                     sizeof ds->lt_ws_size) == CUBLAS_STATUS_SUCCESS &&
                cublasLtMatmulAlgoGetHeuristic(ds->lt, op, la, lb, ld, ld, pref, 1, &h, &found) == CUBLAS_STATUS_SUCCESS &&
                found > 0)
                ok = cublasLtMatmul(ds->lt, op, &one, B, la, A, lb, &zero, D, ld, D, ld, &h.algo, ds->lt_ws,
                                    ds->lt_ws_size, ds->stream) == CUBLAS_STATUS_SUCCESS;
            if (pref) cublasLtMatmulPreferenceDestroy(pref);
            if (ld) cublasLtMatrixLayoutDestroy(ld);
            if (lb) cublasLtMatrixLayoutDestroy(lb);
            if (la) cublasLtMatrixLayoutDestroy(la);
            if (op) cublasLtMatmulDescDestroy(op);
            if (ok) {
                if (t == 1) snprintf(ds->note, sizeof ds->note, "cuBLASLt has no %s -> %s matmul: timed with bf16 output",
                                     fmt(r->a), fmt(r->d));
                return 0;
            }
        }
        snprintf(why, WHY, "cuBLASLt has no %s -> %s (or bf16) matmul here", fmt(r->a), fmt(r->d));
        return -1;
    }
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    const void *alpha = &one, *beta = &zero;
    if (r->a == MMP_FORMAT_INT8) { ct = CUBLAS_COMPUTE_32I; alpha = &onei; beta = &zeroi; }
    else if (r->a == MMP_FORMAT_FP64) { ct = CUBLAS_COMPUTE_64F; alpha = &oned; beta = &zerod; }
    else if (r->acc == MMP_FORMAT_FP16) { ct = CUBLAS_COMPUTE_16F; alpha = &oneh; beta = &zeroh; }
    else if (r->mul == MMP_FORMAT_TF32 || r->a == MMP_FORMAT_TF32) ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    cublasStatus_t s = cublasGemmEx(ds->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, alpha, B, ta, n, A, ta, n, beta, D,
                                    td, n, ct, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) snprintf(why, WHY, "cublasGemmEx(%s -> %s): status %d", fmt(r->a), fmt(r->d), (int)s);
    return s == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One row at one size. Returns 0 measured, 1 skipped (why), -1 error (why). */
static int bench_size(double *ms, int *sets_used, char *why, dev_state *ds, const row *r, long long N, const opts *o)
{
    const mmp_kernel_desc *k = r->k;
    if (k) {
        if (N % k->m_multiple || N % k->n_multiple || N % k->k_multiple) {
            snprintf(why, WHY, "N not a multiple of %d/%d/%d", k->m_multiple, k->n_multiple, k->k_multiple);
            return 1;
        }
        if (ds->cc < k->min_cc || (k->arch_specific && ds->cc != k->min_cc)) {
            snprintf(why, WHY, "needs sm_%d%s (device sm_%d)", k->min_cc, k->arch_specific ? "a" : "", ds->cc);
            return 1;
        }
    }
    size_t ab = elems_bytes(r->a, N * N), bb = elems_bytes(r->b, N * N), db = elems_bytes(r->d, N * N);
    int l2 = 0, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    size_t freeb = 0, totalb = 0;
    cudaMemGetInfo(&freeb, &totalb);
    long long sets = (3LL * l2 + (long long)(ab + bb) - 1) / (long long)(ab + bb) + 1;
    if (sets < 2) sets = 2;
    if (sets > 256) sets = 256;
    while (sets > 2 && (size_t)sets * (ab + bb) + db > freeb / 2) sets--;
    if ((size_t)sets * (ab + bb) + db > freeb) {
        snprintf(why, WHY, "needs %zu MB of device memory", ((size_t)sets * (ab + bb) + db) >> 20);
        return 1;
    }
    void *A = NULL, *B = NULL, *D = NULL, *ws = NULL;
    unsigned char *h = malloc(ab + bb);
    int rc = -1;
    size_t wsb = k && k->workspace_bytes ? k->workspace_bytes(N, N, N) : 0;
    if (!h || cudaMalloc(&A, ab * (size_t)sets) != cudaSuccess || cudaMalloc(&B, bb * (size_t)sets) != cudaSuccess ||
        cudaMalloc(&D, db) != cudaSuccess || (wsb && cudaMalloc(&ws, wsb) != cudaSuccess)) {
        snprintf(why, WHY, "allocation failed");
        goto done;
    }
    mmp_rng_stream seed;
    mmp_rng_stream_init(&seed, (uint64_t)N, mmp_rng_hash("bench_kernels"));
    fill_random(h, (r->a == MMP_FORMAT_INT4 || r->a == MMP_FORMAT_UINT4) ? ab : (size_t)(N * N), r->a, &seed);
    fill_random(h + ab, (r->b == MMP_FORMAT_INT4 || r->b == MMP_FORMAT_UINT4) ? bb : (size_t)(N * N), r->b, &seed);
    for (long long s = 0; s < sets; s++)
        if (cudaMemcpy((char *)A + s * ab, h, ab, cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaMemcpy((char *)B + s * bb, h + ab, bb, cudaMemcpyHostToDevice) != cudaSuccess) {
            snprintf(why, WHY, "cudaMemcpy failed");
            goto done;
        }
    mmp_kernel_args args;
    memset(&args, 0, sizeof args);
    args.m = args.n = args.k = N;
    if (k) {
        args.layout_a = mmp_layouts_has(k->layouts_a, MMP_LAYOUT_ROW) ? MMP_LAYOUT_ROW : MMP_LAYOUT_COL;
        args.layout_b = mmp_layouts_has(k->layouts_b, MMP_LAYOUT_COL) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
        args.layout_d = mmp_layouts_has(k->layouts_d, MMP_LAYOUT_ROW) ? MMP_LAYOUT_ROW : MMP_LAYOUT_COL;
    }
    args.layout_c = args.layout_d;
    args.lda = args.ldb = args.ldc = args.ldd = N;     /* square and tight: N either way */
    args.alpha = 1.0;
    args.beta = 0.0;
    args.d = D;
    args.workspace = ws;
    args.workspace_size = wsb;
    args.stream = ds->stream;
    const int total = o->warmup + o->reps;
    cudaEvent_t *ev = calloc(2 * (size_t)total, sizeof *ev);
    double *t = calloc((size_t)o->reps, sizeof *t);
    if (!ev || !t) { snprintf(why, WHY, "out of host memory"); free(ev); free(t); goto done; }
    int made = 0;
    for (; made < 2 * total; made++)
        if (cudaEventCreate(&ev[made]) != cudaSuccess) break;
    if (made < 2 * total) snprintf(why, WHY, "cudaEventCreate failed");
    for (int i = 0; made == 2 * total && i < total; i++) {
        long long s = i % sets;
        args.a = (char *)A + s * ab;
        args.b = (char *)B + s * bb;
        cudaEventRecord(ev[2 * i], ds->stream);
        int st = k ? k->run(&args) : cublas_launch(ds, r, args.a, args.b, D, N, why);
        cudaEventRecord(ev[2 * i + 1], ds->stream);
        if (k && st == MMP_KERNEL_UNSUPPORTED) { snprintf(why, WHY, "kernel: unsupported arguments"); rc = 1; break; }
        if (st != 0) {
            if (k) snprintf(why, WHY, "kernel returned %d", st);
            rc = k ? -1 : 1;
            break;
        }
        if (i == 0) {            /* a first launch that fails says so before we queue more */
            cudaError_t e = cudaStreamSynchronize(ds->stream);
            if (e != cudaSuccess) { snprintf(why, WHY, "CUDA: %s", cudaGetErrorString(e)); break; }
        }
        if (i + 1 == total) rc = 0;
    }
    cudaError_t e = cudaStreamSynchronize(ds->stream);
    if (rc == 0 && e != cudaSuccess) { snprintf(why, WHY, "CUDA: %s", cudaGetErrorString(e)); rc = -1; }
    for (int i = 0; rc == 0 && i < o->reps; i++) {
        float f = 0;
        cudaEventElapsedTime(&f, ev[2 * (o->warmup + i)], ev[2 * (o->warmup + i) + 1]);
        t[i] = f;
    }
    if (rc == 0) {
        qsort(t, (size_t)o->reps, sizeof *t, cmp_double);
        *ms = o->reps % 2 ? t[o->reps / 2] : 0.5 * (t[o->reps / 2 - 1] + t[o->reps / 2]);
        *sets_used = (int)sets;
    }
    for (int i = 0; i < made; i++) cudaEventDestroy(ev[i]);
    free(ev);
    free(t);
done:
    free(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(D);
    cudaFree(ws);
    return rc;
}

static void bench_cuda_row(result *res, const row *r, const opts *o)
{
    dev_state ds;
    memset(&ds, 0, sizeof ds);
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess ||
        cudaStreamCreate(&ds.stream) != cudaSuccess) {
        for (int s = 0; s < o->nsizes; s++) snprintf(res->why[s], WHY, "no CUDA device in the child");
        res->error = 1;
        return;
    }
    ds.cc = major * 10 + minor;
    if (!r->k) {
        ds.lt_ws_size = (size_t)32 << 20;
        if (cublasCreate(&ds.blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(ds.blas, ds.stream) != CUBLAS_STATUS_SUCCESS ||
            cublasLtCreate(&ds.lt) != CUBLAS_STATUS_SUCCESS || cudaMalloc(&ds.lt_ws, ds.lt_ws_size) != cudaSuccess) {
            for (int s = 0; s < o->nsizes; s++) snprintf(res->why[s], WHY, "cuBLAS initialisation failed");
            return;
        }
    }
    for (int s = 0; s < o->nsizes; s++) {
        int rc = bench_size(&res->ms[s], &res->sets[s], res->why[s], &ds, r, o->sizes[s], o);
        if (rc < 0) {
            res->error = 1;
            break;               /* a CUDA error may have poisoned the context: stop this row */
        }
    }
    snprintf(res->note, sizeof res->note, "%s", ds.note);
    if (ds.blas) cublasDestroy(ds.blas);
    if (ds.lt) cublasLtDestroy(ds.lt);
    cudaFree(ds.lt_ws);
    cudaStreamDestroy(ds.stream);
}

#endif
