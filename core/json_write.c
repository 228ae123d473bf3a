/* json_write.c — a small deterministic JSON writer.
 *
 * Containers at depth <= pretty_depth put each member on its own line (two-space indent);
 * deeper ones are written compactly, so a run document keeps one case per line. Doubles use
 * %.17g and floats %.9g, which read back to the same bits; non-finite values become the
 * strings "inf", "-inf", "nan".
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/json.h"

void mmp_jw_init(mmp_jw *w, FILE *out, int pretty_depth)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty_depth = pretty_depth;
    w->first[0] = 1;
}

static void newline(mmp_jw *w, int depth)
{
    fputc('\n', w->out);
    for (int i = 0; i < depth; i++) fputs("  ", w->out);
}

/* Before any value or key: separators and indentation. */
static void before(mmp_jw *w)
{
    if (w->after_key) { w->after_key = 0; return; }
    if (w->depth == 0) return;
    if (!w->first[w->depth]) fputc(',', w->out);
    w->first[w->depth] = 0;
    if (w->depth <= w->pretty_depth) newline(w, w->depth);
}

static void open_c(mmp_jw *w, char c)
{
    before(w);
    fputc(c, w->out);
    if (w->depth >= MMP_JSON_MAX_DEPTH) { w->error = 1; return; }
    w->depth++;
    w->first[w->depth] = 1;
}

static void close_c(mmp_jw *w, char c)
{
    if (w->depth == 0) { w->error = 1; return; }
    int empty = w->first[w->depth];
    w->depth--;
    if (!empty && w->depth + 1 <= w->pretty_depth) newline(w, w->depth);
    fputc(c, w->out);
    if (w->depth == 0) fputc('\n', w->out);
}

void mmp_jw_begin_object(mmp_jw *w) { open_c(w, '{'); }
void mmp_jw_end_object(mmp_jw *w) { close_c(w, '}'); }
void mmp_jw_begin_array(mmp_jw *w) { open_c(w, '['); }
void mmp_jw_end_array(mmp_jw *w) { close_c(w, ']'); }

void mmp_json_quote(FILE *out, const char *s)
{
    fputc('"', out);
    mmp_json_escape(out, s ? s : "", s ? strlen(s) : 0);
    fputc('"', out);
}

void mmp_json_escape(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned c = *p;
        if (c == '"' || c == '\\') { fputc('\\', out); fputc((int)c, out); p++; continue; }
        if (c < 0x20) {
            const char *e = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (e) fputs(e, out);
            else fprintf(out, "\\u%04x", c);
            p++;
            continue;
        }
        if (c < 0x80) { fputc((int)c, out); p++; continue; }
        /* validate the UTF-8 sequence; replace an invalid byte with U+FFFD */
        int n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        unsigned cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
        int ok = n && end - p >= n;
        for (int i = 1; ok && i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) ok = 0;
            else cp = (cp << 6) | (p[i] & 0x3F);
        }
        static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (ok && (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = 0;
        if (ok) { fwrite(p, 1, (size_t)n, out); p += n; }
        else { fputs("\xEF\xBF\xBD", out); p++; }
    }
}

void mmp_jw_key(mmp_jw *w, const char *key)
{
    before(w);
    fputc('"', w->out);
    mmp_json_escape(w->out, key, strlen(key));
    fputs("\":", w->out);
    w->after_key = 1;
}

void mmp_jw_string_n(mmp_jw *w, const char *s, size_t len)
{
    before(w);
    fputc('"', w->out);
    mmp_json_escape(w->out, s, len);
    fputc('"', w->out);
}

void mmp_jw_string(mmp_jw *w, const char *s) { mmp_jw_string_n(w, s ? s : "", s ? strlen(s) : 0); }

static int nonfinite(mmp_jw *w, double x)
{
    if (isfinite(x)) return 0;
    mmp_jw_string(w, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    return 1;
}

void mmp_jw_double(mmp_jw *w, double x)
{
    if (nonfinite(w, x)) return;
    before(w);
    fprintf(w->out, "%.17g", x);
}

void mmp_jw_float(mmp_jw *w, float x)
{
    if (nonfinite(w, x)) return;
    before(w);
    fprintf(w->out, "%.9g", (double)x);
}

void mmp_jw_int64(mmp_jw *w, int64_t x) { before(w); fprintf(w->out, "%" PRId64, x); }
void mmp_jw_uint64(mmp_jw *w, uint64_t x) { before(w); fprintf(w->out, "%" PRIu64, x); }
void mmp_jw_bool(mmp_jw *w, int b) { before(w); fputs(b ? "true" : "false", w->out); }
void mmp_jw_null(mmp_jw *w) { before(w); fputs("null", w->out); }

void mmp_jw_raw(mmp_jw *w, const char *text, size_t len)
{
    before(w);
    fwrite(text, 1, len, w->out);
}
