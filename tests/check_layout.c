/* check_layout.c — the fragment-layout analysis (probes/layout_*.c), on the CPU.
 *
 * What it proves:
 *  - every documented mapping (PTX ISA formulas) is a bijection lane x element <-> matrix
 *    elements (the full matrix, or for m8n8k4 the four diagonal blocks), in range;
 *  - the stored synthetic captures (tests/data/captures/layout/synthetic/) are exactly what the
 *    formulas give and analyse as "matches the PTX ISA";
 *  - the GPU path's pair-probe reconstruction recovers the documented mapping from the pair
 *    table the documented mapping predicts, for every mma.sync shape;
 *  - a planted difference is found and named: the stored capture with lanes 3 and 7 of A
 *    swapped (tests/data/captures/layout/planted/), and for every shape a random lane pair swapped
 *    in A before the pair table is made (so the reconstruction, not just the comparison, sees it);
 *  - the pair-table check counts observations a reconstructed mapping does not explain;
 *  - duplicates, uncovered elements and malformed files are reported;
 *  - GPU captures stored under results/<gpu>/captures/layout/ parse and are consistent.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/layout.h"
#include "mmaprobe/probe.h"
#include "tests/check_main.h"

#define CAPDIR MMP_SOURCE_DIR "/tests/data/captures/layout"
#define RESULTS MMP_SOURCE_DIR "/results"

static int count_mma(void)
{
    int n = 0;
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) n += !strcmp(mmp_layout_doc_get(i)->kind, "mma");
    return n;
}

START_TEST(test_doc_bijection)
{
    ck_assert_int_ge(count_mma(), 25);
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *d = mmp_layout_doc_get(i);
        for (int f = 0; f < d->n_frags; f++) {
            const mmp_layout_doc_frag *df = &d->frags[f];
            int cells = df->rows * df->cols;
            int *seen = calloc((size_t)cells, sizeof(int));
            ck_assert_ptr_nonnull(seen);
            for (int l = 0; l < d->threads; l++)
                for (int e = 0; e < df->elems_per_lane; e++) {
                    int r = -1, c = -1;
                    ck_assert_int_eq(df->fn(&r, &c, l, e, df->param), 0);
                    ck_assert_msg(r >= 0 && r < df->rows && c >= 0 && c < df->cols, "%s %s lane %d elem %d -> (%d,%d) out of %dx%d",
                                  d->id, df->name, l, e, r, c, df->rows, df->cols);
                    ck_assert_msg(seen[r * df->cols + c]++ == 0, "%s %s: (%d,%d) held twice", d->id, df->name, r, c);
                }
            int held = d->threads * df->elems_per_lane;
            /* m8n8k4 is four block-diagonal MMAs: a quarter of each stored matrix per block */
            int blocks = strstr(d->id, "m8n8k4.") && strstr(d->id, "f16") ? 4 : 1;
            ck_assert_msg(held * blocks == cells, "%s %s: %d held of %d cells (%d blocks)", d->id, df->name, held, cells, blocks);
            free(seen);
        }
    }
}
END_TEST

START_TEST(test_doc_pairs_roundtrip)
{
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *d = mmp_layout_doc_get(i);
        if (strcmp(d->kind, "mma") != 0) continue;
        mmp_layout_capture doc, rec;
        mmp_layout_capture_init(&doc);
        mmp_layout_capture_init(&rec);
        ck_assert_int_eq(mmp_layout_doc_capture(&doc, d), MMP_STATUS_OK);
        int na, nb, nc;
        mmp_layout_pair_sizes(&na, &nb, &nc, d);
        int32_t *pairs = malloc(sizeof(int32_t) * (size_t)na * nb), *cmap = malloc(sizeof(int32_t) * (size_t)nc);
        ck_assert_int_eq(mmp_layout_pairs_from_capture(pairs, cmap, &doc), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_layout_from_pairs(&rec, d, pairs, cmap), MMP_STATUS_OK);
        mmp_layout_report rep;
        ck_assert_int_eq(mmp_layout_analyse(&rep, &rec), MMP_STATUS_OK);
        ck_assert_msg(rep.consistent && rep.documented && rep.differences == 0, "%s: consistent %d differences %lld",
                      d->id, rep.consistent, (long long)rep.differences);
        ck_assert_uint_eq(rec.n_slots, doc.n_slots);
        int64_t bad = -1;
        ck_assert_int_eq(mmp_layout_pairs_check(&bad, pairs, cmap, &rec), MMP_STATUS_OK);
        ck_assert_int_eq(bad, 0);
        /* an observation no mapping explains (a product landing twice) is counted */
        int32_t keep = pairs[0];
        pairs[0] = -2;
        ck_assert_int_eq(mmp_layout_pairs_check(&bad, pairs, cmap, &rec), MMP_STATUS_OK);
        ck_assert_int_eq(bad, 1);
        pairs[0] = keep;
        free(pairs); free(cmap);
        mmp_layout_capture_clear(&doc);
        mmp_layout_capture_clear(&rec);
    }
}
END_TEST

