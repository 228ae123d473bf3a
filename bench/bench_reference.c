/* bench/bench_reference.c — the reference GEMM against its anchors: the naive MPFR reference
 * (the slow exact model) and cuBLAS DGEMM (the fast inexact one).
 *
 * Build: cmake --build build --target bench_reference
 * Run:   build/bench_reference [--sizes 256,1024,2048] [--a fp32 --b fp32 --d fp32]
 *                              [--threads T] [--mpfr-full-max N] [--mpfr-rows R]
 *                              [--gpu] [--sample S] [--naive-size N] [--seed S]
 *                              [--operands-on-device] [--device-version V] [--compare-cpu]
 *                              [--routes 1,2] [--repeat R]
 *                              [--dist uniform|wide|special|cancel|onehot|normal|exact]
 *   For each size n (an n x n x n GEMM of uniform random values in [-1, 1], or with --dist the
 *   values a suite case of a kernel with these formats gets: mmp_case_fill):
 *   1. the certified path (CPU, or --gpu: the device path, timed against cuBLAS DGEMM at the
 *      same size in the same process), with its stage times and n_mpfr;
 *   2. the naive MPFR reference: the whole product when n <= --mpfr-full-max, else its first
 *      R rows, extrapolated linearly to n rows (said so in the output); every element it
 *      computed is compared bit for bit with the certified result;
 *   3. --sample S: S random elements checked against pure MPFR (mmp_ref_element, threaded);
 *   4. --naive-size N: the naive MPFR triple loop timed at N^3 on all threads and extrapolated
 *      to n^3 (cost scales as the number of multiply-adds);
 *   5. --compare-cpu (with --gpu): the CPU certified path too, every element compared bit for
 *      bit with the device path. --alpha A --beta B (C random in the output format) and
 *      --col (A and B column-major) vary the problem.
 *   6. --device-version V (with --gpu): 1 = version 1 (host prepare/finish), 2 = version 2 (every
 *      O(n^2) stage on the device); default: version 2 where it applies. Version 2 prints the
 *      time with the results resident on the device (after the set-up: CUDA context, cuBLAS
 *      handle), the download and the total, each as a multiple of cuBLAS DGEMM ("x DGEMM").
 *      With --gpu a 64^3 device reference runs first, untimed, to create the CUDA context.
 *   7. --operands-on-device (with --gpu, version 2): A, B (and C) are uploaded before the timer
 *      and handed to the reference (mmp_ref_options.dev_a/dev_b/dev_c), as a harness that has
 *      already uploaded them for the kernel under test would, and as the DGEMM it is compared
 *      with has its operands: the resident time then has no upload.
 *   8. --routes R[,R...] (with --gpu, version 2): the reference once per route on the same
 *      operands, in this process (mmp_ref_options.imma: 0 = the plan's choice, 1 = int8 slices
 *      on integer tensor cores, their pairs only (crt = 2), 2 = DGEMMs; 3 = int8 slices with
 *      squares by residues weighed by cost, mmp_ref_options.crt = 1, 4 = int8 with every square
 *      by residues, crt = 3; route 0 leaves crt to MMP_REF_CRT); each result line names the
 *      route that ran ("int8-crt N": N moduli).
 *   9. --repeat R: the reference R times per route on the same operands, the last one reported
 *      (the earlier ones' times printed: the first call of a size loads its cuBLAS kernels).
 * Exit status: 0, 1 when any disagreement was found, 2 usage, 3 environment.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/runner.h"
#include "reference/ref_internal.h"

static uint64_t rs = 88172645463325252ull;   /* --seed */
static mmp_rng_stream rng;
static double urand(void) { return 2.0 * mmp_rng_stream_uniform(&rng) - 1.0; }   /* [-1, 1) */

