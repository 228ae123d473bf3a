/* plugin.cu — a tensor-core GEMM (mma.sync m16n8k16: fp16 A and B, fp32 accumulate, fp32 C and
 * D) as an mmaprobe plugin: copy this folder, replace the kernel with yours, keep the descriptor
 * honest, validate.
 *
 * Build (against an installed mmaprobe, prefix P; -DCMAKE_CUDA_ARCHITECTURES=90 for an H100/H200):
 *     cmake -S . -B build -DCMAKE_PREFIX_PATH=P && cmake --build build
 * Run:
 *     mmaprobe validate --plugin ./build/libmyplugin.so --suite smoke      # then --suite edge
 *     ctest --test-dir build                                               # the same, registered
 * Without a GPU every case is a SKIP with the reason (exit 3: nothing was run).
 *
 * The kernel: one warp per 16 x 8 tile of D, four warps per block along M. Per 16-wide K step each
 * lane loads its own fragment elements straight from global memory (row g = lane / 4 and column
 * pair 2 (lane % 4) of the PTX ISA's m16n8k16 fragment layouts), zero past the M, N, K edges, so
 * any shape, layout and leading dimension is taken: no multiples, no alignment to declare. It is
 * simple, not fast (no shared memory, no ldmatrix, no pipelining): make it fast, then re-run the
 * same command; anything you break (a tail, an ld, a race) shows up as a FAIL with a reason.
 * Epilogue in fp32: D = (float)alpha * acc + (float)beta * C (one fmaf), C read only when beta != 0.
 */
#include <cuda_fp16.h>
#include <stdint.h>

#include "mmaprobe/plugin_cuda.h"   /* kernel.h + mmp_plugin_cuda_launch_status */

/* ---------------------------------------------------------------------------------------------
 * element access in either layout (mmp_layout: 0 row-major, 1 column-major) */
__device__ static __half ld_a(const __half *a, int la, long long lda, long long m, long long k, long long i,
                              long long kk)
{
    if (i >= m || kk >= k) return __ushort_as_half(0);
    return la == 0 ? a[i * lda + kk] : a[kk * lda + i];
}

__device__ static __half ld_b(const __half *b, int lb, long long ldb, long long k, long long n, long long kk,
                              long long j)
{
    if (kk >= k || j >= n) return __ushort_as_half(0);
    return lb == 0 ? b[kk * ldb + j] : b[j * ldb + kk];
}

/* two halves in one 32-bit register, the first in the low 16 bits (as mma.sync reads them) */
__device__ static uint32_t pack(__half lo, __half hi)
{
    return (uint32_t)__half_as_ushort(lo) | (uint32_t)__half_as_ushort(hi) << 16;
}

/* ---------------------------------------------------------------------------------------------
 * the kernel: D (m x n) = alpha A (m x k) B (k x n) + beta C */
struct gemm_args {
    const __half *a, *b;
    const float *c;
    float *d;
    long long m, n, k, lda, ldb, ldc, ldd;
    int la, lb, lc, ld;
    float alpha, beta;
};

__global__ void mma_gemm(gemm_args p)
{
    const int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const long long row0 = ((long long)blockIdx.y * blockDim.y + threadIdx.y) * 16;
    const long long col0 = (long long)blockIdx.x * 8;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (long long k0 = 0; k0 < p.k; k0 += 16) {
        uint32_t fa[4], fb[2];
        for (int r = 0; r < 4; r++) {   /* A: rows g, g+8; columns 2t, 2t+1, then the same +8 */
            long long i = row0 + g + 8 * (r & 1), kk = k0 + 2 * t + 8 * (r >> 1);
            fa[r] = pack(ld_a(p.a, p.la, p.lda, p.m, p.k, i, kk), ld_a(p.a, p.la, p.lda, p.m, p.k, i, kk + 1));
        }
        for (int r = 0; r < 2; r++) {   /* B: rows (k) 2t, 2t+1, then +8; column g */
            long long kk = k0 + 2 * t + 8 * r, j = col0 + g;
            fb[r] = pack(ld_b(p.b, p.lb, p.ldb, p.k, p.n, kk, j), ld_b(p.b, p.lb, p.ldb, p.k, p.n, kk + 1, j));
        }
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
    }
    for (int e = 0; e < 4; e++) {   /* D: rows g (e 0, 1) and g+8 (e 2, 3); columns 2t, 2t+1 */
        long long i = row0 + g + 8 * (e >> 1), j = col0 + 2 * t + (e & 1);
        if (i >= p.m || j >= p.n) continue;
        float v = p.alpha * acc[e];
        if (p.beta != 0.f) v = fmaf(p.beta, p.lc == 0 ? p.c[i * p.ldc + j] : p.c[j * p.ldc + i], v);
        p.d[p.ld == 0 ? i * p.ldd + j : j * p.ldd + i] = v;
    }
}

