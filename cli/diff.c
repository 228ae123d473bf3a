/* diff.c — `mmaprobe diff BASE.json NEW.json [--max-ratio-growth X] [--allow-missing]
 * [--allow-skip] [--format text|md] [-o FILE]`: regressions of NEW against BASE (mmp_report_diff:
 * new failures, worse ratios, and by default missing cases and PASS -> SKIP). Exit 1 on a
 * regression; 2 for usage errors and malformed or mismatched inputs, 3 when the output cannot
 * be written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "mmaprobe/report.h"

typedef struct {
    size_t regressions;
    const mmp_run *base, *cur;
    const mmp_diff_options *opt;
} diff_job;

static mmp_status compare(FILE *out, void *ctx)
{
    diff_job *j = ctx;
    return mmp_report_diff(out, &j->regressions, j->base, j->cur, j->opt);
}

int mmp_cli_diff(int argc, char **argv)
{
    mmp_doc_args a;   /* parsed and checked in cli/args_tools.c (fuzzed) */
    if (mmp_doc_args_parse(&a, "diff", argc, argv) != MMP_STATUS_OK)
        return mmp_cli_doc_usage("diff", mmp_error_last(), NULL);
    if (a.help) {
        mmp_doc_args_free(&a);
        return mmp_cli_doc_help("diff", "compare two run documents");
    }
    const char *paths[2] = {a.inputs[0], a.inputs[1]}, *outp = a.output;
    mmp_diff_options opt = {a.max_ratio_growth, a.markdown, a.allow_missing, a.allow_skip};
    mmp_doc_args_free(&a);
    mmp_status st = outp ? mmp_file_check_writable(outp) : MMP_STATUS_OK;   /* before the work */
    if (st != MMP_STATUS_OK) return mmp_cli_fail(st, "diff");
    mmp_run base, cur;
    st = mmp_cli_load_run(&base, paths[0]);
    if (st == MMP_STATUS_OK) st = mmp_cli_load_run(&cur, paths[1]);
    else mmp_run_init(&cur);
    diff_job job = {0, &base, &cur, &opt};
    if (st == MMP_STATUS_OK) st = mmp_cli_write_out(outp, compare, &job);   /* -o: atomic */
    mmp_run_clear(&base);
    mmp_run_clear(&cur);
    if (st != MMP_STATUS_OK) return mmp_cli_fail(st, "diff");
    return job.regressions ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}
