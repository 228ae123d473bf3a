/* kernels/mma_ptx.cuh — inline-PTX wrappers of the fp16_ptx and bf16_mma families: cp.async,
 * ldmatrix, mma.sync. Device-only (CUDA C++). Each wrapper is one PTX instruction; the
 * operand registers follow the PTX ISA fragment tables (see kernels/kern16_addr.h).
 *
 *   mmp_k16_cp_async16(smem_addr, gptr, valid);   // 16 bytes, zero-filled when !valid
 *   mmp_k16_cp_commit(); mmp_k16_cp_wait<N>();      // commit_group / wait_group N
 *   mmp_k16_ldsm_x4(r, smem_addr);                  // ldmatrix .x4 (also .x2 .x1, .trans)
 *   mmp_k16_mma_bf16_16816(d, a, b);                // d += a*b (f32 accumulate)
 *
 * cp.async, ldmatrix and the 16-bit mma.sync need sm_80; the E4M3 mma.sync needs sm_89 (PTX ISA
 * target notes; on sm_90 ptxas emulates it by converting to FP16 for HMMA — NVIDIA/cutlass#1986).
 * On older targets the wrappers trap, and the descriptors' min_cc keeps the runner away.
 */
#ifndef MMAPROBE_MMA_PTX_CUH
#define MMAPROBE_MMA_PTX_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MMP_K16_NEED_SM80() __trap()
#else
#define MMP_K16_NEED_SM80() ((void)0)
#endif

__device__ __forceinline__ uint32_t mmp_k16_smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* cp.async.cg 16 bytes (bypasses L1: the tiles are read once per CTA); src-size 0 zero-fills
 * the chunk. */
__device__ __forceinline__ void mmp_k16_cp_async16(uint32_t dst, const void *src, int valid)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0)
                 : "memory");
#else
    MMP_K16_NEED_SM80();
#endif
}
__device__ __forceinline__ void mmp_k16_cp_commit()
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void mmp_k16_cp_wait()
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* ldmatrix: each of the 8*x addressing lanes gives one 16-byte row of an 8x8 b16 matrix. */
__device__ __forceinline__ void mmp_k16_ldsm_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void mmp_k16_ldsm_x2(uint32_t r[2], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
__device__ __forceinline__ void mmp_k16_ldsm_x2_trans(uint32_t r[2], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
__device__ __forceinline__ void mmp_k16_ldsm_x1_trans(uint32_t r[1], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0]) : "r"(addr));
}
/* Manual loads (fp16_ptx_manual_pack): one 32-bit word, one 16-bit half, and the pack. */
__device__ __forceinline__ uint32_t mmp_k16_lds32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}
__device__ __forceinline__ uint32_t mmp_k16_lds16_pack(uint32_t lo_addr, uint32_t hi_addr)
{
    uint16_t lo, hi;
    uint32_t v;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(lo) : "r"(lo_addr));
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(hi) : "r"(hi_addr));
    asm("mov.b32 %0, {%1, %2};\n" : "=r"(v) : "h"(lo), "h"(hi));
    return v;
}

/* mma.sync, D = A*B + D in place. f32 accumulators: d[4]; f16 accumulators: d[2] (f16x2). */
__device__ __forceinline__ void mmp_k16_mma_f16_16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mmp_k16_mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mmp_k16_mma_f16_1688(float d[4], const uint32_t a[2], uint32_t b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b));
}
__device__ __forceinline__ void mmp_k16_mma_f16acc_16816(uint32_t d[2], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
                 "{%0,%1};\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mmp_k16_mma_e4m3_16832(float d[4], const uint32_t a[4], const uint32_t b[2])
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b;
    __trap();
#endif
}

#endif
