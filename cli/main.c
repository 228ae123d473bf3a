/* mmaprobe.c — the command-line entry point: a table of subcommands. Only this main() exits. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mmp_gitsha.h"   /* MMP_GIT_SHA, written at build time (cmake/gitsha.cmake) */
#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/status.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"env", mmp_cli_env, "print the environment: GPU, compute capability, driver, CUDA, cuBLAS, MPFR, git SHA"},
    {"list", mmp_cli_list, "list built-in kernels, suites and case IDs (--filter GLOB)"},
    {"validate", mmp_cli_validate, "run a suite over kernels; PASS/FAIL per case; JSON results"},
    {"bench", mmp_cli_bench, "validate kernels, then time those that pass against cuBLAS and the peak"},
    {"probe", mmp_cli_probe, "characterise the tensor cores: fragment layouts, arithmetic, memory"},
    {"report", mmp_cli_report, "render a run's JSON as text, md, junit or html"},
    {"diff", mmp_cli_diff, "compare two runs; exit 1 on a regression"},
    {"merge", mmp_cli_merge, "merge shard reports into one"},
};
#define N_SUBCOMMANDS (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: mmaprobe <command> [options]   (mmaprobe <command> --help for each)\n\n");
    for (size_t i = 0; i < N_SUBCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\nexit codes: 0 all pass, 1 a failure found, 2 usage or input error,\n"
                 "            3 environment (no device, missing library, unwritable output), 4 internal error\n");
}

int main(int argc, char **argv)
{
    mmp_blas_reexec_single(argv);   /* before anything forks: no OpenBLAS worker thread alive */
    /* A closed pipe or a file-size limit is a write error, handled where the write is (the run
     * goes on and writes its report), not a signal that ends the program. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        /* No arguments: say what this machine can do; exit 3 when there is no GPU. */
        mmp_env env;
        mmp_status st = mmp_env_capture(&env, -1, 0, argc, argv);
        snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
        usage(stdout);
        printf("\n");
        mmp_env_print(stdout, &env, "# ");
        if (st == MMP_STATUS_NO_DEVICE) {
            printf("\nNo CUDA device here (%s): host kernels, the CPU reference, report/diff/merge and\n"
                   "the analysis of stored probe captures work; GPU validation and probes need a device.\n",
                   env.no_device_reason);
            return MMP_EXIT_ENVIRONMENT;
        }
        return MMP_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return MMP_EXIT_PASS;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mmaprobe %s (%s)\n", MMP_VERSION, MMP_GIT_SHA);
        return MMP_EXIT_PASS;
    }
    for (size_t i = 0; i < N_SUBCOMMANDS; i++)
        if (!strcmp(argv[1], subcommands[i].name)) return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "mmaprobe: unknown command '%s' (try 'mmaprobe --help')\n", argv[1]);
    return MMP_EXIT_USAGE;
}
