/* ref_certified.c — path 2: the certified fast reference on the CPU (OpenBLAS DGEMM).
 *
 * Claim: for every element, d64 = RN64(X) and dout = RN_fmt(X) where X = alpha (AB)_ij +
 * beta C_ij exactly, or the element is recomputed by MPFR (ref_mpfr.c) and counted in n_mpfr.
 *
 * Why (Ozaki's error-free splitting, Ozaki, Ogita, Oishi & Rump 2012, with our own bound):
 *  1. Scale. Row i of A gets E_i with 2^E_i > max_k |a_ik| (finite entries); column j of B
 *     gets F_j likewise. K <= 2^L (L = ceil(log2 K)); beta = floor((53 - L) / 2) bits per slice.
 *  2. Split. For s = 1..S_a, q_s(i,k) = trunc(r_{s-1} 2^(beta s - E_i)), r_s = r_{s-1} -
 *     q_s 2^(E_i - beta s), r_0 = a_ik. By induction |r_{s-1}| < 2^(E_i - beta (s-1)), so
 *     q_s is an integer with |q_s| <= 2^beta - 1, and every step is exact (scaling by powers
 *     of two; truncation toward zero of a double onto a grid it is a multiple of or finer).
 *     a_ik = sum_s q_s 2^(E_i - beta s) + rA_ik with |rA_ik| < 2^(E_i - beta S_a), and
 *     |a - rA| <= |a| (truncation toward zero). Same for B with F_j, S_b, rB.
 *  3. Exact slice products. P_st = Q^A_s Q^B_t (DGEMM on the integer slices). Every partial
 *     sum, in any order, with or without FMA, is an integer of magnitude
 *     <= K (2^beta - 1)^2 < 2^(L + 2 beta) <= 2^53: representable, so the DGEMM is EXACT.
 *  4. Exact terms. (AB)_ij = sum_{s,t} P_st(i,j) 2^(E_i + F_j - beta (s + t)) + R_ij; each
 *     term is a double times a power of two with exponent in [-1022, 970] (checked per
 *     element; otherwise MPFR), hence exact.
 *  5. Remainder. R_ij = sum_k rA_ik b_kj + a_ik rB_kj - rA_ik rB_kj. When the remainders are
 *     few (sparse: only entries far below their row's maximum have one) every one of these
 *     products is added EXACTLY (TwoProd: p + e = x y, e exact unless |x y| < 2^-968, where
 *     2^-1073 goes into the bound). Otherwise |R_ij| <= RA_i SB_j + SA_i RB_j with
 *     RA_i = max_k |rA_ik|, SA_i >= sum_k |a_ik| (rounded up by 1 + 2K u), likewise RB_j, SB_j
 *     (R = rA b + (a - rA) rB and |a - rA| <= |a|). S: the most slices computed keep values
 *     down to 2^-22 of their row's maximum exact; one slice fewer is used when that leaves
 *     at most 1/64 of the entries with a remainder (fp32 at K = 2048: 2 x 2 pairs, not 3 x 3).
 *  6. Accumulation. The S_a S_b exact terms are added into a double-double (h, l) with a
 *     running bound on l's roundings (ref_acc in ref_internal.h); alpha and beta C_ij are
 *     applied with TwoProd (ref_finish). So X lies in [sh + sl - E, sh + sl + E].
 *  7. Decision (ref_decide in ref_base.c). E = 0: X = sh + sl exactly, d64 = sh, dout from
 *     d64 and the sign of sl (mmp_ref_round_out). E > 0: with W >= |sl| + E, if W is below
 *     half an ulp of sh on both sides then RN64(X) = sh; nearest rounding to the output format
 *     is monotone, so if RN_fmt(sh - W) = RN_fmt(sh + W) (endpoints rounded outward) that is
 *     RN_fmt(X). Otherwise — and for exact zeros (their sign needs every term), |sh| outside
 *     [2^-960, 2^1000], NaN/Inf anywhere in the row, column, C, alpha or beta — MPFR.
 * Integer inputs with integer alpha/beta take ref_integer.c first (exact int64).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "mmaprobe/format.h"
#include "ref_internal.h"

static int ceil_log2(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

void ref_slicing(int *beta, int *slices_a, int *slices_b, int64_t k, int pa, int pb, int forced)
{
    int b = (53 - ceil_log2(k)) / 2;
    if (b < 1) b = 1;
    int sa = forced > 0 ? forced : (pa + 22 + b - 1) / b, sb = forced > 0 ? forced : (pb + 22 + b - 1) / b;
    *beta = b;
    *slices_a = sa < 1 ? 1 : (sa > 8 ? 8 : sa);
    *slices_b = sb < 1 ? 1 : (sb > 8 ? 8 : sb);
}

/* Scale exponent of a vector: smallest E with 2^E > max |x| over finite x; flags non-finite. */
static int scale_exp(const double *x, int64_t n, int64_t stride, unsigned char *bad)
{
    double mx = 0;
    *bad = 0;
    for (int64_t t = 0; t < n; t++) {
        double v = fabs(x[t * stride]);
        if (!isfinite(v)) *bad = 1;
        else if (v > mx) mx = v;
    }
    if (mx == 0) return 0;
    int e;
    frexp(mx, &e);   /* mx = f 2^e, 1/2 <= f < 1: 2^e > mx */
    return e;
}

