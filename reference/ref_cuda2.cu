/* ref_cuda2.cu — the certified reference on the device, version 2: every O(n^2) stage on the
 * device, so that the slice DGEMMs dominate. The scheme and its proof are ref_certified.c's
 * (steps 1-7 in its header); what differs is only where each step runs.
 *
 * Build: part of libmmp in CUDA builds; kernels in ref_cuda2_kern.cuh. This file and its
 *        kernels are compiled with -fmad=false (reference/CMakeLists.txt): a * b + c is two
 *        roundings, as on the host, which TwoProd/TwoSum (ref_acc, ref_finish) rely on.
 * Run:   build/bench_reference --gpu --sizes 8192 (scripts/device/20-reference.sh);
 *        MMP_REF_DEVICE_VERSION=1 or mmp_ref_options.device_version = 1 runs version 1;
 *        MMP_REF_TRACE=1 prints the parts of each stage (kernels, allocations, host planning).
 *
 * Version 1 (ref_cuda.cu) loads and splits on the host, uploads binary64, downloads the
 * (h, l, err) state and decides on host threads: O(n^2) host work that, at large n, rivals the
 * DGEMMs themselves.
 * Version 2 (this file), stage by stage (r->split names each time):
 *   1. upload  A, B (and C when beta != 0) in their NATIVE formats and layouts (fp32 8192^2:
 *              256 MB each instead of 512 MB of binary64); they stay resident to the end.
 *   2. decode  A -> a64 (row-major M x K), B -> b64 (column-major): exact (mmp_format_hd_load).
 *   3. prepare per row of A / column of B (v2_stats_kernel, one block each): ref_plan.h's
 *              statistics (scale exponent, non-finite count, sum |.|, and for 1..12 slices the
 *              sums of the slices and the count and largest of the remainders), and plain
 *              double estimates of 2048 sampled elements (v2_sample_kernel). These O(n) vectors
 *              come to the host, which makes the plan (ref_plan_make, as the CPU path does): the
 *              square by version 1's rules (sparse remainders exact, or bounded), or in bound
 *              mode a triangle of slice pairs when the samples say it certifies more for its
 *              DGEMMs (wide data: 4 x 4 slices, 10 of their 16 pairs). Sparse: ordered remainder
 *              lists (v2_list_kernel). Bound: the per-vector maxima and sums of ref_drop_bound
 *              (v2_vectors_kernel, from the statistics still on the device).
 *              The NaN/Inf positions of every row and column (v2_list_kernel): an element
 *              whose row or column holds one is decided from those products' classes alone.
 *              Float inputs: the zero and sign masks of every row and column (v2_mask_kernel),
 *              which sign the exact zero sums in the finish (ref_v2_zero_neg).
 *   4. slice   step 2 on the device (ref_split, the host's function); a64, b64 are then freed.
 *   5. DGEMMs  one cublasDgemm per slice pair, exact (step 3), largest weights first, each
 *              followed by v2_accumulate_kernel (steps 4, 6: ref_acc into (h, l, err)).
 *   4-5 int8   or, when the plan takes the int8 route (ref_plan.h, Routes: 8-bit slices; the
 *              cost model, mmp_ref_options.imma, MMP_REF_IMMA), int8 slice planes and one int8
 *              cublasGemmEx per level of pairs, accumulated a batch of int32 planes at a time
 *              (ref_cuda2_imma.cu; r->imma = 1). Stages 6b and 7 then allocate their binary64
 *              planes. A square may instead take one int8 GEMM per modulus (ref_crt.h,
 *              ref_cuda2_crt.cu; r->crt moduli): its byte planes are made before the state.
 *   6. finish  v2_finish_kernel per element: the sparse remainder terms R = rA (b - rB) + a rB
 *              with exact TwoProds (b - rB is b truncated to the slices' grid: a double, and the
 *              subtraction is exact), or the bound; alpha and beta C_ij by TwoProd (ref_finish);
 *              the decision ref_decide_hd (ref_round.h: the very code the CPU path runs) gives
 *              d64 = RN64(X) and dout = RN_fmt(X) or marks the element undecided; an exact zero
 *              sum takes its sign from the masks (ref_v2_zero_neg, ref_v2_dot_decide). d64 and dout
 *              overwrite h and l in place; undecided indices go to a list (first 2^20; beyond
 *              that the err array holds every flag).
 *   6b. dot    when elements stay open: a64, b64 decoded again into the slice planes, and each
 *              open element's dot product recomputed as an error-tracked double-double sum in
 *              k order, non-finite and exactly-zero sums by class and sign (ref_v2.h): one warp
 *              per listed element when they are few (v2_dot_list_kernel), else the tiles of D
 *              holding one (v2_dot_kernel); bf16 planes when every value of both formats is a bf16
 *              (bf16, fp8, int8), else float or binary64. The open ones are listed again (split.dot_s,
 *              split.n_dot; MMP_REF_DOT=0 skips it).
 *   7. |A||B|  (want_absbound) |A|, |B| decoded into the freed slice planes, one more DGEMM,
 *              the bound formula in place (ref_absbound_one, shared with the CPU path).
 *   --- results resident on the device: split.resident_s (stages 1-7, without split.setup_s:
 *       the CUDA context, the cuBLAS handle and the first allocations, a once-per-process cost
 *       in the runner's child) ---
 *   8. download d64, dout (and absbound) into the result arrays (their pages first touched by
 *              host threads while the device computes: ref_prefault_start), pinned with cudaHostRegister
 *              for the copy (split.download_s; MMP_REF_PIN=0: pageable copies); the undecided
 *              list (usually empty). Uploads are pinned the same way.
 *   9. exact   each element still open from the native host operands (its row of A and column
 *              of B only: ref_mpfr_native_list): the exact evaluator (n_exact), MPFR for what it
 *              declines (n_mpfr). Nothing is left undecided. When the operands are the caller's
 *              device copies and its host copies are stale, only those rows and columns come
 *              back, as binary64 (ref_cuda2_open.cu).
 * Device arrays come from the reference's own stream-ordered pool, kept between calls
 * (ref_cuda2_mem.cu: no cudaMalloc/cudaFree in a call after the first of its size); the
 * statistics come back into pinned host buffers.
 * Device memory at 8192^3, S slices of each operand: native A, B + a64, b64 (1 GB, freed after
 * slicing) + slices 2 S x 0.5 GB + product and state 2 GB: bf16 uniform (1 x 1) about 3 GB,
 * fp32 (2 x 2) 4 GB, wide data (4 x 4) 6 GB.
 * CUDA is first touched here: call it only in a process that does not fork afterwards.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "ref_cuda2_kern.cuh"

enum { UNDECIDED_CAP = 1 << 20 };

typedef struct {
    void *na, *nb, *nc;                     /* native operands */
    double *a64, *b64, *qa, *qb, *p, *h, *l, *err;
    int *ea, *fb;                           /* scale exponents */
    unsigned char *bada, *badb;
    ref_vstats *va, *vb;                    /* statistics per row of A / column of B */
    ref_sample *smp;
    double *ra_max, *a_sum, *rb_max, *b_sum, *a_ss, *b_rl;
    int64_t *ra_ptr, *rb_ptr, *n_und, *und, *nfa_ptr, *nfb_ptr;
    unsigned long long *n_dot;              /* elements the dot stage decided */
    int *ra_k, *rb_k, *nfa_k, *nfb_k;
    double *ra_v, *rb_v;
    uint64_t *za, *sa, *zb, *sb;            /* zero and sign masks (ref_v2_zero_neg) */
    cublasHandle_t blas;
    ref_imma_dev im;                        /* the int8 route's planes */
    ref_mem_mark mem;                       /* device memory in use (ref_cuda2_mem.cu) */
    int borrowed;                           /* na, nb, nc are the caller's (options.dev_*) */
    int keep;                               /* keep_device: h, l, p outlive the call (cudaMalloc) */
} v2_dev;

