/* ref_plan.c — the certified paths' plan (ref_plan.h says what it chooses and why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_crt.h"
#include "ref_plan.h"

static int ceil_log2(int64_t k)
{
    int b = 0;
    while (((int64_t)1 << b) < k) b++;
    return b;
}

void ref_slicing_route(int *beta, int *slices_a, int *slices_b, int64_t k, int pa, int pb, int forced, int imma)
{
    int b = imma ? REF_IMMA_BETA : (55 - ceil_log2(k)) / 2;
    if (b < 1) b = 1;
    int sa = forced > 0 ? forced : (pa + 22 + b - 1) / b, sb = forced > 0 ? forced : (pb + 22 + b - 1) / b;
    int cap = imma ? REF_SMAX : REF_SMAX_DGEMM;
    *beta = b;
    *slices_a = sa < 1 ? 1 : (sa > cap ? cap : sa);
    *slices_b = sb < 1 ? 1 : (sb > cap ? cap : sb);
}

void ref_slicing(int *beta, int *slices_a, int *slices_b, int64_t k, int pa, int pb, int forced)
{
    ref_slicing_route(beta, slices_a, slices_b, k, pa, pb, forced, 0);
}

int ref_plan_route(const mmp_gemm *g, const mmp_ref_options *o)
{
    int pa = ref_format_bits(g->a), pb = ref_format_bits(g->b);
    int want = o->imma;
    if (want == 0) {
        const char *e = getenv("MMP_REF_IMMA");
        if (e && *e) want = *e == '0' ? 2 : 1;
    }
    int64_t row = (int64_t)REF_SMAX * ((g->k + 15) / 16 * 16);   /* the int8 planes' leading dimension */
    if (want == 2 || pa > REF_IMMA_MAX_BITS || pb > REF_IMMA_MAX_BITS || row > INT32_MAX) return 0;
    if (want == 1) return 1;
    /* the cost model before the statistics: each route's square of slices, in DGEMMs */
    int beta, sa, sb, ia, ib;
    ref_slicing_route(&beta, &sa, &sb, g->k, pa, pb, o->slices, 0);
    ref_slicing_route(&beta, &ia, &ib, g->k, pa, pb, o->slices, 1);
    return ia * ib * REF_IMMA_W_PAIR < (double)sa * sb;
}

int ref_plan_crt_mode(const mmp_ref_options *o)
{
    int want = o->crt;
    if (want == 0) {
        const char *e = getenv("MMP_REF_CRT");
        want = e && *e == '0' ? 2 : e && *e == '3' ? 3 : 1;
    }
    return want == 1 ? 1 : want == 3 ? 2 : 0;
}

/* The residue route's cost for the square sa x sb in pairs, or 0 where it cannot run (not the
 * int8 route, K' past one GEMM's, more than REF_CRT_MAX moduli). */
static double crt_pairs(const ref_v2_plan *p, int sa, int sb)
{
    if (!p->imma || !p->crt_mode || p->kp > p->kmax) return 0.0;
    int nm = ref_crt_count(sa, sb, p->kp);
    return nm ? nm * REF_CRT_W_MODULUS + REF_CRT_W_EXTRA : 0.0;
}

/* Whether the square sa x sb takes the residue route: where it is cheaper than its pairs (or
 * wanted for every square). */
static int crt_taken(const ref_v2_plan *p, int sa, int sb)
{
    double c = crt_pairs(p, sa, sb);
    return c > 0.0 && (p->crt_mode == 2 || c < (double)sa * sb);
}

/* The square's products in pairs: its pairs, or its moduli on the residue route. */
static double square_pairs(const ref_v2_plan *p, int sa, int sb)
{
    return crt_taken(p, sa, sb) ? crt_pairs(p, sa, sb) : (double)sa * sb;
}

int ref_imma_jobs(ref_imma_job *jobs, int cap, const ref_v2_plan *p)
{
    int nj = 0;
    int64_t per = p->kmax / p->kp;   /* whole pairs in one GEMM; 0: chunks of one pair */
    if (per > REF_SMAX) per = REF_SMAX;
    for (int L = 2; L <= p->levels; L++) {
        int lo = L - p->sb > 1 ? L - p->sb : 1, hi = L - 1 < p->sa ? L - 1 : p->sa;
        for (int s0 = lo; s0 <= hi; s0 += per >= 1 ? (int)per : 1) {
            int s1 = per >= 1 && s0 + (int)per - 1 < hi ? s0 + (int)per - 1 : (per >= 1 ? hi : s0);
            int64_t step = per >= 1 ? p->kp : p->kmax;
            for (int64_t k0 = 0; k0 < p->kp; k0 += step) {
                if (nj < cap) jobs[nj] = (ref_imma_job){L, s0, s1, k0, k0 + step < p->kp ? k0 + step : p->kp};
                nj++;
            }
        }
    }
    return nj;
}

