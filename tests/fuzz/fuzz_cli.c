/* fuzz_cli.c — libFuzzer harness for the argument parser of `mmaprobe validate` and `list`
 * (mmp_validate_args_parse, cli/args.c over cli/opts.c); nothing is run.
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_cli
 * Run:                 build-fuzz/reports/fuzz_cli -jobs=1 -max_total_time=600 -max_len=512 \
 *                          fuzz-work/cli tests/fuzz/corpus/cli
 * Input: the first byte picks the subcommand (even: validate, odd: list), the rest is split at
 * NUL or newline bytes into arguments. Properties: never crashes; success gives a consistent
 * configuration (0 <= shard < count, finite positive timeout, tolerances >= 0); failure is
 * MMP_STATUS_INVALID with a one-line message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_argv.h"
#include "cli/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const char *cmd = data[0] & 1 ? "list" : "validate";
    char *argv[FUZZ_ARGV_MAX + 1], *buf;
    int argc = fuzz_argv(argv, &buf, cmd, data, size);
    if (argc < 0) return 0;
    mmp_validate_args a;
    mmp_status st = mmp_validate_args_parse(&a, cmd, argc, argv);
    /* a fuzz harness, not library code: abort() is how libFuzzer is told a property broke */
    if (st == MMP_STATUS_OK) {
        if (a.o.shard_count < 1 || a.o.shard_index < 0 || a.o.shard_index >= a.o.shard_count) abort();
        if (!(a.o.timeout_s > 0) || !isfinite(a.o.timeout_s)) abort();
        if (!(a.o.tol.atol >= 0) || !(a.o.tol.rtol >= 0) || !(a.o.tol.ulps >= 0)) abort();
        if (a.o.device < 0 || !a.suite || !a.output || a.n_plugins > MMP_MAX_PLUGINS) abort();
    } else {
        const char *m = mmp_error_last();
        if (st != MMP_STATUS_INVALID || !m[0] || strchr(m, '\n')) abort();
    }
    free(buf);
    return 0;
}