/* A random lane pair swapped in A before the pair table: only those lanes, only in A. */
START_TEST(test_pairs_planted_swap)
{
    uint64_t s = mmp_check_seed ^ 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *d = mmp_layout_doc_get(i);
        if (strcmp(d->kind, "mma") != 0) continue;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int l1 = (int)(s >> 33) % 32, l2 = (l1 + 1 + (int)((s >> 40) % 31)) % 32;
        mmp_layout_capture doc, rec;
        mmp_layout_capture_init(&doc);
        mmp_layout_capture_init(&rec);
        ck_assert_int_eq(mmp_layout_doc_capture(&doc, d), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_layout_capture_swap_lanes(&doc, "A", l1, l2), MMP_STATUS_OK);
        int na, nb, nc;
        mmp_layout_pair_sizes(&na, &nb, &nc, d);
        int32_t *pairs = malloc(sizeof(int32_t) * (size_t)na * nb), *cmap = malloc(sizeof(int32_t) * (size_t)nc);
        ck_assert_int_eq(mmp_layout_pairs_from_capture(pairs, cmap, &doc), MMP_STATUS_OK);
        ck_assert_int_eq(mmp_layout_from_pairs(&rec, d, pairs, cmap), MMP_STATUS_OK);
        mmp_layout_report rep;
        ck_assert_int_eq(mmp_layout_analyse(&rep, &rec), MMP_STATUS_OK);
        uint32_t want[4] = {0};
        want[0] = (1u << l1) | (1u << l2);
        char got[256];
        mmp_layout_lanes_format(got, sizeof got, rep.frags[0].differing_lanes);
        ck_assert_msg(!memcmp(rep.frags[0].differing_lanes, want, sizeof want), "%s: swapped lanes %d,%d; differing: %s",
                      d->id, l1, l2, got);
        for (int f = 1; f < 4; f++)
            ck_assert_msg(rep.frags[f].differences == 0, "%s: swap in A shows in %s", d->id, rec.frags[f].name);
        int64_t bad = -1;   /* a swapped mapping is still a mapping: it explains its own pair table */
        ck_assert_int_eq(mmp_layout_pairs_check(&bad, pairs, cmap, &rec), MMP_STATUS_OK);
        ck_assert_int_eq(bad, 0);
        free(pairs); free(cmap);
        mmp_layout_capture_clear(&doc);
        mmp_layout_capture_clear(&rec);
    }
}
END_TEST

START_TEST(test_stored_synthetic)
{
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *d = mmp_layout_doc_get(i);
        char path[1024];
        snprintf(path, sizeof path, "%s/synthetic/%s.txt", CAPDIR, d->id);
        mmp_layout_capture got, want;
        mmp_layout_capture_init(&got);
        mmp_layout_capture_init(&want);
        ck_assert_msg(mmp_layout_capture_read(&got, path) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_int_eq(mmp_layout_doc_capture(&want, d), MMP_STATUS_OK);
        ck_assert_uint_eq(got.n_slots, want.n_slots);
        ck_assert_int_eq(got.n_frags, want.n_frags);
        ck_assert_msg(!memcmp(got.slots, want.slots, got.n_slots * sizeof *got.slots), "%s differs from the formulas", path);
        mmp_layout_report rep;
        ck_assert_int_eq(mmp_layout_analyse(&rep, &got), MMP_STATUS_OK);
        ck_assert_msg(rep.consistent && rep.documented && rep.differences == 0, "%s", d->id);
        for (int f = 0; f < rep.n_frags; f++) ck_assert_int_eq(rep.frags[f].duplicated, 0);
        mmp_layout_capture_clear(&got);
        mmp_layout_capture_clear(&want);
    }
}
END_TEST

