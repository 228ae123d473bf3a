/* cases.c — the built-in suites (smoke, edge, full), as tables of shapes (IDs: case_id.c).
 *
 * edge: each of M, N, K in {1, 2, 3, t-1, t, t+1, 127, 128, 129, 131, 251} (t = the kernel's
 * multiple, 16 when it takes any size) with the other two at a base size; K tails; every value
 * of M, N and K in [256, 512) the kernel takes (every residue modulo 64, 128 and 256) with the
 * other two small; ld > tight for each operand alone and all together; the other layouts;
 * wide and special values at small shapes; alpha/beta with C in each layout (kernels that read
 * C). A shape the kernel cannot take is a SKIP with its reason, never a PASS. A case that two
 * rules produce (same ID) is built once.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

const char *const mmp_builtin_suites[] = {"smoke", "edge", "full", NULL};

const char *mmp_suite_description(const char *name)
{
    if (!strcmp(name, "smoke")) return "small and fast, every kernel: exact, uniform, normal, onehot, special";
    if (!strcmp(name, "edge")) return "M, N, K in {1,2,3,t-1,t,t+1,127,128,129,primes} and [256,512), K tails, ld > rows per operand, layouts, wide, special, alpha/beta";
    if (!strcmp(name, "full")) return "large shapes up to 8192^3, every distribution";
    return "?";
}

int mmp_cases_is_builtin_suite(const char *name)
{
    for (int i = 0; mmp_builtin_suites[i]; i++)
        if (name && !strcmp(name, mmp_builtin_suites[i])) return 1;
    return 0;
}

static int is_float_kernel(const mmp_kernel_desc *k)
{
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)k->a_format);
    return fi && fi->is_float;
}

static int64_t round_up(int64_t x, int32_t m) { return m > 1 ? (x + m - 1) / m * m : x; }

/* A case of the suite: the shape rounded up to the kernel's multiples by the caller, ld_pad[4]
 * = ld - tight of A, B, C, D (NULL: tight), alpha/beta, C's layout = D's. */
typedef struct {
    int64_t m, n, k;
    mmp_dist dist;
    const int64_t *ld_pad;
    double alpha, beta;
    mmp_layout la, lb, ld;   /* used when set_layout */
    int set_layout;
} case_spec;

static mmp_status push(mmp_case_list *l, const mmp_kernel_desc *k, const char *suite, const case_spec *s,
                       uint64_t seed)
{
    mmp_case c;
    mmp_case_init(&c, k, s->m, s->n, s->k, s->dist, seed);
    snprintf(c.suite, sizeof c.suite, "%s", suite);
    if (s->set_layout) {
        c.la = s->la;
        c.lb = s->lb;
        c.ld = c.lc = s->ld;
        c.lda = c.ldb = c.ldc = c.ldd = 0;
    }
    c.alpha = s->alpha;
    c.beta = s->beta;
    if (s->ld_pad) {
        c.lda = mmp_case_tight_ld(c.la, c.m, c.k) + s->ld_pad[0];
        c.ldb = mmp_case_tight_ld(c.lb, c.k, c.n) + s->ld_pad[1];
        c.ldc = mmp_case_tight_ld(c.lc, c.m, c.n) + s->ld_pad[2];
        c.ldd = mmp_case_tight_ld(c.ld, c.m, c.n) + s->ld_pad[3];
    }
    mmp_case_finish(&c);
    return mmp_case_list_push(l, &c);
}

static mmp_status add(mmp_case_list *l, const mmp_kernel_desc *k, const char *suite, int64_t m, int64_t n,
                      int64_t kk, mmp_dist d, uint64_t seed, int64_t ld_extra)
{
    const int64_t pad[4] = {ld_extra, ld_extra, 0, ld_extra};
    case_spec s = {m, n, kk, d, ld_extra ? pad : NULL, 1.0, 0.0, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, 0};
    return push(l, k, suite, &s, seed);
}

