/* mmaprobe/peak.h — the measured tensor-core peak of this GPU (kernels/sm90a/peak.cu, built for
 * sm_90a): register-only loops of mma.sync m16n8k16 bf16 and shared-memory loops of wgmma
 * m64nNk* per input precision, fp32 accumulation, timed with CUDA events. Operands are fixed
 * small values; only throughput matters. CUDA builds only; call it in a process that may use
 * CUDA (a forked child).
 *
 *   double tflops; char how[96];
 *   if (mmp_peak_measure(&tflops, how, sizeof how, MMP_FORMAT_BF16, MMP_FORMAT_BF16) == MMP_STATUS_OK) ...
 *
 * The sweep's pieces (bench/bench_mma_peak.c):
 *   int per_sm = mmp_peak_occupancy(MMP_PEAK_WGMMA, 2);            // blocks of 2 warpgroups per SM
 *   float ms; int err = mmp_peak_run(&ms, MMP_PEAK_WGMMA, 2, sms, iters);   // 0 or a cudaError_t
 *   double tflops = mmp_peak_flops(MMP_PEAK_WGMMA, 2, sms, iters) / (ms * 1e9);
 * units: warps per block for MMP_PEAK_MMA_SYNC (1..32), warpgroups per block for the wgmma
 * kinds (1..3).
 */
#ifndef MMAPROBE_PEAK_H
#define MMAPROBE_PEAK_H

#include <stddef.h>
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MMP_PEAK_MMA_SYNC = 0,         /* mma.sync m16n8k16 bf16 */
    MMP_PEAK_WGMMA = 1,            /* wgmma m64n256k16 bf16 */
    MMP_PEAK_WGMMA_F16 = 2,        /* wgmma m64n256k16 fp16 */
    MMP_PEAK_WGMMA_E4M3 = 3,       /* wgmma m64n256k32 e4m3 */
    MMP_PEAK_WGMMA_TF32 = 4,       /* wgmma m64n256k8 tf32 */
    MMP_PEAK_KIND_COUNT_
};

double mmp_peak_flops(int kind, int units, int blocks, long long iters);
int mmp_peak_occupancy(int kind, int units);
int mmp_peak_run(float *ms, int kind, int units, int blocks, long long iters);
const char *mmp_peak_error(int code);

/* The best throughput (TFLOP/s) of the wgmma loop for inputs of formats a and b (mmp_format
 * values) over a few block shapes, each launch calibrated to tens of milliseconds, on the
 * current device; how names the loop and configuration. MMP_STATUS_UNSUPPORTED (how says why)
 * for a precision with no loop (integers, fp64) or a device other than sm_90; MMP_STATUS_CUDA
 * on a CUDA error. */
mmp_status mmp_peak_measure(double *tflops, char *how, size_t how_size, int a_format, int b_format);

#ifdef __cplusplus
}
#endif
#endif
