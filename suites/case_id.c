/* case_id.c — what identifies a case: defaults, tight leading dimensions, the printable ID, the
 * GEMM problem of a case. The layer under the case builders (cases.c, cases_file.c), which call
 * it and never each other's internals.
 *
 * ID: kernel/a.b.d/MxNxK[/ldA.B.D][/ldcC][/layout a.b.d[.cL]][/abALPHA,BETA]/dist/sSEED — the ld
 * part only when some of A's, B's, D's ld > tight, ldc and C's layout only when C is read (beta
 * != 0) and they differ from D's, the layout part only when some operand is not row-major. An operator
 * case (c->op set) takes its ID from its operator (mmp_operator.id).
 */
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

static void short_name(char *buf, size_t size, int32_t f)
{
    const char *n = mmp_format_name((mmp_format)f);
    if (n[0] == 'f' && n[1] == 'p') snprintf(buf, size, "f%s", n + 2);
    else snprintf(buf, size, "%s", n);
}

void mmp_case_precision(char *buf, size_t size, const mmp_kernel_desc *k)
{
    char a[16], b[16], d[16];
    short_name(a, sizeof a, k->a_format);
    short_name(b, sizeof b, k->b_format);
    short_name(d, sizeof d, k->d_format);
    snprintf(buf, size, "%s.%s.%s", a, b, d);
}

static mmp_layout first_layout(uint32_t mask) { return mmp_layouts_has(mask, MMP_LAYOUT_ROW) || !(mask & 3u) ? MMP_LAYOUT_ROW : MMP_LAYOUT_COL; }

void mmp_case_init(mmp_case *c, const mmp_kernel_desc *k, int64_t m, int64_t n, int64_t kk, mmp_dist d,
                   uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->m = m; c->n = n; c->k = kk;
    c->la = first_layout(k->layouts_a);
    c->lb = first_layout(k->layouts_b);
    c->ld = first_layout(k->layouts_d);
    c->lc = c->ld;
    c->dist = d;
    c->seed = seed;
    c->alpha = 1.0;
    c->beta = 0.0;
    snprintf(c->suite, sizeof c->suite, "custom");
    mmp_case_finish(c);
}

int64_t mmp_case_tight_ld(mmp_layout l, int64_t rows, int64_t cols) { return l == MMP_LAYOUT_ROW ? cols : rows; }

void mmp_case_finish(mmp_case *c)
{
    if (c->op) {
        c->op->id(c->id, sizeof c->id, c);
        return;
    }
    if (!c->kernel->reads_c) c->beta = 0.0;
    int64_t ta = mmp_case_tight_ld(c->la, c->m, c->k), tb = mmp_case_tight_ld(c->lb, c->k, c->n), tc = mmp_case_tight_ld(c->lc, c->m, c->n),
            td = mmp_case_tight_ld(c->ld, c->m, c->n);
    if (c->lda <= 0) c->lda = ta;
    if (c->ldb <= 0) c->ldb = tb;
    if (c->ldc <= 0) c->ldc = tc;
    if (c->ldd <= 0) c->ldd = td;
    char prec[48], ld[96] = "", ldc[32] = "", lay[48] = "", lc[16] = "", ab[64] = "";
    mmp_case_precision(prec, sizeof prec, c->kernel);
    if (c->lda > ta || c->ldb > tb || c->ldd > td)
        snprintf(ld, sizeof ld, "/ld%lld.%lld.%lld", (long long)c->lda, (long long)c->ldb, (long long)c->ldd);
    /* C (read only with beta != 0) takes D's ld and layout unless these say otherwise */
    int reads_c = c->beta != 0;
    if (reads_c && c->ldc != c->ldd) snprintf(ldc, sizeof ldc, "/ldc%lld", (long long)c->ldc);
    if (reads_c && c->lc != c->ld) snprintf(lc, sizeof lc, ".c%s", mmp_layout_name(c->lc));
    if (c->la != MMP_LAYOUT_ROW || c->lb != MMP_LAYOUT_ROW || c->ld != MMP_LAYOUT_ROW || lc[0])
        snprintf(lay, sizeof lay, "/%s.%s.%s%s", mmp_layout_name(c->la), mmp_layout_name(c->lb),
                 mmp_layout_name(c->ld), lc);
    if (c->alpha != 1.0 || c->beta != 0.0) snprintf(ab, sizeof ab, "/ab%g,%g", c->alpha, c->beta);
    snprintf(c->id, sizeof c->id, "%s/%s/%lldx%lldx%lld%s%s%s%s/%s/s%llu", c->kernel->name, prec, (long long)c->m,
             (long long)c->n, (long long)c->k, ld, ldc, lay, ab, mmp_dist_name(c->dist), (unsigned long long)c->seed);
}

void mmp_case_gemm(mmp_gemm *g, const mmp_case *c)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_gemm_init(g, (mmp_format)k->a_format, (mmp_format)k->b_format, (mmp_format)k->c_format,
                  (mmp_format)k->d_format, c->m, c->n, c->k);
    g->la = c->la; g->lb = c->lb; g->lc = c->lc; g->ld = c->ld;
    g->lda = c->lda; g->ldb = c->ldb; g->ldc = c->ldc; g->ldd = c->ldd;
    g->alpha = c->alpha;
    g->beta = c->beta;
}


mmp_status mmp_case_list_push(mmp_case_list *l, const mmp_case *c)
{
    if (l->filter && *l->filter && !mmp_glob_match(l->filter, c->id)) return MMP_STATUS_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        mmp_case *v = realloc(l->v, cap * sizeof *v);
        if (!v) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory building the case list");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *c;
    return MMP_STATUS_OK;
}

static int by_id(const void *x, const void *y)
{
    const mmp_case *const *a = x, *const *b = y;
    int d = strcmp((*a)->id, (*b)->id);
    return d ? d : (*a < *b ? -1 : *a > *b);
}

/* Drop every case whose ID an earlier case has (the same case twice: one run, one record). */
mmp_status mmp_case_list_dedupe(mmp_case_list *l)
{
    if (l->n < 2) return MMP_STATUS_OK;
    const mmp_case **order = malloc(l->n * sizeof *order);
    unsigned char *drop = calloc(l->n, 1);
    if (!order || !drop) {
        free(order);
        free(drop);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory deduplicating the case list");
    }
    for (size_t i = 0; i < l->n; i++) order[i] = &l->v[i];
    qsort(order, l->n, sizeof *order, by_id);   /* equal IDs in list order: the first is kept */
    for (size_t i = 1; i < l->n; i++)
        if (!strcmp(order[i]->id, order[i - 1]->id)) drop[order[i] - l->v] = 1;
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!drop[i]) l->v[out++] = l->v[i];
    l->n = out;
    free(order);
    free(drop);
    return MMP_STATUS_OK;
}
