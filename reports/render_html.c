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
#include "reports/json.h"
#include "reports/render.h"

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
    if (mmp_report_summarize(&rows, &n, run) != MMP_STATUS_OK) return;
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
    fputs("<div class=\"row\">\n", out);
    if (m->heat_rows > 0 && m->heat_cols > 0) {
        fprintf(out, "<div><div class=\"muted\">max |err|/bound per block of %" PRId64 "&#215;%" PRId64
                     " elements (%d&#215;%d blocks)</div>\n",
                (c->m + m->heat_rows - 1) / m->heat_rows, (c->n + m->heat_cols - 1) / m->heat_cols, m->heat_rows,
                m->heat_cols);
        mmp_svg_heatmap(out, m->heat, m->heat_rows, m->heat_cols, c->m, c->n);
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

/* ---- probes: what is recognised is drawn, anything else is shown as JSON text ---- */

static int json_int(const mmp_json *o, const char *k, int64_t *v) { return mmp_json_int64(v, mmp_json_get(o, k)); }
static const char *json_str(const mmp_json *o, const char *k)
{
    const mmp_json *v = mmp_json_get(o, k);
    return v && v->type == MMP_JSON_STRING ? v->str : NULL;
}

static void lane_color(char *buf, size_t size, int64_t lane)
{
    /* 32 lanes: 8 hues x 4 lightness steps, neighbours differ */
    snprintf(buf, size, "hsl(%d,62%%,%d%%)", (int)((lane % 8) * 45), 78 - (int)((lane / 8) % 4) * 12);
}

static void layout_picture(FILE *out, const mmp_json *it)
{
    int64_t rows, cols;
    const mmp_json *lane = mmp_json_get(it, "lane"), *reg = mmp_json_get(it, "reg");
    if (it->type != MMP_JSON_OBJECT || json_int(it, "rows", &rows) || json_int(it, "cols", &cols) || rows < 1 ||
        cols < 1 || rows > 256 || cols > 256 || !lane || lane->type != MMP_JSON_ARRAY ||
        lane->n != (size_t)(rows * cols)) {
        fputs("<p class=\"muted\">(a layout entry without rows, cols and a rows*cols \"lane\" array)</p>\n", out);
        return;
    }
    if (reg && (reg->type != MMP_JSON_ARRAY || reg->n != lane->n)) reg = NULL;
    double cs = 560.0 / (double)(cols > rows ? cols : rows);
    if (cs > 34) cs = 34;
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, json_str(it, "name") ? json_str(it, "name") : "fragment layout");
    fputs("</h3>", out);
    if (json_str(it, "note")) { fputs("<div class=\"muted\">", out); esc(out, json_str(it, "note")); fputs("</div>", out); }
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", cs * cols + 30,
            cs * rows + 20);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t l = -1, g = -1;
            mmp_json_int64(&l, lane->items[r * cols + c]);
            if (reg) mmp_json_int64(&g, reg->items[r * cols + c]);
            char col[40];
            if (l >= 0) lane_color(col, sizeof col, l);
            else snprintf(col, sizeof col, "#ddd");
            double x = 26 + c * cs, y = 16 + r * cs;
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"/>", x, y,
                    cs, cs, col);
            if (cs >= 20 && l >= 0)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\">T%" PRId64 "%s</text>",
                        x + cs / 2, y + cs / 2 + (g >= 0 ? -1 : 3), cs / 3.2, l, "");
            if (cs >= 20 && g >= 0)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\" fill=\"#333\">r%" PRId64 "</text>",
                        x + cs / 2, y + cs - 3, cs / 4, g);
            fputc('\n', out);
        }
    for (int64_t c = 0; c < cols; c += (cols > 16 ? 8 : 4))
        fprintf(out, "<text x=\"%.1f\" y=\"11\" class=\"tick\" text-anchor=\"middle\">%" PRId64 "</text>", 26 + c * cs + cs / 2, c);
    for (int64_t r = 0; r < rows; r += (rows > 16 ? 8 : 4))
        fprintf(out, "<text x=\"20\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%" PRId64 "</text>", 16 + r * cs + cs / 2 + 4, r);
    fputs("</svg></div>\n", out);
}