/* ---------------------------------------------------------------------------------------------
 * the entry point mmaprobe calls: device pointers, launch on its stream */
static int run(const mmp_kernel_args *x)
{
    if (x->m == 0 || x->n == 0) return MMP_KERNEL_OK;
    const dim3 block(32, 4), grid((unsigned)((x->n + 7) / 8), (unsigned)((x->m + 63) / 64));
    if (grid.y > 65535 || (x->n + 7) / 8 > 0x7fffffff) return MMP_KERNEL_UNSUPPORTED;
    gemm_args p = {(const __half *)x->a, (const __half *)x->b, (const float *)x->c, (float *)x->d,
                   x->m, x->n, x->k, x->lda, x->ldb, x->ldc, x->ldd,
                   x->layout_a, x->layout_b, x->layout_c, x->layout_d, (float)x->alpha, (float)x->beta};
    mma_gemm<<<grid, block, 0, (cudaStream_t)x->stream>>>(p);
    return MMP_KERNEL_OK;   /* a failed launch is reported by launch_status, right after */
}

/* ---------------------------------------------------------------------------------------------
 * the descriptor: what mmaprobe holds the kernel to (fields in declaration order, as C++ wants) */
static const mmp_kernel_desc kernels[] = {{
    MMP_KERNEL_ABI_VERSION,             /* abi_version */
    "myplugin_mma_f16",                 /* name: first part of every case ID */
    "myplugin",                         /* family */
    MMP_FORMAT_FP16, MMP_FORMAT_FP16,   /* a_format, b_format */
    MMP_FORMAT_FP32, MMP_FORMAT_FP32,   /* c_format, d_format */
    MMP_FORMAT_FP32,                    /* acc_format */
    -1,                                 /* mul_format: the inputs' own (fp16 products are exact) */
    0,                                  /* acc_bits: from acc_format */
    MMP_LAYOUTS_ANY, MMP_LAYOUTS_ANY, MMP_LAYOUTS_ANY,   /* layouts_a, layouts_b, layouts_d */
    1,                                  /* reads_c: beta != 0 cases pass C */
    1, 1, 1,                            /* m_multiple, n_multiple, k_multiple: any shape */
    80,                                 /* min_cc: mma.sync m16n8k16 needs sm_80 */
    0,                                  /* arch_specific */
    1,                                  /* deterministic: fixed K order, no atomics */
    MMP_KERNEL_DEVICE,                  /* where */
    NULL,                               /* workspace_bytes */
    run,                                /* run */
    "example plugin: mma.sync m16n8k16 f16 -> f32, one warp per 16x8 tile", /* description */
    0, 0,                               /* out_round, flush_subnormals */
    0, 0, 0,                            /* min_k, ld_align_bytes, tight_d: no constraints */
    mmp_plugin_cuda_launch_status,      /* launch_status: a failed launch is ERROR launch */
}};

extern "C" const mmp_kernel_desc *mmp_plugin_kernels(uint32_t *count, uint32_t *abi_version)
{
    *count = 1;
    *abi_version = MMP_KERNEL_ABI_VERSION;
    return kernels;
}