START_TEST(test_stored_planted)
{
    mmp_layout_capture cap;
    mmp_layout_capture_init(&cap);
    ck_assert_msg(mmp_layout_capture_read(&cap, CAPDIR "/planted/mma.m16n8k16.f32.f16.txt") == MMP_STATUS_OK, "%s",
                  mmp_error_last());
    mmp_layout_report rep;
    ck_assert_int_eq(mmp_layout_analyse(&rep, &cap), MMP_STATUS_OK);
    ck_assert(rep.consistent);                 /* still a bijection: only the PTX comparison sees it */
    ck_assert_int_eq(rep.frags[0].differences, 16);   /* 8 elements of lane 3 and 8 of lane 7 */
    char lanes[64];
    ck_assert_str_eq(mmp_layout_lanes_format(lanes, sizeof lanes, rep.frags[0].differing_lanes), "3, 7");
    for (int f = 1; f < 4; f++) ck_assert_int_eq(rep.frags[f].differences, 0);
    /* the text names the fragment and both lanes */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    mmp_layout_print_text(m, &cap, &rep);
    fclose(m);
    ck_assert_ptr_nonnull(strstr(buf, "difference: A lane 3 "));
    ck_assert_ptr_nonnull(strstr(buf, "difference: A lane 7 "));
    ck_assert_ptr_nonnull(strstr(buf, "differs-from-ptx-isa"));
    free(buf);
    mmp_layout_capture_clear(&cap);
}
END_TEST

START_TEST(test_duplicates_and_gaps)
{
    /* an undocumented capture: lane 1 also holds lane 0's element; (0,1) is then unheld */
    mmp_layout_capture cap;
    mmp_layout_capture_init(&cap);
    snprintf(cap.id, sizeof cap.id, "test.dup");
    snprintf(cap.kind, sizeof cap.kind, "wmma");
    cap.threads = 32;
    int f;
    ck_assert_int_eq(mmp_layout_capture_add_frag(&f, &cap, "X", 8, 4, 1, 1), MMP_STATUS_OK);
    for (int l = 0; l < 32; l++) ck_assert_int_eq(mmp_layout_capture_add(&cap, f, l, 0, l / 4, l == 1 ? 0 : l % 4), MMP_STATUS_OK);
    mmp_layout_report rep;
    ck_assert_int_eq(mmp_layout_analyse(&rep, &cap), MMP_STATUS_OK);
    ck_assert_int_eq(rep.frags[0].duplicated, 1);
    ck_assert_int_eq(rep.frags[0].uncovered, 1);
    ck_assert(!rep.consistent);
    ck_assert(!rep.documented);
    /* round trip through the text format */
    char path[] = "/tmp/mmp_layout_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(mmp_layout_capture_write_file(path, &cap), MMP_STATUS_OK);
    mmp_layout_capture back;
    mmp_layout_capture_init(&back);
    ck_assert_int_eq(mmp_layout_capture_read(&back, path), MMP_STATUS_OK);
    ck_assert_uint_eq(back.n_slots, cap.n_slots);
    ck_assert(!memcmp(back.slots, cap.slots, cap.n_slots * sizeof *cap.slots));
    unlink(path);
    mmp_layout_capture_clear(&back);
    mmp_layout_capture_clear(&cap);
}
END_TEST

/* Captures measured on GPUs (results/<gpu>/captures/layout/, made by
 * scripts/device/30-probe.sh (probe --write-capture)): each must parse and be a consistent mapping (every element
 * held, nothing unplaced); differences from the PTX ISA are findings and are printed. */
START_TEST(test_stored_gpu)
{
    const char *gpus[] = {"h200", "h100", "a100", "l40s"};
    int seen = 0;
    for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s/captures/layout", RESULTS, gpus[g]);
        DIR *d = opendir(dir);
        if (!d) continue;
        for (struct dirent *e; (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 4, ".txt")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            mmp_layout_capture cap;
            mmp_layout_capture_init(&cap);
            ck_assert_msg(mmp_layout_capture_read(&cap, path) == MMP_STATUS_OK, "%s", mmp_error_last());
            mmp_layout_report rep;
            ck_assert_int_eq(mmp_layout_analyse(&rep, &cap), MMP_STATUS_OK);
            printf("# %s/%s: %s, %lld differences from the PTX ISA\n", gpus[g], cap.id,
                   rep.consistent ? "consistent" : "INCONSISTENT", (long long)rep.differences);
            ck_assert_msg(rep.consistent, "%s is not a consistent mapping", path);
            mmp_layout_capture_clear(&cap);
            seen++;
        }
        closedir(d);
    }
    if (!seen) printf("# no GPU captures stored yet under %s/<gpu>/captures/layout/ (scripts/device/30-probe.sh (probe --write-capture) makes them)\n", RESULTS);
}
END_TEST