typedef struct {   /* host copies of the O(n) vectors */
    ref_vstats *va, *vb;                    /* pinned (ref_cuda2_pinned slots 0, 1) when va_pin, vb_pin */
    int va_pin, vb_pin;
    int64_t *ra_ptr, *rb_ptr, *nfa_ptr, *nfb_ptr;
} v2_host;

static void mem_sample(v2_dev *g) { ref_cuda2_mem_sample(&g->mem); }

/* the pool's arrays (ref_cuda2_mem.cu); OFREE: h, l, p, plain cudaMalloc under keep_device */
#define DFREE(p) do { ref_cuda2_dfree(p); (p) = NULL; } while (0)
#define OFREE(p) do { if (g->keep) cudaFree(p); else ref_cuda2_dfree(p); (p) = NULL; } while (0)

static void dev_free(v2_dev *g)
{
    if (g->borrowed) g->na = g->nb = g->nc = NULL;
    DFREE(g->na); DFREE(g->nb); DFREE(g->nc); DFREE(g->a64); DFREE(g->b64); DFREE(g->qa); DFREE(g->qb);
    OFREE(g->p); OFREE(g->h); OFREE(g->l); DFREE(g->err); DFREE(g->ea); DFREE(g->fb); DFREE(g->bada);
    DFREE(g->badb); DFREE(g->va); DFREE(g->vb); DFREE(g->smp); DFREE(g->ra_max); DFREE(g->a_sum);
    DFREE(g->rb_max); DFREE(g->b_sum); DFREE(g->a_ss); DFREE(g->b_rl); DFREE(g->ra_ptr); DFREE(g->rb_ptr);
    DFREE(g->n_und); DFREE(g->und); DFREE(g->nfa_ptr); DFREE(g->nfb_ptr); DFREE(g->n_dot); DFREE(g->ra_k);
    DFREE(g->rb_k); DFREE(g->nfa_k); DFREE(g->nfb_k); DFREE(g->ra_v); DFREE(g->rb_v);
    DFREE(g->za); DFREE(g->sa); DFREE(g->zb); DFREE(g->sb);
    ref_cuda2_imma_free(&g->im);
    if (g->blas) cublasDestroy(g->blas);
    g->blas = NULL;
}

static void host_free(v2_host *h)
{
    if (h->va_pin) ref_cuda2_pinned_release(0);
    else free(h->va);
    if (h->vb_pin) ref_cuda2_pinned_release(1);
    else free(h->vb);
    free(h->ra_ptr); free(h->rb_ptr); free(h->nfa_ptr); free(h->nfb_ptr);
    memset(h, 0, sizeof *h);
}

template <typename T> static mmp_status dalloc(v2_dev *g, T **p, size_t count)
{
    (void)g;   /* the pool's high watermark counts it (ref_cuda2_mem_end): no sample needed */
    MMP_TRY(ref_cuda2_dalloc((void **)p, (count ? count : 1) * sizeof(T)));
    return MMP_STATUS_OK;
}

/* h, l and p: the results, which keep_device hands to the caller (freed with cudaFree) */
static mmp_status oalloc(v2_dev *g, double **p, size_t count)
{
    if (!g->keep) return dalloc(g, p, count);
    MMP_CUDA_CHECK(cudaMalloc((void **)p, (count ? count : 1) * sizeof(double)));
    mem_sample(g);
    return MMP_STATUS_OK;
}

