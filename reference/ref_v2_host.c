/* ref_v2_host.c — the host model of version 2 of the device reference: the stages of
 * ref_cuda2.cu run on the CPU with the same per-element functions (ref_v2.h), OpenBLAS for the
 * DGEMMs, exact int64 loops for the int8 route's GEMMs (its layout, jobs and batches as the
 * device's). check_ref_round compares the model with pure MPFR; the device path is compared with
 * the CPU path by check_gpu_reference on a GPU. Not a production path (it is slower than the
 * certified CPU path: it keeps the device's memory layout, not the host's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "ref_v2.h"

typedef struct {
    const mmp_gemm *g;
    const ref_v2_args *f;
    const double *a64, *b64;
} model_view;

/* The dot stage for the listed elements (a64 row-major, b64 column-major); keeps the open ones
 * in und, returns how many. */
static int64_t model_dot(mmp_ref_result *r, const model_view *v, int64_t *und, int64_t nu)
{
    int exact, ints, kept = 0;
    ref_dot_flags(&exact, &ints, v->g);
    int64_t n = v->g->n, k = v->g->k;
    for (int64_t t = 0; t < nu; t++) {
        int64_t x = und[t], i = x / n, j = x % n;
        ref_v2_dot s;
        ref_v2_dot_init(&s, k);
        for (int64_t q = 0; q < k; q++) ref_v2_dot_add(&s, v->a64[i * k + q], v->b64[j * k + q], exact, ints);
        double cv = v->f->beta != 0.0 ? mmp_format_hd_load(v->f->c, ref_index(v->f->lc, v->f->ldc, i, j), &v->f->fc) : 0.0;
        if (ref_v2_dot_decide(&r->d64[x], &r->dout[x], &s, v->f->alpha, v->f->beta, cv, &v->f->fd)) r->split.n_dot++;
        else und[kept++] = x;
    }
    return kept;
}

typedef struct {
    double *a64, *b64, *qa, *qb, *p, *h, *l, *err;
    int *ea, *fb, *ra_k, *rb_k, *nfa_k, *nfb_k;
    unsigned char *bada, *badb;
    int64_t *ra_ptr, *rb_ptr, *und, *nfa_ptr, *nfb_ptr;
    double *ra_v, *rb_v, *ra_max, *a_sum, *rb_max, *b_sum, *a_ss, *b_rl;
    ref_vstats *sta, *stb;
    uint64_t *za, *sa, *zb, *sb;
} model;

static void model_free(model *w)
{
    free(w->a64); free(w->b64); free(w->qa); free(w->qb); free(w->p); free(w->h); free(w->l); free(w->err);
    free(w->ea); free(w->fb); free(w->ra_k); free(w->rb_k); free(w->bada); free(w->badb); free(w->ra_ptr);
    free(w->rb_ptr); free(w->und); free(w->ra_v); free(w->rb_v); free(w->ra_max); free(w->a_sum); free(w->rb_max);
    free(w->b_sum); free(w->sta); free(w->stb); free(w->a_ss); free(w->b_rl); free(w->nfa_k); free(w->nfb_k);
    free(w->nfa_ptr); free(w->nfb_ptr); free(w->za); free(w->sa); free(w->zb); free(w->sb);
}

/* The zero and sign masks of `rows` contiguous vectors of length len (the device's v2_mask_kernel). */
static void build_masks(uint64_t *z, uint64_t *sg, const double *x, int64_t rows, int64_t len, int64_t kw)
{
    for (int64_t r = 0; r < rows; r++) ref_v2_mask_vector(z + r * kw, sg + r * kw, x + r * len, len, kw);
}

/* The statistics of one contiguous vector, serially (v2_stats_kernel computes the same). */
static void stats_serial(ref_vstats *s, const double *v, int64_t len, int beta)
{
    ref_vstats_zero(s);
    for (int64_t k = 0; k < len; k++) ref_vstats_pass1(s, v[k]);
    ref_vstats_scale(s, beta);
    ref_vstats_pass2_vector(s, v, len, s->e, beta);
}

