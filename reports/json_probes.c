/* json_probes.c — the typed probe results (mmp_probe_results) <-> the run document's "probes"
 * member (schema in reports/README.md). One shape for minor versions 1 and 2: minor 2 adds
 * "state" to arith entries (minor 1 has "captured": false plus a "reason" starting with
 * "unsupported"/"failed"), "ctas_per_sm_expected" to memory analyses and "why" to kernels.
 * Readers keep defaults for absent members; a member of the wrong type is an error naming
 * its path. The arith "model" object keeps the field names reference/model_bound.c reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "json_run.h"

/* ---- writer ---- */

static void kstr(mmp_jw *w, const char *k, const char *v) { mmp_jw_key(w, k); mmp_jw_string(w, v); }
static void kint(mmp_jw *w, const char *k, int64_t v) { mmp_jw_key(w, k); mmp_jw_int64(w, v); }
static void kbool(mmp_jw *w, const char *k, int v) { mmp_jw_key(w, k); mmp_jw_bool(w, v); }
static void ktri(mmp_jw *w, const char *k, int v) { mmp_jw_key(w, k); if (v < 0) mmp_jw_null(w); else mmp_jw_bool(w, v); }
static void knum(mmp_jw *w, const char *k, double v) { mmp_jw_key(w, k); if (isnan(v)) mmp_jw_null(w); else mmp_jw_double(w, v); }

static void write_model(mmp_jw *w, const mmp_arith_report *r)
{
    const mmp_model_params *p = &r->fitted;
    mmp_jw_key(w, "model");
    mmp_jw_begin_object(w);
    if (r->integer) {
        kbool(w, "integer", 1);
        kstr(w, "overflow", r->int_saturates ? "saturate" : "wrap");
        kstr(w, "clamp", r->int_stepwise ? "each addition" : "once");
    } else {
        /* a model the analysis could not complete (or an old document's) has no formats: no
         * unit roundoff or description then */
        int valid = mmp_model_params_check(p) == MMP_STATUS_OK;
        char desc[320] = "";
        if (valid) mmp_model_params_format(desc, sizeof desc, p);
        kint(w, "promote", p->promote); kint(w, "emulate_f16", p->emulate_f16);
        kint(w, "interleave", p->interleave); kint(w, "c_fadd", p->c_fadd);
        kint(w, "block_size", p->block_size); kint(w, "extra_align_bits", p->extra_align_bits);
        kint(w, "result_frac_bits", p->result_frac_bits);
        kstr(w, "out_round", p->out_round == MMP_ROUND_NEAREST_EVEN ? "rn" : "rz");
        kstr(w, "align_round", p->align_round == MMP_ROUND_DOWN ? "rd" : "rz");
        kint(w, "align_floor", p->align_floor); kint(w, "in_subnormals", p->in_subnormals);
        kint(w, "out_subnormals", p->out_subnormals); kint(w, "c_unused", p->c_unused);
        if (valid) {
            mmp_jw_key(w, "unit_roundoff"); mmp_jw_double(w, mmp_model_unit_roundoff(p));
            kstr(w, "text", desc);
        }
    }
    mmp_jw_end_object(w);
}

static void write_arith(mmp_jw *w, const mmp_arith_result *a)
{
    const mmp_arith_report *r = &a->rep;
    mmp_jw_begin_object(w);
    kstr(w, "instruction", a->instruction);
    kstr(w, "state", mmp_probe_state_name(a->state));
    kbool(w, "captured", a->state == MMP_PROBE_STATE_ANALYSED);
    kstr(w, "reason", a->reason);
    if (a->state == MMP_PROBE_STATE_ANALYSED) {
        kstr(w, "sass", r->sass); kstr(w, "device", r->device); kstr(w, "origin", r->origin);
        ktri(w, "native", r->native);
        kstr(w, "path", r->path_note);
        mmp_jw_key(w, "features");
        mmp_jw_begin_array(w);
        for (int i = 0; i < r->nf; i++) {
            mmp_jw_begin_object(w);
            kstr(w, "name", r->f[i].name); kstr(w, "value", r->f[i].value);
            kbool(w, "consistent", r->f[i].ok); kstr(w, "method", r->f[i].method);
            mmp_jw_end_object(w);
        }
        mmp_jw_end_array(w);
        write_model(w, r);
        kint(w, "random_vectors", (int64_t)r->n_random); kint(w, "random_mismatches", (int64_t)r->random_mismatches);
        kint(w, "vectors", (int64_t)r->n_total); kint(w, "mismatches", (int64_t)r->total_mismatches);
        kstr(w, "first_mismatch", r->mismatch_example);
    }
    mmp_jw_end_object(w);
}

static void write_grid(mmp_jw *w, const char *k, const int32_t *g, const mmp_layout_frag *f)
{
    if (!g) return;
    mmp_jw_key(w, k);
    mmp_jw_begin_array(w);
    for (int r = 0; r < f->rows; r++) {
        mmp_jw_begin_array(w);
        for (int c = 0; c < f->cols; c++) mmp_jw_int64(w, g[(size_t)r * f->cols + c]);
        mmp_jw_end_array(w);
    }
    mmp_jw_end_array(w);
}

