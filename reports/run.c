/* run.c — the run document: lifecycle, writing (JSON lines and the atomic final file),
 * reading (version check, then records), the summary per precision x kernel.
 *
 * Document layout (reports/README.md has every field):
 *   {"format":"mmaprobe-run","schema_version":"1.0","kind":..,"suite":..,"complete":..,
 *    "interrupted_by":..,"env":{..},"shards":[{env}..],"summary":[..],"cases":[..],"probes":{..}|null}
 * "summary" is derived from "cases" and ignored when read (recomputed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/report.h"
#include "json_run.h"

void mmp_run_init(mmp_run *run)
{
    memset(run, 0, sizeof *run);
    mmp_env_init(&run->env);
    snprintf(run->kind, sizeof run->kind, "validate");
    run->complete = 1;
    run->schema_major = MMP_REPORT_SCHEMA_MAJOR;
    run->schema_minor = MMP_REPORT_SCHEMA_MINOR;
}

void mmp_run_clear(mmp_run *run)
{
    free(run->cases);
    if (run->probes) mmp_probe_results_clear(run->probes);
    free(run->probes);
    free(run->shards);
    mmp_run_init(run);
}

mmp_status mmp_run_add(mmp_run *run, const mmp_case_result *r)
{
    if (run->n_cases == run->cap_cases) {
        size_t cap = run->cap_cases ? run->cap_cases * 2 : 16;
        mmp_case_result *c = realloc(run->cases, cap * sizeof *c);
        if (!c) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory adding case %zu to the run", run->n_cases);
        run->cases = c;
        run->cap_cases = cap;
    }
    run->cases[run->n_cases++] = *r;
    return MMP_STATUS_OK;
}

mmp_status mmp_report_write_case_line(FILE *out, const mmp_case_result *r)
{
    mmp_jw w;
    mmp_jw_init(&w, out, 0);
    mmp_json_write_case(&w, r);
    if (fflush(out) != 0 || ferror(out))
        return MMP_ERR(MMP_STATUS_IO, "cannot write the result line of %s: %s", r->id, strerror(errno));
    return MMP_STATUS_OK;
}

mmp_status mmp_report_write_json_stream(FILE *out, const mmp_run *run)
{
    mmp_jw w;
    mmp_jw_init(&w, out, 2);
    mmp_jw_begin_object(&w);
    mmp_jw_key(&w, "format");
    mmp_jw_string(&w, "mmaprobe-run");
    mmp_jw_key(&w, "schema_version");
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", MMP_REPORT_SCHEMA_MAJOR, MMP_REPORT_SCHEMA_MINOR);
    mmp_jw_string(&w, ver);
    mmp_jw_key(&w, "kind");
    mmp_jw_string(&w, run->kind);
    mmp_jw_key(&w, "suite");
    mmp_jw_string(&w, run->suite);
    mmp_jw_key(&w, "complete");
    mmp_jw_bool(&w, run->complete);
    mmp_jw_key(&w, "interrupted_by");
    mmp_jw_string(&w, run->interrupted_by);
    mmp_jw_key(&w, "env");
    mmp_json_write_env(&w, &run->env);
    mmp_jw_key(&w, "shards");
    mmp_jw_begin_array(&w);
    for (size_t i = 0; i < run->n_shards; i++) {
        w.pretty_depth = 1;                     /* one shard environment per line */
        mmp_json_write_env(&w, &run->shards[i]);
        w.pretty_depth = 2;
    }
    mmp_jw_end_array(&w);
    mmp_summary_row *rows = NULL;
    size_t n_rows = 0;
    MMP_TRY(mmp_report_summarise(&rows, &n_rows, run));
    mmp_jw_key(&w, "summary");
    mmp_jw_begin_array(&w);
    for (size_t i = 0; i < n_rows; i++) {
        const mmp_summary_row *s = &rows[i];
        mmp_jw_begin_object(&w);
        mmp_jw_key(&w, "precision"); mmp_jw_string(&w, s->precision);
        mmp_jw_key(&w, "kernel"); mmp_jw_string(&w, s->kernel);
        mmp_jw_key(&w, "verdict"); mmp_jw_string(&w, mmp_verdict_name(s->verdict));
        mmp_jw_key(&w, "cases"); mmp_jw_int64(&w, s->cases);
        mmp_jw_key(&w, "pass"); mmp_jw_int64(&w, s->pass);
        mmp_jw_key(&w, "fail"); mmp_jw_int64(&w, s->fail);
        mmp_jw_key(&w, "error"); mmp_jw_int64(&w, s->error);
        mmp_jw_key(&w, "skip"); mmp_jw_int64(&w, s->skip);
        mmp_jw_key(&w, "worst_ratio_det"); mmp_jw_double(&w, s->worst_ratio_det);
        mmp_jw_key(&w, "worst_ratio_prob"); mmp_jw_double(&w, s->worst_ratio_prob);
        mmp_jw_key(&w, "max_ulp"); mmp_jw_double(&w, s->max_ulp);
        mmp_jw_key(&w, "time_kernel_ms"); mmp_jw_double(&w, s->time_kernel_ms);
        mmp_jw_end_object(&w);
    }
    free(rows);
    mmp_jw_end_array(&w);
    mmp_jw_key(&w, "cases");
    mmp_jw_begin_array(&w);
    for (size_t i = 0; i < run->n_cases; i++) mmp_json_write_case(&w, &run->cases[i]);
    mmp_jw_end_array(&w);
    mmp_jw_key(&w, "probes");
    mmp_json_write_probes(&w, run->probes);
    mmp_jw_end_object(&w);
    if (w.error) return MMP_ERR(MMP_STATUS_INTERNAL, "JSON writer misuse (unbalanced containers)");
    if (fflush(out) != 0 || ferror(out))
        return MMP_ERR(MMP_STATUS_IO, "cannot write the run document: %s", strerror(errno));
    return MMP_STATUS_OK;
}

