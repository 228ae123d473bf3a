/* merge.c — `mmaprobe merge A.json B.json ... -o ALL.json`: join shards' run documents. Exit 0;
 * 2 for usage errors and malformed or mismatched inputs, 3 when the output cannot be written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "mmaprobe/report.h"

int mmp_cli_merge(int argc, char **argv)
{
    mmp_doc_args a;   /* parsed and checked in cli/args_tools.c (fuzzed) */
    if (mmp_doc_args_parse(&a, "merge", argc, argv) != MMP_STATUS_OK)
        return mmp_cli_doc_usage("merge", mmp_error_last(), NULL);
    if (a.help) {
        mmp_doc_args_free(&a);
        return mmp_cli_doc_help("merge", "join shards' run documents");
    }
    const char *outp = a.output;
    const char **names = a.inputs;   /* owned here from now on: freed below */
    size_t n = a.n_inputs;
    mmp_status st = mmp_file_check_writable(outp);   /* a regular file (or none yet), before the work */
    if (st != MMP_STATUS_OK) { free(names); return mmp_cli_fail(st, "merge"); }
    mmp_run *runs = calloc(n, sizeof *runs);
    const mmp_run **ptrs = calloc(n, sizeof *ptrs);
    st = runs && ptrs ? MMP_STATUS_OK : MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    size_t loaded = 0;
    for (size_t i = 0; st == MMP_STATUS_OK && i < n; i++) {
        st = mmp_cli_load_run(&runs[i], names[i]);
        loaded = i + 1;
        ptrs[i] = &runs[i];
    }
    mmp_run out;
    mmp_run_init(&out);
    if (st == MMP_STATUS_OK) st = mmp_report_merge(&out, ptrs, names, n);
    if (st == MMP_STATUS_OK) st = mmp_report_write_json(outp, &out);
    if (st == MMP_STATUS_OK) {
        int64_t counts[MMP_VERDICT_COUNT_];
        mmp_report_counts(&out, counts);
        fprintf(stderr, "mmaprobe merge: %zu runs, %zu cases (%lld FAIL, %lld ERROR) -> %s%s%s\n", n, out.n_cases,
                (long long)counts[MMP_VERDICT_FAIL], (long long)counts[MMP_VERDICT_ERROR], outp,
                out.complete ? "" : "; INCOMPLETE: ", out.complete ? "" : out.interrupted_by);
    }
    mmp_run_clear(&out);
    for (size_t i = 0; i < loaded; i++) mmp_run_clear(&runs[i]);
    free(runs);
    free(ptrs);
    free(names);
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : mmp_cli_fail(st, "merge");
}
