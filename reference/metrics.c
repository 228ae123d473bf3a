/* metrics.c — error metrics of a kernel output against the certified reference (metrics.h).
 *
 * Order of checks, per element: NaN/Inf mismatches are counted first and apart (they never
 * enter a norm); then absolute, relative and ULP errors against the exact value (its binary64
 * rounding: its error, <= 2^-53 |D|, is far below every bound used here); then the ratio to
 * the deterministic and probabilistic bounds; the tolerance in force decides above_tol.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "mmaprobe/metrics.h"

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

/* Bounds of one element; s = S_ij, w = |exact|. */
typedef struct {
    double k_eff, u_acc, u_mul, u_out, lambda;
    double abs_term; /* underflow allowance, see metrics.h */
} bound_params;

static double bound_of(const bound_params *bp, double gamma, double s, double w)
{
    double b = gamma * s + bp->abs_term;
    if (bp->u_mul > 0) b += (2 * bp->u_mul + bp->u_mul * bp->u_mul) * s;
    if (bp->u_out > 0) b += bp->u_out * (w + b);
    return b;
}

static int is_exact_equal(double got, double want)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    return got == want;
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
    double gamma_prob = mmp_metrics_gamma_prob(bp.k_eff, bp.u_acc, bp.lambda);
    out->u_acc = bp.u_acc;
    out->lambda = bp.lambda;

    int hr = (int)(in->m < MMP_HEAT_MAX ? in->m : MMP_HEAT_MAX);
    int hc = (int)(in->n < MMP_HEAT_MAX ? in->n : MMP_HEAT_MAX);
    out->heat_rows = hr;
    out->heat_cols = hc;
    long double sum_err2 = 0, sum_ref2 = 0;
    double scale = 0; /* largest |want| over finite elements, to keep the norms in range */
    for (int64_t i = 0; i < in->m * in->n; i++)
        if (isfinite(in->want64[i]) && fabs(in->want64[i]) > scale) scale = fabs(in->want64[i]);
    if (scale == 0) scale = 1;
    double worst_ratio = -1;

    for (int64_t i = 0; i < in->m; i++) {
        for (int64_t j = 0; j < in->n; j++) {
            size_t r = (size_t)(i * in->n + j);
            double got = mmp_format_load(in->got, mmp_gemm_index(in->layout, in->ldd, i, j), in->d_format);
            double want = in->want64[r];
            double want_out = in->want_out ? in->want_out[r] : want;
            double s = in->absbound ? in->absbound[r] : 0.0;
            out->count++;
            float *cell = &out->heat[(i * hr / in->m) * hc + (j * hc / in->n)];
            int bad = 0;
            double ratio;
            if (isnan(got) != isnan(want) || (isnan(want) && !isnan(got))) {
                out->nan_mismatch++;
                bad = 1;
                ratio = INFINITY;
            } else if (isnan(want)) {
                ratio = 0; /* both NaN: propagation as expected */
            } else if (isinf(got) || isinf(want)) {
                if (got != want) { out->inf_mismatch++; bad = 1; ratio = INFINITY; }
                else ratio = 0;
            } else {
                double err = fabs(got - want);
                if (err > out->max_abs_err) out->max_abs_err = err;
                if (want != 0 && err / fabs(want) > out->max_rel_err) out->max_rel_err = err / fabs(want);
                double ulp = err / mmp_metrics_ulp(want_out, in->d_format);
                if (ulp > out->max_ulp) out->max_ulp = ulp;
                sum_err2 += (long double)(err / scale) * (err / scale);
                sum_ref2 += (long double)(want / scale) * (want / scale);
                double bdet = bound_of(&bp, gamma_det, s, fabs(want));
                double bprob = bound_of(&bp, gamma_prob, s, fabs(want));
                ratio = err == 0 ? 0 : (bdet > 0 ? err / bdet : INFINITY);
                double rprob = err == 0 ? 0 : (bprob > 0 ? err / bprob : INFINITY);
                if (ratio > out->max_ratio_det) out->max_ratio_det = ratio;
                if (rprob > out->max_ratio_prob) out->max_ratio_prob = rprob;
                if (ratio > 1) out->above_det++;
                if (rprob > 1) out->above_prob++;
                switch (tol->mode) {
                case MMP_TOLERANCE_BOUND: bad = ratio > 1; break;
                case MMP_TOLERANCE_PROBABILISTIC: bad = rprob > 1; break;
                case MMP_TOLERANCE_BITWISE: bad = !is_exact_equal(got, want_out); break;
                case MMP_TOLERANCE_ATOL_RTOL: bad = err > tol->atol + tol->rtol * fabs(want); break;
                case MMP_TOLERANCE_ULPS: bad = ulp > tol->ulps; break;
                }
            }
            if (bad) {
                out->above_tol++;
                if (out->first_bad_i < 0) { out->first_bad_i = i; out->first_bad_j = j; }
            }
            int b = 0;
            while (b + 1 < MMP_HIST_BINS && ratio >= mmp_hist_edge(b + 1)) b++;
            out->hist[b]++;
            float cv = ratio > FLT_MAX ? FLT_MAX : (float)ratio;
            if (cv > *cell) *cell = cv;
            if (ratio > worst_ratio) {
                worst_ratio = ratio;
                out->worst_i = i;
                out->worst_j = j;
                out->worst_got = got;
                out->worst_want = want;
            }
        }
    }
    out->norm_rel_err = sum_ref2 > 0 ? (double)sqrtl(sum_err2 / sum_ref2) : (sum_err2 > 0 ? INFINITY : 0.0);
    return MMP_STATUS_OK;
}
