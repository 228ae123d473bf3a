/* runner_stages.c — the runner's per-element stages, over the host's cores: input generation,
 * the unwritten / nondeterminism scan (and the poison patterns they share with runner_case.c).
 * Work is cut into FIXED chunks that do not depend on the thread count, and per-chunk partial
 * results are combined in chunk order, so every count and "first position" is the same on 1 or
 * 64 threads. Sub-byte formats (neighbours share a byte) run on one thread. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "runner_internal.h"

/* Poison (float outputs) and the two sentinels (integer outputs), as raw bits. */
uint64_t mmp_runner_poison_bits(mmp_format f, int run)
{
    switch (f) {
    case MMP_FORMAT_FP64: return 0x7FFDBADBADBADBADull;
    case MMP_FORMAT_FP32: return 0x7FDADBADull;
    case MMP_FORMAT_TF32: return 0x7FDAC000ull;
    case MMP_FORMAT_FP16: return 0x7EADull;
    case MMP_FORMAT_BF16: return 0x7FDAull;
    case MMP_FORMAT_E4M3: return 0x7Full;   /* its only NaN */
    case MMP_FORMAT_E5M2: return 0x7Eull;
    case MMP_FORMAT_INT32: return run ? 0xA5A5A5A5ull : 0x5A5A5A5Aull;
    case MMP_FORMAT_INT8: case MMP_FORMAT_UINT8: return run ? 0xA5 : 0x5A;
    default: return run ? 0xA : 0x5;        /* 4-bit */
    }
}

/* Lines (rows of a row-major buffer, columns of a column-major one) per chunk: ~64K elements. */
int64_t mmp_runner_line_chunk(int64_t inner) { return inner >= 65536 ? 1 : 65536 / (inner > 0 ? inner : 1); }

typedef struct {
    const mmp_dist_ctx *x;
    mmp_buffer *b;
    int mat;
} fill_job;

/* mmp_parallel_fn: storage lines [lo, hi) of f->b filled from the case's distribution */
static void fill_lines(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    fill_job *f = ctx;
    mmp_buffer *b = f->b;
    void *data = mmp_buffer_host(b);
    int row = b->l == MMP_LAYOUT_ROW;
    int64_t inner = row ? b->cols : b->rows;
    for (int64_t o = lo; o < hi; o++)
        for (int64_t q = 0; q < inner; q++) {
            int64_t i = row ? o : q, j = row ? q : o;
            mmp_format_store_bits(data, mmp_gemm_index(b->l, b->ld, i, j), mmp_dist_hd_bits(f->x, f->mat, i, j), b->f);
        }
}

void mmp_runner_fill(mmp_buffer *b, const mmp_dist_ctx *x, int mat)
{
    fill_job f = {x, b, mat};
    int row = b->l == MMP_LAYOUT_ROW;
    int64_t outer = row ? b->rows : b->cols, inner = row ? b->cols : b->rows;
    if (mmp_format_get_info(b->f)->storage_bits < 8) fill_lines(&f, 0, outer, 0);
    else mmp_parallel_for(mmp_parallel_threads(0), outer, mmp_runner_line_chunk(inner), fill_lines, &f);
}

mmp_status mmp_case_fill(void *dst, const mmp_case *c, int mat)
{
    if (!dst || !c || !c->kernel || mat < 0 || mat > 2)
        return MMP_ERR(MMP_STATUS_INVALID, "case fill: NULL argument or operand %d not A, B or C", mat);
    const mmp_kernel_desc *k = c->kernel;
    mmp_buffer b;
    memset(&b, 0, sizeof b);
    b.f = (mmp_format)(mat == 0 ? k->a_format : mat == 1 ? k->b_format : k->c_format);
    b.l = mat == 0 ? c->la : mat == 1 ? c->lb : c->lc;
    b.ld = mat == 0 ? c->lda : mat == 1 ? c->ldb : c->ldc;
    b.rows = mat == 1 ? c->k : c->m;
    b.cols = mat == 0 ? c->k : c->n;
    b.image = (unsigned char *)dst - MMP_GUARD_BYTES;   /* no guards: mmp_buffer_host(&b) == dst */
    mmp_dist_ctx x;
    mmp_dist_ctx_init(&x, c);
    mmp_runner_fill(&b, &x, mat);
    return MMP_STATUS_OK;
}

int mmp_runner_bits_equal(uint64_t x, uint64_t y, mmp_format f)
{
    if (x == y) return 1;
    const mmp_format_info *fi = mmp_format_get_info(f);
    return fi->is_float && isnan(mmp_format_decode(x, f)) && isnan(mmp_format_decode(y, f));
}

/* ---- the unwritten / nondeterminism scan, by fixed blocks of rows ---- */
typedef struct {
    int64_t n_un, n_nd, un_i, un_j, nd_i, nd_j;
} scan_part;

