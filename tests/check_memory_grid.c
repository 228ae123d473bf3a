/* check_memory_grid.c — the lane -> bank grids of shared-memory requests (probes/memory_grid.c)
 * and their pictures (reports/render_memory.c):
 *   - every calibration access: the grid has the wavefronts mmp_memory_smem_cost counts, and
 *     ldmatrix with 64-byte rows (4-way) stacks lanes 0, 2, 4, 6 in bank 0 over 4 wavefronts;
 *   - the kernels' maps: bf16_mma_plain's A ldmatrix.x4 is 4-way (16 wavefronts, 4 per
 *     phase), bf16_mma_swizzle's conflict-free (4 wavefronts, one per phase); every request a
 *     report keeps lays out to its own wavefront count;
 *   - the requests survive the run document (JSON written and read back, byte for byte);
 *   - the HTML draws the grids, and shows the counters-beside-the-model table and bars only
 *     when the document holds a measurement.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/memory.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "tests/check_main.h"

static void analyse(mmp_memory_report *r, const char *kernel)
{
    size_t nmaps;
    const mmp_kernel_memmap *const *maps = mmp_registry_memmaps(&nmaps);
    const mmp_kernel_memmap *m = NULL;
    for (size_t j = 0; j < nmaps; j++)
        if (!strcmp(maps[j]->kernel, kernel)) m = maps[j];
    ck_assert_msg(m != NULL, "%s has no memory map", kernel);
    mmp_memmap_shape shape = {2048, 2048, 2048, 2048, 2048, 0, 0};
    ck_assert_int_eq(mmp_memory_analyse(r, m, &shape, 1), MMP_STATUS_OK);
}

static const mmp_memory_request *site(const mmp_memory_report *r, const char *label)
{
    for (int s = 0; s < r->n_requests; s++)
        if (!strcmp(r->requests[s].label, label)) return &r->requests[s];
    ck_abort_msg("%s keeps no request of site '%s'", r->kernel, label);
    return NULL;
}

START_TEST(calibration_grids)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    int saw_row64 = 0;
    for (size_t i = 0; i < nc; i++) {
        mmp_warp_access a;
        mmp_smem_cost cost;
        mmp_memory_request q;
        mmp_memory_grid g;
        mmp_memory_calib_access(&a, &c[i]);
        ck_assert_int_eq(mmp_memory_smem_cost(&cost, &a), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_memory_request_make(&q, &a, 0, &cost), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_memory_request_grid(&g, &q), MMP_STATUS_OK);
        ck_assert_msg(g.wavefronts == c[i].expected_wavefronts, "%s: grid %d wavefronts, expected %d", c[i].name,
                      (int)g.wavefronts, (int)c[i].expected_wavefronts);
        ck_assert_int_eq(g.wavefronts, cost.wavefronts);
        if (!strcmp(c[i].name, "ldsm_x4_row64")) {
            saw_row64 = 1;
            ck_assert_int_eq(g.phases, 4);
            for (int w = 0; w < 4; w++) ck_assert_uint_eq(g.lanes[w][0], 1u << (2 * w));   /* lanes 0, 2, 4, 6 */
            ck_assert_uint_eq(g.lanes[0][16], 1u << 1);                                   /* lane 1: bank 16 */
        }
    }
    ck_assert(saw_row64);
}
END_TEST

START_TEST(plain_against_swizzled)
{
    mmp_memory_report plain, swz;
    analyse(&plain, "bf16_mma_plain");
    analyse(&swz, "bf16_mma_swizzle");
    const mmp_memory_request *p = site(&plain, "A ldmatrix.x4"), *s = site(&swz, "A ldmatrix.x4");
    mmp_memory_grid gp, gs;
    ck_assert_int_eq(mmp_memory_request_grid(&gp, p), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_memory_request_grid(&gs, s), MMP_STATUS_OK);
    ck_assert_int_eq(p->ways, 4);
    ck_assert_int_eq(gp.wavefronts, 16);
    ck_assert_int_eq(gp.phases, 4);
    ck_assert_int_eq(s->ways, 1);
    ck_assert_int_eq(gs.wavefronts, 4);
    ck_assert_int_eq(gs.phases, 4);
    /* swizzled: each wavefront has every bank busy; plain: 4 lanes stacked in a bank column */
    for (int w = 0; w < gs.wavefronts; w++)
        for (int b = 0; b < 32; b++) ck_assert_uint_ne(gs.lanes[w][b], 0);
    int stacked = 0;
    for (int b = 0; b < 32; b++) {
        int n = 0;
        for (int w = 0; w < 4; w++) n += gp.lanes[w][b] != 0;
        if (n == 4) stacked++;
    }
    ck_assert_int_gt(stacked, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    mmp_memory_request_print(f, p);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "16 wavefronts in 4 phases, 4-way"));
    free(text);
}
END_TEST

