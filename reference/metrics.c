/* metrics.c — error metrics of a kernel output against the certified reference (metrics.h).
 *
 * Order of checks, per element: NaN/Inf mismatches are counted first and apart (they never
 * enter a norm); then absolute, relative and ULP errors against the exact value (its binary64
 * rounding: its error, <= 2^-53 |D|, is far below every bound used here); then the ratio to
 * the deterministic and probabilistic bounds; the tolerance in force decides above_tol.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mmaprobe/metrics.h"
#include "ref_internal.h"

static const char *const tolerance_names[] = {"bound", "probabilistic", "bitwise", "atol/rtol", "ulps"};

void mmp_tolerance_init(mmp_tolerance *t)
{
    t->mode = MMP_TOLERANCE_BOUND;
    t->atol = 0.0;
    t->rtol = 0.0;
    t->ulps = 0.0;
}

const char *mmp_tolerance_name(mmp_tolerance_mode mode)
{
    return (unsigned)mode <= MMP_TOLERANCE_ULPS ? tolerance_names[mode] : "?";
}

mmp_status mmp_tolerance_from_name(mmp_tolerance_mode *mode, const char *name)
{
    for (int i = 0; i <= (int)MMP_TOLERANCE_ULPS; i++)
        if (name && !strcasecmp(name, tolerance_names[i])) { *mode = (mmp_tolerance_mode)i; return MMP_STATUS_OK; }
    if (name && !strcasecmp(name, "deterministic")) { *mode = MMP_TOLERANCE_BOUND; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID, "unknown tolerance '%s' (bound, probabilistic, bitwise)",
                   name ? name : "(null)");
}

double mmp_metrics_unit_truncation(mmp_format acc, int acc_bits)
{
    const mmp_format_info *fi = mmp_format_get_info(acc);
    if (!fi || !fi->is_float) return 0.0;
    int p = acc_bits > 0 ? acc_bits : fi->precision;
    return ldexp(1.0, 1 - p);
}

double mmp_metrics_gamma(double n, double u)
{
    double nu = n * u;
    return nu >= 1.0 ? INFINITY : nu / (1.0 - nu);
}

double mmp_metrics_gamma_prob(double n, double u, double lambda)
{
    return expm1(lambda * sqrt(n) * u + n * u * u / (1.0 - u));
}

double mmp_metrics_lambda(double n)
{
    return sqrt(2.0 * log(2.0 * (n < 1 ? 1 : n) / 1e-6));
}

double mmp_metrics_ulp(double x, mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (!fi) return NAN;
    if (!fi->is_float) return 1.0;
    if (!isfinite(x)) return ldexp(1.0, fi->emax - fi->precision);
    int e = fi->emin;
    if (x != 0.0) frexp(fabs(x), &e);
    if (e < fi->emin) e = fi->emin;
    return ldexp(1.0, e - fi->precision);
}

typedef mmp_metrics_bound bound_params;

/* Bounds of one element; s = S_ij, w = |exact|. */
static double bound_of(const bound_params *bp, double gamma, double s, double w, double sub)
{
    /* sub: Shat - S of the subnormal-factor products, always with the deterministic gamma
     * (their extra loss is a truncation, biased, not a random walk) */
    double b = gamma * s + (sub > 0 ? bp->gamma_sub * sub : 0.0) + bp->abs_term;
    if (bp->u_mul > 0) b += (2 * bp->u_mul + bp->u_mul * bp->u_mul) * s;
    if (bp->u_out > 0) b += bp->u_out * (w + b);
    return b;
}

static int is_exact_equal(double got, double want)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    return got == want;
}

/* ---- per-block work (mmp_metrics_compute) ---- */
typedef struct {
    mmp_metrics m;                 /* counts, maxima, histogram, worst, first bad, heat cells */
    double scale, worst_ratio;
    long double sum_err2, sum_ref2;
    int heat_lo, heat_hi;          /* heatmap rows this block's rows fall in */
} met_block;

typedef struct {
    const mmp_metrics_input *in;
    const mmp_tolerance *tol;
    const bound_params *bp;
    double gamma_det, gamma_prob;
    int hr, hc;
    int64_t rows;                  /* rows per block */
    double scale;
    met_block *blk;
} met_job;

static void scale_blocks(void *ctx, int64_t b0, int64_t b1, int tid)
{
    (void)tid;
    met_job *J = ctx;
    const mmp_metrics_input *in = J->in;
    for (int64_t b = b0; b < b1; b++) {
        int64_t lo = b * J->rows * in->n, hi = (b + 1) * J->rows;
        hi = (hi < in->m ? hi : in->m) * in->n;
        double s = 0;
        for (int64_t x = lo; x < hi; x++)
            if (isfinite(in->want64[x]) && fabs(in->want64[x]) > s) s = fabs(in->want64[x]);
        J->blk[b].scale = s;
    }
}