static int takes_layouts(const mmp_kernel_desc *k, mmp_layout la, mmp_layout lb, mmp_layout ld)
{
    return (k->layouts_a & (1u << la)) && (k->layouts_b & (1u << lb)) && (k->layouts_d & (1u << ld));
}

static mmp_status smoke(mmp_case_list *l, const mmp_kernel_desc *k, uint64_t seed)
{
    int64_t m = round_up(64, k->m_multiple), n = round_up(64, k->n_multiple), kk = round_up(128, k->k_multiple);
    static const mmp_dist dists[] = {MMP_DIST_EXACT, MMP_DIST_UNIFORM, MMP_DIST_NORMAL, MMP_DIST_ONEHOT,
                                     MMP_DIST_SPECIAL};
    for (size_t i = 0; i < sizeof dists / sizeof dists[0]; i++) {
        if (dists[i] == MMP_DIST_SPECIAL && !is_float_kernel(k)) continue;
        MMP_TRY(add(l, k, "smoke", m, n, kk, dists[i], seed, 0));
    }
    /* alpha/beta when the kernel reads C */
    if (k->reads_c) {
        case_spec s = {m, n, kk, MMP_DIST_UNIFORM, NULL, -1.5, 0.5, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, 0};
        MMP_TRY(push(l, k, "smoke", &s, seed));
    }
    return MMP_STATUS_OK;
}

/* ---- edge: tables of rows, each row one case rule ---- */

/* Sizes of one dimension (t = the kernel's multiple, 16 when it takes any size), the other two
 * at the base {32, 32, 64}: the first and last elements of a tile and the powers of two around
 * 128 and 256's neighbours. */
#define EDGE_T (-1)   /* stands for t; t - 1 and t + 1 are EDGE_T - 1 and EDGE_T + 1 */
static const int64_t edge_sizes[] = {1, 2, 3, EDGE_T - 1, EDGE_T, EDGE_T + 1, 127, 128, 129, 131, 251};
static const int64_t edge_base[3] = {32, 32, 64};

/* Residue sweep: every value in [P, 2P) that the kernel takes (P = the largest tile a kernel is
 * expected to use), in one dimension at a time with the other two small, so a kernel wrong for
 * one residue class modulo 64, 128 or 256 (after at least one full tile) meets it. */
#define EDGE_PERIOD 256
static const int64_t sweep_small[3] = {8, 8, 16};

/* Leading dimensions above tight: each operand alone (a kernel that ignores one ld, or takes one
 * operand's for another's, meets a case where they differ) and all together. C is read only
 * with beta != 0: its row has one. */
typedef struct {
    int64_t pad_a, pad_b, pad_c, pad_d;
    mmp_dist dist;
    double alpha, beta;
} edge_ld_row;
static const edge_ld_row edge_ld[] = {
    {8, 8, 0, 8, MMP_DIST_EXACT, 1, 0},
    {8, 8, 0, 8, MMP_DIST_UNIFORM, 1, 0},
    {3, 3, 0, 3, MMP_DIST_ONEHOT, 1, 0},   /* odd padding */
    {8, 0, 0, 0, MMP_DIST_EXACT, 1, 0},
    {0, 8, 0, 0, MMP_DIST_EXACT, 1, 0},
    {0, 0, 0, 8, MMP_DIST_EXACT, 1, 0},
    {0, 0, 8, 0, MMP_DIST_UNIFORM, -1.5, 0.5},
    {8, 8, 8, 8, MMP_DIST_UNIFORM, -1.5, 0.5},
};
static const int64_t edge_ld_shape[3] = {48, 40, 64};

/* Values at small shapes: NaN/Inf propagation (special, floats only) and huge/subnormal
 * magnitudes (wide), on a tile-aligned shape and on one with partial tiles in M, N and K (35 =
 * 2 x 16 + 3: the partial M tile holds special's NaN and +Inf rows), and through beta * C. */
