/* sample.c — a synthetic run document for tests and the HTML demo (tests/data/samples/).
 *
 * Nothing here ran on a GPU: the "kernels" are CPU simulations of a tensor-core GEMM
 * (products of the rounded inputs summed exactly per 16-wide k-step, then added to an fp32
 * accumulator), and one of them carries a planted fragment bug: in every 16x8 output tile the
 * elements of row i%16 == 3 miss the last k-step. Each case's metrics are computed from the
 * simulated output against a double-precision reference exactly as the runner defines them
 * (result.h), so the heatmap of the planted failure shows the stripe pattern a real fragment
 * bug would. The environment says "simulated".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/report.h"
#include "mmaprobe/json.h"
#include "tests/lib/sample.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double unif(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1p-52 - 1.0; }

typedef struct sim {
    const char *kernel, *family, *precision;
    mmp_format in;
    int planted;
} sim;

/* One case: simulate, compare, fill r. */
static mmp_status run_case(mmp_case_result *r, const sim *s, int64_t m, int64_t n, int64_t k, uint64_t seed)
{
    double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * n));
    double *ratio = malloc(sizeof(double) * (size_t)(m * n));
    if (!a || !b || !ratio) { free(a); free(b); free(ratio); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
    uint64_t st = seed;
    for (int64_t i = 0; i < m * k; i++) a[i] = mmp_format_round(unif(&st), s->in, MMP_ROUND_NEAREST_EVEN, 0);
    for (int64_t i = 0; i < k * n; i++) b[i] = mmp_format_round(unif(&st), s->in, MMP_ROUND_NEAREST_EVEN, 0);
    mmp_case_result_init(r);
    snprintf(r->kernel, sizeof r->kernel, "%s", s->kernel);
    snprintf(r->family, sizeof r->family, "%s", s->family);
    snprintf(r->precision, sizeof r->precision, "%s", s->precision);
    snprintf(r->dist, sizeof r->dist, "uniform");
    snprintf(r->suite, sizeof r->suite, "sample");
    snprintf(r->tolerance, sizeof r->tolerance, "bound");
    snprintf(r->id, sizeof r->id, "%s/%s/%lldx%lldx%lld/uniform/s%llu", s->kernel, s->precision, (long long)m,
             (long long)n, (long long)k, (unsigned long long)seed);
    r->m = m; r->n = n; r->k = k; r->lda = k; r->ldb = n; r->ldc = r->ldd = n;
    r->seed = seed;
    mmp_metrics *mt = &r->metrics;
    const double u = 0x1p-24;                    /* fp32 accumulation: unit roundoff 2^-24 */
    const double gamma = (double)k * u / (1.0 - (double)k * u);  /* gamma_K: recursive summation bound */
    const double lambda = 5.0;                   /* Higham & Mary (2019): fails w.p. <= 2 exp(-lambda^2/2) per sum */
    mt->u_acc = u;
    mt->lambda = lambda;
    double num = 0, den = 0, worst = -1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0, absum = 0;
            float acc = 0.0f;
            for (int64_t k0 = 0; k0 < k; k0 += 16) {
                double part = 0;                 /* a k-step's products, exact in double */
                for (int64_t kk = k0; kk < k0 + 16 && kk < k; kk++) {
                    double p = a[i * k + kk] * b[kk * n + j];
                    part += p;
                    absum += fabs(p);
                }
                ref += part;
                int dropped = s->planted && i % 16 == 3 && k0 + 16 >= k;
                if (!dropped) acc = (float)((double)acc + part);
            }
            double got = acc, err = fabs(got - ref);
            double det = gamma * absum, prob = lambda * sqrt((double)k) * u * absum;
            double rd = det > 0 ? err / det : (err > 0 ? INFINITY : 0), rp = prob > 0 ? err / prob : rd;
            ratio[i * n + j] = rd;
            mt->count++;
            if (err > mt->max_abs_err) mt->max_abs_err = err;
            if (ref != 0 && err / fabs(ref) > mt->max_rel_err) mt->max_rel_err = err / fabs(ref);
            int e2;
            frexp(ref != 0 ? ref : 0x1p-126, &e2);
            double ulp = ldexp(1.0, (e2 - 1 > -126 ? e2 - 1 : -126) - 23);
            if (err / ulp > mt->max_ulp) mt->max_ulp = err / ulp;
            if (rd > mt->max_ratio_det) mt->max_ratio_det = rd;
            if (rp > mt->max_ratio_prob) mt->max_ratio_prob = rp;
            mt->above_det += rd > 1;
            mt->above_prob += rp > 1;
            mt->above_tol += rd > 1;
            if (rd > 1 && mt->first_bad_i < 0) { mt->first_bad_i = i; mt->first_bad_j = j; }
            if (rd > worst) { worst = rd; mt->worst_i = i; mt->worst_j = j; mt->worst_got = got; mt->worst_want = ref; }
            int bin = MMP_HIST_BINS - 1;
            for (int q = 1; q < MMP_HIST_BINS; q++)
                if (rd < mmp_hist_edge(q)) { bin = q - 1; break; }
            mt->hist[bin]++;
            num += err * err;
            den += ref * ref;
        }
    mt->norm_rel_err = den > 0 ? sqrt(num) / sqrt(den) : 0;
    r->verdict = mt->above_tol ? MMP_VERDICT_FAIL : MMP_VERDICT_PASS;
    if (mt->above_tol) {
        r->reasons = MMP_REASON_BOUND_EXCEEDED;
        int rows = m < MMP_HEAT_MAX ? (int)m : MMP_HEAT_MAX, cols = n < MMP_HEAT_MAX ? (int)n : MMP_HEAT_MAX;
        int64_t bh = (m + rows - 1) / rows, bw = (n + cols - 1) / cols;
        mt->heat_rows = rows;
        mt->heat_cols = cols;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float *cell = &mt->heat[(i / bh) * cols + j / bw];
                if (ratio[i * n + j] > *cell) *cell = (float)ratio[i * n + j];
            }
        snprintf(r->message, sizeof r->message,
                 "%lld of %lld elements beyond the deterministic bound; first at (%lld,%lld), worst at (%lld,%lld): "
                 "got %.9g, want %.9g (|err|/bound %.3g)",
                 (long long)mt->above_tol, (long long)mt->count, (long long)mt->first_bad_i,
                 (long long)mt->first_bad_j, (long long)mt->worst_i, (long long)mt->worst_j, mt->worst_got,
                 mt->worst_want, mt->max_ratio_det);
    }
    /* modelled times: 2mnk flops at a nominal 400 TFLOP/s plus a 4 us launch; reference on the CPU */
    r->time_kernel_ms = 0.004 + 2.0 * (double)(m * n * k) / 400e12 * 1e3;
    r->time_reference_ms = 2.0 * (double)(m * n * k) / 20e9 * 1e3;
    /* stages (modelled too): two launches, the rest of the 0.5 ms of bookkeeping spread */
    r->time_stage_ms[MMP_STAGE_INPUTS] = 0.1;
    r->time_stage_ms[MMP_STAGE_REFERENCE] = r->time_reference_ms;
    r->time_stage_ms[MMP_STAGE_POISON] = 0.05;
    r->time_stage_ms[MMP_STAGE_TRANSFER] = 0.15;
    r->time_stage_ms[MMP_STAGE_LAUNCH] = 2 * r->time_kernel_ms;
    r->time_stage_ms[MMP_STAGE_GUARDS] = 0.05;
    r->time_stage_ms[MMP_STAGE_COMPARE] = 0.1;
    r->time_total_ms = r->time_kernel_ms + r->time_reference_ms + 0.5;
    r->n_mpfr = mt->above_tol < 64 ? mt->above_tol : 64;
    free(a); free(b); free(ratio);
    return MMP_STATUS_OK;
}

