/* bench/bench_mma_peak.c — tensor-core peak throughput on this GPU: mma.sync m16n8k16 bf16
 * (registers only) and wgmma m64n256k16 bf16 (operands in shared memory), fp32 accumulation.
 * The ceiling a mma.sync GEMM can reach is the first figure; the ratio of the two peaks says
 * what share of the wgmma (cuBLAS) rate mma.sync can reach at best. GPU only (exit 77 without
 * one); the loops (kernels/sm90a/peak.cu, mmaprobe/peak.h) are built for sm_90a only.
 *
 * Build: cmake --build build --target bench_mma_peak
 * Run:   build/bench_mma_peak [--seconds 12] [--iters N]
 *   --seconds S  whole sweep in about S seconds (each configuration calibrated to S / count)
 *   --iters N    fixed loop count per warp or warpgroup instead (no calibration)
 * Sweep: mma.sync with 4, 8, 16 warps per block and 1-4 blocks per SM, 8 independent
 * accumulator sets per warp; wgmma with 1-3 warpgroups per block and 1-2 blocks per SM, each
 * warpgroup 4 wgmma (one 64-wide K tile) per commit group, one group in flight. Every
 * configuration: one untimed launch, then one launch timed with CUDA events over SMs x
 * blocks-per-SM blocks. TFLOP/s = flops / time with flops = 2*16*8*16 per mma.sync and
 * 2*64*256*16 per wgmma. Configurations that cannot be resident at once are listed as such.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/status.h"

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "mmaprobe/peak.h"

typedef struct peak_cfg {
    int kind, units, per_sm;
} peak_cfg;

static const peak_cfg configs[] = {
    {MMP_PEAK_MMA_SYNC, 4, 1},  {MMP_PEAK_MMA_SYNC, 4, 2},  {MMP_PEAK_MMA_SYNC, 4, 3},
    {MMP_PEAK_MMA_SYNC, 4, 4},  {MMP_PEAK_MMA_SYNC, 8, 1},  {MMP_PEAK_MMA_SYNC, 8, 2},
    {MMP_PEAK_MMA_SYNC, 8, 3},  {MMP_PEAK_MMA_SYNC, 8, 4},  {MMP_PEAK_MMA_SYNC, 16, 1},
    {MMP_PEAK_MMA_SYNC, 16, 2}, {MMP_PEAK_MMA_SYNC, 16, 3}, {MMP_PEAK_MMA_SYNC, 16, 4},
    {MMP_PEAK_WGMMA, 1, 1},     {MMP_PEAK_WGMMA, 1, 2},     {MMP_PEAK_WGMMA, 2, 1},
    {MMP_PEAK_WGMMA, 2, 2},     {MMP_PEAK_WGMMA, 3, 1},
};
#define NCFG (int)(sizeof configs / sizeof configs[0])

/* Loop count that makes one launch last about target_ms: grow from a short run until a
 * launch takes at least 5 ms (launch overhead negligible), then scale. 0 on a CUDA error. */
static long long calibrate(const peak_cfg *c, int blocks, double target_ms, int *err)
{
    long long iters = 256;
    for (;;) {
        float ms = 0;
        *err = mmp_peak_run(&ms, c->kind, c->units, blocks, iters);
        if (*err) return 0;
        if (ms >= 5.0 || iters > (1LL << 40)) {
            double scaled = (double)iters * target_ms / (ms > 0 ? ms : 1e-3);
            return scaled < 1 ? 1 : (long long)scaled;
        }
        iters *= ms < 0.5 ? 16 : 4;
    }
}

