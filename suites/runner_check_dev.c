/* runner_check_dev.c — a device case's comparison on the device: the parameters of the host
 * comparison (runner_check.c, runner_verdict.c, metrics.c) into one mmp_devcheck_in, the
 * subnormal-factor excess on the device when an input has subnormals (only where it can change
 * an element's bound: metrics_sub_cuda.cu), one pass of
 * runner_devcheck.cu, then the per-row records merged in row order into the case's counts,
 * metrics and first positions exactly as the host merges its blocks, and the verdict from those
 * facts by the host comparison's own message functions. Only M records and the heatmap (cells
 * and marks) come back over the host link. check_gpu_stages runs the built-in suites and the CUDA mutants both
 * ways and requires the same verdicts, reasons and counts.
 */
#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "runner_devcheck.h"
#include "runner_internal.h"

int mmp_check_device_ok(const mmp_case *c, const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    const char *e = getenv("MMP_DEVICE_CHECK");
    if (e && strcmp(e, "0") == 0) return 0;
    const mmp_format_info *df = mmp_format_get_info((mmp_format)k->d_format);
    if (!df || df->storage_bits < 8 || c->n > MMP_DEVCHECK_MAX_N) return 0;
    return !mmp_check_narrow_runs_model(c, o);
}

/* the subnormal-factor excess on the device: *sub, *sub_abs device arrays (NULL: no excess),
 * left out (0) where it cannot change the element's bound, margin or flush test (skip) */
static mmp_status device_excess(double **sub, double **sub_abs, const mmp_case *c, const mmp_buffer *ops,
                                const mmp_runner_options *o, const mmp_metrics_excess_skip *skip)
{
    const mmp_kernel_desc *k = c->kernel;
    *sub = *sub_abs = NULL;
    const mmp_format_info *fa = mmp_format_get_info((mmp_format)k->a_format);
    if (!fa || !fa->is_float || !ops[0].dev_pristine || !ops[1].dev_pristine) return MMP_STATUS_OK;
    const void *da = (const unsigned char *)ops[0].dev_pristine + MMP_GUARD_BYTES;
    const void *db = (const unsigned char *)ops[1].dev_pristine + MMP_GUARD_BYTES;
    int none = 1;
    MMP_TRY(mmp_metrics_subnormal_excess_device(NULL, NULL, &none, da, (mmp_format)k->a_format, c->la, c->lda, db,
                                                (mmp_format)k->b_format, c->lb, c->ldb, c->m, c->n, c->k, c->alpha,
                                                skip, o->device, 1));
    if (none) return MMP_STATUS_OK;   /* no subnormal, or no element whose bound it can change */
    size_t bytes = (size_t)(c->m * c->n) * sizeof(double);
    if (cudaMalloc((void **)sub, bytes) != cudaSuccess || cudaMalloc((void **)sub_abs, bytes) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(*sub);
        *sub = *sub_abs = NULL;
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate 2 x %zu bytes of device memory for the subnormal excess",
                       bytes);
    }
    return mmp_metrics_subnormal_excess_device(*sub, *sub_abs, &none, da, (mmp_format)k->a_format, c->la, c->lda, db,
                                               (mmp_format)k->b_format, c->lb, c->ldb, c->m, c->n, c->k, c->alpha,
                                               skip, o->device, 1);
}

