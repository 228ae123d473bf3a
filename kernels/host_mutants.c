/* host_mutants.c — deliberately broken host kernels (family "host_mutants"): each is the correct
 * fp16 -> fp32 host GEMM (16x16x16 tiles) with one planted bug, and suites/check_mutants_host.c
 * proves the runner catches each one WITH THE RIGHT REASON. Never in the default kernel list.
 *
 * Build/run: part of libmmp;  mmaprobe validate --mutants --filter 'mut_host_*'
 *
 * version 1 (mut_host_drop_k_tile) skips the last K tile (of 16): exact-mismatch
 * version 2 (mut_host_edge_tile) never writes the partial edge tile of M: unwritten
 * version 3 (mut_host_swap_fragment) swaps D(0,1) and D(1,0) of every 16x16 tile: exact-mismatch
 * version 4 (mut_host_write_past) writes one element past the end of D: guard
 * version 5 (mut_host_fp16_acc) accumulates in fp16 behind a declared fp32 accumulator:
 *           bound-exceeded on large K
 * version 6 (mut_host_nan_clamp) clamps D to +-max with fmin/fmax, swallowing NaN: nan-mismatch
 * version 7 (mut_host_wrong_ld) reads A with the tight leading dimension, not lda: exact-mismatch
 * version 8 (mut_host_scribble) writes into A after computing: input-modified
 * version 9 (mut_host_hang) never returns: ERROR timeout
 * version 10 (mut_host_crash) writes through a NULL pointer: ERROR crash
 * version 11 (mut_host_nondet) adds one fp32 ulp on every other call: nondeterministic
 * version 12 (mut_host_write_before) writes one element before the start of D: guard
 * version 13 (mut_host_wild_write) scribbles over host memory from below D downward until it
 *           faults (the heap is corrupted on the way): ERROR crash, the run goes on
 * version 14 (mut_host_m_residue) when M % 64 == 37, row M-1 of D is computed from row M-2 of A
 *           (a remainder path off by one for one residue class): exact-mismatch, in edge's sweep
 * version 15 (mut_host_ldb_is_ldd) row-major B and D: B read with ldd (the two are equal with
 *           tight or equally padded ld): exact-mismatch, in edge's ld cases that pad B or D alone
 * version 16 (mut_host_c_col_packed) column-major C read as packed row-major: exact-mismatch or
 *           bound-exceeded, in edge's alpha/beta cases with column-major C
 * version 17 (mut_host_edge_nan) partial M tiles (rows past the last multiple of 16) store 0
 *           for NaN: nan-mismatch, in edge's special cases with partial tiles
 * mut_host_control is the same kernel, descriptor and code with no bug: it must PASS every
 * case that catches the mutants above.
 * version 18 (mut_host_rz_out) converts its fp32 accumulator to the fp16 output toward zero,
 *           nearest declared: biased-rounding
 * version 19 (mut_host_flush_sub) bf16 -> fp32 (the H200 model) flushing subnormal outputs to
 *           zero, flush not declared: flushed-subnormal (wide data at small K)
 * version 20 (mut_host_narrow_low) an fp16-accumulating kernel (the H200 mma.f16.f16 model)
 *           whose accumulator keeps 6 of its 10 fraction bits: bound-exceeded against the model
 * Versions 18-20 run the tensor-core model (host_tcm.c); their controls are host_tcm_*.
 * One launcher signature: int run(const mmp_kernel_args *).
 */
#include <math.h>
#include <signal.h>

#include "mmaprobe/gemm.h"
#include "mmaprobe/registry.h"
#include "host_tcm.h"

#define TILE 16

enum { DROP_K = 1, EDGE = 2, SWAP = 4, PAST = 8, ACC16 = 16, CLAMP = 32, WRONG_LD = 64, NONDET = 128,
       M_RESIDUE = 256, LDB_IS_LDD = 512, C_COL_PACKED = 1024, EDGE_NAN = 2048 };

static size_t at(int32_t layout, int64_t ld, int64_t i, int64_t j) { return mmp_gemm_index((mmp_layout)layout, ld, i, j); }

