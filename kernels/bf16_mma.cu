/* kernels/bf16_mma.cu — family bf16_mma: mma.sync GEMMs (BF16, FP16-accumulate, FP8), from the
 * naive staged kernel (version 1) to the Hopper-tuned pipelines (versions 11-13).
 *
 * D (row-major, M x N) = A (row-major, M x K) * B (column-major K x N, i.e. N x K with K
 * contiguous: PyTorch's nn.Linear weight, the "TN" layout the .row.col mma wants).
 * All versions (but 6): 128 x 128 CTA tile, 64-byte K slices (32 16-bit or 64 FP8 values) staged by
 * cp.async, fragments read with ldmatrix.x4 (kernels/kern16_mma.cuh, kern16_addr.h):
 *
 *   version 1 is bf16_mma_plain: 8 warps of 64 x 32, BF16 m16n8k16, FP32 accumulate, 2-stage,
 *     64-byte shared rows (ldmatrix 4-way bank conflict: rows 0, 2, 4, 6 share bank group 0).
 *   version 2 is bf16_mma_padded: rows padded to 80 bytes (conflict-free, 25% more smem).
 *   version 3 is bf16_mma_swizzle: 16-byte chunk c of row r at c ^ ((r >> 1) & 3) (no conflict,
 *     no extra smem; CUTLASS Swizzle<2,3,3>).
 *   version 4 is bf16_mma_padded_3stage: padded, 3-stage (60 KB: fewer CTAs per SM on Ada).
 *   version 5 is bf16_mma_swizzle_3stage: swizzled, 3-stage (48 KB): the fastest of the
 *     128 x 128 tiles with 64 x 32 warps.
 *   version 6 is bf16_mma_w64_4stage: Hopper-sized tile: 128 x 256 CTA, 8 warps of 64 x 64
 *     (ldmatrix per mma 0.375 -> 0.25), 4-stage swizzled ring (96 KB, 1 CTA of 8 warps per SM).
 *   version 7 is fp16_mma_f16acc: FP16 inputs, FP16 accumulator (mma .f16.f16.f16.f16), fp16 out.
 *   version 8 is fp16_mma_f16acc_w64: as 7 with 4 warps of 64 x 64 (ldmatrix per mma 0.375 -> 0.25).
 *   version 9 is fp8_mma: E4M3 inputs, m16n8k32, FP32 accumulate (the MMA's accumulator keeps
 *     about 14 significand bits: acc_bits below). sm_89+ PTX; on sm_90 ptxas emulates it
 *     (FP16 conversion + HMMA).
 *   version 10 is fp8_mma_promote64: as 9, each 64-wide K slice accumulated in a zeroed fragment
 *     and added into an FP32 master accumulator on the CUDA cores (DeepSeek-V3's promotion).
 *   versions 11-13 are Hopper-tuned, aiming at cuBLAS's BF16 throughput with mma.sync alone:
 *     64 x 64 warp tiles, fragments double-buffered in registers (the next K step's ldmatrix,
 *     and across the barrier the next slice's first, issued before this step's mma), every
 *     stage in flight, and copies addressed incrementally (one multiply-add per 16-byte copy
 *     instead of recomputing each address: with full address arithmetic the main loop spends
 *     most of its instructions on addresses and the warps stall on their latency):
 *     version 11 is bf16_mma_pipe_256: 128 x 256, 8 warps, 4 stages of 32-wide K (96 KB).
 *     version 12 is bf16_mma_pipe_256_bk64: as 11 with 64-wide K slices (128-byte rows, 3
 *       stages, 144 KB): half the barriers; the fastest of the family on the H200 (a 4th
 *       stage adds nothing; spreading the copies over the K steps is slower).
 *     version 13 is bf16_mma_pipe_128: 128 x 128, 4 warps, 4 stages of 32-wide K (64 KB),
 *       2 CTAs per SM.
 *
 * Build: part of libmmp. Run: mmaprobe validate --kernels 'bf16_mma_*'; time:
 * build/bench_kernels --filter 'bf16_*'. Memory maps: kernels/kern16_memmaps.c. Measured
 * timings of every version: results/h200/kernels/kernels.md.
 */
#include "kern16_mma.cuh"
#include "mmaprobe/registry.h"

