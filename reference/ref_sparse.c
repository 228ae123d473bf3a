/* ref_sparse.c — the CPU certified path's slice products (ref_certified.c, step 3) from lists
 * of the planes' nonzero digits instead of DGEMMs, when the planes are mostly zero.
 *
 * Why: where a row's exponents spread over many binades (`wide`), its entries fall into
 * different slices, so each plane holds a small part of them (about 1/8 for bf16 over 190
 * binades with 22-bit slices) while the bound needs a triangle of 10 pairs. A DGEMM multiplies
 * the zeros too; here only products of two nonzero digits are formed.
 *
 * What:
 *  - A's plane s as rows i (each nonzero digit with its k), B's plane t as rows k (each with
 *    its j) cut into blocks of jb columns, so that one block of every plane stays in the
 *    last-level cache while rows of A pass over it. Both are split straight from a64/b64 with
 *    ref_split (the same digits as the planes), CHUNK rows at a time, and each chunk's rows are
 *    kept in one allocation of their exact size; digits are stored as float, exact for
 *    beta <= 25 (|q| <= 2^24).
 *  - For row i, block q and level L: P(j) = sum over the pairs s + t = L and the k of both
 *    lists of qa qb; then P(j) 2^(E_i + F_j - beta L) goes into (h, l, err) as the DGEMM
 *    route's accumulation does (an exponent outside [-1022, 970] makes err infinite), levels in
 *    increasing L (largest weights first).
 *  - Exact: a digit is an integer of magnitude <= 2^(beta - 1), so a partial sum of T products
 *    is an integer of magnitude <= T 2^(2 beta - 2). T is bounded by the row's nonzero digits
 *    in the pairs added since the last flush, and P is flushed before that count could pass
 *    2^(55 - 2 beta) (>= K by the choice of beta): every sum stays <= 2^53, in any order.
 * Cost (ref_sparse_wanted): a product from the lists costs about REF_LIST_W multiply-adds of a
 * DGEMM (ref_plan.h). The densities of the planes come from a sample of rows and columns before
 * the plan, which weighs its candidates with them (ref_plan_make_lists: cheap pairs may buy
 * more levels and fewer open elements); the exact count of products (sum over k of A's column
 * count times B's row count) once the lists exist can still send the products back to DGEMMs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_plan.h"

/* B's lists of one column block, every plane, fit in this many bytes (a share of the last-level
 * cache); blocks are at least REF_LIST_MIN_COLS wide, since each row of a block costs a few
 * loads whatever its length. */
#define REF_LIST_BLOCK_BYTES (8.0 * 1024.0 * 1024.0)
#define REF_LIST_MIN_COLS 256
#define REF_LIST_MAX_BETA 25
#define SAMPLE_VECTORS 32

typedef struct {
    int32_t idx;   /* k (A's rows) or j - j0 (B's rows in a block) */
    float q;       /* the digit */
} sp_ent;

struct ref_sparse {
    int sa, sb, jb, nb;         /* B's columns in nb blocks of jb */
    int64_t m, n, k;
    int32_t *a_cnt;             /* [(s - 1) m + i]: nonzero digits of row i in plane s */
    sp_ent **a_row;             /* the same index: where they are */
    int32_t *b_cnt;             /* [((t - 1) nb + q) k + kk]: row kk of plane t in block q */
    sp_ent **b_row;             /* the same index: where they are */
    sp_ent **chunks;            /* per chunk of CHUNK rows of A (first) or of k (then): its rows */
    int64_t a_chunks, b_chunks;
    sp_ent *scratch;            /* per thread: one chunk's rows at a fixed capacity */
    size_t scratch_per;
    int64_t *col_a;             /* [(s - 1) k + kk]: nonzero digits of A's plane s in column kk */
    int64_t *col_t;             /* per thread, the same, summed into col_a */
    int failed;                 /* a chunk's allocation failed */
    double products;            /* the exact count over the plan's pairs */
};

