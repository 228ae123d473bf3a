/* ref_certified.c — path 2: the certified fast reference on the CPU (OpenBLAS DGEMM).
 *
 * Claim: for every element, d64 = RN64(X) and dout = RN_fmt(X) where X = alpha (AB)_ij +
 * beta C_ij exactly, or the element is recomputed by MPFR (ref_mpfr.c) and counted in n_mpfr.
 *
 * Why (Ozaki's error-free splitting, Ozaki, Ogita, Oishi & Rump 2012, with our own bound):
 *  1. Scale. Row i of A gets E_i = ref_scale_exp(max_k |a_ik|) (finite entries: about 2 above
 *     the maximum's binade); column j of B gets F_j likewise. K <= 2^L (L = ceil(log2 K));
 *     beta = floor((55 - L) / 2) bits per slice.
 *  2. Split. For s = 1..S_a, q_s(i,k) = ref_digit(r_{s-1} 2^(beta s - E_i)), r_s = r_{s-1} -
 *     q_s 2^(E_i - beta s), r_0 = a_ik: balanced digits of radix 2^beta (ref_internal.h says
 *     why each is an integer in [-2^(beta-1), 2^(beta-1) - 1] and |r_s| <= 2^(E_i - beta s)
 *     2^(beta-1) / (2^beta - 1)); every step is exact (scaling by powers of two; floor).
 *     a_ik = sum_s q_s 2^(E_i - beta s) + rA_ik. Same for B with F_j, S_b, rB.
 *  3. Exact slice products. P_st = Q^A_s Q^B_t (DGEMM on the integer slices). Every partial
 *     sum, in any order, with or without FMA, is an integer of magnitude
 *     <= K 2^(2 beta - 2) <= 2^(L + 2 beta - 2) <= 2^53: representable, so the DGEMM is EXACT.
 *     Where beta leaves room (g K 2^(2 beta - 2) <= 2^53, g >= 2: K = 1024 at 22 bits), g pairs
 *     of one level are summed in the same array (DGEMM with beta = 1), exact by the same
 *     argument, and accumulated (step 6) once. Where the planes are mostly zero (rows whose
 *     exponents spread over many slices), the same sums come from lists of the nonzero digits
 *     instead (ref_sparse.c, chosen by cost; o->lists, MMP_REF_LISTS), exact by the same bound
 *     on the number of terms.
 *  4. Exact terms. (AB)_ij = sum_{s,t} P_st(i,j) 2^(E_i + F_j - beta (s + t)) + R_ij; each
 *     term is a double times a power of two with exponent in [-1022, 970] (checked per
 *     element; otherwise MPFR), hence exact.
 *  5. Remainder. R_ij = sum_k rA_ik b_kj + a_ik rB_kj - rA_ik rB_kj. When the remainders are
 *     few (sparse: only entries far below their row's maximum have one) every one of these
 *     products is added EXACTLY (TwoProd: p + e = x y, e exact unless |x y| < 2^-968, where
 *     2^-1073 goes into the bound). Otherwise |R_ij| <= RA_i SB_j + SA'_i RB_j with
 *     RA_i = max_k |rA_ik|, SA'_i >= sum_k |a_ik| + n_i RA_i (n_i: the row's nonzero
 *     remainders; rounded up by 1 + 2K u), likewise RB_j, SB_j (R = rA b + (a - rA) rB and
 *     |a - rA| <= |a| + |rA|: digits round to nearest). S: the most slices computed keep values
 *     down to 2^-22 of their row's maximum exact; one slice fewer is used when that leaves
 *     at most 1/64 of the entries with a remainder (fp32 at K = 2048: 2 x 2 pairs, not 3 x 3).
 *     In bound mode the plan may instead take more slices and only the pairs s + t <= L (a
 *     triangle); ref_plan.h has its bound of the dropped pairs and how the plan is chosen.
 *  6. Accumulation. The S_a S_b exact terms are added into a double-double (h, l) with a
 *     running bound on l's roundings (ref_acc in ref_internal.h); alpha and beta C_ij are
 *     applied with TwoProd (ref_finish). So X lies in [sh + sl - E, sh + sl + E].
 *  7. Decision (ref_decide in ref_base.c). E = 0: X = sh + sl exactly, d64 = sh, dout from
 *     d64 and the sign of sl (mmp_ref_round_out). E > 0: with W >= |sl| + E, if W is below
 *     half an ulp of sh on both sides then RN64(X) = sh (and that is the fp64 output); nearest
 *     rounding to a narrower output format is monotone, so if RN_fmt(sh - W) = RN_fmt(sh + W)
 *     (endpoints rounded outward) that is RN_fmt(X). An exact zero sum (h = l = 0, E = 0) takes
 *     its sign from zero/sign masks of its row and column (-0 iff every product is -0;
 *     ref_v2.h), except for fp64 inputs, whose products can underflow to a zero that is not an
 *     exact one. Otherwise — and for |sh| below 2^-960 (the error terms may underflow), NaN/Inf
 *     anywhere in the row, column, C, alpha or beta — the dot stage, the exact evaluator, MPFR.
 * Integer inputs with integer alpha/beta take ref_integer.c first (exact int64).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "mmaprobe/format.h"
#include "ref_plan.h"

/* Remainder after S slices (split again: the same exact steps). */
static double remainder_after(double v, int E, int beta, int S)
{
    double q[8], last;
    return ref_split(v, E, beta, S, q, 1, &last);
}

