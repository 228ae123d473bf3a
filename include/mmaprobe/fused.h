/* mmaprobe/fused.h — the fused INT4 operator: a fused INT4 group-scaled GEMM with a low-rank residual
 * branch and a per-column affine, its exact reference, error budgets, quantisation, shared-memory
 * budget and the operator table of its CUDA kernels (kernels/int4_fused.cu).
 *
 *   Y = Q + R + beta,   Q_ij = sum_G sx_iG sw_jG (sum_{k in G} xq_ik wq_jk),   R = (X A) B
 *
 *   xq  M x K int4 (two per byte, low nibble first, K contiguous)   sx  M x K/g scales (fp16|bf16)
 *   wq  N x K int4 (K contiguous)                                   sw  N x K/g scales
 *   x   M x K bf16 (the unquantised activations)   a  K x r bf16   b  r x N bf16   (row-major)
 *   beta N fp32                                    y  M x N fp32 row-major
 *
 * Usage:
 *   mmp_fused_problem p = {.m = 256, .n = 256, .k = 1024, .group = 64, .rank = 32,
 *                          .scale_format = MMP_FORMAT_FP16};
 *   mmp_fused_host h; mmp_fused_host_init(&h, &p);                  // host operands
 *   mmp_fused_host_fill(&h, seed);                                    // quantises a random X
 *   mmp_fused_ref r; mmp_fused_ref_init(&r, &p);
 *   mmp_fused_ref_compute(&r, &h, MMP_FUSED_PART_FUSED);              // exact, then rounded
 *   mmp_fused_emulate(y, &h, MMP_FUSED_PART_FUSED, NULL);              // kernel order, host
 *   mmp_fused_budget_elem(&ref, i, j, part);                           // allowed |err| of (i,j)
 *   size_t n; const mmp_fused_op *ops = mmp_fused_ops(&n);             // the CUDA kernels
 *   mmp_fused_decision d = {0};                                       // d.grid > 0: cap (tests)
 *   ops[i].run(&dev_operands, &p, stream, &d, verbose);                // MMP_KERNEL_OK / ...
 *   mmp_fused_smem_budget b; mmp_fused_smem_budget_make(&b, d.mode, d.stages, MMP_FUSED_FAULT_NONE);
 *   mmp_fused_smem_budget_check(&b, d.smem_limit, d.stages, d.smem_static + d.smem_dynamic);
 *
 * The kernels are reached through mmp_fused_ops() only: nothing of the operator fits the GEMM ABI
 * (kernel.h has no slots for scales, X, A, B, beta, and int4 inputs with an fp32 output is an
 * impossible descriptor for the runner), so the family getter mmp_kernels_int4_fused is empty.
 *
 * Components (mmp_fused_part), each checkable alone:
 *   DECODE   int4 nibbles of wq -> int8 (one byte per element): bitwise.
 *   DEQUANT  wq_jk * sw_jG -> fp32: bitwise (exact: an int4 times an fp16/bf16 has <= 15 bits).
 *   QGEMM    Y = Q: bitwise equal to the host emulation of the kernel's order (int32 group sums are
 *            exact; then y = fmaf((float)acc_G, sx*sw, y) over G in order) and within
 *            gamma_{G}(2^-24) sum_G |acc_G| sx sw of the exact Q (G = K/g fmaf roundings).
 *   DOWN     Y = T = X A (M x r): tensor-core bf16 mma with fp32 accumulation, within
 *            gamma_{Ke}(2^-23) (|X||A|)_it, Ke = K + ceil(K/4) + 1 (truncating block FMA, metrics.h).
 *   LOWRANK  Y = R = T B: within (g_T + g_r + g_T g_r)(|X||A||B|)_ij, g_T = gamma_{Ke}(2^-23),
 *            g_r = gamma_r(2^-24) (the r fmaf of the epilogue).
 *   AFFINE   Y = Z + beta (Z given, fp32): bitwise equal to RN(Z + beta).
 *   FUSED    Y = (Q + R) + beta: within e_Q + e_R + (2u + u^2)(S_Q + e_Q + S_R + e_R) + u|beta|,
 *            u = 2^-24 (two fp32 additions of the epilogue).
 * Every budget is per element, computed from the data's absolute sums (mmp_fused_ref), the
 * precisions and K: no tolerance constants.
 */
