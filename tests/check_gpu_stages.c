/* check_gpu_stages.c — a device case's stages on the device (runner_dev.cu) against the host
 * stages they replace (runner_stages.c, buffer.c), which stay the oracle:
 *   - inputs: every format, every distribution, A, B and C, both layouts with ld padding: the
 *     device fill's bytes (canaries in the padding included) equal the host fill's;
 *   - the subnormal excess: the device's DGEMMs against metrics_sub.c, wide data; and where
 *     it is left out, 0 only where the host's value cannot change a bound;
 *   - the NaN/Inf excuse under tf32 input rounding in the device comparison, on planted
 *     elements: an excused NaN, a NaN no rounding explains, a finite value where Inf is due;
 *   - damage: a planted change in a guard, in the ld padding and in a matrix element is
 *     counted, with its first position, as mmp_buffer_damage counts it;
 *   - verdicts: the built-in smoke and edge suites of a set of device kernels and every CUDA
 *     mutant's suite-file cases give the same verdict, reasons, message, counts, metrics,
 *     histogram, heatmap and its cell marks (the norm to 1e-12: its sums are rounded in another order) with
 *     MMP_DEVICE_STAGES=0 (the host stages and comparison) and without (the device stages and
 *     the comparison on the device).
 * Each test runs in check's forked child; the verdict test creates no CUDA context itself
 * (mmp_runner_run forks its own children). Without a CUDA device: exit 77 with the reason.
 *
 *   build/tests/check_gpu_stages            (ctest -L gpu)
 */
#define MMP_CHECK_GPU
#include "tests/check_main.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/metrics.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "runner_devcheck.h"
#include "runner_internal.h"

static const mmp_dist dists[] = {MMP_DIST_EXACT, MMP_DIST_UNIFORM, MMP_DIST_NORMAL, MMP_DIST_WIDE,
                                 MMP_DIST_CANCEL, MMP_DIST_ONEHOT, MMP_DIST_SPECIAL};

/* A descriptor with every operand in format f (accumulating in fp32, or int32 for integers). */
static mmp_kernel_desc desc_for(mmp_format f)
{
    mmp_kernel_desc k;
    memset(&k, 0, sizeof k);
    int is_float = mmp_format_get_info(f)->is_float;
    k.name = "stages_probe";
    k.a_format = k.b_format = k.c_format = f;
    k.acc_format = k.d_format = is_float ? (f == MMP_FORMAT_FP64 ? MMP_FORMAT_FP64 : MMP_FORMAT_FP32) : MMP_FORMAT_INT32;
    k.mul_format = -1;
    k.where = MMP_KERNEL_DEVICE;
    k.layouts_a = k.layouts_b = k.layouts_d = 3;
    return k;
}

START_TEST(fill_matches_host)
{
    mmp_format f = (mmp_format)_i;
    mmp_kernel_desc k = desc_for(f);
    void *stream;
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert(mmp_runner_stream(&stream) == MMP_STATUS_OK);
    int64_t compared = 0;
    for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++)
        for (int lay = 0; lay < 2; lay++) {
            mmp_case c;
            mmp_case_init(&c, &k, 37, 66, 53, dists[d], mmp_check_seed + d);
            c.la = c.lb = c.lc = (mmp_layout)lay;
            c.lda = (lay == MMP_LAYOUT_ROW ? c.k : c.m) + 6;
            c.ldb = (lay == MMP_LAYOUT_ROW ? c.n : c.k) + 2;
            c.ldc = (lay == MMP_LAYOUT_ROW ? c.n : c.m) + 3;
            mmp_case_finish(&c);
            mmp_dist_ctx x;
            mmp_dist_ctx_init(&x, &c);
            for (int mat = 0; mat < 3; mat++) {
                int64_t rows = mat == 1 ? c.k : c.m, cols = mat == 0 ? c.k : c.n;
                int64_t ld = mat == 0 ? c.lda : mat == 1 ? c.ldb : c.ldc;
                mmp_buffer h, g;
                ck_assert(mmp_buffer_init(&h, f, (mmp_layout)lay, ld, rows, cols) == MMP_STATUS_OK);
                ck_assert(mmp_buffer_init(&g, f, (mmp_layout)lay, ld, rows, cols) == MMP_STATUS_OK);
                mmp_buffer_fill_canary(&h);
                mmp_runner_fill(&h, &x, mat);
                ck_assert(mmp_buffer_dev_init(&g) == MMP_STATUS_OK);
                ck_assert(mmp_buffer_dev_canary(&g, stream) == MMP_STATUS_OK);
                ck_assert(mmp_buffer_dev_fill(&g, &x, mat, stream) == MMP_STATUS_OK);
                ck_assert(mmp_buffer_dev_download(mmp_buffer_host(&g), &g, stream) == MMP_STATUS_OK);
                const unsigned char *hp = mmp_buffer_host(&h), *gp = mmp_buffer_host(&g);
                size_t first = h.data_bytes;
                for (size_t t = 0; t < h.data_bytes && first == h.data_bytes; t++)
                    if (hp[t] != gp[t]) first = t;
                ck_assert_msg(first == h.data_bytes, "%s %s %s operand %d: byte %zu of %zu differs (host %02x device %02x)",
                              mmp_format_name(f), mmp_dist_name(dists[d]), lay ? "col" : "row", mat, first,
                              h.data_bytes, hp[first], gp[first]);
                compared += (int64_t)h.data_bytes;
                mmp_buffer_clear(&h);
                mmp_buffer_clear(&g);
            }
        }
    printf("%s: %lld bytes equal over 7 distributions x 2 layouts x 3 operands\n", mmp_format_name(f),
           (long long)compared);
}
END_TEST

