/* bench/bench_fused.c — timing of the fused INT4 operator's kernels (GPU only; exit 77 without one).
 *
 * Build: cmake --build build --target bench_fused
 * Run:   build/bench_fused [--m 4096] [--n 4096] [--k 4096] [--g 64] [--iters 30] [--warmup 5]
 *                          [--ops int4_fused_simple,int4_fused_persistent,...] [--quiet]
 * Times, per op, `iters` launches one by one (cudaEvent before and after each) after `warmup`
 * launches and reports the median, min and max, the effective rate 2 M N K / t (the main GEMM's
 * operations; the low-rank branch adds 2 M K r (per N tile) + 2 M N r) and the runtime decisions
 * (smem per CTA, stages, tile, CTAs per SM). Default ops: version 1 (single CTA), version 2
 * (persistent, fused) and version 3 (persistent without residual and affine: the headroom left by
 * the epilogue), plus version 1 without residual. Operand values are cheap random bits
 * (bf16 kept finite, unit scales): timing does not depend on them. Correctness is the runner's int4_fused_* cases
 * (mmaprobe validate --filter 'int4_fused*'; tests/check_gpu_fused.c).
 *
 * Host reference: build/bench_fused --reference [--mpfr] [--m .. --n .. --k .. --g ..] times the exact
 * reference (mmp_fused_ref_compute, every core) of the FUSED, QGEMM and LOWRANK parts on
 * mmp_fused_host_fill data, and with --mpfr the MPFR oracle too (slow: use small shapes) with
 * the number of elements where the two differ in any bit (0 expected). No GPU needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/fused.h"
#include "mmaprobe/kernel.h"
#include "mmaprobe/status.h"
#include "reference/fused_internal.h"

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void *dev_random(size_t bytes, uint32_t seed, int kind)
{
    uint8_t *h = malloc(bytes);
    void *d = NULL;
    if (!h) return NULL;
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < bytes; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (uint8_t)(s >> 24);
    }
    if (kind == 1)   /* bf16: sign, exponent 2^-1..2^0, random mantissa */
        for (size_t i = 0; i + 1 < bytes; i += 2) h[i + 1] = (uint8_t)((h[i + 1] & 0x80) | 0x3F);
    if (kind == 2)   /* fp16 1.0 scales */
        for (size_t i = 0; i + 1 < bytes; i += 2) { h[i] = 0x00; h[i + 1] = 0x3C; }
    if (kind == 3) memset(h, 0, bytes);   /* beta = 0.0f */
    if (cudaMalloc(&d, bytes) != cudaSuccess || cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess) d = NULL;
    free(h);
    return d;
}

