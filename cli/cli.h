/* cli/cli.h — subcommands of the mmaprobe program; each returns a process exit code
 * (MMP_EXIT_*) and never exits itself. cli/main.c dispatches from a table; each subcommand
 * lives in its own file of cli/.
 *
 *   mmaprobe env                       environment header (GPU, CC, driver, CUDA, cuBLAS, MPFR, SHA)
 *   mmaprobe list [--filter G]         kernels and suites            (cli/list.c)
 *   mmaprobe validate [...]            run suites, write JSON         (cli/validate.c)
 *   mmaprobe bench --filter G [...]    validate, then time            (cli/bench.c)
 *   mmaprobe probe [...]               layout / arithmetic / memory   (cli/probe.c)
 *   mmaprobe report RUN.json [...]     render text|md|junit|html      (cli/report.c)
 *   mmaprobe diff BASE.json NEW.json   regressions                    (cli/diff.c)
 *   mmaprobe merge A.json B.json -o X  merge shards                   (cli/merge.c)
 */
#ifndef MMAPROBE_CLI_H
#define MMAPROBE_CLI_H

#include <stdio.h>
#include "mmaprobe/core.h"
#include "mmaprobe/report.h"
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

int mmp_cli_env(int argc, char **argv);
int mmp_cli_list(int argc, char **argv);
int mmp_cli_validate(int argc, char **argv);
int mmp_cli_bench(int argc, char **argv);
int mmp_cli_probe(int argc, char **argv);
int mmp_cli_report(int argc, char **argv);
int mmp_cli_diff(int argc, char **argv);
int mmp_cli_merge(int argc, char **argv);

/* Shared by report, diff and merge (cli/common.c). */
int mmp_cli_fail(mmp_status st, const char *cmd);                      /* prints, returns the exit code */
int mmp_cli_doc_usage(const char *cmd, const char *msg, const char *arg);  /* prints, returns 2 */
int mmp_cli_doc_help(const char *cmd, const char *what);   /* --help: usage on stdout, returns 0 */
mmp_status mmp_cli_load_run(mmp_run *run, const char *path);           /* .json, or .jsonl (partial) */
/* write(out, ctx) to path atomically (a regular file only: core/fileio.c), or to stdout when
 * path is NULL; a write error is MMP_STATUS_IO (exit 3) and leaves the previous file. */
mmp_status mmp_cli_write_out(const char *path, mmp_file_writer write, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
