/* ref_base.c — the reference paths' shared low pieces: loading A, B, C into binary64, the
 * result record, options, and the host entry points of the rounding decision (ref_round.h).
 * Everything above (the MPFR, integer, certified and device paths, and ref_gemm.c's entry
 * point) calls down into this file; it calls only ref_alloc.c and core. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/format.h"
#include "ref_internal.h"
#include "ref_round.h"

/* ---- loading into binary64, column-major ---- */

typedef struct {
    const void *src;
    mmp_format f;
    mmp_layout l;
    int64_t ld, rows;
    double *dst;   /* column-major rows x cols, or row-major when row_major */
    int row_major;
    int64_t cols;
    const double *table;   /* decode_table's, or NULL */
    int bits16;            /* the table's format is 16 bits wide: read the pattern directly */
} load_job;

/* [b, e) of the outer dimension: rows when row_major, else columns. Formats of at most 16
 * bits read their values from j->table (every bit pattern decoded once) when there is one. */
static void load_part(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    load_job *j = ctx;
    int64_t inner = j->row_major ? j->cols : j->rows;
    int native = j->f == MMP_FORMAT_FP32 || j->f == MMP_FORMAT_FP64;   /* a C conversion */
    for (int64_t o = b; o < e; o++)
        for (int64_t t = 0; t < inner; t++) {
            int64_t r = j->row_major ? o : t, col = j->row_major ? t : o;
            size_t at = mmp_gemm_index(j->l, j->ld, r, col);
            double v;
            if (j->table && j->bits16) {
                uint16_t u;
                memcpy(&u, (const unsigned char *)j->src + 2 * at, 2);
                v = j->table[u];
            } else
                v = j->table ? j->table[mmp_format_load_bits(j->src, at, j->f)]
                    : !native ? mmp_format_load(j->src, at, j->f)
                    : j->f == MMP_FORMAT_FP32 ? (double)((const float *)j->src)[at]
                                              : ((const double *)j->src)[at];
            j->dst[o * inner + t] = v;
        }
}

/* Every value of a format of at most 16 bits, by bit pattern (mmp_format_decode), when the
 * matrix has more elements than the table: NULL otherwise, or without memory. */
static double *decode_table(mmp_format f, int64_t elements)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (!fi || fi->storage_bits > 16 || f == MMP_FORMAT_FP32 || f == MMP_FORMAT_FP64) return NULL;
    size_t size = (size_t)1 << fi->storage_bits;
    if ((int64_t)size > elements) return NULL;
    double *t = malloc(size * sizeof(double));
    if (t)
        for (size_t x = 0; x < size; x++) t[x] = mmp_format_decode(x, f);
    return t;
}

static mmp_status load_matrix(double **out, const void *src, mmp_format f, mmp_layout l, int64_t ld,
                              int64_t rows, int64_t cols, int row_major, int threads)
{
    double *p = malloc((size_t)rows * (size_t)cols * sizeof(double));
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate %lld x %lld doubles",
                           (long long)rows, (long long)cols);
    double *table = decode_table(f, rows * cols);
    const mmp_format_info *fi = mmp_format_get_info(f);
    load_job j = {src, f, l, ld, rows, p, row_major, cols, table, fi && fi->storage_bits == 16};
    mmp_parallel_for(threads, row_major ? rows : cols, 16, load_part, &j);
    free(table);
    *out = p;
    return MMP_STATUS_OK;
}

void ref_data_free(ref_data *d)
{
    free(d->a64); free(d->b64); free(d->c64);
    d->a64 = d->b64 = d->c64 = NULL;
}

mmp_status ref_data_load(ref_data *d, const void *a, const void *b, const void *c, const mmp_gemm *g,
                         int threads)
{
    memset(d, 0, sizeof *d);
    d->g = g; d->m = g->m; d->n = g->n; d->k = g->k; d->threads = threads;
    mmp_status st = load_matrix(&d->a64, a, g->a, g->la, g->lda, g->m, g->k, 1, threads);
    if (st == MMP_STATUS_OK) st = load_matrix(&d->b64, b, g->b, g->lb, g->ldb, g->k, g->n, 0, threads);
    if (st == MMP_STATUS_OK && g->beta != 0.0)
        st = load_matrix(&d->c64, c, g->c, g->lc, g->ldc, g->m, g->n, 1, threads);
    if (st != MMP_STATUS_OK) ref_data_free(d);
    return st;
}

/* ---- results ---- */

void mmp_ref_options_init(mmp_ref_options *o)
{
    memset(o, 0, sizeof *o);
    o->path = MMP_REF_PATH_CERTIFIED;
}

void mmp_ref_result_init(mmp_ref_result *r) { memset(r, 0, sizeof *r); }

void mmp_ref_result_clear(mmp_ref_result *r)
{
    ref_big_free(r->d64); ref_big_free(r->dout); ref_big_free(r->absbound); ref_big_free(r->i64);
    if (r->dev_d64) ref_cuda2_free(r->dev_d64);
    if (r->dev_dout) ref_cuda2_free(r->dev_dout);
    if (r->dev_absbound) ref_cuda2_free(r->dev_absbound);
    mmp_ref_result_init(r);
}

mmp_status ref_result_alloc(mmp_ref_result *r, int64_t m, int64_t n, int want_abs, int want_i64)
{
    size_t cnt = (size_t)m * (size_t)n;
    mmp_ref_result_clear(r);
    r->m = m; r->n = n;
    r->d64 = ref_big_alloc(cnt * sizeof(double), 0);
    r->dout = ref_big_alloc(cnt * sizeof(double), 0);
    if (want_abs) r->absbound = ref_big_alloc(cnt * sizeof(double), 0);
    if (want_i64) r->i64 = ref_big_alloc(cnt * sizeof(int64_t), 0);
    if (!r->d64 || !r->dout || (want_abs && !r->absbound) || (want_i64 && !r->i64)) {
        mmp_ref_result_clear(r);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the %lld x %lld result",
                       (long long)m, (long long)n);
    }
    return MMP_STATUS_OK;
}

/* ---- rounding decisions ---- */

int ref_format_bits(mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    if (!fi) return 53;
    if (fi->is_float) return fi->precision;
    return fi->storage_bits;   /* int4: 4, int8: 8, int32: 32 (magnitude bits <= these) */
}

void ref_dot_flags(int *exact_products, int *int_inputs, const mmp_gemm *g)
{
    *exact_products = ref_format_bits(g->a) <= 26 && ref_format_bits(g->b) <= 26;
    *int_inputs = !mmp_format_get_info(g->a)->is_float && !mmp_format_get_info(g->b)->is_float;
}

int ref_dot_wanted(const mmp_gemm *g)
{
    const char *e = getenv("MMP_REF_DOT");
    return mmp_format_get_info(g->d)->is_float && !(e && strcmp(e, "0") == 0);
}

/* The decisions live in ref_round.h (__host__ __device__: the device path decides with the
 * same code); these are the host entry points. */
double mmp_ref_round_out(double d64, int ternary, mmp_format f)
{
    mmp_format_hd ff;
    if (!mmp_format_hd_init(&ff, f)) return NAN;
    return ref_round_out_hd(d64, ternary, &ff);
}

int ref_decide(double *d64, double *dout, double sh, double sl, double E, mmp_format f)
{
    mmp_format_hd ff;
    if (!mmp_format_hd_init(&ff, f)) return 0;
    return ref_decide_hd(d64, dout, sh, sl, E, &ff);
}