/* Rows are split CHUNK at a time into a thread's scratch (each at a fixed capacity), then
 * copied into one allocation of the chunk's exact size: no array is ever sized for every
 * digit of every plane, and a chunk's rows lie next to each other. */
#define CHUNK 16

/* A chunk's count rows (cap entries apart in sc, with counts cnt[r]) into one exact
 * allocation; row r then starts at rows[r]. */
static sp_ent *keep_chunk(const sp_ent *sc, size_t cap, const int32_t *cnt, sp_ent **rows, size_t count)
{
    size_t total = 0;
    for (size_t r = 0; r < count; r++) total += (size_t)cnt[r];
    sp_ent *block = malloc((total > 0 ? total : 1) * sizeof(sp_ent)), *at = block;
    if (!block) return NULL;
    for (size_t r = 0; r < count; r++) {
        memcpy(at, sc + r * cap, (size_t)cnt[r] * sizeof(sp_ent));
        rows[r] = at;
        at += cnt[r];
    }
    return block;
}

/* Nonzero digits per plane (the fractions) in up to SAMPLE_VECTORS evenly spaced vectors of
 * length k at x + v k with scale exponents e[v], planes 1 .. S. */
static void sample_density(double *dens, const double *x, const int *e, int64_t count, int64_t k, int beta, int S)
{
    int64_t nv = count < SAMPLE_VECTORS ? count : SAMPLE_VECTORS, nz[REF_SMAX_DGEMM] = {0};
    for (int64_t u = 0; u < nv; u++) {
        int64_t v = u * count / nv;
        for (int64_t kk = 0; kk < k; kk++) {
            double q[REF_SMAX_DGEMM], last;
            ref_split(x[v * k + kk], e[v], beta, S, q, 1, &last);
            for (int s = 0; s < S; s++) nz[s] += q[s] != 0.0;
        }
    }
    for (int s = 0; s < S; s++) dens[s] = nv > 0 ? (double)nz[s] / (double)(nv * k) : 0.0;
}

static double dgemm_cost(const ref_cert *c)   /* the DGEMM route's multiply-adds */
{
    return ref_plan_pairs(c->sa, c->sb, c->levels) * (double)c->d->m * (double)c->d->n * (double)c->d->k;
}

int ref_sparse_allowed(const ref_cert *c, int mode)
{
    const ref_data *d = c->d;
    return mode != 2 && c->beta <= REF_LIST_MAX_BETA && d->k <= INT32_MAX && d->n <= INT32_MAX;
}

void ref_sparse_densities(double *da, double *db, const ref_cert *c)
{
    const ref_data *d = c->d;
    sample_density(da, d->a64, c->ea, d->m, d->k, c->beta, REF_SMAX_DGEMM);
    sample_density(db, d->b64, c->fb, d->n, d->k, c->beta, REF_SMAX_DGEMM);
}

int ref_sparse_wanted(const ref_cert *c, const double *da, const double *db, int *jb, int mode)
{
    const ref_data *d = c->d;
    if (!ref_sparse_allowed(c, mode) || c->sa > REF_SMAX_DGEMM || c->sb > REF_SMAX_DGEMM) return 0;
    double est = ref_plan_list_share(c->sa, c->sb, c->levels, da, db), db_all = 0.0;
    for (int t = 1; t <= c->sb; t++) db_all += db[t - 1];
    double cols = REF_LIST_BLOCK_BYTES / (sizeof(sp_ent) * (double)d->k * (db_all > 0.02 ? db_all : 0.02));
    int64_t w = cols >= (double)d->n ? d->n : ((int64_t)cols / 16) * 16;
    if (w < REF_LIST_MIN_COLS) w = d->n < REF_LIST_MIN_COLS ? d->n : REF_LIST_MIN_COLS;
    *jb = (int)w;
    return mode == 1 || est * (double)d->m * d->n * d->k * REF_LIST_W < dgemm_cost(c);
}

/* Rows of A's planes, from a64 (row i contiguous along k). */
typedef struct {
    ref_sparse *sp;
    const ref_cert *c;
} make_job;

