/* mmaprobe/cli.h — subcommands of the mmaprobe program; each returns a process exit code
 * (MMP_EXIT_*) and never exits itself. suites/mmaprobe.c dispatches from a table.
 *
 *   mmaprobe env                       environment header (GPU, CC, driver, CUDA, cuBLAS, MPFR, SHA)
 *   mmaprobe list [--filter G]         kernels and suites            (suites/cli_validate.c)
 *   mmaprobe validate [...]            run suites, write JSON         (suites/cli_validate.c)
 *   mmaprobe probe [...]               layout / arithmetic / memory   (probes/cli_probe.c)
 *   mmaprobe report RUN.json [...]     render text|md|junit|html      (reports/cli_report.c)
 *   mmaprobe diff BASE.json NEW.json   regressions                    (reports/cli_report.c)
 *   mmaprobe merge A.json B.json -o X  merge shards                   (reports/cli_report.c)
 */
#ifndef MMAPROBE_CLI_H
#define MMAPROBE_CLI_H

#include <stdio.h>
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

int mmp_cli_env(int argc, char **argv);
int mmp_cli_list(int argc, char **argv);
int mmp_cli_validate(int argc, char **argv);
int mmp_cli_probe(int argc, char **argv);
int mmp_cli_report(int argc, char **argv);
int mmp_cli_diff(int argc, char **argv);
int mmp_cli_merge(int argc, char **argv);

/* Environment capture (suites/env.c). CUDA is queried in a forked child so that the calling
 * process never holds a CUDA context (it may fork later). device < 0: device 0 if present.
 * Always fills what it can; returns MMP_STATUS_NO_DEVICE (with e->no_device_reason) when no
 * CUDA device is usable. argc/argv fill e->command (may be 0/NULL). */
mmp_status mmp_env_capture(mmp_env *e, int device, uint64_t seed, int argc, char **argv);
/* The environment as the header lines every output starts with ("# gpu: ..."). */
void mmp_env_print(FILE *out, const mmp_env *e, const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