/* One change in the front guard, one in the ld padding, two matrix elements. */
START_TEST(damage_matches_host)
{
    mmp_format f = (mmp_format)_i;
    void *stream;
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert(mmp_runner_stream(&stream) == MMP_STATUS_OK);
    for (int lay = 0; lay < 2; lay++) {
        int64_t rows = 19, cols = 23, ld = (lay == MMP_LAYOUT_ROW ? cols : rows) + 5;
        mmp_buffer h, g;
        ck_assert(mmp_buffer_init(&h, f, (mmp_layout)lay, ld, rows, cols) == MMP_STATUS_OK);
        ck_assert(mmp_buffer_init(&g, f, (mmp_layout)lay, ld, rows, cols) == MMP_STATUS_OK);
        mmp_buffer_fill_canary(&h);
        mmp_buffer_fill_logical_bits(&h, 1);
        mmp_buffer_snapshot(&h);
        ck_assert(mmp_buffer_dev_init(&g) == MMP_STATUS_OK);
        ck_assert(mmp_buffer_dev_canary(&g, stream) == MMP_STATUS_OK);
        ck_assert(mmp_buffer_dev_fill_bits(&g, 1, stream) == MMP_STATUS_OK);
        ck_assert(mmp_buffer_dev_snapshot(&g, stream) == MMP_STATUS_OK);
        /* the same image on both sides, then the same damage */
        ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
        unsigned char *img = malloc(g.total);
        ck_assert_int_eq(cudaMemcpy(img, g.dev, g.total, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_msg(memcmp(img, h.image, h.total) == 0, "%s: images differ before the damage", mmp_format_name(f));
        size_t elem_pad = (size_t)(lay == MMP_LAYOUT_ROW ? 3 * ld + cols + 2 : 4 * ld + rows + 1);
        size_t elem_a = (size_t)mmp_gemm_index((mmp_layout)lay, ld, 7, 11), elem_b = (size_t)mmp_gemm_index((mmp_layout)lay, ld, 2, 20);
        img[100] ^= 0x10;
        unsigned char *data = img + MMP_GUARD_BYTES;
        mmp_format_store_bits(data, elem_pad, 2, f);
        mmp_format_store_bits(data, elem_a, 3, f);
        mmp_format_store_bits(data, elem_b, 3, f);
        memcpy(h.image, img, h.total);
        ck_assert_int_eq(cudaMemcpy(g.dev, img, g.total, cudaMemcpyHostToDevice), cudaSuccess);
        mmp_damage dh, dg;
        mmp_buffer_damage(&dh, &h, 1);
        ck_assert(mmp_buffer_dev_damage(&dg, &g, 1, stream) == MMP_STATUS_OK);
        ck_assert_msg(dh.guard_bytes == 1 && dh.padding == 1 && dh.logical == 2, "%s: host counts %lld %lld %lld",
                      mmp_format_name(f), (long long)dh.guard_bytes, (long long)dh.padding, (long long)dh.logical);
        ck_assert_msg(dg.guard_bytes == dh.guard_bytes && dg.first_guard == dh.first_guard && dg.padding == dh.padding &&
                      dg.pad_i == dh.pad_i && dg.pad_j == dh.pad_j && dg.logical == dh.logical && dg.log_i == dh.log_i &&
                      dg.log_j == dh.log_j,
                      "%s %s: device %lld@%lld %lld@(%lld,%lld) %lld@(%lld,%lld), host %lld@%lld %lld@(%lld,%lld) %lld@(%lld,%lld)",
                      mmp_format_name(f), lay ? "col" : "row", (long long)dg.guard_bytes, dg.first_guard,
                      (long long)dg.padding, (long long)dg.pad_i, (long long)dg.pad_j, (long long)dg.logical,
                      (long long)dg.log_i, (long long)dg.log_j, (long long)dh.guard_bytes, dh.first_guard,
                      (long long)dh.padding, (long long)dh.pad_i, (long long)dh.pad_j, (long long)dh.logical,
                      (long long)dh.log_i, (long long)dh.log_j);
        free(img);
        mmp_buffer_clear(&h);
        mmp_buffer_clear(&g);
    }
}
END_TEST

/* 45 x 70 x 96 of wide data (subnormals in both operands), A and B in layout lay, alpha -0.75. */
static void wide_case(mmp_case *c, const mmp_kernel_desc *k, int lay, uint64_t seed)
{
    mmp_case_init(c, k, 45, 70, 96, MMP_DIST_WIDE, seed);
    c->la = c->lb = (mmp_layout)lay;
    c->alpha = -0.75;
    mmp_case_finish(c);
}

/* The subnormal excess as DGEMMs on the device equals metrics_sub.c's loops to rounding:
 * wide data (subnormals in both operands), both layouts, a negative alpha. */
START_TEST(excess_matches_host)
{
    static const mmp_format fmts[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_E4M3};
    mmp_format f = fmts[_i];
    mmp_kernel_desc k = desc_for(f);
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    for (int lay = 0; lay < 2; lay++) {
        mmp_case c;
        wide_case(&c, &k, lay, mmp_check_seed + 3);
        size_t sa = mmp_format_bytes(f, mmp_gemm_span(c.la, c.lda, c.m, c.k));
        size_t sb = mmp_format_bytes(f, mmp_gemm_span(c.lb, c.ldb, c.k, c.n));
        void *a = calloc(1, sa), *b = calloc(1, sb), *da, *db;
        ck_assert(mmp_case_fill(a, &c, 0) == MMP_STATUS_OK && mmp_case_fill(b, &c, 1) == MMP_STATUS_OK);
        ck_assert_int_eq(cudaMalloc(&da, sa), cudaSuccess);
        ck_assert_int_eq(cudaMalloc(&db, sb), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(da, a, sa, cudaMemcpyHostToDevice), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(db, b, sb, cudaMemcpyHostToDevice), cudaSuccess);
        size_t mn = (size_t)(c.m * c.n);
        double *eh = malloc(mn * 8), *sh = malloc(mn * 8), *ed = malloc(mn * 8), *sd = malloc(mn * 8);
        ck_assert(mmp_metrics_subnormal_excess(eh, sh, a, f, c.la, c.lda, b, f, c.lb, c.ldb, c.m, c.n, c.k, c.alpha) ==
                  MMP_STATUS_OK);
        int none = -1;
        ck_assert_msg(mmp_metrics_subnormal_excess_device(ed, sd, &none, da, f, c.la, c.lda, db, f, c.lb, c.ldb, c.m, c.n,
                                                          c.k, c.alpha, NULL, 0, 0) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_int_eq(none, 0);
        int64_t nonzero = 0;
        for (size_t x = 0; x < mn; x++) {
            nonzero += eh[x] != 0;
            ck_assert_msg(fabs(eh[x] - ed[x]) <= 1e-13 * eh[x] && fabs(sh[x] - sd[x]) <= 1e-13 * sh[x],
                          "%s %s element %zu: excess host %a device %a, sub_abs host %a device %a", mmp_format_name(f),
                          lay ? "col" : "row", x, eh[x], ed[x], sh[x], sd[x]);
        }
        ck_assert_msg(nonzero > (int64_t)mn / 4, "%s: only %lld of %zu elements have an excess: the test is weak",
                      mmp_format_name(f), (long long)nonzero, mn);
        /* exact data (small integers): no subnormal, so no excess and nothing computed */
        mmp_case u = c;
        u.dist = MMP_DIST_EXACT;
        mmp_case_finish(&u);
        ck_assert(mmp_case_fill(a, &u, 0) == MMP_STATUS_OK && mmp_case_fill(b, &u, 1) == MMP_STATUS_OK);
        ck_assert_int_eq(cudaMemcpy(da, a, sa, cudaMemcpyHostToDevice), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(db, b, sb, cudaMemcpyHostToDevice), cudaSuccess);
        ck_assert(mmp_metrics_subnormal_excess_device(ed, sd, &none, da, f, c.la, c.lda, db, f, c.lb, c.ldb, c.m, c.n,
                                                      c.k, c.alpha, NULL, 0, 0) == MMP_STATUS_OK);
        ck_assert_int_eq(none, 1);
        free(a); free(b); free(eh); free(sh); free(ed); free(sd);
        cudaFree(da);
        cudaFree(db);
    }
}
END_TEST

/* The excess left out where it cannot matter (metrics_sub_cuda.cu's skip route) against
 * metrics_sub.c on wide data, three ways per format and layout: the elements' own |A||B| sums
 * (most excesses left out); those sums with every 97th set to 0 (a few elements need theirs:
 * summed one by one); all set to 0 (every element needs it: the DGEMMs); and the count alone
 * (no output) says "none" only where every element came out 0. Every element is
 * either the host's value to rounding, or 0 where the host's value leaves the bound, both
 * gammas' bounds and the rounding margin bit for bit unchanged. */
START_TEST(excess_skip_matches_host)
{
    static const mmp_format fmts[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_E4M3};
    mmp_format f = fmts[_i];
    mmp_kernel_desc kd = desc_for(f);
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    int64_t left_out[3] = {0, 0, 0}, summed[3] = {0, 0, 0};
    for (int lay = 0; lay < 2; lay++) {
        mmp_case c;
        wide_case(&c, &kd, lay, mmp_check_seed + 5);
        int64_t m = c.m, n = c.n, k = c.k;
        size_t sa = mmp_format_bytes(f, mmp_gemm_span(c.la, c.lda, m, k));
        size_t sb = mmp_format_bytes(f, mmp_gemm_span(c.lb, c.ldb, k, n));
        size_t mn = (size_t)(m * n);
        void *a = calloc(1, sa), *b = calloc(1, sb), *da, *db;
        double *eh = malloc(mn * 8), *sh = malloc(mn * 8), *ed = malloc(mn * 8), *sd = malloc(mn * 8);
        double *s = malloc(mn * 8), *want = malloc(mn * 8), *ds, *dw, *de, *dsa;
        ck_assert(mmp_case_fill(a, &c, 0) == MMP_STATUS_OK && mmp_case_fill(b, &c, 1) == MMP_STATUS_OK);
        ck_assert(mmp_metrics_subnormal_excess(eh, sh, a, f, c.la, c.lda, b, f, c.lb, c.ldb, m, n, k, c.alpha) ==
                  MMP_STATUS_OK);
        ck_assert_int_eq(cudaMalloc(&da, sa), cudaSuccess);
        ck_assert_int_eq(cudaMalloc(&db, sb), cudaSuccess);
        ck_assert_int_eq(cudaMalloc((void **)&ds, mn * 8), cudaSuccess);
        ck_assert_int_eq(cudaMalloc((void **)&dw, mn * 8), cudaSuccess);
        ck_assert_int_eq(cudaMalloc((void **)&de, mn * 8), cudaSuccess);
        ck_assert_int_eq(cudaMalloc((void **)&dsa, mn * 8), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(da, a, sa, cudaMemcpyHostToDevice), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(db, b, sb, cudaMemcpyHostToDevice), cudaSuccess);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ab = 0, w = 0;
                for (int64_t q = 0; q < k; q++) {
                    double x = mmp_format_load(a, mmp_gemm_index(c.la, c.lda, i, q), f);
                    double y = mmp_format_load(b, mmp_gemm_index(c.lb, c.ldb, q, j), f);
                    ab += fabs(x) * fabs(y);
                    w += x * y;
                }
                s[i * n + j] = ab * 0.75 * (1 + 0x1p-40);
                want[i * n + j] = w * c.alpha;
            }
        ck_assert_int_eq(cudaMemcpy(dw, want, mn * 8, cudaMemcpyHostToDevice), cudaSuccess);
        mmp_metrics_input in;
        memset(&in, 0, sizeof in);
        in.d_format = in.acc_format = MMP_FORMAT_FP32;
        in.k = k;
        in.u_acc = 0x1p-23;
        mmp_metrics_bound bp;
        mmp_metrics_bound_init(&bp, &in);
        for (int v = 0; v < 3; v++) {
            double *sv = malloc(mn * 8);
            for (size_t x = 0; x < mn; x++) sv[x] = v == 2 || (v == 1 && x % 97 == 0) ? 0.0 : s[x];
            ck_assert_int_eq(cudaMemcpy(ds, sv, mn * 8, cudaMemcpyHostToDevice), cudaSuccess);
            mmp_metrics_excess_skip skip = {ds, dw, mmp_metrics_excess_rel(&bp)};
            int none0 = -1;   /* the count alone: 1 when no element needs its excess */
            ck_assert(mmp_metrics_subnormal_excess_device(NULL, NULL, &none0, da, f, c.la, c.lda, db, f, c.lb, c.ldb, m,
                                                          n, k, c.alpha, &skip, 0, 1) == MMP_STATUS_OK);
            ck_assert_msg(v == 0 || none0 == 0, "%s way %d: no element needs its excess?", mmp_format_name(f), v);
            int none = -1;
            ck_assert_msg(mmp_metrics_subnormal_excess_device(de, dsa, &none, da, f, c.la, c.lda, db, f, c.lb, c.ldb, m,
                                                              n, k, c.alpha, &skip, 0, 1) == MMP_STATUS_OK,
                          "%s", mmp_error_last());
            ck_assert_int_eq(none, 0);
            ck_assert_int_eq(cudaMemcpy(ed, de, mn * 8, cudaMemcpyDeviceToHost), cudaSuccess);
            ck_assert_int_eq(cudaMemcpy(sd, dsa, mn * 8, cudaMemcpyDeviceToHost), cudaSuccess);
            for (size_t x = 0; none0 && x < mn; x++)
                ck_assert_msg(ed[x] == 0 && sd[x] == 0, "%s: 'none needed', yet element %zu has %a", mmp_format_name(f),
                              x, ed[x]);
            for (size_t x = 0; x < mn; x++) {
                if (fabs(eh[x] - ed[x]) <= 1e-13 * eh[x] && fabs(sh[x] - sd[x]) <= 1e-13 * sh[x]) {
                    summed[v] += eh[x] > 0;
                    continue;
                }
                ck_assert_msg(ed[x] == 0 && sd[x] == 0, "%s %s way %d element %zu: excess host %a device %a, sub_abs "
                              "host %a device %a", mmp_format_name(f), lay ? "col" : "row", v, x, eh[x], ed[x], sh[x],
                              sd[x]);
                for (int g = 0; g < 2; g++) {
                    double gamma = g ? bp.gamma_prob : bp.gamma_det;
                    ck_assert_msg(gamma * sv[x] + bp.gamma_sub * eh[x] + bp.abs_term == gamma * sv[x] + bp.abs_term,
                                  "%s way %d element %zu: the excess %a left out changes the bound", mmp_format_name(f),
                                  v, x, eh[x]);
                }
                ck_assert(sv[x] + eh[x] == sv[x] && !(sh[x] > 0 && sv[x] - sh[x] <= 1e-9 * sv[x]));
                left_out[v]++;
            }
            free(sv);
        }
        free(a); free(b); free(eh); free(sh); free(ed); free(sd); free(s); free(want);
        cudaFree(da); cudaFree(db); cudaFree(ds); cudaFree(dw); cudaFree(de); cudaFree(dsa);
    }
    /* bf16 and fp32 wide data: excesses far below the sums (~2^-170); the second way sums a
     * few. fp16 and e4m3 (a narrow exponent range): the excess counts everywhere: the DGEMMs */
    int wide_range = f == MMP_FORMAT_BF16 || f == MMP_FORMAT_FP32;
    ck_assert_msg(wide_range ? left_out[0] > 100 && left_out[1] > 100 && summed[1] > 10 && left_out[2] == 0 &&
                                   summed[2] > 100
                             : left_out[0] + left_out[1] + left_out[2] == 0 && summed[0] > 100,
                  "%s: left out %lld %lld %lld, summed %lld %lld %lld: a way was not taken", mmp_format_name(f),
                  (long long)left_out[0], (long long)left_out[1], (long long)left_out[2], (long long)summed[0],
                  (long long)summed[1], (long long)summed[2]);
}
END_TEST

/* ---- the NaN/Inf excuse under tf32 input rounding, on the device (runner_devcheck.cu) ----
 * One row of four outputs, A = [Inf, 1], all exact values +Inf:
 *   col 0: b = [2^-149, 1], output NaN: tf32 flushes 2^-149 to 0, Inf x 0 is NaN: excused;
 *   col 1: b = [1, 1], output NaN: no rounding of these inputs gives NaN: a mismatch;
 *   col 2: b = [2^-149, 1], output +Inf: right;
 *   col 3: b = [1, 1], output 5: a finite output where Inf is due is never excused.
 * Without the excuse (alt_on 0) column 0 is a NaN mismatch too, and the first one. */
static void devcheck_tf32(mmp_devcheck_row *row, int alt_on)
{
    const float a[2] = {INFINITY, 1.0f};
    const float tiny = 0x1p-149f;
    const float b[8] = {tiny, 1.0f, tiny, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};   /* row-major 2 x 4 */
    const float got[4] = {NAN, NAN, INFINITY, 5.0f};
    const double want[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    void *da, *db, *dg0, *dg1;
    double *dw;
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&da, sizeof a), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&db, sizeof b), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dg0, sizeof got), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dg1, sizeof got), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&dw, sizeof want), cudaSuccess);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemcpy(dg0, got, sizeof got, cudaMemcpyHostToDevice);
    cudaMemcpy(dg1, got, sizeof got, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, want, sizeof want, cudaMemcpyHostToDevice);
    mmp_devcheck_in in;
    memset(&in, 0, sizeof in);
    in.got0 = dg0; in.got1 = dg1; in.d64 = dw; in.dout = dw;
    mmp_format_hd_init(&in.df, MMP_FORMAT_FP32);
    in.layout_d = MMP_LAYOUT_ROW; in.ldd = 4; in.m = 1; in.n = 4; in.k = 2;
    in.poison0 = in.poison1 = 0xffbadbadu;
    for (int h = 0; h <= MMP_HIST_BINS; h++) in.hist_edge[h] = mmp_hist_edge(h);
    in.hr = 1; in.hc = 4;
    in.alt_on = alt_on;
    in.alt.a = da; in.alt.b = db;
    mmp_format_hd_init(&in.alt.fa, MMP_FORMAT_FP32); mmp_format_hd_init(&in.alt.fb, MMP_FORMAT_FP32);
    mmp_format_hd_init(&in.alt.fc, MMP_FORMAT_FP32); mmp_format_hd_init(&in.alt.mul, MMP_FORMAT_TF32);
    in.alt.la = in.alt.lb = in.alt.lc = MMP_LAYOUT_ROW;
    in.alt.lda = 2; in.alt.ldb = 4; in.alt.k = 2;
    in.alt.alpha = 1.0; in.alt.beta = 0.0;
    float heat[MMP_HEAT_MAX * MMP_HEAT_MAX];
    uint8_t marks[MMP_HEAT_MAX * MMP_HEAT_MAX];
    ck_assert_msg(mmp_devcheck_run(row, heat, marks, &in, NULL) == MMP_STATUS_OK, "%s", mmp_error_last());
    cudaFree(da); cudaFree(db); cudaFree(dg0); cudaFree(dg1); cudaFree(dw);
}