static int bench(const mmp_fused_problem *p, const char *ops_csv, int warmup, int iters, int verbose)
{
    const int64_t m = p->m, n = p->n, k = p->k, r = p->rank, ng = k / p->group;
    mmp_fused_operands o = {
        dev_random((size_t)(m * k / 2), 1, 0), dev_random((size_t)(m * ng * 2), 2, 2),
        dev_random((size_t)(n * k / 2), 3, 0), dev_random((size_t)(n * ng * 2), 4, 2),
        dev_random((size_t)(m * k * 2), 5, 1), dev_random((size_t)(k * r * 2), 6, 1),
        dev_random((size_t)(r * n * 2), 7, 1), dev_random((size_t)n * 4, 8, 3), NULL, NULL};
    void *y = NULL;
    if (cudaMalloc(&y, (size_t)(m * n * 4)) != cudaSuccess || !o.xq || !o.sx || !o.wq || !o.sw || !o.x || !o.a ||
        !o.b || !o.beta) {
        fprintf(stderr, "bench_fused: device allocation failed\n");
        return MMP_EXIT_ENVIRONMENT;
    }
    o.y = y;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float *t = malloc(sizeof *t * (size_t)iters);
    char list[512];
    snprintf(list, sizeof list, "%s", ops_csv);
    int rc = MMP_EXIT_PASS;
    double median_of[2] = {0, 0};   /* fused persistent, persistent qgemm */
    printf("%-30s %9s %9s %9s %10s  %s\n", "op", "median_ms", "min_ms", "max_ms", "main_TOPS", "decision");
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const mmp_fused_op *op = mmp_fused_op_find(name);
        if (!op) {
            fprintf(stderr, "bench_fused: unknown op '%s'\n", name);
            rc = MMP_EXIT_USAGE;
            continue;
        }
        mmp_fused_decision dec;
        memset(&dec, 0, sizeof dec);
        int st = MMP_KERNEL_OK;
        for (int i = 0; i < warmup && st == MMP_KERNEL_OK; i++) st = op->run(&o, p, NULL, &dec, verbose && i == 0);
        for (int i = 0; i < iters && st == MMP_KERNEL_OK; i++) {
            cudaEventRecord(e0, NULL);
            st = op->run(&o, p, NULL, NULL, 0);
            cudaEventRecord(e1, NULL);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&t[i], e0, e1);
        }
        cudaError_t ce = cudaDeviceSynchronize();
        if (st != MMP_KERNEL_OK || ce != cudaSuccess) {
            printf("%-30s %s (%s)\n", name, st == MMP_KERNEL_UNSUPPORTED ? "SKIP: unsupported" : "ERROR",
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "launch");
            if (st != MMP_KERNEL_UNSUPPORTED) rc = MMP_EXIT_FAIL;
            if (ce != cudaSuccess) break;
            continue;
        }
        qsort(t, (size_t)iters, sizeof *t, cmp_float);
        double med = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
        if (!strcmp(name, "int4_fused_persistent")) median_of[0] = med;
        if (!strcmp(name, "int4_fused_persistent_qgemm")) median_of[1] = med;
        printf("%-30s %9.4f %9.4f %9.4f %10.2f  smem/CTA=%u stages=%d tile=%dx%dx%d ctas/SM=%d grid=%d regs=%d\n",
               name, med, t[0], t[iters - 1], 2.0 * m * n * k / (med * 1e-3) / 1e12, dec.smem_static + dec.smem_dynamic,
               dec.stages, dec.tile_m, dec.tile_n, dec.tile_k, dec.ctas_per_sm, dec.grid, dec.regs);
    }
    if (median_of[0] > 0 && median_of[1] > 0)
        printf("headroom: fused persistent / persistent without residual+affine = %.3f (the residual and affine "
               "cost %.1f%% of the fused time)\n",
               median_of[0] / median_of[1], 100.0 * (median_of[0] - median_of[1]) / median_of[0]);
    free(t);
    cudaFree(y);
    void *bufs[] = {(void *)o.xq, (void *)o.sx, (void *)o.wq, (void *)o.sw, (void *)o.x, (void *)o.a, (void *)o.b,
                    (void *)o.beta};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    return rc;
}
#endif

