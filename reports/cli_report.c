/* cli_report.c — placeholder until its issue lands: says so and exits 2. */
#include <stdio.h>
#include "mmaprobe/cli.h"

int mmp_cli_report(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe report: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

int mmp_cli_diff(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe diff: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

int mmp_cli_merge(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe merge: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

