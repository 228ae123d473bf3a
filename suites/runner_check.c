/* runner_check.c — a case's output against the reference: metrics (metrics.h) and the FAIL
 * reasons exact-mismatch, bound-exceeded and nan-mismatch, with first positions.
 *
 * Exact comparison (bit for bit with the reference rounded to the output format) applies when
 * every partial sum is exact whatever the order: the exact and onehot distributions (dist.c
 * picks their values so) and integer accumulators. Otherwise the tolerance in force decides;
 * the default is the deterministic bound with the accumulator's TRUNCATION unit 2^(1-p)
 * (metrics.h: tensor cores align and normalise toward zero).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/model.h"
#include "runner_internal.h"

static void check_output(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                         const mmp_runner_options *o, const mmp_buffer *ops, unsigned char *bad,
                         unsigned char *flushed, double **sub, double **sub_abs);

/* ---- NaN/Inf under a declared input rounding (runner_alt_hd.h, metrics.h's special_alt) ---- */
void mmp_check_alt_init(mmp_alt_in *x, const mmp_case *c, const void *a, const void *b, const void *cc)
{
    const mmp_kernel_desc *k = c->kernel;
    memset(x, 0, sizeof *x);
    x->a = a; x->b = b; x->c = c->beta != 0 ? cc : NULL;
    mmp_format_hd_init(&x->fa, (mmp_format)k->a_format);
    mmp_format_hd_init(&x->fb, (mmp_format)k->b_format);
    mmp_format_hd_init(&x->fc, (mmp_format)k->c_format);
    mmp_format_hd_init(&x->mul, (mmp_format)k->mul_format);
    x->la = c->la; x->lb = c->lb; x->lc = c->lc;
    x->lda = c->lda; x->ldb = c->ldb; x->ldc = c->ldc; x->k = c->k;
    x->alpha = c->alpha; x->beta = c->beta;
}

/* ---- exact comparison, by rows on every core ---- */
typedef struct {
    const mmp_case *c;
    const mmp_ref *ref;
    const void *got;
    mmp_format df;
    int64_t *count, *first;   /* per row: mismatches, the first one's column */
} exact_job;

static void exact_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    const exact_job *J = ctx;
    const mmp_case *c = J->c;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < c->n; j++) {
            double g = mmp_format_load(J->got, mmp_gemm_index(c->ld, c->ldd, i, j), J->df);
            double w = J->ref->want_out[i * c->n + j];
            if (isnan(g) || isnan(w) || g == w) continue;
            if (!J->count[i]++) J->first[i] = j;
        }
}

static int special_alt(void *ctx, int64_t i, int64_t j, double got) { return mmp_alt_excused(ctx, i, j, got); }

void mmp_check_input_init(mmp_metrics_input *in_, mmp_case_result *r, const mmp_case *c, const mmp_ref *ref,
                          const void *got, const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format df = (mmp_format)k->d_format;
    mmp_metrics_input in;
    memset(&in, 0, sizeof in);
    in.got = got;
    in.d_format = df;
    in.layout = c->ld;
    in.ldd = c->ldd;
    in.want64 = ref->exact;
    in.want_out = ref->want_out;
    in.absbound = ref->absdot;
    in.m = c->m; in.n = c->n; in.k = c->k;
    in.u_acc = mmp_metrics_unit_truncation((mmp_format)k->acc_format, k->acc_bits);
    if (o->acc_model) {
        /* The fitted tensor-core model of this GPU (or a probe's): its accumulator's unit
         * roundoff replaces the declared format's, where the model has the instruction. */
        mmp_model_params mp;
        double u = 0;
        char instr[48] = "";
        if (mmp_model_bound_for_kernel(&mp, &u, instr, sizeof instr, o->acc_model, (mmp_format)k->a_format,
                                       (mmp_format)k->acc_format, k->arch_specific && k->min_cc == 90) ==
                MMP_STATUS_OK && u > 0) {
            in.u_acc = u;
            snprintf(r->tolerance, sizeof r->tolerance, "model:%s", instr);
        }
    }
    in.acc_format = k->acc_format;
    /* Inputs rounded to a narrower multiply format (e.g. fp32 -> tf32): either rounding. */
    if (k->mul_format >= 0 && k->mul_format != k->a_format) {
        const mmp_format_info *mf = mmp_format_get_info((mmp_format)k->mul_format);
        const mmp_format_info *af = mmp_format_get_info((mmp_format)k->a_format);
        if (mf && af && mf->is_float && af->is_float && mf->precision < af->precision)
            in.u_mul = ldexp(1.0, 1 - mf->precision);
    }
    *in_ = in;
}

