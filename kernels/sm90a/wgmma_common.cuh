/* wgmma_common.cuh — Hopper (sm_90a) building blocks shared by kernels/sm90a/wgmma.cu and
 * kernels/sm90a/peak.cu: shared-memory matrix descriptors (128-byte swizzle, K-major),
 * wgmma fences / commit / wait, the m64n256k16 bf16 wrapper, mbarrier and TMA helpers,
 * setmaxnreg. Everything is `static inline`; the device functions exist only when compiling
 * for sm_90a (MMP_WGMMA_DEVICE), so a file compiled for other targets can include this too.
 *
 *   uint64_t da = smem_desc(tile_a + q * 32);   // 1024-aligned 128B-swizzled tile, K offset q*32 B
 *   wg_fence(); wgmma_bf16_m64n256k16(d, da, db, 1); wg_commit(); wg_wait<0>();
 */
#ifndef MMAPROBE_WGMMA_COMMON_CUH
#define MMAPROBE_WGMMA_COMMON_CUH

#include <cuda.h>
#include <stdint.h>

#include "wgmma_addr.h"

#define WG_ROW_BYTES MMP_WG_ROW_BYTES

/* Byte offset of (row, byte-in-row) inside a 128B-swizzled tile (kernels/wgmma_addr.h, shared
 * with the memory maps). */
__host__ __device__ static inline uint32_t swz128(uint32_t row, uint32_t byte) { return mmp_wg_swz128(row, byte); }

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MMP_WGMMA_DEVICE 1

/* Descriptor of a K-major operand tile in the 128-byte swizzle: rows of 128 bytes, 8-row
 * groups 1024 bytes apart (the stride byte offset); the instruction reads as many rows as its
 * M (A) or N (B) needs, so the same descriptor serves n128 and n256. */
__device__ static inline uint64_t smem_desc(const void *p)
{
    uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    uint64_t d = 0;
    d |= (uint64_t)((a & 0x3FFFF) >> 4);   /* start address */
    d |= (uint64_t)1 << 16;                /* leading byte offset: unused for swizzled K-major */
    d |= (uint64_t)(1024 >> 4) << 32;      /* stride byte offset: 8 rows x 128 B */
    d |= (uint64_t)1 << 62;                /* 128-byte swizzle */
    return d;
}

__device__ static inline void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ static inline void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/* Wait until at most N committed wgmma groups of this warpgroup are still pending. */
template <int N>
__device__ static inline void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
__device__ static inline void wg_wait0() { wg_wait<0>(); }

/* The accumulator registers are written by wgmma asynchronously: after wait_group the compiler
 * must not move reads of them before the wait (nor writes after the next issue), so every
 * register is passed through an empty asm that it cannot reorder (CUTLASS's operand fence). */
template <int N>
__device__ static inline void fence_operands(float *d)
{
#pragma unroll
    for (int j = 0; j < N; j++) asm volatile("" : "+f"(d[j])::"memory");
}

__device__ static inline void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* Register-count hand-over between warpgroups (needs a register cap at entry:
 * __launch_bounds__(threads, 1)); every thread of the warpgroup executes it. */
template <int R>
__device__ static inline void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R>
__device__ static inline void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }

#define R8(i) "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define R64(i) R8(i), R8(i + 8), R8(i + 16), R8(i + 24), R8(i + 32), R8(i + 40), R8(i + 48), R8(i + 56)

#define DREGS256 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

/* d (128 fp32 per thread) += A(64x16 bf16) * B(16x256 bf16); scale_d = 0 overwrites d.
 * Operands: %0..%127 accumulators, %128 A descriptor, %129 B descriptor, %130 scale-d;
 * immediates: scale-a 1, scale-b 1, A and B not transposed (K-major). */
__device__ static inline void wgmma_bf16_m64n256k16(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " DREGS256
                 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : R64(0), R64(64)
                 : "l"(da), "l"(db), "r"(scale_d));
}

__device__ static inline void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"((uint32_t)__cvta_generic_to_shared(bar)), "r"(count));
}
__device__ static inline void mbar_expect_tx(uint64_t *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                     (uint32_t)__cvta_generic_to_shared(bar)), "r"(bytes) : "memory");
}
__device__ static inline void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"((uint32_t)__cvta_generic_to_shared(bar)) : "memory");
}
__device__ static inline void mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n}\n" ::"r"((uint32_t)__cvta_generic_to_shared(bar)), "r"(parity) : "memory");
}
__device__ static inline void tma_load_2d(void *dst, const CUtensorMap *map, int x, int y, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"((uint32_t)__cvta_generic_to_shared(dst)),
                 "l"((uint64_t)map), "r"(x), "r"(y), "r"((uint32_t)__cvta_generic_to_shared(bar)) : "memory");
}
#endif /* sm_90a */

#endif
