/* svg.c — inline SVG pictures for the HTML report: error heatmap, error/bound histogram,
 * log-log chart. Pure output, no scripts; every text goes through mmp_xml_escape.
 *
 * Colour scale of |err|/bound (log): <= 2^-14 near white, rising through blue to 1 (the bound,
 * where the scale turns), then orange to dark red at >= 2^10 — a cell over its bound cannot be
 * mistaken for one under it. Cell marks (mmp_heat_mark) are drawn over the colour: unwritten
 * black, NaN/Inf mismatch magenta, guard damage hatched orange; a green ring circles the cell of
 * the first failing element (the one the message names), with a legend of what is shown.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/result.h"
#include "render.h"

static void lerp(char buf[8], const double a[3], const double b[3], double t)
{
    snprintf(buf, 8, "#%02x%02x%02x", (int)(a[0] + (b[0] - a[0]) * t), (int)(a[1] + (b[1] - a[1]) * t),
             (int)(a[2] + (b[2] - a[2]) * t));
}

/* t in [0,1]: a sequential palette (near white -> deep blue). */
void mmp_svg_color(char buf[8], double t)
{
    static const double lo[3] = {247, 251, 255}, hi[3] = {8, 69, 148};
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    lerp(buf, lo, hi, t);
}

/* ratio -> colour: under 1 blue shades, over 1 orange..dark red, NaN magenta. */
static void ratio_color(char buf[8], double r)
{
    if (isnan(r)) { snprintf(buf, 8, "#d000d0"); return; }
    if (r <= 0) { snprintf(buf, 8, "#f7fbff"); return; }
    double l = log2(r);
    if (l < 0) {                                 /* 2^-14 .. 1 */
        mmp_svg_color(buf, (l + 14.0) / 14.0 * 0.8);
        return;
    }
    static const double a[3] = {253, 174, 97}, b[3] = {165, 0, 38};
    double t = l / 10.0;
    lerp(buf, a, b, t > 1 ? 1 : t);
}

/* One cell's mark over its colour: unwritten black, NaN/Inf mismatch magenta, guard damage an
 * orange outline with hatching (the error colour stays visible under it). */
static void heat_mark(FILE *out, int mark, double x, double y, double cw, double ch)
{
    if (mark == MMP_HEAT_MARK_UNWRITTEN || mark == MMP_HEAT_MARK_NAN) {
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x, y, cw + 0.05,
                ch + 0.05, mark == MMP_HEAT_MARK_UNWRITTEN ? "#000000" : "#d000d0");
    } else if (mark == MMP_HEAT_MARK_GUARD) {
        fprintf(out, "<g stroke=\"#f07800\" stroke-width=\"1.5\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                     "height=\"%.2f\" fill=\"none\"/>",
                x + 0.75, y + 0.75, cw - 1.5, ch - 1.5);
        for (int t = 1; t <= 3; t++) {   /* three diagonals, bottom-left to top-right */
            double f = t / 4.0;
            fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, y + ch * f, x + cw * f, y);
            fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x + cw * f, y + ch, x + cw, y + ch * f);
        }
        fputs("</g>\n", out);
    }
}

/* The legend of the marks present, and of the first failing element's ring, under the map. */
static void heat_legend(FILE *out, const int have[MMP_HEAT_MARK_COUNT_], int ring, double x, double y)
{
    static const char *const label[MMP_HEAT_MARK_COUNT_] = {"", "guard / ld padding of D overwritten",
                                                             "NaN/Inf mismatch", "unwritten (poison left)"};
    for (int k = MMP_HEAT_MARK_UNWRITTEN; k > MMP_HEAT_MARK_NONE; k--) {
        if (!have[k]) continue;
        heat_mark(out, k, x, y - 9, 11, 11);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%s</text>\n", x + 15, y, label[k]);
        x += 15 + 6.2 * (double)strlen(label[k]) + 14;
    }
    if (ring)
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#00a000\" stroke-width=\"2\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">first failing element</text>\n",
                x + 5, y - 3.5, x + 15, y);
}

