/* report.c — `mmaprobe report RUN.json [--format text|md|junit|html] [-o FILE]`: render a run
 * document (RUN.jsonl: a partial run). Exit 0 (rendered, whatever the verdicts); 2 for usage
 * errors and malformed inputs, 3 when the output cannot be written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mmaprobe/report.h"

int mmp_cli_report(int argc, char **argv)
{
    const char *in = NULL, *outp = NULL, *v;
    mmp_report_format fmt = MMP_REPORT_TEXT;
    for (int i = 1; i < argc; i++) {
        if ((v = mmp_cli_opt_value(argc, argv, &i, "--format"))) {
            if (mmp_report_format_from_name(&fmt, v) != MMP_STATUS_OK) return mmp_cli_doc_usage("report", "unknown format (text, md, junit, html)", v);
        } else if ((v = mmp_cli_opt_value(argc, argv, &i, "-o")) || (v = mmp_cli_opt_value(argc, argv, &i, "--output"))) {
            if (!*v) return mmp_cli_doc_usage("report", "-o needs a file name", NULL);
            outp = v;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            mmp_cli_doc_usage("report", "render a run document", NULL);
            return MMP_EXIT_PASS;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return mmp_cli_doc_usage("report", "unknown option", argv[i]);
        } else if (in) {
            return mmp_cli_doc_usage("report", "one run document at a time", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!in) return mmp_cli_doc_usage("report", "missing the run document", NULL);
    mmp_run run;
    mmp_status st = mmp_cli_load_run(&run, in);
    if (st != MMP_STATUS_OK) { mmp_run_clear(&run); return mmp_cli_fail(st, "report"); }
    FILE *f = mmp_cli_open_out(outp, &st);
    if (f) st = mmp_cli_close_out(f, outp, mmp_report_render(f, &run, fmt));
    mmp_run_clear(&run);
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : mmp_cli_fail(st, "report");
}
