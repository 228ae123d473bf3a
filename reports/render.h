/* reports/render.h — helpers shared by the renderers (internal to reports/). */
#ifndef MMAPROBE_REPORTS_RENDER_H
#define MMAPROBE_REPORTS_RENDER_H

#include <stdio.h>
#include "mmaprobe/report.h"

/* Bytes of the printable character at s (1..4: ASCII or valid UTF-8 that is no C1 control), or
 * 0 when s[0] is a byte a terminal must not get (C0, DEL, a C1 control's lead, invalid UTF-8):
 * such bytes are escaped or dropped one at a time (text_clean.c). */
size_t mmp_text_printable_len(const char *s);
/* Markdown table-cell-safe text. */
void mmp_md_escape(FILE *out, const char *s);
/* XML/HTML text and attribute escaping (&, <, >, ", '); drops bytes XML 1.0 forbids (C0 controls
 * except tab/newline, invalid UTF-8 becomes U+FFFD). */
void mmp_xml_escape(FILE *out, const char *s);

/* The probe section of the HTML report (render_probes.c). */
void mmp_html_probes(FILE *out, const mmp_probe_results *p);
/* Its memory group (render_memory.c): counters beside the model, lane -> bank grids, bank maps. */
void mmp_html_memory(FILE *out, const mmp_memory_results *M);
/* The compact tables of every probe group that ran (render_probe_tables.c). */
enum { MMP_PROBE_TABLE_TEXT, MMP_PROBE_TABLE_MD, MMP_PROBE_TABLE_HTML };
void mmp_probe_tables(FILE *out, const mmp_probe_results *p, int style);

/* SVG pieces for the HTML report (svg.c). */
/* The metrics' heatmap (cells: max |err|/bound per block; their marks; the first failing
 * element ringed) over an m x n matrix. */
void mmp_svg_heatmap(FILE *out, const mmp_metrics *mt, int64_t m, int64_t n);
/* Histogram of |err|/bound over the MMP_HIST_BINS bins. */
void mmp_svg_histogram(FILE *out, const uint64_t *hist);
/* Scatter/line chart of y against x (log-log), one series per name. */
typedef struct mmp_svg_series {
    const char *name;
    const double *x, *y;
    const int *bad;                /* optional: 1 marks a failing point */
    size_t n;
} mmp_svg_series;
void mmp_svg_loglog(FILE *out, const mmp_svg_series *s, size_t n_series, const char *xlabel, const char *ylabel);
/* A colour from the sequential palette for t in [0,1]; writes "#rrggbb" into buf[8]. */
void mmp_svg_color(char buf[8], double t);

#endif