static void write_layout(mmp_jw *w, const mmp_layout_results *L)
{
    mmp_jw_begin_object(w);
    kint(w, "schema", 1); kstr(w, "gpu", L->gpu); kint(w, "cc", L->cc); kstr(w, "mode", L->mode);
    mmp_jw_key(w, "captures");
    mmp_jw_begin_array(w);
    for (size_t i = 0; i < L->n; i++) {
        const mmp_layout_result *c = &L->items[i];
        mmp_jw_begin_object(w);
        kstr(w, "id", c->id); kstr(w, "kind", c->kind);
        mmp_jw_key(w, "instruction"); if (c->instruction[0]) mmp_jw_string(w, c->instruction); else mmp_jw_null(w);
        mmp_jw_key(w, "ptx_isa_section"); if (c->section[0]) mmp_jw_string(w, c->section); else mmp_jw_null(w);
        kstr(w, "source", c->source); kint(w, "threads", c->threads);
        kbool(w, "documented", c->documented); kbool(w, "consistent", c->consistent);
        kint(w, "differences", c->differences);
        kstr(w, "verdict", mmp_layout_verdict_name(c->consistent, c->documented, c->differences));
        mmp_jw_key(w, "fragments");
        mmp_jw_begin_array(w);
        for (int f = 0; f < c->n_frags; f++) {
            const mmp_layout_frag_result *fr = &c->frags[f];
            const mmp_layout_frag_report *r = &fr->rep;
            mmp_jw_begin_object(w);
            kstr(w, "name", fr->frag.name); kint(w, "rows", fr->frag.rows); kint(w, "cols", fr->frag.cols);
            kint(w, "elems_per_lane", fr->frag.elems_per_lane); kint(w, "elems_per_reg", fr->frag.elems_per_reg);
            kint(w, "expected", r->expected); kint(w, "covered", r->covered); kint(w, "uncovered", r->uncovered);
            kint(w, "duplicated", r->duplicated); kint(w, "unplaced", r->unplaced);
            kint(w, "out_of_range", r->out_of_range); kint(w, "slots", r->slots);
            kbool(w, "documented", r->documented); kint(w, "differences", r->differences);
            mmp_jw_key(w, "differing_lanes");
            mmp_jw_begin_array(w);
            for (int l = 0; l < 128; l++)
                if (r->differing_lanes[l / 32] >> (l % 32) & 1u) mmp_jw_int64(w, l);
            mmp_jw_end_array(w);
            mmp_jw_key(w, "diffs");
            mmp_jw_begin_array(w);
            for (int d = 0; d < r->n_diffs && d < MMP_LAYOUT_MAX_DIFFS; d++) {
                mmp_jw_begin_object(w);
                kint(w, "lane", r->diffs[d].lane); kint(w, "reg", r->diffs[d].reg); kint(w, "elem", r->diffs[d].elem);
                kint(w, "row", r->diffs[d].row); kint(w, "col", r->diffs[d].col);
                kint(w, "doc_row", r->diffs[d].doc_row); kint(w, "doc_col", r->diffs[d].doc_col);
                mmp_jw_end_object(w);
            }
            mmp_jw_end_array(w);
            write_grid(w, "owner", fr->owner, &fr->frag);
            write_grid(w, "reg", fr->reg, &fr->frag);
            mmp_jw_end_object(w);
        }
        mmp_jw_end_array(w);
        mmp_jw_end_object(w);
    }
    mmp_jw_end_array(w);
    mmp_jw_key(w, "summary");
    mmp_jw_begin_object(w);
    kint(w, "match", L->n_match); kint(w, "differ", L->n_differ); kint(w, "inconsistent", L->n_inconsistent);
    kint(w, "discovered", L->n_discovered); kint(w, "skipped", L->n_skipped); kint(w, "errors", L->n_errors);
    mmp_jw_end_object(w);
    mmp_jw_end_object(w);
}

/* The worst request of each shared-memory access site (memory.h), for the lane -> bank grids. */
static void write_requests(mmp_jw *w, const mmp_memory_report *r)
{
    mmp_jw_key(w, "requests");
    mmp_jw_begin_array(w);
    for (int i = 0; i < r->n_requests && i < MMP_MEMORY_MAX_SITES; i++) {
        const mmp_memory_request *q = &r->requests[i];
        mmp_jw_begin_object(w);
        kstr(w, "label", q->label); kint(w, "kind", q->kind); kint(w, "bytes", q->bytes);
        kint(w, "matrices", q->matrices); kint(w, "active", q->active); kint(w, "warp", q->warp);
        kint(w, "wavefronts", q->wavefronts); kint(w, "ways", q->ways);
        mmp_jw_key(w, "words");
        mmp_jw_begin_array(w);
        for (int l = 0; l < 32; l++) mmp_jw_int64(w, q->word[l]);
        mmp_jw_end_array(w);
        mmp_jw_end_object(w);
    }
    mmp_jw_end_array(w);
}

