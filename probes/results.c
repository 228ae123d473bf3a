/* results.c — the typed results of the probe groups: lifecycle, appending, merging.
 * The groups fill them (arith_run.c, layout_run.c, memory_run.c); the run document (reports/)
 * owns one mmp_probe_results, writes it as JSON and reads it back. */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/probe.h"

static const char *const state_names[MMP_PROBE_STATE_COUNT_] = {"analysed", "skipped", "failed"};

const char *mmp_probe_state_name(mmp_probe_state s)
{
    return (unsigned)s < MMP_PROBE_STATE_COUNT_ ? state_names[s] : "?";
}

mmp_status mmp_probe_state_from_name(mmp_probe_state *s, const char *name)
{
    for (int i = 0; i < MMP_PROBE_STATE_COUNT_; i++)
        if (name && !strcmp(name, state_names[i])) { *s = (mmp_probe_state)i; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID, "unknown probe state '%s' (analysed, skipped, failed)", name ? name : "(null)");
}

/* Room for one more element of size sz in *items (n used, *cap allocated). */
static mmp_status grow(void **items, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return MMP_STATUS_OK;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, c * sz);
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %zu probe results", c);
    *items = p;
    *cap = c;
    return MMP_STATUS_OK;
}

mmp_status mmp_arith_results_add(mmp_arith_results *g, const mmp_arith_result *a)
{
    MMP_TRY(grow((void **)&g->items, &g->cap, g->n, sizeof *a));
    g->items[g->n++] = *a;
    return MMP_STATUS_OK;
}

void mmp_layout_result_clear(mmp_layout_result *r)
{
    for (int f = 0; f < MMP_LAYOUT_MAX_FRAGS; f++) {
        free(r->frags[f].owner);
        free(r->frags[f].reg);
        r->frags[f].owner = r->frags[f].reg = NULL;
    }
}

mmp_status mmp_layout_results_add(mmp_layout_results *g, mmp_layout_result *r)
{
    MMP_TRY(grow((void **)&g->items, &g->cap, g->n, sizeof *r));
    g->items[g->n++] = *r;
    for (int f = 0; f < MMP_LAYOUT_MAX_FRAGS; f++) r->frags[f].owner = r->frags[f].reg = NULL;
    return MMP_STATUS_OK;
}

mmp_status mmp_memory_results_add_calib(mmp_memory_results *g, const mmp_memory_calib_result *c)
{
    MMP_TRY(grow((void **)&g->calib, &g->cap_calib, g->n_calib, sizeof *c));
    g->calib[g->n_calib++] = *c;
    return MMP_STATUS_OK;
}

mmp_status mmp_memory_results_add_kernel(mmp_memory_results *g, const mmp_memory_kernel_result *k)
{
    MMP_TRY(grow((void **)&g->kernels, &g->cap_kernels, g->n_kernels, sizeof *k));
    g->kernels[g->n_kernels++] = *k;
    return MMP_STATUS_OK;
}

void mmp_probe_results_init(mmp_probe_results *r)
{
    memset(r, 0, sizeof *r);
}

void mmp_probe_results_clear(mmp_probe_results *r)
{
    free(r->arith.items);
    for (size_t i = 0; i < r->layout.n; i++) mmp_layout_result_clear(&r->layout.items[i]);
    free(r->layout.items);
    free(r->memory.calib);
    free(r->memory.kernels);
    mmp_probe_results_init(r);
}

static int32_t *dup_grid(const int32_t *g, const mmp_layout_frag *f)
{
    if (!g) return NULL;
    size_t n = (size_t)f->rows * (size_t)f->cols;
    int32_t *p = malloc(n * sizeof *p);
    if (p) memcpy(p, g, n * sizeof *p);
    return p;
}

static mmp_status append_layout(mmp_layout_results *d, const mmp_layout_results *s)
{
    if (!s->present) return MMP_STATUS_OK;
    if (!d->present) {
        snprintf(d->gpu, sizeof d->gpu, "%s", s->gpu);
        snprintf(d->mode, sizeof d->mode, "%s", s->mode);
        d->cc = s->cc;
        d->present = 1;
    }
    for (size_t i = 0; i < s->n; i++) {
        mmp_layout_result r = s->items[i];
        int ok = 1;
        for (int f = 0; f < r.n_frags && f < MMP_LAYOUT_MAX_FRAGS; f++) {
            r.frags[f].owner = dup_grid(s->items[i].frags[f].owner, &r.frags[f].frag);
            r.frags[f].reg = dup_grid(s->items[i].frags[f].reg, &r.frags[f].frag);
            ok &= (!s->items[i].frags[f].owner || r.frags[f].owner) && (!s->items[i].frags[f].reg || r.frags[f].reg);
        }
        for (int f = r.n_frags; f < MMP_LAYOUT_MAX_FRAGS; f++) r.frags[f].owner = r.frags[f].reg = NULL;
        mmp_status st = ok ? mmp_layout_results_add(d, &r) : MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory merging layouts");
        if (st != MMP_STATUS_OK) { mmp_layout_result_clear(&r); return st; }
    }
    d->n_match += s->n_match;
    d->n_differ += s->n_differ;
    d->n_inconsistent += s->n_inconsistent;
    d->n_discovered += s->n_discovered;
    d->n_skipped += s->n_skipped;
    d->n_errors += s->n_errors;
    return MMP_STATUS_OK;
}

mmp_status mmp_probe_results_append(mmp_probe_results *dst, const mmp_probe_results *src)
{
    if (src->arith.present) {
        dst->arith.present = 1;
        for (size_t i = 0; i < src->arith.n; i++) MMP_TRY(mmp_arith_results_add(&dst->arith, &src->arith.items[i]));
    }
    MMP_TRY(append_layout(&dst->layout, &src->layout));
    const mmp_memory_results *ms = &src->memory;
    mmp_memory_results *md = &dst->memory;
    if (ms->present) {
        if (!md->present) {
            snprintf(md->method, sizeof md->method, "%s", ms->method);
            snprintf(md->why, sizeof md->why, "%s", ms->why);
            for (size_t i = 0; i < ms->n_calib; i++) MMP_TRY(mmp_memory_results_add_calib(md, &ms->calib[i]));
            md->present = 1;
        }
        for (size_t i = 0; i < ms->n_kernels; i++) MMP_TRY(mmp_memory_results_add_kernel(md, &ms->kernels[i]));
        md->disagreements += ms->disagreements;
    }
    return MMP_STATUS_OK;
}
