/* render_probe_tables.c — one compact table per probe group, in text, Markdown or HTML:
 *   arith:  rows = instructions; columns = state, SASS opcode, hardware path, block (FMA) size,
 *           extra alignment bits, output rounding, alignment floor, subnormal inputs/outputs,
 *           unresolved features, replay mismatches (all vectors);
 *   layout: rows = captures; columns = kind, verdict, fragments, differences, differing lanes;
 *   memory: rows = kernels; columns = shared wavefronts (model, ideal), worst conflict ways,
 *           global sectors (model as L1TEX counts, ideal), measured method, the model's shared-load
 *           wavefronts beside the measured ones, measured global sectors, agreement.
 * Every figure comes from the typed results (probe.h); nothing is recomputed here. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "render.h"

#define NCOL_MAX 12

typedef struct table { FILE *out; int style, ncol; const int *width; } table;

static void cell(const table *t, int c, const char *s)
{
    char buf[600];
    size_t o = 0;
    if (t->style == MMP_PROBE_TABLE_TEXT) mmp_text_clean(buf, sizeof buf, s ? s : "");   /* no ESC to a terminal */
    else {
        for (; s && *s && o + 1 < sizeof buf; s++) buf[o++] = (unsigned char)*s < 0x20 ? ' ' : *s;
        buf[o] = '\0';
    }
    if (t->style == MMP_PROBE_TABLE_TEXT) {
        fprintf(t->out, c ? " %-*s" : "%-*s", t->width[c], buf);
        if (c == t->ncol - 1) fputc('\n', t->out);
    } else if (t->style == MMP_PROBE_TABLE_MD) {
        fputs(c ? " " : "| ", t->out);
        mmp_md_escape(t->out, buf);
        fputs(c == t->ncol - 1 ? " |\n" : " |", t->out);
    } else {
        fputs(c ? "<td>" : "<tr><td>", t->out);
        mmp_xml_escape(t->out, buf);
        fputs(c == t->ncol - 1 ? "</td></tr>\n" : "</td>", t->out);
    }
}

static void head(const table *t, const char *title, const char *const *names)
{
    if (t->style == MMP_PROBE_TABLE_TEXT) fprintf(t->out, "\n%s\n", title);
    else if (t->style == MMP_PROBE_TABLE_MD) fprintf(t->out, "\n### %s\n\n", title);
    else fprintf(t->out, "<h3>%s</h3>\n<table>\n<tr>", title);
    for (int c = 0; c < t->ncol; c++) {
        if (t->style == MMP_PROBE_TABLE_HTML) fprintf(t->out, "<th>%s</th>", names[c]);
        else cell(t, c, names[c]);
    }
    if (t->style == MMP_PROBE_TABLE_HTML) fputs("</tr>\n", t->out);
    if (t->style == MMP_PROBE_TABLE_MD) {
        for (int c = 0; c < t->ncol; c++) fputs(c ? "---|" : "|---|", t->out);
        fputc('\n', t->out);
    }
}

static void foot(const table *t)
{
    if (t->style == MMP_PROBE_TABLE_HTML) fputs("</table>\n", t->out);
}

static const char *tri(int v) { return v < 0 ? "-" : v ? "yes" : "NO"; }

static void arith_table(FILE *out, const mmp_arith_results *A, int style)
{
    static const char *const names[] = {"INSTRUCTION", "STATE", "SASS", "PATH", "BLOCK", "EXTRA BITS", "OUT ROUND",
                                        "FLOOR", "SUBNORMALS", "UNRESOLVED", "MISMATCHES"};
    static const int width[] = {24, 8, 28, 8, 5, 10, 9, 6, 10, 10, 16};
    table t = {out, style, 11, width};
    head(&t, "Arithmetic probes (one row per instruction)", names);
    for (size_t i = 0; i < A->n; i++) {
        const mmp_arith_result *a = &A->items[i];
        const mmp_arith_report *r = &a->rep;
        const mmp_model_params *p = &r->fitted;
        char b[11][160];
        memset(b, 0, sizeof b);
        snprintf(b[0], sizeof b[0], "%s", a->instruction);
        snprintf(b[1], sizeof b[1], "%s", mmp_probe_state_name(a->state));
        if (a->state != MMP_PROBE_STATE_ANALYSED) {
            snprintf(b[2], sizeof b[2], "%.150s", a->reason);
        } else {
            int unresolved = 0;
            for (int f = 0; f < r->nf; f++) unresolved += !r->f[f].ok;
            snprintf(b[2], sizeof b[2], "%s", r->sass);
            snprintf(b[3], sizeof b[3], "%s", r->native > 0 ? "native" : r->native == 0 ? "EMULATED" : "unknown");
            if (r->integer) {
                snprintf(b[4], sizeof b[4], "-");
                snprintf(b[5], sizeof b[5], "integer");
                snprintf(b[6], sizeof b[6], "%s", r->int_saturates ? "saturate" : "wrap");
                snprintf(b[7], sizeof b[7], "-");
                snprintf(b[8], sizeof b[8], "%s", r->int_stepwise ? "clamp/add" : "clamp once");
            } else {
                snprintf(b[4], sizeof b[4], "%d", p->block_size);
                snprintf(b[5], sizeof b[5], "%d", p->extra_align_bits);
                snprintf(b[6], sizeof b[6], "%s", p->out_round == MMP_ROUND_NEAREST_EVEN ? "rn" : "rz");
                snprintf(b[7], sizeof b[7], "%d", p->align_floor);
                snprintf(b[8], sizeof b[8], "in %s out %s", p->in_subnormals ? "kept" : "flush",
                         p->out_subnormals ? "kept" : "flush");
            }
            snprintf(b[9], sizeof b[9], "%d of %d", unresolved, r->nf);
            snprintf(b[10], sizeof b[10], "%zu/%zu", r->total_mismatches, r->n_total);
        }
        for (int c = 0; c < 11; c++) cell(&t, c, b[c]);
    }
    foot(&t);
}