static void write_analysis(mmp_jw *w, const mmp_memory_report *r)
{
    mmp_jw_begin_object(w);
    kstr(w, "kernel", r->kernel); kint(w, "warps", r->warps); kint(w, "accesses", r->accesses);
    kint(w, "smem_wavefronts", r->smem_wavefronts); kint(w, "smem_ideal", r->smem_ideal);
    kint(w, "smem_ld_wavefronts", r->smem_ld_wavefronts); kint(w, "smem_ld_ideal", r->smem_ld_ideal);
    kint(w, "smem_st_wavefronts", r->smem_st_wavefronts); kint(w, "smem_st_ideal", r->smem_st_ideal);
    kint(w, "worst_ways", r->worst_ways); kstr(w, "worst_label", r->worst_label);
    kint(w, "gmem_sectors", r->gmem_sectors); kint(w, "gmem_ideal", r->gmem_ideal); kint(w, "gmem_bytes", r->gmem_bytes);
    kint(w, "gmem_l1tex_sectors", r->gmem_l1tex_sectors);
    knum(w, "gmem_efficiency", r->gmem_efficiency); knum(w, "worst_gmem_efficiency", r->worst_gmem_efficiency);
    kstr(w, "worst_gmem_label", r->worst_gmem_label);
    kint(w, "smem_bytes_per_stage", r->smem_bytes_per_stage); kint(w, "smem_bytes_total", r->smem_bytes_total);
    kint(w, "stages", r->stages); kint(w, "ctas_per_sm_expected", r->ctas_per_sm_expected);
    mmp_jw_key(w, "bank_words");
    mmp_jw_begin_array(w);
    for (int b = 0; b < 32; b++) mmp_jw_int64(w, r->bank_words[b]);
    mmp_jw_end_array(w);
    if (r->n_requests > 0) write_requests(w, r);   /* none kept: the member is left out */
    mmp_jw_end_object(w);
}

static void write_memory(mmp_jw *w, const mmp_memory_results *M)
{
    mmp_jw_begin_object(w);
    kstr(w, "method", M->method); kstr(w, "why", M->why);
    mmp_jw_key(w, "calibration");
    mmp_jw_begin_object(w);
    kstr(w, "method", M->method);
    mmp_jw_key(w, "rows");
    mmp_jw_begin_array(w);
    for (size_t i = 0; i < M->n_calib; i++) {
        const mmp_memory_calib_result *c = &M->calib[i];
        mmp_jw_begin_object(w);
        kstr(w, "name", c->name); kint(w, "model_ways", c->model_ways); kint(w, "model_wavefronts", c->model_wavefronts);
        knum(w, "measured_wavefronts", c->measured_wavefronts); ktri(w, "agree", c->agree);
        mmp_jw_end_object(w);
    }
    mmp_jw_end_array(w);
    mmp_jw_end_object(w);
    mmp_jw_key(w, "kernels");
    mmp_jw_begin_array(w);
    for (size_t i = 0; i < M->n_kernels; i++) {
        const mmp_memory_kernel_result *k = &M->kernels[i];
        mmp_jw_begin_object(w);
        mmp_jw_key(w, "analysis");
        write_analysis(w, &k->analysis);
        if (k->measured) {
            mmp_jw_key(w, "measured");
            mmp_jw_begin_object(w);
            kstr(w, "method", k->method); knum(w, "smem_ld_wavefronts", k->smem_ld_wavefronts);
            knum(w, "smem_st_wavefronts", k->smem_st_wavefronts); knum(w, "gmem_sectors", k->gmem_sectors);
            kint(w, "gmem_model", k->gmem_model); ktri(w, "agree", k->agree); ktri(w, "gmem_agree", k->gmem_agree);
            mmp_jw_end_object(w);
        }
        kstr(w, "why", k->why);
        mmp_jw_end_object(w);
    }
    mmp_jw_end_array(w);
    kint(w, "disagreements", M->disagreements);
    mmp_jw_end_object(w);
}

void mmp_json_write_probes(mmp_jw *w, const mmp_probe_results *p)
{
    if (!p) { mmp_jw_null(w); return; }
    mmp_jw_begin_object(w);
    mmp_jw_key(w, "arith");
    if (p->arith.present) {
        mmp_jw_begin_array(w);
        for (size_t i = 0; i < p->arith.n; i++) write_arith(w, &p->arith.items[i]);
        mmp_jw_end_array(w);
    } else {
        mmp_jw_null(w);
    }
    mmp_jw_key(w, "layout");
    if (p->layout.present) write_layout(w, &p->layout); else mmp_jw_null(w);
    mmp_jw_key(w, "memory");
    if (p->memory.present) write_memory(w, &p->memory); else mmp_jw_null(w);
    mmp_jw_end_object(w);
}

/* ---- reader ---- */

typedef struct rd { const mmp_json_ctx *cx; const char *path; } rd;

