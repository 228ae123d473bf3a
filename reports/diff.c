/* diff.c — regressions of a new run against a base run, for CI gating.
 *
 * Cases are matched by ID. A regression is
 *   - a case that FAILs or ERRORs now and PASSed, was skipped or did not exist in the base;
 *   - a case with a PASS or FAIL verdict in both runs whose worst |err|/deterministic bound
 *     (metrics.max_ratio_det) grew by more than the factor max_ratio_growth (a NaN ratio
 *     where the base had a number counts as growth).
 *   - a base case missing from the new run (unless allow_missing);
 *   - a PASS case now skipped (unless allow_skip: a skip can hide a regression, and a run
 *     without its GPU skips every device case).
 * Listed but not regressions: fixed cases, new passing cases, and what is allowed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "render.h"

typedef struct idx { const char *id; size_t i; } idx;

static int idx_cmp(const void *a, const void *b) { return strcmp(((const idx *)a)->id, ((const idx *)b)->id); }

static idx *index_run(const mmp_run *r)
{
    idx *x = malloc((r->n_cases ? r->n_cases : 1) * sizeof *x);
    if (!x) return NULL;
    for (size_t i = 0; i < r->n_cases; i++) { x[i].id = r->cases[i].id; x[i].i = i; }
    qsort(x, r->n_cases, sizeof *x, idx_cmp);
    return x;
}

static const mmp_case_result *lookup(const mmp_run *r, const idx *x, const char *id)
{
    idx key = {id, 0};
    const idx *hit = r->n_cases ? bsearch(&key, x, r->n_cases, sizeof *x, idx_cmp) : NULL;
    return hit ? &r->cases[hit->i] : NULL;
}

static int is_bad(mmp_verdict v) { return v == MMP_VERDICT_FAIL || v == MMP_VERDICT_ERROR; }
static int is_measured(mmp_verdict v) { return v == MMP_VERDICT_PASS || v == MMP_VERDICT_FAIL; }

enum { D_NEW_FAIL, D_WORSE, D_FIXED, D_MISSING, D_NOW_SKIPPED, D_KINDS };
static const char *const titles[D_KINDS] = {
    "New failures", "Worse beyond the threshold", "Fixed", "Missing from the new run", "Passed before, skipped now"};

static void line(FILE *out, int md, int kind, const mmp_case_result *b, const mmp_case_result *c)
{
    const mmp_case_result *r = c ? c : b;
    char reasons[512];
    mmp_reason_format(reasons, sizeof reasons, r->reasons);
    if (md) {
        fputs("- `", out);
        for (const char *p = r->id; *p; p++) {
            size_t n = mmp_text_printable_len(p);   /* 0: a control byte (ESC, C1) */
            if (*p == '`') fputc('\'', out);
            else if (!n) fputc(' ', out);
            else fwrite(p, 1, n, out);
            if (n > 1) p += n - 1;
        }
        fputs("`", out);
    }
    else {
        fputs("  ", out);
        mmp_text_fputs(out, r->id);      /* no ESC from a document to a terminal */
    }
    if (kind == D_NEW_FAIL)
        fprintf(out, ": %s -> %s [%s]", b ? mmp_verdict_name(b->verdict) : "new", mmp_verdict_name(c->verdict), reasons);
    else if (kind == D_WORSE)
        fprintf(out, ": |err|/bound %.4g -> %.4g (x%.3g), %s", b->metrics.max_ratio_det, c->metrics.max_ratio_det,
                c->metrics.max_ratio_det / b->metrics.max_ratio_det, mmp_verdict_name(c->verdict));
    else if (kind == D_FIXED)
        fprintf(out, ": %s -> %s", mmp_verdict_name(b->verdict), mmp_verdict_name(c->verdict));
    else if (kind == D_NOW_SKIPPED)
        fprintf(out, ": PASS -> SKIP [%s]", reasons);
    if ((kind == D_NEW_FAIL) && c->message[0]) {
        fputs(md ? " — " : "\n      ", out);
        if (md) mmp_md_escape(out, c->message);
        else mmp_text_fputs(out, c->message);
    }
    fputc('\n', out);
}

