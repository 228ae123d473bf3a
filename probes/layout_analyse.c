/* layout_analyse.c — turn mma.sync pair probes into coordinates; check a capture (coverage,
 * duplicates) and compare it with the documented mapping.
 *
 * Pairs -> coordinates (the gauge note in mmaprobe/layout.h): three union-finds over the A, B
 * and D slots join (A, B) slots whose product reaches D (same k), (A, D) slots (same row) and
 * (B, D) slots (same column). Each class is then named by the PTX ISA label most of its members
 * carry, greedily by vote count, one class per label; a class with no partner on the other side
 * (an element that never took part in a product) stays unplaced (-1).
 */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/layout.h"

/* ---- union-find ---------------------------------------------------------------------------- */

static int uf_find(int *p, int x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static void uf_join(int *p, int a, int b)
{
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a != b) p[a < b ? b : a] = a < b ? a : b;
}

void mmp_layout_pair_sizes(int *n_a, int *n_b, int *n_c, const mmp_layout_doc *doc)
{
    *n_a = doc->threads * doc->frags[0].elems_per_lane;
    *n_b = doc->threads * doc->frags[1].elems_per_lane;
    *n_c = doc->threads * doc->frags[2].elems_per_lane;
}

static int is_mma_doc(const mmp_layout_doc *doc)
{
    return doc->n_frags == 4 && !strcmp(doc->frags[0].name, "A") && !strcmp(doc->frags[1].name, "B") &&
           !strcmp(doc->frags[2].name, "C") && !strcmp(doc->frags[3].name, "D");
}

/* Name the classes of one dimension. node_label[i]: doc label of node i (-2: not a member of
 * this dimension); node_side[i]: 0 (A), 1 (B), 2 (D); a class is witnessed (named) only when
 * it holds slots of two fragments, i.e. some product or sum actually joined them.
 * out[i] = label of node i's class, or -1. */
static mmp_status label_classes(int *out, int *uf, const int *node_label, const int *node_side, int n,
                                int n_labels)
{
    int *cls = malloc(sizeof(int) * (size_t)n);       /* root -> compact class index */
    int *side = calloc((size_t)n, sizeof(int));       /* per class: bit 0/1 seen */
    int *votes = NULL, *assign = NULL, *taken = NULL;
    struct cand { int votes, cls, label; } *cand = NULL;
    mmp_status st = MMP_STATUS_OK;
    if (!cls || !side) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory"); goto done; }
    int nc = 0;
    for (int i = 0; i < n; i++) cls[i] = -1;
    for (int i = 0; i < n; i++) {
        if (node_label[i] < -1) continue;
        int r = uf_find(uf, i);
        if (cls[r] < 0) cls[r] = nc++;
    }
    votes = calloc((size_t)nc * (size_t)n_labels + 1, sizeof(int));
    assign = malloc(sizeof(int) * ((size_t)nc + 1));
    taken = calloc((size_t)n_labels + 1, sizeof(int));
    cand = malloc(sizeof *cand * ((size_t)nc * (size_t)n_labels + 1));
    if (!votes || !assign || !taken || !cand) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory"); goto done; }
    for (int i = 0; i < n; i++) {
        if (node_label[i] < -1) continue;
        int c = cls[uf_find(uf, i)];
        side[c] |= 1 << node_side[i];
        if (node_label[i] >= 0 && node_label[i] < n_labels) votes[(size_t)c * n_labels + node_label[i]]++;
    }
    size_t ncand = 0;
    for (int c = 0; c < nc; c++) {
        assign[c] = -1;
        if (side[c] == 1 || side[c] == 2 || side[c] == 4) continue;   /* one kind of slot only */
        for (int l = 0; l < n_labels; l++)
            if (votes[(size_t)c * n_labels + l]) cand[ncand++] = (struct cand){votes[(size_t)c * n_labels + l], c, l};
    }
    /* greedy by votes (ties: lower class, lower label — deterministic) */
    for (size_t i = 1; i < ncand; i++) {
        struct cand x = cand[i];
        size_t j = i;
        while (j > 0 && (cand[j - 1].votes < x.votes ||
                         (cand[j - 1].votes == x.votes && (cand[j - 1].cls > x.cls ||
                                                           (cand[j - 1].cls == x.cls && cand[j - 1].label > x.label))))) {
            cand[j] = cand[j - 1];
            j--;
        }
        cand[j] = x;
    }
    for (size_t i = 0; i < ncand; i++)
        if (assign[cand[i].cls] < 0 && !taken[cand[i].label]) {
            assign[cand[i].cls] = cand[i].label;
            taken[cand[i].label] = 1;
        }
    for (int i = 0; i < n; i++) out[i] = node_label[i] < -1 ? -1 : assign[cls[uf_find(uf, i)]];
done:
    free(cls); free(side); free(votes); free(assign); free(taken); free(cand);
    return st;
}

