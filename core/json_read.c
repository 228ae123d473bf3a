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
#include "mmaprobe/sysio.h"

typedef struct parser {
    const unsigned char *p, *end, *start;
    const char *name;
    int line;
    const unsigned char *line_start;
    mmp_status st;
    size_t used, budget;        /* bytes allocated for the tree so far, and the most allowed */
} parser;

/* Every allocation of the tree is charged (with the allocator's per-block overhead); past the
 * budget the parse stops. Before any allocation, a scan counts the values the text must hold
 * (each ',' outside strings separates two, each '[' and '{' opens one): when even that many
 * nodes exceed the budget, the document is refused at once instead of after gigabytes. */
#define BLOCK_OVERHEAD 16
static mmp_status over_budget(parser *ps, int line)
{
    if (ps->st == MMP_STATUS_OK)
        ps->st = MMP_ERR(MMP_STATUS_PARSE, "%s:%d: too many values for the document's size: parsing it would "
                         "take more than %zu MiB of memory (%d bytes per input byte + %d MiB)", ps->name, line,
                         ps->budget >> 20, MMP_JSON_MEMORY_RATIO, MMP_JSON_MEMORY_BASE_MIB);
    return ps->st;
}

static int charge(parser *ps, size_t bytes)
{
    ps->used += bytes + BLOCK_OVERHEAD;
    if (ps->used <= ps->budget) return 0;
    over_budget(ps, ps->line);
    return -1;
}

/* The fewest bytes the tree of text can take (see above). */
static size_t min_tree_bytes(const unsigned char *text, size_t len)
{
    size_t values = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned c = text[i];
        if (c == ',' || c == '[' || c == '{') values++;
        else if (c == '"')
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\') i++;
    }
    return values * (sizeof(mmp_json) + BLOCK_OVERHEAD);
}

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

/* A node with `extra` bytes after it for its text (a number's literal, a string's decoded
 * bytes): one allocation per scalar, which halves the tree of a document of small values. */
static mmp_json *node_new(parser *ps, mmp_json_type t, size_t extra)
{
    if (charge(ps, sizeof(mmp_json) + extra)) return NULL;
    mmp_json *v = calloc(1, sizeof *v + extra);
    if (!v) {
        ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
        return NULL;
    }
    v->type = t;
    v->line = ps->line;
    v->col = (int)(ps->p - ps->line_start) + 1;   /* byte column: O(1) per node */
    v->src_off = (size_t)(ps->p - ps->start);
    if (extra) v->str = (char *)(v + 1);
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
    free(v);            /* str, where set, lives in the node's own block */
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

/* At an opening quote: validate the string, find its closing quote (*close) and the size of
 * its decoded bytes plus the NUL (*cap, at most the raw length + 1). */
static mmp_status scan_string(parser *ps, const unsigned char **close, size_t *cap_out)
{
    size_t cap = 1;
    const unsigned char *s = ps->p + 1;
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
    *close = s;
    *cap_out = cap;
    return MMP_STATUS_OK;
}

/* Decode the string scan_string checked (opening quote at ps->p, closing at s) into buf;
 * moves past the closing quote. */
static size_t decode_string(parser *ps, char *buf, const unsigned char *s)
{
    size_t o = 0;
    for (const unsigned char *r = ps->p + 1; r < s;) {
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
    ps->p = s + 1;
    return o;
}

/* An object key: decoded into a fresh buffer. */
static mmp_status parse_key(parser *ps, char **out, size_t *out_len)
{
    const unsigned char *s;
    size_t cap;
    MMP_TRY(scan_string(ps, &s, &cap));
    if (charge(ps, cap)) return ps->st;
    char *buf = malloc(cap);
    if (!buf) return ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
    *out_len = decode_string(ps, buf, s);
    *out = buf;
    return MMP_STATUS_OK;
}

/* A string value: one node holding its decoded bytes. */
static mmp_status parse_string_node(parser *ps, mmp_json **out)
{
    const unsigned char *s;
    size_t cap;
    MMP_TRY(scan_string(ps, &s, &cap));
    mmp_json *v = node_new(ps, MMP_JSON_STRING, cap);
    if (!v) return ps->st;
    v->len = decode_string(ps, v->str, s);
    *out = v;
    return MMP_STATUS_OK;
}

/* A number value: one node holding its literal. */
static mmp_status parse_number(parser *ps, mmp_json **out)
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
    char lit[MMP_JSON_MAX_NUMBER + 1];
    memcpy(lit, s, n);
    lit[n] = '\0';
    double x = strtod(lit, NULL);
    if (!isfinite(x)) return fail_at(ps, s, "number out of the range of a double");
    mmp_json *v = node_new(ps, MMP_JSON_NUMBER, n + 1);
    if (!v) return ps->st;
    memcpy(v->str, lit, n + 1);
    v->len = n;
    ps->p = q;
    *out = v;
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
        size_t per = c->type == MMP_JSON_OBJECT ? 2 * sizeof(void *) : sizeof(void *);
        if (charge(ps, (cap - c->cap) * per)) goto over;
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
    ps->st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory parsing JSON", ps->name);
over:
    mmp_json_free(item);
    free(key);
    return ps->st;
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
            MMP_TRY(parse_key(ps, &key, &klen));
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
            mmp_json *v = node_new(ps, words[i].t, 0);
            if (!v) return ps->st;
            ps->p += n;
            v->src_len = n;
            *out = v;
            return MMP_STATUS_OK;
        }
    }
    mmp_json *v = NULL;
    if (c == '"' || c == '-' || (c >= '0' && c <= '9')) {
        MMP_TRY(c == '"' ? parse_string_node(ps, &v) : parse_number(ps, &v));
    } else {
        if (c != '{' && c != '[') return fail_at(ps, ps->p, "expected a value");
        v = node_new(ps, c == '{' ? MMP_JSON_OBJECT : MMP_JSON_ARRAY, 0);
        if (!v) return ps->st;
        mmp_status st = parse_container(ps, v, depth);
        if (st != MMP_STATUS_OK) { mmp_json_free(v); return st; }
    }
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
                 name, 1, (const unsigned char *)text, MMP_STATUS_OK, 0,
                 (size_t)MMP_JSON_MEMORY_RATIO * len + ((size_t)MMP_JSON_MEMORY_BASE_MIB << 20)};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        return fail_at(&ps, ps.p, "byte-order mark not allowed");
    if (min_tree_bytes(ps.p, len) > ps.budget) return over_budget(&ps, 1);
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
    /* a FIFO or a device is refused without blocking; a missing file is the user's input */
    return mmp_file_read_regular(text, len, path, MMP_JSON_MAX_SIZE);
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