static void fill_in(mmp_devcheck_in *d, const mmp_metrics_input *in, const mmp_case *c, const mmp_ref *ref,
                    const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format df = (mmp_format)k->d_format;
    const mmp_format_info *dfi = mmp_format_get_info(df), *acc = mmp_format_get_info((mmp_format)k->acc_format);
    mmp_metrics_bound bp;
    mmp_metrics_bound_init(&bp, in);
    mmp_format_hd_init(&d->df, df);
    d->layout_d = (int)c->ld;
    d->ldd = c->ldd; d->m = c->m; d->n = c->n; d->k = c->k;
    d->d64 = ref->dev_exact; d->dout = ref->dev_want_out; d->absbound = ref->dev_absdot;
    d->poison0 = mmp_runner_poison_bits(df, 0);
    d->poison1 = mmp_runner_poison_bits(df, 1);
    d->u_mul = bp.u_mul; d->u_out = bp.u_out; d->abs_term = bp.abs_term; d->gamma_sub = bp.gamma_sub;
    d->gamma_det = bp.gamma_det; d->gamma_prob = bp.gamma_prob;
    d->tol_mode = (int)o->tol.mode;
    d->atol = o->tol.atol; d->rtol = o->tol.rtol; d->ulps = o->tol.ulps;
    d->ulp_nonfinite = mmp_metrics_ulp(INFINITY, df);
    for (int h = 0; h <= MMP_HIST_BINS; h++) d->hist_edge[h] = mmp_hist_edge(h);
    d->hr = (int)(c->m < MMP_HEAT_MAX ? c->m : MMP_HEAT_MAX);
    d->hc = (int)(c->n < MMP_HEAT_MAX ? c->n : MMP_HEAT_MAX);
    d->exact = c->dist == MMP_DIST_EXACT || c->dist == MMP_DIST_ONEHOT || (acc && !acc->is_float);
    d->out_max = dfi->max_finite;
    d->out_lowest = dfi->lowest;
    d->flush_on = !d->exact && mmp_check_flush_params(&d->pacc, &d->flush_lost, &d->out_min_normal, c);
    d->no_c = !(c->beta != 0 && k->reads_c);
    d->round_on = !d->exact && mmp_check_rounding_params(&d->round_max_out, &d->round_gamma, &d->round_floor, c,
                                                         ref->dev_absdot != NULL);
}

/* The records merged in row order (metrics.c's block merge, one row per block). */
static void merge(mmp_case_result *r, int64_t *un_i, int64_t *un_j, int64_t *nd_i, int64_t *nd_j,
                  const mmp_devcheck_row *rows, const float *heat, const uint8_t *marks, const mmp_devcheck_in *d,
                  const mmp_metrics_bound *bp)
{
    mmp_metrics *out = &r->metrics;
    mmp_metrics_init(out);
    out->u_acc = bp->u_acc;
    out->lambda = bp->lambda;
    out->heat_rows = d->hr;
    out->heat_cols = d->hc;
    memcpy(out->heat, heat, (size_t)d->hr * d->hc * sizeof *heat);
    memcpy(out->heat_mark, marks, (size_t)d->hr * d->hc * sizeof *marks);
    long double sum_err2 = 0, sum_ref2 = 0;
    double worst = -1;
    for (int64_t i = 0; i < d->m; i++) {
        const mmp_devcheck_row *q = &rows[i];
        if (q->n_un && !r->n_unwritten) { *un_i = i; *un_j = q->un_j; }
        if (q->n_nd && !r->n_nondet) { *nd_i = i; *nd_j = q->nd_j; }
        r->n_unwritten += q->n_un;
        r->n_nondet += q->n_nd;
        out->count += q->count;
        out->nan_mismatch += q->nan_mismatch;
        out->inf_mismatch += q->inf_mismatch;
        out->above_det += q->above_det;
        out->above_prob += q->above_prob;
        if (q->max_abs_err > out->max_abs_err) out->max_abs_err = q->max_abs_err;
        if (q->max_rel_err > out->max_rel_err) out->max_rel_err = q->max_rel_err;
        if (q->max_ulp > out->max_ulp) out->max_ulp = q->max_ulp;
        double det = q->nan_det ? NAN : q->max_det, prob = q->nan_prob ? NAN : q->max_prob;
        if (det > out->max_ratio_det || isnan(det)) out->max_ratio_det = det;
        if (prob > out->max_ratio_prob || isnan(prob)) out->max_ratio_prob = prob;
        if (q->above_tol && !out->above_tol) { out->first_bad_i = i; out->first_bad_j = q->first_bad_j; }
        out->above_tol += q->above_tol;
        for (int h = 0; h < MMP_HIST_BINS; h++) out->hist[h] += (uint64_t)q->hist[h];
        if (q->worst_j >= 0 && q->worst_ratio > worst) {
            worst = q->worst_ratio;
            out->worst_i = i;
            out->worst_j = q->worst_j;
            out->worst_got = q->worst_got;
            out->worst_want = q->worst_want;
        }
        sum_err2 += q->sum_err2;
        sum_ref2 += q->sum_ref2;
    }
    out->norm_rel_err = sum_ref2 > 0 ? (double)sqrtl(sum_err2 / sum_ref2) : (sum_err2 > 0 ? INFINITY : 0.0);
}