void ref_vstats_pass2_vector(ref_vstats *s, const double *x, int64_t len, int e, int beta)
{
    int64_t lead_cnt[REF_SMAX + 1] = {0};   /* [z]: entries whose first z slices are 0 */
    double lead_max[REF_SMAX + 1] = {0};
    for (int64_t k = 0; k < len; k++) {
        double r = isfinite(x[k]) ? x[k] : 0.0;
        if (r == 0.0) continue;
        int z = ref_zero_slices(r, e, beta);
        if (z > REF_SMAX) z = REF_SMAX;
        if (z > 0) { lead_cnt[z]++; lead_max[z] = fmax(lead_max[z], fabs(r)); }
        for (int q = z + 1; q <= REF_SMAX && r != 0.0; q++) ref_vstats_step(s, &r, q, e, beta);
    }
    int64_t run = 0;   /* slice q is 0 for the entries with z >= q: remainder = the entry */
    double mx = 0.0;
    for (int q = REF_SMAX; q >= 1; q--) {
        run += lead_cnt[q];
        mx = fmax(mx, lead_max[q]);
        s->cnt[q] += (int)run;
        s->rmax[q] = fmax(s->rmax[q], mx);
    }
}

int ref_plan_samples(ref_sample *s, int64_t m, int64_t n)
{
    int64_t mn = m * n, count = mn < REF_NSAMPLE ? mn : REF_NSAMPLE;
    for (int64_t t = 0; t < count; t++) {
        if (count == mn) {   /* every element */
            s[t].i = t / n;
            s[t].j = t % n;
        } else {   /* rows evenly spaced, columns by a stride prime to most n */
            s[t].i = t * m / count;
            s[t].j = (int64_t)(((uint64_t)t * 7919u) % (uint64_t)n);
        }
        s[t].x = 0.0;
    }
    return (int)count;
}

void ref_plan_estimate(ref_sample *s, int count, const double *a64, const double *b64, int64_t k)
{
    for (int t = 0; t < count; t++) {
        const double *a = a64 + s[t].i * k, *b = b64 + s[t].j * k;
        double x = 0.0;
        for (int64_t q = 0; q < k; q++) x += a[q] * b[q];
        s[t].x = isfinite(x) ? x : NAN;
    }
}

/* The bound of one candidate for one element, from the statistics (as ref_drop_bound). */
static double cand_drop(const ref_vstats *a, const ref_vstats *b, int sa, int sb, int levels, double up)
{
    double d = a->rmax[sa] * b->sum * up;
    if (levels >= sa + sb) return d + (a->sum + a->cnt[sa] * a->rmax[sa]) * up * b->rmax[sb];
    for (int s = 1; s <= sa; s++) {
        int u = levels - s < sb ? levels - s : sb;
        if (u < 0) u = 0;
        d += a->ssum[s] * up * b->rmax[u];
    }
    return d;
}

typedef struct {
    int sa, sb, levels;
} cand;

/* The int8 route: the slices sa <= smax_a, sb <= smax_b whose pairs (REF_IMMA_W_PAIR each) and
 * exact remainder terms (REF_SPARSE_W multiply-adds each) cost least, among those the sparse
 * rule admits (sparse = 1); none: every slice, bounded (sparse = 0; the triangles follow). */
static void imma_fewest(ref_v2_plan *p, const ref_vstats *va, const ref_vstats *vb, int64_t m, int64_t n, int64_t k)
{
    int64_t ra[REF_SMAX + 1] = {0}, rb[REF_SMAX + 1] = {0};
    for (int64_t i = 0; i < m; i++)
        for (int s = 1; s <= p->smax_a; s++) ra[s] += va[i].cnt[s];
    for (int64_t j = 0; j < n; j++)
        for (int s = 1; s <= p->smax_b; s++) rb[s] += vb[j].cnt[s];
    double mnk = (double)m * n * k, budget = mnk / 16.0 + 64.0 * (m + n), best_cost = 0;
    int best_a = 0, best_b = 0;
    for (int sa = 1; sa <= p->smax_a; sa++)
        for (int sb = 1; sb <= p->smax_b; sb++) {
            double terms = (double)ra[sa] * n + (double)rb[sb] * m;
            if (terms > budget) continue;
            double cost = square_pairs(p, sa, sb) * REF_IMMA_W_PAIR + REF_SPARSE_W * terms / mnk;
            if (!best_a || cost < best_cost) { best_a = sa; best_b = sb; best_cost = cost; }
        }
    p->sparse = best_a > 0;
    p->sa = best_a ? best_a : p->smax_a;
    p->sb = best_b ? best_b : p->smax_b;
    p->drop_a = p->smax_a - p->sa;
    p->drop_b = p->smax_b - p->sb;
}