START_TEST(tf32_excuse_on_device)
{
    mmp_devcheck_row with, without;
    devcheck_tf32(&with, 1);
    devcheck_tf32(&without, 0);
    ck_assert_int_eq(with.count, 4);
    ck_assert_int_eq(with.nan_mismatch, 1);      /* column 1 */
    ck_assert_int_eq(with.inf_mismatch, 1);      /* column 3 */
    ck_assert_int_eq(with.nan_j, 1);
    ck_assert_int_eq(without.nan_mismatch, 2);   /* columns 0 and 1 */
    ck_assert_int_eq(without.inf_mismatch, 1);
    ck_assert_int_eq(without.nan_j, 0);
}
END_TEST

/* ---- verdicts: host stages against device stages ---- */
static const char *const kernels[] = {"cublas_bf16_f32", "cublas_f16_f16", "cublas_tf32", "cublaslt_e4m3_bf16",
                                      "cublaslt_i8_i32", "fp16_ptx_mma", "bf16_mma_swizzle_3stage", "fp8_mma",
                                      "int8_ptx_mma_k32", "int4_ptx_mma_k64", "simt_f64"};

static int same_double(double x, double y) { return (isnan(x) && isnan(y)) || x == y; }

/* Everything but the timings and the norm (its sums are rounded in another order: 1e-12) */
static int same_result(const mmp_case_result *a, const mmp_case_result *b)
{
    const mmp_metrics *p = &a->metrics, *q = &b->metrics;
    if (a->verdict != b->verdict || a->reasons != b->reasons || a->n_unwritten != b->n_unwritten ||
        a->n_nondet != b->n_nondet || a->n_guard != b->n_guard || a->n_input_modified != b->n_input_modified ||
        strcmp(a->message, b->message) != 0 || strcmp(a->tolerance, b->tolerance) != 0)
        return 0;
    if (p->count != q->count || p->nan_mismatch != q->nan_mismatch || p->inf_mismatch != q->inf_mismatch ||
        p->above_det != q->above_det || p->above_prob != q->above_prob || p->above_tol != q->above_tol ||
        p->first_bad_i != q->first_bad_i || p->first_bad_j != q->first_bad_j || p->worst_i != q->worst_i ||
        p->worst_j != q->worst_j || !same_double(p->worst_got, q->worst_got) ||
        !same_double(p->worst_want, q->worst_want) || !same_double(p->max_abs_err, q->max_abs_err) ||
        !same_double(p->max_rel_err, q->max_rel_err) || !same_double(p->max_ulp, q->max_ulp) ||
        !same_double(p->max_ratio_det, q->max_ratio_det) || !same_double(p->max_ratio_prob, q->max_ratio_prob) ||
        p->heat_rows != q->heat_rows || p->heat_cols != q->heat_cols)
        return 0;
    if (memcmp(p->hist, q->hist, sizeof p->hist) != 0 || memcmp(p->heat, q->heat, sizeof p->heat) != 0 ||
        memcmp(p->heat_mark, q->heat_mark, sizeof p->heat_mark) != 0)
        return 0;
    return same_double(p->norm_rel_err, q->norm_rel_err) || fabs(p->norm_rel_err - q->norm_rel_err) <= 1e-12 * p->norm_rel_err;
}

