/* reference/ref_v2.h — the per-element work of the device reference, version 2 (ref_cuda2.cu),
 * as __host__ __device__ functions: the kernels (ref_cuda2_kern.cuh) call them, and so does a
 * host model of version 2 (ref_v2_host.c: the same stages on the CPU, with OpenBLAS for the
 * DGEMMs), which check_ref_round compares with pure MPFR bit for bit on every kind of problem.
 * So everything version 2 computes per element is tested here, where there is no GPU; what the
 * host model cannot test is the kernels' own indexing, block reductions and list compaction.
 *
 * Usage (host model): ref_v2_host_run(r, a, b, c, &g, &o, threads) fills r like the device.
 */
#ifndef MMAPROBE_REF_V2_H
#define MMAPROBE_REF_V2_H

#include "ref_crt.h"
#include "ref_plan.h"
#include "ref_round.h"

/* What the finish (steps 5-7) reads besides the state (h, l, err). */
typedef struct ref_v2_args {
    const void *a, *b, *c;            /* native operands */
    mmp_format_hd fa, fb, fc, fd;
    int la, lb, lc;
    int64_t lda, ldb, ldc, m, n, k;
    double alpha, beta;
    int sparse, beta_bits, sb;        /* remainder mode; bits per slice; B's slices */
    const int *ea, *fbx;              /* scale exponents of A's rows, B's columns */
    const unsigned char *rowbad, *colbad;
    const int64_t *ra_ptr, *rb_ptr;   /* sparse: remainders by rows of A (k, value), by columns of B */
    const int *ra_k, *rb_k;
    const double *ra_v, *rb_v;
    ref_drop_view drop;               /* bound mode: what the plan drops (ref_plan.h) */
    const int64_t *nfa_ptr, *nfb_ptr; /* NaN/Inf positions k by rows of A, columns of B (or NULL) */
    const int *nfa_k, *nfb_k;
    int zero_mode;                    /* exact zero sums: REF_V2_ZERO_* (ref_v2_zero_neg) */
    int64_t kw;                       /* 64-bit words per mask: ceil(K / 64) */
    const uint64_t *zero_a, *sign_a;  /* masks by rows of A (kw words each; ref_v2_mask_word) */
    const uint64_t *zero_b, *sign_b;  /* masks by columns of B */
} ref_v2_args;

/* ---- the sign of an exact zero sum without the dot stage ----
 * A sum S that the finish proves exactly 0 (h = l = 0 and no uncertainty) is -0 only when every
 * product a_ik b_kj is -0 (IEEE 754 and MPFR, round to nearest), else +0. With finite a, b (rows
 * and columns holding NaN/Inf are decided by class before this), the product as ref_v2_dot_add
 * sees it is -0 exactly when one factor is zero and the signs differ: a nonzero product, even
 * one that underflows, clears ref_v2_dot_add's neg_zero, and so does a zero one of equal signs.
 * Bit k of a row's masks: zero (a_ik == 0) and sign (signbit(a_ik)); likewise for B's columns;
 * bits k >= K are 0. Then the product k is -0 iff bit k of (Z_A | Z_B) & (S_A ^ S_B) is set,
 * and S is -0 iff all K bits are set (K > 0): the very flag ref_v2_dot_add accumulates.
 * Integer inputs: every product is +0 (ref_v2_dot_add's int_inputs). */
enum { REF_V2_ZERO_OFF = 0, REF_V2_ZERO_INT = 1, REF_V2_ZERO_MASK = 2 };

/* The mode for g (host code; every path asks here): integer inputs INT; the masks only where
 * no product of two finite nonzero inputs can underflow to 0 in binary64: an fp64 operand's
 * can (2^-1074 squared), and the exact sum of such products is a tiny nonzero that the slices'
 * h = l = 0, E = 0 does not show; those zeros stay with the dot stage (OFF). Every other input
 * format's smallest subnormal is at least 2^-149. */
static inline int ref_v2_zero_mode(const mmp_gemm *g)
{
    int exact, ints;
    ref_dot_flags(&exact, &ints, g);
    if (ints) return REF_V2_ZERO_INT;
    return g->a != MMP_FORMAT_FP64 && g->b != MMP_FORMAT_FP64 ? REF_V2_ZERO_MASK : REF_V2_ZERO_OFF;
}