int ref_plan_pairs(int sa, int sb, int levels)
{
    int n = 0;
    for (int s = 1; s <= sa; s++)
        for (int t = 1; t <= sb; t++) n += s + t <= levels;
    return n;
}

double ref_plan_list_share(int sa, int sb, int levels, const double *da, const double *db)
{
    double share = 0.0;
    for (int s = 1; s <= sa; s++)
        for (int t = 1; t <= sb; t++)
            if (s + t <= levels) share += da[s - 1] * db[t - 1];
    return share;
}

/* The chance that the decision leaves an element of estimate x open under a bound d: the
 * interval of width 2 d around the approximation holds a binary64 rounding boundary (they lie
 * an ulp of x apart), about 2 d / ulp(x), at most 1 (narrower output formats have boundaries
 * 2^(53 - p) times farther apart: binary64 decides). */
static double open_chance(double d, double x)
{
    int ex = 0;
    frexp(x, &ex);
    double p = 2.0 * d / ldexp(1.0, ex - 53);
    return p < 1.0 ? p : 1.0;
}

/* The CPU's list route (ref_sparse.c), when offered: the fractions of nonzero digits of A's and
 * B's planes 1 .. REF_SMAX_DGEMM (sampled) and one list product's cost in DGEMM multiply-adds. */
typedef struct {
    const double *da, *db;
    double w;
} list_cost;

/* A candidate's slice products in DGEMMs: its pairs at w_pair each, or its expected list
 * products where the lists cost less (the route the CPU path then takes, ref_sparse_wanted). */
static double cand_cost(const ref_v2_plan *p, const cand *c, double w_pair, const list_cost *lc)
{
    double pairs = (c->levels >= c->sa + c->sb ? square_pairs(p, c->sa, c->sb)
                                               : ref_plan_pairs(c->sa, c->sb, c->levels)) * w_pair;
    if (!lc) return pairs;
    double lists = ref_plan_list_share(c->sa, c->sb, c->levels, lc->da, lc->db) * lc->w;
    return lists < pairs ? lists : pairs;
}

/* Bound mode: the square against the triangles, on the samples; with the residue route also
 * the squares of 1 .. REF_SMAX slices (only those when it is wanted for every square). */
static void choose_levels(ref_v2_plan *p, const ref_vstats *va, const ref_vstats *vb, const ref_sample *smp, int ns,
                          double w_dot, double w_pair, int tri_max, int64_t k, const list_cost *lc)
{
    cand c[REF_TRI_MAX + REF_SMAX];
    int nc = 0;
    c[nc++] = (cand){p->sa, p->sb, p->sa + p->sb};
    for (int L = 3; L <= tri_max && p->crt_mode != 2; L++) c[nc++] = (cand){L - 1, L - 1, L};
    for (int S = 1; S <= REF_SMAX; S++)
        if (crt_pairs(p, S, S) > 0.0) c[nc++] = (cand){S, S, 2 * S};
    double open[REF_TRI_MAX + REF_SMAX] = {0};
    int valid = 0;
    double up = ref_plan_up(k);
    for (int t = 0; t < ns; t++) {
        const ref_vstats *a = &va[smp[t].i], *b = &vb[smp[t].j];
        double x = fabs(smp[t].x);
        if (a->n_bad || b->n_bad || !(x > 0.0) || !isfinite(x)) continue;   /* decided another way, or not by a bound */
        valid++;
        for (int q = 0; q < nc; q++) open[q] += open_chance(cand_drop(a, b, c[q].sa, c[q].sb, c[q].levels, up), x);
    }
    if (valid == 0) return;
    int best = 0;
    double best_cost = 0;
    for (int q = 0; q < nc; q++) {
        double cost = cand_cost(p, &c[q], w_pair, lc) + w_dot * open[q] / valid;
        if (q == 0 || cost < best_cost) { best = q; best_cost = cost; }
    }
    if (best == 0) return;
    p->sa = c[best].sa; p->sb = c[best].sb; p->levels = c[best].levels;
    p->drop_a = p->drop_b = 0;
}

static void plan_make(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                      const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, int imma, const list_cost *lc);

