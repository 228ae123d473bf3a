/* kernels/kern16_mma.cuh — the one mma.sync GEMM core behind the fp16_ptx and bf16_mma
 * families (CUDA C++, included by kernels/fp16_ptx.cu and kernels/bf16_mma.cu only).
 *
 * A configuration row of mmp_k16_cfgs[] (kernels/kern16_addr.h) picks the input format, the
 * accumulator, the warp tile, the pipeline depth, the shared-memory layout, B's layout, the
 * loader (ldmatrix or manual packing), the mma shape and FP32 promotion. Every address the
 * kernel computes comes from the kern16_addr.h functions that the memory maps also use.
 *
 * Design: a CTA computes a bm x bn = 128 x 128 tile of D with 8 warps of 64 x 32 (or
 * 4 warps of 64 x 64; or 128 x 256 with 8 warps of 64 x 64); K advances in 64-byte slices (32
 * 16-bit or 64 8-bit values; 128-byte slices in one tuned row) staged by cp.async in a
 * `stages`-deep ring; each warp reads its fragments with ldmatrix and issues mma.sync. Rows
 * with pipe = 1 (Hopper-tuned, bf16_mma_pipe_*) run a second main loop: fragments
 * double-buffered in registers, every stage in flight, incremental copy addresses.
 * Edges: out-of-range 16-byte chunks are zero-filled by cp.async (src-size 0) and
 * stores are bounds-checked, so M (and N for column-major B) may be anything; K and the
 * leading dimensions must be multiples of one 16-byte chunk (8 16-bit or 16 8-bit values).
 *
 *   static int run(const mmp_kernel_args *a) { return mmp_k16_mma_run<bf16_mma_swizzle>(a); }
 */
#ifndef MMAPROBE_KERN16_MMA_CUH
#define MMAPROBE_KERN16_MMA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kern16_addr.h"
#include "mma_ptx.cuh"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"

/* A tag type per configuration, named after the kernel so that the SASS function name
 * (mmp_k16_mma_kernel<bf16_mma_swizzle>) carries the descriptor name (bench/bench_kernels.sh). */
#define MMP_K16_TAG(tag, idx) struct tag { enum { id = idx }; };