static void a_part(void *ctx, int64_t b, int64_t e, int tid)
{
    make_job *j = ctx;
    ref_sparse *sp = j->sp;
    int64_t m = sp->m, k = sp->k;
    int64_t *col = sp->col_t + (size_t)tid * sp->sa * k;
    sp_ent *sc = sp->scratch + (size_t)tid * sp->scratch_per;   /* [(s * CHUNK + r) k + x] */
    for (int64_t c0 = b; c0 < e; c0 += CHUNK) {
        int64_t c1 = c0 + CHUNK < e ? c0 + CHUNK : e;
        for (int64_t i = c0; i < c1; i++) {
            for (int s = 0; s < sp->sa; s++) sp->a_cnt[(size_t)s * m + i] = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double q[REF_SMAX_DGEMM], last;
                ref_split(j->c->d->a64[(size_t)i * k + kk], j->c->ea[i], j->c->beta, sp->sa, q, 1, &last);
                for (int s = 0; s < sp->sa; s++) {
                    if (q[s] == 0.0) continue;
                    int32_t *cnt = &sp->a_cnt[(size_t)s * m + i];
                    sc[((size_t)s * CHUNK + (size_t)(i - c0)) * k + *cnt] = (sp_ent){(int32_t)kk, (float)q[s]};
                    (*cnt)++;
                    col[(size_t)s * k + kk]++;
                }
            }
        }
        for (int s = 0; s < sp->sa; s++) {   /* rows of plane s: CHUNK apart in the scratch */
            sp_ent *block = keep_chunk(sc + (size_t)s * CHUNK * k, (size_t)k, sp->a_cnt + (size_t)s * m + c0,
                                       sp->a_row + (size_t)s * m + c0, (size_t)(c1 - c0));
            if (!block) { sp->failed = 1; return; }
            sp->chunks[(c0 / CHUNK) * sp->sa + s] = block;
        }
    }
}

/* Rows kk in [b, e) of B's planes, every block: column j of b64 is contiguous along k, so a
 * chunk of k reads a short run of each column; rows fill in increasing j. */
static void b_part(void *ctx, int64_t b, int64_t e, int tid)
{
    make_job *j = ctx;
    ref_sparse *sp = j->sp;
    int64_t k = sp->k;
    size_t cap = (size_t)sp->jb;
    sp_ent *sc = sp->scratch + (size_t)tid * sp->scratch_per;   /* [((t nb + q) CHUNK + r) jb + x] */
    for (int64_t c0 = b; c0 < e; c0 += CHUNK) {
        int64_t c1 = c0 + CHUNK < e ? c0 + CHUNK : e;
        for (int t = 0; t < sp->sb; t++)
            for (int q = 0; q < sp->nb; q++)
                for (int64_t kk = c0; kk < c1; kk++) sp->b_cnt[((size_t)t * sp->nb + q) * k + kk] = 0;
        for (int64_t col = 0; col < sp->n; col++) {
            int q = (int)(col / sp->jb);
            for (int64_t kk = c0; kk < c1; kk++) {
                double dq[REF_SMAX_DGEMM], last;
                ref_split(j->c->d->b64[(size_t)col * k + kk], j->c->fb[col], j->c->beta, sp->sb, dq, 1, &last);
                for (int t = 0; t < sp->sb; t++) {
                    if (dq[t] == 0.0) continue;
                    int32_t *cnt = &sp->b_cnt[((size_t)t * sp->nb + q) * k + kk];
                    size_t row = ((size_t)t * sp->nb + q) * CHUNK + (size_t)(kk - c0);
                    sc[row * cap + *cnt] = (sp_ent){(int32_t)(col - (int64_t)q * sp->jb), (float)dq[t]};
                    (*cnt)++;
                }
            }
        }
        for (int tq = 0; tq < sp->sb * sp->nb; tq++) {
            size_t first = (size_t)tq * k + (size_t)c0;
            sp_ent *block = keep_chunk(sc + (size_t)tq * CHUNK * cap, cap, sp->b_cnt + first, sp->b_row + first,
                                       (size_t)(c1 - c0));
            if (!block) { sp->failed = 1; return; }
            sp->chunks[sp->a_chunks * sp->sa + (c0 / CHUNK) * sp->sb * sp->nb + tq] = block;
        }
    }
}

