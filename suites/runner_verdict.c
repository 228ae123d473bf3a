/* runner_verdict.c — the verdict checks beyond the error bound (runner_internal.h):
 *
 * narrow accumulators (mmp_check_narrow): fp16/bf16 accumulators and acc_bits <= 16 (FP8's
 *   13-bit wgmma accumulation) make gamma_Ke(u) useless (infinite once Ke u >= 1, K >~ 819 for
 *   fp16). The fitted tensor-core model (model.h; the runner's --acc-model, H200 by default) is
 *   run as a second reference, in natural K order, and the kernel's error e_ij = got - exact is
 *   judged against the model's error m_ij and the block roundings' random-walk scale sigma_ij:
 *     per element  |e_ij| <= C_ELEM (|m_ij| + sigma_ij) + 2 ulp_out(want_ij),   C_ELEM = 16
 *     in norm      ||e||_2 <= C_NORM ||(|m| + sigma)||_2 + 2 ||ulp_out||_2,      C_NORM = 2
 *                  (with >= 64 elements).
 *   Why 16 and 2: a correct kernel of the family differs from the model by the order of its
 *   roundings (split K, other blocks), an error of the same scale sigma; the worst correct
 *   kernel rounds after EVERY product (a SIMT fp16 FMA loop), std <= sqrt(b/3) sigma = 2.31
 *   sigma in theory (b = 16 roundings of at most half a unit each per block), measured RMS
 *   1.15 (|m| + sigma) on uniform data (the model itself: 0.31). 16 is >= 6.9 such standard
 *   deviations per element (Gaussian tail < 1e-11) and 2 in norm is 1.7x the measured RMS
 *   (chi^2_64 beyond 2.9 x 64: < 1e-14). An accumulator that keeps 6 of fp16's 10 fraction
 *   bits has RMS ~5 (|m| + sigma) (7 bits: 2.5): caught in norm; a dropped tile or wrong
 *   values are caught per element by orders of magnitude. Beyond MAX_MODEL_WORK products or without a model row there is no
 *   meaningful bound: the message says so (the ratio is then NaN, printed "nan", never 0).
 * biased rounding (mmp_check_rounding): the kernel's own conversion to an output narrower than
 *   its accumulator; see the function.
 * flushed subnormals (mmp_check_flush): see the function.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/model.h"
#include "runner_internal.h"

#define C_ELEM 16.0
#define C_NORM 2.0
#define MAX_MODEL_WORK (1ll << 27)

static void say(mmp_case_result *r, const char *fmt, const char *part)
{
    size_t used = strlen(r->message);
    snprintf(r->message + used, sizeof r->message - used, fmt, used ? "; " : "", part);
}

int mmp_check_is_narrow(const mmp_kernel_desc *k)
{
    const mmp_format_info *acc = mmp_format_get_info((mmp_format)k->acc_format);
    if (!acc || !acc->is_float) return 0;
    int p = k->acc_bits > 0 ? k->acc_bits : acc->precision;
    return p <= 16;
}

int mmp_check_narrow_runs_model(const mmp_case *c, const mmp_runner_options *o)
{
    return o->tol.mode == MMP_TOLERANCE_BOUND && mmp_check_is_narrow(c->kernel) && c->m * c->n * c->k <= MAX_MODEL_WORK;
}

int64_t mmp_check_narrow_verdict(mmp_case_result *r, unsigned char *bad, const mmp_case *c, const mmp_ref *ref,
                                 const void *got, const mmp_buffer *ops, const mmp_runner_options *o)
{
    if (o->tol.mode != MMP_TOLERANCE_BOUND || !mmp_check_is_narrow(c->kernel) || !ops) return -1;
    double ratio = NAN;
    int64_t n = mmp_check_narrow(r, bad, &ratio, c, ref, got, ops, o);
    if (n >= 0) {
        r->metrics.max_ratio_det = ratio;
        if (n > 0) r->reasons |= MMP_REASON_BOUND_EXCEEDED;
    }
    return n;
}

int64_t mmp_check_narrow(mmp_case_result *r, unsigned char *bad, double *worst_ratio, const mmp_case *c,
                         const mmp_ref *ref, const void *got, const mmp_buffer *ops, const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format df = (mmp_format)k->d_format;
    const char *src = o->acc_model ? o->acc_model : "H200";
    mmp_model_params p;
    double u = 0;
    char instr[48] = "", part[400];
    *worst_ratio = NAN;
    if (c->m * c->n * c->k > MAX_MODEL_WORK) {
        snprintf(part, sizeof part, "no meaningful bound: %s accumulator, and %lld products exceed the model "
                 "reference's limit of %lld (the deterministic bound is %s)", mmp_format_name((mmp_format)k->acc_format),
                 (long long)(c->m * c->n * c->k), (long long)MAX_MODEL_WORK, "gamma_Ke(u) S");
        say(r, "%snarrow: %s", part);
        return -1;
    }
    /* the accumulator the model needs: the declared narrow format, or fp32 for acc_bits (the
     * FP8 wgmma rows keep 13 bits in an fp32 register) */
    mmp_format acc = (mmp_format)k->acc_format;
    /* wgmma's models first for sm_90a kernels, and for any kernel that declares an FP8 input
     * with an accumulator narrower than its fp32 register (acc_bits): only wgmma accumulates
     * FP8 products that way (mma.sync's FP8 runs on an fp16 HMMA with full fp32 sums). */
    const mmp_format_info *ain = mmp_format_get_info((mmp_format)k->a_format);
    int fp8_narrow = ain && ain->is_float && ain->storage_bits == 8 && k->acc_bits > 0 && k->acc_bits < 24;
    if (mmp_model_bound_for_kernel(&p, &u, instr, sizeof instr, src, (mmp_format)k->a_format, acc,
                                   (k->arch_specific && k->min_cc == 90) || fp8_narrow) != MMP_STATUS_OK) {
        snprintf(part, sizeof part, "no meaningful bound: %s has no tensor-core model for %s inputs with a %s "
                 "accumulator", src, mmp_format_name((mmp_format)k->a_format), mmp_format_name(acc));
        say(r, "%snarrow: %s", part);
        return -1;
    }
    mmp_model_ref_input mi = {mmp_buffer_filled(&ops[0]), mmp_buffer_filled(&ops[1]), mmp_buffer_filled(&ops[2]),
                              (mmp_format)k->a_format, (mmp_format)k->b_format, (mmp_format)k->c_format,
                              c->la, c->lb, c->lc, c->lda, c->ldb, c->ldc, c->m, c->n, c->k,
                              c->alpha, ops[2].image ? c->beta : 0.0, &p};
    size_t mn = (size_t)(c->m * c->n);
    double *md = malloc(mn * sizeof *md), *sg = malloc(mn * sizeof *sg);
    if (!md || !sg || mmp_model_reference(md, sg, &mi) != MMP_STATUS_OK) {
        free(md);
        free(sg);
        snprintf(part, sizeof part, "no meaningful bound: the %s model of %s could not run: %s", src, instr,
                 mmp_error_last());
        say(r, "%snarrow: %s", part);
        return -1;
    }
    int64_t nbad = 0, fi = -1, fj = -1, n = 0;
    double worst = 0, e2 = 0, t2 = 0, q2 = 0;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            size_t x = (size_t)(i * c->n + j);
            double g = mmp_format_load(got, mmp_gemm_index(c->ld, c->ldd, i, j), df), w = ref->exact[x];
            bad[x] = 0;
            if (!isfinite(g) || !isfinite(w)) continue;   /* NaN/Inf: decided apart */
            double mv = mmp_format_round(md[x], df, MMP_ROUND_NEAREST_EVEN, 0);
            double me = isfinite(mv) ? fabs(mv - w) : fabs(md[x] - w);
            double ulp = mmp_metrics_ulp(ref->want_out[x], df);
            double tol = C_ELEM * (me + sg[x]) + 2 * ulp, e = fabs(g - w);
            double ratio = e == 0 ? 0 : e / tol;
            if (ratio > worst) worst = ratio;
            if (ratio > 1) {
                bad[x] = 1;
                if (!nbad++) { fi = i; fj = j; }
            }
            e2 += e * e;
            t2 += (me + sg[x]) * (me + sg[x]);
            q2 += ulp * ulp;
            n++;
        }
    free(md);
    free(sg);
    snprintf(r->tolerance, sizeof r->tolerance, "model:%s", instr);
    *worst_ratio = worst;
    double norm_tol = C_NORM * sqrt(t2) + 2 * sqrt(q2);
    if (nbad) {
        snprintf(part, sizeof part, "%lld elements beyond %g x (model %s error + sigma) + 2 ulp, first (%lld,%lld), "
                 "worst error/tolerance %.3g", (long long)nbad, C_ELEM, instr, (long long)fi, (long long)fj, worst);
        say(r, "%sbound-exceeded: %s", part);
    } else if (n >= 64 && sqrt(e2) > norm_tol) {
        snprintf(part, sizeof part, "||error||_2 = %.3g beyond %g x ||model %s error + sigma||_2 + 2 ulp = %.3g",
                 sqrt(e2), C_NORM, instr, norm_tol);
        say(r, "%sbound-exceeded: %s", part);
        nbad = 1;
        if (fi < 0) memset(bad, 0, mn);
    }
    return nbad;
}

