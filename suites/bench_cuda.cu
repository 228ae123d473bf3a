/* bench_cuda.cu — the device timing loop of `mmaprobe bench` (mmaprobe/bench.h), run in the
 * timing child only.
 *
 * Operand sets: A and B of the row's formats and layouts, as many sets as make their bytes
 * exceed the rotation size (default twice the L2 cache, so a launch finds its operands in DRAM,
 * not in the cache the previous launch filled), each filled on the device with the suite's
 * generator (suites/dist_hd.h: the same bytes as the host's) under its own seed. The kernel, then
 * its baseline, is launched warm-up times, then N times, each launch between two CUDA events on
 * the kernel's stream, the sets taken in turn; median, min and max of the N event intervals.
 * Every CUDA call is checked; a launch error or a kernel's error return ends that timing.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "bench_internal.h"
#include "runner_internal.h"

namespace {

struct dev_sets {
    unsigned char *a = nullptr, *b = nullptr;
    void *d = nullptr;
    size_t ab = 0, bb = 0, db = 0;
    int sets = 0;
    mmp_case c{};                  /* set 0's case: layouts and leading dimensions */
};

mmp_status free_sets(dev_sets *s)
{
    MMP_CUDA_CHECK(cudaFree(s->a));
    MMP_CUDA_CHECK(cudaFree(s->b));
    MMP_CUDA_CHECK(cudaFree(s->d));
    s->a = s->b = nullptr;
    s->d = nullptr;
    return MMP_STATUS_OK;
}

/* Operand mat of case c into dst (device memory of the operand's span), on stream. */
mmp_status fill(void *dst, const mmp_case *c, int mat, cudaStream_t stream)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_buffer b;
    memset(&b, 0, sizeof b);
    b.f = (mmp_format)(mat == 0 ? k->a_format : k->b_format);
    b.l = mat == 0 ? c->la : c->lb;
    b.ld = mat == 0 ? c->lda : c->ldb;
    b.rows = mat == 0 ? c->m : c->k;
    b.cols = mat == 0 ? c->k : c->n;
    b.span = mmp_gemm_span(b.l, b.ld, b.rows, b.cols);
    b.data_bytes = mmp_format_bytes(b.f, b.span);
    b.dev = (unsigned char *)dst - MMP_GUARD_BYTES;   /* no guards: the fill writes from dev + guard */
    mmp_dist_ctx x;
    mmp_dist_ctx_init(&x, c);
    return mmp_buffer_dev_fill(&b, &x, mat, stream);
}

/* Allocate and fill the sets; *skip with why when the device has not the memory. */
mmp_status make_sets(dev_sets *s, int *skip, char *why, size_t why_size, const mmp_bench_row *r,
                     const mmp_bench_options *o, cudaStream_t stream)
{
    const mmp_kernel_desc *k = r->kernel;
    mmp_bench_set_case(&s->c, r, o, 0);
    s->ab = mmp_format_bytes((mmp_format)k->a_format, mmp_gemm_span(s->c.la, s->c.lda, r->m, r->k));
    s->bb = mmp_format_bytes((mmp_format)k->b_format, mmp_gemm_span(s->c.lb, s->c.ldb, r->k, r->n));
    s->db = mmp_format_bytes((mmp_format)k->d_format, mmp_gemm_span(s->c.ld, s->c.ldd, r->m, r->n));
    int dev = 0, l2 = 0;
    MMP_CUDA_CHECK(cudaGetDevice(&dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    int64_t rotate = o->rotate_bytes > 0 ? o->rotate_bytes : 2 * (int64_t)l2;
    s->sets = mmp_bench_sets((int64_t)(s->ab + s->bb), rotate);
    size_t freeb = 0, totalb = 0;
    MMP_CUDA_CHECK(cudaMemGetInfo(&freeb, &totalb));
    size_t need = (size_t)s->sets * (s->ab + s->bb) + s->db + ((size_t)256 << 20);   /* room for workspaces */
    if (need > freeb) {
        *skip = 1;
        snprintf(why, why_size, "needs %zu MB of device memory for %d operand sets (%zu MB free)", need >> 20, s->sets,
                 freeb >> 20);
        return MMP_STATUS_OK;
    }
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->a, s->ab * (size_t)s->sets));
    MMP_CUDA_CHECK(cudaMalloc((void **)&s->b, s->bb * (size_t)s->sets));
    MMP_CUDA_CHECK(cudaMalloc(&s->d, s->db));
    for (int i = 0; i < s->sets; i++) {
        mmp_case ci;
        mmp_bench_set_case(&ci, r, o, i);
        MMP_TRY(fill(s->a + (size_t)i * s->ab, &ci, 0, stream));
        MMP_TRY(fill(s->b + (size_t)i * s->bb, &ci, 1, stream));
    }
    MMP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return MMP_STATUS_OK;
}