/* NaN/Inf positions of `rows` contiguous vectors (CSR; the device's v2_list_kernel with S = 0). */
static mmp_status nonfinite_lists(int64_t **ptr, int **lk, const double *x, const ref_vstats *v, int64_t rows,
                                  int64_t len)
{
    *ptr = calloc((size_t)rows + 1, sizeof(int64_t));
    if (!*ptr) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model)");
    for (int64_t r = 0; r < rows; r++) (*ptr)[r + 1] = (*ptr)[r] + v[r].n_bad;
    *lk = malloc(((size_t)(*ptr)[rows] + 1) * sizeof(int));
    if (!*lk) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model)");
    int64_t t = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < len && v[r].n_bad; k++)
            if (!isfinite(x[r * len + k])) (*lk)[t++] = (int)k;
    return MMP_STATUS_OK;
}

/* Ordered remainder list of `rows` vectors (the device's v2_list_kernel, serially). */
static void build_list(int64_t *ptr, int *lk, double *lv, const double *x, int64_t rows, int64_t len,
                       const int *e, int beta, int S)
{
    int64_t t = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t k = 0; k < len; k++) {
            double rem = ref_v2_rem(x[r * len + k], e[r], beta, S, NULL);
            if (rem != 0.0 && t < ptr[r + 1]) { lk[t] = (int)k; lv[t] = rem; t++; }
        }
        t = ptr[r + 1];
    }
}

/* The int8 route's products (ref_plan.h, Routes) as the device makes them: int8 slice planes in
 * its layout (padded rows and columns of zeros), each job's int32 plane as the exact int64 sum,
 * checked to fit int32 (what the device's int32 accumulator must hold: the chunking's claim),
 * and the planes accumulated REF_IMMA_BATCH at a time by the device's per-element function. */
static mmp_status model_imma(mmp_ref_result *r, model *w, const ref_v2_plan *pl, int64_t m, int64_t n, int64_t k)
{
    int64_t kp = pl->kp, lda = pl->sa * kp, ldb = pl->sb * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n);
    size_t mn4 = (size_t)m * n4;
    int8_t *qa = calloc((size_t)m4 * lda, 1), *qb = calloc((size_t)n4 * ldb, 1);
    int32_t *planes = malloc(REF_IMMA_BATCH * mn4 * sizeof(int32_t));
    int nj = ref_imma_jobs(NULL, 0, pl);
    ref_imma_job *jobs = malloc(((size_t)nj + 1) * sizeof *jobs);
    mmp_status st = MMP_STATUS_OK;
    if (!qa || !qb || !planes || !jobs) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model, int8)");
    /* as on the device, planes without padding are not cleared: the slices must fill them */
    if (qa && kp == k && m4 == m) memset(qa, 0x5a, (size_t)m4 * lda);
    if (qb && kp == k && n4 == n) memset(qb, 0x5a, (size_t)n4 * ldb);
    int ok = 1;
    for (int64_t x = 0; st == MMP_STATUS_OK && x < m * k; x++)
        ok &= ref_v2_slice8_one(qa + x / k * lda, w->a64[x], w->ea[x / k], pl->beta, pl->sa, kp, 0, x % k);
    for (int64_t x = 0; st == MMP_STATUS_OK && x < n * k; x++)
        ok &= ref_v2_slice8_one(qb + x / k * ldb, w->b64[x], w->fb[x / k], pl->beta, pl->sb, kp, 1, x % k);
    if (st == MMP_STATUS_OK && !ok) st = MMP_ERR(MMP_STATUS_INTERNAL, "reference: an int8 slice outside [-128, 127]");
    if (st == MMP_STATUS_OK) ref_imma_jobs(jobs, nj, pl);
    if (nj > 0)   /* as on the device, the state is not cleared: the first batch must write it */
        for (int64_t x = 0; x < m * n; x++) w->h[x] = w->l[x] = w->err[x] = NAN;
    for (int j0 = 0; st == MMP_STATUS_OK && j0 < nj; j0 += REF_IMMA_BATCH) {
        ref_imma_batch b;
        memset(&b, 0, sizeof b);
        b.beta = pl->beta;
        b.ld = n4;
        b.first = j0 == 0;
        for (int q = 0; q < REF_IMMA_BATCH && j0 + q < nj && st == MMP_STATUS_OK; q++) {
            int64_t oa, ob, kk;
            ref_imma_job_span(&oa, &ob, &kk, &jobs[j0 + q], pl->sb, kp);
            int32_t *pq = planes + q * mn4;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    const int8_t *ar = qa + i * lda + oa, *bc = qb + j * ldb + ob;
                    int64_t acc = 0;
                    for (int64_t t = 0; t < kk; t++) acc += (int64_t)ar[t] * bc[t];
                    if (acc > INT32_MAX || acc < INT32_MIN)
                        st = MMP_ERR(MMP_STATUS_INTERNAL, "reference: int32 overflow in an int8 GEMM (K' %lld)",
                                     (long long)kk);
                    pq[i * n4 + j] = (int32_t)acc;
                }
            b.plane[q] = pq;
            b.level[q] = jobs[j0 + q].level;
            b.count++;
            r->n_gemms++;
        }
        for (int64_t x = 0; st == MMP_STATUS_OK && x < m * n; x++)
            ref_v2_accumulate_imma_one(w->h, w->l, w->err, &b, w->ea, w->fb, n, x);
    }
    free(qa); free(qb); free(planes); free(jobs);
    return st;
}

