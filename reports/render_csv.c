/* render_csv.c — one row per case (RFC 4180: fields with a comma, quote or line break quoted,
 * quotes doubled), for spreadsheets and pandas, as cutlass_profiler and rocblas-bench offer:
 *   id,kernel,family,precision,m,n,k,lda,ldb,ldd,dist,seed,suite,verdict,reasons,err_over_bound,
 *   max_ulp,max_abs_err,max_rel_err,n_mpfr,n_exact,n_dot,time_total_ms,time_kernel_ms,
 *   time_reference_ms,message
 * Numbers are printed with %.17g (round-trip) or as integers; a SKIP's figures are empty, not 0.
 * Text fields lose control bytes, and one that a spreadsheet would take for a formula (=, +, -,
 * @ first) starts with a quote mark ('), OWASP's advice against CSV injection. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/report.h"

static void text(FILE *out, const char *s)
{
    int quote = strpbrk(s, ",\"\r\n") != NULL, formula = s[0] && strchr("=+-@", s[0]);
    if (quote || formula) fputc('"', out);
    if (formula) fputc('\'', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"') fputs("\"\"", out);
        else if (*p >= 0x20 && *p != 0x7f) fputc(*p, out);
        else if (*p == '\n' || *p == '\t') fputc(' ', out);
    }
    if (quote || formula) fputc('"', out);
}

static void number(FILE *out, double x, int have)
{
    if (!have) return;
    if (isnan(x)) fputs("nan", out);
    else if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", out);
    else fprintf(out, "%.17g", x);
}

void mmp_report_print_csv(FILE *out, const mmp_run *run)
{
    fputs("id,kernel,family,precision,m,n,k,lda,ldb,ldd,dist,seed,suite,verdict,reasons,err_over_bound,max_ulp,"
          "max_abs_err,max_rel_err,n_mpfr,n_exact,n_dot,time_total_ms,time_kernel_ms,time_reference_ms,message\r\n",
          out);
    for (size_t i = 0; i < run->n_cases; i++) {
        const mmp_case_result *c = &run->cases[i];
        const int measured = c->verdict == MMP_VERDICT_PASS || c->verdict == MMP_VERDICT_FAIL;
        char reasons[512];
        mmp_reason_format(reasons, sizeof reasons, c->reasons);
        text(out, c->id); fputc(',', out);
        text(out, c->kernel); fputc(',', out);
        text(out, c->family); fputc(',', out);
        text(out, c->precision);
        fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", c->m, c->n, c->k,
                c->lda, c->ldb, c->ldd);
        text(out, c->dist);
        fprintf(out, ",%" PRIu64 ",", c->seed);
        text(out, c->suite); fputc(',', out);
        text(out, mmp_verdict_name(c->verdict)); fputc(',', out);
        text(out, c->reasons ? reasons : ""); fputc(',', out);
        number(out, c->metrics.max_ratio_det, measured); fputc(',', out);
        number(out, c->metrics.max_ulp, measured); fputc(',', out);
        number(out, c->metrics.max_abs_err, measured); fputc(',', out);
        number(out, c->metrics.max_rel_err, measured);
        fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", c->n_mpfr, c->n_exact, c->n_dot);
        number(out, c->time_total_ms, c->verdict != MMP_VERDICT_SKIP || c->time_total_ms > 0); fputc(',', out);
        number(out, c->time_kernel_ms, measured); fputc(',', out);
        number(out, c->time_reference_ms, measured); fputc(',', out);
        text(out, c->message);
        fputs("\r\n", out);
    }
}
