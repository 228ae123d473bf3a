/* mmaprobe/runner.h — validate GEMM kernels: cases, inputs, guarded buffers, verdicts, isolation.
 *
 * A case is kernel x shape (M, N, K, layouts, leading dims) x input distribution x seed, with a
 * stable printable ID that doubles as a filter key:
 *     bf16_mma_swizzle/bf16.bf16.f32/256x256x4096/uniform/s42
 *     host_f32/f32.f32.f32/129x64x64/ld136.72.72/exact/s42     (ld part only when ld > tight)
 * An operator case (an operator that does not fit the GEMM ABI, e.g. int4_fused) has its own ID:
 *     int4_fused_persistent_qgemm/qgemm/256x192x512/g128/r32/fp16/s42
 *
 * Usage (one case in this process, e.g. from a test):
 *   mmp_runner_options o; mmp_runner_options_init(&o);
 *   mmp_case c; mmp_case_init(&c, kernel_desc, 64, 64, 256, MMP_DIST_UNIFORM, 42);
 *   mmp_case_result r;
 *   mmp_status st = mmp_runner_run_case(&r, &c, &o);   // r.verdict, r.reasons, r.message
 *
 * Usage (a suite over kernels, each kernel's cases in a forked child with timeouts):
 *   mmp_case *cases; size_t n;
 *   mmp_cases_build(&cases, &n, "smoke", kernels, nk, "host_*", 42);   // glob filter or NULL
 *   mmp_case_result *res = calloc(n, sizeof *res);
 *   mmp_runner_run(res, cases, n, &o, on_result, user);   // on_result(r, index, user) per result
 *   free(res); mmp_cases_free(cases);
 *
 * Custom suites (mmp_suitefile_parse): one case group per line, '#' comments:
 *     shape=MxNxK [ld=A.B.D] [layout=row.col.row] dist=uniform,normal [seed=1,2] [kernel=GLOB]
 *     [alpha=X] [beta=Y]
 * Bad lines give MMP_STATUS_PARSE with "FILE:LINE: message".
 *
 * Verdicts (result.h): PASS; FAIL with reasons unwritten, guard, input-modified, exact-mismatch,
 * bound-exceeded, nan-mismatch, nondeterministic, sanitizer; ERROR (launch, cuda, crash,
 * timeout, interrupted, protocol); SKIP (unsupported: shape, layout, device; the reason is in
 * message).
 * CUDA is only ever initialised in child processes (mmp_runner_run forks before any case);
 * mmp_runner_run_case on a device kernel initialises CUDA in the calling process.
 */
#ifndef MMAPROBE_RUNNER_H
#define MMAPROBE_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmaprobe/core.h"
#include "mmaprobe/fused.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/metrics.h"
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- input distributions (suites/dist.c) ---- */
typedef enum mmp_dist {
    MMP_DIST_EXACT = 0,   /* small integers/dyadics: every partial sum exact in the accumulator */
    MMP_DIST_UNIFORM,     /* uniform in [-1, 1) rounded to the input format */
    MMP_DIST_NORMAL,      /* standard normal rounded to the input format */
    MMP_DIST_WIDE,        /* exponents over the format's whole range, subnormals included */
    MMP_DIST_CANCEL,      /* large terms that cancel (sum much smaller than sum |a||b|) */
    MMP_DIST_ONEHOT,      /* one non-zero per row of A and per column of B */
    MMP_DIST_SPECIAL,     /* NaN, +-Inf, +-0, max finite, min subnormal at known positions */
    MMP_DIST_COUNT_
} mmp_dist;

const char *mmp_dist_name(mmp_dist d);                     /* "uniform", ... ("?" if bad) */
mmp_status mmp_dist_from_name(mmp_dist *d, const char *name);

/* The counter-based RNG (Philox) is core's: mmaprobe/core.h. */