/* A fragment from the PTX ISA tables for mma.m16n8k16 (16-bit A, f32 C/D), in the shape
 * probes/layout_print.c writes: owner[row][col] = lane, reg[row][col] = register. */
static void fragment_json(FILE *f, const char *name, int rows, int cols, int is_a)
{
    fprintf(f, "{\"name\":\"%s\",\"rows\":%d,\"cols\":%d,\"documented\":true,\"differences\":0,\"diffs\":[]", name,
            rows, cols);
    for (int pass = 0; pass < 2; pass++) {
        fprintf(f, ",\"%s\":[", pass ? "reg" : "owner");
        for (int r = 0; r < rows; r++) {
            fputs(r ? ",[" : "[", f);
            for (int c = 0; c < cols; c++) {
                int lane = (r % 8) * 4 + (c % 8) / 2;
                int reg = is_a ? ((c >= 8 ? 4 : 0) + (r >= 8 ? 2 : 0)) / 2 : (r >= 8 ? 2 : 0) + (c & 1);
                fprintf(f, "%s%d", c ? "," : "", pass ? reg : lane);
            }
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* ldmatrix.x4 of a 16x16 16-bit A tile whose rows are 128 B apart: 4 phases (one per 8x8
 * matrix) of 8 row addresses of 16 B; with swizzle the 16-byte chunk index is XORed with the
 * row. Words per bank summed over the phases, as probes/memory.c counts them. */
static void bank_json(FILE *f, const char *name, int swizzle)
{
    int words[32] = {0}, wavefronts = 0, worst = 0;
    for (int m = 0; m < 4; m++) {
        int in_phase[32] = {0}, ways = 0;
        for (int l = 0; l < 8; l++) {
            int row = l + (m & 1) * 8, chunk = m >> 1;
            if (swizzle) chunk ^= row % 8;
            long addr = (long)row * 128 + chunk * 16;
            for (int w = 0; w < 4; w++) in_phase[(addr / 4 + w) % 32]++;
        }
        for (int b = 0; b < 32; b++) {
            words[b] += in_phase[b];
            if (in_phase[b] > ways) ways = in_phase[b];
        }
        wavefronts += ways;
        if (ways > worst) worst = ways;
    }
    fprintf(f, "{\"analysis\":{\"kernel\":\"%s\",\"smem_wavefronts\":%d,\"smem_ideal\":4,\"worst_ways\":%d,"
               "\"worst_label\":\"A ldmatrix.x4\",\"gmem_efficiency\":1,\"bank_words\":[", name, wavefronts, worst);
    for (int b = 0; b < 32; b++) fprintf(f, "%s%d", b ? "," : "", words[b]);
    fputs("]}}", f);
}

static mmp_status sample_probes(mmp_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    fputs("{\"layout\":{\"schema\":1,\"gpu\":\"sample\",\"mode\":\"from the PTX ISA tables (sample, not measured)\","
          "\"captures\":[{\"id\":\"mma.m16n8k16.bf16\",\"kind\":\"mma\","
          "\"instruction\":\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32\",\"verdict\":\"documented (sample)\","
          "\"fragments\":[", f);
    fragment_json(f, "A (bf16, 16x16)", 16, 16, 1);
    fputc(',', f);
    fragment_json(f, "C/D (f32, 16x8)", 16, 8, 0);
    fputs("]}]},\"memory\":{\"method\":\"model (sample)\",\"kernels\":[", f);
    bank_json(f, "sample: A tile, rows 128 B apart, no swizzle", 0);
    fputc(',', f);
    bank_json(f, "sample: A tile, 16-byte chunks XOR-swizzled by row", 1);
    fputs("]},\"arith\":null}", f);
    fclose(f);
    /* the probe object read as a run document's "probes" member: the typed results */
    char *doc = NULL;
    size_t dlen = 0;
    FILE *d = open_memstream(&doc, &dlen);
    if (!d) { free(buf); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
    fprintf(d, "{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.2\",\"env\":{},\"cases\":[],\"probes\":%s}", buf);
    fclose(d);
    free(buf);
    mmp_run tmp;
    mmp_run_init(&tmp);
    mmp_status st = mmp_report_read_json_text(&tmp, doc, dlen, "sample probes");
    free(doc);
    if (st == MMP_STATUS_OK) {
        run->probes = tmp.probes;
        tmp.probes = NULL;
    }
    mmp_run_clear(&tmp);
    return st;
}

mmp_status mmp_report_sample(mmp_run *run)
{
    mmp_run_init(run);
    mmp_env *e = &run->env;
    snprintf(e->gpu, sizeof e->gpu, "NVIDIA H200 (simulated: synthetic sample)");
    e->cc_major = 9; e->cc_minor = 0; e->sm_count = 132; e->device = 0; e->seed = 42;
    snprintf(e->driver, sizeof e->driver, "580.95.05 (CUDA 13.0)");
    snprintf(e->runtime, sizeof e->runtime, "13.0");
    snprintf(e->cublas, sizeof e->cublas, "13.0.0");
    snprintf(e->mpfr, sizeof e->mpfr, "4.2.1");
    snprintf(e->check, sizeof e->check, "0.15.2");
    snprintf(e->git_sha, sizeof e->git_sha, "sample");
    snprintf(e->hostname, sizeof e->hostname, "synthetic-sample");
    snprintf(e->started, sizeof e->started, "2026-01-01T00:00:00Z");
    snprintf(e->command, sizeof e->command,
             "mmp_report_sample() in reports/sample.c: CPU-simulated kernels, planted bug rows i%%16==3 of every 16x8 tile");
    snprintf(run->suite, sizeof run->suite, "sample");
    static const sim sims[] = {
        {"mma_sync_m16n8k16_v1", "mma_sync", "bf16.bf16.f32", MMP_FORMAT_BF16, 0},
        {"mma_sync_m16n8k16_v1", "mma_sync", "f16.f16.f32", MMP_FORMAT_FP16, 0},
        {"mma_sync_tf32_m16n8k8_v1", "mma_sync", "tf32.tf32.f32", MMP_FORMAT_TF32, 0},
        {"mma_sync_m16n8k16_v3_planted", "mma_sync", "bf16.bf16.f32", MMP_FORMAT_BF16, 1},
    };
    static const int64_t ks[] = {64, 256, 1024, 2048};
    uint64_t seed = 42;
    mmp_case_result r;
    for (size_t s = 0; s < sizeof sims / sizeof sims[0]; s++)
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
            MMP_TRY(run_case(&r, &sims[s], 64, 64, ks[q], seed + q));
            MMP_TRY(mmp_run_add(run, &r));
        }
    MMP_TRY(run_case(&r, &sims[3], 128, 128, 512, 7));     /* the heatmap headline: 2x2 elements per cell */
    MMP_TRY(mmp_run_add(run, &r));
    /* an ERROR and a SKIP as a real run records them (messages with characters to escape) */
    mmp_case_result_init(&r);
    snprintf(r.kernel, sizeof r.kernel, "wgmma_m64n128k16_v2");
    snprintf(r.family, sizeof r.family, "wgmma");
    snprintf(r.precision, sizeof r.precision, "f16.f16.f32");
    snprintf(r.id, sizeof r.id, "wgmma_m64n128k16_v2/f16.f16.f32/192x256x1024/uniform/s42");
    r.m = 192; r.n = 256; r.k = 1024; r.seed = 42;
    r.verdict = MMP_VERDICT_ERROR;
    r.reasons = MMP_REASON_CUDA;
    snprintf(r.message, sizeof r.message,
             "cudaErrorIllegalAddress after launch of <wgmma_m64n128k16_v2> (\"an illegal memory access\" & context lost); "
             "child process restarted, run continued");
    r.time_total_ms = 812.5;
    MMP_TRY(mmp_run_add(run, &r));
    r.verdict = MMP_VERDICT_SKIP;
    r.reasons = MMP_REASON_UNSUPPORTED;
    snprintf(r.id, sizeof r.id, "wgmma_m64n128k16_v2/f16.f16.f32/100x256x1024/uniform/s42");
    r.m = 100;
    snprintf(r.message, sizeof r.message, "M = 100 is not a multiple of the 64-row warpgroup tile");
    r.time_total_ms = 0;
    MMP_TRY(mmp_run_add(run, &r));
    return sample_probes(run);
}