START_TEST(every_kept_request_lays_out)
{
    size_t nmaps;
    const mmp_kernel_memmap *const *maps = mmp_registry_memmaps(&nmaps);
    int requests = 0;
    for (size_t i = 0; i < nmaps; i++) {
        mmp_memory_report r;
        mmp_memmap_shape shape = {2048, 2048, 2048, 2048, 2048, 0, 0};
        ck_assert_int_eq(mmp_memory_analyse(&r, maps[i], &shape, 1), MMP_STATUS_OK);
        int worst = 0;
        for (int s = 0; s < r.n_requests; s++) {
            mmp_memory_grid g;
            ck_assert_msg(mmp_memory_request_grid(&g, &r.requests[s]) == MMP_STATUS_OK, "%s %s: %s", r.kernel,
                          r.requests[s].label, mmp_error_last());
            ck_assert_msg(g.wavefronts == r.requests[s].wavefronts, "%s %s: grid %d, cost %d", r.kernel,
                          r.requests[s].label, (int)g.wavefronts, (int)r.requests[s].wavefronts);
            if (r.requests[s].ways > worst) worst = r.requests[s].ways;
            requests++;
        }
        if (r.smem_wavefronts) ck_assert_msg(worst == r.worst_ways, "%s: kept worst %d-way, report %d-way", r.kernel, worst,
                                             (int)r.worst_ways);
    }
    ck_assert_int_gt(requests, 0);
}
END_TEST

/* A probe document: the plain and swizzled analyses, one of them measured when `measured`. */
static void probe_doc(mmp_run *run, int measured)
{
    mmp_run_init(run);
    run->probes = calloc(1, sizeof *run->probes);
    ck_assert_ptr_nonnull(run->probes);
    mmp_probe_results_init(run->probes);
    mmp_memory_results *M = &run->probes->memory;
    M->present = 1;
    snprintf(M->method, sizeof M->method, "%s", measured ? "cupti" : "none");
    const char *names[2] = {"bf16_mma_plain", "bf16_mma_swizzle"};
    for (int i = 0; i < 2; i++) {
        mmp_memory_kernel_result k;
        memset(&k, 0, sizeof k);
        analyse(&k.analysis, names[i]);
        k.smem_ld_wavefronts = k.smem_st_wavefronts = k.gmem_sectors = NAN;
        k.agree = k.gmem_agree = -1;
        if (measured && i == 0) {
            k.measured = 1;
            snprintf(k.method, sizeof k.method, "cupti");
            k.smem_ld_wavefronts = 1536.25;
            k.smem_st_wavefronts = 0;
            k.gmem_sectors = 512;
            k.gmem_model = k.analysis.gmem_l1tex_sectors;
            k.agree = k.gmem_agree = 1;
        }
        ck_assert_int_eq(mmp_memory_results_add_kernel(M, &k), MMP_STATUS_OK);
    }
}

static char *render(const mmp_run *run, mmp_report_format fmt)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    ck_assert_int_eq(mmp_report_render(f, run, fmt), MMP_STATUS_OK);
    fclose(f);
    return s;
}

START_TEST(requests_round_trip)
{
    mmp_run run, back;
    probe_doc(&run, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(mmp_report_write_json_stream(f, &run), MMP_STATUS_OK);
    fclose(f);
    mmp_run_init(&back);
    ck_assert_msg(mmp_report_read_json_text(&back, text, len, "grid.json") == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_ptr_nonnull(back.probes);
    ck_assert_uint_eq(back.probes->memory.n_kernels, 2);
    for (int i = 0; i < 2; i++) {
        const mmp_memory_report *a = &run.probes->memory.kernels[i].analysis, *b = &back.probes->memory.kernels[i].analysis;
        ck_assert_int_eq(b->n_requests, a->n_requests);
        ck_assert_int_gt(a->n_requests, 0);
        ck_assert(memcmp(a->requests, b->requests, sizeof a->requests[0] * (size_t)a->n_requests) == 0);
    }
    /* written again, the document is the same bytes */
    char *again = NULL;
    size_t len2 = 0;
    f = open_memstream(&again, &len2);
    ck_assert_int_eq(mmp_report_write_json_stream(f, &back), MMP_STATUS_OK);
    fclose(f);
    ck_assert_uint_eq(len2, len);
    ck_assert(memcmp(text, again, len) == 0);
    free(again);
    free(text);
    mmp_run_clear(&back);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(html_grids_and_counters)
{
    mmp_run run;
    probe_doc(&run, 1);
    char *h = render(&run, MMP_REPORT_HTML);
    ck_assert_ptr_nonnull(strstr(h, "Counters measured beside the model"));
    ck_assert_ptr_nonnull(strstr(h, "<td>1536.2</td>"));               /* the measured figure, beside the model's */
    ck_assert_ptr_nonnull(strstr(h, "aria-label=\"measured beside the model\""));
    ck_assert_ptr_nonnull(strstr(h, "<b>16 wavefronts</b> in 4 phases"));   /* plain */
    ck_assert_ptr_nonnull(strstr(h, "4-way bank conflict"));
    ck_assert_ptr_nonnull(strstr(h, "<b>4 wavefronts</b> in 4 phases, conflict-free"));   /* swizzled */
    free(h);
    mmp_run_clear(&run);
    probe_doc(&run, 0);
    h = render(&run, MMP_REPORT_HTML);
    ck_assert_ptr_null(strstr(h, "Counters measured beside the model"));
    ck_assert_ptr_nonnull(strstr(h, "aria-label=\"lanes by bank and wavefront\""));
    free(h);
    mmp_run_clear(&run);
}
END_TEST

static Suite *memory_grid_suite(void)
{
    Suite *s = suite_create("memory_grid");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, calibration_grids);
    tcase_add_test(tc, plain_against_swizzled);
    tcase_add_test(tc, every_kept_request_lays_out);
    tcase_add_test(tc, requests_round_trip);
    tcase_add_test(tc, html_grids_and_counters);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(memory_grid_suite)
