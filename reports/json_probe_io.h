/* reports/json_probe_io.h — the member readers and writers shared by the probe groups' JSON
 * (json_probes.c, json_memory.c; internal to reports/). A reader keeps the default of an absent
 * member and fails, naming "<path>.<key>", on a member of the wrong type. */
#ifndef MMAPROBE_REPORTS_JSON_PROBE_IO_H
#define MMAPROBE_REPORTS_JSON_PROBE_IO_H

#include <math.h>
#include <stdint.h>

#include "json_run.h"

/* ---- writer: "key": value ---- */

static inline void kstr(mmp_jw *w, const char *k, const char *v) { mmp_jw_key(w, k); mmp_jw_string(w, v); }
static inline void kint(mmp_jw *w, const char *k, int64_t v) { mmp_jw_key(w, k); mmp_jw_int64(w, v); }
static inline void kbool(mmp_jw *w, const char *k, int v) { mmp_jw_key(w, k); mmp_jw_bool(w, v); }
static inline void ktri(mmp_jw *w, const char *k, int v) { mmp_jw_key(w, k); if (v < 0) mmp_jw_null(w); else mmp_jw_bool(w, v); }
static inline void knum(mmp_jw *w, const char *k, double v) { mmp_jw_key(w, k); if (isnan(v)) mmp_jw_null(w); else mmp_jw_double(w, v); }

/* ---- reader ---- */

typedef struct rd { const mmp_json_ctx *cx; const char *path; } rd;

static inline mmp_status fail(const rd *R, const mmp_json *v, const char *key, const char *what)
{
    return MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: %s.%s: %s (got %s)", R->cx->name, v->line, v->col, R->path, key, what,
                   mmp_json_type_name(v->type));
}

static inline mmp_status gstr(const rd *R, char *dst, size_t size, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v || v->type == MMP_JSON_NULL) return MMP_STATUS_OK;
    return mmp_json_read_string(R->cx, dst, size, v, R->path, key);
}

static inline mmp_status gi64(const rd *R, int64_t *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    return mmp_json_int64(dst, v) ? fail(R, v, key, "expected an integer") : MMP_STATUS_OK;
}

static inline mmp_status gi32(const rd *R, int32_t *dst, const mmp_json *o, const char *key)
{
    int64_t x = *dst;
    MMP_TRY(gi64(R, &x, o, key));
    if (x < INT32_MIN || x > INT32_MAX) return fail(R, mmp_json_get(o, key), key, "expected a 32-bit integer");
    *dst = (int32_t)x;
    return MMP_STATUS_OK;
}

static inline mmp_status gint(const rd *R, int *dst, const mmp_json *o, const char *key)
{
    int32_t x = *dst;
    MMP_TRY(gi32(R, &x, o, key));
    *dst = x;
    return MMP_STATUS_OK;
}

static inline mmp_status gsize(const rd *R, size_t *dst, const mmp_json *o, const char *key)
{
    int64_t x = (int64_t)*dst;
    MMP_TRY(gi64(R, &x, o, key));
    if (x < 0) return fail(R, mmp_json_get(o, key), key, "expected a count");
    *dst = (size_t)x;
    return MMP_STATUS_OK;
}

/* boolean, or null (-1) where allowed by the caller's default */
static inline mmp_status gbool(const rd *R, int *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    if (v->type == MMP_JSON_NULL) { *dst = -1; return MMP_STATUS_OK; }
    if (v->type != MMP_JSON_TRUE && v->type != MMP_JSON_FALSE) return fail(R, v, key, "expected a boolean or null");
    *dst = v->type == MMP_JSON_TRUE;
    return MMP_STATUS_OK;
}

static inline mmp_status gnum(const rd *R, double *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    if (v->type == MMP_JSON_NULL) { *dst = NAN; return MMP_STATUS_OK; }
    return mmp_json_double(dst, v) ? fail(R, v, key, "expected a number or null") : MMP_STATUS_OK;
}

static inline const mmp_json *garr(const rd *R, const mmp_json *o, const char *key, mmp_status *st)
{
    const mmp_json *v = mmp_json_get(o, key);
    *st = MMP_STATUS_OK;
    if (!v || v->type == MMP_JSON_NULL) return NULL;
    if (v->type != MMP_JSON_ARRAY) { *st = fail(R, v, key, "expected an array"); return NULL; }
    return v;
}

#endif
