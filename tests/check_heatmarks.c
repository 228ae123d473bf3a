/* check_heatmarks.c — the heatmap's cell marks (mmp_heat_mark) on the host path, from the host
 * mutants that leave elements unwritten, swallow NaN and write past D:
 *   - mut_host_edge_tile (37 x 24: rows 32..36, the partial M tile, never written): exactly the
 *     cells of those rows are marked unwritten, the first failing element is (32, 0), the one
 *     the message names, and its cell is marked;
 *   - mut_host_nan_clamp (16 x 16, special data: one element per cell): the cells marked NaN
 *     are exactly the elements counted as NaN/Inf mismatches, the first of them named by the
 *     message, and the first failing element's cell is one of them;
 *   - mut_host_write_past (a byte past D's end): the last cell is marked guard;
 *   - the correct kernel (host_f16_f32) on the same cases: no mark at all;
 *   - the marks survive the run document (JSON written and read back), and the HTML heatmap
 *     draws them with their legend and the first-failing ring.
 * The device path fills the same marks (runner_devcheck.cu); check_gpu_stages compares them.
 */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "mmaprobe/runner.h"
#include "tests/check_main.h"

static void run_one(mmp_case_result *r, const char *kernel, int64_t m, int64_t n, int64_t k, mmp_dist dist)
{
    const mmp_kernel_desc *kd = mmp_registry_find(kernel, MMP_REGISTRY_ALL);
    ck_assert_ptr_nonnull(kd);
    mmp_case c;
    mmp_case_init(&c, kd, m, n, k, dist, mmp_check_seed);
    mmp_case_finish(&c);
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    ck_assert_int_eq(mmp_runner_run(r, &c, 1, &o, NULL, NULL), MMP_STATUS_OK);
    printf("%-22s %s %s: %s\n", kernel, r->id, mmp_verdict_name(r->verdict), r->message);
}

static int count_marks(const mmp_metrics *m, mmp_heat_mark k)
{
    int n = 0;
    for (int x = 0; x < m->heat_rows * m->heat_cols; x++) n += m->heat_mark[x] == k;
    return n;
}

/* "first (i,j)" right after `part` in the message */
static void message_first(const mmp_case_result *r, const char *part, long long *i, long long *j)
{
    const char *p = strstr(r->message, part);
    ck_assert_msg(p != NULL, "no '%s' in: %s", part, r->message);
    p = strstr(p, "first (");
    ck_assert_msg(p && sscanf(p, "first (%lld,%lld)", i, j) == 2, "no first position in: %s", r->message);
}

START_TEST(unwritten_cells)
{
    mmp_case_result r;
    run_one(&r, "mut_host_edge_tile", 37, 24, 32, MMP_DIST_UNIFORM);
    const mmp_metrics *m = &r.metrics;
    ck_assert_int_eq(r.verdict, MMP_VERDICT_FAIL);
    ck_assert(r.reasons & MMP_REASON_UNWRITTEN);
    ck_assert_int_eq(m->heat_rows, 37);
    ck_assert_int_eq(m->heat_cols, 24);
    for (int i = 0; i < 37; i++)
        for (int j = 0; j < 24; j++)
            ck_assert_msg(m->heat_mark[i * 24 + j] == (i >= 32 ? MMP_HEAT_MARK_UNWRITTEN : MMP_HEAT_MARK_NONE),
                          "cell (%d,%d) mark %d", i, j, m->heat_mark[i * 24 + j]);
    long long fi, fj;
    message_first(&r, "unwritten:", &fi, &fj);
    ck_assert_int_eq(fi, 32);
    ck_assert_int_eq(fj, 0);
    ck_assert_int_eq(m->first_bad_i, fi);
    ck_assert_int_eq(m->first_bad_j, fj);
    ck_assert_int_eq(m->heat_mark[mmp_heat_cell(fi, fj, 37, 24, 37, 24)], MMP_HEAT_MARK_UNWRITTEN);
    ck_assert_int_eq(count_marks(m, MMP_HEAT_MARK_UNWRITTEN), (int)r.n_unwritten);
}
END_TEST

