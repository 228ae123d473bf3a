/* reference/ref_plan.h — the certified paths' plan: how many Ozaki slices of A and B, which slice
 * pairs (levels), and whether the remainders are added exactly (sparse) or bounded; and the
 * bound of what a plan drops. Shared by the CPU path (ref_certified.c), the device paths
 * (ref_cuda.cu, ref_cuda2.cu) and the host model of version 2 (ref_v2_host.c).
 *
 * Slice pairs. The exact terms are P_st = Q^A_s Q^B_t for s <= Sa, t <= Sb and s + t <= L
 * (L = levels; L = Sa + Sb is every pair, the square). With R^A_s = A - sum_{q <= s} A_q
 * (A_q: slice q as values, ref_certified.c step 2) and likewise R^B, the dropped part is exactly
 *     AB - sum_{s + t <= L} A_s B_t = sum_{s <= Sa} A_s R^B_{min(Sb, L - s)} + R^A_Sa B,
 * so |dropped_ij| <= sum_s SS^A_s(i) MR^B_{min(Sb, L-s)}(j) + MR^A_Sa(i) SB(j), where SS^A_s(i)
 * = sum_k |A_s(i,k)| and SB(j) = sum_k |b_kj| (rounded up), MR_u = max_k |R_u| (MR_0 = max |b|).
 * For the square the tighter MR^A_Sa SB + SA' MR^B_Sb (ref_certified.c step 5) is used, SA' =
 * SA + n^A MR^A_Sa >= sum_k |a_ik - R^A_Sa(i,k)| (n^A: the row's nonzero remainders; digits
 * round to nearest, so a slice sum can exceed |a| by the remainder).
 * A triangle (L = S + 1, S slices each: L (L - 1) / 2 pairs) keeps every term down to about
 * 2^(-beta (L - 1)) of the largest: data whose entries span many binades (`wide`) need a few
 * more slices, not all their pairs.
 *
 * Choice. Version 1's rules give the square and its mode (one slice fewer when at most 1/64 of
 * the entries keep a remainder; sparse when the exact remainder terms cost under ~1/16 of a
 * GEMM). In bound mode the plan then weighs the square against the triangles of 3 levels up on
 * a fixed sample of elements: for each candidate, the expected share of elements the decision
 * leaves open (per sampled element, the chance 2 bound / ulp that a binary64 rounding boundary
 * lies within the bound of a plain double estimate of the element), and the cost = pairs +
 * w_dot open, w_dot being the dot stage's cost for all elements in DGEMMs. The choice only decides speed: every plan's bound is rigorous, and what
 * it leaves open goes to the dot stage, the exact evaluator and MPFR.
 *
 * Usage: ref_vstats_* per row of A / column of B (two passes: scale, then slices), then
 * ref_plan_samples + estimates, ref_plan_make, ref_plan_vectors for the bound's arrays, and
 * ref_drop_bound per element.
 *
 * Routes (device path version 2 and its host model). The slice products are exact either way:
 *   DGEMM  binary64 slices: balanced digits of radix 2^beta (ref_split), |q| <= 2^(beta-1), so
 *          2 beta + log2(K) <= 55 (ref_slicing) keeps every partial sum of K products below
 *          2^53; one cublasDgemm per pair.
 *   IMMA   int8 slices: digits of radix 2^REF_IMMA_BETA = 2^8 in [-128, 127] (ref_digit's
 *          range), an int8 each. A row of A holds its slices one after the other along k (each
 *          padded with zeros to kp, a multiple of 16: the int8 tensor cores' alignment), a
 *          column of B holds its slices in reverse order, so the pairs (s, L - s), s = s0..s1,
 *          of one level L are ONE GEMM over K' = (s1 - s0 + 1) kp (ref_imma_job). Each int32 sum
 *          of K' products of |q| <= 128 is exact when K' 128^2 <= 2^31 - 1 (K' <=
 *          REF_IMMA_KMAX); longer K is cut into chunks of one pair each. A level's int32 planes
 *          add exactly in int64: the level's sum is at most (pairs <= REF_SMAX) K 128^2 < 2^49
 *          (K < 2^31), a double, and times 2^(E_i + F_j - 8 L) it is the exact term (steps 4, 6
 *          of ref_certified.c, as the DGEMM route's P_st).
 *          More slices are needed at 8 bits; the plan, the bound and everything after the
 *          products are the same for any beta. Cost model (ref_plan_route, ref_plan_make): a
 *          pair costs REF_IMMA_W_PAIR DGEMMs; the sparse remainder terms REF_SPARSE_W DGEMM
 *          multiply-adds each.
 *   CRT    on the int8 route, a square of slices (every pair s <= Sa, t <= Sb) by residues
 *          (ref_crt.h): each entry's slices as one integer, its residues modulo N pairwise
 *          coprime moduli <= 256 as int8 planes, one int8 GEMM per modulus, and the square's
 *          exact value back by the Chinese remainder theorem. N grows with Sa + Sb (8 (Sa + Sb)
 *          + log2 K bits), the pairs with Sa Sb: 10 x 10 slices take 23 GEMMs, not 100. With
 *          it the plan also weighs squares of up to REF_SMAX slices against the triangles.
 */
