/* check_schema.c — the run document's JSON Schema (reports/schema/run.schema.json) against what
 * the writer makes: the synthetic sample (cases of every verdict, probes, heatmaps, NaN/Inf
 * figures), a merge of its shards and every committed run document under results/ must be
 * valid; documents with one thing wrong (a member the schema does not know, a wrong type, a
 * missing member, a verdict or heatmap size out of range) must not be, so the check can fail.
 * A minimal validator of the keywords the schema uses: type, enum, properties, required,
 * additionalProperties (false), items, minItems, maxItems, minimum, maximum, pattern (only
 * "^1\\.[0-9]+$"), anyOf and $ref to "#/$defs/NAME". An unknown keyword fails the test, so the
 * schema cannot use one this checker ignores.
 * Run: build/tests/check_schema
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/json.h"
#include "mmaprobe/report.h"
#include "tests/check_main.h"
#include "tests/lib/sample.h"

static mmp_json *schema;
static char why[512];

static const mmp_json *get(const mmp_json *o, const char *k) { return o && o->type == MMP_JSON_OBJECT ? mmp_json_get(o, k) : NULL; }

static int type_is(const mmp_json *v, const char *t)
{
    if (!strcmp(t, "object")) return v->type == MMP_JSON_OBJECT;
    if (!strcmp(t, "array")) return v->type == MMP_JSON_ARRAY;
    if (!strcmp(t, "string")) return v->type == MMP_JSON_STRING;
    if (!strcmp(t, "boolean")) return v->type == MMP_JSON_TRUE || v->type == MMP_JSON_FALSE;
    if (!strcmp(t, "null")) return v->type == MMP_JSON_NULL;
    if (!strcmp(t, "number")) return v->type == MMP_JSON_NUMBER;
    if (!strcmp(t, "integer")) {
        double x;
        return v->type == MMP_JSON_NUMBER && !strpbrk(v->str, ".eE") && mmp_json_double(&x, v) == 0 && x == floor(x);
    }
    ck_abort_msg("schema: unknown type '%s'", t);
    return 0;
}

static int same_value(const mmp_json *a, const mmp_json *b)
{
    if (a->type != b->type) return 0;
    if (a->type == MMP_JSON_STRING || a->type == MMP_JSON_NUMBER) return a->len == b->len && !memcmp(a->str, b->str, a->len);
    return a->type == MMP_JSON_NULL || a->type == MMP_JSON_TRUE || a->type == MMP_JSON_FALSE;
}

static int validate(const mmp_json *v, const mmp_json *s, const char *path);

static int invalid(const char *path, const char *what)
{
    snprintf(why, sizeof why, "%s: %s", path, what);
    return 0;
}

static int validate(const mmp_json *v, const mmp_json *s, const char *path)
{
    ck_assert_msg(s && s->type == MMP_JSON_OBJECT, "schema at %s is not an object", path);
    char sub[512];
    for (size_t i = 0; i < s->n; i++) {
        const char *kw = s->keys[i];
        const mmp_json *a = s->items[i];
        if (!strcmp(kw, "$ref")) {
            ck_assert_msg(!strncmp(a->str, "#/$defs/", 8), "schema: $ref '%s'", a->str);
            const mmp_json *d = get(get(schema, "$defs"), a->str + 8);
            ck_assert_msg(d != NULL, "schema: no definition %s", a->str);
            if (!validate(v, d, path)) return 0;
        } else if (!strcmp(kw, "type")) {
            int ok = 0;
            if (a->type == MMP_JSON_STRING) ok = type_is(v, a->str);
            else for (size_t t = 0; t < a->n; t++) ok |= type_is(v, a->items[t]->str);
            if (!ok) return invalid(path, "wrong type");
        } else if (!strcmp(kw, "enum")) {
            int ok = 0;
            for (size_t t = 0; t < a->n; t++) ok |= same_value(v, a->items[t]);
            if (!ok) return invalid(path, "not one of the enum's values");
        } else if (!strcmp(kw, "anyOf")) {
            int ok = 0;
            for (size_t t = 0; t < a->n && !ok; t++) ok = validate(v, a->items[t], path);
            if (!ok) return invalid(path, "matches none of anyOf");
        } else if (!strcmp(kw, "required")) {
            if (v->type != MMP_JSON_OBJECT) continue;
            for (size_t t = 0; t < a->n; t++)
                if (!mmp_json_get(v, a->items[t]->str)) {
                    snprintf(sub, sizeof sub, "missing member '%s'", a->items[t]->str);
                    return invalid(path, sub);
                }
        } else if (!strcmp(kw, "properties") || !strcmp(kw, "additionalProperties")) {
            if (v->type != MMP_JSON_OBJECT) continue;
            const mmp_json *props = get(s, "properties"), *extra = get(s, "additionalProperties");
            if (!strcmp(kw, "additionalProperties")) ck_assert_msg(extra->type == MMP_JSON_FALSE, "schema: additionalProperties must be false");
            if (!strcmp(kw, "additionalProperties") && props) continue;   /* checked with properties */
            for (size_t m = 0; m < v->n; m++) {
                const mmp_json *ps = props ? mmp_json_get(props, v->keys[m]) : NULL;
                snprintf(sub, sizeof sub, "%s.%s", path, v->keys[m]);
                if (!ps) {
                    if (extra && extra->type == MMP_JSON_FALSE) return invalid(sub, "a member the schema does not know");
                    continue;
                }
                if (!validate(v->items[m], ps, sub)) return 0;
            }
        } else if (!strcmp(kw, "items")) {
            if (v->type != MMP_JSON_ARRAY) continue;
            for (size_t m = 0; m < v->n; m++) {
                snprintf(sub, sizeof sub, "%s[%zu]", path, m);
                if (!validate(v->items[m], a, sub)) return 0;
            }
        } else if (!strcmp(kw, "minItems") || !strcmp(kw, "maxItems")) {
            double lim;
            ck_assert(mmp_json_double(&lim, a) == 0);
            if (v->type == MMP_JSON_ARRAY && (kw[1] == 'i' ? (double)v->n < lim : (double)v->n > lim))
                return invalid(path, kw);
        } else if (!strcmp(kw, "minimum") || !strcmp(kw, "maximum")) {
            double lim, x;
            ck_assert(mmp_json_double(&lim, a) == 0);
            if (v->type == MMP_JSON_NUMBER && mmp_json_double(&x, v) == 0 && (kw[1] == 'i' ? x < lim : x > lim))
                return invalid(path, kw);
        } else if (!strcmp(kw, "pattern")) {
            ck_assert_str_eq(a->str, "^1\\.[0-9]+$");
            const char *p = v->type == MMP_JSON_STRING ? v->str : "";
            int ok = p[0] == '1' && p[1] == '.' && p[2];
            for (const char *q = p + 2; ok && *q; q++) ok = *q >= '0' && *q <= '9';
            if (!ok) return invalid(path, "does not match the pattern");
        } else if (!strcmp(kw, "$schema") || !strcmp(kw, "$id") || !strcmp(kw, "title") ||
                   !strcmp(kw, "description") || !strcmp(kw, "$defs")) {
            /* annotations */
        } else {
            ck_abort_msg("schema keyword '%s' at %s is not checked by this test", kw, path);
        }
    }
    return 1;
}

