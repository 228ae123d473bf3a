/* cli_validate.c — placeholder until its issue lands: says so and exits 2. */
#include <stdio.h>
#include "mmaprobe/cli.h"

int mmp_cli_list(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe list: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

int mmp_cli_validate(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe validate: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