mmp_status mmp_report_diff(FILE *out, size_t *regressions, const mmp_run *base, const mmp_run *cur,
                           const mmp_diff_options *opt)
{
    double growth = opt && opt->max_ratio_growth > 0 ? opt->max_ratio_growth : 2.0;
    int md = opt && opt->markdown;
    int allow_missing = opt && opt->allow_missing, allow_skip = opt && opt->allow_skip;
    *regressions = 0;
    if (!(growth >= 1.0) || !isfinite(growth))
        return MMP_ERR(MMP_STATUS_INVALID, "--max-ratio-growth must be a finite factor >= 1 (got %g)", growth);
    idx *xb = index_run(base), *xc = index_run(cur);
    if (!xb || !xc) { free(xb); free(xc); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory indexing runs"); }
    size_t count[D_KINDS] = {0}, fresh = 0;
    /* two passes: count, then print grouped */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t reg = count[D_NEW_FAIL] + count[D_WORSE] + (allow_missing ? 0 : count[D_MISSING]) +
                         (allow_skip ? 0 : count[D_NOW_SKIPPED]);
            *regressions = reg;
            if (md) fprintf(out, "## mmaprobe diff: %s\n\n", reg ? "❌ regressions" : "✅ no regression");
            else fprintf(out, "mmaprobe diff: %s\n", reg ? "REGRESSION" : "no regression");
            fprintf(out, "%s%zu cases in base, %zu in new; %zu new failures, %zu worse (|err|/bound grew more than x%g), "
                         "%zu fixed, %zu missing, %zu newly skipped, %zu new cases%s\n",
                    md ? "" : "  ", base->n_cases, cur->n_cases, count[D_NEW_FAIL], count[D_WORSE], growth,
                    count[D_FIXED], count[D_MISSING], count[D_NOW_SKIPPED], fresh, md ? "\n" : "");
            if (!cur->complete)
                fprintf(out, "%snote: the new run is incomplete (%s)\n%s", md ? "> " : "  ",
                        cur->interrupted_by[0] ? cur->interrupted_by : "partial", md ? "\n" : "");
            if (strcmp(base->env.gpu, cur->env.gpu) != 0 || base->env.cc_major != cur->env.cc_major) {
                fprintf(out, "%snote: the runs are from different GPUs (", md ? "> " : "  ");
                if (md) { mmp_md_escape(out, base->env.gpu); fputs(" vs ", out); mmp_md_escape(out, cur->env.gpu); }
                else { mmp_text_fputs(out, base->env.gpu); fputs(" vs ", out); mmp_text_fputs(out, cur->env.gpu); }
                fputs(")\n", out);
                if (md) fputc('\n', out);
            }
        }
        for (int kind = 0; kind < D_KINDS; kind++) {
            if (pass == 1 && count[kind] == 0) continue;
            if (pass == 1) {
                const char *how = kind == D_MISSING ? (allow_missing ? ", allowed by --allow-missing" : ", a regression (--allow-missing to allow)")
                                  : kind == D_NOW_SKIPPED ? (allow_skip ? ", allowed by --allow-skip" : ", a regression (--allow-skip to allow)")
                                  : "";
                fprintf(out, md ? "### %s (%zu%s)\n\n" : "%s (%zu%s):\n", titles[kind], count[kind], how);
            }
            if (kind == D_MISSING) {
                for (size_t i = 0; i < base->n_cases; i++)
                    if (!lookup(cur, xc, base->cases[i].id)) {
                        if (pass == 0) count[kind]++;
                        else line(out, md, kind, &base->cases[i], NULL);
                    }
            } else {
                for (size_t i = 0; i < cur->n_cases; i++) {
                    const mmp_case_result *c = &cur->cases[i], *b = lookup(base, xb, c->id);
                    int hit = 0;
                    if (kind == D_NEW_FAIL) hit = is_bad(c->verdict) && (!b || !is_bad(b->verdict));
                    else if (kind == D_FIXED) hit = b && is_bad(b->verdict) && !is_bad(c->verdict);
                    else if (kind == D_NOW_SKIPPED) hit = b && b->verdict == MMP_VERDICT_PASS && c->verdict == MMP_VERDICT_SKIP;
                    else if (kind == D_WORSE && b && is_measured(b->verdict) && is_measured(c->verdict) &&
                             !(is_bad(c->verdict) && !is_bad(b->verdict))) {
                        double rb = b->metrics.max_ratio_det, rc = c->metrics.max_ratio_det;
                        hit = (isnan(rc) && !isnan(rb)) || rc > growth * rb;
                    }
                    if (pass == 0 && kind == D_NEW_FAIL && !b && !is_bad(c->verdict)) fresh++;
                    if (!hit) continue;
                    if (pass == 0) count[kind]++;
                    else line(out, md, kind, b, c);
                }
            }
            if (pass == 1 && md) fputc('\n', out);
        }
    }
    free(xb);
    free(xc);
    return MMP_STATUS_OK;
}
