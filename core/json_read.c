/* json_read.c — strict, bounded recursive-descent JSON reader (RFC 8259).
 *
 * Bounds: input size (MMP_JSON_MAX_SIZE), nesting depth (MMP_JSON_MAX_DEPTH, so the recursion
 * is bounded), number literal length, finite doubles. Rejects: invalid UTF-8 (overlong forms,
 * surrogates, > U+10FFFF), control characters in strings, bad escapes, lone surrogates in
 * \u escapes, duplicate object keys, trailing garbage. Every error is one line
 * "name:line:col: what was expected" and the status MMP_STATUS_PARSE; never a crash.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/json.h"

typedef struct parser {
    const unsigned char *p, *end, *start;
    const char *name;
    int line;
    const unsigned char *line_start;
    mmp_status st;
} parser;

static int col_of(const parser *ps, const unsigned char *at)
{
    /* columns count characters (UTF-8 lead bytes), 1-based */
    int c = 1;
    for (const unsigned char *q = ps->line_start; q < at; q++)
        if ((*q & 0xC0) != 0x80) c++;
    return c;
}

static mmp_status fail_at(parser *ps, const unsigned char *at, const char *what)
{
    if (ps->st != MMP_STATUS_OK) return ps->st;
    char near[16] = "end of input";
    if (at < ps->end) {
        unsigned char ch = *at;
        if (ch >= 0x20 && ch < 0x7f) snprintf(near, sizeof near, "'%c'", ch);
        else snprintf(near, sizeof near, "byte 0x%02x", ch);
    }
    ps->st = MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: %s (found %s)", ps->name, ps->line,
                     col_of(ps, at), what, near);
    return ps->st;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end) {
        unsigned char c = *ps->p;
        if (c == '\n') { ps->line++; ps->p++; ps->line_start = ps->p; }
        else if (c == ' ' || c == '\t' || c == '\r') ps->p++;
        else break;
    }
}

static mmp_json *node_new(parser *ps, mmp_json_type t)
{
    mmp_json *v = calloc(1, sizeof *v);
    if (!v) {
        ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
        return NULL;
    }
    v->type = t;
    v->line = ps->line;
    v->col = (int)(ps->p - ps->line_start) + 1;   /* byte column: O(1) per node */
    v->src_off = (size_t)(ps->p - ps->start);
    return v;
}

void mmp_json_free(mmp_json *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        mmp_json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

/* Decode one UTF-8 sequence at s (< end); returns its length or 0 if invalid. */
static int utf8_len(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned cp, min;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (end - s < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

static int hex4(const unsigned char *s, const unsigned char *end, unsigned *out)
{
    if (end - s < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At an opening quote: decode the string into a fresh buffer. */
static mmp_status parse_string(parser *ps, char **out, size_t *out_len)
{
    const unsigned char *q = ps->p + 1;
    /* Pass 1: find the end and validate; decoded length <= raw length. */
    size_t cap = 1;
    const unsigned char *s = q;
    while (1) {
        if (s >= ps->end) return fail_at(ps, s, "unterminated string");
        unsigned c = *s;
        if (c == '"') break;
        if (c < 0x20) return fail_at(ps, s, "control character in string (escape it)");
        if (c == '\\') {
            if (s + 1 >= ps->end) return fail_at(ps, s + 1, "unterminated escape");
            unsigned e = s[1];
            if (e == 'u') {
                unsigned cp;
                if (hex4(s + 2, ps->end, &cp) < 0) return fail_at(ps, s, "\\u needs four hex digits");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (ps->end - s < 12 || s[6] != '\\' || s[7] != 'u' || hex4(s + 8, ps->end, &lo) < 0 ||
                        lo < 0xDC00 || lo > 0xDFFF)
                        return fail_at(ps, s, "high surrogate \\u escape without a low surrogate");
                    s += 12; cap += 4;
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return fail_at(ps, s, "lone low surrogate \\u escape");
                } else {
                    s += 6; cap += 3;
                }
                continue;
            }
            if (!strchr("\"\\/bfnrt", (int)e) || e == 0) return fail_at(ps, s, "invalid escape in string");
            s += 2; cap += 1;
            continue;
        }
        int n = utf8_len(s, ps->end);
        if (!n) return fail_at(ps, s, "invalid UTF-8 in string");
        s += n; cap += (size_t)n;
    }
    char *buf = malloc(cap);
    if (!buf) return ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
    size_t o = 0;
    for (const unsigned char *r = q; r < s;) {
        if (*r != '\\') { buf[o++] = (char)*r++; continue; }
        unsigned e = r[1];
        if (e == 'u') {
            unsigned cp, lo;
            hex4(r + 2, ps->end, &cp);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                hex4(r + 8, ps->end, &lo);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                r += 12;
            } else {
                r += 6;
            }
            o += put_utf8(buf + o, cp);
            continue;
        }
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        buf[o++] = to[strchr(from, (int)e) - from];
        r += 2;
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    ps->p = s + 1;
    return MMP_STATUS_OK;
}

static mmp_status parse_number(parser *ps, mmp_json *v)
{
    const unsigned char *s = ps->p, *q = s;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !(*q >= '0' && *q <= '9')) return fail_at(ps, q, "expected a digit");
    if (*q == '0') q++;
    else while (q < ps->end && *q >= '0' && *q <= '9') q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !(*q >= '0' && *q <= '9')) return fail_at(ps, q, "expected a digit after '.'");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !(*q >= '0' && *q <= '9')) return fail_at(ps, q, "expected a digit in exponent");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    size_t n = (size_t)(q - s);
    if (n > MMP_JSON_MAX_NUMBER) return fail_at(ps, s, "number literal too long");
    v->str = malloc(n + 1);
    if (!v->str) return ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
    memcpy(v->str, s, n);
    v->str[n] = '\0';
    v->len = n;
    errno = 0;
    double x = strtod(v->str, NULL);
    if (!isfinite(x)) return fail_at(ps, s, "number out of the range of a double");
    ps->p = q;
    return MMP_STATUS_OK;
}

static int key_cmp(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
}

static mmp_status push(parser *ps, mmp_json *c, mmp_json *item, char *key)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        mmp_json **items = realloc(c->items, cap * sizeof *items);
        if (!items) goto oom;
        c->items = items;
        if (c->type == MMP_JSON_OBJECT) {
            char **keys = realloc(c->keys, cap * sizeof *keys);
            if (!keys) goto oom;
            c->keys = keys;
        }
        c->cap = cap;
    }
    c->items[c->n] = item;
    if (c->type == MMP_JSON_OBJECT) c->keys[c->n] = key;
    c->n++;
    return MMP_STATUS_OK;