/* Elements of D (n of elem_bytes each) that still hold the all-ones poison. */
template <typename T>
__global__ void count_poison(const T *d, size_t n, unsigned long long *count)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += d[i] == (T)~(T)0;
    if (local) atomicAdd(count, local);
}

mmp_status poisoned(int64_t *out, const void *d, size_t bytes, int elem_bytes, cudaStream_t stream)
{
    unsigned long long *count = nullptr, host = 0;
    MMP_CUDA_CHECK(cudaMallocAsync((void **)&count, sizeof *count, stream));
    MMP_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, stream));
    size_t n = bytes / (size_t)elem_bytes;
    if (elem_bytes == 1) count_poison<<<1024, 256, 0, stream>>>((const uint8_t *)d, n, count);
    else if (elem_bytes == 2) count_poison<<<1024, 256, 0, stream>>>((const uint16_t *)d, n, count);
    else count_poison<<<1024, 256, 0, stream>>>((const uint32_t *)d, n, count);
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaMemcpyAsync(&host, count, sizeof host, cudaMemcpyDeviceToHost, stream));
    MMP_CUDA_CHECK(cudaFreeAsync(count, stream));
    MMP_CUDA_CHECK(cudaStreamSynchronize(stream));
    *out = (int64_t)host;
    return MMP_STATUS_OK;
}

/* Host and device resources of one timing, released on every path (a CUDA error returns at once
 * through MMP_CUDA_CHECK; the timing child then ends, but a library error leaves it going). */
struct timing_res {
    cudaEvent_t *ev = nullptr;
    int made = 0;
    double *times = nullptr;
    void *ws = nullptr;
    ~timing_res()
    {
        for (int i = 0; i < made; i++) cudaEventDestroy(ev[i]);
        free(ev);
        free(times);
        if (ws) cudaFree(ws);
    }
};

/* Launch k over the sets, timed. OK with t->done, or t->why (kernel's error return or unwritten
 * output: an error; unsupported arguments or layouts: t->skip); a CUDA error returns its status. */
