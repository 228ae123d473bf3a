/* check_report.c — the run document: JSON round trip, the committed sample, malformed inputs
 * (every one a PARSE error with a line:column message, never a crash), renderers (JUnit
 * against the Jenkins junit-10.xsd with xmllint, HTML well-formed and carrying the planted
 * failure's heatmap pattern, Markdown, text), and the `report` subcommand's exit codes.
 * Regenerate tests/data/samples/planted-failure.json with MMP_REGEN_SAMPLES=1. */
#include <math.h>
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

#define SAMPLE MMP_SOURCE_DIR "/tests/data/samples/planted-failure.json"
#define JUNIT_XSD MMP_SOURCE_DIR "/reports/schema/junit-10.xsd"

static char *to_mem(const mmp_run *run, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(mmp_report_write_json_stream(f, run), MMP_STATUS_OK);
    fclose(f);
    return buf;
}

static char *render(const mmp_run *run, mmp_report_format fmt, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(mmp_report_render(f, run, fmt), MMP_STATUS_OK);
    fclose(f);
    return buf;
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

static char tmpdir[64];
static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mmp_check_report.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

START_TEST(sample_round_trip)
{
    mmp_run run, back;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    size_t n1, n2;
    char *w1 = to_mem(&run, &n1);
    mmp_run_init(&back);
    ck_assert_msg(mmp_report_read_json_text(&back, w1, n1, "mem") == MMP_STATUS_OK, "%s", mmp_error_last());
    char *w2 = to_mem(&back, &n2);
    ck_assert_uint_eq(n1, n2);
    ck_assert_msg(memcmp(w1, w2, n1) == 0, "write -> read -> write changed the document");
    ck_assert_uint_eq(back.n_cases, run.n_cases);
    ck_assert_mem_eq(&back.cases[3], &run.cases[3], sizeof run.cases[3]);
    ck_assert_ptr_nonnull(back.probes);
    ck_assert_uint_eq(back.probes->layout.n, run.probes->layout.n);
    ck_assert_uint_eq(back.probes->memory.n_kernels, run.probes->memory.n_kernels);
    /* the committed sample is this document, byte for byte (MMP_REGEN_SAMPLES=1 rewrites it) */
    if (getenv("MMP_REGEN_SAMPLES")) ck_assert_int_eq(mmp_report_write_json(SAMPLE, &run), MMP_STATUS_OK);
    char *committed;
    size_t len;
    ck_assert_msg(mmp_json_slurp(&committed, &len, SAMPLE) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(len == n1 && memcmp(committed, w1, len) == 0,
                  "tests/data/samples/planted-failure.json differs from mmp_report_sample(); regenerate with MMP_REGEN_SAMPLES=1");
    /* the file reads back too, through the path API */
    mmp_run fromfile;
    mmp_run_init(&fromfile);
    ck_assert_int_eq(mmp_report_read_json(&fromfile, SAMPLE), MMP_STATUS_OK);
    ck_assert_uint_eq(fromfile.n_cases, run.n_cases);
    mmp_run_clear(&fromfile);
    free(committed);
    free(w1);
    free(w2);
    mmp_run_clear(&run);
    mmp_run_clear(&back);
}
END_TEST

START_TEST(planted_pattern_in_sample)
{
    /* the planted bug: rows i%16==3 of every tile; the 128x128 case has 2x2 elements per cell */
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    const mmp_case_result *c = NULL;
    for (size_t i = 0; i < run.n_cases; i++)
        if (strstr(run.cases[i].id, "planted/bf16.bf16.f32/128x128x512")) c = &run.cases[i];
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->verdict, MMP_VERDICT_FAIL);
    ck_assert_int_eq(c->metrics.heat_rows, 64);
    for (int r = 0; r < 64; r++) {
        int bad_row = (2 * r) % 16 == 2;      /* cell row r covers rows 2r, 2r+1; 2r+1 == 3 mod 16 */
        for (int col = 0; col < 64; col++) {
            float v = c->metrics.heat[r * 64 + col];
            if (bad_row) ck_assert_msg(v > 1, "cell (%d,%d) should exceed the bound, has %g", r, col, v);
            else ck_assert_msg(v <= 1, "cell (%d,%d) should be within the bound, has %g", r, col, v);
        }
    }
    ck_assert_int_eq(c->metrics.first_bad_i, 3);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(nonfinite_and_extremes_round_trip)
{
    mmp_run run, back;
    mmp_run_init(&run);
    mmp_case_result r;
    mmp_case_result_init(&r);
    snprintf(r.id, sizeof r.id, "k/x \"quoted\" <tag> & \\ \t tab \xe2\x82\xac");
    r.verdict = MMP_VERDICT_FAIL;
    r.reasons = MMP_REASON_NAN_MISMATCH | MMP_REASON_INTERRUPTED;
    r.metrics.max_ratio_det = 1.0 / 0.0;
    r.metrics.max_ulp = -1.0 / 0.0;
    r.metrics.max_rel_err = 0.0 / 0.0;
    r.metrics.worst_got = 4.9406564584124654e-324;
    r.metrics.worst_want = 1.7976931348623157e308;
    r.metrics.norm_rel_err = 0.1;
    r.seed = UINT64_MAX;
    r.m = INT64_MIN;
    r.metrics.heat_rows = 1;
    r.metrics.heat_cols = 3;
    r.metrics.heat[0] = 1.0f / 3.0f;
    r.metrics.heat[1] = 1.0f / 0.0f;
    r.metrics.heat[2] = 1e-45f;
    mmp_run_init(&back);
    ck_assert_int_eq(mmp_run_add(&run, &r), MMP_STATUS_OK);
    size_t n1, n2;
    char *w1 = to_mem(&run, &n1);
    ck_assert_msg(mmp_report_read_json_text(&back, w1, n1, "mem") == MMP_STATUS_OK, "%s", mmp_error_last());
    char *w2 = to_mem(&back, &n2);
    ck_assert(n1 == n2 && memcmp(w1, w2, n1) == 0);
    const mmp_case_result *b = &back.cases[0];
    ck_assert_str_eq(b->id, r.id);
    ck_assert(b->metrics.max_ratio_det > 1e308 && b->metrics.max_ulp < -1e308 && b->metrics.max_rel_err != b->metrics.max_rel_err);
    ck_assert(b->metrics.worst_got == r.metrics.worst_got && b->metrics.worst_want == r.metrics.worst_want);
    ck_assert(b->metrics.heat[0] == r.metrics.heat[0] && b->metrics.heat[2] == r.metrics.heat[2]);
    ck_assert(b->seed == UINT64_MAX && b->m == INT64_MIN && b->reasons == r.reasons);
    free(w1); free(w2);
    mmp_run_clear(&run);
    mmp_run_clear(&back);
}
END_TEST

START_TEST(jsonl_lines)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/run.jsonl", tmpdir);
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    FILE *f = fopen(path, "w");
    for (size_t i = 0; i < 5; i++) ck_assert_int_eq(mmp_report_write_case_line(f, &run.cases[i]), MMP_STATUS_OK);
    fputs("{\"id\":\"cut", f);                  /* a line cut off by a crash */
    fclose(f);
    mmp_run back;
    mmp_run_init(&back);
    ck_assert_msg(mmp_run_read_jsonl(&back, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(back.n_cases, 5);
    for (size_t i = 0; i < 5; i++) ck_assert_mem_eq(&back.cases[i], &run.cases[i], sizeof run.cases[i]);
    mmp_run_clear(&back);
    /* a malformed line in the middle is an error naming the line */
    f = fopen(path, "w");
    mmp_report_write_case_line(f, &run.cases[0]);
    fputs("{\"id\":\"x\",\"verdict\":\"MAYBE\"}\n", f);
    mmp_report_write_case_line(f, &run.cases[1]);
    fclose(f);
    mmp_run_init(&back);
    ck_assert_int_eq(mmp_run_read_jsonl(&back, path), MMP_STATUS_PARSE);
    ck_assert_msg(strstr(mmp_error_last(), "line 2") && strstr(mmp_error_last(), "verdict"), "%s", mmp_error_last());
    mmp_run_clear(&back);
    mmp_run_clear(&run);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* Malformed documents: each must be a PARSE error whose message contains the fragment. */
static const struct bad_doc { const char *text; const char *msg; } bad_docs[] = {
    {"", "expected a value"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[", "expected a value"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\"}", "expected ',' or ']'"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"2.0\",\"env\":{},\"cases\":[]}", "schema version 2.0 is not supported"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"0.9\",\"env\":{},\"cases\":[]}", "schema version 0.9 is not supported"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":1.0,\"env\":{},\"cases\":[]}", "schema_version must be a string"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1\",\"env\":{},\"cases\":[]}", "schema_version must be"},
    {"{\"format\":\"other\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[]}", "not an mmaprobe run document"},
    {"[1,2,3]", "expected an object"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":{}}", "cases: expected an array"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"cases\":[]}", "missing member \"env\""},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{\"gpu\":7},\"cases\":[]}", "env.gpu: expected a string"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{\"cc_major\":1e3},\"cases\":[]}", "expected a 32-bit integer"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"m\":\"64\"}]}", "cases[0].m: expected a 64-bit integer"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"m\":99999999999999999999}]}", "expected a 64-bit integer"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"seed\":-1}]}", "unsigned 64-bit"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"MAYBE\"}]}", "expected PASS, FAIL, ERROR or SKIP"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"verdict\":\"PASS\"}]}", "missing member"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"FAIL\",\"reasons\":[\"gremlins\"]}]}", "unknown reason"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"metrics\":{\"hist\":[1,2]}}]}", "array of 16 counts"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"metrics\":{\"heatmap\":{\"rows\":65,\"cols\":1,\"cells\":[]}}}]}", "1..64"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"metrics\":{\"heatmap\":{\"rows\":2,\"cols\":2,\"cells\":[1,2,3]}}}]}", "rows*cols"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"metrics\":{\"max_ulp\":\"lots\"}}]}", "max_ulp: expected a number"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[{\"id\":\"a\",\"verdict\":\"PASS\",\"message\":\"a\\u0000b\"}]}", "\\u0000"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"env\":{},\"cases\":[],\"probes\":[1]}", "probes: expected an object"},
    {"{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.0\",\"complete\":1,\"env\":{},\"cases\":[]}", "expected a boolean"},
    {"{\"a\":1e999}", "out of the range of a double"},
    {"{\"a\":-1e400}", "out of the range of a double"},
    {"{\"a\":01}", "expected ',' or '}'"},
    {"{\"a\":-}", "expected a digit"},
    {"{\"a\":1.}", "expected a digit after '.'"},
    {"{\"a\":1e}", "expected a digit in exponent"},
    {"{\"a\":NaN}", "expected a value"},
    {"{\"a\":tru}", "invalid literal"},
    {"{\"a\":\"\xff\"}", "invalid UTF-8"},
    {"{\"a\":\"\xc0\xaf\"}", "invalid UTF-8"},
    {"{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8"},
    {"{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8"},
    {"{\"a\":\"\\ud800\"}", "high surrogate"},
    {"{\"a\":\"\\udc00\"}", "lone low surrogate"},
    {"{\"a\":\"\\x41\"}", "invalid escape"},
    {"{\"a\":\"\\u12g4\"}", "four hex digits"},
    {"{\"a\":\"line\nbreak\"}", "control character"},
    {"{\"a\":\"open", "unterminated string"},
    {"{\"a\":1,}", "expected a string key"},
    {"[1,2,]", "expected a value"},
    {"{\"a\":1,\"a\":2}", "duplicate key"},
    {"{\"a\":1} x", "trailing characters"},
    {"\xef\xbb\xbf{}", "byte-order mark"},
    {"// comment\n{}", "expected a value"},
    {"{'a':1}", "expected a string key"},
};

START_TEST(malformed_is_parse_error)
{
    const struct bad_doc *d = &bad_docs[_i];
    mmp_run run;
    mmp_run_init(&run);
    mmp_error_clear();
    mmp_status st = mmp_report_read_json_text(&run, d->text, strlen(d->text), "bad.json");
    ck_assert_msg(st == MMP_STATUS_PARSE, "case %d: status %s for %s", _i, mmp_status_name(st), d->text);
    ck_assert_int_eq(mmp_status_exit_code(st), MMP_EXIT_USAGE);
    const char *msg = mmp_error_last();
    ck_assert_msg(strstr(msg, d->msg) && strncmp(msg, "bad.json", 8) == 0 && !strchr(msg, '\n'),
                  "case %d: message \"%s\" lacks \"%s\"", _i, msg, d->msg);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(deep_nesting_and_positions)
{
    /* 100 000 nested arrays: rejected at depth 64, no stack overflow */
    size_t n = 100000;
    char *deep = malloc(n + 1);
    memset(deep, '[', n);
    deep[n] = '\0';
    mmp_json *v = NULL;
    ck_assert_int_eq(mmp_json_parse(&v, deep, n, "deep.json"), MMP_STATUS_PARSE);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(mmp_error_last(), "deep.json:1:65: nesting deeper than 64"), "%s", mmp_error_last());
    free(deep);
    /* 64 levels are fine */
    char ok[200] = "";
    for (int i = 0; i < 64; i++) strcat(ok, "[");
    for (int i = 0; i < 64; i++) strcat(ok, "]");
    ck_assert_int_eq(mmp_json_parse(&v, ok, strlen(ok), "ok"), MMP_STATUS_OK);
    mmp_json_free(v);
    /* line and column (columns count characters) */
    const char *t = "{\n  \"a\": [1,\n   2 3]\n}";
    ck_assert_int_eq(mmp_json_parse(&v, t, strlen(t), "pos.json"), MMP_STATUS_PARSE);
    ck_assert_msg(strstr(mmp_error_last(), "pos.json:3:6:"), "%s", mmp_error_last());
    const char *u = "[\"\xc3\xa9\xc3\xa9\", x]";
    ck_assert_int_eq(mmp_json_parse(&v, u, strlen(u), "u.json"), MMP_STATUS_PARSE);
    ck_assert_msg(strstr(mmp_error_last(), "u.json:1:8:"), "%s", mmp_error_last());
}
END_TEST

START_TEST(parser_decodes)
{
    const char *t = "{\"s\":\"\\u00e9\\ud83d\\ude00\\n\\/\\\"\",\"n\":[-0,1.5e-3,123456789012345678],\"e\":{},\"b\":[true,false,null]}";
    mmp_json *v;
    ck_assert_int_eq(mmp_json_parse(&v, t, strlen(t), "t"), MMP_STATUS_OK);
    const mmp_json *s = mmp_json_get(v, "s");
    ck_assert_str_eq(s->str, "\xc3\xa9\xf0\x9f\x98\x80\n/\"");
    const mmp_json *n = mmp_json_get(v, "n");
    double d;
    int64_t i;
    ck_assert_int_eq(mmp_json_double(&d, n->items[1]), 0);
    ck_assert(d == 1.5e-3);
    ck_assert_int_eq(mmp_json_int64(&i, n->items[2]), 0);
    ck_assert(i == 123456789012345678LL);
    ck_assert_int_eq(mmp_json_int64(&i, n->items[1]), -1);   /* not an integer */
    ck_assert_int_eq(mmp_json_get(v, "b")->items[2]->type, MMP_JSON_NULL);
    ck_assert_int_eq(mmp_json_get(v, "e")->n, 0);
    mmp_json_free(v);
    /* unknown members are ignored (a newer minor version may add some); a newer minor's reason too */
    const char *doc = "{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.7\",\"future\":[1],\"env\":{\"new\":1},"
                      "\"cases\":[{\"id\":\"a\",\"verdict\":\"FAIL\",\"reasons\":[\"guard\",\"from-the-future\"],\"x\":{}}]}";
    mmp_run run;
    mmp_run_init(&run);
    ck_assert_msg(mmp_report_read_json_text(&run, doc, strlen(doc), "future") == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(run.cases[0].reasons, MMP_REASON_GUARD);
    ck_assert_int_eq(run.schema_minor, 7);
    mmp_run_clear(&run);
}
END_TEST

static int have_xmllint(void) { return system("xmllint --version >/dev/null 2>&1") == 0; }

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

START_TEST(junit_validates)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    size_t len;
    char *x = render(&run, MMP_REPORT_JUNIT, &len);
    int64_t counts[MMP_VERDICT_COUNT_];
    mmp_report_counts(&run, counts);
    /* structural: one testcase per case, one element per FAIL/ERROR/SKIP, message escaped */
    ck_assert_uint_eq(count(x, "<testcase "), run.n_cases);
    ck_assert_uint_eq(count(x, "<failure "), (size_t)counts[MMP_VERDICT_FAIL]);
    ck_assert_uint_eq(count(x, "<error "), (size_t)counts[MMP_VERDICT_ERROR]);
    ck_assert_uint_eq(count(x, "<skipped "), (size_t)counts[MMP_VERDICT_SKIP]);
    ck_assert(!strstr(x, "<wgmma") && strstr(x, "&lt;wgmma_m64n128k16_v2&gt;") && strstr(x, "&quot;an illegal"));
    ck_assert(strstr(x, "classname=\"mma_sync_m16n8k16_v3_planted\" name=\"mma_sync_m16n8k16_v3_planted/bf16.bf16.f32/64x64x64/uniform/s42\""));
    if (!have_xmllint()) {
        printf("xmllint not found: JUnit checked structurally only\n");
    } else {
        make_tmpdir();
        char path[128], cmd[512];
        snprintf(path, sizeof path, "%s/junit.xml", tmpdir);
        write_file(path, x, len);
        snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s'", JUNIT_XSD, path);
        ck_assert_msg(system(cmd) == 0, "JUnit output does not validate against junit-10.xsd: %s", cmd);
        /* and a hostile case ID / message still validates */
        mmp_case_result *c = &run.cases[0];
        snprintf(c->id, sizeof c->id, "k]]></x>&\"'<!--\x01\xff");
        snprintf(c->kernel, sizeof c->kernel, "<k>&");
        c->verdict = MMP_VERDICT_FAIL;
        snprintf(c->message, sizeof c->message, "bad\x02 ]]> & <b>");
        free(x);
        x = render(&run, MMP_REPORT_JUNIT, &len);
        write_file(path, x, len);
        ck_assert_msg(system(cmd) == 0, "JUnit output with hostile strings does not validate");
        unlink(path);
        rmdir(tmpdir);
    }
    free(x);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(html_well_formed_with_heatmap)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    size_t len;
    char *h = render(&run, MMP_REPORT_HTML, &len);
    ck_assert(strstr(h, "<!DOCTYPE html>") && strstr(h, "</html>"));
    ck_assert(!strstr(h, "<script") && !strstr(h, "http://") == 0);   /* only SVG namespaces, no fetches */
    ck_assert_uint_eq(count(h, "http://") , count(h, "xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert(strstr(h, "aria-label=\"error heatmap\""));
    ck_assert(strstr(h, "mma_sync_m16n8k16_v3_planted/bf16.bf16.f32/128x128x512/uniform/s7"));
    ck_assert(!strstr(h, "<wgmma") && strstr(h, "&lt;wgmma_m64n128k16_v2&gt;"));
    ck_assert(strstr(h, "rows &#8801; 3 (mod 16), every column"));     /* the planted pattern, named */
    ck_assert(strstr(h, "Fragment layouts") && strstr(h, "bank maps") && strstr(h, "Error vs K"));
    /* the heatmap's over-bound colour (#a50026 end of the orange-red ramp) appears in stripes */
    ck_assert(count(h, "fill=\"#a") > 64);
    if (have_xmllint()) {
        make_tmpdir();
        char path[128], cmd[300];
        snprintf(path, sizeof path, "%s/r.html", tmpdir);
        write_file(path, h, len);
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);  /* the HTML is also well-formed XML */
        ck_assert_msg(system(cmd) == 0, "HTML is not well-formed");
        unlink(path);
        rmdir(tmpdir);
    }
    free(h);
    /* a malformed probe member is a parse error naming its path */
    static const char bad[] = "{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.2\",\"env\":{},\"cases\":[],"
                              "\"probes\":{\"arith\":{\"x\":1}}}";
    mmp_run b2;
    mmp_run_init(&b2);
    ck_assert_int_eq(mmp_report_read_json_text(&b2, bad, strlen(bad), "bad"), MMP_STATUS_PARSE);
    ck_assert_msg(strstr(mmp_error_last(), "probes.arith"), "%s", mmp_error_last());
    mmp_run_clear(&b2);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(md_and_text)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    snprintf(run.cases[13].id, sizeof run.cases[13].id, "pipe|in`id");
    size_t len;
    char *m = render(&run, MMP_REPORT_MD, &len);
    ck_assert(strstr(m, "### `bf16.bf16.f32`") && strstr(m, "| `mma_sync_m16n8k16_v3_planted` | ❌ FAIL | 5 | 0 | 5 |"));
    ck_assert(strstr(m, "`pipe\\|in'id`") && strstr(m, "bound-exceeded"));
    ck_assert(strstr(m, "&lt;wgmma\\_m64n128k16\\_v2&gt;"));
    free(m);
    char *t = render(&run, MMP_REPORT_TEXT, &len);
    ck_assert(strstr(t, "# gpu: NVIDIA H200") && strstr(t, "Failures:") && strstr(t, "12 PASS, 5 FAIL, 1 ERROR, 1 SKIP"));
    free(t);
    mmp_run_clear(&run);
}
END_TEST

/* A typed probe document: one analysed and one skipped instruction, one capture with a
 * difference, one measured kernel. */
static void probe_doc(mmp_run *run)
{
    mmp_run_init(run);
    snprintf(run->kind, sizeof run->kind, "probe");
    run->probes = malloc(sizeof *run->probes);
    ck_assert_ptr_nonnull(run->probes);
    mmp_probe_results *p = run->probes;
    mmp_probe_results_init(p);
    p->arith.present = p->layout.present = p->memory.present = 1;
    mmp_arith_result a;
    memset(&a, 0, sizeof a);
    snprintf(a.instruction, sizeof a.instruction, "mma.f16.f32");
    a.rep.native = 1;
    mmp_model_params_init(&a.rep.fitted);
    a.rep.fitted.in_format = MMP_FORMAT_FP16;
    a.rep.fitted.out_format = MMP_FORMAT_FP32;
    snprintf(a.rep.sass, sizeof a.rep.sass, "HMMA.16816.F32");
    a.rep.fitted.block_size = 16;
    a.rep.fitted.extra_align_bits = 2;
    a.rep.fitted.align_floor = -133;
    a.rep.fitted.out_round = MMP_ROUND_TOWARD_ZERO;
    a.rep.fitted.in_subnormals = a.rep.fitted.out_subnormals = 1;
    a.rep.nf = 1;
    snprintf(a.rep.f[0].name, sizeof a.rep.f[0].name, "block_size");
    snprintf(a.rep.f[0].value, sizeof a.rep.f[0].value, "16");
    a.rep.f[0].ok = 1;
    a.rep.n_total = 1000;
    a.rep.total_mismatches = 7;
    ck_assert_int_eq(mmp_arith_results_add(&p->arith, &a), MMP_STATUS_OK);
    memset(&a, 0, sizeof a);
    snprintf(a.instruction, sizeof a.instruction, "wgmma.e4m3.f32");
    a.state = MMP_PROBE_STATE_SKIPPED;
    snprintf(a.reason, sizeof a.reason, "unsupported: needs sm_90a");
    ck_assert_int_eq(mmp_arith_results_add(&p->arith, &a), MMP_STATUS_OK);
    mmp_layout_result c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "mma.m16n8k16.f32.f16");
    snprintf(c.kind, sizeof c.kind, "mma");
    c.consistent = c.documented = 1;
    c.differences = 2;
    c.n_frags = 1;
    snprintf(c.frags[0].frag.name, sizeof c.frags[0].frag.name, "A");
    c.frags[0].frag.rows = 2;
    c.frags[0].frag.cols = 3;
    c.frags[0].frag.elems_per_reg = 2;
    c.frags[0].rep.differences = 2;
    c.frags[0].rep.differing_lanes[0] = (1u << 3) | (1u << 7);
    c.frags[0].owner = malloc(6 * sizeof(int32_t));
    c.frags[0].reg = malloc(6 * sizeof(int32_t));
    for (int k = 0; k < 6; k++) { c.frags[0].owner[k] = k; c.frags[0].reg[k] = k / 2; }
    ck_assert_int_eq(mmp_layout_results_add(&p->layout, &c), MMP_STATUS_OK);
    p->layout.n_differ = 1;
    mmp_memory_kernel_result k;
    memset(&k, 0, sizeof k);
    snprintf(k.analysis.kernel, sizeof k.analysis.kernel, "bf16_mma_padded");
    k.analysis.smem_wavefronts = 640;
    k.analysis.smem_ideal = 512;
    k.analysis.worst_ways = 2;
    k.analysis.bank_words[5] = 9;
    k.measured = 1;
    snprintf(k.method, sizeof k.method, "ncu");
    k.smem_ld_wavefronts = 641.5;
    k.smem_st_wavefronts = 0;
    k.gmem_sectors = NAN;
    k.agree = 1;
    k.gmem_agree = -1;
    ck_assert_int_eq(mmp_memory_results_add_kernel(&p->memory, &k), MMP_STATUS_OK);
    snprintf(p->memory.method, sizeof p->memory.method, "ncu");
}

START_TEST(probe_results_round_trip)
{
    mmp_run run, back;
    probe_doc(&run);
    size_t n1, n2;
    char *w1 = to_mem(&run, &n1);
    mmp_run_init(&back);
    ck_assert_msg(mmp_report_read_json_text(&back, w1, n1, "mem") == MMP_STATUS_OK, "%s", mmp_error_last());
    char *w2 = to_mem(&back, &n2);
    ck_assert_uint_eq(n1, n2);
    ck_assert_msg(memcmp(w1, w2, n1) == 0, "write -> read -> write changed the probe results");
    const mmp_probe_results *p = back.probes;
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->arith.n, 2);
    ck_assert_int_eq(p->arith.items[0].state, MMP_PROBE_STATE_ANALYSED);
    ck_assert_int_eq(p->arith.items[0].rep.fitted.block_size, 16);
    ck_assert_int_eq(p->arith.items[0].rep.fitted.align_floor, -133);
    ck_assert_uint_eq(p->arith.items[0].rep.total_mismatches, 7);
    ck_assert_str_eq(p->arith.items[0].rep.f[0].value, "16");
    ck_assert_int_eq(p->arith.items[1].state, MMP_PROBE_STATE_SKIPPED);
    ck_assert_uint_eq(p->layout.n, 1);
    ck_assert_int_eq(p->layout.items[0].frags[0].owner[5], 5);
    ck_assert_int_eq(p->layout.items[0].frags[0].reg[5], 2);
    ck_assert_uint_eq(p->layout.items[0].frags[0].rep.differing_lanes[0], (1u << 3) | (1u << 7));
    ck_assert_int_eq(p->memory.kernels[0].agree, 1);
    ck_assert_int_eq(p->memory.kernels[0].gmem_agree, -1);
    ck_assert(isnan(p->memory.kernels[0].gmem_sectors));
    ck_assert(p->memory.kernels[0].smem_ld_wavefronts == 641.5);
    ck_assert_int_eq(p->memory.present, 1);
    free(w1); free(w2);
    mmp_run_clear(&back);
    /* a minor-1 arith entry: "captured": false and its reason, no "state" */
    static const char v1[] = "{\"format\":\"mmaprobe-run\",\"schema_version\":\"1.1\",\"env\":{},\"cases\":[],"
                             "\"probes\":{\"arith\":[{\"instruction\":\"a\",\"captured\":false,\"reason\":\"failed: x\"},"
                             "{\"instruction\":\"b\",\"captured\":false,\"reason\":\"unsupported: y\"}],\"layout\":null}}";
    mmp_run_init(&back);
    ck_assert_msg(mmp_report_read_json_text(&back, v1, strlen(v1), "v1") == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(back.probes->arith.items[0].state, MMP_PROBE_STATE_FAILED);
    ck_assert_int_eq(back.probes->arith.items[1].state, MMP_PROBE_STATE_SKIPPED);
    ck_assert_int_eq(back.probes->layout.present, 0);
    mmp_run_clear(&back);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(probe_tables_in_text_and_md)
{
    mmp_run run;
    probe_doc(&run);
    for (int f = 0; f < 2; f++) {
        size_t len;
        char *t = render(&run, f ? MMP_REPORT_MD : MMP_REPORT_TEXT, &len);
        ck_assert_msg(strstr(t, "mma.f16.f32") && strstr(t, "HMMA.16816.F32") && strstr(t, "7/1000"), "%s", t);
        ck_assert_msg(strstr(t, "wgmma.e4m3.f32") && strstr(t, "skipped"), "%s", t);
        ck_assert_msg(strstr(t, "differs-from-ptx-isa") && strstr(t, "A: 3, 7"), "%s", t);
        ck_assert_msg(strstr(t, "padded") && strstr(t, "641.5"), "%s", t);
        ck_assert_msg(!strstr(t, "PRECISION") && !strstr(t, "0 cases"), "a probe document rendered as a validate table: %s", t);
        if (f) ck_assert_msg(strstr(t, "| mma.f16.f32 |"), "%s", t);
        free(t);
    }
    mmp_run_clear(&run);
}
END_TEST

/* HTML too: a probe document is its probe sections, never an empty validate summary */
START_TEST(probe_document_in_html)
{
    mmp_run run;
    probe_doc(&run);
    size_t len;
    char *t = render(&run, MMP_REPORT_HTML, &len);
    ck_assert_msg(strstr(t, "probe results") && strstr(t, "mma.f16.f32"), "%s", t);
    ck_assert_msg(!strstr(t, "Summary per precision") && !strstr(t, "0 cases") && !strstr(t, "Error vs K") &&
                  !strstr(t, "all cases passed"), "a probe document rendered as a validate run in HTML");
    free(t);
    mmp_run_clear(&run);
}
END_TEST

START_TEST(format_names)
{
    mmp_report_format f = MMP_REPORT_TEXT;
    ck_assert_int_eq(mmp_report_format_from_name(&f, "markdown"), MMP_STATUS_OK);
    ck_assert_int_eq(f, MMP_REPORT_MD);
    ck_assert_int_eq(mmp_report_format_from_name(&f, "pdf"), MMP_STATUS_INVALID);
    ck_assert_int_eq(mmp_report_format_from_name(&f, NULL), MMP_STATUS_INVALID);
}
END_TEST

START_TEST(cli_report_exit_codes)
{
    make_tmpdir();
    char bad[128], good[128], out[128];
    snprintf(bad, sizeof bad, "%s/bad.json", tmpdir);
    snprintf(good, sizeof good, "%s/good.json", tmpdir);
    snprintf(out, sizeof out, "%s/out.xml", tmpdir);
    const char *v9 = "{\"format\":\"mmaprobe-run\",\"schema_version\":\"9.0\",\"env\":{},\"cases\":[]}";
    write_file(bad, v9, strlen(v9));
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    ck_assert_int_eq(mmp_report_write_json(good, &run), MMP_STATUS_OK);
    char *a1[] = {"report", bad, "--format", "md", NULL};
    ck_assert_int_eq(mmp_cli_report(4, a1), MMP_EXIT_USAGE);
    char *a2[] = {"report", good, "--format", "junit", "-o", out, NULL};
    ck_assert_int_eq(mmp_cli_report(6, a2), MMP_EXIT_PASS);
    ck_assert_int_eq(access(out, R_OK), 0);
    char *a3[] = {"report", good, "--format", "pdf", NULL};
    ck_assert_int_eq(mmp_cli_report(4, a3), MMP_EXIT_USAGE);
    char *a4[] = {"report", NULL};
    ck_assert_int_eq(mmp_cli_report(1, a4), MMP_EXIT_USAGE);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.json", tmpdir);
    char *a5[] = {"report", missing, NULL};
    ck_assert_int_eq(mmp_cli_report(2, a5), MMP_EXIT_USAGE);   /* a missing input is bad input */
    char *a6[] = {"report", good, "-o", "/nonexistent-dir/x.html", NULL};
    ck_assert_int_eq(mmp_cli_report(4, a6), MMP_EXIT_ENVIRONMENT);
    char *a7[] = {"report", good, "--bogus", NULL};
    ck_assert_int_eq(mmp_cli_report(3, a7), MMP_EXIT_USAGE);
    unlink(bad); unlink(good); unlink(out);
    rmdir(tmpdir);
    mmp_run_clear(&run);
}
END_TEST

/* Inputs the fuzzer found (tests/fuzz/regress/): each still reads or fails cleanly; what
 * reads round-trips, renders in every format, and merges as documented. */
START_TEST(fuzz_regressions)
{
    static const char *const files[] = {"merge-duplicate-id-different-results.json",
                                        "merge-newer-minor-with-rewrite.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fuzz/regress/%s", MMP_SOURCE_DIR, files[i]);
        char *text;
        size_t len;
        ck_assert_int_eq(mmp_json_slurp(&text, &len, path), MMP_STATUS_OK);
        mmp_run run, again;
        mmp_run_init(&run);
        mmp_run_init(&again);
        ck_assert_msg(mmp_report_read_json_text(&run, text, len, files[i]) == MMP_STATUS_OK, "%s", mmp_error_last());
        size_t n1, n2, rl;
        char *w1 = to_mem(&run, &n1);
        ck_assert_int_eq(mmp_report_read_json_text(&again, w1, n1, "again"), MMP_STATUS_OK);
        char *w2 = to_mem(&again, &n2);
        ck_assert(n1 == n2 && memcmp(w1, w2, n1) == 0);
        for (int f = 0; f < MMP_REPORT_FORMAT_COUNT_; f++) free(render(&run, (mmp_report_format)f, &rl));
        const mmp_run *two[2] = {&run, &again};
        const char *names[2] = {"orig", "rewritten"};
        mmp_run merged;
        mmp_run_init(&merged);
        mmp_status st = mmp_report_merge(&merged, two, names, 2);
        ck_assert_int_eq(st, MMP_STATUS_INVALID);
        if (i == 0) ck_assert_msg(strstr(mmp_error_last(), "with different results"), "%s", mmp_error_last());
        else ck_assert(strstr(mmp_error_last(), "(schema 1.3) with rewritten (schema 1.2)"));
        mmp_run_clear(&merged);
        free(w1); free(w2); free(text);
        mmp_run_clear(&run);
        mmp_run_clear(&again);
    }
}
END_TEST

/* CSV: a header and one row per case; commas, quotes and line breaks quoted (RFC 4180), a
 * field a spreadsheet would run as a formula defused, a SKIP's figures empty. */
START_TEST(csv_rows)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    mmp_case_result *c = &run.cases[0];
    snprintf(c->message, sizeof c->message, "say \"hi\", twice\nthen stop");
    snprintf(c->kernel, sizeof c->kernel, "=HYPERLINK(1)");
    size_t skip = run.n_cases;
    for (size_t i = 0; i < run.n_cases; i++)
        if (run.cases[i].verdict == MMP_VERDICT_SKIP) skip = i;
    ck_assert_uint_lt(skip, run.n_cases);
    size_t len;
    char *s = render(&run, MMP_REPORT_CSV, &len);
    ck_assert_msg(!strncmp(s, "id,kernel,family,precision,m,n,k,lda,ldb,ldd,dist,seed,suite,verdict,reasons,"
                              "err_over_bound,max_ulp,", 90), "%.200s", s);
    size_t rows = 0;
    for (const char *p = s; (p = strstr(p, "\r\n")); p += 2) rows++;
    ck_assert_uint_eq(rows, run.n_cases + 1);
    ck_assert_ptr_nonnull(strstr(s, ",\"say \"\"hi\"\", twice then stop\"\r\n"));
    ck_assert_ptr_nonnull(strstr(s, ",\"'=HYPERLINK(1)\","));
    /* the SKIP row: after its verdict and reasons, the four figures are empty */
    const char *row = strstr(s, run.cases[skip].id);
    ck_assert_ptr_nonnull(row);
    ck_assert_msg(strstr(row, ",SKIP,") && strstr(row, ",SKIP,") < strstr(row, "\r\n"), "%.300s", row);
    const char *after = strstr(row, ",SKIP,") + 6;
    const char *figs = strchr(after, ',');   /* past the reasons */
    ck_assert_msg(figs && !strncmp(figs, ",,,,,", 5), "%.200s", row);
    free(s);
    mmp_report_format f;
    ck_assert_int_eq(mmp_report_format_from_name(&f, "csv"), MMP_STATUS_OK);
    ck_assert_int_eq(f, MMP_REPORT_CSV);
    mmp_run_clear(&run);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("json");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, sample_round_trip);
    tcase_add_test(t, planted_pattern_in_sample);
    tcase_add_test(t, nonfinite_and_extremes_round_trip);
    tcase_add_test(t, jsonl_lines);
    tcase_add_test(t, csv_rows);
    tcase_add_loop_test(t, malformed_is_parse_error, 0, (int)(sizeof bad_docs / sizeof bad_docs[0]));
    tcase_add_test(t, deep_nesting_and_positions);
    tcase_add_test(t, parser_decodes);
    tcase_add_test(t, fuzz_regressions);
    suite_add_tcase(s, t);
    TCase *r = tcase_create("render");
    tcase_set_timeout(r, 60);
    tcase_add_test(r, junit_validates);
    tcase_add_test(r, html_well_formed_with_heatmap);
    tcase_add_test(r, md_and_text);
    tcase_add_test(r, probe_results_round_trip);
    tcase_add_test(r, probe_tables_in_text_and_md);
    tcase_add_test(r, probe_document_in_html);
    tcase_add_test(r, format_names);
    tcase_add_test(r, cli_report_exit_codes);
    suite_add_tcase(s, r);
    return s;
}

MMP_CHECK_MAIN(report_suite)
