/* layout_print.c — text tables and text pictures of layout captures, and their typed results
 * (what the run document holds). */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/layout.h"

#define PICTURE_CHUNK 32   /* columns per picture block, so wide matrices stay readable */

const char *mmp_layout_verdict_name(int consistent, int documented, int64_t differences)
{
    if (!consistent) return "inconsistent";
    if (!documented) return "discovered";
    return differences ? "differs-from-ptx-isa" : "matches-ptx-isa";
}

static const char *verdict(const mmp_layout_report *rep)
{
    return mmp_layout_verdict_name(rep->consistent, rep->documented, rep->differences);
}

/* First owner (lane, elem) and holder count of every cell of fragment f. */
static int owners(int **lane, int **elem, int **count, const mmp_layout_capture *cap, int f)
{
    const mmp_layout_frag *fr = &cap->frags[f];
    size_t cells = (size_t)fr->rows * fr->cols;
    *lane = malloc(sizeof(int) * cells);
    *elem = malloc(sizeof(int) * cells);
    *count = calloc(cells, sizeof(int));
    if (!*lane || !*elem || !*count) {
        free(*lane); free(*elem); free(*count);
        return -1;
    }
    for (size_t c = 0; c < cells; c++) (*lane)[c] = (*elem)[c] = -1;
    for (size_t i = 0; i < cap->n_slots; i++) {
        const mmp_layout_slot *s = &cap->slots[i];
        if (s->frag != f || s->row < 0 || s->col < 0 || s->row >= fr->rows || s->col >= fr->cols) continue;
        size_t c = (size_t)s->row * fr->cols + s->col;
        if ((*count)[c]++ == 0) {
            (*lane)[c] = s->lane;
            (*elem)[c] = s->elem;
        }
    }
    return 0;
}

void mmp_layout_print_picture(FILE *out, const mmp_layout_capture *cap, int f)
{
    const mmp_layout_frag *fr = &cap->frags[f];
    int *lane, *elem, *count;
    if (owners(&lane, &elem, &count, cap, f) != 0) {
        fprintf(out, "  (picture: out of memory)\n");
        return;
    }
    int w = cap->threads > 99 ? 4 : 3;
    for (int pass = 0; pass < 2; pass++) {
        fprintf(out, "  %s %s: %s ('.' unheld, '*' also held by another lane/element)\n", cap->id, fr->name,
                pass ? "element index i (a_i) in the owner; register = i / elems_per_reg" : "owning lane of each element");
        for (int c0 = 0; c0 < fr->cols; c0 += PICTURE_CHUNK) {
            int c1 = c0 + PICTURE_CHUNK < fr->cols ? c0 + PICTURE_CHUNK : fr->cols;
            fprintf(out, "  %*s", 5, "");
            for (int c = c0; c < c1; c++) fprintf(out, "%*d ", w, c);
            fprintf(out, "\n");
            for (int r = 0; r < fr->rows; r++) {
                fprintf(out, "  %4d ", r);
                for (int c = c0; c < c1; c++) {
                    size_t k = (size_t)r * fr->cols + c;
                    if (!count[k]) fprintf(out, "%*s ", w, ".");
                    else fprintf(out, "%*d%c", w, pass ? elem[k] : lane[k], count[k] > 1 ? '*' : ' ');
                }
                fprintf(out, "\n");
            }
            if (c1 < fr->cols) fprintf(out, "\n");
        }
    }
    free(lane); free(elem); free(count);
}

static void print_duplicates(FILE *out, const mmp_layout_capture *cap, int f, int limit)
{
    const mmp_layout_frag *fr = &cap->frags[f];
    int *lane, *elem, *count;
    if (owners(&lane, &elem, &count, cap, f) != 0) return;
    int shown = 0;
    for (int r = 0; r < fr->rows && shown < limit; r++)
        for (int c = 0; c < fr->cols && shown < limit; c++) {
            if (count[(size_t)r * fr->cols + c] < 2) continue;
            fprintf(out, "    duplicate (%d,%d) held by", r, c);
            for (size_t i = 0; i < cap->n_slots; i++) {
                const mmp_layout_slot *s = &cap->slots[i];
                if (s->frag == f && s->row == r && s->col == c)
                    fprintf(out, " lane %d reg %d elem %d;", s->lane, s->reg, s->elem);
            }
            fprintf(out, "\n");
            shown++;
        }
    free(lane); free(elem); free(count);
}