static void bank_map(FILE *out, const mmp_json *it)
{
    const mmp_json *banks = mmp_json_get(it, "banks");
    if (it->type != MMP_JSON_OBJECT || !banks || banks->type != MMP_JSON_ARRAY || banks->n == 0 || banks->n > 64) {
        fputs("<p class=\"muted\">(a memory entry without a \"banks\" array of lane lists)</p>\n", out);
        return;
    }
    size_t depth = 1;
    for (size_t b = 0; b < banks->n; b++)
        if (banks->items[b]->type == MMP_JSON_ARRAY && banks->items[b]->n > depth) depth = banks->items[b]->n;
    if (depth > 32) depth = 32;
    const double cw = 17, ch = 15;
    int64_t wf = -1, ideal = -1;
    json_int(it, "wavefronts", &wf);
    json_int(it, "ideal", &ideal);
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, json_str(it, "name") ? json_str(it, "name") : "bank map");
    fputs("</h3><div class=\"muted\">", out);
    if (wf >= 0) fprintf(out, "%" PRId64 " wavefront%s", wf, wf == 1 ? "" : "s");
    if (ideal >= 0) fprintf(out, " (ideal %" PRId64 ")%s", ideal, wf > ideal ? " &#8212; bank conflicts" : "");
    fprintf(out, "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n",
            40 + cw * (double)banks->n, 24 + ch * (double)depth);
    for (size_t b = 0; b < banks->n; b++) {
        const mmp_json *l = banks->items[b];
        if (b % 4 == 0)
            fprintf(out, "<text x=\"%.1f\" y=\"10\" class=\"tick\" text-anchor=\"middle\">%zu</text>", 36 + cw * b + cw / 2, b);
        size_t nl = l->type == MMP_JSON_ARRAY ? l->n : 0;
        for (size_t d = 0; d < depth; d++) {
            double x = 36 + cw * (double)b, y = 14 + ch * (double)d;
            int64_t lane = -1;
            if (d < nl) mmp_json_int64(&lane, l->items[d]);
            char col[40];
            if (d >= nl) snprintf(col, sizeof col, "#f3f4f6");
            else if (lane >= 0) lane_color(col, sizeof col, lane);
            else snprintf(col, sizeof col, "#bbb");
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"%s\"/>", x, y, cw - 1,
                    ch - 1, col, d > 0 && d < nl ? "#c0392b" : "#fff");
            if (d < nl && lane >= 0)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" text-anchor=\"middle\">%" PRId64 "</text>", x + cw / 2 - 0.5,
                        y + ch - 4, lane);
        }
        fputc('\n', out);
    }
    fprintf(out, "<text x=\"30\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">1</text>", 14 + ch - 4);
    fputs("</svg><div class=\"muted\">columns: the 32 shared-memory banks; each row one more lane (number) "
          "whose address falls in that bank: rows below the first are serialised (conflicts, red edges)</div></div>\n", out);
}

static void probes_section(FILE *out, const char *text)
{
    mmp_json *p;
    if (mmp_json_parse(&p, text, strlen(text), "probes") != MMP_STATUS_OK || p->type != MMP_JSON_OBJECT) {
        fputs("<p class=\"muted\">(probe results could not be read)</p>\n", out);
        if (p) mmp_json_free(p);
        return;
    }
    fputs("<h2>Probes</h2>\n", out);
    for (size_t i = 0; i < p->n; i++) {
        const char *k = p->keys[i];
        const mmp_json *v = p->items[i];
        int layout = strcmp(k, "layout") == 0, memory = strcmp(k, "memory") == 0;
        if ((layout || memory) && v->type == MMP_JSON_ARRAY) {
            fprintf(out, "<h3>%s</h3>\n", layout ? "Fragment layouts (which lane holds each element)" : "Shared-memory bank maps");
            for (size_t j = 0; j < v->n; j++) (layout ? layout_picture : bank_map)(out, v->items[j]);
            continue;
        }
        fputs("<details><summary>", out);
        esc(out, k);
        fputs("</summary><pre class=\"msg\">", out);
        size_t len = v->src_len > 8192 ? 8192 : v->src_len;
        char *raw = strndup(text + v->src_off, len);
        if (raw) esc(out, raw);
        free(raw);
        fprintf(out, "%s</pre></details>\n", v->src_len > len ? "\n..." : "");
    }
    mmp_json_free(p);
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
    fprintf(out, "<div class=\"banner %s\"><h1>mmaprobe %s: %s</h1><div class=\"sub\">", code ? "bad" : "good",
            strcmp(run->kind, "probe") == 0 ? "probe" : "validate", code ? "failures found" : "all cases passed");
    fprintf(out, "%zu cases &#183; %" PRId64 " PASS &#183; %" PRId64 " FAIL &#183; %" PRId64 " ERROR &#183; %" PRId64
                 " SKIP &#183; ", run->n_cases, counts[0], counts[1], counts[2], counts[3]);
    esc(out, run->env.gpu);
    fprintf(out, " (sm_%d%d) &#183; suite ", run->env.cc_major, run->env.cc_minor);
    esc(out, run->suite[0] ? run->suite : "-");
    fputs(" &#183; git ", out);
    esc(out, run->env.git_sha[0] ? run->env.git_sha : "-");
    if (!run->complete) { fputs(" &#183; <b>PARTIAL (interrupted by ", out); esc(out, run->interrupted_by); fputs(")</b>", out); }
    fputs("</div></div>\n<h2>Summary per precision &#215; kernel</h2>\n", out);
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

    if (run->probes_json) probes_section(out, run->probes_json);

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
