/* env.c — `mmaprobe env`: the environment header every output starts with (GPU, CC, driver,
 * CUDA, cuBLAS, MPFR, the CPU reference's BLAS, git SHA); exit 3 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"

int mmp_cli_env(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mmaprobe env [--device N]\n  print the environment header; exit 3 without a CUDA device\n");
        return MMP_EXIT_PASS;
    }
    int device = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            char *end;
            long d = strtol(argv[++i], &end, 10);
            if (*end || d < 0) {
                fprintf(stderr, "mmaprobe env: --device needs a non-negative integer (got '%s')\n", argv[i]);
                return MMP_EXIT_USAGE;
            }
            device = (int)d;
        } else {
            fprintf(stderr, "mmaprobe env: unknown option '%s'\n", argv[i]);
            return MMP_EXIT_USAGE;
        }
    }
    mmp_env e;
    mmp_status st = mmp_env_capture(&e, device, 0, 0, NULL);
    snprintf(e.blas, sizeof e.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &e, "");
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : mmp_status_exit_code(st);
}