/* ---- cases (suites/case_id.c, suites/cases.c, suites/cases_file.c) ---- */
typedef struct mmp_operator mmp_operator;
enum { MMP_CASE_OP_ARGS = 8 };
typedef struct mmp_case {
    const mmp_kernel_desc *kernel; /* GEMM case: the kernel; operator case: its identity row
                                      (name, family, formats, where, min_cc; run is NULL) */
    const mmp_operator *op;        /* NULL: a GEMM case; else an operator case (below) */
    int64_t op_arg[MMP_CASE_OP_ARGS]; /* the operator's own parameters (its id() prints them) */
    int64_t m, n, k;
    mmp_layout la, lb, lc, ld;
    int64_t lda, ldb, ldc, ldd;    /* 0 = tight for the layout */
    mmp_dist dist;
    uint64_t seed;
    double alpha, beta;            /* beta is forced to 0 for kernels that do not read C */
    char suite[32];
    char id[256];                  /* filled by mmp_case_finish */
} mmp_case;

/* Tight leading dimension of a rows x cols matrix in layout l. */
int64_t mmp_case_tight_ld(mmp_layout l, int64_t rows, int64_t cols);
/* Defaults: the kernel's first accepted layouts, tight ld, alpha 1, beta 0; then the ID. */
void mmp_case_init(mmp_case *c, const mmp_kernel_desc *k, int64_t m, int64_t n, int64_t kk,
                   mmp_dist d, uint64_t seed);
/* Resolve tight leading dims (0 -> tight) and write c->id. Call after changing fields. */
void mmp_case_finish(mmp_case *c);
/* Operand mat (0 = A, 1 = B, 2 = C) of case c, as the runner fills it: the case's distribution
 * stored in the kernel's format, in the case's layout and leading dimension, into dst (of
 * mmp_format_bytes(format, ld * lines) bytes; padding left as it was). */
mmp_status mmp_case_fill(void *dst, const mmp_case *c, int mat);
/* The GEMM problem of a case (formats from the kernel descriptor). */
void mmp_case_gemm(mmp_gemm *g, const mmp_case *c);
/* "bf16.bf16.f32": the a.b.d formats with short names (fp32 -> f32). */
void mmp_case_precision(char *buf, size_t size, const mmp_kernel_desc *k);

/* Built-in suites: "smoke", "edge", "full". A suite that is not one of those is read as a
 * suite file path. filter: glob on the case ID (NULL or "" = all). Cases are in a stable
 * order (kernel-major); *cases is malloc'ed (free with mmp_cases_free). */
mmp_status mmp_cases_build(mmp_case **cases, size_t *count, const char *suite,
                           const mmp_kernel_desc *const *kernels, size_t n_kernels,
                           const char *filter, uint64_t seed);
void mmp_cases_free(mmp_case *cases);
int mmp_cases_is_builtin_suite(const char *name);
extern const char *const mmp_builtin_suites[];   /* NULL-terminated: smoke, edge, full */
const char *mmp_suite_description(const char *name);

/* Parse a suite file into cases for the given kernels. Errors: MMP_STATUS_PARSE "path:line: ..."
 * (or MMP_STATUS_IO when the file cannot be read). text/len variant for fuzzing and tests. */
mmp_status mmp_suitefile_parse(mmp_case **cases, size_t *count, const char *path,
                               const mmp_kernel_desc *const *kernels, size_t n_kernels,
                               const char *filter, uint64_t seed);
mmp_status mmp_suitefile_parse_text(mmp_case **cases, size_t *count, const char *text, size_t len,
                                    const char *name, const mmp_kernel_desc *const *kernels,
                                    size_t n_kernels, const char *filter, uint64_t seed);