static mmp_json *parse_text(const char *text, size_t len, const char *name)
{
    mmp_json *doc;
    ck_assert_msg(mmp_json_parse(&doc, text, len, name) == MMP_STATUS_OK, "%s", mmp_error_last());
    return doc;
}

static char *doc_text(const mmp_run *run, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ck_assert_int_eq(mmp_report_write_json_stream(f, run), MMP_STATUS_OK);
    fclose(f);
    return buf;
}

static int valid_text(const char *text, size_t len, const char *name)
{
    mmp_json *doc = parse_text(text, len, name);
    why[0] = '\0';
    int ok = validate(doc, schema, "$");
    mmp_json_free(doc);
    return ok;
}

static void setup(void)
{
    char path[4200], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/reports/schema/run.schema.json", MMP_SOURCE_DIR);
    ck_assert_msg(mmp_json_slurp(&text, &len, path) == MMP_STATUS_OK, "%s", mmp_error_last());
    schema = parse_text(text, len, path);
    free(text);
}

static void teardown(void) { mmp_json_free(schema); schema = NULL; }

START_TEST(sample_and_merge_valid)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    size_t len;
    char *t = doc_text(&run, &len);
    ck_assert_msg(valid_text(t, len, "sample"), "the sample document: %s", why);
    free(t);
    /* a merge of two halves: shards filled */
    mmp_run half[2], merged;
    for (int h = 0; h < 2; h++) {
        mmp_run_init(&half[h]);
        half[h].env = run.env;
        snprintf(half[h].suite, sizeof half[h].suite, "%s", run.suite);
        for (size_t i = (size_t)h; i < run.n_cases; i += 2) ck_assert_int_eq(mmp_run_add(&half[h], &run.cases[i]), MMP_STATUS_OK);
    }
    const mmp_run *ptrs[2] = {&half[0], &half[1]};
    const char *names[2] = {"a", "b"};
    mmp_run_init(&merged);
    ck_assert_int_eq(mmp_report_merge(&merged, ptrs, names, 2), MMP_STATUS_OK);
    ck_assert_uint_eq(merged.n_shards, 2);
    t = doc_text(&merged, &len);
    ck_assert_msg(valid_text(t, len, "merged"), "the merged document: %s", why);
    free(t);
    mmp_run_clear(&merged);
    mmp_run_clear(&half[0]);
    mmp_run_clear(&half[1]);
    mmp_run_clear(&run);
}
END_TEST