#ifndef MMAPROBE_FUSED_H
#define MMAPROBE_FUSED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/format.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmp_fused_problem {
    int64_t m, n, k;
    int32_t group;              /* g: K elements per scale group */
    int32_t rank;               /* r */
    mmp_format scale_format;    /* MMP_FORMAT_FP16 or MMP_FORMAT_BF16 */
} mmp_fused_problem;

/* Bad shape / format -> MMP_STATUS_INVALID with a one-line message. */
mmp_status mmp_fused_problem_check(const mmp_fused_problem *p);

typedef enum mmp_fused_part {
    MMP_FUSED_PART_DECODE = 0,
    MMP_FUSED_PART_DEQUANT = 1,
    MMP_FUSED_PART_QGEMM = 2,
    MMP_FUSED_PART_DOWN = 3,
    MMP_FUSED_PART_LOWRANK = 4,
    MMP_FUSED_PART_AFFINE = 5,
    MMP_FUSED_PART_FUSED = 6,
    MMP_FUSED_PART_COUNT_
} mmp_fused_part;
const char *mmp_fused_part_name(mmp_fused_part part);   /* "decode", "dequant", ... */
/* Output shape of a part: rows x cols of fp32 (DECODE: int8) row-major. */
void mmp_fused_part_shape(int64_t *rows, int64_t *cols, const mmp_fused_problem *p, mmp_fused_part part);

/* Operands (host or device pointers; formats as above). z: AFFINE's input (M x N fp32). */
typedef struct mmp_fused_operands {
    const void *xq, *sx, *wq, *sw, *x, *a, *b;
    const float *beta, *z;
    void *y;                    /* output of the part (mmp_fused_part_shape) */
} mmp_fused_operands;

/* ---- host operands (reference/quant.c) ---- */
typedef struct mmp_fused_host {
    mmp_fused_problem p;
    uint8_t *xq, *wq;           /* packed int4 */
    uint16_t *sx, *sw;          /* scale bits */
    uint16_t *x, *a, *b;        /* bf16 bits */
    float *beta, *z;
    double *xf, *wf;            /* the real-valued X and W that were quantised (SNR) */
} mmp_fused_host;
mmp_status mmp_fused_host_init(mmp_fused_host *h, const mmp_fused_problem *p);
void mmp_fused_host_clear(mmp_fused_host *h);
/* Deterministic random data from seed: X, W normal; xq, sx = quantise(X), wq, sw = quantise(W);
 * x = bf16(X); A, B ~ normal / sqrt; beta, z normal. */
mmp_status mmp_fused_host_fill(mmp_fused_host *h, uint64_t seed);
mmp_fused_operands mmp_fused_host_operands(const mmp_fused_host *h, void *y);

/* ---- quantisation (reference/quant.c) ---- */
/* Symmetric absmax int4 per group along each row: s = RN_fmt(max|v| / 7) (1 if the group is 0),
 * q = clamp(RN(v / s), -8, 7), packed two per byte. v is rows x k row-major. */
mmp_status mmp_fused_quantize(uint8_t *q, uint16_t *scales, const double *v, int64_t rows, int64_t k,
                              int32_t group, mmp_format scale_format);
/* Dequantise: out[i*k + kk] = q * s (exact in binary64 and in fp32). */
void mmp_fused_dequantize(double *out, const uint8_t *q, const uint16_t *scales, int64_t rows,
                          int64_t k, int32_t group, mmp_format scale_format);
int mmp_fused_int4(const uint8_t *q, int64_t idx);          /* element idx, sign-extended */
double mmp_fused_scale(const uint16_t *s, int64_t idx, mmp_format scale_format);
/* SNR in dB of v against its round trip, and a guaranteed lower bound from |err| <= s/2. */
typedef struct mmp_fused_snr { double snr_db, snr_bound_db, max_err_over_half_step; } mmp_fused_snr;
mmp_status mmp_fused_roundtrip(mmp_fused_snr *out, const double *v, int64_t rows, int64_t k,
                               int32_t group, mmp_format scale_format);