typedef struct {
    void **out;
    const mmp_ref *ref;
    const mmp_case *c;
    int64_t rows_per_chunk;
    scan_part *part;               /* one per chunk */
    uint64_t *un_cols;             /* per row: the heatmap columns holding an unwritten element */
    int heat_cols;
} scan_job;

static void scan_rows(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    scan_job *s = ctx;
    const mmp_case *c = s->c;
    mmp_format df = (mmp_format)c->kernel->d_format;
    int is_float = mmp_format_get_info(df)->is_float;
    for (int64_t i = lo; i < hi; i++) {
        scan_part *p = &s->part[i / s->rows_per_chunk];
        for (int64_t j = 0; j < c->n; j++) {
            size_t idx = mmp_gemm_index(c->ld, c->ldd, i, j);
            uint64_t x0 = mmp_format_load_bits(s->out[0], idx, df), x1 = mmp_format_load_bits(s->out[1], idx, df);
            int un = is_float ? (x0 == mmp_runner_poison_bits(df, 0) || x1 == mmp_runner_poison_bits(df, 1))
                              : (x0 == mmp_runner_poison_bits(df, 0) && x1 == mmp_runner_poison_bits(df, 1));
            if (un) {
                if (!p->n_un++) { p->un_i = i; p->un_j = j; }
                if (s->un_cols) s->un_cols[i] |= 1ull << (j * s->heat_cols / c->n);
                mmp_format_store(s->out[0], idx, s->ref->want_out[i * c->n + j], df, MMP_ROUND_NEAREST_EVEN, 0);
                continue;
            }
            if (!mmp_runner_bits_equal(x0, x1, df) && !p->n_nd++) { p->nd_i = i; p->nd_j = j; }
        }
    }
}

mmp_status mmp_runner_scan_outputs(mmp_case_result *r, int64_t *un_i, int64_t *un_j, int64_t *nd_i, int64_t *nd_j,
                               uint8_t *un_marks, void **out, const mmp_ref *ref, const mmp_case *c)
{
    int64_t rows = mmp_runner_line_chunk(c->n), chunks = (c->m + rows - 1) / rows;
    scan_part *part = calloc(chunks > 0 ? (size_t)chunks : 1, sizeof *part);
    uint64_t *un_cols = un_marks ? calloc(c->m > 0 ? (size_t)c->m : 1, sizeof *un_cols) : NULL;
    if (!part || (un_marks && !un_cols)) {
        free(part);
        free(un_cols);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory scanning the output");
    }
    int hr = (int)(c->m < MMP_HEAT_MAX ? c->m : MMP_HEAT_MAX), hc = (int)(c->n < MMP_HEAT_MAX ? c->n : MMP_HEAT_MAX);
    scan_job s = {out, ref, c, rows, part, un_cols, hc};
    /* a chunk is whole rows, so threads write disjoint elements (sub-byte outputs: one thread) */
    if (mmp_format_get_info((mmp_format)c->kernel->d_format)->storage_bits < 8) scan_rows(&s, 0, c->m, 0);
    else mmp_parallel_for(mmp_parallel_threads(0), c->m, rows, scan_rows, &s);
    for (int64_t q = 0; q < chunks; q++) {   /* in chunk order: the first positions are row-major firsts */
        if (part[q].n_un && !r->n_unwritten) { *un_i = part[q].un_i; *un_j = part[q].un_j; }
        if (part[q].n_nd && !r->n_nondet) { *nd_i = part[q].nd_i; *nd_j = part[q].nd_j; }
        r->n_unwritten += part[q].n_un;
        r->n_nondet += part[q].n_nd;
    }
    if (un_marks) {
        memset(un_marks, 0, MMP_HEAT_MAX * MMP_HEAT_MAX);
        for (int64_t i = 0; i < c->m; i++)
            for (int col = 0; col < hc; col++)
                if (un_cols[i] >> col & 1) un_marks[(i * hr / c->m) * hc + col] = MMP_HEAT_MARK_UNWRITTEN;
    }
    free(part);
    free(un_cols);
    return MMP_STATUS_OK;
}

void mmp_runner_heat_unwritten(mmp_case_result *r, const uint8_t *un_marks)
{
    mmp_metrics *m = &r->metrics;
    if (!r->n_unwritten || m->heat_rows <= 0 || m->heat_cols <= 0) return;
    for (int x = 0; x < m->heat_rows * m->heat_cols; x++)
        mmp_heat_mark_raise(&m->heat_mark[x], (mmp_heat_mark)un_marks[x]);
}

/* The cell next to one damage of D: a guard byte before the data marks the first cell, after
 * it the last; an ld-padding element (index / ld, index % ld) the cell at the end of its line. */