mmp_status mmp_layout_from_pairs(mmp_layout_capture *cap, const mmp_layout_doc *doc, const int32_t *pairs,
                                 const int32_t *cmap)
{
    if (!is_mma_doc(doc)) return MMP_ERR(MMP_STATUS_INVALID, "%s is not an mma.sync entry", doc->id);
    int na, nb, nc;
    mmp_layout_pair_sizes(&na, &nb, &nc, doc);
    int n = na + nb + nc, ea = doc->frags[0].elems_per_lane, eb = doc->frags[1].elems_per_lane,
        ec = doc->frags[2].elems_per_lane;
    const mmp_layout_doc_frag *fa = &doc->frags[0], *fb = &doc->frags[1], *fd = &doc->frags[3];
    int *buf = malloc(sizeof(int) * (size_t)n * 12);
    if (!buf) return MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory");
    int *ufk = buf, *ufr = buf + n, *ufc = buf + 2 * n;
    int *lk = buf + 3 * n, *lr = buf + 4 * n, *lc = buf + 5 * n, *side = buf + 6 * n;
    int *ok = buf + 7 * n, *orow = buf + 8 * n, *ocol = buf + 9 * n;
    for (int i = 0; i < n; i++) ufk[i] = ufr[i] = ufc[i] = i;
    for (int sa = 0; sa < na; sa++)
        for (int sb = 0; sb < nb; sb++) {
            int d = pairs[(size_t)sa * nb + sb];
            if (d < 0 || d >= nc) continue;
            uf_join(ufk, sa, na + sb);
            uf_join(ufr, sa, na + nb + d);
            uf_join(ufc, na + sb, na + nb + d);
        }
    /* doc labels: -2 = not in this dimension */
    for (int i = 0; i < n; i++) lk[i] = lr[i] = lc[i] = -2;
    for (int s = 0; s < na; s++) {
        int r, c;
        fa->fn(&r, &c, s / ea, s % ea, fa->param);
        lr[s] = r; lk[s] = c; side[s] = 0;
    }
    for (int s = 0; s < nb; s++) {
        int r, c;
        fb->fn(&r, &c, s / eb, s % eb, fb->param);
        lk[na + s] = r; lc[na + s] = c; side[na + s] = 1;
    }
    for (int s = 0; s < nc; s++) {
        int r, c;
        fd->fn(&r, &c, s / ec, s % ec, fd->param);
        lr[na + nb + s] = r; lc[na + nb + s] = c; side[na + nb + s] = 2;
    }
    mmp_status st = label_classes(ok, ufk, lk, side, n, fa->cols);
    if (st == MMP_STATUS_OK) st = label_classes(orow, ufr, lr, side, n, fa->rows);
    if (st == MMP_STATUS_OK) st = label_classes(ocol, ufc, lc, side, n, fb->cols);
    if (st != MMP_STATUS_OK) { free(buf); return st; }

    char source[sizeof cap->source];
    snprintf(source, sizeof source, "%s", cap->source);
    mmp_layout_capture_clear(cap);
    snprintf(cap->id, sizeof cap->id, "%s", doc->id);
    snprintf(cap->kind, sizeof cap->kind, "%s", doc->kind);
    snprintf(cap->source, sizeof cap->source, "%s", source);
    cap->threads = doc->threads;
    int idx[4];
    for (int f = 0; f < 4 && st == MMP_STATUS_OK; f++) {
        const mmp_layout_doc_frag *df = &doc->frags[f];
        st = mmp_layout_capture_add_frag(&idx[f], cap, df->name, df->rows, df->cols, df->elems_per_lane,
                                         df->elem_bits >= 32 ? 1 : 32 / df->elem_bits);
    }
    for (int s = 0; s < na && st == MMP_STATUS_OK; s++) {
        int placed = orow[s] >= 0 && ok[s] >= 0;
        st = mmp_layout_capture_add(cap, idx[0], s / ea, s % ea, placed ? orow[s] : -1, placed ? ok[s] : -1);
    }
    for (int s = 0; s < nb && st == MMP_STATUS_OK; s++) {
        int placed = ok[na + s] >= 0 && ocol[na + s] >= 0;
        st = mmp_layout_capture_add(cap, idx[1], s / eb, s % eb, placed ? ok[na + s] : -1, placed ? ocol[na + s] : -1);
    }
    for (int s = 0; s < nc && st == MMP_STATUS_OK; s++) {
        int d = cmap[s], placed = d >= 0 && d < nc && orow[na + nb + d] >= 0 && ocol[na + nb + d] >= 0;
        st = mmp_layout_capture_add(cap, idx[2], s / ec, s % ec, placed ? orow[na + nb + d] : -1,
                                    placed ? ocol[na + nb + d] : -1);
    }
    for (int s = 0; s < nc && st == MMP_STATUS_OK; s++) {
        int d = na + nb + s, placed = orow[d] >= 0 && ocol[d] >= 0;
        st = mmp_layout_capture_add(cap, idx[3], s / ec, s % ec, placed ? orow[d] : -1, placed ? ocol[d] : -1);
    }
    free(buf);
    return st;
}