static void metric_blocks(void *ctx, int64_t b0, int64_t b1, int tid)
{
    (void)tid;
    met_job *J = ctx;
    const mmp_metrics_input *in = J->in;
    const bound_params *bp = J->bp;
    int hr = J->hr, hc = J->hc;
    for (int64_t b = b0; b < b1; b++) {
        met_block *k = &J->blk[b];
        mmp_metrics *out = &k->m;
        mmp_metrics_init(out);
        int64_t i0 = b * J->rows, i1 = i0 + J->rows < in->m ? i0 + J->rows : in->m;
        k->worst_ratio = -1;
        k->heat_lo = (int)(i0 * hr / in->m);
        k->heat_hi = (int)((i1 - 1) * hr / in->m);
        for (int64_t i = i0; i < i1; i++) {
            for (int64_t j = 0; j < in->n; j++) {
                size_t r = (size_t)(i * in->n + j);
                double got = mmp_format_load(in->got, mmp_gemm_index(in->layout, in->ldd, i, j), in->d_format);
                double want = in->want64[r];
                double want_out = in->want_out ? in->want_out[r] : want;
                double s = in->absbound ? in->absbound[r] : 0.0;
                out->count++;
                int bad = 0;
                double ratio;
                /* only where the classes differ (two NaNs agree: the alternative is not needed,
                 * and finding it costs K steps per element) */
                double wc = mmp_metrics_class_want(want, want_out);
                int alt = (isnan(got) || isinf(got) || isnan(wc) || isinf(wc)) && in->special_alt &&
                          (isnan(got) != isnan(wc) || (!isnan(wc) && got != wc)) &&
                          in->special_alt(in->special_ctx, i, j, got);
                if (alt) {
                    ratio = 0;   /* the class the declared input rounding gives (special_alt) */
                } else if (isnan(got) != isnan(wc)) {
                    out->nan_mismatch++;
                    mmp_heat_mark_raise(&out->heat_mark[mmp_heat_cell(i, j, in->m, in->n, hr, hc)], MMP_HEAT_MARK_NAN);
                    bad = 1;
                    ratio = INFINITY;
                } else if (isnan(wc) || (isinf(got) && got == wc)) {
                    ratio = 0; /* both NaN (propagation as expected), or the same infinity */
                } else if (isinf(got) || isinf(want)) {
                    out->inf_mismatch++;
                    mmp_heat_mark_raise(&out->heat_mark[mmp_heat_cell(i, j, in->m, in->n, hr, hc)], MMP_HEAT_MARK_NAN);
                    bad = 1;
                    ratio = INFINITY;
                } else {
                    double err = fabs(got - want);
                    if (err > out->max_abs_err) out->max_abs_err = err;
                    if (want != 0 && err / fabs(want) > out->max_rel_err) out->max_rel_err = err / fabs(want);
                    double ulp = err / mmp_metrics_ulp(want_out, in->d_format);
                    if (ulp > out->max_ulp) out->max_ulp = ulp;
                    k->sum_err2 += (long double)(err / J->scale) * (err / J->scale);
                    k->sum_ref2 += (long double)(want / J->scale) * (want / J->scale);
                    double sub = in->sub_excess ? in->sub_excess[r] : 0.0;
                    double bdet = bound_of(bp, J->gamma_det, s, fabs(want), sub);
                    double bprob = bound_of(bp, J->gamma_prob, s, fabs(want), sub);
                    ratio = err == 0 ? 0 : (bdet > 0 ? err / bdet : INFINITY);
                    double rprob = err == 0 ? 0 : (bprob > 0 ? err / bprob : INFINITY);
                    /* an infinite bound (gamma_Ke(u) with Ke u >= 1: a narrow accumulator at
                     * large K) says nothing: its ratio is NaN ("none"), never a reassuring 0 */
                    if (!(bdet < INFINITY)) ratio = NAN;
                    if (!(bprob < INFINITY)) rprob = NAN;
                    if (isnan(ratio)) out->max_ratio_det = NAN;
                    if (isnan(rprob)) out->max_ratio_prob = NAN;
                    if (ratio > out->max_ratio_det) out->max_ratio_det = ratio;
                    if (rprob > out->max_ratio_prob) out->max_ratio_prob = rprob;
                    if (ratio > 1) out->above_det++;
                    if (rprob > 1) out->above_prob++;
                    switch (J->tol->mode) {
                    case MMP_TOLERANCE_BOUND: bad = ratio > 1; break;
                    case MMP_TOLERANCE_PROBABILISTIC: bad = rprob > 1; break;
                    case MMP_TOLERANCE_BITWISE: bad = !is_exact_equal(got, want_out); break;
                    case MMP_TOLERANCE_ATOL_RTOL: bad = err > J->tol->atol + J->tol->rtol * fabs(want); break;
                    case MMP_TOLERANCE_ULPS: bad = ulp > J->tol->ulps; break;
                    }
                }
                if (in->bad) in->bad[r] = (unsigned char)(bad != 0);
                if (bad) {
                    out->above_tol++;
                    if (out->first_bad_i < 0) { out->first_bad_i = i; out->first_bad_j = j; }
                }
                int h = 0;
                while (h + 1 < MMP_HIST_BINS && ratio >= mmp_hist_edge(h + 1)) h++;
                out->hist[h]++;
                float cv = ratio > FLT_MAX ? FLT_MAX : (float)ratio;
                float *cell = &out->heat[(i * hr / in->m) * hc + (j * hc / in->n)];
                if (cv > *cell) *cell = cv;
                if (ratio > k->worst_ratio) {
                    k->worst_ratio = ratio;
                    out->worst_i = i;
                    out->worst_j = j;
                    out->worst_got = got;
                    out->worst_want = want;
                }
            }
        }
    }
}

