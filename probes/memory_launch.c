/* memory_launch.c — the launches every measurement method of `probe --memory` profiles
 * (memory_internal.h): the calibration kernels once each, or one built-in kernel once. ncu runs
 * them in a child mode of this program, CUPTI in a forked child; neither runs in a process that
 * later forks. CUDA builds only (the host build reports "built without CUDA").
 */
#include <string.h>

#include "memory_internal.h"
#include "mmaprobe/registry.h"

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>

mmp_status mmp_memory_calib_launch(double *cycles_per_access, const mmp_memory_calib *c, int iters);

mmp_status mmp_memory_launch_calibs(double *cycles, size_t ncycles)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    for (size_t i = 0; i < nc; i++) {
        double cyc;
        mmp_status st = mmp_memory_calib_launch(&cyc, &c[i], MMP_MEMORY_CALIB_LOADS);
        if (st != MMP_STATUS_OK) return MMP_ERR(st, "calibration %s: %s", c[i].name, mmp_error_last());
        if (cycles && i < ncycles) cycles[i] = cyc;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return MMP_ERR(MMP_STATUS_CUDA, "calibration launches: %s", cudaGetErrorString(e));
    return MMP_STATUS_OK;
}

mmp_status mmp_memory_launch_kernel(const char *name, int64_t size)
{
    const mmp_kernel_desc *d = mmp_registry_find(name, MMP_REGISTRY_DEFAULT);
    if (!d) return MMP_ERR(MMP_STATUS_INVALID, "no kernel '%s'", name);
    int64_t m = size, n = size, k = size;
    mmp_kernel_args a;
    memset(&a, 0, sizeof a);
    a.m = m; a.n = n; a.k = k;
    a.layout_a = mmp_layouts_has(d->layouts_a, 0 /* MMP_LAYOUT_ROW */) ? 0 : 1;
    a.layout_b = mmp_layouts_has(d->layouts_b, 0 /* MMP_LAYOUT_ROW */) ? 0 : 1;
    a.layout_d = mmp_layouts_has(d->layouts_d, 0 /* MMP_LAYOUT_ROW */) ? 0 : 1;
    a.layout_c = a.layout_d;
    a.lda = a.layout_a == 0 ? k : m;
    a.ldb = a.layout_b == 0 ? n : k;
    a.ldc = a.ldd = a.layout_d == 0 ? n : m;
    a.alpha = 1; a.beta = 0;
    void *pa = NULL, *pb = NULL, *pd = NULL;
    size_t ba = mmp_format_bytes((mmp_format)d->a_format, (size_t)(m * k));
    size_t bb = mmp_format_bytes((mmp_format)d->b_format, (size_t)(k * n));
    size_t bd = mmp_format_bytes((mmp_format)d->d_format, (size_t)(m * n));
    mmp_status st = MMP_STATUS_OK;
    if (cudaMalloc(&pa, ba) || cudaMalloc(&pb, bb) || cudaMalloc(&pd, bd)) {
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: cannot allocate the %lld^3 operands", name, (long long)size);
        goto out;
    }
    cudaMemset(pa, 0, ba);
    cudaMemset(pb, 0, bb);
    a.a = pa; a.b = pb; a.d = pd;
    int rc = d->run(&a);
    cudaError_t e = cudaDeviceSynchronize();
    if (rc != 0 || e != cudaSuccess)
        st = MMP_ERR(MMP_STATUS_KERNEL, "%s: launch returned %d (%s)", name, rc, cudaGetErrorString(e));
out:
    cudaFree(pa);
    cudaFree(pb);
    cudaFree(pd);
    return st;
}
#else
mmp_status mmp_memory_launch_calibs(double *cycles, size_t ncycles)
{
    (void)cycles; (void)ncycles;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "built without CUDA");
}

mmp_status mmp_memory_launch_kernel(const char *name, int64_t size)
{
    (void)name; (void)size;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "built without CUDA");
}
#endif
