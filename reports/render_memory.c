/* render_memory.c — the HTML report's memory-probe pictures, from the typed results (memory.h):
 *   - lane -> bank grids: for the worst request of an access site (kept by the analysis), one
 *     row per wavefront and one column per bank, each cell the lane (T<n>) the bank serves in
 *     that wavefront; a phase needing more than one wavefront is a bank conflict, its extra
 *     rows flagged in red, so a 4-way conflict shows 4 rows with the lanes stacked per column
 *     and a conflict-free (swizzled) layout one row per phase;
 *   - the bank map: words per bank over one K step against the even share;
 *   - measured beside the model: where counters were read (CUPTI, Nsight Compute), a table and
 *     a small bar figure per kernel: shared-load wavefronts and global sectors, ideal, model and
 *     measured, per CTA per K step.
 * Figures are the typed results'; the grid is laid out from the request's lane words by
 * mmp_memory_request_grid, the rule the analysis itself applies. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/memory.h"
#include "render.h"

#define MAX_KERNELS 48        /* kernels drawn: the rest are counted */
#define GRIDS_PER_KERNEL 3

static void esc(FILE *out, const char *s) { mmp_xml_escape(out, s); }

static void lane_fill(char *buf, size_t size, int lane)
{
    /* the fragment grids' palette: neighbouring lanes differ in hue, groups of 8 in lightness */
    snprintf(buf, size, "hsl(%d,62%%,%d%%)", (lane % 8) * 45, 78 - (lane / 8 % 4) * 12);
}

static void request_grid(FILE *out, const mmp_memory_request *q)
{
    mmp_memory_grid g;
    if (mmp_memory_request_grid(&g, q) != MMP_STATUS_OK || g.wavefronts < 1) {
        fputs("<p class=\"muted\">(a request whose grid cannot be laid out)</p>\n", out);
        return;
    }
    const double cw = 19, ch = 17, left = 92, top = 24;
    int first_of_phase[MMP_MEMORY_GRID_MAX];
    for (int r = 0; r < g.wavefronts; r++) first_of_phase[r] = r == 0 || g.phase[r] != g.phase[r - 1];
    fputs("<div class=\"bankgrid\"><div class=\"muted\">", out);
    esc(out, q->label);
    fprintf(out, " (warp %d): <b>%d wavefronts</b> in %d phase%s, ", (int)q->warp, (int)g.wavefronts, (int)g.phases,
            g.phases == 1 ? "" : "s");
    if (q->ways > 1) fprintf(out, "<b style=\"color:#c0392b\">%d-way bank conflict</b></div>\n", (int)q->ways);
    else fputs("conflict-free</div>\n", out);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
                 "aria-label=\"lanes by bank and wavefront\">\n",
            left + 32 * cw + 8, top + g.wavefronts * ch + 22);
    for (int b = 0; b < 32; b += 4)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%d</text>", left + b * cw + cw / 2,
                top - 6, b);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">bank</text>\n", left - 4, top - 6);
    for (int r = 0; r < g.wavefronts; r++) {
        double y = top + r * ch;
        int extra = !first_of_phase[r];
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\"%s>wf %d &#183; ph %d</text>", left - 4,
                y + ch - 4, extra ? " fill=\"#c0392b\"" : "", r, (int)g.phase[r]);
        for (int b = 0; b < 32; b++) {
            uint32_t m = g.lanes[r][b];
            double x = left + b * cw;
            if (!m) {
                fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f2f3f5\" stroke=\"#fff\"/>", x, y,
                        cw, ch);
                continue;
            }
            int lane = 0, n = 0;
            while (!(m >> lane & 1)) lane++;
            for (uint32_t t = m; t; t &= t - 1) n++;
            char col[40];
            lane_fill(col, sizeof col, lane);
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"><title>bank %d, "
                         "wavefront %d: lane %d%s</title></rect>",
                    x, y, cw, ch, col, b, r, lane, n > 1 ? " and others (one word: broadcast)" : "");
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8.5\" text-anchor=\"middle\">%d%s</text>", x + cw / 2,
                    y + ch - 5, lane, n > 1 ? "+" : "");
        }
        if (first_of_phase[r] && r)
            fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-width=\"1.5\"/>", left,
                    left + 32 * cw, y, y);
        if (extra)   /* a conflict: this phase needs another pass over the banks */
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#c0392b\" "
                         "stroke-width=\"1.2\"/>",
                    left, y + 0.6, 32 * cw, ch - 1.2);
        fputc('\n', out);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\">cell: the lane a bank serves in that wavefront (+: several "
                 "lanes, one word); red rows: conflict wavefronts</text>\n",
            left - 88, top + g.wavefronts * ch + 16);
    fputs("</svg></div>\n", out);
}