void mmp_svg_heatmap(FILE *out, const mmp_metrics *mt, int64_t m, int64_t n)
{
    int rows = mt->heat_rows, cols = mt->heat_cols;
    const float *cells = mt->heat;
    if (rows <= 0 || cols <= 0 || rows > MMP_HEAT_MAX || cols > MMP_HEAT_MAX || m <= 0 || n <= 0) return;
    const double side = 480.0;
    double cw = side / (cols > rows ? cols : rows), ch = cw;
    double w = cw * cols, h = ch * rows, left = 56, top = 28;
    int have[MMP_HEAT_MARK_COUNT_] = {0}, ring = mt->first_bad_i >= 0 && mt->first_bad_i < m && mt->first_bad_j >= 0 &&
                                                 mt->first_bad_j < n;
    for (int x = 0; x < rows * cols; x++)
        if (mt->heat_mark[x] < MMP_HEAT_MARK_COUNT_) have[mt->heat_mark[x]] = 1;
    int legend = ring || have[MMP_HEAT_MARK_GUARD] || have[MMP_HEAT_MARK_NAN] || have[MMP_HEAT_MARK_UNWRITTEN];
    double height = top + h + (legend ? 62 : 40);
    fprintf(out, "<svg class=\"heat\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"error heatmap\">\n",
            left + w + 110, height, left + w + 110, height);
    fprintf(out, "<text x=\"%.1f\" y=\"16\" class=\"ax\">column j (0..%" PRId64 ")</text>\n", left, n - 1);
    fprintf(out, "<text x=\"14\" y=\"%.1f\" class=\"ax\" transform=\"rotate(-90 14 %.1f)\">row i (0..%" PRId64
                 ")</text>\n", top + h / 2 + 40, top + h / 2 + 40, m - 1);
    fprintf(out, "<g shape-rendering=\"crispEdges\">\n");
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            char col[8];
            ratio_color(col, cells[r * cols + c]);
            fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                    left + c * cw, top + r * ch, cw + 0.05, ch + 0.05, col);
            heat_mark(out, mt->heat_mark[r * cols + c], left + c * cw, top + r * ch, cw, ch);
        }
    fprintf(out, "</g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>\n",
            left, top, w, h);
    if (ring) {   /* the element the message names first (metrics' first_bad_i, first_bad_j) */
        int x = mmp_heat_cell(mt->first_bad_i, mt->first_bad_j, m, n, rows, cols);
        double cx = left + (x % cols) * cw + cw / 2, cy = top + (x / cols) * ch + ch / 2;
        fprintf(out, "<circle class=\"first-bad\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"none\" stroke=\"#00a000\" "
                     "stroke-width=\"2\"><title>first failing element (%" PRId64 ", %" PRId64 ")</title></circle>\n",
                cx, cy, (cw > 10 ? cw : 10) * 0.75, mt->first_bad_i, mt->first_bad_j);
    }
    if (legend) heat_legend(out, have, ring, left, top + h + 52);
    /* axis ticks in matrix coordinates at quarters */
    for (int q = 0; q <= 4; q++) {
        double x = left + w * q / 4, y = top + h * q / 4;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%" PRId64 "</text>\n", x,
                top + h + 14, n * q / 4);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%" PRId64 "</text>\n",
                left - 4, y + 4, m * q / 4);
    }
    /* legend: log2 ratio from -14 to +10 */
    double lx = left + w + 24, ly = top, lh = h;
    for (int s = 0; s < 48; s++) {
        double l = 10.0 - 24.0 * s / 47.0;
        char col[8];
        ratio_color(col, exp2(l));
        fprintf(out, "<rect x=\"%.1f\" y=\"%.2f\" width=\"16\" height=\"%.2f\" fill=\"%s\"/>\n", lx,
                ly + lh * s / 48, lh / 48 + 0.5, col);
    }
    static const int marks[] = {10, 5, 0, -5, -10, -14};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        double y = ly + lh * (10.0 - marks[i]) / 24.0;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%s2<tspan dy=\"-5\" font-size=\"8\">%d</tspan></text>\n",
                lx + 20, y + 4, marks[i] == 0 ? "1 = " : "", marks[i]);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">|err|/bound</text>\n", lx - 8, top + h + 14);
    fprintf(out, "</svg>\n");
}

void mmp_svg_histogram(FILE *out, const uint64_t *hist)
{
    uint64_t max = 0;
    for (int b = 0; b < MMP_HIST_BINS; b++) if (hist[b] > max) max = hist[b];
    const double bw = 26, h = 120, left = 44, top = 10;
    double w = bw * MMP_HIST_BINS;
    fprintf(out, "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "role=\"img\" aria-label=\"histogram of error over bound\">\n", left + w + 10, top + h + 46);
    double lmax = max ? log10((double)max + 1) : 1;
    for (int b = 0; b < MMP_HIST_BINS; b++) {
        double bh = hist[b] ? h * log10((double)hist[b] + 1) / lmax : 0;
        char col[8];
        if (b == MMP_HIST_BINS - 1) snprintf(col, sizeof col, "#c0392b");
        else mmp_svg_color(col, 0.25 + 0.6 * b / (MMP_HIST_BINS - 1));
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%" PRIu64
                     " elements</title></rect>\n",
                left + b * bw + 1, top + h - bh, bw - 2, bh, col, hist[b]);
        if (hist[b])
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8.5\" fill=\"#333\" text-anchor=\"middle\">%" PRIu64 "</text>\n",
                    left + b * bw + bw / 2, top + h - bh - 2 > 8 ? top + h - bh - 2 : 8.0, hist[b]);
        const char *lab = b == 0 ? "0" : b == MMP_HIST_BINS - 1 ? ">1" : NULL;
        if (lab)
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
                    left + b * bw + bw / 2, top + h + 14, lab);
        else if (b % 3 == 1)
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">2<tspan dy=\"-5\" "
                         "font-size=\"8\">%d</tspan></text>\n",
                    left + b * bw + bw / 2, top + h + 14, b - (MMP_HIST_BINS - 1));
    }
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", left, left + w,
            top + h, top + h);
    fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n",
            left + w - bw, left + w - bw, top, top + h);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\">|err| / deterministic bound (bin lower edge; log count)</text>\n",
            left, top + h + 34);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\" transform=\"rotate(-90 %.1f %.1f)\">elements</text>\n",
            12.0, top + 4, 12.0, top + 4);
    fprintf(out, "</svg>\n");
}