mmp_status mmp_check_output_device(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, void *got0,
                                   const void *got1, const mmp_runner_options *o, const mmp_buffer *ops, void *stream)
{
    int64_t un_i = -1, un_j = -1, nd_i = -1, nd_j = -1;
    const mmp_kernel_desc *k = c->kernel;
    mmp_metrics_input in;
    mmp_check_input_init(&in, r, c, ref, NULL, o);
    mmp_devcheck_in d;
    memset(&d, 0, sizeof d);
    fill_in(&d, &in, c, ref, o);
    d.got0 = got0;
    d.got1 = got1;
    if (in.u_mul > 0 && ops && ops[0].dev_pristine && ops[1].dev_pristine) {   /* the NaN/Inf excuse, as the host's */
        d.alt_on = 1;
        mmp_check_alt_init(&d.alt, c, (const unsigned char *)ops[0].dev_pristine + MMP_GUARD_BYTES,
                           (const unsigned char *)ops[1].dev_pristine + MMP_GUARD_BYTES,
                           ops[2].dev_pristine ? (const unsigned char *)ops[2].dev_pristine + MMP_GUARD_BYTES : NULL);
    }
    double *sub = NULL, *sub_abs = NULL;
    mmp_metrics_bound bp;
    mmp_metrics_bound_init(&bp, &in);
    mmp_metrics_excess_skip skip = {ref->dev_absdot, ref->dev_exact, mmp_metrics_excess_rel(&bp)};
    mmp_status st = device_excess(&sub, &sub_abs, c, ops, o, ref->dev_absdot && ref->dev_exact ? &skip : NULL);
    d.sub = sub;
    d.sub_abs = sub_abs;
    mmp_devcheck_row *rows = malloc((size_t)c->m * sizeof *rows);
    float heat[MMP_HEAT_MAX * MMP_HEAT_MAX];
    uint8_t marks[MMP_HEAT_MAX * MMP_HEAT_MAX];
    if (!rows && st == MMP_STATUS_OK) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for the comparison's rows");
    if (st == MMP_STATUS_OK) st = mmp_devcheck_run(rows, heat, marks, &d, stream);
    cudaFree(sub);
    cudaFree(sub_abs);
    if (st != MMP_STATUS_OK) {
        free(rows);
        return st;
    }
    merge(r, &un_i, &un_j, &nd_i, &nd_j, rows, heat, marks, &d, &bp);
    mmp_runner_say_scan(r, c, un_i, un_j, nd_i, nd_j);
    mmp_runner_first_bad_unwritten(r, un_i, un_j);
    /* the verdict from the facts, in runner_check.c's order */
    mmp_metrics *m = &r->metrics;
    if (m->nan_mismatch || m->inf_mismatch) {
        r->reasons |= MMP_REASON_NAN_MISMATCH;
        for (int64_t i = 0; i < c->m; i++)
            if (rows[i].nan_j >= 0) {
                mmp_check_say_nan(r, i, rows[i].nan_j, rows[i].nan_got, rows[i].nan_want);
                break;
            }
    }
    int64_t n_exact = 0, n_flush = 0, finite_bad = 0, ei = -1, fi = -1;
    double q[5] = {0, 0, 0, 0, 0};
    for (int64_t i = 0; i < c->m; i++) {
        const mmp_devcheck_row *w = &rows[i];
        if (w->overflow && !mmp_format_get_info((mmp_format)k->d_format)->is_float) r->reasons |= MMP_REASON_OVERFLOW;
        if (w->n_exact_bad && ei < 0) ei = i;
        if (w->n_flush && fi < 0) fi = i;
        n_exact += w->n_exact_bad;
        n_flush += w->n_flush;
        finite_bad += w->n_finite_bad;
        for (int t = 0; t < 5; t++) q[t] += w->rq[t];
    }
    if (d.exact) {
        if (n_exact) mmp_check_say_exact(r, n_exact, ei, rows[ei].exact_j, rows[ei].exact_got, rows[ei].exact_want);
        free(rows);
        return MMP_STATUS_OK;
    }
    /* mmp_check_device_ok left out the cases whose model runs: this only says there is none */
    int64_t nmodel = mmp_check_narrow_verdict(r, NULL, c, ref, NULL, ops, o);
    if (d.flush_on) mmp_check_flush_say(r, n_flush, fi, fi >= 0 ? rows[fi].flush_j : -1, fi >= 0 ? rows[fi].flush_want : 0);
    if (d.round_on) mmp_check_rounding_sums(r, c, q);
    free(rows);
    if (nmodel >= 0) return MMP_STATUS_OK;
    mmp_check_say_bound(r, finite_bad, o);
    return MMP_STATUS_OK;
}
#endif
