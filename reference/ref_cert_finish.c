/* ref_cert_finish.c — the host end of the certified paths (CPU and CUDA): the remainder terms
 * (step 5 of ref_certified.c: exact when sparse, else a bound), alpha/beta (ref_finish), the
 * rounding decisions (ref_decide); elements with a NaN/Inf product from those products alone
 * (ref_special_element); exact zero sums signed from zero/sign masks of the rows and columns
 * (ref_v2_zero_neg, as the device's finish); whatever the bound left open by the dot stage (ref_v2.h: each element's
 * dot product as an error-tracked double-double sum), then the exact evaluator (ref_exact.c),
 * MPFR only for what that declines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_v2.h"

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

/* The bound's view of a prepared plan (bound mode). */
static ref_drop_view drop_view(const ref_cert *c)
{
    ref_drop_view v = {c->sa, c->sb, c->levels, c->ra_max, c->a_sum, c->rb_max, c->b_sum, c->a_ss, c->b_rl};
    return v;
}

typedef struct {
    ref_cert *c;
    unsigned char *undecided;   /* row-major */
    const ref_special *sp;      /* NaN/Inf positions, when a row or column has one */
    ref_drop_view drop;         /* bound mode: what the plan drops */
    ref_v2_args zf;             /* exact zero sums: zero_mode, k, kw and the masks (ref_v2_zero_neg) */
    mmp_format_hd fd;
} decide_job;

/* The zero and sign masks (ref_v2_mask_word) of the rows of A (a64: rows contiguous) and the
 * columns of B (b64: columns contiguous): task t < m is row t of A, else column t - m of B. */
static void mask_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    decide_job *j = ctx;
    const ref_data *d = j->c->d;
    int64_t kw = j->zf.kw;
    for (int64_t t = b; t < e; t++) {
        int row = t < d->m;
        int64_t v = row ? t : t - d->m;
        ref_v2_mask_vector((uint64_t *)(row ? j->zf.zero_a : j->zf.zero_b) + v * kw,
                           (uint64_t *)(row ? j->zf.sign_a : j->zf.sign_b) + v * kw,
                           (row ? d->a64 : d->b64) + v * d->k, d->k, kw);
    }
}

/* How exact zero sums are signed (REF_V2_ZERO_*): integer inputs +0; other formats by the masks,
 * built only when some element's state is an exact zero (onehot data: half of them); fp64
 * inputs by the dot stage (ref_v2_zero_mode). Allocation failure leaves them to the dot stage. */
static void zero_masks(decide_job *j)
{
    ref_cert *c = j->c;
    const ref_data *d = c->d;
    memset(&j->zf, 0, sizeof j->zf);
    j->zf.k = d->k;
    j->zf.kw = (d->k + 63) / 64;
    int mode = ref_v2_zero_mode(d->g);
    if (!j->fd.is_float || mode == REF_V2_ZERO_OFF) return;
    if (mode == REF_V2_ZERO_INT) { j->zf.zero_mode = mode; return; }
    if (d->k <= 0) return;
    size_t total = (size_t)d->m * d->n, any = 0;
    for (size_t x = 0; x < total && !any; x++) any = c->h[x] == 0.0 && c->l[x] == 0.0 && c->err[x] == 0.0;
    if (!any) return;
    size_t wa = (size_t)d->m * j->zf.kw, wb = (size_t)d->n * j->zf.kw;
    uint64_t *m = malloc((2 * wa + 2 * wb) * sizeof(uint64_t));
    if (!m) return;
    j->zf.zero_a = m; j->zf.sign_a = m + wa; j->zf.zero_b = m + 2 * wa; j->zf.sign_b = m + 2 * wa + wb;
    j->zf.zero_mode = REF_V2_ZERO_MASK;
    mmp_parallel_for(d->threads > 0 ? d->threads : 1, d->m + d->n, 16, mask_part, j);
}

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
            if (!c->sparse) E += ref_drop_bound(&j->drop, i, col);
            if (c->rowbad[i] || c->colbad[col]) {   /* a NaN/Inf product: decided from those alone */
                j->undecided[x] = !(j->sp && ref_special_element(&r->d64[x], &r->dout[x], j->sp, d, i, col));
                continue;
            }
            double cv = d->c64 ? d->c64[x] : 0.0;
            if (j->zf.zero_mode != REF_V2_ZERO_OFF && sh == 0.0 && sl == 0.0 && E == 0.0) {
                /* S is exactly 0: its sign from the masks, alpha and beta c as the dot stage's */
                ref_v2_dot s;
                ref_v2_dot_init(&s, d->k);
                s.neg_zero = ref_v2_zero_neg(&j->zf, i, col);
                if (ref_v2_dot_decide(&r->d64[x], &r->dout[x], &s, g->alpha, g->beta, cv, &j->fd)) {
                    j->undecided[x] = 0;
                    continue;
                }
            }
            ref_finish(&sh, &sl, &E, g->alpha, g->beta, cv, g->beta != 0.0);
            j->undecided[x] = !ref_decide(&r->d64[x], &r->dout[x], sh, sl, E, g->d);
        }
}