void ref_plan_make(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                   const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot)
{
    plan_make(p, g, o, va, vb, smp, ns, w_dot, 0, NULL);
}

void ref_plan_make_lists(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                         const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, const double *da,
                         const double *db, double w_list)
{
    list_cost lc = {da, db, w_list};
    plan_make(p, g, o, va, vb, smp, ns, w_dot, 0, da && db ? &lc : NULL);
}

void ref_plan_make_route(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                         const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, int imma)
{
    plan_make(p, g, o, va, vb, smp, ns, w_dot, imma, NULL);
}

static void plan_make(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                      const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot, int imma, const list_cost *lc)
{
    int64_t m = g->m, n = g->n, k = g->k;
    memset(p, 0, sizeof *p);
    ref_slicing_route(&p->beta, &p->smax_a, &p->smax_b, k, ref_format_bits(g->a), ref_format_bits(g->b), o->slices,
                      imma);
    p->imma = imma;
    p->kp = (k + 15) / 16 * 16;
    p->kmax = REF_IMMA_KMAX;
    const char *e = getenv("MMP_REF_IMMA_KMAX");
    if (e && atoll(e) > 0 && atoll(e) < REF_IMMA_KMAX) p->kmax = atoll(e) < 16 ? 16 : atoll(e) / 16 * 16;
    p->crt_mode = imma ? ref_plan_crt_mode(o) : 0;
    int64_t full_a = 0, last_a = 0, full_b = 0, last_b = 0;
    for (int64_t i = 0; i < m; i++) { full_a += va[i].cnt[p->smax_a]; last_a += va[i].cnt[p->smax_a - 1]; }
    for (int64_t j = 0; j < n; j++) { full_b += vb[j].cnt[p->smax_b]; last_b += vb[j].cnt[p->smax_b - 1]; }
    /* version 1's rules: one slice fewer when at most 1/64 of the entries keep a remainder;
     * exact remainder terms when they cost at most ~ 1/16 of a GEMM in TwoProds */
    p->drop_a = o->slices <= 0 && p->smax_a > 1 && last_a <= (int64_t)((size_t)m * k / 64);
    p->drop_b = o->slices <= 0 && p->smax_b > 1 && last_b <= (int64_t)((size_t)k * n / 64);
    p->sa = p->smax_a - p->drop_a;
    p->sb = p->smax_b - p->drop_b;
    p->nnz_a = p->drop_a ? last_a : full_a;
    p->nnz_b = p->drop_b ? last_b : full_b;
    p->sparse = (double)p->nnz_a * n + (double)p->nnz_b * m <= (double)m * n * k / 16.0 + 64.0 * (m + n);
    if (imma && o->slices <= 0) imma_fewest(p, va, vb, m, n, k);
    p->levels = p->sa + p->sb;
    if (o->levels > 0) {   /* forced (tests): a triangle in bound mode */
        int cap = imma ? REF_SMAX : REF_SMAX_DGEMM;
        if (o->slices <= 0) p->sa = p->sb = o->levels - 1 < cap ? o->levels - 1 : cap;
        p->levels = o->levels < p->sa + p->sb ? o->levels : p->sa + p->sb;
        if (p->levels < 2) p->levels = 2;
        p->drop_a = p->drop_b = 0;
        if (ref_plan_triangle(p)) p->sparse = 0;
    } else if (!p->sparse && o->slices <= 0 && smp && ns > 0) {
        if (ref_format_bits(g->a) > 26 || ref_format_bits(g->b) > 26) w_dot *= REF_W_DOT_TWOPROD;
        choose_levels(p, va, vb, smp, ns, w_dot, imma ? REF_IMMA_W_PAIR : 1.0, imma ? REF_TRI_MAX : REF_TRI_MAX_DGEMM,
                      k, lc);
    }
    p->crt = !ref_plan_triangle(p) && crt_taken(p, p->sa, p->sb);
    p->nnz_a = p->nnz_b = 0;   /* the remainders after the slices used */
    for (int64_t i = 0; i < m; i++) p->nnz_a += va[i].cnt[p->sa];
    for (int64_t j = 0; j < n; j++) p->nnz_b += vb[j].cnt[p->sb];
}

void ref_plan_vectors(double *rmax_s, double *sum_up, double *ss, double *rl, const ref_vstats *v, int64_t count,
                      int S, int64_t k)
{
    double up = ref_plan_up(k);
    for (int64_t x = 0; x < count; x++) ref_plan_vector_one(rmax_s, sum_up, ss, rl, v, x, S, up);
}

int ref_plan_triangle(const ref_v2_plan *p) { return p->levels < p->sa + p->sb; }