void mmp_layout_print_text(FILE *out, const mmp_layout_capture *cap, const mmp_layout_report *rep)
{
    const mmp_layout_doc *doc = mmp_layout_doc_find(cap->id);
    fprintf(out, "\n== %s (%s, %d threads): %s\n", cap->id, cap->kind, cap->threads, verdict(rep));
    if (doc) fprintf(out, "   instruction: %s\n   documented: PTX ISA %s\n", doc->ptx, doc->section);
    fprintf(out, "   source: %s\n", cap->source);
    fprintf(out, "   %-18s %9s %5s %5s %8s %8s %6s %8s %6s %7s %s\n", "fragment", "rows x cols", "/lane", "/reg",
            "expected", "covered", "dupl", "unplaced", "range", "differs", "differing lanes");
    for (int f = 0; f < cap->n_frags; f++) {
        const mmp_layout_frag *fr = &cap->frags[f];
        const mmp_layout_frag_report *r = &rep->frags[f];
        char lanes[600], dims[24];
        snprintf(dims, sizeof dims, "%dx%d", fr->rows, fr->cols);
        fprintf(out, "   %-18s %11s %5d %5d %8lld %8lld %6lld %8lld %6lld %7s %s\n", fr->name, dims, fr->elems_per_lane,
                fr->elems_per_reg, (long long)r->expected, (long long)r->covered, (long long)r->duplicated,
                (long long)r->unplaced, (long long)r->out_of_range,
                r->documented ? (r->differences ? "YES" : "no") : "n/a",
                r->differences ? mmp_layout_lanes_format(lanes, sizeof lanes, r->differing_lanes) : "");
        for (int d = 0; d < r->n_diffs; d++)
            fprintf(out, "    difference: %s lane %d reg %d elem %d holds (%d,%d); PTX ISA says (%d,%d)\n", fr->name,
                    r->diffs[d].lane, r->diffs[d].reg, r->diffs[d].elem, r->diffs[d].row, r->diffs[d].col,
                    r->diffs[d].doc_row, r->diffs[d].doc_col);
        if (r->differences > r->n_diffs)
            fprintf(out, "    ... %lld differences in all\n", (long long)r->differences);
        if (r->duplicated) print_duplicates(out, cap, f, 4);
    }
    for (int f = 0; f < cap->n_frags; f++) mmp_layout_print_picture(out, cap, f);
}


mmp_status mmp_layout_result_fill(mmp_layout_result *out, const mmp_layout_capture *cap,
                                  const mmp_layout_report *rep)
{
    memset(out, 0, sizeof *out);
    const mmp_layout_doc *doc = mmp_layout_doc_find(cap->id);
    snprintf(out->id, sizeof out->id, "%s", cap->id);
    snprintf(out->kind, sizeof out->kind, "%s", cap->kind);
    if (doc) {
        snprintf(out->instruction, sizeof out->instruction, "%s", doc->ptx);
        snprintf(out->section, sizeof out->section, "%s", doc->section);
    }
    snprintf(out->source, sizeof out->source, "%s", cap->source);
    out->threads = cap->threads;
    out->documented = rep->documented;
    out->consistent = rep->consistent;
    out->differences = rep->differences;
    out->n_frags = cap->n_frags < MMP_LAYOUT_MAX_FRAGS ? cap->n_frags : MMP_LAYOUT_MAX_FRAGS;
    for (int f = 0; f < out->n_frags; f++) {
        mmp_layout_frag_result *fr = &out->frags[f];
        fr->frag = cap->frags[f];
        fr->rep = rep->frags[f];
        int *lane, *elem, *count;
        if (owners(&lane, &elem, &count, cap, f) != 0) {
            mmp_layout_result_clear(out);
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory for the fragment grids", cap->id);
        }
        size_t cells = (size_t)fr->frag.rows * fr->frag.cols;
        fr->owner = malloc(cells * sizeof *fr->owner);
        fr->reg = malloc(cells * sizeof *fr->reg);
        if (fr->owner && fr->reg)
            for (size_t k = 0; k < cells; k++) {
                fr->owner[k] = lane[k];
                fr->reg[k] = elem[k] < 0 ? -1 : elem[k] / (fr->frag.elems_per_reg > 0 ? fr->frag.elems_per_reg : 1);
            }
        free(lane); free(elem); free(count);
        if (!fr->owner || !fr->reg) {
            mmp_layout_result_clear(out);
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory for the fragment grids", cap->id);
        }
    }
    return MMP_STATUS_OK;
}