#if defined(__GNUC__)
typedef double v2d __attribute__((vector_size(16)));
typedef long long v2l __attribute__((vector_size(16)));
/* ref_acc on two lanes at once (the same operations, so the same exactness) */
#define ACC2(h, l, e, x)                                                                        \
    do {                                                                                        \
        v2d s_ = (h) + (x), bp_ = s_ - (h), d_ = ((h) - (s_ - bp_)) + ((x) - bp_);              \
        v2d nl_ = (l) + d_, bq_ = nl_ - (l), d2_ = ((l) - (nl_ - bq_)) + (d_ - bq_);            \
        (h) = s_; (l) = nl_; (e) += (v2d)((v2l)d2_ & absmask);                                 \
    } while (0)
#endif

/* The dot stage's state of one element on a host thread. Exact products: blocks of four
 * products that are all finite (nearly every block; zeros too) go to four independent
 * double-double chains (two-lane vectors where the compiler has them: adding a zero changes no
 * state), any other block and the tail to a scalar state through ref_v2_dot_add; the chains
 * merge into it at the end (partial sums of disjoint products: ref_v2_dot_merge). The sign of
 * an exact zero sum: the chains' products were all -0 or not (integer inputs: +0). */
static void dot_element(ref_v2_dot *out, const double *a, const double *b, int64_t K, int exact, int ints)
{
    ref_v2_dot_init(out, K);
    int64_t q = 0;
#if defined(__GNUC__)
    if (exact) {
        const v2l absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
        const v2d big = {0x1.fffffffffffffp+1023, 0x1.fffffffffffffp+1023}, zero = {0.0, 0.0};
        v2d h0 = zero, h1 = zero, l0 = zero, l1 = zero, e0 = zero, e1 = zero;
        int any = 0, negz = !ints;   /* the chains' products so far are all -0 */
        for (; q + 4 <= K; q += 4) {
            v2d x0, x1, y0, y1;
            memcpy(&x0, a + q, 16); memcpy(&x1, a + q + 2, 16);
            memcpy(&y0, b + q, 16); memcpy(&y1, b + q + 2, 16);
            v2d p0 = x0 * y0, p1 = x1 * y1;
            v2d m0 = (v2d)((v2l)p0 & absmask), m1 = (v2d)((v2l)p1 & absmask);
            v2l ok = (m0 <= big) & (m1 <= big);   /* false for NaN and Inf */
            if (ok[0] && ok[1]) {
                ACC2(h0, l0, e0, p0);
                ACC2(h1, l1, e1, p1);
                if (negz) {
                    v2l z = (m0 == zero) & ((v2l)p0 < 0) & (m1 == zero) & ((v2l)p1 < 0);
                    negz = z[0] && z[1];
                }
                any = 1;
            } else {
                for (int t = 0; t < 4; t++) ref_v2_dot_add(out, a[q + t], b[q + t], exact, ints);
            }
        }
        if (any) {
            double hs[4] = {h0[0], h0[1], h1[0], h1[1]}, ls[4] = {l0[0], l0[1], l1[0], l1[1]};
            double es[4] = {e0[0], e0[1], e1[0], e1[1]};
            for (int t = 0; t < 4; t++) {
                ref_v2_dot lane = {hs[t], ls[t], es[t], REF_CLS_FINITE, negz};
                ref_v2_dot_merge(out, &lane);
            }
        }
    }
#endif
    for (; q < K; q++) ref_v2_dot_add(out, a[q], b[q], exact, ints);
}

#if defined(__GNUC__) && defined(__x86_64__)
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
#define ACC4(h, l, e, x)                                                                        \
    do {                                                                                        \
        v4d s_ = (h) + (x), bp_ = s_ - (h), d_ = ((h) - (s_ - bp_)) + ((x) - bp_);              \
        v4d nl_ = (l) + d_, bq_ = nl_ - (l), d2_ = ((l) - (nl_ - bq_)) + (d_ - bq_);            \
        (h) = s_; (l) = nl_; (e) += (v4d)((v4l)d2_ & absmask4);                                \
    } while (0)