template <class Tag>
__global__ void __launch_bounds__(mmp_k16_threads(mmp_k16_cfgs[Tag::id]), mmp_k16_cfgs[Tag::id].ctas_per_sm)
mmp_k16_mma_kernel(const uint8_t *__restrict__ A, const uint8_t *__restrict__ B, void *__restrict__ D,
                   int M, int N, int K, long long lda, long long ldb, long long ldd)
{
    static constexpr mmp_k16_cfg C = mmp_k16_cfgs[Tag::id];
    constexpr int MI = C.wm / 16, NJ = C.wn / 8, KS = mmp_k16_ksteps(C);
    constexpr int SB = mmp_k16_stage_bytes(C), AB = mmp_k16_a_stage_bytes(C);
    constexpr int ARB = mmp_k16_a_row_bytes(C), BRB = mmp_k16_b_row_bytes(C);
    static_assert(C.stages >= 2 && C.stages <= 4, "2- to 4-stage pipelines");
    static_assert(!C.pipe || C.b_kmajor, "the pipelined loop's incremental copies take K-major B");
    static_assert(C.b_kmajor || C.elem_bytes == 2, "ldmatrix .trans needs 16-bit B");
    static_assert(C.mma_k != 8 || !C.b_kmajor, "the k8 variant reads row-major B");

    extern __shared__ __align__(128) uint8_t smem[];
    const uint32_t sbase = mmp_k16_smem_u32(smem);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm_off = mmp_k16_wm_off(C, warp), wn_off = mmp_k16_wn_off(C, warp);
    const long long m0 = (long long)blockIdx.y * C.bm, n0 = (long long)blockIdx.x * C.bn;
    const int ktiles = (K + C.bk - 1) / C.bk;

    float acc[MI][NJ][4];          /* f32 accumulators (also the fresh fragment when promoting) */
    uint32_t acch[MI][NJ][2];      /* f16x2 accumulators */
    float master[MI][NJ][4];       /* FP32 master sum of the promoted kernels */
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = master[i][j][e] = 0.0f;
            acch[i][j][0] = acch[i][j][1] = 0u;
        }

    auto load_stage = [&](int stage, int kt) {
        const long long k0 = (long long)kt * C.bk;
        const uint32_t sa = sbase + stage * SB, sb = sa + AB;
#pragma unroll
        for (int i = 0; i < mmp_k16_copies_a(C); i++) {
            mmp_k16_copy cp = mmp_k16_copy_a(C, tid, i);
            int valid = 0;
            long long gi = mmp_k16_gidx_a(C, cp, m0, k0, M, K, lda, &valid);
            mmp_k16_cp_async16(sa + cp.smem, A + (valid ? gi * C.elem_bytes : 0), valid);
        }
#pragma unroll
        for (int i = 0; i < mmp_k16_copies_b(C); i++) {
            mmp_k16_copy cp = mmp_k16_copy_b(C, tid, i);
            int valid = 0;
            long long gi = mmp_k16_gidx_b(C, cp, n0, k0, N, K, ldb, &valid);
            mmp_k16_cp_async16(sb + cp.smem, B + (valid ? gi * C.elem_bytes : 0), valid);
        }
    };

    /* The pipelined kernels' copies (K-major B): each operand's copy 0 as a byte pointer at
     * K = 0 and a row count left below it, then copy i of slice kt is that pointer plus
     * kt * bk elements and i rows of stride rstep (mmp_k16_copy_rstep_*): one multiply-add, one
     * compare and the K test per copy instead of the general index arithmetic. */
    const mmp_k16_copy ca0 = mmp_k16_copy_a(C, tid, 0), cb0 = mmp_k16_copy_b(C, tid, 0);
    constexpr int EPC = 16 / C.elem_bytes;
    const uint8_t *ga0 = A + ((m0 + ca0.row) * lda + (long long)ca0.chunk * EPC) * C.elem_bytes;
    const uint8_t *gb0 = B + ((n0 + cb0.row) * ldb + (long long)cb0.chunk * EPC) * C.elem_bytes;
    const long long rows_a = M - m0 - ca0.row, rows_b = N - n0 - cb0.row;   /* copy i valid: i*rstep < rows */
    const long long gstep_a = (long long)mmp_k16_copy_rstep_a(C) * lda * C.elem_bytes;
    const long long gstep_b = (long long)mmp_k16_copy_rstep_b(C) * ldb * C.elem_bytes;
    auto load_stage_inc = [&](int stage, int kt) {
        const uint32_t sa = sbase + stage * SB + ca0.smem, sb = sbase + stage * SB + AB + cb0.smem;
        const long long kb = (long long)kt * C.bk * C.elem_bytes;
        const bool ka = (long long)kt * C.bk + ca0.chunk * EPC < K, kbv = (long long)kt * C.bk + cb0.chunk * EPC < K;
#pragma unroll
        for (int i = 0; i < mmp_k16_copies_a(C); i++) {
            const bool v = ka && (long long)i * mmp_k16_copy_rstep_a(C) < rows_a;
            mmp_k16_cp_async16(sa + i * mmp_k16_copy_sstep_a(C), v ? ga0 + kb + i * gstep_a : A, v);
        }
#pragma unroll
        for (int i = 0; i < mmp_k16_copies_b(C); i++) {
            const bool v = kbv && (long long)i * mmp_k16_copy_rstep_b(C) < rows_b;
            mmp_k16_cp_async16(sb + i * mmp_k16_copy_sstep_b(C), v ? gb0 + kb + i * gstep_b : B, v);
        }
    };

    /* Fragments of 16-wide (8-bit: 32-wide) K step ks of a stage: A with ldmatrix.x4 (or manual
     * 32-bit loads), B with ldmatrix.x4 (K-major) or .x2.trans (N-major, or manual 16-bit loads). */
    auto load_frag = [&](uint32_t (&a)[MI][4], uint32_t (&b)[NJ][2], int stage, int ks) {
        const uint32_t sa = sbase + stage * SB, sb = sa + AB;
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
            if constexpr (C.loader == MMP_K16_MANUAL) {
#pragma unroll
                for (int q = 0; q < 4; q++)
                    a[mi][q] = mmp_k16_lds32(sa + mmp_k16_manual_a(C, lane, wm_off, mi, ks, q));
            } else {
                mmp_k16_rc rc = mmp_k16_ldsm_a(C, lane, wm_off, mi, ks, 0);
                mmp_k16_ldsm_x4(a[mi], sa + mmp_k16_smem_off(C.smem_layout, ARB, rc.row, rc.chunk));
            }
        }
        if constexpr (C.b_kmajor) {
#pragma unroll
            for (int j = 0; j < NJ / 2; j++) {
                uint32_t r[4];
                mmp_k16_rc rc = mmp_k16_ldsm_b_kmajor(C, lane, wn_off, j, ks);
                mmp_k16_ldsm_x4(r, sb + mmp_k16_smem_off(C.smem_layout, BRB, rc.row, rc.chunk));
                b[2 * j][0] = r[0]; b[2 * j][1] = r[1];
                b[2 * j + 1][0] = r[2]; b[2 * j + 1][1] = r[3];
            }
        } else {
#pragma unroll
            for (int nj = 0; nj < NJ; nj++) {
                if constexpr (C.loader == MMP_K16_MANUAL) {
#pragma unroll
                    for (int q = 0; q < 2; q++)
                        b[nj][q] = mmp_k16_lds16_pack(sb + mmp_k16_manual_b(C, lane, wn_off, nj, ks, q, 0),
                                                      sb + mmp_k16_manual_b(C, lane, wn_off, nj, ks, q, 1));
                } else {
                    mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(C, lane, wn_off, nj, ks, 0);
                    mmp_k16_ldsm_x2_trans(b[nj], sb + mmp_k16_smem_off(C.smem_layout, BRB, rc.row, rc.chunk));
                }
            }
        }
    };
    auto mma_frag = [&](const uint32_t (&a)[MI][4], const uint32_t (&b)[NJ][2]) {
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int nj = 0; nj < NJ; nj++) {
                if constexpr (C.elem == MMP_K16_E_E4M3) mmp_k16_mma_e4m3_16832(acc[mi][nj], a[mi], b[nj]);
                else if constexpr (C.acc == MMP_K16_ACC_F16) mmp_k16_mma_f16acc_16816(acch[mi][nj], a[mi], b[nj]);
                else if constexpr (C.elem == MMP_K16_E_BF16) mmp_k16_mma_bf16_16816(acc[mi][nj], a[mi], b[nj]);
                else mmp_k16_mma_f16_16816(acc[mi][nj], a[mi], b[nj]);
            }
    };

    auto compute_stage = [&](int stage) {
        if constexpr (C.mma_k == 8) {             /* m16n8k8: ldmatrix .x2 / .x1.trans */
            const uint32_t sa = sbase + stage * SB, sb = sa + AB;
#pragma unroll
            for (int kk = 0; kk < ARB / 16; kk++) {
                uint32_t a[MI][2], b[NJ];
#pragma unroll
                for (int mi = 0; mi < MI; mi++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_a(C, lane, wm_off, mi, kk, 1);
                    mmp_k16_ldsm_x2(a[mi], sa + mmp_k16_smem_off(C.smem_layout, ARB, rc.row, rc.chunk));
                }
#pragma unroll
                for (int nj = 0; nj < NJ; nj++) {
                    mmp_k16_rc rc = mmp_k16_ldsm_b_nmajor(C, lane, wn_off, nj, kk, 1);
                    mmp_k16_ldsm_x1_trans(&b[nj], sb + mmp_k16_smem_off(C.smem_layout, BRB, rc.row, rc.chunk));
                }
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int nj = 0; nj < NJ; nj++) mmp_k16_mma_f16_1688(acc[mi][nj], a[mi], b[nj]);
            }
        } else {
#pragma unroll
            for (int ks = 0; ks < KS; ks++) {
                uint32_t a[MI][4], b[NJ][2];
                load_frag(a, b, stage, ks);
                mma_frag(a, b);
            }
        }
    };

    if constexpr (C.pipe == 1) {
        /* Pipelined (CUTLASS-style multistage): all `stages` slices in flight before the loop;
         * fragments double-buffered in registers. At the last K step of slice kt the warp
         * waits for slice kt+1 (wait_group stages-2: groups 0..kt+1 of the stages+kt
         * committed), passes the barrier (every warp has then loaded all of slice kt's
         * fragments, so its buffer takes the prefetch of slice kt+stages), issues that
         * prefetch and slice kt+1's first ldmatrix, and only then this step's mma. Slice kt
         * still lives in buffer kt % stages (the memory maps hold for both loops). */
        static_assert(C.mma_k != 8 && C.promote_k == 0 && KS % 2 == 0,
                      "the pipelined loop takes m16n8k16/k32, no promotion, an even number of K steps");
#pragma unroll
        for (int s = 0; s < C.stages; s++) {
            if (s < ktiles) load_stage_inc(s, s);
            mmp_k16_cp_commit();
        }
        mmp_k16_cp_wait<C.stages - 1>();
        __syncthreads();
        uint32_t fa[2][MI][4], fb[2][NJ][2];
        load_frag(fa[0], fb[0], 0, 0);
        for (int kt = 0; kt < ktiles; kt++) {
            const int stage = kt % C.stages;
#pragma unroll
            for (int ks = 0; ks < KS; ks++) {
                if (ks == KS - 1) {
                    mmp_k16_cp_wait<C.stages - 2>();
                    __syncthreads();
                    if (kt + C.stages < ktiles) load_stage_inc(stage, kt + C.stages);
                    mmp_k16_cp_commit();
                    if (kt + 1 < ktiles) load_frag(fa[(ks + 1) & 1], fb[(ks + 1) & 1], (kt + 1) % C.stages, 0);
                } else {
                    load_frag(fa[(ks + 1) & 1], fb[(ks + 1) & 1], stage, ks + 1);
                }
                mma_frag(fa[ks & 1], fb[ks & 1]);
            }
        }
    } else {
        /* Pipeline: stages-1 slices in flight before the loop; at step kt, wait until slice kt has
         * landed (wait_group stages-2), barrier (everyone is also done with slice kt-1, whose
         * buffer the prefetch of slice kt+stages-1 reuses), prefetch, compute. One commit per step
         * (possibly empty) keeps the group count uniform. */
#pragma unroll
        for (int s = 0; s < C.stages - 1; s++) {
            if (s < ktiles) load_stage(s, s);
            mmp_k16_cp_commit();
        }
        for (int kt = 0; kt < ktiles; kt++) {
            mmp_k16_cp_wait<C.stages - 2>();
            __syncthreads();
            const int nk = kt + C.stages - 1;
            if (nk < ktiles) load_stage(nk % C.stages, nk);
            mmp_k16_cp_commit();
            compute_stage(kt % C.stages);
            if constexpr (C.promote_k > 0) {   /* promotion to CUDA cores every promote_k of K */
                if (((kt + 1) * C.bk) % C.promote_k == 0 || kt + 1 == ktiles) {
#pragma unroll
                    for (int i = 0; i < MI; i++)
#pragma unroll
                        for (int j = 0; j < NJ; j++)
#pragma unroll
                            for (int e = 0; e < 4; e++) {
                                master[i][j][e] += acc[i][j][e];
                                acc[i][j][e] = 0.0f;
                            }
                }
            }
        }
    }
    mmp_k16_cp_wait<0>();

    /* Epilogue: accumulator register e of lane (g, t) holds row g + 8*(e >> 1), column
     * 2t + (e & 1) of the 16 x 8 block (PTX ISA, "Matrix Fragments for mma.m16n8k16", C/D). */
    const int g = lane >> 2, t = lane & 3;
    if constexpr (C.pipe > 0 && C.acc == MMP_K16_ACC_F32 && C.promote_k == 0) {
        /* registers e, e+1 are adjacent columns: one 8-byte store when D allows it */
        const bool vec = !(ldd & 1) && !((uintptr_t)D & 7);
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int nj = 0; nj < NJ; nj++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const long long row = m0 + wm_off + mi * 16 + g + 8 * h;
                    const long long col = n0 + wn_off + nj * 8 + 2 * t;
                    if (row >= M || col >= N) continue;
                    float *p = (float *)D + row * ldd + col;
                    if (vec && col + 1 < N) {
                        *(float2 *)p = make_float2(acc[mi][nj][2 * h], acc[mi][nj][2 * h + 1]);
                    } else {
                        p[0] = acc[mi][nj][2 * h];
                        if (col + 1 < N) p[1] = acc[mi][nj][2 * h + 1];
                    }
                }
    } else {
#pragma unroll
        for (int mi = 0; mi < MI; mi++)
#pragma unroll
            for (int nj = 0; nj < NJ; nj++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const long long row = m0 + wm_off + mi * 16 + g + 8 * (e >> 1);
                    const long long col = n0 + wn_off + nj * 8 + 2 * t + (e & 1);
                    if (row >= M || col >= N) continue;
                    if constexpr (C.acc == MMP_K16_ACC_F16) {
                        const uint32_t w = acch[mi][nj][e >> 1];
                        ((uint16_t *)D)[row * ldd + col] = (uint16_t)((e & 1) ? (w >> 16) : (w & 0xffffu));
                    } else {
                        ((float *)D)[row * ldd + col] = C.promote_k > 0 ? master[mi][nj][e] : acc[mi][nj][e];
                    }
                }
    }
}