/* Word w (bits k = 64 w .. 64 w + 63) of the zero mask (sign = 0) or sign mask (sign = 1) of a
 * contiguous vector v of length len. */
REF_HD uint64_t ref_v2_mask_word(const double *v, int64_t len, int64_t w, int sign)
{
    uint64_t m = 0;
    for (int b = 0; b < 64 && w * 64 + b < len; b++) {
        double x = v[w * 64 + b];
        if (sign ? signbit(x) != 0 : x == 0.0) m |= (uint64_t)1 << b;
    }
    return m;
}

/* All kw words of both masks of one vector (host builders; the device's v2_mask_kernel takes a
 * word per warp). */
REF_HD void ref_v2_mask_vector(uint64_t *z, uint64_t *sg, const double *v, int64_t len, int64_t kw)
{
    for (int64_t w = 0; w < kw; w++) {
        z[w] = ref_v2_mask_word(v, len, w, 0);
        sg[w] = ref_v2_mask_word(v, len, w, 1);
    }
}

/* 1 when every product of row i of A and column j of B is -0 (the masks of f). */
REF_HD int ref_v2_zero_neg(const ref_v2_args *f, int64_t i, int64_t j)
{
    if (f->zero_mode != REF_V2_ZERO_MASK || f->k <= 0) return 0;
    const uint64_t *za = f->zero_a + i * f->kw, *sa = f->sign_a + i * f->kw;
    const uint64_t *zb = f->zero_b + j * f->kw, *sb = f->sign_b + j * f->kw;
    int tail = (int)(f->k % 64);
    for (int64_t w = 0; w < f->kw; w++) {
        uint64_t need = w == f->kw - 1 && tail ? ((uint64_t)1 << tail) - 1 : ~(uint64_t)0;
        if ((((za[w] | zb[w]) & (sa[w] ^ sb[w])) & need) != need) return 0;
    }
    return 1;
}

/* Native operand element x of the dense binary64 copy (row-major rows x cols, or column-major). */
REF_HD double ref_v2_decode_one(const void *src, const mmp_format_hd *f, int layout, int64_t ld, int64_t rows,
                                int64_t cols, int row_major_dst, int64_t x)
{
    int64_t r = row_major_dst ? x / cols : x % rows, c = row_major_dst ? x % cols : x / rows;
    return mmp_format_hd_load(src, ref_index(layout, ld, r, c), f);
}

/* Remainder of v after S slices (step 2; the same exact steps as the slicing). */
REF_HD double ref_v2_rem(double v, int e, int beta, int S, double *rem_last)
{
    double q[REF_SMAX], last = 0, r = ref_split(v, e, beta, S, q, 1, &last);
    if (rem_last) *rem_last = last;
    return r;
}

/* Steps 4 and 6 for element x: state += P 2^(E_i + F_j - pair_exp), exact. */
REF_HD void ref_v2_accumulate_one(double *h, double *l, double *err, const double *p, const int *ea, const int *fb,
                                  int64_t n, int pair_exp, int64_t x)
{
    double hh = h[x], ll = l[x], ee = err[x];
    ref_acc_scaled(&hh, &ll, &ee, p[x], ea[x / n] + fb[x % n] - pair_exp);
    h[x] = hh; l[x] = ll; err[x] = ee;
}

/* A pass of the int8 route's accumulation (ref_plan.h, Routes): up to REF_IMMA_BATCH int32
 * planes (row-major, leading dimension ld), each the exact sum of its job's pairs at its level;
 * the planes of one level are consecutive. */
typedef struct ref_imma_batch {
    int count, beta;
    int first;                        /* 1: the state is not read but written (the first batch) */
    int64_t ld;
    const int32_t *plane[REF_IMMA_BATCH];
    int level[REF_IMMA_BATCH];
} ref_imma_batch;

/* Steps 4 and 6 for element x on the int8 route: each level's planes added in int64 (exact:
 * below 2^49, ref_plan.h), then state += sum 2^(E_i + F_j - beta L), exact (b->first: the
 * state starts from 0 instead of what the arrays hold). */
