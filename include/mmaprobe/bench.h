/* mmaprobe/bench.h — time kernels that passed validation (suites/bench*.c, suites/bench_cuda.cu).
 *
 * A bench row is kernel x shape. Before any row of a kernel is timed, the kernel runs a
 * validation suite through the runner (mmp_runner_run: each kernel in a forked child); a kernel
 * with a FAIL or ERROR case is refused (its rows say which case and why), a kernel whose cases
 * all SKIP is not timed either (the reason is the first skip's). Rows are then timed in one
 * forked child (CUDA only ever initialised there; a crash is that row's ERROR and a fresh child
 * goes on): warm-up launches, then the median, min and max of N launches (CUDA events for a
 * device kernel, the monotonic clock for a host kernel), the operands rotated over sets whose
 * total exceeds the rotation size (default 2x the L2 cache) so that each launch reads data that
 * is not in the cache, filled with the suite's generator (uniform by default: no zeros); D is
 * poisoned before the launches and a float output with an element left unwritten at the bench
 * shape makes the row ERROR (the suite's shapes are small; the bench shapes are not).
 * Each row is compared, at the same shape, layouts and data, with the library kernel of the same
 * precision (cuBLAS/cuBLASLt rows for device kernels, CBLAS rows for host kernels) and with the
 * tensor-core peak measured on the device for that precision (mmaprobe/peak.h), and carries the
 * GPU's clocks, power and temperature before and after (NVML, loaded at run time).
 *
 *   mmp_bench_options o; mmp_bench_options_init(&o);
 *   o.suite = "smoke"; o.n_shapes = 1; o.shape[0][0] = o.shape[0][1] = o.shape[0][2] = 4096;
 *   mmp_bench_run b; mmp_bench_run_init(&b);
 *   mmp_status st = mmp_bench_execute(&b, kernels, nk, &o);   // rows, each with its state
 *   ... mmp_bench_exit_code(&b) ...; mmp_bench_run_clear(&b);
 */
#ifndef MMAPROBE_BENCH_H
#define MMAPROBE_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/runner.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MMP_BENCH_MAX_SHAPES = 16, MMP_BENCH_WHY = 320 };

typedef struct mmp_bench_options {
    const char *suite;             /* the validation gate's suite: smoke (default), edge, full, FILE */
    uint64_t seed;                 /* the gate's cases and the timed data (42) */
    int64_t shape[MMP_BENCH_MAX_SHAPES][3];   /* M, N, K of each bench shape */
    int n_shapes;                  /* 0: 4096^3 and 8192^3 (device), 128^3 (host) */
    mmp_layout la, lb, ld;         /* layouts of the timed operands, if layouts_given */
    int layouts_given;             /* 0: each kernel's first accepted layouts */
    mmp_dist dist;                 /* timed data (uniform) */
    int warmup, iters;             /* launches; -1: 10 and 50 on a device, 1 and 5 on the host */
    int64_t rotate_bytes;          /* operand bytes the rotation must exceed (0: 2 x L2; host: 0) */
    double timeout_s;              /* one row's timing, both kernels (default 300) */
    mmp_runner_options runner;     /* the validation gate's (device, timeouts, host work limit) */
    FILE *progress;                /* a line per kernel validated and per row timed (NULL: none) */
    const char *rerun;             /* options a `mmaprobe validate --case ID` re-run needs (" --mutants"), or NULL */
} mmp_bench_options;

void mmp_bench_options_init(mmp_bench_options *o);

typedef enum mmp_bench_state {
    MMP_BENCH_TIMED = 0,           /* timed */
    MMP_BENCH_REFUSED,             /* not timed: the kernel FAILed or ERRORed in validation */
    MMP_BENCH_SKIPPED,             /* not timed: validation skipped it, or it cannot run this row */
    MMP_BENCH_ERROR,               /* timing failed (launch error, CUDA error, crash, timeout) */
    MMP_BENCH_STATE_COUNT_
} mmp_bench_state;
const char *mmp_bench_state_name(mmp_bench_state s);   /* "timed", "refused", "skipped", "error" */

/* GPU state from NVML (available 0: why says why, the numbers are 0). */
typedef struct mmp_bench_clocks {
    int available;
    double sm_mhz, mem_mhz, power_w, temp_c;
    char why[96];
} mmp_bench_clocks;