static mmp_status fail(const rd *R, const mmp_json *v, const char *key, const char *what)
{
    return MMP_ERR(MMP_STATUS_PARSE, "%s:%d:%d: %s.%s: %s (got %s)", R->cx->name, v->line, v->col, R->path, key, what,
                   mmp_json_type_name(v->type));
}

static mmp_status gstr(const rd *R, char *dst, size_t size, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v || v->type == MMP_JSON_NULL) return MMP_STATUS_OK;
    return mmp_json_read_string(R->cx, dst, size, v, R->path, key);
}

static mmp_status gi64(const rd *R, int64_t *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    return mmp_json_int64(dst, v) ? fail(R, v, key, "expected an integer") : MMP_STATUS_OK;
}

static mmp_status gi32(const rd *R, int32_t *dst, const mmp_json *o, const char *key)
{
    int64_t x = *dst;
    MMP_TRY(gi64(R, &x, o, key));
    if (x < INT32_MIN || x > INT32_MAX) return fail(R, mmp_json_get(o, key), key, "expected a 32-bit integer");
    *dst = (int32_t)x;
    return MMP_STATUS_OK;
}

static mmp_status gint(const rd *R, int *dst, const mmp_json *o, const char *key)
{
    int32_t x = *dst;
    MMP_TRY(gi32(R, &x, o, key));
    *dst = x;
    return MMP_STATUS_OK;
}

static mmp_status gsize(const rd *R, size_t *dst, const mmp_json *o, const char *key)
{
    int64_t x = (int64_t)*dst;
    MMP_TRY(gi64(R, &x, o, key));
    if (x < 0) return fail(R, mmp_json_get(o, key), key, "expected a count");
    *dst = (size_t)x;
    return MMP_STATUS_OK;
}

/* boolean, or null (-1) where allowed by the caller's default */
static mmp_status gbool(const rd *R, int *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    if (v->type == MMP_JSON_NULL) { *dst = -1; return MMP_STATUS_OK; }
    if (v->type != MMP_JSON_TRUE && v->type != MMP_JSON_FALSE) return fail(R, v, key, "expected a boolean or null");
    *dst = v->type == MMP_JSON_TRUE;
    return MMP_STATUS_OK;
}

static mmp_status gnum(const rd *R, double *dst, const mmp_json *o, const char *key)
{
    const mmp_json *v = mmp_json_get(o, key);
    if (!v) return MMP_STATUS_OK;
    if (v->type == MMP_JSON_NULL) { *dst = NAN; return MMP_STATUS_OK; }
    return mmp_json_double(dst, v) ? fail(R, v, key, "expected a number or null") : MMP_STATUS_OK;
}

static const mmp_json *garr(const rd *R, const mmp_json *o, const char *key, mmp_status *st)
{
    const mmp_json *v = mmp_json_get(o, key);
    *st = MMP_STATUS_OK;
    if (!v || v->type == MMP_JSON_NULL) return NULL;
    if (v->type != MMP_JSON_ARRAY) { *st = fail(R, v, key, "expected an array"); return NULL; }
    return v;
}

static mmp_status read_model(const rd *R, mmp_arith_report *r, const mmp_json *m)
{
    MMP_TRY(mmp_json_expect(R->cx, m, MMP_JSON_OBJECT, "probes.arith[].model"));
    const mmp_json *in = mmp_json_get(m, "integer");
    if (in && in->type == MMP_JSON_TRUE) {
        char ov[16] = "", cl[24] = "";
        r->integer = 1;
        MMP_TRY(gstr(R, ov, sizeof ov, m, "overflow"));
        MMP_TRY(gstr(R, cl, sizeof cl, m, "clamp"));
        r->int_saturates = !strcmp(ov, "saturate");
        r->int_stepwise = !strcmp(cl, "each addition");
        return MMP_STATUS_OK;
    }
    mmp_model_params *p = &r->fitted;
    mmp_model_params_init(p);
    char orr[8] = "rz", ar[8] = "rz", text[320] = "", fin[16], fout[16];
    MMP_TRY(gstr(R, text, sizeof text, m, "text"));   /* "in=fp16 out=fp32 ...": the formats */
    if (sscanf(text, "in=%15s out=%15s", fin, fout) == 2) {
        mmp_format_from_name(&p->in_format, fin);
        mmp_format_from_name(&p->out_format, fout);
    }
    MMP_TRY(gint(R, &p->promote, m, "promote")); MMP_TRY(gint(R, &p->emulate_f16, m, "emulate_f16"));
    MMP_TRY(gint(R, &p->interleave, m, "interleave")); MMP_TRY(gint(R, &p->c_fadd, m, "c_fadd"));
    MMP_TRY(gint(R, &p->block_size, m, "block_size")); MMP_TRY(gint(R, &p->extra_align_bits, m, "extra_align_bits"));
    MMP_TRY(gint(R, &p->result_frac_bits, m, "result_frac_bits"));
    MMP_TRY(gstr(R, orr, sizeof orr, m, "out_round")); MMP_TRY(gstr(R, ar, sizeof ar, m, "align_round"));
    p->out_round = !strcmp(orr, "rn") ? MMP_ROUND_NEAREST_EVEN : MMP_ROUND_TOWARD_ZERO;
    p->align_round = !strcmp(ar, "rd") ? MMP_ROUND_DOWN : MMP_ROUND_TOWARD_ZERO;
    MMP_TRY(gint(R, &p->align_floor, m, "align_floor")); MMP_TRY(gint(R, &p->in_subnormals, m, "in_subnormals"));
    MMP_TRY(gint(R, &p->out_subnormals, m, "out_subnormals")); MMP_TRY(gint(R, &p->c_unused, m, "c_unused"));
    return MMP_STATUS_OK;
}

