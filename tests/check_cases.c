/* check_cases.c — the built-in suites as case lists: every case ID is unique (over every
 * registered kernel, mutants included, in smoke, edge and full), the ID tells apart every field
 * that changes a case, and edge holds the case classes it promises (the residue sweep within the
 * kernel's multiples, each ld padded alone, wide and special, alpha/beta per C layout). */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"

static int by_id(const void *x, const void *y) { return strcmp(((const mmp_case *)x)->id, ((const mmp_case *)y)->id); }

static void build(mmp_case **cases, size_t *n, const char *suite, const mmp_kernel_desc *const *k, size_t nk)
{
    mmp_status st = mmp_cases_build(cases, n, suite, k, nk, NULL, 42);
    ck_assert_msg(st == MMP_STATUS_OK, "%s: %s", suite, mmp_error_last());
}

/* Filters: one glob, or a comma-separated list where "!" globs exclude. */
START_TEST(test_filter_lists)
{
    ck_assert(mmp_glob_match("bf16_*", "bf16_mma/x"));
    ck_assert(!mmp_glob_match("bf16_*", "fp16_mma/x"));
    ck_assert(mmp_glob_match("", "anything") && mmp_glob_match(NULL, "anything"));
    ck_assert(mmp_glob_match("fp16_*,bf16_*", "bf16_mma/x") && mmp_glob_match("fp16_*,bf16_*", "fp16_x/y"));
    ck_assert(!mmp_glob_match("fp16_*,bf16_*", "int8_x/y"));
    ck_assert(!mmp_glob_match("*,!host_*", "host_f64/f64.f64.f64/1x1x1/exact/s1"));
    ck_assert(mmp_glob_match("*,!host_*", "cublas_f32/f32.f32.f32/1x1x1/exact/s1"));
    ck_assert(!mmp_glob_match("!*_f64/*", "cublas_f64/f64.f64.f64/1x1x1/exact/s1"));
    ck_assert(mmp_glob_match("!*_f64/*", "cublas_f32/x"));
    ck_assert(!mmp_glob_match("*,!*/wide/*,!*/special/*", "k/p/8x8x8/special/s1"));
    ck_assert(mmp_glob_match("*,!*/wide/*,!*/special/*", "k/p/8x8x8/uniform/s1"));
    ck_assert(mmp_glob_match("a*,,", "abc") && mmp_glob_match(",,", "x"));   /* empty items are ignored */
}
END_TEST

START_TEST(test_ids_unique)
{
    const char *suite = mmp_builtin_suites[_i];
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_ALL);
    ck_assert(nk > 0);
    mmp_case *c;
    size_t n;
    build(&c, &n, suite, k, nk);
    ck_assert(n > 0);
    qsort(c, n, sizeof *c, by_id);
    size_t dups = 0;
    for (size_t i = 1; i < n; i++)
        if (!strcmp(c[i].id, c[i - 1].id) && dups++ < 5) printf("duplicate ID in %s: %s\n", suite, c[i].id);
    printf("%s: %zu cases over %zu kernels, %zu duplicate IDs\n", suite, n, nk, dups);
    ck_assert_msg(dups == 0, "%s: %zu duplicate case IDs", suite, dups);
    mmp_cases_free(c);
}
END_TEST

/* Cases that differ in one field each get distinct IDs (so keeping one case per ID never merges
 * two different cases). */
START_TEST(test_id_tells_fields_apart)
{
    const mmp_kernel_desc *k = mmp_registry_find("mut_host_control", MMP_REGISTRY_ALL);
    ck_assert(k && k->reads_c && k->layouts_d == MMP_LAYOUTS_ANY);
    enum { N = 16 };
    mmp_case c[N];
    for (int i = 0; i < N; i++) {
        mmp_case_init(&c[i], k, 24, 20, 16, MMP_DIST_UNIFORM, 7);
        c[i].beta = i >= 8 ? 0.5 : 0.0;   /* 8..: C is read */
        c[i].lda = c[i].ldb = c[i].ldc = c[i].ldd = 0;   /* tight for the final layouts */
    }
    c[1].m = 25;
    c[2].lda = 16 + 2;
    c[3].ldb = 20 + 2;
    c[4].ldd = 20 + 2;
    c[5].la = MMP_LAYOUT_COL;
    c[6].dist = MMP_DIST_EXACT;
    c[7].alpha = -1;
    c[9].ldc = 20 + 2;                       /* C alone padded */
    c[10].ldc = c[10].ldd = 20 + 2;          /* C and D padded alike */
    c[11].lc = MMP_LAYOUT_COL;               /* C column-major, D row-major */
    c[12].lc = c[12].ld = MMP_LAYOUT_COL;
    c[13].ld = MMP_LAYOUT_COL;               /* D column-major, C row-major */
    c[14].beta = -1;
    c[15].seed = 8;
    for (int i = 0; i < N; i++) mmp_case_finish(&c[i]);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            ck_assert_msg(strcmp(c[i].id, c[j].id) != 0, "cases %d and %d share the ID %s", j, i, c[i].id);
}
END_TEST

/* A copy of a registered descriptor with other multiples / reads_c / layouts. */
static mmp_kernel_desc variant(const char *name, int32_t mm, int32_t nm, int32_t km, int reads_c)
{
    const mmp_kernel_desc *k = mmp_registry_find(name, MMP_REGISTRY_ALL);
    ck_assert(k != NULL);
    mmp_kernel_desc v = *k;
    v.m_multiple = mm;
    v.n_multiple = nm;
    v.k_multiple = km;
    v.reads_c = reads_c;
    return v;
}