#ifndef MMAPROBE_REF_PLAN_H
#define MMAPROBE_REF_PLAN_H

#include "ref_internal.h"

#define REF_SMAX 12       /* slices per operand at most (the int8 route's triangles) */
/* triangles of 3 .. L levels are weighed (S = L - 1 <= REF_SMAX): up to REF_TRI_MAX on the
 * int8 route (8-bit slices: 12 of them reach beyond 4 binary64 slices of 22 bits, which wide
 * data need), up to REF_TRI_MAX_DGEMM on the DGEMM route and the CPU path */
#define REF_TRI_MAX 13
#define REF_TRI_MAX_DGEMM 9
#define REF_SMAX_DGEMM 8  /* binary64 slices per operand at most */
#define REF_NSAMPLE 2048  /* sampled elements for the choice */
/* The dot stage's cost for every element in DGEMMs (w_dot): on the device (ref_cuda2.cu, and
 * its host model), and on host threads (ref_certified.c). */
#define REF_DEVICE_W_DOT 40.0
#define REF_HOST_W_DOT 12.0
/* A product of two nonzero digits from the CPU's lists (ref_sparse.c) in DGEMM multiply-adds: a
 * scalar scattered add into a row held in L1 against a vectorised DGEMM's multiply-add
 * (bench_reference with MMP_REF_LISTS=0 and =1 on the same operands measures it). */
#define REF_LIST_W 24.0
/* ... times this when a product is not a double (fp64, int32 inputs): TwoProd and two TwoSums
 * per product, no vector path (bench_reference, fp64 wide data: ~300 DGEMMs on host threads) */
#define REF_W_DOT_TWOPROD 25.0
/* The int8 route (see Routes above). */
#define REF_IMMA_BETA REF_INT8_BETA
#define REF_IMMA_KMAX 131056   /* the largest multiple of 16 with K' 128^2 <= 2^31 - 1 */
/* One int8 pair GEMM and its read in the accumulation, in DGEMMs of the same size: the H200's
 * int8 tensor-core peak is about 30 times its binary64 one; cuBLAS reaches a smaller share of
 * it than of the binary64 peak, and each pair's int32 plane is read once more. */
#define REF_IMMA_W_PAIR (1.0 / 16.0)
/* One exact remainder term of the sparse mode in DGEMM multiply-adds: each element of D reads
 * the other operand at its row's (column's) remainder positions, scattered, one native load, a
 * TwoProd and two TwoSums at the non-tensor binary64 rate; the finish kernel on the device
 * spends a few hundred DGEMM multiply-adds' time on each. */
#define REF_SPARSE_W 256.0
/* The int8 route takes formats whose products are doubles (at most 26 significand bits, as
 * ref_dot_flags' exact products): binary64 and int32 data would need more than 8 int8 slices
 * just for their significands, where the DGEMM route needs 3. */
#define REF_IMMA_MAX_BITS 26
/* int32 planes accumulated per pass: every triangle's levels in one (REF_TRI_MAX - 1 jobs when
 * K' stays below REF_IMMA_KMAX), so the state is written once, never read back */
#define REF_IMMA_BATCH 12
/* The residue route (ref_crt.h) for a square of int8 slices, in pairs' GEMMs: per modulus its
 * GEMM, the reduction of its int32 plane and its residues of both operands, and a fixed part
 * (the reconstruction). Measured on the H200 at 8192^3 (results/h200/crt/): 10 moduli cost
 * about 7 ms and 23 about 14 ms more than their GEMMs, against 0.62 ms for a pair's GEMM. */
