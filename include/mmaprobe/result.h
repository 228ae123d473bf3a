/* mmaprobe/result.h — the one result record: environment, per-case verdict and metrics.
 *
 * Every printer (text, Markdown, JUnit, HTML) and the JSON writer/reader work on these structs;
 * JSON (reports/) is the one source of truth on disk. Fixed-size fields keep records copyable
 * across the runner's child processes (written as JSON lines, read back by the parent).
 *
 * Usage:
 *   mmp_case_result r; mmp_case_result_init(&r);
 *   snprintf(r.id, sizeof r.id, "%s", case_id);
 *   r.verdict = MMP_VERDICT_FAIL; r.reasons |= MMP_REASON_BOUND_EXCEEDED;
 *   mmp_reason_format(buf, sizeof buf, r.reasons);     // "bound-exceeded,unwritten"
 */
#ifndef MMAPROBE_RESULT_H
#define MMAPROBE_RESULT_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_verdict {
    MMP_VERDICT_PASS = 0,
    MMP_VERDICT_FAIL = 1,
    MMP_VERDICT_ERROR = 2,
    MMP_VERDICT_SKIP = 3,
    MMP_VERDICT_COUNT_
} mmp_verdict;

/* FAIL reasons and ERROR causes (bit mask); printable names in mmp_reason_name(). */
typedef enum mmp_reason {
    MMP_REASON_UNWRITTEN = 1u << 0,        /* output element still holds poison/sentinel */
    MMP_REASON_GUARD = 1u << 1,            /* guard region or ld padding overwritten */
    MMP_REASON_INPUT_MODIFIED = 1u << 2,   /* A, B or C changed by the kernel */
    MMP_REASON_EXACT_MISMATCH = 1u << 3,   /* exact inputs, output != reference bitwise */
    MMP_REASON_BOUND_EXCEEDED = 1u << 4,   /* |error| > tolerance somewhere */
    MMP_REASON_NAN_MISMATCH = 1u << 5,     /* NaN/Inf where reference has none, or vice versa */
    MMP_REASON_NONDETERMINISTIC = 1u << 6, /* two runs differ bitwise */
    MMP_REASON_SANITIZER = 1u << 7,        /* compute-sanitizer reported an error */
    MMP_REASON_LAUNCH = 1u << 8,           /* ERROR: kernel returned an error / launch failed */
    MMP_REASON_CUDA = 1u << 9,             /* ERROR: CUDA error (e.g. illegal address) */
    MMP_REASON_CRASH = 1u << 10,           /* ERROR: the child process died (signal) */
    MMP_REASON_TIMEOUT = 1u << 11,         /* ERROR: the case ran past its timeout */
    MMP_REASON_UNSUPPORTED = 1u << 12,     /* SKIP: device/shape/layout not supported */
    MMP_REASON_OVERFLOW = 1u << 13,        /* fact: exact int result overflows int32 */
    MMP_REASON_INTERRUPTED = 1u << 14,     /* ERROR: run interrupted (SIGINT/SIGTERM) */
    MMP_REASON_BIASED_ROUNDING = 1u << 15, /* the kernel's conversion to a narrower output
                                              rounds one way where nearest is declared */
    MMP_REASON_FLUSHED_SUBNORMAL = 1u << 16, /* zero where the reference is a subnormal the
                                              hardware keeps, undeclared flush */
    MMP_REASON_PROTOCOL = 1u << 17,        /* ERROR: the kernel's process sent what the runner
                                              never sends (forged, garbled, another process) */
    MMP_REASON_COUNT_ = 18
} mmp_reason;

const char *mmp_verdict_name(mmp_verdict v);          /* "PASS", "FAIL", "ERROR", "SKIP" */
mmp_status mmp_verdict_from_name(mmp_verdict *v, const char *s); /* case-insensitive; INVALID if unknown */
const char *mmp_reason_name(mmp_reason bit);          /* "bound-exceeded", ... */
/* Comma-separated names of the bits in mask into buf; returns buf. */
char *mmp_reason_format(char *buf, size_t size, uint32_t mask);
/* Comma-separated reason names (as mmp_reason_format writes them) into *mask; INVALID on an
 * unknown name (*mask untouched). */