void mmp_metrics_bound_init(mmp_metrics_bound *bp_, const mmp_metrics_input *in)
{
    mmp_metrics_bound bp;
    const mmp_format_info *dfi = mmp_format_get_info(in->d_format);
    bp.k_eff = (double)in->k + ceil((double)in->k / 4.0) + 1.0;
    bp.u_acc = in->u_acc;
    bp.u_mul = in->u_mul;
    const mmp_format_info *afi = mmp_format_get_info((mmp_format)in->acc_format);
    bp.u_out = 0.0;
    if (dfi->is_float && (!afi || !afi->is_float || dfi->precision < afi->precision))
        bp.u_out = ldexp(1.0, 1 - dfi->precision);
    bp.lambda = mmp_metrics_lambda(bp.k_eff);
    /* Underflow: a product or partial sum below the accumulator's normal range may be flushed
     * or rounded to its subnormal grid: at most min_normal(acc) absolute per operation. An
     * output narrower than the accumulator may round a subnormal result by one subnormal ulp. */
    bp.abs_term = 0.0;
    if (afi && afi->is_float) bp.abs_term += (bp.k_eff + 1.0) * afi->min_normal;
    if (bp.u_out > 0) bp.abs_term += dfi->min_subnormal;
    /* An integer output rounds alpha A B + beta C to an integer: up to one unit either way. */
    if (!dfi->is_float) bp.abs_term += 1.0;
    double gamma_det = mmp_metrics_gamma(bp.k_eff, bp.u_acc);
    bp.gamma_sub = gamma_det;
    double gamma_prob = mmp_metrics_gamma_prob(bp.k_eff, bp.u_acc, bp.lambda);
    bp.gamma_det = gamma_det;
    bp.gamma_prob = gamma_prob;
    *bp_ = bp;
}

/* With cap <= rel s (ref_excess_negligible): gamma_sub cap <= 2^-56 gamma s for both gammas,
 * below half an ulp of fl(gamma s) (>= 2^-54 of it for a normal value) with room for the
 * roundings of the excess's own sums; and cap <= 2^-56 s, below half an ulp of s. */
double mmp_metrics_excess_rel(const mmp_metrics_bound *bp)
{
    double gs = bp->gamma_sub, gd = bp->gamma_det, gp = bp->gamma_prob;
    if (gs == 0.0) return 0x1p-56;   /* the bound has no excess term: only the margin's s + sub */
    if (!(gs > 0.0 && gd > 0.0 && gp > 0.0) || !isfinite(gs) || !isfinite(gd) || !isfinite(gp)) return 0.0;
    double r = fmin(1.0, fmin(gd / gs, gp / gs));
    return 0x1p-56 * r;
}