mmp_status time_kernel(mmp_bench_timing *t, const mmp_kernel_desc *k, const dev_sets *s, const mmp_bench_row *r,
                       const mmp_bench_options *o, cudaStream_t stream)
{
    t->unwritten = -1;
    if (!mmp_layouts_has(k->layouts_a, r->la) || !mmp_layouts_has(k->layouts_b, r->lb) || !mmp_layouts_has(k->layouts_d, r->ld) ||
        r->m % k->m_multiple || r->n % k->n_multiple || r->k % k->k_multiple) {
        snprintf(t->why, sizeof t->why, "%s does not take this shape or layouts", k->name);
        t->skip = 1;
        return MMP_STATUS_OK;
    }
    timing_res res;
    const int total = o->warmup + o->iters;
    size_t wsb = k->workspace_bytes ? k->workspace_bytes(r->m, r->n, r->k) : 0;
    if (wsb) MMP_CUDA_CHECK(cudaMalloc(&res.ws, wsb));
    res.ev = (cudaEvent_t *)calloc(2 * (size_t)total, sizeof *res.ev);
    res.times = (double *)malloc((size_t)o->iters * sizeof *res.times);
    if (!res.ev || !res.times) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of host memory for %d events", 2 * total);
    for (; res.made < 2 * total; res.made++) MMP_CUDA_CHECK(cudaEventCreate(&res.ev[res.made]));
    mmp_kernel_args x;
    memset(&x, 0, sizeof x);
    x.m = r->m; x.n = r->n; x.k = r->k;
    x.layout_a = s->c.la; x.layout_b = s->c.lb; x.layout_c = x.layout_d = s->c.ld;
    x.lda = s->c.lda; x.ldb = s->c.ldb; x.ldc = x.ldd = s->c.ldd;
    x.alpha = 1.0;
    x.d = s->d;
    x.workspace = res.ws;
    x.workspace_size = wsb;
    x.stream = stream;
    const mmp_format_info *fd = mmp_format_get_info((mmp_format)k->d_format);
    const int check = fd->is_float && (fd->storage_bits == 8 || fd->storage_bits == 16 || fd->storage_bits == 32) &&
                      s->db % (size_t)(fd->storage_bits / 8) == 0;
    if (check) MMP_CUDA_CHECK(cudaMemsetAsync(s->d, 0xFF, s->db, stream));   /* NaN in every float format */
    for (int i = 0; i < total; i++) {
        int set = i % s->sets;
        x.a = s->a + (size_t)set * s->ab;
        x.b = s->b + (size_t)set * s->bb;
        MMP_CUDA_CHECK(cudaEventRecord(res.ev[2 * i], stream));
        int rc = k->run(&x);
        MMP_CUDA_CHECK(cudaGetLastError());
        MMP_CUDA_CHECK(cudaEventRecord(res.ev[2 * i + 1], stream));
        if (i == 0) MMP_CUDA_CHECK(cudaStreamSynchronize(stream));   /* a first launch that fails says so at once */
        if (rc != MMP_KERNEL_OK) {
            snprintf(t->why, sizeof t->why, "%s returned %d (%s)", k->name, rc,
                     rc == MMP_KERNEL_UNSUPPORTED ? "unsupported arguments" : "error");
            t->skip = rc == MMP_KERNEL_UNSUPPORTED;
            MMP_CUDA_CHECK(cudaStreamSynchronize(stream));
            return MMP_STATUS_OK;
        }
    }
    MMP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < o->iters; i++) {
        float ms = 0;
        MMP_CUDA_CHECK(cudaEventElapsedTime(&ms, res.ev[2 * (o->warmup + i)], res.ev[2 * (o->warmup + i) + 1]));
        res.times[i] = ms;
    }
    if (check) MMP_TRY(poisoned(&t->unwritten, s->d, s->db, fd->storage_bits / 8, stream));
    if (t->unwritten > 0) {
        snprintf(t->why, sizeof t->why, "%s left %lld of %lld output elements unwritten at %lldx%lldx%lld", k->name,
                 (long long)t->unwritten, (long long)(r->m * r->n), (long long)r->m, (long long)r->n, (long long)r->k);
        return MMP_STATUS_OK;
    }
    mmp_bench_stats(&t->median_ms, &t->min_ms, &t->max_ms, res.times, o->iters);
    t->done = 1;
    t->warmup = o->warmup;
    t->iters = o->iters;
    t->sets = s->sets;
    t->set_bytes = (int64_t)(s->ab + s->bb);
    return MMP_STATUS_OK;
}

}  // namespace

extern "C" mmp_status mmp_bench_time_device(mmp_bench_timing *kernel, mmp_bench_timing *baseline, int *device_cc,
                                            const mmp_bench_row *r, const mmp_bench_options *o)
{
    int dev = 0, major = 0, minor = 0;
    MMP_CUDA_CHECK(cudaGetDevice(&dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    MMP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    *device_cc = major * 10 + minor;
    const mmp_kernel_desc *k = r->kernel;
    if (*device_cc < k->min_cc || (k->arch_specific && *device_cc != k->min_cc)) {
        snprintf(kernel->why, sizeof kernel->why, "needs sm_%d%s (device sm_%d)", k->min_cc, k->arch_specific ? "a" : "",
                 *device_cc);
        kernel->skip = 1;
        return MMP_STATUS_OK;
    }
    cudaStream_t stream = nullptr;
    MMP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    dev_sets s;
    mmp_status st = make_sets(&s, &kernel->skip, kernel->why, sizeof kernel->why, r, o, stream);
    if (st == MMP_STATUS_OK && !kernel->skip) st = time_kernel(kernel, k, &s, r, o, stream);
    const mmp_kernel_desc *bk = r->baseline;
    if (st == MMP_STATUS_OK && kernel->done && bk == k) *baseline = *kernel;
    else if (st == MMP_STATUS_OK && kernel->done && bk) {
        if (*device_cc < bk->min_cc) {
            snprintf(baseline->why, sizeof baseline->why, "%s needs sm_%d", bk->name, bk->min_cc);
        } else {
            st = time_kernel(baseline, bk, &s, r, o, stream);
            if (st != MMP_STATUS_OK) {   /* the library's failure is no verdict on the kernel */
                snprintf(baseline->why, sizeof baseline->why, "%s", mmp_error_last());
                st = MMP_STATUS_OK;
            }
        }
    } else if (st == MMP_STATUS_OK && kernel->done) {
        snprintf(baseline->why, sizeof baseline->why, "no cuBLAS/cuBLASLt kernel of this precision");
    }
    if (st == MMP_STATUS_OK) st = free_sets(&s);
    if (st == MMP_STATUS_OK) MMP_CUDA_CHECK(cudaStreamDestroy(stream));
    return st;
}