static void run_both(mmp_case *cases, size_t n, const char *what)
{
    mmp_case_result *host = calloc(n, sizeof *host), *dev = calloc(n, sizeof *dev);
    ck_assert(host && dev);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    o.timeout_s = 20;
    setenv("MMP_DEVICE_STAGES", "0", 1);
    ck_assert_msg(mmp_runner_run(host, cases, n, &o, NULL, NULL) == MMP_STATUS_OK, "%s", mmp_error_last());
    unsetenv("MMP_DEVICE_STAGES");
    ck_assert_msg(mmp_runner_run(dev, cases, n, &o, NULL, NULL) == MMP_STATUS_OK, "%s", mmp_error_last());
    int differ = 0, skips = 0;
    for (size_t i = 0; i < n; i++) {
        const mmp_case_result *a = &host[i], *b = &dev[i];
        skips += a->verdict == MMP_VERDICT_SKIP;
        /* a data race may or may not strike in a run: its verdict is not a property of the stages */
        if (strstr(a->id, "no_sync")) continue;
        if (same_result(a, b)) continue;
        char ra[256], rb[256];
        mmp_reason_format(ra, sizeof ra, a->reasons);
        mmp_reason_format(rb, sizeof rb, b->reasons);
        printf("  differ %s: host %s [%s] %s | device %s [%s] %s\n", a->id, mmp_verdict_name(a->verdict), ra,
               a->message, mmp_verdict_name(b->verdict), rb, b->message);
        printf("    host   ratio %.17g worst (%lld,%lld) first bad (%lld,%lld) above %lld norm %.17g ulp %.17g\n",
               a->metrics.max_ratio_det, (long long)a->metrics.worst_i, (long long)a->metrics.worst_j,
               (long long)a->metrics.first_bad_i, (long long)a->metrics.first_bad_j, (long long)a->metrics.above_tol,
               a->metrics.norm_rel_err, a->metrics.max_ulp);
        printf("    device ratio %.17g worst (%lld,%lld) first bad (%lld,%lld) above %lld norm %.17g ulp %.17g\n",
               b->metrics.max_ratio_det, (long long)b->metrics.worst_i, (long long)b->metrics.worst_j,
               (long long)b->metrics.first_bad_i, (long long)b->metrics.first_bad_j, (long long)b->metrics.above_tol,
               b->metrics.norm_rel_err, b->metrics.max_ulp);
        differ++;
    }
    printf("%s: %zu cases (%d skipped on both), %d differ\n", what, n, skips, differ);
    fflush(stdout);
    ck_assert_msg(differ == 0, "%s: %d of %zu cases differ between the host and the device stages", what, differ, n);
    free(host);
    free(dev);
}