static int mutant_gemm(const mmp_kernel_args *x, unsigned bug)
{
    static unsigned calls;
    calls++;
    int64_t kend = x->k;
    if ((bug & DROP_K) && x->k > TILE) kend = (x->k - 1) / TILE * TILE;   /* last tile, full or partial */
    int64_t lda = (bug & WRONG_LD) ? (x->layout_a == MMP_LAYOUT_ROW ? x->k : x->m) : x->lda;
    mmp_format acc = (bug & ACC16) ? MMP_FORMAT_FP16 : MMP_FORMAT_FP32;
    int64_t ldb = (bug & LDB_IS_LDD) && x->layout_b == MMP_LAYOUT_ROW && x->layout_d == MMP_LAYOUT_ROW ? x->ldd : x->ldb;
    for (int64_t i = 0; i < x->m; i++) {
        if ((bug & EDGE) && i >= x->m / TILE * TILE) continue;
        int64_t ai = (bug & M_RESIDUE) && x->m % 64 == 37 && i == x->m - 1 ? i - 1 : i;
        for (int64_t j = 0; j < x->n; j++) {
            double s = 0;
            for (int64_t k = 0; k < kend; k++) {
                double a = mmp_format_load(x->a, at(x->layout_a, lda, ai, k), MMP_FORMAT_FP16);
                double b = mmp_format_load(x->b, at(x->layout_b, ldb, k, j), MMP_FORMAT_FP16);
                s = mmp_format_round(fma(a, b, s), acc, MMP_ROUND_NEAREST_EVEN, 0);
            }
            double v = x->alpha * s;
            size_t ci = (bug & C_COL_PACKED) && x->layout_c == MMP_LAYOUT_COL ? at(MMP_LAYOUT_ROW, x->n, i, j)
                                                                             : at(x->layout_c, x->ldc, i, j);
            if (x->beta != 0 && x->c) v += x->beta * mmp_format_load(x->c, ci, MMP_FORMAT_FP32);
            if (bug & CLAMP) v = fmax(fmin(v, 3.4028234663852886e38), -3.4028234663852886e38);
            if ((bug & EDGE_NAN) && i >= x->m / TILE * TILE && isnan(v)) v = 0;
            if ((bug & NONDET) && (calls & 1) && v != 0 && isfinite(v)) v = nextafterf((float)v, INFINITY);
            int64_t ti = i, tj = j;
            if ((bug & SWAP) && i % TILE < 2 && j % TILE < 2 && i % TILE != j % TILE && i - i % TILE + 1 < x->m &&
                j - j % TILE + 1 < x->n) {
                ti = i - i % TILE + j % TILE;
                tj = j - j % TILE + i % TILE;
            }
            mmp_format_store(x->d, at(x->layout_d, x->ldd, ti, tj), v, MMP_FORMAT_FP32, MMP_ROUND_NEAREST_EVEN, 0);
        }
    }
    if (bug & PAST) {
        /* one element just past the last one of D (into the ld padding or the guard) */
        size_t last = at(x->layout_d, x->ldd, x->m - 1, x->n - 1);
        mmp_format_store(x->d, last + 1, 1.0, MMP_FORMAT_FP32, MMP_ROUND_NEAREST_EVEN, 0);
    }
    return 0;
}

#define MUT_RUN(name, bug) static int run_##name(const mmp_kernel_args *x) { return mutant_gemm(x, bug); }
MUT_RUN(drop_k_tile, DROP_K)
MUT_RUN(edge_tile, EDGE)
MUT_RUN(swap_fragment, SWAP)
MUT_RUN(write_past, PAST)
MUT_RUN(fp16_acc, ACC16)
MUT_RUN(nan_clamp, CLAMP)
MUT_RUN(wrong_ld, WRONG_LD)
MUT_RUN(nondet, NONDET)
MUT_RUN(m_residue, M_RESIDUE)
MUT_RUN(ldb_is_ldd, LDB_IS_LDD)
MUT_RUN(c_col_packed, C_COL_PACKED)
MUT_RUN(edge_nan, EDGE_NAN)
MUT_RUN(control, 0)

static int run_scribble(const mmp_kernel_args *x)
{
    int rc = mutant_gemm(x, 0);
    /* the bug: A is const in the ABI, the kernel writes into it anyway */
    mmp_format_store((void *)x->a, 0, 3.0, MMP_FORMAT_FP16, MMP_ROUND_NEAREST_EVEN, 0);
    return rc;
}

static int run_hang(const mmp_kernel_args *x)
{
    (void)x;
    for (volatile int spin = 1; spin;) {}
    return 0;
}

static int run_crash(const mmp_kernel_args *x)
{
    (void)x;
    raise(SIGSEGV);   /* what a wild pointer does, without undefined behaviour in the harness */
    return 0;
}

