/* render_text.c — the terminal table: environment header, one line per precision x kernel,
 * then every FAIL/ERROR case with its reasons and message, then the totals. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/report.h"

/* A terminal must not receive control characters from a run document (escape sequences). */
static const char *clean(char *buf, size_t size, const char *s) { return mmp_text_clean(buf, size, s); }

#define CLEAN_FIELD(f) clean_field((f), sizeof(f))
static void clean_field(char *f, size_t size)
{
    char tmp[1200];
    mmp_text_clean(tmp, size < sizeof tmp ? size : sizeof tmp, f);
    memcpy(f, tmp, strlen(tmp) + 1);
}

/* The environment's strings as a terminal may show them. */
static void clean_env(mmp_env *e)
{
    CLEAN_FIELD(e->gpu); CLEAN_FIELD(e->driver); CLEAN_FIELD(e->runtime); CLEAN_FIELD(e->cublas);
    CLEAN_FIELD(e->mpfr); CLEAN_FIELD(e->check); CLEAN_FIELD(e->blas); CLEAN_FIELD(e->git_sha);
    CLEAN_FIELD(e->hostname); CLEAN_FIELD(e->started); CLEAN_FIELD(e->command); CLEAN_FIELD(e->no_device_reason);
}

void mmp_report_print_text(FILE *out, const mmp_run *run)
{
    char c1[600], c2[600], c3[600];
    mmp_env env = run->env;
    clean_env(&env);
    mmp_env_print(out, &env, "# ");
    for (size_t i = 0; i < run->n_shards; i++)
        fprintf(out, "# shard %zu: %s (device %d) on %s, started %s\n", i, clean(c1, sizeof c1, run->shards[i].gpu),
                run->shards[i].device, clean(c2, sizeof c2, run->shards[i].hostname),
                clean(c3, sizeof c3, run->shards[i].started));
    if (!run->complete && run->interrupted_by[0])
        fprintf(out, "# PARTIAL run (interrupted by %s)\n", clean(c1, sizeof c1, run->interrupted_by));
    else if (!run->complete)
        fprintf(out, "# PARTIAL run (the run could not go on: see the cases' messages)\n");
    if (run->probes && run->n_cases == 0) {      /* a probe document: its tables, no empty case table */
        mmp_report_print_probes(out, run, 0);
        return;
    }
    mmp_summary_row *rows = NULL;
    size_t n = 0;
    if (mmp_report_summarise(&rows, &n, run) != MMP_STATUS_OK) {
        fprintf(out, "(out of memory summarising the run)\n");
        return;
    }
    fprintf(out, "%-7s %-20s %-36s %6s %5s %5s %5s %5s %11s %11s %10s\n", "VERDICT", "PRECISION", "KERNEL",
            "CASES", "PASS", "FAIL", "ERR", "SKIP", "ERR/BOUND", "ERR/PROB", "MAX ULP");
    for (size_t i = 0; i < n; i++) {
        const mmp_summary_row *s = &rows[i];
        fprintf(out, "%-7s %-20s %-36s %6" PRId64 " %5" PRId64 " %5" PRId64 " %5" PRId64 " %5" PRId64,
                mmp_verdict_name(s->verdict), clean(c1, sizeof c1, s->precision), clean(c2, sizeof c2, s->kernel),
                s->cases, s->pass, s->fail, s->error, s->skip);
        if (s->pass + s->fail == 0) fprintf(out, " %11s %11s %10s\n", "-", "-", "-");   /* nothing measured */
        else fprintf(out, " %11.3g %11.3g %10.4g\n", s->worst_ratio_det, s->worst_ratio_prob, s->max_ulp);
    }
    free(rows);
    int printed = 0;
    for (size_t i = 0; i < run->n_cases; i++) {
        const mmp_case_result *c = &run->cases[i];
        if (c->verdict != MMP_VERDICT_FAIL && c->verdict != MMP_VERDICT_ERROR) continue;
        if (!printed++) fprintf(out, "\nFailures:\n");
        char reasons[512];
        mmp_reason_format(reasons, sizeof reasons, c->reasons);
        fprintf(out, "  %-5s %s  [%s]", mmp_verdict_name(c->verdict), clean(c1, sizeof c1, c->id), reasons);
        if (c->verdict == MMP_VERDICT_FAIL && c->metrics.worst_i >= 0)
            fprintf(out, "  err/bound %.3g at (%" PRId64 ",%" PRId64 ")", c->metrics.max_ratio_det,
                    c->metrics.worst_i, c->metrics.worst_j);
        fprintf(out, "\n");
        if (c->message[0]) {
            fputs("        ", out);
            mmp_text_fputs(out, c->message);
            fputc('\n', out);
        }
    }
    int64_t counts[MMP_VERDICT_COUNT_];
    mmp_report_counts(run, counts);
    fprintf(out, "\n%zu cases: %" PRId64 " PASS, %" PRId64 " FAIL, %" PRId64 " ERROR, %" PRId64 " SKIP\n",
            run->n_cases, counts[MMP_VERDICT_PASS], counts[MMP_VERDICT_FAIL], counts[MMP_VERDICT_ERROR],
            counts[MMP_VERDICT_SKIP]);
    double stages[MMP_STAGE_COUNT_] = {0};
    for (size_t i = 0; i < run->n_cases; i++)
        for (int s = 0; s < MMP_STAGE_COUNT_; s++) stages[s] += run->cases[i].time_stage_ms[s];
    mmp_stage_print(out, stages);
    mmp_report_print_probes(out, run, 0);
}
