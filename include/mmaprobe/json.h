/* reports/json.h — a small JSON writer and a strict, bounded JSON reader (no external library).
 *
 * Reading (RFC 8259, strict: no comments, no trailing commas, no duplicate keys, valid UTF-8,
 * valid escapes and surrogate pairs, numbers finite as doubles, nesting <= MMP_JSON_MAX_DEPTH):
 *   mmp_json *doc;
 *   if (mmp_json_parse(&doc, text, len, "run.json") != MMP_STATUS_OK)
 *       puts(mmp_error_last());                 // "run.json:3:14: expected ',' or '}' ..."
 *   const mmp_json *v = mmp_json_get(doc, "cases");
 *   mmp_json_free(doc);
 * Writing (deterministic: the same values give the same bytes; doubles round-trip exactly):
 *   mmp_jw w; mmp_jw_init(&w, stdout, 1);     // containers at depth <= 1 put members on lines
 *   mmp_jw_begin_object(&w); mmp_jw_key(&w, "x"); mmp_jw_double(&w, 0.5); mmp_jw_end_object(&w);
 * Non-finite doubles are written as the strings "inf", "-inf", "nan" (JSON has no such numbers);
 * mmp_json_double() reads a number or one of those strings.
 */
#ifndef MMAPROBE_REPORTS_JSON_H
#define MMAPROBE_REPORTS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/status.h"

#define MMP_JSON_MAX_DEPTH 64               /* nesting of arrays/objects */
#define MMP_JSON_MAX_SIZE (256u << 20)      /* bytes of one document */
#define MMP_JSON_MAX_NUMBER 400             /* characters of one number literal */
/* Memory for the parsed tree: at most RATIO bytes per input byte plus BASE MiB (a larger tree
 * is MMP_STATUS_PARSE, found before allocating when the text alone shows it). Run documents
 * take 10-25 bytes per byte, probe documents (small-integer layout maps) about 33; a document
 * of nothing but tiny values ("[0,0,...]") over 50. */
#define MMP_JSON_MEMORY_RATIO 40
#define MMP_JSON_MEMORY_BASE_MIB 16

typedef enum mmp_json_type {
    MMP_JSON_NULL, MMP_JSON_FALSE, MMP_JSON_TRUE, MMP_JSON_NUMBER,
    MMP_JSON_STRING, MMP_JSON_ARRAY, MMP_JSON_OBJECT
} mmp_json_type;

typedef struct mmp_json {
    mmp_json_type type;
    int line, col;                 /* where the value starts (1-based) */
    size_t src_off, src_len;       /* the value's bytes in the parsed text */
    char *str;                     /* STRING: decoded UTF-8 (NUL-terminated); NUMBER: the literal */
    size_t len;                    /* bytes in str (a string may hold \u0000) */
    struct mmp_json **items;       /* ARRAY / OBJECT members */
    char **keys;                   /* OBJECT keys (decoded) */
    size_t n, cap;
} mmp_json;

/* Parse len bytes of text; name prefixes every error message ("name:line:col: ..."). */
mmp_status mmp_json_parse(mmp_json **out, const char *text, size_t len, const char *name);
void mmp_json_free(mmp_json *v);
/* Read a whole regular file (at most MMP_JSON_MAX_SIZE bytes) into a NUL-terminated buffer:
 * mmp_file_read_regular (sysio.h), so a FIFO is refused at once and a missing file is exit 2. */
mmp_status mmp_json_slurp(char **text, size_t *len, const char *path);

const mmp_json *mmp_json_get(const mmp_json *obj, const char *key);  /* NULL if absent */
const char *mmp_json_type_name(mmp_json_type t);
/* Conversions: 0 ok, -1 wrong type or out of range. */
int mmp_json_double(double *x, const mmp_json *v);
int mmp_json_int64(int64_t *x, const mmp_json *v);
int mmp_json_uint64(uint64_t *x, const mmp_json *v);

/* ---- writer ---- */
typedef struct mmp_jw {
    FILE *out;
    int depth, pretty_depth;
    int first[MMP_JSON_MAX_DEPTH + 1];     /* no member written yet at this depth */
    int after_key;
    int error;                             /* set on misuse or a write error */
} mmp_jw;

void mmp_jw_init(mmp_jw *w, FILE *out, int pretty_depth);
void mmp_jw_begin_object(mmp_jw *w);
void mmp_jw_end_object(mmp_jw *w);
void mmp_jw_begin_array(mmp_jw *w);
void mmp_jw_end_array(mmp_jw *w);
void mmp_jw_key(mmp_jw *w, const char *key);
void mmp_jw_string(mmp_jw *w, const char *s);
void mmp_jw_string_n(mmp_jw *w, const char *s, size_t len);
void mmp_jw_double(mmp_jw *w, double x);
void mmp_jw_float(mmp_jw *w, float x);
void mmp_jw_int64(mmp_jw *w, int64_t x);
void mmp_jw_uint64(mmp_jw *w, uint64_t x);
void mmp_jw_bool(mmp_jw *w, int b);
void mmp_jw_null(mmp_jw *w);
void mmp_jw_raw(mmp_jw *w, const char *text, size_t len);   /* an already valid JSON value */
/* Escape s into a JSON string literal body (no quotes) on out; invalid UTF-8 becomes U+FFFD. */
void mmp_json_escape(FILE *out, const char *s, size_t len);
/* s as a whole JSON string literal, quotes included (hand-written JSON in probes/). */
void mmp_json_quote(FILE *out, const char *s);

#endif
