/* escape.c — text made safe for a Markdown table cell: '|', '<', '>', '&', '`' and Markdown's
 * emphasis and link characters escaped, newlines and tabs as spaces, other control bytes (ESC
 * included, C1 controls, invalid UTF-8 bytes) dropped. Used by every Markdown writer
 * (render_md.c, render_probe_tables.c, diff.c). */
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
        default: {
            size_t n = mmp_text_printable_len((const char *)p);   /* 0: a control byte, dropped */
            if (n) fwrite(p, 1, n, out);
            if (n > 1) p += n - 1;
        }
        }
    }
}