static int bench_reference(const mmp_fused_problem *p, int with_mpfr)
{
    mmp_fused_host h;
    if (mmp_fused_host_init(&h, p) != MMP_STATUS_OK || mmp_fused_host_fill(&h, 42) != MMP_STATUS_OK) {
        fprintf(stderr, "bench_fused: %s\n", mmp_error_last());
        return MMP_EXIT_INTERNAL;
    }
    printf("# host reference, shape %lldx%lldx%lld g=%d r=%d, %d threads\n", (long long)p->m, (long long)p->n,
           (long long)p->k, p->group, p->rank, mmp_parallel_threads(0));
    const mmp_fused_part parts[] = {MMP_FUSED_PART_FUSED, MMP_FUSED_PART_QGEMM, MMP_FUSED_PART_LOWRANK};
    int rc = 0;
    for (size_t q = 0; q < sizeof parts / sizeof parts[0]; q++) {
        mmp_fused_ref fast, slow;
        mmp_fused_ref_init(&fast);
        mmp_fused_ref_init(&slow);
        double t0 = mmp_clock_now();
        if (mmp_fused_ref_compute(&fast, &h, parts[q]) != MMP_STATUS_OK) { rc = MMP_EXIT_INTERNAL; break; }
        double t1 = mmp_clock_now();
        printf("%-8s exact %8.3f s", mmp_fused_part_name(parts[q]), t1 - t0);
        if (with_mpfr) {
            if (ref_fused_compute_mpfr(&slow, &h, parts[q]) != MMP_STATUS_OK) { rc = MMP_EXIT_INTERNAL; break; }
            double t2 = mmp_clock_now();
            int64_t differ = 0, n = fast.rows * fast.cols;
            for (int64_t e = 0; e < n; e++)
                differ += memcmp(&fast.want64[e], &slow.want64[e], 8) || memcmp(&fast.want32[e], &slow.want32[e], 4) ||
                          memcmp(&fast.budget[e], &slow.budget[e], 8);
            printf("   mpfr %8.3f s (%.0fx)   elements that differ: %lld of %lld", t2 - t1, (t2 - t1) / (t1 - t0),
                   (long long)differ, (long long)n);
            if (differ) rc = MMP_EXIT_FAIL;
        }
        printf("\n");
        mmp_fused_ref_clear(&fast);
        mmp_fused_ref_clear(&slow);
    }
    if (rc == MMP_EXIT_INTERNAL) fprintf(stderr, "bench_fused: %s\n", mmp_error_last());
    mmp_fused_host_clear(&h);
    return rc;
}

int main(int argc, char **argv)
{
    int reference = 0, with_mpfr = 0;
    mmp_fused_problem p = {4096, 4096, 4096, 64, 32, MMP_FORMAT_FP16};
    int iters = 30, warmup = 5, verbose = 1;
    const char *ops = "int4_fused_simple,int4_fused_simple_qgemm,int4_fused_persistent,int4_fused_persistent_qgemm";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quiet")) { verbose = 0; continue; }
        if (!strcmp(a, "--reference")) { reference = 1; continue; }
        if (!strcmp(a, "--mpfr")) { with_mpfr = 1; continue; }
        if (!v) { fprintf(stderr, "bench_fused: %s needs a value\n", a); return MMP_EXIT_USAGE; }
        i++;
        if (!strcmp(a, "--m")) p.m = atoll(v);
        else if (!strcmp(a, "--n")) p.n = atoll(v);
        else if (!strcmp(a, "--k")) p.k = atoll(v);
        else if (!strcmp(a, "--g")) p.group = atoi(v);
        else if (!strcmp(a, "--iters")) iters = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else if (!strcmp(a, "--ops")) ops = v;
        else { fprintf(stderr, "bench_fused: unknown option %s\n", a); return MMP_EXIT_USAGE; }
    }
    if (iters < 20 || warmup < 1) { fprintf(stderr, "bench_fused: need --iters >= 20 and --warmup >= 1\n"); return MMP_EXIT_USAGE; }
    if (mmp_fused_problem_check(&p) != MMP_STATUS_OK) { fprintf(stderr, "bench_fused: %s\n", mmp_error_last()); return MMP_EXIT_USAGE; }
    mmp_env e;
    mmp_status st = mmp_env_capture(&e, 0, 0, argc, argv);
    mmp_env_print(stdout, &e, "# ");
    if (reference) return bench_reference(&p, with_mpfr);
    if (st != MMP_STATUS_OK || e.device < 0) {
        printf("SKIP: %s\n", e.no_device_reason[0] ? e.no_device_reason : "no CUDA device");
        return MMP_EXIT_SKIP;
    }
#ifdef MMP_HAVE_CUDA
    printf("# shape %lldx%lldx%lld g=%d r=%d scales=fp16, %d warm-up + %d timed launches per op\n", (long long)p.m,
           (long long)p.n, (long long)p.k, p.group, p.rank, warmup, iters);
    return bench(&p, ops, warmup, iters, verbose);
#else
    (void)ops; (void)verbose;
    printf("SKIP: built without CUDA\n");
    return MMP_EXIT_SKIP;
#endif
}