static const char *k_bad[] = {
    "",                                                                        /* empty */
    "not a capture\n",
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A 4 4 1 1\nA 0 0 0 0 0\n", /* no end */
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A 4 4 1 1\nB 0 0 0 0 0\nend\n",
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A 4 4 1 1\nA 40 0 0 0 0\nend\n",
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A 4 4 2 1\nA 0 0 1 0 0\nend\n",   /* reg != elem/per_reg */
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A 4 4 1 1\nA 0 0 0 0\nend\n",
    "mmaprobe-layout-capture 1\ncapture x mma 32\nfragment A -4 4 1 1\nend\n",
};

START_TEST(test_bad_files)
{
    char path[] = "/tmp/mmp_layout_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, k_bad[_i], strlen(k_bad[_i])), (ssize_t)strlen(k_bad[_i]));
    close(fd);
    mmp_layout_capture cap;
    mmp_layout_capture_init(&cap);
    mmp_status st = mmp_layout_capture_read(&cap, path);
    ck_assert_int_eq(st, MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), path));
    unlink(path);
    mmp_layout_capture_clear(&cap);
}
END_TEST

START_TEST(test_run_from_capture)
{
    /* the entry point on the stored synthetic captures: every one matches, exit 0, JSON made */
    char *tbuf = NULL;
    size_t tlen = 0;
    FILE *t = open_memstream(&tbuf, &tlen);
    char *argv[] = {"layout", "--from-capture", CAPDIR "/synthetic", "--quiet"};
    mmp_probe_results res;
    mmp_probe_results_init(&res);
    int rc = mmp_probe_layout_run(&res.layout, t, 4, argv);
    fclose(t);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, tbuf);
    ck_assert_ptr_nonnull(strstr(tbuf, "# "));                     /* environment header */
    ck_assert_int_eq(res.layout.present, 1);
    ck_assert_int_eq(res.layout.n_match, (int)mmp_layout_doc_count());
    ck_assert_uint_eq(res.layout.n, mmp_layout_doc_count());
    ck_assert_str_eq(res.layout.mode, "from-capture");
    for (size_t i = 0; i < res.layout.n; i++) {
        const mmp_layout_result *c = &res.layout.items[i];
        ck_assert_msg(c->consistent && c->documented && c->differences == 0, "%s", c->id);
        ck_assert_ptr_nonnull(c->frags[0].owner);
    }
    free(tbuf);
    mmp_probe_results_clear(&res);
    /* the planted capture: exit 1 */
    t = open_memstream(&tbuf, &tlen);
    char *argv2[] = {"layout", "--from-capture", CAPDIR "/planted"};
    mmp_probe_results_init(&res);
    ck_assert_int_eq(mmp_probe_layout_run(&res.layout, t, 3, argv2), 1);
    ck_assert_int_eq(res.layout.n_differ, 1);
    mmp_probe_results_clear(&res);
    fclose(t);
    free(tbuf);
    char *argv3[] = {"layout", "--bogus"};
    ck_assert_int_eq(mmp_probe_layout_run(&res.layout, NULL, 2, argv3), 2);
}
END_TEST

static Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("doc");
    tcase_add_test(tc, test_doc_bijection);
    tcase_add_test(tc, test_doc_pairs_roundtrip);
    tcase_add_test(tc, test_pairs_planted_swap);
    suite_add_tcase(s, tc);
    tc = tcase_create("captures");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_stored_synthetic);
    tcase_add_test(tc, test_stored_planted);
    tcase_add_test(tc, test_stored_gpu);
    tcase_add_test(tc, test_duplicates_and_gaps);
    tcase_add_loop_test(tc, test_bad_files, 0, (int)(sizeof k_bad / sizeof k_bad[0]));
    tcase_add_test(tc, test_run_from_capture);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(layout_suite)