/* The residue route (ref_crt.h) as the device runs it: N residues per entry in the int8 layout
 * (row i of A at qa + i N kp, modulus t at t kp; B's columns alike), one GEMM per modulus as an
 * exact int64 sum checked to fit int32, reduced to a byte plane (ref_crt_reduce), then the state
 * written from each element's N bytes (ref_crt_accumulate_one). */
static mmp_status model_crt(mmp_ref_result *r, model *w, const ref_v2_plan *pl, int64_t m, int64_t n, int64_t k)
{
    ref_crt_table t;
    if (!ref_crt_table_init(&t, pl->sa, pl->sb, pl->kp))
        return MMP_ERR(MMP_STATUS_INTERNAL, "reference: no residue table for %dx%d slices", pl->sa, pl->sb);
    int64_t kp = pl->kp, ld = t.n * kp, m4 = ref_imma_pad4(m), n4 = ref_imma_pad4(n), mn = m * n;
    int8_t *qa = calloc((size_t)m4 * ld, 1), *qb = calloc((size_t)n4 * ld, 1);
    uint8_t *d = malloc((size_t)t.n * mn);
    mmp_status st = MMP_STATUS_OK;
    if (!qa || !qb || !d) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model, residues)");
    if (qa && kp == k && m4 == m) memset(qa, 0x5a, (size_t)m4 * ld);   /* as on the device: filled, not cleared */
    if (qb && kp == k && n4 == n) memset(qb, 0x5a, (size_t)n4 * ld);
    int ok = 1;
    for (int64_t x = 0; st == MMP_STATUS_OK && x < m * k; x++)
        ok &= ref_crt_operand_one(qa + x / k * ld, w->a64[x], w->ea[x / k], pl->sa, kp, &t, t.w, x % k);
    for (int64_t x = 0; st == MMP_STATUS_OK && x < n * k; x++)
        ok &= ref_crt_operand_one(qb + x / k * ld, w->b64[x], w->fb[x / k], pl->sb, kp, &t, t.w, x % k);
    if (st == MMP_STATUS_OK && !ok) st = MMP_ERR(MMP_STATUS_INTERNAL, "reference: an int8 slice outside [-128, 127]");
    for (int q = 0; st == MMP_STATUS_OK && q < t.n; q++) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                const int8_t *ar = qa + i * ld + q * kp, *bc = qb + j * ld + q * kp;
                int64_t acc = 0;
                for (int64_t u = 0; u < kp; u++) acc += (int64_t)ar[u] * bc[u];
                if (acc > INT32_MAX || acc < INT32_MIN)
                    st = MMP_ERR(MMP_STATUS_INTERNAL, "reference: int32 overflow in a residue GEMM (kp %lld)",
                                 (long long)kp);
                d[q * mn + i * n + j] = ref_crt_reduce((int32_t)acc, (uint32_t)t.m[q], t.magic[q], (uint32_t)t.c16[q], (uint32_t)t.y[q]);
            }
        r->n_gemms++;
    }
    for (int64_t x = 0; st == MMP_STATUS_OK && x < mn; x++)
        ref_crt_accumulate_one(w->h, w->l, w->err, d, mn, &t, w->ea, w->fb, n, x);
    r->crt = t.n;
    free(qa); free(qb); free(d);
    return st;
}

