/* ref_plan.c — the certified paths' plan (ref_plan.h says what it chooses and why). */
#include <math.h>
#include <string.h>

#include "ref_plan.h"

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

/* Sums of K nonnegative roundings, in any order, rounded up (ref_certified.c step 5). */
static double up_factor(int64_t k) { return 1.0 + 2.0 * (double)k * 0x1p-53 + 0x1p-50; }

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
    if (levels >= sa + sb) return d + a->sum * up * b->rmax[sb];
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

static int cand_pairs(const cand *c)
{
    int n = 0;
    for (int s = 1; s <= c->sa; s++)
        for (int t = 1; t <= c->sb; t++) n += s + t <= c->levels;
    return n;
}

/* Bound mode: the square against the triangles, on the samples. */
static void choose_levels(ref_v2_plan *p, const ref_vstats *va, const ref_vstats *vb, const ref_sample *smp, int ns,
                          double w_dot, int64_t k)
{
    cand c[REF_TRI_MAX];
    int nc = 0;
    c[nc++] = (cand){p->sa, p->sb, p->sa + p->sb};
    for (int L = 3; L <= REF_TRI_MAX; L++) c[nc++] = (cand){L - 1, L - 1, L};
    int ok[REF_TRI_MAX] = {0}, valid = 0;
    double up = up_factor(k);
    for (int t = 0; t < ns; t++) {
        const ref_vstats *a = &va[smp[t].i], *b = &vb[smp[t].j];
        double x = fabs(smp[t].x);
        if (a->n_bad || b->n_bad || !(x > 0.0) || !isfinite(x)) continue;   /* decided another way, or not by a bound */
        valid++;
        for (int q = 0; q < nc; q++) ok[q] += cand_drop(a, b, c[q].sa, c[q].sb, c[q].levels, up) <= x * 0x1p-60;
    }
    if (valid == 0) return;
    int best = 0;
    double best_cost = 0;
    for (int q = 0; q < nc; q++) {
        double cost = cand_pairs(&c[q]) + w_dot * (1.0 - (double)ok[q] / valid);
        if (q == 0 || cost < best_cost) { best = q; best_cost = cost; }
    }
    if (best == 0) return;
    p->sa = c[best].sa; p->sb = c[best].sb; p->levels = c[best].levels;
    p->drop_a = p->drop_b = 0;
}

void ref_plan_make(ref_v2_plan *p, const mmp_gemm *g, const mmp_ref_options *o, const ref_vstats *va,
                   const ref_vstats *vb, const ref_sample *smp, int ns, double w_dot)
{
    int64_t m = g->m, n = g->n, k = g->k;
    memset(p, 0, sizeof *p);
    ref_slicing(&p->beta, &p->smax_a, &p->smax_b, k, ref_format_bits(g->a), ref_format_bits(g->b), o->slices);
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
    p->levels = p->sa + p->sb;
    if (o->levels > 0) {   /* forced (tests): a triangle in bound mode */
        if (o->slices <= 0) p->sa = p->sb = o->levels - 1 < REF_SMAX ? o->levels - 1 : REF_SMAX;
        p->levels = o->levels < p->sa + p->sb ? o->levels : p->sa + p->sb;
        if (p->levels < 2) p->levels = 2;
        p->drop_a = p->drop_b = 0;
        if (ref_plan_triangle(p)) p->sparse = 0;
    } else if (!p->sparse && o->slices <= 0 && smp && ns > 0) {
        if (ref_format_bits(g->a) > 26 || ref_format_bits(g->b) > 26) w_dot *= REF_W_DOT_TWOPROD;
        choose_levels(p, va, vb, smp, ns, w_dot, k);
    }
    p->nnz_a = p->nnz_b = 0;   /* the remainders after the slices used */
    for (int64_t i = 0; i < m; i++) p->nnz_a += va[i].cnt[p->sa];
    for (int64_t j = 0; j < n; j++) p->nnz_b += vb[j].cnt[p->sb];
}

void ref_plan_vectors(double *rmax_s, double *sum_up, double *ss, double *rl, const ref_vstats *v, int64_t count,
                      int S, int64_t k)
{
    double up = up_factor(k);
    for (int64_t x = 0; x < count; x++) {
        rmax_s[x] = v[x].rmax[S];
        sum_up[x] = v[x].sum * up;
        if (ss)
            for (int s = 1; s <= S; s++) ss[x * S + s - 1] = v[x].ssum[s] * up;
        if (rl)
            for (int u = 0; u <= S; u++) rl[x * (S + 1) + u] = v[x].rmax[u];
    }
}

int ref_plan_triangle(const ref_v2_plan *p) { return p->levels < p->sa + p->sb; }