static void layout_table(FILE *out, const mmp_layout_results *L, int style)
{
    static const char *const names[] = {"CAPTURE", "KIND", "VERDICT", "FRAGMENTS", "DIFFERENCES", "DIFFERING LANES"};
    static const int width[] = {34, 9, 21, 9, 11, 24};
    table t = {out, style, 6, width};
    head(&t, "Fragment layouts (one row per capture)", names);
    for (size_t i = 0; i < L->n; i++) {
        const mmp_layout_result *c = &L->items[i];
        char nf[16], nd[24], lanes[200] = "";
        snprintf(nf, sizeof nf, "%d", c->n_frags);
        snprintf(nd, sizeof nd, "%" PRId64, c->differences);
        for (int f = 0; f < c->n_frags; f++) {
            if (!c->frags[f].rep.differences) continue;
            char l[160];
            size_t u = strlen(lanes);
            snprintf(lanes + u, sizeof lanes - u, "%s%s: %s", u ? "; " : "", c->frags[f].frag.name,
                     mmp_layout_lanes_format(l, sizeof l, c->frags[f].rep.differing_lanes));
        }
        cell(&t, 0, c->id);
        cell(&t, 1, c->kind);
        cell(&t, 2, mmp_layout_verdict_name(c->consistent, c->documented, c->differences));
        cell(&t, 3, nf);
        cell(&t, 4, nd);
        cell(&t, 5, lanes[0] ? lanes : "-");
    }
    foot(&t);
    char s[200];
    snprintf(s, sizeof s, "layout: %d match the PTX ISA, %d differ, %d inconsistent, %d discovered, %d skipped, %d errors",
             (int)L->n_match, (int)L->n_differ, (int)L->n_inconsistent, (int)L->n_discovered, (int)L->n_skipped,
             (int)L->n_errors);
    if (style == MMP_PROBE_TABLE_HTML) fprintf(out, "<p class=\"muted\">%s</p>\n", s);
    else fprintf(out, "%s%s\n", style == MMP_PROBE_TABLE_MD ? "\n" : "", s);
}

static void fmt_num(char *b, size_t n, double x)
{
    if (isnan(x)) snprintf(b, n, "-");
    else snprintf(b, n, "%.1f", x);
}

static void memory_table(FILE *out, const mmp_memory_results *M, int style)
{
    static const char *const names[] = {"KERNEL", "SMEM WF", "IDEAL", "WAYS", "GMEM SECTORS", "IDEAL", "METHOD",
                                        "MODEL LD WF", "MEAS. LD WF", "MEAS. SECTORS", "AGREE"};
    static const int width[] = {36, 8, 6, 4, 12, 6, 7, 11, 11, 13, 9};
    table t = {out, style, 11, width};
    head(&t, "Memory maps (one row per kernel; per CTA per K step)", names);
    for (size_t i = 0; i < M->n_kernels; i++) {
        const mmp_memory_kernel_result *k = &M->kernels[i];
        const mmp_memory_report *r = &k->analysis;
        char b[11][64];
        snprintf(b[1], sizeof b[1], "%" PRId64, r->smem_wavefronts);
        snprintf(b[2], sizeof b[2], "%" PRId64, r->smem_ideal);
        snprintf(b[3], sizeof b[3], "%d", (int)r->worst_ways);
        snprintf(b[4], sizeof b[4], "%" PRId64, r->gmem_l1tex_sectors);
        snprintf(b[5], sizeof b[5], "%" PRId64, r->gmem_ideal);
        snprintf(b[6], sizeof b[6], "%s", k->measured ? k->method : "-");
        snprintf(b[7], sizeof b[7], "%" PRId64, r->smem_ld_wavefronts);   /* what MEAS. LD WF is judged against */
        fmt_num(b[8], sizeof b[8], k->measured ? k->smem_ld_wavefronts : NAN);
        fmt_num(b[9], sizeof b[9], k->measured ? k->gmem_sectors : NAN);
        snprintf(b[10], sizeof b[10], "%s/%s", tri(k->agree), tri(k->gmem_agree));
        cell(&t, 0, r->kernel);
        for (int c = 1; c < 11; c++) cell(&t, c, b[c]);
    }
    foot(&t);
    char s[1200];
    snprintf(s, sizeof s, "memory: counters %s%s%s%s; %d disagreements", M->method, M->why[0] ? " (" : "",
             M->why, M->why[0] ? ")" : "", (int)M->disagreements);
    if (style == MMP_PROBE_TABLE_HTML) {
        fputs("<p class=\"muted\">", out);
        mmp_xml_escape(out, s);
        fputs("</p>\n", out);
    } else {
        fputs(style == MMP_PROBE_TABLE_MD ? "\n" : "", out);
        mmp_text_fputs(out, s);
        fputc('\n', out);
    }
}

void mmp_probe_tables(FILE *out, const mmp_probe_results *p, int style)
{
    if (!p) return;
    if (p->arith.present) arith_table(out, &p->arith, style);
    if (p->layout.present) layout_table(out, &p->layout, style);
    if (p->memory.present) memory_table(out, &p->memory, style);
}

void mmp_report_print_probes(FILE *out, const mmp_run *run, int markdown)
{
    mmp_probe_tables(out, run->probes, markdown ? MMP_PROBE_TABLE_MD : MMP_PROBE_TABLE_TEXT);
}