/* Biased rounding: the kernel converts its accumulator to an output narrower than it
 * (d precision < accumulator precision) and declares round-to-nearest (out_round 0). Over the
 * elements whose correctly rounded reference lies strictly between two output values and whose
 * exact value is farther than the accumulation bound (margin) from the midpoint of the two,
 * a round-to-nearest conversion picks the nearer neighbour whatever the accumulator's own
 * (possibly biased) error was, so the signed error s_i = (got - exact) / ulp in [-1/2, 1/2] has
 * mean 0 for exact values spread evenly between the two neighbours. Two statistics: the mean
 * of s (up/down) and of s sign(exact) (toward zero/away), each clamped to [-1, 1]. Threshold
 * from Hoeffding's inequality for n independent values of range 1: P(|mean| >= t) <=
 * 2 exp(-2 n t^2); t = sqrt(ln(4 / 1e-9) / (2 n)) keeps a correct kernel's false-positive
 * probability below 1e-9 for both together (n >= 64; with n = 4096, t = 0.052). A conversion
 * that always rounds one way has |mean| ~ 0.5 (z ~ 100+ at n = 4096). An fp32 result straight
 * from a tensor-core accumulation (d = accumulator format) is the hardware's own truncation and
 * is not tested. */
typedef struct {
    const mmp_case *c;
    const mmp_ref *ref;
    const void *got;
    const double *sub_excess;
    mmp_format df;
    double max_out, gamma, floor_term;
    double *rows;   /* per row of D: sum s, sum s^2, sum t, sum t^2, count */
} round_job;

