/* json_probes.c — the typed probe results (mmp_probe_results) <-> the run document's "probes"
 * member (schema in reports/README.md). One shape for minor versions 1 and 2: minor 2 adds
 * "state" to arith entries (minor 1 has "captured": false plus a "reason" starting with
 * "unsupported"/"failed"), "ctas_per_sm_expected" to memory analyses and "why" to kernels.
 * Readers keep defaults for absent members; a member of the wrong type is an error naming
 * its path. The arith "model" object keeps the field names reference/model_bound.c reads. The
 * memory group is json_memory.c; the member helpers both use are json_probe_io.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "json_probe_io.h"

/* ---- writer ---- */

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
    if (p->memory.present) mmp_json_write_memory(w, &p->memory); else mmp_jw_null(w);
    mmp_jw_end_object(w);
}

/* ---- reader ---- */

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
    rd L = {cx, "probes.layout"};
    if ((g = mmp_json_get(v, "layout")) && g->type != MMP_JSON_NULL) MMP_TRY(read_layout(&L, &p->layout, g));
    if ((g = mmp_json_get(v, "memory")) && g->type != MMP_JSON_NULL) MMP_TRY(mmp_json_read_memory(cx, &p->memory, g));
    return MMP_STATUS_OK;
}
