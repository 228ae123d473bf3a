/* probes/memory_internal.h — shared between the memory-probe files (not a public API).
 *
 * Usage (what probes/memory_run.c does):
 *   mmp_memory_counters cal[32];  int n = 0;
 *   // 1. CUPTI range profiler, in a forked child that creates the CUDA context
 *   if (mmp_memory_cupti_measure(cal, &n, 32, NULL, size) == MMP_STATUS_OK &&
 *       mmp_memory_counters_accept(cal, n, "CUPTI") == MMP_STATUS_OK) { ... "cupti" ... }
 *   else fprintf(text, "... (%s)\n", mmp_error_last());            // the one-line reason
 *   // 2. ncu: n = mmp_memory_ncu_run(ncu, "--calib-child", "mmp_calib_", cal, 32, why, sizeof why);
 *   // 3. clock64 (probes/memory_run.c)
 *
 * Counters come back in one shape whichever tool read them: per kernel launch, the value of each
 * metric in mmp_memory_metrics[] (have[m] = 0 when the tool could not read it).
 */
#ifndef MMAPROBE_MEMORY_INTERNAL_H
#define MMAPROBE_MEMORY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmaprobe/memory.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- counters (probes/memory_counters.c) ---- */
enum {
    MMP_MEMORY_M_WF_LD = 0,   /* l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum */
    MMP_MEMORY_M_WF_ST,
    MMP_MEMORY_M_WF_LDSM,
    MMP_MEMORY_M_BC_LD,       /* l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum */
    MMP_MEMORY_M_BC_ST,
    MMP_MEMORY_M_BC_LDSM,
    MMP_MEMORY_M_INST_LD,     /* smsp__sass_inst_executed_op_shared_ld.sum */
    MMP_MEMORY_M_INST_ST,
    MMP_MEMORY_M_INST_LDSM,
    MMP_MEMORY_M_SECTORS,     /* l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum */
    MMP_MEMORY_M_REQUESTS,
    MMP_MEMORY_N_METRICS
};
extern const char *const mmp_memory_metrics[MMP_MEMORY_N_METRICS];
/* Shared loads one calibration launch issues (one warp, a dependent chain of this many). */
#define MMP_MEMORY_CALIB_LOADS 256

typedef struct mmp_memory_counters {
    char kernel[128];                 /* the profiler's kernel (or range) name */
    double v[MMP_MEMORY_N_METRICS];
    int have[MMP_MEMORY_N_METRICS];
} mmp_memory_counters;

/* The value of metric m, NAN when it was not read. */
double mmp_memory_counter(const mmp_memory_counters *k, int m);
/* Shared-memory wavefronts per instruction of calibration row c, from its launch's counters
 * (NAN when the counters needed are missing or no instruction was counted). */
double mmp_memory_calib_measured(const mmp_memory_counters *k, const mmp_memory_calib *c);
/* 1 when a measured wavefronts-per-instruction figure agrees with the model's: the one judgment
 * every calibration row gets, whichever method measured it. */
int mmp_memory_calib_agree(double measured, int model_wavefronts);
/* The trust check for a counter method: OK when there is one launch per calibration row and
 * every row agrees with the model; else MMP_STATUS_INVALID with the message
 * "<label> counters disagree with calibration <row>: measured X, model Y". */
mmp_status mmp_memory_counters_accept(const mmp_memory_counters *meas, int nmeas, const char *label);

/* ---- ncu (probes/memory_ncu.c) ---- */
/* ncu's path (opt = --ncu PATH or NULL to search); NULL when there is none. */
const char *mmp_memory_ncu_find(const char *opt);
/* Runs ncu over this program in a child mode; returns kernels parsed, or -1 with *why. */
int mmp_memory_ncu_run(const char *ncu, const char *child_args, const char *kernel_regex,
                       mmp_memory_counters *out, int max, char *why, size_t wsize);