/* dot_element with eight chains in two 4-lane vectors, for CPUs with AVX2 (chosen at run time) */
__attribute__((target("avx2"))) static void dot_element_avx2(ref_v2_dot *out, const double *a, const double *b,
                                                             int64_t K, int ints)
{
    ref_v2_dot_init(out, K);
    const v4l absmask4 = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    const v4d big = {0x1.fffffffffffffp+1023, 0x1.fffffffffffffp+1023, 0x1.fffffffffffffp+1023,
                     0x1.fffffffffffffp+1023};
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    v4d h0 = zero, h1 = zero, l0 = zero, l1 = zero, e0 = zero, e1 = zero;
    int any = 0, negz = !ints;
    int64_t q = 0;
    for (; q + 8 <= K; q += 8) {
        v4d x0, x1, y0, y1;
        memcpy(&x0, a + q, 32); memcpy(&x1, a + q + 4, 32);
        memcpy(&y0, b + q, 32); memcpy(&y1, b + q + 4, 32);
        v4d p0 = x0 * y0, p1 = x1 * y1;
        v4d m0 = (v4d)((v4l)p0 & absmask4), m1 = (v4d)((v4l)p1 & absmask4);
        v4l ok = (m0 <= big) & (m1 <= big);
        if (ok[0] && ok[1] && ok[2] && ok[3]) {
            ACC4(h0, l0, e0, p0);
            ACC4(h1, l1, e1, p1);
            if (negz) {
                v4l z = (m0 == zero) & ((v4l)p0 < 0) & (m1 == zero) & ((v4l)p1 < 0);
                negz = z[0] && z[1] && z[2] && z[3];
            }
            any = 1;
        } else {
            for (int t = 0; t < 8; t++) ref_v2_dot_add(out, a[q + t], b[q + t], 1, ints);
        }
    }
    if (any)
        for (int t = 0; t < 8; t++) {
            v4d h = t < 4 ? h0 : h1, l = t < 4 ? l0 : l1, e = t < 4 ? e0 : e1;
            ref_v2_dot lane = {h[t % 4], l[t % 4], e[t % 4], REF_CLS_FINITE, negz};
            ref_v2_dot_merge(out, &lane);
        }
    for (; q < K; q++) ref_v2_dot_add(out, a[q], b[q], 1, ints);
}
#endif

typedef struct {
    mmp_ref_result *r;
    const ref_data *d;
    const int64_t *idx;
    unsigned char *done;
    int exact, ints, avx2;
    mmp_format_hd fd;
} dot_job;

static void dot_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    dot_job *j = ctx;
    const ref_data *d = j->d;
    const mmp_gemm *g = d->g;
    for (int64_t t = b; t < e; t++) {
        int64_t x = j->idx[t], i = x / d->n, col = x % d->n;
        const double *arow = d->a64 + i * d->k, *bcol = d->b64 + col * d->k;
        ref_v2_dot s;
#if defined(__GNUC__) && defined(__x86_64__)
        if (j->avx2 && j->exact) dot_element_avx2(&s, arow, bcol, d->k, j->ints);
        else
#endif
            dot_element(&s, arow, bcol, d->k, j->exact, j->ints);
        double cv = d->c64 ? d->c64[x] : 0.0;
        j->done[t] = (unsigned char)ref_v2_dot_decide(&j->r->d64[x], &j->r->dout[x], &s, g->alpha, g->beta, cv, &j->fd);
    }
}

/* The dot stage for the listed elements; keeps the open ones in idx (in order). */
static mmp_status dot_list(mmp_ref_result *r, const ref_data *d, int64_t *idx, int64_t *count)
{
    if (*count <= 0 || r->i64 || !ref_dot_wanted(d->g)) return MMP_STATUS_OK;
    unsigned char *done = calloc((size_t)*count, 1);
    if (!done) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (dot stage)");
    double t0 = mmp_clock_now();
    dot_job j = {r, d, idx, done, 0, 0, 0, {0}};
#if defined(__GNUC__) && defined(__x86_64__)
    j.avx2 = __builtin_cpu_supports("avx2") && !getenv("MMP_REF_NO_AVX2");
#endif
    ref_dot_flags(&j.exact, &j.ints, d->g);
    mmp_format_hd_init(&j.fd, d->g->d);
    mmp_parallel_for(d->threads > 0 ? d->threads : 1, *count, 16, dot_part, &j);
    int64_t kept = 0;
    for (int64_t t = 0; t < *count; t++)
        if (!done[t]) idx[kept++] = idx[t];
    r->split.n_dot += *count - kept;
    r->split.dot_s += mmp_clock_now() - t0;
    *count = kept;
    free(done);
    return MMP_STATUS_OK;
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
    decide_job dj = {c, und, have_sp ? &sp : NULL, drop_view(c), {0}, {0}};
    mmp_format_hd_init(&dj.fd, d->g->d);
    zero_masks(&dj);
    mmp_parallel_for(d->threads, d->m, 8, decide_rows, &dj);
    if (have_sp) ref_special_free(&sp);
    free((void *)dj.zf.zero_a);
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
            st = dot_list(r, d, idx, &left);
            if (st == MMP_STATUS_OK) st = ref_exact_list(r, d, idx, &left);   /* exact; MPFR for the rest */
            if (st == MMP_STATUS_OK) st = ref_mpfr_list(r, d, idx, left);
            free(idx);
        }
    }
    free(und);
    return st;
}