mmp_status mmp_reason_parse(uint32_t *mask, const char *list);

#define MMP_HIST_BINS 16   /* error/bound histogram: bin b holds ratios in [edge(b), edge(b+1)) */
#define MMP_HEAT_MAX 64    /* heatmap cells per side at most */

/* The mark of a heatmap cell: the worst kind of element in its block, drawn over the error
 * colour (an unwritten element is set to the reference's value before the comparison, so its
 * cell would otherwise show no error). Ordered: a cell keeps the largest mark of its elements. */
typedef enum mmp_heat_mark {
    MMP_HEAT_MARK_NONE = 0,        /* only the error magnitude (the cell's colour) */
    MMP_HEAT_MARK_GUARD = 1,       /* guard or ld padding of D overwritten next to this block */
    MMP_HEAT_MARK_NAN = 2,         /* a NaN/Inf class mismatch (counted in nan_/inf_mismatch) */
    MMP_HEAT_MARK_UNWRITTEN = 3,   /* an element still holding poison (counted in n_unwritten) */
    MMP_HEAT_MARK_COUNT_
} mmp_heat_mark;
const char *mmp_heat_mark_name(mmp_heat_mark k);      /* "none", "guard", "nan", "unwritten" */

/* Bin edges of the error/bound histogram: 0, 2^-14, 2^-13, ..., 2^-1, 1, +inf  (bin 15 = > 1). */
double mmp_hist_edge(int bin);

typedef struct mmp_metrics {
    int64_t count;                 /* elements compared */
    int64_t nan_mismatch;          /* NaN in one and not the other (counted first, apart) */
    int64_t inf_mismatch;          /* Inf where the reference is finite or of the other sign */
    double max_abs_err;
    double max_rel_err;            /* over elements with reference != 0 */
    double norm_rel_err;           /* ||D~ - D||_F / ||D||_F (0 if both are 0) */
    double max_ulp;                /* in units of the output format's ulp at the reference */
    double u_acc;                  /* unit roundoff used for the bounds */
    double max_ratio_det;          /* max |err| / deterministic bound */
    double max_ratio_prob;         /* max |err| / probabilistic bound (lambda sqrt(K) u) */
    double lambda;                 /* the probabilistic bound's lambda */
    int64_t above_det;             /* elements with |err| > deterministic bound */
    int64_t above_prob;            /* elements with |err| > probabilistic bound */
    int64_t above_tol;             /* elements beyond the tolerance in force (the verdict's) */
    int64_t worst_i, worst_j;      /* position of the largest error/bound ratio (-1: none) */
    double worst_got, worst_want;  /* values there */
    int64_t first_bad_i, first_bad_j; /* first element failing the tolerance / exactness */
    uint64_t hist[MMP_HIST_BINS];  /* histogram of |err| / deterministic bound */
    int32_t heat_rows, heat_cols;  /* 0 if no heatmap; cells hold max |err|/bound per block */
    float heat[MMP_HEAT_MAX * MMP_HEAT_MAX];
    uint8_t heat_mark[MMP_HEAT_MAX * MMP_HEAT_MAX]; /* mmp_heat_mark per cell, same shape as heat */
} mmp_metrics;

/* The heatmap cell of element (i, j) of an m x n output (rows, cols: the heatmap's shape). */
static inline int mmp_heat_cell(int64_t i, int64_t j, int64_t m, int64_t n, int rows, int cols)
{
    return (int)(i * rows / m) * cols + (int)(j * cols / n);
}
/* Raise cell's mark to k (a cell keeps its worst mark). */
static inline void mmp_heat_mark_raise(uint8_t *cell, mmp_heat_mark k)
{
    if (*cell < (uint8_t)k) *cell = (uint8_t)k;
}

