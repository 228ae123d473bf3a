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
 *  5. Remainder. R_ij = sum_k rA_ik b_kj + (a_ik - rA_ik) rB_kj, so
 *     |R_ij| <= RA_i SB_j + SA_i RB_j with RA_i = max_k |rA_ik|, SA_i >= sum_k |a_ik| (rounded
 *     up by 1 + 2K u), likewise RB_j, SB_j. It is exactly 0 when no entry needed more than S
 *     slices (the usual case: S is chosen so that values down to 2^-22 of their row's maximum
 *     are split exactly), and then nothing about the element is approximate.
 *  6. Accumulation. The S_a S_b exact terms are added into a double-double (h, l) with a
 *     running bound on l's roundings (ref_acc in ref_internal.h); alpha and beta C_ij are
 *     applied with TwoProd (ref_finish). So X lies in [sh + sl - E, sh + sl + E].
 *  7. Decision (ref_decide in ref_common.c). E = 0: X = sh + sl exactly, d64 = sh, dout from
 *     d64 and the sign of sl (mmp_ref_round_out). E > 0: with W >= |sl| + E, if W is below
 *     half an ulp of sh on both sides then RN64(X) = sh; nearest rounding to the output format
 *     is monotone, so if RN_fmt(sh - W) = RN_fmt(sh + W) (endpoints rounded outward) that is
 *     RN_fmt(X). Otherwise — and for exact zeros (their sign needs every term), |sh| outside
 *     [2^-960, 2^1000], NaN/Inf anywhere in the row, column, C, alpha or beta — MPFR.
 * Integer inputs with integer alpha/beta take ref_integer.c first (exact int64).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "mmaprobe/format.h"
#include "reference/ref_internal.h"

static int ceil_log2(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

void ref_slicing(int *beta, int *slices, int64_t k, int precision_bits, int forced)
{
    int b = (53 - ceil_log2(k)) / 2;
    if (b < 1) b = 1;
    int s = forced > 0 ? forced : (precision_bits + 22 + b - 1) / b;
    if (s < 1) s = 1;
    if (s > 8) s = 8;
    *beta = b;
    *slices = s;
}

static double pow2(int e) /* 2^e for -1022 <= e <= 1023 */
{
    union { uint64_t u; double d; } v;
    v.u = (uint64_t)(e + 1023) << 52;
    return v.d;
}

/* Scale exponent of a vector: smallest E with 2^E > max |x| over finite x; flags non-finite. */
static int scale_exp(const double *x, int64_t n, int64_t stride, int *bad)
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

/* Split one value (step 2); q[s * qstride] gets slice s; returns the remainder. */
static double split(double v, int E, int beta, int S, double *q, size_t qstride)
{
    double r = isfinite(v) ? v : 0.0;
    for (int s = 1; s <= S; s++) {
        int up = beta * s - E;
        double t = (up >= -1022 && up <= 1023) ? r * pow2(up) : ldexp(r, up);
        double qs = trunc(t);
        q[(size_t)(s - 1) * qstride] = qs;
        if (qs != 0.0) r -= (-up >= -1022 && -up <= 1023) ? qs * pow2(-up) : ldexp(qs, -up);
    }
    return r;
}

typedef struct {
    const ref_data *d;
    int beta, sa, sb;
    double *qa, *qb;          /* slices: qa[s][i + k m], qb[t][k + j K] */
    int *ea, *fb;             /* scale exponents */
    unsigned char *rowbad, *colbad;
    double *ra, *sa_sum, *rb, *sb_sum;
    const double *p;          /* current slice product, column-major */
    int pair_exp;             /* beta (s + t) */
    double *h, *l, *err;      /* column-major state */
    unsigned char *undecided; /* row-major */
    mmp_ref_result *r;
} cert_job;

static void split_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    cert_job *j = ctx;
    const ref_data *d = j->d;
    size_t plane = (size_t)d->m * d->k;
    double up = 1.0 + 2.0 * (double)d->k * 0x1p-53 + 0x1p-50;
    for (int64_t i = b; i < e; i++) {
        int bad;
        j->ea[i] = scale_exp(d->a64 + i, d->k, d->m, &bad);
        j->rowbad[i] = (unsigned char)bad;
        double rmax = 0, sum = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double v = d->a64[i + k * d->m];
            double rem = split(v, j->ea[i], j->beta, j->sa, j->qa + i + k * d->m, plane);
            if (fabs(rem) > rmax) rmax = fabs(rem);
            if (isfinite(v)) sum += fabs(v);
        }
        j->ra[i] = rmax;
        j->sa_sum[i] = sum * up;
    }
}

static void split_cols(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    cert_job *j = ctx;
    const ref_data *d = j->d;
    size_t plane = (size_t)d->k * d->n;
    double up = 1.0 + 2.0 * (double)d->k * 0x1p-53 + 0x1p-50;
    for (int64_t c = b; c < e; c++) {
        int bad;
        const double *col = d->b64 + c * d->k;
        j->fb[c] = scale_exp(col, d->k, 1, &bad);
        j->colbad[c] = (unsigned char)bad;
        double rmax = 0, sum = 0;
        for (int64_t k = 0; k < d->k; k++) {
            double rem = split(col[k], j->fb[c], j->beta, j->sb, j->qb + k + c * d->k, plane);
            if (fabs(rem) > rmax) rmax = fabs(rem);
            if (isfinite(col[k])) sum += fabs(col[k]);
        }
        j->rb[c] = rmax;
        j->sb_sum[c] = sum * up;
    }
}

