/* fuzz_tool_args.c — libFuzzer harness for the argument parsers of `mmaprobe env`, `probe`,
 * `report`, `diff` and `merge` (cli/args_tools.c); nothing is opened or run.
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_tool_args
 * Run:                 build-fuzz/tests/fuzz_tool_args -jobs=1 -max_total_time=600 -max_len=512 \
 *                          fuzz-work/tool_args tests/fuzz/corpus/tool_args
 * Input: the first byte picks the subcommand (mod 5: env, probe, report, diff, merge), the rest
 * is split at NUL or newline bytes into arguments. Properties: never crashes; success gives a
 * consistent configuration (a device ordinal in 0..1023 or none, every count within its bound,
 * the documents each subcommand needs); failure is MMP_STATUS_INVALID with a one-line message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_argv.h"
#include "cli/args.h"

static void bad_message(mmp_status st)
{
    const char *m = mmp_error_last();
    if (st != MMP_STATUS_INVALID || !m[0] || strchr(m, '\n')) abort();
}

/* A value the probe parser passed on must be within the option's bound. */
static void check_count(const char *opt, const char *v, int64_t lo, int64_t hi)
{
    int64_t n;
    if (mmp_parse_int64(&n, v, lo, hi) != MMP_STATUS_OK) {
        (void)opt;
        abort();
    }
}

static void check_probe(const mmp_probe_args *a, int argc)
{
    if (a->groups < 1 || a->groups > 7 || a->device < -1 || a->device > 1023) abort();
    if (a->json && !a->json[0]) abort();
    if (a->n_paths < 0 || a->n_paths > 16) abort();
    for (int i = 0; i < a->n_paths; i++)
        if (!a->path_opt[i] || !a->path_val[i] || !a->path_val[i][0]) abort();
    for (int g = 0; g < 3; g++) {
        char **v = a->sub_argv[g];
        if (!v || a->sub_argc[g] < 1 || a->sub_argc[g] > argc + 1 || v[a->sub_argc[g]]) abort();
        for (int i = 1; i < a->sub_argc[g];) {   /* option, value pairs; three options are flags */
            const char *o = v[i];
            if (!strcmp(o, "--quiet") || !strcmp(o, "--no-measure") || !strcmp(o, "--calib-child")) { i++; continue; }
            if (i + 1 >= a->sub_argc[g]) abort();   /* a value option without its value */
            if (!strcmp(o, "--random") || !strcmp(o, "--capture-keep")) check_count(o, v[i + 1], 0, MMP_PROBE_MAX_RANDOM);
            else if (!strcmp(o, "--threads")) check_count(o, v[i + 1], 1, 32);
            else if (!strcmp(o, "--size")) check_count(o, v[i + 1], 64, 16384);
            else if (!strcmp(o, "--device")) check_count(o, v[i + 1], 0, 1023);
            i += 2;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    static const char *const cmds[] = {"env", "probe", "report", "diff", "merge"};
    const char *cmd = cmds[data[0] % 5];
    char *argv[FUZZ_ARGV_MAX + 1], *buf;
    int argc = fuzz_argv(argv, &buf, cmd, data, size);
    if (argc < 0) return 0;
    /* a fuzz harness, not library code: abort() is how libFuzzer is told a property broke */
    mmp_status st;
    if (!strcmp(cmd, "env")) {
        mmp_env_args a;
        st = mmp_env_args_parse(&a, argc, argv);
        if (st == MMP_STATUS_OK && (a.device < -1 || a.device > 1023)) abort();
        if (st != MMP_STATUS_OK) bad_message(st);
    } else if (!strcmp(cmd, "probe")) {
        mmp_probe_args a;
        st = mmp_probe_args_parse(&a, argc, argv);
        if (st == MMP_STATUS_OK) {
            check_probe(&a, argc);
            mmp_probe_args_free(&a);
        } else {
            bad_message(st);
            for (int g = 0; g < 3; g++) if (a.sub_argv[g]) abort();   /* nothing left to free */
        }
    } else {
        mmp_doc_args a;
        st = mmp_doc_args_parse(&a, cmd, argc, argv);
        if (st == MMP_STATUS_OK) {
            if (!a.inputs) abort();
            if (!a.help) {
                if (!strcmp(cmd, "report") && a.n_inputs != 1) abort();
                if (!strcmp(cmd, "diff") && a.n_inputs != 2) abort();
                if (!strcmp(cmd, "merge") && (a.n_inputs < 1 || !a.output)) abort();
            }
            if (a.output && !a.output[0]) abort();
            if (!(a.max_ratio_growth >= 1) || !isfinite(a.max_ratio_growth)) abort();
            if ((unsigned)a.format >= (unsigned)MMP_REPORT_FORMAT_COUNT_) abort();
            for (size_t i = 0; i < a.n_inputs; i++)
                if (!a.inputs[i]) abort();
            mmp_doc_args_free(&a);
        } else {
            bad_message(st);
            if (a.inputs) abort();
        }
    }
    free(buf);
    return 0;
}