void mmp_metrics_init(mmp_metrics *m);

/* Where a case's time goes (time_stage_ms[]; JSON time_<name>_ms): input generation, the
 * certified reference, restoring inputs + canaries + poison before each run, host<->device
 * copies, the launches themselves (wall, synchronised), guard/padding/input checks, and the
 * comparison (unwritten, nondeterminism, metrics), and memory: allocating the output copies and
 * workspace and releasing every buffer of the case (the operands' allocation is in inputs). Their sum is time_total_ms less bookkeeping.
 * context: creating the CUDA context of a kernel's forked child, charged to the child's first
 * case and NOT part of time_total_ms (a preforked child creates it while the previous kernel
 * runs: off the critical path). */
typedef enum mmp_stage {
    MMP_STAGE_INPUTS, MMP_STAGE_REFERENCE, MMP_STAGE_POISON, MMP_STAGE_TRANSFER,
    MMP_STAGE_LAUNCH, MMP_STAGE_GUARDS, MMP_STAGE_COMPARE, MMP_STAGE_MEMORY, MMP_STAGE_CONTEXT, MMP_STAGE_COUNT_
} mmp_stage;
const char *mmp_stage_name(mmp_stage s);   /* "inputs", "reference", ...; NULL out of range */
/* One line "time by stage: inputs 0.12 s (3%), reference ...; CUDA contexts 0.4 s" for summed
 * stage times (ms); the context time is outside the percentages (not on the cases' clock). */
void mmp_stage_print(FILE *out, const double ms[MMP_STAGE_COUNT_]);

typedef struct mmp_case_result {
    char id[256];                  /* kernel/a.b.d/MxNxK[/ld...]/dist/sSEED */
    char kernel[96];
    char family[64];
    char precision[48];            /* "bf16.bf16.f32" : a.b.d formats */
    char dist[24];
    char suite[32];
    int64_t m, n, k, lda, ldb, ldc, ldd;
    uint64_t seed;
    mmp_verdict verdict;
    uint32_t reasons;              /* MMP_REASON_* bits */
    char message[512];             /* one line: what failed, where (first positions) */
    char tolerance[32];            /* "bound", "probabilistic", "bitwise", "atol/rtol", "ulps" */
    mmp_metrics metrics;
    int64_t n_mpfr;                /* reference elements recomputed exactly with MPFR */
    int64_t n_exact;               /* reference elements the bound left open, decided by the exact evaluator */
    int64_t n_dot;                 /* reference elements the bound left open, decided by the dot stage */
    int64_t n_unwritten, n_guard, n_input_modified, n_nondet;
    double time_kernel_ms;         /* median kernel time (timing mode) or single launch */
    double time_reference_ms;
    double time_total_ms;
    /* the case's wall time by stage (both runs summed; schema 1.1): see mmp_stage */
    double time_stage_ms[MMP_STAGE_COUNT_];
    int32_t shard_index, shard_count;
    int32_t device;
} mmp_case_result;

void mmp_case_result_init(mmp_case_result *r);


typedef struct mmp_env {
    char gpu[128];                 /* "NVIDIA H200" or "none" */
    int32_t cc_major, cc_minor;    /* 0 when no device */
    int32_t sm_count;
    char driver[32], runtime[32], cublas[32], mpfr[32], check[32];
    char blas[64];                 /* the CPU reference's CBLAS (mmp_ref_blas_name; "" if unknown) */
    char git_sha[48];
    char hostname[64];
    char started[32];              /* ISO 8601 UTC */
    char command[1024];            /* command line */
    uint64_t seed;
    int32_t device;                /* CUDA device ordinal used (-1: none) */
    char no_device_reason[160];    /* why there is no device, if none */
} mmp_env;

void mmp_env_init(mmp_env *e);

#ifdef __cplusplus
}
#endif
#endif