static void *make(mmp_format f, int64_t rows, int64_t cols)
{
    size_t cnt = (size_t)rows * cols;
    void *p = malloc(mmp_format_bytes(f, cnt));
    if (!p) return NULL;
    const mmp_format_info *fi = mmp_format_get_info(f);
    for (size_t i = 0; i < cnt; i++) {
        double x = urand();
        if (f == MMP_FORMAT_FP32) { ((float *)p)[i] = (float)x; continue; }     /* RN, as store */
        if (f == MMP_FORMAT_FP64) { ((double *)p)[i] = x; continue; }
        if (!fi->is_float) x = floor(x * (fi->max_finite + 1));
        mmp_format_store(p, i, x, f, MMP_ROUND_NEAREST_EVEN, 1);
    }
    return p;
}

/* --dist: operands from a suite distribution, as the runner fills a case of a kernel with these
 * formats (mmp_case_fill), instead of make()'s uniform values */
static int have_dist;
static mmp_dist dist;
static mmp_kernel_desc dist_kernel;

static void *make_operand(int mat, mmp_format f, int64_t n, int col, uint64_t seed)
{
    if (!have_dist) return make(f, n, n);
    mmp_case c;
    mmp_case_init(&c, &dist_kernel, n, n, n, dist, seed);
    if (col) c.la = c.lb = MMP_LAYOUT_COL;
    c.lda = c.ldb = c.ldc = c.ldd = 0;
    mmp_case_finish(&c);
    void *p = malloc(mmp_format_bytes(f, (size_t)n * n));
    if (p && mmp_case_fill(p, &c, mat) != MMP_STATUS_OK) { free(p); p = NULL; }
    return p;
}

static int same(double x, double y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, 8) == 0; }

/* Elements of the first count where x and y differ in d64 or dout. */
static int64_t count_differ(const mmp_ref_result *x, const mmp_ref_result *y, int64_t count)
{
    int64_t bad = 0;
    for (int64_t e = 0; e < count; e++) bad += !same(x->d64[e], y->d64[e]) || !same(x->dout[e], y->dout[e]);
    return bad;
}

typedef struct {
    const void *a, *b, *c;
    const mmp_gemm *g;
    const mmp_ref_result *r;
    const int64_t *idx;
    int64_t bad[256];
} sample_job;

static void sample_range(void *ctx, int64_t b, int64_t e, int tid)
{
    sample_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t x = j->idx[t], i = x / j->g->n, c = x % j->g->n;
        double d64, dout;
        if (mmp_ref_element(&d64, &dout, j->a, j->b, j->c, j->g, i, c) != MMP_STATUS_OK ||
            !same(d64, j->r->d64[x]) || !same(dout, j->r->dout[x]))
            j->bad[tid]++;
    }
}

