/* escape.c — text made safe for a Markdown table cell: '|', '<', '>', '&', '`' and Markdown's
 * emphasis and link characters escaped, newlines and tabs as spaces, other control bytes (ESC
 * included) dropped. Used by every Markdown writer (render_md.c, render_probe_tables.c, diff.c). */
#include <stdio.h>

#include "render.h"

void mmp_md_escape(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '|': fputs("\\|", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '`': fputs("&#96;", out); break;
        case '*': case '_': case '[': case ']': case '\\': fputc('\\', out); fputc(*p, out); break;
        case '\n': case '\r': case '\t': fputc(' ', out); break;
        default:
            if (*p >= 0x20 && *p != 0x7f) fputc(*p, out);
        }
    }
}
