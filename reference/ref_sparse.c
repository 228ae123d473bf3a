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
 *    ref_split (the same digits as the planes); digits are stored as float, exact for
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
 * DGEMM. The densities of the planes come from a sample of rows and columns before anything is
 * made, the exact count of products (sum over k of A's column count times B's row count) once
 * the lists exist; either can send the products back to DGEMMs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_plan.h"

/* A product from the lists in DGEMM multiply-adds: a scalar scattered add into a row held in
 * L1 against a vectorised DGEMM's multiply-add (bench_reference with MMP_REF_LISTS=0 and =1
 * on the same operands measures it). */
#define REF_LIST_W 24.0
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
    sp_ent *a;                  /* made at [((s - 1) m + i) k + x], x < a_cnt; then packed */
    int64_t *a_at;              /* packed: row i of plane s from a[a_at[(s - 1) m + i]] */
    int32_t *b_cnt;             /* [((t - 1) nb + q) k + kk]: row kk of plane t in block q */
    sp_ent *b;                  /* made at [(((t - 1) nb + q) k + kk) jb + x]; then packed */
    int64_t *b_at;              /* packed: that row from b[b_at[((t - 1) nb + q) k + kk]] */
    int64_t *col_a;             /* [(s - 1) k + kk]: nonzero digits of A's plane s in column kk */
    int64_t *col_t;             /* per thread, the same, summed into col_a */
    double products;            /* the exact count over the plan's pairs */
};

static int pair_used(const ref_cert *c, int s, int t) { return s + t <= c->levels; }

/* Nonzero digits per plane (the fractions) in up to SAMPLE_VECTORS evenly spaced vectors of
 * length k at x + v k with scale exponents e[v]. */
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
    int pairs = 0;
    for (int s = 1; s <= c->sa; s++)
        for (int t = 1; t <= c->sb; t++) pairs += pair_used(c, s, t);
    return (double)pairs * (double)c->d->m * (double)c->d->n * (double)c->d->k;
}

int ref_sparse_wanted(const ref_cert *c, int *jb, int mode)
{
    const ref_data *d = c->d;
    if (mode == 2 || c->beta > REF_LIST_MAX_BETA || c->sa > REF_SMAX_DGEMM || c->sb > REF_SMAX_DGEMM ||
        d->k > INT32_MAX || d->n > INT32_MAX)
        return 0;
    double da[REF_SMAX_DGEMM], db[REF_SMAX_DGEMM], est = 0.0, db_all = 0.0;
    sample_density(da, d->a64, c->ea, d->m, d->k, c->beta, c->sa);
    sample_density(db, d->b64, c->fb, d->n, d->k, c->beta, c->sb);
    for (int t = 1; t <= c->sb; t++) db_all += db[t - 1];
    for (int s = 1; s <= c->sa; s++)
        for (int t = 1; t <= c->sb; t++)
            if (pair_used(c, s, t)) est += da[s - 1] * db[t - 1];
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
    for (int64_t i = b; i < e; i++) {
        for (int s = 0; s < sp->sa; s++) sp->a_cnt[(size_t)s * m + i] = 0;
        for (int64_t kk = 0; kk < k; kk++) {
            double q[REF_SMAX_DGEMM], last;
            ref_split(j->c->d->a64[(size_t)i * k + kk], j->c->ea[i], j->c->beta, sp->sa, q, 1, &last);
            for (int s = 0; s < sp->sa; s++) {
                if (q[s] == 0.0) continue;
                int32_t *cnt = &sp->a_cnt[(size_t)s * m + i];
                sp->a[((size_t)s * m + i) * k + *cnt] = (sp_ent){(int32_t)kk, (float)q[s]};
                (*cnt)++;
                col[(size_t)s * k + kk]++;
            }
        }
    }
}

/* Rows kk in [b, e) of B's planes, every block: column j of b64 is contiguous along k, so a
 * chunk of k reads a short run of each column; rows fill in increasing j. */
static void b_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    make_job *j = ctx;
    ref_sparse *sp = j->sp;
    int64_t k = sp->k;
    for (int t = 0; t < sp->sb; t++)
        for (int q = 0; q < sp->nb; q++)
            for (int64_t kk = b; kk < e; kk++) sp->b_cnt[((size_t)t * sp->nb + q) * k + kk] = 0;
    for (int64_t col = 0; col < sp->n; col++) {
        int q = (int)(col / sp->jb);
        for (int64_t kk = b; kk < e; kk++) {
            double dq[REF_SMAX_DGEMM], last;
            ref_split(j->c->d->b64[(size_t)col * k + kk], j->c->fb[col], j->c->beta, sp->sb, dq, 1, &last);
            for (int t = 0; t < sp->sb; t++) {
                if (dq[t] == 0.0) continue;
                size_t row = ((size_t)t * sp->nb + q) * k + kk;
                sp->b[row * sp->jb + sp->b_cnt[row]] = (sp_ent){(int32_t)(col - (int64_t)q * sp->jb), (float)dq[t]};
                sp->b_cnt[row]++;
            }
        }
    }
}