/* ---- operator cases (suites/runner_operator.c) ----
 * An operator that does not fit the GEMM ABI (several operands, its own reference) runs through
 * the same machinery as a GEMM case: every operand in a guarded mmp_buffer (4 KiB guards both
 * sides), inputs restored and the output poisoned before each of two runs, guard damage and
 * changed inputs after each, unwritten and nondeterministic elements from the two outputs, then
 * the operator's reference step; in mmp_runner_run, each operator's cases in a forked child
 * with the timeout and crash isolation of GEMM kernels. The hooks (state: the operator's own):
 *   operands  the operand list of case c (tight row-major; exactly one MMP_OPERAND_OUTPUT);
 *             returns the count (<= MMP_OPERATOR_MAX_OPERANDS)
 *   prepare   allocate *state and write every input into host[i] (the data of operand i);
 *             MMP_STATUS_UNSUPPORTED with a message: the case is a SKIP
 *   reference compute the reference of the case (timed as the reference stage)
 *   run       one launch on ptr[i] (device pointers for a device operator, launched on stream);
 *             MMP_KERNEL_OK, MMP_KERNEL_UNSUPPORTED (SKIP) or an error (ERROR launch)
 *   after     optional (NULL): once after the two runs, on the same pointers (e.g. a launch of
 *             another component whose output the reference step uses)
 *   expected  the reference's value of output element idx as bits of the output format (written
 *             over unwritten elements so that they are reported once, as unwritten)
 *   check     the reference step on the output of run 1: metrics, reasons (exact-mismatch,
 *             bound-exceeded, nan-mismatch) and message parts via mmp_runner_say
 *   clear     free state (also after a failed prepare) */