#define REF_CRT_W_MODULUS 2.0
#define REF_CRT_W_EXTRA 2.0

/* Per vector (a row of A, a column of B): what the plan and the bound read. */
typedef struct ref_vstats {
    int e;                          /* 2^e > max finite |v| (0 for an all-zero vector) */
    int n_bad;                      /* NaN or Inf entries */
    double sum;                     /* sum of finite |v| (not rounded up) */
    double ssum[REF_SMAX + 1];      /* [s], s >= 1: sum of |slice s| as values */
    double rmax[REF_SMAX + 1];      /* [0]: max finite |v|; [s]: max |remainder after s slices| */
    int cnt[REF_SMAX + 1];          /* [s]: nonzero remainders after s slices */
} ref_vstats;

REF_HD void ref_vstats_zero(ref_vstats *s)
{
    s->e = 0; s->n_bad = 0; s->sum = 0.0;
    for (int q = 0; q <= REF_SMAX; q++) { s->ssum[q] = 0.0; s->rmax[q] = 0.0; s->cnt[q] = 0; }
}

/* Pass 1, per entry: the maximum, the non-finite count, the sum. */
REF_HD void ref_vstats_pass1(ref_vstats *s, double v)
{
    double a = fabs(v);
    if (!isfinite(a)) { s->n_bad++; return; }
    s->rmax[0] = fmax(s->rmax[0], a);
    s->sum += a;
}

/* Between the passes (after merging pass 1 over the vector): the scale exponent
 * (ref_scale_exp: the first digit of every entry fits). */
REF_HD void ref_vstats_scale(ref_vstats *s, int beta)
{
    s->e = ref_scale_exp(s->rmax[0], beta);
}

/* Slice q of pass 2 for the remainder *r (ref_split's step): the fields of slice q, *r updated. */
REF_HD void ref_vstats_step(ref_vstats *s, double *r, int q, int e, int beta)
{
    double qs = ref_split_step(r, q, 0, e, beta);
    if (qs != 0.0) s->ssum[q] += fabs(ref_scale(qs, e - beta * q));   /* the piece it took off */
    s->cnt[q] += *r != 0.0;
    s->rmax[q] = fmax(s->rmax[q], fabs(*r));
}

/* Pass 2, per entry: slices 1 .. REF_SMAX with the same exact steps as ref_split. e and beta
 * as the vector's; only the slice fields are touched (merge them separately). Once the
 * remainder is 0 the later slices add nothing (a zero count, a zero maximum): it stops. */
REF_HD void ref_vstats_pass2(ref_vstats *s, double v, int e, int beta)
{
    double r = isfinite(v) ? v : 0.0;
    for (int q = 1; q <= REF_SMAX && r != 0.0; q++) ref_vstats_step(s, &r, q, e, beta);
}

/* Pass 2 over a whole vector of len entries (host): the same fields as ref_vstats_pass2 entry
 * by entry, bit for bit, faster where entries lie far below the vector's maximum (wide data):
 * the slices an entry certainly leaves at 0 (ref_zero_slices) only count it and raise the
 * remainder's maximum, so they are gathered per length and added once at the end. */
void ref_vstats_pass2_vector(ref_vstats *s, const double *x, int64_t len, int e, int beta);

/* t's fields into s (partial statistics of disjoint entries of one vector). */
REF_HD void ref_vstats_merge(ref_vstats *s, const ref_vstats *t)
{
    s->n_bad += t->n_bad;
    s->sum += t->sum;
    for (int q = 0; q <= REF_SMAX; q++) {
        s->ssum[q] += t->ssum[q];
        s->rmax[q] = fmax(s->rmax[q], t->rmax[q]);
        s->cnt[q] += t->cnt[q];
    }
}

/* What the bound of the dropped part reads (arrays from ref_plan_vectors). */
typedef struct ref_drop_view {
    int sa, sb, levels;
    const double *ra_max, *a_sum;   /* per row of A: MR^A_Sa, SA' (rounded up) */
    const double *rb_max, *b_sum;   /* per column of B: MR^B_Sb, SB' (>= SB) */
    const double *a_ss;             /* triangles: SS^A_s(i) at a_ss[i Sa + s - 1] (rounded up) */
    const double *b_rl;             /* triangles: MR^B_u(j) at b_rl[j (Sb + 1) + u], u = 0..Sb */
} ref_drop_view;