/* Remainder after S slices (split again: the same exact steps). */
static double remainder_after(double v, int E, int beta, int S)
{
    double q[8], last;
    return ref_split(v, E, beta, S, q, 1, &last);
}

/* Split into the stored planes (host products) or a scratch array (device products). */
static double split_store(ref_cert *c, double v, int E, int S, double *q, size_t stride, double *last)
{
    double tmp[8];
    return q ? ref_split(v, E, c->beta, S, q, stride, last) : ref_split(v, E, c->beta, S, tmp, 1, last);
}

typedef struct {
    ref_cert *c;
    int64_t *cnt_full, *cnt_last;   /* per row (A) or column (B): nonzero remainders */
    int use_a;                      /* remainder level chosen */
} split_job;

/* A is column-major: row i is strided by M. */
static void split_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    split_job *j = ctx;
    ref_cert *c = j->c;
    const ref_data *d = c->d;
    size_t plane = (size_t)d->m * d->k;
    for (int64_t i = b; i < e; i++) {
        c->ea[i] = scale_exp(d->a64 + i * d->k, d->k, 1, &c->rowbad[i]);
        int64_t nf = 0, nl = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double last = 0, rem = split_store(c, d->a64[i * d->k + k], c->ea[i], c->smax_a,
                                               c->qa ? c->qa + i * d->k + k : NULL, plane, &last);
            nf += rem != 0.0;
            nl += last != 0.0;
        }
        j->cnt_full[i] = nf;
        j->cnt_last[i] = nl;
    }
}

static void split_cols(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    split_job *j = ctx;
    ref_cert *c = j->c;
    const ref_data *d = c->d;
    size_t plane = (size_t)d->k * d->n;
    for (int64_t col = b; col < e; col++) {
        const double *v = d->b64 + col * d->k;
        c->fb[col] = scale_exp(v, d->k, 1, &c->colbad[col]);
        int64_t nf = 0, nl = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double last = 0, rem = split_store(c, v[k], c->fb[col], c->smax_b,
                                               c->qb ? c->qb + k + col * d->k : NULL, plane, &last);
            nf += rem != 0.0;
            nl += last != 0.0;
        }
        j->cnt_full[col] = nf;
        j->cnt_last[col] = nl;
    }
}

/* Bound mode: max |rA| and sum |a| (rounded up) per row; the same per column of B. */
static void bound_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    ref_cert *c = ctx;
    const ref_data *d = c->d;
    double up = 1.0 + 2.0 * (double)d->k * 0x1p-53 + 0x1p-50;   /* K nonnegative roundings */
    for (int64_t i = b; i < e; i++) {
        double mx = 0, sum = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double v = d->a64[i * d->k + k];
            double rem = remainder_after(v, c->ea[i], c->beta, c->sa);
            mx = fmax(mx, fabs(rem));
            if (isfinite(v)) sum += fabs(v);
        }
        c->ra_max[i] = mx;
        c->a_sum[i] = sum * up;
    }
}

static void bound_cols(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    ref_cert *c = ctx;
    const ref_data *d = c->d;
    double up = 1.0 + 2.0 * (double)d->k * 0x1p-53 + 0x1p-50;
    for (int64_t col = b; col < e; col++) {
        double mx = 0, sum = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double v = d->b64[k + col * d->k];
            double rem = remainder_after(v, c->fb[col], c->beta, c->sb);
            mx = fmax(mx, fabs(rem));
            if (isfinite(v)) sum += fabs(v);
        }
        c->rb_max[col] = mx;
        c->b_sum[col] = sum * up;
    }
}

