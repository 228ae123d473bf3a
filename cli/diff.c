/* diff.c — `mmaprobe diff BASE.json NEW.json [--max-ratio-growth X] [--format text|md] [-o FILE]`:
 * regressions of NEW against BASE. Exit 1 on a regression; 2 for usage errors and malformed or
 * mismatched inputs, 3 when the output cannot be written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mmaprobe/report.h"

int mmp_cli_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *outp = NULL, *v;
    mmp_diff_options opt = {2.0, 0};
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if ((v = mmp_cli_opt_value(argc, argv, &i, "--max-ratio-growth"))) {
            char *e;
            errno = 0;
            opt.max_ratio_growth = strtod(v, &e);
            if (!*v || *e || errno || !isfinite(opt.max_ratio_growth) || opt.max_ratio_growth < 1)
                return mmp_cli_doc_usage("diff", "--max-ratio-growth needs a finite factor >= 1", v);
        } else if ((v = mmp_cli_opt_value(argc, argv, &i, "--format"))) {
            if (strcmp(v, "md") == 0 || strcmp(v, "markdown") == 0) opt.markdown = 1;
            else if (strcmp(v, "text") == 0) opt.markdown = 0;
            else return mmp_cli_doc_usage("diff", "unknown format (text, md)", v);
        } else if ((v = mmp_cli_opt_value(argc, argv, &i, "-o"))) {
            if (!*v) return mmp_cli_doc_usage("diff", "-o needs a file name", NULL);
            outp = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return mmp_cli_doc_usage("diff", "unknown option", argv[i]);
        } else if (np < 2) {
            paths[np++] = argv[i];
        } else {
            return mmp_cli_doc_usage("diff", "more than two run documents", argv[i]);
        }
    }
    if (np != 2) return mmp_cli_doc_usage("diff", "needs BASE.json and NEW.json", NULL);
    mmp_run base, cur;
    mmp_status st = mmp_cli_load_run(&base, paths[0]);
    if (st == MMP_STATUS_OK) st = mmp_cli_load_run(&cur, paths[1]);
    else mmp_run_init(&cur);
    size_t regressions = 0;
    if (st == MMP_STATUS_OK) {
        FILE *f = mmp_cli_open_out(outp, &st);
        if (f) st = mmp_cli_close_out(f, outp, mmp_report_diff(f, &regressions, &base, &cur, &opt));
    }
    mmp_run_clear(&base);
    mmp_run_clear(&cur);
    if (st != MMP_STATUS_OK) return mmp_cli_fail(st, "diff");
    return regressions ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}
