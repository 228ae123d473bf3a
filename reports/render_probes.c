/* render_probes.c — the HTML report's probe section: what it recognises of the probe
 * modules' results is drawn (fragment layouts as lane grids, shared-memory bank maps), anything
 * else is shown as JSON text; malformed entries are noted, never fatal (reports/README.md). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/json.h"
#include "reports/render.h"

static void esc(FILE *out, const char *s) { mmp_xml_escape(out, s); }

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

void mmp_html_probes(FILE *out, const char *text)
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