typedef struct {
    int64_t m, n, k;
    mmp_dist dist;
    double alpha, beta;
} edge_value_row;
static const edge_value_row edge_values[] = {
    {32, 32, 32, MMP_DIST_WIDE, 1, 0},    {35, 21, 19, MMP_DIST_WIDE, 1, 0},
    {32, 32, 32, MMP_DIST_SPECIAL, 1, 0}, {35, 21, 19, MMP_DIST_SPECIAL, 1, 0},
    {35, 21, 19, MMP_DIST_SPECIAL, -1.5, 0.5},
};

/* alpha != 1, beta != 0, C read in each layout D takes (C's layout is D's). */
static const edge_value_row edge_alpha_beta[] = {
    {48, 40, 64, MMP_DIST_UNIFORM, -1.5, 0.5},
    {35, 21, 19, MMP_DIST_EXACT, 2, -1},
};

static mmp_status edge(mmp_case_list *l, const mmp_kernel_desc *k, uint64_t seed)
{
    const int32_t mult[3] = {k->m_multiple, k->n_multiple, k->k_multiple};
    int64_t base[3];
    for (int d = 0; d < 3; d++) base[d] = round_up(edge_base[d], mult[d]);
    for (int dim = 0; dim < 3; dim++) {
        int64_t t = mult[dim] > 1 ? mult[dim] : 16;
        for (size_t s = 0; s < sizeof edge_sizes / sizeof edge_sizes[0]; s++) {
            int64_t v = edge_sizes[s] > 0 ? edge_sizes[s] : t + (edge_sizes[s] - EDGE_T);
            if (v < 1) continue;
            int64_t shp[3] = {base[0], base[1], base[2]};
            shp[dim] = v;
            MMP_TRY(add(l, k, "edge", shp[0], shp[1], shp[2], MMP_DIST_EXACT, seed, 0));
            MMP_TRY(add(l, k, "edge", shp[0], shp[1], shp[2], MMP_DIST_UNIFORM, seed, 0));
        }
    }
    /* K tails: a multiple of the tile plus a remainder, long enough to span several tiles. */
    int64_t kt = k->k_multiple > 1 ? k->k_multiple : 16;
    int64_t tails[] = {4 * kt + 1, 8 * kt - 1, 8 * kt + kt / 2};
    for (size_t s = 0; s < 3; s++)
        MMP_TRY(add(l, k, "edge", base[0], base[1], tails[s], MMP_DIST_EXACT, seed, 0));
    int64_t m = round_up(edge_ld_shape[0], k->m_multiple), n = round_up(edge_ld_shape[1], k->n_multiple),
            kk = round_up(edge_ld_shape[2], k->k_multiple);
    for (size_t r = 0; r < sizeof edge_ld / sizeof edge_ld[0]; r++) {
        const edge_ld_row *x = &edge_ld[r];
        if (x->beta != 0 && !k->reads_c) continue;
        const int64_t pad[4] = {x->pad_a, x->pad_b, x->pad_c, x->pad_d};
        case_spec s = {m, n, kk, x->dist, pad, x->alpha, x->beta, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, 0};
        MMP_TRY(push(l, k, "edge", &s, seed));
    }
    /* other layouts the kernel accepts (bit 0: A, 1: B, 2: C and D column-major) */
    for (int lay = 1; lay < 8; lay++) {
        mmp_layout la = (lay & 1) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW, lb = (lay & 2) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW,
                   ld = (lay & 4) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
        if (!takes_layouts(k, la, lb, ld)) continue;
        case_spec s = {m, n, kk, MMP_DIST_ONEHOT, NULL, 1.0, 0.0, la, lb, ld, 1};
        MMP_TRY(push(l, k, "edge", &s, seed));
    }
    /* the residue sweep */
    for (int dim = 0; dim < 3; dim++)
        for (int64_t v = round_up(EDGE_PERIOD, mult[dim]); v < 2 * EDGE_PERIOD; v += mult[dim] > 1 ? mult[dim] : 1) {
            int64_t shp[3];
            for (int d = 0; d < 3; d++) shp[d] = d == dim ? v : round_up(sweep_small[d], mult[d]);
            MMP_TRY(add(l, k, "edge", shp[0], shp[1], shp[2], MMP_DIST_EXACT, seed, 0));
        }
    for (size_t r = 0; r < sizeof edge_values / sizeof edge_values[0]; r++) {
        const edge_value_row *x = &edge_values[r];
        if ((x->dist == MMP_DIST_SPECIAL && !is_float_kernel(k)) || (x->beta != 0 && !k->reads_c)) continue;
        case_spec s = {round_up(x->m, k->m_multiple), round_up(x->n, k->n_multiple), round_up(x->k, k->k_multiple),
                       x->dist, NULL, x->alpha, x->beta, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, 0};
        MMP_TRY(push(l, k, "edge", &s, seed));
    }
    if (!k->reads_c) return MMP_STATUS_OK;
    mmp_case first;
    mmp_case_init(&first, k, 1, 1, 1, MMP_DIST_EXACT, seed);
    for (int lc = MMP_LAYOUT_ROW; lc <= MMP_LAYOUT_COL; lc++) {
        if (!(k->layouts_d & (1u << lc))) continue;
        for (size_t r = 0; r < sizeof edge_alpha_beta / sizeof edge_alpha_beta[0]; r++) {
            const edge_value_row *x = &edge_alpha_beta[r];
            case_spec s = {round_up(x->m, k->m_multiple), round_up(x->n, k->n_multiple),
                           round_up(x->k, k->k_multiple), x->dist, NULL, x->alpha, x->beta, first.la, first.lb,
                           (mmp_layout)lc, 1};
            MMP_TRY(push(l, k, "edge", &s, seed));
        }
    }
    return MMP_STATUS_OK;
}

