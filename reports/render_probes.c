/* render_probes.c — the HTML report's probe section. It draws what it recognises of the probe
 * modules' JSON (probes/layout_print.c, probes/memory.c) and shows anything else as JSON text;
 * absent or malformed members are skipped or noted, never fatal (reports/README.md):
 *   "layout": {"captures": [{"id", "verdict", "fragments": [{"name", "rows", "cols",
 *              "owner": [[lane]], "reg": [[register]], "diffs": [{"row", "col", ...}]}]}]}
 *              -> a lane grid per fragment (T<lane>, r<register>), cells differing from the
 *                 PTX ISA documentation outlined in red;
 *   "memory": {"kernels": [{"analysis": {"kernel", "bank_words": [32], "smem_wavefronts",
 *              "smem_ideal", "worst_ways", "worst_label", "gmem_efficiency"}}]}
 *              -> a bank map: words per shared-memory bank in one K step against the even share.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/json.h"
#include "render.h"

#define MAX_PICTURES 48   /* per group: the rest are counted */

static void esc(FILE *out, const char *s) { mmp_xml_escape(out, s); }

static const mmp_json *member(const mmp_json *o, const char *k, mmp_json_type t)
{
    const mmp_json *v = mmp_json_get(o, k);
    return v && v->type == t ? v : NULL;
}

static const char *str(const mmp_json *o, const char *k)
{
    const mmp_json *v = member(o, k, MMP_JSON_STRING);
    return v ? v->str : NULL;
}

static int64_t num(const mmp_json *o, const char *k, int64_t dflt)
{
    int64_t x;
    return mmp_json_int64(&x, mmp_json_get(o, k)) == 0 ? x : dflt;
}

/* v[r][c] of a rows x cols array of arrays of integers, or dflt */
static int64_t cell(const mmp_json *grid, int64_t r, int64_t c, int64_t dflt)
{
    if (!grid || (size_t)r >= grid->n || grid->items[r]->type != MMP_JSON_ARRAY || (size_t)c >= grid->items[r]->n)
        return dflt;
    int64_t x;
    return mmp_json_int64(&x, grid->items[r]->items[c]) == 0 ? x : dflt;
}

static void lane_color(char *buf, size_t size, int64_t lane)
{
    /* 8 hues x 4 lightness steps: neighbouring lanes differ in hue, groups of 8 in lightness */
    snprintf(buf, size, "hsl(%d,62%%,%d%%)", (int)((lane % 8) * 45), 78 - (int)((lane / 8) % 4) * 12);
}

static void fragment_picture(FILE *out, const mmp_json *cap, const mmp_json *fr)
{
    int64_t rows = num(fr, "rows", 0), cols = num(fr, "cols", 0);
    const mmp_json *owner = member(fr, "owner", MMP_JSON_ARRAY), *reg = member(fr, "reg", MMP_JSON_ARRAY);
    const mmp_json *diffs = member(fr, "diffs", MMP_JSON_ARRAY);
    if (rows < 1 || cols < 1 || rows > 256 || cols > 256 || !owner) {
        fputs("<p class=\"muted\">(a fragment without rows, cols and an \"owner\" grid)</p>\n", out);
        return;
    }
    double cs = 560.0 / (double)(cols > rows ? cols : rows);
    if (cs > 34) cs = 34;
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, str(cap, "id") ? str(cap, "id") : "capture");
    fputs(" &#8212; ", out);
    esc(out, str(fr, "name") ? str(fr, "name") : "fragment");
    fputs("</h3><div class=\"muted\">", out);
    if (str(cap, "instruction")) esc(out, str(cap, "instruction"));
    if (str(cap, "verdict")) { fputs(" &#183; ", out); esc(out, str(cap, "verdict")); }
    if (diffs && diffs->n) fprintf(out, " &#183; <b>%zu elements differ from the PTX ISA</b> (red)", diffs->n);
    fprintf(out, "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", cs * (double)cols + 30,
            cs * (double)rows + 20);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t l = cell(owner, r, c, -1), g = cell(reg, r, c, -1);
            char col[40];
            if (l >= 0) lane_color(col, sizeof col, l);
            else snprintf(col, sizeof col, "#ddd");
            double x = 26 + (double)c * cs, y = 16 + (double)r * cs;
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"/>", x, y,
                    cs, cs, col);
            if (cs >= 20 && l >= 0)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\">T%" PRId64 "</text>",
                        x + cs / 2, y + cs / 2 + (g >= 0 ? -1 : 3), cs / 3.2, l);
            if (cs >= 20 && g >= 0)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\" fill=\"#333\">r%" PRId64 "</text>",
                        x + cs / 2, y + cs - 3, cs / 4, g);
            fputc('\n', out);
        }
    for (size_t d = 0; diffs && d < diffs->n; d++) {
        int64_t r = num(diffs->items[d], "row", -1), c = num(diffs->items[d], "col", -1);
        if (r < 0 || c < 0 || r >= rows || c >= cols) continue;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2.5\"/>\n",
                26 + (double)c * cs + 1, 16 + (double)r * cs + 1, cs - 2, cs - 2);
    }
    for (int64_t c = 0; c < cols; c += (cols > 16 ? 8 : 4))
        fprintf(out, "<text x=\"%.1f\" y=\"11\" class=\"tick\" text-anchor=\"middle\">%" PRId64 "</text>", 26 + (double)c * cs + cs / 2, c);
    for (int64_t r = 0; r < rows; r += (rows > 16 ? 8 : 4))
        fprintf(out, "<text x=\"20\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%" PRId64 "</text>", 16 + (double)r * cs + cs / 2 + 4, r);
    fputs("</svg></div>\n", out);
}

