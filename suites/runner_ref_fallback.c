/* runner_ref_fallback.c — TEMPORARY reference for the runner until the certified reference
 * (include/mmaprobe/reference.h, branch `reference`) is merged; the only place that computes
 * the reference, so the switch is one file.
 *
 * Products and sums are formed in long double (64-bit significand; products of inputs with
 * <= 32 significand bits are exact), so the error of this reference is <= (K+1) 2^-63 S_ij, far below every accumulator's bound (fp64 on
 * K <= 2^20 included: K 2^-52). NaN and Inf follow IEEE in that arithmetic, which is what the
 * `special` distribution's expectations are. Undecided elements are not recomputed with MPFR
 * here (the certified reference does that).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "suites/runner_internal.h"

/* Row i of A / column j of B into a contiguous array of doubles. */
static double *to_rows(mmp_buffer *m, int by_rows)
{
    int64_t outer = by_rows ? m->rows : m->cols, inner = by_rows ? m->cols : m->rows;
    double *x = malloc(sizeof(double) * (size_t)outer * (size_t)inner);
    if (!x) return NULL;
    const void *data = mmp_buffer_host(m);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t t = 0; t < inner; t++) {
            int64_t i = by_rows ? o : t, j = by_rows ? t : o;
            x[o * inner + t] = mmp_format_load(data, mmp_gemm_index(m->l, m->ld, i, j), m->f);
        }
    return x;
}

mmp_status mmp_ref_compute(mmp_ref *ref, const mmp_case *c, mmp_buffer *a, mmp_buffer *b,
                           mmp_buffer *cc)
{
    memset(ref, 0, sizeof *ref);
    const mmp_format_info *acc = mmp_format_get_info((mmp_format)c->kernel->acc_format);
    ref->int_acc = acc && !acc->is_float;
    size_t mn = (size_t)c->m * (size_t)c->n;
    double *ar = to_rows(a, 1), *bc = to_rows(b, 0);
    ref->exact = malloc(sizeof(double) * mn);
    ref->absdot = malloc(sizeof(double) * mn);
    ref->want_out = malloc(sizeof(double) * mn);
    if (!ar || !bc || !ref->exact || !ref->absdot || !ref->want_out) {
        free(ar); free(bc); mmp_ref_clear(ref);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate for %lldx%lldx%lld",
                       (long long)c->m, (long long)c->n, (long long)c->k);
    }
    const void *cdata = cc ? mmp_buffer_host(cc) : NULL;
    mmp_format df = (mmp_format)c->kernel->d_format;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            const double *x = ar + i * c->k, *y = bc + j * c->k;
            long double s = 0, sa = 0;
            for (int64_t t = 0; t < c->k; t++) {
                long double p = (long double)x[t] * y[t];
                s += p;
                sa += fabsl(p);
            }
            long double e = (long double)c->alpha * s, ea = fabsl((long double)c->alpha) * sa;
            if (cdata && c->beta != 0) {
                double cv = mmp_format_load(cdata, mmp_gemm_index(cc->l, cc->ld, i, j), cc->f);
                e += (long double)c->beta * cv;
                ea += fabsl((long double)c->beta * cv);
            }
            size_t r = (size_t)(i * c->n + j);
            ref->exact[r] = (double)e;
            ref->absdot[r] = (double)ea;
            ref->want_out[r] = mmp_format_round((double)e, df, MMP_ROUND_NEAREST_EVEN, 0);
        }
    free(ar);
    free(bc);
    return MMP_STATUS_OK;
}

void mmp_ref_clear(mmp_ref *ref)
{
    free(ref->exact);
    free(ref->absdot);
    free(ref->want_out);
    memset(ref, 0, sizeof *ref);
}