/* Sweep values of one dimension: [256, 512) with the other two <= 16 (edge's only such cases);
 * each must be a shape the kernel takes. */
static int sweep_values(const mmp_case *c, size_t n, int dim, const int32_t mult[3], unsigned char seen[256])
{
    int count = 0;
    memset(seen, 0, 256);
    for (size_t i = 0; i < n; i++) {
        int64_t d[3] = {c[i].m, c[i].n, c[i].k};
        int small = 1;
        for (int o = 0; o < 3; o++) small &= o == dim || d[o] <= 16;
        if (!small || d[dim] < 256 || d[dim] >= 512) continue;
        for (int o = 0; o < 3; o++)
            ck_assert_msg(d[o] % mult[o] == 0, "%s: a sweep case the kernel cannot take", c[i].id);
        if (!seen[d[dim] - 256]++) count++;
    }
    return count;
}

START_TEST(test_edge_residue_sweep)
{
    static const char *const dim_name[3] = {"M", "N", "K"};
    mmp_kernel_desc any = variant("mut_host_control", 1, 1, 1, 1), tiled = variant("mut_host_control", 16, 8, 4, 1);
    unsigned char seen[256];
    for (int which = 0; which < 2; which++) {
        const mmp_kernel_desc *k = which ? &tiled : &any;
        const int32_t mult[3] = {k->m_multiple, k->n_multiple, k->k_multiple};
        mmp_case *c;
        size_t n;
        build(&c, &n, "edge", &k, 1);
        for (int dim = 0; dim < 3; dim++) {
            int got = sweep_values(c, n, dim, mult, seen);
            ck_assert_msg(got == 256 / mult[dim], "multiple %d: %d values of %s in [256, 512), want %d", mult[dim], got,
                          dim_name[dim], 256 / mult[dim]);
            for (int r = 0; r < 256; r += mult[dim]) ck_assert_msg(seen[r], "%s = %d missing", dim_name[dim], 256 + r);
        }
        printf("edge for multiples %d,%d,%d: %zu cases\n", mult[0], mult[1], mult[2], n);
        mmp_cases_free(c);
    }
}
END_TEST

enum { HAS_WIDE = 1, HAS_SPECIAL = 2, PAD_A = 4, PAD_B = 8, PAD_D = 16, PAD_C = 32, AB_ROW_C = 64, AB_COL_C = 128 };

static unsigned edge_classes(const mmp_kernel_desc *k)
{
    mmp_case *c;
    size_t n;
    build(&c, &n, "edge", &k, 1);
    unsigned got = 0;
    for (size_t i = 0; i < n; i++) {
        const mmp_case *x = &c[i];
        int pa = x->lda > mmp_case_tight_ld(x->la, x->m, x->k), pb = x->ldb > mmp_case_tight_ld(x->lb, x->k, x->n),
            pd = x->ldd > mmp_case_tight_ld(x->ld, x->m, x->n),
            pc = x->beta != 0 && x->ldc > mmp_case_tight_ld(x->lc, x->m, x->n);
        if (x->dist == MMP_DIST_WIDE && x->m * x->n * x->k <= 64 * 64 * 64) got |= HAS_WIDE;
        if (x->dist == MMP_DIST_SPECIAL && x->m * x->n * x->k <= 64 * 64 * 64) got |= HAS_SPECIAL;
        if (pa && !pb && !pd && !pc) got |= PAD_A;
        if (!pa && pb && !pd && !pc) got |= PAD_B;
        if (!pa && !pb && pd && !pc) got |= PAD_D;
        if (!pa && !pb && !pd && pc) got |= PAD_C;
        if (x->beta != 0 && x->alpha != 1 && x->lc == x->ld)
            got |= x->lc == MMP_LAYOUT_ROW ? AB_ROW_C : AB_COL_C;
    }
    mmp_cases_free(c);
    return got;
}

START_TEST(test_edge_classes)
{
    const unsigned ld3 = PAD_A | PAD_B | PAD_D;
    mmp_kernel_desc reads = variant("mut_host_control", 1, 1, 1, 1), no_c = variant("mut_host_control", 1, 1, 1, 0);
    mmp_kernel_desc row_d = reads;
    row_d.layouts_d = MMP_LAYOUTS_ROW;
    const mmp_kernel_desc *i8 = mmp_registry_find("host_i8_i32", MMP_REGISTRY_ALL);
    ck_assert(i8 != NULL);
    ck_assert_uint_eq(edge_classes(&reads), HAS_WIDE | HAS_SPECIAL | ld3 | PAD_C | AB_ROW_C | AB_COL_C);
    ck_assert_uint_eq(edge_classes(&no_c), HAS_WIDE | HAS_SPECIAL | ld3);
    ck_assert_uint_eq(edge_classes(&row_d), HAS_WIDE | HAS_SPECIAL | ld3 | PAD_C | AB_ROW_C);
    /* no special for integer formats (no NaN to carry); C read per what the kernel declares */
    unsigned want_i8 = HAS_WIDE | ld3 | (i8->reads_c ? PAD_C | AB_ROW_C : 0) |
                       (i8->reads_c && (i8->layouts_d & (1u << MMP_LAYOUT_COL)) ? AB_COL_C : 0);
    ck_assert_uint_eq(edge_classes(i8), want_i8);
}
END_TEST

static Suite *cases_suite(void)
{
    Suite *s = suite_create("cases");
    TCase *tc = tcase_create("builtin");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_ids_unique, 0, 3);
    tcase_add_test(tc, test_filter_lists);
    tcase_add_test(tc, test_id_tells_fields_apart);
    tcase_add_test(tc, test_edge_residue_sweep);
    tcase_add_test(tc, test_edge_classes);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(cases_suite)