static int run_sweep(double seconds, long long fixed_iters, int sms, double clock_ghz)
{
    double best[2] = {0, 0};
    char best_cfg[2][64] = {"none", "none"};
    /* each configuration: calibration (~3 short launches) + 2 launches of target_ms */
    double target_ms = seconds * 1000.0 / NCFG / 2.5;
    printf("%-9s %-14s %9s %7s %12s %10s %9s %14s\n", "kind", "block", "blocks/SM", "blocks", "iters", "ms",
           "TFLOP/s", "flop/clk/SM");
    for (int i = 0; i < NCFG; i++) {
        const peak_cfg *c = &configs[i];
        const char *kname = c->kind == MMP_PEAK_MMA_SYNC ? "mma.sync" : "wgmma";
        char block[32];
        snprintf(block, sizeof block, "%d %s", c->units, c->kind == MMP_PEAK_MMA_SYNC ? "warps" : "warpgroups");
        int fit = mmp_peak_occupancy(c->kind, c->units);
        if (fit < 0) { printf("%-9s %-14s occupancy query failed\n", kname, block); return MMP_EXIT_ENVIRONMENT; }
        if (fit < c->per_sm) {
            printf("%-9s %-14s %9d   not resident (%d block(s) per SM fit)\n", kname, block, c->per_sm, fit);
            continue;
        }
        int blocks = sms * c->per_sm, err = 0;
        long long iters = fixed_iters > 0 ? fixed_iters : calibrate(c, blocks, target_ms, &err);
        float ms = 0;
        if (!err) err = mmp_peak_run(&ms, c->kind, c->units, blocks, iters);
        if (err) {
            printf("%-9s %-14s %9d   CUDA error: %s\n", kname, block, c->per_sm, mmp_peak_error(err));
            return MMP_EXIT_ENVIRONMENT;
        }
        double flops = mmp_peak_flops(c->kind, c->units, blocks, iters);
        double tflops = ms > 0 ? flops / (ms * 1e9) : 0;
        double per_clk = clock_ghz > 0 ? tflops * 1e3 / (sms * clock_ghz) : 0;
        printf("%-9s %-14s %9d %7d %12lld %10.3f %9.1f %14.0f\n", kname, block, c->per_sm, blocks, iters, ms,
               tflops, per_clk);
        if (tflops > best[c->kind]) {
            best[c->kind] = tflops;
            snprintf(best_cfg[c->kind], sizeof best_cfg[c->kind], "%s x %d per SM", block, c->per_sm);
        }
    }
    printf("best mma.sync m16n8k16 bf16: %.1f TFLOP/s (%s)\n", best[MMP_PEAK_MMA_SYNC], best_cfg[MMP_PEAK_MMA_SYNC]);
    printf("best wgmma m64n256k16 bf16:  %.1f TFLOP/s (%s)\n", best[MMP_PEAK_WGMMA], best_cfg[MMP_PEAK_WGMMA]);
    if (best[MMP_PEAK_WGMMA] > 0)
        printf("ratio mma.sync / wgmma peak: %.3f\n", best[MMP_PEAK_MMA_SYNC] / best[MMP_PEAK_WGMMA]);
    return MMP_EXIT_PASS;
}
#endif

static int usage(void)
{
    fprintf(stderr, "usage: bench_mma_peak [--seconds S (1..300, default 12)] [--iters N (>= 1)]\n");
    return MMP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    double seconds = 12;
    long long iters = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(); return MMP_EXIT_PASS; }
        if (strcmp(a, "--seconds") && strcmp(a, "--iters")) {
            fprintf(stderr, "bench_mma_peak: unknown option %s\n", a);
            return usage();
        }
        if (!v) { fprintf(stderr, "bench_mma_peak: %s needs a value\n", a); return usage(); }
        i++;
        if (!strcmp(a, "--seconds")) {
            seconds = strtod(v, &end);
            if (*end || !(seconds >= 1 && seconds <= 300)) {
                fprintf(stderr, "bench_mma_peak: --seconds %s: need a number in 1..300\n", v);
                return MMP_EXIT_USAGE;
            }
        } else {
            iters = strtoll(v, &end, 10);
            if (*end || iters < 1) { fprintf(stderr, "bench_mma_peak: --iters %s: need an integer >= 1\n", v); return MMP_EXIT_USAGE; }
        }
    }
    mmp_env e;
    mmp_status st = mmp_env_capture(&e, 0, 0, argc, argv);
    mmp_env_print(stdout, &e, "# ");
#ifdef MMP_HAVE_CUDA
    if (st != MMP_STATUS_OK || e.device < 0) {
        printf("SKIP: %s\n", e.no_device_reason[0] ? e.no_device_reason : "no CUDA device");
        return MMP_EXIT_SKIP;
    }
    struct cudaDeviceProp p;
    int clock_khz = 0, mem_khz = 0;
    if (cudaGetDeviceProperties(&p, e.device) != cudaSuccess ||
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, e.device) != cudaSuccess ||
        cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, e.device) != cudaSuccess) {
        printf("bench_mma_peak: cannot read the device properties\n");
        return MMP_EXIT_ENVIRONMENT;
    }
    printf("# device: %s, cc %d.%d, %d SMs, SM clock %.0f MHz (peak), memory clock %.0f MHz, "
           "%zu KiB smem per SM, %d registers per SM\n", p.name, p.major, p.minor, p.multiProcessorCount,
           clock_khz / 1e3, mem_khz / 1e3, p.sharedMemPerMultiprocessor / 1024, p.regsPerMultiprocessor);
    if (p.major != 9 || p.minor != 0) {
        printf("SKIP: the kernels are built for sm_90a only (this device is cc %d.%d)\n", p.major, p.minor);
        return MMP_EXIT_SKIP;
    }
    printf("# %s\n", iters > 0 ? "fixed --iters" : "calibrated to --seconds");
    return run_sweep(seconds, iters, p.multiProcessorCount, clock_khz / 1e6);
#else
    (void)st; (void)seconds; (void)iters;
    printf("SKIP: built without CUDA\n");
    return MMP_EXIT_SKIP;
#endif
}
