/* ref_cert_finish.c — the host end of the certified paths (CPU and CUDA): the remainder terms
 * (step 5 of ref_certified.c: exact when sparse, else a bound), alpha/beta (ref_finish), the
 * rounding decisions (ref_decide); elements with a NaN/Inf product from those products alone
 * (ref_special_element), and whatever the bound left open by the exact evaluator (ref_exact.c),
 * MPFR only for what that declines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

/* x y added exactly (ref_acc_prod, ref_internal.h) */
static void acc_prod(ref_cert *c, size_t at, double x, double y)
{
    ref_acc_prod(&c->h[at], &c->l[at], &c->err[at], x, y);
}

/* rA B - rA rB, by rows of A (each row of the state belongs to one task). */
static void sparse_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    ref_cert *c = ctx;
    const ref_data *d = c->d;
    for (int64_t i = b; i < e; i++)
        for (int64_t q = c->ra_ptr[i]; q < c->ra_ptr[i + 1]; q++) {
            int64_t k = c->ra_k[q];
            double v = c->ra_v[q];
            for (int64_t j = 0; j < d->n; j++) acc_prod(c, (size_t)i * d->n + j, v, d->b64[k + j * d->k]);
            for (int64_t t = c->rb_ptr[k]; t < c->rb_ptr[k + 1]; t++)
                acc_prod(c, (size_t)i * d->n + c->rb_j[t], -v, c->rb_v[t]);
        }
}

/* A rB, by columns of B. */
static void sparse_cols(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    ref_cert *c = ctx;
    const ref_data *d = c->d;
    for (int64_t j = b; j < e; j++)
        for (int64_t q = c->rc_ptr[j]; q < c->rc_ptr[j + 1]; q++) {
            int64_t k = c->rc_k[q];
            double w = c->rc_v[q];
            for (int64_t i = 0; i < d->m; i++) acc_prod(c, (size_t)i * d->n + j, d->a64[i * d->k + k], w);
        }
}

typedef struct {
    ref_cert *c;
    unsigned char *undecided;   /* row-major */
    const ref_special *sp;      /* NaN/Inf positions, when a row or column has one */
} decide_job;

static void decide_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    decide_job *j = ctx;
    ref_cert *c = j->c;
    const ref_data *d = c->d;
    const mmp_gemm *g = d->g;
    mmp_ref_result *r = c->r;
    for (int64_t i = b; i < e; i++)
        for (int64_t col = 0; col < d->n; col++) {
            size_t x = (size_t)i * d->n + col;   /* state and result are both row-major */
            double sh = c->h[x], sl = c->l[x];
            double E = c->err[x] == 0.0 ? 0.0 : c->err[x] * (1.0 + 0x1p-40);
            if (!c->sparse) {
                double drop = c->ra_max[i] * c->b_sum[col] + c->a_sum[i] * c->rb_max[col];
                if (drop != 0.0) E += drop * (1.0 + 0x1p-50) + 0x1p-1073;
            }
            if (c->rowbad[i] || c->colbad[col]) {   /* a NaN/Inf product: decided from those alone */
                j->undecided[x] = !(j->sp && ref_special_element(&r->d64[x], &r->dout[x], j->sp, d, i, col));
                continue;
            }
            double cv = d->c64 ? d->c64[x] : 0.0;
            ref_finish(&sh, &sl, &E, g->alpha, g->beta, cv, g->beta != 0.0);
            j->undecided[x] = !ref_decide(&r->d64[x], &r->dout[x], sh, sl, E, g->d);
        }
}

mmp_status ref_cert_finish(ref_cert *c)
{
    const ref_data *d = c->d;
    mmp_ref_result *r = c->r;
    double t0 = mmp_clock_now();
    if (c->sparse) {
        if (c->nnz_a) mmp_parallel_for(d->threads, d->m, 8, sparse_rows, c);
        if (c->nnz_b) mmp_parallel_for(d->threads, d->n, 8, sparse_cols, c);
    }
    size_t total = (size_t)d->m * d->n;
    unsigned char *und = malloc(total);
    if (!und) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    int any_bad = 0;
    for (int64_t i = 0; i < d->m && !any_bad; i++) any_bad = c->rowbad[i];
    for (int64_t col = 0; col < d->n && !any_bad; col++) any_bad = c->colbad[col];
    ref_special sp;
    int have_sp = any_bad && ref_special_lists(&sp, d) == MMP_STATUS_OK;
    decide_job dj = {c, und, have_sp ? &sp : NULL};
    mmp_parallel_for(d->threads, d->m, 8, decide_rows, &dj);
    if (have_sp) ref_special_free(&sp);
    size_t cnt = 0;
    for (size_t x = 0; x < total; x++) cnt += und[x];
    r->time.combine_s += mmp_clock_now() - t0;
    mmp_status st = MMP_STATUS_OK;
    if (cnt) {
        int64_t *idx = malloc(cnt * sizeof(int64_t));
        if (!idx) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot list undecided elements");
        else {
            size_t t = 0;
            for (size_t x = 0; x < total; x++)
                if (und[x]) idx[t++] = (int64_t)x;
            int64_t left = (int64_t)cnt;
            st = ref_exact_list(r, d, idx, &left);   /* the exact evaluator; MPFR for the rest */
            if (st == MMP_STATUS_OK) st = ref_mpfr_list(r, d, idx, left);
            free(idx);
        }
    }
    free(und);
    return st;
}