/* Sparse mode: the remainders as lists (serial: they are few by construction). */
static mmp_status build_lists(ref_cert *c, const int64_t *row_cnt, const int64_t *col_cnt)
{
    const ref_data *d = c->d;
    int64_t m = d->m, n = d->n, k = d->k;
    int64_t na = c->nnz_a > 0 ? c->nnz_a : 1, nb = c->nnz_b > 0 ? c->nnz_b : 1;
    c->ra_ptr = calloc((size_t)m + 1, sizeof(int64_t)); c->ra_k = malloc(na * sizeof(int64_t));
    c->ra_v = malloc(na * sizeof(double));
    c->rb_ptr = calloc((size_t)k + 1, sizeof(int64_t)); c->rb_j = malloc(nb * sizeof(int64_t));
    c->rb_v = malloc(nb * sizeof(double));
    c->rc_ptr = calloc((size_t)n + 1, sizeof(int64_t)); c->rc_k = malloc(nb * sizeof(int64_t));
    c->rc_v = malloc(nb * sizeof(double));
    if (!c->ra_ptr || !c->ra_k || !c->ra_v || !c->rb_ptr || !c->rb_j || !c->rb_v || !c->rc_ptr || !c->rc_k || !c->rc_v)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the remainder lists");
    int64_t t = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t kk = 0; kk < k && row_cnt[i]; kk++) {
            double r = remainder_after(d->a64[i * k + kk], c->ea[i], c->beta, c->sa);
            if (r != 0.0 && t < c->nnz_a) { c->ra_k[t] = kk; c->ra_v[t] = r; t++; }
        }
        c->ra_ptr[i + 1] = t;
    }
    t = 0;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t kk = 0; kk < k && col_cnt[j]; kk++) {
            double r = remainder_after(d->b64[kk + j * k], c->fb[j], c->beta, c->sb);
            if (r != 0.0 && t < c->nnz_b) { c->rc_k[t] = kk; c->rc_v[t] = r; c->rb_ptr[kk + 1]++; t++; }
        }
        c->rc_ptr[j + 1] = t;
    }
    for (int64_t kk = 0; kk < k; kk++) c->rb_ptr[kk + 1] += c->rb_ptr[kk];   /* counts -> offsets */
    int64_t *fill = calloc((size_t)k, sizeof(int64_t));
    if (!fill) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    for (int64_t j = 0; j < n; j++)
        for (int64_t q = c->rc_ptr[j]; q < c->rc_ptr[j + 1]; q++) {
            int64_t kk = c->rc_k[q], at = c->rb_ptr[kk] + fill[kk]++;
            c->rb_j[at] = j; c->rb_v[at] = c->rc_v[q];
        }
    free(fill);
    return MMP_STATUS_OK;
}

static int64_t sum64(const int64_t *x, int64_t n)
{
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

void ref_cert_free(ref_cert *c)
{
    ref_big_free(c->qa); ref_big_free(c->qb); free(c->ea); free(c->fb); free(c->rowbad); free(c->colbad);
    free(c->ra_ptr); free(c->ra_k); free(c->ra_v); free(c->rb_ptr); free(c->rb_j); free(c->rb_v);
    free(c->rc_ptr); free(c->rc_k); free(c->rc_v);
    free(c->ra_max); free(c->a_sum); free(c->rb_max); free(c->b_sum);
    ref_big_free(c->h); ref_big_free(c->l); ref_big_free(c->err);
    memset(c, 0, sizeof *c);
}

mmp_status ref_cert_prepare(ref_cert *c, mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o,
                            int host_slices)
{
    const mmp_gemm *g = d->g;
    int64_t m = d->m, n = d->n, k = d->k;
    memset(c, 0, sizeof *c);
    c->d = d; c->r = r;
    ref_slicing(&c->beta, &c->smax_a, &c->smax_b, k, ref_format_bits(g->a), ref_format_bits(g->b), o->slices);
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    if (host_slices) {
        c->qa = ref_big_alloc(mk * c->smax_a * sizeof(double), 0);
        c->qb = ref_big_alloc(kn * c->smax_b * sizeof(double), 0);
    }
    c->ea = malloc(m * sizeof(int)); c->fb = malloc(n * sizeof(int));
    c->rowbad = malloc(m); c->colbad = malloc(n);
    int64_t *cf = malloc(m * sizeof(int64_t)), *cl = malloc(m * sizeof(int64_t));
    int64_t *gf = malloc(n * sizeof(int64_t)), *gl = malloc(n * sizeof(int64_t));
    c->h = ref_big_alloc(mn * sizeof(double), 1); c->l = ref_big_alloc(mn * sizeof(double), 1);
    c->err = ref_big_alloc(mn * sizeof(double), 1);
    if ((host_slices && (!c->qa || !c->qb)) || !c->ea || !c->fb || !c->rowbad || !c->colbad || !cf || !cl || !gf || !gl || !c->h || !c->l || !c->err) {
        free(cf); free(cl); free(gf); free(gl);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the certified path's buffers for %lldx%lldx%lld",
                       (long long)m, (long long)n, (long long)k);
    }
    split_job sj = {c, cf, cl, 0};
    mmp_parallel_for(d->threads, m, 16, split_rows, &sj);
    int64_t full_a = sum64(cf, m), last_a = sum64(cl, m);
    split_job sb = {c, gf, gl, 0};
    mmp_parallel_for(d->threads, n, 16, split_cols, &sb);
    int64_t full_b = sum64(gf, n), last_b = sum64(gl, n);
    /* one slice fewer when that leaves few remainders (they are then added exactly) */
    int drop_a = o->slices <= 0 && c->smax_a > 1 && last_a <= (int64_t)(mk / 64);
    int drop_b = o->slices <= 0 && c->smax_b > 1 && last_b <= (int64_t)(kn / 64);
    c->sa = c->smax_a - drop_a; c->sb = c->smax_b - drop_b;
    c->nnz_a = drop_a ? last_a : full_a;
    c->nnz_b = drop_b ? last_b : full_b;
    /* exact remainder terms cost (nnz_a N + nnz_b M) TwoProds: worth it below ~ one GEMM */
    c->sparse = (double)c->nnz_a * n + (double)c->nnz_b * m <= (double)m * n * k / 16.0 + 64.0 * (m + n);
    r->slices_a = c->sa; r->slices_b = c->sb; r->slice_bits = c->beta;
    r->split.sparse = c->sparse;
    r->split.n_remainders = c->nnz_a + c->nnz_b;
    if (c->sparse) {
        mmp_status st = build_lists(c, drop_a ? cl : cf, drop_b ? gl : gf);
        free(cf); free(cl); free(gf); free(gl);
        return st;
    }
    free(cf); free(cl); free(gf); free(gl);
    c->ra_max = malloc(m * sizeof(double)); c->a_sum = malloc(m * sizeof(double));
    c->rb_max = malloc(n * sizeof(double)); c->b_sum = malloc(n * sizeof(double));
    if (!c->ra_max || !c->a_sum || !c->rb_max || !c->b_sum)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    mmp_parallel_for(d->threads, m, 16, bound_rows, c);
    mmp_parallel_for(d->threads, n, 16, bound_cols, c);
    return MMP_STATUS_OK;
}