/* The statistics of rows of A (column-major copy: a row is contiguous in a64) or columns of B
 * (contiguous in b64): ref_plan.h's two passes. */
typedef struct {
    ref_cert *c;
    const double *x;     /* a64 or b64: vector v at x + v K */
    ref_vstats *out;
} stats_job;

static void stats_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    stats_job *j = ctx;
    int64_t k = j->c->d->k;
    for (int64_t v = b; v < e; v++) {
        const double *x = j->x + v * k;
        ref_vstats *s = &j->out[v];
        ref_vstats_zero(s);
        for (int64_t q = 0; q < k; q++) ref_vstats_pass1(s, x[q]);
        ref_vstats_scale(s, j->c->beta);
        ref_vstats_pass2_vector(s, x, k, s->e, j->c->beta);
    }
}

/* The slice planes of the plan's S slices: A's row i at qa[(s-1) M K + i K + k], B's column j
 * at qb[(t-1) K N + k + j K] (both layouts are contiguous along k). */
typedef struct {
    const double *x;
    double *q;
    const int *e;
    int64_t k;
    size_t plane;
    int beta, S;
} slice_job;

static void slice_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    slice_job *j = ctx;
    for (int64_t v = b; v < e; v++)
        for (int64_t q = 0; q < j->k; q++) {
            double last;
            size_t at = (size_t)v * j->k + q;
            ref_split(j->x[at], j->e[v], j->beta, j->S, j->q + at, j->plane, &last);
        }
}

