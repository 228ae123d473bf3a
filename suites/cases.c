/* cases.c — the built-in suites (smoke, edge, full), as tables of shapes (IDs: case_id.c).
 *
 * edge: each of M, N, K in {1, 2, 3, t-1, t, t+1, 127, 128, 129, 131, 251} (t = the kernel's
 * multiple, 16 when it takes any size) with the other two at a base size, K tails, and ld >
 * rows; a shape the kernel cannot take is a SKIP with its reason, never a PASS.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

const char *const mmp_builtin_suites[] = {"smoke", "edge", "full", NULL};

const char *mmp_suite_description(const char *name)
{
    if (!strcmp(name, "smoke")) return "small and fast, every kernel: exact, uniform, normal, onehot, special";
    if (!strcmp(name, "edge")) return "M, N, K in {1,2,3,t-1,t,t+1,127,128,129,primes}, K tails, ld > rows";
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

static mmp_status add(mmp_case_list *l, const mmp_kernel_desc *k, const char *suite, int64_t m, int64_t n,
                      int64_t kk, mmp_dist d, uint64_t seed, int64_t ld_extra)
{
    mmp_case c;
    mmp_case_init(&c, k, m, n, kk, d, seed);
    snprintf(c.suite, sizeof c.suite, "%s", suite);
    if (ld_extra) {
        c.lda = mmp_case_tight_ld(c.la, m, kk) + ld_extra;
        c.ldb = mmp_case_tight_ld(c.lb, kk, n) + ld_extra;
        c.ldd = mmp_case_tight_ld(c.ld, m, n) + ld_extra;
    }
    mmp_case_finish(&c);
    return mmp_case_list_push(l, &c);
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
        mmp_case c;
        mmp_case_init(&c, k, m, n, kk, MMP_DIST_UNIFORM, seed);
        snprintf(c.suite, sizeof c.suite, "smoke");
        c.alpha = -1.5;
        c.beta = 0.5;
        mmp_case_finish(&c);
        MMP_TRY(mmp_case_list_push(l, &c));
    }
    return MMP_STATUS_OK;
}

static mmp_status edge(mmp_case_list *l, const mmp_kernel_desc *k, uint64_t seed)
{
    int32_t mult[3] = {k->m_multiple, k->n_multiple, k->k_multiple};
    for (int dim = 0; dim < 3; dim++) {
        int64_t t = mult[dim] > 1 ? mult[dim] : 16;
        int64_t sizes[] = {1, 2, 3, t - 1, t, t + 1, 127, 128, 129, 131, 251};
        int64_t base[3] = {round_up(32, k->m_multiple), round_up(32, k->n_multiple), round_up(64, k->k_multiple)};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            if (sizes[s] < 1) continue;
            int dup = 0;
            for (size_t p = 0; p < s; p++) dup |= sizes[p] == sizes[s];
            if (dup) continue;
            int64_t shp[3] = {base[0], base[1], base[2]};
            shp[dim] = sizes[s];
            MMP_TRY(add(l, k, "edge", shp[0], shp[1], shp[2], MMP_DIST_EXACT, seed, 0));
            MMP_TRY(add(l, k, "edge", shp[0], shp[1], shp[2], MMP_DIST_UNIFORM, seed, 0));
        }
    }
    /* K tails: a multiple of the tile plus a remainder, long enough to span several tiles. */
    int64_t kt = k->k_multiple > 1 ? k->k_multiple : 16;
    int64_t tails[] = {4 * kt + 1, 8 * kt - 1, 8 * kt + kt / 2};
    for (size_t s = 0; s < 3; s++)
        MMP_TRY(add(l, k, "edge", round_up(32, k->m_multiple), round_up(32, k->n_multiple), tails[s],
                    MMP_DIST_EXACT, seed, 0));
    /* ld > rows (8 more elements, and an odd padding when the format allows) */
    int64_t m = round_up(48, k->m_multiple), n = round_up(40, k->n_multiple), kk = round_up(64, k->k_multiple);
    MMP_TRY(add(l, k, "edge", m, n, kk, MMP_DIST_EXACT, seed, 8));
    MMP_TRY(add(l, k, "edge", m, n, kk, MMP_DIST_UNIFORM, seed, 8));
    MMP_TRY(add(l, k, "edge", m, n, kk, MMP_DIST_ONEHOT, seed, 3));
    /* other layouts the kernel accepts */
    for (int lay = 1; lay < 8; lay++) {
        mmp_case c;
        mmp_case_init(&c, k, m, n, kk, MMP_DIST_ONEHOT, seed);
        c.la = (lay & 1) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
        c.lb = (lay & 2) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
        c.ld = c.lc = (lay & 4) ? MMP_LAYOUT_COL : MMP_LAYOUT_ROW;
        if (!(k->layouts_a & (1u << c.la)) || !(k->layouts_b & (1u << c.lb)) || !(k->layouts_d & (1u << c.ld)))
            continue;
        c.lda = c.ldb = c.ldc = c.ldd = 0;
        snprintf(c.suite, sizeof c.suite, "edge");
        mmp_case_finish(&c);
        MMP_TRY(mmp_case_list_push(l, &c));
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
