/* json_memory.c — the memory probe's typed results (mmp_memory_results, memory.h) <-> the run
 * document's "probes.memory" member (schema in reports/README.md): the calibration rows, each
 * kernel's analysis (with the worst request of each shared-memory access site, "requests",
 * optional) and its measurement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/memory.h"
#include "json_probe_io.h"

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

void mmp_json_write_memory(mmp_jw *w, const mmp_memory_results *M)
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

mmp_status mmp_json_read_memory(const mmp_json_ctx *cx, mmp_memory_results *M, const mmp_json *v)
{
    const rd Rv = {cx, "probes.memory"}, *R = &Rv;
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