oom:
    mmp_json_free(item);
    free(key);
    return ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
}

static mmp_status parse_value(parser *ps, mmp_json **out, int depth);

static mmp_status parse_container(parser *ps, mmp_json *c, int depth)
{
    int is_obj = c->type == MMP_JSON_OBJECT;
    char close = is_obj ? '}' : ']';
    if (depth >= MMP_JSON_MAX_DEPTH) return fail_at(ps, ps->p, "nesting deeper than 64 levels");
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) { ps->p++; return MMP_STATUS_OK; }
    while (1) {
        char *key = NULL;
        size_t klen = 0;
        if (is_obj) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"') return fail_at(ps, ps->p, "expected a string key");
            MMP_TRY(parse_string(ps, &key, &klen));
            if (strlen(key) != klen) { free(key); return fail_at(ps, ps->p, "object key contains \\u0000"); }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') { free(key); return fail_at(ps, ps->p, "expected ':' after key"); }
            ps->p++;
        }
        mmp_json *item = NULL;
        mmp_status st = parse_value(ps, &item, depth + 1);
        if (st != MMP_STATUS_OK) { free(key); return st; }
        MMP_TRY(push(ps, c, item, key));
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; skip_ws(ps); continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        return fail_at(ps, ps->p, is_obj ? "expected ',' or '}' after object member"
                                         : "expected ',' or ']' after array element");
    }
    if (is_obj && c->n > 1) {
        char **sorted = malloc(c->n * sizeof *sorted);
        if (!sorted) return ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory", ps->name);
        memcpy(sorted, c->keys, c->n * sizeof *sorted);
        qsort(sorted, c->n, sizeof *sorted, key_cmp);
        for (size_t i = 1; i < c->n; i++)
            if (strcmp(sorted[i - 1], sorted[i]) == 0) {
                ps->st = MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: duplicate key \"%.40s\" in object", ps->name,
                                 c->line, c->col, sorted[i]);
                free(sorted);
                return ps->st;
            }
        free(sorted);
    }
    return MMP_STATUS_OK;
}

