/* kernels/wgmma_addr.h — the address arithmetic of the wgmma family's element-load kernels
 * (kernels/sm90a/wgmma.cu versions 1, 3, 4), shared by the kernels (CUDA) and their memory maps
 * (kernels/wgmma_maps.c, plain C) so that the probes analyse the addresses the kernels use.
 *
 *   uint32_t off = mmp_wg_swz128(row, byte);   // byte offset in a 128B-swizzled tile
 *   mmp_wg_elem e = mmp_wg_simple_elem(elem, t, i);   // thread t's i-th element of a K step
 *
 * Tiles: 128-byte rows (64 bf16 or 128 fp8 of K), 16-byte chunk c of row r at chunk c ^ (r % 8)
 * (TMA's CU_TENSOR_MAP_SWIZZLE_128B and the wgmma descriptor's swizzle mode 1). The element-load
 * kernels: 128 threads, CTA tile 64 (M) x 128 (N), K step kt = 128 / elem; thread t loads
 * element e = t + 128 i of the A tile (64 x kt) and of the B tile (128 x kt), row e / kt, K
 * offset e % kt, one elem-byte ld.global and one st.shared each.
 */
#ifndef MMAPROBE_WGMMA_ADDR_H
#define MMAPROBE_WGMMA_ADDR_H

#include <stdint.h>

#ifdef __CUDACC__
#define MMP_WG_HD __host__ __device__ __forceinline__
#else
#define MMP_WG_HD static inline
#endif

#define MMP_WG_ROW_BYTES 128
#define MMP_WG_SIMPLE_THREADS 128
#define MMP_WG_SIMPLE_TILE_M 64
#define MMP_WG_SIMPLE_TILE_N 128

/* Byte offset of (row, byte-in-row) inside a 128B-swizzled tile of 128-byte rows. */
MMP_WG_HD uint32_t mmp_wg_swz128(uint32_t row, uint32_t byte)
{
    return row * MMP_WG_ROW_BYTES + ((((byte >> 4) ^ (row & 7)) << 4) | (byte & 15));
}

typedef struct mmp_wg_elem {
    int row, kk;   /* tile row (A: M, B: N) and K offset (elements) */
} mmp_wg_elem;

/* Element e of a tile whose rows hold kt = 128 / elem elements of K. */
MMP_WG_HD mmp_wg_elem mmp_wg_simple_elem(int elem, int e)
{
    mmp_wg_elem x;
    int kt = MMP_WG_ROW_BYTES / elem;
    x.row = e / kt;
    x.kk = e % kt;
    return x;
}

#endif
