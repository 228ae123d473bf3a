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

enum { G_ARITH = 1, G_LAYOUT = 2, G_MEMORY = 4 };

/* Every option a probe group takes, and which groups get it (rows, not cases). */
static const struct {
    const char *name;
    int takes_value;
    int groups;
} probe_options[] = {
    {"--capture-dir", 1, G_ARITH},   {"--capture-keep", 1, G_ARITH},  {"--synthetic", 1, G_ARITH},
    {"--instr", 1, G_ARITH},         {"--random", 1, G_ARITH},        {"--seed", 1, G_ARITH},
    {"--threads", 1, G_ARITH},       {"--from-capture", 1, G_ARITH | G_LAYOUT},
    {"--write-capture", 1, G_LAYOUT}, {"--write-synthetic", 1, G_LAYOUT}, {"--quiet", 0, G_LAYOUT},
    {"--device", 1, G_LAYOUT},       {"--filter", 1, G_LAYOUT | G_MEMORY},
    {"--no-measure", 0, G_MEMORY},   {"--ncu", 1, G_MEMORY},          {"--size", 1, G_MEMORY},
    {"--counters", 1, G_MEMORY},
    {"--calib-child", 0, G_MEMORY},  {"--launch-child", 1, G_MEMORY},
};
#define N_PROBE_OPTIONS (sizeof probe_options / sizeof probe_options[0])

int mmp_cli_probe(int argc, char **argv)
{
    int on = 0;
    const char *json_path = NULL;
    int device = -1;
    char **sub_argv[3];
    int sub_argc[3] = {1, 1, 1};
    for (int g = 0; g < 3; g++) {
        sub_argv[g] = calloc((size_t)argc + 2, sizeof(char *));
        if (!sub_argv[g]) return MMP_EXIT_INTERNAL;
        sub_argv[g][0] = argv[0];
    }
    int rc = MMP_EXIT_PASS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--arith")) on |= G_ARITH;
        else if (!strcmp(a, "--layout")) on |= G_LAYOUT;
        else if (!strcmp(a, "--memory")) on |= G_MEMORY;
        else if (!strcmp(a, "--json")) {
            if (i + 1 >= argc) { fprintf(stderr, "mmaprobe probe: --json needs a file\n"); rc = MMP_EXIT_USAGE; goto out; }
            json_path = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            goto out;
        } else {
            size_t k = 0;
            while (k < N_PROBE_OPTIONS && strcmp(a, probe_options[k].name)) k++;
            if (k == N_PROBE_OPTIONS || (probe_options[k].takes_value && i + 1 >= argc)) {
                fprintf(stderr, "mmaprobe probe: unknown or incomplete option %s (see --help)\n", a);
                rc = MMP_EXIT_USAGE;
                goto out;
            }
            if (!strcmp(a, "--device")) device = atoi(argv[i + 1]);
            for (int g = 0; g < 3; g++) {
                if (!(probe_options[k].groups & (1 << g))) continue;
                sub_argv[g][sub_argc[g]++] = argv[i];
                if (probe_options[k].takes_value) sub_argv[g][sub_argc[g]++] = argv[i + 1];
            }
            if (probe_options[k].takes_value) i++;
        }
    }
    if (!on) on = G_ARITH | G_LAYOUT; /* --memory profiles kernels (ncu): only when asked */
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
    if (on & G_ARITH) { sub = mmp_probe_arith_run(&run.probes->arith, stdout, sub_argc[0], sub_argv[0]); if (sub > rc) rc = sub; }
    if (on & G_LAYOUT) { sub = mmp_probe_layout_run(&run.probes->layout, stdout, sub_argc[1], sub_argv[1]); if (sub > rc) rc = sub; }
    if (on & G_MEMORY) { sub = mmp_probe_memory_run(&run.probes->memory, stdout, sub_argc[2], sub_argv[2]); if (sub > rc) rc = sub; }
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
    for (int g = 0; g < 3; g++) free(sub_argv[g]);
    return rc;
}