void mmp_check_output(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                      const mmp_runner_options *o, const mmp_buffer *ops)
{
    size_t mn = (size_t)(c->m * c->n);
    double *sub = NULL, *sub_abs = NULL;
    unsigned char *bad = calloc(mn, 1), *flushed = calloc(mn, 1);
    if (!bad || !flushed) {
        free(bad);
        free(flushed);
        r->reasons |= MMP_REASON_BOUND_EXCEEDED;
        snprintf(r->message, sizeof r->message, "metrics: out of memory");
        return;
    }
    check_output(r, c, ref, got, o, ops, bad, flushed, &sub, &sub_abs);
    free(bad);
    free(flushed);
    free(sub);
    free(sub_abs);
}

/* The subnormal-factor excess and sub_abs (M x N, *sub and *sub_abs malloc'ed), or NULL with
 * neither when no input is subnormal (the usual case: counted from the bits first), when no
 * element's bound can change by it (mmp_metrics_subnormal_excess_needed, from the reference's
 * |A||B| and exact values) or memory runs out. Resident operands: the DGEMMs on the device,
 * else (or if that fails) host loops. */
static const double *subnormal_excess(double **sub, double **sub_abs, const mmp_case *c, const mmp_buffer *ops,
                                      const mmp_runner_options *o, const mmp_ref *ref, const mmp_metrics_input *in)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format fa = (mmp_format)k->a_format, fb = (mmp_format)k->b_format;
    if (!mmp_format_get_info(fa)->is_float || !ops || !ops[0].image || !ops[1].image) return NULL;
    const void *a = mmp_buffer_filled(&ops[0]), *b = mmp_buffer_filled(&ops[1]);
    if (mmp_metrics_subnormal_count(a, fa, c->la, c->lda, c->m, c->k) == 0 &&
        mmp_metrics_subnormal_count(b, fb, c->lb, c->ldb, c->k, c->n) == 0)
        return NULL;
    if (ref && ref->absdot && ref->exact) {
        mmp_metrics_bound bp;
        mmp_metrics_bound_init(&bp, in);
        mmp_metrics_excess_skip skip = {ref->absdot, ref->exact, mmp_metrics_excess_rel(&bp)};
        int needed = 1;
        if (mmp_metrics_subnormal_excess_needed(&needed, a, fa, c->la, c->lda, b, fb, c->lb, c->ldb, c->m, c->n, c->k,
                                                c->alpha, &skip) == MMP_STATUS_OK && !needed)
            return NULL;
    }
    size_t mn = (size_t)(c->m * c->n);
    *sub = malloc(mn * sizeof **sub);
    *sub_abs = malloc(mn * sizeof **sub_abs);
    mmp_status st = MMP_STATUS_NO_MEMORY;
    int none = 0;
    if (*sub && *sub_abs && ops[0].dev_pristine && ops[1].dev_pristine)
        st = mmp_metrics_subnormal_excess_device(*sub, *sub_abs, &none,
                                                 (const unsigned char *)ops[0].dev_pristine + MMP_GUARD_BYTES, fa, c->la,
                                                 c->lda, (const unsigned char *)ops[1].dev_pristine + MMP_GUARD_BYTES,
                                                 fb, c->lb, c->ldb, c->m, c->n, c->k, c->alpha, NULL, o->device, 0);
    if (*sub && *sub_abs && st != MMP_STATUS_OK)
        st = mmp_metrics_subnormal_excess(*sub, *sub_abs, a, fa, c->la, c->lda, b, fb, c->lb, c->ldb, c->m, c->n, c->k,
                                          c->alpha);
    if (st == MMP_STATUS_OK && !none) return *sub;
    free(*sub);   /* none (the device found no subnormal) or out of memory: no excess */
    free(*sub_abs);
    *sub = *sub_abs = NULL;
    return NULL;
}

static void check_output(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                         const mmp_runner_options *o, const mmp_buffer *ops, unsigned char *bad,
                         unsigned char *flushed, double **sub, double **sub_abs)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format df = (mmp_format)k->d_format;
    mmp_metrics_input in;
    mmp_check_input_init(&in, r, c, ref, got, o);
    /* products with a subnormal factor (metrics.h: the bound's subnormal excess) */
    in.sub_excess = subnormal_excess(sub, sub_abs, c, ops, o, ref, &in);
    mmp_alt_in ax;
    mmp_check_alt_init(&ax, c, mmp_buffer_filled(ops ? &ops[0] : NULL), mmp_buffer_filled(ops ? &ops[1] : NULL),
                       mmp_buffer_filled(ops ? &ops[2] : NULL));
    if (in.u_mul > 0 && ax.a && ax.b) {
        in.special_alt = special_alt;
        in.special_ctx = &ax;
    }
    in.bad = bad;
    mmp_status st = mmp_metrics_compute(&r->metrics, &in, &o->tol);
    if (st != MMP_STATUS_OK) {
        r->reasons |= MMP_REASON_BOUND_EXCEEDED;
        snprintf(r->message, sizeof r->message, "metrics: %s", mmp_error_last());
        return;
    }
    mmp_metrics *m = &r->metrics;
    if (m->nan_mismatch || m->inf_mismatch) {
        r->reasons |= MMP_REASON_NAN_MISMATCH;
        /* first element whose NaN/Inf class differs */
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double g = mmp_format_load(got, mmp_gemm_index(c->ld, c->ldd, i, j), df);
                size_t e = (size_t)(i * c->n + j);
                double w = ref->want_out ? mmp_metrics_class_want(ref->exact[e], ref->want_out[e]) : ref->exact[e];
                int bad = isnan(g) != isnan(w) || (!isnan(w) && (isinf(g) || isinf(w)) && g != w);
                if (!bad || (in.special_alt && in.special_alt(in.special_ctx, i, j, g))) continue;
                mmp_check_say_nan(r, i, j, g, w);
                goto nan_done;
            }
    }