/* The one launcher signature of both families. Returns MMP_KERNEL_OK, MMP_KERNEL_UNSUPPORTED
 * for arguments the kernel cannot take (layouts other than the descriptor's, leading
 * dimensions or pointers not aligned to the 16-byte cp.async chunks), or MMP_KERNEL_ERROR. */
template <class Tag> static int mmp_k16_mma_run(const mmp_kernel_args *a)
{
    constexpr mmp_k16_cfg C = mmp_k16_cfgs[Tag::id];
    const long long epc = mmp_k16_elems_per_chunk(C);
    if (a->layout_a != MMP_LAYOUT_ROW || a->layout_d != MMP_LAYOUT_ROW ||
        a->layout_b != (C.b_kmajor ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW))
        return MMP_KERNEL_UNSUPPORTED;
    if (a->m <= 0 || a->n <= 0 || a->k <= 0 || a->m > (1LL << 30) || a->n > (1LL << 30) || a->k > (1LL << 30))
        return MMP_KERNEL_UNSUPPORTED;
    if (a->k % epc || a->lda % epc || a->ldb % epc || (!C.b_kmajor && a->n % epc)) return MMP_KERNEL_UNSUPPORTED;
    if (((uintptr_t)a->a | (uintptr_t)a->b) & 15u) return MMP_KERNEL_UNSUPPORTED;
    if ((a->m + C.bm - 1) / C.bm > 65535) return MMP_KERNEL_UNSUPPORTED;
    const int smem = mmp_k16_smem_bytes(C);
    static int smem_set_for = -1;      /* the opt-in is per device; set it once per device */
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return MMP_KERNEL_ERROR;
    if (smem_set_for != dev) {
        if (cudaFuncSetAttribute(mmp_k16_mma_kernel<Tag>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) !=
            cudaSuccess)
            return MMP_KERNEL_ERROR;
        smem_set_for = dev;
    }
    dim3 grid((unsigned)((a->n + C.bn - 1) / C.bn), (unsigned)((a->m + C.bm - 1) / C.bm));
    mmp_k16_mma_kernel<Tag><<<grid, mmp_k16_threads(C), smem, (cudaStream_t)a->stream>>>(
        (const uint8_t *)a->a, (const uint8_t *)a->b, a->d, (int)a->m, (int)a->n, (int)a->k, (long long)a->lda,
        (long long)a->ldb, (long long)a->ldd);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

/* A descriptor row for configuration `tag` (positional: kernel.h's field order). */
#define MMP_K16_DESC(tag, family, fa, fd, facc, accbits, layb, nmul, kmul, cc, text)                  \
    {MMP_KERNEL_ABI_VERSION, #tag, family, fa, fa, fd, fd, facc, -1, accbits, MMP_LAYOUTS_ROW, layb,   \
     MMP_LAYOUTS_ROW, 0, 1, nmul, kmul, cc, 0, 1, MMP_KERNEL_DEVICE, NULL, mmp_k16_mma_run<tag>, text}

#endif