void ref_sparse_free(ref_sparse *sp)
{
    if (!sp) return;
    for (int64_t x = 0; sp->chunks && x < sp->a_chunks * sp->sa + sp->b_chunks * sp->sb * sp->nb; x++)
        free(sp->chunks[x]);
    free(sp->chunks); free(sp->a_cnt); free(sp->a_row); free(sp->b_cnt); free(sp->b_row);
    free(sp->col_a); free(sp->col_t); free(sp->scratch);
    free(sp);
}

mmp_status ref_sparse_make(ref_sparse **out, const ref_cert *c, int jb)
{
    const ref_data *d = c->d;
    int threads = mmp_parallel_threads(d->threads);
    ref_sparse *sp = calloc(1, sizeof *sp);
    *out = sp;
    if (!sp) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (slice lists)");
    sp->sa = c->sa; sp->sb = c->sb; sp->m = d->m; sp->n = d->n; sp->k = d->k;
    sp->jb = jb; sp->nb = (int)((d->n + jb - 1) / jb);
    sp->a_chunks = (d->m + CHUNK - 1) / CHUNK;
    sp->b_chunks = (d->k + CHUNK - 1) / CHUNK;
    size_t a_rows = (size_t)c->sa * d->m, b_rows = (size_t)c->sb * sp->nb * d->k;
    size_t per_a = (size_t)c->sa * CHUNK * d->k, per_b = (size_t)c->sb * sp->nb * CHUNK * jb;
    sp->scratch_per = per_a > per_b ? per_a : per_b;
    sp->a_cnt = malloc(a_rows * sizeof(int32_t)); sp->a_row = malloc(a_rows * sizeof(sp_ent *));
    sp->b_cnt = malloc(b_rows * sizeof(int32_t)); sp->b_row = malloc(b_rows * sizeof(sp_ent *));
    sp->chunks = calloc((size_t)(sp->a_chunks * c->sa + sp->b_chunks * c->sb * sp->nb), sizeof(sp_ent *));
    sp->col_a = calloc((size_t)c->sa * d->k, sizeof(int64_t));
    sp->col_t = calloc((size_t)threads * c->sa * d->k, sizeof(int64_t));
    sp->scratch = malloc((size_t)threads * sp->scratch_per * sizeof(sp_ent));
    if (!sp->a_cnt || !sp->a_row || !sp->b_cnt || !sp->b_row || !sp->chunks || !sp->col_a || !sp->col_t ||
        !sp->scratch)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the slice lists for %lldx%lldx%lld",
                       (long long)d->m, (long long)d->n, (long long)d->k);
    make_job j = {sp, c};
    mmp_parallel_for(threads, d->m, CHUNK, a_part, &j);
    mmp_parallel_for(threads, d->k, CHUNK, b_part, &j);
    free(sp->scratch);
    sp->scratch = NULL;
    if (sp->failed)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the slice lists for %lldx%lldx%lld",
                       (long long)d->m, (long long)d->n, (long long)d->k);
    for (int x = 0; x < threads; x++)
        for (size_t y = 0; y < (size_t)c->sa * d->k; y++) sp->col_a[y] += sp->col_t[(size_t)x * c->sa * d->k + y];
    for (int s = 1; s <= c->sa; s++)
        for (int t = 1; t <= c->sb; t++) {
            if (s + t > c->levels) continue;
            const int64_t *ca = sp->col_a + (size_t)(s - 1) * d->k;
            for (int q = 0; q < sp->nb; q++) {
                const int32_t *cb = sp->b_cnt + ((size_t)(t - 1) * sp->nb + q) * d->k;
                for (int64_t kk = 0; kk < d->k; kk++) sp->products += (double)ca[kk] * (double)cb[kk];
            }
        }
    return MMP_STATUS_OK;
}