REF_HD void ref_v2_accumulate_imma_one(double *h, double *l, double *err, const ref_imma_batch *b, const int *ea,
                                       const int *fb, int64_t n, int64_t x)
{
    int64_t i = x / n, j = x % n;
    double hh = 0.0, ll = 0.0, ee = 0.0;
    if (!b->first) { hh = h[x]; ll = l[x]; ee = err[x]; }
    int64_t sum = 0;
    /* unrolled: constant indices into the batch, so that a kernel reads it from its parameters
     * (a runtime index makes a local copy of the whole batch per thread) */
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int q = 0; q < REF_IMMA_BATCH; q++) {
        if (q >= b->count) break;
        sum += b->plane[q][i * b->ld + j];
        if (q + 1 < b->count && q + 1 < REF_IMMA_BATCH && b->level[q + 1] == b->level[q]) continue;
        int ex = ea[i] + fb[j] - b->beta * b->level[q];   /* the level's last plane: its sum */
        if (ex < -1022 || ex > 970) ee = INFINITY;
        else ref_acc(&hh, &ll, &ee, (double)sum * ref_pow2(ex));
        sum = 0;
    }
    h[x] = hh; l[x] = ll; err[x] = ee;
}

/* The int8 slices of entry x of a contiguous vector (length len, scale e) into its row of
 * S kp entries (ref_imma_slot); 0 when a slice is not an integer in [-128, 127] (never, by
 * ref_plan.h's argument: the host model checks it). ref_split's steps, each digit stored as it
 * comes (no array of digits: on the device a runtime-indexed array lives in local memory). */
REF_HD int ref_v2_slice8_one(int8_t *row, double v, int e, int beta, int S, int64_t kp, int reversed, int64_t kk)
{
    double r = isfinite(v) ? v : 0.0;
    int zero = r != 0.0 ? ref_zero_slices(r, e, beta) : S, ok = 1;
    for (int s = 1; s <= S; s++) {
        double q = ref_split_step(&r, s, zero, e, beta);
        ok &= q == trunc(q) && q >= -128.0 && q <= 127.0;
        row[ref_imma_slot(s, S, kp, reversed) + kk] = (int8_t)q;
    }
    return ok;
}

/* The metrics' bound for element x from ab = fl(|A||B|)_x. */
REF_HD double ref_v2_absbound_x(double ab, const ref_v2_args *f, int64_t x)
{
    double cv = f->beta != 0.0 ? fabs(mmp_format_hd_load(f->c, ref_index(f->lc, f->ldc, x / f->n, x % f->n), &f->fc)) : 0.0;
    return ref_absbound_one(ab, (double)f->k, fabs(f->alpha), f->beta != 0.0 ? fabs(f->beta) : 0.0, cv);
}

/* ---- the dot stage: an element the finish leaves open, from its row of A and column of B ----
 * The products a_ik b_kj in k order into an error-tracked double-double (ref_acc: the value is
 * within h + l +- err), so the uncertainty is about K^2 u^2 sum |a b| instead of the slices'
 * dropped remainders: it decides nearly every element whose terms span a wide exponent range
 * (`wide`), and the non-finite and exactly-zero sums are decided by class and sign, by the rules
 * ref_exact.c follows (MPFR's); the finish signs most exact zeros itself (ref_v2_zero_neg, with
 * ref_v2_dot_decide), so `onehot` data need no dot stage. What it cannot decide stays open. */
typedef struct ref_v2_dot {
    double h, l, err;
    int cls;        /* REF_CLS_* of the sum so far */
    int neg_zero;   /* every product so far is -0 (the sign of an exact zero sum) */
} ref_v2_dot;

REF_HD void ref_v2_dot_init(ref_v2_dot *s, int64_t k)
{
    s->h = 0.0; s->l = 0.0; s->err = 0.0;
    s->cls = REF_CLS_FINITE;
    s->neg_zero = k > 0;
}

/* s += x y. exact_products: every product of the two formats is a double (significands of at
 * most 26 bits, exponents inside binary64's range: every format but fp64 and int32); otherwise
 * TwoProd adds the product's rounding error too. int_inputs: both operands are integers (their
 * zeros are +0). */