static mmp_status write_run(FILE *out, void *run) { return mmp_report_write_json_stream(out, run); }

mmp_status mmp_report_write_json(const char *path, const mmp_run *run)
{
    return mmp_file_write_atomic(path, write_run, (void *)run);
}

/* "MAJOR.MINOR" with small non-negative integers. */
static int parse_version(int *major, int *minor, const char *s)
{
    char *e;
    long a = strtol(s, &e, 10);
    if (e == s || *e != '.' || a < 0 || a > 9999 || s[0] == '-' || s[0] == '+' || s[0] == ' ') return -1;
    const char *t = e + 1;
    long b = strtol(t, &e, 10);
    if (e == t || *e || b < 0 || b > 9999 || t[0] == '-' || t[0] == '+' || t[0] == ' ') return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

static mmp_status read_doc(mmp_run *run, const mmp_json *doc, mmp_json_ctx *cx)
{
    MMP_TRY(mmp_json_expect(cx, doc, MMP_JSON_OBJECT, "document"));
    const mmp_json *fmt = mmp_json_get(doc, "format"), *ver = mmp_json_get(doc, "schema_version");
    if (!fmt || fmt->type != MMP_JSON_STRING || strcmp(fmt->str, "mmaprobe-run") != 0)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: not an mmaprobe run document (no \"format\": \"mmaprobe-run\")",
                       cx->name);
    if (!ver || ver->type != MMP_JSON_STRING || parse_version(&cx->major, &cx->minor, ver->str))
        return MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: schema_version must be a string \"MAJOR.MINOR\"", cx->name,
                       ver ? ver->line : doc->line, ver ? ver->col : doc->col);
    if (cx->major != MMP_REPORT_SCHEMA_MAJOR)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: schema version %d.%d is not supported (this mmaprobe reads %d.x)",
                       cx->name, cx->major, cx->minor, MMP_REPORT_SCHEMA_MAJOR);
    run->schema_major = cx->major;
    run->schema_minor = cx->minor;
    const mmp_json *v;
    if ((v = mmp_json_get(doc, "kind"))) MMP_TRY(mmp_json_read_string(cx, run->kind, sizeof run->kind, v, "", "kind"));
    if ((v = mmp_json_get(doc, "suite"))) MMP_TRY(mmp_json_read_string(cx, run->suite, sizeof run->suite, v, "", "suite"));
    if ((v = mmp_json_get(doc, "interrupted_by")))
        MMP_TRY(mmp_json_read_string(cx, run->interrupted_by, sizeof run->interrupted_by, v, "", "interrupted_by"));
    if ((v = mmp_json_get(doc, "complete"))) {
        MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_TRUE, "complete"));
        run->complete = v->type == MMP_JSON_TRUE;
    }
    if (!(v = mmp_json_get(doc, "env")))
        return MMP_ERR(MMP_STATUS_PARSE, "%s: missing member \"env\"", cx->name);
    MMP_TRY(mmp_json_read_env(cx, &run->env, v, "env"));
    if ((v = mmp_json_get(doc, "shards"))) {
        MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_ARRAY, "shards"));
        if (v->n) {
            run->shards = calloc(v->n, sizeof *run->shards);
            if (!run->shards) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
            for (size_t i = 0; i < v->n; i++) {
                MMP_TRY(mmp_json_read_env(cx, &run->shards[i], v->items[i], "shards[]"));
                run->n_shards = i + 1;
            }
        }
    }
    const mmp_json *cases = mmp_json_get(doc, "cases");
    if (!cases) return MMP_ERR(MMP_STATUS_PARSE, "%s: missing member \"cases\"", cx->name);
    MMP_TRY(mmp_json_expect(cx, cases, MMP_JSON_ARRAY, "cases"));
    for (size_t i = 0; i < cases->n; i++) {
        mmp_case_result r;
        char path[48];
        snprintf(path, sizeof path, "cases[%zu]", i);
        MMP_TRY(mmp_json_read_case(cx, &r, cases->items[i], path));
        MMP_TRY(mmp_run_add(run, &r));
    }
    const mmp_json *probes = mmp_json_get(doc, "probes");
    if (probes && probes->type != MMP_JSON_NULL) {
        run->probes = malloc(sizeof *run->probes);
        if (!run->probes) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
        mmp_probe_results_init(run->probes);
        MMP_TRY(mmp_json_read_probes(cx, run->probes, probes));
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_report_read_json_text(mmp_run *run, const char *text, size_t len, const char *name)
{
    mmp_json *doc;
    mmp_json_ctx cx = {name ? name : "<run>", 0, 0};
    MMP_TRY(mmp_json_parse(&doc, text, len, cx.name));
    mmp_status st = read_doc(run, doc, &cx);
    mmp_json_free(doc);
    return st;
}

mmp_status mmp_report_read_json(mmp_run *run, const char *path)
{
    char *text;
    size_t len;
    MMP_TRY(mmp_json_slurp(&text, &len, path));
    mmp_status st = mmp_report_read_json_text(run, text, len, path);
    free(text);
    return st;
}

mmp_status mmp_run_read_jsonl(mmp_run *run, const char *path)
{
    char *text;
    size_t len;
    MMP_TRY(mmp_json_slurp(&text, &len, path));
    mmp_status st = mmp_run_read_jsonl_text(run, text, len, path);
    free(text);
    return st;
}

mmp_status mmp_run_read_jsonl_text(mmp_run *run, const char *text, size_t len, const char *path)
{
    if (!path) path = "<jsonl>";
    mmp_json_ctx cx = {path, MMP_REPORT_SCHEMA_MAJOR, MMP_REPORT_SCHEMA_MINOR};
    mmp_status st = MMP_STATUS_OK;
    size_t line = 0;
    for (const char *p = text; p < text + len && st == MMP_STATUS_OK;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        line++;
        char name[600];
        snprintf(name, sizeof name, "%s (line %zu)", path, line);
        cx.name = name;
        int blank = 1;
        for (size_t i = 0; i < n; i++) if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') blank = 0;
        if (!blank) {
            mmp_json *v;
            st = mmp_json_parse(&v, p, n, name);
            if (st != MMP_STATUS_OK && !nl) {
                /* the last line without its newline: cut off by a crash or a kill; keep the rest */
                fprintf(stderr, "mmaprobe: %s: ignoring a truncated last line\n", path);
                st = MMP_STATUS_OK;
                break;
            }
            if (st == MMP_STATUS_OK) {
                mmp_case_result r;
                st = mmp_json_read_case(&cx, &r, v, "case");
                if (st == MMP_STATUS_OK) st = mmp_run_add(run, &r);
                mmp_json_free(v);
            }
        }
        p += n + (nl ? 1 : 0);
    }
    return st;
}

static int find_row(const mmp_summary_row *rows, size_t n, const mmp_case_result *c)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].precision, c->precision) == 0 && strcmp(rows[i].kernel, c->kernel) == 0) return (int)i;
    return -1;
}

