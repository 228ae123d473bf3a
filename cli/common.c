/* common.c — what the document subcommands (report, diff, merge) share: loading a run document
 * (RUN.jsonl: a partial run), the output (a file written atomically, core/fileio.c, or the
 * standard output), error lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/report.h"

int mmp_cli_fail(mmp_status st, const char *cmd)
{
    fprintf(stderr, "mmaprobe %s: %s\n", cmd, mmp_error_last());
    return mmp_status_exit_code(st);
}

static void doc_usage_line(FILE *f, const char *cmd)
{
    if (strcmp(cmd, "report") == 0)
        fprintf(f, "usage: mmaprobe report RUN.json [--format text|md|junit|html|csv] [-o FILE]\n");
    else if (strcmp(cmd, "diff") == 0)
        fprintf(f, "usage: mmaprobe diff BASE.json NEW.json [--max-ratio-growth X] [--allow-missing] [--allow-skip]\n"
                   "                    [--format text|md] [-o FILE]\n"
                   "  exit 1 on a regression: a new FAIL/ERROR, |err|/bound grown past the factor (2), a base\n"
                   "  case missing from NEW (--allow-missing allows it), a PASS now skipped (--allow-skip)\n");
    else
        fprintf(f, "usage: mmaprobe merge A.json B.json ... -o ALL.json\n"
                   "  shards of one --shard i/N run; a missing shard makes the merged run incomplete\n");
}

int mmp_cli_doc_usage(const char *cmd, const char *msg, const char *arg)
{
    fprintf(stderr, "mmaprobe %s: %s%s%s\n", cmd, msg, arg ? ": " : "", arg ? arg : "");
    doc_usage_line(stderr, cmd);
    return MMP_EXIT_USAGE;
}

int mmp_cli_doc_help(const char *cmd, const char *what)
{
    printf("mmaprobe %s: %s\n", cmd, what);
    doc_usage_line(stdout, cmd);
    return MMP_EXIT_PASS;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

mmp_status mmp_cli_load_run(mmp_run *run, const char *path)
{
    mmp_run_init(run);
    mmp_status st = ends_with(path, ".jsonl") ? mmp_run_read_jsonl(run, path) : mmp_report_read_json(run, path);
    if (st == MMP_STATUS_OK && ends_with(path, ".jsonl")) run->complete = 0;
    return st;
}

mmp_status mmp_cli_write_out(const char *path, mmp_file_writer write, void *ctx)
{
    if (path) return mmp_file_write_atomic(path, write, ctx);
    mmp_status st = write(stdout, ctx);
    if (fflush(stdout) != 0 || ferror(stdout)) {   /* SIGPIPE is ignored: a closed pipe is EPIPE here */
        if (st == MMP_STATUS_OK) st = MMP_ERR(MMP_STATUS_IO, "cannot write the standard output: %s", strerror(errno));
        clearerr(stdout);
    }
    return st;
}
