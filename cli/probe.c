/* cli_probe.c — `mmaprobe probe [--arith] [--layout] [--memory] [--json FILE] [--capture-dir D]
 *                               [--from-capture D] [arith options, see probes/arith_cli.c:
 *                               --synthetic, --instr, --random, --seed, --capture-keep, --threads]`
 *
 * Runs the chosen probe groups (arith and layout when none is named), prints the environment
 * header, each group's text and the compact result tables to stdout, and collects the groups'
 * typed results (probe.h) into one run document (kind "probe") that --json FILE writes
 * atomically (mmp_report_write_json). Exit: 0 pass, 1 a probe found a mismatch or failed,
 * 2 usage, 3 no device / unwritable output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/probe.h"
#include "mmaprobe/report.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mmaprobe probe [--arith] [--layout] [--memory] [--json FILE] [--device N]\n"
               "  arith:  [--capture-dir D] [--from-capture D] [--synthetic GPU] [--instr ID[,ID...]]\n"
               "          [--random N] [--seed S] [--capture-keep N] [--threads N]\n"
               "  layout: [--filter GLOB] [--from-capture D] [--write-capture D] [--write-synthetic D] [--quiet]\n"
               "  memory: [--filter GLOB] [--no-measure] [--counters auto|cupti|ncu|clock] [--ncu PATH] [--size N]\n"
               "  With no group named: --arith --layout (--memory runs a profiler, so it is asked for).\n"
               "  The JSON file is a run document (kind \"probe\"): `mmaprobe report` renders it.\n");
}

int mmp_cli_probe(int argc, char **argv)
{
    /* every value and every path checked before any probe runs (cli/args_tools.c, args_files.c) */
    mmp_probe_args pa;
    mmp_status ast = mmp_probe_args_parse(&pa, argc, argv);
    if (ast == MMP_STATUS_OK && !pa.help) {
        ast = mmp_probe_args_check_files(&pa);
        if (ast != MMP_STATUS_OK) mmp_probe_args_free(&pa);
    }
    if (ast != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
        return mmp_status_exit_code(ast);
    }
    int rc = MMP_EXIT_PASS, on = pa.groups, device = pa.device;
    const char *json_path = pa.json;
    int *sub_argc = pa.sub_argc;
    char ***sub_argv = pa.sub_argv;
    if (pa.help) {
        usage(stdout);
        goto out;
    }
    if (json_path) {   /* a regular file (or none yet), before any probe runs */
        mmp_status wst = mmp_file_check_writable(json_path);
        if (wst != MMP_STATUS_OK) {
            fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
            rc = mmp_status_exit_code(wst);
            goto out;
        }
    }
    mmp_env env;
    mmp_env_capture(&env, device, 0, argc, argv);
    snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &env, "# ");
    mmp_run run;
    mmp_run_init(&run);
    run.env = env;
    snprintf(run.kind, sizeof run.kind, "probe");
    run.complete = 1;
    run.probes = malloc(sizeof *run.probes);
    if (!run.probes) { rc = MMP_EXIT_INTERNAL; goto out; }
    mmp_probe_results_init(run.probes);
    int sub;
    if (on & MMP_PROBE_GROUP_ARITH) { sub = mmp_probe_arith_run(&run.probes->arith, stdout, sub_argc[0], sub_argv[0]); if (sub > rc) rc = sub; }
    if (on & MMP_PROBE_GROUP_LAYOUT) { sub = mmp_probe_layout_run(&run.probes->layout, stdout, sub_argc[1], sub_argv[1]); if (sub > rc) rc = sub; }
    if (on & MMP_PROBE_GROUP_MEMORY) { sub = mmp_probe_memory_run(&run.probes->memory, stdout, sub_argc[2], sub_argv[2]); if (sub > rc) rc = sub; }
    mmp_report_print_probes(stdout, &run, 0);
    if (json_path) {
        mmp_status st = mmp_report_write_json(json_path, &run);
        if (st != MMP_STATUS_OK) {
            fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
            if (rc < mmp_status_exit_code(st)) rc = mmp_status_exit_code(st);
        }
    }
    mmp_run_clear(&run);
out:
    mmp_probe_args_free(&pa);
    return rc;
}
