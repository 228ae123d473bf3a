/* render_html.c — one self-contained HTML file (inline CSS and SVG, no script, no network):
 * verdict banner, summary per precision x kernel, a card per failing case (error heatmap over
 * the output matrix, histogram of |err|/bound, figures), errors, error vs K per precision, the
 * aggregate histogram, probe pictures (fragment layouts, bank maps), environment, all cases.
 * Every string from the run is escaped (mmp_xml_escape). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "mmaprobe/json.h"
#include "render.h"

#define HTML_MAX_CARDS 64     /* failing-case cards drawn; the rest are in the cases table */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d232b}"
    "main{max-width:1320px;margin:0 auto;padding:20px 28px}"
    "h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:2px solid #d8dce2;padding-bottom:4px}"
    "h3{font-size:15px;margin:0 0 6px;word-break:break-all}"
    ".banner{padding:16px 22px;border-radius:10px;color:#fff;margin-bottom:16px}"
    ".banner.bad{background:linear-gradient(90deg,#a5261c,#d0453a)}.banner.good{background:linear-gradient(90deg,#1e7b45,#2fa363)}"
    ".banner .sub{opacity:.9}"
    ".chip{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}"
    ".PASS{background:#2fa363}.FAIL{background:#c0392b}.ERROR{background:#8e44ad}.SKIP{background:#8a929c}"
    "table{border-collapse:collapse;background:#fff;border-radius:8px;overflow:hidden;box-shadow:0 1px 2px #0002}"
    "th,td{padding:5px 10px;text-align:left;border-bottom:1px solid #eceef1;vertical-align:top}"
    "th{background:#eef1f5;font-weight:600;font-size:13px}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".card{background:#fff;border-radius:10px;box-shadow:0 1px 3px #0002;padding:14px 18px;margin:14px 0;border-left:6px solid #c0392b}"
    ".card.err{border-left-color:#8e44ad}.row{display:flex;gap:22px;flex-wrap:wrap;align-items:flex-start}"
    ".kv td{border:none;padding:2px 10px 2px 0;font-size:13px}.kv td:first-child{color:#5b6572}"
    ".msg{font-family:ui-monospace,Menlo,monospace;font-size:12.5px;background:#fbf3f2;padding:6px 8px;border-radius:6px;word-break:break-all}"
    ".muted{color:#6b7380}.ax{font-size:12px;fill:#333}.tick{font-size:11px;fill:#444}"
    ".bar{display:inline-block;height:9px;border-radius:3px;vertical-align:middle;margin-right:6px}"
    "details{margin:10px 0}summary{cursor:pointer;font-weight:600}"
    "code{font-family:ui-monospace,Menlo,monospace;font-size:12.5px}"
    ".panel{background:#fff;border-radius:10px;box-shadow:0 1px 3px #0002;padding:12px 16px;display:inline-block;margin:0 14px 14px 0;vertical-align:top}";

static void esc(FILE *out, const char *s) { mmp_xml_escape(out, s); }

static void chip(FILE *out, mmp_verdict v)
{
    const char *n = mmp_verdict_name(v);
    fprintf(out, "<span class=\"chip %s\">%s</span>", (unsigned)v < MMP_VERDICT_COUNT_ ? n : "ERROR", n);
}

/* A horizontal bar for a ratio on a log scale (2^-14 .. 2^10), red beyond 1. */
static void ratio_bar(FILE *out, double r)
{
    double l = r > 0 ? log2(r) : -14;
    if (!(l >= -14)) l = -14;
    if (l > 10) l = 10;
    fprintf(out, "<span class=\"bar\" style=\"width:%.0fpx;background:%s\"></span>", 4 + 96 * (l + 14) / 24,
            r > 1 || isnan(r) ? "#c0392b" : "#4a7fc1");
}

static void kv(FILE *out, const char *k, const char *v)
{
    fprintf(out, "<tr><td>%s</td><td>", k);
    esc(out, v && *v ? v : "-");
    fputs("</td></tr>\n", out);
}

static void env_table(FILE *out, const mmp_env *e)
{
    char b[64];
    fputs("<table class=\"kv\">\n", out);
    kv(out, "GPU", e->gpu);
    snprintf(b, sizeof b, "%d.%d (sm_%d%d), %d SMs, device %d", e->cc_major, e->cc_minor, e->cc_major,
             e->cc_minor, e->sm_count, e->device);
    kv(out, "compute capability", b);
    kv(out, "driver", e->driver);
    kv(out, "CUDA runtime", e->runtime);
    kv(out, "cuBLAS", e->cublas);
    kv(out, "MPFR", e->mpfr);
    kv(out, "Check", e->check);
    kv(out, "git SHA", e->git_sha);
    kv(out, "host", e->hostname);
    kv(out, "started", e->started);
    snprintf(b, sizeof b, "%" PRIu64, e->seed);
    kv(out, "seed", b);
    kv(out, "command", e->command);
    if (e->no_device_reason[0]) kv(out, "no device", e->no_device_reason);
    fputs("</table>\n", out);
}

static void summary_table(FILE *out, const mmp_run *run)
{
    mmp_summary_row *rows;
    size_t n;
    if (mmp_report_summarise(&rows, &n, run) != MMP_STATUS_OK) return;
    fputs("<table><tr><th>precision</th><th>kernel</th><th>verdict</th><th>cases</th><th>pass</th><th>fail</th>"
          "<th>error</th><th>skip</th><th>worst |err|/bound</th><th>worst |err|/prob. bound</th><th>max ULP</th>"
          "<th>kernel ms (sum)</th></tr>\n", out);
    for (size_t i = 0; i < n; i++) {
        const mmp_summary_row *s = &rows[i];
        fputs("<tr><td><code>", out);
        esc(out, s->precision);
        fputs("</code></td><td><code>", out);
        esc(out, s->kernel);
        fputs("</code></td><td>", out);
        chip(out, s->verdict);
        fprintf(out, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64
                     "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td><td>",
                s->cases, s->pass, s->fail, s->error, s->skip);
        if (s->pass + s->fail == 0) {
            fprintf(out, "&#8211;</td><td class=\"num\">&#8211;</td><td class=\"num\">&#8211;</td><td class=\"num\">%.3f</td></tr>\n",
                    s->time_kernel_ms);
            continue;
        }
        ratio_bar(out, s->worst_ratio_det);
        fprintf(out, "%.3g</td><td class=\"num\">%.3g</td><td class=\"num\">%.4g</td><td class=\"num\">%.3f</td></tr>\n",
                s->worst_ratio_det, s->worst_ratio_prob, s->max_ulp, s->time_kernel_ms);
    }
    fputs("</table>\n", out);
    free(rows);
}

/* Describe one axis of the heatmap's over-bound cells: periodic (a tile or fragment pattern),
 * everywhere, or neither. bad[] has n cells of size elements each. Returns 1 if periodic. */
static int describe_axis(char *buf, size_t size, const char *what, const int *bad, int n, int64_t cell)
{
    int nbad = 0;
    for (int i = 0; i < n; i++) nbad += bad[i];
    if (nbad == n) { snprintf(buf, size, "every %s", what); return 0; }
    for (int p = 1; p <= n / 2; p++) {
        int ok = 1;
        for (int i = 0; i + p < n && ok; i++) ok = bad[i] == bad[i + p];
        if (!ok) continue;
        size_t o = (size_t)snprintf(buf, size, "%ss &#8801; ", what);
        int first = 1;
        for (int r = 0; r < p && o < size; r++) {
            if (!bad[r]) continue;
            int64_t lo = r * cell, hi = lo + cell - 1;
            if (hi > lo) o += (size_t)snprintf(buf + o, size - o, "%s%lld&#8211;%lld", first ? "" : ", ", (long long)lo, (long long)hi);
            else o += (size_t)snprintf(buf + o, size - o, "%s%lld", first ? "" : ", ", (long long)lo);
            first = 0;
        }
        if (o < size) snprintf(buf + o, size - o, " (mod %lld)", (long long)(p * cell));
        return 1;
    }
    snprintf(buf, size, "%d of %d %s blocks", nbad, n, what);
    return 0;
}

/* One line on the shape of the failure in the heatmap, e.g. "rows = 2-3 (mod 16), every column". */
static void heat_pattern(FILE *out, const mmp_case_result *c)
{
    const mmp_metrics *m = &c->metrics;
    int rb[MMP_HEAT_MAX] = {0}, cb[MMP_HEAT_MAX] = {0}, any = 0;
    for (int r = 0; r < m->heat_rows; r++)
        for (int k = 0; k < m->heat_cols; k++)
            if (!(m->heat[r * m->heat_cols + k] <= 1) || m->heat_mark[r * m->heat_cols + k]) {   /* > 1, NaN, marked */
                rb[r] = cb[k] = 1;
                any = 1;
            }
    if (!any) return;
    char rows[256], cols[256];
    int pr = describe_axis(rows, sizeof rows, "row", rb, m->heat_rows, (c->m + m->heat_rows - 1) / m->heat_rows);
    int pc = describe_axis(cols, sizeof cols, "column", cb, m->heat_cols, (c->n + m->heat_cols - 1) / m->heat_cols);
    fprintf(out, "<p><b>Pattern:</b> blocks over the bound or marked in %s, %s%s</p>\n", rows, cols,
            pr || pc ? " &#8212; periodic: looks like a tile or fragment-layout bug" : "");
}

static void failure_card(FILE *out, const mmp_case_result *c)
{
    char reasons[512], b[160];
    const mmp_metrics *m = &c->metrics;
    mmp_reason_format(reasons, sizeof reasons, c->reasons);
    fprintf(out, "<div class=\"card%s\">\n<h3>", c->verdict == MMP_VERDICT_ERROR ? " err" : "");
    chip(out, c->verdict);
    fputs(" <code>", out);
    esc(out, c->id);
    fputs("</code></h3>\n<p><b>", out);
    esc(out, reasons[0] ? reasons : "no reason recorded");
    fputs("</b></p>\n", out);
    if (c->message[0]) { fputs("<p class=\"msg\">", out); esc(out, c->message); fputs("</p>\n", out); }
    if (c->verdict != MMP_VERDICT_FAIL) { fputs("</div>\n", out); return; }
    if (m->heat_rows > 0 && m->heat_cols > 0 && m->heat_rows <= MMP_HEAT_MAX && m->heat_cols <= MMP_HEAT_MAX)
        heat_pattern(out, c);
    fputs("<div class=\"row\">\n", out);
    if (m->heat_rows > 0 && m->heat_cols > 0) {
        fprintf(out, "<div><div class=\"muted\">max |err|/bound per block of %" PRId64 "&#215;%" PRId64
                     " elements (%d&#215;%d blocks)</div>\n",
                (c->m + m->heat_rows - 1) / m->heat_rows, (c->n + m->heat_cols - 1) / m->heat_cols, m->heat_rows,
                m->heat_cols);
        mmp_svg_heatmap(out, m, c->m, c->n);
        fputs("</div>\n", out);
    } else {
        fputs("<div class=\"muted\">(no heatmap recorded for this case)</div>\n", out);
    }
    fputs("<div>\n", out);
    mmp_svg_histogram(out, m->hist);
    fputs("<table class=\"kv\">\n", out);
    kv(out, "kernel", c->kernel);
    kv(out, "precision", c->precision);
    snprintf(b, sizeof b, "%" PRId64 " x %" PRId64 " x %" PRId64 " (ld %" PRId64 "/%" PRId64 "/%" PRId64 "/%" PRId64 ")",
             c->m, c->n, c->k, c->lda, c->ldb, c->ldc, c->ldd);
    kv(out, "M x N x K", b);
    snprintf(b, sizeof b, "%s, seed %" PRIu64, c->dist, c->seed);
    kv(out, "data", b);
    kv(out, "tolerance", c->tolerance);
    snprintf(b, sizeof b, "%" PRId64 " of %" PRId64 " (%.3g%%)", m->above_tol, m->count,
             m->count ? 100.0 * (double)m->above_tol / (double)m->count : 0.0);
    kv(out, "beyond tolerance", b);
    snprintf(b, sizeof b, "%.4g (probabilistic, &#955;=%.3g: %.4g)", m->max_ratio_det, m->lambda, m->max_ratio_prob);
    fprintf(out, "<tr><td>max |err|/bound</td><td>%s</td></tr>\n", b);   /* numbers only: no escaping needed */
    snprintf(b, sizeof b, "%.4g  (max abs %.3g, max rel %.3g, norm rel %.3g)", m->max_ulp, m->max_abs_err,
             m->max_rel_err, m->norm_rel_err);
    kv(out, "max ULP", b);
    snprintf(b, sizeof b, "(%" PRId64 ", %" PRId64 "): got %.9g, want %.9g", m->worst_i, m->worst_j, m->worst_got,
             m->worst_want);
    kv(out, "worst element", b);
    snprintf(b, sizeof b, "(%" PRId64 ", %" PRId64 ")", m->first_bad_i, m->first_bad_j);
    kv(out, "first bad element", b);
    snprintf(b, sizeof b, "NaN %" PRId64 ", Inf %" PRId64 ", unwritten %" PRId64 ", guard %" PRId64
                          ", inputs modified %" PRId64, m->nan_mismatch, m->inf_mismatch, c->n_unwritten, c->n_guard,
             c->n_input_modified);
    kv(out, "mismatches", b);
    fputs("</table></div></div></div>\n", out);
}

/* Failing cases grouped by precision x kernel: the largest case's card first (its heatmap
 * covers the most elements), the others folded into <details>. */
static void failures(FILE *out, const mmp_run *run)
{
    size_t n = run->n_cases, cards = 0;
    char *done = calloc(n ? n : 1, 1);
    if (!done) return;
    for (size_t i = 0; i < n; i++) {
        const mmp_case_result *c = &run->cases[i];
        if (done[i] || (c->verdict != MMP_VERDICT_FAIL && c->verdict != MMP_VERDICT_ERROR)) continue;
        size_t best = i, more = 0;
        for (size_t j = i; j < n; j++) {
            const mmp_case_result *d = &run->cases[j];
            if ((d->verdict != MMP_VERDICT_FAIL && d->verdict != MMP_VERDICT_ERROR) ||
                strcmp(d->kernel, c->kernel) != 0 || strcmp(d->precision, c->precision) != 0)
                continue;
            done[j] = 2;                             /* in this group */
            more++;
            const mmp_case_result *b = &run->cases[best];
            int better = (d->verdict == MMP_VERDICT_FAIL) > (b->verdict == MMP_VERDICT_FAIL) ||
                         ((d->verdict == MMP_VERDICT_FAIL) == (b->verdict == MMP_VERDICT_FAIL) && d->m * d->n > b->m * b->n);
            if (better) best = j;
        }
        if (cards++ < HTML_MAX_CARDS) failure_card(out, &run->cases[best]);
        if (more > 1) {
            fputs("<details><summary>", out);
            fprintf(out, "%zu more failing case%s of <code>", more - 1, more > 2 ? "s" : "");
            esc(out, c->kernel);
            fputs("</code> (", out);
            esc(out, c->precision);
            fputs(")</summary>\n", out);
        }
        for (size_t j = i; j < n; j++) {
            if (done[j] != 2) continue;
            done[j] = 1;
            if (j != best && cards++ < HTML_MAX_CARDS) failure_card(out, &run->cases[j]);
        }
        if (more > 1) fputs("</details>\n", out);
    }
    if (cards > HTML_MAX_CARDS)
        fprintf(out, "<p class=\"muted\">%zu more failing cases are listed in the table below.</p>\n", cards - HTML_MAX_CARDS);
    free(done);
}

/* Error vs K: one series per precision, norm-wise relative error of each PASS/FAIL case. */
static void error_vs_k(FILE *out, const mmp_run *run)
{
    size_t n = run->n_cases;
    if (!n) return;
    double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    int *bad = calloc(n, sizeof *bad);
    mmp_svg_series *s = calloc(n, sizeof *s);
    char *used = calloc(n, 1);
    size_t ns = 0, at = 0;
    for (size_t i = 0; x && y && bad && s && used && i < n; i++) {
        if (used[i]) continue;
        const char *prec = run->cases[i].precision;
        s[ns].name = prec;
        s[ns].x = x + at; s[ns].y = y + at; s[ns].bad = bad + at;
        for (size_t j = i; j < n; j++) {
            const mmp_case_result *c = &run->cases[j];
            if (used[j] || strcmp(c->precision, prec) != 0) continue;
            used[j] = 1;
            if (c->verdict != MMP_VERDICT_PASS && c->verdict != MMP_VERDICT_FAIL) continue;
            x[at] = (double)c->k;
            y[at] = c->metrics.norm_rel_err;
            bad[at] = c->verdict == MMP_VERDICT_FAIL;
            at++;
            s[ns].n++;
        }
        if (s[ns].n) ns++;
    }
    if (ns) mmp_svg_loglog(out, s, ns, "K (reduction length)", "||D~ - D||_F / ||D||_F");
    else fputs("<p class=\"muted\">no PASS/FAIL cases to plot</p>\n", out);
    free(x); free(y); free(bad); free(s); free(used);
}

void mmp_report_print_html(FILE *out, const mmp_run *run)
{
    int64_t counts[MMP_VERDICT_COUNT_];
    int code = mmp_report_counts(run, counts);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\n<title>mmaprobe ", out);
    esc(out, run->kind);
    fputs(" report</title>\n<style>", out);
    fputs(css, out);
    fputs("</style></head>\n<body><main>\n", out);
    const int probe_only = run->probes && run->n_cases == 0;   /* a probe document: no empty case sections */
    fprintf(out, "<div class=\"banner %s\"><h1>mmaprobe %s: %s</h1><div class=\"sub\">", code ? "bad" : "good",
            strcmp(run->kind, "probe") == 0 ? "probe" : "validate",
            probe_only ? "probe results" : code ? "failures found" : "all cases passed");
    if (!probe_only)
        fprintf(out, "%zu cases &#183; %" PRId64 " PASS &#183; %" PRId64 " FAIL &#183; %" PRId64 " ERROR &#183; %" PRId64
                     " SKIP &#183; ", run->n_cases, counts[0], counts[1], counts[2], counts[3]);
    esc(out, run->env.gpu);
    fprintf(out, " (sm_%d%d) &#183; suite ", run->env.cc_major, run->env.cc_minor);
    esc(out, run->suite[0] ? run->suite : "-");
    fputs(" &#183; git ", out);
    esc(out, run->env.git_sha[0] ? run->env.git_sha : "-");
    if (!run->complete && run->interrupted_by[0]) { fputs(" &#183; <b>PARTIAL (interrupted by ", out); esc(out, run->interrupted_by); fputs(")</b>", out); }
    else if (!run->complete) fputs(" &#183; <b>PARTIAL (the run could not go on)</b>", out);
    fputs("</div></div>\n", out);
    if (probe_only) {
        mmp_html_probes(out, run->probes);
        fputs("<h2>Environment</h2>\n", out);
        env_table(out, &run->env);
        fprintf(out, "<p class=\"muted\">mmaprobe probe document schema %d.%d &#183; rendered without a GPU from the JSON "
                     "document</p>\n</main></body></html>\n", run->schema_major, run->schema_minor);
        return;
    }
    fputs("<h2>Summary per precision &#215; kernel</h2>\n", out);
    summary_table(out, run);

    if (counts[MMP_VERDICT_FAIL] + counts[MMP_VERDICT_ERROR]) {
        fputs("<h2>Failures</h2>\n<p class=\"muted\">One card per precision &#215; kernel (its largest failing "
              "case); the other failing cases of the same kernel are folded below it.</p>\n", out);
        failures(out, run);
    }

    fputs("<h2>Error vs K per precision</h2>\n<div class=\"panel\">", out);
    error_vs_k(out, run);
    fputs("</div>\n<div class=\"panel\"><h3>|err|/bound over all compared elements</h3>\n", out);
    uint64_t hist[MMP_HIST_BINS] = {0};
    for (size_t i = 0; i < run->n_cases; i++)
        for (int b = 0; b < MMP_HIST_BINS; b++) hist[b] += run->cases[i].metrics.hist[b];
    mmp_svg_histogram(out, hist);
    fputs("</div>\n", out);

    if (run->probes) mmp_html_probes(out, run->probes);

    fputs("<h2>Environment</h2>\n", out);
    env_table(out, &run->env);
    for (size_t i = 0; i < run->n_shards; i++) {
        fprintf(out, "<details><summary>shard %zu environment</summary>\n", i);
        env_table(out, &run->shards[i]);
        fputs("</details>\n", out);
    }
    fprintf(out, "<h2>All cases</h2>\n<details%s><summary>%zu cases</summary>\n<table><tr><th>verdict</th><th>case ID</th>"
                 "<th>reasons</th><th>|err|/bound</th><th>max ULP</th><th>kernel ms</th></tr>\n",
            run->n_cases <= 40 ? " open=\"open\"" : "", run->n_cases);
    for (size_t i = 0; i < run->n_cases; i++) {
        const mmp_case_result *c = &run->cases[i];
        char reasons[512];
        mmp_reason_format(reasons, sizeof reasons, c->reasons);
        fputs("<tr><td>", out);
        chip(out, c->verdict);
        fputs("</td><td><code>", out);
        esc(out, c->id);
        fputs("</code></td><td>", out);
        esc(out, reasons);
        fprintf(out, "</td><td class=\"num\">%.3g</td><td class=\"num\">%.4g</td><td class=\"num\">%.4f</td></tr>\n",
                c->metrics.max_ratio_det, c->metrics.max_ulp, c->time_kernel_ms);
    }
    fprintf(out, "</table></details>\n<p class=\"muted\">mmaprobe run document schema %d.%d &#183; rendered without a GPU "
                 "from the JSON report</p>\n</main></body></html>\n", run->schema_major, run->schema_minor);
}