static void bank_map(FILE *out, const mmp_memory_report *a)
{
    int64_t w[32], max = 1, sum = 0;
    for (int b = 0; b < 32; b++) {
        w[b] = a->bank_words[b] < 0 ? 0 : a->bank_words[b];
        if (w[b] > max) max = w[b];
        sum += w[b];
    }
    double share = (double)sum / 32.0;
    const double bwid = 16, h = 70, left = 36, top = 8;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", left + 32 * bwid + 10, top + h + 34);
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
                 "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\">words per bank in one K step (dashed: even share)</text>\n",
            left, left + 32 * bwid, sy, sy, left - 4, top + 8, max, left, top + h + 28);
    fputs("</svg>\n", out);
}

/* The sites drawn: every one with a conflict (worst first kept in order), or, when there is
 * none, the first load site (else the first site): at most GRIDS_PER_KERNEL. */
static int pick_requests(const mmp_memory_report *a, int pick[GRIDS_PER_KERNEL])
{
    int n = 0;
    for (int s = 0; s < a->n_requests && s < MMP_MEMORY_MAX_SITES && n < GRIDS_PER_KERNEL; s++)
        if (a->requests[s].ways > 1) pick[n++] = s;
    if (n || a->n_requests < 1) return n;
    for (int s = 0; s < a->n_requests && s < MMP_MEMORY_MAX_SITES; s++) {
        int k = a->requests[s].kind;
        if (k == MMP_ACCESS_LDS || k == MMP_ACCESS_LDSM || k == MMP_ACCESS_LDSM_T) { pick[0] = s; return 1; }
    }
    pick[0] = 0;
    return 1;
}

static void kernel_panel(FILE *out, const mmp_memory_report *a)
{
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, a->kernel);
    fputs("</h3><div class=\"muted\">", out);
    fprintf(out, "shared: %" PRId64 " wavefronts per K step (ideal %" PRId64 ")", a->smem_wavefronts, a->smem_ideal);
    if (a->worst_ways > 1) {
        fprintf(out, " &#183; <b>worst %d-way conflict</b>", (int)a->worst_ways);
        if (a->worst_label[0]) { fputs(" in ", out); esc(out, a->worst_label); }
    }
    if (a->gmem_efficiency == a->gmem_efficiency) fprintf(out, " &#183; global efficiency %.0f%%", 100 * a->gmem_efficiency);
    fputs("</div>\n", out);
    int pick[GRIDS_PER_KERNEL], n = pick_requests(a, pick);
    for (int i = 0; i < n; i++) request_grid(out, &a->requests[pick[i]]);
    if (!n) fputs("<div class=\"muted\">(no request recorded in this document: no lane grid)</div>\n", out);
    bank_map(out, a);
    fputs("</div>\n", out);
}

/* ---- measured beside the model ---- */

static void fmt(char *b, size_t n, double x)
{
    if (isnan(x)) snprintf(b, n, "&#8212;");
    else snprintf(b, n, "%.1f", x);
}

static const char *tri(int v) { return v < 0 ? "not measured" : v ? "agree" : "<b style=\"color:#c0392b\">DISAGREE</b>"; }

static void counters_table(FILE *out, const mmp_memory_results *M)
{
    fputs("<table>\n<tr><th>kernel</th><th>method</th><th>smem load wavefronts: ideal</th><th>model</th><th>measured</th>"
          "<th>conflict wavefronts: model</th><th>measured</th><th>global sectors: ideal</th><th>model</th>"
          "<th>measured</th><th>agree (shared / global)</th></tr>\n",
          out);
    for (size_t i = 0; i < M->n_kernels; i++) {
        const mmp_memory_kernel_result *k = &M->kernels[i];
        if (!k->measured) continue;
        const mmp_memory_report *a = &k->analysis;
        char b[6][32];
        fmt(b[0], sizeof b[0], k->smem_ld_wavefronts);
        fmt(b[1], sizeof b[1], k->smem_ld_wavefronts - (double)a->smem_ld_ideal);
        fmt(b[2], sizeof b[2], k->gmem_sectors);
        fputs("<tr><td>", out);
        esc(out, a->kernel);
        fputs("</td><td>", out);
        esc(out, k->method);
        fprintf(out, "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%s</td><td>%" PRId64 "</td><td>%s</td><td>%" PRId64
                     "</td><td>%" PRId64 "</td><td>%s</td><td>%s / %s</td></tr>\n",
                a->smem_ld_ideal, a->smem_ld_wavefronts, b[0], a->smem_ld_wavefronts - a->smem_ld_ideal, b[1], a->gmem_ideal,
                k->gmem_model, b[2], tri(k->agree), tri(k->gmem_agree));
    }
    fputs("</table>\n", out);
}