START_TEST(verdicts_match_builtin)
{
    const char *suite = _i ? "edge" : "smoke";
    const mmp_kernel_desc *ks[sizeof kernels / sizeof kernels[0]];
    size_t nk = 0;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if ((ks[nk] = mmp_registry_find(kernels[i], MMP_REGISTRY_DEFAULT))) nk++;
    ck_assert_msg(nk >= 8, "only %zu of the listed kernels are registered", nk);
    mmp_case *cases;
    size_t n;
    ck_assert_msg(mmp_cases_build(&cases, &n, suite, ks, nk, NULL, mmp_check_seed) == MMP_STATUS_OK, "%s",
                  mmp_error_last());
    run_both(cases, n, suite);
    mmp_cases_free(cases);
}
END_TEST

const mmp_kernel_desc *mmp_kernels_cuda_mutants(size_t *count);   /* kernels/cuda_mutants.cu */

START_TEST(verdicts_match_mutants)
{
    size_t nk;
    const mmp_kernel_desc *t = mmp_kernels_cuda_mutants(&nk);
    const mmp_kernel_desc *family[64];
    for (size_t i = 0; i < nk && i < 64; i++) family[i] = &t[i];
    mmp_case *cases;
    size_t n, kept = 0;
    ck_assert_msg(mmp_suitefile_parse(&cases, &n, MMP_SOURCE_DIR "/kernels/cuda_mutants.suite", family,
                                      nk < 64 ? nk : 64, NULL, mmp_check_seed) == MMP_STATUS_OK, "%s", mmp_error_last());
    for (size_t i = 0; i < n; i++)   /* a timeout says nothing of the stages, and costs 20 s twice */
        if (!strstr(cases[i].kernel->name, "hang")) cases[kept++] = cases[i];
    run_both(cases, kept, "cuda mutants");
    mmp_cases_free(cases);
}
END_TEST

static Suite *stages_suite(void)
{
    Suite *s = suite_create("gpu_stages");
    TCase *t = tcase_create("device stages match the host stages");
    tcase_set_timeout(t, 900);
    tcase_add_loop_test(t, fill_matches_host, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, damage_matches_host, 0, MMP_FORMAT_COUNT_);
    tcase_add_loop_test(t, excess_matches_host, 0, 4);
    tcase_add_loop_test(t, excess_skip_matches_host, 0, 4);
    tcase_add_test(t, tf32_excuse_on_device);
    tcase_add_loop_test(t, verdicts_match_builtin, 0, 2);
    tcase_add_test(t, verdicts_match_mutants);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(stages_suite)