/* ---- exact reference and budgets (reference/fused_ref.c, fused_exact.c) ---- */
typedef struct mmp_fused_ref {
    mmp_fused_problem p;
    mmp_fused_part part;
    int64_t rows, cols;
    double *want64;             /* exact result rounded to binary64 */
    float *want32;              /* exact result rounded to fp32 (nearest even) */
    double *budget;             /* allowed |got - exact| per element (0: bitwise) */
    double *absq, *absr;        /* S_Q, S_R per element (upper bounds), for the fused budget */
} mmp_fused_ref;
void mmp_fused_ref_init(mmp_fused_ref *r);
void mmp_fused_ref_clear(mmp_fused_ref *r);
/* Computes the exact part (every sum exact in a long accumulator, on every core; MPFR for
 * non-finite operands, and as the tests' oracle), rounds it once, and each element's budget. */
mmp_status mmp_fused_ref_compute(mmp_fused_ref *r, const mmp_fused_host *h, mmp_fused_part part);
/* The host emulation of the kernels' arithmetic order (fp32, fmaf). DOWN is computed in a plain
 * fp32 fmaf order (the hardware's is unknown); t_gpu (M x r, or NULL) replaces it in LOWRANK and
 * FUSED so that, given the device's T, the epilogue can be compared bit for bit. */
mmp_status mmp_fused_emulate(void *y, const mmp_fused_host *h, mmp_fused_part part, const float *t_gpu);

/* Comparison of got (fp32, or int8 for DECODE) with a reference: the verdict of one component. */
typedef struct mmp_fused_check {
    int64_t n, n_bad, first_bad;  /* elements, above budget (or not bitwise for budget 0) */
    double max_err, max_ratio;    /* max |got - exact|, max |err| / budget (budget > 0) */
    double max_budget;            /* largest per-element budget */
    int64_t n_nan;
} mmp_fused_check;
void mmp_fused_check_compare(mmp_fused_check *c, const void *got, const mmp_fused_ref *r);
/* Bit-for-bit equality of two fp32 (or int8 for DECODE) arrays: number of differing elements. */
int64_t mmp_fused_bitwise_diff(const void *a, const void *b, int64_t count, mmp_fused_part part, int64_t *first);
/* Write "part: n=.. bad=.. max_err=.. max_budget=.. ratio=.. reason" (one line). */
void mmp_fused_check_print(FILE *out, const char *label, const mmp_fused_check *c, const mmp_fused_ref *r);
const char *mmp_fused_budget_reason(mmp_fused_part part);  /* the one-line derivation */

/* ---- shared-memory budget (kernels/int4_fused_budget.c) ---- */
typedef enum mmp_fused_mode {
    MMP_FUSED_MODE_SIMPLE = 0,      /* one CTA per tile, 8 warps load and compute, 1 stage */
    MMP_FUSED_MODE_PERSISTENT = 1,  /* persistent, 1 producer warp + 8 consumer warps, S stages */
    MMP_FUSED_MODE_COUNT_
} mmp_fused_mode;
const char *mmp_fused_mode_name(mmp_fused_mode mode);

typedef enum mmp_fused_smem_kind {
    MMP_FUSED_SMEM_MAIN = 0, MMP_FUSED_SMEM_SCALE, MMP_FUSED_SMEM_RESIDUAL, MMP_FUSED_SMEM_SYNC,
    MMP_FUSED_SMEM_PADDING, MMP_FUSED_SMEM_KIND_COUNT_
} mmp_fused_smem_kind;

/* Fault injection for the tests: the seed's bug (a buffer counted twice). */
typedef enum mmp_fused_budget_fault {
    MMP_FUSED_FAULT_NONE = 0,
    MMP_FUSED_FAULT_RANKUP_TWICE = 1,   /* the rank-up B tile counted twice (fixed part) */
    MMP_FUSED_FAULT_X_TWICE = 2         /* the per-stage X tile counted twice: stages halve */
} mmp_fused_budget_fault;