mmp_status mmp_metrics_compute(mmp_metrics *out, const mmp_metrics_input *in, const mmp_tolerance *tol)
{
    if (!out || !in || !tol) return MMP_ERR(MMP_STATUS_INVALID, "metrics: NULL argument");
    if (!in->got || !in->want64) return MMP_ERR(MMP_STATUS_INVALID, "metrics: NULL output or reference");
    if (in->m <= 0 || in->n <= 0 || in->k <= 0)
        return MMP_ERR(MMP_STATUS_INVALID, "metrics: empty shape %lldx%lldx%lld", (long long)in->m,
                       (long long)in->n, (long long)in->k);
    const mmp_format_info *dfi = mmp_format_get_info(in->d_format);
    if (!dfi) return MMP_ERR(MMP_STATUS_INVALID, "metrics: unknown output format %d", (int)in->d_format);
    int64_t need = in->layout == MMP_LAYOUT_ROW ? in->n : in->m;
    if (in->ldd < need) return MMP_ERR(MMP_STATUS_INVALID, "metrics: ldd %lld < %lld", (long long)in->ldd, (long long)need);

    mmp_metrics_init(out);
    bound_params bp;
    mmp_metrics_bound_init(&bp, in);
    double gamma_det = bp.gamma_det, gamma_prob = bp.gamma_prob;
    out->u_acc = bp.u_acc;
    out->lambda = bp.lambda;

    int hr = (int)(in->m < MMP_HEAT_MAX ? in->m : MMP_HEAT_MAX);
    int hc = (int)(in->n < MMP_HEAT_MAX ? in->n : MMP_HEAT_MAX);
    out->heat_rows = hr;
    out->heat_cols = hc;
    /* Fixed blocks of rows (independent of the thread count), each with its own partials;
     * merged in block order, so sums, ties and "first" positions are the same on any number
     * of threads. Maxima, counts, the histogram and the heatmap (maxima) are order-free. */
    met_job J = {in, tol, &bp, gamma_det, gamma_prob, hr, hc, 0, 0, NULL};
    J.rows = in->n >= 65536 ? 1 : 65536 / in->n;
    int64_t nblk = (in->m + J.rows - 1) / J.rows;
    J.blk = calloc((size_t)nblk, sizeof *J.blk);
    if (!J.blk) return MMP_ERR(MMP_STATUS_NO_MEMORY, "metrics: out of memory");
    mmp_parallel_for(mmp_parallel_threads(0), nblk, 1, scale_blocks, &J);
    double scale = 0;   /* largest |want| over finite elements, to keep the norms in range */
    for (int64_t b = 0; b < nblk; b++) if (J.blk[b].scale > scale) scale = J.blk[b].scale;
    J.scale = scale == 0 ? 1 : scale;
    mmp_parallel_for(mmp_parallel_threads(0), nblk, 1, metric_blocks, &J);
    long double sum_err2 = 0, sum_ref2 = 0;
    double worst_ratio = -1;
    for (int64_t b = 0; b < nblk; b++) {
        const met_block *k = &J.blk[b];
        const mmp_metrics *q = &k->m;
        out->count += q->count;
        out->nan_mismatch += q->nan_mismatch;
        out->inf_mismatch += q->inf_mismatch;
        out->above_det += q->above_det;
        out->above_prob += q->above_prob;
        if (q->max_abs_err > out->max_abs_err) out->max_abs_err = q->max_abs_err;
        if (q->max_rel_err > out->max_rel_err) out->max_rel_err = q->max_rel_err;
        if (q->max_ulp > out->max_ulp) out->max_ulp = q->max_ulp;
        if (q->max_ratio_det > out->max_ratio_det || isnan(q->max_ratio_det)) out->max_ratio_det = q->max_ratio_det;
        if (q->max_ratio_prob > out->max_ratio_prob || isnan(q->max_ratio_prob)) out->max_ratio_prob = q->max_ratio_prob;
        if (q->above_tol && !out->above_tol) { out->first_bad_i = q->first_bad_i; out->first_bad_j = q->first_bad_j; }
        out->above_tol += q->above_tol;
        for (int h = 0; h < MMP_HIST_BINS; h++) out->hist[h] += q->hist[h];
        if (k->worst_ratio > worst_ratio) {
            worst_ratio = k->worst_ratio;
            out->worst_i = q->worst_i;
            out->worst_j = q->worst_j;
            out->worst_got = q->worst_got;
            out->worst_want = q->worst_want;
        }
        sum_err2 += k->sum_err2;
        sum_ref2 += k->sum_ref2;
    }
    /* heat cells and their marks: the maximum over the blocks whose rows fall in them */
    for (int64_t b = 0; b < nblk; b++) {
        const met_block *k = &J.blk[b];
        for (int r = k->heat_lo; r <= k->heat_hi; r++)
            for (int c = 0; c < hc; c++) {
                if (k->m.heat[r * hc + c] > out->heat[r * hc + c]) out->heat[r * hc + c] = k->m.heat[r * hc + c];
                mmp_heat_mark_raise(&out->heat_mark[r * hc + c], (mmp_heat_mark)k->m.heat_mark[r * hc + c]);
            }
    }
    free(J.blk);
    out->norm_rel_err = sum_ref2 > 0 ? (double)sqrtl(sum_err2 / sum_ref2) : (sum_err2 > 0 ? INFINITY : 0.0);
    return MMP_STATUS_OK;
}