MMP_K16_TAG(bf16_mma_plain, MMP_K16_BF16_PLAIN)
MMP_K16_TAG(bf16_mma_padded, MMP_K16_BF16_PADDED)
MMP_K16_TAG(bf16_mma_swizzle, MMP_K16_BF16_SWIZZLE)
MMP_K16_TAG(bf16_mma_padded_3stage, MMP_K16_BF16_PADDED_3STAGE)
MMP_K16_TAG(bf16_mma_swizzle_3stage, MMP_K16_BF16_SWIZZLE_3STAGE)
MMP_K16_TAG(bf16_mma_w64_4stage, MMP_K16_BF16_W64_4STAGE)
MMP_K16_TAG(fp16_mma_f16acc, MMP_K16_FP16_F16ACC)
MMP_K16_TAG(fp16_mma_f16acc_w64, MMP_K16_FP16_F16ACC_W64)
MMP_K16_TAG(fp8_mma, MMP_K16_FP8)
MMP_K16_TAG(fp8_mma_promote64, MMP_K16_FP8_PROMOTE)
MMP_K16_TAG(bf16_mma_pipe_256, MMP_K16_BF16_PIPE_256)
MMP_K16_TAG(bf16_mma_pipe_256_bk64, MMP_K16_BF16_PIPE_256_BK64)
MMP_K16_TAG(bf16_mma_pipe_128, MMP_K16_BF16_PIPE_128)

/* M, N: any (zero-filled edges, bounds-checked stores); K: a multiple of one 16-byte chunk.
 * acc_bits 14 for FP8: the significand bits measured for the E4M3 MMA's FP32 accumulator on
 * Ada (DeepSeek-V3 reports the same on H800); the promoted kernel still sums
 * each 64-product slice that way before the FP32 add, so its bound keeps the 14 as well. */
#define BF16_ROW(tag, fa, fd, facc, bits, kmul, cc, text) \
    MMP_K16_DESC(tag, "bf16_mma", fa, fd, facc, bits, MMP_LAYOUTS_COL, 1, kmul, cc, text)
static const mmp_kernel_desc bf16_mma_table[] = {
    BF16_ROW(bf16_mma_plain, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma m16n8k16, 8 warps 64x32, 2-stage cp.async, plain 64-byte smem rows"),
    BF16_ROW(bf16_mma_padded, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 2-stage, smem rows padded to 80 bytes"),
    BF16_ROW(bf16_mma_swizzle, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 2-stage, XOR-swizzled smem (chunk ^ (row>>1)&3)"),
    BF16_ROW(bf16_mma_padded_3stage, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 3-stage, padded smem"),
    BF16_ROW(bf16_mma_swizzle_3stage, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 3-stage, swizzled smem"),
    BF16_ROW(bf16_mma_w64_4stage, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 128x256 CTA, 8 warps 64x64, 4-stage swizzled"),
    BF16_ROW(fp16_mma_f16acc, MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP16, 0, 8, 80,
             "FP16 mma with FP16 accumulation, 8 warps 64x32, 3-stage swizzled"),
    BF16_ROW(fp16_mma_f16acc_w64, MMP_FORMAT_FP16, MMP_FORMAT_FP16, MMP_FORMAT_FP16, 0, 8, 80,
             "FP16 mma with FP16 accumulation, 4 warps 64x64, 3-stage swizzled"),
    BF16_ROW(fp8_mma, MMP_FORMAT_E4M3, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 14, 16, 89,
             "E4M3 mma m16n8k32, FP32 accumulate (narrow in the MMA), 3-stage swizzled"),
    BF16_ROW(fp8_mma_promote64, MMP_FORMAT_E4M3, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 14, 16, 89,
             "E4M3 mma m16n8k32, promoted to an FP32 master accumulator every 64 of K"),
    BF16_ROW(bf16_mma_pipe_256, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 128x256 CTA, warps 64x64, 4-stage, fragments double-buffered"),
    BF16_ROW(bf16_mma_pipe_256_bk64, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 128x256 CTA, warps 64x64, 3 stages of 64-wide K, fragments double-buffered"),
    BF16_ROW(bf16_mma_pipe_128, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 0, 8, 80,
             "BF16 mma, 128x128 CTA, 4 warps 64x64, 4-stage, fragments double-buffered, 2 CTAs/SM"),
};

extern "C" const mmp_kernel_desc *mmp_kernels_bf16_mma(size_t *count)
{
    *count = sizeof bf16_mma_table / sizeof bf16_mma_table[0];
    return bf16_mma_table;
}
