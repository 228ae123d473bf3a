/* cli/args.h — the arguments of every subcommand, parsed without running anything (so the
 * parsers can be tested and fuzzed on their own: tests/fuzz/fuzz_cli.c, fuzz_tool_args.c):
 * validate and list here (cli/args.c), env, probe, report, diff and merge in cli/args_tools.c,
 * the files the options name checked before anything runs in cli/args_files.c. Every parser is
 * a table of options over getopt_long (cli/opts.h: the same rules for every subcommand).
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

#include "mmaprobe/report.h"
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
    int require_device;            /* --require-device: exit 3 unless a device kernel's case ran */
    const char *case_id;           /* --case ID: that one case, found in the suite given or a built-in one */
    int64_t maxfail;               /* --maxfail N / -x (1): stop after N FAIL/ERROR cases (0: never) */
    int heatmaps;                  /* --heatmaps failing (0, default) | all (1) | none (2): which cases keep theirs */
    int with_builtins;             /* --with-builtins: with --plugin, the built-in kernels too (else only
                                      the plugins' kernels run, unless --filter or --case chooses) */
    int suite_given;               /* --suite named */
    char filter_buf[4096];         /* several --filter: joined with ',' */
    char rerun[2048];              /* the options a re-run of one case needs (shell-quoted, each
                                      after a space): all but those choosing cases, outputs, stops */
    size_t rerun_len;              /* its length; >= sizeof rerun: cut */
    mmp_runner_options o;
} mmp_validate_args;

mmp_status mmp_validate_args_parse(mmp_validate_args *a, const char *cmd, int argc, char **argv);
/* The kernels the arguments name: built-in (and mutants with --mutants) plus every plugin's,
 * plugins checked (a bad one is MMP_STATUS_INVALID/PARSE: exit 2); the table stays valid. */
mmp_status mmp_validate_args_kernels(size_t *nk, const mmp_validate_args *c);
const mmp_kernel_desc *const *mmp_validate_args_kernel_table(void);
/* The suite's cases over those kernels (mmp_cases_build with the filter and seed), then the
 * built-in operator cases of a built-in suite (mmp_cases_add_operators). --case ID: the seed
 * from the ID's /sSEED, the case of exactly that ID in the suite named (if any), then smoke,
 * edge and full: the first that has it. */
mmp_status mmp_validate_args_cases(mmp_case **cases, size_t *n, mmp_validate_args *c);   /* --case: sets c->suite */

/* --acc-model and any other input file validate's options name, checked before anything runs:
 * a GPU of the model table, or a probe JSON (*.json, a regular file) with an accumulator model.
 * MMP_STATUS_INVALID with the reason (exit 2); MMP_STATUS_IO for a file that exists but cannot
 * be read (exit 3). Opens files: not for the fuzzer. */
mmp_status mmp_validate_args_check_inputs(const mmp_validate_args *a);
/* --save-failures DIR made (with its parents) and writable, before anything runs; MMP_STATUS_IO
 * naming the reason otherwise (exit 3). */
mmp_status mmp_validate_args_make_dirs(const mmp_validate_args *a);

/* ---- mmaprobe env [--device N] ---- */
typedef struct mmp_env_args {
    int help;
    int device;                    /* -1: none named */
} mmp_env_args;
mmp_status mmp_env_args_parse(mmp_env_args *a, int argc, char **argv);

/* ---- mmaprobe probe (the groups' options: cli/probe.c's usage) ---- */
enum { MMP_PROBE_GROUP_ARITH = 1, MMP_PROBE_GROUP_LAYOUT = 2, MMP_PROBE_GROUP_MEMORY = 4 };
#define MMP_PROBE_MAX_RANDOM 1000000   /* --random, --capture-keep: vectors per instruction */
typedef struct mmp_probe_args {
    int groups;                    /* MMP_PROBE_GROUP_* named (arith and layout when none is) */
    int help;
    int device;                    /* --device N, or -1 */
    const char *json;              /* --json FILE, or NULL */
    int sub_argc[3];               /* each group's options (arith, layout, memory), argv[0] first */
    char **sub_argv[3];            /* NULL-terminated; freed by mmp_probe_args_free */
    const char *path_opt[16], *path_val[16];  /* the file- and directory-valued options, in order */
    int n_paths;
} mmp_probe_args;
/* Every value checked (counts within their bounds, known instructions and GPUs, --counters);
 * MMP_STATUS_INVALID naming the option otherwise. Touches no file. */
mmp_status mmp_probe_args_parse(mmp_probe_args *a, int argc, char **argv);
/* The paths the options name: --ncu an executable file, --from-capture an existing directory
 * (exit 2 otherwise); --capture-dir / --write-capture / --write-synthetic a directory or one
 * that can be made (exit 3 otherwise). */
mmp_status mmp_probe_args_check_files(const mmp_probe_args *a);
void mmp_probe_args_free(mmp_probe_args *a);

/* ---- mmaprobe report | diff | merge (one parser, cmd says which) ---- */
typedef struct mmp_doc_args {
    int help;
    const char *output;            /* -o / --output FILE, or NULL (stdout; merge requires it) */
    mmp_report_format format;      /* report --format */
    int markdown;                  /* diff --format md */
    double max_ratio_growth;       /* diff --max-ratio-growth (>= 1) */
    int allow_missing, allow_skip; /* diff --allow-missing, --allow-skip */
    const char **inputs;           /* the run documents named, in order (mmp_doc_args_free) */
    size_t n_inputs;               /* report: 1, diff: 2, merge: >= 1 */
} mmp_doc_args;
/* Bad usage is MMP_STATUS_INVALID with the message the subcommand prints before its usage line
 * ("unknown format (text, md, junit, html, csv): pdf"). */
mmp_status mmp_doc_args_parse(mmp_doc_args *a, const char *cmd, int argc, char **argv);
void mmp_doc_args_free(mmp_doc_args *a);

/* Non-empty decimal integer in [lo, hi], nothing else (no sign unless lo < 0, no spaces);
 * MMP_STATUS_INVALID (message set, *out untouched) otherwise. */
mmp_status mmp_parse_int64(int64_t *out, const char *s, int64_t lo, int64_t hi);
/* Append s to buf[len..] (size bytes in all), in shell single quotes unless it is plain
 * ([A-Za-z0-9_./=,:+@%-]) and always is 0; returns the new length, which may pass size (the
 * text is then cut). */
size_t mmp_args_quote(char *buf, size_t size, size_t len, const char *s, int always);
/* Non-empty decimal integer in 0..2^64-1, digits only; MMP_STATUS_INVALID otherwise. */
mmp_status mmp_parse_uint64(uint64_t *out, const char *s);
/* The GPUs of the accumulator-model table ("V100, A100, ..."), and whether name is one of them
 * (case-insensitive). */
const char *mmp_args_gpu_names(void);
int mmp_args_is_gpu(const char *name);
/* A finite number (strtod syntax, nothing after it); MMP_STATUS_INVALID otherwise. */
mmp_status mmp_parse_finite(double *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