REF_HD void ref_v2_dot_add(ref_v2_dot *s, double x, double y, int exact_products, int int_inputs)
{
    double p = x * y;
    if (p != 0.0 && fabs(p) <= 0x1.fffffffffffffp+1023) {   /* finite nonzero: x, y are too */
        s->neg_zero = 0;
        if (exact_products) ref_acc(&s->h, &s->l, &s->err, p);
        else ref_acc_prod(&s->h, &s->l, &s->err, x, y);
        return;
    }
    if (!isfinite(p)) {
        int c = ref_cls_mul(x, y);
        if (c == REF_CLS_FINITE) s->err = INFINITY;   /* finite operands that overflow: open */
        else { s->cls = ref_cls_add(s->cls, c); s->neg_zero = 0; }
        return;
    }
    if (x == 0.0 || y == 0.0) {
        if (int_inputs || signbit(x) == signbit(y)) s->neg_zero = 0;
        return;
    }
    s->neg_zero = 0;
    if (exact_products) ref_acc(&s->h, &s->l, &s->err, p);
    else ref_acc_prod(&s->h, &s->l, &s->err, x, y);
}

/* s += t: two partial sums of disjoint products (host threads keep several per element, so that
 * the additions' latency overlaps); exact but for the tracked error. */
REF_HD void ref_v2_dot_merge(ref_v2_dot *s, const ref_v2_dot *t)
{
    s->cls = ref_cls_add(s->cls, t->cls);
    s->neg_zero = s->neg_zero && t->neg_zero;
    ref_acc(&s->h, &s->l, &s->err, t->h);
    ref_acc(&s->h, &s->l, &s->err, t->l);
    s->err += t->err;
}

/* X = alpha S + beta c from the state: 1 with d64 = RN64(X), dout = RN_fd(X) when certain.
 * A non-finite S: its class scaled and added by MPFR's rules. An exact zero S (err = 0 and
 * h = l = 0): a signed zero, +0 unless every product was -0, or beta c alone. Otherwise
 * ref_finish and ref_decide_hd, as the finish does. Integer outputs stay open. */
REF_HD int ref_v2_dot_decide(double *d64, double *dout, const ref_v2_dot *s, double alpha, double beta, double cv,
                             const mmp_format_hd *fd)
{
    if (!fd->is_float) return 0;
    int use_c = beta != 0.0, scaled = alpha != 1.0 || use_c, x = s->cls;
    int zero = x == REF_CLS_FINITE && s->err == 0.0 && s->h == 0.0 && s->l == 0.0;
    if (x != REF_CLS_FINITE) {
        if (scaled) x = ref_cls_scale(alpha, x, 0);
    } else if (!isfinite(alpha)) {
        return 0;   /* Inf or NaN times a finite S: the exact evaluator */
    }
    if (use_c) x = ref_cls_add(x, ref_cls_mul(beta, cv));
    if (x != REF_CLS_FINITE) {
        *d64 = x == REF_CLS_NAN ? NAN : (x == REF_CLS_PINF ? INFINITY : -INFINITY);
        *dout = ref_round_out_hd(*d64, 0, fd);
        return 1;
    }
    if (zero && (!use_c || cv == 0.0)) {   /* a signed zero: +0 unless every term is -0 */
        int neg = scaled ? s->neg_zero != (signbit(alpha) != 0) : s->neg_zero;
        if (use_c) neg = neg && (signbit(beta) != signbit(cv));
        *d64 = neg ? -0.0 : 0.0;
        *dout = ref_round_out_hd(*d64, 0, fd);
        return 1;
    }
    double h = s->h, l = s->l, E = s->err == 0.0 ? 0.0 : s->err * (1.0 + 0x1p-40);
    ref_finish(&h, &l, &E, alpha, beta, cv, use_c);
    return ref_decide_hd(d64, dout, h, l, E, fd);
}

/* An element whose row of A or column of B holds a NaN or an infinity: every product with such
 * an entry is NaN or infinite (Inf 0 is NaN), so X is NaN or infinite, and its class is the sum
 * of those products' classes alone (ref_exact.c's rule, MPFR's; a product listed twice adds its
 * class twice, which changes nothing), then alpha and beta c as ref_v2_dot_decide applies them.
 * Returns 0 (nothing written) if no listed product is non-finite. */
