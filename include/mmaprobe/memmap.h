/* mmaprobe/memmap.h — what a kernel exposes of its memory addressing, for the bank-conflict and
 * coalescing probes (probes/memory*). The functions are the kernel's own address arithmetic:
 * the kernel calls the same __host__ __device__ helpers, so a map that lies is a kernel bug.
 *
 * A map enumerates the warp-level memory instructions one warp issues in one K step (one
 * BK-wide slice of the main loop) of one CTA tile, for a given problem shape:
 *
 *   mmp_warp_access acc[64];
 *   int n = map->enumerate(acc, 64, &shape, warp, kstep);  // number written, or -1 on error
 *   for (int i = 0; i < n; i++) analyse(acc[i].kind, acc[i].bytes, acc[i].addr, acc[i].active);
 *
 * Shared-memory addresses are byte offsets from the start of the kernel's dynamic/static shared
 * memory; global addresses are byte offsets from the start of the operand (A or B) buffer.
 */
#ifndef MMAPROBE_MEMMAP_H
#define MMAPROBE_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_access_kind {
    MMP_ACCESS_LDS = 0,     /* ld.shared, bytes = 4, 8 or 16 per lane            */
    MMP_ACCESS_STS = 1,     /* st.shared                                          */
    MMP_ACCESS_LDSM = 2,    /* ldmatrix; matrices = 1, 2 or 4; addr[] = row addresses of
                               lanes 0..8*matrices-1 (16 bytes each)              */
    MMP_ACCESS_LDSM_T = 3,  /* ldmatrix .trans (same addressing)                  */
    MMP_ACCESS_CP_ASYNC = 4,/* cp.async global->shared: shared side in addr[], global in gaddr[] */
    MMP_ACCESS_LDG = 5,     /* ld.global, bytes per lane in bytes, addr[] global  */
    MMP_ACCESS_STSM = 6     /* stmatrix                                           */
} mmp_access_kind;

typedef struct mmp_warp_access {
    const char *label;      /* e.g. "A ldmatrix.x4 k0", "B cp.async 16B" */
    mmp_access_kind kind;
    int32_t bytes;          /* bytes per lane (ldmatrix: 16 per row address) */
    int32_t matrices;       /* ldmatrix: 1, 2, 4; otherwise 0 */
    uint32_t active;        /* lane mask */
    uint64_t addr[32];      /* shared byte offsets (LDS/STS/LDSM/CP_ASYNC) or global (LDG) */
    uint64_t gaddr[32];     /* global byte offsets for CP_ASYNC (source); else unused */
    int32_t operand;        /* 0 = A, 1 = B, 2 = C/D, -1 other */
} mmp_warp_access;

typedef struct mmp_memmap_shape {
    int64_t m, n, k, lda, ldb;   /* problem (elements) */
    int32_t elem_bits_a, elem_bits_b;
} mmp_memmap_shape;

typedef struct mmp_kernel_memmap {
    const char *kernel;                  /* kernel name (as in its descriptor) */
    int32_t threads_per_cta, warps_per_cta;
    int32_t tile_m, tile_n, tile_k;      /* CTA tile and K step */
    int32_t stages;                      /* pipeline stages */
    int64_t smem_bytes_per_stage;        /* shared memory per stage (bytes) */
    int64_t smem_bytes_total;            /* what the kernel asks for (static + dynamic) */
    int32_t ctas_per_sm_expected;        /* occupancy the design expects */
    int (*enumerate)(mmp_warp_access *out, int max, const mmp_memmap_shape *shape, int warp, int kstep);
} mmp_kernel_memmap;

#ifdef __cplusplus
}
#endif
#endif