/* One timing: launches of one kernel at one shape. */
typedef struct mmp_bench_timing {
    int done;                      /* 1: the figures below are measured */
    int skip;                      /* not done for a reason that is no failure (arguments the
                                      kernel does not take, memory the device does not have) */
    double median_ms, min_ms, max_ms;
    int warmup, iters, sets;       /* launches, and operand sets rotated */
    int64_t set_bytes;             /* bytes of A and B in one set */
    int64_t unwritten;             /* D's elements still holding the all-ones poison written
                                      before the launches (float outputs; -1: not checked) */
    char why[MMP_BENCH_WHY];       /* not done: why */
} mmp_bench_timing;

/* What the timing child sends back for a row. */
typedef struct mmp_bench_outcome {
    mmp_bench_state state;         /* TIMED, SKIPPED or ERROR */
    mmp_bench_timing kernel, baseline;
    double peak_tflops;            /* the measured tensor peak for the row's precision, 0 if none */
    char peak_how[96];             /* what was measured ("wgmma m64n256k16 bf16 loop"), or why not */
    mmp_bench_clocks before, after;
    char why[MMP_BENCH_WHY];       /* SKIPPED / ERROR: why */
} mmp_bench_outcome;

typedef struct mmp_bench_row {
    const mmp_kernel_desc *kernel;
    const mmp_kernel_desc *baseline;   /* the library row of the same precision, or NULL */
    char precision[48];            /* "bf16.bf16.f32" */
    int64_t m, n, k;
    mmp_layout la, lb, ld;
    /* validation of the kernel (the same for each of its rows) */
    char verdict[8];               /* PASS, FAIL, ERROR, SKIP */
    int n_pass, n_fail, n_error, n_skip;
    char validation_why[MMP_BENCH_WHY];   /* FAIL/ERROR: the first such case, its reasons and message */
    char failed_case[256];         /* that case's ID (its re-run: mmaprobe validate --case ID) */
    mmp_bench_outcome out;
    double tflops, baseline_tflops;    /* 2MNK / time (integer kernels: TOP/s) */
    double pct_baseline, pct_peak;     /* NaN when there is nothing to compare with */
} mmp_bench_row;

typedef struct mmp_bench_run {
    mmp_bench_row *rows;
    size_t n_rows;
    mmp_bench_options opts;        /* as used (defaults filled in) */
} mmp_bench_run;

void mmp_bench_run_init(mmp_bench_run *b);
void mmp_bench_run_clear(mmp_bench_run *b);

/* The library kernel a kernel is compared with: same a, b, d and accumulator formats and the same
 * place (cuBLAS family rows on the device, host_blas_* rows on the host), the same mul_format
 * preferred; NULL when there is none. A library kernel is its own baseline. */
const mmp_kernel_desc *mmp_bench_baseline(const mmp_kernel_desc *k);

/* Validate, then time, kernels[0..nk). OK whenever every row holds a state; another status when
 * mmaprobe itself could not go on (no process to start: MMP_STATUS_IO / NO_MEMORY). *o->runner.stop
 * non-zero stops the run (rows left: SKIPPED "interrupted"). */
mmp_status mmp_bench_execute(mmp_bench_run *b, const mmp_kernel_desc *const *kernels, size_t nk,
                             const mmp_bench_options *o);
/* 0 every row timed (or nothing refused and something timed), 1 a refusal or a timing error,
 * 3 nothing timed and nothing failed (no device: every row skipped). */
int mmp_bench_exit_code(const mmp_bench_run *b);
/* The terminal table: kernel, precision, shape, median ms, TFLOP/s, % of the library, % of peak,
 * validation verdict; then the rows not timed with the reason. */
void mmp_bench_print_table(FILE *out, const mmp_bench_run *b);

/* ---- the timing child's pieces (suites/bench_time.c, suites/bench_cuda.cu) ---- */
/* Time row r's kernel and its baseline in this process (device: initialises CUDA here). */
void mmp_bench_time_row(mmp_bench_outcome *out, const mmp_bench_row *r, const mmp_bench_options *o);
/* NVML, loaded with dlopen at run time (suites/bench_nvml.c); never changes a setting. */
void mmp_bench_clocks_read(mmp_bench_clocks *c, int device);

#ifdef __cplusplus
}
#endif
#endif