static int verdict_rank(mmp_verdict v)
{
    return v == MMP_VERDICT_FAIL ? 3 : v == MMP_VERDICT_ERROR ? 2 : v == MMP_VERDICT_PASS ? 1 : 0;
}

mmp_status mmp_report_summarise(mmp_summary_row **rows_out, size_t *n_out, const mmp_run *run)
{
    *rows_out = NULL;
    *n_out = 0;
    if (!run->n_cases) return MMP_STATUS_OK;
    mmp_summary_row *rows = calloc(run->n_cases, sizeof *rows);
    if (!rows) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory summarising %zu cases", run->n_cases);
    size_t n = 0;
    for (size_t i = 0; i < run->n_cases; i++) {
        const mmp_case_result *c = &run->cases[i];
        int k = find_row(rows, n, c);
        if (k < 0) {
            k = (int)n++;
            snprintf(rows[k].precision, sizeof rows[k].precision, "%s", c->precision);
            snprintf(rows[k].kernel, sizeof rows[k].kernel, "%s", c->kernel);
            rows[k].verdict = MMP_VERDICT_SKIP;
        }
        mmp_summary_row *s = &rows[k];
        s->cases++;
        s->pass += c->verdict == MMP_VERDICT_PASS;
        s->fail += c->verdict == MMP_VERDICT_FAIL;
        s->error += c->verdict == MMP_VERDICT_ERROR;
        s->skip += c->verdict == MMP_VERDICT_SKIP || (unsigned)c->verdict >= MMP_VERDICT_COUNT_;
        if (verdict_rank(c->verdict) > verdict_rank(s->verdict)) s->verdict = c->verdict;
        if (c->verdict == MMP_VERDICT_PASS || c->verdict == MMP_VERDICT_FAIL) {
            /* NaN > x is false: a NaN ratio never hides a finite worst one; inf wins */
            if (c->metrics.max_ratio_det > s->worst_ratio_det) s->worst_ratio_det = c->metrics.max_ratio_det;
            if (c->metrics.max_ratio_prob > s->worst_ratio_prob) s->worst_ratio_prob = c->metrics.max_ratio_prob;
            if (c->metrics.max_ulp > s->max_ulp) s->max_ulp = c->metrics.max_ulp;
        }
        if (c->time_kernel_ms > 0) s->time_kernel_ms += c->time_kernel_ms;
    }
    *rows_out = rows;
    *n_out = n;
    return MMP_STATUS_OK;
}

int mmp_report_counts(const mmp_run *run, int64_t counts[MMP_VERDICT_COUNT_])
{
    for (int v = 0; v < MMP_VERDICT_COUNT_; v++) counts[v] = 0;
    for (size_t i = 0; i < run->n_cases; i++)
        if ((unsigned)run->cases[i].verdict < MMP_VERDICT_COUNT_) counts[run->cases[i].verdict]++;
    return counts[MMP_VERDICT_FAIL] || counts[MMP_VERDICT_ERROR] ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}