static mmp_status read_arith(const rd *R, mmp_arith_result *a, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, R->path));
    memset(a, 0, sizeof *a);
    MMP_TRY(gstr(R, a->instruction, sizeof a->instruction, v, "instruction"));
    MMP_TRY(gstr(R, a->reason, sizeof a->reason, v, "reason"));
    char state[16] = "";
    MMP_TRY(gstr(R, state, sizeof state, v, "state"));
    int captured = 1;
    MMP_TRY(gbool(R, &captured, v, "captured"));
    if (state[0]) {
        if (mmp_probe_state_from_name(&a->state, state) != MMP_STATUS_OK)
            return fail(R, mmp_json_get(v, "state"), "state", "expected analysed, skipped or failed");
    } else {                                     /* minor 1: "captured": false and a reason */
        a->state = captured != 0 ? MMP_PROBE_STATE_ANALYSED
                 : strncmp(a->reason, "unsupported", 11) ? MMP_PROBE_STATE_FAILED : MMP_PROBE_STATE_SKIPPED;
    }
    if (a->state != MMP_PROBE_STATE_ANALYSED) return MMP_STATUS_OK;
    mmp_arith_report *r = &a->rep;
    snprintf(r->instruction, sizeof r->instruction, "%s", a->instruction);
    r->native = -1;
    MMP_TRY(gstr(R, r->sass, sizeof r->sass, v, "sass")); MMP_TRY(gstr(R, r->device, sizeof r->device, v, "device"));
    MMP_TRY(gstr(R, r->origin, sizeof r->origin, v, "origin"));
    MMP_TRY(gstr(R, r->path_note, sizeof r->path_note, v, "path"));
    MMP_TRY(gbool(R, &r->native, v, "native"));
    mmp_status st;
    const mmp_json *fs = garr(R, v, "features", &st);
    MMP_TRY(st);
    for (size_t i = 0; fs && i < fs->n && r->nf < (int)(sizeof r->f / sizeof r->f[0]); i++) {
        mmp_arith_feature *f = &r->f[r->nf++];
        MMP_TRY(mmp_json_expect(R->cx, fs->items[i], MMP_JSON_OBJECT, "probes.arith[].features[]"));
        MMP_TRY(gstr(R, f->name, sizeof f->name, fs->items[i], "name"));
        MMP_TRY(gstr(R, f->value, sizeof f->value, fs->items[i], "value"));
        MMP_TRY(gstr(R, f->method, sizeof f->method, fs->items[i], "method"));
        MMP_TRY(gbool(R, &f->ok, fs->items[i], "consistent"));
        if (f->ok < 0) f->ok = 0;
    }
    const mmp_json *m = mmp_json_get(v, "model");
    if (m && m->type != MMP_JSON_NULL) MMP_TRY(read_model(R, r, m));
    MMP_TRY(gsize(R, &r->n_random, v, "random_vectors")); MMP_TRY(gsize(R, &r->random_mismatches, v, "random_mismatches"));
    MMP_TRY(gsize(R, &r->n_total, v, "vectors")); MMP_TRY(gsize(R, &r->total_mismatches, v, "mismatches"));
    return gstr(R, r->mismatch_example, sizeof r->mismatch_example, v, "first_mismatch");
}

/* rows x cols integers into a malloc'd grid (NULL when absent). */
static mmp_status read_grid(const rd *R, int32_t **out, const mmp_json *o, const char *key, const mmp_layout_frag *f)
{
    mmp_status st;
    const mmp_json *g = garr(R, o, key, &st);
    *out = NULL;
    if (!g || st != MMP_STATUS_OK) return st;
    if (f->rows < 1 || f->cols < 1 || f->rows > 4096 || f->cols > 4096 || g->n != (size_t)f->rows)
        return fail(R, g, key, "expected rows arrays of cols integers");
    int32_t *p = malloc(sizeof *p * (size_t)f->rows * (size_t)f->cols);
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", key);
    for (int r = 0; r < f->rows; r++) {
        const mmp_json *row = g->items[r];
        int64_t x;
        if (row->type != MMP_JSON_ARRAY || row->n != (size_t)f->cols) { free(p); return fail(R, row, key, "expected cols integers"); }
        for (int c = 0; c < f->cols; c++) {
            if (mmp_json_int64(&x, row->items[c]) || x < INT32_MIN || x > INT32_MAX) { free(p); return fail(R, row->items[c], key, "expected an integer"); }
            p[(size_t)r * f->cols + c] = (int32_t)x;
        }
    }
    *out = p;
    return MMP_STATUS_OK;
}

