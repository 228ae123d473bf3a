/* suites/ref_testgen.h — random GEMM problems for the reference suites (check_reference.c,
 * check_gpu_reference.c): formats, layouts, padded leading dimensions, alpha/beta, and the
 * kinds random, wide-exponent (subnormals included), cancelling and special values. */
#ifndef MMAPROBE_REF_TESTGEN_H
#define MMAPROBE_REF_TESTGEN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/gemm.h"

static uint64_t rs;
static uint64_t rnd64(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return rs;
}
static double urand(void) { return (double)(rnd64() >> 11) * 0x1p-53; }   /* [0, 1) */

typedef enum { GEN_RANDOM, GEN_WIDE, GEN_CANCEL, GEN_SPECIAL } gen_kind;

typedef struct {
    mmp_gemm g;
    void *a, *b, *c;
} prob;

/* A value of format f: uniform in [-1, 1), or (wide) with a random exponent over the
 * format's range, subnormals included. */
static double value_for(mmp_format f, gen_kind kind)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    double x;
    if (!fi->is_float) {
        double span = fi->max_finite - fi->lowest + 1;
        x = fi->lowest + floor(urand() * span);
        return x > fi->max_finite ? fi->max_finite : x;
    }
    if (kind == GEN_WIDE) {
        int lo = fi->emin - fi->precision, hi = fi->emax;
        if (f == MMP_FORMAT_FP64) { lo = -1074; hi = 480; }   /* products and sums stay finite */
        if (f == MMP_FORMAT_FP32) { hi = 60; }
        int e = lo + (int)(urand() * (hi - lo + 1));
        x = ldexp(0.5 + 0.5 * urand(), e);
    } else {
        x = urand();
    }
    if (rnd64() & 1) x = -x;
    return mmp_format_round(x, f, MMP_ROUND_NEAREST_EVEN, 1);
}

static void *alloc_fill(mmp_format f, mmp_layout l, int64_t ld, int64_t rows, int64_t cols, gen_kind kind)
{
    size_t span = mmp_gemm_span(l, ld, rows, cols);
    size_t bytes = mmp_format_bytes(f, span) + 16;
    unsigned char *p = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)rnd64();   /* padding = garbage */
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            mmp_format_store(p, mmp_gemm_index(l, ld, i, j), value_for(f, kind), f, MMP_ROUND_NEAREST_EVEN, 1);
    return p;
}

static void prob_make(prob *p, mmp_format fa, mmp_format fb, mmp_format fc, mmp_format fd, int64_t m,
                      int64_t n, int64_t k, int layouts, int pad, double alpha, double beta, gen_kind kind)
{
    mmp_gemm_init(&p->g, fa, fb, fc, fd, m, n, k);
    p->g.la = (layouts & 1) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
    p->g.lb = (layouts & 2) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
    p->g.lc = (layouts & 4) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
    p->g.lda = (p->g.la == MMP_LAYOUT_ROW ? k : m) + 2 * pad;
    p->g.ldb = (p->g.lb == MMP_LAYOUT_ROW ? n : k) + 2 * pad;
    p->g.ldc = (p->g.lc == MMP_LAYOUT_ROW ? n : m) + 2 * pad;
    p->g.alpha = alpha; p->g.beta = beta;
    p->a = alloc_fill(fa, p->g.la, p->g.lda, m, k, kind);
    p->b = alloc_fill(fb, p->g.lb, p->g.ldb, k, n, kind);
    p->c = beta != 0.0 ? alloc_fill(fc, p->g.lc, p->g.ldc, m, n, kind) : NULL;
    if (kind == GEN_CANCEL) {
        /* a_i,2t+1 = a_i,2t and b_2t+1,j = -b_2t,j (sometimes nudged by one ulp-ish), so most
         * products cancel in pairs: exact zeros and tiny residues. */
        for (int64_t t = 0; t + 1 < k; t += 2) {
            for (int64_t i = 0; i < m; i++) {
                double v = mmp_format_load(p->a, mmp_gemm_index(p->g.la, p->g.lda, i, t), fa);
                mmp_format_store(p->a, mmp_gemm_index(p->g.la, p->g.lda, i, t + 1), v, fa, MMP_ROUND_NEAREST_EVEN, 1);
            }
            for (int64_t j = 0; j < n; j++) {
                double v = mmp_format_load(p->b, mmp_gemm_index(p->g.lb, p->g.ldb, t, j), fb);
                double w = (rnd64() % 4 == 0) ? -v * (1 + 0x1p-7) : -v;
                mmp_format_store(p->b, mmp_gemm_index(p->g.lb, p->g.ldb, t + 1, j), w, fb, MMP_ROUND_NEAREST_EVEN, 1);
            }
        }
    }
    if (kind == GEN_SPECIAL) {
        const mmp_format_info *ia = mmp_format_get_info(fa), *ib = mmp_format_get_info(fb);
        double sa[] = {NAN, INFINITY, -INFINITY}, sb[] = {INFINITY, -INFINITY, 0.0};
        for (int t = 0; t < 3; t++) {
            int64_t i = (int64_t)(rnd64() % (uint64_t)m), kk = (int64_t)(rnd64() % (uint64_t)k);
            if (ia->has_nan || ia->has_inf)
                mmp_format_store(p->a, mmp_gemm_index(p->g.la, p->g.lda, i, kk), sa[t], fa, MMP_ROUND_NEAREST_EVEN, 0);
            int64_t j = (int64_t)(rnd64() % (uint64_t)n);
            kk = (int64_t)(rnd64() % (uint64_t)k);
            if (ib->has_inf)
                mmp_format_store(p->b, mmp_gemm_index(p->g.lb, p->g.ldb, kk, j), sb[t], fb, MMP_ROUND_NEAREST_EVEN, 0);
        }
        if (p->c && mmp_format_get_info(fc)->has_nan)
            mmp_format_store(p->c, mmp_gemm_index(p->g.lc, p->g.ldc, 0, 0), NAN, fc, MMP_ROUND_NEAREST_EVEN, 0);
    }
}

