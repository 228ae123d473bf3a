/* env.c — `mmaprobe env`: the environment header every output starts with (GPU, CC, driver,
 * CUDA, cuBLAS, MPFR, the CPU reference's BLAS, git SHA); exit 3 without a CUDA device. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"

int mmp_cli_env(int argc, char **argv)
{
    mmp_env_args a;
    if (mmp_env_args_parse(&a, argc, argv) != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe env: %s (try 'mmaprobe env --help')\n", mmp_error_last());
        return MMP_EXIT_USAGE;
    }
    if (a.help) {
        printf("usage: mmaprobe env [--device N]\n  print the environment header; exit 3 without a CUDA device\n");
        return MMP_EXIT_PASS;
    }
    int device = a.device;
    mmp_env e;
    mmp_status st = mmp_env_capture(&e, device, 0, 0, NULL);
    snprintf(e.blas, sizeof e.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &e, "");
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : mmp_status_exit_code(st);
}
