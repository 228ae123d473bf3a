/* kernels/fp16_ptx.cu — family fp16_ptx: hand-written PTX FP16 GEMMs, one change per version from
 * the 2-stage mma.sync kernel.
 *
 * D (row-major, M x N) = A (row-major, M x K, fp16) * B (row-major, K x N, fp16).
 * All versions share the 128 x 128 CTA tile, 8 warps of 64 x 32, 32-wide K slices staged by
 * cp.async in padded shared memory (kernels/kern16_mma.cuh), and change one thing at a time:
 *
 *   version 1 is fp16_ptx_mma: ldmatrix.x4 (A) / .x2.trans (B), mma.sync m16n8k16 (two n8
 *     halves per 16 x 16 step), FP32 accumulate, 2-stage.
 *   version 2 is fp16_ptx_k8: ldmatrix.x2 / .x1.trans, m16n8k8 (four per 16 x 16 step).
 *   version 3 is fp16_ptx_fp16acc: as 1 with an FP16 accumulator (fp16 output).
 *   version 4 is fp16_ptx_3stage: as 1 with a 3-stage ring (cp.async.wait_group 1).
 *   version 5 is fp16_ptx_manual_pack: as 1 without ldmatrix: 32-bit ld.shared for A and two
 *     16-bit ld.shared + mov.b32 packing per B register (what ldmatrix saves).
 * The same-precision WMMA double-buffered baseline is fp16_wmma_cp_async (kernels/fp16_wmma.cu).
 *
 * Build: part of libmmp (cmake --build build). Run: mmaprobe validate --kernels 'fp16_ptx_*';
 * time: build/bench_kernels --filter 'fp16_*'. Memory maps: kernels/kern16_memmaps.c. Measured
 * timings: results/h200/kernels/kernels.md.
 */
#include "kern16_mma.cuh"
#include "mmaprobe/registry.h"

MMP_K16_TAG(fp16_ptx_mma, MMP_K16_FP16_PTX_MMA)
MMP_K16_TAG(fp16_ptx_k8, MMP_K16_FP16_PTX_K8)
MMP_K16_TAG(fp16_ptx_fp16acc, MMP_K16_FP16_PTX_FP16ACC)
MMP_K16_TAG(fp16_ptx_3stage, MMP_K16_FP16_PTX_3STAGE)
MMP_K16_TAG(fp16_ptx_manual_pack, MMP_K16_FP16_PTX_MANUAL)

/* N must be a multiple of 8 (B rows are copied in 16-byte chunks along N), K of 8. */
static const mmp_kernel_desc fp16_ptx_table[] = {
    MMP_K16_DESC(fp16_ptx_mma, "fp16_ptx", MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, MMP_LAYOUTS_ROW,
                 8, 8, 80, "ldmatrix.x4/.x2.trans + mma m16n8k16 x2, f32 acc, 2-stage cp.async, padded smem"),
    MMP_K16_DESC(fp16_ptx_k8, "fp16_ptx", MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, MMP_LAYOUTS_ROW,
                 8, 8, 80, "ldmatrix.x2/.x1.trans + mma m16n8k8 x4, f32 acc, 2-stage"),
    MMP_K16_DESC(fp16_ptx_fp16acc, "fp16_ptx", MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP16, 0,
                 MMP_LAYOUTS_ROW, 8, 8, 80, "ldmatrix + mma m16n8k16 with an FP16 accumulator, fp16 output"),
    MMP_K16_DESC(fp16_ptx_3stage, "fp16_ptx", MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, MMP_LAYOUTS_ROW,
                 8, 8, 80, "ldmatrix + mma m16n8k16, 3-stage cp.async (wait_group 1)"),
    MMP_K16_DESC(fp16_ptx_manual_pack, "fp16_ptx", MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0,
                 MMP_LAYOUTS_ROW, 8, 8, 80, "no ldmatrix: ld.shared + mov.b32 packing, mma m16n8k16"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_fp16_ptx(size_t *count)
{
    *count = sizeof fp16_ptx_table / sizeof fp16_ptx_table[0];
    return fp16_ptx_table;
}