/* mmp_parallel_fn: the sums of mmp_check_rounding for rows [i0, i1) */
static void round_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    const round_job *J = ctx;
    const mmp_case *c = J->c;
    const mmp_ref *ref = J->ref;
    for (int64_t i = i0; i < i1; i++) {
        double *q = J->rows + 5 * i;
        for (int64_t j = 0; j < c->n; j++) {
            size_t x = (size_t)(i * c->n + j);
            double w = ref->exact[x], wo = ref->want_out[x];
            double g = mmp_format_load(J->got, mmp_gemm_index(c->ld, c->ldd, i, j), J->df);
            if (!isfinite(w) || !isfinite(wo) || !isfinite(g) || wo == w || fabs(wo) > J->max_out) continue;
            double ulp = mmp_metrics_ulp(wo, J->df);
            /* the two neighbours: wo and the one on the other side of w */
            int e;
            if (frexp(fabs(wo), &e) == 0.5) continue;   /* a power of two: two ulps meet there */
            double lo = wo < w ? wo : wo - ulp, hi = lo + ulp;
            double margin = J->gamma * (ref->absdot[x] + (J->sub_excess ? J->sub_excess[x] : 0)) + J->floor_term;
            if (fabs(w - (lo + hi) / 2) <= margin) continue;
            double s = (g - w) / ulp;
            s = s > 1 ? 1 : s < -1 ? -1 : s;
            double t = w < 0 ? -s : s;
            q[0] += s; q[1] += s * s; q[2] += t; q[3] += t * t; q[4] += 1;
        }
    }
}

