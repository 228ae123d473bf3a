/* mmaprobe/reference.h — the reference GEMM: D = alpha op(A) op(B) + beta C, EXACT, correctly
 * rounded once to binary64 and (separately) to the output format, round to nearest even.
 * The model is mpfr_dot: every product exact, one exact sum, one rounding.
 *
 * Usage:
 *   mmp_gemm g; mmp_gemm_init(&g, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32,
 *                             MMP_FORMAT_FP32, m, n, k);
 *   mmp_ref_options o; mmp_ref_options_init(&o);         // certified CPU path, all cores
 *   o.want_absbound = 1;                                 // S_ij for the metrics' bounds
 *   mmp_ref_result r; mmp_ref_result_init(&r);
 *   if (mmp_ref_gemm(&r, a, b, c, &g, &o) != MMP_STATUS_OK) puts(mmp_error_last());
 *   r.d64[i * n + j];     // exact D_ij rounded to binary64          (row-major M x N always)
 *   r.dout[i * n + j];    // exact D_ij rounded to g.d (as a double)
 *   r.absbound[i*n+j];    // >= |alpha| (|A||B|)_ij + |beta| |C_ij|  (when asked)
 *   r.n_mpfr;             // elements the certified path recomputed with MPFR
 *   mmp_ref_result_clear(&r);
 *
 * Paths (o.path):
 *   MMP_REF_PATH_MPFR       pure MPFR, pthreads over rows: exact products, one mpfr_sum.
 *   MMP_REF_PATH_CERTIFIED  (default) error-free Ozaki slicing + OpenBLAS DGEMM + a rigorous
 *                           per-element bound; what the bound cannot decide (most elements of
 *                           data spanning a wide exponent range, NaN/Inf rows, exact zeros)
 *                           goes to the dot stage (each element's dot product as an
 *                           error-tracked double-double sum: r.split.n_dot), then to an exact
 *                           long accumulator (r.n_exact), MPFR only for what that declines.
 *   MMP_REF_PATH_CUDA       the same scheme with cuBLAS on the device (CUDA builds only;
 *                           MMP_STATUS_UNSUPPORTED otherwise). a, b, c are HOST pointers; the
 *                           device copies are made and freed inside. Call it only in a process
 *                           that will not fork afterwards (the runner's child). Version 2
 *                           (default, ref_cuda2.cu) uploads the native formats and does every
 *                           O(n^2) stage, the dot stage included, on the device; version 1
 *                           (ref_cuda.cu, o.device_version = 1 or MMP_REF_DEVICE_VERSION=1)
 *                           prepares and decides on the host.
 * Integer A and B (int8/uint8/int4/uint4/int32) with integer alpha, beta (|.| <= 2^31) and an
 * integer C (or beta = 0): r.i64 holds the exact D in int64 (r.is_integer = 1) and
 * r.n_int32_overflow counts elements whose exact D lies outside int32 (a fact, not an error).
 * Both certified paths compute integers on the host (one exact DGEMM, or an int128 loop),
 * except the device path with keep_device: its version 2 decides them (no i64, is_integer 0).
 * Speed: OpenBLAS chooses its kernels from the CPU model; on VMs hiding it, set
 * OPENBLAS_CORETYPE (e.g. SkylakeX, Haswell) or it runs SSE3 kernels (bench_reference.sh).
 *
 * Special values follow MPFR on the exact expression: any NaN product (NaN input, 0 * Inf)
 * gives NaN; +Inf and -Inf products give NaN; one sign of Inf gives that Inf; alpha * Inf with
 * alpha = 0 gives NaN; beta = 0 means C is not read. An exact zero is +0 unless every term is
 * -0 (IEEE sum rule, as mpfr_sum). NaN results are the default quiet NaN.
 */
#ifndef MMAPROBE_REFERENCE_H
#define MMAPROBE_REFERENCE_H

#include <stdint.h>
#include "mmaprobe/gemm.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_ref_path {
    MMP_REF_PATH_CERTIFIED = 0,
    MMP_REF_PATH_MPFR = 1,
    MMP_REF_PATH_CUDA = 2
} mmp_ref_path;