template <typename T> static mmp_status halloc(T **p, size_t count)
{
    *p = (T *)calloc(count ? count : 1, sizeof(T));
    if (!*p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate %zu host elements", count);
    return MMP_STATUS_OK;
}

template <typename T> static mmp_status down(T *h, const T *d, size_t count)
{
    MMP_CUDA_CHECK(cudaMemcpy(h, d, count * sizeof(T), cudaMemcpyDeviceToHost));
    return MMP_STATUS_OK;
}

template <typename T> static mmp_status up(T *d, const T *h, size_t count)
{
    MMP_CUDA_CHECK(cudaMemcpy(d, h, count * sizeof(T), cudaMemcpyHostToDevice));
    return MMP_STATUS_OK;
}

static unsigned blocks(int64_t count) { return (unsigned)((count + 255) / 256); }

/* MMP_REF_TRACE=1: each mark waits for the device and prints the time since the previous mark
 * to stderr ("ref v2 trace: what ms"), so that a stage's parts (kernels, allocations, host
 * planning) can be told apart on the device. Off: nothing, no synchronisation. */
static void trace(const char *what)
{
    static int on = -1;
    static double last;
    if (on < 0) { const char *e = getenv("MMP_REF_TRACE"); on = e && *e && strcmp(e, "0") != 0; }
    if (!on) return;
    cudaDeviceSynchronize();
    double now = mmp_clock_now();
    if (what) fprintf(stderr, "ref v2 trace: %-16s %8.3f ms\n", what, (now - last) * 1e3);
    last = now;
}

static mmp_status sync_add(double *acc, double t0)
{
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    *acc += mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}

/* A large host <-> device copy, the host side pinned for its duration (cudaHostRegister) when
 * the driver allows and MMP_REF_PIN is not 0: a DMA at the link's speed instead of the driver's
 * staged pageable copy. Memory already pinned (cudaMallocHost, registered) fails to register
 * and is copied as it is. */
static mmp_status copy_big(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    static int pin = -1;
    if (pin < 0) { const char *e = getenv("MMP_REF_PIN"); pin = !(e && *e == '0'); }
    void *host = kind == cudaMemcpyDeviceToHost ? dst : (void *)src;
    int pinned = 0;
    if (pin && bytes >= ((size_t)1 << 22)) {
        pinned = cudaHostRegister(host, bytes, cudaHostRegisterDefault) == cudaSuccess;
        if (!pinned) (void)cudaGetLastError();   /* pageable copy instead */
    }
    cudaError_t e = cudaMemcpy(dst, src, bytes, kind);
    if (pinned) cudaHostUnregister(host);
    MMP_CUDA_CHECK(e);
    return MMP_STATUS_OK;
}

static mmp_status download_big(void *host, const void *dev, size_t bytes)
{
    return copy_big(host, dev, bytes, cudaMemcpyDeviceToHost);
}


static size_t native_bytes(mmp_format f, mmp_layout l, int64_t ld, int64_t rows, int64_t cols)
{
    return mmp_format_bytes(f, mmp_gemm_span(l, ld, rows, cols));
}

/* The NaN/Inf positions of `rows` vectors of x (contiguous, length len) as CSR lists. */
static mmp_status nonfinite_lists(v2_dev *g, int64_t **dptr, int **dk, int64_t **hptr, const ref_vstats *v,
                                  const double *x, int64_t rows, int64_t len)
{
    MMP_TRY(halloc(hptr, rows + 1));
    for (int64_t r = 0; r < rows; r++) (*hptr)[r + 1] = (*hptr)[r] + v[r].n_bad;
    MMP_TRY(dalloc(g, dptr, rows + 1));
    MMP_TRY(dalloc(g, dk, (size_t)(*hptr)[rows]));
    MMP_TRY(up(*dptr, *hptr, rows + 1));
    if ((*hptr)[rows]) v2_list_kernel<<<(unsigned)rows, 256>>>(x, len, NULL, 0, 0, *dptr, *dk, NULL);
    MMP_CUDA_CHECK(cudaGetLastError());
    return MMP_STATUS_OK;
}

/* Stage 3: the statistics on the device, the plan on the host (ref_plan.h: the square by
 * version 1's rules, or a triangle, weighed on sampled elements), then the remainder lists
 * (sparse) or the bound's vectors, and the NaN/Inf lists. */
static mmp_status prepare(mmp_ref_result *r, v2_dev *g, v2_host *hv, const mmp_gemm *gm, const mmp_ref_options *o,
                          ref_v2_plan *pl)
{
    int64_t m = gm->m, n = gm->n, k = gm->k;
    int beta, smax_a, smax_b, imma = ref_plan_route(gm, o);
    ref_slicing_route(&beta, &smax_a, &smax_b, k, ref_format_bits(gm->a), ref_format_bits(gm->b), o->slices, imma);
    MMP_TRY(dalloc(g, &g->ea, m)); MMP_TRY(dalloc(g, &g->fb, n)); MMP_TRY(dalloc(g, &g->bada, m));
    MMP_TRY(dalloc(g, &g->badb, n)); MMP_TRY(dalloc(g, &g->va, m)); MMP_TRY(dalloc(g, &g->vb, n));
    trace("prepare allocs");
    v2_stats_kernel<<<(unsigned)m, V2_STATS_THREADS>>>(g->a64, k, beta, g->va, g->ea, g->bada);
    v2_stats_kernel<<<(unsigned)n, V2_STATS_THREADS>>>(g->b64, k, beta, g->vb, g->fb, g->badb);
    MMP_CUDA_CHECK(cudaGetLastError());
    trace("stats kernels");
    ref_sample smp[REF_NSAMPLE];
    int ns = ref_plan_samples(smp, m, n);
    MMP_TRY(dalloc(g, &g->smp, ns));
    MMP_TRY(up(g->smp, smp, ns));
    v2_sample_kernel<<<(unsigned)((ns * 32 + 255) / 256), 256>>>(g->smp, ns, g->a64, g->b64, k);
    MMP_CUDA_CHECK(cudaGetLastError());
    trace("sample kernel");
    hv->va = (ref_vstats *)ref_cuda2_pinned(0, (size_t)m * sizeof(ref_vstats));   /* a DMA, not a staged copy */
    hv->vb = (ref_vstats *)ref_cuda2_pinned(1, (size_t)n * sizeof(ref_vstats));
    hv->va_pin = hv->va != NULL; hv->vb_pin = hv->vb != NULL;
    if (!hv->va) MMP_TRY(halloc(&hv->va, m));
    if (!hv->vb) MMP_TRY(halloc(&hv->vb, n));
    MMP_TRY(down(hv->va, g->va, m)); MMP_TRY(down(hv->vb, g->vb, n)); MMP_TRY(down(smp, g->smp, ns));
    trace("stats download");
    ref_plan_make_route(pl, gm, o, hv->va, hv->vb, smp, ns, REF_DEVICE_W_DOT, imma);
    r->imma = pl->imma;
    r->slices_a = pl->sa; r->slices_b = pl->sb; r->slice_bits = pl->beta; r->slice_levels = pl->levels;
    r->split.n_remainders = pl->nnz_a + pl->nnz_b;
    r->split.sparse = pl->sparse;
    trace("plan (host)");
    MMP_TRY(nonfinite_lists(g, &g->nfa_ptr, &g->nfa_k, &hv->nfa_ptr, hv->va, g->a64, m, k));
    MMP_TRY(nonfinite_lists(g, &g->nfb_ptr, &g->nfb_k, &hv->nfb_ptr, hv->vb, g->b64, n, k));
    trace("nonfinite lists");
    if (ref_v2_zero_mode(gm) == REF_V2_ZERO_MASK) {   /* the masks that sign exact zero sums in the finish */
        int64_t kw = (k + 63) / 64;
        MMP_TRY(dalloc(g, &g->za, (size_t)(m * kw))); MMP_TRY(dalloc(g, &g->sa, (size_t)(m * kw)));
        MMP_TRY(dalloc(g, &g->zb, (size_t)(n * kw))); MMP_TRY(dalloc(g, &g->sb, (size_t)(n * kw)));
        if (m * kw) v2_mask_kernel<<<blocks(m * kw * 32), 256>>>(g->za, g->sa, g->a64, m, k, kw);   /* a warp a word */
        if (n * kw) v2_mask_kernel<<<blocks(n * kw * 32), 256>>>(g->zb, g->sb, g->b64, n, k, kw);
        MMP_CUDA_CHECK(cudaGetLastError());
        trace("zero masks");
    }
    if (pl->sparse) {   /* list offsets from the counts; the lists themselves on the device */
        MMP_TRY(halloc(&hv->ra_ptr, m + 1)); MMP_TRY(halloc(&hv->rb_ptr, n + 1));
        for (int64_t i = 0; i < m; i++) hv->ra_ptr[i + 1] = hv->ra_ptr[i] + hv->va[i].cnt[pl->sa];
        for (int64_t j = 0; j < n; j++) hv->rb_ptr[j + 1] = hv->rb_ptr[j] + hv->vb[j].cnt[pl->sb];
        MMP_TRY(dalloc(g, &g->ra_ptr, m + 1)); MMP_TRY(dalloc(g, &g->rb_ptr, n + 1));
        MMP_TRY(dalloc(g, &g->ra_k, pl->nnz_a)); MMP_TRY(dalloc(g, &g->ra_v, pl->nnz_a));
        MMP_TRY(dalloc(g, &g->rb_k, pl->nnz_b)); MMP_TRY(dalloc(g, &g->rb_v, pl->nnz_b));
        MMP_TRY(up(g->ra_ptr, hv->ra_ptr, m + 1)); MMP_TRY(up(g->rb_ptr, hv->rb_ptr, n + 1));
        if (pl->nnz_a) v2_list_kernel<<<(unsigned)m, 256>>>(g->a64, k, g->ea, beta, pl->sa, g->ra_ptr, g->ra_k, g->ra_v);
        if (pl->nnz_b) v2_list_kernel<<<(unsigned)n, 256>>>(g->b64, k, g->fb, beta, pl->sb, g->rb_ptr, g->rb_k, g->rb_v);
        MMP_CUDA_CHECK(cudaGetLastError());
        trace("remainder lists");
        return MMP_STATUS_OK;
    }
    int tri = ref_plan_triangle(pl);   /* the bound's vectors from the statistics already here */
    double upf = ref_plan_up(k);
    MMP_TRY(dalloc(g, &g->ra_max, m)); MMP_TRY(dalloc(g, &g->a_sum, m));
    MMP_TRY(dalloc(g, &g->rb_max, n)); MMP_TRY(dalloc(g, &g->b_sum, n));
    if (tri) { MMP_TRY(dalloc(g, &g->a_ss, (size_t)m * pl->sa)); MMP_TRY(dalloc(g, &g->b_rl, (size_t)n * (pl->sb + 1))); }
    v2_vectors_kernel<<<blocks(m), 256>>>(g->ra_max, g->a_sum, tri ? g->a_ss : NULL, NULL, g->va, m, pl->sa, upf);
    v2_vectors_kernel<<<blocks(n), 256>>>(g->rb_max, g->b_sum, NULL, tri ? g->b_rl : NULL, g->vb, n, pl->sb, upf);
    MMP_CUDA_CHECK(cudaGetLastError());
    trace("bound vectors");
    return MMP_STATUS_OK;
}

/* The narrowest plane type of the dot stage that holds every value of format fmt (significand
 * and exponent range): 16 bf16 (bf16, the fp8/fp6/fp4 formats, integers of at most 8 bits), 32
 * float (fp16, tf32, fp32, integers of at most 24 bits), else 64. */
static int dot_plane(mmp_format fmt)
{
    const mmp_format_info *fi = mmp_format_get_info(fmt);
    if (!fi) return 64;
    if (!fi->is_float) return fi->storage_bits <= 8 ? 16 : fi->storage_bits <= 24 ? 32 : 64;
    if (fi->precision <= 8 && fi->max_finite <= 0x1.fep127 && fi->min_subnormal >= 0x1p-133) return 16;
    return fi->precision <= 24 && fi->max_finite <= 0x1.fffffep127 && fi->min_subnormal >= 0x1p-149 ? 32 : 64;
}

/* The operands decoded into the planes qa (row-major M x K) and qb (column-major K x N) as T,
 * then the dot kernels: one warp per open element when few and scattered, else tiles. */
template <typename T>
static void dot_launch(v2_dev *g, T *qa, T *qb, const ref_v2_args *f, const mmp_gemm *gm, int64_t open, int exact,
                       int ints)
{
    int64_t m = gm->m, n = gm->n, k = gm->k;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    v2_decode_kernel<T><<<blocks(mk), 256>>>(qa, g->na, f->fa, gm->la, gm->lda, m, k, 1, 0);
    v2_decode_kernel<T><<<blocks(kn), 256>>>(qb, g->nb, f->fb, gm->lb, gm->ldb, k, n, 0, 0);
    if (open <= UNDECIDED_CAP && open <= (int64_t)(mn / 64)) {   /* few and scattered: a warp each */
        unsigned nb = (unsigned)((open * 32 + 255) / 256);
        if (exact) v2_dot_list_kernel<1, T><<<nb, 256>>>(g->h, g->l, g->err, qa, qb, *f, ints, g->und, open, g->n_dot);
        else v2_dot_list_kernel<0, T><<<nb, 256>>>(g->h, g->l, g->err, qa, qb, *f, ints, g->und, open, g->n_dot);
    } else {
        dim3 grid((unsigned)((n + DOT_T - 1) / DOT_T), (unsigned)((m + DOT_T - 1) / DOT_T));
        if (exact) v2_dot_kernel<1, T><<<grid, DOT_T * DOT_T>>>(g->h, g->l, g->err, qa, qb, *f, ints, g->n_dot);
        else v2_dot_kernel<0, T><<<grid, DOT_T * DOT_T>>>(g->h, g->l, g->err, qa, qb, *f, ints, g->n_dot);
    }
}

/* Stage 6b, the dot stage, when the finish left elements open: a64, b64 decoded again into the
 * slice planes (sa, sb >= 1: room for them; stage 7 overwrites them later), v2_dot_kernel over
 * the tiles with an open element, and the open ones listed again. */
static mmp_status dot_stage(mmp_ref_result *r, v2_dev *g, const mmp_gemm *gm, const ref_v2_args *f)
{
    int64_t open = 0, m = gm->m, n = gm->n, k = gm->k;
    MMP_TRY(down(&open, g->n_und, 1));
    int64_t gy = (m + DOT_T - 1) / DOT_T, gx = (n + DOT_T - 1) / DOT_T;
    if (open == 0 || !ref_dot_wanted(gm) || gy > 65535 || gx > INT32_MAX) return MMP_STATUS_OK;
    double t1 = mmp_clock_now();
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    if (!g->qa) MMP_TRY(dalloc(g, &g->qa, mk));   /* the int8 route keeps no binary64 planes */
    if (!g->qb) MMP_TRY(dalloc(g, &g->qb, kn));
    int exact, ints;
    ref_dot_flags(&exact, &ints, gm);
    unsigned long long decided = 0;
    MMP_TRY(dalloc(g, &g->n_dot, 1));
    MMP_CUDA_CHECK(cudaMemset(g->n_dot, 0, sizeof *g->n_dot));
    int bits_a = dot_plane(gm->a), bits_b = dot_plane(gm->b), bits = bits_a > bits_b ? bits_a : bits_b;
    if (bits == 16)
        dot_launch<__nv_bfloat16>(g, (__nv_bfloat16 *)g->qa, (__nv_bfloat16 *)g->qb, f, gm, open, exact, ints);
    else if (bits == 32)
        dot_launch<float>(g, (float *)g->qa, (float *)g->qb, f, gm, open, exact, ints);
    else
        dot_launch<double>(g, g->qa, g->qb, f, gm, open, exact, ints);
    MMP_CUDA_CHECK(cudaMemset(g->n_und, 0, sizeof(int64_t)));
    v2_collect_kernel<<<blocks(mn), 256>>>(g->err, (int64_t)mn, g->n_und, g->und, UNDECIDED_CAP);
    MMP_TRY(sync_add(&r->split.dot_s, t1));
    MMP_TRY(down(&decided, g->n_dot, 1));
    r->split.n_dot = (int64_t)decided;
    return MMP_STATUS_OK;
}

/* Stages 1-8; the undecided indices come back in *und (malloc'ed), their number in *n_und. */
static mmp_status run_device(mmp_ref_result *r, v2_dev *g, v2_host *hv, const void *a, const void *b,
                             const void *c, const mmp_gemm *gm, const mmp_ref_options *o, int64_t **und,
                             int64_t *n_und, void **prefault)
{
    int64_t m = gm->m, n = gm->n, k = gm->k;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    int use_c = gm->beta != 0.0;
    double t0 = mmp_clock_now();
    MMP_CUDA_CHECK(cudaSetDevice(o->device));
    MMP_CUDA_CHECK(cudaFree(0));
    ref_cuda2_mem_begin(&g->mem);
    g->keep = o->keep_device;
    MMP_CUBLAS_CHECK(cublasCreate(&g->blas));
    /* IEEE binary64 FMAs (FP64 emulation stays off): the slice products are exact (step 3) */
    MMP_CUBLAS_CHECK(cublasSetMathMode(g->blas, CUBLAS_DEFAULT_MATH));
    size_t ba = native_bytes(gm->a, gm->la, gm->lda, m, k), bb = native_bytes(gm->b, gm->lb, gm->ldb, k, n);
    size_t bc = use_c ? native_bytes(gm->c, gm->lc, gm->ldc, m, n) : 0;
    g->borrowed = o->dev_a && o->dev_b && (!use_c || o->dev_c);
    if (g->borrowed) {   /* the caller's device copies: nothing to upload */
        g->na = (void *)o->dev_a; g->nb = (void *)o->dev_b; g->nc = use_c ? (void *)o->dev_c : NULL;
    } else {
        MMP_TRY(dalloc(g, (char **)&g->na, ba)); MMP_TRY(dalloc(g, (char **)&g->nb, bb));
        if (use_c) MMP_TRY(dalloc(g, (char **)&g->nc, bc));
    }
    r->split.setup_s = mmp_clock_now() - t0;
    double t1 = mmp_clock_now();
    if (!g->borrowed) {
        MMP_TRY(copy_big(g->na, a, ba, cudaMemcpyHostToDevice));
        MMP_TRY(copy_big(g->nb, b, bb, cudaMemcpyHostToDevice));
        if (use_c) MMP_TRY(copy_big(g->nc, c, bc, cudaMemcpyHostToDevice));
    }
    r->split.upload_s = g->borrowed ? 0.0 : mmp_clock_now() - t1;
    mmp_format_hd fa, fb, fc, fd;
    mmp_format_hd_init(&fa, gm->a); mmp_format_hd_init(&fb, gm->b); mmp_format_hd_init(&fc, gm->c); mmp_format_hd_init(&fd, gm->d);
    t1 = mmp_clock_now();
    trace(NULL);
    MMP_TRY(dalloc(g, &g->a64, mk)); MMP_TRY(dalloc(g, &g->b64, kn));
    trace("decode allocs");
    v2_decode_kernel<<<blocks(mk), 256>>>(g->a64, g->na, fa, gm->la, gm->lda, m, k, 1, 0);
    v2_decode_kernel<<<blocks(kn), 256>>>(g->b64, g->nb, fb, gm->lb, gm->ldb, k, n, 0, 0);
    MMP_TRY(sync_add(&r->split.decode_s, t1));
    r->time.convert_s = mmp_clock_now() - t0;
    t1 = mmp_clock_now();
    ref_v2_plan pl;
    MMP_TRY(prepare(r, g, hv, gm, o, &pl));
    int sa = pl.sa, sb = pl.sb, beta = pl.beta, sparse = pl.sparse;
    MMP_TRY(sync_add(&r->split.prepare_s, t1));
    t1 = mmp_clock_now();
    if (pl.imma) {   /* int8 planes (ref_cuda2_imma.cu) */
        MMP_TRY(ref_cuda2_imma_slice(r, &g->im, g->a64, g->b64, g->ea, g->fb, &pl, m, n, k));
        mem_sample(g);
    } else {
        MMP_TRY(dalloc(g, &g->qa, mk * sa)); MMP_TRY(dalloc(g, &g->qb, kn * sb));
        v2_slice_kernel<<<blocks(mk), 256>>>(g->qa, g->a64, g->ea, m, k, beta, sa);
        v2_slice_kernel<<<blocks(kn), 256>>>(g->qb, g->b64, g->fb, n, k, beta, sb);
        MMP_TRY(sync_add(&r->split.slice_s, t1));
    }
    trace("slice");
    DFREE(g->a64); DFREE(g->b64);   /* before the state: peak memory */
    trace("free a64 b64");
    if (pl.crt) {   /* the residues' GEMMs into byte planes, their other planes freed before the state */
        MMP_TRY(ref_cuda2_crt_products(r, &g->im, &pl, m, n, (void *)g->blas));
        trace("int8 products");
    }
    if (!pl.imma) MMP_TRY(oalloc(g, &g->p, mn));
    MMP_TRY(oalloc(g, &g->h, mn)); MMP_TRY(oalloc(g, &g->l, mn)); MMP_TRY(dalloc(g, &g->err, mn));
    trace("state allocs");
    if (!pl.imma || ref_imma_jobs(NULL, 0, &pl) == 0) {   /* the int8 route's first batch writes the state */
        MMP_CUDA_CHECK(cudaMemset(g->h, 0, mn * sizeof(double)));
        MMP_CUDA_CHECK(cudaMemset(g->l, 0, mn * sizeof(double)));
        MMP_CUDA_CHECK(cudaMemset(g->err, 0, mn * sizeof(double)));
    }
    trace("state memset");
    if (pl.crt) {   /* the square's value from the byte planes into the state */
        MMP_TRY(ref_cuda2_crt_accumulate(r, &g->im, g->h, g->l, g->err, g->ea, g->fb, &pl, m, n));
        trace("residue state");
        ref_cuda2_imma_free(&g->im);
        trace("int8 free");
    } else if (pl.imma) {   /* int8 GEMMs, a level's pairs in one, and their accumulation */
        MMP_TRY(ref_cuda2_imma_products(r, &g->im, g->h, g->l, g->err, g->ea, g->fb, &pl, m, n, (void *)g->blas));
        trace("int8 products");
        ref_cuda2_imma_free(&g->im);
        trace("int8 free");
    }
    const double one = 1.0, zero = 0.0;
    for (int lvl = 2; lvl <= pl.levels && !pl.imma; lvl++)   /* largest weights first */
        for (int s = 1; s <= sa; s++) {
            int t = lvl - s;
            if (t < 1 || t > sb) continue;
            double t2 = mmp_clock_now();
            /* row-major P = column-major P^T = Qb^T Qa^T */
            MMP_CUBLAS_CHECK(cublasDgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                                         g->qb + (size_t)(t - 1) * kn, (int)k, g->qa + (size_t)(s - 1) * mk, (int)k,
                                         &zero, g->p, (int)n));
            r->n_gemms++;
            MMP_TRY(sync_add(&r->time.gemm_s, t2));
            t2 = mmp_clock_now();
            v2_accumulate_kernel<<<blocks(mn), 256>>>(g->h, g->l, g->err, g->p, g->ea, g->fb, m, n, beta * lvl);
            MMP_TRY(sync_add(&r->split.accumulate_s, t2));
        }
    mem_sample(g);   /* cuBLAS's workspace, made at the first GEMM */
    t1 = mmp_clock_now();
    trace("dgemm products");
    MMP_TRY(dalloc(g, &g->n_und, 1)); MMP_TRY(dalloc(g, &g->und, UNDECIDED_CAP));
    MMP_CUDA_CHECK(cudaMemset(g->n_und, 0, sizeof(int64_t)));
    trace("finish allocs");
    ref_v2_args fa2;
    memset(&fa2, 0, sizeof fa2);
    fa2.a = g->na; fa2.b = g->nb; fa2.c = g->nc; fa2.fa = fa; fa2.fb = fb; fa2.fc = fc; fa2.fd = fd;
    fa2.la = gm->la; fa2.lb = gm->lb; fa2.lc = gm->lc; fa2.lda = gm->lda; fa2.ldb = gm->ldb; fa2.ldc = gm->ldc;
    fa2.m = m; fa2.n = n; fa2.k = k; fa2.alpha = gm->alpha; fa2.beta = gm->beta;
    fa2.sparse = sparse; fa2.beta_bits = beta; fa2.sb = sb; fa2.ea = g->ea; fa2.fbx = g->fb;
    fa2.rowbad = g->bada; fa2.colbad = g->badb; fa2.ra_ptr = g->ra_ptr; fa2.rb_ptr = g->rb_ptr;
    fa2.ra_k = g->ra_k; fa2.rb_k = g->rb_k; fa2.ra_v = g->ra_v; fa2.rb_v = g->rb_v;
    fa2.drop = ref_drop_view{sa, sb, pl.levels, g->ra_max, g->a_sum, g->rb_max, g->b_sum, g->a_ss, g->b_rl};
    fa2.nfa_ptr = g->nfa_ptr; fa2.nfb_ptr = g->nfb_ptr; fa2.nfa_k = g->nfa_k; fa2.nfb_k = g->nfb_k;
    fa2.zero_mode = ref_v2_zero_mode(gm);   /* MASK: prepare built the masks */
    fa2.kw = (k + 63) / 64;
    fa2.zero_a = g->za; fa2.sign_a = g->sa; fa2.zero_b = g->zb; fa2.sign_b = g->sb;
    v2_finish_kernel<<<blocks(mn), 256>>>(g->h, g->l, g->err, fa2, g->n_und, g->und, UNDECIDED_CAP);
    MMP_TRY(sync_add(&r->split.finish_s, t1));
    trace("finish kernel");
    MMP_TRY(dot_stage(r, g, gm, &fa2));
    trace("dot stage");
    if (r->absbound) {   /* stage 7, in the slice planes (sa, sb >= 1: room for |A|, |B|) */
        t1 = mmp_clock_now();
        if (!g->qa) MMP_TRY(dalloc(g, &g->qa, mk));   /* the int8 route: none yet */
        if (!g->qb) MMP_TRY(dalloc(g, &g->qb, kn));
        if (!g->p) MMP_TRY(oalloc(g, &g->p, mn));
        v2_decode_kernel<<<blocks(mk), 256>>>(g->qa, g->na, fa, gm->la, gm->lda, m, k, 1, 1);
        v2_decode_kernel<<<blocks(kn), 256>>>(g->qb, g->nb, fb, gm->lb, gm->ldb, k, n, 0, 1);
        MMP_CUDA_CHECK(cudaGetLastError());
        MMP_CUBLAS_CHECK(cublasDgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, g->qb, (int)k,
                                     g->qa, (int)k, &zero, g->p, (int)n));
        v2_absbound_kernel<<<blocks(mn), 256>>>(g->p, fa2);
        MMP_TRY(sync_add(&r->split.absbound_s, t1));
        r->time.gemm_s += r->split.absbound_s;
    }
    mem_sample(g);
    r->split.resident_s = mmp_clock_now() - t0 - r->split.setup_s;
    t1 = mmp_clock_now();
    ref_prefault_join(*prefault);   /* the result pages, touched meanwhile (usually done by now) */
    *prefault = NULL;
    MMP_TRY(down(n_und, g->n_und, 1));
    if (o->keep_device) {   /* the result stays where it is: the caller compares on the device */
        r->dev_d64 = g->h; r->dev_dout = g->l;
        g->h = g->l = NULL;
        if (r->absbound) { r->dev_absbound = g->p; g->p = NULL; }
    } else {
        MMP_TRY(download_big(r->d64, g->h, mn * sizeof(double)));
        MMP_TRY(download_big(r->dout, g->l, mn * sizeof(double)));
        if (r->absbound) MMP_TRY(download_big(r->absbound, g->p, mn * sizeof(double)));
    }
    if (*n_und > 0) {
        MMP_TRY(halloc(und, (size_t)*n_und));
        if (*n_und <= UNDECIDED_CAP) {
            MMP_TRY(down(*und, g->und, (size_t)*n_und));
        } else {   /* more than the list holds: every flag from err */
            double *flags = (double *)ref_big_alloc(mn * sizeof(double), 0);
            if (!flags) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the undecided flags");
            mmp_status st = download_big(flags, g->err, mn * sizeof(double));
            int64_t t = 0;
            for (size_t x = 0; st == MMP_STATUS_OK && x < mn; x++)
                if (flags[x] != 0.0 && t < *n_und) (*und)[t++] = (int64_t)x;
            ref_big_free(flags);
            MMP_TRY(st);
            if (t != *n_und) return MMP_ERR(MMP_STATUS_INTERNAL, "reference: %lld undecided flags, %lld counted",
                                            (long long)t, (long long)*n_und);
        }
    }
    r->split.download_s = mmp_clock_now() - t1;
    return MMP_STATUS_OK;
}

