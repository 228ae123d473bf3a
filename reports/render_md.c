/* render_md.c — a summary that fits a pull-request comment: totals, one table per precision
 * (rows = kernels) with PASS/FAIL, worst error/bound, max ULP, then the failures with IDs and
 * reasons (capped, the rest counted). Table cells escape '|', '<', '>', '&', '`' and newlines. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "render.h"

#define MD_MAX_FAILURES 50   /* a PR comment stays readable; the rest are counted */

/* Inside a `code span`: only the table pipe, backticks and line breaks need care. */
static void md_code(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '|') fputs("\\|", out);
        else if (*p == '`') fputc('\'', out);
        else {
            size_t n = mmp_text_printable_len((const char *)p);   /* 0: a control byte (ESC, C1) */
            if (!n) fputc(' ', out);
            else fwrite(p, 1, n, out);
            if (n > 1) p += n - 1;
        }
    }
}

static const char *badge(mmp_verdict v)
{
    static const char *const b[] = {"✅ PASS", "❌ FAIL", "💥 ERROR", "⏭️ SKIP"};
    return (unsigned)v < MMP_VERDICT_COUNT_ ? b[v] : "?";
}

void mmp_report_print_md(FILE *out, const mmp_run *run)
{
    int64_t counts[MMP_VERDICT_COUNT_];
    int code = mmp_report_counts(run, counts);
    int probe_only = run->probes && run->n_cases == 0;   /* a probe document: no empty case table */
    fprintf(out, "## mmaprobe %s: %s\n\n", run->kind,
            probe_only ? "probe results" : code ? "❌ failures found" : "✅ all passed");
    if (!probe_only) fprintf(out, "%zu cases: **%" PRId64 " PASS**, **%" PRId64 " FAIL**, **%" PRId64 " ERROR**, %" PRId64
                 " SKIP%s\n\n",
            run->n_cases, counts[0], counts[1], counts[2], counts[3],
            run->complete ? "" : " — **partial run (interrupted)**");
    fprintf(out, "<sub>GPU: ");
    mmp_md_escape(out, run->env.gpu);
    fprintf(out, " (sm_%d%d) · driver ", run->env.cc_major, run->env.cc_minor);
    mmp_md_escape(out, run->env.driver[0] ? run->env.driver : "-");
    fprintf(out, " · CUDA ");
    mmp_md_escape(out, run->env.runtime[0] ? run->env.runtime : "-");
    fprintf(out, " · cuBLAS ");
    mmp_md_escape(out, run->env.cublas[0] ? run->env.cublas : "-");
    fprintf(out, " · git ");
    mmp_md_escape(out, run->env.git_sha[0] ? run->env.git_sha : "-");
    fprintf(out, " · seed %" PRIu64 "%s</sub>\n\n", run->env.seed,
            run->n_shards ? " · merged shards" : "");
    if (probe_only) {
        mmp_report_print_probes(out, run, 1);
        return;
    }

    mmp_summary_row *rows = NULL;
    size_t n = 0;
    if (mmp_report_summarise(&rows, &n, run) != MMP_STATUS_OK) return;
    char *done = calloc(n ? n : 1, 1);
    for (size_t i = 0; done && i < n; i++) {
        if (done[i]) continue;
        fprintf(out, "### `");
        md_code(out, rows[i].precision[0] ? rows[i].precision : "(no precision)");
        fprintf(out, "`\n\n| kernel | verdict | cases | pass | fail | error | skip | worst err/bound | worst err/prob. bound | max ULP |\n");
        fprintf(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (size_t j = i; j < n; j++) {
            if (done[j] || strcmp(rows[j].precision, rows[i].precision) != 0) continue;
            done[j] = 1;
            const mmp_summary_row *s = &rows[j];
            fprintf(out, "| `");
            md_code(out, s->kernel);
            fputc('`', out);
            fprintf(out, " | %s | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64 " | ",
                    badge(s->verdict), s->cases, s->pass, s->fail, s->error, s->skip);
            if (s->pass + s->fail == 0) fputs("– | – | – |\n", out);     /* nothing was measured */
            else fprintf(out, "%.3g | %.3g | %.4g |\n", s->worst_ratio_det, s->worst_ratio_prob, s->max_ulp);
        }
        fprintf(out, "\n");
    }
    free(done);
    free(rows);

    size_t shown = 0, total = (size_t)(counts[MMP_VERDICT_FAIL] + counts[MMP_VERDICT_ERROR]);
    if (total) fprintf(out, "### Failures\n\n");
    for (size_t i = 0; i < run->n_cases && shown < MD_MAX_FAILURES; i++) {
        const mmp_case_result *c = &run->cases[i];
        if (c->verdict != MMP_VERDICT_FAIL && c->verdict != MMP_VERDICT_ERROR) continue;
        shown++;
        char reasons[512];
        mmp_reason_format(reasons, sizeof reasons, c->reasons);
        fprintf(out, "- **%s** `", mmp_verdict_name(c->verdict));
        md_code(out, c->id);
        fprintf(out, "` — %s", reasons[0] ? reasons : "no reason recorded");
        if (c->verdict == MMP_VERDICT_FAIL)
            fprintf(out, "; err/bound %.3g, max ULP %.4g, %" PRId64 " of %" PRId64 " elements beyond tolerance",
                    c->metrics.max_ratio_det, c->metrics.max_ulp, c->metrics.above_tol, c->metrics.count);
        if (c->message[0]) {
            fprintf(out, "<br>");
            mmp_md_escape(out, c->message);
        }
        fprintf(out, "\n");
    }
    if (total > shown) fprintf(out, "- … and %zu more (see the HTML or JSON report)\n", total - shown);
    if (total) fprintf(out, "\n");
    mmp_report_print_probes(out, run, 1);
}
