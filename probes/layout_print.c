/* layout_print.c — text tables, text pictures and JSON for layout captures. */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/layout.h"
#include "mmaprobe/json.h"

#define PICTURE_CHUNK 32   /* columns per picture block, so wide matrices stay readable */

static const char *verdict(const mmp_layout_report *rep)
{
    if (!rep->consistent) return "inconsistent";
    if (!rep->documented) return "discovered";
    return rep->differences ? "differs-from-ptx-isa" : "matches-ptx-isa";
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


void mmp_layout_print_json(FILE *out, const mmp_layout_capture *cap, const mmp_layout_report *rep)
{
    const mmp_layout_doc *doc = mmp_layout_doc_find(cap->id);
    fprintf(out, "{\"id\":");
    mmp_json_quote(out, cap->id);
    fprintf(out, ",\"kind\":");
    mmp_json_quote(out, cap->kind);
    fprintf(out, ",\"instruction\":");
    if (doc) mmp_json_quote(out, doc->ptx); else fprintf(out, "null");
    fprintf(out, ",\"ptx_isa_section\":");
    if (doc) mmp_json_quote(out, doc->section); else fprintf(out, "null");
    fprintf(out, ",\"source\":");
    mmp_json_quote(out, cap->source);
    fprintf(out, ",\"threads\":%d,\"documented\":%s,\"consistent\":%s,\"differences\":%lld,\"verdict\":\"%s\",\"fragments\":[",
            cap->threads, rep->documented ? "true" : "false", rep->consistent ? "true" : "false",
            (long long)rep->differences, verdict(rep));
    for (int f = 0; f < cap->n_frags; f++) {
        const mmp_layout_frag *fr = &cap->frags[f];
        const mmp_layout_frag_report *r = &rep->frags[f];
        fprintf(out, "%s{\"name\":", f ? "," : "");
        mmp_json_quote(out, fr->name);
        fprintf(out, ",\"rows\":%d,\"cols\":%d,\"elems_per_lane\":%d,\"elems_per_reg\":%d,\"expected\":%lld,"
                     "\"covered\":%lld,\"uncovered\":%lld,\"duplicated\":%lld,\"unplaced\":%lld,\"out_of_range\":%lld,"
                     "\"documented\":%s,\"differences\":%lld,\"differing_lanes\":[",
                fr->rows, fr->cols, fr->elems_per_lane, fr->elems_per_reg, (long long)r->expected,
                (long long)r->covered, (long long)r->uncovered, (long long)r->duplicated, (long long)r->unplaced,
                (long long)r->out_of_range, r->documented ? "true" : "false", (long long)r->differences);
        int first = 1;
        for (int l = 0; l < 128; l++)
            if (r->differing_lanes[l / 32] >> (l % 32) & 1u) {
                fprintf(out, "%s%d", first ? "" : ",", l);
                first = 0;
            }
        fprintf(out, "],\"diffs\":[");
        for (int d = 0; d < r->n_diffs; d++)
            fprintf(out, "%s{\"lane\":%d,\"reg\":%d,\"elem\":%d,\"row\":%d,\"col\":%d,\"doc_row\":%d,\"doc_col\":%d}",
                    d ? "," : "", r->diffs[d].lane, r->diffs[d].reg, r->diffs[d].elem, r->diffs[d].row,
                    r->diffs[d].col, r->diffs[d].doc_row, r->diffs[d].doc_col);
        fprintf(out, "]");
        int *lane, *elem, *count;
        if (owners(&lane, &elem, &count, cap, f) == 0) {
            for (int pass = 0; pass < 3; pass++) {
                fprintf(out, ",\"%s\":[", pass == 0 ? "owner" : pass == 1 ? "reg" : "holders");
                for (int rr = 0; rr < fr->rows; rr++) {
                    fprintf(out, "%s[", rr ? "," : "");
                    for (int c = 0; c < fr->cols; c++) {
                        size_t k = (size_t)rr * fr->cols + c;
                        int v = pass == 0 ? lane[k] : pass == 1 ? (elem[k] < 0 ? -1 : elem[k] / fr->elems_per_reg) : count[k];
                        fprintf(out, "%s%d", c ? "," : "", v);
                    }
                    fprintf(out, "]");
                }
                fprintf(out, "]");
            }
            free(lane); free(elem); free(count);
        }
        fprintf(out, "}");
    }
    fprintf(out, "]}");
}
