/* json_run.c — the run document's records <-> JSON (schema in reports/README.md).
 *
 * Flat fields of mmp_case_result, mmp_metrics and mmp_env are rows of tables (name, type,
 * offset), so the writer and the reader cannot drift apart. Readers ignore unknown members
 * (a newer MINOR version may add some) and keep defaults for absent ones; a member of the
 * wrong type, a string too long for its field or an out-of-range number is an error naming
 * the path, line and column.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "json_run.h"

typedef enum ftype { F_STR, F_I64, F_U64, F_I32, F_F64 } ftype;
typedef struct field { const char *name; ftype t; size_t off, size; } field;

#define FS(T, name, f) {name, F_STR, offsetof(T, f), sizeof(((T *)0)->f)}
#define FI(T, name, f) {name, F_I64, offsetof(T, f), 0}
#define FU(T, name, f) {name, F_U64, offsetof(T, f), 0}
#define F32(T, name, f) {name, F_I32, offsetof(T, f), 0}
#define FD(T, name, f) {name, F_F64, offsetof(T, f), 0}

#define C mmp_case_result
static const field case_head[] = {
    FS(C, "id", id), FS(C, "kernel", kernel), FS(C, "family", family), FS(C, "precision", precision),
    FS(C, "dist", dist), FS(C, "suite", suite), FI(C, "m", m), FI(C, "n", n), FI(C, "k", k),
    FI(C, "lda", lda), FI(C, "ldb", ldb), FI(C, "ldc", ldc), FI(C, "ldd", ldd), FU(C, "seed", seed),
};
static const field case_tail[] = {
    FS(C, "message", message), FS(C, "tolerance", tolerance), FI(C, "n_mpfr", n_mpfr), FI(C, "n_exact", n_exact), FI(C, "n_dot", n_dot),
    FI(C, "n_unwritten", n_unwritten), FI(C, "n_guard", n_guard),
    FI(C, "n_input_modified", n_input_modified), FI(C, "n_nondet", n_nondet),
    FD(C, "time_kernel_ms", time_kernel_ms), FD(C, "time_reference_ms", time_reference_ms),
    FD(C, "time_total_ms", time_total_ms),
    FD(C, "time_inputs_ms", time_stage_ms[MMP_STAGE_INPUTS]), FD(C, "time_poison_ms", time_stage_ms[MMP_STAGE_POISON]),
    FD(C, "time_transfer_ms", time_stage_ms[MMP_STAGE_TRANSFER]),
    FD(C, "time_launch_ms", time_stage_ms[MMP_STAGE_LAUNCH]), FD(C, "time_guards_ms", time_stage_ms[MMP_STAGE_GUARDS]),
    FD(C, "time_compare_ms", time_stage_ms[MMP_STAGE_COMPARE]), FD(C, "time_memory_ms", time_stage_ms[MMP_STAGE_MEMORY]),
    FD(C, "time_context_ms", time_stage_ms[MMP_STAGE_CONTEXT]), F32(C, "shard_index", shard_index),
    F32(C, "shard_count", shard_count), F32(C, "device", device),
};
#undef C
#define M mmp_metrics
static const field metric_fields[] = {
    FI(M, "count", count), FI(M, "nan_mismatch", nan_mismatch), FI(M, "inf_mismatch", inf_mismatch),
    FD(M, "max_abs_err", max_abs_err), FD(M, "max_rel_err", max_rel_err),
    FD(M, "norm_rel_err", norm_rel_err), FD(M, "max_ulp", max_ulp), FD(M, "u_acc", u_acc),
    FD(M, "max_ratio_det", max_ratio_det), FD(M, "max_ratio_prob", max_ratio_prob),
    FD(M, "lambda", lambda), FI(M, "above_det", above_det), FI(M, "above_prob", above_prob),
    FI(M, "above_tol", above_tol), FI(M, "worst_i", worst_i), FI(M, "worst_j", worst_j),
    FD(M, "worst_got", worst_got), FD(M, "worst_want", worst_want),
    FI(M, "first_bad_i", first_bad_i), FI(M, "first_bad_j", first_bad_j),
};
#undef M
#define E mmp_env
static const field env_fields[] = {
    FS(E, "gpu", gpu), F32(E, "cc_major", cc_major), F32(E, "cc_minor", cc_minor),
    F32(E, "sm_count", sm_count), FS(E, "driver", driver), FS(E, "cuda_runtime", runtime),
    FS(E, "cublas", cublas), FS(E, "mpfr", mpfr), FS(E, "check", check), FS(E, "blas", blas), FS(E, "git_sha", git_sha),
    FS(E, "hostname", hostname), FS(E, "started", started), FS(E, "command", command),
    FU(E, "seed", seed), F32(E, "device", device), FS(E, "no_device_reason", no_device_reason),
};
#undef E
#define NF(a) (sizeof(a) / sizeof((a)[0]))

static void write_fields(mmp_jw *w, const void *rec, const field *f, size_t n)
{
    const char *base = rec;
    for (size_t i = 0; i < n; i++) {
        const void *p = base + f[i].off;
        mmp_jw_key(w, f[i].name);
        switch (f[i].t) {
        case F_STR: mmp_jw_string_n(w, p, strnlen(p, f[i].size)); break;
        case F_I64: mmp_jw_int64(w, *(const int64_t *)p); break;
        case F_U64: mmp_jw_uint64(w, *(const uint64_t *)p); break;
        case F_I32: mmp_jw_int64(w, *(const int32_t *)p); break;
        case F_F64: mmp_jw_double(w, *(const double *)p); break;
        }
    }
}

static mmp_status bad(const mmp_json_ctx *cx, const mmp_json *v, const char *path, const char *key,
                      const char *what)
{
    return MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: %s%s%s: %s (got %s)", cx->name, v ? v->line : 0,
                   v ? v->col : 0, path, *path && key ? "." : "", key ? key : "", what,
                   v ? mmp_json_type_name(v->type) : "nothing");
}

mmp_status mmp_json_expect(const mmp_json_ctx *cx, const mmp_json *v, mmp_json_type t, const char *path)
{
    if (v && (v->type == t || (t == MMP_JSON_TRUE && v->type == MMP_JSON_FALSE))) return MMP_STATUS_OK;
    char what[32];
    snprintf(what, sizeof what, "expected %s %s", t == MMP_JSON_ARRAY || t == MMP_JSON_OBJECT ? "an" : "a",
             t == MMP_JSON_TRUE ? "boolean" : mmp_json_type_name(t));
    return bad(cx, v, path, NULL, what);
}

mmp_status mmp_json_read_string(const mmp_json_ctx *cx, char *dst, size_t size, const mmp_json *v,
                                const char *path, const char *key)
{
    if (!v || v->type != MMP_JSON_STRING) return bad(cx, v, path, key, "expected a string");
    if (strlen(v->str) != v->len) return bad(cx, v, path, key, "string contains \\u0000");
    if (v->len >= size) {
        char what[64];
        snprintf(what, sizeof what, "string longer than %zu bytes", size - 1);
        return bad(cx, v, path, key, what);
    }
    memcpy(dst, v->str, v->len + 1);
    return MMP_STATUS_OK;
}

static mmp_status read_fields(const mmp_json_ctx *cx, void *rec, const field *f, size_t n, const mmp_json *obj,
                              const char *path)
{
    char *base = rec;
    for (size_t i = 0; i < n; i++) {
        const mmp_json *v = mmp_json_get(obj, f[i].name);
        if (!v) continue;
        void *p = base + f[i].off;
        int64_t x;
        switch (f[i].t) {
        case F_STR: MMP_TRY(mmp_json_read_string(cx, p, f[i].size, v, path, f[i].name)); break;
        case F_I64:
            if (mmp_json_int64(p, v)) return bad(cx, v, path, f[i].name, "expected a 64-bit integer");
            break;
        case F_U64:
            if (mmp_json_uint64(p, v)) return bad(cx, v, path, f[i].name, "expected an unsigned 64-bit integer");
            break;
        case F_I32:
            if (mmp_json_int64(&x, v) || x < INT32_MIN || x > INT32_MAX)
                return bad(cx, v, path, f[i].name, "expected a 32-bit integer");
            *(int32_t *)p = (int32_t)x;
            break;
        case F_F64:
            if (mmp_json_double(p, v)) return bad(cx, v, path, f[i].name, "expected a number, \"inf\", \"-inf\" or \"nan\"");
            break;
        }
    }
    return MMP_STATUS_OK;
}

void mmp_json_write_env(mmp_jw *w, const mmp_env *e)
{
    mmp_jw_begin_object(w);
    write_fields(w, e, env_fields, NF(env_fields));
    mmp_jw_end_object(w);
}

mmp_status mmp_json_read_env(const mmp_json_ctx *cx, mmp_env *e, const mmp_json *v, const char *path)
{
    MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_OBJECT, path));
    mmp_env_init(e);
    return read_fields(cx, e, env_fields, NF(env_fields), v, path);
}

void mmp_json_write_case(mmp_jw *w, const mmp_case_result *r)
{
    mmp_jw_begin_object(w);
    write_fields(w, r, case_head, NF(case_head));
    mmp_jw_key(w, "verdict");
    mmp_jw_string(w, mmp_verdict_name(r->verdict));
    mmp_jw_key(w, "reasons");
    mmp_jw_begin_array(w);
    for (int b = 0; b < MMP_REASON_COUNT_; b++)
        if (r->reasons & (1u << b)) mmp_jw_string(w, mmp_reason_name((mmp_reason)(1u << b)));
    mmp_jw_end_array(w);
    write_fields(w, r, case_tail, NF(case_tail));
    const mmp_metrics *m = &r->metrics;
    mmp_jw_key(w, "metrics");
    mmp_jw_begin_object(w);
    write_fields(w, m, metric_fields, NF(metric_fields));
    mmp_jw_key(w, "hist");
    mmp_jw_begin_array(w);
    for (int b = 0; b < MMP_HIST_BINS; b++) mmp_jw_uint64(w, m->hist[b]);
    mmp_jw_end_array(w);
    if (m->heat_rows > 0 && m->heat_cols > 0 && m->heat_rows <= MMP_HEAT_MAX && m->heat_cols <= MMP_HEAT_MAX) {
        mmp_jw_key(w, "heatmap");
        mmp_jw_begin_object(w);
        mmp_jw_key(w, "rows");
        mmp_jw_int64(w, m->heat_rows);
        mmp_jw_key(w, "cols");
        mmp_jw_int64(w, m->heat_cols);
        mmp_jw_key(w, "cells");
        mmp_jw_begin_array(w);
        for (int i = 0; i < m->heat_rows * m->heat_cols; i++) mmp_jw_float(w, m->heat[i]);
        mmp_jw_end_array(w);
        int marked = 0;   /* marks only where a cell has one: unmarked maps stay as they were */
        for (int i = 0; i < m->heat_rows * m->heat_cols; i++) marked |= m->heat_mark[i];
        if (marked) {
            mmp_jw_key(w, "marks");
            mmp_jw_begin_array(w);
            for (int i = 0; i < m->heat_rows * m->heat_cols; i++) mmp_jw_int64(w, m->heat_mark[i]);
            mmp_jw_end_array(w);
        }
        mmp_jw_end_object(w);
    }
    mmp_jw_end_object(w);
    mmp_jw_end_object(w);
}