int mmp_check_rounding_params(double *max_out, double *gamma, double *floor_term, const mmp_case *c, int have_absdot)
{
    const mmp_kernel_desc *k = c->kernel;
    const mmp_format_info *dfi = mmp_format_get_info((mmp_format)k->d_format),
                          *afi = mmp_format_get_info((mmp_format)k->acc_format);
    if (!dfi || !afi || !dfi->is_float || !afi->is_float || k->out_round != MMP_ROUND_NEAREST_EVEN) return 0;
    int pacc = k->acc_bits > 0 ? k->acc_bits : afi->precision;
    if (dfi->precision >= pacc || !have_absdot) return 0;
    double ke = (double)c->k + ceil((double)c->k / 4.0) + 1.0;
    *gamma = mmp_metrics_gamma(ke, mmp_metrics_unit_truncation((mmp_format)k->acc_format, k->acc_bits));
    *max_out = dfi->max_finite;
    *floor_term = afi->min_normal * (ke + 1);
    return isfinite(*gamma);
}

int mmp_check_rounding(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                       const double *sub_excess)
{
    round_job J = {c, ref, got, sub_excess, (mmp_format)c->kernel->d_format, 0, 0, 0, NULL};
    if (!mmp_check_rounding_params(&J.max_out, &J.gamma, &J.floor_term, c, ref->absdot != NULL)) return 0;
    J.rows = calloc((size_t)c->m * 5, sizeof(double));
    if (!J.rows) return 0;
    mmp_parallel_for(mmp_parallel_threads(0), c->m, 16, round_rows, &J);
    double q[5] = {0, 0, 0, 0, 0};
    for (int64_t i = 0; i < c->m; i++)   /* in row order: the same sums on any thread count */
        for (int t = 0; t < 5; t++) q[t] += J.rows[5 * i + t];
    free(J.rows);
    return mmp_check_rounding_sums(r, c, q);
}

int mmp_check_rounding_sums(mmp_case_result *r, const mmp_case *c, const double q[5])
{
    mmp_format df = (mmp_format)c->kernel->d_format;
    double ss = q[0], ss2 = q[1], st = q[2], st2 = q[3];
    int64_t n = (int64_t)q[4];
    if (n < 64) return 0;
    double thr = sqrt(log(4.0 / 1e-9) / (2.0 * (double)n));
    double ms = ss / n, mt = st / n;
    double sds = sqrt(fmax(ss2 / n - ms * ms, 1e-300)), sdt = sqrt(fmax(st2 / n - mt * mt, 1e-300));
    double zs = ms / (sds / sqrt((double)n)), zt = mt / (sdt / sqrt((double)n));
    if (fabs(ms) <= thr && fabs(mt) <= thr) return 0;
    char part[300];
    int tz = fabs(mt) > fabs(ms);
    snprintf(part, sizeof part, "over %lld elements between two %s values the mean of %s is %.3f ulp "
             "(z = %.0f; threshold %.3f, false-positive probability < 1e-9): the conversion rounds %s, declared nearest",
             (long long)n, mmp_format_name(df), tz ? "(got - exact) sign(exact)" : "got - exact", tz ? mt : ms,
             tz ? zt : zs, thr,
             tz ? (mt < 0 ? "toward zero" : "away from zero") : (ms < 0 ? "down" : "up"));
    say(r, "%sbiased-rounding: %s", part);
    r->reasons |= MMP_REASON_BIASED_ROUNDING;
    return 1;
}

/* Flushed subnormals (unless the descriptor declares flush_subnormals): an output element that
 * is zero where
 *   (a) the reference is a non-zero subnormal of the output format larger than what a correct
 *       kernel may lose below the hardware's alignment floor: every aligned term keeps its bits
 *       down to 2^(floor - p_acc + 1) (floor -133 for fp32 accumulation, -21 for fp16, as the
 *       H200 probes measured; an accumulator's emin otherwise), so at most (K + 1) such units
 *       are lost, plus one subnormal unit of the output's own rounding, and larger than what the
 *       accumulation's own rounding may cancel to (K + 2) 2^(1 - p_acc) |A||B|_ij: a sum of
 *       well-scaled terms may round to an exact 0 that is no flush; or
 *   (b) every non-zero product has a subnormal factor (sub_abs = S) and there is no C: the
 *       subnormal inputs were treated as zero (again beyond what the rounding may cancel to).
 * Marks them in flushed (M x N) and returns their count. */