REF_HD int ref_v2_special_one(double *d64, double *dout, const ref_v2_args *f, int64_t i, int64_t j)
{
    ref_v2_dot s;
    ref_v2_dot_init(&s, f->k);
    for (int64_t q = f->nfa_ptr[i]; q < f->nfa_ptr[i + 1]; q++) {
        int64_t k = f->nfa_k[q];
        double av = mmp_format_hd_load(f->a, ref_index(f->la, f->lda, i, k), &f->fa);
        double bv = mmp_format_hd_load(f->b, ref_index(f->lb, f->ldb, k, j), &f->fb);
        s.cls = ref_cls_add(s.cls, ref_cls_mul(av, bv));
    }
    for (int64_t q = f->nfb_ptr[j]; q < f->nfb_ptr[j + 1]; q++) {
        int64_t k = f->nfb_k[q];
        double av = mmp_format_hd_load(f->a, ref_index(f->la, f->lda, i, k), &f->fa);
        double bv = mmp_format_hd_load(f->b, ref_index(f->lb, f->ldb, k, j), &f->fb);
        s.cls = ref_cls_add(s.cls, ref_cls_mul(av, bv));
    }
    if (s.cls == REF_CLS_FINITE) return 0;
    double cv = f->beta != 0.0 ? mmp_format_hd_load(f->c, ref_index(f->lc, f->ldc, i, j), &f->fc) : 0.0;
    return ref_v2_dot_decide(d64, dout, &s, f->alpha, f->beta, cv, &f->fd);
}

/* Steps 5-7 for element x, in place: h <- d64, l <- dout, err <- 0 (decided) or 1. Returns 1
 * when decided. Sparse: R = rA (b - rB) + a rB added with exact TwoProds (b - rB is b truncated
 * to the slices' grid, a double, so the subtraction is exact; rA (b - rB) + a rB = rA b + a rB
 * - rA rB = R). Bound: |R| <= RA_i SB_j + SA_i RB_j. Then alpha, beta C (ref_finish) and the
 * decision (ref_decide_hd). */
REF_HD int ref_v2_finish_one(double *h, double *l, double *err, const ref_v2_args *f, int64_t x)
{
    int64_t i = x / f->n, j = x % f->n;
    int bad = f->rowbad[i] || f->colbad[j];
    if (bad && f->nfa_ptr) {   /* its NaN/Inf products decide it */
        double d64 = 0, dout = 0;
        if (ref_v2_special_one(&d64, &dout, f, i, j)) {
            h[x] = d64; l[x] = dout; err[x] = 0.0;
            return 1;
        }
    }
    double hh = h[x], ll = l[x], ee = err[x];
    if (f->sparse) {
        for (int64_t q = f->ra_ptr[i]; q < f->ra_ptr[i + 1]; q++) {
            double bv = mmp_format_hd_load(f->b, ref_index(f->lb, f->ldb, f->ra_k[q], j), &f->fb);
            double bhi = bv - ref_v2_rem(bv, f->fbx[j], f->beta_bits, f->sb, NULL);
            ref_acc_prod(&hh, &ll, &ee, f->ra_v[q], bhi);
        }
        for (int64_t q = f->rb_ptr[j]; q < f->rb_ptr[j + 1]; q++) {
            double av = mmp_format_hd_load(f->a, ref_index(f->la, f->lda, i, f->rb_k[q]), &f->fa);
            ref_acc_prod(&hh, &ll, &ee, av, f->rb_v[q]);
        }
    }
    double E = ee == 0.0 ? 0.0 : ee * (1.0 + 0x1p-40);
    if (!f->sparse) E += ref_drop_bound(&f->drop, i, j);
    if (bad) E = INFINITY;
    double cv = f->beta != 0.0 ? mmp_format_hd_load(f->c, ref_index(f->lc, f->ldc, i, j), &f->fc) : 0.0;
    if (f->zero_mode != REF_V2_ZERO_OFF && f->fd.is_float && hh == 0.0 && ll == 0.0 && E == 0.0) {
        /* S is exactly 0 (E = 0: no dropped or unknown term; bad rows have E = Inf): its sign
         * from the masks, then alpha and beta c by the dot stage's own decision */
        ref_v2_dot s;
        ref_v2_dot_init(&s, f->k);
        s.neg_zero = ref_v2_zero_neg(f, i, j);
        double d64 = 0, dout = 0;
        if (ref_v2_dot_decide(&d64, &dout, &s, f->alpha, f->beta, cv, &f->fd)) {
            h[x] = d64; l[x] = dout; err[x] = 0.0;
            return 1;
        }
    }
    if (!f->fd.is_float && hh == 0.0 && ll == 0.0 && E == 0.0) {
        /* an exact zero sum (integer products are +0) for an integer output: X = alpha 0 + beta c
         * is zero when beta c is, its sign by the IEEE rules, which are MPFR's here */
        double z = f->alpha * 0.0;
        if (f->beta != 0.0) z += f->beta * cv;
        if (z == 0.0) {
            h[x] = z; l[x] = 0.0; err[x] = 0.0;
            return 1;
        }
    }
    ref_finish(&hh, &ll, &E, f->alpha, f->beta, cv, f->beta != 0.0);
    double d64 = 0, dout = 0;
    int ok = ref_decide_hd(&d64, &dout, hh, ll, E, &f->fd);
    h[x] = d64; l[x] = dout; err[x] = ok ? 0.0 : 1.0;
    return ok;
}

