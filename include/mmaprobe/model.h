/* mmaprobe/model.h — a bit-accurate model of one tensor-core dot-product-accumulate,
 * d = sum_{i<K} a_i*b_i + c, parameterised by what the arithmetic probes measure.
 *
 * Usage:
 *   const mmp_model_preset *row = mmp_model_preset_find("h100", "mma.f16.f32");
 *   mmp_model_params p = row->params;             // or fill one from the probes
 *   double d;
 *   mmp_model_dot(&d, a, b, c, 16, &p);           // a, b: K values exact in p.in_format
 *   uint32_t bits = mmp_model_fp32_bits(d);       // fp32 pattern (fp16 outputs too)
 *   double u = mmp_model_unit_roundoff(&p);       // for the runner's error bound
 *
 * The model (Fasi et al. 2021, PeerJ CS; Khattak & Mikaitis 2025, arXiv 2512.07004):
 *   - products a_i*b_i are exact; a product's exponent is e(a)+e(b) with the significands
 *     in [1,2) (subnormal inputs keep their exponent at the format's emin), so a product's
 *     significand lies in [0,4) and is not renormalised (products_normalised = 0);
 *   - K is cut into blocks of block_size products; each block is fused with the running
 *     accumulator (c for the first block, the previous block's output afterwards), blocks
 *     chained in index order (chain = MMP_MODEL_CHAIN_SEQUENTIAL);
 *   - in a block the non-zero terms are aligned to the largest exponent E (at least
 *     align_floor, the exponent floor that also applies when c = 0); each aligned term keeps
 *     23 + extra_align_bits fraction bits below 2^E and loses the rest by align_round
 *     (toward zero = truncation of magnitudes; down = two's-complement truncation, i.e. each
 *     sign rounded differently); the aligned terms are added exactly (enough carry bits);
 *   - the exact sum is normalised once per block and rounded by out_round to
 *     result_frac_bits fraction bits (23 for fp32, 10 for fp16, 13 for Hopper's narrow FP8
 *     accumulator) with the output format's exponent range; overflow gives +-Inf;
 *   - appended structures: promote (fp32 adds of zero-accumulator chains), and the sm_90
 *     mma.sync FP8 emulation (emulate_f16 + interleave + c_fadd: fp16 products dealt in pairs
 *     to two f16 blocks chained from 0, c added last by an fp32 round-to-nearest FADD);
 *   - NaN in any input, Inf*0, or +Inf with -Inf gives NaN (canonical 0x7fffffff); else an
 *     infinite term gives that infinity; an all-zero sum is +0. A c held in the output format
 *     (c_in_out_format) is converted first, so an fp32 c beyond fp16's range is an infinity.
 * Everything is exact integer arithmetic; no floating-point rounding happens in the model.
 */
#ifndef MMAPROBE_MODEL_H
#define MMAPROBE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "mmaprobe/format.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_model_chain {
    MMP_MODEL_CHAIN_SEQUENTIAL = 0  /* c + block 0, then + block 1, ... (the only order seen) */
} mmp_model_chain;

