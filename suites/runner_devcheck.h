/* suites/runner_devcheck.h — the comparison of a device case on the device (runner_devcheck.cu):
 * per output row, one record of everything the host comparison (runner_stages.c's scan,
 * metrics.c, runner_check.c, runner_verdict.c) computes from the elements of that row; the host
 * merges the records in row order (runner_check.c), so counts, maxima, histograms and first
 * positions are the host path's, and only the norms' sums are rounded in another order.
 * Only M records and the heatmap (its cells and their marks) cross the host link, never the
 * M x N arrays.
 *
 *   mmp_devcheck_in in = {...};        // device pointers, parameters (runner_check.c fills it)
 *   mmp_devcheck_row *rows = malloc(m * sizeof *rows); float heat[hr * hc]; uint8_t marks[hr * hc];
 *   mmp_devcheck_run(rows, heat, marks, &in, stream);
 * Outputs of up to MMP_DEVCHECK_MAX_N columns (mmp_check_device_ok leaves wider ones to the host).
 */
#ifndef MMAPROBE_RUNNER_DEVCHECK_H
#define MMAPROBE_RUNNER_DEVCHECK_H

#include <stdint.h>
#include "mmaprobe/gemm.h"
#include "mmaprobe/hd.h"
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"
#include "runner_alt_hd.h"

#define MMP_DEVCHECK_MAX_N ((int64_t)INT32_MAX - 128)   /* columns: a thread's column is an int */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmp_devcheck_row {
    int64_t n_un, un_j, n_nd, nd_j;           /* unwritten (poison) / nondeterministic elements */
    int64_t count, nan_mismatch, inf_mismatch, above_det, above_prob, above_tol, first_bad_j;
    double max_abs_err, max_rel_err, max_ulp, max_det, max_prob;
    int nan_det, nan_prob;                    /* some ratio was NaN (an infinite bound) */
    int overflow;                             /* integer output: exact value out of range */
    int64_t hist[MMP_HIST_BINS];
    double worst_ratio, worst_got, worst_want;
    int64_t worst_j;
    double sum_err2, sum_ref2;                /* scaled by 1 / scale */
    int64_t nan_j;                            /* first NaN/Inf class mismatch */
    double nan_got, nan_want;
    int64_t n_exact_bad, exact_j;             /* exact comparison */
    double exact_got, exact_want;
    int64_t n_flush, flush_j;                 /* flushed subnormals */
    double flush_want;
    double rq[5];                             /* biased rounding: sum s, s^2, t, t^2, count */
    int64_t n_finite_bad;                     /* beyond the tolerance, finite, not flushed */
} mmp_devcheck_row;

typedef struct mmp_devcheck_in {
    void *got0;                               /* device: run 1's output (unwritten elements are
                                                 overwritten with the reference), in layout ld */
    const void *got1;                         /* device: run 2's output */
    const double *d64, *dout, *absbound;      /* device, row-major M x N */
    const double *sub, *sub_abs;              /* device or NULL: subnormal-factor excess */
    mmp_format_hd df;
    int layout_d;
    int64_t ldd, m, n, k;
    uint64_t poison0, poison1;
    /* metrics (metrics.c's bound_params and the tolerance) */
    double u_mul, u_out, abs_term, gamma_sub, gamma_det, gamma_prob;
    int tol_mode;
    double atol, rtol, ulps;
    double ulp_nonfinite, emin_out;           /* output ulp: of a non-finite value; emin */
    double hist_edge[MMP_HIST_BINS + 1];
    int hr, hc;
    /* exact comparison, integer overflow */
    int exact;
    double out_max, out_lowest;
    /* flushed subnormals (flush_on 0: not checked) */
    int flush_on, pacc, no_c;
    double flush_lost, out_min_normal;
    /* biased rounding (round_on 0: not checked) */
    int round_on;
    double round_max_out, round_gamma, round_floor;
    /* NaN/Inf under a declared input rounding (alt_on 0: none; runner_alt_hd.h), the inputs
     * as filled on the device */
    int alt_on;
    mmp_alt_in alt;
} mmp_devcheck_in;

/* rows: M host records; heat: hr x hc host cells (maxima of the ratio, as metrics.h says);
 * marks: hr x hc cells, the worst mmp_heat_mark of their elements (unwritten, NaN/Inf mismatch;
 * guard marks come from the damage, on the host, as in the host path). */
mmp_status mmp_devcheck_run(mmp_devcheck_row *rows, float *heat, uint8_t *marks, const mmp_devcheck_in *in,
                            void *stream);

#ifdef __cplusplus
}
#endif
#endif