/* Sparse mode: the remainders as lists (serial: they are few by construction). */
static mmp_status build_lists(ref_cert *c)
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
        for (int64_t kk = 0; kk < k && c->va[i].cnt[c->sa]; kk++) {
            double r = remainder_after(d->a64[i * k + kk], c->ea[i], c->beta, c->sa);
            if (r != 0.0 && t < c->nnz_a) { c->ra_k[t] = kk; c->ra_v[t] = r; t++; }
        }
        c->ra_ptr[i + 1] = t;
    }
    t = 0;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t kk = 0; kk < k && c->vb[j].cnt[c->sb]; kk++) {
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

void ref_cert_free(ref_cert *c)
{
    ref_big_free(c->qa); ref_big_free(c->qb); free(c->ea); free(c->fb); free(c->rowbad); free(c->colbad);
    free(c->ra_ptr); free(c->ra_k); free(c->ra_v); free(c->rb_ptr); free(c->rb_j); free(c->rb_v);
    free(c->rc_ptr); free(c->rc_k); free(c->rc_v);
    free(c->ra_max); free(c->a_sum); free(c->rb_max); free(c->b_sum); free(c->a_ss); free(c->b_rl);
    free(c->va); free(c->vb);
    ref_sparse_free(c->lists);
    ref_big_free(c->h); ref_big_free(c->l); ref_big_free(c->err);
    memset(c, 0, sizeof *c);
}

mmp_status ref_cert_prepare(ref_cert *c, mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o,
                            int host_slices)
{
    const mmp_gemm *g = d->g;
    int64_t m = d->m, n = d->n, k = d->k;
    memset(c, 0, sizeof *c);
    c->d = d;
    c->r = r;
    int smax_a, smax_b;
    ref_slicing(&c->beta, &smax_a, &smax_b, k, ref_format_bits(g->a), ref_format_bits(g->b), o->slices);
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    c->ea = malloc(m * sizeof(int)); c->fb = malloc(n * sizeof(int));
    c->rowbad = malloc(m); c->colbad = malloc(n);
    c->va = malloc(m * sizeof *c->va); c->vb = malloc(n * sizeof *c->vb);
    c->h = ref_big_alloc(mn * sizeof(double), 1); c->l = ref_big_alloc(mn * sizeof(double), 1);
    c->err = ref_big_alloc(mn * sizeof(double), 1);
    if (!c->ea || !c->fb || !c->rowbad || !c->colbad || !c->va || !c->vb || !c->h || !c->l || !c->err)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the certified path's buffers for %lldx%lldx%lld",
                       (long long)m, (long long)n, (long long)k);
    stats_job ja = {c, d->a64, c->va}, jb = {c, d->b64, c->vb};
    mmp_parallel_for(d->threads, m, 16, stats_part, &ja);
    mmp_parallel_for(d->threads, n, 16, stats_part, &jb);
    for (int64_t i = 0; i < m; i++) { c->ea[i] = c->va[i].e; c->rowbad[i] = c->va[i].n_bad > 0; }
    for (int64_t j = 0; j < n; j++) { c->fb[j] = c->vb[j].e; c->colbad[j] = c->vb[j].n_bad > 0; }
    ref_sample smp[REF_NSAMPLE];
    int ns = ref_plan_samples(smp, m, n);
    ref_plan_estimate(smp, ns, d->a64, d->b64, k);
    int mode = o->lists, cols = 0;
    const char *env = getenv("MMP_REF_LISTS");
    if (mode == 0 && env && *env) mode = *env == '0' ? 2 : 1;
    double da[REF_SMAX_DGEMM], db[REF_SMAX_DGEMM];
    int lists = host_slices && ref_sparse_allowed(c, mode);
    if (lists) ref_sparse_densities(da, db, c);
    ref_v2_plan pl;
    ref_plan_make_lists(&pl, g, o, c->va, c->vb, smp, ns, REF_HOST_W_DOT, lists ? da : NULL, lists ? db : NULL,
                        REF_LIST_W);
    c->smax_a = pl.smax_a; c->smax_b = pl.smax_b;
    c->sa = pl.sa; c->sb = pl.sb; c->levels = pl.levels;
    c->sparse = pl.sparse; c->nnz_a = pl.nnz_a; c->nnz_b = pl.nnz_b;
    r->slices_a = c->sa; r->slices_b = c->sb; r->slice_bits = c->beta; r->slice_levels = c->levels;
    r->split.sparse = c->sparse;
    r->split.n_remainders = c->nnz_a + c->nnz_b;
    if (lists && ref_sparse_wanted(c, da, db, &cols, mode)) {
        mmp_status st = ref_sparse_make(&c->lists, c, cols);
        if (st != MMP_STATUS_OK) return st;
        if (!ref_sparse_worth(c->lists, c, mode)) { ref_sparse_free(c->lists); c->lists = NULL; }
    }
    if (host_slices && !c->lists) {
        c->qa = ref_big_alloc(mk * c->sa * sizeof(double), 0);
        c->qb = ref_big_alloc(kn * c->sb * sizeof(double), 0);
        if (!c->qa || !c->qb) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the slices");
        slice_job sa = {d->a64, c->qa, c->ea, k, mk, c->beta, c->sa}, sb = {d->b64, c->qb, c->fb, k, kn, c->beta, c->sb};
        mmp_parallel_for(d->threads, m, 16, slice_part, &sa);
        mmp_parallel_for(d->threads, n, 16, slice_part, &sb);
    }
    if (c->sparse) return build_lists(c);
    int tri = ref_plan_triangle(&pl);
    c->ra_max = malloc(m * sizeof(double)); c->a_sum = malloc(m * sizeof(double));
    c->rb_max = malloc(n * sizeof(double)); c->b_sum = malloc(n * sizeof(double));
    if (tri) {
        c->a_ss = malloc((size_t)m * c->sa * sizeof(double));
        c->b_rl = malloc((size_t)n * (c->sb + 1) * sizeof(double));
    }
    if (!c->ra_max || !c->a_sum || !c->rb_max || !c->b_sum || (tri && (!c->a_ss || !c->b_rl)))
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    ref_plan_vectors(c->ra_max, c->a_sum, c->a_ss, NULL, c->va, m, c->sa, k);
    ref_plan_vectors(c->rb_max, c->b_sum, NULL, c->b_rl, c->vb, n, c->sb, k);
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
            ref_acc_scaled(&c->h[x], &c->l[x], &c->err[x], j->p[x], c->ea[i] + c->fb[col] - j->pair_exp);
        }
}

