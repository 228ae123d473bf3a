/* report.c — `mmaprobe report RUN.json [--format text|md|junit|html|csv] [-o FILE]`: render a run
 * document (RUN.jsonl: a partial run). Exit 0 (rendered, whatever the verdicts); 2 for usage
 * errors and malformed inputs, 3 when the output cannot be written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "mmaprobe/report.h"

typedef struct {
    const mmp_run *run;
    mmp_report_format fmt;
} render_job;

static mmp_status render(FILE *out, void *ctx)
{
    const render_job *j = ctx;
    return mmp_report_render(out, j->run, j->fmt);
}

int mmp_cli_report(int argc, char **argv)
{
    mmp_doc_args a;   /* parsed and checked in cli/args_tools.c (fuzzed) */
    if (mmp_doc_args_parse(&a, "report", argc, argv) != MMP_STATUS_OK)
        return mmp_cli_doc_usage("report", mmp_error_last(), NULL);
    if (a.help) {
        mmp_doc_args_free(&a);
        return mmp_cli_doc_help("report", "render a run document");
    }
    const char *in = a.inputs[0], *outp = a.output;
    mmp_report_format fmt = a.format;
    mmp_doc_args_free(&a);
    mmp_status st = outp ? mmp_file_check_writable(outp) : MMP_STATUS_OK;   /* before the work */
    if (st != MMP_STATUS_OK) return mmp_cli_fail(st, "report");
    mmp_run run;
    st = mmp_cli_load_run(&run, in);
    if (st != MMP_STATUS_OK) { mmp_run_clear(&run); return mmp_cli_fail(st, "report"); }
    render_job job = {&run, fmt};
    st = mmp_cli_write_out(outp, render, &job);   /* -o: atomic, the previous file stays on an error */
    mmp_run_clear(&run);
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : mmp_cli_fail(st, "report");
}
