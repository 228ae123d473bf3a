/* check_diff_merge.c — `mmaprobe diff` and `mmaprobe merge`: regressions, fixes, ratio growth,
 * missing and newly skipped cases (regressions unless allowed), Markdown output, exit codes; merging shards back into the whole run,
 * refusing mismatched schema versions, kinds and conflicting duplicate IDs, keeping each
 * shard's environment; malformed and unreadable inputs (exit 2) and outputs (exit 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "cli/cli.h"
#include "mmaprobe/report.h"
#include "mmaprobe/json.h"
#include "tests/lib/sample.h"
#include "tests/check_main.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/mmp_check_diff.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static char *path_of(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void save(const mmp_run *run, const char *name)
{
    ck_assert_msg(mmp_report_write_json(path_of(name), run) == MMP_STATUS_OK, "%s", mmp_error_last());
}

static char *diff_opt(const mmp_run *a, const mmp_run *b, const mmp_diff_options *opt, size_t *reg)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(mmp_report_diff(f, reg, a, b, opt), MMP_STATUS_OK);
    fclose(f);
    return buf;
}

static char *diff_text(const mmp_run *a, const mmp_run *b, double growth, int md, size_t *reg)
{
    mmp_diff_options opt = {growth, md, 0, 0};
    return diff_opt(a, b, &opt, reg);
}

static size_t find(const mmp_run *r, const char *fragment, mmp_verdict v)
{
    for (size_t i = 0; i < r->n_cases; i++)
        if (strstr(r->cases[i].id, fragment) && r->cases[i].verdict == v) return i;
    ck_abort_msg("no %s case matching %s", mmp_verdict_name(v), fragment);
    return 0;
}

START_TEST(diff_identical_is_clean)
{
    mmp_run a, b;
    ck_assert_int_eq(mmp_report_sample(&a), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_report_sample(&b), MMP_STATUS_OK);
    size_t reg;
    char *t = diff_text(&a, &b, 2.0, 0, &reg);
    ck_assert_uint_eq(reg, 0);
    ck_assert(strstr(t, "no regression"));
    free(t);
    save(&a, "a.json");
    save(&b, "b.json");
    char *argv[] = {"diff", path_of("a.json"), path_of("b.json"), NULL};
    ck_assert_int_eq(mmp_cli_diff(3, argv), MMP_EXIT_PASS);
    mmp_run_clear(&a);
    mmp_run_clear(&b);
}
END_TEST

START_TEST(diff_finds_regressions_and_fixes)
{
    mmp_run base, cur;
    ck_assert_int_eq(mmp_report_sample(&base), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_report_sample(&cur), MMP_STATUS_OK);
    size_t p = find(&cur, "v1/f16.f16.f32/64x64x256", MMP_VERDICT_PASS);
    cur.cases[p].verdict = MMP_VERDICT_FAIL;                      /* new failure */
    cur.cases[p].reasons = MMP_REASON_UNWRITTEN;
    snprintf(cur.cases[p].message, sizeof cur.cases[p].message, "12 elements | unwritten <poison>");
    size_t f = find(&cur, "planted/bf16.bf16.f32/64x64x64", MMP_VERDICT_FAIL);
    cur.cases[f].verdict = MMP_VERDICT_PASS;                      /* fixed */
    size_t g = find(&cur, "v1/bf16.bf16.f32/64x64x1024", MMP_VERDICT_PASS);
    cur.cases[g].metrics.max_ratio_det *= 3;                      /* worse by x3, still PASS */
    cur.n_cases--;                                                /* last case (a SKIP) missing */
    size_t reg;
    char *t = diff_text(&base, &cur, 2.0, 0, &reg);
    ck_assert_msg(reg == 3, "%s", t);   /* the new failure, the x3 growth, the missing case */
    ck_assert(strstr(t, "REGRESSION") && strstr(t, "New failures (1)") && strstr(t, "Worse beyond the threshold (1)"));
    ck_assert(strstr(t, "Fixed (1)") && strstr(t, "Missing from the new run (1, a regression (--allow-missing to allow))"));
    ck_assert(strstr(t, "mma_sync_m16n8k16_v1/f16.f16.f32/64x64x256/uniform/s43: PASS -> FAIL [unwritten]"));
    free(t);
    /* a looser threshold forgives the x3 growth */
    t = diff_text(&base, &cur, 4.0, 0, &reg);
    ck_assert_uint_eq(reg, 2);
    free(t);
    mmp_diff_options allow = {4.0, 0, 1, 0};
    t = diff_opt(&base, &cur, &allow, &reg);
    ck_assert_msg(reg == 1 && strstr(t, "Missing from the new run (1, allowed by --allow-missing)"), "%s", t);
    free(t);
    /* Markdown for a CI comment */
    t = diff_text(&base, &cur, 2.0, 1, &reg);
    ck_assert(strstr(t, "## mmaprobe diff: ❌ regressions") && strstr(t, "### New failures (1)"));
    ck_assert(strstr(t, "12 elements \\| unwritten &lt;poison&gt;"));
    free(t);
    /* through the CLI: exit 1, and --format md -o FILE */
    save(&base, "base.json");
    save(&cur, "new.json");
    char *argv[] = {"diff", path_of("base.json"), path_of("new.json"), "--format", "md", "-o", path_of("d.md"), NULL};
    ck_assert_int_eq(mmp_cli_diff(7, argv), MMP_EXIT_FAIL);
    ck_assert_int_eq(access(path_of("d.md"), R_OK), 0);
    char *argv2[] = {"diff", path_of("base.json"), path_of("new.json"), "--max-ratio-growth=4", "-o", path_of("d.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(6, argv2), MMP_EXIT_FAIL);     /* the new failure remains */
    /* the reverse direction: fixes only... and one new failure (the planted case) */
    char *argv3[] = {"diff", path_of("new.json"), path_of("base.json"), "-o", path_of("r.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(5, argv3), MMP_EXIT_FAIL);
    mmp_run_clear(&base);
    mmp_run_clear(&cur);
}
END_TEST

/* The CI gate's holes: a run without the GPU (every PASS now SKIP) and a smaller or interrupted
 * run (cases missing) are regressions unless allowed, through the API and the CLI. */
START_TEST(diff_gates_missing_and_skipped)
{
    mmp_run base, noskip, few;
    ck_assert_int_eq(mmp_report_sample(&base), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_report_sample(&noskip), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_report_sample(&few), MMP_STATUS_OK);
    size_t passes = 0;
    for (size_t i = 0; i < noskip.n_cases; i++)
        if (noskip.cases[i].verdict == MMP_VERDICT_PASS) {
            noskip.cases[i].verdict = MMP_VERDICT_SKIP;
            noskip.cases[i].reasons = 0;
            passes++;
        }
    ck_assert_uint_gt(passes, 2);
    few.n_cases = 3;                 /* the rest missing, as from an interrupted run */
    few.complete = 0;
    snprintf(few.interrupted_by, sizeof few.interrupted_by, "SIGTERM");
    size_t reg;
    char *t = diff_text(&base, &noskip, 2.0, 0, &reg);
    ck_assert_msg(reg == passes && strstr(t, "Passed before, skipped now") && strstr(t, "REGRESSION"), "%s", t);
    free(t);
    mmp_diff_options allow_skip = {2.0, 0, 0, 1};
    t = diff_opt(&base, &noskip, &allow_skip, &reg);
    ck_assert_msg(reg == 0 && strstr(t, "allowed by --allow-skip"), "%s", t);
    free(t);
    t = diff_text(&base, &few, 2.0, 0, &reg);
    ck_assert_msg(reg == base.n_cases - 3 && strstr(t, "the new run is incomplete (SIGTERM)"), "%s", t);
    free(t);
    save(&base, "base.json");
    save(&noskip, "noskip.json");
    save(&few, "few.json");
    char *a1[] = {"diff", path_of("base.json"), path_of("noskip.json"), "-o", path_of("o1.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(5, a1), MMP_EXIT_FAIL);
    char *a2[] = {"diff", path_of("base.json"), path_of("noskip.json"), "--allow-skip", "-o", path_of("o2.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(6, a2), MMP_EXIT_PASS);
    char *a3[] = {"diff", path_of("base.json"), path_of("few.json"), "-o", path_of("o3.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(5, a3), MMP_EXIT_FAIL);
    char *a4[] = {"diff", path_of("base.json"), path_of("few.json"), "--allow-missing", "-o", path_of("o4.txt"), NULL};
    ck_assert_int_eq(mmp_cli_diff(6, a4), MMP_EXIT_PASS);
    mmp_run_clear(&base);
    mmp_run_clear(&noskip);
    mmp_run_clear(&few);
}
END_TEST

START_TEST(diff_bad_inputs)
{
    mmp_run a;
    ck_assert_int_eq(mmp_report_sample(&a), MMP_STATUS_OK);
    save(&a, "a.json");
    FILE *f = fopen(path_of("trunc.json"), "w");
    fputs("{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":", f);
    fclose(f);
    f = fopen(path_of("v2.json"), "w");
    fputs("{\"format\":\"mmaprobe-run\",\"schema_version\":\"2.0\",\"env\":{},\"cases\":[]}", f);
    fclose(f);
    char *t1[] = {"diff", path_of("a.json"), path_of("trunc.json"), NULL};
    ck_assert_int_eq(mmp_cli_diff(3, t1), MMP_EXIT_USAGE);
    ck_assert_msg(strstr(mmp_error_last(), "trunc.json:1:"), "%s", mmp_error_last());
    char *t2[] = {"diff", path_of("v2.json"), path_of("a.json"), NULL};
    ck_assert_int_eq(mmp_cli_diff(3, t2), MMP_EXIT_USAGE);
    ck_assert(strstr(mmp_error_last(), "schema version 2.0 is not supported"));
    char *t3[] = {"diff", path_of("a.json"), NULL};
    ck_assert_int_eq(mmp_cli_diff(2, t3), MMP_EXIT_USAGE);
    char *t4[] = {"diff", path_of("a.json"), path_of("a.json"), "--max-ratio-growth", "0.5", NULL};
    ck_assert_int_eq(mmp_cli_diff(5, t4), MMP_EXIT_USAGE);
    char *t5[] = {"diff", path_of("a.json"), path_of("a.json"), "--max-ratio-growth", "nan", NULL};
    ck_assert_int_eq(mmp_cli_diff(5, t5), MMP_EXIT_USAGE);
    char *t6[] = {"diff", path_of("a.json"), path_of("a.json"), "--format", "html", NULL};
    ck_assert_int_eq(mmp_cli_diff(5, t6), MMP_EXIT_USAGE);
    char *t7[] = {"diff", path_of("a.json"), path_of("nothere.json"), NULL};
    ck_assert_int_eq(mmp_cli_diff(3, t7), MMP_EXIT_USAGE);   /* a missing input is bad input */
    mmp_run_clear(&a);
}
END_TEST

/* Split the sample into shards i/n as `--shard i/n` would (case index modulo n). */
static void shard(mmp_run *out, const mmp_run *all, int i, int n)
{
    mmp_run_init(out);
    out->env = all->env;
    out->env.device = i;
    snprintf(out->env.hostname, sizeof out->env.hostname, "node%d", i);
    snprintf(out->suite, sizeof out->suite, "%s", all->suite);
    for (size_t c = 0; c < all->n_cases; c++)
        if ((int)(c % (size_t)n) == i) {
            mmp_case_result r = all->cases[c];
            r.shard_index = i;
            r.shard_count = n;
            ck_assert_int_eq(mmp_run_add(out, &r), MMP_STATUS_OK);
        }
    if (i == 0 && all->probes) {                 /* shard 0 carries the probe results */
        out->probes = malloc(sizeof *out->probes);
        ck_assert_ptr_nonnull(out->probes);
        mmp_probe_results_init(out->probes);
        ck_assert_int_eq(mmp_probe_results_append(out->probes, all->probes), MMP_STATUS_OK);
    }
}

START_TEST(merge_shards_back)
{
    mmp_run all, s[3];
    ck_assert_int_eq(mmp_report_sample(&all), MMP_STATUS_OK);
    for (int i = 0; i < 3; i++) {
        shard(&s[i], &all, i, 3);
        char name[16];
        snprintf(name, sizeof name, "s%d.json", i);
        save(&s[i], name);
    }
    char *argv[] = {"merge", path_of("s0.json"), path_of("s1.json"), path_of("s2.json"), "-o", path_of("all.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(6, argv), MMP_EXIT_PASS);
    mmp_run m;
    mmp_run_init(&m);
    ck_assert_int_eq(mmp_report_read_json(&m, path_of("all.json")), MMP_STATUS_OK);
    ck_assert_uint_eq(m.n_cases, all.n_cases);
    ck_assert_uint_eq(m.n_shards, 3);
    ck_assert_str_eq(m.shards[2].hostname, "node2");
    ck_assert_int_eq(m.shards[1].device, 1);
    ck_assert_ptr_nonnull(m.probes);
    ck_assert_uint_eq(m.probes->layout.n, all.probes->layout.n);
    ck_assert_uint_eq(m.probes->memory.n_kernels, all.probes->memory.n_kernels);
    ck_assert_str_eq(m.probes->layout.items[0].id, all.probes->layout.items[0].id);
    /* every case is there exactly once, with its result */
    for (size_t i = 0; i < all.n_cases; i++) {
        size_t hits = 0;
        for (size_t j = 0; j < m.n_cases; j++)
            if (strcmp(m.cases[j].id, all.cases[i].id) == 0) {
                hits++;
                ck_assert_int_eq(m.cases[j].verdict, all.cases[i].verdict);
                ck_assert(m.cases[j].metrics.max_ratio_det == all.cases[i].metrics.max_ratio_det ||
                          m.cases[j].metrics.max_ratio_det != m.cases[j].metrics.max_ratio_det);
            }
        ck_assert_uint_eq(hits, 1);
    }
    /* the merge of merges keeps the shard list flat; a shard given twice is an identical duplicate */
    char *argv2[] = {"merge", path_of("all.json"), path_of("s1.json"), "-o", path_of("again.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(5, argv2), MMP_EXIT_PASS);
    mmp_run again;
    mmp_run_init(&again);
    ck_assert_int_eq(mmp_report_read_json(&again, path_of("again.json")), MMP_STATUS_OK);
    ck_assert_uint_eq(again.n_cases, all.n_cases);
    ck_assert_uint_eq(again.n_shards, 4);
    /* diff of the merged run against the whole run: nothing changed */
    size_t reg;
    char *t = diff_text(&all, &m, 2.0, 0, &reg);
    ck_assert_uint_eq(reg, 0);
    free(t);
    mmp_run_clear(&again);
    mmp_run_clear(&m);
    for (int i = 0; i < 3; i++) mmp_run_clear(&s[i]);
    mmp_run_clear(&all);
}
END_TEST

/* Shard coverage: shard 0 given twice (shard 1/2 missing) merges into an incomplete run that
 * diff then gates on; a shard that the filter left empty counts by its command line; shards of
 * different counts are refused. */
START_TEST(merge_checks_shard_coverage)
{
    mmp_run all, s0, s1, t0;
    ck_assert_int_eq(mmp_report_sample(&all), MMP_STATUS_OK);
    shard(&s0, &all, 0, 2);
    shard(&s1, &all, 1, 2);
    shard(&t0, &all, 0, 3);
    save(&s0, "s0.json");
    save(&t0, "t0.json");
    char *argv[] = {"merge", path_of("s0.json"), path_of("s0.json"), "-o", path_of("half.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(5, argv), MMP_EXIT_PASS);
    mmp_run m;
    mmp_run_init(&m);
    ck_assert_int_eq(mmp_report_read_json(&m, path_of("half.json")), MMP_STATUS_OK);
    ck_assert_msg(!m.complete && !strcmp(m.interrupted_by, "shard 1/2 missing"), "complete %d, '%s'", m.complete,
                  m.interrupted_by);
    size_t reg;
    char *t = diff_text(&all, &m, 2.0, 0, &reg);
    ck_assert_msg(reg == s1.n_cases, "%s", t);
    free(t);
    mmp_run_clear(&m);
    /* shard 1 ran but matched no case: its command line says which shard it was */
    mmp_run empty;
    mmp_run_init(&empty);
    empty.env = all.env;
    snprintf(empty.env.command, sizeof empty.env.command, "validate --suite smoke --shard 1/2 -o e.json");
    snprintf(empty.suite, sizeof empty.suite, "%s", all.suite);
    save(&empty, "e.json");
    char *argv2[] = {"merge", path_of("s0.json"), path_of("e.json"), "-o", path_of("whole.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(5, argv2), MMP_EXIT_PASS);
    mmp_run_init(&m);
    ck_assert_int_eq(mmp_report_read_json(&m, path_of("whole.json")), MMP_STATUS_OK);
    ck_assert_msg(m.complete, "'%s'", m.interrupted_by);
    mmp_run_clear(&m);
    /* shards of 2 and of 3 */
    char *argv3[] = {"merge", path_of("s0.json"), path_of("t0.json"), "-o", path_of("mixed.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(5, argv3), MMP_EXIT_USAGE);
    ck_assert_msg(strstr(mmp_error_last(), "shards of 2") && strstr(mmp_error_last(), "shards of 3"), "%s",
                  mmp_error_last());
    mmp_run_clear(&empty);
    mmp_run_clear(&s0);
    mmp_run_clear(&s1);
    mmp_run_clear(&t0);
    mmp_run_clear(&all);
}
END_TEST

START_TEST(merge_refuses_mismatches)
{
    mmp_run all, a, b;
    ck_assert_int_eq(mmp_report_sample(&all), MMP_STATUS_OK);
    shard(&a, &all, 0, 2);
    shard(&b, &all, 1, 2);
    const mmp_run *two[2] = {&a, &b};
    const char *names[2] = {"a.json", "b.json"};
    mmp_run out;
    /* different schema versions */
    b.schema_minor = MMP_REPORT_SCHEMA_MINOR + 1;
    mmp_run_init(&out);
    ck_assert_int_eq(mmp_report_merge(&out, two, names, 2), MMP_STATUS_INVALID);
    char want[160];
    snprintf(want, sizeof want, "cannot merge a.json (schema 1.%d) with b.json (schema 1.%d): different schema versions",
             MMP_REPORT_SCHEMA_MINOR, MMP_REPORT_SCHEMA_MINOR + 1);
    ck_assert_str_eq(mmp_error_last(), want);
    mmp_run_clear(&out);
    b.schema_minor = MMP_REPORT_SCHEMA_MINOR;
    /* different kinds */
    snprintf(b.kind, sizeof b.kind, "probe");
    mmp_run_init(&out);
    ck_assert_int_eq(mmp_report_merge(&out, two, names, 2), MMP_STATUS_INVALID);
    ck_assert(strstr(mmp_error_last(), "a probe run"));
    mmp_run_clear(&out);
    snprintf(b.kind, sizeof b.kind, "validate");
    /* the same case ID with another result */
    mmp_case_result dup = a.cases[0];
    dup.verdict = MMP_VERDICT_FAIL;
    ck_assert_int_eq(mmp_run_add(&b, &dup), MMP_STATUS_OK);
    mmp_run_init(&out);
    ck_assert_int_eq(mmp_report_merge(&out, two, names, 2), MMP_STATUS_INVALID);
    ck_assert_msg(strstr(mmp_error_last(), "is in a.json (PASS) and b.json (FAIL) with different results"), "%s", mmp_error_last());
    mmp_run_clear(&out);
    /* ... but the same result with other timing / device is one case */
    b.cases[b.n_cases - 1] = a.cases[0];
    b.cases[b.n_cases - 1].time_kernel_ms *= 2;
    b.cases[b.n_cases - 1].device = 5;
    mmp_run_init(&out);
    ck_assert_msg(mmp_report_merge(&out, two, names, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(out.n_cases, all.n_cases);
    mmp_run_clear(&out);
    /* probe results in two shards: entries concatenated in shard order, counts summed */
    ck_assert_ptr_nonnull(a.probes);
    ck_assert_ptr_null(b.probes);
    b.probes = malloc(sizeof *b.probes);
    ck_assert_ptr_nonnull(b.probes);
    mmp_probe_results_init(b.probes);
    ck_assert_int_eq(mmp_probe_results_append(b.probes, a.probes), MMP_STATUS_OK);
    b.probes->layout.n_match = 2;
    a.probes->layout.n_match = 1;
    mmp_run_init(&out);
    ck_assert_msg(mmp_report_merge(&out, two, names, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(out.probes->layout.n, 2 * a.probes->layout.n);
    ck_assert_uint_eq(out.probes->memory.n_kernels, 2 * a.probes->memory.n_kernels);
    ck_assert_int_eq(out.probes->layout.n_match, 3);
    ck_assert_int_eq(out.probes->layout.items[0].frags[0].owner[1], a.probes->layout.items[0].frags[0].owner[1]);
    ck_assert_ptr_ne(out.probes->layout.items[0].frags[0].owner, a.probes->layout.items[0].frags[0].owner);
    mmp_run_clear(&out);
    mmp_run_clear(&a);
    mmp_run_clear(&b);
    mmp_run_clear(&all);
}
END_TEST

START_TEST(merge_cli_bad_inputs)
{
    mmp_run all;
    ck_assert_int_eq(mmp_report_sample(&all), MMP_STATUS_OK);
    save(&all, "ok.json");
    FILE *f = fopen(path_of("bad.json"), "w");
    fputs("{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"x\",\"verdict\":1}]}", f);
    fclose(f);
    char *a1[] = {"merge", path_of("ok.json"), path_of("bad.json"), "-o", path_of("out.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(5, a1), MMP_EXIT_USAGE);
    ck_assert(strstr(mmp_error_last(), "cases[0].verdict: expected a string"));
    ck_assert_int_eq(access(path_of("out.json"), F_OK), -1);      /* nothing written */
    char *a2[] = {"merge", path_of("ok.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(2, a2), MMP_EXIT_USAGE);      /* no -o */
    char *a3[] = {"merge", "-o", path_of("out.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(3, a3), MMP_EXIT_USAGE);      /* no inputs */
    char *a4[] = {"merge", path_of("ok.json"), "-o", "/nonexistent-dir/all.json", NULL};
    ck_assert_int_eq(mmp_cli_merge(4, a4), MMP_EXIT_ENVIRONMENT);
    /* the fuzzer's first finding: one document with a case ID twice, with different results */
    mmp_case_result dup = all.cases[4];
    dup.verdict = MMP_VERDICT_FAIL;
    ck_assert_int_eq(mmp_run_add(&all, &dup), MMP_STATUS_OK);
    save(&all, "dup.json");
    char *a5[] = {"merge", path_of("dup.json"), "-o", path_of("out.json"), NULL};
    ck_assert_int_eq(mmp_cli_merge(4, a5), MMP_EXIT_USAGE);
    ck_assert(strstr(mmp_error_last(), "with different results"));
    mmp_run_clear(&all);
}
END_TEST

static Suite *diff_merge_suite(void)
{
    Suite *s = suite_create("diff_merge");
    TCase *d = tcase_create("diff");
    tcase_add_checked_fixture(d, setup, teardown);
    tcase_set_timeout(d, 60);
    tcase_add_test(d, diff_identical_is_clean);
    tcase_add_test(d, diff_finds_regressions_and_fixes);
    tcase_add_test(d, diff_bad_inputs);
    tcase_add_test(d, diff_gates_missing_and_skipped);
    suite_add_tcase(s, d);
    TCase *m = tcase_create("merge");
    tcase_add_checked_fixture(m, setup, teardown);
    tcase_set_timeout(m, 60);
    tcase_add_test(m, merge_shards_back);
    tcase_add_test(m, merge_refuses_mismatches);
    tcase_add_test(m, merge_checks_shard_coverage);
    tcase_add_test(m, merge_cli_bad_inputs);
    suite_add_tcase(s, m);
    return s;
}

MMP_CHECK_MAIN(diff_merge_suite)