enum { MMP_FUSED_BUDGET_MAX_PARTS = 16 };
typedef struct mmp_fused_smem_part {
    const char *name;
    mmp_fused_smem_kind kind;
    int per_stage;              /* 1: replicated per pipeline stage */
    uint32_t logical_bytes;     /* the algorithm's data volume of one copy */
    uint32_t ctas_sharing;      /* CTAs that split one logical copy (1 in these kernels) */
    uint32_t per_cta_bytes;     /* bytes one CTA allocates for one copy: logical / sharing */
    uint32_t total_bytes;       /* per_cta_bytes x (stages if per_stage) */
} mmp_fused_smem_part;

typedef struct mmp_fused_smem_budget {
    mmp_fused_mode mode;
    mmp_fused_budget_fault fault;
    int stages;
    int nparts;
    mmp_fused_smem_part part[MMP_FUSED_BUDGET_MAX_PARTS];
    uint32_t by_kind[MMP_FUSED_SMEM_KIND_COUNT_];
    uint32_t stage_bytes, fixed_bytes, total;   /* total = stages * stage_bytes + fixed_bytes */
} mmp_fused_smem_budget;

/* Itemised budget of a mode at a stage count (independent of the kernel's layout code). */
mmp_status mmp_fused_smem_budget_make(mmp_fused_smem_budget *b, mmp_fused_mode mode, int stages,
                                      mmp_fused_budget_fault fault);
void mmp_fused_smem_budget_print(FILE *out, const mmp_fused_smem_budget *b);
/* Bytes the kernel's layout needs (kernels/int4_fused_layout.h) for a mode at a stage count. */
uint32_t mmp_fused_smem_layout_bytes(mmp_fused_mode mode, int stages);
/* The stage-count decision: the most stages (<= 8) whose bytes fit in limit; from the budget
 * (fault applied) or, with budget_only == 0, from the layout the kernel uses. 0 if none fit. */
int mmp_fused_pick_stages(mmp_fused_mode mode, uint32_t limit, mmp_fused_budget_fault fault, int budget_only);
/* Shared memory per CTA allowed when ctas_per_sm CTAs share an SM of smem_per_sm bytes, each
 * block reserving reserved_per_block, capped by the per-block opt-in maximum. */
uint32_t mmp_fused_smem_limit(uint32_t smem_per_sm, uint32_t optin_per_block, uint32_t reserved_per_block,
                              int ctas_per_sm);
/* Cross-check: budget total == the layout's bytes, every kind equal, the stage count the budget
 * picks == the one the kernel picks, and (when measured > 0) == measured (static + dynamic from
 * cudaFuncGetAttributes). MMP_STATUS_INTERNAL with the first mismatch named. */
mmp_status mmp_fused_smem_budget_check(const mmp_fused_smem_budget *b, uint32_t limit, int kernel_stages,
                                       uint32_t measured);

/* ---- the CUDA operator table (kernels/int4_fused.cu; empty without CUDA) ---- */
typedef struct mmp_fused_decision {
    mmp_fused_mode mode;
    int stages, threads, tile_m, tile_n, tile_k;
    uint32_t smem_dynamic, smem_static, smem_limit;
    int ctas_per_sm, grid, tiles, sms, regs;
} mmp_fused_decision;
/* decision: NULL, or filled on return; if decision->grid > 0 on entry, the persistent grid is
 * capped at it (tests use it to give each CTA several tiles). */
typedef int (*mmp_fused_run_fn)(const mmp_fused_operands *o, const mmp_fused_problem *p, void *stream,
                                mmp_fused_decision *decision, int verbose);
typedef struct mmp_fused_op {
    const char *name;           /* "int4_fused_simple", ... */
    mmp_fused_mode mode;
    mmp_fused_part part;
    int min_cc;
    mmp_fused_run_fn run;       /* MMP_KERNEL_OK, MMP_KERNEL_UNSUPPORTED (SKIP) or error */
    const char *description;
} mmp_fused_op;
const mmp_fused_op *mmp_fused_ops(size_t *count);
const mmp_fused_op *mmp_fused_op_find(const char *name);
/* GPU validation: each op is an operator case of the runner (runner.h mmp_case_init_fused;
 * suites/fused_cases.c), in the built-in suites as int4_fused_* cases. */
/* Prints the runtime decisions (smem per CTA, stages, tile, CTAs per SM) one line. */
void mmp_fused_decision_print(FILE *out, const char *name, const mmp_fused_decision *d);

#ifdef __cplusplus
}
#endif
#endif