/* The DGEMM route's products: binary64 slices, one DGEMM and one accumulation per pair. */
static mmp_status model_dgemm(mmp_ref_result *r, model *w, const ref_v2_plan *pl, int64_t m, int64_t n, int64_t k)
{
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    w->qa = malloc(mk * pl->sa * sizeof(double)); w->qb = malloc(kn * pl->sb * sizeof(double));
    w->p = malloc(mn * sizeof(double));
    if (!w->qa || !w->qb || !w->p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model slices)");
    for (size_t x = 0; x < mk; x++) { double last; ref_split(w->a64[x], w->ea[x / k], pl->beta, pl->sa, w->qa + x, mk, &last); }
    for (size_t x = 0; x < kn; x++) { double last; ref_split(w->b64[x], w->fb[x / k], pl->beta, pl->sb, w->qb + x, kn, &last); }
    for (int lvl = 2; lvl <= pl->levels; lvl++)
        for (int s = 1; s <= pl->sa; s++) {
            int t = lvl - s;
            if (t < 1 || t > pl->sb) continue;
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0, w->qb + (size_t)(t - 1) * kn,
                        (int)k, w->qa + (size_t)(s - 1) * mk, (int)k, 0.0, w->p, (int)n);
            r->n_gemms++;
            for (size_t x = 0; x < mn; x++) ref_v2_accumulate_one(w->h, w->l, w->err, w->p, w->ea, w->fb, n, pl->beta * lvl, (int64_t)x);
        }
    return MMP_STATUS_OK;
}