/* Step 6: add P_st 2^(E_i + F_j - beta (s + t)) into the state. */
static void accumulate_cols(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    cert_job *j = ctx;
    int64_t m = j->d->m;
    for (int64_t c = b; c < e; c++)
        for (int64_t i = 0; i < m; i++) {
            size_t x = (size_t)i + (size_t)c * m;
            int ex = j->ea[i] + j->fb[c] - j->pair_exp;
            if (ex < -1022 || ex > 970) { j->err[x] = INFINITY; continue; }
            ref_acc(&j->h[x], &j->l[x], &j->err[x], j->p[x] * pow2(ex));
        }
}

/* Steps 5-7 per element; undecided ones are marked for MPFR. */
static void decide_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    cert_job *j = ctx;
    const ref_data *d = j->d;
    const mmp_gemm *g = d->g;
    for (int64_t i = b; i < e; i++)
        for (int64_t c = 0; c < d->n; c++) {
            size_t x = (size_t)i + (size_t)c * d->m, o = (size_t)i * d->n + c;
            double sh = j->h[x], sl = j->l[x];
            double E = j->err[x] == 0.0 ? 0.0 : j->err[x] * (1.0 + 0x1p-40);
            double drop = j->ra[i] * j->sb_sum[c] + j->sa_sum[i] * j->rb[c];
            if (drop != 0.0) E += drop * (1.0 + 0x1p-50) + 0x1p-1073;
            if (j->rowbad[i] || j->colbad[c]) E = INFINITY;
            double cv = d->c64 ? d->c64[x] : 0.0;
            ref_finish(&sh, &sl, &E, g->alpha, g->beta, cv, g->beta != 0.0);
            j->undecided[o] = !ref_decide(&j->r->d64[o], &j->r->dout[o], sh, sl, E, g->d);
        }
}

static mmp_status collect_and_recompute(mmp_ref_result *r, const ref_data *d, const unsigned char *und)
{
    size_t total = (size_t)d->m * d->n, cnt = 0;
    for (size_t x = 0; x < total; x++) cnt += und[x];
    if (!cnt) return MMP_STATUS_OK;
    int64_t *idx = malloc(cnt * sizeof(int64_t));
    if (!idx) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot list undecided elements");
    size_t c = 0;
    for (size_t x = 0; x < total; x++)
        if (und[x]) idx[c++] = (int64_t)x;
    mmp_status st = ref_mpfr_list(r, d, idx, (int64_t)cnt);
    free(idx);
    return st;
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
    cert_job j;
    memset(&j, 0, sizeof j);
    j.d = d; j.r = r;
    int ba, bb;
    ref_slicing(&ba, &j.sa, k, ref_format_bits(g->a), o->slices);
    ref_slicing(&bb, &j.sb, k, ref_format_bits(g->b), o->slices);
    j.beta = ba;
    r->slices_a = j.sa; r->slices_b = j.sb; r->slice_bits = j.beta;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    j.qa = malloc(mk * j.sa * sizeof(double));
    j.qb = malloc(kn * j.sb * sizeof(double));
    j.ea = malloc(m * sizeof(int)); j.fb = malloc(n * sizeof(int));
    j.rowbad = malloc(m); j.colbad = malloc(n);
    j.ra = malloc(m * sizeof(double)); j.sa_sum = malloc(m * sizeof(double));
    j.rb = malloc(n * sizeof(double)); j.sb_sum = malloc(n * sizeof(double));
    double *p = malloc(mn * sizeof(double));
    j.h = calloc(mn, sizeof(double)); j.l = calloc(mn, sizeof(double)); j.err = calloc(mn, sizeof(double));
    j.undecided = malloc(mn);
    mmp_status st = MMP_STATUS_OK;
    if (!j.qa || !j.qb || !j.ea || !j.fb || !j.rowbad || !j.colbad || !j.ra || !j.sa_sum || !j.rb ||
        !j.sb_sum || !p || !j.h || !j.l || !j.err || !j.undecided) {
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the certified path's %lldx%lldx%lld buffers",
                     (long long)m, (long long)n, (long long)k);
        goto done;
    }
    double t0 = ref_now();
    ref_parallel(d->threads, m, 16, split_rows, &j);
    ref_parallel(d->threads, n, 16, split_cols, &j);
    r->time.combine_s += ref_now() - t0;
    j.p = p;
    for (int lvl = 2; lvl <= j.sa + j.sb; lvl++)        /* largest weights first */
        for (int s = 1; s <= j.sa; s++) {
            int t = lvl - s;
            if (t < 1 || t > j.sb) continue;
            double t1 = ref_now();
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0,
                        j.qa + (size_t)(s - 1) * mk, (int)m, j.qb + (size_t)(t - 1) * kn, (int)k, 0.0,
                        p, (int)m);
            r->n_gemms++;
            double t2 = ref_now();
            j.pair_exp = j.beta * lvl;
            ref_parallel(d->threads, n, 8, accumulate_cols, &j);
            r->time.gemm_s += t2 - t1;
            r->time.combine_s += ref_now() - t2;
        }
    t0 = ref_now();
    ref_parallel(d->threads, m, 8, decide_rows, &j);
    r->time.combine_s += ref_now() - t0;
    st = collect_and_recompute(r, d, j.undecided);
done:
    free(j.qa); free(j.qb); free(j.ea); free(j.fb); free(j.rowbad); free(j.colbad);
    free(j.ra); free(j.sa_sum); free(j.rb); free(j.sb_sum); free(p);
    free(j.h); free(j.l); free(j.err); free(j.undecided);
    return st;
}