typedef struct mmp_model_params {
    mmp_format in_format;       /* fp16, bf16, tf32, e4m3, e5m2 */
    mmp_format out_format;      /* fp32 or fp16 */
    int block_size;             /* products fused per block (FMA size): 4, 8, 16, 32 */
    int extra_align_bits;       /* fraction bits kept below fp32's 23 in aligned terms (may be < 0) */
    int result_frac_bits;       /* fraction bits of the rounded block result (0: the out format's) */
    mmp_round align_round;      /* rounding of aligned terms: TOWARD_ZERO or DOWN (per sign) */
    mmp_round out_round;        /* rounding of each block's result: TOWARD_ZERO or NEAREST_EVEN */
    int align_floor;            /* smallest alignment exponent E (e.g. -133; -21 for fp16 output) */
    int in_subnormals;          /* 1: subnormal inputs kept; 0: flushed to zero */
    int out_subnormals;         /* 1: subnormal c and results kept; 0: flushed to zero */
    int c_in_out_format;        /* 1: c is first rounded (nearest-even) to the output format */
    int products_normalised;    /* 1: a product significand in [2,4) is renormalised before alignment */
    int c_unused;               /* 1: the instruction ran with a zero accumulator (wgmma FP8 vectors) */
    mmp_model_chain chain;
    /* appended (probearith2): */
    int promote;                /* 0: blocks chained in the accumulator over all K. n > 0: every n
                                   products are one instruction run with a zero accumulator, and
                                   the results are added to c in fp32 (round to nearest), as
                                   FP8 GEMMs "promote" wgmma partial sums to fp32 registers */
    /* appended (probearith3): */
    int emulate_f16;            /* 1: FP8 inputs are converted to fp16 (exact: every e4m3/e5m2
                                   value is an fp16 normal) and multiplied as fp16, so a product's
                                   exponent is that of the fp16 operands, not the FP8 subnormal
                                   emin; with block_size 16 a K = 32 instruction is two chained
                                   f16 HMMA.16816 blocks, the first one's result the second's c
                                   (mma.sync e4m3/e5m2 on sm_90: F2FP + 2 x HMMA.16816.F32) */
    int interleave;             /* 0: block j holds products j*block_size ..; g > 0: the K products
                                   are dealt to the ceil(K/block_size) blocks in groups of g,
                                   round robin (group i to block i mod nblocks), as when an
                                   emulation splits each register of 4 FP8 values into two fp16x2
                                   registers that feed different HMMAs */
    int c_fadd;                 /* 1: the blocks run from a zero accumulator and c is added to
                                   their result afterwards by an fp32 round-to-nearest FADD (the
                                   sm_90 mma.sync FP8 emulation: HMMA(0), HMMA, then FADD c) */
} mmp_model_params;

/* Defaults: fp16 in, fp32 out, block 16, extra bits 0, RZ/RZ, floor -133, subnormals kept. */
void mmp_model_params_init(mmp_model_params *p);
/* One-line description "in=fp16 out=fp32 block=16 extra=2 frac=23 align=rz out=rz floor=-133 ..." */
void mmp_model_params_format(char *buf, size_t size, const mmp_model_params *p);
mmp_status mmp_model_params_check(const mmp_model_params *p);

/* d = sum a_i*b_i + c through the model. a, b, c must be exact in their formats (a, b in
 * in_format, c in fp32); d is exact in out_format. K >= 1. */
mmp_status mmp_model_dot(double *d, const double *a, const double *b, double c, int k,
                         const mmp_model_params *p);

/* fp32 bit pattern of a model output (NaN -> 0x7fffffff); value from a pattern. */
uint32_t mmp_model_fp32_bits(double x);
double mmp_model_fp32_value(uint32_t bits);
/* 1 when two fp32 patterns are the same output (any two NaNs are the same). */
int mmp_model_fp32_same(uint32_t x, uint32_t y);

/* Unit roundoff of the accumulation: an upper bound u such that each block's result is
 * (1+delta)*(exact block sum) + (alignment loss) with |delta| <= u; the alignment loss per block
 * is at most block_size * 2^(E - 23 - extra) for truncation. Use: error bound of a K-term
 * dot product |d - exact| <= (ceil(K/b) * u + ceil(K/b) * (b+1) * 2^-(23+extra)) * sum|a_i b_i| + ...
 * (mmp_model_error_bound gives the whole bound). */
double mmp_model_unit_roundoff(const mmp_model_params *p);
/* Bound on |d - exact(sum a_i b_i + c)| for one K-term dot product with the given
 * sum of magnitudes s = sum |a_i b_i| + |c| (ignores underflow and overflow). */
double mmp_model_error_bound(const mmp_model_params *p, int k, double s);

/* Integer tensor-core dot product (mma.sync s8/u8/s4): the exact sum c + sum a_i*b_i, then
 * clamped to int32 (satfinite = 1) or wrapped modulo 2^32 (satfinite = 0). stepwise = 1 instead
 * clamps after each addition (c + p0, then + p1, ...): a model the probes test against. */
mmp_status mmp_model_int_dot(int32_t *d, const int32_t *a, const int32_t *b, int32_t c, int k,
                             int satfinite, int stepwise);