typedef struct mmp_ref_options {
    int threads;          /* host threads; 0 = every online CPU (> 0 also sets OpenBLAS's) */
    mmp_ref_path path;
    int force_mpfr;       /* certified paths: send every element to MPFR (testing) */
    int want_absbound;    /* fill r->absbound */
    int device;           /* CUDA device for MMP_REF_PATH_CUDA */
    int slices;           /* Ozaki slices per operand; 0 = chosen from the formats and K */
    int device_version;   /* MMP_REF_PATH_CUDA: 0 = version 2 where it applies (else 1), 1 = force
                             version 1, 2 = version 2 or MMP_STATUS_UNSUPPORTED. The environment
                             variable MMP_REF_DEVICE_VERSION=1|2 overrides 0. */
    /* appended: device copies of A, B (and C when beta != 0) in the host operands' formats,
     * layouts and leading dimensions, on `device` (e.g. what a harness uploaded for the kernel
     * under test). Version 2 reads them instead of uploading its own (split.upload_s stays 0);
     * the host operands are still needed for the MPFR recomputation. NULL: upload. */
    const void *dev_a, *dev_b, *dev_c;
    /* appended: version 2 leaves d64, dout and absbound on the device (r->dev_d64, dev_dout,
     * dev_absbound, freed by mmp_ref_result_clear) and the host arrays NULL: no download. Other
     * paths ignore it (their results are on the host). */
    int keep_device;
    /* appended: with dev_a/dev_b, the host operands may still be unfilled; host_operands(ctx),
     * when set, is called once before anything reads them (the device path only reads them for
     * elements it leaves undecided; other paths read them at once) and fills them. */
    mmp_status (*host_operands)(void *ctx);
    void *host_ctx;
    /* appended: certified paths, slice pairs s + t <= levels only (a triangle, bounded; with
     * slices = 0 each operand gets levels - 1 slices); 0 = chosen from the data (tests force it) */
    int levels;
    /* appended: device path version 2, the route of its exact slice products: 0 = chosen by the
     * plan's cost model (the environment variable MMP_REF_IMMA=0|1 overrides 0), 1 = int8 slices
     * on integer tensor cores (cublasGemmEx, int32 results) where the formats allow, 2 = binary64
     * slices and cublasDgemm. Other paths ignore it. */
    int imma;
    /* appended: certified CPU path, the route of its exact slice products: 0 = chosen by the
     * cost of each (the environment variable MMP_REF_LISTS=0|1 overrides 0), 1 = lists of the
     * slices' nonzero digits wherever the slices are at most 25 bits (K >= 32), 2 = DGEMMs.
     * Other paths ignore it. */
    int lists;
    /* appended: device path version 2 on the int8 route, a square of slices by residues (one
     * int8 GEMM per modulus instead of one per slice pair; Ozaki scheme II): 0 = the
     * environment variable MMP_REF_CRT (0 = never, 3 = every square, unset or anything else =
     * weighed by cost), 1 = weighed by cost, 2 = never, 3 = every square. Other paths ignore it. */
    int crt;
} mmp_ref_options;

typedef struct mmp_ref_timing {
    double convert_s;     /* loading the formats into binary64 (and uploads) */
    double gemm_s;        /* slice GEMMs (DGEMM / cuBLAS) */
    double combine_s;     /* accurate combination, bound and decision */
    double mpfr_s;        /* MPFR recomputation (or the whole MPFR path) */
    double exact_s;       /* the exact long-accumulator evaluator (undecided elements) */
    double total_s;
} mmp_ref_timing;