static mmp_status read_frag(const rd *R, mmp_layout_frag_result *fr, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.layout.captures[].fragments[]"));
    mmp_layout_frag_report *r = &fr->rep;
    MMP_TRY(gstr(R, fr->frag.name, sizeof fr->frag.name, v, "name"));
    MMP_TRY(gi32(R, &fr->frag.rows, v, "rows")); MMP_TRY(gi32(R, &fr->frag.cols, v, "cols"));
    MMP_TRY(gi32(R, &fr->frag.elems_per_lane, v, "elems_per_lane")); MMP_TRY(gi32(R, &fr->frag.elems_per_reg, v, "elems_per_reg"));
    MMP_TRY(gi64(R, &r->expected, v, "expected")); MMP_TRY(gi64(R, &r->covered, v, "covered"));
    MMP_TRY(gi64(R, &r->uncovered, v, "uncovered")); MMP_TRY(gi64(R, &r->duplicated, v, "duplicated"));
    MMP_TRY(gi64(R, &r->unplaced, v, "unplaced")); MMP_TRY(gi64(R, &r->out_of_range, v, "out_of_range"));
    MMP_TRY(gi64(R, &r->slots, v, "slots")); MMP_TRY(gbool(R, &r->documented, v, "documented"));
    MMP_TRY(gi64(R, &r->differences, v, "differences"));
    mmp_status st;
    const mmp_json *dl = garr(R, v, "differing_lanes", &st);
    MMP_TRY(st);
    for (size_t i = 0; dl && i < dl->n; i++) {
        int64_t l;
        if (mmp_json_int64(&l, dl->items[i]) || l < 0 || l > 127) return fail(R, dl->items[i], "differing_lanes", "expected a lane 0..127");
        r->differing_lanes[l / 32] |= 1u << (l % 32);
    }
    const mmp_json *ds = garr(R, v, "diffs", &st);
    MMP_TRY(st);
    for (size_t i = 0; ds && i < ds->n && r->n_diffs < MMP_LAYOUT_MAX_DIFFS; i++) {
        const mmp_json *d = ds->items[i];
        MMP_TRY(mmp_json_expect(R->cx, d, MMP_JSON_OBJECT, "probes.layout.captures[].fragments[].diffs[]"));
        int k = r->n_diffs++;
        MMP_TRY(gint(R, &r->diffs[k].lane, d, "lane")); MMP_TRY(gint(R, &r->diffs[k].reg, d, "reg"));
        MMP_TRY(gint(R, &r->diffs[k].elem, d, "elem")); MMP_TRY(gint(R, &r->diffs[k].row, d, "row"));
        MMP_TRY(gint(R, &r->diffs[k].col, d, "col")); MMP_TRY(gint(R, &r->diffs[k].doc_row, d, "doc_row"));
        MMP_TRY(gint(R, &r->diffs[k].doc_col, d, "doc_col"));
    }
    MMP_TRY(read_grid(R, &fr->owner, v, "owner", &fr->frag));
    return read_grid(R, &fr->reg, v, "reg", &fr->frag);
}

static mmp_status read_capture(const rd *R, mmp_layout_result *c, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.layout.captures[]"));
    MMP_TRY(gstr(R, c->id, sizeof c->id, v, "id")); MMP_TRY(gstr(R, c->kind, sizeof c->kind, v, "kind"));
    MMP_TRY(gstr(R, c->instruction, sizeof c->instruction, v, "instruction"));
    MMP_TRY(gstr(R, c->section, sizeof c->section, v, "ptx_isa_section"));
    MMP_TRY(gstr(R, c->source, sizeof c->source, v, "source")); MMP_TRY(gi32(R, &c->threads, v, "threads"));
    MMP_TRY(gbool(R, &c->documented, v, "documented")); MMP_TRY(gbool(R, &c->consistent, v, "consistent"));
    MMP_TRY(gi64(R, &c->differences, v, "differences"));
    mmp_status st;
    const mmp_json *fs = garr(R, v, "fragments", &st);
    MMP_TRY(st);
    for (size_t i = 0; fs && i < fs->n && c->n_frags < MMP_LAYOUT_MAX_FRAGS; i++)
        MMP_TRY(read_frag(R, &c->frags[c->n_frags++], fs->items[i]));
    return MMP_STATUS_OK;
}