/* The runner's hook: the accumulator model for a kernel of the given precision.
 *   source: a GPU name of the parameter table ("H200"), or the path of a probe JSON written by
 *           `mmaprobe probe --json` (its "arith" array: each entry's "instruction" and "model").
 *   in, out: the kernel's input (a/b) and accumulator formats; wgmma: 1 for sm_90a wgmma kernels
 *           (the FP8 wgmma rows), 0 for mma.sync/WMMA kernels.
 * Picks the instruction "<path>.<in>.<out>" (path mma or wgmma; for wgmma FP8 the row with the
 * accumulator used, else the zero-accumulator ".c0" row), falling back to the other path. Writes
 * the parameters, the unit roundoff u (mmp_model_unit_roundoff) and the instruction used. A
 * K-term dot product's bound is then mmp_model_error_bound(p, K, sum|a_i b_i| + |c|).
 * MMP_STATUS_UNSUPPORTED when no row matches (the caller keeps its format-based bound),
 * MMP_STATUS_IO / PARSE for an unreadable probe JSON.
 * Wiring in the runner (`--acc-model GPU|probe.json`), per kernel descriptor kd:
 *   mmp_model_params p; double u; char id[32];
 *   st = mmp_model_bound_for_kernel(&p, &u, id, sizeof id, acc_model, kd->a_format,
 *                                   kd->acc_format, kd->arch_specific && kd->min_cc == 90);
 *   then per output (i,j): tol = |alpha| * mmp_model_error_bound(&p, K, sum_k |a_ik b_kj|)
 *   (+ the C term as before); on MMP_STATUS_UNSUPPORTED keep the format-based bound, and
 *   print `id` and u next to the verdict so the bound's origin is visible. */
mmp_status mmp_model_bound_for_kernel(mmp_model_params *p, double *u, char *instruction,
                                      size_t instruction_size, const char *source, mmp_format in,
                                      mmp_format out, int wgmma);

/* The model as a second reference: D~_ij of a correct kernel of the instruction family params
 * on these inputs (K in natural order, blocks chained through the accumulator; C is the
 * accumulator when alpha = beta = 1, else alpha (model A B) + beta C in binary64), and sigma_ij
 * = |alpha| sqrt(sum over blocks (unit max(|block result|, sum |a b| of the block))^2), the
 * random-walk scale of the block roundings (unit = 2^-(f+1) nearest, 2^-f toward zero; f the result's fraction bits). Without
 * a plain chain (promotion, interleave, FADD of c) sigma_ij = |alpha| unit sum |a b|. A and B
 * must be exact in params->in_format (MMP_STATUS_UNSUPPORTED otherwise). sigma may be NULL. */
typedef struct mmp_model_ref_input {
    const void *a, *b, *c;         /* host matrices in their formats/layouts; c may be NULL */
    mmp_format fa, fb, fc;
    mmp_layout la, lb, lc;
    int64_t lda, ldb, ldc, m, n, k;
    double alpha, beta;
    const mmp_model_params *params;
} mmp_model_ref_input;
mmp_status mmp_model_reference(double *d, double *sigma, const mmp_model_ref_input *in);

/* Per-GPU parameters: what `mmaprobe probe` reports (or, for GPUs we have not probed, the
 * parameters that reproduce their published vectors). */
typedef struct mmp_model_preset {
    const char *gpu;            /* "V100", "A100", "Ada", "H100", "H200", "B200" */
    const char *instruction;    /* "mma.f16.f32" : path.in.out */
    const char *source;         /* where the parameters came from */
    mmp_model_params params;
} mmp_model_preset;

const mmp_model_preset *mmp_model_presets(size_t *count);
/* Row for gpu (case-insensitive) and instruction; NULL if none. */
const mmp_model_preset *mmp_model_preset_find(const char *gpu, const char *instruction);

/* Fitting: search the parameter grid for the parameters that reproduce n observed outputs.
 * a, b: n*k values; c: n values; d_bits: n fp32 patterns. base gives the formats and the
 * fields that are not searched. Writes the best parameters and its mismatch count. */
typedef struct mmp_model_fit_result {
    mmp_model_params best;
    size_t mismatches;          /* for best */
    size_t candidates;          /* parameter sets tried */
    size_t tied;                /* other candidates with the same mismatch count */
} mmp_model_fit_result;

mmp_status mmp_model_count_mismatches(size_t *mismatches, size_t *first_bad, const double *a,
                                      const double *b, const double *c, const uint32_t *d_bits,
                                      size_t n, int k, const mmp_model_params *p);
mmp_status mmp_model_fit(mmp_model_fit_result *res, const double *a, const double *b,
                         const double *c, const uint32_t *d_bits, size_t n, int k,
                         const mmp_model_params *base);

#ifdef __cplusplus
}
#endif
#endif