static mmp_status full(mmp_case_list *l, const mmp_kernel_desc *k, uint64_t seed)
{
    static const int64_t shapes[][3] = {{256, 256, 256},   {1024, 1024, 1024}, {256, 256, 8192},
                                        {4096, 4096, 4096}, {8192, 8192, 8192}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int d = 0; d < MMP_DIST_COUNT_; d++) {
            if (d == MMP_DIST_SPECIAL && !is_float_kernel(k)) continue;
            MMP_TRY(add(l, k, "full", round_up(shapes[s][0], k->m_multiple), round_up(shapes[s][1], k->n_multiple),
                        round_up(shapes[s][2], k->k_multiple), (mmp_dist)d, seed, 0));
        }
    return MMP_STATUS_OK;
}

mmp_status mmp_cases_build(mmp_case **cases, size_t *count, const char *suite,
                           const mmp_kernel_desc *const *kernels, size_t n_kernels, const char *filter,
                           uint64_t seed)
{
    *cases = NULL;
    *count = 0;
    if (!suite || !*suite) suite = "smoke";
    if (!mmp_cases_is_builtin_suite(suite))
        return mmp_suitefile_parse(cases, count, suite, kernels, n_kernels, filter, seed);
    mmp_case_list l = {NULL, 0, 0, filter};
    mmp_status st = MMP_STATUS_OK;
    for (size_t i = 0; i < n_kernels && st == MMP_STATUS_OK; i++) {
        if (!strcmp(suite, "smoke")) st = smoke(&l, kernels[i], seed);
        else if (!strcmp(suite, "edge")) st = edge(&l, kernels[i], seed);
        else st = full(&l, kernels[i], seed);
    }
    if (st == MMP_STATUS_OK) st = mmp_case_list_dedupe(&l);
    if (st != MMP_STATUS_OK) { free(l.v); return st; }
    *cases = l.v;
    *count = l.n;
    return MMP_STATUS_OK;
}

void mmp_cases_free(mmp_case *cases) { free(cases); }

void mmp_cases_shard(mmp_case *cases, size_t *count, int shard_index, int shard_count)
{
    if (shard_count <= 1) return;
    size_t out = 0;
    for (size_t i = 0; i < *count; i++)
        if ((int)(i % (size_t)shard_count) == shard_index) cases[out++] = cases[i];
    *count = out;
}
