/* render.c — the report formats by name, and one entry point that renders a run document in
 * any of them (the renderers are render_text.c, render_md.c, render_junit.c, render_html.c,
 * render_csv.c): a table, one row per format. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/report.h"

typedef void (*render_fn)(FILE *out, const mmp_run *run);
static const struct { const char *name; render_fn fn; } formats[MMP_REPORT_FORMAT_COUNT_] = {
    [MMP_REPORT_TEXT] = {"text", mmp_report_print_text},   [MMP_REPORT_MD] = {"md", mmp_report_print_md},
    [MMP_REPORT_JUNIT] = {"junit", mmp_report_print_junit}, [MMP_REPORT_HTML] = {"html", mmp_report_print_html},
    [MMP_REPORT_CSV] = {"csv", mmp_report_print_csv},
};

mmp_status mmp_report_format_from_name(mmp_report_format *f, const char *name)
{
    for (int i = 0; i < MMP_REPORT_FORMAT_COUNT_; i++)
        if (name && strcmp(name, formats[i].name) == 0) { *f = (mmp_report_format)i; return MMP_STATUS_OK; }
    if (name && strcmp(name, "markdown") == 0) { *f = MMP_REPORT_MD; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID, "unknown report format '%s' (text, md, junit, html, csv)", name ? name : "(null)");
}

mmp_status mmp_report_render(FILE *out, const mmp_run *run, mmp_report_format format)
{
    if ((unsigned)format >= MMP_REPORT_FORMAT_COUNT_) return MMP_ERR(MMP_STATUS_INVALID, "unknown report format %d", (int)format);
    formats[format].fn(out, run);
    if (fflush(out) != 0 || ferror(out)) return MMP_ERR(MMP_STATUS_IO, "cannot write the report: %s", strerror(errno));
    return MMP_STATUS_OK;
}