/* One group of bars (ideal, model, measured) scaled to top; value printed above each. */
static void bar_group(FILE *out, double x, double base, double h, double top, const char *title, double ideal, double model,
                      double measured, int agree)
{
    static const char *const fill[3] = {"#b8bec8", "#4a7fc1", "#e07b1f"};
    double v[3] = {ideal, model, measured};
    for (int i = 0; i < 3; i++) {
        double bx = x + i * 34;
        if (isnan(v[i])) {
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">n/a</text>", bx + 14, base - 3);
            continue;
        }
        double bh = top > 0 ? h * v[i] / top : 0;
        int off = i == 2 && agree == 0;   /* a measurement outside the model's tolerance */
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"%.1f\" fill=\"%s\"%s/>"
                     "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\"%s>%.0f</text>",
                bx, base - bh, bh, fill[i], off ? " stroke=\"#c0392b\" stroke-width=\"2.5\"" : "", bx + 14, base - bh - 3,
                off ? " fill=\"#c0392b\" font-weight=\"bold\"" : "", v[i]);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", x + 48, base + 13, title);
}

static void counters_figure(FILE *out, const mmp_memory_kernel_result *k)
{
    const mmp_memory_report *a = &k->analysis;
    const double h = 80, base = 104, w = 276;
    double top_s = fmax(fmax((double)a->smem_ld_ideal, (double)a->smem_ld_wavefronts), isnan(k->smem_ld_wavefronts) ? 0 : k->smem_ld_wavefronts);
    double top_g = fmax(fmax((double)a->gmem_ideal, (double)k->gmem_model), isnan(k->gmem_sectors) ? 0 : k->gmem_sectors);
    fputs("<div class=\"panel\"><h3>", out);
    esc(out, a->kernel);
    fputs("</h3>", out);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
                 "aria-label=\"measured beside the model\">\n",
            w, base + 34);
    bar_group(out, 22, base, h, top_s, "shared-load wavefronts", (double)a->smem_ld_ideal, (double)a->smem_ld_wavefronts,
              k->smem_ld_wavefronts, k->agree);
    bar_group(out, 160, base, h, top_g, "global sectors", (double)a->gmem_ideal, (double)k->gmem_model, k->gmem_sectors,
              k->gmem_agree);
    fprintf(out, "<line x1=\"4\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>", w - 4, base, base);
    fputs("<rect x=\"10\" y=\"126\" width=\"9\" height=\"9\" fill=\"#b8bec8\"/><text x=\"22\" y=\"134\" class=\"tick\">ideal</text>"
          "<rect x=\"62\" y=\"126\" width=\"9\" height=\"9\" fill=\"#4a7fc1\"/><text x=\"74\" y=\"134\" class=\"tick\">model</text>"
          "<rect x=\"118\" y=\"126\" width=\"9\" height=\"9\" fill=\"#e07b1f\"/><text x=\"130\" y=\"134\" class=\"tick\">measured (",
          out);
    esc(out, k->method);
    fputs(")</text>\n</svg></div>\n", out);
}

void mmp_html_memory(FILE *out, const mmp_memory_results *M)
{
    size_t measured = 0;
    for (size_t i = 0; i < M->n_kernels; i++) measured += M->kernels[i].measured != 0;
    if (measured) {
        fputs("<h3>Counters measured beside the model (per CTA per K step)</h3>\n<p class=\"muted\">method: ", out);
        esc(out, M->method);
        fputs(" &#183; conflict wavefronts = shared-load wavefronts less the ideal (one per phase)</p>\n", out);
        counters_table(out, M);
        size_t drawn = 0;
        for (size_t i = 0; i < M->n_kernels && drawn < MAX_KERNELS; i++)
            if (M->kernels[i].measured) { counters_figure(out, &M->kernels[i]); drawn++; }
        if (measured > drawn) fprintf(out, "<p class=\"muted\">%zu more measured kernels in the table.</p>\n", measured - drawn);
    }
    fputs("<h3>Shared-memory bank maps: lanes by bank and wavefront, words per bank</h3>\n", out);
    for (size_t i = 0; i < M->n_kernels && i < MAX_KERNELS; i++) kernel_panel(out, &M->kernels[i].analysis);
    if (M->n_kernels > MAX_KERNELS)
        fprintf(out, "<p class=\"muted\">%zu more kernels in the JSON document.</p>\n", M->n_kernels - MAX_KERNELS);
}