static const char *const series_colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                            "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728"};

void mmp_svg_loglog(FILE *out, const mmp_svg_series *s, size_t n_series, const char *xlabel, const char *ylabel)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t k = 0; k < n_series; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            double x = s[k].x[i], y = s[k].y[i];
            if (!(x > 0) || !(y > 0) || !isfinite(x) || !isfinite(y)) continue;
            x0 = fmin(x0, x); x1 = fmax(x1, x); y0 = fmin(y0, y); y1 = fmax(y1, y);
        }
    if (!(x0 <= x1)) { fprintf(out, "<p class=\"muted\">no positive data to plot</p>\n"); return; }
    double lx0 = floor(log10(x0)), lx1 = ceil(log10(x1)), ly0 = floor(log10(y0)), ly1 = ceil(log10(y1));
    if (lx1 <= lx0) lx1 = lx0 + 1;
    if (ly1 <= ly0) ly1 = ly0 + 1;
    const double W = 560, H = 300, L = 64, T = 12, R = 190, B = 44;
    double pw = W - L - R, ph = H - T - B;
    fprintf(out, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n", W, H);
    /* at most ~8 labelled decades per axis */
    double sx = ceil((lx1 - lx0) / 8), sy = ceil((ly1 - ly0) / 8);
    lx0 = floor(lx0 / sx) * sx;
    ly0 = floor(ly0 / sy) * sy;
    lx1 = lx0 + ceil((lx1 - lx0) / sx) * sx;
    ly1 = ly0 + ceil((ly1 - ly0) / sy) * sy;
    for (double e = lx0; e <= lx1; e += sx) {
        double x = L + pw * (e - lx0) / (lx1 - lx0);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">10<tspan dy=\"-5\" font-size=\"8\">%.0f</tspan></text>\n",
                x, x, T, T + ph, x, T + ph + 16, e);
    }
    for (double e = ly0; e <= ly1; e += sy) {
        double y = T + ph - ph * (e - ly0) / (ly1 - ly0);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">10<tspan dy=\"-5\" font-size=\"8\">%.0f</tspan></text>\n",
                L, L + pw, y, y, L - 6, y + 4, e);
    }
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>\n", L, T, pw, ph);
    for (size_t k = 0; k < n_series; k++) {
        const char *col = series_colors[k % (sizeof series_colors / sizeof series_colors[0])];
        for (size_t i = 0; i < s[k].n; i++) {
            double x = s[k].x[i], y = s[k].y[i];
            if (!(x > 0) || !(y > 0) || !isfinite(x) || !isfinite(y)) continue;
            double px = L + pw * (log10(x) - lx0) / (lx1 - lx0), py = T + ph - ph * (log10(y) - ly0) / (ly1 - ly0);
            int bad = s[k].bad && s[k].bad[i];
            if (bad)
                fprintf(out, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#c0392b\" stroke-width=\"2.5\"/>\n",
                        px - 4, py - 4);
            else
                fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" fill-opacity=\"0.8\"/>\n", px, py, col);
        }
        double ly = T + 14 + 18 * (double)k;
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tick\">",
                L + pw + 16, ly - 4, col, L + pw + 26, ly);
        mmp_xml_escape(out, s[k].name);
        fprintf(out, "</text>\n");
    }
    fprintf(out, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#c0392b\" stroke-width=\"2.5\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">FAIL</text>\n",
            L + pw + 12, T + 10 + 18 * (double)n_series, L + pw + 26, T + 18 + 18 * (double)n_series);
    size_t hidden = 0;
    for (size_t k = 0; k < n_series; k++)
        for (size_t i = 0; i < s[k].n; i++)
            hidden += !(s[k].x[i] > 0 && s[k].y[i] > 0 && isfinite(s[k].x[i]) && isfinite(s[k].y[i]));
    if (hidden)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%zu point%s at 0 or</text><text x=\"%.1f\" y=\"%.1f\" "
                     "class=\"tick\">not finite: not shown</text>\n",
                L + pw + 12, T + 42 + 18 * (double)n_series, hidden, hidden == 1 ? "" : "s", L + pw + 12,
                T + 56 + 18 * (double)n_series);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"middle\">", L + pw / 2, H - 6);
    mmp_xml_escape(out, xlabel);
    fprintf(out, "</text><text x=\"14\" y=\"%.1f\" class=\"ax\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
            T + ph / 2, T + ph / 2);
    mmp_xml_escape(out, ylabel);
    fprintf(out, "</text>\n</svg>\n");
}