/* ---- the CPU products: steps 3, 4 and 6 ---- */

typedef struct {
    ref_cert *c;
    const double *p;   /* slice product, row-major */
    int pair_exp;      /* beta (s + t) */
} acc_job;

static void accumulate_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    acc_job *j = ctx;
    ref_cert *c = j->c;
    int64_t n = c->d->n;
    for (int64_t i = b; i < e; i++)
        for (int64_t col = 0; col < n; col++) {
            size_t x = (size_t)i * n + (size_t)col;
            int ex = c->ea[i] + c->fb[col] - j->pair_exp;
            if (ex < -1022 || ex > 970) { c->err[x] = INFINITY; continue; }
            ref_acc(&c->h[x], &c->l[x], &c->err[x], j->p[x] * ref_pow2(ex));   /* exact term */
        }
}

mmp_status ref_certified_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    const mmp_gemm *g = d->g;
    int64_t m = d->m, n = d->n, k = d->k;
    if (o->force_mpfr || !isfinite(g->alpha) || !isfinite(g->beta)) {
        mmp_ref_path keep = r->path;
        mmp_status st = ref_mpfr_run(r, d);
        r->path = keep;
        return st;
    }
    ref_cert c;
    double t0 = mmp_clock_now();
    mmp_status st = ref_cert_prepare(&c, r, d, o, 1);
    r->time.combine_s += mmp_clock_now() - t0;
    double *p = st == MMP_STATUS_OK ? ref_big_alloc((size_t)m * n * sizeof(double), 0) : NULL;
    if (st == MMP_STATUS_OK && !p) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    size_t mk = (size_t)m * k, kn = (size_t)k * n;
    for (int lvl = 2; st == MMP_STATUS_OK && lvl <= c.sa + c.sb; lvl++)   /* largest weights first */
        for (int s = 1; s <= c.sa; s++) {
            int t = lvl - s;
            if (t < 1 || t > c.sb) continue;
            double t1 = mmp_clock_now();
            /* row-major P = column-major P^T = Qb^T Qa^T (Qa row-major is Qa^T column-major) */
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0,
                        c.qb + (size_t)(t - 1) * kn, (int)k, c.qa + (size_t)(s - 1) * mk, (int)k, 0.0, p, (int)n);
            r->n_gemms++;
            double t2 = mmp_clock_now();
            acc_job aj = {&c, p, c.beta * lvl};
            mmp_parallel_for(d->threads, m, 8, accumulate_rows, &aj);
            r->time.gemm_s += t2 - t1;
            r->time.combine_s += mmp_clock_now() - t2;
        }
    ref_big_free(p);
    if (st == MMP_STATUS_OK) st = ref_cert_finish(&c);
    ref_cert_free(&c);
    return st;
}