/* every committed run document (results/: validate runs, probe runs, from the H200) */
static int check_dir(const char *dir, int *seen)
{
    DIR *d = opendir(dir);
    if (!d) return 1;
    struct dirent *e;
    int ok = 1;
    while ((e = readdir(d)) && ok) {
        if (e->d_name[0] == '.') continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t nl = strlen(e->d_name);
        if (e->d_type == DT_DIR) { ok = check_dir(path, seen); continue; }
        if (nl < 5 || strcmp(e->d_name + nl - 5, ".json") != 0) continue;
        char *text;
        size_t len;
        if (mmp_json_slurp(&text, &len, path) != MMP_STATUS_OK) continue;
        if (!strstr(text, "\"format\": \"mmaprobe-run\"") && !strstr(text, "\"format\":\"mmaprobe-run\"")) { free(text); continue; }
        if (!strstr(text, "\"schema_version\": \"1.") && !strstr(text, "\"schema_version\":\"1.")) { free(text); continue; }
        ok = valid_text(text, len, path);
        if (!ok) fprintf(stderr, "%s: %s\n", path, why);
        (*seen)++;
        free(text);
    }
    closedir(d);
    return ok;
}

START_TEST(committed_documents_valid)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/results", MMP_SOURCE_DIR);
    int seen = 0;
    ck_assert_msg(check_dir(dir, &seen), "a committed run document is not valid: %s", why);
    printf("committed run documents valid: %d\n", seen);
    ck_assert_int_gt(seen, 5);
}
END_TEST

/* one thing wrong each: a text replacement in the sample document */
static const struct { const char *from, *to, *what; } mutants[] = {
    {"\"n_mpfr\":", "\"n_mpfr_typo\":", "a member the schema does not know"},
    {"\"m\":64,", "\"m\":\"64\",", "wrong type"},
    {"\"m\":64,", "\"m\":64.5,", "wrong type"},
    {"\"verdict\":\"PASS\"", "\"verdict\":\"MAYBE\"", "not one of the enum's values"},
    {"\"complete\":true", "\"complete\":1", "wrong type"},
    {"\"schema_version\":\"1.", "\"schema_version\":\"7.", "does not match the pattern"},
    {"\"rows\":", "\"rows\":65,\"was\":", "heatmap.rows: maximum"},
    {"\"kind\":", "\"kind_\":", "missing member 'kind'"},
    {"\"seed\":", "\"seed\":-1,\"seed_\":", "env.seed: minimum"},
    {"\"max_ulp\":", "\"max_ulp\":\"huge\",\"x\":", "max_ulp: matches none of anyOf"},
};

START_TEST(broken_documents_invalid)
{
    mmp_run run;
    ck_assert_int_eq(mmp_report_sample(&run), MMP_STATUS_OK);
    size_t len;
    char *t = doc_text(&run, &len);
    char *hit = strstr(t, mutants[_i].from);
    ck_assert_msg(hit != NULL, "the sample has no '%s'", mutants[_i].from);
    size_t fl = strlen(mutants[_i].from), tl = strlen(mutants[_i].to);
    char *m = malloc(len - fl + tl + 1);
    memcpy(m, t, (size_t)(hit - t));
    memcpy(m + (hit - t), mutants[_i].to, tl);
    memcpy(m + (hit - t) + tl, hit + fl, len - (size_t)(hit - t) - fl + 1);
    mmp_json *doc;
    if (mmp_json_parse(&doc, m, strlen(m), "mutant") == MMP_STATUS_OK) {
        why[0] = '\0';
        int ok = validate(doc, schema, "$");
        mmp_json_free(doc);
        ck_assert_msg(!ok, "'%s' -> '%s' was accepted", mutants[_i].from, mutants[_i].to);
        ck_assert_msg(strstr(why, mutants[_i].what), "'%s': %s", mutants[_i].to, why);
    }
    free(m);
    free(t);
    mmp_run_clear(&run);
}
END_TEST

static Suite *schema_suite(void)
{
    Suite *s = suite_create("schema");
    TCase *t = tcase_create("run document");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, sample_and_merge_valid);
    tcase_add_test(t, committed_documents_valid);
    tcase_add_loop_test(t, broken_documents_invalid, 0, (int)(sizeof mutants / sizeof mutants[0]));
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(schema_suite)