/* Entries far below their row's (A) or column's (B) maximum: each entry, with probability
 * frac, is scaled by 2^-(20..50) (rounded back into its format; narrow formats may flush it
 * to zero). They keep remainders after the slices: frac ~ 1/4 makes the certified paths bound
 * the remainders (step 5's bound form), frac ~ 1/100 lists them (sparse, exact). */
static inline void prob_far(prob *p, double frac)
{
    const mmp_gemm *g = &p->g;
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t k = 0; k < g->k; k++) {
            if (urand() >= frac) continue;
            size_t at = mmp_gemm_index(g->la, g->lda, i, k);
            double v = mmp_format_load(p->a, at, g->a) * ldexp(1.0, -20 - (int)(rnd64() % 31));
            mmp_format_store(p->a, at, v, g->a, MMP_ROUND_NEAREST_EVEN, 1);
        }
    for (int64_t k = 0; k < g->k; k++)
        for (int64_t j = 0; j < g->n; j++) {
            if (urand() >= frac) continue;
            size_t at = mmp_gemm_index(g->lb, g->ldb, k, j);
            double v = mmp_format_load(p->b, at, g->b) * ldexp(1.0, -20 - (int)(rnd64() % 31));
            mmp_format_store(p->b, at, v, g->b, MMP_ROUND_NEAREST_EVEN, 1);
        }
}

/* The remainder cross-term problem (row-major fp32 A m x 3, B 3 x n): a_i2 = t_i, b_2j = u_j
 * far below their row's / column's maximum (a_i0 = b_1j = 1, partners 0), so X_ij = t_i u_j
 * comes only from the remainder terms, the cross term rA rB included (exact: 24 + 24 bits). */
static inline void cross_term_fill(float *a, float *b, int m, int n)
{
    for (int i = 0; i < m; i++) {
        float t = (float)ldexp(1.0 + ldexp((double)(rnd64() % (1u << 23)), -23), -30 - (int)(rnd64() % 15));
        a[i * 3 + 0] = 1.0f; a[i * 3 + 1] = 0.0f; a[i * 3 + 2] = (rnd64() & 1) ? -t : t;
    }
    for (int j = 0; j < n; j++) {
        float u = (float)ldexp(1.0 + ldexp((double)(rnd64() % (1u << 23)), -23), -30 - (int)(rnd64() % 15));
        b[0 * n + j] = 0.0f; b[1 * n + j] = 1.0f; b[2 * n + j] = u;
    }
}

static void prob_free(prob *p) { free(p->a); free(p->b); free(p->c); }

static int same_bits(double x, double y)
{
    if (isnan(x) && isnan(y)) return 1;
    return memcmp(&x, &y, sizeof x) == 0;
}

#endif