/* The bound of |dropped_ij|, rounded up (at most Sa + 1 products and sums of nonnegative
 * terms: relative 1 + 2^-48, and 2^-1070 for their underflows); 0 when nothing is dropped. */
REF_HD double ref_drop_bound(const ref_drop_view *v, int64_t i, int64_t j)
{
    double d = v->ra_max[i] * v->b_sum[j];
    if (v->levels >= v->sa + v->sb) {
        d += v->a_sum[i] * v->rb_max[j];
    } else {
        for (int s = 1; s <= v->sa; s++) {
            int u = v->levels - s < v->sb ? v->levels - s : v->sb;
            if (u < 0) u = 0;   /* no pair with slice s: A_s B is dropped whole */
            d += v->a_ss[i * v->sa + s - 1] * v->b_rl[j * (v->sb + 1) + u];
        }
    }
    return d == 0.0 ? 0.0 : d * (1.0 + 0x1p-48) + 0x1p-1070;
}

/* The plan (ref_plan.c). */
typedef struct ref_v2_plan {
    int beta, smax_a, smax_b, sa, sb, drop_a, drop_b, sparse;
    int levels;                     /* pairs s + t <= levels (sa + sb: every pair) */
    int64_t nnz_a, nnz_b;           /* sparse: the remainders after sa, sb slices */
    int imma;                       /* the int8 route (beta = REF_IMMA_BETA) */
    int64_t kp, kmax;               /* int8: a slice's padded length; the longest K' of one GEMM */
    int crt_mode;                   /* int8: the residue route 0 off, 1 by cost, 2 for every square */
    int crt;                        /* int8: the square's products by residues (ref_crt.h) */
} ref_v2_plan;

/* One int8 GEMM of the plan: the pairs (s, level - s) for s = s0..s1, over k0..k1 of each
 * slice (0..kp when s1 > s0). Its int32 plane is sum_s Q^A_s Q^B_(level - s) over that range. */
typedef struct ref_imma_job {
    int level, s0, s1;
    int64_t k0, k1;
} ref_imma_job;

/* Where a job's operands start in the slice planes (row i of A at qa + i sa kp, column j of B
 * at qb + j sb kp, B's slices in reverse order) and its K'. */
REF_HD void ref_imma_job_span(int64_t *off_a, int64_t *off_b, int64_t *kk, const ref_imma_job *jb, int sb,
                              int64_t kp)
{
    *off_a = (int64_t)(jb->s0 - 1) * kp + jb->k0;
    *off_b = (int64_t)(sb - (jb->level - jb->s0)) * kp + jb->k0;
    *kk = (int64_t)(jb->s1 - jb->s0) * kp + (jb->k1 - jb->k0);
}

/* The int8 planes' padding of M and N (rows of A, columns of B, zeros) to a multiple of 4, and
 * the int32 planes' leading dimension: cuBLAS's integer tensor-core kernels want it. */
REF_HD int64_t ref_imma_pad4(int64_t x) { return (x + 3) / 4 * 4; }

/* The position of slice s (1..S) along a vector of S kp int8 entries (B: reverse order). */
REF_HD int64_t ref_imma_slot(int s, int S, int64_t kp, int reversed)
{
    return (int64_t)(reversed ? S - s : s - 1) * kp;
}

/* A sampled element and a plain double estimate of its (AB)_ij (NaN: skip it). */
typedef struct ref_sample {
    int64_t i, j;
    double x;
} ref_sample;