static mmp_status parse_value(parser *ps, mmp_json **out, int depth)
{
    skip_ws(ps);
    if (ps->p >= ps->end) return fail_at(ps, ps->p, "expected a value");
    unsigned c = *ps->p;
    static const struct { const char *word; mmp_json_type t; } words[] = {
        {"null", MMP_JSON_NULL}, {"true", MMP_JSON_TRUE}, {"false", MMP_JSON_FALSE}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (c == (unsigned char)words[i].word[0]) {
            if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, words[i].word, n) != 0)
                return fail_at(ps, ps->p, "invalid literal");
            mmp_json *v = node_new(ps, words[i].t);
            if (!v) return ps->st;
            ps->p += n;
            v->src_len = n;
            *out = v;
            return MMP_STATUS_OK;
        }
    }
    mmp_json_type t;
    if (c == '{') t = MMP_JSON_OBJECT;
    else if (c == '[') t = MMP_JSON_ARRAY;
    else if (c == '"') t = MMP_JSON_STRING;
    else if (c == '-' || (c >= '0' && c <= '9')) t = MMP_JSON_NUMBER;
    else return fail_at(ps, ps->p, "expected a value");
    mmp_json *v = node_new(ps, t);
    if (!v) return ps->st;
    mmp_status st;
    if (t == MMP_JSON_STRING) st = parse_string(ps, &v->str, &v->len);
    else if (t == MMP_JSON_NUMBER) st = parse_number(ps, v);
    else st = parse_container(ps, v, depth);
    if (st != MMP_STATUS_OK) { mmp_json_free(v); return st; }
    v->src_len = (size_t)(ps->p - ps->start) - v->src_off;
    *out = v;
    return MMP_STATUS_OK;
}

mmp_status mmp_json_parse(mmp_json **out, const char *text, size_t len, const char *name)
{
    *out = NULL;
    if (!name) name = "<json>";
    if (len > MMP_JSON_MAX_SIZE)
        return MMP_ERR(MMP_STATUS_PARSE, "%s: document of %zu bytes is larger than the %u-byte limit", name,
                       len, MMP_JSON_MAX_SIZE);
    parser ps = {(const unsigned char *)text, (const unsigned char *)text + len, (const unsigned char *)text,
                 name, 1, (const unsigned char *)text, MMP_STATUS_OK};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        return fail_at(&ps, ps.p, "byte-order mark not allowed");
    mmp_json *v = NULL;
    MMP_TRY(parse_value(&ps, &v, 0));
    skip_ws(&ps);
    if (ps.p != ps.end) {
        mmp_json_free(v);
        return fail_at(&ps, ps.p, "trailing characters after the JSON value");
    }
    *out = v;
    return MMP_STATUS_OK;
}

mmp_status mmp_json_slurp(char **text, size_t *len, const char *path)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        if (cap > MMP_JSON_MAX_SIZE) {
            free(buf); fclose(f);
            return MMP_ERR(MMP_STATUS_PARSE, "%s: larger than the %u-byte limit for a JSON document", path,
                           MMP_JSON_MAX_SIZE);
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path);
    if (err) { free(buf); return MMP_ERR(MMP_STATUS_IO, "cannot read %s", path); }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return MMP_STATUS_OK;
}

const mmp_json *mmp_json_get(const mmp_json *obj, const char *key)
{
    if (!obj || obj->type != MMP_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}

const char *mmp_json_type_name(mmp_json_type t)
{
    static const char *const names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

int mmp_json_double(double *x, const mmp_json *v)
{
    if (!v) return -1;
    if (v->type == MMP_JSON_NUMBER) { *x = strtod(v->str, NULL); return isfinite(*x) ? 0 : -1; }
    if (v->type == MMP_JSON_STRING) {
        if (strcmp(v->str, "inf") == 0) { *x = INFINITY; return 0; }
        if (strcmp(v->str, "-inf") == 0) { *x = -INFINITY; return 0; }
        if (strcmp(v->str, "nan") == 0) { *x = NAN; return 0; }
    }
    return -1;
}

/* An integer literal: no fraction, no exponent. */
static int is_int_literal(const mmp_json *v)
{
    return v && v->type == MMP_JSON_NUMBER && !strpbrk(v->str, ".eE");
}

int mmp_json_int64(int64_t *x, const mmp_json *v)
{
    if (!is_int_literal(v)) return -1;
    errno = 0;
    long long r = strtoll(v->str, NULL, 10);
    if (errno == ERANGE) return -1;
    *x = (int64_t)r;
    return 0;
}

int mmp_json_uint64(uint64_t *x, const mmp_json *v)
{
    if (!is_int_literal(v) || v->str[0] == '-') return -1;
    errno = 0;
    unsigned long long r = strtoull(v->str, NULL, 10);
    if (errno == ERANGE) return -1;
    *x = (uint64_t)r;
    return 0;
}