static int64_t parse_list(int64_t *out, int max, const char *s)
{
    int n = 0;
    while (*s && n < max) {
        out[n++] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

/* --routes: route r's options (see the header). */
static void bench_route(mmp_ref_options *o, int r)
{
    o->imma = r >= 3 ? 1 : r;
    o->crt = r == 1 ? 2 : r == 3 ? 1 : r == 4 ? 3 : 0;
}

/* The route a result ran: "dgemm", "int8", or "int8-crt N" (N moduli). */
static const char *route_name(const mmp_ref_result *r)
{
    static char buf[32];
    if (!r->imma) return "dgemm";
    if (!r->crt) return "int8";
    snprintf(buf, sizeof buf, "int8-crt %d", r->crt);
    return buf;
}

int main(int argc, char **argv)
{
    int64_t sizes[16] = {256, 1024, 2048};
    int nsizes = 3, threads = 0, gpu = 0, compare_cpu = 0, col = 0, device_version = 0, on_device = 0;
    double alpha = 1.0, beta = 0.0;
    int64_t full_max = 256, mpfr_rows = 16, sample = 0, naive_size = 0, routes[3] = {0};
    int nroutes = 1, repeat = 1;
    mmp_format fa = MMP_FORMAT_FP32, fb = MMP_FORMAT_FP32, fd = MMP_FORMAT_FP32;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        mmp_status st = MMP_STATUS_OK;
        if (!strcmp(argv[i], "--gpu")) { gpu = 1; continue; }
        if (!strcmp(argv[i], "--operands-on-device")) { on_device = 1; continue; }
        if (!strcmp(argv[i], "--compare-cpu")) { compare_cpu = 1; continue; }
        if (!strcmp(argv[i], "--col")) { col = 1; continue; }
        if (!v) { fprintf(stderr, "bench_reference: %s needs a value\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--sizes")) nsizes = (int)parse_list(sizes, 16, v);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
        else if (!strcmp(argv[i], "--device-version")) device_version = atoi(v);
        else if (!strcmp(argv[i], "--routes")) {
            nroutes = (int)parse_list(routes, 3, v);
            for (int q = 0; q < nroutes; q++)
                if (routes[q] < 0 || routes[q] > 4) { fprintf(stderr, "bench_reference: --routes takes 0..4, got %lld\n", (long long)routes[q]); return 2; }
        }
        else if (!strcmp(argv[i], "--repeat")) repeat = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(argv[i], "--mpfr-full-max")) full_max = atoll(v);
        else if (!strcmp(argv[i], "--mpfr-rows")) mpfr_rows = atoll(v);
        else if (!strcmp(argv[i], "--sample")) sample = atoll(v);
        else if (!strcmp(argv[i], "--naive-size")) naive_size = atoll(v);
        else if (!strcmp(argv[i], "--seed")) rs = strtoull(v, NULL, 10) | 1;
        else if (!strcmp(argv[i], "--alpha")) alpha = atof(v);
        else if (!strcmp(argv[i], "--beta")) beta = atof(v);
        else if (!strcmp(argv[i], "--a")) st = mmp_format_from_name(&fa, v);
        else if (!strcmp(argv[i], "--b")) st = mmp_format_from_name(&fb, v);
        else if (!strcmp(argv[i], "--d")) st = mmp_format_from_name(&fd, v);
        else if (!strcmp(argv[i], "--dist")) { st = mmp_dist_from_name(&dist, v); have_dist = 1; }
        else { fprintf(stderr, "bench_reference: unknown option %s (see the top of bench/bench_reference.c)\n", argv[i]); return 2; }
        if (st != MMP_STATUS_OK) { fprintf(stderr, "bench_reference: %s\n", mmp_error_last()); return 2; }
        i++;
    }
    uint64_t seed = rs;
    mmp_rng_stream_init(&rng, seed, mmp_rng_hash("bench_reference"));
    int wide64 = fa == MMP_FORMAT_FP64 || fb == MMP_FORMAT_FP64 || fd == MMP_FORMAT_FP64;
    dist_kernel = (mmp_kernel_desc){.name = "bench_reference", .a_format = fa, .b_format = fb, .c_format = fd,
                                    .d_format = fd, .acc_format = wide64 ? MMP_FORMAT_FP64 : MMP_FORMAT_FP32,
                                    .mul_format = -1, .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY,
                                    .layouts_d = MMP_LAYOUTS_ROW};
    mmp_env env;
    mmp_env_capture(&env, -1, seed, argc, argv);   /* queries CUDA in a child process */
    mmp_env_print(stdout, &env, "# ");
    int nthreads = mmp_parallel_threads(threads);
    printf("# bench_reference: %s x %s -> %s, %s data, host threads %d, seed %" PRIu64 ", BLAS %s\n",
           mmp_format_name(fa), mmp_format_name(fb), mmp_format_name(fd), have_dist ? mmp_dist_name(dist) : "uniform",
           nthreads, seed, mmp_ref_blas_name());
    int64_t disagreements = 0;
    if (gpu) {   /* the CUDA context, cuBLAS and the kernels' modules, once (the runner's child
                    has them before its reference too): untimed, printed */
        mmp_gemm g;
        mmp_gemm_init(&g, fa, fb, fd, fd, 64, 64, 64);
        void *a = make(fa, 64, 64), *b = make(fb, 64, 64);
        for (int ri = 0; ri < nroutes; ri++) {   /* each route's cuBLAS kernels loaded too */
            mmp_ref_options o;
            mmp_ref_options_init(&o);
            o.path = MMP_REF_PATH_CUDA;
            o.device_version = device_version;
            bench_route(&o, (int)routes[ri]);
            mmp_ref_result r;
            mmp_ref_result_init(&r);
            if (a && b && mmp_ref_gemm(&r, a, b, NULL, &g, &o) == MMP_STATUS_OK)
                printf("# device warm-up (CUDA context, cuBLAS, modules): %.3f s at 64^3, %s route\n", r.time.total_s,
                       route_name(&r));
            else
                printf("# device warm-up FAILED: %s\n", mmp_error_last());
            mmp_ref_result_clear(&r);
        }
        free(a); free(b);
    }
    for (int s = 0; s < nsizes; s++) {
        int64_t n = sizes[s];
        mmp_gemm g;
        mmp_gemm_init(&g, fa, fb, fd, fd, n, n, n);
        g.alpha = alpha; g.beta = beta;
        if (col) { g.la = g.lb = MMP_LAYOUT_COL; }
        void *a = make_operand(0, fa, n, col, seed), *b = make_operand(1, fb, n, col, seed);
        void *c = beta != 0.0 ? make_operand(2, fd, n, 0, seed) : NULL;
        if (!a || !b || (beta != 0.0 && !c)) { fprintf(stderr, "bench_reference: out of memory at %lld\n", (long long)n); return 3; }
        printf("\n## %lld x %lld x %lld\n", (long long)n, (long long)n, (long long)n);
        for (int ri = 0; ri < nroutes; ri++) {   /* --routes: each route on the same operands */
            mmp_ref_options o;
            mmp_ref_options_init(&o);
            o.threads = threads;
            o.path = gpu ? MMP_REF_PATH_CUDA : MMP_REF_PATH_CERTIFIED;
            o.device_version = device_version;
            bench_route(&o, (int)routes[ri]);
            void *da = NULL, *db = NULL, *dc = NULL;   /* --operands-on-device: uploaded untimed, as a harness has them */
            if (gpu && on_device) {
                mmp_status su = ref_cuda2_upload(&da, a, g.a, g.la, g.lda, n, n, 0);
                if (su == MMP_STATUS_OK) su = ref_cuda2_upload(&db, b, g.b, g.lb, g.ldb, n, n, 0);
                if (su == MMP_STATUS_OK && c) su = ref_cuda2_upload(&dc, c, g.c, g.lc, g.ldc, n, n, 0);
                if (su != MMP_STATUS_OK) { printf("operands on device: FAILED: %s\n", mmp_error_last()); return mmp_status_exit_code(su); }
                o.dev_a = da; o.dev_b = db; o.dev_c = dc;
                printf("operands on device: A, B%s uploaded before the timer (the DGEMM's are resident too)\n", c ? ", C" : "");
            }
            mmp_ref_result r;
            mmp_ref_result_init(&r);
            mmp_status st = MMP_STATUS_OK;
            for (int rep = 0; rep < repeat && st == MMP_STATUS_OK; rep++) {   /* --repeat: the last run counts */
                mmp_ref_result_clear(&r);
                mmp_ref_result_init(&r);
                st = mmp_ref_gemm(&r, a, b, c, &g, &o);
                if (st == MMP_STATUS_OK && rep < repeat - 1)
                    printf("run %d of %d (not the one reported): total %.4f s, resident %.4f s, slice GEMMs %.4f s\n",
                           rep + 1, repeat, r.time.total_s, r.split.resident_s, r.time.gemm_s - r.split.absbound_s);
            }
            ref_cuda2_free(da); ref_cuda2_free(db); ref_cuda2_free(dc);
            if (st != MMP_STATUS_OK) {
                printf("certified %s: FAILED: %s\n", gpu ? "gpu" : "cpu", mmp_error_last());
                free(a); free(b); free(c);
                return mmp_status_exit_code(st);
            }
            printf("certified %s%s: %.3f s (convert %.3f, gemm %.3f, combine+decide %.3f, mpfr %.3f); "
                   "n_mpfr %lld of %lld; slices %dx%d of %d bits, %d levels, %lld %s%s)\n",
                   gpu ? "gpu" : "cpu", !gpu ? "" : r.split.version == 2 ? " v2" : " v1", r.time.total_s, r.time.convert_s, r.time.gemm_s, r.time.combine_s,
                   r.time.mpfr_s, (long long)r.n_mpfr, (long long)(n * n), r.slices_a, r.slices_b, r.slice_bits,
                   r.slice_levels, (long long)r.n_gemms, r.imma ? "int8 GEMMs (route " : r.lists ? "DGEMMs (route lists" : "DGEMMs (route dgemm", r.imma ? route_name(&r) : "");
            if (r.lists)
                printf("slice products from lists: %.3e products (a DGEMM of the same shape: %.3e multiply-adds)\n",
                       r.n_list_products, (double)n * n * n);
            printf("open after the bound: dot stage %lld in %.3f s, exact evaluator %lld in %.3f s, mpfr %lld "
                   "(%.2e of the elements past the dot stage)\n", (long long)r.split.n_dot, r.split.dot_s,
                   (long long)r.n_exact, r.time.exact_s, (long long)r.n_mpfr, (double)(r.n_exact + r.n_mpfr) / (double)(n * n));
            if (gpu) {
                printf("device memory: %.2f GB at most in use (operands %.2f GB in binary64)\n",
                       r.device_peak_bytes / 1e9, (double)(2 * n * n) * 8 / 1e9);
                if (r.split.version == 2)
                    printf("device path v2 split (s): setup %.3f, upload %.3f, decode %.3f, prepare %.3f, slice %.3f, "
                           "DGEMMs %.3f, accumulate %.3f, finish+decide %.3f, |A||B| %.3f, download %.3f, mpfr %.3f; "
                           "%s remainders: %lld\n",
                           r.split.setup_s, r.split.upload_s, r.split.decode_s, r.split.prepare_s, r.split.slice_s,
                           r.time.gemm_s - r.split.absbound_s, r.split.accumulate_s, r.split.finish_s, r.split.absbound_s,
                           r.split.download_s, r.time.mpfr_s, r.split.sparse ? "sparse (exact)" : "bounded",
                           (long long)r.split.n_remainders);
                else
                    printf("device path v1 split (s): host load %.3f, host prepare %.3f, setup %.3f, upload %.3f, slice %.3f, "
                           "|A||B| %.3f, DGEMMs %.3f, accumulate %.3f, download %.3f, host finish %.3f\n",
                           r.split.load_s, r.split.prepare_s, r.split.setup_s, r.split.upload_s, r.split.slice_s,
                           r.split.absbound_s, r.time.gemm_s - r.split.absbound_s, r.split.accumulate_s, r.split.download_s,
                           r.split.finish_s);
                double t_dgemm = 0;
                if (ref_cuda_time_dgemm(&t_dgemm, n, n, n, 0) == MMP_STATUS_OK) {
                    printf("cublas dgemm: %.4f s (best of 3); certified gpu / dgemm = %.1fx\n", t_dgemm,
                           r.time.total_s / t_dgemm);
                    if (r.split.version == 2)
                        printf("certified gpu v2: route %s: resident on device %.4f s = %.2f x DGEMM; download %.4f s = "
                               "%.2f x DGEMM; total %.4f s = %.2f x DGEMM (setup %.4f s, mpfr %.4f s, n_mpfr %lld)\n",
                               route_name(&r), r.split.resident_s,
                               r.split.resident_s / t_dgemm, r.split.download_s, r.split.download_s / t_dgemm,
                               r.time.total_s, r.time.total_s / t_dgemm, r.split.setup_s, r.time.mpfr_s, (long long)r.n_mpfr);
                } else {
                    printf("cublas dgemm: FAILED: %s\n", mmp_error_last());
                }
            }
            if (gpu && compare_cpu) {
                mmp_ref_options oc = o;
                oc.path = MMP_REF_PATH_CERTIFIED;
                mmp_ref_result rc;
                mmp_ref_result_init(&rc);
                if (mmp_ref_gemm(&rc, a, b, c, &g, &oc) == MMP_STATUS_OK) {
                    int64_t bad = count_differ(&rc, &r, n * n);
                    disagreements += bad;
                    printf("compared with the certified cpu path (%.3f s, n_mpfr %lld): %lld elements, %lld disagreements\n",
                           rc.time.total_s, (long long)rc.n_mpfr, (long long)(n * n), (long long)bad);
                } else {
                    printf("certified cpu: FAILED: %s\n", mmp_error_last());
                }
                mmp_ref_result_clear(&rc);
            }
            /* the naive anchor: full, or the first rows extrapolated */
            int64_t rows = n <= full_max ? n : (mpfr_rows < n ? mpfr_rows : n);
            if (rows > 0) {
                mmp_gemm gs = g;
                gs.m = rows;
                mmp_ref_options om = o;
                om.path = MMP_REF_PATH_MPFR;
                mmp_ref_result rm;
                mmp_ref_result_init(&rm);
                if (mmp_ref_gemm(&rm, a, b, c, &gs, &om) == MMP_STATUS_OK) {
                    int64_t bad = count_differ(&rm, &r, rows * n);
                    disagreements += bad;
                    double t = rm.time.total_s, full = t * (double)n / (double)rows;
                    double per = rm.time.mpfr_s * nthreads / ((double)rows * n * n) * 1e9;
                    printf("naive mpfr: %s%lld of %lld rows in %.3f s%s; %.0f ns per multiply-add per core; "
                           "certified is %.0fx faster\n", rows < n ? "" : "all ", (long long)rows, (long long)n, t,
                           rows < n ? " -> extrapolated to all rows" : "", per, full / r.time.total_s);
                    if (rows < n) printf("naive mpfr extrapolated: %.1f s\n", full);
                    printf("compared with mpfr: %lld elements, %lld disagreements\n", (long long)(rows * n),
                           (long long)bad);
                }
                mmp_ref_result_clear(&rm);
            }
            if (sample > 0) {
                int64_t *idx = malloc((size_t)sample * sizeof(int64_t));
                for (int64_t t = 0; t < sample; t++) idx[t] = (int64_t)((urand() + 1.0) * 0.5 * (double)(n * n)) % (n * n);
                sample_job j = {a, b, c, &g, &r, idx, {0}};
                double t0 = mmp_clock_now();
                mmp_parallel_for(nthreads > 256 ? 256 : nthreads, sample, 4, sample_range, &j);
                int64_t bad = 0;
                for (int t = 0; t < 256; t++) bad += j.bad[t];
                disagreements += bad;
                printf("sampled vs pure mpfr: %lld random elements, %lld disagreements (%.1f s)\n",
                       (long long)sample, (long long)bad, mmp_clock_now() - t0);
                free(idx);
            }
            mmp_ref_result_clear(&r);
        }
        free(a); free(b); free(c);
    }
    if (naive_size > 0) {
        int64_t m = naive_size;
        mmp_gemm g;
        mmp_gemm_init(&g, fa, fb, fd, fd, m, m, m);
        void *a = make(fa, m, m), *b = make(fb, m, m);
        mmp_ref_options o;
        mmp_ref_options_init(&o);
        o.threads = threads;
        o.path = MMP_REF_PATH_MPFR;
        mmp_ref_result r;
        mmp_ref_result_init(&r);
        if (a && b && mmp_ref_gemm(&r, a, b, NULL, &g, &o) == MMP_STATUS_OK) {
            double macs = (double)m * m * m;
            printf("\nnaive mpfr triple loop: %lld^3 in %.2f s on %d threads (%.0f ns per multiply-add "
                   "per core)\n", (long long)m, r.time.mpfr_s, nthreads, r.time.mpfr_s * nthreads / macs * 1e9);
            for (int s = 0; s < nsizes; s++) {
                double big = (double)sizes[s] * sizes[s] * sizes[s];
                printf("naive mpfr extrapolated to %lld^3: %.0f s (%.2f h) on %d threads\n", (long long)sizes[s],
                       r.time.mpfr_s * big / macs, r.time.mpfr_s * big / macs / 3600, nthreads);
            }
        }
        mmp_ref_result_clear(&r);
        free(a); free(b);
    }
    printf("\n# disagreements: %lld\n", (long long)disagreements);
    return disagreements ? 1 : 0;
}