static mmp_status read_layout(const rd *R, mmp_layout_results *L, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.layout"));
    L->present = 1;
    MMP_TRY(gstr(R, L->gpu, sizeof L->gpu, v, "gpu")); MMP_TRY(gstr(R, L->mode, sizeof L->mode, v, "mode"));
    MMP_TRY(gi32(R, &L->cc, v, "cc"));
    mmp_status st;
    const mmp_json *cs = garr(R, v, "captures", &st);
    MMP_TRY(st);
    for (size_t i = 0; cs && i < cs->n; i++) {
        mmp_layout_result c;
        memset(&c, 0, sizeof c);
        st = read_capture(R, &c, cs->items[i]);
        if (st == MMP_STATUS_OK) st = mmp_layout_results_add(L, &c);
        mmp_layout_result_clear(&c);
        MMP_TRY(st);
    }
    const mmp_json *s = mmp_json_get(v, "summary");
    if (s && s->type == MMP_JSON_OBJECT) {
        MMP_TRY(gi32(R, &L->n_match, s, "match")); MMP_TRY(gi32(R, &L->n_differ, s, "differ"));
        MMP_TRY(gi32(R, &L->n_inconsistent, s, "inconsistent")); MMP_TRY(gi32(R, &L->n_discovered, s, "discovered"));
        MMP_TRY(gi32(R, &L->n_skipped, s, "skipped")); MMP_TRY(gi32(R, &L->n_errors, s, "errors"));
    }
    return MMP_STATUS_OK;
}

static mmp_status read_request(const rd *R, mmp_memory_request *q, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.memory.kernels[].analysis.requests[]"));
    memset(q, 0, sizeof *q);
    int64_t active = 0;
    MMP_TRY(gstr(R, q->label, sizeof q->label, v, "label")); MMP_TRY(gi32(R, &q->kind, v, "kind"));
    MMP_TRY(gi32(R, &q->bytes, v, "bytes")); MMP_TRY(gi32(R, &q->matrices, v, "matrices"));
    MMP_TRY(gi64(R, &active, v, "active")); MMP_TRY(gi32(R, &q->warp, v, "warp"));
    MMP_TRY(gi32(R, &q->wavefronts, v, "wavefronts")); MMP_TRY(gi32(R, &q->ways, v, "ways"));
    if (active < 0 || active > UINT32_MAX) return fail(R, mmp_json_get(v, "active"), "active", "expected a 32-lane mask");
    q->active = (uint32_t)active;
    if (q->bytes < 1 || q->bytes > 16) return fail(R, mmp_json_get(v, "bytes"), "bytes", "expected 1..16 bytes per lane");
    mmp_status st;
    const mmp_json *ws = garr(R, v, "words", &st);
    MMP_TRY(st);
    if (!ws || ws->n != 32) return fail(R, ws ? ws : v, "words", "expected 32 word offsets");
    for (int l = 0; l < 32; l++) {
        int64_t x;
        if (mmp_json_int64(&x, ws->items[l]) || x < 0 || x > UINT32_MAX - 4)
            return fail(R, ws->items[l], "words", "expected a word offset");
        q->word[l] = (uint32_t)x;
    }
    return MMP_STATUS_OK;
}

static mmp_status read_analysis(const rd *R, mmp_memory_report *r, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.memory.kernels[].analysis"));
    MMP_TRY(gstr(R, r->kernel, sizeof r->kernel, v, "kernel"));
    MMP_TRY(gi32(R, &r->warps, v, "warps")); MMP_TRY(gi32(R, &r->accesses, v, "accesses"));
    MMP_TRY(gi64(R, &r->smem_wavefronts, v, "smem_wavefronts")); MMP_TRY(gi64(R, &r->smem_ideal, v, "smem_ideal"));
    MMP_TRY(gi64(R, &r->smem_ld_wavefronts, v, "smem_ld_wavefronts")); MMP_TRY(gi64(R, &r->smem_ld_ideal, v, "smem_ld_ideal"));
    MMP_TRY(gi64(R, &r->smem_st_wavefronts, v, "smem_st_wavefronts")); MMP_TRY(gi64(R, &r->smem_st_ideal, v, "smem_st_ideal"));
    MMP_TRY(gi32(R, &r->worst_ways, v, "worst_ways")); MMP_TRY(gstr(R, r->worst_label, sizeof r->worst_label, v, "worst_label"));
    MMP_TRY(gi64(R, &r->gmem_sectors, v, "gmem_sectors")); MMP_TRY(gi64(R, &r->gmem_ideal, v, "gmem_ideal"));
    MMP_TRY(gi64(R, &r->gmem_bytes, v, "gmem_bytes")); MMP_TRY(gi64(R, &r->gmem_l1tex_sectors, v, "gmem_l1tex_sectors"));
    MMP_TRY(gnum(R, &r->gmem_efficiency, v, "gmem_efficiency"));
    MMP_TRY(gnum(R, &r->worst_gmem_efficiency, v, "worst_gmem_efficiency"));
    MMP_TRY(gstr(R, r->worst_gmem_label, sizeof r->worst_gmem_label, v, "worst_gmem_label"));
    MMP_TRY(gi64(R, &r->smem_bytes_per_stage, v, "smem_bytes_per_stage"));
    MMP_TRY(gi64(R, &r->smem_bytes_total, v, "smem_bytes_total"));
    MMP_TRY(gi32(R, &r->stages, v, "stages")); MMP_TRY(gi32(R, &r->ctas_per_sm_expected, v, "ctas_per_sm_expected"));
    mmp_status st;
    const mmp_json *bw = garr(R, v, "bank_words", &st);
    MMP_TRY(st);
    for (size_t b = 0; bw && b < bw->n && b < 32; b++)
        if (mmp_json_int64(&r->bank_words[b], bw->items[b])) return fail(R, bw->items[b], "bank_words", "expected an integer");
    const mmp_json *rq = garr(R, v, "requests", &st);   /* optional */
    MMP_TRY(st);
    for (size_t i = 0; rq && i < rq->n && r->n_requests < MMP_MEMORY_MAX_SITES; i++)
        MMP_TRY(read_request(R, &r->requests[r->n_requests++], rq->items[i]));
    return MMP_STATUS_OK;
}