/* slot index of (lane, elem) -> its slot record, per fragment */
static const mmp_layout_slot **slot_index(const mmp_layout_capture *cap, int f)
{
    size_t n = (size_t)cap->threads * (size_t)cap->frags[f].elems_per_lane;
    const mmp_layout_slot **ix = calloc(n ? n : 1, sizeof *ix);
    if (!ix) return NULL;
    for (size_t i = 0; i < cap->n_slots; i++) {
        const mmp_layout_slot *s = &cap->slots[i];
        if (s->frag == f) ix[(size_t)s->lane * cap->frags[f].elems_per_lane + s->elem] = s;
    }
    return ix;
}

mmp_status mmp_layout_pairs_from_capture(int32_t *pairs, int32_t *cmap, const mmp_layout_capture *cap)
{
    int fa = mmp_layout_capture_find_frag(cap, "A"), fb = mmp_layout_capture_find_frag(cap, "B"),
        fc = mmp_layout_capture_find_frag(cap, "C"), fd = mmp_layout_capture_find_frag(cap, "D");
    if (fa < 0 || fb < 0 || fc < 0 || fd < 0)
        return MMP_ERR(MMP_STATUS_INVALID, "capture %s: pairs need fragments A, B, C, D", cap->id);
    const mmp_layout_slot **ia = slot_index(cap, fa), **ib = slot_index(cap, fb), **ic = slot_index(cap, fc),
                          **id = slot_index(cap, fd);
    int rows = cap->frags[fd].rows, cols = cap->frags[fd].cols;
    int *dpos = malloc(sizeof(int) * (size_t)rows * (size_t)cols);
    mmp_status st = MMP_STATUS_OK;
    if (!ia || !ib || !ic || !id || !dpos) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory"); goto done; }
    int na = cap->threads * cap->frags[fa].elems_per_lane, nb = cap->threads * cap->frags[fb].elems_per_lane,
        nc = cap->threads * cap->frags[fc].elems_per_lane, nd = cap->threads * cap->frags[fd].elems_per_lane;
    for (int i = 0; i < rows * cols; i++) dpos[i] = -1;
    for (int s = 0; s < nd; s++) {
        const mmp_layout_slot *x = id[s];
        if (!x || x->row < 0 || x->row >= rows || x->col < 0 || x->col >= cols) continue;
        int *p = &dpos[x->row * cols + x->col];
        *p = *p == -1 ? s : -2;
    }
    for (int sa = 0; sa < na; sa++)
        for (int sb = 0; sb < nb; sb++) {
            const mmp_layout_slot *a = ia[sa], *b = ib[sb];
            int32_t v = -1;
            if (a && b && a->row >= 0 && a->col >= 0 && a->col == b->row && b->col >= 0 && a->row < rows &&
                b->col < cols)
                v = dpos[a->row * cols + b->col];
            pairs[(size_t)sa * nb + sb] = v;
        }
    for (int s = 0; s < nc; s++) {
        const mmp_layout_slot *c = ic[s];
        cmap[s] = c && c->row >= 0 && c->row < rows && c->col >= 0 && c->col < cols ? dpos[c->row * cols + c->col] : -1;
    }
done:
    free(ia); free(ib); free(ic); free(id); free(dpos);
    return st;
}