/* Rows made at a fixed capacity (cap entries each) into one packed array: a row's cache lines
 * are then next to the next row's, not one capacity apart (which would map the rows of a block
 * onto a few cache sets). */
static mmp_status pack(sp_ent **ents, int64_t **at, const int32_t *cnt, size_t rows, size_t cap)
{
    *at = malloc((rows + 1) * sizeof(int64_t));
    if (!*at) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (slice lists)");
    int64_t total = 0;
    for (size_t r = 0; r < rows; r++) { (*at)[r] = total; total += cnt[r]; }
    (*at)[rows] = total;
    sp_ent *packed = ref_big_alloc((size_t)(total > 0 ? total : 1) * sizeof(sp_ent), 0);
    if (!packed) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: out of memory (slice lists)");
    for (size_t r = 0; r < rows; r++) memcpy(packed + (*at)[r], *ents + r * cap, (size_t)cnt[r] * sizeof(sp_ent));
    ref_big_free(*ents);
    *ents = packed;
    return MMP_STATUS_OK;
}

void ref_sparse_free(ref_sparse *sp)
{
    if (!sp) return;
    free(sp->a_cnt); free(sp->b_cnt); free(sp->col_a); free(sp->col_t); free(sp->a_at); free(sp->b_at);
    ref_big_free(sp->a); ref_big_free(sp->b);
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
    size_t mk = (size_t)d->m * d->k, kb = (size_t)d->k * sp->nb;
    sp->a_cnt = malloc((size_t)c->sa * d->m * sizeof(int32_t));
    sp->b_cnt = malloc((size_t)c->sb * kb * sizeof(int32_t));
    sp->col_a = calloc((size_t)c->sa * d->k, sizeof(int64_t));
    sp->col_t = calloc((size_t)threads * c->sa * d->k, sizeof(int64_t));
    sp->a = ref_big_alloc((size_t)c->sa * mk * sizeof(sp_ent), 0);
    sp->b = ref_big_alloc((size_t)c->sb * kb * jb * sizeof(sp_ent), 0);
    if (!sp->a_cnt || !sp->b_cnt || !sp->col_a || !sp->col_t || !sp->a || !sp->b)
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the slice lists for %lldx%lldx%lld",
                       (long long)d->m, (long long)d->n, (long long)d->k);
    make_job j = {sp, c};
    mmp_parallel_for(threads, d->m, 16, a_part, &j);
    mmp_parallel_for(threads, d->k, 16, b_part, &j);
    for (int x = 0; x < threads; x++)
        for (size_t y = 0; y < (size_t)c->sa * d->k; y++) sp->col_a[y] += sp->col_t[(size_t)x * c->sa * d->k + y];
    mmp_status st = pack(&sp->a, &sp->a_at, sp->a_cnt, (size_t)c->sa * d->m, (size_t)d->k);
    if (st == MMP_STATUS_OK) st = pack(&sp->b, &sp->b_at, sp->b_cnt, (size_t)c->sb * kb, (size_t)jb);
    if (st != MMP_STATUS_OK) return st;
    for (int s = 1; s <= c->sa; s++)
        for (int t = 1; t <= c->sb; t++) {
            if (!pair_used(c, s, t)) continue;
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
        int ex = c->ea[i] + c->fb[col] - c->beta * level;
        if (ex < -1022 || ex > 970) { c->err[x] = INFINITY; continue; }
        ref_acc(&c->h[x], &c->l[x], &c->err[x], p[col - j0] * ref_pow2(ex));
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
                    const sp_ent *ra = sp->a + sp->a_at[(size_t)(s - 1) * m + i];
                    const int64_t *bat = sp->b_at + ((size_t)(t - 1) * sp->nb + q) * k;
                    for (int64_t x = 0; x < na; x++) {
                        double qa = ra[x].q;
                        const int64_t *r = bat + ra[x].idx;
                        const sp_ent *rb = sp->b + r[0];
                        int32_t nbq = (int32_t)(r[1] - r[0]);
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