static void layout_group(FILE *out, const mmp_json *v)
{
    const mmp_json *caps = member(v, "captures", MMP_JSON_ARRAY);
    if (!caps) { fputs("<p class=\"muted\">(layout results without a \"captures\" array)</p>\n", out); return; }
    fputs("<h3>Fragment layouts (which lane and register hold each element)</h3>\n", out);
    size_t drawn = 0, total = 0;
    for (size_t i = 0; i < caps->n; i++) {
        const mmp_json *frs = member(caps->items[i], "fragments", MMP_JSON_ARRAY);
        for (size_t f = 0; frs && f < frs->n; f++, total++)
            if (drawn < MAX_PICTURES && frs->items[f]->type == MMP_JSON_OBJECT) {
                fragment_picture(out, caps->items[i], frs->items[f]);
                drawn++;
            }
    }
    if (total > drawn) fprintf(out, "<p class=\"muted\">%zu more fragments in the JSON document.</p>\n", total - drawn);
}

static void bank_map(FILE *out, const mmp_json *a)
{
    const mmp_json *bw = member(a, "bank_words", MMP_JSON_ARRAY);
    if (!bw || bw->n != 32) { fputs("<p class=\"muted\">(a memory analysis without 32 \"bank_words\")</p>\n", out); return; }
    int64_t w[32], max = 1, sum = 0;
    for (int b = 0; b < 32; b++) {
        if (mmp_json_int64(&w[b], bw->items[b]) || w[b] < 0) w[b] = 0;
        if (w[b] > max) max = w[b];
        sum += w[b];
    }
    double share = (double)sum / 32.0;
    const double bwid = 16, h = 110, left = 36, top = 8;
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, str(a, "kernel") ? str(a, "kernel") : "kernel");
    fputs("</h3><div class=\"muted\">", out);
    int64_t wf = num(a, "smem_wavefronts", -1), ideal = num(a, "smem_ideal", -1), ways = num(a, "worst_ways", -1);
    if (wf >= 0) fprintf(out, "shared: %" PRId64 " wavefronts per K step", wf);
    if (ideal >= 0) fprintf(out, " (ideal %" PRId64 ")", ideal);
    if (ways > 1) {
        fprintf(out, " &#183; <b>worst %" PRId64 "-way conflict</b>", ways);
        if (str(a, "worst_label")) { fputs(" in ", out); esc(out, str(a, "worst_label")); }
    }
    double eff;
    if (mmp_json_double(&eff, mmp_json_get(a, "gmem_efficiency")) == 0) fprintf(out, " &#183; global efficiency %.0f%%", 100 * eff);
    fprintf(out, "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", left + 32 * bwid + 10, top + h + 34);
    for (int b = 0; b < 32; b++) {
        double bh = h * (double)w[b] / (double)max;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>bank %d: %" PRId64
                     " words</title></rect>",
                left + b * bwid + 1, top + h - bh, bwid - 2, bh, (double)w[b] > 1.5 * share ? "#c0392b" : "#4a7fc1", b, w[b]);
        if (b % 4 == 0)
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%d</text>", left + b * bwid + bwid / 2,
                    top + h + 13, b);
        fputc('\n', out);
    }
    double sy = top + h - h * share / (double)max;
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%" PRId64 "</text>"
                 "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\">bank (words per bank in one K step; dashed: even share)</text>\n",
            left, left + 32 * bwid, sy, sy, left - 4, top + 8, max, left, top + h + 28);
    fputs("</svg></div>\n", out);
}

static void memory_group(FILE *out, const mmp_json *v)
{
    const mmp_json *ks = member(v, "kernels", MMP_JSON_ARRAY);
    if (!ks) { fputs("<p class=\"muted\">(memory results without a \"kernels\" array)</p>\n", out); return; }
    fputs("<h3>Shared-memory bank maps</h3>\n", out);
    for (size_t i = 0; i < ks->n && i < MAX_PICTURES; i++) {
        const mmp_json *a = member(ks->items[i], "analysis", MMP_JSON_OBJECT);
        if (a) bank_map(out, a);
        else fputs("<p class=\"muted\">(a kernel entry without an \"analysis\" object)</p>\n", out);
    }
    if (ks->n > MAX_PICTURES) fprintf(out, "<p class=\"muted\">%zu more kernels in the JSON document.</p>\n", ks->n - MAX_PICTURES);
}

void mmp_html_probes(FILE *out, const char *text)
{
    mmp_json *p = NULL;
    if (mmp_json_parse(&p, text, strlen(text), "probes") != MMP_STATUS_OK || p->type != MMP_JSON_OBJECT) {
        fputs("<p class=\"muted\">(probe results could not be read)</p>\n", out);
        mmp_json_free(p);
        return;
    }
    fputs("<h2>Probes</h2>\n", out);
    for (size_t i = 0; i < p->n; i++) {
        const char *k = p->keys[i];
        const mmp_json *v = p->items[i];
        if (v->type == MMP_JSON_NULL) continue;
        if (strcmp(k, "layout") == 0 && v->type == MMP_JSON_OBJECT) { layout_group(out, v); continue; }
        if (strcmp(k, "memory") == 0 && v->type == MMP_JSON_OBJECT) { memory_group(out, v); continue; }
        fputs("<details><summary>", out);
        esc(out, k);
        fputs(" (JSON)</summary><pre class=\"msg\">", out);
        size_t len = v->src_len > 8192 ? 8192 : v->src_len;
        char *raw = strndup(text + v->src_off, len);
        if (raw) esc(out, raw);
        free(raw);
        fprintf(out, "%s</pre></details>\n", v->src_len > len ? "\n..." : "");
    }
    mmp_json_free(p);
}