static int run_write_before(const mmp_kernel_args *x)
{
    int rc = mutant_gemm(x, 0);
    ((float *)x->d)[-1] = 1.0f;   /* the element before D(0,0): in the guard */
    return rc;
}

static int run_wild_write(const mmp_kernel_args *x)
{
    /* every page from 64 KiB below D downward, until an unmapped page stops it (SIGSEGV) */
    for (volatile char *p = (volatile char *)x->d - 65536;; p -= 4096) *p = 0x5A;
    return 0;
}

static int run_rz_out(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.f16.f32", 1, MMP_ROUND_TOWARD_ZERO, 0); }
static int run_flush_sub(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.bf16.f32", 1, -1, MMP_TCM_FLUSH_OUT); }
static int run_narrow_low(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.f16.f16", 1, -1, MMP_TCM_NARROW_LOW); }

/* a mutant row of other formats (versions 18-20) */
#define MUT_ROW_F(nm, in, cf, df, acc, desc)                                                      \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = "mut_host_" #nm, .family = "host_mutants",     \
     .a_format = MMP_FORMAT_##in, .b_format = MMP_FORMAT_##in, .c_format = MMP_FORMAT_##cf,        \
     .d_format = MMP_FORMAT_##df, .acc_format = MMP_FORMAT_##acc, .mul_format = -1,               \
     .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY, .layouts_d = MMP_LAYOUTS_ANY,     \
     .reads_c = 1, .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = 1,          \
     .where = MMP_KERNEL_HOST, .run = run_##nm, .description = desc}

#define MUT_ROW(nm, det, desc)                                                                    \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = "mut_host_" #nm, .family = "host_mutants",     \
     .a_format = MMP_FORMAT_FP16, .b_format = MMP_FORMAT_FP16, .c_format = MMP_FORMAT_FP32,        \
     .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,                 \
     .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY, .layouts_d = MMP_LAYOUTS_ANY,     \
     .reads_c = 1, .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = det,        \
     .where = MMP_KERNEL_HOST, .run = run_##nm, .description = desc}
static const mmp_kernel_desc mutants[] = {
    MUT_ROW(drop_k_tile, 1, "mutant: last K tile dropped"),
    MUT_ROW(edge_tile, 1, "mutant: partial edge tile of M never written"),
    MUT_ROW(swap_fragment, 1, "mutant: two elements of each 16x16 tile swapped"),
    MUT_ROW(write_past, 1, "mutant: one element written past the end of D"),
    MUT_ROW(fp16_acc, 1, "mutant: fp16 accumulation behind a declared fp32 accumulator"),
    MUT_ROW(nan_clamp, 1, "mutant: NaN swallowed by a clamp"),
    MUT_ROW(wrong_ld, 1, "mutant: A read with the tight leading dimension"),
    MUT_ROW(scribble, 1, "mutant: writes into input A"),
    MUT_ROW(hang, 1, "mutant: never returns"),
    MUT_ROW(crash, 1, "mutant: segmentation fault"),
    MUT_ROW(nondet, 1, "mutant: result differs between two runs"),
    MUT_ROW(write_before, 1, "mutant: one element written before the start of D"),
    MUT_ROW(wild_write, 1, "mutant: corrupts host memory below D until it crashes"),
    MUT_ROW(m_residue, 1, "mutant: M % 64 == 37 computes the last row from the row above"),
    MUT_ROW(ldb_is_ldd, 1, "mutant: row-major B read with D's leading dimension"),
    MUT_ROW(c_col_packed, 1, "mutant: column-major C read as packed row-major"),
    MUT_ROW(edge_nan, 1, "mutant: NaN stored as 0 in partial M tiles"),
    MUT_ROW(control, 1, "control: the mutants' kernel without a bug"),
    MUT_ROW_F(rz_out, FP16, FP32, FP16, FP32, "mutant: fp32 accumulator converted to fp16 toward zero, nearest declared"),
    MUT_ROW_F(flush_sub, BF16, FP32, FP32, FP32, "mutant: subnormal fp32 outputs flushed to zero (undeclared)"),
    MUT_ROW_F(narrow_low, FP16, FP16, FP16, FP16, "mutant: fp16 accumulator keeping 6 of its 10 fraction bits"),
};

const mmp_kernel_desc *mmp_kernels_host_mutants(size_t *count)
{
    *count = sizeof mutants / sizeof mutants[0];
    return mutants;
}