static mmp_status read_memory(const rd *R, mmp_memory_results *M, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(R->cx, v, MMP_JSON_OBJECT, "probes.memory"));
    M->present = 1;
    MMP_TRY(gstr(R, M->method, sizeof M->method, v, "method")); MMP_TRY(gstr(R, M->why, sizeof M->why, v, "why"));
    MMP_TRY(gi32(R, &M->disagreements, v, "disagreements"));
    mmp_status st;
    const mmp_json *cal = mmp_json_get(v, "calibration");
    const mmp_json *rows = cal && cal->type == MMP_JSON_OBJECT ? garr(R, cal, "rows", &st) : NULL;
    for (size_t i = 0; rows && i < rows->n; i++) {
        mmp_memory_calib_result c = {.measured_wavefronts = NAN, .agree = -1};
        MMP_TRY(mmp_json_expect(R->cx, rows->items[i], MMP_JSON_OBJECT, "probes.memory.calibration.rows[]"));
        MMP_TRY(gstr(R, c.name, sizeof c.name, rows->items[i], "name"));
        MMP_TRY(gi32(R, &c.model_ways, rows->items[i], "model_ways"));
        MMP_TRY(gi32(R, &c.model_wavefronts, rows->items[i], "model_wavefronts"));
        MMP_TRY(gnum(R, &c.measured_wavefronts, rows->items[i], "measured_wavefronts"));
        MMP_TRY(gbool(R, &c.agree, rows->items[i], "agree"));
        MMP_TRY(mmp_memory_results_add_calib(M, &c));
    }
    const mmp_json *ks = garr(R, v, "kernels", &st);
    MMP_TRY(st);
    for (size_t i = 0; ks && i < ks->n; i++) {
        mmp_memory_kernel_result k;
        memset(&k, 0, sizeof k);
        k.smem_ld_wavefronts = k.smem_st_wavefronts = k.gmem_sectors = NAN;
        k.agree = k.gmem_agree = -1;
        MMP_TRY(mmp_json_expect(R->cx, ks->items[i], MMP_JSON_OBJECT, "probes.memory.kernels[]"));
        const mmp_json *a = mmp_json_get(ks->items[i], "analysis"), *m = mmp_json_get(ks->items[i], "measured");
        if (a) MMP_TRY(read_analysis(R, &k.analysis, a));
        MMP_TRY(gstr(R, k.why, sizeof k.why, ks->items[i], "why"));
        if (m && m->type == MMP_JSON_OBJECT) {
            k.measured = 1;
            MMP_TRY(gstr(R, k.method, sizeof k.method, m, "method"));
            MMP_TRY(gnum(R, &k.smem_ld_wavefronts, m, "smem_ld_wavefronts"));
            MMP_TRY(gnum(R, &k.smem_st_wavefronts, m, "smem_st_wavefronts"));
            MMP_TRY(gnum(R, &k.gmem_sectors, m, "gmem_sectors")); MMP_TRY(gi64(R, &k.gmem_model, m, "gmem_model"));
            MMP_TRY(gbool(R, &k.agree, m, "agree")); MMP_TRY(gbool(R, &k.gmem_agree, m, "gmem_agree"));
        }
        MMP_TRY(mmp_memory_results_add_kernel(M, &k));
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_json_read_probes(const mmp_json_ctx *cx, mmp_probe_results *p, const mmp_json *v)
{
    MMP_TRY(mmp_json_expect(cx, v, MMP_JSON_OBJECT, "probes"));
    const mmp_json *g;
    if ((g = mmp_json_get(v, "arith")) && g->type != MMP_JSON_NULL) {
        MMP_TRY(mmp_json_expect(cx, g, MMP_JSON_ARRAY, "probes.arith"));
        p->arith.present = 1;
        rd A = {cx, "probes.arith[]"};
        for (size_t i = 0; i < g->n; i++) {
            mmp_arith_result a;
            MMP_TRY(read_arith(&A, &a, g->items[i]));
            MMP_TRY(mmp_arith_results_add(&p->arith, &a));
        }
    }
    rd L = {cx, "probes.layout"}, M = {cx, "probes.memory"};
    if ((g = mmp_json_get(v, "layout")) && g->type != MMP_JSON_NULL) MMP_TRY(read_layout(&L, &p->layout, g));
    if ((g = mmp_json_get(v, "memory")) && g->type != MMP_JSON_NULL) MMP_TRY(read_memory(&M, &p->memory, g));
    return MMP_STATUS_OK;
}