/* Parses `ncu --csv` (one row per kernel x metric) in launch order; returns kernels filled. */
int mmp_memory_ncu_parse(mmp_memory_counters *out, int max, FILE *in);

/* ---- launches (probes/memory_launch.c; CUDA builds) ---- */
/* Every calibration kernel once, in table order; the clock64 figures go to cycles (may be NULL). */
mmp_status mmp_memory_launch_calibs(double *cycles, size_t ncycles);
/* One built-in kernel once on M = N = K = size (zeroed inputs). */
mmp_status mmp_memory_launch_kernel(const char *name, int64_t size);

/* ---- CUPTI range profiler (probes/memory_cupti_load.c, probes/memory_cupti.c) ---- */
enum {
    MMP_CUPTI_GET_RESULT_STRING = 0,
    MMP_CUPTI_PROFILER_INITIALIZE,
    MMP_CUPTI_PROFILER_DEINITIALIZE,
    MMP_CUPTI_DEVICE_GET_CHIP_NAME,
    MMP_CUPTI_HOST_INITIALIZE,
    MMP_CUPTI_HOST_DEINITIALIZE,
    MMP_CUPTI_HOST_CONFIG_ADD_METRICS,
    MMP_CUPTI_HOST_GET_CONFIG_IMAGE_SIZE,
    MMP_CUPTI_HOST_GET_CONFIG_IMAGE,
    MMP_CUPTI_HOST_GET_NUM_OF_PASSES,
    MMP_CUPTI_HOST_EVALUATE_TO_GPU_VALUES,
    MMP_CUPTI_RP_ENABLE,
    MMP_CUPTI_RP_DISABLE,
    MMP_CUPTI_RP_GET_COUNTER_DATA_SIZE,
    MMP_CUPTI_RP_COUNTER_DATA_IMAGE_INITIALIZE,
    MMP_CUPTI_RP_SET_CONFIG,
    MMP_CUPTI_RP_START,
    MMP_CUPTI_RP_STOP,
    MMP_CUPTI_RP_DECODE_DATA,
    MMP_CUPTI_RP_GET_COUNTER_DATA_INFO,
    MMP_CUPTI_RP_GET_RANGE_INFO,
    MMP_CUPTI_N_FUNCS
};
extern const char *const mmp_cupti_func_names[MMP_CUPTI_N_FUNCS];

typedef struct mmp_cupti_lib {
    void *handle;                     /* dlopen handle of libcupti */
    void *nvperf;                     /* libnvperf_host preloaded from libcupti's folder, or NULL */
    char path[512];                   /* the file that was loaded */
    void *fn[MMP_CUPTI_N_FUNCS];      /* dlsym of mmp_cupti_func_names[i] */
} mmp_cupti_lib;

/* dlopen libcupti: $MMP_CUPTI_LIB when set (that file only), else libcupti.so.13, libcupti.so,
 * $CUDA_HOME/extras/CUPTI/lib64, $CUDA_HOME/lib64, /usr/local/cuda/{extras/CUPTI/,}lib64; then
 * dlsym every function. MMP_STATUS_NO_DEVICE with a one-line reason when a file or symbol is
 * missing. Needs no CUDA: the CPU-only build can test it. */
mmp_status mmp_memory_cupti_open(mmp_cupti_lib *lib);
void mmp_memory_cupti_close(mmp_cupti_lib *lib);

/* Counters of every kernel launched by the calibration launches (kernel == NULL: one entry per
 * calibration row, in table order) or by one built-in kernel (kernel named: the first launch
 * that is not a calibration), measured with CUPTI's range profiler (auto range, kernel replay)
 * in a forked child that alone initialises CUDA. *n = entries filled. On failure a status with
 * a one-line reason naming the failing call and its CUptiResult. */
mmp_status mmp_memory_cupti_measure(mmp_memory_counters *out, int *n, int max, const char *kernel,
                                    int64_t size);

#ifdef __cplusplus
}
#endif

#endif