mmp_status mmp_layout_pairs_check(int64_t *mismatches, const int32_t *pairs, const int32_t *cmap,
                                  const mmp_layout_capture *cap)
{
    int fa = mmp_layout_capture_find_frag(cap, "A"), fb = mmp_layout_capture_find_frag(cap, "B"),
        fc = mmp_layout_capture_find_frag(cap, "C");
    if (fa < 0 || fb < 0 || fc < 0) return MMP_ERR(MMP_STATUS_INVALID, "capture %s: pairs need fragments A, B, C, D", cap->id);
    size_t np = (size_t)cap->threads * cap->frags[fa].elems_per_lane * cap->threads * cap->frags[fb].elems_per_lane,
           nc = (size_t)cap->threads * cap->frags[fc].elems_per_lane;
    int32_t *p2 = malloc(sizeof(int32_t) * (np + nc));
    if (!p2) return MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory");
    mmp_status st = mmp_layout_pairs_from_capture(p2, p2 + np, cap);
    int64_t bad = 0;
    for (size_t i = 0; st == MMP_STATUS_OK && i < np; i++) bad += p2[i] != pairs[i];
    for (size_t i = 0; st == MMP_STATUS_OK && i < nc; i++) bad += p2[np + i] != cmap[i];
    free(p2);
    *mismatches = bad;
    return st;
}

/* ---- analysis ------------------------------------------------------------------------------ */

