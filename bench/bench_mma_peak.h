/* bench/bench_mma_peak.h — the C interface of bench/bench_mma_peak.cu (tensor-core peak loops).
 *
 *   int per_sm = mmp_peak_occupancy(MMP_PEAK_WGMMA, 2);            // blocks of 2 warpgroups per SM
 *   float ms; int err = mmp_peak_run(&ms, MMP_PEAK_WGMMA, 2, sms, iters);   // 0 or a cudaError_t
 *   double tflops = mmp_peak_flops(MMP_PEAK_WGMMA, 2, sms, iters) / (ms * 1e9);
 *
 * units: warps per block for MMP_PEAK_MMA_SYNC (1..32), warpgroups per block for
 * MMP_PEAK_WGMMA (1..3).
 */
#ifndef MMAPROBE_BENCH_MMA_PEAK_H
#define MMAPROBE_BENCH_MMA_PEAK_H

#ifdef __cplusplus
extern "C" {
#endif

enum { MMP_PEAK_MMA_SYNC = 0, MMP_PEAK_WGMMA = 1 };

double mmp_peak_flops(int kind, int units, int blocks, long long iters);
int mmp_peak_occupancy(int kind, int units);
int mmp_peak_run(float *ms, int kind, int units, int blocks, long long iters);
const char *mmp_peak_error(int code);

#ifdef __cplusplus
}
#endif
#endif
