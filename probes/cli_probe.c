/* cli_probe.c — placeholder until its issue lands: says so and exits 2. */
#include <stdio.h>
#include "mmaprobe/cli.h"

int mmp_cli_probe(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "mmaprobe probe: not implemented yet\n");
    return MMP_EXIT_USAGE;
}