int ref_sparse_worth(const ref_sparse *sp, const ref_cert *c, int mode)
{
    return mode == 1 || sp->products * REF_LIST_W < dgemm_cost(c);
}

double ref_sparse_count(const ref_sparse *sp) { return sp->products; }

/* ---- the products ---- */

typedef struct {
    ref_cert *c;
    const ref_sparse *sp;
    double *scratch;   /* per thread: jb doubles */
    int64_t row_chunks;
} prod_job;

#define ROW_CHUNK 16

static void flush(ref_cert *c, const double *p, int64_t i, int64_t j0, int64_t j1, int level)
{
    int64_t n = c->d->n;
    for (int64_t col = j0; col < j1; col++) {
        size_t x = (size_t)i * n + (size_t)col;
        ref_acc_scaled(&c->h[x], &c->l[x], &c->err[x], p[col - j0], c->ea[i] + c->fb[col] - c->beta * level);
    }
}

static void prod_part(void *ctx, int64_t b, int64_t e, int tid)
{
    prod_job *j = ctx;
    ref_cert *c = j->c;
    const ref_sparse *sp = j->sp;
    int64_t m = sp->m, k = sp->k, limit = (int64_t)1 << (55 - 2 * c->beta);
    double *p = j->scratch + (size_t)tid * sp->jb;
    for (int64_t task = b; task < e; task++) {
        int q = (int)(task / j->row_chunks);
        int64_t i0 = task % j->row_chunks * ROW_CHUNK, i1 = i0 + ROW_CHUNK < m ? i0 + ROW_CHUNK : m;
        int64_t j0 = (int64_t)q * sp->jb, j1 = j0 + sp->jb < sp->n ? j0 + sp->jb : sp->n, w = j1 - j0;
        for (int64_t i = i0; i < i1; i++)
            for (int lvl = 2; lvl <= c->levels; lvl++) {
                int64_t terms = 0;
                int open = 0;
                for (int s = 1; s <= sp->sa && s < lvl; s++) {
                    int t = lvl - s;
                    if (t > sp->sb) continue;
                    int64_t na = sp->a_cnt[(size_t)(s - 1) * m + i];
                    if (!open || terms + na > limit) {
                        if (open) flush(c, p, i, j0, j1, lvl);
                        memset(p, 0, (size_t)w * sizeof(double));
                        terms = 0;
                        open = 1;
                    }
                    terms += na;
                    const sp_ent *ra = sp->a_row[(size_t)(s - 1) * m + i];
                    size_t brow = ((size_t)(t - 1) * sp->nb + q) * k;
                    for (int64_t x = 0; x < na; x++) {
                        double qa = ra[x].q;
                        if (x + 2 < na) {   /* the row after next: its start is a cache miss */
                            const char *nx = (const char *)sp->b_row[brow + (size_t)ra[x + 2].idx];
                            __builtin_prefetch(nx);
                            __builtin_prefetch(nx + 64);
                        }
                        const sp_ent *rb = sp->b_row[brow + (size_t)ra[x].idx];
                        int32_t nbq = sp->b_cnt[brow + (size_t)ra[x].idx];
                        for (int32_t y = 0; y < nbq; y++) p[rb[y].idx] += qa * (double)rb[y].q;
                    }
                }
                if (open) flush(c, p, i, j0, j1, lvl);
            }
    }
}

mmp_status ref_sparse_run(ref_cert *c, const ref_sparse *sp)
{
    int threads = mmp_parallel_threads(c->d->threads);
    double *scratch = malloc((size_t)threads * sp->jb * sizeof(double));
    if (!scratch) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (slice lists)");
    prod_job j = {c, sp, scratch, (sp->m + ROW_CHUNK - 1) / ROW_CHUNK};
    mmp_parallel_for(threads, (int64_t)sp->nb * j.row_chunks, 1, prod_part, &j);
    free(scratch);
    return MMP_STATUS_OK;
}