/* Steps 3 and 6 on DGEMMs: each pair's product, g pairs of one level summed in one array. */
static mmp_status dgemm_products(mmp_ref_result *r, ref_cert *c, const ref_data *d)
{
    int64_t m = d->m, n = d->n, k = d->k;
    double *p = ref_big_alloc((size_t)m * n * sizeof(double), 0);
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory");
    size_t mk = (size_t)m * k, kn = (size_t)k * n;
    /* step 3: g pairs of one level summed in one product array stay exact (g K 2^(2 beta - 2)
     * <= 2^53), so they are accumulated once */
    double room = ldexp(1.0, 55 - 2 * c->beta) / (double)k;
    int group = room >= REF_SMAX_DGEMM ? REF_SMAX_DGEMM : (room >= 1.0 ? (int)room : 1);
    for (int lvl = 2; lvl <= c->levels; lvl++) {   /* largest weights first */
        int in = 0, last = c->sa < lvl - 1 ? c->sa : lvl - 1;
        for (int s = 1; s <= last; s++) {
            int t = lvl - s;
            if (t < 1 || t > c->sb) continue;
            double t1 = mmp_clock_now();
            /* row-major P = column-major P^T = Qb^T Qa^T (Qa row-major is Qa^T column-major) */
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0,
                        c->qb + (size_t)(t - 1) * kn, (int)k, c->qa + (size_t)(s - 1) * mk, (int)k, in ? 1.0 : 0.0, p,
                        (int)n);
            r->n_gemms++;
            r->time.gemm_s += mmp_clock_now() - t1;
            if (++in < group && s < last) continue;
            double t2 = mmp_clock_now();
            acc_job aj = {c, p, c->beta * lvl};
            mmp_parallel_for(d->threads, m, 8, accumulate_rows, &aj);
            r->time.combine_s += mmp_clock_now() - t2;
            in = 0;
        }
    }
    ref_big_free(p);
    return MMP_STATUS_OK;
}

mmp_status ref_certified_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    mmp_status st;
    if (ref_mpfr_instead(&st, r, d, o)) return st;
    ref_cert c;
    double t0 = mmp_clock_now();
    st = ref_cert_prepare(&c, r, d, o, 1);
    r->time.combine_s += mmp_clock_now() - t0;
    if (st == MMP_STATUS_OK && c.lists) {   /* steps 3 and 6 from the lists */
        double t1 = mmp_clock_now();
        st = ref_sparse_run(&c, c.lists);
        r->lists = 1;
        r->n_list_products = ref_sparse_count(c.lists);
        r->time.gemm_s += mmp_clock_now() - t1;
    } else if (st == MMP_STATUS_OK) {
        st = dgemm_products(r, &c, d);
    }
    if (st == MMP_STATUS_OK) st = ref_cert_finish(&c);
    ref_cert_free(&c);
    return st;
}