/* keep_device: the undecided elements' values, decided on the host, into the device arrays */
__global__ void v2_scatter_kernel(double *d64, double *dout, const int64_t *idx, const double *v, int64_t n)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    d64[idx[t]] = v[2 * t];
    dout[idx[t]] = v[2 * t + 1];
}

static mmp_status scatter_up(mmp_ref_result *r, const int64_t *und, int64_t n)
{
    double *hv = (double *)malloc((size_t)n * 2 * sizeof(double)), *dv = NULL;
    int64_t *di = NULL;
    if (!hv) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    for (int64_t t = 0; t < n; t++) { hv[2 * t] = r->d64[und[t]]; hv[2 * t + 1] = r->dout[und[t]]; }
    cudaError_t e = cudaMalloc(&dv, (size_t)n * 2 * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc(&di, (size_t)n * sizeof(int64_t));
    if (e == cudaSuccess) e = cudaMemcpy(dv, hv, (size_t)n * 2 * sizeof(double), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(di, und, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        v2_scatter_kernel<<<(unsigned)((n + 255) / 256), 256>>>(r->dev_d64, r->dev_dout, di, dv, n);
        e = cudaDeviceSynchronize();
    }
    cudaFree(dv);
    cudaFree(di);
    free(hv);
    MMP_CUDA_CHECK(e);
    return MMP_STATUS_OK;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

extern "C" mmp_status ref_cuda2_run(mmp_ref_result *r, const void *a, const void *b, const void *c,
                                    const mmp_gemm *g, const mmp_ref_options *o, int threads)
{
    if (g->m * g->k > INT32_MAX * 64LL || g->k * g->n > INT32_MAX * 64LL || g->m * g->n > INT32_MAX * 64LL ||
        g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX)   /* cuBLAS takes int dimensions */
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: operands too large for the device path");
    r->split.version = 2;
    v2_dev dev;
    v2_host hv;
    memset(&dev, 0, sizeof dev);
    memset(&hv, 0, sizeof hv);
    int64_t *und = NULL, n_und = 0;
    double t0 = mmp_clock_now();
    size_t bytes = (size_t)g->m * g->n * sizeof(double);
    void *pf = o->keep_device ? NULL
                              : ref_prefault_start(r->d64, bytes, r->dout, bytes, r->absbound, bytes, threads < 8 ? threads : 8);
    mmp_status st = run_device(r, &dev, &hv, a, b, c, g, o, &und, &n_und, &pf);
    ref_prefault_join(pf);   /* NULL unless run_device stopped before its download */
    r->time.combine_s = mmp_clock_now() - t0 - r->time.convert_s - r->time.gemm_s;
    dev_free(&dev);
    host_free(&hv);
    r->device_peak_bytes = ref_cuda2_mem_end(&dev.mem);   /* and the pool trimmed */
    if (st == MMP_STATUS_OK && n_und > 0) {
        qsort(und, (size_t)n_und, sizeof *und, cmp_i64);
        int done = 0;   /* stale host copies: only the open elements' rows and columns come back */
        if (o->host_operands && o->dev_a && o->dev_b)
            st = ref_cuda2_open_gathered(&done, r, o->dev_a, o->dev_b, o->dev_c, g, und, n_und, threads);
        if (st == MMP_STATUS_OK && !done && o->host_operands) st = o->host_operands(o->host_ctx);
        if (st == MMP_STATUS_OK && !done) st = ref_mpfr_native_list(r, a, b, c, g, und, n_und, threads);
        if (st == MMP_STATUS_OK && r->dev_d64) st = scatter_up(r, und, n_und);
    }
    free(und);
    if (r->dev_d64) {   /* keep_device: the host arrays were only the undecided elements' scratch */
        ref_big_free(r->d64); ref_big_free(r->dout); ref_big_free(r->absbound);
        r->d64 = r->dout = r->absbound = NULL;
    }
    return st;
}

/* A device copy of a native operand (benchmarks: bench_reference --operands-on-device), freed
 * with ref_cuda2_free. */
extern "C" mmp_status ref_cuda2_upload(void **dev, const void *host, mmp_format f, mmp_layout l, int64_t ld,
                                       int64_t rows, int64_t cols, int device)
{
    size_t bytes = native_bytes(f, l, ld, rows, cols);
    *dev = NULL;
    MMP_CUDA_CHECK(cudaSetDevice(device));
    MMP_CUDA_CHECK(cudaMalloc(dev, bytes));
    MMP_CUDA_CHECK(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice));
    return MMP_STATUS_OK;
}

extern "C" void ref_cuda2_free(void *dev) { cudaFree(dev); }

/* The statistics of `rows` contiguous vectors of length len (host x) computed by v2_stats_kernel,
 * into out[rows] (host), for tests against ref_vstats_pass1/_pass2 (ref_plan.h). */
extern "C" mmp_status ref_cuda2_vstats(ref_vstats *out, const double *x, int64_t rows, int64_t len, int beta)
{
    double *dx = NULL;
    ref_vstats *dv = NULL;
    int *de = NULL;
    unsigned char *db = NULL;
    mmp_status st = MMP_STATUS_OK;
    size_t bytes = (size_t)(rows * len) * sizeof(double);
    if (cudaMalloc((void **)&dx, bytes ? bytes : 1) != cudaSuccess || cudaMalloc((void **)&dv, rows * sizeof *dv) != cudaSuccess ||
        cudaMalloc((void **)&de, rows * sizeof *de) != cudaSuccess || cudaMalloc((void **)&db, (size_t)rows) != cudaSuccess)
        st = MMP_ERR(MMP_STATUS_CUDA, "reference: cannot allocate the statistics' test buffers");
    if (st == MMP_STATUS_OK && cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        st = MMP_ERR(MMP_STATUS_CUDA, "reference: cannot upload the statistics' test vectors");
    if (st == MMP_STATUS_OK && rows > 0) {
        v2_stats_kernel<<<(unsigned)rows, V2_STATS_THREADS>>>(dx, len, beta, dv, de, db);
        if (cudaGetLastError() != cudaSuccess || cudaMemcpy(out, dv, rows * sizeof *dv, cudaMemcpyDeviceToHost) != cudaSuccess)
            st = MMP_ERR(MMP_STATUS_CUDA, "reference: the statistics kernel failed");
    }
    cudaFree(dx); cudaFree(dv); cudaFree(de); cudaFree(db);
    return st;
}