START_TEST(nan_cells)
{
    mmp_case_result r;
    run_one(&r, "mut_host_nan_clamp", 16, 16, 32, MMP_DIST_SPECIAL);
    const mmp_metrics *m = &r.metrics;
    ck_assert_int_eq(r.verdict, MMP_VERDICT_FAIL);
    ck_assert(r.reasons & MMP_REASON_NAN_MISMATCH);
    ck_assert_int_eq(m->heat_rows, 16);
    int nan_cells = count_marks(m, MMP_HEAT_MARK_NAN);
    ck_assert_int_gt(nan_cells, 0);
    ck_assert_int_eq(nan_cells, (int)(m->nan_mismatch + m->inf_mismatch));   /* one element per cell */
    ck_assert_int_eq(count_marks(m, MMP_HEAT_MARK_UNWRITTEN) + count_marks(m, MMP_HEAT_MARK_GUARD), 0);
    long long fi, fj;
    message_first(&r, "nan-mismatch:", &fi, &fj);
    ck_assert_int_eq(m->heat_mark[fi * 16 + fj], MMP_HEAT_MARK_NAN);
    ck_assert_int_eq(m->first_bad_i, fi);
    ck_assert_int_eq(m->first_bad_j, fj);
    /* no NaN-marked cell comes before the first in row-major order */
    for (long long x = 0; x < fi * 16 + fj; x++) ck_assert_int_ne(m->heat_mark[x], MMP_HEAT_MARK_NAN);
}
END_TEST

START_TEST(guard_cell)
{
    mmp_case_result r;
    run_one(&r, "mut_host_write_past", 24, 24, 16, MMP_DIST_UNIFORM);
    const mmp_metrics *m = &r.metrics;
    ck_assert(r.reasons & MMP_REASON_GUARD);
    ck_assert_int_eq(m->heat_rows * m->heat_cols, 24 * 24);
    ck_assert_int_eq(m->heat_mark[24 * 24 - 1], MMP_HEAT_MARK_GUARD);
    ck_assert_int_eq(count_marks(m, MMP_HEAT_MARK_GUARD), 1);
}
END_TEST

START_TEST(control_unmarked)
{
    mmp_case_result r;
    run_one(&r, "host_f16_f32", 37, 24, 32, MMP_DIST_UNIFORM);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_PASS);
    ck_assert_int_eq(count_marks(&r.metrics, MMP_HEAT_MARK_NONE), r.metrics.heat_rows * r.metrics.heat_cols);
    run_one(&r, "host_f16_f32", 16, 16, 32, MMP_DIST_SPECIAL);
    ck_assert_int_eq(r.verdict, MMP_VERDICT_PASS);
    ck_assert_int_eq(count_marks(&r.metrics, MMP_HEAT_MARK_NONE), r.metrics.heat_rows * r.metrics.heat_cols);
}
END_TEST

START_TEST(marks_round_trip_and_drawn)
{
    mmp_case_result r[2];
    run_one(&r[0], "mut_host_edge_tile", 37, 24, 32, MMP_DIST_UNIFORM);
    run_one(&r[1], "mut_host_nan_clamp", 16, 16, 32, MMP_DIST_SPECIAL);
    mmp_run run;
    mmp_run_init(&run);
    ck_assert_int_eq(mmp_run_add(&run, &r[0]), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_run_add(&run, &r[1]), MMP_STATUS_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(mmp_report_write_json_stream(f, &run), MMP_STATUS_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"marks\""));
    mmp_run back;
    mmp_run_init(&back);
    ck_assert_msg(mmp_report_read_json_text(&back, text, len, "marks.json") == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(back.n_cases, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(memcmp(back.cases[i].metrics.heat_mark, r[i].metrics.heat_mark, sizeof r[i].metrics.heat_mark) == 0,
                      "case %d: marks differ after the round trip", i);
    char *html = NULL;
    size_t hlen = 0;
    f = open_memstream(&html, &hlen);
    mmp_report_print_html(f, &back);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(html, "unwritten (poison left)"));
    ck_assert_ptr_nonnull(strstr(html, "NaN/Inf mismatch"));
    ck_assert_ptr_nonnull(strstr(html, "fill=\"#000000\""));
    ck_assert_ptr_nonnull(strstr(html, "first failing element (32, 0)"));
    /* a malformed mark is refused, naming its path */
    char *bad = strdup(text);
    char *p = strstr(bad, "\"marks\":[");
    ck_assert_ptr_nonnull(p);
    p[9] = '7';
    mmp_run junk;
    mmp_run_init(&junk);
    ck_assert_int_ne(mmp_report_read_json_text(&junk, bad, len, "bad.json"), MMP_STATUS_OK);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "heatmap.marks"));
    mmp_run_clear(&junk);
    free(bad);
    free(html);
    free(text);
    mmp_run_clear(&back);
    mmp_run_clear(&run);
}
END_TEST

static Suite *heatmarks_suite(void)
{
    Suite *s = suite_create("heatmarks");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, unwritten_cells);
    tcase_add_test(tc, nan_cells);
    tcase_add_test(tc, guard_cell);
    tcase_add_test(tc, control_unmarked);
    tcase_add_test(tc, marks_round_trip_and_drawn);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(heatmarks_suite)