#ifdef __cplusplus
extern "C" {
#endif
/* The same statistics (both passes, the scale exponent from the maximum) of `rows` contiguous
 * vectors of length len on the device (ref_cuda2.cu's v2_stats_kernel), host in and out: for
 * tests. ref_nocuda.c: MMP_STATUS_UNSUPPORTED. */
mmp_status ref_cuda2_vstats(ref_vstats *out, const double *x, int64_t rows, int64_t len, int beta);

/* The sampled positions (fixed for m, n): returns how many (at most REF_NSAMPLE). */
int ref_plan_samples(ref_sample *s, int64_t m, int64_t n);
/* Plain double estimates for the samples from a64 (row-major M x K) and b64 (column-major). */
void ref_plan_estimate(ref_sample *s, int count, const double *a64, const double *b64, int64_t k);
/* The plan from the statistics (va: m rows of A, vb: n columns of B), the samples (may be
 * NULL/0: the square) and w_dot (see the header). o->slices, o->levels force it. */
void ref_plan_make(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                   const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot);
/* ref_plan_make where the CPU's list route (ref_sparse.c) may make the slice products: da[s-1],
 * db[t-1] are the sampled fractions of nonzero digits in planes 1 .. REF_SMAX_DGEMM of A and B,
 * a list product costs w_list DGEMM multiply-adds, and each candidate's products cost the
 * cheaper of its DGEMMs and its expected list products (NULL da or db: ref_plan_make). */
void ref_plan_make_lists(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                         const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, const double *da,
                         const double *db, double w_list);
/* The bound's per-vector arrays for S slices (ss: count x S or NULL; rl: count x (S + 1) or
 * NULL): rmax_s = MR_S, sum_up = SA' (SA + n MR_S) rounded up, ss = SS_s rounded up, rl = MR_u.
 * ref_plan_vector_one: vector x of them (the device's kernel runs it too); up = ref_plan_up(k),
 * which rounds up sums of K nonnegative roundings in any order (ref_certified.c step 5). */
REF_HD double ref_plan_up(int64_t k) { return 1.0 + 2.0 * (double)k * 0x1p-53 + 0x1p-50; }
REF_HD void ref_plan_vector_one(double *rmax_s, double *sum_up, double *ss, double *rl, const ref_vstats *v,
                                int64_t x, int S, double up)
{
    rmax_s[x] = v[x].rmax[S];
    sum_up[x] = (v[x].sum + v[x].cnt[S] * v[x].rmax[S]) * up;
    if (ss)
        for (int s = 1; s <= S; s++) ss[x * S + s - 1] = v[x].ssum[s] * up;
    if (rl)
        for (int u = 0; u <= S; u++) rl[x * (S + 1) + u] = v[x].rmax[u];
}
void ref_plan_vectors(double *rmax_s, double *sum_up, double *ss, double *rl, const ref_vstats *v, int64_t count,
                      int S, int64_t k);
/* The slice pairs s <= sa, t <= sb, s + t <= levels; and their expected products of nonzero
 * digits as a share of M N K, from the fractions of nonzero digits da[s-1], db[t-1] of the
 * planes (independent positions assumed: the CPU's list route, ref_sparse.c). */
int ref_plan_pairs(int sa, int sb, int levels);
double ref_plan_list_share(int sa, int sb, int levels, const double *da, const double *db);
/* Whether the plan keeps only some pairs (the bound then needs a_ss and b_rl). */
int ref_plan_triangle(const ref_v2_plan *p);
/* The route of version 2 for g: 1 = int8 (o->imma, MMP_REF_IMMA, else the cost model), 0 =
 * DGEMM. The int8 route needs formats of at most REF_IMMA_MAX_BITS significand bits. */
int ref_plan_route(const mmp_gemm *g, const mmp_ref_options *o);
/* The residue route's mode on the int8 route (ref_v2_plan.crt_mode: 0 never, 1 by cost, 2 every
 * square) from o->crt (1 by cost, 2 never, 3 every square), else MMP_REF_CRT (0 never, 3 every
 * square, anything else by cost), else by cost. */
int ref_plan_crt_mode(const mmp_ref_options *o);
/* ref_plan_make for a route (imma: the int8 slicing, its pair weight and the fewest slices whose
 * exact remainders cost least). ref_plan_make is the DGEMM route. MMP_REF_IMMA_KMAX (tests)
 * lowers the longest K' of one int8 GEMM. On the int8 route the squares may take the residue
 * route (ref_crt.h) as ref_plan_crt_mode says: by cost, where one GEMM per modulus is fewer
 * than one per pair (squares of up to REF_SMAX slices then compete with the triangles), or
 * for every square (the triangles left out). */
void ref_plan_make_route(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                         const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, int imma);
/* The int8 GEMMs of the plan, largest weights first (levels ascending), at most cap of them;
 * returns how many there are (call with cap 0 to count). */
int ref_imma_jobs(ref_imma_job *jobs, int cap, const ref_v2_plan *p);
#ifdef __cplusplus
}
#endif

#endif