typedef struct mmp_ref_result {
    int64_t m, n;             /* every array is row-major M x N: element (i, j) at i * n + j */
    double *d64;              /* exact D rounded to binary64 */
    double *dout;             /* exact D rounded to the output format (nearest even; integer
                                 formats wrap modulo 2^bits as format.h says) */
    double *absbound;         /* upper bound of |alpha| (|A||B|)_ij + |beta| |C_ij|, or NULL */
    int64_t *i64;             /* exact integer D (is_integer), else NULL */
    int is_integer;
    int64_t n_mpfr;           /* elements computed with MPFR (all of them on the MPFR path) */
    int64_t n_exact;          /* elements the bound left open, decided by the exact evaluator */
    int64_t n_int32_overflow; /* integer path: exact D outside [-2^31, 2^31 - 1] */
    int64_t n_int64_overflow; /* integer path: exact D outside int64 (i64 saturated there) */
    int slices_a, slices_b;   /* certified paths: Ozaki slices used (0 otherwise) */
    int slice_bits;           /* bits per slice (beta) */
    int64_t n_gemms;          /* DGEMM calls made */
    mmp_ref_path path;        /* the path that ran */
    mmp_ref_timing time;
    int64_t device_peak_bytes; /* device path: most device memory in use at once (cudaMemGetInfo
                                  samples after each allocation, cuBLAS's workspace included) */
    struct {                   /* device path: where its time goes (seconds; parts of time.*) */
        double load_s;         /* the formats into binary64 on the host (time.convert_s) */
        double prepare_s;      /* host: scale exponents, remainder lists or bounds */
        double setup_s;        /* cudaSetDevice, cuBLAS handle, allocations */
        double upload_s;       /* A, B (binary64) and the exponents to the device */
        double slice_s;        /* slicing kernels */
        double absbound_s;     /* fl(|A||B|) DGEMM and its download (metrics' bound) */
        double accumulate_s;   /* kernels adding the exact slice products into (h, l, err) */
        double download_s;     /* (h, l, err) back to the host */
        double finish_s;       /* host (v1) or device (v2): remainder terms, alpha/beta, decisions */
        /* appended for version 2 (everything O(n^2) on the device; load_s stays 0): */
        int version;           /* device path version that ran (1 or 2; 0: not the device path) */
        double decode_s;       /* v2: native formats -> binary64 on the device */
        double resident_s;     /* v2: after setup_s until d64, dout (and absbound) are resident on
                                  the device: upload, decode, prepare, slices, DGEMMs,
                                  accumulation, finish, |A||B| (excludes setup, download, MPFR) */
        int64_t n_remainders;  /* certified paths: nonzero remainders of A and B after the slices */
        int sparse;            /* certified paths: remainders added exactly (1) or bounded (0) */
        /* appended: the dot stage of the certified paths (elements the bound leaves open, each
         * one's dot product recomputed as an error-tracked double-double sum; on the device in
         * version 2, on host threads otherwise): */
        double dot_s;          /* its time (v2: inside resident_s) */
        int64_t n_dot;         /* elements it decided (the rest go to the exact evaluator) */
    } split;
    /* appended: with keep_device, the device arrays (row-major M x N, on o.device), else NULL */
    double *dev_d64, *dev_dout, *dev_absbound;
    int slice_levels;         /* appended: certified paths, the slice pairs s + t <= slice_levels
                                 made (slices_a + slices_b: every pair) */
    int imma;                 /* appended: device path version 2: 1 when its slice products ran as
                                 int8 GEMMs (n_gemms counts those calls), 0 for DGEMMs */
    int lists;                /* appended: certified CPU path: 1 when the slice products came from
                                 lists of the nonzero digits (n_gemms is then 0), 0 for DGEMMs */
    double n_list_products;   /* appended: with lists, the products of nonzero digits formed */
    int crt;                  /* appended: device path version 2: the number of moduli when its
                                 square of int8 slices ran by residues (n_gemms counts their
                                 GEMMs), else 0 */
} mmp_ref_result;

void mmp_ref_options_init(mmp_ref_options *o);
void mmp_ref_result_init(mmp_ref_result *r);
void mmp_ref_result_clear(mmp_ref_result *r);

/* D = alpha A B + beta C for the problem g (validated with mmp_gemm_check; NULL A/B, or NULL C
 * with beta != 0, is MMP_STATUS_INVALID). Allocates r's arrays (r must be initialised). */
mmp_status mmp_ref_gemm(mmp_ref_result *r, const void *a, const void *b, const void *c,
                        const mmp_gemm *g, const mmp_ref_options *o);

/* One element (i, j) with pure MPFR (for sampled cross-checks of a large result). */
mmp_status mmp_ref_element(double *d64, double *dout, const void *a, const void *b,
                           const void *c, const mmp_gemm *g, int64_t i, int64_t j);

/* The exact value X, known only through d64 = RN64(X) and ternary = sign(d64 - X), rounded to
 * the float format f (nearest even) without double rounding. */
double mmp_ref_round_out(double d64, int ternary, mmp_format f);

/* The CBLAS behind the CPU path: "OpenBLAS (Haswell)" or a reference CBLAS, named as slow. */
const char *mmp_ref_blas_name(void);

#ifdef __cplusplus
}
#endif
#endif