static void heat_damage(mmp_metrics *m, const mmp_case *c, const mmp_damage *d)
{
    int hr = m->heat_rows, hc = m->heat_cols;
    if (d->guard_bytes)
        mmp_heat_mark_raise(&m->heat_mark[d->first_guard < 0 ? 0 : hr * hc - 1], MMP_HEAT_MARK_GUARD);
    if (d->padding && d->pad_i >= 0) {
        int64_t i = c->ld == MMP_LAYOUT_ROW ? d->pad_i : c->m - 1, j = c->ld == MMP_LAYOUT_ROW ? c->n - 1 : d->pad_i;
        if (i < c->m && j < c->n) mmp_heat_mark_raise(&m->heat_mark[mmp_heat_cell(i, j, c->m, c->n, hr, hc)], MMP_HEAT_MARK_GUARD);
    }
}

void mmp_runner_heat_guard(mmp_case_result *r, const mmp_case *c, const mmp_damage *run0, const mmp_damage *run1)
{
    mmp_metrics *m = &r->metrics;
    if (m->heat_rows <= 0 || m->heat_cols <= 0 || c->m <= 0 || c->n <= 0) return;
    if (run0) heat_damage(m, c, run0);
    if (run1) heat_damage(m, c, run1);
}

void mmp_runner_first_bad_unwritten(mmp_case_result *r, int64_t un_i, int64_t un_j)
{
    if (r->n_unwritten && r->metrics.first_bad_i < 0 && un_i >= 0) {
        r->metrics.first_bad_i = un_i;
        r->metrics.first_bad_j = un_j;
    }
}

void mmp_runner_say_scan(mmp_case_result *r, const mmp_case *c, int64_t un_i, int64_t un_j, int64_t nd_i,
                         int64_t nd_j)
{
    if (r->n_unwritten) {
        r->reasons |= MMP_REASON_UNWRITTEN;
        mmp_runner_say(r, "unwritten: %lld of %lld output elements still hold poison, first (%lld,%lld)",
                       (long long)r->n_unwritten, (long long)(c->m * c->n), (long long)un_i, (long long)un_j);
    }
    if (r->n_nondet && c->kernel->deterministic) {
        r->reasons |= MMP_REASON_NONDETERMINISTIC;
        mmp_runner_say(r, "nondeterministic: %lld elements differ between two runs, first (%lld,%lld)",
                       (long long)r->n_nondet, (long long)nd_i, (long long)nd_j);
    }
}

/* ---- buffer fills and copies: bytes by fixed 4 MiB chunks, elements by lines ---- */
#define BYTE_CHUNK ((int64_t)1 << 22)

typedef struct {
    unsigned char *dst;
    const unsigned char *src;   /* NULL: fill with `value` */
    int value;
    size_t bytes;
} bytes_job;

static void bytes_chunks(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    bytes_job *j = ctx;
    size_t b = (size_t)(lo * BYTE_CHUNK), e = (size_t)(hi * BYTE_CHUNK);
    if (e > j->bytes) e = j->bytes;
    if (j->src) memcpy(j->dst + b, j->src + b, e - b);
    else memset(j->dst + b, j->value, e - b);
}

/* dst = src (src != NULL) or every byte = value, over every core by fixed 4 MiB chunks. */
void mmp_runner_bytes(void *dst, const void *src, int value, size_t bytes)
{
    bytes_job j = {dst, src, value, bytes};
    mmp_parallel_for(mmp_parallel_threads(0), (int64_t)((bytes + BYTE_CHUNK - 1) / BYTE_CHUNK), 1, bytes_chunks, &j);
}

typedef struct {
    mmp_buffer *b;
    uint64_t bits;
} bits_job;

static void bits_lines(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    bits_job *p = ctx;
    mmp_buffer *b = p->b;
    void *data = mmp_buffer_host(b);
    int row = b->l == MMP_LAYOUT_ROW;
    int64_t inner = row ? b->cols : b->rows;
    for (int64_t o = lo; o < hi; o++)
        for (int64_t q = 0; q < inner; q++)
            mmp_format_store_bits(data, mmp_gemm_index(b->l, b->ld, row ? o : q, row ? q : o), p->bits, b->f);
}

void mmp_buffer_fill_logical_bits(mmp_buffer *b, uint64_t bits)
{
    bits_job p = {b, bits};
    int row = b->l == MMP_LAYOUT_ROW;
    int64_t outer = row ? b->rows : b->cols, inner = row ? b->cols : b->rows;
    if (mmp_format_get_info(b->f)->storage_bits < 8) bits_lines(&p, 0, outer, 0);   /* shared bytes */
    else mmp_parallel_for(mmp_parallel_threads(0), outer, mmp_runner_line_chunk(inner), bits_lines, &p);
}