static mmp_status read_metrics(const mmp_json_ctx *cx, mmp_metrics *m, const mmp_json *v, const char *path)
{
    MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_OBJECT, path));
    MMP_TRY(read_fields(cx, m, metric_fields, NF(metric_fields), v, path));
    const mmp_json *h = mmp_json_get(v, "hist");
    if (h) {
        if (h->type != MMP_JSON_ARRAY || h->n != MMP_HIST_BINS)
            return bad(cx, h, path, "hist", "expected an array of 16 counts");
        for (int b = 0; b < MMP_HIST_BINS; b++)
            if (mmp_json_uint64(&m->hist[b], h->items[b]))
                return bad(cx, h->items[b], path, "hist", "expected an unsigned 64-bit integer");
    }
    const mmp_json *hm = mmp_json_get(v, "heatmap");
    if (hm && hm->type != MMP_JSON_NULL) {
        MMP_TRY(mmp_json_expect(cx, hm, MMP_JSON_OBJECT, "metrics.heatmap"));
        int64_t rows, cols;
        const mmp_json *r = mmp_json_get(hm, "rows"), *c = mmp_json_get(hm, "cols"),
                       *cells = mmp_json_get(hm, "cells");
        if (mmp_json_int64(&rows, r) || rows < 1 || rows > MMP_HEAT_MAX)
            return bad(cx, r ? r : hm, path, "heatmap.rows", "expected an integer in 1..64");
        if (mmp_json_int64(&cols, c) || cols < 1 || cols > MMP_HEAT_MAX)
            return bad(cx, c ? c : hm, path, "heatmap.cols", "expected an integer in 1..64");
        if (!cells || cells->type != MMP_JSON_ARRAY || cells->n != (size_t)(rows * cols))
            return bad(cx, cells ? cells : hm, path, "heatmap.cells", "expected an array of rows*cols numbers");
        m->heat_rows = (int32_t)rows;
        m->heat_cols = (int32_t)cols;
        for (size_t i = 0; i < cells->n; i++) {
            const mmp_json *x = cells->items[i];
            if (x->type == MMP_JSON_NUMBER) {
                m->heat[i] = strtof(x->str, NULL);
            } else {
                double d;
                if (mmp_json_double(&d, x)) return bad(cx, x, path, "heatmap.cells", "expected a number");
                m->heat[i] = (float)d;
            }
        }
        const mmp_json *marks = mmp_json_get(hm, "marks");
        if (marks && marks->type != MMP_JSON_NULL) {
            if (marks->type != MMP_JSON_ARRAY || marks->n != (size_t)(rows * cols))
                return bad(cx, marks, path, "heatmap.marks", "expected an array of rows*cols marks");
            for (size_t i = 0; i < marks->n; i++) {
                int64_t k;
                if (mmp_json_int64(&k, marks->items[i]) || k < 0 || k >= MMP_HEAT_MARK_COUNT_)
                    return bad(cx, marks->items[i], path, "heatmap.marks", "expected a mark 0..3");
                m->heat_mark[i] = (uint8_t)k;
            }
        }
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_json_read_case(const mmp_json_ctx *cx, mmp_case_result *r, const mmp_json *v, const char *path)
{
    MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_OBJECT, path));
    mmp_case_result_init(r);
    const mmp_json *id = mmp_json_get(v, "id"), *verdict = mmp_json_get(v, "verdict");
    if (!id) return bad(cx, v, path, "id", "missing member");
    if (!verdict) return bad(cx, v, path, "verdict", "missing member");
    MMP_TRY(read_fields(cx, r, case_head, NF(case_head), v, path));
    if (!r->id[0]) return bad(cx, id, path, "id", "empty case ID");
    char name[16];
    MMP_TRY(mmp_json_read_string(cx, name, sizeof name, verdict, path, "verdict"));
    if (mmp_verdict_from_name(&r->verdict, name))
        return bad(cx, verdict, path, "verdict", "expected PASS, FAIL, ERROR or SKIP");
    const mmp_json *reasons = mmp_json_get(v, "reasons");
    if (reasons) {
        if (reasons->type != MMP_JSON_ARRAY) return bad(cx, reasons, path, "reasons", "expected an array of names");
        for (size_t i = 0; i < reasons->n; i++) {
            char rn[32];
            uint32_t bit;
            MMP_TRY(mmp_json_read_string(cx, rn, sizeof rn, reasons->items[i], path, "reasons"));
            if (mmp_reason_parse(&bit, rn) || bit == 0 || (bit & (bit - 1))) {
                if (cx->minor > MMP_REPORT_SCHEMA_MINOR) continue;   /* a newer minor's reason */
                return bad(cx, reasons->items[i], path, "reasons", "unknown reason name");
            }
            r->reasons |= bit;
        }
    }
    MMP_TRY(read_fields(cx, r, case_tail, NF(case_tail), v, path));
    r->time_stage_ms[MMP_STAGE_REFERENCE] = r->time_reference_ms;   /* one member for both */
    const mmp_json *m = mmp_json_get(v, "metrics");
    if (m) {
        char mp[300];
        snprintf(mp, sizeof mp, "%s%smetrics", path, *path ? "." : "");
        MMP_TRY(read_metrics(cx, &r->metrics, m, mp));
    }
    return MMP_STATUS_OK;
}