static void analyse_frag(mmp_layout_frag_report *r, const mmp_layout_capture *cap, int f,
                         const mmp_layout_doc_frag *df, int threads, unsigned char *expect, int *count)
{
    const mmp_layout_frag *fr = &cap->frags[f];
    size_t cells = (size_t)fr->rows * fr->cols;
    memset(r, 0, sizeof *r);
    memset(count, 0, sizeof(int) * cells);
    int doc_ok = df && df->rows == fr->rows && df->cols == fr->cols && df->elems_per_lane == fr->elems_per_lane &&
                 threads == cap->threads;
    r->documented = df != NULL;
    if (doc_ok) {
        memset(expect, 0, cells);
        for (int l = 0; l < threads; l++)
            for (int e = 0; e < df->elems_per_lane; e++) {
                int row, col;
                if (df->fn(&row, &col, l, e, df->param) == 0 && row >= 0 && row < fr->rows && col >= 0 && col < fr->cols)
                    expect[(size_t)row * fr->cols + col] = 1;
            }
    } else {
        memset(expect, 1, cells);
    }
    for (size_t i = 0; i < cap->n_slots; i++) {
        const mmp_layout_slot *s = &cap->slots[i];
        if (s->frag != f) continue;
        r->slots++;
        if (s->row < 0 || s->col < 0) r->unplaced++;
        else if (s->row >= fr->rows || s->col >= fr->cols || !expect[(size_t)s->row * fr->cols + s->col]) r->out_of_range++;
        else count[(size_t)s->row * fr->cols + s->col]++;
        if (!doc_ok) continue;
        int drow, dcol;
        df->fn(&drow, &dcol, s->lane, s->elem, df->param);
        if (drow == s->row && dcol == s->col) continue;
        r->differences++;
        if (s->lane < 128) r->differing_lanes[s->lane / 32] |= 1u << (s->lane % 32);
        if (r->n_diffs < MMP_LAYOUT_MAX_DIFFS) {
            r->diffs[r->n_diffs].lane = s->lane; r->diffs[r->n_diffs].reg = s->reg;
            r->diffs[r->n_diffs].elem = s->elem; r->diffs[r->n_diffs].row = s->row;
            r->diffs[r->n_diffs].col = s->col; r->diffs[r->n_diffs].doc_row = drow;
            r->diffs[r->n_diffs].doc_col = dcol;
            r->n_diffs++;
        }
    }
    /* slots the capture lacks count as unplaced */
    int64_t want = (int64_t)cap->threads * fr->elems_per_lane;
    if (r->slots < want) r->unplaced += want - r->slots;
    if (df && !doc_ok) r->differences += r->slots ? r->slots : 1;  /* shape itself differs */
    for (size_t c = 0; c < cells; c++) {
        if (!expect[c]) continue;
        r->expected++;
        if (count[c]) r->covered++;
        if (count[c] > 1) r->duplicated++;
    }
    r->uncovered = r->expected - r->covered;
}

mmp_status mmp_layout_analyse(mmp_layout_report *rep, const mmp_layout_capture *cap)
{
    memset(rep, 0, sizeof *rep);
    const mmp_layout_doc *doc = mmp_layout_doc_find(cap->id);
    rep->documented = doc != NULL;
    rep->n_frags = cap->n_frags;
    rep->consistent = 1;
    for (int f = 0; f < cap->n_frags; f++) {
        const mmp_layout_frag *fr = &cap->frags[f];
        const mmp_layout_doc_frag *df = NULL;
        for (int k = 0; doc && k < doc->n_frags; k++)
            if (!strcmp(doc->frags[k].name, fr->name)) df = &doc->frags[k];
        size_t cells = (size_t)fr->rows * fr->cols;
        unsigned char *expect = malloc(cells);
        int *count = malloc(sizeof(int) * cells);
        if (!expect || !count) {
            free(expect); free(count);
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "layout: out of memory");
        }
        analyse_frag(&rep->frags[f], cap, f, df, doc ? doc->threads : cap->threads, expect, count);
        free(expect); free(count);
        const mmp_layout_frag_report *r = &rep->frags[f];
        if (r->uncovered || r->unplaced || r->out_of_range) rep->consistent = 0;
        rep->differences += r->differences;
    }
    return MMP_STATUS_OK;
}

char *mmp_layout_lanes_format(char *buf, size_t size, const uint32_t lanes[4])
{
    size_t used = 0;
    buf[0] = '\0';
    for (int l = 0; l < 128; l++) {
        if (!(lanes[l / 32] >> (l % 32) & 1u)) continue;
        int w = snprintf(buf + used, size - used, "%s%d", used ? ", " : "", l);
        if (w < 0 || (size_t)w >= size - used) break;
        used += (size_t)w;
    }
    return buf;
}