typedef struct {
    const mmp_case *c;
    const mmp_ref *ref;
    const void *got;
    const double *sub_abs;
    unsigned char *flushed;
    mmp_format df;
    double min_normal;
    int pacc;
    double lost;
    int64_t *count;   /* flushed elements per row */
} flush_job;

/* mmp_parallel_fn: mmp_check_flush's test for rows [i0, i1) */
static void flush_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    const flush_job *J = ctx;
    const mmp_case *c = J->c;
    const mmp_ref *ref = J->ref;
    int no_c = !(c->beta != 0 && c->kernel->reads_c);
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < c->n; j++) {
            size_t x = (size_t)(i * c->n + j);
            double w = ref->exact[x];
            if (w == 0 || !isfinite(w)) continue;
            double g = mmp_format_load(J->got, mmp_gemm_index(c->ld, c->ldd, i, j), J->df);
            if (g != 0) continue;
            double cancel = ref->absdot ? ((double)c->k + 2) * ldexp(ref->absdot[x], 1 - J->pacc) : INFINITY;
            int beyond = fabs(w) > J->lost + cancel;
            int sub_out = fabs(w) < J->min_normal && beyond;
            int daz = J->sub_abs && ref->absdot && J->sub_abs[x] > 0 && no_c &&
                      ref->absdot[x] - J->sub_abs[x] <= 1e-9 * ref->absdot[x] && beyond;
            if (!sub_out && !daz) continue;
            J->flushed[x] = 1;
            J->count[i]++;
        }
}

int mmp_check_flush_params(int *pacc, double *lost, double *min_normal, const mmp_case *c)
{
    const mmp_kernel_desc *k = c->kernel;
    const mmp_format_info *dfi = mmp_format_get_info((mmp_format)k->d_format),
                          *afi = mmp_format_get_info((mmp_format)k->acc_format);
    if (!dfi || !afi || !dfi->is_float || !afi->is_float || k->flush_subnormals) return 0;
    int floor_e = k->acc_format == MMP_FORMAT_FP32 ? -133 : k->acc_format == MMP_FORMAT_FP16 ? -21
                : (int)lround(log2(afi->min_normal));
    *pacc = k->acc_bits > 0 ? k->acc_bits : afi->precision;
    *lost = ((double)c->k + 1) * ldexp(1.0, floor_e - *pacc + 1) + dfi->min_subnormal;
    *min_normal = dfi->min_normal;
    return 1;
}

int64_t mmp_check_flush(mmp_case_result *r, unsigned char *flushed, const mmp_case *c, const mmp_ref *ref,
                        const void *got, const double *sub_abs)
{
    flush_job J = {c, ref, got, sub_abs, flushed, (mmp_format)c->kernel->d_format, 0, 0, 0, NULL};
    memset(flushed, 0, (size_t)(c->m * c->n));
    if (!mmp_check_flush_params(&J.pacc, &J.lost, &J.min_normal, c)) return 0;
    J.count = calloc((size_t)c->m, sizeof(int64_t));
    if (!J.count) return 0;
    mmp_parallel_for(mmp_parallel_threads(0), c->m, 16, flush_rows, &J);
    int64_t n = 0, fi = -1, fj = -1;
    double fw = 0;
    for (int64_t i = 0; i < c->m; i++) {
        if (J.count[i] && !n)
            for (int64_t j = 0; j < c->n; j++)
                if (flushed[i * c->n + j]) { fi = i; fj = j; fw = ref->exact[i * c->n + j]; break; }
        n += J.count[i];
    }
    free(J.count);
    mmp_check_flush_say(r, n, fi, fj, fw);
    return n;
}

void mmp_check_flush_say(mmp_case_result *r, int64_t n, int64_t fi, int64_t fj, double fw)
{
    if (!n) return;
    char part[300];
    snprintf(part, sizeof part, "%lld outputs are 0 where the reference is a subnormal (or comes from subnormal "
             "inputs alone) the hardware keeps, first (%lld,%lld) want %.9g; flush is not declared",
             (long long)n, (long long)fi, (long long)fj, fw);
    say(r, "%sflushed-subnormal: %s", part);
    r->reasons |= MMP_REASON_FLUSHED_SUBNORMAL;
}