#ifdef __cplusplus
extern "C" {
#endif
/* ref_v2_host.c (host code): the host model of version 2. */
mmp_status ref_v2_host_run(mmp_ref_result *r, const void *a, const void *b, const void *c, const mmp_gemm *g,
                           const mmp_ref_options *o, int threads);

/* ref_cuda2_imma.cu (CUDA builds): the int8 route on the device. ref_cuda2_imma_slice makes the
 * int8 planes from a64, b64 (split.slice_s) and allocates the int32 planes; then a64, b64 may
 * go; ref_cuda2_imma_products runs the GEMMs (time.gemm_s, n_gemms) and adds them into the
 * state (split.accumulate_s); ref_cuda2_imma_free releases everything. blas: a cublasHandle_t.
 * With pl->crt the residue route (ref_cuda2_crt.cu, ref_crt.h): ref_cuda2_imma_slice makes
 * residue planes instead of slice planes, ref_cuda2_crt_products runs one GEMM per modulus
 * into byte planes and frees the rest, then ref_cuda2_crt_accumulate writes the state. */
typedef struct ref_imma_dev {
    int8_t *qa, *qb;
    int32_t *planes;
    int nplanes;
    int *bad;
    uint8_t *res;                     /* residue route: the N byte planes d_t, M x N each */
} ref_imma_dev;
mmp_status ref_cuda2_imma_slice(mmp_ref_result *r, ref_imma_dev *d, const double *a64, const double *b64,
                                const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n, int64_t k);
mmp_status ref_cuda2_imma_products(mmp_ref_result *r, ref_imma_dev *d, double *h, double *l, double *err,
                                   const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n,
                                   void *blas);
void ref_cuda2_imma_free(ref_imma_dev *d);
mmp_status ref_cuda2_crt_slice(mmp_ref_result *r, ref_imma_dev *d, const double *a64, const double *b64,
                               const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n, int64_t k);
mmp_status ref_cuda2_crt_products(mmp_ref_result *r, ref_imma_dev *d, const ref_v2_plan *pl, int64_t m, int64_t n,
                                  void *blas);
mmp_status ref_cuda2_crt_accumulate(mmp_ref_result *r, ref_imma_dev *d, double *h, double *l, double *err,
                                    const int *ea, const int *fb, const ref_v2_plan *pl, int64_t m, int64_t n);

/* ref_cuda2_mem.cu (CUDA builds): the device reference's memory, a stream-ordered pool kept
 * between calls, and pinned host buffers for what comes back (usage at the top of that file). */
#define REF_PINNED_SLOTS 2
typedef struct ref_mem_mark {
    size_t free0, total, reserved0;   /* at ref_cuda2_mem_begin: free and total device memory, the pool's size */
    long long outside_max;     /* most in use outside the pool at a sample */
    int device, ok;
} ref_mem_mark;
mmp_status ref_cuda2_dalloc(void **p, size_t bytes);
void ref_cuda2_dfree(void *p);
void ref_cuda2_mem_begin(ref_mem_mark *mk);
void ref_cuda2_mem_sample(ref_mem_mark *mk);
int64_t ref_cuda2_mem_end(ref_mem_mark *mk);
void *ref_cuda2_pinned(int slot, size_t bytes);
void ref_cuda2_pinned_release(int slot);
#ifdef __cplusplus
}
#endif

#endif
