/* render.c — the report formats by name, and one entry point that renders a run document in
 * any of them (the renderers are render_text.c, render_md.c, render_junit.c, render_html.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/report.h"

static const char *const format_names[MMP_REPORT_FORMAT_COUNT_] = {"text", "md", "junit", "html"};

mmp_status mmp_report_format_from_name(mmp_report_format *f, const char *name)
{
    for (int i = 0; i < MMP_REPORT_FORMAT_COUNT_; i++)
        if (name && strcmp(name, format_names[i]) == 0) { *f = (mmp_report_format)i; return MMP_STATUS_OK; }
    if (name && strcmp(name, "markdown") == 0) { *f = MMP_REPORT_MD; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID, "unknown report format '%s' (text, md, junit, html)", name ? name : "(null)");
}

mmp_status mmp_report_render(FILE *out, const mmp_run *run, mmp_report_format format)
{
    switch (format) {
    case MMP_REPORT_TEXT: mmp_report_print_text(out, run); break;
    case MMP_REPORT_MD: mmp_report_print_md(out, run); break;
    case MMP_REPORT_JUNIT: mmp_report_print_junit(out, run); break;
    case MMP_REPORT_HTML: mmp_report_print_html(out, run); break;
    default: return MMP_ERR(MMP_STATUS_INVALID, "unknown report format %d", (int)format);
    }
    if (fflush(out) != 0 || ferror(out)) return MMP_ERR(MMP_STATUS_IO, "cannot write the report: %s", strerror(errno));
    return MMP_STATUS_OK;
}