nan_done:;
    const mmp_format_info *acc = mmp_format_get_info((mmp_format)k->acc_format);
    int exact = c->dist == MMP_DIST_EXACT || c->dist == MMP_DIST_ONEHOT || (acc && !acc->is_float);
    const mmp_format_info *dfi = mmp_format_get_info(df);
    if (!dfi->is_float)
        for (int64_t t = 0; t < c->m * c->n; t++)
            if (fabs(ref->exact[t]) > dfi->max_finite || ref->exact[t] < dfi->lowest) {
                r->reasons |= MMP_REASON_OVERFLOW;  /* a fact about the inputs, not a failure */
                break;
            }
    if (exact) {
        int64_t bad = 0, bi = -1, bj = -1;
        double bg = 0, bw = 0;
        exact_job J = {c, ref, got, df, calloc((size_t)c->m, sizeof(int64_t)), calloc((size_t)c->m, sizeof(int64_t))};
        if (J.count && J.first) {
            mmp_parallel_for(mmp_parallel_threads(0), c->m, 16, exact_rows, &J);
            for (int64_t i = 0; i < c->m; i++) {
                if (J.count[i] && !bad) {
                    bi = i; bj = J.first[i];
                    bg = mmp_format_load(got, mmp_gemm_index(c->ld, c->ldd, bi, bj), df);
                    bw = ref->want_out[bi * c->n + bj];
                }
                bad += J.count[i];
            }
        } else {
            bad = c->m * c->n;   /* out of memory: no claim of a match */
        }
        free(J.count);
        free(J.first);
        mmp_check_say_exact(r, bad, bi, bj, bg, bw);
        return;
    }
    int64_t nmodel = mmp_check_narrow_verdict(r, bad, c, ref, got, ops, o);
    if (!k->flush_subnormals) mmp_check_flush(r, flushed, c, ref, got, *sub_abs);
    mmp_check_rounding(r, c, ref, got, *sub);
    if (nmodel >= 0) return;
    int64_t finite_bad = 0;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            size_t x = (size_t)(i * c->n + j);
            if (!bad[x] || flushed[x]) continue;
            double g = mmp_format_load(got, mmp_gemm_index(c->ld, c->ldd, i, j), df);
            if (isfinite(g) && isfinite(ref->exact[x])) finite_bad++;
        }
    mmp_check_say_bound(r, finite_bad, o);
}

void mmp_check_say_nan(mmp_case_result *r, int64_t i, int64_t j, double g, double w)
{
    const mmp_metrics *m = &r->metrics;
    size_t used = strlen(r->message);
    snprintf(r->message + used, sizeof r->message - used,
             "%snan-mismatch: %lld NaN and %lld Inf mismatches, first (%lld,%lld) got %g want %g", used ? "; " : "",
             (long long)m->nan_mismatch, (long long)m->inf_mismatch, (long long)i, (long long)j, g, w);
}

void mmp_check_say_exact(mmp_case_result *r, int64_t bad, int64_t i, int64_t j, double g, double w)
{
    if (!bad) return;
    r->reasons |= MMP_REASON_EXACT_MISMATCH;
    size_t used = strlen(r->message);
    snprintf(r->message + used, sizeof r->message - used,
             "%sexact-mismatch: %lld elements differ from the exact result, first (%lld,%lld) got %.17g want %.17g",
             used ? "; " : "", (long long)bad, (long long)i, (long long)j, g, w);
}

void mmp_check_say_bound(mmp_case_result *r, int64_t finite_bad, const mmp_runner_options *o)
{
    const mmp_metrics *m = &r->metrics;
    if (finite_bad <= 0) return;
    r->reasons |= MMP_REASON_BOUND_EXCEEDED;
    size_t used = strlen(r->message);
    snprintf(r->message + used, sizeof r->message - used,
             "%sbound-exceeded: %lld elements beyond the %s tolerance, first (%lld,%lld); worst "
             "error/bound %.3g at (%lld,%lld) got %.9g want %.9g",
             used ? "; " : "", (long long)finite_bad, mmp_tolerance_name(o->tol.mode),
             (long long)m->first_bad_i, (long long)m->first_bad_j, m->max_ratio_det, (long long)m->worst_i,
             (long long)m->worst_j, m->worst_got, m->worst_want);
}
