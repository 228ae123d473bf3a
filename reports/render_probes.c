/* render_probes.c — the HTML report's probe pictures, from the typed results (probe.h):
 *   layout: a lane grid per fragment (T<lane>, r<register>), cells differing from the PTX ISA
 *           documentation outlined in red;
 *   memory: render_memory.c (lane -> bank grids, bank maps, counters beside the model).
 * The compact tables of every group (text, Markdown, HTML) are render_probe_tables.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#define MAX_PICTURES 48   /* per group: the rest are counted */

static void esc(FILE *out, const char *s) { mmp_xml_escape(out, s); }

static void lane_color(char *buf, size_t size, int64_t lane)
{
    /* 8 hues x 4 lightness steps: neighbouring lanes differ in hue, groups of 8 in lightness */
    snprintf(buf, size, "hsl(%d,62%%,%d%%)", (int)((lane % 8) * 45), 78 - (int)((lane / 8) % 4) * 12);
}

static void fragment_picture(FILE *out, const mmp_layout_result *cap, const mmp_layout_frag_result *fr)
{
    int64_t rows = fr->frag.rows, cols = fr->frag.cols;
    if (rows < 1 || cols < 1 || rows > 256 || cols > 256 || !fr->owner) {
        fputs("<p class=\"muted\">(a fragment without rows, cols and an owner grid)</p>\n", out);
        return;
    }
    double cs = 560.0 / (double)(cols > rows ? cols : rows);
    if (cs > 34) cs = 34;
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, cap->id);
    fputs(" &#8212; ", out);
    esc(out, fr->frag.name);
    fputs("</h3><div class=\"muted\">", out);
    esc(out, cap->instruction);
    fputs(" &#183; ", out);
    esc(out, mmp_layout_verdict_name(cap->consistent, cap->documented, cap->differences));
    if (fr->rep.n_diffs) fprintf(out, " &#183; <b>%d elements differ from the PTX ISA</b> (red)", fr->rep.n_diffs);
    fprintf(out, "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", cs * (double)cols + 30,
            cs * (double)rows + 20);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t l = fr->owner[r * cols + c], g = fr->reg ? fr->reg[r * cols + c] : -1;
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
    for (int d = 0; d < fr->rep.n_diffs && d < MMP_LAYOUT_MAX_DIFFS; d++) {
        int64_t r = fr->rep.diffs[d].row, c = fr->rep.diffs[d].col;
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

static void layout_group(FILE *out, const mmp_layout_results *L)
{
    fputs("<h3>Fragment layouts (which lane and register hold each element)</h3>\n", out);
    size_t drawn = 0, total = 0;
    for (size_t i = 0; i < L->n; i++)
        for (int f = 0; f < L->items[i].n_frags; f++, total++)
            if (drawn < MAX_PICTURES) {
                fragment_picture(out, &L->items[i], &L->items[i].frags[f]);
                drawn++;
            }
    if (total > drawn) fprintf(out, "<p class=\"muted\">%zu more fragments in the JSON document.</p>\n", total - drawn);
}

void mmp_html_probes(FILE *out, const mmp_probe_results *p)
{
    fputs("<h2>Probes</h2>\n", out);
    mmp_probe_tables(out, p, MMP_PROBE_TABLE_HTML);
    if (p->layout.present) layout_group(out, &p->layout);
    if (p->memory.present) mmp_html_memory(out, &p->memory);
}