enum { MMP_OPERATOR_MAX_OPERANDS = 12 };
typedef enum mmp_operand_role { MMP_OPERAND_INPUT = 0, MMP_OPERAND_OUTPUT = 1 } mmp_operand_role;
typedef struct mmp_operand {
    const char *name;              /* "xq", "y", ... (in messages) */
    mmp_format f;
    int64_t rows, cols;            /* row-major, tight */
    mmp_operand_role role;
} mmp_operand;
struct mmp_operator {
    void (*id)(char *buf, size_t size, const mmp_case *c);
    int (*operands)(mmp_operand *ops, const mmp_case *c);
    mmp_status (*prepare)(void **state, void *const *host, const mmp_case *c);
    mmp_status (*reference)(void *state, const mmp_case *c);
    int (*run)(void *state, void *const *ptr, const mmp_case *c, void *stream);
    mmp_status (*after)(void *state, void *const *ptr, const mmp_case *c, void *stream);
    uint64_t (*expected)(const void *state, int64_t idx);
    mmp_status (*check)(mmp_case_result *r, void *state, const void *got, const mmp_case *c);
    void (*clear)(void *state);
};
/* Appends ("; "-separated) a part to r->message (the reference step's messages). */
void mmp_runner_say(mmp_case_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The built-in operator cases of a built-in suite (the int4_fused operator: suites/fused_cases.c)
 * appended to *cases (filter as in mmp_cases_build; a suite file adds none). Without CUDA or a
 * device the cases exist and are SKIPs with the reason. */
mmp_status mmp_cases_add_operators(mmp_case **cases, size_t *count, const char *suite, const char *filter,
                                   uint64_t seed);

/* One int4_fused operator case: op_name of mmp_fused_ops() (e.g. "int4_fused_persistent"), the
 * problem, the persistent grid cap (0: none; > 0 makes one CTA walk several tiles), the seed. */
mmp_status mmp_case_init_fused(mmp_case *c, const char *op_name, const mmp_fused_problem *p, int grid_cap,
                               uint64_t seed);

/* Keep the cases with index % shard_count == shard_index (in place). */
void mmp_cases_shard(mmp_case *cases, size_t *count, int shard_index, int shard_count);

/* ---- options and the run ---- */
typedef struct mmp_runner_options {
    mmp_tolerance tol;             /* metrics.h: bound (default), probabilistic, bitwise, ... */
    double timeout_s;              /* per case (default 60) */
    int after_timeout;             /* 0 (default): a kernel's cases after one that timed out
                                      SKIP (a hung kernel costs one timeout); 1: they run */
    int isolate;                   /* 1 (default): each kernel's cases in a forked child */
    int prefork;                   /* 1 (default, with isolate): the next kernel's child is forked
                                      and creates its CUDA context while the current kernel runs */
    int device;                    /* CUDA device ordinal (default 0) */
    int shard_index, shard_count;  /* recorded in results (0/1 = not sharded) */
    int have_device;               /* -1 = unknown (ask in the child), 0 = none, 1 = yes */
    int device_cc;                 /* major*10+minor of the device, when known (with have_device
                                      1, used for the support checks instead of asking CUDA) */
    char no_device_reason[160];
    FILE *progress;                /* progress lines (NULL = none) */
    int progress_tty;              /* 1: one rewritten status line per kernel */
    FILE *jsonl;                   /* results appended as JSON lines as they finish (or NULL) */
    volatile int *stop;            /* set non-zero (signal handler) to stop the run */
    int host_max_log2_work;        /* host kernels: SKIP cases with M*N*K > 2^this (default 30) */
    const char *acc_model;         /* NULL, or a GPU name of the model table ("H200") or a probe
                                      JSON: bounds use the measured accumulator's unit roundoff
                                      (model.h mmp_model_bound_for_kernel) where it has one */
    const char *save_failures;     /* NULL, or a directory (made by the caller): each FAIL case's
                                      A, B, C, D and reference as .npy in DIR/<ID, '/' -> '_'>/,
                                      with README.txt (suites/runner_save.c) */
    const char *rerun_options;     /* the options a re-run of one case needs (shell-quoted, each
                                      after a space), for README.txt's command; or NULL */
} mmp_runner_options;

/* --save-failures writes at most this many bytes per case (the .npy files' data); above it
 * the case's message says the data was not saved and why. */
#define MMP_SAVE_FAILURES_MAX_BYTES ((uint64_t)2 << 30)

void mmp_runner_options_init(mmp_runner_options *o);

/* One case in this process: poison, guards, canaries, two runs, reference, verdict. Returns
 * MMP_STATUS_OK whenever r holds a verdict (PASS/FAIL/ERROR/SKIP; a case too large for the host
 * or device memory is ERROR "out of memory for MxNxK: ..."); another status only for a failure
 * of mmaprobe itself, with r->verdict = ERROR. If the kernel left a
 * sticky CUDA error, r has MMP_REASON_CUDA and the return is MMP_STATUS_CUDA: the process must
 * not run further device cases. */
mmp_status mmp_runner_run_case(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o);

/* Called in the parent for every finished case (index into cases), in completion order. */
typedef void (*mmp_runner_result_fn)(const mmp_case_result *r, size_t index, void *user);

/* Run all cases; results[i] gets case i's result (pre-set to ERROR interrupted until done).
 * With o->isolate, each kernel's consecutive cases run in one forked child (its own process
 * group, with only descriptors 0-2 of the parent's), restarted after a crash, timeout, sticky
 * CUDA error or protocol error (ERROR protocol: the child sent what the runner never sends,
 * e.g. bytes its kernel wrote to the channel, or a message of a process the kernel forked).
 * Stops early (remaining cases ERROR interrupted) when *o->stop becomes non-zero. Returns
 * MMP_STATUS_OK unless the runner itself could not go on: then the cases not run say why
 * ("not run: ..."), and MMP_STATUS_IO / MMP_STATUS_NO_MEMORY mean no descriptor or process was
 * left to start a child (the environment's limits). */
mmp_status mmp_runner_run(mmp_case_result *results, const mmp_case *cases, size_t n,
                          const mmp_runner_options *o, mmp_runner_result_fn on_result, void *user);

/* ---- compute-sanitizer (suites/runner_sanitize.c) ---- */
/* The summary of one compute-sanitizer run, read from its output text. */
typedef struct mmp_sanitizer_summary {
    int have_summary;              /* an "ERROR SUMMARY" / "RACECHECK SUMMARY" line was found */
    long long errors;              /* errors it reports (racecheck: errors, not warnings) */
    char first[240];               /* the first error line, without the "=========" prefix */
} mmp_sanitizer_summary;
/* MMP_STATUS_PARSE when the text holds no summary (the tool did not run to its end). */
mmp_status mmp_sanitizer_parse(mmp_sanitizer_summary *s, const char *text, size_t len);
/* Path of compute-sanitizer ($MMP_COMPUTE_SANITIZER, $PATH, $CUDA_HOME/bin, /usr/local/cuda/bin),
 * or MMP_STATUS_NO_DEVICE with a message saying where it looked. */
mmp_status mmp_sanitizer_find(char *path, size_t size);
/* Re-run case id under compute-sanitizer --tool tool (exec of self_exe validate --no-isolate
 * --filter ID with the extra validate arguments, NULL-terminated). OK: *finding = 1 if the
 * sanitizer reported errors; msg says "memcheck: 2 errors; first: ..." or "memcheck: clean".
 * Otherwise the tool was not found (MMP_STATUS_NO_DEVICE) or did not finish (MMP_STATUS_KERNEL):
 * the message says why, and the case counts as "not run" (never as clean). */
mmp_status mmp_runner_sanitize_case(int *finding, char *msg, size_t msg_size, const char *tool,
                                    const char *self_exe, const char *case_id,
                                    char *const *extra_args, double timeout_s);

/* ---- plugins (suites/plugin.c) ---- */
/* Vet path in a forked child (a crash while loading is an error, not our crash), then load it:
 * ABI version, symbol, descriptors checked. *kernels points into the library (kept loaded). */
mmp_status mmp_plugin_load(const mmp_kernel_desc **kernels, size_t *count, const char *path);
/* Check one descriptor: fields in range and a possible format combination. */
mmp_status mmp_plugin_check_desc(const mmp_kernel_desc *d);

/* ---- GPU code in a shared library (suites/fatbin.c) ----
 * The SASS (cubin) and PTX targets of the ELF .nv_fatbin section, read on the host, and the rule
 * of which compute capability can run them: a plugin with code for none of them is a SKIP
 * ("plugin has code for sm_90a only; this device is sm_80"), not an ERROR. */
enum { MMP_FATBIN_MAX_CODES = 64 };
typedef struct mmp_fatbin_code {
    int arch;                      /* 80 for sm_80 or compute_80 */
    int ptx;                       /* 1: PTX (compute_XY, JIT-compiled), 0: SASS (sm_XY) */
    int suffix;                    /* 0, 'a' (arch-specific: sm_90a) or 'f' (family-specific) */
} mmp_fatbin_code;
typedef struct mmp_fatbin_info {
    int have_fatbin;               /* the library has a .nv_fatbin section */
    int n;                         /* distinct targets in codes[] */
    int truncated;                 /* more distinct targets than codes[] holds */
    mmp_fatbin_code codes[MMP_FATBIN_MAX_CODES];
} mmp_fatbin_info;
/* The containers of a .nv_fatbin section's bytes; MMP_STATUS_PARSE when they are malformed. */
mmp_status mmp_fatbin_parse(mmp_fatbin_info *info, const void *section, size_t size);
/* The .nv_fatbin section of an ELF file (none: OK with have_fatbin 0); MMP_STATUS_IO when it
 * cannot be opened, MMP_STATUS_PARSE when it is not an ELF64 file or the section is malformed. */
mmp_status mmp_fatbin_read_elf(mmp_fatbin_info *info, const char *path);
/* 1 if compute capability cc (major*10+minor) runs this code (cubin: same major, not newer;
 * 'a': exactly its own; PTX: not newer, 'a' exactly, 'f' within the major). */
int mmp_fatbin_code_runs_on(const mmp_fatbin_code *c, int cc);
/* 1 if any target of info runs on cc, or nothing is known against it (no fat binary). */
int mmp_fatbin_runs_on(const mmp_fatbin_info *info, int cc);
/* "sm_80, sm_90a, compute_90 (PTX)" (SASS first), or "no fat binary" / "no GPU code". */
void mmp_fatbin_describe(char *buf, size_t size, const mmp_fatbin_info *info);

/* ---- the end-of-run table (until the reports renderer is used) ---- */
/* Per kernel x precision: pass/fail/error/skip, worst error/bound ratio, max ULP, time. */
void mmp_runner_print_table(FILE *out, const mmp_case_result *results, size_t n);

#ifdef __cplusplus
}
#endif
#endif