static mmp_status model_run(mmp_ref_result *r, model *w, const void *a, const void *b, const void *c,
                            const mmp_gemm *g, const mmp_ref_options *o, int threads)
{
    int64_t m = g->m, n = g->n, k = g->k;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    ref_v2_args f;
    memset(&f, 0, sizeof f);
    mmp_format_hd_init(&f.fa, g->a); mmp_format_hd_init(&f.fb, g->b); mmp_format_hd_init(&f.fc, g->c); mmp_format_hd_init(&f.fd, g->d);
    w->a64 = malloc(mk * sizeof(double)); w->b64 = malloc(kn * sizeof(double));
    w->ea = calloc(m, sizeof(int)); w->fb = calloc(n, sizeof(int)); w->bada = calloc(m, 1); w->badb = calloc(n, 1);
    w->sta = calloc(m, sizeof *w->sta); w->stb = calloc(n, sizeof *w->stb);
    if (!w->a64 || !w->b64 || !w->ea || !w->fb || !w->bada || !w->badb || !w->sta || !w->stb)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model)");
    for (size_t x = 0; x < mk; x++) w->a64[x] = ref_v2_decode_one(a, &f.fa, g->la, g->lda, m, k, 1, (int64_t)x);
    for (size_t x = 0; x < kn; x++) w->b64[x] = ref_v2_decode_one(b, &f.fb, g->lb, g->ldb, k, n, 0, (int64_t)x);
    int beta, sa0, sb0, imma = ref_plan_route(g, o);
    ref_slicing_route(&beta, &sa0, &sb0, k, ref_format_bits(g->a), ref_format_bits(g->b), o->slices, imma);
    for (int64_t i = 0; i < m; i++) {
        stats_serial(&w->sta[i], w->a64 + i * k, k, beta);
        w->ea[i] = w->sta[i].e; w->bada[i] = w->sta[i].n_bad > 0;
    }
    for (int64_t j = 0; j < n; j++) {
        stats_serial(&w->stb[j], w->b64 + j * k, k, beta);
        w->fb[j] = w->stb[j].e; w->badb[j] = w->stb[j].n_bad > 0;
    }
    ref_sample smp[REF_NSAMPLE];
    int ns = ref_plan_samples(smp, m, n);
    ref_plan_estimate(smp, ns, w->a64, w->b64, k);
    ref_v2_plan pl;
    ref_plan_make_route(&pl, g, o, w->sta, w->stb, smp, ns, REF_DEVICE_W_DOT, imma);
    r->imma = pl.imma;
    r->slices_a = pl.sa; r->slices_b = pl.sb; r->slice_bits = pl.beta; r->slice_levels = pl.levels;
    r->split.sparse = pl.sparse; r->split.n_remainders = pl.nnz_a + pl.nnz_b;
    MMP_TRY(nonfinite_lists(&w->nfa_ptr, &w->nfa_k, w->a64, w->sta, m, k));
    MMP_TRY(nonfinite_lists(&w->nfb_ptr, &w->nfb_k, w->b64, w->stb, n, k));
    if (pl.sparse) {
        w->ra_ptr = calloc(m + 1, sizeof(int64_t)); w->rb_ptr = calloc(n + 1, sizeof(int64_t));
        w->ra_k = malloc((pl.nnz_a + 1) * sizeof(int)); w->ra_v = malloc((pl.nnz_a + 1) * sizeof(double));
        w->rb_k = malloc((pl.nnz_b + 1) * sizeof(int)); w->rb_v = malloc((pl.nnz_b + 1) * sizeof(double));
        if (!w->ra_ptr || !w->rb_ptr || !w->ra_k || !w->ra_v || !w->rb_k || !w->rb_v)
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model lists)");
        for (int64_t i = 0; i < m; i++) w->ra_ptr[i + 1] = w->ra_ptr[i] + w->sta[i].cnt[pl.sa];
        for (int64_t j = 0; j < n; j++) w->rb_ptr[j + 1] = w->rb_ptr[j] + w->stb[j].cnt[pl.sb];
        build_list(w->ra_ptr, w->ra_k, w->ra_v, w->a64, m, k, w->ea, pl.beta, pl.sa);
        build_list(w->rb_ptr, w->rb_k, w->rb_v, w->b64, n, k, w->fb, pl.beta, pl.sb);
    } else {
        int tri = ref_plan_triangle(&pl);
        w->ra_max = malloc(m * sizeof(double)); w->a_sum = malloc(m * sizeof(double));
        w->rb_max = malloc(n * sizeof(double)); w->b_sum = malloc(n * sizeof(double));
        if (tri) {
            w->a_ss = malloc((size_t)m * pl.sa * sizeof(double));
            w->b_rl = malloc((size_t)n * (pl.sb + 1) * sizeof(double));
        }
        if (!w->ra_max || !w->a_sum || !w->rb_max || !w->b_sum || (tri && (!w->a_ss || !w->b_rl)))
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model bounds)");
        ref_plan_vectors(w->ra_max, w->a_sum, w->a_ss, NULL, w->sta, m, pl.sa, k);
        ref_plan_vectors(w->rb_max, w->b_sum, NULL, w->b_rl, w->stb, n, pl.sb, k);
    }
    w->h = calloc(mn, sizeof(double)); w->l = calloc(mn, sizeof(double)); w->err = calloc(mn, sizeof(double));
    if (!w->h || !w->l || !w->err) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model state)");
    MMP_TRY(pl.crt ? model_crt(r, w, &pl, m, n, k) : pl.imma ? model_imma(r, w, &pl, m, n, k)
                                                  : model_dgemm(r, w, &pl, m, n, k));
    f.a = a; f.b = b; f.c = c; f.la = g->la; f.lb = g->lb; f.lc = g->lc; f.lda = g->lda; f.ldb = g->ldb;
    f.ldc = g->ldc; f.m = m; f.n = n; f.k = k; f.alpha = g->alpha; f.beta = g->beta;
    f.sparse = pl.sparse; f.beta_bits = pl.beta; f.sb = pl.sb; f.ea = w->ea; f.fbx = w->fb;
    f.rowbad = w->bada; f.colbad = w->badb; f.ra_ptr = w->ra_ptr; f.rb_ptr = w->rb_ptr; f.ra_k = w->ra_k;
    f.rb_k = w->rb_k; f.ra_v = w->ra_v; f.rb_v = w->rb_v;
    f.drop = (ref_drop_view){pl.sa, pl.sb, pl.levels, w->ra_max, w->a_sum, w->rb_max, w->b_sum, w->a_ss, w->b_rl};
    f.nfa_ptr = w->nfa_ptr; f.nfb_ptr = w->nfb_ptr; f.nfa_k = w->nfa_k; f.nfb_k = w->nfb_k;
    f.zero_mode = ref_v2_zero_mode(g);
    f.kw = (k + 63) / 64;
    if (f.zero_mode == REF_V2_ZERO_MASK) {
        size_t wa = (size_t)m * f.kw, wb = (size_t)n * f.kw;
        w->za = malloc((wa + 1) * sizeof(uint64_t)); w->sa = malloc((wa + 1) * sizeof(uint64_t));
        w->zb = malloc((wb + 1) * sizeof(uint64_t)); w->sb = malloc((wb + 1) * sizeof(uint64_t));
        if (!w->za || !w->sa || !w->zb || !w->sb)
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model masks)");
        build_masks(w->za, w->sa, w->a64, m, k, f.kw);
        build_masks(w->zb, w->sb, w->b64, n, k, f.kw);
        f.zero_a = w->za; f.sign_a = w->sa; f.zero_b = w->zb; f.sign_b = w->sb;
    }
    int64_t nu = 0;
    w->und = malloc(mn * sizeof(int64_t));
    if (!w->und) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model)");
    for (size_t x = 0; x < mn; x++)
        if (!ref_v2_finish_one(w->h, w->l, w->err, &f, (int64_t)x)) w->und[nu++] = (int64_t)x;
    memcpy(r->d64, w->h, mn * sizeof(double));
    memcpy(r->dout, w->l, mn * sizeof(double));
    if (r->absbound) {   /* |A|, |B| into the slice planes, as the device does */
        if (!w->qa) w->qa = malloc(mk * sizeof(double));
        if (!w->qb) w->qb = malloc(kn * sizeof(double));
        if (!w->p) w->p = malloc(mn * sizeof(double));
        if (!w->qa || !w->qb || !w->p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (v2 model)");
        for (size_t x = 0; x < mk; x++) w->qa[x] = fabs(ref_v2_decode_one(a, &f.fa, g->la, g->lda, m, k, 1, (int64_t)x));
        for (size_t x = 0; x < kn; x++) w->qb[x] = fabs(ref_v2_decode_one(b, &f.fb, g->lb, g->ldb, k, n, 0, (int64_t)x));
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0, w->qb, (int)k, w->qa,
                    (int)k, 0.0, w->p, (int)n);
        for (size_t x = 0; x < mn; x++) r->absbound[x] = ref_v2_absbound_x(w->p[x], &f, (int64_t)x);
    }
    if (nu > 0 && ref_dot_wanted(g)) {
        model_view v = {g, &f, w->a64, w->b64};
        nu = model_dot(r, &v, w->und, nu);
    }
    return ref_mpfr_native_list(r, a, b, c, g, w->und, nu, threads);
}

mmp_status ref_v2_host_run(mmp_ref_result *r, const void *a, const void *b, const void *c, const mmp_gemm *g,
                           const mmp_ref_options *o, int threads)
{
    MMP_TRY(mmp_gemm_check(g));
    MMP_TRY(ref_result_alloc(r, g->m, g->n, o->want_absbound, 0));
    r->path = MMP_REF_PATH_CUDA;
    r->split.version = 2;
    double t0 = mmp_clock_now();
    model w;
    memset(&w, 0, sizeof w);
    mmp_status st = model_run(r, &w, a, b, c, g, o, threads);
    model_free(&w);
    if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
    r->time.total_s = mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}
