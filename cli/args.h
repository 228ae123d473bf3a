/* cli/args.h — the arguments of `mmaprobe validate` and `mmaprobe list`, parsed without
 * running anything (so the parser can be tested and fuzzed on its own: tests/fuzz/fuzz_cli.c).
 *
 *   mmp_validate_args a;
 *   mmp_status st = mmp_validate_args_parse(&a, "validate", argc, argv);  // argv[0] = "validate"
 *   if (st != MMP_STATUS_OK) { fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last()); return 2; }
 *
 * Every bad argument is MMP_STATUS_INVALID with a one-line message naming it (exit 2). The
 * strings in a point into argv.
 */
#ifndef MMAPROBE_CLI_ARGS_H
#define MMAPROBE_CLI_ARGS_H

#include "mmaprobe/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MMP_MAX_PLUGINS 16

typedef struct mmp_validate_args {
    const char *suite, *filter, *output;
    uint64_t seed;
    int mutants;
    int help;                      /* --help / -h seen: print usage, run nothing */
    int show_cases;                /* list: --suite or --filter given */
    const char *plugins[MMP_MAX_PLUGINS];
    int n_plugins;
    const char *sanitize;          /* memcheck|racecheck|initcheck|synccheck, or NULL */
    mmp_runner_options o;
} mmp_validate_args;

mmp_status mmp_validate_args_parse(mmp_validate_args *a, const char *cmd, int argc, char **argv);
/* The kernels the arguments name: built-in (and mutants with --mutants) plus every plugin's,
 * plugins checked (a bad one is MMP_STATUS_INVALID/PARSE: exit 2); the table stays valid. */
mmp_status mmp_validate_args_kernels(size_t *nk, const mmp_validate_args *c);
const mmp_kernel_desc *const *mmp_validate_args_kernel_table(void);
/* The suite's cases over those kernels (mmp_cases_build with the filter and seed), then the
 * built-in operator cases of a built-in suite (mmp_cases_add_operators). */
mmp_status mmp_validate_args_cases(mmp_case **cases, size_t *n, const mmp_validate_args *c);

/* Non-empty decimal integer in [lo, hi], nothing else (no sign unless lo < 0, no spaces);
 * MMP_STATUS_INVALID (message set, *out untouched) otherwise. */
mmp_status mmp_parse_int64(int64_t *out, const char *s, int64_t lo, int64_t hi);
/* A finite number (strtod syntax, nothing after it); MMP_STATUS_INVALID otherwise. */
mmp_status mmp_parse_finite(double *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
