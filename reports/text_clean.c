/* text_clean.c — strings from a run document, a plugin or a capture file made safe for a
 * terminal (mmaprobe/report.h): a kernel name, description or message holding ESC could
 * otherwise move the cursor, rewrite earlier lines or set the window title. Control bytes
 * (C0, DEL), C1 controls (U+0080..U+009F, which some terminals also obey) and bytes that are no
 * valid UTF-8 are written as \xNN; every other character is kept. */
#include <stdio.h>
#include <string.h>

#include "mmaprobe/report.h"

/* Length of the valid UTF-8 sequence at s that is no C1 control, or 0. */
static size_t printable_utf8(const unsigned char *s);
size_t mmp_text_printable_len(const char *s) { return printable_utf8((const unsigned char *)s); }

static size_t printable_utf8(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned cp, min;
    if (c >= 0x20 && c < 0x7f) return 1;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;   /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F)) return 0;
    return n;
}

/* The next piece of s as it is to be shown: into out (NUL-terminated), returns bytes of s used. */
static size_t next_piece(const unsigned char *s, char out[8])
{
    size_t n = printable_utf8(s);
    if (n) {
        memcpy(out, s, n);
        out[n] = '\0';
        return n;
    }
    snprintf(out, 8, "\\x%02X", s[0]);
    return 1;
}

void mmp_text_fputs(FILE *out, const char *s)
{
    char piece[8];
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        p += next_piece(p, piece);
        fputs(piece, out);
    }
}

const char *mmp_text_clean(char *buf, size_t size, const char *s)
{
    if (!size) return buf;
    size_t o = 0;
    char piece[8];
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        size_t used = next_piece(p, piece), len = strlen(piece);
        if (o + len + 1 > size) break;       /* whole characters and escapes only */
        memcpy(buf + o, piece, len);
        o += len;
        p += used;
    }
    buf[o] = '\0';
    return buf;
}
